//! `fence_nutanix_ahv` and `nutanix://`: fencekit and the newest upstream
//! agent (ClusterLabs fence-agents, agents/nutanix_ahv, which 4.12.1 lacks;
//! requests, run with Debian 12's /usr/share/fence library) side by side
//! against the same Prism Central v4 API, tests/peers/nutanix_api.py (VMs
//! in every power state, a disconnected host, two VMs of one name, tasks
//! with timing, 401/403/404/409/429, tasks that fail after acceptance, lost
//! answers, an API that never answers).
//!
//! Upstream's agent is the file tests/peers/setup.sh puts at
//! `$PEERS_DIR/upstream/fence_nutanix_ahv.py`, taken from Debian's
//! fence-agents-nutanix-ahv 4.17.0-2 (checked by its SHA-256, unpacked,
//! never installed); it always speaks port 9440, so each test's peer listens
//! on 9440 of a loopback address of its own.
//!
//! Each test asserts what both agents do. Where they differ, fencekit's
//! answer is the documented, safer one (docs/hypervisors.md, "fence_nutanix_ahv
//! differences").

mod support;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;
use support::hv::{self, DropIn, HvPeer, Who};
use support::AgentOut;

const PASSWORD: &str = "nutanix-secret";
const OFF: &str = "POST /api/vmm/v4.0/ahv/config/vms/{id}/$actions/power-off";
const LIST: &str = "GET /api/vmm/v4.0/ahv/config/vms";

fn peer() -> Option<HvPeer> {
    HvPeer::start("nutanix", &support::own_loopback().to_string(), 9440, "")
}

/// Upstream's agent as a program: a wrapper running its source with
/// Debian's python3 and /usr/share/fence's library (`None`: not set up).
fn upstream() -> Option<&'static PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| {
        let src = support::peers_dir().join("upstream/fence_nutanix_ahv.py");
        let lib = std::path::Path::new("/usr/share/fence/fencing.py");
        if !src.exists() || !lib.exists() {
            let msg = format!(
                "SKIP upstream part: {} or {} is missing (tests/peers/setup.sh, Debian package fence-agents)",
                src.display(),
                lib.display()
            );
            assert!(
                !support::require_peers(),
                "{msg}, and FENCEKIT_REQUIRE_PEERS=1"
            );
            eprintln!("{msg}");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("fencekit-upstream-nutanix")
            .tempdir()
            .unwrap()
            .keep();
        let prog = dir.join("fence_nutanix_ahv");
        std::fs::write(
            &prog,
            format!(
                "#!/bin/sh\nPYTHONPATH=/usr/share/fence exec /usr/bin/python3 {} \"$@\"\n",
                src.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        Some(prog)
    })
    .as_ref()
}

const AGENT: DropIn = DropIn {
    name: "fence_nutanix_ahv",
    upstream: |_| upstream().cloned(),
};

fn both() -> Vec<Who> {
    AGENT.both()
}

fn run_limited(who: Who, args: &[String], stdin: Option<&str>, limit: Duration) -> AgentOut {
    AGENT.run(who, args, stdin, limit)
}

fn run_as(who: Who, args: &[String], stdin: Option<&str>) -> AgentOut {
    run_limited(who, args, stdin, Duration::from_secs(60))
}

/// The peer's connection options (as both agents take them) and `extra`.
fn args_as(p: &HvPeer, user: &str, password: &str, extra: &[&str]) -> Vec<String> {
    hv::conn_args(&p.host, None, user, password, extra)
}

fn agent(who: Who, p: &HvPeer, extra: &[&str]) -> AgentOut {
    run_as(who, &args_as(p, "admin", PASSWORD, extra), None)
}

#[track_caller]
fn expect(o: &AgentOut, code: i32, needle: &str, who: Who) {
    hv::expect_out(o, code, needle, who, &[PASSWORD]);
}

