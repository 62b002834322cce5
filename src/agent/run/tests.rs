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
fn stdin_is_read_only_without_arguments() {
    let sim = Sim::new(true);
    let stdin = "# pacemaker\naction=status\nipaddr=10.0.0.9\nlogin=admin\npasswd=secret\n\
                 nodename=node1\nplug=node1\nlanplus=1\nprivlvl=operator\n";
    let r = run_env("fence_ipmilan", &[], stdin, &sim, &AgentEnv::plain());
    assert_eq!(
        (r.out.code, r.out.stdout.as_str(), r.out.stderr.as_str()),
        (0, "Status: ON\n", "")
    );
    let cfg = r.cfg.unwrap();
    assert_eq!(
        (cfg.host.as_str(), cfg.username.as_str()),
        ("10.0.0.9", "admin")
    );
    assert_eq!(cfg.password.expose(), b"secret");
    assert_eq!(cfg.version, crate::ipmi::config::Version::Lanplus);
    assert_eq!(cfg.privilege, crate::ipmi::config::Privilege::Operator);

    let r = run_env(
        "fence_ipmilan",
        &["-o", "status"],
        "ip=10.0.0.9\n",
        &sim,
        &AgentEnv::plain(),
    );
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains(" ERROR: Failed: You have to enter fence address\n"));
    assert!(r.out.stderr.contains(" ERROR: Please use '-h' for usage\n"));
}

#[test]
fn empty_stdin_fails_validation() {
    let sim = Sim::new(true);
    let r = run_env("fence_ipmilan", &[], "", &sim, &AgentEnv::plain());
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains("Failed: You have to enter fence address"));
    assert!(sim.calls().is_empty());
}

#[test]
fn plug_needs_port_as_ip_on_the_command_line_only() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &["-a", "h", "-o", "status", "-n", "node1"],
        &sim,
    );
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains(" ERROR: Parser error: option -n/--plug is not recognized\n"));
    let r = run_sim(
        "fence_ipmilan",
        &["--port-as-ip", "-n", "10.1.1.1", "-o", "status"],
        &sim,
    );
    assert_eq!(r.out.code, 0, "{}", r.out.stderr);
    assert_eq!(r.cfg.unwrap().host, "10.1.1.1");
    // On stdin, port_as_ip works by presence: even =0 turns it on.
    let r = run_env(
        "fence_ipmilan",
        &[],
        "action=status\nport_as_ip=0\nport=10.2.2.2\n",
        &sim,
        &AgentEnv::plain(),
    );
    assert_eq!(r.cfg.unwrap().host, "10.2.2.2");
}

#[test]
fn docs_actions_never_make_a_driver() {
    for args in [
        vec!["-o", "metadata"],
        vec!["-o", "meta-data"],
        vec!["-o", "manpage"],
        vec!["-h"],
        vec!["--help", "-o", "bogus"],
        vec!["-V"],
        vec!["-o", "bogus", "--version"],
    ] {
        let mut made = false;
        let out = capture(|o, e| {
            let a = args.iter().map(OsString::from).collect();
            run_with_driver("fence_ilo4", a, &b""[..], o, e, &AgentEnv::plain(), |_| {
                made = true;
                Ok(Sim::new(true))
            })
        });
        assert!(!made, "{args:?}");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{args:?}");
        assert!(!out.stdout.is_empty());
    }
    let r = run_captured("fence_ilo4", &["-V"], "", &AgentEnv::plain());
    assert_eq!(r.stdout, "4.12.1\n");
    let r = run_captured("fence_ilo4", &[], "action=meta-data\n", &AgentEnv::plain());
    assert!(r
        .stdout
        .starts_with("<?xml version=\"1.0\" ?>\n<resource-agent name=\"fence_ilo4\""));
    let r = run_captured("fence_idrac", &["-h"], "", &AgentEnv::plain());
    assert!(r.stdout.starts_with("Usage:\n\tfence_idrac [options]\n"));
}

