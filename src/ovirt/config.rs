//! What a caller sets for one oVirt VM: the engine (host and port), the
//! user (`admin@internal`, `fence@internal-authz`), the VM (its name, or
//! its id), the API path, whether the `Filter: true` header asks for
//! user-level permissions, whether the engine's session cookie is used, and
//! the TLS trust (`None`: plain HTTP, which only the drop-in speaks, as
//! upstream does without `--ssl`). `ovirt://[USER@]ENGINE[:PORT]/VM`.

use crate::engine::driver::UrlForm;
use crate::platform::target::{escape, host_port, Target};
use crate::tls::TlsTrust;

/// The engine's HTTPS port.
pub const DEFAULT_PORT: u16 = 443;
/// The API's path on the engine.
pub const API_PATH: &str = "/ovirt-engine/api";

/// The URL forms (`--help`, man pages, README).
pub const URL_FORMS: &[UrlForm] = &[UrlForm {
    scheme: "ovirt",
    form: "ovirt://[USER@]ENGINE[:PORT]/VM",
    meaning: "an oVirt / RHV virtual machine by name or id (USER@PROFILE, e.g. admin@internal)",
    target: true,
    example: "ovirt://fence@internal@engine.example.com/node1",
}];

/// Why an oVirt target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `ovirt://[USER@]ENGINE[:PORT]/VM`.
    #[error("'{0}' is not an oVirt target (expected ovirt://[USER@]ENGINE[:PORT]/VM, VM a VM's name or id, e.g. ovirt://fence@internal@engine.example.com/node1)")]
    BadTarget(String),
    /// A name the engine cannot have.
    #[error("'{0}' cannot be an oVirt {1}")]
    BadName(String, &'static str),
}

/// One VM and how to reach its engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OvirtConfig {
    /// The engine's host.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// `USER@PROFILE`.
    pub user: Option<String>,
    /// The VM's name (or id); `None` for a listing.
    pub vm: Option<String>,
    /// The API's path (`/ovirt-engine/api`).
    pub api_path: String,
    /// Send `Filter: true`: the user's own permissions (a user without an
    /// administrative role sees nothing otherwise). On by default, as
    /// upstream.
    pub filter: bool,
    /// Ask for the engine's session cookie (`Prefer: persistent-auth`) and
    /// use it instead of sending the password with every request.
    pub cookies: bool,
    /// How the engine's certificate is trusted; `None`: plain HTTP.
    pub tls: Option<TlsTrust>,
}

impl OvirtConfig {
    /// A configuration for `host`, HTTPS on 443, no VM yet.
    pub fn new(host: &str) -> OvirtConfig {
        OvirtConfig {
            host: host.to_string(),
            port: DEFAULT_PORT,
            user: None,
            vm: None,
            api_path: API_PATH.to_string(),
            filter: true,
            cookies: false,
            tls: Some(TlsTrust::default()),
        }
    }

    /// Parses `ovirt://[USER@]ENGINE[:PORT]/VM`.
    pub fn from_url(url: &str) -> Result<OvirtConfig, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let t = Target::parse(url, "ovirt").map_err(|_| bad())?;
        if !t.query.is_empty() {
            return Err(bad());
        }
        let mut c = OvirtConfig::new(&t.host);
        c.port = t.port.unwrap_or(DEFAULT_PORT);
        c.user = t.user;
        match t.segments.as_slice() {
            [vm] => c.vm = Some(vm.clone()),
            _ => return Err(bad()),
        }
        c.validate()?;
        Ok(c)
    }

    /// Checks what can be checked offline.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.is_empty() || self.host.contains(['/', '@', '?', '#', ' ']) {
            return Err(ConfigError::BadName(self.host.clone(), "engine host"));
        }
        if let Some(v) = &self.vm {
            if v.trim().is_empty() || v.len() > 255 || v.chars().any(|c| c.is_control()) {
                return Err(ConfigError::BadName(v.clone(), "VM name"));
            }
        }
        if !self.api_path.starts_with('/') || self.api_path.contains(['?', '#', ' ']) {
            return Err(ConfigError::BadName(self.api_path.clone(), "API path"));
        }
        Ok(())
    }

    /// `https://ENGINE:PORT/ovirt-engine/api` (http without TLS).
    pub fn api_url(&self) -> String {
        format!(
            "{}://{}{}",
            if self.tls.is_some() { "https" } else { "http" },
            host_port(&self.host, self.port),
            self.api_path.trim_end_matches('/')
        )
    }

    /// The target as a URL, without the user.
    pub fn url(&self) -> String {
        let mut s = match self.port {
            DEFAULT_PORT => format!("ovirt://{}", self.host_text()),
            p => format!("ovirt://{}", host_port(&self.host, p)),
        };
        if let Some(v) = &self.vm {
            s.push('/');
            s.push_str(&escape(v));
        }
        s
    }

    fn host_text(&self) -> String {
        match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        }
    }

    /// The lock key: the engine, narrowed to the VM (other VMs of the
    /// engine may be fenced at the same time).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let v = self.vm.as_ref().map(|v| format!("vm/{v}"));
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
            .with_system(v.as_deref(), "vm/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_vm_on_an_engine() {
        let c = OvirtConfig::from_url("ovirt://admin@internal@engine.example/node%201").unwrap();
        assert_eq!(c.user.as_deref(), Some("admin@internal"));
        assert_eq!(c.vm.as_deref(), Some("node 1"));
        assert_eq!(c.api_url(), "https://engine.example:443/ovirt-engine/api");
        assert_eq!(c.url(), "ovirt://engine.example/node%201");
        assert!(c.filter && !c.cookies);
        let c = OvirtConfig::from_url("ovirt://[fe80::1]:8443/x").unwrap();
        assert_eq!(c.url(), "ovirt://[fe80::1]:8443/x");
        for bad in ["ovirt://h", "ovirt://h/a/b", "ovirt://h/a?x=1", "pve://h/a"] {
            assert!(OvirtConfig::from_url(bad).is_err(), "{bad}");
        }
        for f in URL_FORMS {
            assert!(OvirtConfig::from_url(f.example).is_ok(), "{}", f.example);
        }
        let a = OvirtConfig::from_url("ovirt://e/a").unwrap().lock_key();
        let b = OvirtConfig::from_url("ovirt://e/b").unwrap().lock_key();
        assert!(!a.conflicts(&b));
        assert!(a.conflicts(&OvirtConfig::from_url("ovirt://e/a").unwrap().lock_key()));
    }
}
