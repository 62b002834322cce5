//! IBM Cloud as a fencing device: a VPC virtual server instance (stopped
//! with `force: true`, started, read through the VPC API) or a Power
//! Virtual Server instance (`immediate-shutdown`, `start`, read through
//! the Power Cloud API), both with an IAM token for an API key.
//!
//! * [`config`]: what a caller sets, `ibmvpc://` and `powervs://`
//!   targets, endpoints (public, private, overridden), the lock key;
//! * [`model`]: pure decisions over the JSON answers (states, errors);
//! * [`driver`]: the engine's [`crate::engine::driver::PowerDriver`];
//! * [`build`], [`platform`], [`agent`], [`facts`]: the platform seam,
//!   the fence_ibm_vpc and fence_ibm_powervs families, drift.
//!
//! Evidence: both APIs see the instance from outside it, so their reading
//! is a witness independent of the guest.

pub mod agent;
pub mod args;
pub mod build;
pub mod config;
pub mod driver;
pub mod facts;
pub mod model;
pub mod platform;
