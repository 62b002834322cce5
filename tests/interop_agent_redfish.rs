//! Side by side: upstream `/usr/sbin/fence_redfish` (fence-agents 4.12.1)
//! and ours (a symlink named `fence_redfish` to the fencekit binary) run
//! with the same arguments against the same sushy-tools emulator (HTTPS,
//! self-signed certificate, admin/fencepass). For every case both start
//! from the same power state; stdout, exit code and the emulator's resulting
//! PowerState are compared.
//!
//! Where fencekit deliberately differs, the case says so and why:
//! * `diag`: sushy answers the Nmi reset with HTTP 501. Upstream never
//!   checks HTTP status codes and prints `Success: Rebooted`; fencekit
//!   reports the refusal (exit 1), since nothing was done.
//! * `list`: upstream prints a notice; fencekit lists the systems behind the
//!   service (their paths are what `--systems-uri` takes).
//! * several systems and no `--systems-uri`: upstream silently acts on the
//!   last member; fencekit refuses (exit 1) and names the systems, because
//!   fencing an arbitrary machine is worse than not fencing.
//!
//! Needs sushy-tools (tests/peers/setup.sh), curl, openssl and upstream's
//! agent; a missing one skips (or fails under `FENCEKIT_REQUIRE_PEERS=1`).
//! Only 127.0.0.1; every emulator is stopped by its PID on drop.

mod support;

use support::AgentOut as Out;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{free_port, peer_scripts, which};

const UPSTREAM: &str = "/usr/sbin/fence_redfish";
const USER: &str = "admin";
const PASS: &str = "fencepass";
const LIMIT: Duration = Duration::from_secs(60);

use support::skip;

fn peers_ready() -> bool {
    if !Path::new(UPSTREAM).exists() {
        skip("upstream fence_redfish not installed (Debian package fence-agents)");
        return false;
    }
    if !support::venv_tool("sushy-emulator") {
        return false;
    }
    for tool in ["curl", "openssl"] {
        if which(tool).is_none() {
            skip(&format!("no `{tool}` in PATH"));
            return false;
        }
    }
    true
}

/// A directory with `fence_redfish` → the fencekit binary (made once).
fn ours() -> &'static PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-interop-redfish")
            .tempdir()
            .unwrap()
            .keep();
        let link = dir.join("fence_redfish");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link).unwrap();
        link
    })
}

/// One sushy-tools emulator over TLS, stopped (by its PID) on drop.
struct Sushy {
    port: u16,
}

impl Sushy {
    fn start(systems: u32) -> Sushy {
        let port = free_port();
        let mut cmd = Command::new("bash");
        cmd.arg(peer_scripts().join("sushy_start.sh"))
            .arg(port.to_string())
            .arg("on")
            .env("SUSHY_SYSTEMS", systems.to_string())
            .env("SUSHY_POWER", "On");
        let r = support::run(cmd, LIMIT);
        assert_eq!(r.code, Some(0), "sushy_start.sh failed: {r}");
        Sushy { port }
    }

    fn system_uri(&self, i: u32) -> String {
        format!("/redfish/v1/Systems/00000000-0000-4000-8000-{i:012}")
    }

    fn curl(&self, extra: &[&str], path: &str) -> String {
        let mut cmd = Command::new("curl");
        cmd.args(["-sk", "-u", &format!("{USER}:{PASS}")])
            .args(extra)
            .arg(format!("https://127.0.0.1:{}{path}", self.port));
        support::run(cmd, LIMIT).stdout
    }

    /// PowerState of system `i` ("On" / "Off").
    fn power(&self, i: u32) -> String {
        let v: Value = serde_json::from_str(&self.curl(&[], &self.system_uri(i)))
            .expect("the emulator answers JSON");
        v["PowerState"].as_str().unwrap_or("?").to_string()
    }

    /// Sets system `i` on or off behind the agents' backs (and waits to see it).
    fn set_power(&self, i: u32, on: bool) {
        if (self.power(i) == "On") == on {
            return;
        }
        let body = format!(
            "{{\"ResetType\": \"{}\"}}",
            if on { "On" } else { "ForceOff" }
        );
        self.curl(
            &[
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "-d",
                &body,
            ],
            &format!("{}/Actions/ComputerSystem.Reset", self.system_uri(i)),
        );
        let want = if on { "On" } else { "Off" };
        assert!(
            support::eventually(Duration::from_secs(10), || self.power(i) == want),
            "system {i} did not turn {want}"
        );
    }
}

