//! Pacemaker's configuration as the doctor reads it: the CIB's stonith
//! resources, fencing topology, cluster properties and nodes, and SBD's
//! settings on a node. No findings here (those are `super::pacemaker`'s).

use super::parse_time;
use super::regex::Pattern;
use std::collections::BTreeMap;
use std::time::Duration;

/// Pacemaker's default `stonith-timeout`.
pub const DEFAULT_STONITH_TIMEOUT: Duration = Duration::from_secs(60);
/// Pacemaker's default operation timeout (a monitor without its own).
pub const DEFAULT_OP_TIMEOUT: Duration = Duration::from_secs(20);
/// SBD's default `SBD_WATCHDOG_TIMEOUT`.
pub const DEFAULT_SBD_WATCHDOG_TIMEOUT: Duration = Duration::from_secs(5);

/// A `<primitive class="stonith">`.
#[derive(Clone, Debug, Default)]
pub struct Device {
    /// Its id.
    pub id: String,
    /// The agent (`type`).
    pub agent: String,
    /// `instance_attributes`, in order.
    pub params: Vec<(String, String)>,
    /// `meta_attributes`.
    pub meta: BTreeMap<String, String>,
    /// The recurring monitor: (interval, timeout) as written.
    pub monitor: Option<(Option<String>, Option<String>)>,
}

impl Device {
    /// An instance attribute.
    pub fn param(&self, k: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }

    /// A time-valued instance attribute (`None`: not set or unreadable).
    pub(super) fn time(&self, k: &str) -> Option<Duration> {
        self.param(k).and_then(parse_time)
    }

    /// Stopped on purpose (`target-role=Stopped`): not used for fencing.
    pub fn stopped(&self) -> bool {
        self.meta
            .get("target-role")
            .is_some_and(|r| r.eq_ignore_ascii_case("stopped"))
    }

    /// The parameters the fencer passes to the agent (every instance
    /// attribute but Pacemaker's own `pcmk_*`), without the target.
    pub fn agent_params(&self) -> Vec<(String, String)> {
        self.params
            .iter()
            .filter(|(k, _)| !k.starts_with("pcmk_") && k != "provides")
            .cloned()
            .collect()
    }

    /// `pcmk_host_map` as (node, port) pairs, as Pacemaker 3.0.2 reads it
    /// ([`super::hostmap::parse`]: `node:port;node2=port2`, mappings split
    /// at `;`, spaces and tabs; malformed ones left out).
    pub fn host_map(&self) -> Vec<(String, String)> {
        super::hostmap::parse(self.param("pcmk_host_map").unwrap_or("")).pairs
    }

    /// `pcmk_host_list`: names separated by spaces, commas or semicolons.
    pub fn host_list(&self) -> Vec<String> {
        self.param("pcmk_host_list")
            .unwrap_or("")
            .split([' ', ',', ';', '\t', '\n'])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// How the fencer decides which nodes the device can fence.
    pub fn host_check(&self) -> String {
        match self.param("pcmk_host_check") {
            Some(c) => c.to_string(),
            None if self.param("pcmk_host_list").is_some()
                || self.param("pcmk_host_map").is_some() =>
            {
                "static-list".into()
            }
            // Pacemaker's default: `dynamic-list` when the agent's metadata
            // offers `list`, else `status`. For an agent fencekit does not
            // implement the metadata is unknown here: `dynamic-list`.
            None => match crate::agent::defs::agent(&self.agent) {
                Some(a) if !a.family.actions.contains(&"list") => "status".into(),
                _ => "dynamic-list".into(),
            },
        }
    }

    /// The parameter the target goes to (`port` unless `pcmk_host_argument` says).
    pub(super) fn host_argument(&self) -> Option<String> {
        match self.param("pcmk_host_argument") {
            Some("none") => None,
            Some(a) => Some(a.to_string()),
            None => Some("port".into()),
        }
    }

    /// The stdin parameters the fencer passes when it fences `node`.
    pub fn params_for(&self, node: &str) -> Vec<(String, String)> {
        let mut p = self.agent_params();
        if let Some(arg) = self.host_argument() {
            if !p.iter().any(|(k, _)| *k == arg) {
                let port = self
                    .host_map()
                    .into_iter()
                    .find(|(n, _)| n == node)
                    .map(|(_, port)| port)
                    .unwrap_or_else(|| node.to_string());
                p.push((arg, port));
            }
        }
        p.push(("nodename".into(), node.to_string()));
        p
    }
}

/// What a fencing level applies to.
#[derive(Clone, Debug)]
pub enum Target {
    /// One node by name.
    Node(String),
    /// Nodes whose name matches.
    Pattern(String),
    /// Nodes with this node attribute and value.
    Attribute(String, String),
}

/// A `<fencing-level>`.
#[derive(Clone, Debug)]
pub struct Level {
    /// Its id.
    pub id: String,
    /// Its index (order of trial).
    pub index: u32,
    /// Whom it fences.
    pub target: Target,
    /// The devices, all of which must succeed.
    pub devices: Vec<String>,
}

/// A cluster node: its name and attributes.
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// `uname`.
    pub name: String,
    /// Node attributes (for `target-attribute`).
    pub attrs: BTreeMap<String, String>,
}

