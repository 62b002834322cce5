//! GCE settings from a target URL or an inventory's fields and the common
//! [`MethodOptions`] (for the platform's builder, `super::platform`): the
//! generic fields (`endpoint_url` the API, `ca_cert` / `ssl_insecure` the
//! trust, `allow_self_fence`) and GCE's own settings by key ([`SETTINGS`]).
//! Credentials are application default credentials
//! (`GOOGLE_APPLICATION_CREDENTIALS`, then the metadata server) unless
//! `service_account` names a key file.

use super::config::{
    check_instance, check_project, check_zone, is_gce_url, parse_target, Auth, ConfigError,
    GceConfig,
};
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Fields, MethodOptions};

/// GCE's setting keys: `service_account` (a key file), `project` and
/// `zone` (with `plug`, without an endpoint), `zones` (what `list`
/// covers, comma-separated), `instance_id` (a pin), `proxy`.
pub const SETTINGS: &[&str] = &[
    "service_account",
    "project",
    "zone",
    "zones",
    "instance_id",
    "proxy",
];

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a `gce://PROJECT/ZONE/INSTANCE` URL names, or `None` for
/// another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<GceConfig, BuildError>> {
    is_gce_url(url).then(|| {
        let (p, z, i) = parse_target(url)?;
        settings(GceConfig::new(&p, &z, &i), o)
    })
}

/// The settings of an inventory method: its endpoint, or the `project`
/// and `zone` settings (the metadata server's project, the zone found by
/// name, when left out) and the instance in `plug`.
pub fn from_parts(endpoint: Option<&str>, o: &MethodOptions) -> Result<GceConfig, BuildError> {
    match endpoint {
        Some(e) => {
            let (p, z, i) = parse_target(e)?;
            settings(GceConfig::new(&p, &z, &i), o)
        }
        None => {
            let p = o.setting("project").unwrap_or("");
            let z = o.setting("zone").unwrap_or("");
            let i = o.plug.as_deref().unwrap_or("");
            if !p.is_empty() {
                check_project(p)?;
            }
            if !z.is_empty() {
                check_zone(z)?;
            }
            check_instance(i)?;
            settings(GceConfig::new(p, z, i), o)
        }
    }
}

fn settings(mut c: GceConfig, o: &MethodOptions) -> Result<GceConfig, BuildError> {
    c.api_endpoint = o.endpoint_url.clone();
    c.ca_cert = o.ca_cert.clone();
    c.insecure = o.ssl_insecure;
    c.allow_self_fence = o.allow_self_fence;
    if let Some(k) = o.setting("service_account") {
        c.auth = Auth::KeyFile(k.into());
    }
    if let Some(z) = o.setting("zones") {
        c.zones = z
            .split(',')
            .map(str::trim)
            .filter(|z| !z.is_empty())
            .map(String::from)
            .collect();
    }
    c.proxy = o.setting("proxy").map(str::to_string);
    c.validate()?;
    Ok(c)
}

/// `expected` and the instance id `o` pins (`instance_id`).
pub fn expected_names(
    expected: ExpectedIdentity,
    o: &MethodOptions,
) -> Result<ExpectedIdentity, BuildError> {
    match o.setting("instance_id") {
        Some(id) => Ok(expected.with_name("instanceId", id)?),
        None => Ok(expected),
    }
}

/// An inventory method's fields: an instance.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !f.has("endpoint") && !f.has("plug") {
        return Err(
            "a gce method needs endpoint = \"gce://PROJECT/ZONE/INSTANCE\" or plug = \
                    \"INSTANCE\" (with settings project and zone, or the metadata server's \
                    project and the zone found by name)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_settings_make_the_configuration() {
        let mut o = MethodOptions::default();
        o.set("service_account", "/etc/fencekit/sa.json");
        o.set("zones", "z-a, z-b");
        let c = from_url("gce://my-project/z-a/node1", &o).unwrap().unwrap();
        assert_eq!(c.auth, Auth::KeyFile("/etc/fencekit/sa.json".into()));
        assert_eq!(c.zones, vec!["z-a".to_string(), "z-b".to_string()]);
        assert!(from_url("azure://x", &o).is_none());
        let mut o = MethodOptions {
            plug: Some("node2".into()),
            ..Default::default()
        };
        let c = from_parts(None, &o).unwrap();
        assert_eq!((c.project.as_str(), c.instance.as_str()), ("", "node2"));
        o.set("zone", "Bad Zone");
        assert!(from_parts(None, &o).is_err());
        let mut o = MethodOptions::default();
        o.set("instance_id", "1234567890");
        let e = expected_names(ExpectedIdentity::default(), &o).unwrap();
        assert_eq!(e.names[0].value, "1234567890");
    }
}
