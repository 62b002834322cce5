//! The bodies of the fuzz targets: one `pub fn <target>(data: &[u8])` per
//! `[[bin]]` in `fuzz/Cargo.toml`.
//!
//! Each target file is a one-line shim into this module, and the corpus
//! replay test `tests/fuzz_corpus.rs` includes this same file with `#[path]`,
//! so every checked-in input runs through exactly this code on the stable
//! toolchain in `cargo test`. Only library entry points are called; what is
//! here is glue (splitting an input into datagrams or words, driving a real
//! handshake against the lab BMC so that later stages are reachable) and the
//! properties that must hold (round trips, "a forged datagram is never
//! accepted", "the lab's answer always unwraps"). A failed property panics,
//! which the fuzzer reports as a crash.
//!
//! Input conventions (see `fuzz/README.md`): several datagrams or words in
//! one input are separated by [`SEP`]; a leading mode byte selects a stage.
#![allow(dead_code)]

use fencekit::agent::defs::{self, Agent};
use fencekit::agent::key::Key;
use fencekit::agent::values::{self, Values};
use fencekit::agent::{getopt, run as agent_run, stdin};
use fencekit::engine::error::Stage;
use fencekit::engine::power::{Action, PowerCommand, PowerState};
use fencekit::fleet::{hostrange, inventory::Inventory, plan};
use fencekit::ipmi::agent as ipmilan;
use fencekit::ipmi::codec::{
    self, Frame, OpenSessionRequest, OpenSessionResponse, Rakp1, Rakp2, Rakp3, Rakp4, Rmcp, Session,
};
use fencekit::ipmi::config::parse_target as ipmi_parse_target;
use fencekit::ipmi::config::{AuthType, Privilege};
use fencekit::ipmi::crypto::{SessionKeys, Suite};
use fencekit::ipmi::session::{
    self, Active, ExpectChallenge, ExpectOpenSessionResponse, Unwrapped,
};
use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::ipmi::{IpmiServer, Offer};
use fencekit::redfish::agent as agent_redfish;
use fencekit::redfish::{self, model};
use fencekit::secret::Secret;
use fencekit::ssh::agent as virsh;
use fencekit::time::parse_duration;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Separates the datagrams (or stdin texts, or argv words) of one input.
pub const SEP: &[u8] = b"|FZ|";
/// At most this many chunks are taken from one input (the rest is one chunk).
const MAX_CHUNKS: usize = 64;

/// Splits `data` at [`SEP`].
pub fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while out.len() + 1 < MAX_CHUNKS {
        match rest.windows(SEP.len()).position(|w| w == SEP) {
            Some(i) => {
                out.push(&rest[..i]);
                rest = &rest[i + SEP.len()..];
            }
            None => break,
        }
    }
    out.push(rest);
    out
}

/// The inverse of [`split`], for writing seeds.
pub fn join(chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(SEP);
        }
        out.extend_from_slice(c);
    }
    out
}

/// `genuine` with the edits in `spec` applied: pairs (position mod length,
/// XOR mask); an odd trailing byte truncates to that length. Returns the
/// edited bytes and whether anything past the 4-byte RMCP header (which no
/// integrity code covers) changed.
pub fn edited(genuine: &[u8], spec: &[u8]) -> (Vec<u8>, bool) {
    let mut out = genuine.to_vec();
    if !out.is_empty() {
        for pair in spec.chunks_exact(2) {
            let at = pair[0] as usize % out.len();
            out[at] ^= pair[1];
        }
    }
    if spec.len() % 2 == 1 {
        out.truncate(spec[spec.len() - 1] as usize);
    }
    let changed = out.len() != genuine.len() || out.get(4..) != genuine.get(4..);
    (out, changed)
}

fn from() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 9))
}

/// The lab BMC every IPMI target talks to: user `admin`, password `lab`,
/// suites 3 and 17, a fixed RNG seed (so its session IDs and randoms are
/// the same in every run and the fuzzer can learn them).
pub fn lab_bmc(bmc: Bmc) -> IpmiServer {
    let offer = Offer {
        username: "admin".into(),
        password: b"lab".to_vec(),
        suites: vec![3, 17],
        guid: [7; 16],
    };
    IpmiServer::new(bmc, offer, 42)
}

fn rmcpp_handshake(suite: Suite) -> ExpectOpenSessionResponse {
    ExpectOpenSessionResponse::new(
        suite,
        Privilege::Administrator,
        "admin",
        Secret::from_str_value("lab"),
        None,
    )
}

fn v15_handshake(auth: AuthType) -> ExpectChallenge {
    ExpectChallenge::new(
        auth,
        Privilege::Administrator,
        "admin",
        Secret::from_str_value("lab"),
    )
}

/// A full RMCP+ handshake of our client against the lab.
pub fn rmcpp_session(server: &mut IpmiServer, suite: Suite) -> Active {
    let mut hs = rmcpp_handshake(suite);
    let r = server
        .handle(&hs.request(), from())
        .expect("lab answers Open Session");
    let opened = hs
        .on_response(&r)
        .expect("Open Session accepted")
        .expect("Open Session Response recognised");
    let mut hs = hs.into_rakp(opened);
    let r = server
        .handle(&hs.request(), from())
        .expect("lab answers RAKP 1");
    let verified = hs
        .on_response(&r)
        .expect("RAKP 2 verifies")
        .expect("RAKP 2 recognised");
    let mut hs = hs.into_rakp3(verified);
    let r = server
        .handle(&hs.request(), from())
        .expect("lab answers RAKP 3");
    let keys = hs
        .on_response(&r)
        .expect("RAKP 4 verifies")
        .expect("RAKP 4 recognised");
    hs.into_active(keys)
}

