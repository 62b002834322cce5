//! The per-device lock where FAR runs fencekit: a read-only root file system
//! and an unprivileged UID (65532), in a mount namespace of its own. Two
//! agents on one BMC must be serialised — the second waits for the first and
//! then finds the node already off, so the BMC sees one `off` — and so must
//! an IPMI and a Redfish session to the same BMC (IPMI on 623 and Redfish on
//! 443: one device).
//!
//! Several devices behind one address are not serialised: two VirtualBMC-
//! style nodes (two `ipmi_sim` on one address, two ports) and two systems of
//! one sushy-tools endpoint are fenced in parallel by two processes, in
//! about the time of one fence; two fences that must serialise take two
//! (one device: two reboots' power-waits), or (a system and the whole
//! endpoint) the second reset reaches the emulator only after the first
//! one's power change showed, by the emulator's own clock.
//!
//! The lock is its user's: a name bound by another UID (a process running
//! as `nobody`) blocks no fencing, is named in a warning, and the
//! legitimate processes still exclude each other.
//!
//! The scenario can tell: without the lock (`fencekit off --no-lock`, twice
//! at once) the BMC sees two `off` commands, which a negative control
//! checks. Needs root, `unshare` and `setpriv` (util-linux); where they are
//! missing the tests skip through the shared helper, which fails under
//! `FENCEKIT_REQUIRE_PEERS=1`.

mod support;

use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::fleet::{Lab, LabSpec};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where a [`TestBmc`] listens.
#[derive(Clone, Copy, PartialEq)]
enum Ports {
    /// Free ports (any user may bind them).
    Free,
    /// A real BMC's: IPMI on 623, Redfish on 443 (root only).
    Standard,
}

/// One lab BMC (IPMI and HTTPS Redfish on one address of its own) whose
/// power takes `transition` to change, served from a thread.
struct TestBmc {
    ipmi: SocketAddr,
    redfish: SocketAddr,
    bmc: Bmc,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestBmc {
    fn start(transition: Duration) -> TestBmc {
        TestBmc::start_on(transition, Ports::Free)
    }

    fn start_on(transition: Duration, ports: Ports) -> TestBmc {
        let spec = LabSpec {
            bind: support::own_loopback().into(),
            redfish: Some(true),
            faults: Faults {
                transition,
                ..Faults::default()
            },
            ..LabSpec::default()
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                if ports == Ports::Standard {
                    let (ipmi, redfish) = standard_bmc(&spec).await;
                    tx.send((ipmi.addr, redfish.addr, ipmi.bmc.clone()))
                        .unwrap();
                    let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                    return;
                }
                let lab = Lab::start(&spec).await.unwrap();
                let n = &lab.nodes[0];
                let rf = n.redfish.as_ref().expect("redfish").addr;
                tx.send((n.addr(), rf, n.bmc().clone())).unwrap();
                let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                drop(lab);
            });
        });
        let (ipmi, redfish, bmc) = rx.recv().unwrap();
        TestBmc {
            ipmi,
            redfish,
            bmc,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    fn offs(&self) -> usize {
        self.bmc.log().iter().filter(|c| **c == "off").count()
    }
}

/// The lab's IPMI and Redfish services of one BMC on 623 and 443 of
/// `spec.bind`, as a real BMC has them.
async fn standard_bmc(
    spec: &LabSpec,
) -> (
    fencekit::lab::ipmi::LabIpmi,
    fencekit::lab::redfish::LabRedfish,
) {
    let bmc = Bmc::new(true, spec.faults.clone());
    let offer = fencekit::lab::ipmi::Offer {
        username: "admin".into(),
        password: support::LAB_PASSWORD.as_bytes().to_vec(),
        suites: vec![3, 17],
        guid: [7; 16],
    };
    let ipmi =
        fencekit::lab::ipmi::LabIpmi::start(SocketAddr::new(spec.bind, 623), bmc.clone(), offer)
            .await
            .expect("IPMI on port 623");
    let opts = fencekit::lab::redfish::RedfishLabOptions {
        password: support::LAB_PASSWORD.into(),
        cert_ip: Some(spec.bind),
        ..Default::default()
    };
    let redfish =
        fencekit::lab::redfish::LabRedfish::start(SocketAddr::new(spec.bind, 443), bmc, opts)
            .await
            .expect("Redfish on port 443");
    (ipmi, redfish)
}

