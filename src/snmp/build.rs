//! Switched PDUs' methods (the platform's own builder): the inventory (a
//! method's outlets on its own endpoint and on `[pdu.NAME]` tables) and
//! the SNMP fence agents (`fence_apc_snmp` …) share [`snmp`] /
//! [`snmp_parts`], so a version, security level, protocol, profile or
//! outlet list is read and checked in one place; only the defaults differ
//! ([`PduDefaults`]: the agents keep upstream's).

use super::client::Timing;
use super::config::{parse_endpoint, parse_version, OutletSpec, PduEndpoint, Plug, SnmpConfig};
use super::message::Version as SnmpVersion;
use super::session::{SecLevel, Security, UsmUser};
use super::usm::{AuthProtocol, PrivProtocol};
use crate::platform::credential::CredentialRef;
use crate::secret::Secret;
use std::sync::Arc;

/// What is wrong with a PDU method's settings.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A PDU endpoint or outlet list.
    #[error(transparent)]
    Snmp(#[from] super::config::ConfigError),
    /// A PDU profile that cannot be loaded.
    #[error(transparent)]
    Profile(#[from] super::profile::ProfileError),
    /// A PDU method without outlets.
    #[error("an snmp method needs outlets")]
    NoOutlets,
    /// An outlet on the method's own PDU, which it does not have.
    #[error("outlet {0} names no PDU, and the method has no endpoint of its own")]
    OutletWithoutPdu(String),
    /// A PDU without an address.
    #[error("a PDU needs endpoint = \"snmp://HOST[:PORT]\"")]
    PduAddress,
    /// An SNMP version other than 1, 2c and 3.
    #[error("unknown SNMP version '{0}' (expected 1, 2c or 3)")]
    SnmpVersion(String),
    /// An SNMPv3 security level fencekit does not know.
    #[error("unknown SNMPv3 security level '{0}' (expected noAuthNoPriv, authNoPriv or authPriv)")]
    SecurityLevel(String),
    /// An SNMPv3 authentication protocol fencekit does not know.
    #[error(
        "unknown SNMPv3 authentication protocol '{0}' (expected MD5, SHA, SHA-224, SHA-256, \
         SHA-384 or SHA-512)"
    )]
    AuthProtocol(String),
    /// An SNMPv3 privacy protocol fencekit does not know.
    #[error("unknown SNMPv3 privacy protocol '{0}' (expected AES or DES)")]
    PrivProtocol(String),
    /// SNMPv3 without a user name.
    #[error("SNMPv3 needs a user name (--username)")]
    SnmpUser,
    /// What is wrong with the PDU named `name`.
    #[error("PDU {name}: {source}")]
    Pdu {
        /// The PDU's name (`[pdu.NAME]`).
        name: String,
        /// What is wrong with it.
        source: Box<BuildError>,
    },
}

impl From<BuildError> for crate::platform::build::BuildError {
    fn from(e: BuildError) -> Self {
        Self::platform(e)
    }
}

/// One switched PDU as a front gives it (an inventory method's own
/// endpoint or a `[pdu.NAME]` table; the agent's options). The text is
/// checked by [`snmp_parts`], the same for every front; `None` takes the
/// front's [`PduDefaults`].
#[derive(Clone, Debug, Default)]
pub struct PduOptions {
    /// `snmp://HOST[:PORT]`.
    pub endpoint: Option<String>,
    /// The address, when there is no endpoint (the agent's `--ip`).
    pub ip: Option<String>,
    /// The port with `ip` (161 when not given).
    pub ipport: Option<u16>,
    /// A built-in profile name or a profile file.
    pub profile: Option<String>,
    /// `1`, `2c` or `3`.
    pub version: Option<String>,
    /// SNMPv3: `noAuthNoPriv`, `authNoPriv` or `authPriv`.
    pub security_level: Option<String>,
    /// SNMPv3 authentication protocol (`MD5`, `SHA`, `SHA-256` …).
    pub auth_protocol: Option<String>,
    /// SNMPv3 privacy protocol (`AES`, `DES`).
    pub priv_protocol: Option<String>,
    /// SNMPv3 user name.
    pub username: Option<String>,
    /// v1/v2c community.
    pub community: CredentialRef,
    /// SNMPv3 authentication password.
    pub auth: CredentialRef,
    /// SNMPv3 privacy password.
    pub privacy: CredentialRef,
    /// Per-request timing (the client's default when `None`).
    pub timing: Option<Timing>,
}

