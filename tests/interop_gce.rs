//! GCE: fencekit's driver and upstream `fence_gce` (fence-agents 4.12.1, on
//! google-api-python-client, google-auth and httplib2 from the peers' venv)
//! side by side against the same peer, tests/peers/gce_api.py (Compute
//! Engine v1, the token endpoint's JWT bearer grant and the metadata
//! server, written from Google's references). Both reach the peer through
//! its proxy, which terminates TLS for compute.googleapis.com and
//! oauth2.googleapis.com with a test CA: upstream through httplib2's own
//! variables (HTTPS_PROXY, HTTPLIB2_CA_CERTS), fencekit through HTTPS_PROXY
//! and --ca-cert; one service-account key file serves both.
//!
//! Each test asserts what both do. Where they differ, fencekit's answer is
//! the documented, safer one (docs/gce.md, "Differences from upstream").
//! The scenarios run at once; four share one peer (each its own
//! instances), and the faults, which are the peer's own, have two peers of
//! their own.

#[path = "interop_gce/lost.rs"]
mod lost;
mod support;

use fencekit::engine::error::ErrorKind;
use fencekit::engine::event::Discard;
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::{Action, PowerState};
use fencekit::engine::run::{run, Cancel, Failure, Outcome};
use fencekit::gce::config::{Auth, Env, GceConfig};
use fencekit::gce::driver::GceDriver;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::Run;

const PROJECT: &str = "fence-project";
const ZONE: &str = "europe-west4-a";
const EMAIL: &str = "fence@fence-project.iam.gserviceaccount.com";

/// One GCE peer; it stops when this test process is gone (GCE_PARENT_PID).
struct Peer {
    port: u16,
    dir: PathBuf,
    tmp: PathBuf,
}

