//! What the SNMP driver needs: the PDUs (address, security, profile,
//! timing) and the node's outlets on them. Built by the agent front from
//! fence_apc_snmp's options and by fleets from inventory methods; checked
//! here, offline.

use super::client::Timing;
use super::message::Version;
use super::profile::Profile;
use super::session::{SecLevel, Security};
use std::fmt;
use std::sync::Arc;

/// The SNMP port.
pub const DEFAULT_PORT: u16 = 161;

/// One PDU.
#[derive(Clone, Debug)]
pub struct PduEndpoint {
    /// How messages name it (`A`, or the host).
    pub label: String,
    /// Address or host name.
    pub host: String,
    /// UDP port.
    pub port: u16,
    /// Community or v3 user.
    pub security: Security,
    /// The profile (its variant is picked by sysObjectID on connect).
    pub profile: Arc<Profile>,
    /// Per-request timeout and tries.
    pub timing: Timing,
}

impl PduEndpoint {
    /// `snmp://host:port`, as people write it (IPv6 in brackets).
    pub fn url(&self) -> String {
        if self.host.contains(':') {
            format!("snmp://[{}]:{}", self.host, self.port)
        } else {
            format!("snmp://{}:{}", self.host, self.port)
        }
    }

    /// The key of the per-device lock (one session at a time per PDU,
    /// shared with agents and other fencekit processes).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
    }
}

/// An outlet as the user named it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plug {
    /// A number, optionally on a switch (`7`, `2:7`).
    Number {
        /// The switch of devices that have switches.
        switch: Option<u32>,
        /// The outlet number.
        outlet: u32,
    },
    /// A name, looked up in the device's names table.
    Name(String),
}

impl Plug {
    /// fence_apc_snmp's rule: `N` is outlet N; `S:N` with both numeric is
    /// outlet N on switch S; anything else is an outlet name.
    pub fn parse(text: &str) -> Plug {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if digits(text) {
            if let Ok(outlet) = text.parse() {
                return Plug::Number {
                    switch: None,
                    outlet,
                };
            }
        }
        if let Some((s, n)) = text.split_once(':') {
            if digits(s) && digits(n) {
                if let (Ok(switch), Ok(outlet)) = (s.parse(), n.parse()) {
                    return Plug::Number {
                        switch: Some(switch),
                        outlet,
                    };
                }
            }
        }
        Plug::Name(text.to_string())
    }
}

impl fmt::Display for Plug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Plug::Number {
                switch: Some(s),
                outlet,
            } => write!(f, "{s}:{outlet}"),
            Plug::Number { outlet, .. } => write!(f, "{outlet}"),
            Plug::Name(n) => f.write_str(n),
        }
    }
}

/// One of the node's outlets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutletSpec {
    /// Index into [`SnmpConfig::pdus`].
    pub pdu: usize,
    /// The outlet on that PDU.
    pub plug: Plug,
}

/// The node's outlets and the PDUs they are on.
#[derive(Clone, Debug)]
pub struct SnmpConfig {
    /// The PDUs (one or more).
    pub pdus: Vec<PduEndpoint>,
    /// The outlets (one or more), each on one of `pdus`.
    pub outlets: Vec<OutletSpec>,
    /// The most watts the node's outlets may still carry, all together,
    /// once they read off (where the PDU meters outlets): more is not off
    /// (a welded relay). `--max-off-watts` / inventory `max_off_watts`
    /// natively, [`crate::engine::power::DEFAULT_MAX_OFF_WATTS`] otherwise.
    pub max_off_watts: f64,
}

