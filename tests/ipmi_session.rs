//! The client's IPMI session state machines against the lab BMC's `handle`
//! (no sockets): IPMI 1.5 hardening (issue 17) — an unauthenticated reply
//! is never taken for the BMC's, however the BMC described itself, unless
//! the user opted in; every sequence number is replay-checked, 0 included;
//! a forged activation cannot switch authentication off — and RMCP+ set-up
//! answers naming the transmission they answer.

use fencekit::engine::error::ErrorKind;
use fencekit::ipmi::codec::{self, cc, chassis_control, cmd, netfn, Frame, Rmcp, Session};
use fencekit::ipmi::config::{AuthType, Privilege};
use fencekit::ipmi::crypto::{self, Suite};
use fencekit::ipmi::session::{
    Active, ExpectActivation, ExpectChallenge, ExpectOpenSessionResponse, Sent, Unwrapped,
};
use fencekit::ipmi::workaround::{self, Workarounds};
use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::ipmi::{IpmiServer, Offer};
use fencekit::secret::Secret;
use std::net::SocketAddr;

const PW: &str = "lab";

fn from() -> SocketAddr {
    "127.0.0.1:9".parse().unwrap()
}

fn server(bmc: &Bmc) -> IpmiServer {
    let offer = Offer {
        username: "admin".into(),
        password: PW.as_bytes().to_vec(),
        suites: vec![3, 17],
        guid: [7; 16],
    };
    IpmiServer::new(bmc.clone(), offer, 42)
}

fn challenge(auth: AuthType, unauthenticated_ok: bool) -> ExpectChallenge {
    let mut hs = ExpectChallenge::new(
        auth,
        Privilege::Administrator,
        "admin",
        Secret::from_str_value(PW),
    );
    hs.accept_unauthenticated_replies(unauthenticated_ok);
    hs
}

/// Challenge answered; Activate Session sent; returns its genuine answer.
fn to_activation(s: &mut IpmiServer, hs: ExpectChallenge) -> (ExpectActivation, Vec<u8>) {
    let mut hs = hs;
    let r = s.handle(&hs.request(1), from()).expect("challenge answer");
    let c = hs.on_response(&r).unwrap().expect("challenge");
    let mut hs = hs.into_activation(c);
    let r = s.handle(&hs.request(2), from()).expect("activate answer");
    (hs, r)
}

fn v15_session(s: &mut IpmiServer, auth: AuthType, unauthenticated_ok: bool) -> Active {
    let (hs, r) = to_activation(s, challenge(auth, unauthenticated_ok));
    let a = hs.on_response(&r).unwrap().expect("activation");
    hs.into_active(a)
}

/// The session ID and the next sequence number of the lab's genuine answer
/// to `request`, and its message frame.
fn genuine(s: &mut IpmiServer, active: &mut Active, request: &Frame) -> (u32, u32, Frame) {
    let d = s
        .handle(&active.wrap(request), from())
        .expect("lab answers");
    let Ok(Rmcp::Ipmi(body)) = codec::decode_rmcp(&d) else {
        panic!("not IPMI")
    };
    let Ok(Session::V15(p)) = codec::decode_session(body, 0) else {
        panic!("not 1.5")
    };
    (p.session_id, p.seq, Frame::decode(p.payload).unwrap())
}

/// A 1.5 datagram in the session with auth type `auth` (0: none), a valid
/// authentication code for it computed with the password, and `seq`.
fn forge(auth: u8, sid: u32, seq: u32, f: &Frame) -> Vec<u8> {
    let msg = f.encode();
    let code = crypto::v15_code(auth, PW.as_bytes(), sid, &msg, seq);
    codec::encode_v15(auth, seq, sid, code.as_ref(), &msg)
}

