//! In-process tests of the agent front against a simulated driver (exact
//! command sequences, timing, output) and against the lab's IPMI BMC.

use super::*;
use crate::engine::driver::PowerDriver;
use crate::engine::error::DriverError;
use crate::engine::power::PowerCommand;
use crate::ipmi::config::IpmiConfig;
use std::sync::{Arc, Mutex};

/// A simulated device with knobs and a log of what was asked of it.
#[derive(Clone, Default)]
struct Sim(Arc<Mutex<SimState>>);

#[derive(Default)]
struct SimState {
    on: bool,
    /// Off commands are accepted and ignored.
    stuck_off: bool,
    /// On commands are accepted and ignored.
    stuck_on: bool,
    /// Every status read fails this way.
    status_error: Option<ErrorKind>,
    /// connect() never answers (until its deadline, if any).
    hang: bool,
    calls: Vec<&'static str>,
    connected_at: Option<Instant>,
    step_deadlines: Vec<Option<Instant>>,
    closed: bool,
    /// What `list` finds.
    plugs: Vec<PlugEntry>,
    /// Every power command fails this way (after being recorded).
    command_error: Option<ErrorKind>,
    /// What identity() reports.
    identity: crate::engine::identity::Identity,
}

impl Sim {
    fn new(on: bool) -> Self {
        let s = Sim::default();
        s.st().on = on;
        s
    }
    fn st(&self) -> std::sync::MutexGuard<'_, SimState> {
        self.0.lock().unwrap()
    }
    fn calls(&self) -> Vec<&'static str> {
        self.st().calls.clone()
    }
}

impl PowerDriver for Sim {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let hang = {
            let mut s = self.st();
            s.connected_at = Some(Instant::now());
            s.step_deadlines.push(deadline);
            s.hang
        };
        if hang {
            match deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending::<()>().await,
            }
            return Err(DriverError::new(
                ErrorKind::Timeout,
                Stage::Authenticate,
                "no answer",
            ));
        }
        Ok("simulated".into())
    }

    async fn status(&mut self, _: Option<Instant>) -> Result<PowerState, DriverError> {
        tokio::task::yield_now().await;
        let mut s = self.st();
        s.calls.push("status");
        match s.status_error {
            Some(k) => Err(DriverError::new(k, Stage::Status, "simulated status error")),
            None => Ok(if s.on {
                PowerState::On
            } else {
                PowerState::Off
            }),
        }
    }

    async fn command(&mut self, c: PowerCommand, _: Option<Instant>) -> Result<(), DriverError> {
        tokio::task::yield_now().await;
        let mut s = self.st();
        if let Some(k) = s.command_error {
            s.calls.push("refused");
            return Err(DriverError::new(k, Stage::Command, "simulated http 501"));
        }
        match c {
            PowerCommand::Off => {
                s.calls.push("off");
                if !s.stuck_off {
                    s.on = false;
                }
            }
            PowerCommand::On => {
                s.calls.push("on");
                if !s.stuck_on {
                    s.on = true;
                }
            }
            PowerCommand::Cycle => s.calls.push("cycle"),
            PowerCommand::Reset => s.calls.push("reset"),
            PowerCommand::Diag => s.calls.push("diag"),
        }
        Ok(())
    }

    async fn identity(
        &mut self,
        _: Option<Instant>,
    ) -> Result<crate::engine::identity::Identity, DriverError> {
        let mut s = self.st();
        s.calls.push("identity");
        Ok(s.identity.clone())
    }

    async fn close(&mut self) {
        self.st().closed = true;
    }
}

impl AgentDriver for Sim {
    async fn plugs(&mut self, _: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let mut s = self.st();
        s.calls.push("list");
        match s.status_error {
            Some(k) => Err(DriverError::new(k, Stage::Status, "simulated list error")),
            None => Ok(s.plugs.clone()),
        }
    }
}

/// Fast timing for tests that do not measure it.
const FAST: &[&str] = &["--power-wait=0", "--stonith-status-sleep=0"];

