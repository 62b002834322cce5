//! One fencing method: which driver, which endpoint, which credential
//! reference — and the driver ([`AnyDriver`]) it builds when it is time to act.
//!
//! Credentials stay references (file, environment variable, script) until
//! the moment a driver is built, so a plan can be printed and checked
//! (`--dry-run`) without reading a secret.

use super::credential::CredentialRef;
use super::driver::AnyDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::ExpectedIdentity;
use crate::ipmi::config::IpmiConfig;
use crate::ipmi::driver::IpmiDriver;
use crate::redfish::config::RedfishConfig;
use crate::redfish::driver::RedfishDriver;
use crate::ssh::config::{SshAuth, SshConfig};
use crate::ssh::driver::SshDriver;
use std::path::PathBuf;

/// A method ready to build a driver. (Plans hold a few per node, so the
/// size difference between variants does not matter.)
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum MethodSpec {
    /// IPMI over LAN; the config's password is filled from `credential` at build time.
    Ipmi {
        /// Everything but the password.
        config: IpmiConfig,
        /// Where the password comes from.
        credential: CredentialRef,
        /// Who the machine behind it must be (empty: not checked).
        expect: ExpectedIdentity,
    },
    /// SSH (virsh, host or custom profile). `config.auth` is completed at
    /// build time: a key (`identity`, with `credential` as its passphrase),
    /// the ssh-agent (`agent`), or a password from `credential`.
    Ssh {
        /// Everything but the secret.
        config: SshConfig,
        /// A private key file.
        identity: Option<PathBuf>,
        /// Use the ssh-agent.
        agent: bool,
        /// The password, or the key's passphrase.
        credential: CredentialRef,
        /// Who the machine behind it must be (empty: not checked).
        expect: ExpectedIdentity,
    },
    /// A person fences the node by hand and acknowledges (`fencekit ack`).
    Manual {
        /// The node (acknowledgments are per node).
        node: String,
        /// What the person must do.
        instructions: String,
    },
    /// Redfish; the config's password is filled from `credential` at build time.
    Redfish {
        /// Everything but the password.
        config: RedfishConfig,
        /// Where the password comes from.
        credential: CredentialRef,
        /// Who the machine behind it must be (empty: not checked). With a
        /// UUID and no systems URI, it also chooses the system.
        expect: ExpectedIdentity,
    },
}

