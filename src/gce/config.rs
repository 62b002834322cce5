//! What a caller sets for one Compute Engine instance: project, zone and
//! instance name (the project and zone may come from the metadata server),
//! the zones a `list` covers, the credentials (a service-account key file,
//! `GOOGLE_APPLICATION_CREDENTIALS`, the metadata server), the API's
//! endpoint and trust, a proxy, and whether the instance may be the one
//! this process runs on. `gce://PROJECT/ZONE/INSTANCE` targets, the lock
//! key (the project is the address: its instances share its API quota),
//! and the environment variables Google's libraries read, as a snapshot.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Compute Engine's API, when no other endpoint is given.
pub const COMPUTE: &str = "https://compute.googleapis.com";
/// The metadata server's host, when `GCE_METADATA_HOST` names no other.
pub const METADATA_HOST: &str = "metadata.google.internal";

/// Why a GCE configuration cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `gce://PROJECT/ZONE/INSTANCE`.
    #[error("'{0}' is not a GCE target (expected gce://PROJECT/ZONE/INSTANCE, e.g. gce://my-project/europe-west4-a/node1)")]
    BadTarget(String),
    /// A name that cannot be a project ID.
    #[error("'{0}' is not a project ID (6-30 lower-case letters, digits or '-', or DOMAIN:ID)")]
    BadProject(String),
    /// A name that cannot be a zone.
    #[error("'{0}' is not a zone (lower-case letters, digits and '-', e.g. us-central1-a)")]
    BadZone(String),
    /// An instance name Compute Engine would refuse.
    #[error("'{0}' is not an instance name (1-63 lower-case letters, digits or '-', starting with a letter)")]
    BadInstance(String),
    /// No instance.
    #[error("no instance: give the instance's name (--plug NAME)")]
    NoInstance,
    /// An endpoint that is not an https URL of a host.
    #[error("'{0}' is not an endpoint URL (expected https://HOST[:PORT][/]; tokens are sent only over TLS)")]
    BadEndpoint(String),
    /// Bare Metal Solution.
    #[error("--baremetalsolution is not supported: upstream never reads a Bare Metal Solution server's state (its status answers the opposite of the action asked), and fencekit reports only what it observes (docs/gce.md); fence the server through its BMC instead")]
    BareMetal,
    /// A proxy that is not host and port.
    #[error("the proxy needs --proxyhost and --proxyport together (an http proxy)")]
    BadProxy,
}

/// The credentials a caller chose.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Auth {
    /// Application default credentials: `GOOGLE_APPLICATION_CREDENTIALS`'s
    /// key file, else the metadata server's service account.
    #[default]
    Default,
    /// A service-account key file (JSON).
    KeyFile(PathBuf),
    /// The metadata server's service account only.
    Metadata,
}

impl Auth {
    /// What the `-v` line and plans say of it (never a secret).
    pub fn describe(&self) -> String {
        match self {
            Auth::Default => "application default credentials (GOOGLE_APPLICATION_CREDENTIALS, \
                              then the metadata server's service account)"
                .to_string(),
            Auth::KeyFile(p) => format!("the service-account key file {}", p.display()),
            Auth::Metadata => "the metadata server's service account".to_string(),
        }
    }
}

/// The settings of one Compute Engine instance as a fencing device.
#[derive(Clone, Debug)]
pub struct GceConfig {
    /// The project (empty: the metadata server's).
    pub project: String,
    /// The instance's zone (empty: looked up by name in the project).
    pub zone: String,
    /// Every zone `list` covers (empty: the instance's zone).
    pub zones: Vec<String>,
    /// The instance's name (empty: only listing).
    pub instance: String,
    /// The credentials.
    pub auth: Auth,
    /// Compute Engine's API instead of the public one (tests, Private
    /// Service Connect).
    pub api_endpoint: Option<String>,
    /// A PEM file of certificates to trust instead of the system store.
    pub ca_cert: Option<PathBuf>,
    /// Accept any certificate (warned).
    pub insecure: bool,
    /// An http proxy (`http://HOST:PORT`, upstream's --proxyhost/--proxyport).
    pub proxy: Option<String>,
    /// Each request's own bound.
    pub request_timeout: Duration,
    /// The instance may be the one this process runs on.
    pub allow_self_fence: bool,
    /// `monitor`: read one resource (the instance), never a list.
    pub monitor_only: bool,
    /// `list-status`: the listed instances' states.
    pub list_states: bool,
    /// Upstream's `--earlyexit` was given (accepted; the state is still
    /// confirmed).
    pub early_exit: bool,
}

