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

mod check;
mod error;
mod fields;
mod lockstep;

use super::hostrange;
use check::{check_method, check_pin, check_watts, parse_defaults, Defaults, Lines};
pub use error::*;
pub use fields::*;
use lockstep::Lockstep;
use serde::Deserialize;
use std::collections::hash_map::{Entry, HashMap};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// One node of the inventory, with its methods merged over the defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The node's name.
    pub name: String,
    /// Its own (data-plane) address.
    pub address: Option<String>,
    /// Ports its host answers on when it is up.
    pub probe_ports: Vec<u16>,
    /// Fencing methods, level 1 first (merged over the defaults).
    pub methods: Vec<StoredFields>,
    /// How to reach the node itself over SSH (for rejoin checks).
    pub node_session: Option<StoredFields>,
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
    /// Node names to their place in `nodes` ([`Inventory::node`]).
    index: HashMap<String, usize>,
    /// Its nodes were made on helper threads ([`Inventory::made_on_helpers`]).
    spread: bool,
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

/// One `[[node]]` section read on its own.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OneNode {
    node: Vec<NodeDoc>,
}

/// What every `[[node]]` entry is read against: the defaults, the shared
/// PDU tables and the identity pins. Read only, so that the threads that
/// read a large file's sections can prepare its nodes too.
struct Shared<'a> {
    path: &'a Path,
    defaults: Defaults,
    /// Each driver's defaults merged over the common ones.
    driver_bases: Vec<(String, MethodFields)>,
    pdu: std::collections::BTreeMap<String, MethodFields>,
    /// `[identity.NAME]` tables (a table no node takes is an error at the end).
    pins: std::collections::BTreeMap<String, Spanned<IdentityDoc>>,
    /// The file's lines, and where the text the pins were read from stands
    /// in it (`None`: the whole file).
    lines: &'a Lines,
    rest: Option<super::sections::Rest>,
}

/// The nodes of one `[[node]]`, prepared: merged and checked, except for
/// what depends on the rest of the file (whether each name is new, and how
/// many nodes the file has). Nodes in name order up to the first mistake.
struct Prepared {
    /// How many names the entry has, once its name and pins are checked.
    names: Option<usize>,
    /// The first node, and those of the other names of a range (kept
    /// apart so that a one-node entry, the usual kind, needs no vector to
    /// be made on one thread and freed on another).
    first: Option<Node>,
    more: Vec<Node>,
    /// The first mistake, after the nodes before it (`first`, `more`).
    error: Option<InventoryError>,
    line: usize,
}

/// A node section as a reading thread hands it over.
#[allow(clippy::large_enum_variant)]
enum Section {
    /// It does not read on its own (the reader's message is found again).
    Unread,
    /// Entries to prepare on the calling thread, in turn, against the
    /// file's count of nodes so far: a range (it may name 100,000).
    Entries(Vec<NodeDoc>),
    /// One entry of one name (the usual section), prepared where it was
    /// read (not boxed: a box made on one thread and freed on another for
    /// each of 100,000 nodes is what this avoids).
    One(Prepared),
}

