//! Side by side: upstream `/usr/sbin/fence_aws` (fence-agents 4.12.1, run
//! with the peers' venv Python and a boto3 that honours `AWS_ENDPOINT_URL`)
//! and ours (a symlink named `fence_aws` to the fencekit binary), with the
//! same arguments against the same moto server (EC2, STS and IAM emulated,
//! IAM authentication on: every request must be signed with a known key,
//! which checks our SigV4 against an independent verifier). One moto serves
//! the whole suite; each test makes its own instances.
//!
//! Faults moto cannot produce come from `tests/peers/ec2_proxy.py` (throttling,
//! instances in a transition, an endpoint that never answers, a request log)
//! and `tests/peers/imds_stub.py` (the instance metadata service, IMDSv2).
//! Upstream asks 169.254.169.254 itself (with `requests`), so it reaches the
//! stub through `HTTP_PROXY`; ours through `AWS_EC2_METADATA_SERVICE_ENDPOINT`.
//!
//! Where fencekit deliberately differs, the case says so and asserts both
//! (docs/far.md, "fence_aws"):
//! * `terminated` is off (upstream: unknown, exit 1); `pending`, `stopping`
//!   and `shutting-down` are transitions waited through (`status` prints ON,
//!   as for Redfish; upstream: unknown, exit 1);
//! * an off of the instance the agent runs on is refused (upstream stops it);
//!   a metadata service that cannot say is logged and the stop goes on
//!   (upstream skips the stop silently, then times out);
//! * credentials without permission fail at once, naming it (upstream logs
//!   the error, sends nothing and polls until its power timeout);
//! * `list-status` reads the states (upstream prints UNKNOWN);
//! * an endpoint that never answers fails within the power timeout;
//! * `off` sends `SkipOsShutdown=true` (4.12.1 knows no such option; later
//!   releases' `skip_os_shutdown`, default true), and stops again without it
//!   only when EC2's answer proves it refused the parameter.

mod support;

use fencekit::aws::sigv4;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::{free_port, peer_scripts, skip, venv_python};

const UPSTREAM: &str = "/usr/sbin/fence_aws";
const REGION: &str = "us-east-1";
const LIMIT: Duration = Duration::from_secs(60);

/// Keys of one moto user.
#[derive(Clone, Debug)]
struct Keys {
    id: String,
    secret: String,
}

/// The suite's moto server, started once (stopped by its watcher when this
/// test binary exits).
struct Moto {
    port: u16,
    admin: Keys,
    fencer: Keys,
    readonly: Keys,
    sts: Keys,
    role_arn: String,
    image_id: String,
}

impl Moto {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn keys(v: &Value) -> Keys {
    Keys {
        id: v["id"].as_str().unwrap().to_string(),
        secret: v["secret"].as_str().unwrap().to_string(),
    }
}

/// The moto server, or `None` after a SKIP line when a peer is missing.
fn moto() -> Option<&'static Moto> {
    static MOTO: OnceLock<Option<Moto>> = OnceLock::new();
    let why = if !Path::new(UPSTREAM).exists() {
        Some("upstream fence_aws not installed (Debian package fence-agents)".to_string())
    } else if !support::venv_tool("moto_server") {
        return None;
    } else if support::which("curl").is_none() || support::which("openssl").is_none() {
        Some("curl or openssl missing".to_string())
    } else {
        None
    };
    if let Some(why) = why {
        skip(&why);
        return None;
    }
    let m = MOTO.get_or_init(|| {
        let port = free_port();
        let mut cmd = Command::new("bash");
        cmd.arg(peer_scripts().join("moto_start.sh"))
            .arg(port.to_string())
            .env("MOTO_PARENT_PID", std::process::id().to_string());
        let r = support::run(cmd, LIMIT);
        assert_eq!(r.code, Some(0), "moto_start.sh failed: {r}");
        let mut cmd = Command::new(venv_python());
        cmd.arg(peer_scripts().join("moto_setup.py"))
            .arg(format!("http://127.0.0.1:{port}"));
        let r = support::run(cmd, LIMIT);
        assert_eq!(r.code, Some(0), "moto_setup.py failed: {r}");
        let v: Value = serde_json::from_str(r.stdout.trim()).expect("moto_setup.py prints JSON");
        Some(Moto {
            port,
            admin: keys(&v["admin"]),
            fencer: keys(&v["fencer"]),
            readonly: keys(&v["readonly"]),
            sts: keys(&v["sts"]),
            role_arn: v["role_arn"].as_str().unwrap().to_string(),
            image_id: v["image_id"].as_str().unwrap().to_string(),
        })
    });
    m.as_ref()
}

// ------------------------------------------------- EC2 behind the agents' backs

