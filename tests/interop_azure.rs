//! Azure: fencekit's driver and upstream `fence_azure_arm` (fence-agents
//! 4.12.1, on azure-identity, azure-mgmt-compute and msrestazure from the
//! peers' venv) side by side against the same peer, tests/peers/azure_api.py
//! (Resource Manager, Entra ID's token endpoint and the instance metadata
//! service, written from Microsoft's REST references). Upstream reaches the
//! peer without any change through its SDKs' own variables: HTTPS_PROXY
//! (the peer's proxy terminates TLS for management.azure.com and
//! login.microsoftonline.com with a test CA), REQUESTS_CA_BUNDLE, and
//! AZURE_POD_IDENTITY_AUTHORITY_HOST for the managed identity.
//!
//! Each test asserts what both do. Where they differ, fencekit's answer is
//! the documented, safer one (docs/azure.md, "Differences from upstream").

mod support;

use fencekit::azure::config::{Auth, AzureConfig, Env};
use fencekit::azure::driver::AzureDriver;
use fencekit::engine::error::ErrorKind;
use fencekit::engine::event::Discard;
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::{Action, PowerState};
use fencekit::engine::run::{run, Cancel, Failure, Outcome};
use fencekit::secret::Secret;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use support::Run;

const SUB: &str = "0b1f6471-1bf0-4dda-aec3-cb9272f09590";
const RG: &str = "rg-ha";
const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const APP: &str = "6a2c2e1e-0000-4000-8000-00000000fe11";
const SECRET: &str = "Xq8~s3cr3t.Value_1";

/// One Azure peer, stopped on drop (by its PID).
struct Peer {
    port: u16,
    dir: PathBuf,
    tmp: PathBuf,
}