/// A full IPMI 1.5 handshake of our client against the lab.
pub fn v15_session(server: &mut IpmiServer, auth: AuthType) -> Active {
    let mut hs = v15_handshake(auth);
    let r = server
        .handle(&hs.request(1), from())
        .expect("lab answers Get Session Challenge");
    let challenge = hs
        .on_response(&r)
        .expect("challenge accepted")
        .expect("challenge recognised");
    let mut hs = hs.into_activation(challenge);
    let r = server
        .handle(&hs.request(2), from())
        .expect("lab answers Activate Session");
    let activated = hs
        .on_response(&r)
        .expect("Activate Session accepted")
        .expect("Activate Session recognised");
    hs.into_active(activated)
}

fn auth_of(n: u8) -> AuthType {
    match n % 3 {
        0 => AuthType::Md5,
        1 => AuthType::Password,
        _ => AuthType::None,
    }
}

// ---------------------------------------------------------------- ipmi_codec

/// `ipmi_codec`: every decoder of `ipmi::codec` (and the session-layer
/// helpers) on the input as a datagram, as a session body and as a payload,
/// with encode/decode round trips where the structure allows.
pub fn ipmi_codec(data: &[u8]) {
    if let Ok(Rmcp::Ipmi(body)) = codec::decode_rmcp(data) {
        for icv in [0, 12, 16] {
            if let Ok(s) = codec::decode_session(body, icv) {
                session_roundtrip(&s, icv);
                match s {
                    Session::V15(p) => frame(p.payload),
                    Session::V20(p) => {
                        frame(p.payload);
                        payloads(p.payload);
                    }
                }
            }
            let _ = session::decode_any(data, icv);
        }
        payloads(body);
    }
    if let Some(f) = session::sessionless_response(data, 0x06, 0x38, 0) {
        assert!(f.answers(0x06, 0x38, 0));
    }
    frame(data);
    payloads(data);
    for r in codec::parse_cipher_suite_records(data) {
        assert!(r.auth <= 0x3f && r.integrity <= 0x3f && r.conf <= 0x3f);
    }
    if let Ok(c) = codec::ChassisStatus::decode(data) {
        assert_eq!(c.is_on(), data[0] & 1 == 1);
    }
    system_guid(data);
    if let Ok(p) = codec::DcmiPowerReading::decode(data) {
        assert_eq!(codec::DcmiPowerReading::decode(&p.encode()), Ok(p));
        assert_eq!(p.active(), data[17] & 0x40 != 0);
    }
    for suite in [Suite::S3, Suite::S17] {
        let keys = SessionKeys::derive(suite, b"fuzz");
        if let Ok(plain) = keys.decrypt(data) {
            assert!(plain.len() < data.len());
        }
        let sealed = keys.encrypt(data, [0x5a; 16]);
        assert_eq!(keys.decrypt(&sealed).as_deref(), Ok(data));
        assert!(keys.verify_integrity(data, &keys.integrity(data)));
    }
}

/// Get System GUID data: every reading is a canonical UUID that encodes
/// back to the same 16 bytes; readings are distinct, the guess first.
fn system_guid(data: &[u8]) {
    let Ok(g) = codec::SystemGuid::decode(data) else {
        return;
    };
    for enc in codec::GuidEncoding::ALL {
        let text = g.text(enc);
        assert_eq!(
            fencekit::engine::identity::normalise_uuid(&text).as_deref(),
            Some(text.as_str())
        );
        let hex: Vec<u8> = text.bytes().filter(|b| *b != b'-').collect();
        let mut net = [0u8; 16];
        for (i, pair) in hex.chunks(2).enumerate() {
            net[i] = u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap();
        }
        assert_eq!(enc.encode(&net), g.raw, "{enc:?}");
    }
    for now in [0i64, 1_700_000_000, i64::MAX] {
        let r = g.readings(now);
        assert!(!r.is_empty() && r.len() <= 3);
        if let Some(first) = g.guess(now) {
            assert_eq!(r[0].0, first);
        }
        for (i, a) in r.iter().enumerate() {
            assert!(r[i + 1..].iter().all(|b| b.1 != a.1), "repeated reading");
        }
    }
}

/// Re-encodes a decoded session packet and checks that it decodes the same.
fn session_roundtrip(s: &Session<'_>, icv: usize) {
    match s {
        Session::V15(p) => {
            let d = codec::encode_v15(
                p.auth_type,
                p.seq,
                p.session_id,
                p.auth_code.as_ref(),
                p.payload,
            );
            let Ok(Rmcp::Ipmi(b)) = codec::decode_rmcp(&d) else {
                panic!("re-encoded 1.5 packet is not RMCP/IPMI")
            };
            match codec::decode_session(b, 0) {
                Ok(Session::V15(q)) => assert_eq!(&q, p),
                other => panic!("re-encoded 1.5 packet decodes as {other:?}"),
            }
        }
        Session::V20(p) => {
            let n = if p.authenticated { icv } else { 0 };
            let d = codec::encode_v20(
                p.payload_type,
                p.encrypted,
                p.session_id,
                p.seq,
                p.payload,
                n,
            );
            let Ok(Rmcp::Ipmi(b)) = codec::decode_rmcp(&d) else {
                panic!("re-encoded 2.0 packet is not RMCP/IPMI")
            };
            match codec::decode_session(b, n) {
                Ok(Session::V20(q)) => {
                    assert_eq!(
                        (q.encrypted, q.authenticated, q.payload_type),
                        (p.encrypted, p.authenticated, p.payload_type)
                    );
                    assert_eq!(
                        (q.session_id, q.seq, q.payload),
                        (p.session_id, p.seq, p.payload)
                    );
                    assert_eq!(q.auth_code.len(), p.auth_code.len());
                    if q.authenticated {
                        assert_eq!(q.integrity_data.len() % 4, 0, "integrity pad");
                    }
                }
                other => panic!("re-encoded 2.0 packet decodes as {other:?}"),
            }
        }
    }
}

