//! Fleets and runbooks through the real binary against `fencekit lab`:
//! inventories, ranges, levels, exit codes, output formats, audit, locks.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::{bin, Lab};

/// A lab that also wrote an inventory; the inventory lives in `dir`.
struct InvLab {
    lab: Lab,
    inventory: PathBuf,
    dir: tempfile::TempDir,
}

fn lab_with_inventory(args: &[&str]) -> InvLab {
    let dir = tempfile::tempdir().unwrap();
    let inventory = dir.path().join("lab.toml");
    let mut argv: Vec<&str> = args.to_vec();
    let inv = inventory.to_str().unwrap().to_string();
    argv.extend(["--write-inventory", &inv]);
    let lab = Lab::start(&argv);
    assert!(inventory.exists(), "the lab wrote its inventory");
    InvLab {
        lab,
        inventory,
        dir,
    }
}

fn fk(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .env("NO_COLOR", "1")
        .env("XDG_RUNTIME_DIR", dir)
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("FENCEKIT_AUDIT");
    c
}

fn run(dir: &Path, args: &[&str]) -> support::Run {
    support::run(fk(dir, args), Duration::from_secs(60))
}

fn json_results(r: &support::Run) -> Vec<serde_json::Value> {
    r.json()["results"].as_array().cloned().unwrap_or_default()
}

