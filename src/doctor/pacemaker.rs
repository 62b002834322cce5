//! Pacemaker's fencing configuration: the CIB's stonith resources,
//! fencing topology, cluster properties and nodes, SBD's configuration,
//! and the findings about them.

use super::devices::{Form, Probe};
use super::regex::Pattern;
use super::timing::{worst_case, Worst};
use super::{parse_time, secs, Finding, Report, Severity};
use crate::engine::power::Action;
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
    fn time(&self, k: &str) -> Option<Duration> {
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

    /// `pcmk_host_map` as (node, port) pairs: `node:port;node2:port2`
    /// (also `=` for `:`, and spaces between entries).
    pub fn host_map(&self) -> Vec<(String, String)> {
        self.param("pcmk_host_map")
            .unwrap_or("")
            .split([';', ' ', '\t', '\n'])
            .filter(|e| !e.trim().is_empty())
            .filter_map(|e| {
                let (n, p) = e.split_once([':', '='])?;
                Some((n.trim().to_string(), p.trim().to_string()))
            })
            .collect()
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
    fn host_argument(&self) -> Option<String> {
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
        let opts = roxmltree::ParsingOptions {
            allow_dtd: false,
            ..roxmltree::ParsingOptions::default()
        };
        let doc = roxmltree::Document::parse_with_options(xml, opts)
            .map_err(|e| format!("the CIB is not XML: {e}"))?;
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

    fn prop(&self, k: &str) -> Option<&str> {
        self.props.get(k).map(String::as_str)
    }

    /// `stonith-timeout` (its default when not set or unreadable).
    pub fn stonith_timeout(&self) -> Duration {
        self.prop("stonith-timeout")
            .and_then(parse_time)
            .unwrap_or(DEFAULT_STONITH_TIMEOUT)
    }

    /// The fencing action (`stonith-action`: reboot unless off).
    pub fn action(&self) -> Action {
        match self.prop("stonith-action") {
            Some("off" | "poweroff") => Action::Off,
            _ => Action::Reboot,
        }
    }

    fn device(&self, id: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.id == id)
    }

    fn level_applies(&self, l: &Level, node: &Node) -> Result<bool, ()> {
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

/// What else the doctor was told.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// SBD on the node, when known (`None`: sbd is not configured here).
    pub sbd: Option<Sbd>,
    /// Check the devices themselves.
    pub probe_devices: bool,
}

fn falsy(v: &str) -> bool {
    matches!(
        v.to_lowercase().as_str(),
        "false" | "no" | "0" | "off" | "n"
    )
}

/// Every finding about `cib`, and (with `probe_devices`) the devices' checks.
pub fn diagnose(cib: &Cib, opts: &Options) -> Report {
    let mut r = Report {
        source: "pacemaker".into(),
        ..Report::default()
    };
    let f = &mut r.findings;
    let stonith_timeout = cib.stonith_timeout();
    let action = cib.action();

    if cib.prop("stonith-enabled").is_some_and(falsy) {
        f.push(Finding::new(
            "stonith-disabled",
            Severity::Broken,
            "cluster",
            "stonith-enabled is false: the cluster never fences a node it lost, and recovers \
             its resources elsewhere while they may still run",
            "pcs property set stonith-enabled=true (crm configure property stonith-enabled=true)",
        ));
    }
    let devices: Vec<&Device> = cib.devices.iter().filter(|d| !d.stopped()).collect();
    if devices.is_empty() && cib.prop("stonith-watchdog-timeout").is_none() {
        f.push(Finding::new(
            "no-fence-device",
            Severity::Broken,
            "cluster",
            "the configuration has no fence device",
            "add a stonith resource for every node (pcs stonith create …)",
        ));
    }

    // Coverage.
    let names: Vec<&str> = cib.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut dynamic_noted = Vec::new();
    // Devices the fencer asks with `list` (dynamic-list) and fencekit can
    // run: asked now, with the parameters the fencer passes for `list`.
    let listed: Vec<(String, Result<Vec<String>, String>)> = if opts.probe_devices {
        let probes: Vec<Probe> = devices
            .iter()
            .filter(|d| {
                d.host_check() == "dynamic-list" && crate::agent::defs::agent(&d.agent).is_some()
            })
            .map(|d| Probe {
                device: d.id.clone(),
                agent: d.agent.clone(),
                node: None,
                form: Form::Stdin(d.agent_params()),
            })
            .collect();
        let lists = super::devices::list_all(&probes);
        probes.into_iter().map(|p| p.device).zip(lists).collect()
    } else {
        Vec::new()
    };
    for node in &cib.nodes {
        let mut covered = false;
        // Listing devices that do not list this node: (device, why, list failed).
        let mut unlisted: Vec<(String, String, bool)> = Vec::new();
        for d in &devices {
            match d.host_check().as_str() {
                "none" => covered = true,
                "static-list" => {
                    if d.host_list().contains(&node.name)
                        || d.host_map().iter().any(|(h, _)| *h == node.name)
                    {
                        covered = true;
                    }
                }
                "dynamic-list" if listed.iter().any(|(id, _)| *id == d.id) => {
                    let (_, l) = listed.iter().find(|(id, _)| *id == d.id).unwrap();
                    // The fencer looks for the node's pcmk_host_map port, or its name.
                    let alias = d
                        .host_map()
                        .into_iter()
                        .find(|(n, _)| *n == node.name)
                        .map(|(_, p)| p)
                        .unwrap_or_else(|| node.name.clone());
                    match l {
                        Ok(names) if names.contains(&alias) => covered = true,
                        Ok(names) => unlisted.push((
                            d.id.clone(),
                            format!(
                                "its `list` does not name '{alias}' (it lists {})",
                                if names.is_empty() {
                                    "nothing".to_string()
                                } else {
                                    names.join(", ")
                                }
                            ),
                            false,
                        )),
                        Err(e) => {
                            unlisted.push((d.id.clone(), format!("its `list` failed: {e}"), true))
                        }
                    }
                }
                _ => {
                    // dynamic-list / status, not asked here: decided by asking
                    // the device at fencing time.
                    covered = true;
                    if !dynamic_noted.contains(&d.id) {
                        dynamic_noted.push(d.id.clone());
                    }
                }
            }
        }
        for l in &cib.levels {
            match cib.level_applies(l, node) {
                Ok(true) if l.devices.iter().all(|id| cib.device(id).is_some()) => covered = true,
                Ok(_) => {}
                Err(()) => {
                    f.push(Finding::new(
                        "pattern-not-checked",
                        Severity::Advice,
                        format!("level {}", l.id),
                        "the level's target-pattern uses regular expression syntax the doctor \
                         does not evaluate (groups, alternation, counted repeats); it is taken \
                         to match every node",
                        "nothing, or use a simpler pattern or target= per node",
                    ));
                    covered = true;
                }
            }
        }
        for (id, why, failed) in &unlisted {
            // A device that lists other machines is not meant for this node;
            // one whose list failed is a finding even when another covers it.
            if covered && !failed {
                continue;
            }
            f.push(Finding::new(
                "host-not-in-device-list",
                if covered {
                    Severity::Weakened
                } else {
                    Severity::Broken
                },
                &node.name,
                format!(
                    "{id} names no nodes, so the fencer asks its agent's `list` \
                     (pcmk_host_check=dynamic-list) whether it can fence {}: {why}",
                    node.name
                ),
                "put the node in the device's pcmk_host_list, or map it to the device's \
                 plug in pcmk_host_map (pcmk_host_check=static-list)",
            ));
        }
        if !covered && !unlisted.is_empty() {
            continue;
        }
        if !covered {
            f.push(Finding::new(
                "host-not-covered",
                Severity::Broken,
                &node.name,
                format!(
                    "no fence device claims {} (pcmk_host_list, pcmk_host_map) and no fencing \
                     level targets it: fencing it fails",
                    node.name
                ),
                "add the node to a device's pcmk_host_list or pcmk_host_map (check the \
                 spelling against `crm_node -l`), or add a device for it",
            ));
        }
    }
    for id in &dynamic_noted {
        f.push(Finding::new(
            "host-claim-dynamic",
            Severity::Advice,
            id,
            "the device names no nodes (no pcmk_host_list or pcmk_host_map): the fencer asks \
             it at fencing time, so a missing node shows only then",
            "list the nodes it fences in pcmk_host_list (or pcmk_host_map)",
        ));
    }
    if !names.is_empty() {
        for d in &devices {
            let claimed = d
                .host_list()
                .into_iter()
                .chain(d.host_map().into_iter().map(|(n, _)| n));
            for h in claimed {
                if !names.contains(&h.as_str()) {
                    f.push(Finding::new(
                        "host-unknown",
                        Severity::Advice,
                        &d.id,
                        format!("the device claims '{h}', which is not a node of this cluster"),
                        "correct the name in pcmk_host_list / pcmk_host_map (node names as \
                         `crm_node -l` prints them)",
                    ));
                }
            }
        }
    }
    for l in &cib.levels {
        for id in &l.devices {
            if cib.device(id).is_none() {
                f.push(Finding::new(
                    "level-names-missing-device",
                    Severity::Broken,
                    format!("level {}", l.id),
                    format!(
                        "fencing level {} (index {}) names device '{id}', which does not exist: \
                         the level always fails",
                        l.id, l.index
                    ),
                    "pcs stonith level remove/add with existing device ids (see `pcs stonith \
                     status`), or create the device",
                ));
            }
        }
    }

    // Timing.
    let action_name = action.as_str();
    let mut worst: BTreeMap<&str, Worst> = BTreeMap::new();
    for d in &devices {
        let node = d
            .host_map()
            .into_iter()
            .map(|(n, _)| n)
            .chain(d.host_list())
            .next()
            .or_else(|| names.first().map(|n| n.to_string()))
            .unwrap_or_default();
        let w = worst_case(&d.agent, &d.params_for(&node), action);
        worst.insert(&d.id, w);
        let own = d.time(&format!("pcmk_{action_name}_timeout"));
        let budget = own.unwrap_or(stonith_timeout);
        let which = if own.is_some() {
            format!("pcmk_{action_name}_timeout")
        } else {
            "stonith-timeout".to_string()
        };
        match w {
            Worst::NotImplemented => f.push(Finding::new(
                "agent-not-checked",
                Severity::Advice,
                &d.id,
                format!(
                    "{} is not an agent fencekit implements: its timing and the device itself \
                     were not checked",
                    d.agent
                ),
                "check it by hand (stonith_admin --reboot on a test node)",
            )),
            Worst::Unbounded => f.push(Finding::new(
                "timing-unbounded",
                Severity::Advice,
                &d.id,
                "disable_timeout or power_timeout=0 lift the agent's wait for the power state: \
                 only the fencer's timeout ends it",
                "remove disable_timeout from the device's parameters",
            )),
            Worst::Bounded(w) if w > budget => f.push(Finding::new(
                "stonith-timeout-too-short",
                Severity::Broken,
                &d.id,
                format!(
                    "a {action_name} through {} may take {} with these parameters (login, \
                     power_timeout per power step, power_wait, retry_on, delay), more than \
                     {which} = {}: the fencer kills it first",
                    d.agent,
                    secs(w),
                    secs(budget)
                ),
                format!(
                    "pcs stonith update {} pcmk_{action_name}_timeout={}s (or raise \
                     stonith-timeout)",
                    d.id,
                    w.as_secs() + 10
                ),
            )),
            Worst::Bounded(_) => {}
        }
        // The monitor.
        let mon_worst = match worst_case(&d.agent, &d.agent_params(), Action::Monitor) {
            Worst::Bounded(m) => Some(m),
            _ => None,
        };
        match &d.monitor {
            None => f.push(Finding::new(
                "monitor-missing",
                Severity::Advice,
                &d.id,
                "the device has no recurring monitor: a broken BMC shows only when fencing fails",
                format!("pcs resource op add {} monitor interval=60s", d.id),
            )),
            Some((_, timeout)) => {
                let t = timeout
                    .as_deref()
                    .and_then(parse_time)
                    .or_else(|| cib.op_defaults.get("timeout").and_then(|t| parse_time(t)))
                    .unwrap_or(DEFAULT_OP_TIMEOUT);
                if let Some(m) = mon_worst {
                    if m > t {
                        f.push(Finding::new(
                            "monitor-timeout-too-short",
                            Severity::Weakened,
                            &d.id,
                            format!(
                                "the device's monitor may take {} with these parameters, more \
                                 than its timeout of {}: a monitor killed at its timeout says \
                                 nothing about the device and fails the resource",
                                secs(m),
                                secs(t)
                            ),
                            format!(
                                "pcs resource update {} op monitor timeout={}s",
                                d.id,
                                m.as_secs() + 10
                            ),
                        ));
                    }
                }
            }
        }
    }
    for l in &cib.levels {
        let mut sum = Duration::ZERO;
        let mut all = true;
        for id in &l.devices {
            match worst.get(id.as_str()) {
                Some(Worst::Bounded(w)) => sum += *w,
                _ => all = false,
            }
        }
        if all && l.devices.len() > 1 && sum > stonith_timeout {
            f.push(Finding::new(
                "stonith-timeout-too-short",
                Severity::Broken,
                format!("level {}", l.id),
                format!(
                    "the level's {} devices run one after the other and may take {} together, \
                     more than stonith-timeout = {}",
                    l.devices.len(),
                    secs(sum),
                    secs(stonith_timeout)
                ),
                format!("pcs property set stonith-timeout={}s", sum.as_secs() + 10),
            ));
        }
    }

    // Two-node races.
    let delay_max = devices
        .iter()
        .filter_map(|d| d.time("pcmk_delay_max"))
        .max()
        .unwrap_or_default();
    let delay_base = devices
        .iter()
        .filter_map(|d| d.time("pcmk_delay_base"))
        .max()
        .unwrap_or_default();
    let agent_delay = devices
        .iter()
        .filter_map(|d| d.param("delay").and_then(parse_time))
        .max()
        .unwrap_or_default();
    let priority = cib
        .prop("priority-fencing-delay")
        .and_then(parse_time)
        .unwrap_or_default();
    if cib.nodes.len() == 2
        && delay_max.is_zero()
        && delay_base.is_zero()
        && agent_delay.is_zero()
        && priority.is_zero()
    {
        f.push(Finding::new(
            "fence-race-no-delay",
            Severity::Weakened,
            "cluster",
            "a two-node cluster with no fencing delay: on a split both nodes fence each other at \
             once, and both may go down",
            "pcs stonith update DEVICE-OF-ONE-NODE pcmk_delay_base=5s (a fixed delay for the node \
             that should survive), or pcmk_delay_max=15s, or priority-fencing-delay",
        ));
    }
    if !priority.is_zero() && !delay_max.is_zero() && priority < delay_max * 2 {
        f.push(Finding::new(
            "priority-delay-too-short",
            Severity::Weakened,
            "cluster",
            format!(
                "priority-fencing-delay = {} is less than twice the largest pcmk_delay_max ({}): \
                 the random delay can outlast it and the node with the resources may lose the race",
                secs(priority),
                secs(delay_max)
            ),
            format!(
                "pcs property set priority-fencing-delay={}s",
                (delay_max * 2).as_secs()
            ),
        ));
    }

    // SBD and the watchdog.
    let swt = cib.prop("stonith-watchdog-timeout").map(str::trim);
    let swt_value: Option<f64> = swt.and_then(|v| {
        let neg = v.starts_with('-');
        let d = parse_time(v.trim_start_matches('-'))?.as_secs_f64();
        Some(if neg { -d } else { d })
    });
    match swt_value {
        Some(v) if v > 0.0 => {
            let swt = Duration::from_secs_f64(v);
            match &opts.sbd {
                Some(sbd) if sbd.active => {
                    if swt <= sbd.watchdog_timeout {
                        f.push(Finding::new(
                            "watchdog-timeout-below-sbd",
                            Severity::Broken,
                            "cluster",
                            format!(
                                "stonith-watchdog-timeout = {} is not above SBD_WATCHDOG_TIMEOUT \
                                 = {} ({}): Pacemaker refuses it and stops, and a lost node \
                                 would be taken for dead before its watchdog fired",
                                secs(swt),
                                secs(sbd.watchdog_timeout),
                                sbd.source
                            ),
                            format!(
                                "pcs property set stonith-watchdog-timeout={}s (twice \
                                 SBD_WATCHDOG_TIMEOUT)",
                                (sbd.watchdog_timeout * 2).as_secs()
                            ),
                        ));
                    } else if swt < sbd.watchdog_timeout * 2 {
                        f.push(Finding::new(
                            "watchdog-timeout-tight",
                            Severity::Advice,
                            "cluster",
                            format!(
                                "stonith-watchdog-timeout = {} is less than twice \
                                 SBD_WATCHDOG_TIMEOUT = {}",
                                secs(swt),
                                secs(sbd.watchdog_timeout)
                            ),
                            format!(
                                "pcs property set stonith-watchdog-timeout={}s",
                                (sbd.watchdog_timeout * 2).as_secs()
                            ),
                        ));
                    }
                }
                _ => f.push(Finding::new(
                    "watchdog-without-sbd",
                    Severity::Broken,
                    "cluster",
                    format!(
                        "stonith-watchdog-timeout = {} but sbd is not running on this node: \
                         Pacemaker stops, and watchdog fencing cannot work",
                        secs(swt)
                    ),
                    "enable and start sbd (with SBD_WATCHDOG_TIMEOUT below \
                     stonith-watchdog-timeout) on every node, or set stonith-watchdog-timeout=0",
                )),
            }
            for d in devices.iter().filter(|d| d.agent == "fence_watchdog") {
                let budget = d
                    .time(&format!("pcmk_{action_name}_timeout"))
                    .unwrap_or(stonith_timeout);
                if budget <= swt {
                    f.push(Finding::new(
                        "watchdog-level-timeout-too-short",
                        Severity::Broken,
                        &d.id,
                        format!(
                            "fence_watchdog waits stonith-watchdog-timeout = {} for the lost node \
                             to self-fence, but its timeout is {}",
                            secs(swt),
                            secs(budget)
                        ),
                        format!(
                            "pcs stonith update {} pcmk_{action_name}_timeout={}s",
                            d.id,
                            swt.as_secs() + 10
                        ),
                    ));
                }
            }
        }
        Some(v) if v < 0.0 => f.push(Finding::new(
            "watchdog-timeout-auto",
            Severity::Advice,
            "cluster",
            "a negative stonith-watchdog-timeout asks Pacemaker to compute it from each node's \
             SBD_WATCHDOG_TIMEOUT, which is unsafe when the nodes differ",
            "set it explicitly to twice SBD_WATCHDOG_TIMEOUT, the same on every node",
        )),
        _ => {}
    }

    // The devices themselves.
    if opts.probe_devices {
        let mut probes = Vec::new();
        for d in &devices {
            if crate::agent::defs::agent(&d.agent).is_none() {
                r.devices.push(super::DeviceCheck {
                    device: d.id.clone(),
                    agent: d.agent.clone(),
                    node: None,
                    result: "not-checked",
                    detail: "not an agent fencekit implements".into(),
                });
                continue;
            }
            let mut targets: Vec<String> = d
                .host_map()
                .into_iter()
                .map(|(n, _)| n)
                .chain(d.host_list())
                .collect();
            if targets.is_empty() {
                targets = names.iter().map(|n| n.to_string()).collect();
            }
            targets.dedup();
            let mut seen = Vec::new();
            for n in targets {
                let p = d.params_for(&n);
                // One check per distinct set of parameters (the node name aside).
                let key: Vec<_> = p.iter().filter(|(k, _)| k != "nodename").cloned().collect();
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                probes.push(Probe {
                    device: d.id.clone(),
                    agent: d.agent.clone(),
                    node: Some(n),
                    form: Form::Stdin(p),
                });
            }
        }
        for (row, finding) in super::devices::check_all(&probes) {
            r.devices.push(row);
            r.findings.extend(finding);
        }
    }
    r.finish();
    r
}