#[test]
fn validate_all_checks_input_and_never_contacts_the_device() {
    let env = AgentEnv::plain();
    let ok = run_captured(
        "fence_ipmilan",
        &["-a", "h", "-o", "validate-all"],
        "",
        &env,
    );
    assert_eq!(
        (ok.code, ok.stdout.as_str(), ok.stderr.as_str()),
        (0, "", "")
    );
    for (args, msg) in [
        (
            vec!["-o", "validate-all"],
            "Failed: You have to enter fence address",
        ),
        (
            vec!["-a", "h", "-o", "validate-all", "--privlvl=foo"],
            "valid choice for --privlvl",
        ),
        (
            vec!["-a", "h", "-o", "validate-all", "--power-timeout=abc"],
            "not a valid time in seconds",
        ),
        (
            vec!["-a", "h", "-o", "validate-all", "-P", "-C", "1"],
            "cipher suite '1' is not supported",
        ),
        (vec!["-o", "validate-all", "--target=0x20"], "--target"),
    ] {
        let r = run_captured("fence_ipmilan", &args, "", &env);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(r.stderr.contains(msg), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(" ERROR: validate-all failed\n"),
            "{args:?}"
        );
        assert!(
            r.stderr.ends_with(" ERROR: Please use '-h' for usage\n"),
            "{args:?}"
        );
    }
    // Every problem is reported, not only the first.
    let r = run_captured(
        "fence_ipmilan",
        &["-o", "validate-all", "-L", "x", "--delay=y"],
        "",
        &env,
    );
    assert_eq!(
        r.stderr.matches(" ERROR: Failed: ").count(),
        3,
        "{}",
        r.stderr
    );
    let r = run_captured("fence_ipmilan", &["-a", "h", "-o", "bogus"], "", &env);
    assert_eq!(r.code, 1);
    assert!(r
        .stderr
        .contains(" ERROR: Failed: Unrecognised action 'bogus'\n"));
}

#[test]
fn parse_errors_exit_1_with_upstream_messages() {
    let env = AgentEnv::plain();
    for (args, msg) in [
        (
            vec!["--pass", "x"],
            "Parse error: option --pass not a unique prefix",
        ),
        (
            vec!["--lanplus=1", "-a", "h"],
            "Parse error: option --lanplus must not have an argument",
        ),
        (
            vec!["--bogus"],
            "Parse error: option --bogus not recognized",
        ),
        (vec!["-a"], "Parse error: option -a requires argument"),
        (
            vec!["--separator=,"],
            "Parse error: option --separator not recognized",
        ),
    ] {
        let r = run_captured("fence_ipmilan", &args, "", &env);
        assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{args:?}");
        assert!(
            r.stderr.contains(&format!(" ERROR: {msg}\n")),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn far_style_arguments_work_in_any_order() {
    let sim = Sim::new(true);
    let orders: [&[&str]; 3] = [
        &[
            "--password=x",
            "--lanplus",
            "--ipport=6234",
            "--action=status",
            "--ip=h",
            "--username=admin",
        ],
        &[
            "--username=admin",
            "--action=status",
            "--ip=h",
            "--lanplus",
            "--ipport=6234",
            "--password=x",
        ],
        &[
            "--action",
            "status",
            "--ip",
            "h",
            "--lanplus",
            "--password",
            "-dash",
            "--username",
            "admin",
            "--ipport",
            "6234",
        ],
    ];
    for args in orders {
        let r = run_sim("fence_ipmilan", args, &sim);
        assert_eq!(
            (r.out.code, r.out.stdout.as_str()),
            (0, "Status: ON\n"),
            "{args:?}: {}",
            r.out.stderr
        );
        let cfg = r.cfg.unwrap();
        assert_eq!(
            (cfg.port, cfg.version),
            (6234, crate::ipmi::config::Version::Lanplus)
        );
    }
    let r = run_sim(
        "fence_ipmilan",
        &["--action", "status", "--ip", "h", "--password", "-dash"],
        &sim,
    );
    assert_eq!(r.cfg.unwrap().password.expose(), b"-dash");
}

#[test]
fn positional_words_only_warn() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &["-a", "h", "-o", "status", "foo", "it's"],
        &sim,
    );
    assert_eq!(r.out.code, 0);
    assert!(
        r.out
            .stderr
            .contains(" WARNING: Unused arguments on command line: ['foo', \"it's\"]\n"),
        "{}",
        r.out.stderr
    );
}

#[test]
fn secrets_never_reach_the_output() {
    let sim = Sim::new(true);
    let r = run_fast(
        &[
            "-a", "h", "-l", "admin", "-p", "hunter2", "-o", "reboot", "-vvv",
        ],
        &sim,
    );
    assert_eq!(r.out.code, 0);
    assert!(r.out.stderr.contains(" DEBUG: "), "verbose shows details");
    assert!(r.out.stderr.contains("password [set]"), "{}", r.out.stderr);
    assert!(!r.out.stderr.contains("hunter2") && !r.out.stdout.contains("hunter2"));
}

#[test]
fn the_password_script_is_run_and_right_stripped() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &[
            "-a",
            "h",
            "-o",
            "status",
            "-p",
            "ignored",
            "-S",
            "printf 's3cret  \\n\\n'; echo noise >&2",
        ],
        &sim,
    );
    assert_eq!(r.out.code, 0, "{}", r.out.stderr);
    assert_eq!(r.cfg.unwrap().password.expose(), b"s3cret");
    assert!(!r.out.stderr.contains("noise"));
}

