//! The fence_openstack family's own part: options → [`OpenstackDevice`].
//!
//! Upstream's rules kept: `--cloud` (a cloud of clouds.yaml) wins over
//! `--openrc` (a shell file exporting `OS_*`), which wins over the options
//! (`--auth-url`, `--username`, `--password`, `--project-name` admin,
//! `--user-domain-name` and `--project-domain-name` Default); `--uuid`
//! replaces `--plug`; `--apitimeout` (60 s) bounds each request;
//! `--ssl-insecure` and `--cacert`. Differences (docs/hypervisors.md):
//! clouds.yaml's `verify`, `cacert`, `region_name`, `interface` and
//! `auth_type` are honoured (upstream turns verification off for `verify:
//! true`), secure.yaml is merged, the file is looked for in openstacksdk's
//! order; application credentials and tokens (from clouds.yaml or openrc).
//!
//! fencekit-only extensions: `--method cycle` (one HARD reboot),
//! `--region-name`, `--interface`, `--ssl-fingerprint`, `--expect-uuid` (the
//! server's UUID, the guest's SMBIOS UUID on libvirt/KVM).

use super::cloud;
use super::config::{NameOrId, OpenstackConfig};
use super::driver::OpenstackDriver;
use crate::fingerprint::parse_sha256;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::Values;
use crate::platform::agent::{AgentFamily, Device, DeviceConfig, Guidance, GuideRule};
use crate::secret::Secret;
use crate::tls::TlsTrust;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One server as the agent reaches it.
#[derive(Debug)]
pub struct OpenstackDevice {
    /// The target's settings.
    pub config: OpenstackConfig,
    /// Where they were read.
    pub source: String,
    /// The password, application credential secret or token.
    pub secret: Secret,
    /// Each request's bound.
    pub timeout: Duration,
    /// `monitor`: a token and one server read, never the list.
    pub monitor: bool,
}

/// Upstream's usage error without a plug.
pub const NO_PLUG: &str = "Failed: You have to enter plug number or machine identification";
/// Upstream's error without an auth URL.
pub const NO_AUTH_URL: &str = "You have to set the Keystone service endpoint for authorization";

fn named(s: Option<&str>) -> NameOrId {
    NameOrId {
        name: s
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        id: None,
    }
}

fn from_options(values: &Values) -> Result<cloud::Loaded, String> {
    let url = values
        .get(Key::AuthUrl)
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or(NO_AUTH_URL)?;
    let mut c = OpenstackConfig::new(url);
    c.user = named(values.get(Key::Username));
    c.project = named(values.get(Key::ProjectName).or(Some("admin")));
    c.user_domain = named(values.get(Key::UserDomainName).or(Some("Default")));
    c.project_domain = named(values.get(Key::ProjectDomainName).or(Some("Default")));
    Ok(cloud::Loaded {
        config: c,
        secret: Some(Secret::from_str_value(
            values.get(Key::Password).unwrap_or_default(),
        )),
        source: "the options".into(),
    })
}

/// Builds the device from validated option values. The error reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<OpenstackDevice, String> {
    let env = crate::http::client::process_env;
    let given = |k: Key| values.get(k).map(str::trim).filter(|v| !v.is_empty());
    let mut l = match (given(Key::Cloud), given(Key::Openrc)) {
        (Some(c), _) => cloud::from_clouds(c, &env)?,
        (None, Some(rc)) => {
            let vars = cloud::openrc(Path::new(rc))?;
            let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            cloud::from_env(&get)?
        }
        (None, None) => from_options(values)?,
    };
    let c = &mut l.config;
    if let Some(t) = trust(values, agent)? {
        c.tls = t;
    }
    if let Some(r) = given(Key::RegionName) {
        c.region = Some(r.to_string());
    }
    if let Some(i) = given(Key::Interface) {
        c.interface = i.to_ascii_lowercase();
    }
    c.server = given(Key::Uuid).or(given(Key::Plug)).map(str::to_string);
    c.validate().map_err(|e| e.to_string())?;
    let timeout = values.int(Key::Apitimeout).unwrap_or(60).clamp(1, 300);
    Ok(OpenstackDevice {
        config: l.config,
        source: l.source,
        secret: l.secret.unwrap_or_default(),
        timeout: Duration::from_secs(timeout as u64),
        monitor: values.get(Key::Action) == Some("monitor"),
    })
}

/// A pinned fingerprint, else `--cacert`, else `--ssl-insecure`; `None`:
/// the source's own (clouds.yaml's verify/cacert, OS_CACERT) or the
/// system store.
fn trust(values: &Values, agent: &Agent) -> Result<Option<TlsTrust>, String> {
    if let Some(fp) = values.get(Key::SslFingerprint).filter(|s| !s.is_empty()) {
        return Ok(Some(TlsTrust::Fingerprint(
            parse_sha256(fp).map_err(|e| e.to_string())?,
        )));
    }
    if let Some(path) = values.get(Key::Cacert).filter(|s| !s.trim().is_empty()) {
        return Ok(Some(TlsTrust::Verify {
            ca_cert: Some(PathBuf::from(path.trim())),
        }));
    }
    Ok(values
        .flag_of(agent, Key::SslInsecure)
        .then_some(TlsTrust::Insecure))
}

