//! Redfish against real peers, both ways:
//!
//! * our driver (through the engine) against sushy-tools' emulator over TLS
//!   and plain HTTP, checked with `curl` and the emulator's own request trace;
//! * real clients — upstream `fence_redfish` and `curl` — against the lab's
//!   Redfish service, so that the lab and the driver cannot share a bug
//!   unnoticed.
//!
//! A missing peer skips its test with a `SKIP` line, or fails it when
//! `FENCEKIT_REQUIRE_PEERS=1`. Everything runs on 127.0.0.1.

mod support;

use fencekit::engine::error::ErrorKind;
use fencekit::engine::event::Discard;
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::{Action, PowerState};
use fencekit::engine::run::{run, Cancel, Failure, Outcome};
use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::redfish::{LabRedfish, RedfishLabOptions};
use fencekit::redfish::config::{RedfishConfig, Scheme, TlsTrust};
use fencekit::redfish::driver::RedfishDriver;
use fencekit::secret::Secret;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use support::{free_port, peer_scripts, run as run_cmd, which};

const SUSHY_USER: &str = "admin";
const SUSHY_PASS: &str = "fencepass";
const LIMIT: Duration = Duration::from_secs(60);

use support::skip;

fn sushy_available(tls: bool) -> bool {
    if !support::venv_tool("sushy-emulator") {
        return false;
    }
    for tool in ["curl"]
        .iter()
        .chain(if tls { &["openssl"][..] } else { &[][..] })
    {
        if which(tool).is_none() {
            skip(&format!("no `{tool}` in PATH"));
            return false;
        }
    }
    true
}

/// One sushy-tools emulator, stopped (by its PID, through sushy_stop.sh) on drop.
struct Sushy {
    port: u16,
    tls: bool,
    dir: PathBuf,
}

impl Sushy {
    fn start(tls: bool, systems: u32, power: &str) -> Sushy {
        let port = free_port();
        let mut cmd = Command::new("bash");
        cmd.arg(peer_scripts().join("sushy_start.sh"))
            .arg(port.to_string())
            .arg(if tls { "on" } else { "off" })
            .env("SUSHY_SYSTEMS", systems.to_string())
            .env("SUSHY_POWER", power);
        let r = run_cmd(cmd, LIMIT);
        assert_eq!(r.code, Some(0), "sushy_start.sh failed: {r:?}");
        Sushy {
            port,
            tls,
            dir: support::peer_run_dir().join(format!("sushy-{port}")),
        }
    }

    fn system_uri(&self, i: u32) -> String {
        format!("/redfish/v1/Systems/00000000-0000-4000-8000-{i:012}")
    }

    fn cert(&self) -> PathBuf {
        self.dir.join("cert.pem")
    }

    fn cfg(&self) -> RedfishConfig {
        let mut c = RedfishConfig::new(
            "127.0.0.1",
            self.port,
            SUSHY_USER,
            Secret::from_str_value(SUSHY_PASS),
        );
        if self.tls {
            c.tls = TlsTrust::Verify {
                ca_cert: Some(self.cert()),
            };
        } else {
            c.scheme = Scheme::Http;
        }
        c.request_timeout = Duration::from_secs(5);
        c
    }

    /// The emulator's request log of our requests (not sushy_start.sh's
    /// readiness probes nor the `curl` checks), one JSON object per request.
    fn trace(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.join("trace.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| {
                r["headers"]["HTTP_USER_AGENT"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("fencekit/"))
            })
            .collect()
    }

    /// PowerState of system `i`, read with `curl -k`.
    fn power(&self, i: u32) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        let mut cmd = Command::new("curl");
        cmd.args(["-sk", "-u", &format!("{SUSHY_USER}:{SUSHY_PASS}")])
            .arg(format!(
                "{scheme}://127.0.0.1:{}{}",
                self.port,
                self.system_uri(i)
            ));
        let r = run_cmd(cmd, LIMIT);
        let v: Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("curl answer is not JSON ({e}): {r:?}"));
        v["PowerState"].as_str().unwrap_or("?").to_string()
    }
}

impl Drop for Sushy {
    fn drop(&mut self) {
        let mut cmd = Command::new("bash");
        cmd.arg(peer_scripts().join("sushy_stop.sh"))
            .arg(self.port.to_string());
        let _ = run_cmd(cmd, Duration::from_secs(15));
    }
}

