//! PDU levels through the real binary against `fencekit lab --pdus N`:
//! IPMI first, switched PDUs second (the topology operators are told to
//! build), dual-fed nodes, a refusing outlet, `check`, and one PDU shared
//! by a whole rack.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{bin, Lab};

struct InvLab {
    _lab: Lab,
    inventory: PathBuf,
    dir: tempfile::TempDir,
}

fn lab_with_inventory(args: &[&str]) -> InvLab {
    let dir = tempfile::tempdir().unwrap();
    let inventory = dir.path().join("lab.toml");
    let mut argv: Vec<&str> = args.to_vec();
    let inv = inventory.to_str().unwrap().to_string();
    argv.extend(["--redfish", "none", "--write-inventory", &inv]);
    let lab = Lab::start(&argv);
    assert!(inventory.exists(), "the lab wrote its inventory");
    InvLab {
        _lab: lab,
        inventory,
        dir,
    }
}

fn run(dir: &Path, args: &[&str]) -> support::Run {
    let mut c = Command::new(bin());
    c.args(args)
        .env("NO_COLOR", "1")
        .env("XDG_RUNTIME_DIR", dir)
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("FENCEKIT_AUDIT");
    support::run(c, Duration::from_secs(60))
}

/// The IPMI level of node01 is silent: fencing falls back to the PDU level
/// (two outlets on two PDUs), which fences; the result names the level and
/// keeps the failed attempt. The node is really off: its BMC is silent and
/// its status through the PDUs is off.
///
/// `--login-timeout` cuts the silent IPMI level short, but it bounds every
/// step of every level: the PDU level's session set-up too, which derives
/// the SNMPv3 keys of both PDUs (four megabyte hashes, ~150 ms of CPU in a
/// debug build, 0.6-2.7 s on a 2-core machine under load) before its first
/// exchange. 5 s leaves that set-up room; 1 s failed under load.
#[test]
fn a_silent_ipmi_level_falls_back_to_the_pdu_level() {
    let l = lab_with_inventory(&["--nodes", "2", "--pdus", "2", "--fault", "node01:silent"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(
        d,
        &[
            "off",
            "-i",
            inv,
            "node01",
            "--login-timeout",
            "5s",
            "-o",
            "json",
        ],
    );
    r.assert_code(0);
    let res = r.json_result();
    assert_eq!(res["level"], 2, "{r}");
    assert_eq!(res["method"], "snmp", "{r}");
    assert_eq!(res["state"], "off", "{r}");
    let attempts = res["attempts"].as_array().cloned().unwrap_or_default();
    assert_eq!(attempts.len(), 1, "{r}");
    assert_eq!(attempts[0]["method"], "ipmi", "{r}");
    let r = run(d, &["status", "-i", inv, "node01", "--level", "2"]);
    r.assert_code(2);
    // node02 is untouched and still answers on its IPMI level.
    run(d, &["status", "-i", inv, "node02", "--level", "1"]).assert_code(0);
}

/// Outlet B:1 is welded on: the off fails, and says which outlet; A:1 was
/// switched off all the same, and node02's outlets work.
#[test]
fn a_refusing_outlet_fails_the_node_and_is_named() {
    let l = lab_with_inventory(&["--nodes", "2", "--pdus", "2", "--pdu-fault", "B:refuse=1"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(
        d,
        &[
            "off",
            "-i",
            inv,
            "node01",
            "--level",
            "2",
            "--power-timeout",
            "1s",
        ],
    );
    r.assert_code(1);
    assert!(r.text().contains("still on: b:1"), "{r}");
    run(d, &["off", "-i", inv, "node02", "--level", "2"]).assert_code(0);
    // Node01 still has power (through B:1): its BMC answers.
    run(d, &["status", "-i", inv, "node01", "--level", "1"]).assert_code(0);
}

/// `check` on a PDU level: reachability, credentials, outlet names, state;
/// an outlet name the PDU lacks fails the check, naming it.
#[test]
fn check_resolves_outlets_and_reads_their_state() {
    let l = lab_with_inventory(&["--nodes", "2", "--pdus", "1"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(d, &["check", "-i", inv, "node01", "--level", "2"]);
    r.assert_code(0);
    let text = std::fs::read_to_string(&l.inventory).unwrap();
    let named = l.dir.path().join("named.toml");
    std::fs::write(
        &named,
        text.replace("outlets = [\"A:1\"]", "outlets = [\"A:node01\"]")
            .replace("outlets = [\"A:2\"]", "outlets = [\"A:nosuch\"]"),
    )
    .unwrap();
    let named = named.to_str().unwrap();
    run(d, &["check", "-i", named, "node01", "--level", "2"]).assert_code(0);
    let r = run(d, &["check", "-i", named, "node02", "--level", "2"]);
    r.assert_code(1);
    assert!(r.text().contains("nosuch"), "{r}");
}

/// A rack of 24 nodes on one PDU: status of all of them through it, one
/// session at a time, every node answered.
#[test]
fn a_rack_on_one_pdu() {
    let l = lab_with_inventory(&["--nodes", "24", "--pdus", "1"]);
    let (d, inv) = (l.dir.path(), l.inventory.to_str().unwrap());
    let r = run(
        d,
        &["status", "-i", inv, "--all", "--level", "2", "-o", "json"],
    );
    r.assert_code(0);
    let results = r.json()["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 24, "{r}");
    assert!(results.iter().all(|x| x["state"] == "on"), "{r}");
    let r = run(d, &["off", "-i", inv, "node[01-04]", "--level", "2"]);
    r.assert_code(0);
    let r = run(
        d,
        &[
            "status",
            "-i",
            inv,
            "node[03-06]",
            "--level",
            "2",
            "-o",
            "json",
        ],
    );
    let states: Vec<String> = r.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["state"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(states, ["off", "off", "on", "on"], "{r}");
}
