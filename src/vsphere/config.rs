//! What a caller sets for one vSphere virtual machine: the vCenter (or
//! ESXi host) and its port, the user, which VM ([`VmSelector`]: a name,
//! `uuid:`, `instance:` or `moref:`), an optional datacenter that narrows
//! the search, and the TLS trust. `vsphere://[USER@]HOST[:PORT]/VM[?datacenter=PATH]`
//! targets.

use super::model::VmSelector;
use crate::tls::TlsTrust;

/// vim25's HTTPS port.
pub const DEFAULT_PORT: u16 = 443;

/// Why a vSphere target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `vsphere://[USER@]HOST[:PORT]/VM[?datacenter=PATH]`.
    #[error("'{0}' is not a vSphere target (expected vsphere://[USER@]HOST[:PORT]/VM[?datacenter=PATH], VM a name, uuid:BIOS-UUID, instance:INSTANCE-UUID or moref:vm-123, e.g. vsphere://fence@vc.example.com/node-1)")]
    BadTarget(String),
    /// A port that is not one.
    #[error("'{0}' is not a port (1-65535)")]
    BadPort(String),
    /// The VM part does not name a VM.
    #[error("{0}")]
    BadVm(String),
    /// A query other than `datacenter=PATH`.
    #[error("unknown target option '{0}' (vsphere:// takes only ?datacenter=PATH)")]
    BadOption(String),
    /// A `%XX` escape that is not one, or not UTF-8.
    #[error("'{0}': a %-escape that is not UTF-8 text")]
    BadEscape(String),
}

/// One VM and how to reach its vCenter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VsphereConfig {
    /// vCenter's (or ESXi's) address.
    pub host: String,
    /// Its HTTPS port.
    pub port: u16,
    /// The user the URL names (`--username` is used when it names none).
    pub user: Option<String>,
    /// Which VM.
    pub vm: VmSelector,
    /// The datacenter's inventory path (`DC1`, `Folder/DC1`) the search is
    /// narrowed to; `None`: the whole inventory.
    pub datacenter: Option<String>,
    /// How vCenter's certificate is trusted.
    pub tls: TlsTrust,
}

/// Decodes `%XX` escapes (a VM name with a space or a slash, a user with `@`).
fn unescape(s: &str) -> Result<String, ConfigError> {
    crate::platform::target::unescape(s).map_err(|_| ConfigError::BadEscape(s.to_string()))
}

/// Escapes what the URL form gives a meaning to (`%`, `/`, `?`, `#`, `@`,
/// spaces and controls).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' | '/' | '?' | '#' | '@' | '&' => out.push_str(&format!("%{:02X}", c as u32)),
            c if c.is_whitespace() || c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

impl VsphereConfig {
    /// Parses `vsphere://[USER@]HOST[:PORT]/VM[?datacenter=PATH]`. The VM
    /// part and the user may use `%XX` escapes (a user's `@` may also be
    /// written as is: the last `@` before the host separates them).
    pub fn from_url(url: &str) -> Result<Self, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
        if !scheme.eq_ignore_ascii_case("vsphere") {
            return Err(bad());
        }
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, vm) = rest.split_once('/').ok_or_else(bad)?;
        let vm = vm.strip_suffix('/').unwrap_or(vm);
        if vm.is_empty() || vm.contains('/') {
            return Err(bad());
        }
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(unescape(u)?), h),
            Some(_) => return Err(bad()),
            None => (None, authority),
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(bad)?;
            match after {
                "" => (h, None),
                p => (h, Some(p.strip_prefix(':').ok_or_else(bad)?)),
            }
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty()
            || host.contains(['/', '@', '[', ']', ' '])
            || (host.contains(':') && !hostport.starts_with('['))
        {
            return Err(bad());
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| ConfigError::BadPort(p.to_string()))?,
        };
        let mut datacenter = None;
        for kv in query.unwrap_or("").split('&').filter(|kv| !kv.is_empty()) {
            match kv.split_once('=') {
                Some(("datacenter" | "dc", v)) if !v.is_empty() => {
                    datacenter = Some(unescape(v)?);
                }
                _ => return Err(ConfigError::BadOption(kv.to_string())),
            }
        }
        let vm = VmSelector::parse(&unescape(vm)?).map_err(ConfigError::BadVm)?;
        Ok(VsphereConfig {
            host: host.to_string(),
            port,
            user,
            vm,
            datacenter,
            tls: TlsTrust::default(),
        })
    }

    /// The SOAP endpoint.
    pub fn sdk_url(&self) -> String {
        let host = match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        };
        format!("https://{host}:{}/sdk", self.port)
    }

    /// The VM part of the target, as written in a URL.
    pub fn vm_text(&self) -> String {
        match &self.vm {
            VmSelector::Name(n) => escape(n),
            VmSelector::BiosUuid(u) => format!("uuid:{u}"),
            VmSelector::InstanceUuid(u) => format!("instance:{u}"),
            VmSelector::Moref(m) => format!("moref:{m}"),
        }
    }

    /// The target as a URL (no password; the user as given in the URL).
    pub fn url(&self) -> String {
        let mut s = String::from("vsphere://");
        if let Some(u) = &self.user {
            s.push_str(&escape(u));
            s.push('@');
        }
        match self.host.contains(':') {
            true => s.push_str(&format!("[{}]", self.host)),
            false => s.push_str(&self.host),
        }
        if self.port != DEFAULT_PORT {
            s.push_str(&format!(":{}", self.port));
        }
        s.push('/');
        s.push_str(&self.vm_text());
        if let Some(dc) = &self.datacenter {
            s.push_str("?datacenter=");
            s.push_str(&escape(dc).replace("%2F", "/"));
        }
        s
    }

    /// The power domain: one VM (as the target names it) of one vCenter.
    /// Two targets naming one VM differently (a name and its moref) are two
    /// keys: the vCenter serialises their tasks on the VM itself.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
            .with_system(Some(&format!("/vsphere/{}", self.vm_text())), "/vsphere/")
    }
}

