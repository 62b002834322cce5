//! The client's session state machines, with no I/O.
//!
//! [`Handshake`] walks RMCP+ session set-up (Open Session, RAKP 1-4);
//! [`Handshake15`] walks IPMI 1.5 set-up (Get Session Challenge, Activate
//! Session). Each produces an [`Active`] session that wraps requests and
//! unwraps responses, checking session IDs, sequence numbers (a replay
//! window) and integrity on every datagram. The transport only moves bytes;
//! what to send next, and whether a datagram is ours, is decided here.
//!
//! Each `on_*` method returns `Ok(None)` for a datagram that is not the
//! answer being waited for (stray, duplicate, forged): the caller keeps
//! waiting. Errors are classified [`DriverError`]s.

use super::codec::{
    self, cmd, netfn, payload, Frame, Malformed, OpenSessionRequest, OpenSessionResponse, Rakp1,
    Rakp2, Rakp3, Rakp4, Rmcp, Session,
};
use super::config::{AuthType, Privilege};
use super::crypto::{self, constant_time_eq, Rakp, SessionKeys, Suite};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::secret::Secret;
use rand::RngCore;

/// RAKP 1 role bit: look the user up by name only (IPMI 2.0 table 13-11).
const NAME_ONLY_LOOKUP: u8 = 0x10;

/// Datagram → IPMI body, or `None` if it is not an IPMI-class RMCP packet.
fn ipmi_body(d: &[u8]) -> Option<&[u8]> {
    match codec::decode_rmcp(d) {
        Ok(Rmcp::Ipmi(b)) => Some(b),
        _ => None,
    }
}

/// Picks out an unauthenticated RMCP+ payload of type `want`.
fn v20_payload(d: &[u8], want: u8) -> Option<Vec<u8>> {
    let body = ipmi_body(d)?;
    match codec::decode_session(body, 0) {
        Ok(Session::V20(p)) if p.payload_type == want && !p.encrypted => Some(p.payload.to_vec()),
        _ => None,
    }
}

fn err(kind: ErrorKind, stage: Stage, msg: impl Into<String>) -> DriverError {
    DriverError::new(kind, stage, msg)
}

fn rmcpp_error(stage: Stage, step: &str, status: u8) -> DriverError {
    let text = codec::rmcpp_status_text(status);
    let kind = match status {
        0x01 | 0x0b => ErrorKind::Busy,
        0x0d | 0x0c => ErrorKind::UsernameInvalid,
        0x0f => ErrorKind::PasswordInvalid,
        0x09 | 0x0a => ErrorKind::PrivilegeNotObtained,
        0x03..=0x07 | 0x10 | 0x11 => ErrorKind::CipherUnsupported,
        _ => ErrorKind::DeviceError,
    };
    let hint = match kind {
        ErrorKind::UsernameInvalid => ": the BMC does not know this user name",
        ErrorKind::PasswordInvalid => ": the password (or K_g key) is wrong",
        _ => "",
    };
    err(
        kind,
        stage,
        format!("the BMC refused {step}: {text} (RMCP+ status {status:#04x}){hint}"),
    )
}

/// RMCP+ session set-up for one cipher suite.
pub struct Handshake {
    suite: Suite,
    privilege: Privilege,
    username: Vec<u8>,
    password: Secret,
    kg: Option<Secret>,
    console_sid: u32,
    tag: u8,
    rm: [u8; 16],
    managed_sid: u32,
    rc: [u8; 16],
    guid: [u8; 16],
    /// What the BMC granted in Open Session (quirk: ipmi_sim says 0).
    pub granted_privilege: u8,
}

impl Handshake {
    /// Starts a handshake with fresh random session ID and R_M.
    pub fn new(
        suite: Suite,
        privilege: Privilege,
        username: &str,
        password: Secret,
        kg: Option<Secret>,
    ) -> Self {
        let mut rng = rand::thread_rng();
        let mut rm = [0u8; 16];
        rng.fill_bytes(&mut rm);
        let mut console_sid = rng.next_u32();
        if console_sid == 0 {
            console_sid = 1;
        }
        Handshake {
            suite,
            privilege,
            username: username.as_bytes().to_vec(),
            password,
            kg,
            console_sid,
            tag: (rng.next_u32() & 0x3f) as u8,
            rm,
            managed_sid: 0,
            rc: [0; 16],
            guid: [0; 16],
            granted_privilege: 0,
        }
    }

