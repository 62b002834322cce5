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

/// Rewrites the first `from` in the lab's inventory as `to` (which must be there).
fn patch_inventory(inventory: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(inventory).unwrap();
    let patched = text.replacen(from, to, 1);
    assert_ne!(text, patched, "{from:?} is in the inventory");
    std::fs::write(inventory, patched).unwrap();
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
    if !support::lab_silent_hosts() {
        return;
    }
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
    // Verification can: the host still accepts connections.
    let mut args = vec!["verify", "-i", inv, "node01"];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(3);
    assert!(
        r.stderr.contains("CONTRADICTION")
            && r.stderr
                .contains("the BMC reports off, but the host answers on")
            && r.stderr.contains(&format!(":{hp} (accepted)")),
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

/// A level whose session comes up below operator cannot control power:
/// `check` says so, from the privilege the session was granted.
#[test]
fn check_flags_a_level_whose_session_is_below_operator() {
    let l = lab(&["--nodes", "1"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    patch_inventory(
        &l.inventory,
        "name = \"node01\"\n  [[node.fence]]\n",
        "name = \"node01\"\n  [[node.fence]]\n  privlvl = \"user\"\n",
    );
    let r = run(d, &["check", "-i", inv, "node01", "-o", "json"]);
    r.assert_code(1);
    let rows = r.json()["checks"].as_array().cloned().unwrap();
    let level1 = rows.iter().find(|x| x["level"] == 1).unwrap();
    assert_eq!(level1["ok"], false, "{r}");
    let error = level1["error"].as_str().unwrap();
    assert!(
        error.starts_with("the session privilege is too low for power control (")
            && error.ends_with("privilege user); chassis control needs operator or administrator"),
        "{error}"
    );
    let level2 = rows.iter().find(|x| x["level"] == 2).unwrap();
    assert_eq!(level2["ok"], true, "{r}");
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
    patch_inventory(
        &l.inventory,
        "name = \"node01\"\n  [[node.fence]]\n",
        &format!(
            "name = \"node01\"\n  [[node.fence]]\n  password_file = \"{}\"\n",
            wrong.display()
        ),
    );

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
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("fenced by hand: acknowledged by alice")
            && stdout.contains("nobody observed the power state"),
        "{stdout}"
    );
    assert!(!stdout.contains("confirmed"), "{stdout}");
    let line = std::fs::read_to_string(&audit).unwrap();
    let rec: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert!(rec["evidence"]["acknowledged_by"]
        .as_str()
        .unwrap()
        .starts_with("alice on "));
    assert_eq!(rec["method"], "manual");
    // An acknowledgment is its own outcome, never an observed state.
    assert_eq!(rec["outcome"], "acknowledged");
    assert_eq!(rec["state"], serde_json::Value::Null);
    assert_eq!(rec["evidence"]["reads"], 0);
}

// ------------------------------------------------------- issue 12: proof ----

/// The simulated host of `node` as the inventory names it (`ADDR:PORT`).
fn host_of(inv: &Path, node: &str) -> String {
    let text = std::fs::read_to_string(inv).unwrap();
    let at = text.find(&format!("name = \"{node}\"")).unwrap();
    let rest = &text[at..];
    let addr = rest.split("address = \"").nth(1).unwrap();
    let addr = &addr[..addr.find('"').unwrap()];
    let ports = rest.split("probe_ports = [").nth(1).unwrap();
    let port = &ports[..ports.find(']').unwrap()];
    format!("{addr}:{port}")
}

fn evidence_of(rep: &serde_json::Value) -> Vec<serde_json::Value> {
    rep["evidence"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_live_kernel_behind_a_lying_bmc_is_a_contradiction() {
    // The BMC lies, and the host's service died but its kernel did not:
    // the probe gets an RST. An RST used to count as "host down".
    let l = lab(&[
        "--nodes",
        "1",
        "--hosts",
        "--fault",
        "node01:lying+host-rst",
    ]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let host = host_of(&l.inventory, "node01");
    run(d, &["off", "-i", inv, "node01"]).assert_code(0);
    let mut args = vec!["verify", "-i", inv, "node01", "-o", "json"];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(3);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "contradiction", "{r}");
    assert!(
        rep["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("{host} (reset)")),
        "{r}"
    );
    let probe = evidence_of(rep)
        .into_iter()
        .find(|e| e["source"] == host.as_str())
        .expect("the probe is evidence");
    assert!(
        probe["observation"].as_str().unwrap().starts_with("reset:"),
        "{probe}"
    );
    assert_eq!(probe["agrees"], false);
    assert_eq!(probe["independent"], true);
}

#[test]
fn an_honest_bmc_and_a_silent_host_prove_off() {
    if !support::lab_silent_hosts() {
        return;
    }
    let l = lab(&["--nodes", "1", "--hosts"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let host = host_of(&l.inventory, "node01");
    run(d, &["off", "-i", inv, "node01"]).assert_code(0);
    let mut args = vec!["verify", "-i", inv, "node01", "-o", "json"];
    args.extend(FAST);
    let t = Instant::now();
    let r = run(d, &args);
    r.assert_code(0);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "proven", "{r}");
    let probe = evidence_of(rep)
        .into_iter()
        .find(|e| e["source"] == host.as_str())
        .expect("the probe is evidence");
    // Silence, not an RST: the probe waited for its whole timeout.
    assert!(
        probe["observation"]
            .as_str()
            .unwrap()
            .starts_with("silent:"),
        "{probe}"
    );
    assert_eq!(probe["agrees"], true);
    assert!(t.elapsed() >= Duration::from_millis(300));
    // Both channels to the one BMC are named, and are not counted as independent.
    let reason = rep["reason"].as_str().unwrap();
    assert!(
        reason.contains("ipmi://")
            && reason.contains("redfish")
            && reason.contains("not independent"),
        "{reason}"
    );
    assert!(reason.contains(&format!("{host} (silent)")), "{reason}");
}

#[test]
fn bmc_reads_alone_are_bmc_only_unless_accepted() {
    // No simulated hosts and no power meter: nothing but the BMC to ask.
    let l = lab(&[
        "--nodes",
        "2",
        "--power",
        "off",
        "--fault",
        "node0[1-2]:no-meter",
    ]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let audit = d.join("audit.jsonl");
    let audit_s = audit.to_str().unwrap();
    let mut args = vec![
        "verify", "-i", inv, "node01", "-o", "json", "--audit", audit_s,
    ];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(3);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "bmc-only", "{r}");
    assert!(
        rep["reason"]
            .as_str()
            .unwrap()
            .contains("nothing independent was checked"),
        "{r}"
    );
    assert!(rep.get("bmc_only_accepted").is_none(), "{r}");
    // Accepted explicitly on the command line: exit 0, and it says so.
    let mut accepted = args.clone();
    accepted.push("--accept-bmc-only");
    let r = run(d, &accepted);
    r.assert_code(0);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "bmc-only", "{r}");
    assert_eq!(rep["bmc_only_accepted"], true, "{r}");
    assert!(evidence_of(rep).iter().any(|e| e["observation"]
        .as_str()
        .unwrap()
        .contains("BMC-only proof accepted by --accept-bmc-only")));
    // Accepted for one node in the inventory: that node only.
    patch_inventory(
        &l.inventory,
        "name = \"node02\"\n",
        "name = \"node02\"\naccept_bmc_only = true\n",
    );
    let mut both = vec![
        "verify", "-i", inv, "--all", "-o", "json", "--audit", audit_s,
    ];
    both.extend(FAST);
    let r = run(d, &both);
    r.assert_code(3);
    let reps = results(&r);
    assert_eq!(reps[0]["bmc_only_accepted"], serde_json::Value::Null, "{r}");
    assert_eq!(reps[1]["bmc_only_accepted"], true, "{r}");
    assert!(reps[1]["reason"]
        .as_str()
        .unwrap()
        .contains("accept_bmc_only"));
    // The audit trail records each verdict and whether it was accepted.
    let recs: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[0]["verdict"], "bmc-only");
    assert_eq!(recs[0]["ok"], false);
    assert_eq!(recs[1]["bmc_only_accepted"], true);
    assert_eq!(recs[1]["ok"], true);
    let node02 = recs.iter().rfind(|r| r["node"] == "node02").unwrap();
    assert_eq!(node02["bmc_only_accepted"], true);
}

#[test]
fn a_contradiction_is_never_reported_as_fenced() {
    if !support::lab_silent_hosts() {
        return;
    }
    let l = lab(&["--nodes", "2", "--hosts", "--fault", "node01:lying"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let audit = d.join("audit.jsonl");
    let audit_s = audit.to_str().unwrap();

    // One node, people's output: the stdout line carries the verdict.
    let r = run(d, &["off", "-i", inv, "node01", "--verify"]);
    r.assert_code(3);
    let line = r.stdout.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("node01: CONTRADICTION: off not proven"),
        "{r}"
    );
    assert!(!r.stdout.contains("(confirmed)"), "{r}");

    // JSON: ok, outcome and a top-level verdict.
    for action in ["off", "reboot"] {
        let r = run(
            d,
            &[
                action, "-i", inv, "node01", "--verify", "-o", "json", "--audit", audit_s,
            ],
        );
        r.assert_code(3);
        let res = &results(&r)[0];
        assert_eq!(res["ok"], false, "{action}: {r}");
        assert_eq!(res["outcome"], "contradiction", "{action}: {r}");
        assert_eq!(res["verdict"], "contradiction", "{action}: {r}");
        assert_eq!(res["verify"]["verdict"], "contradiction", "{action}: {r}");
        assert!(
            res["error"].as_str().unwrap().contains("contradiction"),
            "{r}"
        );
    }

    // JSON lines: the result line waits for the verdict.
    let r = run(d, &["off", "-i", inv, "node01", "--verify", "-o", "jsonl"]);
    r.assert_code(3);
    let done: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "done")
        .collect();
    assert_eq!(done.len(), 1, "{r}");
    assert_eq!(done[0]["ok"], false, "{r}");
    assert_eq!(done[0]["verdict"], "contradiction", "{r}");

    // The table: two nodes, one contradicted, one proven.
    let r = run(
        d,
        &["off", "-i", inv, "--all", "--verify", "--audit", audit_s],
    );
    r.assert_code(3);
    let row = |n: &str| {
        r.stdout
            .lines()
            .find(|l| l.contains(n))
            .unwrap_or_else(|| panic!("no row for {n}: {r}"))
            .to_string()
    };
    assert!(row("node01").contains("CONTRADICTION"), "{r}");
    assert!(!row("node01").contains("reached"), "{r}");
    assert!(row("node02").contains("proven"), "{r}");
    assert!(r.stderr.contains("1 of 2 target(s) not proven"), "{r}");

    // The audit record of each says so.
    let recs: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let n1: Vec<&serde_json::Value> = recs.iter().filter(|r| r["node"] == "node01").collect();
    assert_eq!(n1.len(), 3);
    for rec in &n1 {
        assert_eq!(rec["ok"], false, "{rec}");
        assert_eq!(rec["outcome"], "contradiction", "{rec}");
        assert_eq!(rec["verdict"], "contradiction", "{rec}");
        assert_eq!(
            rec["evidence"]["verify"]["verdict"], "contradiction",
            "{rec}"
        );
        assert!(rec["evidence"]["verify"]["independent"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().contains("accepted")));
    }
    let n2 = recs.iter().find(|r| r["node"] == "node02").unwrap();
    assert_eq!(n2["ok"], true);
    assert_eq!(n2["verdict"], "proven");
    assert_eq!(n2["action_outcome"], "reached");
}

#[test]
fn a_power_cycle_is_sent_unverified_until_verified() {
    let l = lab(&["--nodes", "1", "--hosts", "--boot-delay", "300ms"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(d, &["reboot", "-i", inv, "node01", "--method", "cycle"]);
    r.assert_code(3);
    assert!(
        r.stdout
            .contains("power cycle sent, unverified: nothing observed the node off"),
        "{r}"
    );
    let r = run(
        d,
        &[
            "reboot", "-i", inv, "node01", "--method", "cycle", "-o", "json",
        ],
    );
    r.assert_code(3);
    let res = &results(&r)[0];
    assert_eq!(res["ok"], false, "{r}");
    assert_eq!(res["outcome"], "cycle-sent", "{r}");
    // With --verify the cycle is observed (off, then on), then proven back
    // on; it used to be "proven" on an expect-on read alone (issue 23,
    // item 5).
    let r = run(
        d,
        &[
            "reboot", "-i", inv, "node01", "--method", "cycle", "--verify", "-o", "json",
        ],
    );
    r.assert_code(0);
    let res = &results(&r)[0];
    assert_eq!(res["ok"], true, "{r}");
    assert_eq!(res["outcome"], "proven", "{r}");
    assert_eq!(res["action_outcome"], "cycled", "{r}");
    let seen: Vec<&str> = res["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "state-observed")
        .filter_map(|e| e["state"].as_str())
        .collect();
    let off = seen.iter().position(|s| *s == "off").expect("seen off");
    assert!(seen[off..].contains(&"on"), "off, then on: {seen:?}");
}

/// A BMC that accepts the cycle and does nothing (the lab's `stuck`): the
/// node is never seen off, so `reboot --method cycle --verify` is not
/// proven (outcome unknown, exit 3; no further level cycles it again), and
/// says to use `--method onoff`; its host answering "on" proves nothing
/// about a cycle.
#[test]
fn a_cycle_the_bmc_ignores_is_never_verified() {
    let l = lab(&["--nodes", "1", "--hosts", "--fault", "node01:stuck"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(
        d,
        &[
            "reboot",
            "-i",
            inv,
            "node01",
            "--method",
            "cycle",
            "--verify",
            "--power-timeout",
            "2s",
            "-o",
            "json",
        ],
    );
    assert_ne!(r.code, Some(0), "{r}");
    r.assert_code(3);
    let res = &results(&r)[0];
    assert_eq!(res["ok"], false, "{r}");
    assert_eq!(res["outcome"], "outcome-unknown", "{r}");
    assert_eq!(res["level"], 1, "not cycled again by level 2: {r}");
    let e = res["error"].as_str().unwrap();
    assert!(
        e.contains("never seen off") && e.contains("--method onoff"),
        "{r}"
    );
}

#[test]
fn the_host_profile_never_reads_unreachable_as_off() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A port nobody listens on (RST), and a name that cannot resolve.
    let closed = support::free_port();
    let targets = [
        format!("ssh://root@127.0.0.1:{closed}/host"),
        "ssh://root@no-such-node.invalid/host".to_string(),
    ];
    let common = [
        "--password-script",
        "echo not-used",
        "--login-timeout",
        "2s",
    ];
    for t in &targets {
        let mut status = vec!["status", t.as_str()];
        status.extend(common);
        let r = run(d, &status);
        r.assert_code(1);
        assert!(
            r.stderr.contains("cannot reach") && r.stderr.contains("power state is unknown"),
            "{r}"
        );
        // As the only level, off is refused without the opt-in …
        let mut off = vec!["off", t.as_str()];
        off.extend(common);
        let r = run(d, &off);
        r.assert_code(64);
        assert!(r.stderr.contains("--allow-host-only"), "{r}");
        // … and with it, an unreachable host is never "off".
        off.push("--allow-host-only");
        let r = run(d, &off);
        assert_ne!(r.code, Some(0), "{r}");
        r.assert_code(1);
    }
    // The inventory opt-in.
    let inv = d.join("host.toml");
    std::fs::write(
        &inv,
        format!(
            "[[node]]\nname = \"n1\"\nallow_host_only = true\n[[node.fence]]\n\
             endpoint = \"ssh://root@127.0.0.1:{closed}/host\"\npassword_script = \"echo not-used\"\n"
        ),
    )
    .unwrap();
    let r = run(
        d,
        &[
            "off",
            "-i",
            inv.to_str().unwrap(),
            "n1",
            "--login-timeout",
            "2s",
        ],
    );
    r.assert_code(1);
}

#[test]
fn two_labs_with_hosts_run_at_once() {
    let a = lab(&["--nodes", "2", "--hosts"]);
    let b = lab(&["--nodes", "2", "--hosts"]);
    let (ha, hb) = (
        host_of(&a.inventory, "node01"),
        host_of(&b.inventory, "node01"),
    );
    assert_ne!(ha, hb);
    assert_ne!(ha, host_of(&a.inventory, "node02"));
    // Each answers for its own node.
    for (l, h) in [(&a, &ha), (&b, &hb)] {
        let (addr, port) = h.rsplit_once(':').unwrap();
        assert!(std::net::TcpStream::connect((addr, port.parse::<u16>().unwrap())).is_ok());
        assert!(l.inventory.exists());
    }
    // A port that is taken is named in the error.
    let port = ha.rsplit_once(':').unwrap().1;
    let r = run(
        a.dir.path(),
        &[
            "lab",
            "--nodes",
            "1",
            "--bind",
            "127.0.0.1",
            "--hosts",
            port,
        ],
    );
    r.assert_code(1);
    assert!(
        r.stderr
            .contains(&format!("node01: cannot simulate a host on {ha}"))
            && r.stderr.contains("another lab with --hosts"),
        "{r}"
    );
}

#[test]
fn power_draw_above_the_threshold_while_off_is_a_contradiction() {
    if !support::lab_silent_hosts() {
        return;
    }
    // The BMC says off and the host is silent, but the chassis still draws
    // a running machine's power.
    let l = lab(&["--nodes", "1", "--hosts", "--fault", "node01:draw-lies"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    run(d, &["off", "-i", inv, "node01"]).assert_code(0);
    let mut args = vec!["verify", "-i", inv, "node01", "-o", "json"];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(3);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "contradiction", "{r}");
    assert!(
        rep["reason"].as_str().unwrap().contains("more than 50 W"),
        "{r}"
    );
    let draws: Vec<serde_json::Value> = evidence_of(rep)
        .into_iter()
        .filter(|e| e["source"].as_str().unwrap().ends_with(" power"))
        .collect();
    // Both channels read the meter (IPMI DCMI, Redfish Chassis Power), and
    // both read a running machine.
    assert_eq!(draws.len(), 2, "{r}");
    assert!(draws.iter().all(|e| e["agrees"] == false), "{r}");
    assert!(
        draws
            .iter()
            .any(|e| e["source"].as_str().unwrap().starts_with("ipmi://"))
            && draws
                .iter()
                .any(|e| e["source"].as_str().unwrap().contains("/redfish/")),
        "{r}"
    );
    // The threshold is the operator's: above the machine's draw, it agrees.
    let mut high = args.clone();
    high.extend(["--max-off-watts", "500"]);
    let r = run(d, &high);
    r.assert_code(0);
    assert_eq!(results(&r)[0]["verdict"], "proven", "{r}");
    // An honest meter near standby agrees, but it is the BMC's own word:
    // it used to prove the node off on its own (issue 23, item 1); now it
    // is `bmc-only`, exit 3, and the evidence says the meter is the BMC's.
    let l = lab(&["--nodes", "1", "--power", "off"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let mut args = vec!["verify", "-i", inv, "node01", "-o", "json"];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(3);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "bmc-only", "{r}");
    let reason = rep["reason"].as_str().unwrap();
    assert!(
        reason.contains("(at most 50 W)") && reason.contains("its word again"),
        "{r}"
    );
    let meters: Vec<serde_json::Value> = evidence_of(rep)
        .into_iter()
        .filter(|e| e["witness"] == "bmc-meter")
        .collect();
    assert_eq!(meters.len(), 2, "{r}");
    assert!(meters.iter().all(|e| e["independent"] == false), "{r}");
}

/// sushy-tools (a Redfish emulator, an independent peer) serves no
/// `Chassis/*/Power`: verify records "no power reading" as evidence, which
/// is neither a witness nor a failure, and says the BMC's word is all it had.
#[test]
fn a_bmc_without_a_power_meter_gives_no_power_reading_not_a_failure() {
    if !support::venv_tool("sushy-emulator") {
        return;
    }
    let port = support::free_port();
    let start = || {
        let mut c = Command::new("bash");
        c.arg(support::peer_scripts().join("sushy_start.sh"))
            .arg(port.to_string())
            .arg("off")
            .env("SUSHY_POWER", "Off");
        support::run(c, Duration::from_secs(60))
    };
    struct Stop(u16);
    impl Drop for Stop {
        fn drop(&mut self) {
            let mut c = Command::new("bash");
            c.arg(support::peer_scripts().join("sushy_stop.sh"))
                .arg(self.0.to_string());
            let _ = support::run(c, Duration::from_secs(15));
        }
    }
    let r = start();
    let _stop = Stop(port);
    r.assert_code(0);
    let dir = tempfile::tempdir().unwrap();
    let target = format!(
        "redfish+http://admin@127.0.0.1:{port}/redfish/v1/Systems/00000000-0000-4000-8000-000000000001"
    );
    let mut args = vec![
        "verify",
        target.as_str(),
        "--password-script",
        "echo fencepass",
        "-o",
        "json",
    ];
    args.extend(FAST);
    let r = run(dir.path(), &args);
    r.assert_code(3);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "bmc-only", "{r}");
    let draw = evidence_of(rep)
        .into_iter()
        .find(|e| e["source"].as_str().unwrap().ends_with(" power"))
        .unwrap_or_else(|| panic!("no power evidence: {r}"));
    assert!(
        draw["observation"]
            .as_str()
            .unwrap()
            .starts_with("no power reading"),
        "{draw}"
    );
    assert_eq!(draw["agrees"], serde_json::Value::Null);
}

/// A PDU outlet is a witness independent of the BMC: an outlet that reads
/// off proves the node off (its BMC, fed by the same supplies, goes dark,
/// which is no gap); a PDU that reports off while it keeps feeding the
/// node is a contradiction.
#[test]
fn a_pdu_outlet_is_an_independent_witness() {
    if !support::lab_silent_hosts() {
        return;
    }
    let l = lab(&["--nodes", "1", "--pdus", "1", "--hosts"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    run(d, &["off", "-i", inv, "node01", "--level", "3"]).assert_code(0);
    let mut args = vec![
        "verify",
        "-i",
        inv,
        "node01",
        "-o",
        "json",
        // The dark BMC costs this per read; 500 ms left a debug build too
        // little to derive the PDU's SNMPv3 keys within one step.
        "--login-timeout",
        "2s",
    ];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(0);
    let rep = &results(&r)[0];
    assert_eq!(rep["verdict"], "proven", "{r}");
    let reason = rep["reason"].as_str().unwrap();
    assert!(
        reason.contains("(outlet off)") && reason.contains("as expected with its power cut"),
        "{reason}"
    );
    let outlet = evidence_of(rep)
        .into_iter()
        .find(|e| {
            e["observation"]
                .as_str()
                .unwrap()
                .starts_with("the outlet reports power off")
        })
        .unwrap_or_else(|| panic!("the outlet is evidence: {r}"));
    assert_eq!(outlet["independent"], true);

    // A lying PDU: it reports the outlet off and keeps feeding the node.
    let l = lab(&[
        "--nodes",
        "1",
        "--pdus",
        "1",
        "--hosts",
        "--pdu-fault",
        "A:lying",
    ]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    // The off itself now catches it: the outlet's load never falls
    // (issue 23, item 7; it used to print "powered off (confirmed)").
    let r = run(
        d,
        &[
            "off",
            "-i",
            inv,
            "node01",
            "--level",
            "3",
            "--power-timeout",
            "1s",
        ],
    );
    r.assert_code(1);
    assert!(r.stderr.contains("still carry"), "{r}");
    let mut args = vec!["verify", "-i", inv, "node01", "-o", "json"];
    args.extend(FAST);
    let r = run(d, &args);
    r.assert_code(3);
    assert_eq!(results(&r)[0]["verdict"], "contradiction", "{r}");
}

// ------------------------------------------------------ issue 23 proof ----
// The suspect may convict but never acquit: the lab cases of issue 23's
// "Done when", one verify each.

/// `verify` of one lab node, JSON, the fast sampling; its report.
fn verify_one(
    d: &Path,
    inv: &str,
    node: &str,
    extra: &[&str],
) -> (support::Run, serde_json::Value) {
    let mut args = vec!["verify", "-i", inv, node, "-o", "json"];
    args.extend(FAST);
    args.extend(extra);
    let r = run(d, &args);
    let rep = results(&r).first().cloned().unwrap_or_default();
    (r, rep)
}

/// An outlet that cuts the node's power, its load metered at 0 W, and the
/// BMC dark with it: two parties agree, no probe needed. A PDU that reports
/// its outlet off while it keeps feeding the node stays a contradiction.
#[test]
fn an_outlet_off_with_no_load_proves_off_without_a_probe() {
    let l = lab(&["--nodes", "1", "--pdus", "1"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    run(d, &["off", "-i", inv, "node01", "--level", "3"]).assert_code(0);
    // (The dark BMC costs a login timeout per read; 2 s leaves a debug
    // build time to derive the PDU's SNMPv3 keys within one step.)
    let (r, rep) = verify_one(d, inv, "node01", &["--login-timeout", "2s"]);
    r.assert_code(0);
    assert_eq!(rep["verdict"], "proven", "{r}");
    let load = evidence_of(&rep)
        .into_iter()
        .find(|e| e["witness"] == "outlet-load")
        .unwrap_or_else(|| panic!("the outlet's load is evidence: {r}"));
    assert!(
        load["observation"]
            .as_str()
            .unwrap()
            .starts_with("draws 0 W"),
        "{load}"
    );
    assert_eq!(load["independent"], true);
    let reason = rep["reason"].as_str().unwrap();
    assert!(
        reason.contains("(outlet off)") && reason.contains("as expected with its power cut"),
        "{reason}"
    );
}

/// A swapped cable: node01's IPMI level reaches node02's BMC, which reports
/// node02's GUID. With node01's outlet off (its own BMC dark), that channel
/// used to vanish as "dark" and the verdict was `proven` (issue 23, item
/// 2); it is an identity contradiction.
#[test]
fn an_outlet_off_behind_a_bmc_of_another_machine_is_an_identity_contradiction() {
    let l = lab(&["--nodes", "2", "--pdus", "1"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let text = std::fs::read_to_string(&l.inventory).unwrap();
    let ipmi = |n: &str| {
        let at = text.find(&format!("name = \"{n}\"")).unwrap();
        let from = at + text[at..].find("endpoint = \"ipmi://").unwrap() + "endpoint = \"".len();
        text[from..from + text[from..].find('"').unwrap()].to_string()
    };
    let (one, two) = (ipmi("node01"), ipmi("node02"));
    run(d, &["off", "-i", inv, "node01", "--level", "3"]).assert_code(0);
    patch_inventory(&l.inventory, &one, &two);
    let node01 = fencekit::lab::bmc::LabIdentity::for_node(0).uuid;
    let mut pinned = std::fs::read_to_string(&l.inventory).unwrap();
    pinned.push_str(&format!("\n[identity.node01]\nuuid = \"{node01}\"\n"));
    std::fs::write(&l.inventory, pinned).unwrap();
    // (Long enough for node02's BMC to answer on a busy machine: a channel
    // whose identity cannot be read in time is a gap, not this.)
    let (r, rep) = verify_one(d, inv, "node01", &["--login-timeout", "2s"]);
    r.assert_code(3);
    assert_eq!(rep["verdict"], "contradiction", "{r}");
    let reason = rep["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("identity contradiction: ") && reason.contains(&two),
        "{reason}"
    );
    assert!(!reason.contains("power cut"), "never dark: {reason}");
}

/// One silent probe and nothing else — a node fenced by hand, or through
/// the SSH host profile (`off --allow-host-only --verify` verifies exactly
/// this) — is weak evidence: `unproven`, never `proven` (issue 23, item 4).
#[test]
fn one_silent_probe_alone_is_unproven() {
    if !support::lab_silent_hosts() {
        return;
    }
    let l = lab(&["--nodes", "1", "--hosts", "--power", "off"]);
    let d = l.dir.path();
    let host = host_of(&l.inventory, "node01");
    let (addr, port) = host.rsplit_once(':').unwrap();
    let inv = d.join("alone.toml");
    std::fs::write(
        &inv,
        format!(
            "[[node]]\nname = \"byhand\"\naddress = \"{addr}\"\nprobe_ports = [{port}]\n\
             [[node.fence]]\ndriver = \"manual\"\ninstructions = \"pull the cords\"\n\
             [[node]]\nname = \"hostonly\"\nallow_host_only = true\n\
             [[node.fence]]\nendpoint = \"ssh://root@{addr}:{port}/host\"\n\
             password_script = \"echo not-used\"\n"
        ),
    )
    .unwrap();
    let inv = inv.to_str().unwrap();
    for node in ["byhand", "hostonly"] {
        let (r, rep) = verify_one(d, inv, node, &[]);
        r.assert_code(3);
        assert_eq!(rep["verdict"], "unproven", "{node}: {r}");
        assert!(
            rep["reason"]
                .as_str()
                .unwrap()
                .starts_with("weak evidence only:"),
            "{node}: {r}"
        );
    }
    // The manual level is recorded as a person's word, not a reading.
    let (_, rep) = verify_one(d, inv, "byhand", &[]);
    assert!(
        evidence_of(&rep)
            .iter()
            .any(|e| e["witness"] == "manual" && e["agrees"].is_null()),
        "{rep}"
    );
}
