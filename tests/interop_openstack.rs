//! `fence_openstack` and `openstack://`: fencekit and upstream
//! (fence-agents 4.12.1 with keystoneauth1 5.18.1 and python-novaclient
//! 18.13.1, run with the peers' venv Python) side by side against the same
//! cloud, tests/peers/openstack_api.py (Keystone v3 and Nova v2.1: servers
//! in every state, actions as tasks with timing, 401/403/404/409/429, an
//! action accepted then ERROR, lost answers, expired tokens, silence).
//!
//! Each test asserts what both agents do. Where they differ, fencekit's
//! answer is the documented, safer one (docs/hypervisors.md, "fence_openstack
//! differences").

mod support;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::hv::HvPeer;
use support::AgentOut;

const PASSWORD: &str = "fence-secret";
const STOP: &str = "action os-stop";
const START: &str = "action os-start";
const VENV_PY: &str = "venv/bin/python";

fn peer() -> Option<HvPeer> {
    HvPeer::start("openstack", support::HOST, support::free_port(), "")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Upstream,
    Fencekit,
}

fn ours() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-interop-openstack")
            .tempdir()
            .unwrap()
            .keep();
        let link = dir.join("fence_openstack");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link).unwrap();
        link
    })
}

/// The venv Python that runs upstream's agent (keystoneauth1, novaclient).
fn python() -> std::path::PathBuf {
    support::peers_dir().join(VENV_PY)
}

