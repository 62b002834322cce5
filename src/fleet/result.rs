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
    /// `reboot --method cycle --verify`: the node was seen off during the
    /// cycle, then on (confirmed).
    Cycled,
    /// A power cycle was accepted; nothing observed the node off (sent, unverified).
    CycleSent,
    /// A command was sent, no answer came, and nothing shows whether it
    /// was carried out; it was not sent again (sent, outcome unknown).
    OutcomeUnknown,
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
            Outcome::Cycled => TargetOutcome::Cycled,
            Outcome::CycleSent => TargetOutcome::CycleSent,
            Outcome::OutcomeUnknown { .. } => TargetOutcome::OutcomeUnknown,
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
            TargetOutcome::Cycled => "cycled",
            TargetOutcome::CycleSent => "cycle-sent",
            TargetOutcome::OutcomeUnknown => "outcome-unknown",
            TargetOutcome::OffSent => "off-sent",
            TargetOutcome::Monitored => "monitored",
            TargetOutcome::DiagSent => "diag-sent",
            TargetOutcome::Acknowledged => "acknowledged",
            TargetOutcome::Verified(v) => v.as_str(),
        }
    }

    /// A command was sent but nothing observed its effect: "sent,
    /// unverified" (or "sent, outcome unknown") — not a success natively
    /// unless a verification follows.
    pub fn unverified(self) -> bool {
        matches!(
            self,
            TargetOutcome::CycleSent
                | TargetOutcome::OffSent
                | TargetOutcome::DiagSent
                | TargetOutcome::OutcomeUnknown
        )
    }
}

/// What a result amounts to. [`TargetResult::standing`] is the one place
/// that decides whether a result is ok: its `ok`, its exit code, the
/// fan-out's escalation and the fronts' output all follow from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// The requested state was reached and observed (with `--verify`:
    /// proven, or BMC-only proof accepted). Exit 0.
    Ok,
    /// Acted, but not proven: a verdict that is not proof, a command sent
    /// unverified, or sent with its outcome unknown. Exit 3.
    NotProven,
    /// Failed (an action that failed, a failed hook, no evidence at all, a
    /// held node, fencekit's own failure). Exit 1.
    Failed,
}

