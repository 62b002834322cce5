//! One fencing method: which driver, which endpoint, which credential
//! reference — and the driver ([`AnyDriver`]) it builds when it is time to act.
//!
//! Credentials stay references (file, environment variable, script) until
//! the moment a driver is built, so a plan can be printed and checked
//! (`--dry-run`) without reading a secret.

use super::credential::{CredentialError, CredentialRef};
use super::driver::AnyDriver;
use crate::aws::config::{AwsConfig, GivenKeys};
use crate::aws::driver::AwsDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::ExpectedIdentity;
use crate::ipmi::config::IpmiConfig;
use crate::ipmi::driver::IpmiDriver;
use crate::redfish::config::RedfishConfig;
use crate::redfish::driver::RedfishDriver;
use crate::secret::Secret;
use crate::snmp::config::SnmpConfig;
use crate::snmp::driver::SnmpDriver;
use crate::snmp::session::Security;
use crate::ssh::config::{SshAuth, SshConfig};
use crate::ssh::driver::SshDriver;
use std::path::PathBuf;
use std::time::Instant;

/// Why an identity cannot be pinned on a method: it has no device that
/// could report one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// A manual method.
    #[error("a manual method has no device that could report an identity")]
    Manual,
    /// A PDU outlet.
    #[error("a PDU outlet cannot report which machine it feeds (no identity to check)")]
    Pdu,
}

/// A method ready to build a driver. Plans hold one per node and level (a
/// fleet of 100,000 nodes, 200,000 of them): the configurations are boxed,
/// so that each is only as large as its own driver's.
#[derive(Clone, Debug)]
pub enum MethodSpec {
    /// IPMI over LAN; the config's password is filled from `credential` at build time.
    Ipmi {
        /// Everything but the password (boxed, as the other configs: a
        /// fleet keeps a method per node and level, and the enum would be
        /// as large as its largest variant).
        config: Box<IpmiConfig>,
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
        config: Box<SshConfig>,
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
        config: Box<RedfishConfig>,
        /// Where the password comes from.
        credential: CredentialRef,
        /// Who the machine behind it must be (empty: not checked). With a
        /// UUID and no systems URI, it also chooses the system.
        expect: ExpectedIdentity,
    },
    /// An EC2 instance through the EC2 API. With an access key ID, the
    /// secret access key comes from `credential` at build time; without
    /// one, the SDKs' credential chain is used.
    Aws {
        /// Everything but the keys (boxed, as the others).
        config: Box<AwsConfig>,
        /// The access key ID, when keys are given.
        access_key: Option<String>,
        /// Where the secret access key comes from (with `access_key`).
        credential: CredentialRef,
        /// The names the instance must have (`node_name`, a tag).
        expect: ExpectedIdentity,
    },
    /// SNMP to one or more switched PDUs; each PDU's secrets are filled
    /// from its [`SnmpCredentials`] at build time.
    Snmp {
        /// Everything but the secrets (their slots hold empty secrets).
        config: SnmpConfig,
        /// Per PDU, in the order of `config.pdus`.
        credentials: Vec<SnmpCredentials>,
    },
}

/// Where one PDU's secrets come from.
#[derive(Clone, Debug, Default)]
pub struct SnmpCredentials {
    /// v1/v2c community.
    pub community: CredentialRef,
    /// v3 authentication password.
    pub auth: CredentialRef,
    /// v3 privacy password.
    pub privacy: CredentialRef,
}

impl SnmpCredentials {
    /// The references that apply to `security`.
    pub fn used(&self, security: &Security) -> Vec<&CredentialRef> {
        match security {
            Security::Community { .. } => vec![&self.community],
            Security::Usm(u) => {
                let mut v = Vec::new();
                if u.auth.is_some() {
                    v.push(&self.auth);
                }
                if u.privacy.is_some() {
                    v.push(&self.privacy);
                }
                v
            }
        }
    }
}

/// Why a PDU's secrets could not be filled in.
#[derive(Debug, thiserror::Error)]
pub enum PduSecretError {
    /// A reference that needs reading where only inline secrets are taken.
    #[error("PDU {pdu}: a secret from {from} cannot be read here")]
    NotInline { pdu: String, from: String },
    /// A reference that could not be read.
    #[error("PDU {pdu}: {source}")]
    Credential {
        pdu: String,
        source: super::credential::CredentialError,
    },
    /// A community-based PDU with an empty community.
    #[error("PDU {pdu}: no community (community_file, community_env or community_script)")]
    NoCommunity { pdu: String },
}

impl PduSecretError {
    /// The engine's class: a password script that ran out of time is a
    /// timeout, anything else a configuration error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            PduSecretError::Credential { source, .. } => source.kind(),
            _ => ErrorKind::Config,
        }
    }
}