impl Peer {
    /// Starts a peer whose transitions take `transition` seconds, with the
    /// service principal [`APP`] (secret [`SECRET`] and the certificate in
    /// sp.pem) allowed everything; `None` (skipped) when it cannot run.
    fn start(transition: f64) -> Option<Peer> {
        if !support::peer_available("azure_api") {
            return None;
        }
        let port = support::free_ports(3);
        support::peer_start(
            "azure_start.sh",
            &[&port.to_string(), &transition.to_string()],
            &[("AZURE_PARENT_PID", &std::process::id().to_string())],
        );
        let dir = support::peer_run_dir().join(format!("azure-{port}"));
        let tmp = std::env::temp_dir().join(format!("fk-azure-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let p = Peer { port, dir, tmp };
        let cert = std::fs::read_to_string(p.dir.join("sp.crt")).unwrap();
        p.control(
            json!({"op": "client", "tenant": TENANT, "client_id": APP, "secret": SECRET,
                         "cert_pem": cert}),
        );
        Some(p)
    }

    fn arm(&self) -> String {
        format!("https://127.0.0.1:{}", self.port + 1)
    }

    fn imds(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn proxy(&self) -> String {
        format!("http://127.0.0.1:{}", self.port + 2)
    }

    fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    fn curl(&self, args: &[&str]) -> Value {
        let out = Command::new("curl")
            .args(["-s", "--max-time", "10", "--cacert"])
            .arg(self.ca())
            .args(args)
            .output()
            .expect("curl");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("peer answered {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn control(&self, op: Value) -> Value {
        let url = format!("{}/_peer/control", self.arm());
        let v = self.curl(&["-X", "POST", &url, "-d", &op.to_string()]);
        assert!(v.get("error").is_none(), "control {op}: {v}");
        v
    }

    fn state(&self) -> Value {
        self.curl(&[&format!("{}/_peer/state", self.arm())])
    }

    /// Adds a VM of [`RG`]; returns its vmId.
    fn vm(&self, name: &str, extra: Value) -> String {
        let mut op = json!({"op": "vm", "sub": SUB, "rg": RG, "name": name});
        for (k, v) in extra.as_object().unwrap() {
            op[k] = v.clone();
        }
        self.control(op)["vmId"].as_str().unwrap().to_string()
    }

    fn set(&self, name: &str, fields: Value) {
        self.control(json!({"op": "set", "sub": SUB, "rg": RG, "name": name, "fields": fields}));
    }

    fn fault(&self, set: Value) {
        self.control(json!({"op": "fault", "set": set}));
    }

    fn vm_state(&self, name: &str) -> Value {
        self.state()["vms"][format!("{SUB}/{RG}/{name}").to_lowercase()].clone()
    }

    fn power(&self, name: &str) -> String {
        self.vm_state(name)["power"].as_str().unwrap().to_string()
    }

    /// The Resource Manager requests logged since the last call.
    fn take_log(&self) -> Vec<Value> {
        let log = self.state()["log"].as_array().unwrap().clone();
        self.control(json!({"op": "clear_log"}));
        log
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(support::peer_scripts().join("azure_stop.sh"))
            .arg(self.port.to_string())
            .env("PEERS_DIR", support::peers_dir())
            .output();
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

// ---- the native driver -------------------------------------------------------

fn config(peer: &Peer, vm: &str) -> AzureConfig {
    let mut c = AzureConfig::new(SUB, RG, vm);
    c.arm_endpoint = Some(peer.arm());
    c.ca_cert = Some(peer.ca());
    c.tenant = Some(TENANT.into());
    c.auth = Auth::Secret {
        client_id: APP.into(),
        secret: Secret::from_str_value(SECRET),
    };
    c.request_timeout = Duration::from_secs(3);
    c
}

fn env_of(peer: &Peer) -> Env {
    Env::from_pairs(&[
        ("AZURE_AUTHORITY_HOST", &peer.arm()),
        ("AZURE_POD_IDENTITY_AUTHORITY_HOST", &peer.imds()),
    ])
}

fn driver_of(peer: &Peer, c: AzureConfig) -> AzureDriver {
    AzureDriver::with_env(c, env_of(peer)).expect("config")
}

fn policy(timeout: Duration) -> Policy {
    let mut p = Policy::native();
    p.poll_interval = Duration::from_millis(100);
    p.power_timeout = PowerTimeout::Wall(timeout);
    p.deadline = Some(fencekit::engine::clock::Instant::now() + timeout + Duration::from_secs(5));
    p
}

fn act_with(d: &mut AzureDriver, action: Action, p: &Policy) -> Result<Outcome, Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(d, action, p, &mut Discard, Cancel::never()))
}

fn act(d: &mut AzureDriver, action: Action) -> Result<Outcome, Failure> {
    act_with(d, action, &policy(Duration::from_secs(10)))
}

// ---- the agents ------------------------------------------------------------------

/// The credentials and scope every agent call names.
fn creds() -> Vec<String> {
    [
        "--username",
        APP,
        "--password",
        SECRET,
        "--tenantId",
        TENANT,
        "--subscriptionId",
        SUB,
        "--resourceGroup",
        RG,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn with_stdin(c: &mut Command, tmp: &std::path::Path, program: &str, text: &str) {
    let path = tmp.join("stdin");
    std::fs::write(&path, text).unwrap();
    c.arg("-c")
        .arg(format!("exec {program} < '{}'", path.display()));
}

/// Upstream fence_azure_arm on the peer: its SDKs' own variables point it there.
fn upstream(peer: &Peer, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
    let py = support::venv_python();
    let agent = support::which("fence_azure_arm").expect("fence_azure_arm");
    let mut c = match stdin {
        None => {
            let mut c = Command::new(&py);
            c.arg(&agent).args(args);
            c
        }
        Some(text) => {
            let mut c = Command::new("bash");
            let program = format!("'{}' '{}'", py.display(), agent.display());
            with_stdin(&mut c, &peer.tmp, &program, text);
            c
        }
    };
    c.env("HTTPS_PROXY", peer.proxy())
        .env("HTTP_PROXY", peer.proxy())
        .env("REQUESTS_CA_BUNDLE", peer.ca())
        .env("AZURE_POD_IDENTITY_AUTHORITY_HOST", peer.imds())
        .env("HOME", &peer.tmp)
        .envs(env.iter().copied());
    support::run(c, Duration::from_secs(90))
}

/// fencekit as `fence_azure_arm` (a symlink) on the peer, through the same
/// proxy; `--ca-cert` (a fencekit option) trusts the test CA.
fn ours(peer: &Peer, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
    let link = peer.tmp.join("fence_azure_arm");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link).unwrap();
    }
    let ca = peer.ca().display().to_string();
    let mut c = match stdin {
        None => {
            let mut c = Command::new(&link);
            c.args(args).arg(format!("--ca-cert={ca}"));
            c
        }
        Some(text) => {
            let mut c = Command::new("bash");
            let text = format!("{text}ca_cert={ca}\n");
            with_stdin(&mut c, &peer.tmp, &format!("'{}'", link.display()), &text);
            c
        }
    };
    c.env("HTTPS_PROXY", peer.proxy())
        .env("AZURE_POD_IDENTITY_AUTHORITY_HOST", peer.imds())
        .env("HOME", &peer.tmp)
        .env("XDG_RUNTIME_DIR", &peer.tmp)
        .envs(env.iter().copied());
    support::run(c, Duration::from_secs(90))
}

fn has_upstream() -> bool {
    support::peer_available("fence_azure_arm")
}

/// Both agents with the service principal's options and `args`.
fn both(peer: &Peer, args: &[&str]) -> (Run, Run) {
    both_from(peer, args, None)
}

/// [`both`], the VM `reset` names set back to these fields before
/// upstream runs (each side starts from the same state).
fn both_from(peer: &Peer, args: &[&str], reset: Option<(&str, Value)>) -> (Run, Run) {
    let mut all: Vec<String> = creds();
    all.extend(args.iter().map(|s| s.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let o = ours(peer, &all, &[], None);
    if let Some((name, mut fields)) = reset {
        fields["pending"] = Value::Null;
        peer.set(name, fields);
    }
    (o, upstream(peer, &all, &[], None))
}

fn first(r: &Run) -> &str {
    r.stdout.lines().next().unwrap_or("").trim()
}

/// The lines both print, and both exit codes, as expected.
fn agree(peer: &Peer, args: &[&str], line: &str, code: i32) -> (Run, Run) {
    agree_from(peer, args, None, line, code)
}

/// [`agree`], each side from the same state ([`both_from`]).
fn agree_from(
    peer: &Peer,
    args: &[&str],
    reset: Option<(&str, Value)>,
    line: &str,
    code: i32,
) -> (Run, Run) {
    let (o, u) = both_from(peer, args, reset);
    assert_eq!(
        (o.code, first(&o)),
        (Some(code), line),
        "ours {args:?}: {}",
        o.text()
    );
    if has_upstream() {
        assert_eq!(
            (u.code, first(&u)),
            (Some(code), line),
            "upstream {args:?}: {}",
            u.text()
        );
    }
    (o, u)
}

#[test]
fn status_in_every_state_side_by_side() {
    let Some(peer) = Peer::start(0.5) else { return };
    for (name, power) in [
        ("running", "running"),
        ("stopped", "stopped"),
        ("deallocated", "deallocated"),
        ("starting", "starting"),
        ("stopping", "stopping"),
        ("deallocating", "deallocating"),
    ] {
        peer.vm(name, json!({"power": power}));
    }
    agree(&peer, &["-n", "running", "-o", "status"], "Status: ON", 0);
    agree(&peer, &["-n", "stopped", "-o", "status"], "Status: OFF", 2);
    agree(
        &peer,
        &["-n", "deallocated", "-o", "status"],
        "Status: OFF",
        2,
    );
    // A transition is not off: both say ON (upstream maps every state but
    // stopped and deallocated to on for status).
    for name in ["starting", "stopping", "deallocating"] {
        agree(&peer, &["-n", name, "-o", "status"], "Status: ON", 0);
    }
    // Natively: a transition, never off, never a guess.
    let mut d = driver_of(&peer, config(&peer, "stopping"));
    let r = act(&mut d, Action::Status).unwrap();
    assert!(matches!(r, Outcome::InTransition { .. }), "{r:?}");
    let mut d = driver_of(&peer, config(&peer, "deallocated"));
    assert_eq!(
        act(&mut d, Action::Status).unwrap(),
        Outcome::Status {
            state: PowerState::Off
        }
    );
}

#[test]
fn a_stale_or_unknown_instance_view_is_never_off() {
    let Some(peer) = Peer::start(0.5) else { return };
    peer.vm("unknown", json!({"power": "unknown"}));
    peer.vm("stale", json!({"power": "none"}));
    for name in ["unknown", "stale"] {
        let (o, u) = both(&peer, &["-n", name, "-o", "status", "--power-timeout", "3"]);
        // Upstream guesses ON (exit 0); fencekit says it cannot read the
        // state (exit 1): never OFF on either side.
        assert_eq!(o.code, Some(1), "{}", o.text());
        assert!(!o.stdout.contains("OFF"), "{}", o.text());
        assert!(o.stderr.contains("not off"), "{}", o.text());
        if has_upstream() {
            assert_eq!((u.code, first(&u)), (Some(0), "Status: ON"), "{}", u.text());
        }
        // An off never succeeds on such a view, however long it waits.
        let mut d = driver_of(&peer, config(&peer, name));
        peer.set(name, json!({"stuck": true}));
        let e = act_with(&mut d, Action::Off, &policy(Duration::from_secs(2))).unwrap_err();
        assert_ne!(e.last_state, Some(PowerState::Off), "{e:?}");
    }
}

#[test]
fn off_on_reboot_and_already_side_by_side() {
    let Some(peer) = Peer::start(0.4) else { return };
    peer.vm("node1", json!({}));
    let running = || Some(("node1", json!({"power": "running"})));
    let stopped = || Some(("node1", json!({"power": "stopped"})));
    agree_from(
        &peer,
        &["-n", "node1", "-o", "off"],
        running(),
        "Success: Powered OFF",
        0,
    );
    assert_eq!(peer.power("node1"), "stopped");
    let v = peer.vm_state("node1");
    let sides = if has_upstream() { 2 } else { 1 };
    assert_eq!(v["powerOffs"], sides, "one powerOff each: {v}");
    // Both ask for a hard stop.
    assert!(
        v["skipShutdown"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s == "true"),
        "{v}"
    );
    agree(
        &peer,
        &["-n", "node1", "-o", "off"],
        "Success: Already OFF",
        0,
    );
    assert_eq!(
        peer.vm_state("node1")["powerOffs"],
        sides,
        "already off: nothing sent"
    );
    agree_from(
        &peer,
        &["-n", "node1", "-o", "on"],
        stopped(),
        "Success: Powered ON",
        0,
    );
    assert_eq!(peer.power("node1"), "running");
    agree(
        &peer,
        &["-n", "node1", "-o", "on"],
        "Success: Already ON",
        0,
    );
    agree(
        &peer,
        &["-n", "node1", "-o", "reboot"],
        "Success: Rebooted",
        0,
    );
    assert_eq!(peer.power("node1"), "running");
    // fencekit followed its operations: none failed or was preempted.
    let ops = peer.state()["ops"].clone();
    assert!(
        ops.as_object()
            .unwrap()
            .values()
            .all(|o| o["status"] == "Succeeded"),
        "{ops}"
    );
}

#[test]
fn an_operation_accepted_then_failed_is_never_off() {
    let Some(peer) = Peer::start(0.4) else { return };
    peer.vm(
        "node1",
        json!({"fail_next": {"powerOff": ["VMAgentStatusCommunicationError", "the host refused to stop the VM"]}}),
    );
    let mut d = driver_of(&peer, config(&peer, "node1"));
    let e = act(&mut d, Action::Off).unwrap_err();
    assert_eq!(e.error.kind, ErrorKind::DeviceError, "{e:?}");
    assert!(e.error.message.contains("accepted"), "{}", e.error.message);
    assert!(e.error.message.contains("VMAgentStatusCommunicationError"));
    assert_eq!(peer.power("node1"), "running");
    assert_eq!(peer.vm_state("node1")["powerOffs"], 1, "never sent again");
    // The agents: both fail (upstream only once its polls run out).
    let fail =
        json!({"power": "running", "fail_next": {"powerOff": ["InternalExecutionError", "x"]}});
    peer.set("node1", fail.clone());
    let (o, u) = both_from(
        &peer,
        &["-n", "node1", "-o", "off", "--power-timeout", "4"],
        Some(("node1", fail)),
    );
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.stderr.contains("InternalExecutionError"), "{}", o.text());
    if has_upstream() {
        assert_eq!(u.code, Some(1), "{}", u.text());
    }
    // A VM that stays in stopping is never off either.
    peer.set("node1", json!({"stuck": true}));
    let mut d = driver_of(&peer, config(&peer, "node1"));
    let e = act_with(&mut d, Action::Off, &policy(Duration::from_secs(2))).unwrap_err();
    assert_ne!(e.last_state, Some(PowerState::Off), "{e:?}");
    assert_eq!(peer.power("node1"), "stopping");
    let (o, u) = both(&peer, &["-n", "node1", "-o", "off", "--power-timeout", "3"]);
    assert_eq!(o.code, Some(1), "{}", o.text());
    if has_upstream() {
        assert_eq!(u.code, Some(1), "{}", u.text());
    }
}

#[test]
fn a_lost_answer_is_read_back_never_sent_again() {
    let Some(peer) = Peer::start(0.4) else { return };
    peer.vm("node1", json!({}));
    // The power-off is carried out, and its answer never comes.
    peer.fault(json!({"drop": {"powerOff": 1}}));
    let mut d = driver_of(&peer, config(&peer, "node1"));
    assert_eq!(
        act(&mut d, Action::Off).unwrap(),
        Outcome::Reached {
            state: PowerState::Off
        }
    );
    assert_eq!(
        peer.vm_state("node1")["powerOffs"],
        1,
        "read back, not sent again"
    );
    if has_upstream() {
        // Upstream does not send it again either, but ends in a traceback
        // (exit 1) although the VM goes off.
        peer.set("node1", json!({"power": "running", "pending": null}));
        peer.fault(json!({"drop": {"powerOff": 1}}));
        let mut args = creds();
        args.extend(["-n", "node1", "-o", "off", "--power-timeout", "5"].map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let u = upstream(&peer, &args, &[], None);
        assert_eq!(u.code, Some(1), "{}", u.text());
        assert!(u.stderr.contains("ServiceRequestError"), "{}", u.text());
        assert_eq!(peer.vm_state("node1")["powerOffs"], 2, "one each");
        peer.set("node1", json!({"power": "stopped", "pending": null}));
    }
    // A start lost before Azure acted on it: the VM still reads stopped, so
    // whether it was carried out is unknown, and it is never sent again.
    peer.fault(json!({"lose": {"start": 1}}));
    let mut d = driver_of(&peer, config(&peer, "node1"));
    let e = act(&mut d, Action::On).unwrap_err();
    // The engine then polls: never seen on, the timeout names the silence.
    assert!(
        matches!(
            e.error.kind,
            ErrorKind::OutcomeUnknown | ErrorKind::TransitionTimeout
        ),
        "{e:?}"
    );
    assert!(
        e.error.message.contains("not sent again"),
        "{}",
        e.error.message
    );
    let v = peer.vm_state("node1");
    assert_eq!(
        (v["posts"]["start"].clone(), v["power"].clone()),
        (json!(1), json!("stopped")),
        "{v}"
    );
}

#[test]
fn unknown_vm_wrong_credentials_and_no_permission() {
    let Some(peer) = Peer::start(0.3) else { return };
    peer.vm("node1", json!({}));
    let (o, u) = both(&peer, &["-n", "nosuchvm", "-o", "status"]);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.stderr.contains("ResourceNotFound"), "{}", o.text());
    if has_upstream() {
        assert_eq!(u.code, Some(1), "{}", u.text());
        assert!(
            u.stderr.to_lowercase().contains("resourcenotfound"),
            "{}",
            u.text()
        );
    }
    // A wrong secret: refused by the token endpoint, never printed.
    let wrong = [
        "--username",
        APP,
        "--password",
        "not-the-secret",
        "--tenantId",
        TENANT,
        "--subscriptionId",
        SUB,
        "--resourceGroup",
        RG,
        "-n",
        "node1",
        "-o",
        "status",
    ];
    let o = ours(&peer, &wrong, &[], None);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.stderr.contains("AADSTS7000215"), "{}", o.text());
    assert!(!o.text().contains("not-the-secret"), "{}", o.text());
    if has_upstream() {
        let u = upstream(&peer, &wrong, &[], None);
        assert_eq!(u.code, Some(1), "{}", u.text());
        assert!(
            u.text().to_lowercase().contains("aadsts7000215"),
            "{}",
            u.text()
        );
    }
    // A role that may read but not power off.
    let reader = "11111111-2222-4333-8444-555555555555";
    peer.control(
        json!({"op": "client", "tenant": TENANT, "client_id": reader, "secret": SECRET,
                        "actions": ["Microsoft.Compute/virtualMachines/read"]}),
    );
    let args = [
        "--username",
        reader,
        "--password",
        SECRET,
        "--tenantId",
        TENANT,
        "--subscriptionId",
        SUB,
        "--resourceGroup",
        RG,
        "-n",
        "node1",
        "-o",
        "off",
        "--power-timeout",
        "4",
    ];
    let o = ours(&peer, &args, &[], None);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.stderr.contains("AuthorizationFailed"), "{}", o.text());
    assert!(o.stderr.contains("powerOff/action"), "{}", o.text());
    if has_upstream() {
        let u = upstream(&peer, &args, &[], None);
        assert_eq!(u.code, Some(1), "{}", u.text());
    }
    assert_eq!(peer.power("node1"), "running");
}

#[test]
fn an_expired_token_is_fetched_again() {
    let Some(peer) = Peer::start(0.3) else { return };
    peer.vm("node1", json!({}));
    let mut d = driver_of(&peer, config(&peer, "node1"));
    assert_eq!(
        act(&mut d, Action::Status).unwrap(),
        Outcome::Status {
            state: PowerState::On
        }
    );
    peer.control(json!({"op": "expire_tokens"}));
    assert_eq!(
        act(&mut d, Action::Off).unwrap(),
        Outcome::Reached {
            state: PowerState::Off
        }
    );
    assert_eq!(d.stats().tokens, 2, "one new token after the 401");
    let log = peer.take_log();
    assert!(
        log.iter()
            .filter(|e| e["path"].as_str().unwrap().ends_with("/powerOff"))
            .count()
            == 1
    );
}

#[test]
fn throttling_is_waited_out_and_an_api_that_never_answers_is_bounded() {
    let Some(peer) = Peer::start(0.3) else { return };
    peer.vm("node1", json!({}));
    peer.fault(json!({"throttle": 2}));
    agree(&peer, &["-n", "node1", "-o", "status"], "Status: ON", 0);
    peer.fault(json!({"throttle": 2}));
    let mut d = driver_of(&peer, config(&peer, "node1"));
    assert_eq!(
        act(&mut d, Action::Status).unwrap(),
        Outcome::Status {
            state: PowerState::On
        }
    );
    assert!(d.stats().throttled >= 2, "{:?}", d.stats());
    // Throttled for ever: fails within the deadline, saying so.
    peer.fault(json!({"throttle": 1000}));
    let started = Instant::now();
    let mut d = driver_of(&peer, config(&peer, "node1"));
    let e = act_with(&mut d, Action::Status, &policy(Duration::from_secs(3))).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "{:?}",
        started.elapsed()
    );
    assert!(e.error.message.contains("throttled"), "{}", e.error.message);
    // Never answers: bounded by the request's own limit.
    peer.fault(json!({"throttle": 0, "hang": 30}));
    let o = ours(
        &peer,
        &[
            &creds().iter().map(String::as_str).collect::<Vec<_>>()[..],
            &["-n", "node1", "-o", "status", "--power-timeout", "3"],
        ]
        .concat(),
        &[],
        None,
    );
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.elapsed < Duration::from_secs(15), "{:?}", o.elapsed);
}

#[test]
fn list_and_monitor_side_by_side() {
    let Some(peer) = Peer::start(0.3) else { return };
    for n in ["node1", "node2", "node3"] {
        peer.vm(n, json!({}));
    }
    peer.set("node2", json!({"power": "deallocated"}));
    // Paged: two per page.
    peer.fault(json!({"page_size": 2}));
    let (o, u) = both(&peer, &["-o", "list"]);
    assert_eq!(o.code, Some(0), "{}", o.text());
    assert_eq!(
        o.stdout.lines().collect::<Vec<_>>(),
        ["node1,", "node2,", "node3,"]
    );
    if has_upstream() {
        assert_eq!(
            (u.code, u.stdout.clone()),
            (Some(0), o.stdout.clone()),
            "{}",
            u.text()
        );
    }
    let (o, u) = both(&peer, &["-o", "list-status"]);
    assert_eq!(
        o.stdout.lines().collect::<Vec<_>>(),
        ["node1,,on", "node2,,off", "node3,,on"],
        "{}",
        o.text()
    );
    if has_upstream() {
        // Upstream's list carries no states: it prints UNKNOWN for each.
        assert_eq!(
            (u.code, u.stdout.lines().collect::<Vec<_>>()),
            (
                Some(0),
                vec!["node1,,UNKNOWN", "node2,,UNKNOWN", "node3,,UNKNOWN"]
            ),
            "{}",
            u.text()
        );
    }
    // monitor: one VM read, never the group's list.
    peer.take_log();
    let (o, u) = both(&peer, &["-o", "monitor", "-n", "node1"]);
    assert_eq!(o.code, Some(0), "{}", o.text());
    let lists = |log: &[Value]| {
        log.iter()
            .filter(|e| e["path"].as_str().unwrap().ends_with("/virtualMachines"))
            .count()
    };
    let log = peer.take_log();
    if has_upstream() {
        assert_eq!(u.code, Some(0), "{}", u.text());
        // Upstream lists the whole group (two pages); fencekit read one VM.
        assert_eq!(lists(&log), 2, "{log:?}");
    } else {
        assert_eq!(lists(&log), 0, "{log:?}");
    }
    let o = ours(
        &peer,
        &[
            &creds().iter().map(String::as_str).collect::<Vec<_>>()[..],
            &["-o", "monitor"],
        ]
        .concat(),
        &[],
        None,
    );
    assert_eq!(o.code, Some(0), "{}", o.text());
    assert!(
        lists(&peer.take_log()) <= 1,
        "at most the first page without a plug"
    );
}

#[test]
fn managed_workload_identity_and_certificate() {
    let Some(peer) = Peer::start(0.3) else { return };
    peer.vm("node1", json!({}));
    let base = [
        "--subscriptionId",
        SUB,
        "--resourceGroup",
        RG,
        "-n",
        "node1",
        "-o",
        "status",
    ];
    // No managed identity yet: both fail.
    let msi = [&base[..], &["--msi"]].concat();
    let o = ours(&peer, &msi, &[], None);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.stderr.contains("Identity not found"), "{}", o.text());
    peer.control(json!({"op": "identity"}));
    let o = ours(&peer, &msi, &[], None);
    assert_eq!((o.code, first(&o)), (Some(0), "Status: ON"), "{}", o.text());
    if has_upstream() {
        let u = upstream(&peer, &msi, &[], None);
        assert_eq!((u.code, first(&u)), (Some(0), "Status: ON"), "{}", u.text());
    }
    // A workload identity: the federated token file, as AKS mounts it.
    let wid = "99999999-8888-4777-8666-555555555555";
    peer.control(json!({"op": "client", "tenant": TENANT, "client_id": wid}));
    peer.control(
        json!({"op": "federated", "token": "eyJfederated.token.fromkubelet", "client_id": wid}),
    );
    let file = peer.tmp.join("azure-identity-token");
    std::fs::write(&file, "eyJfederated.token.fromkubelet\n").unwrap();
    let file = file.display().to_string();
    let wenv = [
        ("AZURE_FEDERATED_TOKEN_FILE", file.as_str()),
        ("AZURE_CLIENT_ID", wid),
        ("AZURE_TENANT_ID", TENANT),
    ];
    let o = ours(&peer, &msi, &wenv, None);
    assert_eq!((o.code, first(&o)), (Some(0), "Status: ON"), "{}", o.text());
    if has_upstream() {
        let u = upstream(&peer, &msi, &wenv, None);
        assert_eq!((u.code, first(&u)), (Some(0), "Status: ON"), "{}", u.text());
    }
    // A service principal's certificate (fencekit only): the peer checks
    // the RS256 signature with the registered certificate.
    let cert = peer.dir.join("sp.pem").display().to_string();
    let args = [
        &base[..],
        &[
            "--username",
            APP,
            "--tenantId",
            TENANT,
            "--client-certificate",
            &cert,
        ],
    ]
    .concat();
    let o = ours(&peer, &args, &[], None);
    assert_eq!((o.code, first(&o)), (Some(0), "Status: ON"), "{}", o.text());
    // Another key for the same certificate's name: refused.
    let other = std::fs::read_to_string(peer.dir.join("sp.crt")).unwrap()
        + &std::fs::read_to_string(peer.dir.join("key.pem")).unwrap();
    let bad = peer.tmp.join("wrong.pem");
    std::fs::write(&bad, other).unwrap();
    let bad = bad.display().to_string();
    let args = [
        &base[..],
        &[
            "--username",
            APP,
            "--tenantId",
            TENANT,
            "--client-certificate",
            &bad,
        ],
    ]
    .concat();
    let o = ours(&peer, &args, &[], None);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert!(o.stderr.contains("AADSTS7000274"), "{}", o.text());
}

