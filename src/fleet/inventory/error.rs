//! Why an inventory cannot be used: each level of the file adds its own
//! part of the text (`path:line: node 'N': fence method K: …`).

use crate::engine::identity::IdentityError;
use crate::fleet::hostrange::RangeError;
use std::path::PathBuf;

/// Why an inventory cannot be used. The texts are what users read: the
/// file, and where it names one, the line of the node.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// The file cannot be read.
    #[error("cannot read the inventory {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not TOML, or a field that is not one of the inventory's (the TOML
    /// reader's message names the line).
    #[error("{}: {}", path.display(), source.to_string().trim_end())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The TOML reader's error.
        source: Box<toml::de::Error>,
    },
    /// Something wrong in `[defaults]` or `[defaults.DRIVER]`.
    #[error("{}: {problem}", path.display())]
    Defaults {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: Box<DefaultsProblem>,
    },
    /// Something wrong with the `[[node]]` whose name is on `line`.
    #[error("{}:{line}: {problem}", path.display())]
    Node {
        /// The file.
        path: PathBuf,
        /// The line of the node's name.
        line: usize,
        /// What is wrong.
        problem: Box<NodeProblem>,
    },
    /// An `[identity.NAME]` table (on `line`) for no node.
    #[error("{}:{line}: [identity.{name}]: no node '{name}' in the inventory", path.display())]
    UnusedPin {
        /// The file.
        path: PathBuf,
        /// The table's line.
        line: usize,
        /// The name it gives.
        name: String,
    },
}

/// What is wrong in `[defaults]` (the table is part of the text).
#[derive(Debug, thiserror::Error)]
pub enum DefaultsProblem {
    /// `probe_ports` that is not a list of ports.
    #[error("[defaults] probe_ports: {0}")]
    ProbePorts(toml::de::Error),
    /// A switch (`accept_bmc_only`, `allow_host_only`) that is not a boolean.
    #[error("[defaults] {0}: expected true or false")]
    NotBool(&'static str),
    /// `max_off_watts` that is not a number.
    #[error("[defaults] max_off_watts: expected a number of watts")]
    WattsNotNumber,
    /// `max_off_watts` that is a number but no number of watts.
    #[error("[defaults] {0}")]
    Watts(BadWatts),
    /// `max_fence` that is not a limit.
    #[error("[defaults] {0}")]
    MaxFence(#[from] crate::fleet::guard::BadLimit),
    /// `on_confirmed_off` that is not a command.
    #[error("[defaults] on_confirmed_off: {0}")]
    OnConfirmedOff(toml::de::Error),
    /// A `[defaults.DRIVER]` table with a field that is not a method's.
    #[error("[defaults.{driver}]: {source}")]
    Driver {
        /// The driver.
        driver: &'static str,
        /// The TOML reader's error.
        source: toml::de::Error,
    },
    /// A `[defaults]` field that is not a method's.
    #[error("[defaults]: {0}")]
    Fields(toml::de::Error),
    /// A uuid or serial in the table named (`[defaults]`, `[defaults.ipmi]` …).
    #[error(
        "{0}: uuid and serial name one machine: set them on a node or \
         one of its methods, not as a default"
    )]
    Pinned(String),
}

/// A `max_off_watts` that is not a number of watts (the number given).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("max_off_watts {0} is not a number of watts (0 or more)")]
pub struct BadWatts(pub f64);

/// What is wrong with a `[[node]]` (its line is added by [`InventoryError`]).
#[derive(Debug, thiserror::Error)]
pub enum NodeProblem {
    /// A blank name.
    #[error("a node has an empty name")]
    EmptyName,
    /// A name that is not a host range.
    #[error(transparent)]
    Range(#[from] RangeError),
    /// A uuid or serial on a range of nodes.
    #[error(
        "node '{pattern}' names {count} nodes, but a uuid or serial names one machine: \
         pin each node in [identity.NAME] tables (fencekit check --record-identity \
         prints them)"
    )]
    RangePinned {
        /// The name as written.
        pattern: String,
        /// How many nodes it names.
        count: usize,
    },
    /// A node pin that is not a UUID or serial.
    #[error("node '{pattern}': {source}")]
    Pin {
        /// The name as written.
        pattern: String,
        /// Why.
        source: IdentityError,
    },
    /// More nodes in the file than one inventory may hold.
    #[error(
        "the inventory names more than {} nodes",
        crate::fleet::hostrange::MAX_EXPANSION
    )]
    TooMany,
    /// Something wrong with one node of the `[[node]]`.
    #[error("node '{name}': {problem}")]
    At {
        /// The node (one name of a range).
        name: String,
        /// What is wrong.
        problem: NamedProblem,
    },
}

