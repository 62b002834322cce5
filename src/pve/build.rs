//! Proxmox VE settings from a target URL or an inventory method's fields
//! and the common [`MethodOptions`] (for the platform's builder,
//! `super::platform`): the user, the TLS trust (`--ca-cert`,
//! `--ssl-fingerprint`, `--ssl-insecure`: at most one), and the platform's
//! own settings by key: `skiplock` (a flag), `vmtype` (`qemu` or `lxc`),
//! `node`.

use super::config::{ConfigError, Kind, PveConfig};
use crate::platform::build::{
    check_https_fields, has_scheme, parts_url, BuildError, Fields, MethodOptions,
};
use crate::platform::target::escape;

/// The settings an inventory's `settings` table (or the native flags) may give.
pub const SETTING_KEYS: &[&str] = &["skiplock", "vmtype", "node"];

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a `pve://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<PveConfig, BuildError>> {
    has_scheme(url, "pve").then(|| settings(url, o))
}

/// The settings of an inventory method: its endpoint (a `pve://` URL), or
/// `ip` (with `ipport`) and `plug` (the VMID or name; `node` in settings).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<PveConfig, BuildError> {
    settings(&parts_url("pve", endpoint, ip, o, escape)?, o)
}

fn settings(url: &str, o: &MethodOptions) -> Result<PveConfig, BuildError> {
    let mut c = PveConfig::from_url(url)?;
    c.user = o.user_or(c.user.take());
    if let Some(k) = o.setting("vmtype") {
        c.kind = Some(Kind::parse(k)?);
    }
    if let Some(n) = o.setting("node").filter(|n| !n.is_empty()) {
        c.node = Some(n.to_string());
    }
    c.skiplock = o.flag("skiplock");
    c.tls = o.tls_trust()?;
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint, or `ip` and `plug`; one kind
/// of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    check_https_fields(
        f,
        "a pve method needs endpoint = \"pve://[USER@]HOST[:PORT]/[NODE/]VM\" (or ip and plug)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pve::config::Guest;
    use crate::tls::TlsTrust;

    #[test]
    fn options_and_settings_fill_the_target() {
        let mut o = MethodOptions {
            username: Some("fence@pve".into()),
            ssl_insecure: true,
            ..MethodOptions::default()
        };
        o.set("skiplock", "true");
        o.set("vmtype", "lxc");
        let c = from_url("pve://pve1/200", &o).unwrap().unwrap();
        assert_eq!(c.user.as_deref(), Some("fence@pve"));
        assert_eq!(
            (c.kind, c.skiplock, c.tls),
            (Some(Kind::Lxc), true, TlsTrust::Insecure)
        );
        assert!(from_url("vsphere://vc/x", &o).is_none());
        let p = MethodOptions {
            plug: Some("web 1".into()),
            ipport: Some(443),
            username: Some("root".into()),
            ..MethodOptions::default()
        };
        let e = from_parts(None, Some("10.0.0.5"), &p).unwrap_err();
        assert!(e.to_string().contains("realm"), "{e}");
        let p = MethodOptions {
            username: Some("root@pam".into()),
            ..p
        };
        let c = from_parts(None, Some("10.0.0.5"), &p).unwrap();
        assert_eq!((c.port, c.guest), (443, Some(Guest::Name("web 1".into()))));
        assert!(matches!(
            from_parts(None, None, &p),
            Err(BuildError::NoAddress)
        ));
    }
}
