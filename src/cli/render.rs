//! Rendering results for people (short lines, progress) and programs (JSON).

use super::progress::Line;
use crate::engine::event::{Event, Stamped};
use crate::engine::power::Action;
use crate::fleet::fanout::Observer;
use crate::fleet::manual::Prompt;
use crate::fleet::result::{TargetOutcome, TargetResult};
use serde::Serialize;
use std::io::IsTerminal;

/// What the action itself achieved, in words that never claim more than
/// was observed.
fn action_words(r: &TargetResult, outcome: Option<TargetOutcome>) -> String {
    let state = r.state.map_or("unknown", |s| s.as_str());
    let acked = r.timeline.iter().find_map(|s| match &s.event {
        Event::Acknowledged { by, at } => Some(format!("{by} at {at}")),
        _ => None,
    });
    match outcome {
        Some(TargetOutcome::Acknowledged) => {
            let done = match r.action {
                Action::On => "powered on",
                Action::Reboot => "power-cycled",
                _ => "fenced",
            };
            format!(
                "{done} by hand: acknowledged by {} (nobody observed the power state)",
                acked.as_deref().unwrap_or("?")
            )
        }
        Some(TargetOutcome::Status) => state.to_string(),
        Some(TargetOutcome::InTransition) => format!(
            "{} (a transition under way: neither on nor off yet)",
            r.transition.map_or("in transition", |t| t.words())
        ),
        Some(TargetOutcome::Already | TargetOutcome::Reached) if isolated(r) => {
            let already = match outcome {
                Some(TargetOutcome::Already) => "already ",
                _ => "",
            };
            match r.state {
                Some(crate::engine::power::PowerState::Off) => {
                    format!("{already}isolated (port down, confirmed)")
                }
                _ => format!("{already}port(s) up (confirmed)"),
            }
        }
        Some(TargetOutcome::Already) => format!("already {state} (confirmed)"),
        Some(TargetOutcome::Reached) => format!("powered {state} (confirmed)"),
        Some(TargetOutcome::Rebooted) => "rebooted: off confirmed, then on confirmed".to_string(),
        Some(TargetOutcome::Cycled) => "power cycle observed: off, then on (confirmed)".to_string(),
        Some(TargetOutcome::CycleSent) => {
            "power cycle sent, unverified: nothing observed the node off".to_string()
        }
        Some(TargetOutcome::OutcomeUnknown) => r
            .error
            .clone()
            .unwrap_or_else(|| "sent, outcome unknown: not sent again".to_string()),
        Some(TargetOutcome::OffSent) => {
            "power-off sent, unverified: this method cannot observe the node off".to_string()
        }
        Some(TargetOutcome::Monitored) => format!("BMC answers and authenticates (power {state})"),
        Some(TargetOutcome::DiagSent) => {
            "diagnostic interrupt sent, unverified: nothing observed its effect".to_string()
        }
        _ => state.to_string(),
    }
}

/// A switch's ports: the node is isolated, not powered off.
fn isolated(r: &TargetResult) -> bool {
    r.effect == crate::platform::Effect::Isolated
}

/// The one-line human summary of a result.
pub fn human_line(r: &TargetResult) -> String {
    let secs = r.elapsed_ms as f64 / 1000.0;
    let via = match (r.level, &r.attempts) {
        (Some(l), a) if !a.is_empty() => {
            format!(" [level {l}, {}]", r.method.as_deref().unwrap_or("?"))
        }
        _ => String::new(),
    };
    if let Some(v) = &r.verify {
        // The verdict is the result: a BMC's "off" that verification does
        // not prove is never printed as confirmed.
        let word = super::verify::verdict_word(v);
        return if r.ok {
            format!(
                "{}: {}{via}; verify {}: {word} ({secs:.2}s)",
                r.node,
                action_words(r, r.action_outcome),
                v.expect
            )
        } else {
            let said = match (r.action_outcome, r.state) {
                (Some(o), _) if o.unverified() => action_words(r, Some(o)),
                (_, Some(s)) => format!("the BMC reported {s}"),
                _ => "nothing was observed".to_string(),
            };
            format!(
                "{}: {word}: {} not proven: {} (the action: {said}){via} ({secs:.2}s)",
                r.node, v.expect, v.reason
            )
        };
    }
    if r.outcome.is_some_and(TargetOutcome::unverified) {
        return format!(
            "{}: {}{via} ({secs:.2}s)",
            r.node,
            action_words(r, r.outcome)
        );
    }
    if let Some(e) = &r.error {
        let verb = match r.action {
            Action::Status => "read the power state",
            Action::On => "power on",
            Action::Off => "power off",
            Action::Reboot => "reboot",
            Action::Monitor => "reach the BMC",
            Action::Diag => "send a diagnostic interrupt",
        };
        return format!("{}: failed to {verb}: {e} ({secs:.2}s)", r.node);
    }
    let mut extra = String::new();
    if let Some(d) = &r.crashdump {
        let how = match d.ended.as_str() {
            "dump-done" => "the dump finished",
            "no-message" => "no kdump message before the wait ended",
            "limit" => "still dumping when the wait ended",
            _ => "no wait",
        };
        extra.push_str(&format!(
            "; crash dump: NMI {}, {} kdump message(s), {how}",
            d.nmi, d.messages
        ));
    }
    if let Some(h) = &r.hook {
        extra.push_str(&format!("; confirmed-off hook: {}", h.detail));
    }
    format!(
        "{}: {}{via}{extra} ({secs:.2}s)",
        r.node,
        action_words(r, r.outcome)
    )
}

