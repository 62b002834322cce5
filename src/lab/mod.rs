//! The lab: simulated BMCs on loopback for rehearsal, demos and tests.
//!
//! * [`bmc`]: the simulated chassis (power, transitions, faults, counters);
//! * [`ipmi`]: an IPMI BMC (RMCP+ suites 3/17 and IPMI 1.5) on one UDP socket;
//! * [`fleet`]: starting N nodes at once, in-process;
//! * [`serve`]: `fencekit lab`;
//! * [`demo`]: `fencekit demo`.

pub mod bmc;
pub mod demo;
pub mod fleet;
pub mod ipmi;
pub mod redfish;
pub mod serve;
