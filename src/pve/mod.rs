//! Proxmox VE (issue 40): QEMU virtual machines and LXC containers through
//! the cluster's REST API (`/api2/json`). [`model`] is what the answers
//! mean for fencing (pure: the ticket, resources, a guest's status and the
//! rule that decides off, tasks), [`client`] the session (a ticket with its
//! CSRF token, or an API token) on the shared HTTP layer, [`driver`] the
//! engine's `PowerDriver` for one guest (and the listing). On the platform
//! seam: [`config`] (`pve://[USER@]HOST[:PORT]/[NODE/]VM` targets),
//! [`build`] (settings from the method options), [`platform`] (the
//! `Platform`, its `Method`), [`args`] (native flags), [`agent`] (the
//! fence_pve family), [`facts`] (check and drift). docs/hypervisors.md is
//! the user's guide; the peer is `tests/peers/pve_api.py`.

pub mod agent;
pub mod args;
pub mod build;
pub mod client;
pub mod config;
pub mod driver;
pub mod facts;
pub mod model;
pub mod platform;
