//! What running one action on one node produced, as every front and the
//! audit trail record it: the typed [`TargetOutcome`], the error class,
//! the levels tried ([`Attempt`]), the traffic and the event timeline.
//! The fan-out builds these; the fronts render them (JSON field names and
//! values are part of the command-line contract, SPEC §3).

use crate::engine::error::ErrorKind;
use crate::engine::event::{Event, Stamped};
use crate::engine::power::{Action, PowerState, Transition};
use crate::engine::run::{Failure, Outcome};
use crate::fleet::verify::{Verdict, VerifyReport};
use serde::Serialize;
use std::time::Duration;

/// What a finished action amounts to, as recorded: the engine's
/// [`Outcome`] without its payload, or — when `--verify` followed — the
/// verify verdict (the engine's outcome then moves to `action_outcome`).
/// Serialised (JSON, audit) as the kebab-case words `status`,
/// `in-transition`, `already`, `reached`, `rebooted`, `fenced-not-restored`,
/// `cycle-sent`, `off-sent`, `monitored`, `diag-sent`, `acknowledged`, and
/// the verdicts `proven`, `bmc-only`, `contradiction`, `unproven`,
/// `no-evidence`, `drift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetOutcome {
    /// The power state was read.
    Status,
    /// `status` read a power change under way (see [`TargetResult::transition`]).
    InTransition,
    /// The node was already in the requested state (confirmed).
    Already,
    /// The requested state was reached (confirmed).
    Reached,
    /// Off confirmed, then on confirmed.
    Rebooted,
    /// Off confirmed, but the node did not come back on: fenced, yet a failure.
    FencedNotRestored,
    /// A power cycle was accepted; nothing observed the node off (sent, unverified).
    CycleSent,
    /// A power-off was sent through a method that cannot observe off (sent, unverified).
    OffSent,
    /// The BMC answers and authenticates.
    Monitored,
    /// A diagnostic interrupt was accepted (sent, unverified).
    DiagSent,
    /// A person acknowledged a manual fencing; no power state was observed.
    Acknowledged,
    /// `--verify` followed: its verdict, recorded in the verdict's own word.
    Verified(Verdict),
}

impl TargetOutcome {
    /// The recorded form of an engine outcome.
    pub fn of(o: &Outcome) -> Self {
        match o {
            Outcome::Status { .. } => TargetOutcome::Status,
            Outcome::InTransition { .. } => TargetOutcome::InTransition,
            Outcome::Already { .. } => TargetOutcome::Already,
            Outcome::Reached { .. } => TargetOutcome::Reached,
            Outcome::Rebooted => TargetOutcome::Rebooted,
            Outcome::FencedNotRestored { .. } => TargetOutcome::FencedNotRestored,
            Outcome::CycleSent => TargetOutcome::CycleSent,
            Outcome::OffSent => TargetOutcome::OffSent,
            Outcome::Monitored => TargetOutcome::Monitored,
            Outcome::DiagSent => TargetOutcome::DiagSent,
            Outcome::Acknowledged { .. } => TargetOutcome::Acknowledged,
        }
    }

    /// The recorded form of a verify verdict.
    pub fn of_verdict(v: Verdict) -> Self {
        TargetOutcome::Verified(v)
    }

    /// The word used in JSON, audit records and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetOutcome::Status => "status",
            TargetOutcome::InTransition => "in-transition",
            TargetOutcome::Already => "already",
            TargetOutcome::Reached => "reached",
            TargetOutcome::Rebooted => "rebooted",
            TargetOutcome::FencedNotRestored => "fenced-not-restored",
            TargetOutcome::CycleSent => "cycle-sent",
            TargetOutcome::OffSent => "off-sent",
            TargetOutcome::Monitored => "monitored",
            TargetOutcome::DiagSent => "diag-sent",
            TargetOutcome::Acknowledged => "acknowledged",
            TargetOutcome::Verified(v) => v.as_str(),
        }
    }

    /// A command was accepted but nothing observed its effect: "sent,
    /// unverified" — not a success natively unless a verification follows.
    pub fn unverified(self) -> bool {
        matches!(
            self,
            TargetOutcome::CycleSent | TargetOutcome::OffSent | TargetOutcome::DiagSent
        )
    }
}

