//! The one registration: every platform fencekit speaks, as a static slice
//! (nothing is built at start-up). A new platform adds one line here and
//! `pub mod NAME;` in lib.rs; everything else is in its folder
//! (docs/design.md, "Adding a platform").

use crate::platform::Platform;

/// Every platform, in the order a scheme is matched.
pub static PLATFORMS: &[&dyn Platform] = &[
    &crate::ipmi::platform::PLATFORM,
    &crate::redfish::platform::PLATFORM,
    &crate::ssh::platform::PLATFORM,
    &crate::snmp::platform::PLATFORM,
    &crate::aws::platform::PLATFORM,
    &crate::kubevirt::platform::PLATFORM,
    &crate::vsphere::platform::PLATFORM,
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
}
