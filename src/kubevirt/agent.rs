//! The fence_kubevirt family's own part: options → [`KubevirtConfig`].
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]);
//! this module only knows which option feeds which setting: the plug is the
//! VirtualMachine's name, `--namespace` its namespace (default: the
//! kubeconfig context's), `--kubeconfig` the only kubeconfig read (default:
//! `KUBECONFIG`, `~/.kube/config`, then the pod's service account),
//! `--apiversion` the KubeVirt group/version, `--ssl-insecure` accepts any
//! certificate (warned).
//!
//! fencekit-only extensions: `--expect-uuid` (the VMI's firmware UUID) and
//! `--expect-vm-uid` (the VM's `metadata.uid`), both read by the engine
//! before any change ([`crate::agent::run::expected_identity`]).

use crate::kubevirt::config::KubevirtConfig;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::Values;
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::platform::Driver;
use std::path::PathBuf;
use std::time::Duration;

/// Per-request bound when `power_timeout` is 0 or timeouts are disabled
/// (upstream's requests have none; fencekit bounds every request).
pub const UNLIMITED_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Builds the configuration from validated option values. The error is a
/// message that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<KubevirtConfig, String> {
    let vm = values.get(Key::Plug).unwrap_or_default().trim().to_string();
    let namespace = values
        .get(Key::Namespace)
        .map(str::trim)
        .filter(|n| !n.is_empty());
    let mut cfg = KubevirtConfig::new(namespace, &vm);
    cfg.kubeconfig = values
        .get(Key::Kubeconfig)
        .filter(|k| !k.is_empty())
        .map(PathBuf::from);
    if let Some(v) = values.get(Key::Apiversion).filter(|v| !v.is_empty()) {
        cfg.api_version = v.trim().to_string();
    }
    cfg.insecure = values.flag_of(agent, Key::SslInsecure);
    cfg.request_timeout = match values.int(Key::PowerTimeout) {
        Some(n) if n > 0 => Duration::from_secs(n.min(60) as u64),
        _ => UNLIMITED_REQUEST_TIMEOUT,
    };
    if vm.is_empty() {
        // list, list-status and monitor name no VM; the rest is still checked.
        let mut probe = cfg.clone();
        probe.vm = "x".into();
        probe.validate().map_err(|e| e.to_string())?;
    } else {
        cfg.validate().map_err(|e| e.to_string())?;
    }
    Ok(cfg)
}

/// A one-line description of the configuration for `-v` (never a secret).
pub fn describe(cfg: &KubevirtConfig) -> String {
    format!(
        "KubeVirt VirtualMachine {} in namespace {}, API {}, credentials from {}, {} s per request{}",
        if cfg.vm.is_empty() { "(none: listing)" } else { &cfg.vm },
        cfg.namespace.as_deref().unwrap_or("(the context's)"),
        cfg.api_version,
        cfg.kubeconfig
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "KUBECONFIG, ~/.kube/config or the service account".into()),
        cfg.request_timeout.as_secs(),
        if cfg.insecure { ", TLS not verified (--ssl-insecure)" } else { "" }
    )
}

/// The family's configuration from validated option values, for the
/// front (declared in [`FAMILY`]).
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

impl Device for KubevirtConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn warnings(&self) -> Vec<String> {
        if self.insecure {
            vec!["--ssl-insecure: the API server's certificate is not verified".into()]
        } else {
            Vec::new()
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        let mut cfg = *self;
        if cfg.vm.is_empty() {
            // Listing: the driver needs a name to be valid; it is never read.
            cfg.vm = "list".into();
        }
        crate::kubevirt::driver::KubevirtDriver::new(cfg)
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How the platform serves the fence_kubevirt family (`Platform::agent_family`).
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    ..AgentFamily::new(device)
};