impl Serialize for TargetOutcome {
    /// As its word ([`TargetOutcome::as_str`]): JSON and audit records carry
    /// `"outcome": "reached"` or `"outcome": "contradiction"` alike.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Datagram counters for the record.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Traffic {
    /// Datagrams sent (retransmissions included).
    pub sent: u32,
    /// Datagrams received.
    pub received: u32,
    /// Retransmissions.
    pub retransmits: u32,
}

/// A level that was tried and did not fence the node.
#[derive(Clone, Debug, Serialize)]
pub struct Attempt {
    /// Level number (1 = first method).
    pub level: usize,
    /// Driver name.
    pub method: String,
    /// Endpoint URL (no secret).
    pub endpoint: String,
    /// Why it did not succeed.
    pub error: String,
}

/// One target's result, as printed in JSON.
#[derive(Clone, Debug, Serialize)]
pub struct TargetResult {
    /// The node's name (the target URL when no inventory names it).
    pub node: String,
    /// The target as written or resolved (no secret).
    pub target: String,
    /// The driver of the level that produced this result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Its endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The level (1-based) that produced this result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<usize>,
    /// Earlier levels that failed, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// The action.
    pub action: Action,
    /// Whether the requested state was reached and observed (with
    /// `--verify`: and proven, or accepted as BMC-only proof).
    pub ok: bool,
    /// The last power state a device reported (with a verify verdict other
    /// than `proven`, `verdict` says what that report is worth).
    pub state: Option<PowerState>,
    /// `status` only: the power change the device reports under way (the
    /// node is neither on nor off yet; `state` is then null).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition: Option<Transition>,
    /// What happened (absent when the action failed without an outcome);
    /// with `--verify`, the verdict.
    pub outcome: Option<TargetOutcome>,
    /// With `--verify`: what the action itself achieved (`outcome` holds the verdict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_outcome: Option<TargetOutcome>,
    /// With `--verify`: the verdict (the whole report is in `verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The failure, if any.
    pub error: Option<String>,
    /// The failure's class (timeout, password-invalid, …).
    pub error_kind: Option<ErrorKind>,
    /// Wall time of the action.
    pub elapsed_ms: u64,
    /// The session that was used (cipher suite, privilege).
    pub session: Option<String>,
    /// Datagram counters.
    pub traffic: Traffic,
    /// Every step with its time: the evidence behind `ok`.
    pub timeline: Vec<Stamped>,
    /// `--verify`: the independent verification that followed (for a
    /// verified reboot, of the node back on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyReport>,
    /// `reboot --verify`: the verification of the off, which came first
    /// (present when it proved the node off and the node was powered on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify_off: Option<VerifyReport>,
    /// `--crashdump`: the NMI and the wait for the dump before the power-off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crashdump: Option<crate::fleet::sequence::CrashdumpReport>,
    /// `--on-confirmed-off`: the hook run while the node was observed off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook: Option<crate::fleet::hook::HookReport>,
}