#[test]
fn sovereign_cloud_through_the_same_proxy() {
    let Some(peer) = Peer::start(0.3) else { return };
    peer.vm("node1", json!({}));
    agree(
        &peer,
        &["-n", "node1", "-o", "status", "--cloud", "china"],
        "Status: ON",
        0,
    );
    let log = peer.take_log();
    assert!(
        log.iter()
            .any(|e| e["host"] == "management.chinacloudapi.cn"),
        "{log:?}"
    );
    assert!(
        log.iter().any(|e| e["host"] == "login.chinacloudapi.cn"),
        "{log:?}"
    );
    let (o, _) = both(&peer, &["-n", "node1", "-o", "status", "--cloud", "mars"]);
    assert_eq!(
        o.code,
        Some(1),
        "an unknown cloud is an error: {}",
        o.text()
    );
}

#[test]
fn the_vm_this_runs_on_is_not_powered_off() {
    let Some(peer) = Peer::start(0.3) else { return };
    peer.vm("node1", json!({}));
    peer.control(json!({"op": "imds_vm", "sub": SUB, "rg": RG, "name": "node1"}));
    let mut d = driver_of(&peer, config(&peer, "node1"));
    let e = act(&mut d, Action::Off).unwrap_err();
    assert_eq!(e.error.kind, ErrorKind::SelfFence, "{e:?}");
    assert_eq!(peer.vm_state("node1")["powerOffs"], 0);
    let mut c = config(&peer, "node1");
    c.allow_self_fence = true;
    let mut d = driver_of(&peer, c);
    assert_eq!(
        act(&mut d, Action::Off).unwrap(),
        Outcome::Reached {
            state: PowerState::Off
        }
    );
    // The scope from the metadata service, as upstream reads it.
    peer.set("node1", json!({"power": "running"}));
    let args = [
        "--username",
        APP,
        "--password",
        SECRET,
        "--tenantId",
        TENANT,
        "-n",
        "node1",
        "-o",
        "status",
    ];
    let o = ours(&peer, &args, &[], None);
    assert_eq!((o.code, first(&o)), (Some(0), "Status: ON"), "{}", o.text());
    if has_upstream() {
        let u = upstream(&peer, &args, &[], None);
        assert_eq!((u.code, first(&u)), (Some(0), "Status: ON"), "{}", u.text());
    }
}

