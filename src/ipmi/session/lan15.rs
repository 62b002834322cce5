//! IPMI 1.5 session set-up (§22.15-22.17): Get Session Challenge, then
//! Activate Session.

use super::active::*;
use super::common::*;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::ipmi::codec::{self, cmd, netfn, Frame, Session};
use crate::ipmi::config::{AuthType, Privilege};
use crate::ipmi::crypto::{self};
use crate::ipmi::workaround::{Workaround, Workarounds};
use crate::secret::Secret;
use rand::RngCore;

/// What both IPMI 1.5 set-up states know.
pub(super) struct Setup15 {
    pub(super) auth: AuthType,
    pub(super) privilege: Privilege,
    pub(super) username: [u8; 16],
    pub(super) password: Secret,
    pub(super) initial_out_seq: u32,
    pub(super) unauthenticated_ok: bool,
    /// Get Channel Authentication Capabilities said per-message
    /// authentication is disabled.
    pub(super) declared_per_msg_off: bool,
    pub(super) workarounds: Workarounds,
}

/// IPMI 1.5 set-up, first state: Get Session Challenge sent, its answer
/// awaited (IPMI 2.0 §22.16).
pub struct ExpectChallenge {
    pub(super) setup: Setup15,
    pub(super) sent: Sent,
}

/// The BMC's challenge.
#[derive(Debug)]
pub struct Challenge {
    pub(super) temp_sid: u32,
    pub(super) challenge: [u8; 16],
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
    pub(super) setup: Setup15,
    pub(super) temp_sid: u32,
    pub(super) challenge: [u8; 16],
    pub(super) sent: Sent,
}

/// Proof that the BMC activated the session.
#[derive(Debug)]
pub struct Activated {
    pub(super) auth_type: u8,
    pub(super) session_id: u32,
    pub(super) in_seq: u32,
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
            swapped: None,
            workarounds: self.setup.workarounds,
            seen: Seen::default(),
        })
    }
}
