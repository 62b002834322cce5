//! The fault-injection matrix (SPEC §11, issue 8): every action over IPMI,
//! Redfish and SSH against BMCs that lose, duplicate, reorder, truncate and
//! forge datagrams, never answer, refuse, lag, stick, flap, reject the
//! credentials or answer with HTTP errors.
//!
//! One test, [`fault_injection_matrix`], runs every scenario (sections in
//! parallel threads, the runs of a scenario concurrently, each run against
//! its own simulated BMC), records runs, successes, median and maximum time
//! and a verdict per scenario, writes the table to `target/reliability.md`
//! and — with `FENCEKIT_REGENERATE=1` — to `docs/reliability.md`. Without it,
//! the test checks that `docs/reliability.md` lists every scenario it ran, so
//! the document cannot silently fall behind. Set `FENCEKIT_MATRIX_ONLY=WORD`
//! to run only the sections whose name contains WORD (nothing is written or
//! checked against the doc then).
//!
//! Rules every row keeps: no run hangs (each has a deadline and the test a
//! hard limit), and no run reports a success that the simulated chassis does
//! not confirm ("no false success": after `off` it really is off, after
//! `reboot` it really is on, `status` says what the chassis says).

mod support;

use fencekit::engine::error::ErrorKind;
use fencekit::engine::event::Discard;
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::{Action, PowerState};
use fencekit::engine::run::{run, Cancel, Failure, Outcome};
use fencekit::fleet::plan::NodePlan;
use fencekit::fleet::verify::{verify_node, Verdict, VerifyOptions, VerifyReport};
use fencekit::ipmi::config::{AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use fencekit::ipmi::driver::IpmiDriver;
use fencekit::ipmi::platform::IpmiMethod;
use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::fleet::{Lab, LabSpec};
use fencekit::lab::ipmi::{IpmiServer, Offer};
use fencekit::lab::redfish::{
    LabErrorAnswer, LabRedfish, LabTask, RedfishFaults, RedfishLabOptions, SystemBody,
};
use fencekit::method::credential::CredentialRef;
use fencekit::method::spec::MethodSpec;
use fencekit::redfish::config::{RedfishConfig, Scheme};
use fencekit::redfish::driver::RedfishDriver;
use fencekit::redfish::platform::RedfishMethod;
use fencekit::secret::Secret;
use fencekit::ssh::config::{Profile, SshAuth, SshConfig};
use fencekit::ssh::driver::SshDriver;
use fencekit::ssh::hostkey::HostKeyPolicy;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PASSWORD: &str = "matrix-pw";

/// What single runs said (their failures, mostly), kept until the end: the
/// test's output starts with the rows that failed, then these, then the
/// table, so that the head of a failing run's output names its cause.
static RUN_LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Notes one run's line in [`RUN_LOG`].
macro_rules! run_log {
    ($($t:tt)*) => {
        RUN_LOG
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!($($t)*))
    };
}

