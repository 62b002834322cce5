//! What a platform needs to serve a ClusterLabs agent family (`fence_*`):
//! the agent definitions as data ([`defs`], compiled from `agents/*.toml`),
//! the option keys ([`key::Key`]), the values an invocation set with
//! upstream's semantics ([`values`]), and what a family hands back to the
//! agent front: its device configuration ([`Device`]), declared through
//! [`AgentFamily`] by `Platform::agent_family`.
//!
//! They live in the seam, below the protocols, so that a platform's family
//! code sits in its own folder (`src/NAME/agent.rs`); the front
//! (`crate::agent`: argv, stdin, timing, output) re-exports them and finds a
//! family through the platform registry, never by naming a platform.

pub mod defs;
#[cfg(test)]
mod defs_source;
pub mod key;
pub mod values;

use defs::Agent;
use values::Values;

/// One device's configuration, as its family reads it from the agent's
/// options (secrets already read).
pub trait Device: std::fmt::Debug {
    /// The key of the per-device lock, the same a native fencekit takes
    /// for this endpoint (so agents and native runs serialise with each
    /// other); `None` where there is nothing to lock (an SNMP agent
    /// without a PDU).
    fn lock_key(&self) -> Option<crate::lock::DeviceKey>;
    /// A one-line description for `-v` (never a secret).
    fn describe(&self) -> String;
    /// Warnings said before acting (an old PDU's legacy security).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Makes the real driver (checks what can be checked offline;
    /// connects to nothing).
    fn driver(self: Box<Self>) -> Result<Box<dyn super::Driver>, String>;
    /// For tests and the family's own code: its concrete type.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// The configuration of one device, whatever its family.
pub type DeviceConfig = Box<dyn Device>;

/// How a platform serves an agent family: one `static` in the platform's
/// `agent.rs`, handed out by `Platform::agent_family` for the definitions
/// whose `driver` names the platform. Everything else an agent does
/// (parsing, validation, timing, output) is the front's.
pub struct AgentFamily {
    /// The device configuration from the agent's validated option values
    /// (the password script, if any, has already replaced `password`). The
    /// error is a message that reads after "Failed: ".
    pub config: fn(&Values, &Agent) -> Result<DeviceConfig, String>,
    /// Whether `list` / `list-status` list plugs (otherwise upstream's
    /// notice that the device has none to list).
    pub lists: bool,
    /// Upstream's input checks that only this family has, after the shared
    /// ones ([`values::validate`]): each failure's message.
    pub check: fn(&Values, &Agent) -> Vec<String>,
    /// The family's options its code reads by their definition's name
    /// (`values.has_named`) rather than through a [`key::Key`]: a key that
    /// would name the platform in shared code. A test keeps every defined
    /// option either a `Key` or listed here.
    pub read_by_name: &'static [&'static str],
    /// What the device's vendor documents for its Pacemaker resource or
    /// cluster (`pcmk_reboot_timeout = 900`, `pcmk_action_limit = 3`,
    /// `stonith-action = off`): the doctor compares a configuration with
    /// it and says where it falls short, naming the vendor's guide.
    pub guide: &'static [Guidance],
}

/// One setting a device's vendor documents for fencing it under Pacemaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guidance {
    /// The resource parameter or cluster property (`pcmk_reboot_timeout`,
    /// `pcmk_delay_max`, `stonith-action`), as Pacemaker spells it.
    pub key: &'static str,
    /// The value the guide gives (seconds as a number, or a word).
    pub value: &'static str,
    /// How a configured value is judged against it.
    pub rule: GuideRule,
    /// Whose guide says so (`Azure's Pacemaker guide`).
    pub source: &'static str,
}

/// How a configured value is judged against a [`Guidance`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuideRule {
    /// The configured value must be at least the guide's (a timeout).
    AtLeast,
    /// At most the guide's (a concurrency limit).
    AtMost,
    /// Exactly the guide's (an action).
    Equal,
}

impl AgentFamily {
    /// A family built by `config` that lists no plugs and has no checks of
    /// its own (change fields with `..AgentFamily::new(config)`).
    pub const fn new(config: fn(&Values, &Agent) -> Result<DeviceConfig, String>) -> Self {
        AgentFamily {
            config,
            lists: false,
            check: no_checks,
            read_by_name: &[],
            guide: &[],
        }
    }
}

fn no_checks(_: &Values, _: &Agent) -> Vec<String> {
    Vec::new()
}
