//! The fence_virsh family's own part: options → [`VirshConfig`], what the
//! SSH driver needs to run virsh on a hypervisor for one domain.
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]).
//! Kept from upstream: the plug is the domain name or UUID (a UUID is
//! normalised to lower-case hyphenated form), `--missing-as-off`,
//! `--use-sudo`/`--sudo-path` (virsh run through sudo on the hypervisor),
//! `-4`/`-6`, the identity file with `--password` as its passphrase.
//!
//! Deliberate difference: host keys. Upstream answers "yes" to an unknown
//! host key; fencekit checks the key against `known_hosts` and accepts an
//! unknown one only when `--ssh-options` carries `StrictHostKeyChecking=no`
//! (any key) or `=accept-new` (an unknown key, never a changed one), or when
//! the key is pinned with the fencekit-only `--ssh-host-key`.

use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{parse_int, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::platform::Driver;
use crate::secret::Secret;
use crate::ssh::config::{
    Profile, SshAuth, SshConfig, DEFAULT_COMMAND_TIMEOUT, DEFAULT_CONNECT_TIMEOUT,
};
use crate::ssh::hostkey::HostKeyPolicy;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Which address family to connect over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpFamily {
    /// Whatever the name resolves to.
    Any,
    /// `-4`.
    V4,
    /// `-6`.
    V6,
}

/// What the SSH driver needs for one fence_virsh invocation.
#[derive(Clone)]
pub struct VirshConfig {
    /// Hypervisor address or name.
    pub host: String,
    /// SSH port.
    pub port: u16,
    /// User to log in as.
    pub username: String,
    /// Password, or the identity file's passphrase (never printed).
    pub password: Option<Secret>,
    /// Private key file.
    pub identity_file: Option<PathBuf>,
    /// Domain name or UUID (`None` for list, list-status and monitor).
    pub domain: Option<String>,
    /// Host key checking.
    pub host_keys: HostKeyPolicy,
    /// Address family.
    pub ip_family: IpFamily,
    /// Run virsh through this sudo (`--use-sudo`, path from `--sudo-path`).
    pub sudo: Option<String>,
    /// A domain virsh does not know is off (`--missing-as-off`).
    pub missing_as_off: bool,
    /// Bound for connecting and logging in (`--login-timeout`; `None`: unlimited).
    pub login_timeout: Option<Duration>,
    /// Bound for one status or list command (`--shell-timeout`; `None`: unlimited).
    pub shell_timeout: Option<Duration>,
    /// Bound for `virsh start` / `destroy` (`--power-timeout`; `None`: unlimited).
    pub power_timeout: Option<Duration>,
}

impl fmt::Debug for VirshConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VirshConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[set]"))
            .field("identity_file", &self.identity_file)
            .field("domain", &self.domain)
            .field("host_keys", &self.host_keys)
            .field("ip_family", &self.ip_family)
            .field("sudo", &self.sudo)
            .field("missing_as_off", &self.missing_as_off)
            .field("login_timeout", &self.login_timeout)
            .field("shell_timeout", &self.shell_timeout)
            .field("power_timeout", &self.power_timeout)
            .finish()
    }
}