/// Runs per loss scenario (`FENCEKIT_MATRIX_RUNS` overrides, for a closer look).
fn loss_runs() -> usize {
    std::env::var("FENCEKIT_MATRIX_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

// ------------------------------------------------------------------ rows ----

/// One line of the matrix.
#[derive(Clone, Debug)]
struct Row {
    protocol: &'static str,
    scenario: String,
    action: String,
    runs: usize,
    ok: usize,
    times: Vec<Duration>,
    /// What happened, in words (kinds, stages, counters).
    result: String,
    /// The row's assertion held.
    pass: bool,
    /// Not run here (a peer is missing): left out of the doc check.
    skipped: bool,
}

impl Row {
    fn new(protocol: &'static str, scenario: impl Into<String>, action: impl Into<String>) -> Row {
        Row {
            protocol,
            scenario: scenario.into(),
            action: action.into(),
            runs: 0,
            ok: 0,
            times: Vec::new(),
            result: String::new(),
            pass: true,
            skipped: false,
        }
    }

    /// The key the doc must contain: `| protocol | scenario | action |`.
    fn key(&self) -> String {
        format!(
            "| {} | {} | {} |",
            self.protocol, self.scenario, self.action
        )
    }

    fn median(&self) -> Duration {
        let mut t = self.times.clone();
        t.sort();
        t.get(t.len() / 2).copied().unwrap_or_default()
    }

    fn max(&self) -> Duration {
        self.times.iter().max().copied().unwrap_or_default()
    }

    fn fail(&mut self, why: impl Into<String>) {
        self.pass = false;
        let why = why.into();
        if !self.result.contains(&why) {
            if !self.result.is_empty() {
                self.result.push_str("; ");
            }
            self.result.push_str("FAILED: ");
            self.result.push_str(&why);
        }
    }

    fn note(&mut self, s: impl Into<String>) {
        let s = s.into();
        if !self.result.is_empty() {
            self.result.push_str("; ");
        }
        self.result.push_str(&s);
    }
}

fn ms(d: Duration) -> String {
    if d >= Duration::from_secs(10) {
        format!("{:.1} s", d.as_secs_f64())
    } else if d >= Duration::from_secs(1) {
        format!("{:.2} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}

// ------------------------------------------------------- one action run ----

/// What one run of an action did.
struct Ran {
    result: Result<Outcome, Failure>,
    took: Duration,
    /// The chassis as the simulation sees it after the run (real power).
    truly_on: bool,
    /// The BMC's counters after the run.
    counters: fencekit::lab::bmc::Counters,
    /// The power commands the BMC received.
    log: Vec<&'static str>,
}

impl Ran {
    fn kind(&self) -> Option<ErrorKind> {
        self.result.as_ref().err().map(|f| f.error.kind)
    }

    fn error_text(&self) -> String {
        match &self.result {
            Ok(_) => String::new(),
            Err(f) => f.error.to_string(),
        }
    }

    /// The success (if any) is confirmed by the simulated chassis.
    fn no_false_success(&self, action: Action, reported_on: Option<bool>) -> Result<(), String> {
        match (&self.result, action) {
            (Err(_), _) => Ok(()),
            (Ok(Outcome::Status { state }), Action::Status) => {
                let want = reported_on.unwrap_or(self.truly_on);
                if (*state == PowerState::On) == want {
                    Ok(())
                } else {
                    Err(format!("status said {state:?}, the BMC said on={want}"))
                }
            }
            (Ok(Outcome::Reached { state } | Outcome::Already { state }), Action::Off)
                if *state == PowerState::Off =>
            {
                if self.truly_on {
                    Err("reported off while the chassis is on".into())
                } else {
                    Ok(())
                }
            }
            (Ok(Outcome::Reached { state } | Outcome::Already { state }), Action::On)
                if *state == PowerState::On =>
            {
                if self.truly_on {
                    Ok(())
                } else {
                    Err("reported on while the chassis is off".into())
                }
            }
            (Ok(Outcome::FencedNotRestored { .. }), Action::Reboot) => Ok(()),
            // Sent, no answer, nothing read since: claims nothing.
            (Ok(Outcome::OutcomeUnknown { .. }), _) => Ok(()),
            (Ok(Outcome::Rebooted), Action::Reboot) => {
                if self.truly_on {
                    Ok(())
                } else {
                    Err("reported rebooted while the chassis is off".into())
                }
            }
            (Ok(o), a) => Err(format!("unexpected outcome {o:?} for {a}")),
        }
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Native timing with an overall deadline (the CLI's defaults otherwise:
/// 10 s per step, 20 s per transition, polls from 25 ms up to 1 s, two
/// confirming reads).
fn native(deadline: Duration) -> Policy {
    Policy {
        deadline: Some(fencekit::engine::clock::Instant::now() + deadline),
        ..Policy::native()
    }
}

/// A lab IPMI BMC served in-process with a seeded random generator (so a
/// loss pattern reproduces), stopped on drop.
struct SimIpmi {
    addr: SocketAddr,
    bmc: Bmc,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SimIpmi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn sim_ipmi(on: bool, faults: Faults, seed: u64) -> SimIpmi {
    let sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = sock.local_addr().unwrap();
    let bmc = Bmc::new(on, faults);
    let offer = Offer {
        username: "admin".into(),
        password: PASSWORD.as_bytes().to_vec(),
        suites: vec![3, 17],
        guid: [0x5a; 16],
    };
    let server = IpmiServer::new(bmc.clone(), offer, seed);
    let task = tokio::spawn(server.serve(sock));
    SimIpmi { addr, bmc, task }
}

fn ipmi_cfg(addr: SocketAddr, password: &str) -> IpmiConfig {
    IpmiConfig::new(
        addr.ip().to_string(),
        addr.port(),
        "admin",
        Secret::from_str_value(password),
    )
}

async fn ipmi_run(cfg: IpmiConfig, bmc: &Bmc, action: Action, policy: &Policy) -> Ran {
    let mut d = IpmiDriver::new(cfg).expect("valid config");
    let t = Instant::now();
    let result = run(&mut d, action, policy, &mut Discard, Cancel::never()).await;
    let took = t.elapsed();
    Ran {
        result,
        took,
        truly_on: bmc.truly_on(),
        counters: bmc.counters(),
        log: bmc.log(),
    }
}

async fn redfish_run(cfg: RedfishConfig, bmc: &Bmc, action: Action, policy: &Policy) -> Ran {
    let t = Instant::now();
    let result = match RedfishDriver::new(cfg) {
        Ok(mut d) => run(&mut d, action, policy, &mut Discard, Cancel::never()).await,
        Err(e) => panic!("bad redfish config: {e}"),
    };
    let took = t.elapsed();
    Ran {
        result,
        took,
        truly_on: bmc.truly_on(),
        counters: bmc.counters(),
        log: bmc.log(),
    }
}

/// A plain-HTTP lab Redfish service on its own chassis.
async fn sim_redfish(on: bool, faults: Faults, rf: RedfishFaults) -> LabRedfish {
    let opts = RedfishLabOptions {
        password: PASSWORD.into(),
        tls: None,
        faults: rf,
        ..RedfishLabOptions::default()
    };
    LabRedfish::start("127.0.0.1:0".parse().unwrap(), Bmc::new(on, faults), opts)
        .await
        .unwrap()
}

fn redfish_cfg(addr: SocketAddr, password: &str, system: Option<String>) -> RedfishConfig {
    let mut c = RedfishConfig::new(
        &addr.ip().to_string(),
        addr.port(),
        "admin",
        Secret::from_str_value(password),
    );
    c.scheme = Scheme::Http;
    c.systems_uri = system;
    c
}

const ACTIONS: [Action; 3] = [Action::Status, Action::Off, Action::Reboot];

/// Folds runs into a row: counts, times, kinds seen, and the no-false-success check.
fn fold(row: &mut Row, action: Action, runs: &[Ran]) {
    row.runs = runs.len();
    let mut kinds: Vec<String> = Vec::new();
    for r in runs {
        row.times.push(r.took);
        match &r.result {
            Ok(Outcome::FencedNotRestored { error }) => {
                // native mode: a failure (exit 1), and the off it claims was
                // really commanded or found
                let k = "fenced (off confirmed) but not restored".to_string();
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
                run_log!(
                    "{} after {:?}: fenced, not restored: {error}",
                    row.key(),
                    r.took
                );
                if !r.log.contains(&"off")
                    && r.counters.commands > 0
                    && r.log.first() == Some(&"on")
                {
                    row.fail("claims fenced but no off was ever commanded");
                }
            }
            Ok(Outcome::OutcomeUnknown { command, reason }) => {
                // native mode: exit 3, never a success, never sent again
                let k = format!("{command} sent, outcome unknown");
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
                run_log!(
                    "{} after {:?}: outcome unknown: {reason}",
                    row.key(),
                    r.took
                );
            }
            Ok(_) => row.ok += 1,
            Err(f) => {
                run_log!("{} after {:?}: {}", row.key(), r.took, f.error);
                let k = format!(
                    "{} during {}",
                    f.error.kind.as_str(),
                    f.error.stage.as_str()
                );
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
        }
        if let Err(e) = r.no_false_success(action, None) {
            row.fail(format!("false success: {e}"));
        }
    }
    if !kinds.is_empty() {
        row.note(format!("failures: {}", kinds.join(", ")));
    }
}

// ------------------------------------------------------------ sections ----

/// IPMI, in-process lab, random loss in both directions (seeded).
fn section_ipmi_loss() -> Vec<Row> {
    // The CLI's default --timeout where success is required; 20 s at 50 %,
    // where only the absence of false successes is asserted.
    let deadline_for = |loss: f64| Duration::from_secs(if loss > 0.35 { 20 } else { 60 });
    rt().block_on(async {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let mut set = tokio::task::JoinSet::new();
                for (li, loss) in [0.1f64, 0.3, 0.5].into_iter().enumerate() {
                    for (ai, action) in ACTIONS.into_iter().enumerate() {
                        for i in 0..loss_runs() {
                            let seed = i as u64;
                            set.spawn_local(async move {
                                let faults = Faults {
                                    loss,
                                    ..Faults::default()
                                };
                                let sim = sim_ipmi(true, faults, seed).await;
                                let r = ipmi_run(
                                    ipmi_cfg(sim.addr, PASSWORD),
                                    &sim.bmc,
                                    action,
                                    &native(deadline_for(loss)),
                                )
                                .await;
                                if r.result.is_err() {
                                    run_log!("loss {loss} {action} seed {seed}: failed");
                                }
                                (li, ai, r)
                            });
                        }
                    }
                }
                let mut by: Vec<Vec<Vec<Ran>>> = (0..3)
                    .map(|_| (0..3).map(|_| Vec::new()).collect())
                    .collect();
                while let Some(j) = set.join_next().await {
                    let (li, ai, r) = j.expect("run task");
                    by[li][ai].push(r);
                }
                let mut rows = Vec::new();
                for (li, loss) in [10, 30, 50].into_iter().enumerate() {
                    for (ai, action) in ACTIONS.into_iter().enumerate() {
                        let mut row = Row::new(
                            "IPMI (lab)",
                            format!("{loss} % random loss, both directions"),
                            action.to_string(),
                        );
                        fold(&mut row, action, &by[li][ai]);
                        let deadline = deadline_for(loss as f64 / 100.0);
                        if row
                            .times
                            .iter()
                            .any(|t| *t > deadline + Duration::from_secs(1))
                        {
                            row.fail(format!(
                                "a run outlived its {} s deadline",
                                deadline.as_secs()
                            ));
                        }
                        if loss <= 30 && row.ok != row.runs {
                            row.fail(format!("{} of {} runs failed", row.runs - row.ok, row.runs));
                        }
                        if row.pass {
                            row.note(if loss <= 30 {
                                "every run succeeded within the default 60 s deadline".to_string()
                            } else {
                                "deadline 20 s; no false success".to_string()
                            });
                        }
                        rows.push(row);
                    }
                }
                rows
            })
            .await
    })
}

/// Client datagram indices (1-based, among the first `n`) that a seeded
/// pseudo-random loss of `percent` drops (the proxy drops client → BMC only).
fn seeded_drops(seed: u64, n: usize, percent: u64) -> Vec<usize> {
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    (1..=n).filter(|_| r.gen_range(0..100) < percent).collect()
}

/// IPMI, OpenIPMI `ipmi_sim` through the lossy UDP proxy, the real binary.
fn section_ipmi_sim_loss() -> Vec<Row> {
    const SIM_RUNS: usize = 3;
    if !(support::peer_available("ipmi_sim") && support::peer_available("udp_proxy")) {
        let mut r = Row::new("IPMI (ipmi_sim)", "random loss client → BMC (proxy)", "all");
        r.note("SKIPPED: ipmi_sim or python3 not installed");
        r.skipped = true;
        return vec![r];
    }
    let mut handles = Vec::new();
    for loss in [10u64, 30, 50] {
        for (ai, action) in ["status", "off", "reboot"].into_iter().enumerate() {
            handles.push(std::thread::spawn(move || {
                let sim = support::IpmiSim::start(true);
                let mut row = Row::new(
                    "IPMI (ipmi_sim)",
                    format!("{loss} % random loss client → BMC (proxy)"),
                    action,
                );
                let mut kinds = Vec::new();
                for i in 0..SIM_RUNS {
                    sim.set_power(true);
                    let seed = loss * 100 + ai as u64 * 10 + i as u64;
                    let drops = seeded_drops(seed, 300, loss);
                    let proxy = support::UdpProxy::start(Some(sim.port), &drops);
                    let target = proxy.target();
                    let args = [
                        action,
                        &target,
                        "--cipher",
                        "3",
                        "--timeout",
                        "20s",
                        "-o",
                        "json",
                    ];
                    let r = support::run(
                        support::fencekit_cmd(&args, support::PASSWORD),
                        Duration::from_secs(30),
                    );
                    row.runs += 1;
                    row.times.push(r.elapsed);
                    let on = sim.power();
                    if r.code == Some(0) {
                        row.ok += 1;
                        if (action == "off" && on) || (action == "reboot" && !on) {
                            row.fail(format!("false success: {action} but sim power={on}"));
                        }
                        if action == "status" && !r.stdout.contains("\"state\": \"on\"") {
                            row.fail("status did not read on");
                        }
                    } else {
                        run_log!("ipmi_sim {loss}% {action} seed {seed}: {}", r.stdout);
                        let e = serde_json::from_str::<serde_json::Value>(r.stdout.trim())
                            .ok()
                            .and_then(|v| {
                                v["results"][0]["error_kind"].as_str().map(str::to_string)
                            })
                            .unwrap_or_else(|| format!("exit {:?}", r.code));
                        if !kinds.contains(&e) {
                            kinds.push(e);
                        }
                    }
                    if r.timed_out {
                        row.fail("a run hung past 30 s");
                    }
                }
                if !kinds.is_empty() {
                    row.note(format!("failures: {}", kinds.join(", ")));
                }
                if loss <= 30 && row.ok != row.runs {
                    row.fail(format!("{} of {} runs failed", row.runs - row.ok, row.runs));
                }
                if row.pass {
                    row.note(if loss <= 30 {
                        "every run succeeded within --timeout 20s"
                    } else {
                        "no false success"
                    });
                }
                row
            }));
        }
    }
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|_| panicked("IPMI (ipmi_sim)")))
        .collect()
}

/// IPMI against slow BMCs and lost answers to power commands: each power
/// command is carried out exactly once (issue 14). The lab's `delay` knob
/// holds every answer in-process; `ipmi_sim` (no duplicate detection: every
/// Chassis Control it accepts runs its hook) sits behind the proxy's
/// `--delay` (answers held back) or `--drop-replies` (one answer lost).
fn section_slow_bmc() -> Vec<Row> {
    use fencekit::engine::power::RebootMethod;
    let lab = std::thread::spawn(|| {
        rt().block_on(async {
            let local = tokio::task::LocalSet::new();
            local
                .run_until(async {
                    let mut set = tokio::task::JoinSet::new();
                    for delay_ms in [400u64, 1000] {
                        for (name, action, method, on, once) in [
                            ("off", Action::Off, RebootMethod::OnOff, true, &["off"][..]),
                            ("on", Action::On, RebootMethod::OnOff, false, &["on"][..]),
                            (
                                "reboot",
                                Action::Reboot,
                                RebootMethod::OnOff,
                                true,
                                &["off", "on"][..],
                            ),
                            (
                                "reboot --method cycle",
                                Action::Reboot,
                                RebootMethod::Cycle,
                                true,
                                &["cycle"][..],
                            ),
                        ] {
                            set.spawn_local(async move {
                                let faults = Faults {
                                    delay: Duration::from_millis(delay_ms),
                                    ..Faults::default()
                                };
                                let sim = sim_ipmi(on, faults, delay_ms).await;
                                let policy = Policy {
                                    method,
                                    ..native(Duration::from_secs(30))
                                };
                                let r = ipmi_run(
                                    ipmi_cfg(sim.addr, PASSWORD),
                                    &sim.bmc,
                                    action,
                                    &policy,
                                )
                                .await;
                                (delay_ms, name, once, r)
                            });
                        }
                    }
                    let mut rows = Vec::new();
                    while let Some(j) = set.join_next().await {
                        let (delay_ms, name, once, r) = j.expect("run task");
                        let late = if delay_ms < 1000 {
                            format!("{delay_ms} ms")
                        } else {
                            "1 s".into()
                        };
                        let mut row = Row::new(
                            "IPMI (lab)",
                            format!("BMC answers {late} late (lab `delay`)"),
                            name,
                        );
                        row.runs = 1;
                        row.times.push(r.took);
                        match &r.result {
                            Ok(_) if r.log == once => {
                                row.ok = 1;
                                row.note(format!("carried out once: {}", r.log.join(", ")));
                            }
                            Ok(_) => row.fail(format!("the BMC carried out {:?}", r.log)),
                            Err(f) => row.fail(format!("{} ({:?})", f.error, r.log)),
                        }
                        rows.push(row);
                    }
                    rows
                })
                .await
        })
    });
    // The lab runs first: simulators and clients started at the same time
    // as the other sections' would starve their tight (1.5 s) deadlines.
    let mut lab_rows = lab.join().unwrap_or_else(|_| vec![panicked("IPMI (lab)")]);
    let mut rows = Vec::new();
    if support::peer_available("ipmi_sim") && support::peer_available("udp_proxy") {
        type Case = (
            &'static str,
            &'static [&'static str],
            bool,
            &'static [&'static str],
            &'static [&'static str],
        );
        const OFF: (&[&str], bool, &[&str]) = (&["off"], true, &["set power 0"]);
        const ON: (&[&str], bool, &[&str]) = (&["on"], false, &["set power 1"]);
        const CYCLE: (&[&str], bool, &[&str]) = (
            &["reboot", "--method", "cycle"],
            true,
            &["set power 0", "set power 1"],
        );
        let mut cases: Vec<(String, Case)> = Vec::new();
        for (late, arg) in [("400 ms", "400ms"), ("1 s", "1s")] {
            for (name, (args, on, once)) in
                [("off", OFF), ("on", ON), ("reboot --method cycle", CYCLE)]
            {
                let proxy: &'static [&'static str] = if arg == "1s" {
                    &["--delay", "1s"]
                } else {
                    &["--delay", "400ms"]
                };
                cases.push((
                    format!("answers {late} late (proxy)"),
                    (name, args, on, once, proxy),
                ));
            }
        }
        // the sixth answer is Chassis Control's (Open Session, RAKP 1, RAKP 3,
        // Set Session Privilege Level, Get Chassis Status come first)
        for (name, (args, on, once)) in [("off", OFF), ("reboot --method cycle", CYCLE)] {
            cases.push((
                "answer to the power command lost (proxy)".into(),
                (name, args, on, once, &["--drop-replies", "6"]),
            ));
        }
        // Four at a time, for the same reason.
        let mut cases = cases.into_iter().peekable();
        while cases.peek().is_some() {
            let handles: Vec<_> = cases
                .by_ref()
                .take(4)
                .map(|(scenario, (name, args, on, once, proxy_args))| {
                    std::thread::spawn(move || {
                        let sim = support::IpmiSim::start(on);
                        let proxy = support::UdpProxy::start_with(Some(sim.port), &[], proxy_args);
                        let target = proxy.target();
                        let mut a: Vec<&str> = args.to_vec();
                        a.extend([target.as_str(), "--cipher", "3"]);
                        let r = support::run(
                            support::fencekit_cmd(&a, support::PASSWORD),
                            Duration::from_secs(60),
                        );
                        // a cycle's power-on comes from ipmi_sim's timer; then a
                        // little longer, so that a late duplicate would show
                        support::eventually(Duration::from_secs(6), || {
                            sim.ops().len() >= once.len()
                        });
                        std::thread::sleep(Duration::from_millis(1500));
                        let ops = sim.ops();
                        let mut row = Row::new("IPMI (ipmi_sim)", scenario, name);
                        row.runs = 1;
                        row.times.push(r.elapsed);
                        // A cycle is "sent, unverified" natively (exit 3):
                        // nothing observes the node off in between.
                        let want = if name.contains("cycle") { 3 } else { 0 };
                        if r.code != Some(want) {
                            row.fail(format!("exit {:?}: {}", r.code, r.stderr.trim()));
                        } else if ops != once {
                            row.fail(format!("ipmi_sim carried out {ops:?}"));
                        } else {
                            row.ok = 1;
                            row.note(format!(
                                "carried out once: {}; {} datagrams",
                                ops.join(", "),
                                proxy.client_datagrams()
                            ));
                        }
                        row
                    })
                })
                .collect();
            rows.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| panicked("IPMI (ipmi_sim)"))),
            );
        }
    } else {
        let mut r = Row::new("IPMI (ipmi_sim)", "slow BMC (proxy)", "all");
        r.note("SKIPPED: ipmi_sim or python3 not installed");
        r.skipped = true;
        rows.push(r);
    }
    lab_rows.sort_by(|a, b| a.scenario.cmp(&b.scenario).then(a.action.cmp(&b.action)));
    lab_rows.extend(rows);
    lab_rows
}