    /// The suite being negotiated.
    pub fn suite(&self) -> Suite {
        self.suite
    }

    fn role(&self) -> u8 {
        self.privilege as u8 | NAME_ONLY_LOOKUP
    }

    fn rakp(&self) -> Rakp<'_> {
        Rakp {
            console_sid: self.console_sid,
            managed_sid: self.managed_sid,
            rm: &self.rm,
            rc: &self.rc,
            guid: &self.guid,
            role: self.role(),
            username: &self.username,
        }
    }

    /// The Open Session Request datagram.
    pub fn open_session_request(&self) -> Vec<u8> {
        let (a, i, c) = self.suite.algorithms();
        let p = OpenSessionRequest {
            tag: self.tag,
            max_privilege: self.privilege as u8,
            console_sid: self.console_sid,
            auth_alg: a,
            integrity_alg: i,
            conf_alg: c,
        }
        .encode();
        codec::encode_v20(payload::OPEN_SESSION_REQUEST, false, 0, 0, &p, 0)
    }

    /// Handles what may be the Open Session Response.
    pub fn on_open_session_response(&mut self, d: &[u8]) -> Result<Option<()>, DriverError> {
        let Some(p) = v20_payload(d, payload::OPEN_SESSION_RESPONSE) else {
            return Ok(None);
        };
        let Ok(r) = OpenSessionResponse::decode(&p) else {
            return Ok(None);
        };
        // A short error reply carries no session ID: the tag must do. (A
        // forged refusal can only make us fail or try the other secure suite.)
        let short_error = r.status != 0 && r.console_sid == 0;
        if r.tag != self.tag || (r.console_sid != self.console_sid && !short_error) {
            return Ok(None);
        }
        if r.status != 0 {
            return Err(rmcpp_error(
                Stage::Negotiate,
                &format!("cipher suite {}", self.suite.id()),
                r.status,
            ));
        }
        if r.algorithms != Some(self.suite.algorithms()) {
            // Never accept a downgrade to other algorithms than proposed.
            return Err(err(
                ErrorKind::CipherUnsupported,
                Stage::Negotiate,
                format!(
                    "the BMC answered cipher suite {} with other algorithms {:?}",
                    self.suite.id(),
                    r.algorithms
                ),
            ));
        }
        if r.managed_sid == 0 {
            return Err(err(
                ErrorKind::Protocol,
                Stage::Negotiate,
                "the BMC assigned session ID 0",
            ));
        }
        self.managed_sid = r.managed_sid;
        self.granted_privilege = r.max_privilege;
        Ok(Some(()))
    }

    /// The RAKP 1 datagram.
    pub fn rakp1(&self) -> Vec<u8> {
        let p = Rakp1 {
            tag: self.tag,
            managed_sid: self.managed_sid,
            rm: self.rm,
            role: self.role(),
            username: self.username.clone(),
        }
        .encode();
        codec::encode_v20(payload::RAKP1, false, 0, 0, &p, 0)
    }

    /// Handles what may be RAKP 2; verifies the BMC knows our password.
    pub fn on_rakp2(&mut self, d: &[u8]) -> Result<Option<()>, DriverError> {
        let Some(p) = v20_payload(d, payload::RAKP2) else {
            return Ok(None);
        };
        let Ok(r) = Rakp2::decode(&p) else {
            return Ok(None);
        };
        if r.console_sid != self.console_sid || r.tag != self.tag {
            return Ok(None);
        }
        if r.status != 0 {
            return Err(rmcpp_error(
                Stage::Authenticate,
                "the user (RAKP 2)",
                r.status,
            ));
        }
        self.rc = r.rc;
        self.guid = r.guid;
        let want = self
            .rakp()
            .rakp2_code(self.suite, crypto::kuid(self.password.expose()));
        if r.auth_code.len() != self.suite.rakp_code_len() || !constant_time_eq(&want, &r.auth_code)
        {
            return Err(err(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                "the BMC's RAKP 2 proof does not match our password: the password is wrong",
            ));
        }
        Ok(Some(()))
    }

    /// The RAKP 3 datagram (or, with `status` ≠ 0, the abort notice sent
    /// after a failed RAKP 2 check so the BMC frees the session slot).
    pub fn rakp3(&self, status: u8) -> Vec<u8> {
        let auth_code = if status == 0 {
            self.rakp()
                .rakp3_code(self.suite, crypto::kuid(self.password.expose()))
        } else {
            vec![]
        };
        let p = Rakp3 {
            tag: self.tag,
            status,
            managed_sid: self.managed_sid,
            auth_code,
        }
        .encode();
        codec::encode_v20(payload::RAKP3, false, 0, 0, &p, 0)
    }

    /// Handles what may be RAKP 4; on success the session is active.
    pub fn on_rakp4(&mut self, d: &[u8]) -> Result<Option<Active>, DriverError> {
        let Some(p) = v20_payload(d, payload::RAKP4) else {
            return Ok(None);
        };
        let Ok(r) = Rakp4::decode(&p) else {
            return Ok(None);
        };
        if r.console_sid != self.console_sid || r.tag != self.tag {
            return Ok(None);
        }
        if r.status != 0 {
            return Err(rmcpp_error(
                Stage::Authenticate,
                "our proof (RAKP 4)",
                r.status,
            ));
        }
        let kg = match &self.kg {
            Some(k) => k.expose().to_vec(),
            None => crypto::kuid(self.password.expose()).to_vec(),
        };
        let rakp = self.rakp();
        let mut sik = rakp.sik(self.suite, &kg);
        let icv = rakp.rakp4_icv(self.suite, &sik);
        if !constant_time_eq(&icv, &r.icv) {
            zeroize::Zeroize::zeroize(&mut sik);
            return Err(err(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                "the BMC's RAKP 4 check value does not match: the K_g key is wrong",
            ));
        }
        let keys = SessionKeys::derive(self.suite, &sik);
        zeroize::Zeroize::zeroize(&mut sik);
        Ok(Some(Active::V20(ActiveV20 {
            keys,
            managed_sid: self.managed_sid,
            console_sid: self.console_sid,
            out_seq: 0,
            window: ReplayWindow::default(),
        })))
    }
}

