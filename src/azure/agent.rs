//! The fence_azure_arm family's own part: options → [`AzureConfig`].
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]);
//! this module only knows which option feeds which Azure setting: the plug
//! is the VM's name, `--resourceGroup` / `--subscriptionId` its scope (the
//! metadata service's when not given), `--username` / `--password` a
//! service principal (`--tenantId` its tenant), `--msi` the managed
//! identity (a workload identity's token file first, as the SDKs' managed
//! identity credential does; `--username` then names a user-assigned
//! identity), `--cloud` and `--metadata-endpoint` the cloud.
//!
//! fencekit-only extensions: `--client-certificate` (a service principal's
//! certificate instead of a secret), `--endpoint-url`, `--ca-cert`,
//! `--expect-vm-id` and `--expect-uuid` (pins read by the engine before any
//! state change), `--allow-self-fence`. Without `--username` and `--msi`,
//! the SDKs' environment (AZURE_CLIENT_ID …) is used where upstream fails.

use crate::azure::config::{Auth, AzureConfig, Cloud, ConfigError};
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::Values;
use crate::platform::agent::{AgentFamily, Device, DeviceConfig, Guidance, GuideRule};
use crate::platform::Driver;
use crate::secret::Secret;
use std::time::Duration;

/// The longest bound of one request (a token, a read, a power request):
/// Resource Manager answers within seconds; a longer wait is an outage.
pub const MAX_REQUEST: Duration = Duration::from_secs(30);

/// Builds the Azure configuration from validated option values. The error
/// is a message that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<AzureConfig, String> {
    let get = |k: Key| values.get(k).map(str::trim).filter(|s| !s.is_empty());
    let mut cfg = AzureConfig::new(
        get(Key::SubscriptionId).unwrap_or(""),
        get(Key::ResourceGroup).unwrap_or(""),
        get(Key::Plug).unwrap_or(""),
    );
    cfg.cloud =
        Cloud::parse(get(Key::Cloud), get(Key::MetadataEndpoint)).map_err(|e| e.to_string())?;
    cfg.tenant = get(Key::TenantId).map(str::to_string);
    let client_id = get(Key::Username).map(str::to_string);
    let secret = values.get(Key::Password).filter(|p| !p.is_empty());
    let cert = get(Key::ClientCertificate).map(std::path::PathBuf::from);
    cfg.auth = match (values.flag_of(agent, Key::Msi), client_id, secret, cert) {
        (true, _, Some(_), _) | (true, _, _, Some(_)) => {
            return Err(ConfigError::MsiWithSecret.to_string())
        }
        (true, id, None, None) => Auth::ManagedIdentity { client_id: id },
        (false, _, Some(_), Some(_)) => return Err(ConfigError::SecretAndCertificate.to_string()),
        (false, Some(id), Some(s), None) => Auth::Secret {
            client_id: id,
            secret: Secret::from_str_value(s),
        },
        (false, Some(id), None, Some(path)) => Auth::Certificate {
            client_id: id,
            path,
        },
        (false, None, Some(_), _) | (false, None, _, Some(_)) => {
            return Err(ConfigError::NoClientId.to_string())
        }
        (false, Some(_), None, None) => {
            return Err(
                "--username (the application ID) needs --password (its secret) or \
                        --client-certificate"
                    .into(),
            )
        }
        (false, None, None, None) => Auth::Chain,
    };
    if cfg.tenant.is_none() && matches!(cfg.auth, Auth::Secret { .. } | Auth::Certificate { .. }) {
        cfg.tenant = std::env::var("AZURE_TENANT_ID")
            .ok()
            .filter(|t| !t.is_empty());
    }
    cfg.arm_endpoint = get(Key::EndpointUrl).map(str::to_string);
    cfg.ca_cert = get(Key::CaCert).map(std::path::PathBuf::from);
    cfg.allow_self_fence = values.flag_of(agent, Key::AllowSelfFence);
    cfg.network_fencing = values.flag_of(agent, Key::NetworkFencing);
    let action = values.get(Key::Action).unwrap_or("");
    cfg.monitor_only = action == "monitor";
    cfg.list_states = action == "list-status";
    cfg.request_timeout = match values.int(Key::PowerTimeout) {
        Some(n) if n > 0 => Duration::from_secs(n as u64).min(MAX_REQUEST),
        _ => MAX_REQUEST,
    };
    cfg.validate_with_tenant().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// A one-line description of the configuration for `-v` (never a secret).
