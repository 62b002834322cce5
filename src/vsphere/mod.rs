//! vSphere (vim25 SOAP) — the protocol pieces of the `vsphere` platform
//! (issue 32): the requests fencekit sends and the answers it reads
//! ([`soap`]), and what those answers mean for fencing ([`model`]): which VM
//! a target names, when a power state is evidence, what a task's end says.
//!
//! [`client`] is the SOAP session over HTTPS (the shared trust of
//! [`crate::tls`]), [`driver`] the engine's `PowerDriver` on it. On the
//! platform seam: [`config`] (`vsphere://[USER@]HOST[:PORT]/VM` targets),
//! [`build`] (settings from the method options), [`platform`] (the
//! `Platform`, its `Method`). docs/vsphere.md is the user's guide. The
//! peers are `tests/peers/vcsim` (vim25, govmomi's simulator) and
//! `tests/peers/vsphere_rest.py` (the Automation API).

pub mod agent_rest;
pub mod agent_soap;
pub mod build;
pub mod client;
pub mod config;
pub mod driver;
pub mod facts;
pub mod model;
pub mod platform;
pub mod rest;
pub mod soap;
