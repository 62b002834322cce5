//! `fence_pve` and `pve://`: fencekit and upstream (fence-agents 4.12.1,
//! pycurl) side by side against the same Proxmox VE API,
//! tests/peers/pve_api.py (a three-node cluster: tickets and CSRF, API
//! tokens, QEMU and LXC guests in every state, worker tasks, HA, an
//! offline node, 401/403/429, tasks that fail after acceptance, lost
//! answers, an API that never answers).
//!
//! Each test asserts what both agents do. Where they differ, fencekit's
//! answer is the documented, safer one (docs/hypervisors.md, "fence_pve
//! differences"): a hibernated guest is on and its off fails (upstream:
//! off, "Already OFF"); a guest whose HA state is `fence` is never off; a
//! reset refused by its task is a failure (upstream: "Success: Rebooted");
//! a stop whose task fails is reported at once (upstream waits out its
//! power timeout); list prints the guests (upstream crashes on integer
//! VMIDs, #580, or prints a notice when a node is offline); an expired
//! ticket or a 429 is recovered from (upstream fails).

mod support;

use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;
use support::hv::{self, first_line, DropIn, HvPeer, Who};
use support::AgentOut;

const PASSWORD: &str = "pve-secret";
const TOKEN: &str = "5f1d0c6e-8a2b-4c3d-9e7f-0a1b2c3d4e5f";
const STOP: &str = "POST /nodes/{node}/qemu/{vmid}/status/stop";
const RESET: &str = "POST /nodes/{node}/qemu/{vmid}/status/reset";

fn peer() -> Option<HvPeer> {
    HvPeer::start("pve", support::HOST, support::free_port(), "")
}

const AGENT: DropIn = DropIn {
    name: "fence_pve",
    upstream: hv::pycurl_upstream,
};

fn both() -> Vec<Who> {
    AGENT.both()
}

fn run_as(who: Who, args: &[String], stdin: Option<&str>) -> AgentOut {
    AGENT.run(who, args, stdin, Duration::from_secs(60))
}

/// The peer's connection options (as both agents take them) and `extra`.
fn args(p: &HvPeer, extra: &[&str]) -> Vec<String> {
    let extra = [&["--power-wait", "0"], extra].concat();
    hv::conn_args(&p.host, Some(p.port), "root@pam", PASSWORD, &extra)
}

fn agent(who: Who, p: &HvPeer, extra: &[&str]) -> AgentOut {
    run_as(who, &args(p, extra), None)
}

#[track_caller]
fn expect(o: &AgentOut, code: i32, needle: &str, who: Who) {
    hv::expect_out(o, code, needle, who, &[PASSWORD, TOKEN]);
}

fn status_of(p: &HvPeer, vmid: u64) -> String {
    p.vm("vmid", &json!(vmid))["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A status case: the vmid, extra options, upstream's exit and line, ours.
type StatusCase<'a> = (&'a str, &'a [&'a str], (i32, &'a str), (i32, &'a str));

