//! What a caller sets for one Nutanix AHV virtual machine: Prism Central
//! and its port (9440), the user (HTTP Basic), the VM (its name, or its
//! extId when the text is a UUID), and the TLS trust.
//! `nutanix://[USER@]PRISM[:PORT]/VM` targets.

use crate::engine::driver::UrlForm;
use crate::platform::target::{escape, host_port, Target};
use crate::tls::TlsTrust;

/// Prism Central's port (upstream's agent uses no other).
pub const DEFAULT_PORT: u16 = 9440;

/// The URL forms (`--help`, man pages, README).
pub const URL_FORMS: &[UrlForm] = &[UrlForm {
    scheme: "nutanix",
    form: "nutanix://[USER@]PRISM[:PORT]/VM",
    meaning: "a Nutanix AHV VM by its name or extId, through Prism Central's v4 API (9440)",
    target: true,
    example: "nutanix://fence@pc.example.com/node-1",
}];

/// Why a Nutanix target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `nutanix://[USER@]PRISM[:PORT]/VM`.
    #[error("'{0}' is not a Nutanix target (expected nutanix://[USER@]PRISM[:PORT]/VM, VM a name or an extId, e.g. nutanix://fence@pc.example.com/node-1)")]
    BadTarget(String),
    /// A host or VM name that cannot be one.
    #[error("'{0}' cannot be a {1}")]
    BadName(String, &'static str),
}

/// Which VM: its name (refused when several VMs carry it) or its extId.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VmRef {
    /// The VM's name.
    Name(String),
    /// The VM's extId (a UUID), lower case.
    ExtId(String),
}

impl VmRef {
    /// An extId when the text is a UUID, a name otherwise.
    pub fn parse(s: &str) -> Result<VmRef, ConfigError> {
        let s = s.trim();
        if s.is_empty() || s.len() > 256 || s.chars().any(char::is_control) {
            return Err(ConfigError::BadName(s.to_string(), "VM name"));
        }
        match crate::engine::identity::reported_uuid(s) {
            Some(u) if s.len() == 36 => Ok(VmRef::ExtId(u.uuid)),
            _ => Ok(VmRef::Name(s.to_string())),
        }
    }

    /// As written in a target or a message.
    pub fn text(&self) -> &str {
        match self {
            VmRef::Name(s) | VmRef::ExtId(s) => s,
        }
    }
}

/// One VM and how to reach Prism Central.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NutanixConfig {
    /// Prism Central's address.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The user the URL names (`--username` is used when it names none).
    pub user: Option<String>,
    /// The VM; `None` for a listing.
    pub vm: Option<VmRef>,
    /// `list`'s `$filter` (upstream's `--filter`).
    pub filter: Option<String>,
    /// How Prism Central's certificate is trusted.
    pub tls: TlsTrust,
}

impl NutanixConfig {
    /// A configuration for `host`, port 9440, no VM yet.
    pub fn new(host: &str) -> NutanixConfig {
        NutanixConfig {
            host: host.to_string(),
            port: DEFAULT_PORT,
            user: None,
            vm: None,
            filter: None,
            tls: TlsTrust::default(),
        }
    }

    /// Parses `nutanix://[USER@]PRISM[:PORT]/VM`.
    pub fn from_url(url: &str) -> Result<NutanixConfig, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let t = Target::parse(url, "nutanix").map_err(|_| bad())?;
        let [vm] = t.segments.as_slice() else {
            return Err(bad());
        };
        if !t.query.is_empty() {
            return Err(bad());
        }
        let mut c = NutanixConfig::new(&t.host);
        c.port = t.port.unwrap_or(DEFAULT_PORT);
        c.user = t.user;
        c.vm = Some(VmRef::parse(vm)?);
        c.validate()?;
        Ok(c)
    }

    /// Checks what can be checked offline.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.is_empty() || self.host.contains(['/', '@', '?', '#', ' ']) {
            return Err(ConfigError::BadName(self.host.clone(), "host"));
        }
        if let Some(f) = &self.filter {
            if f.chars().any(char::is_control) {
                return Err(ConfigError::BadName(f.clone(), "filter"));
            }
        }
        Ok(())
    }

    /// `https://PRISM:PORT/api`.
    pub fn api_url(&self) -> String {
        format!("https://{}/api", host_port(&self.host, self.port))
    }

    /// The target as a URL, without the user.
    pub fn url(&self) -> String {
        let hp = match self.port {
            DEFAULT_PORT if self.host.contains(':') => format!("[{}]", self.host),
            DEFAULT_PORT => self.host.clone(),
            p => host_port(&self.host, p),
        };
        match &self.vm {
            Some(v) => format!("nutanix://{hp}/{}", escape(v.text())),
            None => format!("nutanix://{hp}"),
        }
    }

    /// The lock key: Prism Central, narrowed to the VM.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let vm = self.vm.as_ref().map(|v| format!("vm/{}", v.text()));
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
            .with_system(vm.as_deref(), "vm/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_by_name_and_ext_id() {
        let c = NutanixConfig::from_url("nutanix://fence@corp@pc.example.com/node-1").unwrap();
        assert_eq!(c.user.as_deref(), Some("fence@corp"));
        assert_eq!(c.vm, Some(VmRef::Name("node-1".into())));
        assert_eq!(c.api_url(), "https://pc.example.com:9440/api");
        assert_eq!(c.url(), "nutanix://pc.example.com/node-1");
        let c =
            NutanixConfig::from_url("nutanix://[fe80::1]:443/0B8D7E4C-1F0E-4E2A-9A55-3F1E0C9B7D21")
                .unwrap();
        assert_eq!(
            c.vm,
            Some(VmRef::ExtId("0b8d7e4c-1f0e-4e2a-9a55-3f1e0c9b7d21".into()))
        );
        assert_eq!(
            c.url(),
            "nutanix://[fe80::1]:443/0b8d7e4c-1f0e-4e2a-9a55-3f1e0c9b7d21"
        );
        for bad in [
            "nutanix://pc",
            "nutanix://pc/a/b",
            "nutanix://pc/x?y=1",
            "pve://pc/x",
        ] {
            assert!(NutanixConfig::from_url(bad).is_err(), "{bad}");
        }
        for f in URL_FORMS {
            assert!(NutanixConfig::from_url(f.example).is_ok(), "{}", f.example);
        }
        let k = NutanixConfig::from_url("nutanix://pc/web%2001")
            .unwrap()
            .lock_key();
        assert_eq!((k.device(), k.system()), ("pc", Some("vm/web 01")));
    }
}