impl Peer {
    /// A peer whose transitions take `transition` seconds, with the service
    /// account [`EMAIL`] (its key in key.json) allowed everything.
    fn start(transition: f64) -> Option<Peer> {
        if !support::peer_available("gce_api") {
            return None;
        }
        let port = support::free_ports(3);
        support::peer_start(
            "gce_start.sh",
            &[&port.to_string(), &transition.to_string()],
            &[("GCE_PARENT_PID", &std::process::id().to_string())],
        );
        let dir = support::peer_run_dir().join(format!("gce-{port}"));
        let tmp = std::env::temp_dir().join(format!("fk-gce-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let p = Peer { port, dir, tmp };
        let public = std::fs::read_to_string(p.dir.join("sa.pub")).unwrap();
        p.control(json!({"op": "account", "email": EMAIL, "public_pem": public}));
        let key = std::fs::read_to_string(p.dir.join("sa.key")).unwrap();
        p.key_file("key.json", EMAIL, &key);
        Some(p)
    }

    /// A key file for `email` with `key` (token_uri: Google's, which the
    /// proxy answers as).
    fn key_file(&self, name: &str, email: &str, key: &str) -> PathBuf {
        let path = self.tmp.join(name);
        let v = json!({"type": "service_account", "project_id": PROJECT, "private_key_id": "k1",
            "private_key": key, "client_email": email, "client_id": "1",
            "token_uri": "https://oauth2.googleapis.com/token"});
        std::fs::write(&path, v.to_string()).unwrap();
        path
    }

    fn key(&self) -> PathBuf {
        self.tmp.join("key.json")
    }

    fn api(&self) -> String {
        format!("https://127.0.0.1:{}", self.port + 1)
    }

    fn metadata_host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn proxy(&self) -> String {
        format!("http://127.0.0.1:{}", self.port + 2)
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
        let url = format!("{}/_peer/control", self.api());
        let v = self.curl(&["-X", "POST", &url, "-d", &op.to_string()]);
        assert!(v.get("error").is_none(), "control {op}: {v}");
        v
    }

    fn state(&self) -> Value {
        self.curl(&[&format!("{}/_peer/state", self.api())])
    }

    /// Adds an instance of [`ZONE`]; returns its id.
    fn instance(&self, name: &str, extra: Value) -> String {
        let mut op = json!({"op": "instance", "project": PROJECT, "zone": ZONE, "name": name});
        for (k, v) in extra.as_object().unwrap() {
            op[k] = v.clone();
        }
        self.control(op)["id"].as_str().unwrap().to_string()
    }

    fn set(&self, name: &str, fields: Value) {
        self.control(
            json!({"op": "set", "project": PROJECT, "zone": ZONE, "name": name,
            "fields": fields}),
        );
    }

    fn fault(&self, set: Value) {
        self.control(json!({"op": "fault", "set": set}));
    }

    fn status(&self, name: &str) -> String {
        self.state()["instances"][format!("{PROJECT}/{ZONE}/{name}")]["status"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The operations of `verb` on `name` so far.
    fn ops(&self, name: &str, verb: &str) -> Vec<Value> {
        let s = self.state();
        s["ops"]
            .as_object()
            .unwrap()
            .values()
            .filter(|o| {
                o["operationType"] == verb
                    && o["targetLink"]
                        .as_str()
                        .unwrap_or("")
                        .ends_with(&format!("/{name}"))
            })
            .cloned()
            .collect()
    }

    /// The requests logged for paths containing `part`.
    fn requests(&self, part: &str) -> Vec<Value> {
        self.state()["log"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["path"].as_str().unwrap_or("").contains(part))
            .cloned()
            .collect()
    }
}

/// The peer the tests without faults share.
fn shared() -> Option<&'static Peer> {
    static PEER: OnceLock<Option<Peer>> = OnceLock::new();
    PEER.get_or_init(|| Peer::start(0.3)).as_ref()
}

// ---- the agents --------------------------------------------------------------

fn has_upstream() -> bool {
    support::peer_available("fence_gce")
}

fn base_args(peer: &Peer) -> Vec<String> {
    vec![
        "--project".into(),
        PROJECT.into(),
        format!("--serviceaccount={}", peer.key().display()),
    ]
}

fn command(peer: &Peer, program: Command, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = program;
    c.args(base_args(peer))
        .args(args)
        .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
        .env("HTTPS_PROXY", peer.proxy())
        .env("HOME", &peer.tmp)
        .env("XDG_RUNTIME_DIR", &peer.tmp)
        .envs(env.iter().copied());
    c
}

/// Upstream fence_gce on the peer: httplib2's own variables point it there.
fn upstream(peer: &Peer, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut p = Command::new(support::venv_python());
    p.arg(support::which("fence_gce").expect("fence_gce"));
    // Its retries pause 1 s, not 5 (fencekit ignores the option).
    if !args.contains(&"--retrysleep") {
        p.arg("--retrysleep=1");
    }
    let mut c = command(peer, p, args, env);
    c.env("HTTPLIB2_CA_CERTS", peer.ca());
    support::run(c, Duration::from_secs(60))
}

/// fencekit as `fence_gce` (a symlink) on the peer, through the same proxy;
/// `--ca-cert` (a fencekit option) trusts the test CA.
fn ours(peer: &Peer, args: &[&str], env: &[(&str, &str)]) -> Run {
    let link = peer.tmp.join("fence_gce");
    if !link.exists() {
        let _ = std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link);
    }
    let mut c = command(peer, Command::new(&link), args, env);
    c.arg(format!("--ca-cert={}", peer.ca().display()));
    support::run(c, Duration::from_secs(60))
}

fn first(r: &Run) -> &str {
    r.stdout.lines().next().unwrap_or("").trim()
}

/// Runs upstream on a thread of its own (upstream takes ~0.3 s a call and
/// more when it retries: the cases of a test overlap).
fn upstream_bg(
    peer: &'static Peer,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::thread::JoinHandle<Option<Run>> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    std::thread::spawn(move || {
        has_upstream().then(|| {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let e: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            upstream(peer, &a, &e)
        })
    })
}

/// `--zone ZONE -n NAME` and `more`.
fn on<'a>(n: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["--zone", ZONE, "-n", n];
    a.extend_from_slice(more);
    a
}

#[track_caller]
fn expect(r: &Run, code: i32, line: &str) {
    assert_eq!(
        (r.code, first(r)),
        (Some(code), line),
        "{}: {}",
        r.what,
        r.text()
    );
}

// ---- the native driver -----------------------------------------------------------

fn config(peer: &Peer, name: &str) -> GceConfig {
    let mut c = GceConfig::new(PROJECT, ZONE, name);
    c.api_endpoint = Some(peer.api());
    c.ca_cert = Some(peer.ca());
    c.auth = Auth::Metadata;
    c.request_timeout = Duration::from_secs(2);
    c
}

