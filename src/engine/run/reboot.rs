//! `reboot` as a sequence of steps: on/off (the off half is `off` itself,
//! then the power-on, whose failure no longer undoes the fencing) and one
//! power cycle (sent again only after a refusal, observed through with
//! `--verify`). The single actions they are made of — send, set, poll —
//! belong to the state machine in [`super`] and its reading side.

use super::{Machine, Outcome, Sent};
use crate::engine::clock::Instant;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::policy::Mode;
use crate::engine::power::{Observed, PowerCommand, PowerState};
use std::time::Duration;

impl<D: PowerDriver> Machine<'_, D> {
    pub(super) async fn reboot_onoff(&mut self) -> Result<Outcome, DriverError> {
        if !self.driver.observes_off() {
            // Off cannot be observed, so on can never follow a confirmed off.
            return self.off_unobservable().await;
        }
        // The off half is `off` itself: transitions, refusals and devices
        // that hide transitions are handled the same way. An off whose
        // outcome is unknown is not followed by an on.
        if let o @ Outcome::OutcomeUnknown { .. } = self.ensure(PowerState::Off, 1).await? {
            return Ok(o);
        }
        // The node is fenced now. Power-on failures no longer undo that.
        let attempts = match self.policy.mode {
            // fence-agents: set_power(on, retry_on) — retry_on=0 means no attempt.
            Mode::Agent => self.policy.retry_on,
            Mode::Native => 1 + self.policy.retry_on,
        };
        if attempts == 0 {
            return Ok(Outcome::FencedNotRestored {
                error: "no power-on attempt (retry_on is 0)".into(),
            });
        }
        match self.set_power(PowerState::On, attempts).await {
            Ok(Outcome::OutcomeUnknown { reason, .. }) => Ok(Outcome::FencedNotRestored {
                error: format!(
                    "the power-on got no answer and its outcome is unknown ({reason}); it was \
                     not sent again"
                ),
            }),
            Ok(_) => Ok(Outcome::Rebooted),
            Err(e) if e.kind == ErrorKind::Interrupted => Err(e),
            Err(e) => Ok(Outcome::FencedNotRestored {
                error: e.to_string(),
            }),
        }
    }

    /// `reboot --method cycle`: one power cycle, from a settled state. The
    /// cycle is sent again only after the device answered that it did not
    /// carry it out (a refusal); never after silence ([`Sent::Unknown`]):
    /// a cycle that already finished reads on, like one never sent.
    pub(super) async fn reboot_cycle(&mut self) -> Result<Outcome, DriverError> {
        if self.policy.observe_cycle && !self.driver.observes_off() {
            return Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Command,
                "this method cannot observe the node off, so a power cycle through it cannot be \
                 verified; use --method onoff",
            ));
        }
        let first = match self.read().await? {
            Observed::Settled(s) => s,
            Observed::InTransition(t) => self.wait_settled(t).await?,
        };
        let mut last_err = None;
        for _ in 0..(1 + self.policy.retry_on) {
            match self.send(PowerCommand::Cycle, None).await {
                Ok(Sent::Accepted) => return self.after_cycle(first, None).await,
                Ok(Sent::Unknown(why)) => return self.after_cycle(first, Some(why)).await,
                Ok(Sent::Declined) => {
                    // Quirk (fence-agents#596, bmclib#223): cycle on an off
                    // chassis answers D5h. Read again; if off, power it on.
                    if self.read().await? == Observed::Settled(PowerState::Off) {
                        return match self
                            .set_power(PowerState::On, 1 + self.policy.retry_on)
                            .await?
                        {
                            Outcome::OutcomeUnknown { command, reason } => {
                                Ok(Outcome::OutcomeUnknown { command, reason })
                            }
                            _ => Ok(Outcome::Rebooted),
                        };
                    }
                    last_err = Some(DriverError::new(
                        ErrorKind::DeviceError,
                        Stage::Command,
                        format!("the BMC declined the power cycle while the node is {first}"),
                    ));
                }
                Err(e) if e.kind == ErrorKind::Interrupted => return Err(e),
                // An answered refusal: not carried out, so it may go again.
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| {
            DriverError::new(ErrorKind::DeviceError, Stage::Command, "power cycle failed")
        }))
    }

    /// After the cycle command: with `observe_cycle`, poll through the cycle
    /// (the node off, then on, confirmed); else one read when its answer
    /// never came (off: the cycle is under way) and "sent". `unanswered`:
    /// the driver's words when no answer came.
    pub(super) async fn after_cycle(
        &mut self,
        first: PowerState,
        unanswered: Option<String>,
    ) -> Result<Outcome, DriverError> {
        let unknown = |reason: String| Outcome::OutcomeUnknown {
            command: PowerCommand::Cycle,
            reason,
        };
        if !self.policy.observe_cycle {
            let Some(why) = unanswered else {
                self.sleep(self.policy.power_wait, Stage::Wait).await?;
                return Ok(Outcome::CycleSent);
            };
            return Ok(match self.poll_read().await {
                Ok(Some(Observed::Settled(PowerState::Off))) if first == PowerState::On => {
                    Outcome::CycleSent
                }
                Err(e) if e.kind == ErrorKind::Interrupted => return Err(e),
                _ => unknown(format!(
                    "{why}; the node does not read off since, so whether the BMC carried out \
                     the cycle is not known"
                )),
            });
        }
        // Observed: the node must be seen off (a cycle holds it off for at
        // least a second), then on.
        let began = Instant::now();
        let seen_off = self.poll_for_off(began).await;
        match (seen_off, unanswered) {
            (Err(e), _) if e.kind == ErrorKind::Interrupted => return Err(e),
            (Ok(true), _) => {}
            (Ok(false) | Err(_), Some(why)) => {
                return Ok(unknown(format!(
                    "{why}; the node was not seen off within {:.1}s, so whether the BMC \
                     carried out the cycle is not known",
                    began.elapsed().as_secs_f64()
                )))
            }
            (Err(e), None) => return Err(e),
            // Accepted, never seen off: ignored, or too quick to see. Not a
            // failed level either (the next level would cycle the node
            // again): its outcome is unknown.
            (Ok(false), None) => {
                return Ok(unknown(format!(
                    "the BMC accepted the power cycle, but the node was never seen off within \
                     {:.1}s (a cycle holds it off for at least a second): the cycle was not \
                     observed; --method onoff observes each step",
                    began.elapsed().as_secs_f64()
                )))
            }
        }
        if self.poll_until(PowerState::On).await? {
            return Ok(Outcome::Cycled);
        }
        Ok(Outcome::FencedNotRestored {
            error: format!(
                "the node was seen off during the power cycle, but did not come back on: {}",
                self.transition_timeout(PowerState::On)
            ),
        })
    }

    /// Polls, at the base interval (a cycle's off may last only a second),
    /// until the node reads off (true) or the power timeout counted from
    /// `began` passes (false).
    pub(super) async fn poll_for_off(&mut self, began: Instant) -> Result<bool, DriverError> {
        let mut polls: u32 = 0;
        let interval = self.policy.poll_interval.min(Duration::from_millis(250));
        loop {
            polls += 1;
            if let Some(Observed::Settled(PowerState::Off)) = self.poll_read().await? {
                return Ok(true);
            }
            if self.transition_budget_spent(began, polls) {
                return Ok(false);
            }
            self.sleep(interval, Stage::Wait).await?;
        }
    }
}
