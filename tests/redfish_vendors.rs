//! The vendor matrix (issue 14): every Redfish tree captured from a real BMC
//! (`../shared/vendors/`, read in place) served with its vendor family's
//! behaviour (`../shared/reference/vendors.md`) by an independent Python
//! server (`tests/peers/vendor_redfish.py`), and the same cases against the
//! lab's vendor profiles (`fencekit::lab::redfish::Vendor`), natively and as
//! `fence_redfish`: status, off, on, reboot, already off/on, off while
//! booting, on while powering off, status while booting, off when the state
//! changes between the read and the POST, and (natively) a session login
//! and discovery without a system path.
//!
//! Every case checks the exit code and the result line, that the node is in
//! the right state when fencekit reports success (not merely later), the
//! state once every transition has ended, and the number of reset POSTs the
//! BMC received (no case sends more than the vendor needs). Transitions take
//! [`TRANSITION`] (≥ 1.5 s). Cases run in parallel threads.
//!
//! `FENCEKIT_REGENERATE=1` rewrites the vendor section of
//! `docs/reliability.md`; otherwise the test checks that the section lists
//! every row it ran.

mod support;

use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::redfish::{LabCert, LabRedfish, RedfishFaults, RedfishLabOptions, Vendor};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

const USER: &str = "admin";
const PASSWORD: &str = "vendor-pw";
/// How long a power change takes on the simulated BMCs.
const TRANSITION: Duration = Duration::from_millis(1500);
/// Cases in flight at once.
const PARALLEL: usize = 12;
/// Hard limit per fencekit run.
const LIMIT: Duration = Duration::from_secs(60);

// ------------------------------------------------------------ profiles ----

/// A vendor family, its captured tree and the system it fences.
#[derive(Clone, Copy, Debug)]
struct Profile {
    name: &'static str,
    tree: &'static str,
    system: &'static str,
    /// GET shows PoweringOn/PoweringOff during a transition (vendors.md).
    shows: bool,
    /// Refuses resets during a transition (iLO).
    refuses_in_transition: bool,
    /// The service lists more than one system.
    several: bool,
    vendor: Vendor,
}

const PROFILES: [Profile; 8] = [
    Profile {
        name: "idrac",
        tree: "idrac9-r750",
        system: "/redfish/v1/Systems/System.Embedded.1",
        shows: true,
        refuses_in_transition: false,
        several: false,
        vendor: Vendor::Idrac,
    },
    Profile {
        name: "ilo",
        tree: "ilo5-dl385g10p",
        system: "/redfish/v1/Systems/1",
        shows: true,
        refuses_in_transition: true,
        several: false,
        vendor: Vendor::Ilo,
    },
    Profile {
        name: "xcc",
        tree: "xcc-sr670v2",
        system: "/redfish/v1/Systems/1",
        shows: false,
        refuses_in_transition: false,
        several: false,
        vendor: Vendor::Xcc,
    },
    Profile {
        name: "smc",
        tree: "smc-x13-821ge",
        system: "/redfish/v1/Systems/1",
        shows: false,
        refuses_in_transition: false,
        several: false,
        vendor: Vendor::Smc,
    },
    Profile {
        name: "bmcweb",
        tree: "openbmc-stock",
        system: "/redfish/v1/Systems/system",
        shows: true,
        refuses_in_transition: false,
        several: false,
        vendor: Vendor::Bmcweb,
    },
    Profile {
        name: "bmcweb204",
        tree: "openbmc-stock",
        system: "/redfish/v1/Systems/system",
        shows: true,
        refuses_in_transition: false,
        several: false,
        vendor: Vendor::Bmcweb204,
    },
    Profile {
        name: "ami",
        tree: "dgxh100-ami",
        system: "/redfish/v1/Systems/DGX",
        shows: false,
        refuses_in_transition: false,
        several: true,
        vendor: Vendor::Ami,
    },
    Profile {
        name: "ami-task",
        tree: "dgxh100-ami",
        system: "/redfish/v1/Systems/DGX",
        shows: false,
        refuses_in_transition: false,
        several: true,
        vendor: Vendor::AmiTask,
    },
];

// --------------------------------------------------------------- cases ----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    Status,
    Off,
    On,
    Reboot,
    AlreadyOff,
    AlreadyOn,
    OffWhileBooting,
    OnWhilePoweringOff,
    StatusWhileBooting,
    StaleOff,
    SessionOff,
    Discover,
}

const CASES: [Case; 12] = [
    Case::Status,
    Case::Off,
    Case::On,
    Case::Reboot,
    Case::AlreadyOff,
    Case::AlreadyOn,
    Case::OffWhileBooting,
    Case::OnWhilePoweringOff,
    Case::StatusWhileBooting,
    Case::StaleOff,
    Case::SessionOff,
    Case::Discover,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Native,
    Agent,
}