#[test]
fn a_forged_unauthenticated_off_reply_is_rejected() {
    let bmc = Bmc::new(true, Faults::default());
    let mut s = server(&bmc);
    for auth in [AuthType::Md5, AuthType::Password] {
        let mut active = v15_session(&mut s, auth, false);
        let off = Frame::request(
            netfn::CHASSIS,
            cmd::CHASSIS_CONTROL,
            5,
            &[chassis_control::POWER_DOWN],
        );
        // an on-path attacker sees the request and answers "done" first,
        // without an authentication code (auth type none)
        let sid = active.managed_sid();
        let forged = forge(0, sid, 0x1000_0000, &off.response(cc::OK, &[]));
        assert_eq!(
            active.unwrap(&forged),
            Unwrapped::Ignored("unauthenticated reply in an authenticated session"),
            "{auth:?}"
        );
        // and a status read claiming "off" the same way
        let status = Frame::request(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 6, &[]);
        let forged = forge(0, sid, 0x1000_0001, &status.response(cc::OK, &[0, 0, 0, 0]));
        assert!(matches!(active.unwrap(&forged), Unwrapped::Ignored(_)));
    }
}

#[test]
fn unauthenticated_replies_only_with_the_opt_in() {
    let bmc = Bmc::new(true, Faults::default());
    let mut s = server(&bmc);
    let mut active = v15_session(&mut s, AuthType::Md5, true);
    let status = Frame::request(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 6, &[]);
    let (sid, seq, _) = genuine(&mut s, &mut active, &status);
    let forged = forge(0, sid, seq + 1, &status.response(cc::OK, &[0, 0, 0, 0]));
    assert!(
        matches!(active.unwrap(&forged), Unwrapped::Frame(_)),
        "with the opt-in, a reply without a code is accepted (the risk the option names)"
    );
    // even then, never twice
    assert!(matches!(active.unwrap(&forged), Unwrapped::Ignored(_)));
}

#[test]
fn every_sequence_number_is_replay_checked_zero_included() {
    let bmc = Bmc::new(true, Faults::default());
    let mut s = server(&bmc);
    let mut active = v15_session(&mut s, AuthType::Md5, false);
    let status = Frame::request(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 7, &[]);
    let (sid, seq, answer) = genuine(&mut s, &mut active, &status);
    // correctly authenticated, but sequence number 0: refused (it used to
    // be exempt, so a recorded reply could be replayed as seq 0 forever)
    let zero = forge(AuthType::Md5 as u8, sid, 0, &answer);
    assert_eq!(
        active.unwrap(&zero),
        Unwrapped::Ignored("replayed or stale sequence number")
    );
    // the genuine one is accepted once
    let real = forge(AuthType::Md5 as u8, sid, seq, &answer);
    assert!(matches!(active.unwrap(&real), Unwrapped::Frame(_)));
    assert_eq!(
        active.unwrap(&real),
        Unwrapped::Ignored("replayed or stale sequence number")
    );
    // a wrong code never
    let mut bad = forge(AuthType::Md5 as u8, sid, seq + 1, &answer);
    bad[4 + 9] ^= 1;
    assert_eq!(
        active.unwrap(&bad),
        Unwrapped::Ignored("bad authentication code")
    );
}

#[test]
fn a_forged_activation_cannot_turn_authentication_off() {
    let bmc = Bmc::new(true, Faults::default());
    let mut s = server(&bmc);
    let (hs, genuine) = to_activation(&mut s, challenge(AuthType::Md5, false));
    let Ok(Rmcp::Ipmi(body)) = codec::decode_rmcp(&genuine) else {
        panic!()
    };
    let Ok(Session::V15(p)) = codec::decode_session(body, 0) else {
        panic!()
    };
    let mut f = Frame::decode(p.payload).unwrap();
    f.data[1] = 0; // "activated with authentication type none"
    let forged = codec::encode_v15(
        p.auth_type,
        p.seq,
        p.session_id,
        p.auth_code.as_ref(),
        &f.encode(),
    );
    let e = hs.on_response(&forged).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Protocol);
    assert!(e.message.contains("authentication type"), "{e}");
    // the genuine answer still activates
    assert!(hs.on_response(&genuine).unwrap().is_some());
}

