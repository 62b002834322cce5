//! KubeVirt: fencekit's driver and upstream `fence_kubevirt` (fence-agents
//! 4.12.1, on Debian's python3-kubernetes and python3-openshift) side by
//! side against the same API server, tests/peers/kubevirt_api.py (HTTPS
//! with its own CA, bearer tokens, discovery, VM/VMI/pod/node objects, the
//! start/stop/restart subresources with their grace periods).
//!
//! Each test asserts what both do. Where they differ, fencekit's answer is
//! the documented, safer one (docs/far.md, "fence_kubevirt"): a hard stop
//! (`gracePeriod: 0`) confirmed at once where upstream waits through the
//! graceful period; phases other than Running are a transition or off, not
//! "unknown"; a Failed VMI on a lost node is not off, and the node is named;
//! every request is bounded. `verify` treats the API as the device's own
//! view: alone `bmc-only`, proven only with the guest's address silent.

mod support;

use fencekit::engine::error::ErrorKind;
use fencekit::engine::event::Discard;
use fencekit::engine::identity::ExpectedIdentity;
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::{Action, PowerState, RebootMethod};
use fencekit::engine::run::{run, Cancel, Failure, Outcome};
use fencekit::kubevirt::config::{Env, KubevirtConfig};
use fencekit::kubevirt::driver::KubevirtDriver;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use support::Run;

const NS: &str = "guests";
const TOKEN: &str = "tok-fencer";

/// One API server peer, stopped on drop (by its PID).
struct Peer {
    port: u16,
    dir: PathBuf,
    tmp: PathBuf,
}