#[test]
fn status_in_every_state_side_by_side() {
    let Some(p) = peer() else { return };
    // (vmid, extra options, upstream's exit and line, ours)
    let cases: &[StatusCase] = &[
        ("100", &[], (0, "Status: ON"), (0, "Status: ON")),
        ("102", &[], (2, "Status: OFF"), (2, "Status: OFF")),
        ("103", &[], (0, "Status: ON"), (0, "Status: ON")), // paused
        ("104", &[], (0, "Status: ON"), (0, "Status: ON")), // suspended to RAM
        // Hibernated: upstream calls it off; its saved memory resumes on start.
        ("105", &[], (2, "Status: OFF"), (0, "Status: ON")),
        ("106", &[], (0, "Status: ON"), (0, "Status: ON")), // locked (backup)
        // HA state fence: the last "stopped" is not evidence.
        (
            "108",
            &[],
            (2, "Status: OFF"),
            (1, "Failed: Unable to obtain correct plug status"),
        ),
        // On the offline node pve3: neither can read it.
        (
            "107",
            &["--pve-node", "pve3"],
            (1, "Failed: Unable to obtain"),
            (1, "Failed: Unable to obtain"),
        ),
        (
            "200",
            &["--vmtype", "lxc", "--pve-node", "pve2"],
            (0, "Status: ON"),
            (0, "Status: ON"),
        ),
        (
            "201",
            &["--vmtype", "lxc", "--pve-node", "pve2"],
            (2, "Status: OFF"),
            (2, "Status: OFF"),
        ),
    ];
    for who in both() {
        for (vm, extra, up, fk) in cases {
            let mut a = vec!["-o", "status", "-n", vm];
            if extra.is_empty() {
                a.extend(["--pve-node", "pve1"]);
            }
            a.extend(extra.iter());
            let (code, line) = if who == Who::Upstream { up } else { fk };
            let o = agent(who, &p, &a);
            expect(&o, *code, line, who);
            assert!(
                first_line(&o).starts_with(line),
                "{who:?} {vm}: {}",
                first_line(&o)
            );
        }
    }
    // Our cause lines name why.
    let o = agent(
        Who::Fencekit,
        &p,
        &["-o", "status", "-n", "108", "--pve-node", "pve1"],
    );
    assert!(o.stderr.contains("HA state is 'fence'"), "{}", o.stderr);
    let o = agent(
        Who::Fencekit,
        &p,
        &["-o", "status", "-n", "107", "--pve-node", "pve3"],
    );
    assert!(
        o.stderr.contains("595") && o.stderr.contains("may still run"),
        "{}",
        o.stderr
    );
}

#[test]
fn off_on_reboot_and_already_side_by_side() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        let a = |x: &[&'static str]| {
            let mut v = vec!["-n", "100", "--pve-node", "pve1"];
            v.extend(x);
            agent(who, &p, &v)
        };
        expect(&a(&["-o", "off"]), 0, "Success: Powered OFF", who);
        assert_eq!(status_of(&p, 100), "stopped");
        expect(&a(&["-o", "off"]), 0, "Success: Already OFF", who);
        expect(&a(&["-o", "on"]), 0, "Success: Powered ON", who);
        assert_eq!(status_of(&p, 100), "running");
        expect(&a(&["-o", "on"]), 0, "Success: Already ON", who);
        expect(&a(&["-o", "reboot"]), 0, "Success: Rebooted", who);
        assert_eq!(status_of(&p, 100), "running");
        let o = a(&["-o", "reboot", "--method", "cycle"]);
        expect(&o, 0, "Success: Rebooted", who);
        // LXC: onoff whatever the method (upstream forces it; fencekit's
        // cycle of a container is a stop seen stopped, then a start).
        let o = agent(
            who,
            &p,
            &[
                "-n",
                "200",
                "--vmtype",
                "lxc",
                "--pve-node",
                "pve2",
                "-o",
                "reboot",
                "-m",
                "cycle",
            ],
        );
        expect(&o, 0, "Success: Rebooted", who);
        assert_eq!(status_of(&p, 200), "running");
        // HA-managed: the stop goes through the HA manager; both wait for it.
        let o = agent(who, &p, &["-n", "111", "--pve-node", "pve2", "-o", "off"]);
        expect(&o, 0, "Success: Powered OFF", who);
        assert_eq!(status_of(&p, 111), "stopped");
    }
    assert!(p.calls(RESET) >= 1);
}