/// The power state the peer holds for the VM named `name`.
fn power_of(p: &HvPeer, name: &str) -> String {
    p.vm("name", &name.into())["powerState"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A status case: the VM, upstream's exit and text, ours.
type StatusCase<'a> = (&'a str, (i32, &'a str), (i32, &'a str));

#[test]
fn status_in_every_state_side_by_side() {
    let Some(p) = peer() else { return };
    let cases: &[StatusCase] = &[
        ("node1", (0, "Status: ON"), (0, "Status: ON")),
        ("node3", (2, "Status: OFF"), (2, "Status: OFF")),
        // PAUSED: upstream maps it to off; the VM's memory and process live.
        ("paused", (2, "Status: OFF"), (0, "Status: ON")),
        // SUSPENDED and UNDETERMINED: upstream's map lacks them (a crash).
        ("suspended", (1, "KeyError"), (0, "Status: ON")),
        (
            "undetermined",
            (1, "KeyError"),
            (1, "Failed: Generic error"),
        ),
        // OFF, but its host h3 is disconnected: the last report is stale.
        ("stale", (2, "Status: OFF"), (1, "Failed: Generic error")),
        ("stale-on", (0, "Status: ON"), (0, "Status: ON")),
    ];
    for who in both() {
        for (vm, up, fk) in cases {
            let (code, text) = if who == Who::Upstream { up } else { fk };
            let o = agent(who, &p, &["-o", "status", "-n", vm]);
            expect(&o, *code, text, who);
        }
    }
    // What fencekit says about the stale one, beyond upstream's line.
    let o = agent(Who::Fencekit, &p, &["-o", "status", "-n", "stale", "-v"]);
    assert!(
        o.stderr.contains("DISCONNECTED") || o.stderr.contains("disconnected"),
        "{}",
        o.stderr
    );
    assert_eq!(p.calls(OFF), 0, "a status powered something");
}

#[test]
fn off_on_reboot_and_already_side_by_side() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        expect(
            &agent(who, &p, &["-o", "off", "-n", "node1"]),
            0,
            "Success: Powered OFF",
            who,
        );
        assert_eq!(power_of(&p, "node1"), "OFF", "{who:?}");
        expect(
            &agent(who, &p, &["-o", "off", "-n", "node1"]),
            0,
            "Success: Already OFF",
            who,
        );
        assert_eq!(p.calls(OFF), 1, "{who:?}: the second off sent a request");
        expect(
            &agent(who, &p, &["-o", "on", "-n", "node1"]),
            0,
            "Success: Powered ON",
            who,
        );
        expect(
            &agent(who, &p, &["-o", "on", "-n", "node1"]),
            0,
            "Success: Already ON",
            who,
        );
        assert_eq!(power_of(&p, "node1"), "ON", "{who:?}");
        expect(
            &agent(who, &p, &["-o", "reboot", "-n", "node2"]),
            0,
            "Success: Rebooted",
            who,
        );
        assert_eq!(power_of(&p, "node2"), "ON", "{who:?}");
        // A PAUSED VM: upstream says it is off already and sends nothing
        // (the VM can be resumed); fencekit powers it off.
        let o = agent(who, &p, &["-o", "off", "-n", "paused"]);
        if who == Who::Upstream {
            expect(&o, 0, "Success: Already OFF", who);
            assert_eq!(power_of(&p, "paused"), "PAUSED");
        } else {
            expect(&o, 0, "Success: Powered OFF", who);
            assert_eq!(power_of(&p, "paused"), "OFF");
        }
    }
}

#[test]
fn unknown_ambiguous_and_refused_side_by_side() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        let up = who == Who::Upstream;
        // Unknown VM: upstream crashes (KeyError), fencekit fails plainly.
        let o = agent(who, &p, &["-o", "off", "-n", "nosuch"]);
        expect(
            &o,
            1,
            if up {
                "KeyError"
            } else {
                "Failed: Generic error"
            },
            who,
        );
        // Two VMs named twin: upstream powers the first off; fencekit refuses.
        let o = agent(who, &p, &["-o", "off", "-n", "twin"]);
        let twins: Vec<String> = p
            .control("GET", "vms")
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["name"] == "twin")
            .map(|v| v["powerState"].as_str().unwrap().to_string())
            .collect();
        if up {
            expect(&o, 0, "Success: Powered OFF", who);
            assert_eq!(twins.iter().filter(|s| *s == "OFF").count(), 1, "{twins:?}");
        } else {
            expect(&o, 1, "Failed: Generic error", who);
            assert!(o.stderr.contains("twin"), "{}", o.stderr);
            assert_eq!(twins, ["ON", "ON"]);
            assert_eq!(
                p.calls(OFF),
                0,
                "fencekit sent a power request for an ambiguous name"
            );
        }
        // Wrong password: the login line, nothing powered.
        let o = run_as(
            who,
            &args_as(&p, "admin", "wrong", &["-o", "off", "-n", "node1"]),
            None,
        );
        expect(&o, 1, "Unable to connect/login to fencing device", who);
        // A user who may only read (403 on the power action): a failure.
        let o = run_as(
            who,
            &args_as(&p, "viewer", "viewer-secret", &["-o", "off", "-n", "node1"]),
            None,
        );
        assert_eq!(o.code, Some(1), "{who:?}: {}{}", o.stdout, o.stderr);
        assert!(!o.stdout.contains("Success"), "{who:?}: {}", o.stdout);
        assert_eq!(power_of(&p, "node1"), "ON", "{who:?}");
    }
}

