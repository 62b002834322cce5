//! AMT settings from a target URL or an inventory method's fields and the
//! common [`MethodOptions`] (for the platform's builder, `super::platform`):
//! the user (`admin` unless the URL or `--username` names another), the
//! TLS trust (on 16993 the system store unless `--ca-cert`,
//! `--ssl-fingerprint` or `--ssl-insecure`; any of them makes another port
//! HTTPS too; without them plain HTTP, Digest authentication still).

use super::config::{AmtConfig, ConfigError, TLS_PORT};
use crate::platform::build::{BuildError, Fields, MethodOptions};

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings an `amt://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<AmtConfig, BuildError>> {
    crate::platform::build::has_scheme(url, "amt").then(|| {
        AmtConfig::from_url(url)
            .map_err(BuildError::from)
            .and_then(|c| settings(c, o))
    })
}

/// The settings of an inventory method: its endpoint (an `amt://` URL), or
/// `ip` (with `ipport`).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<AmtConfig, BuildError> {
    let c = match (endpoint, ip) {
        (Some(e), _) => AmtConfig::from_url(e)?,
        (None, Some(ip)) => {
            let mut c = AmtConfig::new(ip.trim());
            c.port = o.ipport.unwrap_or(c.port);
            c
        }
        (None, None) => return Err(BuildError::NoAddress),
    };
    settings(c, o)
}

fn settings(mut c: AmtConfig, o: &MethodOptions) -> Result<AmtConfig, BuildError> {
    c.user = o.user_or(c.user.take());
    let asked = o.ssl_insecure || o.ca_cert.is_some() || o.ssl_fingerprint.is_some();
    if asked || c.port == TLS_PORT {
        c.tls = Some(o.tls_trust()?);
    }
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint or `ip`; one kind of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !(f.has("endpoint") || f.has("ip")) {
        return Err("an amt method needs endpoint = \"amt://[USER@]HOST[:PORT]\" (or ip)".into());
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

    #[test]
    fn options_fill_the_user_and_the_trust() {
        let mut o = MethodOptions {
            username: Some("fence".into()),
            ..MethodOptions::default()
        };
        let c = from_url("amt://desk", &o).unwrap().unwrap();
        assert_eq!((c.user(), &c.tls), ("fence", &None));
        let c = from_url("amt://root@desk:16993", &o).unwrap().unwrap();
        assert_eq!((c.user(), c.tls.is_some()), ("root", true));
        o.ssl_insecure = true;
        let c = from_parts(None, Some("10.0.0.9"), &o).unwrap();
        assert_eq!(
            (c.wsman_url().as_str(), &c.tls),
            ("https://10.0.0.9:16992/wsman", &Some(TlsTrust::Insecure))
        );
        assert!(from_url("ucs://x/y", &o).is_none());
        assert!(matches!(
            from_parts(None, None, &o),
            Err(BuildError::NoAddress)
        ));
    }
}
