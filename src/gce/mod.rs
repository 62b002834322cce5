//! Google Compute Engine as a fencing device: an instance is stopped
//! without waiting for its guest (`stop?noGracefulShutdown=true`), started,
//! reset and read through the Compute Engine API (v1) over HTTPS, each
//! zone operation followed to `DONE` and its error read.
//!
//! * [`config`]: what a caller sets (project, zone, instance, the zones a
//!   list covers, credentials, endpoint, proxy), `gce://` targets, the
//!   lock key, the environment Google's libraries read;
//! * [`credentials`]: tokens from a service-account key (a JWT signed
//!   RS256 through [`crate::http::jwt`]) or the metadata server;
//! * [`model`]: pure decisions over the JSON answers — statuses (suspended
//!   is never off), answers about another instance, operations, errors;
//! * [`driver`]: the engine's [`crate::engine::driver::PowerDriver`];
//! * [`build`], [`platform`], [`agent`], [`facts`]: the platform seam, its
//!   settings, the fence_gce family, drift.
//!
//! Evidence: the API sees the instance from outside it, so its reading is
//! a witness independent of the guest.

pub mod agent;
pub mod build;
pub mod config;
pub mod credentials;
pub mod driver;
pub mod facts;
pub mod model;
pub mod platform;
