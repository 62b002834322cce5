//! `verify`, `check`, levels and manual fencing through the real binary
//! against `fencekit lab` with simulated hosts.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{bin, Lab};

struct InvLab {
    _lab: Lab,
    inventory: PathBuf,
    dir: tempfile::TempDir,
}

/// Labs in parallel tests share the 127.1.x.y host addresses, so each gets
/// its own host port.
fn host_port() -> String {
    support::free_port().to_string()
}

fn lab(args: &[&str]) -> InvLab {
    let dir = tempfile::tempdir().unwrap();
    let inventory = dir.path().join("lab.toml");
    let inv = inventory.to_str().unwrap().to_string();
    let mut argv = args.to_vec();
    argv.extend(["--write-inventory", &inv]);
    let lab = Lab::start(&argv);
    InvLab {
        _lab: lab,
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

fn results(r: &support::Run) -> Vec<serde_json::Value> {
    r.json()["results"].as_array().cloned().unwrap_or_default()
}

const FAST: &[&str] = &[
    "--samples",
    "2",
    "--interval",
    "100ms",
    "--probe-timeout",
    "300ms",
];

#[test]
fn verify_proves_off_for_a_fenced_node_and_on_after_reboot() {
    let hp = host_port();
    let l = lab(&["--nodes", "2", "--hosts", &hp, "--boot-delay", "300ms"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());

    // Before fencing, "off" is not proven: the BMC says on, the host answers.
    let mut args = vec!["verify", "-i", inv, "node01", "-o", "json"];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(3);
    assert_eq!(results(&r)[0]["verdict"], "unproven", "{r}");

    run(d, &["off", "-i", inv, "node01"]).assert_code(0);
    let r = run(d, &args);
    r.assert_code(0);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "proven", "{r}");
    let ev = rep["evidence"].as_array().unwrap();
    // two channels (IPMI and Redfish) × 2 samples, and one probe
    assert_eq!(
        ev.iter()
            .filter(|e| e["observation"]
                .as_str()
                .unwrap()
                .contains("BMC reports power off"))
            .count(),
        4
    );
    assert!(ev.iter().any(
        |e| e["source"].as_str().unwrap().ends_with(&format!(":{hp}")) && e["agrees"] == true
    ));

    let r = run(
        d,
        &["reboot", "-i", inv, "node01", "--verify", "-o", "json"],
    );
    r.assert_code(0);
    assert_eq!(results(&r)[0]["verify"]["verdict"], "proven", "{r}");
    assert_eq!(results(&r)[0]["verify"]["expect"], "on");
}

#[test]
fn a_lying_bmc_is_a_contradiction() {
    let hp = host_port();
    let l = lab(&["--nodes", "1", "--hosts", &hp, "--fault", "node01:lying"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    // The action itself cannot tell: the BMC confirms off twice.
    run(d, &["off", "-i", inv, "node01"]).assert_code(0);
    // Verification can: the host still answers.
    let mut args = vec!["verify", "-i", inv, "node01"];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(3);
    assert!(
        r.stderr.contains("CONTRADICTION") && r.stderr.contains("still answers"),
        "{r}"
    );
    let r = run(d, &["off", "-i", inv, "node01", "--verify"]);
    r.assert_code(3);
    // verify leaves an audit record with its verdict
    let audit = d.join("audit.jsonl");
    let mut args = vec![
        "verify",
        "-i",
        inv,
        "node01",
        "--audit",
        audit.to_str().unwrap(),
    ];
    args.extend(FAST);
    run(d, &args).assert_code(3);
    let rec: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&audit)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(rec["action"], "verify");
    assert_eq!(rec["verdict"], "contradiction");
    assert_eq!(rec["ok"], false);
}

#[test]
fn check_flags_broken_levels_without_touching_power() {
    let l = lab(&[
        "--nodes",
        "3",
        "--fault",
        "node02:redfish-no-forceoff",
        "--fault",
        "node03:ipmi-silent",
    ]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    // node01 gets a wrong password on its IPMI level.
    let wrong = d.join("wrong.pw");
    std::fs::write(&wrong, "not-the-password").unwrap();
    let text = std::fs::read_to_string(&l.inventory).unwrap();
    let patched = text.replacen(
        "name = \"node01\"\n  [[node.fence]]\n",
        &format!(
            "name = \"node01\"\n  [[node.fence]]\n  password_file = \"{}\"\n",
            wrong.display()
        ),
        1,
    );
    assert_ne!(text, patched);
    std::fs::write(&l.inventory, patched).unwrap();

    let r = run(
        d,
        &[
            "check",
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
    let rows = r.json()["checks"].as_array().cloned().unwrap();
    assert_eq!(rows.len(), 6);
    let row = |n: &str, l: u64| {
        rows.iter()
            .find(|x| x["node"] == n && x["level"] == l)
            .unwrap()
            .clone()
    };
    assert_eq!(row("node01", 1)["ok"], false);
    assert!(
        row("node01", 1)["error"]
            .as_str()
            .unwrap()
            .contains("password"),
        "{r}"
    );
    assert_eq!(row("node01", 2)["ok"], true);
    assert_eq!(row("node02", 1)["ok"], true);
    assert_eq!(row("node02", 2)["ok"], false);
    assert!(
        row("node02", 2)["error"]
            .as_str()
            .unwrap()
            .contains("ForceOff")
            || row("node02", 2)["error"].as_str().unwrap().contains("off"),
        "{r}"
    );
    assert_eq!(row("node03", 1)["ok"], false);
    assert_eq!(row("node03", 2)["ok"], true);
    // Nothing was powered off.
    run(d, &["status", "-i", inv, "--all", "--level", "2"]).assert_code(0);
}

#[test]
fn a_node_with_dead_ipmi_is_fenced_by_its_redfish_level() {
    let l = lab(&["--nodes", "1", "--fault", "node01:ipmi-silent"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(d, &["off", "-i", inv, "node01", "--login-timeout", "1s"]);
    r.assert_code(0);
    assert!(r.stdout.contains("level 2, redfish"), "{r}");
}

#[test]
fn manual_level_completes_on_ack_and_times_out_without() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inv = d.join("manual.toml");
    std::fs::write(
        &inv,
        "[[node]]\nname = \"old1\"\n[[node.fence]]\ndriver = \"manual\"\ninstructions = \"Pull both cords.\"\n",
    )
    .unwrap();
    let inv = inv.to_str().unwrap();
    let audit = d.join("audit.jsonl");

    let t = Instant::now();
    let r = run(d, &["off", "-i", inv, "old1", "--timeout", "1s"]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("nobody acknowledged") && r.stderr.contains("Pull both cords"),
        "{r}"
    );
    assert!(t.elapsed() < Duration::from_secs(5));

    let mut waiter = fk(
        d,
        &[
            "off",
            "-i",
            inv,
            "old1",
            "--timeout",
            "20s",
            "--audit",
            audit.to_str().unwrap(),
        ],
    );
    waiter
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = waiter.spawn().unwrap();
    // Readiness: the waiter has printed its instructions, so it waits (an
    // acknowledgment older than the wait would not count).
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("MANUAL FENCING") {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut err, &mut line).unwrap_or(0) == 0 {
            panic!("the waiter ended before asking: {seen}");
        }
        seen.push_str(&line);
    }
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut rest);
        seen + &rest
    });
    let ack = run(d, &["ack", "old1", "--by", "alice"]);
    ack.assert_code(0);
    let out = child.wait_with_output().unwrap();
    let stderr = drain.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("acknowledged by alice"));
    let line = std::fs::read_to_string(&audit).unwrap();
    let rec: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert!(rec["evidence"]["acknowledged_by"]
        .as_str()
        .unwrap()
        .starts_with("alice on "));
    assert_eq!(rec["method"], "manual");
}
