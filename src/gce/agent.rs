//! The fence_gce family's own part: options → [`GceConfig`].
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]);
//! this module only knows which option feeds which GCE setting: the plug
//! is the instance's name, `--zone` its zone (a comma-separated list: the
//! first is the plug's, all of them are listed), `--project` its project
//! (the metadata server's when not given), `--serviceaccount` a key file,
//! `--proxyhost`/`--proxyport` a proxy, `--apitimeout` each request's
//! bound. `--baremetalsolution` is refused; `--earlyexit` is accepted and
//! the state still confirmed.
//!
//! fencekit-only extensions: `--endpoint-url`, `--ca-cert`,
//! `--expect-instance-id` (a pin read by the engine before any state
//! change), `--allow-self-fence`.

use crate::gce::config::{proxy_url, Auth, ConfigError, GceConfig};
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::Values;
use crate::platform::agent::{AgentFamily, Device, DeviceConfig, Guidance, GuideRule};
use crate::platform::Driver;
use std::time::Duration;

/// The longest bound of one request: the API answers within seconds.
pub const MAX_REQUEST: Duration = Duration::from_secs(60);

/// Builds the GCE configuration from validated option values. The error
/// is a message that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<GceConfig, String> {
    let get = |k: Key| values.get(k).map(str::trim).filter(|s| !s.is_empty());
    if values.flag_of(agent, Key::Baremetalsolution) {
        return Err(ConfigError::BareMetal.to_string());
    }
    let zones: Vec<String> = get(Key::Zone)
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|z| !z.is_empty())
        .map(String::from)
        .collect();
    let mut cfg = GceConfig::new(
        get(Key::Project).unwrap_or(""),
        zones.first().map_or("", String::as_str),
        get(Key::Plug).unwrap_or(""),
    );
    cfg.zones = zones;
    if let Some(f) = get(Key::Serviceaccount) {
        cfg.auth = Auth::KeyFile(f.into());
    }
    cfg.proxy = proxy_url(get(Key::Proxyhost), get(Key::Proxyport)).map_err(|e| e.to_string())?;
    cfg.api_endpoint = get(Key::EndpointUrl).map(str::to_string);
    cfg.ca_cert = get(Key::CaCert).map(std::path::PathBuf::from);
    cfg.allow_self_fence = values.flag_of(agent, Key::AllowSelfFence);
    cfg.early_exit = values.flag_of(agent, Key::Earlyexit);
    let action = values.get(Key::Action).unwrap_or("");
    cfg.monitor_only = action == "monitor";
    cfg.list_states = action == "list-status";
    cfg.request_timeout = match values.int(Key::Apitimeout) {
        Some(n) if n > 0 => Duration::from_secs(n as u64).min(MAX_REQUEST),
        _ => MAX_REQUEST,
    };
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// A one-line description of the configuration for `-v` (never a secret).
pub fn describe(cfg: &GceConfig) -> String {
    format!(
        "GCE instance {} in zone {} of project {}, {}, {} s per request{}",
        if cfg.instance.is_empty() {
            "(none: listing)"
        } else {
            &cfg.instance
        },
        if cfg.zone.is_empty() {
            "(found by name)"
        } else {
            &cfg.zone
        },
        if cfg.project.is_empty() {
            "(metadata server's)"
        } else {
            &cfg.project
        },
        cfg.auth.describe(),
        cfg.request_timeout.as_secs(),
        if cfg.allow_self_fence {
            ", self-fencing allowed"
        } else {
            ""
        }
    )
}

/// The family's configuration from validated option values.
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

impl Device for GceConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        crate::gce::driver::GceDriver::new(*self)
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

const GUIDE_SOURCE: &str =
    "Google Cloud's guide to Pacemaker HA clusters on Compute Engine (fence_gce STONITH device)";

/// What Google's Pacemaker guides set for fence_gce.
pub const GUIDE: &[Guidance] = &[
    Guidance {
        key: "pcmk_reboot_timeout",
        value: "300",
        rule: GuideRule::AtLeast,
        source: GUIDE_SOURCE,
    },
    Guidance {
        key: "pcmk_delay_max",
        value: "30",
        rule: GuideRule::AtLeast,
        source: GUIDE_SOURCE,
    },
];

/// How the platform serves the fence_gce family.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    guide: GUIDE,
    ..AgentFamily::new(device)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<GceConfig, String> {
        let (v, a) = validated("fence_gce", pairs);
        config(&v, &a)
    }

    #[test]
    fn options_map_to_the_instance_and_the_credentials() {
        let c = cfg_of(&[
            ("project", "my-project"),
            ("zone", "z-a,z-b"),
            ("plug", "node1"),
            ("serviceaccount", "/sa.json"),
            ("apitimeout", "5"),
        ])
        .unwrap();
        assert_eq!((c.zone.as_str(), c.zones.len()), ("z-a", 2));
        assert_eq!(c.auth, Auth::KeyFile("/sa.json".into()));
        assert_eq!(c.request_timeout, Duration::from_secs(5));
        assert!(cfg_of(&[("plug", "n"), ("baremetalsolution", "1")])
            .unwrap_err()
            .contains("Bare Metal"));
        assert!(cfg_of(&[("plug", "n"), ("proxyhost", "h")]).is_err());
        let c = cfg_of(&[("plug", "n"), ("proxyhost", "h"), ("proxyport", "3128")]).unwrap();
        assert_eq!(c.proxy.as_deref(), Some("http://h:3128"));
        assert!(
            cfg_of(&[("plug", "n"), ("earlyexit", "1")])
                .unwrap()
                .early_exit
        );
        assert!(
            cfg_of(&[("plug", "n"), ("action", "monitor")])
                .unwrap()
                .monitor_only
        );
        assert!(cfg_of(&[("plug", "Bad_Name")]).is_err());
        assert_eq!(cfg_of(&[("plug", "n")]).unwrap().auth, Auth::Default);
    }
}
