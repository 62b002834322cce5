//! Any platform's driver behind one type, so fleets can mix them and the
//! agent front can hold whichever its definition names.

use crate::engine::driver::PowerDriver;
use crate::engine::error::DriverError;
use crate::engine::power::{PowerCommand, PowerState};
use crate::platform::Driver;
use std::time::Instant;

/// Any platform's driver (built by `platform::Method::build`; one exists
/// per node in flight).
pub struct AnyDriver(pub Box<dyn Driver>);

impl AnyDriver {
    /// Datagrams or requests sent, received, retransmitted.
    pub fn traffic(&self) -> (u32, u32, u32) {
        self.0.traffic()
    }

    /// The platform's driver, for its own code.
    pub fn inner(&self) -> &dyn Driver {
        &*self.0
    }

    /// The platform's driver, for its own code, to change.
    pub fn inner_mut(&mut self) -> &mut dyn Driver {
        &mut *self.0
    }
}

impl PowerDriver for AnyDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.0.connect(deadline).await
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        self.0.status(deadline).await
    }

    async fn observe(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<crate::engine::power::Observed, DriverError> {
        self.0.observe(deadline).await
    }

    fn shows_transitions(&self) -> bool {
        self.0.shows_transitions()
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.0.command(command, deadline).await
    }

    async fn identity(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<crate::engine::identity::Identity, DriverError> {
        self.0.identity(deadline).await
    }

    async fn power_reading(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<crate::engine::power::PowerReading>, DriverError> {
        self.0.power_reading(deadline).await
    }

    fn set_up_answered(&self) -> bool {
        self.0.set_up_answered()
    }

    fn state_detail(&self) -> Option<String> {
        self.0.state_detail()
    }

    fn take_tolerances(&mut self) -> Vec<crate::engine::event::Tolerance> {
        self.0.take_tolerances()
    }

    fn take_warnings(&mut self) -> Vec<String> {
        self.0.take_warnings()
    }

    fn observes_off(&self) -> bool {
        self.0.observes_off()
    }

    async fn close(&mut self) {
        self.0.close().await
    }
}