/// An IPMI message: decoding is exact (encode gives back the bytes).
fn frame(b: &[u8]) {
    let Ok(f) = Frame::decode(b) else { return };
    assert_eq!(f.encode(), b, "Frame round trip");
    let _ = f.completion_code();
    let r = f.response(0, &f.data);
    assert_eq!(Frame::decode(&r.encode()).as_ref(), Ok(&r));
    assert!(r.answers(f.netfn, f.cmd, f.seq));
}

/// Every RMCP+ set-up payload decoder, with decode ∘ encode ∘ decode = decode.
fn payloads(p: &[u8]) {
    macro_rules! roundtrip {
        ($($t:ident),*) => {$(
            if let Ok(x) = $t::decode(p) {
                assert_eq!($t::decode(&x.encode()).as_ref(), Ok(&x), stringify!($t));
            }
        )*};
    }
    roundtrip!(
        OpenSessionRequest,
        OpenSessionResponse,
        Rakp1,
        Rakp2,
        Rakp3,
        Rakp4
    );
}

// -------------------------------------------------------------- ipmi_session

/// `ipmi_session`: the client's state machines on hostile datagrams.
///
/// Mode byte: bit 0 picks suite 3 or 17; `(mode >> 1) % 7` the stage:
/// 0 Open Session Response, 1 RAKP 2, 2 RAKP 4, 3 an active RMCP+ session,
/// 4 Get Session Challenge response, 5 Activate Session response, 6 an
/// active IPMI 1.5 session (auth type `(mode >> 4) % 3`: MD5, password,
/// none). Earlier stages are completed for real against the lab BMC, so the
/// stage under test sees genuine state.
///
/// Chunks for stages 0-2, 4, 5: first byte % 3 = 0 a raw datagram, 1 the
/// genuine answer with edits ([`edited`]), 2 the genuine answer itself.
/// Chunks for the active stages: first byte % 4 = 0 a raw datagram, 1 a
/// request (`netfn`, `cmd`, data) sent to the lab, whose answer becomes
/// "pending", 2 the pending answer with edits, 3 the pending answer itself.
pub fn ipmi_session(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let suite = if mode & 1 == 0 { Suite::S3 } else { Suite::S17 };
    let chunks = split(rest);
    let mut server = lab_bmc(Bmc::new(true, Faults::default()));
    let pick = |chunk: &[u8], genuine: &[u8]| -> Option<Vec<u8>> {
        let (&kind, body) = chunk.split_first()?;
        Some(match kind % 3 {
            0 => body.to_vec(),
            1 => edited(genuine, body).0,
            _ => genuine.to_vec(),
        })
    };
    match (mode >> 1) % 7 {
        stage @ 0..=2 => {
            // Each state is reached for real; the datagrams under test are
            // shown to the state of the stage (its `on_response` cannot
            // move it on: only a verified answer handed to `into_*` does).
            let mut hs = rmcpp_handshake(suite);
            let genuine = server
                .handle(&hs.request(), from())
                .expect("lab answers Open Session");
            if stage == 0 {
                for c in &chunks {
                    if let Some(d) = pick(c, &genuine) {
                        drop(hs.on_response(&d));
                    }
                }
                return;
            }
            let opened = hs.on_response(&genuine).unwrap().unwrap();
            let mut hs = hs.into_rakp(opened);
            let genuine = server.handle(&hs.request(), from()).expect("RAKP 2");
            if stage == 1 {
                for c in &chunks {
                    if let Some(d) = pick(c, &genuine) {
                        drop(hs.on_response(&d));
                    }
                }
                return;
            }
            let verified = hs.on_response(&genuine).unwrap().unwrap();
            let mut hs = hs.into_rakp3(verified);
            let genuine = server.handle(&hs.request(), from()).expect("RAKP 4");
            for c in &chunks {
                if let Some(d) = pick(c, &genuine) {
                    drop(hs.on_response(&d));
                }
            }
        }
        3 => {
            let active = rmcpp_session(&mut server, suite);
            active_session(&mut server, active, true, &chunks);
        }
        stage @ 4..=5 => {
            let mut hs = v15_handshake(auth_of(mode >> 4));
            let genuine = server.handle(&hs.request(1), from()).expect("challenge");
            if stage == 4 {
                for c in &chunks {
                    if let Some(d) = pick(c, &genuine) {
                        drop(hs.on_response(&d));
                    }
                }
                return;
            }
            let challenge = hs.on_response(&genuine).unwrap().unwrap();
            let mut hs = hs.into_activation(challenge);
            let genuine = server.handle(&hs.request(2), from()).expect("activate");
            for c in &chunks {
                if let Some(d) = pick(c, &genuine) {
                    drop(hs.on_response(&d));
                }
            }
        }
        _ => {
            let active = v15_session(&mut server, auth_of(mode >> 4));
            active_session(&mut server, active, false, &chunks);
        }
    }
}

