//! Intel AMT: a desktop's or a workstation's power through its management
//! engine's WS-Management service (`POST /wsman`, HTTP Digest), as
//! upstream's fence_amt_ws speaks it. [`model`] is the SOAP both ways
//! (pure: the envelopes, the power states of DMTF DSP1027 and what they
//! mean, return values, faults), [`client`] the Digest-authenticated
//! requests on the shared HTTP layer, [`driver`] the engine's
//! `PowerDriver`. On the platform seam: [`config`] (`amt://[USER@]HOST[:PORT]`
//! targets), [`build`], [`platform`], [`agent`] (fence_amt_ws).
//! docs/amt.md is the user's guide; the peer is `tests/peers/amt_ws.py`.

pub mod agent;
pub mod build;
pub mod client;
pub mod config;
pub mod driver;
pub mod model;
pub mod platform;