impl TargetResult {
    /// Builds a result from the engine's answer.
    pub fn new(
        target: String,
        action: Action,
        result: &Result<Outcome, Failure>,
        elapsed: Duration,
        timeline: Vec<Stamped>,
        traffic: Traffic,
    ) -> Self {
        let session = timeline.iter().find_map(|s| match &s.event {
            Event::Authenticated { detail } => Some(detail.clone()),
            _ => None,
        });
        let last_seen = timeline.iter().rev().find_map(|s| match s.event {
            Event::StateObserved { state } => Some(state),
            _ => None,
        });
        let (ok, outcome, error, error_kind) = match result {
            Ok(o) => match o {
                Outcome::FencedNotRestored { error } => (
                    false,
                    Some(TargetOutcome::of(o)),
                    Some(format!(
                        "the node is fenced (off, confirmed) but did not come back on: {error}"
                    )),
                    Some(ErrorKind::TransitionTimeout),
                ),
                Outcome::CycleSent | Outcome::OffSent | Outcome::DiagSent => (
                    false,
                    Some(TargetOutcome::of(o)),
                    Some(unverified_text(o)),
                    None,
                ),
                _ => (true, Some(TargetOutcome::of(o)), None, None),
            },
            Err(f) => (false, None, Some(f.error.to_string()), Some(f.error.kind)),
        };
        let transition = match result {
            Ok(Outcome::InTransition { transition }) => Some(*transition),
            _ => None,
        };
        TargetResult {
            node: target.clone(),
            target,
            method: None,
            endpoint: None,
            level: None,
            attempts: Vec::new(),
            action,
            ok,
            // A status that read a transition shows no settled state, not
            // an older one.
            state: if transition.is_some() {
                None
            } else {
                last_seen
            },
            transition,
            outcome,
            action_outcome: None,
            verdict: None,
            error,
            error_kind,
            elapsed_ms: elapsed.as_millis() as u64,
            session,
            traffic,
            timeline,
            verify: None,
            verify_off: None,
            crashdump: None,
            hook: None,
        }
    }

    /// Folds a verification into the result: the verdict becomes the
    /// outcome (the action's moves to `action_outcome`), `ok` follows the
    /// verdict, and a verdict that is not proof becomes the error.
    pub fn fold_verify(&mut self, report: VerifyReport) {
        let proven = report.exit_code() == crate::exit::OK;
        // What the verdict cannot undo: a failure of its own (a failed
        // confirmed-off hook) stays a failure, with its error.
        let acted = self.ok || self.outcome.is_some_and(TargetOutcome::unverified);
        self.action_outcome = self.outcome;
        self.outcome = Some(TargetOutcome::of_verdict(report.verdict));
        self.verdict = Some(report.verdict);
        self.ok = acted && proven;
        if !proven {
            let text = format!(
                "verify {}: {}: {}",
                report.expect, report.verdict, report.reason
            );
            self.error = Some(match (&self.error, acted) {
                (Some(e), false) => format!("{text}; and {e}"),
                _ => text,
            });
        } else if acted {
            self.error = None;
            self.error_kind = None;
        }
        self.verify = Some(report);
    }

    /// `reboot --verify`, run as an off (verified) then an on (verified):
    /// one result for the reboot. `on` is `None` when the node was not
    /// powered on: its off failed, was not proven, or cannot be observed.
    pub fn join_reboot(mut off: TargetResult, on: Option<TargetResult>) -> TargetResult {
        off.action = Action::Reboot;
        let Some(mut r) = on else {
            if off.verdict.is_some() && !off.ok {
                if let Some(e) = &mut off.error {
                    e.push_str(
                        "; the node was left as it is, not powered on (its off is not proven)",
                    );
                }
            }
            return off;
        };
        let shift = off.elapsed_ms;
        let mut timeline = std::mem::take(&mut off.timeline);
        timeline.extend(r.timeline.drain(..).map(|mut s| {
            s.at_ms += shift;
            s
        }));
        r.timeline = timeline;
        r.action = Action::Reboot;
        r.elapsed_ms += shift;
        r.traffic = Traffic {
            sent: off.traffic.sent + r.traffic.sent,
            received: off.traffic.received + r.traffic.received,
            retransmits: off.traffic.retransmits + r.traffic.retransmits,
        };
        let mut attempts = std::mem::take(&mut off.attempts);
        attempts.append(&mut r.attempts);
        r.attempts = attempts;
        r.verify_off = off.verify.take();
        // The off's extra steps (crash dump, confirmed-off hook) belong to the reboot.
        r.crashdump = off.crashdump.take();
        if let Some(mut h) = off.hook.take() {
            if !h.ok {
                // Powered on although the hook failed (--on-despite-hook-failure).
                h.powered_on_anyway = true;
                r.ok = false;
                r.error_kind = off.error_kind;
                r.error = off.error.take();
            }
            r.hook = Some(h);
        }
        if r.verify.is_some() {
            // Off proven, on done and verified: a reboot, with the on's verdict.
            r.action_outcome = Some(TargetOutcome::Rebooted);
        } else if r.error_kind != Some(ErrorKind::HookFailed) && !r.ok {
            r.outcome = Some(TargetOutcome::FencedNotRestored);
            r.error = Some(format!(
                "the node is fenced (off, proven) but did not come back on: {}",
                r.error.as_deref().unwrap_or("unknown error")
            ));
        }
        r
    }