/// Why a PDU configuration or endpoint cannot be used. The texts are what
/// users read (after the front's context).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// An outlet whose PDU index is out of range (its plug).
    #[error("outlet {0} refers to no PDU")]
    NoSuchPdu(String),
    /// The same outlet twice (its label).
    #[error("outlet {0} is listed twice")]
    Twice(String),
    /// An outlet name that is empty.
    #[error("an outlet name is empty")]
    EmptyOutletName,
    /// A PDU without an address.
    #[error("the PDU address is empty")]
    EmptyAddress,
    /// SNMPv3 without a user name.
    #[error("SNMPv3 needs a user name (--username)")]
    NoUser,
    /// A v3 level with authentication, and no authentication password.
    #[error("SNMPv3 security level {0} needs an authentication password")]
    NoAuthPassword(&'static str),
    /// authPriv without a privacy password.
    #[error("SNMPv3 security level authPriv needs a privacy password")]
    NoPrivPassword,
    /// Not `snmp://…`.
    #[error("'{0}' is not an snmp:// endpoint")]
    NotEndpoint(String),
    /// An endpoint with a user, password or path.
    #[error(
        "'{0}': an SNMP endpoint is snmp://host[:port] (credentials go in credential references)"
    )]
    EndpointExtra(String),
    /// `[` without `]`.
    #[error("'{0}': unclosed '['")]
    Unclosed(String),
    /// A port that is not 1–65535.
    #[error("'{0}': the port is not between 1 and 65535")]
    Port(String),
    /// No host.
    #[error("'{0}' names no host")]
    NoHost(String),
}

impl SnmpConfig {
    /// Offline checks: every outlet on a known PDU, no outlet twice, v3
    /// settings complete. (No outlet at all is allowed for listing; an
    /// action on outlets fails then.)
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_structure()?;
        self.validate_secrets()
    }

    /// The checks that need no secret: outlets, PDUs, v3 user names.
    pub fn validate_structure(&self) -> Result<(), ConfigError> {
        for (i, o) in self.outlets.iter().enumerate() {
            if o.pdu >= self.pdus.len() {
                return Err(ConfigError::NoSuchPdu(o.plug.to_string()));
            }
            if self.outlets[..i].contains(o) {
                return Err(ConfigError::Twice(self.outlet_label(i)));
            }
            if let Plug::Name(n) = &o.plug {
                if n.is_empty() {
                    return Err(ConfigError::EmptyOutletName);
                }
            }
        }
        for p in &self.pdus {
            if p.host.is_empty() {
                return Err(ConfigError::EmptyAddress);
            }
            if let Security::Usm(u) = &p.security {
                if u.name.is_empty() {
                    return Err(ConfigError::NoUser);
                }
            }
        }
        Ok(())
    }

    /// The checks of the secrets themselves (once they are read).
    pub fn validate_secrets(&self) -> Result<(), ConfigError> {
        for p in &self.pdus {
            if let Security::Usm(u) = &p.security {
                if u.level != SecLevel::NoAuthNoPriv
                    && u.auth.as_ref().is_none_or(|(_, pw)| pw.is_empty())
                {
                    return Err(ConfigError::NoAuthPassword(u.level.as_str()));
                }
                if u.level == SecLevel::AuthPriv
                    && u.privacy.as_ref().is_none_or(|(_, pw)| pw.is_empty())
                {
                    return Err(ConfigError::NoPrivPassword);
                }
            }
        }
        Ok(())
    }

    /// What one plug is, in messages: `port` when every device is a switch
    /// (IF-MIB: fabric fencing), else `outlet`.
    pub fn unit(&self) -> &'static str {
        match self.is_fabric() {
            true => "port",
            false => "outlet",
        }
    }

    /// What one device is, in messages: `switch` or `PDU`.
    pub fn device_word(&self) -> &'static str {
        match self.is_fabric() {
            true => "switch",
            false => "PDU",
        }
    }

    /// Every device is a switch whose ports are set down (IF-MIB): the
    /// node is isolated, not powered off.
    pub fn is_fabric(&self) -> bool {
        !self.pdus.is_empty()
            && self
                .pdus
                .iter()
                .all(|p| p.profile.effect == super::profile::Effect::Isolated)
    }

    /// `A:7` for outlet 7 on PDU A (just `7` with a single PDU).
    pub fn outlet_label(&self, i: usize) -> String {
        let o = &self.outlets[i];
        if self.pdus.len() > 1 {
            format!("{}:{}", self.pdus[o.pdu].label, o.plug)
        } else {
            o.plug.to_string()
        }
    }

    /// Notes about legacy protocols in use (MD5, DES, v1), for warnings.
    pub fn legacy_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.pdus {
            if let Security::Usm(u) = &p.security {
                if let Some((a, _)) = &u.auth {
                    if a.is_legacy() && u.level != SecLevel::NoAuthNoPriv {
                        out.push(format!(
                            "PDU {}: SNMPv3 authentication with {} is weak; prefer SHA-256",
                            p.label,
                            a.as_str()
                        ));
                    }
                }
                if let Some((x, _)) = &u.privacy {
                    if x.is_legacy() && u.level == SecLevel::AuthPriv {
                        out.push(format!(
                            "PDU {}: SNMPv3 privacy with DES is weak; prefer AES",
                            p.label
                        ));
                    }
                }
            }
        }
        out
    }

    /// A one-line description for `-v` (never a secret).
    pub fn describe(&self) -> String {
        let pdus: Vec<String> = self
            .pdus
            .iter()
            .map(|p| {
                format!(
                    "{} {} profile {}",
                    p.url(),
                    p.security.describe(),
                    p.profile.name
                )
            })
            .collect();
        let outlets: Vec<String> = (0..self.outlets.len())
            .map(|i| self.outlet_label(i))
            .collect();
        format!(
            "SNMP PDU {}; outlets {}",
            pdus.join(", "),
            outlets.join(", ")
        )
    }
}

