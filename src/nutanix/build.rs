//! Nutanix settings from a target URL or an inventory method's fields and
//! the common [`MethodOptions`] (for the platform's builder,
//! `super::platform`): the user, the TLS trust (`--ca-cert`,
//! `--ssl-fingerprint`, `--ssl-insecure`: at most one).

use super::config::{ConfigError, NutanixConfig, VmRef};
use crate::platform::build::{check_https_fields, has_scheme, BuildError, Fields, MethodOptions};

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a `nutanix://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<NutanixConfig, BuildError>> {
    has_scheme(url, "nutanix").then(|| {
        NutanixConfig::from_url(url)
            .map_err(BuildError::from)
            .and_then(|c| settings(c, o))
    })
}

/// The settings of an inventory method: its endpoint (a `nutanix://` URL),
/// or `ip` (with `ipport`) and `plug` (the VM's name or extId).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<NutanixConfig, BuildError> {
    let c = match (endpoint, ip) {
        (Some(e), _) => NutanixConfig::from_url(e)?,
        (None, Some(ip)) => {
            let plug = o.plug.as_deref().ok_or(BuildError::NoEndpoint)?;
            let mut c = NutanixConfig::new(ip);
            c.port = o.ipport.unwrap_or(c.port);
            c.vm = Some(VmRef::parse(plug)?);
            c
        }
        (None, None) => return Err(BuildError::NoAddress),
    };
    settings(c, o)
}

fn settings(mut c: NutanixConfig, o: &MethodOptions) -> Result<NutanixConfig, BuildError> {
    c.user = o.user_or(c.user.take());
    c.tls = o.tls_trust()?;
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint, or `ip` and `plug`; one kind
/// of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    check_https_fields(
        f,
        "a nutanix method needs endpoint = \"nutanix://[USER@]PRISM[:PORT]/VM\" (or ip and plug)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::TlsTrust;

    #[test]
    fn options_fill_the_user_the_trust_and_the_vm() {
        let o = MethodOptions {
            username: Some("fence".into()),
            ssl_insecure: true,
            plug: Some("web 1".into()),
            ..MethodOptions::default()
        };
        let c = from_url("nutanix://pc/node-1", &o).unwrap().unwrap();
        assert_eq!(
            (c.user.as_deref(), &c.tls),
            (Some("fence"), &TlsTrust::Insecure)
        );
        assert!(from_url("pve://pc/1", &o).is_none());
        let c = from_parts(None, Some("10.0.0.9"), &o).unwrap();
        assert_eq!((c.port, c.vm), (9440, Some(VmRef::Name("web 1".into()))));
        assert!(matches!(
            from_parts(None, None, &o),
            Err(BuildError::NoAddress)
        ));
    }
}
