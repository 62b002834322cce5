//! The fence_cisco_ucs family's own part: options → [`UcsDevice`].
//!
//! Upstream's rules kept: plain HTTP on 80 unless `--ssl`, `--ssl-secure`
//! or `--ssl-insecure` (then HTTPS, on 443 unless `--ipport` names another port than 80), the plug the
//! service profile's name, `--suborg` the organization below `org-root`,
//! `--missing-as-off`, `list` printing each profile's distinguished name
//! and description. Differences (docs/ucs.md): `--suborg` may omit the
//! `org-` prefix; the bound of each request is the larger of
//! `--shell-timeout` and `--login-timeout` (2 to 60 s).
//!
//! fencekit-only extensions: `--ca-cert`, `--ssl-fingerprint` and
//! `--expect-uuid` (the server's UUID, checked by the engine before any
//! change).

use super::config::UcsConfig;
use super::driver::UcsDriver;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{secret_state, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::secret::Secret;
use crate::tls::TlsTrust;
use std::time::Duration;

/// The sub-organization's option, read by its definition's name.
const SUBORG: &str = "suborg";

/// One service profile as the agent reaches it.
#[derive(Debug)]
pub struct UcsDevice {
    /// The target's settings.
    pub config: UcsConfig,
    /// The user.
    pub user: String,
    /// Its password.
    pub password: Secret,
    /// Each request's bound.
    pub timeout: Duration,
    /// `monitor`: one read, nothing printed.
    pub monitor: bool,
}

/// Builds the device from validated option values. The error reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<UcsDevice, String> {
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    let mut c = UcsConfig::new(&host);
    c.tls = values.tls_trust(agent)?;
    // The metadata's 80 is filled in when --ipport is not given: with TLS
    // it is 443, as upstream's default is then.
    c.port = match (values.port("80")?, &c.tls) {
        (80, Some(_)) => 443,
        (p, _) => p,
    };
    c.set_suborg(values.get_named(SUBORG).unwrap_or_default())
        .map_err(|e| e.to_string())?;
    let plug = values.get(Key::Plug).unwrap_or_default().trim();
    if !plug.is_empty() {
        c.profile = Some(plug.to_string());
    }
    c.missing_as_off = values.flag_of(agent, Key::MissingAsOff);
    c.validate().map_err(|e| e.to_string())?;
    let timeout = [Key::ShellTimeout, Key::LoginTimeout]
        .iter()
        .filter_map(|k| values.int(*k))
        .max()
        .unwrap_or(5)
        .clamp(2, 60);
    Ok(UcsDevice {
        config: c,
        user: values.get(Key::Username).unwrap_or_default().to_string(),
        password: Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
        timeout: Duration::from_secs(timeout as u64),
        monitor: values.get(Key::Action) == Some("monitor"),
    })
}

fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// How the UCS platform serves fence_cisco_ucs.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    read_by_name: &[SUBORG],
    ..AgentFamily::new(device)
};

impl Device for UcsDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.config.lock_key())
    }
    fn describe(&self) -> String {
        let c = &self.config;
        format!(
            "UCS Manager {} as '{}', password {}, service profile {}, {}, {} s per request{}",
            c.api_url(),
            self.user,
            secret_state(&self.password),
            c.profile_dn().as_deref().unwrap_or("(none: listing)"),
            c.tls
                .as_ref()
                .map_or("plain http".to_string(), crate::tls::describe),
            self.timeout.as_secs(),
            match c.missing_as_off {
                true => ", missing as off",
                false => "",
            }
        )
    }
    fn warnings(&self) -> Vec<String> {
        match self.config.tls {
            Some(TlsTrust::Insecure) => {
                vec!["--ssl-insecure: UCS Manager's certificate is not verified".into()]
            }
            None => vec![
                "plain HTTP (no --ssl, --ssl-secure or --ssl-insecure): the password and the session cookie travel in clear"
                    .into(),
            ],
            _ => Vec::new(),
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let d = *self;
        let drv =
            UcsDriver::new(d.config, &d.user, d.password, d.timeout).map_err(|e| e.message)?;
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

    #[test]
    fn upstream_defaults_ports_and_the_suborg() {
        let base = [
            ("ip", "ucsm.example"),
            ("username", "admin"),
            ("password", "hunter22"),
            ("plug", "node1"),
        ];
        let (v, a) = validated("fence_cisco_ucs", &base);
        let d = config(&v, &a).unwrap();
        assert_eq!(d.config.api_url(), "http://ucsm.example:80/nuova");
        assert_eq!(d.config.profile_dn().as_deref(), Some("org-root/ls-node1"));
        assert!(!d.describe().contains("hunter22"));
        assert_eq!(d.warnings().len(), 1, "plain HTTP is warned");
        let mut p = base.to_vec();
        p.extend([
            ("ssl_insecure", "1"),
            ("suborg", "/org-Finance/"),
            ("missing_as_off", "1"),
        ]);
        let (v, a) = validated("fence_cisco_ucs", &p);
        let d = config(&v, &a).unwrap();
        assert_eq!(d.config.api_url(), "https://ucsm.example:443/nuova");
        assert_eq!(
            d.config.profile_dn().as_deref(),
            Some("org-root/org-Finance/ls-node1")
        );
        assert!(d.config.missing_as_off);
        p.push(("ipport", "8443"));
        let (v, a) = validated("fence_cisco_ucs", &p);
        assert_eq!(config(&v, &a).unwrap().config.port, 8443);
    }
}
