//! The client's session state machines, with no I/O.
//!
//! RMCP+ set-up (IPMI 2.0 §13.17-13.20) is a chain of named states, each a
//! type: [`ExpectOpenSessionResponse`] → [`ExpectRakp2`] → [`ExpectRakp4`]
//! → [`Active`]. A state is left only by handing it the proof that its
//! answer arrived and verified ([`Opened`], [`Rakp2Verified`],
//! [`Rakp4Verified`], values only the state's own `on_response` makes), so
//! an out-of-order step (RAKP 3 before a verified RAKP 2, a session before
//! RAKP 4) does not compile. IPMI 1.5 set-up (§22.15-22.17) is the same
//! shape: [`ExpectChallenge`] → [`ExpectActivation`] → [`Active`].
//!
//! ```compile_fail
//! # use fencekit::ipmi::{config::Privilege, crypto::Suite, session::*};
//! # use fencekit::secret::Secret;
//! let hs = ExpectOpenSessionResponse::new(
//!     Suite::S17, Privilege::Administrator, "admin", Secret::from_str_value("pw"), None);
//! // RAKP 3 before the BMC's RAKP 2 was verified: there is no such step.
//! let next = hs.into_rakp3(todo!());
//! ```
//!
//! The active session wraps requests and unwraps responses, checking
//! session IDs, sequence numbers (a replay window, every number included)
//! and integrity or authentication codes on every datagram. The transport
//! only moves bytes; what to send next, and whether a datagram is ours, is
//! decided here.
//!
//! Every (re)transmission of a set-up message carries a fresh message tag,
//! which the BMC echoes: an answer names the transmission it answers, so
//! the driver measures the round-trip time exactly (see
//! [`super::pacing`]). `on_response` methods return `Ok(None)` for a
//! datagram that is not an answer to this state (stray, duplicate, forged):
//! the caller keeps waiting. Errors are classified [`DriverError`]s.

//! The code: `common` (what the states share), `rmcpp` (2.0 set-up),
//! `lan15` (1.5 set-up) and `active` (the session); every public item is
//! re-exported here.

mod active;
mod common;
mod lan15;
mod rmcpp;

pub use active::*;
pub use common::*;
pub use lan15::*;
pub use rmcpp::*;