/// One EC2 call with the admin's keys (signed by fencekit's SigV4, which
/// moto checks), over a plain blocking HTTP/1.0 exchange.
fn ec2(m: &Moto, region: &str, params: &[(&str, &str)]) -> (u16, Vec<u8>) {
    let mut all = vec![("Version", "2016-11-15")];
    all.extend_from_slice(params);
    let body = sigv4::canonical_query(&all);
    let host = format!("127.0.0.1:{}", m.port);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let date = sigv4::amz_date(now);
    let ct = "application/x-www-form-urlencoded; charset=utf-8";
    let headers = [("content-type", ct), ("host", &host), ("x-amz-date", &date)];
    let auth = sigv4::authorization(
        &m.admin.id,
        m.admin.secret.as_bytes(),
        &sigv4::Scope {
            amz_date: &date,
            region,
            service: "ec2",
        },
        &sigv4::Request {
            method: "POST",
            path: "/",
            query: &[],
            headers: &headers,
            payload: body.as_bytes(),
        },
    );
    let mut s = TcpStream::connect(("127.0.0.1", m.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST / HTTP/1.0\r\nHost: {host}\r\nContent-Type: {ct}\r\nX-Amz-Date: {date}\r\n\
         Authorization: {auth}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, raw[split + 4..].to_vec())
}

fn ok(m: &Moto, region: &str, params: &[(&str, &str)]) -> Vec<u8> {
    let (status, body) = ec2(m, region, params);
    assert_eq!(
        status,
        200,
        "{params:?}: {}",
        String::from_utf8_lossy(&body)
    );
    body
}

/// A new running instance (tagged Name=`name` when given).
fn launch(m: &Moto, region: &str, name: Option<&str>) -> String {
    let mut p = vec![
        ("Action", "RunInstances"),
        ("ImageId", m.image_id.as_str()),
        ("MinCount", "1"),
        ("MaxCount", "1"),
    ];
    if let Some(n) = name {
        p.extend([
            ("TagSpecification.1.ResourceType", "instance"),
            ("TagSpecification.1.Tag.1.Key", "Name"),
            ("TagSpecification.1.Tag.1.Value", n),
        ]);
    }
    let body = String::from_utf8(ok(m, region, &p)).unwrap();
    let id = body
        .split("<instanceId>")
        .nth(1)
        .and_then(|s| s.split('<').next())
        .unwrap()
        .to_string();
    assert_eq!(state(m, region, &id), "running");
    id
}

/// The instance as EC2 (moto) sees it.
fn instance(m: &Moto, region: &str, id: &str) -> fencekit::aws::model::Instance {
    let body = ok(
        m,
        region,
        &[("Action", "DescribeInstances"), ("InstanceId.1", id)],
    );
    let (list, _) = fencekit::aws::model::describe_instances(&body).unwrap();
    list.into_iter().find(|i| i.id == id).unwrap()
}

fn state(m: &Moto, region: &str, id: &str) -> String {
    instance(m, region, id).state
}

/// Puts the instance in `want` (running or stopped) behind the agents' backs.
fn set_state(m: &Moto, region: &str, id: &str, want: &str) {
    if state(m, region, id) == want {
        return;
    }
    let action = if want == "running" {
        "StartInstances"
    } else {
        "StopInstances"
    };
    ok(m, region, &[("Action", action), ("InstanceId.1", id)]);
    assert_eq!(state(m, region, id), want);
}

// ------------------------------------------------------ helper processes

/// A Python helper (proxy, stub) on a free port, killed on drop.
struct Helper {
    child: Child,
    port: u16,
}

impl Helper {
    fn start(script: &str, args: &[String]) -> Helper {
        let port = free_port();
        let mut child = Command::new(venv_python())
            .arg(peer_scripts().join(script))
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while out.read(&mut b).unwrap_or(0) == 1 && b[0] != b'\n' {
            line.push(b[0]);
        }
        assert!(
            String::from_utf8_lossy(&line).starts_with("ready"),
            "{script} did not start"
        );
        Helper { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The metadata service stub, saying this process runs on `me`.
fn imds(me: &str) -> Helper {
    Helper::start("imds_stub.py", &["--instance-id".into(), me.into()])
}

/// The EC2 proxy in front of moto (or a black hole without `target`).
fn proxy(m: Option<&Moto>, extra: &[String], log: Option<&Path>) -> Helper {
    let mut a: Vec<String> = extra.to_vec();
    if let Some(m) = m {
        a.extend(["--target".into(), m.url()]);
    }
    if let Some(l) = log {
        a.extend(["--log".into(), l.display().to_string()]);
    }
    Helper::start("ec2_proxy.py", &a)
}

/// The actions the proxy logged, in order.
fn logged(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["action"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The StopInstances requests the proxy logged: each one's parameters
/// other than the instance (`Force`, `SkipOsShutdown`, …).
fn stops_logged(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["action"] == "StopInstances")
        .map(|v| v["params"].clone())
        .collect()
}

// ------------------------------------------------------------ the agents

/// `fence_aws` → the fencekit binary (made once).
fn ours() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-interop-aws")
            .tempdir()
            .unwrap()
            .keep();
        let link = dir.join("fence_aws");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link).unwrap();
        link
    })
}

/// What one run printed.
#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Where the agents send their requests, and what the metadata service says.
#[derive(Clone, Default)]
struct Setting {
    /// The EC2 endpoint (moto, or a proxy).
    ec2: String,
    /// The metadata stub's URL; `None`: a closed port (unreachable).
    imds: Option<String>,
    /// More environment.
    env: Vec<(String, String)>,
}

fn setting(m: &Moto, imds: &Helper) -> Setting {
    Setting {
        ec2: m.url(),
        imds: Some(imds.url()),
        env: vec![],
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    Upstream,
    Ours,
}

/// Runs one agent with `args` (and `stdin`), from `/`, with an environment
/// of its own (no ~/.aws), killed after `limit`.
fn run_agent(who: Who, s: &Setting, args: &[String], stdin: Option<&str>, limit: Duration) -> Out {
    let imds = s.imds.clone().unwrap_or_else(closed_imds);
    let mut cmd = match who {
        Who::Upstream => {
            let mut c = Command::new(venv_python());
            c.arg(UPSTREAM);
            c
        }
        Who::Ours => Command::new(ours()),
    };
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", "/nonexistent")
        .env("PYTHONWARNINGS", "ignore")
        .env("AWS_ENDPOINT_URL", &s.ec2)
        // Upstream reaches 169.254.169.254 through this proxy (the stub);
        // everything on loopback goes direct.
        .env("HTTP_PROXY", &imds)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", &imds)
        .env("FENCEKIT_LOCK_SCOPE", support::lock_scope())
        .envs(s.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir("/")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let t0 = Instant::now();
    let mut child = cmd.spawn().expect("spawn the agent");
    if let Some(text) = stdin {
        let _ = child.stdin.take().unwrap().write_all(text.as_bytes());
    }
    let pid = child.id();
    let guard = std::thread::spawn(move || {
        let t = Instant::now();
        while t.elapsed() < limit {
            if !support::pid_alive(pid) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        support::kill_group(pid, "KILL");
    });
    let o = child.wait_with_output().unwrap();
    let _ = guard.join();
    let out = Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        took: t0.elapsed(),
    };
    // No secret in our output, at any verbosity.
    if who == Who::Ours {
        if let Some(m) = moto() {
            for k in [&m.admin, &m.fencer, &m.readonly, &m.sts] {
                assert!(
                    !out.stdout.contains(&k.secret) && !out.stderr.contains(&k.secret),
                    "a secret key in the output of {args:?}"
                );
            }
        }
        assert!(
            !out.stderr.contains(WEB_TOKEN),
            "the web identity token in the output"
        );
    }
    out
}

/// The web identity token the tests hand out (never to be printed).
const WEB_TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.e30.c2lnbmF0dXJl";

fn args(k: &Keys, plug: &str, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        format!("--access-key={}", k.id),
        format!("--secret-key={}", k.secret),
        format!("--region={REGION}"),
        format!("--plug={plug}"),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// Both agents on one case, each from the instance in `start`; returns
/// (upstream, ours, state after upstream, state after ours).
struct Pair {
    up: Out,
    us: Out,
    up_state: String,
    us_state: String,
}

impl Pair {
    fn same(&self, what: &str) -> &Self {
        assert_eq!(
            (self.up.code, self.up.stdout.as_str(), self.up_state.as_str()),
            (self.us.code, self.us.stdout.as_str(), self.us_state.as_str()),
            "{what}: upstream (left) and ours (right) differ\n--- upstream stderr:\n{}\n--- our stderr:\n{}",
            self.up.stderr,
            self.us.stderr
        );
        self
    }
}

fn side_by_side(
    m: &Moto,
    s: &Setting,
    id: &str,
    start: Option<&str>,
    args: &[String],
    stdin: Option<&str>,
) -> Pair {
    if let Some(st) = start {
        set_state(m, REGION, id, st);
    }
    let up = run_agent(Who::Upstream, s, args, stdin, LIMIT);
    let up_state = state(m, REGION, id);
    if let Some(st) = start {
        set_state(m, REGION, id, st);
    }
    let us = run_agent(Who::Ours, s, args, stdin, LIMIT);
    let us_state = state(m, REGION, id);
    Pair {
        up,
        us,
        up_state,
        us_state,
    }
}

// ------------------------------------------------------------------ tests

#[test]
fn actions_match_upstream_from_running_and_stopped() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, Some("controller"));
    let stub = imds(&me);
    let s = setting(m, &stub);
    // Each case on an instance of its own, the cases side by side in time
    // (the agents mostly wait for Python to start).
    let mut cases: Vec<(&str, &str)> = Vec::new();
    for start in ["running", "stopped"] {
        for action in ["status", "on", "off", "reboot", "monitor"] {
            cases.push((start, action));
        }
    }
    std::thread::scope(|scope| {
        for (start, action) in cases {
            let s = &s;
            scope.spawn(move || {
                let id = launch(m, REGION, None);
                let a = args(&m.fencer, &id, &[&format!("--action={action}")]);
                side_by_side(m, s, &id, Some(start), &a, None)
                    .same(&format!("{action} from {start}"));
            });
        }
        // Pacemaker's stdin, the same keys.
        scope.spawn(|| {
            let id = launch(m, REGION, None);
            let stdin = format!(
                "action=status\nplug={id}\nregion={REGION}\naccess_key={}\nsecret_key={}\n",
                m.fencer.id, m.fencer.secret
            );
            let p = side_by_side(m, &s, &id, Some("running"), &[], Some(&stdin));
            p.same("status on stdin");
            assert_eq!(p.us.stdout, "Status: ON\n");
        });
    });
}

#[test]
fn the_credential_chain_matches_upstream() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    let id = launch(m, REGION, None);
    let plain = vec![
        format!("--region={REGION}"),
        format!("--plug={id}"),
        "-o".into(),
        "status".into(),
    ];
    // The environment.
    let mut s = setting(m, &stub);
    s.env = vec![
        ("AWS_ACCESS_KEY_ID".into(), m.fencer.id.clone()),
        ("AWS_SECRET_ACCESS_KEY".into(), m.fencer.secret.clone()),
    ];
    side_by_side(m, &s, &id, Some("running"), &plain, None).same("keys from the environment");
    // A profile of the shared credentials file.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("credentials");
    std::fs::write(
        &file,
        format!(
            "[default]\naws_access_key_id = AKIAWRONGWRONGWRONG0\naws_secret_access_key = x\n\
             [fencing]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            m.fencer.id, m.fencer.secret
        ),
    )
    .unwrap();
    let mut s = setting(m, &stub);
    s.env = vec![
        (
            "AWS_SHARED_CREDENTIALS_FILE".into(),
            file.display().to_string(),
        ),
        ("AWS_PROFILE".into(), "fencing".into()),
    ];
    let p = side_by_side(m, &s, &id, Some("running"), &plain, None);
    p.same("keys from AWS_PROFILE");
    assert_eq!(p.us.stdout, "Status: ON\n");
    // The default profile's keys are wrong: both fail.
    s.env.pop();
    let p = side_by_side(m, &s, &id, Some("running"), &plain, None);
    p.same("the default profile's wrong keys");
    assert_eq!(p.us.code, Some(1));
    // The instance profile, from the metadata service (ours only: boto3
    // asks 169.254.169.254 for it, which the stub does not serve).
    let role = Helper::start(
        "imds_stub.py",
        &[
            "--instance-id".into(),
            me.clone(),
            "--role".into(),
            "fencer".into(),
            "--key".into(),
            m.fencer.id.clone(),
            "--secret".into(),
            m.fencer.secret.clone(),
        ],
    );
    let us = run_agent(Who::Ours, &setting(m, &role), &plain, None, LIMIT);
    assert_eq!(
        (us.code, us.stdout.as_str()),
        (Some(0), "Status: ON\n"),
        "{}",
        us.stderr
    );
}

#[test]
fn web_identity_through_sts_matches_upstream() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    let id = launch(m, REGION, None);
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{WEB_TOKEN}\n")).unwrap();
    let log = dir.path().join("sts.log");
    let sts = proxy(
        Some(m),
        &[
            "--sign-sts".into(),
            format!("{}:{}", m.sts.id, m.sts.secret),
        ],
        Some(&log),
    );
    let mut s = setting(m, &stub);
    s.env = vec![
        ("AWS_ROLE_ARN".into(), m.role_arn.clone()),
        (
            "AWS_WEB_IDENTITY_TOKEN_FILE".into(),
            token.display().to_string(),
        ),
        ("AWS_ENDPOINT_URL_STS".into(), sts.url()),
    ];
    let plain = |action: &str| {
        vec![
            format!("--region={REGION}"),
            format!("--plug={id}"),
            format!("--action={action}"),
        ]
    };
    side_by_side(m, &s, &id, Some("running"), &plain("status"), None).same("web identity status");
    let p = side_by_side(m, &s, &id, Some("running"), &plain("off"), None);
    p.same("web identity off");
    assert_eq!(p.us_state, "stopped");
    // The same at the highest verbosity: the exchange is logged, no secret.
    let mut loud = plain("status");
    loud.push("-vvv".into());
    let us = run_agent(Who::Ours, &s, &loud, None, LIMIT);
    assert_eq!(us.code, Some(2), "stopped above\n{}", us.stderr);
    assert!(us.stderr.contains("web identity"), "{}", us.stderr);
    let calls = logged(&log);
    assert!(
        calls
            .iter()
            .filter(|a| *a == "AssumeRoleWithWebIdentity")
            .count()
            >= 4,
        "both agents asked STS: {calls:?}"
    );
    // A token file that is not there: both fail.
    s.env[1].1 = "/nonexistent/token".into();
    let p = side_by_side(m, &s, &id, Some("running"), &plain("status"), None);
    assert_eq!((p.up.code, p.us.code), (Some(1), Some(1)));
    assert!(
        p.us.stderr.contains("web identity token file"),
        "{}",
        p.us.stderr
    );
}

