//! The one method builder: from a target URL (or an inventory method's
//! driver and address) and [`MethodOptions`] to a [`MethodSpec`]. The command
//! line and the inventory both fill `MethodOptions` and come here, so they
//! share every validation (an `auth` type is IPMI 1.5's; a pinned host key
//! excludes accept-new; one kind of TLS trust) and every default.
//! Settings that belong to a run rather than a method (timeouts) are applied
//! by the caller to every method alike ([`MethodSpec::set_login_timeout`]).
//!
//! Switched PDUs (SNMP) come here too, from [`SnmpOptions`]: the inventory
//! (a method's outlets on its own endpoint and on `[pdu.NAME]` tables) and
//! the SNMP fence agents (`fence_apc_snmp` …) share [`snmp`] /
//! [`snmp_parts`], so a version, security level, protocol, profile or
//! outlet list is read and checked in one place; only the defaults differ
//! ([`PduDefaults`]: the agents keep upstream's).

use super::credential::CredentialRef;
use super::spec::MethodSpec;
use crate::engine::identity::ExpectedIdentity;
use crate::ipmi::config::{self, AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use crate::platform::Platform;
use crate::redfish::config::{is_redfish_url, parse_target as parse_redfish_target};
use crate::secret::Secret;
use crate::snmp::client::Timing;
use crate::snmp::config::{
    parse_endpoint, parse_version, OutletSpec, PduEndpoint, Plug, SnmpConfig,
};
use crate::snmp::message::Version as SnmpVersion;
use crate::snmp::platform::{SnmpCredentials, SnmpMethod};
use crate::snmp::session::{SecLevel, Security, UsmUser};
use crate::snmp::usm::{AuthProtocol, PrivProtocol};
use crate::ssh::config::{Profile, SshAuth, SshConfig};
use std::path::PathBuf;
use std::sync::Arc;

/// Why a method cannot be built from what a front gave. The texts are what
/// users read; a front adds its own context (`node N level L: …`, an
/// option's name). Modules not yet typed pass their message through in the
/// variant named after them.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// An IPMI target or setting.
    #[error(transparent)]
    Ipmi(#[from] crate::ipmi::config::ConfigError),
    /// A Redfish target or TLS trust setting.
    #[error(transparent)]
    Redfish(#[from] crate::redfish::config::ConfigError),
    /// An SSH target.
    #[error(transparent)]
    SshTarget(#[from] crate::ssh::config::BadTarget),
    /// SSH host-key settings that make no policy.
    #[error(transparent)]
    SshHostKey(#[from] crate::ssh::hostkey::HostKeyOptionError),
    /// A PDU endpoint or outlet list.
    #[error(transparent)]
    Snmp(#[from] crate::snmp::config::ConfigError),
    /// A PDU profile that cannot be loaded.
    #[error(transparent)]
    Profile(#[from] crate::snmp::profile::ProfileError),
    /// An expected identity that cannot be stated as given.
    #[error(transparent)]
    Identity(#[from] crate::engine::identity::IdentityError),
    /// An identity pinned on a method with no device to report it.
    #[error(transparent)]
    Pin(#[from] super::spec::PinError),
    /// An IPMI workaround name fencekit does not know.
    #[error(transparent)]
    Workaround(#[from] crate::ipmi::workaround::UnknownWorkaround),
    /// Workarounds on a method that does not speak IPMI.
    #[error("workarounds apply to IPMI methods only")]
    WorkaroundsNotIpmi,
    /// An AWS target or setting.
    #[error(transparent)]
    Aws(#[from] crate::aws::config::ConfigError),
    /// A KubeVirt target or setting.
    #[error(transparent)]
    Kubevirt(#[from] crate::kubevirt::config::ConfigError),
    /// An AWS name pin (node_name, a tag) on a method that is not AWS.
    #[error("node_name and expect_tag are compared with what EC2 reports: they apply to driver aws only")]
    NamePinNotAws,
    /// A driver name that is not one of fencekit's.
    #[error("unknown driver '{0}' (expected ipmi, redfish, ssh, aws, kubevirt or manual)")]
    UnknownDriver(String),
    /// Neither an endpoint nor an address.
    #[error("no endpoint or ip")]
    NoAddress,
    /// No endpoint, for a driver that needs one.
    #[error("no endpoint")]
    NoEndpoint,
    /// An IPMI 1.5 authentication type with `ipmi_version` 2.0.
    #[error("an authentication type (auth) applies to IPMI 1.5 only, not to ipmi_version 2.0")]
    AuthWithLanplus,
    /// An IPMI version other than 2.0 and 1.5.
    #[error("ipmi_version '{0}' (expected 2.0 or 1.5)")]
    IpmiVersion(String),
    /// Both a K_g key and a K_g file.
    #[error("give only one of a K_g key and a K_g file")]
    TwoKg,
    /// A K_g file that cannot be read.
    #[error("cannot read kg_file {}: {source}", path.display())]
    KgFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An SSH method without a user.
    #[error("an SSH method needs a user name: ssh://USER@HOST/… or a username")]
    SshUser,
    /// A PDU method without outlets.
    #[error("an snmp method needs outlets")]
    NoOutlets,
    /// An outlet on the method's own PDU, which it does not have.
    #[error("outlet {0} names no PDU, and the method has no endpoint of its own")]
    OutletWithoutPdu(String),
    /// A PDU without an address.
    #[error("a PDU needs endpoint = \"snmp://HOST[:PORT]\"")]
    PduAddress,
    /// An SNMP version other than 1, 2c and 3.
    #[error("unknown SNMP version '{0}' (expected 1, 2c or 3)")]
    SnmpVersion(String),
    /// An SNMPv3 security level fencekit does not know.
    #[error("unknown SNMPv3 security level '{0}' (expected noAuthNoPriv, authNoPriv or authPriv)")]
    SecurityLevel(String),
    /// An SNMPv3 authentication protocol fencekit does not know.
    #[error(
        "unknown SNMPv3 authentication protocol '{0}' (expected MD5, SHA, SHA-224, SHA-256, \
         SHA-384 or SHA-512)"
    )]
    AuthProtocol(String),
    /// An SNMPv3 privacy protocol fencekit does not know.
    #[error("unknown SNMPv3 privacy protocol '{0}' (expected AES or DES)")]
    PrivProtocol(String),
    /// SNMPv3 without a user name.
    #[error("SNMPv3 needs a user name (--username)")]
    SnmpUser,
    /// What is wrong with the PDU named `name`.
    #[error("PDU {name}: {source}")]
    Pdu {
        /// The PDU's name (`[pdu.NAME]`).
        name: String,
        /// What is wrong with it.
        source: Box<BuildError>,
    },
}

/// Everything a method can be given besides its endpoint, whether it comes
/// from command-line options or inventory fields. `None`/`false`: not given.
#[derive(Clone, Debug, Default)]
pub struct MethodOptions {
    /// User name (a user in the URL wins).
    pub username: Option<String>,
    /// Where the password comes from.
    pub credential: CredentialRef,
    /// Port, when the endpoint has none.
    pub ipport: Option<u16>,
    /// IPMI: `auto`, `3` or `17`.
    pub cipher: Option<String>,
    /// IPMI: privilege level.
    pub privlvl: Option<String>,
    /// IPMI: `2.0` or `1.5` (an `auth` type alone implies 1.5).
    pub ipmi_version: Option<String>,
    /// IPMI 1.5: `md5`, `password` or `none`.
    pub auth: Option<String>,
    /// IPMI: K_g in hexadecimal.
    pub kg_hex: Option<String>,
    /// IPMI: a file holding K_g in hexadecimal.
    pub kg_file: Option<PathBuf>,
    /// IPMI 1.5: trust replies without an authentication code when the BMC
    /// says per-message authentication is disabled.
    pub accept_unauthenticated_replies: bool,
    /// IPMI: vendor workarounds by FreeIPMI's names (`a,b`; docs/ipmi.md).
    pub workarounds: Option<String>,
    /// Redfish: the system's URI.
    pub systems_uri: Option<String>,
    /// Redfish: the service root.
    pub redfish_uri: Option<String>,
    /// Redfish: the system's id; virsh: the domain.
    pub plug: Option<String>,
    /// Redfish: a private CA (PEM).
    pub ca_cert: Option<PathBuf>,
    /// Redfish: a pinned certificate fingerprint.
    pub ssl_fingerprint: Option<String>,
    /// Redfish: no certificate check.
    pub ssl_insecure: bool,
    /// Redfish: session login instead of basic auth.
    pub redfish_session: bool,
    /// SSH: known_hosts file.
    pub ssh_known_hosts: Option<PathBuf>,
    /// SSH: a pinned host key fingerprint.
    pub ssh_host_key: Option<String>,
    /// SSH: trust an unknown host key (and record it).
    pub ssh_accept_new: bool,
    /// SSH: a private key file (the credential is its passphrase).
    pub identity_file: Option<PathBuf>,
    /// SSH: the ssh-agent.
    pub ssh_agent: bool,
    /// SSH: run commands with sudo.
    pub use_sudo: bool,
    /// SSH virsh: a missing domain counts as off.
    pub missing_as_off: bool,
    /// Manual: what the person must do.
    pub instructions: Option<String>,
    /// The system UUID the machine must report before any power command
    /// (`--expect-uuid`, inventory `uuid`).
    pub uuid: Option<String>,
    /// The serial number it must report (`--expect-serial`, inventory `serial`).
    pub serial: Option<String>,
    /// AWS: the region (when the endpoint does not name it).
    pub region: Option<String>,
    /// AWS: the access key ID (the secret access key from the credential
    /// reference); none: the SDKs' credential chain.
    pub access_key: Option<String>,
    /// AWS: the EC2 endpoint (`--endpoint-url`).
    pub endpoint_url: Option<String>,
    /// AWS: the instance's `PrivateDnsName` must be this (`--expect-node-name`,
    /// inventory `node_name`).
    pub node_name: Option<String>,
    /// AWS: the instance must carry this tag (`KEY=VALUE`).
    pub expect_tag: Option<String>,
    /// AWS: allow `off` of the instance this process runs on.
    pub allow_self_fence: bool,
    /// KubeVirt: the kubeconfig file (`--kubeconfig`, inventory `kubeconfig`).
    pub kubeconfig: Option<PathBuf>,
    /// KubeVirt: the VirtualMachine's `metadata.uid` it must have
    /// (`--expect-vm-uid`, inventory `vm_uid`).
    pub vm_uid: Option<String>,
}

/// The identity `o` pins, applied to `m` (an error for a method that has no
/// device that could report one).
fn pinned(mut m: MethodSpec, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    let named = o.workarounds.as_deref().is_some_and(|w| {
        !crate::ipmi::workaround::Workarounds::parse(w).is_ok_and(|w| w.is_empty())
    });
    if named && m.driver_name() != crate::ipmi::platform::PLATFORM.name() {
        return Err(BuildError::WorkaroundsNotIpmi);
    }
    let mut expected = ExpectedIdentity::new(o.uuid.as_deref(), o.serial.as_deref())?;
    if o.node_name.is_some() || o.expect_tag.is_some() {
        if m.driver_name() != crate::aws::platform::PLATFORM.name() {
            return Err(BuildError::NamePinNotAws);
        }
        expected = aws_names(expected, o.node_name.as_deref(), o.expect_tag.as_deref())?;
    }
    m.set_expected(expected)?;
    Ok(m)
}

/// The AWS name pins: `PrivateDnsName` and a tag (`KEY=VALUE` → `tag:KEY`).
pub fn aws_names(
    mut e: ExpectedIdentity,
    node_name: Option<&str>,
    tag: Option<&str>,
) -> Result<ExpectedIdentity, BuildError> {
    if let Some(n) = node_name {
        e = e.with_name("PrivateDnsName", n)?;
    }
    if let Some(t) = tag {
        let (k, v) = crate::aws::config::key_value(t)
            .ok_or_else(|| crate::aws::config::ConfigError::BadTag(t.to_string()))?;
        e = e.with_name(&format!("tag:{k}"), &v)?;
    }
    Ok(e)
}

/// The method a target URL names: `ipmi://`, `redfish://` (and its
/// variants) or `ssh://`.
pub fn from_url(url: &str, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    pinned(unpinned_from_url(url, o)?, o)
}

fn unpinned_from_url(url: &str, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    if is_redfish_url(url) {
        return redfish(url, o);
    }
    if crate::aws::config::is_aws_url(url) {
        let (region, instance) = crate::aws::config::parse_target(url)?;
        return aws(&region, &instance, o);
    }
    if url.to_ascii_lowercase().starts_with("kubevirt://") {
        return kubevirt(url, o);
    }
    if url.to_ascii_lowercase().starts_with("ssh://") {
        return ssh(url, o);
    }
    let t = config::parse_target(url)?;
    ipmi(&t.host, t.port, t.username, o)
}

/// The method of driver `driver` (`ipmi`, `redfish`, `ssh`, `manual`; from
/// the endpoint's scheme when `None`) at `endpoint`, or at `ip` (with
/// `o.ipport`) when there is no endpoint. `node` names a manual method.
pub fn from_parts(
    node: &str,
    driver: Option<&str>,
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<MethodSpec, BuildError> {
    pinned(unpinned_from_parts(node, driver, endpoint, ip, o)?, o)
}

fn unpinned_from_parts(
    node: &str,
    driver: Option<&str>,
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<MethodSpec, BuildError> {
    let bracket = |ip: &str| {
        if ip.contains(':') {
            format!("[{ip}]")
        } else {
            ip.to_string()
        }
    };
    match driver {
        Some("manual") => Ok(MethodSpec::Manual {
            node: node.to_string(),
            instructions: o
                .instructions
                .clone()
                .unwrap_or_else(|| "(the inventory gives no instructions)".into()),
        }),
        Some("redfish") => match (endpoint, ip) {
            (Some(e), _) => redfish(e, o),
            (None, Some(ip)) => {
                let url = match o.ipport {
                    Some(p) => format!("redfish://{}:{p}", bracket(ip)),
                    None => format!("redfish://{}", bracket(ip)),
                };
                redfish(&url, o)
            }
            (None, None) => Err(BuildError::NoAddress),
        },
        Some("ssh") => ssh(endpoint.ok_or(BuildError::NoEndpoint)?, o),
        Some("aws") => match endpoint {
            Some(e) => {
                let (region, instance) = crate::aws::config::parse_target(e)?;
                aws(&region, &instance, o)
            }
            None => {
                let region = o
                    .region
                    .clone()
                    .or_else(|| {
                        crate::aws::config::Env::from_process()
                            .region()
                            .map(str::to_string)
                    })
                    .ok_or(crate::aws::config::ConfigError::NoRegion)?;
                aws(&region, o.plug.as_deref().unwrap_or(""), o)
            }
        },
        Some("kubevirt") => kubevirt(endpoint.ok_or(BuildError::NoEndpoint)?, o),
        Some("ipmi") | None => match (endpoint, ip) {
            (Some(e), _) => {
                let t = config::parse_target(e)?;
                ipmi(&t.host, t.port, t.username, o)
            }
            (None, Some(ip)) => ipmi(ip, None, None, o),
            (None, None) => Err(BuildError::NoAddress),
        },
        Some(other) => Err(BuildError::UnknownDriver(other.to_string())),
    }
}

fn ipmi(
    host: &str,
    port: Option<u16>,
    url_user: Option<String>,
    o: &MethodOptions,
) -> Result<MethodSpec, BuildError> {
    let username = url_user.or_else(|| o.username.clone()).unwrap_or_default();
    let mut c = IpmiConfig::new(
        host,
        port.or(o.ipport).unwrap_or(623),
        username,
        Secret::default(),
    );
    if let Some(s) = &o.cipher {
        c.cipher = s.parse::<CipherChoice>()?;
    }
    if let Some(p) = &o.privlvl {
        c.privilege = p.parse::<Privilege>()?;
    }
    let auth = o.auth.as_deref().map(str::parse::<AuthType>).transpose()?;
    c.version = match (o.ipmi_version.as_deref(), auth) {
        (Some("1.5"), a) | (None, a @ Some(_)) => Version::Lan15(a),
        (Some("2.0") | None, None) => Version::Lanplus,
        (Some("2.0"), Some(_)) => return Err(BuildError::AuthWithLanplus),
        (Some(v), _) => return Err(BuildError::IpmiVersion(v.to_string())),
    };
    c.kg = match (&o.kg_hex, &o.kg_file) {
        (Some(_), Some(_)) => return Err(BuildError::TwoKg),
        (Some(hex), None) => Some(config::parse_hex_kg(hex)?),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|source| BuildError::KgFile {
                path: path.clone(),
                source,
            })?;
            Some(config::parse_hex_kg(text.trim())?)
        }
        (None, None) => None,
    };
    c.accept_unauthenticated_replies = o.accept_unauthenticated_replies;
    if let Some(w) = &o.workarounds {
        c.workarounds = crate::ipmi::workaround::Workarounds::parse(w)?;
    }
    // Lengths are checked when the password is known (at build time).
    Ok(crate::ipmi::platform::IpmiMethod::boxed(c, o.credential.clone()).into())
}

fn redfish(url: &str, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    let t = parse_redfish_target(url)?;
    let mut c = t.config(o.username.as_deref().unwrap_or(""), Secret::default());
    if let Some(u) = &o.systems_uri {
        c.systems_uri = Some(u.clone());
    }
    if let Some(u) = &o.redfish_uri {
        c.redfish_uri = u.clone();
    }
    c.plug = o.plug.clone();
    c.tls = crate::redfish::config::tls_trust(
        o.ssl_insecure,
        o.ca_cert.as_deref(),
        o.ssl_fingerprint.as_deref(),
    )?;
    c.session_auth = o.redfish_session;
    c.validate()?;
    Ok(crate::redfish::platform::RedfishMethod::boxed(c, o.credential.clone()).into())
}

fn aws(region: &str, instance: &str, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    crate::aws::config::check_instance(instance)?;
    let mut c = crate::aws::config::AwsConfig::new(region, instance);
    c.endpoint = o.endpoint_url.clone();
    c.allow_self_fence = o.allow_self_fence;
    c.validate()?;
    Ok(MethodSpec::Device(Box::new(
        crate::aws::platform::AwsMethod {
            config: c,
            access_key: o.access_key.clone().filter(|k| !k.trim().is_empty()),
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
        },
    )))
}

fn kubevirt(url: &str, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    let mut c = crate::kubevirt::config::KubevirtConfig::from_url(url)?;
    c.kubeconfig = o.kubeconfig.clone();
    c.insecure = o.ssl_insecure;
    let mut expect = ExpectedIdentity::default();
    if let Some(uid) = &o.vm_uid {
        expect = expect.with_name("metadata.uid", uid)?;
    }
    Ok(MethodSpec::Device(Box::new(
        crate::kubevirt::platform::KubevirtMethod { config: c, expect },
    )))
}

fn ssh(url: &str, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    let t = crate::ssh::config::parse_target(url)?;
    let username = t
        .username
        .or_else(|| o.username.clone())
        .ok_or(BuildError::SshUser)?;
    let mut profile = t.profile;
    if let (Profile::Virsh { plug }, Some(p)) = (&mut profile, &o.plug) {
        if plug.is_none() {
            *plug = Some(p.clone());
        }
    }
    let mut c = SshConfig::new(&t.host, &username, SshAuth::Agent, profile);
    c.port = t.port;
    c.host_keys = crate::ssh::hostkey::host_key_policy(
        o.ssh_known_hosts.as_deref(),
        o.ssh_host_key.as_deref(),
        o.ssh_accept_new,
    )?;
    c.use_sudo = o.use_sudo;
    c.missing_as_off = o.missing_as_off;
    Ok(MethodSpec::Device(Box::new(
        crate::ssh::platform::SshMethod {
            config: c,
            identity: o.identity_file.clone(),
            agent: o.ssh_agent,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
        },
    )))
}

/// One switched PDU as a front gives it (an inventory method's own
/// endpoint or a `[pdu.NAME]` table; the agent's options). The text is
/// checked by [`snmp_parts`], the same for every front; `None` takes the
/// front's [`PduDefaults`].
#[derive(Clone, Debug, Default)]
pub struct PduOptions {
    /// `snmp://HOST[:PORT]`.
    pub endpoint: Option<String>,
    /// The address, when there is no endpoint (the agent's `--ip`).
    pub ip: Option<String>,
    /// The port with `ip` (161 when not given).
    pub ipport: Option<u16>,
    /// A built-in profile name or a profile file.
    pub profile: Option<String>,
    /// `1`, `2c` or `3`.
    pub version: Option<String>,
    /// SNMPv3: `noAuthNoPriv`, `authNoPriv` or `authPriv`.
    pub security_level: Option<String>,
    /// SNMPv3 authentication protocol (`MD5`, `SHA`, `SHA-256` …).
    pub auth_protocol: Option<String>,
    /// SNMPv3 privacy protocol (`AES`, `DES`).
    pub priv_protocol: Option<String>,
    /// SNMPv3 user name.
    pub username: Option<String>,
    /// v1/v2c community.
    pub community: CredentialRef,
    /// SNMPv3 authentication password.
    pub auth: CredentialRef,
    /// SNMPv3 privacy password.
    pub privacy: CredentialRef,
    /// Per-request timing (the client's default when `None`).
    pub timing: Option<Timing>,
}

/// What a front assumes where a PDU's options are silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PduDefaults {
    /// The SNMP version.
    pub version: SnmpVersion,
    /// The profile.
    pub profile: &'static str,
    /// The SNMPv3 security level; `None`: authPriv when both passwords are
    /// given, noAuthNoPriv otherwise (net-snmp's default, as fence-agents
    /// applies it).
    pub level: Option<SecLevel>,
    /// The SNMPv3 authentication protocol.
    pub auth_protocol: AuthProtocol,
    /// The SNMPv3 privacy protocol.
    pub priv_protocol: PrivProtocol,
}

impl PduDefaults {
    /// fencekit's own (inventories): SNMPv2c; SNMPv3 authPriv with SHA-256
    /// and AES-128; the `apc` profile.
    pub const NATIVE: PduDefaults = PduDefaults {
        version: SnmpVersion::V2c,
        profile: "apc",
        level: Some(SecLevel::AuthPriv),
        auth_protocol: AuthProtocol::Sha256,
        priv_protocol: PrivProtocol::Aes128,
    };
}

/// A node's outlets and the PDUs they are on.
#[derive(Clone, Debug)]
pub struct SnmpOptions {
    /// The method's own PDU (`None`: every outlet names a PDU).
    pub own: Option<PduOptions>,
    /// PDUs by name, for outlets written `NAME:OUTLET`.
    pub named: Vec<(String, PduOptions)>,
    /// `7`, `1:7` (outlet 7 of switch 1) or a name, on the own PDU; `A:7`
    /// on the PDU named `A`.
    pub outlets: Vec<String>,
    /// What silent options mean.
    pub defaults: PduDefaults,
}

/// The PDU method of a node: [`snmp_parts`], and at least one outlet.
pub fn snmp(o: &SnmpOptions) -> Result<MethodSpec, BuildError> {
    if o.outlets.is_empty() {
        return Err(BuildError::NoOutlets);
    }
    let (config, credentials) = snmp_parts(o)?;
    Ok(SnmpMethod::boxed(config, credentials).into())
}

/// The PDUs and outlets `o` describes, each PDU's secrets as references
/// (its slots in the configuration hold empty secrets). Only the PDUs an
/// outlet is on take part, in the order the outlets first name them; the
/// own PDU alone when there are no outlets (a PDU-wide action: `list`).
/// An error about a named PDU starts with `PDU NAME: `.
pub fn snmp_parts(o: &SnmpOptions) -> Result<(SnmpConfig, Vec<SnmpCredentials>), BuildError> {
    let mut pdus: Vec<PduEndpoint> = Vec::new();
    let mut credentials = Vec::new();
    let mut own_at: Option<usize> = None;
    let mut named_at: Vec<(&str, usize)> = Vec::new();
    let mut add = |label: Option<&str>, p: &PduOptions| -> Result<usize, BuildError> {
        let (endpoint, creds) = pdu(label, p, &o.defaults)?;
        pdus.push(endpoint);
        credentials.push(creds);
        Ok(pdus.len() - 1)
    };
    let mut outlets = Vec::new();
    for text in &o.outlets {
        let named = text
            .split_once(':')
            .and_then(|(p, rest)| o.named.iter().find(|(n, _)| n == p).map(|t| (t, rest)));
        let (pdu, plug) = match named {
            Some(((name, table), rest)) => {
                let at = match named_at.iter().find(|(n, _)| n == name) {
                    Some(&(_, i)) => i,
                    None => {
                        let i = add(Some(name), table).map_err(|e| BuildError::Pdu {
                            name: name.clone(),
                            source: Box::new(e),
                        })?;
                        named_at.push((name, i));
                        i
                    }
                };
                (at, rest)
            }
            None => {
                let own = o
                    .own
                    .as_ref()
                    .ok_or_else(|| BuildError::OutletWithoutPdu(text.clone()))?;
                let at = match own_at {
                    Some(i) => i,
                    None => *own_at.insert(add(None, own)?),
                };
                (at, text.as_str())
            }
        };
        outlets.push(OutletSpec {
            pdu,
            plug: Plug::parse(plug),
        });
    }
    if o.outlets.is_empty() {
        if let Some(own) = &o.own {
            add(None, own)?;
        }
    }
    let config = SnmpConfig {
        pdus,
        outlets,
        max_off_watts: crate::engine::power::DEFAULT_MAX_OFF_WATTS,
    };
    config.validate_structure()?;
    Ok((config, credentials))
}

/// One PDU: its address, security (secrets empty, references returned),
/// profile and timing.
fn pdu(
    label: Option<&str>,
    o: &PduOptions,
    d: &PduDefaults,
) -> Result<(PduEndpoint, SnmpCredentials), BuildError> {
    let (host, port) = match (&o.endpoint, &o.ip) {
        (Some(e), _) => parse_endpoint(e)?,
        (None, Some(ip)) => (ip.clone(), o.ipport.unwrap_or(161)),
        (None, None) => return Err(BuildError::PduAddress),
    };
    let version = match o.version.as_deref() {
        Some(v) => parse_version(v).ok_or_else(|| BuildError::SnmpVersion(v.to_string()))?,
        None => d.version,
    };
    let security =
        match version {
            SnmpVersion::V3 => {
                let level = match o.security_level.as_deref() {
                    Some(l) => SecLevel::parse(l)
                        .ok_or_else(|| BuildError::SecurityLevel(l.to_string()))?,
                    None => d.level.unwrap_or(
                        if !matches!(o.auth, CredentialRef::None)
                            && !matches!(o.privacy, CredentialRef::None)
                        {
                            SecLevel::AuthPriv
                        } else {
                            SecLevel::NoAuthNoPriv
                        },
                    ),
                };
                let auth = match o.auth_protocol.as_deref() {
                    Some(a) => AuthProtocol::parse(a)
                        .ok_or_else(|| BuildError::AuthProtocol(a.to_string()))?,
                    None => d.auth_protocol,
                };
                let privacy = match o.priv_protocol.as_deref() {
                    Some(p) => PrivProtocol::parse(p)
                        .ok_or_else(|| BuildError::PrivProtocol(p.to_string()))?,
                    None => d.priv_protocol,
                };
                let name = o.username.clone().unwrap_or_default();
                if name.is_empty() {
                    return Err(BuildError::SnmpUser);
                }
                // The slots the level needs; their secrets are filled at build
                // time, and an empty one is refused then (`validate_secrets`).
                Security::Usm(UsmUser {
                    name,
                    level,
                    auth: (level != SecLevel::NoAuthNoPriv).then(|| (auth, Secret::default())),
                    privacy: (level == SecLevel::AuthPriv).then(|| (privacy, Secret::default())),
                })
            }
            v => Security::Community {
                version: v,
                community: Secret::default(),
            },
        };
    let profile = crate::snmp::profile::Profile::load(o.profile.as_deref().unwrap_or(d.profile))?;
    Ok((
        PduEndpoint {
            label: label.map(str::to_string).unwrap_or_else(|| host.clone()),
            host,
            port,
            security,
            profile: Arc::new(profile),
            timing: o.timing.unwrap_or_default(),
        },
        SnmpCredentials {
            community: o.community.clone(),
            auth: o.auth.clone(),
            privacy: o.privacy.clone(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_auth_type_means_ipmi_15_and_contradicts_an_explicit_20() {
        let o = MethodOptions {
            auth: Some("md5".into()),
            ..Default::default()
        };
        let m = from_url("ipmi://bmc", &o).unwrap();
        let m = m.device().unwrap().as_any();
        let ipmi = m
            .downcast_ref::<crate::ipmi::platform::IpmiMethod>()
            .unwrap();
        assert!(matches!(ipmi.config.version, Version::Lan15(Some(_))));
        let o = MethodOptions {
            ipmi_version: Some("2.0".into()),
            ..o
        };
        let e = from_url("ipmi://bmc", &o).unwrap_err();
        assert!(matches!(e, BuildError::AuthWithLanplus), "{e}");
        assert!(e.to_string().contains("IPMI 1.5 only"), "{e}");
        // The same rule for an inventory method.
        let e = from_parts("n", Some("ipmi"), None, Some("10.0.0.1"), &o).unwrap_err();
        assert!(matches!(e, BuildError::AuthWithLanplus), "{e}");
    }

    #[test]
    fn url_and_parts_build_the_same_method() {
        let o = MethodOptions {
            username: Some("admin".into()),
            ipport: Some(6230),
            cipher: Some("3".into()),
            ..Default::default()
        };
        let a = from_url("ipmi://10.0.0.1", &o).unwrap();
        let b = from_parts("n", None, None, Some("10.0.0.1"), &o).unwrap();
        assert_eq!(a.endpoint(), b.endpoint());
        assert_eq!(a.endpoint(), "ipmi://10.0.0.1:6230");
        assert_eq!(a.username(), "admin");
    }

    fn pdu_at(endpoint: &str) -> PduOptions {
        PduOptions {
            endpoint: Some(endpoint.into()),
            community: CredentialRef::Env("C".into()),
            ..Default::default()
        }
    }

    fn outlets(
        own: Option<PduOptions>,
        named: &[(&str, PduOptions)],
        list: &[&str],
    ) -> SnmpOptions {
        SnmpOptions {
            own,
            named: named
                .iter()
                .map(|(n, p)| (n.to_string(), p.clone()))
                .collect(),
            outlets: list.iter().map(|s| s.to_string()).collect(),
            defaults: PduDefaults::NATIVE,
        }
    }

    #[test]
    fn outlets_take_only_the_pdus_they_are_on_in_first_use_order() {
        let o = outlets(
            Some(pdu_at("snmp://own:1161")),
            &[("A", pdu_at("snmp://a")), ("B", pdu_at("snmp://b"))],
            &["B:7", "1:3", "B:8", "web01"],
        );
        let (c, creds) = snmp_parts(&o).unwrap();
        let pdus: Vec<_> = c.pdus.iter().map(|p| (p.label.as_str(), p.port)).collect();
        assert_eq!(pdus, vec![("B", 161), ("own", 1161)], "A is not contacted");
        assert_eq!(creds.len(), 2);
        let at: Vec<_> = c
            .outlets
            .iter()
            .map(|o| (o.pdu, o.plug.to_string()))
            .collect();
        assert_eq!(
            at,
            vec![
                (0, "7".into()),
                (1, "1:3".into()),
                (0, "8".into()),
                (1, "web01".into())
            ],
            "`1:3` names no PDU: switch 1, outlet 3 on the own PDU"
        );
        // No outlets: the own PDU alone (the agent's `list`), but never a
        // method.
        let o = outlets(Some(pdu_at("snmp://own")), &[], &[]);
        assert_eq!(snmp_parts(&o).unwrap().0.pdus.len(), 1);
        assert!(snmp(&o).unwrap_err().to_string().contains("needs outlets"));
        // An outlet on the own PDU of a method without one.
        let o = outlets(None, &[("A", pdu_at("snmp://a"))], &["A:1", "2"]);
        assert!(snmp(&o)
            .unwrap_err()
            .to_string()
            .contains("outlet 2 names no PDU"));
        // The same outlet twice.
        let o = outlets(None, &[("A", pdu_at("snmp://a"))], &["A:1", "A:1"]);
        assert!(snmp(&o).unwrap_err().to_string().contains("listed twice"));
    }

    #[test]
    fn every_front_gets_the_same_checks_whatever_its_defaults() {
        let upstream = PduDefaults {
            version: SnmpVersion::V1,
            level: None,
            auth_protocol: AuthProtocol::Md5,
            priv_protocol: PrivProtocol::Des,
            ..PduDefaults::NATIVE
        };
        type Spoil = fn(&mut PduOptions);
        let bad: [(Spoil, &str); 6] = [
            (
                |p| p.version = Some("4".into()),
                "unknown SNMP version '4' (expected 1, 2c or 3)",
            ),
            (
                |p| p.security_level = Some("authOnly".into()),
                "unknown SNMPv3 security level 'authOnly'",
            ),
            (
                |p| p.auth_protocol = Some("SHA-3".into()),
                "unknown SNMPv3 authentication protocol 'SHA-3'",
            ),
            (
                |p| p.priv_protocol = Some("3DES".into()),
                "unknown SNMPv3 privacy protocol '3DES' (expected AES or DES)",
            ),
            (|p| p.username = None, "SNMPv3 needs a user name"),
            (|p| p.profile = Some("nosuchpdu".into()), "nosuchpdu"),
        ];
        for defaults in [PduDefaults::NATIVE, upstream] {
            for (spoil, want) in &bad {
                let mut p = pdu_at("snmp://pdu");
                p.version = Some("3".into());
                p.username = Some("u".into());
                spoil(&mut p);
                let o = SnmpOptions {
                    defaults,
                    ..outlets(Some(p.clone()), &[], &["1"])
                };
                let e = snmp(&o).unwrap_err().to_string();
                assert!(e.contains(want), "{defaults:?}: {e}");
                // A named PDU says which.
                let o = SnmpOptions {
                    defaults,
                    ..outlets(None, &[("A", p)], &["A:1"])
                };
                let e = snmp(&o).unwrap_err();
                assert!(
                    matches!(&e, BuildError::Pdu { name, .. } if name == "A"),
                    "{e}"
                );
                let e = e.to_string();
                assert!(e.starts_with("PDU A: ") && e.contains(want), "{e}");
            }
        }
    }

    #[test]
    fn silent_options_take_the_fronts_defaults() {
        let level = |d: PduDefaults, auth: bool, privacy: bool| {
            let mut p = pdu_at("snmp://pdu");
            p.version = Some("3".into());
            p.username = Some("u".into());
            if auth {
                p.auth = CredentialRef::Inline(Secret::from_str_value("a12345678"));
            }
            if privacy {
                p.privacy = CredentialRef::Inline(Secret::from_str_value("p12345678"));
            }
            let o = SnmpOptions {
                defaults: d,
                ..outlets(Some(p), &[], &["1"])
            };
            match &snmp_parts(&o).unwrap().0.pdus[0].security {
                Security::Usm(u) => (
                    u.level,
                    u.auth.as_ref().map(|a| a.0),
                    u.privacy.as_ref().map(|p| p.0),
                ),
                other => panic!("{other:?}"),
            }
        };
        let native = PduDefaults::NATIVE;
        assert_eq!(
            level(native, false, false),
            (
                SecLevel::AuthPriv,
                Some(AuthProtocol::Sha256),
                Some(PrivProtocol::Aes128)
            )
        );
        let upstream = PduDefaults {
            level: None,
            auth_protocol: AuthProtocol::Md5,
            priv_protocol: PrivProtocol::Des,
            ..native
        };
        assert_eq!(
            level(upstream, true, true),
            (
                SecLevel::AuthPriv,
                Some(AuthProtocol::Md5),
                Some(PrivProtocol::Des)
            )
        );
        assert_eq!(
            level(upstream, true, false),
            (SecLevel::NoAuthNoPriv, None, None)
        );
        // v2c by default natively, with the community as a reference.
        let (c, creds) = snmp_parts(&outlets(Some(pdu_at("snmp://pdu")), &[], &["1"])).unwrap();
        assert!(matches!(
            c.pdus[0].security,
            Security::Community {
                version: SnmpVersion::V2c,
                ..
            }
        ));
        assert!(matches!(&creds[0].community, CredentialRef::Env(v) if v == "C"));
        assert_eq!(c.pdus[0].profile.name, "apc");
    }

    #[test]
    fn builder_messages_read_as_they_always_have() {
        let o = MethodOptions::default();
        let text = |r: Result<MethodSpec, BuildError>| r.unwrap_err().to_string();
        assert_eq!(
            text(from_parts("n", Some("ilo"), None, Some("h"), &o)),
            "unknown driver 'ilo' (expected ipmi, redfish, ssh, aws, kubevirt or manual)"
        );
        assert_eq!(
            text(from_parts("n", Some("ipmi"), None, None, &o)),
            "no endpoint or ip"
        );
        assert_eq!(
            text(from_parts("n", Some("ssh"), None, None, &o)),
            "no endpoint"
        );
        let v = |x: &str| MethodOptions {
            ipmi_version: Some(x.into()),
            ..Default::default()
        };
        assert_eq!(
            text(from_url("ipmi://h", &v("3.0"))),
            "ipmi_version '3.0' (expected 2.0 or 1.5)"
        );
        let kg = MethodOptions {
            kg_hex: Some("00".into()),
            kg_file: Some("/nonexistent".into()),
            ..Default::default()
        };
        assert_eq!(
            text(from_url("ipmi://h", &kg)),
            "give only one of a K_g key and a K_g file"
        );
        let kg = MethodOptions { kg_hex: None, ..kg };
        assert!(text(from_url("ipmi://h", &kg))
            .starts_with("cannot read kg_file /nonexistent: No such file"));
        assert_eq!(
            text(from_url("ssh://h/virsh/d", &o)),
            "an SSH method needs a user name: ssh://USER@HOST/… or a username"
        );
        // Passed through from the modules below, unchanged.
        assert_eq!(
            text(from_url("ipmi://h:0", &o)),
            "'ipmi://h:0': '0' is not a port number"
        );
        let pdu = PduOptions {
            endpoint: Some("snmp://p".into()),
            ..Default::default()
        };
        let e = text(snmp(&outlets(
            None,
            &[("A", PduOptions::default())],
            &["A:1"],
        )));
        assert_eq!(e, "PDU A: a PDU needs endpoint = \"snmp://HOST[:PORT]\"");
        let e = text(snmp(&outlets(Some(pdu), &[], &["1", "1"])));
        assert_eq!(e, "outlet 1 is listed twice");
    }
}
