//! The SNMP PDU family's own part (fence_apc_snmp, fence_tripplite_snmp,
//! fence_eaton_snmp, fence_ibmblade, fence_intelmodular, fence_ipdu):
//! options → [`SnmpConfig`].
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]).
//! Kept from upstream (fence-agents 4.12.1 with net-snmp's tools): each
//! agent's default version and community (its definition's defaults; one
//! without a version speaks v2c when given a community, else net-snmp's
//! v3); for v3, `--username`, `--password`
//! (authentication), `--snmp-priv-passwd`, and net-snmp's defaults where an
//! option is missing (MD5, DES, noAuthNoPriv), except that both passwords
//! without `--snmp-sec-level` mean authPriv (upstream's rule); `--ip
//! host:port` is not split (upstream passes it to net-snmp as given, which
//! reads it as host:port, and so do we); a plug `S:N` with both numeric is
//! outlet N on switch S; `--plug-separator` gives several outlets.
//!
//! fencekit-only: `--pdu-profile` (a built-in profile or a profile file).

use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{parse_int, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::platform::credential::CredentialRef;
use crate::platform::Driver;
use crate::secret::Secret;
use crate::snmp::build::{self, PduDefaults, PduOptions, SnmpOptions};
use crate::snmp::client::Timing;
use crate::snmp::config::SnmpConfig;
use crate::snmp::message::Version;
use crate::snmp::secrets::inline_snmp_secrets;
use crate::snmp::usm::{AuthProtocol, PrivProtocol};
use std::time::Duration;

/// Upstream's defaults (fence-agents 4.12.1 with net-snmp's tools): v1;
/// for v3 MD5, DES, and noAuthNoPriv unless both passwords are given.
/// The profile is the family's (`apc`, `eaton`).
const UPSTREAM: PduDefaults = PduDefaults {
    version: Version::V1,
    profile: "apc",
    level: None,
    auth_protocol: AuthProtocol::Md5,
    priv_protocol: PrivProtocol::Des,
};

/// Builds the SNMP configuration from validated option values (the
/// password scripts, if any, have already replaced the passwords) through
/// the one PDU builder ([`build::snmp_parts`]). The error is a message that
/// reads after "Failed: ".
pub fn config(values: &Values, _agent: &Agent) -> Result<SnmpConfig, String> {
    let mut host = values.get(Key::Ip).unwrap_or_default().to_string();
    let mut port_text = values.get(Key::Ipport).unwrap_or("161").to_string();
    // net-snmp reads `host:port` (one colon) as a port; keep IPv6 as is.
    if host.matches(':').count() == 1 {
        if let Some((h, p)) = host.split_once(':') {
            port_text = p.to_string();
            host = h.to_string();
        }
    }
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    if host.is_empty() {
        return Err("the PDU address (--ip) is empty".into());
    }
    let port = parse_int(&port_text)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("the port {port_text} (--ipport) is not between 1 and 65535"))?;
    let given = |k: Key| match values.get(k).filter(|p| !p.is_empty()) {
        Some(p) => CredentialRef::Inline(Secret::from_str_value(p)),
        None => CredentialRef::None,
    };
    // Each agent names its profile as the default of --pdu-profile.
    let profile = values
        .get(Key::PduProfile)
        .filter(|s| !s.is_empty())
        .unwrap_or(UPSTREAM.profile);
    let community = values.get(Key::Community).filter(|c| !c.is_empty());
    // Agents without a default version leave it to net-snmp, as upstream
    // does: a community alone means v2c (fence-agents' rule), otherwise
    // net-snmp's own default, v3.
    let version = values
        .get(Key::SnmpVersion)
        .map(str::to_string)
        .or_else(|| Some(if community.is_some() { "2c" } else { "3" }.to_string()));
    let v1_or_v2c = version
        .as_deref()
        .and_then(crate::snmp::config::parse_version)
        .is_some_and(|v| v != Version::V3);
    if v1_or_v2c && community.is_none() {
        // net-snmp refuses to send without one ("No community name specified").
        return Err("SNMP v1 and v2c need a community (--community)".into());
    }
    let pdu = PduOptions {
        endpoint: None,
        ip: Some(host),
        ipport: Some(port),
        profile: Some(profile.to_string()),
        version,
        security_level: values.get(Key::SnmpSecLevel).map(str::to_string),
        auth_protocol: values.get(Key::SnmpAuthProt).map(str::to_string),
        priv_protocol: values.get(Key::SnmpPrivProt).map(str::to_string),
        username: values.get(Key::Username).map(str::to_string),
        community: CredentialRef::Inline(Secret::from_str_value(community.unwrap_or_default())),
        auth: given(Key::Password),
        privacy: given(Key::SnmpPrivPasswd),
        timing: Some(timing(values)),
    };
    let sep = values
        .get(Key::PlugSeparator)
        .filter(|s| !s.is_empty())
        .unwrap_or(",");
    let plug_text = values.get(Key::Plug).unwrap_or_default();
    let outlets = if plug_text.is_empty() {
        Vec::new()
    } else {
        plug_text.split(sep).map(str::to_string).collect()
    };
    let (cfg, credentials) = build::snmp_parts(&SnmpOptions {
        own: Some(pdu),
        named: Vec::new(),
        outlets,
        defaults: UPSTREAM,
    })
    .map_err(|e| e.to_string())?;
    inline_snmp_secrets(&cfg, &credentials).map_err(|e| e.to_string())
}