/// Parses `snmp://host[:port]` (IPv6 in brackets).
pub fn parse_endpoint(url: &str) -> Result<(String, u16), ConfigError> {
    let rest = url
        .strip_prefix("snmp://")
        .ok_or_else(|| ConfigError::NotEndpoint(url.to_string()))?;
    let rest = rest.trim_end_matches('/');
    if rest.contains('@') || rest.contains('/') {
        return Err(ConfigError::EndpointExtra(url.to_string()));
    }
    let (host, port) = if let Some(r) = rest.strip_prefix('[') {
        let (h, after) = r
            .split_once(']')
            .ok_or_else(|| ConfigError::Unclosed(url.to_string()))?;
        (h.to_string(), after.strip_prefix(':'))
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (rest.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| ConfigError::Port(url.to_string()))?,
        None => DEFAULT_PORT,
    };
    if host.is_empty() {
        return Err(ConfigError::NoHost(url.to_string()));
    }
    Ok((host, port))
}

/// The v1/v2c version for fence-agents' `--snmp-version` (`1`, `2c`, `3`).
pub fn parse_version(s: &str) -> Option<Version> {
    match s.to_ascii_lowercase().as_str() {
        "1" => Some(Version::V1),
        "2c" | "2" => Some(Version::V2c),
        "3" => Some(Version::V3),
        _ => None,
    }
}

/// The endpoint URL form of SNMP PDUs (see [`crate::engine::driver::UrlForm`]):
/// an inventory `endpoint` with outlets, not a command-line target.
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[
    crate::engine::driver::UrlForm {
        scheme: "snmp",
        form: "snmp://HOST[:PORT]",
        meaning: "a switched PDU, with its outlets; port 161",
        target: false,
        example: "snmp://[fd00::5]:1161",
    },
    crate::engine::driver::UrlForm {
        scheme: "ifmib",
        form: "ifmib://SWITCH[:PORT]/PORT[,PORT...]",
        meaning: "a node's switch ports (IF-MIB, SNMPv2c): off isolates the node; port 161",
        target: true,
        example: "ifmib://sw1:1161/Gi1%2F0%2F3,7",
    },
];

