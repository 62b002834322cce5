//! The protocol drivers as the agent front sees them: one configuration
//! type per family ([`DeviceConfig`]), the listing of plugs some devices
//! offer ([`AgentDriver`]), and the real drivers behind one enum
//! ([`RealDriver`]) so that the front is generic over a single type and the
//! tests can put a simulated device in its place.
//!
//! What each family's options mean is decided in [`super::ipmilan`],
//! [`super::redfish`] and [`super::virsh`]; what is printed, in
//! [`super::run`].

use super::virsh::VirshConfig;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::ipmi::config::IpmiConfig;
use crate::ipmi::driver::IpmiDriver;
use crate::redfish::config::RedfishConfig;
use crate::redfish::driver::RedfishDriver;
use crate::snmp::driver::SnmpDriver;
use crate::ssh::driver::SshDriver;
use std::time::Instant;

/// The configuration of one device, by family.
#[derive(Clone, Debug)]
pub enum DeviceConfig {
    /// fence_ipmilan and its aliases.
    Ipmi(IpmiConfig),
    /// fence_redfish.
    Redfish(RedfishConfig),
    /// fence_virsh.
    Virsh(VirshConfig),
    /// fence_apc_snmp, fence_eaton_snmp.
    Snmp(crate::snmp::config::SnmpConfig),
    /// fence_aws.
    Aws(crate::aws::config::AwsConfig),
}

impl DeviceConfig {
    /// The key of the per-device lock, the same a native fencekit takes
    /// for this endpoint (so agents and native runs serialise with each
    /// other); `None` for an SNMP agent without a PDU (nothing to lock).
    pub fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        match self {
            DeviceConfig::Ipmi(c) => Some(c.lock_key()),
            DeviceConfig::Redfish(c) => Some(c.lock_key()),
            DeviceConfig::Virsh(c) => Some(crate::lock::DeviceKey::new(
                &c.host,
                c.port,
                crate::ssh::config::DEFAULT_PORT,
            )),
            DeviceConfig::Snmp(c) => c.pdus.first().map(|p| p.lock_key()),
            DeviceConfig::Aws(c) => Some(c.lock_key()),
        }
    }

    /// A one-line description for `-v` (never a secret).
    pub fn describe(&self) -> String {
        match self {
            DeviceConfig::Ipmi(c) => super::ipmilan::describe(c),
            DeviceConfig::Redfish(c) => super::redfish::describe(c),
            DeviceConfig::Virsh(c) => super::virsh::describe(c),
            DeviceConfig::Snmp(c) => super::snmp::describe(c),
            DeviceConfig::Aws(c) => super::aws::describe(c),
        }
    }
}

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

impl AgentDriver for IpmiDriver {}

/// The real driver for a configuration: the same enum fleets use, so a
/// protocol is wired once.
pub use crate::method::driver::AnyDriver as RealDriver;

/// Makes the real driver for `cfg` (checks what can be checked offline;
/// connects to nothing).
pub fn real(cfg: DeviceConfig) -> Result<RealDriver, String> {
    match cfg {
        DeviceConfig::Ipmi(c) => IpmiDriver::new(c)
            .map(|d| RealDriver(Box::new(d)))
            .map_err(|e| e.to_string()),
        DeviceConfig::Redfish(c) => RedfishDriver::new(c)
            .map(|d| RealDriver(Box::new(d)))
            .map_err(|e| e.to_string()),
        DeviceConfig::Virsh(c) => SshDriver::new(super::virsh::ssh_config(&c))
            .map(|d| RealDriver(Box::new(d)))
            .map_err(|e| e.to_string()),
        DeviceConfig::Snmp(c) => SnmpDriver::new(c)
            .map(|d| RealDriver(Box::new(d)))
            .map_err(|e| e.to_string()),
        DeviceConfig::Aws(c) => crate::aws::driver::AwsDriver::new(c)
            .map(|d| RealDriver(Box::new(d)))
            .map_err(|e| e.to_string()),
    }
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
