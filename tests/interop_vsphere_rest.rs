//! `fence_vmware_rest`: fencekit and upstream (fence-agents 4.12.1, pycurl)
//! side by side against the same vSphere Automation API server,
//! tests/peers/vsphere_rest.py (HTTPS, sessions, `/rest` and `/api`, the
//! name filter, power, 401/403/404, slow and unanswered power operations).
//!
//! Each test asserts what both agents do. Where they differ, fencekit's
//! answer is the documented, safer one (docs/vsphere-rest.md, "fence_vmware_rest
//! differences"): a SUSPENDED VM is on and off powers it off; a name two VMs
//! share is refused (upstream fences the first); a power operation slower
//! than upstream's 5 s request timeout is waited for; a power request whose
//! answer was lost is never sent again. Upstream has no `/api`: those cases
//! assert fencekit only (and that upstream cannot log in there).

mod support;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::hv::{self, DropIn, Who};
use support::AgentOut;

const USER: &str = "fence";
const PASSWORD: &str = "rest-secret";

/// One REST peer, stopped on drop (by its PID).
struct Peer {
    port: u16,
    cert: PathBuf,
}

impl Peer {
    /// Starts a peer with `bulk` extra VMs; `None` (after a SKIP line) when
    /// python3, openssl or curl is missing.
    fn start_with(bulk: u32) -> Option<Peer> {
        if !["python3", "openssl", "curl"]
            .iter()
            .all(|p| support::peer_available(p))
        {
            return None;
        }
        let port = support::free_port();
        // One certificate for every peer of this process (making a key
        // per peer costs seconds on a loaded machine).
        let dir = support::peers_dir().join(format!("run/vsrest-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["cert.pem", "key.pem"] {
            std::fs::copy(shared_cert().join(f), dir.join(f)).unwrap();
        }
        let out = support::peer_start(
            "vsphere_rest_start.sh",
            &[&port.to_string()],
            &[("VSREST_BULK", &bulk.to_string())],
        );
        let info: Value = serde_json::from_slice(&out).expect("the peer's JSON line");
        Some(Peer {
            port,
            cert: PathBuf::from(info["cert"].as_str().unwrap()),
        })
    }

    fn start() -> Option<Peer> {
        Self::start_with(0)
    }

    fn control(&self, method: &str, path: &str) -> Value {
        let out = Command::new("curl")
            .args(["-s", "--max-time", "10", "--cacert"])
            .arg(&self.cert)
            .args(["-X", method])
            .arg(format!("https://127.0.0.1:{}/fencekit/{path}", self.port))
            .output()
            .expect("curl");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("control {path}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn reset(&self) {
        self.control("POST", "reset");
    }

    /// The power state of the VM with id or (unique) name `vm`.
    fn state(&self, vm: &str) -> String {
        let vms = self.control("GET", "vms");
        let hits: Vec<&Value> = vms
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["vm"] == vm || v["name"] == vm)
            .collect();
        assert_eq!(hits.len(), 1, "{vm} in {vms}");
        hits[0]["power_state"].as_str().unwrap().to_string()
    }

    /// Requests served of `shape` (`POST /rest/vcenter/vm/{vm}/power/stop`).
    fn calls(&self, shape: &str) -> u64 {
        self.control("GET", "calls")[shape].as_u64().unwrap_or(0)
    }

    fn sessions(&self) -> (Vec<String>, Vec<String>) {
        let s = self.control("GET", "sessions");
        let list = |k: &str| {
            s[k].as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        };
        (list("issued"), list("open"))
    }

    /// `--power-wait 0 --ip --ipport --ssl-insecure -l -p`, as both
    /// agents take them (no pause after a power request: it answers when done).
    fn args(&self) -> Vec<String> {
        [
            "--power-wait",
            "0",
            "--ip",
            "127.0.0.1",
            "--ipport",
            &self.port.to_string(),
            "--ssl-insecure",
            "-l",
            USER,
            "-p",
            PASSWORD,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(support::peer_scripts().join("vsphere_rest_stop.sh"))
            .arg(self.port.to_string())
            .env("PEERS_DIR", support::peers_dir())
            .output();
    }
}

/// A certificate and key for 127.0.0.1, made once per test process.
fn shared_cert() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-vsrest-cert")
            .tempdir()
            .unwrap()
            .keep();
        let out = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30",
            ])
            .arg("-keyout")
            .arg(dir.join("key.pem"))
            .arg("-out")
            .arg(dir.join("cert.pem"))
            .args([
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-addext",
                "basicConstraints=critical,CA:FALSE",
                "-addext",
                "extendedKeyUsage=serverAuth",
            ])
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

