//! What a caller sets for one IBM Cloud machine: the service (a VPC
//! virtual server instance, or a Power Virtual Server instance of a
//! workspace, with the workspace's CRN every Power VS request carries),
//! the region, the API key, public or private endpoints, a proxy, the
//! trust, and whether the instance may be the one this process runs on.
//! `ibmvpc://REGION/INSTANCE` and `powervs://REGION/WORKSPACE/INSTANCE`
//! targets, the lock key (an account's region is the address: its rate
//! limit is shared) and the endpoint variables fencekit reads.

use crate::secret::Secret;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Why an IBM Cloud configuration cannot work, found before anything is sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not one of the two target forms.
    #[error("'{0}' is not an IBM Cloud target (expected ibmvpc://REGION/INSTANCE-ID or powervs://REGION/WORKSPACE-ID/INSTANCE-ID)")]
    BadTarget(String),
    /// A region name IBM Cloud would not have.
    #[error(
        "'{0}' is not a region (lower-case letters, digits and '-', e.g. us-south, eu-de, lon)"
    )]
    BadRegion(String),
    /// An ID with characters an ID never has.
    #[error("'{0}' is not an instance ID (letters, digits, '-' and '_', at most 64)")]
    BadId(String),
    /// No instance.
    #[error("no instance: give the instance ID (--plug ID)")]
    NoInstance,
    /// Power VS without its workspace.
    #[error("Power Virtual Server needs the workspace (cloud instance) ID (--instance)")]
    NoWorkspace,
    /// Power VS without the CRN.
    #[error(
        "Power Virtual Server needs the workspace's CRN (--crn crn:v1:bluemix:public:power-iaas:…)"
    )]
    NoCrn,
    /// A CRN that is not one.
    #[error("'{0}' is not a CRN (expected crn:v1:…)")]
    BadCrn(String),
    /// No API key.
    #[error("no API key: give --apikey (VPC) or --token (Power VS), or the password options")]
    NoApiKey,
    /// An unknown `--api-type`.
    #[error("'{0}' is not an API type (public or private)")]
    BadApiType(String),
    /// An endpoint that is not an https URL of a host.
    #[error("'{0}' is not an endpoint URL (expected https://HOST[:PORT][/]; the API key is sent only over TLS)")]
    BadEndpoint(String),
    /// A proxy that is not `http://HOST:PORT`.
    #[error("'{0}' is not a proxy URL (expected http://HOST:PORT)")]
    BadProxy(String),
}

/// Which IBM Cloud service holds the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// A VPC virtual server instance (`/v1/instances`).
    Vpc,
    /// A Power Virtual Server instance (`/pcloud/v1/cloud-instances/W/pvm-instances`).
    PowerVs,
}

impl Service {
    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Service::Vpc => "IBM Cloud VPC",
            Service::PowerVs => "IBM Power Virtual Server",
        }
    }

    /// Its target scheme.
    pub fn scheme(self) -> &'static str {
        match self {
            Service::Vpc => "ibmvpc",
            Service::PowerVs => "powervs",
        }
    }
}

/// The environment variables fencekit reads (IBM's SDKs' and Terraform
/// provider's names for the endpoints; the proxy variables; where the
/// token cache is, and its switch).
pub const ENV_VARS: &[&str] = &[
    "IBMCLOUD_IAM_API_ENDPOINT",
    "IBMCLOUD_IS_NG_API_ENDPOINT",
    "IBMCLOUD_PI_API_ENDPOINT",
    "IBM_VPC_METADATA_SERVICE_ENDPOINT",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "XDG_RUNTIME_DIR",
    crate::http::token_cache::SWITCH,
];

/// The environment, as a snapshot (tests build their own).
#[derive(Clone, Debug, Default)]
pub struct Env(BTreeMap<String, String>);

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
}

