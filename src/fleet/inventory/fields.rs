//! A method's fields as the inventory reads them ([`MethodFields`]), as it
//! keeps them per node ([`StoredFields`]), and the driver they name.

use serde::Deserialize;
use std::borrow::Cow;
use std::path::PathBuf;
use toml::Spanned;

/// The key of a node's own session method (how to reach the node itself,
/// for rejoin checks), as texts name it.
pub const NODE_SESSION: &str = "[node.ssh]";

/// The platform of a node's own session method (its `driver`).
pub const NODE_SESSION_DRIVER: &str = "ssh";

/// Its endpoint, as a range error names it.
pub(super) const NODE_SESSION_ENDPOINT: &str = "ssh endpoint";

/// The fields of one fencing method, as written (all optional; merged with defaults).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MethodFields {
    /// `ipmi` (redfish, ssh and manual are reserved for their drivers).
    pub driver: Option<String>,
    /// A target URL such as `ipmi://10.0.7.1:623`.
    pub endpoint: Option<String>,
    /// BMC address (instead of an endpoint).
    pub ip: Option<String>,
    /// BMC port.
    pub ipport: Option<u16>,
    /// BMC user name.
    pub username: Option<String>,
    /// Refused: present only to give a clear error.
    pub password: Option<toml::Value>,
    /// Password from the first line of this file.
    pub password_file: Option<PathBuf>,
    /// Password from this environment variable.
    pub password_env: Option<String>,
    /// Password from the output of this command (`sh -c`).
    pub password_script: Option<String>,
    /// IPMI cipher suite: `auto`, 3 or 17.
    pub cipher: Option<toml::Value>,
    /// IPMI privilege level.
    pub privlvl: Option<String>,
    /// IPMI version: "2.0" or "1.5".
    pub ipmi_version: Option<String>,
    /// IPMI 1.5 authentication type.
    pub auth: Option<String>,
    /// File holding the BMC key K_g in hexadecimal.
    pub kg_file: Option<PathBuf>,
    /// IPMI vendor workarounds by FreeIPMI's names (docs/ipmi.md).
    pub workarounds: Option<Vec<String>>,
    /// Redfish: a CA, or the BMC's own certificate, to trust (PEM).
    pub ca_cert: Option<PathBuf>,
    /// Redfish: accept exactly the certificate with this SHA-256 fingerprint.
    pub ssl_fingerprint: Option<String>,
    /// Redfish: do not verify the certificate.
    pub ssl_insecure: Option<bool>,
    /// Redfish: use SessionService instead of Basic auth.
    pub redfish_session: Option<bool>,
    /// Redfish: service root for discovery.
    pub redfish_uri: Option<String>,
    /// Redfish: ComputerSystem URI.
    pub systems_uri: Option<String>,
    /// Plug: system, domain or outlet behind the endpoint.
    pub plug: Option<String>,
    /// SSH: private key file (its passphrase from the credential reference).
    pub identity_file: Option<PathBuf>,
    /// SSH: authenticate through the ssh-agent.
    pub ssh_agent: Option<bool>,
    /// SSH: known_hosts file to check the host key against.
    pub ssh_known_hosts: Option<PathBuf>,
    /// SSH: pinned host key fingerprint (SHA256:…).
    pub ssh_host_key: Option<String>,
    /// SSH: accept and record an unknown host key.
    pub ssh_accept_new: Option<bool>,
    /// SSH: run remote commands through sudo.
    pub use_sudo: Option<bool>,
    /// SSH (virsh): a missing domain counts as off.
    pub missing_as_off: Option<bool>,
    /// Manual fencing: what a person must do (reserved).
    pub instructions: Option<String>,
    /// The system UUID the device must report before any power command
    /// (after loading: the method's own, else the node's).
    pub uuid: Option<String>,
    /// The serial number the device must report (same rules as `uuid`).
    pub serial: Option<String>,
    /// SNMP: the node's outlets: `"7"` on this method's endpoint, or
    /// `"A:7"` on the PDU defined as `[pdu.A]`.
    pub outlets: Option<Vec<String>>,
    /// Refused: present only to give a clear error.
    pub community: Option<toml::Value>,
    /// Refused: present only to give a clear error.
    pub priv_password: Option<toml::Value>,
    /// SNMP: PDU profile, built-in (`apc`, `eaton`) or a profile file path.
    pub profile: Option<String>,
    /// SNMP: version `1`, `2c` or `3`.
    pub snmp_version: Option<String>,
    /// SNMP v1/v2c: community from the first line of this file.
    pub community_file: Option<PathBuf>,
    /// SNMP v1/v2c: community from this environment variable.
    pub community_env: Option<String>,
    /// SNMP v1/v2c: community from the output of this command.
    pub community_script: Option<String>,
    /// SNMPv3: `noAuthNoPriv`, `authNoPriv` or `authPriv` (default authPriv).
    pub security_level: Option<String>,
    /// SNMPv3: MD5, SHA, SHA-224, SHA-256, SHA-384, SHA-512 (default SHA-256).
    pub auth_protocol: Option<String>,
    /// SNMPv3: DES or AES (default AES).
    pub priv_protocol: Option<String>,
    /// SNMPv3: privacy password from the first line of this file.
    pub priv_password_file: Option<PathBuf>,
    /// SNMPv3: privacy password from this environment variable.
    pub priv_password_env: Option<String>,
    /// SNMPv3: privacy password from the output of this command.
    pub priv_password_script: Option<String>,
    /// AWS: the region (with `plug` = the instance ID, instead of an
    /// `aws://REGION/INSTANCE` endpoint).
    pub region: Option<String>,
    /// AWS: the access key ID (the secret access key from `password_file`,
    /// `password_env` or `password_script`); none: the credential chain.
    pub access_key: Option<String>,
    /// AWS: the EC2 endpoint URL.
    pub endpoint_url: Option<String>,
    /// AWS: the instance's `PrivateDnsName` must be this (the Kubernetes
    /// node name), checked before any state change.
    pub node_name: Option<String>,
    /// AWS: the instance must carry this tag (`KEY=VALUE`).
    pub expect_tag: Option<String>,
    /// AWS: allow off/reboot of the instance fencekit runs on.
    pub allow_self_fence: Option<bool>,
    /// KubeVirt: the kubeconfig file (default: `KUBECONFIG`,
    /// `~/.kube/config`, the service account).
    pub kubeconfig: Option<PathBuf>,
    /// KubeVirt: the VirtualMachine's `metadata.uid` it must have.
    pub vm_uid: Option<String>,
    /// A platform's own settings (`settings = { zone = "…" }`: the keys
    /// its `Platform::setting_keys` names); merged key by key with the
    /// defaults' settings.
    pub settings: Option<std::collections::BTreeMap<String, toml::Value>>,
    /// SNMP: the `[pdu.NAME]` tables this method's outlets refer to
    /// (filled while the inventory is read).
    #[serde(skip)]
    pub pdus: Vec<(String, MethodFields)>,
}

