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

/// How long each exchange with the device takes in a [`Case::Typical`] run.
pub const TYPICAL_EXCHANGE: Duration = Duration::from_secs(1);
/// How long after its `power_wait` a command's new power state shows in a
/// [`Case::Typical`] run.
pub const TYPICAL_TRANSITION: Duration = Duration::from_secs(2);

/// Which run [`Policy::waits`] adds up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// Every wait lasts its whole bound.
    Worst,
    /// A working device's run (see [`Policy::waits`]).
    Typical,
}

/// One wait of a run: what it is, how long once, how many times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    /// What is waited for (`session set-up`, `off: power_wait`).
    pub what: String,
    /// How long one takes.
    pub each: Duration,
    /// How many times it happens.
    pub count: u32,
}

/// The waits of one run, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Waits(pub Vec<Wait>);

impl Waits {
    /// Adds a wait.
    pub fn push(&mut self, what: impl Into<String>, each: Duration, count: u32) {
        self.0.push(Wait {
            what: what.into(),
            each,
            count,
        });
    }

    fn push_command(&mut self, command: &str, what: &str, each: Duration, count: u32) {
        self.push(format!("{command}: {what}"), each, count);
    }

    /// Their sum (saturating).
    pub fn total(&self) -> Duration {
        self.0.iter().fold(Duration::ZERO, |t, w| {
            t.saturating_add(times(w.each, w.count))
        })
    }

