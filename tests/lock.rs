//! The per-BMC lock where FAR runs fencekit: a read-only root file system
//! and an unprivileged UID (65532), in a mount namespace of its own. Two
//! agents on one BMC must be serialised — the second waits for the first and
//! then finds the node already off, so the BMC sees one `off` — and so must
//! an IPMI and a Redfish session to the same BMC (one lock key per BMC).
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
use std::time::Duration;

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
    support::root_with(&["unshare", "setpriv"])
}

/// A directory, readable by UID 65532, with agent symlinks to the binary.
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
            std::os::unix::fs::symlink(support::bin(), dir.join(name)).unwrap();
        }
        dir
    })
}

/// `argv` in a private mount namespace whose whole tree is read-only (the
/// script proves it), as UID/GID 65532 with no groups: FAR's pod.
fn in_far_pod(argv: &[String]) -> Command {
    let mut c = Command::new("unshare");
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
    let t = TestBmc::start(Duration::from_millis(800));
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