const STOP: &str = "POST /rest/vcenter/vm/{vm}/power/stop";
const START: &str = "POST /rest/vcenter/vm/{vm}/power/start";

const AGENT: DropIn = DropIn {
    name: "fence_vmware_rest",
    upstream: hv::pycurl_upstream,
};

fn has_upstream() -> bool {
    hv::pycurl_upstream(AGENT.name).is_some()
}

fn both() -> Vec<Who> {
    AGENT.both()
}

fn run_as(who: Who, args: &[String], stdin: Option<&str>, limit: Duration) -> AgentOut {
    AGENT.run(who, args, stdin, limit)
}

/// `who` with the peer's connection options and `extra`.
fn agent(who: Who, peer: &Peer, extra: &[&str]) -> AgentOut {
    let mut a = peer.args();
    a.extend(extra.iter().map(|s| s.to_string()));
    run_as(who, &a, None, Duration::from_secs(40))
}

#[track_caller]
fn expect(o: &AgentOut, code: i32, needle: &str, who: Who) {
    hv::expect_out(o, code, needle, who, &[PASSWORD]);
}

#[test]
fn status_in_every_power_state_side_by_side() {
    let Some(peer) = Peer::start() else { return };
    for who in both() {
        expect(
            &agent(who, &peer, &["-o", "status", "-n", "node1"]),
            0,
            "Status: ON",
            who,
        );
        expect(
            &agent(who, &peer, &["-o", "status", "-n", "node3"]),
            2,
            "Status: OFF",
            who,
        );
        // SUSPENDED: upstream says OFF (exit 2); fencekit ON, since the VM
        // can resume and write again.
        let o = agent(who, &peer, &["-o", "status", "-n", "node4"]);
        match who {
            Who::Upstream => expect(&o, 2, "Status: OFF", who),
            Who::Fencekit => expect(&o, 0, "Status: ON", who),
        }
    }
    // The newer API (fencekit only: upstream has no /api).
    for (vm, code, line) in [
        ("node1", 0, "Status: ON"),
        ("node3", 2, "Status: OFF"),
        ("node4", 0, "Status: ON"),
    ] {
        let o = agent(
            Who::Fencekit,
            &peer,
            &["-o", "status", "-n", vm, "--api-path", "/api"],
        );
        expect(&o, code, line, Who::Fencekit);
    }
    assert!(peer.calls("GET /api/vcenter/vm/{vm}/power") >= 3);
}

