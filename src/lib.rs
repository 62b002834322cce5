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
//! * [`lab`]: simulated BMCs for rehearsal, demos and tests.

pub mod agent;
pub mod cli;
pub mod engine;
pub mod exit;
pub mod fleet;
pub mod ipmi;
pub mod lab;
pub mod redfish;
pub mod secret;
pub mod ssh;

/// True when `name` (argv[0]'s file name) is a fence agent this binary can be.
pub fn agent_known(name: &str) -> bool {
    agent::run::known_agent(name)
}

/// Runs the fence-agent front as `name` with `args` (argv without argv[0]).
pub fn agent_entry(name: &str, args: Vec<std::ffi::OsString>) -> i32 {
    agent::run::main(name, args)
}
