//! The per-target state machine: read, send, wait, poll, confirm.
//!
//! Safety rule: success means the new state was *observed* (`confirm`
//! consecutive reads), never that a command was accepted. A command the
//! device declines as "not in present state" leads to a fresh read, never
//! straight to success.
//!
//! Transitions (a device's `PoweringOn`/`PoweringOff`, [`Observed::InTransition`])
//! are states to wait through, never answers, first reading included:
//! `off` sends its hard power-off at once (fencing does not wait for a boot
//! or a hung shutdown to finish; a device that refuses a command during a
//! transition is read again and waited through), `on` waits for a settled
//! state first (an "on" sent while a node powers off may be dropped:
//! quirk 15), and `status` reports the transition. A refused command is
//! never re-sent before the state has been read again.
//!
//! Identity rule: when the policy names an expected identity, it is read in
//! the session just opened and compared before anything else happens
//! (status read included), so a mismatch leaves the machine exactly as it
//! was and a status never describes a machine other than the one named.

use super::clock::Instant;
use super::driver::PowerDriver;
use super::error::{DriverError, ErrorKind, Stage};
use super::event::{Event, EventSink, Stamped};
use super::identity::Comparison;
use super::policy::Policy;
use super::power::{Action, Observed, PowerCommand, PowerState, RebootMethod, Transition};
use serde::Serialize;
use std::future::Future;
use std::time::Duration;
use tokio::sync::watch;

mod observe;
mod reboot;

/// What an action achieved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    /// `status`: the state read.
    Status {
        /// The state.
        state: PowerState,
    },
    /// `status`: the device reports a power change under way (neither on
    /// nor off yet).
    InTransition {
        /// The transition.
        transition: Transition,
    },
    /// The target was already in the requested state (confirmed).
    Already {
        /// The state.
        state: PowerState,
    },
    /// The requested state was reached and confirmed.
    Reached {
        /// The state.
        state: PowerState,
    },
    /// `reboot` (on/off): off confirmed, then on confirmed.
    Rebooted,
    /// `reboot` (on/off): off confirmed, but the power-on was not confirmed.
    /// The node is fenced; it did not come back.
    FencedNotRestored {
        /// Why the power-on failed.
        error: String,
    },
    /// `reboot --method cycle`: the cycle command was accepted; nothing was
    /// observed. Natively this is "sent, unverified" (not a success) unless
    /// a verification follows; agent mode reports it as upstream does.
    CycleSent,
    /// `off` through a device whose status cannot tell off from unreachable
    /// (see [`PowerDriver::observes_off`], the SSH `host` profile): the
    /// power-off was sent while the node was seen on; nothing can observe
    /// it off. "Sent, unverified", never a success on its own.
    OffSent,
    /// `reboot --method cycle` observed through (`--verify`): after the
    /// cycle command the node was seen off, then on (confirmed).
    Cycled,
    /// A command was sent, its answer never came, and nothing read since
    /// shows whether the device carried it out (a cycle, a reset or an NMI;
    /// an off or on whose state could not be read afterwards). It is never
    /// sent again ([`super::once`]): "sent, outcome unknown", natively not a
    /// success (exit 3), a failure in agent mode.
    OutcomeUnknown {
        /// The command.
        command: PowerCommand,
        /// What is known.
        reason: String,
    },
    /// `monitor`: the device answered and authenticated.
    Monitored,
    /// `diag`: the diagnostic interrupt was accepted ("sent, unverified":
    /// nothing observes its effect).
    DiagSent,
    /// Manual fencing: a person said they did it. Nobody observed a power
    /// state; the result carries who and when, never a state.
    Acknowledged {
        /// Who (user, host, terminal).
        by: String,
        /// When (RFC 3339, UTC).
        at: String,
    },
}

impl Outcome {
    /// The power state this outcome proves, if any.
    pub fn state(&self) -> Option<PowerState> {
        match self {
            Outcome::Status { state } | Outcome::Already { state } | Outcome::Reached { state } => {
                Some(*state)
            }
            Outcome::Rebooted | Outcome::Cycled => Some(PowerState::On),
            // Under way, sent or acknowledged: no settled state was observed.
            Outcome::InTransition { .. }
            | Outcome::FencedNotRestored { .. }
            | Outcome::OutcomeUnknown { .. }
            | Outcome::CycleSent
            | Outcome::OffSent
            | Outcome::Monitored
            | Outcome::DiagSent
            | Outcome::Acknowledged { .. } => None,
        }
    }
}

/// An action that failed, with the last state that was observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The classified error.
    pub error: DriverError,
    /// The last power state read before the failure, if any.
    pub last_state: Option<PowerState>,
}

/// Lets a front stop an action (SIGINT/SIGTERM) so that the session is still closed.
#[derive(Clone)]
pub struct Cancel(watch::Receiver<bool>);

/// The sending half of [`Cancel`].
pub struct CancelHandle(watch::Sender<bool>);

impl Cancel {
    /// A new cancel pair.
    pub fn new() -> (CancelHandle, Cancel) {
        let (tx, rx) = watch::channel(false);
        (CancelHandle(tx), Cancel(rx))
    }

    /// A cancel that never fires.
    pub fn never() -> Cancel {
        let (tx, rx) = watch::channel(false);
        std::mem::forget(tx);
        Cancel(rx)
    }

    /// Resolves once the action is cancelled (never, for [`Cancel::never`]):
    /// every wait outside the engine (stagger, slots, locks, manual fencing)
    /// selects on it too.
    pub async fn cancelled(&mut self) {
        while !*self.0.borrow() {
            if self.0.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

impl CancelHandle {
    /// Asks the action to stop at its next await point.
    pub fn cancel(&self) {
        let _ = self.0.send(true);
    }
}

/// Runs `action` on one device and closes the session whatever happens.
pub async fn run<D: PowerDriver>(
    driver: &mut D,
    action: Action,
    policy: &Policy,
    sink: &mut dyn EventSink,
    cancel: Cancel,
) -> Result<Outcome, Failure> {
    let mut m = Machine {
        driver,
        policy,
        sink,
        cancel,
        start: Instant::now(),
        last_state: None,
        last_transition: None,
        settled_reads: 0,
        unanswered_since: None,
    };
    m.emit(Event::Started { action });
    let result = m.act(action).await;
    // What was tolerated on the way to a failure is evidence too.
    m.emit_tolerances();
    m.driver.close().await;
    result.map_err(|error| Failure {
        error,
        last_state: m.last_state,
    })
}

struct Machine<'a, D> {
    driver: &'a mut D,
    policy: &'a Policy,
    sink: &'a mut dyn EventSink,
    cancel: Cancel,
    start: Instant,
    last_state: Option<PowerState>,
    /// The transition of the last reading, when it was one (for messages).
    last_transition: Option<Transition>,
    /// Settled states read so far (whether reads still answer).
    settled_reads: u32,
    /// When the current run of unanswered status reads began (`None` after
    /// a read the device answered).
    unanswered_since: Option<Instant>,
}

/// What became of one power command ([`Machine::send`]).
#[derive(Debug)]
enum Sent {
    /// The device accepted it.
    Accepted,
    /// The device declined it in a way that may only mean "already there":
    /// read again, never assume.
    Declined,
    /// No answer, and nothing showed whether it was carried out: never send
    /// it again (at most once). The driver's words.
    Unknown(String),
}

/// A command error after which the device may have acted: the driver said
/// so ([`ErrorKind::OutcomeUnknown`]), or the command step timed out.
fn may_have_acted(e: &DriverError) -> bool {
    e.kind == ErrorKind::OutcomeUnknown
        || (e.kind == ErrorKind::Timeout && e.stage == Stage::Command)
}

/// `uuid U, serial S` for messages.
fn describe_expected(e: &super::identity::ExpectedIdentity) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &e.uuid {
        parts.push(format!("uuid {u}"));
    }
    if let Some(s) = &e.serial {
        parts.push(format!("serial {s}"));
    }
    for n in &e.names {
        parts.push(format!("{} {}", n.source, n.value));
    }
    parts.join(", ")
}

fn command_for(state: PowerState) -> PowerCommand {
    match state {
        PowerState::On => PowerCommand::On,
        PowerState::Off => PowerCommand::Off,
    }
}

impl<D: PowerDriver> Machine<'_, D> {
    fn emit(&mut self, event: Event) {
        self.emit_tolerances();
        let stamped = Stamped::new(self.start.elapsed(), event);
        self.sink.emit(&stamped);
    }

    /// What the driver tolerated since the last event, in the timeline
    /// before whatever follows from it.
    fn emit_tolerances(&mut self) {
        for t in self.driver.take_tolerances() {
            let stamped = Stamped::new(self.start.elapsed(), t.event());
            self.sink.emit(&stamped);
        }
    }

    /// Awaits `fut`, or fails with `Interrupted` when cancelled.
    async fn guard<T>(
        &mut self,
        stage: Stage,
        fut: impl Future<Output = Result<T, DriverError>>,
    ) -> Result<T, DriverError> {
        let mut cancel = self.cancel.clone();
        tokio::select! {
            r = fut => r,
            _ = cancel.cancelled() => Err(DriverError::new(
                ErrorKind::Interrupted, stage, "stopped by a signal")),
        }
    }

