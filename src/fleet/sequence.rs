//! `off` and `reboot` with the operator's extra steps, composed from the
//! engine's own actions so that the engine stays a pure power state machine
//! that never spawns a process or listens on a port:
//!
//! * crash dump first (`--crashdump`): the engine's `diag` (an NMI), then
//!   the wait for the node's kdump ([`crate::kdump`]), then the ordinary
//!   action;
//! * the confirmed-off hook (`--on-confirmed-off`): after `off` is
//!   confirmed; for `reboot`, the reboot is run as the engine's `off`
//!   (confirmed), the hook, then the engine's `on` (confirmed). A hook that
//!   fails leaves a rebooting node off unless asked otherwise.
//!
//! Each engine action opens and closes its own session: a crash dump or a
//! hook may take minutes, longer than a BMC keeps an idle session. The
//! per-BMC lock stays held by the caller throughout, so no other fencekit
//! process powers the node on in between. Every step lands in one
//! timeline, stamped from the start of the attempt.

use super::hook::{run_hook, HookContext, HookOptions, HookReport};
use crate::engine::clock;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::event::{Event, EventSink, Stamped};
use crate::engine::policy::{Policy, PowerTimeout};
use crate::engine::power::{Action, PowerState, RebootMethod};
use crate::engine::run::{run, Cancel, Failure, Outcome};
use crate::kdump::listen::{wait_for_dump, BindError, Ended, Listener};
use serde::Serialize;
use std::collections::HashSet;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Crash dump first: how long to wait, where to listen.
#[derive(Clone, Debug)]
pub struct CrashdumpOptions {
    /// The longest wait for the dump, from the NMI (`--crashdump-wait`).
    pub wait: Duration,
    /// Once the node reports, the dump counts as done when no message came
    /// for this long (`--kdump-quiet`).
    pub quiet: Duration,
    /// The UDP port fence_kdump messages arrive on (`--kdump-port`).
    pub port: u16,
}

/// What crash dump first did, for the result and the audit trail.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CrashdumpReport {
    /// The NMI: `sent`, or why not (the power-off went ahead regardless).
    pub nmi: String,
    /// Valid fence_kdump messages received from the node.
    pub messages: u32,
    /// How long fencekit waited for the dump.
    pub waited_ms: u64,
    /// How the wait ended: `dump-done`, `no-message`, `limit`, or `skipped`.
    pub ended: String,
}

/// The node as the extra steps need it.
pub struct NodeInfo<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its own address (kdump messages come from there).
    pub address: Option<&'a str>,
    /// The level being tried (1-based).
    pub level: usize,
    /// Its driver name.
    pub method: &'a str,
    /// Its endpoint.
    pub endpoint: String,
    /// What its off does: power, or isolation (a switch port down).
    pub effect: crate::platform::Effect,
    /// What a hook inherits from the locks held for the node.
    pub lock: crate::lock::Inherit,
}

/// The extra steps asked for.
pub struct Extras<'a> {
    /// Crash dump first, with the run's listener (or why there is none).
    pub crashdump: Option<(&'a CrashdumpOptions, &'a Result<Listener, BindError>)>,
    /// The hook command and its options.
    pub hook: Option<(&'a str, &'a HookOptions)>,
}

/// What the extra steps add to the engine's answer.
#[derive(Default)]
pub struct Reports {
    /// The hook, if it ran.
    pub hook: Option<HookReport>,
    /// Crash dump first, if asked.
    pub crashdump: Option<CrashdumpReport>,
}

/// Re-stamps every event from the start of the attempt (each engine action
/// stamps from its own start) and remembers the last state observed.
struct Timeline<'a> {
    inner: &'a mut dyn EventSink,
    began: Instant,
    last_state: Option<PowerState>,
}

impl EventSink for Timeline<'_> {
    fn emit(&mut self, event: &Stamped) {
        if let Event::StateObserved { state } = event.event {
            self.last_state = Some(state);
        }
        self.inner
            .emit(&Stamped::new(self.began.elapsed(), event.event.clone()));
    }
}