fn policy() -> Policy {
    Policy {
        poll_interval: Duration::from_millis(20),
        poll_interval_max: Duration::from_millis(200),
        power_timeout: PowerTimeout::Wall(Duration::from_secs(10)),
        deadline: Some(fencekit::engine::clock::Instant::now() + Duration::from_secs(40)),
        ..Policy::native()
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn engine(cfg: RedfishConfig, action: Action) -> Result<Outcome, Failure> {
    rt().block_on(async {
        let mut d = RedfishDriver::new(cfg).expect("config");
        run(&mut d, action, &policy(), &mut Discard, Cancel::never()).await
    })
}

fn posted_reset_types(trace: &[Value]) -> Vec<String> {
    trace
        .iter()
        .filter(|r| r["method"] == "POST")
        .filter_map(|r| {
            let b: Value = serde_json::from_str(r["body"].as_str()?).ok()?;
            Some(b["ResetType"].as_str()?.to_string())
        })
        .collect()
}

fn sushy_actions(tls: bool) {
    if !sushy_available(tls) {
        return;
    }
    let s = Sushy::start(tls, 1, "On");
    let t = Instant::now();
    assert_eq!(
        engine(s.cfg(), Action::Status),
        Ok(Outcome::Status {
            state: PowerState::On
        })
    );
    let status_wall = t.elapsed();
    let trace = s.trace();
    assert_eq!(trace.len(), 3, "root, Systems, the system: {trace:?}");
    assert!(
        trace.iter().all(|r| r["auth"] == "Basic"),
        "basic auth on every request: {trace:?}"
    );
    assert!(trace.iter().all(|r| r["status"] == 200), "{trace:?}");

    assert_eq!(
        engine(s.cfg(), Action::Off),
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert_eq!(s.power(1), "Off");
    let mut c = s.cfg();
    c.systems_uri = Some(s.system_uri(1));
    let before = s.trace().len();
    assert_eq!(
        engine(c.clone(), Action::Status),
        Ok(Outcome::Status {
            state: PowerState::Off
        })
    );
    assert_eq!(s.trace().len() - before, 1, "one GET with --systems-uri");
    assert_eq!(
        engine(c.clone(), Action::On),
        Ok(Outcome::Reached {
            state: PowerState::On
        })
    );
    assert_eq!(s.power(1), "On");
    assert_eq!(engine(c.clone(), Action::Reboot), Ok(Outcome::Rebooted));
    assert_eq!(s.power(1), "On");
    assert_eq!(
        posted_reset_types(&s.trace()),
        vec!["ForceOff", "On", "ForceOff", "On"]
    );
    // sushy lists Nmi but answers it with 501: a device error, shown.
    let e = engine(c, Action::Diag).unwrap_err().error;
    assert_eq!(e.kind, ErrorKind::DeviceError, "{e}");
    assert!(e.message.contains("http 501"), "{e}");
    eprintln!(
        "fencekit status against sushy ({}), in-process, with discovery: {:?}",
        if tls { "tls" } else { "http" },
        status_wall
    );
}

#[test]
fn sushy_tls_status_off_on_reboot() {
    sushy_actions(true);
}

#[test]
fn sushy_plain_http_status_off_on_reboot() {
    sushy_actions(false);
}

#[test]
fn sushy_certificate_is_verified() {
    if !sushy_available(true) {
        return;
    }
    let s = Sushy::start(true, 1, "On");
    let mut c = s.cfg();
    c.tls = TlsTrust::Verify { ca_cert: None };
    let e = engine(c.clone(), Action::Status).unwrap_err().error;
    assert_eq!(e.kind, ErrorKind::Protocol, "{e}");
    assert!(e.message.contains("certificate is not trusted"), "{e}");
    assert!(
        s.trace().is_empty(),
        "no request over an unverified connection"
    );
    // sushy_start.sh's certificate is self-signed with CA:TRUE: accepted
    // only because --ca-cert pins it exactly.
    assert!(engine(s.cfg(), Action::Status).is_ok());
    let pem = std::fs::read(s.cert()).unwrap();
    let der = {
        use rustls::pki_types::{pem::PemObject, CertificateDer};
        CertificateDer::from_pem_slice(&pem).unwrap()
    };
    let fp: [u8; 32] = {
        use sha2::Digest;
        sha2::Sha256::digest(der.as_ref()).into()
    };
    c.tls = TlsTrust::Fingerprint(fp);
    assert!(engine(c.clone(), Action::Status).is_ok());
    c.tls = TlsTrust::Fingerprint([0; 32]);
    assert_eq!(
        engine(c, Action::Status).unwrap_err().error.kind,
        ErrorKind::Protocol
    );
}

#[test]
fn sushy_several_systems_need_a_choice() {
    if !sushy_available(false) {
        return;
    }
    let s = Sushy::start(false, 2, "On");
    let e = engine(s.cfg(), Action::Off).unwrap_err().error;
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(
        e.message.contains(&s.system_uri(1)) && e.message.contains(&s.system_uri(2)),
        "{e}"
    );
    assert!(posted_reset_types(&s.trace()).is_empty());
    let mut c = s.cfg();
    c.plug = Some("node2".into());
    assert_eq!(
        engine(c, Action::Off),
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert_eq!((s.power(1).as_str(), s.power(2).as_str()), ("On", "Off"));
}

// ------------------------------------------ real clients against the lab --

struct LabSetup {
    rt: tokio::runtime::Runtime,
    lab: LabRedfish,
    _dir: tempfile::TempDir,
    pem: PathBuf,
}

fn lab(on: bool) -> LabSetup {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("lab.pem");
    let lab = rt
        .block_on(LabRedfish::start(
            "127.0.0.1:0".parse().unwrap(),
            Bmc::new(on, Faults::default()),
            RedfishLabOptions {
                cert_path: Some(pem.clone()),
                ..Default::default()
            },
        ))
        .unwrap();
    LabSetup {
        rt,
        lab,
        _dir: dir,
        pem,
    }
}

impl LabSetup {
    /// Runs a command while the lab keeps serving on this runtime.
    fn run(&self, cmd: Command) -> support::Run {
        self.rt
            .block_on(async move { tokio::task::spawn_blocking(move || run_cmd(cmd, LIMIT)).await })
            .expect("command thread")
    }

    fn fence_redfish(&self, extra: &[&str], action: &str) -> support::Run {
        let mut cmd = support::tool("fence_redfish");
        cmd.args(["--ip", "127.0.0.1", "--ipport"])
            .arg(self.lab.addr.port().to_string())
            .args(["--username", "admin", "--password", "lab", "--ssl-insecure"])
            .args(extra)
            .args(["-o", action]);
        self.run(cmd)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.lab.base_url())
    }
}

#[test]
fn upstream_fence_redfish_drives_the_lab() {
    if which("fence_redfish").is_none() {
        skip("fence_redfish not installed (Debian package fence-agents)");
        return;
    }
    let l = lab(true);
    let sys = l.lab.system_uri();
    for extra in [vec![], vec!["--systems-uri", sys.as_str()]] {
        let r = l.fence_redfish(&extra, "status");
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (Some(0), "Status: ON\n"),
            "{r:?}"
        );
        let r = l.fence_redfish(&extra, "off");
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (Some(0), "Success: Powered OFF\n"),
            "{r:?}"
        );
        assert!(!l.lab.bmc.is_on());
        let r = l.fence_redfish(&extra, "status");
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (Some(2), "Status: OFF\n"),
            "{r:?}"
        );
        let r = l.fence_redfish(&extra, "on");
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (Some(0), "Success: Powered ON\n"),
            "{r:?}"
        );
        assert!(l.lab.bmc.is_on());
    }
    assert_eq!(
        l.lab.stats().resets,
        vec!["ForceOff", "On", "ForceOff", "On"]
    );
    // Wrong password: upstream fails (it does not read the 401 itself,
    // but finds no PowerState in the error body).
    let mut cmd = support::tool("fence_redfish");
    cmd.args(["--ip", "127.0.0.1", "--ipport"])
        .arg(l.lab.addr.port().to_string())
        .args([
            "--username",
            "admin",
            "--password",
            "wrong",
            "--ssl-insecure",
        ])
        .args(["--systems-uri", sys.as_str(), "-o", "status"]);
    let r = l.run(cmd);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(l.lab.stats().auth_failures >= 1);
}

