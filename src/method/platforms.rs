//! The one registration: every platform fencekit speaks, as a static slice
//! (nothing is built at start-up). A new platform adds one line here and
//! `pub mod NAME;` in lib.rs; everything else is in its folder
//! (docs/design.md, "Adding a platform"). A platform with command-line
//! flags of its own (`src/NAME/args.rs`) adds one field to [`PlatformArgs`]
//! and, when `--driver NAME` selects it, one line to [`DRIVERS`].

use crate::platform::args::CliDriver;
use crate::platform::build::MethodOptions;
use crate::platform::Platform;

/// `fencekit --version`: the release and the protocol versions it speaks
/// (kept beside the registry, the one place that names the platforms).
pub const VERSION_LINE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (IPMI 2.0 RMCP+ suites 3/17, IPMI 1.5; fence-agents 4.12 compatible)"
);

/// Every platform, in the order a scheme is matched.
pub static PLATFORMS: &[&dyn Platform] = &[
    &crate::ipmi::platform::PLATFORM,
    &crate::redfish::platform::PLATFORM,
    &crate::ssh::platform::PLATFORM,
    &crate::snmp::platform::PLATFORM,
    &crate::aws::platform::PLATFORM,
    &crate::kubevirt::platform::PLATFORM,
    &crate::vsphere::platform::PLATFORM,
    &crate::azure::platform::PLATFORM,
    &crate::pve::platform::PLATFORM,
    &crate::nutanix::platform::PLATFORM,
    &crate::ovirt::platform::PLATFORM,
    &crate::openstack::platform::PLATFORM,
    &crate::eps::platform::PLATFORM,
    &crate::ucs::platform::PLATFORM,
    &crate::amt::platform::PLATFORM,
    &crate::ribcl::platform::PLATFORM,
    &crate::gce::platform::PLATFORM,
    &crate::ibm::platform::PLATFORM,
];

/// The platform of a target without a scheme another platform owns (a
/// bare host), and of an inventory method without a driver or endpoint.
pub static DEFAULT: &dyn Platform = &crate::ipmi::platform::PLATFORM;

/// The platform an inventory's `driver = "NAME"` names (any case).
pub fn by_name(name: &str) -> Option<&'static dyn Platform> {
    PLATFORMS
        .iter()
        .copied()
        .find(|p| p.name().eq_ignore_ascii_case(name))
}

/// The platform that owns a target URL's scheme (any case; without `://`).
pub fn by_scheme(scheme: &str) -> Option<&'static dyn Platform> {
    let lower;
    let scheme = match scheme.bytes().any(|b| b.is_ascii_uppercase()) {
        true => {
            lower = scheme.to_ascii_lowercase();
            lower.as_str()
        }
        false => scheme,
    };
    PLATFORMS.iter().copied().find(|p| p.owns_scheme(scheme))
}

/// The platform a target URL names by its scheme.
pub fn of_url(url: &str) -> Option<&'static dyn Platform> {
    by_scheme(url.split_once("://")?.0)
}

/// Every platform's own command-line flags, flattened once into each
/// native command that acts on targets; the command line names no platform.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PlatformArgs {
    /// IPMI.
    #[command(flatten)]
    pub ipmi: crate::ipmi::args::Args,
    /// Redfish.
    #[command(flatten)]
    pub redfish: crate::redfish::args::Args,
    /// SSH.
    #[command(flatten)]
    pub ssh: crate::ssh::args::Args,
    /// Amazon EC2.
    #[command(flatten)]
    pub aws: crate::aws::args::Args,
    /// KubeVirt.
    #[command(flatten)]
    pub kubevirt: crate::kubevirt::args::Args,
    /// Azure.
    #[command(flatten)]
    pub azure: crate::azure::args::Args,
    /// Proxmox VE.
    #[command(flatten)]
    pub pve: crate::pve::args::Args,
    /// OpenStack.
    #[command(flatten)]
    pub openstack: crate::openstack::args::Args,
    /// oVirt.
    #[command(flatten)]
    pub ovirt: crate::ovirt::args::Args,
    /// IBM Cloud.
    #[command(flatten)]
    pub ibm: crate::ibm::args::Args,
    /// Last: the options declared after the composition are listed under
    /// the command's own heading again, not under the last platform's.
    #[command(flatten)]
    end: EndOfHeadings,
}

impl PlatformArgs {
    /// Copies every platform's flags into the method options.
    pub fn apply(&self, o: &mut MethodOptions) {
        self.ipmi.apply(o);
        self.redfish.apply(o);
        self.ssh.apply(o);
        self.aws.apply(o);
        self.kubevirt.apply(o);
        self.azure.apply(o);
        self.pve.apply(o);
        self.openstack.apply(o);
        self.ovirt.apply(o);
        self.ibm.apply(o);
    }

    /// When a platform's flags name one machine: why the targets must then
    /// be exactly one URL.
    pub fn one_machine(&self) -> Option<&'static str> {
        self.aws.one_machine()
    }
}

/// The platforms `--driver NAME` selects, in the order `--help` lists them
/// (the first is the default: [`DEFAULT`]).
pub static DRIVERS: &[&CliDriver] = &[
    &crate::ipmi::args::DRIVER,
    &crate::redfish::args::DRIVER,
    &crate::ssh::args::DRIVER,
    &crate::aws::args::DRIVER,
];

/// The platform `--driver NAME` selects.
pub fn driver(name: &str) -> Option<&'static CliDriver> {
    DRIVERS.iter().copied().find(|d| d.name == name)
}

/// Resets the help heading at the end of [`PlatformArgs`] (clap carries a
/// flattened group's heading on to the options that follow it).
#[derive(Debug, Clone, Default)]
struct EndOfHeadings;

impl clap::FromArgMatches for EndOfHeadings {
    fn from_arg_matches(_: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(EndOfHeadings)
    }
    fn update_from_arg_matches(&mut self, _: &clap::ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

impl clap::Args for EndOfHeadings {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.next_help_heading(None::<&str>)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd.next_help_heading(None::<&str>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_schemes_find_their_platform() {
        for p in PLATFORMS {
            assert_eq!(by_name(p.name()).map(|q| q.name()), Some(p.name()));
            assert_eq!(
                by_name(&p.name().to_ascii_uppercase()).map(|q| q.name()),
                Some(p.name())
            );
        }
        assert_eq!(
            by_scheme("IDRAC-Redfish").map(|p| p.name()),
            Some("redfish")
        );
        assert_eq!(by_scheme("redfish+http").map(|p| p.name()), Some("redfish"));
        assert_eq!(of_url("ipmi://bmc").map(|p| p.name()), Some("ipmi"));
        assert!(by_scheme("gopher").is_none());
        assert!(
            by_name("manual").is_none(),
            "manual has no device: not a platform"
        );
    }

    #[test]
    fn the_default_is_the_first_driver_and_every_driver_a_platform() {
        assert_eq!(DRIVERS[0].name, DEFAULT.name());
        for d in DRIVERS {
            assert!(by_name(d.name).is_some(), "{}", d.name);
            assert_eq!(driver(d.name).map(|x| x.name), Some(d.name));
        }
        assert!(driver("snmp").is_none());
    }
}
