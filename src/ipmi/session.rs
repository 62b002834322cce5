//! The client's session state machines, with no I/O.
//!
//! RMCP+ set-up (IPMI 2.0 §13.17-13.20) is a chain of named states, each a
//! type: [`ExpectOpenSessionResponse`] → [`ExpectRakp2`] → [`ExpectRakp4`]
//! → [`Active`]. A state is left only by handing it the proof that its
//! answer arrived and verified ([`Opened`], [`Rakp2Verified`],
//! [`Rakp4Verified`], values only the state's own `on_response` makes), so
//! an out-of-order step (RAKP 3 before a verified RAKP 2, a session before
//! RAKP 4) does not compile. IPMI 1.5 set-up (§22.15-22.17) is the same
//! shape: [`ExpectChallenge`] → [`ExpectActivation`] → [`Active`].
//!
//! ```compile_fail
//! # use fencekit::ipmi::{config::Privilege, crypto::Suite, session::*};
//! # use fencekit::secret::Secret;
//! let hs = ExpectOpenSessionResponse::new(
//!     Suite::S17, Privilege::Administrator, "admin", Secret::from_str_value("pw"), None);
//! // RAKP 3 before the BMC's RAKP 2 was verified: there is no such step.
//! let next = hs.into_rakp3(todo!());
//! ```
//!
//! The active session wraps requests and unwraps responses, checking
//! session IDs, sequence numbers (a replay window, every number included)
//! and integrity or authentication codes on every datagram. The transport
//! only moves bytes; what to send next, and whether a datagram is ours, is
//! decided here.
//!
//! Every (re)transmission of a set-up message carries a fresh message tag,
//! which the BMC echoes: an answer names the transmission it answers, so
//! the driver measures the round-trip time exactly (see
//! [`super::pacing`]). `on_response` methods return `Ok(None)` for a
//! datagram that is not an answer to this state (stray, duplicate, forged):
//! the caller keeps waiting. Errors are classified [`DriverError`]s.

use super::codec::{
    self, cmd, netfn, payload, Frame, Malformed, OpenSessionRequest, OpenSessionResponse, Rakp1,
    Rakp2, Rakp3, Rakp4, Rmcp, Session,
};
use super::config::{AuthType, Privilege};
use super::crypto::{self, constant_time_eq, Rakp, SessionKeys, Suite};
use super::workaround::{Workaround, Workarounds};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::secret::Secret;
use rand::RngCore;

/// RAKP 1 role bit: look the user up by name only (IPMI 2.0 table 13-11).
const NAME_ONLY_LOOKUP: u8 = 0x10;
/// Transmissions whose tag (or rqSeq) is remembered per state; older ones
/// are forgotten (their answers are then ignored, and re-sent for).
const REMEMBERED: usize = 16;

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

/// The identifiers (message tags, or rqSeqs) given to the transmissions of
/// one request, in order: an answer echoing one of them names its
/// transmission (1-based).
#[derive(Clone, Debug, Default)]
pub struct Sent {
    ids: Vec<u8>,
    first: u32,
}

/// Replies that claimed to be a session's and were refused: the last
/// reason, and how many. "No answer" is said only when there are none
/// (see the driver).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// What was wrong with the answer.
    pub why: &'static str,
    /// The workaround that would accept it, if one would.
    pub workaround: Option<Workaround>,
    /// How many were refused.
    pub count: u32,
}

impl Rejected {
    /// Records one more refusal for `why`.
    fn record(slot: &mut Option<Rejected>, why: &'static str, workaround: Option<Workaround>) {
        let count = slot.as_ref().map_or(0, |r| r.count) + 1;
        *slot = Some(Rejected {
            why,
            workaround,
            count,
        });
    }

    /// "3 answers from FROM to WHAT were received and refused: WHY;
    /// --workaround W accepts them …".
    pub fn describe(&self, from: &str, what: &str) -> String {
        let hint = match self.workaround {
            Some(w) if w.weakens_security() => format!(
                "; --workaround {w} accepts them, at a cost: {}",
                w.entry().security_note()
            ),
            Some(w) => format!("; --workaround {w} accepts them"),
            None => String::new(),
        };
        format!(
            "{} answer{} from {from} to {what} {} received and refused: {}{hint}",
            self.count,
            if self.count == 1 { "" } else { "s" },
            if self.count == 1 { "was" } else { "were" },
            self.why
        )
    }
}

impl Sent {
    /// Records the identifier of the next transmission.
    pub fn push(&mut self, id: u8) {
        if self.ids.len() == REMEMBERED {
            self.ids.remove(0);
            self.first += 1;
        }
        self.ids.push(id);
    }