/// `config` with the secrets `credentials` give inline, for a front that
/// has read them already (the SNMP agents: options, stdin, their password
/// scripts): [`CredentialRef::Inline`] fills a slot, [`CredentialRef::None`]
/// leaves it empty (refused later where the security level needs it), any
/// other reference is an error (it would need reading: use the method's
/// `build`).
pub fn inline_snmp_secrets(
    config: &SnmpConfig,
    credentials: &[SnmpCredentials],
) -> Result<SnmpConfig, PduSecretError> {
    let take = |r: &CredentialRef, label: &str| match r {
        CredentialRef::Inline(s) => Ok(s.clone()),
        CredentialRef::None => Ok(Secret::default()),
        other => Err(PduSecretError::NotInline {
            pdu: label.to_string(),
            from: other.describe(),
        }),
    };
    let mut c = config.clone();
    for (p, cred) in c.pdus.iter_mut().zip(credentials) {
        match &mut p.security {
            Security::Community { community, .. } => *community = take(&cred.community, &p.label)?,
            Security::Usm(u) => {
                if let Some((_, pw)) = &mut u.auth {
                    *pw = take(&cred.auth, &p.label)?;
                }
                if let Some((_, pw)) = &mut u.privacy {
                    *pw = take(&cred.privacy, &p.label)?;
                }
            }
        }
    }
    Ok(c)
}

/// Fills the secrets of `config` from `credentials` (scripts until `deadline`).
async fn fill_snmp(
    config: &SnmpConfig,
    credentials: &[SnmpCredentials],
    deadline: Option<Instant>,
) -> Result<SnmpConfig, PduSecretError> {
    let mut c = config.clone();
    for (p, cred) in c.pdus.iter_mut().zip(credentials) {
        let pdu = p.label.clone();
        let what = |source| PduSecretError::Credential {
            pdu: pdu.clone(),
            source,
        };
        match &mut p.security {
            Security::Community { community, .. } => {
                *community = cred.community.resolve(deadline).await.map_err(what)?;
                if community.is_empty() {
                    return Err(PduSecretError::NoCommunity { pdu });
                }
            }
            Security::Usm(u) => {
                if let Some((_, pw)) = &mut u.auth {
                    *pw = cred.auth.resolve(deadline).await.map_err(what)?;
                }
                if let Some((_, pw)) = &mut u.privacy {
                    *pw = cred.privacy.resolve(deadline).await.map_err(what)?;
                }
            }
        }
    }
    Ok(c)
}

