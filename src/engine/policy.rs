//! Timing and confirmation rules for one action.
//!
//! Native mode and agent mode differ only in these numbers and in how a
//! reboot whose power-on failed is reported; the state machine is the same.
//! The expected identity of the target rides along, since it too is a
//! rule for one action on one target.

use super::clock::{self, Instant};
use super::identity::ExpectedIdentity;
use super::power::{Action, RebootMethod};
use std::time::Duration;

/// The longest step bound [`Policy::step_end`] adds to now (about ten years).
const MAX_STEP: Duration = Duration::from_secs(10 * 365 * 86_400);

/// `d × n`, saturating instead of overflowing.
fn times(d: Duration, n: u32) -> Duration {
    d.checked_mul(n).unwrap_or(Duration::MAX)
}

/// How long to wait for a power transition to be observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerTimeout {
    /// Give up after this many status polls (fence-agents counts polls, not seconds).
    Polls(u32),
    /// Give up when this much time has passed since the command was sent.
    Wall(Duration),
    /// Poll until the overall deadline, or without limit when there is none
    /// (Pacemaker's `disable_timeout`). Only this wait is lifted: every step
    /// that talks to the device (session set-up, each request) keeps
    /// [`Policy::step_timeout`], and a device that answers no read for a
    /// whole step while this wait has no end fails the action.
    Unlimited,
}

/// Who asked, which decides how a half-successful reboot is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `fencekit …`: success means every step was observed.
    Native,
    /// `fence_*`: upstream's contract (a reboot whose off was confirmed succeeds
    /// even when the power-on could not be confirmed).
    Agent,
}

/// Timing, confirmation and retry rules for one action on one target.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Native or agent semantics.
    pub mode: Mode,
    /// Sleep after every power command before the first status poll.
    pub power_wait: Duration,
    /// How long a transition may take to be observed.
    pub power_timeout: PowerTimeout,
    /// Time between status polls while waiting for a transition. After
    /// each poll that does not read the target the interval grows by half
    /// (×1.5, 64 ms → 96 → 144 …) up to `poll_interval_max`; reads that
    /// confirm a state already seen are spaced by `poll_interval` itself.
    pub poll_interval: Duration,
    /// Upper bound the poll interval grows to (equal to `poll_interval` for a fixed interval).
    pub poll_interval_max: Duration,
    /// Consecutive reads of the target state needed to call it observed.
    pub confirm: u32,
    /// Extra attempts of the power-on command.
    pub retry_on: u32,
    /// How `reboot` is done.
    pub method: RebootMethod,
    /// `reboot --method cycle`: poll through the cycle and observe the node
    /// off, then on (`--verify`), instead of reporting it sent.
    pub observe_cycle: bool,
    /// Bound on each step that talks to the device (session set-up, one
    /// request, the wait for the per-BMC lock). Always set: reaching the
    /// device is bounded in every mode, `disable_timeout` included.
    pub step_timeout: Duration,
    /// The whole action must end by then, on the engine's clock
    /// ([`clock::Instant`], tokio's; a std deadline converts with
    /// [`clock::from_std`]).
    pub deadline: Option<Instant>,
    /// Who the machine must be: when not empty, the identity is read right
    /// after the session opens and the action is refused, before any
    /// status read or power command, unless it matches.
    pub expect: ExpectedIdentity,
}

impl Policy {
    /// Native defaults: no blind sleep, fast polling with back-off, two
    /// consecutive reads to confirm, 20 s per transition, 60 s in all.
    pub fn native() -> Self {
        Policy {
            mode: Mode::Native,
            power_wait: Duration::ZERO,
            power_timeout: PowerTimeout::Wall(Duration::from_secs(20)),
            poll_interval: Duration::from_millis(25),
            poll_interval_max: Duration::from_secs(1),
            confirm: 2,
            retry_on: 1,
            method: RebootMethod::OnOff,
            observe_cycle: false,
            step_timeout: Duration::from_secs(10),
            deadline: Some(Instant::now() + Duration::from_secs(60)),
            expect: ExpectedIdentity::default(),
        }
    }

    /// fence-agents defaults (power_wait is the agent's own, set by the caller).
    pub fn agent() -> Self {
        Policy {
            mode: Mode::Agent,
            power_wait: Duration::ZERO,
            power_timeout: PowerTimeout::Polls(20),
            poll_interval: Duration::from_secs(1),
            poll_interval_max: Duration::from_secs(1),
            confirm: 1,
            retry_on: 1,
            method: RebootMethod::OnOff,
            observe_cycle: false,
            step_timeout: Duration::from_secs(20),
            deadline: None,
            expect: ExpectedIdentity::default(),
        }
    }

    /// The end of one step starting now, on the engine's clock: the step
    /// bound, cut by the overall deadline.
    pub fn step_end(&self) -> Instant {
        // A bound too large to add (years) is cut to one that is not.
        let step = Instant::now()
            .checked_add(self.step_timeout)
            .unwrap_or_else(|| Instant::now() + MAX_STEP);
        match self.deadline {
            Some(d) => step.min(d),
            None => step,
        }
    }

