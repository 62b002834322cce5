//! vSphere (vim25 SOAP) — the protocol pieces of the `vsphere` platform
//! (issue 32): the requests fencekit sends and the answers it reads
//! ([`soap`]), and what those answers mean for fencing ([`model`]): which VM
//! a target names, when a power state is evidence, what a task's end says.
//!
//! [`client`] is the SOAP session over HTTPS, [`driver`] the engine's
//! `PowerDriver` on it. Not wired yet:
//! no front, no inventory driver, no TLS policy of its own. The peers
//! are `tests/peers/vcsim` (vim25, govmomi's simulator) and
//! `tests/peers/vsphere_rest.py` (the Automation API).

pub mod client;
pub mod driver;
pub mod model;
pub mod rest;
pub mod soap;
