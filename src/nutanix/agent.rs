//! The fence_nutanix_ahv family's own part: options → [`NutanixDevice`].
//! fence-agents 4.12.1 lacks this agent: the newest upstream is the
//! reference (options, metadata, output).
//!
//! Upstream's rules kept: HTTPS to Prism Central on 9440, HTTP Basic, the
//! plug the VM's name, `--filter` passed to `list` as the v4 `$filter`,
//! `--power-timeout` 60 by default. Upstream ignores `--ipport` (its
//! metadata's default 80 is never used); fencekit uses a port given other
//! than 80 (a Prism Central behind another port), 9440 otherwise.
//!
//! fencekit-only extensions: `--ca-cert`, `--ssl-fingerprint` and
//! `--expect-uuid` (the VM's BIOS UUID or extId, checked by the engine
//! before any change); the plug may be the VM's extId.

use super::config::{NutanixConfig, VmRef, DEFAULT_PORT};
use super::driver::NutanixDriver;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{secret_state, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig, Guidance, GuideRule};
use crate::secret::Secret;
use crate::tls::TlsTrust;
use std::time::Duration;

/// The port upstream's metadata names and never uses.
const METADATA_PORT: u16 = 80;

/// One VM as the agent reaches it.
#[derive(Debug)]
pub struct NutanixDevice {
    /// The target's settings.
    pub config: NutanixConfig,
    /// The user.
    pub user: String,
    /// Its password.
    pub password: Secret,
    /// Each request's bound.
    pub timeout: Duration,
    /// `monitor`: one read, never the list.
    pub monitor: bool,
}

/// Builds the device from validated option values. The error reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<NutanixDevice, String> {
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    let mut c = NutanixConfig::new(&host);
    if values.has(Key::Ipport) {
        let p = values.port("")?;
        c.port = if p == METADATA_PORT { DEFAULT_PORT } else { p };
    }
    c.tls = values.https_trust(agent)?;
    let plug = values.get(Key::Plug).unwrap_or_default().trim();
    if !plug.is_empty() {
        c.vm = Some(VmRef::parse(plug).map_err(|e| e.to_string())?);
    }
    c.filter = values
        .get(Key::Filter)
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_string);
    c.validate().map_err(|e| e.to_string())?;
    let timeout = values.int(Key::ShellTimeout).unwrap_or(5).clamp(10, 60);
    Ok(NutanixDevice {
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

/// Nutanix's guidance: power tasks take seconds, upstream's power timeout
/// is 60 s; a reboot is two of them.
pub const GUIDE: &[Guidance] = &[Guidance {
    key: "pcmk_reboot_timeout",
    value: "180",
    rule: GuideRule::AtLeast,
    source: "fencekit's Nutanix notes (docs/hypervisors.md: two power tasks of up to upstream's 60 s power timeout each)",
}];

/// How the Nutanix platform serves fence_nutanix_ahv.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    guide: GUIDE,
    ..AgentFamily::new(device)
};

impl Device for NutanixDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.config.lock_key())
    }
    fn describe(&self) -> String {
        let c = &self.config;
        format!(
            "Prism Central {} (v4) as '{}', password {}, VM {}, {}, {} s per request",
            c.api_url(),
            self.user,
            secret_state(&self.password),
            c.vm.as_ref().map_or("(none: listing)", |v| v.text()),
            crate::tls::describe(&c.tls),
            self.timeout.as_secs()
        )
    }
    fn warnings(&self) -> Vec<String> {
        match self.config.tls {
            TlsTrust::Insecure => {
                vec!["--ssl-insecure: Prism Central's certificate is not verified".into()]
            }
            _ => Vec::new(),
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let d = *self;
        let drv =
            NutanixDriver::new(d.config, &d.user, d.password, d.timeout).map_err(|e| e.message)?;
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
    fn upstream_defaults_and_the_port() {
        let base = [
            ("ip", "pc.example"),
            ("username", "admin"),
            ("password", "hunter22"),
            ("plug", "node1"),
        ];
        let (v, a) = validated("fence_nutanix_ahv", &base);
        let d = config(&v, &a).unwrap();
        assert_eq!(
            d.config.api_url(),
            "https://pc.example:9440/api",
            "the metadata's 80 is 9440"
        );
        assert_eq!(d.config.vm, Some(VmRef::Name("node1".into())));
        assert!(!d.describe().contains("hunter22"));
        let mut p = base.to_vec();
        p.extend([
            ("ipport", "8443"),
            ("ssl_insecure", "1"),
            ("filter", "startswith(name,'n')"),
        ]);
        let (v, a) = validated("fence_nutanix_ahv", &p);
        let d = config(&v, &a).unwrap();
        assert_eq!(d.config.port, 8443);
        assert_eq!(d.config.tls, TlsTrust::Insecure);
        assert_eq!(d.config.filter.as_deref(), Some("startswith(name,'n')"));
        assert_eq!(d.warnings().len(), 1);
    }
}
