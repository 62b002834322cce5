//! The client side of one SNMP conversation, without I/O: what to send
//! next and what an arriving datagram means, given the security settings,
//! what has been learned of the agent's engine, and the time.
//!
//! v1/v2c: a request carries the community; a response counts only if it
//! has our version, our community and one of our request ids.
//! v3 (RFC 3414): engine discovery (an empty, unauthenticated Get answered
//! by a Report carrying the engine ID, boots and time), localized keys,
//! signed (and, at authPriv, encrypted) requests whose engine time follows
//! the agent's clock, and a Response counts only if it is signed with our
//! key (and encrypted, at authPriv) and answers one of our message ids.
//! Unauthenticated Reports are believed only as failures (a forged one can
//! stop an action, never make one succeed).

use super::ber::Oid;
use super::message::{
    self, flags, CommunityMessage, Message, Pdu, PduKind, ScopedData, ScopedPdu, UsmParams,
    V3Message, VarBind, Version,
};
use super::usm::{AuthProtocol, PrivProtocol, UsmError};
use crate::secret::Secret;
use std::fmt;
use std::time::Instant;

/// msgMaxSize we announce (the largest UDP payload over IPv4).
pub const MAX_MESSAGE: i32 = 65507;

/// A v3 security level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecLevel {
    /// No authentication, no privacy.
    NoAuthNoPriv,
    /// Authenticated, in clear.
    AuthNoPriv,
    /// Authenticated and encrypted.
    AuthPriv,
}

impl SecLevel {
    /// Parses fence-agents' spelling (`noAuthNoPriv`, `authNoPriv`, `authPriv`), any case.
    pub fn parse(s: &str) -> Option<SecLevel> {
        Some(match s.to_ascii_lowercase().as_str() {
            "noauthnopriv" => SecLevel::NoAuthNoPriv,
            "authnopriv" => SecLevel::AuthNoPriv,
            "authpriv" => SecLevel::AuthPriv,
            _ => return None,
        })
    }

    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SecLevel::NoAuthNoPriv => "noAuthNoPriv",
            SecLevel::AuthNoPriv => "authNoPriv",
            SecLevel::AuthPriv => "authPriv",
        }
    }
}

/// A v3 user as configured on the client.
#[derive(Clone, Debug)]
pub struct UsmUser {
    /// securityName.
    pub name: String,
    /// The level requests are sent at.
    pub level: SecLevel,
    /// Authentication protocol and password (required above noAuthNoPriv).
    pub auth: Option<(AuthProtocol, Secret)>,
    /// Privacy protocol and password (required at authPriv).
    pub privacy: Option<(PrivProtocol, Secret)>,
}

/// How requests are secured.
#[derive(Clone, Debug)]
pub enum Security {
    /// v1 or v2c with a community string.
    Community {
        /// V1 or V2c.
        version: Version,
        /// The community (a password in all but name).
        community: Secret,
    },
    /// v3 with the User-based Security Model.
    Usm(UsmUser),
}

impl Security {
    /// The protocol version.
    pub fn version(&self) -> Version {
        match self {
            Security::Community { version, .. } => *version,
            Security::Usm(_) => Version::V3,
        }
    }

    /// A description for logs (never a secret).
    pub fn describe(&self) -> String {
        match self {
            Security::Community { version, .. } => {
                format!("SNMPv{} community [set]", version.as_str())
            }
            Security::Usm(u) => {
                let mut s = format!("SNMPv3 user '{}' {}", u.name, u.level.as_str());
                if let Some((a, _)) = &u.auth {
                    s.push_str(&format!(" auth {}", a.as_str()));
                }
                if let (SecLevel::AuthPriv, Some((p, _))) = (u.level, &u.privacy) {
                    s.push_str(&format!(" priv {}", p.as_str()));
                }
                s
            }
        }
    }
}

/// A v3 Report's cause (the usmStats / snmpUnknown counters, RFC 3414 §5, RFC 3412 §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// usmStatsUnknownEngineIDs: the discovery answer.
    UnknownEngineId,
    /// usmStatsNotInTimeWindows: our engine time is stale.
    NotInTimeWindow,
    /// usmStatsUnknownUserNames.
    UnknownUserName,
    /// usmStatsWrongDigests: the authentication key does not match.
    WrongDigests,
    /// usmStatsDecryptionErrors: the privacy key does not match.
    DecryptionErrors,
    /// usmStatsUnsupportedSecLevels.
    UnsupportedSecLevel,
    /// Any other report (its OID).
    Other(Oid),
}

