//! What a caller sets for one KubeVirt virtual machine: where the
//! credentials come from (a kubeconfig and its context, or the in-cluster
//! service account), the namespace and name of the VirtualMachine, the API
//! version and TLS leniency (the VM's `metadata.uid` pin is an identity name:
//! [`super::driver`] reports it).
//! `kubevirt://[CONTEXT@]NAMESPACE/VM` targets, and the environment the
//! client libraries read (as a snapshot, so tests can give their own).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The KubeVirt API version used unless asked otherwise (fence-agents'
/// `--apiversion` default).
pub const DEFAULT_API_VERSION: &str = "kubevirt.io/v1";

/// Why a KubeVirt configuration cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `kubevirt://[CONTEXT@]NAMESPACE/VM`.
    #[error("'{0}' is not a KubeVirt target (expected kubevirt://NAMESPACE/VM or kubevirt://CONTEXT@NAMESPACE/VM, e.g. kubevirt://guests/node-1)")]
    BadTarget(String),
    /// A namespace or VM name that Kubernetes would not accept.
    #[error("'{0}' is not a Kubernetes {1} name (lower-case letters, digits, '-' and '.', at most 253 characters, starting and ending with a letter or digit)")]
    BadName(String, &'static str),
    /// No VM.
    #[error("no virtual machine: give the VirtualMachine's name (--plug)")]
    NoVm,
    /// `--apiversion` that is not GROUP/VERSION of KubeVirt.
    #[error("'{0}' is not a KubeVirt API version (expected GROUP/VERSION, e.g. kubevirt.io/v1)")]
    BadApiVersion(String),
}

/// One VirtualMachine and how to reach its cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubevirtConfig {
    /// The VirtualMachine's namespace; `None`: the context's, else `default`.
    pub namespace: Option<String>,
    /// The VirtualMachine's name (the agent's plug).
    pub vm: String,
    /// The kubeconfig context to use instead of the current one.
    pub context: Option<String>,
    /// `--kubeconfig`: this file only (then `KUBECONFIG` and `~/.kube/config` are not read).
    pub kubeconfig: Option<PathBuf>,
    /// `GROUP/VERSION` of the KubeVirt API (`kubevirt.io/v1`).
    pub api_version: String,
    /// Accept any server certificate (`--ssl-insecure`): warned.
    pub insecure: bool,
    /// Bound of one HTTP request.
    pub request_timeout: Duration,
}

impl KubevirtConfig {
    /// A VM in a namespace, everything else by default.
    pub fn new(namespace: Option<&str>, vm: &str) -> Self {
        KubevirtConfig {
            namespace: namespace.map(str::to_string),
            vm: vm.to_string(),
            context: None,
            kubeconfig: None,
            api_version: DEFAULT_API_VERSION.to_string(),
            insecure: false,
            request_timeout: Duration::from_secs(10),
        }
    }

    /// Parses `kubevirt://[CONTEXT@]NAMESPACE/VM`.
    pub fn from_url(url: &str) -> Result<Self, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
        if !scheme.eq_ignore_ascii_case("kubevirt") {
            return Err(bad());
        }
        let rest = rest.trim_end_matches('/');
        let (context, path) = match rest.rsplit_once('@') {
            Some((c, p)) if !c.is_empty() => (Some(c.to_string()), p),
            Some(_) => return Err(bad()),
            None => (None, rest),
        };
        let (ns, vm) = path.split_once('/').ok_or_else(bad)?;
        if ns.is_empty() || vm.is_empty() || vm.contains('/') {
            return Err(bad());
        }
        let mut c = KubevirtConfig::new(Some(ns), vm);
        c.context = context;
        c.validate()?;
        Ok(c)
    }

    /// Checks names and the API version.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.vm.is_empty() {
            return Err(ConfigError::NoVm);
        }
        check_name(&self.vm, "VirtualMachine")?;
        if let Some(ns) = &self.namespace {
            check_name(ns, "namespace")?;
        }
        let ok = self.api_version.split_once('/').is_some_and(|(g, v)| {
            !g.is_empty()
                && !v.is_empty()
                && !v.contains('/')
                && self
                    .api_version
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"./-".contains(&b))
        });
        if !ok {
            return Err(ConfigError::BadApiVersion(self.api_version.clone()));
        }
        Ok(())
    }

    /// The KubeVirt API group (`kubevirt.io`).
    pub fn group(&self) -> &str {
        self.api_version
            .split_once('/')
            .map_or("kubevirt.io", |p| p.0)
    }

    /// The KubeVirt API version (`v1`).
    pub fn version(&self) -> &str {
        self.api_version.split_once('/').map_or("v1", |p| p.1)
    }

    /// The target as a URL (no credentials), namespace as given or `-`.
    pub fn url(&self) -> String {
        format!(
            "kubevirt://{}{}/{}",
            self.context
                .as_deref()
                .map(|c| format!("{c}@"))
                .unwrap_or_default(),
            self.namespace.as_deref().unwrap_or("-"),
            self.vm
        )
    }

    /// The power domain: one VM of one namespace (of one context).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let mut name = format!("{}.{}", self.vm, self.namespace.as_deref().unwrap_or("-"));
        if let Some(c) = &self.context {
            name.push('.');
            name.push_str(c);
        }
        name.push_str(".kubevirt");
        crate::lock::DeviceKey::new(&name, 0, 0)
    }
}