#[test]
fn every_ec2_state_as_each_agent_reads_it() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    // terminated: a terminated instance is gone, fenced: OFF (upstream: unknown).
    let gone = launch(m, REGION, None);
    ok(
        m,
        REGION,
        &[("Action", "TerminateInstances"), ("InstanceId.1", &gone)],
    );
    let s = setting(m, &stub);
    let p = side_by_side(
        m,
        &s,
        &gone,
        None,
        &args(&m.fencer, &gone, &["-o", "status"]),
        None,
    );
    assert_eq!(p.up.code, Some(1), "upstream: unknown\n{}", p.up.stderr);
    assert_eq!(
        (p.us.code, p.us.stdout.as_str()),
        (Some(2), "Status: OFF\n"),
        "{}",
        p.us.stderr
    );
    let p = side_by_side(
        m,
        &s,
        &gone,
        None,
        &args(&m.fencer, &gone, &["-o", "off"]),
        None,
    );
    assert_eq!(p.up.code, Some(1));
    assert_eq!(
        (p.us.code, p.us.stdout.as_str()),
        (Some(0), "Success: Already OFF\n")
    );
    // Transitions, as the proxy shows them: upstream says unknown (exit 1);
    // ours never says OFF before the instance is off.
    let id = launch(m, REGION, None);
    for st in ["pending", "stopping", "shutting-down"] {
        let px = proxy(Some(m), &["--state".into(), format!("{id}={st}")], None);
        let s = Setting {
            ec2: px.url(),
            ..setting(m, &stub)
        };
        let p = side_by_side(
            m,
            &s,
            &id,
            Some("running"),
            &args(&m.fencer, &id, &["-o", "status"]),
            None,
        );
        assert_eq!(p.up.code, Some(1), "{st}: upstream\n{}", p.up.stderr);
        assert_eq!(
            (p.us.code, p.us.stdout.as_str()),
            (Some(0), "Status: ON\n"),
            "{st}: ours\n{}",
            p.us.stderr
        );
    }
    // An off while the instance shows `stopping` for two reads: ours sends
    // the hard stop at once and confirms `stopped`; upstream fails.
    let px = proxy(
        Some(m),
        &["--state".into(), format!("{id}=stopping:2")],
        None,
    );
    let s = Setting {
        ec2: px.url(),
        ..setting(m, &stub)
    };
    let us = run_agent(
        Who::Ours,
        &s,
        &args(&m.fencer, &id, &["-o", "off"]),
        None,
        LIMIT,
    );
    assert_eq!(
        (us.code, us.stdout.as_str()),
        (Some(0), "Success: Powered OFF\n"),
        "{}",
        us.stderr
    );
    assert_eq!(state(m, REGION, &id), "stopped");
}