impl Drop for Sushy {
    fn drop(&mut self) {
        let mut cmd = Command::new("bash");
        cmd.arg(peer_scripts().join("sushy_stop.sh"))
            .arg(self.port.to_string());
        let _ = support::run(cmd, Duration::from_secs(15));
    }
}

/// Runs `prog ARGS` with `stdin` (closed when `None`), cwd `/`, in its own
/// process group, killed at the time limit.
fn exec(prog: &Path, args: &[String], stdin: Option<&str>) -> Out {
    support::exec_agent(prog, args, stdin, LIMIT)
}

/// Both agents on the same case, each from the same starting power state
/// of system 1; returns (upstream, ours, power after upstream, power after ours).
struct Pair {
    up: Out,
    us: Out,
    up_power: String,
    us_power: String,
}

impl Pair {
    fn same(&self, what: &str) -> &Self {
        assert_eq!(
            (self.up.code, self.up.stdout.as_str(), self.up_power.as_str()),
            (self.us.code, self.us.stdout.as_str(), self.us_power.as_str()),
            "{what}: upstream (left) and ours (right) differ\n--- upstream stderr:\n{}\n--- our stderr:\n{}",
            self.up.stderr,
            self.us.stderr
        );
        self
    }
}

fn side_by_side(s: &Sushy, start_on: bool, args: &[String], stdin: Option<&str>) -> Pair {
    s.set_power(1, start_on);
    let up = exec(Path::new(UPSTREAM), args, stdin);
    let up_power = s.power(1);
    s.set_power(1, start_on);
    let us = exec(ours(), args, stdin);
    let us_power = s.power(1);
    Pair {
        up,
        us,
        up_power,
        us_power,
    }
}

fn args(s: &Sushy, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "-a",
        "127.0.0.1",
        "-u",
        &s.port.to_string(),
        "-l",
        USER,
        "-p",
        PASS,
        "--ssl-insecure",
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    v.extend(extra.iter().map(|x| x.to_string()));
    v
}

#[test]
fn actions_match_upstream_with_and_without_systems_uri() {
    if !peers_ready() {
        return;
    }
    let s = Sushy::start(1);
    let sys = format!("--systems-uri={}", s.system_uri(1));
    let mut status_walls = Vec::new();
    for extra in [vec![], vec![sys.as_str()]] {
        let a = |more: &[&str]| {
            let all: Vec<&str> = extra.iter().copied().chain(more.iter().copied()).collect();
            args(&s, &all)
        };
        let p = side_by_side(&s, true, &a(&["-o", "status"]), None);
        p.same("status of an ON system");
        assert_eq!((p.us.code, p.us.stdout.as_str()), (Some(0), "Status: ON\n"));
        status_walls.push((p.up.took, p.us.took));
        let p = side_by_side(&s, false, &a(&["-o", "status"]), None);
        p.same("status of an OFF system");
        assert_eq!(
            (p.us.code, p.us.stdout.as_str()),
            (Some(2), "Status: OFF\n")
        );
        side_by_side(&s, true, &a(&["-o", "off"]), None).same("off of an ON system");
        let p = side_by_side(&s, false, &a(&["-o", "off"]), None);
        p.same("off of an OFF system");
        assert_eq!(p.us.stdout, "Success: Already OFF\n");
        let p = side_by_side(&s, false, &a(&["-o", "on"]), None);
        p.same("on of an OFF system");
        assert_eq!(
            (p.us.stdout.as_str(), p.us_power.as_str()),
            ("Success: Powered ON\n", "On")
        );
        let p = side_by_side(&s, true, &a(&["-o", "reboot"]), None);
        p.same("reboot of an ON system");
        assert_eq!(
            (p.us.stdout.as_str(), p.us_power.as_str()),
            ("Success: Rebooted\n", "On")
        );
        side_by_side(&s, false, &a(&["-o", "reboot"]), None).same("reboot of an OFF system");
        side_by_side(&s, true, &a(&["-o", "monitor"]), None).same("monitor");
    }
    // `--ip host:port` (upstream's backwards compatibility) and stdin with
    // deprecated keys, a comment, nodename/plug (ignored) and ssl_insecure=0
    // (which turns insecure mode ON, upstream's presence rule, reproduced).
    let hp = vec![
        format!("--ip=127.0.0.1:{}", s.port),
        format!("--username={USER}"),
        format!("--password={PASS}"),
        "--ssl-insecure".to_string(),
        "--action=status".to_string(),
    ];
    side_by_side(&s, true, &hp, None).same("--ip host:port");
    let stdin = format!(
        "# pacemaker\naction=off\nipaddr=127.0.0.1\nipport={}\nlogin={USER}\npasswd={PASS}\n\
         ssl_insecure=0\nnodename=node1\nplug=node1\n",
        s.port
    );
    let p = side_by_side(&s, true, &[], Some(&stdin));
    p.same("stdin off");
    assert_eq!(p.us_power, "Off");
    for (up, us) in status_walls {
        eprintln!("fence_redfish status wall time: upstream {up:?}, fencekit {us:?}");
    }
}

