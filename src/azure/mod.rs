//! Microsoft Azure as a fencing device: a VM is powered off (`powerOff`
//! with `skipShutdown=true`: a hard stop), started and read (with its
//! instance view) through Azure Resource Manager over HTTPS, each power
//! operation followed to its end.
//!
//! * [`config`]: what a caller sets (subscription, resource group, VM, the
//!   cloud and its endpoints, credentials), `azure://` targets, the lock
//!   key, the SDKs' environment;
//! * [`credentials`]: tokens in the SDKs' order (a service principal's
//!   secret or certificate, a workload identity, the managed identity),
//!   with [`assertion`], the certificate's client assertion (RS256);
//! * [`model`]: pure decisions over the JSON answers — power states,
//!   answers about another VM, operations, errors; no I/O;
//! * [`driver`]: the engine's [`crate::engine::driver::PowerDriver`];
//! * [`build`], [`args`], [`platform`], [`agent`], [`facts`]: the platform
//!   seam, its flags and settings, the fence_azure_arm family, drift.
//!
//! Evidence: Resource Manager sees the VM from outside it, so its reading
//! is a witness independent of the guest (whose own word could contradict,
//! never prove, that it is off).

pub mod agent;
pub mod args;
pub mod assertion;
pub mod build;
pub mod config;
pub mod credentials;
pub mod driver;
pub mod facts;
pub mod model;
pub mod platform;
