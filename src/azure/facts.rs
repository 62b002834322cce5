//! Azure's facts for `check --record` and drift: the VM's vmId (a new one
//! means the VM was deleted and created again under its name: broken), its
//! resource ID and region (informative), and the certificate Resource
//! Manager presented (`certificate`, as every HTTPS platform records it).

use super::driver::AzureDriver;
use crate::platform::facts::{
    by_kinds, certificate_drift, note_certificate, with_certificate_rows, DriftName, DriftRow,
    FactDrift, FactKind, FactRules, Outcome, Section, Severity, Value, CERTIFICATE,
};
use crate::platform::{Driver, Local, Method};
use std::time::Instant;

/// Azure's rules.
pub struct Facts;

/// The registered rules.
pub static FACTS: Facts = Facts;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "Azure";
    (
        "identity-changed",
        "broken",
        "Azure: the VM has another vmId than recorded (deleted and created again under its name)",
    ),
);

const KINDS: &[(&str, FactKind)] = &[(
    "vm_id",
    FactKind {
        drift: DriftName::IdentityChanged,
        severity: Severity::Broken,
    },
)];

impl FactRules for Facts {
    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        if let Some(d) = driver.as_any().downcast_ref::<AzureDriver>() {
            if let Some(vm) = d.vm() {
                let text = |s: &str| Value::Text(s.to_string());
                facts.set_some("vm_id", vm.vm_id.as_deref().map(text));
                facts.set("resource_id", text(&vm.id));
                facts.set_some("location", vm.location.as_deref().map(text));
            }
            note_certificate(facts, d.certificate());
        }
        Box::pin(async {})
    }
    fn kinds(&self) -> &'static [(&'static str, FactKind)] {
        KINDS
    }
    fn keys(&self) -> &'static [&'static str] {
        &["vm_id", "resource_id", "location", CERTIFICATE]
    }
    fn drift_rows(&self) -> &'static [DriftRow] {
        ROWS
    }
    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let mut out = by_kinds(KINDS, was, now, o);
        out.extend(certificate_drift(was, now, o, "vm_id"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(vm_id: &str) -> Section {
        let mut s = Section::default();
        s.set("vm_id", Value::Text(vm_id.to_string()));
        s.set("location", Value::Text("westeurope".into()));
        s
    }

    #[test]
    fn a_new_vm_id_is_broken_and_a_new_certificate_changed() {
        let ok = Outcome::default();
        let was = seen("v-1");
        assert!(Facts.drifts(&was, Some(&was), &ok).is_empty());
        let d = Facts.drifts(&was, Some(&seen("v-2")), &ok);
        assert_eq!(
            (d[0].drift, d[0].severity),
            (DriftName::IdentityChanged, Severity::Broken)
        );
        let mut a = was.clone();
        note_certificate(&mut a, Some([1; 32]));
        let mut b = was.clone();
        note_certificate(&mut b, Some([2; 32]));
        let d = Facts.drifts(&a, Some(&b), &ok);
        assert_eq!(d[0].drift, DriftName::CertificateChanged);
    }
}