/// The fencing part of a CIB.
#[derive(Clone, Debug, Default)]
pub struct Cib {
    /// `crm_config` cluster properties.
    pub props: BTreeMap<String, String>,
    /// Operation defaults (`op_defaults`).
    pub op_defaults: BTreeMap<String, String>,
    /// The nodes.
    pub nodes: Vec<Node>,
    /// Stonith resources.
    pub devices: Vec<Device>,
    /// Fencing topology.
    pub levels: Vec<Level>,
}

fn nvpairs(parent: roxmltree::Node<'_, '_>, set: &str) -> Vec<(String, String)> {
    parent
        .children()
        .filter(|c| c.has_tag_name(set))
        .flat_map(|s| s.children().filter(|c| c.has_tag_name("nvpair")))
        .filter_map(|n| {
            Some((
                n.attribute("name")?.to_string(),
                n.attribute("value")?.to_string(),
            ))
        })
        .collect()
}

impl Cib {
    /// Reads a CIB (`cibadmin -Q` output, or a file with `<cib>` or
    /// `<configuration>` at its root).
    pub fn parse(xml: &str) -> Result<Cib, String> {
        // A large cluster's CIB with its status section runs to tens of MiB.
        let limits = crate::parse::Limits::ANSWER.with_bytes(256 << 20);
        let doc = crate::parse::xml(xml, &limits).map_err(|e| format!("the CIB: {e}"))?;
        let root = doc.root_element();
        let conf = if root.has_tag_name("configuration") {
            root
        } else {
            root.children()
                .find(|c| c.has_tag_name("configuration"))
                .ok_or("the CIB has no <configuration> section")?
        };
        let mut cib = Cib::default();
        for sect in conf.children() {
            match sect.tag_name().name() {
                "crm_config" => cib.props.extend(nvpairs(sect, "cluster_property_set")),
                "op_defaults" => cib.op_defaults.extend(nvpairs(sect, "meta_attributes")),
                "nodes" => {
                    for n in sect.children().filter(|c| c.has_tag_name("node")) {
                        let Some(name) = n.attribute("uname") else {
                            continue;
                        };
                        cib.nodes.push(Node {
                            name: name.to_string(),
                            attrs: nvpairs(n, "instance_attributes").into_iter().collect(),
                        });
                    }
                }
                "resources" => {
                    for p in sect.descendants().filter(|d| {
                        d.has_tag_name("primitive") && d.attribute("class") == Some("stonith")
                    }) {
                        let monitor = p
                            .descendants()
                            .find(|o| {
                                o.has_tag_name("op") && o.attribute("name") == Some("monitor")
                            })
                            .map(|o| {
                                (
                                    o.attribute("interval").map(str::to_string),
                                    o.attribute("timeout").map(str::to_string),
                                )
                            });
                        cib.devices.push(Device {
                            id: p.attribute("id").unwrap_or("").to_string(),
                            agent: p.attribute("type").unwrap_or("").to_string(),
                            params: nvpairs(p, "instance_attributes"),
                            meta: nvpairs(p, "meta_attributes").into_iter().collect(),
                            monitor,
                        });
                    }
                }
                "fencing-topology" => {
                    for l in sect.children().filter(|c| c.has_tag_name("fencing-level")) {
                        let target = if let Some(t) = l.attribute("target") {
                            Target::Node(t.to_string())
                        } else if let Some(p) = l.attribute("target-pattern") {
                            Target::Pattern(p.to_string())
                        } else if let Some(a) = l.attribute("target-attribute") {
                            Target::Attribute(
                                a.to_string(),
                                l.attribute("target-value").unwrap_or("").to_string(),
                            )
                        } else {
                            continue;
                        };
                        cib.levels.push(Level {
                            id: l.attribute("id").unwrap_or("").to_string(),
                            index: l
                                .attribute("index")
                                .and_then(|i| i.parse().ok())
                                .unwrap_or(0),
                            target,
                            devices: l
                                .attribute("devices")
                                .unwrap_or("")
                                .split(',')
                                .map(str::trim)
                                .filter(|d| !d.is_empty())
                                .map(str::to_string)
                                .collect(),
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(cib)
    }

    pub(super) fn prop(&self, k: &str) -> Option<&str> {
        self.props.get(k).map(String::as_str)
    }

    pub(super) fn device(&self, id: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.id == id)
    }

    pub(super) fn level_applies(&self, l: &Level, node: &Node) -> Result<bool, ()> {
        match &l.target {
            Target::Node(n) => Ok(*n == node.name),
            Target::Pattern(p) => Pattern::new(p)
                .map(|p| p.is_match(&node.name))
                .map_err(|_| ()),
            Target::Attribute(a, v) => Ok(node.attrs.get(a) == Some(v)),
        }
    }
}

/// SBD's settings on one node.
#[derive(Clone, Debug, Default)]
pub struct Sbd {
    /// `SBD_WATCHDOG_TIMEOUT`.
    pub watchdog_timeout: Duration,
    /// Whether sbd runs (or is said to).
    pub active: bool,
    /// Where the settings came from.
    pub source: String,
}

/// Reads SBD's configuration file (shell `KEY=value` lines).
pub fn parse_sbd(text: &str) -> Duration {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.trim() == "SBD_WATCHDOG_TIMEOUT")
        .filter_map(|(_, v)| parse_time(v.trim().trim_matches(['"', '\''])))
        .next_back()
        .unwrap_or(DEFAULT_SBD_WATCHDOG_TIMEOUT)
}
