//! From command-line words to an ordered list of nodes, each with its
//! fencing levels: target URLs, node names, host ranges and `--all`.

use super::hostrange;
use super::inventory::{Inventory, MethodFields, Node};
use crate::method::build::{self, BuildError, MethodOptions};
use crate::method::credential::CredentialRef;
use crate::method::spec::MethodSpec;
use std::collections::HashSet;
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
        "'{0}' is not a target URL ({}://HOST[:PORT]) and no inventory is given \
         (--inventory PATH or FENCEKIT_INVENTORY)",
        crate::method::platforms::DEFAULT.name()
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
    pub node_ssh: Option<Box<MethodSpec>>,
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
        let host = |m: &MethodSpec| matches!(m.party(), Some(crate::platform::Party::Host { .. }));
        match level {
            Some(l) => self.levels.get(l - 1).is_some_and(host),
            None => !self.levels.is_empty() && self.levels.iter().all(host),
        }
    }
}

/// The method options an inventory entry gives.
fn options_of(f: MethodFields) -> Result<MethodOptions, MethodProblem> {
    let credential = if let Some(p) = f.password_file {
        CredentialRef::File(p)
    } else if let Some(v) = f.password_env {
        CredentialRef::Env(v)
    } else if let Some(s) = f.password_script {
        CredentialRef::Script(s)
    } else {
        CredentialRef::None
    };
    let cipher = match f.cipher {
        None => None,
        Some(toml::Value::Integer(n)) => Some(n.to_string()),
        Some(toml::Value::String(s)) => Some(s),
        Some(other) => return Err(MethodProblem::CipherType(format!("{other:?}"))),
    };
    Ok(MethodOptions {
        username: f.username,
        credential,
        ipport: f.ipport,
        cipher,
        privlvl: f.privlvl,
        ipmi_version: f.ipmi_version,
        auth: f.auth,
        kg_hex: None,
        kg_file: f.kg_file,
        accept_unauthenticated_replies: false,
        workarounds: f.workarounds.map(|w| w.join(",")),
        systems_uri: f.systems_uri,
        redfish_uri: f.redfish_uri,
        plug: f.plug,
        ca_cert: f.ca_cert,
        ssl_fingerprint: f.ssl_fingerprint,
        ssl_insecure: f.ssl_insecure == Some(true),
        redfish_session: f.redfish_session == Some(true),
        ssh_known_hosts: f.ssh_known_hosts,
        ssh_host_key: f.ssh_host_key,
        ssh_accept_new: f.ssh_accept_new == Some(true),
        identity_file: f.identity_file,
        ssh_agent: f.ssh_agent == Some(true),
        use_sudo: f.use_sudo == Some(true),
        missing_as_off: f.missing_as_off == Some(true),
        instructions: f.instructions,
        uuid: f.uuid,
        serial: f.serial,
        region: f.region,
        access_key: f.access_key,
        endpoint_url: f.endpoint_url,
        node_name: f.node_name,
        expect_tag: f.expect_tag,
        allow_self_fence: f.allow_self_fence == Some(true),
        kubeconfig: f.kubeconfig,
        vm_uid: f.vm_uid,
        settings: f
            .settings
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    toml::Value::String(s) => s,
                    toml::Value::Array(a) => a
                        .iter()
                        .map(|x| match x {
                            toml::Value::String(s) => s.clone(),
                            o => o.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(","),
                    o => o.to_string(),
                };
                (k, v)
            })
            .collect(),
    })
}

/// Builds the method an inventory entry of node `node` describes (through
/// the one builder, [`crate::method::build`]).
pub fn method_from_fields(node: &str, f: &MethodFields) -> Result<MethodSpec, MethodProblem> {
    method_from_owned(node, f.clone())
}

/// [`method_from_fields`], moving the fields rather than copying them.
fn method_from_owned(node: &str, mut f: MethodFields) -> Result<MethodSpec, MethodProblem> {
    let kind = f.driver_kind();
    // A platform whose methods take more than MethodOptions (a PDU's
    // outlets and [pdu.NAME] tables) builds them from the fields.
    let platform = kind.as_deref().and_then(crate::method::platforms::by_name);
    if let Some(built) = platform.and_then(|p| p.build_fields(&f)) {
        return built.map(MethodSpec::Device).map_err(MethodProblem::Build);
    }
    let (endpoint, ip) = (f.endpoint.take(), f.ip.take());
    build::from_parts(
        node,
        kind.as_deref(),
        endpoint.as_deref(),
        ip.as_deref(),
        &options_of(f)?,
    )
    .map_err(MethodProblem::Build)
}