/// A result's outcome as one word for tables (a verdict that is not
/// proof, in capitals).
pub fn outcome_word(r: &TargetResult) -> String {
    match (&r.error, r.outcome) {
        (_, Some(TargetOutcome::FencedNotRestored)) => "fenced, not restored".into(),
        (_, Some(o)) if r.verdict.is_some() && !r.ok => o.as_str().to_ascii_uppercase(),
        (_, Some(o)) if r.verdict.is_some() => match r.action_outcome {
            Some(a) => format!("{}, {}", a.as_str(), o.as_str()),
            None => o.as_str().into(),
        },
        (_, Some(o)) if o.unverified() => format!("{} (unverified)", o.as_str()),
        (Some(_), _) => "FAILED".into(),
        (None, Some(o)) => o.as_str().into(),
        (None, None) => "-".into(),
    }
}

/// Manual fencing confirmed by typing the node's name on this terminal.
pub struct TerminalPrompt;

impl Prompt for TerminalPrompt {
    fn ask(&self, node: &str) -> tokio::sync::oneshot::Receiver<bool> {
        let (tx, rx) = tokio::sync::oneshot::channel::<bool>();
        let node = node.to_string();
        // A blocking read on a thread of its own: the reader ends with the
        // process if nobody types (the wait itself is bounded by the deadline).
        // Without a thread (a limit on processes) the sender is dropped
        // unsent: no answer, which is not an acknowledgment.
        let asked = std::thread::Builder::new()
            .name("prompt".into())
            .spawn(move || {
                eprint!("Type the node name ({node}) once it is done: ");
                let mut line = String::new();
                let ok = std::io::stdin().read_line(&mut line).is_ok() && line.trim() == node;
                let _ = tx.send(ok);
            });
        if let Err(e) = asked {
            eprintln!("fencekit: cannot ask at the terminal: {e}");
        }
        rx
    }
}

/// The terminal prompt, offered only when stdin is a terminal.
pub fn terminal_prompt() -> Option<&'static dyn Prompt> {
    std::io::stdin()
        .is_terminal()
        .then_some(&TerminalPrompt as &dyn Prompt)
}

/// `--output json`: nothing while work is pending (the document comes at
/// the end), but the manual-fencing prompt is still offered.
pub struct Silent;

impl Observer for Silent {
    fn event(&self, node: &str, _: usize, event: &Stamped) {
        // Warnings still reach a person; stdout stays one JSON document.
        if let Some(message) = crate::engine::event::Tolerance::warns(&event.event) {
            eprintln!("fencekit: warning: {node}: {message}");
        }
    }
    fn done(&self, _: &TargetResult) {}
    fn prompt(&self) -> Option<&dyn Prompt> {
        terminal_prompt()
    }
}

/// Progress on stderr while work is pending, only when stderr is a terminal:
/// a spinner naming the current step for one target, a bar for several.
pub struct Progress {
    line: Option<Line>,
    single: bool,
    /// The node a person is being asked about: the line is held until its
    /// next event.
    asking: std::cell::RefCell<Option<String>>,
}

impl Progress {
    /// A progress display for `plans`, run `phases` times (a verified reboot
    /// runs off, then on: each node finishes twice).
    pub fn new(plans: &[crate::fleet::plan::NodePlan], action: Action, phases: u64) -> Self {
        let show = action != Action::Status || plans.len() > 1;
        let single = plans.len() == 1;
        let line = (show && std::io::stderr().is_terminal()).then(|| {
            if single {
                Line::spinner(format!("{action}"))
            } else {
                Line::bar(plans.len() as u64 * phases.max(1), format!("{action}"))
            }
        });
        Progress {
            line,
            single,
            asking: Default::default(),
        }
    }
}

impl Observer for Progress {
    fn prompt(&self) -> Option<&dyn Prompt> {
        terminal_prompt()
    }

    fn event(&self, node: &str, _level: usize, event: &Stamped) {
        tracing::debug!(node, at_ms = event.at_ms, event = ?event.event, "engine event");
        let asked = matches!(event.event, Event::AwaitingAcknowledgment { .. });
        if !asked && self.asking.borrow().as_deref() == Some(node) {
            self.asking.replace(None);
            if let Some(l) = &self.line {
                l.resume();
            }
        }
        match (&event.event, &self.line) {
            // A person must read this, terminal or not; the line stays off
            // the screen while they answer.
            (Event::AwaitingAcknowledgment { instructions }, Some(l)) => {
                self.asking.replace(Some(node.to_string()));
                l.hold(instructions);
            }
            (Event::AwaitingAcknowledgment { instructions }, None) => eprintln!("{instructions}"),
            (e, line) => {
                if let Some(message) = crate::engine::event::Tolerance::warns(e) {
                    match line {
                        Some(l) => l.suspend(|| eprintln!("fencekit: warning: {node}: {message}")),
                        None => eprintln!("fencekit: warning: {node}: {message}"),
                    }
                }
            }
        }
        if let (Some(l), true, false) = (&self.line, self.single, asked) {
            l.set_message(format!("{node}: {}", event.event.describe()));
        }
    }

    fn done(&self, r: &TargetResult) {
        if let (Some(l), false) = (&self.line, self.single) {
            l.inc();
            if !r.ok {
                l.set_message(format!("last failure: {}", r.node));
            }
        }
    }
}

/// `--output jsonl`: one JSON object per event as it happens, then one per result.
pub struct JsonLines;

impl Observer for JsonLines {
    fn prompt(&self) -> Option<&dyn Prompt> {
        terminal_prompt()
    }

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
            outcome_word(r),
            format!("{:.2}s", r.elapsed_ms as f64 / 1000.0),
            err,
        ]);
    }
    let mut t = b.build();
    t.with(tabled::settings::Style::sharp());
    t.to_string()
}

/// `s` cut to at most `max` bytes (at a character boundary), with `…` when cut.
pub fn shorten(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}