#[test]
fn a_refused_reset_and_a_failed_stop_task_are_failures() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        // Locked guest: the reset is accepted and its task fails.
        let o = agent(
            who,
            &p,
            &[
                "-n",
                "106",
                "--pve-node",
                "pve1",
                "-o",
                "reboot",
                "-m",
                "cycle",
            ],
        );
        assert_eq!(p.vm("vmid", &json!(106))["resets"], 0, "the lock kept it");
        match who {
            // Upstream's record: "Rebooted" whatever the task said.
            Who::Upstream => expect(&o, 0, "Success: Rebooted", who),
            Who::Fencekit => {
                expect(&o, 1, "VM is locked (backup)", who);
                assert_eq!(
                    first_line(&o),
                    "Connection timed out",
                    "upstream's cycle failure line"
                );
            }
        }
        // A stop accepted, then failed: upstream polls until its power
        // timeout; fencekit reads the task and fails at once.
        p.set("task?action=stop&fail=unable%20to%20kill%20the%20QEMU%20process&count=1");
        let o = agent(
            who,
            &p,
            &[
                "-n",
                "100",
                "--pve-node",
                "pve1",
                "-o",
                "off",
                "--power-timeout",
                "3",
            ],
        );
        expect(&o, 1, "Failed: Timed out waiting to power OFF", who);
        assert_eq!(status_of(&p, 100), "running");
        if who == Who::Fencekit {
            assert!(
                o.stderr.contains("unable to kill the QEMU process"),
                "{}",
                o.stderr
            );
            assert!(
                o.took < Duration::from_secs(3),
                "not waited out: {:?}",
                o.took
            );
        }
        // Hibernated: upstream says Already OFF and sends nothing;
        // fencekit tries the stop, which the lock refuses, and fails.
        let o = agent(who, &p, &["-n", "105", "--pve-node", "pve1", "-o", "off"]);
        match who {
            Who::Upstream => expect(&o, 0, "Success: Already OFF", who),
            Who::Fencekit => expect(&o, 1, "hibernated", who),
        }
        assert_eq!(
            p.vm("vmid", &json!(105))["lock"],
            "suspended",
            "its state is kept"
        );
    }
}

#[test]
fn refusals_unknown_and_ambiguous_guests_side_by_side() {
    let Some(p) = peer() else { return };
    let login = "Unable to connect/login to fencing device";
    for who in both() {
        let mut a = args(&p, &["-o", "status", "-n", "100", "--pve-node", "pve1"]);
        let at = a.iter().position(|s| s == PASSWORD).unwrap();
        a[at] = "wrong".into();
        let o = run_as(who, &a, None);
        expect(&o, 1, login, who);
        assert_eq!(first_line(&o), login, "{who:?}");
        // Unknown VMID.
        let o = agent(
            who,
            &p,
            &["-o", "status", "-n", "999", "--pve-node", "pve1"],
        );
        expect(&o, 1, "Failed: Unable to obtain correct plug status", who);
        // A name: upstream cannot (its plug is a VMID); fencekit refuses the
        // one two guests share and takes the one that is unique.
        let o = agent(who, &p, &["-o", "status", "-n", "twin", "--pve-node-auto"]);
        expect(&o, 1, "Failed: Unable to obtain correct plug status", who);
        if who == Who::Fencekit {
            assert!(
                o.stderr.contains("2 guests are named 'twin'"),
                "{}",
                o.stderr
            );
            let o = agent(who, &p, &["-o", "status", "-n", "node2", "--pve-node-auto"]);
            expect(&o, 0, "Status: ON", who);
        }
        // A user who may read but not power (403): both fail the off.
        let mut a = args(
            &p,
            &[
                "-o",
                "off",
                "-n",
                "100",
                "--pve-node",
                "pve1",
                "--power-timeout",
                "2",
            ],
        );
        let at = a.iter().position(|s| s == "root@pam").unwrap();
        a[at] = "viewer@pve".into();
        a[at + 2] = "viewer-secret".into();
        let o = run_as(who, &a, None);
        expect(&o, 1, "Failed: Timed out waiting to power OFF", who);
        assert_eq!(status_of(&p, 100), "running");
        // No node option: upstream's usage error.
        let o = agent(who, &p, &["-o", "status", "-n", "100"]);
        expect(
            &o,
            1,
            "At least one of pve-node-auto or pve-node must be supplied",
            who,
        );
    }
}