/// Builds the configuration from validated option values (the password
/// script, if any, has already replaced `password`). The error is a message
/// that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<VirshConfig, String> {
    let host = values.get(Key::Ip).unwrap_or_default().to_string();
    if host.is_empty() {
        return Err("the hypervisor address (--ip) is empty".to_string());
    }
    let port_text = values.get(Key::Ipport).unwrap_or("22");
    let port = parse_int(port_text)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("the port {port_text} (--ipport) is not between 1 and 65535"))?;
    let username = values.get(Key::Username).unwrap_or_default().to_string();
    if username.is_empty() {
        return Err("the user name (--username) is empty".to_string());
    }
    let domain = match values.get(Key::Plug) {
        None => None,
        Some(p) => Some(domain(p, values.get(Key::PlugSeparator).unwrap_or(","))?),
    };
    let flag = |k: Key| values.flag_of(agent, k);
    if flag(Key::Inet4Only) && flag(Key::Inet6Only) {
        return Err("--inet4-only and --inet6-only exclude each other".to_string());
    }
    let secs = |k: Key| match values.int(k) {
        Some(n) if n > 0 => Some(Duration::from_secs(n.min(86_400) as u64)),
        _ => None,
    };
    Ok(VirshConfig {
        host,
        port,
        username,
        password: values.get(Key::Password).map(Secret::from_str_value),
        identity_file: values.get(Key::IdentityFile).map(PathBuf::from),
        domain,
        host_keys: host_keys(values)?,
        ip_family: if flag(Key::Inet4Only) {
            IpFamily::V4
        } else if flag(Key::Inet6Only) {
            IpFamily::V6
        } else {
            IpFamily::Any
        },
        sudo: flag(Key::UseSudo).then(|| {
            values
                .get(Key::SudoPath)
                .unwrap_or("/usr/bin/sudo")
                .to_string()
        }),
        missing_as_off: flag(Key::MissingAsOff),
        login_timeout: secs(Key::LoginTimeout),
        shell_timeout: secs(Key::ShellTimeout),
        power_timeout: secs(Key::PowerTimeout),
    })
}

/// The SSH driver's configuration for `cfg`.
///
/// Timeouts: the login bound is `--login-timeout`; the driver has one bound
/// per remote command, so it is the larger of `--shell-timeout` (upstream's
/// bound for domstate and list) and `--power-timeout` (its bound for start
/// and destroy). Where a timeout is 0, the driver's defaults still bound
/// every call (upstream would wait forever); `disable_timeout` (Pacemaker)
/// leaves these options as given (it lifts only the wait for the power
/// state). `-4`/`-6` are not passed on: the driver connects to the address
/// as given.
pub fn ssh_config(cfg: &VirshConfig) -> SshConfig {
    let auth = match (&cfg.identity_file, &cfg.password) {
        (Some(path), passphrase) => SshAuth::Key {
            path: path.clone(),
            passphrase: passphrase.clone(),
        },
        (None, Some(pw)) => SshAuth::Password(pw.clone()),
        (None, None) => SshAuth::Agent,
    };
    let mut c = SshConfig::new(
        &cfg.host,
        &cfg.username,
        auth,
        Profile::Virsh {
            plug: cfg.domain.clone(),
        },
    );
    c.port = cfg.port;
    c.host_keys = cfg.host_keys.clone();
    if let Some(sudo) = &cfg.sudo {
        c.use_sudo = true;
        c.sudo_path = sudo.clone();
    }
    c.missing_as_off = cfg.missing_as_off;
    c.connect_timeout = cfg.login_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT);
    c.command_timeout = match (cfg.shell_timeout, cfg.power_timeout) {
        (Some(a), Some(b)) => a.max(b),
        _ => DEFAULT_COMMAND_TIMEOUT,
    };
    c
}

/// The domain a plug names: one plug (several, split by the plug
/// separator, are refused), a UUID normalised as upstream does.
pub fn domain(plug: &str, separator: &str) -> Result<String, String> {
    if !separator.is_empty() && plug.contains(separator) {
        return Err(format!(
            "the plug '{plug}' names several virtual machines (separated by '{separator}'); \
             fencekit fences one per invocation"
        ));
    }
    if plug.is_empty() {
        return Err("the plug (--plug) is empty".to_string());
    }
    Ok(crate::engine::identity::normalise_uuid(plug).unwrap_or_else(|| plug.to_string()))
}

