//! What a caller configures for one SSH-reached power target, and the
//! target URL forms of the native CLI (`ssh://user@host[:port]/virsh/DOMAIN`,
//! `ssh://user@host/host`).
//!
//! Checking happens here, before any connection ([`SshConfig::validate`]);
//! what the settings mean on the wire is [`crate::ssh::session`]'s and
//! [`crate::ssh::profile`]'s business.

use super::hostkey::{self, HostKeyPolicy};
use super::profile;
use crate::secret::Secret;
use std::path::PathBuf;
use std::time::Duration;

/// The SSH port used when none is given.
pub const DEFAULT_PORT: u16 = 22;
/// Default bound on TCP connect + SSH handshake + authentication.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default bound on one remote command (virsh can hang: quirk 27).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// Upstream's default `--sudo-path`.
pub const DEFAULT_SUDO_PATH: &str = "/usr/bin/sudo";

/// How the client proves who it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SshAuth {
    /// Password authentication (keyboard-interactive when the server only
    /// offers that), one attempt.
    Password(Secret),
    /// A private key file (OpenSSH or PEM format), one attempt.
    Key {
        /// The private key file (`--identity-file`).
        path: PathBuf,
        /// Its passphrase, when it is encrypted.
        passphrase: Option<Secret>,
    },
    /// The keys held by a running ssh-agent (`SshConfig::agent_socket`, else
    /// `$SSH_AUTH_SOCK`), tried in the agent's order.
    Agent,
}

impl SshAuth {
    /// A short name for the record: "password", "key FILE", "ssh-agent".
    pub fn describe(&self) -> String {
        match self {
            SshAuth::Password(_) => "password auth".into(),
            SshAuth::Key { path, .. } => format!("key auth ({})", path.display()),
            SshAuth::Agent => "ssh-agent auth".into(),
        }
    }
}

/// What runs on the remote side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Profile {
    /// A libvirt hypervisor: `virsh domstate|destroy|start|list --all`
    /// (`fence_virsh`). `plug` is a domain name or UUID (UUIDs are sent
    /// lower-case and hyphenated); it may be absent for `list`.
    Virsh {
        /// Domain name or UUID.
        plug: Option<String>,
    },
    /// The node itself: status is "SSH login works and `true` runs" (on);
    /// a host that cannot be reached is *unreadable*, never off (a stopped
    /// sshd, a partition and a typo look the same as a dead host). Off is
    /// `systemctl poweroff --force --force`, reported as sent, unverified
    /// (nothing can observe it off); on is impossible. As the only fencing
    /// level it needs an explicit opt-in (`--allow-host-only`).
    Host,
    /// Command templates (from an agent definition). `{plug}` in a
    /// template becomes the plug as one quoted shell word; the status
    /// command's output lines are matched against the patterns (exact
    /// lines, `*` as wildcard).
    Custom {
        /// Status command template.
        status: String,
        /// Power-on command template.
        on: String,
        /// Power-off command template.
        off: String,
        /// A status output line matching this means on.
        on_pattern: String,
        /// A status output line matching this means off.
        off_pattern: String,
        /// What `{plug}` stands for.
        plug: Option<String>,
        /// Command template printing the machine's UUID, if the target
        /// has one (without it the profile cannot report an identity).
        uuid: Option<String>,
    },
}

impl Profile {
    /// "virsh", "host" or "custom".
    pub fn name(&self) -> &'static str {
        match self {
            Profile::Virsh { .. } => "virsh",
            Profile::Host => "host",
            Profile::Custom { .. } => "custom",
        }
    }
}

/// Everything needed to fence through one SSH server.
#[derive(Clone, Debug)]
pub struct SshConfig {
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// TCP port (22).
    pub port: u16,
    /// Remote user.
    pub username: String,
    /// How to authenticate.
    pub auth: SshAuth,
    /// How to trust the host key.
    pub host_keys: HostKeyPolicy,
    /// What to run.
    pub profile: Profile,
    /// Prefix every command with `sudo_path` (upstream `--use-sudo`).
    pub use_sudo: bool,
    /// The remote sudo (`/usr/bin/sudo`).
    pub sudo_path: String,
    /// Bound on TCP connect, handshake and authentication (cut further by
    /// the step deadline).
    pub connect_timeout: Duration,
    /// Bound on one remote command (cut further by the step deadline).
    pub command_timeout: Duration,
    /// virsh: a domain that does not exist counts as off (`--missing-as-off`).
    pub missing_as_off: bool,
    /// The ssh-agent socket for [`SshAuth::Agent`] (`None`: `$SSH_AUTH_SOCK`).
    pub agent_socket: Option<PathBuf>,
}

