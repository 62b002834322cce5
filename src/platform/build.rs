//! What building a method takes and how it fails, for every platform: the
//! options a front gives ([`MethodOptions`]: command-line options or
//! inventory fields), the error ([`BuildError`]: generic cases, or a
//! platform's own error boxed), and the builder a platform hands back
//! ([`MethodBuilder`], through `Platform::builder`). `method::build`
//! dispatches to the builders through the registry.

use super::credential::CredentialRef;
use super::{Method, PinError};
use std::path::PathBuf;

/// Why a method cannot be built from what a front gave. The texts are what
/// users read; a front adds its own context (`node N level L: …`, an
/// option's name). A platform's own cases are its error type, boxed
/// ([`BuildError::Platform`]; `downcast_ref` gives it back).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// An expected identity that cannot be stated as given.
    #[error(transparent)]
    Identity(#[from] crate::engine::identity::IdentityError),
    /// An identity pinned on a method with no device to report it.
    #[error(transparent)]
    Pin(#[from] PinError),
    /// A driver name that is not one of fencekit's.
    #[error("unknown driver '{name}' (expected {expected})")]
    UnknownDriver {
        /// The name given.
        name: String,
        /// The names there are (`a, b or c`).
        expected: String,
    },
    /// An endpoint whose scheme is another driver's.
    #[error("driver {driver} does not take '{scheme}://' endpoints (they are driver {owner}'s)")]
    OtherScheme {
        /// The driver named.
        driver: &'static str,
        /// The endpoint's scheme.
        scheme: String,
        /// The driver that owns it.
        owner: &'static str,
    },
    /// Neither an endpoint nor an address.
    #[error("no endpoint or ip")]
    NoAddress,
    /// No endpoint, for a driver that needs one.
    #[error("no endpoint")]
    NoEndpoint,
    /// A platform's own error (its target, its settings), as it words it.
    #[error("{0}")]
    Platform(Box<dyn std::error::Error + Send + Sync>),
}

impl BuildError {
    /// A platform's own error.
    pub fn platform(e: impl std::error::Error + Send + Sync + 'static) -> BuildError {
        BuildError::Platform(Box::new(e))
    }

    /// The platform's own error of type `E`, if this is one.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            BuildError::Platform(e) => e.downcast_ref::<E>(),
            _ => None,
        }
    }
}

/// An inventory method's fields as a platform checks them before anything
/// is built ([`super::Platform::check_fields`]), by their inventory keys
/// (`endpoint`, `ip`, `plug`, `region`, `ca_cert`, `ssl_fingerprint`,
/// `ssl_insecure`, `community`, `priv_password`; `outlets`; `pdus`; a key
/// of the `settings` table by its own name, after these).
pub trait Fields {
    /// Whether the field `key` is given (a boolean: given as true; a key
    /// the inventory does not have: false).
    fn has(&self, key: &str) -> bool;
    /// The text of the field `key` (`endpoint`), if given.
    fn get(&self, key: &str) -> Option<&str>;
    /// The list the field `key` holds (`outlets`); empty when not given.
    fn list(&self, key: &str) -> &[String];
    /// The named tables the method refers to (`pdus`: `[pdu.NAME]`), each
    /// with its fields.
    fn tables(&self, key: &str) -> Vec<(&str, &dyn Fields)>;
}

/// How a platform builds a plain method (one endpoint and [`MethodOptions`]).
/// A platform whose methods need more (a PDU's outlets and tables) has
/// none; its fronts call its own builder.
pub trait MethodBuilder: Sync {
    /// The method a target URL names, or `None` when the URL is not this
    /// platform's. The default platform (`method::platforms::DEFAULT`)
    /// takes every URL no other platform claims, so its error names an
    /// unknown scheme.
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>>;
    /// The method at `endpoint`, or at `ip` (with `o.ipport`) when there is
    /// no endpoint (an inventory's `driver = "NAME"`).
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError>;
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
    pub kubeconfig: Option<std::path::PathBuf>,
    /// KubeVirt: the VirtualMachine's `metadata.uid` it must have
    /// (`--expect-vm-uid`, inventory `vm_uid`).
    pub vm_uid: Option<String>,
    /// A platform's own settings by key (`tenant_id`, `zone`, …): what no
    /// other platform takes, so that a platform's options need no field
    /// here. From its command-line flags (its `args.rs`) or the
    /// inventory's `settings` table; the keys a platform takes are its
    /// [`super::Platform::setting_keys`]. The last of a key wins.
    pub settings: Vec<(String, String)>,
}

