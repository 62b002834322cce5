//! `fence_cisco_ucs` and `ucs://`: fencekit and upstream (fence-agents
//! 4.12.1, pycurl) side by side against the same UCS Manager XML API,
//! tests/peers/ucs_api.py (aaaLogin / aaaLogout, configResolveDn,
//! configResolveClass, configConfMo(s); profiles with and without a server,
//! a server missing from its slot, a sub-organization, a server whose power
//! never changes, a wrong password, an expired cookie, a lost answer to the
//! change, a slow API and one that never answers).
//!
//! The four groups run at once (one test: libtest would run two at a time
//! on CI's two cores), and each side of a group on a peer of its own, in a
//! thread of its own, so that the whole binary stays within its few
//! seconds of CI time. Each test asserts what both agents do. Where they
//! differ, fencekit's answer is the documented, safer one (docs/ucs.md,
//! "Differences from upstream").

mod support;

use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};
use support::hv::{self, first_line, DropIn, HvPeer, Who};
use support::AgentOut;

const PASSWORD: &str = "ucs-secret";
const UNREADABLE: &str = "Failed: Unable to obtain correct plug status";

fn peer() -> HvPeer {
    HvPeer::start("ucs", support::HOST, support::free_port(), "--power-ms 0")
        .expect("the UCS Manager peer")
}

const AGENT: DropIn = DropIn {
    name: "fence_cisco_ucs",
    upstream: hv::pycurl_upstream,
};

/// Runs `f` for each agent (upstream when it can run, fencekit), each in a
/// thread of its own with a peer of its own. `None` when the peer cannot run.
fn each_side(f: impl Fn(Who, &HvPeer) + Sync) -> Option<()> {
    if !["python3", "openssl", "curl"]
        .iter()
        .all(|p| support::peer_available(p))
    {
        return None;
    }
    let f = &f;
    std::thread::scope(|s| {
        for who in AGENT.both() {
            s.spawn(move || f(who, &peer()));
        }
    });
    Some(())
}

fn run_as(who: Who, args: &[String], stdin: Option<&str>) -> AgentOut {
    AGENT.run(who, args, stdin, Duration::from_secs(30))
}

fn agent(who: Who, p: &HvPeer, extra: &[&str]) -> AgentOut {
    run_as(
        who,
        &hv::conn_args(&p.host, Some(p.port), "admin", PASSWORD, extra),
        None,
    )
}

#[track_caller]
fn expect(o: &AgentOut, code: i32, needle: &str, who: Who) {
    hv::expect_out(o, code, needle, who, &[PASSWORD]);
}

/// The server behind a profile, as the peer holds it.
fn server(p: &HvPeer, profile: &str) -> Value {
    let all = p.control("GET", "servers");
    all.as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["assignedToDn"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/ls-{profile}"))
        })
        .unwrap_or_else(|| panic!("{profile} in {all}"))
        .clone()
}

fn power_of(p: &HvPeer, profile: &str) -> String {
    server(p, profile)["operPower"]
        .as_str()
        .unwrap()
        .to_string()
}

fn calls(p: &HvPeer, what: &str) -> u64 {
    p.control("GET", "calls")[what].as_u64().unwrap_or(0)
}

/// Every session a run opened was closed.
#[track_caller]
fn all_logged_out(p: &HvPeer, who: Who) {
    let s = p.control("GET", "sessions");
    assert_eq!(s["open"], 0, "{who:?} left a session open: {s}");
}