/// A node's own session method (how to reach the node itself).
fn session_from_fields(mut f: MethodFields) -> Result<MethodSpec, MethodProblem> {
    let endpoint = f.endpoint.take();
    let driver = Some(super::inventory::NODE_SESSION_DRIVER);
    build::from_parts("", driver, endpoint.as_deref(), None, &options_of(f)?)
        .map_err(MethodProblem::Build)
}

/// The plan of inventory node `n`, its fields moved out of the inventory
/// (a node is planned at most once: the inventory is consumed as its plans
/// are built, so that both never take the memory of the whole fleet at once).
fn take_plan(n: &mut Node, path: &std::path::Path) -> Result<NodePlan, PlanError> {
    let name = n.name.as_str();
    let at = |place: String, problem| PlanError::Method {
        path: path.to_path_buf(),
        line: n.line,
        node: name.to_string(),
        place,
        problem: Box::new(problem),
    };
    // Exactly as many as the node has (collecting a Result reserves four).
    let mut levels = Vec::with_capacity(n.methods.len());
    for (i, m) in std::mem::take(&mut n.methods).into_iter().enumerate() {
        levels.push(
            method_from_owned(name, m.into_fields())
                .map_err(|e| at(format!("fence method {}", i + 1), e))?,
        );
    }
    let node_ssh = n
        .node_session
        .take()
        .map(|m| {
            session_from_fields(m.into_fields())
                .map(Box::new)
                .map_err(|e| at(super::inventory::NODE_SESSION.into(), e))
        })
        .transpose()?;
    Ok(NodePlan {
        name: n.name.clone(),
        address: n.address.take(),
        probe_ports: std::mem::take(&mut n.probe_ports),
        levels,
        node_ssh,
        checks: std::mem::take(&mut n.checks),
        accept_bmc_only: n.accept_bmc_only,
        allow_host_only: n.allow_host_only,
        max_off_watts: n.max_off_watts,
        on_confirmed_off: n.on_confirmed_off.take(),
    })
}

/// Nodes one helper thread plans at a time.
const PLAN_CHUNK: usize = 128;

