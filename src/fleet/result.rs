//! What running one action on one node produced, as every front and the
//! audit trail record it: the typed [`TargetOutcome`], the error class,
//! the levels tried ([`Attempt`]), the traffic and the event timeline.
//! The fan-out builds these; the fronts render them (JSON field names and
//! values are part of the command-line contract, SPEC §3).

use crate::engine::error::ErrorKind;
use crate::engine::event::{Event, Stamped};
use crate::engine::power::{Action, PowerState, Transition};
use crate::engine::run::{Failure, Outcome};
use serde::Serialize;
use std::time::Duration;

/// What a finished action amounts to, as recorded: the engine's
/// [`Outcome`] without its payload. Serialised (JSON, audit) as the
/// kebab-case words `status`, `in-transition`, `already`, `reached`,
/// `rebooted`, `fenced-not-restored`, `cycle-sent`, `monitored`, `diag-sent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
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
    /// A power cycle was accepted; nothing observed the node off.
    CycleSent,
    /// The BMC answers and authenticates.
    Monitored,
    /// A diagnostic interrupt was accepted.
    DiagSent,
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
            Outcome::Monitored => TargetOutcome::Monitored,
            Outcome::DiagSent => TargetOutcome::DiagSent,
        }
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
            TargetOutcome::Monitored => "monitored",
            TargetOutcome::DiagSent => "diag-sent",
        }
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
    /// Whether the requested state was reached and observed.
    pub ok: bool,
    /// The last observed power state.
    pub state: Option<PowerState>,
    /// `status` only: the power change the device reports under way (the
    /// node is neither on nor off yet; `state` is then null).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition: Option<Transition>,
    /// What happened (absent when the action failed without an outcome).
    pub outcome: Option<TargetOutcome>,
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
    /// `--verify`: the independent verification that followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::fleet::verify::VerifyReport>,
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
            error,
            error_kind,
            elapsed_ms: elapsed.as_millis() as u64,
            session,
            traffic,
            timeline,
            verify: None,
            crashdump: None,
            hook: None,
        }
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
        for o in [
            Status,
            InTransition,
            Already,
            Reached,
            Rebooted,
            FencedNotRestored,
            CycleSent,
            Monitored,
            DiagSent,
        ] {
            assert_eq!(
                serde_json::to_value(o).unwrap(),
                serde_json::Value::String(o.as_str().into())
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
}