/// Whether upstream's agent can run here (fence-agents and its libraries).
fn has_upstream() -> bool {
    if !support::peer_available("fence_openstack") {
        return false;
    }
    let ok = Command::new(python())
        .args(["-c", "import novaclient, keystoneauth1, yaml"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        let msg = "SKIP upstream part: the peers' venv lacks keystoneauth1/novaclient (tests/peers/setup.sh)";
        assert!(
            !support::require_peers(),
            "{msg}, and FENCEKIT_REQUIRE_PEERS=1"
        );
        eprintln!("{msg}");
    }
    ok
}

fn both() -> Vec<Who> {
    let mut w = vec![Who::Fencekit];
    if has_upstream() {
        w.insert(0, Who::Upstream);
    }
    w
}

fn run_as(who: Who, args: &[String], stdin: Option<&str>) -> AgentOut {
    match who {
        Who::Fencekit => support::exec_agent(ours(), args, stdin, Duration::from_secs(60)),
        Who::Upstream => {
            let mut a = vec![support::which("fence_openstack")
                .expect("fence_openstack")
                .display()
                .to_string()];
            a.extend(args.iter().cloned());
            support::exec_agent(&python(), &a, stdin, Duration::from_secs(60))
        }
    }
}

fn args_as(p: &HvPeer, user: &str, password: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        format!("--auth-url=https://{}:{}/identity/v3", p.host, p.port),
        "--project-name=fencing".into(),
        "--ssl-insecure".into(),
        "-l".into(),
        user.into(),
        "-p".into(),
        password.into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn agent(who: Who, p: &HvPeer, extra: &[&str]) -> AgentOut {
    run_as(who, &args_as(p, "fence", PASSWORD, extra), None)
}

#[track_caller]
fn expect(o: &AgentOut, code: i32, needle: &str, who: Who) {
    let text = format!("{}\n{}", o.stdout, o.stderr);
    assert_eq!(o.code, Some(code), "{who:?}: {text}");
    assert!(text.contains(needle), "{who:?}: no '{needle}' in:\n{text}");
    for secret in [PASSWORD, "reader-secret", "ac-secret"] {
        assert!(!text.contains(secret), "{who:?} printed a secret:\n{text}");
    }
}

fn first_line(o: &AgentOut) -> String {
    let line = o.stdout.lines().next().unwrap_or_default();
    if !line.is_empty() {
        return line.to_string();
    }
    support::error_lines(&o.stderr)
        .first()
        .map(|l| l.to_string())
        .unwrap_or_default()
}

/// The server named `name` (the first of that name) as the peer holds it.
fn server(p: &HvPeer, name: &str) -> Value {
    let all = p.control("GET", "servers");
    all.as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {all}"))
        .clone()
}

fn id_of(p: &HvPeer, name: &str) -> String {
    server(p, name)["id"].as_str().unwrap().to_string()
}

const UNREADABLE: &str = "Failed: Unable to obtain correct plug status";

type StatusCase<'a> = (&'a str, (i32, &'a str), (i32, &'a str));

#[test]
fn status_in_every_state_side_by_side() {
    let Some(p) = peer() else { return };
    let on = (0, "Status: ON");
    let off = (2, "Status: OFF");
    let bad = (1, UNREADABLE);
    // Upstream knows ACTIVE (on) and SHUTOFF (off); everything else fails.
    let cases: &[StatusCase] = &[
        ("node1", on, on),
        ("node3", off, off),
        ("offloaded", bad, off),
        ("paused", bad, on),
        ("suspended", bad, on),
        ("shelved", bad, on),
        ("error", bad, on),
        ("unknown", bad, bad),
        ("crashed", off, bad),
        ("stuck", on, on),
        ("locked", on, on),
    ];
    for who in both() {
        for (name, up, fk) in cases {
            let (code, line) = if who == Who::Upstream { up } else { fk };
            let o = agent(who, &p, &["-o", "status", "-n", &id_of(&p, name)]);
            expect(&o, *code, line, who);
            assert!(
                first_line(&o).starts_with(line),
                "{who:?} {name}: {}",
                first_line(&o)
            );
        }
    }
    // An administrator sees host_status: a compute service down is never off.
    let admin = |who, n: &str| {
        run_as(
            who,
            &args_as(&p, "admin", "admin-secret", &["-o", "status", "-n", n]),
            None,
        )
    };
    let hd = id_of(&p, "hostdown");
    for who in both() {
        let (code, line) = if who == Who::Upstream { off } else { bad };
        expect(&admin(who, &hd), code, line, who);
    }
    // By name: ours finds it; two of one name are refused, never the first.
    let f = Who::Fencekit;
    expect(
        &agent(f, &p, &["-o", "status", "-n", "node1"]),
        0,
        "Status: ON",
        f,
    );
    let o = agent(f, &p, &["-o", "status", "-n", "twin"]);
    expect(&o, 1, "refusing to guess", f);
    if has_upstream() {
        let o = agent(Who::Upstream, &p, &["-o", "status", "-n", "node1"]);
        expect(&o, 1, "Not Found", Who::Upstream);
    }
}

#[test]
fn off_on_reboot_cycle_and_already_side_by_side() {
    let Some(p) = peer() else { return };
    for who in both() {
        p.reset();
        let id = id_of(&p, "node1");
        let a = |x: &[&str]| {
            let mut v = vec!["-n", id.as_str()];
            v.extend(x);
            agent(who, &p, &v)
        };
        expect(&a(&["-o", "off"]), 0, "Success: Powered OFF", who);
        assert_eq!(server(&p, "node1")["status"], "SHUTOFF");
        expect(&a(&["-o", "off"]), 0, "Success: Already OFF", who);
        expect(&a(&["-o", "on"]), 0, "Success: Powered ON", who);
        assert_eq!(server(&p, "node1")["status"], "ACTIVE");
        expect(&a(&["-o", "on"]), 0, "Success: Already ON", who);
        expect(&a(&["-o", "reboot"]), 0, "Success: Rebooted", who);
        assert_eq!(server(&p, "node1")["status"], "ACTIVE");
        assert_eq!(p.calls(STOP), 2, "{who:?}");
        assert_eq!(p.calls(START), 2, "{who:?}");
    }
    // --method cycle (fencekit only): one HARD reboot, followed.
    let f = Who::Fencekit;
    p.reset();
    let id = id_of(&p, "node1");
    let o = agent(f, &p, &["-n", &id, "-o", "reboot", "--method", "cycle"]);
    expect(&o, 0, "Success: Rebooted", f);
    assert_eq!(p.calls("action reboot"), 1);
    assert_eq!(server(&p, "node1")["reboots"], 1);
    // A paused, suspended or shelved server is never off: off fails (Nova
    // refuses os-stop there), nothing claims it.
    for name in ["paused", "suspended", "shelved"] {
        let o = agent(f, &p, &["-n", name, "-o", "off", "--power-timeout", "3"]);
        expect(&o, 1, "Failed:", f);
        assert_ne!(server(&p, name)["status"], "SHUTOFF", "{name}");
    }
    // A server that stays in its transition: bounded, never off.
    let t = Instant::now();
    let o = agent(f, &p, &["-n", "stuck", "-o", "off", "--power-timeout", "3"]);
    expect(&o, 1, "Failed: Timed out waiting to power OFF", f);
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    // Locked: 409, never a success.
    let o = agent(
        f,
        &p,
        &["-n", "locked", "-o", "off", "--power-timeout", "3"],
    );
    expect(&o, 1, "locked", f);
}

#[test]
fn failures_lost_answers_tokens_throttling_and_silence() {
    let Some(p) = peer() else { return };
    let f = Who::Fencekit;
    // Accepted (202) and then ERROR: upstream says success, ours fails at once.
    for who in both() {
        p.reset();
        p.set("fail?action=os-stop");
        let id = id_of(&p, "node1");
        let t = Instant::now();
        let o = agent(who, &p, &["-o", "off", "-n", &id, "--power-timeout", "8"]);
        match who {
            // Upstream polls until its power timeout: ERROR is "unknown".
            Who::Upstream => expect(&o, 1, "Failed:", who),
            Who::Fencekit => {
                expect(&o, 1, "ended in ERROR", who);
                assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
            }
        }
        assert_eq!(p.calls(STOP), 1, "{who:?}: sent once");
        assert_eq!(server(&p, "node1")["status"], "ERROR");
    }
    // The stop's answer lost: read back, never sent again.
    p.reset();
    p.set("drop?action=os-stop");
    let o = agent(f, &p, &["-o", "off", "-n", "node1"]);
    expect(&o, 0, "Success: Powered OFF", f);
    assert_eq!(p.calls(STOP), 1, "never re-sent");
    // An expired token: 401, one new token, the request again (both sides).
    for who in both() {
        p.reset();
        p.set("expire?after=1");
        // Upstream reads Nova's version first; ours reads the server once
        // for status, so its os-stop meets the refused token (a 401 carried
        // nothing out: sent again with the new one).
        let (act, line) = match who {
            Who::Upstream => ("status", "Status: ON"),
            Who::Fencekit => ("off", "Success: Powered OFF"),
        };
        let o = agent(who, &p, &["-o", act, "-n", &id_of(&p, "node1")]);
        expect(&o, 0, line, who);
        assert_eq!(p.calls("POST /auth/tokens"), 2, "{who:?}");
    }
    // Wrong credentials: upstream's line, both.
    for who in both() {
        let o = run_as(
            who,
            &args_as(&p, "fence", "wrong", &["-o", "status", "-n", "x"]),
            None,
        );
        expect(&o, 1, "Unauthorized", who);
    }
    // A reader may look, not act: 403.
    let o = run_as(
        f,
        &args_as(&p, "reader", "reader-secret", &["-o", "off", "-n", "node2"]),
        None,
    );
    expect(&o, 1, "403", f);
    assert_eq!(server(&p, "node2")["status"], "ACTIVE");
    // Unknown server: both fail.
    for who in both() {
        let id = "00000000-0000-4000-8000-00000000dead";
        expect(
            &agent(who, &p, &["-o", "status", "-n", id]),
            1,
            "Failed",
            who,
        );
    }
    // 429: upstream fails at Keystone's discovery (HTTP 429); ours waits
    // it out within the deadline (docs/hypervisors.md).
    for who in both() {
        p.reset();
        p.set("throttle?count=2&retry_after=1");
        let o = agent(who, &p, &["-o", "status", "-n", "node1"]);
        match who {
            Who::Upstream => expect(&o, 1, "HTTP 429", who),
            Who::Fencekit => expect(&o, 0, "Status: ON", who),
        }
    }
    // An API that never answers: both bounded, both fail.
    for who in both() {
        p.reset();
        p.set("hang?count=10");
        let t = Instant::now();
        let o = agent(
            who,
            &p,
            &[
                "-o",
                "status",
                "-n",
                "node1",
                "--apitimeout",
                "3",
                "--power-timeout",
                "5",
            ],
        );
        assert_eq!(o.code, Some(1), "{who:?}: {}", o.stderr);
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{who:?}: {:?}",
            t.elapsed()
        );
    }
    // The UUID pin: the server's UUID is the guest's SMBIOS UUID.
    p.reset();
    let id = id_of(&p, "node1");
    expect(
        &agent(
            f,
            &p,
            &["-o", "status", "-n", "node1", "--expect-uuid", &id],
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
            "node1",
            "--expect-uuid",
            "00000000-0000-4000-8000-000000000001",
        ],
    );
    expect(&o, 1, "different machine", f);
    assert_eq!(p.calls(STOP), 0);
}