#[test]
fn bad_ids_keys_regions_and_permissions() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    let s = setting(m, &stub);
    let id = launch(m, REGION, None);
    let both_fail = |what: &str, a: &[String]| {
        let p = side_by_side(m, &s, &id, Some("running"), a, None);
        assert_eq!(
            (p.up.code, p.us.code),
            (Some(1), Some(1)),
            "{what}\n{}\n{}",
            p.up.stderr,
            p.us.stderr
        );
        assert_eq!(
            (p.up_state.as_str(), p.us_state.as_str()),
            ("running", "running"),
            "{what}"
        );
        p
    };
    // An instance that does not exist (a well-formed ID): no such instance.
    let p = both_fail(
        "unknown id",
        &args(&m.fencer, "i-0123456789abcdef0", &["-o", "off"]),
    );
    assert!(p.us.stderr.contains("no such instance"), "{}", p.us.stderr);
    // Not an instance ID at all: refused before anything is sent.
    let p = both_fail("malformed id", &args(&m.fencer, "i-xyz", &["-o", "status"]));
    assert!(
        p.us.stderr.contains("not an EC2 instance ID"),
        "{}",
        p.us.stderr
    );
    // Wrong keys: upstream says "Incorrect Access Key or Secret Key" for
    // any client error; ours names EC2's code.
    let wrong = Keys {
        id: m.fencer.id.clone(),
        secret: "wrong".into(),
    };
    let p = both_fail("wrong secret", &args(&wrong, &id, &["-o", "off"]));
    assert!(
        p.up.stderr.contains("Incorrect Access Key or Secret Key"),
        "{}",
        p.up.stderr
    );
    assert!(p.us.stderr.contains("AuthFailure"), "{}", p.us.stderr);
    // The same first line (agents/aws.toml, login_refused).
    let login_refused = "Failed: Incorrect Access Key or Secret Key.";
    let first = |o: &str| support::error_lines(o).first().map(|l| l.to_string());
    let both_first_lines_refuse = |p: &Pair| {
        assert_eq!(
            (first(&p.up.stderr), first(&p.us.stderr)),
            (Some(login_refused.into()), Some(login_refused.into())),
            "{}\n{}",
            p.up.stderr,
            p.us.stderr
        )
    };
    both_first_lines_refuse(&p);
    // An access key ID EC2 does not know: the same.
    let unknown = Keys {
        id: "AKIAWRONGWRONGWRONG0".into(),
        secret: "wrong".into(),
    };
    let p = both_fail("unknown key id", &args(&unknown, &id, &["-o", "status"]));
    both_first_lines_refuse(&p);
    // The instance is in another region.
    let mut a = args(&m.fencer, &id, &["-o", "status"]);
    a[2] = "--region=eu-west-3".into();
    let p = both_fail("wrong region", &a);
    assert!(p.us.stderr.contains("no such instance"), "{}", p.us.stderr);
    // Keys that may read but not stop: ours fails at once naming the
    // permission; upstream logs the error, sends nothing and waits out its
    // power timeout.
    let p = both_fail(
        "no permission to stop",
        &args(&m.readonly, &id, &["-o", "off", "--power-timeout=3"]),
    );
    assert!(p.us.stderr.contains("ec2:StopInstances"), "{}", p.us.stderr);
    assert!(
        p.us.took < p.up.took,
        "ours {:?}, upstream {:?}",
        p.us.took,
        p.up.took
    );
    // No region anywhere.
    let mut a = args(&m.fencer, &id, &["-o", "status"]);
    a.remove(2);
    let p = both_fail("no region", &a);
    assert!(p.us.stderr.contains("no region"), "{}", p.us.stderr);
}

