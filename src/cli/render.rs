//! Rendering results for people (short lines, progress) and programs (JSON).

use crate::engine::event::{Event, Stamped};
use crate::engine::power::{Action, PowerState, Transition};
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
    /// What happened: status, in-transition, already, reached, rebooted, fenced-not-restored, cycle-sent, monitored, diag-sent.
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
    /// `--verify`: the independent verification that followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::fleet::verify::VerifyReport>,
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
                    Outcome::InTransition { .. } => "in-transition",
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
            return format!("{}: failed to {verb}: {e} ({secs:.2}s)", self.node);
        }
        let state = self.state.map_or("unknown", |s| s.as_str());
        let acked = self.timeline.iter().find_map(|s| match &s.event {
            Event::Acknowledged { by, .. } => Some(by.clone()),
            _ => None,
        });
        let what = match self.outcome.as_deref() {
            Some("reached") if acked.is_some() => format!(
                "powered {state} by hand (acknowledged by {})",
                acked.as_deref().unwrap_or("?")
            ),
            Some("status") => state.to_string(),
            Some("in-transition") => format!(
                "{} (a transition under way: neither on nor off yet)",
                self.transition.map_or("in transition", |t| t.words())
            ),
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
        let via = match (self.level, &self.attempts) {
            (Some(l), a) if !a.is_empty() => {
                format!(" [level {l}, {}]", self.method.as_deref().unwrap_or("?"))
            }
            _ => String::new(),
        };
        format!("{}: {what}{via} ({secs:.2}s)", self.node)
    }

    /// The outcome as one word for tables.
    pub fn outcome_word(&self) -> &str {
        match (&self.error, self.outcome.as_deref()) {
            (Some(_), Some("fenced-not-restored")) => "fenced, not restored",
            (Some(_), _) => "FAILED",
            (None, Some(o)) => o,
            (None, None) => "-",
        }
    }
}

/// The JSON document printed by `--output json`.
#[derive(Serialize)]
pub struct Report<'a> {
    /// One entry per target.
    pub results: &'a [TargetResult],
}

/// Progress on stderr while work is pending, only when stderr is a terminal:
/// a spinner naming the current step for one target, a bar for several.
pub struct Progress {
    bar: Option<ProgressBar>,
    single: bool,
}

impl Progress {
    /// A progress display for `plans`.
    pub fn new(plans: &[crate::fleet::plan::NodePlan], action: Action) -> Self {
        let show = action != Action::Status || plans.len() > 1;
        let single = plans.len() == 1;
        let bar = (show && std::io::stderr().is_terminal()).then(|| {
            let b = if single {
                let b = ProgressBar::new_spinner();
                b.set_style(
                    ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                b
            } else {
                let b = ProgressBar::new(plans.len() as u64);
                b.set_style(
                    ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed}]")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                b
            };
            b.enable_steady_tick(Duration::from_millis(100));
            b.set_message(format!("{action}"));
            b
        });
        Progress { bar, single }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl crate::fleet::fanout::Observer for Progress {
    fn event(&self, node: &str, _level: usize, event: &Stamped) {
        tracing::debug!(node, at_ms = event.at_ms, event = ?event.event, "engine event");
        if let Event::AwaitingAcknowledgment { instructions } = &event.event {
            // A person must read this, terminal or not.
            match &self.bar {
                Some(b) => b.suspend(|| eprintln!("{instructions}")),
                None => eprintln!("{instructions}"),
            }
        }
        if let (Some(b), true) = (&self.bar, self.single) {
            b.set_message(format!("{node}: {}", event.event.describe()));
        }
    }

    fn done(&self, r: &TargetResult) {
        if let (Some(b), false) = (&self.bar, self.single) {
            b.inc(1);
            if !r.ok {
                b.set_message(format!("last failure: {}", r.node));
            }
        }
    }
}

/// `--output jsonl`: one JSON object per event as it happens, then one per result.
pub struct JsonLines;

impl crate::fleet::fanout::Observer for JsonLines {
    fn event(&self, node: &str, level: usize, event: &Stamped) {
        #[derive(Serialize)]
        struct Line<'a> {
            node: &'a str,
            level: usize,
            #[serde(flatten)]
            event: &'a Stamped,
        }
        if let Ok(s) = serde_json::to_string(&Line { node, level, event }) {
            crate::outln!("{s}");
        }
    }

    fn done(&self, r: &TargetResult) {
        #[derive(Serialize)]
        struct Done<'a> {
            event: &'static str,
            #[serde(flatten)]
            result: &'a TargetResult,
        }
        let mut slim = r.clone();
        slim.timeline.clear();
        if let Ok(s) = serde_json::to_string(&Done {
            event: "done",
            result: &slim,
        }) {
            crate::outln!("{s}");
        }
    }
}

/// A table of results: node, method, state, outcome, time, error.
pub fn table(results: &[TargetResult]) -> String {
    let mut b = tabled::builder::Builder::default();
    b.push_record(["node", "method", "state", "outcome", "time", "error"]);
    for r in results {
        let method = match (&r.method, r.level) {
            (Some(m), Some(l)) if l > 1 || !r.attempts.is_empty() => format!("{m} (level {l})"),
            (Some(m), _) => m.clone(),
            _ => "-".into(),
        };
        let mut err = r.error.clone().unwrap_or_default();
        if err.len() > 100 {
            let mut cut = 100;
            while !err.is_char_boundary(cut) {
                cut -= 1;
            }
            err.truncate(cut);
            err.push('…');
        }
        b.push_record([
            r.node.clone(),
            method,
            match (r.state, r.transition) {
                (Some(s), _) => s.to_string(),
                (None, Some(t)) => t.words().to_string(),
                (None, None) => "-".into(),
            },
            r.outcome_word().to_string(),
            format!("{:.2}s", r.elapsed_ms as f64 / 1000.0),
            err,
        ]);
    }
    let mut t = b.build();
    t.with(tabled::settings::Style::sharp());
    t.to_string()
}
