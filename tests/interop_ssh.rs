//! The SSH driver against a real OpenSSH server (`tests/peers/sshd_start.sh`):
//! user `fencetest` with a password and a key, and behind it a state-keeping
//! `virsh` on libvirt's test driver (node1 on, node2 off) and a `power`
//! script. Every power change is checked on the server's side (the shim's
//! own `virsh domstate`, or the power script's state files), not only
//! through our driver.
//!
//! The peer keeps its state in `~fencetest`, shared by every sshd started
//! from the script, so the tests here run one at a time (a process-wide
//! lock) and each starts its own sshd (which resets the state) and stops it
//! on drop. A missing peer skips its test with a `SKIP` line, or fails it
//! when `FENCEKIT_REQUIRE_PEERS=1`. Everything runs on 127.0.0.1.

mod support;

use fencekit::engine::driver::PowerDriver;
use fencekit::engine::error::{DriverError, ErrorKind};
use fencekit::engine::event::Discard;
use fencekit::engine::policy::Policy;
use fencekit::engine::power::{Action, PowerCommand, PowerState};
use fencekit::engine::run::{run, Cancel, Outcome};
use fencekit::secret::Secret;
use fencekit::ssh::config::{Profile, SshAuth, SshConfig};
use fencekit::ssh::driver::SshDriver;
use fencekit::ssh::hostkey;
use fencekit::ssh::hostkey::HostKeyPolicy;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{
    free_port, peer_available, run as run_cmd, serial, Sshd, SSH_PASS as PASS, SSH_USER as USER,
};
const HOST: &str = "127.0.0.1";
const LIMIT: Duration = Duration::from_secs(60);

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fencekit-ssh-")
        .tempdir()
        .expect("tempdir")
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn native() -> Policy {
    Policy {
        deadline: Some(fencekit::engine::clock::Instant::now() + LIMIT),
        ..Policy::native()
    }
}

/// Runs one action through the engine with a fresh driver.
fn act(cfg: SshConfig, action: Action) -> Result<Outcome, DriverError> {
    let mut d = SshDriver::new(cfg).expect("config");
    rt().block_on(async {
        run(&mut d, action, &native(), &mut Discard, Cancel::never())
            .await
            .map_err(|f| f.error)
    })
}

/// Connects with a fresh driver (host key and authentication only).
fn connect(cfg: SshConfig, limit: Duration) -> (Result<String, DriverError>, SshDriver) {
    let mut d = SshDriver::new(cfg).expect("config");
    let r = rt().block_on(async {
        let r = d.connect(Some(Instant::now() + limit)).await;
        d.close().await;
        r
    });
    (r, d)
}

fn status(cfg: SshConfig) -> Result<PowerState, DriverError> {
    match act(cfg, Action::Status)? {
        Outcome::Status { state } => Ok(state),
        other => panic!("status gave {other:?}"),
    }
}

// ------------------------------------------------------------ the actions --

#[test]
fn key_auth_status_off_on_reboot() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    assert_eq!(status(s.virsh(s.key_auth(), "node1")), Ok(PowerState::On));
    assert_eq!(status(s.virsh(s.key_auth(), "node2")), Ok(PowerState::Off));

    let r = act(s.virsh(s.key_auth(), "node1"), Action::Off);
    assert_eq!(
        r,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert_eq!(s.domstate("node1"), "shut off");

    let r = act(s.virsh(s.key_auth(), "node1"), Action::Off);
    assert_eq!(
        r,
        Ok(Outcome::Already {
            state: PowerState::Off
        })
    );

    let r = act(s.virsh(s.key_auth(), "node1"), Action::On);
    assert_eq!(
        r,
        Ok(Outcome::Reached {
            state: PowerState::On
        })
    );
    assert_eq!(s.domstate("node1"), "running");

    let r = act(s.virsh(s.key_auth(), "node1"), Action::Reboot);
    assert_eq!(r, Ok(Outcome::Rebooted));
    assert_eq!(s.domstate("node1"), "running");

    // reboot of a stopped domain: off is already confirmed, then on.
    let r = act(s.virsh(s.key_auth(), "node2"), Action::Reboot);
    assert_eq!(r, Ok(Outcome::Rebooted));
    assert_eq!(s.domstate("node2"), "running");
    // the destroys and starts really happened on the server
    let log = s.log();
    assert!(log.contains("Accepted publickey for fencetest"), "{log}");
}

#[test]
fn one_session_per_action() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let mut d = SshDriver::new(s.virsh(s.key_auth(), "node1")).unwrap();
    let r = rt().block_on(run(
        &mut d,
        Action::Reboot,
        &native(),
        &mut Discard,
        Cancel::never(),
    ));
    assert_eq!(r.map_err(|f| f.error), Ok(Outcome::Rebooted));
    let st = d.stats();
    assert_eq!(st.sessions, 1, "{st:?}");
    assert_eq!(st.auth_attempts, 1, "{st:?}");
    // domstate, destroy, (domstate ×2 confirm), start, (domstate ×2)
    assert!(st.commands >= 5, "{st:?}");
}

