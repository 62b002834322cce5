//! The fence_redfish family's own part: options → [`RedfishConfig`].
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]);
//! this module only knows which option feeds which Redfish setting, with
//! upstream's quirks kept where configurations depend on them: `--ip
//! host:port` (exactly one `:`) carries the port, `--ssl-insecure` is on by
//! presence (so stdin `ssl_insecure=0` turns it on, as upstream), and the
//! plug is never a system selector (it is the address, with `--port-as-ip`;
//! Pacemaker's `plug=<node>` on stdin is ignored, as upstream ignores it).
//!
//! fencekit-only extensions: `--ca-cert PATH` and `--ssl-fingerprint
//! SHA256:…`, which give a way to trust a self-signed controller without
//! turning verification off.

use crate::fingerprint::{format_hex as format_fingerprint, parse_sha256 as parse_fingerprint};
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{parse_int, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::platform::Driver;
use crate::redfish::config::{RedfishConfig, TlsTrust};
use crate::secret::Secret;
use std::path::PathBuf;
use std::time::Duration;

/// Per-request bound when `power_timeout` is 0 (upstream has none at all;
/// fencekit bounds every request). `disable_timeout` keeps `power_timeout`
/// as given for this bound: it lifts only the wait for the power state.
pub const UNLIMITED_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Builds the Redfish configuration from validated option values (the
/// password script, if any, has already replaced `password`). The error is
/// a message that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<RedfishConfig, String> {
    let mut host = values.get(Key::Ip).unwrap_or_default().to_string();
    let mut port_text = values.get(Key::Ipport).unwrap_or("443").to_string();
    // Upstream's backwards compatibility: `host:port` with exactly one colon
    // (so an IPv6 address is left alone).
    if host.matches(':').count() == 1 {
        if let Some((h, p)) = host.split_once(':') {
            port_text = p.to_string();
            host = h.to_string();
        }
    }
    if host.is_empty() {
        return Err("the fence device address (--ip) is empty".to_string());
    }
    let port = parse_int(&port_text)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("the port {port_text} (--ipport) is not between 1 and 65535"))?;
    let mut cfg = RedfishConfig::new(
        &host,
        port,
        values.get(Key::Username).unwrap_or_default(),
        Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
    );
    if let Some(root) = values.get(Key::RedfishUri) {
        cfg.redfish_uri = root.to_string();
    }
    cfg.systems_uri = values
        .get(Key::SystemsUri)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    cfg.tls = trust(values, agent)?;
    // fencekit's --expect-uuid also chooses among several systems (the
    // engine then checks the chosen one before any power command).
    cfg.expect_uuid = values
        .get(Key::ExpectUuid)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    cfg.request_timeout = match values.int(Key::PowerTimeout) {
        Some(n) if n > 0 => Duration::from_secs(n.min(86_400) as u64),
        _ => UNLIMITED_REQUEST_TIMEOUT,
    };
    // The front's text is the library's, after "Failed: ".
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// The certificate trust: a pinned fingerprint, else a CA file, else
/// insecure (by presence, as upstream), else the system store.
fn trust(values: &Values, agent: &Agent) -> Result<TlsTrust, String> {
    if let Some(fp) = values.get(Key::SslFingerprint).filter(|s| !s.is_empty()) {
        return Ok(TlsTrust::Fingerprint(
            parse_fingerprint(fp).map_err(|e| e.to_string())?,
        ));
    }
    if let Some(path) = values.get(Key::CaCert).filter(|s| !s.is_empty()) {
        return Ok(TlsTrust::Verify {
            ca_cert: Some(PathBuf::from(path)),
        });
    }
    if values.flag_of(agent, Key::SslInsecure) {
        return Ok(TlsTrust::Insecure);
    }
    Ok(TlsTrust::Verify { ca_cert: None })
}

/// A one-line description of the configuration for `-v` (never the password).
pub fn describe(cfg: &RedfishConfig) -> String {
    let tls = match &cfg.tls {
        TlsTrust::Verify { ca_cert: None } => {
            "certificate verified against the system store".into()
        }
        TlsTrust::Verify { ca_cert: Some(p) } => {
            format!("certificate verified against {}", p.display())
        }
        TlsTrust::Insecure => "certificate NOT verified (--ssl-insecure)".to_string(),
        TlsTrust::Fingerprint(fp) => {
            format!("certificate pinned to {}", format_fingerprint(fp))
        }
    };
    let system = match &cfg.systems_uri {
        Some(s) => format!("system {s}"),
        None => format!("system discovered from {}", cfg.redfish_uri),
    };
    format!(
        "Redfish {} as '{}', password {}, {system}, {tls}, {} s per request",
        cfg.base_url(),
        cfg.username,
        if cfg.password.is_empty() {
            "empty"
        } else {
            "[set]"
        },
        cfg.request_timeout.as_secs()
    )
}

/// The family's configuration from validated option values, for the
/// front (declared in [`FAMILY`]).
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

impl Device for RedfishConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        crate::redfish::driver::RedfishDriver::new(*self)
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How the platform serves the fence_redfish family (`Platform::agent_family`).
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    ..AgentFamily::new(device)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<RedfishConfig, String> {
        let (v, a) = validated("fence_redfish", pairs);
        config(&v, &a)
    }

    const BASE: &[(&str, &str)] = &[("ip", "10.0.0.5"), ("username", "u"), ("password", "p")];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        BASE.iter().chain(extra).copied().collect()
    }

    #[test]
    fn defaults_are_https_443_verified_with_discovery() {
        let c = cfg_of(BASE).unwrap();
        assert_eq!(c.base_url(), "https://10.0.0.5:443");
        assert_eq!(c.redfish_uri, "/redfish/v1");
        assert_eq!(c.systems_uri, None);
        assert_eq!(c.plug, None);
        assert_eq!(c.tls, TlsTrust::Verify { ca_cert: None });
        assert_eq!(c.request_timeout, Duration::from_secs(20));
        assert_eq!(c.password.expose(), b"p");
    }

    #[test]
    fn host_colon_port_is_split_only_with_one_colon() {
        let c = cfg_of(&[
            ("ip", "127.0.0.1:8443"),
            ("username", "u"),
            ("password", "p"),
        ])
        .unwrap();
        assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", 8443));
        let c = cfg_of(&[("ip", "fe80::1"), ("username", "u"), ("password", "p")]).unwrap();
        assert_eq!((c.host.as_str(), c.port), ("fe80::1", 443));
        let e = cfg_of(&[("ip", "h:x"), ("username", "u"), ("password", "p")]).unwrap_err();
        assert!(e.contains("port x"), "{e}");
    }

    #[test]
    fn ssl_insecure_works_by_presence_and_extensions_win() {
        let c = cfg_of(&with(&[("ssl_insecure", "0")])).unwrap();
        assert_eq!(
            c.tls,
            TlsTrust::Insecure,
            "upstream: ssl_insecure=0 is insecure too"
        );
        let c = cfg_of(&with(&[("ssl_insecure", ""), ("ca_cert", "/x.pem")])).unwrap();
        assert_eq!(
            c.tls,
            TlsTrust::Verify {
                ca_cert: Some(PathBuf::from("/x.pem"))
            }
        );
        let fp = "SHA256:".to_string() + &["AB"; 32].join(":");
        let fp: &'static str = Box::leak(fp.into_boxed_str());
        let c = cfg_of(&with(&[("ssl_insecure", ""), ("ssl_fingerprint", fp)])).unwrap();
        assert_eq!(c.tls, TlsTrust::Fingerprint([0xab; 32]));
        assert!(cfg_of(&with(&[("ssl_fingerprint", "nope")])).is_err());
    }

    #[test]
    fn uris_and_timeouts_map() {
        let c = cfg_of(&with(&[
            ("systems_uri", "/redfish/v1/Systems/1"),
            ("redfish_uri", "/rf"),
            ("power_timeout", "3"),
        ]))
        .unwrap();
        assert_eq!(c.systems_uri.as_deref(), Some("/redfish/v1/Systems/1"));
        assert_eq!(c.redfish_uri, "/rf");
        assert_eq!(c.request_timeout, Duration::from_secs(3));
        let c = cfg_of(&with(&[("power_timeout", "0")])).unwrap();
        assert_eq!(c.request_timeout, UNLIMITED_REQUEST_TIMEOUT);
        let e = cfg_of(&with(&[("systems_uri", "Systems/1")])).unwrap_err();
        assert!(e.contains("absolute path"), "{e}");
    }

    #[test]
    fn the_plug_never_selects_a_system() {
        let c = cfg_of(&with(&[("plug", "node1")])).unwrap();
        assert_eq!(c.plug, None);
    }

    #[test]
    fn the_description_never_shows_the_password() {
        let c = cfg_of(&[("ip", "h"), ("username", "u"), ("password", "hunter2")]).unwrap();
        let d = describe(&c);
        assert!(
            d.contains("password [set]") && !d.contains("hunter2"),
            "{d}"
        );
    }
}