#[test]
fn a_conflict_refused_before_acceptance_is_sent_again() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        // 409: another operation holds the VM; nothing was done.
        p.set("conflict?action=power-off");
        let o = agent(who, &p, &["-o", "off", "-n", "node1"]);
        if who == Who::Upstream {
            // Upstream crashes reading the error (KeyError), the VM still on.
            expect(&o, 1, "KeyError", who);
            assert_eq!(power_of(&p, "node1"), "ON");
        } else {
            // fencekit reads the VM again and sends once more: a refusal
            // carried nothing out, so this is not a second power request.
            expect(&o, 0, "Success: Powered OFF", who);
            assert_eq!(p.calls(OFF), 2);
            assert_eq!(power_of(&p, "node1"), "OFF");
        }
    }
}

#[test]
fn an_answer_about_another_machine_is_never_evidence() {
    let Some(p) = peer() else { return };
    // The VM read by its extId names another BIOS UUID than the list did.
    p.set("lie?count=100");
    for action in ["status", "off"] {
        let o = agent(Who::Fencekit, &p, &["-o", action, "-n", "node1"]);
        assert_eq!(o.code, Some(1), "{action}: {}{}", o.stdout, o.stderr);
        assert!(
            !o.stdout.contains("Status") && !o.stdout.contains("Success"),
            "{}",
            o.stdout
        );
        assert!(o.stderr.contains("BIOS UUID"), "{}", o.stderr);
    }
    assert_eq!(
        p.calls(OFF),
        0,
        "powered on the word of an answer about another VM"
    );
    assert_eq!(power_of(&p, "node1"), "ON");
}

#[test]
fn a_task_accepted_then_failed_is_never_success() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        p.set("task?action=power-off&outcome=FAILED");
        let o = agent(who, &p, &["-o", "off", "-n", "node1"]);
        assert_eq!(o.code, Some(1), "{who:?}: {}{}", o.stdout, o.stderr);
        assert!(!o.stdout.contains("Success"), "{who:?}: {}", o.stdout);
        assert_eq!(power_of(&p, "node1"), "ON", "{who:?}");
    }
    // Canceled: fencekit fails at once (upstream waits out its 60 s power
    // timeout: not run here for time).
    p.reset();
    p.set("task?action=power-off&outcome=CANCELED");
    let o = agent(Who::Fencekit, &p, &["-o", "off", "-n", "node1"]);
    expect(&o, 1, "Failed", Who::Fencekit);
    assert!(o.took < Duration::from_secs(10), "took {:?}", o.took);
    assert!(
        o.stderr.contains("CANCELED") || o.stderr.contains("canceled"),
        "{}",
        o.stderr
    );
}

#[test]
fn throttling_is_waited_within_the_deadline() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        // Two 429s (Retry-After 1) on reads: both agents wait and read.
        p.set("throttle?count=2&retry_after=1&what=get");
        expect(
            &agent(who, &p, &["-o", "status", "-n", "node1"]),
            0,
            "Status: ON",
            who,
        );
    }
    // On the power action: fencekit waits it out too and powers off once.
    p.reset();
    p.set("throttle?count=2&retry_after=1&what=post");
    let o = agent(Who::Fencekit, &p, &["-o", "off", "-n", "node1"]);
    expect(&o, 0, "Success: Powered OFF", Who::Fencekit);
    assert_eq!(p.calls(OFF), 3, "two throttled and one carried out");
    // Throttled past the deadline: a bounded failure, never success.
    p.reset();
    p.set("throttle?count=1000&retry_after=1&what=all");
    let o = agent(
        Who::Fencekit,
        &p,
        &["-o", "status", "-n", "node1", "--power-timeout", "5"],
    );
    assert_eq!(o.code, Some(1), "{}{}", o.stdout, o.stderr);
    assert!(o.took < Duration::from_secs(15), "took {:?}", o.took);
    // The message says the time really spent throttled (the run's, not the
    // last request's 0.0s) and how far the deadline was.
    let spent = o
        .stderr
        .split("throttled answer(s) in ")
        .nth(1)
        .and_then(|t| t.split('s').next())
        .and_then(|n| n.parse::<f64>().ok());
    assert!(
        spent.is_some_and(|s| s >= 2.0 && s <= o.took.as_secs_f64() + 0.05), // printed to 0.1 s
        "spent {spent:?} of {:?}: {}",
        o.took,
        o.stderr
    );
    assert!(o.stderr.contains("the deadline "), "{}", o.stderr);
}