/// The settings of one IBM Cloud machine as a fencing device.
#[derive(Clone, Debug)]
pub struct IbmConfig {
    /// VPC or Power VS.
    pub service: Service,
    /// The region (`us-south`; Power VS: its endpoint's region, `lon`, `us-south`).
    pub region: String,
    /// The instance ID (VPC) or PVM instance ID (Power VS); empty: listing.
    pub instance: String,
    /// Power VS: the workspace (cloud instance) ID.
    pub workspace: String,
    /// Power VS: the workspace's CRN (the `CRN` header).
    pub crn: String,
    /// The API key.
    pub apikey: Secret,
    /// Private endpoints (IAM, the service).
    pub private: bool,
    /// The service's endpoint instead of the region's (https).
    pub api_endpoint: Option<String>,
    /// IAM's endpoint instead of IBM's (https).
    pub iam_endpoint: Option<String>,
    /// A proxy for every request (upstream's `--proxy`); else the
    /// environment's.
    pub proxy: Option<String>,
    /// A PEM file of certificates to trust instead of the system store.
    pub ca_cert: Option<PathBuf>,
    /// Each request's own bound.
    pub request_timeout: Duration,
    /// The instance may be the one this process runs on.
    pub allow_self_fence: bool,
    /// `monitor`: one read, never the list.
    pub monitor_only: bool,
    /// `list-status`: states in the list.
    pub list_states: bool,
    /// VPC: the page size of a list (upstream's `--limit`).
    pub limit: u32,
}

impl IbmConfig {
    /// A configuration with public endpoints and default bounds.
    pub fn new(service: Service, region: &str, instance: &str) -> Self {
        IbmConfig {
            service,
            region: region.trim().to_string(),
            instance: instance.trim().to_string(),
            workspace: String::new(),
            crn: String::new(),
            apikey: Secret::default(),
            private: false,
            api_endpoint: None,
            iam_endpoint: None,
            proxy: None,
            ca_cert: None,
            request_timeout: Duration::from_secs(15),
            allow_self_fence: false,
            monitor_only: false,
            list_states: false,
            limit: 50,
        }
    }

    /// The per-device lock key: the region of the service is the address
    /// (with the workspace for Power VS), the instance the system.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let address = match self.service {
            Service::Vpc => format!("{}.ibmvpc", self.region.to_ascii_lowercase()),
            Service::PowerVs => format!(
                "{}.{}.powervs",
                self.workspace.to_ascii_lowercase(),
                self.region.to_ascii_lowercase()
            ),
        };
        crate::lock::DeviceKey::new(&address, 0, 0)
            .with_system(Some(&self.instance.to_ascii_lowercase()), "")
    }

    /// Checks the names, the CRN, the endpoints and the proxy.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_region(&self.region)?;
        if !self.instance.is_empty() {
            check_id(&self.instance)?;
        }
        if self.service == Service::PowerVs {
            if self.workspace.is_empty() {
                return Err(ConfigError::NoWorkspace);
            }
            check_id(&self.workspace)?;
            // A missing CRN is found when connecting (a target URL names none).
            if !self.crn.is_empty() && !self.crn.starts_with("crn:v1:")
                || self.crn.contains(['\r', '\n'])
            {
                return Err(ConfigError::BadCrn(self.crn.clone()));
            }
        }
        for e in [&self.api_endpoint, &self.iam_endpoint]
            .into_iter()
            .flatten()
        {
            check_https(e)?;
        }
        if let Some(p) = self.proxy_url() {
            // A bare HOST:PORT is what curl takes (read as http://).
            if !p.starts_with("http://") {
                return Err(ConfigError::BadProxy(p));
            }
        }
        Ok(())
    }

    /// The proxy URL to use, with `http://` added to a bare `HOST:PORT`
    /// (as curl reads upstream's option); `None` for none given.
    pub fn proxy_url(&self) -> Option<String> {
        let p = self
            .proxy
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())?;
        Some(match p.contains("://") {
            true => p.to_string(),
            false => format!("http://{p}"),
        })
    }

    /// The service's base URL (without a trailing slash): the override,
    /// the environment's, or the region's public or private endpoint.
    pub fn api_base(&self, env: &Env) -> String {
        let var = match self.service {
            Service::Vpc => "IBMCLOUD_IS_NG_API_ENDPOINT",
            Service::PowerVs => "IBMCLOUD_PI_API_ENDPOINT",
        };
        if let Some(e) = self.api_endpoint.as_deref().or_else(|| env.get(var)) {
            return e.trim_end_matches('/').to_string();
        }
        let r = &self.region;
        match (self.service, self.private) {
            (Service::Vpc, false) => format!("https://{r}.iaas.cloud.ibm.com"),
            (Service::Vpc, true) => format!("https://{r}.private.iaas.cloud.ibm.com"),
            (Service::PowerVs, false) => format!("https://{r}.power-iaas.cloud.ibm.com"),
            (Service::PowerVs, true) => format!("https://private.{r}.power-iaas.cloud.ibm.com"),
        }
    }

    /// IAM's token URL.
    pub fn iam_token_url(&self, env: &Env) -> String {
        let base = match self
            .iam_endpoint
            .as_deref()
            .or_else(|| env.get("IBMCLOUD_IAM_API_ENDPOINT"))
        {
            Some(e) => e.trim_end_matches('/').to_string(),
            None if self.private => "https://private.iam.cloud.ibm.com".to_string(),
            None => "https://iam.cloud.ibm.com".to_string(),
        };
        format!("{base}/identity/token")
    }

    /// The target this configuration names.
    pub fn target(&self) -> String {
        match self.service {
            Service::Vpc => format!("ibmvpc://{}/{}", self.region, self.instance),
            Service::PowerVs => format!(
                "powervs://{}/{}/{}",
                self.region, self.workspace, self.instance
            ),
        }
    }
}