/// `vsphere://` as users read it in `--help`, the man pages and the README.
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[crate::engine::driver::UrlForm {
    scheme: "vsphere",
    form: "vsphere://[USER@]HOST[:PORT]/VM[?datacenter=PATH]",
    meaning: "a VMware vSphere VM through vCenter or ESXi; VM: a name, uuid:, instance: or moref:",
    target: true,
    example: "vsphere://fence@vc.example.com/node-1",
}];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_vcenter_and_a_vm() {
        let c = VsphereConfig::from_url("vsphere://vc.example.com/node-1").unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.user.as_deref()),
            ("vc.example.com", 443, None)
        );
        assert_eq!(c.vm, VmSelector::Name("node-1".into()));
        assert_eq!(c.sdk_url(), "https://vc.example.com:443/sdk");
        assert_eq!(c.url(), "vsphere://vc.example.com/node-1");

        let c = VsphereConfig::from_url(
            "VSphere://administrator@vsphere.local@10.0.0.5:8443/uuid:4211AB00-1111-2222-3333-444455556666?datacenter=Site%20A/DC1",
        )
        .unwrap();
        assert_eq!(c.user.as_deref(), Some("administrator@vsphere.local"));
        assert_eq!((c.host.as_str(), c.port), ("10.0.0.5", 8443));
        assert_eq!(
            c.vm,
            VmSelector::BiosUuid("4211ab00-1111-2222-3333-444455556666".into())
        );
        assert_eq!(c.datacenter.as_deref(), Some("Site A/DC1"));
        assert_eq!(
            c.url(),
            "vsphere://administrator%40vsphere.local@10.0.0.5:8443/uuid:4211ab00-1111-2222-3333-444455556666?datacenter=Site%20A/DC1"
        );
        assert_eq!(VsphereConfig::from_url(&c.url()).unwrap(), c);

        let c = VsphereConfig::from_url("vsphere://[fd00::5]/moref:vm-42/").unwrap();
        assert_eq!((c.host.as_str(), c.port), ("fd00::5", 443));
        assert_eq!(c.vm, VmSelector::Moref("vm-42".into()));
        assert_eq!(c.sdk_url(), "https://[fd00::5]:443/sdk");
        let c = VsphereConfig::from_url("vsphere://vc/web%2F01%20prod").unwrap();
        assert_eq!(c.vm, VmSelector::Name("web/01 prod".into()));
        assert_eq!(VsphereConfig::from_url(&c.url()).unwrap(), c);
        let c =
            VsphereConfig::from_url("vsphere://vc/instance:50112233-4455-6677-8899-aabbccddeeff")
                .unwrap();
        assert!(matches!(c.vm, VmSelector::InstanceUuid(_)));

        for bad in [
            "vsphere://vc",
            "vsphere://vc/",
            "vsphere:///vm",
            "vsphere://@vc/vm",
            "vsphere://vc/a/b",
            "vsphere://vc:0/vm",
            "vsphere://vc:x/vm",
            "vsphere://fd00::5/vm",
            "vsphere://vc/uuid:nope",
            "vsphere://vc/moref:",
            "vsphere://vc/vm?folder=x",
            "vsphere://vc/vm%zz",
            "redfish://vc/vm",
            "vc/vm",
        ] {
            assert!(VsphereConfig::from_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lock_keys_are_one_vm_of_one_vcenter() {
        let key = |u: &str| VsphereConfig::from_url(u).unwrap().lock_key();
        assert_eq!(key("vsphere://a@vc/n1"), key("vsphere://b@VC:443/n1"));
        assert_ne!(key("vsphere://vc/n1"), key("vsphere://vc/n2"));
        assert_ne!(key("vsphere://vc/n1"), key("vsphere://vc2/n1"));
        assert_ne!(key("vsphere://vc/n1"), key("vsphere://vc:8443/n1"));
    }

    #[test]
    fn the_url_forms_parse() {
        for f in URL_FORMS {
            assert!(f.form.starts_with(&format!("{}://", f.scheme)), "{f:?}");
            VsphereConfig::from_url(f.example).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }
}
