//! What the engine reports while it works.
//!
//! Fronts subscribe with an [`EventSink`] and render events as progress,
//! JSON lines, or nothing at all (agent mode prints one result line). Events
//! never carry a secret.

use super::error::Stage;
use super::power::{Action, PowerCommand, PowerState};
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
    /// A power state was read.
    StateObserved {
        /// The state.
        state: PowerState,
    },
    /// The engine waits for a transition (power_wait, or between polls).
    Waiting {
        /// How long, in milliseconds.
        ms: u64,
        /// The state being waited for.
        target: PowerState,
    },
    /// A step failed in a way that is retried within the deadline.
    Retry {
        /// Where.
        stage: Stage,
        /// Why.
        reason: String,
    },
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
