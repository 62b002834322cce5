//! Proxmox VE's facts for `check --record` and drift: the guest's VMID
//! (a target by name that now finds another VMID names another machine),
//! its kind and node (where it runs now: not a drift), and the certificate
//! the API presented (`certificate-changed`).

use super::driver::PveDriver;
use crate::platform::facts::{
    by_kinds, certificate_drift, note_certificate, with_certificate_rows, DriftName, DriftRow,
    FactDrift, FactKind, FactRules, Outcome, Section, Severity, Value, CERTIFICATE,
};
use crate::platform::{Driver, Local, Method};
use std::time::Instant;

/// Proxmox VE's rules.
pub struct Facts;

/// The registered rules.
pub static FACTS: Facts = Facts;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "Proxmox VE";
    (
        "identity-changed",
        "broken",
        "Proxmox VE: the target finds a guest with another VMID (or kind) than recorded",
    ),
);

const IDENTITY: FactKind = FactKind {
    drift: DriftName::IdentityChanged,
    severity: Severity::Broken,
};

const KINDS: &[(&str, FactKind)] = &[("vmid", IDENTITY), ("kind", IDENTITY)];

impl FactRules for Facts {
    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        if let Some(d) = driver.as_any().downcast_ref::<PveDriver>() {
            if let Some(f) = d.found() {
                facts.set("vmid", Value::Number(f.vmid.into()));
                facts.set("kind", Value::Text(f.kind.as_str().into()));
                facts.set("node", Value::Text(f.node.clone()));
            }
            note_certificate(facts, d.certificate());
        }
        Box::pin(async {})
    }

    fn kinds(&self) -> &'static [(&'static str, FactKind)] {
        KINDS
    }

    fn keys(&self) -> &'static [&'static str] {
        &["vmid", "kind", "node", CERTIFICATE]
    }

    fn drift_rows(&self) -> &'static [DriftRow] {
        ROWS
    }

    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let mut out = by_kinds(KINDS, was, now, o);
        out.extend(certificate_drift(was, now, o, "vmid"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(Facts.drifts(&was, Some(&seen(100, "pve2")), &ok).is_empty());
        let d = Facts.drifts(&was, Some(&seen(109, "pve1")), &ok);
        assert_eq!(
            d.iter().map(|d| (d.drift, d.severity)).collect::<Vec<_>>(),
            [(DriftName::IdentityChanged, Severity::Broken)]
        );
    }
}