impl ReportKind {
    fn from_oid(o: &Oid) -> ReportKind {
        // RFC 3414 §5: usmStats = 1.3.6.1.6.3.15.1.1.N.0
        const USM_STATS: [u32; 9] = [1, 3, 6, 1, 6, 3, 15, 1, 1];
        if o.0.len() == 11 && o.0[..9] == USM_STATS && o.0[10] == 0 {
            return match o.0[9] {
                1 => ReportKind::UnsupportedSecLevel,
                2 => ReportKind::NotInTimeWindow,
                3 => ReportKind::UnknownUserName,
                4 => ReportKind::UnknownEngineId,
                5 => ReportKind::WrongDigests,
                6 => ReportKind::DecryptionErrors,
                _ => ReportKind::Other(o.clone()),
            };
        }
        ReportKind::Other(o.clone())
    }
}

/// What a datagram turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The answer to our request.
    Response(Pdu),
    /// The engine was discovered (or its clock re-learned): send again.
    Resend,
    /// A Report that ends the exchange with an error.
    Report(ReportKind),
}

/// Why the session cannot go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// The configuration cannot work (no password for the level, …).
    Config(String),
    /// Key derivation or privacy failed.
    Usm(UsmError),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Config(m) => f.write_str(m),
            SessionError::Usm(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SessionError {}

/// One datagram to send, and what identifies its answer. (Its bytes can
/// hold a community in clear: `Debug` shows their length only.)
#[derive(Clone)]
pub struct Outgoing {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The PDU's request-id.
    pub request_id: i32,
    /// The v3 msgID (0 for v1/v2c).
    pub msg_id: i32,
}

impl fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outgoing")
            .field("bytes", &format_args!("[{} bytes]", self.bytes.len()))
            .field("request_id", &self.request_id)
            .field("msg_id", &self.msg_id)
            .finish()
    }
}

#[derive(Clone, Debug)]
struct Engine {
    id: Vec<u8>,
    boots: u32,
    time: u32,
    learned: Instant,
}

#[derive(Clone, Debug)]
struct Keys {
    auth: Option<(AuthProtocol, Secret)>,
    privacy: Option<(PrivProtocol, Secret)>,
}

/// Non-localized keys (Ku), derived once per session: deriving hashes a
/// megabyte per password.
#[derive(Clone, Debug, Default)]
struct MasterKeys {
    auth: Option<Secret>,
    privacy: Option<Secret>,
}

/// The client state of one conversation with one agent.
#[derive(Clone, Debug)]
pub struct Session {
    security: Security,
    master: MasterKeys,
    engine: Option<Engine>,
    keys: Option<Keys>,
    next_request_id: i32,
    next_msg_id: i32,
    salt: u64,
}

impl Session {
    /// A session for `security`; checks the settings and derives the v3 master keys.
    pub fn new(security: Security) -> Result<Session, SessionError> {
        let mut master = MasterKeys::default();
        if let Security::Usm(u) = &security {
            if u.name.is_empty() {
                return Err(SessionError::Config(
                    "an SNMPv3 user name is required".into(),
                ));
            }
            if u.level != SecLevel::NoAuthNoPriv {
                let Some((proto, pw)) = &u.auth else {
                    return Err(SessionError::Config(format!(
                        "security level {} needs an authentication password",
                        u.level.as_str()
                    )));
                };
                master.auth = Some(proto.password_to_key(pw).map_err(SessionError::Usm)?);
            }
            if u.level == SecLevel::AuthPriv {
                let (Some((proto, _)), Some((_, pw))) = (&u.auth, &u.privacy) else {
                    return Err(SessionError::Config(
                        "security level authPriv needs a privacy password".into(),
                    ));
                };
                // RFC 3826 §1.2 / RFC 3414 §8: the privacy key is derived
                // with the authentication protocol's hash.
                master.privacy = Some(proto.password_to_key(pw).map_err(SessionError::Usm)?);
            }
        }
        let r: u32 = rand::random();
        Ok(Session {
            security,
            master,
            engine: None,
            keys: None,
            next_request_id: (r & 0x3fff_ffff) as i32,
            next_msg_id: ((r >> 7) & 0x3fff_ffff) as i32,
            salt: rand::random(),
        })
    }

    /// The security settings.
    pub fn security(&self) -> &Security {
        &self.security
    }

    /// True while a v3 engine still has to be discovered.
    pub fn needs_discovery(&self) -> bool {
        matches!(self.security, Security::Usm(_)) && self.engine.is_none()
    }

