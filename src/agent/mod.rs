//! The ClusterLabs fence-agent front: `fence_ipmilan` and its aliases,
//! `fence_redfish` and `fence_virsh`, run as upstream's fence-agents 4.12 would be (argv and stdin parsing,
//! validation, metadata XML, man page, result lines and exit codes 0/1/2).
//!
//! Everything is driven by the definitions under `agents/` ([`defs`]); the
//! engine does the fencing. Entry points: [`run::main`] and [`run::known_agent`].

pub mod aws;
pub mod defs;
#[cfg(test)]
mod defs_source;
pub mod device;
pub mod families;
pub mod getopt;
pub mod ipmilan;
pub mod key;
pub mod kubevirt;
pub mod log;
pub mod man;
pub mod metadata;
pub mod redfish;
pub mod run;
pub mod snmp;
pub mod stdin;
pub mod usage;
pub mod values;
pub mod virsh;
pub mod vmware_rest;