impl<'a> Shared<'a> {
    /// Reads `[defaults]`; `doc` was read from the file whose lines are
    /// `lines`, or from its `rest`.
    fn new(
        path: &'a Path,
        doc: Doc,
        lines: &'a Lines,
        rest: Option<super::sections::Rest>,
    ) -> Result<Shared<'a>, InventoryError> {
        let defaults = match doc.defaults {
            Some(t) => parse_defaults(t).map_err(|problem| InventoryError::Defaults {
                path: path.to_path_buf(),
                problem: Box::new(problem),
            })?,
            None => Defaults::default(),
        };
        // Each driver's defaults over the common ones, merged once.
        let driver_bases = defaults
            .per_driver
            .iter()
            .map(|(d, f)| (d.clone(), f.over(&defaults.common)))
            .collect();
        Ok(Shared {
            path,
            defaults,
            driver_bases,
            pdu: doc.pdu,
            pins: doc.identity,
            lines,
            rest,
        })
    }

    /// The line of the `[identity.NAME]` table `p`.
    fn pin_line(&self, p: &Spanned<IdentityDoc>) -> usize {
        let at = p.span().start;
        self.lines
            .line(self.rest.as_ref().map_or(at, |r| r.in_file(at)))
    }

    /// The defaults a method of driver `kind` is merged over.
    fn base_of(&self, kind: Option<&str>) -> &MethodFields {
        self.driver_bases
            .iter()
            .find(|(d, _)| Some(d.as_str()) == kind)
            .map_or(&self.defaults.common, |(_, f)| f)
    }

    /// Prepares the nodes of the `[[node]]` whose name is on `line`, when
    /// the file has room for `room` more nodes.
    fn prepare(&self, nd: NodeDoc, line: usize, room: usize) -> Prepared {
        let mut out = Prepared {
            names: None,
            first: None,
            more: Vec::new(),
            error: None,
            line,
        };
        if let Err(e) = self.prepare_into(nd, room, &mut out) {
            out.error = Some(e);
        }
        out
    }

    fn prepare_into(
        &self,
        nd: NodeDoc,
        room: usize,
        out: &mut Prepared,
    ) -> Result<(), InventoryError> {
        let line = out.line;
        let at = |problem: NodeProblem| InventoryError::Node {
            path: self.path.to_path_buf(),
            line,
            problem: Box::new(problem),
        };
        let pattern = nd.name.get_ref().trim().to_string();
        if pattern.is_empty() {
            return Err(at(NodeProblem::EmptyName));
        }
        let names = hostrange::expand(&pattern).map_err(|e| at(e.into()))?;
        let n = names.len();
        let method_pinned = nd
            .fence
            .iter()
            .any(|m| m.uuid.is_some() || m.serial.is_some());
        if n > 1 && (nd.uuid.is_some() || nd.serial.is_some() || method_pinned) {
            return Err(at(NodeProblem::RangePinned { pattern, count: n }));
        }
        check_pin(nd.uuid.as_deref(), nd.serial.as_deref()).map_err(|source| {
            at(NodeProblem::Pin {
                pattern: pattern.clone(),
                source,
            })
        })?;
        out.names = Some(n);
        // One bound for the whole file, not only per range (found with
        // the `targets` fuzz target: each [[node]] could add 100,000 nodes).
        if n > room {
            return Err(at(NodeProblem::TooMany));
        }
        out.more.reserve_exact(n - 1);
        let mut steps = Lockstep::default();
        let mut fence = nd.fence;
        let defaults = &self.defaults;
        for (i, name) in names.into_iter().enumerate() {
            let ctx = |problem: NamedProblem| {
                at(NodeProblem::At {
                    name: name.clone(),
                    problem,
                })
            };
            let lock = |e: LockstepError| ctx(e.into());
            let method = |level: usize| {
                move |problem: MethodProblem| ctx(NamedProblem::Method { level, problem })
            };
            let mut methods = Vec::with_capacity(fence.len());
            if fence.is_empty() {
                return Err(ctx(NamedProblem::NoMethod));
            }
            // The node's pin: on the node, or in [identity.NAME] (not both).
            let (node_uuid, node_serial) = match self.pins.get(&name) {
                Some(p) if nd.uuid.is_some() || nd.serial.is_some() => {
                    return Err(ctx(NamedProblem::PinnedTwice {
                        name: name.clone(),
                        line: self.pin_line(p),
                    }))
                }
                Some(p) => {
                    let p = p.get_ref();
                    check_pin(p.uuid.as_deref(), p.serial.as_deref()).map_err(|source| {
                        ctx(NamedProblem::IdentityTable {
                            name: name.clone(),
                            source,
                        })
                    })?;
                    (p.uuid.clone(), p.serial.clone())
                }
                None => (nd.uuid.clone(), nd.serial.clone()),
            };
            for (k, slot) in fence.iter_mut().enumerate() {
                let m = &*slot;
                check_pin(m.uuid.as_deref(), m.serial.as_deref())
                    .map_err(|e| method(k + 1)(e.into()))?;
                let endpoint = steps
                    .ranged(&m.endpoint, (k, 0), i, n, "endpoint")
                    .map_err(lock)?;
                let ip = steps.ranged(&m.ip, (k, 0), i, n, "ip").map_err(lock)?;
                let plug = steps.ranged(&m.plug, (k, 0), i, n, "plug").map_err(lock)?;
                let systems_uri = steps
                    .ranged(&m.systems_uri, (k, 0), i, n, "systems_uri")
                    .map_err(lock)?;
                let node_name = steps
                    .ranged(&m.node_name, (k, 0), i, n, "node_name")
                    .map_err(lock)?;
                let kind = kind_of(
                    m.driver.as_deref().or(defaults.common.driver.as_deref()),
                    endpoint
                        .as_deref()
                        .or(m.endpoint.as_deref())
                        .or(defaults.common.endpoint.as_deref()),
                );
                // The one node of a [[node]] takes the method's own fields;
                // the names of a range each take a copy.
                let own = if n == 1 {
                    std::mem::take(slot)
                } else {
                    slot.clone()
                };
                let mut merged = own.merged(self.base_of(kind.as_deref()));
                // The node's own values of the fields that hold ranges
                // (a range field is set on the method, never inherited).
                for (field, value) in [
                    (&mut merged.endpoint, endpoint),
                    (&mut merged.ip, ip),
                    (&mut merged.plug, plug),
                    (&mut merged.systems_uri, systems_uri),
                    (&mut merged.node_name, node_name),
                ] {
                    if value.is_some() {
                        *field = value;
                    }
                }
                let platform = kind.as_deref().and_then(crate::method::platforms::by_name);
                let outlets = platform.is_some_and(|p| p.outlets());
                if outlets {
                    if let Some(list) = &merged.outlets {
                        let mut expanded = Vec::with_capacity(list.len());
                        for (j, o) in list.iter().enumerate() {
                            expanded.push(
                                steps
                                    .pick(&Some(o.clone()), (k, j), i, n, "outlet")
                                    .map_err(lock)?
                                    .unwrap_or_default(),
                            );
                        }
                        merged.outlets = Some(expanded);
                    }
                    let base = self.base_of(kind.as_deref());
                    for o in merged.outlets.clone().unwrap_or_default() {
                        if let Some((p, _)) = o.split_once(':') {
                            if let Some(t) = self.pdu.get(p) {
                                if !merged.pdus.iter().any(|(x, _)| x == p) {
                                    merged.pdus.push((p.to_string(), t.over(base)));
                                }
                            }
                        }
                    }
                }
                check_method(&merged).map_err(method(k + 1))?;
                // Manual methods and PDU outlets have no device that could
                // say which machine it is: the node's pin skips them.
                let kind = merged.driver_kind();
                let outlets = kind
                    .as_deref()
                    .and_then(crate::method::platforms::by_name)
                    .is_some_and(|p| p.outlets());
                let blind = outlets || kind.as_deref() == Some("manual");
                if blind && (merged.uuid.is_some() || merged.serial.is_some()) {
                    return Err(method(k + 1)(MethodProblem::Blind(match outlets {
                        true => "a PDU outlet",
                        false => "a manual method",
                    })));
                }
                // The node's pin applies to every method with a device,
                // part by part, unless the method names its own.
                if !blind {
                    merged.uuid = merged.uuid.or_else(|| node_uuid.clone());
                    merged.serial = merged.serial.or_else(|| node_serial.clone());
                }
                methods.push(StoredFields::new(merged));
            }
            let node_session = match &nd.node_session {
                Some(m) => {
                    let endpoint = steps
                        .pick(&m.endpoint, (0, 0), i, n, NODE_SESSION_ENDPOINT)
                        .map_err(lock)?;
                    if m.uuid.is_some() || m.serial.is_some() {
                        return Err(ctx(NamedProblem::SessionPinned));
                    }
                    let mut m = m.over(self.base_of(Some(NODE_SESSION_DRIVER)));
                    m.endpoint = endpoint.or(m.endpoint);
                    m.driver = Some(NODE_SESSION_DRIVER.into());
                    check_method(&m).map_err(|e| ctx(NamedProblem::Session(e)))?;
                    Some(StoredFields::new(m))
                }
                None => None,
            };
            if !nd.check.is_empty() && node_session.is_none() {
                return Err(ctx(NamedProblem::ChecksWithoutSession));
            }
            let mut names: Vec<&str> = nd.check.iter().map(|c| c.name.as_str()).collect();
            names.sort_unstable();
            if names.windows(2).any(|w| w[0] == w[1]) {
                return Err(ctx(NamedProblem::SameCheckName));
            }
            let max_off_watts = match nd.max_off_watts {
                Some(w) => Some(check_watts(w).map_err(|e| ctx(e.into()))?),
                None => defaults.max_off_watts,
            };
            let node = Node {
                address: steps
                    .pick(&nd.address, (0, 0), i, n, "address")
                    .map_err(lock)?,
                probe_ports: nd
                    .probe_ports
                    .clone()
                    .unwrap_or_else(|| defaults.probe_ports.clone()),
                name,
                methods,
                node_session,
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
            };
            match out.first {
                None => out.first = Some(node),
                Some(_) => out.more.push(node),
            }
        }
        Ok(())
    }
}