#[test]
fn list_and_monitor_match_upstream() {
    let Some(m) = moto() else { return };
    // A region of this test's own: the unfiltered list is exactly its instances.
    let region = "ap-southeast-4";
    let me = launch(m, region, None);
    let stub = imds(&me);
    let s = setting(m, &stub);
    let a = launch(m, region, Some("list-a"));
    let b = launch(m, region, Some("list-b"));
    let list = |extra: &[&str]| {
        let mut v = vec![
            format!("--access-key={}", m.fencer.id),
            format!("--secret-key={}", m.fencer.secret),
            format!("--region={region}"),
        ];
        v.extend(extra.iter().map(|x| x.to_string()));
        let up = run_agent(Who::Upstream, &s, &v, None, LIMIT);
        let us = run_agent(Who::Ours, &s, &v, None, LIMIT);
        assert_eq!(
            (up.code, up.stdout.as_str()),
            (us.code, us.stdout.as_str()),
            "{extra:?}\n{}\n{}",
            up.stderr,
            us.stderr
        );
        us
    };
    let all = list(&["-o", "list"]);
    assert_eq!(all.stdout, format!("{me},\n{a},\n{b},\n"));
    let one = list(&["-o", "list", "--filter=tag:Name=list-b"]);
    assert_eq!(one.stdout, format!("{b},\n"));
    let none = list(&["-o", "list", "--filter=tag:Name=nothing-has-this"]);
    assert_eq!(none.stdout, "");
    let mon = list(&["-o", "monitor"]);
    assert_eq!((mon.code, mon.stdout.as_str()), (Some(0), ""));
    // list-status: ours reads the states (upstream prints UNKNOWN).
    set_state(m, region, &b, "stopped");
    let v = |extra: &[&str]| {
        let mut v = vec![
            format!("--access-key={}", m.fencer.id),
            format!("--secret-key={}", m.fencer.secret),
            format!("--region={region}"),
        ];
        v.extend(extra.iter().map(|x| x.to_string()));
        v
    };
    let up = run_agent(
        Who::Upstream,
        &s,
        &v(&["-o", "list-status", "--filter=tag:Name=list-b"]),
        None,
        LIMIT,
    );
    let us = run_agent(
        Who::Ours,
        &s,
        &v(&["-o", "list-status", "--filter=tag:Name=list-b"]),
        None,
        LIMIT,
    );
    assert_eq!(up.stdout, format!("{b},,UNKNOWN\n"));
    assert_eq!(us.stdout, format!("{b},,off\n"));
    // A filter that is not KEY=VALUE: ours refuses (upstream logs and lists nothing).
    let us = run_agent(
        Who::Ours,
        &s,
        &v(&["-o", "list", "--filter=vpc"]),
        None,
        LIMIT,
    );
    assert_eq!(us.code, Some(1), "{}", us.stderr);
    // Monitor with wrong keys: both fail.
    let mut bad = v(&["-o", "monitor"]);
    bad[1] = "--secret-key=wrong".into();
    let up = run_agent(Who::Upstream, &s, &bad, None, LIMIT);
    let us = run_agent(Who::Ours, &s, &bad, None, LIMIT);
    assert_eq!(
        (up.code, us.code),
        (Some(1), Some(1)),
        "{}\n{}",
        up.stderr,
        us.stderr
    );
    let first = |o: &str| support::error_lines(o).first().map(|l| l.to_string());
    assert_eq!(
        first(&us.stderr),
        first(&up.stderr),
        "{}\n{}",
        up.stderr,
        us.stderr
    );
}

#[test]
fn a_throttled_api_is_waited_out_and_a_dead_endpoint_is_bounded() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    let id = launch(m, REGION, None);
    // Two RequestLimitExceeded answers, then the real one: both succeed
    // (boto3 tries three times; ours backs off within the deadline). Five:
    // boto3 gives up ("Incorrect Access Key or Secret Key"), ours goes on.
    for (throttled, agent, ok) in [
        (2, Who::Upstream, true),
        (2, Who::Ours, true),
        (5, Who::Upstream, false),
        (5, Who::Ours, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("p.log");
        let px = proxy(
            Some(m),
            &["--throttle".into(), throttled.to_string()],
            Some(&log),
        );
        let s = Setting {
            ec2: px.url(),
            ..setting(m, &stub)
        };
        set_state(m, REGION, &id, "running");
        let o = run_agent(
            agent,
            &s,
            &args(&m.fencer, &id, &["-o", "off"]),
            None,
            LIMIT,
        );
        let want = if ok {
            (Some(0), "Success: Powered OFF\n")
        } else {
            (Some(1), "")
        };
        assert_eq!(
            (o.code, o.stdout.as_str()),
            want,
            "{agent:?} {throttled}\n{}",
            o.stderr
        );
        let sent = logged(&log).len();
        assert!(!ok || sent > throttled, "{agent:?}: {:?}", logged(&log));
        println!(
            "{agent:?}, {throttled} throttled: exit {:?} after {sent} request(s)",
            o.code
        );
    }
    // Throttled for good: ours gives up within the power timeout.
    let px = proxy(Some(m), &["--throttle".into(), "100000".into()], None);
    let s = Setting {
        ec2: px.url(),
        ..setting(m, &stub)
    };
    let us = run_agent(
        Who::Ours,
        &s,
        &args(&m.fencer, &id, &["-o", "status", "--power-timeout=3"]),
        None,
        LIMIT,
    );
    assert_eq!(us.code, Some(1), "{}", us.stderr);
    assert!(us.stderr.contains("RequestLimitExceeded"), "{}", us.stderr);
    assert!(us.took < Duration::from_secs(6), "{:?}", us.took);
    // An endpoint that accepts and never answers: ours fails within its
    // power timeout; upstream (boto3: 60 s per attempt, retried) is still
    // waiting when it is killed.
    let hole = proxy(None, &[], None);
    let s = Setting {
        ec2: hole.url(),
        ..setting(m, &stub)
    };
    let a = args(&m.fencer, &id, &["-o", "status", "--power-timeout=3"]);
    let us = run_agent(Who::Ours, &s, &a, None, LIMIT);
    assert_eq!(us.code, Some(1), "{}", us.stderr);
    assert!(us.took < Duration::from_secs(6), "{:?}", us.took);
    assert!(us.stderr.contains("no answer"), "{}", us.stderr);
    let up = run_agent(Who::Upstream, &s, &a, None, Duration::from_secs(8));
    assert_ne!(
        up.code,
        Some(0),
        "upstream cannot succeed against a black hole"
    );
    println!(
        "black hole: ours exit {:?} after {:?}; upstream exit {:?} after {:?} (None: killed)",
        us.code, us.took, up.code, up.took
    );
}

