//! Nutanix's facts for `check --record` and drift: the VM's extId and BIOS
//! UUID (a target by name that now finds another VM names another
//! machine), its cluster, and the certificate Prism Central presented
//! (`certificate-changed`).

use super::driver::NutanixDriver;
use crate::platform::facts::{
    by_kinds, certificate_drift, note_certificate, with_certificate_rows, DriftName, DriftRow,
    FactDrift, FactKind, FactRules, Outcome, Section, Severity, Value, CERTIFICATE,
};
use crate::platform::{Driver, Local, Method};
use std::time::Instant;

/// Nutanix's rules.
pub struct Facts;

/// The registered rules.
pub static FACTS: Facts = Facts;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "Nutanix";
    (
        "identity-changed",
        "broken",
        "Nutanix: the target finds a VM with another extId or BIOS UUID than recorded",
    ),
);

const IDENTITY: FactKind = FactKind {
    drift: DriftName::IdentityChanged,
    severity: Severity::Broken,
};

const KINDS: &[(&str, FactKind)] = &[("ext_id", IDENTITY), ("bios_uuid", IDENTITY)];

impl FactRules for Facts {
    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        if let Some(d) = driver.as_any().downcast_ref::<NutanixDriver>() {
            if let Some(vm) = d.vm() {
                let text = |s: &str| Value::Text(s.to_string());
                facts.set("ext_id", text(&vm.ext_id));
                facts.set_some("bios_uuid", vm.bios_uuid.as_deref().map(text));
                facts.set_some("cluster", vm.cluster.as_deref().map(text));
            }
            note_certificate(facts, d.certificate());
        }
        Box::pin(async {})
    }

    fn kinds(&self) -> &'static [(&'static str, FactKind)] {
        KINDS
    }

    fn keys(&self) -> &'static [&'static str] {
        &["ext_id", "bios_uuid", "cluster", CERTIFICATE]
    }

    fn drift_rows(&self) -> &'static [DriftRow] {
        ROWS
    }

    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let mut out = by_kinds(KINDS, was, now, o);
        out.extend(certificate_drift(was, now, o, "ext_id"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_vm_under_the_name_is_broken() {
        let seen = |e: &str| {
            let mut s = Section::default();
            s.set("ext_id", Value::Text(e.into()));
            s
        };
        let ok = Outcome::default();
        assert!(Facts.drifts(&seen("a"), Some(&seen("a")), &ok).is_empty());
        let d = Facts.drifts(&seen("a"), Some(&seen("b")), &ok);
        assert_eq!(
            d.iter().map(|d| (d.drift, d.severity)).collect::<Vec<_>>(),
            [(DriftName::IdentityChanged, Severity::Broken)]
        );
    }
}
