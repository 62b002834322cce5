//! What the engine reports while it works.
//!
//! Fronts subscribe with an [`EventSink`] and render events as progress,
//! JSON lines, or nothing at all (agent mode prints one result line). Events
//! never carry a secret.

use super::error::Stage;
use super::identity::{ExpectedIdentity, Identity};
use super::power::{Action, PowerCommand, PowerState, Transition};
use serde::Serialize;
use std::time::Duration;

/// One step of an action, as it happens.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The action began.
    Started {
        /// The action asked for.
        action: Action,
    },
    /// A session is up; `detail` names what was negotiated (cipher suite, privilege).
    Authenticated {
        /// Protocol details, no secret.
        detail: String,
    },
    /// The device's identity was read and compared with the expected one,
    /// before any status read or power command.
    Identity {
        /// What the caller expects.
        expected: ExpectedIdentity,
        /// What the device reported (empty parts: it cannot report them).
        found: Identity,
        /// Whether it matched (otherwise the action stops here).
        matched: bool,
        /// The encoding under which the expected UUID matched.
        #[serde(skip_serializing_if = "Option::is_none")]
        encoding: Option<&'static str>,
    },
    /// A power command was accepted by the device.
    CommandSent {
        /// The command.
        command: PowerCommand,
    },
    /// The device declined a command in a way that may only mean "already
    /// there" (IPMI D5h); the state is read again rather than assumed.
    CommandDeclined {
        /// The command.
        command: PowerCommand,
        /// The device's answer.
        reason: String,
    },
    /// A power command got no answer, and no read showed whether it was
    /// carried out: it is not sent again (at most once).
    CommandUnanswered {
        /// The command.
        command: PowerCommand,
        /// What is known.
        reason: String,
    },
    /// A power state was read.
    StateObserved {
        /// The state.
        state: PowerState,
    },
    /// The device reported a power change under way (a state to wait
    /// through; it never counts as the state it leads to).
    TransitionObserved {
        /// The transition.
        transition: Transition,
    },
    /// The engine waits for a transition (power_wait, or between polls).
    Waiting {
        /// How long, in milliseconds.
        ms: u64,
        /// The state being waited for.
        target: PowerState,
    },
    /// Manual fencing: a person must act, then acknowledge.
    AwaitingAcknowledgment {
        /// What the person must do.
        instructions: String,
    },
    /// Manual fencing: a person acknowledged.
    Acknowledged {
        /// Who (user, host, terminal).
        by: String,
        /// When (RFC 3339, UTC).
        at: String,
    },
    /// A step failed in a way that is retried within the deadline.
    Retry {
        /// Where.
        stage: Stage,
        /// Why.
        reason: String,
    },
    /// The driver tolerated a device's non-compliance, or a named
    /// workaround is in use (IPMI: docs/ipmi.md). Those that weaken
    /// security are warned about on every use.
    Workaround {
        /// The workaround's name (FreeIPMI's), when it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// What was tolerated, and how.
        detail: String,
        /// It drops an integrity or authentication check.
        weakens_security: bool,
    },
    /// Something optional could not be done; the action goes on (e.g. a
    /// BMC without NMI support: no crash dump, straight to power-off).
    Warning {
        /// What, and what happens instead.
        message: String,
    },
    /// Crash dump first: waiting for the node's kdump kernel to report
    /// (fence_kdump messages over UDP) before the hard power-off.
    AwaitingCrashdump {
        /// The UDP port listened on.
        port: u16,
        /// The longest wait, in milliseconds.
        ms: u64,
    },
    /// Crash dump first: the first valid fence_kdump message from the node.
    CrashdumpMessage {
        /// The sender's address.
        from: String,
    },
    /// Crash dump first: the wait is over (the power-off follows).
    CrashdumpWaitEnded {
        /// Valid messages received from the node.
        messages: u32,
        /// Why the wait ended.
        reason: String,
    },
    /// The confirmed-off hook was started (the node is observed off).
    HookStarted {
        /// Its time limit, in milliseconds.
        timeout_ms: u64,
    },
    /// What the confirmed-off hook printed (bounded).
    HookOutput {
        /// `stdout` or `stderr`.
        stream: String,
        /// The text (lossy UTF-8), cut at the capture limit.
        text: String,
        /// True when output beyond the limit was dropped.
        truncated: bool,
    },
    /// The confirmed-off hook ended.
    HookFinished {
        /// It exited 0 within its time limit.
        ok: bool,
        /// Exit status, or why it failed.
        detail: String,
    },
}