#[test]
fn a_lost_answer_is_read_back_and_a_silent_api_is_bounded() {
    let Some(p) = peer() else { return };
    // The power-off is carried out, its answer lost: fencekit reads the
    // state back and never sends it again.
    p.set("drop?action=power-off");
    let o = agent(Who::Fencekit, &p, &["-o", "off", "-n", "node1"]);
    expect(&o, 0, "Success: Powered OFF", Who::Fencekit);
    assert_eq!(p.calls(OFF), 1, "the power request was sent again");
    if let Some(_up) = upstream() {
        // Upstream: the lost answer is an error; it does not re-send either.
        p.reset();
        p.set("drop?action=power-off");
        let o = agent(Who::Upstream, &p, &["-o", "off", "-n", "node1"]);
        assert_eq!(p.calls(OFF), 1, "upstream: {}{}", o.stdout, o.stderr);
    }
    // An API that never answers: fencekit ends within its timeouts;
    // upstream's requests have no timeout (still waiting when killed).
    p.reset();
    p.set("hang?count=1000");
    let o = agent(
        Who::Fencekit,
        &p,
        &[
            "-o",
            "status",
            "-n",
            "node1",
            "--login-timeout",
            "2",
            "--shell-timeout",
            "2",
        ],
    );
    assert_eq!(o.code, Some(1), "{}{}", o.stdout, o.stderr);
    assert!(o.took < Duration::from_secs(15), "took {:?}", o.took);
    if upstream().is_some() {
        let o = run_limited(
            Who::Upstream,
            &args_as(&p, "admin", PASSWORD, &["-o", "status", "-n", "node1"]),
            None,
            Duration::from_secs(4),
        );
        assert_eq!(o.code, None, "upstream ended: {}{}", o.stdout, o.stderr);
    }
}

#[test]
fn list_and_monitor_side_by_side() {
    let Some(p) = peer() else { return };
    let node1 = p.vm("name", &"node1".into())["extId"]
        .as_str()
        .unwrap()
        .to_string();
    for who in both() {
        p.reset();
        let o = agent(who, &p, &["-o", "list"]);
        assert_eq!(o.code, Some(0), "{who:?}: {}{}", o.stdout, o.stderr);
        assert!(
            o.stdout.lines().any(|l| l == format!("node1,{node1}")),
            "{who:?}: {}",
            o.stdout
        );
        assert!(o.stdout.contains("paused,"), "{who:?}: {}", o.stdout);
        let o = agent(
            who,
            &p,
            &["-o", "list", "--filter", "startswith(name,'node')"],
        );
        assert_eq!(o.stdout.lines().count(), 3, "{who:?}: {}", o.stdout);
        p.reset();
        let o = agent(who, &p, &["-o", "monitor"]);
        assert_eq!(o.code, Some(0), "{who:?}: {}{}", o.stdout, o.stderr);
        if who == Who::Fencekit {
            let calls = p.control("GET", "calls");
            let total: u64 = calls
                .as_object()
                .unwrap()
                .values()
                .filter_map(|v| v.as_u64())
                .sum();
            assert_eq!(
                (p.calls(LIST), total),
                (1, 1),
                "monitor read more than one resource: {calls}"
            );
        }
        // A wrong password fails the monitor.
        let o = run_as(
            who,
            &args_as(&p, "admin", "wrong", &["-o", "monitor"]),
            None,
        );
        assert_eq!(o.code, Some(1), "{who:?}: {}{}", o.stdout, o.stderr);
    }
}

#[test]
fn far_argv_and_pacemaker_stdin() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        // FAR: --k=v in any order, --action=reboot.
        let far: Vec<String> = vec![
            format!("--password={PASSWORD}"),
            "--ssl-insecure".into(),
            "--action=reboot".into(),
            "--plug=node1".into(),
            format!("--ip={}", p.host),
            "--username=admin".into(),
        ];
        expect(&run_as(who, &far, None), 0, "Success: Rebooted", who);
        let check: Vec<String> = [
            "--action",
            "status",
            "--ip",
            &p.host,
            "--username",
            "admin",
            "--password",
            PASSWORD,
            "--ssl-insecure",
            "--plug",
            "node1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        expect(&run_as(who, &check, None), 0, "Status: ON", who);
        // Pacemaker: key=value lines on stdin (deprecated keys too).
        let stdin = format!(
            "action=off\nipaddr={}\nlogin=admin\npasswd={PASSWORD}\nssl_insecure=1\nport=node3\n",
            p.host
        );
        expect(
            &run_as(who, &[], Some(&stdin)),
            0,
            "Success: Already OFF",
            who,
        );
    }
}
