//! What a caller sets for one Nova server: Keystone's URL, how to
//! authenticate (a password with the user's and the project's names or ids
//! and domains, an application credential, or a token), the catalog's
//! region and interface that find compute, the server (its UUID or name)
//! and the TLS trust. `openstack://CLOUD/SERVER` names a cloud of
//! `clouds.yaml` ([`super::cloud`]); the secret is never part of it.

use crate::engine::driver::UrlForm;
use crate::platform::target::{escape, Target};
use crate::tls::TlsTrust;

/// The URL forms (`--help`, man pages, README).
pub const URL_FORMS: &[UrlForm] = &[UrlForm {
    scheme: "openstack",
    form: "openstack://CLOUD/SERVER",
    meaning:
        "an OpenStack Nova server by UUID or name, CLOUD from clouds.yaml (env: OS_* variables)",
    target: true,
    example: "openstack://mycloud/node1",
}];

/// Why an OpenStack target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `openstack://CLOUD/SERVER`.
    #[error("'{0}' is not an OpenStack target (expected openstack://CLOUD/SERVER, CLOUD a cloud of clouds.yaml or env for the OS_* variables, SERVER a server's UUID or name)")]
    BadTarget(String),
    /// A value that cannot work.
    #[error("{0}")]
    Bad(String),
}

/// How the token is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthKind {
    /// `password`: a user and its password, scoped to a project.
    Password,
    /// `v3applicationcredential`: an application credential's id (or name
    /// and user) and secret; the credential carries its own scope.
    AppCredential,
    /// `v3token`: an existing token, re-scoped to the project.
    Token,
}

impl AuthKind {
    /// Reads `auth_type` (`password`, `v3password`, `v3applicationcredential`, `v3token`, ...).
    pub fn parse(s: &str) -> Result<AuthKind, ConfigError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "password" | "v3password" => Ok(AuthKind::Password),
            "applicationcredential" | "v3applicationcredential" => Ok(AuthKind::AppCredential),
            "token" | "v3token" => Ok(AuthKind::Token),
            other => Err(ConfigError::Bad(format!(
                "auth_type '{}' is not one fencekit speaks (password, v3applicationcredential, \
                 v3token)",
                crate::http::text::printable(other, 40)
            ))),
        }
    }

    /// The Keystone method's name.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthKind::Password => "password",
            AuthKind::AppCredential => "application credential",
            AuthKind::Token => "token",
        }
    }
}

/// A name or an id (Keystone takes either).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameOrId {
    /// The name.
    pub name: Option<String>,
    /// The id (wins over the name).
    pub id: Option<String>,
}

impl NameOrId {
    /// Whether neither is set.
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.id.is_none()
    }

    /// The id, else the name, for messages.
    pub fn text(&self) -> &str {
        self.id.as_deref().or(self.name.as_deref()).unwrap_or("")
    }
}

/// One Nova server and how to reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenstackConfig {
    /// The cloud of clouds.yaml it came from (`env`: the OS_* variables).
    pub cloud: Option<String>,
    /// Keystone's URL as given (`https://keystone:5000/v3`).
    pub auth_url: String,
    /// How the token is obtained.
    pub kind: AuthKind,
    /// The user.
    pub user: NameOrId,
    /// The user's domain.
    pub user_domain: NameOrId,
    /// The project.
    pub project: NameOrId,
    /// The project's domain.
    pub project_domain: NameOrId,
    /// The application credential (id, or name with the user).
    pub app_cred: NameOrId,
    /// The catalog's region (`None`: the only one that has compute).
    pub region: Option<String>,
    /// `public`, `internal` or `admin`.
    pub interface: String,
    /// The server's UUID or name; `None` for a listing.
    pub server: Option<String>,
    /// How Keystone's and Nova's certificates are trusted.
    pub tls: TlsTrust,
}

impl OpenstackConfig {
    /// A password configuration for `auth_url`, public interface, no server.
    pub fn new(auth_url: &str) -> OpenstackConfig {
        OpenstackConfig {
            cloud: None,
            auth_url: auth_url.trim().to_string(),
            kind: AuthKind::Password,
            user: NameOrId::default(),
            user_domain: NameOrId::default(),
            project: NameOrId::default(),
            project_domain: NameOrId::default(),
            app_cred: NameOrId::default(),
            region: None,
            interface: "public".into(),
            server: None,
            tls: TlsTrust::default(),
        }
    }