/// Host key policy: `--ssh-host-key` pins; otherwise `--ssh-options`'
/// `StrictHostKeyChecking` and `UserKnownHostsFile` (the last of each wins,
/// as with `ssh -o`), then `--ssh-known-hosts`.
fn host_keys(values: &Values) -> Result<HostKeyPolicy, String> {
    if let Some(fp) = values.get(Key::SshHostKey).filter(|s| !s.is_empty()) {
        let fp = fp.trim();
        return crate::ssh::hostkey::parse_fingerprint(fp)
            .map(HostKeyPolicy::Pinned)
            .map_err(|_| {
                format!("--ssh-host-key '{fp}' is not a SHA256:… fingerprint as ssh-keygen -l prints it")
            });
    }
    let opts = ssh_options(values.get(Key::SshOptions).unwrap_or_default());
    let mut strict = None;
    let mut from_opts = None;
    for (k, v) in opts {
        match k.to_ascii_lowercase().as_str() {
            "stricthostkeychecking" => strict = Some(v.to_ascii_lowercase()),
            "userknownhostsfile" if !v.is_empty() => from_opts = Some(PathBuf::from(v)),
            _ => {}
        }
    }
    let known_hosts = values
        .get(Key::SshKnownHosts)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or(from_opts);
    Ok(match strict.as_deref() {
        Some("no" | "off") => HostKeyPolicy::AcceptAny,
        Some("accept-new") => HostKeyPolicy::AcceptNew(known_hosts),
        _ => HostKeyPolicy::KnownHosts(known_hosts),
    })
}

/// The `-o Key=Value` / `-oKey=Value` / `-o Key Value` settings in an
/// OpenSSH option string (quotes are not interpreted beyond stripping).
pub fn ssh_options(text: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        let setting = if w == "-o" {
            let Some(next) = words.get(i) else { break };
            i += 1;
            next.to_string()
        } else if let Some(rest) = w.strip_prefix("-o") {
            rest.to_string()
        } else {
            continue;
        };
        let setting = setting.trim_matches(|c| c == '\'' || c == '"');
        let (k, v) = match setting.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => match words.get(i) {
                Some(v) => {
                    i += 1;
                    (setting, *v)
                }
                None => (setting, ""),
            },
        };
        out.push((
            k.to_string(),
            v.trim_matches(|c| c == '\'' || c == '"').to_string(),
        ));
    }
    out
}

/// A one-line description of the configuration for `-v` (never the password).
pub fn describe(cfg: &VirshConfig) -> String {
    let keys = match &cfg.host_keys {
        HostKeyPolicy::KnownHosts(None) => {
            "host key checked against ~/.ssh/known_hosts".to_string()
        }
        HostKeyPolicy::KnownHosts(Some(p)) => format!("host key checked against {}", p.display()),
        HostKeyPolicy::AcceptNew(_) => {
            "unknown host key accepted, a changed one refused (accept-new)".to_string()
        }
        HostKeyPolicy::AcceptAny => "any host key accepted (StrictHostKeyChecking=no)".into(),
        HostKeyPolicy::Pinned(fp) => format!("host key pinned to {fp}"),
    };
    format!(
        "SSH to {}@{}:{}{}, {}, {keys}, domain {}{}{}",
        cfg.username,
        cfg.host,
        cfg.port,
        match cfg.ip_family {
            IpFamily::Any => "",
            IpFamily::V4 => " (IPv4 only)",
            IpFamily::V6 => " (IPv6 only)",
        },
        match (&cfg.identity_file, &cfg.password) {
            (Some(f), Some(_)) => format!("key {} with passphrase [set]", f.display()),
            (Some(f), None) => format!("key {}", f.display()),
            (None, Some(_)) => "password [set]".to_string(),
            (None, None) => "no credentials".to_string(),
        },
        cfg.domain.as_deref().unwrap_or("(none: listing)"),
        match &cfg.sudo {
            Some(s) => format!(", virsh through {s}"),
            None => String::new(),
        },
        if cfg.missing_as_off {
            ", a missing domain counts as off"
        } else {
            ""
        },
    )
}

/// The family's configuration from validated option values, for the
/// front (declared in [`FAMILY`]).
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

impl Device for VirshConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(crate::lock::DeviceKey::new(
            &self.host,
            self.port,
            crate::ssh::config::DEFAULT_PORT,
        ))
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        crate::ssh::driver::SshDriver::new(ssh_config(&self))
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How the platform serves the fence_virsh family (`Platform::agent_family`).
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    check,
    read_by_name: &[SSH],
    ..AgentFamily::new(device)
};

