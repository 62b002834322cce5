//! The run's reading side: one status read and the reads while waiting
//! (missed reads, the power timeout's budget, waiting through a
//! transition, polling until a state is confirmed `confirm` times in a
//! row). It decides nothing about commands: sending, and what to do with
//! what was read, stay with the state machine in [`super`].

use super::Machine;
use crate::engine::clock::Instant;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::event::Event;
use crate::engine::policy::PowerTimeout;
use crate::engine::power::{Observed, PowerState, Transition};
use std::time::Duration;

/// The next poll interval: half as long again, at most `max` (exact
/// integer arithmetic, so virtual-time tests see whole numbers).
fn grow(interval: Duration, max: Duration) -> Duration {
    (interval * 3 / 2).min(max)
}

impl<D: PowerDriver> Machine<'_, D> {
    /// One status read, recorded: a settled state or a transition.
    pub(super) async fn read(&mut self) -> Result<Observed, DriverError> {
        let deadline = Some(self.policy.step_deadline());
        let fut = self.driver.observe(deadline);
        let mut cancel = self.cancel.clone();
        let observed = tokio::select! {
            r = fut => r?,
            _ = cancel.cancelled() => return Err(DriverError::new(
                ErrorKind::Interrupted, Stage::Status, "stopped by a signal")),
        };
        self.unanswered_since = None;
        match observed {
            Observed::Settled(state) => {
                self.last_state = Some(state);
                self.last_transition = None;
                self.settled_reads += 1;
                self.emit(Event::StateObserved { state });
            }
            Observed::InTransition(transition) => {
                self.last_transition = Some(transition);
                self.emit(Event::TransitionObserved { transition });
            }
        }
        Ok(observed)
    }

    /// A read while waiting: an error that is transient and leaves time is
    /// a missed read (`None`), not the end of the action. Without an action
    /// deadline (the agents; under `disable_timeout` the wait for the power
    /// state has no end at all) the misses are bounded too: a device that
    /// has answered no read for a whole step bound fails the action, so an
    /// established session that stops answering is never polled forever.
    pub(super) async fn poll_read(&mut self) -> Result<Option<Observed>, DriverError> {
        let began = Instant::now();
        match self.read().await {
            Ok(o) => Ok(Some(o)),
            Err(e) if e.kind.is_transient() && !self.overall_passed() => {
                let since = *self.unanswered_since.get_or_insert(began);
                let silent = since.elapsed();
                if self.policy.deadline.is_none() && silent >= self.policy.step_timeout {
                    let message = format!(
                        "{}; no status read was answered for {:.1}s",
                        e.message,
                        silent.as_secs_f64()
                    );
                    return Err(DriverError { message, ..e });
                }
                self.emit(Event::Retry {
                    stage: Stage::Status,
                    reason: e.message,
                });
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// True when the power timeout counted from `began` after `polls` reads is used up.
    pub(super) fn transition_budget_spent(&self, began: Instant, polls: u32) -> bool {
        match self.policy.power_timeout {
            PowerTimeout::Polls(n) => n > 0 && polls >= n,
            PowerTimeout::Wall(d) => began.elapsed() >= d,
            PowerTimeout::Unlimited => false,
        }
    }

    /// Reads again while the device reports `seen` (a transition), until a
    /// settled state is read (returned) or the power timeout passes
    /// (`TransitionTimeout` naming the transition).
    pub(super) async fn wait_settled(
        &mut self,
        mut seen: Transition,
    ) -> Result<PowerState, DriverError> {
        let began = Instant::now();
        let mut interval = self.policy.poll_interval;
        let mut polls: u32 = 0;
        loop {
            if self.transition_budget_spent(began, polls) {
                return Err(DriverError::new(
                    ErrorKind::TransitionTimeout,
                    Stage::Wait,
                    format!(
                        "the BMC still reports the node {seen} after {:.1}s; it never settled \
                         on or off",
                        began.elapsed().as_secs_f64()
                    ),
                ));
            }
            self.sleep(interval, Stage::Wait).await?;
            interval = grow(interval, self.policy.poll_interval_max);
            polls += 1;
            match self.poll_read().await? {
                Some(Observed::Settled(s)) => return Ok(s),
                Some(Observed::InTransition(t)) => seen = t,
                None => {}
            }
        }
    }

    /// Confirms that `target` holds, reading until `confirm` consecutive reads agree.
    /// Returns Ok(false) as soon as a read disagrees.
    pub(super) async fn confirm_already(
        &mut self,
        target: PowerState,
    ) -> Result<bool, DriverError> {
        for _ in 1..self.policy.confirm {
            self.sleep(self.policy.poll_interval, Stage::Status).await?;
            if self.read().await? != Observed::Settled(target) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Polls until `target` is confirmed (true) or the power timeout passes
    /// (false). A transition is not the target: it breaks a streak.
    pub(super) async fn poll_until(&mut self, target: PowerState) -> Result<bool, DriverError> {
        let began = Instant::now();
        let mut interval = self.policy.poll_interval;
        let mut polls: u32 = 0;
        let mut streak: u32 = 0;
        loop {
            polls += 1;
            match self.poll_read().await? {
                Some(Observed::Settled(s)) if s == target => streak += 1,
                // Another state, a transition, or a missed read.
                _ => streak = 0,
            }
            if streak >= self.policy.confirm.max(1) {
                return Ok(true);
            }
            if streak == 0 && self.transition_budget_spent(began, polls) {
                return Ok(false);
            }
            if streak == 0 {
                self.sleep(interval, Stage::Wait).await?;
                interval = grow(interval, self.policy.poll_interval_max);
            } else {
                // Confirmation reads are spaced by the base interval.
                self.sleep(self.policy.poll_interval, Stage::Wait).await?;
            }
        }
    }

    pub(super) fn transition_timeout(&self, target: PowerState) -> DriverError {
        let word = match target {
            PowerState::On => "ON",
            PowerState::Off => "OFF",
        };
        let mut last = match (self.last_transition, self.last_state) {
            (Some(t), _) => format!(" (last reading: {t}, a transition under way)"),
            (None, Some(s)) => format!(" (last state read: {s})"),
            (None, None) => String::new(),
        };
        if let Some(detail) = self.driver.state_detail() {
            last.push_str(&format!("; {detail}"));
        }
        DriverError::new(
            ErrorKind::TransitionTimeout,
            Stage::Wait,
            format!("timed out waiting to power {word}{last}"),
        )
    }
}
