//! Signals and restarts (SPEC §4 "idempotent and restartable", §5 FAR
//! contract, §11): SIGKILL at any stage of a reboot leaves nothing behind and
//! a fresh reboot still ends confirmed; SIGTERM and SIGINT stop an action
//! cleanly (session closed, last state reported, exit 1, long before the
//! deadline); fencekit never runs a child process; and the agent fences
//! without a writable file system (cwd `/`, no HOME, no XDG_RUNTIME_DIR, and
//! as root a read-only root in a private mount namespace).
//!
//! The BMC is the lab, in-process on its own thread, so that its power, its
//! command log and its session counters can be read directly.

mod support;

use fencekit::lab::bmc::{Bmc, Counters, Faults};
use fencekit::lab::fleet::{Lab, LabSpec};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A lab BMC served from its own thread for the test's duration.
struct TestBmc {
    addr: std::net::SocketAddr,
    bmc: Bmc,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestBmc {
    fn start(faults: Faults) -> TestBmc {
        let spec = LabSpec {
            faults,
            redfish: None,
            bind: support::own_loopback().into(),
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
                tx.send((lab.nodes[0].addr(), lab.nodes[0].bmc().clone()))
                    .unwrap();
                let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                drop(lab);
            });
        });
        let (addr, bmc) = rx.recv().unwrap();
        TestBmc {
            addr,
            bmc,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    fn target(&self) -> String {
        format!("ipmi://admin@{}", self.addr)
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

/// A directory with a `fence_ipmilan` symlink to the binary (FAR installs
/// it that way).
fn agent_bin() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-signals")
            .tempdir()
            .unwrap()
            .keep();
        std::os::unix::fs::symlink(support::bin(), dir.join("fence_ipmilan")).unwrap();
        dir.join("fence_ipmilan")
    })
}

/// `(pid, ppid, pgrp, comm)` of every process.
fn processes() -> Vec<(u32, u32, u32, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_string();
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        // rest[0] state, rest[1] ppid, rest[2] pgrp
        if rest.len() > 2 && rest[0] != "Z" {
            let ppid = rest[1].parse().unwrap_or(0);
            let pgrp = rest[2].parse().unwrap_or(0);
            out.push((pid, ppid, pgrp, comm));
        }
    }
    out
}

fn children_of(pid: u32) -> Vec<String> {
    processes()
        .into_iter()
        .filter(|p| p.1 == pid)
        .map(|p| format!("{} {}", p.0, p.3))
        .collect()
}

fn group_members(pgrp: u32) -> Vec<String> {
    processes()
        .into_iter()
        .filter(|p| p.2 == pgrp)
        .map(|p| format!("{} {}", p.0, p.3))
        .collect()
}

/// The environment FAR gives an agent: cwd `/`, no HOME, no XDG_RUNTIME_DIR.
fn bare(mut c: Command) -> Command {
    c.current_dir("/")
        .env_remove("HOME")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("PCMK_service")
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("FENCEKIT_AUDIT")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    c
}

fn native(args: &[&str], runtime_dir: &Path) -> Command {
    let mut c = bare(Command::new(support::bin()));
    c.args(args)
        .env("FENCEKIT_PASSWORD", support::LAB_PASSWORD)
        .env("XDG_RUNTIME_DIR", runtime_dir);
    c
}

fn agent(addr: std::net::SocketAddr, action: &str) -> Command {
    let mut c = bare(Command::new(agent_bin()));
    c.args([
        &format!("--ip={}", addr.ip()),
        &format!("--ipport={}", addr.port()),
        "--username=admin",
        &format!("--password={}", support::LAB_PASSWORD),
        "--lanplus",
        &format!("--action={action}"),
        "--power-wait=0",
    ]);
    c
}

/// A started command whose children are watched until it ends.
struct Watched {
    child: Child,
    started: Instant,
    children_seen: Vec<String>,
    /// Children with these names are the test's own (the read-only script).
    ignore: &'static [&'static str],
}

