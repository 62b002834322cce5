//! Protocol-independent fencing: what an action means, independent of how a
//! BMC is spoken to.
//!
//! The engine owns the per-target state machine (read, send, wait, poll,
//! confirm), deadlines (on its own [`clock`], tokio's), and the events it
//! emits while it works. It knows no
//! argv and no terminal; the fronts ([`crate::cli`], [`crate::agent`]) turn
//! its events and outcomes into output.

pub mod clock;
pub mod driver;
pub mod error;
pub mod event;
pub mod identity;
pub mod once;
pub mod policy;
pub mod power;
pub mod run;