/// Sessionless request in IPMI 1.5 framing (auth type none, session 0),
/// which every BMC accepts before a session exists.
pub fn sessionless_request(netfn: u8, cmd: u8, rq_seq: u8, data: &[u8]) -> Vec<u8> {
    let f = Frame::request(netfn, cmd, rq_seq, data).encode();
    codec::encode_v15(0, 0, 0, None, &f)
}

/// Picks the response to a sessionless request out of a datagram (any framing).
pub fn sessionless_response(d: &[u8], netfn: u8, cmd: u8, rq_seq: u8) -> Option<Frame> {
    let body = ipmi_body(d)?;
    let p = match codec::decode_session(body, 0).ok()? {
        Session::V15(p) if p.session_id == 0 => p.payload,
        Session::V20(p) if p.session_id == 0 && p.payload_type == payload::IPMI => p.payload,
        _ => return None,
    };
    let f = Frame::decode(p).ok()?;
    f.answers(netfn, cmd, rq_seq).then_some(f)
}

/// IPMI 1.5 session set-up (IPMI 2.0 §22.15-22.17).
pub struct Handshake15 {
    auth: AuthType,
    privilege: Privilege,
    username: [u8; 16],
    password: Secret,
    temp_sid: u32,
    challenge: [u8; 16],
    initial_out_seq: u32,
    unauthenticated_ok: bool,
}

impl Handshake15 {
    /// Starts a 1.5 handshake with auth type `auth`.
    pub fn new(auth: AuthType, privilege: Privilege, username: &str, password: Secret) -> Self {
        let mut u = [0u8; 16];
        let n = username.len().min(16);
        u[..n].copy_from_slice(&username.as_bytes()[..n]);
        let mut seq = rand::thread_rng().next_u32();
        if seq == 0 {
            seq = 1;
        }
        Handshake15 {
            auth,
            privilege,
            username: u,
            password,
            temp_sid: 0,
            challenge: [0; 16],
            initial_out_seq: seq,
            unauthenticated_ok: false,
        }
    }

    /// Accept replies without an authentication code in the session: only
    /// when the BMC said per-message authentication is disabled (Get
    /// Channel Authentication Capabilities). Otherwise anyone who sees the
    /// session ID could forge a status reply.
    pub fn accept_unauthenticated_replies(&mut self, yes: bool) {
        self.unauthenticated_ok = yes;
    }

