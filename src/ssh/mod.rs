//! Fencing over SSH (pure Rust: the `russh` client on tokio, crypto from
//! `ring` and RustCrypto, no OpenSSL): a libvirt
//! hypervisor (`virsh`, the `fence_virsh` behaviour), the node itself
//! (`host`), or command templates from an agent definition (`custom`).
//!
//! The same split as [`crate::redfish`]:
//!
//! * [`config`]: what a caller sets (endpoint, credentials, host key trust,
//!   profile, timeouts) and the `ssh://` target forms;
//! * [`profile`]: pure decisions — the command line for each intent, plug
//!   validation and shell quoting, and the reading of `virsh` and custom
//!   command output into power states and
//!   [`crate::engine::error::ErrorKind`]s; no I/O;
//! * [`hostkey`]: fingerprints, known_hosts (plain, hashed, `[host]:port`,
//!   `@revoked`), pinning and accept-new;
//! * [`session`]: one async connection — TCP, handshake, host key check,
//!   authentication, exec channels with bounded output — every step bounded
//!   by a deadline, and dropped (socket closed) when the caller gives up;
//! * [`driver`]: the engine's [`crate::engine::driver::PowerDriver`].

pub mod agent;
pub mod args;
pub mod build;
pub mod config;
pub mod driver;
pub mod facts;
pub mod hostkey;
pub mod platform;
pub mod profile;
pub mod session;