    /// Sleeps `d`, cancellable. A sleep that would end past the overall
    /// deadline sleeps until the deadline and fails there: the action ends
    /// exactly at its deadline, neither after it nor early.
    async fn sleep(&mut self, d: Duration, stage: Stage) -> Result<(), DriverError> {
        let wake = Instant::now().checked_add(d);
        let cut = match (self.policy.deadline, wake) {
            (Some(end), Some(wake)) if end < wake => Some(end),
            (Some(end), None) => Some(end),
            _ => None,
        };
        self.guard(stage, async {
            match cut.or(wake) {
                Some(at) => tokio::time::sleep_until(at).await,
                // Beyond any representable instant: tokio caps the sleep.
                None => tokio::time::sleep(d).await,
            }
            Ok(())
        })
        .await?;
        match cut {
            Some(_) => Err(self.deadline_error(stage)),
            None => Ok(()),
        }
    }

    fn deadline_error(&self, stage: Stage) -> DriverError {
        let what = match (self.last_transition, self.last_state) {
            (Some(t), _) => format!("; last reading: {t}, a transition under way"),
            (None, Some(s)) => format!("; last state read: {s}"),
            (None, None) => String::new(),
        };
        DriverError::new(
            ErrorKind::Timeout,
            stage,
            format!(
                "the action's deadline passed after {:.1}s{what}",
                self.start.elapsed().as_secs_f64()
            ),
        )
    }