/// The lab's answer to the last request, not yet checked.
struct Pending {
    answer: Vec<u8>,
    request: Frame,
    /// Accepted once already.
    used: bool,
}

/// Drives an active session (see [`ipmi_session`] for the chunk kinds).
fn active_session(server: &mut IpmiServer, mut active: Active, rmcpp: bool, chunks: &[&[u8]]) {
    let _ = (active.managed_sid(), active.describe());
    let mut rq_seq = 0u8;
    let mut pending: Option<Pending> = None;
    // IPMI 1.5 accepts unauthenticated (auth type none) datagrams, and its
    // replay window records a sequence number before the message is
    // decoded: a raw or edited datagram, even one ignored, may have moved
    // the window past the lab's genuine answers. RMCP+ stays strict.
    let mut strict = true;
    for c in chunks {
        let Some((&kind, body)) = c.split_first() else {
            continue;
        };
        match kind % 4 {
            0 => {
                let r = active.unwrap(body);
                // Forging needs the session keys, which are fresh per run.
                assert!(
                    !rmcpp || matches!(r, Unwrapped::Ignored(_)),
                    "forged datagram accepted"
                );
                strict &= rmcpp;
            }
            1 => {
                rq_seq = (rq_seq + 1) & 0x3f;
                let request = request(body, rq_seq);
                if let Some(answer) = server.handle(&active.wrap(&request), from()) {
                    pending = Some(Pending {
                        answer,
                        request,
                        used: false,
                    });
                }
            }
            2 => {
                let Some(p) = pending.as_mut() else {
                    continue;
                };
                let (d, changed) = edited(&p.answer, body);
                let r = active.unwrap(&d);
                if rmcpp && changed {
                    assert!(
                        matches!(r, Unwrapped::Ignored(_)),
                        "edited datagram accepted"
                    );
                }
                p.used |= matches!(r, Unwrapped::Frame(_));
                strict &= rmcpp || !changed;
            }
            _ => {
                if let Some(p) = pending.as_mut() {
                    check_answer(&mut active, p, strict);
                }
            }
        }
    }
    if let Some(p) = pending.as_mut() {
        check_answer(&mut active, p, strict);
    }
}

/// A request frame from a chunk: `netfn`, `cmd`, data.
fn request(body: &[u8], rq_seq: u8) -> Frame {
    let netfn = body.first().copied().unwrap_or(0) & 0x3f;
    let cmd = body.get(1).copied().unwrap_or(0);
    Frame::request(netfn, cmd, rq_seq, body.get(2..).unwrap_or(&[]))
}

/// The lab's genuine answer unwraps exactly once and answers the request
/// (`strict`: nothing forged was accepted before in this session).
fn check_answer(active: &mut Active, p: &mut Pending, strict: bool) {
    match active.unwrap(&p.answer) {
        Unwrapped::Frame(f) => {
            assert!(!p.used || !strict, "a genuine answer was accepted twice");
            assert!(
                f.answers(p.request.netfn, p.request.cmd, p.request.seq),
                "lab answer {f:?} does not answer {:?}",
                p.request
            );
            p.used = true;
        }
        Unwrapped::Ignored(why) => {
            assert!(p.used || !strict, "the lab's own answer was refused: {why}");
        }
    }
}

// ----------------------------------------------------------- lab_ipmi_server

/// `lab_ipmi_server`: the lab BMC's parser of client packets.
///
/// Mode byte: `mode % 8` = 1 suite 3, 2 suite 17, 3 IPMI 1.5 MD5, 4 1.5
/// password, 5 1.5 none: our client first opens a session that way
/// (otherwise none); bits 3-6 set faults (stuck, strict state, no cipher
/// query) and the initial power. Chunks: first byte % 4 = 0 a raw datagram,
/// 1 a request (`netfn`, `cmd`, data) wrapped by the session (or sent
/// sessionless), whose answer must unwrap and answer it, 2 the last datagram
/// sent with edits ([`edited`]), 3 the last datagram sent again (a replay).
pub fn lab_ipmi_server(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let faults = Faults {
        stuck: mode & 0x08 != 0,
        strict_state: mode & 0x10 != 0,
        no_cipher_query: mode & 0x20 != 0,
        ..Faults::default()
    };
    let mut server = lab_bmc(Bmc::new(mode & 0x40 != 0, faults));
    let mut client = match mode % 8 {
        1 => Some(rmcpp_session(&mut server, Suite::S3)),
        2 => Some(rmcpp_session(&mut server, Suite::S17)),
        3 => Some(v15_session(&mut server, AuthType::Md5)),
        4 => Some(v15_session(&mut server, AuthType::Password)),
        5 => Some(v15_session(&mut server, AuthType::None)),
        _ => None,
    };
    let mut last: Vec<u8> = Vec::new();
    let mut rq_seq = 0u8;
    for c in split(rest) {
        let Some((&kind, body)) = c.split_first() else {
            continue;
        };
        let datagram = match kind % 4 {
            0 => body.to_vec(),
            1 => {
                rq_seq = (rq_seq + 1) & 0x3f;
                let rq = request(body, rq_seq);
                let d = match client.as_mut() {
                    Some(a) => a.wrap(&rq),
                    None => session::sessionless_request(rq.netfn, rq.cmd, rq_seq, &rq.data),
                };
                last = d.clone();
                if let Some(answer) = server.handle(&d, from()) {
                    let f = match client.as_mut() {
                        Some(a) => match a.unwrap(&answer) {
                            Unwrapped::Frame(f) => f,
                            Unwrapped::Ignored(why) => {
                                panic!("the lab's answer to {rq:?} was refused: {why}")
                            }
                        },
                        None => session::sessionless_response(&answer, rq.netfn, rq.cmd, rq_seq)
                            .unwrap_or_else(|| panic!("no sessionless answer to {rq:?}")),
                    };
                    assert!(f.answers(rq.netfn, rq.cmd, rq_seq));
                }
                continue;
            }
            2 => edited(&last, body).0,
            _ => last.clone(),
        };
        if let Some(answer) = server.handle(&datagram, from()) {
            if let Some(a) = client.as_mut() {
                let _ = a.unwrap(&answer);
            }
        }
        last = datagram;
    }
}

