//! The agent families' registration: which function turns a family's
//! parsed options into its device configuration, by the platform name its
//! `agents/*.toml` gives as `driver`. A new platform's agent family adds
//! one line here (docs/design.md, "Adding a platform").

use super::defs::Agent;
use super::device::DeviceConfig;
use super::values::Values;

/// One platform as the agent front serves it.
pub struct Family {
    /// The platform's registered name (`driver = "NAME"` in `agents/*.toml`).
    pub driver: &'static str,
    /// Its configuration from the agent's validated option values.
    pub config: fn(&Values, &Agent) -> Result<DeviceConfig, String>,
    /// Whether `list` / `list-status` list plugs (otherwise upstream's
    /// notice that the device has none to list).
    pub lists: bool,
}

/// Every family's platform.
pub static FAMILIES: &[Family] = &[
    Family {
        driver: "ipmi",
        config: super::ipmilan::device,
        lists: false,
    },
    Family {
        driver: "redfish",
        config: super::redfish::device,
        lists: true,
    },
    Family {
        driver: "ssh",
        config: super::virsh::device,
        lists: true,
    },
    Family {
        driver: "snmp",
        config: super::snmp::device,
        lists: true,
    },
    Family {
        driver: "aws",
        config: super::aws::device,
        lists: true,
    },
    Family {
        driver: "kubevirt",
        config: super::kubevirt::device,
        lists: true,
    },
    Family {
        driver: "vsphere",
        config: super::vmware_rest::device,
        lists: true,
    },
];

/// The family entry of `agent` (every definition names one: a test checks).
pub fn of(agent: &Agent) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.driver == agent.family.driver)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_definition_names_a_registered_platform_and_family() {
        for f in &crate::agent::defs::defs().families {
            assert!(
                FAMILIES.iter().any(|x| x.driver == f.driver),
                "{}: driver '{}' has no entry in agent::families",
                f.name,
                f.driver
            );
            assert!(
                crate::method::platforms::by_name(f.driver).is_some(),
                "{}: driver '{}' is not a registered platform",
                f.name,
                f.driver
            );
        }
    }
}
