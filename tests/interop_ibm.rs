//! IBM Cloud: fencekit as `fence_ibm_vpc` and `fence_ibm_powervs`, and
//! upstream's (fence-agents 4.12.1, pycurl), side by side against the same
//! peer, tests/peers/ibm_api.py (IAM, the VPC API, the Power Cloud API and
//! the VPC metadata service, written from IBM's API references). Upstream
//! reaches the peer without any change through its own `--proxy` option:
//! the peer's proxy terminates TLS for iam.cloud.ibm.com,
//! REGION.iaas.cloud.ibm.com and REGION.power-iaas.cloud.ibm.com with a test
//! CA, which upstream's libcurl trusts in a mount namespace of its own (the
//! system bundle plus the test CA bound over /etc/ssl/certs/ca-certificates.crt:
//! upstream has no CA option). fencekit goes through the same proxy and
//! trusts the CA with `--ca-cert`.
//!
//! Each case runs both agents at once on instances in the same state (one
//! each), so the cases of a test run in parallel; each test has its own
//! peer. Where they differ, fencekit's answer is the documented, safer one
//! (docs/ibm.md, "Differences from upstream").

mod support;

use fencekit::engine::event::Discard;
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::Action;
use fencekit::engine::run::{run, Cancel};
use fencekit::ibm::config::{Env, IbmConfig, Service};
use fencekit::ibm::driver::IbmDriver;
use fencekit::secret::Secret;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use support::Run;

const KEY: &str = "ApiKey-0123456789abcdef_fencekit";
const REGION: &str = "us-south";
const LOGIN_DENIED: &str = "Unable to connect/login to fencing device";
const FAILED_STATUS: &str = "Failed: Unable to obtain correct plug status or plug is not available";

/// One IBM Cloud peer, stopped on drop (by its PID).
struct Peer {
    port: u16,
    dir: PathBuf,
    tmp: PathBuf,
}