impl Timeline<'_> {
    fn note(&mut self, event: Event) {
        self.inner.emit(&Stamped::new(self.began.elapsed(), event));
    }
}

/// Time the power-off needs after a crash dump wait: one transition and
/// one session set-up.
fn off_reserve(policy: &Policy) -> Duration {
    let transition = match policy.power_timeout {
        PowerTimeout::Wall(d) => d,
        PowerTimeout::Polls(n) => policy.poll_interval * n,
        PowerTimeout::Unlimited => Duration::ZERO,
    };
    transition + policy.step_timeout
}

fn interrupted() -> Failure {
    Failure {
        error: DriverError::new(ErrorKind::Interrupted, Stage::Wait, "stopped by a signal"),
        last_state: None,
    }
}

/// Runs `action` (`off` or `reboot`) on one node with the extra steps.
pub async fn run_with_extras<D: PowerDriver>(
    driver: &mut D,
    action: Action,
    policy: &Policy,
    sink: &mut dyn EventSink,
    cancel: Cancel,
    node: &NodeInfo<'_>,
    extras: &Extras<'_>,
) -> (Result<Outcome, Failure>, Reports) {
    let mut tl = Timeline {
        inner: sink,
        began: Instant::now(),
        last_state: None,
    };
    let mut reports = Reports::default();
    if let Some((opts, listener)) = extras.crashdump {
        match crashdump(
            driver,
            policy,
            &mut tl,
            cancel.clone(),
            node,
            opts,
            listener,
        )
        .await
        {
            Ok(r) => reports.crashdump = Some(r),
            Err(f) => return (Err(f), reports),
        }
    }
    let split = action == Action::Reboot && policy.method == RebootMethod::OnOff;
    let Some((command, hook)) = extras.hook else {
        return (run(driver, action, policy, &mut tl, cancel).await, reports);
    };
    if action == Action::Reboot && !split {
        // Refused by the front (a power cycle is never observed off); kept
        // safe here too: no hook, the plain action.
        return (run(driver, action, policy, &mut tl, cancel).await, reports);
    }
    let off = run(driver, Action::Off, policy, &mut tl, cancel.clone()).await;
    let outcome = match &off {
        Ok(
            o @ (Outcome::Reached {
                state: PowerState::Off,
            }
            | Outcome::Already {
                state: PowerState::Off,
            }),
        ) => o.clone(),
        // Not confirmed off: no hook, and the failure is the answer.
        _ => return (off, reports),
    };
    let ctx = HookContext {
        node: node.name.to_string(),
        action: action.as_str().to_string(),
        method: node.method.to_string(),
        level: node.level,
        endpoint: node.endpoint.clone(),
        effect: node.effect,
        address: node.address.map(str::to_string),
        outcome: match outcome {
            Outcome::Already { .. } => "already".into(),
            _ => "reached".into(),
        },
        evidence: evidence(
            &tl,
            &outcome,
            node.effect,
            policy,
            reports.crashdump.as_ref(),
        ),
        lock: node.lock.clone(),
    };
    let left = policy
        .deadline
        .map(|d| d.saturating_duration_since(clock::Instant::now()))
        .unwrap_or(hook.timeout);
    let limit = hook.timeout.min(left);
    let mut report = {
        let mut emit = |e: Event| tl.note(e);
        let mut c = cancel.clone();
        tokio::select! {
            r = run_hook(command, &ctx, limit, &hook.scrub, &mut emit) => r,
            _ = c.cancelled() => return (Err(Failure { last_state: Some(PowerState::Off), ..interrupted() }), reports),
        }
    };
    if action == Action::Off {
        reports.hook = Some(report);
        return (Ok(outcome), reports);
    }
    if !report.ok && !hook.on_despite_failure {
        let why = format!(
            "the confirmed-off hook failed ({}); the node is left off",
            report.detail
        );
        reports.hook = Some(report);
        return (Ok(Outcome::FencedNotRestored { error: why }), reports);
    }
    report.powered_on_anyway = !report.ok;
    reports.hook = Some(report);
    let on = run(driver, Action::On, policy, &mut tl, cancel).await;
    let r = match on {
        Ok(
            Outcome::Reached {
                state: PowerState::On,
            }
            | Outcome::Already {
                state: PowerState::On,
            },
        ) => Ok(Outcome::Rebooted),
        Ok(other) => Ok(Outcome::FencedNotRestored {
            error: format!("unexpected answer to the power-on: {other:?}"),
        }),
        Err(f) if f.error.kind == ErrorKind::Interrupted => Err(f),
        Err(f) => Ok(Outcome::FencedNotRestored {
            error: f.error.to_string(),
        }),
    };
    (r, reports)
}

