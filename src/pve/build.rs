//! Proxmox VE settings from a target URL or an inventory method's fields
//! and the common [`MethodOptions`] (for the platform's builder,
//! `super::platform`): the user, the TLS trust (`--ca-cert`,
//! `--ssl-fingerprint`, `--ssl-insecure`: at most one), and the platform's
//! own settings by key: `skiplock` (a flag), `vmtype` (`qemu` or `lxc`),
//! `node`.

use super::config::{ConfigError, Kind, PveConfig};
use crate::platform::build::{BuildError, Fields, MethodOptions};
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
    url.get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("pve://"))
        .then(|| settings(url, o))
}

/// The settings of an inventory method: its endpoint (a `pve://` URL), or
/// `ip` (with `ipport`) and `plug` (the VMID or name; `node` in settings).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<PveConfig, BuildError> {
    let url = match (endpoint, ip) {
        (Some(e), _) => e.to_string(),
        (None, Some(ip)) => {
            let plug = o.plug.as_deref().ok_or(BuildError::NoEndpoint)?;
            let host = match ip.contains(':') {
                true => format!("[{ip}]"),
                false => ip.to_string(),
            };
            let port = o.ipport.map(|p| format!(":{p}")).unwrap_or_default();
            format!("pve://{host}{port}/{}", escape(plug))
        }
        (None, None) => return Err(BuildError::NoAddress),
    };
    settings(&url, o)
}

fn settings(url: &str, o: &MethodOptions) -> Result<PveConfig, BuildError> {
    let mut c = PveConfig::from_url(url)?;
    if c.user.is_none() {
        c.user = o.username.clone().filter(|u| !u.is_empty());
    }
    if let Some(k) = o.setting("vmtype") {
        c.kind = Some(Kind::parse(k)?);
    }
    if let Some(n) = o.setting("node").filter(|n| !n.is_empty()) {
        c.node = Some(n.to_string());
    }
    c.skiplock = o.flag("skiplock");
    c.tls = crate::tls::trust(
        o.ssl_insecure,
        o.ca_cert.as_deref(),
        o.ssl_fingerprint.as_deref(),
    )
    .map_err(BuildError::platform)?;
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint, or `ip` and `plug`; one kind
/// of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !(f.has("endpoint") || (f.has("ip") && f.has("plug"))) {
        return Err(
            "a pve method needs endpoint = \"pve://[USER@]HOST[:PORT]/[NODE/]VM\" (or ip and plug)"
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
