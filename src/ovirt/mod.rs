//! oVirt / Red Hat Virtualization (issue 40): virtual machines through the
//! engine's REST API v4 (`/ovirt-engine/api`, XML). [`model`] is what the
//! answers mean for fencing (pure: VMs, the status rule that decides off,
//! actions and their jobs, faults), [`client`] the session (Basic
//! authentication, optionally the engine's session cookie, the `Filter`
//! header for user-level permissions) on the shared HTTP layer, [`driver`]
//! the engine's `PowerDriver` for one VM (and the listing). On the platform
//! seam: [`config`] (`ovirt://[USER@]ENGINE[:PORT]/VM` targets), [`build`]
//! (settings from the method options), [`platform`] (the `Platform`, its
//! `Method`), [`agent`] (the fence_rhevm family). docs/hypervisors.md is
//! the user's guide; the peer is `tests/peers/ovirt_api.py`.

pub mod agent;
pub mod args;
pub mod build;
pub mod client;
pub mod config;
pub mod driver;
pub mod facts;
pub mod model;
pub mod platform;
