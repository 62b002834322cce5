//! `check --watch` through the real binary: it serves `/metrics` (which
//! `curl` and `promtool` read) and `/healthz` on the given address only,
//! survives a BMC that goes silent and comes back (one log line each way,
//! not one per check), never sends a power command over 100 cycles (the
//! lab's command log and counters, ipmi_sim's `ops` log), and stops within
//! a second of SIGTERM.

mod support;

use fencekit::lab::bmc::Faults;
use fencekit::lab::fleet::LabSpec;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{bin, free_port, own_loopback, InProcessLab, IpmiSim};

/// A running `fencekit check --watch`, killed (by PID) on drop.
struct Watch {
    child: Child,
    stderr: PathBuf,
    listen: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Watch {
    /// `fencekit check --all -i INVENTORY --watch INTERVAL --listen …` plus `extra`.
    fn start(inventory: &str, interval: &str, extra: &[&str]) -> Watch {
        let dir = tempfile::tempdir().unwrap();
        let inv = dir.path().join("inv.toml");
        std::fs::write(&inv, inventory).unwrap();
        let listen = SocketAddr::new(own_loopback().into(), free_port());
        let stderr = dir.path().join("stderr");
        let mut c = Command::new(bin());
        c.args(["check", "--all", "-i"])
            .arg(&inv)
            .args(["--watch", interval, "--listen", &listen.to_string()])
            .args(["--login-timeout", "2s"])
            .args(if extra.contains(&"--bmc-interval") {
                &[][..]
            } else {
                &["--bmc-interval", "10ms"][..]
            })
            .args(extra)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("HOME", dir.path())
            .env("XDG_RUNTIME_DIR", dir.path())
            .env_remove("FENCEKIT_PASSWORD")
            .env_remove("FENCEKIT_INVENTORY")
            .env_remove("FENCEKIT_BASELINE")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .process_group(0);
        let child = c.spawn().expect("start fencekit check --watch");
        let w = Watch {
            child,
            stderr,
            listen,
            _dir: dir,
        };
        assert!(
            support::eventually(Duration::from_secs(15), || TcpStream::connect(listen)
                .is_ok()),
            "nothing listens on {listen}\n{}",
            w.log()
        );
        w
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn get(&self, path: &str) -> (u16, String, String) {
        http(self.listen, "GET", path, &[])
    }

    /// `fencekit_level_checks_total` of every level (0 before the first check).
    fn checks(&self) -> Vec<u64> {
        let (_, _, body) = self.get("/metrics");
        body.lines()
            .filter(|l| l.starts_with("fencekit_level_checks_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
            .collect()
    }

    /// Waits until every one of `levels` levels was checked `n` times.
    fn wait_checks(&self, levels: usize, n: u64, limit: Duration) {
        assert!(
            support::eventually(limit, || {
                let c = self.checks();
                c.len() == levels && c.iter().all(|&k| k >= n)
            }),
            "not {n} checks of {levels} levels within {limit:?}: {:?}\n{}",
            self.checks(),
            self.log()
        );
    }

    /// The value of the `fencekit_level_ok` sample of `node` level `level`.
    fn level_ok(&self, node: &str, level: u32) -> Option<u8> {
        let (_, _, body) = self.get("/metrics");
        let head = format!("fencekit_level_ok{{node=\"{node}\",level=\"{level}\",");
        body.lines()
            .find(|l| l.starts_with(&head))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
    }

    /// SIGTERM, then the time until it exited and its status.
    fn terminate(&mut self) -> (Duration, Option<i32>) {
        let t0 = Instant::now();
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return (t0.elapsed(), st.code());
            }
            if t0.elapsed() > Duration::from_secs(10) {
                return (t0.elapsed(), None);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            support::kill_group(self.child.id(), "KILL");
            let _ = self.child.wait();
        }
    }
}

/// One HTTP/1.1 request: (status, head, body).
fn http(addr: SocketAddr, method: &str, path: &str, headers: &[&str]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

/// An inventory of the in-process lab's nodes: IPMI, then Redfish over HTTP.
fn lab_inventory(lab: &InProcessLab, password: &Path) -> String {
    let mut s = format!(
        "[defaults]\nusername = \"admin\"\npassword_file = \"{}\"\n",
        password.display()
    );
    for (i, n) in lab.nodes.iter().enumerate() {
        s.push_str(&format!(
            "\n[[node]]\nname = \"node{:02}\"\n  [[node.fence]]\n  endpoint = \"ipmi://{}\"\n  [[node.fence]]\n  endpoint = \"redfish+http://{}/redfish/v1/Systems/1\"\n",
            i + 1,
            n.ipmi,
            n.redfish.unwrap()
        ));
    }
    s
}

/// Lines of the log that mention `what`.
fn lines_with(log: &str, what: &str) -> usize {
    log.lines().filter(|l| l.contains(what)).count()
}

#[test]
fn watch_serves_metrics_survives_a_silent_bmc_and_never_powers_anything() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 3,
        redfish: Some(false),
        ..LabSpec::default()
    });
    let pw = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(pw.path(), "lab").unwrap();
    let mut w = Watch::start(&lab_inventory(&lab, pw.path()), "20ms", &[]);

    // Served on that address only (another loopback address: refused).
    let mut other = w.listen;
    if let SocketAddr::V4(a) = &mut other {
        let o = a.ip().octets();
        a.set_ip([o[0], o[1], o[2], o[3] + 1].into());
    }
    assert!(TcpStream::connect(other).is_err(), "{other} answers too");
    let (status, _, body) = w.get("/healthz");
    assert_eq!(status, 200, "{body}");
    w.wait_checks(6, 30, Duration::from_secs(60));
    assert_eq!(w.get("/nothing").0, 404);
    assert_eq!(http(w.listen, "POST", "/metrics", &[]).0, 405);
    let (status, head, body) = http(w.listen, "HEAD", "/metrics", &[]);
    assert_eq!((status, body.as_str()), (200, ""));
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    let (_, head, body) = http(
        w.listen,
        "GET",
        "/metrics",
        &["Accept: application/openmetrics-text; version=1.0.0"],
    );
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(
        body.contains("# TYPE fencekit_level_checks counter"),
        "{body}"
    );
    assert!(body.ends_with("# EOF\n"));
    assert_eq!(w.level_ok("node02", 1), Some(1));

    // node02's BMC goes silent (a network change), then comes back.
    let bmc = &lab.nodes[1].bmc;
    bmc.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    assert!(
        support::eventually(Duration::from_secs(20), || w.level_ok("node02", 1)
            == Some(0)
            && w.level_ok("node02", 2) == Some(0)),
        "node02 not failing\n{}",
        w.log()
    );
    let (status, _, body) = w.get("/healthz");
    assert_eq!(status, 200, "a BMC down is not the watch down: {body}");
    assert!(body.starts_with("ok: 4 of 6 level(s) would work"), "{body}");
    bmc.set_faults(Faults::default());
    assert!(
        support::eventually(Duration::from_secs(20), || w.level_ok("node02", 1)
            == Some(1)
            && w.level_ok("node02", 2) == Some(1)),
        "node02 not back\n{}",
        w.log()
    );

    // 100 cycles of every level.
    w.wait_checks(6, 100, Duration::from_secs(120));
    let (_, _, metrics) = w.get("/metrics");
    let (took, code) = w.terminate();
    assert_eq!(code, Some(0), "{}", w.log());
    assert!(took < Duration::from_secs(1), "SIGTERM took {took:?}");

    // One line per change, not per check.
    let log = w.log();
    assert_eq!(lines_with(&log, "node02 level 1 (ipmi"), 2, "{log}");
    assert_eq!(lines_with(&log, "level 1 (ipmi ipmi://"), 2, "{log}");
    assert_eq!(lines_with(&log, "would fail now"), 2, "{log}");
    assert_eq!(lines_with(&log, "works again"), 2, "{log}");
    assert!(
        log.lines().last().unwrap_or("").ends_with(" stopped"),
        "{log}"
    );

    // Not one power command, over IPMI or Redfish.
    for n in &lab.nodes {
        assert_eq!(n.bmc.log(), Vec::<&str>::new());
        let c = n.bmc.counters();
        assert_eq!(c.commands, 0);
        assert!(c.sessions >= 100, "{c:?}");
    }

    // What curl and promtool make of it.
    if support::peer_available("promtool") {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.prom");
        std::fs::write(&f, &metrics).unwrap();
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!("promtool check metrics < '{}'", f.display()));
        support::run(c, Duration::from_secs(30)).assert_code(0);
    }
}