impl Event {
    /// The event in words, for logs and progress lines (no secret).
    pub fn describe(&self) -> String {
        match self {
            Event::Started { action } => format!("{action} started"),
            Event::Authenticated { detail } => format!("session established: {detail}"),
            Event::Identity {
                found,
                matched: true,
                encoding,
                ..
            } => match encoding {
                Some(e) => format!("identity confirmed: {found} (uuid matched as {e})"),
                None => format!("identity confirmed: {found}"),
            },
            Event::Identity { found, .. } => {
                format!("identity NOT confirmed: the device reports {found}")
            }
            Event::CommandSent { command } => format!("power {command} accepted by the device"),
            Event::CommandDeclined { command, reason } => {
                format!("power {command} declined ({reason}); reading the state again")
            }
            Event::CommandUnanswered { command, reason } => format!(
                "power {command} got no answer ({reason}); its outcome is unknown: not sent again"
            ),
            Event::StateObserved { state } => format!("observed: power {state}"),
            Event::TransitionObserved { transition } => {
                format!("observed: {transition} (a transition under way)")
            }
            Event::Waiting { ms, target } => format!("waiting {ms} ms for power {target}"),
            Event::AwaitingAcknowledgment { instructions } => instructions.clone(),
            Event::Acknowledged { by, at } => format!("acknowledged by {by} at {at}"),
            Event::Retry { stage, reason } => format!("retrying the {}: {reason}", stage.as_str()),
            Event::Workaround {
                name,
                detail,
                weakens_security: true,
            } => format!(
                "warning: workaround {} in use: {detail}",
                name.as_deref().unwrap_or("(unnamed)")
            ),
            Event::Workaround {
                name: Some(n),
                detail,
                ..
            } => format!("tolerated ({n}): {detail}"),
            Event::Workaround { detail, .. } => format!("tolerated: {detail}"),
            Event::Warning { message } => format!("warning: {message}"),
            Event::AwaitingCrashdump { port, ms } => format!(
                "waiting up to {:.1}s for the node's kdump to report (fence_kdump, UDP port {port})",
                *ms as f64 / 1000.0
            ),
            Event::CrashdumpMessage { from } => {
                format!("fence_kdump message from {from}: the node is dumping")
            }
            Event::CrashdumpWaitEnded { messages, reason } => {
                format!("crash dump wait over ({messages} message(s)): {reason}")
            }
            Event::HookStarted { timeout_ms } => format!(
                "confirmed-off hook started (limit {:.1}s)",
                *timeout_ms as f64 / 1000.0
            ),
            Event::HookOutput {
                stream,
                text,
                truncated,
            } => format!(
                "hook {stream}: {}{}",
                text.trim_end(),
                if *truncated { " […]" } else { "" }
            ),
            Event::HookFinished { ok: true, detail } => format!("confirmed-off hook succeeded ({detail})"),
            Event::HookFinished { ok: false, detail } => format!("confirmed-off hook failed: {detail}"),
        }
    }
}

/// What a driver tolerated, for the timeline ([`Event::Workaround`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tolerance {
    /// The workaround's name, when it has one.
    pub name: Option<&'static str>,
    /// What was tolerated, and how.
    pub detail: String,
    /// It drops an integrity or authentication check.
    pub weakens_security: bool,
}

impl Tolerance {
    /// The event that reports it.
    pub fn event(self) -> Event {
        Event::Workaround {
            name: self.name.map(str::to_string),
            detail: self.detail,
            weakens_security: self.weakens_security,
        }
    }

    /// Whether `event` is a warning a person must see: a warning, or a
    /// workaround that weakens security.
    pub fn warns(event: &Event) -> Option<String> {
        match event {
            Event::Warning { message } => Some(message.clone()),
            Event::Workaround {
                weakens_security: true,
                ..
            } => Some(event.describe().trim_start_matches("warning: ").to_string()),
            _ => None,
        }
    }
}

/// An event and when it happened, relative to the start of the action.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stamped {
    /// Milliseconds since the action started.
    pub at_ms: u64,
    /// The event.
    #[serde(flatten)]
    pub event: Event,
}

impl Stamped {
    /// Stamps an event with an elapsed time.
    pub fn new(elapsed: Duration, event: Event) -> Self {
        Stamped {
            at_ms: elapsed.as_millis() as u64,
            event,
        }
    }
}

/// Receives the engine's events.
pub trait EventSink {
    /// Called once per event, in order.
    fn emit(&mut self, event: &Stamped);
}

impl<F: FnMut(&Stamped)> EventSink for F {
    fn emit(&mut self, event: &Stamped) {
        self(event)
    }
}

/// A sink that drops everything.
pub struct Discard;

impl EventSink for Discard {
    fn emit(&mut self, _event: &Stamped) {}
}
