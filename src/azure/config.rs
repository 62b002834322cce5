//! What a caller sets for one Azure VM: subscription, resource group and
//! VM name (the first two may come from the instance metadata service),
//! the cloud and its endpoints (public Azure, the sovereign clouds, an
//! Azure Stack Hub), the credentials to use, and whether the VM may be the
//! one this process runs on. `azure://SUBSCRIPTION/RESOURCE-GROUP/VM`
//! targets, the lock key (one VM of one subscription: the subscription is
//! the address, so VMs of one subscription share its rate limit), and the
//! environment variables the Azure SDKs read, as a snapshot.

use crate::secret::Secret;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Why an Azure configuration cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `azure://SUBSCRIPTION/RESOURCE-GROUP/VM`.
    #[error("'{0}' is not an Azure target (expected azure://SUBSCRIPTION/RESOURCE-GROUP/VM, e.g. azure://00000000-0000-0000-0000-000000000000/rg-ha/node1)")]
    BadTarget(String),
    /// A name that cannot be a subscription ID.
    #[error("'{0}' is not a subscription ID (expected a GUID)")]
    BadSubscription(String),
    /// A resource group name Azure would refuse.
    #[error("'{0}' is not a resource group name (1-90 letters, digits, '-', '_', '.', '(' or ')', not ending in '.')")]
    BadResourceGroup(String),
    /// A VM name Azure would refuse.
    #[error("'{0}' is not a VM name (1-64 letters, digits, '-', '_' or '.')")]
    BadVm(String),
    /// No VM.
    #[error("no VM: give the VM's name (--plug NAME)")]
    NoVm,
    /// An unknown `--cloud`.
    #[error("'{0}' is not a cloud fencekit knows (china, usgov, germany, stack, or leave it out for public Azure)")]
    BadCloud(String),
    /// `--cloud=stack` without its endpoint.
    #[error(
        "--cloud=stack needs --metadata-endpoint (the Azure Stack Hub's Resource Manager URL)"
    )]
    NoStackEndpoint,
    /// An endpoint that is not an https URL of a host.
    #[error("'{0}' is not an endpoint URL (expected https://HOST[:PORT][/]; credentials are sent only over TLS)")]
    BadEndpoint(String),
    /// A secret without the client ID it belongs to.
    #[error("a client secret or certificate needs the application (client) ID (--username)")]
    NoClientId,
    /// A service principal without its tenant.
    #[error("a service principal needs its tenant (--tenantId, or AZURE_TENANT_ID)")]
    NoTenant,
    /// A secret and a certificate at once.
    #[error("give a client secret or a client certificate, not both")]
    SecretAndCertificate,
    /// Managed identity with a secret.
    #[error("--msi uses the VM's managed identity: a client secret or certificate cannot be given with it")]
    MsiWithSecret,
}

/// A cloud: where Resource Manager and the login endpoint are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cloud {
    /// Public Azure.
    Public,
    /// Azure operated by 21Vianet in China.
    China,
    /// Azure Government (US).
    UsGov,
    /// Azure Germany (closed in 2021; kept because upstream offers it).
    Germany,
    /// An Azure Stack Hub: its Resource Manager URL, whose
    /// `/metadata/endpoints` names the login endpoint and the audience.
    Stack(String),
}

/// A cloud's endpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// Resource Manager, without a trailing slash.
    pub arm: String,
    /// The login (Entra ID) host URL, without a trailing slash.
    pub authority: String,
    /// The token scope (`…/.default`).
    pub scope: String,
}

impl Cloud {
    /// The cloud `--cloud` names (`None` or empty: public).
    pub fn parse(
        name: Option<&str>,
        metadata_endpoint: Option<&str>,
    ) -> Result<Cloud, ConfigError> {
        match name
            .map(str::trim)
            .unwrap_or("")
            .to_ascii_lowercase()
            .as_str()
        {
            "" | "public" | "azurecloud" => Ok(Cloud::Public),
            "china" | "azurechinacloud" => Ok(Cloud::China),
            "usgov" | "azureusgovernment" => Ok(Cloud::UsGov),
            "germany" | "azuregermancloud" => Ok(Cloud::Germany),
            "stack" => match metadata_endpoint.map(str::trim).filter(|s| !s.is_empty()) {
                Some(e) => {
                    check_https(e)?;
                    Ok(Cloud::Stack(e.trim_end_matches('/').to_string()))
                }
                None => Err(ConfigError::NoStackEndpoint),
            },
            _ => Err(ConfigError::BadCloud(name.unwrap_or("").to_string())),
        }
    }

