//! The one method builder: from a target URL (or an inventory method's
//! driver and address) and [`MethodOptions`] to a [`MethodSpec`]. The command
//! line and the inventory both fill `MethodOptions` and come here, so they
//! share every validation (an `auth` type is IPMI 1.5's; a pinned host key
//! excludes accept-new; one kind of TLS trust) and every default.
//! Settings that belong to a run rather than a method (timeouts) are applied
//! by the caller to every method alike ([`MethodSpec::set_login_timeout`]).
//!
//! Each platform builds its own methods (`Platform::builder`, in its
//! folder); this module finds the platform through the registry
//! ([`super::platforms`]) and applies what every method shares: options
//! another platform owns are refused, and the expected identity is pinned.
//! A platform whose methods need more than one endpoint (switched PDUs:
//! outlets and tables) has its own builder, which its fronts call.

use super::platforms::{self, PLATFORMS};
use super::spec::MethodSpec;
use crate::engine::identity::ExpectedIdentity;
pub use crate::platform::build::{BuildError, MethodOptions};

/// The identity `o` pins, applied to `m` (an error for a method that has no
/// device that could report one, and for options another platform owns).
fn pinned(mut m: MethodSpec, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    let driver = m.driver_name();
    for p in PLATFORMS.iter().filter(|p| p.name() != driver) {
        p.foreign_options(driver, o)?;
    }
    let mut expected = ExpectedIdentity::new(o.uuid.as_deref(), o.serial.as_deref())?;
    if let MethodSpec::Device(d) = &m {
        expected = d.platform().expected_names(expected, o)?;
    }
    m.set_expected(expected)?;
    Ok(m)
}

/// The method a target URL names: the platform that claims it (`ipmi://`,
/// `redfish://` and its variants, `ssh://`, `aws://` …), else the default
/// platform ([`platforms::DEFAULT`]: a bare host).
pub fn from_url(url: &str, o: &MethodOptions) -> Result<MethodSpec, BuildError> {
    let claimed = PLATFORMS
        .iter()
        .filter(|p| p.name() != platforms::DEFAULT.name())
        .filter_map(|p| p.builder())
        .find_map(|b| b.build_url(url, o));
    let default = || {
        platforms::DEFAULT
            .builder()
            .and_then(|b| b.build_url(url, o))
            .unwrap_or(Err(BuildError::NoAddress))
    };
    let m = claimed.unwrap_or_else(default)?;
    pinned(MethodSpec::Device(m), o)
}

