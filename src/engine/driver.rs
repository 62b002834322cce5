//! The interface every protocol driver implements for the engine.

use super::error::DriverError;
use super::power::{PowerCommand, PowerState};
use std::time::Instant;

/// One device (BMC, hypervisor) as the engine drives it.
///
/// Every call gets a deadline (`None` only under Pacemaker's
/// `disable_timeout`) and must return by then. Drivers keep their session
/// between calls and re-establish it themselves when it is lost.
#[allow(async_fn_in_trait)]
pub trait PowerDriver {
    /// Opens the session (authenticates); returns what was negotiated, for the record.
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError>;

    /// Reads the power state. A state that is neither on nor off is an error.
    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError>;

    /// Sends a power command. `Err` with `ErrorKind::NotInPresentState` means the
    /// device declined it in a way that may only mean "already there".
    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError>;

    /// Ends the session; best effort, bounded by a short timeout of its own.
    async fn close(&mut self);
}
