//! vSphere's facts for `check --record` and drift: the VM's managed-object
//! id and instance UUID (either changing means the VM was registered or
//! made again under its name), its BIOS UUID (also the level's identity),
//! and the ESXi host running it (informative: DRS and vMotion move VMs, so
//! a new host is no drift). All of it comes from the read `check` makes
//! anyway; so does the certificate vCenter presented (`certificate`,
//! recorded also when it was refused: `certificate-changed`).

use super::driver::VsphereDriver;
use crate::platform::facts::{
    note_certificate, with_certificate_rows, DriftRow, FactKind, Section, Seen, Value, CERTIFICATE,
    IDENTITY_BROKEN,
};
use crate::platform::Driver;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "vSphere";
    (
        "identity-changed",
        "broken",
        "vSphere: the VM has another managed-object id or instance UUID than recorded (registered or made again under its name)",
    ),
);

const KINDS: &[(&str, FactKind)] = &[("vm", IDENTITY_BROKEN), ("instance_uuid", IDENTITY_BROKEN)];

/// vSphere's rules.
pub static FACTS: Seen = Seen {
    rows: ROWS,
    kinds: KINDS,
    keys: &["vm", "instance_uuid", "bios_uuid", "host", CERTIFICATE],
    read: "vm",
    note,
};

/// What the driver found, and the certificate it was shown.
fn note(driver: &dyn Driver, facts: &mut Section) {
    if let Some(d) = driver.as_any().downcast_ref::<VsphereDriver>() {
        if let Some(vm) = d.vm() {
            let text = |s: &str| Value::Text(s.to_string());
            facts.set("vm", text(&vm.moref.value));
            facts.set_some("instance_uuid", vm.instance_uuid.as_deref().map(text));
            facts.set_some("bios_uuid", vm.bios_uuid.as_deref().map(text));
            facts.set_some("host", vm.host_name.as_deref().map(text));
        }
        note_certificate(facts, d.certificate());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::facts::{DriftName, FactRules, Outcome, Severity};

    fn seen(vm: &str, instance: &str, host: &str) -> Section {
        let mut s = Section::default();
        let text = |s: &str| Value::Text(s.to_string());
        s.set("vm", text(vm));
        s.set("instance_uuid", text(instance));
        s.set("host", text(host));
        s
    }

    #[test]
    fn a_new_moref_or_instance_is_broken_and_a_new_host_is_no_drift() {
        let ok = Outcome::default();
        let was = seen("vm-42", "5012-aa", "esx-1");
        assert!(FACTS.drifts(&was, Some(&was), &ok).is_empty());
        assert!(
            FACTS
                .drifts(&was, Some(&seen("vm-42", "5012-aa", "esx-2")), &ok)
                .is_empty(),
            "vMotion is no drift"
        );
        // A baseline from before the certificate was recorded: no drift for it.
        let mut now = was.clone();
        note_certificate(&mut now, Some([7; 32]));
        assert!(FACTS.drifts(&was, Some(&now), &ok).is_empty());
        let mut other = was.clone();
        note_certificate(&mut other, Some([8; 32]));
        let d = FACTS.drifts(&now, Some(&other), &ok);
        assert_eq!(
            (d[0].drift, d[0].severity),
            (DriftName::CertificateChanged, Severity::Changed)
        );
        let d = FACTS.drifts(&was, Some(&seen("vm-77", "5012-bb", "esx-1")), &ok);
        let named: Vec<_> = d.iter().map(|d| (d.drift, d.severity)).collect();
        assert_eq!(
            named,
            [
                (DriftName::IdentityChanged, Severity::Broken),
                (DriftName::IdentityChanged, Severity::Broken),
            ]
        );
        assert_eq!(
            (d[0].was.as_str(), d[0].now.as_str()),
            ("vm vm-42", "vm vm-77")
        );
    }
}