fn panicked(protocol: &'static str) -> Row {
    let mut r = Row::new(protocol, "section", "all");
    r.fail("the section panicked (see the test output)");
    r
}

/// Expects a failure at a deadline, with the stage named.
fn deadline_row(mut row: Row, runs: &[Ran], lo: Duration, hi: Duration, words: &[&str]) -> Row {
    row.runs = runs.len();
    let mut texts = Vec::new();
    for r in runs {
        row.times.push(r.took);
        if r.result.is_ok() {
            row.ok += 1;
            row.fail("succeeded against a dead peer");
            continue;
        }
        let t = r.error_text();
        if !words.iter().any(|w| t.contains(w)) {
            row.fail(format!("message names none of {words:?}: {t}"));
        }
        if !t.contains("(during ") {
            row.fail(format!("no stage in: {t}"));
        }
        if r.took < lo || r.took > hi {
            row.fail(format!("took {:?}, expected {lo:?}..{hi:?}", r.took));
        }
        let short = r
            .result
            .as_ref()
            .err()
            .map(|f| {
                format!(
                    "{} during {}",
                    f.error.kind.as_str(),
                    f.error.stage.as_str()
                )
            })
            .unwrap_or_default();
        if !texts.contains(&short) {
            texts.push(short);
        }
    }
    if row.pass {
        row.note(format!(
            "failed at the deadline ({}..{}): {}",
            ms(lo),
            ms(hi),
            texts.join(", ")
        ));
    }
    row
}

/// A loopback address no test binds, so a port released there cannot be
/// taken again by a lab started in a parallel section (on 127.0.0.1 it can,
/// and then the "dead" peer answers).
const DEAD_HOST: &str = "127.9.9.9";

/// A UDP port on [`DEAD_HOST`] with nothing behind it (ICMP port unreachable).
fn refused_udp() -> std::net::SocketAddr {
    let s = std::net::UdpSocket::bind((DEAD_HOST, 0)).unwrap();
    s.local_addr().unwrap()
}

/// A TCP port on [`DEAD_HOST`] with nothing behind it (connection refused).
fn refused_tcp() -> std::net::SocketAddr {
    let s = TcpListener::bind((DEAD_HOST, 0)).unwrap();
    s.local_addr().unwrap()
}

/// One run against a dead peer: `proto` 0 IPMI, 1 Redfish, 2 SSH; `kind`
/// 0 black hole, 1 accepts (or owns the port) and never answers, 2 refused.
async fn dead_run(proto: usize, kind: usize, action: Action, policy: Policy) -> Ran {
    match proto {
        0 => {
            let hole = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let silent = Faults {
                silent: true,
                ..Faults::default()
            };
            let sim = sim_ipmi(true, silent, 1).await;
            let addr = match kind {
                0 => hole.local_addr().unwrap(),
                1 => sim.addr,
                _ => refused_udp(),
            };
            ipmi_run(ipmi_cfg(addr, PASSWORD), &sim.bmc, action, &policy).await
        }
        1 => {
            let hole = TcpListener::bind("127.0.0.1:0").unwrap();
            let silent = Faults {
                silent: true,
                ..Faults::default()
            };
            let lab = sim_redfish(true, silent, RedfishFaults::default()).await;
            let addr = match kind {
                0 => hole.local_addr().unwrap(),
                1 => lab.addr,
                _ => refused_tcp(),
            };
            let mut cfg = redfish_cfg(addr, PASSWORD, Some(lab.system_uri()));
            cfg.request_timeout = Duration::from_secs(10);
            redfish_run(cfg, &lab.bmc, action, &policy).await
        }
        _ => {
            let hole = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = hole.local_addr().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let mut acceptor = None;
            let mut keep = None;
            match kind {
                0 => keep = Some(hole),
                1 => {
                    let stop = stop.clone();
                    hole.set_nonblocking(true).unwrap();
                    acceptor = Some(std::thread::spawn(move || {
                        let mut held = Vec::new();
                        while !stop.load(Ordering::Relaxed) {
                            if let Ok((s, _)) = hole.accept() {
                                held.push(s);
                            }
                            std::thread::sleep(Duration::from_millis(5));
                        }
                    }));
                }
                _ => drop(hole),
            }
            let mut cfg = SshConfig::new(
                "127.0.0.1",
                "root",
                SshAuth::Password(Secret::from_str_value(PASSWORD)),
                Profile::Virsh {
                    plug: Some("vm1".into()),
                },
            );
            cfg.port = addr.port();
            cfg.host_keys = HostKeyPolicy::KnownHosts(Some(PathBuf::from("/dev/null")));
            let t = Instant::now();
            let result = match SshDriver::new(cfg) {
                Ok(mut d) => run(&mut d, action, &policy, &mut Discard, Cancel::never()).await,
                Err(e) => panic!("bad ssh config: {e}"),
            };
            let took = t.elapsed();
            stop.store(true, Ordering::Relaxed);
            if let Some(a) = acceptor {
                let _ = a.join();
            }
            drop(keep);
            Ran {
                result,
                took,
                truly_on: true,
                counters: Default::default(),
                log: Vec::new(),
            }
        }
    }
}

/// Nothing answers / accept-and-never-answer / refused, for every protocol.
fn section_dead_peers() -> Vec<Row> {
    let step = Duration::from_millis(1500);
    let (lo, hi) = (
        step - Duration::from_millis(50),
        step + Duration::from_millis(900),
    );
    let scenarios: [(&str, [&str; 3]); 3] = [
        (
            "IPMI (lab)",
            [
                "black hole (socket never answers)",
                "lab `silent` BMC",
                "connection refused (ICMP port unreachable)",
            ],
        ),
        (
            "Redfish (lab)",
            [
                "black hole (listener never accepts)",
                "lab `silent` (accepts, never answers)",
                "connection refused",
            ],
        ),
        (
            "SSH (virsh)",
            [
                "black hole (listener never accepts)",
                "accepts, never sends a banner",
                "connection refused",
            ],
        ),
    ];
    rt().block_on(async {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let mut set = tokio::task::JoinSet::new();
                for proto in 0..3 {
                    for kind in 0..3 {
                        for (ai, action) in ACTIONS.into_iter().enumerate() {
                            for _ in 0..2 {
                                let policy = Policy {
                                    step_timeout: step,
                                    ..native(Duration::from_secs(20))
                                };
                                set.spawn_local(async move {
                                    (proto, kind, ai, dead_run(proto, kind, action, policy).await)
                                });
                            }
                        }
                    }
                }
                let mut by: std::collections::BTreeMap<(usize, usize, usize), Vec<Ran>> =
                    Default::default();
                while let Some(j) = set.join_next().await {
                    let (p, k, a, r) = j.expect("task");
                    by.entry((p, k, a)).or_default().push(r);
                }
                let mut rows = Vec::new();
                for ((proto, kind, ai), runs) in by {
                    let (protocol, names) = scenarios[proto];
                    // IPMI has no connection: "refused" (ICMP) is only a hint,
                    // and the client waits for the deadline; TCP knows at once.
                    let fast = kind == 2 && proto != 0;
                    let lo = if fast { Duration::ZERO } else { lo };
                    let mut row = deadline_row(
                        Row::new(protocol, names[kind], ACTIONS[ai].to_string()),
                        &runs,
                        lo,
                        hi,
                        &[
                            "no answer",
                            "unreachable",
                            "connection refused",
                            "timed out",
                            "no result",
                        ],
                    );
                    if fast && row.pass {
                        row.result = row.result.replace(
                            &format!("failed at the deadline ({}..{})", ms(lo), ms(hi)),
                            "failed fast, no deadline wait",
                        );
                    }
                    rows.push(row);
                }
                rows
            })
            .await
    })
}

