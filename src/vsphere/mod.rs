//! vSphere (vim25 SOAP) — the protocol pieces of the `vsphere` platform
//! (issue 32): the requests fencekit sends and the answers it reads
//! ([`soap`]), and what those answers mean for fencing ([`model`]): which VM
//! a target names, when a power state is evidence, what a task's end says.
//!
//! [`client`] is the SOAP session over HTTPS. Not wired yet: no `PowerDriver`,
//! no front, no inventory driver. The peers
//! are `tests/peers/vcsim` (vim25, govmomi's simulator) and
//! `tests/peers/vsphere_rest.py` (the Automation API).

pub mod client;
pub mod model;
pub mod soap;
