//! Checking what the inventory gives: `[defaults]`, pins, a method's and a
//! PDU's fields, and where in the file each node stands.

use super::error::*;
use super::fields::MethodFields;
use crate::engine::identity::IdentityError;
use crate::fleet::guard;

/// Default fields: common ones and per-driver tables.
#[derive(Clone, Debug, Default)]
pub(super) struct Defaults {
    pub(super) common: MethodFields,
    pub(super) per_driver: Vec<(String, MethodFields)>,
    pub(super) probe_ports: Vec<u16>,
    pub(super) accept_bmc_only: bool,
    pub(super) allow_host_only: bool,
    pub(super) max_off_watts: Option<f64>,
    pub(super) max_fence: Option<guard::Limit>,
    pub(super) on_confirmed_off: Option<String>,
}

/// Line numbers of byte offsets in one text: where its newlines are, found
/// in one pass, so that naming the line of each of 100,000 nodes costs a
/// binary search each, not a count from the start of the file.
pub(super) struct Lines(pub(super) Vec<usize>);

impl Lines {
    pub(super) fn of(text: &str) -> Lines {
        Lines(memchr::memchr_iter(b'\n', text.as_bytes()).collect())
    }

    /// The line (from 1) of byte `offset`.
    pub(super) fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&nl| nl < offset) + 1
    }
}

pub(super) fn parse_defaults(t: toml::Table) -> Result<Defaults, DefaultsProblem> {
    let mut t = t;
    let mut d = Defaults::default();
    if let Some(v) = t.remove("probe_ports") {
        d.probe_ports = v.try_into().map_err(DefaultsProblem::ProbePorts)?;
    }
    for key in ["accept_bmc_only", "allow_host_only"] {
        if let Some(v) = t.remove(key) {
            let b = v.as_bool().ok_or(DefaultsProblem::NotBool(key))?;
            if key == "accept_bmc_only" {
                d.accept_bmc_only = b;
            } else {
                d.allow_host_only = b;
            }
        }
    }
    if let Some(v) = t.remove("max_off_watts") {
        let w = v
            .as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .ok_or(DefaultsProblem::WattsNotNumber)?;
        d.max_off_watts = Some(check_watts(w).map_err(DefaultsProblem::Watts)?);
    }
    // Safety settings live beside the method defaults but are not method fields.
    if let Some(v) = t.remove("max_fence") {
        let text = match v {
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::String(s) => s,
            other => format!("{other:?}"),
        };
        d.max_fence = Some(text.parse().map_err(DefaultsProblem::MaxFence)?);
    }
    if let Some(v) = t.remove("on_confirmed_off") {
        d.on_confirmed_off = Some(v.try_into().map_err(DefaultsProblem::OnConfirmedOff)?);
    }
    // `[defaults.NAME]`: every platform's, and manual's.
    let drivers = crate::method::platforms::PLATFORMS.iter().map(|p| p.name());
    for driver in drivers.chain(["manual"]) {
        if let Some(v) = t.remove(driver) {
            let f: MethodFields = v
                .try_into()
                .map_err(|source| DefaultsProblem::Driver { driver, source })?;
            d.per_driver.push((driver.to_string(), f));
        }
    }
    d.common = toml::Value::Table(t)
        .try_into()
        .map_err(DefaultsProblem::Fields)?;
    let pinned = std::iter::once(("[defaults]".to_string(), &d.common)).chain(
        d.per_driver
            .iter()
            .map(|(k, f)| (format!("[defaults.{k}]"), f)),
    );
    for (table, f) in pinned {
        if f.uuid.is_some() || f.serial.is_some() {
            return Err(DefaultsProblem::Pinned(table));
        }
    }
    Ok(d)
}

/// A `max_off_watts` that makes sense: a finite number, not negative.
pub(super) fn check_watts(w: f64) -> Result<f64, BadWatts> {
    if w.is_finite() && w >= 0.0 {
        Ok(w)
    } else {
        Err(BadWatts(w))
    }
}

/// Checks that a pinned uuid reads as a UUID and a serial is not empty.
pub(super) fn check_pin(uuid: Option<&str>, serial: Option<&str>) -> Result<(), IdentityError> {
    crate::engine::identity::ExpectedIdentity::new(uuid, serial).map(|_| ())
}

/// The `settings` table holds only keys the platform takes, each a
/// string, number, boolean or list of them.
fn check_settings(p: &dyn crate::platform::Platform, m: &MethodFields) -> Result<(), String> {
    let Some(t) = &m.settings else {
        return Ok(());
    };
    let known = p.setting_keys();
    for (k, v) in t {
        if !known.contains(&k.as_str()) {
            return Err(match known.is_empty() {
                true => format!("a {} method takes no settings (settings.{k})", p.name()),
                false => format!(
                    "a {} method has no setting '{k}' (it takes: {})",
                    p.name(),
                    known.join(", ")
                ),
            });
        }
        let plain = |x: &toml::Value| {
            matches!(
                x,
                toml::Value::String(_)
                    | toml::Value::Integer(_)
                    | toml::Value::Float(_)
                    | toml::Value::Boolean(_)
            )
        };
        let ok = match v {
            toml::Value::Array(a) => a.iter().all(plain),
            other => plain(other),
        };
        if !ok {
            return Err(format!(
                "settings.{k} must be a string, number, boolean or a list of them"
            ));
        }
    }
    Ok(())
}

pub(super) fn check_method(m: &MethodFields) -> Result<(), MethodProblem> {
    if m.password.is_some() {
        return Err(MethodProblem::PlainPassword);
    }
    let refs = [
        m.password_file.is_some(),
        m.password_env.is_some(),
        m.password_script.is_some(),
    ];
    if refs.iter().filter(|x| **x).count() > 1 {
        return Err(MethodProblem::TwoPasswords);
    }
    match m.driver_kind().as_deref() {
        None => Err(MethodProblem::NoDriver),
        Some("manual") => Ok(()),
        Some(name) => match crate::method::platforms::by_name(name) {
            Some(p) => {
                check_settings(p, m).map_err(MethodProblem::Platform)?;
                p.check_fields(m).map_err(MethodProblem::Platform)
            }
            None => Err(MethodProblem::UnknownDriver(name.to_string())),
        },
    }
}