struct Ran {
    out: Captured,
    cfg: Option<IpmiConfig>,
}

/// [`run_with`] for an IPMI agent with the driver made by `make` (tests
/// pass a simulated one); other families fail before any driver is made.
fn run_with_driver<D, F>(
    name: &str,
    args: Vec<OsString>,
    stdin: impl Read,
    stdout: &mut dyn Write,
    stderr: Box<dyn Write + Send>,
    env: &AgentEnv,
    make: F,
) -> i32
where
    D: AgentDriver,
    F: FnOnce(IpmiConfig) -> Result<D, String>,
{
    run_with_device(name, args, stdin, stdout, stderr, env, |cfg| {
        match cfg.as_any().downcast_ref::<IpmiConfig>() {
            Some(c) => make(c.clone()),
            None => Err("this test driver serves IPMI agents only".to_string()),
        }
    })
}

fn run_env(name: &str, args: &[&str], stdin: &str, sim: &Sim, env: &AgentEnv) -> Ran {
    let mut cfg = None;
    let out = capture(|o, e| {
        let args = args.iter().map(OsString::from).collect();
        run_with_driver(name, args, stdin.as_bytes(), o, e, env, |c| {
            cfg = Some(c);
            Ok(sim.clone())
        })
    });
    Ran { out, cfg }
}

fn run_sim(name: &str, args: &[&str], sim: &Sim) -> Ran {
    run_env(name, args, "", sim, &AgentEnv::plain())
}

fn fast(args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    v.extend(FAST.iter().map(|s| s.to_string()));
    v
}

fn run_fast(args: &[&str], sim: &Sim) -> Ran {
    let v = fast(args);
    let refs: Vec<&str> = v.iter().map(String::as_str).collect();
    run_sim("fence_ipmilan", &refs, sim)
}

mod families;
mod options;

#[test]
fn status_prints_the_state_and_exits_0_or_2() {
    let sim = Sim::new(true);
    let r = run_sim("fence_ipmilan", &["-a", "h", "-o", "status"], &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "Status: ON\n"),
        "{}",
        r.out.stderr
    );
    assert_eq!(sim.calls(), vec!["status"]);
    assert!(sim.st().closed);
    let sim = Sim::new(false);
    let r = run_sim("fence_ipmilan", &["-a", "h", "-o", "STATUS"], &sim);
    assert_eq!((r.out.code, r.out.stdout.as_str()), (2, "Status: OFF\n"));
    assert_eq!(r.out.stderr, "");
}

#[test]
fn off_sends_one_command_and_confirms_by_polling() {
    let sim = Sim::new(true);
    let r = run_fast(&["-a", "h", "-o", "off"], &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "Success: Powered OFF\n")
    );
    assert_eq!(sim.calls(), vec!["status", "off", "status"]);
    let r = run_fast(&["-a", "h", "-o", "off"], &sim);
    assert_eq!(r.out.stdout, "Success: Already OFF\n");
    assert_eq!(sim.calls().len(), 4, "already off: a single status read");
}

#[test]
fn on_and_reboot_follow_upstream_sequences() {
    let sim = Sim::new(false);
    let r = run_fast(&["-a", "h", "-o", "on"], &sim);
    assert_eq!(r.out.stdout, "Success: Powered ON\n");
    let r = run_fast(&["-a", "h", "-o", "on"], &sim);
    assert_eq!(r.out.stdout, "Success: Already ON\n");
    let sim = Sim::new(true);
    let r = run_fast(&["-a", "h"], &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "Success: Rebooted\n"),
        "reboot is the default"
    );
    assert_eq!(sim.calls(), vec!["status", "off", "status", "on", "status"]);
    let sim = Sim::new(false);
    run_fast(&["-a", "h", "-o", "reboot"], &sim);
    assert_eq!(
        sim.calls(),
        vec!["status", "on", "status"],
        "off node: no off command"
    );
}

