//! Test harness for the real peers (used from tests with `mod support;`).
//!
//! It owns starting and stopping the external BMCs and clients the interop
//! tests talk to — OpenIPMI `ipmi_sim`, the pyghmi BMC, the lossy UDP proxy
//! and `fencekit lab` — and running commands with a hard time limit so that a
//! hanging client fails its test instead of hanging the suite. It leaves the
//! assertions to the tests.
//!
//! Rules it keeps:
//! * only 127.0.0.0/8 addresses, ever;
//! * every process it starts is killed on `Drop`, by PID or process group,
//!   never by name;
//! * a peer that is not installed makes [`peer_available`] print
//!   `SKIP <test>: <peer> not installed (...)` and return false, unless
//!   `FENCEKIT_REQUIRE_PEERS=1` (CI), where it panics instead;
//! * ports come from a per-process range outside the kernel's ephemeral range,
//!   each one checked free (UDP and TCP) before it is handed out, so parallel
//!   tests and concurrent test binaries do not collide.
//!
//! The peer scripts live in `tests/peers/` (copies of the project's shared
//! peers); the Python venv with pyghmi is `$PEERS_DIR/venv` (default
//! `/tmp/fencekit-peers`), installed by `tests/peers/setup.sh`.
#![allow(dead_code)]

pub mod hv;
pub mod pacemaker;
pub mod small_key;

use fencekit::ssh::config::{Profile, SshAuth, SshConfig};
use fencekit::ssh::hostkey::HostKeyPolicy;
use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::net::{Ipv4Addr, TcpListener, UdpSocket};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// The loopback address every peer binds to.
pub const HOST: &str = "127.0.0.1";
/// Credentials the IPMI peers are started with (the peers' own defaults).
pub const USER: &str = "admin";
/// Password of [`USER`] on `ipmi_sim` and the pyghmi BMC.
pub const PASSWORD: &str = "password";
/// `fencekit lab`'s default password (docs/design.md).
pub const LAB_PASSWORD: &str = "lab";

/// A loopback address of the calling test's own (`127.100-199.x.y`, from the
/// process id and a counter), for simulated BMCs: the per-BMC lock is keyed
/// by address, so BMCs of concurrent tests on one address would wait for
/// each other. Outside the lab's defaults (127.0.x.x BMCs, 127.1.x.x hosts).
pub fn own_loopback() -> Ipv4Addr {
    // Each call gets a /24 of its own (x.y.n.1, .2, … for a lab of several nodes).
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Ipv4Addr::new(127, 100 + (std::process::id() % 100) as u8, n as u8, 1)
}

/// True while some process holds fencekit's per-device lock for a device
/// at `host` (any port or system of it: an abstract socket
/// `@fencekit/bmc/HOST[:PORT][/sys/ID]`, listed in `/proc/net/unix`): the
/// readiness signal that a fencekit run has started acting on that BMC.
pub fn bmc_lock_held(host: &str) -> bool {
    let name = format!(" @fencekit/bmc/{host}");
    fs::read_to_string("/proc/net/unix")
        .map(|t| {
            t.lines().any(|l| {
                l.find(&name).is_some_and(|i| {
                    matches!(l[i + name.len()..].chars().next(), None | Some(':' | '/'))
                })
            })
        })
        .unwrap_or(false)
}

/// One node of an [`InProcessLab`].
#[derive(Clone)]
pub struct InProcessNode {
    /// IPMI address.
    pub ipmi: std::net::SocketAddr,
    /// Redfish address, when the lab serves Redfish.
    pub redfish: Option<std::net::SocketAddr>,
    /// The simulated chassis (power, command log, faults).
    pub bmc: fencekit::lab::bmc::Bmc,
}

/// `fencekit::lab::fleet::Lab` served from a thread of its own (so tests
/// can run blocking commands against it), on [`own_loopback`] addresses
/// unless `spec.bind` says otherwise; stopped on drop.
pub struct InProcessLab {
    /// The nodes, in order.
    pub nodes: Vec<InProcessNode>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

/// Lets this test process open as many descriptors as the tests running in
/// it at once need (labs, peers, children's pipes; the fault-injection
/// matrix peaks near 1,100): the soft limit on open files raised towards
/// 8,192, within the hard limit, as `fencekit lab` does for itself. An
/// ordinary user's soft limit is often 1,024. Once per process; says so when
/// the hard limit leaves less than 2,048.
pub fn enough_open_files() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let l = fencekit::runtime::raise_open_files(8192);
        if l.soft < 2048 {
            eprintln!(
                "note: this process may open only {} files (hard limit {}); tests that run \
                 many peers at once may fail with \"Too many open files\"",
                l.soft, l.hard
            );
        }
    });
}

impl InProcessLab {
    /// Starts `spec` (its `bind` replaced by an own loopback address when it
    /// is the default 127.0.0.1).
    pub fn start(mut spec: fencekit::lab::fleet::LabSpec) -> InProcessLab {
        enough_open_files();
        if spec.bind == std::net::IpAddr::from(Ipv4Addr::LOCALHOST) {
            spec.bind = own_loopback().into();
        }
        let (tx, rx) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let lab = fencekit::lab::fleet::Lab::start(&spec).await.unwrap();
                let nodes = lab
                    .nodes
                    .iter()
                    .map(|n| InProcessNode {
                        ipmi: n.addr(),
                        redfish: n.redfish.as_ref().map(|r| r.addr),
                        bmc: n.bmc().clone(),
                    })
                    .collect::<Vec<_>>();
                tx.send(nodes).unwrap();
                let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                drop(lab);
            });
        });
        let nodes = rx.recv().expect("the lab started");
        InProcessLab {
            nodes,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }
}

impl Drop for InProcessLab {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// True when the test runs as root with `tools` installed; otherwise
/// skips through [`skip`] (a failure under `FENCEKIT_REQUIRE_PEERS=1`).
pub fn root_with(tools: &[&str]) -> bool {
    let euid = fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_default();
    if euid != "0" {
        skip(&format!("needs root for mount namespaces (euid {euid})"));
        return false;
    }
    for tool in tools {
        if which(tool).is_none() {
            skip(&format!("no `{tool}` in PATH (Debian package util-linux)"));
            return false;
        }
    }
    true
}

/// The `fencekit` binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fencekit"))
}

/// Whether a process of any other UID may execute `path`: every directory
/// above it lets others through and the file lets others execute it.
pub fn others_can_execute(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let x = |p: &Path| fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o001 != 0);
    x(path)
        && path
            .ancestors()
            .skip(1)
            .all(|d| d.as_os_str().is_empty() || x(d))
}