#[test]
fn ranges_select_nodes_and_exit_codes_follow_the_worst_result() {
    let l = lab_with_inventory(&["--nodes", "4", "--fault", "node04:silent"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());

    let r = run(d, &["status", "-i", inv, "node[01-03]"]);
    r.assert_code(0);
    for n in ["node01", "node02", "node03"] {
        assert!(r.text().contains(n), "{r}");
    }
    assert!(!r.text().contains("node04"), "{r}");

    let r = run(
        d,
        &[
            "status",
            "-i",
            inv,
            "--all",
            "-o",
            "json",
            "--login-timeout",
            "1s",
        ],
    );
    r.assert_code(1);
    let res = json_results(&r);
    assert_eq!(res.len(), 4);
    let failed: Vec<&str> = res
        .iter()
        .filter(|x| x["ok"] == false)
        .map(|x| x["node"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["node04"], "{r}");
    assert_eq!(res[3]["error_kind"], "timeout");

    run(d, &["off", "-i", inv, "node0[1-2]"]).assert_code(0);
    run(d, &["status", "-i", inv, "node01"]).assert_code(2);
    // some off, some on, none failed: status says 2 (not every target is on)
    run(d, &["status", "-i", inv, "node0[1-3]"]).assert_code(2);
    run(d, &["on", "-i", inv, "node01", "node02"]).assert_code(0);
    run(d, &["status", "-i", inv, "node0[1-3]"]).assert_code(0);
    drop(l.lab);
}

#[test]
fn bad_inventories_are_usage_errors_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = d.join("bad.toml");
    std::fs::write(
        &p,
        "[[node]]\nname = \"n1\"\n  [[node.fence]]\n  endpoint = \"ipmi://127.0.0.1:1\"\n  password = \"hunter2\"\n",
    )
    .unwrap();
    let inv = p.to_str().unwrap();
    let r = run(d, &["status", "-i", inv, "n1"]);
    r.assert_code(64);
    assert!(
        r.stderr.contains("bad.toml:2:") && r.stderr.contains("plain passwords"),
        "{r}"
    );
    assert!(
        !r.text().contains("hunter2"),
        "the refused secret is not echoed"
    );

    std::fs::write(
        &p,
        "[[node]]\nname = \"n1\"\n[[node.fence]]\nendpoint = \"ipmi://h\"\ncolour = 1\n",
    )
    .unwrap();
    let r = run(d, &["status", "-i", inv, "n1"]);
    r.assert_code(64);
    assert!(
        r.stderr.contains("line 5") && r.stderr.contains("colour"),
        "{r}"
    );

    std::fs::write(
        &p,
        "[[node]]\nname = \"n1\"\n[[node.fence]]\nendpoint = \"ipmi://127.0.0.1:1\"\n",
    )
    .unwrap();
    let r = run(d, &["status", "-i", inv, "n2"]);
    r.assert_code(64);
    assert!(r.stderr.contains("unknown node 'n2'"), "{r}");
    let r = run(d, &["status", "node01"]);
    r.assert_code(64);
    assert!(r.stderr.contains("no inventory"), "{r}");
    run(d, &["status", "-i", "/nonexistent/inv.toml", "--all"]).assert_code(64);
}

/// A large inventory's sections are read, its nodes planned and its plan
/// printed by helper threads; where no thread can be made (a pod's limit
/// on processes), by the one thread there is, with the same plan, instead
/// of a panic.
#[test]
fn a_large_inventory_is_read_where_no_thread_can_be_made() {
    if !support::root_with(&["setpriv", "prlimit"]) {
        return;
    }
    // The child runs as UID 65531: the binary where that UID can reach it.
    let Some(exe) = support::bin_for_any_uid() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = d.join("inv.toml");
    let mut text =
        String::from("[defaults]\nusername = \"admin\"\npassword_env = \"FK_TEST_PW\"\n");
    for i in 0..5000 {
        text += &format!(
            "\n[[node]]\nname = \"n{i:04}\"\n  [[node.fence]]\n  endpoint = \"ipmi://10.1.{}.{}\"\n",
            i / 256,
            i % 256
        );
    }
    std::fs::write(&p, text).unwrap();
    let readable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(d, readable).unwrap();
    let plan = |nproc: Option<&str>| {
        // A UID of its own (no other process counts against its limit).
        let mut c = support::tool("setpriv");
        c.args([
            "--reuid",
            "65531",
            "--regid",
            "65531",
            "--clear-groups",
            "--",
        ]);
        if let Some(n) = nproc {
            c.args(["prlimit", &format!("--nproc={n}"), "--"]);
        }
        c.arg(&exe)
            .args(["status", "-i", p.to_str().unwrap(), "--all", "--dry-run"])
            .env("FK_TEST_PW", "x")
            .env("XDG_RUNTIME_DIR", d)
            .env_remove("FENCEKIT_INVENTORY");
        let r = support::run(c, Duration::from_secs(60));
        r.assert_code(0);
        assert_eq!(r.stdout.matches("  level 1  ").count(), 5000, "{r}");
        r.stdout
    };
    let threads = plan(None);
    let alone = plan(Some("1"));
    assert_eq!(alone, threads);
    let order: Vec<&str> = alone
        .lines()
        .filter_map(|l| l.split_whitespace().next().filter(|w| w.starts_with('n')))
        .collect();
    let expected: Vec<String> = (0..5000).map(|i| format!("n{i:04}")).collect();
    assert_eq!(order, expected);
}

#[test]
fn dry_run_checks_references_and_contacts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = d.join("inv.toml");
    std::fs::write(
        &p,
        "[defaults]\nusername = \"admin\"\npassword_env = \"FK_TEST_PW\"\n\
         [[node]]\nname = \"n[1-3]\"\n[[node.fence]]\nendpoint = \"ipmi://127.0.0.1:[1-3]\"\n",
    )
    .unwrap();
    let inv = p.to_str().unwrap();
    let t = Instant::now();
    let r = support::run(
        {
            let mut c = fk(d, &["off", "-i", inv, "--all", "--dry-run"]);
            c.env("FK_TEST_PW", "s3cret-value");
            c
        },
        Duration::from_secs(20),
    );
    r.assert_code(0);
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(r.stdout.matches("level 1").count(), 3, "{r}");
    assert!(
        r.stdout.contains("environment variable FK_TEST_PW (ok)"),
        "{r}"
    );
    assert!(!r.text().contains("s3cret-value"));

    let r = run(d, &["off", "-i", inv, "--all", "--dry-run"]);
    r.assert_code(64);
    assert!(r.stdout.contains("MISSING"), "{r}");
}

