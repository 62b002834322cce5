//! oVirt settings from a target URL or an inventory method's fields and the
//! common [`MethodOptions`]: the user, the TLS trust (one of `--ca-cert`,
//! `--ssl-fingerprint`, `--ssl-insecure`), and the platform's own settings
//! by key: `filter` (`false` sends `Filter: false`, for an administrator's
//! view), `cookies` (use the engine's session cookie), `api_path`.

use super::config::{ConfigError, OvirtConfig};
use crate::platform::build::{
    check_https_fields, has_scheme, parts_url, BuildError, Fields, MethodOptions,
};
use crate::platform::target::escape;

/// The settings an inventory's `settings` table may give.
pub const SETTING_KEYS: &[&str] = &["filter", "cookies", "api_path"];

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings an `ovirt://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<OvirtConfig, BuildError>> {
    has_scheme(url, "ovirt").then(|| settings(url, o))
}

/// An inventory method: its endpoint (an `ovirt://` URL), or `ip` (with
/// `ipport`) and `plug` (the VM's name).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<OvirtConfig, BuildError> {
    settings(&parts_url("ovirt", endpoint, ip, o, escape)?, o)
}

fn settings(url: &str, o: &MethodOptions) -> Result<OvirtConfig, BuildError> {
    let mut c = OvirtConfig::from_url(url)?;
    c.user = o.user_or(c.user.take());
    if let Some(f) = o.setting("filter") {
        c.filter = !matches!(f.trim().to_ascii_lowercase().as_str(), "false" | "0" | "no");
    }
    c.cookies = o.flag("cookies");
    if let Some(p) = o.setting("api_path").filter(|p| !p.is_empty()) {
        c.api_path = p.to_string();
    }
    c.tls = Some(o.tls_trust()?);
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint, or `ip` and `plug`; one kind
/// of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    check_https_fields(
        f,
        "an ovirt method needs endpoint = \"ovirt://[USER@]ENGINE[:PORT]/VM\" (or ip and plug)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_settings_fill_the_target() {
        let mut o = MethodOptions {
            username: Some("fence@internal".into()),
            ..MethodOptions::default()
        };
        o.set("filter", "false");
        o.set("cookies", "true");
        let c = from_url("ovirt://engine/node1", &o).unwrap().unwrap();
        assert_eq!(c.user.as_deref(), Some("fence@internal"));
        assert!(!c.filter && c.cookies);
        assert!(from_url("pve://h/1", &o).is_none());
        let p = MethodOptions {
            plug: Some("web 1".into()),
            ipport: Some(8443),
            ..MethodOptions::default()
        };
        let c = from_parts(None, Some("10.0.0.5"), &p).unwrap();
        assert_eq!((c.port, c.vm.as_deref()), (8443, Some("web 1")));
        assert!(c.filter);
    }
}