/// Slow transitions, stuck power, a flapping BMC: never a false success.
fn section_power_faults() -> Vec<Row> {
    rt().block_on(async {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                type Case = (&'static str, &'static str, Faults, Policy, Option<bool>);
                let slow = Faults {
                    transition: Duration::from_millis(1500),
                    ..Faults::default()
                };
                let slow_policy = Policy {
                    power_wait: Duration::from_millis(500),
                    ..native(Duration::from_secs(20))
                };
                let short = Policy {
                    power_timeout: PowerTimeout::Wall(Duration::from_secs(1)),
                    ..native(Duration::from_secs(20))
                };
                // (scenario, expectation, faults, policy, must succeed?)
                let cases: Vec<Case> = vec![
                    (
                        "slow transition 1.5 s > power_wait 0.5 s",
                        "waited out",
                        slow.clone(),
                        slow_policy.clone(),
                        Some(true),
                    ),
                    (
                        "transition 3 s > power_timeout 1 s",
                        "transition timeout",
                        Faults {
                            transition: Duration::from_secs(3),
                            ..Faults::default()
                        },
                        short.clone(),
                        None,
                    ),
                    (
                        "stuck power",
                        "transition timeout",
                        Faults {
                            stuck: true,
                            ..Faults::default()
                        },
                        short.clone(),
                        None,
                    ),
                    (
                        "flapping BMC (`flap`)",
                        "no false success",
                        Faults {
                            flap: true,
                            ..Faults::default()
                        },
                        short.clone(),
                        None,
                    ),
                ];
                let mut set = tokio::task::JoinSet::new();
                for (ci, (_, _, faults, policy, _)) in cases.iter().enumerate() {
                    for (ai, action) in ACTIONS.into_iter().enumerate() {
                        for proto in 0..2 {
                            for i in 0..3 {
                                let faults = faults.clone();
                                let policy = Policy {
                                    deadline: Some(
                                        fencekit::engine::clock::Instant::now()
                                            + Duration::from_secs(20),
                                    ),
                                    ..policy.clone()
                                };
                                set.spawn_local(async move {
                                    let r = if proto == 0 {
                                        let sim = sim_ipmi(true, faults, i).await;
                                        ipmi_run(
                                            ipmi_cfg(sim.addr, PASSWORD),
                                            &sim.bmc,
                                            action,
                                            &policy,
                                        )
                                        .await
                                    } else {
                                        let lab =
                                            sim_redfish(true, faults, Default::default()).await;
                                        let cfg =
                                            redfish_cfg(lab.addr, PASSWORD, Some(lab.system_uri()));
                                        redfish_run(cfg, &lab.bmc, action, &policy).await
                                    };
                                    (ci, ai, proto, r)
                                });
                            }
                        }
                    }
                }
                let mut by: std::collections::BTreeMap<(usize, usize, usize), Vec<Ran>> =
                    Default::default();
                while let Some(j) = set.join_next().await {
                    let (ci, ai, proto, r) = j.expect("task");
                    by.entry((proto, ci, ai)).or_default().push(r);
                }
                let mut rows = Vec::new();
                for ((proto, ci, ai), runs) in by {
                    let (scenario, expect, _, _, must) = &cases[ci];
                    let action = ACTIONS[ai];
                    let mut row = Row::new(
                        if proto == 0 {
                            "IPMI (lab)"
                        } else {
                            "Redfish (lab)"
                        },
                        *scenario,
                        action.to_string(),
                    );
                    fold(&mut row, action, &runs);
                    let must = if action == Action::Status {
                        Some(true)
                    } else {
                        *must
                    };
                    match must {
                        Some(true) if row.ok != row.runs => {
                            row.fail(format!("{} of {} runs failed", row.runs - row.ok, row.runs))
                        }
                        _ => {}
                    }
                    if ci == 0 && action != Action::Status {
                        // the transition was waited out, not skipped
                        if row.times.iter().any(|t| *t < Duration::from_millis(1500)) {
                            row.fail("succeeded before the transition could be seen");
                        }
                    }
                    if (ci == 1 || ci == 2) && action != Action::Status {
                        if row.ok > 0 {
                            row.fail("reported success for a transition that was not seen");
                        }
                        if runs
                            .iter()
                            .any(|r| r.kind() != Some(ErrorKind::TransitionTimeout))
                        {
                            row.fail("not every failure is a transition timeout");
                        }
                    }
                    if row.pass {
                        row.note(if action == Action::Status {
                            "status read correctly".to_string()
                        } else {
                            format!("as expected: {expect}")
                        });
                    }
                    rows.push(row);
                }
                rows
            })
            .await
    })
}

/// Wrong user, wrong password, insufficient privilege: one clean failure,
/// the cause named, authentication attempts counted at the BMC.
fn section_credentials() -> Vec<Row> {
    rt().block_on(async {
        let mut rows = Vec::new();
        let policy = || native(Duration::from_secs(20));
        type Tweak = fn(&mut IpmiConfig);
        let ipmi_cases: Vec<(&str, Tweak, ErrorKind, u64, &str)> = vec![
            (
                "wrong password, RMCP+ auto (suite 17)",
                |c| c.password = Secret::from_str_value("not-the-pw"),
                ErrorKind::PasswordInvalid,
                1,
                "password",
            ),
            (
                "wrong password, RMCP+ suite 3",
                |c| {
                    c.password = Secret::from_str_value("not-the-pw");
                    c.cipher = CipherChoice::Suite(3);
                },
                ErrorKind::PasswordInvalid,
                1,
                "password",
            ),
            (
                "wrong password, IPMI 1.5 MD5",
                |c| {
                    c.password = Secret::from_str_value("not-the-pw");
                    c.version = Version::Lan15(Some(AuthType::Md5));
                },
                ErrorKind::PasswordInvalid,
                3,
                "password",
            ),
            (
                "wrong password, IPMI 1.5 straight password",
                |c| {
                    c.password = Secret::from_str_value("not-the-pw");
                    c.version = Version::Lan15(Some(AuthType::Password));
                },
                ErrorKind::PasswordInvalid,
                3,
                "password",
            ),
            (
                "wrong username, RMCP+",
                |c| c.username = "nobody".into(),
                ErrorKind::UsernameInvalid,
                1,
                "user",
            ),
            (
                "wrong username, IPMI 1.5 MD5",
                |c| {
                    c.username = "nobody".into();
                    c.version = Version::Lan15(Some(AuthType::Md5));
                },
                ErrorKind::UsernameInvalid,
                3,
                "user",
            ),
            (
                "insufficient privilege (user level)",
                |c| c.privilege = Privilege::User,
                ErrorKind::PrivilegeNotObtained,
                1,
                "privilege",
            ),
        ];
        for (scenario, tweak, kind, max_auth, word) in ipmi_cases {
            for action in ACTIONS {
                let sim = sim_ipmi(true, Faults::default(), 7).await;
                let mut cfg = ipmi_cfg(sim.addr, PASSWORD);
                tweak(&mut cfg);
                let r = ipmi_run(cfg, &sim.bmc, action, &policy()).await;
                let mut row = Row::new("IPMI (lab)", scenario, action.to_string());
                row.runs = 1;
                row.times.push(r.took);
                let attempts = r.counters.auth_attempts;
                let privilege_status = kind == ErrorKind::PrivilegeNotObtained && action == Action::Status;
                if privilege_status {
                    // reading the state needs only user privilege
                    if r.result.is_ok() {
                        row.ok = 1;
                        row.note("status works at user level (as it should)");
                    } else {
                        row.fail(format!("status failed: {}", r.error_text()));
                    }
                } else if r.result.is_ok() {
                    row.ok = 1;
                    row.fail("succeeded with bad credentials");
                } else if r.kind() != Some(kind) {
                    row.fail(format!("expected {}, got {}", kind.as_str(), r.error_text()));
                } else if !r.error_text().contains(word) {
                    row.fail(format!("cause not named: {}", r.error_text()));
                }
                if attempts > max_auth {
                    row.fail(format!("{attempts} authentication attempts (limit {max_auth})"));
                }
                if r.took > Duration::from_secs(2) {
                    row.fail(format!("slow: {:?}", r.took));
                }
                if !r.truly_on {
                    row.fail("the chassis was powered off");
                }
                if row.pass && !privilege_status {
                    row.note(format!(
                        "{} during {}; {attempts} auth attempt(s) at the BMC (limit {max_auth}); chassis untouched",
                        kind.as_str(),
                        r.result.as_ref().err().map(|f| f.error.stage.as_str()).unwrap_or("")
                    ));
                }
                rows.push(row);
            }
        }
        // Redfish: Basic and SessionService with a wrong password (one 401,
        // no retry), and a 403 on the reset (an account without the right).
        for (scenario, session, forbidden) in [
            ("wrong password, Basic auth", false, false),
            ("wrong password, SessionService", true, false),
            ("insufficient privilege (403 on the reset)", false, true),
        ] {
            for action in ACTIONS {
                let rf = if forbidden {
                    RedfishFaults {
                        reset_error: Some(LabErrorAnswer {
                            status: 403,
                            message_id: "Base.1.8.InsufficientPrivilege".into(),
                            message: "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.".into(),
                            times: 0,
                        }),
                        ..Default::default()
                    }
                } else {
                    RedfishFaults::default()
                };
                let lab = sim_redfish(true, Faults::default(), rf).await;
                let pw = if forbidden { PASSWORD } else { "not-the-pw" };
                let mut cfg = redfish_cfg(lab.addr, pw, None);
                cfg.session_auth = session;
                let r = redfish_run(cfg, &lab.bmc, action, &policy()).await;
                let stats = lab.stats();
                let mut row = Row::new("Redfish (lab)", scenario, action.to_string());
                row.runs = 1;
                row.times.push(r.took);
                let attempts = r.counters.auth_attempts;
                if forbidden && action == Action::Status {
                    if r.result.is_ok() {
                        row.ok = 1;
                        row.note("status works (reading needs no reset right)");
                    } else {
                        row.fail(format!("status failed: {}", r.error_text()));
                    }
                } else if r.result.is_ok() {
                    row.ok = 1;
                    row.fail("succeeded");
                } else {
                    let t = r.error_text();
                    if !(t.contains("401") || t.contains("403")) {
                        row.fail(format!("status code not named: {t}"));
                    }
                    if forbidden && r.kind() != Some(ErrorKind::PrivilegeNotObtained) {
                        row.fail(format!("a 403 is not named as privilege: {t}"));
                    }
                    if forbidden && stats.resets.len() > 1 {
                        row.fail(format!("the refused reset was retried {} times", stats.resets.len()));
                    }
                    if row.pass {
                        row.note(format!(
                            "{} during {}; {} auth attempt(s) / {} request(s) at the BMC; chassis untouched",
                            r.kind().map(|k| k.as_str()).unwrap_or(""),
                            r.result.as_ref().err().map(|f| f.error.stage.as_str()).unwrap_or(""),
                            attempts,
                            stats.requests
                        ));
                    }
                }
                if attempts > 1 {
                    row.fail(format!("{attempts} failed authentications at the BMC (limit 1)"));
                }
                if !r.truly_on {
                    row.fail("the chassis was powered off");
                }
                rows.push(row);
            }
        }
        rows
    })
}