#[test]
fn the_self_fencing_guard_refuses_what_upstream_does() {
    let Some(m) = moto() else { return };
    let id = launch(m, REGION, None);
    // The metadata service says the agent runs on the target itself.
    let stub = imds(&id);
    let s = setting(m, &stub);
    let a = args(&m.fencer, &id, &["-o", "off"]);
    let p = side_by_side(m, &s, &id, Some("running"), &a, None);
    assert_eq!(
        (p.up.code, p.up_state.as_str()),
        (Some(0), "stopped"),
        "upstream stops itself"
    );
    assert_eq!(
        (p.us.code, p.us_state.as_str()),
        (Some(1), "running"),
        "{}",
        p.us.stderr
    );
    assert!(p.us.stderr.contains("self-fencing"), "{}", p.us.stderr);
    let allowed = args(&m.fencer, &id, &["-o", "off", "--allow-self-fence"]);
    let us = run_agent(Who::Ours, &s, &allowed, None, LIMIT);
    assert_eq!(
        (us.code, state(m, REGION, &id).as_str()),
        (Some(0), "stopped"),
        "{}",
        us.stderr
    );
    // The metadata service does not answer: upstream skips the stop without
    // a word and times out; ours says so and stops.
    let other = launch(m, REGION, None);
    let s = Setting {
        imds: None,
        ..setting(m, &stub)
    };
    let a = args(&m.fencer, &other, &["-o", "off", "--power-timeout=3", "-v"]);
    let p = side_by_side(m, &s, &other, Some("running"), &a, None);
    assert_eq!(
        (p.up.code, p.up_state.as_str()),
        (Some(1), "running"),
        "{}",
        p.up.stderr
    );
    assert_eq!(
        (p.us.code, p.us_state.as_str()),
        (Some(0), "stopped"),
        "{}",
        p.us.stderr
    );
    assert!(
        p.us.stderr.contains("self-fencing guard not applied"),
        "{}",
        p.us.stderr
    );
}

#[test]
fn far_argv_fences_and_a_killed_attempt_is_not_repeated() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    let id = launch(m, REGION, Some("worker-0"));
    let node = instance(m, REGION, &id).private_dns_name.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("far.log");
    let px = proxy(Some(m), &[], Some(&log));
    let s = Setting {
        ec2: px.url(),
        ..setting(m, &stub)
    };
    // FAR's argv: --key=value in map order, --action=reboot, the e2e suite's
    // --skip-race-check, and the node name pin.
    let far = |action: &str, extra: &[&str]| {
        let mut v = vec![
            format!("--secret-key={}", m.fencer.secret),
            "--skip-race-check".to_string(),
            format!("--plug={id}"),
            format!("--action={action}"),
            format!("--expect-node-name={node}"),
            format!("--region={REGION}"),
            format!("--access-key={}", m.fencer.id),
        ];
        v.extend(extra.iter().map(|x| x.to_string()));
        v
    };
    let o = run_agent(Who::Ours, &s, &far("reboot", &[]), None, LIMIT);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(0), "Success: Rebooted\n"),
        "{}",
        o.stderr
    );
    assert_eq!(state(m, REGION, &id), "running");
    let acts = logged(&log);
    let count = |a: &str, acts: &[String]| acts.iter().filter(|x| *x == a).count();
    assert_eq!(
        (
            count("StopInstances", &acts),
            count("StartInstances", &acts)
        ),
        (1, 1),
        "{acts:?}"
    );
    // FAR's template validation: separate elements, status.
    let mut v = vec![
        "--action".to_string(),
        "status".into(),
        "--region".into(),
        REGION.into(),
        "--plug".into(),
        id.clone(),
        "--access-key".into(),
        m.fencer.id.clone(),
        "--secret-key".into(),
        m.fencer.secret.clone(),
    ];
    let o = run_agent(Who::Ours, &s, &v, None, LIMIT);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(0), "Status: ON\n"),
        "{}",
        o.stderr
    );
    // SIGKILL after the stop went out (during --power-wait), then FAR's
    // retry: the instance is read first, found stopped, and not stopped
    // again; the reboot's start follows once.
    for action in ["off", "reboot"] {
        set_state(m, REGION, &id, "running");
        std::fs::write(&log, "").unwrap();
        let slow = run_agent_killed(&s, &far(action, &["--power-wait=20"]), &log);
        assert!(
            slow,
            "{action}: the first attempt sent its stop before the kill"
        );
        let o = run_agent(Who::Ours, &s, &far(action, &[]), None, LIMIT);
        assert_eq!(o.code, Some(0), "{action} retry\n{}", o.stderr);
        let acts = logged(&log);
        assert_eq!(count("StopInstances", &acts), 1, "{action}: {acts:?}");
        let want = if action == "off" {
            ("stopped", 0)
        } else {
            ("running", 1)
        };
        assert_eq!(
            (
                state(m, REGION, &id).as_str(),
                count("StartInstances", &acts)
            ),
            want,
            "{action}: {acts:?}"
        );
    }
    // A wrong node name: nothing changes, exit 1 (agent and native).
    set_state(m, REGION, &id, "running");
    std::fs::write(&log, "").unwrap();
    let mut wrong = far("off", &[]);
    wrong[4] = "--expect-node-name=ip-10-9-9-9.ec2.internal".into();
    let o = run_agent(Who::Ours, &s, &wrong, None, LIMIT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("different machine"), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("expected PrivateDnsName ip-10-9-9-9.ec2.internal"),
        "{}",
        o.stderr
    );
    assert_eq!(state(m, REGION, &id), "running");
    assert_eq!(count("StopInstances", &logged(&log)), 0);
    // A tag pin works the same.
    v = far("off", &["--expect-tag=Name=worker-1"]);
    v.remove(4);
    let o = run_agent(Who::Ours, &s, &v, None, LIMIT);
    assert_eq!(
        (o.code, state(m, REGION, &id).as_str()),
        (Some(1), "running"),
        "{}",
        o.stderr
    );
}