#[test]
fn off_on_reboot_and_already_side_by_side() {
    let Some(peer) = Peer::start() else { return };
    for who in both() {
        peer.reset();
        expect(
            &agent(who, &peer, &["-o", "off", "-n", "node1"]),
            0,
            "Success: Powered OFF",
            who,
        );
        assert_eq!(peer.state("node1"), "POWERED_OFF", "{who:?}");
        expect(
            &agent(who, &peer, &["-o", "off", "-n", "node1"]),
            0,
            "Success: Already OFF",
            who,
        );
        assert_eq!(peer.calls(STOP), 1, "{who:?}: already off sends no stop");
        expect(
            &agent(who, &peer, &["-o", "on", "-n", "node1"]),
            0,
            "Success: Powered ON",
            who,
        );
        assert_eq!(peer.state("node1"), "POWERED_ON", "{who:?}");
        expect(
            &agent(who, &peer, &["-o", "on", "-n", "node1"]),
            0,
            "Success: Already ON",
            who,
        );
        assert_eq!(peer.calls(START), 1, "{who:?}: already on sends no start");
        expect(
            &agent(who, &peer, &["-o", "reboot", "-n", "node2"]),
            0,
            "Success: Rebooted",
            who,
        );
        assert_eq!(peer.state("node2"), "POWERED_ON", "{who:?}");
        assert_eq!(
            (peer.calls(STOP), peer.calls(START)),
            (2, 2),
            "{who:?}: reboot is stop + start"
        );
    }
    // The same through /api (fencekit only).
    peer.reset();
    let api = |extra: &[&str]| {
        let mut e = vec!["--api-path", "/api"];
        e.extend(extra);
        agent(Who::Fencekit, &peer, &e)
    };
    expect(
        &api(&["-o", "off", "-n", "node1"]),
        0,
        "Success: Powered OFF",
        Who::Fencekit,
    );
    expect(
        &api(&["-o", "off", "-n", "node1"]),
        0,
        "Success: Already OFF",
        Who::Fencekit,
    );
    expect(
        &api(&["-o", "reboot", "-n", "node1"]),
        0,
        "Success: Rebooted",
        Who::Fencekit,
    );
    assert_eq!(peer.state("node1"), "POWERED_ON");
    // stop, then the reboot's start (the VM was off already).
    assert_eq!(peer.calls("POST /api/vcenter/vm/{vm}/power"), 2);
}

#[test]
fn a_suspended_vm_is_powered_off_by_fencekit_and_left_by_upstream() {
    let Some(peer) = Peer::start() else { return };
    for who in both() {
        peer.reset();
        assert_eq!(peer.state("node4"), "SUSPENDED");
        let o = agent(who, &peer, &["-o", "off", "-n", "node4"]);
        match who {
            Who::Upstream => {
                // Nothing sent: the VM stays suspended and can resume.
                expect(&o, 0, "Success: Already OFF", who);
                assert_eq!(peer.state("node4"), "SUSPENDED");
                assert_eq!(peer.calls(STOP), 0);
            }
            Who::Fencekit => {
                expect(&o, 0, "Success: Powered OFF", who);
                assert_eq!(peer.state("node4"), "POWERED_OFF");
                assert_eq!(peer.calls(STOP), 1);
            }
        }
    }
}

#[test]
fn unknown_and_ambiguous_names_side_by_side() {
    let Some(peer) = Peer::start() else { return };
    for who in both() {
        peer.reset();
        let o = agent(who, &peer, &["-o", "off", "-n", "no-such-vm"]);
        expect(
            &o,
            1,
            "Unable to obtain correct plug status or plug is not available",
            who,
        );
        let o = agent(who, &peer, &["-o", "off", "-n", "twin"]);
        match who {
            Who::Upstream => {
                // The first of the two is powered off, without a word.
                expect(&o, 0, "Success: Powered OFF", who);
                assert_eq!(peer.state("vm-105"), "POWERED_OFF");
                assert_eq!(peer.state("vm-106"), "POWERED_ON");
            }
            Who::Fencekit => {
                expect(&o, 1, "2 VMs are named 'twin': vm-105", who);
                assert!(o.stderr.contains("vm-106"), "{}", o.stderr);
                assert_eq!(peer.calls(STOP), 0, "nothing powered");
                // The identifier names one of them.
                let o = agent(who, &peer, &["-o", "off", "-n", "vm-106"]);
                expect(&o, 0, "Success: Powered OFF", who);
                assert_eq!(peer.state("vm-106"), "POWERED_OFF");
                assert_eq!(peer.state("vm-105"), "POWERED_ON");
            }
        }
    }
    // Refusals and errors still delete the session.
    let (issued, open) = peer.sessions();
    assert!(!issued.is_empty());
    assert!(open.is_empty(), "sessions left open: {open:?}");
}