fn driver_of(peer: &Peer, c: GceConfig) -> GceDriver {
    GceDriver::with_env(
        c,
        Env::from_pairs(&[("GCE_METADATA_HOST", &peer.metadata_host())]),
    )
    .expect("config")
}

fn policy(timeout: Duration) -> Policy {
    let mut p = Policy::native();
    p.poll_interval = Duration::from_millis(100);
    p.power_timeout = PowerTimeout::Wall(timeout);
    p.deadline = Some(fencekit::engine::clock::Instant::now() + timeout + Duration::from_secs(3));
    p
}

fn act(d: &mut GceDriver, action: Action, timeout: Duration) -> Result<Outcome, Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(
        d,
        action,
        &policy(timeout),
        &mut Discard,
        Cancel::never(),
    ))
}

// ---- the tests -------------------------------------------------------------------

/// Every scenario at once, each on a thread of its own: most of their time
/// is waiting (on the peer's transitions, on upstream's retry pauses), so
/// the binary takes as long as its longest scenario, not their sum (the
/// test harness's own threads are as many as the cores). A scenario that
/// fails is named.
#[test]
fn gce_side_by_side() {
    let scenarios: [(&str, fn()); 7] = [
        (
            "status_in_every_state_side_by_side",
            status_in_every_state_side_by_side,
        ),
        (
            "off_on_reboot_and_already_side_by_side",
            off_on_reboot_and_already_side_by_side,
        ),
        (
            "list_every_zone_and_page_and_monitor_one_read",
            list_every_zone_and_page_and_monitor_one_read,
        ),
        ("guards_pins_and_refusals", guards_pins_and_refusals),
        (
            "faults_credentials_throttling_silence",
            faults_credentials_throttling_silence,
        ),
        ("faults_power_requests", faults_power_requests),
        (
            "lost_answers_are_read_back",
            lost::lost_answers_are_read_back,
        ),
    ];
    let running: Vec<_> = scenarios
        .into_iter()
        .map(|(name, f)| (name, std::thread::spawn(f)))
        .collect();
    let failed: Vec<&str> = running
        .into_iter()
        .filter_map(|(name, t)| t.join().is_err().then_some(name))
        .collect();
    assert!(failed.is_empty(), "failed: {failed:?}");
}

fn status_in_every_state_side_by_side() {
    let t0 = Instant::now();
    let Some(peer) = shared() else { return };
    let states = [
        "RUNNING",
        "TERMINATED",
        "STOPPED",
        "SUSPENDED",
        "SUSPENDING",
        "STAGING",
        "STOPPING",
        "REPAIRING",
    ];
    for s in states {
        peer.instance(
            &format!("st-{}", s.to_lowercase()),
            json!({"status": s, "stuck": true}),
        );
    }
    let jobs: Vec<_> = states
        .iter()
        .map(|s| {
            let n = format!("st-{}", s.to_lowercase());
            upstream_bg(peer, &["--zone", ZONE, "-n", &n, "-o", "status"], &[])
        })
        .collect();
    let mut mine = Vec::new();
    for s in states {
        let n = format!("st-{}", s.to_lowercase());
        mine.push(ours(
            peer,
            &[
                "--zone",
                ZONE,
                "-n",
                &n,
                "-o",
                "status",
                "--power-timeout",
                "2",
            ],
            &[],
        ));
    }
    let theirs: Vec<Option<Run>> = jobs.into_iter().map(|j| j.join().unwrap()).collect();
    let fails = "Failed: Unable to obtain correct plug status or plug is not available";
    for ((s, o), u) in states.iter().zip(&mine).zip(&theirs) {
        // fencekit: off only for TERMINATED and STOPPED; suspended and a
        // transition are on (never off); REPAIRING is unreadable.
        match *s {
            "TERMINATED" | "STOPPED" => expect(o, 2, "Status: OFF"),
            "REPAIRING" => {
                assert_eq!(o.code, Some(1), "{s}: {}", o.text());
                assert!(!o.stdout.contains("OFF"), "{s}: {}", o.text());
            }
            _ => expect(o, 0, "Status: ON"),
        }
        // Upstream: RUNNING on, TERMINATED off, anything else "unknown",
        // which fails (STOPPED and SUSPENDED included): never off either.
        if let Some(u) = u {
            match *s {
                "RUNNING" => expect(u, 0, "Status: ON"),
                "TERMINATED" => expect(u, 2, "Status: OFF"),
                _ => {
                    assert_eq!(u.code, Some(1), "upstream {s}: {}", u.text());
                    assert!(u.stderr.contains(fails), "upstream {s}: {}", u.text());
                }
            }
        }
    }
    // Natively, through the metadata server's credentials: SUSPENDED is on,
    // STOPPING a transition, STOPPED off.
    let read = |n: &str| {
        act(
            &mut driver_of(peer, config(peer, n)),
            Action::Status,
            Duration::from_secs(1),
        )
    };
    assert_eq!(
        read("st-suspended").unwrap(),
        Outcome::Status {
            state: PowerState::On
        }
    );
    assert!(matches!(
        read("st-stopping").unwrap(),
        Outcome::InTransition { .. }
    ));
    assert_eq!(
        read("st-stopped").unwrap(),
        Outcome::Status {
            state: PowerState::Off
        }
    );
    eprintln!(
        "status_in_every_state_side_by_side: {:.1}s",
        t0.elapsed().as_secs_f64()
    );
}