impl Peer {
    /// Starts a peer whose VMs' graceful stop takes `grace` seconds, with a
    /// valid token [`TOKEN`]; `None` (skipped) when python3/openssl/curl are absent.
    fn start(grace: u32) -> Option<Peer> {
        if !support::peer_available("kubevirt_api") {
            return None;
        }
        let port = support::free_port();
        support::peer_start(
            "kubevirt_start.sh",
            &[&port.to_string(), &grace.to_string(), "0.6"],
            &[("KUBEVIRT_PARENT_PID", &std::process::id().to_string())],
        );
        let dir = support::peer_run_dir().join(format!("kubevirt-{port}"));
        let tmp = std::env::temp_dir().join(format!("fk-kubevirt-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let p = Peer { port, dir, tmp };
        p.control(json!({"op": "token", "token": TOKEN}));
        Some(p)
    }

    fn curl(&self, args: &[&str]) -> Value {
        let url_base = format!("https://127.0.0.1:{}", self.port);
        let mut c = Command::new("curl");
        c.args(["-s", "--max-time", "10", "--cacert"])
            .arg(self.dir.join("ca.pem"));
        for a in args {
            c.arg(a.replace("BASE", &url_base));
        }
        let out = c.output().expect("curl");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("peer answered {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn control(&self, op: Value) -> Value {
        let body = op.to_string();
        let v = self.curl(&["-X", "POST", "BASE/fencekit/control", "-d", &body]);
        assert!(v.get("error").is_none(), "control {op}: {v}");
        v
    }

    fn state(&self) -> Value {
        self.curl(&["BASE/fencekit/state"])
    }

    /// Adds a VM; returns (VM uid, firmware UUID).
    fn vm(&self, spec: Value) -> (String, String) {
        let mut op = json!({"op": "vm", "namespace": NS});
        for (k, v) in spec.as_object().unwrap() {
            op[k] = v.clone();
        }
        let r = self.control(op);
        (
            r["uid"].as_str().unwrap().to_string(),
            r["firmware_uuid"].as_str().unwrap().to_string(),
        )
    }

    /// The subresource PUTs received so far: (verb, body, time).
    fn puts(&self) -> Vec<(String, Value, f64)> {
        self.state()["log"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["method"] == "PUT")
            .map(|e| {
                let path = e["path"].as_str().unwrap();
                (
                    path.rsplit('/').next().unwrap().to_string(),
                    e["body"].clone(),
                    e["t"].as_f64().unwrap(),
                )
            })
            .collect()
    }

    fn vmi_phase(&self, vm: &str) -> Option<String> {
        let s = self.state();
        s["vms"][format!("{NS}/{vm}")]["vmi_object"]["status"]["phase"]
            .as_str()
            .map(str::to_string)
    }

    /// A kubeconfig naming this peer, its CA and `token`.
    fn kubeconfig(&self, token: &str) -> PathBuf {
        // Named by a digest: the path appears in messages, the token never.
        let tag: u32 = token
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
        let p = self.tmp.join(format!("kubeconfig-{tag:08x}"));
        std::fs::write(
            &p,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: peer\n  cluster:\n    server: https://127.0.0.1:{}\n    certificate-authority: {}\ncontexts:\n- name: fencing\n  context:\n    cluster: peer\n    user: fencer\n    namespace: {NS}\ncurrent-context: fencing\nusers:\n- name: fencer\n  user:\n    token: {token}\n",
                self.port,
                self.dir.join("ca.pem").display()
            ),
        )
        .unwrap();
        p
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(support::peer_scripts().join("kubevirt_stop.sh"))
            .arg(self.port.to_string())
            .env("PEERS_DIR", support::peers_dir())
            .output();
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

fn driver_with(peer: &Peer, vm: &str, token: &str, ns: &str) -> KubevirtDriver {
    let mut c = KubevirtConfig::new(Some(ns), vm);
    c.kubeconfig = Some(peer.kubeconfig(token));
    c.request_timeout = Duration::from_secs(3);
    KubevirtDriver::with_env(c, Env::default()).expect("config")
}

fn driver(peer: &Peer, vm: &str) -> KubevirtDriver {
    driver_with(peer, vm, TOKEN, NS)
}

fn policy(timeout: Duration) -> Policy {
    let mut p = Policy::native();
    p.poll_interval = Duration::from_millis(100);
    p.power_timeout = PowerTimeout::Wall(timeout);
    p.deadline = Some(fencekit::engine::clock::Instant::now() + timeout + Duration::from_secs(5));
    p
}

fn act_with(d: &mut KubevirtDriver, action: Action, p: &Policy) -> Result<Outcome, Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(d, action, p, &mut Discard, Cancel::never()))
}

fn act(d: &mut KubevirtDriver, action: Action) -> Result<Outcome, Failure> {
    act_with(d, action, &policy(Duration::from_secs(10)))
}

/// Upstream `fence_kubevirt` on the same peer (bounded by `limit`).
fn upstream(peer: &Peer, token: &str, ns: &str, args: &[&str], limit: Duration) -> Run {
    let mut c = Command::new("/usr/bin/python3");
    c.arg(support::which("fence_kubevirt").expect("fence_kubevirt"))
        .arg("--kubeconfig")
        .arg(peer.kubeconfig(token))
        .args(["--namespace", ns])
        .args(args)
        .env("HOME", &peer.tmp);
    support::run(c, limit)
}

fn up(peer: &Peer, args: &[&str]) -> Run {
    upstream(peer, TOKEN, NS, args, Duration::from_secs(60))
}

fn has_upstream() -> bool {
    support::peer_available("fence_kubevirt")
}

#[test]
fn status_in_every_phase_side_by_side() {
    let Some(peer) = Peer::start(6) else { return };
    peer.control(json!({"op": "node", "name": "worker-0"}));
    let phases = [
        ("running", json!({"phase": "Running"})),
        ("paused", json!({"phase": "Running", "paused": true})),
        ("pending", json!({"phase": "Pending"})),
        ("scheduling", json!({"phase": "Scheduling"})),
        ("scheduled", json!({"phase": "Scheduled"})),
        (
            "succeeded",
            json!({"phase": "Succeeded", "runStrategy": "Manual"}),
        ),
        (
            "failed",
            json!({"phase": "Failed", "runStrategy": "Manual"}),
        ),
        ("unknown", json!({"phase": "Unknown"})),
        ("halted", json!({"runStrategy": "Halted"})),
        ("legacy-off", json!({"running": false})),
    ];
    for (name, spec) in &phases {
        let mut s = spec.clone();
        s["name"] = json!(name);
        peer.vm(s);
    }
    // fencekit: Running and Paused on; Pending/Scheduling/Scheduled a
    // power-on under way; Succeeded/Failed (node Ready, no launcher alive)
    // and no VMI off; Unknown unreadable.
    let want: &[(&str, Result<&str, ErrorKind>)] = &[
        ("running", Ok("on")),
        ("paused", Ok("on")),
        ("pending", Ok("powering-on")),
        ("scheduling", Ok("powering-on")),
        ("scheduled", Ok("powering-on")),
        ("succeeded", Ok("off")),
        ("failed", Ok("off")),
        ("unknown", Err(ErrorKind::StatusUnreadable)),
        ("halted", Ok("off")),
        ("legacy-off", Ok("off")),
    ];
    for (name, expect) in want {
        let mut d = driver(&peer, name);
        let got = act(&mut d, Action::Status);
        match (expect, &got) {
            (
                Ok("on"),
                Ok(Outcome::Status {
                    state: PowerState::On,
                }),
            ) => {}
            (
                Ok("off"),
                Ok(Outcome::Status {
                    state: PowerState::Off,
                }),
            ) => {}
            (Ok("powering-on"), Ok(Outcome::InTransition { transition })) => {
                assert_eq!(transition.to_string(), "powering on", "{name}")
            }
            (Err(k), Err(f)) if f.error.kind == *k => {}
            _ => panic!("{name}: expected {expect:?}, got {got:?}"),
        }
    }
    if !has_upstream() {
        return;
    }
    // Upstream 4.12.1: only Running is on; every other phase is "unknown"
    // (its status exit is then 1, "Failed: Unable to obtain correct plug
    // status"), and no VMI is off (exit 2).
    for (name, _) in &phases {
        let r = up(&peer, &["-n", name, "-o", "status"]);
        let text = r.text();
        match *name {
            "running" | "paused" => {
                assert_eq!(r.code, Some(0), "{name}: {text}");
                assert!(text.contains("status: on"), "{name}: {text}");
            }
            "halted" | "legacy-off" => {
                assert_eq!(r.code, Some(2), "{name}: {text}");
                assert!(text.contains("status: off"), "{name}: {text}");
            }
            _ => {
                assert_eq!(r.code, Some(1), "{name}: {text}");
                assert!(!text.contains("status: off"), "{name}: {text}");
            }
        }
    }
}

#[test]
fn off_is_a_hard_stop_confirmed_at_once_where_upstream_waits_through_the_grace_period() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a"}));
    peer.vm(json!({"name": "vm-b"}));
    let t = Instant::now();
    let mut d = driver(&peer, "vm-a");
    let r = act(&mut d, Action::Off).expect("off");
    let took = t.elapsed();
    assert_eq!(
        r,
        Outcome::Reached {
            state: PowerState::Off
        }
    );
    let puts = peer.puts();
    assert_eq!(puts.len(), 1, "{puts:?}");
    assert_eq!(puts[0].0, "stop");
    assert_eq!(puts[0].1, json!({"gracePeriod": 0}));
    assert!(took < Duration::from_secs(2), "fencekit off took {took:?}");
    // Off was confirmed with the VMI gone or Succeeded (its launcher gone).
    let phase = peer.vmi_phase("vm-a");
    assert!(
        matches!(phase.as_deref(), None | Some("Succeeded")),
        "{phase:?}"
    );
    // The VM is Halted now: a second off is "already off", nothing sent.
    let mut d = driver(&peer, "vm-a");
    assert_eq!(
        act(&mut d, Action::Off).expect("off"),
        Outcome::Already {
            state: PowerState::Off
        }
    );
    assert_eq!(peer.puts().len(), 1);
    if !has_upstream() {
        return;
    }
    // Upstream PUTs stop without a body: the guest gets its full grace
    // period (6 s here, 180 s by KubeVirt's default) before it is off.
    let r = up(&peer, &["-n", "vm-b", "-o", "off"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.text().contains("success: powered off"), "{}", r.text());
    let puts = peer.puts();
    assert_eq!(puts.len(), 2, "{puts:?}");
    assert_eq!(puts[1].0, "stop");
    assert!(
        puts[1].1.is_null(),
        "upstream sends no body: {:?}",
        puts[1].1
    );
    assert!(
        r.elapsed >= Duration::from_secs(6),
        "upstream off took {:?}",
        r.elapsed
    );
}

#[test]
fn on_reboot_cycle_and_already_side_by_side() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a", "runStrategy": "Halted"}));
    peer.vm(json!({"name": "vm-m", "runStrategy": "Manual", "phase": "Running"}));
    peer.vm(json!({"name": "vm-b", "runStrategy": "Halted"}));
    let mut d = driver(&peer, "vm-a");
    assert_eq!(
        act(&mut d, Action::On).expect("on"),
        Outcome::Reached {
            state: PowerState::On
        }
    );
    let mut d = driver(&peer, "vm-a");
    assert_eq!(
        act(&mut d, Action::On).expect("on again"),
        Outcome::Already {
            state: PowerState::On
        }
    );
    // reboot: off (confirmed) then on (confirmed), on Always (start after
    // stop made it Halted) and on Manual.
    for vm in ["vm-a", "vm-m"] {
        let mut d = driver(&peer, vm);
        assert_eq!(
            act(&mut d, Action::Reboot).expect("reboot"),
            Outcome::Rebooted,
            "{vm}"
        );
    }
    let verbs: Vec<String> = peer.puts().into_iter().map(|p| p.0).collect();
    assert_eq!(verbs, ["start", "stop", "start", "stop", "start"]);
    // --method cycle: restart with gracePeriodSeconds 0.
    let mut p = policy(Duration::from_secs(10));
    p.method = RebootMethod::Cycle;
    let mut d = driver(&peer, "vm-m");
    let r = act_with(&mut d, Action::Reboot, &p).expect("cycle");
    assert!(matches!(r, Outcome::CycleSent | Outcome::Cycled), "{r:?}");
    let last = peer.puts().pop().unwrap();
    assert_eq!(
        (last.0.as_str(), last.1),
        ("restart", json!({"gracePeriodSeconds": 0}))
    );
    if !has_upstream() {
        return;
    }
    let r = up(&peer, &["-n", "vm-b", "-o", "on"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.text().contains("success: powered on"), "{}", r.text());
    let r = up(&peer, &["-n", "vm-b", "-o", "on"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.text().contains("already on"), "{}", r.text());
}

#[test]
fn a_failed_vmi_on_a_lost_node_is_not_off_and_names_the_node() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-lost", "node": "worker-1"}));
    peer.vm(json!({"name": "vm-run", "node": "worker-2"}));
    // worker-1 stops reporting; virt-controller marks its VMI Failed, the
    // launcher pod is still Running there as far as anyone knows.
    peer.control(json!({"op": "node_lost", "node": "worker-1", "vmi_phase": "Failed"}));
    let mut d = driver(&peer, "vm-lost");
    let f = act(&mut d, Action::Off).expect_err("not off");
    assert_eq!(f.error.kind, ErrorKind::StatusUnreadable, "{f:?}");
    assert!(f.error.message.contains("worker-1"), "{}", f.error.message);
    assert!(f.error.message.contains("not off"), "{}", f.error.message);
    assert!(
        peer.puts().is_empty(),
        "nothing is sent that cannot take effect"
    );
    // A Running VMI on a node that stops reporting: the stop is sent, and
    // never confirmed (the launcher cannot report); the node is named.
    peer.control(json!({"op": "node_lost", "node": "worker-2"}));
    let mut d = driver(&peer, "vm-run");
    let f = act_with(&mut d, Action::Off, &policy(Duration::from_secs(2))).expect_err("not off");
    assert_eq!(f.error.kind, ErrorKind::TransitionTimeout, "{f:?}");
    assert!(f.error.message.contains("worker-2"), "{}", f.error.message);
    if !has_upstream() {
        return;
    }
    // Upstream 4.12.1: a Failed VMI is "unknown" (exit 1); fence-agents
    // after 2026-05 reports Failed as off, which would let the cluster run
    // the guest twice.
    let r = up(&peer, &["-n", "vm-lost", "-o", "status"]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(!r.text().contains("status: off"), "{}", r.text());
}

#[test]
fn unknown_vm_wrong_namespace_no_permission_and_expired_token() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a", "runStrategy": "Halted"}));
    peer.control(json!({"op": "token", "token": "tok-novm", "forbid": ["virtualmachines", "virtualmachineinstances"]}));
    peer.control(json!({"op": "token", "token": "tok-old", "state": "expired"}));
    let mut d = driver(&peer, "nosuch");
    let f = act(&mut d, Action::Status).expect_err("no such VM");
    assert_eq!(f.error.kind, ErrorKind::Config);
    assert!(
        f.error
            .message
            .contains("no VirtualMachine 'nosuch' in namespace 'guests'"),
        "{}",
        f.error.message
    );
    let mut d = driver_with(&peer, "vm-a", TOKEN, "elsewhere");
    let f = act(&mut d, Action::Status).expect_err("wrong namespace");
    assert_eq!(f.error.kind, ErrorKind::Config);
    assert!(
        f.error.message.contains("namespace 'elsewhere'"),
        "{}",
        f.error.message
    );
    let mut d = driver_with(&peer, "vm-a", "tok-novm", NS);
    let f = act(&mut d, Action::Status).expect_err("forbidden");
    assert_eq!(f.error.kind, ErrorKind::PrivilegeNotObtained);
    assert!(f.error.message.contains("403"), "{}", f.error.message);
    let mut d = driver_with(&peer, "vm-a", "tok-old", NS);
    let f = act(&mut d, Action::Status).expect_err("expired");
    assert_eq!(f.error.kind, ErrorKind::PasswordInvalid);
    assert!(f.error.message.contains("401"), "{}", f.error.message);
    assert!(
        !f.error.message.contains("tok-old"),
        "no secret in messages"
    );
    if !has_upstream() {
        return;
    }
    for (vm, token, ns) in [
        ("nosuch", TOKEN, NS),
        ("vm-a", TOKEN, "elsewhere"),
        ("vm-a", "tok-novm", NS),
        ("vm-a", "tok-old", NS),
    ] {
        let r = upstream(
            &peer,
            token,
            ns,
            &["-n", vm, "-o", "status"],
            Duration::from_secs(60),
        );
        assert_eq!(r.code, Some(1), "{vm} {token} {ns}: {}", r.text());
        assert!(
            !r.text().contains("status: "),
            "{vm} {token} {ns}: {}",
            r.text()
        );
    }
}

#[test]
fn rbac_without_pods_or_nodes_gives_device_only_off() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a", "runStrategy": "Halted"}));
    peer.control(json!({"op": "token", "token": "tok-vmonly", "forbid": ["pods", "nodes"]}));
    let mut d = driver_with(&peer, "vm-a", "tok-vmonly", NS);
    let r = act(&mut d, Action::Status).expect("status");
    assert_eq!(
        r,
        Outcome::Status {
            state: PowerState::Off
        }
    );
    let denied = d.denied().join("; ");
    assert!(denied.contains("list pods"), "{denied}");
}

#[test]
fn a_rotated_service_account_token_is_read_again_after_a_401() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a"}));
    let sa = peer.tmp.join("sa");
    std::fs::create_dir_all(&sa).unwrap();
    std::fs::copy(peer.dir.join("ca.pem"), sa.join("ca.crt")).unwrap();
    std::fs::write(sa.join("namespace"), NS).unwrap();
    std::fs::write(sa.join("token"), "tok-first\n").unwrap();
    peer.control(json!({"op": "token", "token": "tok-first"}));
    let port = peer.port.to_string();
    let sa_dir = sa.display().to_string();
    let env = Env::from_pairs(&[
        ("HOME", "/nonexistent"),
        ("KUBERNETES_SERVICE_HOST", "127.0.0.1"),
        ("KUBERNETES_SERVICE_PORT", &port),
        ("FENCEKIT_SERVICEACCOUNT_DIR", &sa_dir),
    ]);
    let mut d = KubevirtDriver::with_env(KubevirtConfig::new(None, "vm-a"), env).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    use fencekit::engine::driver::PowerDriver;
    let connected = rt.block_on(d.connect(None)).expect("connect");
    assert!(
        connected.contains("in-cluster service account"),
        "{connected}"
    );
    assert_eq!(d.namespace(), NS);
    // The kubelet rotates the projected token; the old one is refused.
    peer.control(json!({"op": "token", "token": "tok-first", "state": "expired"}));
    peer.control(json!({"op": "token", "token": "tok-second"}));
    std::fs::write(sa.join("token"), "tok-second\n").unwrap();
    assert_eq!(
        rt.block_on(d.status(None)).expect("status after rotation"),
        PowerState::On
    );
    let codes: Vec<i64> = peer.state()["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["status"].as_i64())
        .collect();
    assert!(codes.contains(&401), "{codes:?}");
}

#[test]
fn a_throttled_api_is_waited_out_within_the_deadline() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a"}));
    peer.control(json!({"op": "throttle", "count": 2, "retry_after": 1}));
    let t = Instant::now();
    let mut d = driver(&peer, "vm-a");
    let r = act(&mut d, Action::Status).expect("status");
    assert_eq!(
        r,
        Outcome::Status {
            state: PowerState::On
        }
    );
    assert!(
        t.elapsed() >= Duration::from_secs(2),
        "Retry-After honoured: {:?}",
        t.elapsed()
    );
    assert_eq!(d.stats().1, 2);
    // Throttled past the deadline: Busy, bounded.
    peer.control(json!({"op": "throttle", "count": 1000, "retry_after": 1}));
    let t = Instant::now();
    let mut d = driver(&peer, "vm-a");
    let f =
        act_with(&mut d, Action::Status, &policy(Duration::from_secs(2))).expect_err("throttled");
    assert!(t.elapsed() < Duration::from_secs(12), "{:?}", t.elapsed());
    assert!(f.error.message.contains("429"), "{}", f.error.message);
    if !has_upstream() {
        return;
    }
    // Upstream does not retry a 429: the status fails.
    peer.control(json!({"op": "throttle", "count": 1000, "retry_after": 1}));
    let r = up(&peer, &["-n", "vm-a", "-o", "status"]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    peer.control(json!({"op": "throttle", "count": 0}));
}

#[test]
fn an_api_that_never_answers_is_bounded() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a"}));
    peer.control(json!({"op": "hang", "on": true}));
    let t = Instant::now();
    let mut d = driver(&peer, "vm-a");
    let f = act_with(&mut d, Action::Status, &policy(Duration::from_secs(2))).expect_err("hung");
    assert_eq!(f.error.kind, ErrorKind::Timeout, "{f:?}");
    assert!(t.elapsed() < Duration::from_secs(9), "{:?}", t.elapsed());
    if has_upstream() {
        // Upstream sets no timeout on its requests: it never returns (here
        // it is killed at the test's limit).
        let r = upstream(
            &peer,
            TOKEN,
            NS,
            &["-n", "vm-a", "-o", "status"],
            Duration::from_secs(8),
        );
        assert!(r.timed_out, "upstream returned: {}", r.text());
    }
    peer.control(json!({"op": "hang", "on": false}));
}