/// Upstream's own input check: a plug (or `--uuid`) for the actions on one server.
fn check(values: &Values, _agent: &Agent) -> Vec<String> {
    let action = values.get(Key::Action).unwrap_or_default();
    let one = ["off", "on", "reboot", "status", "validate-all"].contains(&action);
    let plug = [Key::Plug, Key::Uuid]
        .iter()
        .any(|k| values.get(*k).is_some_and(|v| !v.trim().is_empty()));
    match one && !plug {
        true => vec![NO_PLUG.to_string()],
        false => Vec::new(),
    }
}

fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// The timeouts a stop needs: Nova answers at once and the compute host
/// stops the domain within seconds, but a guest that ignores ACPI holds
/// os-stop for libvirt's graceful-shutdown wait (`shutdown_timeout`, 60 s by
/// default) before it is destroyed.
pub const GUIDE: &[Guidance] = &[Guidance {
    key: "pcmk_reboot_timeout",
    value: "180",
    rule: GuideRule::AtLeast,
    source: "fencekit's OpenStack notes (docs/hypervisors.md: os-stop waits up to nova's shutdown_timeout, 60 s, for the guest)",
}];

/// How the OpenStack platform serves fence_openstack.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    check,
    guide: GUIDE,
    ..AgentFamily::new(device)
};

impl Device for OpenstackDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.config.lock_key())
    }
    fn describe(&self) -> String {
        let c = &self.config;
        format!(
            "OpenStack {} from {} ({}, secret {}), project {}, {} interface{}, server {}, {}, {} s \
             per request",
            c.identity_url().unwrap_or_else(|_| c.auth_url.clone()),
            self.source,
            c.kind.as_str(),
            if self.secret.is_empty() {
                "empty"
            } else {
                "[set]"
            },
            c.project.text(),
            c.interface,
            c.region
                .as_deref()
                .map(|r| format!(", region {r}"))
                .unwrap_or_default(),
            c.server.as_deref().unwrap_or("(none: listing)"),
            crate::tls::describe(&c.tls),
            self.timeout.as_secs()
        )
    }
    fn warnings(&self) -> Vec<String> {
        match self.config.tls == TlsTrust::Insecure {
            true => vec![
                "--ssl-insecure (or verify: false): the cloud's certificates are not verified"
                    .into(),
            ],
            false => Vec::new(),
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let d = *self;
        let drv = OpenstackDriver::new(d.config, d.secret, d.timeout).map_err(|e| e.message)?;
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

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<OpenstackDevice, String> {
        let (v, a) = validated("fence_openstack", pairs);
        config(&v, &a)
    }

    #[test]
    fn upstream_defaults_and_options() {
        let base = [
            ("auth_url", "https://k.example:5000"),
            ("username", "fence"),
            ("password", "hunter22"),
            ("plug", "node1"),
        ];
        let d = cfg_of(&base).unwrap();
        assert_eq!(
            d.config.identity_url().unwrap(),
            "https://k.example:5000/v3"
        );
        assert_eq!(d.config.project.name.as_deref(), Some("admin"));
        assert_eq!(d.config.user_domain.name.as_deref(), Some("Default"));
        assert_eq!(d.timeout, Duration::from_secs(60));
        assert_eq!(d.config.tls, TlsTrust::Verify { ca_cert: None });
        assert!(!d.describe().contains("hunter22"));
        let mut p = base.to_vec();
        p.extend([
            ("uuid", "u1"),
            ("ssl_insecure", "1"),
            ("region_name", "R2"),
            ("interface", "internal"),
            ("apitimeout", "5"),
        ]);
        let d = cfg_of(&p).unwrap();
        assert_eq!(d.config.server.as_deref(), Some("u1"));
        assert_eq!(d.config.tls, TlsTrust::Insecure);
        assert_eq!(
            (d.config.region.as_deref(), d.config.interface.as_str()),
            (Some("R2"), "internal")
        );
        assert_eq!(d.warnings().len(), 1);
        assert!(cfg_of(&base[1..])
            .unwrap_err()
            .contains("Keystone service endpoint"));
        let (v, a) = validated(
            "fence_openstack",
            &[("action", "off"), ("auth_url", "https://k")],
        );
        assert_eq!(check(&v, &a), [NO_PLUG]);
        let (v, a) = validated("fence_openstack", &[("action", "list")]);
        assert!(check(&v, &a).is_empty());
        assert!(cfg_of(&[("cloud", "nope-no-such-cloud")]).is_err());
    }
}