    /// Its name, as `--cloud` takes it.
    pub fn name(&self) -> &'static str {
        match self {
            Cloud::Public => "public",
            Cloud::China => "china",
            Cloud::UsGov => "usgov",
            Cloud::Germany => "germany",
            Cloud::Stack(_) => "stack",
        }
    }

    /// The fixed endpoints of a cloud (`None` for a Stack Hub, whose come
    /// from its metadata).
    pub fn endpoints(&self) -> Option<Endpoints> {
        let e = |arm: &str, authority: &str, audience: &str| Endpoints {
            arm: arm.to_string(),
            authority: authority.to_string(),
            scope: format!("{audience}/.default"),
        };
        match self {
            Cloud::Public => Some(e(
                "https://management.azure.com",
                "https://login.microsoftonline.com",
                "https://management.azure.com",
            )),
            Cloud::China => Some(e(
                "https://management.chinacloudapi.cn",
                "https://login.chinacloudapi.cn",
                "https://management.chinacloudapi.cn",
            )),
            Cloud::UsGov => Some(e(
                "https://management.usgovcloudapi.net",
                "https://login.microsoftonline.us",
                "https://management.core.usgovcloudapi.net",
            )),
            Cloud::Germany => Some(e(
                "https://management.microsoftazure.de",
                "https://login.microsoftonline.de",
                "https://management.core.cloudapi.de",
            )),
            Cloud::Stack(_) => None,
        }
    }
}

/// The credentials a caller chose.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Auth {
    /// The SDKs' order: the environment's service principal (secret, then
    /// certificate), a workload identity, then the managed identity.
    #[default]
    Chain,
    /// A service principal with a client secret.
    Secret {
        /// The application (client) ID.
        client_id: String,
        /// The client secret.
        secret: Secret,
    },
    /// A service principal with a certificate (PEM: certificate and key).
    Certificate {
        /// The application (client) ID.
        client_id: String,
        /// The PEM file.
        path: PathBuf,
    },
    /// The managed identity (a workload identity's token file first, as
    /// the SDKs' managed identity credential does; then the metadata
    /// service), optionally a user-assigned one by its client ID.
    ManagedIdentity {
        /// A user-assigned identity's client ID.
        client_id: Option<String>,
    },
}

impl Auth {
    /// What the `-v` line and plans say of it (never a secret).
    pub fn describe(&self) -> String {
        match self {
            Auth::Chain => "credentials from the Azure SDKs' order (AZURE_CLIENT_SECRET, \
                            AZURE_CLIENT_CERTIFICATE_PATH, a workload identity, the managed \
                            identity)"
                .to_string(),
            Auth::Secret { client_id, .. } => {
                format!("service principal {client_id} with a client secret [set]")
            }
            Auth::Certificate { client_id, path } => format!(
                "service principal {client_id} with the certificate in {}",
                path.display()
            ),
            Auth::ManagedIdentity { client_id: None } => {
                "the managed identity (workload identity token file, or the instance metadata \
                 service)"
                    .to_string()
            }
            Auth::ManagedIdentity { client_id: Some(c) } => {
                format!("the user-assigned managed identity {c}")
            }
        }
    }
}

/// The settings of one Azure VM as a fencing device.
#[derive(Clone, Debug)]
pub struct AzureConfig {
    /// The subscription (empty: the metadata service's).
    pub subscription: String,
    /// The resource group (empty: the metadata service's).
    pub resource_group: String,
    /// The VM's name (empty: only listing).
    pub vm: String,
    /// The cloud.
    pub cloud: Cloud,
    /// Resource Manager instead of the cloud's (tests, private links).
    pub arm_endpoint: Option<String>,
    /// The tenant of a service principal or workload identity.
    pub tenant: Option<String>,
    /// The credentials.
    pub auth: Auth,
    /// A PEM file of certificates to trust instead of the system store.
    pub ca_cert: Option<PathBuf>,
    /// Accept any certificate (warned).
    pub insecure: bool,
    /// Each request's own bound.
    pub request_timeout: Duration,
    /// The VM may be the one this process runs on.
    pub allow_self_fence: bool,
    /// `monitor`: read one resource (the VM), never the group's list.
    pub monitor_only: bool,
    /// `list-status`: read each listed VM's state.
    pub list_states: bool,
    /// Upstream's `--network-fencing` was given (accepted; the VM is
    /// powered off and confirmed, the NICs are not moved).
    pub network_fencing: bool,
}