/// The `fencekit` binary at a path another UID (a test's 65531, 65532)
/// can execute: [`bin`] itself when it is reachable, else a copy in a 0755
/// directory (a checkout under a 0700 home, e.g. /root/fencekit, is the
/// case). The copy's directory is named after the binary's path, size and
/// time, so runs of the same build share one copy instead of piling them up
/// in /tmp. `None`, after a SKIP line saying why, when no such place can be
/// made.
pub fn bin_for_any_uid() -> Option<PathBuf> {
    static COPY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = COPY.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        use std::os::unix::fs::PermissionsExt;
        let b = bin();
        if others_can_execute(&b) {
            return Ok(b);
        }
        let meta = fs::metadata(&b).map_err(|e| format!("{}: {e}", b.display()))?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&b, meta.len(), meta.modified().ok()).hash(&mut h);
        let name = format!("fencekit-any-uid-{:016x}", h.finish());
        let mut tried = Vec::new();
        for base in [
            std::env::temp_dir(),
            PathBuf::from("/tmp"),
            PathBuf::from("/var/tmp"),
        ] {
            let dir = base.join(&name);
            let copy = dir.join("fencekit");
            let same = |c: &Path| fs::metadata(c).is_ok_and(|m| m.len() == meta.len());
            if same(&copy) && others_can_execute(&copy) {
                return Ok(copy);
            }
            // Made aside, then renamed into place: test binaries running at
            // once never see a half-written copy.
            let made = tempfile::Builder::new()
                .prefix(".fencekit-any-uid")
                .tempdir_in(&base)
                .map_err(|e| e.to_string())
                .and_then(|t| {
                    let t = t.keep();
                    let c = t.join("fencekit");
                    fs::set_permissions(&t, fs::Permissions::from_mode(0o755))
                        .and_then(|_| fs::copy(&b, &c).map(|_| ()))
                        .and_then(|_| fs::set_permissions(&c, fs::Permissions::from_mode(0o755)))
                        .map_err(|e| e.to_string())
                        .map(|_| t)
                });
            match made {
                Ok(t) => {
                    if fs::rename(&t, &dir).is_err() {
                        let _ = fs::remove_dir_all(&t);
                    }
                    if same(&copy) && others_can_execute(&copy) {
                        eprintln!(
                            "note: {} is not reachable by other UIDs; tests that run it as one \
                             use a copy at {}",
                            b.display(),
                            copy.display()
                        );
                        return Ok(copy);
                    }
                    tried.push(format!("{}: not reachable by other UIDs", base.display()));
                }
                Err(e) => tried.push(format!("{}: {e}", base.display())),
            }
        }
        Err(format!(
            "{} cannot be run by another UID (a directory above it is closed to others) and no \
             copy could be placed where it can ({})",
            b.display(),
            tried.join("; ")
        ))
    });
    match r {
        Ok(p) => Some(p.clone()),
        Err(why) => {
            skip(why);
            None
        }
    }
}

/// True when the lab can simulate a silent host here (`--hosts` with a
/// node that is off): a socket filter, or a full accept queue where a
/// filter is refused to an ordinary user (`lab::host::silence`), so on Linux
/// always. Otherwise skips (a failure under `FENCEKIT_REQUIRE_PEERS=1`).
pub fn lab_silent_hosts() -> bool {
    match fencekit::lab::host::silent_hosts_permitted() {
        Ok(()) => true,
        Err(e) => {
            skip(&format!(
                "the lab cannot simulate a silent host as this user ({e})"
            ));
            false
        }
    }
}

/// `tests/peers/` in this repository: the peer scripts.
pub fn peer_scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// `$PEERS_DIR` (default `/tmp/fencekit-peers`): the venv and peer state.
pub fn peers_dir() -> PathBuf {
    std::env::var_os("PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/fencekit-peers"))
}

/// Starts fencekit-vcsim (`tests/peers/vcsim_start.sh`) on `port` with
/// `env` (`VCSIM_DC`, `VCSIM_WSDL`, …) and returns the JSON line it prints
/// (certificate, fingerprint, PID). The caller stops it (`vcsim_stop.sh`).
pub fn vcsim_start(port: u16, env: &[(&str, &str)]) -> serde_json::Value {
    let out = peer_start("vcsim_start.sh", &[&port.to_string()], env);
    serde_json::from_slice(&out).expect("vcsim's JSON line")
}

/// Runs `tests/peers/SCRIPT` with `args` and `env` (and this run's
/// `PEERS_DIR`), asserting that it started its peer; returns its stdout.
pub fn peer_start(script: &str, args: &[&str], env: &[(&str, &str)]) -> Vec<u8> {
    let out = Command::new("bash")
        .arg(peer_scripts().join(script))
        .args(args)
        .env("PEERS_DIR", peers_dir())
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// This user's run directory for the peers, `$PEERS_DIR/run/UID` (made
/// 0700 by `tests/peers/run_dir.sh`, which every start script sources): a
/// peer's state is never shared between users; the installed peers are.
pub fn peer_run_dir() -> PathBuf {
    peers_dir()
        .join("run")
        .join(rustix::process::geteuid().as_raw().to_string())
}

/// The venv's Python (pyghmi, sushy-tools).
pub fn venv_python() -> PathBuf {
    peers_dir().join("venv/bin/python")
}

/// True when the peers' venv has `tool` (`sushy-emulator`, `moto_server`)
/// and its Python runs as this user (a venv made from an interpreter under a
/// 0700 home, e.g. pyenv's in /root, does not for anyone else). Otherwise
/// skips, saying which (a failure under `FENCEKIT_REQUIRE_PEERS=1`).
pub fn venv_tool(tool: &str) -> bool {
    let path = peers_dir().join("venv/bin").join(tool);
    if !path.exists() {
        skip(&format!(
            "{tool} not installed ({} missing; run tests/peers/setup.sh)",
            path.display()
        ));
        return false;
    }
    static RUNS: OnceLock<Result<(), String>> = OnceLock::new();
    let runs = RUNS.get_or_init(|| {
        let py = venv_python();
        match Command::new(&py)
            .args(["-c", ""])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
        {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("{} exits {s}", py.display())),
            Err(e) => Err(format!(
                "{} cannot be run by this user ({e}; it resolves to {})",
                py.display(),
                fs::canonicalize(&py).unwrap_or(py.clone()).display()
            )),
        }
    });
    match runs {
        Ok(()) => true,
        Err(why) => {
            skip(&format!("the peers' venv is unusable here: {why}"));
            false
        }
    }
}

/// The messages of an agent's ERROR log lines, in order (what follows
/// ` ERROR: ` on each line of stderr; upstream and fencekit share the
/// `DATE TIME LEVEL: message` form).
pub fn error_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|l| l.split_once(" ERROR: ").map(|(_, m)| m.trim_end()))
        .collect()
}

/// True when `FENCEKIT_REQUIRE_PEERS=1`: a missing peer is then a failure.
pub fn require_peers() -> bool {
    std::env::var("FENCEKIT_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// Name of the running test (libtest names the test thread after it).
pub fn test_name() -> String {
    thread::current().name().unwrap_or("?").to_string()
}

/// Finds `name` in `$PATH` (and the sbin directories, where Debian puts
/// `ipmipower` and the fence agents).
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"])
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            fs::metadata(p)
                .map(|m| {
                    m.is_file()
                        && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
                })
                .unwrap_or(false)
        });
    found
}