#[test]
fn tokens_expired_tickets_and_throttling() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        // An API token (upstream has none: its ticket login fails).
        let mut a = args(&p, &["-o", "off", "-n", "101", "--pve-node-auto"]);
        let at = a.iter().position(|s| s == "root@pam").unwrap();
        a[at] = "fence@pve!fencekit".into();
        a[at + 2] = TOKEN.into();
        let o = run_as(who, &a, None);
        match who {
            Who::Upstream => expect(&o, 1, "Unable to connect/login to fencing device", who),
            Who::Fencekit => {
                expect(&o, 0, "Success: Powered OFF", who);
                assert_eq!(status_of(&p, 101), "stopped");
            }
        }
        // Tickets that expire after two requests: fencekit logs in again.
        p.reset();
        p.set("expire?after=2");
        let o = agent(
            who,
            &p,
            &[
                "-o",
                "off",
                "-n",
                "100",
                "--pve-node",
                "pve1",
                "--power-timeout",
                "3",
            ],
        );
        match who {
            Who::Upstream => assert_eq!(o.code, Some(1), "{}", o.stderr),
            Who::Fencekit => {
                expect(&o, 0, "Success: Powered OFF", who);
                assert!(p.calls("POST /access/ticket") >= 2);
            }
        }
        // Two 429s (a proxy in front): fencekit waits them out.
        p.reset();
        p.set("throttle?count=2&retry_after=0");
        let o = agent(
            who,
            &p,
            &["-o", "status", "-n", "100", "--pve-node", "pve1"],
        );
        match who {
            Who::Upstream => expect(&o, 1, "Unable to connect/login to fencing device", who),
            Who::Fencekit => expect(&o, 0, "Status: ON", who),
        }
    }
}

#[test]
fn a_lost_answer_is_read_back_and_a_silent_api_is_bounded() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        p.set("drop?action=stop");
        let o = agent(who, &p, &["-o", "off", "-n", "100", "--pve-node", "pve1"]);
        expect(&o, 0, "Success: Powered OFF", who);
        assert_eq!(p.calls(STOP), 1, "{who:?}: the stop was sent once");
        // An API that never answers: both give up within their bounds.
        p.reset();
        p.set("hang?count=50");
        let o = agent(
            who,
            &p,
            &[
                "-o",
                "status",
                "-n",
                "100",
                "--pve-node",
                "pve1",
                "--shell-timeout",
                "3",
                "--login-timeout",
                "3",
            ],
        );
        assert_eq!(o.code, Some(1), "{who:?}: {}", o.stderr);
        assert!(
            o.took < Duration::from_secs(20),
            "{who:?} took {:?}",
            o.took
        );
    }
}

#[test]
fn list_and_monitor_side_by_side() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        // pve3 offline: upstream prints its notice; fencekit lists, the
        // offline node's guest UNKNOWN.
        let o = agent(who, &p, &["-o", "list-status", "--pve-node-auto"]);
        match who {
            Who::Upstream => expect(&o, 0, "NOTICE: List option is not working", who),
            Who::Fencekit => {
                expect(&o, 0, "100,node1,on", who);
                for line in [
                    "102,node3,off",
                    "105,hibernated,on",
                    "107,stale,UNKNOWN",
                    "108,fenced,UNKNOWN",
                    "200,ct1,on",
                ] {
                    assert!(
                        o.stdout.lines().any(|l| l == line),
                        "no {line} in {}",
                        o.stdout
                    );
                }
            }
        }
        // Every node online: upstream crashes on the integer VMIDs (#580).
        p.set("node?node=pve3&online=1");
        let o = agent(who, &p, &["-o", "list", "--pve-node-auto"]);
        match who {
            Who::Upstream => {
                assert!(o.stderr.contains("TypeError"), "{}", o.stderr);
                assert!(o.stdout.is_empty());
            }
            Who::Fencekit => {
                expect(&o, 0, "107,stale", who);
                assert_eq!(o.stdout.lines().count(), 14, "{}", o.stdout);
            }
        }
        let before = p.calls("GET /cluster/resources");
        let o = agent(who, &p, &["-o", "monitor", "--pve-node-auto"]);
        assert_eq!(o.code, Some(0), "{who:?}: {}", o.stderr);
        if who == Who::Fencekit {
            assert_eq!(
                p.calls("GET /cluster/resources"),
                before,
                "monitor lists nothing"
            );
            assert_eq!(p.calls("GET /version"), 1);
        }
    }
}