#[test]
fn password_auth_status_and_off() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let pw = || SshAuth::Password(Secret::from_str_value(PASS));
    assert_eq!(status(s.virsh(pw(), "node1")), Ok(PowerState::On));
    let r = act(s.virsh(pw(), "node1"), Action::Off);
    assert_eq!(
        r,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert_eq!(s.domstate("node1"), "shut off");
    let r = act(s.virsh(pw(), "node2"), Action::On);
    assert_eq!(
        r,
        Ok(Outcome::Reached {
            state: PowerState::On
        })
    );
    assert_eq!(s.domstate("node2"), "running");
    assert!(s.log().contains("Accepted password for fencetest"));
}

/// An ssh-agent of our own (its socket in a tempdir), killed on drop.
struct Agent {
    child: std::process::Child,
    sock: PathBuf,
    _dir: tempfile::TempDir,
}

impl Agent {
    fn start(key: &Path) -> Agent {
        use std::os::unix::process::CommandExt;
        let dir = tempdir();
        let sock = dir.path().join("agent.sock");
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&sock)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("ssh-agent");
        assert!(
            support::eventually(Duration::from_secs(5), || sock.exists()),
            "ssh-agent did not create its socket"
        );
        let mut add = Command::new("ssh-add");
        add.arg(key).env("SSH_AUTH_SOCK", &sock);
        run_cmd(add, Duration::from_secs(10)).assert_code(0);
        Agent {
            child,
            sock,
            _dir: dir,
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn agent_auth_status_and_off() {
    let _g = serial();
    if !(peer_available("ssh-agent") && peer_available("ssh-add")) {
        return;
    }
    let Some(s) = Sshd::start() else { return };
    let agent = Agent::start(&s.key());
    let sock = agent.sock.clone();
    let cfg = || {
        let mut c = s.virsh(SshAuth::Agent, "node1");
        c.agent_socket = Some(sock.clone());
        c
    };
    assert_eq!(status(cfg()), Ok(PowerState::On));
    let r = act(cfg(), Action::Off);
    assert_eq!(
        r,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert_eq!(s.domstate("node1"), "shut off");
    drop(agent);
    // with the agent gone, the failure names it
    let e = status(cfg()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.message.contains("ssh-agent"), "{e}");
}

#[test]
fn uuid_plug_is_normalised_and_missing_domains_are_classified() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    // upper case, no hyphens: virsh gets the canonical form
    for spelling in [
        "00000000000040008000000000000001",
        "{00000000-0000-4000-8000-000000000001}",
    ] {
        assert_eq!(
            status(s.virsh(s.key_auth(), spelling)),
            Ok(PowerState::On),
            "{spelling}"
        );
    }
    let r = status(s.virsh(s.key_auth(), "00000000-0000-4000-8000-00000000000A"));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::DeviceError, "{e}");
    assert!(e.message.contains("domain not found"), "{e}");
    let mut cfg = s.virsh(s.key_auth(), "no-such-vm");
    cfg.missing_as_off = true;
    assert_eq!(status(cfg.clone()), Ok(PowerState::Off));
    // off of a missing domain with --missing-as-off: already off
    assert_eq!(
        act(cfg, Action::Off),
        Ok(Outcome::Already {
            state: PowerState::Off
        })
    );
}

#[test]
fn destroy_of_a_stopped_domain_is_not_in_present_state() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let mut d = SshDriver::new(s.virsh(s.key_auth(), "node2")).unwrap();
    let e = rt()
        .block_on(async {
            let deadline = Some(Instant::now() + LIMIT);
            d.connect(deadline).await?;
            let r = d.command(PowerCommand::Off, deadline).await;
            d.close().await;
            r
        })
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotInPresentState, "{e}");
    assert!(e.message.contains("domain is not running"), "{e}");
}

#[test]
fn list_shows_every_domain() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let mut d = SshDriver::new(s.cfg(s.key_auth(), Profile::Virsh { plug: None })).unwrap();
    let list = rt()
        .block_on(async {
            let r = d.list(Some(Instant::now() + LIMIT)).await;
            d.close().await;
            r
        })
        .unwrap();
    assert_eq!(
        list,
        vec![
            ("node1".to_string(), Some(PowerState::On)),
            ("node2".to_string(), Some(PowerState::Off)),
        ]
    );
}

// ------------------------------------------------------------ host keys --