fn off_on_reboot_and_already_side_by_side() {
    let t0 = Instant::now();
    let Some(peer) = shared() else { return };
    // Each side on instances of its own, from the same state.
    for n in ["pw-ours", "pw-up"] {
        peer.instance(n, json!({}));
    }
    for n in ["sus-ours", "sus-up"] {
        peer.instance(n, json!({"status": "SUSPENDED"}));
    }
    for n in ["hung-ours", "hung-up"] {
        peer.instance(n, json!({"hung": true}));
    }
    let up = |args: &[&str]| upstream_bg(peer, args, &[]);
    // Upstream's slow cases first, on threads of their own.
    // A hung guest (fence-agents #389): the graceful stop never ends;
    // upstream waits for the operation (here bounded by its --errortimeout).
    let hung = up(&on("hung-up", &["-o", "off", "--errortimeout", "3"]));
    // A suspended instance: upstream cannot read it (unknown) and fails.
    let sus = up(&on("sus-up", &["-o", "off"]));
    // fencekit's stop does not wait for the guest: off within seconds.
    let o = ours(peer, &on("hung-ours", &["-o", "off"]), &[]);
    expect(&o, 0, "Success: Powered OFF");
    assert!(o.elapsed < Duration::from_secs(5), "{:?}", o.elapsed);
    // A suspended instance: fencekit stops it and confirms TERMINATED.
    let o = ours(peer, &on("sus-ours", &["-o", "off"]), &[]);
    expect(&o, 0, "Success: Powered OFF");
    assert_eq!(peer.status("sus-ours"), "TERMINATED");

    // off, already off, on, already on, reboot (cycle: a reset), onoff.
    let steps: &[(&[&str], &str)] = &[
        (&["-o", "off"], "Success: Powered OFF"),
        (&["-o", "off"], "Success: Already OFF"),
        (&["-o", "on"], "Success: Powered ON"),
        (&["-o", "on"], "Success: Already ON"),
        (&["-o", "reboot"], "Success: Rebooted"),
        (&["-o", "reboot", "--method", "onoff"], "Success: Rebooted"),
    ];
    // Upstream's steps on two instances (two threads): off and on on one,
    // the reboots on the other.
    peer.instance("pw-up2", json!({}));
    let run_up = |name: &'static str, range: std::ops::Range<usize>| {
        std::thread::spawn(move || {
            steps[range]
                .iter()
                .map(|(args, _)| has_upstream().then(|| upstream(peer, &on(name, args), &[])))
                .collect::<Vec<_>>()
        })
    };
    let (a, b) = (run_up("pw-up", 0..4), run_up("pw-up2", 4..6));
    for (args, line) in steps {
        expect(&ours(peer, &on("pw-ours", args), &[]), 0, line);
    }
    let mut theirs = a.join().unwrap();
    theirs.extend(b.join().unwrap());
    for (u, (_, line)) in theirs.iter().zip(steps) {
        if let Some(u) = u {
            expect(u, 0, line);
        }
    }
    assert_eq!(peer.status("pw-ours"), "RUNNING");
    // fencekit's stop does not wait for the guest, and every power request
    // carries a requestId; upstream's plain stop waits for it.
    let stops = peer.requests("/pw-ours/stop");
    assert_eq!(stops.len(), 2, "{stops:?}");
    for s in &stops {
        let q = s["query"].as_str().unwrap();
        assert!(
            q.contains("noGracefulShutdown=true") && q.contains("requestId="),
            "{q}"
        );
    }
    if has_upstream() {
        let q = peer.requests("/pw-up/stop")[0]["query"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(!q.contains("noGracefulShutdown"), "{q}");
    }
    // One reset for the cycle, followed to DONE.
    assert_eq!(peer.ops("pw-ours", "reset").len(), 1);
    assert_eq!(peer.ops("pw-ours", "reset")[0]["status"], "DONE");
    if let Some(u) = sus.join().unwrap() {
        assert_eq!(u.code, Some(1), "{}", u.text());
        assert_eq!(peer.status("sus-up"), "SUSPENDED");
    }
    if let Some(u) = hung.join().unwrap() {
        assert_eq!(u.code, Some(1), "{}", u.text());
        assert!(u.stderr.contains("did not complete"), "{}", u.text());
        assert_ne!(peer.status("hung-up"), "TERMINATED");
    }
    eprintln!(
        "off_on_reboot_and_already_side_by_side: {:.1}s",
        t0.elapsed().as_secs_f64()
    );
}