/// A DNS-1123 subdomain (namespaces are DNS labels, a subset).
fn check_name(s: &str, what: &'static str) -> Result<(), ConfigError> {
    let b = s.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 253
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'.')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(ConfigError::BadName(s.to_string(), what))
    }
}

/// The service account's mount in a pod.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The variables the client libraries read, as a snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Env(BTreeMap<String, String>);

/// Every variable the KubeVirt driver reads. `FENCEKIT_SERVICEACCOUNT_DIR`
/// moves the service account's mount (tests, unusual mounts).
pub const ENV_VARS: &[&str] = &[
    "KUBECONFIG",
    "HOME",
    "KUBERNETES_SERVICE_HOST",
    "KUBERNETES_SERVICE_PORT",
    "FENCEKIT_SERVICEACCOUNT_DIR",
];

impl Env {
    /// The process's variables (only those in [`ENV_VARS`]).
    pub fn from_process() -> Env {
        Env(ENV_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect())
    }

    /// Given pairs (tests).
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Env {
        Env(pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    /// A variable, `None` when unset or empty.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// Where the service account is mounted.
    pub fn service_account_dir(&self) -> PathBuf {
        PathBuf::from(
            self.get("FENCEKIT_SERVICEACCOUNT_DIR")
                .unwrap_or(SERVICE_ACCOUNT_DIR),
        )
    }
}

/// `kubevirt://` as users read it in `--help`, the man pages and the README.
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[crate::engine::driver::UrlForm {
    scheme: "kubevirt",
    form: "kubevirt://[CONTEXT@]NAMESPACE/VM",
    meaning: "a KubeVirt / OpenShift Virtualization VirtualMachine, through the Kubernetes API",
    target: true,
    example: "kubevirt://guests/node-1",
}];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_namespace_and_a_vm_with_an_optional_context() {
        let c = KubevirtConfig::from_url("kubevirt://guests/node-1").unwrap();
        assert_eq!(c.namespace.as_deref(), Some("guests"));
        assert_eq!(c.vm, "node-1");
        assert_eq!(c.context, None);
        assert_eq!(c.url(), "kubevirt://guests/node-1");
        let c = KubevirtConfig::from_url("KubeVirt://admin@ocp-1@guests/node-1/").unwrap();
        assert_eq!(c.context.as_deref(), Some("admin@ocp-1"));
        assert_eq!(c.namespace.as_deref(), Some("guests"));
        assert_eq!(c.url(), "kubevirt://admin@ocp-1@guests/node-1");
        assert_ne!(
            c.lock_key(),
            KubevirtConfig::from_url("kubevirt://guests/node-1")
                .unwrap()
                .lock_key()
        );
        for bad in [
            "kubevirt://node-1",
            "kubevirt:///node-1",
            "kubevirt://guests/",
            "kubevirt://@guests/vm",
            "kubevirt://a/b/c",
            "aws://guests/vm",
            "kubevirt://Guests/vm",
            "kubevirt://guests/vm_1",
            "guests/vm",
        ] {
            assert!(KubevirtConfig::from_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn api_versions_are_group_and_version() {
        let mut c = KubevirtConfig::new(Some("ns"), "vm");
        assert_eq!((c.group(), c.version()), ("kubevirt.io", "v1"));
        c.api_version = "kubevirt.io/v1alpha3".into();
        assert!(c.validate().is_ok());
        assert_eq!(c.version(), "v1alpha3");
        for bad in [
            "v1",
            "kubevirt.io/",
            "/v1",
            "kubevirt.io/v1/x",
            "kube virt/v1",
        ] {
            c.api_version = bad.into();
            assert!(c.validate().is_err(), "{bad}");
        }
        let c = KubevirtConfig::new(None, "");
        assert_eq!(c.validate(), Err(ConfigError::NoVm));
    }

    #[test]
    fn the_url_forms_parse() {
        for f in super::URL_FORMS {
            assert!(f.form.starts_with(&format!("{}://", f.scheme)), "{f:?}");
            KubevirtConfig::from_url(f.example).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }
}