    /// The discovered engine ID (v3), for the record.
    pub fn engine_id(&self) -> Option<&[u8]> {
        self.engine.as_ref().map(|e| e.id.as_slice())
    }

    /// A fresh request-id (one per logical request; retransmissions reuse it).
    pub fn new_request_id(&mut self) -> i32 {
        self.next_request_id = (self.next_request_id + 1) & 0x7fff_ffff;
        self.next_request_id
    }

    fn new_msg_id(&mut self) -> i32 {
        self.next_msg_id = (self.next_msg_id + 1) & 0x7fff_ffff;
        self.next_msg_id
    }

    /// The discovery probe (RFC 3414 §4): an empty, unauthenticated,
    /// reportable Get with no engine ID and no user.
    pub fn discovery(&mut self) -> Outgoing {
        let msg_id = self.new_msg_id();
        let request_id = self.new_request_id();
        let m = V3Message {
            msg_id,
            max_size: MAX_MESSAGE,
            flags: flags::REPORTABLE,
            usm: UsmParams::default(),
            data: ScopedData::Plain(ScopedPdu {
                context_engine_id: vec![],
                context_name: vec![],
                pdu: Pdu::request(PduKind::Get, request_id, vec![]),
            }),
            auth_range: 0..0,
        };
        Outgoing {
            bytes: m.encode().0,
            request_id,
            msg_id,
        }
    }

    /// Encodes a request PDU (one transmission). `pdu.request_id` is kept.
    pub fn request(&mut self, pdu: &Pdu, now: Instant) -> Result<Outgoing, SessionError> {
        let (version, user) = match &self.security {
            Security::Community { version, community } => {
                let m = CommunityMessage {
                    version: *version,
                    community: community.clone(),
                    pdu: pdu.clone(),
                };
                return Ok(Outgoing {
                    bytes: m.encode(),
                    request_id: pdu.request_id,
                    msg_id: 0,
                });
            }
            Security::Usm(u) => (Version::V3, u.clone()),
        };
        debug_assert_eq!(version, Version::V3);
        let Some(engine) = self.engine.clone() else {
            return Err(SessionError::Config(
                "the SNMP engine is not discovered yet".into(),
            ));
        };
        let elapsed = now.saturating_duration_since(engine.learned).as_secs();
        let time = engine
            .time
            .saturating_add(u32::try_from(elapsed).unwrap_or(u32::MAX));
        let msg_id = self.new_msg_id();
        let scoped = ScopedPdu {
            context_engine_id: engine.id.clone(),
            context_name: vec![],
            pdu: pdu.clone(),
        };
        let keys = self.keys.clone().unwrap_or(Keys {
            auth: None,
            privacy: None,
        });
        let mut f = flags::REPORTABLE;
        let mut auth_len = 0;
        if user.level != SecLevel::NoAuthNoPriv {
            f |= flags::AUTH;
            auth_len = keys.auth.as_ref().map_or(12, |(p, _)| p.mac_len());
        }
        let (data, privacy) = match (user.level, &keys.privacy) {
            (SecLevel::AuthPriv, Some((p, k))) => {
                f |= flags::PRIV;
                self.salt = self.salt.wrapping_add(1);
                let (ct, params) = p
                    .encrypt(k, engine.boots, time, self.salt, &scoped.encode())
                    .map_err(SessionError::Usm)?;
                (ScopedData::Encrypted(ct), params)
            }
            (SecLevel::AuthPriv, None) => {
                return Err(SessionError::Config("no privacy key".into()));
            }
            _ => (ScopedData::Plain(scoped), vec![]),
        };
        let m = V3Message {
            msg_id,
            max_size: MAX_MESSAGE,
            flags: f,
            usm: UsmParams {
                engine_id: engine.id.clone(),
                boots: engine.boots,
                time,
                user: user.name.as_bytes().to_vec(),
                auth: vec![0; auth_len],
                privacy,
            },
            data,
            auth_range: 0..0,
        };
        let (mut bytes, range) = m.encode();
        if let Some((p, k)) = &keys.auth {
            let mac = p.sign(k, &bytes);
            bytes[range].copy_from_slice(&mac);
        }
        Ok(Outgoing {
            bytes,
            request_id: pdu.request_id,
            msg_id,
        })
    }