/// Per-request timing: net-snmp's 1 s per try and at most its 6 tries, as
/// many as fit in upstream's per-command bound (`login_timeout` +
/// `shell_timeout`, 8 s by default).
fn timing(values: &Values) -> Timing {
    let secs = |k: Key, d: i64| values.int(k).unwrap_or(d).max(0);
    let bound = secs(Key::LoginTimeout, 5) + secs(Key::ShellTimeout, 3);
    let tries = if bound == 0 {
        6
    } else {
        bound.clamp(1, 6) as u32
    };
    Timing {
        timeout: Duration::from_secs(1),
        tries,
    }
}

/// A one-line description for `-v` (never a secret).
pub fn describe(cfg: &SnmpConfig) -> String {
    cfg.describe()
}

/// The family's configuration from validated option values, for the
/// front (declared in [`FAMILY`]).
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

impl Device for SnmpConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        self.pdus.first().map(|p| p.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn warnings(&self) -> Vec<String> {
        self.legacy_warnings()
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        crate::snmp::driver::SnmpDriver::new(*self)
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How the platform serves the fence_snmp family (`Platform::agent_family`).
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    ..AgentFamily::new(device)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::defs;
    use crate::snmp::config::Plug;
    use crate::snmp::session::{SecLevel, Security};

    fn cfg(pairs: &[(&str, &str)]) -> Result<SnmpConfig, String> {
        let agent = defs::agent("fence_apc_snmp").expect("defined");
        let mut v = Values::new();
        for (k, val) in pairs {
            v.set_named(k, *val);
        }
        v.apply_defaults(&agent);
        config(&v, &agent)
    }

    #[test]
    fn defaults_follow_upstream_and_net_snmp() {
        let c = cfg(&[("ip", "pdu1"), ("plug", "1:7,web01")]).unwrap();
        let p = &c.pdus[0];
        assert_eq!((p.host.as_str(), p.port), ("pdu1", 161));
        assert!(
            matches!(&p.security, Security::Community { version: Version::V1, community } if community.expose() == b"private")
        );
        assert_eq!(
            c.outlets[0].plug,
            Plug::Number {
                switch: Some(1),
                outlet: 7
            }
        );
        assert_eq!(c.outlets[1].plug, Plug::Name("web01".into()));
        assert_eq!(p.profile.name, "apc");
        let c = cfg(&[
            ("ip", "pdu1:1161"),
            ("plug", "3"),
            ("snmp_version", "3"),
            ("username", "u"),
            ("password", "a12345678"),
            ("snmp_priv_passwd", "p12345678"),
        ])
        .unwrap();
        assert_eq!(c.pdus[0].port, 1161);
        let Security::Usm(u) = &c.pdus[0].security else {
            panic!("v3")
        };
        assert_eq!(u.level, SecLevel::AuthPriv);
        assert_eq!(u.auth.as_ref().map(|a| a.0), Some(AuthProtocol::Md5));
        assert_eq!(u.privacy.as_ref().map(|a| a.0), Some(PrivProtocol::Des));
        assert!(cfg(&[("ip", "pdu1"), ("snmp_version", "3")]).is_err());
        let eaton = defs::agent("fence_eaton_snmp").expect("defined");
        let mut v = Values::new();
        v.set(Key::Ip, "e");
        v.set(Key::Plug, "1");
        v.apply_defaults(&eaton);
        assert_eq!(config(&v, &eaton).unwrap().pdus[0].profile.name, "eaton");
    }

    /// Each agent's defaults as upstream's: fence_ibmblade v1 without a
    /// community (net-snmp then refuses), fence_intelmodular no version
    /// (a community alone: v2c; else v3), fence_ipdu v3 and `private`.
    #[test]
    fn each_agent_keeps_its_own_defaults() {
        let with = |name: &str, pairs: &[(&str, &str)]| {
            let agent = defs::agent(name).expect("defined");
            let mut v = Values::new();
            for (k, val) in pairs {
                v.set_named(k, *val);
            }
            v.apply_defaults(&agent);
            config(&v, &agent)
        };
        let version = |c: &SnmpConfig| match &c.pdus[0].security {
            Security::Community { version, .. } => *version,
            Security::Usm(_) => Version::V3,
        };
        let e = with("fence_ibmblade", &[("ip", "b"), ("plug", "2")]).unwrap_err();
        assert!(e.contains("community"), "{e}");
        let c = with(
            "fence_ibmblade",
            &[("ip", "b"), ("plug", "2"), ("community", "x")],
        )
        .unwrap();
        assert_eq!(
            (version(&c), c.pdus[0].profile.name.as_str()),
            (Version::V1, "ibmblade")
        );
        let c = with(
            "fence_intelmodular",
            &[("ip", "b"), ("plug", "2"), ("community", "x")],
        )
        .unwrap();
        assert_eq!(version(&c), Version::V2c);
        assert_eq!(c.pdus[0].profile.name, "intelmodular");
        assert!(with("fence_intelmodular", &[("ip", "b"), ("plug", "2")]).is_err());
        let c = with(
            "fence_intelmodular",
            &[("ip", "b"), ("plug", "2"), ("username", "u")],
        )
        .unwrap();
        assert_eq!(version(&c), Version::V3);
        let c = with(
            "fence_ipdu",
            &[("ip", "b"), ("plug", "2"), ("username", "u")],
        )
        .unwrap();
        assert_eq!(
            (version(&c), c.pdus[0].profile.name.as_str()),
            (Version::V3, "ipdu")
        );
        let c = with(
            "fence_ipdu",
            &[("ip", "b"), ("plug", "2"), ("snmp_version", "2c")],
        )
        .unwrap();
        assert!(
            matches!(&c.pdus[0].security, Security::Community { community, .. } if community.expose() == b"private")
        );
    }
}
