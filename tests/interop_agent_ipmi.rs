//! Side by side: upstream `/usr/sbin/fence_ipmilan` (fence-agents 4.12.1,
//! which runs `ipmitool`) and ours (a symlink named after the agent to the
//! fencekit binary), run with the same arguments against two OpenIPMI
//! `ipmi_sim` BMCs started in the same state — one for each, so the two runs
//! can go in parallel. stdout, exit code and the simulator's resulting power
//! state are compared; stderr is not (fencekit names the precise cause
//! where upstream repeats ipmitool's words).
//!
//! Cases run in parallel threads (a few at a time: the machine is shared),
//! each with its own simulators. Upstream sleeps `power_wait` after every
//! power command, so the cases pass `--power-wait=0` where the case allows.
//! Lanplus cases name cipher suite 3 (`-C 3`) except one: ipmi_sim does not
//! answer Get Channel Cipher Suites, and ipmitool spends about 14 s per call
//! finding that out (a 5-call upstream reboot would take over a minute).
//!
//! Needs `ipmi_sim`, `ipmitool` and upstream's agent; a missing one skips
//! (or fails under `FENCEKIT_REQUIRE_PEERS=1`). Only 127.0.0.1; every
//! simulator is killed by its PID on drop.

mod support;

use support::AgentOut as Out;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{IpmiSim, PASSWORD, USER};

const LIMIT: Duration = Duration::from_secs(60);
/// Cases running at once (each has two simulators and two agents).
const PARALLEL: usize = 4;

/// A directory with every agent name → the fencekit binary (made once).
fn ours_dir() -> &'static PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-interop-ipmi")
            .tempdir()
            .unwrap()
            .keep();
        for name in fencekit::agent::run::agent_names() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), dir.join(name)).unwrap();
        }
        dir
    })
}

/// Runs `prog ARGS` with `stdin` (closed when `None`), cwd `/`, in its own
/// process group, killed at the time limit.
fn exec(prog: &Path, args: &[String], stdin: Option<&str>) -> Out {
    support::exec_agent(prog, args, stdin, LIMIT)
}