#[test]
fn unknown_host_key_is_rejected_with_its_fingerprint() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let accepted_before = count(&s.log(), "Accepted");
    let dir = tempdir();
    let empty = dir.path().join("known_hosts");
    fs::write(&empty, "").unwrap();
    let mut cfg = s.virsh(s.key_auth(), "node1");
    cfg.host_keys = HostKeyPolicy::KnownHosts(Some(empty.clone()));
    let (r, d) = connect(cfg, Duration::from_secs(10));
    let e = r.unwrap_err();
    let fp = s.fingerprint();
    assert!(matches!(e.kind, ErrorKind::Protocol), "{e}");
    assert!(e.message.contains(&fp), "message lacks {fp}: {e}");
    assert!(e.message.contains("not known"), "{e}");
    assert!(e.message.contains("--ssh-accept-new"), "{e}");
    assert_eq!(
        d.stats().auth_attempts,
        0,
        "no credential goes to an unknown host"
    );
    assert_eq!(
        count(&s.log(), "Accepted"),
        accepted_before,
        "nothing authenticated: {}",
        s.log()
    );
}

/// A known_hosts line for the server's address with a key that is not its own.
fn other_key_line(port: u16, dir: &Path) -> String {
    let key = dir.join("other");
    let mut c = Command::new("ssh-keygen");
    c.args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(&key);
    run_cmd(c, Duration::from_secs(10)).assert_code(0);
    let public = fs::read_to_string(key.with_extension("pub")).unwrap();
    let mut words = public.split_whitespace();
    format!(
        "[127.0.0.1]:{port} {} {}\n",
        words.next().unwrap(),
        words.next().unwrap()
    )
}

#[test]
fn changed_host_key_is_rejected() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempdir();
    let file = dir.path().join("known_hosts");
    fs::write(
        &file,
        format!("# comment\n{}", other_key_line(s.port, dir.path())),
    )
    .unwrap();
    for policy in [
        HostKeyPolicy::KnownHosts(Some(file.clone())),
        HostKeyPolicy::AcceptNew(Some(file.clone())),
    ] {
        let mut cfg = s.virsh(s.key_auth(), "node1");
        cfg.host_keys = policy.clone();
        let before = (count(&s.log(), "Accepted"), count(&s.log(), "Postponed"));
        let (r, d) = connect(cfg, Duration::from_secs(10));
        let e = r.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Protocol, "{policy:?}: {e}");
        assert!(e.message.contains("CHANGED"), "{e}");
        // refused before authentication: no credential reached the server
        assert_eq!(d.stats().auth_attempts, 0);
        let log = s.log();
        let after = (count(&log, "Accepted"), count(&log, "Postponed"));
        assert_eq!(after, before, "{log}");
        assert_eq!(count(&log, "Failed"), 0, "{log}");
        assert!(e.message.contains(&s.fingerprint()), "{e}");
        assert!(e.message.contains(&format!("{}:2", file.display())), "{e}");
    }
    // accept-new never replaces a recorded key
    let text = fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
}

#[test]
fn hashed_known_hosts_entries_are_understood() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempdir();
    let file = dir.path().join("known_hosts");
    fs::copy(s.known_hosts(), &file).unwrap();
    let mut c = Command::new("ssh-keygen");
    c.arg("-H").arg("-f").arg(&file);
    run_cmd(c, Duration::from_secs(10)).assert_code(0);
    let text = fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("|1|"), "not hashed: {text}");
    let mut cfg = s.virsh(s.key_auth(), "node1");
    cfg.host_keys = HostKeyPolicy::KnownHosts(Some(file));
    let (r, _) = connect(cfg, Duration::from_secs(10));
    let detail = r.unwrap();
    assert!(detail.contains(&s.fingerprint()), "{detail}");

    // an entry for the plain host (port 22) does not vouch for another port
    let plain = dir.path().join("plain");
    let own = fs::read_to_string(s.host_pub()).unwrap();
    fs::write(&plain, format!("127.0.0.1 {own}")).unwrap();
    let mut cfg = s.virsh(s.key_auth(), "node1");
    cfg.host_keys = HostKeyPolicy::KnownHosts(Some(plain));
    let (r, _) = connect(cfg, Duration::from_secs(10));
    assert!(r.unwrap_err().message.contains("not known"));
}

#[test]
fn pinned_fingerprint_is_accepted_or_rejected() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let mut cfg = s.virsh(s.key_auth(), "node1");
    cfg.host_keys = HostKeyPolicy::Pinned(s.fingerprint());
    assert_eq!(status(cfg.clone()), Ok(PowerState::On));

    let wrong = hostkey::fingerprint_sha256(b"not the host key");
    cfg.host_keys = HostKeyPolicy::Pinned(wrong.clone());
    let (r, _) = connect(cfg, Duration::from_secs(10));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Protocol);
    assert!(e.message.contains(&wrong), "{e}");
    assert!(e.message.contains(&s.fingerprint()), "{e}");
}