// -------------------------------------------------------------- redfish_json

/// `redfish_json`: the Redfish model's pure functions on one answer.
///
/// The input is an HTTP status and a body: `NNN ` (three digits and a space
/// or newline) first gives the status, else it is 200. The body is
/// classified as an error answer; if it is JSON, the document and every
/// object inside it are read as a service root, a collection, a system, an
/// ActionInfo, a Task and an error.
pub fn redfish_json(data: &[u8]) {
    let (status, body) = match data {
        [a, b, c, sep, rest @ ..]
            if [a, b, c].iter().all(|d| d.is_ascii_digit()) && matches!(sep, b' ' | b'\n') =>
        {
            let n = u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
            (n, rest)
        }
        _ => (200, data),
    };
    for (stage, what) in [
        (Stage::Authenticate, "GET /redfish/v1"),
        (
            Stage::Command,
            "POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset",
        ),
    ] {
        let e = model::classify(status, body, stage, what);
        assert!(e.message.contains(what));
    }
    let _ = model::task_progress(status, None);
    reset_choices(None);
    let Ok(doc) = serde_json::from_slice::<Value>(body) else {
        printable(&String::from_utf8_lossy(body));
        return;
    };
    // Every object in the document, breadth first, at most 64.
    let mut queue = std::collections::VecDeque::from([&doc]);
    let mut seen = 0;
    while let Some(v) = queue.pop_front() {
        seen += 1;
        if seen > 64 {
            break;
        }
        resource(v, status);
        match v {
            Value::Object(m) => queue.extend(m.values()),
            Value::Array(a) => queue.extend(a.iter()),
            _ => {}
        }
    }
}

fn printable(s: &str) {
    for max in [0, 1, 40, 200] {
        let p = model::printable(s, max);
        assert!(!p.chars().any(char::is_control), "control character kept");
        assert!(p.chars().count() <= max + 1);
    }
}

/// A link from the BMC, made a path and appended to the base URL (as
/// `redfish::http` does), never names another host.
fn same_host(link: &str) {
    let path = redfish::http::path_of(link);
    assert!(path.starts_with('/'), "{link:?} gave {path:?}");
    if let Ok(u) = reqwest::Url::parse(&format!("https://bmc.example:443{path}")) {
        assert_eq!(u.host_str(), Some("bmc.example"), "{link:?}");
        assert_eq!(u.port_or_known_default(), Some(443), "{link:?}");
    }
}