/// One case: the agent name, its arguments (`{PORT}` is replaced by the
/// simulator's port), stdin, the simulators' starting state.
#[derive(Clone)]
struct Case {
    what: &'static str,
    agent: &'static str,
    args: Vec<String>,
    stdin: Option<String>,
    power_on: bool,
    stuck: bool,
    /// A port nobody listens on instead of the simulator's.
    dead_port: bool,
    /// What both must print and exit with (checked on ours; upstream must equal ours).
    expect: Option<(i32, &'static str)>,
}

fn case(what: &'static str, args: &str) -> Case {
    Case {
        what,
        agent: "fence_ipmilan",
        args: args.split_whitespace().map(str::to_string).collect(),
        stdin: None,
        power_on: true,
        stuck: false,
        dead_port: false,
        expect: None,
    }
}

impl Case {
    fn agent(mut self, a: &'static str) -> Self {
        self.agent = a;
        self
    }
    fn off(mut self) -> Self {
        self.power_on = false;
        self
    }
    fn stuck(mut self) -> Self {
        self.stuck = true;
        self
    }
    fn dead(mut self) -> Self {
        self.dead_port = true;
        self
    }
    fn stdin(mut self, s: &str) -> Self {
        self.stdin = Some(s.to_string());
        self
    }
    fn expect(mut self, code: i32, stdout: &'static str) -> Self {
        self.expect = Some((code, stdout));
        self
    }
}

/// What one side did.
#[derive(Debug)]
struct Side {
    out: Out,
    power: bool,
    ops: Vec<String>,
}

fn run_side(c: &Case, prog: PathBuf) -> Side {
    let sim = IpmiSim::start(c.power_on);
    sim.set_stuck(c.stuck);
    let port = if c.dead_port {
        support::free_port()
    } else {
        sim.port
    };
    let fill = |s: &str| s.replace("{PORT}", &port.to_string());
    let args: Vec<String> = c.args.iter().map(|a| fill(a)).collect();
    let stdin = c.stdin.as_deref().map(fill);
    let out = exec(&prog, &args, stdin.as_deref());
    Side {
        out,
        power: sim.power(),
        ops: sim.ops(),
    }
}

/// Runs both sides of `c` in parallel; returns a failure description, or
/// `None` when they agree (and meet the expectation).
fn check(c: &Case) -> (Option<String>, Duration, Duration) {
    let up_prog = PathBuf::from(format!("/usr/sbin/{}", c.agent));
    let our_prog = ours_dir().join(c.agent);
    let c2 = c.clone();
    let up = std::thread::spawn(move || run_side(&c2, up_prog));
    let us = run_side(c, our_prog);
    let up = up.join().expect("upstream side");
    let key = |s: &Side| (s.out.code, s.out.stdout.clone(), s.power);
    let mut problems = Vec::new();
    if key(&up) != key(&us) {
        problems.push(format!("upstream {:?} vs ours {:?}", key(&up), key(&us)));
    }
    if let Some((code, stdout)) = c.expect {
        if (us.out.code, us.out.stdout.as_str()) != (Some(code), stdout) {
            problems.push(format!(
                "expected ({code}, {stdout:?}), ours {:?}",
                key(&us)
            ));
        }
    }
    if us.out.stderr.contains(PASSWORD) && c.args.iter().any(|a| a.contains(PASSWORD)) {
        problems.push("our stderr shows the password".to_string());
    }
    let msg = (!problems.is_empty()).then(|| {
        format!(
            "{} [{} {}]: {}\n  upstream ops {:?}, stderr:\n{}\n  our ops {:?}, stderr:\n{}",
            c.what,
            c.agent,
            c.args.join(" "),
            problems.join("; "),
            up.ops,
            up.out.stderr.trim_end(),
            us.ops,
            us.out.stderr.trim_end()
        )
    });
    (msg, up.out.took, us.out.took)
}

fn peers_ready() -> bool {
    if !Path::new("/usr/sbin/fence_ipmilan").exists() {
        support::skip("upstream fence_ipmilan not installed (Debian package fence-agents)");
        return false;
    }
    support::peer_available("ipmi_sim") && support::peer_available("ipmitool")
}

/// Runs the cases, `PARALLEL` at a time, and fails with every difference.
fn run_all(cases: Vec<Case>) -> Vec<(String, Duration, Duration)> {
    let queue = Arc::new(Mutex::new(
        cases.into_iter().enumerate().collect::<Vec<_>>(),
    ));
    let results = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..PARALLEL)
        .map(|_| {
            let queue = queue.clone();
            let results = results.clone();
            std::thread::spawn(move || loop {
                let Some((i, c)) = queue.lock().unwrap().pop() else {
                    return;
                };
                let (msg, up, us) = check(&c);
                results.lock().unwrap().push((i, c.what, msg, up, us));
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let mut results = std::mem::take(&mut *results.lock().unwrap());
    results.sort_by_key(|r| r.0);
    let failures: Vec<String> = results.iter().filter_map(|r| r.2.clone()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n\n{}",
        failures.len(),
        results.len(),
        failures.join("\n\n")
    );
    results
        .into_iter()
        .map(|(_, what, _, up, us)| (what.to_string(), up, us))
        .collect()
}

fn base(extra: &str) -> String {
    format!("-a 127.0.0.1 -u {{PORT}} -l {USER} -p {PASSWORD} {extra}")
}

#[test]
fn power_actions_match_upstream() {
    if !peers_ready() {
        return;
    }
    let cases = vec![
        case("status on (IPMI 1.5)", &base("-o status")).expect(0, "Status: ON\n"),
        case("status off", &base("-o status"))
            .off()
            .expect(2, "Status: OFF\n"),
        case(
            "status on (lanplus, cipher suite discovered)",
            &base("-o status -P"),
        )
        .expect(0, "Status: ON\n"),
        case(
            "status through an alias with lanplus on",
            &base("-o status -C 3"),
        )
        .agent("fence_ilo4")
        .expect(0, "Status: ON\n"),
        case("monitor", &base("-o monitor")).off().expect(0, ""),
        case("off of an on node", &base("-o off --power-wait=0"))
            .expect(0, "Success: Powered OFF\n"),
        case("off of an off node", &base("-o off --power-wait=0"))
            .off()
            .expect(0, "Success: Already OFF\n"),
        case("on of an off node", &base("-o on --power-wait=0 -P -C 3"))
            .off()
            .expect(0, "Success: Powered ON\n"),
        case("on of an on node", &base("-o on --power-wait=0")).expect(0, "Success: Already ON\n"),
        case("reboot onoff", &base("-o reboot --power-wait=0 -P -C 3"))
            .expect(0, "Success: Rebooted\n"),
        case("reboot of an off node", &base("-o reboot --power-wait=0"))
            .off()
            .expect(0, "Success: Rebooted\n"),
        case(
            "reboot -m cycle",
            &base("-o reboot -m cycle --power-wait=0"),
        )
        .expect(0, "Success: Rebooted\n"),
        case(
            "stuck power: off times out",
            &base("-o off --power-wait=0 --power-timeout=2"),
        )
        .stuck()
        .expect(1, ""),
        case(
            "stuck power: reboot whose off never completes",
            &base("-o reboot --power-wait=0 --power-timeout=2 -P -C 3"),
        )
        .stuck()
        .expect(1, ""),
    ];
    let timings = run_all(cases);
    for (what, up, us) in timings.iter().filter(|t| t.0.starts_with("status")) {
        eprintln!("{what}: upstream {up:?}, fencekit {us:?}");
    }
}

#[test]
fn failures_and_input_handling_match_upstream() {
    if !peers_ready() {
        return;
    }
    let wrong = format!("-a 127.0.0.1 -u {{PORT}} -l {USER} -p Wr0ng-pass -o status");
    let cases = vec![
        case("wrong password (IPMI 1.5)", &wrong).expect(1, ""),
        case("wrong password (lanplus)", &format!("{wrong} -P -C 3")).expect(1, ""),
        case("wrong password on off: nothing sent", &format!("{wrong} -P -C 3 -o off"))
            .expect(1, ""),
        case(
            "unreachable port",
            &base("-o status -P --power-timeout=3"),
        )
        .dead()
        .expect(1, ""),
        case("stdin with comments, deprecated and unknown keys", "")
            .stdin(&format!(
                "# pacemaker\n\n  action=status  \nipaddr=127.0.0.1\nipport={{PORT}}\nlogin={USER}\n\
                 passwd={PASSWORD}\nnodename=node1\nplug=node1\nfoo=bar\nlanplus=1\ncipher=3\n"
            ))
            .expect(0, "Status: ON\n"),
        case("stdin off with flags by value", "")
            .stdin(&format!(
                "action=off\nip=127.0.0.1\nipport={{PORT}}\nusername={USER}\npassword=\"{PASSWORD}\"\n\
                 lanplus=0\npower_wait=0\nprivlvl=Administrator\n"
            ))
            .expect(0, "Success: Powered OFF\n"),
        case("empty stdin", "").stdin("").expect(1, ""),
        case("argv present: stdin not read", "-o status")
            .stdin("ip=127.0.0.1\n")
            .expect(1, ""),
        case("validate-all ok", &base("-o validate-all")).expect(0, ""),
        case("validate-all without address", "-o validate-all").expect(1, ""),
        case("validate-all bad privlvl", &base("-o validate-all --privlvl=foo")).expect(1, ""),
        case(
            "validate-all bad power-timeout",
            &base("-o validate-all --power-timeout=abc"),
        )
        .expect(1, ""),
        case("unknown action", &base("-o bogus")).expect(1, ""),
        case("flag with a value", &base("-o status --lanplus=1")).expect(1, ""),
        case("unknown option", &base("-o status --bogus")).expect(1, ""),
        case("ambiguous prefix", &base("-o status --pass x")).expect(1, ""),
        case("plug without --port-as-ip", &base("-o status -n node1")).expect(1, ""),
        case(
            "port-as-ip",
            &format!("--port-as-ip -n 127.0.0.1 -u {{PORT}} -l {USER} -p {PASSWORD} -o status"),
        )
        .expect(0, "Status: ON\n"),
        case("list prints the notice", &base("-o list")).expect(
            0,
            "NOTICE: List option is not working on this device yet\n",
        ),
        case("version", "-V").expect(0, "4.12.1\n"),
        case(
            "FAR fencing call, --k=v in random order",
            &format!(
                "--password={PASSWORD} --lanplus --cipher=3 --ipport={{PORT}} --action=reboot \
                 --ip=127.0.0.1 --username={USER} --power-wait=0"
            ),
        )
        .expect(0, "Success: Rebooted\n"),
        case(
            "FAR template status check, separate tokens",
            &format!(
                "--action status --ip 127.0.0.1 --ipport {{PORT}} --username {USER} \
                 --password {PASSWORD} --lanplus --cipher 3"
            ),
        )
        .expect(0, "Status: ON\n"),
    ];
    run_all(cases);
}
