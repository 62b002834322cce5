//! Any protocol driver behind one type, so fleets can mix them and the
//! agent front can hold whichever its definition names.

use crate::aws::driver::AwsDriver;
use crate::engine::driver::PowerDriver;
use crate::engine::error::DriverError;
use crate::engine::power::{PowerCommand, PowerState};
use crate::ipmi::driver::IpmiDriver;
use crate::redfish::driver::RedfishDriver;
use crate::snmp::driver::SnmpDriver;
use crate::ssh::driver::SshDriver;
use std::time::Instant;

/// Any protocol driver. (One exists per node in
/// flight, so the size difference between variants does not matter.)
#[allow(clippy::large_enum_variant)]
pub enum AnyDriver {
    /// IPMI.
    Ipmi(IpmiDriver),
    /// Redfish.
    Redfish(RedfishDriver),
    /// SSH.
    Ssh(SshDriver),
    /// SNMP (switched PDU outlets).
    Snmp(SnmpDriver),
    /// EC2 (an instance through the EC2 API).
    Aws(AwsDriver),
}

impl AnyDriver {
    /// Datagrams or requests sent, received, retransmitted.
    pub fn traffic(&self) -> (u32, u32, u32) {
        match self {
            AnyDriver::Ipmi(d) => {
                let s = d.stats();
                (s.sent, s.received, s.retransmits)
            }
            AnyDriver::Redfish(d) => {
                let s = d.stats();
                (s.requests, s.requests, 0)
            }
            AnyDriver::Ssh(d) => {
                let s = d.stats();
                (s.commands, s.commands, 0)
            }
            AnyDriver::Snmp(d) => {
                let s = d.stats();
                (s.sent, s.received, s.retransmits)
            }
            AnyDriver::Aws(d) => {
                let s = d.stats();
                (s.requests, s.requests, s.throttled)
            }
        }
    }
}

impl PowerDriver for AnyDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        match self {
            AnyDriver::Ipmi(d) => d.connect(deadline).await,
            AnyDriver::Redfish(d) => d.connect(deadline).await,
            AnyDriver::Ssh(d) => d.connect(deadline).await,
            AnyDriver::Snmp(d) => d.connect(deadline).await,
            AnyDriver::Aws(d) => d.connect(deadline).await,
        }
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        match self {
            AnyDriver::Ipmi(d) => d.status(deadline).await,
            AnyDriver::Redfish(d) => d.status(deadline).await,
            AnyDriver::Ssh(d) => d.status(deadline).await,
            AnyDriver::Snmp(d) => d.status(deadline).await,
            AnyDriver::Aws(d) => d.status(deadline).await,
        }
    }

    async fn observe(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<crate::engine::power::Observed, DriverError> {
        match self {
            AnyDriver::Ipmi(d) => d.observe(deadline).await,
            AnyDriver::Redfish(d) => d.observe(deadline).await,
            AnyDriver::Ssh(d) => d.observe(deadline).await,
            AnyDriver::Snmp(d) => d.observe(deadline).await,
            AnyDriver::Aws(d) => d.observe(deadline).await,
        }
    }

    fn shows_transitions(&self) -> bool {
        match self {
            AnyDriver::Ipmi(d) => d.shows_transitions(),
            AnyDriver::Redfish(d) => d.shows_transitions(),
            AnyDriver::Ssh(d) => d.shows_transitions(),
            AnyDriver::Snmp(d) => d.shows_transitions(),
            AnyDriver::Aws(d) => d.shows_transitions(),
        }
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        match self {
            AnyDriver::Ipmi(d) => d.command(command, deadline).await,
            AnyDriver::Redfish(d) => d.command(command, deadline).await,
            AnyDriver::Ssh(d) => d.command(command, deadline).await,
            AnyDriver::Snmp(d) => d.command(command, deadline).await,
            AnyDriver::Aws(d) => d.command(command, deadline).await,
        }
    }

    async fn identity(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<crate::engine::identity::Identity, DriverError> {
        match self {
            AnyDriver::Ipmi(d) => d.identity(deadline).await,
            AnyDriver::Redfish(d) => d.identity(deadline).await,
            AnyDriver::Ssh(d) => d.identity(deadline).await,
            AnyDriver::Snmp(d) => d.identity(deadline).await,
            AnyDriver::Aws(d) => d.identity(deadline).await,
        }
    }

    async fn power_reading(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<crate::engine::power::PowerReading>, DriverError> {
        match self {
            AnyDriver::Ipmi(d) => d.power_reading(deadline).await,
            AnyDriver::Redfish(d) => d.power_reading(deadline).await,
            AnyDriver::Ssh(d) => d.power_reading(deadline).await,
            AnyDriver::Snmp(d) => d.power_reading(deadline).await,
            AnyDriver::Aws(d) => d.power_reading(deadline).await,
        }
    }

    fn set_up_answered(&self) -> bool {
        match self {
            AnyDriver::Ipmi(d) => d.set_up_answered(),
            AnyDriver::Redfish(d) => d.set_up_answered(),
            AnyDriver::Ssh(d) => d.set_up_answered(),
            AnyDriver::Snmp(d) => d.set_up_answered(),
            AnyDriver::Aws(d) => d.set_up_answered(),
        }
    }

    fn state_detail(&self) -> Option<String> {
        match self {
            AnyDriver::Snmp(d) => d.state_detail(),
            AnyDriver::Aws(d) => d.state_detail(),
            _ => None,
        }
    }

    fn take_tolerances(&mut self) -> Vec<crate::engine::event::Tolerance> {
        match self {
            AnyDriver::Ipmi(d) => d.take_tolerances(),
            _ => Vec::new(),
        }
    }

    fn take_warnings(&mut self) -> Vec<String> {
        match self {
            AnyDriver::Aws(d) => d.take_warnings(),
            _ => Vec::new(),
        }
    }

    fn observes_off(&self) -> bool {
        match self {
            AnyDriver::Ipmi(d) => d.observes_off(),
            AnyDriver::Redfish(d) => d.observes_off(),
            AnyDriver::Ssh(d) => d.observes_off(),
            AnyDriver::Snmp(d) => d.observes_off(),
            AnyDriver::Aws(d) => d.observes_off(),
        }
    }

    async fn close(&mut self) {
        match self {
            AnyDriver::Ipmi(d) => d.close().await,
            AnyDriver::Redfish(d) => d.close().await,
            AnyDriver::Ssh(d) => d.close().await,
            AnyDriver::Snmp(d) => d.close().await,
            AnyDriver::Aws(d) => d.close().await,
        }
    }
}