impl crate::platform::build::Fields for MethodFields {
    fn has(&self, key: &str) -> bool {
        if let Some(v) = self.settings.as_ref().and_then(|t| t.get(key)) {
            return !matches!(v, toml::Value::Boolean(false));
        }
        match key {
            "endpoint" => self.endpoint.is_some(),
            "ip" => self.ip.is_some(),
            "plug" => self.plug.is_some(),
            "region" => self.region.is_some(),
            "ca_cert" => self.ca_cert.is_some(),
            "ssl_fingerprint" => self.ssl_fingerprint.is_some(),
            "ssl_insecure" => self.ssl_insecure == Some(true),
            "community" => self.community.is_some(),
            "priv_password" => self.priv_password.is_some(),
            _ => false,
        }
    }
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "endpoint" => self.endpoint.as_deref(),
            "ip" => self.ip.as_deref(),
            "plug" => self.plug.as_deref(),
            "region" => self.region.as_deref(),
            "username" => self.username.as_deref(),
            "profile" => self.profile.as_deref(),
            "snmp_version" => self.snmp_version.as_deref(),
            "security_level" => self.security_level.as_deref(),
            "auth_protocol" => self.auth_protocol.as_deref(),
            "priv_protocol" => self.priv_protocol.as_deref(),
            "password_file" => self.password_file.as_deref().and_then(|p| p.to_str()),
            "password_env" => self.password_env.as_deref(),
            "password_script" => self.password_script.as_deref(),
            "community_file" => self.community_file.as_deref().and_then(|p| p.to_str()),
            "community_env" => self.community_env.as_deref(),
            "community_script" => self.community_script.as_deref(),
            "priv_password_file" => self.priv_password_file.as_deref().and_then(|p| p.to_str()),
            "priv_password_env" => self.priv_password_env.as_deref(),
            "priv_password_script" => self.priv_password_script.as_deref(),
            other => match self.settings.as_ref().and_then(|t| t.get(other)) {
                Some(toml::Value::String(v)) => Some(v.as_str()),
                _ => None,
            },
        }
    }
    fn list(&self, key: &str) -> &[String] {
        match key {
            "outlets" => self.outlets.as_deref().unwrap_or_default(),
            _ => &[],
        }
    }
    fn tables(&self, key: &str) -> Vec<(&str, &dyn crate::platform::build::Fields)> {
        match key {
            "pdus" => self
                .pdus
                .iter()
                .map(|(n, f)| (n.as_str(), f as &dyn crate::platform::build::Fields))
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl MethodFields {
    /// `self` with every unset field taken from `base`.
    pub fn over(&self, base: &MethodFields) -> MethodFields {
        self.clone().merged(base)
    }

    /// [`MethodFields::over`], keeping `self`'s own values without copying
    /// them (and `base`'s copied only where `self` has none): this runs for
    /// every method of every node.
    pub fn merged(self, base: &MethodFields) -> MethodFields {
        // Credential references are one choice: a method that names its own
        // source replaces the default source, whichever kind either is.
        let (file, env, script) = (
            self.password_file.is_some(),
            self.password_env.is_some(),
            self.password_script.is_some(),
        );
        macro_rules! pick {
            ($($f:ident),*) => { MethodFields { $($f: self.$f.or_else(|| base.$f.clone()),)* pdus: self.pdus } };
        }
        let mut merged = pick!(
            driver,
            endpoint,
            ip,
            ipport,
            username,
            password,
            password_file,
            password_env,
            password_script,
            cipher,
            privlvl,
            ipmi_version,
            auth,
            kg_file,
            workarounds,
            ca_cert,
            ssl_fingerprint,
            ssl_insecure,
            redfish_session,
            redfish_uri,
            systems_uri,
            plug,
            identity_file,
            ssh_agent,
            ssh_known_hosts,
            ssh_host_key,
            ssh_accept_new,
            use_sudo,
            missing_as_off,
            instructions,
            uuid,
            serial,
            outlets,
            community,
            priv_password,
            profile,
            snmp_version,
            community_file,
            community_env,
            community_script,
            security_level,
            auth_protocol,
            priv_protocol,
            priv_password_file,
            priv_password_env,
            priv_password_script,
            region,
            access_key,
            endpoint_url,
            node_name,
            expect_tag,
            allow_self_fence,
            kubeconfig,
            vm_uid,
            settings
        );
        // Settings merge key by key: the method's own over the defaults'.
        if let (Some(own), Some(base)) = (merged.settings.as_mut(), base.settings.as_ref()) {
            for (k, v) in base {
                own.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if file || env || script {
            // Only the method's own source: the defaults' are dropped.
            if !file {
                merged.password_file = None;
            }
            if !env {
                merged.password_env = None;
            }
            if !script {
                merged.password_script = None;
            }
        }
        merged
    }

    /// The driver named or implied by the endpoint's scheme.
    pub fn driver_kind(&self) -> Option<Cow<'static, str>> {
        kind_of(self.driver.as_deref(), self.endpoint.as_deref())
    }
}

/// The driver `driver` names, or else the scheme of `endpoint` implies
/// (the known ones without allocating: this runs for every method).
pub(super) fn kind_of(driver: Option<&str>, endpoint: Option<&str>) -> Option<Cow<'static, str>> {
    use crate::method::platforms::{by_name, by_scheme};
    if let Some(d) = driver {
        if d.eq_ignore_ascii_case("manual") {
            return Some(Cow::Borrowed("manual"));
        }
        return Some(match by_name(d) {
            Some(p) => Cow::Borrowed(p.name()),
            None => Cow::Owned(d.to_ascii_lowercase()),
        });
    }
    // (A byte search: this runs three times for every method.)
    let e = endpoint?;
    let at = e.as_bytes().windows(3).position(|w| w == b"://")?;
    let scheme = &e[..at];
    Some(match by_scheme(scheme) {
        Some(p) => Cow::Borrowed(p.name()),
        None => Cow::Owned(format!("{:?}", scheme.to_ascii_lowercase())),
    })
}

/// A method's fields as an inventory keeps them for each node: only those
/// set, in a slice (a full [`MethodFields`] is almost 1 KiB of mostly empty
/// options, and a 100,000-node inventory keeps two per node). Unpacked into
/// a [`MethodFields`] when a plan is built ([`StoredFields::fields`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StoredFields {
    set: Box<[Field]>,
    pdus: Vec<(String, MethodFields)>,
}

macro_rules! stored_fields {
    ($($f:ident: $t:ty),* $(,)?) => {
        /// One field that is set, named as in [`MethodFields`].
        #[allow(non_camel_case_types)]
        #[derive(Clone, Debug, PartialEq)]
        enum Field {
            $($f($t),)*
        }

        impl StoredFields {
            /// Keeps the fields of `m` that are set.
            pub fn new(m: MethodFields) -> StoredFields {
                // Every field named: one added to MethodFields and not here
                // does not compile.
                let MethodFields { $($f,)* pdus } = m;
                let mut set = Vec::with_capacity(0 $(+ usize::from($f.is_some()))*);
                $(if let Some(x) = $f {
                    set.push(Field::$f(x));
                })*
                StoredFields {
                    set: set.into_boxed_slice(),
                    pdus,
                }
            }

            /// The fields, as written and merged, moved out.
            pub fn into_fields(self) -> MethodFields {
                let mut m = MethodFields {
                    pdus: self.pdus,
                    ..MethodFields::default()
                };
                for f in self.set.into_vec() {
                    match f {
                        $(Field::$f(x) => m.$f = Some(x),)*
                    }
                }
                m
            }

            /// The fields, as written and merged.
            pub fn fields(&self) -> MethodFields {
                let mut m = MethodFields {
                    pdus: self.pdus.clone(),
                    ..MethodFields::default()
                };
                for f in self.set.iter() {
                    match f {
                        $(Field::$f(x) => m.$f = Some(x.clone()),)*
                    }
                }
                m
            }
        }
    };
}

stored_fields!(
    driver: String,
    endpoint: String,
    ip: String,
    ipport: u16,
    username: String,
    password: toml::Value,
    password_file: PathBuf,
    password_env: String,
    password_script: String,
    cipher: toml::Value,
    privlvl: String,
    ipmi_version: String,
    auth: String,
    kg_file: PathBuf,
    workarounds: Vec<String>,
    ca_cert: PathBuf,
    ssl_fingerprint: String,
    ssl_insecure: bool,
    redfish_session: bool,
    redfish_uri: String,
    systems_uri: String,
    plug: String,
    identity_file: PathBuf,
    ssh_agent: bool,
    ssh_known_hosts: PathBuf,
    ssh_host_key: String,
    ssh_accept_new: bool,
    use_sudo: bool,
    missing_as_off: bool,
    instructions: String,
    uuid: String,
    serial: String,
    outlets: Vec<String>,
    community: toml::Value,
    priv_password: toml::Value,
    profile: String,
    snmp_version: String,
    community_file: PathBuf,
    community_env: String,
    community_script: String,
    security_level: String,
    auth_protocol: String,
    priv_protocol: String,
    priv_password_file: PathBuf,
    priv_password_env: String,
    priv_password_script: String,
    region: String,
    access_key: String,
    endpoint_url: String,
    node_name: String,
    expect_tag: String,
    allow_self_fence: bool,
    kubeconfig: PathBuf,
    vm_uid: String,
    settings: std::collections::BTreeMap<String, toml::Value>,
);

/// A rejoin configuration check: a command run on the node itself whose
/// output's SHA-256 is compared with a recorded baseline.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CheckDef {
    /// A short name (unique per node).
    pub name: String,
    /// The command (run by the remote user's shell).
    pub command: String,
}

/// One `[[node]]` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NodeDoc {
    pub(super) name: Spanned<String>,
    pub(super) address: Option<String>,
    pub(super) probe_ports: Option<Vec<u16>>,
    #[serde(default)]
    pub(super) fence: Vec<MethodFields>,
    /// The node's own session method (`[node.ssh]`).
    #[serde(rename = "ssh")]
    pub(super) node_session: Option<MethodFields>,
    #[serde(default)]
    pub(super) check: Vec<CheckDef>,
    pub(super) uuid: Option<String>,
    pub(super) serial: Option<String>,
    pub(super) accept_bmc_only: Option<bool>,
    pub(super) allow_host_only: Option<bool>,
    pub(super) max_off_watts: Option<f64>,
    pub(super) on_confirmed_off: Option<String>,
}