#[test]
fn wrong_password_and_missing_permission_side_by_side() {
    let Some(peer) = Peer::start() else { return };
    let with_creds = |user: &str, pw: &str| {
        let mut a = peer.args();
        let (l, p) = (a.len() - 3, a.len() - 1);
        a[l] = user.into();
        a[p] = pw.into();
        a
    };
    for who in both() {
        // No password at all: a usage error before anything is sent.
        let mut a = peer.args();
        a.truncate(a.len() - 2);
        a.extend(["-o", "status", "-n", "node1"].map(String::from));
        let o = run_as(who, &a, None, Duration::from_secs(30));
        expect(&o, 1, "You have to enter password or password script", who);
        let mut a = with_creds(USER, "wrong-password");
        a.extend(["-o", "status", "-n", "node1"].map(String::from));
        let o = run_as(who, &a, None, Duration::from_secs(30));
        let text = format!("{}{}", o.stdout, o.stderr);
        assert_eq!(o.code, Some(1), "{who:?}: {text}");
        assert!(!text.contains("wrong-password"), "{who:?}: {text}");
        // Both print upstream's line first (agents/vmware_rest.toml,
        // login_refused); fencekit's cause names the user and the 401.
        assert_eq!(
            support::error_lines(&o.stderr).first().copied(),
            Some("Unable to connect/login to fencing device"),
            "{who:?}: {text}"
        );
        if who == Who::Fencekit {
            assert!(
                text.contains("refused the user name 'fence' or its password")
                    && text.contains("401"),
                "{text}"
            );
        }
        // A read-only user: status works, off is refused (403), nothing changes.
        let mut a = with_creds("viewer", "viewer-secret");
        a.extend(["-o", "status", "-n", "node1"].map(String::from));
        expect(
            &run_as(who, &a, None, Duration::from_secs(30)),
            0,
            "Status: ON",
            who,
        );
        let mut a = with_creds("viewer", "viewer-secret");
        a.extend(["-o", "off", "-n", "node1"].map(String::from));
        let o = run_as(who, &a, None, Duration::from_secs(30));
        let text = format!("{}{}", o.stdout, o.stderr);
        assert_eq!(o.code, Some(1), "{who:?}: {text}");
        assert_eq!(peer.state("node1"), "POWERED_ON");
        assert!(!text.contains("viewer-secret"), "{text}");
        // Both print upstream's line first (agents/vmware_rest.toml,
        // privilege_refused).
        assert_eq!(
            support::error_lines(&o.stderr).first().copied(),
            Some("Failed: Unable to obtain correct plug status or plug is not available"),
            "{who:?}: {text}"
        );
        if who == Who::Fencekit {
            assert!(
                text.contains("may not power stop")
                    && text.contains("403")
                    && text.contains("VirtualMachine.Interact.PowerOff"),
                "{text}"
            );
        }
    }
}

/// A server that quotes the request's credentials back (issue 42's
/// defect: "you sent Authorization: Basic <base64 of user:password>") gets
/// none of them printed, in any encoding, at any verbosity.
#[test]
fn an_echoed_credential_is_never_printed() {
    use base64::Engine as _;
    let Some(peer) = Peer::start() else { return };
    peer.control("POST", "echo?on=1");
    let pw = "echoed-Pa55word";
    let mut a = peer.args();
    let p = a.len() - 1;
    a[p] = pw.into();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{pw}"));
    for verbose in [None, Some("-vvv")] {
        let mut a = a.clone();
        a.extend(["-o", "status", "-n", "node1"].map(String::from));
        a.extend(verbose.map(String::from));
        let o = run_as(Who::Fencekit, &a, None, Duration::from_secs(30));
        let text = format!("{}{}", o.stdout, o.stderr);
        assert_eq!(o.code, Some(1), "{text}");
        // The echo reached the message, with the credential taken out.
        assert!(
            text.contains("You sent Authorization: [redacted]"),
            "{text}"
        );
        for leak in [pw, basic.as_str(), &basic[..20]] {
            assert!(!text.contains(leak), "{verbose:?} leaks {leak}: {text}");
        }
    }
    peer.control("POST", "echo?on=0");
}