impl SshConfig {
    /// The device the per-device lock is keyed by (the hypervisor or host
    /// reached: host, and the port when not 22).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
    }

    /// Port 22, host key checked against `~/.ssh/known_hosts`, no sudo,
    /// default timeouts.
    pub fn new(host: &str, username: &str, auth: SshAuth, profile: Profile) -> Self {
        SshConfig {
            host: host.to_string(),
            port: DEFAULT_PORT,
            username: username.to_string(),
            auth,
            host_keys: HostKeyPolicy::KnownHosts(None),
            profile,
            use_sudo: false,
            sudo_path: DEFAULT_SUDO_PATH.to_string(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            missing_as_off: false,
            agent_socket: None,
        }
    }

    /// `user@host:port` for messages (IPv6 in brackets).
    pub fn endpoint(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{}@{host}:{}", self.username, self.port)
    }

    /// The sudo prefix when `use_sudo` is set.
    pub fn sudo(&self) -> Option<&str> {
        self.use_sudo.then_some(self.sudo_path.as_str())
    }

    /// Checks everything that can be checked without connecting.
    pub fn validate(&self) -> Result<(), SshConfigError> {
        use SshConfigError as E;
        if self.host.is_empty() {
            return Err(E::NoHost);
        }
        if self
            .host
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '/' || c == '@')
        {
            return Err(E::BadHost(profile::printable(&self.host, 80)));
        }
        if self.port == 0 {
            return Err(E::PortZero);
        }
        if self.username.is_empty() {
            return Err(E::NoUser);
        }
        if self.username.chars().any(char::is_control) {
            return Err(E::UserControl);
        }
        match &self.auth {
            SshAuth::Password(p) => {
                let s = std::str::from_utf8(p.expose()).map_err(|_| E::PasswordNotUtf8)?;
                if s.contains('\0') {
                    return Err(E::PasswordNul);
                }
            }
            SshAuth::Key { path, passphrase } => {
                if !path.is_file() {
                    return Err(E::NoIdentityFile(path.clone()));
                }
                if let Some(p) = passphrase {
                    let s = std::str::from_utf8(p.expose()).map_err(|_| E::PassphraseNotUtf8)?;
                    if s.contains('\0') {
                        return Err(E::PassphraseNul);
                    }
                }
            }
            SshAuth::Agent => {
                if self.agent_socket.is_none() && std::env::var_os("SSH_AUTH_SOCK").is_none() {
                    return Err(E::NoAgent);
                }
            }
        }
        if let HostKeyPolicy::Pinned(fp) = &self.host_keys {
            hostkey::parse_fingerprint(fp)?;
        }
        match &self.profile {
            Profile::Virsh { plug: Some(p) } => {
                profile::virsh_plug(p)?;
            }
            Profile::Virsh { plug: None } | Profile::Host => {}
            Profile::Custom {
                status,
                on,
                off,
                on_pattern,
                off_pattern,
                plug,
                uuid,
            } => {
                let named = [("status", status), ("on", on), ("off", off)];
                for (what, t) in named.into_iter().chain(uuid.iter().map(|u| ("uuid", u))) {
                    if t.trim().is_empty() {
                        return Err(E::EmptyCommand(what));
                    }
                    profile::expand_template(t, plug.as_deref())?;
                }
                if on_pattern.is_empty() || off_pattern.is_empty() {
                    return Err(E::EmptyPattern);
                }
                if on_pattern == off_pattern {
                    return Err(E::SamePatterns(on_pattern.clone()));
                }
            }
        }
        if self.use_sudo && self.sudo_path.trim().is_empty() {
            return Err(E::NoSudoPath);
        }
        if self.sudo_path.chars().any(char::is_control) {
            return Err(E::SudoControl);
        }
        if self.connect_timeout.is_zero() || self.command_timeout.is_zero() {
            return Err(E::ZeroTimeout);
        }
        Ok(())
    }
}