    fn overall_passed(&self) -> bool {
        self.policy.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Opens the session; a BMC that answers "busy" (OpenBMC 503 just after
    /// a reboot, no free session slot) is asked again within the step deadline.
    /// A set-up that timed out although the device answered part of it (a
    /// path losing datagrams: under 30 % loss each way an IPMI set-up
    /// outlasts a 10 s login timeout about once in a hundred) starts again,
    /// once, with a fresh login timeout, if the action's deadline leaves
    /// room. Once only: a fleet node's levels share its deadline, and a
    /// lossy first level must leave the next one its turn. A device that
    /// answered nothing fails at the login timeout, as before, and without
    /// an action deadline (the agents, Pacemaker's `disable_timeout`
    /// included) nothing is retried: the set-up is bounded by one step
    /// whatever the power timeout.
    async fn connect(&mut self) -> Result<String, DriverError> {
        let mut end = self.policy.step_end();
        let mut deadline = Some(self.policy.step_deadline());
        let mut pause = Duration::from_millis(250);
        let mut set_up_again = true;
        loop {
            let fut = self.driver.connect(deadline);
            let mut cancel = self.cancel.clone();
            let r = tokio::select! {
                r = fut => r,
                _ = cancel.cancelled() => return Err(DriverError::new(
                    ErrorKind::Interrupted, Stage::Authenticate, "stopped by a signal")),
            };
            // Busy: again within the same step. A set-up the device answered
            // in part: once more, with a step of its own.
            let (e, new_step) = match r {
                Err(e) if e.kind == ErrorKind::Busy && Instant::now() + pause < end => (e, false),
                Err(e)
                    if e.kind == ErrorKind::Timeout
                        && set_up_again
                        && self.driver.set_up_answered()
                        && self
                            .policy
                            .deadline
                            .is_some_and(|d| Instant::now() + pause < d) =>
                {
                    set_up_again = false;
                    let message = format!(
                        "{}; the device answered part of the set-up: starting a new one",
                        e.message
                    );
                    (DriverError { message, ..e }, true)
                }
                other => return other,
            };
            self.emit(Event::Retry {
                stage: e.stage,
                reason: e.message,
            });
            self.sleep(pause, Stage::Authenticate).await?;
            pause = (pause * 2).min(Duration::from_secs(2));
            if new_step {
                end = self.policy.step_end();
                deadline = Some(self.policy.step_deadline());
            }
        }
    }

    /// The driver's notes (e.g. a guard it could not apply), as warnings.
    fn driver_warnings(&mut self) {
        for message in self.driver.take_warnings() {
            self.emit(Event::Warning { message });
        }
    }

    async fn act(&mut self, action: Action) -> Result<Outcome, DriverError> {
        let detail = self.connect().await?;
        self.emit(Event::Authenticated { detail });
        self.driver_warnings();
        self.pin().await?;
        match action {
            Action::Status => Ok(match self.read().await? {
                Observed::Settled(state) => Outcome::Status { state },
                Observed::InTransition(transition) => Outcome::InTransition { transition },
            }),
            Action::Monitor => {
                self.read().await?;
                Ok(Outcome::Monitored)
            }
            Action::Diag => {
                self.read().await?;
                match self.send(PowerCommand::Diag, None).await? {
                    Sent::Accepted | Sent::Declined => Ok(Outcome::DiagSent),
                    // An NMI shows nothing to read: never sent again.
                    Sent::Unknown(reason) => Ok(Outcome::OutcomeUnknown {
                        command: PowerCommand::Diag,
                        reason,
                    }),
                }
            }
            Action::Off => self.ensure(PowerState::Off, 1).await,
            Action::On => self.ensure(PowerState::On, 1 + self.policy.retry_on).await,
            Action::Reboot => match self.policy.method {
                RebootMethod::OnOff => self.reboot_onoff().await,
                RebootMethod::Cycle => self.reboot_cycle().await,
            },
        }
    }

    /// Reads the device's identity and compares it with the expected one;
    /// nothing to do when none is expected. Runs before every action's
    /// first status read, so nothing is read from or sent to a machine
    /// other than the one named.
    async fn pin(&mut self) -> Result<(), DriverError> {
        if self.policy.expect.is_empty() {
            return Ok(());
        }
        let expected = self.policy.expect.clone();
        let deadline = Some(self.policy.step_deadline());
        let fut = self.driver.identity(deadline);
        let mut cancel = self.cancel.clone();
        let read = tokio::select! {
            r = fut => r,
            _ = cancel.cancelled() => Err(DriverError::new(
                ErrorKind::Interrupted, Stage::Identity, "stopped by a signal")),
        };
        let found = match read {
            Ok(f) => f,
            Err(e) => {
                // A device that says it has no such command cannot report
                // the identity; any other failure keeps its own class.
                let kind = match e.kind {
                    ErrorKind::Unsupported | ErrorKind::DeviceError => {
                        ErrorKind::IdentityUnavailable
                    }
                    k => k,
                };
                return Err(DriverError::new(
                    kind,
                    Stage::Identity,
                    format!(
                        "refusing to act: cannot read the machine's identity ({}), so it \
                         cannot be confirmed as {}; no power command was sent",
                        e.message,
                        describe_expected(&expected)
                    ),
                ));
            }
        };
        let verdict = expected.compare(&found);
        let (matched, encoding) = match &verdict {
            Comparison::Match(m) => (true, m.uuid_encoding),
            _ => (false, None),
        };
        self.emit(Event::Identity {
            expected,
            found,
            matched,
            encoding,
        });
        match verdict {
            Comparison::Match(_) => Ok(()),
            Comparison::Mismatch(why) => Err(DriverError::new(
                ErrorKind::IdentityMismatch,
                Stage::Identity,
                format!("refusing to act on a different machine: {why}; no power command was sent"),
            )),
            Comparison::Unreported(why) => Err(DriverError::new(
                ErrorKind::IdentityUnavailable,
                Stage::Identity,
                format!(
                    "refusing to act: {why}, so the machine cannot be confirmed; \
                     no power command was sent"
                ),
            )),
        }
    }

    /// Sends a command. [`Sent::Declined`] when the device declined it as
    /// "not in present state", or refused it while the node reached `target`
    /// (the settled state the command leads to; `None` for cycle and diag):
    /// the caller then polls for the state rather than assume it.
    /// [`Sent::Unknown`] when no answer came and the driver could not tell
    /// whether it was carried out: the caller never sends it again.
    ///
    /// A refusal that means "busy" or "a transition is in progress" (an
    /// answer: not carried out) is never answered by re-sending blindly:
    /// the state is read first; a transition is waited through; the command
    /// is sent again only when the node is still not where it should be,
    /// within the deadline.
    async fn send(
        &mut self,
        command: PowerCommand,
        target: Option<PowerState>,
    ) -> Result<Sent, DriverError> {
        let mut pause = Duration::from_millis(200);
        // Busy answers are retried until the step deadline, never forever
        // (the step bound holds under `disable_timeout` too).
        let mut give_up = self.policy.step_end();
        loop {
            let deadline = Some(self.policy.step_deadline());
            let fut = self.driver.command(command, deadline);
            let mut cancel = self.cancel.clone();
            let r = tokio::select! {
                r = fut => r,
                _ = cancel.cancelled() => return Err(DriverError::new(
                    ErrorKind::Interrupted, Stage::Command, "stopped by a signal")),
            };
            self.driver_warnings();
            match r {
                Ok(()) => {
                    self.emit(Event::CommandSent { command });
                    return Ok(Sent::Accepted);
                }
                Err(e) if e.kind == ErrorKind::NotInPresentState => {
                    self.emit(Event::CommandDeclined {
                        command,
                        reason: e.message,
                    });
                    return Ok(Sent::Declined);
                }
                Err(e) if may_have_acted(&e) => {
                    let reason = e.to_string();
                    self.emit(Event::CommandUnanswered {
                        command,
                        reason: reason.clone(),
                    });
                    return Ok(Sent::Unknown(reason));
                }
                Err(e)
                    if e.kind == ErrorKind::Busy
                        && !self.overall_passed()
                        && Instant::now() + pause < give_up =>
                {
                    // Quirk (openbmc#1810/#1812): transient errors during a
                    // transition or while the BMC boots succeed on retry;
                    // quirk 15 (iLO): "power transition in progress".
                    self.emit(Event::Retry {
                        stage: Stage::Command,
                        reason: e.message,
                    });
                    // Read before deciding: the refusal may mean the node
                    // got there meanwhile, or is in a transition.
                    let now = match self.poll_read().await? {
                        Some(Observed::InTransition(t)) => {
                            let s = self.wait_settled(t).await?;
                            // Waiting through a transition was progress,
                            // not a busy device: the retry budget restarts.
                            give_up = self.policy.step_end();
                            pause = Duration::from_millis(200);
                            Some(s)
                        }
                        Some(Observed::Settled(s)) => {
                            self.sleep(pause, Stage::Command).await?;
                            pause = (pause * 2).min(Duration::from_secs(2));
                            Some(s)
                        }
                        None => {
                            self.sleep(pause, Stage::Command).await?;
                            pause = (pause * 2).min(Duration::from_secs(2));
                            None
                        }
                    };
                    if now.is_some() && now == target {
                        return Ok(Sent::Declined);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Brings the target to `target`: already there (confirmed) or set and observed.
    async fn ensure(&mut self, target: PowerState, attempts: u32) -> Result<Outcome, DriverError> {
        if target == PowerState::Off && !self.driver.observes_off() {
            return self.off_unobservable().await;
        }
        let settled = match self.read().await? {
            Observed::Settled(s) => s,
            // Fencing does not wait for a boot (or a hung shutdown) to end:
            // the hard power-off goes now. A device that refuses it during
            // the transition (iLO) is read again and waited through (`send`).
            Observed::InTransition(_) if target == PowerState::Off => {
                return self.set_power(target, attempts).await;
            }
            // An "on" sent while the node powers off can be accepted and
            // dropped (quirk 15): wait for the node to settle, then decide.
            Observed::InTransition(t) => self.wait_settled(t).await?,
        };
        if settled == target {
            if !self.driver.shows_transitions() {
                // The device may show the old state during a transition
                // (vendors.md: XCC, Supermicro, AMI), so "already there"
                // cannot rule out a boot or shutdown under way. Such devices
                // accept the command as a no-op: send it, then confirm.
                if let Sent::Unknown(why) = self.send(command_for(target), Some(target)).await? {
                    return self.settle_unknown(target, why).await;
                }
                if !self.poll_until(target).await? {
                    return Err(self.transition_timeout(target));
                }
                return Ok(Outcome::Already { state: target });
            }
            if self.confirm_already(target).await? {
                return Ok(Outcome::Already { state: target });
            }
        }
        self.set_power(target, attempts).await
    }

    /// `off` through a device that cannot observe off: the node must be
    /// seen on (a read that fails fails the action: unreachable is not
    /// off), then the power-off is sent, and that is all that can be said.
    async fn off_unobservable(&mut self) -> Result<Outcome, DriverError> {
        self.read().await?;
        match self.send(PowerCommand::Off, None).await? {
            Sent::Accepted => Ok(Outcome::OffSent),
            Sent::Unknown(reason) => Ok(Outcome::OutcomeUnknown {
                command: PowerCommand::Off,
                reason,
            }),
            Sent::Declined => Err(DriverError::new(
                ErrorKind::DeviceError,
                Stage::Command,
                "the power-off was declined, and this method cannot observe the node off",
            )),
        }
    }

    /// An off or on whose answer never came: never sent again; the state
    /// is polled. Seen → reached. Read, but never the target → not carried
    /// out (a timeout naming the silence). Not read at all → its outcome is
    /// unknown.
    async fn settle_unknown(
        &mut self,
        target: PowerState,
        why: String,
    ) -> Result<Outcome, DriverError> {
        let reads_before = self.settled_reads;
        match self.poll_until(target).await {
            Ok(true) => Ok(Outcome::Reached { state: target }),
            Err(e) if e.kind == ErrorKind::Interrupted => Err(e),
            Ok(false) if self.settled_reads > reads_before => {
                let mut e = self.transition_timeout(target);
                e.message = format!(
                    "{} — the command got no answer ({why}) and was not sent again",
                    e.message
                );
                Err(e)
            }
            Ok(false) | Err(_) => Ok(Outcome::OutcomeUnknown {
                command: command_for(target),
                reason: format!(
                    "{why}; the power state could not be read since, so whether the device \
                     carried it out is not known"
                ),
            }),
        }
    }

    /// fence-agents' set_power: per attempt, send, wait power_wait, poll until
    /// the target state is observed `confirm` times in a row or the power
    /// timeout passes.
    /// A command whose answer never came is never sent again
    /// ([`Machine::settle_unknown`]); only an answered one is, after the
    /// power timeout passed without the target.
    async fn set_power(
        &mut self,
        target: PowerState,
        attempts: u32,
    ) -> Result<Outcome, DriverError> {
        let command = command_for(target);
        for _ in 0..attempts.max(1) {
            if let Sent::Unknown(why) = self.send(command, Some(target)).await? {
                return self.settle_unknown(target, why).await;
            }
            if !self.policy.power_wait.is_zero() {
                self.emit(Event::Waiting {
                    ms: self.policy.power_wait.as_millis() as u64,
                    target,
                });
                self.sleep(self.policy.power_wait, Stage::Wait).await?;
            }
            if self.poll_until(target).await? {
                return Ok(Outcome::Reached { state: target });
            }
        }
        Err(self.transition_timeout(target))
    }
}

#[cfg(test)]
mod tests {
    //! Every test runs on tokio's paused clock (`start_paused`): waits take
    //! no real time, and the virtual time of every call is exact.

    use super::*;
    use crate::engine::identity::{ExpectedIdentity, Identity, UuidForm};
    use crate::engine::policy::PowerTimeout;
    use std::collections::VecDeque;

    /// What a scripted device does once its queue of status answers is spent.
    #[derive(Clone)]
    enum Then {
        /// The script was wrong: more reads than expected.
        Panic,
        /// Gives this answer forever.
        Repeat(Result<Observed, ErrorKind>),
        /// Never answers (a hung BMC).
        Hang,
    }

    /// One call the engine made, and when (virtual time since the device
    /// was made).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Call {
        Connect,
        Read,
        Command(PowerCommand),
    }

    /// A scripted device: a queue of status answers, a log of commands.
    struct Scripted {
        reads: VecDeque<Result<Observed, ErrorKind>>,
        then: Then,
        commands: Vec<PowerCommand>,
        command_answers: VecDeque<Result<(), ErrorKind>>,
        /// Refuses every command with this error once `command_answers` is spent.
        command_refusal: Option<ErrorKind>,
        /// Errors `connect` answers in turn, then success.
        connect_errors: VecDeque<ErrorKind>,
        /// Refuses every connect with this error once `connect_errors` is spent.
        connect_refusal: Option<ErrorKind>,
        /// The device may show the old state during a transition.
        hides: bool,
        closed: bool,
        /// What `identity()` answers, and how often it was asked.
        identity: Result<Identity, ErrorKind>,
        identity_reads: u32,
        /// Like the SSH `host` profile: status cannot see the machine off.
        blind_off: bool,
        /// A connect that times out had answers from the device.
        answered: bool,
        /// Every call, with its virtual time.
        born: Instant,
        calls: Vec<(Duration, Call)>,
    }

    impl Scripted {
        fn new(reads: &[Result<PowerState, ErrorKind>]) -> Self {
            let reads: Vec<_> = reads.iter().map(|r| r.map(Observed::Settled)).collect();
            Scripted::observing(&reads)
        }

        fn observing(reads: &[Result<Observed, ErrorKind>]) -> Self {
            Scripted {
                reads: reads.iter().cloned().collect(),
                then: Then::Panic,
                commands: vec![],
                command_answers: VecDeque::new(),
                command_refusal: None,
                connect_errors: VecDeque::new(),
                connect_refusal: None,
                hides: false,
                closed: false,
                identity: Ok(Identity::default()),
                identity_reads: 0,
                blind_off: false,
                answered: false,
                born: Instant::now(),
                calls: vec![],
            }
        }

        /// A device that answers `r` to every read.
        fn always(r: Result<Observed, ErrorKind>) -> Self {
            let mut d = Scripted::observing(&[]);
            d.then = Then::Repeat(r);
            d
        }

        fn log(&mut self, call: Call) {
            self.calls.push((self.born.elapsed(), call));
        }

        /// When (ms of virtual time) each call of this kind was made.
        fn times(&self, pick: fn(&Call) -> bool) -> Vec<u128> {
            self.calls
                .iter()
                .filter(|(_, c)| pick(c))
                .map(|(t, _)| t.as_millis())
                .collect()
        }

        fn read_times(&self) -> Vec<u128> {
            self.times(|c| *c == Call::Read)
        }
    }

    impl PowerDriver for Scripted {
        async fn connect(
            &mut self,
            deadline: Option<std::time::Instant>,
        ) -> Result<String, DriverError> {
            self.log(Call::Connect);
            let answer = self.connect_errors.pop_front().or(self.connect_refusal);
            if let (Some(ErrorKind::Timeout), Some(d)) = (answer, deadline) {
                // A timeout takes the whole step (in whole milliseconds: the
                // std deadline is a few real microseconds closer by now).
                let left = crate::engine::clock::from_std(d) - Instant::now();
                let ms = left.as_micros().div_ceil(1000) as u64;
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            match answer {
                Some(k) => Err(DriverError::new(
                    k,
                    Stage::Authenticate,
                    "scripted connect error",
                )),
                None => Ok("scripted".into()),
            }
        }
        async fn status(
            &mut self,
            _: Option<std::time::Instant>,
        ) -> Result<PowerState, DriverError> {
            unreachable!("the engine reads through observe()")
        }
        async fn observe(
            &mut self,
            _: Option<std::time::Instant>,
        ) -> Result<Observed, DriverError> {
            self.log(Call::Read);
            let answer = match (self.reads.pop_front(), &self.then) {
                (Some(a), _) => a,
                (None, Then::Repeat(a)) => *a,
                (None, Then::Hang) => std::future::pending().await,
                (None, Then::Panic) => panic!("no more scripted reads"),
            };
            answer.map_err(|k| DriverError::new(k, Stage::Status, "scripted error"))
        }
        fn shows_transitions(&self) -> bool {
            !self.hides
        }
        async fn command(
            &mut self,
            c: PowerCommand,
            _: Option<std::time::Instant>,
        ) -> Result<(), DriverError> {
            self.log(Call::Command(c));
            self.commands.push(c);
            let answer = self
                .command_answers
                .pop_front()
                .unwrap_or(self.command_refusal.map_or(Ok(()), Err));
            answer.map_err(|k| DriverError::new(k, Stage::Command, "scripted refusal"))
        }
        async fn identity(
            &mut self,
            _: Option<std::time::Instant>,
        ) -> Result<Identity, DriverError> {
            self.identity_reads += 1;
            self.identity
                .clone()
                .map_err(|k| DriverError::new(k, Stage::Status, "scripted identity error"))
        }
        fn observes_off(&self) -> bool {
            !self.blind_off
        }
        fn set_up_answered(&self) -> bool {
            self.answered
        }

        async fn close(&mut self) {
            self.closed = true;
        }
    }

    use PowerState::{Off, On};

    fn native() -> Policy {
        Policy {
            poll_interval: Duration::from_millis(1),
            poll_interval_max: Duration::from_millis(1),
            ..Policy::native()
        }
    }

    async fn go(d: &mut Scripted, a: Action, p: &Policy) -> Result<Outcome, Failure> {
        run(d, a, p, &mut super::super::event::Discard, Cancel::never()).await
    }

    #[tokio::test(start_paused = true)]
    async fn off_needs_consecutive_confirmation() {
        // on, (off), off→on flap, off, off
        let mut d = Scripted::new(&[Ok(On), Ok(Off), Ok(On), Ok(Off), Ok(Off)]);
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert_eq!(d.commands, vec![PowerCommand::Off]);
        assert!(d.reads.is_empty(), "all five reads were needed");
        assert!(d.closed);
    }

    #[tokio::test(start_paused = true)]
    async fn already_off_is_confirmed_not_assumed() {
        let mut d = Scripted::new(&[Ok(Off), Ok(On), Ok(Off), Ok(Off)]);
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert_eq!(d.commands, vec![PowerCommand::Off]);
    }

    #[tokio::test(start_paused = true)]
    async fn declined_off_leads_to_a_fresh_read() {
        let mut d = Scripted::new(&[Ok(On), Ok(On), Ok(On), Ok(On)]);
        d.command_answers
            .push_back(Err(ErrorKind::NotInPresentState));
        let p = Policy {
            power_timeout: PowerTimeout::Polls(3),
            ..native()
        };
        let r = go(&mut d, Action::Off, &p).await.unwrap_err();
        assert_eq!(r.error.kind, ErrorKind::TransitionTimeout);
        assert_eq!(r.last_state, Some(On));
        assert!(r.error.message.contains("timed out waiting to power OFF"));
    }

    #[tokio::test(start_paused = true)]
    async fn stuck_power_fails_after_the_poll_budget() {
        let mut d = Scripted::new(&[Ok(On), Ok(On), Ok(On), Ok(On)]);
        let p = Policy {
            power_timeout: PowerTimeout::Polls(3),
            ..Policy::agent()
        };
        let p = Policy {
            poll_interval: Duration::from_millis(1),
            ..p
        };
        let r = go(&mut d, Action::Off, &p).await.unwrap_err();
        assert_eq!(r.error.kind, ErrorKind::TransitionTimeout);
        assert_eq!(d.reads.len(), 0, "one initial read and three polls");
    }

    #[tokio::test(start_paused = true)]
    async fn reboot_whose_power_on_fails_is_fenced_not_restored() {
        let mut d = Scripted::new(&[Ok(On), Ok(Off), Ok(Off), Ok(Off), Ok(Off), Ok(Off)]);
        let p = Policy {
            power_timeout: PowerTimeout::Polls(1),
            retry_on: 0,
            ..native()
        };
        let r = go(&mut d, Action::Reboot, &p).await.unwrap();
        assert!(matches!(r, Outcome::FencedNotRestored { .. }));
        assert_eq!(d.commands, vec![PowerCommand::Off, PowerCommand::On]);
    }

    #[tokio::test(start_paused = true)]
    async fn reboot_never_powers_on_before_off_is_confirmed() {
        let mut d = Scripted::new(&[Ok(On), Ok(On), Ok(On)]);
        let p = Policy {
            power_timeout: PowerTimeout::Polls(2),
            ..native()
        };
        let r = go(&mut d, Action::Reboot, &p).await.unwrap_err();
        assert_eq!(r.error.kind, ErrorKind::TransitionTimeout);
        assert_eq!(d.commands, vec![PowerCommand::Off]);
    }

    #[tokio::test(start_paused = true)]
    async fn unreadable_status_is_a_failure() {
        let mut d = Scripted::new(&[Err(ErrorKind::StatusUnreadable)]);
        let r = go(&mut d, Action::Off, &native()).await.unwrap_err();
        assert_eq!(r.error.kind, ErrorKind::StatusUnreadable);
        assert!(d.commands.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn transient_poll_errors_are_missed_polls() {
        let mut d = Scripted::new(&[Ok(On), Err(ErrorKind::Timeout), Ok(Off), Ok(Off)]);
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
    }

    #[tokio::test(start_paused = true)]
    async fn cycle_on_an_off_chassis_powers_on() {
        let mut d = Scripted::new(&[Ok(Off), Ok(Off), Ok(On), Ok(On)]);
        d.command_answers
            .push_back(Err(ErrorKind::NotInPresentState));
        let p = Policy {
            method: RebootMethod::Cycle,
            ..native()
        };
        let r = go(&mut d, Action::Reboot, &p).await;
        assert_eq!(r, Ok(Outcome::Rebooted));
        assert_eq!(d.commands, vec![PowerCommand::Cycle, PowerCommand::On]);
    }

    use Transition::{PoweringOff, PoweringOn};

    fn on() -> Result<Observed, ErrorKind> {
        Ok(Observed::Settled(On))
    }
    fn off() -> Result<Observed, ErrorKind> {
        Ok(Observed::Settled(Off))
    }
    fn moving(t: Transition) -> Result<Observed, ErrorKind> {
        Ok(Observed::InTransition(t))
    }

    #[tokio::test(start_paused = true)]
    async fn status_reports_a_transition() {
        let mut d = Scripted::observing(&[moving(PoweringOff)]);
        let r = go(&mut d, Action::Status, &native()).await;
        assert_eq!(
            r,
            Ok(Outcome::InTransition {
                transition: PoweringOff
            })
        );
        assert!(d.commands.is_empty());
        assert_eq!(r.unwrap().state(), None, "a transition is no state");
    }

    #[tokio::test(start_paused = true)]
    async fn off_of_a_booting_node_powers_off_at_once() {
        let mut d = Scripted::observing(&[moving(PoweringOn), moving(PoweringOff), off(), off()]);
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert_eq!(d.commands, vec![PowerCommand::Off]);
        assert!(d.reads.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_during_a_transition_is_read_and_waited_through() {
        // iLO: "power transition in progress" to a ForceOff while booting.
        let mut d = Scripted::observing(&[
            moving(PoweringOn),
            moving(PoweringOn), // the read after the refusal
            moving(PoweringOn),
            on(), // settled: now the ForceOff is sent again
            off(),
            off(),
        ]);
        d.command_answers.push_back(Err(ErrorKind::Busy));
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert_eq!(d.commands, vec![PowerCommand::Off, PowerCommand::Off]);
        assert!(d.reads.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_is_not_resent_when_the_node_got_there() {
        let mut d = Scripted::new(&[Ok(On), Ok(Off), Ok(Off), Ok(Off)]);
        d.command_answers.push_back(Err(ErrorKind::Busy));
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert_eq!(d.commands, vec![PowerCommand::Off], "one command only");
    }

    #[tokio::test(start_paused = true)]
    async fn on_waits_for_a_power_off_to_end_before_powering_on() {
        let mut d =
            Scripted::observing(&[moving(PoweringOff), moving(PoweringOff), off(), on(), on()]);
        let r = go(&mut d, Action::On, &native()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: On }));
        assert_eq!(d.commands, vec![PowerCommand::On]);
        assert!(d.reads.is_empty());
        // A boot that completes is "already on", and nothing is sent.
        let mut d = Scripted::observing(&[moving(PoweringOn), on(), on()]);
        let r = go(&mut d, Action::On, &native()).await;
        assert_eq!(r, Ok(Outcome::Already { state: On }));
        assert!(d.commands.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn transitions_while_polling_are_not_the_target() {
        let mut d = Scripted::observing(&[
            on(),
            moving(PoweringOff),
            off(),
            moving(PoweringOff),
            off(),
            off(),
        ]);
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert!(d.reads.is_empty(), "a transition breaks a streak");
    }

    #[tokio::test(start_paused = true)]
    async fn a_transition_that_never_ends_fails_naming_it() {
        let mut d = Scripted::observing(&[moving(PoweringOff); 8]);
        let p = Policy {
            power_timeout: PowerTimeout::Polls(3),
            ..native()
        };
        let e = go(&mut d, Action::On, &p).await.unwrap_err();
        assert_eq!(e.error.kind, ErrorKind::TransitionTimeout);
        assert!(e.error.message.contains("powering off"), "{}", e.error);
        assert!(d.commands.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_device_that_hides_transitions_gets_the_command_anyway() {
        let mut d = Scripted::new(&[Ok(Off), Ok(Off), Ok(Off)]);
        d.hides = true;
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Already { state: Off }));
        assert_eq!(d.commands, vec![PowerCommand::Off]);
        assert!(d.reads.is_empty());
        // ... and one that shows them does not.
        let mut d = Scripted::new(&[Ok(Off), Ok(Off)]);
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::Already { state: Off }));
        assert!(d.commands.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn reboot_of_a_booting_node_powers_off_then_on() {
        let mut d = Scripted::observing(&[moving(PoweringOn), off(), off(), on(), on()]);
        let r = go(&mut d, Action::Reboot, &native()).await;
        assert_eq!(r, Ok(Outcome::Rebooted));
        assert_eq!(d.commands, vec![PowerCommand::Off, PowerCommand::On]);
    }

    #[tokio::test(start_paused = true)]
    async fn off_through_a_blind_device_is_sent_unverified() {
        // Seen on, power-off sent, and no poll for a state it cannot see.
        let mut d = Scripted::new(&[Ok(On)]);
        d.blind_off = true;
        let r = go(&mut d, Action::Off, &native()).await;
        assert_eq!(r, Ok(Outcome::OffSent));
        assert_eq!(d.commands, vec![PowerCommand::Off]);
        assert_eq!(Outcome::OffSent.state(), None);
        // Unreachable is not off: the read fails, nothing is sent.
        let mut d = Scripted::new(&[Err(ErrorKind::StatusUnreadable)]);
        d.blind_off = true;
        let r = go(&mut d, Action::Off, &native()).await.unwrap_err();
        assert_eq!(r.error.kind, ErrorKind::StatusUnreadable);
        assert!(d.commands.is_empty());
        // A reboot cannot confirm its off either: it stops at "sent".
        let mut d = Scripted::new(&[Ok(On)]);
        d.blind_off = true;
        let r = go(&mut d, Action::Reboot, &native()).await;
        assert_eq!(r, Ok(Outcome::OffSent));
        assert_eq!(d.commands, vec![PowerCommand::Off]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_cycle_observes_nothing() {
        let mut d = Scripted::new(&[Ok(On)]);
        let p = Policy {
            method: RebootMethod::Cycle,
            ..native()
        };
        let r = go(&mut d, Action::Reboot, &p).await;
        assert_eq!(r, Ok(Outcome::CycleSent));
        assert_eq!(r.unwrap().state(), None);
    }

    // ------------------------------------------------ at most once ----
    // Issue 23, item 9: a command whose answer never came is never sent
    // again; reboot_cycle used to send Cycle up to 1 + retry_on times after
    // any error, a timeout included.

    fn cycle() -> Policy {
        Policy {
            method: RebootMethod::Cycle,
            ..native()
        }
    }

    fn commands_of(d: &Scripted, c: PowerCommand) -> usize {
        d.commands.iter().filter(|x| **x == c).count()
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_cycle_is_never_sent_again() {
        for kind in [ErrorKind::OutcomeUnknown, ErrorKind::Timeout] {
            // The node reads on afterwards: finished, or never carried out.
            let mut d = Scripted::new(&[Ok(On), Ok(On)]);
            d.command_refusal = Some(kind);
            let r = go(&mut d, Action::Reboot, &cycle()).await;
            assert!(
                matches!(
                    &r,
                    Ok(Outcome::OutcomeUnknown { command: PowerCommand::Cycle, reason })
                        if reason.contains("not known")
                ),
                "{kind:?}: {r:?}"
            );
            assert_eq!(commands_of(&d, PowerCommand::Cycle), 1, "{kind:?}");
        }
        // It reads off: the cycle is under way, sent (unverified), once.
        let mut d = Scripted::new(&[Ok(On), Ok(Off)]);
        d.command_refusal = Some(ErrorKind::OutcomeUnknown);
        assert_eq!(
            go(&mut d, Action::Reboot, &cycle()).await,
            Ok(Outcome::CycleSent)
        );
        assert_eq!(commands_of(&d, PowerCommand::Cycle), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_cycle_may_go_again_an_unanswered_one_not() {
        // A refusal is an answer: not carried out, so retry_on applies.
        let mut d = Scripted::new(&[Ok(On)]);
        d.command_answers.push_back(Err(ErrorKind::DeviceError));
        assert_eq!(
            go(&mut d, Action::Reboot, &cycle()).await,
            Ok(Outcome::CycleSent)
        );
        assert_eq!(commands_of(&d, PowerCommand::Cycle), 2);
        // A refusal, then silence: the second is the last.
        let mut d = Scripted::new(&[Ok(On), Ok(On)]);
        d.command_answers.push_back(Err(ErrorKind::DeviceError));
        d.command_answers.push_back(Err(ErrorKind::OutcomeUnknown));
        let p = Policy {
            retry_on: 5,
            ..cycle()
        };
        let r = go(&mut d, Action::Reboot, &p).await;
        assert!(matches!(r, Ok(Outcome::OutcomeUnknown { .. })), "{r:?}");
        assert_eq!(commands_of(&d, PowerCommand::Cycle), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_nmi_is_an_unknown_outcome() {
        let mut d = Scripted::new(&[Ok(On)]);
        d.command_refusal = Some(ErrorKind::OutcomeUnknown);
        let r = go(&mut d, Action::Diag, &native()).await;
        assert!(
            matches!(
                r,
                Ok(Outcome::OutcomeUnknown {
                    command: PowerCommand::Diag,
                    ..
                })
            ),
            "{r:?}"
        );
        assert_eq!(d.commands, vec![PowerCommand::Diag]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_off_is_read_never_resent() {
        // Seen off: reached, one command.
        let mut d = Scripted::new(&[Ok(On), Ok(Off), Ok(Off)]);
        d.command_refusal = Some(ErrorKind::OutcomeUnknown);
        assert_eq!(
            go(&mut d, Action::Off, &native()).await,
            Ok(Outcome::Reached { state: Off })
        );
        assert_eq!(d.commands, vec![PowerCommand::Off]);
        // Still read on at the power timeout: not carried out, said so;
        // `on` with retry_on never sends a second one either.
        let p = Policy {
            power_timeout: PowerTimeout::Polls(3),
            retry_on: 3,
            ..native()
        };
        let mut d = Scripted::always(Ok(Observed::Settled(Off)));
        d.command_refusal = Some(ErrorKind::OutcomeUnknown);
        let e = go(&mut d, Action::On, &p).await.unwrap_err().error;
        assert_eq!(e.kind, ErrorKind::TransitionTimeout, "{e}");
        assert!(e.message.contains("was not sent again"), "{e}");
        assert_eq!(d.commands, vec![PowerCommand::On]);
        // Not read at all since: its outcome is unknown.
        let mut d = Scripted::new(&[Ok(On)]);
        d.then = Then::Repeat(Err(ErrorKind::Timeout));
        d.command_refusal = Some(ErrorKind::OutcomeUnknown);
        let r = go(&mut d, Action::Off, &p).await;
        assert!(
            matches!(
                r,
                Ok(Outcome::OutcomeUnknown {
                    command: PowerCommand::Off,
                    ..
                })
            ),
            "{r:?}"
        );
        assert_eq!(d.commands, vec![PowerCommand::Off]);
        // A reboot whose off is unknown is not followed by an on.
        let mut d = Scripted::new(&[Ok(On)]);
        d.then = Then::Repeat(Err(ErrorKind::Timeout));
        d.command_refusal = Some(ErrorKind::OutcomeUnknown);
        let r = go(&mut d, Action::Reboot, &p).await;
        assert!(matches!(r, Ok(Outcome::OutcomeUnknown { .. })), "{r:?}");
        assert_eq!(d.commands, vec![PowerCommand::Off]);
    }

    // ------------------------------------------ observing the cycle ----
    // Issue 23, item 5: `reboot --method cycle --verify` used to verify
    // "on" only; a BMC that accepted the cycle and did nothing passed.

    fn observed_cycle() -> Policy {
        Policy {
            observe_cycle: true,
            power_timeout: PowerTimeout::Wall(Duration::from_secs(5)),
            ..cycle()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_observed_cycle_is_seen_off_then_on() {
        let mut d = Scripted::new(&[Ok(On), Ok(On), Ok(Off), Ok(Off), Ok(On), Ok(On)]);
        let r = go(&mut d, Action::Reboot, &observed_cycle()).await;
        assert_eq!(r, Ok(Outcome::Cycled));
        assert_eq!(d.commands, vec![PowerCommand::Cycle]);
        // Seen off, never back: fenced, not restored.
        let mut d = Scripted::new(&[Ok(On), Ok(Off)]);
        d.then = Then::Repeat(Ok(Observed::Settled(Off)));
        let r = go(&mut d, Action::Reboot, &observed_cycle()).await;
        assert!(matches!(r, Ok(Outcome::FencedNotRestored { .. })), "{r:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_cycle_never_seen_off_is_not_observed() {
        // A BMC that accepts the cycle and does nothing: never a success,
        // and never a failed level the next one would cycle again.
        let mut d = Scripted::always(Ok(Observed::Settled(On)));
        let t = Instant::now();
        let r = go(&mut d, Action::Reboot, &observed_cycle()).await;
        assert!(
            matches!(
                &r,
                Ok(Outcome::OutcomeUnknown { command: PowerCommand::Cycle, reason })
                    if reason.contains("never seen off") && reason.contains("--method onoff")
            ),
            "{r:?}"
        );
        assert_eq!(t.elapsed(), Duration::from_secs(5), "the power timeout");
        assert_eq!(d.commands, vec![PowerCommand::Cycle]);
        // Unanswered and never seen off: unknown, not sent again.
        let mut d = Scripted::always(Ok(Observed::Settled(On)));
        d.command_refusal = Some(ErrorKind::OutcomeUnknown);
        let r = go(&mut d, Action::Reboot, &observed_cycle()).await;
        assert!(matches!(r, Ok(Outcome::OutcomeUnknown { .. })), "{r:?}");
        assert_eq!(d.commands, vec![PowerCommand::Cycle]);
        // Unanswered, then seen off and on: it happened.
        let mut d = Scripted::new(&[Ok(On), Ok(Off), Ok(On), Ok(On)]);
        d.command_refusal = Some(ErrorKind::OutcomeUnknown);
        let r = go(&mut d, Action::Reboot, &observed_cycle()).await;
        assert_eq!(r, Ok(Outcome::Cycled));
    }

    #[tokio::test(start_paused = true)]
    async fn a_method_blind_to_off_cannot_observe_a_cycle() {
        let mut d = Scripted::new(&[]);
        d.blind_off = true;
        let e = go(&mut d, Action::Reboot, &observed_cycle())
            .await
            .unwrap_err()
            .error;
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert!(e.message.contains("--method onoff"), "{e}");
        assert!(d.commands.is_empty());
    }

    const RIGHT: &str = "4c414230-0000-4001-8000-fe0000000001";
    const OTHER: &str = "4c414230-0000-4002-8000-fe0000000002";

    fn reports(uuid: &str, serial: Option<&str>) -> Identity {
        Identity {
            names: Vec::new(),
            uuid: vec![
                UuidForm {
                    uuid: "3042414c-0000-0140-8000-fe0000000001".into(),
                    encoding: "smbios",
                },
                UuidForm {
                    uuid: uuid.into(),
                    encoding: "rfc4122",
                },
            ],
            serial: serial.map(str::to_string),
        }
    }

    fn pinned(uuid: Option<&str>, serial: Option<&str>) -> Policy {
        Policy {
            expect: ExpectedIdentity::new(uuid, serial).unwrap(),
            ..native()
        }
    }

    async fn go_events(
        d: &mut Scripted,
        a: Action,
        p: &Policy,
    ) -> (Result<Outcome, Failure>, Vec<Event>) {
        let mut events = Vec::new();
        let mut sink = |s: &Stamped| events.push(s.event.clone());
        let r = run(d, a, p, &mut sink, Cancel::never()).await;
        (r, events)
    }

    #[tokio::test(start_paused = true)]
    async fn the_right_machine_is_fenced_after_its_identity_is_confirmed() {
        let mut d = Scripted::new(&[Ok(On), Ok(Off), Ok(Off)]);
        d.identity = Ok(reports(RIGHT, Some("LAB00001")));
        let p = pinned(Some(&RIGHT.to_uppercase()), Some("lab00001"));
        let (r, events) = go_events(&mut d, Action::Off, &p).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert_eq!(d.commands, vec![PowerCommand::Off]);
        let at = events
            .iter()
            .position(|e| matches!(e, Event::Identity { .. }))
            .expect("an identity event");
        let first_read = events
            .iter()
            .position(|e| matches!(e, Event::StateObserved { .. }))
            .unwrap();
        assert!(
            at < first_read,
            "identity before the first read: {events:?}"
        );
        match &events[at] {
            Event::Identity {
                matched, encoding, ..
            } => {
                assert!(matched);
                assert_eq!(*encoding, Some("rfc4122"), "the matching encoding is named");
            }
            _ => unreachable!(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_different_machine_is_refused_before_any_read_or_command() {
        for action in [
            Action::Off,
            Action::On,
            Action::Reboot,
            Action::Status,
            Action::Monitor,
            Action::Diag,
        ] {
            let mut d = Scripted::new(&[]);
            d.identity = Ok(reports(OTHER, Some("LAB00002")));
            let (r, events) = go_events(&mut d, action, &pinned(Some(RIGHT), None)).await;
            let f = r.unwrap_err();
            assert_eq!(f.error.kind, ErrorKind::IdentityMismatch, "{action}");
            assert_eq!(f.error.stage, Stage::Identity);
            assert_eq!(f.last_state, None);
            let text = f.error.to_string();
            assert!(
                text.contains(RIGHT)
                    && text.contains(OTHER)
                    && text.contains("rfc4122")
                    && text.contains("no power command was sent")
                    && text.ends_with("(during identity check)"),
                "{text}"
            );
            assert!(d.commands.is_empty(), "{action}: no command");
            assert!(d.closed, "{action}: session closed");
            assert!(events
                .iter()
                .any(|e| matches!(e, Event::Identity { matched: false, .. })));
            assert!(!events
                .iter()
                .any(|e| matches!(e, Event::StateObserved { .. })));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_serial_mismatch_is_a_different_machine_even_without_a_uuid() {
        let mut d = Scripted::new(&[]);
        d.identity = Ok(Identity {
            names: Vec::new(),
            uuid: vec![],
            serial: Some("LAB00002".into()),
        });
        let r = go(&mut d, Action::Off, &pinned(Some(RIGHT), Some("LAB00001")))
            .await
            .unwrap_err();
        assert_eq!(r.error.kind, ErrorKind::IdentityMismatch, "{}", r.error);
        assert!(r
            .error
            .message
            .contains("expected serial LAB00001, found LAB00002"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_device_that_cannot_report_is_refused_when_an_identity_is_expected() {
        let mut d = Scripted::new(&[]);
        let r = go(&mut d, Action::Off, &pinned(Some(RIGHT), None))
            .await
            .unwrap_err();
        assert_eq!(r.error.kind, ErrorKind::IdentityUnavailable);
        assert_eq!(r.error.stage, Stage::Identity);
        assert!(
            r.error.message.contains("does not report a system uuid"),
            "{}",
            r.error
        );
        assert!(d.commands.is_empty());

        let mut d = Scripted::new(&[]);
        d.identity = Err(ErrorKind::Unsupported);
        let r = go(&mut d, Action::Off, &pinned(Some(RIGHT), None))
            .await
            .unwrap_err();
        assert_eq!(r.error.kind, ErrorKind::IdentityUnavailable);
        assert_eq!(r.error.stage, Stage::Identity);
        assert!(
            r.error.message.contains("scripted identity error"),
            "{}",
            r.error
        );

        let mut d = Scripted::new(&[]);
        d.identity = Err(ErrorKind::Timeout);
        let r = go(&mut d, Action::Off, &pinned(Some(RIGHT), None))
            .await
            .unwrap_err();
        assert_eq!(
            r.error.kind,
            ErrorKind::Timeout,
            "a timeout stays a timeout"
        );
        assert_eq!(r.error.stage, Stage::Identity);
        assert!(d.commands.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn without_an_expected_identity_nothing_is_read() {
        let mut d = Scripted::new(&[Ok(On), Ok(On)]);
        d.identity = Ok(reports(OTHER, None));
        let r = go(&mut d, Action::Status, &native()).await;
        assert_eq!(r, Ok(Outcome::Status { state: On }));
        assert_eq!(d.identity_reads, 0);
    }

    // Timing, in virtual time: every figure below is exact.

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Intervals that stay whole milliseconds when grown by half: 64, 96,
    /// 144, 216, 324, 486, then the 500 ms cap.
    fn timed() -> Policy {
        Policy {
            poll_interval: ms(64),
            poll_interval_max: ms(500),
            power_timeout: PowerTimeout::Unlimited,
            step_timeout: Duration::from_secs(10),
            deadline: None,
            ..Policy::native()
        }
    }

    /// Runs `a` and returns the result, the virtual time it took (ms) and the events.
    async fn clocked(
        d: &mut Scripted,
        a: Action,
        p: &Policy,
        cancel: Cancel,
    ) -> (Result<Outcome, Failure>, u128, Vec<Event>) {
        let t0 = Instant::now();
        let mut events = Vec::new();
        let mut sink = |s: &Stamped| events.push(s.event.clone());
        let r = run(d, a, p, &mut sink, cancel).await;
        (r, t0.elapsed().as_millis(), events)
    }

    #[tokio::test(start_paused = true)]
    async fn polling_backs_off_by_half_again_up_to_the_maximum() {
        let mut d = Scripted::always(on());
        let p = Policy {
            power_timeout: PowerTimeout::Wall(Duration::from_secs(2)),
            ..timed()
        };
        let (r, took, _) = clocked(&mut d, Action::Off, &p, Cancel::never()).await;
        assert_eq!(r.unwrap_err().error.kind, ErrorKind::TransitionTimeout);
        // The first read, the command, then polls 64, 96, 144, 216, 324,
        // 486, 500, 500 ms apart; the first poll at or past 2 s ends it.
        assert_eq!(d.times(|c| matches!(c, Call::Command(_))), vec![0]);
        assert_eq!(
            d.read_times(),
            vec![0, 0, 64, 160, 304, 520, 844, 1330, 1830, 2330]
        );
        assert_eq!(took, 2330);
    }

    #[tokio::test(start_paused = true)]
    async fn confirmation_reads_are_spaced_by_the_base_interval() {
        // A flap breaks the streak; the grown interval carries on after it.
        let mut d = Scripted::new(&[Ok(On), Ok(On), Ok(On), Ok(Off), Ok(On), Ok(Off), Ok(Off)]);
        let (r, took, _) = clocked(&mut d, Action::Off, &timed(), Cancel::never()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert_eq!(d.read_times(), vec![0, 0, 64, 160, 224, 368, 432]);
        assert_eq!(took, 432);
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_ends_a_poll_that_never_settles_exactly_there() {
        let mut d = Scripted::always(on());
        let p = Policy {
            deadline: Some(Instant::now() + Duration::from_secs(1)),
            ..timed()
        };
        let (r, took, _) = clocked(&mut d, Action::Off, &p, Cancel::never()).await;
        let f = r.unwrap_err();
        assert_eq!(f.error.kind, ErrorKind::Timeout);
        assert_eq!(f.error.stage, Stage::Wait);
        assert_eq!(
            f.error.message,
            "the action's deadline passed after 1.0s; last state read: on"
        );
        assert_eq!(f.last_state, Some(On));
        // The next poll would have been at 1330 ms: the wait is cut at the
        // deadline, neither early nor late.
        assert_eq!(d.read_times(), vec![0, 0, 64, 160, 304, 520, 844]);
        assert_eq!(took, 1000);
        assert!(d.closed);
    }

    #[tokio::test(start_paused = true)]
    async fn power_wait_is_slept_before_the_first_poll() {
        let mut d = Scripted::new(&[Ok(On), Ok(Off), Ok(Off)]);
        let p = Policy {
            power_wait: Duration::from_secs(3),
            ..timed()
        };
        let (r, took, events) = clocked(&mut d, Action::Off, &p, Cancel::never()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        assert_eq!(d.read_times(), vec![0, 3000, 3064]);
        assert_eq!(took, 3064);
        assert!(events.contains(&Event::Waiting {
            ms: 3000,
            target: Off
        }));
        // A power_wait longer than the time left ends at the deadline,
        // without a poll.
        let mut d = Scripted::new(&[Ok(On)]);
        let p = Policy {
            deadline: Some(Instant::now() + Duration::from_secs(2)),
            ..p
        };
        let (r, took, _) = clocked(&mut d, Action::Off, &p, Cancel::never()).await;
        assert_eq!(r.unwrap_err().error.kind, ErrorKind::Timeout);
        assert_eq!(d.read_times(), vec![0]);
        assert_eq!(took, 2000);
        // After a power cycle (nothing to poll), the wait is the whole answer.
        let mut d = Scripted::new(&[Ok(On)]);
        let p = Policy {
            power_wait: Duration::from_secs(3),
            method: RebootMethod::Cycle,
            ..timed()
        };
        let (r, took, _) = clocked(&mut d, Action::Reboot, &p, Cancel::never()).await;
        assert_eq!(r, Ok(Outcome::CycleSent));
        assert_eq!(took, 3000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_transition_is_waited_through_within_the_deadline() {
        let mut d = Scripted::observing(&[
            moving(PoweringOff),
            moving(PoweringOff),
            moving(PoweringOff),
            off(),
            on(),
            on(),
        ]);
        let p = Policy {
            deadline: Some(Instant::now() + Duration::from_secs(5)),
            ..timed()
        };
        let (r, took, _) = clocked(&mut d, Action::On, &p, Cancel::never()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: On }));
        // Waited through with the same back-off, then one power-on.
        assert_eq!(d.read_times(), vec![0, 64, 160, 304, 304, 368]);
        assert_eq!(
            d.times(|c| matches!(c, Call::Command(_))),
            vec![304],
            "the power-on goes once the power-off has ended"
        );
        assert_eq!(took, 368);
    }

    #[tokio::test(start_paused = true)]
    async fn a_transition_that_outlasts_its_budget_or_the_deadline_fails_on_time() {
        // The power timeout (wall clock) ends it at the first read past it.
        let mut d = Scripted::always(moving(PoweringOff));
        let p = Policy {
            power_timeout: PowerTimeout::Wall(ms(500)),
            deadline: Some(Instant::now() + Duration::from_secs(5)),
            ..timed()
        };
        let (r, took, _) = clocked(&mut d, Action::On, &p, Cancel::never()).await;
        let f = r.unwrap_err();
        assert_eq!(f.error.kind, ErrorKind::TransitionTimeout);
        assert!(
            f.error.message.contains("powering off after 0.5s"),
            "{}",
            f.error
        );
        assert_eq!(d.read_times(), vec![0, 64, 160, 304, 520]);
        assert_eq!(took, 520);
        assert!(d.commands.is_empty());
        // Without one, the deadline ends it, naming the transition.
        let mut d = Scripted::always(moving(PoweringOff));
        let p = Policy {
            deadline: Some(Instant::now() + Duration::from_secs(1)),
            ..timed()
        };
        let (r, took, _) = clocked(&mut d, Action::On, &p, Cancel::never()).await;
        let f = r.unwrap_err();
        assert_eq!(f.error.kind, ErrorKind::Timeout);
        assert_eq!(
            f.error.message,
            "the action's deadline passed after 1.0s; last reading: powering off, a \
             transition under way"
        );
        assert_eq!(took, 1000);
        assert!(d.commands.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_connect_is_retried_with_back_off_until_the_deadline() {
        let mut d = Scripted::always(on());
        d.connect_refusal = Some(ErrorKind::Busy);
        let p = Policy {
            deadline: Some(Instant::now() + Duration::from_secs(3)),
            ..timed()
        };
        let (r, took, events) = clocked(&mut d, Action::Status, &p, Cancel::never()).await;
        let f = r.unwrap_err();
        assert_eq!(
            f.error.kind,
            ErrorKind::Busy,
            "the device's own answer is kept"
        );
        // 250, 500, 1000 ms apart; the next pause (2 s) would end past the deadline.
        assert_eq!(d.times(|c| *c == Call::Connect), vec![0, 250, 750, 1750]);
        assert_eq!(took, 1750);
        let retries = events.iter().filter(|e| matches!(e, Event::Retry { .. }));
        assert_eq!(retries.count(), 3);
        // A device that becomes free is used.
        let mut d = Scripted::new(&[Ok(On)]);
        d.connect_errors = [ErrorKind::Busy, ErrorKind::Busy].into();
        let (r, took, _) = clocked(&mut d, Action::Status, &p, Cancel::never()).await;
        assert_eq!(r, Ok(Outcome::Status { state: On }));
        assert_eq!(took, 750);
        // An authentication failure is not transient: no retry.
        let mut d = Scripted::new(&[]);
        d.connect_refusal = Some(ErrorKind::PasswordInvalid);
        let (r, took, _) = clocked(&mut d, Action::Status, &p, Cancel::never()).await;
        assert_eq!(r.unwrap_err().error.kind, ErrorKind::PasswordInvalid);
        assert_eq!((d.calls.len(), took), (1, 0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_set_up_the_device_partly_answered_starts_again_within_the_deadline() {
        // A fresh 25 s action deadline for each case (virtual time moves on).
        let p = || Policy {
            deadline: Some(Instant::now() + Duration::from_secs(25)),
            ..timed()
        };
        let connects = |d: &Scripted| d.times(|c| *c == Call::Connect);
        // A set-up lost to the path, cut at the 10 s login timeout, then
        // after a 250 ms pause one that completes.
        let mut d = Scripted::new(&[Ok(On)]);
        d.connect_errors = [ErrorKind::Timeout].into();
        d.answered = true;
        let (r, took, events) = clocked(&mut d, Action::Status, &p(), Cancel::never()).await;
        assert_eq!(r, Ok(Outcome::Status { state: On }));
        assert_eq!(connects(&d), vec![0, 10_250]);
        assert_eq!(took, 10_250);
        let retries: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Retry { reason, .. } => Some(reason.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(retries.len(), 1);
        assert!(
            retries[0].ends_with("the device answered part of the set-up: starting a new one"),
            "{retries:?}"
        );
        // Once only (a fleet node's next level shares the deadline): the
        // second set-up's timeout is the failure, 4.75 s before the deadline.
        let mut d = Scripted::new(&[]);
        d.connect_refusal = Some(ErrorKind::Timeout);
        d.answered = true;
        let (r, took, _) = clocked(&mut d, Action::Status, &p(), Cancel::never()).await;
        let f = r.unwrap_err();
        assert_eq!(
            (f.error.kind, f.error.stage),
            (ErrorKind::Timeout, Stage::Authenticate)
        );
        assert_eq!(connects(&d), vec![0, 10_250]);
        assert_eq!(took, 20_250);
        // The new set-up is cut at the action's deadline.
        let mut d = Scripted::new(&[]);
        d.connect_refusal = Some(ErrorKind::Timeout);
        d.answered = true;
        let q = Policy {
            deadline: Some(Instant::now() + Duration::from_secs(15)),
            ..timed()
        };
        let (r, took, _) = clocked(&mut d, Action::Status, &q, Cancel::never()).await;
        assert_eq!(r.unwrap_err().error.kind, ErrorKind::Timeout);
        assert_eq!((connects(&d), took), (vec![0, 10_250], 15_000));
        // A device that answered nothing fails at the login timeout (the
        // next level's turn), and so does any set-up without an action
        // deadline (the agents under Pacemaker's disable_timeout).
        for (answered, with_deadline) in [(false, true), (true, false)] {
            let mut d = Scripted::new(&[]);
            d.connect_refusal = Some(ErrorKind::Timeout);
            d.answered = answered;
            let mut q = p();
            if !with_deadline {
                q.deadline = None;
            }
            let (r, took, _) = clocked(&mut d, Action::Status, &q, Cancel::never()).await;
            assert_eq!(r.unwrap_err().error.kind, ErrorKind::Timeout);
            assert_eq!(
                (connects(&d), took),
                (vec![0], 10_000),
                "answered {answered}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn transient_poll_errors_are_missed_polls_until_the_deadline() {
        let mut d = Scripted::new(&[Ok(On)]);
        d.then = Then::Repeat(Err(ErrorKind::Timeout));
        let p = Policy {
            deadline: Some(Instant::now() + Duration::from_secs(1)),
            ..timed()
        };
        let (r, took, events) = clocked(&mut d, Action::Off, &p, Cancel::never()).await;
        let f = r.unwrap_err();
        assert_eq!(f.error.kind, ErrorKind::Timeout);
        assert!(f
            .error
            .message
            .starts_with("the action's deadline passed after 1.0s"));
        assert_eq!(d.read_times(), vec![0, 0, 64, 160, 304, 520, 844]);
        assert_eq!(took, 1000);
        let retries = events.iter().filter(|e| matches!(e, Event::Retry { .. }));
        assert_eq!(retries.count(), 6, "each missed poll is reported");
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_deadline_a_session_that_stops_answering_fails_after_one_step() {
        // Pacemaker's disable_timeout: no action deadline, the wait for the
        // power state unlimited, 10 s per step. The node never goes off and,
        // after the command, no read is answered: misses are tolerated for
        // one step (10 s from the first), then the action fails with the
        // read's own error instead of polling forever.
        let mut d = Scripted::new(&[Ok(On)]);
        d.then = Then::Repeat(Err(ErrorKind::Timeout));
        let (r, took, events) = clocked(&mut d, Action::Off, &timed(), Cancel::never()).await;
        let f = r.unwrap_err();
        assert_eq!(
            (f.error.kind, f.error.stage, f.last_state),
            (ErrorKind::Timeout, Stage::Status, Some(On))
        );
        assert_eq!(
            f.error.message,
            "scripted error; no status read was answered for 10.3s"
        );
        // Reads 64, 96, 144, 216, 324, 486, then 500 ms apart.
        let reads = d.read_times();
        assert_eq!(&reads[..8], &[0, 0, 64, 160, 304, 520, 844, 1330]);
        assert_eq!(*reads.last().unwrap(), 10_330);
        assert_eq!(took, 10_330);
        let retries = events.iter().filter(|e| matches!(e, Event::Retry { .. }));
        assert_eq!(retries.count(), reads.len() - 2, "every miss but the last");
        // A read answered in between starts the count again: a device that
        // answers now and then is waited for (the power wait is unlimited).
        let mut script = vec![Ok(On)];
        for _ in 0..3 {
            script.extend(std::iter::repeat_n(Err(ErrorKind::Timeout), 15));
            script.push(Ok(On));
        }
        script.extend([Ok(Off), Ok(Off)]);
        let mut d = Scripted::new(&script);
        let (r, took, _) = clocked(&mut d, Action::Off, &timed(), Cancel::never()).await;
        assert_eq!(r, Ok(Outcome::Reached { state: Off }));
        // 22.4 s of mostly missed reads, never 10 s of them in a row.
        assert_eq!(took, 22_394);
        // With an action deadline the misses last until the deadline, as
        // before (the next test).
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_command_is_read_again_and_retried_until_the_deadline() {
        let mut d = Scripted::always(on());
        d.command_refusal = Some(ErrorKind::Busy);
        let p = Policy {
            deadline: Some(Instant::now() + Duration::from_secs(3)),
            ..timed()
        };
        let (r, took, _) = clocked(&mut d, Action::Off, &p, Cancel::never()).await;
        assert_eq!(r.unwrap_err().error.kind, ErrorKind::Busy);
        // Each refusal: a read, then a pause of 200, 400, 800 ms; the next
        // (1.6 s) would reach the deadline.
        assert_eq!(
            d.times(|c| matches!(c, Call::Command(_))),
            vec![0, 200, 600, 1400]
        );
        assert_eq!(d.read_times(), vec![0, 0, 200, 600]);
        assert_eq!(took, 1400);
        // Without an action deadline and with the wait for the power state
        // unlimited (Pacemaker's disable_timeout) the retries still end at
        // the step bound: refusals at 0, 0.2, 0.6, 1.4, 3, 5, 7, 9 s; the
        // next pause (2 s) would reach the 10 s step.
        let mut d = Scripted::always(on());
        d.command_refusal = Some(ErrorKind::Busy);
        let p = timed();
        assert_eq!(p.power_timeout, PowerTimeout::Unlimited);
        let (r, took, _) = clocked(&mut d, Action::Off, &p, Cancel::never()).await;
        assert_eq!(r.unwrap_err().error.kind, ErrorKind::Busy);
        assert_eq!(d.commands.len(), 8);
        assert_eq!(took, 200 + 400 + 800 + 1600 + 3 * 2000);
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_ends_a_wait_at_once_and_closes_the_session() {
        let p = timed();
        // While polling a node that never goes off, with no deadline at all.
        let mut d = Scripted::always(on());
        let (handle, cancel) = Cancel::new();
        let (out, _) = tokio::join!(clocked(&mut d, Action::Off, &p, cancel), async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            handle.cancel();
        });
        let (r, took, _) = out;
        let f = r.unwrap_err();
        assert_eq!(f.error.kind, ErrorKind::Interrupted);
        assert_eq!(f.error.stage, Stage::Wait);
        assert_eq!(f.last_state, Some(On));
        assert_eq!(took, 5000);
        assert!(d.closed);
        // While a read hangs: nothing is sent.
        let mut d = Scripted::observing(&[]);
        d.then = Then::Hang;
        let (handle, cancel) = Cancel::new();
        let (out, _) = tokio::join!(clocked(&mut d, Action::Off, &p, cancel), async {
            tokio::time::sleep(Duration::from_secs(7)).await;
            handle.cancel();
        });
        let (r, took, _) = out;
        let f = r.unwrap_err();
        assert_eq!(
            (f.error.kind, f.error.stage),
            (ErrorKind::Interrupted, Stage::Status)
        );
        assert_eq!(took, 7000);
        assert!(d.commands.is_empty() && d.closed);
        // While a busy connect backs off.
        let mut d = Scripted::always(on());
        d.connect_refusal = Some(ErrorKind::Busy);
        let (handle, cancel) = Cancel::new();
        let (out, _) = tokio::join!(clocked(&mut d, Action::Off, &p, cancel), async {
            tokio::time::sleep(ms(900)).await;
            handle.cancel();
        });
        let (r, took, _) = out;
        assert_eq!(r.unwrap_err().error.kind, ErrorKind::Interrupted);
        assert_eq!(took, 900);
        assert_eq!(d.times(|c| *c == Call::Connect), vec![0, 250, 750]);
    }
}