#[test]
fn curl_reads_the_metrics_and_ipmi_sim_sees_no_power_operation() {
    require!("ipmi_sim", "curl");
    let sim = IpmiSim::start(true);
    let inv = format!(
        "[defaults]\nusername = \"admin\"\npassword_file = \"{{PW}}\"\n\n[[node]]\nname = \"sim\"\n  [[node.fence]]\n  endpoint = \"ipmi://127.0.0.1:{}\"\n",
        sim.port
    );
    let pw = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(pw.path(), support::PASSWORD).unwrap();
    let inv = inv.replace("{PW}", &pw.path().display().to_string());
    let mut w = Watch::start(&inv, "10ms", &[]);
    w.wait_checks(1, 100, Duration::from_secs(120));
    let mut c = Command::new("curl");
    c.args(["-sS", "--max-time", "10"])
        .arg(format!("http://{}/metrics", w.listen));
    let r = support::run(c, Duration::from_secs(20));
    r.assert_code(0);
    assert!(
        r.stdout
            .contains("fencekit_level_ok{node=\"sim\",level=\"1\",method=\"ipmi\"} 1"),
        "{r}"
    );
    let (took, code) = w.terminate();
    assert_eq!(code, Some(0), "{}", w.log());
    assert!(took < Duration::from_secs(1), "SIGTERM took {took:?}");
    assert_eq!(
        sim.ops(),
        Vec::<String>::new(),
        "a power operation was sent"
    );
    assert!(sim.power(), "the node was powered off");
}

