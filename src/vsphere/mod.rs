//! vSphere (vim25 SOAP) — the protocol pieces of the `vsphere` platform
//! (issue 32): the requests fencekit sends and the answers it reads
//! ([`soap`]), and what those answers mean for fencing ([`model`]): which VM
//! a target names, when a power state is evidence, what a task's end says.
//!
//! Not wired yet: no HTTP transport, no `PowerDriver`, no front. The peers
//! are `tests/peers/vcsim` (vim25, govmomi's simulator) and
//! `tests/peers/vsphere_rest.py` (the Automation API).

pub mod model;
pub mod soap;