/// One line for `FENCEKIT_EVIDENCE`: how off (or, for a switch port,
/// isolation) was established.
fn evidence(
    tl: &Timeline<'_>,
    outcome: &Outcome,
    effect: crate::platform::Effect,
    policy: &Policy,
    dump: Option<&CrashdumpReport>,
) -> String {
    use crate::platform::Effect;
    let (how, what) = match (effect, outcome) {
        (Effect::Power, Outcome::Already { .. }) => ("already off", "off"),
        (Effect::Power, _) => ("powered off", "off"),
        (Effect::Isolated, Outcome::Already { .. }) => ("already isolated (port down)", "down"),
        (Effect::Isolated, _) => ("isolated (port down)", "down"),
    };
    let dump = dump
        .map(|d| {
            format!(
                "; crash dump: nmi {}, {} kdump message(s)",
                d.nmi, d.messages
            )
        })
        .unwrap_or_default();
    format!(
        "{how}; {what} confirmed by {} consecutive read(s) at {} ({:.1}s into the action){dump}",
        policy.confirm.max(1),
        crate::time::utc_now(),
        tl.began.elapsed().as_secs_f64()
    )
}

/// The longest wait for the node's name to resolve.
const RESOLVE_LIMIT: Duration = Duration::from_secs(5);

/// Why the node's kdump messages cannot be recognised: its addresses are
/// not known.
#[derive(Debug, thiserror::Error)]
enum AddressError {
    /// The node has no address (no `address` in the inventory).
    #[error("the node's address is not known")]
    Unknown,
    /// Its name did not resolve within [`RESOLVE_LIMIT`] (the name).
    #[error("resolving {0} took more than {}s", RESOLVE_LIMIT.as_secs())]
    SlowResolve(String),
    /// Its name does not resolve.
    #[error("cannot resolve {address}: {source}")]
    Resolve {
        /// The name.
        address: String,
        /// The resolver's error.
        source: std::io::Error,
    },
    /// Its name resolves to nothing (the name).
    #[error("{0} resolves to no address")]
    NoAddress(String),
}

/// The node's addresses (from its `address`), for recognising its kdump
/// messages.
async fn addresses(address: Option<&str>) -> Result<HashSet<IpAddr>, AddressError> {
    let address = address.ok_or(AddressError::Unknown)?;
    let bare = address.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok([ip.to_canonical()].into_iter().collect());
    }
    let found = tokio::time::timeout(RESOLVE_LIMIT, tokio::net::lookup_host((bare, 0)))
        .await
        .map_err(|_| AddressError::SlowResolve(address.to_string()))?
        .map_err(|source| AddressError::Resolve {
            address: address.to_string(),
            source,
        })?;
    let set: HashSet<IpAddr> = found.map(|a| a.ip().to_canonical()).collect();
    if set.is_empty() {
        return Err(AddressError::NoAddress(address.to_string()));
    }
    Ok(set)
}

