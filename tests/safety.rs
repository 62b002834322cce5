//! Operator safety through the real binary against the lab's simulated
//! BMCs, run in this process so that their counters and command logs can
//! be read: the mass-fencing guard (`--max-fence`, `--force --reason`),
//! holds across processes, the confirmed-off hook, and crash dump first
//! with a real `fence_kdump_send` (fence-agents) reporting to the listener.

mod support;

use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::fleet::{Lab, LabSpec};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// N simulated BMCs (IPMI only) on a thread of their own, an inventory
/// naming them, and a private runtime directory (locks, holds).
struct InLab {
    nodes: Vec<(String, u16, Bmc)>,
    /// Each node's Redfish port, when the lab serves Redfish.
    redfish: Vec<Option<u16>>,
    /// Each node's address (every lab BMC has its own).
    ips: Vec<String>,
    dir: tempfile::TempDir,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InLab {
    fn start(n: u32, defaults: &str) -> InLab {
        InLab::with(
            LabSpec {
                nodes: n,
                redfish: None,
                ..LabSpec::default()
            },
            defaults,
        )
    }

    fn with(mut spec: LabSpec, defaults: &str) -> InLab {
        // An address of this test's own: the per-BMC lock is keyed by address.
        spec.bind = support::own_loopback().into();
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let lab = Lab::start(&spec).await.unwrap();
                let nodes: Vec<(String, u16, Bmc)> = lab
                    .nodes
                    .iter()
                    .map(|n| (n.name.clone(), n.addr().port(), n.bmc().clone()))
                    .collect();
                let redfish: Vec<Option<u16>> = lab
                    .nodes
                    .iter()
                    .map(|n| n.redfish.as_ref().map(|r| r.addr.port()))
                    .collect();
                let ips: Vec<String> = lab
                    .nodes
                    .iter()
                    .map(|n| n.addr().ip().to_string())
                    .collect();
                tx.send((nodes, redfish, ips)).unwrap();
                let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                drop(lab);
            });
        });
        let (nodes, redfish, ips) = rx.recv().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pw"), "lab\n").unwrap();
        std::fs::create_dir(dir.path().join("run")).unwrap();
        let mut inv = format!(
            "[defaults]\nusername = \"admin\"\npassword_file = \"{}\"\n{defaults}\n",
            dir.path().join("pw").display()
        );
        for ((name, port, _), ip) in nodes.iter().zip(&ips) {
            inv.push_str(&format!(
                "[[node]]\nname = \"{name}\"\naddress = \"127.0.0.1\"\n  [[node.fence]]\n  \
                 endpoint = \"ipmi://{ip}:{port}\"\n"
            ));
        }
        std::fs::write(dir.path().join("lab.toml"), inv).unwrap();
        InLab {
            nodes,
            redfish,
            ips,
            dir,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    fn d(&self) -> &Path {
        self.dir.path()
    }

    fn bmc(&self, i: usize) -> &Bmc {
        &self.nodes[i].2
    }

    fn url(&self, i: usize) -> String {
        format!("ipmi://admin@{}:{}", self.ips[i], self.nodes[i].1)
    }

    /// `fencekit ARGS` with this lab's inventory, runtime dir and audit file.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(support::bin());
        c.args(args);
        self.setup(c)
    }

    /// [`InLab::cmd`] started under `umask 022`, what most shells have.
    fn cmd_umask_022(&self, args: &[&str]) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", "umask 022 && exec \"$0\" \"$@\""])
            .arg(support::bin())
            .args(args);
        self.setup(c)
    }

    fn setup(&self, mut c: Command) -> Command {
        c.current_dir(self.d())
            .env("NO_COLOR", "1")
            .env("XDG_RUNTIME_DIR", self.d().join("run"))
            .env("FENCEKIT_INVENTORY", self.d().join("lab.toml"))
            .env("FENCEKIT_AUDIT", self.d().join("audit.jsonl"))
            .env_remove("FENCEKIT_PASSWORD");
        c
    }

    fn run(&self, args: &[&str]) -> support::Run {
        support::run(self.cmd(args), Duration::from_secs(60))
    }

    fn audit(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.d().join("audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.d().join(name)).unwrap_or_default()
    }

    fn untouched(&self, i: usize) -> bool {
        let c = self.bmc(i).counters();
        c.received == 0 && c.sessions == 0
    }
}