#[test]
fn a_dead_first_level_falls_through_to_the_second() {
    let l = lab_with_inventory(&["--nodes", "2", "--fault", "node01:silent"]);
    let d = l.dir.path();
    let good = &l.lab.nodes[1];
    let dead = &l.lab.nodes[0];
    let pw = format!("{}.password", l.inventory.display());
    let p = d.join("levels.toml");
    std::fs::write(
        &p,
        format!(
            "[defaults]\nusername = \"admin\"\npassword_file = \"{pw}\"\n\
             [[node]]\nname = \"db1\"\n\
             [[node.fence]]\nendpoint = \"ipmi://{}:{}\"\n\
             [[node.fence]]\nendpoint = \"ipmi://{}:{}\"\ncipher = 3\n",
            dead.host, dead.port, good.host, good.port
        ),
    )
    .unwrap();
    let inv = p.to_str().unwrap();
    let r = run(
        d,
        &[
            "off",
            "-i",
            inv,
            "db1",
            "-o",
            "json",
            "--login-timeout",
            "1s",
        ],
    );
    r.assert_code(0);
    let res = &json_results(&r)[0];
    assert_eq!(res["level"], 2, "{r}");
    assert_eq!(res["state"], "off");
    assert_eq!(res["attempts"][0]["level"], 1);
    assert!(res["attempts"][0]["error"]
        .as_str()
        .unwrap()
        .contains("no answer"));
    assert!(res["session"].as_str().unwrap().contains("suite 3"));
    // --level 1 forces the dead one
    run(
        d,
        &[
            "status",
            "-i",
            inv,
            "db1",
            "--level",
            "1",
            "--login-timeout",
            "1s",
        ],
    )
    .assert_code(1);
}