    /// The exit code this result calls for on its own (SPEC §3): 0 ok, 3
    /// a verify verdict that is not proof or a command sent but unverified,
    /// 1 a failure (or no evidence at all).
    pub fn exit_code(&self) -> i32 {
        match (&self.verify, self.ok) {
            (_, true) => crate::exit::OK,
            (Some(v), false) if v.exit_code() != crate::exit::OK => v.exit_code(),
            // Proven, but something else failed (a confirmed-off hook).
            (Some(_), false) => crate::exit::FAILURE,
            (None, false) if self.outcome.is_some_and(TargetOutcome::unverified) => {
                crate::exit::UNPROVEN
            }
            (None, false) => crate::exit::FAILURE,
        }
    }
}

/// Why a command that was accepted is not a result.
fn unverified_text(o: &Outcome) -> String {
    match o {
        Outcome::CycleSent => "sent, unverified: the power cycle was accepted, but nothing \
                               observed the node off (add --verify to prove it back on)"
            .into(),
        Outcome::OffSent => "sent, unverified: the power-off was sent, but this method cannot \
                             observe the node off (add --verify, with a probe or another level)"
            .into(),
        _ => "sent, unverified: the diagnostic interrupt was accepted; nothing observed its \
              effect"
            .into(),
    }
}