/// Runs ours with `args` and SIGKILLs it once the proxy logged a
/// StopInstances; true when that happened.
fn run_agent_killed(s: &Setting, args: &[String], log: &Path) -> bool {
    let mut cmd = Command::new(ours());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", "/nonexistent")
        .env("AWS_ENDPOINT_URL", &s.ec2)
        .env(
            "AWS_EC2_METADATA_SERVICE_ENDPOINT",
            s.imds.clone().unwrap_or_else(closed_imds),
        )
        .env("FENCEKIT_LOCK_SCOPE", support::lock_scope())
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().unwrap();
    let sent = support::eventually(Duration::from_secs(20), || {
        logged(log).iter().any(|a| a == "StopInstances")
    });
    support::kill_group(child.id(), "KILL");
    let _ = child.wait();
    sent
}

/// A port nothing listens on (a metadata service that is not there).
fn closed_imds() -> String {
    static CLOSED: OnceLock<u16> = OnceLock::new();
    format!("http://127.0.0.1:{}", CLOSED.get_or_init(free_port))
}

/// `fencekit ARGS` with the fencer's secret in FENCEKIT_PASSWORD.
fn native(m: &Moto, s: &Setting, args: &[&str]) -> support::Run {
    let mut c = support::fencekit_cmd(args, &m.fencer.secret);
    c.env("AWS_ENDPOINT_URL", &s.ec2)
        .env(
            "AWS_EC2_METADATA_SERVICE_ENDPOINT",
            s.imds.clone().unwrap_or_else(closed_imds),
        )
        .env("HOME", "/nonexistent")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_REGION");
    support::run(c, LIMIT)
}

#[test]
fn the_native_driver_pins_fences_and_verifies() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    let s = setting(m, &stub);
    let id = launch(m, REGION, Some("worker-7"));
    let node = instance(m, REGION, &id).private_dns_name.unwrap();
    let target = format!("aws://{REGION}/{id}");
    let key = m.fencer.id.as_str();
    let r = native(m, &s, &["status", &target, "--access-key", key]);
    r.assert_code(0);
    // A wrong node name: exit 1, nothing changed, the reason named.
    let r = native(
        m,
        &s,
        &[
            "off",
            &target,
            "--access-key",
            key,
            "--expect-node-name",
            "ip-10-1-1-1.ec2.internal",
            "--output",
            "json",
        ],
    );
    r.assert_code(1);
    assert_eq!(r.json_result()["error_kind"], "identity-mismatch", "{r}");
    assert_eq!(state(m, REGION, &id), "running");
    // The right one, by --driver aws: off, confirmed.
    let r = native(
        m,
        &s,
        &[
            "off",
            "--driver",
            "aws",
            "--region",
            REGION,
            "--plug",
            &id,
            "--access-key",
            key,
            "--expect-node-name",
            &node,
            "--expect-tag",
            "Name=worker-7",
        ],
    );
    r.assert_code(0);
    assert_eq!(state(m, REGION, &id), "stopped");
    // verify: the EC2 API sees the instance from outside its operating
    // system, but it is the fencing device itself: its word alone is
    // device-only (`bmc-only`, exit 3), with EC2's reason for the last
    // change in the evidence; accepted as proof only when the operator says
    // so (or a probe of the node's own address agrees).
    let r = native(
        m,
        &s,
        &["verify", &target, "--access-key", key, "--output", "json"],
    );
    r.assert_code(3);
    let text = r.stdout.clone();
    assert!(text.contains("\"verdict\": \"bmc-only\""), "{r}");
    assert!(text.contains("\"witness\": \"cloud\""), "{r}");
    assert!(text.contains("StateTransitionReason"), "{r}");
    let r = native(
        m,
        &s,
        &["verify", &target, "--access-key", key, "--accept-bmc-only"],
    );
    r.assert_code(0);
    // An inventory with driver = "aws" and a node_name pin.
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv.toml");
    std::fs::write(
        &inv,
        format!(
            "[[node]]\nname = \"worker-7\"\n  [[node.fence]]\n  driver = \"aws\"\n  region = \"{REGION}\"\n  \
             plug = \"{id}\"\n  access_key = \"{key}\"\n  password_env = \"FENCEKIT_PASSWORD\"\n  \
             node_name = \"{node}\"\n"
        ),
    )
    .unwrap();
    let r = native(
        m,
        &s,
        &["on", "worker-7", "--inventory", inv.to_str().unwrap()],
    );
    r.assert_code(0);
    assert_eq!(state(m, REGION, &id), "running");
    // No keys anywhere and no metadata service: a clear error, exit 1.
    let s2 = Setting {
        imds: None,
        ..setting(m, &stub)
    };
    let r = native(m, &s2, &["status", &target]);
    r.assert_code(1);
    r.assert_mentions(&["no AWS credentials"]);
    // A malformed instance ID is a usage error: nothing contacted.
    let r = native(m, &s, &["status", &format!("aws://{REGION}/i-nope")]);
    r.assert_code(64);
}