/// How a case starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// Settled on or off.
    Settled,
    /// A power-on under way when the client arrives.
    Booting,
    /// A power-off under way when the client arrives.
    ShuttingDown,
    /// Another actor flips the power right after the client's first read.
    Stale,
}

impl Case {
    fn words(self) -> &'static str {
        match self {
            Case::Status => "status",
            Case::Off => "off",
            Case::On => "on",
            Case::Reboot => "reboot",
            Case::AlreadyOff => "off when already off",
            Case::AlreadyOn => "on when already on",
            Case::OffWhileBooting => "off while booting",
            Case::OnWhilePoweringOff => "on while powering off",
            Case::StatusWhileBooting => "status while booting",
            Case::StaleOff => "off, state changes between read and POST",
            Case::SessionOff => "off with a SessionService login",
            Case::Discover => "status, system discovered",
        }
    }

    fn action(self) -> &'static str {
        match self {
            Case::Status | Case::StatusWhileBooting | Case::Discover => "status",
            Case::Off | Case::AlreadyOff | Case::OffWhileBooting | Case::StaleOff => "off",
            Case::SessionOff => "off",
            Case::On | Case::AlreadyOn | Case::OnWhilePoweringOff => "on",
            Case::Reboot => "reboot",
        }
    }

    fn modes(self) -> &'static [Mode] {
        match self {
            // fence_redfish has no session login and needs no discovery case
            // of its own (the side-by-side suite covers it against sushy).
            Case::SessionOff | Case::Discover => &[Mode::Native],
            _ => &[Mode::Native, Mode::Agent],
        }
    }

    /// Initial power and how the case starts.
    fn setup(self) -> (bool, Scenario) {
        match self {
            Case::On | Case::AlreadyOff => (false, Scenario::Settled),
            Case::OffWhileBooting | Case::StatusWhileBooting => (false, Scenario::Booting),
            Case::OnWhilePoweringOff => (true, Scenario::ShuttingDown),
            Case::StaleOff => (true, Scenario::Stale),
            _ => (true, Scenario::Settled),
        }
    }
}

/// What a case must produce on one profile.
#[derive(Clone, Debug)]
struct Expect {
    /// Exit code.
    code: i32,
    /// Agent: the stdout line; native: the JSON `outcome`.
    line: String,
    /// The state when the transitions have ended.
    final_on: bool,
    /// Checked at exit: fencekit reported success, so the node must be there.
    there_at_exit: bool,
    /// Reset POSTs the BMC needs for this case.
    posts: usize,
    /// What the row says in the doc.
    why: &'static str,
}

fn expect(p: &Profile, case: Case, mode: Mode) -> Expect {
    let agent = mode == Mode::Agent;
    let line = |native: &str, agent_line: &str| {
        if agent {
            agent_line.to_string()
        } else {
            native.to_string()
        }
    };
    let e = |code, line: String, final_on, there_at_exit, posts, why| Expect {
        code,
        line,
        final_on,
        there_at_exit,
        posts,
        why,
    };
    match case {
        Case::Status => e(0, line("status", "Status: ON"), true, false, 0, "on"),
        Case::Discover if p.several => e(
            1,
            String::new(),
            true,
            false,
            0,
            "several systems and no system path: refused, both named",
        ),
        Case::Discover => e(0, "status".into(), true, false, 0, "the only system, discovered"),
        Case::Off | Case::SessionOff => e(
            0,
            line("reached", "Success: Powered OFF"),
            false,
            true,
            1,
            "ForceOff, off confirmed",
        ),
        Case::On => e(
            0,
            line("reached", "Success: Powered ON"),
            true,
            true,
            1,
            "On, on confirmed",
        ),
        Case::Reboot => e(
            0,
            line("rebooted", "Success: Rebooted"),
            true,
            true,
            2,
            "ForceOff, off confirmed, On, on confirmed",
        ),
        Case::AlreadyOff if p.shows => e(
            0,
            line("already", "Success: Already OFF"),
            false,
            true,
            0,
            "off read and confirmed; nothing sent",
        ),
        Case::AlreadyOff => e(
            0,
            line("already", "Success: Already OFF"),
            false,
            true,
            1,
            "hidden-transitions quirk: one ForceOff (a no-op here) in case a boot is under way",
        ),
        Case::AlreadyOn if p.shows => e(
            0,
            line("already", "Success: Already ON"),
            true,
            true,
            0,
            "on read and confirmed; nothing sent",
        ),
        Case::AlreadyOn => e(
            0,
            line("already", "Success: Already ON"),
            true,
            true,
            1,
            "hidden-transitions quirk: one On (a no-op here) in case a power-off is under way",
        ),
        Case::OffWhileBooting if p.refuses_in_transition => e(
            0,
            line("reached", "Success: Powered OFF"),
            false,
            true,
            2,
            "PoweringOn read; ForceOff refused (transition in progress); state re-read, boot waited through, ForceOff again",
        ),
        Case::OffWhileBooting if p.shows => e(
            0,
            line("reached", "Success: Powered OFF"),
            false,
            true,
            1,
            "PoweringOn read; ForceOff sent at once (accepted during the transition)",
        ),
        Case::OffWhileBooting => e(
            0,
            line("already", "Success: Already OFF"),
            false,
            true,
            1,
            "the BMC reads Off while booting; the quirk's ForceOff cancels the boot",
        ),
        Case::OnWhilePoweringOff if p.shows => e(
            0,
            line("reached", "Success: Powered ON"),
            true,
            true,
            1,
            "PoweringOff read; waited for Off, then On",
        ),
        Case::OnWhilePoweringOff => e(
            0,
            line("already", "Success: Already ON"),
            true,
            true,
            1,
            "the BMC reads On while powering off; the quirk's On cancels the power-off",
        ),
        Case::StatusWhileBooting if p.shows => e(
            0,
            line("in-transition", "Status: ON"),
            true,
            false,
            0,
            "native: powering on (exit 0); agent: Status: ON, as fence_redfish maps it",
        ),
        Case::StatusWhileBooting => e(
            2,
            line("status", "Status: OFF"),
            true,
            false,
            0,
            "the BMC reads Off while booting: that is what status can report",
        ),
        Case::StaleOff => e(
            0,
            line("reached", "Success: Powered OFF"),
            false,
            true,
            1,
            "On read, then off behind our back; the ForceOff's answer leads to a fresh read",
        ),
    }
}