fn list_every_zone_and_page_and_monitor_one_read() {
    let t0 = Instant::now();
    let Some(peer) = shared() else { return };
    let big = "europe-west4-b";
    let small = "europe-west4-c";
    peer.control(
        json!({"op": "instances", "project": PROJECT, "zone": big, "prefix": "n",
        "count": 520}),
    );
    peer.control(
        json!({"op": "instances", "project": PROJECT, "zone": small, "prefix": "m",
        "count": 3, "status": "TERMINATED"}),
    );
    let zones = format!("{big},{small}");
    let u = upstream_bg(peer, &["--zone", &zones, "-o", "list"], &[]);
    let o = ours(peer, &["--zone", &zones, "-o", "list"], &[]);
    o.assert_code(0);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 523, "every zone, every page");
    assert!(lines.iter().all(|l| l.split(',').count() == 2), "ID,NAME");
    assert!(o.stdout.contains(",n0519\n") && o.stdout.contains(",m0002"));
    let s = ours(peer, &["--zone", small, "-o", "list-status"], &[]);
    // Upstream prints a known state as it has it (lower case).
    assert!(
        s.stdout.lines().all(|l| l.ends_with(",off")),
        "{}",
        s.stdout
    );
    if let Some(u) = u.join().unwrap() {
        // Upstream reads one page of each zone (#617): 500 of the 520.
        u.assert_code(0);
        assert_eq!(u.stdout.lines().count(), 503, "{}", u.stderr);
    }
    // monitor: fencekit reads the one instance; upstream lists the zone.
    peer.instance("mon", json!({}));
    // (Other tests share the peer: count this zone's lists and mon's reads.)
    let lists = || {
        peer.requests(&format!("zones/{ZONE}/instances"))
            .iter()
            .filter(|l| l["path"].as_str().unwrap().ends_with("/instances"))
            .count()
    };
    let reads = || peer.requests("/instances/mon").len();
    let (l0, r0) = (lists(), reads());
    let o = ours(peer, &["--zone", ZONE, "-n", "mon", "-o", "monitor"], &[]);
    o.assert_code(0);
    assert_eq!(
        (lists() - l0, reads() - r0),
        (0, 1),
        "fencekit: one read, no list"
    );
    if has_upstream() {
        let l1 = lists();
        let u = upstream(peer, &["--zone", ZONE, "-n", "mon", "-o", "monitor"], &[]);
        u.assert_code(0);
        assert_eq!(lists() - l1, 1, "upstream lists the zone");
    }
    // Natively: list covers the zones it is given.
    let mut c = config(peer, "");
    c.zones = vec![big.into(), small.into()];
    let mut d = driver_of(peer, c);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let list = rt.block_on(d.list_instances(None)).unwrap();
    assert_eq!(list.len(), 523);
    eprintln!(
        "list_every_zone_and_page_and_monitor_one_read: {:.1}s",
        t0.elapsed().as_secs_f64()
    );
}

