//! OpenStack settings from a target URL or an inventory method's fields and
//! the common [`MethodOptions`] (for the platform's builder,
//! `super::platform`). `openstack://CLOUD/SERVER` reads the cloud from
//! clouds.yaml (`env`: the `OS_*` variables, or `OS_CLOUD`), unless the
//! settings give Keystone's URL themselves (`auth_url`, with `project`,
//! the domains and the rest: flags or an inventory's `settings`). The
//! generic fields apply on top: `--username`, `--region`, the TLS trust
//! (`--ca-cert`, `--ssl-fingerprint`, `--ssl-insecure`: at most one).

use super::cloud;
use super::config::{AuthKind, ConfigError, NameOrId, OpenstackConfig};
use crate::platform::build::{BuildError, Fields, MethodOptions};
use crate::platform::target::escape;

/// The settings an inventory's `settings` table (or the native flags) may give.
pub const SETTING_KEYS: &[&str] = &[
    "auth_url",
    "auth_type",
    "project",
    "project_domain",
    "user_domain",
    "interface",
    "region",
    "app_credential",
];

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// What the options change on the settings a cloud gives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--username`.
    pub user: Option<String>,
    /// `--region`.
    pub region: Option<String>,
    /// `settings.interface`.
    pub interface: Option<String>,
    /// `settings.auth_type`.
    pub kind: Option<AuthKind>,
    /// `settings.app_credential` (an application credential's id).
    pub app_cred: Option<String>,
    /// `--ca-cert`, `--ssl-fingerprint`, `--ssl-insecure`.
    pub tls: Option<crate::tls::TlsTrust>,
}

impl Overrides {
    fn of(o: &MethodOptions) -> Result<Overrides, BuildError> {
        let tls = match o.ssl_insecure || o.ca_cert.is_some() || o.ssl_fingerprint.is_some() {
            true => Some(
                crate::tls::trust(
                    o.ssl_insecure,
                    o.ca_cert.as_deref(),
                    o.ssl_fingerprint.as_deref(),
                )
                .map_err(BuildError::platform)?,
            ),
            false => None,
        };
        let text = |s: Option<&str>| s.filter(|s| !s.is_empty()).map(str::to_string);
        Ok(Overrides {
            user: text(o.username.as_deref()),
            region: text(o.setting("region").or(o.region.as_deref())),
            interface: text(o.setting("interface")).map(|i| i.trim().to_ascii_lowercase()),
            kind: o.setting("auth_type").map(AuthKind::parse).transpose()?,
            app_cred: text(o.setting("app_credential")),
            tls,
        })
    }

    /// Applies them to `c`.
    pub fn apply(&self, c: &mut OpenstackConfig) {
        if let Some(k) = self.kind {
            c.kind = k;
        }
        if let Some(a) = &self.app_cred {
            c.kind = AuthKind::AppCredential;
            c.app_cred = NameOrId {
                name: None,
                id: Some(a.clone()),
            };
        }
        if let Some(u) = &self.user {
            c.user = named(Some(u));
        }
        if let Some(r) = &self.region {
            c.region = Some(r.clone());
        }
        if let Some(i) = &self.interface {
            c.interface = i.clone();
        }
        if let Some(t) = &self.tls {
            c.tls = t.clone();
        }
    }
}

/// A method's settings: complete (Keystone's URL given by the settings), or
/// a cloud read when the driver is built (its secret with it), the
/// overrides applied then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The settings; of a cloud, only its name and the server.
    pub config: OpenstackConfig,
    /// Whether the cloud is still to be read.
    pub from_cloud: bool,
    /// What the options change.
    pub over: Overrides,
}

impl Settings {
    /// The complete settings and the cloud's secret (none when the
    /// settings came from the options: the credential reference holds it).
    pub fn resolve(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(OpenstackConfig, Option<crate::secret::Secret>), String> {
        if !self.from_cloud {
            return Ok((self.config.clone(), None));
        }
        let name = self.config.cloud.as_deref().unwrap_or("env");
        let l = cloud::load(name, env)?;
        let mut c = l.config;
        self.over.apply(&mut c);
        c.server = self.config.server.clone();
        c.validate().map_err(|e| format!("{}: {e}", l.source))?;
        Ok((c, l.secret))
    }
}

/// The settings an `openstack://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<Settings, BuildError>> {
    url.get(..12)
        .is_some_and(|s| s.eq_ignore_ascii_case("openstack://"))
        .then(|| settings(url, o))
}