#[test]
fn accept_new_records_an_unknown_key() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempdir();
    let file = dir.path().join("sub/known_hosts");
    let mut cfg = s.virsh(s.key_auth(), "node1");
    cfg.host_keys = HostKeyPolicy::AcceptNew(Some(file.clone()));
    let (r, _) = connect(cfg.clone(), Duration::from_secs(10));
    let detail = r.unwrap();
    assert!(detail.contains("added to"), "{detail}");
    let text = fs::read_to_string(&file).unwrap();
    let own: Vec<String> = fs::read_to_string(s.host_pub())
        .unwrap()
        .split_whitespace()
        .take(2)
        .map(str::to_string)
        .collect();
    assert_eq!(
        text,
        format!("[127.0.0.1]:{} {} {}\n", s.port, own[0], own[1])
    );
    // OpenSSH's client agrees with what was written
    let mut c = Command::new("ssh");
    c.args(["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"])
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", file.display()))
        .args(["-o", "GlobalKnownHostsFile=/dev/null", "-i"])
        .arg(s.key())
        .args(["-p", &s.port.to_string(), &format!("{USER}@{HOST}"), "true"]);
    run_cmd(c, Duration::from_secs(20)).assert_code(0);
    // the second time it is simply known, and nothing is appended
    let (r, _) = connect(cfg, Duration::from_secs(10));
    assert!(r.unwrap().contains("known in"));
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn accept_new_on_a_read_only_location_trusts_for_this_run() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let mut cfg = s.virsh(s.key_auth(), "node1");
    // /proc refuses every write, even root's.
    cfg.host_keys = HostKeyPolicy::AcceptNew(Some(PathBuf::from("/proc/fencekit-known_hosts")));
    let (r, _) = connect(cfg, Duration::from_secs(10));
    assert!(r.unwrap().contains("this run only"));
}

// --------------------------------------------------------- authentication --

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn wrong_password_fails_fast_with_one_attempt() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let before = count(&s.log(), "Failed password");
    let cfg = s.virsh(
        SshAuth::Password(Secret::from_str_value("wrong-pass")),
        "node1",
    );
    let t = Instant::now();
    let (r, d) = connect(cfg, Duration::from_secs(20));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::PasswordInvalid, "{e}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(!e.message.contains("wrong-pass"), "secret in message: {e}");
    assert_eq!(d.stats().auth_attempts, 1);
    assert!(
        support::eventually(Duration::from_secs(2), || count(
            &s.log(),
            "Failed password"
        ) == before + 1),
        "expected exactly one failed password in the server log:\n{}",
        s.log()
    );
}

#[test]
fn wrong_key_is_password_invalid_and_bad_passphrase_is_config() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempdir();
    let key = dir.path().join("stranger");
    let mut c = Command::new("ssh-keygen");
    c.args(["-q", "-t", "ed25519", "-N", "sesame", "-f"])
        .arg(&key);
    run_cmd(c, Duration::from_secs(10)).assert_code(0);
    let cfg = s.virsh(
        SshAuth::Key {
            path: key.clone(),
            passphrase: Some(Secret::from_str_value("sesame")),
        },
        "node1",
    );
    let (r, d) = connect(cfg, Duration::from_secs(10));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::PasswordInvalid, "{e}");
    assert_eq!(d.stats().auth_attempts, 1);

    let cfg = s.virsh(
        SshAuth::Key {
            path: key,
            passphrase: Some(Secret::from_str_value("not-sesame")),
        },
        "node1",
    );
    let (r, _) = connect(cfg, Duration::from_secs(10));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(!e.message.contains("sesame"), "secret in message: {e}");
}

#[test]
fn encrypted_key_with_its_passphrase_logs_in() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempdir();
    let key = dir.path().join("locked");
    fs::copy(s.key(), &key).unwrap();
    let mut c = Command::new("ssh-keygen");
    c.args(["-q", "-p", "-N", "open sesame", "-P", "", "-f"])
        .arg(&key);
    run_cmd(c, Duration::from_secs(10)).assert_code(0);
    let cfg = s.virsh(
        SshAuth::Key {
            path: key,
            passphrase: Some(Secret::from_str_value("open sesame")),
        },
        "node1",
    );
    assert_eq!(status(cfg), Ok(PowerState::On));
}

/// A second sshd beside `s` (same host key, user and power target) with
/// `edits` (whole directives replaced) and `extra` directives; started by
/// the test and killed on drop. Its log is at DEBUG1, which names the
/// signature algorithm of each public key offered.
struct Variant {
    port: u16,
    child: std::process::Child,
    dir: tempfile::TempDir,
}