#[test]
fn list_and_monitor_side_by_side() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a"}));
    peer.vm(json!({"name": "vm-b", "runStrategy": "Halted"}));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut d = driver(&peer, "vm-a");
    let l = rt.block_on(d.list(None)).expect("list");
    let names: Vec<(&str, &str)> = l
        .iter()
        .map(|v| (v.name.as_str(), v.printable.as_str()))
        .collect();
    assert_eq!(names, [("vm-a", "Running"), ("vm-b", "Stopped")]);
    let mut d = driver(&peer, "vm-a");
    assert_eq!(
        act(&mut d, Action::Monitor).expect("monitor"),
        Outcome::Monitored
    );
    if !has_upstream() {
        return;
    }
    let r = up(&peer, &["-o", "list"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert_eq!(r.stdout.lines().collect::<Vec<_>>(), ["vm-a,", "vm-b,"]);
    let r = up(&peer, &["-o", "monitor"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
}

#[test]
fn a_wrong_expected_uuid_changes_nothing() {
    let Some(peer) = Peer::start(6) else { return };
    let (uid, fw) =
        peer.vm(json!({"name": "vm-a", "firmware_uuid": "6a1d7c1e-0b7e-4c39-9a55-2f0d7f4c1a10"}));
    assert_eq!(fw, "6a1d7c1e-0b7e-4c39-9a55-2f0d7f4c1a10");
    let mut p = policy(Duration::from_secs(10));
    p.expect = ExpectedIdentity::new(Some("00000000-0000-0000-0000-000000000001"), None).unwrap();
    let mut d = driver(&peer, "vm-a");
    let f = act_with(&mut d, Action::Off, &p).expect_err("mismatch");
    assert_eq!(f.error.kind, ErrorKind::IdentityMismatch, "{f:?}");
    assert!(peer.puts().is_empty());
    assert_eq!(peer.vmi_phase("vm-a").as_deref(), Some("Running"));
    // The right firmware UUID (any case) and the VM's metadata.uid pin pass.
    p.expect = ExpectedIdentity::new(Some(&fw.to_uppercase()), None)
        .unwrap()
        .with_name("metadata.uid", &uid)
        .unwrap();
    let mut d = driver(&peer, "vm-a");
    assert_eq!(
        act_with(&mut d, Action::Status, &p).expect("status"),
        Outcome::Status {
            state: PowerState::On
        }
    );
    p.expect = ExpectedIdentity::default()
        .with_name("metadata.uid", "another-uid")
        .unwrap();
    let mut d = driver(&peer, "vm-a");
    let f = act_with(&mut d, Action::Off, &p).expect_err("uid mismatch");
    assert_eq!(f.error.kind, ErrorKind::IdentityMismatch, "{f:?}");
    assert!(peer.puts().is_empty());
}

// ---- the drop-in: fencekit as `fence_kubevirt` beside upstream's ----------

/// fencekit invoked as `fence_kubevirt` (a symlink) on the same peer.
fn ours(peer: &Peer, args: &[&str], stdin: Option<&str>) -> Run {
    let link = peer.tmp.join("fence_kubevirt");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link).unwrap();
    }
    let mut c = match stdin {
        None => {
            let mut c = Command::new(&link);
            c.arg("--kubeconfig")
                .arg(peer.kubeconfig(TOKEN))
                .args(["--namespace", NS])
                .args(args);
            c
        }
        Some(text) => {
            // support::run gives no stdin: the shell redirects a file.
            let path = peer.tmp.join("stdin");
            std::fs::write(&path, text).unwrap();
            let mut c = Command::new("bash");
            c.arg("-c")
                .arg(format!("exec '{}' < '{}'", link.display(), path.display()));
            c
        }
    };
    c.env("HOME", &peer.tmp)
        .env("XDG_RUNTIME_DIR", &peer.tmp)
        .env_remove("KUBECONFIG");
    support::run(c, Duration::from_secs(60))
}

#[test]
fn the_drop_in_agrees_with_upstream_or_differs_safely() {
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a"}));
    peer.vm(json!({"name": "vm-b"}));
    peer.vm(json!({"name": "vm-h", "runStrategy": "Halted"}));
    peer.vm(json!({"name": "vm-lost", "node": "worker-9"}));
    peer.control(json!({"op": "node_lost", "node": "worker-9", "vmi_phase": "Failed"}));
    // status: same lines and exit codes.
    let r = ours(&peer, &["-n", "vm-a", "-o", "status"], None);
    assert_eq!(
        (r.code, r.stdout.trim()),
        (Some(0), "Status: ON"),
        "{}",
        r.text()
    );
    let r = ours(&peer, &["-n", "vm-h", "-o", "status"], None);
    assert_eq!(
        (r.code, r.stdout.trim()),
        (Some(2), "Status: OFF"),
        "{}",
        r.text()
    );
    // list: the VM names with an empty alias, as upstream prints them.
    let r = ours(&peer, &["-o", "list"], None);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert_eq!(
        r.stdout.lines().collect::<Vec<_>>(),
        ["vm-a,", "vm-b,", "vm-h,", "vm-lost,"]
    );
    // off: a hard stop confirmed at once.
    let r = ours(&peer, &["-n", "vm-a", "-o", "off"], None);
    assert_eq!(
        (r.code, r.stdout.trim()),
        (Some(0), "Success: Powered OFF"),
        "{}",
        r.text()
    );
    assert!(r.elapsed < Duration::from_secs(3), "{:?}", r.elapsed);
    assert_eq!(peer.puts().last().unwrap().1, json!({"gracePeriod": 0}));
    // Pacemaker's stdin.
    let cfg = peer.kubeconfig(TOKEN);
    let r = ours(
        &peer,
        &[],
        Some(&format!(
            "action=on\nplug=vm-a\nnamespace={NS}\nkubeconfig={}\n",
            cfg.display()
        )),
    );
    assert_eq!(
        (r.code, r.stdout.trim()),
        (Some(0), "Success: Powered ON"),
        "{}",
        r.text()
    );
    // The lost node: exit 1 naming it; nothing sent.
    let before = peer.puts().len();
    let r = ours(&peer, &["-n", "vm-lost", "-o", "off"], None);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.text().contains("worker-9"), "{}", r.text());
    assert_eq!(peer.puts().len(), before);
    // A wrong firmware UUID: exit 1, nothing sent, the VM still runs.
    let r = ours(
        &peer,
        &[
            "-n",
            "vm-b",
            "-o",
            "off",
            "--expect-uuid",
            "00000000-0000-0000-0000-000000000001",
        ],
        None,
    );
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert_eq!(peer.puts().len(), before);
    assert_eq!(peer.vmi_phase("vm-b").as_deref(), Some("Running"));
    if !has_upstream() {
        return;
    }
    let u = up(&peer, &["-n", "vm-b", "-o", "status"]);
    assert_eq!((u.code, u.stdout.trim()), (Some(0), "Status: ON"));
    let u = up(&peer, &["-n", "vm-h", "-o", "status"]);
    assert_eq!((u.code, u.stdout.trim()), (Some(2), "Status: OFF"));
    let u = up(&peer, &["-o", "list"]);
    assert_eq!(
        u.stdout.lines().collect::<Vec<_>>(),
        ["vm-a,", "vm-b,", "vm-h,", "vm-lost,"]
    );
    // Upstream at 4.12.1 on the lost node: status "unknown", exit 1.
    let u = up(&peer, &["-n", "vm-lost", "-o", "status"]);
    assert_eq!(u.code, Some(1), "{}", u.text());
}