// ------------------------------------------------------------ backends ----

/// One simulated BMC for one case.
trait Bmcish: Send + Sync {
    /// Its address: one of [`addresses`], its own.
    fn ip(&self) -> std::net::Ipv4Addr;
    /// Its port.
    fn port(&self) -> u16;
    /// Reset POSTs received so far.
    fn posts(&self) -> usize;
    /// (settled power at `at`, power once every transition ends, when they end).
    fn power(&self, at: SystemTime) -> (bool, bool, SystemTime);
}

/// One case ready to run.
struct Job {
    profile: Profile,
    case: Case,
    mode: Mode,
    bmc: Box<dyn Bmcish>,
}

/// The result of one job, as a doc row.
struct Row {
    backend: &'static str,
    profile: &'static str,
    tree: &'static str,
    case: Case,
    mode: Mode,
    code: Option<i32>,
    posts: usize,
    took: Duration,
    what: String,
    pass: bool,
}

impl Row {
    fn key(&self) -> String {
        format!(
            "| {} | {} | {} | {} |",
            self.backend,
            self.profile,
            self.case.words(),
            match self.mode {
                Mode::Native => "native",
                Mode::Agent => "fence_redfish",
            }
        )
    }
}

// ------------------------------------------------------ python backend ----

fn vendors_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vendors");
    d.join("README.md").exists().then_some(d)
}

struct Certs {
    _dir: tempfile::TempDir,
    cert: PathBuf,
    key: PathBuf,
}

/// How many cases one backend runs.
fn plan_len() -> usize {
    PROFILES
        .iter()
        .map(|_| CASES.iter().map(|c| c.modes().len()).sum::<usize>())
        .sum()
}

/// One loopback address per case (both backends reuse them, one after the
/// other): fencekit's per-BMC lock is keyed by address, so cases on one
/// shared address would wait for each other.
fn addresses() -> &'static [std::net::Ipv4Addr] {
    static ADDRS: std::sync::OnceLock<Vec<std::net::Ipv4Addr>> = std::sync::OnceLock::new();
    ADDRS.get_or_init(|| {
        let n = plan_len();
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let [a, b, c, _] = support::own_loopback().octets();
            let left = (n - out.len()).min(250);
            out.extend((1..=left as u8).map(|d| std::net::Ipv4Addr::new(a, b, c, d)));
        }
        out
    })
}

fn certs() -> Certs {
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = vec!["127.0.0.1".into(), "localhost".into()];
    names.extend(addresses().iter().map(|a| a.to_string()));
    let ck = rcgen::generate_simple_self_signed(names).expect("a certificate");
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.key_pair.serialize_pem()).unwrap();
    Certs {
        _dir: dir,
        cert,
        key,
    }
}

/// `tests/peers/vendor_redfish.py` serving many instances, killed on drop.
struct TreeServer {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for TreeServer {
    fn drop(&mut self) {
        support::kill_group(self.child.id(), "TERM");
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        support::kill_group(self.child.id(), "KILL");
        let _ = self.child.wait();
    }
}

struct TreeBmc {
    ip: std::net::Ipv4Addr,
    port: u16,
    log: PathBuf,
    state: PathBuf,
}

impl Bmcish for TreeBmc {
    fn ip(&self) -> std::net::Ipv4Addr {
        self.ip
    }

    fn port(&self) -> u16 {
        self.port
    }

    fn posts(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["method"] == "POST" && v["reset"].is_string())
            .count()
    }