impl Variant {
    fn start(s: &Sshd, edits: &[(&str, &str)], extra: &[&str]) -> Variant {
        let port = free_port();
        let dir = tempdir();
        let base = fs::read_to_string(s.dir.join("sshd_config")).unwrap();
        let mut text = String::new();
        for line in base.lines() {
            let key = line.split_whitespace().next().unwrap_or("");
            let line = match (key, edits.iter().find(|(k, _)| *k == key)) {
                ("Port", _) => format!("Port {port}"),
                ("LogLevel", _) => "LogLevel DEBUG1".to_string(),
                (_, Some((k, v))) => format!("{k} {v}"),
                _ => line.to_string(),
            };
            text.push_str(&line);
            text.push('\n');
        }
        for line in extra {
            text.push_str(line);
            text.push('\n');
        }
        let config = dir.path().join("sshd_config");
        fs::write(&config, text).unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .arg("-D")
            .arg("-f")
            .arg(&config)
            .arg("-E")
            .arg(dir.path().join("sshd.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sshd");
        let v = Variant { port, child, dir };
        // Ready when it greets (a readiness signal, not a sleep).
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut c) = std::net::TcpStream::connect((HOST, port)) {
                use std::io::Read;
                let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
                let mut greeting = [0u8; 4];
                if c.read_exact(&mut greeting).is_ok() && &greeting == b"SSH-" {
                    return v;
                }
            }
            assert!(Instant::now() < until, "sshd variant not up:\n{}", v.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn cfg(&self, s: &Sshd, auth: SshAuth) -> SshConfig {
        let mut c = s.virsh(auth, "node1");
        c.port = self.port;
        c.host_keys = HostKeyPolicy::Pinned(s.fingerprint());
        c
    }

    fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}

impl Drop for Variant {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A new key pair (`ssh-keygen` with `args`) whose public half the
/// server's `authorized_keys` now lists (until the next sshd start).
fn authorized_key(s: &Sshd, dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let key = dir.join(name);
    let mut c = Command::new("ssh-keygen");
    c.arg("-q").args(args).arg("-f").arg(&key);
    run_cmd(c, Duration::from_secs(30)).assert_code(0);
    let public = fs::read_to_string(key.with_extension("pub")).unwrap();
    let line = public.trim();
    assert!(!line.contains('\''), "{line}");
    s.ssh(&format!("echo '{line}' >> .ssh/authorized_keys"))
        .assert_code(0);
    key
}

fn key(path: &Path, passphrase: Option<&str>) -> SshAuth {
    SshAuth::Key {
        path: path.to_path_buf(),
        passphrase: passphrase.map(Secret::from_str_value),
    }
}

#[test]
fn rsa_keys_sign_with_sha2() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempdir();
    let rsa = ["-t", "rsa", "-b", "2048"];
    let plain = authorized_key(&s, dir.path(), "rsa", &[&rsa[..], &["-N", ""]].concat());
    let locked = authorized_key(
        &s,
        dir.path(),
        "rsa_locked",
        &[&rsa[..], &["-N", "open sesame"]].concat(),
    );
    let pem = authorized_key(
        &s,
        dir.path(),
        "rsa_pem",
        &[&rsa[..], &["-m", "PEM", "-N", ""]].concat(),
    );
    let pem_locked = authorized_key(
        &s,
        dir.path(),
        "rsa_pem_locked",
        &[&rsa[..], &["-m", "PEM", "-N", "pem sesame"]].concat(),
    );
    assert!(fs::read_to_string(&pem)
        .unwrap()
        .starts_with("-----BEGIN RSA PRIVATE KEY-----"));
    // OpenSSH 9 refuses SHA-1 (ssh-rsa) signatures by default: every one
    // of these logins is signed with rsa-sha2-256 or -512.
    for (path, pass) in [
        (&plain, None),
        (&locked, Some("open sesame")),
        (&pem, None),
        (&pem_locked, Some("pem sesame")),
    ] {
        assert_eq!(
            status(s.virsh(key(path, pass), "node1")),
            Ok(PowerState::On),
            "{}",
            path.display()
        );
    }
    let cfg = s.virsh(key(&locked, Some("not it")), "node1");
    let e = connect(cfg, Duration::from_secs(10)).0.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(!e.message.contains("not it"), "secret in message: {e}");
    let cfg = s.virsh(key(&locked, None), "node1");
    let e = connect(cfg, Duration::from_secs(10)).0.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");

    // The best hash the server lists in server-sig-algs (OpenSSH 9.2
    // lists rsa-sha2-512 and -256 whatever PubkeyAcceptedAlgorithms says,
    // so the -256 choice is not reachable with this peer).
    let v = Variant::start(&s, &[], &[]);
    assert_eq!(status(v.cfg(&s, key(&plain, None))), Ok(PowerState::On));
    let log = v.log();
    assert!(log.contains("pkalg rsa-sha2-512"), "{log}");
    assert!(!log.contains("pkalg ssh-rsa "), "{log}");
}

#[test]
fn keyboard_interactive_answers_with_the_password() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    // A server that offers keyboard-interactive (PAM) and no password method.
    let v = Variant::start(
        &s,
        &[
            ("UsePAM", "yes"),
            ("KbdInteractiveAuthentication", "yes"),
            ("PasswordAuthentication", "no"),
        ],
        &[],
    );
    let cfg = v.cfg(&s, SshAuth::Password(Secret::from_str_value(PASS)));
    assert_eq!(status(cfg), Ok(PowerState::On));
    let log = v.log();
    assert!(
        log.contains("Accepted keyboard-interactive/pam for fencetest"),
        "{log}"
    );

    let cfg = v.cfg(
        &s,
        SshAuth::Password(Secret::from_str_value("not the password")),
    );
    let (r, d) = connect(cfg, Duration::from_secs(20));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::PasswordInvalid, "{e}");
    assert_eq!(d.stats().auth_attempts, 1);
    assert!(!e.message.contains("not the password"), "{e}");
}

