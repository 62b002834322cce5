//! IPMI over LAN: v2.0 RMCP+ (lanplus) and v1.5 (lan), natively.
//!
//! * [`codec`]: bytes ↔ typed messages, no I/O;
//! * [`crypto`]: cipher suites 3 and 17, IPMI 1.5 authentication codes;
//! * [`session`]: the client's session state machine, no I/O;
//! * [`pacing`]: when to retransmit (round-trip estimate, back-off), no I/O;
//! * [`driver`]: over [`crate::udp`], the engine's [`crate::engine::driver::PowerDriver`] over all of it;
//! * [`config`]: what a caller sets (address, credentials, suite, privilege);
//! * [`workaround`]: vendor workarounds by FreeIPMI's names, as data.

pub mod agent;
pub mod args;
pub mod build;
pub mod codec;
pub mod config;
pub mod crypto;
pub mod driver;
pub mod facts;
pub mod pacing;
pub mod platform;
pub mod session;
pub mod workaround;
