//! What a REST (Automation API) driver is given: where vCenter is, which
//! API path, who logs in, which VM, and its bounds. The TLS trust is the
//! caller's (a rustls configuration handed to [`super::driver::RestDriver::new`]).

use super::model::Generation;
use crate::secret::Secret;
use std::time::Duration;

/// HTTPS's port, which the lock key leaves out.
pub const HTTPS_PORT: u16 = 443;

/// One vCenter and, for power actions, one VM.
#[derive(Clone, Debug)]
pub struct RestConfig {
    /// vCenter's address or host name.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// HTTPS (false: plain HTTP, as upstream speaks without `--ssl`).
    pub https: bool,
    /// The API path (`/rest`, `/api`, or a proxy's prefix), without a
    /// trailing `/`.
    pub api_path: String,
    /// User name (`administrator@vsphere.local`, `fence@corp`).
    pub username: String,
    /// Its password.
    pub password: Secret,
    /// The VM: its inventory name, or its identifier (`vm-123`) when no VM
    /// has that name. Empty for a listing.
    pub plug: String,
    /// `list`'s raw query (upstream's `--filter`,
    /// `filter.names=a&filter.names=b`).
    pub filter: Option<String>,
    /// The listing only proves the API answers (`monitor`): more VMs than
    /// the API lists at once is an answer, not a failure (as upstream).
    pub monitor: bool,
    /// Bound on each request.
    pub request_timeout: Duration,
}

impl RestConfig {
    /// A configuration for `https://HOST:PORT/rest` as `username`.
    pub fn new(host: &str, port: u16, username: &str, password: Secret) -> RestConfig {
        RestConfig {
            host: host.to_string(),
            port,
            https: true,
            api_path: "/rest".into(),
            username: username.to_string(),
            password,
            plug: String::new(),
            filter: None,
            monitor: false,
            request_timeout: Duration::from_secs(20),
        }
    }

    /// The generation the API path speaks.
    pub fn generation(&self) -> Generation {
        Generation::of_path(&self.api_path)
    }

    /// `https://HOST:PORT/API-PATH` (an IPv6 address in brackets).
    pub fn base_url(&self) -> String {
        let host = match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        };
        format!(
            "{}://{host}:{}{}",
            if self.https { "https" } else { "http" },
            self.port,
            self.api_path
        )
    }

    /// Checks what can be checked offline. The text reads after "Failed: ".
    pub fn validate(&self) -> Result<(), String> {
        if self.host.trim().is_empty() {
            return Err("the vCenter address (--ip) is empty".into());
        }
        if self.host.contains(['/', '@', '?', '#']) || self.host.chars().any(char::is_whitespace) {
            return Err(format!(
                "'{}' (--ip) is not an address or host name",
                super::model::printable(&self.host, 80)
            ));
        }
        if self.port == 0 {
            return Err("the port (--ipport) is 0".into());
        }
        if !self.api_path.starts_with('/')
            || self.api_path.contains(['?', '#', ' ', '\\'])
            || self.api_path.split('/').any(|s| s == "..")
        {
            return Err(format!(
                "'{}' (--api-path) is not a path such as /rest or /api",
                super::model::printable(&self.api_path, 80)
            ));
        }
        if self.username.is_empty() {
            return Err("no user name (--username) to log in to vCenter with".into());
        }
        if let Some(f) = &self.filter {
            if f.contains(['#', ' ', '\n', '\r']) || f.starts_with('?') {
                return Err(format!(
                    "'{}' (--filter) is not a query such as filter.names=node1&filter.names=node2",
                    super::model::printable(f, 80)
                ));
            }
        }
        if self.plug.chars().any(char::is_control) {
            return Err("the VM name (--plug) holds a control character".into());
        }
        Ok(())
    }

    /// The per-device lock key: vCenter, narrowed to the VM (another VM
    /// behind the same vCenter may be fenced at the same time).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let vm = (!self.plug.is_empty()).then(|| format!("vm/{}", self.plug));
        crate::lock::DeviceKey::new(&self.host, self.port, HTTPS_PORT)
            .with_system(vm.as_deref(), "vm/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RestConfig {
        RestConfig::new("vc.example", 443, "fence", Secret::from_str_value("pw"))
    }

    #[test]
    fn urls_and_checks() {
        let mut c = cfg();
        assert_eq!(c.base_url(), "https://vc.example:443/rest");
        c.host = "fe80::1".into();
        c.https = false;
        c.port = 80;
        c.api_path = "/api".into();
        assert_eq!(c.base_url(), "http://[fe80::1]:80/api");
        assert_eq!(c.generation(), Generation::Api);
        c.validate().unwrap();
        for (f, v) in [
            ("host", ""),
            ("host", "a/b"),
            ("path", "rest"),
            ("path", "/a/../b"),
            ("user", ""),
            ("filter", "a b"),
        ] {
            let mut c = cfg();
            match f {
                "host" => c.host = v.into(),
                "path" => c.api_path = v.into(),
                "user" => c.username = v.into(),
                _ => c.filter = Some(v.into()),
            }
            assert!(c.validate().is_err(), "{f}={v}");
        }
    }

    #[test]
    fn lock_keys_name_the_vm() {
        let mut c = cfg();
        c.plug = "node1".into();
        let k = c.lock_key();
        assert_eq!(k.device(), "vc.example");
        assert_eq!(k.system(), Some("vm/node1"));
        let mut d = cfg();
        d.plug = "node2".into();
        assert!(!k.conflicts(&d.lock_key()));
        assert!(k.conflicts(&c.lock_key()));
    }
}