#[allow(clippy::too_many_arguments)]
async fn crashdump<D: PowerDriver>(
    driver: &mut D,
    policy: &Policy,
    tl: &mut Timeline<'_>,
    cancel: Cancel,
    node: &NodeInfo<'_>,
    opts: &CrashdumpOptions,
    listener: &Result<Listener, BindError>,
) -> Result<CrashdumpReport, Failure> {
    let skipped = |nmi: String| CrashdumpReport {
        nmi,
        messages: 0,
        waited_ms: 0,
        ended: "skipped".into(),
    };
    // Subscribe before the NMI: a fast kdump kernel may report at once.
    let mut rx = listener.as_ref().ok().map(Listener::subscribe);
    let diag = run(driver, Action::Diag, policy, tl, cancel.clone()).await;
    match diag {
        Err(f) if f.error.kind == ErrorKind::Interrupted => return Err(f),
        Err(f) => {
            tl.note(Event::Warning {
                message: format!(
                    "no NMI ({}): powering off without waiting for a crash dump",
                    f.error
                ),
            });
            return Ok(skipped(format!("not sent: {}", f.error)));
        }
        Ok(_) if tl.last_state == Some(PowerState::Off) => {
            tl.note(Event::Warning {
                message: "the node is already off: no crash dump to wait for".into(),
            });
            return Ok(skipped("sent to a node already off".into()));
        }
        Ok(_) => {}
    }
    // tokio's clock throughout (engine::clock): the wait is testable paused.
    let now = clock::Instant::now();
    let mut limit = now + opts.wait;
    if let Some(d) = policy.deadline {
        let latest = d.checked_sub(off_reserve(policy)).unwrap_or(now);
        // The front checks that the wait fits; a cut of a few milliseconds
        // (time already spent on the NMI) is not worth a warning.
        if latest + Duration::from_millis(500) < limit {
            limit = latest.max(now);
            tl.note(Event::Warning {
                message: format!(
                    "the crash dump wait is cut to {:.1}s to leave time for the power-off \
                     within the action's deadline",
                    limit.saturating_duration_since(now).as_secs_f64()
                ),
            });
        } else if latest < limit {
            limit = latest.max(now);
        }
    }
    tl.note(Event::AwaitingCrashdump {
        port: opts.port,
        ms: limit.saturating_duration_since(now).as_millis() as u64,
    });
    let from = addresses(node.address).await;
    let blind: Option<&dyn std::fmt::Display> = match (&listener, &from, rx.is_some()) {
        (Err(why), _, _) => Some(why),
        (_, Err(why), _) => Some(why),
        (_, _, false) => Some(&"no listener"),
        _ => None,
    };
    let mut c = cancel.clone();
    let (messages, ended) = match (blind, rx.as_mut(), &from) {
        (None, Some(rx), Ok(from)) => {
            let mut first = |a: IpAddr| {
                tl.note(Event::CrashdumpMessage {
                    from: a.to_string(),
                })
            };
            let w = tokio::select! {
                w = wait_for_dump(rx, from, limit, opts.quiet, &mut first) => w,
                _ = c.cancelled() => return Err(interrupted()),
            };
            let ended = match w.ended {
                Ended::NoMessage => "no-message",
                Ended::Quiet => "dump-done",
                Ended::Limit => "limit",
            };
            (w.messages, ended)
        }
        (why, _, _) => {
            tl.note(Event::Warning {
                message: format!(
                    "kdump messages cannot be received ({}): waiting the full {:.1}s blind",
                    why.map(ToString::to_string).unwrap_or_default(),
                    limit
                        .saturating_duration_since(clock::Instant::now())
                        .as_secs_f64()
                ),
            });
            tokio::select! {
                _ = tokio::time::sleep_until(limit) => {},
                _ = c.cancelled() => return Err(interrupted()),
            }
            (0, "no-message")
        }
    };
    let waited = now.elapsed();
    let reason = match ended {
        "dump-done" => format!(
            "no message for {:.1}s: the dump is done",
            opts.quiet.as_secs_f64()
        ),
        "limit" => "the wait limit was reached while the node still reported".to_string(),
        _ => format!(
            "no kdump message from the node in {:.1}s",
            waited.as_secs_f64()
        ),
    };
    tl.note(Event::CrashdumpWaitEnded { messages, reason });
    Ok(CrashdumpReport {
        nmi: "sent".into(),
        messages,
        waited_ms: waited.as_millis() as u64,
        ended: ended.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::power::PowerCommand;

    /// The error of a kdump port another process holds.
    fn in_use(port: u16) -> BindError {
        let source = std::io::Error::new(std::io::ErrorKind::AddrInUse, "in use");
        BindError { port, source }
    }

    /// A device whose power follows its commands at once (Diag optional).
    struct Device {
        on: bool,
        nmi: bool,
        commands: Vec<PowerCommand>,
        sessions: u32,
        stuck: bool,
    }

    impl PowerDriver for Device {
        async fn connect(&mut self, _: Option<Instant>) -> Result<String, DriverError> {
            self.sessions += 1;
            Ok("test".into())
        }
        async fn status(&mut self, _: Option<Instant>) -> Result<PowerState, DriverError> {
            Ok(if self.on {
                PowerState::On
            } else {
                PowerState::Off
            })
        }
        async fn command(
            &mut self,
            c: PowerCommand,
            _: Option<Instant>,
        ) -> Result<(), DriverError> {
            self.commands.push(c);
            match c {
                PowerCommand::Diag if !self.nmi => Err(DriverError::new(
                    ErrorKind::Unsupported,
                    Stage::Command,
                    "the BMC offers no NMI",
                )),
                PowerCommand::Off if !self.stuck => {
                    self.on = false;
                    Ok(())
                }
                PowerCommand::On if !self.stuck => {
                    self.on = true;
                    Ok(())
                }
                _ => Ok(()),
            }
        }
        async fn close(&mut self) {}
    }

    fn device(on: bool) -> Device {
        Device {
            on,
            nmi: true,
            commands: vec![],
            sessions: 0,
            stuck: false,
        }
    }

    fn policy() -> Policy {
        Policy {
            poll_interval: Duration::from_millis(1),
            poll_interval_max: Duration::from_millis(1),
            power_timeout: PowerTimeout::Wall(Duration::from_millis(100)),
            step_timeout: Duration::from_millis(200),
            deadline: Some(clock::Instant::now() + Duration::from_secs(20)),
            ..Policy::native()
        }
    }

    fn info() -> NodeInfo<'static> {
        NodeInfo {
            name: "n1",
            address: Some("127.0.0.1"),
            level: 1,
            method: "ipmi",
            endpoint: "ipmi://127.0.0.1:623".into(),
            effect: crate::platform::Effect::Power,
            lock: Default::default(),
        }
    }

    async fn go(
        d: &mut Device,
        action: Action,
        extras: &Extras<'_>,
    ) -> (Result<Outcome, Failure>, Reports, Vec<Event>) {
        go_as(d, action, extras, &info()).await
    }

    /// [`go`] for another node.
    async fn go_as(
        d: &mut Device,
        action: Action,
        extras: &Extras<'_>,
        node: &NodeInfo<'_>,
    ) -> (Result<Outcome, Failure>, Reports, Vec<Event>) {
        let mut events = Vec::new();
        let mut sink = |s: &Stamped| events.push(s.event.clone());
        let (r, rep) = run_with_extras(
            d,
            action,
            &policy(),
            &mut sink,
            Cancel::never(),
            node,
            extras,
        )
        .await;
        (r, rep, events)
    }

    fn hook(cmd: &str, despite: bool) -> HookOptions {
        HookOptions {
            command: Some(cmd.into()),
            timeout: Duration::from_secs(10),
            on_despite_failure: despite,
            scrub: vec![],
        }
    }

    #[tokio::test]
    async fn a_reboot_with_a_hook_is_off_hook_on() {
        let h = hook(
            "test \"$FENCEKIT_ACTION/$FENCEKIT_STATE\" = reboot/off",
            false,
        );
        let mut d = device(true);
        let extras = Extras {
            crashdump: None,
            hook: Some(("test \"$FENCEKIT_ACTION/$FENCEKIT_STATE\" = reboot/off", &h)),
        };
        let (r, rep, events) = go(&mut d, Action::Reboot, &extras).await;
        assert_eq!(r, Ok(Outcome::Rebooted));
        assert!(rep.hook.unwrap().ok);
        assert_eq!(d.commands, vec![PowerCommand::Off, PowerCommand::On]);
        let hook_at = events
            .iter()
            .position(|e| matches!(e, Event::HookStarted { .. }))
            .unwrap();
        let on_at = events
            .iter()
            .position(|e| {
                matches!(
                    e,
                    Event::CommandSent {
                        command: PowerCommand::On
                    }
                )
            })
            .unwrap();
        assert!(hook_at < on_at, "the hook runs before the power-on");
    }

    #[tokio::test]
    async fn a_hook_after_a_port_set_down_is_told_isolated_not_powered_off() {
        // The hook checks its own environment: exit 0 only for fabric words.
        let cmd = "test \"$FENCEKIT_EFFECT\" = isolated && \
                   case \"$FENCEKIT_EVIDENCE\" in \
                   *'isolated (port down); down confirmed by '*) exit 0 ;; *) exit 7 ;; esac";
        let h = hook(cmd, false);
        let extras = Extras {
            crashdump: None,
            hook: Some((cmd, &h)),
        };
        let mut info = info();
        info.method = "ifmib";
        info.effect = crate::platform::Effect::Isolated;
        for (on, want) in [(true, "reached"), (false, "already")] {
            let mut d = device(on);
            let (r, rep, _) = go_as(&mut d, Action::Off, &extras, &info).await;
            assert!(r.is_ok(), "{want}: {r:?}");
            let rep = rep.hook.unwrap();
            assert!(rep.ok, "{want}: the hook saw power words: {rep:?}");
        }
        // And a power method's hook is not told isolated.
        let mut d = device(true);
        let (_, rep, _) = go(&mut d, Action::Off, &extras).await;
        assert_eq!(rep.hook.unwrap().exit_code, Some(1));
    }

    #[tokio::test]
    async fn a_failing_hook_leaves_a_rebooting_node_off() {
        let h = hook("exit 4", false);
        let mut d = device(true);
        let extras = Extras {
            crashdump: None,
            hook: Some(("exit 4", &h)),
        };
        let (r, rep, _) = go(&mut d, Action::Reboot, &extras).await;
        assert!(matches!(r, Ok(Outcome::FencedNotRestored { .. })), "{r:?}");
        assert_eq!(rep.hook.unwrap().exit_code, Some(4));
        assert_eq!(d.commands, vec![PowerCommand::Off], "never powered on");
        assert!(!d.on);

        let h = hook("exit 4", true);
        let mut d = device(true);
        let extras = Extras {
            crashdump: None,
            hook: Some(("exit 4", &h)),
        };
        let (r, rep, _) = go(&mut d, Action::Reboot, &extras).await;
        assert_eq!(r, Ok(Outcome::Rebooted));
        assert!(rep.hook.unwrap().powered_on_anyway);
    }

    // Paused clock: the stuck off runs out its 100 ms power timeout in
    // virtual time.
    #[tokio::test(start_paused = true)]
    async fn no_hook_when_off_is_not_confirmed() {
        let h = hook("exit 0", false);
        let mut d = device(true);
        d.stuck = true;
        let extras = Extras {
            crashdump: None,
            hook: Some(("exit 0", &h)),
        };
        let began = clock::Instant::now();
        let (r, rep, events) = go(&mut d, Action::Off, &extras).await;
        let took = began.elapsed();
        assert!(
            took >= Duration::from_millis(100) && took < Duration::from_millis(110),
            "the power timeout, exactly: {took:?}"
        );
        assert!(r.is_err());
        assert!(rep.hook.is_none());
        assert!(!events
            .iter()
            .any(|e| matches!(e, Event::HookStarted { .. })));
    }

    // Paused clock (engine::clock): the waits below are virtual time, exact.
    #[tokio::test(start_paused = true)]
    async fn no_nmi_support_goes_straight_to_off_with_a_warning() {
        let opts = CrashdumpOptions {
            wait: Duration::from_secs(5),
            quiet: Duration::from_secs(1),
            port: 0,
        };
        let listener = Err(in_use(7410));
        let mut d = device(true);
        d.nmi = false;
        let extras = Extras {
            crashdump: Some((&opts, &listener)),
            hook: None,
        };
        let began = clock::Instant::now();
        let (r, rep, events) = go(&mut d, Action::Off, &extras).await;
        assert_eq!(
            r,
            Ok(Outcome::Reached {
                state: PowerState::Off
            })
        );
        // Only the power-off's own polls (1 ms apart), no crash dump wait.
        assert!(
            began.elapsed() < Duration::from_millis(50),
            "{:?}",
            began.elapsed()
        );
        assert!(rep.crashdump.unwrap().nmi.starts_with("not sent"));
        assert!(events.iter().any(|e| matches!(e, Event::Warning { .. })));
        assert_eq!(d.commands, vec![PowerCommand::Diag, PowerCommand::Off]);
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_listener_the_wait_is_blind_and_bounded() {
        let opts = CrashdumpOptions {
            wait: Duration::from_millis(300),
            quiet: Duration::from_secs(1),
            port: 7410,
        };
        let listener = Err(in_use(7410));
        let mut d = device(true);
        let extras = Extras {
            crashdump: Some((&opts, &listener)),
            hook: None,
        };
        let began = clock::Instant::now();
        let (r, rep, _) = go(&mut d, Action::Off, &extras).await;
        assert_eq!(
            r,
            Ok(Outcome::Reached {
                state: PowerState::Off
            })
        );
        let took = began.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_millis(350),
            "{took:?}"
        );
        let rep = rep.crashdump.unwrap();
        assert_eq!(rep.waited_ms, 300);
        assert_eq!(
            (rep.nmi.as_str(), rep.ended.as_str()),
            ("sent", "no-message")
        );
        assert_eq!(d.commands, vec![PowerCommand::Diag, PowerCommand::Off]);
    }

    #[tokio::test]
    async fn a_node_address_that_names_nothing_is_a_typed_error() {
        let set = addresses(Some("[::ffff:127.0.0.1]")).await.unwrap();
        assert_eq!(set, ["127.0.0.1".parse::<IpAddr>().unwrap()].into());
        let e = addresses(Some("no-such-host.invalid")).await.unwrap_err();
        assert!(
            matches!(&e, AddressError::Resolve { address, .. } if address == "no-such-host.invalid"),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .starts_with("cannot resolve no-such-host.invalid: "),
            "{e}"
        );
        assert_eq!(
            AddressError::SlowResolve("n1.example".into()).to_string(),
            "resolving n1.example took more than 5s"
        );
        assert_eq!(
            AddressError::NoAddress("n1.example".into()).to_string(),
            "n1.example resolves to no address"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn without_the_node_address_the_wait_is_blind_and_says_why() {
        assert!(matches!(addresses(None).await, Err(AddressError::Unknown)));
        let opts = CrashdumpOptions {
            wait: Duration::from_millis(300),
            quiet: Duration::from_secs(1),
            port: 0,
        };
        let listener = Listener::bind_addr("127.0.0.1:0".parse().unwrap())
            .await
            .map_err(|source| BindError { port: 0, source });
        let mut d = device(true);
        let extras = Extras {
            crashdump: Some((&opts, &listener)),
            hook: None,
        };
        let node = NodeInfo {
            address: None,
            ..info()
        };
        let (r, rep, events) = go_as(&mut d, Action::Off, &extras, &node).await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(rep.crashdump.unwrap().waited_ms, 300);
        assert!(
            events.iter().any(|e| matches!(e, Event::Warning { message }
                if message.starts_with("kdump messages cannot be received (the node's address is not known): waiting the full 0.3s blind"))),
            "{events:?}"
        );
    }
}
