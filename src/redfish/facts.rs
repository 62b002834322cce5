//! Redfish's facts for `check --record` and drift: how the service
//! authenticated, the certificate it presented, the reset types it offers
//! and the ones power off and on would use; `check` refuses a system
//! without a safe reset type for off or on.

use super::driver::{RedfishDriver, ResetPlan};
use crate::engine::error::ErrorKind;
use crate::engine::power::PowerCommand;
use crate::platform::facts::{
    certificate_drift, note_certificate, with_certificate_rows, DriftName, DriftRow, FactDrift,
    FactRules, Outcome, Refusal, Section, Severity, Value,
};
use crate::platform::{Driver, Local, Method};
use std::time::Instant;

/// Redfish's rules.
pub struct Facts;

/// The registered rules.
pub static FACTS: Facts = Facts;

/// Every power off and on has a safe reset type.
fn resets_are_safe(plan: &ResetPlan) -> Result<(), Refusal> {
    for (cmd, choice) in &plan.choices {
        if let (PowerCommand::Off | PowerCommand::On, Err(why)) = (cmd, choice) {
            return Err(Refusal::Unsafe {
                kind: ErrorKind::Unsupported,
                message: format!("no safe reset type for power {}: {why}", why.command),
            });
        }
    }
    Ok(())
}

/// The reset types on offer and the ones off and on would use.
fn note_resets(facts: &mut Section, plan: &ResetPlan) {
    let chosen = |c: PowerCommand| {
        plan.choices
            .iter()
            .find(|(cmd, _)| *cmd == c)
            .and_then(|(_, r)| r.as_ref().ok().cloned())
    };
    facts.set_some("reset_types", plan.offered.clone().map(Value::List));
    facts.set_some("reset_off", chosen(PowerCommand::Off).map(Value::Text));
    facts.set_some("reset_on", chosen(PowerCommand::On).map(Value::Text));
}

const ROWS: &[DriftRow] = with_certificate_rows!(
    "Redfish";
    (
        "reset-type-gone",
        "broken",
        "Redfish: a recorded reset type is gone and power off or on has no safe one left",
    ),
    (
        "reset-type-gone",
        "weakened",
        "Redfish: the reset type off or on used is gone; another is used",
    ),
    (
        "reset-type-gone",
        "changed",
        "Redfish: another recorded reset type is gone",
    ),
);

impl FactRules for Facts {
    fn check<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _detail: &'a str,
        facts: &'a mut Section,
        deadline: Option<Instant>,
    ) -> Local<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let Some(d) = driver.as_any_mut().downcast_mut::<RedfishDriver>() else {
                return Ok(());
            };
            let plan = d.reset_plan(deadline).await?;
            note_resets(facts, &plan);
            resets_are_safe(&plan)
        })
    }

    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        if let Some(d) = driver.as_any().downcast_ref::<RedfishDriver>() {
            let session = d.session_auth();
            // The baseline's order: auth, certificate, then what check noted.
            let resets = ["reset_types", "reset_off", "reset_on"].map(|k| (k, facts.take(k)));
            let auth = d
                .system_uri()
                .map(|_| if session { "session" } else { "basic" }.to_string());
            facts.set_some("auth", auth.map(Value::Text));
            note_certificate(facts, d.certificate());
            for (k, v) in resets {
                facts.set_some(k, v);
            }
        }
        Box::pin(async {})
    }

    fn keep_empty(&self) -> bool {
        true
    }

    fn keys(&self) -> &'static [&'static str] {
        &[
            "auth",
            "certificate",
            "reset_types",
            "reset_off",
            "reset_on",
        ]
    }

    fn drift_rows(&self) -> &'static [DriftRow] {
        ROWS
    }

    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let mut out = Vec::new();
        let empty = Section::default();
        let now = now.unwrap_or(&empty);
        if let (Some(before), Some(after)) = (was.list("reset_types"), now.list("reset_types")) {
            let gone: Vec<&str> = before
                .iter()
                .filter(|t| !after.contains(t))
                .map(|s| s.as_str())
                .collect();
            if !gone.is_empty() {
                let (off, on) = ("reset_off", "reset_on");
                let severity = if o.failed == Some(ErrorKind::Unsupported)
                    && (now.text(off).is_none() || now.text(on).is_none())
                {
                    Severity::Broken
                } else if was.text(off) != now.text(off) || was.text(on) != now.text(on) {
                    Severity::Weakened
                } else {
                    Severity::Changed
                };
                out.push(FactDrift {
                    drift: DriftName::ResetTypeGone,
                    severity,
                    was: before.join(", "),
                    now: format!("{} (gone: {})", after.join(", "), gone.join(", ")),
                });
            }
        }
        // Refused at the handshake: the system was never read.
        out.extend(certificate_drift(was, Some(now), o, "auth"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redfish::model::NoSafeReset;

    #[test]
    fn a_system_without_a_safe_reset_for_off_is_refused() {
        let refused = NoSafeReset {
            command: PowerCommand::Off,
            offered: vec!["On".into()],
        };
        let plan = ResetPlan {
            offered: Some(vec!["On".into()]),
            choices: vec![
                (PowerCommand::On, Ok("On".into())),
                (PowerCommand::Off, Err(refused.clone())),
            ],
        };
        let e = resets_are_safe(&plan).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert_eq!(
            e.to_string(),
            format!("no safe reset type for power off: {refused}")
        );
        let mut s = Section::default();
        note_resets(&mut s, &plan);
        assert_eq!(s.list("reset_types"), Some(&["On".to_string()][..]));
        assert_eq!(
            (s.text("reset_on"), s.text("reset_off")),
            (Some("On"), None)
        );
    }
}
