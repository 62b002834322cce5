//! SSH on the platform seam ([`crate::platform`]): `ssh://` targets with
//! the virsh, host and custom profiles; a method that builds an
//! [`SshDriver`]; the hypervisor (virsh), the node itself (host) or its
//! controller (custom) as the verify party; the domains for `list`.

use super::config::{Profile, SshAuth, SshConfig};
use super::driver::SshDriver;
use super::hostkey::HostKeyPolicy;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform, PlugEntry};
use std::fmt;
use std::path::PathBuf;
use std::time::Instant;

/// SSH to a hypervisor, the node itself or a custom controller.
pub struct Ssh;

/// The registered platform.
pub static PLATFORM: Ssh = Ssh;

impl Platform for Ssh {
    fn facts(&self) -> Option<&'static dyn crate::platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
    fn node_session<'a>(
        &self,
        driver: &'a mut dyn crate::platform::Driver,
    ) -> Option<&'a mut dyn crate::platform::NodeSession> {
        driver
            .as_any_mut()
            .downcast_mut::<super::driver::SshDriver>()
            .map(|d| d as &mut dyn crate::platform::NodeSession)
    }
    fn name(&self) -> &'static str {
        "ssh"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "ssh"
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn check_fields(&self, f: &dyn crate::platform::build::Fields) -> Result<(), String> {
        super::build::check_fields(f)
    }
    fn builder(&self) -> Option<&'static dyn MethodBuilder> {
        Some(&PLATFORM)
    }
    fn agent_family(
        &self,
        _def: &platform::agent::defs::Family,
    ) -> Option<&'static platform::agent::AgentFamily> {
        Some(&super::agent::FAMILY)
    }
}

impl MethodBuilder for Ssh {
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        super::build::from_url(url, o).map(|r| r.map(|c| SshMethod::boxed(c, o)))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        _ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        super::build::from_parts(endpoint, o).map(|c| SshMethod::boxed(c, o))
    }
}

/// An SSH method. `config.auth` is completed at build time: a key
/// (`identity`, with `credential` as its passphrase), the ssh-agent
/// (`agent`), or a password from `credential`.
#[derive(Clone, Debug)]
pub struct SshMethod {
    /// Everything but the secret.
    pub config: SshConfig,
    /// A private key file.
    pub identity: Option<PathBuf>,
    /// Use the ssh-agent.
    pub agent: bool,
    /// The password, or the key's passphrase.
    pub credential: CredentialRef,
    /// Who the machine behind it must be (empty: not checked).
    pub expect: ExpectedIdentity,
}

impl SshMethod {
    /// A method of `config` with `o`'s key, agent and credential.
    fn boxed(config: SshConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(SshMethod {
            config,
            identity: o.identity_file.clone(),
            agent: o.ssh_agent,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
        })
    }

    /// The profile's verify party.
    fn role(&self) -> Party {
        match self.config.profile {
            Profile::Host => Party::Host {
                host: self.config.host.clone(),
                port: self.config.port,
            },
            // The hypervisor sees the guest from outside it.
            Profile::Virsh { .. } => Party::Hypervisor,
            // A custom command is the node's controller.
            Profile::Custom { .. } => Party::Controller,
        }
    }
}

impl Method for SshMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ssh://{}", self.config.endpoint())?;
        match &self.config.profile {
            Profile::Virsh { plug } => write!(f, "/virsh/{}", plug.as_deref().unwrap_or("")),
            Profile::Host => f.write_str("/host"),
            Profile::Custom { .. } => f.write_str("/custom"),
        }
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} profile, ", self.config.profile.name())?;
        match (&self.identity, self.agent) {
            (Some(p), _) => write!(f, "key {}", p.display())?,
            (None, true) => f.write_str("ssh-agent")?,
            (None, false) => f.write_str("password")?,
        }
        f.write_str(", host key ")?;
        match &self.config.host_keys {
            HostKeyPolicy::KnownHosts(None) => f.write_str("checked against ~/.ssh/known_hosts"),
            HostKeyPolicy::KnownHosts(Some(p)) => write!(f, "checked against {}", p.display()),
            HostKeyPolicy::Pinned(fp) => write!(f, "pinned {fp}"),
            HostKeyPolicy::AcceptNew(_) => f.write_str("accepted if new"),
            HostKeyPolicy::AcceptAny => f.write_str("NOT checked"),
        }
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        self.role()
    }
    fn address(&self) -> Option<(String, u16)> {
        Some((self.config.host.clone(), self.config.port))
    }
    fn username(&self) -> &str {
        &self.config.username
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    platform::pinned_in_expect!();
    fn set_login_timeout(&mut self, timeout: std::time::Duration) {
        self.config.connect_timeout = timeout;
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let mut c = self.config.clone();
            let cred = &self.credential;
            c.auth = match (&self.identity, self.agent) {
                (Some(path), _) => SshAuth::Key {
                    path: path.clone(),
                    passphrase: match cred {
                        CredentialRef::None => None,
                        other => Some(
                            other
                                .resolve(deadline)
                                .await
                                .map_err(platform::credential_error)?,
                        ),
                    },
                },
                (None, true) => SshAuth::Agent,
                (None, false) => SshAuth::Password(
                    cred.resolve(deadline)
                        .await
                        .map_err(platform::credential_error)?,
                ),
            };
            SshDriver::new(c)
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for SshDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let s = self.stats();
        (s.commands, s.commands, 0)
    }
    /// The domains `virsh list --all` shows, with their states.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        Ok(self
            .list(deadline)
            .await?
            .into_iter()
            .map(|(id, state)| PlugEntry {
                id,
                alias: String::new(),
                state,
            })
            .collect())
    }
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let domains = SshDriver::list(self, deadline)
            .await
            .map_err(|e| e.to_string())?;
        Ok(domains
            .into_iter()
            .map(|(name, state)| Listed {
                target: None,
                name,
                uri: None,
                state,
                error: None,
            })
            .collect())
    }
}

impl crate::platform::NodeSession for super::driver::SshDriver {
    fn exec<'a>(
        &'a mut self,
        command: &'a str,
        deadline: Option<std::time::Instant>,
    ) -> crate::platform::Local<'a, Result<crate::platform::CommandOutput, DriverError>> {
        Box::pin(async move {
            let o = super::driver::SshDriver::exec(self, command, deadline).await?;
            Ok(crate::platform::CommandOutput {
                status: o.status,
                stdout: o.stdout,
            })
        })
    }
}
