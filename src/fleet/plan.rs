//! From command-line words to an ordered list of nodes, each with its
//! fencing levels: target URLs, node names, host ranges and `--all`.

use super::hostrange;
use super::inventory::{Inventory, MethodFields};
use crate::engine::identity::ExpectedIdentity;
use crate::method::credential::CredentialRef;
use crate::method::spec::{MethodSpec, SnmpCredentials};
use crate::snmp::{self, config::PduEndpoint};

use crate::ipmi::config::{self, AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use crate::secret::Secret;

/// One node to act on, with its methods in level order.
#[derive(Clone, Debug)]
pub struct NodePlan {
    /// Node name (or the target URL when no inventory names it).
    pub name: String,
    /// The node's own address, for probes.
    pub address: Option<String>,
    /// Ports its host answers on.
    pub probe_ports: Vec<u16>,
    /// Fencing methods, level 1 first.
    pub levels: Vec<MethodSpec>,
    /// How to reach the node itself (SSH), for rejoin checks.
    pub node_ssh: Option<MethodSpec>,
    /// Rejoin configuration checks.
    pub checks: Vec<super::inventory::CheckDef>,
    /// The inventory's confirmed-off hook for this node (`on_confirmed_off`).
    pub on_confirmed_off: Option<String>,
}

fn cipher_of(v: &Option<toml::Value>) -> Result<CipherChoice, String> {
    match v {
        None => Ok(CipherChoice::Auto),
        Some(toml::Value::Integer(n)) => n.to_string().parse(),
        Some(toml::Value::String(s)) => s.parse(),
        Some(other) => Err(format!("cipher must be auto, 3 or 17, not {other:?}")),
    }
}

fn credential_of(f: &MethodFields) -> CredentialRef {
    if let Some(p) = &f.password_file {
        CredentialRef::File(p.clone())
    } else if let Some(v) = &f.password_env {
        CredentialRef::Env(v.clone())
    } else if let Some(s) = &f.password_script {
        CredentialRef::Script(s.clone())
    } else {
        CredentialRef::None
    }
}

fn redfish_from_fields(f: &MethodFields) -> Result<MethodSpec, String> {
    let url = match (&f.endpoint, &f.ip) {
        (Some(e), _) => e.clone(),
        (None, Some(ip)) => {
            let host = if ip.contains(':') {
                format!("[{ip}]")
            } else {
                ip.clone()
            };
            match f.ipport {
                Some(p) => format!("redfish://{host}:{p}"),
                None => format!("redfish://{host}"),
            }
        }
        (None, None) => return Err("no endpoint or ip".into()),
    };
    let t = crate::redfish::config::parse_target(&url)?;
    let mut c = t.config(f.username.as_deref().unwrap_or(""), Secret::default());
    if let Some(u) = &f.systems_uri {
        c.systems_uri = Some(u.clone());
    }
    if let Some(u) = &f.redfish_uri {
        c.redfish_uri = u.clone();
    }
    c.plug = f.plug.clone();
    c.tls = crate::redfish::config::tls_trust(
        f.ssl_insecure == Some(true),
        f.ca_cert.as_deref(),
        f.ssl_fingerprint.as_deref(),
    )?;
    c.session_auth = f.redfish_session == Some(true);
    c.validate()?;
    Ok(MethodSpec::Redfish {
        config: c,
        credential: credential_of(f),
        expect: Default::default(),
    })
}

fn ssh_from_fields(f: &MethodFields) -> Result<MethodSpec, String> {
    use crate::ssh::config::{Profile, SshAuth, SshConfig};
    let url = f.endpoint.as_deref().ok_or("no endpoint")?;
    let t = crate::ssh::config::parse_target(url)?;
    let username = t
        .username
        .or_else(|| f.username.clone())
        .ok_or("an ssh method needs a user name (ssh://USER@HOST/… or username)")?;
    let mut profile = t.profile;
    if let (Profile::Virsh { plug }, Some(p)) = (&mut profile, &f.plug) {
        if plug.is_none() {
            *plug = Some(p.clone());
        }
    }
    let mut c = SshConfig::new(&t.host, &username, SshAuth::Agent, profile);
    c.port = t.port;
    c.host_keys = crate::ssh::hostkey::host_key_policy(
        f.ssh_known_hosts.as_deref(),
        f.ssh_host_key.as_deref(),
        f.ssh_accept_new == Some(true),
    )?;
    c.use_sudo = f.use_sudo == Some(true);
    c.missing_as_off = f.missing_as_off == Some(true);
    Ok(MethodSpec::Ssh {
        config: c,
        identity: f.identity_file.clone(),
        agent: f.ssh_agent == Some(true),
        credential: credential_of(f),
        expect: Default::default(),
    })
}

fn reference(
    file: &Option<std::path::PathBuf>,
    env: &Option<String>,
    script: &Option<String>,
) -> CredentialRef {
    if let Some(p) = file {
        CredentialRef::File(p.clone())
    } else if let Some(v) = env {
        CredentialRef::Env(v.clone())
    } else if let Some(s) = script {
        CredentialRef::Script(s.clone())
    } else {
        CredentialRef::None
    }
}

/// One PDU from its fields (a method's own endpoint or a `[pdu.NAME]` table).
fn pdu_from_fields(
    label: Option<&str>,
    f: &MethodFields,
) -> Result<(PduEndpoint, SnmpCredentials), String> {
    let endpoint = f
        .endpoint
        .as_deref()
        .ok_or("a PDU needs endpoint = \"snmp://HOST[:PORT]\"")?;
    let (host, port) = snmp::config::parse_endpoint(endpoint)?;
    let profile = snmp::profile::Profile::load(f.profile.as_deref().unwrap_or("apc"))?;
    let version_text = f.snmp_version.as_deref().unwrap_or("2c");
    let version = snmp::config::parse_version(version_text)
        .ok_or_else(|| format!("snmp_version '{version_text}' (expected 1, 2c or 3)"))?;
    let security = match version {
        snmp::message::Version::V3 => {
            let level = match f.security_level.as_deref() {
                Some(l) => snmp::session::SecLevel::parse(l).ok_or_else(|| {
                    format!("security_level '{l}' (expected noAuthNoPriv, authNoPriv or authPriv)")
                })?,
                None => snmp::session::SecLevel::AuthPriv,
            };
            let auth = match f.auth_protocol.as_deref() {
                Some(a) => snmp::usm::AuthProtocol::parse(a)
                    .ok_or_else(|| format!("auth_protocol '{a}' (expected MD5, SHA, SHA-224, SHA-256, SHA-384 or SHA-512)"))?,
                None => snmp::usm::AuthProtocol::Sha256,
            };
            let privacy = match f.priv_protocol.as_deref() {
                Some(p) => snmp::usm::PrivProtocol::parse(p)
                    .ok_or_else(|| format!("priv_protocol '{p}' (expected AES or DES)"))?,
                None => snmp::usm::PrivProtocol::Aes128,
            };
            let name = f.username.clone().unwrap_or_default();
            if name.is_empty() {
                return Err("SNMPv3 needs username".into());
            }
            use snmp::session::SecLevel;
            snmp::session::Security::Usm(snmp::session::UsmUser {
                name,
                level,
                auth: (level != SecLevel::NoAuthNoPriv).then(|| (auth, Secret::default())),
                privacy: (level == SecLevel::AuthPriv).then(|| (privacy, Secret::default())),
            })
        }
        v => snmp::session::Security::Community {
            version: v,
            community: Secret::default(),
        },
    };
    let creds = SnmpCredentials {
        community: reference(&f.community_file, &f.community_env, &f.community_script),
        auth: credential_of(f),
        privacy: reference(
            &f.priv_password_file,
            &f.priv_password_env,
            &f.priv_password_script,
        ),
    };
    Ok((
        PduEndpoint {
            label: label.map(str::to_string).unwrap_or_else(|| host.clone()),
            host,
            port,
            security,
            profile: std::sync::Arc::new(profile),
            timing: snmp::client::Timing::default(),
        },
        creds,
    ))
}

/// An SNMP method: the node's outlets on its own endpoint and on the
/// `[pdu.NAME]` PDUs they name.
fn snmp_from_fields(f: &MethodFields) -> Result<MethodSpec, String> {
    let mut pdus = Vec::new();
    let mut credentials = Vec::new();
    let mut outlets = Vec::new();
    // The method's own endpoint, made on first use.
    let mut own: Option<usize> = None;
    for o in f.outlets.as_deref().unwrap_or_default() {
        let named = o.split_once(':').and_then(|(p, rest)| {
            f.pdus
                .iter()
                .find(|(n, _)| n == p)
                .map(|(n, t)| (n, t, rest))
        });
        let (idx, plug) = match named {
            Some((name, table, rest)) => {
                let idx = match pdus.iter().position(|p: &PduEndpoint| &p.label == name) {
                    Some(i) => i,
                    None => {
                        let (p, c) = pdu_from_fields(Some(name), table)
                            .map_err(|e| format!("[pdu.{name}]: {e}"))?;
                        pdus.push(p);
                        credentials.push(c);
                        pdus.len() - 1
                    }
                };
                (idx, rest.to_string())
            }
            None => {
                let idx = match own {
                    Some(i) => i,
                    None => {
                        let (p, c) = pdu_from_fields(None, f)?;
                        pdus.push(p);
                        credentials.push(c);
                        own = Some(pdus.len() - 1);
                        pdus.len() - 1
                    }
                };
                (idx, o.clone())
            }
        };
        outlets.push(snmp::config::OutletSpec {
            pdu: idx,
            plug: snmp::config::Plug::parse(&plug),
        });
    }
    let config = snmp::config::SnmpConfig { pdus, outlets };
    config.validate_structure()?;
    if config.outlets.is_empty() {
        return Err("an snmp method needs outlets".into());
    }
    Ok(MethodSpec::Snmp {
        config,
        credentials,
    })
}

/// Builds the method an inventory entry of node `node` describes, pinned
/// to the identity it names (`uuid`, `serial`).
pub fn method_from_fields(node: &str, f: &MethodFields) -> Result<MethodSpec, String> {
    let mut m = unpinned_method(node, f)?;
    m.set_expected(ExpectedIdentity::new(
        f.uuid.as_deref(),
        f.serial.as_deref(),
    )?)?;
    Ok(m)
}

fn unpinned_method(node: &str, f: &MethodFields) -> Result<MethodSpec, String> {
    match f.driver_kind().as_deref() {
        Some("snmp") => return snmp_from_fields(f),
        Some("redfish") => return redfish_from_fields(f),
        Some("ssh") => return ssh_from_fields(f),
        Some("manual") => {
            return Ok(MethodSpec::Manual {
                node: node.to_string(),
                instructions: f
                    .instructions
                    .clone()
                    .unwrap_or_else(|| "(the inventory gives no instructions)".into()),
            })
        }
        _ => {}
    }
    let (host, url_user, port) = match (&f.endpoint, &f.ip) {
        (Some(e), _) => {
            let t = config::parse_target(e)?;
            (t.host, t.username, t.port)
        }
        (None, Some(ip)) => (ip.clone(), None, None),
        (None, None) => return Err("no endpoint or ip".into()),
    };
    let credential = credential_of(f);
    let username = url_user.or_else(|| f.username.clone()).unwrap_or_default();
    let mut c = IpmiConfig::new(
        host,
        port.or(f.ipport).unwrap_or(623),
        username,
        Secret::default(),
    );
    c.cipher = cipher_of(&f.cipher)?;
    if let Some(p) = &f.privlvl {
        c.privilege = p.parse::<Privilege>()?;
    }
    let auth = f.auth.as_deref().map(str::parse::<AuthType>).transpose()?;
    c.version = match (f.ipmi_version.as_deref(), auth) {
        (Some("1.5"), a) | (None, a @ Some(_)) => Version::Lan15(a),
        (Some("2.0") | None, None) => Version::Lanplus,
        (Some("2.0"), Some(_)) => return Err("auth applies to ipmi_version 1.5 only".into()),
        (Some(v), _) => return Err(format!("ipmi_version '{v}' (expected 2.0 or 1.5)")),
    };
    if let Some(path) = &f.kg_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read kg_file {}: {e}", path.display()))?;
        c.kg = Some(config::parse_hex_kg(text.trim())?);
    }
    // Lengths are checked when the password is known (at build time).
    Ok(MethodSpec::Ipmi {
        config: c,
        credential,
        expect: Default::default(),
    })
}