#[test]
fn pacemaker_stdin_far_argv_and_the_identity_pin() {
    let Some(peer) = Peer::start(0.3) else { return };
    let vm_id = peer.vm("node1", json!({}));
    let stdin = format!(
        "action=status\nplug=node1\nlogin={APP}\npasswd={SECRET}\ntenantId={TENANT}\n\
         subscriptionId={SUB}\nresourceGroup={RG}\nnodename=node1\n"
    );
    let o = ours(&peer, &[], &[], Some(&stdin));
    assert_eq!((o.code, first(&o)), (Some(0), "Status: ON"), "{}", o.text());
    if has_upstream() {
        let u = upstream(&peer, &[], &[], Some(&stdin));
        assert_eq!((u.code, first(&u)), (Some(0), "Status: ON"), "{}", u.text());
    }
    // FAR: --k=v in any order, --action=off.
    let far = [
        format!("--subscriptionId={SUB}"),
        "--action=off".to_string(),
        format!("--password={SECRET}"),
        "--plug=node1".to_string(),
        format!("--resourceGroup={RG}"),
        format!("--tenantId={TENANT}"),
        format!("--username={APP}"),
    ];
    let far: Vec<&str> = far.iter().map(String::as_str).collect();
    let o = ours(&peer, &far, &[], None);
    assert_eq!(o.code, Some(0), "{}", o.text());
    assert!(!o.text().contains(SECRET));
    assert_eq!(peer.power("node1"), "stopped");
    // A wrong vmId pin: nothing is powered.
    let pinned = [
        &far[..],
        &[
            "--action=on",
            "--expect-vm-id=00000000-0000-4000-8000-000000000000",
        ],
    ]
    .concat();
    let o = ours(&peer, &pinned, &[], None);
    assert_eq!(o.code, Some(1), "{}", o.text());
    assert_eq!(peer.power("node1"), "stopped");
    // The SMBIOS form (first three fields swapped) pins it too.
    let swapped = fencekit::azure::model::swapped_uuid(&vm_id).unwrap();
    let pin = format!("--expect-uuid={swapped}");
    let pinned = [&far[..], &["--action=on", &pin]].concat();
    let o = ours(&peer, &pinned, &[], None);
    assert_eq!(o.code, Some(0), "{}", o.text());
    assert_eq!(peer.power("node1"), "running");
}