fn guards_pins_and_refusals() {
    let t0 = Instant::now();
    let Some(peer) = shared() else { return };
    let id = peer.instance("self", json!({}));
    peer.instance("other", json!({}));
    peer.control(json!({"op": "metadata", "instance": format!("{PROJECT}/{ZONE}/self")}));
    let md = [("GCE_METADATA_HOST", peer.metadata_host())];
    let md: Vec<(&str, &str)> = md.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // The instance this runs on is not stopped, nor reset, unless allowed.
    for action in ["off", "reboot"] {
        let o = ours(peer, &["--zone", ZONE, "-n", "self", "-o", action], &md);
        assert_eq!(o.code, Some(1), "{}", o.text());
        assert!(o.text().contains("self-fencing"), "{}", o.text());
    }
    assert!(peer.ops("self", "stop").is_empty() && peer.ops("self", "reset").is_empty());
    let o = ours(
        peer,
        &[
            "--zone",
            ZONE,
            "-n",
            "self",
            "-o",
            "off",
            "--allow-self-fence",
        ],
        &md,
    );
    expect(&o, 0, "Success: Powered OFF");
    // The identity pin: a wrong id changes nothing.
    let o = ours(
        peer,
        &[
            "--zone",
            ZONE,
            "-n",
            "other",
            "-o",
            "off",
            "--expect-instance-id",
            "1",
        ],
        &md,
    );
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert_eq!(peer.status("other"), "RUNNING");
    let o = ours(
        peer,
        &[
            "--zone",
            ZONE,
            "-n",
            "self",
            "-o",
            "status",
            "--expect-instance-id",
            &id,
        ],
        &md,
    );
    expect(&o, 2, "Status: OFF");
    // Bare Metal Solution is refused before anything is sent; --earlyexit
    // still confirms the state.
    let o = ours(
        peer,
        &[
            "--zone",
            ZONE,
            "-n",
            "other",
            "-o",
            "off",
            "--baremetalsolution",
        ],
        &md,
    );
    assert_eq!(o.code, Some(1));
    assert!(o.text().contains("bare metal solution"), "{}", o.text());
    let o = ours(
        peer,
        &["--zone", ZONE, "-n", "other", "-o", "off", "--earlyexit"],
        &md,
    );
    expect(&o, 0, "Success: Powered OFF");
    assert_eq!(peer.status("other"), "TERMINATED");
    // The zone is found by name (upstream's aggregated list), on both.
    let u = upstream_bg(peer, &["-n", "other", "-o", "status"], &[]);
    expect(
        &ours(peer, &["-n", "other", "-o", "status"], &[]),
        2,
        "Status: OFF",
    );
    if let Some(u) = u.join().unwrap() {
        expect(&u, 2, "Status: OFF");
    }
    // Natively with the metadata server's token and the guard.
    let mut d = driver_of(peer, config(peer, "self"));
    peer.set("self", json!({"status": "RUNNING"}));
    let e = act(&mut d, Action::Off, Duration::from_secs(3)).unwrap_err();
    assert_eq!(e.error.kind, ErrorKind::SelfFence, "{e:?}");
    eprintln!(
        "guards_pins_and_refusals: {:.1}s",
        t0.elapsed().as_secs_f64()
    );
}

