//! The hypervisor API peers of issue 40 (`tests/peers/pve_api.py`,
//! `nutanix_api.py`, `ovirt_api.py`, started by `hv_peer_start.sh`): one
//! peer per test on its own address and port, its certificate made once per
//! address and process, its control endpoints (`/fencekit/...`) read with
//! curl, stopped on drop by its recorded PID. And what the side-by-side
//! tests of a drop-in agent share ([`DropIn`]): fencekit under the agent's
//! name, upstream's agent when it can run, their connection options, what
//! every output is held to.

use super::AgentOut;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Which agent a side-by-side test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Upstream's (fence-agents).
    Upstream,
    /// fencekit's, under the agent's name.
    Fencekit,
}

/// A drop-in agent and upstream's, run side by side.
pub struct DropIn {
    /// The agent's name (`fence_pve`).
    pub name: &'static str,
    /// Upstream's program for the name, when it can run here (`None`
    /// after a SKIP line, or a failure under FENCEKIT_REQUIRE_PEERS=1).
    pub upstream: fn(&'static str) -> Option<PathBuf>,
}

impl DropIn {
    /// The agents to run: upstream (when it can run), then fencekit.
    pub fn both(&self) -> Vec<Who> {
        let mut w = vec![Who::Fencekit];
        if (self.upstream)(self.name).is_some() {
            w.insert(0, Who::Upstream);
        }
        w
    }

