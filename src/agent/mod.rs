//! The ClusterLabs fence-agent front: `fence_ipmilan` and its aliases,
//! `fence_redfish`, `fence_virsh` and the rest, run as upstream's
//! fence-agents 4.12 would be (argv and stdin parsing, validation, metadata
//! XML, man page, result lines and exit codes 0/1/2).
//!
//! Everything is driven by the definitions under `agents/` ([`defs`]); each
//! family's configuration is its platform's ([`families`] finds it through
//! the platform registry); the engine does the fencing. Entry points:
//! [`run::main`] and [`run::known_agent`].

pub mod device;
pub mod families;
pub mod getopt;
pub mod log;
pub mod man;
pub mod metadata;
pub mod run;
pub mod stdin;
pub mod usage;

/// The definitions, option keys and values live in the platform seam (a
/// platform's family code reads them); the front's paths stay these.
pub use crate::platform::agent::{defs, key, values};
