//! Azure's facts for `check --record` and drift: the VM's vmId (a new one
//! means the VM was deleted and created again under its name: broken), its
//! resource ID and region (informative), and the certificate Resource
//! Manager presented (`certificate`, as every HTTPS platform records it).

use super::driver::AzureDriver;
use crate::platform::facts::{
    note_certificate, with_certificate_rows, DriftRow, FactKind, Section, Seen, Value, CERTIFICATE,
    IDENTITY_BROKEN,
};
use crate::platform::Driver;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "Azure";
    (
        "identity-changed",
        "broken",
        "Azure: the VM has another vmId than recorded (deleted and created again under its name)",
    ),
);

const KINDS: &[(&str, FactKind)] = &[("vm_id", IDENTITY_BROKEN)];

/// Azure's rules.
pub static FACTS: Seen = Seen {
    rows: ROWS,
    kinds: KINDS,
    keys: &["vm_id", "resource_id", "location", CERTIFICATE],
    read: "vm_id",
    note,
};

/// What the driver found, and the certificate it was shown.
fn note(driver: &dyn Driver, facts: &mut Section) {
    if let Some(d) = driver.as_any().downcast_ref::<AzureDriver>() {
        if let Some(vm) = d.vm() {
            let text = |s: &str| Value::Text(s.to_string());
            facts.set_some("vm_id", vm.vm_id.as_deref().map(text));
            facts.set("resource_id", text(&vm.id));
            facts.set_some("location", vm.location.as_deref().map(text));
        }
        note_certificate(facts, d.certificate());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::facts::{DriftName, FactRules, Outcome, Severity};

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
        assert!(FACTS.drifts(&was, Some(&was), &ok).is_empty());
        let d = FACTS.drifts(&was, Some(&seen("v-2")), &ok);
        assert_eq!(
            (d[0].drift, d[0].severity),
            (DriftName::IdentityChanged, Severity::Broken)
        );
        let mut a = was.clone();
        note_certificate(&mut a, Some([1; 32]));
        let mut b = was.clone();
        note_certificate(&mut b, Some([2; 32]));
        let d = FACTS.drifts(&a, Some(&b), &ok);
        assert_eq!(d[0].drift, DriftName::CertificateChanged);
    }
}
