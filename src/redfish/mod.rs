//! Redfish over HTTPS (or plain HTTP when asked): power state and
//! `ComputerSystem.Reset` for one system behind a BMC's Redfish service.
//!
//! The same split as [`crate::ipmi`], as far as HTTP allows:
//!
//! * [`config`]: what a caller sets (endpoint, credentials, system choice,
//!   TLS trust) and the Metal3/Ironic URL forms (`redfish://…`);
//! * [`model`]: pure decisions over parsed JSON — discovery, `PowerState`,
//!   the reset types on offer and the one each intent uses, Task states, and
//!   the classification of error answers into [`crate::engine::error::ErrorKind`];
//!   no I/O;
//! * [`tls`]: the rustls certificate verifier (system roots, a private CA,
//!   an exactly pinned certificate, a SHA-256 fingerprint, or insecure);
//! * [`http`]: one reqwest client per action, request deadlines, bounded bodies,
//!   transport error classification;
//! * [`driver`]: the engine's [`crate::engine::driver::PowerDriver`] over all of it.

pub mod agent;
pub mod args;
pub mod build;
pub mod config;
pub mod driver;
pub mod facts;
pub mod http;
pub mod model;
pub mod platform;
pub mod tls;