impl MethodSpec {
    /// The driver's name.
    pub fn driver_name(&self) -> &'static str {
        match self {
            MethodSpec::Ipmi { .. } => "ipmi",
            MethodSpec::Redfish { .. } => "redfish",
            MethodSpec::Manual { .. } => "manual",
            MethodSpec::Ssh { .. } => "ssh",
        }
    }

    /// The endpoint as a URL, without credentials.
    pub fn endpoint(&self) -> String {
        match self {
            MethodSpec::Ipmi { config, .. } => {
                let host = if config.host.contains(':') {
                    format!("[{}]", config.host)
                } else {
                    config.host.clone()
                };
                format!("ipmi://{host}:{}", config.port)
            }
            MethodSpec::Redfish { config, .. } => {
                let path = config
                    .systems_uri
                    .clone()
                    .unwrap_or_else(|| config.redfish_uri.clone());
                let plug = config
                    .plug
                    .as_deref()
                    .map(|p| format!(" (system {p})"))
                    .unwrap_or_default();
                format!("{}{path}{plug}", config.base_url())
            }
            MethodSpec::Manual { node, .. } => format!("manual:{node}"),
            MethodSpec::Ssh { config, .. } => {
                let path = match &config.profile {
                    crate::ssh::config::Profile::Virsh { plug } => {
                        format!("/virsh/{}", plug.as_deref().unwrap_or(""))
                    }
                    crate::ssh::config::Profile::Host => "/host".into(),
                    crate::ssh::config::Profile::Custom { .. } => "/custom".into(),
                };
                format!("ssh://{}{path}", config.endpoint())
            }
        }
    }

    /// The BMC this method talks to: methods with the same key share a BMC
    /// (blades, several systems behind one service) and are serialised.
    pub fn bmc_key(&self) -> String {
        match self {
            MethodSpec::Ipmi { .. } => self.endpoint(),
            MethodSpec::Redfish { config, .. } => config.base_url(),
            MethodSpec::Manual { .. } => self.endpoint(),
            MethodSpec::Ssh { config, .. } => format!("ssh://{}", config.endpoint()),
        }
    }

    /// True when the method sends credentials in clear text (Redfish over
    /// plain HTTP), which a front should say.
    pub fn cleartext(&self) -> bool {
        matches!(self, MethodSpec::Redfish { config, .. }
            if config.scheme == crate::redfish::config::Scheme::Http)
    }

    /// The user name, for plans and audit records.
    pub fn username(&self) -> &str {
        match self {
            MethodSpec::Ipmi { config, .. } => &config.username,
            MethodSpec::Redfish { config, .. } => &config.username,
            MethodSpec::Manual { .. } => "",
            MethodSpec::Ssh { config, .. } => &config.username,
        }
    }

    /// The credential reference.
    pub fn credential(&self) -> &CredentialRef {
        const NONE: &CredentialRef = &CredentialRef::None;
        match self {
            MethodSpec::Manual { .. } => NONE,
            MethodSpec::Ipmi { credential, .. }
            | MethodSpec::Redfish { credential, .. }
            | MethodSpec::Ssh { credential, .. } => credential,
        }
    }

    /// Who the machine behind this method must be (empty for manual
    /// methods and when nothing is pinned).
    pub fn expected(&self) -> &ExpectedIdentity {
        const NONE: &ExpectedIdentity = &ExpectedIdentity {
            uuid: None,
            serial: None,
        };
        match self {
            MethodSpec::Manual { .. } => NONE,
            MethodSpec::Ipmi { expect, .. }
            | MethodSpec::Redfish { expect, .. }
            | MethodSpec::Ssh { expect, .. } => expect,
        }
    }

    /// Pins the method to `identity`. `Err` for a manual method, which has
    /// no device that could report one.
    pub fn set_expected(&mut self, identity: ExpectedIdentity) -> Result<(), String> {
        match self {
            MethodSpec::Manual { .. } if identity.is_empty() => Ok(()),
            MethodSpec::Manual { .. } => {
                Err("a manual method has no device that could report an identity".into())
            }
            MethodSpec::Ipmi { expect, .. }
            | MethodSpec::Redfish { expect, .. }
            | MethodSpec::Ssh { expect, .. } => {
                *expect = identity;
                Ok(())
            }
        }
    }

    /// Resolves the credential and builds the driver (not for manual methods,
    /// which have none).
    pub fn build(&self) -> Result<AnyDriver, DriverError> {
        let config_err = |m: String| DriverError::new(ErrorKind::Config, Stage::Authenticate, m);
        match self {
            MethodSpec::Ssh {
                config,
                identity,
                agent,
                credential,
                ..
            } => {
                let mut c = config.clone();
                c.auth = match (identity, agent) {
                    (Some(path), _) => SshAuth::Key {
                        path: path.clone(),
                        passphrase: match credential {
                            CredentialRef::None => None,
                            other => Some(other.resolve().map_err(config_err)?),
                        },
                    },
                    (None, true) => SshAuth::Agent,
                    (None, false) => SshAuth::Password(credential.resolve().map_err(config_err)?),
                };
                SshDriver::new(c).map(AnyDriver::Ssh).map_err(config_err)
            }
            MethodSpec::Manual { .. } => Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Status,
                "a manual method has no device to talk to",
            )),
            MethodSpec::Ipmi {
                config, credential, ..
            } => {
                let mut c = config.clone();
                c.password = credential.resolve().map_err(config_err)?;
                IpmiDriver::new(c).map(AnyDriver::Ipmi).map_err(config_err)
            }
            MethodSpec::Redfish {
                config, credential, ..
            } => {
                let mut c = config.clone();
                c.password = credential.resolve().map_err(config_err)?;
                // The pinned UUID also chooses among several systems.
                if c.expect_uuid.is_none() {
                    c.expect_uuid = self.expected().uuid.clone();
                }
                RedfishDriver::new(c)
                    .map(AnyDriver::Redfish)
                    .map_err(config_err)
            }
        }
    }
}
