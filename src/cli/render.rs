//! Rendering results for people (short lines, progress) and programs (JSON).

use crate::engine::event::{Event, EventSink, Stamped};
use crate::engine::power::{Action, PowerState};
use crate::engine::run::{Failure, Outcome};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::IsTerminal;
use std::time::Duration;

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

/// One target's result, as printed in JSON.
#[derive(Clone, Debug, Serialize)]
pub struct TargetResult {
    /// The target as written (no secret).
    pub target: String,
    /// The action.
    pub action: Action,
    /// Whether the requested state was reached and observed.
    pub ok: bool,
    /// The last observed power state.
    pub state: Option<PowerState>,
    /// What happened: status, already, reached, rebooted, fenced-not-restored, cycle-sent, monitored, diag-sent.
    pub outcome: Option<String>,
    /// The failure, if any.
    pub error: Option<String>,
    /// The failure's class (timeout, password-invalid, …).
    pub error_kind: Option<&'static str>,
    /// Wall time of the action.
    pub elapsed_ms: u64,
    /// The session that was used (cipher suite, privilege).
    pub session: Option<String>,
    /// Datagram counters.
    pub traffic: Traffic,
    /// Every step with its time: the evidence behind `ok`.
    pub timeline: Vec<Stamped>,
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
            Ok(o) => {
                let name = match o {
                    Outcome::Status { .. } => "status",
                    Outcome::Already { .. } => "already",
                    Outcome::Reached { .. } => "reached",
                    Outcome::Rebooted => "rebooted",
                    Outcome::FencedNotRestored { .. } => "fenced-not-restored",
                    Outcome::CycleSent => "cycle-sent",
                    Outcome::Monitored => "monitored",
                    Outcome::DiagSent => "diag-sent",
                };
                match o {
                    Outcome::FencedNotRestored { error } => (
                        false,
                        Some(name.to_string()),
                        Some(format!(
                            "the node is fenced (off, confirmed) but did not come back on: {error}"
                        )),
                        Some("transition-timeout"),
                    ),
                    _ => (true, Some(name.to_string()), None, None),
                }
            }
            Err(f) => (
                false,
                None,
                Some(f.error.to_string()),
                Some(f.error.kind.as_str()),
            ),
        };
        TargetResult {
            target,
            action,
            ok,
            state: last_seen,
            outcome,
            error,
            error_kind,
            elapsed_ms: elapsed.as_millis() as u64,
            session,
            traffic,
            timeline,
        }
    }

    /// The one-line human summary.
    pub fn human_line(&self) -> String {
        let secs = self.elapsed_ms as f64 / 1000.0;
        if let Some(e) = &self.error {
            let verb = match self.action {
                Action::Status => "read the power state",
                Action::On => "power on",
                Action::Off => "power off",
                Action::Reboot => "reboot",
                Action::Monitor => "reach the BMC",
                Action::Diag => "send a diagnostic interrupt",
            };
            return format!("{}: failed to {verb}: {e} ({secs:.2}s)", self.target);
        }
        let state = self.state.map_or("unknown", |s| s.as_str());
        let what = match self.outcome.as_deref() {
            Some("status") => state.to_string(),
            Some("already") => format!("already {state} (confirmed)"),
            Some("reached") => format!("powered {state} (confirmed)"),
            Some("rebooted") => "rebooted: off confirmed, then on confirmed".to_string(),
            Some("cycle-sent") => {
                "power cycle accepted (unverified: nothing observed the node off)".to_string()
            }
            Some("monitored") => format!("BMC answers and authenticates (power {state})"),
            Some("diag-sent") => "diagnostic interrupt accepted".to_string(),
            _ => state.to_string(),
        };
        format!("{}: {what} ({secs:.2}s)", self.target)
    }
}

/// The JSON document printed by `--output json`.
#[derive(Serialize)]
pub struct Report<'a> {
    /// One entry per target.
    pub results: &'a [TargetResult],
}

/// Collects the timeline and drives a progress spinner on a terminal.
pub struct Recorder {
    /// Events so far.
    pub timeline: Vec<Stamped>,
    bar: Option<ProgressBar>,
    target: String,
}

impl Recorder {
    /// A recorder; shows a spinner when `progress` and stderr is a terminal.
    pub fn new(target: &str, progress: bool) -> Self {
        let bar = (progress && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(Duration::from_millis(100));
            b.set_message(format!("{target}: connecting"));
            b
        });
        Recorder {
            timeline: Vec::new(),
            bar,
            target: target.to_string(),
        }
    }

    /// Removes the spinner.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl EventSink for Recorder {
    fn emit(&mut self, event: &Stamped) {
        if let Some(b) = &self.bar {
            let msg = match &event.event {
                Event::Started { action } => format!("{action}: starting"),
                Event::Authenticated { detail } => format!("session up ({detail})"),
                Event::CommandSent { command } => format!("power {command} sent"),
                Event::CommandDeclined { command, .. } => {
                    format!("power {command} declined; reading the state")
                }
                Event::StateObserved { state } => format!("power is {state}"),
                Event::Waiting { target, .. } => format!("waiting for power {target}"),
                Event::Retry { stage, .. } => format!("retrying the {}", stage.as_str()),
            };
            b.set_message(format!("{}: {msg}", self.target));
        }
        tracing::debug!(at_ms = event.at_ms, event = ?event.event, "engine event");
        self.timeline.push(event.clone());
    }
}