    /// Runs `who` with `args` (and `stdin`) for at most `limit`.
    pub fn run(&self, who: Who, args: &[String], stdin: Option<&str>, limit: Duration) -> AgentOut {
        let prog = match who {
            Who::Fencekit => ours(self.name),
            Who::Upstream => (self.upstream)(self.name).expect("upstream's agent"),
        };
        super::exec_agent(&prog, args, stdin, limit)
    }
}

/// The fencekit binary under the agent's name `name` (a link, made once per
/// name and process).
pub fn ours(name: &str) -> PathBuf {
    static LINKS: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut links = LINKS.get_or_init(Default::default).lock().unwrap();
    links
        .entry(name.to_string())
        .or_insert_with(|| {
            let dir = tempfile::Builder::new()
                .prefix(&format!("fencekit-interop-{name}"))
                .tempdir()
                .unwrap()
                .keep();
            let link = dir.join(name);
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencekit"), &link).unwrap();
            link
        })
        .clone()
}

/// Upstream's installed agent `name` when it can run here: fence-agents
/// has it and python3 imports pycurl (else a SKIP line, or a failure under
/// FENCEKIT_REQUIRE_PEERS=1).
pub fn pycurl_upstream(name: &'static str) -> Option<PathBuf> {
    if !super::peer_available(name) {
        return None;
    }
    static PYCURL: OnceLock<bool> = OnceLock::new();
    let ok = *PYCURL.get_or_init(|| {
        Command::new("/usr/bin/python3")
            .args(["-c", "import pycurl"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    });
    if !ok {
        let msg =
            "SKIP upstream part: python3 cannot import pycurl (Debian package python3-pycurl)";
        assert!(
            !super::require_peers(),
            "{msg}, and FENCEKIT_REQUIRE_PEERS=1"
        );
        eprintln!("{msg}");
        return None;
    }
    Some(super::which(name).unwrap_or_else(|| panic!("{name}")))
}

/// The connection options both agents take for a peer at `host` (and
/// `port`, when the agent is given one): `--ssl-insecure`, the user and
/// password, then `extra`.
pub fn conn_args(
    host: &str,
    port: Option<u16>,
    user: &str,
    password: &str,
    extra: &[&str],
) -> Vec<String> {
    let mut a: Vec<String> = vec!["--ip".into(), host.into()];
    if let Some(p) = port {
        a.extend(["--ipport".into(), p.to_string()]);
    }
    a.extend(
        ["--ssl-insecure", "-l", user, "-p", password]
            .iter()
            .chain(extra)
            .map(|s| s.to_string()),
    );
    a
}

/// What every output is held to: `who` exited `code`, printed `needle`
/// (stdout or stderr), and none of `secrets`.
#[track_caller]
pub fn expect_out(o: &AgentOut, code: i32, needle: &str, who: Who, secrets: &[&str]) {
    let text = format!("{}\n{}", o.stdout, o.stderr);
    assert_eq!(o.code, Some(code), "{who:?}: {text}");
    assert!(text.contains(needle), "{who:?}: no '{needle}' in:\n{text}");
    for secret in secrets {
        assert!(!text.contains(secret), "{who:?} printed a secret:\n{text}");
    }
}

/// The first line an agent printed (stdout's, else stderr's first error).
pub fn first_line(o: &AgentOut) -> String {
    let line = o.stdout.lines().next().unwrap_or_default();
    if !line.is_empty() {
        return line.to_string();
    }
    super::error_lines(&o.stderr)
        .first()
        .map(|l| l.to_string())
        .unwrap_or_default()
}

/// One running peer.
pub struct HvPeer {
    /// `pve` or `nutanix`.
    pub kind: &'static str,
    /// Its address.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// Its certificate (PEM; its own anchor).
    pub cert: PathBuf,
    /// Its JSON line.
    pub info: Value,
}

/// A certificate and key for `host`, made once per process.
fn cert_for(host: &str) -> PathBuf {
    static DIRS: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut dirs = DIRS.get_or_init(Default::default).lock().unwrap();
    if let Some(d) = dirs.get(host) {
        return d.clone();
    }
    let dir = tempfile::Builder::new()
        .prefix("fencekit-hv-cert")
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
        .args(["-subj", &format!("/CN={host}")])
        .args([
            "-addext",
            &format!("subjectAltName=IP:{host},DNS:localhost"),
        ])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .args(["-addext", "extendedKeyUsage=serverAuth"])
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dirs.insert(host.to_string(), dir.clone());
    dir
}

impl HvPeer {
    /// Starts the `kind` peer on `host:port` with `extra` arguments; `None`
    /// (after a SKIP line, or a failure under FENCEKIT_REQUIRE_PEERS=1)
    /// when python3, openssl or curl is missing.
    pub fn start(kind: &'static str, host: &str, port: u16, extra: &str) -> Option<HvPeer> {
        if !["python3", "openssl", "curl"]
            .iter()
            .all(|p| super::peer_available(p))
        {
            return None;
        }
        let dir = super::peer_run_dir().join(format!("{kind}-{host}-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        let src = cert_for(host);
        for f in ["cert.pem", "key.pem"] {
            std::fs::copy(src.join(f), dir.join(f)).unwrap();
        }
        let out = super::peer_start(
            "hv_peer_start.sh",
            &[kind, &port.to_string(), host],
            &[("PEER_ARGS", extra)],
        );
        let info: Value = serde_json::from_slice(&out).expect("the peer's JSON line");
        Some(HvPeer {
            kind,
            host: host.to_string(),
            port,
            cert: PathBuf::from(info["cert"].as_str().unwrap()),
            info,
        })
    }

    /// A control request (`GET vms`, `POST vm?vmid=100&status=stopped`).
    pub fn control(&self, method: &str, path: &str) -> Value {
        let out = Command::new("curl")
            .args(["-s", "--max-time", "10", "--cacert"])
            .arg(&self.cert)
            .args(["-X", method])
            .arg(format!(
                "https://{}:{}/fencekit/{path}",
                self.host, self.port
            ))
            .output()
            .expect("curl");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("control {path}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    /// A POST control that must succeed.
    pub fn set(&self, path: &str) {
        let v = self.control("POST", path);
        assert_eq!(v["ok"], true, "control {path}: {v}");
    }

    /// The inventory, knobs and counters as at start.
    pub fn reset(&self) {
        self.set("reset");
    }

    /// Requests served of `shape` (`POST /nodes/{node}/qemu/{vmid}/status/stop`).
    pub fn calls(&self, shape: &str) -> u64 {
        self.control("GET", "calls")[shape].as_u64().unwrap_or(0)
    }

    /// The guest whose `key` is `value` (`vmid` 100, `name` "node1").
    pub fn vm(&self, key: &str, value: &Value) -> Value {
        let vms = self.control("GET", "vms");
        let hits: Vec<&Value> = vms
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| &v[key] == value)
            .collect();
        assert_eq!(hits.len(), 1, "{key}={value} in {vms}");
        hits[0].clone()
    }
}

impl Drop for HvPeer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(super::peer_scripts().join("hv_peer_stop.sh"))
            .args([self.kind, &self.port.to_string(), &self.host])
            .env("PEERS_DIR", super::peers_dir())
            .output();
    }
}