// ------------------------------------------------------------- injection --

#[test]
fn shell_metacharacters_in_a_plug_do_no_harm() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempdir();
    let pwned = |n: usize| PathBuf::from(format!("/tmp/fencekit-pwned-{}-{n}", std::process::id()));
    let plugs = [
        format!("node1; touch {}", pwned(0).display()),
        format!("node1 && touch {}", pwned(1).display()),
        format!("$(touch {})", pwned(2).display()),
        format!("`touch {}`", pwned(3).display()),
        format!("node1' ; touch {} ; '", pwned(4).display()),
        format!("node1\"; touch {}; \"", pwned(5).display()),
        format!("node1|touch {}", pwned(6).display()),
    ];
    for (i, plug) in plugs.iter().enumerate() {
        let _ = fs::remove_file(pwned(i));
        let e = status(s.virsh(s.key_auth(), plug)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DeviceError, "{plug}: {e}");
        assert!(e.message.contains("domain not found"), "{plug}: {e}");
        let custom = s.cfg(s.key_auth(), power_profile(plug));
        let e = status(custom).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DeviceError, "{plug}: {e}");
        assert!(!pwned(i).exists(), "{plug} ran a command on the server");
    }
    // newlines and leading dashes never reach a command line
    for plug in ["node1\ntouch /tmp/x", "--help", ""] {
        assert!(
            SshDriver::new(s.virsh(s.key_auth(), plug)).is_err(),
            "{plug:?}"
        );
    }
    drop(dir);
    assert_eq!(s.domstate("node1"), "running");
}

// ----------------------------------------------------------------- custom --

fn power_profile(plug: &str) -> Profile {
    Profile::Custom {
        status: "power status {plug}".into(),
        on: "power on {plug}".into(),
        off: "power off {plug}".into(),
        on_pattern: "on".into(),
        off_pattern: "off".into(),
        plug: Some(plug.into()),
        uuid: None,
    }
}

#[test]
fn custom_profile_drives_the_power_script() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let cfg = || s.cfg(s.key_auth(), power_profile("node1"));
    assert_eq!(status(cfg()), Ok(PowerState::On));
    assert_eq!(
        status(s.cfg(s.key_auth(), power_profile("node2"))),
        Ok(PowerState::Off)
    );
    assert_eq!(
        act(cfg(), Action::Off),
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert_eq!(s.power("node1"), "off");
    assert_eq!(act(cfg(), Action::Reboot), Ok(Outcome::Rebooted));
    assert_eq!(s.power("node1"), "on");
    // an unknown node: the script fails, and so do we
    let e = status(s.cfg(s.key_auth(), power_profile("node9"))).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DeviceError);
    assert!(e.message.contains("unknown node"), "{e}");
}

// ------------------------------------------------------------------- host --