/// The native CLI on the peer, directly (`--endpoint-url`, AZURE_AUTHORITY_HOST).
fn native(peer: &Peer, args: &[&str]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fencekit"));
    c.args(args)
        .args(["-l", APP, "--azure-tenant", TENANT, "--endpoint-url"])
        .arg(peer.arm())
        .arg("--ca-cert")
        .arg(peer.ca())
        .env("FENCEKIT_PASSWORD", SECRET)
        .env("AZURE_AUTHORITY_HOST", peer.arm())
        .env("AZURE_POD_IDENTITY_AUTHORITY_HOST", peer.imds())
        .env("HOME", &peer.tmp)
        .env("XDG_RUNTIME_DIR", &peer.tmp);
    support::run(c, Duration::from_secs(60))
}

#[test]
fn native_verify_is_bmc_only_and_check_records_the_vm_id() {
    let Some(peer) = Peer::start(0.2) else { return };
    let vm_id = peer.vm("node1", json!({"power": "stopped"}));
    let target = format!("azure://{SUB}/{RG}/node1");
    let r = native(&peer, &["status", &target]);
    assert_eq!(r.code, Some(2), "{}", r.text());
    // Resource Manager alone is the device's own view: not proof.
    let r = native(&peer, &["verify", &target, "--samples", "1"]);
    assert_eq!(r.code, Some(3), "{}", r.text());
    assert!(r.text().to_lowercase().contains("bmc only"), "{}", r.text());
    let base = peer.tmp.join("baseline.toml");
    let b = base.display().to_string();
    let r = native(&peer, &["check", &target, "--record", "--baseline", &b]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let text = std::fs::read_to_string(&base).unwrap();
    assert!(text.contains(&format!("vm_id = \"{vm_id}\"")), "{text}");
    assert!(text.contains("certificate = \"SHA256:"), "{text}");
    // Deleted and created again under its name: a new vmId is a broken drift.
    peer.control(json!({"op": "vm", "sub": SUB, "rg": RG, "name": "node1", "power": "stopped"}));
    let r = native(&peer, &["check", &target, "--baseline", &b]);
    assert_ne!(r.code, Some(0), "{}", r.text());
    assert!(r.text().contains("identity-changed"), "{}", r.text());
}
