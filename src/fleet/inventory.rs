//! The inventory: nodes, their data-plane addresses and probe ports, and
//! their fencing methods in level order, with shared defaults.
//!
//! ```toml
//! [defaults]
//! username = "admin"
//! password_file = "/etc/fencekit/bmc.pw"
//! max_fence = "25%"                          # the mass-fencing guard (or a number of nodes)
//! on_confirmed_off = "/etc/fencekit/taint.sh" # run while a fenced node is observed off
//!
//! [defaults.ipmi]
//! cipher = 17
//!
//! [[node]]
//! name = "node[01-04]"                      # a range: fields with ranges expand in step
//! address = "10.0.1.[1-4]"
//! probe_ports = [22, 10250]
//!   [[node.fence]]
//!   endpoint = "ipmi://10.0.7.[1-4]"
//! ```
//!
//! Plain passwords are refused: credentials are references (a file, an
//! environment variable, a script). Every error names the file and line.
//!
//! Identity pinning: `uuid = "…"` and/or `serial = "…"` on a `[[node]]`
//! apply to all its methods; on one `[[node.fence]]` they replace the
//! node's for that method (part by part). The same per-node pins may be
//! written in a table of their own, which `fencekit check --record-identity`
//! prints so that its output can be appended to the file as it is:
//!
//! ```toml
//! [identity.node01]
//! uuid = "4c414230-0000-4001-8000-fe0000000001"
//! serial = "LAB00001"
//! ```
//!
//! Pins are refused in `[defaults]` and on a node range (one machine cannot
//! be several nodes), and a node pinned both ways is refused.

use super::hostrange;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

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
    /// SNMP: the `[pdu.NAME]` tables this method's outlets refer to
    /// (filled while the inventory is read).
    #[serde(skip)]
    pub pdus: Vec<(String, MethodFields)>,
}

impl MethodFields {
    /// `self` with every unset field taken from `base`.
    pub fn over(&self, base: &MethodFields) -> MethodFields {
        // Credential references are one choice: a method that names its own
        // source replaces the default source, whichever kind either is.
        let own_credential = self.password_file.is_some()
            || self.password_env.is_some()
            || self.password_script.is_some();
        let base = &if own_credential {
            MethodFields {
                password_file: None,
                password_env: None,
                password_script: None,
                ..base.clone()
            }
        } else {
            base.clone()
        };
        macro_rules! pick {
            ($($f:ident),*) => { MethodFields { $($f: self.$f.clone().or_else(|| base.$f.clone()),)* pdus: self.pdus.clone() } };
        }
        pick!(
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
            priv_password_script
        )
    }

    /// The driver named or implied by the endpoint's scheme.
    pub fn driver_kind(&self) -> Option<String> {
        if let Some(d) = &self.driver {
            return Some(d.to_ascii_lowercase());
        }
        let scheme = self
            .endpoint
            .as_deref()?
            .split_once("://")?
            .0
            .to_ascii_lowercase();
        Some(match scheme.as_str() {
            "ipmi" => "ipmi".into(),
            s if s.contains("redfish") => "redfish".into(),
            "ssh" => "ssh".into(),
            "snmp" => "snmp".into(),
            other => format!("{other:?}"),
        })
    }
}

/// A rejoin configuration check: a command run on the node over SSH whose
/// output's SHA-256 is compared with a recorded baseline.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CheckDef {
    /// A short name (unique per node).
    pub name: String,
    /// The command (run by the remote user's shell).
    pub command: String,
}

/// One node of the inventory, with its methods merged over the defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The node's name.
    pub name: String,
    /// Its own (data-plane) address.
    pub address: Option<String>,
    /// Ports its host answers on when it is up.
    pub probe_ports: Vec<u16>,
    /// Fencing methods, level 1 first.
    pub methods: Vec<MethodFields>,
    /// How to reach the node itself over SSH (for rejoin checks).
    pub ssh: Option<MethodFields>,
    /// Rejoin configuration checks.
    pub checks: Vec<CheckDef>,
    /// `verify` may accept the BMC's reads alone as proof for this node
    /// (`accept_bmc_only = true`): recorded in the evidence and the audit.
    pub accept_bmc_only: bool,
    /// The SSH `host` profile may be this node's only fencing level
    /// (`allow_host_only = true`): off is then sent, unverified.
    pub allow_host_only: bool,
    /// The most watts this node may draw while reported off (`verify`).
    pub max_off_watts: Option<f64>,
    /// Command run while the node is observed off (`on_confirmed_off`,
    /// or the `[defaults]` one).
    pub on_confirmed_off: Option<String>,
    /// Line of the node's `name` in the file.
    pub line: usize,
    /// The node's pinned system UUID (node level or `[identity.NAME]`).
    pub uuid: Option<String>,
    /// The node's pinned serial number.
    pub serial: Option<String>,
}