impl MethodSpec {
    /// The driver's name.
    pub fn driver_name(&self) -> &'static str {
        match self {
            MethodSpec::Ipmi { .. } => "ipmi",
            MethodSpec::Redfish { .. } => "redfish",
            MethodSpec::Manual { .. } => "manual",
            MethodSpec::Ssh { .. } => "ssh",
            MethodSpec::Snmp { .. } => "snmp",
            MethodSpec::Aws { .. } => "aws",
        }
    }

    /// The endpoint as a URL, without credentials.
    pub fn endpoint(&self) -> String {
        self.endpoint_url().to_string()
    }

    /// [`MethodSpec::endpoint`], written where it is shown (a plan of
    /// 100,000 nodes prints them all).
    pub fn endpoint_url(&self) -> EndpointUrl<'_> {
        EndpointUrl(self)
    }

    /// Applies a run's login timeout (`--login-timeout`) to the method: the
    /// bound on an SSH connection's TCP connect, handshake and
    /// authentication (IPMI and Redfish take theirs from the engine's step
    /// deadline). The same for methods from URLs and from an inventory.
    pub fn set_login_timeout(&mut self, timeout: std::time::Duration) {
        if let MethodSpec::Ssh { config, .. } = self {
            config.connect_timeout = timeout;
        }
    }

    /// Applies a node's off threshold (`--max-off-watts`, inventory
    /// `max_off_watts`): the most load its outlets may still carry once
    /// they read off (PDU methods; the others do not meter an off node).
    pub fn set_max_off_watts(&mut self, watts: f64) {
        if let MethodSpec::Snmp { config, .. } = self {
            config.max_off_watts = watts;
        }
    }

    /// Every device this method talks to, as [`crate::lock::DeviceKey`]s
    /// (one for all but an SNMP method whose outlets are on several PDUs),
    /// sorted: one session at a time per device (or per Redfish system of
    /// a device), taken in this order by everyone (no lock-order deadlock).
    /// Methods with conflicting keys share a power domain (blades behind
    /// one controller, IPMI and Redfish on one BMC) and are serialised.
    pub fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        match self {
            MethodSpec::Ipmi { config, .. } => vec![config.lock_key()],
            MethodSpec::Redfish { config, .. } => vec![config.lock_key()],
            MethodSpec::Ssh { config, .. } => vec![config.lock_key()],
            MethodSpec::Manual { node, .. } => vec![crate::lock::DeviceKey::named("manual", node)],
            MethodSpec::Aws { config, .. } => vec![config.lock_key()],
            MethodSpec::Snmp { config, .. } => {
                let mut keys: Vec<_> = config.pdus.iter().map(|p| p.lock_key()).collect();
                keys.sort();
                keys.dedup();
                keys
            }
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
            MethodSpec::Manual { .. } | MethodSpec::Aws { .. } => "",
            MethodSpec::Ssh { config, .. } => &config.username,
            MethodSpec::Snmp { config, .. } => match config.pdus.first().map(|p| &p.security) {
                Some(Security::Usm(u)) => &u.name,
                _ => "",
            },
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
            MethodSpec::Aws {
                credential,
                access_key,
                ..
            } => match access_key {
                Some(_) => credential,
                None => NONE,
            },
            MethodSpec::Snmp {
                config,
                credentials,
            } => match (config.pdus.first(), credentials.first()) {
                (Some(p), Some(c)) => c.used(&p.security).first().copied().unwrap_or(NONE),
                _ => NONE,
            },
        }
    }

    /// Who the machine behind this method must be (empty for manual and
    /// PDU methods, which have no device that could say, and when nothing
    /// is pinned).
    pub fn expected(&self) -> &ExpectedIdentity {
        const NONE: &ExpectedIdentity = &ExpectedIdentity {
            uuid: None,
            serial: None,
            names: Vec::new(),
        };
        match self {
            MethodSpec::Manual { .. } | MethodSpec::Snmp { .. } => NONE,
            MethodSpec::Ipmi { expect, .. }
            | MethodSpec::Redfish { expect, .. }
            | MethodSpec::Ssh { expect, .. }
            | MethodSpec::Aws { expect, .. } => expect,
        }
    }

    /// Whether the method talks to a device that a pin applies to (a node's
    /// `uuid`/`serial` skips manual and PDU methods).
    pub fn pinnable(&self) -> bool {
        !matches!(self, MethodSpec::Manual { .. } | MethodSpec::Snmp { .. })
    }

    /// Pins the method to `identity`. `Err` for a manual or PDU method,
    /// which has no device that could report one.
    pub fn set_expected(&mut self, identity: ExpectedIdentity) -> Result<(), PinError> {
        match self {
            MethodSpec::Manual { .. } | MethodSpec::Snmp { .. } if identity.is_empty() => Ok(()),
            MethodSpec::Manual { .. } => Err(PinError::Manual),
            MethodSpec::Snmp { .. } => Err(PinError::Pdu),
            MethodSpec::Ipmi { expect, .. }
            | MethodSpec::Redfish { expect, .. }
            | MethodSpec::Ssh { expect, .. }
            | MethodSpec::Aws { expect, .. } => {
                // A method's own names (an AWS node_name) stay when a
                // node's UUID or serial is pinned over it.
                let names = std::mem::take(&mut expect.names);
                *expect = identity;
                if expect.names.is_empty() {
                    expect.names = names;
                }
                Ok(())
            }
        }
    }

    /// Resolves the credential (a script gets until `deadline`) and builds
    /// the driver (not for manual methods, which have none).
    pub async fn build(&self, deadline: Option<Instant>) -> Result<AnyDriver, DriverError> {
        let config_err = |m: String| DriverError::new(ErrorKind::Config, Stage::Authenticate, m);
        let cred_err =
            |e: CredentialError| DriverError::new(e.kind(), Stage::Authenticate, e.to_string());
        match self {
            MethodSpec::Ssh {
                config,
                identity,
                agent,
                credential,
                ..
            } => {
                let mut c = (**config).clone();
                c.auth = match (identity, agent) {
                    (Some(path), _) => SshAuth::Key {
                        path: path.clone(),
                        passphrase: match credential {
                            CredentialRef::None => None,
                            other => Some(other.resolve(deadline).await.map_err(cred_err)?),
                        },
                    },
                    (None, true) => SshAuth::Agent,
                    (None, false) => {
                        SshAuth::Password(credential.resolve(deadline).await.map_err(cred_err)?)
                    }
                };
                SshDriver::new(c)
                    .map(AnyDriver::Ssh)
                    .map_err(|e| config_err(e.to_string()))
            }
            MethodSpec::Manual { .. } => Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Status,
                "a manual method has no device to talk to",
            )),
            MethodSpec::Ipmi {
                config, credential, ..
            } => {
                let mut c = (**config).clone();
                c.password = credential.resolve(deadline).await.map_err(cred_err)?;
                IpmiDriver::new(c)
                    .map(AnyDriver::Ipmi)
                    .map_err(|e| config_err(e.to_string()))
            }
            MethodSpec::Redfish {
                config, credential, ..
            } => {
                let mut c = (**config).clone();
                c.password = credential.resolve(deadline).await.map_err(cred_err)?;
                // The pinned UUID also chooses among several systems.
                if c.expect_uuid.is_none() {
                    c.expect_uuid = self.expected().uuid.clone();
                }
                RedfishDriver::new(c)
                    .map(AnyDriver::Redfish)
                    .map_err(|e| config_err(e.to_string()))
            }
            MethodSpec::Aws {
                config,
                access_key,
                credential,
                ..
            } => {
                let mut c = (**config).clone();
                // Without an access key ID the chain is used, whatever
                // password source the run names.
                let secret = match access_key {
                    Some(_) => Some(credential.resolve(deadline).await.map_err(cred_err)?),
                    None => None,
                };
                c.keys = GivenKeys::from_parts(access_key.as_deref(), secret)
                    .map_err(|e| config_err(e.to_string()))?;
                AwsDriver::new(c)
                    .map(AnyDriver::Aws)
                    .map_err(|e| config_err(e.to_string()))
            }
            MethodSpec::Snmp {
                config,
                credentials,
            } => {
                let c = fill_snmp(config, credentials, deadline)
                    .await
                    .map_err(|e| DriverError::new(e.kind(), Stage::Authenticate, e.to_string()))?;
                SnmpDriver::new(c)
                    .map(AnyDriver::Snmp)
                    .map_err(|e| config_err(e.to_string()))
            }
        }
    }
}