impl MethodOptions {
    /// The setting `key`, if given (the last one given).
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` (a front's flag; replaces what was set before).
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.settings.retain(|(k, _)| k != key);
        self.settings.push((key.to_string(), value.into()));
    }

    /// Whether the boolean setting `key` is on (`true`, `yes`, `1`, `on`).
    pub fn flag(&self, key: &str) -> bool {
        self.setting(key)
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "1" | "on"))
    }
}

/// A platform's settings of an inventory method: its endpoint, or `ip`.
pub type FromParts<C> = fn(Option<&str>, Option<&str>, &MethodOptions) -> Result<C, BuildError>;

/// A [`MethodBuilder`] made of a platform's own functions (its `build.rs`
/// and its method's constructor): what every platform of plain methods
/// (one endpoint and [`MethodOptions`]) would otherwise write out again.
pub struct Builder<C: 'static> {
    /// The settings a target URL of the platform's scheme names, or `None`
    /// for another URL.
    pub from_url: fn(&str, &MethodOptions) -> Option<Result<C, BuildError>>,
    /// The settings of an inventory method: its endpoint, or `ip` (with
    /// `o.ipport`).
    pub from_parts: FromParts<C>,
    /// The method of those settings (its credential, keys from the options).
    pub method: fn(C, &MethodOptions) -> Box<dyn Method>,
}

impl<C: 'static> MethodBuilder for Builder<C> {
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        (self.from_url)(url, o).map(|r| r.map(|c| (self.method)(c, o)))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        (self.from_parts)(endpoint, ip, o).map(|c| (self.method)(c, o))
    }
}

/// Whether `url` begins with `SCHEME://` (any case).
pub fn has_scheme(url: &str, scheme: &str) -> bool {
    let (u, n) = (url.as_bytes(), scheme.len());
    u.len() >= n + 3 && u[..n].eq_ignore_ascii_case(scheme.as_bytes()) && &u[n..n + 3] == b"://"
}

/// The target URL of an inventory method of `scheme`: its endpoint as
/// given, or `SCHEME://IP[:PORT]/PLUG` from `ip`, `o.ipport` and `o.plug`
/// (`escape`d as the platform's path wants it).
pub fn parts_url(
    scheme: &str,
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
    escape: fn(&str) -> String,
) -> Result<String, BuildError> {
    match (endpoint, ip) {
        (Some(e), _) => Ok(e.to_string()),
        (None, Some(ip)) => {
            let plug = o.plug.as_deref().ok_or(BuildError::NoEndpoint)?;
            let host = match ip.contains(':') {
                true => format!("[{ip}]"),
                false => ip.to_string(),
            };
            let port = o.ipport.map(|p| format!(":{p}")).unwrap_or_default();
            Ok(format!("{scheme}://{host}{port}/{}", escape(plug)))
        }
        (None, None) => Err(BuildError::NoAddress),
    }
}

impl MethodOptions {
    /// `--username` when the target names no user (`given`); an empty one
    /// is none.
    pub fn user_or(&self, given: Option<String>) -> Option<String> {
        given.or_else(|| self.username.clone().filter(|u| !u.is_empty()))
    }

    /// The certificate trust the options ask for (`--ca-cert`,
    /// `--ssl-fingerprint`, `--ssl-insecure`: at most one).
    pub fn tls_trust(&self) -> Result<crate::tls::TlsTrust, BuildError> {
        crate::tls::trust(
            self.ssl_insecure,
            self.ca_cert.as_deref(),
            self.ssl_fingerprint.as_deref(),
        )
        .map_err(BuildError::platform)
    }
}

/// An inventory method's fields of an HTTPS platform: an endpoint, or `ip`
/// and `plug` (else `needs`, what the user reads); one kind of TLS trust.
pub fn check_https_fields(f: &dyn Fields, needs: &str) -> Result<(), String> {
    if !(f.has("endpoint") || (f.has("ip") && f.has("plug"))) {
        return Err(needs.to_string());
    }
    let trusts = ["ca_cert", "ssl_fingerprint", "ssl_insecure"];
    if trusts.iter().filter(|k| f.has(k)).count() > 1 {
        return Err("give only one of ca_cert, ssl_fingerprint and ssl_insecure".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_by_key_last_wins() {
        let mut o = MethodOptions::default();
        assert_eq!(o.setting("zone"), None);
        o.settings.push(("zone".into(), "a".into()));
        o.settings.push(("zone".into(), "b".into()));
        assert_eq!(o.setting("zone"), Some("b"));
        o.set("zone", "c");
        assert_eq!(o.settings, [("zone".to_string(), "c".to_string())]);
        o.set("force", "Yes");
        assert!(o.flag("force"));
        assert!(!o.flag("zone"));
        assert!(!o.flag("missing"));
    }
}