#[test]
fn a_stuck_off_fails_after_power_timeout_polls() {
    let sim = Sim::new(true);
    sim.st().stuck_off = true;
    let r = run_fast(&["-a", "h", "-o", "off", "--power-timeout=3"], &sim);
    assert_eq!(r.out.code, 1);
    assert_eq!(r.out.stdout, "");
    assert!(
        r.out
            .stderr
            .contains(" ERROR: Failed: Timed out waiting to power OFF\n"),
        "{}",
        r.out.stderr
    );
    assert!(
        r.out
            .stderr
            .contains(" ERROR: cause: timed out waiting to power OFF"),
        "{}",
        r.out.stderr
    );
    assert_eq!(
        sim.calls(),
        vec!["status", "off", "status", "status", "status"]
    );
    // A reboot whose off never completes is a failure and never powers on.
    let r = run_fast(&["-a", "h", "-o", "reboot", "--power-timeout=1"], &sim);
    assert_eq!(r.out.code, 1);
    assert!(!sim.calls().contains(&"on"));
}

#[test]
fn a_stuck_on_fails_on_but_a_reboot_still_succeeds() {
    let sim = Sim::new(false);
    sim.st().stuck_on = true;
    let r = run_fast(&["-a", "h", "-o", "on", "--power-timeout=2"], &sim);
    assert_eq!(r.out.code, 1);
    assert!(
        r.out
            .stderr
            .contains("Failed: Timed out waiting to power ON"),
        "{}",
        r.out.stderr
    );
    assert_eq!(
        sim.calls().iter().filter(|c| **c == "on").count(),
        2,
        "1 + retry_on attempts"
    );
    let sim = Sim::new(true);
    sim.st().stuck_on = true;
    let r = run_fast(&["-a", "h", "-o", "reboot", "--power-timeout=2"], &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "Success: Rebooted\n")
    );
    assert!(
        r.out
            .stderr
            .contains(" ERROR: Timed out waiting to power ON\n"),
        "{}",
        r.out.stderr
    );
    assert!(r
        .out
        .stderr
        .contains("WARNING: the node was powered off (fenced) but did not come back on"));
    assert_eq!(
        sim.calls().iter().filter(|c| **c == "on").count(),
        1,
        "retry_on attempts"
    );
}

#[test]
fn unreadable_status_fails_without_a_power_command() {
    for action in ["status", "monitor", "reboot", "off"] {
        let sim = Sim::new(true);
        sim.st().status_error = Some(ErrorKind::StatusUnreadable);
        let r = run_fast(&["-a", "h", "-o", action], &sim);
        assert_eq!(r.out.code, 1, "{action}");
        assert!(
            r.out.stderr.contains(
                " ERROR: Failed: Unable to obtain correct plug status or plug is not available\n"
            ),
            "{action}: {}",
            r.out.stderr
        );
        assert_eq!(sim.calls(), vec!["status"], "{action}");
    }
}

