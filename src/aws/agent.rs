//! The fence_aws family's own part: options → [`AwsConfig`].
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]);
//! this module only knows which option feeds which EC2 setting: the plug is
//! the instance ID (one per call), the region comes from `--region` or the
//! SDKs' places (`AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's
//! `region`), the keys from `--access-key`/`--secret-key` (argv or stdin)
//! or, when neither is given, the credential chain
//! ([`crate::aws::credentials`]). `--filter KEY=VALUE` narrows `list`.
//!
//! fencekit-only extensions: `--expect-node-name NAME` and `--expect-tag
//! KEY=VALUE` (pins read by the engine before any state change; see
//! [`crate::agent::run::expected_identity`]), `--allow-self-fence`,
//! `--endpoint-url`, and `--skip-race-check` (accepted, ignored).
//! `--skip-os-shutdown=true|false` (upstream's later option, default true)
//! chooses whether `off` asks EC2 to skip the guest's OS shutdown.

use crate::aws::config::{check_instance, key_value, AwsConfig, ConfigError, Env, GivenKeys};
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::Values;
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::platform::Driver;
use crate::secret::Secret;
use std::time::Duration;

/// Per-request bound when `power_timeout` is 0 or timeouts are disabled
/// (boto3 waits 60 s per attempt; fencekit bounds every request).
pub const UNLIMITED_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Builds the EC2 configuration from validated option values. The error is
/// a message that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<AwsConfig, String> {
    let env = Env::from_process();
    let region = match values.get(Key::Region).filter(|r| !r.is_empty()) {
        Some(r) => r.to_string(),
        None => env
            .region()
            .map(str::to_string)
            .or_else(|| {
                crate::aws::credentials::profile(&env)
                    .1
                    .and_then(|p| p.get("region").cloned())
            })
            .ok_or_else(|| ConfigError::NoRegion.to_string())?,
    };
    let instance = values.get(Key::Plug).unwrap_or_default().trim().to_string();
    if !instance.is_empty() {
        check_instance(&instance).map_err(|e| e.to_string())?;
    }
    let mut cfg = AwsConfig::new(&region, &instance);
    cfg.keys = GivenKeys::from_parts(
        values.get(Key::AccessKey),
        values.get(Key::SecretKey).map(Secret::from_str_value),
    )
    .map_err(|e| e.to_string())?;
    cfg.endpoint = values
        .get(Key::EndpointUrl)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    cfg.allow_self_fence = values.flag_of(agent, Key::AllowSelfFence);
    cfg.list_filter = match values.get(Key::Filter) {
        Some(f) => {
            Some(key_value(f).ok_or_else(|| ConfigError::BadFilter(f.to_string()).to_string())?)
        }
        None => None,
    };
    if let Some(v) = values.get(Key::SkipOsShutdown) {
        cfg.skip_os_shutdown = yes_no(v).ok_or_else(|| {
            format!("'{v}' is not a value of skip_os_shutdown (expected true or false)")
        })?;
    }
    cfg.request_timeout = match values.int(Key::PowerTimeout) {
        Some(n) if n > 0 => Duration::from_secs(n.min(60) as u64),
        _ => UNLIMITED_REQUEST_TIMEOUT,
    };
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// `--skip-os-shutdown`'s value: the words upstream reads as true (`1`,
/// `yes`, `on`, `true`) and their opposites, in any case; anything else is
/// an error rather than a silent false.
fn yes_no(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "on" | "true" => Some(true),
        "0" | "no" | "off" | "false" => Some(false),
        _ => None,
    }
}

/// A one-line description of the configuration for `-v` (never a secret).
pub fn describe(cfg: &AwsConfig) -> String {
    format!(
        "EC2 instance {} in {}, {}, {} s per request{}{}",
        if cfg.instance_id.is_empty() {
            "(none: listing)"
        } else {
            &cfg.instance_id
        },
        cfg.region,
        match &cfg.keys {
            GivenKeys::Chain => "credentials from the AWS credential chain".to_string(),
            GivenKeys::Keys { .. } => "access key and secret key given [set]".to_string(),
        },
        cfg.request_timeout.as_secs(),
        if cfg.allow_self_fence {
            ", self-fencing allowed"
        } else {
            ""
        },
        if cfg.skip_os_shutdown {
            ", off skips the OS shutdown"
        } else {
            ""
        }
    )
}

/// The family's configuration from validated option values, for the
/// front (declared in [`FAMILY`]).
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

impl Device for AwsConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        crate::aws::driver::AwsDriver::new(*self)
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How the platform serves the fence_aws family (`Platform::agent_family`).
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    ..AgentFamily::new(device)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<AwsConfig, String> {
        let (v, a) = validated("fence_aws", pairs);
        config(&v, &a)
    }

    #[test]
    fn options_map_to_the_instance_and_the_keys() {
        let c = cfg_of(&[
            ("region", "eu-west-1"),
            ("plug", "i-0123456789abcdef0"),
            ("access_key", "AKIAEXAMPLE"),
            ("secret_key", "hunter2"),
        ])
        .unwrap();
        assert_eq!(
            (c.region.as_str(), c.instance_id.as_str()),
            ("eu-west-1", "i-0123456789abcdef0")
        );
        assert!(matches!(c.keys, GivenKeys::Keys { .. }));
        assert_eq!(c.request_timeout, Duration::from_secs(60));
        assert!(!describe(&c).contains("hunter2"));
        let c = cfg_of(&[("region", "eu-west-1"), ("plug", "i-01234567")]).unwrap();
        assert_eq!(c.keys, GivenKeys::Chain);
        let e = cfg_of(&[
            ("region", "eu-west-1"),
            ("plug", "i-01234567"),
            ("access_key", "A"),
        ])
        .unwrap_err();
        assert!(e.contains("both"), "{e}");
        let e = cfg_of(&[("region", "eu-west-1"), ("plug", "node1")]).unwrap_err();
        assert!(e.contains("not an EC2 instance ID"), "{e}");
        let e = cfg_of(&[
            ("region", "eu-west-1"),
            ("action", "list"),
            ("filter", "nokey"),
        ])
        .unwrap_err();
        assert!(e.contains("not a filter"), "{e}");
        let c = cfg_of(&[
            ("region", "eu-west-1"),
            ("action", "list"),
            ("filter", "tag:Name=w-0"),
            ("power_timeout", "5"),
        ])
        .unwrap();
        assert_eq!(c.list_filter, Some(("tag:Name".into(), "w-0".into())));
        assert_eq!(c.request_timeout, Duration::from_secs(5));
        assert!(c.skip_os_shutdown, "upstream's default is true");
        let skip = |v: &str| {
            cfg_of(&[
                ("region", "eu-west-1"),
                ("plug", "i-01234567"),
                ("skip_os_shutdown", v),
            ])
        };
        assert!(!skip("false").unwrap().skip_os_shutdown);
        assert!(!skip("Off").unwrap().skip_os_shutdown);
        assert!(skip("YES").unwrap().skip_os_shutdown);
        let e = skip("maybe").unwrap_err();
        assert!(e.contains("skip_os_shutdown"), "{e}");
    }
}