#[test]
fn far_argv_and_pacemaker_stdin() {
    let Some(p) = peer() else { return };
    let port = p.port.to_string();
    for who in both() {
        p.reset();
        // FAR: --k=v in any order, --action=reboot; its status check with separate values.
        let far: Vec<String> = [
            format!("--pve-node={}", "pve1"),
            "--password=pve-secret".into(),
            "--ssl-insecure".into(),
            format!("--ipport={port}"),
            "--action=reboot".into(),
            "--plug=100".into(),
            format!("--ip={}", p.host),
            "--username=root@pam".into(),
        ]
        .to_vec();
        expect(&run_as(who, &far, None), 0, "Success: Rebooted", who);
        let check: Vec<String> = [
            "--action",
            "status",
            "--ip",
            &p.host,
            "--ipport",
            &port,
            "--username",
            "root@pam",
            "--password",
            PASSWORD,
            "--ssl-insecure",
            "--plug",
            "100",
            "--pve-node",
            "pve1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        expect(&run_as(who, &check, None), 0, "Status: ON", who);
        // Pacemaker: no argv, key=value lines on stdin (deprecated keys too).
        let stdin = format!(
            "action=off\nipaddr={}\nipport={port}\nlogin=root@pam\npasswd={PASSWORD}\nssl_insecure=1\n\
             port=102\nnode_name=pve1\npower_wait=0\n",
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

#[test]
fn fencekit_only_pins_moves_and_native_targets() {
    let Some(p) = peer() else { return };
    let uuid = p.vm("vmid", &json!(100))["smbios_uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let f = Who::Fencekit;
    expect(
        &agent(
            f,
            &p,
            &[
                "-o",
                "status",
                "-n",
                "100",
                "--pve-node",
                "pve1",
                "--expect-uuid",
                &uuid,
            ],
        ),
        0,
        "Status: ON",
        f,
    );
    let o = agent(
        f,
        &p,
        &[
            "-o",
            "off",
            "-n",
            "100",
            "--pve-node",
            "pve1",
            "--expect-uuid",
            "00000000-0000-4000-8000-000000000001",
        ],
    );
    expect(&o, 1, "different machine", f);
    assert_eq!(p.calls(STOP), 0);
    // A guest moved to another node is followed there (upstream fails).
    let o = agent(f, &p, &["-o", "status", "-n", "101", "--pve-node", "pve1"]);
    expect(&o, 0, "Status: ON", f);
    // Natively: the certificate verified against the peer's own.
    let url = format!("pve://root@pam@{}:{}/node1", p.host, p.port);
    let run = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fencekit"));
        c.args(args)
            .env("FENCEKIT_PASSWORD", PASSWORD)
            .env("FENCEKIT_LOCK_SCOPE", support::lock_scope());
        support::run(c, Duration::from_secs(30))
    };
    let cert = p.cert.to_str().unwrap();
    let r = run(&["status", &url, "--ca-cert", cert, "--output", "json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{}", r.stderr));
    assert_eq!(v["results"][0]["state"], "on", "{}", r.stdout);
    let r = run(&["status", &url]);
    assert_eq!(
        r.code,
        Some(1),
        "an unknown certificate is refused: {}",
        r.stderr
    );
    let r = run(&["verify", &url, "--ca-cert", cert, "--expect", "on"]);
    assert_eq!(
        r.code,
        Some(3),
        "alone, the hypervisor is bmc-only: {}{}",
        r.stdout,
        r.stderr
    );
    let r = run(&[
        "off",
        &format!("pve://root@pam@{}:{}/pve1/105", p.host, p.port),
        "--ca-cert",
        cert,
    ]);
    assert_eq!(
        r.code,
        Some(1),
        "a hibernated guest is never fenced off: {}",
        r.stderr
    );
}