/// The API type upstream's `--api-type` names: `Ok(true)` for private.
pub fn parse_api_type(s: Option<&str>, default_private: bool) -> Result<bool, ConfigError> {
    match s.map(str::trim).unwrap_or("").to_ascii_lowercase().as_str() {
        "" => Ok(default_private),
        "public" => Ok(false),
        "private" => Ok(true),
        other => Err(ConfigError::BadApiType(other.to_string())),
    }
}

/// The service of a target URL's scheme.
pub fn service_of(url: &str) -> Option<Service> {
    let (scheme, _) = url.split_once("://")?;
    match scheme.to_ascii_lowercase().as_str() {
        "ibmvpc" => Some(Service::Vpc),
        "powervs" => Some(Service::PowerVs),
        _ => None,
    }
}

/// Service, region, workspace (Power VS; empty for VPC) and instance of a target.
pub fn parse_target(url: &str) -> Result<(Service, String, String, String), ConfigError> {
    let bad = || ConfigError::BadTarget(url.to_string());
    let service = service_of(url).ok_or_else(bad)?;
    let rest = url
        .split_once("://")
        .ok_or_else(bad)?
        .1
        .trim_end_matches('/');
    let parts: Vec<&str> = rest.split('/').collect();
    let (region, workspace, instance) = match (service, &parts[..]) {
        (Service::Vpc, [r, i]) => (*r, "", *i),
        (Service::PowerVs, [r, w, i]) => (*r, *w, *i),
        _ => return Err(bad()),
    };
    check_region(region)?;
    check_id(instance)?;
    if service == Service::PowerVs {
        check_id(workspace)?;
    }
    Ok((
        service,
        region.to_string(),
        workspace.to_string(),
        instance.to_string(),
    ))
}

/// A region name.
pub fn check_region(s: &str) -> Result<(), ConfigError> {
    let ok = (2..=32).contains(&s.len())
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && !s.starts_with('-');
    ok.then_some(())
        .ok_or_else(|| ConfigError::BadRegion(s.to_string()))
}