/// An inventory method's endpoint (an `openstack://` URL), or `plug` with
/// `auth_url` in its settings.
pub fn from_parts(
    endpoint: Option<&str>,
    _ip: Option<&str>,
    o: &MethodOptions,
) -> Result<Settings, BuildError> {
    let url = match (endpoint, &o.plug) {
        (Some(e), _) => e.to_string(),
        (None, Some(p)) if o.setting("auth_url").is_some() => {
            format!("openstack://settings/{}", escape(p))
        }
        _ => return Err(BuildError::NoEndpoint),
    };
    settings(&url, o)
}

fn named(s: Option<&str>) -> NameOrId {
    NameOrId {
        name: s.filter(|s| !s.is_empty()).map(str::to_string),
        id: None,
    }
}

/// The settings of `url` with `o` applied.
pub fn settings(url: &str, o: &MethodOptions) -> Result<Settings, BuildError> {
    let (cloud_name, server) = OpenstackConfig::parse_url(url)?;
    let over = Overrides::of(o)?;
    let (mut c, from_cloud) = match o.setting("auth_url") {
        Some(a) => {
            let mut c = OpenstackConfig::new(a);
            c.project = named(o.setting("project"));
            c.user_domain = named(o.setting("user_domain").or(Some("Default")));
            c.project_domain = named(o.setting("project_domain").or(Some("Default")));
            over.apply(&mut c);
            (c, false)
        }
        None => (OpenstackConfig::new(""), true),
    };
    c.cloud = Some(cloud_name);
    c.server = Some(server);
    if !from_cloud {
        c.validate()?;
    }
    Ok(Settings {
        config: c,
        from_cloud,
        over,
    })
}

/// An inventory method's fields: an endpoint (or `plug` with
/// `settings.auth_url`); one kind of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !(f.has("endpoint") || f.has("plug")) {
        return Err(
            "an openstack method needs endpoint = \"openstack://CLOUD/SERVER\" (or plug and \
             settings.auth_url)"
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

    #[test]
    fn a_cloud_read_late_or_the_settings_then_the_options() {
        let env = |k: &str| match k {
            "OS_AUTH_URL" => Some("https://k:5000/v3".to_string()),
            "OS_USERNAME" => Some("fence".to_string()),
            "OS_PROJECT_NAME" => Some("p".to_string()),
            "HOME" => Some("/nonexistent".to_string()),
            _ => None,
        };
        let o = MethodOptions {
            region: Some("R2".into()),
            ssl_insecure: true,
            ..MethodOptions::default()
        };
        let s = settings("openstack://env/node1", &o).unwrap();
        assert!(s.from_cloud);
        let (c, _) = s.resolve(&env).unwrap();
        assert_eq!(c.user.name.as_deref(), Some("fence"));
        assert_eq!(
            (c.region.as_deref(), &c.tls),
            (Some("R2"), &TlsTrust::Insecure)
        );
        assert_eq!(c.server.as_deref(), Some("node1"));
        let s = settings("openstack://nocloud/x", &o).unwrap();
        assert!(s.resolve(&env).unwrap_err().contains("clouds.yaml"));
        let mut o = MethodOptions {
            username: Some("u".into()),
            ..MethodOptions::default()
        };
        o.set("auth_url", "https://k2/identity");
        o.set("project", "fencing");
        o.set("interface", "internal");
        let s = settings("openstack://any/x", &o).unwrap();
        assert!(!s.from_cloud);
        let c = s.resolve(&env).unwrap().0;
        assert_eq!(c.identity_url().unwrap(), "https://k2/identity/v3");
        assert_eq!(c.project_domain.name.as_deref(), Some("Default"));
        assert_eq!(c.interface, "internal");
        assert!(from_url("pve://h/1", &o).is_none());
    }
}