impl Drop for InLab {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

// ---------------------------------------------------------- the guard ----

#[test]
fn a_range_beyond_max_fence_is_refused_before_anything_is_contacted() {
    let lab = InLab::start(4, "");
    // node[01-04] where node[01-02] was meant, limit 50% of 4 = 2.
    let r = lab.run(&["off", "node[01-04]", "--max-fence", "50%"]);
    r.assert_code(64);
    r.assert_mentions(&["refusing to power off 4 node(s)"]);
    r.assert_mentions(&["limit 2 (50% of the inventory's 4 node(s))"]);
    r.assert_mentions(&["nothing was contacted"]);
    for i in 0..4 {
        assert!(lab.untouched(i), "node {i} was contacted\n{r}");
        assert!(lab.bmc(i).is_on());
    }
    let rec = lab.audit();
    assert_eq!(rec.len(), 1, "{rec:?}");
    assert_eq!(rec[0]["event"], "max-fence-refused");
    assert_eq!(rec[0]["acting"], 4);
    assert_eq!(rec[0]["allowed"], 2);

    // --dry-run shows the count against the limit (and exits as the run would).
    let r = lab.run(&["reboot", "--all", "--max-fence", "3", "--dry-run"]);
    r.assert_code(64);
    r.assert_mentions(&[
        "mass-fencing guard: reboot on 4 node(s), limit 3, from --max-fence: beyond the limit",
    ]);
    let r = lab.run(&[
        "off",
        "node0[1-2]",
        "--max-fence",
        "50%",
        "--dry-run",
        "-o",
        "json",
    ]);
    r.assert_code(0);
    let g = &r.json()["guard"];
    assert_eq!(
        (g["acting"].as_u64(), g["allowed"].as_u64()),
        (Some(2), Some(2)),
        "{r}"
    );
    assert_eq!(g["limit"], "50%");
    assert_eq!(g["exceeded"], false);

    // --force needs a reason (usage error), then goes ahead and is audited.
    lab.run(&["off", "node[01-04]", "--max-fence", "50%", "--force"])
        .assert_code(64);
    for i in 0..4 {
        assert!(lab.untouched(i));
    }
    let r = lab.run(&[
        "off",
        "node[01-03]",
        "--max-fence",
        "50%",
        "--force",
        "--reason",
        "rack 3 PDU swap",
    ]);
    r.assert_code(0);
    r.assert_mentions(&["--force", "rack 3 pdu swap"]);
    for i in 0..3 {
        assert!(!lab.bmc(i).is_on());
    }
    assert!(lab.untouched(3));
    let rec = lab.audit();
    let forced: Vec<_> = rec
        .iter()
        .filter(|x| x["event"] == "max-fence-forced")
        .collect();
    assert_eq!(forced.len(), 1, "{rec:?}");
    assert_eq!(forced[0]["reason"], "rack 3 PDU swap");
    assert!(forced[0]["user"].as_str().is_some_and(|u| !u.is_empty()));
    assert_eq!(
        forced[0]["targets"],
        serde_json::json!(["node01", "node02", "node03"])
    );
    assert_eq!(
        rec.iter()
            .filter(|x| x["action"] == "off" && x["ok"] == true)
            .count(),
        3,
        "one record per node fenced"
    );
}

#[test]
fn the_inventory_sets_the_default_limit_and_force_needs_an_audit_trail() {
    let lab = InLab::start(3, "max_fence = 1");
    let mut c = lab.cmd(&["reboot", "node01", "node02", "--force", "--reason", "x"]);
    c.env_remove("FENCEKIT_AUDIT");
    let r = support::run(c, Duration::from_secs(30));
    r.assert_code(64);
    r.assert_mentions(&["needs an audit trail"]);
    let r = lab.run(&["off", "node01", "node02"]);
    r.assert_code(64);
    r.assert_mentions(&["lab.toml (max_fence)"]);
    for i in 0..3 {
        assert!(lab.untouched(i));
    }
    // One node is within the limit; --max-fence overrides the inventory.
    lab.run(&["off", "node01"]).assert_code(0);
    lab.run(&["off", "node02", "node03", "--max-fence", "2"])
        .assert_code(0);
    // Not a fencing action: no limit.
    lab.run(&["on", "--all"]).assert_code(0);
}

// -------------------------------------------------------------- holds ----

#[test]
fn holds_refuse_power_changes_across_processes_until_released_or_expired() {
    let lab = InLab::start(3, "");
    lab.run(&[
        "hold",
        "node02",
        "--for",
        "2s",
        "--reason",
        "disk swap",
        "--by",
        "alice",
    ])
    .assert_code(0)
    .assert_mentions(&["node02: held by alice until"]);
    lab.run(&[
        "hold",
        "node03",
        "--for",
        "1h",
        "--reason",
        "firmware update",
    ])
    .assert_code(0);
    let r = lab.run(&["hold", "--list"]);
    r.assert_code(0);
    assert!(
        r.stdout.contains("node02: held by alice on ") && r.stdout.contains("disk swap"),
        "{r}"
    );
    assert!(r.stdout.contains("firmware update"), "{r}");

    // A power change on a held node is refused without contact (exit 1);
    // the others in the same run go ahead.
    let r = lab.run(&["off", "node01", "node02", "-o", "json"]);
    r.assert_code(1);
    let res = r.json()["results"].as_array().unwrap().clone();
    assert_eq!(res[0]["node"], "node01");
    assert_eq!(res[0]["ok"], true);
    assert_eq!(res[1]["node"], "node02");
    assert_eq!(res[1]["error_kind"], "held");
    let e = res[1]["error"].as_str().unwrap();
    assert!(
        e.contains("held by alice until") && e.contains("disk swap"),
        "{e}"
    );
    assert!(lab.untouched(1));
    // The same machine by its BMC URL is held too.
    let mut c = lab.cmd(&["reboot", &lab.url(1), "--password-file", "pw"]);
    c.env_remove("FENCEKIT_INVENTORY");
    support::run(c, Duration::from_secs(30))
        .assert_code(1)
        .assert_mentions(&["node02 is held by alice"]);
    lab.run(&["on", "node02"]).assert_code(1);
    assert!(lab.untouched(1));
    // Reading is not changing: status, check and verify still work.
    lab.run(&["status", "node02"]).assert_code(0);
    lab.run(&["check", "node02"]).assert_code(0);
    assert!(lab.bmc(1).counters().sessions > 0);
    assert!(lab.bmc(1).is_on());

    // Expiry: no release needed.
    std::thread::sleep(Duration::from_millis(3200));
    lab.run(&["off", "node02"]).assert_code(0);
    assert!(!lab.bmc(1).is_on());

    // Release: by another process.
    lab.run(&["off", "node03"]).assert_code(1);
    lab.run(&["release", "node03"])
        .assert_code(0)
        .assert_mentions(&["node03: released"]);
    lab.run(&["release", "node03"])
        .assert_code(0)
        .assert_mentions(&["node03: not held"]);
    lab.run(&["off", "node03"]).assert_code(0);
    lab.run(&["hold", "--list"])
        .assert_code(0)
        .assert_mentions(&["no holds"]);

    // A planned shutdown: everything held, then everything released.
    lab.run(&[
        "hold",
        "--all",
        "--for",
        "1h",
        "--reason",
        "planned shutdown",
    ])
    .assert_code(0);
    let before = lab.bmc(0).counters().received;
    lab.run(&["on", "--all"]).assert_code(1);
    assert_eq!(lab.bmc(0).counters().received, before);
    let r = lab.run(&["release", "--all"]);
    r.assert_code(0);
    for n in ["node01", "node02", "node03"] {
        assert!(r.stdout.contains(&format!("{n}: released")), "{r}");
    }
    lab.run(&["on", "--all"]).assert_code(0);

    let rec = lab.audit();
    let events: Vec<String> = rec
        .iter()
        .map(|x| match x["event"].as_str() {
            Some(e) => format!("{e} {}", x["node"].as_str().unwrap_or("")),
            None => format!(
                "{} {} {}",
                x["action"].as_str().unwrap(),
                x["node"].as_str().unwrap(),
                x["error_kind"].as_str().unwrap_or("ok")
            ),
        })
        .collect();
    for want in [
        "hold node02",
        "hold node03",
        "off node02 held",
        "on node02 held",
        "off node02 ok",
        "off node03 held",
        "release node03",
        "off node03 ok",
    ] {
        assert!(
            events.iter().any(|e| e == want),
            "{want} not in {events:#?}"
        );
    }
    let hold = rec.iter().find(|x| x["event"] == "hold").unwrap();
    assert_eq!(hold["by"], "alice");
    assert_eq!(hold["reason"], "disk swap");
}

/// A hold file that does not parse holds its node, with a warning naming
/// the file; it used to be skipped silently, so the node was not held
/// (issue 23, item 8). Releasing the node removes the damaged file.
#[test]
fn a_hold_file_that_cannot_be_read_still_holds_its_node() {
    let lab = InLab::start(2, "");
    lab.run(&["hold", "node02", "--for", "1h", "--reason", "disk swap"])
        .assert_code(0);
    let dir = lab.d().join("run/fencekit/hold");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::write(&files[0], "{\"node\": \"node02\", \"by\": ").unwrap();
    let r = lab.run(&["off", "node01", "node02", "-o", "json"]);
    r.assert_code(1);
    let file = files[0].display().to_string();
    assert!(
        r.stderr
            .contains(&format!("warning: cannot read hold file {file}")),
        "{r}"
    );
    let res = r.json()["results"].as_array().unwrap().clone();
    assert_eq!(res[0]["ok"], true, "node01 is not held: {r}");
    assert_eq!(res[1]["error_kind"], "held", "{r}");
    assert!(
        res[1]["error"]
            .as_str()
            .unwrap()
            .starts_with(&format!("held: cannot read hold file {file}")),
        "{r}"
    );
    assert!(lab.untouched(1));
    lab.run(&["hold", "--list"])
        .assert_code(0)
        .assert_mentions(&["cannot read hold file"]);
    lab.run(&["release", "node02"]).assert_code(0);
    assert!(!files[0].exists());
    lab.run(&["off", "node02"]).assert_code(0);
}

#[test]
fn holds_without_a_writable_runtime_directory_fail_clearly() {
    let lab = InLab::start(1, "");
    // /proc takes no new directory: where holds cannot be recorded at all.
    let mut c = lab.cmd(&["hold", "node01", "--for", "1h", "--reason", "x"]);
    c.env("XDG_RUNTIME_DIR", "/proc");
    support::run(c, Duration::from_secs(30))
        .assert_code(1)
        .assert_mentions(&["cannot record holds in /proc/fencekit/hold"]);
    // Reading where no hold can exist is no hold, not an error; fencing works.
    let mut c = lab.cmd(&["hold", "--list"]);
    c.env("XDG_RUNTIME_DIR", "/proc");
    support::run(c, Duration::from_secs(30))
        .assert_code(0)
        .assert_mentions(&["no holds"]);
    let mut c = lab.cmd(&["off", "node01", "--no-lock"]);
    c.env("XDG_RUNTIME_DIR", "/proc");
    support::run(c, Duration::from_secs(30)).assert_code(0);
    // Missing --for or --reason: usage errors.
    lab.run(&["hold", "node01", "--reason", "x"])
        .assert_code(64);
    lab.run(&["hold", "node01", "--for", "1h"]).assert_code(64);
}

#[test]
fn audit_hold_and_acknowledgment_files_are_private_under_umask_022() {
    use std::os::unix::fs::PermissionsExt;
    let lab = InLab::start(2, "");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let run = |args: &[&str]| support::run(lab.cmd_umask_022(args), Duration::from_secs(60));
    run(&["status", "node01"]).assert_code(0);
    run(&["hold", "node02", "--for", "1h", "--reason", "disk swap"]).assert_code(0);
    run(&["ack", "node02"]).assert_code(0);
    let runtime = lab.d().join("run/fencekit");
    let holds: Vec<_> = std::fs::read_dir(runtime.join("hold"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let acks: Vec<_> = std::fs::read_dir(runtime.join("ack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!((holds.len(), acks.len()), (1, 1), "{holds:?} {acks:?}");
    for (what, p, want) in [
        ("audit file", lab.d().join("audit.jsonl"), 0o600),
        ("hold", holds[0].clone(), 0o600),
        ("acknowledgment", acks[0].clone(), 0o600),
        ("runtime directory", runtime.clone(), 0o700),
        ("hold directory", runtime.join("hold"), 0o700),
    ] {
        assert_eq!(mode(&p), want, "{what} {} is {:o}", p.display(), mode(&p));
    }
    // A file that exists keeps the mode its owner gave it.
    let audit = lab.d().join("audit.jsonl");
    std::fs::set_permissions(&audit, std::fs::Permissions::from_mode(0o640)).unwrap();
    run(&["status", "node01"]).assert_code(0);
    assert_eq!(mode(&audit), 0o640);
    assert_eq!(lab.audit().len(), 3, "two status records and the hold");
}

// ---------------------------------------------------------------- hook ----

/// A hook that counts its runs, asks the lab (through fencekit itself) for
/// the power state, and records what it was told.
fn recording_hook(lab: &InLab, node: usize, tail: &str) -> String {
    format!(
        "echo run >> runs; echo \"$FENCEKIT_NODE $FENCEKIT_ACTION $FENCEKIT_METHOD \
         $FENCEKIT_LEVEL ${{FENCEKIT_PASSWORD-nopassword}}\" >> env; \
         '{}' status {} --password-file pw >> seen 2>&1; echo \"exit $?\" >> seen; {tail}",
        support::bin().display(),
        lab.url(node)
    )
}

#[test]
fn the_hook_runs_once_while_the_lab_reports_off() {
    let lab = InLab::start(2, "");
    let hook = recording_hook(&lab, 0, "echo cleaned");
    let mut c = lab.cmd(&["off", "node01", "--on-confirmed-off", &hook, "-o", "json"]);
    // The password the fencing itself uses: the hook must not see it.
    c.env("FENCEKIT_PASSWORD", "lab");
    let r = support::run(c, Duration::from_secs(60));
    r.assert_code(0);
    assert_eq!(lab.file("runs"), "run\n", "exactly once");
    assert_eq!(lab.file("env"), "node01 off ipmi 1 nopassword\n");
    let seen = lab.file("seen");
    assert!(
        seen.contains(": off") && seen.ends_with("exit 2\n"),
        "{seen}"
    );
    let res = r.json_result();
    assert_eq!(res["hook"]["ok"], true);
    let tl: Vec<&str> = res["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    let off = tl.iter().rposition(|e| *e == "state-observed").unwrap();
    let started = tl.iter().position(|e| *e == "hook-started").unwrap();
    assert!(off < started, "{tl:?}");
    let out = res["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == "hook-output")
        .unwrap();
    assert_eq!(out["text"], "cleaned\n");
    assert!(lab.audit()[0]["hook"]["ok"] == true);

    // Already off: still observed off, so the hook runs (once more).
    lab.run(&["off", "node01", "--on-confirmed-off", &hook])
        .assert_code(0);
    assert_eq!(lab.file("runs"), "run\nrun\n");

    // A failing hook after a confirmed off: a failure, and the node is off.
    let r = lab.run(&["off", "node02", "--on-confirmed-off", "exit 3"]);
    r.assert_code(1);
    r.assert_mentions(&[
        "node is off (confirmed), but the confirmed-off hook failed: exit status 3",
    ]);
    assert!(!lab.bmc(1).is_on());
}

/// The hook's captured output (stdout and stderr) from a JSON result.
fn hook_output(res: &serde_json::Value) -> String {
    res["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "hook-output")
        .map(|e| e["text"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_hook_that_runs_fencekit_for_its_own_node_is_let_through_the_lock() {
    let lab = InLab::start(1, "");
    let bin = support::bin().display().to_string();
    // The hook asks fencekit itself about the node its parent holds the
    // lock of (exit 2: off); the grant it inherits lets it through.
    let status = format!("'{bin}' status -i lab.toml node01");
    let hook = format!("{status} --timeout 5s; test $? = 2");
    let r = lab.run(&["off", "node01", "--on-confirmed-off", &hook, "-o", "json"]);
    r.assert_code(0);
    let res = r.json_result();
    assert_eq!(res["hook"]["ok"], true, "{r}");
    assert!(hook_output(&res).contains("off"), "{r}");
    let took = res["hook"]["elapsed_ms"].as_u64().unwrap();
    eprintln!("a hook running fencekit status on its own node: {took} ms");
    assert!(
        took < 1000,
        "the hook waited for its parent's lock: {took} ms\n{r}"
    );

    // Without the grant the same command waits for its parent's lock until
    // its own deadline, and says who holds it: the test can fail.
    let hook = format!("env -u FENCEKIT_LOCK_GRANT {status} --timeout 2s; test $? = 2");
    let r = lab.run(&["off", "node01", "--on-confirmed-off", &hook, "-o", "json"]);
    r.assert_code(1);
    let res = r.json_result();
    assert_eq!(res["hook"]["ok"], false, "{r}");
    let took = res["hook"]["elapsed_ms"].as_u64().unwrap();
    assert!(took >= 2000, "{took} ms\n{r}");
    let said = hook_output(&res);
    assert!(
        said.contains("still holds the lock") && said.contains("off node01 (level 1)"),
        "{said}"
    );
}

#[test]
fn the_hook_is_skipped_when_off_fails() {
    let lab = InLab::start(1, "");
    lab.bmc(0).set_faults(Faults {
        stuck: true,
        ..Faults::default()
    });
    let hook = recording_hook(&lab, 0, "");
    let r = lab.run(&[
        "off",
        "node01",
        "--power-timeout",
        "1s",
        "--on-confirmed-off",
        &hook,
    ]);
    r.assert_code(1);
    r.assert_mentions(&["timed out waiting to power off"]);
    assert_eq!(lab.file("runs"), "", "no hook without a confirmed off");
    assert!(lab.bmc(0).is_on());
}

#[test]
fn during_reboot_the_hook_runs_between_off_and_on_and_a_failure_leaves_the_node_off() {
    let lab = InLab::start(2, "");
    let hook = recording_hook(&lab, 0, "");
    lab.run(&["reboot", "node01", "--on-confirmed-off", &hook])
        .assert_code(0);
    assert_eq!(lab.file("runs"), "run\n");
    assert_eq!(lab.file("env"), "node01 reboot ipmi 1 nopassword\n");
    assert!(
        lab.file("seen").ends_with("exit 2\n"),
        "the lab said off during the hook"
    );
    assert!(lab.bmc(0).is_on(), "then powered on");
    assert_eq!(lab.bmc(0).log(), vec!["off", "on"]);

    // The inventory's hook, failing: the node stays off, nothing powers it on.
    let failing = "echo 'taint failed' >&2; exit 5";
    std::fs::write(
        lab.d().join("lab.toml"),
        lab.file("lab.toml").replace(
            "[defaults]\n",
            &format!("[defaults]\non_confirmed_off = \"{failing}\"\n"),
        ),
    )
    .unwrap();
    let r = lab.run(&["reboot", "node02"]);
    r.assert_code(1);
    r.assert_mentions(&["left off"]);
    r.assert_mentions(&["exit status 5; stderr: taint failed"]);
    assert!(!lab.bmc(1).is_on());
    assert_eq!(lab.bmc(1).log(), vec!["off"], "never powered on");
    let rec = lab.audit();
    let last = rec.last().unwrap();
    assert_eq!(last["error_kind"], "hook-failed");
    assert_eq!(last["outcome"], "fenced-not-restored");

    // Unless asked: then it is powered on, and the result still fails.
    let r = lab.run(&["reboot", "node02", "--on-despite-hook-failure"]);
    r.assert_code(1);
    r.assert_mentions(&["powered on anyway"]);
    assert!(lab.bmc(1).is_on());
    // A power cycle is never observed off: refused with the hook.
    lab.run(&["reboot", "node02", "--method", "cycle"])
        .assert_code(64)
        .assert_mentions(&["never observed off"]);
}

// ----------------------------------------------------------- crash dump ----

const KDUMP_SEND: &str = "/usr/libexec/fence-agents/fence_kdump_send";

#[test]
fn crashdump_sends_an_nmi_waits_for_fence_kdump_then_powers_off() {
    if !Path::new(KDUMP_SEND).exists() {
        support::skip(&format!("no {KDUMP_SEND}; Debian package fence-agents"));
        return;
    }
    let lab = InLab::start(1, "");
    let port = support::free_port().to_string();
    let mut c = lab.cmd(&[
        "off",
        "node01",
        "--crashdump",
        "--kdump-port",
        &port,
        "--kdump-quiet",
        "1500ms",
        "-o",
        "json",
    ]);
    let out = lab.d().join("off.json");
    c.stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null());
    let mut off = c.spawn().unwrap();
    // The node "panics" when the NMI arrives; its kdump kernel then reports.
    let t0 = Instant::now();
    while !lab.bmc(0).log().contains(&"diag") {
        assert!(t0.elapsed() < Duration::from_secs(20), "no NMI");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lab.bmc(0).is_on(), "an NMI does not power off");
    let send = support::run(
        {
            let mut s = Command::new(KDUMP_SEND);
            s.args(["-p", &port, "-c", "2", "-i", "1", "127.0.0.1"]);
            s
        },
        Duration::from_secs(20),
    );
    send.assert_code(0);
    let status = off.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let res = &doc["results"][0];
    assert_eq!(res["ok"], true);
    assert_eq!(res["state"], "off");
    assert_eq!(res["crashdump"]["nmi"], "sent");
    assert_eq!(res["crashdump"]["messages"], 2);
    assert_eq!(res["crashdump"]["ended"], "dump-done");
    assert_eq!(lab.bmc(0).log(), vec!["diag", "off"]);
    assert!(!lab.bmc(0).is_on());
    let steps: Vec<String> = res["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let ev = e["event"].as_str().unwrap();
            match ev {
                "command-sent" => format!("{ev} {}", e["command"].as_str().unwrap()),
                _ => ev.to_string(),
            }
        })
        .collect();
    let at = |s: &str| {
        steps
            .iter()
            .position(|x| x == s)
            .unwrap_or_else(|| panic!("{s} in {steps:?}"))
    };
    assert!(at("command-sent diag") < at("awaiting-crashdump"));
    assert!(at("awaiting-crashdump") < at("crashdump-message"));
    assert!(at("crashdump-message") < at("crashdump-wait-ended"));
    assert!(at("crashdump-wait-ended") < at("command-sent off"));
    assert_eq!(lab.audit()[0]["crashdump"]["messages"], 2);
}

#[test]
fn crashdump_without_a_message_powers_off_after_the_wait() {
    let lab = InLab::start(1, "");
    let port = support::free_port().to_string();
    let r = lab.run(&[
        "reboot",
        "node01",
        "--crashdump",
        "--crashdump-wait",
        "1s",
        "--kdump-port",
        &port,
        "-o",
        "json",
    ]);
    r.assert_code(0);
    r.assert_elapsed_within(Duration::from_millis(1000), Duration::from_secs(20));
    let res = r.json_result();
    assert_eq!(res["crashdump"]["messages"], 0);
    assert_eq!(res["crashdump"]["ended"], "no-message");
    assert_eq!(res["outcome"], "rebooted");
    assert_eq!(lab.bmc(0).log(), vec!["diag", "off", "on"]);

    // Usage: the wait must fit in --timeout; the node's address is needed.
    lab.run(&["off", "node01", "--crashdump", "--crashdump-wait", "5m"])
        .assert_code(64)
        .assert_mentions(&["raise --timeout"]);
    let mut c = lab.cmd(&["off", &lab.url(0), "--password-file", "pw", "--crashdump"]);
    c.env_remove("FENCEKIT_INVENTORY");
    support::run(c, Duration::from_secs(30))
        .assert_code(64)
        .assert_mentions(&["needs the node's own address"]);
    assert_eq!(lab.bmc(0).log().len(), 3, "usage errors contact nothing");
}

#[test]
fn a_bmc_without_nmi_support_is_fenced_without_waiting() {
    // IPMI answers the diagnostic interrupt with CCh; Redfish offers no Nmi.
    let lab = InLab::with(
        LabSpec {
            nodes: 1,
            redfish: Some(false),
            faults: Faults {
                no_nmi: true,
                ..Faults::default()
            },
            ..LabSpec::default()
        },
        "",
    );
    let port = support::free_port().to_string();
    let redfish = format!(
        "redfish+http://admin@{}:{}/redfish/v1/Systems/1",
        lab.ips[0],
        lab.redfish[0].unwrap()
    );
    for target in [lab.url(0), redfish] {
        lab.bmc(0).set_on(true);
        let mut c = lab.cmd(&[
            "off",
            &target,
            "--password-file",
            "pw",
            "--address",
            "127.0.0.1",
            "--crashdump",
            "--crashdump-wait",
            "20s",
            "--kdump-port",
            &port,
            "--timeout",
            "60s",
            "-o",
            "json",
        ]);
        c.env_remove("FENCEKIT_INVENTORY");
        let r = support::run(c, Duration::from_secs(60));
        r.assert_code(0);
        r.assert_faster_than(Duration::from_secs(10));
        assert!(
            r.stderr.contains("warning") && r.stderr.contains("no NMI"),
            "{r}"
        );
        let res = r.json_result();
        assert!(
            res["crashdump"]["nmi"]
                .as_str()
                .is_some_and(|n| n.starts_with("not sent")),
            "{r}"
        );
        assert_eq!(res["crashdump"]["ended"], "skipped");
        assert_eq!(res["state"], "off");
        assert!(!lab.bmc(0).is_on());
        assert!(!lab.bmc(0).log().contains(&"diag"));
    }
}

#[test]
fn a_later_level_does_not_send_a_second_nmi() {
    // Level 1 (IPMI) sends the NMI, then its power-off is ignored (the
    // chassis is stuck just then); level 2 (Redfish, same chassis) powers
    // off without interrupting the node again.
    let lab = InLab::with(
        LabSpec {
            nodes: 1,
            redfish: Some(false),
            ..LabSpec::default()
        },
        "",
    );
    let inv = format!(
        "[defaults]\nusername = \"admin\"\npassword_file = \"pw\"\n[[node]]\nname = \"n1\"\n\
         address = \"127.0.0.1\"\n  [[node.fence]]\n  endpoint = \"ipmi://{ip}:{}\"\n  \
         [[node.fence]]\n  endpoint = \"redfish+http://{ip}:{}/redfish/v1/Systems/1\"\n",
        lab.nodes[0].1,
        lab.redfish[0].unwrap(),
        ip = lab.ips[0]
    );
    std::fs::write(lab.d().join("two.toml"), inv).unwrap();
    let port = support::free_port().to_string();
    let mut c = lab.cmd(&[
        "off",
        "-i",
        "two.toml",
        "n1",
        "--crashdump",
        "--crashdump-wait",
        "500ms",
        "--kdump-port",
        &port,
        "--power-timeout",
        "1s",
        "-o",
        "json",
    ]);
    let out = lab.d().join("off.json");
    c.stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null());
    let mut off = c.spawn().unwrap();
    let bmc = lab.bmc(0);
    let wait_for = |n: usize| {
        let t0 = Instant::now();
        while bmc.log().len() < n {
            assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", bmc.log());
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for(1);
    assert_eq!(bmc.log(), vec!["diag"]);
    bmc.set_faults(Faults {
        stuck: true,
        ..Faults::default()
    });
    wait_for(2);
    bmc.set_faults(Faults::default());
    assert_eq!(off.wait().unwrap().code(), Some(0));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["results"][0]["level"], 2, "{doc:#}");
    assert_eq!(bmc.log(), vec!["diag", "off", "off"]);
    assert!(!bmc.is_on());
}