/// A canned HTTP server: every request gets the same raw answer.
struct Canned {
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Canned {
    fn start(answer: String) -> Canned {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let addr = l.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (rq, st) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((s, _)) => {
                        let _ = s.set_nonblocking(false);
                        serve_canned(s, &answer, &rq);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        Canned {
            addr,
            requests,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Canned {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve_canned(mut s: TcpStream, answer: &str, requests: &AtomicU64) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                break;
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    requests.fetch_add(1, Ordering::Relaxed);
    let _ = s.write_all(answer.as_bytes());
    let _ = s.flush();
}

fn raw_answer(status: &str, content_type: Option<&str>, body: &str, extra: &str) -> String {
    let ct = content_type
        .map(|c| format!("Content-Type: {c}\r\n"))
        .unwrap_or_default();
    format!(
        "HTTP/1.1 {status}\r\n{ct}{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Redfish error answers: 401/403/404/500/503 with a Redfish JSON error
/// (lab, on the reset) and without a body (canned, on the first GET),
/// a non-JSON body, redirects, and 202 + a task that fails.
fn section_redfish_answers() -> Vec<Row> {
    let step = Duration::from_millis(1500);
    let policy = move || Policy {
        step_timeout: step,
        power_timeout: PowerTimeout::Wall(Duration::from_secs(2)),
        ..native(Duration::from_secs(6))
    };
    rt().block_on(async {
        let mut rows = Vec::new();
        // JSON error bodies from the lab, on every reset.
        for (status, id, message, expect) in [
            (
                401,
                "Base.1.8.NoValidSession",
                "There is no valid session established with the implementation.",
                "rejected the credentials",
            ),
            (
                403,
                "Base.1.8.InsufficientPrivilege",
                "There are insufficient privileges for the account.",
                "http 403",
            ),
            (
                404,
                "Base.1.8.ResourceMissingAtURI",
                "The resource at the URI was not found.",
                "http 404",
            ),
            (
                500,
                "Base.1.8.InternalError",
                "The request failed due to an internal service error.",
                "http 500",
            ),
            (
                503,
                "Base.1.8.ServiceTemporarilyUnavailable",
                "The service is temporarily unavailable.",
                "http 503",
            ),
        ] {
            for action in [Action::Off, Action::Reboot] {
                let lab = sim_redfish(
                    true,
                    Faults::default(),
                    RedfishFaults {
                        reset_error: Some(LabErrorAnswer {
                            status,
                            message_id: id.into(),
                            message: message.into(),
                            times: 0,
                        }),
                        ..Default::default()
                    },
                )
                .await;
                let cfg = redfish_cfg(lab.addr, PASSWORD, Some(lab.system_uri()));
                let r = redfish_run(cfg, &lab.bmc, action, &policy()).await;
                let resets = lab.stats().resets.len();
                let mut row = Row::new(
                    "Redfish (lab)",
                    format!("reset answers {status} with a Redfish JSON error"),
                    action.to_string(),
                );
                row.runs = 1;
                row.times.push(r.took);
                if r.result.is_ok() {
                    row.ok = 1;
                    row.fail("succeeded");
                } else if !r.error_text().contains(expect) {
                    row.fail(format!("{expect:?} not in: {}", r.error_text()));
                }
                if !r.truly_on {
                    row.fail("the chassis was powered off");
                }
                if r.took > Duration::from_secs(7) {
                    row.fail("outlived the 6 s deadline");
                }
                if row.pass {
                    row.note(format!(
                        "{} during {}; {resets} reset request(s){}",
                        r.kind().map(|k| k.as_str()).unwrap_or(""),
                        r.result
                            .as_ref()
                            .err()
                            .map(|f| f.error.stage.as_str())
                            .unwrap_or(""),
                        if resets > 1 {
                            " (busy: retried within the deadline)"
                        } else {
                            " (not retried)"
                        }
                    ));
                }
                rows.push(row);
            }
        }
        // Raw answers without a Redfish body, on the first request.
        let cases: Vec<(&str, String, &str)> = vec![
            (
                "401 without a body",
                raw_answer(
                    "401 Unauthorized",
                    None,
                    "",
                    "WWW-Authenticate: Basic realm=\"x\"\r\n",
                ),
                "http 401",
            ),
            (
                "403 without a body",
                raw_answer("403 Forbidden", None, "", ""),
                "http 403",
            ),
            (
                "404 without a body",
                raw_answer("404 Not Found", None, "", ""),
                "http 404",
            ),
            (
                "500 without a body",
                raw_answer("500 Internal Server Error", None, "", ""),
                "http 500",
            ),
            (
                "503 without a body",
                raw_answer("503 Service Unavailable", None, "", ""),
                "http 503",
            ),
            (
                "503 with an HTML body",
                raw_answer(
                    "503 Service Unavailable",
                    Some("text/html"),
                    "<html><body>busy</body></html>",
                    "",
                ),
                "http 503",
            ),
            (
                "200 with a non-JSON body",
                raw_answer(
                    "200 OK",
                    Some("text/html"),
                    "<html><body>Login</body></html>",
                    "",
                ),
                "not json",
            ),
            (
                "200 with truncated JSON",
                raw_answer(
                    "200 OK",
                    Some("application/json"),
                    "{\"PowerState\": \"O",
                    "",
                ),
                "not json",
            ),
            (
                "301 redirect elsewhere",
                raw_answer(
                    "301 Moved Permanently",
                    None,
                    "",
                    "Location: http://127.0.0.1:9/redfish/v1/Systems/1\r\n",
                ),
                "http 301",
            ),
            (
                "307 redirect to itself",
                raw_answer(
                    "307 Temporary Redirect",
                    None,
                    "",
                    "Location: /redfish/v1/Systems/1\r\n",
                ),
                "http 307",
            ),
        ];
        for (scenario, answer, expect) in cases {
            for action in [Action::Status, Action::Off] {
                let canned = Canned::start(answer.clone());
                let bmc = Bmc::new(true, Faults::default());
                let cfg = redfish_cfg(canned.addr, PASSWORD, Some("/redfish/v1/Systems/1".into()));
                let r = redfish_run(cfg, &bmc, action, &policy()).await;
                let n = canned.requests.load(Ordering::Relaxed);
                let mut row = Row::new("Redfish (canned HTTP)", scenario, action.to_string());
                row.runs = 1;
                row.times.push(r.took);
                if r.result.is_ok() {
                    row.ok = 1;
                    row.fail("succeeded");
                } else if !r.error_text().to_lowercase().contains(expect) {
                    row.fail(format!("{expect:?} not in: {}", r.error_text()));
                }
                if r.took > Duration::from_secs(7) {
                    row.fail("outlived the 6 s deadline");
                }
                if scenario.starts_with("401") && n > 1 {
                    row.fail(format!("{n} requests after a 401 (credentials retried)"));
                }
                if row.pass {
                    row.note(format!(
                        "{} during {}; {n} request(s)",
                        r.kind().map(|k| k.as_str()).unwrap_or(""),
                        r.result
                            .as_ref()
                            .err()
                            .map(|f| f.error.stage.as_str())
                            .unwrap_or(""),
                    ));
                }
                rows.push(row);
            }
        }
        // 202 + a task that ends in Exception.
        for action in [Action::Off, Action::Reboot] {
            let lab = sim_redfish(
                true,
                Faults::default(),
                RedfishFaults {
                    task: Some(LabTask {
                        polls: 1,
                        fail: true,
                    }),
                    ..Default::default()
                },
            )
            .await;
            let cfg = redfish_cfg(lab.addr, PASSWORD, Some(lab.system_uri()));
            let r = redfish_run(cfg, &lab.bmc, action, &policy()).await;
            let mut row = Row::new(
                "Redfish (lab)",
                "202 + a task that fails",
                action.to_string(),
            );
            row.runs = 1;
            row.times.push(r.took);
            if r.result.is_ok() {
                row.ok = 1;
                row.fail("succeeded");
            } else if !r.error_text().contains("task failed") {
                row.fail(format!("not named: {}", r.error_text()));
            }
            if !r.truly_on {
                row.fail("the chassis was powered off");
            }
            if row.pass {
                row.note(format!(
                    "{}: reset task failed, chassis untouched",
                    r.kind().map(|k| k.as_str()).unwrap_or("")
                ));
            }
            rows.push(row);
        }
        // A huge body (4 MiB) is refused at 1 MiB.
        {
            let lab = sim_redfish(
                true,
                Faults::default(),
                RedfishFaults {
                    system_body: SystemBody::Huge(4 << 20),
                    ..Default::default()
                },
            )
            .await;
            let cfg = redfish_cfg(lab.addr, PASSWORD, Some(lab.system_uri()));
            let r = redfish_run(cfg, &lab.bmc, Action::Status, &policy()).await;
            let mut row = Row::new("Redfish (lab)", "4 MiB system resource", "status");
            row.runs = 1;
            row.times.push(r.took);
            if r.result.is_ok() {
                row.ok = 1;
                row.fail("accepted");
            } else if !r.error_text().contains("larger than 1024 KiB") {
                row.fail(format!("not capped: {}", r.error_text()));
            } else {
                row.note("protocol error: body larger than 1024 KiB refused");
            }
            rows.push(row);
        }
        rows
    })
}

// ----------------------------------------------------- datagram relay ----

/// What the relay does to the datagrams it carries.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mangle {
    /// Every datagram, both directions, is delivered twice at once.
    Duplicate,
    /// Every answer is delivered again 300 ms later (a stale copy arrives
    /// during a later exchange).
    DelayedDuplicate,
    /// One answer in four is held 400-800 ms, the others up to 20 ms: the
    /// client re-sends, and a later answer overtakes the held one.
    Reorder,
    /// Every answer is preceded by a copy cut at a random length.
    Truncate,
    /// Every in-session answer is preceded by three forgeries: wrong session
    /// ID, bad integrity code, and a replay of the previous in-session answer.
    ForgeBefore,
    /// In-session answers are replaced by a copy with a wrong session ID.
    OnlyWrongSession,
    /// In-session answers are replaced by a copy with a bad integrity code.
    OnlyBadIntegrity,
    /// In-session answers after the first are replaced by the first (replayed
    /// sequence number).
    OnlyReplay,
    /// In-session answers are replaced by truncated copies.
    OnlyTruncated,
}

impl Mangle {
    fn describe(self) -> &'static str {
        match self {
            Mangle::Duplicate => "every datagram duplicated (both directions)",
            Mangle::DelayedDuplicate => "every answer replayed 300 ms later",
            Mangle::Reorder => "answers reordered (one in four held 400-800 ms)",
            Mangle::Truncate => "a truncated copy before every answer",
            Mangle::ForgeBefore => {
                "forged copies (wrong session ID, bad integrity, replayed sequence) before every in-session answer"
            }
            Mangle::OnlyWrongSession => "in-session answers only with a wrong session ID",
            Mangle::OnlyBadIntegrity => "in-session answers only with a bad integrity code",
            Mangle::OnlyReplay => "in-session answers only as replays of an earlier one",
            Mangle::OnlyTruncated => "in-session answers only truncated",
        }
    }

    /// The real answers still get through.
    fn delivers(self) -> bool {
        !matches!(
            self,
            Mangle::OnlyWrongSession
                | Mangle::OnlyBadIntegrity
                | Mangle::OnlyReplay
                | Mangle::OnlyTruncated
        )
    }
}

/// An authenticated RMCP+ IPMI payload inside a session.
fn in_session(d: &[u8]) -> bool {
    d.len() > 20
        && d[4] == 0x06
        && d[5] & 0x3f == 0
        && u32::from_le_bytes([d[6], d[7], d[8], d[9]]) != 0
}

/// A UDP relay between one client and a BMC that mangles datagrams.
struct Relay {
    addr: SocketAddr,
    injected: Rc<std::cell::Cell<u64>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(bmc: SocketAddr, mode: Mangle, seed: u64) -> Relay {
    let front = Rc::new(tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap());
    let back = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    back.connect(bmc).await.unwrap();
    let addr = front.local_addr().unwrap();
    let injected = Rc::new(std::cell::Cell::new(0u64));
    let inj = injected.clone();
    let task = tokio::task::spawn_local(async move {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut client: Option<SocketAddr> = None;
        let mut first_in_session: Option<Vec<u8>> = None;
        let mut previous_in_session: Option<Vec<u8>> = None;
        let (mut a, mut b) = (vec![0u8; 2048], vec![0u8; 2048]);
        let mut arrived = 0u64;
        let sent_max = Rc::new(std::cell::Cell::new(0u64));
        loop {
            tokio::select! {
                r = front.recv_from(&mut a) => {
                    let Ok((n, from)) = r else { continue };
                    client = Some(from);
                    let _ = back.send(&a[..n]).await;
                    if mode == Mangle::Duplicate {
                        let _ = back.send(&a[..n]).await;
                        inj.set(inj.get() + 1);
                    }
                }
                r = back.recv(&mut b) => {
                    let Ok(n) = r else { continue };
                    let Some(to) = client else { continue };
                    let d = b[..n].to_vec();
                    let session = in_session(&d);
                    let mut out: Vec<(Duration, Vec<u8>)> = Vec::new();
                    let forge_sid = |d: &[u8]| { let mut f = d.to_vec(); f[6] ^= 0x5a; f[7] ^= 0xa5; f };
                    let forge_icv = |d: &[u8]| { let mut f = d.to_vec(); let l = f.len(); f[l - 1] ^= 0x01; f };
                    match mode {
                        Mangle::Duplicate => {
                            out.push((Duration::ZERO, d.clone()));
                            out.push((Duration::ZERO, d.clone()));
                        }
                        Mangle::DelayedDuplicate => {
                            out.push((Duration::ZERO, d.clone()));
                            out.push((Duration::from_millis(300), d.clone()));
                        }
                        Mangle::Reorder => {
                            // counted as injected when it is overtaken (below)
                            // Mostly prompt, sometimes well beyond the
                            // round trip the client measured: it re-sends,
                            // and the prompt answer overtakes the held one.
                            let hold = Duration::from_millis(if rng.gen_range(0..4) == 0 {
                                rng.gen_range(400..800)
                            } else {
                                rng.gen_range(0..20)
                            });
                            arrived += 1;
                            let (idx, f, sent, inj) = (arrived, front.clone(), sent_max.clone(), inj.clone());
                            tokio::task::spawn_local(async move {
                                tokio::time::sleep(hold).await;
                                if idx < sent.get() {
                                    inj.set(inj.get() + 1);
                                }
                                sent.set(sent.get().max(idx));
                                let _ = f.send_to(&d, to).await;
                            });
                            continue;
                        }
                        Mangle::Truncate => {
                            let cut = rng.gen_range(1..d.len());
                            out.push((Duration::ZERO, d[..cut].to_vec()));
                            out.push((Duration::ZERO, d.clone()));
                        }
                        Mangle::ForgeBefore => {
                            if session {
                                out.push((Duration::ZERO, forge_sid(&d)));
                                out.push((Duration::ZERO, forge_icv(&d)));
                                if let Some(p) = &previous_in_session {
                                    out.push((Duration::ZERO, p.clone()));
                                }
                            }
                            out.push((Duration::ZERO, d.clone()));
                        }
                        Mangle::OnlyWrongSession => {
                            out.push((Duration::ZERO, if session { forge_sid(&d) } else { d.clone() }));
                        }
                        Mangle::OnlyBadIntegrity => {
                            out.push((Duration::ZERO, if session { forge_icv(&d) } else { d.clone() }));
                        }
                        Mangle::OnlyReplay => {
                            let send = match (&first_in_session, session) {
                                (Some(f), true) => f.clone(),
                                _ => d.clone(),
                            };
                            out.push((Duration::ZERO, send));
                        }
                        Mangle::OnlyTruncated => {
                            let send = if session { d[..rng.gen_range(1..d.len())].to_vec() } else { d.clone() };
                            out.push((Duration::ZERO, send));
                        }
                    }
                    if session {
                        if first_in_session.is_none() {
                            first_in_session = Some(d.clone());
                        }
                        previous_in_session = Some(d.clone());
                    }
                    inj.set(inj.get() + out.iter().filter(|(_, x)| *x != d).count() as u64
                        + u64::from(out.iter().filter(|(_, x)| *x == d).count() > 1));
                    for (delay, x) in out {
                        if delay.is_zero() {
                            let _ = front.send_to(&x, to).await;
                        } else {
                            let f = front.clone();
                            tokio::task::spawn_local(async move {
                                tokio::time::sleep(delay).await;
                                let _ = f.send_to(&x, to).await;
                            });
                        }
                    }
                }
            }
        }
    });
    Relay {
        addr,
        injected,
        task,
    }
}

/// Duplicated, reordered, truncated and forged RMCP+ datagrams against a
/// live exchange (an in-process relay between our client and the lab).
fn section_datagrams() -> Vec<Row> {
    rt().block_on(async {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let modes = [
                    Mangle::Duplicate,
                    Mangle::DelayedDuplicate,
                    Mangle::Reorder,
                    Mangle::Truncate,
                    Mangle::ForgeBefore,
                    Mangle::OnlyWrongSession,
                    Mangle::OnlyBadIntegrity,
                    Mangle::OnlyReplay,
                    Mangle::OnlyTruncated,
                ];
                let mut set = tokio::task::JoinSet::new();
                for (mi, mode) in modes.into_iter().enumerate() {
                    for (ai, action) in ACTIONS.into_iter().enumerate() {
                        let runs = if mode.delivers() { 5 } else { 1 };
                        for i in 0..runs {
                            set.spawn_local(async move {
                                let sim = sim_ipmi(true, Faults::default(), 11 + i).await;
                                let rl = relay(sim.addr, mode, 100 * mi as u64 + 10 * ai as u64 + i).await;
                                let policy = Policy {
                                    // a short step bound only where the answers never come
                                    step_timeout: if mode.delivers() {
                                        Duration::from_secs(10)
                                    } else {
                                        Duration::from_millis(1500)
                                    },
                                    ..native(Duration::from_secs(20))
                                };
                                let r = ipmi_run(ipmi_cfg(rl.addr, PASSWORD), &sim.bmc, action, &policy).await;
                                (mi, ai, r, rl.injected.get())
                            });
                        }
                    }
                }
                let mut by: std::collections::BTreeMap<(usize, usize), Vec<(Ran, u64)>> =
                    Default::default();
                while let Some(j) = set.join_next().await {
                    let (mi, ai, r, inj) = j.expect("task");
                    by.entry((mi, ai)).or_default().push((r, inj));
                }
                let mut rows = Vec::new();
                for ((mi, ai), runs) in by {
                    let mode = modes[mi];
                    let action = ACTIONS[ai];
                    let injected: u64 = runs.iter().map(|(_, i)| i).sum();
                    let runs: Vec<Ran> = runs.into_iter().map(|(r, _)| r).collect();
                    let mut row = Row::new("IPMI (lab, relay)", mode.describe(), action.to_string());
                    fold(&mut row, action, &runs);
                    if injected == 0 {
                        row.fail("the relay injected nothing");
                    }
                    if mode.delivers() {
                        if row.ok != row.runs {
                            row.fail(format!("{} of {} runs failed", row.runs - row.ok, row.runs));
                        }
                        if row.pass {
                            row.note(if mode == Mangle::Reorder {
                                format!("every run succeeded; {injected} answer(s) overtaken by later ones")
                            } else {
                                format!("every run succeeded; {injected} injected datagram(s) ignored")
                            });
                        }
                    } else {
                        if row.ok > 0 {
                            row.fail("a forged or broken answer was accepted");
                        }
                        if row.pass {
                            row.note(format!(
                                "nothing accepted: timed out; {injected} bad datagram(s) ignored"
                            ));
                        }
                    }
                    rows.push(row);
                }
                rows
            })
            .await
    })
}

// ---------------------------------------------------------------- doc ----

const HEADER: &str = "\
# Reliability: measured behaviour under faults

This file is generated by `tests/reliability.rs`
(`FENCEKIT_REGENERATE=1 cargo test --test reliability`); `cargo test` checks
that it still lists every scenario the test runs. Edit the prose in the test.

## How the figures were made

* Each row is one scenario × one action. *runs* is how many times it ran,
  each against its own simulated BMC (the lab's IPMI and Redfish services
  in-process, on loopback; OpenIPMI `ipmi_sim` behind the lossy UDP proxy of
  `tests/peers/udp_proxy.py`; a canned HTTP server; TCP listeners that never
  answer), all runs of a section concurrently on one thread.
* Timing is the client's: the engine with native-mode defaults (10 s per
  step, 20 s per transition, polls from 25 ms growing to 1 s, two confirming
  reads, IPMI retransmission after the measured round trip — at least
  250 ms, 500 ms before the first answer — growing ×1.5 to 1 s, or to the
  round-trip time on a slower BMC; power commands re-read the chassis
  before any re-send); an overall
  deadline of 60 s (the CLI's default) for the 10 % and 30 % loss rows, 20 s
  elsewhere (6 s for the HTTP-error rows); a 1 s power timeout where a
  transition is meant not to be seen; and for the dead-peer, HTTP-error and
  forged-only rows a step bound of 1.5 s (the `--login-timeout`) so that
  \"fails at the deadline\" is measurable.
* Random loss is seeded (the lab's generator for the in-process BMCs, a
  seeded drop list for the proxy), so a failing run reproduces.
* \"No false success\" is checked on every row: after a reported `off` the
  simulated chassis really is off, after `reboot` really on, and `status`
  says what the chassis says. Rows marked FAILED broke an assertion.
* Figures come from a shared 2-core machine; absolute times vary, the
  verdicts do not.

## The matrix

| protocol | scenario | action | runs | successes | median | max | result |
|---|---|---|---:|---:|---:|---:|---|
";

const PROSE: &str = "
## Beyond the matrix: secrets, signals, resources

**Secrets** (`tests/secrets.rs`). A distinctive password that the lab
accepts, and one it rejects, are passed every supported way — native
`--password` (argv), `--password-file`, `--password-env`, `--password-script`,
`FENCEKIT_PASSWORD`, inventory `password_file` / `password_env` /
`password_script`; agent argv `--password=`, stdin `password=` and `passwd=`,
`--password-script` — and every action (status, on, off, reboot, monitor,
verify, check; agent status, off, reboot, monitor, validate-all) runs at
`-vvv` (agent `-v -v -v`), with `--output json` and `--audit`, over IPMI
RMCP+, IPMI 1.5 straight-password auth and Redfish Basic auth, on success and
on failure paths (wrong password, unreachable BMC, stuck power). The test
asserts that the password, in clear, hex (both cases) and base64 (alone and
as the `user:password` of HTTP Basic), never appears in stdout, stderr or the
audit file, and that fencekit never runs a child process except the password
script's `sh`, whose command line does not contain it (`/proc` is sampled for
children of the fencekit process throughout, including during a slow
`--transition 1s` action). `--password` on the command line prints exactly one
warning line in native mode and none in agent mode (upstream agents take it
there). Passwords, Basic-auth headers, session keys and tokens are held in
`Secret` (`zeroize`) and wiped on drop; that is not tested.

**Signals and restarts** (`tests/signals.rs`). SIGKILL lands at about 5, 50,
200, 400 and 700 ms into a native `reboot` and an agent
`fence_ipmilan -o reboot` against a BMC whose transitions take 300 ms; after
each kill a fresh reboot exits 0 with the chassis on, and no process of the
killed run is left. SIGTERM and SIGINT during an `off` against stuck power
stop the run well before its deadline with exit 1, the last known state
reported, and the BMC session closed (the lab counts sessions opened and
closed). No child process appears at any time. The agent fences with cwd `/`,
`HOME` and `XDG_RUNTIME_DIR` unset and — as root — inside a mount namespace
whose root file system is read-only, where the native CLI's per-BMC lock is
skipped with a debug line.

**Resource bounds** (`tests/resources.rs`). `fencekit status --all
--parallel 256 --login-timeout 1s` over 1,000 lab BMCs that never answer
finishes in about 4.7 s (four waves), every node failing with a timeout, with
a peak resident set (`VmHWM`) of about 29 MiB (asserted < 100 MiB) and at most
523 open file descriptors (asserted ≤ 2 × `parallel` + 32: each target in
flight holds its UDP socket and its lock file). A Redfish body that never
ends (chunked, no length) is cut at 1 MiB: the CLI fails in ~50 ms naming the
cap, with a peak resident set of ~21 MiB; a body announced larger than 1 MiB
is refused before it is read (matrix row \"4 MiB system resource\").

## Notes on the figures

* 30 % loss in both directions is harsher than the proxy's client → BMC
  loss: an exchange succeeds with probability 0.49 per try. A longer sample
  (`FENCEKIT_MATRIX_RUNS=40`) gave 120 of 120 successes at 30 %; with other
  seeds, one run in a few hundred fails when a single request goes unanswered
  for a whole `--login-timeout` (12 tries in 10 s, p ≈ 3 × 10⁻⁴ per
  exchange). A session set-up is several exchanges in a row under one
  login timeout, and the CI run of 2026-11-24 saw one outlast it (suite 17's
  RAKP 1 unanswered for 10 s, 30 % loss each way; a simulation of the
  back-off puts it near one set-up in a hundred). Since then a set-up that
  runs out after the BMC answered part of it starts again, once, with a
  fresh login timeout if the action's deadline leaves room (the engine asks
  the driver; only IPMI says yes so far). Once only, because a fleet node's
  levels share its deadline: a lossy first level takes at most two login
  timeouts and leaves the next level the rest. A BMC that answers nothing
  still fails at the first login timeout, and the agents (no action
  deadline) never retry. Retransmission backs off to 1 s at most on a fast BMC (it was
  2 s, which made about one action in ten miss the session set-up bound at
  this loss).
* Slow BMCs: the wait for an answer follows the BMC's round-trip time,
  measured on every answer whose transmission is known (set-up messages
  carry a fresh tag, reads a fresh rqSeq per transmission), so a BMC that
  answers 400 ms or 1 s late is not sent its power command twice. A power
  command whose answer is lost is not re-sent before the chassis is read:
  if the reading shows the command took effect (off, on, or a cycle seen
  off) that is the answer. `ipmi_sim`, which has no duplicate-request
  detection, carried out each command exactly once in these rows; before
  the change it carried out off, on and cycle twice behind 400 ms and
  three times behind 1 s (upstream `fence_ipmilan`, through ipmitool's
  `-N 2`: once).
* At 50 % loss most failures are the 10 s step bound during session set-up;
  a reboot whose off was confirmed but whose power-on could not be confirmed
  is reported as \"fenced, not restored\" (exit 1), never as success; an off
  whose answer never came and whose state could not be read since is
  \"sent, outcome unknown\" (exit 3; never sent again, issue 23).
* IPMI has no connection: an ICMP port-unreachable is only a hint, so a
  closed port fails at the step deadline like a black hole, with a message
  that says the port is unreachable. TCP (Redfish, SSH) knows at once.
* The SSH rows use the `virsh` profile with no server behind the port (the
  driver never gets past the TCP connection or the banner); an SSH server is
  exercised in `tests/interop_ssh.rs`.
* The `verify (lab)` rows send \"off\" to a lab node (IPMI and Redfish on one
  chassis) and verify it in-process: 2 reads per channel 100 ms apart, 300 ms
  probes of its simulated host. A powered-off host is silent (the lab drops
  its SYNs with a socket filter, or with a full accept queue where a filter
  is refused to the user: no SYN-ACK, no RST); `host-rst` answers RST
  (kernel up, service down), which is a sign of life, never evidence of off.
  Two channels to one BMC are one witness, and its power meter is its own
  word: without a probe the verdict is `bmc-only` (exit 3 unless accepted).
  The SSH host-profile rows need no server: nothing listens, or the name
  does not resolve.
* `ipmi_sim` rows need OpenIPMI and Python; without them they are skipped
  (and `FENCEKIT_REQUIRE_PEERS=1` turns that into a failure).
";

// ------------------------------------------------------------- verify ----

/// One verification scenario: the lab's node (IPMI and plain-HTTP Redfish
/// on one chassis, optionally its simulated host) is sent "off", then
/// verified in-process.
async fn verify_run(faults: Faults, hosts: bool, accept: bool) -> (VerifyReport, Duration) {
    let spec = LabSpec {
        nodes: 1,
        password: PASSWORD.into(),
        redfish: Some(false),
        hosts: hosts.then_some((0, Duration::from_millis(200))),
        faults,
        ..LabSpec::default()
    };
    let lab = Lab::start(&spec).await.expect("lab");
    let n = &lab.nodes[0];
    // The power-off command, accepted (a lying BMC only claims it).
    n.bmc().lock().control(0);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rf = n.redfish.as_ref().expect("redfish");
    let secret = || CredentialRef::Inline(Secret::from_str_value(PASSWORD));
    let plan = NodePlan {
        name: n.name.clone(),
        address: n.host.as_ref().map(|h| h.addr.ip().to_string()),
        probe_ports: n
            .host
            .as_ref()
            .map(|h| vec![h.addr.port()])
            .unwrap_or_default(),
        levels: vec![
            MethodSpec::Device(IpmiMethod::boxed(ipmi_cfg(n.addr(), PASSWORD), secret())),
            MethodSpec::Device(RedfishMethod::boxed(
                redfish_cfg(rf.addr, PASSWORD, Some(rf.system_uri())),
                secret(),
            )),
        ],
        accept_bmc_only: accept,
        ..NodePlan::default()
    };
    let opts = VerifyOptions {
        samples: 2,
        interval: Duration::from_millis(100),
        probe_timeout: Duration::from_millis(300),
        step_timeout: Duration::from_secs(1),
        ..VerifyOptions::new(PowerState::Off)
    };
    let t = Instant::now();
    let rep = verify_node(&plan, &opts).await;
    (rep, t.elapsed())
}

/// Proof that holds: a lying BMC, a live kernel, a meter and missing
/// witnesses against `verify`'s verdicts; the SSH host profile against hosts
/// it cannot reach.
fn section_verify() -> Vec<Row> {
    let f = |edit: fn(&mut Faults)| {
        let mut x = Faults::default();
        edit(&mut x);
        x
    };
    let cases: Vec<(&str, Faults, bool, bool, Verdict, i32)> = vec![
        (
            "honest BMC, host silent once off",
            Faults::default(),
            true,
            false,
            Verdict::Proven,
            0,
        ),
        (
            "lying BMC (claims off), host accepts",
            f(|x| x.lying = true),
            true,
            false,
            Verdict::Contradiction,
            3,
        ),
        (
            "lying BMC, host kernel up, service down (RST)",
            f(|x| {
                x.lying = true;
                x.host_rst = true
            }),
            true,
            false,
            Verdict::Contradiction,
            3,
        ),
        (
            "BMC off, the address still served (host-alive)",
            f(|x| x.host_alive = true),
            true,
            false,
            Verdict::Contradiction,
            3,
        ),
        (
            "BMC off, no probe, no power meter",
            f(|x| x.no_meter = true),
            false,
            false,
            Verdict::BmcOnly,
            3,
        ),
        (
            "same, BMC-only proof accepted",
            f(|x| x.no_meter = true),
            false,
            true,
            Verdict::BmcOnly,
            0,
        ),
        (
            "BMC off, host silent, meter reads a running machine (draw-lies)",
            f(|x| x.draw_lies = true),
            true,
            false,
            Verdict::Contradiction,
            3,
        ),
        (
            // The BMC's own meter is its word: it never proves (issue 23).
            "BMC off, no probe, meter at standby",
            Faults::default(),
            false,
            false,
            Verdict::BmcOnly,
            3,
        ),
        (
            "IPMI channel unreadable (Redfish reads off)",
            f(|x| x.ipmi_silent = true),
            true,
            false,
            Verdict::Unproven,
            3,
        ),
        (
            "BMC reads flap after the command",
            f(|x| x.flap = true),
            true,
            false,
            Verdict::Contradiction,
            3,
        ),
    ];
    let mut rows = rt().block_on(async {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let mut set = tokio::task::JoinSet::new();
                for (i, (_, faults, hosts, accept, _, _)) in cases.iter().enumerate() {
                    for _ in 0..3 {
                        let (faults, hosts, accept) = (faults.clone(), *hosts, *accept);
                        set.spawn_local(
                            async move { (i, verify_run(faults, hosts, accept).await) },
                        );
                    }
                }
                let mut by: std::collections::BTreeMap<usize, Vec<(VerifyReport, Duration)>> =
                    Default::default();
                while let Some(j) = set.join_next().await {
                    let (i, r) = j.expect("task");
                    by.entry(i).or_default().push(r);
                }
                let mut rows = Vec::new();
                for (i, runs) in by {
                    let (scenario, _, _, _, want, code) = &cases[i];
                    let mut row = Row::new("verify (lab)", *scenario, "verify off");
                    row.runs = runs.len();
                    for (rep, took) in &runs {
                        row.times.push(*took);
                        if rep.verdict == *want && rep.exit_code() == *code {
                            row.ok += 1;
                        } else {
                            row.fail(format!(
                                "verdict {} (exit {}), expected {want} (exit {code}): {}",
                                rep.verdict,
                                rep.exit_code(),
                                rep.reason
                            ));
                        }
                    }
                    if row.pass {
                        row.note(format!("{want}, exit {code}, every run"));
                    }
                    rows.push(row);
                }
                rows
            })
            .await
    });
    // The SSH host profile never reads an unreachable host as off.
    for (scenario, host, port) in [
        (
            "host profile: refused port",
            DEAD_HOST.to_string(),
            refused_tcp().port(),
        ),
        (
            "host profile: name does not resolve",
            "no-such-node.invalid".to_string(),
            22,
        ),
    ] {
        let mut row = Row::new("SSH (host profile)", scenario, "status, off");
        for action in [Action::Status, Action::Off] {
            let mut cfg = SshConfig::new(
                &host,
                "root",
                SshAuth::Password(Secret::from_str_value(PASSWORD)),
                Profile::Host,
            );
            cfg.port = port;
            cfg.connect_timeout = Duration::from_secs(2);
            cfg.host_keys = HostKeyPolicy::KnownHosts(Some(PathBuf::from("/dev/null")));
            let t = Instant::now();
            let r = rt().block_on(async {
                let mut d = SshDriver::new(cfg).expect("config");
                run(
                    &mut d,
                    action,
                    &native(Duration::from_secs(10)),
                    &mut Discard,
                    Cancel::never(),
                )
                .await
            });
            row.runs += 1;
            row.times.push(t.elapsed());
            match r {
                Err(f) if f.error.kind == ErrorKind::StatusUnreadable => row.ok += 1,
                other => row.fail(format!("{action}: {other:?}, expected status unreadable")),
            }
        }
        if row.pass {
            row.note("status unreadable (exit 1), never off; off never succeeds");
        }
        rows.push(row);
    }
    rows
}