impl Drop for TestBmc {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// True when this test can build the FAR-like sandbox; otherwise skips
/// (loudly, and as a failure under `FENCEKIT_REQUIRE_PEERS=1`).
fn sandbox_available() -> bool {
    support::root_with(&["unshare", "setpriv"]) && support::bin_for_any_uid().is_some()
}

/// A directory, readable by UID 65532, with agent symlinks to the binary
/// (to a copy UID 65532 can reach, when the checkout is closed to others).
fn agents() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-lock")
            .tempdir()
            .unwrap()
            .keep();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        for name in ["fence_ipmilan", "fence_redfish"] {
            let exe = support::bin_for_any_uid().expect("checked by sandbox_available");
            std::os::unix::fs::symlink(exe, dir.join(name)).unwrap();
        }
        dir
    })
}

/// `argv` in a private mount namespace whose whole tree is read-only (the
/// script proves it), as UID/GID 65532 with no groups: FAR's pod.
fn in_far_pod(argv: &[String]) -> Command {
    let mut c = support::tool("unshare");
    c.args(["--mount", "sh", "-c"])
        .arg(
            "mount --make-rprivate / && mount --bind / / && mount -o remount,bind,ro / || exit 90; \
             for d in / /tmp /run; do \
               if (: > \"$d/.fencekit-rw-probe\") 2>/dev/null; then echo \"$d is writable\" >&2; exit 91; fi; \
             done; \
             exec setpriv --reuid 65532 --regid 65532 --clear-groups -- \"$@\"",
        )
        .arg("sh")
        .args(argv)
        .env_clear()
        .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn ipmi_agent(t: &TestBmc, action: &str) -> Vec<String> {
    vec![
        agents().join("fence_ipmilan").display().to_string(),
        format!("--ip={}", t.ipmi.ip()),
        format!("--ipport={}", t.ipmi.port()),
        "--username=admin".into(),
        format!("--password={}", support::LAB_PASSWORD),
        "--lanplus".into(),
        format!("--action={action}"),
        "--power-wait=0".into(),
        "-v".into(),
    ]
}

fn redfish_agent(t: &TestBmc, action: &str) -> Vec<String> {
    vec![
        agents().join("fence_redfish").display().to_string(),
        format!("--ip={}", t.redfish.ip()),
        format!("--ipport={}", t.redfish.port()),
        "--username=admin".into(),
        format!("--password={}", support::LAB_PASSWORD),
        "--ssl-insecure".into(),
        format!("--action={action}"),
        "-v".into(),
    ]
}

/// Runs both commands at once (bounded by the test's own limit).
fn concurrently(a: Command, b: Command) -> (Output, Output) {
    use std::os::unix::process::CommandExt;
    // Each in a process group of its own, so a hung one can be killed whole.
    let spawn = |mut c: Command| c.process_group(0).spawn().expect("spawn");
    let (ca, cb) = (spawn(a), spawn(b));
    let wait = |c: std::process::Child| {
        let pid = c.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(c.wait_with_output());
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(o) => o.expect("wait"),
            Err(_) => {
                support::kill_group(pid, "KILL");
                panic!("process {pid} still running after 60 s");
            }
        }
    };
    (wait(ca), wait(cb))
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn assert_sandboxed_success(o: &Output, what: &str) {
    match o.status.code() {
        Some(90) => panic!(
            "{what}: this kernel refuses the read-only remount\n{}",
            text(o)
        ),
        Some(91) => panic!("{what}: the sandbox is not read-only\n{}", text(o)),
        Some(0) => {}
        _ => panic!("{what} failed in the FAR-like sandbox\n{}", text(o)),
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("abstract socket @fencekit/bmc/"),
        "{what}: the lock is an abstract socket on a read-only root\n{}",
        text(o)
    );
}

#[test]
fn two_agents_on_one_bmc_in_a_far_pod_are_serialised() {
    if !sandbox_available() {
        return;
    }
    let t = TestBmc::start(Duration::from_millis(800));
    let (a, b) = concurrently(
        in_far_pod(&ipmi_agent(&t, "off")),
        in_far_pod(&ipmi_agent(&t, "off")),
    );
    assert_sandboxed_success(&a, "first fence_ipmilan");
    assert_sandboxed_success(&b, "second fence_ipmilan");
    assert!(!t.bmc.is_on());
    assert_eq!(
        t.offs(),
        1,
        "the second agent waited and found the node off: one off command ({:?})\n{}\n{}",
        t.bmc.log(),
        text(&a),
        text(&b)
    );
}

#[test]
fn ipmi_and_redfish_on_one_bmc_in_a_far_pod_are_serialised() {
    if !sandbox_available() {
        return;
    }
    // A real BMC's ports: IPMI on 623 and Redfish on 443 are one device.
    let t = TestBmc::start_on(Duration::from_millis(800), Ports::Standard);
    let (a, b) = concurrently(
        in_far_pod(&ipmi_agent(&t, "off")),
        in_far_pod(&redfish_agent(&t, "off")),
    );
    assert_sandboxed_success(&a, "fence_ipmilan");
    assert_sandboxed_success(&b, "fence_redfish");
    assert!(!t.bmc.is_on());
    assert_eq!(
        t.offs(),
        1,
        "one of the two protocols waited for the other: one off command ({:?})\n{}\n{}",
        t.bmc.log(),
        text(&a),
        text(&b)
    );
}

#[test]
fn without_the_lock_both_send_off_so_the_scenario_can_fail() {
    // The negative control of the two tests above: the same race, unlocked.
    let t = TestBmc::start(Duration::from_millis(800));
    let native = || {
        let mut c = Command::new(support::bin());
        c.args([
            "off",
            &format!("ipmi://admin@{}", t.ipmi),
            "--no-lock",
            "--power-wait",
            "0",
        ])
        .env("FENCEKIT_PASSWORD", support::LAB_PASSWORD)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        c
    };
    let (a, b) = concurrently(native(), native());
    assert!(
        a.status.success() && b.status.success(),
        "{}\n{}",
        text(&a),
        text(&b)
    );
    assert_eq!(t.offs(), 2, "{:?}", t.bmc.log());
}

// ------------------------------------------ several devices, one address ----

/// `fence_ipmilan ACTION` against `ipmi_sim` on 127.0.0.1:`port`, waiting
/// `wait` seconds after each power command (the fence's length).
fn sim_agent(port: u16, action: &str, wait: u32) -> Vec<String> {
    vec![
        agents().join("fence_ipmilan").display().to_string(),
        "--ip=127.0.0.1".into(),
        format!("--ipport={port}"),
        format!("--username={}", support::USER),
        format!("--password={}", support::PASSWORD),
        "--lanplus".into(),
        format!("--action={action}"),
        format!("--power-wait={wait}"),
        "-v".into(),
    ]
}

/// Runs both at once; their outputs and the wall time of the pair.
fn timed(a: Command, b: Command) -> (Output, Output, Duration) {
    let t = Instant::now();
    let (oa, ob) = concurrently(a, b);
    (oa, ob, t.elapsed())
}

#[test]
fn two_vbmc_style_nodes_behind_one_address_are_fenced_in_parallel() {
    if !sandbox_available() {
        return;
    }
    require!("ipmi_sim");
    // VirtualBMC: one address, one port per VM. Each reboot holds its lock
    // for at least two power-waits of 1 s: serialised, two take >= 4 s.
    let (n1, n2) = (support::IpmiSim::start(true), support::IpmiSim::start(true));
    let (a, b, wall) = timed(
        in_far_pod(&sim_agent(n1.port, "reboot", 1)),
        in_far_pod(&sim_agent(n2.port, "reboot", 1)),
    );
    assert_sandboxed_success(&a, "node on the first port");
    assert_sandboxed_success(&b, "node on the second port");
    let ops = |s: &support::IpmiSim| s.ops().join(", ");
    assert_eq!(ops(&n1), "set power 0, set power 1");
    assert_eq!(ops(&n2), "set power 0, set power 1");
    eprintln!("two devices behind one address, rebooted at once: {wall:.2?}");
    assert!(
        wall < Duration::from_millis(3800),
        "two ports of one address are two devices: in parallel, about one fence, took {wall:?}\n{}\n{}",
        text(&a),
        text(&b)
    );

    // The same measurement of two reboots of one device: they serialise.
    let (a, b, wall) = timed(
        in_far_pod(&sim_agent(n1.port, "reboot", 1)),
        in_far_pod(&sim_agent(n1.port, "reboot", 1)),
    );
    assert_sandboxed_success(&a, "first reboot of one device");
    assert_sandboxed_success(&b, "second reboot of one device");
    eprintln!("one device, rebooted twice at once: {wall:.2?}");
    assert!(
        wall >= Duration::from_secs(4),
        "one device: the second reboot waited for the first, took {wall:?}\n{}\n{}",
        text(&a),
        text(&b)
    );
    let waited = [&a, &b]
        .iter()
        .map(|o| String::from_utf8_lossy(&o.stderr).to_string())
        .find(|e| e.contains("waiting for the lock of 127.0.0.1:"))
        .expect("the waiter says so");
    assert!(
        waited.contains("held by PID") && waited.contains("fence_ipmilan reboot"),
        "it says who holds the lock and what it does:\n{waited}"
    );
}

/// One sushy-tools emulator (HTTPS) with `systems` systems whose power
/// changes become visible `delay` seconds after a reset; stopped on drop.
struct Sushy {
    port: u16,
}

impl Sushy {
    fn start(systems: u32, delay: u32) -> Option<Sushy> {
        let emulator = support::peers_dir().join("venv/bin/sushy-emulator");
        if !emulator.exists() {
            support::skip(&format!(
                "sushy-tools not installed ({} missing; run tests/peers/setup.sh)",
                emulator.display()
            ));
            return None;
        }
        for tool in ["curl", "openssl"] {
            if support::which(tool).is_none() {
                support::skip(&format!("no `{tool}` in PATH"));
                return None;
            }
        }
        let port = support::free_port();
        let mut c = Command::new("bash");
        c.arg(support::peer_scripts().join("sushy_start.sh"))
            .args([port.to_string(), "on".into(), delay.to_string()])
            .env("SUSHY_SYSTEMS", systems.to_string())
            .env("SUSHY_POWER", "On");
        let r = support::run(c, Duration::from_secs(60));
        assert_eq!(r.code, Some(0), "sushy_start.sh failed: {r}");
        Some(Sushy { port })
    }

    fn system(&self, i: u32) -> String {
        format!("/redfish/v1/Systems/00000000-0000-4000-8000-{i:012}")
    }

    /// PowerState of system `i`.
    fn power(&self, i: u32) -> String {
        let mut c = Command::new("curl");
        c.args(["-sk", "-u", "admin:fencepass"]).arg(format!(
            "https://127.0.0.1:{}{}",
            self.port,
            self.system(i)
        ));
        let v: serde_json::Value =
            serde_json::from_str(&support::run(c, Duration::from_secs(20)).stdout).unwrap();
        v["PowerState"].as_str().unwrap_or("?").to_string()
    }

    /// The two Reset POSTs the emulator received, in order, each as (when it
    /// came, when its power change shows), by the emulator's clock. The fake
    /// driver applies a change at `int(now) + DELAY`, so with a delay of 2 it
    /// shows 1-2 s after the POST; a fence holds its lock until it saw it.
    fn resets(&self) -> ((f64, f64), (f64, f64)) {
        let trace = support::peer_run_dir().join(format!("sushy-{}/trace.jsonl", self.port));
        let text = std::fs::read_to_string(&trace).unwrap_or_default();
        let mut posts: Vec<f64> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|r| {
                r["method"] == "POST"
                    && r["path"]
                        .as_str()
                        .is_some_and(|p| p.ends_with("/Actions/ComputerSystem.Reset"))
            })
            .filter_map(|r| r["t"].as_f64())
            .collect();
        posts.sort_by(f64::total_cmp);
        assert_eq!(posts.len(), 2, "two resets in {}:\n{text}", trace.display());
        // `t` is taken as the request arrives, before the driver reads the
        // clock, and rounded to 1 ms: its whole second can only be lower.
        let shows = |t: f64| (t - 0.001).floor() + 2.0;
        ((posts[0], shows(posts[0])), (posts[1], shows(posts[1])))
    }

    /// `fence_redfish off` for system `i`, or (`None`) for the system
    /// chosen by its UUID, `--expect-uuid` (the whole endpoint is locked:
    /// which system that is is found by discovery).
    fn off(&self, system: Option<u32>, by_uuid: u32) -> Vec<String> {
        let mut v = vec![
            agents().join("fence_redfish").display().to_string(),
            "--ip=127.0.0.1".into(),
            format!("--ipport={}", self.port),
            "--username=admin".into(),
            "--password=fencepass".into(),
            "--ssl-insecure".into(),
            "--action=off".into(),
            "-v".into(),
        ];
        match system {
            Some(i) => v.push(format!("--systems-uri={}", self.system(i))),
            None => v.push(format!(
                "--expect-uuid=00000000-0000-4000-8000-{by_uuid:012}"
            )),
        }
        v
    }
}

