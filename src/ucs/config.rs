//! What a caller sets for one Cisco UCS service profile: UCS Manager and
//! its port (443, HTTPS; the agent keeps upstream's plain HTTP on 80 when
//! no TLS option is given), the user, the organization the profile lives
//! in (`org-root` or a sub-organization below it), the profile's name, the
//! TLS trust, and whether a profile without a server reads as off.
//! `ucs://[USER@]UCSM[:PORT]/[ORG/]PROFILE` targets.

use crate::engine::driver::UrlForm;
use crate::platform::target::{escape, host_port, Target};
use crate::tls::TlsTrust;

/// UCS Manager's HTTPS port.
pub const DEFAULT_PORT: u16 = 443;
/// The root organization every distinguished name starts with.
pub const ROOT: &str = "org-root";

/// The URL forms (`--help`, man pages, README).
pub const URL_FORMS: &[UrlForm] = &[UrlForm {
    scheme: "ucs",
    form: "ucs://[USER@]UCSM[:PORT]/[ORG/]PROFILE",
    meaning: "a Cisco UCS service profile's server via UCS Manager (ORG/: sub-organizations)",
    target: true,
    example: "ucs://fence@ucsm.example.com/Finance/web-1",
}];

/// Why a UCS target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `ucs://[USER@]UCSM[:PORT]/[ORG/]PROFILE`.
    #[error("'{0}' is not a Cisco UCS target (expected ucs://[USER@]UCSM[:PORT]/[ORG/]PROFILE, e.g. ucs://fence@ucsm.example.com/web-1 or ucs://fence@ucsm.example.com/Finance/web-1)")]
    BadTarget(String),
    /// A host, organization or profile name that cannot be one.
    #[error("'{0}' cannot be a {1}")]
    BadName(String, &'static str),
}

/// One service profile and how to reach UCS Manager.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UcsConfig {
    /// UCS Manager's address.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The user the URL names (`--username` is used when it names none).
    pub user: Option<String>,
    /// The organizations below `org-root`, as distinguished names write
    /// them (`org-Finance`), outermost first.
    pub orgs: Vec<String>,
    /// The service profile's name; `None` for a listing.
    pub profile: Option<String>,
    /// How UCS Manager's certificate is trusted; `None`: plain HTTP
    /// (upstream's default, the agent only).
    pub tls: Option<TlsTrust>,
    /// A profile that is unknown or has no server reads as off.
    pub missing_as_off: bool,
}

fn check_name(s: &str, what: &'static str) -> Result<(), ConfigError> {
    if s.is_empty() || s.len() > 256 || s.contains('/') || s.chars().any(char::is_control) {
        return Err(ConfigError::BadName(s.to_string(), what));
    }
    Ok(())
}

impl UcsConfig {
    /// A configuration for `host`, HTTPS on 443, the root organization.
    pub fn new(host: &str) -> UcsConfig {
        UcsConfig {
            host: host.to_string(),
            port: DEFAULT_PORT,
            user: None,
            orgs: Vec::new(),
            profile: None,
            tls: Some(TlsTrust::default()),
            missing_as_off: false,
        }
    }