/// What is wrong with one named node (the name is added by
/// [`NodeProblem::At`]).
#[derive(Debug, thiserror::Error)]
pub enum NamedProblem {
    /// No `[[node.fence]]`.
    #[error("no fencing method ([[node.fence]])")]
    NoMethod,
    /// A pin on the node and in `[identity.NAME]` (that table's line).
    #[error("pinned twice: on the node and in [identity.{name}] (line {line})")]
    PinnedTwice {
        /// The node.
        name: String,
        /// The line of `[identity.NAME]`.
        line: usize,
    },
    /// An `[identity.NAME]` that is not a UUID or serial.
    #[error("[identity.{name}]: {source}")]
    IdentityTable {
        /// The node.
        name: String,
        /// Why.
        source: IdentityError,
    },
    /// Something wrong with the fence method at `level` (1 first).
    #[error("fence method {level}: {problem}")]
    Method {
        /// Its level, 1 first.
        level: usize,
        /// What is wrong.
        problem: MethodProblem,
    },
    /// A range field that does not expand in step with the name.
    #[error(transparent)]
    Lockstep(#[from] LockstepError),
    /// The name appears twice in the file.
    #[error("defined twice")]
    Twice,
    /// A pin on the node's own session method.
    #[error(
        "{key} reaches the node itself; a uuid or serial belongs on \
         the node or one of its fence methods",
        key = super::fields::NODE_SESSION
    )]
    SessionPinned,
    /// Something wrong with the node's own session method.
    #[error("{key}: {0}", key = super::fields::NODE_SESSION)]
    Session(MethodProblem),
    /// Checks without a session method.
    #[error(
        "[[node.check]] needs {key} (how to reach the node itself)",
        key = super::fields::NODE_SESSION
    )]
    ChecksWithoutSession,
    /// Two `[[node.check]]` of one name.
    #[error("two checks have the same name")]
    SameCheckName,
    /// The node's `max_off_watts`.
    #[error(transparent)]
    Watts(#[from] BadWatts),
}

/// A field holding a range that does not pick one value per node.
#[derive(Debug, thiserror::Error)]
pub enum LockstepError {
    /// A range that does not expand.
    #[error(transparent)]
    Range(#[from] RangeError),
    /// A range of another length than the name's.
    #[error("{field} '{value}' expands to {got} values but the name to {want}")]
    Count {
        /// The field (`endpoint`, `ip`, `outlet` …).
        field: &'static str,
        /// Its text.
        value: String,
        /// How many values it expands to.
        got: usize,
        /// How many names the node has.
        want: usize,
    },
}

/// What is wrong with one method's fields (after the defaults are merged).
#[derive(Debug, thiserror::Error)]
pub enum MethodProblem {
    /// A pin that is not a UUID or serial.
    #[error(transparent)]
    Pin(#[from] IdentityError),
    /// A pin on a method with no device to report one (`a manual method`,
    /// `a PDU outlet`).
    #[error("{0} has no device that could report an identity (pin the node instead)")]
    Blind(&'static str),
    /// A password in the file.
    #[error(
        "plain passwords are not accepted in an inventory: use password_file, \
         password_env or password_script"
    )]
    PlainPassword,
    /// More than one password source.
    #[error("give only one of password_file, password_env and password_script")]
    TwoPasswords,
    /// Neither a driver nor an endpoint.
    #[error(
        "no driver: set driver = \"{0}\" or an endpoint such as {0}://HOST",
        crate::method::platforms::DEFAULT.name()
    )]
    NoDriver,
    /// What the driver's platform finds wrong with the fields
    /// (`Platform::check_fields`: an address it needs, settings that
    /// contradict).
    #[error("{0}")]
    Platform(String),
    /// A driver that is not one of fencekit's.
    #[error("unknown driver '{0}' (expected {})", drivers())]
    UnknownDriver(String),
}

/// The drivers an inventory method may name: `a, b or manual`.
fn drivers() -> String {
    let names: Vec<&str> = crate::method::platforms::PLATFORMS
        .iter()
        .map(|p| p.name())
        .collect();
    format!("{} or manual", names.join(", "))
}