impl GceConfig {
    /// A configuration for `instance` with default credentials and timeouts.
    pub fn new(project: &str, zone: &str, instance: &str) -> Self {
        GceConfig {
            project: project.trim().to_string(),
            zone: zone.trim().to_string(),
            zones: Vec::new(),
            instance: instance.trim().to_string(),
            auth: Auth::Default,
            api_endpoint: None,
            ca_cert: None,
            insecure: false,
            proxy: None,
            request_timeout: Duration::from_secs(30),
            allow_self_fence: false,
            monitor_only: false,
            list_states: false,
            early_exit: false,
        }
    }

    /// The per-device lock key: the project is the address (its quota is
    /// shared), the zone and instance the system.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let project = match self.project.is_empty() {
            true => "metadata".to_string(),
            false => self.project.replace(':', "."),
        };
        let system = format!("{}/{}", self.zone, self.instance);
        crate::lock::DeviceKey::new(&format!("{project}.gce"), 0, 0).with_system(Some(&system), "")
    }

    /// Checks the names and the endpoint.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.project.is_empty() {
            check_project(&self.project)?;
        }
        if !self.zone.is_empty() {
            check_zone(&self.zone)?;
        }
        for z in &self.zones {
            check_zone(z)?;
        }
        if !self.instance.is_empty() {
            check_instance(&self.instance)?;
        }
        if let Some(e) = &self.api_endpoint {
            check_https(e)?;
        }
        Ok(())
    }

    /// The zones a list covers.
    pub fn list_zones(&self) -> Vec<String> {
        match (self.zones.is_empty(), self.zone.is_empty()) {
            (false, _) => self.zones.clone(),
            (true, false) => vec![self.zone.clone()],
            (true, true) => Vec::new(),
        }
    }
}

/// True for a `gce://` URL.
pub fn is_gce_url(url: &str) -> bool {
    url.get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("gce://"))
}

/// Project, zone and instance of a `gce://` target.
pub fn parse_target(url: &str) -> Result<(String, String, String), ConfigError> {
    let bad = || ConfigError::BadTarget(url.to_string());
    if !is_gce_url(url) {
        return Err(bad());
    }
    let parts: Vec<&str> = url[6..].trim_end_matches('/').split('/').collect();
    let [project, zone, instance] = parts[..] else {
        return Err(bad());
    };
    check_project(project)?;
    check_zone(zone)?;
    check_instance(instance)?;
    Ok((project.into(), zone.into(), instance.into()))
}

/// A project ID (`my-project`, or a domain-scoped `example.com:my-project`).
pub fn check_project(s: &str) -> Result<(), ConfigError> {
    let id = s.rsplit(':').next().unwrap_or(s);
    let ok = (6..=30).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-.:".contains(c));
    ok.then_some(())
        .ok_or_else(|| ConfigError::BadProject(s.to_string()))
}

/// A zone name (`us-central1-a`).
pub fn check_zone(s: &str) -> Result<(), ConfigError> {
    let ok = (1..=63).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    ok.then_some(())
        .ok_or_else(|| ConfigError::BadZone(s.to_string()))
}

/// An instance name as Compute Engine takes one (RFC 1035 labels).
pub fn check_instance(s: &str) -> Result<(), ConfigError> {
    let ok = (1..=63).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    ok.then_some(())
        .ok_or_else(|| ConfigError::BadInstance(s.to_string()))
}

/// An https URL of a host (a path is refused: fencekit adds its own).
pub fn check_https(url: &str) -> Result<(), ConfigError> {
    let bad = || ConfigError::BadEndpoint(url.to_string());
    let rest = url.strip_prefix("https://").ok_or_else(bad)?;
    let host = rest.trim_end_matches('/');
    if host.is_empty() || host.contains(['/', '@', '?', '#', ' ']) {
        return Err(bad());
    }
    Ok(())
}

/// `--proxyhost` and `--proxyport` as a proxy URL.
pub fn proxy_url(host: Option<&str>, port: Option<&str>) -> Result<Option<String>, ConfigError> {
    match (host, port) {
        (None, None) => Ok(None),
        (Some(h), Some(p)) if !h.is_empty() && p.parse::<u16>().is_ok() => {
            let h = h.trim_start_matches("http://").trim_end_matches('/');
            Ok(Some(format!("http://{h}:{p}")))
        }
        _ => Err(ConfigError::BadProxy),
    }
}

