//! fencekit: a fencing (STONITH) toolkit.
//!
//! The library holds everything the `fencekit` binary does, so that the
//! integration tests, the fuzz targets and the benchmarks can use it too:
//!
//! * [`ipmi`]: IPMI v2.0 RMCP+ and v1.5 LAN — codec, session state machine,
//!   crypto and UDP transport;
//! * [`engine`]: protocol-independent action semantics (send, wait, poll,
//!   confirm), deadlines and events; it never prints;
//! * [`cli`]: the native command-line front (`fencekit status|on|off|…`);
//! * [`agent`]: the ClusterLabs fence-agent front (`fence_ipmilan` & co.),
//!   driven by the definitions under `agents/`;
//! * [`kdump`]: the fence_kdump protocol's receiving side (crash dump first);
//! * [`lab`]: simulated BMCs for rehearsal, demos and tests.

/// Prints a line to stdout, ignoring a closed pipe (`fencekit … | head`):
/// a fencing action must never die half-way because its reader went away.
#[macro_export]
macro_rules! outln {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod agent;
pub mod amt;
pub mod aws;
pub mod azure;
pub mod cli;
pub mod doctor;
pub mod engine;
pub mod eps;
pub mod exit;
pub mod fingerprint;
pub mod fleet;
pub mod gce;
pub mod http;
pub mod ibm;
pub mod ipmi;
pub mod kdump;
pub mod kubevirt;
#[cfg(feature = "lab")]
pub mod lab;
pub mod lock;
pub mod method;
pub mod nutanix;
pub mod openstack;
pub mod ovirt;
pub mod parse;
pub mod platform;
pub mod private;
pub mod pve;
pub mod redfish;
pub mod ribcl;
pub mod runtime;
pub mod script;
pub mod secret;
pub mod snmp;
pub mod ssh;
pub mod time;
pub mod tls;
pub mod ucs;
pub mod udp;
pub mod vsphere;

/// Every name this binary answers to as a fence agent. Matching argv[0]
/// against this list costs nothing, so native commands never parse the
/// agent definitions; a test keeps it equal to what `agents/` defines.
pub const AGENT_NAMES: &[&str] = &[
    "fence_idrac",
    "fence_ilo3",
    "fence_ilo4",
    "fence_ilo5",
    "fence_imm",
    "fence_ipmilan",
    "fence_ipmilanplus",
    "fence_redfish",
    "fence_virsh",
    "fence_apc_snmp",
    "fence_tripplite_snmp",
    "fence_eaton_snmp",
    "fence_ibmblade",
    "fence_intelmodular",
    "fence_ipdu",
    "fence_ifmib",
    "fence_emerson",
    "fence_aws",
    "fence_kubevirt",
    "fence_vmware_soap",
    "fence_vmware_rest",
    "fence_azure_arm",
    "fence_pve",
    "fence_nutanix_ahv",
    "fence_rhevm",
    "fence_openstack",
    "fence_eps",
    "fence_cisco_ucs",
    "fence_amt_ws",
    "fence_ilo",
    "fence_ilo2",
    "fence_gce",
    "fence_ibm_vpc",
    "fence_ibm_powervs",
];

/// True when `name` (argv[0]'s file name) is a fence agent this binary can be.
pub fn agent_known(name: &str) -> bool {
    AGENT_NAMES.contains(&name) && agent::run::known_agent(name)
}

/// Runs the fence-agent front as `name` with `args` (argv without argv[0]).
pub fn agent_entry(name: &str, args: Vec<std::ffi::OsString>) -> i32 {
    agent::run::main(name, args)
}

#[cfg(test)]
mod tests {
    #[test]
    fn agent_names_match_the_definitions() {
        let mut defined = super::agent::run::agent_names();
        defined.sort_unstable();
        for name in &defined {
            assert!(
                super::AGENT_NAMES.contains(name),
                "{name} is defined but not in AGENT_NAMES"
            );
        }
        for name in super::AGENT_NAMES {
            assert!(
                defined.contains(name),
                "{name} is in AGENT_NAMES but not defined"
            );
        }
    }
}