    /// The transmission (1-based) that carried `id`, if it was one of ours.
    /// Identifiers are distinct per transmission, so the latest match wins.
    pub fn which(&self, id: u8) -> Option<u32> {
        self.ids
            .iter()
            .rposition(|x| *x == id)
            .map(|i| self.first + i as u32 + 1)
    }

    /// Transmissions so far.
    pub fn count(&self) -> u32 {
        self.first + self.ids.len() as u32
    }
}

/// What every RMCP+ set-up state knows.
struct Setup {
    suite: Suite,
    privilege: Privilege,
    username: Vec<u8>,
    /// intel20: the name padded with zeros to 16 bytes in RAKP 1, RAKP 2
    /// and the session key; RAKP 3 is then computed as Intel's firmware
    /// checks it (the name without padding, the privilege without the
    /// lookup bit).
    padded: bool,
    password: Secret,
    kg: Option<Secret>,
    console_sid: u32,
    rm: [u8; 16],
    /// The next message tag (each transmission takes one).
    next_tag: u8,
}

impl Setup {
    fn role(&self) -> u8 {
        self.privilege as u8 | NAME_ONLY_LOOKUP
    }

    fn tag(&mut self, sent: &mut Sent) -> u8 {
        let t = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        sent.push(t);
        t
    }

    /// The RAKP 3 code (see `padded`).
    fn rakp3_code(&self, managed_sid: u32, rc: &[u8; 16], guid: &[u8; 16]) -> Vec<u8> {
        let kuid = crypto::kuid(self.password.expose());
        let rakp = self.rakp(managed_sid, rc, guid);
        if self.padded {
            let name: Vec<u8> = self
                .username
                .iter()
                .copied()
                .take_while(|b| *b != 0)
                .collect();
            Rakp {
                username: &name,
                role: self.privilege as u8,
                ..rakp
            }
            .rakp3_code(self.suite, kuid)
        } else {
            rakp.rakp3_code(self.suite, kuid)
        }
    }

    fn rakp<'a>(&'a self, managed_sid: u32, rc: &'a [u8; 16], guid: &'a [u8; 16]) -> Rakp<'a> {
        Rakp {
            console_sid: self.console_sid,
            managed_sid,
            rm: &self.rm,
            rc,
            guid,
            role: self.role(),
            username: &self.username,
        }
    }
}

/// RMCP+ set-up, first state: Open Session Request sent, its answer awaited.
pub struct ExpectOpenSessionResponse {
    setup: Setup,
    sent: Sent,
}

/// Proof that the BMC accepted our Open Session Request.
#[derive(Debug)]
pub struct Opened {
    managed_sid: u32,
    /// What the BMC granted (quirk: ipmi_sim says 0).
    pub granted_privilege: u8,
    /// Which transmission this answers (1-based).
    pub transmission: u32,
}

impl ExpectOpenSessionResponse {
    /// Starts a handshake with a fresh random session ID, R_M and tag.
    pub fn new(
        suite: Suite,
        privilege: Privilege,
        username: &str,
        password: Secret,
        kg: Option<Secret>,
    ) -> Self {
        // The OS generator directly: a thread-local ChaCha would cost more
        // to set up (seeding, CPU feature probes) than the three draws of a
        // handshake (issue 17, start-up).
        let mut rng = rand::rngs::OsRng;
        let mut rm = [0u8; 16];
        rng.fill_bytes(&mut rm);
        let mut console_sid = rng.next_u32();
        if console_sid == 0 {
            console_sid = 1;
        }
        ExpectOpenSessionResponse {
            setup: Setup {
                suite,
                privilege,
                username: username.as_bytes().to_vec(),
                padded: false,
                password,
                kg,
                console_sid,
                rm,
                next_tag: rng.next_u32() as u8,
            },
            sent: Sent::default(),
        }
    }

    /// The suite being negotiated.
    pub fn suite(&self) -> Suite {
        self.setup.suite
    }

    /// intel20: the user name padded with zeros to 16 bytes (a name of 16
    /// bytes or none is sent as it is).
    pub fn pad_user_name(mut self) -> Self {
        let n = self.setup.username.len();
        if n > 0 && n < 16 {
            self.setup.username.resize(16, 0);
            self.setup.padded = true;
        }
        self
    }

    /// The next (re)transmission of the Open Session Request, with a new tag.
    pub fn request(&mut self) -> Vec<u8> {
        let (a, i, c) = self.setup.suite.algorithms();
        let tag = self.setup.tag(&mut self.sent);
        let p = OpenSessionRequest {
            tag,
            max_privilege: self.setup.privilege as u8,
            console_sid: self.setup.console_sid,
            auth_alg: a,
            integrity_alg: i,
            conf_alg: c,
        }
        .encode();
        codec::encode_v20(payload::OPEN_SESSION_REQUEST, false, 0, 0, &p, 0)
    }