impl Peer {
    fn start(transition: f64) -> Option<Peer> {
        if !support::peer_available("ibm_api") {
            return None;
        }
        let port = support::free_ports(3);
        support::peer_start(
            "ibm_start.sh",
            &[&port.to_string(), &transition.to_string()],
            &[("IBM_PARENT_PID", &std::process::id().to_string())],
        );
        let dir = support::peer_run_dir().join(format!("ibm-{port}"));
        let tmp = std::env::temp_dir().join(format!("fk-ibm-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let p = Peer { port, dir, tmp };
        p.control(json!({"op": "key", "key": KEY}));
        Some(p)
    }

    fn tls(&self) -> String {
        format!("https://127.0.0.1:{}", self.port + 1)
    }

    fn proxy(&self) -> String {
        format!("http://127.0.0.1:{}", self.port + 2)
    }

    fn metadata(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    fn curl(&self, args: &[&str]) -> Value {
        let out = Command::new("curl")
            .args(["-s", "--max-time", "10", "--cacert"])
            .arg(self.ca())
            .args(args)
            .output()
            .expect("curl");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("peer answered {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn control(&self, op: Value) -> Value {
        let url = format!("{}/_peer/control", self.tls());
        let v = self.curl(&["-X", "POST", &url, "-d", &op.to_string()]);
        assert!(v.get("error").is_none(), "control {op}: {v}");
        v
    }

    fn state(&self) -> Value {
        self.curl(&[&format!("{}/_peer/state", self.tls())])
    }

    fn fault(&self, set: Value) {
        self.control(json!({"op": "fault", "set": set}));
    }

    /// A VPC instance `id` with these fields.
    fn vpc(&self, id: &str, extra: Value) {
        let mut op = json!({"op": "vpc", "id": id, "name": format!("n-{id}")});
        for (k, v) in extra.as_object().unwrap() {
            op[k] = v.clone();
        }
        self.control(op);
    }

    /// A Power VS workspace `ws` (its CRN) and an instance `id` in it.
    fn pvm(&self, ws: &str, id: &str, extra: Value) {
        self.control(json!({"op": "ws", "id": ws, "crn": crn(ws)}));
        let mut op = json!({"op": "pvm", "id": id, "ws": ws, "name": format!("lpar-{id}")});
        for (k, v) in extra.as_object().unwrap() {
            op[k] = v.clone();
        }
        self.control(op);
    }

    fn status_of(&self, kind: &str, id: &str) -> String {
        self.state()[kind][id]["status"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn actions(&self, kind: &str, id: &str) -> Vec<Value> {
        self.state()[kind][id]["actions"]
            .as_array()
            .unwrap()
            .clone()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(support::peer_scripts().join("ibm_stop.sh"))
            .arg(self.port.to_string())
            .env("PEERS_DIR", support::peers_dir())
            .output();
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

fn crn(ws: &str) -> String {
    format!("crn:v1:bluemix:public:power-iaas:dal12:a/acc0001:{ws}::")
}

/// Whether upstream can run here: the agent, python3's pycurl, and a
/// mount namespace (root) for its CA bundle.
fn has_upstream(agent: &'static str) -> bool {
    static NS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if support::hv::pycurl_upstream(agent).is_none() {
        return false;
    }
    let ns = *NS.get_or_init(|| {
        Command::new("unshare")
            .args(["-m", "true"])
            .status()
            .is_ok_and(|s| s.success())
    });
    if !ns {
        let msg = "SKIP upstream part: no mount namespace (unshare -m) for upstream's CA bundle";
        assert!(
            !support::require_peers(),
            "{msg}, and FENCEKIT_REQUIRE_PEERS=1"
        );
        eprintln!("{msg}");
    }
    ns
}

/// Power actions without upstream's pause after the request
/// (`power_wait`); the status sleep stays (whole seconds: with none, its
/// polls could all pass within one transition).
fn fast(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    if extra.iter().any(|e| matches!(*e, "off" | "on" | "reboot")) {
        a.extend(["--power-wait", "0"].map(String::from));
    }
    a
}

fn vpc_args(plug: &str, extra: &[&str]) -> Vec<String> {
    let extra = fast(extra);
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let mut a: Vec<String> = ["--apikey", KEY, "--region", REGION]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if !plug.is_empty() {
        a.extend(["-n".to_string(), plug.to_string()]);
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn pvs_args(ws: &str, plug: &str, extra: &[&str]) -> Vec<String> {
    let extra = fast(extra);
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let mut a: Vec<String> = [
        "--token",
        KEY,
        "--region",
        REGION,
        "--api-type",
        "public",
        "--instance",
        ws,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(["--crn".to_string(), crn(ws)]);
    if !plug.is_empty() {
        a.extend(["-n".to_string(), plug.to_string()]);
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Upstream `agent` on the peer through `--proxy`, trusting the test CA
/// in a mount namespace; its token cache in the peer's temporary directory.
fn upstream(peer: &Peer, agent: &str, args: &[String]) -> Run {
    let mut c = Command::new("unshare");
    c.args(["-m", "sh", "-c"])
        .arg("mount --bind \"$0\" /etc/ssl/certs/ca-certificates.crt && exec \"$@\"")
        .arg(peer.dir.join("bundle.pem"))
        .arg(format!("/usr/sbin/{agent}"))
        .args(args)
        .arg(format!("--proxy={}", peer.proxy()));
    if agent == "fence_ibm_vpc" {
        // A cache of its own per run: upstream removes and recreates the
        // file (O_EXCL), so runs at once must not share one.
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        c.arg(format!(
            "--token-file={}/t{n}/[hash].token",
            peer.tmp.display()
        ));
    }
    support::run(c, Duration::from_secs(60))
}

/// fencekit as `agent` (a symlink) through the same proxy, `--ca-cert`
/// trusting the test CA; a run-time directory of its own (so a token
/// cache of its own: the cases count IAM's exchanges) unless `env` names
/// one.
fn ours(peer: &Peer, agent: &str, args: &[String], env: &[(&str, String)]) -> Run {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let link = peer.tmp.join(agent);
    if !link.exists() {
        let _ = std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link);
    }
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let run_dir = peer.tmp.join(format!("xdg{n}"));
    std::fs::create_dir_all(&run_dir).unwrap();
    let mut c = Command::new(&link);
    c.args(args)
        .arg(format!("--proxy={}", peer.proxy()))
        .arg(format!("--ca-cert={}", peer.ca().display()))
        .env("XDG_RUNTIME_DIR", &run_dir)
        .env("HOME", &peer.tmp)
        .env_remove("FENCEKIT_TOKEN_CACHE")
        .env("IBM_VPC_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9")
        .envs(env.iter().map(|(k, v)| (k, v)));
    support::run(c, Duration::from_secs(60))
}

fn first(r: &Run) -> String {
    r.stdout.lines().next().unwrap_or("").trim().to_string()
}

/// `(code, first stdout line, stderr)`.
fn seen(r: &Run) -> (Option<i32>, String) {
    (r.code, first(r))
}

/// One case: ours on `o_id`, upstream on `u_id` (same state), at once.
struct Case {
    name: &'static str,
    ours: Vec<String>,
    up: Vec<String>,
    env: Vec<(&'static str, String)>,
}

/// Runs every case, each side at once; returns (ours, upstream) per case,
/// upstream `None` where it cannot run.
fn run_cases(peer: &Peer, agent: &'static str, cases: Vec<Case>) -> Vec<(Run, Option<Run>)> {
    let up = has_upstream(agent);
    std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .iter()
            .map(|c| {
                let o = s.spawn(|| ours(peer, agent, &c.ours, &c.env));
                let u = up.then(|| s.spawn(|| upstream(peer, agent, &c.up)));
                (o, u)
            })
            .collect();
        handles
            .into_iter()
            .zip(&cases)
            .map(|((o, u), c)| {
                let o = o.join().unwrap();
                let u = u.map(|u| u.join().unwrap());
                eprintln!(
                    "{}: ours {:?} in {:?}; upstream {:?}",
                    c.name,
                    seen(&o),
                    o.elapsed,
                    u.as_ref().map(|u| (seen(u), u.elapsed))
                );
                (o, u)
            })
            .collect()
    })
}

fn case(name: &'static str, ours: Vec<String>, up: Vec<String>) -> Case {
    Case {
        name,
        ours,
        up,
        env: Vec::new(),
    }
}

/// Asserts ours and (when it ran) upstream.
fn expect(r: &(Run, Option<Run>), name: &str, ours: (i32, &str), up: (i32, &str)) {
    let (o, u) = r;
    assert_eq!(o.code, Some(ours.0), "{name}: ours: {}", o.text());
    assert!(
        first(o) == ours.1 || (!ours.1.is_empty() && o.stderr.contains(ours.1)),
        "{name}: ours said {:?}: {}",
        ours.1,
        o.text()
    );
    if let Some(u) = u {
        assert_eq!(u.code, Some(up.0), "{name}: upstream: {}", u.text());
        assert!(
            first(u) == up.1 || u.stderr.contains(up.1),
            "{name}: upstream said {:?}: {}",
            up.1,
            u.text()
        );
    }
}

fn ids(name: &str) -> (String, String) {
    (format!("0717_{name}-o"), format!("0717_{name}-u"))
}

/// A VPC case on a pair of instances made in `fields`' state.
fn vpc_case(peer: &Peer, name: &'static str, fields: Value, extra: &[&str]) -> Case {
    let (o, u) = ids(name);
    peer.vpc(&o, fields.clone());
    peer.vpc(&u, fields);
    case(name, vpc_args(&o, extra), vpc_args(&u, extra))
}

fn vpc_states_power_and_refusals_side_by_side() {
    let Some(peer) = Peer::start(0.3) else { return };
    let t0 = Instant::now();
    peer.control(json!({"op": "key", "key": "ReadOnlyKey", "roles": ["read"]}));
    let st = |s: &str| json!({"status": s, "stuck": true});
    let mut cases = Vec::new();
    for s in [
        "running",
        "stopped",
        "starting",
        "stopping",
        "pending",
        "restarting",
        "paused",
        "pausing",
        "suspended",
        "suspending",
        "resuming",
        "failed",
        "deleting",
    ] {
        let name: &'static str = Box::leak(format!("status-{s}").into_boxed_str());
        cases.push(vpc_case(&peer, name, st(s), &["-o", "status"]));
    }
    let run_ = json!({"status": "running"});
    let stop_ = json!({"status": "stopped"});
    cases.push(vpc_case(&peer, "off", run_.clone(), &["-o", "off"]));
    cases.push(vpc_case(&peer, "on", stop_.clone(), &["-o", "on"]));
    cases.push(vpc_case(&peer, "reboot", run_.clone(), &["-o", "reboot"]));
    cases.push(vpc_case(
        &peer,
        "already-off",
        stop_.clone(),
        &["-o", "off"],
    ));
    cases.push(vpc_case(&peer, "already-on", run_.clone(), &["-o", "on"]));
    cases.push(vpc_case(
        &peer,
        "off-paused",
        json!({"status": "paused"}),
        &["-o", "off"],
    ));
    cases.push(vpc_case(
        &peer,
        "fails-after",
        json!({"status": "running", "fail_next": true, "transition": 1.5}),
        &["-o", "off", "--power-timeout", "4"],
    ));
    cases.push(vpc_case(
        &peer,
        "stuck",
        json!({"status": "running", "stuck": true}),
        &["-o", "off", "--power-timeout", "2"],
    ));
    let mut selfish = vpc_case(&peer, "self", run_.clone(), &["-o", "off"]);
    selfish
        .env
        .push(("IBM_VPC_METADATA_SERVICE_ENDPOINT", peer.metadata()));
    peer.control(json!({"op": "imds", "id": ids("self").0}));
    cases.push(selfish);
    cases.push(case(
        "unknown",
        vpc_args("0717_nope", &["-o", "status"]),
        vpc_args("0717_nope", &["-o", "status"]),
    ));
    let mut bad = vpc_args("0717_off-o", &["-o", "status"]);
    bad[1] = "WrongKey".into();
    cases.push(case("wrong-key", bad.clone(), bad));
    let (o, u) = ids("forbidden");
    peer.vpc(&o, run_.clone());
    peer.vpc(&u, run_.clone());
    let ro = |id: &str| {
        let mut a = vpc_args(id, &["-o", "off"]);
        a[1] = "ReadOnlyKey".into();
        a
    };
    cases.push(case("forbidden", ro(&o), ro(&u)));
    let r = run_cases(&peer, "fence_ibm_vpc", cases);
    let mut i = 0;
    let mut next = || {
        i += 1;
        &r[i - 1]
    };
    expect(next(), "running", (0, "Status: ON"), (0, "Status: ON"));
    expect(next(), "stopped", (2, "Status: OFF"), (2, "Status: OFF"));
    // Transitions: upstream calls them unknown and fails; fencekit says
    // not off (the engine reads a transition towards on as on).
    for s in ["starting", "stopping", "pending", "restarting"] {
        let x = next();
        assert_ne!(x.0.code, Some(2), "{s} is never off: {}", x.0.text());
        if let Some(u) = &x.1 {
            assert_eq!(u.code, Some(1), "upstream {s}: {}", u.text());
        }
    }
    // Paused and suspended keep the guest's memory: on, never off.
    for s in ["paused", "pausing", "suspended", "suspending", "resuming"] {
        expect(next(), s, (0, "Status: ON"), (1, FAILED_STATUS));
    }
    expect(next(), "failed", (1, FAILED_STATUS), (1, FAILED_STATUS));
    expect(next(), "deleting", (1, FAILED_STATUS), (1, FAILED_STATUS));
    expect(
        next(),
        "off",
        (0, "Success: Powered OFF"),
        (0, "Success: Powered OFF"),
    );
    let (o, u) = ids("off");
    assert_eq!(
        peer.actions("vpc", &o),
        vec![json!({"type": "stop", "force": true})],
        "a forced stop"
    );
    if has_upstream("fence_ibm_vpc") {
        assert_eq!(
            peer.actions("vpc", &u),
            vec![json!({"type": "stop"})],
            "4.12.1's plain stop"
        );
    }
    expect(
        next(),
        "on",
        (0, "Success: Powered ON"),
        (0, "Success: Powered ON"),
    );
    expect(
        next(),
        "reboot",
        (0, "Success: Rebooted"),
        (0, "Success: Rebooted"),
    );
    expect(
        next(),
        "already-off",
        (0, "Success: Already OFF"),
        (0, "Success: Already OFF"),
    );
    expect(
        next(),
        "already-on",
        (0, "Success: Already ON"),
        (0, "Success: Already ON"),
    );
    expect(
        next(),
        "off-paused",
        (0, "Success: Powered OFF"),
        (1, FAILED_STATUS),
    );
    assert_eq!(peer.status_of("vpc", &ids("off-paused").0), "stopped");
    let x = next();
    expect(
        x,
        "fails-after",
        (1, ""),
        (1, "Failed: Timed out waiting to power OFF"),
    );
    assert!(x.0.stderr.contains("after acceptance"), "{}", x.0.text());
    assert_eq!(peer.status_of("vpc", &ids("fails-after").0), "running");
    expect(
        next(),
        "stuck",
        (1, ""),
        (1, "Failed: Timed out waiting to power OFF"),
    );
    let x = next();
    expect(x, "self", (1, ""), (0, "Success: Powered OFF"));
    assert!(x.0.stderr.contains("self-fencing"), "{}", x.0.text());
    assert!(
        peer.actions("vpc", &ids("self").0).is_empty(),
        "nothing sent"
    );
    expect(next(), "unknown", (1, ""), (1, FAILED_STATUS));
    expect(next(), "wrong-key", (1, LOGIN_DENIED), (1, LOGIN_DENIED));
    let x = next();
    expect(x, "forbidden", (1, ""), (1, ""));
    assert!(x.0.stderr.contains("Operator role"), "{}", x.0.text());
    assert_eq!(peer.status_of("vpc", &ids("forbidden").0), "running");
    eprintln!("vpc states/power: {:?}", t0.elapsed());
}

/// Throttling, an expired token, a lost answer, a lost request and a silent
/// API (each a fault of the whole peer), then list and monitor: fencekit's
/// side on one peer and upstream's on another, at once.
fn vpc_faults_tokens_lists_side_by_side() {
    let t0 = Instant::now();
    let up = has_upstream("fence_ibm_vpc");
    let sides: Vec<bool> = if up { vec![true, false] } else { vec![true] };
    std::thread::scope(|s| {
        for h in sides
            .into_iter()
            .map(|o| s.spawn(move || vpc_faults(o)))
            .collect::<Vec<_>>()
        {
            h.join().unwrap();
        }
    });
    eprintln!("vpc faults: {:?}", t0.elapsed());
}

fn vpc_faults(is_ours: bool) {
    let Some(peer) = Peer::start(0.3) else { return };
    let t0 = Instant::now();
    for id in ["0717_a", "0717_c", "0717_e", "0717_f", "0717_g"] {
        peer.vpc(id, json!({"status": "running"}));
    }
    peer.fault(json!({"retry_after": 0}));
    let agent = |id: &str, extra: &[&str]| {
        let args = vpc_args(id, extra);
        match is_ours {
            true => ours(&peer, "fence_ibm_vpc", &args, &[]),
            false => upstream(&peer, "fence_ibm_vpc", &args),
        }
    };
    let side = if is_ours { "ours" } else { "upstream" };
    // Every token good for one request: fencekit fetches a new one after
    // each 401 through the proxy; 4.12.1 fetches it again without its
    // --proxy (a new curl handle), which fails where only the proxy leads
    // out.
    peer.fault(json!({"token_uses": 1}));
    let r = agent("0717_a", &["-o", "off"]);
    peer.fault(json!({"token_uses": 0}));
    match is_ours {
        true => assert_eq!(
            seen(&r),
            (Some(0), "Success: Powered OFF".into()),
            "{}",
            r.text()
        ),
        false => {
            assert_eq!(r.code, Some(1), "{}", r.text());
            assert!(r.stderr.contains(LOGIN_DENIED), "{}", r.text());
            assert!(
                r.stderr.contains("iam.cloud.ibm.com"),
                "the refresh bypassed the proxy: {}",
                r.text()
            );
            peer.control(json!({"op": "set", "kind": "vpc", "id": "0717_a", "fields": {"status": "stopped"}}));
        }
    }
    // Two 429s in front of everything: fencekit waits them out; 4.12.1
    // takes a 429 as a failed read.
    peer.fault(json!({"throttle": 2}));
    let r = agent("0717_a", &["-o", "status"]);
    match is_ours {
        true => assert_eq!(seen(&r), (Some(2), "Status: OFF".into()), "{}", r.text()),
        false => assert_eq!(r.code, Some(1), "upstream throttled: {}", r.text()),
    }
    peer.fault(json!({"throttle": 0}));
    // The stop's answer is lost after the work: fencekit reads back and
    // confirms off, never sending it again; libcurl sends the POST again on
    // a new connection when a reused one closes without an answer.
    peer.fault(json!({"drop": {"stop": 1}}));
    let r = agent("0717_c", &["-o", "off"]);
    let sent = peer.actions("vpc", "0717_c").len();
    assert_eq!(
        (seen(&r), sent),
        (
            (Some(0), "Success: Powered OFF".into()),
            if is_ours { 1 } else { 2 }
        ),
        "{side}, a lost answer: {}",
        r.text()
    );
    // The stop is lost before the work: fencekit says the outcome is
    // unknown and does not send it again (the instance stays up: a fence
    // not done is never reported as one).
    peer.fault(json!({"lose": {"stop": 1}}));
    let polls = if is_ours { "1" } else { "3" };
    let r = agent("0717_e", &["-o", "off", "--power-timeout", polls]);
    if !is_ours {
        // libcurl sends it again on a new connection, and that one is done.
        assert_eq!(
            (r.code, peer.actions("vpc", "0717_e").len()),
            (Some(0), 2),
            "{}",
            r.text()
        );
    } else {
        assert_eq!(r.code, Some(1), "{side}: {}", r.text());
        assert!(r.stderr.contains("not sent again"), "{}", r.text());
        assert_eq!(peer.actions("vpc", "0717_e").len(), 1, "never re-sent");
        assert_eq!(peer.status_of("vpc", "0717_e"), "running");
    }
    // A silent API: bounded by --shell-timeout.
    peer.fault(json!({"hang": 30}));
    let r = agent(
        "0717_f",
        &[
            "-o",
            "status",
            "--shell-timeout",
            "1",
            "--power-timeout",
            "2",
        ],
    );
    peer.fault(json!({"hang": 0}));
    assert_eq!(r.code, Some(1), "{side} silent: {}", r.text());
    assert!(
        r.elapsed < Duration::from_secs(8),
        "{side} bounded: {:?}",
        r.elapsed
    );
    // list and monitor (every instance here is running or stopped: 4.12.1's
    // list fails on any other state).
    let mut list: Vec<String> = agent("", &["-o", "list"])
        .stdout
        .lines()
        .map(str::to_string)
        .collect();
    list.sort();
    assert_eq!(
        list,
        [
            "0717_a,n-0717_a",
            "0717_c,n-0717_c",
            "0717_e,n-0717_e",
            "0717_f,n-0717_f",
            "0717_g,n-0717_g"
        ],
        "{side}"
    );
    let r = agent("", &["-o", "monitor"]);
    assert_eq!(r.code, Some(0), "{side} monitor: {}", r.text());
    if is_ours {
        let log = peer.state()["log"].as_array().unwrap().clone();
        let q: Vec<&str> = log
            .iter()
            .filter(|e| e["path"] == "/v1/instances")
            .filter_map(|e| e["query"].as_str())
            .collect();
        assert!(
            q.last().is_some_and(|q| q.contains("limit=1")),
            "our monitor reads one: {q:?}"
        );
    }
    eprintln!("vpc faults, {side}: {:?}", t0.elapsed());
}

fn pvs_case(peer: &Peer, name: &'static str, fields: Value, extra: &[&str]) -> Case {
    let (o, u) = (format!("{name}-o"), format!("{name}-u"));
    // A workspace each: upstream 4.12.1 reads the whole list for a status,
    // and fails on any state of any instance it does not know.
    peer.pvm(&format!("ws-{o}"), &o, fields.clone());
    peer.pvm(&format!("ws-{u}"), &u, fields);
    case(
        name,
        pvs_args(&format!("ws-{o}"), &o, extra),
        pvs_args(&format!("ws-{u}"), &u, extra),
    )
}

fn powervs_states_power_tokens_side_by_side() {
    let Some(peer) = Peer::start(0.3) else { return };
    let t0 = Instant::now();
    let st = |s: &str, h: &str| json!({"status": s, "health": h, "stuck": true});
    let on_ = json!({"status": "ACTIVE"});
    let off_ = json!({"status": "SHUTOFF"});
    let mut cases = vec![
        pvs_case(&peer, "active", st("ACTIVE", "OK"), &["-o", "status"]),
        pvs_case(&peer, "shutoff", st("SHUTOFF", "OK"), &["-o", "status"]),
        pvs_case(&peer, "error", st("ERROR", "UNKNOWN"), &["-o", "status"]),
        pvs_case(
            &peer,
            "warning",
            st("WARNING", "UNKNOWN"),
            &["-o", "status"],
        ),
        pvs_case(&peer, "warning-ok", st("WARNING", "OK"), &["-o", "status"]),
        pvs_case(&peer, "build", st("BUILD", "PENDING"), &["-o", "status"]),
        pvs_case(&peer, "off", on_.clone(), &["-o", "off"]),
        pvs_case(&peer, "on", off_.clone(), &["-o", "on"]),
        pvs_case(&peer, "reboot", on_.clone(), &["-o", "reboot"]),
        pvs_case(&peer, "already-off", off_.clone(), &["-o", "off"]),
        pvs_case(&peer, "already-on", on_.clone(), &["-o", "on"]),
        pvs_case(
            &peer,
            "off-error",
            st("ERROR", "CRITICAL"),
            &["-o", "off", "--power-timeout", "2"],
        ),
    ];
    peer.control(json!({"op": "ws", "id": "ws-list", "crn": crn("ws-list")}));
    for (id, s) in [("l1", "ACTIVE"), ("l2", "SHUTOFF")] {
        peer.pvm("ws-list", id, json!({"status": s}));
    }
    cases.push(case(
        "unknown",
        pvs_args("ws-list", "nope", &["-o", "status"]),
        pvs_args("ws-list", "nope", &["-o", "status"]),
    ));
    let mut bad = pvs_args("ws-list", "l1", &["-o", "status"]);
    bad[1] = "WrongKey".into();
    cases.push(case("wrong-key", bad.clone(), bad));
    let mut other = pvs_args("ws-list", "l1", &["-o", "status"]);
    let at = other.iter().position(|a| a == "--crn").unwrap();
    other[at + 1] = crn("ws-elsewhere");
    cases.push(case("wrong-crn", other.clone(), other));
    cases.push(case(
        "list",
        pvs_args("ws-list", "", &["-o", "list-status"]),
        pvs_args("ws-list", "", &["-o", "list-status"]),
    ));
    cases.push(case(
        "monitor",
        pvs_args("ws-list", "", &["-o", "monitor"]),
        pvs_args("ws-list", "", &["-o", "monitor"]),
    ));
    let r = run_cases(&peer, "fence_ibm_powervs", cases);
    let mut i = 0;
    let mut next = || {
        i += 1;
        &r[i - 1]
    };
    expect(next(), "active", (0, "Status: ON"), (0, "Status: ON"));
    expect(next(), "shutoff", (2, "Status: OFF"), (2, "Status: OFF"));
    expect(next(), "error", (1, FAILED_STATUS), (1, FAILED_STATUS));
    expect(next(), "warning", (1, FAILED_STATUS), (1, FAILED_STATUS));
    expect(next(), "warning-ok", (0, "Status: ON"), (1, FAILED_STATUS));
    let x = next();
    assert_ne!(x.0.code, Some(2), "BUILD is never off: {}", x.0.text());
    expect(
        next(),
        "off",
        (0, "Success: Powered OFF"),
        (0, "Success: Powered OFF"),
    );
    assert_eq!(
        peer.actions("pvm", "off-o"),
        vec![json!({"action": "immediate-shutdown"})]
    );
    expect(
        next(),
        "on",
        (0, "Success: Powered ON"),
        (0, "Success: Powered ON"),
    );
    expect(
        next(),
        "reboot",
        (0, "Success: Rebooted"),
        (0, "Success: Rebooted"),
    );
    expect(
        next(),
        "already-off",
        (0, "Success: Already OFF"),
        (0, "Success: Already OFF"),
    );
    expect(
        next(),
        "already-on",
        (0, "Success: Already ON"),
        (0, "Success: Already ON"),
    );
    let x = next();
    expect(x, "off-error", (1, ""), (1, FAILED_STATUS));
    assert!(
        peer.actions("pvm", "off-error-o").is_empty(),
        "an unreadable state is not acted on"
    );
    expect(next(), "unknown", (1, ""), (1, ""));
    // 4.12.1 sends its placeholder token and fails on the 401 (a traceback).
    expect(next(), "wrong-key", (1, FAILED_STATUS), (1, ""));
    expect(next(), "wrong-crn", (1, ""), (1, ""));
    let x = next();
    let lines = |r: &Run| {
        let mut l: Vec<String> = r.stdout.lines().map(str::to_string).collect();
        l.sort();
        l
    };
    assert_eq!(
        (x.0.code, lines(&x.0)),
        (
            Some(0),
            vec!["l1,lpar-l1,on".to_string(), "l2,lpar-l2,off".to_string()]
        ),
        "{}",
        x.0.text()
    );
    if let Some(u) = &x.1 {
        assert_eq!((u.code, lines(u)), (Some(0), lines(&x.0)), "{}", u.text());
    }
    expect(next(), "monitor", (0, ""), (0, ""));
    eprintln!("powervs: {:?}", t0.elapsed());
}

/// Power VS's faults of the whole peer (one at a time): an expired token,
/// throttling, a lost answer and a lost request, a silent API.
fn powervs_tokens_and_faults() {
    let Some(peer) = Peer::start(0.3) else { return };
    peer.control(json!({"op": "ws", "id": "ws-list", "crn": crn("ws-list")}));
    for (id, s) in [
        ("l1", "ACTIVE"),
        ("l2", "SHUTOFF"),
        ("l3", "ACTIVE"),
        ("l4", "ACTIVE"),
    ] {
        peer.pvm("ws-list", id, json!({"status": s}));
    }
    peer.fault(json!({"retry_after": 0}));
    // Every token good for one request: fencekit fetches a new one after
    // each 401; 4.12.1 fetches one token per run and fails.
    peer.fault(json!({"token_uses": 1}));
    let r = run_cases(
        &peer,
        "fence_ibm_powervs",
        vec![case(
            "expired",
            pvs_args("ws-list", "l1", &["-o", "off"]),
            pvs_args("ws-list", "l1", &["-o", "status"]),
        )],
    );
    peer.fault(json!({"token_uses": 0}));
    expect(&r[0], "expired", (0, "Success: Powered OFF"), (1, ""));
    // Throttled, then silent: waited out; bounded.
    peer.fault(json!({"throttle": 2}));
    let o = ours(
        &peer,
        "fence_ibm_powervs",
        &pvs_args("ws-list", "l2", &["-o", "status"]),
        &[],
    );
    assert_eq!(
        (o.code, first(&o).as_str()),
        (Some(2), "Status: OFF"),
        "{}",
        o.text()
    );
    // The immediate-shutdown's answer is lost after the work: read back,
    // off confirmed, never sent again.
    peer.fault(json!({"drop": {"immediate-shutdown": 1}}));
    let o = ours(
        &peer,
        "fence_ibm_powervs",
        &pvs_args("ws-list", "l3", &["-o", "off"]),
        &[],
    );
    assert_eq!(
        (seen(&o), peer.actions("pvm", "l3").len()),
        ((Some(0), "Success: Powered OFF".into()), 1),
        "a lost answer: {}",
        o.text()
    );
    // Lost before the work: the outcome is unknown, it is not sent again,
    // and the LPAR that still runs is never reported off.
    peer.fault(json!({"lose": {"immediate-shutdown": 1}}));
    let o = ours(
        &peer,
        "fence_ibm_powervs",
        &pvs_args("ws-list", "l4", &["-o", "off", "--power-timeout", "1"]),
        &[],
    );
    assert_eq!(o.code, Some(1), "a lost request: {}", o.text());
    assert!(o.stderr.contains("not sent again"), "{}", o.text());
    assert_eq!(peer.actions("pvm", "l4").len(), 1, "never re-sent");
    assert_eq!(peer.status_of("pvm", "l4"), "ACTIVE");
    peer.fault(json!({"hang": 30}));
    let r = run_cases(
        &peer,
        "fence_ibm_powervs",
        vec![case(
            "silent",
            pvs_args(
                "ws-list",
                "l2",
                &[
                    "-o",
                    "status",
                    "--shell-timeout",
                    "1",
                    "--power-timeout",
                    "2",
                ],
            ),
            pvs_args(
                "ws-list",
                "l2",
                &[
                    "-o",
                    "status",
                    "--shell-timeout",
                    "1",
                    "--power-timeout",
                    "2",
                ],
            ),
        )],
    );
    peer.fault(json!({"hang": 0}));
    expect(&r[0], "silent", (1, ""), (1, ""));
    assert!(
        r[0].0.elapsed < Duration::from_secs(8),
        "bounded: {:?}",
        r[0].0.elapsed
    );
}

/// The native driver through the engine: IAM and the API at the peer's
/// TLS port, a token that lives two seconds (fetched again before its end),
/// a paused instance stopped and confirmed off.
fn native_driver_refreshes_tokens_and_stops_a_paused_instance() {
    let Some(peer) = Peer::start(0.3) else { return };
    peer.vpc("0717_native", json!({"status": "paused"}));
    peer.fault(json!({"token_life": 2}));
    let mut c = IbmConfig::new(Service::Vpc, REGION, "0717_native");
    c.apikey = Secret::from_str_value(KEY);
    c.api_endpoint = Some(peer.tls());
    c.iam_endpoint = Some(peer.tls());
    c.ca_cert = Some(peer.ca());
    c.request_timeout = Duration::from_secs(3);
    let env = Env::from_pairs(&[
        ("IBM_VPC_METADATA_SERVICE_ENDPOINT", &peer.metadata()),
        ("FENCEKIT_TOKEN_CACHE", "off"),
    ]);
    let mut d = IbmDriver::with_env(c, env).unwrap();
    let mut p = Policy::native();
    p.poll_interval = Duration::from_millis(100);
    p.power_timeout = PowerTimeout::Wall(Duration::from_secs(10));
    p.deadline = Some(fencekit::engine::clock::Instant::now() + Duration::from_secs(15));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(run(&mut d, Action::Off, &p, &mut Discard, Cancel::never()));
    assert!(out.is_ok(), "{out:?}");
    assert_eq!(peer.status_of("vpc", "0717_native"), "stopped");
    assert_eq!(
        peer.actions("vpc", "0717_native"),
        vec![json!({"type": "stop", "force": true})]
    );
    assert!(
        d.stats().tokens >= 2 && d.stats().cached == 0,
        "a two-second token is fetched again: {:?}",
        d.stats()
    );
}

/// IAM's exchanges the peer saw.
fn iam_exchanges(peer: &Peer) -> usize {
    peer.state()["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"] == "/identity/token")
        .count()
}

/// The API's answers to GETs of `path`, in order (401 or not).
fn gets(peer: &Peer, path: &str) -> usize {
    peer.state()["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["method"] == "GET" && e["path"] == path)
        .count()
}

/// `args` in region `r` (another device for the per-device lock, whose
/// sessions the other groups' many runs in us-south take).
fn in_region(mut args: Vec<String>, r: &str) -> Vec<String> {
    let at = args.iter().position(|a| a == "--region").unwrap();
    args[at + 1] = r.to_string();
    args
}

/// The token cache between runs: two statuses with one run-time directory
/// make one IAM exchange (the second run's token comes from the cache, a
/// 0600 file in a 0700 directory, and the API's GET is its only request);
/// a token IAM revoked is refused (401), removed from the cache and
/// fetched once more; `FENCEKIT_TOKEN_CACHE=off` always exchanges; Power VS
/// keeps its own (another IAM URL is not involved: the same key and URL
/// share the file).
fn statuses_in_a_row_take_the_token_from_the_cache() {
    use std::os::unix::fs::MetadataExt;
    let Some(peer) = Peer::start(0.3) else { return };
    peer.vpc("0717_warm", json!({"status": "running"}));
    let run_dir = peer.tmp.join("warm");
    std::fs::create_dir_all(&run_dir).unwrap();
    let env = vec![("XDG_RUNTIME_DIR", run_dir.display().to_string())];
    let status = |env: &[(&str, String)]| {
        let r = ours(
            &peer,
            "fence_ibm_vpc",
            &in_region(vpc_args("0717_warm", &["-o", "status", "-v"]), "eu-de"),
            env,
        );
        assert_eq!(seen(&r), (Some(0), "Status: ON".into()), "{}", r.text());
        r
    };
    let iam0 = iam_exchanges(&peer);
    let r = status(&env);
    assert!(r.stderr.contains("IAM token fetched"), "{}", r.text());
    assert_eq!(iam_exchanges(&peer), iam0 + 1, "cold: one exchange");
    let r = status(&env);
    assert!(
        r.stderr.contains("token from the token cache"),
        "the timeline says where the token came from: {}",
        r.text()
    );
    assert!(!r.stderr.contains(KEY), "{}", r.text());
    assert_eq!(iam_exchanges(&peer), iam0 + 1, "warm: no exchange");
    let dir = run_dir.join("fencekit/tokens");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one file per key: {files:?}");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().mode() & 0o777;
    assert_eq!((mode(&files[0]), mode(&dir)), (0o600, 0o700));
    let held = std::fs::read(&files[0]).unwrap();
    let tokens = peer.state()["tokens"].clone();
    for t in tokens.as_object().unwrap().keys() {
        assert!(
            !held.windows(t.len()).any(|w| w == t.as_bytes()),
            "no token in the clear"
        );
    }
    // Revoked at IAM: the cached token is refused, then one new exchange.
    peer.control(json!({"op": "expire_tokens"}));
    let path = "/v1/instances/0717_warm";
    let g0 = gets(&peer, path);
    let r = status(&env);
    assert!(r.stderr.contains("IAM token fetched"), "{}", r.text());
    assert_eq!(
        (iam_exchanges(&peer), gets(&peer, path)),
        (iam0 + 2, g0 + 2),
        "401, one exchange, the GET again: {}",
        r.text()
    );
    assert_ne!(std::fs::read(&files[0]).unwrap(), held, "replaced");
    // The new token is the one kept.
    status(&env);
    assert_eq!(iam_exchanges(&peer), iam0 + 2, "warm again");
    // Turned off: every run exchanges.
    let mut off = env.clone();
    off.push(("FENCEKIT_TOKEN_CACHE", "off".into()));
    status(&off);
    status(&off);
    assert_eq!(iam_exchanges(&peer), iam0 + 4, "no cache when off");
    // Power VS through the same cache: one exchange for two runs.
    peer.pvm("ws-warm", "warm-1", json!({"status": "ACTIVE"}));
    let pvs_dir = peer.tmp.join("warm-pvs");
    std::fs::create_dir_all(&pvs_dir).unwrap();
    let penv = vec![("XDG_RUNTIME_DIR", pvs_dir.display().to_string())];
    let before = iam_exchanges(&peer);
    for _ in 0..2 {
        let r = ours(
            &peer,
            "fence_ibm_powervs",
            &in_region(pvs_args("ws-warm", "warm-1", &["-o", "status"]), "lon"),
            &penv,
        );
        assert_eq!(seen(&r), (Some(0), "Status: ON".into()), "{}", r.text());
    }
    assert_eq!(iam_exchanges(&peer), before + 1, "Power VS warm");
}

/// The four groups at once (each has its own peers; most of their time is
/// waiting for transitions and polls, not CPU), printing each one's time.
#[test]
fn ibm_side_by_side() {
    let groups: [(&str, fn()); 6] = [
        (
            "vpc states, power, refusals",
            vpc_states_power_and_refusals_side_by_side,
        ),
        (
            "vpc faults, tokens, lists",
            vpc_faults_tokens_lists_side_by_side,
        ),
        ("powervs", powervs_states_power_tokens_side_by_side),
        ("powervs tokens and faults", powervs_tokens_and_faults),
        (
            "native driver",
            native_driver_refreshes_tokens_and_stops_a_paused_instance,
        ),
        (
            "token cache",
            statuses_in_a_row_take_the_token_from_the_cache,
        ),
    ];
    let t0 = Instant::now();
    std::thread::scope(|s| {
        let hs: Vec<_> = groups
            .iter()
            .map(|(name, f)| {
                s.spawn(move || {
                    let t = Instant::now();
                    f();
                    eprintln!("group {name}: {:?}", t.elapsed());
                })
            })
            .collect();
        for h in hs {
            h.join().expect("a group failed (its panic is above)");
        }
    });
    eprintln!("all groups: {:?}", t0.elapsed());
}