#[test]
fn list_monitor_far_argv_pacemaker_stdin_clouds_and_native() {
    let Some(p) = peer() else { return };
    for who in both() {
        let o = agent(who, &p, &["-o", "list"]);
        expect(&o, 0, "node1", who);
        assert_eq!(o.stdout.lines().count(), 15, "{who:?}: {}", o.stdout);
        expect(&agent(who, &p, &["-o", "monitor"]), 0, "", who);
    }
    // Ours pages (limit + marker) and monitor never lists.
    p.set("max_limit?n=4");
    let f = Who::Fencekit;
    let o = agent(f, &p, &["-o", "list"]);
    assert_eq!(o.stdout.lines().count(), 15, "{}", o.stdout);
    let before = p.calls("GET /servers/detail");
    expect(&agent(f, &p, &["-o", "monitor"]), 0, "", f);
    assert_eq!(p.calls("GET /servers/detail"), before);
    p.reset();
    let port = p.port.to_string();
    let id = id_of(&p, "node1");
    let dir = tempfile::tempdir().unwrap();
    let clouds = dir.path().join("clouds.yaml");
    std::fs::write(
        &clouds,
        format!(
            "clouds:\n  peer:\n    auth:\n      auth_url: https://{}:{port}/identity/v3\n      \
             username: fence\n      password: {PASSWORD}\n      project_name: fencing\n      \
             user_domain_name: Default\n      project_domain_name: Default\n    cacert: {}\n  \
             ac:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: \
             https://{}:{port}/identity/v3\n      application_credential_id: ac-fence\n      \
             application_credential_secret: ac-secret\n    cacert: {}\n",
            p.host,
            p.cert.display(),
            p.host,
            p.cert.display()
        ),
    )
    .unwrap();
    for who in both() {
        p.reset();
        let far: Vec<String> = vec![
            format!("--password={PASSWORD}"),
            "--ssl-insecure".into(),
            "--project-name=fencing".into(),
            "--action=reboot".into(),
            format!("--plug={id}"),
            format!("--auth-url=https://{}:{port}/identity/v3", p.host),
            "--username=fence".into(),
        ];
        expect(&run_as(who, &far, None), 0, "Success: Rebooted", who);
        let stdin = format!(
            "action=off\nauth_url=https://{}:{port}/identity/v3\nlogin=fence\npasswd={PASSWORD}\n\
             project_name=fencing\nssl_insecure=1\nport={}\n",
            p.host,
            id_of(&p, "node3")
        );
        expect(
            &run_as(who, &[], Some(&stdin)),
            0,
            "Success: Already OFF",
            who,
        );
    }
    // clouds.yaml (its cacert honoured) and an application credential: ours.
    let with_cloud = |cloud: &str, action: &str| {
        let mut c = Command::new(ours());
        c.args(["--cloud", cloud, "-n", "node1", "-o", action])
            .env("OS_CLIENT_CONFIG_FILE", &clouds)
            .env("FENCEKIT_LOCK_SCOPE", support::lock_scope());
        support::run(c, Duration::from_secs(30))
    };
    let r = with_cloud("peer", "status");
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let r = with_cloud("ac", "status");
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(p.calls("auth application_credential") >= 1);
    // Native: openstack://CLOUD/SERVER, verified TLS, verify is bmc-only.
    let run = |args: &[&str], ca: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fencekit"));
        c.args(args)
            .env(
                "OS_CLIENT_CONFIG_FILE",
                if ca {
                    clouds.clone()
                } else {
                    PathBuf::from("/nonexistent")
                },
            )
            .env("FENCEKIT_LOCK_SCOPE", support::lock_scope());
        support::run(c, Duration::from_secs(30))
    };
    let r = run(
        &["status", "openstack://peer/node1", "--output", "json"],
        true,
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{}", r.stderr));
    assert_eq!(v["results"][0]["state"], "on", "{}", r.stdout);
    let r = run(
        &["verify", "openstack://peer/node1", "--expect", "on"],
        true,
    );
    assert_eq!(
        r.code,
        Some(3),
        "alone, Nova is bmc-only: {}{}",
        r.stdout,
        r.stderr
    );
    // check --record keeps the server's UUID (its SMBIOS UUID) and a
    // second check against the same record finds no drift.
    let rec = tempfile::tempdir().unwrap();
    let base = rec.path().join("baseline.toml");
    let base_s = base.to_str().unwrap();
    let r = run(
        &[
            "check",
            "openstack://peer/node1",
            "--baseline",
            base_s,
            "--record",
        ],
        true,
    );
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let kept = std::fs::read_to_string(&base).unwrap();
    assert!(kept.contains(&id_of(&p, "node1")), "{kept}");
    let r = run(
        &["check", "openstack://peer/node1", "--baseline", base_s],
        true,
    );
    assert_eq!(r.code, Some(0), "no drift: {}{}", r.stdout, r.stderr);
    let r = run(&["off", "openstack://peer/paused"], true);
    assert_eq!(r.code, Some(1), "paused is never off: {}", r.stderr);
    let r = run(&["status", "openstack://peer/node1"], false);
    assert_eq!(r.code, Some(1), "no cloud: {}", r.stderr);
    // Flags instead of a cloud; an unknown certificate is refused.
    let url = format!("https://{}:{port}/identity/v3", p.host);
    let mut c = Command::new(env!("CARGO_BIN_EXE_fencekit"));
    c.args([
        "status",
        "openstack://flags/node1",
        "--os-auth-url",
        &url,
        "--os-project-name",
        "fencing",
        "--username",
        "fence",
    ])
    .env("FENCEKIT_PASSWORD", PASSWORD)
    .env("FENCEKIT_LOCK_SCOPE", support::lock_scope());
    let r = support::run(c, Duration::from_secs(30));
    assert_eq!(
        r.code,
        Some(1),
        "an unknown certificate is refused: {}",
        r.stderr
    );
}