/// A parsed inventory.
#[derive(Clone, Debug)]
pub struct Inventory {
    /// Where it was read from.
    pub path: PathBuf,
    /// Nodes, in file order (ranges expanded).
    pub nodes: Vec<Node>,
    /// The mass-fencing limit (`[defaults] max_fence`), if set.
    pub max_fence: Option<super::guard::Limit>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    defaults: Option<toml::Table>,
    /// Shared PDUs, by name (`[pdu.A]`), for SNMP methods' outlets.
    #[serde(default)]
    pdu: std::collections::BTreeMap<String, MethodFields>,
    #[serde(default)]
    node: Vec<NodeDoc>,
    #[serde(default)]
    identity: std::collections::BTreeMap<String, Spanned<IdentityDoc>>,
}

/// `[identity.NAME]`: who node NAME is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdentityDoc {
    uuid: Option<String>,
    serial: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeDoc {
    name: Spanned<String>,
    address: Option<String>,
    probe_ports: Option<Vec<u16>>,
    #[serde(default)]
    fence: Vec<MethodFields>,
    ssh: Option<MethodFields>,
    #[serde(default)]
    check: Vec<CheckDef>,
    uuid: Option<String>,
    serial: Option<String>,
    accept_bmc_only: Option<bool>,
    allow_host_only: Option<bool>,
    max_off_watts: Option<f64>,
    on_confirmed_off: Option<String>,
}