    /// Parses `ucs://[USER@]UCSM[:PORT]/[ORG/]PROFILE` (an ORG written
    /// `Finance` or `org-Finance`).
    pub fn from_url(url: &str) -> Result<UcsConfig, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let t = Target::parse(url, "ucs").map_err(|_| bad())?;
        let Some((profile, orgs)) = t.segments.split_last() else {
            return Err(bad());
        };
        if !t.query.is_empty() {
            return Err(bad());
        }
        let mut c = UcsConfig::new(&t.host);
        c.port = t.port.unwrap_or(DEFAULT_PORT);
        c.user = t.user;
        for o in orgs {
            c.push_org(o)?;
        }
        check_name(profile, "service profile name")?;
        c.profile = Some(profile.clone());
        c.validate()?;
        Ok(c)
    }

    fn push_org(&mut self, o: &str) -> Result<(), ConfigError> {
        let o = o.strip_prefix("org-").unwrap_or(o);
        check_name(o, "organization name")?;
        self.orgs.push(format!("org-{o}"));
        Ok(())
    }

    /// Sets the organizations from upstream's `--suborg` (`org-Finance`,
    /// `/org-Finance/org-Web/`; `org-` added where missing; empty: root).
    pub fn set_suborg(&mut self, suborg: &str) -> Result<(), ConfigError> {
        self.orgs.clear();
        for o in suborg.split('/').map(str::trim).filter(|o| !o.is_empty()) {
            if o == ROOT && self.orgs.is_empty() {
                continue;
            }
            self.push_org(o)?;
        }
        Ok(())
    }

    /// Checks what can be checked offline.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.is_empty() || self.host.contains(['/', '@', '?', '#', ' ']) {
            return Err(ConfigError::BadName(self.host.clone(), "host"));
        }
        if let Some(p) = &self.profile {
            check_name(p, "service profile name")?;
        }
        Ok(())
    }

    /// The organization's distinguished name (`org-root/org-Finance`).
    pub fn org_dn(&self) -> String {
        let mut s = ROOT.to_string();
        for o in &self.orgs {
            s.push('/');
            s.push_str(o);
        }
        s
    }

    /// The service profile's distinguished name (`org-root/ls-web-1`).
    pub fn profile_dn(&self) -> Option<String> {
        self.profile
            .as_ref()
            .map(|p| format!("{}/ls-{p}", self.org_dn()))
    }

    /// `https://UCSM:PORT/nuova` (`http://` without TLS).
    pub fn api_url(&self) -> String {
        let scheme = match self.tls {
            Some(_) => "https",
            None => "http",
        };
        format!("{scheme}://{}/nuova", host_port(&self.host, self.port))
    }

    /// The target as a URL, without the user.
    pub fn url(&self) -> String {
        let hp = match self.port {
            DEFAULT_PORT if self.host.contains(':') => format!("[{}]", self.host),
            DEFAULT_PORT => self.host.clone(),
            p => host_port(&self.host, p),
        };
        let mut s = format!("ucs://{hp}");
        for o in &self.orgs {
            s.push('/');
            s.push_str(&escape(o.strip_prefix("org-").unwrap_or(o)));
        }
        if let Some(p) = &self.profile {
            s.push('/');
            s.push_str(&escape(p));
        }
        s
    }

    /// The lock key: UCS Manager, narrowed to the service profile.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let ls = self.profile_dn().map(|dn| format!("ls/{dn}"));
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
            .with_system(ls.as_deref(), "ls/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_with_and_without_sub_organizations() {
        let c = UcsConfig::from_url("ucs://fence@ucsm.example.com/web-1").unwrap();
        assert_eq!(c.user.as_deref(), Some("fence"));
        assert_eq!(c.profile_dn().as_deref(), Some("org-root/ls-web-1"));
        assert_eq!(c.api_url(), "https://ucsm.example.com:443/nuova");
        assert_eq!(c.url(), "ucs://ucsm.example.com/web-1");
        let c = UcsConfig::from_url("ucs://[fe80::1]:8443/Finance/org-Web/db%201").unwrap();
        assert_eq!(
            c.profile_dn().as_deref(),
            Some("org-root/org-Finance/org-Web/ls-db 1")
        );
        assert_eq!(c.url(), "ucs://[fe80::1]:8443/Finance/Web/db%201");
        for bad in [
            "ucs://ucsm",
            "ucs://ucsm/",
            "ucs://ucsm/x?y=1",
            "pve://ucsm/x",
        ] {
            assert!(UcsConfig::from_url(bad).is_err(), "{bad}");
        }
        for f in URL_FORMS {
            assert!(UcsConfig::from_url(f.example).is_ok(), "{}", f.example);
        }
        let mut c = UcsConfig::new("u");
        c.profile = Some("p".into());
        c.set_suborg("/org-Finance/Web/").unwrap();
        assert_eq!(
            c.profile_dn().as_deref(),
            Some("org-root/org-Finance/org-Web/ls-p")
        );
        c.set_suborg("").unwrap();
        assert_eq!(c.profile_dn().as_deref(), Some("org-root/ls-p"));
        let k = c.lock_key();
        assert_eq!((k.device(), k.system()), ("u", Some("ls/org-root/ls-p")));
    }
}