    fn power(&self, at: SystemTime) -> (bool, bool, SystemTime) {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&self.state).unwrap())
            .expect("the state file is JSON");
        let mut now_on = v["power"] == "On";
        let mut last_on = now_on;
        let mut ends = SystemTime::UNIX_EPOCH;
        let at_s = at
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        for ph in v["phases"].as_array().cloned().unwrap_or_default() {
            let on = ph[0] == "On";
            let until = ph[1].as_f64().unwrap_or(0.0);
            if until <= at_s {
                now_on = on;
            }
            last_on = on;
            ends = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(until);
        }
        (now_on, last_on, ends)
    }
}

/// Starts one Python server with an instance per job; returns the jobs.
fn tree_jobs(certs: &Certs) -> Option<(TreeServer, Vec<Job>)> {
    let Some(trees) = vendors_dir() else {
        support::skip("../shared/vendors is not there (the captured trees)");
        return None;
    };
    if !support::peer_available("python3") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut plan = Vec::new();
    for p in PROFILES {
        for case in CASES {
            for &mode in case.modes() {
                plan.push((p, case, mode));
            }
        }
    }
    let base = support::free_ports(plan.len() as u16);
    let mut instances = Vec::new();
    let mut jobs = Vec::new();
    for (i, (p, case, mode)) in plan.into_iter().enumerate() {
        let port = base + i as u16;
        let ip = addresses()[i];
        let (on, scenario) = case.setup();
        let log = dir.path().join(format!("{port}.log"));
        let state = dir.path().join(format!("{port}.state"));
        instances.push(serde_json::json!({
            "host": ip.to_string(),
            "port": port,
            "tree": p.tree,
            "profile": p.name,
            "system": p.system,
            "power": if on { "On" } else { "Off" },
            "scenario": match scenario {
                Scenario::Settled => Value::Null,
                Scenario::Booting => "booting".into(),
                Scenario::ShuttingDown => "shutting-down".into(),
                Scenario::Stale => "stale".into(),
            },
            "log": log,
            "state": state,
        }));
        jobs.push(Job {
            profile: p,
            case,
            mode,
            bmc: Box::new(TreeBmc {
                ip,
                port,
                log,
                state,
            }),
        });
    }
    let server = start_tree_server(dir, &trees, certs, instances);
    Some((server, jobs))
}

/// Starts `vendor_redfish.py` with these instances (files in `dir`).
fn start_tree_server(
    dir: tempfile::TempDir,
    trees: &Path,
    certs: &Certs,
    instances: Vec<Value>,
) -> TreeServer {
    let spec = serde_json::json!({
        "trees": trees,
        "cert": certs.cert,
        "key": certs.key,
        "user": USER,
        "password": PASSWORD,
        "transition": TRANSITION.as_secs_f64(),
        "instances": instances,
    });
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let mut cmd = Command::new("python3");
    cmd.arg(support::peer_scripts().join("vendor_redfish.py"))
        .arg(&spec_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.path().join("stderr")).unwrap());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().expect("python3 runs");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let _ = out.read_line(&mut line);
    let server = TreeServer { child, _dir: dir };
    if line.trim() != "ready" {
        let err = std::fs::read_to_string(server._dir.path().join("stderr")).unwrap_or_default();
        panic!("vendor_redfish.py did not start:\n{err}");
    }
    server
}

// --------------------------------------------------------- lab backend ----

struct LabBmc {
    lab: LabRedfish,
}

impl Bmcish for LabBmc {
    fn ip(&self) -> std::net::Ipv4Addr {
        match self.lab.addr.ip() {
            std::net::IpAddr::V4(v4) => v4,
            std::net::IpAddr::V6(_) => unreachable!("the labs bind IPv4 addresses"),
        }
    }

    fn port(&self) -> u16 {
        self.lab.addr.port()
    }

    fn posts(&self) -> usize {
        self.lab.stats().resets.len()
    }

    fn power(&self, at: SystemTime) -> (bool, bool, SystemTime) {
        let (now_i, now_s) = (Instant::now(), SystemTime::now());
        let at_i = match at.duration_since(now_s) {
            Ok(ahead) => now_i + ahead,
            Err(e) => now_i.checked_sub(e.duration()).unwrap_or(now_i),
        };
        let (now_on, last_on, ends) = self.lab.bmc.lock().forecast(at_i);
        let ends_s = now_s + ends.saturating_duration_since(now_i);
        (now_on, last_on, ends_s)
    }
}

/// The lab services run on a runtime of their own thread, until dropped.
struct LabThread {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for LabThread {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts one lab Redfish service per job (vendor profile, scenario).
fn lab_jobs(certs: &Certs) -> (LabThread, Vec<Job>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let pem = std::fs::read_to_string(&certs.cert).unwrap();
    let key = std::fs::read_to_string(&certs.key).unwrap();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let jobs = start_labs(&pem, &key).await;
            let _ = tx.send(jobs);
            let _ = stopped.await;
        });
    });
    let jobs = rx.recv().expect("the labs start");
    (
        LabThread {
            stop: Some(stop),
            thread: Some(thread),
        },
        jobs,
    )
}