pub fn describe(cfg: &AzureConfig) -> String {
    format!(
        "Azure VM {} in resource group {} of subscription {} ({} cloud), {}, {} s per request{}",
        if cfg.vm.is_empty() {
            "(none: listing)"
        } else {
            &cfg.vm
        },
        if cfg.resource_group.is_empty() {
            "(metadata service's)"
        } else {
            &cfg.resource_group
        },
        if cfg.subscription.is_empty() {
            "(metadata service's)"
        } else {
            &cfg.subscription
        },
        cfg.cloud.name(),
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

impl Device for AzureConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        crate::azure::driver::AzureDriver::new(*self)
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

const GUIDE_SOURCE: &str =
    "Microsoft's guide to Pacemaker on Azure (RHEL and SLES: fence_azure_arm STONITH device)";

/// What Microsoft's Pacemaker guide sets for fence_azure_arm.
pub const GUIDE: &[Guidance] = &[
    Guidance {
        key: "pcmk_reboot_timeout",
        value: "900",
        rule: GuideRule::AtLeast,
        source: GUIDE_SOURCE,
    },
    Guidance {
        key: "pcmk_action_limit",
        value: "3",
        rule: GuideRule::AtMost,
        source: GUIDE_SOURCE,
    },
    Guidance {
        key: "pcmk_delay_max",
        value: "15",
        rule: GuideRule::AtLeast,
        source: GUIDE_SOURCE,
    },
    Guidance {
        key: "pcmk_monitor_retries",
        value: "4",
        rule: GuideRule::AtLeast,
        source: GUIDE_SOURCE,
    },
    Guidance {
        key: "pcmk_monitor_timeout",
        value: "120",
        rule: GuideRule::AtLeast,
        source: GUIDE_SOURCE,
    },
    Guidance {
        key: "power_timeout",
        value: "240",
        rule: GuideRule::AtLeast,
        source: GUIDE_SOURCE,
    },
];

/// How the platform serves the fence_azure_arm family.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    guide: GUIDE,
    ..AgentFamily::new(device)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    const SUB: &str = "0b1f6471-1bf0-4dda-aec3-cb9272f09590";

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<AzureConfig, String> {
        let (v, a) = validated("fence_azure_arm", pairs);
        config(&v, &a)
    }

    #[test]
    fn options_map_to_the_vm_and_the_credentials() {
        let base = [
            ("subscriptionId", SUB),
            ("resourceGroup", "rg-ha"),
            ("plug", "node1"),
        ];
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut p = base.to_vec();
            p.extend_from_slice(extra);
            cfg_of(&p)
        };
        let c = with(&[
            ("username", "app"),
            ("password", "hunter2"),
            ("tenantId", "t"),
        ])
        .unwrap();
        assert!(matches!(c.auth, Auth::Secret { .. }));
        assert_eq!((c.vm.as_str(), c.request_timeout), ("node1", MAX_REQUEST));
        assert!(!describe(&c).contains("hunter2"));
        assert!(matches!(
            with(&[("msi", "1")]).unwrap().auth,
            Auth::ManagedIdentity { client_id: None }
        ));
        assert!(matches!(
            with(&[("msi", "1"), ("username", "uami")]).unwrap().auth,
            Auth::ManagedIdentity { client_id: Some(_) }
        ));
        assert!(with(&[("msi", "1"), ("password", "x")]).is_err());
        assert!(with(&[("username", "app")])
            .unwrap_err()
            .contains("--password"));
        assert!(with(&[("password", "x")]).is_err());
        let e = with(&[("username", "a"), ("password", "x")]);
        assert!(e.is_err() || std::env::var("AZURE_TENANT_ID").is_ok());
        assert!(with(&[("cloud", "mars")]).unwrap_err().contains("mars"));
        assert!(with(&[("cloud", "stack")])
            .unwrap_err()
            .contains("metadata-endpoint"));
        assert_eq!(with(&[("cloud", "china")]).unwrap().cloud, Cloud::China);
        assert_eq!(
            with(&[("power_timeout", "5")]).unwrap().request_timeout,
            Duration::from_secs(5)
        );
        assert!(with(&[("action", "monitor")]).unwrap().monitor_only);
        assert!(with(&[("action", "list-status")]).unwrap().list_states);
        assert!(with(&[("network_fencing", "1")]).unwrap().network_fencing);
        assert!(cfg_of(&[("subscriptionId", "nope"), ("plug", "n")]).is_err());
    }
}