/// `--ssh` (`-x`): always on here (its default is 1, and stdin `ssh=0`
/// keeps it on, as upstream), read only by [`check`].
const SSH: &str = "ssh";

/// fence_virsh's own input check, after the shared ones: an identity file
/// needs the SSH connection (upstream's message).
fn check(values: &Values, _agent: &Agent) -> Vec<String> {
    let mut errors = Vec::new();
    if values.has(Key::IdentityFile) && !values.has_named(SSH) {
        errors.push(
            "Failed: You have to use identity file together with ssh connection (-x)".to_string(),
        );
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::defs::agent;

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<VirshConfig, String> {
        let a = agent("fence_virsh").unwrap();
        let mut v = Values::new();
        for (k, val) in [("ip", "h"), ("username", "root"), ("password", "pw")]
            .iter()
            .chain(pairs)
        {
            v.set_named(k, *val);
        }
        v.apply_defaults(&a);
        config(&v, &a)
    }

    #[test]
    fn an_identity_file_needs_the_ssh_connection() {
        let a = agent("fence_virsh").unwrap();
        let mut v = Values::new();
        v.apply_defaults(&a);
        v.set(Key::IdentityFile, "/some/key");
        assert!((FAMILY.check)(&v, &a).is_empty(), "--ssh is on by default");
        v.set_named(SSH, "0");
        assert!((FAMILY.check)(&v, &a).is_empty(), "ssh=0 keeps it on");
        let mut v = Values::new();
        v.set(Key::IdentityFile, "/some/key");
        assert_eq!(
            (FAMILY.check)(&v, &a),
            vec!["Failed: You have to use identity file together with ssh connection (-x)"]
        );
        v.remove(Key::IdentityFile);
        assert!((FAMILY.check)(&v, &a).is_empty());
    }

    #[test]
    fn defaults_are_strict_host_keys_port_22_no_sudo() {
        let c = cfg_of(&[("plug", "vm1")]).unwrap();
        assert_eq!((c.host.as_str(), c.port), ("h", 22));
        assert_eq!(c.domain.as_deref(), Some("vm1"));
        assert_eq!(c.host_keys, HostKeyPolicy::KnownHosts(None));
        assert_eq!(c.ip_family, IpFamily::Any);
        assert_eq!((c.sudo.clone(), c.missing_as_off), (None, false));
        assert_eq!(c.login_timeout, Some(Duration::from_secs(5)));
        assert_eq!(c.shell_timeout, Some(Duration::from_secs(3)));
        assert_eq!(
            c.password.as_ref().map(|p| p.expose().to_vec()),
            Some(b"pw".to_vec())
        );
    }

    #[test]
    fn ssh_options_decide_host_key_acceptance() {
        for (opts, want) in [
            ("-o StrictHostKeyChecking=no", HostKeyPolicy::AcceptAny),
            ("-oStrictHostKeyChecking=accept-new", HostKeyPolicy::AcceptNew(None)),
            (
                "-t '/bin/bash' -o StrictHostKeyChecking=yes",
                HostKeyPolicy::KnownHosts(None),
            ),
            (
                "-o StrictHostKeyChecking no -o UserKnownHostsFile=/k -o StrictHostKeyChecking=accept-new",
                HostKeyPolicy::AcceptNew(Some(PathBuf::from("/k"))),
            ),
        ] {
            let c = cfg_of(&[("ssh_options", opts)]).unwrap();
            assert_eq!(c.host_keys, want, "{opts}");
        }
        let c = cfg_of(&[("ssh_known_hosts", "/etc/fk_hosts")]).unwrap();
        assert_eq!(
            c.host_keys,
            HostKeyPolicy::KnownHosts(Some(PathBuf::from("/etc/fk_hosts")))
        );
        let c = cfg_of(&[
            (
                "ssh_host_key",
                "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
            ),
            ("ssh_options", "-o StrictHostKeyChecking=no"),
        ])
        .unwrap();
        assert!(
            matches!(c.host_keys, HostKeyPolicy::Pinned(_)),
            "a pin wins"
        );
        assert!(cfg_of(&[("ssh_host_key", "md5:aa")]).is_err());
    }

    #[test]
    fn uuids_are_normalised_and_several_plugs_refused() {
        assert_eq!(
            domain("0E4E3F2A1B2C4D5E8F90A1B2C3D4E5F6", ",").unwrap(),
            "0e4e3f2a-1b2c-4d5e-8f90-a1b2c3d4e5f6"
        );
        assert_eq!(
            domain("{0e4e3f2a-1b2c-4d5e-8f90-a1b2c3d4e5f6}", ",").unwrap(),
            "0e4e3f2a-1b2c-4d5e-8f90-a1b2c3d4e5f6"
        );
        assert_eq!(domain("web-01", ",").unwrap(), "web-01");
        assert!(domain("vm1,vm2", ",").unwrap_err().contains("several"));
        assert_eq!(domain("vm1,x", ";").unwrap(), "vm1,x");
    }

    #[test]
    fn flags_map_by_presence() {
        let c = cfg_of(&[
            ("use_sudo", "0"),
            ("sudo_path", "/bin/sudo"),
            ("missing_as_off", "0"),
            ("inet6_only", "1"),
            ("login_timeout", "0"),
        ])
        .unwrap();
        assert_eq!(c.sudo.as_deref(), Some("/bin/sudo"));
        assert!(c.missing_as_off);
        assert_eq!(c.ip_family, IpFamily::V6);
        assert_eq!(c.login_timeout, None);
        assert!(cfg_of(&[("inet6_only", ""), ("inet4_only", "")]).is_err());
    }

    #[test]
    fn the_ssh_driver_gets_every_setting() {
        let key = tempfile::NamedTempFile::new().unwrap();
        let k = key.path().to_str().unwrap();
        let c = cfg_of(&[
            ("plug", "vm1"),
            ("identity_file", k),
            ("ipport", "2222"),
            ("use_sudo", ""),
            ("missing_as_off", ""),
            ("ssh_options", "-o StrictHostKeyChecking=no"),
            ("power_timeout", "7"),
        ])
        .unwrap();
        let s = ssh_config(&c);
        assert_eq!(
            (s.host.as_str(), s.port, s.username.as_str()),
            ("h", 2222, "root")
        );
        assert!(
            matches!(&s.auth, SshAuth::Key { path, passphrase: Some(_) } if path == key.path())
        );
        assert_eq!(
            s.profile,
            Profile::Virsh {
                plug: Some("vm1".into())
            }
        );
        assert_eq!(s.host_keys, HostKeyPolicy::AcceptAny);
        assert_eq!(
            (s.use_sudo, s.sudo_path.as_str(), s.missing_as_off),
            (true, "/usr/bin/sudo", true)
        );
        assert_eq!(s.connect_timeout, Duration::from_secs(5));
        assert_eq!(
            s.command_timeout,
            Duration::from_secs(7),
            "max(shell 3, power 7)"
        );
        s.validate().unwrap();
        let c = cfg_of(&[("plug", "vm1"), ("power_timeout", "0")]).unwrap();
        let s = ssh_config(&c);
        assert!(matches!(s.auth, SshAuth::Password(_)));
        assert_eq!(
            s.host_keys,
            HostKeyPolicy::KnownHosts(None),
            "strict by default"
        );
        assert_eq!(s.command_timeout, DEFAULT_COMMAND_TIMEOUT);
    }

    #[test]
    fn the_description_never_shows_the_password() {
        let c = cfg_of(&[("plug", "vm1"), ("password", "hunter2")]).unwrap();
        let d = describe(&c);
        assert!(
            d.contains("password [set]") && !d.contains("hunter2"),
            "{d}"
        );
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}
