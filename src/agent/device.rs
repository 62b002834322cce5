//! The platforms as the agent front sees them: a family's configuration
//! behind one trait ([`Device`], from the platform seam: lock key,
//! description, its real driver), the listing of plugs some devices offer
//! ([`AgentDriver`]), and the real drivers behind one type ([`RealDriver`]) so that the front is generic
//! over a single type and the tests can put a simulated device in its place.
//!
//! What each family's options mean is decided in its platform's folder
//! (`src/NAME/agent.rs`, found through [`super::families`]); what is
//! printed, in [`super::run`].

use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use std::time::Instant;

pub use crate::platform::agent::{Device, DeviceConfig};
pub use crate::platform::PlugEntry;

/// A [`PowerDriver`] that may also list the plugs behind its device.
#[allow(async_fn_in_trait)]
pub trait AgentDriver: PowerDriver {
    /// Every plug with its state. The default: the device has none to list.
    async fn plugs(&mut self, _deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        Err(DriverError::new(
            ErrorKind::Unsupported,
            Stage::Status,
            "this device has no plugs to list",
        ))
    }
}

/// The real driver for a configuration: the same type fleets use, so a
/// platform is wired once.
pub use crate::method::driver::AnyDriver as RealDriver;

/// Makes the real driver for `cfg` (checks what can be checked offline;
/// connects to nothing).
pub fn real(cfg: DeviceConfig) -> Result<RealDriver, String> {
    cfg.driver().map(RealDriver)
}

/// Checks a configuration the way [`real`] would, without keeping a driver
/// (for `validate-all`).
pub fn check(cfg: DeviceConfig) -> Result<(), String> {
    real(cfg).map(|_| ())
}

impl AgentDriver for RealDriver {
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        self.0.plugs(deadline).await
    }
}
