//! IPMI's facts for `check --record` and drift: the session's cipher suite
//! and the privilege the BMC granted; `check` refuses a session below
//! operator and reports the workarounds the BMC needed.

use super::config::Privilege;
use super::driver::IpmiDriver;
use crate::engine::error::ErrorKind;
use crate::platform::facts::{
    DriftName, DriftRow, FactDrift, FactRules, Outcome, Refusal, Section, Severity, Value,
};
use crate::platform::{Driver, Local, Method};
use std::time::Instant;

/// IPMI's rules.
pub struct Facts;

/// The registered rules.
pub static FACTS: Facts = Facts;

/// An IPMI session of privilege `granted` may control chassis power;
/// `detail` (what `connect` said) goes into the refusal.
fn privilege_suffices(granted: Privilege, detail: &str) -> Result<(), Refusal> {
    if granted >= Privilege::Operator {
        Ok(())
    } else {
        Err(Refusal::Unsafe {
            kind: ErrorKind::PrivilegeNotObtained,
            message: format!(
                "the session privilege is too low for power control ({detail}); \
                 chassis control needs operator or administrator"
            ),
        })
    }
}

fn rank_suite(s: i64) -> u8 {
    match s {
        17 => 2,
        3 => 1,
        _ => 0,
    }
}

const ROWS: &[DriftRow] = &[
    (
        "cipher-downgraded",
        "weakened",
        "IPMI: a weaker cipher suite than recorded (17 -> 3)",
    ),
    (
        "cipher-downgraded",
        "broken",
        "IPMI: no cipher suite both sides accept any more",
    ),
    (
        "privilege-below-operator",
        "broken",
        "the session's privilege is below operator or refused (IPMI), or the account may not act (an HTTP 403)",
    ),
    (
        "privilege-changed",
        "changed",
        "IPMI: another privilege than recorded, still operator or above (administrator -> operator: fencing needs operator)",
    ),
];

impl FactRules for Facts {
    fn check<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        detail: &'a str,
        _facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, Result<(), Refusal>> {
        let granted = driver
            .as_any()
            .downcast_ref::<IpmiDriver>()
            .map(|d| d.privilege());
        Box::pin(async move {
            match granted {
                Some(p) => privilege_suffices(p, detail),
                None => Ok(()),
            }
        })
    }

    fn workarounds(&self, driver: &dyn Driver) -> Vec<&'static str> {
        driver
            .as_any()
            .downcast_ref::<IpmiDriver>()
            .map(|d| {
                d.workarounds_needed()
                    .iter()
                    .map(super::workaround::Workaround::name)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        if let Some(d) = driver.as_any().downcast_ref::<IpmiDriver>() {
            let suite = d.cipher_suite();
            // The privilege means something only once a session was set up.
            let privilege = suite.map(|_| d.privilege().as_str().to_string());
            facts.set_some("cipher_suite", suite.map(|s| Value::Number(s.into())));
            facts.set_some("privilege", privilege.map(Value::Text));
        }
        Box::pin(async {})
    }

    fn keys(&self) -> &'static [&'static str] {
        &["cipher_suite", "privilege"]
    }

    fn drift_rows(&self) -> &'static [DriftRow] {
        ROWS
    }

    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let mut out = Vec::new();
        let mut push = |drift, severity, was: String, now: String| {
            out.push(FactDrift {
                drift,
                severity,
                was,
                now,
            })
        };
        let empty = Section::default();
        let now = now.unwrap_or(&empty);
        if let Some(a) = was.number("cipher_suite") {
            match now.number("cipher_suite") {
                Some(b) if rank_suite(b) < rank_suite(a) => push(
                    DriftName::CipherDowngraded,
                    Severity::Weakened,
                    format!("cipher suite {a}"),
                    format!("cipher suite {b}"),
                ),
                None if o.failed == Some(ErrorKind::CipherUnsupported) => push(
                    DriftName::CipherDowngraded,
                    Severity::Broken,
                    format!("cipher suite {a}"),
                    o.error_or(""),
                ),
                _ => {}
            }
        }
        let parse = |p: Option<&str>| p.and_then(|p| p.parse::<Privilege>().ok());
        let (w, n) = (was.text("privilege"), now.text("privilege"));
        let (p0, p1) = (parse(w), parse(n));
        let below = p1.is_some_and(|p| p < Privilege::Operator);
        if o.failed == Some(ErrorKind::PrivilegeNotObtained) || below {
            push(
                DriftName::PrivilegeBelowOperator,
                Severity::Broken,
                w.unwrap_or("none").to_string(),
                match n {
                    Some(p) if below => p.to_string(),
                    _ => o.error_or("refused"),
                },
            );
        } else if let (Some(a), Some(b)) = (p0, p1) {
            if a != b {
                push(
                    DriftName::PrivilegeChanged,
                    Severity::Changed,
                    a.as_str().into(),
                    b.as_str().into(),
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_below_operator_is_refused_with_what_was_negotiated() {
        assert!(
            privilege_suffices(Privilege::Operator, "cipher suite 17, privilege operator").is_ok()
        );
        let e = privilege_suffices(Privilege::User, "cipher suite 17, privilege user").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PrivilegeNotObtained);
        assert_eq!(
            e.to_string(),
            "the session privilege is too low for power control (cipher suite 17, \
             privilege user); chassis control needs operator or administrator"
        );
    }
}