fn render(rows: &[Row]) -> String {
    let mut s = String::from(HEADER);
    for r in rows {
        let _ = writeln!(
            s,
            "{} {} | {} | {} | {} | {} |",
            r.key(),
            r.runs,
            r.ok,
            ms(r.median()),
            ms(r.max()),
            r.result.replace('|', "/")
        );
    }
    s.push_str(PROSE);
    s
}

/// `doc` with the vendor matrix section of `old` (generated by
/// `tests/redfish_vendors.rs`, between its markers) put back before "Beyond
/// the matrix".
fn keep_vendor_section(old: &str, doc: &str) -> String {
    const BEGIN: &str = "<!-- vendor matrix: generated by tests/redfish_vendors.rs -->";
    const END: &str = "<!-- end of vendor matrix -->";
    let (Some(a), Some(b)) = (old.find(BEGIN), old.find(END)) else {
        return doc.to_string();
    };
    let section = &old[a..b + END.len()];
    match doc.find("## Beyond the matrix") {
        Some(i) => format!("{}{section}\n\n{}", &doc[..i], &doc[i..]),
        None => format!("{}\n{section}\n", doc.trim_end()),
    }
}

#[test]
fn fault_injection_matrix() {
    // Its sections run at once: more descriptors than a soft limit of 1,024.
    support::enough_open_files();
    let only = std::env::var("FENCEKIT_MATRIX_ONLY").ok();
    type Section = (&'static str, fn() -> Vec<Row>);
    let sections: Vec<Section> = vec![
        ("ipmi-loss", section_ipmi_loss),
        ("ipmi-sim-loss", section_ipmi_sim_loss),
        ("slow-bmc", section_slow_bmc),
        ("dead-peers", section_dead_peers),
        ("power-faults", section_power_faults),
        ("credentials", section_credentials),
        ("redfish-answers", section_redfish_answers),
        ("datagrams", section_datagrams),
        ("verify", section_verify),
    ];
    let t0 = Instant::now();
    let handles: Vec<_> = sections
        .into_iter()
        .filter(|(name, _)| only.as_deref().is_none_or(|o| name.contains(o)))
        .map(|(name, f)| {
            (
                name,
                std::thread::Builder::new()
                    .name(format!("fault_injection_matrix::{name}"))
                    .spawn(f)
                    .unwrap(),
            )
        })
        .collect();
    let mut rows = Vec::new();
    let mut joined = Vec::new();
    for (name, h) in handles {
        let t = Instant::now();
        match h.join() {
            Ok(r) => rows.extend(r),
            Err(_) => rows.push(panicked("(section)")),
        }
        joined.push(format!(
            "section {name} joined after {:?}",
            t0.elapsed().max(t.elapsed())
        ));
    }
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !r.pass)
        .map(|r| format!("{} {}", r.key(), r.result))
        .collect();
    // The failed rows first: the head of the output is what a CI log keeps.
    for f in &failed {
        println!("FAILED ROW: {f}");
    }
    println!("matrix took {:?}", t0.elapsed());
    for line in joined
        .iter()
        .chain(RUN_LOG.lock().unwrap_or_else(|e| e.into_inner()).iter())
    {
        println!("{line}");
    }
    let doc = render(&rows);
    println!("{doc}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let _ = std::fs::create_dir_all(root.join("target"));
    std::fs::write(root.join("target/reliability.md"), &doc).unwrap();
    if only.is_none() {
        let path = root.join("docs/reliability.md");
        if std::env::var("FENCEKIT_REGENERATE").is_ok_and(|v| v == "1") {
            // The vendor matrix section is `tests/redfish_vendors.rs`'s: keep it.
            let old = std::fs::read_to_string(&path).unwrap_or_default();
            std::fs::write(&path, keep_vendor_section(&old, &doc)).unwrap();
        } else {
            let have = std::fs::read_to_string(&path).unwrap_or_default();
            let missing: Vec<String> = rows
                .iter()
                .filter(|r| !r.skipped)
                .map(Row::key)
                .filter(|k| !have.contains(k.as_str()))
                .collect();
            assert!(
                missing.is_empty(),
                "docs/reliability.md does not list these scenarios (run with \
                 FENCEKIT_REGENERATE=1 to rewrite it):\n{}",
                missing.join("\n")
            );
        }
    }
    assert!(failed.is_empty(), "failed rows:\n{}", failed.join("\n"));
}

/// Replays one loss run with its events and the driver's trace on stderr:
/// `SEED=6 LOSS=0.3 ACTION=off cargo test --test reliability debug_one_loss_run -- --ignored --nocapture`.
#[test]
#[ignore]
fn debug_one_loss_run() {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let seed: u64 = var("SEED").parse().unwrap_or(0);
    let loss: f64 = var("LOSS").parse().unwrap_or(0.3);
    let action = match var("ACTION").as_str() {
        "status" => Action::Status,
        "off" => Action::Off,
        _ => Action::Reboot,
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("fencekit=trace"))
        .try_init();
    rt().block_on(async {
        let faults = Faults {
            loss,
            ..Faults::default()
        };
        let sim = sim_ipmi(true, faults, seed).await;
        let mut d = IpmiDriver::new(ipmi_cfg(sim.addr, PASSWORD)).unwrap();
        let mut sink =
            |e: &fencekit::engine::event::Stamped| println!("{:>6} ms {:?}", e.at_ms, e.event);
        let r = run(
            &mut d,
            action,
            &native(Duration::from_secs(20)),
            &mut sink,
            Cancel::never(),
        )
        .await;
        println!("{r:?} {:?} {:?}", d.stats(), sim.bmc.counters());
    });
}