impl Watched {
    fn spawn(mut c: Command) -> Watched {
        let child = c.spawn().expect("spawn");
        Watched {
            child,
            started: Instant::now(),
            children_seen: Vec::new(),
            ignore: &[],
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn look(&mut self) {
        for c in children_of(self.pid()) {
            let name = c.split_once(' ').map_or("", |x| x.1);
            if !self.ignore.contains(&name) && !self.children_seen.contains(&c) {
                self.children_seen.push(c);
            }
        }
    }

    /// Watches for children until `at` (since start) or the exit.
    fn watch_until(&mut self, at: Duration) {
        while self.started.elapsed() < at {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            self.look();
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.pid().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok || sig == "KILL", "kill -{sig} failed");
    }

    /// Waits (≤ `limit`), returning (code, stdout, stderr, time since start).
    fn finish(mut self, limit: Duration) -> (Option<i32>, String, String, Duration) {
        loop {
            if self.child.try_wait().unwrap().is_some() {
                break;
            }
            self.look();
            if self.started.elapsed() > limit {
                support::kill_group(self.pid(), "KILL");
                panic!("still running after {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let took = self.started.elapsed();
        assert!(
            self.children_seen.is_empty(),
            "fencekit ran child processes: {:?}",
            self.children_seen
        );
        let o = self.child.wait_with_output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            took,
        )
    }
}

fn kill_then_restart(label: &str, t: &TestBmc, make: &dyn Fn() -> Command) {
    for at_ms in [5u64, 50, 200, 400, 700] {
        let before = t.bmc.log().len();
        let mut w = Watched::spawn(make());
        let pgrp = w.pid();
        w.watch_until(Duration::from_millis(at_ms));
        let ran_to_end = w.child.try_wait().unwrap().is_some();
        w.signal("KILL");
        let (code, _, _, _) = w.finish(Duration::from_secs(10));
        let seen = &t.bmc.log()[before..];
        println!(
            "{label}: SIGKILL at {at_ms} ms (exit {code:?}{}): the BMC got {seen:?}, power {}",
            if ran_to_end { ", already done" } else { "" },
            if t.bmc.is_on() { "on" } else { "off" }
        );
        assert!(
            support::eventually(Duration::from_secs(2), || group_members(pgrp).is_empty()),
            "{label}: processes left behind after SIGKILL at {at_ms} ms: {:?}",
            group_members(pgrp)
        );
        // A fresh reboot (FAR's next attempt) ends confirmed.
        let (code, out, err, took) = Watched::spawn(make()).finish(Duration::from_secs(30));
        assert_eq!(
            code,
            Some(0),
            "{label}: the reboot after a SIGKILL at {at_ms} ms failed ({took:?})\nstdout:\n{out}\nstderr:\n{err}"
        );
        assert!(t.bmc.is_on(), "{label}: the node is on after the reboot");
        let log = t.bmc.log();
        assert_eq!(
            log.last(),
            Some(&"on"),
            "{label}: the last command was a power-on: {log:?}"
        );
    }
}

#[test]
fn sigkill_at_any_stage_of_a_native_reboot_then_a_fresh_one_confirms() {
    let t = TestBmc::start(Faults {
        transition: Duration::from_millis(300),
        ..Faults::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let target = t.target();
    kill_then_restart("native reboot", &t, &|| {
        native(&["reboot", &target, "--timeout", "20s"], dir.path())
    });
}

#[test]
fn sigkill_at_any_stage_of_an_agent_reboot_then_a_fresh_one_confirms() {
    let t = TestBmc::start(Faults {
        transition: Duration::from_millis(300),
        ..Faults::default()
    });
    let addr = t.addr;
    kill_then_restart("fence_ipmilan reboot", &t, &|| agent(addr, "reboot"));
}

/// Stops an `off` against stuck power with `sig` after `after`.
fn interrupt(sig: &str, cmd: Command, after: Duration, t: &TestBmc) -> (i32, String, String) {
    let before = t.bmc.counters();
    let mut w = Watched::spawn(cmd);
    w.watch_until(after);
    // On a loaded machine the first status read may not be done yet: the
    // signal must land while the off is waiting for power, so that the
    // last state is known. Wait (bounded) until the off was sent.
    let limit = Instant::now() + Duration::from_secs(10);
    while t.bmc.counters().commands == before.commands && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        w.child.try_wait().unwrap().is_none(),
        "the off ended before the signal"
    );
    let sent = Instant::now();
    w.signal(sig);
    let (code, out, err, _) = w.finish(Duration::from_secs(10));
    let stop_took = sent.elapsed();
    let after: Counters = t.bmc.counters();
    println!(
        "SIG{sig}: stopped {stop_took:?} after the signal, exit {code:?}; sessions opened {}, closed {}",
        after.sessions - before.sessions,
        after.closed - before.closed
    );
    assert_eq!(
        code,
        Some(1),
        "exit 1 on SIG{sig}\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(
        stop_took < Duration::from_secs(2),
        "stopped {stop_took:?} after SIG{sig}, far from the 20 s power timeout"
    );
    assert!(after.sessions > before.sessions, "a session was opened");
    assert_eq!(
        after.sessions - before.sessions,
        after.closed - before.closed,
        "every session opened was closed"
    );
    assert!(t.bmc.is_on(), "stuck: still on");
    (code.unwrap_or(-1), out, err)
}

#[test]
fn sigterm_and_sigint_stop_a_stuck_off_cleanly() {
    let t = TestBmc::start(Faults {
        stuck: true,
        ..Faults::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let target = t.target();
    for sig in ["TERM", "INT"] {
        let cmd = native(
            &["off", &target, "--power-timeout", "20s", "-o", "json"],
            dir.path(),
        );
        let (_, out, err) = interrupt(sig, cmd, Duration::from_millis(700), &t);
        let v: serde_json::Value =
            serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("JSON ({e}): {out}\n{err}"));
        let r = &v["results"][0];
        assert_eq!(r["ok"], false, "{r}");
        assert_eq!(r["error_kind"], "interrupted", "{r}");
        assert_eq!(r["state"], "on", "the last known state is reported: {r}");

        let cmd = native(&["off", &target, "--power-timeout", "20s"], dir.path());
        let (_, _, err) = interrupt(sig, cmd, Duration::from_millis(700), &t);
        let e = err.to_lowercase();
        assert!(
            e.contains("signal") && e.contains("on"),
            "human output names the signal stop and the last state: {err}"
        );

        let (_, out, err) = interrupt(sig, agent(t.addr, "off"), Duration::from_millis(1500), &t);
        assert!(out.is_empty(), "no result line on stdout: {out}");
        assert!(
            err.contains("Failed: Interrupted by a signal"),
            "agent names the stop: {err}"
        );
    }
}

#[test]
fn the_agent_needs_no_writable_file_system() {
    let t = TestBmc::start(Faults::default());
    // cwd /, HOME and XDG_RUNTIME_DIR unset.
    for action in ["status", "off", "on", "reboot"] {
        let (code, out, err, _) =
            Watched::spawn(agent(t.addr, action)).finish(Duration::from_secs(30));
        assert!(
            matches!((action, code), ("status", Some(0 | 2)) | (_, Some(0))),
            "{action}: exit {code:?}\n{out}\n{err}"
        );
    }
    assert!(t.bmc.is_on());

    if !support::root_with(&["unshare"]) {
        return;
    }
    // A private mount namespace whose root is remounted read-only; the
    // script proves it before running fencekit.
    let ro = |argv: Vec<String>| -> (Option<i32>, String, String) {
        let mut c = support::tool("unshare");
        c.args(["--mount", "sh", "-c"])
            .arg(
                "mount --make-rprivate / && mount -o remount,bind,ro / || exit 90; \
                 for d in / /tmp /run \"$TMPDIR\"; do [ -n \"$d\" ] || continue; \
                 if (: > \"$d/.fencekit-rw-probe\") 2>/dev/null; then echo \"$d is writable\" >&2; exit 91; fi; done; \
                 exec \"$@\"",
            )
            .arg("sh")
            .args(argv);
        let mut w = Watched::spawn(bare(c));
        w.ignore = &["mount", "sh"];
        let (code, out, err, _) = w.finish(Duration::from_secs(30));
        (code, out, err)
    };
    let addr = t.addr;
    let agent_argv = |action: &str| -> Vec<String> {
        vec![
            agent_bin().to_string_lossy().into_owned(),
            format!("--ip={}", addr.ip()),
            format!("--ipport={}", addr.port()),
            "--username=admin".into(),
            format!("--password={}", support::LAB_PASSWORD),
            "--lanplus".into(),
            format!("--action={action}"),
            "--power-wait=0".into(),
        ]
    };
    let (code, out, err) = ro(agent_argv("reboot"));
    if code == Some(90) {
        support::skip(&format!(
            "read-only root: this kernel refuses the remount: {err}"
        ));
        return;
    }
    assert_eq!(
        code,
        Some(0),
        "agent reboot on a read-only root\n{out}\n{err}"
    );
    assert_eq!(out, "Success: Rebooted\n");
    let log = t.bmc.log();
    assert_eq!(log.last(), Some(&"on"), "{log:?}");
    let (code, out, err) = ro(agent_argv("off"));
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "Success: Powered OFF\n"),
        "{err}"
    );
    assert!(!t.bmc.is_on());

    // The native CLI takes the per-BMC lock, which needs no writable file
    // system: an abstract-namespace socket.
    let (code, out, err) = ro(vec![
        "env".into(),
        format!("FENCEKIT_PASSWORD={}", support::LAB_PASSWORD),
        support::bin().to_string_lossy().into_owned(),
        "on".into(),
        t.target(),
        "-vv".into(),
    ]);
    assert_eq!(code, Some(0), "native on, read-only root\n{out}\n{err}");
    assert!(t.bmc.is_on());
    assert!(
        err.contains("abstract socket @fencekit/bmc/"),
        "the lock is held on a read-only root (logged at debug level):\n{err}"
    );
}

/// The process entry (src/main.rs) opens a standard descriptor the caller
/// left closed on `/dev/null` before anything else: otherwise the agent's
/// first socket takes number 1 and "Status: ON" goes to the BMC as a
/// datagram. Counted by the lab: every datagram it received was a request
/// it answered.
#[test]
fn a_closed_stdout_is_filled_before_the_agent_opens_its_socket() {
    let t = TestBmc::start(Faults::default());
    let before = t.bmc.counters();
    let mut c = agent(t.addr, "status");
    c.stdout(Stdio::null());
    // SAFETY: close(2) is async-signal-safe; fd 1 is the child's own.
    unsafe {
        c.pre_exec(|| {
            libc::close(1);
            Ok(())
        });
    }
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // A stray datagram would arrive after the session's last answer.
    std::thread::sleep(Duration::from_millis(300));
    let after = t.bmc.counters();
    assert!(after.sessions > before.sessions, "{after:?}");
    assert_eq!(
        after.received - before.received,
        after.answered - before.answered,
        "the BMC received a datagram it did not answer: {after:?}"
    );
}

/// SIGPIPE is ignored (src/main.rs keeps that duty of Rust's start): a
/// reader that went away makes a write fail with EPIPE, which fencekit
/// handles, instead of killing the process by a signal.
#[test]
fn a_reader_that_went_away_is_an_error_not_a_signal() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(support::bin())
        .arg("man")
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        (out.status.code(), out.status.signal()),
        (Some(0), None),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
