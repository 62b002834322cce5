//! vSphere settings from a target URL or an inventory method's fields and
//! the common [`MethodOptions`] (for the platform's builder,
//! `super::platform`): the user, the TLS trust (`--ca-cert`,
//! `--ssl-fingerprint`, `--ssl-insecure`: at most one).

use super::config::{ConfigError, VsphereConfig};
use crate::platform::build::{BuildError, Fields, MethodOptions};

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a `vsphere://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<VsphereConfig, BuildError>> {
    url.get(..10)
        .is_some_and(|s| s.eq_ignore_ascii_case("vsphere://"))
        .then(|| settings(url, o))
}

/// The settings of an inventory method: its endpoint (a `vsphere://`
/// URL), or `ip` (with `ipport`) and `plug` (the VM part).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<VsphereConfig, BuildError> {
    let url = match (endpoint, ip) {
        (Some(e), _) => e.to_string(),
        (None, Some(ip)) => {
            let plug = o.plug.as_deref().ok_or(BuildError::NoEndpoint)?;
            let host = match ip.contains(':') {
                true => format!("[{ip}]"),
                false => ip.to_string(),
            };
            let port = o.ipport.map(|p| format!(":{p}")).unwrap_or_default();
            format!(
                "vsphere://{host}{port}/{}",
                plug.replace('%', "%25").replace('/', "%2F")
            )
        }
        (None, None) => return Err(BuildError::NoAddress),
    };
    settings(&url, o)
}

fn settings(url: &str, o: &MethodOptions) -> Result<VsphereConfig, BuildError> {
    let mut c = VsphereConfig::from_url(url)?;
    if c.user.is_none() {
        c.user = o.username.clone().filter(|u| !u.is_empty());
    }
    c.tls = crate::tls::trust(
        o.ssl_insecure,
        o.ca_cert.as_deref(),
        o.ssl_fingerprint.as_deref(),
    )
    .map_err(BuildError::platform)?;
    Ok(c)
}

/// An inventory method's fields: an endpoint, or `ip` and `plug`; one kind
/// of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    let addressed = f.has("endpoint") || (f.has("ip") && f.has("plug"));
    if !addressed {
        return Err(
            "a vsphere method needs endpoint = \"vsphere://[USER@]HOST[:PORT]/VM\" \
                    (or ip and plug)"
                .into(),
        );
    }
    let trusts = ["ca_cert", "ssl_fingerprint", "ssl_insecure"];
    if trusts.iter().filter(|k| f.has(k)).count() > 1 {
        return Err("give only one of ca_cert, ssl_fingerprint and ssl_insecure".into());
    }
    Ok(())
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