/// The JSON document printed by `--output json`.
#[derive(Serialize)]
pub struct Report<'a> {
    /// One entry per target.
    pub results: &'a [TargetResult],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_words_are_the_serialised_words() {
        use TargetOutcome::*;
        for (o, word) in [
            (Status, "status"),
            (InTransition, "in-transition"),
            (Already, "already"),
            (Reached, "reached"),
            (Rebooted, "rebooted"),
            (FencedNotRestored, "fenced-not-restored"),
            (CycleSent, "cycle-sent"),
            (OffSent, "off-sent"),
            (Monitored, "monitored"),
            (DiagSent, "diag-sent"),
            (Acknowledged, "acknowledged"),
            (Verified(Verdict::Proven), "proven"),
            (Verified(Verdict::BmcOnly), "bmc-only"),
            (Verified(Verdict::Contradiction), "contradiction"),
            (Verified(Verdict::Unproven), "unproven"),
            (Verified(Verdict::NoEvidence), "no-evidence"),
            (Verified(Verdict::Drift), "drift"),
        ] {
            assert_eq!(o.as_str(), word);
            assert_eq!(
                serde_json::to_value(o).unwrap(),
                serde_json::Value::String(word.into())
            );
        }
    }

    #[test]
    fn a_transition_is_no_state() {
        let r = TargetResult::new(
            "n".into(),
            Action::Status,
            &Ok(Outcome::InTransition {
                transition: Transition::PoweringOff,
            }),
            Duration::ZERO,
            vec![Stamped::new(
                Duration::ZERO,
                Event::StateObserved {
                    state: PowerState::On,
                },
            )],
            Traffic::default(),
        );
        assert!(r.ok);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["outcome"], "in-transition");
        assert_eq!(v["transition"], "powering-off");
        assert_eq!(v["state"], serde_json::Value::Null);
    }

    #[test]
    fn fenced_not_restored_is_a_failure_with_its_outcome() {
        let r = TargetResult::new(
            "n".into(),
            Action::Reboot,
            &Ok(Outcome::FencedNotRestored {
                error: "no power".into(),
            }),
            Duration::ZERO,
            vec![],
            Traffic::default(),
        );
        assert!(!r.ok);
        assert_eq!(r.outcome, Some(TargetOutcome::FencedNotRestored));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["outcome"], "fenced-not-restored");
        assert_eq!(v["error_kind"], "transition-timeout");
    }

    fn result(o: Outcome, action: Action) -> TargetResult {
        TargetResult::new(
            "n".into(),
            action,
            &Ok(o),
            Duration::ZERO,
            vec![],
            Traffic::default(),
        )
    }

    #[test]
    fn sent_but_unverified_is_not_a_success() {
        for (o, word) in [
            (Outcome::CycleSent, "cycle-sent"),
            (Outcome::OffSent, "off-sent"),
            (Outcome::DiagSent, "diag-sent"),
        ] {
            let r = result(o, Action::Reboot);
            assert!(!r.ok, "{word}");
            assert_eq!(r.exit_code(), crate::exit::UNPROVEN, "{word}");
            assert!(r.error.as_deref().unwrap().starts_with("sent, unverified"));
            assert_eq!(serde_json::to_value(&r).unwrap()["outcome"], word);
        }
    }

    #[test]
    fn an_acknowledgment_observes_no_state() {
        let r = result(
            Outcome::Acknowledged {
                by: "alice".into(),
                at: "2026-01-01T00:00:00.000Z".into(),
            },
            Action::Off,
        );
        assert!(r.ok);
        assert_eq!(r.state, None);
        assert_eq!(r.outcome, Some(TargetOutcome::Acknowledged));
    }

    #[test]
    fn the_verdict_is_the_result() {
        use crate::fleet::verify::{Verdict, VerifyReport};
        let report = |verdict, accepted| VerifyReport {
            node: "n".into(),
            expect: PowerState::Off,
            verdict,
            reason: "the host still answers".into(),
            bmc_only_accepted: accepted,
            evidence: vec![],
            checks: vec![],
            elapsed_ms: 1,
        };
        let mut r = result(
            Outcome::Already {
                state: PowerState::Off,
            },
            Action::Off,
        );
        assert!(r.ok);
        r.fold_verify(report(Verdict::Contradiction, false));
        assert!(!r.ok);
        assert_eq!(r.exit_code(), crate::exit::UNPROVEN);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["ok"], false);
        assert_eq!(v["outcome"], "contradiction");
        assert_eq!(v["verdict"], "contradiction");
        assert_eq!(v["action_outcome"], "already");
        assert!(v["error"].as_str().unwrap().contains("contradiction"));
        // Accepted BMC-only proof is a success, and says so.
        let mut r = result(
            Outcome::Reached {
                state: PowerState::Off,
            },
            Action::Off,
        );
        r.fold_verify(report(Verdict::BmcOnly, true));
        assert!(r.ok && r.error.is_none());
        assert_eq!(r.exit_code(), crate::exit::OK);
        // A cycle that verification proves back on is a success.
        let mut r = result(Outcome::CycleSent, Action::Reboot);
        r.fold_verify(report(Verdict::Proven, false));
        assert!(r.ok && r.error.is_none());
        assert_eq!(r.action_outcome, Some(TargetOutcome::CycleSent));
        let mut r = result(Outcome::CycleSent, Action::Reboot);
        r.fold_verify(report(Verdict::NoEvidence, false));
        assert_eq!(r.exit_code(), crate::exit::FAILURE);
        // A proof does not undo a failure of its own (a confirmed-off hook).
        let mut r = result(
            Outcome::Reached {
                state: PowerState::Off,
            },
            Action::Off,
        );
        r.ok = false;
        r.error_kind = Some(ErrorKind::HookFailed);
        r.error = Some("the node is off (confirmed), but the confirmed-off hook failed".into());
        r.fold_verify(report(Verdict::Proven, false));
        assert!(!r.ok);
        assert_eq!(r.exit_code(), crate::exit::FAILURE);
        assert!(r.error.as_deref().unwrap().contains("hook failed"));
        assert_eq!(r.verdict, Some(Verdict::Proven));
    }
}