/// The faults are the peer's, so they run one after another on a peer of
/// their own: an unknown instance, wrong credentials, throttling, an
/// expired token, and an API that never answers.
fn faults_credentials_throttling_silence() {
    let t0 = Instant::now();
    let Some(peer) = Peer::start(0.3) else { return };
    let peer: &'static Peer = Box::leak(Box::new(peer));
    for n in ["f-ours", "f-up"] {
        peer.instance(n, json!({}));
    }
    let z = on;

    // An unknown instance: both fail, nothing sent.
    let lap = |what: &str| eprintln!("  {what}: {:.1}s", t0.elapsed().as_secs_f64());
    let u = upstream_bg(
        peer,
        &[
            "--zone",
            ZONE,
            "-n",
            "nosuch",
            "-o",
            "status",
            "--retries",
            "0",
        ],
        &[],
    );
    let o = ours(peer, &["--zone", ZONE, "-n", "nosuch", "-o", "status"], &[]);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.text().contains("no instance 'nosuch'"), "{}", o.text());
    if let Some(u) = u.join().unwrap() {
        assert_eq!(u.code, Some(1), "{}", u.text());
    }

    lap("Wrong credentials");
    // Wrong credentials: a key the token endpoint does not know.
    let other = std::fs::read_to_string(peer.dir.join("key.pem")).unwrap();
    let wrong = peer.key_file("wrong.json", EMAIL, &other);
    let sa = format!("--serviceaccount={}", wrong.display());
    let u = upstream_bg(
        peer,
        &[
            "--zone",
            ZONE,
            "-n",
            "f-up",
            "-o",
            "status",
            &sa,
            "--retries",
            "0",
        ],
        &[],
    );
    let o = ours(peer, &z("f-ours", &["-o", "status", &sa]), &[]);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.text().contains("invalid jwt signature"), "{}", o.text());
    if let Some(u) = u.join().unwrap() {
        assert_eq!(u.code, Some(1), "{}", u.text());
        assert!(u.text().contains("invalid jwt signature"), "{}", u.text());
    }

    lap("Throttling");
    // Throttling: waited out within the deadline (upstream with its
    // --retrysleep shortened).
    peer.fault(json!({"throttle": 1, "retry_after": 1}));
    let o = ours(peer, &z("f-ours", &["-o", "status"]), &[]);
    expect(&o, 0, "Status: ON");
    assert!(o.elapsed >= Duration::from_millis(900), "{:?}", o.elapsed);
    if has_upstream() {
        peer.fault(json!({"throttle": 1}));
        let u = upstream(
            peer,
            &z("f-up", &["-o", "status", "--retrysleep", "1"]),
            &[],
        );
        expect(&u, 0, "Status: ON");
    }

    lap("An expired token");
    // A token revoked under way (401 on the second request: the stop) is
    // fetched again, once, on both; the stop goes through.
    for (side, name) in [("ours", "f-ours"), ("upstream", "f-up")] {
        if side == "upstream" && !has_upstream() {
            continue;
        }
        let tokens = peer.requests("/token").len();
        peer.fault(json!({"revoke_after": 2}));
        let r = match side {
            "ours" => ours(peer, &z(name, &["-o", "off"]), &[]),
            _ => upstream(peer, &z(name, &["-o", "off"]), &[]),
        };
        expect(&r, 0, "Success: Powered OFF");
        assert_eq!(
            peer.requests("/token").len() - tokens,
            2,
            "{side}: a new token after the 401"
        );
        peer.set(name, json!({"status": "RUNNING"}));
    }
    // An expired token is fetched again (natively: the same driver).
    let mut d = driver_of(peer, config(peer, "f-ours"));
    peer.control(json!({"op": "metadata", "instance": format!("{PROJECT}/{ZONE}/f-up")}));
    assert!(act(&mut d, Action::Status, Duration::from_secs(2)).is_ok());
    peer.control(json!({"op": "expire_tokens"}));
    assert!(act(&mut d, Action::Status, Duration::from_secs(2)).is_ok());
    assert_eq!(d.stats().tokens, 2);

    lap("An API that never");
    // An API that never answers: bounded on both (upstream by its
    // --apitimeout and --retries).
    peer.fault(json!({"hang": 30.0}));
    let u = upstream_bg(
        peer,
        &z(
            "f-up",
            &[
                "-o",
                "status",
                "--apitimeout",
                "1",
                "--retries",
                "1",
                "--retrysleep",
                "1",
            ],
        ),
        &[],
    );
    let o = ours(
        peer,
        &z(
            "f-ours",
            &["-o", "status", "--apitimeout", "1", "--power-timeout", "2"],
        ),
        &[],
    );
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.elapsed < Duration::from_secs(9), "{:?}", o.elapsed);
    if let Some(u) = u.join().unwrap() {
        assert_eq!(u.code, Some(1), "{}", u.text());
        assert!(
            !u.timed_out && u.elapsed < Duration::from_secs(20),
            "{:?}",
            u.elapsed
        );
    }
    peer.fault(json!({"hang": 0.0}));
    eprintln!(
        "faults_credentials_throttling_silence: {:.1}s",
        t0.elapsed().as_secs_f64()
    );
}