/// One JSON value read as each kind of Redfish resource.
fn resource(v: &Value, status: u16) {
    if let Some(id) = model::odata_id(v) {
        same_host(id);
        let _ = model::last_segment(id);
    }
    if let Some(l) = model::systems_link(v) {
        same_host(l);
    }
    let _ = model::sessions_link(v);
    let members = model::members(v);
    for m in &members {
        same_host(m);
    }
    match model::choose_member(&members, None) {
        Ok(model::Choice::Member(m)) => assert!(members.len() == 1 && members[0] == m),
        Ok(model::Choice::LookUp) => panic!("LookUp without a plug"),
        Err(_) => assert!(members.len() != 1),
    }
    let plug = v
        .get("Id")
        .and_then(Value::as_str)
        .or_else(|| members.last().map(|m| model::last_segment(m)));
    if let Some(plug) = plug {
        match model::choose_member(&members, Some(plug)) {
            Ok(model::Choice::Member(m)) => assert!(members.contains(&m)),
            Ok(model::Choice::LookUp) => {}
            Err(_) => assert!(members.is_empty()),
        }
        let _ = model::system_matches(v, plug);
        let _ = model::no_such_plug(plug, &members);
    }
    if let Ok(state) = model::power_state(v) {
        let word = v["PowerState"]
            .as_str()
            .expect("a PowerState string")
            .trim();
        let want = match state {
            PowerState::On => "on",
            PowerState::Off => "off",
        };
        assert!(word.eq_ignore_ascii_case(want), "{word} read as {state:?}");
    }
    match model::reset_action(v) {
        Ok(a) => {
            assert!(!a.target.is_empty());
            same_host(&a.target);
            match &a.offered {
                model::Offered::Listed(l) => {
                    assert!(!l.is_empty());
                    reset_choices(Some(l));
                }
                model::Offered::ActionInfo(uri) => same_host(uri),
                model::Offered::Unpublished => {}
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if let Some(l) = model::action_info_values(v) {
        reset_choices(Some(&l));
    }
    let _ = model::task_progress(status, Some(v));
    if let Some(t) = model::error_text(v) {
        assert!(!t.is_empty());
        assert!(
            !t.chars().any(char::is_control),
            "control character in {t:?}"
        );
    }
    let _ = model::message_ids(v);
}

/// Whatever is offered, a fence never uses a graceful or toggling reset type.
fn reset_choices(offered: Option<&[String]>) {
    for c in [
        PowerCommand::Off,
        PowerCommand::On,
        PowerCommand::Cycle,
        PowerCommand::Reset,
        PowerCommand::Diag,
    ] {
        if let Ok(t) = model::choose_reset(c, offered) {
            assert!(
                model::preferences(c)
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case(&t)),
                "{c:?} chose {t}"
            );
            if let Some(o) = offered {
                assert!(o.contains(&t));
            }
        }
    }
    let _ = model::describe_plan(offered);
}

// --------------------------------------------------------- agent_stdin / argv

/// The agent an input is for: a first line (stdin) or word (argv) naming a
/// known agent selects it, else `fence_ipmilan`.
fn agent_named(first: &str) -> Option<Agent> {
    let name = first.strip_prefix("#!").unwrap_or(first).trim();
    name.starts_with("fence_")
        .then(|| defs::agent(name))
        .flatten()
}

/// `agent_stdin`: the `key=value` reader, then everything done with the
/// values before a device is contacted (defaults, validation, policy,
/// delay, IPMI configuration). A first line `#!fence_NAME` (a comment to
/// the reader) selects the agent.
pub fn agent_stdin(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let first = text.lines().next().unwrap_or("");
    let agent =
        agent_named(first).unwrap_or_else(|| defs::agent("fence_ipmilan").expect("fence_ipmilan"));
    let parsed = stdin::parse(&text, &agent);
    for w in &parsed.warnings {
        assert!(w.starts_with("Parse error: "), "{w}");
    }
    for (k, _) in parsed.values.iter() {
        assert!(
            k == "verbose_level" || agent.option(k).is_some(),
            "stdin set unknown key {k}"
        );
    }
    after_parse(parsed.values, &agent);
}

/// `agent_argv`: the getopt emulation on argv words separated by NUL bytes
/// (as in `/proc/PID/cmdline`), then the same steps as [`agent_stdin`]. A
/// first word naming a known agent is argv[0].
pub fn agent_argv(data: &[u8]) {
    let words: Vec<String> = data
        .split(|b| *b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let (agent, args) = match words.first().and_then(|w| agent_named(w)) {
        Some(a) => (a, &words[1..]),
        None => (
            defs::agent("fence_ipmilan").expect("fence_ipmilan"),
            &words[..],
        ),
    };
    let opts = &agent.family.options;
    let specs = getopt::specs(agent.family.options);
    let parsed = match getopt::gnu_getopt(args, &specs) {
        Ok(p) => p,
        Err(e) => {
            assert!(e.to_string().starts_with("option "));
            return;
        }
    };
    assert!(
        parsed.opts.len() + parsed.positional.len() <= args.iter().map(|a| a.len().max(1)).sum()
    );
    let mut values = Values::new();
    for (i, v) in &parsed.opts {
        let spec = specs[*i];
        assert!(
            spec.takes_value || v.is_empty(),
            "flag --{} got {v:?}",
            spec.long
        );
        values.set_named(&opts[*i].key(), v.clone());
    }
    after_parse(values, &agent);
}

/// What the agent front does with parsed values before contacting a device
/// (the pure part of `agent::run::prepare`: no password script, no debug
/// file, no sleeping).
fn after_parse(mut values: Values, agent: &Agent) {
    if values.has(Key::PortAsIp) {
        if let Some(plug) = values.get(Key::Plug).map(str::to_string) {
            values.set(Key::Ip, plug);
        }
    }
    values.apply_defaults(agent);
    let action = values.get(Key::Action).unwrap_or_default().to_lowercase();
    let _ = agent.accepts_action(&action);
    let _ = values::validate(&mut values, agent);
    for k in agent.family.options.iter().map(|o| o.key()) {
        if let Some(key) = Key::from_name(&k) {
            let _ = values.int(key);
        }
        if let Some(o) = agent.option(&k) {
            let _ = values.flag(o);
        }
    }
    let policy = agent_run::policy(&values);
    let _ = policy;
    for a in [
        Action::Status,
        Action::On,
        Action::Off,
        Action::Reboot,
        Action::Monitor,
        Action::Diag,
    ] {
        for elapsed in [Duration::ZERO, Duration::from_millis(1500)] {
            if let Some(d) = agent_run::delay_for(&values, a, elapsed) {
                assert!(matches!(a, Action::Off | Action::Reboot));
                assert!(d > Duration::ZERO);
            }
        }
    }
    match agent.family.driver {
        "kubevirt" => {
            if let Ok(cfg) = fencekit::kubevirt::agent::config(&values, agent) {
                assert!(cfg.vm.is_empty() || cfg.validate().is_ok());
                let _ = fencekit::kubevirt::agent::describe(&cfg);
            }
        }
        "aws" => {
            if let Ok(cfg) = fencekit::aws::agent::config(&values, agent) {
                assert!(cfg.validate().is_ok());
                let _ = fencekit::aws::agent::describe(&cfg);
            }
        }
        "snmp" => {
            // A profile path would read a file: only built-in profiles here.
            let mut values = values.clone();
            values.remove(Key::PduProfile);
            if let Ok(cfg) = fencekit::snmp::agent::config(&values, agent) {
                assert!(cfg.validate_structure().is_ok());
                let _ = fencekit::snmp::agent::describe(&cfg);
            }
        }
        "ipmi" => {
            if let Ok(cfg) = ipmilan::config(&values, agent) {
                assert!(cfg.validate().is_ok());
                let _ = ipmilan::describe(&cfg);
            }
        }
        "redfish" => {
            if let Ok(cfg) = agent_redfish::config(&values, agent) {
                assert!(cfg.validate().is_ok());
                let _ = agent_redfish::describe(&cfg);
            }
        }
        "ssh" => {
            if let Ok(cfg) = virsh::config(&values, agent) {
                let _ = (virsh::describe(&cfg), virsh::ssh_config(&cfg));
            }
            if let Some(o) = values.get(Key::SshOptions) {
                let _ = virsh::ssh_options(o);
            }
            if let Some(p) = values.get(Key::Plug) {
                let _ = virsh::domain(p, values.get(Key::PlugSeparator).unwrap_or(","));
                if let Some(u) = fencekit::engine::identity::normalise_uuid(p) {
                    assert_eq!(
                        fencekit::engine::identity::normalise_uuid(&u).as_ref(),
                        Some(&u)
                    );
                }
            }
        }
        // A platform added later: its family builder is fuzzed once it has an arm here.
        _ => {}
    }
}

// ------------------------------------------------------------------- targets

/// `targets`: the small text parsers. A first byte `t` (ipmi:// target),
/// `r` (Redfish URL), `h` (host range), `d` (duration) or `i` (inventory
/// TOML) sends the rest to that parser alone; any other input goes to all.
pub fn targets(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let rest = text.get(1..).unwrap_or("");
    match data.first() {
        Some(b't') => ipmi_target(rest),
        Some(b'r') => redfish_target(rest),
        Some(b'h') => host_range(rest),
        Some(b'd') => duration_text(rest),
        Some(b'i') => inventory(rest),
        _ => {
            ipmi_target(&text);
            redfish_target(&text);
            host_range(&text);
            duration_text(&text);
            inventory(&text);
        }
    }
}

fn ipmi_target(s: &str) {
    let Ok(t) = ipmi_parse_target(s) else { return };
    assert!(!t.host.is_empty());
    assert_ne!(t.port, Some(0));
    assert!(!t
        .username
        .as_deref()
        .is_some_and(|u| u.contains(':') || u.is_empty()));
    // What is shown for a target reads back as the same host and port.
    let shown = t.to_string();
    let back =
        ipmi_parse_target(&shown).unwrap_or_else(|e| panic!("{shown:?} does not parse: {e}"));
    assert_eq!((&back.host, back.port), (&t.host, t.port), "{shown:?}");
}

fn redfish_target(s: &str) {
    let Ok(t) = redfish::config::parse_target(s) else {
        return;
    };
    assert!(redfish::config::is_redfish_url(s));
    assert_ne!(t.port, 0);
    assert!(!t.host.is_empty());
    assert!(t.redfish_uri.starts_with('/'), "{:?}", t.redfish_uri);
    if let Some(sys) = &t.systems_uri {
        assert!(sys.starts_with('/'), "{sys:?}");
    }
    let c = t.config("fuzz", Secret::from_str_value("pw"));
    let _ = c.validate();
    let _ = c.base_url();
}

fn host_range(s: &str) {
    let Ok(names) = hostrange::expand(s) else {
        return;
    };
    assert!(!names.is_empty() && names.len() <= hostrange::MAX_EXPANSION);
    assert!(names.iter().all(|n| !n.is_empty()));
    if !hostrange::is_range(s) {
        assert_eq!(names, [s]);
    }
}

fn duration_text(s: &str) {
    if let Ok(d) = parse_duration(s) {
        assert!(d <= Duration::from_secs(7 * 86_400));
    }
}

fn inventory(s: &str) {
    let Ok(inv) = Inventory::parse(s, Path::new("fuzz.toml")) else {
        return;
    };
    // A range may make 100,000 nodes: look at the first few only.
    for n in inv.nodes.iter().take(16) {
        assert!(!n.name.is_empty() && !n.methods.is_empty());
        assert!(inv.node(&n.name).is_some());
        for m in &n.methods {
            // K_g and CA files would be read from disk (a FIFO or
            // /dev/zero would hang the fuzzer): leave them out.
            let mut m = m.fields();
            m.kg_file = None;
            m.ca_cert = None;
            if let Ok(spec) = plan::method_from_fields(&n.name, &m) {
                let _ = (spec.endpoint(), spec.device_keys(), spec.username());
                let _ = (spec.driver_name(), spec.credential().describe());
            }
        }
    }
}

// ------------------------------------------------------------------ SNMP ----

/// SNMP codec: any bytes decode to a message or a typed error; what
/// decodes re-encodes to something that decodes to the same message.
pub fn snmp_codec(data: &[u8]) {
    use fencekit::snmp::{ber, message};
    if let Ok(m) = message::decode(data) {
        match &m {
            message::Message::Community(c) => {
                let again = message::decode(&c.encode()).expect("re-encoded message decodes");
                assert_eq!(again, m, "community message round trip");
            }
            message::Message::V3(v) => {
                let (bytes, range) = v.encode();
                assert!(range.end <= bytes.len());
                let again = message::decode(&bytes).expect("re-encoded v3 message decodes");
                let message::Message::V3(w) = again else {
                    panic!("v3 re-decodes as another version")
                };
                assert_eq!((w.msg_id, &w.usm, &w.data), (v.msg_id, &v.usm, &v.data));
            }
        }
    }
    let _ = message::ScopedPdu::decode(data);
    let _ = ber::decode_oid(data);
    let mut r = ber::Reader::new(data);
    while let Ok(e) = r.element() {
        assert!(e.offset + e.content.len() <= data.len());
        let _ = e.reader().element();
    }
}

thread_local! {
    static SNMP_V3: std::cell::RefCell<Option<fencekit::snmp::session::Session>> =
        const { std::cell::RefCell::new(None) };
    static LAB_PDU: std::cell::RefCell<Option<fencekit::lab::pdu::PduAgent>> =
        const { std::cell::RefCell::new(None) };
}

/// The lab PDU's engine, as the client session learns it.
fn snmp_v3_session() -> fencekit::snmp::session::Session {
    use fencekit::snmp::session::{SecLevel, Security, Session, UsmUser};
    use fencekit::snmp::usm::{AuthProtocol, PrivProtocol};
    SNMP_V3.with(|c| {
        c.borrow_mut()
            .get_or_insert_with(|| {
                Session::new(Security::Usm(UsmUser {
                    name: "fence".into(),
                    level: SecLevel::AuthPriv,
                    auth: Some((AuthProtocol::Sha256, Secret::from_str_value("fuzzpass1"))),
                    privacy: Some((PrivProtocol::Aes128, Secret::from_str_value("fuzzpass1"))),
                }))
                .expect("valid session")
            })
            .clone()
    })
}

/// SNMP client session: datagrams fed to a v2c and a v3 session (the
/// first chunk may be a discovery answer) never panic, and nothing that
/// is not signed with the session's key is taken as a v3 response.
pub fn snmp_session(data: &[u8]) {
    use fencekit::snmp::message::Version;
    use fencekit::snmp::session::{get_pdu, Reply, Security, Session};
    use std::time::Instant;
    let now = Instant::now();
    let oid = fencekit::snmp::ber::Oid(vec![1, 3, 6, 1, 2, 1, 1, 2, 0]);
    let mut c = Session::new(Security::Community {
        version: Version::V2c,
        community: Secret::from_str_value("private"),
    })
    .expect("v2c session");
    let rid = c.new_request_id();
    let out = c
        .request(&get_pdu(rid, std::slice::from_ref(&oid)), now)
        .expect("request");
    for chunk in split(data) {
        let _ = c.accept(chunk, std::slice::from_ref(&out), now);
    }
    let mut s = snmp_v3_session();
    let disc = s.discovery();
    let mut sent = vec![disc];
    for chunk in split(data) {
        match s.accept(chunk, &sent, now) {
            Ok(Some(Reply::Resend)) if !s.needs_discovery() => {
                let rid = s.new_request_id();
                if let Ok(o) = s.request(&get_pdu(rid, std::slice::from_ref(&oid)), now) {
                    sent.push(o);
                }
            }
            Ok(Some(Reply::Response(_))) => {
                // Only reachable with a message signed by the agent's key,
                // which the fuzzer cannot forge: a response before the
                // engine is known would be a forgery accepted.
                assert!(!s.needs_discovery(), "a response accepted before discovery");
            }
            _ => {}
        }
    }
}

/// The lab PDU agent: any datagrams (v1, v2c, v3) are answered or
/// dropped, never a panic; an answer always decodes.
pub fn lab_pdu_agent(data: &[u8]) {
    use fencekit::lab::pdu::{LabPduState, PduAgent, PduSpec};
    LAB_PDU.with(|c| {
        let mut c = c.borrow_mut();
        let agent = c.get_or_insert_with(|| {
            PduAgent::new(LabPduState::new(4), PduSpec::lab(4, "fuzzpass1"), 7)
        });
        for chunk in split(data) {
            if let Some(reply) = agent.handle(chunk) {
                assert!(
                    fencekit::snmp::message::decode(&reply).is_ok(),
                    "the lab PDU's answer does not decode"
                );
            }
        }
    });
}

/// `bounded_parse`: the one bounded parse every XML and JSON answer goes
/// through (`fencekit::parse`), and the platforms' readers of it: vim25
/// `RetrievePropertiesEx` and task infos with the object check, the
/// KubeVirt VM/VMI/pod readers with theirs, vSphere REST and EC2 answers.
/// None may panic or recurse without bound (100,000 nested elements once
/// overflowed the stack).
pub fn bounded_parse(data: &[u8]) {
    use fencekit::parse::{self, Limits};
    let limits = Limits::ANSWER.with_bytes(1 << 20);
    let _ = parse::xml_bytes(data, &limits);
    let _ = parse::json::<serde_json::Value>(data, &limits);
    if let Ok(text) = std::str::from_utf8(data) {
        use fencekit::vsphere::soap;
        if let Ok(page) = soap::properties_answer(text) {
            let asked = [soap::MoRef::new("VirtualMachine", "vm-1")];
            let _ = fencekit::vsphere::model::check_objects(&asked, &page.objects);
        }
        let _ = soap::task_infos(text);
    }
    if let Ok(v) = parse::json::<serde_json::Value>(data, &limits) {
        use fencekit::kubevirt::model as kv;
        if let Ok(vm) = kv::vm(&v) {
            let _ = kv::check_vm(&vm, "ns", "vm", Some("u"));
        }
        if let Ok(vmi) = kv::vmi(&v) {
            let _ = kv::check_vmi(&vmi, "ns", "vm", "u");
        }
        if let Ok((pods, _)) = kv::pods(&v) {
            let _ = kv::check_pods(&pods, "ns", "vm");
        }
    }
    let _ = fencekit::vsphere::rest::model::vm_list(data);
    let _ = fencekit::vsphere::rest::model::power(data);
    let _ = fencekit::aws::model::describe_instances(data);
    let _ = fencekit::aws::model::instance_status(data);
}
