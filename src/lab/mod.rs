//! The lab: simulated BMCs on loopback for rehearsal, demos and tests.
//!
//! * [`bmc`]: the simulated chassis (power, transitions, faults, counters);
//! * [`ipmi`]: an IPMI BMC (RMCP+ suites 3/17 and IPMI 1.5) on one UDP socket;
//! * [`redfish`]: a Redfish service (HTTP/HTTPS) on the same chassis;
//! * [`pdu`]: a switched PDU (SNMP v1/v2c/v3) whose outlets feed lab machines;
//! * [`host`]: the node's own host, answering on a TCP port while really powered;
//! * [`fleet`]: starting N nodes at once, in-process;
//! * [`knobs`]: the `--fault` knobs, parsed and applied.
//!
//! `fencekit lab` and `fencekit demo` live in the CLI front
//! (`cli::lab`, `cli::demo`); the lab is only the model.

pub mod bmc;
pub mod fleet;
pub mod host;
pub mod ipmi;
pub mod knobs;
pub mod pdu;
pub mod redfish;