/// What a front assumes where a PDU's options are silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PduDefaults {
    /// The SNMP version.
    pub version: SnmpVersion,
    /// The profile.
    pub profile: &'static str,
    /// The SNMPv3 security level; `None`: authPriv when both passwords are
    /// given, noAuthNoPriv otherwise (net-snmp's default, as fence-agents
    /// applies it).
    pub level: Option<SecLevel>,
    /// The SNMPv3 authentication protocol.
    pub auth_protocol: AuthProtocol,
    /// The SNMPv3 privacy protocol.
    pub priv_protocol: PrivProtocol,
}

impl PduDefaults {
    /// fencekit's own (inventories): SNMPv2c; SNMPv3 authPriv with SHA-256
    /// and AES-128; the `apc` profile.
    pub const NATIVE: PduDefaults = PduDefaults {
        version: SnmpVersion::V2c,
        profile: "apc",
        level: Some(SecLevel::AuthPriv),
        auth_protocol: AuthProtocol::Sha256,
        priv_protocol: PrivProtocol::Aes128,
    };
}

/// A node's outlets and the PDUs they are on.
#[derive(Clone, Debug)]
pub struct SnmpOptions {
    /// The method's own PDU (`None`: every outlet names a PDU).
    pub own: Option<PduOptions>,
    /// PDUs by name, for outlets written `NAME:OUTLET`.
    pub named: Vec<(String, PduOptions)>,
    /// `7`, `1:7` (outlet 7 of switch 1) or a name, on the own PDU; `A:7`
    /// on the PDU named `A`.
    pub outlets: Vec<String>,
    /// What silent options mean.
    pub defaults: PduDefaults,
}

/// A PDU method's parts: [`snmp_parts`], and at least one outlet
/// (`platform::snmp` makes the method of them).
pub fn method_parts(o: &SnmpOptions) -> Result<(SnmpConfig, Vec<SnmpCredentials>), BuildError> {
    if o.outlets.is_empty() {
        return Err(BuildError::NoOutlets);
    }
    snmp_parts(o)
}

/// The PDUs and outlets `o` describes, each PDU's secrets as references
/// (its slots in the configuration hold empty secrets). Only the PDUs an
/// outlet is on take part, in the order the outlets first name them; the
/// own PDU alone when there are no outlets (a PDU-wide action: `list`).
/// An error about a named PDU starts with `PDU NAME: `.
pub fn snmp_parts(o: &SnmpOptions) -> Result<(SnmpConfig, Vec<SnmpCredentials>), BuildError> {
    let mut pdus: Vec<PduEndpoint> = Vec::new();
    let mut credentials = Vec::new();
    let mut own_at: Option<usize> = None;
    let mut named_at: Vec<(&str, usize)> = Vec::new();
    let mut add = |label: Option<&str>, p: &PduOptions| -> Result<usize, BuildError> {
        let (endpoint, creds) = pdu(label, p, &o.defaults)?;
        pdus.push(endpoint);
        credentials.push(creds);
        Ok(pdus.len() - 1)
    };
    let mut outlets = Vec::new();
    for text in &o.outlets {
        let named = text
            .split_once(':')
            .and_then(|(p, rest)| o.named.iter().find(|(n, _)| n == p).map(|t| (t, rest)));
        let (pdu, plug) = match named {
            Some(((name, table), rest)) => {
                let at = match named_at.iter().find(|(n, _)| n == name) {
                    Some(&(_, i)) => i,
                    None => {
                        let i = add(Some(name), table).map_err(|e| BuildError::Pdu {
                            name: name.clone(),
                            source: Box::new(e),
                        })?;
                        named_at.push((name, i));
                        i
                    }
                };
                (at, rest)
            }
            None => {
                let own = o
                    .own
                    .as_ref()
                    .ok_or_else(|| BuildError::OutletWithoutPdu(text.clone()))?;
                let at = match own_at {
                    Some(i) => i,
                    None => *own_at.insert(add(None, own)?),
                };
                (at, text.as_str())
            }
        };
        outlets.push(OutletSpec {
            pdu,
            plug: Plug::parse(plug),
        });
    }
    if o.outlets.is_empty() {
        if let Some(own) = &o.own {
            add(None, own)?;
        }
    }
    let config = SnmpConfig {
        pdus,
        outlets,
        max_off_watts: crate::engine::power::DEFAULT_MAX_OFF_WATTS,
    };
    config.validate_structure()?;
    Ok((config, credentials))
}

