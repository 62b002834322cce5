//! Nutanix's facts for `check --record` and drift: the VM's extId and BIOS
//! UUID (a target by name that now finds another VM names another
//! machine), its cluster, and the certificate Prism Central presented
//! (`certificate-changed`).

use super::driver::NutanixDriver;
use crate::platform::facts::{
    note_certificate, with_certificate_rows, DriftRow, FactKind, Section, Seen, Value, CERTIFICATE,
    IDENTITY_BROKEN,
};
use crate::platform::Driver;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "Nutanix";
    (
        "identity-changed",
        "broken",
        "Nutanix: the target finds a VM with another extId or BIOS UUID than recorded",
    ),
);

const KINDS: &[(&str, FactKind)] = &[("ext_id", IDENTITY_BROKEN), ("bios_uuid", IDENTITY_BROKEN)];

/// Nutanix's rules.
pub static FACTS: Seen = Seen {
    rows: ROWS,
    kinds: KINDS,
    keys: &["ext_id", "bios_uuid", "cluster", CERTIFICATE],
    read: "ext_id",
    note,
};

/// What the driver found, and the certificate it was shown.
fn note(driver: &dyn Driver, facts: &mut Section) {
    if let Some(d) = driver.as_any().downcast_ref::<NutanixDriver>() {
        if let Some(vm) = d.vm() {
            let text = |s: &str| Value::Text(s.to_string());
            facts.set("ext_id", text(&vm.ext_id));
            facts.set_some("bios_uuid", vm.bios_uuid.as_deref().map(text));
            facts.set_some("cluster", vm.cluster.as_deref().map(text));
        }
        note_certificate(facts, d.certificate());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::facts::{DriftName, FactRules, Outcome, Severity};

    #[test]
    fn another_vm_under_the_name_is_broken() {
        let seen = |e: &str| {
            let mut s = Section::default();
            s.set("ext_id", Value::Text(e.into()));
            s
        };
        let ok = Outcome::default();
        assert!(FACTS.drifts(&seen("a"), Some(&seen("a")), &ok).is_empty());
        let d = FACTS.drifts(&seen("a"), Some(&seen("b")), &ok);
        assert_eq!(
            d.iter().map(|d| (d.drift, d.severity)).collect::<Vec<_>>(),
            [(DriftName::IdentityChanged, Severity::Broken)]
        );
    }
}