async fn start_labs(pem: &str, key: &str) -> Vec<Job> {
    let mut jobs = Vec::new();
    let mut ips = addresses().iter();
    for p in PROFILES {
        for case in CASES {
            for &mode in case.modes() {
                let (on, scenario) = case.setup();
                let faults = Faults {
                    transition: TRANSITION,
                    ..Faults::default()
                };
                let opts = RedfishLabOptions {
                    username: USER.into(),
                    password: PASSWORD.into(),
                    tls: Some(LabCert::Given {
                        cert_pem: pem.to_string(),
                        key_pem: key.to_string(),
                    }),
                    faults: RedfishFaults {
                        flip_after_read: scenario == Scenario::Stale,
                        transition_at_first_request: match scenario {
                            Scenario::Booting => Some(true),
                            Scenario::ShuttingDown => Some(false),
                            _ => None,
                        },
                        ..RedfishFaults::default()
                    },
                    ..RedfishLabOptions::vendor(p.vendor)
                };
                let bmc = Bmc::new(on, faults);
                let ip = *ips.next().expect("an address per case");
                let lab = LabRedfish::start(std::net::SocketAddr::new(ip.into(), 0), bmc, opts)
                    .await
                    .expect("the lab starts");
                jobs.push(Job {
                    profile: p,
                    case,
                    mode,
                    bmc: Box::new(LabBmc { lab }),
                });
            }
        }
    }
    jobs
}

// -------------------------------------------------------------- running ----

/// The binary under test: this build's, or `FENCEKIT_VENDOR_BIN` (to
/// measure another build, e.g. the one before a fix, against the matrix).
fn binary() -> PathBuf {
    std::env::var_os("FENCEKIT_VENDOR_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(support::bin)
}

/// A directory with `fence_redfish` → the binary under test.
fn agent_link() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-vendors")
            .tempdir()
            .unwrap()
            .keep();
        let link = dir.join("fence_redfish");
        std::os::unix::fs::symlink(binary(), &link).unwrap();
        link
    })
    .clone()
}

fn command(job: &Job, cert: &Path) -> Command {
    let port = job.bmc.port();
    let ip = job.bmc.ip();
    let p = &job.profile;
    let action = job.case.action();
    match job.mode {
        Mode::Native => {
            let target = if job.case == Case::Discover {
                format!("redfish://{USER}@{ip}:{port}")
            } else {
                format!("redfish://{USER}@{ip}:{port}{}", p.system)
            };
            let mut args = vec![action.to_string(), target, "--output".into(), "json".into()];
            args.extend(["--ca-cert".into(), cert.display().to_string()]);
            if job.case == Case::SessionOff {
                args.push("--redfish-session".into());
            }
            let mut c = Command::new(binary());
            c.args(&args)
                .env("FENCEKIT_PASSWORD", PASSWORD)
                .env("NO_COLOR", "1")
                .env_remove("RUST_LOG");
            c
        }
        Mode::Agent => {
            let mut c = Command::new(agent_link());
            c.args(["-a", &ip.to_string(), "-u", &port.to_string(), "-l", USER])
                .args(["-p", PASSWORD, "--ssl-insecure"])
                .arg(format!("--systems-uri={}", p.system))
                .args(["-o", action])
                .env_remove("PCMK_service");
            c
        }
    }
}

fn check(job: &Job, r: &support::Run, exited: SystemTime, want: &Expect) -> Vec<String> {
    let mut bad = Vec::new();
    if r.timed_out || r.code != Some(want.code) {
        bad.push(format!("exit {:?}, expected {}", r.code, want.code));
    }
    match job.mode {
        Mode::Agent => {
            let got = r.stdout.trim_end();
            if got != want.line {
                bad.push(format!("printed {got:?}, expected {:?}", want.line));
            }
        }
        Mode::Native if want.code == 1 => {
            let t = r.text();
            if !(t.contains("system.embedded") || t.contains("/systems/dgx"))
                || !t.contains("hgx_baseboard_0")
            {
                bad.push("the refusal does not name both systems".into());
            }
        }
        Mode::Native => {
            let v: Value = serde_json::from_str(r.stdout.trim()).unwrap_or(Value::Null);
            let res = &v["results"][0];
            if res["outcome"] != want.line.as_str() || res["ok"] != true {
                bad.push(format!(
                    "outcome {} ok {}, expected {}",
                    res["outcome"], res["ok"], want.line
                ));
            }
            if want.line == "in-transition" && res["transition"] != "powering-on" {
                bad.push(format!("transition {}", res["transition"]));
            }
        }
    }
    let (at_exit, _, _) = job.bmc.power(exited);
    if want.there_at_exit && want.code == 0 && at_exit != want.final_on {
        bad.push(format!(
            "success reported while the node was {} (not yet {})",
            if at_exit { "on" } else { "off" },
            if want.final_on { "on" } else { "off" }
        ));
    }
    // Let every transition end, then look at the settled state.
    let (_, _, ends) = job.bmc.power(SystemTime::now());
    if let Ok(left) = ends.duration_since(SystemTime::now()) {
        std::thread::sleep(left + Duration::from_millis(50));
    }
    let (settled, _, _) = job.bmc.power(SystemTime::now());
    if settled != want.final_on {
        bad.push(format!(
            "the node ended {}, expected {}",
            if settled { "on" } else { "off" },
            if want.final_on { "on" } else { "off" }
        ));
    }
    let posts = job.bmc.posts();
    if posts != want.posts {
        bad.push(format!(
            "{posts} reset POST(s), the vendor needs {}",
            want.posts
        ));
    }
    bad
}

