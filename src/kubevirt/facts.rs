//! KubeVirt's facts for `check --record` and drift: the VM's namespace,
//! uid, firmware UUID and run strategy, and whether the API refused to
//! show what proves off (the launcher pods, their nodes: `denied`, absent
//! when no read was refused; a running VM's status needs neither). All of
//! it comes from the reads `check` makes anyway; so does the certificate
//! the API server presented (`certificate`, recorded also when it was
//! refused: `certificate-changed`).

use super::driver::KubevirtDriver;
use crate::platform::facts::{
    by_kinds, certificate_drift, note_certificate, with_certificate_rows, DriftName, DriftRow,
    FactDrift, FactKind, FactRules, Outcome, Section, Severity, Value, CERTIFICATE,
};
use crate::platform::{Driver, Local, Method};
use std::time::Instant;

/// KubeVirt's rules.
pub struct Facts;

/// The registered rules.
pub static FACTS: Facts = Facts;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "KubeVirt";
    (
        "identity-changed",
        "broken",
        "KubeVirt: the VM has another uid than recorded (deleted and made again under its name)",
    ),
    (
        "witness-unreadable",
        "weakened",
        "KubeVirt: the API now refuses the launcher pods or their nodes (what proves off), which it did not when recorded",
    ),
    (
        "setting-changed",
        "changed",
        "KubeVirt: the VM's run strategy differs from the one recorded",
    ),
);

const KINDS: &[(&str, FactKind)] = &[
    (
        "vm_uid",
        FactKind {
            drift: DriftName::IdentityChanged,
            severity: Severity::Broken,
        },
    ),
    (
        "run_strategy",
        FactKind {
            drift: DriftName::SettingChanged,
            severity: Severity::Changed,
        },
    ),
];

/// What reads the proof of off: `(fact key, what the denial names)`.
const WITNESSES: &[(&str, &str)] = &[("launcher_pods", "list pods"), ("nodes", "get nodes")];

/// `denied` when the API refused the read (403).
fn denied(denials: &[String], what: &str) -> Option<&'static str> {
    denials.iter().any(|d| d.contains(what)).then_some("denied")
}

impl FactRules for Facts {
    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        if let Some(d) = driver.as_any().downcast_ref::<KubevirtDriver>() {
            if let Some(vm) = d.vm() {
                let text = |s: &str| Value::Text(s.to_string());
                facts.set("namespace", text(d.namespace()));
                facts.set("vm_uid", text(&vm.uid));
                facts.set_some("firmware_uuid", vm.firmware_uuid.as_deref().map(text));
                facts.set("run_strategy", text(vm.strategy.as_str()));
                let denials = d.denied();
                for (key, what) in WITNESSES {
                    facts.set_some(key, denied(&denials, what).map(text));
                }
            }
            note_certificate(facts, d.certificate());
        }
        Box::pin(async {})
    }

    fn kinds(&self) -> &'static [(&'static str, FactKind)] {
        KINDS
    }

    fn keys(&self) -> &'static [&'static str] {
        &[
            "namespace",
            "vm_uid",
            "firmware_uuid",
            "run_strategy",
            "launcher_pods",
            "nodes",
            CERTIFICATE,
        ]
    }

    fn drift_rows(&self) -> &'static [DriftRow] {
        ROWS
    }

    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let mut out = by_kinds(KINDS, was, now, o);
        for (key, _) in WITNESSES {
            let b = now.and_then(|n| n.text(key));
            if was.text(key) != Some("denied") && b == Some("denied") {
                out.push(FactDrift {
                    drift: DriftName::WitnessUnreadable,
                    severity: Severity::Weakened,
                    was: format!("{key} not refused"),
                    now: format!("{key} denied"),
                });
            }
        }
        // Refused at the handshake: no VM was read.
        out.extend(certificate_drift(was, now, o, "vm_uid"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(uid: &str, strategy: &str, pods: Option<&str>) -> Section {
        let mut s = Section::default();
        let text = |s: &str| Value::Text(s.to_string());
        s.set("namespace", text("vms"));
        s.set("vm_uid", text(uid));
        s.set("run_strategy", text(strategy));
        s.set_some("launcher_pods", pods.map(text));
        s
    }

    #[test]
    fn a_new_uid_a_new_strategy_and_a_lost_witness_are_named() {
        let ok = Outcome::default();
        let was = seen("u1", "Always", None);
        assert!(Facts.drifts(&was, Some(&was), &ok).is_empty());
        // A baseline from before the certificate was recorded: no drift for it.
        let mut now = was.clone();
        note_certificate(&mut now, Some([7; 32]));
        assert!(Facts.drifts(&was, Some(&now), &ok).is_empty());
        // Refused at the handshake (no VM read): broken.
        let mut refused = Section::default();
        note_certificate(&mut refused, Some([8; 32]));
        let failed = Outcome {
            failed: Some(crate::engine::error::ErrorKind::Protocol),
            error: None,
        };
        let d = Facts.drifts(&now, Some(&refused), &failed);
        assert_eq!(
            d.iter().map(|d| (d.drift, d.severity)).collect::<Vec<_>>(),
            [(DriftName::CertificateChanged, Severity::Broken)]
        );
        let d = Facts.drifts(&was, Some(&seen("u2", "Manual", Some("denied"))), &ok);
        let named: Vec<_> = d.iter().map(|d| (d.drift, d.severity)).collect();
        assert_eq!(
            named,
            [
                (DriftName::IdentityChanged, Severity::Broken),
                (DriftName::SettingChanged, Severity::Changed),
                (DriftName::WitnessUnreadable, Severity::Weakened),
            ]
        );
        assert_eq!(
            (d[0].was.as_str(), d[0].now.as_str()),
            ("vm_uid u1", "vm_uid u2")
        );
        // Denied before and not refused now is no drift.
        let was = seen("u1", "Always", Some("denied"));
        assert!(Facts
            .drifts(&was, Some(&seen("u1", "Always", None)), &ok)
            .is_empty());
        let nodes = ["RBAC forbids get nodes: no".to_string()];
        assert_eq!(denied(&nodes, "get nodes"), Some("denied"));
        assert_eq!(denied(&nodes, "list pods"), None);
    }
}