    /// Examines what may be the Open Session Response.
    pub fn on_response(&self, d: &[u8]) -> Result<Option<Opened>, DriverError> {
        let Some(p) = v20_payload(d, payload::OPEN_SESSION_RESPONSE) else {
            return Ok(None);
        };
        let Ok(r) = OpenSessionResponse::decode(&p) else {
            return Ok(None);
        };
        let Some(transmission) = self.sent.which(r.tag) else {
            return Ok(None);
        };
        // A short error reply carries no session ID: the tag must do. (A
        // forged refusal can only make us fail or try the other secure suite.)
        let short_error = r.status != 0 && r.console_sid == 0;
        if r.console_sid != self.setup.console_sid && !short_error {
            return Ok(None);
        }
        let suite = self.setup.suite;
        if r.status != 0 {
            return Err(rmcpp_error(
                Stage::Negotiate,
                &format!("cipher suite {}", suite.id()),
                r.status,
            ));
        }
        if r.algorithms != Some(suite.algorithms()) {
            // Never accept a downgrade to other algorithms than proposed.
            return Err(err(
                ErrorKind::CipherUnsupported,
                Stage::Negotiate,
                format!(
                    "the BMC answered cipher suite {} with other algorithms {:?}",
                    suite.id(),
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
        Ok(Some(Opened {
            managed_sid: r.managed_sid,
            granted_privilege: r.max_privilege,
            transmission,
        }))
    }

    /// On to RAKP 1, with the BMC's answer.
    pub fn into_rakp(self, opened: Opened) -> ExpectRakp2 {
        ExpectRakp2 {
            setup: self.setup,
            managed_sid: opened.managed_sid,
            sent: Sent::default(),
        }
    }
}

/// RMCP+ set-up, second state: RAKP 1 sent, RAKP 2 awaited.
pub struct ExpectRakp2 {
    setup: Setup,
    managed_sid: u32,
    sent: Sent,
}

/// Proof that RAKP 2 arrived and shows that the BMC knows our password.
#[derive(Debug)]
pub struct Rakp2Verified {
    rc: [u8; 16],
    guid: [u8; 16],
    /// Which transmission this answers (1-based).
    pub transmission: u32,
    /// Bytes after the HMAC that were ignored (supermicro20, sun20).
    pub extra_bytes: usize,
}

impl ExpectRakp2 {
    /// The next (re)transmission of RAKP 1, with a new tag (same R_M).
    pub fn request(&mut self) -> Vec<u8> {
        let tag = self.setup.tag(&mut self.sent);
        let p = Rakp1 {
            tag,
            managed_sid: self.managed_sid,
            rm: self.setup.rm,
            role: self.setup.role(),
            username: self.setup.username.clone(),
        }
        .encode();
        codec::encode_v20(payload::RAKP1, false, 0, 0, &p, 0)
    }

    /// Examines what may be RAKP 2; verifies the BMC knows our password.
    pub fn on_response(&self, d: &[u8]) -> Result<Option<Rakp2Verified>, DriverError> {
        let Some(p) = v20_payload(d, payload::RAKP2) else {
            return Ok(None);
        };
        let Ok(r) = Rakp2::decode(&p) else {
            return Ok(None);
        };
        if r.console_sid != self.setup.console_sid {
            return Ok(None);
        }
        let Some(transmission) = self.sent.which(r.tag) else {
            return Ok(None);
        };
        if r.status != 0 {
            return Err(rmcpp_error(
                Stage::Authenticate,
                "the user (RAKP 2)",
                r.status,
            ));
        }
        let suite = self.setup.suite;
        let want = self
            .setup
            .rakp(self.managed_sid, &r.rc, &r.guid)
            .rakp2_code(suite, crypto::kuid(self.setup.password.expose()));
        let n = suite.rakp_code_len();
        if r.auth_code.len() < n {
            // Not a proof at all: a message cut short (or another
            // suite's), never a verdict on the password.
            return Err(err(
                ErrorKind::Protocol,
                Stage::Authenticate,
                format!(
                    "the BMC's RAKP 2 carries a {}-byte key-exchange code where cipher suite {}                      has {n}: the message is malformed (the password was not judged)",
                    r.auth_code.len(),
                    suite.id()
                ),
            ));
        }
        // supermicro20 / sun20 (automatic): bytes after the HMAC are
        // ignored; the HMAC's own must verify.
        if !constant_time_eq(&want, &r.auth_code[..n]) {
            return Err(err(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                "the BMC's RAKP 2 proof does not match our password: the password is wrong",
            ));
        }
        Ok(Some(Rakp2Verified {
            rc: r.rc,
            guid: r.guid,
            transmission,
            extra_bytes: r.auth_code.len() - n,
        }))
    }

    /// The notice sent after a RAKP 2 that did not verify (RAKP 3 with
    /// status 0Fh), so the BMC frees the half-open session's slot.
    pub fn abort_notice(&mut self) -> Vec<u8> {
        let tag = self.setup.tag(&mut self.sent);
        let p = Rakp3 {
            tag,
            status: 0x0f,
            managed_sid: self.managed_sid,
            auth_code: vec![],
        }
        .encode();
        codec::encode_v20(payload::RAKP3, false, 0, 0, &p, 0)
    }

    /// On to RAKP 3, with the verified RAKP 2.
    pub fn into_rakp3(self, v: Rakp2Verified) -> ExpectRakp4 {
        ExpectRakp4 {
            setup: self.setup,
            managed_sid: self.managed_sid,
            rc: v.rc,
            guid: v.guid,
            sent: Sent::default(),
        }
    }
}

/// RMCP+ set-up, third state: RAKP 3 sent, RAKP 4 awaited.
pub struct ExpectRakp4 {
    setup: Setup,
    managed_sid: u32,
    rc: [u8; 16],
    guid: [u8; 16],
    sent: Sent,
}

/// Proof that RAKP 4 arrived and verified: the session keys.
pub struct Rakp4Verified {
    keys: SessionKeys,
    /// Which transmission this answers (1-based).
    pub transmission: u32,
    /// Bytes after the suite's check value that were ignored
    /// (integritycheckvalue: an untruncated value).
    pub extra_bytes: usize,
}

impl ExpectRakp4 {
    /// The next (re)transmission of RAKP 3, with a new tag.
    pub fn request(&mut self) -> Vec<u8> {
        let tag = self.setup.tag(&mut self.sent);
        let auth_code = self
            .setup
            .rakp3_code(self.managed_sid, &self.rc, &self.guid);
        let p = Rakp3 {
            tag,
            status: 0,
            managed_sid: self.managed_sid,
            auth_code,
        }
        .encode();
        codec::encode_v20(payload::RAKP3, false, 0, 0, &p, 0)
    }

    /// Examines what may be RAKP 4; on success derives the session keys.
    pub fn on_response(&self, d: &[u8]) -> Result<Option<Rakp4Verified>, DriverError> {
        let Some(p) = v20_payload(d, payload::RAKP4) else {
            return Ok(None);
        };
        let Ok(r) = Rakp4::decode(&p) else {
            return Ok(None);
        };
        if r.console_sid != self.setup.console_sid {
            return Ok(None);
        }
        let Some(transmission) = self.sent.which(r.tag) else {
            return Ok(None);
        };
        if r.status != 0 {
            return Err(rmcpp_error(
                Stage::Authenticate,
                "our proof (RAKP 4)",
                r.status,
            ));
        }
        let suite = self.setup.suite;
        let kg = match &self.setup.kg {
            Some(k) => k.expose().to_vec(),
            None => crypto::kuid(self.setup.password.expose()).to_vec(),
        };
        let rakp = self.setup.rakp(self.managed_sid, &self.rc, &self.guid);
        let mut sik = rakp.sik(suite, &kg);
        let icv = rakp.rakp4_icv(suite, &sik);
        let n = icv.len();
        if r.icv.len() < n {
            zeroize::Zeroize::zeroize(&mut sik);
            return Err(err(
                ErrorKind::Protocol,
                Stage::Authenticate,
                format!(
                    "the BMC's RAKP 4 carries a {}-byte integrity check value where cipher suite                      {} has {n}: the message is malformed",
                    r.icv.len(),
                    suite.id()
                ),
            ));
        }
        // integritycheckvalue (automatic): an untruncated value is
        // checked over the suite's own bytes.
        if !constant_time_eq(&icv, &r.icv[..n]) {
            zeroize::Zeroize::zeroize(&mut sik);
            // RAKP 2 already proved the password: what is left is K_g.
            return Err(err(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                if self.setup.kg.is_some() {
                    "the BMC's RAKP 4 check value does not match (the password was right): the                      K_g key is wrong"
                } else {
                    "the BMC's RAKP 4 check value does not match (the password was right): the                      BMC most likely has a K_g key, which was not given (--hexadecimal-kg)"
                },
            ));
        }
        let keys = SessionKeys::derive(suite, &sik);
        zeroize::Zeroize::zeroize(&mut sik);
        Ok(Some(Rakp4Verified {
            keys,
            transmission,
            extra_bytes: r.icv.len() - n,
        }))
    }

    /// The active session, with the verified RAKP 4.
    pub fn into_active(self, v: Rakp4Verified) -> Active {
        Active::V20(ActiveV20 {
            keys: v.keys,
            managed_sid: self.managed_sid,
            console_sid: self.setup.console_sid,
            out_seq: 0,
            window: ReplayWindow::default(),
            seen: Seen::default(),
        })
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

/// Picks the response to a sessionless request sent with any of the rqSeqs
/// in `sent`: the frame, the transmission it answers, and whether its IPMI
/// checksums match (nothing else vouches for a sessionless answer, so the
/// caller decides what a wrong one means: see `nochecksumcheck`).
pub fn sessionless_answer(d: &[u8], netfn: u8, cmd: u8, sent: &Sent) -> Option<(Frame, u32, bool)> {
    let body = ipmi_body(d)?;
    let p = match codec::decode_session(body, 0).ok()? {
        Session::V15(p) if p.session_id == 0 => p.payload,
        Session::V20(p) if p.session_id == 0 && p.payload_type == payload::IPMI => p.payload,
        _ => return None,
    };
    let (f, sums_ok) = Frame::decode_unchecked(p).ok()?;
    let n = sent.which(f.seq)?;
    f.answers(netfn, cmd, f.seq).then_some((f, n, sums_ok))
}

/// The error for a set-up answer whose IPMI checksum is wrong, when
/// nothing else vouches for it and `nochecksumcheck` was not asked for.
fn bad_checksum(stage: Stage, what: &str) -> DriverError {
    err(
        ErrorKind::Protocol,
        stage,
        format!(
            "the BMC answered {what}, but the answer's IPMI checksum is wrong (seen on \
             Supermicro X9 boards): --workaround nochecksumcheck accepts such answers"
        ),
    )
}

/// What both IPMI 1.5 set-up states know.
struct Setup15 {
    auth: AuthType,
    privilege: Privilege,
    username: [u8; 16],
    password: Secret,
    initial_out_seq: u32,
    unauthenticated_ok: bool,
    /// Get Channel Authentication Capabilities said per-message
    /// authentication is disabled.
    declared_per_msg_off: bool,
    workarounds: Workarounds,
}

/// IPMI 1.5 set-up, first state: Get Session Challenge sent, its answer
/// awaited (IPMI 2.0 §22.16).
pub struct ExpectChallenge {
    setup: Setup15,
    sent: Sent,
}

/// The BMC's challenge.
#[derive(Debug)]
pub struct Challenge {
    temp_sid: u32,
    challenge: [u8; 16],
    /// Which transmission this answers (1-based).
    pub transmission: u32,
}

impl ExpectChallenge {
    /// Starts a 1.5 handshake with auth type `auth`.
    pub fn new(auth: AuthType, privilege: Privilege, username: &str, password: Secret) -> Self {
        let mut u = [0u8; 16];
        let n = username.len().min(16);
        u[..n].copy_from_slice(&username.as_bytes()[..n]);
        let mut seq = rand::rngs::OsRng.next_u32();
        if seq == 0 {
            seq = 1;
        }
        ExpectChallenge {
            setup: Setup15 {
                auth,
                privilege,
                username: u,
                password,
                initial_out_seq: seq,
                unauthenticated_ok: false,
                declared_per_msg_off: false,
                workarounds: Workarounds::NONE,
            },
            sent: Sent::default(),
        }
    }

    /// Accept in-session replies without an authentication code. Only for a
    /// BMC that declared per-message authentication disabled (Get Channel
    /// Authentication Capabilities) *and* a user who opted in: that
    /// declaration itself comes unauthenticated, and with it anyone who sees
    /// the session ID could forge an "off" reply.
    pub fn accept_unauthenticated_replies(&mut self, yes: bool) {
        self.setup.unauthenticated_ok = yes;
    }

    /// What Get Channel Authentication Capabilities declared: per-message
    /// authentication disabled. fencekit authenticates every message
    /// anyway (forcepermsg) and checks every reply's code (unexpectedauth);
    /// only Activate Session's "none for the rest of the session" is then
    /// no reason to give up.
    pub fn declared_per_message_auth_off(&mut self, yes: bool) {
        self.setup.declared_per_msg_off = yes;
    }

    /// The workarounds asked for by name.
    pub fn workarounds(&mut self, w: Workarounds) {
        self.setup.workarounds = w;
    }

    /// The next (re)transmission of Get Session Challenge, with rqSeq
    /// `rq_seq` (a new one per transmission: the answer then names it).
    pub fn request(&mut self, rq_seq: u8) -> Vec<u8> {
        self.sent.push(rq_seq & 0x3f);
        let mut data = vec![self.setup.auth as u8];
        data.extend_from_slice(&self.setup.username);
        sessionless_request(netfn::APP, cmd::GET_SESSION_CHALLENGE, rq_seq, &data)
    }

    /// Examines what may be the Get Session Challenge response.
    pub fn on_response(&self, d: &[u8]) -> Result<Option<Challenge>, DriverError> {
        let Some((f, transmission, sums_ok)) =
            sessionless_answer(d, netfn::APP, cmd::GET_SESSION_CHALLENGE, &self.sent)
        else {
            return Ok(None);
        };
        if !sums_ok && !self.setup.workarounds.contains(Workaround::NoChecksumCheck) {
            return Err(bad_checksum(Stage::Authenticate, "Get Session Challenge"));
        }
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
        let mut challenge = [0u8; 16];
        challenge.copy_from_slice(&f.data[5..21]);
        Ok(Some(Challenge {
            temp_sid: u32::from_le_bytes([f.data[1], f.data[2], f.data[3], f.data[4]]),
            challenge,
            transmission,
        }))
    }

    /// On to Activate Session, with the challenge.
    pub fn into_activation(self, c: Challenge) -> ExpectActivation {
        ExpectActivation {
            setup: self.setup,
            temp_sid: c.temp_sid,
            challenge: c.challenge,
            sent: Sent::default(),
        }
    }
}

/// IPMI 1.5 set-up, second state: Activate Session sent (authenticated with
/// the temporary session ID), its answer awaited (IPMI 2.0 §22.17).
pub struct ExpectActivation {
    setup: Setup15,
    temp_sid: u32,
    challenge: [u8; 16],
    sent: Sent,
}

/// Proof that the BMC activated the session.
#[derive(Debug)]
pub struct Activated {
    auth_type: u8,
    session_id: u32,
    in_seq: u32,
    /// Which transmission this answers (1-based; 0 when unknown: every
    /// transmission carries the same rqSeq).
    pub transmission: u32,
    /// The BMC named authentication type none for the rest of the session,
    /// as per-message authentication disabled allows; the session stays
    /// authenticated all the same.
    pub none_for_the_rest: bool,
    /// Its IPMI checksum was wrong (accepted: nochecksumcheck).
    pub bad_checksum: bool,
}

impl ExpectActivation {
    /// A (re)transmission of Activate Session with rqSeq `rq_seq`. Re-sends
    /// keep the rqSeq: activation is not a request to repeat.
    pub fn request(&mut self, rq_seq: u8) -> Vec<u8> {
        self.sent.push(rq_seq & 0x3f);
        let mut data = vec![self.setup.auth as u8, self.setup.privilege as u8];
        data.extend_from_slice(&self.challenge);
        data.extend_from_slice(&self.setup.initial_out_seq.to_le_bytes());
        let f = Frame::request(netfn::APP, cmd::ACTIVATE_SESSION, rq_seq, &data).encode();
        let code = crypto::v15_code(
            self.setup.auth as u8,
            self.setup.password.expose(),
            self.temp_sid,
            &f,
            0,
        );
        codec::encode_v15(self.setup.auth as u8, 0, self.temp_sid, code.as_ref(), &f)
    }

    /// Examines what may be the Activate Session response.
    pub fn on_response(&self, d: &[u8]) -> Result<Option<Activated>, DriverError> {
        let Some(body) = ipmi_body(d) else {
            return Ok(None);
        };
        let Ok(Session::V15(p)) = codec::decode_session(body, 0) else {
            return Ok(None);
        };
        if p.session_id != self.temp_sid && p.session_id != 0 {
            return Ok(None);
        }
        let Ok((f, sums_ok)) = Frame::decode_unchecked(p.payload) else {
            return Ok(None);
        };
        if self.sent.which(f.seq).is_none() || !f.answers(netfn::APP, cmd::ACTIVATE_SESSION, f.seq)
        {
            return Ok(None);
        }
        if !sums_ok && !self.setup.workarounds.contains(Workaround::NoChecksumCheck) {
            return Err(bad_checksum(Stage::Authenticate, "Activate Session"));
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
        let session_id = u32::from_le_bytes([f.data[2], f.data[3], f.data[4], f.data[5]]);
        if session_id == 0 {
            return Err(err(
                ErrorKind::Protocol,
                Stage::Authenticate,
                "the BMC assigned session ID 0",
            ));
        }
        let auth_type = f.data[1] & 0x0f;
        // Per-message authentication declared off: "none for the rest" is
        // what the BMC is then allowed to say. fencekit keeps the
        // negotiated type for every request and insists on it in every
        // reply, so this answer cannot switch authentication off either.
        let none_for_the_rest =
            auth_type == 0 && self.setup.declared_per_msg_off && self.setup.auth != AuthType::None;
        if auth_type != self.setup.auth as u8 && !none_for_the_rest {
            // The answer is not authenticated: a forged one must not be able
            // to turn the session into one without authentication codes.
            return Err(err(
                ErrorKind::Protocol,
                Stage::Authenticate,
                format!(
                    "the BMC activated the session with authentication type {auth_type:#04x}, \
                     not the {} that was negotiated",
                    self.setup.auth.as_str()
                ),
            ));
        }
        Ok(Some(Activated {
            auth_type: self.setup.auth as u8,
            none_for_the_rest,
            bad_checksum: !sums_ok,
            session_id,
            in_seq: u32::from_le_bytes([f.data[6], f.data[7], f.data[8], f.data[9]]),
            transmission: if self.sent.count() == 1 { 1 } else { 0 },
        }))
    }

    /// The active session, with the BMC's activation.
    pub fn into_active(self, a: Activated) -> Active {
        Active::V15(ActiveV15 {
            auth_type: a.auth_type,
            password: self.setup.password,
            session_id: a.session_id,
            // The BMC tells us the first sequence number it expects from us.
            out_seq: a.in_seq.wrapping_sub(1),
            window: ReplayWindow::default(),
            unauthenticated_ok: self.setup.unauthenticated_ok,
            first_seq: self.setup.initial_out_seq,
            workarounds: self.setup.workarounds,
            seen: Seen::default(),
        })
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

/// What a session saw of the BMC's non-compliance: the last reply that
/// claimed to be ours and was refused, and what was tolerated.
#[derive(Debug, Default)]
struct Seen {
    rejected: Option<Rejected>,
    tolerated: Workarounds,
}

/// An active RMCP+ session.
pub struct ActiveV20 {
    keys: SessionKeys,
    managed_sid: u32,
    console_sid: u32,
    out_seq: u32,
    window: ReplayWindow,
    seen: Seen,
}

/// An active IPMI 1.5 session.
pub struct ActiveV15 {
    auth_type: u8,
    password: Secret,
    session_id: u32,
    out_seq: u32,
    window: ReplayWindow,
    unauthenticated_ok: bool,
    /// The sequence number the BMC was asked to start its replies from.
    first_seq: u32,
    workarounds: Workarounds,
    seen: Seen,
}

/// How far ahead of the number the BMC was told to start from its replies
/// may be and still be recognised as byte-swapped (endianseq).
const SWAP_RANGE: u32 = 1 << 16;

/// True when `seq` is not near `first` but reads as near it with its bytes
/// swapped: a BMC writing its sequence numbers in the wrong byte order.
fn byte_swapped(seq: u32, first: u32) -> bool {
    seq.wrapping_sub(first) >= SWAP_RANGE && seq.swap_bytes().wrapping_sub(first) < SWAP_RANGE
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

    /// The RMCP+ cipher suite (`None`: an IPMI 1.5 session).
    pub fn suite_id(&self) -> Option<u8> {
        match self {
            Active::V20(s) => Some(s.keys.suite().id()),
            Active::V15(_) => None,
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
                rand::rngs::OsRng.fill_bytes(&mut iv);
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
                    s.seen.reject(
                        "their integrity codes do not verify (a wrong K_g key, or forged)",
                        None,
                    );
                    return Unwrapped::Ignored("bad integrity code");
                }
                let plain = match s.keys.decrypt(p.payload) {
                    Ok(x) => x,
                    Err(_) => return Unwrapped::Ignored("undecryptable"),
                };
                if !s.window.accept(p.seq) {
                    return Unwrapped::Ignored("replayed or stale sequence number");
                }
                match Frame::decode_unchecked(&plain) {
                    Ok((f, sums_ok)) => {
                        if !sums_ok {
                            // nochecksumcheck, automatic: the integrity code
                            // covers every byte the checksums do.
                            s.seen.tolerated.insert(Workaround::NoChecksumCheck);
                        }
                        Unwrapped::Frame(f)
                    }
                    Err(_) => Unwrapped::Ignored("malformed message"),
                }
            }
            Active::V15(s) => {
                let p = match codec::decode_session(body, 0) {
                    Ok(Session::V15(p)) => p,
                    _ => return Unwrapped::Ignored("malformed"),
                };
                if p.session_id != s.session_id {
                    if p.session_id != 0 {
                        return Unwrapped::Ignored("wrong session ID");
                    }
                    if !s.workarounds.contains(Workaround::IdZero) {
                        s.seen.reject(
                            "they carry session ID 0, not this session's (seen on Tyan S2882)",
                            Some(Workaround::IdZero),
                        );
                        return Unwrapped::Ignored("session ID 0");
                    }
                    s.seen.tolerated.insert(Workaround::IdZero);
                }
                // Does an authentication code vouch for the message bytes?
                let mut vouched = false;
                if s.auth_type != 0 {
                    // Replies carry our auth type, or none only where the
                    // BMC declared per-message authentication disabled.
                    if p.auth_type == 0 {
                        if !s.unauthenticated_ok {
                            s.seen.reject(
                                "they carry no authentication code (the BMC has per-message \
                                 authentication disabled?); only --accept-unauthenticated-replies \
                                 takes them, and with it anyone on the path could forge answers",
                                None,
                            );
                            return Unwrapped::Ignored(
                                "unauthenticated reply in an authenticated session",
                            );
                        }
                    } else {
                        if p.auth_type != s.auth_type {
                            s.seen.reject(
                                "they carry another authentication type than the session's",
                                None,
                            );
                            return Unwrapped::Ignored("unexpected auth type");
                        }
                        if s.workarounds.contains(Workaround::NoAuthCodeCheck) {
                            s.seen.tolerated.insert(Workaround::NoAuthCodeCheck);
                        } else {
                            let want = crypto::v15_code(
                                p.auth_type,
                                s.password.expose(),
                                p.session_id,
                                p.payload,
                                p.seq,
                            );
                            match (want, p.auth_code) {
                                (Some(w), Some(c)) if constant_time_eq(&w, &c) => {}
                                _ => {
                                    s.seen.reject(
                                        "their authentication codes do not verify (seen on \
                                         Windmill boards; or a forged reply)",
                                        Some(Workaround::NoAuthCodeCheck),
                                    );
                                    return Unwrapped::Ignored("bad authentication code");
                                }
                            }
                            // MD5 covers the message; a straight password does not.
                            vouched = p.auth_type == AuthType::Md5 as u8;
                        }
                    }
                }
                let Ok((f, sums_ok)) = Frame::decode_unchecked(p.payload) else {
                    return Unwrapped::Ignored("malformed message");
                };
                if !sums_ok {
                    if vouched || s.workarounds.contains(Workaround::NoChecksumCheck) {
                        s.seen.tolerated.insert(Workaround::NoChecksumCheck);
                    } else {
                        s.seen.reject(
                            "their IPMI checksums are wrong (seen on Supermicro X9 boards)",
                            Some(Workaround::NoChecksumCheck),
                        );
                        return Unwrapped::Ignored("bad checksum");
                    }
                }
                // endianseq: read the number in the BMC's byte order; without
                // it, a number that only makes sense swapped is named as such.
                let seq = if s.workarounds.contains(Workaround::EndianSeq) {
                    s.seen.tolerated.insert(Workaround::EndianSeq);
                    p.seq.swap_bytes()
                } else {
                    if byte_swapped(p.seq, s.first_seq) {
                        s.seen.reject(
                            "their session sequence numbers are byte-swapped (seen on Sun ILOM)",
                            Some(Workaround::EndianSeq),
                        );
                        return Unwrapped::Ignored("byte-swapped sequence number");
                    }
                    p.seq
                };
                // Only an intact message moves the replay window, and every
                // sequence number is checked (0 included: no exemption
                // inside a session, or one recorded reply could be replayed
                // as seq 0 forever).
                if !s.window.accept(seq) {
                    return Unwrapped::Ignored("replayed or stale sequence number");
                }
                Unwrapped::Frame(f)
            }
        }
    }

    /// The last reply that claimed to be this session's and was refused.
    pub fn rejected(&self) -> Option<&Rejected> {
        match self {
            Active::V20(s) => s.seen.rejected.as_ref(),
            Active::V15(s) => s.seen.rejected.as_ref(),
        }
    }

    /// What was tolerated since the last call (then forgotten).
    pub fn take_tolerated(&mut self) -> Workarounds {
        let seen = match self {
            Active::V20(s) => &mut s.seen,
            Active::V15(s) => &mut s.seen,
        };
        std::mem::take(&mut seen.tolerated)
    }
}

impl Seen {
    fn reject(&mut self, why: &'static str, workaround: Option<Workaround>) {
        Rejected::record(&mut self.rejected, why, workaround);
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
