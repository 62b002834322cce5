//! SNMP v1, v2c and v3 (USM) for switched PDUs: a channel that does not go
//! through the node's BMC.
//!
//! * [`ber`] and [`message`]: the codec (bytes ↔ typed messages, no I/O);
//! * [`usm`]: keys, HMAC authentication and privacy (RFC 3414, 3826, 7860);
//! * [`session`]: the client state machine (discovery, time window, ids), no I/O;
//! * [`client`]: requests over [`crate::udp`], retransmission inside deadlines;
//! * [`profile`]: PDU profiles as data (`agents/pdu/*.toml`);
//! * [`config`] and [`driver`]: the engine's [`crate::engine::driver::PowerDriver`]
//!   for one or several outlets on one or several PDUs.

pub mod agent;
pub mod ber;
pub mod build;
pub mod client;
pub mod config;
pub mod driver;
pub mod facts;
pub mod message;
pub mod platform;
pub mod profile;
pub mod secrets;
pub mod session;
pub mod usm;