#[test]
fn off_skips_the_os_shutdown_and_falls_back_only_on_a_proven_refusal() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    let id = launch(m, REGION, Some("worker-3"));
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[String], log: &str, flags: &[&str]| {
        let log = dir.path().join(log);
        let px = proxy(Some(m), extra, Some(&log));
        let s = Setting {
            ec2: px.url(),
            ..setting(m, &stub)
        };
        set_state(m, REGION, &id, "running");
        let mut a = args(&m.fencer, &id, &["--action=off"]);
        a.extend(flags.iter().map(|f| f.to_string()));
        let o = run_agent(Who::Ours, &s, &a, None, LIMIT);
        (o, stops_logged(&log), state(m, REGION, &id))
    };
    let force_only = serde_json::json!({"Force": "true"});
    let skipping = serde_json::json!({"Force": "true", "SkipOsShutdown": "true"});

    // moto (like EC2 since 2025) takes the parameter: one stop, with it.
    let (o, stops, st) = run(&[], "accepted.log", &[]);
    assert_eq!((o.code, st.as_str()), (Some(0), "stopped"), "{}", o.stderr);
    assert_eq!(stops, vec![skipping.clone()], "{}", o.stderr);
    assert!(!o.stderr.contains("SkipOsShutdown"), "{}", o.stderr);

    // Turned off (upstream's form, on the command line and on stdin): Force only.
    let (o, stops, st) = run(&[], "off.log", &["--skip-os-shutdown=false"]);
    assert_eq!((o.code, st.as_str()), (Some(0), "stopped"), "{}", o.stderr);
    assert_eq!(stops, vec![force_only.clone()], "{}", o.stderr);
    let log = dir.path().join("stdin.log");
    let px = proxy(Some(m), &[], Some(&log));
    let s = Setting {
        ec2: px.url(),
        ..setting(m, &stub)
    };
    set_state(m, REGION, &id, "running");
    let stdin = format!(
        "action=off\nplug={id}\nregion={REGION}\naccess_key={}\nsecret_key={}\n\
         skip_os_shutdown=0\n",
        m.fencer.id, m.fencer.secret
    );
    let o = run_agent(Who::Ours, &s, &[], Some(&stdin), LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(stops_logged(&log), vec![force_only.clone()]);
    // A value that is neither true nor false: a usage error, nothing sent.
    let o = run_agent(
        Who::Ours,
        &s,
        &args(
            &m.fencer,
            &id,
            &["--action=off", "--skip-os-shutdown=maybe"],
        ),
        None,
        LIMIT,
    );
    assert_ne!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("skip_os_shutdown"), "{}", o.stderr);

    // An EC2 that refuses the parameter by name (UnknownParameter, HTTP
    // 400): nothing was done, so the stop goes again without it, and the
    // run's timeline says so (-v prints it).
    let refuse = ["--refuse-param".to_string(), "SkipOsShutdown".to_string()];
    let (o, stops, st) = run(&refuse, "refused.log", &["-v"]);
    assert_eq!((o.code, st.as_str()), (Some(0), "stopped"), "{}", o.stderr);
    assert_eq!(stops, vec![skipping.clone(), force_only], "{}", o.stderr);
    assert!(
        o.stderr
            .contains("EC2 refused SkipOsShutdown (UnknownParameter"),
        "{}",
        o.stderr
    );

    // A lost answer to the stop (carried out by moto, never answered): it
    // is not sent again, with or without the parameter.
    let lose = ["--lose-answer".to_string(), "StopInstances".to_string()];
    let (o, stops, _) = run(&lose, "lost.log", &["--power-timeout=10"]);
    assert_eq!(stops, vec![skipping], "{}", o.stderr);
    assert!(!o.stderr.contains("EC2 refused"), "{}", o.stderr);
}

/// An endpoint that quotes the request's credentials back (issue 42's
/// defect class): the session token fencekit signed with is never printed,
/// at any verbosity; the secret key itself is never sent.
#[test]
fn an_echoed_session_token_is_never_printed() {
    if !support::venv_tool("python") {
        return;
    }
    let px = proxy(None, &["--echo".into()], None);
    let token = "FwoGZXIvYXdzEchoedSessionToken0123456789";
    let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    for verbose in [None, Some("-vvv")] {
        let s = Setting {
            ec2: px.url(),
            imds: None,
            env: vec![
                ("AWS_ACCESS_KEY_ID".into(), "ASIAECHOTEST00000000".into()),
                ("AWS_SECRET_ACCESS_KEY".into(), secret.into()),
                ("AWS_SESSION_TOKEN".into(), token.into()),
            ],
        };
        let mut a = vec![
            format!("--region={REGION}"),
            "--plug=i-0123456789abcdef0".to_string(),
            "-o".into(),
            "status".into(),
        ];
        a.extend(verbose.map(String::from));
        let o = run_agent(Who::Ours, &s, &a, None, LIMIT);
        let text = format!("{}{}", o.stdout, o.stderr);
        assert_eq!(o.code, Some(1), "{text}");
        assert!(text.contains("X-Amz-Security-Token: [redacted]"), "{text}");
        for leak in [token, &token[..16], secret] {
            assert!(!text.contains(leak), "{verbose:?} leaks {leak}: {text}");
        }
    }
}

/// Issue 42 §6 on EC2: DescribeInstances for one instance answers about
/// another (`ec2_proxy.py --lie`, here a stopped decoy's id on the running
/// instance's record). An answer about another object is a contradiction:
/// status fails, never "Status: OFF", and off never says "Already OFF".
#[test]
fn an_answer_about_another_instance_is_never_believed() {
    let Some(m) = moto() else { return };
    let me = launch(m, REGION, None);
    let stub = imds(&me);
    let target = launch(m, REGION, None);
    let decoy = launch(m, REGION, None);
    set_state(m, REGION, &decoy, "stopped");
    let px = proxy(
        Some(m),
        &["--lie".into(), format!("{target}={decoy}")],
        None,
    );
    let s = Setting {
        ec2: px.url(),
        imds: Some(stub.url()),
        env: vec![],
    };
    let o = run_agent(
        Who::Ours,
        &s,
        &args(&m.fencer, &target, &["-o", "status"]),
        None,
        LIMIT,
    );
    assert_eq!(o.code, Some(1), "{}{}", o.stdout, o.stderr);
    assert!(!o.stdout.contains("OFF"), "{}", o.stdout);
    assert!(o.stderr.contains(&decoy), "{}", o.stderr);
    let o = run_agent(
        Who::Ours,
        &s,
        &args(&m.fencer, &target, &["-o", "off", "--power-timeout=5"]),
        None,
        LIMIT,
    );
    assert_ne!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(!o.stdout.contains("Already OFF"), "{}", o.stdout);
}
