//! vSphere settings from a target URL or an inventory method's fields and
//! the common [`MethodOptions`] (for the platform's builder,
//! `super::platform`): the user, the TLS trust (`--ca-cert`,
//! `--ssl-fingerprint`, `--ssl-insecure`: at most one).

use super::config::{ConfigError, VsphereConfig};
use crate::platform::build::{
    check_https_fields, has_scheme, parts_url, BuildError, Fields, MethodOptions,
};

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a `vsphere://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<VsphereConfig, BuildError>> {
    has_scheme(url, "vsphere").then(|| settings(url, o))
}

/// The settings of an inventory method: its endpoint (a `vsphere://`
/// URL), or `ip` (with `ipport`) and `plug` (the VM part).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<VsphereConfig, BuildError> {
    let escape = |plug: &str| plug.replace('%', "%25").replace('/', "%2F");
    settings(&parts_url("vsphere", endpoint, ip, o, escape)?, o)
}

fn settings(url: &str, o: &MethodOptions) -> Result<VsphereConfig, BuildError> {
    let mut c = VsphereConfig::from_url(url)?;
    c.user = o.user_or(c.user.take());
    c.tls = o.tls_trust()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint, or `ip` and `plug`; one kind
/// of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    check_https_fields(
        f,
        "a vsphere method needs endpoint = \"vsphere://[USER@]HOST[:PORT]/VM\" (or ip and plug)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::TlsTrust;
    use crate::vsphere::model::VmSelector;

    #[test]
    fn options_fill_the_user_and_the_trust() {
        let o = MethodOptions {
            username: Some("fence".into()),
            ssl_insecure: true,
            ..MethodOptions::default()
        };
        let c = from_url("vsphere://vc/node-1", &o).unwrap().unwrap();
        assert_eq!(c.user.as_deref(), Some("fence"));
        assert_eq!(c.tls, TlsTrust::Insecure);
        let c = from_url("VSPHERE://admin@vc/node-1", &o).unwrap().unwrap();
        assert_eq!(c.user.as_deref(), Some("admin"), "the URL's user wins");
        assert!(from_url("redfish://vc/x", &o).is_none());
        let two = MethodOptions {
            ssl_insecure: true,
            ssl_fingerprint: Some("SHA256:00".into()),
            ..MethodOptions::default()
        };
        let e = from_url("vsphere://vc/n", &two).unwrap().unwrap_err();
        assert!(e.to_string().contains("only one of"), "{e}");
    }

    #[test]
    fn an_address_and_a_plug_make_a_target() {
        let o = MethodOptions {
            plug: Some("web/01".into()),
            ipport: Some(8443),
            ..MethodOptions::default()
        };
        let c = from_parts(None, Some("10.0.0.5"), &o).unwrap();
        assert_eq!((c.host.as_str(), c.port), ("10.0.0.5", 8443));
        assert_eq!(c.vm, VmSelector::Name("web/01".into()));
        assert!(matches!(
            from_parts(None, Some("10.0.0.5"), &MethodOptions::default()),
            Err(BuildError::NoEndpoint)
        ));
        assert!(matches!(
            from_parts(None, None, &o),
            Err(BuildError::NoAddress)
        ));
    }
}