/// Default fields: common ones and per-driver tables.
#[derive(Clone, Debug, Default)]
struct Defaults {
    common: MethodFields,
    per_driver: Vec<(String, MethodFields)>,
    probe_ports: Vec<u16>,
    accept_bmc_only: bool,
    allow_host_only: bool,
    max_off_watts: Option<f64>,
    max_fence: Option<super::guard::Limit>,
    on_confirmed_off: Option<String>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

fn parse_defaults(t: toml::Table, path: &Path) -> Result<Defaults, String> {
    let mut t = t;
    let mut d = Defaults::default();
    if let Some(v) = t.remove("probe_ports") {
        d.probe_ports = v
            .try_into()
            .map_err(|e| format!("{}: [defaults] probe_ports: {e}", path.display()))?;
    }
    for key in ["accept_bmc_only", "allow_host_only"] {
        if let Some(v) = t.remove(key) {
            let b = v.as_bool().ok_or_else(|| {
                format!(
                    "{}: [defaults] {key}: expected true or false",
                    path.display()
                )
            })?;
            if key == "accept_bmc_only" {
                d.accept_bmc_only = b;
            } else {
                d.allow_host_only = b;
            }
        }
    }
    if let Some(v) = t.remove("max_off_watts") {
        let w = v
            .as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .ok_or_else(|| {
                format!(
                    "{}: [defaults] max_off_watts: expected a number of watts",
                    path.display()
                )
            })?;
        d.max_off_watts =
            Some(check_watts(w).map_err(|e| format!("{}: [defaults] {e}", path.display()))?);
    }
    // Safety settings live beside the method defaults but are not method fields.
    if let Some(v) = t.remove("max_fence") {
        let text = match v {
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::String(s) => s,
            other => format!("{other:?}"),
        };
        d.max_fence = Some(
            text.parse()
                .map_err(|e| format!("{}: [defaults] {e}", path.display()))?,
        );
    }
    if let Some(v) = t.remove("on_confirmed_off") {
        d.on_confirmed_off = Some(
            v.try_into()
                .map_err(|e| format!("{}: [defaults] on_confirmed_off: {e}", path.display()))?,
        );
    }
    for driver in ["ipmi", "redfish", "ssh", "manual", "snmp"] {
        if let Some(v) = t.remove(driver) {
            let f: MethodFields = v
                .try_into()
                .map_err(|e| format!("{}: [defaults.{driver}]: {e}", path.display()))?;
            d.per_driver.push((driver.to_string(), f));
        }
    }
    d.common = toml::Value::Table(t)
        .try_into()
        .map_err(|e| format!("{}: [defaults]: {e}", path.display()))?;
    let pinned = std::iter::once(("[defaults]".to_string(), &d.common)).chain(
        d.per_driver
            .iter()
            .map(|(k, f)| (format!("[defaults.{k}]"), f)),
    );
    for (table, f) in pinned {
        if f.uuid.is_some() || f.serial.is_some() {
            return Err(format!(
                "{}: {table}: uuid and serial name one machine: set them on a node or \
                 one of its methods, not as a default",
                path.display()
            ));
        }
    }
    Ok(d)
}

/// A `max_off_watts` that makes sense: a finite number, not negative.
fn check_watts(w: f64) -> Result<f64, String> {
    if w.is_finite() && w >= 0.0 {
        Ok(w)
    } else {
        Err(format!(
            "max_off_watts {w} is not a number of watts (0 or more)"
        ))
    }
}

/// Picks the i-th of n expansions of a field that may hold a range.
fn lockstep(
    value: &Option<String>,
    i: usize,
    n: usize,
    what: &str,
) -> Result<Option<String>, String> {
    let Some(v) = value else {
        return Ok(None);
    };
    if !hostrange::is_range(v) {
        return Ok(Some(v.clone()));
    }
    let all = hostrange::expand(v).map_err(|e| e.to_string())?;
    if all.len() != n {
        return Err(format!(
            "{what} '{v}' expands to {} values but the name to {n}",
            all.len()
        ));
    }
    Ok(Some(all[i].clone()))
}

/// Checks that a pinned uuid reads as a UUID and a serial is not empty.
fn check_pin(uuid: Option<&str>, serial: Option<&str>) -> Result<(), String> {
    crate::engine::identity::ExpectedIdentity::new(uuid, serial)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn check_method(m: &MethodFields) -> Result<(), String> {
    if m.password.is_some() {
        return Err(
            "plain passwords are not accepted in an inventory: use password_file, \
                    password_env or password_script"
                .into(),
        );
    }
    let refs = [
        m.password_file.is_some(),
        m.password_env.is_some(),
        m.password_script.is_some(),
    ];
    if refs.iter().filter(|x| **x).count() > 1 {
        return Err("give only one of password_file, password_env and password_script".into());
    }
    match m.driver_kind().as_deref() {
        None => Err("no driver: set driver = \"ipmi\" or an endpoint such as ipmi://HOST".into()),
        Some("snmp") => {
            let outlets = m.outlets.as_deref().unwrap_or_default();
            if outlets.is_empty() {
                return Err("an snmp method needs outlets = [\"7\"] (or [\"A:7\", \"B:7\"] with [pdu.A] and [pdu.B])".into());
            }
            let on_own = outlets.iter().any(|o| {
                !o.split_once(':')
                    .is_some_and(|(p, _)| m.pdus.iter().any(|(n, _)| n == p))
            });
            if on_own && m.endpoint.is_none() {
                return Err("an snmp method needs endpoint = \"snmp://HOST[:PORT]\" for outlets that name no [pdu.NAME]".into());
            }
            for (name, p) in std::iter::once(&(String::new(), m.clone())).chain(&m.pdus) {
                let what = if name.is_empty() {
                    String::new()
                } else {
                    format!("[pdu.{name}]: ")
                };
                if name.is_empty() && !on_own {
                    continue;
                }
                if p.community.is_some() {
                    return Err(format!("{what}plain communities are not accepted: use community_file, community_env or community_script"));
                }
                if p.priv_password.is_some() {
                    return Err(format!("{what}plain passwords are not accepted: use priv_password_file, priv_password_env or priv_password_script"));
                }
                if let Some(e) = &p.endpoint {
                    crate::snmp::config::parse_endpoint(e).map_err(|e| format!("{what}{e}"))?;
                } else {
                    return Err(format!(
                        "{what}a PDU needs endpoint = \"snmp://HOST[:PORT]\""
                    ));
                }
            }
            Ok(())
        }
        Some("ipmi") => {
            if m.endpoint.is_none() && m.ip.is_none() {
                return Err("an ipmi method needs endpoint = \"ipmi://HOST[:PORT]\" or ip".into());
            }
            Ok(())
        }
        Some("redfish") => {
            if m.endpoint.is_none() && m.ip.is_none() {
                return Err(
                    "a redfish method needs endpoint = \"redfish://HOST[:PORT][/redfish/v1/Systems/ID]\" or ip"
                        .into(),
                );
            }
            let trusts = [
                m.ca_cert.is_some(),
                m.ssl_fingerprint.is_some(),
                m.ssl_insecure == Some(true),
            ];
            if trusts.iter().filter(|x| **x).count() > 1 {
                return Err("give only one of ca_cert, ssl_fingerprint and ssl_insecure".into());
            }
            Ok(())
        }
        Some("manual") => Ok(()),
        Some("ssh") => {
            if m.endpoint.is_none() {
                return Err(
                    "an ssh method needs endpoint = \"ssh://USER@HOST[:PORT]/virsh/DOMAIN\" (or /host)".into(),
                );
            }
            Ok(())
        }
        Some(other) => Err(format!(
            "unknown driver '{other}' (expected ipmi, redfish, ssh or manual)"
        )),
    }
}

impl Inventory {
    /// Reads and checks an inventory file.
    pub fn load(path: &Path) -> Result<Inventory, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the inventory {}: {e}", path.display()))?;
        Inventory::parse(&text, path)
    }

    /// Parses inventory text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Inventory, String> {
        let doc: Doc = toml::from_str(text)
            .map_err(|e| format!("{}: {}", path.display(), e.to_string().trim_end()))?;
        let defaults = match doc.defaults {
            Some(t) => parse_defaults(t, path)?,
            None => Defaults::default(),
        };
        let mut pins = doc.identity;
        let mut nodes: Vec<Node> = Vec::new();
        // A set, not a scan of `nodes` (found with the `targets` fuzz target:
        // one 100,000-name range made the check quadratic, 30 s for 70 bytes).
        let mut node_names = std::collections::HashSet::new();
        for nd in doc.node {
            let line = line_of(text, nd.name.span().start);
            let at = |m: String| format!("{}:{line}: {m}", path.display());
            let pattern = nd.name.get_ref().trim().to_string();
            if pattern.is_empty() {
                return Err(at("a node has an empty name".into()));
            }
            let names = hostrange::expand(&pattern).map_err(|e| at(e.to_string()))?;
            let n = names.len();
            let method_pinned = nd
                .fence
                .iter()
                .any(|m| m.uuid.is_some() || m.serial.is_some());
            if n > 1 && (nd.uuid.is_some() || nd.serial.is_some() || method_pinned) {
                return Err(at(format!(
                    "node '{pattern}' names {n} nodes, but a uuid or serial names one machine: \
                     pin each node in [identity.NAME] tables (fencekit check --record-identity \
                     prints them)"
                )));
            }
            check_pin(nd.uuid.as_deref(), nd.serial.as_deref())
                .map_err(|e| at(format!("node '{pattern}': {e}")))?;
            // One bound for the whole file, not only per range (found with
            // the `targets` fuzz target: each [[node]] could add 100,000 nodes).
            if nodes.len() + n > hostrange::MAX_EXPANSION {
                return Err(at(format!(
                    "the inventory names more than {} nodes",
                    hostrange::MAX_EXPANSION
                )));
            }
            for (i, name) in names.into_iter().enumerate() {
                let ctx = |m: String| at(format!("node '{name}': {m}"));
                let mut methods = Vec::new();
                if nd.fence.is_empty() {
                    return Err(ctx("no fencing method ([[node.fence]])".into()));
                }
                // The node's pin: on the node, or in [identity.NAME] (not both).
                let (node_uuid, node_serial) = match pins.remove(&name) {
                    Some(p) if nd.uuid.is_some() || nd.serial.is_some() => {
                        return Err(ctx(format!(
                            "pinned twice: on the node and in [identity.{name}] (line {})",
                            line_of(text, p.span().start)
                        )))
                    }
                    Some(p) => {
                        let p = p.into_inner();
                        check_pin(p.uuid.as_deref(), p.serial.as_deref())
                            .map_err(|e| ctx(format!("[identity.{name}]: {e}")))?;
                        (p.uuid, p.serial)
                    }
                    None => (nd.uuid.clone(), nd.serial.clone()),
                };
                for (k, m) in nd.fence.iter().enumerate() {
                    let mut m = m.clone();
                    check_pin(m.uuid.as_deref(), m.serial.as_deref())
                        .map_err(|e| ctx(format!("fence method {}: {e}", k + 1)))?;
                    m.endpoint = lockstep(&m.endpoint, i, n, "endpoint").map_err(&ctx)?;
                    m.ip = lockstep(&m.ip, i, n, "ip").map_err(&ctx)?;
                    m.plug = lockstep(&m.plug, i, n, "plug").map_err(&ctx)?;
                    m.systems_uri = lockstep(&m.systems_uri, i, n, "systems_uri").map_err(&ctx)?;
                    let kind = m.over(&defaults.common).driver_kind();
                    let base = defaults
                        .per_driver
                        .iter()
                        .find(|(d, _)| Some(d) == kind.as_ref())
                        .map(|(_, f)| f.over(&defaults.common))
                        .unwrap_or_else(|| defaults.common.clone());
                    let mut merged = m.over(&base);
                    if kind.as_deref() == Some("snmp") {
                        if let Some(list) = &merged.outlets {
                            let mut expanded = Vec::with_capacity(list.len());
                            for o in list {
                                expanded.push(
                                    lockstep(&Some(o.clone()), i, n, "outlet")
                                        .map_err(&ctx)?
                                        .unwrap_or_default(),
                                );
                            }
                            merged.outlets = Some(expanded);
                        }
                        let snmp_base = defaults
                            .per_driver
                            .iter()
                            .find(|(d, _)| d == "snmp")
                            .map(|(_, f)| f.over(&defaults.common))
                            .unwrap_or_else(|| defaults.common.clone());
                        for o in merged.outlets.clone().unwrap_or_default() {
                            if let Some((p, _)) = o.split_once(':') {
                                if let Some(t) = doc.pdu.get(p) {
                                    if !merged.pdus.iter().any(|(x, _)| x == p) {
                                        merged.pdus.push((p.to_string(), t.over(&snmp_base)));
                                    }
                                }
                            }
                        }
                    }
                    check_method(&merged)
                        .map_err(|e| ctx(format!("fence method {}: {e}", k + 1)))?;
                    // Manual methods and PDU outlets have no device that could
                    // say which machine it is: the node's pin skips them.
                    let kind = merged.driver_kind();
                    let blind = matches!(kind.as_deref(), Some("manual" | "snmp"));
                    if blind && (merged.uuid.is_some() || merged.serial.is_some()) {
                        return Err(ctx(format!(
                            "fence method {}: {} has no device that could report an \
                             identity (pin the node instead)",
                            k + 1,
                            match kind.as_deref() {
                                Some("snmp") => "a PDU outlet",
                                _ => "a manual method",
                            }
                        )));
                    }
                    // The node's pin applies to every method with a device,
                    // part by part, unless the method names its own.
                    if !blind {
                        merged.uuid = merged.uuid.or_else(|| node_uuid.clone());
                        merged.serial = merged.serial.or_else(|| node_serial.clone());
                    }
                    methods.push(merged);
                }
                if !node_names.insert(name.clone()) {
                    return Err(ctx("defined twice".into()));
                }
                let ssh = match &nd.ssh {
                    Some(m) => {
                        let mut m = m.clone();
                        m.endpoint = lockstep(&m.endpoint, i, n, "ssh endpoint").map_err(&ctx)?;
                        let base = defaults
                            .per_driver
                            .iter()
                            .find(|(d, _)| d == "ssh")
                            .map(|(_, f)| f.over(&defaults.common))
                            .unwrap_or_else(|| defaults.common.clone());
                        if m.uuid.is_some() || m.serial.is_some() {
                            return Err(ctx(
                                "[node.ssh] reaches the node itself; a uuid or serial belongs on \
                                 the node or one of its fence methods"
                                    .into(),
                            ));
                        }
                        let mut m = m.over(&base);
                        m.driver = Some("ssh".into());
                        check_method(&m).map_err(|e| ctx(format!("[node.ssh]: {e}")))?;
                        Some(m)
                    }
                    None => None,
                };
                if !nd.check.is_empty() && ssh.is_none() {
                    return Err(ctx(
                        "[[node.check]] needs [node.ssh] (how to reach the node itself)".into(),
                    ));
                }
                let mut names: Vec<&str> = nd.check.iter().map(|c| c.name.as_str()).collect();
                names.sort_unstable();
                if names.windows(2).any(|w| w[0] == w[1]) {
                    return Err(ctx("two checks have the same name".into()));
                }
                let max_off_watts = match nd.max_off_watts {
                    Some(w) => Some(check_watts(w).map_err(&ctx)?),
                    None => defaults.max_off_watts,
                };
                nodes.push(Node {
                    address: lockstep(&nd.address, i, n, "address").map_err(&ctx)?,
                    probe_ports: nd
                        .probe_ports
                        .clone()
                        .unwrap_or_else(|| defaults.probe_ports.clone()),
                    name,
                    methods,
                    ssh,
                    checks: nd.check.clone(),
                    accept_bmc_only: nd.accept_bmc_only.unwrap_or(defaults.accept_bmc_only),
                    allow_host_only: nd.allow_host_only.unwrap_or(defaults.allow_host_only),
                    max_off_watts,
                    on_confirmed_off: nd
                        .on_confirmed_off
                        .clone()
                        .or_else(|| defaults.on_confirmed_off.clone()),
                    line,
                    uuid: node_uuid,
                    serial: node_serial,
                });
            }
        }
        if let Some((name, p)) = pins.into_iter().next() {
            return Err(format!(
                "{}:{}: [identity.{name}]: no node '{name}' in the inventory",
                path.display(),
                line_of(text, p.span().start)
            ));
        }
        Ok(Inventory {
            path: path.to_path_buf(),
            nodes,
            max_fence: defaults.max_fence,
        })
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[defaults]
username = "admin"
password_env = "BMC_PW"
probe_ports = [22]

[defaults.ipmi]
cipher = 17

[[node]]
name = "node[01-03]"
address = "10.0.1.[1-3]"
  [[node.fence]]
  endpoint = "ipmi://10.0.7.[1-3]"

[[node]]
name = "db1"
probe_ports = [5432]
  [[node.fence]]
  driver = "ipmi"
  ip = "10.0.8.1"
  username = "root"
  password_file = "/etc/fencekit/db1.pw"
"#;

    #[test]
    fn defaults_ranges_and_overrides() {
        let inv = Inventory::parse(GOOD, Path::new("lab.toml")).unwrap();
        assert_eq!(inv.nodes.len(), 4);
        let n2 = inv.node("node02").unwrap();
        assert_eq!(n2.address.as_deref(), Some("10.0.1.2"));
        assert_eq!(n2.methods[0].endpoint.as_deref(), Some("ipmi://10.0.7.2"));
        assert_eq!(n2.methods[0].username.as_deref(), Some("admin"));
        assert_eq!(n2.methods[0].cipher, Some(toml::Value::Integer(17)));
        assert_eq!(n2.probe_ports, vec![22]);
        assert_eq!(n2.line, 11);
        let db = inv.node("db1").unwrap();
        assert_eq!(db.methods[0].username.as_deref(), Some("root"));
        assert_eq!(db.probe_ports, vec![5432]);
        assert!(db.methods[0].password_file.is_some());
    }

    #[test]
    fn errors_name_file_and_line() {
        let bad = "[[node]]\nname = \"a\"\n  [[node.fence]]\n  endpoint = \"ipmi://x\"\n  passwrd = \"x\"\n";
        let e = Inventory::parse(bad, Path::new("i.toml")).unwrap_err();
        assert!(
            e.contains("i.toml") && e.contains("line 5") && e.contains("passwrd"),
            "{e}"
        );

        let plain = "[[node]]\nname = \"a\"\n  [[node.fence]]\n  endpoint = \"ipmi://x\"\n  password = \"x\"\n";
        let e = Inventory::parse(plain, Path::new("i.toml")).unwrap_err();
        assert!(
            e.starts_with("i.toml:2:") && e.contains("plain passwords"),
            "{e}"
        );

        let mismatch =
            "[[node]]\nname = \"n[1-3]\"\n  [[node.fence]]\n  endpoint = \"ipmi://h[1-2]\"\n";
        let e = Inventory::parse(mismatch, Path::new("i.toml")).unwrap_err();
        assert!(e.contains("expands to 2 values"), "{e}");

        let twice = "[[node]]\nname = \"a\"\n[[node.fence]]\nip=\"h\"\ndriver=\"ipmi\"\n[[node]]\nname = \"a\"\n[[node.fence]]\nip=\"h\"\ndriver=\"ipmi\"\n";
        let e = Inventory::parse(twice, Path::new("i.toml")).unwrap_err();
        assert!(
            e.starts_with("i.toml:7:") && e.contains("defined twice"),
            "{e}"
        );

        let nodriver = "[[node]]\nname = \"a\"\n[[node.fence]]\nip = \"h\"\n";
        assert!(Inventory::parse(nodriver, Path::new("i"))
            .unwrap_err()
            .contains("no driver"));
        let nomethod = "[[node]]\nname = \"a\"\n";
        assert!(Inventory::parse(nomethod, Path::new("i"))
            .unwrap_err()
            .contains("no fencing method"));
    }

    #[test]
    fn safety_settings_are_read_and_checked() {
        let text = "[defaults]\nmax_fence = \"25%\"\non_confirmed_off = \"taint\"\n\
                    [[node]]\nname = \"a\"\n[[node.fence]]\nendpoint = \"ipmi://h\"\n\
                    [[node]]\nname = \"b\"\non_confirmed_off = \"own\"\n[[node.fence]]\nendpoint = \"ipmi://h2\"\n";
        let inv = Inventory::parse(text, Path::new("i.toml")).unwrap();
        assert_eq!(inv.max_fence, Some(super::super::guard::Limit::Percent(25)));
        assert_eq!(
            inv.node("a").unwrap().on_confirmed_off.as_deref(),
            Some("taint")
        );
        assert_eq!(
            inv.node("b").unwrap().on_confirmed_off.as_deref(),
            Some("own")
        );
        let n = Inventory::parse(&text.replace("\"25%\"", "3"), Path::new("i.toml")).unwrap();
        assert_eq!(n.max_fence, Some(super::super::guard::Limit::Nodes(3)));
        let e = Inventory::parse(&text.replace("25%", "250%"), Path::new("i.toml")).unwrap_err();
        assert!(e.starts_with("i.toml: [defaults] max-fence '250%'"), "{e}");
    }

    #[test]
    fn a_large_range_is_checked_for_duplicates_in_linear_time() {
        // fuzz/corpus/targets/slow-inventory-100k-nodes took 30 s (release)
        // when every name was compared with every earlier one.
        let big = "[[node]]\nname = \"n[0-99998]\"\n[[node.fence]]\nendpoint = \"ipmi://h\"\n";
        let started = std::time::Instant::now();
        let inv = Inventory::parse(big, Path::new("i.toml")).unwrap();
        assert_eq!(inv.nodes.len(), 99_999);
        let again =
            format!("{big}[[node]]\nname = \"n99998\"\n[[node.fence]]\nendpoint = \"ipmi://h2\"\n");
        let e = Inventory::parse(&again, Path::new("i.toml")).unwrap_err();
        assert!(e.contains("node 'n99998': defined twice"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        let more =
            format!("{big}[[node]]\nname = \"m[1-2]\"\n[[node.fence]]\nendpoint = \"ipmi://h\"\n");
        let e = Inventory::parse(&more, Path::new("i.toml")).unwrap_err();
        assert!(e.contains("more than 100000 nodes"), "{e}");
    }

    const U1: &str = "4c414230-0000-4001-8000-fe0000000001";
    const U2: &str = "4c414230-0000-4002-8000-fe0000000002";

    #[test]
    fn pins_apply_to_every_method_and_a_method_pin_wins_part_by_part() {
        let text = format!(
            "[[node]]\nname = \"a\"\nuuid = \"{}\"\nserial = \"S1\"\n\
             [[node.fence]]\nendpoint = \"ipmi://h\"\n\
             [[node.fence]]\nendpoint = \"redfish://h\"\nuuid = \"{U2}\"\n\
             [[node.fence]]\ndriver = \"manual\"\n\
             [[node.fence]]\nendpoint = \"snmp://p\"\noutlets = [\"7\"]\n",
            U1.to_uppercase()
        );
        let inv = Inventory::parse(&text, Path::new("i.toml")).unwrap();
        let a = inv.node("a").unwrap();
        assert_eq!(a.uuid.as_deref(), Some(U1.to_uppercase().as_str()));
        assert_eq!(a.methods[0].uuid, a.uuid);
        assert_eq!(a.methods[0].serial.as_deref(), Some("S1"));
        assert_eq!(
            a.methods[1].uuid.as_deref(),
            Some(U2),
            "the method's own uuid"
        );
        assert_eq!(
            a.methods[1].serial.as_deref(),
            Some("S1"),
            "the node's serial"
        );
        assert_eq!(
            a.methods[2].uuid, None,
            "a manual method has nothing to check"
        );
    }

    #[test]
    fn identity_tables_pin_nodes_of_a_range() {
        let text = format!(
            "[[node]]\nname = \"n[1-2]\"\n[[node.fence]]\nendpoint = \"ipmi://h[1-2]\"\n\
             \n[identity.n2]\nuuid = \"{U2}\"\nserial = \"S2\"\n"
        );
        let inv = Inventory::parse(&text, Path::new("i.toml")).unwrap();
        assert_eq!(inv.node("n1").unwrap().methods[0].uuid, None);
        let n2 = inv.node("n2").unwrap();
        assert_eq!(n2.methods[0].uuid.as_deref(), Some(U2));
        assert_eq!(n2.methods[0].serial.as_deref(), Some("S2"));
    }

    #[test]
    fn pins_that_cannot_name_one_machine_are_refused() {
        let fence = "[[node.fence]]\nendpoint = \"ipmi://h\"\n";
        let cases = [
            (format!("[defaults]\nuuid = \"{U1}\"\n[[node]]\nname = \"a\"\n{fence}"), "not as a default"),
            (format!("[defaults.ipmi]\nserial = \"S\"\n[[node]]\nname = \"a\"\n{fence}"), "[defaults.ipmi]"),
            (format!("[[node]]\nname = \"n[1-2]\"\nuuid = \"{U1}\"\n[[node.fence]]\nendpoint = \"ipmi://h[1-2]\"\n"), "names 2 nodes"),
            (format!("[[node]]\nname = \"a\"\nuuid = \"node01\"\n{fence}"), "'node01' is not a UUID"),
            (format!("[[node]]\nname = \"a\"\n{fence}serial = \" \"\n"), "fence method 1: the expected serial number is empty"),
            (format!("[[node]]\nname = \"a\"\nuuid = \"{U1}\"\n{fence}[identity.a]\nuuid = \"{U1}\"\n"), "pinned twice"),
            (format!("[[node]]\nname = \"a\"\n{fence}[identity.b]\nuuid = \"{U1}\"\n"), "no node 'b'"),
            (format!("[[node]]\nname = \"a\"\n{fence}[identity.a]\nuid = \"{U1}\"\n"), "uid"),
            (format!("[[node]]\nname = \"a\"\n[[node.fence]]\ndriver = \"manual\"\nuuid = \"{U1}\"\n"), "manual method"),
            (format!("[[node]]\nname = \"a\"\n[[node.fence]]\nendpoint = \"snmp://p\"\noutlets = [\"7\"]\nuuid = \"{U1}\"\n"), "a PDU outlet has no device"),
            (format!("[[node]]\nname = \"a\"\n{fence}[node.ssh]\nendpoint = \"ssh://u@a/host\"\nuuid = \"{U1}\"\n"), "[node.ssh]"),
        ];
        for (text, want) in cases {
            let e = Inventory::parse(&text, Path::new("i.toml")).unwrap_err();
            assert!(e.starts_with("i.toml") && e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn proof_policy_keys_per_node_and_in_defaults() {
        let text = r#"
[defaults]
max_off_watts = 40
[[node]]
name = "a"
accept_bmc_only = true
  [[node.fence]]
  endpoint = "ipmi://10.0.7.1"
[[node]]
name = "b"
allow_host_only = true
max_off_watts = 12.5
  [[node.fence]]
  endpoint = "ssh://root@10.0.1.2/host"
"#;
        let inv = Inventory::parse(text, Path::new("p.toml")).unwrap();
        let (a, b) = (inv.node("a").unwrap(), inv.node("b").unwrap());
        assert!(a.accept_bmc_only && !a.allow_host_only);
        assert_eq!(a.max_off_watts, Some(40.0));
        assert!(!b.accept_bmc_only && b.allow_host_only);
        assert_eq!(b.max_off_watts, Some(12.5));
        let bad = text.replace("max_off_watts = 12.5", "max_off_watts = -3.0");
        let e = Inventory::parse(&bad, Path::new("p.toml")).unwrap_err();
        assert!(e.contains("p.toml:") && e.contains("max_off_watts"), "{e}");
        let bad = text.replace("accept_bmc_only = true", "accept_bmc_only = \"yes\"");
        assert!(Inventory::parse(&bad, Path::new("p.toml")).is_err());
    }
}