/// Turns `[[node]]` entries into the inventory's nodes, one entry at a time
/// and in file order.
struct Builder<'s, 'a> {
    shared: &'s Shared<'a>,
    nodes: Vec<Node>,
    /// Names to their place in `nodes`: a map, not a scan (found with the
    /// `targets` fuzz target: one 100,000-name range made the duplicate
    /// check quadratic, 30 s for 70 bytes).
    index: HashMap<String, usize>,
}

impl<'s, 'a> Builder<'s, 'a> {
    fn new(shared: &'s Shared<'a>) -> Builder<'s, 'a> {
        Builder {
            shared,
            nodes: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// How many more nodes the file may name.
    fn room(&self) -> usize {
        hostrange::MAX_EXPANSION.saturating_sub(self.nodes.len())
    }

    /// Adds the nodes of the `[[node]]` whose name is on `line`.
    fn add(&mut self, nd: NodeDoc, line: usize) -> Result<(), InventoryError> {
        let p = self.shared.prepare(nd, line, self.room());
        self.commit(p)
    }

    /// Adds prepared nodes: each name must be new, and the file within
    /// its bound.
    fn commit(&mut self, p: Prepared) -> Result<(), InventoryError> {
        let at = |problem: NodeProblem| InventoryError::Node {
            path: self.shared.path.to_path_buf(),
            line: p.line,
            problem: Box::new(problem),
        };
        if p.names.is_some_and(|n| n > self.room()) {
            return Err(at(NodeProblem::TooMany));
        }
        self.nodes.reserve(p.more.len() + 1);
        for node in p.first.into_iter().chain(p.more) {
            match self.index.entry(node.name.clone()) {
                Entry::Occupied(_) => {
                    return Err(at(NodeProblem::At {
                        name: node.name,
                        problem: NamedProblem::Twice,
                    }))
                }
                Entry::Vacant(v) => v.insert(self.nodes.len()),
            };
            self.nodes.push(node);
        }
        match p.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The inventory, once every `[[node]]` is in.
    fn finish(self) -> Result<Inventory, InventoryError> {
        // A pin is taken by the node of its name.
        let unused = self
            .shared
            .pins
            .iter()
            .find(|(name, _)| !self.index.contains_key(name.as_str()));
        if let Some((name, p)) = unused {
            return Err(InventoryError::UnusedPin {
                path: self.shared.path.to_path_buf(),
                line: self.shared.pin_line(p),
                name: name.clone(),
            });
        }
        Ok(Inventory {
            path: self.shared.path.to_path_buf(),
            nodes: self.nodes,
            max_fence: self.shared.defaults.max_fence,
            index: self.index,
            spread: false,
        })
    }
}

impl Inventory {
    /// Reads and checks an inventory file.
    pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
        let text = std::fs::read_to_string(path).map_err(|source| InventoryError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Inventory::parse(&text, path)
    }

    /// Parses inventory text; `path` is only used in messages.
    ///
    /// Linear in the number of nodes: every per-node step is a lookup
    /// (names, lines, expanded ranges, merged defaults), never a scan of
    /// what came before. Each `[[node]]` section is read on its own where
    /// the file allows ([`super::sections`]), so that the TOML reader never
    /// holds the document of a whole 100,000-node file; with several
    /// mistakes in a file, the first node's (in file order) is reported.
    pub fn parse(text: &str, path: &Path) -> Result<Inventory, InventoryError> {
        let toml_error = |source| InventoryError::Toml {
            path: path.to_path_buf(),
            source: Box::new(source),
        };
        let whole = || toml::from_str::<Doc>(text).map_err(toml_error);
        // The file without its node sections; or the whole file when the
        // sections cannot be told apart with certainty (or the rest does
        // not read: the whole file's reading says why).
        let sections = super::sections::node_sections(text).filter(|s| !s.is_empty());
        let split = sections.and_then(|s| {
            let rest = super::sections::rest(text, &s);
            match toml::from_str::<Doc>(&rest.text) {
                Ok(doc) if doc.node.is_empty() => Some((doc, rest, s)),
                _ => None,
            }
        });
        let Some((doc, rest, sections)) = split else {
            return Inventory::parse_whole(whole()?, text, path);
        };
        let lines = Lines::of(text);
        let shared = Shared::new(path, doc, &lines, Some(rest))?;
        let mut b = Builder::new(&shared);
        b.nodes.reserve_exact(sections.len());
        b.index.reserve(sections.len());
        // Read where the section is read: its entries, each prepared there
        // when it names one node.
        let read = |r: &std::ops::Range<usize>| {
            let Ok(one) = toml::from_str::<OneNode>(&text[r.clone()]) else {
                return Section::Unread;
            };
            // (A section holds one `[[node]]`: the scan starts a new one at each.)
            match <[NodeDoc; 1]>::try_from(one.node) {
                Ok([nd]) if !hostrange::is_range(nd.name.get_ref()) => {
                    let line = lines.line(r.start + nd.name.span().start);
                    Section::One(shared.prepare(nd, line, usize::MAX))
                }
                Ok(nd) => Section::Entries(nd.into()),
                Err(nds) => Section::Entries(nds),
            }
        };
        let mut reread = false;
        let parallel = sections.len() >= PARALLEL_FROM;
        each_section(&sections, parallel, read, |r, section| {
            match section {
                Section::One(p) => b.commit(p)?,
                Section::Entries(nds) => {
                    for nd in nds {
                        let line = lines.line(r.start + nd.name.span().start);
                        b.add(nd, line)?;
                    }
                }
                Section::Unread => {
                    // The reader's own message, on the file's lines: the
                    // section read where it stands (blank lines before it).
                    let section = &text[r.clone()];
                    let padded = "\n".repeat(lines.line(r.start) - 1) + section;
                    match toml::from_str::<OneNode>(&padded) {
                        Err(e) => return Err(toml_error(e)),
                        // (Cannot happen; if it did, the whole file decides.)
                        Ok(_) => {
                            reread = true;
                            return Ok(false);
                        }
                    }
                }
            }
            Ok(true)
        })?;
        if reread {
            return Inventory::parse_whole(whole()?, text, path);
        }
        let mut inventory = b.finish()?;
        inventory.spread = parallel;
        Ok(inventory)
    }

    /// [`Inventory::parse`] of a document read whole.
    fn parse_whole(mut doc: Doc, text: &str, path: &Path) -> Result<Inventory, InventoryError> {
        let lines = Lines::of(text);
        let nodes = std::mem::take(&mut doc.node);
        let shared = Shared::new(path, doc, &lines, None)?;
        let mut b = Builder::new(&shared);
        for nd in nodes {
            let line = lines.line(nd.name.span().start);
            b.add(nd, line)?;
        }
        b.finish()
    }

    /// Whether its nodes were made on helper threads (a large file of one
    /// `[[node]]` per node): then their plans are too
    /// ([`super::plan::select`]), so that the memory the nodes leave is
    /// where the plans are made. A file of ranges is made into nodes, and
    /// planned, on the calling thread (planned elsewhere, 100,000 nodes
    /// took 20 MiB more, for no time gained).
    pub fn made_on_helpers(&self) -> bool {
        self.spread
    }

    /// The node named `name` (a lookup, not a scan).
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.index.get(name).map(|&i| &self.nodes[i])
    }

    /// The node named `name`, to take its fields.
    pub fn node_mut(&mut self, name: &str) -> Option<&mut Node> {
        self.index.get(name).map(|&i| &mut self.nodes[i])
    }
}

/// Sections of one chunk, read by a helper thread: many small TOML
/// documents, so that a thread's share is worth its hand-over.
const CHUNK: usize = 256;

/// Below this many sections the file is read on the calling thread alone.
const PARALLEL_FROM: usize = 4 * CHUNK;

/// Reads each node section (`read`) and hands what was read to `take` in
/// file order, until `take` says stop (`Ok(false)`) or fails: a large
/// file's sections on helper threads ([`super::inorder`]), since reading
/// (and preparing the nodes of) each section is most of the cost of a
/// 100,000-node inventory, and each section reads on its own.
fn each_section<T: Send, E>(
    sections: &[std::ops::Range<usize>],
    parallel: bool,
    read: impl Fn(&std::ops::Range<usize>) -> T + Sync,
    mut take: impl FnMut(&std::ops::Range<usize>, T) -> Result<bool, E>,
) -> Result<(), E> {
    super::inorder::in_order(
        sections.chunks(CHUNK),
        parallel,
        || (),
        |_, chunk| chunk.iter().map(|r| (r, read(r))).collect::<Vec<_>>(),
        |read| {
            for (r, t) in read {
                if !take(r, t)? {
                    return Ok(false);
                }
            }
            Ok(true)
        },
    )
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
        assert_eq!(
            n2.methods[0].fields().endpoint.as_deref(),
            Some("ipmi://10.0.7.2")
        );
        assert_eq!(n2.methods[0].fields().username.as_deref(), Some("admin"));
        assert_eq!(
            n2.methods[0].fields().cipher,
            Some(toml::Value::Integer(17))
        );
        assert_eq!(n2.probe_ports, vec![22]);
        assert_eq!(n2.line, 11);
        let db = inv.node("db1").unwrap();
        assert_eq!(db.methods[0].fields().username.as_deref(), Some("root"));
        assert_eq!(db.probe_ports, vec![5432]);
        assert!(db.methods[0].fields().password_file.is_some());
    }

    #[test]
    fn settings_merge_key_by_key_and_only_a_platforms_own_keys_are_taken() {
        let text = "[defaults]\nsettings = { a = \"d\", b = \"d\" }\n\n[[node]]\nname = \"n1\"\n  \
                    [[node.fence]]\n  endpoint = \"ipmi://10.0.0.1\"\n  settings = { b = \"own\", c = [1, \"x\"] }\n";
        // IPMI takes no settings: refused, naming the key.
        let e = Inventory::parse(text, Path::new("i.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a ipmi method takes no settings (settings."),
            "{e}"
        );
        // Merged key by key (read before the platform's check).
        let own: MethodFields =
            toml::from_str("settings = { b = \"own\", c = [1, \"x\"] }").unwrap();
        let base: MethodFields = toml::from_str("settings = { a = \"d\", b = \"d\" }").unwrap();
        let m = own.over(&base);
        let keys: Vec<_> = m.settings.as_ref().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["a", "b", "c"]);
        use crate::platform::build::Fields as _;
        assert_eq!(m.get("b"), Some("own"));
        assert_eq!(m.get("a"), Some("d"));
        assert!(m.has("c"));
        let stored = fields::StoredFields::new(m.clone());
        assert_eq!(stored.fields(), m);
    }