#[test]
fn failures_match_upstream() {
    if !peers_ready() {
        return;
    }
    let s = Sushy::start(1);
    // Wrong password: sushy answers 401; both fail, nothing changes.
    let mut a = args(&s, &["-o", "off"]);
    let pw = a.iter().position(|x| x == PASS).unwrap();
    a[pw] = "Wr0ng-pass".into();
    let p = side_by_side(&s, true, &a, None);
    p.same("wrong password");
    assert_eq!((p.us.code, p.us_power.as_str()), (Some(1), "On"));
    assert!(!p.us.stderr.contains("Wr0ng-pass"), "{}", p.us.stderr);
    // Nothing listening.
    let dead = free_port().to_string();
    let mut a = args(&s, &["-o", "status"]);
    let port = a.iter().position(|x| *x == s.port.to_string()).unwrap();
    a[port] = dead;
    side_by_side(&s, true, &a, None).same("unreachable port");
    // Self-signed certificate without --ssl-insecure (and with --ssl): refused by both.
    for flag in [None, Some("--ssl"), Some("--ssl-secure")] {
        let mut a: Vec<String> = args(&s, &["-o", "off"])
            .into_iter()
            .filter(|x| x != "--ssl-insecure")
            .collect();
        a.extend(flag.map(str::to_string));
        let p = side_by_side(&s, true, &a, None);
        p.same("certificate not trusted");
        assert_eq!(p.us.code, Some(1));
    }
    // Option errors: `-m` (no reboot method upstream), `-n` without --port-as-ip,
    // a flag with a value, missing credentials, an unknown action.
    for extra in [
        &["-o", "reboot", "-m", "cycle"][..],
        &["-o", "status", "-n", "node1"],
        &["-o", "status", "--ssl-insecure=1"],
        &["-o", "bogus"],
        &["-o", "validate-all", "--power-timeout=x"],
    ] {
        side_by_side(&s, true, &args(&s, extra), None).same(&format!("{extra:?}"));
    }
    for a in [
        vec!["-a", "127.0.0.1", "-p", PASS, "-o", "status"],
        vec!["-a", "127.0.0.1", "-l", USER, "-o", "status"],
        vec![
            "-a",
            "127.0.0.1",
            "-l",
            USER,
            "-p",
            PASS,
            "-o",
            "validate-all",
        ],
    ] {
        let a: Vec<String> = a.iter().map(|x| x.to_string()).collect();
        side_by_side(&s, true, &a, None).same(&format!("{a:?}"));
    }
}

