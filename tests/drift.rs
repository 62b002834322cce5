//! `check --record` and drift, through the real binary: against the lab
//! (restarted on the same addresses with one thing changed, as a real BMC
//! is after a password rotation, a firmware update, a replaced mainboard,
//! a re-issued certificate, a demoted account, or a power cut) and against
//! the real peers (ipmi_sim, pyghmi, sushy-tools restarted the same way).
//! Each change must come out as its drift name and severity, with the
//! documented exit status; an unchanged fleet reports no drift. And
//! `--output openmetrics` passes `promtool check metrics`, for 1,000 lab
//! nodes too.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{bin, free_port, free_ports, own_loopback, IpmiSim, Lab, Pyghmi};

/// `fencekit ARGS…` with a clean environment, killed after `limit`.
fn fk_within(dir: &Path, args: &[&str], limit: Duration) -> support::Run {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HOME", dir)
        .env("XDG_RUNTIME_DIR", dir)
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("FENCEKIT_BASELINE")
        .env_remove("RUST_LOG");
    support::run(c, limit)
}

fn fk(dir: &Path, args: &[&str]) -> support::Run {
    fk_within(dir, args, Duration::from_secs(60))
}

/// `(node, level, drift, severity)` of a JSON check.
fn drifts(r: &support::Run) -> Vec<(String, Option<u64>, String, String)> {
    let v = r.json();
    let mut out: Vec<_> = v["drifts"]
        .as_array()
        .unwrap_or_else(|| panic!("no drifts array\n{r}"))
        .iter()
        .map(|d| {
            (
                d["node"].as_str().unwrap_or("").to_string(),
                d["level"].as_u64(),
                d["drift"].as_str().unwrap_or("").to_string(),
                d["severity"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Writes `text` as `dir`/inv.toml and returns its path.
fn inventory_file(dir: &Path, text: &str) -> PathBuf {
    let inv = dir.join("inv.toml");
    std::fs::write(&inv, text).unwrap();
    inv
}

/// Stops the peer a `tests/peers/NAME_stop.sh` script started on `port`.
fn stop_peer(name: &str, port: u16) {
    let mut c = Command::new("bash");
    c.arg(support::peer_scripts().join(format!("{name}_stop.sh")))
        .arg(port.to_string())
        .env("PEERS_DIR", support::peers_dir());
    let _ = support::run(c, Duration::from_secs(15));
}

/// Checks `inventory` against `baseline` (JSON), expecting exit `code`.
fn check(dir: &Path, inventory: &Path, baseline: &Path, code: i32) -> support::Run {
    let r = fk(
        dir,
        &[
            "check",
            "--all",
            "-i",
            inventory.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
            "--login-timeout",
            "1s",
            "-o",
            "json",
        ],
    );
    r.assert_code(code);
    r
}

fn record(dir: &Path, inventory: &Path, baseline: &Path) -> support::Run {
    let r = fk(
        dir,
        &[
            "check",
            "--all",
            "-i",
            inventory.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
            "--record",
            "--login-timeout",
            "2s",
        ],
    );
    r.assert_code(0);
    r
}

fn d(node: &str, level: u64, drift: &str, severity: &str) -> (String, Option<u64>, String, String) {
    (node.into(), Some(level), drift.into(), severity.into())
}

/// A `fencekit lab` that can be restarted on the same addresses and ports
/// with other options; each start writes its own inventory.
struct Fleet {
    dir: tempfile::TempDir,
    bind: String,
    base: u16,
    nodes: u32,
    starts: u32,
    lab: Option<Lab>,
}

impl Fleet {
    fn new(nodes: u32) -> Fleet {
        Fleet {
            dir: tempfile::tempdir().unwrap(),
            bind: own_loopback().to_string(),
            base: free_ports(nodes as u16),
            nodes,
            starts: 0,
            lab: None,
        }
    }

    /// (Re)starts the lab with `args`; returns this start's inventory.
    fn start(&mut self, args: &[&str]) -> PathBuf {
        self.stop();
        self.starts += 1;
        let inv = self.dir.path().join(format!("lab-{}.toml", self.starts));
        let (n, base) = (self.nodes.to_string(), self.base.to_string());
        let mut argv = vec![
            "--nodes",
            &n,
            "--bind",
            &self.bind,
            "--ipmi-port-base",
            &base,
            "--write-inventory",
            inv.to_str().unwrap(),
        ];
        argv.extend_from_slice(args);
        self.lab = Some(Lab::start(&argv));
        inv
    }

    fn stop(&mut self) {
        if let Some(mut lab) = self.lab.take() {
            lab.terminate(Duration::from_secs(5));
        }
    }

    fn d(&self) -> &Path {
        self.dir.path()
    }
}

#[test]
fn each_change_to_a_lab_bmc_is_its_named_drift() {
    let mut f = Fleet::new(2);
    let inv = f.start(&["--redfish", "none"]);
    let base = f.d().join("baseline.toml");
    let r = record(f.d(), &inv, &base);
    assert!(r.stderr.contains("recorded 2 level(s) of 2 node(s)"), "{r}");
    let text = std::fs::read_to_string(&base).unwrap();
    for line in [
        "[[node.node01.level]]",
        "cipher_suite = 17",
        "privilege = \"administrator\"",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} not in\n{text}");
    }

    // Nothing changed: no drift, exit 0.
    let r = check(f.d(), &inv, &base, 0);
    assert_eq!(drifts(&r), vec![]);

    // Suite 17 removed by a firmware update: the level works, less safely.
    f.start(&["--redfish", "none", "--ciphers", "3"]);
    let r = check(f.d(), &inv, &base, 4);
    assert_eq!(
        drifts(&r),
        vec![
            d("node01", 1, "cipher-downgraded", "weakened"),
            d("node02", 1, "cipher-downgraded", "weakened")
        ]
    );
    assert!(
        r.stderr
            .contains("2 drift(s) from the baseline (worst: weakened)"),
        "{r}"
    );

    // The BMC password rotated, the inventory's copy not.
    f.start(&["--redfish", "none", "--password", "rotated"]);
    let r = check(f.d(), &inv, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![
            d("node01", 1, "auth-failed", "broken"),
            d("node02", 1, "auth-failed", "broken")
        ]
    );

    // node02's BMC now answers for node01's machine (a swapped cable).
    f.start(&["--redfish", "none", "--fault", "node02:identity-of=node01"]);
    let r = check(f.d(), &inv, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![d("node02", 1, "identity-changed", "broken")]
    );

    // node01's account demoted to user.
    f.start(&["--redfish", "none", "--fault", "node01:privilege=user"]);
    let r = check(f.d(), &inv, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![d("node01", 1, "privilege-below-operator", "broken")]
    );

    // The BMCs stopped.
    f.stop();
    let r = check(f.d(), &inv, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![
            d("node01", 1, "unreachable", "broken"),
            d("node02", 1, "unreachable", "broken")
        ]
    );
    // The human table names them too.
    let r = fk(
        f.d(),
        &["check", "--all", "-i", inv.to_str().unwrap(), "--baseline"],
    );
    r.assert_code(64);
    let r = fk(
        f.d(),
        &[
            "check",
            "--all",
            "-i",
            inv.to_str().unwrap(),
            "--baseline",
            base.to_str().unwrap(),
            "--login-timeout",
            "1s",
        ],
    );
    r.assert_code(1);
    assert!(
        r.stdout
            .contains("drift: node01 level 1: unreachable (broken): was answering, now"),
        "{r}"
    );
}

#[test]
fn a_reissued_certificate_is_broken_until_trusted_then_changed() {
    let mut f = Fleet::new(1);
    let first = f.start(&[]);
    let base = f.d().join("baseline.toml");
    record(f.d(), &first, &base);
    let text = std::fs::read_to_string(&base).unwrap();
    assert!(text.contains("certificate = \"SHA256:"), "{text}");
    assert!(text.contains("reset_off = \"ForceOff\""), "{text}");

    // Restarted: a new self-signed certificate. The inventory still trusts
    // the old one: Redfish would fail.
    let second = f.start(&[]);
    let r = check(f.d(), &first, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![d("node01", 2, "certificate-changed", "broken")]
    );
    // Trusting the new one (its inventory): it works, and is worth a look.
    let r = check(f.d(), &second, &base, 5);
    assert_eq!(
        drifts(&r),
        vec![d("node01", 2, "certificate-changed", "changed")]
    );
    // Recording it again makes it the baseline.
    record(f.d(), &second, &base);
    let r = check(f.d(), &second, &base, 0);
    assert_eq!(drifts(&r), vec![]);
}

#[test]
fn a_baseline_that_is_missing_or_not_one_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv.toml");
    std::fs::write(
        &inv,
        "[[node]]\nname = \"n1\"\n  [[node.fence]]\n  driver = \"manual\"\n  instructions = \"x\"\n",
    )
    .unwrap();
    let base = dir.path().join("b.toml");
    let args = |b: &Path| {
        vec![
            "check".to_string(),
            "--all".into(),
            "-i".into(),
            inv.display().to_string(),
            "--baseline".into(),
            b.display().to_string(),
        ]
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        fk(dir.path(), &refs)
    };
    let r = run(args(&base));
    r.assert_code(64)
        .assert_mentions(&["cannot read the baseline", "--record"]);
    std::fs::write(&base, "version = 7\n").unwrap();
    run(args(&base))
        .assert_code(64)
        .assert_mentions(&["format version 7"]);
    std::fs::write(&base, "version = 1\n[node.n1]\nbogus = 1\n").unwrap();
    run(args(&base))
        .assert_code(64)
        .assert_mentions(&["not valid"]);
    // --record needs a file; it conflicts with --watch.
    fk(
        dir.path(),
        &["check", "--all", "-i", inv.to_str().unwrap(), "--record"],
    )
    .assert_code(64);
    // A manual level has nothing to record; the file is made anyway.
    std::fs::remove_file(&base).unwrap();
    let mut a = args(&base);
    a.push("--record".into());
    run(a).assert_code(0);
    assert!(std::fs::read_to_string(&base)
        .unwrap()
        .contains("version = 1"));
    // openmetrics is check's alone.
    fk(
        dir.path(),
        &[
            "status",
            "-i",
            inv.to_str().unwrap(),
            "--all",
            "-o",
            "openmetrics",
        ],
    )
    .assert_code(64)
    .assert_mentions(&["check only"]);
}

// ------------------------------------------------------------ real peers ----

fn ipmi_inventory(dir: &Path, port: u16, password: &str) -> PathBuf {
    let pw = dir.join("pw");
    std::fs::write(&pw, password).unwrap();
    let inv = dir.join("inv.toml");
    std::fs::write(
        &inv,
        format!(
            "[defaults]\nusername = \"admin\"\npassword_file = \"{}\"\n\n[[node]]\nname = \"peer\"\n  [[node.fence]]\n  endpoint = \"ipmi://127.0.0.1:{port}\"\n",
            pw.display()
        ),
    )
    .unwrap();
    inv
}

#[test]
fn ipmi_sim_password_guid_and_power_changes_are_named() {
    require!("ipmi_sim");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let sim = IpmiSim::start_at(
        std::net::Ipv4Addr::LOCALHOST,
        port,
        "admin",
        "password",
        true,
        None,
    );
    let inv = ipmi_inventory(dir.path(), port, "password");
    let base = dir.path().join("baseline.toml");
    record(dir.path(), &inv, &base);
    let r = check(dir.path(), &inv, &base, 0);
    assert_eq!(drifts(&r), vec![]);
    assert_eq!(
        sim.ops(),
        Vec::<String>::new(),
        "check sent a power command"
    );
    drop(sim);

    // The password rotated on the BMC only.
    let sim = IpmiSim::start_at(
        std::net::Ipv4Addr::LOCALHOST,
        port,
        "admin",
        "rotated",
        true,
        None,
    );
    let r = check(dir.path(), &inv, &base, 1);
    assert_eq!(drifts(&r), vec![d("peer", 1, "auth-failed", "broken")]);
    drop(sim);

    // A replaced mainboard: another GUID.
    let sim = IpmiSim::start_at(
        std::net::Ipv4Addr::LOCALHOST,
        port,
        "admin",
        "password",
        true,
        Some("b223456789abcdefb223456789abcdef"),
    );
    let r = check(dir.path(), &inv, &base, 1);
    assert_eq!(drifts(&r), vec![d("peer", 1, "identity-changed", "broken")]);
    assert_eq!(
        sim.ops(),
        Vec::<String>::new(),
        "check sent a power command"
    );
    drop(sim);

    // Stopped.
    let r = check(dir.path(), &inv, &base, 1);
    assert_eq!(drifts(&r), vec![d("peer", 1, "unreachable", "broken")]);
}

#[test]
fn pyghmi_without_suite_17_is_a_weakened_cipher() {
    require!("pyghmi");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    // pyghmi makes up a GUID per start unless given one.
    let guid = Some("5a8e1c3e-9a35-4e8b-8f0e-3c2f1e0d9b71");
    let bmc = Pyghmi::start_at(port, "3,17", true, guid);
    let inv = ipmi_inventory(dir.path(), port, support::PASSWORD);
    let base = dir.path().join("baseline.toml");
    record(dir.path(), &inv, &base);
    assert!(std::fs::read_to_string(&base)
        .unwrap()
        .contains("cipher_suite = 17"));
    check(dir.path(), &inv, &base, 0);
    drop(bmc);
    let _bmc = Pyghmi::start_at(port, "3", true, guid);
    let r = check(dir.path(), &inv, &base, 4);
    assert_eq!(
        drifts(&r),
        vec![d("peer", 1, "cipher-downgraded", "weakened")]
    );
}

const SUSHY_PASS: &str = "fencepass";

/// sushy-tools over TLS on `port`, stopped (by its PID, through
/// sushy_stop.sh) on drop; its run directory keeps the certificate
/// between starts unless it is removed.
struct Sushy {
    port: u16,
}

impl Sushy {
    fn available() -> bool {
        if !support::venv_tool("sushy-emulator") {
            return false;
        }
        support::peer_available("curl") && support::peer_available("openssl")
    }

    fn start(port: u16, password: &str) -> Sushy {
        let mut c = Command::new("bash");
        c.arg(support::peer_scripts().join("sushy_start.sh"))
            .arg(port.to_string())
            .arg("on")
            .env("SUSHY_PASS", password);
        support::run(c, Duration::from_secs(60)).assert_code(0);
        Sushy { port }
    }

    fn dir(&self) -> PathBuf {
        support::peer_run_dir().join(format!("sushy-{}", self.port))
    }
}

impl Drop for Sushy {
    fn drop(&mut self) {
        stop_peer("sushy", self.port);
    }
}

#[test]
fn sushy_password_and_certificate_changes_are_named() {
    if !Sushy::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let sushy = Sushy::start(port, SUSHY_PASS);
    // The inventory trusts a copy of today's certificate.
    let trusted = dir.path().join("bmc.pem");
    std::fs::copy(sushy.dir().join("cert.pem"), &trusted).unwrap();
    let pw = dir.path().join("pw");
    std::fs::write(&pw, SUSHY_PASS).unwrap();
    let inventory = |ca: &Path| {
        inventory_file(
            dir.path(),
            &format!(
                "[defaults]\nusername = \"admin\"\npassword_file = \"{}\"\n\n[[node]]\nname = \"peer\"\n  [[node.fence]]\n  endpoint = \"redfish://127.0.0.1:{port}\"\n  ca_cert = \"{}\"\n",
                pw.display(),
                ca.display()
            ),
        )
    };
    let inv = inventory(&trusted);
    let base = dir.path().join("baseline.toml");
    record(dir.path(), &inv, &base);
    let text = std::fs::read_to_string(&base).unwrap();
    assert!(
        text.contains("uuid = \"00000000-0000-4000-8000-000000000001\""),
        "{text}"
    );
    check(dir.path(), &inv, &base, 0);
    drop(sushy);

    // The password changed on the BMC (same certificate).
    let sushy = Sushy::start(port, "rotated");
    let r = check(dir.path(), &inv, &base, 1);
    assert_eq!(drifts(&r), vec![d("peer", 1, "auth-failed", "broken")]);
    drop(sushy);

    // A re-issued certificate: refused while the old one is trusted ...
    std::fs::remove_file(Sushy { port }.dir().join("cert.pem")).ok();
    let sushy = Sushy::start(port, SUSHY_PASS);
    let r = check(dir.path(), &inv, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![d("peer", 1, "certificate-changed", "broken")]
    );
    // ... a change to look at once it is trusted.
    let inv = inventory(&sushy.dir().join("cert.pem"));
    let r = check(dir.path(), &inv, &base, 5);
    assert_eq!(
        drifts(&r),
        vec![d("peer", 1, "certificate-changed", "changed")]
    );
}

/// fencekit-vcsim on `port` (a new self-signed certificate at each
/// start), stopped on drop.
struct Vcsim {
    port: u16,
    cert: PathBuf,
}

impl Vcsim {
    fn start(port: u16) -> Vcsim {
        let info = support::vcsim_start(port, &[]);
        let cert = PathBuf::from(info["cert"].as_str().expect("vcsim's cert"));
        Vcsim { port, cert }
    }
}

impl Drop for Vcsim {
    fn drop(&mut self) {
        stop_peer("vcsim", self.port);
    }
}

#[test]
fn vcsim_certificate_changes_are_named() {
    require!("vcsim");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let sim = Vcsim::start(port);
    // The inventory trusts a copy of today's certificate.
    let trusted = dir.path().join("vcenter.pem");
    std::fs::copy(&sim.cert, &trusted).unwrap();
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "vcsim-secret").unwrap();
    let inventory = |ca: &Path| {
        inventory_file(
            dir.path(),
            &format!(
                "[[node]]\nname = \"guest\"\n  [[node.fence]]\n  driver = \"vsphere\"\n  endpoint = \"vsphere://fence@127.0.0.1:{port}/DC0_H0_VM0\"\n  ca_cert = \"{}\"\n  password_file = \"{}\"\n",
                ca.display(),
                pw.display()
            ),
        )
    };
    let inv = inventory(&trusted);
    let base = dir.path().join("baseline.toml");
    record(dir.path(), &inv, &base);
    let text = std::fs::read_to_string(&base).unwrap();
    assert!(text.contains("[node.guest.level.vsphere]"), "{text}");
    assert!(text.contains("certificate = \"SHA256:"), "{text}");
    // The same certificate: no drift.
    let r = check(dir.path(), &inv, &base, 0);
    assert_eq!(drifts(&r), vec![]);

    // vCenter restarted with a new certificate (fencekit-vcsim also makes
    // its VMs' instance UUIDs anew at each start, as a re-registered
    // inventory has): refused while the old certificate is trusted, and
    // then only the certificate is named (no VM was read) ...
    drop(sim);
    let sim = Vcsim::start(port);
    let r = check(dir.path(), &inv, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![d("guest", 1, "certificate-changed", "broken")]
    );
    // ... a change to look at once it is trusted (beside the new instance).
    let inv = inventory(&sim.cert);
    let r = check(dir.path(), &inv, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![
            d("guest", 1, "certificate-changed", "changed"),
            d("guest", 1, "identity-changed", "broken"),
        ]
    );
    // Recorded again, it is the baseline.
    record(dir.path(), &inv, &base);
    let r = check(dir.path(), &inv, &base, 0);
    assert_eq!(drifts(&r), vec![]);
}

/// The KubeVirt API peer (tests/peers/kubevirt_api.py) on `port`, with a
/// token and one VM of a fixed uid (it keeps no state across a restart: the
/// same objects are made again), stopped on drop.
struct KubevirtApi {
    port: u16,
}

const KUBEVIRT_TOKEN: &str = "tok-drift";
const KUBEVIRT_VM_UID: &str = "6f1d3c52-0000-4000-8000-00000000d71f";

impl KubevirtApi {
    fn start(port: u16) -> KubevirtApi {
        let mut c = Command::new("bash");
        c.arg(support::peer_scripts().join("kubevirt_start.sh"))
            .arg(port.to_string())
            .env("PEERS_DIR", support::peers_dir())
            .env("KUBEVIRT_PARENT_PID", std::process::id().to_string());
        support::run(c, Duration::from_secs(60)).assert_code(0);
        let api = KubevirtApi { port };
        api.control(&format!(
            r#"{{"op": "token", "token": "{KUBEVIRT_TOKEN}"}}"#
        ));
        api.control(&format!(
            r#"{{"op": "vm", "namespace": "guests", "name": "vm-a", "uid": "{KUBEVIRT_VM_UID}", "firmware_uuid": "{KUBEVIRT_VM_UID}"}}"#
        ));
        api
    }

    fn dir(&self) -> PathBuf {
        kubevirt_dir(self.port)
    }

    fn control(&self, op: &str) {
        let mut c = Command::new("curl");
        c.args(["-s", "--max-time", "10", "--cacert"])
            .arg(self.dir().join("ca.pem"))
            .args(["-X", "POST", "-d", op])
            .arg(format!("https://127.0.0.1:{}/fencekit/control", self.port));
        let r = support::run(c, Duration::from_secs(15));
        r.assert_code(0);
        assert!(!r.stdout.contains("\"error\""), "control {op}: {r}");
    }
}

/// The peer's run directory on `port` (ca.pem, ca.key, server.pem, key.pem).
fn kubevirt_dir(port: u16) -> PathBuf {
    support::peer_run_dir().join(format!("kubevirt-{port}"))
}

/// A new key and server certificate signed by the peer's own CA (a
/// re-issue a client trusting the CA accepts), used from its next start.
fn kubevirt_reissue(port: u16) {
    let mut c = Command::new("sh");
    c.current_dir(kubevirt_dir(port)).arg("-c").arg(
        "openssl req -newkey rsa:2048 -nodes -keyout key.pem -out server.csr \
           -subj /CN=kube-apiserver 2>/dev/null && \
         openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
           -days 365 -extfile ext.cnf -out server.pem 2>/dev/null",
    );
    support::run(c, Duration::from_secs(60)).assert_code(0);
}

impl Drop for KubevirtApi {
    fn drop(&mut self) {
        stop_peer("kubevirt", self.port);
    }
}

#[test]
fn kubevirt_certificate_changes_are_named() {
    require!("kubevirt_api");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    // A certificate (and CA) of this run, not one a test left behind.
    let _ = std::fs::remove_file(kubevirt_dir(port).join("server.pem"));
    let api = KubevirtApi::start(port);
    let inventory = |ca: &Path| {
        let kc = dir.path().join("kubeconfig");
        std::fs::write(
            &kc,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: peer\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority: {}\ncontexts:\n- name: fencing\n  context:\n    cluster: peer\n    user: fencer\n    namespace: guests\ncurrent-context: fencing\nusers:\n- name: fencer\n  user:\n    token: {KUBEVIRT_TOKEN}\n",
                ca.display()
            ),
        )
        .unwrap();
        inventory_file(
            dir.path(),
            &format!(
                "[[node]]\nname = \"guest\"\n  [[node.fence]]\n  driver = \"kubevirt\"\n  endpoint = \"kubevirt://guests/vm-a\"\n  kubeconfig = \"{}\"\n",
                kc.display()
            ),
        )
    };
    // The inventory trusts the cluster's CA (the peer's ca.pem, kept across
    // restarts while server.pem is).
    let inv = inventory(&api.dir().join("ca.pem"));
    let base = dir.path().join("baseline.toml");
    record(dir.path(), &inv, &base);
    let text = std::fs::read_to_string(&base).unwrap();
    assert!(text.contains("[node.guest.level.kubevirt]"), "{text}");
    assert!(text.contains("certificate = \"SHA256:"), "{text}");
    assert!(text.contains(KUBEVIRT_VM_UID), "{text}");

    // Restarted with the same certificate: no drift.
    drop(api);
    let api = KubevirtApi::start(port);
    let r = check(dir.path(), &inv, &base, 0);
    assert_eq!(drifts(&r), vec![]);

    // Re-issued by the same CA: trusted, a change to look at.
    drop(api);
    kubevirt_reissue(port);
    let api = KubevirtApi::start(port);
    let r = check(dir.path(), &inv, &base, 5);
    assert_eq!(
        drifts(&r),
        vec![d("guest", 1, "certificate-changed", "changed")]
    );
    record(dir.path(), &inv, &base);

    // A new CA and certificate while the inventory trusts a copy of the old
    // CA: refused at the handshake, broken.
    let old_ca = dir.path().join("old-ca.pem");
    std::fs::copy(api.dir().join("ca.pem"), &old_ca).unwrap();
    let inv = inventory(&old_ca);
    drop(api);
    std::fs::remove_file(kubevirt_dir(port).join("server.pem")).unwrap();
    let api = KubevirtApi::start(port);
    let r = check(dir.path(), &inv, &base, 1);
    assert_eq!(
        drifts(&r),
        vec![d("guest", 1, "certificate-changed", "broken")]
    );
    // Trusting the new CA: changed.
    let inv = inventory(&api.dir().join("ca.pem"));
    let r = check(dir.path(), &inv, &base, 5);
    assert_eq!(
        drifts(&r),
        vec![d("guest", 1, "certificate-changed", "changed")]
    );
}

// --------------------------------------------------------------- metrics ----

/// `promtool check metrics` on `text`; `None` (after a SKIP) without promtool.
fn promtool(text: &str) -> Option<support::Run> {
    if !support::peer_available("promtool") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("m.prom");
    std::fs::write(&f, text).unwrap();
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("promtool check metrics < '{}'", f.display()));
    Some(support::run(c, Duration::from_secs(60)))
}