#[test]
fn curl_talks_to_the_lab() {
    if which("curl").is_none() {
        skip("no `curl` in PATH");
        return;
    }
    let l = lab(true);
    let sys = l.lab.system_uri();
    // Verified against the written certificate (OpenSSL takes a CA:TRUE
    // self-signed certificate as its own anchor), two requests on one
    // kept-alive connection.
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--fail", "--cacert"])
        .arg(&l.pem)
        .args(["-u", "admin:lab"])
        .arg(l.url(&sys))
        .arg(l.url("/redfish/v1"));
    let r = l.run(cmd);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("\"PowerState\":\"On\""), "{r:?}");
    assert!(r.stdout.contains("\"Systems\""), "{r:?}");
    assert_eq!(l.lab.stats().connections, 1, "keep-alive");
    // A reset.
    let mut cmd = Command::new("curl");
    cmd.args([
        "-sS",
        "-k",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-u",
        "admin:lab",
    ])
    .args([
        "-H",
        "Content-Type: application/json",
        "-d",
        r#"{"ResetType": "ForceOff"}"#,
    ])
    .arg(l.url(&format!("{sys}/Actions/ComputerSystem.Reset")));
    let r = l.run(cmd);
    assert_eq!(r.stdout, "204", "{r:?}");
    assert!(!l.lab.bmc.is_on());
    // A session: created, used, deleted.
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "-k", "-D", "-", "-o", "/dev/null"])
        .args(["-H", "Content-Type: application/json"])
        .args(["-d", r#"{"UserName": "admin", "Password": "lab"}"#])
        .arg(l.url("/redfish/v1/SessionService/Sessions"));
    let r = l.run(cmd);
    let header = |name: &str| {
        r.stdout
            .lines()
            .find_map(|h| {
                let (k, v) = h.split_once(':')?;
                k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no {name} header: {r:?}"))
    };
    let (token, location) = (header("x-auth-token"), header("location"));
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "-k", "--fail", "-H"])
        .arg(format!("X-Auth-Token: {token}"))
        .arg(l.url(&sys));
    let r2 = l.run(cmd);
    assert!(r2.stdout.contains("\"PowerState\":\"Off\""), "{r2:?}");
    let mut cmd = Command::new("curl");
    cmd.args([
        "-sS",
        "-k",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-X",
        "DELETE",
        "-H",
    ])
    .arg(format!("X-Auth-Token: {token}"))
    .arg(l.url(&location));
    let r3 = l.run(cmd);
    assert_eq!(r3.stdout, "204", "{r3:?}");
    let s = l.lab.stats();
    assert_eq!((s.sessions_created, s.sessions_deleted), (1, 1));
}

#[test]
fn status_wall_time_side_by_side_against_sushy() {
    if !sushy_available(true) || which("fence_redfish").is_none() {
        if which("fence_redfish").is_none() {
            skip("fence_redfish not installed (Debian package fence-agents)");
        }
        return;
    }
    let s = Sushy::start(true, 1, "On");
    let sys = s.system_uri(1);
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let mut ours = Vec::new();
    let mut upstream = Vec::new();
    let mut curl = Vec::new();
    for _ in 0..5 {
        let mut c = s.cfg();
        c.systems_uri = Some(sys.clone());
        let t = Instant::now();
        assert!(engine(c, Action::Status).is_ok());
        ours.push(t.elapsed());
        let mut cmd = support::tool("fence_redfish");
        cmd.args(["--ip", "127.0.0.1", "--ipport"])
            .arg(s.port.to_string())
            .args([
                "--username",
                SUSHY_USER,
                "--password",
                SUSHY_PASS,
                "--ssl-insecure",
            ])
            .args(["--systems-uri", sys.as_str(), "-o", "status"]);
        let r = run_cmd(cmd, LIMIT);
        assert_eq!(r.code, Some(0), "{r:?}");
        upstream.push(r.elapsed);
        let mut cmd = Command::new("curl");
        cmd.args([
            "-sk",
            "-o",
            "/dev/null",
            "-u",
            &format!("{SUSHY_USER}:{SUSHY_PASS}"),
        ])
        .arg(format!("https://127.0.0.1:{}{sys}", s.port));
        let r = run_cmd(cmd, LIMIT);
        assert_eq!(r.code, Some(0), "{r:?}");
        curl.push(r.elapsed);
    }
    let (ours, upstream, curl) = (median(ours), median(upstream), median(curl));
    eprintln!(
        "status against sushy TLS with --systems-uri, median of 5: fencekit driver \
         (in-process, no process start) {ours:?}, fence_redfish {upstream:?}, curl {curl:?}"
    );
    assert!(
        ours < upstream,
        "ours {ours:?} vs fence_redfish {upstream:?}"
    );
}

#[test]
fn sushy_identity_uuid_choice_and_no_power_reading() {
    if !sushy_available(false) {
        return;
    }
    use fencekit::engine::driver::PowerDriver;
    let s = Sushy::start(false, 2, "On");
    // An expected UUID chooses among several systems (no --systems-uri).
    let mut c = s.cfg();
    c.expect_uuid = Some("00000000-0000-4000-8000-000000000002".into());
    assert_eq!(
        engine(c.clone(), Action::Off),
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert_eq!((s.power(1).as_str(), s.power(2).as_str()), ("On", "Off"));
    rt().block_on(async {
        let mut d = RedfishDriver::new(c.clone()).unwrap();
        d.connect(None).await.unwrap();
        assert_eq!(d.system_uri(), Some(s.system_uri(2).as_str()));
        let before = d.stats().requests;
        let id = d.identity(None).await.unwrap();
        assert_eq!(
            id.primary_uuid(),
            Some("00000000-0000-4000-8000-000000000002")
        );
        assert_eq!(d.stats().requests, before, "no request of its own");
        // sushy-tools 2.2.0 serves Chassis without Power: no reading, no failure.
        assert_eq!(d.power_reading(None).await, Ok(None));
        d.close().await;
    });
    // No system reports the UUID: refused, both named, nothing sent.
    let posts = posted_reset_types(&s.trace()).len();
    c.expect_uuid = Some("11111111-2222-3333-4444-555555555555".into());
    let e = engine(c, Action::Off).unwrap_err().error;
    // No system is the pinned machine: a wrong machine, stage identity (the
    // fleet tries no further level); several claiming it would be Config.
    assert_eq!(e.kind, ErrorKind::IdentityMismatch);
    assert!(
        e.message.contains("no system")
            && e.message.contains(&s.system_uri(1))
            && e.message.contains(&s.system_uri(2)),
        "{e}"
    );
    assert_eq!(posted_reset_types(&s.trace()).len(), posts);
}

/// Issue 42 §3: a BMC whose certificate has a 1024-bit RSA key, with
/// `--ssl-insecure`: fencekit refuses naming the key size (ring verifies
/// no RSA handshake signature below 2048 bits) and advises no flag, as
/// `fencekit status` and as the drop-in. Upstream (OpenSSL, verification
/// off) completes the handshake: a documented difference (docs/design.md).
#[test]
fn a_1024_bit_rsa_key_is_refused_by_name_under_ssl_insecure() {
    use support::small_key::SmallKeyServer;
    let Some(srv) = SmallKeyServer::start() else {
        return;
    };
    let r = support::fencekit(
        &[
            "status",
            &format!("redfish://admin@127.0.0.1:{}", srv.port),
            "--ssl-insecure",
        ],
        "secret",
    );
    SmallKeyServer::assert_refused(&r);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("fence_redfish");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link).unwrap();
    let mut c = Command::new(&link);
    c.args(["--ip", &format!("127.0.0.1:{}", srv.port), "-l", "admin"])
        .args(["-p", "secret", "--ssl-insecure", "-o", "status"])
        .env("HOME", dir.path())
        .env("XDG_RUNTIME_DIR", dir.path());
    let r = run_cmd(c, Duration::from_secs(30));
    SmallKeyServer::assert_refused(&r);
    if which("fence_redfish").is_some() {
        let mut c = Command::new("/usr/bin/python3");
        c.arg(which("fence_redfish").unwrap())
            .args(["--ip", &format!("127.0.0.1:{}", srv.port), "-l", "admin"])
            .args(["-p", "secret", "--ssl-insecure", "-o", "status", "-v"]);
        let r = run_cmd(c, Duration::from_secs(30));
        // Past the handshake: the test server's page is no Redfish JSON.
        assert_eq!(r.code, Some(1), "{r}");
        assert!(r.text().contains("http/1.1\" 200"), "{r}");
    }
}