/// Resolves command-line words into node plans, in the order given
/// (`--all`: inventory order), without duplicates.
pub fn select(
    words: &[String],
    all: bool,
    inventory: Option<&Inventory>,
    url_method: &dyn Fn(&str) -> Result<MethodSpec, String>,
) -> Result<Vec<NodePlan>, String> {
    let mut out: Vec<NodePlan> = Vec::new();
    let push = |p: NodePlan, out: &mut Vec<NodePlan>| {
        if !out.iter().any(|x| x.name == p.name) {
            out.push(p);
        }
    };
    let from_inventory = |name: &str, inv: &Inventory| -> Result<NodePlan, String> {
        let n = inv.node(name).ok_or_else(|| {
            format!(
                "unknown node '{name}' (not in the inventory {})",
                inv.path.display()
            )
        })?;
        let levels = n
            .methods
            .iter()
            .enumerate()
            .map(|(i, m)| {
                method_from_fields(name, m).map_err(|e| {
                    format!(
                        "{}:{}: node '{name}': fence method {}: {e}",
                        inv.path.display(),
                        n.line,
                        i + 1
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let node_ssh = n
            .ssh
            .as_ref()
            .map(|m| {
                ssh_from_fields(m).map_err(|e| {
                    format!(
                        "{}:{}: node '{name}': [node.ssh]: {e}",
                        inv.path.display(),
                        n.line
                    )
                })
            })
            .transpose()?;
        Ok(NodePlan {
            name: n.name.clone(),
            address: n.address.clone(),
            probe_ports: n.probe_ports.clone(),
            levels,
            node_ssh,
            checks: n.checks.clone(),
            on_confirmed_off: n.on_confirmed_off.clone(),
        })
    };
    if all {
        let inv =
            inventory.ok_or("--all needs an inventory (--inventory PATH or FENCEKIT_INVENTORY)")?;
        for n in &inv.nodes {
            push(from_inventory(&n.name, inv)?, &mut out);
        }
    }
    for w in words {
        if w.contains("://") {
            push(
                NodePlan {
                    name: w.clone(),
                    address: None,
                    probe_ports: vec![],
                    levels: vec![url_method(w)?],
                    node_ssh: None,
                    checks: vec![],
                    on_confirmed_off: None,
                },
                &mut out,
            );
            continue;
        }
        let inv = inventory.ok_or_else(|| {
            format!(
                "'{w}' is not a target URL (ipmi://HOST[:PORT]) and no inventory is given \
                 (--inventory PATH or FENCEKIT_INVENTORY)"
            )
        })?;
        let names = if hostrange::is_range(w) {
            hostrange::expand(w)?
        } else {
            vec![w.clone()]
        };
        for name in names {
            push(from_inventory(&name, inv)?, &mut out);
        }
    }
    Ok(out)
}