/// The method of driver `driver` (a platform's name or `manual`; the
/// default platform when `None`) at `endpoint`, or at `ip` (with
/// `o.ipport`) when there is no endpoint. `node` names a manual method.
pub fn from_parts(
    node: &str,
    driver: Option<&str>,
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<MethodSpec, BuildError> {
    let m = match driver {
        Some("manual") => MethodSpec::Manual {
            node: node.to_string(),
            instructions: o
                .instructions
                .clone()
                .unwrap_or_else(|| "(the inventory gives no instructions)".into()),
        },
        _ => {
            let platform = match driver {
                None => Some(platforms::DEFAULT),
                Some(name) => platforms::by_name(name),
            };
            let builder =
                platform
                    .and_then(|p| p.builder())
                    .ok_or_else(|| BuildError::UnknownDriver {
                        name: driver.unwrap_or_default().to_string(),
                        expected: expected_drivers(),
                    })?;
            if let (Some(p), Some(e)) = (platform, endpoint) {
                other_scheme(p.name(), e)?;
            }
            MethodSpec::Device(builder.build_parts(endpoint, ip, o)?)
        }
    };
    pinned(m, o)
}

/// An endpoint of driver `driver` whose scheme another platform owns.
fn other_scheme(driver: &'static str, endpoint: &str) -> Result<(), BuildError> {
    let Some((scheme, _)) = endpoint.split_once("://") else {
        return Ok(());
    };
    match platforms::by_scheme(scheme) {
        Some(owner) if owner.name() != driver => Err(BuildError::OtherScheme {
            driver,
            scheme: scheme.to_string(),
            owner: owner.name(),
        }),
        _ => Ok(()),
    }
}

/// The drivers [`from_parts`] builds: `a, b or manual`.
fn expected_drivers() -> String {
    let names: Vec<&str> = PLATFORMS
        .iter()
        .filter(|p| p.builder().is_some())
        .map(|p| p.name())
        .collect();
    format!("{} or manual", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipmi::build::IpmiBuildError;
    use crate::ipmi::config::Version;

    #[test]
    fn an_auth_type_means_ipmi_15_and_contradicts_an_explicit_20() {
        let o = MethodOptions {
            auth: Some("md5".into()),
            ..Default::default()
        };
        let m = from_url("ipmi://bmc", &o).unwrap();
        let m = m.device().unwrap().as_any();
        let ipmi = m
            .downcast_ref::<crate::ipmi::platform::IpmiMethod>()
            .unwrap();
        assert!(matches!(ipmi.config.version, Version::Lan15(Some(_))));
        let o = MethodOptions {
            ipmi_version: Some("2.0".into()),
            ..o
        };
        let e = from_url("ipmi://bmc", &o).unwrap_err();
        assert!(
            matches!(e.downcast_ref(), Some(IpmiBuildError::AuthWithLanplus)),
            "{e}"
        );
        assert!(e.to_string().contains("IPMI 1.5 only"), "{e}");
        // The same rule for an inventory method.
        let e = from_parts("n", Some("ipmi"), None, Some("10.0.0.1"), &o).unwrap_err();
        assert!(
            matches!(e.downcast_ref(), Some(IpmiBuildError::AuthWithLanplus)),
            "{e}"
        );
    }

    #[test]
    fn url_and_parts_build_the_same_method() {
        let o = MethodOptions {
            username: Some("admin".into()),
            ipport: Some(6230),
            cipher: Some("3".into()),
            ..Default::default()
        };
        let a = from_url("ipmi://10.0.0.1", &o).unwrap();
        let b = from_parts("n", None, None, Some("10.0.0.1"), &o).unwrap();
        assert_eq!(a.endpoint(), b.endpoint());
        assert_eq!(a.endpoint(), "ipmi://10.0.0.1:6230");
        assert_eq!(a.username(), "admin");
    }

    #[test]
    fn builder_messages_read_as_they_always_have() {
        let o = MethodOptions::default();
        let text = |r: Result<MethodSpec, BuildError>| r.unwrap_err().to_string();
        // Every platform added lengthens the list: its ends are what stays.
        let unknown = text(from_parts("n", Some("nosuch"), None, Some("h"), &o));
        assert!(
            unknown
                .starts_with("unknown driver 'nosuch' (expected ipmi, redfish, ssh, snmp, aws, ")
                && unknown.contains(", azure")
                && unknown.ends_with(" or manual)"),
            "{unknown}"
        );
        assert_eq!(
            text(from_parts("n", Some("ipmi"), None, None, &o)),
            "no endpoint or ip"
        );
        assert_eq!(
            text(from_parts("n", Some("ssh"), None, None, &o)),
            "no endpoint"
        );
        assert_eq!(
            text(from_parts(
                "n",
                Some("ipmi"),
                Some("ssh://u@h/host"),
                None,
                &o
            )),
            "driver ipmi does not take 'ssh://' endpoints (they are driver ssh's)"
        );
        assert_eq!(
            text(from_url("gopher://h", &o)),
            "unknown target scheme 'gopher://' (expected ipmi://)"
        );
        let v = |x: &str| MethodOptions {
            ipmi_version: Some(x.into()),
            ..Default::default()
        };
        assert_eq!(
            text(from_url("ipmi://h", &v("3.0"))),
            "ipmi_version '3.0' (expected 2.0 or 1.5)"
        );
        let kg = MethodOptions {
            kg_hex: Some("00".into()),
            kg_file: Some("/nonexistent".into()),
            ..Default::default()
        };
        assert_eq!(
            text(from_url("ipmi://h", &kg)),
            "give only one of a K_g key and a K_g file"
        );
        let kg = MethodOptions { kg_hex: None, ..kg };
        assert!(text(from_url("ipmi://h", &kg))
            .starts_with("cannot read kg_file /nonexistent: No such file"));
        assert_eq!(
            text(from_url("ssh://h/virsh/d", &o)),
            "an SSH method needs a user name: ssh://USER@HOST/… or a username"
        );
        // Passed through from the modules below, unchanged.
        assert_eq!(
            text(from_url("ipmi://h:0", &o)),
            "'ipmi://h:0': '0' is not a port number"
        );
    }
}