type StatusCase<'a> = (&'a [&'a str], (i32, &'a str), (i32, &'a str));

fn status_missing_as_off_and_suborg_side_by_side() {
    let on = (0, "Status: ON");
    let off = (2, "Status: OFF");
    let cases: &[StatusCase] = &[
        (&["-n", "node1"], on, on),
        (&["-n", "node3"], off, off),
        // A blade missing from its slot: upstream counts it off.
        (&["-n", "gone"], off, (1, UNREADABLE)),
        (&["-n", "gone", "--missing-as-off"], off, off),
        (&["-n", "unassoc"], (1, UNREADABLE), (1, UNREADABLE)),
        (&["-n", "unassoc", "--missing-as-off"], off, off),
        (&["-n", "nosuch"], (1, UNREADABLE), (1, UNREADABLE)),
        (&["-n", "nosuch", "--missing-as-off"], off, off),
        // A sub-organization: upstream needs the org- prefix.
        (&["-n", "fin1"], (1, UNREADABLE), (1, UNREADABLE)),
        (&["-n", "fin1", "--suborg", "org-Finance"], on, on),
        (&["-n", "fin1", "--suborg", "Finance"], (1, UNREADABLE), on),
    ];
    each_side(|who, p| {
        for (args, up, fk) in cases {
            let (code, line) = if who == Who::Upstream { up } else { fk };
            let mut a = vec!["-o", "status"];
            a.extend(*args);
            let o = agent(who, p, &a);
            expect(&o, *code, line, who);
            assert!(
                first_line(&o).starts_with(line),
                "{who:?} {args:?}: {}",
                first_line(&o)
            );
        }
        assert_eq!(calls(p, "configConfMo") + calls(p, "configConfMos"), 0);
        assert_eq!(calls(p, "aaaLogout"), cases.len() as u64, "{who:?}");
        all_logged_out(p, who);
        if who == Who::Fencekit {
            let o = agent(who, p, &["-o", "status", "-n", "gone"]);
            assert!(o.stderr.contains("missing from its slot"), "{}", o.stderr);
            let o = agent(who, p, &["-o", "status", "-n", "unassoc"]);
            assert!(
                o.stderr.contains("associated with no server"),
                "{}",
                o.stderr
            );
        }
    });
}

fn off_on_reboot_already_and_stuck_side_by_side() {
    each_side(|who, p| {
        let a = |x: &[&str]| {
            let mut v = vec!["-n", "node1"];
            v.extend(x);
            agent(who, p, &v)
        };
        expect(&a(&["-o", "off"]), 0, "Success: Powered OFF", who);
        assert_eq!(power_of(p, "node1"), "off");
        expect(&a(&["-o", "off"]), 0, "Success: Already OFF", who);
        expect(&a(&["-o", "on"]), 0, "Success: Powered ON", who);
        assert_eq!(power_of(p, "node1"), "on");
        expect(&a(&["-o", "on"]), 0, "Success: Already ON", who);
        let changes = calls(p, "configConfMo") + calls(p, "configConfMos");
        assert_eq!(changes, 2, "{who:?}: an already-done action sent a change");
        expect(
            &agent(who, p, &["-o", "reboot", "-n", "node2"]),
            0,
            "Success: Rebooted",
            who,
        );
        assert_eq!(power_of(p, "node2"), "on");
        // The profile of a sub-organization.
        let o = agent(
            who,
            p,
            &["-o", "off", "-n", "fin1", "--suborg", "org-Finance"],
        );
        expect(&o, 0, "Success: Powered OFF", who);
        assert_eq!(power_of(p, "fin1"), "off");
        // A server whose power never changes: success is only what
        // operPower shows.
        let o = agent(
            who,
            p,
            &["-o", "off", "-n", "stuck", "--power-timeout", "1"],
        );
        expect(&o, 1, "Failed: Timed out waiting to power OFF", who);
        assert_eq!(power_of(p, "stuck"), "on");
        all_logged_out(p, who);
    });
}

fn credentials_list_monitor_and_faults_side_by_side() {
    each_side(|who, p| {
        let up = who == Who::Upstream;
        // Wrong password: the login line, nothing else sent.
        let o = run_as(
            who,
            &hv::conn_args(
                &p.host,
                Some(p.port),
                "admin",
                "wrong",
                &["-o", "off", "-n", "node1"],
            ),
            None,
        );
        expect(&o, 1, "Unable to connect/login to fencing device", who);
        assert_eq!(calls(p, "configResolveDn"), 0, "{who:?}");
        // list: each profile's dn and description, the same lines.
        let o = agent(who, p, &["-o", "list"]);
        expect(&o, 0, "org-root/ls-node1,profile node1\n", who);
        assert_eq!(o.stdout.lines().count(), 7, "{who:?}: {}", o.stdout);
        assert!(o
            .stdout
            .contains("org-root/org-Finance/ls-fin1,profile fin1"));
        let o = agent(who, p, &["-o", "list-status"]);
        expect(&o, 0, "org-root/ls-node1,profile node1,UNKNOWN", who);
        let o = agent(who, p, &["-o", "monitor"]);
        expect(&o, 0, "", who);
        assert_eq!(o.stdout, "", "{who:?}");
        // The cookie expires after the login: upstream fails, fencekit logs
        // in once more (552 carried nothing out).
        p.reset();
        p.set("expire?count=1");
        let o = agent(who, p, &["-o", "status", "-n", "node1"]);
        match up {
            true => expect(&o, 1, UNREADABLE, who),
            false => {
                expect(&o, 0, "Status: ON", who);
                assert_eq!(calls(p, "aaaLogin"), 2);
            }
        }
        // A slow API within the timeouts.
        p.reset();
        p.set("slow?ms=300");
        expect(
            &agent(who, p, &["-o", "status", "-n", "node1"]),
            0,
            "Status: ON",
            who,
        );
        // The change carried out and its answer lost: upstream fails on
        // the broken connection; fencekit reads the server back, sends
        // nothing again, and sees it off.
        p.reset();
        p.set("drop?count=1");
        let o = agent(who, p, &["-o", "off", "-n", "node1"]);
        match up {
            true => assert_eq!(o.code, Some(1), "{}", o.stderr),
            false => expect(&o, 0, "Success: Powered OFF", who),
        }
        assert_eq!(calls(p, "configConfMo") + calls(p, "configConfMos"), 1);
        assert_eq!(power_of(p, "node1"), "off");
        // An API that never answers: bounded by the timeouts.
        p.reset();
        p.set("hang?count=50");
        let t = Instant::now();
        let o = agent(
            who,
            p,
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
        let line = if up {
            "Unable to connect/login to fencing device"
        } else {
            "Connection timed out"
        };
        expect(&o, 1, line, who);
        assert!(
            t.elapsed() < Duration::from_secs(6),
            "{who:?}: {:?}",
            t.elapsed()
        );
        p.reset();
    });
}

fn fencekit_only_expired_change_pins_secrets_stdin_and_native() {
    each_side(|who, p| {
        let port = p.port.to_string();
        // Pacemaker's stdin, upstream's keys (and old names).
        let stdin = format!(
            "action=off\nipaddr={}\nipport={port}\nlogin=admin\npasswd={PASSWORD}\n\
             ssl_insecure=1\nport=fin1\nsuborg=org-Finance\n",
            p.host
        );
        expect(
            &run_as(who, &[], Some(&stdin)),
            0,
            "Success: Powered OFF",
            who,
        );
        // FAR's argv.
        let far: Vec<String> = vec![
            format!("--password={PASSWORD}"),
            "--ssl-insecure".into(),
            format!("--ipport={port}"),
            "--action=reboot".into(),
            "--plug=node2".into(),
            format!("--ip={}", p.host),
            "--username=admin".into(),
        ];
        expect(&run_as(who, &far, None), 0, "Success: Rebooted", who);
        all_logged_out(p, who);
        if who == Who::Upstream {
            return;
        }
        let f = Who::Fencekit;
        // The cookie expires right at the change: refused (552), so it is
        // sent once more after one login again.
        p.reset();
        p.set("expire?count=1&method=configConfMo");
        let o = agent(f, p, &["-o", "off", "-n", "node1", "-vvv"]);
        expect(&o, 0, "Success: Powered OFF", f);
        assert_eq!(
            calls(p, "configConfMo"),
            2,
            "refused once, carried out once"
        );
        assert_eq!(calls(p, "aaaLogin"), 2);
        // No cookie in any output, however verbose.
        let last = p.control("GET", "sessions")["last"]
            .as_str()
            .unwrap()
            .to_string();
        let o = agent(f, p, &["-o", "status", "-n", "node2", "-vvv"]);
        let cookie = p.control("GET", "sessions")["last"]
            .as_str()
            .unwrap()
            .to_string();
        assert_ne!(last, cookie);
        for c in [&last, &cookie] {
            let token = c.split('/').next_back().unwrap();
            assert!(
                !o.stdout.contains(token) && !o.stderr.contains(token),
                "a cookie was printed:\n{}",
                o.stderr
            );
        }
        // The identity pin: the server's UUID (and serial).
        let uuid = server(p, "node2")["uuid"].as_str().unwrap().to_string();
        let o = agent(
            f,
            p,
            &["-o", "status", "-n", "node2", "--expect-uuid", &uuid],
        );
        expect(&o, 0, "Status: ON", f);
        let o = agent(
            f,
            p,
            &[
                "-o",
                "off",
                "-n",
                "node2",
                "--expect-uuid",
                "00000000-0000-4000-8000-000000000001",
            ],
        );
        expect(&o, 1, "different machine", f);
        assert_eq!(power_of(p, "node2"), "on");
        // Native: ucs://USER@UCSM:PORT/ORG/PROFILE with the peer's certificate.
        p.reset();
        let run = |args: &[&str]| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_fencekit"));
            c.args(args)
                .env("FENCEKIT_PASSWORD", PASSWORD)
                .env("FENCEKIT_LOCK_SCOPE", support::lock_scope());
            support::run(c, Duration::from_secs(30))
        };
        let cert = p.cert.to_str().unwrap();
        let url = format!("ucs://admin@{}:{}/Finance/fin1", p.host, p.port);
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
        let r = run(&["off", &url, "--ca-cert", cert]);
        assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
        assert_eq!(power_of(p, "fin1"), "off");
        let gone = format!("ucs://admin@{}:{}/gone", p.host, p.port);
        let r = run(&["off", &gone, "--ca-cert", cert]);
        assert_eq!(
            r.code,
            Some(1),
            "a missing server is never off: {}",
            r.stderr
        );
        all_logged_out(p, f);
    });
}

#[test]
fn side_by_side() {
    let groups: [(&str, fn()); 4] = [
        ("status", status_missing_as_off_and_suborg_side_by_side),
        ("power", off_on_reboot_already_and_stuck_side_by_side),
        ("faults", credentials_list_monitor_and_faults_side_by_side),
        (
            "fencekit",
            fencekit_only_expired_change_pins_secrets_stdin_and_native,
        ),
    ];
    let t = Instant::now();
    std::thread::scope(|s| {
        for (name, f) in groups {
            std::thread::Builder::new()
                .name(format!("side_by_side::{name}"))
                .spawn_scoped(s, move || {
                    let t = Instant::now();
                    f();
                    eprintln!("side_by_side::{name}: {:.1} s", t.elapsed().as_secs_f64());
                })
                .unwrap();
        }
    });
    eprintln!("side_by_side: {:.1} s", t.elapsed().as_secs_f64());
}