#[test]
fn quiet_silences_stderr_and_the_debug_file_gets_the_log() {
    let sim = Sim::new(true);
    sim.st().status_error = Some(ErrorKind::StatusUnreadable);
    let r = run_fast(&["-a", "h", "-o", "status", "-q"], &sim);
    assert_eq!((r.out.code, r.out.stderr.as_str()), (1, ""));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("debug.log");
    let p = path.to_str().unwrap();
    let r = run_fast(&["-a", "h", "-o", "status", "-q", "-v", "-D", p], &sim);
    assert_eq!(r.out.stderr, "");
    let logged = std::fs::read_to_string(&path).unwrap();
    assert!(
        logged.contains(" DEBUG: ") && logged.contains("Failed: Unable to obtain"),
        "{logged}"
    );
    let r = run_fast(
        &["-a", "h", "-o", "status", "-D", "/nonexistent/dir/x.log"],
        &sim,
    );
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains("Failed: Unable to create file /nonexistent/dir/x.log"));
}

#[test]
fn verbose_level_rules() {
    let sim = Sim::new(true);
    let r = run_env(
        "fence_ipmilan",
        &[],
        "action=status\nip=h\nverbose=0\n",
        &sim,
        &AgentEnv::plain(),
    );
    assert!(r.out.stderr.contains(
        " WARNING: Parse error: Ignoring option 'verbose' because it conflicts with verbose_level=0\n"
    ));
    assert!(!r.out.stderr.contains("DEBUG"));
    let r = run_env(
        "fence_ipmilan",
        &[],
        "action=status\nip=h\nverbose_level=2\n",
        &sim,
        &AgentEnv::plain(),
    );
    assert!(
        r.out.stderr.contains(" DEBUG: "),
        "verbose_level alone turns on debug"
    );
    let r = run_sim(
        "fence_ipmilan",
        &["-a", "h", "-o", "status", "--verbose-level=x"],
        &sim,
    );
    assert!(r
        .out
        .stderr
        .contains("must be an integer greater than or equal to 0"));
}

#[test]
fn ignored_compatibility_options_get_a_debug_line() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &[
            "-a",
            "h",
            "-o",
            "status",
            "-v",
            "--ipmitool-path=/x",
            "--use-sudo",
            "--ipmitool-timeout=5",
        ],
        &sim,
    );
    assert_eq!(r.out.code, 0);
    for o in ["--ipmitool-path", "--use-sudo"] {
        assert!(
            r.out.stderr.contains(&format!(" DEBUG: ignoring {o}: ")),
            "{o}: {}",
            r.out.stderr
        );
    }
    assert!(
        !r.out.stderr.contains("ignoring --sudo-path"),
        "defaults are not reported"
    );
    // --ipmitool-timeout is used: it bounds each IPMI request's wait
    assert!(
        !r.out.stderr.contains("ignoring --ipmitool-timeout"),
        "{}",
        r.out.stderr
    );
}