impl Standing {
    /// Its exit code (SPEC §3).
    pub fn exit_code(self) -> i32 {
        match self {
            Standing::Ok => crate::exit::OK,
            Standing::NotProven => crate::exit::UNPROVEN,
            Standing::Failed => crate::exit::FAILURE,
        }
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
    /// What its off does: `"isolated"` for a switch's ports (fabric
    /// fencing: the node is cut off, not powered off); absent for power.
    #[serde(skip_serializing_if = "is_power")]
    pub effect: crate::platform::Effect,
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

fn is_power(e: &crate::platform::Effect) -> bool {
    *e == crate::platform::Effect::Power
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
        let (outcome, error, error_kind) = match result {
            Ok(o) => match o {
                Outcome::FencedNotRestored { error } => (
                    Some(TargetOutcome::of(o)),
                    Some(format!(
                        "the node is fenced (off, confirmed) but did not come back on: {error}"
                    )),
                    Some(ErrorKind::TransitionTimeout),
                ),
                Outcome::OutcomeUnknown { command, reason } => (
                    Some(TargetOutcome::of(o)),
                    Some(format!(
                        "sent, outcome unknown: {reason}; power {command} was not sent again"
                    )),
                    Some(ErrorKind::OutcomeUnknown),
                ),
                Outcome::CycleSent | Outcome::OffSent | Outcome::DiagSent => {
                    (Some(TargetOutcome::of(o)), Some(unverified_text(o)), None)
                }
                _ => (Some(TargetOutcome::of(o)), None, None),
            },
            Err(f) => (None, Some(f.error.to_string()), Some(f.error.kind)),
        };
        let transition = match result {
            Ok(Outcome::InTransition { transition }) => Some(*transition),
            _ => None,
        };
        let mut r = TargetResult {
            node: target.clone(),
            target,
            method: None,
            endpoint: None,
            effect: crate::platform::Effect::Power,
            level: None,
            attempts: Vec::new(),
            action,
            ok: false,
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
        };
        r.settle();
        r
    }

    /// What this result amounts to — the one decision of "is it ok" (see
    /// [`Standing`]): a failed confirmed-off hook fails it whatever else
    /// happened; a verification's verdict decides a verified result; a
    /// command sent unverified (or with its outcome unknown) is not proven;
    /// a reboot that fenced but did not restore, and any action that ended
    /// without an outcome, failed.
    pub fn standing(&self) -> Standing {
        if self.error_kind == Some(ErrorKind::HookFailed) {
            return Standing::Failed;
        }
        match self.outcome {
            None | Some(TargetOutcome::FencedNotRestored) => Standing::Failed,
            Some(TargetOutcome::Verified(_)) => match self.verify.as_ref().map(|v| v.exit_code()) {
                Some(crate::exit::OK) => Standing::Ok,
                Some(crate::exit::UNPROVEN) => Standing::NotProven,
                _ => Standing::Failed,
            },
            Some(o) if o.unverified() => Standing::NotProven,
            Some(_) => Standing::Ok,
        }
    }

    /// Sets `ok` from [`TargetResult::standing`] (after any change to the
    /// outcome, the error class or the verification).
    pub fn settle(&mut self) {
        self.ok = self.standing() == Standing::Ok;
    }

    /// Whether a verification that proves the expected state can make this
    /// result a success: an action that reached its state, an off sent
    /// through a method that cannot observe it, or an off whose outcome is
    /// unknown (proving the node off is what fencing needs). Never a cycle
    /// that was not observed, or an NMI: a node proven on after it proves
    /// nothing about the cycle.
    pub fn verification_can_prove(&self) -> bool {
        match self.outcome {
            _ if self.ok => true,
            Some(TargetOutcome::OffSent) => true,
            Some(TargetOutcome::OutcomeUnknown) => self.action == Action::Off,
            _ => false,
        }
    }

    /// Whether the next fencing level may be tried after this one: not
    /// after a success, a confirmed off (fenced, not restored; a failed
    /// hook), a signal, another machine, a command already accepted that
    /// must not be repeated (a cycle, an NMI), or a command whose outcome
    /// is unknown (at most once: the node may already be cycling) — except
    /// an off, which the next level repeats harmlessly and can observe.
    pub fn next_level_may_act(&self) -> bool {
        if self.standing() == Standing::Ok {
            return false;
        }
        let repeats = match self.outcome {
            Some(
                TargetOutcome::FencedNotRestored
                | TargetOutcome::CycleSent
                | TargetOutcome::DiagSent,
            ) => true,
            Some(TargetOutcome::OutcomeUnknown) => self.action != Action::Off,
            _ => false,
        };
        let stop = matches!(
            self.error_kind,
            Some(ErrorKind::Interrupted | ErrorKind::HookFailed | ErrorKind::IdentityMismatch)
        );
        !repeats && !stop
    }

    /// Folds a verification into the result: the verdict becomes the
    /// outcome (the action's moves to `action_outcome`), `ok` follows the
    /// verdict, and a verdict that is not proof becomes the error.
    pub fn fold_verify(&mut self, report: VerifyReport) {
        let proven = report.exit_code() == crate::exit::OK;
        // What the verdict cannot undo: a failure of its own (a failed
        // confirmed-off hook) stays a failure, with its error; a cycle that
        // was not observed stays unproven.
        let acted = self.verification_can_prove();
        self.action_outcome = self.outcome;
        self.outcome = Some(TargetOutcome::of_verdict(report.verdict));
        self.verdict = Some(report.verdict);
        if !acted && proven {
            // The verdict alone would call it ok: keep what the action was.
            self.outcome = self.action_outcome;
        }
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
        self.settle();
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
                r.error_kind = off.error_kind;
                r.error = off.error.take();
                r.settle();
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
            r.settle();
        }
        r
    }