#[test]
fn rmcpp_answers_name_the_transmission_they_answer() {
    let bmc = Bmc::new(true, Faults::default());
    let mut s = server(&bmc);
    let mut hs = ExpectOpenSessionResponse::new(
        Suite::S17,
        Privilege::Administrator,
        "admin",
        Secret::from_str_value(PW),
        None,
    );
    let first = hs.request();
    let second = hs.request();
    // the BMC answers the second transmission (the first was lost)
    let r = s.handle(&second, from()).unwrap();
    assert_eq!(hs.on_response(&r).unwrap().unwrap().transmission, 2);
    let r1 = s.handle(&first, from()).unwrap();
    let opened = hs.on_response(&r1).unwrap().unwrap();
    assert_eq!(opened.transmission, 1);
    // RAKP: a repeated RAKP 1 is answered under the repeat's own tag
    let mut hs = hs.into_rakp(opened);
    let a = hs.request();
    let b = hs.request();
    let ra = s.handle(&a, from()).unwrap();
    let rb = s.handle(&b, from()).unwrap();
    assert_eq!(hs.on_response(&rb).unwrap().unwrap().transmission, 2);
    let v = hs.on_response(&ra).unwrap().unwrap();
    assert_eq!(v.transmission, 1);
    let mut hs = hs.into_rakp3(v);
    let r = s.handle(&hs.request(), from()).unwrap();
    let keys = hs.on_response(&r).unwrap().unwrap();
    let mut active = hs.into_active(keys);
    let rq = Frame::request(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 9, &[]);
    let d = s.handle(&active.wrap(&rq), from()).unwrap();
    assert!(
        matches!(active.unwrap(&d), Unwrapped::Frame(f) if f.answers(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 9))
    );
    // a datagram of another state is never an answer to this one
    assert!(matches!(active.unwrap(&r), Unwrapped::Ignored(_)));
}

#[test]
fn sent_names_transmissions_and_forgets_old_ones() {
    let mut sent = Sent::default();
    for id in 0..20u8 {
        sent.push(id);
    }
    assert_eq!(sent.count(), 20);
    assert_eq!(sent.which(19), Some(20));
    assert_eq!(sent.which(4), Some(5));
    assert_eq!(sent.which(3), None, "only the last 16 are remembered");
    assert_eq!(sent.which(200), None);
}

// ------------------------------------------------------------------------
// Issue 24: the tolerances keep every check. The automatic ones are always
// on; here every named workaround that keeps the checks is on too, and
// forged, unauthenticated, replayed and truncated answers still fail.

/// Every workaround whose table row says it keeps every check.
fn all_harmless() -> Workarounds {
    let mut w = Workarounds::NONE;
    for e in &workaround::TABLE {
        if !e.workaround.weakens_security() {
            w.insert(e.workaround);
        }
    }
    w
}

/// The payload of an unauthenticated RMCP+ set-up datagram, changed by
/// `edit`, in a new datagram (its length field follows).
fn edited(d: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let Ok(Rmcp::Ipmi(body)) = codec::decode_rmcp(d) else {
        panic!("not IPMI")
    };
    let Ok(Session::V20(p)) = codec::decode_session(body, 0) else {
        panic!("not RMCP+")
    };
    let mut payload = p.payload.to_vec();
    edit(&mut payload);
    codec::encode_v20(p.payload_type, false, 0, 0, &payload, 0)
}