    /// How long one `action` can take under this policy when the device
    /// answers each request but is as slow as the options allow: the
    /// session set-up uses its whole [`step_timeout`](Self::step_timeout)
    /// (the login bound), and so does the identity pin when an identity is
    /// expected; every power command is followed by `power_wait` and by a
    /// transition wait that lasts the whole power timeout (for
    /// fence-agents' count of polls: that many poll intervals); the
    /// power-on of a reboot or `on` is tried as often as `retry_on` allows.
    /// `None` when the wait for the power state has no bound
    /// ([`PowerTimeout::Unlimited`]); the overall deadline, when there is
    /// one, caps the result. A device that stops answering is bounded by
    /// the step bounds instead, and fails sooner.
    ///
    /// This is the one formula for "how long may this take": the agent
    /// front logs it, and the configuration doctor compares a cluster's
    /// timeouts with it.
    pub fn worst_case(&self, action: Action) -> Option<Duration> {
        let step = self.step_timeout.min(MAX_STEP);
        let transition = match self.power_timeout {
            PowerTimeout::Polls(n) => Some(times(
                self.poll_interval_max.max(self.poll_interval),
                n.max(1),
            )),
            PowerTimeout::Wall(d) => Some(d.min(MAX_STEP)),
            PowerTimeout::Unlimited => None,
        };
        // One power command: the blind wait, then the transition observed.
        let command = transition.map(|t| self.power_wait.min(MAX_STEP).saturating_add(t));
        let on_attempts = |agent_style: bool| match self.mode {
            Mode::Agent if agent_style => self.retry_on,
            _ => self.retry_on.saturating_add(1),
        };
        let pin = if self.expect.is_empty() {
            Duration::ZERO
        } else {
            step
        };
        let opening = step.saturating_add(pin);
        let body = match action {
            Action::Status | Action::Monitor | Action::Diag => Duration::ZERO,
            Action::Off => command?,
            Action::On => times(command?, on_attempts(false)),
            Action::Reboot => match self.method {
                RebootMethod::OnOff => command?.saturating_add(times(command?, on_attempts(true))),
                RebootMethod::Cycle => {
                    times(command?, self.retry_on.saturating_add(1)).saturating_add(transition?)
                }
            },
        };
        let total = opening.saturating_add(body);
        Some(match self.deadline {
            Some(d) => total.min(d.saturating_duration_since(Instant::now())),
            None => total,
        })
    }

    /// [`step_end`](Self::step_end) as the std instant drivers, sockets and
    /// the lock take.
    pub fn step_deadline(&self) -> std::time::Instant {
        clock::to_std(self.step_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(power_timeout: u32, power_wait: u64, retry_on: u32) -> Policy {
        let mut p = Policy::agent();
        p.power_timeout = PowerTimeout::Polls(power_timeout);
        p.power_wait = Duration::from_secs(power_wait);
        p.retry_on = retry_on;
        p
    }

    #[test]
    fn the_worst_case_counts_login_waits_and_attempts() {
        // fence_ipmilan's defaults: 20 s login bound, 20 polls 1 s apart, no wait.
        let p = agent(20, 0, 1);
        let s = |n: u64| Some(Duration::from_secs(n));
        assert_eq!(p.worst_case(Action::Monitor), s(20));
        assert_eq!(p.worst_case(Action::Off), s(20 + 20));
        // reboot: the off, then one power-on attempt
        assert_eq!(p.worst_case(Action::Reboot), s(20 + 20 + 20));
        // power_wait counts once per command; retry_on=2 gives two on attempts
        let p = agent(20, 4, 2);
        assert_eq!(p.worst_case(Action::Reboot), s(20 + 24 * 3));
        assert_eq!(p.worst_case(Action::On), s(20 + 24 * 3));
        // retry_on=0: fence-agents makes no power-on attempt
        let p = agent(20, 0, 0);
        assert_eq!(p.worst_case(Action::Reboot), s(40));
        // a pinned identity is one more step
        let mut p = agent(20, 0, 1);
        p.expect =
            ExpectedIdentity::new(Some("4c4c4544-0042-3510-8052-b4c04f395831"), None).unwrap();
        assert_eq!(p.worst_case(Action::Monitor), s(40));
        // no bound on the wait: no worst case for a power action
        p.power_timeout = PowerTimeout::Unlimited;
        assert_eq!(p.worst_case(Action::Off), None);
        assert_eq!(p.worst_case(Action::Status), s(40));
    }

    #[test]
    fn the_worst_case_saturates_instead_of_overflowing() {
        let mut p = agent(u32::MAX, u64::MAX, u32::MAX);
        p.step_timeout = Duration::MAX;
        assert!(p.worst_case(Action::Reboot).unwrap() >= MAX_STEP);
    }
}