#[test]
fn a_watch_with_a_baseline_logs_and_exports_the_drift() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 1,
        redfish: None,
        ..LabSpec::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "lab").unwrap();
    let inv = dir.path().join("inv.toml");
    let text = format!(
        "[defaults]\nusername = \"admin\"\npassword_file = \"{}\"\n\n[[node]]\nname = \"node01\"\n  [[node.fence]]\n  endpoint = \"ipmi://{}\"\n",
        pw.display(),
        lab.nodes[0].ipmi
    );
    std::fs::write(&inv, &text).unwrap();
    let base = dir.path().join("baseline.toml");
    let mut c = Command::new(bin());
    c.args(["check", "--all", "-i"])
        .arg(&inv)
        .arg("--baseline")
        .arg(&base)
        .arg("--record")
        .env_remove("FENCEKIT_PASSWORD");
    support::run(c, Duration::from_secs(30)).assert_code(0);
    // Another machine behind the same BMC (a replaced mainboard).
    lab.nodes[0]
        .bmc
        .set_identity(fencekit::lab::bmc::LabIdentity::for_node(41));
    let w = Watch::start(&text, "50ms", &["--baseline", base.to_str().unwrap()]);
    assert!(
        support::eventually(Duration::from_secs(20), || {
            w.get("/metrics").2.contains(
            "fencekit_level_drift{node=\"node01\",level=\"1\",method=\"ipmi\",drift=\"identity-changed\",severity=\"broken\"} 1"
        )
        }),
        "{}",
        w.get("/metrics").2
    );
    assert_eq!(w.level_ok("node01", 1), Some(0));
    assert!(
        w.log().contains("drift identity-changed (broken)"),
        "{}",
        w.log()
    );
}

#[test]
fn the_watch_opens_one_session_at_a_time_per_bmc_with_the_interval_between() {
    // One node whose IPMI and Redfish levels are the same BMC, checked
    // every 10 ms, with 300 ms between two sessions on that BMC.
    let lab = InProcessLab::start(LabSpec {
        nodes: 1,
        redfish: Some(false),
        ..LabSpec::default()
    });
    let pw = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(pw.path(), "lab").unwrap();
    let mut w = Watch::start(
        &lab_inventory(&lab, pw.path()),
        "10ms",
        &["--bmc-interval", "300ms"],
    );
    w.wait_checks(2, 2, Duration::from_secs(30));
    let (s0, t0) = (lab.nodes[0].bmc.counters().sessions, Instant::now());
    std::thread::sleep(Duration::from_secs(3));
    let (s1, took) = (lab.nodes[0].bmc.counters().sessions, t0.elapsed());
    w.terminate();
    // IPMI and Redfish alternate, 300 ms apart: one IPMI session per 600 ms
    // at most (one more for the edges); unspaced, 10 ms would make ~100.
    let most = (took.as_millis() / 600) as u64 + 2;
    assert!(
        (2..=most).contains(&(s1 - s0)),
        "{} IPMI sessions in {took:?} (at most {most})\n{}",
        s1 - s0,
        w.log()
    );
}