#[test]
fn native_targets_name_the_context_and_pin_the_vm_uid() {
    let Some(peer) = Peer::start(6) else { return };
    let (uid, _) = peer.vm(json!({"name": "vm-a"}));
    let kc = peer.kubeconfig(TOKEN);
    let native = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fencekit"));
        c.args(args)
            .arg("--kubeconfig")
            .arg(&kc)
            .env("HOME", &peer.tmp)
            .env("XDG_RUNTIME_DIR", &peer.tmp)
            .env_remove("KUBECONFIG");
        support::run(c, Duration::from_secs(60))
    };
    let r = native(&["status", &format!("kubevirt://fencing@{NS}/vm-a")]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.text().contains(": on"), "{}", r.text());
    let r = native(&["status", &format!("kubevirt://nosuch@{NS}/vm-a")]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.text().contains("no context 'nosuch'"), "{}", r.text());
    let r = native(&[
        "off",
        &format!("kubevirt://{NS}/vm-a"),
        "--expect-vm-uid",
        "not-this-uid",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.text().contains(&uid), "{}", r.text());
    assert!(peer.puts().is_empty());
    // An inventory level: driver = "kubevirt", its kubeconfig and vm_uid.
    let inv = peer.tmp.join("inv.toml");
    std::fs::write(
        &inv,
        format!(
            "[[node]]\nname = \"guest-1\"\n  [[node.fence]]\n  driver = \"kubevirt\"\n  \
             endpoint = \"kubevirt://{NS}/vm-a\"\n  kubeconfig = \"{}\"\n  vm_uid = \"{uid}\"\n",
            kc.display()
        ),
    )
    .unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_fencekit"));
    c.args(["off", "guest-1", "--inventory"])
        .arg(&inv)
        .env("HOME", &peer.tmp)
        .env("XDG_RUNTIME_DIR", &peer.tmp)
        .env_remove("KUBECONFIG");
    let r = support::run(c, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.text());
    let puts = peer.puts();
    assert_eq!(puts.len(), 1);
    assert_eq!(puts[0].1, json!({"gracePeriod": 0}));
}