impl AzureConfig {
    /// A configuration for `vm` with the chain and default timeouts.
    pub fn new(subscription: &str, resource_group: &str, vm: &str) -> Self {
        AzureConfig {
            subscription: subscription.trim().to_string(),
            resource_group: resource_group.trim().to_string(),
            vm: vm.trim().to_string(),
            cloud: Cloud::Public,
            arm_endpoint: None,
            tenant: None,
            auth: Auth::Chain,
            ca_cert: None,
            insecure: false,
            request_timeout: Duration::from_secs(30),
            allow_self_fence: false,
            monitor_only: false,
            list_states: false,
            network_fencing: false,
        }
    }

    /// The per-device lock key: the subscription is the address (its rate
    /// limit is shared), the resource group and VM the system.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let sub = match self.subscription.is_empty() {
            true => "imds".to_string(),
            false => self.subscription.to_ascii_lowercase(),
        };
        let system = format!(
            "{}/{}",
            self.resource_group.to_ascii_lowercase(),
            self.vm.to_ascii_lowercase()
        );
        crate::lock::DeviceKey::new(&format!("{sub}.azure"), 0, 0).with_system(Some(&system), "")
    }

    /// Checks the names and the endpoint.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.subscription.is_empty() {
            check_subscription(&self.subscription)?;
        }
        if !self.resource_group.is_empty() {
            check_resource_group(&self.resource_group)?;
        }
        if !self.vm.is_empty() {
            check_vm(&self.vm)?;
        }
        if let Some(e) = &self.arm_endpoint {
            check_https(e)?;
        }
        Ok(())
    }

    /// [`AzureConfig::validate`], and a service principal's tenant given
    /// (the agents check it before acting; a method's is checked when it
    /// connects, as AZURE_TENANT_ID may name it then).
    pub fn validate_with_tenant(&self) -> Result<(), ConfigError> {
        self.validate()?;
        match (&self.auth, &self.tenant) {
            (Auth::Secret { .. } | Auth::Certificate { .. }, None) => Err(ConfigError::NoTenant),
            _ => Ok(()),
        }
    }
}

/// True for an `azure://` URL.
pub fn is_azure_url(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("azure://"))
}

/// Subscription, resource group and VM of an `azure://` target.
pub fn parse_target(url: &str) -> Result<(String, String, String), ConfigError> {
    let bad = || ConfigError::BadTarget(url.to_string());
    if !is_azure_url(url) {
        return Err(bad());
    }
    let rest = url[8..].trim_end_matches('/');
    let parts: Vec<&str> = rest.split('/').collect();
    let [sub, rg, vm] = parts[..] else {
        return Err(bad());
    };
    check_subscription(sub)?;
    check_resource_group(rg)?;
    check_vm(vm)?;
    Ok((sub.to_string(), rg.to_string(), vm.to_string()))
}

/// A subscription ID: a GUID.
pub fn check_subscription(s: &str) -> Result<(), ConfigError> {
    match crate::engine::identity::normalise_uuid(s) {
        Some(_) if s.len() == 36 => Ok(()),
        _ => Err(ConfigError::BadSubscription(s.to_string())),
    }
}

/// A resource group name as Azure takes one.
pub fn check_resource_group(s: &str) -> Result<(), ConfigError> {
    let ok = (1..=90).contains(&s.len())
        && !s.ends_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.()".contains(c));
    ok.then_some(())
        .ok_or_else(|| ConfigError::BadResourceGroup(s.to_string()))
}

