//! Nutanix AHV (issue 40): virtual machines through Prism Central's v4
//! API, as upstream's fence_nutanix_ahv speaks it. [`model`] is what the
//! answers mean for fencing (pure: VMs, tasks, a host's connection and the
//! rule that decides off), [`client`] the Basic-auth client on the shared
//! HTTP layer, [`driver`] the engine's `PowerDriver` for one VM (and the
//! listing). On the platform seam: [`config`]
//! (`nutanix://[USER@]PRISM[:PORT]/VM` targets), [`build`] (settings from
//! the method options), [`platform`] (the `Platform`, its `Method`),
//! [`agent`] (the fence_nutanix_ahv family), [`facts`] (check and drift).
//! docs/hypervisors.md is the user's guide; the peer is
//! `tests/peers/nutanix_api.py`.

pub mod agent;
pub mod build;
pub mod client;
pub mod config;
pub mod driver;
pub mod facts;
pub mod model;
pub mod platform;
