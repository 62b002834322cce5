//! UCS settings from a target URL or an inventory method's fields and the
//! common [`MethodOptions`] (for the platform's builder, `super::platform`):
//! the user, the TLS trust (`--ca-cert`, `--ssl-fingerprint`,
//! `--ssl-insecure`: at most one; natively always HTTPS), `--missing-as-off`.

use super::config::{ConfigError, UcsConfig};
use crate::platform::build::{check_https_fields, has_scheme, BuildError, Fields, MethodOptions};

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a `ucs://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<UcsConfig, BuildError>> {
    has_scheme(url, "ucs").then(|| {
        UcsConfig::from_url(url)
            .map_err(BuildError::from)
            .and_then(|c| settings(c, o))
    })
}

/// The settings of an inventory method: its endpoint (a `ucs://` URL), or
/// `ip` (with `ipport`) and `plug` (the service profile's name, in
/// org-root).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<UcsConfig, BuildError> {
    let c = match (endpoint, ip) {
        (Some(e), _) => UcsConfig::from_url(e)?,
        (None, Some(ip)) => {
            let plug = o.plug.as_deref().ok_or(BuildError::NoEndpoint)?;
            let mut c = UcsConfig::new(ip);
            c.port = o.ipport.unwrap_or(c.port);
            c.profile = Some(plug.trim().to_string());
            c
        }
        (None, None) => return Err(BuildError::NoAddress),
    };
    settings(c, o)
}

fn settings(mut c: UcsConfig, o: &MethodOptions) -> Result<UcsConfig, BuildError> {
    c.user = o.user_or(c.user.take());
    c.tls = Some(o.tls_trust()?);
    c.missing_as_off = o.missing_as_off;
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint, or `ip` and `plug`; one kind
/// of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    check_https_fields(
        f,
        "a ucs method needs endpoint = \"ucs://[USER@]UCSM[:PORT]/[ORG/]PROFILE\" (or ip and plug)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::TlsTrust;

    #[test]
    fn options_fill_the_user_the_trust_and_the_profile() {
        let o = MethodOptions {
            username: Some("fence".into()),
            ssl_insecure: true,
            missing_as_off: true,
            plug: Some("web-1".into()),
            ..MethodOptions::default()
        };
        let c = from_url("ucs://ucsm/Finance/db", &o).unwrap().unwrap();
        assert_eq!(
            (c.user.as_deref(), &c.tls, c.missing_as_off),
            (Some("fence"), &Some(TlsTrust::Insecure), true)
        );
        assert!(from_url("pve://ucsm/1", &o).is_none());
        let c = from_parts(None, Some("10.0.0.9"), &o).unwrap();
        assert_eq!(
            (c.port, c.profile_dn().as_deref()),
            (443, Some("org-root/ls-web-1"))
        );
        assert!(matches!(
            from_parts(None, None, &o),
            Err(BuildError::NoAddress)
        ));
    }
}