    #[test]
    fn errors_name_file_and_line() {
        let bad = "[[node]]\nname = \"a\"\n  [[node.fence]]\n  endpoint = \"ipmi://x\"\n  passwrd = \"x\"\n";
        let e = Inventory::parse(bad, Path::new("i.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("i.toml") && e.contains("line 5") && e.contains("passwrd"),
            "{e}"
        );

        let plain = "[[node]]\nname = \"a\"\n  [[node.fence]]\n  endpoint = \"ipmi://x\"\n  password = \"x\"\n";
        let e = Inventory::parse(plain, Path::new("i.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("i.toml:2:") && e.contains("plain passwords"),
            "{e}"
        );

        let mismatch =
            "[[node]]\nname = \"n[1-3]\"\n  [[node.fence]]\n  endpoint = \"ipmi://h[1-2]\"\n";
        let e = Inventory::parse(mismatch, Path::new("i.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("expands to 2 values"), "{e}");

        let twice = "[[node]]\nname = \"a\"\n[[node.fence]]\nip=\"h\"\ndriver=\"ipmi\"\n[[node]]\nname = \"a\"\n[[node.fence]]\nip=\"h\"\ndriver=\"ipmi\"\n";
        let e = Inventory::parse(twice, Path::new("i.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("i.toml:7:") && e.contains("defined twice"),
            "{e}"
        );

        let nodriver = "[[node]]\nname = \"a\"\n[[node.fence]]\nip = \"h\"\n";
        assert!(Inventory::parse(nodriver, Path::new("i"))
            .unwrap_err()
            .to_string()
            .contains("no driver"));
        let nomethod = "[[node]]\nname = \"a\"\n";
        assert!(Inventory::parse(nomethod, Path::new("i"))
            .unwrap_err()
            .to_string()
            .contains("no fencing method"));
    }

    #[test]
    fn a_large_file_read_by_helper_threads_keeps_file_order_and_first_error() {
        // Above PARALLEL_FROM sections: read by helper threads, chunks of
        // CHUNK taken in the file's order.
        let n = PARALLEL_FROM + 5 * CHUNK + 7;
        let mut text = String::from("[defaults]\nusername = \"admin\"\n");
        for i in 0..n {
            text += &format!(
                "\n[[node]]\nname = \"n{i}\"\n  [[node.fence]]\n  endpoint = \"ipmi://10.{}.{}.1\"\n",
                i / 256,
                i % 256
            );
        }
        let inv = Inventory::parse(&text, Path::new("big.toml")).unwrap();
        assert_eq!(inv.nodes.len(), n);
        for (i, node) in inv.nodes.iter().enumerate() {
            assert_eq!(node.name, format!("n{i}"));
        }
        assert_eq!(inv.node("n1234").map(|x| x.name.as_str()), Some("n1234"));

        // Two broken sections, in different chunks: the first in the file
        // is reported, on its own line.
        let at = |i: usize| format!("name = \"n{i}\"\n");
        let bad = text
            .replacen(&at(n - 3), &format!("{}  passwrd = 1\n", at(n - 3)), 1)
            .replacen(
                &at(CHUNK * 3 + 1),
                &format!("{}  passwrd = 1\n", at(CHUNK * 3 + 1)),
                1,
            );
        let line = bad[..bad.find("passwrd").unwrap()].lines().count();
        let e = Inventory::parse(&bad, Path::new("big.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("line {line}")), "line {line}: {e}");

        // A node defined twice across chunks is still found.
        let twice = text.replacen(&at(n - 1), &at(2), 1);
        let e = Inventory::parse(&twice, Path::new("big.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("defined twice"), "{e}");

        // Nodes prepared where their section is read say what the whole
        // file's reading says: an identity pin, a range among single
        // nodes, a duplicate before a later mistake (the duplicate is
        // reported: it comes first), a pin no node takes.
        let mixed = text.replacen(
            &at(CHUNK + 3),
            "name = \"r[1-3]\"\n  [[node.fence]]\n  endpoint = \"ipmi://10.9.9.[1-3]\"\n[[node]]\nname = \"x\"\n",
            1,
        ) + &format!("\n[identity.n{}]\nserial = \"S9\"\n", CHUNK * 4 + 9);
        let split = Inventory::parse(&mixed, Path::new("big.toml")).unwrap();
        let whole = Inventory::parse_whole(
            toml::from_str::<Doc>(&mixed).unwrap(),
            &mixed,
            Path::new("big.toml"),
        )
        .unwrap();
        assert_eq!(split.nodes, whole.nodes);
        assert_eq!(split.nodes.len(), n + 3);
        let pinned = split.node(&format!("n{}", CHUNK * 4 + 9)).unwrap();
        assert_eq!(pinned.serial.as_deref(), Some("S9"));
        assert_eq!(pinned.methods[0].fields().serial.as_deref(), Some("S9"));
        // (The mistake alone is found; after a duplicate, the duplicate.)
        let watts = text.replacen(
            &at(n - 3),
            &format!("{}max_off_watts = -5.0\n", at(n - 3)),
            1,
        );
        let e = Inventory::parse(&watts, Path::new("big.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("watts"), "{e}");
        let later = watts.replacen(&at(CHUNK * 2 + 5), &at(7), 1);
        let e = Inventory::parse(&later, Path::new("big.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("defined twice"), "{e}");
        let unused = text.clone() + "\n[identity.nobody]\nserial = \"S0\"\n";
        let e = Inventory::parse(&unused, Path::new("big.toml"))
            .unwrap_err()
            .to_string();
        let line = unused.lines().count() - 1;
        assert!(
            e.starts_with(&format!("big.toml:{line}: [identity.nobody]")),
            "line {line}: {e}"
        );
    }

    #[test]
    fn ipv6_endpoints_in_brackets_are_addresses_not_ranges() {
        let text = "[defaults]\nusername = \"u\"\n\
                    [[node]]\nname = \"a\"\n  [[node.fence]]\n  \
                    endpoint = \"redfish://[fe80::1]:8443/redfish/v1/Systems/1\"\n\
                    [[node]]\nname = \"b[1-2]\"\n  [[node.fence]]\n  \
                    endpoint = \"ipmi://[fd00::[1-2]]\"\n";
        // A range inside the address is not one (the brackets nest).
        assert!(Inventory::parse(text, Path::new("i.toml")).is_err());
        let text = text.replace("ipmi://[fd00::[1-2]]", "ipmi://[fd00::7]:62[3-4]");
        let inv = Inventory::parse(&text, Path::new("i.toml")).unwrap();
        let endpoint = |n: &str| inv.node(n).unwrap().methods[0].fields().endpoint;
        assert_eq!(
            endpoint("a").as_deref(),
            Some("redfish://[fe80::1]:8443/redfish/v1/Systems/1")
        );
        assert_eq!(endpoint("b2").as_deref(), Some("ipmi://[fd00::7]:624"));
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
        let e = Inventory::parse(&text.replace("25%", "250%"), Path::new("i.toml"))
            .unwrap_err()
            .to_string();
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
        let e = Inventory::parse(&again, Path::new("i.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("node 'n99998': defined twice"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        let more =
            format!("{big}[[node]]\nname = \"m[1-2]\"\n[[node.fence]]\nendpoint = \"ipmi://h\"\n");
        let e = Inventory::parse(&more, Path::new("i.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 100000 nodes"), "{e}");
    }

    #[test]
    fn each_range_field_is_expanded_once_whatever_the_number_of_names() {
        // Structural, not timed: lockstep() expanded the endpoint range
        // once per name (a 99,999-name range with an endpoint range never
        // finished); now each field's range is expanded once per [[node]].
        let expansions = |n: usize| {
            let text = format!(
                "[[node]]\nname = \"n[1-{n}]\"\naddress = \"10.1.[1-{n}]\"\n\
                 [[node.fence]]\nendpoint = \"ipmi://bmc[1-{n}]\"\nplug = \"[1-{n}]\"\n\
                 [[node.fence]]\nendpoint = \"redfish://bmc[1-{n}]\"\n\
                 [node.ssh]\nendpoint = \"ssh://root@n[1-{n}]/host\"\n"
            );
            let before = hostrange::expansions();
            let inv = Inventory::parse(&text, Path::new("i.toml")).unwrap();
            assert_eq!(inv.nodes.len(), n);
            let last = &inv.nodes[n - 1];
            assert_eq!(last.address.as_deref(), Some(format!("10.1.{n}").as_str()));
            assert_eq!(
                last.methods[1].fields().endpoint.as_deref(),
                Some(format!("redfish://bmc{n}").as_str())
            );
            assert_eq!(
                last.methods[0].fields().plug.as_deref(),
                Some(n.to_string().as_str())
            );
            hostrange::expansions() - before
        };
        // The name, address, two endpoints, the plug and the ssh endpoint.
        assert_eq!(expansions(3), 6);
        assert_eq!(expansions(5_000), 6);
    }

    #[test]
    fn lines_are_found_without_counting_from_the_start() {
        let text = "a\nb\n\nc";
        let lines = Lines::of(text);
        let naive = |o: usize| text[..o].bytes().filter(|b| *b == b'\n').count() + 1;
        for o in 0..=text.len() {
            assert_eq!(lines.line(o), naive(o), "offset {o}");
        }
        // Nodes far down a file still get their own line.
        let mut text = String::new();
        for i in 1..=2000 {
            text.push_str(&format!(
                "[[node]]\nname = \"n{i}\"\n[[node.fence]]\nendpoint = \"ipmi://b{i}\"\n"
            ));
        }
        let inv = Inventory::parse(&text, Path::new("i.toml")).unwrap();
        assert_eq!(inv.node("n2000").unwrap().line, 4 * 1999 + 2);
        assert!(inv.node("n2001").is_none());
    }

    #[test]
    fn node_by_node_reading_says_what_reading_the_whole_file_says() {
        let nodes = (1..=4)
            .map(|i| {
                format!(
                    "\n[[node]]\nname = \"n{i}\"\n  [[node.fence]]\n  endpoint = \"ipmi://b{i}\"\n"
                )
            })
            .collect::<String>();
        let good = format!(
            "[defaults]\nusername = \"u\"\n{nodes}\n[identity.n2]\nserial = \"S2\"\n\
             [pdu.A]\nendpoint = \"snmp://p\"\n{}",
            nodes.replace("name = \"n", "name = \"m")
        );
        assert!(super::super::sections::node_sections(&good).is_some_and(|s| s.len() == 8));
        let split = Inventory::parse(&good, Path::new("i.toml")).unwrap();
        let doc = toml::from_str::<Doc>(&good).unwrap();
        let whole = Inventory::parse_whole(doc, &good, Path::new("i.toml")).unwrap();
        assert_eq!(split.nodes, whole.nodes);
        assert_eq!(
            split.node("n2").unwrap().methods[0]
                .fields()
                .serial
                .as_deref(),
            Some("S2")
        );
        assert_eq!(split.node("m4").unwrap().line, 45);
        // TOML mistakes in the third node: the reader's own message, lines
        // and all, as when the whole file is read.
        for bad in [
            "  endpoint = \"ipmi://b3\"\n  passwrd = \"x\"\n",
            "  endpoint = \"ipmi://b3\"\n  ipport = \"623\"\n",
            "  endpoint = \"ipmi://b3\"\n  endpoint = \"ipmi://b3\"\n",
            "  endpoint = \"ipmi://b3\n",
            "  endpoint = \"ipmi://b3\"\n[node.fence]\n",
        ] {
            let text = good.replacen("  endpoint = \"ipmi://b3\"\n", bad, 1);
            let e = Inventory::parse(&text, Path::new("i.toml")).unwrap_err();
            let Err(whole) = toml::from_str::<Doc>(&text) else {
                panic!("{bad}: reads whole")
            };
            assert_eq!(
                e.to_string(),
                format!("i.toml: {}", whole.to_string().trim_end()),
                "{bad}"
            );
        }
        // Unusual but valid: read whole.
        let quoted = good.replace("[[node]]\nname = \"n2\"", "[[\"node\"]]\nname = \"n2\"");
        assert_eq!(super::super::sections::node_sections(&quoted), None);
        let inv = Inventory::parse(&quoted, Path::new("i.toml")).unwrap();
        assert_eq!(inv.nodes, whole.nodes);
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
        assert_eq!(a.methods[0].fields().uuid, a.uuid);
        assert_eq!(a.methods[0].fields().serial.as_deref(), Some("S1"));
        assert_eq!(
            a.methods[1].fields().uuid.as_deref(),
            Some(U2),
            "the method's own uuid"
        );
        assert_eq!(
            a.methods[1].fields().serial.as_deref(),
            Some("S1"),
            "the node's serial"
        );
        assert_eq!(
            a.methods[2].fields().uuid,
            None,
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
        assert_eq!(inv.node("n1").unwrap().methods[0].fields().uuid, None);
        let n2 = inv.node("n2").unwrap();
        assert_eq!(n2.methods[0].fields().uuid.as_deref(), Some(U2));
        assert_eq!(n2.methods[0].fields().serial.as_deref(), Some("S2"));
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
            let e = Inventory::parse(&text, Path::new("i.toml"))
                .unwrap_err()
                .to_string();
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
        let e = Inventory::parse(&bad, Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.toml:") && e.contains("max_off_watts"), "{e}");
        let bad = text.replace("accept_bmc_only = true", "accept_bmc_only = \"yes\"");
        assert!(Inventory::parse(&bad, Path::new("p.toml")).is_err());
    }

    #[test]
    fn messages_read_as_they_always_have() {
        const U: &str = "00112233-4455-6677-8899-aabbccddeeff";
        let text = |t: &str| {
            Inventory::parse(t, Path::new("i.toml"))
                .unwrap_err()
                .to_string()
        };
        let fence = "[[node.fence]]\nendpoint = \"ipmi://h\"\n";
        let node = |extra: &str| format!("[[node]]\nname = \"a\"\n{extra}");
        let method = |fields: &str| node(&format!("[[node.fence]]\n{fields}"));
        let m1 = |m: &str| format!("i.toml:2: node 'a': fence method 1: {m}");

        let e = Inventory::load(Path::new("/nonexistent/i.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot read the inventory /nonexistent/i.toml: No such file"),
            "{e}"
        );
        let e = text("x = ");
        assert!(e.starts_with("i.toml: ") && e == e.trim_end(), "{e}");
        let d = |t: &str| text(&format!("[defaults]\n{t}\n"));
        assert!(d("probe_ports = \"x\"").starts_with("i.toml: [defaults] probe_ports: "));
        assert_eq!(
            d("accept_bmc_only = 1"),
            "i.toml: [defaults] accept_bmc_only: expected true or false"
        );
        assert_eq!(
            d("max_off_watts = \"x\""),
            "i.toml: [defaults] max_off_watts: expected a number of watts"
        );
        assert_eq!(
            d("max_off_watts = -1"),
            "i.toml: [defaults] max_off_watts -1 is not a number of watts (0 or more)"
        );
        assert_eq!(
            d("max_fence = \"0%\""),
            "i.toml: [defaults] max-fence '0%': a percentage is 1% to 100%"
        );
        assert!(d("on_confirmed_off = 1").starts_with("i.toml: [defaults] on_confirmed_off: "));
        assert!(d("[defaults.ipmi]\nbogus = 1").starts_with("i.toml: [defaults.ipmi]: "));
        assert!(d("bogus = 1").starts_with("i.toml: [defaults]: "));
        assert_eq!(
            d(&format!("uuid = \"{U}\"")),
            "i.toml: [defaults]: uuid and serial name one machine: set them on a node or one \
             of its methods, not as a default"
        );
        assert_eq!(
            d("[defaults.redfish]\nserial = \"S\""),
            "i.toml: [defaults.redfish]: uuid and serial name one machine: set them on a node \
             or one of its methods, not as a default"
        );

        assert_eq!(
            text(&format!("[[node]]\nname = \" \"\n{fence}")),
            "i.toml:2: a node has an empty name"
        );
        assert_eq!(
            text(&format!("[[node]]\nname = \"n[2-1]\"\n{fence}")),
            format!("i.toml:2: {}", hostrange::expand("n[2-1]").unwrap_err())
        );
        assert_eq!(
            text(&format!(
                "[[node]]\nname = \"n[1-2]\"\nserial = \"S\"\n{fence}"
            )),
            "i.toml:2: node 'n[1-2]' names 2 nodes, but a uuid or serial names one machine: pin \
             each node in [identity.NAME] tables (fencekit check --record-identity prints them)"
        );
        assert_eq!(
            text(&node(&format!("uuid = \"node01\"\n{fence}"))),
            "i.toml:2: node 'a': 'node01' is not a UUID (expected 32 hex digits, as 8-4-4-4-12)"
        );
        assert_eq!(
            text(&node("")),
            "i.toml:2: node 'a': no fencing method ([[node.fence]])"
        );
        assert_eq!(
            text(&node(&format!(
                "serial = \"S\"\n{fence}\n[identity.a]\nserial = \"S\"\n"
            ))),
            "i.toml:2: node 'a': pinned twice: on the node and in [identity.a] (line 7)"
        );
        assert_eq!(
            text(&node(&format!("{fence}[identity.a]\nserial = \"\"\n"))),
            "i.toml:2: node 'a': [identity.a]: the expected serial number is empty"
        );
        assert_eq!(
            text(&node(&format!("{fence}[identity.b]\nserial = \"S\"\n"))),
            "i.toml:5: [identity.b]: no node 'b' in the inventory"
        );
        assert_eq!(
            text(&method("endpoint = \"ipmi://h\"\nserial = \" \"\n")),
            m1("the expected serial number is empty")
        );
        assert_eq!(
            text("[[node]]\nname = \"n[1-3]\"\n[[node.fence]]\nendpoint = \"ipmi://h[1-2]\"\n"),
            "i.toml:2: node 'n1': endpoint 'ipmi://h[1-2]' expands to 2 values but the name to 3"
        );
        assert_eq!(
            text(&format!(
                "[[node]]\nname = \"n[1-3]\"\naddress = \"h[3-1]\"\n{fence}"
            )),
            format!(
                "i.toml:2: node 'n1': {}",
                hostrange::expand("h[3-1]").unwrap_err()
            )
        );
        let checks: [(&str, &str); 14] = [
            (
                "endpoint = \"ipmi://h\"\npassword = \"x\"",
                "plain passwords are not accepted in an inventory: use password_file, \
                 password_env or password_script",
            ),
            (
                "endpoint = \"ipmi://h\"\npassword_env = \"X\"\npassword_file = \"/x\"",
                "give only one of password_file, password_env and password_script",
            ),
            (
                "ip = \"h\"",
                "no driver: set driver = \"ipmi\" or an endpoint such as ipmi://HOST",
            ),
            (
                "endpoint = \"snmp://p\"",
                "an snmp method needs outlets = [\"7\"] (or [\"A:7\", \"B:7\"] with [pdu.A] and \
                 [pdu.B])",
            ),
            (
                "driver = \"snmp\"\noutlets = [\"7\"]",
                "an snmp method needs endpoint = \"snmp://HOST[:PORT]\" for outlets that name \
                 no [pdu.NAME]",
            ),
            (
                "endpoint = \"snmp://p\"\noutlets = [\"7\"]\ncommunity = \"public\"",
                "plain communities are not accepted: use community_file, community_env or \
                 community_script",
            ),
            (
                "endpoint = \"snmp://p\"\noutlets = [\"7\"]\npriv_password = \"x\"",
                "plain passwords are not accepted: use priv_password_file, priv_password_env or \
                 priv_password_script",
            ),
            (
                "endpoint = \"snmp://p:x\"\noutlets = [\"7\"]",
                "'snmp://p:x': the port is not between 1 and 65535",
            ),
            (
                "driver = \"ipmi\"",
                "an ipmi method needs endpoint = \"ipmi://HOST[:PORT]\" or ip",
            ),
            (
                "driver = \"redfish\"",
                "a redfish method needs endpoint = \
                 \"redfish://HOST[:PORT][/redfish/v1/Systems/ID]\" or ip",
            ),
            (
                "endpoint = \"redfish://h\"\nssl_insecure = true\nca_cert = \"/c\"",
                "give only one of ca_cert, ssl_fingerprint and ssl_insecure",
            ),
            (
                "driver = \"ssh\"",
                "an ssh method needs endpoint = \"ssh://USER@HOST[:PORT]/virsh/DOMAIN\" (or /host)",
            ),
            (
                "driver = \"manual\"\nserial = \"S\"",
                "a manual method has no device that could report an identity (pin the node \
                 instead)",
            ),
            (
                "endpoint = \"snmp://p\"\noutlets = [\"7\"]\nserial = \"S\"",
                "a PDU outlet has no device that could report an identity (pin the node \
                 instead)",
            ),
        ];
        for (fields, want) in checks {
            assert_eq!(text(&method(&format!("{fields}\n"))), m1(want), "{fields}");
        }
        // Every platform added lengthens the list: its ends are what stays.
        let unknown = text(&method("driver = \"nosuch\"\nip = \"h\"\n"));
        let head = m1("unknown driver 'nosuch' (expected ipmi, redfish, ssh, snmp, aws, ");
        assert!(
            unknown.starts_with(&head)
                && unknown.contains(", azure")
                && unknown.ends_with(" or manual)"),
            "{unknown}"
        );
        let pdu = |fields: &str| {
            text(&format!(
                "{}[pdu.A]\n{fields}\n",
                method("driver = \"snmp\"\noutlets = [\"A:1\"]\n")
            ))
        };
        assert_eq!(
            pdu("endpoint = \"snmp://a\"\ncommunity = \"x\""),
            m1(
                "[pdu.A]: plain communities are not accepted: use community_file, community_env \
                or community_script"
            )
        );
        assert_eq!(
            pdu("endpoint = \"snmp://a\"\npriv_password = \"x\""),
            m1(
                "[pdu.A]: plain passwords are not accepted: use priv_password_file, \
                priv_password_env or priv_password_script"
            )
        );
        assert_eq!(
            pdu("profile = \"apc\""),
            m1("[pdu.A]: a PDU needs endpoint = \"snmp://HOST[:PORT]\"")
        );
        assert_eq!(
            pdu("endpoint = \"ipmi://a\""),
            m1("[pdu.A]: 'ipmi://a' is not an snmp:// endpoint")
        );
        let twice = format!("{}{}", node(fence), node(fence));
        assert_eq!(text(&twice), "i.toml:6: node 'a': defined twice");
        assert_eq!(
            text(&node(&format!(
                "{fence}[node.ssh]\nendpoint = \"ssh://u@a/host\"\nserial = \"S\"\n"
            ))),
            "i.toml:2: node 'a': [node.ssh] reaches the node itself; a uuid or serial belongs on \
             the node or one of its fence methods"
        );
        assert_eq!(
            text(&node(&format!("{fence}[node.ssh]\nip = \"a\"\n"))),
            "i.toml:2: node 'a': [node.ssh]: an ssh method needs endpoint = \
             \"ssh://USER@HOST[:PORT]/virsh/DOMAIN\" (or /host)"
        );
        assert_eq!(
            text(&node(&format!(
                "{fence}[[node.check]]\nname = \"c\"\ncommand = \"true\"\n"
            ))),
            "i.toml:2: node 'a': [[node.check]] needs [node.ssh] (how to reach the node itself)"
        );
        let check = "[[node.check]]\nname = \"c\"\ncommand = \"true\"\n";
        assert_eq!(
            text(&node(&format!(
                "{fence}[node.ssh]\nendpoint = \"ssh://u@a/host\"\n{check}{check}"
            ))),
            "i.toml:2: node 'a': two checks have the same name"
        );
        assert_eq!(
            text(&node(&format!("max_off_watts = -2.5\n{fence}"))),
            "i.toml:2: node 'a': max_off_watts -2.5 is not a number of watts (0 or more)"
        );
        assert_eq!(
            NodeProblem::TooMany.to_string(),
            format!(
                "the inventory names more than {} nodes",
                hostrange::MAX_EXPANSION
            )
        );
    }
}