#[test]
fn list_and_monitor_side_by_side() {
    let Some(peer) = Peer::start() else { return };
    let mut lists = Vec::new();
    for who in both() {
        let o = agent(who, &peer, &["-o", "list"]);
        expect(&o, 0, "node1,\n", who);
        lists.push(o.stdout.clone());
        let o = agent(
            who,
            &peer,
            &["-o", "list", "--filter", "filter.names=node4"],
        );
        assert_eq!(
            (o.code, o.stdout.as_str()),
            (Some(0), "node4,\n"),
            "{who:?}: {}",
            o.stderr
        );
        expect(&agent(who, &peer, &["-o", "monitor"]), 0, "", who);
        let o = agent(who, &peer, &["-o", "list-status"]);
        let line = |name: &str| {
            o.stdout
                .lines()
                .find(|l| l.starts_with(&format!("{name},")))
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(line("node3"), "node3,,off", "{who:?}");
        match who {
            Who::Upstream => assert_eq!(line("node4"), "node4,,off"),
            // Suspended is on; a shared name's state is not one VM's.
            Who::Fencekit => {
                assert_eq!(line("node4"), "node4,,on");
                assert_eq!(line("twin"), "twin,,UNKNOWN");
            }
        }
    }
    // The same lines: one per name, the second column empty.
    assert_eq!(lists[0], "node1,\nnode2,\nnode3,\nnode4,\ntwin,\n");
    if lists.len() == 2 {
        assert_eq!(lists[0], lists[1]);
    }
    // The newer API lists the same (fencekit only).
    let o = agent(Who::Fencekit, &peer, &["-o", "list", "--api-path", "/api"]);
    assert_eq!(o.stdout, lists[0], "{}", o.stderr);
    // Every session either agent opened was deleted.
    let (issued, open) = peer.sessions();
    assert!(!issued.is_empty());
    assert!(open.is_empty(), "sessions left open: {open:?}");
}

#[test]
fn more_than_the_api_lists_at_once() {
    let Some(peer) = Peer::start_with(1000) else {
        return;
    };
    for who in both() {
        let o = agent(who, &peer, &["-o", "list"]);
        assert_eq!(o.code, Some(1), "{who:?}: {}{}", o.stdout, o.stderr);
        let text = o.stderr.to_lowercase();
        assert!(text.contains("filter"), "{who:?}: {}", o.stderr);
        // monitor passes: the API answered (as upstream).
        expect(&agent(who, &peer, &["-o", "monitor"]), 0, "", who);
        // A status reads one name: under the limit.
        expect(
            &agent(who, &peer, &["-o", "status", "-n", "node1"]),
            0,
            "Status: ON",
            who,
        );
        let o = agent(
            who,
            &peer,
            &[
                "-o",
                "list",
                "--filter",
                "filter.names=node1&filter.names=node2",
            ],
        );
        assert_eq!(
            (o.code, o.stdout.as_str()),
            (Some(0), "node1,\nnode2,\n"),
            "{who:?}"
        );
    }
}

#[test]
fn a_slow_power_operation_is_waited_for_by_fencekit() {
    let Some(peer) = Peer::start() else { return };
    // Both agents at once, each on its own VM: every stop takes 6.5 s.
    peer.control("POST", "slow?action=stop&delay_ms=6500&count=2");
    let t = Instant::now();
    let runs: Vec<(Who, &str, AgentOut, String)> = std::thread::scope(|s| {
        let jobs: Vec<_> = both()
            .into_iter()
            .map(|who| {
                let vm = if who == Who::Upstream {
                    "node1"
                } else {
                    "node2"
                };
                let peer = &peer;
                s.spawn(move || {
                    let o = agent(who, peer, &["-o", "off", "-n", vm]);
                    // What the VM reads the moment the agent is done.
                    let then = peer.state(vm);
                    (who, vm, o, then)
                })
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap()).collect()
    });
    for (who, vm, o, then) in &runs {
        match who {
            Who::Upstream => {
                // pycurl gives up after shell_timeout (5 s) while the stop
                // goes on; the VM goes off afterwards.
                expect(o, 1, "Unable to obtain correct plug status", *who);
                assert_eq!(then, "POWERED_ON", "upstream gave up before the stop ended");
                assert!(support::eventually(Duration::from_secs(5), || peer
                    .state(vm)
                    == "POWERED_OFF"));
            }
            Who::Fencekit => {
                expect(o, 0, "Success: Powered OFF", *who);
                assert!(o.took >= Duration::from_millis(6400), "{:?}", o.took);
                assert_eq!(then, "POWERED_OFF");
            }
        }
    }
    assert_eq!(peer.calls(STOP), runs.len() as u64, "one stop each");
    assert!(t.elapsed() < Duration::from_secs(30));
}

#[test]
fn an_unanswered_power_request_is_never_sent_again() {
    let Some(peer) = Peer::start() else { return };
    // Carried out, the answer lost: a read shows it took effect.
    peer.control("POST", "drop?action=stop");
    let o = agent(Who::Fencekit, &peer, &["-o", "off", "-n", "node1"]);
    expect(&o, 0, "Success: Powered OFF", Who::Fencekit);
    assert_eq!(peer.calls(STOP), 1);
    // Still under way when fencekit's bound (--power-timeout 2) ends: the
    // read shows it on, so the outcome is unknown; nothing is sent again.
    peer.control("POST", "slow?action=stop&delay_ms=3500");
    let o = agent(
        Who::Fencekit,
        &peer,
        &["-o", "off", "-n", "node2", "--power-timeout", "2"],
    );
    expect(
        &o,
        1,
        "Failed: Timed out waiting to power OFF",
        Who::Fencekit,
    );
    assert!(
        o.stderr.contains("was sent and not answered") && o.stderr.contains("never sent again"),
        "{}",
        o.stderr
    );
    assert!(support::eventually(Duration::from_secs(5), || peer
        .state("node2")
        == "POWERED_OFF"));
    assert_eq!(peer.calls(STOP), 2, "one stop per run");
    // Both sessions were deleted, and no output names a session id.
    let (issued, open) = peer.sessions();
    assert!(open.is_empty(), "{open:?}");
    let o = agent(
        Who::Fencekit,
        &peer,
        &["-o", "status", "-n", "node1", "-vvv"],
    );
    let (issued2, _) = peer.sessions();
    assert!(issued2.len() > issued.len());
    for id in &issued2 {
        assert!(
            !o.stderr.contains(id.as_str()),
            "session id printed:\n{}",
            o.stderr
        );
    }
    assert!(!o.stderr.contains(PASSWORD));
}

#[test]
fn pacemaker_stdin_and_far_argv_side_by_side() {
    let Some(peer) = Peer::start() else { return };
    for who in both() {
        peer.reset();
        let stdin = format!(
            "action=off\nip=127.0.0.1\nipport={}\nssl_insecure=1\nusername={USER}\npassword={PASSWORD}\nplug=node1\n",
            peer.port
        );
        let o = run_as(who, &[], Some(&stdin), Duration::from_secs(30));
        expect(&o, 0, "Success: Powered OFF", who);
        assert_eq!(peer.state("node1"), "POWERED_OFF");
        // FAR: --key=value in any order, and its status check's --key value.
        let far: Vec<String> = [
            "--plug=node1".to_string(),
            format!("--password={PASSWORD}"),
            "--action=reboot".into(),
            format!("--ipport={}", peer.port),
            "--ssl-insecure".into(),
            "--ip=127.0.0.1".into(),
            format!("--username={USER}"),
        ]
        .into();
        expect(
            &run_as(who, &far, None, Duration::from_secs(30)),
            0,
            "Success: Rebooted",
            who,
        );
        assert_eq!(peer.state("node1"), "POWERED_ON");
        let mut check = vec![
            "--action".to_string(),
            "status".into(),
            "--plug".into(),
            "node3".into(),
        ];
        check.extend(peer.args());
        expect(
            &run_as(who, &check, None, Duration::from_secs(30)),
            2,
            "Status: OFF",
            who,
        );
    }
}

#[test]
fn upstream_cannot_speak_api_and_fencekit_verifies_certificates() {
    let Some(peer) = Peer::start() else { return };
    if has_upstream() {
        let o = agent(
            Who::Upstream,
            &peer,
            &["-o", "status", "-n", "node1", "--api-path", "/api"],
        );
        expect(&o, 1, "Unable to connect/login", Who::Upstream);
    }
    // fencekit: the peer's certificate trusted through --ca-cert; without
    // any trust it is refused (the system store does not hold it).
    let base = [
        "--ip".to_string(),
        "127.0.0.1".into(),
        "--ipport".into(),
        peer.port.to_string(),
        "-l".into(),
        USER.into(),
        "-p".into(),
        PASSWORD.into(),
        "-o".into(),
        "status".into(),
        "-n".into(),
        "node1".into(),
    ];
    let mut a = base.to_vec();
    a.extend(["--ca-cert".to_string(), peer.cert.display().to_string()]);
    expect(
        &run_as(Who::Fencekit, &a, None, Duration::from_secs(30)),
        0,
        "Status: ON",
        Who::Fencekit,
    );
    let mut a = base.to_vec();
    a.push("--ssl".into());
    let o = run_as(Who::Fencekit, &a, None, Duration::from_secs(30));
    expect(&o, 1, "certificate", Who::Fencekit);
}

#[test]
fn expect_uuid_pins_the_vm_before_any_change() {
    let Some(peer) = Peer::start() else { return };
    let vms = peer.control("GET", "vms");
    let bios = |name: &str| {
        vms.as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap()["bios_uuid"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Another VM's UUID: refused, nothing powered.
    let o = agent(
        Who::Fencekit,
        &peer,
        &["-o", "off", "-n", "node1", "--expect-uuid", &bios("node2")],
    );
    expect(&o, 1, "different machine", Who::Fencekit);
    assert_eq!(peer.state("node1"), "POWERED_ON");
    assert_eq!(peer.calls(STOP), 0);
    // Its own (in upper case): powered off.
    let o = agent(
        Who::Fencekit,
        &peer,
        &[
            "-o",
            "off",
            "-n",
            "node1",
            "--expect-uuid",
            &bios("node1").to_uppercase(),
        ],
    );
    expect(&o, 0, "Success: Powered OFF", Who::Fencekit);
    assert_eq!(peer.state("node1"), "POWERED_OFF");
}

#[test]
fn refusals_by_the_service_side_by_side() {
    let Some(peer) = Peer::start() else { return };
    for who in both() {
        // The service unavailable (503, service_unavailable): not carried
        // out. fencekit sends the stop again within its bound; upstream fails.
        peer.reset();
        peer.control("POST", "fail?action=stop&status=503&count=1");
        let o = agent(who, &peer, &["-o", "off", "-n", "node1"]);
        match who {
            Who::Upstream => {
                expect(&o, 1, "Unable to obtain correct plug status", who);
                assert_eq!(peer.state("node1"), "POWERED_ON");
                assert_eq!(peer.calls(STOP), 1);
            }
            Who::Fencekit => {
                expect(&o, 0, "Success: Powered OFF", who);
                assert_eq!(peer.calls(STOP), 2, "one refused, one carried out");
            }
        }
        // An internal error (500): never sent again; both fail, and
        // fencekit names vCenter's error.
        peer.reset();
        peer.control("POST", "fail?action=stop&status=500&count=1");
        let o = agent(who, &peer, &["-o", "off", "-n", "node2"]);
        let needle = match who {
            Who::Upstream => "Unable to obtain correct plug status",
            Who::Fencekit => "HTTP 500, internal_server_error",
        };
        expect(&o, 1, needle, who);
        assert_eq!(peer.calls(STOP), 1, "{who:?}");
        assert_eq!(peer.state("node2"), "POWERED_ON");
    }
}

/// Issue 42 §3: vCenter's REST endpoint with a 1024-bit RSA key and
/// `--ssl-insecure`: refused naming the key size, no flag advised.
#[test]
fn a_1024_bit_rsa_key_is_refused_by_name_under_ssl_insecure() {
    use support::small_key::SmallKeyServer;
    let Some(srv) = SmallKeyServer::start() else {
        return;
    };
    let mut c = Command::new(hv::ours(AGENT.name));
    c.args(["--ip", "127.0.0.1", "--ipport", &srv.port.to_string()])
        .args([
            "-l",
            USER,
            "-p",
            PASSWORD,
            "--ssl-insecure",
            "-n",
            "vm1",
            "-o",
            "status",
        ]);
    let r = support::run(c, Duration::from_secs(30));
    SmallKeyServer::assert_refused(&r);
}
