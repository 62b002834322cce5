//! Proxmox VE's facts for `check --record` and drift: the guest's VMID
//! (a target by name that now finds another VMID names another machine),
//! its kind and node (where it runs now: not a drift), and the certificate
//! the API presented (`certificate-changed`).

use super::driver::PveDriver;
use crate::platform::facts::{
    note_certificate, with_certificate_rows, DriftRow, FactKind, Section, Seen, Value, CERTIFICATE,
    IDENTITY_BROKEN,
};
use crate::platform::Driver;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "Proxmox VE";
    (
        "identity-changed",
        "broken",
        "Proxmox VE: the target finds a guest with another VMID (or kind) than recorded",
    ),
);

const KINDS: &[(&str, FactKind)] = &[("vmid", IDENTITY_BROKEN), ("kind", IDENTITY_BROKEN)];

/// Proxmox VE's rules.
pub static FACTS: Seen = Seen {
    rows: ROWS,
    kinds: KINDS,
    keys: &["vmid", "kind", "node", CERTIFICATE],
    read: "vmid",
    note,
};

/// What the driver found, and the certificate it was shown.
fn note(driver: &dyn Driver, facts: &mut Section) {
    if let Some(d) = driver.as_any().downcast_ref::<PveDriver>() {
        if let Some(f) = d.found() {
            facts.set("vmid", Value::Number(f.vmid.into()));
            facts.set("kind", Value::Text(f.kind.as_str().into()));
            facts.set("node", Value::Text(f.node.clone()));
        }
        note_certificate(facts, d.certificate());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::facts::{DriftName, FactRules, Outcome, Severity};

    fn seen(vmid: i64, node: &str) -> Section {
        let mut s = Section::default();
        s.set("vmid", Value::Number(vmid));
        s.set("kind", Value::Text("qemu".into()));
        s.set("node", Value::Text(node.into()));
        s
    }

    #[test]
    fn another_vmid_is_another_machine_another_node_is_not_a_drift() {
        let ok = Outcome::default();
        let was = seen(100, "pve1");
        assert!(FACTS.drifts(&was, Some(&seen(100, "pve2")), &ok).is_empty());
        let d = FACTS.drifts(&was, Some(&seen(109, "pve1")), &ok);
        assert_eq!(
            d.iter().map(|d| (d.drift, d.severity)).collect::<Vec<_>>(),
            [(DriftName::IdentityChanged, Severity::Broken)]
        );
    }
}