impl Drop for Sushy {
    fn drop(&mut self) {
        let mut c = Command::new("bash");
        c.arg(support::peer_scripts().join("sushy_stop.sh"))
            .arg(self.port.to_string());
        let _ = support::run(c, Duration::from_secs(15));
    }
}

#[test]
fn two_systems_of_one_sushy_endpoint_are_fenced_in_parallel() {
    if !sandbox_available() {
        return;
    }
    // Power changes show 1-2 s after the reset (see `Sushy::resets`).
    let Some(s) = Sushy::start(2, 2) else {
        return;
    };
    let (a, b, wall) = timed(
        in_far_pod(&s.off(Some(1), 0)),
        in_far_pod(&s.off(Some(2), 0)),
    );
    assert_sandboxed_success(&a, "system 1");
    assert_sandboxed_success(&b, "system 2");
    assert_eq!((s.power(1).as_str(), s.power(2).as_str()), ("Off", "Off"));
    for o in [&a, &b] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("/sys/00000000-0000-4000-8000-00"),
            "a system's own lock:\n{err}"
        );
    }
    let (first, second) = s.resets();
    eprintln!(
        "two systems of one endpoint, fenced at once: {wall:.2?}; resets {:.3} s apart",
        second.0 - first.0
    );
    assert!(
        second.0 < first.1,
        "two systems of one endpoint are two devices: the second reset ({second:?}) must come \
         before the first one's power change shows ({first:?}), took {wall:?}\n{}\n{}",
        text(&a),
        text(&b)
    );
    assert!(
        wall < Duration::from_millis(3800),
        "about one fence, took {wall:?}"
    );
    drop(s);

    // The same, one system named by its path and the other by its UUID,
    // which only discovery resolves (so it locks the whole endpoint): they
    // serialise. Wall time cannot show it (each off holds its lock 1-2 s,
    // so two serialised fences may take less than two parallel ones'
    // bound); the emulator's clock can: the second reset comes only after
    // the first one's power change showed.
    let Some(s) = Sushy::start(2, 2) else {
        return;
    };
    let (a, b, wall) = timed(in_far_pod(&s.off(Some(1), 0)), in_far_pod(&s.off(None, 2)));
    assert_sandboxed_success(&a, "system 1 by path");
    assert_sandboxed_success(&b, "system 2 by UUID");
    assert_eq!((s.power(1).as_str(), s.power(2).as_str()), ("Off", "Off"));
    let (first, second) = s.resets();
    eprintln!(
        "a system and its whole endpoint, fenced at once: {wall:.2?}; resets {:.3} s apart",
        second.0 - first.0
    );
    assert!(
        second.0 >= first.1,
        "the whole endpoint waits for a system of it (or the other way): the second reset \
         ({second:?}) came before the first one's power change showed ({first:?})\n{}\n{}",
        text(&a),
        text(&b)
    );
}