    /// The exit code this result calls for on its own (SPEC §3), from its
    /// [`TargetResult::standing`]: 0 ok, 3 not proven (a verdict that is
    /// not proof, a command sent unverified or with its outcome unknown), 1
    /// a failure (or no evidence at all).
    pub fn exit_code(&self) -> i32 {
        self.standing().exit_code()
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
    use crate::engine::power::PowerCommand;

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
            (Cycled, "cycled"),
            (CycleSent, "cycle-sent"),
            (OutcomeUnknown, "outcome-unknown"),
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

    /// "Sent, outcome unknown" is its own result: not a success, not a
    /// failure (exit 3), its error says why, and the next level does not
    /// repeat it — except an off, which it repeats harmlessly.
    #[test]
    fn an_unknown_outcome_is_not_proven_and_stops_escalation() {
        for (command, action, next) in [
            (PowerCommand::Cycle, Action::Reboot, false),
            (PowerCommand::Diag, Action::Diag, false),
            (PowerCommand::Off, Action::Reboot, false),
            (PowerCommand::Off, Action::Off, true),
        ] {
            let r = result(
                Outcome::OutcomeUnknown {
                    command,
                    reason: "no answer".into(),
                },
                action,
            );
            assert!(!r.ok);
            assert_eq!(r.standing(), Standing::NotProven, "{command}");
            assert_eq!(r.exit_code(), crate::exit::UNPROVEN);
            assert_eq!(r.error_kind, Some(ErrorKind::OutcomeUnknown));
            let e = r.error.as_deref().unwrap();
            assert!(
                e.starts_with("sent, outcome unknown: no answer")
                    && e.ends_with(&format!("power {command} was not sent again")),
                "{e}"
            );
            assert_eq!(r.next_level_may_act(), next, "{command} in {action}");
            assert_eq!(
                serde_json::to_value(&r).unwrap()["outcome"],
                "outcome-unknown"
            );
        }
    }

    /// The one decision, over every outcome the engine gives.
    #[test]
    fn standing_decides_ok_and_the_exit_code() {
        use PowerState::{Off, On};
        let rows: Vec<(Outcome, Standing)> = vec![
            (Outcome::Status { state: On }, Standing::Ok),
            (Outcome::Already { state: Off }, Standing::Ok),
            (Outcome::Reached { state: Off }, Standing::Ok),
            (Outcome::Rebooted, Standing::Ok),
            (Outcome::Cycled, Standing::Ok),
            (Outcome::Monitored, Standing::Ok),
            (Outcome::CycleSent, Standing::NotProven),
            (Outcome::OffSent, Standing::NotProven),
            (Outcome::DiagSent, Standing::NotProven),
            (
                Outcome::OutcomeUnknown {
                    command: PowerCommand::Reset,
                    reason: String::new(),
                },
                Standing::NotProven,
            ),
            (
                Outcome::FencedNotRestored {
                    error: String::new(),
                },
                Standing::Failed,
            ),
        ];
        for (o, want) in rows {
            let r = result(o.clone(), Action::Reboot);
            assert_eq!(r.standing(), want, "{o:?}");
            assert_eq!(r.ok, want == Standing::Ok, "{o:?}");
            assert_eq!(r.exit_code(), want.exit_code(), "{o:?}");
        }
        let failed = TargetResult::new(
            "n".into(),
            Action::Off,
            &Err(Failure {
                error: crate::engine::error::DriverError::new(
                    ErrorKind::Timeout,
                    crate::engine::error::Stage::Status,
                    "x",
                ),
                last_state: None,
            }),
            Duration::ZERO,
            vec![],
            Traffic::default(),
        );
        assert_eq!(failed.standing(), Standing::Failed);
        assert!(failed.next_level_may_act());
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
        // A cycle that was only sent is not made a success by a proof of
        // "on" (issue 23, item 5: the node was never seen off); one that
        // was observed (off, then on) is.
        let mut r = result(Outcome::CycleSent, Action::Reboot);
        r.fold_verify(report(Verdict::Proven, false));
        assert!(!r.ok, "{r:?}");
        assert_eq!(r.exit_code(), crate::exit::UNPROVEN);
        assert_eq!(r.outcome, Some(TargetOutcome::CycleSent));
        let mut r = result(Outcome::Cycled, Action::Reboot);
        r.fold_verify(report(Verdict::Proven, false));
        assert!(r.ok && r.error.is_none());
        assert_eq!(r.action_outcome, Some(TargetOutcome::Cycled));
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