/// A VM name as Azure takes one (Linux names; Windows' are a subset).
pub fn check_vm(s: &str) -> Result<(), ConfigError> {
    let ok = (1..=64).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && !s.starts_with(['.', '-']);
    ok.then_some(())
        .ok_or_else(|| ConfigError::BadVm(s.to_string()))
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

/// The environment variables the Azure SDKs read, as a snapshot (tests
/// build their own with [`Env::from_pairs`]).
#[derive(Clone, Debug, Default)]
pub struct Env(BTreeMap<String, String>);

/// Every variable fencekit's Azure driver reads.
pub const ENV_VARS: &[&str] = &[
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PATH",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_AUTHORITY_HOST",
    "AZURE_POD_IDENTITY_AUTHORITY_HOST",
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
}

/// The target URL form of Azure (see [`crate::engine::driver::UrlForm`]).
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[crate::engine::driver::UrlForm {
    scheme: "azure",
    form: "azure://SUBSCRIPTION/RESOURCE-GROUP/VM",
    meaning: "an Azure virtual machine, through Azure Resource Manager",
    target: true,
    example: "azure://00000000-0000-0000-0000-000000000000/rg-ha/node1",
}];

#[cfg(test)]
mod tests {
    use super::*;

    const SUB: &str = "0b1f6471-1bf0-4dda-aec3-cb9272f09590";

    #[test]
    fn targets_name_a_subscription_a_group_and_a_vm() {
        let url = format!("azure://{SUB}/rg-ha/node1");
        assert_eq!(
            parse_target(&url).unwrap(),
            (SUB.to_string(), "rg-ha".to_string(), "node1".to_string())
        );
        assert!(parse_target(&format!("AZURE://{SUB}/rg/vm/")).is_ok());
        assert!(matches!(
            parse_target("azure://x/rg/vm"),
            Err(ConfigError::BadSubscription(_))
        ));
        assert!(matches!(
            parse_target(&format!("azure://{SUB}/rg")),
            Err(ConfigError::BadTarget(_))
        ));
        assert!(matches!(
            parse_target(&format!("azure://{SUB}/rg./vm")),
            Err(ConfigError::BadResourceGroup(_))
        ));
        assert!(matches!(
            parse_target(&format!("azure://{SUB}/rg/v%2fm")),
            Err(ConfigError::BadVm(_))
        ));
        assert!(check_vm("node-1.a_b").is_ok() && check_vm("").is_err());
        assert!(check_vm(&"a".repeat(65)).is_err());
        assert!(check_resource_group("rg(ha)_1.x").is_ok());
        assert!(is_azure_url("azure://a") && !is_azure_url("aws://x"));
    }

    #[test]
    fn clouds_and_their_endpoints() {
        assert_eq!(Cloud::parse(None, None), Ok(Cloud::Public));
        assert_eq!(Cloud::parse(Some("China"), None), Ok(Cloud::China));
        assert_eq!(
            Cloud::parse(Some("usgov"), None)
                .unwrap()
                .endpoints()
                .unwrap()
                .authority,
            "https://login.microsoftonline.us"
        );
        assert_eq!(
            Cloud::parse(Some("stack"), None),
            Err(ConfigError::NoStackEndpoint)
        );
        assert_eq!(
            Cloud::parse(
                Some("stack"),
                Some("https://management.local.azurestack.external/")
            ),
            Ok(Cloud::Stack(
                "https://management.local.azurestack.external".into()
            ))
        );
        assert!(matches!(
            Cloud::parse(Some("mars"), None),
            Err(ConfigError::BadCloud(_))
        ));
        assert!(matches!(
            Cloud::parse(Some("stack"), Some("http://arm")),
            Err(ConfigError::BadEndpoint(_))
        ));
        let p = Cloud::Public.endpoints().unwrap();
        assert_eq!(p.scope, "https://management.azure.com/.default");
    }

    #[test]
    fn the_lock_key_is_the_subscription_and_the_vm() {
        let a = AzureConfig::new(SUB, "RG", "Node1").lock_key();
        let b = AzureConfig::new(SUB, "rg", "node1").lock_key();
        assert_eq!(a, b, "Azure names are case-insensitive");
        let c = AzureConfig::new(SUB, "rg", "node2").lock_key();
        assert_ne!(a, c);
        assert_eq!(a.address(), c.address(), "one subscription, one address");
    }

    #[test]
    fn a_service_principal_needs_a_tenant() {
        let mut c = AzureConfig::new(SUB, "rg", "vm");
        c.auth = Auth::Secret {
            client_id: "app".into(),
            secret: Secret::from_str_value("s"),
        };
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.validate_with_tenant(), Err(ConfigError::NoTenant));
        c.tenant = Some("t".into());
        assert_eq!(c.validate_with_tenant(), Ok(()));
        assert!(!c.auth.describe().contains('s') || !c.auth.describe().contains("\"s\""));
        c.arm_endpoint = Some("http://127.0.0.1:1".into());
        assert!(matches!(c.validate(), Err(ConfigError::BadEndpoint(_))));
    }
}

#[cfg(test)]
mod url_form_tests {
    #[test]
    fn every_url_form_parses() {
        for f in super::URL_FORMS {
            assert!(f.form.starts_with(&format!("{}://", f.scheme)), "{f:?}");
            super::parse_target(f.example)
                .map(|_| ())
                .unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }
}