/// Resolves command-line words into node plans, in the order given
/// (`--all`: inventory order), without duplicates. The inventory is
/// consumed: each node's fields move into its plan.
pub fn select(
    words: &[String],
    all: bool,
    mut inventory: Option<Inventory>,
    url_method: &dyn Fn(&str) -> Result<MethodSpec, BuildError>,
) -> Result<Vec<NodePlan>, PlanError> {
    let mut out: Vec<NodePlan> = Vec::new();
    // Names already selected: a set, not a scan of `out` (100,000 nodes).
    // A name in it is never looked up in the inventory again, whose node
    // has given its fields to the plan.
    let mut seen: HashSet<String> = HashSet::new();
    let push = |p: NodePlan, out: &mut Vec<NodePlan>, seen: &mut HashSet<String>| {
        if seen.insert(p.name.clone()) {
            out.push(p);
        }
    };
    if all {
        let inv = inventory.as_mut().ok_or(PlanError::AllWithoutInventory)?;
        // Every node, once (an inventory's names are unique): they are not
        // put in `seen`, every inventory name counts as seen below.
        out.reserve(inv.nodes.len());
        let path = &inv.path;
        // Planned where the nodes were made (see Inventory::made_on_helpers).
        let parallel = inv.made_on_helpers();
        super::inorder::in_order(
            inv.nodes.chunks_mut(PLAN_CHUNK),
            parallel,
            || (),
            |_, chunk| {
                chunk
                    .iter_mut()
                    .map(|n| take_plan(n, path))
                    .collect::<Vec<_>>()
            },
            |plans| {
                for p in plans {
                    out.push(p?);
                }
                Ok::<_, PlanError>(true)
            },
        )?;
    }
    for w in words {
        if w.contains("://") {
            let level = url_method(w)?;
            if all && inventory.as_ref().is_some_and(|i| i.node(w).is_some()) {
                continue;
            }
            push(
                NodePlan {
                    name: w.clone(),
                    address: None,
                    probe_ports: vec![],
                    levels: vec![level],
                    node_ssh: None,
                    checks: vec![],
                    ..NodePlan::default()
                },
                &mut out,
                &mut seen,
            );
            continue;
        }
        let inv = inventory
            .as_mut()
            .ok_or_else(|| PlanError::NoInventory(w.clone()))?;
        let names = if hostrange::is_range(w) {
            hostrange::expand(w)?
        } else {
            vec![w.clone()]
        };
        for name in names {
            // A node named twice is planned once (its plan would be the same).
            if seen.contains(&name) || (all && inv.node(&name).is_some()) {
                continue;
            }
            let path = inv.path.clone();
            let n = inv.node_mut(&name).ok_or_else(|| PlanError::UnknownNode {
                name: name.clone(),
                inventory: path.clone(),
            })?;
            push(take_plan(n, &path)?, &mut out, &mut seen);
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
    fn a_large_inventory_is_planned_in_order_and_says_its_first_error() {
        let n = 3049;
        let inventory = |bad: &[usize]| {
            let mut text = String::new();
            for i in 0..n {
                let cipher = if bad.contains(&i) {
                    "  cipher = true\n"
                } else {
                    ""
                };
                text += &format!(
                    "[[node]]\nname = \"n{i}\"\n  [[node.fence]]\n  endpoint = \"ipmi://10.{}.{}.1\"\n{cipher}",
                    i / 256,
                    i % 256
                );
            }
            Inventory::parse(&text, Path::new("big.toml")).unwrap()
        };
        let plans = select(&[], true, Some(inventory(&[])), &url).unwrap();
        assert_eq!(plans.len(), n);
        for (i, p) in plans.iter().enumerate() {
            assert_eq!(p.name, format!("n{i}"));
            assert_eq!(
                p.levels[0].endpoint(),
                format!("ipmi://10.{}.{}.1:623", i / 256, i % 256)
            );
        }
        // Errors in the last share and the first: the first node's is said.
        let e = select(&[], true, Some(inventory(&[n - 2, 5])), &url)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("node 'n5'") && e.contains("cipher must be"),
            "{e}"
        );
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
        assert!(
            matches!(&e, PlanError::Url(b) if b.downcast_ref::<crate::ipmi::build::IpmiBuildError>().is_some()),
            "{e}"
        );
        assert_eq!(e.to_string(), "'ipmi://h:0': '0' is not a port number");
        let inv = Inventory::parse(
            "[[node]]\nname = \"n1\"\n[[node.fence]]\nendpoint = \"ipmi://bmc1\"\n\
             cipher = 1.5\n",
            Path::new("inv.toml"),
        )
        .unwrap();
        assert_eq!(
            text(select(&words(&["n2"]), false, Some(inv.clone()), &url)),
            "unknown node 'n2' (not in the inventory inv.toml)"
        );
        assert_eq!(
            text(select(&words(&["n1"]), false, Some(inv.clone()), &url)),
            "inv.toml:2: node 'n1': fence method 1: cipher must be auto, 3 or 17, not Float(1.5)"
        );
    }

    #[test]
    fn names_are_selected_once_in_the_order_given() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let inv = Inventory::parse(
            "[[node]]\nname = \"n[1-5]\"\n[[node.fence]]\nendpoint = \"ipmi://b[1-5]\"\n",
            Path::new("inv.toml"),
        )
        .unwrap();
        let names = |p: Vec<NodePlan>| p.into_iter().map(|p| p.name).collect::<Vec<_>>();
        let picked = select(
            &words(&["n[3-4]", "n1", "n4", "n[1-5]"]),
            false,
            Some(inv.clone()),
            &url,
        );
        assert_eq!(names(picked.unwrap()), ["n3", "n4", "n1", "n2", "n5"]);
        let all = select(
            &words(&["n2", "ipmi://x", "ipmi://x"]),
            true,
            Some(inv.clone()),
            &url,
        );
        assert_eq!(
            names(all.unwrap()),
            ["n1", "n2", "n3", "n4", "n5", "ipmi://x"]
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
        let plans = select(&words(&["n1"]), false, Some(inv.clone()), &url).unwrap();
        let Some(ipmi) = plans[0].levels[0].device().and_then(|m| {
            m.as_any()
                .downcast_ref::<crate::ipmi::platform::IpmiMethod>()
        }) else {
            panic!("an IPMI level")
        };
        let config = &ipmi.config;
        assert_eq!(config.workarounds.names(), "noauthcodecheck,intel20");
        let text = |r: Result<Vec<NodePlan>, PlanError>| r.unwrap_err().to_string();
        let e = text(select(&words(&["n2"]), false, Some(inv.clone()), &url));
        assert!(
            e.contains("node 'n2': fence method 1: unknown IPMI workaround 'nochecksum'"),
            "{e}"
        );
        assert_eq!(
            text(select(&words(&["n3"]), false, Some(inv.clone()), &url)),
            "inv.toml:12: node 'n3': fence method 1: workarounds apply to IPMI methods only"
        );
    }
}
