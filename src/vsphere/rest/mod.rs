//! vSphere's Automation (REST) API: the `fence_vmware_rest` drop-in's
//! protocol (issue 32), beside the vim25 SOAP side of [`super`].
//!
//! [`model`] reads the answers of both API generations (`/rest`, vSphere
//! 6.5+, and `/api`, 7.0 U2+), [`client`] is the session over HTTP(S) with
//! a deadline on every request, [`driver`] the engine's `PowerDriver` on it
//! for one VM (and the listing `list` and `monitor` use). [`config`] holds
//! what the driver is given; the TLS trust is the caller's. The peer is
//! `tests/peers/vsphere_rest.py`.

pub mod client;
pub mod config;
pub mod driver;
pub mod model;