#[test]
fn an_unanswering_device_times_out_after_power_timeout_seconds() {
    let sim = Sim::new(true);
    sim.st().hang = true;
    let t = Instant::now();
    let r = run_fast(&["-a", "h", "-o", "status", "--power-timeout=1"], &sim);
    assert_eq!(r.out.code, 1);
    assert!(
        r.out.stderr.contains(" ERROR: Connection timed out\n"),
        "{}",
        r.out.stderr
    );
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[test]
fn cycle_diag_and_monitor() {
    let sim = Sim::new(true);
    let r = run_fast(&["-a", "h", "-o", "reboot", "-m", "CYCLE"], &sim);
    assert_eq!(r.out.stdout, "Success: Rebooted\n");
    assert_eq!(sim.calls(), vec!["status", "cycle"]);
    let sim = Sim::new(true);
    let r = run_fast(&["-a", "h", "-o", "diag"], &sim);
    assert_eq!(r.out.stdout, "Success: Rebooted\n");
    assert_eq!(sim.calls(), vec!["status", "diag"]);
    let sim = Sim::new(false);
    let r = run_fast(&["-a", "h", "-o", "monitor"], &sim);
    assert_eq!((r.out.code, r.out.stdout.as_str()), (0, ""));
}

#[test]
fn delay_counts_from_start_and_applies_to_off_and_reboot_only() {
    let env = AgentEnv::plain();
    let sim = Sim::new(false);
    run_env(
        "fence_ipmilan",
        &fast_refs(&["-a", "h", "-o", "off", "--delay=1"]),
        "",
        &sim,
        &env,
    );
    let waited = sim.st().connected_at.unwrap() - env.started;
    assert!(
        waited >= Duration::from_millis(1950) && waited < Duration::from_secs(4),
        "{waited:?}"
    );

    let env = AgentEnv::plain();
    let sim = Sim::new(true);
    run_env(
        "fence_ipmilan",
        &fast_refs(&["-a", "h", "-o", "status", "--delay=3"]),
        "",
        &sim,
        &env,
    );
    assert!(sim.st().connected_at.unwrap() - env.started < Duration::from_millis(500));

    // The delay also happens when the device will not answer (upstream's delay-check).
    let env = AgentEnv::plain();
    let sim = Sim::new(true);
    sim.st().status_error = Some(ErrorKind::Unreachable);
    let stdin = "delay=1\nlogin=test\npasswd=test\nipaddr=test\nport=1\naction=reboot\n";
    let r = run_env("fence_ipmilan", &[], stdin, &sim, &env);
    assert_eq!(r.out.code, 1);
    assert!(env.started.elapsed() >= Duration::from_millis(1950));
}

fn fast_refs(args: &[&str]) -> Vec<&'static str> {
    fast(args)
        .into_iter()
        .map(|s| &*Box::leak(s.into_boxed_str()))
        .collect()
}

#[test]
fn pacemaker_lifts_only_the_wait_for_the_power_state_unless_told_otherwise() {
    let args = fast_refs(&["-a", "h", "-o", "off", "--power-timeout=2"]);
    let sim = Sim::new(true);
    sim.st().stuck_off = true;
    let env = AgentEnv {
        pcmk_service: Some("pacemaker-fenced".into()),
        stop_after: Some(Duration::from_millis(300)),
        ..AgentEnv::plain()
    };
    let r = run_env("fence_ipmilan", &args, "", &sim, &env);
    assert_eq!(r.out.code, 1);
    assert!(
        r.out.stderr.contains("Failed: Interrupted by a signal"),
        "{}",
        r.out.stderr
    );
    assert!(
        r.out.stderr.contains("last state read: on"),
        "{}",
        r.out.stderr
    );
    assert!(
        sim.calls().len() > 10,
        "still polling when stopped: {}",
        sim.calls().len()
    );
    assert!(sim.st().closed, "the session is closed on a signal");
    // Connecting keeps its bound: power_timeout's 2 s, as without Pacemaker.
    let steps = sim.st().step_deadlines.clone();
    assert_eq!(steps.len(), 1);
    let left = steps[0].expect("a step bound under disable_timeout") - env.started;
    assert!(
        left > Duration::from_millis(1500) && left <= Duration::from_millis(2500),
        "{left:?}"
    );

    let mut args = args.clone();
    args.push("--disable-timeout=false");
    let sim = Sim::new(true);
    sim.st().stuck_off = true;
    let r = run_env("fence_ipmilan", &args, "", &sim, &env);
    assert!(
        r.out
            .stderr
            .contains("Failed: Timed out waiting to power OFF"),
        "{}",
        r.out.stderr
    );
    assert!(sim.st().step_deadlines[0].is_some());
}

