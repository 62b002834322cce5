//! KubeVirt settings from a target URL or an inventory endpoint and the
//! common [`MethodOptions`] (for the platform's builder, `super::platform`),
//! and the VirtualMachine uid a method can be pinned by.

use super::config::{ConfigError, KubevirtConfig};
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, MethodOptions};

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a `kubevirt://[CONTEXT@]NAMESPACE/VM` URL names, or `None`
/// for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<KubevirtConfig, BuildError>> {
    url.to_ascii_lowercase()
        .starts_with("kubevirt://")
        .then(|| settings(url, o))
}

/// The settings of an inventory method: its endpoint (a `kubevirt://` URL).
pub fn from_parts(endpoint: Option<&str>, o: &MethodOptions) -> Result<KubevirtConfig, BuildError> {
    settings(endpoint.ok_or(BuildError::NoEndpoint)?, o)
}

fn settings(url: &str, o: &MethodOptions) -> Result<KubevirtConfig, BuildError> {
    let mut c = KubevirtConfig::from_url(url)?;
    c.kubeconfig = o.kubeconfig.clone();
    c.insecure = o.ssl_insecure;
    Ok(c)
}

/// `expected` and the VirtualMachine uid `o` pins (`vm_uid`).
pub fn expected_names(
    expected: ExpectedIdentity,
    o: &MethodOptions,
) -> Result<ExpectedIdentity, BuildError> {
    match &o.vm_uid {
        Some(uid) => Ok(expected.with_name("metadata.uid", uid)?),
        None => Ok(expected),
    }
}