#[test]
fn ipmi15_forgeries_fail_closed_with_every_tolerance_on() {
    // A BMC declaring per-message authentication off (activation: "none for
    // the rest"), with fencekit tolerating all that keeps a check.
    let bmc = Bmc::new(true, Faults::default());
    bmc.lock().faults.quirks.per_msg_off = true;
    let mut s = server(&bmc);
    for auth in [AuthType::Md5, AuthType::Password] {
        let mut hs = challenge(auth, false);
        hs.workarounds(all_harmless());
        hs.declared_per_message_auth_off(true);
        let (hs, r) = to_activation(&mut s, hs);
        let a = hs.on_response(&r).unwrap().expect("activation");
        assert!(a.none_for_the_rest, "{auth:?}");
        let mut active = hs.into_active(a);
        let sid = active.managed_sid();
        let status = Frame::request(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 6, &[]);
        // unauthenticated: refused although the BMC declared per-message
        // authentication off
        let forged = forge(0, sid, 0x2000_0000, &status.response(cc::OK, &[0, 0, 0, 0]));
        assert!(
            matches!(active.unwrap(&forged), Unwrapped::Ignored(_)),
            "{auth:?}"
        );
        // a wrong code, and a right one over other bytes
        let mut bad = forge(
            auth as u8,
            sid,
            0x2000_0001,
            &status.response(cc::OK, &[0; 4]),
        );
        bad[4 + 9] ^= 1;
        assert!(
            matches!(active.unwrap(&bad), Unwrapped::Ignored(_)),
            "{auth:?}"
        );
        // the genuine reply: every prefix refused, the whole accepted once
        let d = s
            .handle(&active.wrap(&status), from())
            .expect("lab answers");
        for cut in 0..d.len() {
            assert!(
                matches!(active.unwrap(&d[..cut]), Unwrapped::Ignored(_)),
                "{auth:?}: a reply cut at {cut} accepted"
            );
        }
        assert!(matches!(active.unwrap(&d), Unwrapped::Frame(_)), "{auth:?}");
        assert!(
            matches!(active.unwrap(&d), Unwrapped::Ignored(_)),
            "{auth:?}: replay accepted"
        );
        if auth == AuthType::Md5 {
            // with MD5, the code covers the message: a changed byte fails
            // the code before any checksum tolerance applies
            let mut changed = s.handle(&active.wrap(&status), from()).unwrap();
            let last = changed.len() - 1;
            changed[last] ^= 0x5a;
            assert_eq!(
                active.unwrap(&changed),
                Unwrapped::Ignored("bad authentication code")
            );
            assert!(active.rejected().is_some());
        }
    }
}

#[test]
fn rakp_length_tolerances_never_accept_a_wrong_or_short_proof() {
    for suite in [Suite::S3, Suite::S17] {
        let bmc = Bmc::new(true, Faults::default());
        let mut s = server(&bmc);
        let mut hs = ExpectOpenSessionResponse::new(
            suite,
            Privilege::Administrator,
            "admin",
            Secret::from_str_value(PW),
            None,
        );
        let r = s.handle(&hs.request(), from()).unwrap();
        let opened = hs.on_response(&r).unwrap().unwrap();
        let mut hs = hs.into_rakp(opened);
        let rakp2 = s.handle(&hs.request(), from()).unwrap();
        let n = suite.rakp_code_len();
        // a byte too many after a right HMAC: accepted (supermicro20)
        let long = edited(&rakp2, |p| p.push(0));
        assert_eq!(hs.on_response(&long).unwrap().unwrap().extra_bytes, 1);
        // a byte too many after a wrong HMAC: the password is wrong
        let wrong = edited(&rakp2, |p| {
            p[40] ^= 1;
            p.push(0)
        });
        assert_eq!(
            hs.on_response(&wrong).unwrap_err().kind,
            ErrorKind::PasswordInvalid
        );
        // cut short: malformed, neither accepted nor called a wrong password
        for keep in 0..n {
            let short = edited(&rakp2, |p| p.truncate(40 + keep));
            match hs.on_response(&short) {
                Ok(None) => {}
                Err(e) => assert_eq!(e.kind, ErrorKind::Protocol, "{suite:?} {keep}: {e}"),
                Ok(Some(_)) => panic!("{suite:?}: a RAKP 2 cut to {keep} bytes accepted"),
            }
        }
        // RAKP 4: a wrong value is refused whatever its length
        let v = hs.on_response(&rakp2).unwrap().unwrap();
        let mut hs = hs.into_rakp3(v);
        let rakp4 = s.handle(&hs.request(), from()).unwrap();
        let wrong = edited(&rakp4, |p| {
            p[8] ^= 1;
            p.extend_from_slice(&[0; 8])
        });
        assert_eq!(
            hs.on_response(&wrong).err().map(|e| e.kind),
            Some(ErrorKind::PasswordInvalid)
        );
        let short = edited(&rakp4, |p| p.truncate(8 + suite.icv_len() - 1));
        assert!(!matches!(hs.on_response(&short), Ok(Some(_))));
        let long = edited(&rakp4, |p| p.push(7));
        assert_eq!(hs.on_response(&long).unwrap().unwrap().extra_bytes, 1);
    }
}