#[test]
fn openmetrics_of_a_thousand_lab_nodes_passes_promtool() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("lab.toml");
    let lab = Lab::start(&[
        "--nodes",
        "1000",
        "--redfish",
        "none",
        "--ciphers",
        "3",
        "--write-inventory",
        inv.to_str().unwrap(),
    ]);
    let base = dir.path().join("baseline.toml");
    // Recorded as it is, then compared: the metrics carry no drift ...
    record(dir.path(), &inv, &base);
    let r = fk_within(
        dir.path(),
        &[
            "check",
            "--all",
            "-i",
            inv.to_str().unwrap(),
            "--baseline",
            base.to_str().unwrap(),
            "-o",
            "openmetrics",
        ],
        Duration::from_secs(120),
    );
    r.assert_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("fencekit_level_ok{") && l.ends_with("} 1"))
            .count(),
        1000,
        "{}",
        &r.stdout[..2000.min(r.stdout.len())]
    );
    assert_eq!(lines.last(), Some(&"# EOF"));
    assert!(!r.stdout.contains("fencekit_level_drift{"));
    let clean = r.stdout.clone();
    drop(lab);
    // ... and once the lab is gone, every level fails and drifts; the
    // metrics still are the answer (exit 0: `&& mv` must publish them).
    let r = fk_within(
        dir.path(),
        &[
            "check",
            "--all",
            "-i",
            inv.to_str().unwrap(),
            "--baseline",
            base.to_str().unwrap(),
            "--login-timeout",
            "300ms",
            "-o",
            "openmetrics",
        ],
        Duration::from_secs(120),
    );
    r.assert_code(0);
    assert_eq!(
        r.stdout
            .matches("drift=\"unreachable\",severity=\"broken\"} 1")
            .count(),
        1000
    );
    assert_eq!(r.stdout.matches("fencekit_node_ok{").count(), 1000);
    for text in [&clean, &r.stdout] {
        if let Some(p) = promtool(text) {
            p.assert_code(0);
        }
    }
}

#[test]
fn promtool_accepts_the_metrics_with_and_without_drift() {
    let mut f = Fleet::new(2);
    let inv = f.start(&["--redfish", "none"]);
    let base = f.d().join("baseline.toml");
    record(f.d(), &inv, &base);
    let metrics = |f: &Fleet| {
        let r = fk(
            f.d(),
            &[
                "check",
                "--all",
                "-i",
                inv.to_str().unwrap(),
                "--baseline",
                base.to_str().unwrap(),
                "--login-timeout",
                "1s",
                "-o",
                "openmetrics",
            ],
        );
        r.assert_code(0);
        r.stdout
    };
    let clean = metrics(&f);
    f.start(&["--redfish", "none", "--ciphers", "3"]);
    let drifted = metrics(&f);
    assert!(drifted.contains(
        "fencekit_level_drift{node=\"node01\",level=\"1\",method=\"ipmi\",drift=\"cipher-downgraded\",severity=\"weakened\"} 1"
    ), "{drifted}");
    for text in [&clean, &drifted] {
        let Some(p) = promtool(text) else { return };
        p.assert_code(0);
    }
}
