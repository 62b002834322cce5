//! RMCP+ session set-up (IPMI 2.0 §13.17-13.20): Open Session, RAKP 1-4,
//! each a state that is left only with the proof its answer verified.

use super::active::*;
use super::common::*;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::ipmi::codec::{
    self, payload, OpenSessionRequest, OpenSessionResponse, Rakp1, Rakp2, Rakp3, Rakp4,
};
use crate::ipmi::config::Privilege;
use crate::ipmi::crypto::{self, constant_time_eq, Rakp, SessionKeys, Suite};
use crate::secret::Secret;
use rand::RngCore;

/// What every RMCP+ set-up state knows.
pub(super) struct Setup {
    pub(super) suite: Suite,
    pub(super) privilege: Privilege,
    pub(super) username: Vec<u8>,
    /// intel20: the name padded with zeros to 16 bytes in RAKP 1, RAKP 2
    /// and the session key; RAKP 3 is then computed as Intel's firmware
    /// checks it (the name without padding, the privilege without the
    /// lookup bit).
    pub(super) padded: bool,
    pub(super) password: Secret,
    pub(super) kg: Option<Secret>,
    pub(super) console_sid: u32,
    pub(super) rm: [u8; 16],
    /// The next message tag (each transmission takes one).
    pub(super) next_tag: u8,
}

impl Setup {
    pub(super) fn role(&self) -> u8 {
        self.privilege as u8 | NAME_ONLY_LOOKUP
    }

    pub(super) fn tag(&mut self, sent: &mut Sent) -> u8 {
        let t = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        sent.push(t);
        t
    }

    /// The RAKP 3 code (see `padded`).
    pub(super) fn rakp3_code(&self, managed_sid: u32, rc: &[u8; 16], guid: &[u8; 16]) -> Vec<u8> {
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

    pub(super) fn rakp<'a>(
        &'a self,
        managed_sid: u32,
        rc: &'a [u8; 16],
        guid: &'a [u8; 16],
    ) -> Rakp<'a> {
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
    pub(super) setup: Setup,
    pub(super) sent: Sent,
}

/// Proof that the BMC accepted our Open Session Request.
#[derive(Debug)]
pub struct Opened {
    pub(super) managed_sid: u32,
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
    pub(super) setup: Setup,
    pub(super) managed_sid: u32,
    pub(super) sent: Sent,
}

/// Proof that RAKP 2 arrived and shows that the BMC knows our password.
#[derive(Debug)]
pub struct Rakp2Verified {
    pub(super) rc: [u8; 16],
    pub(super) guid: [u8; 16],
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
    pub(super) setup: Setup,
    pub(super) managed_sid: u32,
    pub(super) rc: [u8; 16],
    pub(super) guid: [u8; 16],
    pub(super) sent: Sent,
}

/// Proof that RAKP 4 arrived and verified: the session keys.
pub struct Rakp4Verified {
    pub(super) keys: SessionKeys,
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