/// A command for the tool `name` where it is installed: found by [`which`]
/// (`$PATH`, then the sbin directories, which are not on an ordinary user's
/// `$PATH` on Debian), else the bare name. Check first that it is there
/// (`require!`, [`peer_available`]), so that a missing tool is a printed skip.
pub fn tool(name: &str) -> Command {
    Command::new(which(name).unwrap_or_else(|| PathBuf::from(name)))
}

/// Why `peer` cannot be used here, or `None` when it can.
fn missing_reason(peer: &str) -> Option<String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(r) = cache.lock().unwrap().get(peer) {
        return r.clone();
    }
    let needs_binary = |bin: &str, pkg: &str| {
        which(bin)
            .is_none()
            .then(|| format!("no `{bin}` in PATH; Debian package {pkg}"))
    };
    let reason = match peer {
        "ipmi_sim" => needs_binary("ipmi_sim", "openipmi"),
        "ipmitool" => needs_binary("ipmitool", "ipmitool"),
        "ipmipower" => needs_binary("ipmipower", "freeipmi-tools"),
        "fence_ipmilan" => needs_binary("fence_ipmilan", "fence-agents"),
        "fence_virsh" => needs_binary("fence_virsh", "fence-agents"),
        "fence_kubevirt" => needs_binary("fence_kubevirt", "fence-agents").or_else(|| {
            // Upstream imports the Kubernetes client and the dynamic client.
            let ok = Command::new("/usr/bin/python3")
                .args(["-c", "import kubernetes, openshift.dynamic"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            (!ok).then(|| {
                "python3 cannot import kubernetes and openshift.dynamic; Debian packages \
                 python3-kubernetes python3-openshift"
                    .to_string()
            })
        }),
        "openssl" => needs_binary("openssl", "openssl"),
        "kubevirt_api" => needs_binary("openssl", "openssl")
            .or_else(|| needs_binary("curl", "curl"))
            .or_else(|| needs_binary("python3", "python3")),
        "corosync" => needs_binary("corosync", "corosync"),
        "pacemaker" => needs_binary("pacemakerd", "pacemaker"),
        "pacemaker-cli-utils" => needs_binary("stonith_admin", "pacemaker-cli-utils"),
        "promtool" => needs_binary("promtool", "prometheus"),
        "htpasswd" => needs_binary("htpasswd", "apache2-utils"),
        "python3" | "udp_proxy" => needs_binary("python3", "python3"),
        "pyghmi" => {
            let py = venv_python();
            match Command::new(&py)
                .args(["-c", "import pyghmi.ipmi.bmc"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
            {
                Ok(s) if s.success() => None,
                Ok(_) => Some(format!(
                    "{} cannot import pyghmi; run tests/peers/setup.sh",
                    py.display()
                )),
                // A venv made from an interpreter under a 0700 home.
                Err(e) => Some(format!(
                    "the peers' venv is unusable here: {} cannot be run by this user ({e}; it \
                     resolves to {})",
                    py.display(),
                    fs::canonicalize(&py).unwrap_or(py.clone()).display()
                )),
            }
        }
        "azure_api" => needs_binary("openssl", "openssl")
            .or_else(|| needs_binary("curl", "curl"))
            .or_else(|| venv_imports("cryptography")),
        "fence_azure_arm" => needs_binary("fence_azure_arm", "fence-agents")
            .or_else(|| venv_imports("azure.identity, azure.mgmt.compute, msrestazure, pexpect")),
        "gce_api" => needs_binary("openssl", "openssl")
            .or_else(|| needs_binary("curl", "curl"))
            .or_else(|| venv_imports("cryptography")),
        "fence_gce" => needs_binary("fence_gce", "fence-agents")
            .or_else(|| venv_imports("googleapiclient.discovery, google.oauth2.service_account, httplib2, socks, pexpect")),
        "ibm_api" => needs_binary("openssl", "openssl").or_else(|| needs_binary("curl", "curl")),
        "vcsim" => {
            let bin = peers_dir().join("bin/fencekit-vcsim");
            (!bin.is_file()).then(|| {
                format!(
                    "no {} (tests/peers/vcsim, built by tests/peers/setup.sh)",
                    bin.display()
                )
            })
        }
        other => needs_binary(other, other),
    };
    cache
        .lock()
        .unwrap()
        .insert(peer.to_string(), reason.clone());
    reason
}

/// `None` when the peers' venv imports `modules`; otherwise why not.
fn venv_imports(modules: &str) -> Option<String> {
    let py = venv_python();
    match Command::new(&py)
        .args(["-c", &format!("import {modules}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => None,
        _ => Some(format!(
            "{} cannot import {modules}; run tests/peers/setup.sh",
            py.display()
        )),
    }
}

/// True when `peer` is installed. When it is not, prints
/// `SKIP <test>: <peer> not installed (<why>)` and returns false — or panics
/// when `FENCEKIT_REQUIRE_PEERS=1` (CI must not skip silently).
pub fn peer_available(peer: &str) -> bool {
    match missing_reason(peer) {
        None => true,
        Some(why) => {
            let msg = format!("SKIP {}: {peer} not installed ({why})", test_name());
            if require_peers() {
                panic!("{msg}, and FENCEKIT_REQUIRE_PEERS=1");
            }
            // Past the harness's capture, as in `skip`.
            let _ =
                std::io::Write::write_all(&mut std::io::stderr(), format!("{msg}\n").as_bytes());
            println!("{msg}");
            false
        }
    }
}

/// `return` from the test unless every listed peer is installed.
#[macro_export]
macro_rules! require {
    ($($peer:expr),+ $(,)?) => {
        if !( true $(&& $crate::support::peer_available($peer))+ ) {
            return;
        }
    };
}

// ---------------------------------------------------------------- ports ----

/// Ports this process hands out: a block of 200 chosen from the PID, below
/// the ephemeral range (32768+) so that no client socket takes one meanwhile.
const PORT_LO: u16 = 20000;
const PORT_BLOCKS: u16 = 60;
const PORT_BLOCK: u16 = 200;

fn next_candidate() -> u16 {
    static NEXT: OnceLock<AtomicU16> = OnceLock::new();
    let next = NEXT.get_or_init(|| {
        let block = (std::process::id() as u64 * 7919 % PORT_BLOCKS as u64) as u16;
        AtomicU16::new(PORT_LO + block * PORT_BLOCK)
    });
    let p = next.fetch_add(1, Ordering::SeqCst);
    // wrap within [PORT_LO, PORT_LO + PORT_BLOCKS * PORT_BLOCK)
    PORT_LO + (p - PORT_LO) % (PORT_BLOCKS * PORT_BLOCK)
}

/// True when nobody holds `port` on 127.0.0.1 (UDP nor TCP).
pub fn port_is_free(port: u16) -> bool {
    port_is_free_at(Ipv4Addr::LOCALHOST, port)
}

/// As [`port_is_free`], on `host`.
pub fn port_is_free_at(host: Ipv4Addr, port: u16) -> bool {
    UdpSocket::bind((host, port)).is_ok() && TcpListener::bind((host, port)).is_ok()
}

impl LabNode {
    /// The node's address (each lab BMC has its own).
    pub fn ip(&self) -> Ipv4Addr {
        self.host.parse().expect("lab nodes have IPv4 addresses")
    }
}

/// A port on 127.0.0.1 that is free for UDP and TCP and that no other test in
/// this process has been given.
pub fn free_port() -> u16 {
    free_ports(1)
}

/// The first of `n` consecutive free ports (for `fencekit lab --ipmi-port-base`).
pub fn free_ports(n: u16) -> u16 {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..(PORT_BLOCKS * PORT_BLOCK) {
        let base = next_candidate();
        if base.checked_add(n).is_none() {
            continue;
        }
        if (0..n).all(|i| port_is_free(base + i)) {
            // reserve the rest of the run
            for _ in 1..n {
                next_candidate();
            }
            return base;
        }
    }
    panic!("no {n} free consecutive ports on 127.0.0.1");
}

/// Waits until some process binds UDP `port` on 127.0.0.1 (our own bind
/// then fails with "address in use").
pub fn wait_udp_bound(port: u16, limit: Duration) -> bool {
    wait_udp_bound_at(Ipv4Addr::LOCALHOST, port, limit)
}

/// As [`wait_udp_bound`], on `host` (a lab node's own address).
pub fn wait_udp_bound_at(host: Ipv4Addr, port: u16, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if UdpSocket::bind((host, port)).is_err() {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    false
}

// ------------------------------------------------------------- commands ----

/// What a finished (or killed) command did.
#[derive(Debug, Clone)]
pub struct Run {
    /// What was run (for messages).
    pub what: String,
    /// Exit code; `None` when killed by a signal (or by the time limit).
    pub code: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
    /// The time limit ran out and the command was killed.
    pub timed_out: bool,
}

impl Run {
    /// stdout and stderr together, lowercased (for "message names X" checks).
    pub fn text(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr).to_lowercase()
    }

    /// Panics with the whole run unless it exited with `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert!(
            !self.timed_out && self.code == Some(code),
            "expected exit {code}, got {:?}{}\n{self}",
            self.code,
            if self.timed_out {
                " (killed at the time limit)"
            } else {
                ""
            },
        );
        self
    }

    /// Panics unless the wall time was below `limit`.
    #[track_caller]
    pub fn assert_faster_than(&self, limit: Duration) -> &Self {
        assert!(
            self.elapsed < limit,
            "took {:?}, limit {limit:?}\n{self}",
            self.elapsed
        );
        self
    }

    /// Panics unless the wall time was within `[lo, hi]`.
    #[track_caller]
    pub fn assert_elapsed_within(&self, lo: Duration, hi: Duration) -> &Self {
        assert!(
            self.elapsed >= lo && self.elapsed <= hi,
            "took {:?}, expected between {lo:?} and {hi:?}\n{self}",
            self.elapsed
        );
        self
    }

    /// Panics unless stdout or stderr (case-insensitively) contains one of `words`.
    #[track_caller]
    pub fn assert_mentions(&self, words: &[&str]) -> &Self {
        let t = self.text();
        assert!(
            words.iter().any(|w| t.contains(&w.to_lowercase())),
            "output names none of {words:?}\n{self}"
        );
        self
    }

    /// stdout parsed as JSON (panics with the run when it is not).
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{self}"))
    }

    /// `results[0]` of the native JSON output (docs/design.md).
    #[track_caller]
    pub fn json_result(&self) -> serde_json::Value {
        let v = self.json();
        let results = v["results"]
            .as_array()
            .unwrap_or_else(|| panic!("no \"results\" array in JSON\n{self}"));
        assert_eq!(results.len(), 1, "expected one result\n{self}");
        results[0].clone()
    }

    /// The words of stdout, lowercased (split on anything not alphanumeric).
    pub fn stdout_words(&self) -> Vec<String> {
        self.stdout
            .to_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--- {} (exit {:?}, {:?}{})\n--- stdout:\n{}\n--- stderr:\n{}",
            self.what,
            self.code,
            self.elapsed,
            if self.timed_out {
                ", KILLED at time limit"
            } else {
                ""
            },
            self.stdout,
            self.stderr
        )
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

fn drain<R: Read + Send + 'static>(r: Option<R>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut buf);
        }
        buf
    })
}