#[test]
fn host_profile_reads_reachability() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let detail = {
        let (r, _) = connect(s.cfg(s.key_auth(), Profile::Host), Duration::from_secs(10));
        r.unwrap()
    };
    assert!(detail.contains("off cannot be observed"), "{detail}");
    assert_eq!(
        status(s.cfg(s.key_auth(), Profile::Host)),
        Ok(PowerState::On)
    );
    // Nothing listens: the status is unreadable, never off (it used to
    // read off, and "off" then succeeded with the node unseen).
    let unreachable = |cfg: SshConfig, what: &str| {
        let e = status(cfg.clone()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::StatusUnreadable, "{what}: {e}");
        assert!(e.message.contains("cannot reach"), "{what}: {e}");
        let e = act(cfg, Action::Off).unwrap_err();
        assert_eq!(e.kind, ErrorKind::StatusUnreadable, "{what}: off: {e}");
    };
    let mut cfg = s.cfg(s.key_auth(), Profile::Host);
    cfg.port = free_port();
    unreachable(cfg, "refused port");
    let mut cfg = s.cfg(s.key_auth(), Profile::Host);
    cfg.host = "no-such-node.invalid".into();
    unreachable(cfg, "unresolvable name");
    // on is impossible over SSH
    let mut d = SshDriver::new(s.cfg(s.key_auth(), Profile::Host)).unwrap();
    let deadline = Some(Instant::now() + LIMIT);
    let e = rt()
        .block_on(async {
            d.connect(deadline).await?;
            let r = d.command(PowerCommand::On, deadline).await;
            d.close().await;
            r
        })
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported, "{e}");
    // An off the host accepts is sent, unverified: nothing can see it off.
    // ("sudo" is a harmless stand-in that echoes the command.)
    let mut cfg = s.cfg(s.key_auth(), Profile::Host);
    cfg.use_sudo = true;
    cfg.sudo_path = "/bin/echo".into();
    assert_eq!(act(cfg, Action::Off), Ok(Outcome::OffSent));
    // A stopped sshd on a live machine: unreadable too. (Its run directory,
    // with the client key, goes with it: a password stands in.)
    let cfg = s.cfg(
        SshAuth::Password(Secret::from_str_value(PASS)),
        Profile::Host,
    );
    assert_eq!(status(cfg.clone()), Ok(PowerState::On));
    drop(s);
    unreachable(cfg, "stopped sshd");
}

#[test]
fn host_profile_power_off_accepts_a_dying_connection() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    // Not a real power-off: "sudo" is a harmless stand-in, so the command
    // sent is `/bin/echo systemctl poweroff --force --force` (exit 0), and a
    // second one whose "sudo" kills the session's shell, as a dying host does.
    let mut cfg = s.cfg(s.key_auth(), Profile::Host);
    cfg.use_sudo = true;
    cfg.sudo_path = "/bin/echo".into();
    let mut d = SshDriver::new(cfg).unwrap();
    let deadline = Some(Instant::now() + LIMIT);
    rt().block_on(async {
        d.connect(deadline).await.unwrap();
        d.command(PowerCommand::Off, deadline).await.unwrap();
        d.close().await;
    });
    let mut cfg = s.cfg(s.key_auth(), Profile::Host);
    cfg.use_sudo = true;
    cfg.sudo_path = "kill -9 $$; :".into();
    let mut d = SshDriver::new(cfg).unwrap();
    rt().block_on(async {
        d.connect(deadline).await.unwrap();
        d.command(PowerCommand::Off, deadline).await.unwrap();
        d.close().await;
    });
}

// ------------------------------------------------------------- deadlines --