#[test]
fn under_pacemaker_a_bmc_that_cannot_be_reached_fails_at_the_step_bound() {
    // A set-up that never completes: the session is never established, so
    // disable_timeout lifts nothing; it fails at power_timeout's bound (1 s
    // here, 20 s by default) with its cause, instead of waiting for SIGTERM.
    let sim = Sim::new(true);
    sim.st().hang = true;
    let env = AgentEnv {
        pcmk_service: Some("pacemaker-fenced".into()),
        ..AgentEnv::plain()
    };
    let stdin = "action=reboot\nip=h\npower_timeout=1\nnodename=n1\nplug=n1\n";
    let t0 = Instant::now();
    let r = run_env("fence_ipmilan", &[], stdin, &sim, &env);
    let took = t0.elapsed();
    assert_eq!((r.out.code, r.out.stdout.as_str()), (1, ""));
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "{took:?}"
    );
    let lines: Vec<&str> = r.out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.out.stderr);
    assert!(
        lines[0].ends_with("ERROR: Connection timed out"),
        "{lines:?}"
    );
    assert!(
        lines[1].ends_with("ERROR: cause: no answer (during session set-up)"),
        "{lines:?}"
    );
    assert!(sim.calls().is_empty(), "nothing was read or sent");
}

#[test]
fn a_signal_during_the_delay_stops_before_contacting_the_device() {
    let sim = Sim::new(true);
    let env = AgentEnv {
        stop_after: Some(Duration::from_millis(100)),
        ..AgentEnv::plain()
    };
    let r = run_env(
        "fence_ipmilan",
        &["-a", "h", "-o", "off", "--delay=30"],
        "",
        &sim,
        &env,
    );
    assert_eq!(r.out.code, 1);
    assert!(
        r.out.stderr.contains("Failed: Interrupted by a signal"),
        "{}",
        r.out.stderr
    );
    assert!(sim.st().connected_at.is_none());
    assert!(env.started.elapsed() < Duration::from_secs(5));
}

#[test]
fn target_is_refused_before_anything_is_sent() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &["-a", "h", "-o", "off", "--target=0x20"],
        &sim,
    );
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains("Failed: IPMI bridging (--target 0x20) is not supported"));
    assert!(r.cfg.is_none() && sim.calls().is_empty());
}

#[test]
fn unknown_agents_are_refused() {
    assert!(known_agent("fence_ipmilan") && known_agent("/usr/sbin/fence_ilo5"));
    assert!(!known_agent("fence_bogus") && !known_agent("fencekit"));
    let r = run_captured("fence_bogus", &[], "", &AgentEnv::plain());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("unknown fence agent 'fence_bogus'"));
}