    /// The Get Session Challenge datagram.
    pub fn challenge_request(&self, rq_seq: u8) -> Vec<u8> {
        let mut data = vec![self.auth as u8];
        data.extend_from_slice(&self.username);
        sessionless_request(netfn::APP, cmd::GET_SESSION_CHALLENGE, rq_seq, &data)
    }

    /// Handles what may be the Get Session Challenge response.
    pub fn on_challenge(&mut self, d: &[u8], rq_seq: u8) -> Result<Option<()>, DriverError> {
        let Some(f) = sessionless_response(d, netfn::APP, cmd::GET_SESSION_CHALLENGE, rq_seq)
        else {
            return Ok(None);
        };
        match f.completion_code() {
            Ok(0) => {}
            Ok(0x81) => {
                return Err(err(
                    ErrorKind::UsernameInvalid,
                    Stage::Authenticate,
                    "the BMC does not know this user name (Get Session Challenge 81h)",
                ))
            }
            Ok(0x82) => {
                return Err(err(
                    ErrorKind::UsernameInvalid,
                    Stage::Authenticate,
                    "the BMC refuses the null user name (Get Session Challenge 82h)",
                ))
            }
            Ok(c) => {
                return Err(err(
                    ErrorKind::DeviceError,
                    Stage::Authenticate,
                    format!(
                        "Get Session Challenge failed: {} ({c:#04x})",
                        codec::completion_text(c)
                    ),
                ))
            }
            Err(_) => return Ok(None),
        }
        if f.data.len() < 21 {
            return Ok(None);
        }
        self.temp_sid = u32::from_le_bytes([f.data[1], f.data[2], f.data[3], f.data[4]]);
        self.challenge.copy_from_slice(&f.data[5..21]);
        Ok(Some(()))
    }

    /// The Activate Session datagram (authenticated with the temporary session ID).
    pub fn activate_request(&self, rq_seq: u8) -> Vec<u8> {
        let mut data = vec![self.auth as u8, self.privilege as u8];
        data.extend_from_slice(&self.challenge);
        data.extend_from_slice(&self.initial_out_seq.to_le_bytes());
        let f = Frame::request(netfn::APP, cmd::ACTIVATE_SESSION, rq_seq, &data).encode();
        let code = crypto::v15_code(
            self.auth as u8,
            self.password.expose(),
            self.temp_sid,
            &f,
            0,
        );
        codec::encode_v15(self.auth as u8, 0, self.temp_sid, code.as_ref(), &f)
    }

    /// Handles what may be the Activate Session response.
    pub fn on_activate(&mut self, d: &[u8], rq_seq: u8) -> Result<Option<Active>, DriverError> {
        let Some(body) = ipmi_body(d) else {
            return Ok(None);
        };
        let Ok(Session::V15(p)) = codec::decode_session(body, 0) else {
            return Ok(None);
        };
        if p.session_id != self.temp_sid && p.session_id != 0 {
            return Ok(None);
        }
        let Ok(f) = Frame::decode(p.payload) else {
            return Ok(None);
        };
        if !f.answers(netfn::APP, cmd::ACTIVATE_SESSION, rq_seq) {
            return Ok(None);
        }
        match f.completion_code() {
            Ok(0) => {}
            Ok(c @ (0x81..=0x86)) => {
                let (kind, what) = match c {
                    0x81 => (ErrorKind::Busy, "no session slot available"),
                    0x82 => (ErrorKind::Busy, "no slot for this user"),
                    0x83 => (ErrorKind::Protocol, "no slot at the requested privilege"),
                    0x84 => (ErrorKind::Protocol, "session sequence number out of range"),
                    0x85 => (ErrorKind::Protocol, "invalid session ID"),
                    _ => (
                        ErrorKind::PrivilegeNotObtained,
                        "the requested privilege exceeds the user's or channel's limit",
                    ),
                };
                return Err(err(
                    kind,
                    Stage::Authenticate,
                    format!("the BMC refused Activate Session: {what} ({c:#04x})"),
                ));
            }
            Ok(c) => {
                return Err(err(
                    ErrorKind::DeviceError,
                    Stage::Authenticate,
                    format!(
                        "Activate Session failed: {} ({c:#04x})",
                        codec::completion_text(c)
                    ),
                ))
            }
            Err(_) => return Ok(None),
        }
        if f.data.len() < 11 {
            return Ok(None);
        }
        let auth = f.data[1] & 0x0f;
        let sid = u32::from_le_bytes([f.data[2], f.data[3], f.data[4], f.data[5]]);
        let in_seq = u32::from_le_bytes([f.data[6], f.data[7], f.data[8], f.data[9]]);
        if sid == 0 {
            return Err(err(
                ErrorKind::Protocol,
                Stage::Authenticate,
                "the BMC assigned session ID 0",
            ));
        }
        Ok(Some(Active::V15(ActiveV15 {
            auth_type: auth,
            password: self.password.clone(),
            session_id: sid,
            // The BMC tells us the first sequence number it expects from us.
            out_seq: in_seq.wrapping_sub(1),
            window: ReplayWindow::default(),
            unauthenticated_ok: self.unauthenticated_ok,
        })))
    }
}

