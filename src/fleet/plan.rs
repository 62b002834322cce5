//! From command-line words to an ordered list of nodes, each with its
//! fencing levels: target URLs, node names, host ranges and `--all`.

use super::hostrange;
use super::inventory::{Inventory, MethodFields};
use crate::method::build::{self, BuildError, MethodOptions, PduDefaults, PduOptions, SnmpOptions};
use crate::method::credential::CredentialRef;
use crate::method::spec::MethodSpec;
use std::path::PathBuf;

/// Why the words of a command line do not select nodes. The texts are what
/// users read (the CLI prints them after `fencekit: `).
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A name the inventory does not have.
    #[error("unknown node '{name}' (not in the inventory {})", inventory.display())]
    UnknownNode {
        /// The name.
        name: String,
        /// The inventory file.
        inventory: PathBuf,
    },
    /// An inventory method that cannot be built.
    #[error("{}:{line}: node '{node}': {place}: {problem}", path.display())]
    Method {
        /// The inventory file.
        path: PathBuf,
        /// The node's line in it.
        line: usize,
        /// The node.
        node: String,
        /// `fence method N` (N from 1) or `[node.ssh]`.
        place: String,
        /// What is wrong.
        problem: Box<MethodProblem>,
    },
    /// `--all` without an inventory.
    #[error("--all needs an inventory (--inventory PATH or FENCEKIT_INVENTORY)")]
    AllWithoutInventory,
    /// A word that is neither a URL nor, without an inventory, a node.
    #[error(
        "'{0}' is not a target URL (ipmi://HOST[:PORT]) and no inventory is given \
         (--inventory PATH or FENCEKIT_INVENTORY)"
    )]
    NoInventory(String),
    /// A host range that does not expand.
    #[error(transparent)]
    Range(#[from] hostrange::RangeError),
    /// A target URL that does not make a method.
    #[error(transparent)]
    Url(#[from] BuildError),
}

/// What is wrong with one method of an inventory node.
#[derive(Debug, thiserror::Error)]
pub enum MethodProblem {
    /// A `cipher` that is neither a number nor a string (its TOML value).
    #[error("cipher must be auto, 3 or 17, not {0}")]
    CipherType(String),
    /// The builder's refusal.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// One node to act on, with its methods in level order.
#[derive(Clone, Debug, Default)]
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
    /// `verify` may accept BMC-only proof for this node.
    pub accept_bmc_only: bool,
    /// The SSH `host` profile may be this node's only fencing level.
    pub allow_host_only: bool,
    /// The most watts the node may draw while reported off (`verify`).
    pub max_off_watts: Option<f64>,
    /// The inventory's confirmed-off hook for this node (`on_confirmed_off`).
    pub on_confirmed_off: Option<String>,
}

impl NodePlan {
    /// True when every level (of those `level` selects, 1-based) is the
    /// SSH `host` profile: the node would only be asked to power itself
    /// off, which nothing can observe.
    pub fn host_only(&self, level: Option<usize>) -> bool {
        let host = |m: &MethodSpec| {
            matches!(m, MethodSpec::Ssh { config, .. }
                if config.profile == crate::ssh::config::Profile::Host)
        };
        match level {
            Some(l) => self.levels.get(l - 1).is_some_and(host),
            None => !self.levels.is_empty() && self.levels.iter().all(host),
        }
    }
}

/// The method options an inventory entry gives.
fn options_of(f: &MethodFields) -> Result<MethodOptions, MethodProblem> {
    let credential = if let Some(p) = &f.password_file {
        CredentialRef::File(p.clone())
    } else if let Some(v) = &f.password_env {
        CredentialRef::Env(v.clone())
    } else if let Some(s) = &f.password_script {
        CredentialRef::Script(s.clone())
    } else {
        CredentialRef::None
    };
    let cipher = match &f.cipher {
        None => None,
        Some(toml::Value::Integer(n)) => Some(n.to_string()),
        Some(toml::Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(MethodProblem::CipherType(format!("{other:?}"))),
    };
    Ok(MethodOptions {
        username: f.username.clone(),
        credential,
        ipport: f.ipport,
        cipher,
        privlvl: f.privlvl.clone(),
        ipmi_version: f.ipmi_version.clone(),
        auth: f.auth.clone(),
        kg_hex: None,
        kg_file: f.kg_file.clone(),
        accept_unauthenticated_replies: false,
        workarounds: f.workarounds.as_ref().map(|w| w.join(",")),
        systems_uri: f.systems_uri.clone(),
        redfish_uri: f.redfish_uri.clone(),
        plug: f.plug.clone(),
        ca_cert: f.ca_cert.clone(),
        ssl_fingerprint: f.ssl_fingerprint.clone(),
        ssl_insecure: f.ssl_insecure == Some(true),
        redfish_session: f.redfish_session == Some(true),
        ssh_known_hosts: f.ssh_known_hosts.clone(),
        ssh_host_key: f.ssh_host_key.clone(),
        ssh_accept_new: f.ssh_accept_new == Some(true),
        identity_file: f.identity_file.clone(),
        ssh_agent: f.ssh_agent == Some(true),
        use_sudo: f.use_sudo == Some(true),
        missing_as_off: f.missing_as_off == Some(true),
        instructions: f.instructions.clone(),
        uuid: f.uuid.clone(),
        serial: f.serial.clone(),
        region: f.region.clone(),
        access_key: f.access_key.clone(),
        endpoint_url: f.endpoint_url.clone(),
        node_name: f.node_name.clone(),
        expect_tag: f.expect_tag.clone(),
        allow_self_fence: f.allow_self_fence == Some(true),
    })
}

/// Builds the method an inventory entry of node `node` describes (through
/// the one builder, [`crate::method::build`]).
pub fn method_from_fields(node: &str, f: &MethodFields) -> Result<MethodSpec, MethodProblem> {
    // SNMP PDUs: outlets and [pdu.NAME] tables, not MethodOptions.
    if f.driver_kind().as_deref() == Some("snmp") {
        return snmp_from_fields(f);
    }
    build::from_parts(
        node,
        f.driver_kind().as_deref(),
        f.endpoint.as_deref(),
        f.ip.as_deref(),
        &options_of(f)?,
    )
    .map_err(MethodProblem::Build)
}

fn ssh_from_fields(f: &MethodFields) -> Result<MethodSpec, MethodProblem> {
    build::from_parts(
        "",
        Some("ssh"),
        f.endpoint.as_deref(),
        None,
        &options_of(f)?,
    )
    .map_err(MethodProblem::Build)
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

/// One PDU's options from its fields (a method's own endpoint or a
/// `[pdu.NAME]` table).
fn pdu_options(f: &MethodFields) -> PduOptions {
    PduOptions {
        endpoint: f.endpoint.clone(),
        ip: None,
        ipport: None,
        profile: f.profile.clone(),
        version: f.snmp_version.clone(),
        security_level: f.security_level.clone(),
        auth_protocol: f.auth_protocol.clone(),
        priv_protocol: f.priv_protocol.clone(),
        username: f.username.clone(),
        community: reference(&f.community_file, &f.community_env, &f.community_script),
        auth: reference(&f.password_file, &f.password_env, &f.password_script),
        privacy: reference(
            &f.priv_password_file,
            &f.priv_password_env,
            &f.priv_password_script,
        ),
        timing: None,
    }
}

/// An SNMP method: the node's outlets on its own endpoint and on the
/// `[pdu.NAME]` PDUs they name, through the one builder
/// ([`build::snmp`]) with fencekit's defaults.
fn snmp_from_fields(f: &MethodFields) -> Result<MethodSpec, MethodProblem> {
    build::snmp(&SnmpOptions {
        own: f.endpoint.is_some().then(|| pdu_options(f)),
        named: f
            .pdus
            .iter()
            .map(|(name, table)| (name.clone(), pdu_options(table)))
            .collect(),
        outlets: f.outlets.clone().unwrap_or_default(),
        defaults: PduDefaults::NATIVE,
    })
    .map_err(MethodProblem::Build)
}

/// Resolves command-line words into node plans, in the order given
/// (`--all`: inventory order), without duplicates.
pub fn select(
    words: &[String],
    all: bool,
    inventory: Option<&Inventory>,
    url_method: &dyn Fn(&str) -> Result<MethodSpec, BuildError>,
) -> Result<Vec<NodePlan>, PlanError> {
    let mut out: Vec<NodePlan> = Vec::new();
    let push = |p: NodePlan, out: &mut Vec<NodePlan>| {
        if !out.iter().any(|x| x.name == p.name) {
            out.push(p);
        }
    };
    let from_inventory = |name: &str, inv: &Inventory| -> Result<NodePlan, PlanError> {
        let n = inv.node(name).ok_or_else(|| PlanError::UnknownNode {
            name: name.to_string(),
            inventory: inv.path.clone(),
        })?;
        let at = |place: String, problem| PlanError::Method {
            path: inv.path.clone(),
            line: n.line,
            node: name.to_string(),
            place,
            problem: Box::new(problem),
        };
        let levels = n
            .methods
            .iter()
            .enumerate()
            .map(|(i, m)| {
                method_from_fields(name, m).map_err(|e| at(format!("fence method {}", i + 1), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let node_ssh = n
            .ssh
            .as_ref()
            .map(|m| ssh_from_fields(m).map_err(|e| at("[node.ssh]".into(), e)))
            .transpose()?;
        Ok(NodePlan {
            name: n.name.clone(),
            address: n.address.clone(),
            probe_ports: n.probe_ports.clone(),
            levels,
            node_ssh,
            checks: n.checks.clone(),
            accept_bmc_only: n.accept_bmc_only,
            allow_host_only: n.allow_host_only,
            max_off_watts: n.max_off_watts,
            on_confirmed_off: n.on_confirmed_off.clone(),
        })
    };
    if all {
        let inv = inventory.ok_or(PlanError::AllWithoutInventory)?;
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
                    ..NodePlan::default()
                },
                &mut out,
            );
            continue;
        }
        let inv = inventory.ok_or_else(|| PlanError::NoInventory(w.clone()))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn url(u: &str) -> Result<MethodSpec, BuildError> {
        build::from_url(u, &MethodOptions::default())
    }

    #[test]
    fn selection_messages_read_as_they_always_have() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let text = |r: Result<Vec<NodePlan>, PlanError>| r.unwrap_err().to_string();
        assert_eq!(
            text(select(&[], true, None, &url)),
            "--all needs an inventory (--inventory PATH or FENCEKIT_INVENTORY)"
        );
        assert_eq!(
            text(select(&words(&["n1"]), false, None, &url)),
            "'n1' is not a target URL (ipmi://HOST[:PORT]) and no inventory is given \
             (--inventory PATH or FENCEKIT_INVENTORY)"
        );
        let e = select(&words(&["ipmi://h:0"]), false, None, &url).unwrap_err();
        assert!(matches!(e, PlanError::Url(BuildError::Ipmi(_))), "{e}");
        assert_eq!(e.to_string(), "'ipmi://h:0': '0' is not a port number");
        let inv = Inventory::parse(
            "[[node]]\nname = \"n1\"\n[[node.fence]]\nendpoint = \"ipmi://bmc1\"\n\
             cipher = 1.5\n",
            Path::new("inv.toml"),
        )
        .unwrap();
        assert_eq!(
            text(select(&words(&["n2"]), false, Some(&inv), &url)),
            "unknown node 'n2' (not in the inventory inv.toml)"
        );
        assert_eq!(
            text(select(&words(&["n1"]), false, Some(&inv), &url)),
            "inv.toml:2: node 'n1': fence method 1: cipher must be auto, 3 or 17, not Float(1.5)"
        );
    }

    #[test]
    fn inventory_workarounds_reach_the_ipmi_config() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let inv = Inventory::parse(
            "[[node]]\nname = \"n1\"\n[[node.fence]]\nendpoint = \"ipmi://bmc1\"\n\
             workarounds = [\"intel20\", \"noauthcodecheck\"]\n\
             [[node]]\nname = \"n2\"\n[[node.fence]]\nendpoint = \"ipmi://bmc2\"\n\
             workarounds = [\"nochecksum\"]\n\
             [[node]]\nname = \"n3\"\n[[node.fence]]\n\
             endpoint = \"redfish://u@bmc3/redfish/v1/Systems/1\"\nworkarounds = [\"intel20\"]\n",
            Path::new("inv.toml"),
        )
        .unwrap();
        let plans = select(&words(&["n1"]), false, Some(&inv), &url).unwrap();
        let MethodSpec::Ipmi { config, .. } = &plans[0].levels[0] else {
            panic!("an IPMI level")
        };
        assert_eq!(config.workarounds.names(), "noauthcodecheck,intel20");
        let text = |r: Result<Vec<NodePlan>, PlanError>| r.unwrap_err().to_string();
        let e = text(select(&words(&["n2"]), false, Some(&inv), &url));
        assert!(
            e.contains("node 'n2': fence method 1: unknown IPMI workaround 'nochecksum'"),
            "{e}"
        );
        assert_eq!(
            text(select(&words(&["n3"]), false, Some(&inv), &url)),
            "inv.toml:12: node 'n3': fence method 1: workarounds apply to IPMI methods only"
        );
    }
}