fn run_jobs(backend: &'static str, jobs: Vec<Job>, cert: &Path) -> Vec<Row> {
    let next = AtomicUsize::new(0);
    let rows = Mutex::new(Vec::new());
    let jobs = Arc::new(jobs);
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(job) = jobs.get(i) else { break };
                let want = expect(&job.profile, job.case, job.mode);
                let r = support::run(command(job, cert), LIMIT);
                let exited = SystemTime::now();
                let bad = check(job, &r, exited, &want);
                let posts = job.bmc.posts();
                let what = if bad.is_empty() {
                    want.why.to_string()
                } else {
                    format!("FAILED: {}\n{r}", bad.join("; "))
                };
                rows.lock().unwrap().push(Row {
                    backend,
                    profile: job.profile.name,
                    tree: job.profile.tree,
                    case: job.case,
                    mode: job.mode,
                    code: r.code,
                    posts,
                    took: r.elapsed,
                    what,
                    pass: bad.is_empty(),
                });
            });
        }
    });
    let mut rows = rows.into_inner().unwrap();
    let order = |r: &Row| {
        (
            PROFILES.iter().position(|p| p.name == r.profile),
            CASES.iter().position(|c| *c == r.case),
            r.mode == Mode::Agent,
        )
    };
    rows.sort_by_key(order);
    rows
}

// ----------------------------------------------------------------- doc ----

const BEGIN: &str = "<!-- vendor matrix: generated by tests/redfish_vendors.rs -->";
const END: &str = "<!-- end of vendor matrix -->";

fn render(rows: &[Row], took: Duration) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{BEGIN}");
    s.push_str(
        "## Vendor matrix: real BMC trees, vendor behaviour, transitions\n\n\
         Generated by `tests/redfish_vendors.rs` (`FENCEKIT_REGENERATE=1`). Each\n\
         Redfish tree captured from a real BMC (`../shared/vendors/`) is served\n\
         with its family's answers (`../shared/reference/vendors.md`) by an\n\
         independent Python server (`tests/peers/vendor_redfish.py`, *trees*),\n\
         and the same cases run against the lab's vendor profiles (`fencekit lab\n\
         --vendor`, *lab*). Power changes take 1.5 s. Every row checks the exit\n\
         code and the result line, that the node is in the reported state when\n\
         fencekit exits, its state once every transition has ended, and the\n\
         number of reset POSTs (exactly what the vendor needs).\n\n\
         Families that keep the old PowerState during a power change (XCC,\n\
         Supermicro, AMI) cannot show a boot or a shutdown under way: there\n\
         fencekit sends its reset even when the state already reads as the\n\
         target (a no-op for them), hence one POST in the \"already\" rows.\n\
         Measured before this handling existed (the build of commit 5c1e676,\n\
         `FENCEKIT_VENDOR_BIN`), the trees gave 118 of 176 passes: every\n\
         transition case on iDRAC, iLO and OpenBMC (24 runs) failed at the\n\
         first read without sending anything, iLO's stale-read refusal was\n\
         re-sent 8 (native) and 13 (agent) times, off while booting and on\n\
         while powering off on XCC, Supermicro and AMI (16 runs) reported\n\
         success for a node that then went the other way, and 16 \"already\"\n\
         runs on those families differed only by the quirk's POST.\n\n",
    );
    let passed = rows.iter().filter(|r| r.pass).count();
    let _ = writeln!(
        s,
        "{passed} of {} runs passed; the matrix took {:.0} s with {PARALLEL} runs in flight.\n",
        rows.len(),
        took.as_secs_f64()
    );
    s.push_str(
        "| backend | profile | case | as | tree | exit | POSTs | time | result |\n\
         |---|---|---|---|---|---:|---:|---:|---|\n",
    );
    for r in rows {
        let what = r.what.lines().next().unwrap_or("").replace('|', "/");
        let _ = writeln!(
            s,
            "{} {} | {} | {} | {:.2} s | {} |",
            r.key(),
            if r.backend == "lab" {
                "(profile)"
            } else {
                r.tree
            },
            r.code.map_or("killed".into(), |c| c.to_string()),
            r.posts,
            r.took.as_secs_f64(),
            what
        );
    }
    let _ = writeln!(s, "\n{END}");
    s
}

