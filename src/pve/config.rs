//! What a caller sets for one Proxmox VE guest: a node of the cluster to
//! talk to (any node answers for the whole cluster) and its port, the user
//! (`root@pam`, or an API token `USER@REALM!TOKENID`), the guest (its VMID
//! or its name), optionally the node it runs on and its kind (QEMU VM or LXC
//! container; found from the cluster's resources otherwise), whether
//! `skiplock` is sent, and the TLS trust.
//! `pve://[USER@]HOST[:PORT]/[NODE/]VM` targets.

use crate::engine::driver::UrlForm;
use crate::platform::target::{escape, host_port, Target};
use crate::tls::TlsTrust;

/// pveproxy's port.
pub const DEFAULT_PORT: u16 = 8006;

/// The URL forms (`--help`, man pages, README).
pub const URL_FORMS: &[UrlForm] = &[UrlForm {
    scheme: "pve",
    form: "pve://[USER@]HOST[:PORT]/[NODE/]VM",
    meaning:
        "a Proxmox VE QEMU VM or LXC container by VMID or name; USER@REALM!TOKENID: an API token",
    target: true,
    example: "pve://fence@pve@pve1.example.com/pve1/100",
}];

/// Why a Proxmox VE target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `pve://[USER@]HOST[:PORT]/[NODE/]VM`.
    #[error("'{0}' is not a Proxmox VE target (expected pve://[USER@]HOST[:PORT]/[NODE/]VM, VM a VMID or a guest's name, e.g. pve://fence@pve@pve1.example.com/pve1/100)")]
    BadTarget(String),
    /// A user without its realm.
    #[error("the user '{0}' names no realm: Proxmox VE users are USER@REALM (root@pam, fence@pve), API tokens USER@REALM!TOKENID")]
    NoRealm(String),
    /// A node or guest name Proxmox VE cannot have.
    #[error("'{0}' cannot be a Proxmox VE {1} name")]
    BadName(String, &'static str),
    /// A guest type that is neither `qemu` nor `lxc`.
    #[error("'{0}' is not a Proxmox VE guest type (qemu or lxc)")]
    BadKind(String),
}

/// A guest's type, as the API's paths name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A QEMU/KVM virtual machine (`qemu`).
    Qemu,
    /// An LXC container (`lxc`).
    Lxc,
}

impl Kind {
    /// The path segment (`qemu`, `lxc`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Qemu => "qemu",
            Kind::Lxc => "lxc",
        }
    }

    /// The kind a segment or option names (`qemu`, `lxc`; any case).
    pub fn parse(s: &str) -> Result<Kind, ConfigError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "qemu" => Ok(Kind::Qemu),
            "lxc" => Ok(Kind::Lxc),
            _ => Err(ConfigError::BadKind(s.to_string())),
        }
    }
}

/// Which guest: a VMID, or a name (refused when several guests have it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guest {
    /// The cluster-wide VMID.
    Id(u32),
    /// The guest's name (QEMU `name`, LXC `hostname`).
    Name(String),
}

impl Guest {
    /// A VMID when the text is all digits (Proxmox VE's VMIDs are 100 to
    /// 999999999), a name otherwise.
    pub fn parse(s: &str) -> Result<Guest, ConfigError> {
        let s = s.trim();
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            return s
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=999_999_999).contains(n))
                .map(Guest::Id)
                .ok_or_else(|| ConfigError::BadName(s.to_string(), "VMID"));
        }
        if s.is_empty() || s.len() > 128 || s.chars().any(|c| c.is_control() || c == '/') {
            return Err(ConfigError::BadName(s.to_string(), "guest"));
        }
        Ok(Guest::Name(s.to_string()))
    }

    /// As written in a target or a message.
    pub fn text(&self) -> String {
        match self {
            Guest::Id(n) => n.to_string(),
            Guest::Name(s) => s.clone(),
        }
    }
}

/// Whether a node name is one Proxmox VE can have (a host name's label).
pub fn node_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// One guest and how to reach the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PveConfig {
    /// The node (or load balancer) whose API is asked.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// `USER@REALM`, or `USER@REALM!TOKENID` for an API token.
    pub user: Option<String>,
    /// The node the guest is on, when given (else found; a guest moved to
    /// another node is followed there).
    pub node: Option<String>,
    /// The guest; `None` for a listing.
    pub guest: Option<Guest>,
    /// QEMU or LXC, when given (else found).
    pub kind: Option<Kind>,
    /// Send `skiplock=1` with power requests (root@pam only): a locked
    /// guest (backup, migration, snapshot) is stopped anyway. Off unless
    /// asked.
    pub skiplock: bool,
    /// How the API's certificate is trusted.
    pub tls: TlsTrust,
}

impl PveConfig {
    /// A configuration for `host`, port 8006, no guest yet.
    pub fn new(host: &str) -> PveConfig {
        PveConfig {
            host: host.to_string(),
            port: DEFAULT_PORT,
            user: None,
            node: None,
            guest: None,
            kind: None,
            skiplock: false,
            tls: TlsTrust::default(),
        }
    }