/// Runs `cmd` (stdin closed, in its own process group) and kills the whole
/// group if it is still running after `limit`.
pub fn run(mut cmd: Command, limit: Duration) -> Run {
    enough_open_files();
    let what = describe(&cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let t0 = Instant::now();
    let mut child = cmd.spawn().unwrap_or_else(|e| {
        panic!(
            "cannot run {what}: {e} (a tool is found with support::tool and checked \
                 with require! first, so that a missing one is a skip)"
        )
    });
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let mut timed_out = false;
    let status: ExitStatus = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if t0.elapsed() >= limit {
            timed_out = true;
            kill_group(child.id(), "KILL");
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        thread::sleep(Duration::from_millis(2));
    };
    let elapsed = t0.elapsed();
    Run {
        what,
        code: status.code(),
        stdout: String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned(),
        stderr: String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned(),
        elapsed,
        timed_out,
    }
}

/// Sends SIG`sig` to the process group `pgid` (by number, never by name).
pub fn kill_group(pgid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg("--")
        .arg(format!("-{pgid}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// True while process `pid` exists (and is not a zombie of ours).
pub fn pid_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(')')
            .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// A per-BMC lock namespace of the command's own (`FENCEKIT_LOCK_SCOPE`):
/// the peers of concurrent tests (and of one test's threads) all listen on
/// 127.0.0.1, which fencekit would otherwise take for one BMC. Tests of the
/// lock itself (tests/lock.rs, fleet's serialisation tests) build their
/// commands without it.
pub fn lock_scope() -> String {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// `fencekit ARGS…` with the password in `FENCEKIT_PASSWORD` (not in argv),
/// `RUST_BACKTRACE` off, no colour, and the test's own lock scope.
pub fn fencekit_cmd(args: &[&str], password: &str) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .env("FENCEKIT_PASSWORD", password)
        .env("NO_COLOR", "1")
        .env("FENCEKIT_LOCK_SCOPE", lock_scope())
        .env_remove("RUST_LOG");
    c
}

/// Runs `fencekit ARGS…` (password in the environment), killed after 30 s.
pub fn fencekit(args: &[&str], password: &str) -> Run {
    run(fencekit_cmd(args, password), Duration::from_secs(30))
}

/// `ipmi://USER@127.0.0.1:PORT`, the native target syntax.
pub fn target(port: u16) -> String {
    format!("ipmi://{USER}@{HOST}:{port}")
}

/// `ipmitool -I lanplus -H 127.0.0.1 -p PORT -U admin -P PASS [-C SUITE] ARGS…`.
pub fn ipmitool(port: u16, password: &str, cipher: Option<u8>, args: &[&str]) -> Run {
    ipmitool_at(HOST, port, password, cipher, args)
}

/// As [`ipmitool`], against `host` (a lab node's own address).
pub fn ipmitool_at(
    host: &str,
    port: u16,
    password: &str,
    cipher: Option<u8>,
    args: &[&str],
) -> Run {
    let mut c = tool("ipmitool");
    c.args(["-I", "lanplus", "-H", host, "-p", &port.to_string()])
        .args(["-U", USER, "-P", password]);
    if let Some(s) = cipher {
        c.args(["-C", &s.to_string()]);
    }
    c.args(args);
    run(c, Duration::from_secs(40))
}

/// Polls `f` every 20 ms until it returns true or `limit` passes.
pub fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    loop {
        if f() {
            return true;
        }
        if t0.elapsed() >= limit {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------- peers ----

fn tempdir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("tempdir")
}

fn read_bit(path: &Path) -> bool {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .trim()
        == "1"
}

/// One OpenIPMI `ipmi_sim` BMC on 127.0.0.1 (suites 0-14, not 17), started by
/// `tests/peers/ipmi_sim_start.sh` with its run directory in a tempdir. The
/// power state lives in the `power` file (0/1), every set is appended to
/// `ops`, and a `stuck` file makes power changes be ignored.
pub struct IpmiSim {
    /// Its address (127.0.0.1 unless started with [`IpmiSim::start_at`]).
    pub host: Ipv4Addr,
    /// UDP port on `host`.
    pub port: u16,
    pid: u32,
    run_dir: PathBuf,
    _dir: tempfile::TempDir,
}

impl IpmiSim {
    /// Starts a simulator for admin/password, power on or off.
    pub fn start(power_on: bool) -> IpmiSim {
        IpmiSim::start_with(USER, PASSWORD, power_on)
    }

    /// Starts a simulator with the given credentials.
    pub fn start_with(user: &str, password: &str, power_on: bool) -> IpmiSim {
        IpmiSim::start_at(
            Ipv4Addr::LOCALHOST,
            free_port(),
            user,
            password,
            power_on,
            None,
        )
    }

    /// Starts a simulator on `host:port` (a loopback address of the
    /// test's own, e.g. [`own_loopback`]: fencekit's per-BMC lock is keyed
    /// by address; a restarted BMC keeps its address), with the given
    /// credentials and, when given, GUID (32 hex digits).
    pub fn start_at(
        host: Ipv4Addr,
        port: u16,
        user: &str,
        password: &str,
        power_on: bool,
        guid: Option<&str>,
    ) -> IpmiSim {
        let dir = tempdir("fencekit-ipmisim-");
        let mut c = Command::new("sh");
        c.arg(peer_scripts().join("ipmi_sim_start.sh"))
            .args([&host.to_string(), &port.to_string(), user, password])
            .arg(if power_on { "1" } else { "0" })
            .env("IPMI_SIM_RUNDIR", dir.path());
        if let Some(g) = guid {
            c.env("IPMI_SIM_GUID", g);
        }
        let r = run(c, Duration::from_secs(15));
        let run_dir = dir.path().join(format!("{host}-{port}"));
        let pid: Option<u32> = r.stdout.lines().last().and_then(|l| l.trim().parse().ok());
        let Some(pid) = pid.filter(|_| r.code == Some(0)) else {
            panic!("ipmi_sim_start.sh failed\n{r}");
        };
        let sim = IpmiSim {
            host,
            port,
            pid,
            run_dir,
            _dir: dir,
        };
        if !(wait_udp_bound_at(host, port, Duration::from_secs(5)) && pid_alive(pid)) {
            let log = sim.log();
            drop(sim);
            panic!("ipmi_sim on port {port} did not come up; log:\n{log}");
        }
        sim
    }

    /// `ipmi://admin@127.0.0.1:PORT` (`HOST` when started elsewhere).
    pub fn target(&self) -> String {
        format!("ipmi://{USER}@{}:{}", self.host, self.port)
    }

    /// The simulator's own power state (its state file).
    pub fn power(&self) -> bool {
        read_bit(&self.run_dir.join("power"))
    }

    /// Sets the power state behind the simulator's back.
    pub fn set_power(&self, on: bool) {
        fs::write(self.run_dir.join("power"), if on { "1\n" } else { "0\n" }).unwrap();
    }

    /// A stuck BMC accepts power commands and never changes state.
    pub fn set_stuck(&self, stuck: bool) {
        let f = self.run_dir.join("stuck");
        if stuck {
            fs::write(f, "").unwrap();
        } else {
            let _ = fs::remove_file(f);
        }
    }

    /// Power operations the simulator carried out, e.g. `["set power 0"]`.
    pub fn ops(&self) -> Vec<String> {
        fs::read_to_string(self.run_dir.join("ops"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The simulator's log (for failure messages).
    pub fn log(&self) -> String {
        fs::read_to_string(self.run_dir.join("log")).unwrap_or_default()
    }
}

impl Drop for IpmiSim {
    fn drop(&mut self) {
        // ipmi_sim_start.sh starts it with setsid: its PGID is its PID.
        kill_group(self.pid, "TERM");
        if !eventually(Duration::from_secs(2), || !pid_alive(self.pid)) {
            kill_group(self.pid, "KILL");
        }
    }
}

/// A child we spawned into its own process group, killed on drop.
struct Guarded {
    child: Child,
}

impl Guarded {
    fn spawn(mut cmd: Command, what: &str) -> Guarded {
        cmd.process_group(0);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        Guarded { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if self.exited().is_some() {
            return;
        }
        kill_group(self.child.id(), "TERM");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(2) {
            if self.exited().is_some() {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        kill_group(self.child.id(), "KILL");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `file` contains `needle` (the peer printed its banner).
fn wait_for_text(file: &Path, needle: &str, limit: Duration, proc: &mut Guarded) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if fs::read_to_string(file).is_ok_and(|s| s.contains(needle)) {
            return true;
        }
        if proc.exited().is_some() {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The pyghmi BMC (`tests/peers/pyghmi_bmc.py`, a second independent BMC
/// implementation) on 127.0.0.1 with suites 3 and/or 17 and its power state
/// in a state file.
pub struct Pyghmi {
    /// UDP port on 127.0.0.1.
    pub port: u16,
    state_file: PathBuf,
    log: PathBuf,
    proc: Guarded,
    _dir: tempfile::TempDir,
}

impl Pyghmi {
    /// Starts a BMC for admin/password offering `ciphers` ("3", "17", "3,17").
    pub fn start(ciphers: &str, power_on: bool) -> Pyghmi {
        Pyghmi::start_at(free_port(), ciphers, power_on, None)
    }

    /// [`Pyghmi::start`] on `port` (a restarted BMC keeps its address),
    /// with a fixed GUID when given (else a random one per start).
    pub fn start_at(port: u16, ciphers: &str, power_on: bool, uuid: Option<&str>) -> Pyghmi {
        let dir = tempdir("fencekit-pyghmi-");
        let state_file = dir.path().join("power");
        let log = dir.path().join("log");
        let mut c = Command::new(venv_python());
        c.arg(peer_scripts().join("pyghmi_bmc.py"))
            .args(["--address", HOST, "--port", &port.to_string()])
            .args(["--user", USER, "--password", PASSWORD])
            .args(["--ciphers", ciphers])
            .args(["--power", if power_on { "on" } else { "off" }])
            .arg("--state-file")
            .arg(&state_file)
            .args(uuid.map(|u| format!("--uuid={u}")))
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(fs::File::create(&log).unwrap())
            .stderr(fs::File::create(dir.path().join("stderr")).unwrap());
        let mut proc = Guarded::spawn(c, "pyghmi_bmc.py");
        let up = wait_for_text(
            &log,
            "pyghmi fake BMC on",
            Duration::from_secs(20),
            &mut proc,
        ) && wait_udp_bound(port, Duration::from_secs(5));
        if !up {
            let err = fs::read_to_string(dir.path().join("stderr")).unwrap_or_default();
            panic!("pyghmi BMC on port {port} did not come up; stderr:\n{err}");
        }
        Pyghmi {
            port,
            state_file,
            log,
            proc,
            _dir: dir,
        }
    }

    /// `ipmi://admin@127.0.0.1:PORT`.
    pub fn target(&self) -> String {
        target(self.port)
    }

    /// The BMC's own power state (its state file).
    pub fn power(&self) -> bool {
        read_bit(&self.state_file)
    }

    /// Sets the power state behind the BMC's back.
    pub fn set_power(&self, on: bool) {
        fs::write(&self.state_file, if on { "1\n" } else { "0\n" }).unwrap();
    }

    /// Path of the state file (for watchers).
    pub fn state_file(&self) -> &Path {
        &self.state_file
    }

    /// PID of the BMC process.
    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }
}

/// One datagram seen by [`UdpProxy`] from the client.
#[derive(Debug, Clone, PartialEq)]
pub struct Datagram {
    /// 1-based index (as `--drop` counts).
    pub index: usize,
    /// Payload size.
    pub bytes: usize,
    /// Dropped by the proxy (a `--drop` index, or black hole).
    pub dropped: bool,
    /// Milliseconds since the proxy's first datagram.
    pub at_ms: f64,
}

/// `tests/peers/udp_proxy.py`: forwards to a BMC on 127.0.0.1 dropping the
/// listed client datagrams, or without a target a black hole; logs every
/// datagram, which is how tests count what a client sends.
pub struct UdpProxy {
    /// The address clients talk to (127.0.0.1 unless started with
    /// [`UdpProxy::start_between`]).
    pub host: Ipv4Addr,
    /// UDP port on `host` that clients talk to.
    pub port: u16,
    log: PathBuf,
    proc: Guarded,
    _dir: tempfile::TempDir,
}

impl UdpProxy {
    /// Starts a proxy to `target` (a port on 127.0.0.1), or a black hole.
    pub fn start(target: Option<u16>, drop: &[usize]) -> UdpProxy {
        UdpProxy::start_with(target, drop, &[])
    }

    /// [`UdpProxy::start`] with more `udp_proxy.py` options (e.g.
    /// `["--delay", "400ms"]`: a BMC whose answers come late).
    pub fn start_with(target: Option<u16>, drop: &[usize], extra: &[&str]) -> UdpProxy {
        let target = target.map(|t| std::net::SocketAddrV4::new(Ipv4Addr::LOCALHOST, t));
        UdpProxy::start_between(Ipv4Addr::LOCALHOST, target, drop, extra)
    }

    /// [`UdpProxy::start_with`] listening on `host` (an address of the
    /// test's own), forwarding to `target` (any loopback address).
    pub fn start_between(
        host: Ipv4Addr,
        target: Option<std::net::SocketAddrV4>,
        drop: &[usize],
        extra: &[&str],
    ) -> UdpProxy {
        let dir = tempdir("fencekit-proxy-");
        let port = free_port();
        let log = dir.path().join("log");
        let py = if venv_python().exists() {
            venv_python()
        } else {
            PathBuf::from("python3")
        };
        let mut c = Command::new(py);
        c.arg(peer_scripts().join("udp_proxy.py"))
            .arg("--listen")
            .arg(format!("{host}:{port}"))
            .arg("--log")
            .arg(&log);
        if let Some(t) = target {
            c.arg("--target").arg(t.to_string());
        }
        if !drop.is_empty() {
            let list: Vec<String> = drop.iter().map(|d| d.to_string()).collect();
            c.arg("--drop").arg(list.join(","));
        }
        c.args(extra);
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(dir.path().join("stderr")).unwrap());
        let mut proc = Guarded::spawn(c, "udp_proxy.py");
        let up = wait_for_text(&log, "proxy ", Duration::from_secs(10), &mut proc)
            && wait_udp_bound_at(host, port, Duration::from_secs(5));
        if !up {
            let err = fs::read_to_string(dir.path().join("stderr")).unwrap_or_default();
            panic!("udp_proxy on port {port} did not come up; stderr:\n{err}");
        }
        UdpProxy {
            host,
            port,
            log,
            proc,
            _dir: dir,
        }
    }

    /// `ipmi://admin@127.0.0.1:PORT` (through the proxy).
    pub fn target(&self) -> String {
        format!("ipmi://{USER}@{}:{}", self.host, self.port)
    }

    /// Client datagrams so far, in order.
    pub fn datagrams(&self) -> Vec<Datagram> {
        // lines: "   12.3 ms  client#4 56 bytes fwd" / "... DROPPED"
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                let at_ms: f64 = it.next()?.parse().ok()?;
                it.next()?; // "ms"
                let index = it.next()?.strip_prefix("client#")?.parse().ok()?;
                let bytes = it.next()?.parse().ok()?;
                it.next()?; // "bytes"
                let dropped = it.next()? == "DROPPED";
                Some(Datagram {
                    index,
                    bytes,
                    dropped,
                    at_ms,
                })
            })
            .collect()
    }

    /// Number of datagrams the client sent so far.
    pub fn client_datagrams(&self) -> usize {
        self.datagrams().len()
    }

    /// The raw log (for failure messages).
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// One simulated BMC announced by `fencekit lab`.
#[derive(Debug, Clone)]
pub struct LabNode {
    /// First word of the line, e.g. `node01`.
    pub name: String,
    /// IPMI host from the `ipmi://` URL.
    pub host: String,
    /// IPMI UDP port from the `ipmi://` URL.
    pub port: u16,
    /// The whole line as printed.
    pub line: String,
}

impl LabNode {
    /// `ipmi://admin@HOST:PORT`.
    pub fn target(&self) -> String {
        format!("ipmi://{USER}@{}:{}", self.host, self.port)
    }
}

/// `fencekit lab …` running as a child: its announced nodes, killed on drop.
pub struct Lab {
    /// Nodes in the order printed.
    pub nodes: Vec<LabNode>,
    /// Lines printed before `ready`.
    pub banner: Vec<String>,
    stderr: PathBuf,
    proc: Guarded,
    _dir: tempfile::TempDir,
}

/// Parses one `fencekit lab` node line: `NAME ipmi://[USER@]HOST:PORT …`.
pub fn parse_lab_line(line: &str) -> Option<LabNode> {
    let mut words = line.split_whitespace();
    let name = words.next()?.to_string();
    let url = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("ipmi://"))?;
    let hostport = url.rsplit_once('@').map(|(_, h)| h).unwrap_or(url);
    let hostport = hostport.trim_end_matches('/');
    let (host, port) = hostport.rsplit_once(':')?;
    Some(LabNode {
        name,
        host: host.to_string(),
        port: port.parse().ok()?,
        line: line.to_string(),
    })
}

impl Lab {
    /// Starts `fencekit lab ARGS…` (adding `--bind` [`own_loopback`] unless
    /// `args` has a `--bind`, so labs of concurrent tests never share a
    /// per-BMC lock; without `--ipmi-port-base` the lab picks free ports
    /// itself) and waits (≤ 15 s) for its `ready` line.
    pub fn start(args: &[&str]) -> Lab {
        let dir = tempdir("fencekit-lab-");
        let mut argv: Vec<String> = vec!["lab".into()];
        argv.extend(args.iter().map(|s| s.to_string()));
        if !args.contains(&"--bind") {
            argv.extend(["--bind".into(), own_loopback().to_string()]);
        }
        if let Some(b) = argv.iter().position(|a| a == "--bind") {
            let addr = argv.get(b + 1).cloned().unwrap_or_default();
            assert!(
                addr.starts_with("127."),
                "lab must bind to 127.0.0.0/8, got {addr}"
            );
        }
        let stderr = dir.path().join("stderr");
        let mut c = Command::new(bin());
        c.args(&argv)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&stderr).unwrap());
        let mut proc = Guarded::spawn(c, "fencekit lab");
        let out = proc.child.stdout.take().expect("lab stdout");
        // Reader thread: forwards lines until EOF (keeps draining the pipe
        // after `ready` so that the lab never blocks on a full pipe).
        let (tx, rx) = mpsc::channel::<String>();
        thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                // once nobody listens any more, keep draining
                let _ = tx.send(line);
            }
        });
        let mut banner = Vec::new();
        let mut found = Vec::new();
        let t0 = Instant::now();
        let mut ready = false;
        while t0.elapsed() < Duration::from_secs(15) {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    // "ready" or "ready: N simulated BMC(s); …"
                    if line.trim() == "ready" || line.starts_with("ready:") {
                        ready = true;
                        break;
                    }
                    if let Some(n) = parse_lab_line(&line) {
                        found.push(n);
                    }
                    banner.push(line);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if proc.exited().is_some() {
                        break;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        if !ready {
            let err = fs::read_to_string(&stderr).unwrap_or_default();
            panic!(
                "`fencekit {}` did not print `ready` within 15 s\nstdout so far:\n{}\nstderr:\n{err}",
                argv.join(" "),
                banner.join("\n")
            );
        }
        for n in &found {
            assert!(
                n.host.starts_with("127."),
                "lab node outside 127.0.0.0/8: {}",
                n.line
            );
        }
        Lab {
            nodes: found,
            banner,
            stderr,
            proc,
            _dir: dir,
        }
    }

    /// The lab's stderr so far.
    pub fn stderr(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// PID of the `fencekit lab` process.
    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// True while the lab process runs.
    pub fn running(&mut self) -> bool {
        self.proc.exited().is_none()
    }

    /// Sends SIGTERM to the lab (by PID) and waits up to `limit` for it to
    /// exit; its exit status, or `None` if it is still running.
    pub fn terminate(&mut self, limit: Duration) -> Option<ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.proc.pid().to_string()])
            .status();
        let t0 = Instant::now();
        loop {
            if let Some(st) = self.proc.exited() {
                return Some(st);
            }
            if t0.elapsed() >= limit {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

// ---------------------------------------------------------------------------
// The OpenSSH peer (tests/peers/sshd_start.sh)

/// The SSH peer's user.
pub const SSH_USER: &str = "fencetest";
/// Its password.
pub const SSH_PASS: &str = "fencepass";

/// Prints why a test is skipped, or panics under `FENCEKIT_REQUIRE_PEERS=1`.
/// The line goes to stderr past the test harness's capture (a plain
/// `cargo test` shows every skip, not only `--nocapture`), and to the
/// captured stdout as before.
pub fn skip(why: &str) {
    use std::io::Write;
    let msg = format!("SKIP {}: {why}", test_name());
    if require_peers() {
        panic!("{msg}, and FENCEKIT_REQUIRE_PEERS=1");
    }
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
    println!("{msg}");
}

/// One test at a time: the peer's virsh and power state is per user, not per sshd.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A private sshd on 127.0.0.1, stopped (by its PID, through
/// `sshd_stop.sh`) on drop.
pub struct Sshd {
    /// Its port.
    pub port: u16,
    /// Its run directory.
    pub dir: PathBuf,
    pid: u32,
}

impl Sshd {
    /// Starts one, or returns `None` (after a SKIP line) when the peer
    /// cannot run here.
    pub fn start() -> Option<Sshd> {
        if !(peer_available("sshd") && peer_available("ssh") && peer_available("virsh")) {
            return None;
        }
        if !is_root() {
            skip("sshd_start.sh must run as root (it creates the user fencetest)");
            return None;
        }
        let port = free_port();
        let mut c = Command::new("bash");
        c.arg(peer_scripts().join("sshd_start.sh"))
            .arg(port.to_string())
            .env("PEERS_DIR", peers_dir());
        let r = run(c, Duration::from_secs(30));
        let pid: Option<u32> = r.stdout.lines().last().and_then(|l| l.trim().parse().ok());
        let Some(pid) = pid.filter(|_| r.code == Some(0)) else {
            panic!("sshd_start.sh {port} failed\n{r}");
        };
        let dir = peer_run_dir().join(format!("sshd-{port}"));
        Some(Sshd { port, dir, pid })
    }

    pub fn key(&self) -> PathBuf {
        self.dir.join("client_ed25519")
    }

    pub fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }

    pub fn host_pub(&self) -> PathBuf {
        self.dir.join("ssh_host_ed25519_key.pub")
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }

    /// OpenSSH's own fingerprint of the server's host key.
    pub fn fingerprint(&self) -> String {
        let r = run(
            {
                let mut c = Command::new("ssh-keygen");
                c.arg("-lf").arg(self.host_pub());
                c
            },
            Duration::from_secs(10),
        );
        r.stdout
            .split_whitespace()
            .nth(1)
            .unwrap_or_else(|| panic!("ssh-keygen -lf: {r}"))
            .to_string()
    }

    /// Runs `cmd` on the server with OpenSSH's client (key auth).
    pub fn ssh(&self, cmd: &str) -> Run {
        self.ssh_with(&[], cmd)
    }

    /// [`Sshd::ssh`] with extra client options.
    pub fn ssh_with(&self, opts: &[&str], cmd: &str) -> Run {
        let mut c = Command::new(self.dir.join("ssh-wrap"));
        c.args(opts)
            .arg("-i")
            .arg(self.key())
            .args(["-o", "BatchMode=yes", "-p", &self.port.to_string()])
            .arg(format!("{SSH_USER}@{HOST}"))
            .arg(cmd);
        run(c, Duration::from_secs(20))
    }

    /// The domain's state as the server's own virsh reports it.
    pub fn domstate(&self, domain: &str) -> String {
        let r = self.ssh(&format!("virsh domstate {domain}"));
        r.stdout.trim().to_string()
    }

    /// The power script's state for `name` ("on"/"off").
    pub fn power(&self, name: &str) -> String {
        self.ssh(&format!("power status {name}"))
            .stdout
            .trim()
            .to_string()
    }

    pub fn cfg(&self, auth: SshAuth, profile: Profile) -> SshConfig {
        let mut c = SshConfig::new(HOST, SSH_USER, auth, profile);
        c.port = self.port;
        c.host_keys = HostKeyPolicy::KnownHosts(Some(self.known_hosts()));
        c.connect_timeout = Duration::from_secs(10);
        c.command_timeout = Duration::from_secs(20);
        c
    }

    pub fn key_auth(&self) -> SshAuth {
        SshAuth::Key {
            path: self.key(),
            passphrase: None,
        }
    }

    pub fn virsh(&self, auth: SshAuth, plug: &str) -> SshConfig {
        self.cfg(
            auth,
            Profile::Virsh {
                plug: Some(plug.to_string()),
            },
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let mut c = Command::new("bash");
        c.arg(peer_scripts().join("sshd_stop.sh"))
            .arg(self.port.to_string())
            .env("PEERS_DIR", peers_dir());
        let _ = run(c, Duration::from_secs(15));
        if pid_alive(self.pid) {
            // setsid in the start script: its process group is its PID.
            kill_group(self.pid, "KILL");
        }
        // Keep the run directory (sshd.log) of a failed test for reading.
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

// ---------------------------------------------------------------------------
// Running fence agents (ours and upstream) side by side

/// What one agent run produced.
#[derive(Debug, Clone)]
pub struct AgentOut {
    /// Exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Wall time.
    pub took: Duration,
}

/// Runs `prog ARGS` with `stdin` (closed when `None`), cwd `/`, in its own
/// process group, whole group killed at `limit`.
pub fn exec_agent(prog: &Path, args: &[String], stdin: Option<&str>, limit: Duration) -> AgentOut {
    use std::io::Write as _;
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .current_dir("/")
        .env("PYTHONWARNINGS", "ignore")
        .env("FENCEKIT_LOCK_SCOPE", lock_scope())
        .env_remove("PCMK_service")
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
        if let Some(mut pipe) = child.stdin.take() {
            let _ = pipe.write_all(text.as_bytes());
        }
    }
    let pid = child.id();
    let guard = thread::spawn(move || {
        let t = Instant::now();
        while t.elapsed() < limit {
            if !pid_alive(pid) {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        kill_group(pid, "KILL");
    });
    let o = child.wait_with_output().expect("wait");
    let took = t0.elapsed();
    let _ = guard.join();
    AgentOut {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        took,
    }
}

// ---------------------------------------------------------------------------
// The net-snmp peer (tests/peers/snmpd_start.sh): a simulated PDU

/// Read-write community of the snmpd peer.
pub const SNMP_COMMUNITY: &str = "private";
/// v3 authentication password of every snmpd peer user.
pub const SNMP_AUTH_PASS: &str = "authpass123";
/// v3 privacy password of every snmpd peer user.
pub const SNMP_PRIV_PASS: &str = "privpass123";

/// A private snmpd on 127.0.0.1 serving a simulated PDU, stopped (by its
/// PID, through `snmpd_stop.sh`) on drop.
pub struct Snmpd {
    /// Its UDP port.
    pub port: u16,
    /// Its run directory (state.json, ops.log, snmpd.log).
    pub dir: PathBuf,
    pid: u32,
}

impl Snmpd {
    /// Starts one serving `kind` (`apc` or `eaton`) with `outlets` outlets,
    /// all on; `None` (after a SKIP line) when snmpd is not installed.
    pub fn start(kind: &str, outlets: u32) -> Option<Snmpd> {
        if !(peer_available("snmpd") && peer_available("python3")) {
            return None;
        }
        let port = free_port();
        let mut c = Command::new("bash");
        c.arg(peer_scripts().join("snmpd_start.sh"))
            .arg(port.to_string())
            .arg(kind)
            .arg(outlets.to_string())
            .env("PEERS_DIR", peers_dir());
        let r = run(c, Duration::from_secs(30));
        let pid: Option<u32> = r.stdout.lines().last().and_then(|l| l.trim().parse().ok());
        let Some(pid) = pid.filter(|_| r.code == Some(0)) else {
            panic!("snmpd_start.sh {port} failed\n{r}");
        };
        let dir = peer_run_dir().join(format!("snmpd-{port}"));
        Some(Snmpd { port, dir, pid })
    }

    /// The simulated PDU's state document.
    pub fn state(&self) -> serde_json::Value {
        let text = fs::read_to_string(self.dir.join("state.json")).expect("state.json");
        serde_json::from_str(&text).expect("state.json is JSON")
    }

    /// Replaces the state document.
    pub fn set_state(&self, v: &serde_json::Value) {
        let tmp = self.dir.join("state.json.test");
        fs::write(&tmp, v.to_string()).expect("write state");
        fs::rename(&tmp, self.dir.join("state.json")).expect("rename state");
    }

    /// Whether `outlet` has power.
    pub fn is_on(&self, outlet: u64) -> bool {
        self.state()["on"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x.as_u64() == Some(outlet)))
    }

    /// Powers `outlet` on or off directly in the state file.
    pub fn set_on(&self, outlet: u64, on: bool) {
        let mut st = self.state();
        let mut list: Vec<u64> = st["on"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_u64()).collect())
            .unwrap_or_default();
        list.retain(|&x| x != outlet);
        if on {
            list.push(outlet);
            list.sort_unstable();
        }
        st["on"] = serde_json::json!(list);
        self.set_state(&st);
    }

    /// Makes `outlets` accept commands without switching (a stuck relay).
    pub fn set_refuse(&self, outlets: &[u64]) {
        let mut st = self.state();
        st["refuse"] = serde_json::json!(outlets);
        self.set_state(&st);
    }

    /// The sets the PDU carried out, one "OID VALUE" line each.
    pub fn ops(&self) -> Vec<String> {
        fs::read_to_string(self.dir.join("ops.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The snmpd log.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("snmpd.log")).unwrap_or_default()
    }
}

impl Drop for Snmpd {
    fn drop(&mut self) {
        let _ = Command::new("sh")
            .arg(peer_scripts().join("snmpd_stop.sh"))
            .arg(self.port.to_string())
            .env("PEERS_DIR", peers_dir())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.pid;
    }
}