#[test]
fn a_peer_that_never_speaks_ssh_fails_at_the_deadline() {
    let listener = TcpListener::bind((HOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut cfg = SshConfig::new(
        HOST,
        USER,
        SshAuth::Password(Secret::from_str_value(PASS)),
        Profile::Virsh {
            plug: Some("node1".into()),
        },
    );
    cfg.port = port;
    let mut d = SshDriver::new(cfg).unwrap();
    let t = Instant::now();
    let e = rt()
        .block_on(d.connect(Some(Instant::now() + Duration::from_millis(1500))))
        .unwrap_err();
    let took = t.elapsed();
    assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
    assert!(e.message.contains("SSH handshake"), "{e}");
    assert!(e.to_string().contains("session set-up"), "{e}");
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_millis(2500),
        "{took:?}"
    );
    drop(listener);
}

#[test]
fn a_closed_port_is_unreachable_at_once() {
    let port = free_port();
    let mut cfg = SshConfig::new(
        HOST,
        USER,
        SshAuth::Password(Secret::from_str_value(PASS)),
        Profile::Virsh {
            plug: Some("node1".into()),
        },
    );
    cfg.port = port;
    let t = Instant::now();
    let (r, _) = connect(cfg, Duration::from_secs(10));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreachable, "{e}");
    assert!(e.message.contains("refused"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(1));
}

#[test]
fn a_hanging_command_is_cut_at_the_command_timeout() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let mut cfg = s.cfg(
        s.key_auth(),
        Profile::Custom {
            status: "sleep 30; echo on".into(),
            on: "true".into(),
            off: "true".into(),
            on_pattern: "on".into(),
            off_pattern: "off".into(),
            plug: None,
            uuid: None,
        },
    );
    cfg.command_timeout = Duration::from_millis(1200);
    let t = Instant::now();
    let e = status(cfg).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
    assert!(e.message.contains("sleep 30"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
}

#[test]
fn a_cancelled_action_stops_at_once() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let cfg = s.cfg(
        s.key_auth(),
        Profile::Custom {
            status: "sleep 30; echo on".into(),
            on: "true".into(),
            off: "true".into(),
            on_pattern: "on".into(),
            off_pattern: "off".into(),
            plug: None,
            uuid: None,
        },
    );
    let mut d = SshDriver::new(cfg).unwrap();
    let (handle, cancel) = Cancel::new();
    let t = Instant::now();
    let policy = native();
    let mut sink = Discard;
    let r = rt().block_on(async {
        let stop = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            handle.cancel();
            std::future::pending::<()>().await
        };
        tokio::select! {
            r = run(&mut d, Action::Status, &policy, &mut sink, cancel) => r,
            _ = stop => unreachable!(),
        }
    });
    let e = r.unwrap_err().error;
    assert_eq!(e.kind, ErrorKind::Interrupted, "{e}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

#[test]
fn endless_output_is_cut() {
    let _g = serial();
    let Some(s) = Sshd::start() else { return };
    let cfg = s.cfg(
        s.key_auth(),
        Profile::Custom {
            status: "yes on".into(),
            on: "true".into(),
            off: "true".into(),
            on_pattern: "on".into(),
            off_pattern: "off".into(),
            plug: None,
            uuid: None,
        },
    );
    let t = Instant::now();
    let e = status(cfg).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Protocol, "{e}");
    assert!(e.message.contains("more than"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10));
}

// --------------------------------------------------------------- upstream --

#[test]
fn upstream_fence_virsh_sees_what_we_did() {
    let _g = serial();
    if !peer_available("fence_virsh") {
        return;
    }
    let Some(s) = Sshd::start() else { return };
    let upstream = |action: &str| {
        let mut c = support::tool("fence_virsh");
        c.args(["--ip", HOST, "--ipport", &s.port.to_string()])
            .args(["--username", USER, "--identity-file"])
            .arg(s.key())
            .arg("--ssh-path")
            .arg(s.dir.join("ssh-wrap"))
            .args(["--plug", "node1", "--action", action]);
        run_cmd(c, Duration::from_secs(30))
    };
    let r = upstream("status");
    assert!(r.stdout.contains("Status: ON"), "{r}");
    assert_eq!(
        act(s.virsh(s.key_auth(), "node1"), Action::Off),
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    let r = upstream("status");
    assert!(r.stdout.contains("Status: OFF"), "{r}");
    // and the other way round
    upstream("on").assert_code(0);
    assert_eq!(status(s.virsh(s.key_auth(), "node1")), Ok(PowerState::On));
}

// ------------------------------------------------------------ measurement --

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Wall time of one status (median of 5): our driver in-process, OpenSSH's
/// `ssh … virsh domstate node1`, upstream `fence_virsh -o status`; all with
/// key auth against the same sshd.
/// `cargo test --test interop_ssh -- --ignored --nocapture measure_status`
#[test]
#[ignore]
fn measure_status() {
    let _g = serial();
    if !peer_available("fence_virsh") {
        return;
    }
    let Some(s) = Sshd::start() else { return };
    let ours: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            assert_eq!(status(s.virsh(s.key_auth(), "node1")), Ok(PowerState::On));
            t.elapsed()
        })
        .collect();
    let ssh: Vec<Duration> = (0..5)
        .map(|_| {
            let r = s.ssh("virsh domstate node1");
            assert_eq!(r.stdout.trim(), "running");
            r.elapsed
        })
        .collect();
    let upstream: Vec<Duration> = (0..5)
        .map(|_| {
            let mut c = support::tool("fence_virsh");
            c.args(["--ip", HOST, "--ipport", &s.port.to_string()])
                .args(["--username", USER, "--identity-file"])
                .arg(s.key())
                .arg("--ssh-path")
                .arg(s.dir.join("ssh-wrap"))
                .args(["--plug", "node1", "--action", "status"]);
            let r = run_cmd(c, Duration::from_secs(30));
            assert!(r.stdout.contains("Status: ON"), "{r}");
            r.elapsed
        })
        .collect();
    let ssh_curve: Vec<Duration> = (0..5)
        .map(|_| {
            let r = s.ssh_with(
                &["-o", "KexAlgorithms=curve25519-sha256"],
                "virsh domstate node1",
            );
            assert_eq!(r.stdout.trim(), "running");
            r.elapsed
        })
        .collect();
    let ssh_true: Vec<Duration> = (0..5)
        .map(|_| {
            s.ssh_with(&["-o", "KexAlgorithms=curve25519-sha256"], "true")
                .elapsed
        })
        .collect();
    let (detail, _) = connect(s.virsh(s.key_auth(), "node1"), Duration::from_secs(10));
    println!("negotiated: {}", detail.unwrap());
    println!(
        "status median of 5: fencekit driver {:?}, ssh+virsh {:?} (curve25519 kex: {:?}; `true` alone: {:?}), fence_virsh {:?}",
        median(ours),
        median(ssh),
        median(ssh_curve),
        median(ssh_true),
        median(upstream)
    );
}