    /// Parses `pve://[USER@]HOST[:PORT]/[NODE/]VM` (`?type=qemu|lxc` may
    /// name the kind).
    pub fn from_url(url: &str) -> Result<PveConfig, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let t = Target::parse(url, "pve").map_err(|_| bad())?;
        let mut c = PveConfig::new(&t.host);
        c.port = t.port.unwrap_or(DEFAULT_PORT);
        c.user = t.user;
        let (node, guest) = match t.segments.as_slice() {
            [g] => (None, g),
            [n, g] => (Some(n.clone()), g),
            _ => return Err(bad()),
        };
        c.node = node;
        c.guest = Some(Guest::parse(guest)?);
        for (k, v) in &t.query {
            match k.as_str() {
                "type" => c.kind = Some(Kind::parse(v)?),
                _ => return Err(bad()),
            }
        }
        c.validate()?;
        Ok(c)
    }

    /// Checks what can be checked offline.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.is_empty() || self.host.contains(['/', '@', '?', '#', ' ']) {
            return Err(ConfigError::BadName(self.host.clone(), "host"));
        }
        if let Some(n) = &self.node {
            if !node_ok(n) {
                return Err(ConfigError::BadName(n.clone(), "node"));
            }
        }
        if let Some(u) = &self.user {
            if !u.contains('@') {
                return Err(ConfigError::NoRealm(u.clone()));
            }
        }
        Ok(())
    }

    /// The API token's id (`USER@REALM!TOKENID`) when the user names one.
    pub fn token_id(&self) -> Option<&str> {
        self.user.as_deref().filter(|u| u.contains('!'))
    }

    /// `https://HOST:PORT/api2/json`.
    pub fn api_url(&self) -> String {
        format!("https://{}/api2/json", host_port(&self.host, self.port))
    }

    /// The target as a URL, without the user.
    pub fn url(&self) -> String {
        let mut s = format!("pve://{}", host_port(&self.host, self.port));
        if self.port == DEFAULT_PORT {
            s = format!("pve://{}", self.host_text());
        }
        if let Some(n) = &self.node {
            s.push('/');
            s.push_str(&escape(n));
        }
        if let Some(g) = &self.guest {
            s.push('/');
            s.push_str(&escape(&g.text()));
        }
        if let Some(k) = self.kind {
            s.push_str(&format!("?type={}", k.as_str()));
        }
        s
    }

    fn host_text(&self) -> String {
        match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        }
    }

    /// The lock key: the cluster node asked, narrowed to the guest (other
    /// guests of the cluster may be fenced at the same time).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let g = self.guest.as_ref().map(|g| format!("vm/{}", g.text()));
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
            .with_system(g.as_deref(), "vm/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_by_vmid_and_name_with_or_without_a_node() {
        let c = PveConfig::from_url("pve://fence@pve@pve1.example.com/pve1/100").unwrap();
        assert_eq!(c.user.as_deref(), Some("fence@pve"));
        assert_eq!(c.node.as_deref(), Some("pve1"));
        assert_eq!(c.guest, Some(Guest::Id(100)));
        assert_eq!(c.api_url(), "https://pve1.example.com:8006/api2/json");
        assert_eq!(c.url(), "pve://pve1.example.com/pve1/100");
        let c = PveConfig::from_url("pve://fence@pve!fk@[fe80::1]:443/web%2001?type=lxc").unwrap();
        assert_eq!(c.token_id(), Some("fence@pve!fk"));
        assert_eq!(c.guest, Some(Guest::Name("web 01".into())));
        assert_eq!((c.node.as_deref(), c.kind), (None, Some(Kind::Lxc)));
        assert_eq!(c.url(), "pve://[fe80::1]:443/web%2001?type=lxc");
        for bad in [
            "pve://h",
            "pve://h/a/b/c",
            "pve://h/0",
            "pve://h/n%2Fx/100",
            "pve://h/100?type=kvm",
            "pve://h/100?x=1",
            "pve://root@h/100",
        ] {
            assert!(PveConfig::from_url(bad).is_err(), "{bad}");
        }
        for f in URL_FORMS {
            assert!(PveConfig::from_url(f.example).is_ok(), "{}", f.example);
        }
    }

    #[test]
    fn lock_keys_name_the_guest() {
        let a = PveConfig::from_url("pve://pve1/100").unwrap().lock_key();
        let b = PveConfig::from_url("pve://pve1/pve2/101")
            .unwrap()
            .lock_key();
        assert_eq!(a.device(), "pve1");
        assert_eq!(a.system(), Some("vm/100"));
        assert!(!a.conflicts(&b));
        assert!(a.conflicts(
            &PveConfig::from_url("pve://pve1/pve1/100")
                .unwrap()
                .lock_key()
        ));
    }
}