// ---- verify: the API is the device's own view; the guest's address is the witness ----

/// The guest's own address as `verify` probes it: a loopback port that
/// drops every SYN (`silent`: no SYN-ACK, no RST, as a guest whose qemu is
/// gone), or one that accepts (the guest still runs). Held until dropped.
enum Guest {
    /// The listener, and (where this user may not attach a socket filter)
    /// the connection of its own that fills its accept queue.
    Silent {
        listener: socket2::Socket,
        _filler: Option<std::net::TcpStream>,
    },
    Answering(std::net::TcpListener),
}

impl Guest {
    fn silent() -> Guest {
        use socket2::{Domain, SockFilter, Socket, Type};
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        s.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
            .unwrap();
        // One instruction: return 0 (drop the packet), before listening.
        if s.attach_filter(&[SockFilter::new(0x06, 0, 0, 0)]).is_ok() {
            s.listen(8).unwrap();
            return Guest::Silent {
                listener: s,
                _filler: None,
            };
        }
        // Refused to this user (as the lab does then): a listener whose
        // accept queue is full drops every SYN, with no SYN-ACK and no RST.
        s.listen(0).unwrap();
        let addr = s.local_addr().unwrap().as_socket().unwrap();
        let filler = std::net::TcpStream::connect(addr).unwrap();
        Guest::Silent {
            listener: s,
            _filler: Some(filler),
        }
    }

