//! Bytes ↔ typed IPMI messages, with no I/O and no crypto.
//!
//! Layers, outermost first (IPMI 2.0 §13):
//! * RMCP header (4 bytes, class 07h IPMI or 06h ASF);
//! * an IPMI 1.5 session header (auth type ≠ 06h) or an IPMI 2.0 / RMCP+
//!   session header (auth type 06h), each with its payload and, for
//!   authenticated 2.0 packets, the integrity trailer;
//! * the payload: an IPMI LAN message (request or response frame), or an
//!   RMCP+ session set-up message (Open Session, RAKP 1-4).
//!
//! Everything received is parsed into borrowed views or small owned structs;
//! malformed input is a typed [`Malformed`] error, never a panic. The crypto
//! that fills or checks authentication fields lives in [`super::crypto`].
//!
//! The code lives by message family: `wire` (RMCP, session headers and
//! trailers, the LAN message frame, constants), `setup` (Open Session and
//! RAKP) and `app` (chassis, cipher suite records, GUID, DCMI); every
//! public item is re-exported here, so callers name `codec::X`.

mod app;
mod setup;
mod wire;

pub use app::*;
pub use setup::*;
pub use wire::*;