/// The environment variables Google's libraries read, as a snapshot
/// (tests build their own with [`Env::from_pairs`]).
#[derive(Clone, Debug, Default)]
pub struct Env(BTreeMap<String, String>);

/// Every variable fencekit's GCE driver reads.
pub const ENV_VARS: &[&str] = &[
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GCE_METADATA_HOST",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
];

impl Env {
    /// The process's variables (only those in [`ENV_VARS`]).
    pub fn from_process() -> Env {
        Env(ENV_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect())
    }

    /// Given variables (tests).
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Env {
        Env(pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    /// A variable's value, when set and not empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// The variable as the HTTP layer reads the environment.
    pub fn lookup(&self, key: &str) -> Option<String> {
        self.get(key).map(str::to_string)
    }

    /// The metadata server's base URL (`GCE_METADATA_HOST` as Google's
    /// libraries read it: a host and port).
    pub fn metadata_base(&self) -> String {
        let host = self.get("GCE_METADATA_HOST").unwrap_or(METADATA_HOST);
        format!(
            "http://{}/computeMetadata/v1",
            host.trim_start_matches("http://").trim_end_matches('/')
        )
    }
}

/// The target URL form of GCE (see [`crate::engine::driver::UrlForm`]).
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[crate::engine::driver::UrlForm {
    scheme: "gce",
    form: "gce://PROJECT/ZONE/INSTANCE",
    meaning: "a Google Compute Engine instance, through the Compute Engine API",
    target: true,
    example: "gce://my-project/europe-west4-a/node1",
}];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_project_a_zone_and_an_instance() {
        assert_eq!(
            parse_target("gce://my-project/us-central1-a/node-1").unwrap(),
            ("my-project".into(), "us-central1-a".into(), "node-1".into())
        );
        assert!(parse_target("GCE://example.com:my-proj/z-1/n/").is_ok());
        assert!(matches!(
            parse_target("gce://x/z/n"),
            Err(ConfigError::BadProject(_))
        ));
        assert!(matches!(
            parse_target("gce://my-project/z"),
            Err(ConfigError::BadTarget(_))
        ));
        assert!(matches!(
            parse_target("gce://my-project/Z/n"),
            Err(ConfigError::BadZone(_))
        ));
        assert!(matches!(
            parse_target("gce://my-project/z/1node"),
            Err(ConfigError::BadInstance(_))
        ));
        assert!(check_instance(&"a".repeat(64)).is_err() && check_instance("a-").is_err());
        assert!(is_gce_url("gce://a") && !is_gce_url("azure://x"));
        for f in URL_FORMS {
            parse_target(f.example).unwrap();
        }
    }

    #[test]
    fn the_lock_key_is_the_project_and_the_instance() {
        let a = GceConfig::new("my-project", "z-a", "n1").lock_key();
        let b = GceConfig::new("my-project", "z-a", "n2").lock_key();
        assert_ne!(a, b);
        assert_eq!(a.address(), b.address(), "one project, one address");
    }

    #[test]
    fn proxies_zones_and_the_metadata_server() {
        assert_eq!(
            proxy_url(Some("10.0.0.1"), Some("3128"))
                .unwrap()
                .as_deref(),
            Some("http://10.0.0.1:3128")
        );
        assert_eq!(proxy_url(Some("h"), None), Err(ConfigError::BadProxy));
        assert_eq!(proxy_url(None, None), Ok(None));
        let mut c = GceConfig::new("my-project", "z-a", "n1");
        assert_eq!(c.list_zones(), vec!["z-a".to_string()]);
        c.zones = vec!["z-b".into(), "z-c".into()];
        assert_eq!(c.list_zones().len(), 2);
        c.api_endpoint = Some("http://x".into());
        assert!(c.validate().is_err());
        assert_eq!(
            Env::default().metadata_base(),
            "http://metadata.google.internal/computeMetadata/v1"
        );
        assert_eq!(
            Env::from_pairs(&[("GCE_METADATA_HOST", "127.0.0.1:8080")]).metadata_base(),
            "http://127.0.0.1:8080/computeMetadata/v1"
        );
    }
}