    /// `openstack://CLOUD/SERVER`: the cloud's name and the server.
    pub fn parse_url(url: &str) -> Result<(String, String), ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let t = Target::parse(url, "openstack").map_err(|_| bad())?;
        if !t.query.is_empty() || t.user.is_some() || t.port.is_some() {
            return Err(bad());
        }
        match t.segments.as_slice() {
            [s] if !t.host.is_empty() && !s.trim().is_empty() => Ok((t.host.clone(), s.clone())),
            _ => Err(bad()),
        }
    }

    /// Checks what can be checked offline.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.identity_url()?;
        if !["public", "internal", "admin"].contains(&self.interface.as_str()) {
            return Err(ConfigError::Bad(format!(
                "interface '{}' is not public, internal or admin",
                crate::http::text::printable(&self.interface, 40)
            )));
        }
        if let Some(s) = &self.server {
            if s.trim().is_empty() || s.len() > 255 || s.chars().any(|c| c.is_control()) {
                return Err(ConfigError::Bad(format!(
                    "'{s}' cannot be a server's name or UUID"
                )));
            }
        }
        match self.kind {
            AuthKind::Password if self.user.is_empty() => Err(ConfigError::Bad(
                "no user (username or user_id) to authenticate with".into(),
            )),
            AuthKind::AppCredential
                if self.app_cred.id.is_none()
                    && (self.app_cred.name.is_none() || self.user.is_empty()) =>
            {
                Err(ConfigError::Bad(
                    "an application credential needs its id (or its name and the user)".into(),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Keystone's v3 URL: the auth URL with `/v3` added unless it ends so.
    pub fn identity_url(&self) -> Result<String, ConfigError> {
        let u = self.auth_url.trim().trim_end_matches('/');
        let parsed = reqwest::Url::parse(u).map_err(|_| {
            ConfigError::Bad(format!(
                "the auth URL '{}' is not a URL (https://keystone.example:5000/v3)",
                crate::http::text::printable(u, 80)
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(ConfigError::Bad(format!(
                "the auth URL '{}' is not an http(s) URL",
                crate::http::text::printable(u, 80)
            )));
        }
        if u.ends_with("/v2.0") {
            return Err(ConfigError::Bad(
                "the auth URL names Keystone v2.0, which was removed: use v3".into(),
            ));
        }
        Ok(match u.ends_with("/v3") {
            true => u.to_string(),
            false => format!("{u}/v3"),
        })
    }

    /// The target as a URL.
    pub fn url(&self) -> String {
        let mut s = format!(
            "openstack://{}",
            escape(self.cloud.as_deref().unwrap_or("env"))
        );
        if let Some(v) = &self.server {
            s.push('/');
            s.push_str(&escape(v));
        }
        s
    }

    /// The lock key: the server of the cloud (its name in clouds.yaml, or
    /// Keystone's host); native runs and the agent with `--cloud` take the
    /// same one.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let label = match &self.cloud {
            Some(c) => c.clone(),
            None => reqwest::Url::parse(self.auth_url.trim())
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .unwrap_or_else(|| self.auth_url.clone()),
        };
        let name = format!(
            "{}.{label}.openstack",
            self.server.as_deref().unwrap_or("-")
        );
        crate::lock::DeviceKey::new(&name, 0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_identity_urls() {
        assert_eq!(
            OpenstackConfig::parse_url("openstack://mycloud/node%201"),
            Ok(("mycloud".into(), "node 1".into()))
        );
        for bad in [
            "openstack://c",
            "openstack://c/a/b",
            "openstack://u@c/a",
            "openstack://c:1/a",
            "openstack://c/a?x=1",
            "pve://c/a",
        ] {
            assert!(OpenstackConfig::parse_url(bad).is_err(), "{bad}");
        }
        for f in URL_FORMS {
            assert!(OpenstackConfig::parse_url(f.example).is_ok());
        }
        let mut c = OpenstackConfig::new("https://k.example:5000");
        assert_eq!(c.identity_url().unwrap(), "https://k.example:5000/v3");
        c.auth_url = "https://k.example/identity/v3/".into();
        assert_eq!(c.identity_url().unwrap(), "https://k.example/identity/v3");
        c.auth_url = "https://k.example/v2.0".into();
        assert!(c.identity_url().is_err());
        c.auth_url = "k.example".into();
        assert!(c.identity_url().is_err());
        c.auth_url = "https://k.example:5000/v3".into();
        assert!(c.validate().unwrap_err().to_string().contains("no user"));
        c.user.name = Some("fence".into());
        c.validate().unwrap();
        c.kind = AuthKind::AppCredential;
        c.user = NameOrId::default();
        assert!(c.validate().is_err());
        c.app_cred.id = Some("ac1".into());
        c.validate().unwrap();
        c.interface = "private".into();
        assert!(c.validate().is_err());
        assert!(AuthKind::parse("v3oidc").is_err());
        assert_eq!(AuthKind::parse("v3token"), Ok(AuthKind::Token));
    }

    #[test]
    fn locks_are_per_server() {
        let mut a = OpenstackConfig::new("https://k.example:5000/v3");
        a.server = Some("a".into());
        let mut b = a.clone();
        b.server = Some("b".into());
        assert!(!a.lock_key().conflicts(&b.lock_key()));
        assert!(a.lock_key().conflicts(&a.clone().lock_key()));
    }
}
