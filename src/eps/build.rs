//! ePowerSwitch settings from a target URL or an inventory method's fields
//! and the common [`MethodOptions`]: the user (Basic authentication), and
//! the platform's own setting `page` (the hidden page's name).

use super::config::{ConfigError, EpsConfig};
use crate::platform::build::{BuildError, Fields, MethodOptions};

/// The settings an inventory's `settings` table may give.
pub const SETTING_KEYS: &[&str] = &["page"];

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings an `eps://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<EpsConfig, BuildError>> {
    url.get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("eps://"))
        .then(|| settings(EpsConfig::from_url(url), o))
}

/// An inventory method: its endpoint (an `eps://` URL), or `ip` (with
/// `ipport`) and `plug` (the outlets, comma-separated).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<EpsConfig, BuildError> {
    match (endpoint, ip) {
        (Some(e), _) => settings(EpsConfig::from_url(e), o),
        (None, Some(ip)) => {
            let plug = o.plug.as_deref().ok_or(BuildError::NoEndpoint)?;
            let mut c = EpsConfig::new(ip.trim_start_matches('[').trim_end_matches(']'));
            if let Some(p) = o.ipport {
                c.port = p;
            }
            c.set_outlets(plug, ",")?;
            settings(Ok(c), o)
        }
        (None, None) => Err(BuildError::NoAddress),
    }
}

fn settings(c: Result<EpsConfig, ConfigError>, o: &MethodOptions) -> Result<EpsConfig, BuildError> {
    let mut c = c?;
    if c.user.is_none() {
        c.user = o.username.clone().filter(|u| !u.is_empty());
    }
    if let Some(p) = o.setting("page").map(str::trim).filter(|p| !p.is_empty()) {
        c.page = p.trim_start_matches('/').to_string();
    }
    if o.ssl_insecure || o.ca_cert.is_some() || o.ssl_fingerprint.is_some() {
        return Err(BuildError::platform(ConfigError::Bad(
            "an ePowerSwitch speaks plain HTTP only: --ca-cert, --ssl-fingerprint and \
             --ssl-insecure do not apply"
                .into(),
        )));
    }
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint, or `ip` and `plug`; no TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !(f.has("endpoint") || (f.has("ip") && f.has("plug"))) {
        return Err(
            "an eps method needs endpoint = \"eps://[USER@]HOST[:PORT]/OUTLET[,OUTLET...]\" \
             (or ip and plug)"
                .into(),
        );
    }
    if let Some(k) = ["ca_cert", "ssl_fingerprint", "ssl_insecure"]
        .iter()
        .find(|k| f.has(k))
    {
        return Err(format!(
            "{k}: an ePowerSwitch speaks plain HTTP only (no TLS to trust)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_settings_fill_the_target() {
        let mut o = MethodOptions {
            username: Some("admin".into()),
            ..MethodOptions::default()
        };
        o.set("page", "/secret.htm");
        let c = from_url("eps://eps1/2", &o).unwrap().unwrap();
        assert_eq!(c.user.as_deref(), Some("admin"));
        assert_eq!(c.page_url(), "http://eps1:80/secret.htm");
        assert!(from_url("pve://h/1", &o).is_none());
        let p = MethodOptions {
            plug: Some("1,2".into()),
            ipport: Some(8080),
            ..MethodOptions::default()
        };
        let c = from_parts(None, Some("10.0.0.5"), &p).unwrap();
        assert_eq!(
            (c.port, c.outlets.clone()),
            (8080, vec!["01".into(), "02".into()])
        );
        let t = MethodOptions {
            ssl_insecure: true,
            ..MethodOptions::default()
        };
        assert!(from_url("eps://eps1/2", &t).unwrap().is_err());
    }
}
