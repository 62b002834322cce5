//! The fence_pve family's own part: options → [`PveDevice`].
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]);
//! this module only knows which option feeds which setting, with upstream's
//! rules kept where configurations depend on them: HTTPS always (port 8006),
//! `--username` root@pam by default, the guest's node from `--pve-node`
//! (`--nodename`, its former name) unless `--pve-node-auto` (one of them is
//! required, as upstream requires), `--vmtype` qemu by default.
//!
//! fencekit-only extensions: `--ca-cert`, `--ssl-fingerprint`, `--skiplock`
//! and `--expect-uuid` (the QEMU guest's SMBIOS UUID, checked by the engine
//! before any change); a username `USER@REALM!TOKENID` uses an API token.

use super::config::{Guest, Kind, PveConfig};
use super::driver::PveDriver;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{secret_state, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig, Guidance, GuideRule};
use crate::secret::Secret;
use crate::tls::TlsTrust;
use std::time::Duration;

/// One guest as the agent reaches it.
#[derive(Debug)]
pub struct PveDevice {
    /// The target's settings.
    pub config: PveConfig,
    /// The user (or API token id).
    pub user: String,
    /// The password or the token's secret.
    pub secret: Secret,
    /// Each request's bound.
    pub timeout: Duration,
    /// `monitor`: one authenticated read, never the list.
    pub monitor: bool,
}

/// Upstream's usage error when neither node option is given.
pub const NO_NODE: &str = "At least one of pve-node-auto or pve-node must be supplied";

/// Builds the device from validated option values. The error reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<PveDevice, String> {
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    let mut c = PveConfig::new(&host);
    c.port = values.port("8006")?;
    c.tls = values.https_trust(agent)?;
    let user = values
        .get(Key::Username)
        .unwrap_or("root@pam")
        .trim()
        .to_string();
    c.user = Some(user.clone());
    c.node = match values.flag_of(agent, Key::PveNodeAuto) {
        true => None,
        false => values
            .get(Key::PveNode)
            .or(values.get(Key::Nodename))
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string),
    };
    c.kind =
        Some(Kind::parse(values.get(Key::Vmtype).unwrap_or("qemu")).map_err(|e| e.to_string())?);
    let plug = values.get(Key::Plug).unwrap_or_default().trim();
    if !plug.is_empty() {
        c.guest = Some(Guest::parse(plug).map_err(|e| e.to_string())?);
    }
    c.skiplock = values.flag_of(agent, Key::Skiplock);
    c.validate().map_err(|e| e.to_string())?;
    Ok(PveDevice {
        config: c,
        user,
        secret: Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
        timeout: values.request_timeout(),
        monitor: values.get(Key::Action) == Some("monitor"),
    })
}

/// Upstream's own input check: a node option (unless only metadata).
fn check(values: &Values, agent: &Agent) -> Vec<String> {
    let given = values.flag_of(agent, Key::PveNodeAuto)
        || [Key::PveNode, Key::Nodename]
            .iter()
            .any(|k| values.get(*k).is_some_and(|v| !v.trim().is_empty()));
    match given {
        true => Vec::new(),
        false => vec![NO_NODE.to_string()],
    }
}

fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// What Proxmox VE's HA documentation and the fencing timeouts need: a
/// stop answers at once, its task ends in seconds; an HA-managed guest's
/// stop goes through the HA manager (its loop runs every 10 s).
pub const GUIDE: &[Guidance] = &[Guidance {
    key: "pcmk_reboot_timeout",
    value: "60",
    rule: GuideRule::AtLeast,
    source: "fencekit's Proxmox VE notes (docs/hypervisors.md: an HA-managed guest's stop waits for the HA manager's 10 s loop)",
}];

/// How the Proxmox VE platform serves fence_pve.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    check,
    guide: GUIDE,
    ..AgentFamily::new(device)
};

impl Device for PveDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.config.lock_key())
    }
    fn describe(&self) -> String {
        let c = &self.config;
        format!(
            "Proxmox VE {} as '{}' ({}, secret {}), guest {} ({}) on {}, {}, {} s per request{}",
            c.api_url(),
            self.user,
            if c.token_id().is_some() {
                "API token"
            } else {
                "ticket"
            },
            secret_state(&self.secret),
            c.guest
                .as_ref()
                .map_or("(none: listing)".into(), |g| g.text()),
            c.kind.map_or("any", Kind::as_str),
            c.node.as_deref().unwrap_or("(found)"),
            crate::tls::describe(&c.tls),
            self.timeout.as_secs(),
            if c.skiplock { ", skiplock" } else { "" }
        )
    }
    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.config.tls == TlsTrust::Insecure {
            w.push("--ssl-insecure: the node's certificate is not verified".into());
        }
        if self.config.skiplock {
            w.push(
                "--skiplock: a locked guest (backup, migration, snapshot) is powered anyway".into(),
            );
        }
        w
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let d = *self;
        let drv = PveDriver::new(d.config, &d.user, d.secret, d.timeout).map_err(|e| e.message)?;
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

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<PveDevice, String> {
        let (v, a) = validated("fence_pve", pairs);
        config(&v, &a)
    }

    const BASE: &[(&str, &str)] = &[
        ("ip", "pve1.example"),
        ("password", "hunter22"),
        ("plug", "100"),
    ];

    #[test]
    fn upstream_defaults_and_the_node_options() {
        let mut p = BASE.to_vec();
        p.push(("pve_node", "pve1"));
        let d = cfg_of(&p).unwrap();
        assert_eq!(d.config.api_url(), "https://pve1.example:8006/api2/json");
        assert_eq!(d.user, "root@pam");
        assert_eq!(d.config.node.as_deref(), Some("pve1"));
        assert_eq!(d.config.kind, Some(Kind::Qemu));
        assert_eq!(d.config.guest, Some(Guest::Id(100)));
        assert_eq!(d.config.tls, TlsTrust::Verify { ca_cert: None });
        assert!(!d.describe().contains("hunter22"));
        let (v, a) = validated("fence_pve", BASE);
        assert_eq!(check(&v, &a), [NO_NODE]);
        let mut p = BASE.to_vec();
        p.extend([
            ("nodename", "pve2"),
            ("vmtype", "lxc"),
            ("ssl_insecure", "1"),
            ("skiplock", "1"),
        ]);
        let d = cfg_of(&p).unwrap();
        assert_eq!(
            (d.config.node.as_deref(), d.config.kind),
            (Some("pve2"), Some(Kind::Lxc))
        );
        assert_eq!(d.warnings().len(), 2);
        let mut p = BASE.to_vec();
        p.extend([
            ("pve_node", "pve1"),
            ("pve_node_auto", "1"),
            ("username", "fence@pve!fk"),
        ]);
        let d = cfg_of(&p).unwrap();
        assert_eq!(d.config.node, None, "--pve-node-auto overrides --pve-node");
        assert_eq!(d.config.token_id(), Some("fence@pve!fk"));
        let mut p = BASE.to_vec();
        p.push(("vmtype", "kvm"));
        assert!(cfg_of(&p).is_err());
    }
}
