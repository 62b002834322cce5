//! `fence_rhevm` and `ovirt://`: fencekit and upstream (fence-agents
//! 4.12.1, pycurl) side by side against the same engine API,
//! tests/peers/ovirt_api.py (REST API v4 in XML: Basic and the session
//! cookie, Filter for user-level permissions, VMs in every status, stop and
//! start as jobs with timing, a VM on a non-responding host, a reply
//! without status, 401/403/404/409/429, a job that fails after acceptance,
//! lost answers, an API that never answers).
//!
//! Each test asserts what both agents do. Where they differ, fencekit's
//! answer is the documented, safer one (docs/hypervisors.md, "fence_rhevm
//! differences"): a reply without a status is unreadable (upstream: off),
//! an unknown or image_locked VM is unreadable (upstream: on), a job that
//! fails is reported at once (upstream waits out its power timeout), a
//! refused password says so (upstream: "Can not find VM UUID").

mod support;

use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};
use support::hv::{self, first_line, DropIn, HvPeer, Who};
use support::AgentOut;

const PASSWORD: &str = "ovirt-secret";
const STOP: &str = "POST /vms/{id}/stop";
const START: &str = "POST /vms/{id}/start";

fn peer() -> Option<HvPeer> {
    HvPeer::start("ovirt", support::HOST, support::free_port(), "")
}

const AGENT: DropIn = DropIn {
    name: "fence_rhevm",
    upstream: hv::pycurl_upstream,
};

fn both() -> Vec<Who> {
    AGENT.both()
}

fn run_as(who: Who, args: &[String], stdin: Option<&str>) -> AgentOut {
    AGENT.run(who, args, stdin, Duration::from_secs(60))
}

fn args_as(p: &HvPeer, user: &str, password: &str, extra: &[&str]) -> Vec<String> {
    hv::conn_args(&p.host, Some(p.port), user, password, extra)
}

fn agent(who: Who, p: &HvPeer, extra: &[&str]) -> AgentOut {
    run_as(who, &args_as(p, "admin@internal", PASSWORD, extra), None)
}

#[track_caller]
fn expect(o: &AgentOut, code: i32, needle: &str, who: Who) {
    hv::expect_out(o, code, needle, who, &[PASSWORD, "user-secret"]);
}

fn status_of(p: &HvPeer, name: &str) -> Value {
    p.vm("name", &Value::from(name))["status"].clone()
}

type StatusCase<'a> = (&'a str, (i32, &'a str), (i32, &'a str));

const UNREADABLE: &str = "Failed: Unable to obtain correct plug status";

#[test]
fn status_in_every_state_side_by_side() {
    let Some(p) = peer() else { return };
    let on = (0, "Status: ON");
    let cases: &[StatusCase] = &[
        ("node1", on, on),
        ("node3", (2, "Status: OFF"), (2, "Status: OFF")),
        ("paused", on, on),
        ("suspended", on, on),
        ("saving", on, on),
        ("restoring", on, on),
        ("migrating", on, on),
        ("notresp", on, on),
        ("poweringdown", on, on),
        ("launching", on, on),
        // On a non-responding host: the engine does not know; neither do we.
        ("stale", on, (1, UNREADABLE)),
        ("locked", on, (1, UNREADABLE)),
        // No status in the reply: upstream assumes off.
        ("nostatus", (2, "Status: OFF"), (1, UNREADABLE)),
    ];
    for who in both() {
        for (vm, up, fk) in cases {
            let (code, line) = if who == Who::Upstream { up } else { fk };
            let o = agent(who, &p, &["-o", "status", "-n", vm]);
            expect(&o, *code, line, who);
            assert!(
                first_line(&o).starts_with(line),
                "{who:?} {vm}: {}",
                first_line(&o)
            );
        }
    }
    let o = agent(Who::Fencekit, &p, &["-o", "status", "-n", "nostatus"]);
    assert!(o.stderr.contains("no status"), "{}", o.stderr);
    let o = agent(Who::Fencekit, &p, &["-o", "status", "-n", "stale"]);
    assert!(o.stderr.contains("may still run"), "{}", o.stderr);
}

