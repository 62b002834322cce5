//! The fence_vmware_rest family's own part: options → [`RestDevice`]
//! (vSphere's Automation API, [`crate::vsphere::rest`]).
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]);
//! this module only knows which option feeds which setting, with upstream's
//! rules kept where configurations depend on them:
//!
//! * without `--ssl`, `--ssl-secure` or `--ssl-insecure` upstream speaks plain
//!   HTTP on port 80, and so does fencekit (warned: the password travels in
//!   clear); with one of them HTTPS, on 443 unless `--ipport` says otherwise
//!   (the metadata's default 80 is upstream's plain-HTTP port);
//! * `--api-path` (default `/rest`) is the path prefix; one ending in `/api`
//!   speaks the newer API (upstream speaks only the older one);
//! * `--filter` is appended to the list request as given.
//!
//! fencekit-only extensions: `--ca-cert`, `--ssl-fingerprint` (both imply
//! HTTPS) and `--expect-uuid` (the VM's BIOS UUID, checked by the engine
//! before any change).

use crate::fingerprint::format_hex as format_fingerprint;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{parse_int, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::secret::Secret;
use crate::tls::TlsTrust;
use crate::vsphere::rest::config::{RestConfig, HTTPS_PORT};
use std::time::Duration;

/// Per-request bound when `power_timeout` is 0 (upstream's pycurl waits
/// `shell_timeout`; fencekit bounds every request).
pub const UNLIMITED_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The plain-HTTP port upstream defaults to (the metadata's default).
const HTTP_PORT: u16 = 80;

/// One vCenter as the agent reaches it: the REST settings and the TLS
/// trust (`None`: plain HTTP).
#[derive(Debug)]
pub struct RestDevice {
    /// What the driver is given.
    pub rest: RestConfig,
    /// How vCenter's certificate is trusted; `None` for plain HTTP.
    pub trust: Option<TlsTrust>,
}

/// Builds the device from validated option values (the password script,
/// if any, has already replaced `password`). The error reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<RestDevice, String> {
    let trust = values.tls_trust(agent)?;
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    let port_text = values.get(Key::Ipport).unwrap_or("80").to_string();
    let mut port = parse_int(&port_text)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("the port {port_text} (--ipport) is not between 1 and 65535"))?;
    if trust.is_some() && port == HTTP_PORT {
        // Upstream's default becomes 443 once TLS is asked for.
        port = HTTPS_PORT;
    }
    let mut rest = RestConfig::new(
        &host,
        port,
        values.get(Key::Username).unwrap_or_default(),
        Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
    );
    rest.https = trust.is_some();
    let path = values.get(Key::ApiPath).unwrap_or("/rest").trim();
    rest.api_path = match path.trim_end_matches('/') {
        "" => "/rest".to_string(),
        p if p.starts_with('/') => p.to_string(),
        p => format!("/{p}"),
    };
    rest.plug = values.get(Key::Plug).unwrap_or_default().trim().to_string();
    rest.filter = values
        .get(Key::Filter)
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_string);
    rest.monitor = values.get(Key::Action) == Some("monitor");
    rest.request_timeout = match values.int(Key::PowerTimeout) {
        Some(n) if n > 0 => Duration::from_secs(n.min(60) as u64),
        _ => UNLIMITED_REQUEST_TIMEOUT,
    };
    rest.validate()?;
    Ok(RestDevice { rest, trust })
}

/// A one-line description of the configuration for `-v` (never the password).
pub fn describe(d: &RestDevice) -> String {
    let c = &d.rest;
    let tls = match &d.trust {
        None => "plain HTTP (no --ssl): the password travels in clear".to_string(),
        Some(TlsTrust::Verify { ca_cert: None }) => {
            "certificate verified against the system store".into()
        }
        Some(TlsTrust::Verify { ca_cert: Some(p) }) => {
            format!("certificate verified against {}", p.display())
        }
        Some(TlsTrust::Insecure) => "certificate NOT verified (--ssl-insecure)".to_string(),
        Some(TlsTrust::Fingerprint(fp)) => {
            format!("certificate pinned to {}", format_fingerprint(fp))
        }
    };
    format!(
        "vSphere Automation API {} ({} generation) as '{}', password {}, VM {}, {tls}, {} s per request",
        c.base_url(),
        c.generation().as_str(),
        c.username,
        if c.password.is_empty() { "empty" } else { "[set]" },
        if c.plug.is_empty() { "(none: listing)" } else { &c.plug },
        c.request_timeout.as_secs()
    )
}