/// Sliding window over received session sequence numbers (IPMI 2.0
/// §6.12.13 suggests accepting up to 8 behind; we accept 32 behind and
/// reject duplicates, so a replayed datagram is never accepted twice).
#[derive(Default, Debug)]
pub struct ReplayWindow {
    highest: u32,
    seen: u32,
}

impl ReplayWindow {
    /// Records `seq` and returns true if it is new and not too old.
    pub fn accept(&mut self, seq: u32) -> bool {
        if seq == 0 {
            return false;
        }
        if self.highest == 0 || seq > self.highest {
            let shift = seq.wrapping_sub(self.highest);
            self.seen = if self.highest == 0 || shift >= 32 {
                1
            } else {
                (self.seen << shift) | 1
            };
            self.highest = seq;
            return true;
        }
        let behind = self.highest - seq;
        if behind >= 32 || self.seen & (1 << behind) != 0 {
            return false;
        }
        self.seen |= 1 << behind;
        true
    }
}

/// An active RMCP+ session.
pub struct ActiveV20 {
    keys: SessionKeys,
    managed_sid: u32,
    console_sid: u32,
    out_seq: u32,
    window: ReplayWindow,
}

/// An active IPMI 1.5 session.
pub struct ActiveV15 {
    auth_type: u8,
    password: Secret,
    session_id: u32,
    out_seq: u32,
    window: ReplayWindow,
    unauthenticated_ok: bool,
}

/// An authenticated session of either version.
pub enum Active {
    /// RMCP+.
    V20(ActiveV20),
    /// IPMI 1.5.
    V15(ActiveV15),
}

/// What unwrapping a datagram found.
#[derive(Debug, PartialEq, Eq)]
pub enum Unwrapped {
    /// A response frame from our session.
    Frame(Frame),
    /// Not ours, a replay, or not intact: ignore it.
    Ignored(&'static str),
}

impl Active {
    /// The BMC's session ID (for Close Session).
    pub fn managed_sid(&self) -> u32 {
        match self {
            Active::V20(s) => s.managed_sid,
            Active::V15(s) => s.session_id,
        }
    }

    /// A short description for the record.
    pub fn describe(&self) -> String {
        match self {
            Active::V20(s) => format!("RMCP+ cipher suite {}", s.keys.suite().id()),
            Active::V15(s) => format!(
                "IPMI 1.5 auth {}",
                match s.auth_type {
                    0 => "none",
                    2 => "md5",
                    4 => "password",
                    _ => "other",
                }
            ),
        }
    }

    /// Wraps a request in a new datagram (each call takes a new session
    /// sequence number, so retransmissions are never replays).
    pub fn wrap(&mut self, frame: &Frame) -> Vec<u8> {
        let msg = frame.encode();
        match self {
            Active::V20(s) => {
                s.out_seq = s.out_seq.wrapping_add(1).max(1);
                let mut iv = [0u8; 16];
                rand::thread_rng().fill_bytes(&mut iv);
                let enc = s.keys.encrypt(&msg, iv);
                let n = s.keys.suite().icv_len();
                let mut d =
                    codec::encode_v20(payload::IPMI, true, s.managed_sid, s.out_seq, &enc, n);
                let end = d.len() - n;
                let code = s.keys.integrity(&d[4..end]);
                d[end..].copy_from_slice(&code);
                d
            }
            Active::V15(s) => {
                s.out_seq = s.out_seq.wrapping_add(1).max(1);
                let code = crypto::v15_code(
                    s.auth_type,
                    s.password.expose(),
                    s.session_id,
                    &msg,
                    s.out_seq,
                );
                codec::encode_v15(s.auth_type, s.out_seq, s.session_id, code.as_ref(), &msg)
            }
        }
    }