    /// Interprets a datagram. `sent` are the transmissions of the current
    /// request (any of them may be the one answered). `Ok(None)`: not an
    /// answer to us (wrong ids, wrong community, bad signature, garbage);
    /// the caller keeps waiting.
    pub fn accept(
        &mut self,
        bytes: &[u8],
        sent: &[Outgoing],
        now: Instant,
    ) -> Result<Option<Reply>, SessionError> {
        let Ok(msg) = message::decode(bytes) else {
            return Ok(None);
        };
        match (&self.security, msg) {
            (Security::Community { version, community }, Message::Community(m)) => {
                let ours = m.version == *version
                    && ct_eq(m.community.expose(), community.expose())
                    && m.pdu.kind == PduKind::Response
                    && sent.iter().any(|s| s.request_id == m.pdu.request_id);
                Ok(ours.then_some(Reply::Response(m.pdu)))
            }
            (Security::Usm(u), Message::V3(m)) => {
                let u = u.clone();
                self.accept_v3(&u, bytes, m, sent, now)
            }
            _ => Ok(None),
        }
    }

    fn accept_v3(
        &mut self,
        user: &UsmUser,
        bytes: &[u8],
        m: V3Message,
        sent: &[Outgoing],
        now: Instant,
    ) -> Result<Option<Reply>, SessionError> {
        if !sent.iter().any(|s| s.msg_id == m.msg_id) {
            return Ok(None);
        }
        let authentic = m.flags & flags::AUTH != 0
            && self
                .keys
                .as_ref()
                .and_then(|k| k.auth.as_ref())
                .is_some_and(|(p, k)| {
                    m.usm.user == user.name.as_bytes() && p.verify(k, bytes, m.auth_range.clone())
                });
        if m.flags & flags::AUTH != 0 && !authentic {
            // Signed, but not with our key: not for us (or forged).
            return Ok(None);
        }
        let scoped = match &m.data {
            ScopedData::Plain(s) => s.clone(),
            ScopedData::Encrypted(ct) => {
                let Some((p, k)) = self.keys.as_ref().and_then(|k| k.privacy.clone()) else {
                    return Ok(None);
                };
                if !authentic {
                    return Ok(None);
                }
                let Ok(plain) = p.decrypt(&k, m.usm.boots, m.usm.time, &m.usm.privacy, ct) else {
                    return Ok(None);
                };
                match ScopedPdu::decode(&plain) {
                    Ok(s) => s,
                    Err(_) => return Ok(None),
                }
            }
        };
        let pdu = scoped.pdu;
        match pdu.kind {
            PduKind::Report => {
                let kind = pdu
                    .varbinds
                    .first()
                    .map(|vb| ReportKind::from_oid(&vb.oid))
                    .unwrap_or(ReportKind::Other(Oid::default()));
                match kind {
                    ReportKind::UnknownEngineId if self.engine.is_none() => {
                        if m.usm.engine_id.is_empty() || m.usm.engine_id.len() > 32 {
                            return Ok(None);
                        }
                        self.learn(&m.usm, now)?;
                        Ok(Some(Reply::Resend))
                    }
                    ReportKind::NotInTimeWindow if authentic => {
                        // RFC 3414 §4: an authenticated notInTimeWindow report
                        // carries the agent's clock; adopt it and resend.
                        if let Some(e) = &mut self.engine {
                            e.boots = m.usm.boots;
                            e.time = m.usm.time;
                            e.learned = now;
                        }
                        Ok(Some(Reply::Resend))
                    }
                    other => Ok(Some(Reply::Report(other))),
                }
            }
            PduKind::Response => {
                let needs_auth = user.level != SecLevel::NoAuthNoPriv;
                let needs_priv = user.level == SecLevel::AuthPriv;
                if (needs_auth && !authentic)
                    || (needs_priv && !matches!(m.data, ScopedData::Encrypted(_)))
                    || !sent.iter().any(|s| s.request_id == pdu.request_id)
                {
                    return Ok(None);
                }
                if authentic {
                    // Keep our notion of the agent's clock current (RFC 3414 §3.2.7 b).
                    if let Some(e) = &mut self.engine {
                        if m.usm.boots > e.boots || (m.usm.boots == e.boots && m.usm.time > e.time)
                        {
                            e.boots = m.usm.boots;
                            e.time = m.usm.time;
                            e.learned = now;
                        }
                    }
                }
                Ok(Some(Reply::Response(pdu)))
            }
            _ => Ok(None),
        }
    }