/// The second half of the faults, on a peer of its own: a lost answer,
/// 403 and 409, an operation that fails after acceptance, a stuck transition.
fn faults_power_requests() {
    let t0 = Instant::now();
    let Some(peer) = Peer::start(0.3) else { return };
    let peer: &'static Peer = Box::leak(Box::new(peer));
    for n in ["f-ours", "f-up"] {
        peer.instance(n, json!({}));
    }
    let z = on;
    let both = |more: &[&str], env: &[(&str, &str)]| {
        let u = has_upstream().then(|| upstream(peer, &z("f-up", more), env));
        (ours(peer, &z("f-ours", more), env), u)
    };
    let lap = |what: &str| eprintln!("  {what}: {:.1}s", t0.elapsed().as_secs_f64());
    // An instance that stays STOPPING is never off: bounded by
    // power_timeout (on a thread: no fault of the peer's is involved).
    peer.instance("stuck-ours", json!({"status": "STOPPING", "stuck": true}));
    let stuck = std::thread::spawn(move || {
        ours(
            peer,
            &on("stuck-ours", &["-o", "off", "--power-timeout", "2"]),
            &[],
        )
    });
    lap("A lost answer");
    // A lost answer: the stop is carried out and its answer lost.
    // fencekit reads it back and follows its operation: one stop sent, one
    // operation. Upstream sends the stop again: a second one (the other
    // lost answers: the lost module).
    // (Each fault names its instance: the two sides run at once.)
    peer.fault(json!({"lose": {"stop:f-ours": 1, "stop:f-up": 1}}));
    let u = upstream_bg(peer, &z("f-up", &["-o", "off"]), &[]);
    let o = ours(peer, &z("f-ours", &["-o", "off"]), &[]);
    expect(&o, 0, "Success: Powered OFF");
    assert_eq!(peer.ops("f-ours", "stop").len(), 1, "one stop operation");
    assert_eq!(peer.requests("/f-ours/stop").len(), 1);
    if let Some(u) = u.join().unwrap() {
        expect(&u, 0, "Success: Powered OFF");
        assert_eq!(
            peer.ops("f-up", "stop").len(),
            2,
            "upstream sent the stop twice"
        );
    }
    peer.set("f-ours", json!({"status": "RUNNING"}));
    peer.set("f-up", json!({"status": "RUNNING"}));

    lap("403");
    // 403: the stop is forbidden; both fail, the instance still running.
    peer.fault(json!({"forbid": ["compute.instances.stop"]}));
    let (o, u) = both(&["-o", "off", "--retries", "0"], &[]);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.text().contains("compute.instances.stop"), "{}", o.text());
    if let Some(u) = u {
        assert_eq!(u.code, Some(1), "{}", u.text());
    }
    assert_eq!(
        (peer.status("f-ours"), peer.status("f-up")),
        ("RUNNING".into(), "RUNNING".into())
    );
    peer.fault(json!({"forbid": []}));

    lap("409");
    // 409 (another operation on the instance): waited through.
    peer.fault(json!({"conflict": 1}));
    let o = ours(peer, &z("f-ours", &["-o", "off"]), &[]);
    expect(&o, 0, "Success: Powered OFF");
    expect(
        &ours(peer, &z("f-ours", &["-o", "on"]), &[]),
        0,
        "Success: Powered ON",
    );

    lap("An operation that");
    // An operation that fails after acceptance: never off, on both.
    peer.fault(json!({"fail_next": true}));
    let o = ours(peer, &z("f-ours", &["-o", "off"]), &[]);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(
        o.text().contains("zone_resource_pool_exhausted"),
        "{}",
        o.text()
    );
    assert_eq!(peer.status("f-ours"), "RUNNING");
    if has_upstream() {
        peer.fault(json!({"fail_next": true}));
        let u = upstream(peer, &z("f-up", &["-o", "off"]), &[]);
        assert_eq!(u.code, Some(1), "{}", u.text());
        assert!(!u.stdout.contains("Powered OFF"));
    }

    lap("stuck");
    let o = stuck.join().unwrap();
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.elapsed < Duration::from_secs(8), "{:?}", o.elapsed);
    assert_eq!(peer.status("stuck-ours"), "STOPPING");
    eprintln!("faults_power_requests: {:.1}s", t0.elapsed().as_secs_f64());
}