#[test]
fn two_processes_on_one_bmc_are_serialised_and_the_second_finds_it_off() {
    let l = lab_with_inventory(&["--nodes", "1", "--transition", "800ms"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap().to_string());
    let spawn = || {
        let mut c = fk(d, &["off", "-i", &inv, "node01"]);
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    let a = spawn();
    // Readiness: the first one holds the BMC's lock before the second starts.
    let host = l.lab.nodes[0].host.clone();
    assert!(support::eventually(Duration::from_secs(10), || {
        support::bmc_lock_held(&host)
    }));
    let b = spawn();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let out = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        a.status.success() && b.status.success(),
        "{} / {}",
        out(&a),
        out(&b)
    );
    assert!(out(&a).contains("powered off (confirmed)"), "{}", out(&a));
    assert!(out(&b).contains("already off (confirmed)"), "{}", out(&b));
}

#[test]
fn audit_lines_from_concurrent_processes_are_whole_and_secret_free() {
    let l = lab_with_inventory(&["--nodes", "5", "--password", "audit-secret-pw"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap().to_string());
    let audit = d.join("audit.jsonl");
    let children: Vec<_> = (0..4)
        .map(|_| {
            let mut c = fk(
                d,
                &[
                    "status",
                    "-i",
                    &inv,
                    "--all",
                    "--audit",
                    audit.to_str().unwrap(),
                ],
            );
            c.stdout(std::process::Stdio::null());
            c.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20);
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).expect("each line is one JSON record");
        assert_eq!(v["action"], "status");
        assert_eq!(v["ok"], true);
        assert!(v["evidence"]["reads"].as_u64().unwrap() >= 1);
        assert!(v["time"].as_str().unwrap().ends_with('Z'));
    }
    assert!(!text.contains("audit-secret-pw"));
}

#[test]
fn json_lines_stream_events_then_results() {
    let l = lab_with_inventory(&["--nodes", "2"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(d, &["off", "-i", inv, "--all", "-o", "jsonl"]);
    r.assert_code(0);
    let events: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    for kind in [
        "started",
        "authenticated",
        "command-sent",
        "state-observed",
        "done",
    ] {
        assert!(
            events.iter().any(|e| e["event"] == kind),
            "no {kind} event: {r}"
        );
    }
    assert_eq!(events.iter().filter(|e| e["event"] == "done").count(), 2);
}

#[test]
fn stagger_spreads_power_on() {
    let l = lab_with_inventory(&["--nodes", "3", "--power", "off"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let t = Instant::now();
    run(d, &["on", "-i", inv, "--all", "--stagger", "400ms"]).assert_code(0);
    assert!(
        t.elapsed() >= Duration::from_millis(800),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn a_thousand_lab_bmcs_in_one_run() {
    let l = lab_with_inventory(&["--nodes", "1000"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(
        d,
        &[
            "status",
            "-i",
            inv,
            "--all",
            "-o",
            "json",
            "--parallel",
            "256",
        ],
    );
    r.assert_code(0);
    let res = json_results(&r);
    assert_eq!(res.len(), 1000);
    assert!(res.iter().all(|x| x["ok"] == true && x["state"] == "on"));
    assert_eq!(res[999]["node"], "node1000");
}

#[test]
fn redfish_level_fences_the_same_chassis_ipmi_reads() {
    let l = lab_with_inventory(&["--nodes", "1"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(
        d,
        &["off", "-i", inv, "node01", "--level", "2", "-o", "json"],
    );
    r.assert_code(0);
    let res = &json_results(&r)[0];
    assert_eq!(res["method"], "redfish", "{r}");
    assert_eq!(res["state"], "off");
    let session = res["session"].as_str().unwrap();
    assert!(
        session.contains("tls verified against") && session.contains("off=ForceOff"),
        "{session}"
    );
    run(d, &["status", "-i", inv, "node01", "--level", "1"]).assert_code(2);
}

#[test]
fn redfish_certificates_are_verified_unless_trusted_explicitly() {
    let l = lab_with_inventory(&["--nodes", "1"]);
    let d = l.dir.path();
    let url = l.lab.banner[0]
        .split_whitespace()
        .find(|w| w.starts_with("redfish://"))
        .expect("the lab prints a redfish URL")
        .replace("redfish://", "redfish://admin@");
    let pem = format!("{}.certs/node01.pem", l.inventory.display());
    let with_pw = |args: &[&str]| {
        let mut c = fk(d, args);
        c.env("FENCEKIT_PASSWORD", "lab");
        support::run(c, Duration::from_secs(30))
    };
    let r = with_pw(&["status", &url]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("not trusted") && r.stderr.contains("--ca-cert"),
        "{r}"
    );
    with_pw(&["status", &url, "--ca-cert", &pem]).assert_code(0);
    let r = with_pw(&["status", &url, "--ssl-insecure", "--ca-cert", &pem]);
    r.assert_code(64);
    let r = with_pw(&[
        "status",
        &url.replace("admin@", "nobody@"),
        "--ca-cert",
        &pem,
    ]);
    r.assert_code(1);
    assert!(
        r.stderr.to_lowercase().contains("credentials") || r.stderr.contains("401"),
        "{r}"
    );
}

/// `status --all --parallel 1000 -o json` over 120 lab BMCs, run by a
/// shell after `limit` (a `ulimit` command).
fn status_of_120_under(limit: &str) -> support::Run {
    let l = lab_with_inventory(&["--nodes", "120", "--redfish", "none"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let script = format!(
        "{limit} && exec {} status -i {inv} --all --parallel 1000 -o json",
        bin().display()
    );
    let mut sh = Command::new("/bin/sh");
    sh.args(["-c", &script])
        .env("NO_COLOR", "1")
        .env("XDG_RUNTIME_DIR", d);
    support::run(sh, Duration::from_secs(60))
}

#[test]
fn parallel_is_cut_to_the_open_files_limit_instead_of_failing_targets() {
    let r = status_of_120_under("ulimit -n 160");
    r.assert_code(0);
    assert!(
        r.stderr.contains("open files") && r.stderr.contains("ulimit -n"),
        "{r}"
    );
    let res = json_results(&r);
    assert_eq!(res.len(), 120);
    assert!(res.iter().all(|x| x["ok"] == true), "{r}");
}

#[test]
fn parallel_raises_the_soft_open_files_limit_up_to_the_hard_one() {
    // 1,000 in flight need about 3,064 descriptors: with a soft limit of 160
    // and a hard one above, fencekit raises its own soft limit, cuts nothing.
    let hard = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            let line = t
                .lines()
                .find(|l| l.starts_with("Max open files"))?
                .to_string();
            line.split_whitespace().nth(4).map(str::to_string)
        })
        .unwrap_or_default();
    if hard.parse::<u64>().is_ok_and(|h| h < 4096) {
        eprintln!("skipped: the hard limit on open files is {hard}, below what the test needs");
        return;
    }
    let r = status_of_120_under("ulimit -S -n 160");
    r.assert_code(0);
    assert!(!r.stderr.contains("open files"), "{r}");
    let res = json_results(&r);
    assert_eq!(res.len(), 120);
    assert!(res.iter().all(|x| x["ok"] == true), "{r}");
}

#[test]
fn the_lab_serves_sixteen_thousand_bmcs_each_on_an_address_of_its_own() {
    // 16,384 IPMI BMCs (about 17,400 open files, which the lab raises its
    // own limit to; 0.7 s and 120 MiB in a debug build).
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let hard = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(4))
        .unwrap_or("unlimited")
        .to_string();
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    if !root && hard.parse::<u64>().is_ok_and(|h| h < 17_408) {
        eprintln!("skipped: the hard limit on open files is {hard} and raising it needs root");
        return;
    }
    // A /10 of loopback no other test uses (own_loopback() is 127.100-199).
    let bind = format!("127.{}.0.1", 200 + std::process::id() % 50);
    let l = lab_with_inventory(&["--nodes", "16384", "--redfish", "none", "--bind", &bind]);
    let hosts: std::collections::HashSet<&str> =
        l.lab.nodes.iter().map(|n| n.host.as_str()).collect();
    assert_eq!(l.lab.nodes.len(), 16_384);
    assert_eq!(hosts.len(), 16_384, "every BMC on an address of its own");
    let last = bind.replace(".0.1", ".64.0");
    assert_eq!(l.lab.nodes[16_383].host, last);
    let text = std::fs::read_to_string(&l.inventory).unwrap();
    assert_eq!(text.matches("[[node]]").count(), 16_384);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(
        d,
        &["status", "-i", inv, "node00001", "node16384", "-o", "json"],
    );
    r.assert_code(0);
    let res = json_results(&r);
    assert_eq!(res.len(), 2);
    assert!(res.iter().all(|x| x["ok"] == true), "{r}");
    assert!(res[1]["endpoint"].as_str().unwrap().contains(&last), "{r}");
    let more = run(d, &["lab", "--nodes", "16385"]);
    more.assert_code(64);
    assert!(more.stderr.contains("16384"), "{more}");
}

#[test]
fn two_agents_on_one_bmc_are_serialised_by_the_lock() {
    let l = lab_with_inventory(&["--nodes", "1", "--transition", "800ms", "--redfish", "none"]);
    let d = l.dir.path();
    let port = l.lab.nodes[0].port.to_string();
    let host = l.lab.nodes[0].host.clone();
    let agent = d.join("fence_ipmilan");
    std::os::unix::fs::symlink(bin(), &agent).unwrap();
    let spawn_agent = || {
        let mut c = Command::new(&agent);
        c.args([
            &format!("--ip={host}"),
            &format!("--ipport={port}"),
            "--username=admin",
            "--password=lab",
        ])
        .args(["--lanplus", "--power-wait=0", "-o", "off"])
        .env("XDG_RUNTIME_DIR", d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    let a = spawn_agent();
    assert!(support::eventually(Duration::from_secs(10), || {
        support::bmc_lock_held(&host)
    }));
    let b = spawn_agent();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let out = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(
        a.status.success() && b.status.success(),
        "{} / {}",
        out(&a),
        out(&b)
    );
    assert_eq!(out(&a), "Success: Powered OFF");
    assert_eq!(
        out(&b),
        "Success: Already OFF",
        "the second agent waited for the first"
    );
}
