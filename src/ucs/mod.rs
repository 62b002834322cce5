//! Cisco UCS Manager: a service profile's server powered through UCS
//! Manager's XML API (`POST /nuova`), as upstream's fence_cisco_ucs speaks
//! it. [`model`] is what the answers mean (pure: an XML answer's method,
//! its error, the objects it carries, and the rule that decides off),
//! [`client`] the session (aaaLogin's cookie, one login again on 552,
//! aaaLogout always) on the shared HTTP layer, [`driver`] the engine's
//! `PowerDriver` for one service profile (and the listing). On the
//! platform seam: [`config`] (`ucs://[USER@]UCSM[:PORT]/[ORG/]PROFILE`
//! targets), [`build`], [`platform`], [`agent`] (the fence_cisco_ucs
//! family). docs/ucs.md is the user's guide; the peer is
//! `tests/peers/ucs_api.py`.

pub mod agent;
pub mod build;
pub mod client;
pub mod config;
pub mod driver;
pub mod model;
pub mod platform;
