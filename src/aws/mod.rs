//! Amazon EC2 as a fencing device: an instance is stopped (`StopInstances`
//! with `Force=true` and `SkipOsShutdown=true`), started and read through the
//! EC2 Query API over HTTPS, with requests signed (Signature Version 4) by
//! fencekit itself.
//!
//! The split follows [`crate::redfish`]:
//!
//! * [`config`]: what a caller sets (region, instance, keys, endpoints,
//!   self-fencing), `aws://REGION/INSTANCE` targets, the SDKs' environment;
//! * [`sigv4`]: the signature, pure, checked against AWS's test suite;
//! * [`credentials`]: the credential chain in the SDKs' order (keys given,
//!   environment, shared files, web identity through STS, the metadata
//!   service), and [`imds`], the metadata service (IMDSv2);
//! * [`model`]: pure decisions over the XML answers — instance states,
//!   error codes into [`crate::engine::error::ErrorKind`]s; no I/O;
//! * [`http`]: one reqwest client, request deadlines, bounded bodies;
//! * [`driver`]: the engine's [`crate::engine::driver::PowerDriver`].
//!
//! Evidence: the EC2 API is outside the instance, so what it reports about
//! the instance's state is a witness independent of the node's operating
//! system, the party under suspicion (whose own word could contradict,
//! never prove, that it is off).

pub mod agent;
pub mod args;
pub mod build;
pub mod config;
pub mod credentials;
pub mod driver;
pub mod http;
pub mod imds;
pub mod model;
pub mod platform;
pub mod sigv4;