#[test]
fn off_on_reboot_and_already_side_by_side() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        let a = |x: &[&'static str]| {
            let mut v = vec!["-n", "node1"];
            v.extend(x);
            agent(who, &p, &v)
        };
        expect(&a(&["-o", "off"]), 0, "Success: Powered OFF", who);
        assert_eq!(status_of(&p, "node1"), "down");
        expect(&a(&["-o", "off"]), 0, "Success: Already OFF", who);
        expect(&a(&["-o", "on"]), 0, "Success: Powered ON", who);
        assert_eq!(status_of(&p, "node1"), "up");
        expect(&a(&["-o", "on"]), 0, "Success: Already ON", who);
        expect(&a(&["-o", "reboot"]), 0, "Success: Rebooted", who);
        assert_eq!(status_of(&p, "node1"), "up");
        // A paused VM is on: off stops it.
        let o = agent(who, &p, &["-o", "off", "-n", "paused"]);
        expect(&o, 0, "Success: Powered OFF", who);
        assert_eq!(status_of(&p, "paused"), "down");
        assert_eq!(p.calls(STOP), 3, "{who:?}: stop, never shutdown");
        assert_eq!(p.calls("POST /vms/{id}/shutdown"), 0);
        assert_eq!(p.calls(START), 2, "{who:?}");
    }
}

#[test]
fn unknown_vm_wrong_credentials_filter_list_and_monitor() {
    let Some(p) = peer() else { return };
    // upstream's list gives up on a VM without status: give it one.
    p.set("vm?name=nostatus&status=up");
    for who in both() {
        let o = agent(who, &p, &["-o", "status", "-n", "nope"]);
        let want = match who {
            Who::Upstream => "Failed: Can not find VM UUID",
            Who::Fencekit => UNREADABLE,
        };
        expect(&o, 1, want, who);
        let o = run_as(
            who,
            &args_as(
                &p,
                "admin@internal",
                "wrong",
                &["-o", "status", "-n", "node1"],
            ),
            None,
        );
        let want = match who {
            Who::Upstream => "Failed: Can not find VM UUID",
            Who::Fencekit => "Unable to connect/login to fencing device",
        };
        expect(&o, 1, want, who);
        // A user-level role: Filter: true (the default) shows its VMs only.
        let user = |x: &[&str]| run_as(who, &args_as(&p, "user@internal", "user-secret", x), None);
        expect(
            &user(&["-o", "status", "-n", "node1"]),
            0,
            "Status: ON",
            who,
        );
        expect(&user(&["-o", "status", "-n", "node3"]), 1, "Failed:", who);
        let o = user(&["-o", "status", "-n", "node1", "--disable-http-filter"]);
        expect(&o, 1, "Failed:", who);
        let o = agent(who, &p, &["-o", "list"]);
        expect(&o, 0, "node1,", who);
        assert_eq!(o.stdout.lines().count(), 14, "{who:?}: {}", o.stdout);
        let o = agent(who, &p, &["-o", "list-status"]);
        expect(&o, 0, "node3,,", who);
        let o = agent(who, &p, &["-o", "monitor"]);
        expect(&o, 0, "", who);
    }
    // Our monitor reads the API's root, never the list.
    let before = p.calls("GET /vms");
    expect(
        &agent(Who::Fencekit, &p, &["-o", "monitor"]),
        0,
        "",
        Who::Fencekit,
    );
    assert_eq!(p.calls("GET /vms"), before);
    let o = run_as(
        Who::Fencekit,
        &args_as(
            &p,
            "user@internal",
            "user-secret",
            &["-o", "status", "-n", "node1", "--disable-http-filter"],
        ),
        None,
    );
    assert!(o.stderr.contains("403"), "{}", o.stderr);
}