    /// The sum as a person checks it: `session set-up 20 s + off: power_wait
    /// 2 s + … = 64 s`.
    pub fn arithmetic(&self) -> String {
        let secs = |d: Duration| {
            let s = d.as_secs_f64();
            if s.fract() == 0.0 {
                format!("{s:.0} s")
            } else {
                format!("{s:.1} s")
            }
        };
        let terms: Vec<String> = self
            .0
            .iter()
            .filter(|w| !w.each.is_zero() && w.count > 0)
            .map(|w| match w.count {
                1 => format!("{} {}", w.what, secs(w.each)),
                n => format!("{n} × {} {}", w.what, secs(w.each)),
            })
            .collect();
        format!("{} = {}", terms.join(" + "), secs(self.total()))
    }
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
        let total = self.waits(action, Case::Worst)?.total();
        Some(match self.deadline {
            Some(d) => total.min(d.saturating_duration_since(Instant::now())),
            None => total,
        })
    }

    /// The waits of one `action` in `case`, one [`Wait`] each (the
    /// arithmetic behind [`worst_case`](Self::worst_case), and behind the
    /// configuration doctor's "a normal run takes about …"). `None` in the
    /// worst case when the wait for the power state has no bound. The
    /// overall deadline is not applied.
    ///
    /// [`Case::Typical`] is a run in which the device answers each
    /// exchange within [`TYPICAL_EXCHANGE`] and shows the new power state
    /// within [`TYPICAL_TRANSITION`] of the command's `power_wait` (each
    /// cut at its bound), and the first power-on attempt succeeds: what a
    /// working device takes, so a timeout below it fails working fencing.
    pub fn waits(&self, action: Action, case: Case) -> Option<Waits> {
        let step = self.step_timeout.min(MAX_STEP);
        let bound = match self.power_timeout {
            PowerTimeout::Polls(n) => Some(times(
                self.poll_interval_max.max(self.poll_interval),
                n.max(1),
            )),
            PowerTimeout::Wall(d) => Some(d.min(MAX_STEP)),
            PowerTimeout::Unlimited => None,
        };
        let (exchange, transition) = match case {
            Case::Worst => (step, bound),
            Case::Typical => (
                step.min(TYPICAL_EXCHANGE),
                Some(bound.map_or(TYPICAL_TRANSITION, |b| b.min(TYPICAL_TRANSITION))),
            ),
        };
        // Attempts of the power-on: fence-agents' retry_on counts them all
        // in a reboot; elsewhere one more than retry_on.
        let on_attempts = |agent_style: bool| {
            let n = match self.mode {
                Mode::Agent if agent_style => self.retry_on,
                _ => self.retry_on.saturating_add(1),
            };
            match case {
                Case::Worst => n,
                Case::Typical => n.min(1),
            }
        };
        let power_wait = self.power_wait.min(MAX_STEP);
        let mut w = Waits::default();
        w.push("session set-up", exchange, 1);
        if !self.expect.is_empty() {
            w.push("identity read", exchange, 1);
        }
        let command = |w: &mut Waits, name: &'static str, count: u32| -> Option<()> {
            let t = transition?;
            if !power_wait.is_zero() {
                w.push_command(name, "power_wait", power_wait, count);
            }
            w.push_command(name, "the power state", t, count);
            Some(())
        };
        match action {
            Action::Status | Action::Monitor | Action::Diag => {}
            Action::Off => command(&mut w, "off", 1)?,
            Action::On => command(&mut w, "on", on_attempts(false))?,
            Action::Reboot => match self.method {
                RebootMethod::OnOff => {
                    command(&mut w, "off", 1)?;
                    let n = on_attempts(true);
                    if n > 0 {
                        command(&mut w, "on", n)?;
                    }
                }
                RebootMethod::Cycle => {
                    let n = match case {
                        Case::Worst => self.retry_on.saturating_add(1),
                        Case::Typical => 1,
                    };
                    command(&mut w, "cycle", n)?;
                    w.push("the cycle's power state", transition?, 1);
                }
            },
        }
        Some(w)
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
    fn the_waits_add_up_to_the_worst_case_and_a_working_run() {
        use RebootMethod::{Cycle, OnOff};
        for (pt, pw, retry, method, pinned) in [
            (20, 2, 1, OnOff, false),
            (40, 0, 2, OnOff, true),
            (20, 4, 0, OnOff, false),
            (10, 1, 1, Cycle, false),
        ] {
            let mut p = agent(pt, pw, retry);
            p.method = method;
            if pinned {
                p.expect =
                    ExpectedIdentity::new(Some("4c4c4544-0042-3510-8052-b4c04f395831"), None)
                        .unwrap();
            }
            for a in [Action::Status, Action::Off, Action::On, Action::Reboot] {
                let w = p.waits(a, Case::Worst).unwrap();
                assert_eq!(Some(w.total()), p.worst_case(a), "{a:?} {w:?}");
                let t = p.waits(a, Case::Typical).unwrap();
                assert!(t.total() <= w.total(), "{a:?}");
            }
        }
        // fence_ipmilan's defaults: 64 s at worst, about 9 s for a working BMC.
        let p = agent(20, 2, 1);
        let w = p.waits(Action::Reboot, Case::Worst).unwrap();
        assert_eq!(
            w.arithmetic(),
            "session set-up 20 s + off: power_wait 2 s + off: the power state 20 s + on: \
             power_wait 2 s + on: the power state 20 s = 64 s"
        );
        let t = p.waits(Action::Reboot, Case::Typical).unwrap();
        assert_eq!(t.total(), Duration::from_secs(1 + 2 + 2 + 2 + 2));
        // Repeated attempts are counted, not listed.
        let p = agent(20, 0, 3);
        assert!(p
            .waits(Action::On, Case::Worst)
            .unwrap()
            .arithmetic()
            .contains("4 × on: the power state 20 s"));
        // No bound on the wait: no worst case, but a working run still has a figure.
        let mut p = agent(20, 2, 1);
        p.power_timeout = PowerTimeout::Unlimited;
        assert_eq!(p.waits(Action::Off, Case::Worst), None);
        assert_eq!(
            p.waits(Action::Off, Case::Typical).unwrap().total(),
            Duration::from_secs(1 + 2 + 2)
        );
    }

    #[test]
    fn the_worst_case_saturates_instead_of_overflowing() {
        let mut p = agent(u32::MAX, u64::MAX, u32::MAX);
        p.step_timeout = Duration::MAX;
        assert!(p.worst_case(Action::Reboot).unwrap() >= MAX_STEP);
    }
}