/// Puts the section into `doc` (replacing an older one, or before the
/// "Beyond the matrix" part).
fn splice(doc: &str, section: &str) -> String {
    if let (Some(a), Some(b)) = (doc.find(BEGIN), doc.find(END)) {
        let b = b + END.len();
        let rest = doc[b..].trim_start_matches('\n');
        return format!("{}{}\n{rest}", &doc[..a], section.trim_end());
    }
    match doc.find("## Beyond the matrix") {
        Some(i) => format!("{}{}\n\n{}", &doc[..i], section.trim_end(), &doc[i..]),
        None => format!("{}\n{}", doc.trim_end(), section),
    }
}

#[test]
fn vendor_matrix() {
    // `FENCEKIT_VENDOR_ONLY=trees|lab` runs one backend (nothing is written
    // or checked against the doc then).
    let only = std::env::var("FENCEKIT_VENDOR_ONLY").ok();
    let t0 = Instant::now();
    let certs = certs();
    let mut rows = Vec::new();
    // The trees, through the independent server.
    if only.as_deref() != Some("lab") {
        if let Some((server, jobs)) = tree_jobs(&certs) {
            rows.extend(run_jobs("trees", jobs, &certs.cert));
            drop(server);
        }
    }
    // The lab's vendor profiles, in-process.
    if only.as_deref() != Some("trees") {
        let (labs, jobs) = lab_jobs(&certs);
        rows.extend(run_jobs("lab", jobs, &certs.cert));
        drop(labs);
    }
    let took = t0.elapsed();
    println!("vendor matrix: {} runs in {took:?}", rows.len());
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !r.pass)
        .map(|r| format!("{} {}", r.key(), r.what))
        .collect();
    if !failed.is_empty() {
        let _ = std::fs::create_dir_all(Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
        let _ = std::fs::write(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/vendor-matrix-failures.txt"),
            failed.join("\n\n"),
        );
    }
    let section = render(&rows, took);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let _ = std::fs::create_dir_all(root.join("target"));
    std::fs::write(root.join("target/vendor-matrix.md"), &section).unwrap();
    let path = root.join("docs/reliability.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    if only.is_some() {
        // A partial run neither writes nor checks the doc.
    } else if std::env::var("FENCEKIT_REGENERATE").is_ok_and(|v| v == "1") && failed.is_empty() {
        std::fs::write(&path, splice(&doc, &section)).unwrap();
    } else if failed.is_empty() {
        let missing: Vec<String> = rows
            .iter()
            .map(Row::key)
            .filter(|k| !doc.contains(k.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/reliability.md does not list these vendor rows (run with \
             FENCEKIT_REGENERATE=1 to rewrite it):\n{}",
            missing.join("\n")
        );
    }
    assert!(
        failed.is_empty(),
        "{} of {} runs failed:\n{}",
        failed.len(),
        rows.len(),
        failed.join("\n\n")
    );
}

/// `fencekit lab --vendor` and the per-node `vendor=` knob, through the CLI.
#[test]
fn lab_cli_serves_vendor_profiles() {
    let lab = support::Lab::start(&[
        "--nodes",
        "3",
        "--vendor",
        "idrac",
        "--fault",
        "node02:vendor=ilo",
        "--fault",
        "node03:vendor=ami+off",
    ]);
    let url = |i: usize| {
        lab.banner[i]
            .split_whitespace()
            .find(|w| w.starts_with("redfish://"))
            .unwrap_or_else(|| panic!("no redfish URL in {:?}", lab.banner))
            .to_string()
    };
    assert!(
        url(0).ends_with("/redfish/v1/Systems/System.Embedded.1"),
        "{}",
        url(0)
    );
    assert!(url(1).ends_with("/redfish/v1/Systems/1"), "{}", url(1));
    assert!(url(2).ends_with("/redfish/v1/Systems/DGX"), "{}", url(2));
    let with_user = |u: String| u.replacen("redfish://", "redfish://admin@", 1);
    // iDRAC shows transitions: an "on" of a node that reads on is confirmed, nothing sent.
    let r = support::fencekit(
        &["on", &with_user(url(0)), "--ssl-insecure", "-vv"],
        support::LAB_PASSWORD,
    );
    r.assert_code(0).assert_mentions(&["already on"]);
    // AMI hides transitions: the quirk is named in the session record.
    let r = support::fencekit(
        &[
            "off",
            &with_user(url(2)),
            "--ssl-insecure",
            "--output",
            "json",
        ],
        support::LAB_PASSWORD,
    );
    r.assert_code(0);
    let res = r.json_result();
    assert_eq!(res["outcome"], "already", "{r}");
    assert!(
        res["session"]
            .as_str()
            .is_some_and(|s| s.contains("hidden-transitions (AMI MegaRAC")),
        "{r}"
    );
    // An unknown profile is a usage error.
    let r = support::fencekit(&["lab", "--vendor", "cisco"], support::LAB_PASSWORD);
    r.assert_code(64);
    let r = support::fencekit(
        &["lab", "--fault", "node01:vendor=cisco"],
        support::LAB_PASSWORD,
    );
    r.assert_code(64).assert_mentions(&["vendor=cisco"]);
}

/// The driver reads each captured system's identity (no request of its
/// own), an expected UUID chooses between the DGX's two systems, and the
/// captures' missing Chassis mean "no power reading", not a failure.
#[test]
fn identity_and_power_draw_from_the_trees() {
    use fencekit::engine::driver::PowerDriver;
    use fencekit::redfish::config::{RedfishConfig, TlsTrust};
    use fencekit::redfish::driver::RedfishDriver;
    use fencekit::secret::Secret;
    let Some(trees) = vendors_dir() else {
        support::skip("../shared/vendors is not there (the captured trees)");
        return;
    };
    if !support::peer_available("python3") {
        return;
    }
    let certs = certs();
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    let profiles: Vec<Profile> = PROFILES
        .into_iter()
        .filter(|p| {
            let fresh = !seen.contains(&p.tree);
            seen.push(p.tree);
            fresh
        })
        .collect();
    let base = support::free_ports(profiles.len() as u16);
    let instances = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| {
            serde_json::json!({
                "port": base + i as u16, "tree": p.tree, "profile": p.name,
                "system": p.system, "power": "On", "scenario": null,
                "log": dir.path().join(format!("{i}.log")),
                "state": dir.path().join(format!("{i}.state")),
            })
        })
        .collect();
    let server = start_tree_server(dir, &trees, &certs, instances);
    let cfg = |port: u16, system: Option<&str>| {
        let mut c = RedfishConfig::new("127.0.0.1", port, USER, Secret::from_str_value(PASSWORD));
        c.tls = TlsTrust::Verify {
            ca_cert: Some(certs.cert.clone()),
        };
        c.systems_uri = system.map(str::to_string);
        c
    };
    let captured = |tree: &str, system: &str| -> Value {
        let f = trees
            .join(tree)
            .join(system.trim_start_matches('/'))
            .join("index.json");
        serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for (i, p) in profiles.iter().enumerate() {
            let port = base + i as u16;
            let doc = captured(p.tree, p.system);
            let mut d = RedfishDriver::new(cfg(port, Some(p.system))).unwrap();
            d.connect(None).await.unwrap();
            let before = d.stats().requests;
            let id = d.identity(None).await.unwrap();
            assert_eq!(
                d.stats().requests,
                before,
                "{}: no request of its own",
                p.tree
            );
            let want_uuid = doc["UUID"]
                .as_str()
                .and_then(fencekit::engine::identity::normalise_uuid);
            assert_eq!(
                id.primary_uuid().map(str::to_string),
                want_uuid,
                "{}",
                p.tree
            );
            assert_eq!(
                id.serial.as_deref(),
                doc["SerialNumber"]
                    .as_str()
                    .filter(|s| !s.trim().is_empty()),
                "{}",
                p.tree
            );
            assert_eq!(
                d.hidden_transitions().is_some(),
                !p.shows,
                "{}: the hidden-transitions quirk follows vendors.md",
                p.tree
            );
            // The captures hold no Chassis resources: no evidence, no failure.
            assert_eq!(d.power_reading(None).await, Ok(None), "{}", p.tree);
            d.close().await;
        }
        // The DGX capture: two systems; the expected UUID chooses.
        let (i, p) = profiles
            .iter()
            .enumerate()
            .find(|(_, p)| p.tree == "dgxh100-ami")
            .unwrap();
        let port = base + i as u16;
        for (system, uuid) in [
            (
                "/redfish/v1/Systems/DGX",
                "b11dd4f2-bfde-1000-02bc-5cff35fbe6e9",
            ),
            (
                "/redfish/v1/Systems/HGX_Baseboard_0",
                "0bd03ed4-3f75-04e8-9c62-3d4652b78d87",
            ),
        ] {
            assert_eq!(
                captured(p.tree, system)["UUID"]
                    .as_str()
                    .and_then(fencekit::engine::identity::normalise_uuid)
                    .as_deref(),
                Some(uuid)
            );
            let mut c = cfg(port, None);
            c.expect_uuid = Some(uuid.to_uppercase());
            let mut d = RedfishDriver::new(c).unwrap();
            d.connect(None).await.unwrap();
            assert_eq!(d.system_uri(), Some(system));
            d.close().await;
        }
        let mut c = cfg(port, None);
        c.expect_uuid = Some("00000000-0000-0000-0000-000000000001".into());
        let mut d = RedfishDriver::new(c).unwrap();
        let e = d.connect(None).await.unwrap_err();
        assert!(
            e.message.contains("/redfish/v1/Systems/DGX (uuid B11DD4F2")
                && e.message
                    .contains("/redfish/v1/Systems/HGX_Baseboard_0 (uuid 0bd03ed4"),
            "{e}"
        );
        d.close().await;
    });
    drop(server);
}