#[test]
fn cookies_jobs_lost_answers_throttling_and_silence() {
    let Some(p) = peer() else { return };
    let f = Who::Fencekit;
    // --use-cookies: Basic once, the session afterwards; an expired session
    // is replaced by Basic (a 401 carried nothing out).
    for who in both() {
        p.reset();
        let o = agent(who, &p, &["-o", "off", "-n", "node1", "--use-cookies"]);
        expect(&o, 0, "Success: Powered OFF", who);
        assert!(p.calls("auth cookie") > 0, "{who:?}");
    }
    p.reset();
    let o = agent(f, &p, &["-o", "reboot", "-n", "node2", "--use-cookies"]);
    expect(&o, 0, "Success: Rebooted", f);
    assert_eq!(p.calls("auth basic"), 1, "one login for the run");
    // The session expires before the stop: the engine answers the stop 401
    // (nothing carried out). Upstream fails (its message blames the VM's
    // name) and the VM stays up; fencekit logs in again once (Basic),
    // sends the stop once more, then reads the VM down.
    p.reset();
    p.set("expire?on=POST");
    let o = agent(
        Who::Upstream,
        &p,
        &["-o", "off", "-n", "node1", "--use-cookies"],
    );
    expect(&o, 1, "Failed:", Who::Upstream);
    assert_eq!(
        p.calls("expired cookie"),
        1,
        "upstream met the expired cookie"
    );
    assert_eq!(status_of(&p, "node1"), "up");
    p.reset();
    p.set("expire?on=POST");
    let o = agent(f, &p, &["-o", "off", "-n", "node1", "--use-cookies"]);
    expect(&o, 0, "Success: Powered OFF", f);
    assert_eq!(
        p.calls("expired cookie"),
        1,
        "the stop met the expired cookie"
    );
    assert_eq!(p.calls("auth basic"), 2, "logged in again exactly once");
    assert_eq!(p.calls(STOP), 2, "refused once, carried out once");
    assert_eq!(status_of(&p, "node1"), "down");
    // A stop accepted and then failed: a failure at once, sent once.
    p.reset();
    p.set("task?action=stop&fail=VDSM%20error");
    let t = Instant::now();
    let o = agent(f, &p, &["-o", "off", "-n", "node1"]);
    expect(&o, 1, "job failed", f);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(p.calls(STOP), 1);
    assert_eq!(status_of(&p, "node1"), "up");
    // The stop's answer lost: read back, never sent again.
    p.reset();
    p.set("drop?action=stop");
    let o = agent(f, &p, &["-o", "off", "-n", "node1"]);
    expect(&o, 0, "Success: Powered OFF", f);
    assert_eq!(p.calls(STOP), 1, "never re-sent");
    // 429: upstream fails (it reads the answer as no such VM); fencekit
    // waits it out within the deadline.
    for who in both() {
        p.reset();
        p.set("throttle?count=2&retry_after=1");
        let o = agent(who, &p, &["-o", "status", "-n", "node1"]);
        match who {
            Who::Upstream => expect(&o, 1, "Failed:", who),
            Who::Fencekit => expect(&o, 0, "Status: ON", who),
        }
    }
    // An API that never answers: both bounded, both fail.
    for who in both() {
        p.reset();
        p.set("hang?count=5");
        let t = Instant::now();
        let o = agent(
            who,
            &p,
            &["-o", "status", "-n", "node1", "--power-timeout", "8"],
        );
        assert_eq!(o.code, Some(1), "{who:?}: {}", o.stderr);
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{who:?}: {:?}",
            t.elapsed()
        );
    }
    // The UUID pin: the VM id is the guest's SMBIOS UUID.
    p.reset();
    let id = p.vm("name", &Value::from("node1"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let o = agent(
        f,
        &p,
        &["-o", "status", "-n", "node1", "--expect-uuid", &id],
    );
    expect(&o, 0, "Status: ON", f);
    let o = agent(
        f,
        &p,
        &[
            "-o",
            "off",
            "-n",
            "node1",
            "--expect-uuid",
            "00000000-0000-4000-8000-000000000001",
        ],
    );
    expect(&o, 1, "different machine", f);
    assert_eq!(p.calls(STOP), 0);
    // The plug may be the VM's id.
    expect(
        &agent(f, &p, &["-o", "status", "-n", &id]),
        0,
        "Status: ON",
        f,
    );
}

#[test]
fn far_argv_pacemaker_stdin_and_native() {
    let Some(p) = peer() else { return };
    let port = p.port.to_string();
    for who in both() {
        p.reset();
        let far: Vec<String> = vec![
            "--password=ovirt-secret".into(),
            "--ssl-insecure".into(),
            format!("--ipport={port}"),
            "--action=reboot".into(),
            "--plug=node1".into(),
            format!("--ip={}", p.host),
            "--username=admin@internal".into(),
        ];
        expect(&run_as(who, &far, None), 0, "Success: Rebooted", who);
        let stdin = format!(
            "action=off\nipaddr={}\nipport={port}\nlogin=admin@internal\npasswd={PASSWORD}\n\
             ssl_insecure=1\nport=node3\n",
            p.host
        );
        expect(
            &run_as(who, &[], Some(&stdin)),
            0,
            "Success: Already OFF",
            who,
        );
    }
    let url = format!("ovirt://admin@internal@{}:{}/node1", p.host, p.port);
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
        "alone, the engine is bmc-only: {}{}",
        r.stdout,
        r.stderr
    );
    let nostatus = format!("ovirt://admin@internal@{}:{}/nostatus", p.host, p.port);
    let r = run(&["off", &nostatus, "--ca-cert", cert]);
    assert_eq!(r.code, Some(1), "no status is never off: {}", r.stderr);
}
