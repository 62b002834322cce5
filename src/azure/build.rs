//! Azure settings from a target URL or an inventory's fields and the
//! common [`MethodOptions`] (for the platform's builder, `super::platform`):
//! the generic fields (`username` is the client ID, the credential its
//! secret, `endpoint_url` Resource Manager, `ca_cert` / `ssl_insecure` the
//! trust) and Azure's own settings by key ([`SETTINGS`]).

use super::config::{
    check_resource_group, check_subscription, check_vm, is_azure_url, parse_target, Auth,
    AzureConfig, Cloud, ConfigError,
};
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Fields, MethodOptions};

/// Azure's setting keys: `tenant`, `cloud`, `metadata_endpoint` (Stack
/// Hub), `client_certificate` (PEM), `msi` (the managed identity),
/// `subscription` and `resource_group` (with `plug`, without an endpoint),
/// `vm_id` (a pin).
pub const SETTINGS: &[&str] = &[
    "tenant",
    "cloud",
    "metadata_endpoint",
    "client_certificate",
    "msi",
    "subscription",
    "resource_group",
    "vm_id",
];

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings an `azure://SUBSCRIPTION/RESOURCE-GROUP/VM` URL names, or
/// `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<AzureConfig, BuildError>> {
    is_azure_url(url).then(|| {
        let (s, g, v) = parse_target(url)?;
        settings(AzureConfig::new(&s, &g, &v), o)
    })
}

/// The settings of an inventory method: its endpoint, or the
/// `subscription` and `resource_group` settings (the metadata service's
/// when left out) and the VM in `plug`.
pub fn from_parts(endpoint: Option<&str>, o: &MethodOptions) -> Result<AzureConfig, BuildError> {
    match endpoint {
        Some(e) => {
            let (s, g, v) = parse_target(e)?;
            settings(AzureConfig::new(&s, &g, &v), o)
        }
        None => {
            let s = o.setting("subscription").unwrap_or("");
            let g = o.setting("resource_group").unwrap_or("");
            let v = o.plug.as_deref().unwrap_or("");
            if !s.is_empty() {
                check_subscription(s)?;
            }
            if !g.is_empty() {
                check_resource_group(g)?;
            }
            check_vm(v)?;
            settings(AzureConfig::new(s, g, v), o)
        }
    }
}

fn settings(mut c: AzureConfig, o: &MethodOptions) -> Result<AzureConfig, BuildError> {
    c.cloud = Cloud::parse(o.setting("cloud"), o.setting("metadata_endpoint"))?;
    c.tenant = o.setting("tenant").map(str::to_string);
    c.arm_endpoint = o.endpoint_url.clone();
    c.ca_cert = o.ca_cert.clone();
    c.insecure = o.ssl_insecure;
    c.allow_self_fence = o.allow_self_fence;
    let client_id = o.username.clone().filter(|u| !u.trim().is_empty());
    let cert = o
        .setting("client_certificate")
        .map(std::path::PathBuf::from);
    c.auth = match (o.flag("msi"), client_id, cert) {
        (true, id, None) => Auth::ManagedIdentity { client_id: id },
        (true, _, Some(_)) => return Err(ConfigError::MsiWithSecret.into()),
        (false, Some(id), Some(path)) => Auth::Certificate {
            client_id: id,
            path,
        },
        (false, None, Some(_)) => return Err(ConfigError::NoClientId.into()),
        // The secret is resolved when the method is built (platform.rs).
        (false, Some(id), None) => Auth::Secret {
            client_id: id,
            secret: crate::secret::Secret::default(),
        },
        (false, None, None) => Auth::Chain,
    };
    if matches!(c.auth, Auth::Secret { .. } | Auth::Certificate { .. }) && c.tenant.is_none() {
        c.tenant = std::env::var("AZURE_TENANT_ID")
            .ok()
            .filter(|t| !t.is_empty());
    }
    c.validate()?;
    Ok(c)
}

/// `expected` and the vmId `o` pins (`vm_id`).
pub fn expected_names(
    expected: ExpectedIdentity,
    o: &MethodOptions,
) -> Result<ExpectedIdentity, BuildError> {
    match o.setting("vm_id") {
        Some(id) => {
            let n = crate::engine::identity::normalise_uuid(id).unwrap_or_else(|| id.to_string());
            Ok(expected.with_name("vmId", &n)?)
        }
        None => Ok(expected),
    }
}

/// An inventory method's fields: a VM.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !f.has("endpoint") && !f.has("plug") {
        return Err(
            "an azure method needs endpoint = \"azure://SUBSCRIPTION/RESOURCE-GROUP/VM\" \
                    or plug = \"VM\" (with settings subscription and resource_group, or the \
                    metadata service's)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "azure://0b1f6471-1bf0-4dda-aec3-cb9272f09590/rg-ha/node1";

    #[test]
    fn urls_and_settings_make_the_configuration() {
        let mut o = MethodOptions::default();
        o.set("cloud", "usgov");
        o.set("tenant", "t-1");
        o.username = Some("app-1".into());
        let c = from_url(URL, &o).unwrap().unwrap();
        assert_eq!(c.cloud, Cloud::UsGov);
        assert!(matches!(c.auth, Auth::Secret { ref client_id, .. } if client_id == "app-1"));
        assert!(from_url("aws://x/y", &o).is_none());
        let mut o = MethodOptions::default();
        o.set("msi", "true");
        assert!(matches!(
            from_url(URL, &o).unwrap().unwrap().auth,
            Auth::ManagedIdentity { client_id: None }
        ));
        o.set("client_certificate", "/c.pem");
        assert!(from_url(URL, &o).unwrap().is_err());
        let mut o = MethodOptions {
            plug: Some("node2".into()),
            ..Default::default()
        };
        o.set("resource_group", "rg");
        let c = from_parts(None, &o).unwrap();
        assert_eq!((c.subscription.as_str(), c.vm.as_str()), ("", "node2"));
        o.set("cloud", "mars");
        assert!(from_parts(None, &o).is_err());
        let mut o = MethodOptions::default();
        o.set("vm_id", "8F2B3C4D-1111-2222-3333-444455556666");
        let e = expected_names(ExpectedIdentity::default(), &o).unwrap();
        assert_eq!(e.names[0].value, "8f2b3c4d-1111-2222-3333-444455556666");
    }
}