#[test]
fn far_style_calls_match_upstream() {
    if !peers_ready() {
        return;
    }
    let s = Sushy::start(1);
    let p = s.port.to_string();
    // The template's status check: separate tokens.
    let check: Vec<String> = [
        "--action",
        "status",
        "--ip",
        "127.0.0.1",
        "--ipport",
        &p,
        "--username",
        USER,
        "--password",
        PASS,
        "--ssl-insecure",
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    let r = side_by_side(&s, true, &check, None);
    r.same("FAR template status check");
    assert_eq!((r.us.code, r.us.stdout.as_str()), (Some(0), "Status: ON\n"));
    // The fencing call: --k=v and a bare flag, in two orders.
    let sys = format!("--systems-uri={}", s.system_uri(1));
    let orders: [Vec<String>; 2] = [
        vec![
            format!("--ipport={p}"),
            "--ssl-insecure".into(),
            format!("--password={PASS}"),
            "--action=reboot".into(),
            sys.clone(),
            "--ip=127.0.0.1".into(),
            format!("--username={USER}"),
        ],
        vec![
            format!("--username={USER}"),
            "--action=off".into(),
            "--ip=127.0.0.1".into(),
            format!("--password={PASS}"),
            format!("--ipport={p}"),
            "--ssl-insecure".into(),
        ],
    ];
    for o in &orders {
        side_by_side(&s, true, o, None).same(&format!("FAR {o:?}"));
    }
}

#[test]
fn deliberate_differences_from_upstream() {
    if !peers_ready() {
        return;
    }
    let s = Sushy::start(1);
    // diag: sushy refuses Nmi with 501. Upstream ignores the answer and
    // reports success; fencekit reports the refusal.
    let p = side_by_side(&s, true, &args(&s, &["-o", "diag"]), None);
    assert_eq!(
        (p.up.code, p.up.stdout.as_str()),
        (Some(0), "Success: Rebooted\n")
    );
    assert_eq!((p.us.code, p.us.stdout.as_str()), (Some(1), ""));
    assert!(p.us.stderr.contains("501"), "{}", p.us.stderr);
    assert_eq!((p.up_power.as_str(), p.us_power.as_str()), ("On", "On"));
    // list: upstream's notice; fencekit lists the systems.
    for (action, suffix) in [("list", ",node1\n"), ("list-status", ",node1,on\n")] {
        let p = side_by_side(&s, true, &args(&s, &["-o", action]), None);
        assert_eq!(
            (p.up.code, p.up.stdout.as_str()),
            (
                Some(0),
                "NOTICE: List option is not working on this device yet\n"
            )
        );
        assert_eq!(p.us.code, Some(0), "{}", p.us.stderr);
        assert_eq!(p.us.stdout, format!("{}{suffix}", s.system_uri(1)));
    }
}

#[test]
fn several_systems_need_systems_uri_unlike_upstream() {
    if !peers_ready() {
        return;
    }
    let s = Sushy::start(2);
    // Upstream fences the last member it is shown (node2); fencekit refuses
    // and names both systems.
    s.set_power(2, true);
    let up = exec(Path::new(UPSTREAM), &args(&s, &["-o", "off"]), None);
    assert_eq!(
        (up.code, up.stdout.as_str()),
        (Some(0), "Success: Powered OFF\n")
    );
    assert_eq!((s.power(1).as_str(), s.power(2).as_str()), ("On", "Off"));
    s.set_power(2, true);
    let us = exec(ours(), &args(&s, &["-o", "off"]), None);
    assert_eq!((us.code, us.stdout.as_str()), (Some(1), ""));
    assert!(
        us.stderr.contains(&s.system_uri(1)) && us.stderr.contains(&s.system_uri(2)),
        "{}",
        us.stderr
    );
    assert_eq!((s.power(1).as_str(), s.power(2).as_str()), ("On", "On"));
    // With --systems-uri both act on the named system only.
    let sys = format!("--systems-uri={}", s.system_uri(1));
    let p = side_by_side(&s, true, &args(&s, &[&sys, "-o", "off"]), None);
    p.same("off with --systems-uri among two systems");
    assert_eq!(s.power(2), "On");
    let p = side_by_side(&s, true, &args(&s, &[&sys, "-o", "status"]), None);
    p.same("status with --systems-uri among two systems");
    // list-status shows both (upstream: the notice).
    let us = exec(ours(), &args(&s, &["-o", "list-status"]), None);
    assert_eq!(
        us.stdout,
        format!(
            "{},node1,on\n{},node2,on\n",
            s.system_uri(1),
            s.system_uri(2)
        )
    );
}