/// An inventory method's fields: outlets, an endpoint for the outlets on
/// its own PDU, and every `[pdu.NAME]` it refers to: secrets by reference,
/// an address.
pub fn check_fields(f: &dyn crate::platform::build::Fields) -> Result<(), String> {
    let outlets = f.list("outlets");
    if outlets.is_empty() {
        return Err(
            "an snmp method needs outlets = [\"7\"] (or [\"A:7\", \"B:7\"] with [pdu.A] and [pdu.B])"
                .into(),
        );
    }
    let pdus = f.tables("pdus");
    let on_own = outlets.iter().any(|o| {
        !o.split_once(':')
            .is_some_and(|(p, _)| pdus.iter().any(|(n, _)| *n == p))
    });
    if on_own && !f.has("endpoint") {
        return Err(
            "an snmp method needs endpoint = \"snmp://HOST[:PORT]\" for outlets that name no \
             [pdu.NAME]"
                .into(),
        );
    }
    if on_own {
        check_pdu(f)?;
    }
    for (name, p) in &pdus {
        check_pdu(*p).map_err(|problem| format!("[pdu.{name}]: {problem}"))?;
    }
    Ok(())
}

/// One PDU's fields: secrets by reference, and an address.
fn check_pdu(p: &dyn crate::platform::build::Fields) -> Result<(), String> {
    if p.has("community") {
        return Err(
            "plain communities are not accepted: use community_file, community_env or \
             community_script"
                .into(),
        );
    }
    if p.has("priv_password") {
        return Err(
            "plain passwords are not accepted: use priv_password_file, priv_password_env or \
             priv_password_script"
                .into(),
        );
    }
    match p.get("endpoint") {
        Some(e) => parse_endpoint(e).map(|_| ()).map_err(|e| e.to_string()),
        None => Err("a PDU needs endpoint = \"snmp://HOST[:PORT]\"".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugs_follow_fence_apc_snmp() {
        assert_eq!(
            Plug::parse("7"),
            Plug::Number {
                switch: None,
                outlet: 7
            }
        );
        assert_eq!(
            Plug::parse("2:7"),
            Plug::Number {
                switch: Some(2),
                outlet: 7
            }
        );
        assert_eq!(Plug::parse("web01"), Plug::Name("web01".into()));
        assert_eq!(Plug::parse("A:7"), Plug::Name("A:7".into()));
        assert_eq!(Plug::parse("99999999999"), Plug::Name("99999999999".into()));
    }

    #[test]
    fn endpoints() {
        assert_eq!(parse_endpoint("snmp://pdu1"), Ok(("pdu1".into(), 161)));
        assert_eq!(
            parse_endpoint("snmp://127.0.0.1:1161"),
            Ok(("127.0.0.1".into(), 1161))
        );
        assert_eq!(
            parse_endpoint("snmp://[::1]:1161/"),
            Ok(("::1".into(), 1161))
        );
        assert!(parse_endpoint("snmp://public@pdu").is_err());
        assert!(parse_endpoint("ipmi://pdu").is_err());
        assert!(parse_endpoint("snmp://pdu:0").is_err());
    }

    #[test]
    fn endpoint_messages_read_as_they_always_have() {
        let text = |u: &str| parse_endpoint(u).unwrap_err().to_string();
        assert_eq!(text("udp://p"), "'udp://p' is not an snmp:// endpoint");
        assert_eq!(
            text("snmp://c@p"),
            "'snmp://c@p': an SNMP endpoint is snmp://host[:port] (credentials go in credential \
             references)"
        );
        assert_eq!(text("snmp://[::1"), "'snmp://[::1': unclosed '['");
        assert_eq!(
            text("snmp://p:0"),
            "'snmp://p:0': the port is not between 1 and 65535"
        );
        assert_eq!(text("snmp://:161"), "'snmp://:161' names no host");
        assert_eq!(
            ConfigError::NoAuthPassword("authNoPriv").to_string(),
            "SNMPv3 security level authNoPriv needs an authentication password"
        );
    }
}

#[cfg(test)]
mod url_form_tests {
    #[test]
    fn every_url_form_parses() {
        for f in super::URL_FORMS {
            assert!(f.form.starts_with(&format!("{}://", f.scheme)), "{f:?}");
            if f.scheme == "ifmib" {
                // A target, built by the platform (its tests parse it).
                continue;
            }
            super::parse_endpoint(f.example)
                .map(|_| ())
                .unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }
}