/// The family's configuration from validated option values, for the
/// front (declared in [`FAMILY`]).
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// How the vSphere platform serves fence_vmware_rest.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    ..AgentFamily::new(device)
};

impl Device for RestDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.rest.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn warnings(&self) -> Vec<String> {
        match &self.trust {
            None => vec![
                "no --ssl: speaking plain HTTP to vCenter, as upstream does; the password \
                 travels in clear (give --ssl, or --ssl-insecure)"
                    .into(),
            ],
            Some(TlsTrust::Insecure) => {
                vec!["--ssl-insecure: vCenter's certificate is not verified".into()]
            }
            Some(_) => Vec::new(),
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let tls = match &self.trust {
            Some(t) => crate::tls::client_config(t).map(|(c, _, _)| c),
            None => crate::tls::refuse_all(),
        }
        .map_err(|e| e.to_string())?;
        crate::vsphere::rest::driver::RestDriver::new(self.rest, tls)
            .map(|d| Box::new(d) as Box<dyn crate::platform::Driver>)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<RestDevice, String> {
        let (v, a) = validated("fence_vmware_rest", pairs);
        config(&v, &a)
    }

    const BASE: &[(&str, &str)] = &[
        ("ip", "vc.example"),
        ("username", "fence@vsphere.local"),
        ("password", "hunter22"),
        ("plug", "node1"),
    ];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        BASE.iter().chain(extra).copied().collect()
    }

    #[test]
    fn upstream_defaults_plain_http_on_80_and_rest() {
        let d = cfg_of(BASE).unwrap();
        assert_eq!(d.rest.base_url(), "http://vc.example:80/rest");
        assert!(d.trust.is_none());
        assert_eq!(d.rest.request_timeout, Duration::from_secs(20));
        assert!(!describe(&d).contains("hunter22"));
        assert!(d.warnings()[0].contains("clear"));
    }

    #[test]
    fn ssl_flags_choose_https_and_443() {
        for flag in ["ssl", "ssl_secure"] {
            let d = cfg_of(&with(&[(flag, "1")])).unwrap();
            assert_eq!(d.rest.base_url(), "https://vc.example:443/rest", "{flag}");
            assert_eq!(d.trust, Some(TlsTrust::Verify { ca_cert: None }));
        }
        let d = cfg_of(&with(&[("ssl_insecure", "1"), ("ipport", "8443")])).unwrap();
        assert_eq!(d.rest.base_url(), "https://vc.example:8443/rest");
        assert_eq!(d.trust, Some(TlsTrust::Insecure));
        let d = cfg_of(&with(&[("ca_cert", "/etc/vc.pem")])).unwrap();
        assert!(d.rest.https);
        let e = cfg_of(&with(&[("ssl_fingerprint", "nope")])).unwrap_err();
        assert!(!e.is_empty());
    }

    #[test]
    fn api_paths_and_filters() {
        let d = cfg_of(&with(&[("api_path", "/api/"), ("ssl", "1")])).unwrap();
        assert_eq!(d.rest.base_url(), "https://vc.example:443/api");
        assert_eq!(
            d.rest.generation(),
            crate::vsphere::rest::model::Generation::Api
        );
        let d = cfg_of(&with(&[("api_path", "rest")])).unwrap();
        assert_eq!(d.rest.api_path, "/rest");
        let d = cfg_of(&[
            ("ip", "vc"),
            ("username", "u"),
            ("password", "p"),
            ("action", "monitor"),
            ("filter", "filter.names=a&filter.names=b"),
        ])
        .unwrap();
        assert!(d.rest.monitor);
        assert_eq!(
            d.rest.filter.as_deref(),
            Some("filter.names=a&filter.names=b")
        );
        assert!(cfg_of(&with(&[("filter", "a b")])).is_err());
        assert!(cfg_of(&with(&[("ipport", "0")])).is_err());
        assert!(cfg_of(&with(&[("api_path", "/a/../b")])).is_err());
    }
}