/// An instance, PVM instance or workspace ID (it goes into a URL path).
pub fn check_id(s: &str) -> Result<(), ConfigError> {
    let ok = (1..=64).contains(&s.len())
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_');
    ok.then_some(())
        .ok_or_else(|| ConfigError::BadId(s.to_string()))
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

/// The target URL forms (see [`crate::engine::driver::UrlForm`]).
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[
    crate::engine::driver::UrlForm {
        scheme: "ibmvpc",
        form: "ibmvpc://REGION/INSTANCE-ID",
        meaning: "an IBM Cloud VPC virtual server instance, through the VPC API and IAM",
        target: true,
        example: "ibmvpc://us-south/0717_1e09281b-f177-46fb-baf1-bc152b2e391a",
    },
    crate::engine::driver::UrlForm {
        scheme: "powervs",
        form: "powervs://REGION/WORKSPACE-ID/INSTANCE-ID",
        meaning: "an IBM Power Virtual Server instance of a workspace (its CRN: --ibm-crn)",
        target: true,
        example: "powervs://us-south/3a5798f1-4d2b-4e0a-9311-9b2f3c0e4a11/5b6c7d8e-0000-4000-8000-00000000aa01",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_region_and_an_instance() {
        let (s, r, w, i) = parse_target("ibmvpc://us-south/0717_abc-1").unwrap();
        assert_eq!(
            (s, r.as_str(), w.as_str(), i.as_str()),
            (Service::Vpc, "us-south", "", "0717_abc-1")
        );
        let (s, r, w, i) = parse_target("POWERVS://lon/ws-1/pvm-1/").unwrap();
        assert_eq!(
            (s, r.as_str(), w.as_str(), i.as_str()),
            (Service::PowerVs, "lon", "ws-1", "pvm-1")
        );
        assert!(matches!(
            parse_target("ibmvpc://us-south"),
            Err(ConfigError::BadTarget(_))
        ));
        assert!(matches!(
            parse_target("powervs://lon/pvm"),
            Err(ConfigError::BadTarget(_))
        ));
        assert!(matches!(
            parse_target("ibmvpc://US_South/i"),
            Err(ConfigError::BadRegion(_))
        ));
        assert!(matches!(
            parse_target("ibmvpc://us-south/a%2fb"),
            Err(ConfigError::BadId(_))
        ));
        assert!(service_of("aws://x").is_none());
        for f in URL_FORMS {
            parse_target(f.example).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }

    #[test]
    fn endpoints_public_private_and_overridden() {
        let env = Env::default();
        let mut c = IbmConfig::new(Service::Vpc, "eu-de", "i");
        assert_eq!(c.api_base(&env), "https://eu-de.iaas.cloud.ibm.com");
        assert_eq!(
            c.iam_token_url(&env),
            "https://iam.cloud.ibm.com/identity/token"
        );
        c.private = true;
        assert_eq!(c.api_base(&env), "https://eu-de.private.iaas.cloud.ibm.com");
        assert_eq!(
            c.iam_token_url(&env),
            "https://private.iam.cloud.ibm.com/identity/token"
        );
        c.service = Service::PowerVs;
        assert_eq!(
            c.api_base(&env),
            "https://private.eu-de.power-iaas.cloud.ibm.com"
        );
        c.private = false;
        assert_eq!(c.api_base(&env), "https://eu-de.power-iaas.cloud.ibm.com");
        let env = Env::from_pairs(&[
            ("IBMCLOUD_PI_API_ENDPOINT", "https://127.0.0.1:9/"),
            ("IBMCLOUD_IAM_API_ENDPOINT", "https://127.0.0.1:8"),
        ]);
        assert_eq!(c.api_base(&env), "https://127.0.0.1:9");
        assert_eq!(c.iam_token_url(&env), "https://127.0.0.1:8/identity/token");
        c.proxy = Some("proxy:3128".into());
        assert_eq!(c.proxy_url().as_deref(), Some("http://proxy:3128"));
    }

    #[test]
    fn power_vs_needs_its_workspace_and_crn() {
        let mut c = IbmConfig::new(Service::PowerVs, "lon", "pvm-1");
        assert_eq!(c.validate(), Err(ConfigError::NoWorkspace));
        c.workspace = "ws-1".into();
        assert_eq!(c.validate(), Ok(()), "the CRN is asked for when connecting");
        c.crn = "nope".into();
        assert!(matches!(c.validate(), Err(ConfigError::BadCrn(_))));
        c.crn = "crn:v1:bluemix:public:power-iaas:lon04:a/abc:ws-1::".into();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(parse_api_type(None, true), Ok(true));
        assert_eq!(parse_api_type(Some("Public"), true), Ok(false));
        assert!(parse_api_type(Some("x"), true).is_err());
        let a = c.lock_key();
        c.instance = "pvm-2".into();
        assert_ne!(a, c.lock_key());
        assert_eq!(a.address(), c.lock_key().address());
    }
}