#[test]
fn list_prints_upstreams_notice() {
    let r = run_captured(
        "fence_ipmilan",
        &["-a", "h", "-o", "list-status"],
        "",
        &AgentEnv::plain(),
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "NOTICE: List option is not working on this device yet\n")
    );
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
fn policy_maps_upstream_timing() {
    let a = defs::agent("fence_ilo3").unwrap();
    let mut v = Values::new();
    v.apply_defaults(&a);
    let p = policy(&v);
    assert_eq!(p.power_wait, Duration::from_secs(4));
    assert_eq!(p.power_timeout, PowerTimeout::Polls(20));
    assert_eq!(p.step_timeout, Duration::from_secs(20));
    assert_eq!(
        (p.poll_interval, p.poll_interval_max),
        (Duration::from_secs(1), Duration::from_secs(1))
    );
    assert_eq!(
        (p.retry_on, p.confirm, p.method),
        (1, 1, RebootMethod::OnOff)
    );
    assert!(p.deadline.is_none());
    // disable_timeout (Pacemaker): only the wait for the power state is
    // lifted; every step keeps power_timeout's bound.
    v.set(Key::DisableTimeout, "true");
    v.set(Key::PowerTimeout, "7");
    let p = policy(&v);
    assert_eq!(
        (p.power_timeout, p.step_timeout),
        (PowerTimeout::Unlimited, Duration::from_secs(7))
    );
    v.set(Key::DisableTimeout, "false");
    assert_eq!(policy(&v).power_timeout, PowerTimeout::Polls(7));
    // power_timeout=0 lifts that wait too, and the steps keep the default.
    v.set(Key::PowerTimeout, "0");
    v.set(Key::Method, "CYCLE");
    v.set(Key::PowerWait, "-3");
    let p = policy(&v);
    assert_eq!(
        (p.power_timeout, p.step_timeout),
        (PowerTimeout::Unlimited, Duration::from_secs(20))
    );
    assert_eq!(
        (p.method, p.power_wait),
        (RebootMethod::Cycle, Duration::ZERO)
    );
}

#[test]
fn delay_rule() {
    let mut v = Values::new();
    v.set(Key::Delay, "0");
    assert_eq!(delay_for(&v, Action::Off, Duration::ZERO), None);
    v.set(Key::Delay, "00");
    assert_eq!(
        delay_for(&v, Action::Off, Duration::ZERO),
        Some(Duration::from_secs(1))
    );
    v.set(Key::Delay, "3");
    assert_eq!(
        delay_for(&v, Action::Reboot, Duration::from_secs(1)),
        Some(Duration::from_secs(3))
    );
    assert_eq!(delay_for(&v, Action::Status, Duration::ZERO), None);
    assert_eq!(delay_for(&v, Action::Diag, Duration::ZERO), None);
    assert_eq!(delay_for(&v, Action::Off, Duration::from_secs(9)), None);
}

#[test]
fn report_maps_every_error_kind_to_upstream_lines() {
    let fail = |kind, stage, msg: &str| {
        Err(Failure {
            error: DriverError::new(kind, stage, msg),
            last_state: Some(PowerState::On),
        })
    };
    let first = |a, m, r: &Result<Outcome, Failure>| report(a, m, r).log[0].1.clone();
    let on = RebootMethod::OnOff;
    assert_eq!(
        first(
            Action::Status,
            on,
            &fail(ErrorKind::PasswordInvalid, Stage::Authenticate, "x")
        ),
        "Failed: Unable to obtain correct plug status or plug is not available"
    );
    assert_eq!(
        first(
            Action::Off,
            on,
            &fail(ErrorKind::Timeout, Stage::Status, "x")
        ),
        "Connection timed out"
    );
    assert_eq!(
        first(
            Action::Off,
            on,
            &fail(ErrorKind::DeviceError, Stage::Command, "x")
        ),
        "Failed: Timed out waiting to power OFF"
    );
    assert_eq!(
        first(
            Action::On,
            on,
            &fail(ErrorKind::DeviceError, Stage::Wait, "x")
        ),
        "Failed: Timed out waiting to power ON"
    );
    assert_eq!(
        first(
            Action::Reboot,
            RebootMethod::Cycle,
            &fail(ErrorKind::DeviceError, Stage::Command, "x")
        ),
        "Connection timed out"
    );
    assert_eq!(
        first(
            Action::Reboot,
            RebootMethod::Cycle,
            &fail(
                ErrorKind::TransitionTimeout,
                Stage::Wait,
                "timed out waiting to power ON"
            )
        ),
        "Failed: Timed out waiting to power ON"
    );
    let r = report(
        Action::Off,
        on,
        &fail(ErrorKind::Interrupted, Stage::Wait, "stopped by a signal"),
    );
    assert_eq!(r.code, 1);
    assert!(r.log[1].1.contains("last state read: on"));
    let r = report(
        Action::Status,
        on,
        &Ok(Outcome::Status {
            state: PowerState::Off,
        }),
    );
    assert_eq!((r.stdout.as_deref(), r.code), (Some("Status: OFF"), 2));
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
