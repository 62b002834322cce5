//! Redfish settings from a target URL or an inventory's fields and the
//! common [`MethodOptions`] (for the platform's builder, `super::platform`).

use super::config::{is_redfish_url, parse_target, tls_trust, ConfigError, RedfishConfig};
use crate::platform::build::{BuildError, Fields, MethodOptions};
use crate::secret::Secret;

/// The settings a Redfish target URL names, or `None` when the URL is
/// not Redfish's.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<RedfishConfig, BuildError>> {
    is_redfish_url(url).then(|| settings(url, o).map_err(BuildError::platform))
}

/// The settings of an inventory method at `endpoint`, or at `ip` (with
/// `o.ipport`).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<RedfishConfig, BuildError> {
    let url = match (endpoint, ip) {
        (Some(e), _) => e.to_string(),
        (None, Some(ip)) => {
            let ip = match ip.contains(':') {
                true => format!("[{ip}]"),
                false => ip.to_string(),
            };
            match o.ipport {
                Some(p) => format!("redfish://{ip}:{p}"),
                None => format!("redfish://{ip}"),
            }
        }
        (None, None) => return Err(BuildError::NoAddress),
    };
    settings(&url, o).map_err(BuildError::platform)
}

fn settings(url: &str, o: &MethodOptions) -> Result<RedfishConfig, ConfigError> {
    let t = parse_target(url)?;
    let mut c = t.config(o.username.as_deref().unwrap_or(""), Secret::default());
    if let Some(u) = &o.systems_uri {
        c.systems_uri = Some(u.clone());
    }
    if let Some(u) = &o.redfish_uri {
        c.redfish_uri = u.clone();
    }
    c.plug = o.plug.clone();
    c.tls = tls_trust(
        o.ssl_insecure,
        o.ca_cert.as_deref(),
        o.ssl_fingerprint.as_deref(),
    )?;
    c.session_auth = o.redfish_session;
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an address, one kind of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !f.has("endpoint") && !f.has("ip") {
        return Err(
            "a redfish method needs endpoint = \"redfish://HOST[:PORT][/redfish/v1/Systems/ID]\" or ip"
                .into(),
        );
    }
    let trusts = ["ca_cert", "ssl_fingerprint", "ssl_insecure"];
    if trusts.iter().filter(|k| f.has(k)).count() > 1 {
        return Err("give only one of ca_cert, ssl_fingerprint and ssl_insecure".into());
    }
    Ok(())
}
