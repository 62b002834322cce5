//! The fence_ibm_vpc and fence_ibm_powervs families' own part: options →
//! [`IbmConfig`].
//!
//! fence_ibm_vpc: `--apikey` the API key, `--region`, the plug the
//! instance ID, `--proxy`, `--limit` (the list's page size);
//! `--token-file` is accepted and not used (no plaintext token file: the
//! driver keeps its token in the HTTP layer's encrypted cache).
//! fence_ibm_powervs: `--token` the API key (or, as later upstream
//! releases read it, `@FILE`: a file with the key, as text or as IBM's
//! JSON key file), `--crn` the workspace's CRN, `--instance` the
//! workspace, `--region`, `--api-type` (private by default, as upstream),
//! `--proxy`, the plug the PVM instance ID.
//!
//! fencekit-only extensions: `--endpoint-url`, `--iam-endpoint`,
//! `--ca-cert`, `--allow-self-fence` (VPC), and `--api-type` for VPC.

use super::config::{parse_api_type, IbmConfig, Service};
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::Values;
use crate::platform::agent::{AgentFamily, Device, DeviceConfig, Guidance, GuideRule};
use crate::platform::Driver;
use crate::secret::Secret;
use std::time::Duration;

/// The longest bound of one request: IAM and both APIs answer within
/// seconds; upstream fence_ibm_powervs's 500 s per request is what lets
/// it run for more than 20 minutes.
pub const MAX_REQUEST: Duration = Duration::from_secs(20);

/// The read-by-name option of both families (its key would name the
/// platform in shared code).
const IAM_ENDPOINT: &str = "iam_endpoint";

fn service_of(agent: &Agent) -> Service {
    match agent.family.name.contains("powervs") {
        true => Service::PowerVs,
        false => Service::Vpc,
    }
}

/// An API key given as `@FILE`: the file's key (IBM's JSON key file's
/// `apikey`/`Apikey`, or the text).
fn key_from(value: &str) -> Result<Secret, String> {
    let Some(path) = value.strip_prefix('@') else {
        return Ok(Secret::from_str_value(value));
    };
    let text = zeroize::Zeroizing::new(
        std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the API key file {path}: {e}"))?,
    );
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        for k in ["Apikey", "apikey"] {
            if let Some(s) = v.get(k).and_then(|s| s.as_str()).filter(|s| !s.is_empty()) {
                return Ok(Secret::from_str_value(s));
            }
        }
        return Err(format!("the API key file {path} has no apikey"));
    }
    Ok(Secret::from_str_value(text.trim()))
}

/// Builds the configuration from validated option values. The error is a
/// message that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<IbmConfig, String> {
    let get = |k: Key| values.get(k).map(str::trim).filter(|s| !s.is_empty());
    let service = service_of(agent);
    let mut cfg = IbmConfig::new(
        service,
        get(Key::Region).unwrap_or(""),
        get(Key::Plug).unwrap_or(""),
    );
    let key = match service {
        Service::Vpc => values.get(Key::Apikey),
        Service::PowerVs => values.get(Key::Token),
    };
    cfg.apikey = match key.filter(|k| !k.is_empty()) {
        Some(k) => key_from(k)?,
        None => return Err(super::config::ConfigError::NoApiKey.to_string()),
    };
    cfg.private = parse_api_type(get(Key::ApiType), service == Service::PowerVs)
        .map_err(|e| e.to_string())?;
    if service == Service::PowerVs {
        cfg.workspace = get(Key::Instance).unwrap_or("").to_string();
        cfg.crn = get(Key::Crn).unwrap_or("").to_string();
        if cfg.crn.is_empty() {
            return Err(super::config::ConfigError::NoCrn.to_string());
        }
    }
    cfg.proxy = get(Key::Proxy).map(str::to_string);
    if let Some(n) = values.int(Key::Limit) {
        cfg.limit = n.clamp(1, 100) as u32;
    }
    cfg.api_endpoint = get(Key::EndpointUrl).map(str::to_string);
    cfg.iam_endpoint = values
        .get_named(IAM_ENDPOINT)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    cfg.ca_cert = get(Key::CaCert).map(std::path::PathBuf::from);
    cfg.allow_self_fence = values.flag_of(agent, Key::AllowSelfFence);
    let action = values.get(Key::Action).unwrap_or("");
    cfg.monitor_only = action == "monitor";
    cfg.list_states = action == "list-status";
    cfg.request_timeout = match values.int(Key::ShellTimeout) {
        Some(n) if n > 0 => Duration::from_secs(n as u64).min(MAX_REQUEST),
        _ => MAX_REQUEST,
    };
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// A one-line description for `-v` (never a secret).
pub fn describe(cfg: &IbmConfig) -> String {
    format!(
        "{} instance {}{} in region {}, {} endpoints{}, API key {}, {} s per request{}",
        cfg.service.name(),
        if cfg.instance.is_empty() {
            "(none: listing)"
        } else {
            &cfg.instance
        },
        match cfg.service {
            Service::PowerVs => format!(" of workspace {}", cfg.workspace),
            Service::Vpc => String::new(),
        },
        cfg.region,
        if cfg.private { "private" } else { "public" },
        match cfg.proxy_url() {
            Some(p) => format!(" through {}", crate::http::proxy::without_credentials(&p)),
            None => String::new(),
        },
        crate::platform::agent::values::secret_state(&cfg.apikey),
        cfg.request_timeout.as_secs(),
        if cfg.allow_self_fence {
            ", self-fencing allowed"
        } else {
            ""
        }
    )
}

fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

impl Device for IbmConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        crate::ibm::driver::IbmDriver::new(*self)
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

const POWERVS_GUIDE_SOURCE: &str =
    "IBM's guide to Pacemaker on Power Virtual Server (fence_ibm_powervs STONITH device)";

/// What IBM's Power VS Pacemaker guide sets.
pub const POWERVS_GUIDE: &[Guidance] = &[
    Guidance {
        key: "pcmk_reboot_timeout",
        value: "600",
        rule: GuideRule::AtLeast,
        source: POWERVS_GUIDE_SOURCE,
    },
    Guidance {
        key: "stonith-action",
        value: "off",
        rule: GuideRule::Equal,
        source: POWERVS_GUIDE_SOURCE,
    },
];

/// The fence_ibm_vpc family.
pub static VPC: AgentFamily = AgentFamily {
    lists: true,
    read_by_name: &[IAM_ENDPOINT],
    ..AgentFamily::new(device)
};

/// The fence_ibm_powervs family.
pub static POWERVS: AgentFamily = AgentFamily {
    lists: true,
    read_by_name: &[IAM_ENDPOINT],
    guide: POWERVS_GUIDE,
    ..AgentFamily::new(device)
};

/// The family of an agent definition.
pub fn family(name: &str) -> &'static AgentFamily {
    match name.contains("powervs") {
        true => &POWERVS,
        false => &VPC,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    #[test]
    fn vpc_options_map_to_the_instance() {
        let (v, a) = validated(
            "fence_ibm_vpc",
            &[
                ("apikey", "k-1"),
                ("region", "us-south"),
                ("plug", "0717_a"),
            ],
        );
        let c = config(&v, &a).unwrap();
        assert_eq!((c.service, c.private, c.limit), (Service::Vpc, false, 50));
        assert_eq!(c.request_timeout, Duration::from_secs(15));
        assert!(!describe(&c).contains("k-1"));
        let (v, a) = validated(
            "fence_ibm_vpc",
            &[("region", "us-south"), ("plug", "0717_a")],
        );
        assert!(config(&v, &a).is_err());
    }

    #[test]
    fn powervs_options_and_a_key_file() {
        let dir = std::env::temp_dir().join(format!("fk-ibm-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("key.json");
        std::fs::write(&f, r#"{"name":"k","Apikey":"from-file"}"#).unwrap();
        let at = format!("@{}", f.display());
        let (v, a) = validated(
            "fence_ibm_powervs",
            &[
                ("token", &at),
                ("region", "lon"),
                ("plug", "pvm-1"),
                ("instance", "ws-1"),
                ("crn", "crn:v1:bluemix:public:power-iaas:lon06:a/acc:ws-1::"),
            ],
        );
        let c = config(&v, &a).unwrap();
        assert_eq!(c.apikey.expose(), b"from-file");
        assert!(c.private, "upstream's default api-type is private");
        assert_eq!(c.request_timeout, MAX_REQUEST);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(std::ptr::eq(family("fence_ibm_powervs"), &POWERVS));
    }
}