/// An SSH configuration that cannot work, found before connecting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshConfigError {
    #[error("no SSH host given")]
    NoHost,
    /// The host as printed.
    #[error("'{0}' is not a host name or address")]
    BadHost(String),
    #[error("port 0 is not a usable port")]
    PortZero,
    #[error("no SSH user name given")]
    NoUser,
    #[error("the SSH user name contains control characters")]
    UserControl,
    #[error("the password is not UTF-8, which SSH cannot carry")]
    PasswordNotUtf8,
    #[error("the password contains a NUL byte")]
    PasswordNul,
    #[error("identity file {} does not exist", .0.display())]
    NoIdentityFile(std::path::PathBuf),
    #[error("the key passphrase is not UTF-8")]
    PassphraseNotUtf8,
    #[error("the key passphrase contains a NUL byte")]
    PassphraseNul,
    #[error("ssh-agent authentication asked for, but SSH_AUTH_SOCK is not set (no agent to ask)")]
    NoAgent,
    #[error(transparent)]
    Fingerprint(#[from] hostkey::BadFingerprint),
    #[error(transparent)]
    Plug(#[from] profile::BadPlug),
    /// Which custom command (status, on, off, uuid).
    #[error("the custom {0} command is empty")]
    EmptyCommand(&'static str),
    #[error("the custom on and off patterns must not be empty")]
    EmptyPattern,
    /// The pattern both are.
    #[error("the custom on and off patterns are the same ('{0}')")]
    SamePatterns(String),
    #[error("--use-sudo needs a sudo path")]
    NoSudoPath,
    #[error("the sudo path contains control characters")]
    SudoControl,
    #[error("the SSH timeouts must be above zero")]
    ZeroTimeout,
}

/// An `ssh://` target that does not parse: the URL and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problem.describe(url))]
pub struct BadTarget {
    pub url: String,
    pub problem: TargetProblem,
}

/// What is wrong with an `ssh://` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetProblem {
    NotSsh,
    UnclosedBracket,
    /// What follows `]`.
    AfterHost(String),
    NoHost,
    /// The port as written.
    BadPort(String),
    /// The first path segment.
    UnknownProfile(String),
    Plug(profile::BadPlug),
}

impl TargetProblem {
    fn describe(&self, url: &str) -> String {
        match self {
            TargetProblem::NotSsh => format!("'{url}' is not an ssh:// target"),
            TargetProblem::UnclosedBracket => format!("'{url}': unclosed '[' in the host"),
            TargetProblem::AfterHost(after) => {
                format!("'{url}': unexpected '{after}' after the host")
            }
            TargetProblem::NoHost => format!("'{url}' names no host"),
            TargetProblem::BadPort(p) => format!("'{url}': '{p}' is not a port"),
            TargetProblem::UnknownProfile(other) => format!(
                "'{url}': unknown SSH profile '{other}' (the path must be /virsh/DOMAIN or /host)"
            ),
            // The plug's own words, as before the URL was typed.
            TargetProblem::Plug(e) => e.to_string(),
        }
    }
}

/// An `ssh://` target split into its parts (credentials come separately).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SshTarget {
    /// Host (IPv6 without brackets).
    pub host: String,
    /// Port, or 22.
    pub port: u16,
    /// `user@` from the URL, if any.
    pub username: Option<String>,
    /// The profile named by the path.
    pub profile: Profile,
}

/// Parses `ssh://[user@]host[:port]/virsh[/DOMAIN]` and
/// `ssh://[user@]host[:port]/host`. (A custom profile comes from an agent
/// definition, not from a URL.)
pub fn parse_target(url: &str) -> Result<SshTarget, BadTarget> {
    let bad = |problem| BadTarget {
        url: url.to_string(),
        problem,
    };
    let rest = url
        .strip_prefix("ssh://")
        .ok_or_else(|| bad(TargetProblem::NotSsh))?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (username, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) if !u.is_empty() => (Some(u.to_string()), h),
        Some((_, h)) => (None, h),
        None => (None, authority),
    };
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| bad(TargetProblem::UnclosedBracket))?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(bad(TargetProblem::AfterHost(after.to_string()))),
        };
        (h.to_string(), port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (hostport.to_string(), None),
        }
    };
    if host.is_empty() {
        return Err(bad(TargetProblem::NoHost));
    }
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad(TargetProblem::BadPort(p.to_string())))?,
        None => DEFAULT_PORT,
    };
    let mut parts = path.splitn(2, '/');
    let kind = parts.next().unwrap_or("");
    let arg = parts.next().map(|s| s.trim_end_matches('/')).unwrap_or("");
    let profile = match kind {
        "virsh" => Profile::Virsh {
            plug: (!arg.is_empty()).then(|| arg.to_string()),
        },
        "host" if arg.is_empty() => Profile::Host,
        other => return Err(bad(TargetProblem::UnknownProfile(other.to_string()))),
    };
    if let Profile::Virsh { plug: Some(p) } = &profile {
        profile::virsh_plug(p).map_err(|e| bad(TargetProblem::Plug(e)))?;
    }
    Ok(SshTarget {
        host,
        port,
        username,
        profile,
    })
}

/// The target URL forms of SSH (see [`crate::engine::driver::UrlForm`]). A
/// custom command profile comes from an agent definition, not from a URL.
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[
    crate::engine::driver::UrlForm {
        scheme: "ssh",
        form: "ssh://[USER@]HOST[:PORT]/virsh/DOMAIN",
        meaning: "a libvirt domain, through virsh on its hypervisor; port 22",
        target: true,
        example: "ssh://root@kvm1/virsh/node01",
    },
    crate::engine::driver::UrlForm {
        scheme: "ssh",
        form: "ssh://[USER@]HOST[:PORT]/virsh",
        meaning: "a hypervisor: list its domains",
        target: true,
        example: "ssh://root@kvm1:2222/virsh",
    },
    crate::engine::driver::UrlForm {
        scheme: "ssh",
        form: "ssh://[USER@]HOST[:PORT]/host",
        meaning: "the node itself (off: poweroff over SSH, unverified without a witness)",
        target: true,
        example: "ssh://root@node01/host",
    },
];

#[cfg(test)]
mod url_form_tests {
    #[test]
    fn every_url_form_parses() {
        for f in super::URL_FORMS {
            assert!(f.form.starts_with(&format!("{}://", f.scheme)), "{f:?}");
            super::parse_target(f.example).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
        assert!(super::parse_target("ssh://root@kvm1/custom").is_err());
    }
}