/// A method's endpoint as a URL, without credentials ([`MethodSpec::endpoint_url`]).
#[derive(Clone, Copy)]
pub struct EndpointUrl<'a>(&'a MethodSpec);

impl std::fmt::Display for EndpointUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // An IPv6 address in brackets, so that its port can be told apart.
        let host = |f: &mut std::fmt::Formatter<'_>, host: &str, port: u16| match host.contains(':')
        {
            true => write!(f, "[{host}]:{port}"),
            false => write!(f, "{host}:{port}"),
        };
        match self.0 {
            MethodSpec::Ipmi { config, .. } => {
                f.write_str("ipmi://")?;
                host(f, &config.host, config.port)
            }
            MethodSpec::Redfish { config, .. } => {
                write!(f, "{}://", config.scheme.as_str())?;
                host(f, &config.host, config.port)?;
                f.write_str(config.systems_uri.as_ref().unwrap_or(&config.redfish_uri))?;
                match &config.plug {
                    Some(p) => write!(f, " (system {p})"),
                    None => Ok(()),
                }
            }
            MethodSpec::Manual { node, .. } => write!(f, "manual:{node}"),
            MethodSpec::Aws { config, .. } => {
                write!(f, "aws://{}/{}", config.region, config.instance_id)
            }
            MethodSpec::Ssh { config, .. } => {
                write!(f, "ssh://{}", config.endpoint())?;
                match &config.profile {
                    crate::ssh::config::Profile::Virsh { plug } => {
                        write!(f, "/virsh/{}", plug.as_deref().unwrap_or(""))
                    }
                    crate::ssh::config::Profile::Host => f.write_str("/host"),
                    crate::ssh::config::Profile::Custom { .. } => f.write_str("/custom"),
                }
            }
            MethodSpec::Snmp { config, .. } => {
                for (i, p) in config.pdus.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{}/", p.url())?;
                    let outlets = config.outlets.iter().filter(|o| o.pdu == i);
                    for (k, o) in outlets.enumerate() {
                        if k > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{}", o.plug)?;
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::credential::CredentialError;

    #[test]
    fn a_pdu_password_script_out_of_time_stays_a_timeout() {
        let e = PduSecretError::Credential {
            pdu: "pdu-a".into(),
            source: CredentialError::Timeout(std::time::Duration::from_secs(2)),
        };
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert!(e
            .to_string()
            .starts_with("PDU pdu-a: the password script did not finish"));
        let e = PduSecretError::NoCommunity {
            pdu: "pdu-a".into(),
        };
        assert_eq!(e.kind(), ErrorKind::Config);
    }
}
#[cfg(test)]
mod size {
    /// A fleet keeps a method per node and level (200,000 of them for
    /// 100,000 nodes with two levels): a driver's configuration added to
    /// the enum unboxed makes every one of them as large as it.
    #[test]
    fn a_method_is_as_small_as_its_boxed_configurations_allow() {
        let size = std::mem::size_of::<super::MethodSpec>();
        assert!(
            size <= 160,
            "MethodSpec is {size} bytes: box the large variant's config"
        );
    }
}
