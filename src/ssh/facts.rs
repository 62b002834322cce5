//! SSH's facts for `check --record` and drift: the host key offered.

use super::driver::SshDriver;
use crate::platform::facts::{
    DriftName, DriftRow, FactDrift, FactRules, Outcome, Section, Severity, Value,
};
use crate::platform::{Driver, Local, Method};
use std::time::Instant;

/// SSH's rules.
pub struct Facts;

/// The registered rules.
pub static FACTS: Facts = Facts;

const ROWS: &[DriftRow] = &[
    (
        "host-key-changed",
        "broken",
        "SSH: another host key than recorded, and it is refused",
    ),
    (
        "host-key-changed",
        "changed",
        "SSH: another host key than recorded, accepted",
    ),
];

impl FactRules for Facts {
    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        if let Some(d) = driver.as_any().downcast_ref::<SshDriver>() {
            facts.set_some("host_key", d.host_key().map(|k| Value::Text(k.to_string())));
        }
        Box::pin(async {})
    }

    fn drift_rows(&self) -> &'static [DriftRow] {
        ROWS
    }

    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let (Some(a), Some(b)) = (was.text("host_key"), now.and_then(|n| n.text("host_key")))
        else {
            return Vec::new();
        };
        if a == b {
            return Vec::new();
        }
        vec![FactDrift {
            drift: DriftName::HostKeyChanged,
            severity: if o.failed.is_some() {
                Severity::Broken
            } else {
                Severity::Changed
            },
            was: a.into(),
            now: b.into(),
        }]
    }
}