    fn answering() -> Guest {
        Guest::Answering(std::net::TcpListener::bind("127.0.0.1:0").unwrap())
    }

    fn port(&self) -> String {
        match self {
            Guest::Silent { listener, .. } => {
                listener.local_addr().unwrap().as_socket().unwrap().port()
            }
            Guest::Answering(l) => l.local_addr().unwrap().port(),
        }
        .to_string()
    }
}

#[test]
fn verify_proves_off_only_with_the_guests_own_address_silent() {
    if !support::lab_silent_hosts() {
        return;
    }
    let Some(peer) = Peer::start(6) else { return };
    peer.vm(json!({"name": "vm-a"}));
    let kc = peer.kubeconfig(TOKEN);
    let target = format!("kubevirt://{NS}/vm-a");
    let native = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fencekit"));
        c.args(args)
            .arg("--kubeconfig")
            .arg(&kc)
            .env("HOME", &peer.tmp)
            .env("XDG_RUNTIME_DIR", &peer.tmp)
            .env_remove("KUBECONFIG");
        support::run(c, Duration::from_secs(60))
    };
    let verify = |guest: Option<&Guest>| {
        let mut args = vec![
            "verify".to_string(),
            target.clone(),
            "-o".into(),
            "json".into(),
            "--samples".into(),
            "2".into(),
            "--interval".into(),
            "100ms".into(),
            "--probe-timeout".into(),
            "300ms".into(),
        ];
        if let Some(g) = guest {
            args.extend(["--address".into(), "127.0.0.1".into()]);
            args.extend(["--probe-port".into(), g.port()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = native(&args);
        let rep = r.json()["results"][0].clone();
        (r, rep)
    };
    let probe_of = |rep: &Value, g: &Guest| {
        let source = format!("127.0.0.1:{}", g.port());
        rep["evidence"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["source"] == source.as_str())
            .cloned()
            .unwrap_or_else(|| panic!("the probe is evidence: {rep}"))
    };
    let r = native(&["off", &target]);
    assert_eq!(r.code, Some(0), "{}", r.text());

    // The KubeVirt API alone: the device's own view, bmc-only (exit 3).
    let (r, rep) = verify(None);
    assert_eq!(r.code, Some(3), "{}", r.text());
    assert_eq!(rep["verdict"], "bmc-only", "{r}");
    assert!(
        rep["evidence"].as_array().is_some_and(|e| e
            .iter()
            .any(|e| e["witness"] == "cloud" && e["agrees"] == true)),
        "{rep}"
    );

    // With the guest's own address silent: a witness outside the API agrees.
    let silent = Guest::silent();
    let t = Instant::now();
    let (r, rep) = verify(Some(&silent));
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert_eq!(rep["verdict"], "proven", "{r}");
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "the probe waited"
    );
    let probe = probe_of(&rep, &silent);
    assert!(
        probe["observation"]
            .as_str()
            .unwrap()
            .starts_with("silent:"),
        "{probe}"
    );
    assert_eq!(probe["agrees"], true, "{probe}");
    assert_eq!(probe["independent"], true, "{probe}");

    // The API says off while the guest's address still accepts: the VM may
    // still run elsewhere (a lost node's launcher), never proven.
    let answering = Guest::answering();
    let (r, rep) = verify(Some(&answering));
    assert_eq!(r.code, Some(3), "{}", r.text());
    assert_eq!(rep["verdict"], "contradiction", "{r}");
    let reason = rep["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("127.0.0.1:{}", answering.port())),
        "{reason}"
    );
    let probe = probe_of(&rep, &answering);
    assert!(
        probe["observation"]
            .as_str()
            .unwrap()
            .starts_with("accepted"),
        "{probe}"
    );
    assert_eq!(probe["agrees"], false, "{probe}");
    assert_eq!(peer.puts().len(), 1, "verify changed nothing");

    // The same from an inventory: the node's `address` and `probe_ports`.
    let inv = peer.tmp.join("verify.toml");
    std::fs::write(
        &inv,
        format!(
            "[[node]]\nname = \"guest-1\"\naddress = \"127.0.0.1\"\nprobe_ports = [{}]\n  \
             [[node.fence]]\n  driver = \"kubevirt\"\n  endpoint = \"{target}\"\n  \
             kubeconfig = \"{}\"\n",
            silent.port(),
            kc.display()
        ),
    )
    .unwrap();
    let inv = inv.to_str().unwrap();
    let r = native(&[
        "verify",
        "-i",
        inv,
        "guest-1",
        "-o",
        "json",
        "--samples",
        "1",
        "--probe-timeout",
        "300ms",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert_eq!(r.json()["results"][0]["verdict"], "proven", "{r}");
}

/// Issue 42 §6: the API server answers the VMI read for `vm1` with
/// `vm-other`'s VMI (Succeeded) and its pod list ignores the selector,
/// returning `vm-other`'s pods; `vm1` still runs. An answer about another
/// object is a contradiction: status is unreadable, never off, and `off`
/// never says "already off", natively and as fence_kubevirt. Upstream
/// 4.12.1 reads `vm-other`'s phase as "unknown" and refuses too.
#[test]
fn an_answer_about_another_object_is_never_believed() {
    let Some(peer) = Peer::start(6) else { return };
    peer.control(json!({"op": "node", "name": "worker-0"}));
    peer.vm(json!({"name": "vm1"}));
    peer.vm(json!({"name": "vm-other", "phase": "Succeeded", "runStrategy": "Manual"}));
    peer.control(json!({"op": "pod", "namespace": NS, "name": "vm-other", "phase": "Succeeded"}));
    peer.control(json!({"op": "lie", "namespace": NS, "name": "vm1",
        "vmi_as": "vm-other", "pods_as": "vm-other"}));
    let mut d = driver(&peer, "vm1");
    match act(&mut d, Action::Status) {
        Err(f) => {
            assert_eq!(f.error.kind, ErrorKind::StatusUnreadable, "{f:?}");
            assert!(f.error.message.contains("vm-other"), "{f:?}");
        }
        other => panic!("status believed another VMI: {other:?}"),
    }
    let mut d = driver(&peer, "vm1");
    let r = act_with(&mut d, Action::Off, &policy(Duration::from_secs(3)));
    assert!(r.is_err(), "off believed another VMI: {r:?}");
    // Only the pod list lies (the VMI is honestly gone after a stop would
    // be the dangerous case: a list of another VM's finished pods).
    peer.control(json!({"op": "lie", "namespace": NS, "name": "vm1", "pods_as": "vm-other"}));
    peer.control(json!({"op": "vmi", "namespace": NS, "name": "vm1", "phase": "Succeeded"}));
    let mut d = driver(&peer, "vm1");
    let r = act(&mut d, Action::Status);
    let e = r.expect_err("a pod list of another VM believed");
    assert!(
        e.error.message.contains("did not apply the selector"),
        "{e:?}"
    );
    peer.control(json!({"op": "vmi", "namespace": NS, "name": "vm1", "phase": "Running"}));
    peer.control(json!({"op": "lie", "namespace": NS, "name": "vm1",
        "vmi_as": "vm-other", "pods_as": "vm-other"}));
    // The drop-in.
    let r = ours(&peer, &["-n", "vm1", "-o", "status"], None);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(!r.stdout.contains("OFF"), "{}", r.text());
    let r = ours(
        &peer,
        &["-n", "vm1", "-o", "off", "--power-timeout", "3"],
        None,
    );
    assert_ne!(r.code, Some(0), "{}", r.text());
    assert!(!r.text().contains("Already OFF"), "{}", r.text());
    // A VM of that name deleted and made again is another VM: its uid
    // changes between two reads by one driver. (The peer's VM read lies
    // after one honest read.)
    peer.control(
        json!({"op": "lie", "namespace": NS, "name": "vm1", "vm_as": "vm-other",
        "after": 1}),
    );
    let mut d = driver(&peer, "vm1");
    act(&mut d, Action::Status).expect("the first, honest read");
    let e = act(&mut d, Action::Status).expect_err("a VM read about vm-other believed");
    assert!(e.error.message.contains("vm-other"), "{e:?}");
    if !has_upstream() {
        return;
    }
    peer.control(json!({"op": "lie", "namespace": NS, "name": "vm1",
        "vmi_as": "vm-other", "pods_as": "vm-other"}));
    let r = up(&peer, &["-n", "vm1", "-o", "status"]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(!r.text().contains("status: off"), "{}", r.text());
    let r = up(&peer, &["-n", "vm1", "-o", "off", "--power-timeout", "3"]);
    assert_ne!(r.code, Some(0), "{}", r.text());
    assert!(!r.text().contains("Already OFF"), "{}", r.text());
}

/// Issue 42 §6 (a note, docs/kubevirt.md): a pod list split into pages
/// nobody asked for is followed to its end, so a live launcher on a later
/// page still keeps the VM from being off.
#[test]
fn pod_lists_paginated_unasked_are_followed() {
    let Some(peer) = Peer::start(6) else { return };
    peer.control(json!({"op": "node", "name": "worker-0"}));
    peer.vm(json!({"name": "vm1", "phase": "Succeeded", "runStrategy": "Manual"}));
    // A second launcher, still Running, on the second page.
    peer.control(json!({"op": "pod", "namespace": NS, "name": "vm1", "add": true}));
    peer.control(json!({"op": "page", "size": 1}));
    let mut d = driver(&peer, "vm1");
    let got = act(&mut d, Action::Status);
    assert!(matches!(got, Ok(Outcome::InTransition { .. })), "{got:?}");
    let pages = peer.state()["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"].as_str().unwrap_or("").contains("/pods"))
        .count();
    assert!(pages >= 2, "{pages}");
}

/// Issue 42 §3: an API server whose certificate has a 1024-bit RSA key,
/// with `--ssl-insecure`: refused naming the key size, no flag advised
/// (the drop-in; the native driver shares the TLS module).
#[test]
fn a_1024_bit_rsa_key_is_refused_by_name_under_ssl_insecure() {
    use support::small_key::SmallKeyServer;
    let Some(srv) = SmallKeyServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: p\n  cluster:\n    server: https://127.0.0.1:{}\ncontexts:\n- name: c\n  context:\n    cluster: p\n    user: u\n    namespace: {NS}\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: {TOKEN}\n",
            srv.port
        ),
    )
    .unwrap();
    let link = dir.path().join("fence_kubevirt");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link).unwrap();
    let mut c = Command::new(&link);
    c.arg("--kubeconfig")
        .arg(&kc)
        .args([
            "--namespace",
            NS,
            "-n",
            "vm1",
            "-o",
            "status",
            "--ssl-insecure",
        ])
        .env("HOME", dir.path())
        .env("XDG_RUNTIME_DIR", dir.path())
        .env_remove("KUBECONFIG");
    let r = support::run(c, Duration::from_secs(30));
    SmallKeyServer::assert_refused(&r);
}

/// Issue 42 §6 (a note, docs/design.md): a stop carried out but answered
/// 504 by a gateway is read back, never sent again: off is reached with one
/// PUT.
#[test]
fn a_stop_carried_out_but_answered_504_is_read_back_not_resent() {
    let Some(peer) = Peer::start(6) else { return };
    peer.control(json!({"op": "node", "name": "worker-0"}));
    peer.vm(json!({"name": "vm1"}));
    peer.control(json!({"op": "gateway", "verb": "stop"}));
    let mut d = driver(&peer, "vm1");
    let r = act(&mut d, Action::Off);
    assert_eq!(
        r.expect("off"),
        Outcome::Reached {
            state: PowerState::Off
        }
    );
    assert_eq!(peer.puts().len(), 1, "{:?}", peer.puts());
}