    fn learn(&mut self, p: &UsmParams, now: Instant) -> Result<(), SessionError> {
        let Security::Usm(u) = &self.security else {
            return Ok(());
        };
        let auth = match (&u.auth, &self.master.auth) {
            (Some((proto, _)), Some(ku)) => Some((*proto, proto.localize(ku, &p.engine_id))),
            _ => None,
        };
        let privacy = match (&u.auth, &u.privacy, &self.master.privacy) {
            (Some((a, _)), Some((proto, _)), Some(ku)) => {
                Some((*proto, a.localize(ku, &p.engine_id)))
            }
            _ => None,
        };
        self.keys = Some(Keys { auth, privacy });
        self.engine = Some(Engine {
            id: p.engine_id.clone(),
            boots: p.boots,
            time: p.time,
            learned: now,
        });
        Ok(())
    }
}

/// Compares two byte strings without an early exit on the first difference.
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A Get request for `oids`.
pub fn get_pdu(request_id: i32, oids: &[Oid]) -> Pdu {
    Pdu::request(
        PduKind::Get,
        request_id,
        oids.iter().cloned().map(VarBind::null).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usm_user(level: SecLevel) -> UsmUser {
        UsmUser {
            name: "fence".into(),
            level,
            auth: Some((AuthProtocol::Sha1, Secret::from_str_value("authpass1"))),
            privacy: Some((PrivProtocol::Aes128, Secret::from_str_value("privpass1"))),
        }
    }

    #[test]
    fn community_replies_need_our_ids_and_community() {
        let sec = Security::Community {
            version: Version::V2c,
            community: Secret::from_str_value("private"),
        };
        let mut s = Session::new(sec).unwrap();
        let rid = s.new_request_id();
        let out = s
            .request(
                &get_pdu(rid, &[Oid::parse("1.3.6.1.2.1.1.2.0").unwrap()]),
                Instant::now(),
            )
            .unwrap();
        let mut resp = get_pdu(rid, &[]);
        resp.kind = PduKind::Response;
        let ok = CommunityMessage {
            version: Version::V2c,
            community: Secret::from_str_value("private"),
            pdu: resp.clone(),
        };
        let now = Instant::now();
        assert_eq!(
            s.accept(&ok.encode(), std::slice::from_ref(&out), now),
            Ok(Some(Reply::Response(resp.clone())))
        );
        let mut wrong = ok.clone();
        wrong.community = Secret::from_str_value("public");
        assert_eq!(
            s.accept(&wrong.encode(), std::slice::from_ref(&out), now),
            Ok(None)
        );
        let mut other = ok;
        other.pdu.request_id = rid.wrapping_add(5);
        assert_eq!(s.accept(&other.encode(), &[out], now), Ok(None));
    }

    #[test]
    fn v3_needs_passwords_for_its_level() {
        let mut u = usm_user(SecLevel::AuthPriv);
        u.privacy = None;
        assert!(matches!(
            Session::new(Security::Usm(u)),
            Err(SessionError::Config(_))
        ));
        let mut u = usm_user(SecLevel::AuthNoPriv);
        u.auth = Some((AuthProtocol::Sha1, Secret::default()));
        assert_eq!(
            Session::new(Security::Usm(u)).err(),
            Some(SessionError::Usm(UsmError::EmptyPassword))
        );
    }

    #[test]
    fn debug_output_shows_no_secret() {
        let sec = Security::Community {
            version: Version::V2c,
            community: Secret::from_str_value("s3cret-community"),
        };
        let mut s = Session::new(sec).unwrap();
        let rid = s.new_request_id();
        let out = s.request(&get_pdu(rid, &[]), Instant::now()).unwrap();
        let mut u = Session::new(Security::Usm(usm_user(SecLevel::AuthPriv))).unwrap();
        let _ = u.discovery();
        let text = format!("{s:?} {out:?} {u:?}");
        for secret in ["s3cret-community", "authpass1", "privpass1"] {
            assert!(!text.contains(secret), "{text}");
        }
    }

    #[test]
    fn report_oids_are_classified() {
        let o = |s| Oid::parse(s).unwrap();
        assert_eq!(
            ReportKind::from_oid(&o("1.3.6.1.6.3.15.1.1.5.0")),
            ReportKind::WrongDigests
        );
        assert_eq!(
            ReportKind::from_oid(&o("1.3.6.1.6.3.15.1.1.3.0")),
            ReportKind::UnknownUserName
        );
        assert!(matches!(
            ReportKind::from_oid(&o("1.3.6.1.6.3.11.2.1.1.0")),
            ReportKind::Other(_)
        ));
    }
}