// ------------------------------------------------- another user's names ----

/// A process running as `nobody` (UID 65534) that binds `name` in the
/// abstract namespace (and listens, unless `listen` is false), until
/// dropped.
struct Squatter {
    child: std::process::Child,
}

const NOBODY: u32 = 65534;

impl Squatter {
    fn bind(name: &str, listen: bool) -> Squatter {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;
        let script = "import socket, sys, time\n\
                      s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n\
                      s.bind(b'\\0' + sys.argv[1].encode())\n\
                      if sys.argv[2] == 'listen': s.listen()\n\
                      print('bound', flush=True)\n\
                      time.sleep(120)\n";
        let mut child = support::tool("setpriv")
            .args([
                "--reuid",
                "65534",
                "--regid",
                "65534",
                "--clear-groups",
                "--",
            ])
            .args(["/usr/bin/python3", "-c", script, name])
            .arg(if listen { "listen" } else { "bind" })
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()
            .expect("start the squatter");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "bound", "the squatter could not bind @{name}");
        Squatter { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Squatter {
    fn drop(&mut self) {
        support::kill_group(self.child.id(), "KILL");
        let _ = self.child.wait();
    }
}

#[test]
fn a_lock_name_held_by_another_user_blocks_no_fencing() {
    if !sandbox_available() || !Path::new("/usr/bin/python3").exists() {
        return;
    }
    let t = TestBmc::start(Duration::from_millis(800));
    // `nobody` binds the device's lock name and never lets go.
    let squatter = Squatter::bind(
        &format!("fencekit/bmc/{}:{}", t.ipmi.ip(), t.ipmi.port()),
        true,
    );
    let started = Instant::now();
    let (a, b) = concurrently(
        in_far_pod(&ipmi_agent(&t, "off")),
        in_far_pod(&ipmi_agent(&t, "off")),
    );
    let took = started.elapsed();
    for (o, what) in [(&a, "first agent"), (&b, "second agent")] {
        assert_eq!(
            o.status.code(),
            Some(0),
            "{what} is not blocked\n{}",
            text(o)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("held by PID {} (UID {NOBODY})", squatter.pid())),
            "{what} names the squatter's PID and UID\n{err}"
        );
        assert!(
            err.contains("abstract socket @fencekit/uid/65532/bmc/"),
            "{what} locks under its own UID's name instead\n{err}"
        );
    }
    assert!(took < Duration::from_secs(10), "not blocked: {took:?}");
    assert_eq!(
        t.offs(),
        1,
        "the two legitimate agents still exclude each other: one off ({:?})\n{}\n{}",
        t.bmc.log(),
        text(&a),
        text(&b)
    );

    // A name bound by a socket that does not even listen (no credentials
    // to read from a connection): not a fencekit lock either; root finds
    // its owner in /proc.
    let t = TestBmc::start(Duration::ZERO);
    let deaf = Squatter::bind(
        &format!("fencekit/bmc/{}:{}", t.ipmi.ip(), t.ipmi.port()),
        false,
    );
    let mut c = Command::new(agents().join("fence_ipmilan"));
    c.args(&ipmi_agent(&t, "status")[1..]);
    let r = support::run(c, Duration::from_secs(30));
    r.assert_code(0);
    assert!(
        r.stderr.contains(&format!(
            "bound by PID {} (UID {NOBODY}), which accepts no connection",
            deaf.pid()
        )),
        "{r}"
    );
    assert!(r.elapsed < Duration::from_secs(5), "{r}");
}

// ------------------------------------------------- the in-process fan-out ----

#[test]
fn one_run_fences_devices_behind_one_address_in_parallel_up_to_its_limit() {
    require!("ipmi_sim");
    let (n1, n2) = (support::IpmiSim::start(true), support::IpmiSim::start(true));
    let reboot = |extra: &[&str]| {
        let mut args = vec![
            "reboot".to_string(),
            n1.target(),
            n2.target(),
            "--power-wait".into(),
            "1s".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        support::run(
            support::fencekit_cmd(&refs, support::PASSWORD),
            Duration::from_secs(60),
        )
    };
    let r = reboot(&[]);
    r.assert_code(0);
    eprintln!("one run, two devices behind one address: {:.2?}", r.elapsed);
    assert!(r.elapsed < Duration::from_millis(3800), "in parallel: {r}");
    let r = reboot(&["--max-per-address", "1"]);
    r.assert_code(0);
    eprintln!("the same with --max-per-address 1: {:.2?}", r.elapsed);
    assert!(r.elapsed >= Duration::from_secs(4), "one at a time: {r}");
}