/// End to end through the real IPMI driver against the lab's BMC, run on a
/// thread of its own (the agent starts its own runtime).
#[test]
fn real_driver_against_the_lab() {
    use crate::lab::fleet::{Lab, LabSpec};
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let lab = Lab::start(&LabSpec::default()).await.unwrap();
            let node = &lab.nodes[0];
            tx.send((node.addr().port(), node.bmc().clone())).unwrap();
            tokio::task::spawn_blocking(move || stop_rx.recv())
                .await
                .ok();
            drop(lab);
        });
    });
    let (port, bmc) = rx.recv().unwrap();
    let port = port.to_string();
    let env = AgentEnv::plain();
    let base = ["-a", "127.0.0.1", "-u", &port, "-l", "admin", "-p", "lab"];
    let go = |name: &str, extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        run_captured(name, &args, "", &env)
    };
    let r = go("fence_ipmilanplus", &["-o", "status"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Status: ON\n"),
        "{}",
        r.stderr
    );
    let r = go("fence_ilo4", &["-o", "off", "--power-wait=0"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Success: Powered OFF\n"),
        "{}",
        r.stderr
    );
    assert!(!bmc.is_on());
    let r = go("fence_ipmilanplus", &["-o", "status"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, "Status: OFF\n"));
    let r = go("fence_ipmilanplus", &["-o", "status", "-p", "n0t-the-pw"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("Failed: Unable to obtain correct plug status"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("n0t-the-pw"), "{}", r.stderr);
    stop_tx.send(()).unwrap();
    server.join().unwrap();
}

const PINNED: &str = "4c414230-0000-4001-8000-fe0000000001";

fn sim_reporting(uuid: &str) -> Sim {
    let sim = Sim::new(true);
    sim.st().identity = crate::engine::identity::Identity {
        names: Vec::new(),
        uuid: vec![crate::engine::identity::reported_uuid(uuid).unwrap()],
        serial: None,
    };
    sim
}

#[test]
fn expect_uuid_fences_the_right_machine_and_refuses_any_other() {
    let sim = sim_reporting(PINNED);
    let uuid = format!("--expect-uuid={}", PINNED.to_uppercase());
    let r = run_fast(&["-a", "h", "-o", "off", &uuid], &sim);
    assert_eq!(r.out.code, 0, "{:?}", r.out);
    assert_eq!(r.out.stdout, "Success: Powered OFF\n");
    assert_eq!(sim.calls()[..3], ["identity", "status", "off"]);

    let sim = sim_reporting("4c414230-0000-4002-8000-fe0000000002");
    let r = run_fast(&["-a", "h", "-o", "off", "--expect-uuid", PINNED], &sim);
    assert_eq!(r.out.code, 1);
    assert_eq!(r.out.stdout, "");
    assert_eq!(sim.calls(), ["identity"], "nothing after the identity read");
    assert!(sim.st().on, "the power is unchanged");
    assert!(
        r.out.stderr.contains(
            "Failed: The device controls a different machine than --expect-uuid names; nothing was powered"
        ) && r.out.stderr.contains(&format!(
            "cause: refusing to act on a different machine: expected uuid {PINNED}, found \
             4c414230-0000-4002-8000-fe0000000002 (as reported); no power command was sent \
             (during identity check)"
        )),
        "{}",
        r.out.stderr
    );

    // status and monitor check too: a status must not describe another machine.
    for action in ["status", "monitor", "reboot", "on"] {
        let sim = sim_reporting("4c414230-0000-4002-8000-fe0000000002");
        let r = run_fast(&["-a", "h", "-o", action, "--expect-uuid", PINNED], &sim);
        assert_eq!((r.out.code, sim.calls()), (1, vec!["identity"]), "{action}");
    }
}

#[test]
fn expect_uuid_on_stdin_and_a_device_that_cannot_report() {
    let sim = Sim::new(true);
    let stdin = format!("action=off\nip=h\npower_wait=0\nexpect_uuid={PINNED}\n");
    let r = run_env("fence_ipmilan", &[], &stdin, &sim, &AgentEnv::plain());
    assert_eq!(r.out.code, 1);
    assert_eq!(sim.calls(), ["identity"]);
    assert!(
        r.out
            .stderr
            .contains("Failed: The device cannot report the machine's identity")
            && r.out.stderr.contains("does not report a system uuid"),
        "{}",
        r.out.stderr
    );
}

#[test]
fn without_expect_uuid_the_identity_is_never_read() {
    let sim = sim_reporting("4c414230-0000-4002-8000-fe0000000002");
    let r = run_fast(&["-a", "h", "-o", "off"], &sim);
    assert_eq!(r.out.code, 0);
    assert!(!sim.calls().contains(&"identity"), "{:?}", sim.calls());
}

#[test]
fn a_malformed_expect_uuid_is_a_usage_error() {
    for action in ["off", "validate-all"] {
        let sim = Sim::new(true);
        let r = run_fast(&["-a", "h", "-o", action, "--expect-uuid", "node01"], &sim);
        assert_eq!(r.out.code, 1, "{action}");
        assert!(sim.calls().is_empty(), "{action}: nothing contacted");
        assert!(
            r.out
                .stderr
                .contains("Failed: --expect-uuid: 'node01' is not a UUID")
                && r.out.stderr.contains("Please use '-h' for usage"),
            "{action}: {}",
            r.out.stderr
        );
    }
}
