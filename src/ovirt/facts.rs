//! oVirt's facts for `check --record` and drift: the VM's id (also its
//! SMBIOS UUID: a target by name that now finds another id names another
//! machine), the host it ran on (informative: the engine migrates VMs, so a
//! new host is no drift), and the certificate the engine presented
//! (`certificate-changed`; none over plain HTTP).

use super::driver::OvirtDriver;
use crate::platform::facts::{
    note_certificate, with_certificate_rows, DriftRow, FactKind, Section, Seen, Value, CERTIFICATE,
    IDENTITY_BROKEN,
};
use crate::platform::Driver;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "oVirt";
    (
        "identity-changed",
        "broken",
        "oVirt: the target finds a VM with another id (SMBIOS UUID) than recorded",
    ),
);

const KINDS: &[(&str, FactKind)] = &[("vm_id", IDENTITY_BROKEN)];

/// oVirt's rules.
pub static FACTS: Seen = Seen {
    rows: ROWS,
    kinds: KINDS,
    keys: &["vm_id", "host", CERTIFICATE],
    read: "vm_id",
    note,
};

/// What the driver found, and the certificate it was shown.
fn note(driver: &dyn Driver, facts: &mut Section) {
    if let Some(d) = driver.as_any().downcast_ref::<OvirtDriver>() {
        if let Some(vm) = d.found() {
            let text = |s: &str| Value::Text(s.to_string());
            facts.set("vm_id", text(&vm.id));
            facts.set_some("host", vm.host.as_deref().map(text));
        }
        note_certificate(facts, d.certificate());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::facts::{DriftName, FactRules, Outcome, Severity};

    fn seen(id: &str, host: &str) -> Section {
        let mut s = Section::default();
        s.set("vm_id", Value::Text(id.into()));
        s.set("host", Value::Text(host.into()));
        s
    }

    #[test]
    fn another_vm_id_is_broken_another_host_is_no_drift() {
        let ok = Outcome::default();
        let was = seen("a1", "h1");
        assert!(FACTS.drifts(&was, Some(&seen("a1", "h2")), &ok).is_empty());
        let d = FACTS.drifts(&was, Some(&seen("b2", "h1")), &ok);
        assert_eq!(
            d.iter().map(|d| (d.drift, d.severity)).collect::<Vec<_>>(),
            [(DriftName::IdentityChanged, Severity::Broken)]
        );
        let (mut a, mut b) = (was.clone(), was.clone());
        note_certificate(&mut a, Some([1; 32]));
        note_certificate(&mut b, Some([2; 32]));
        let d = FACTS.drifts(&a, Some(&b), &ok);
        assert_eq!(d[0].drift, DriftName::CertificateChanged);
    }
}
