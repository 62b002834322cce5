//! The fence_rhevm family's own part: options → [`OvirtDevice`].
//!
//! Upstream's rules kept: plain HTTP on port 80 unless `--ssl`,
//! `--ssl-secure` or `--ssl-insecure` (then HTTPS, 443 unless `--ipport`),
//! `--api-path` `/ovirt-engine/api`, `Filter: true` unless
//! `--disable-http-filter`, `--use-cookies` for the engine's session.
//! Differences (docs/hypervisors.md): API v4 only (`--api-version` auto or
//! 4); the session cookie lives for the run and is never written to a file
//! (`--cookie-file` is accepted and not used).
//!
//! fencekit-only extensions: `--ca-cert`, `--ssl-fingerprint`,
//! `--expect-uuid` (the VM id, which the engine gives the guest as its
//! SMBIOS UUID).

use super::config::OvirtConfig;
use super::driver::OvirtDriver;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{secret_state, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig, Guidance, GuideRule};
use crate::secret::Secret;
use crate::tls::TlsTrust;
use std::time::Duration;

/// One VM as the agent reaches it.
#[derive(Debug)]
pub struct OvirtDevice {
    /// The target's settings.
    pub config: OvirtConfig,
    /// The user.
    pub user: String,
    /// The password.
    pub secret: Secret,
    /// Each request's bound.
    pub timeout: Duration,
    /// `monitor`: one authenticated read, never the list.
    pub monitor: bool,
}

/// Builds the device from validated option values. The error reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<OvirtDevice, String> {
    let tls = values.tls_trust(agent)?;
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    let mut c = OvirtConfig::new(&host);
    let mut port = values.port("80")?;
    if tls.is_some() && port == 80 {
        port = 443;
    }
    c.port = port;
    c.tls = tls;
    let user = values
        .get(Key::Username)
        .unwrap_or_default()
        .trim()
        .to_string();
    c.user = Some(user.clone());
    if let Some(p) = values
        .get(Key::ApiPath)
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        c.api_path = match p.starts_with('/') {
            true => p.to_string(),
            false => format!("/{p}"),
        };
    }
    let v = values.get(Key::ApiVersion).unwrap_or("auto").trim();
    if !(v == "auto" || v == "4" || v.starts_with("4.")) {
        return Err(format!(
            "API version {} (--api-version): fencekit speaks the engine's API v4 only (auto or 4); \
             v3 was removed in oVirt 4.2",
            crate::http::text::printable(v, 20)
        ));
    }
    c.filter = !values.flag_of(agent, Key::DisableHttpFilter);
    c.cookies = values.flag_of(agent, Key::UseCookies);
    let plug = values.get(Key::Plug).unwrap_or_default().trim();
    if !plug.is_empty() {
        c.vm = Some(plug.to_string());
    }
    c.validate().map_err(|e| e.to_string())?;
    Ok(OvirtDevice {
        config: c,
        user,
        secret: Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
        timeout: values.request_timeout(),
        monitor: values.get(Key::Action) == Some("monitor"),
    })
}

fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// The timeouts a stop needs: the engine answers a stop at once and the VM
/// is down within seconds; a start waits for a host to be chosen.
pub const GUIDE: &[Guidance] = &[Guidance {
    key: "pcmk_reboot_timeout",
    value: "60",
    rule: GuideRule::AtLeast,
    source: "fencekit's oVirt notes (docs/hypervisors.md: a start waits for the scheduler to pick a host)",
}];

/// How the oVirt platform serves fence_rhevm.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    guide: GUIDE,
    ..AgentFamily::new(device)
};

impl Device for OvirtDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.config.lock_key())
    }
    fn describe(&self) -> String {
        let c = &self.config;
        format!(
            "oVirt engine {} as '{}' (password {}), VM {}, Filter: {}{}, {}, {} s per request",
            c.api_url(),
            self.user,
            secret_state(&self.secret),
            c.vm.as_deref().unwrap_or("(none: listing)"),
            c.filter,
            if c.cookies { ", session cookie" } else { "" },
            c.tls.as_ref().map_or(
                "plain HTTP (the password travels in clear)".into(),
                crate::tls::describe
            ),
            self.timeout.as_secs()
        )
    }
    fn warnings(&self) -> Vec<String> {
        match &self.config.tls {
            None => vec!["no --ssl: plain HTTP, the password travels in clear".into()],
            Some(TlsTrust::Insecure) => {
                vec!["--ssl-insecure: the engine's certificate is not verified".into()]
            }
            Some(_) => Vec::new(),
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let d = *self;
        let drv =
            OvirtDriver::new(d.config, &d.user, d.secret, d.timeout).map_err(|e| e.message)?;
        Ok(Box::new(match d.monitor {
            true => drv.for_monitor(),
            false => drv,
        }))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<OvirtDevice, String> {
        let (v, a) = validated("fence_rhevm", pairs);
        config(&v, &a)
    }

    const BASE: &[(&str, &str)] = &[
        ("ip", "engine.example"),
        ("username", "admin@internal"),
        ("password", "hunter22"),
        ("plug", "node1"),
    ];

    #[test]
    fn upstream_defaults_and_options() {
        let d = cfg_of(BASE).unwrap();
        assert_eq!(
            d.config.api_url(),
            "http://engine.example:80/ovirt-engine/api"
        );
        assert!(d.config.filter && !d.config.cookies);
        assert!(!d.describe().contains("hunter22"));
        let mut p = BASE.to_vec();
        p.extend([
            ("ssl_insecure", "1"),
            ("disable_http_filter", "1"),
            ("use_cookies", "1"),
            ("api_path", "/api"),
        ]);
        let d = cfg_of(&p).unwrap();
        assert_eq!(d.config.api_url(), "https://engine.example:443/api");
        assert!(!d.config.filter && d.config.cookies);
        let mut p = BASE.to_vec();
        p.push(("api_version", "3"));
        assert!(cfg_of(&p).unwrap_err().contains("v4 only"));
    }
}