    /// Checks and opens a datagram that claims to belong to this session.
    pub fn unwrap(&mut self, d: &[u8]) -> Unwrapped {
        let Some(body) = ipmi_body(d) else {
            return Unwrapped::Ignored("not RMCP/IPMI");
        };
        match self {
            Active::V20(s) => {
                let icv = s.keys.suite().icv_len();
                let p = match codec::decode_session(body, icv) {
                    Ok(Session::V20(p)) => p,
                    _ => return Unwrapped::Ignored("malformed"),
                };
                if p.session_id != s.console_sid {
                    return Unwrapped::Ignored("wrong session ID");
                }
                if p.payload_type != payload::IPMI || !p.authenticated || !p.encrypted {
                    return Unwrapped::Ignored("unauthenticated or unexpected payload");
                }
                if !s.keys.verify_integrity(p.integrity_data, p.auth_code) {
                    return Unwrapped::Ignored("bad integrity code");
                }
                let plain = match s.keys.decrypt(p.payload) {
                    Ok(x) => x,
                    Err(_) => return Unwrapped::Ignored("undecryptable"),
                };
                if !s.window.accept(p.seq) {
                    return Unwrapped::Ignored("replayed or stale sequence number");
                }
                match Frame::decode(&plain) {
                    Ok(f) => Unwrapped::Frame(f),
                    Err(_) => Unwrapped::Ignored("malformed message"),
                }
            }
            Active::V15(s) => {
                let p = match codec::decode_session(body, 0) {
                    Ok(Session::V15(p)) => p,
                    _ => return Unwrapped::Ignored("malformed"),
                };
                if p.session_id != s.session_id {
                    return Unwrapped::Ignored("wrong session ID");
                }
                if s.auth_type != 0 {
                    let want = crypto::v15_code(
                        p.auth_type,
                        s.password.expose(),
                        s.session_id,
                        p.payload,
                        p.seq,
                    );
                    // Replies carry our auth type, or none only where the
                    // BMC declared per-message authentication disabled.
                    if p.auth_type == 0 {
                        if !s.unauthenticated_ok {
                            return Unwrapped::Ignored(
                                "unauthenticated reply in an authenticated session",
                            );
                        }
                    } else {
                        if p.auth_type != s.auth_type {
                            return Unwrapped::Ignored("unexpected auth type");
                        }
                        match (want, p.auth_code) {
                            (Some(w), Some(c)) if constant_time_eq(&w, &c) => {}
                            _ => return Unwrapped::Ignored("bad authentication code"),
                        }
                    }
                }
                let Ok(f) = Frame::decode(p.payload) else {
                    return Unwrapped::Ignored("malformed message");
                };
                // Only an intact message moves the replay window.
                if !s.window.accept(p.seq) && p.seq != 0 {
                    return Unwrapped::Ignored("replayed or stale sequence number");
                }
                Unwrapped::Frame(f)
            }
        }
    }
}

/// Errors from decoding are folded into "ignored" by the session; this
/// helper exists for fuzz targets and tests that want the typed error.
pub fn decode_any(d: &[u8], icv_len: usize) -> Result<(), Malformed> {
    if let Rmcp::Ipmi(body) = codec::decode_rmcp(d)? {
        match codec::decode_session(body, icv_len)? {
            Session::V15(p) => {
                Frame::decode(p.payload)?;
            }
            Session::V20(p) => {
                if p.payload_type == payload::IPMI && !p.encrypted {
                    Frame::decode(p.payload)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_window_rejects_duplicates_and_stale() {
        let mut w = ReplayWindow::default();
        assert!(!w.accept(0));
        assert!(w.accept(5));
        assert!(!w.accept(5));
        assert!(w.accept(7));
        assert!(w.accept(6));
        assert!(!w.accept(6));
        assert!(w.accept(100));
        assert!(!w.accept(60));
        assert!(w.accept(90));
    }
}