/// One PDU: its address, security (secrets empty, references returned),
/// profile and timing.
fn pdu(
    label: Option<&str>,
    o: &PduOptions,
    d: &PduDefaults,
) -> Result<(PduEndpoint, SnmpCredentials), BuildError> {
    let (host, port) = match (&o.endpoint, &o.ip) {
        (Some(e), _) => parse_endpoint(e)?,
        (None, Some(ip)) => (ip.clone(), o.ipport.unwrap_or(161)),
        (None, None) => return Err(BuildError::PduAddress),
    };
    let version = match o.version.as_deref() {
        Some(v) => parse_version(v).ok_or_else(|| BuildError::SnmpVersion(v.to_string()))?,
        None => d.version,
    };
    let security =
        match version {
            SnmpVersion::V3 => {
                let level = match o.security_level.as_deref() {
                    Some(l) => SecLevel::parse(l)
                        .ok_or_else(|| BuildError::SecurityLevel(l.to_string()))?,
                    None => d.level.unwrap_or(
                        if !matches!(o.auth, CredentialRef::None)
                            && !matches!(o.privacy, CredentialRef::None)
                        {
                            SecLevel::AuthPriv
                        } else {
                            SecLevel::NoAuthNoPriv
                        },
                    ),
                };
                let auth = match o.auth_protocol.as_deref() {
                    Some(a) => AuthProtocol::parse(a)
                        .ok_or_else(|| BuildError::AuthProtocol(a.to_string()))?,
                    None => d.auth_protocol,
                };
                let privacy = match o.priv_protocol.as_deref() {
                    Some(p) => PrivProtocol::parse(p)
                        .ok_or_else(|| BuildError::PrivProtocol(p.to_string()))?,
                    None => d.priv_protocol,
                };
                let name = o.username.clone().unwrap_or_default();
                if name.is_empty() {
                    return Err(BuildError::SnmpUser);
                }
                // The slots the level needs; their secrets are filled at build
                // time, and an empty one is refused then (`validate_secrets`).
                Security::Usm(UsmUser {
                    name,
                    level,
                    auth: (level != SecLevel::NoAuthNoPriv).then(|| (auth, Secret::default())),
                    privacy: (level == SecLevel::AuthPriv).then(|| (privacy, Secret::default())),
                })
            }
            v => Security::Community {
                version: v,
                community: Secret::default(),
            },
        };
    let profile = super::profile::Profile::load(o.profile.as_deref().unwrap_or(d.profile))?;
    Ok((
        PduEndpoint {
            label: label.map(str::to_string).unwrap_or_else(|| host.clone()),
            host,
            port,
            security,
            profile: Arc::new(profile),
            timing: o.timing.unwrap_or_default(),
        },
        SnmpCredentials {
            community: o.community.clone(),
            auth: o.auth.clone(),
            privacy: o.privacy.clone(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a method of `o` would be made of (`platform::snmp` boxes it).
    fn snmp(o: &SnmpOptions) -> Result<(SnmpConfig, Vec<SnmpCredentials>), BuildError> {
        method_parts(o)
    }

    fn pdu_at(endpoint: &str) -> PduOptions {
        PduOptions {
            endpoint: Some(endpoint.into()),
            community: CredentialRef::Env("C".into()),
            ..Default::default()
        }
    }

    fn outlets(
        own: Option<PduOptions>,
        named: &[(&str, PduOptions)],
        list: &[&str],
    ) -> SnmpOptions {
        SnmpOptions {
            own,
            named: named
                .iter()
                .map(|(n, p)| (n.to_string(), p.clone()))
                .collect(),
            outlets: list.iter().map(|s| s.to_string()).collect(),
            defaults: PduDefaults::NATIVE,
        }
    }

    #[test]
    fn outlets_take_only_the_pdus_they_are_on_in_first_use_order() {
        let o = outlets(
            Some(pdu_at("snmp://own:1161")),
            &[("A", pdu_at("snmp://a")), ("B", pdu_at("snmp://b"))],
            &["B:7", "1:3", "B:8", "web01"],
        );
        let (c, creds) = snmp_parts(&o).unwrap();
        let pdus: Vec<_> = c.pdus.iter().map(|p| (p.label.as_str(), p.port)).collect();
        assert_eq!(pdus, vec![("B", 161), ("own", 1161)], "A is not contacted");
        assert_eq!(creds.len(), 2);
        let at: Vec<_> = c
            .outlets
            .iter()
            .map(|o| (o.pdu, o.plug.to_string()))
            .collect();
        assert_eq!(
            at,
            vec![
                (0, "7".into()),
                (1, "1:3".into()),
                (0, "8".into()),
                (1, "web01".into())
            ],
            "`1:3` names no PDU: switch 1, outlet 3 on the own PDU"
        );
        // No outlets: the own PDU alone (the agent's `list`), but never a
        // method.
        let o = outlets(Some(pdu_at("snmp://own")), &[], &[]);
        assert_eq!(snmp_parts(&o).unwrap().0.pdus.len(), 1);
        assert!(snmp(&o).unwrap_err().to_string().contains("needs outlets"));
        // An outlet on the own PDU of a method without one.
        let o = outlets(None, &[("A", pdu_at("snmp://a"))], &["A:1", "2"]);
        assert!(snmp(&o)
            .unwrap_err()
            .to_string()
            .contains("outlet 2 names no PDU"));
        // The same outlet twice.
        let o = outlets(None, &[("A", pdu_at("snmp://a"))], &["A:1", "A:1"]);
        assert!(snmp(&o).unwrap_err().to_string().contains("listed twice"));
    }

    #[test]
    fn every_front_gets_the_same_checks_whatever_its_defaults() {
        let upstream = PduDefaults {
            version: SnmpVersion::V1,
            level: None,
            auth_protocol: AuthProtocol::Md5,
            priv_protocol: PrivProtocol::Des,
            ..PduDefaults::NATIVE
        };
        type Spoil = fn(&mut PduOptions);
        let bad: [(Spoil, &str); 6] = [
            (
                |p| p.version = Some("4".into()),
                "unknown SNMP version '4' (expected 1, 2c or 3)",
            ),
            (
                |p| p.security_level = Some("authOnly".into()),
                "unknown SNMPv3 security level 'authOnly'",
            ),
            (
                |p| p.auth_protocol = Some("SHA-3".into()),
                "unknown SNMPv3 authentication protocol 'SHA-3'",
            ),
            (
                |p| p.priv_protocol = Some("3DES".into()),
                "unknown SNMPv3 privacy protocol '3DES' (expected AES or DES)",
            ),
            (|p| p.username = None, "SNMPv3 needs a user name"),
            (|p| p.profile = Some("nosuchpdu".into()), "nosuchpdu"),
        ];
        for defaults in [PduDefaults::NATIVE, upstream] {
            for (spoil, want) in &bad {
                let mut p = pdu_at("snmp://pdu");
                p.version = Some("3".into());
                p.username = Some("u".into());
                spoil(&mut p);
                let o = SnmpOptions {
                    defaults,
                    ..outlets(Some(p.clone()), &[], &["1"])
                };
                let e = snmp(&o).unwrap_err().to_string();
                assert!(e.contains(want), "{defaults:?}: {e}");
                // A named PDU says which.
                let o = SnmpOptions {
                    defaults,
                    ..outlets(None, &[("A", p)], &["A:1"])
                };
                let e = snmp(&o).unwrap_err();
                assert!(
                    matches!(&e, BuildError::Pdu { name, .. } if name == "A"),
                    "{e}"
                );
                let e = e.to_string();
                assert!(e.starts_with("PDU A: ") && e.contains(want), "{e}");
            }
        }
    }

    #[test]
    fn silent_options_take_the_fronts_defaults() {
        let level = |d: PduDefaults, auth: bool, privacy: bool| {
            let mut p = pdu_at("snmp://pdu");
            p.version = Some("3".into());
            p.username = Some("u".into());
            if auth {
                p.auth = CredentialRef::Inline(Secret::from_str_value("a12345678"));
            }
            if privacy {
                p.privacy = CredentialRef::Inline(Secret::from_str_value("p12345678"));
            }
            let o = SnmpOptions {
                defaults: d,
                ..outlets(Some(p), &[], &["1"])
            };
            match &snmp_parts(&o).unwrap().0.pdus[0].security {
                Security::Usm(u) => (
                    u.level,
                    u.auth.as_ref().map(|a| a.0),
                    u.privacy.as_ref().map(|p| p.0),
                ),
                other => panic!("{other:?}"),
            }
        };
        let native = PduDefaults::NATIVE;
        assert_eq!(
            level(native, false, false),
            (
                SecLevel::AuthPriv,
                Some(AuthProtocol::Sha256),
                Some(PrivProtocol::Aes128)
            )
        );
        let upstream = PduDefaults {
            level: None,
            auth_protocol: AuthProtocol::Md5,
            priv_protocol: PrivProtocol::Des,
            ..native
        };
        assert_eq!(
            level(upstream, true, true),
            (
                SecLevel::AuthPriv,
                Some(AuthProtocol::Md5),
                Some(PrivProtocol::Des)
            )
        );
        assert_eq!(
            level(upstream, true, false),
            (SecLevel::NoAuthNoPriv, None, None)
        );
        // v2c by default natively, with the community as a reference.
        let (c, creds) = snmp_parts(&outlets(Some(pdu_at("snmp://pdu")), &[], &["1"])).unwrap();
        assert!(matches!(
            c.pdus[0].security,
            Security::Community {
                version: SnmpVersion::V2c,
                ..
            }
        ));
        assert!(matches!(&creds[0].community, CredentialRef::Env(v) if v == "C"));
        assert_eq!(c.pdus[0].profile.name, "apc");
    }

    #[test]
    fn pdu_messages_read_as_they_always_have() {
        let text =
            |r: Result<(SnmpConfig, Vec<SnmpCredentials>), BuildError>| r.unwrap_err().to_string();
        let pdu = PduOptions {
            endpoint: Some("snmp://p".into()),
            ..Default::default()
        };
        let e = text(snmp(&outlets(
            None,
            &[("A", PduOptions::default())],
            &["A:1"],
        )));
        assert_eq!(e, "PDU A: a PDU needs endpoint = \"snmp://HOST[:PORT]\"");
        let e = text(snmp(&outlets(Some(pdu), &[], &["1", "1"])));
        assert_eq!(e, "outlet 1 is listed twice");
    }
}

/// Where one PDU's secrets come from.
#[derive(Clone, Debug, Default)]
pub struct SnmpCredentials {
    /// v1/v2c community.
    pub community: CredentialRef,
    /// v3 authentication password.
    pub auth: CredentialRef,
    /// v3 privacy password.
    pub privacy: CredentialRef,
}

impl SnmpCredentials {
    /// The references that apply to `security`.
    pub fn used(&self, security: &Security) -> Vec<&CredentialRef> {
        match security {
            Security::Community { .. } => vec![&self.community],
            Security::Usm(u) => {
                let mut v = Vec::new();
                if u.auth.is_some() {
                    v.push(&self.auth);
                }
                if u.privacy.is_some() {
                    v.push(&self.privacy);
                }
                v
            }
        }
    }
}
