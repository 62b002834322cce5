//! Identity (Get System GUID) and power draw (DCMI Get Power Reading) over
//! IPMI: our driver against the in-process lab, cross-checked by `ipmitool`
//! as an independent client (`mc guid`, `dcmi power reading`), and against
//! OpenIPMI `ipmi_sim`, which has a system GUID of its own and no DCMI.

mod support;

use fencekit::engine::driver::PowerDriver;
use fencekit::engine::identity::{ExpectedIdentity, Identity};
use fencekit::ipmi::config::{CipherChoice, IpmiConfig};
use fencekit::ipmi::driver::IpmiDriver;
use fencekit::lab::bmc::{Bmc, Faults, LabIdentity, WATTS_ON, WATTS_STANDBY};
use fencekit::lab::ipmi::{LabIpmi, Offer};
use fencekit::secret::Secret;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LAB_PW: &str = "lab-pw";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A lab BMC served on a thread of its own (so that a blocking `ipmitool`
/// or our driver can talk to it from the test thread), stopped on drop.
struct Served {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    fn start(bmc: Bmc) -> Served {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let (b, halt) = (bmc, stop.clone());
        let thread = std::thread::spawn(move || {
            runtime().block_on(async move {
                let offer = Offer {
                    username: "admin".into(),
                    password: LAB_PW.as_bytes().to_vec(),
                    suites: vec![3, 17],
                    guid: [0x11; 16],
                };
                let lab = LabIpmi::start("127.0.0.1:0".parse().unwrap(), b, offer)
                    .await
                    .expect("lab IPMI");
                tx.send(lab.addr).unwrap();
                while !halt.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                drop(lab);
            })
        });
        let addr = rx.recv_timeout(Duration::from_secs(5)).expect("lab up");
        Served {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn config(addr: SocketAddr, password: &str) -> IpmiConfig {
    let mut c = IpmiConfig::new(
        addr.ip().to_string(),
        addr.port(),
        "admin",
        Secret::from_str_value(password),
    );
    c.cipher = CipherChoice::Suite(3);
    c
}

/// Opens a session, reads identity, power draw and status in it, closes.
fn read_all(cfg: IpmiConfig) -> (Identity, Option<f64>, u32, u32) {
    runtime().block_on(async {
        let mut d = IpmiDriver::new(cfg).unwrap();
        let dl = Some(Instant::now() + Duration::from_secs(10));
        d.connect(dl).await.expect("session");
        let id = d.identity(dl).await.expect("identity");
        let watts = d.power_reading(dl).await.expect("power reading");
        d.status(dl).await.expect("status");
        let sessions = d.stats().sessions;
        d.close().await;
        (id, watts.map(|w| w.watts), sessions, d.stats().sent)
    })
}

fn ipmitool_lab(port: u16, args: &[&str]) -> support::Run {
    let mut c = support::tool("ipmitool");
    c.args(["-I", "lanplus", "-H", "127.0.0.1", "-p", &port.to_string()])
        .args(["-U", "admin", "-P", LAB_PW, "-C", "3"])
        .args(args);
    support::run(c, Duration::from_secs(30))
}

/// `System GUID  : …` from `ipmitool mc guid`.
fn guid_line(out: &str) -> Option<String> {
    out.lines()
        .find(|l| l.starts_with("System GUID"))
        .and_then(|l| l.split(':').nth(1))
        .map(|v| v.trim().to_string())
}

#[test]
fn lab_identity_is_the_nodes_uuid_in_one_session() {
    let bmc = Bmc::new(true, Faults::default());
    let want = LabIdentity::for_node(6);
    bmc.set_identity(want.clone());
    let s = Served::start(bmc);
    let (id, watts, sessions, _) = read_all(config(s.addr(), LAB_PW));
    assert_eq!(id.primary_uuid(), Some(want.uuid.as_str()), "{id:?}");
    assert_eq!(id.uuid[0].encoding, "smbios");
    assert_eq!(sessions, 1, "identity and power reading reuse the session");
    assert_eq!(watts, Some(WATTS_ON));
    // the engine's check accepts it, and names the encoding; another node's
    // UUID is refused
    let m = ExpectedIdentity::new(Some(&want.uuid.to_uppercase()), None)
        .unwrap()
        .check(&id)
        .unwrap();
    assert_eq!(m.uuid_encoding, Some("smbios"));
    let other = LabIdentity::for_node(7);
    assert!(ExpectedIdentity::new(Some(&other.uuid), None)
        .unwrap()
        .check(&id)
        .is_err());
}

#[test]
fn a_swapped_identity_is_reported_as_the_other_node() {
    let bmc = Bmc::new(true, Faults::default());
    let s = Served::start(bmc.clone());
    let (before, ..) = read_all(config(s.addr(), LAB_PW));
    bmc.set_identity(LabIdentity::for_node(3));
    let (after, ..) = read_all(config(s.addr(), LAB_PW));
    assert_ne!(before.primary_uuid(), after.primary_uuid());
    assert_eq!(
        after.primary_uuid(),
        Some(LabIdentity::for_node(3).uuid.as_str())
    );
}

#[test]
fn lab_power_draw_follows_the_meter() {
    let bmc = Bmc::new(false, Faults::default());
    let s = Served::start(bmc.clone());
    let (_, watts, ..) = read_all(config(s.addr(), LAB_PW));
    assert_eq!(watts, Some(WATTS_STANDBY));
    // a lying meter reports a running machine's draw while it is off
    bmc.lock().faults.draw_lies = true;
    let (_, watts, ..) = read_all(config(s.addr(), LAB_PW));
    assert_eq!(watts, Some(WATTS_ON));
}

#[test]
fn ipmitool_mc_guid_prints_the_uuid_we_report() {
    require!("ipmitool");
    let bmc = Bmc::new(true, Faults::default());
    let want = LabIdentity::for_node(41);
    bmc.set_identity(want.clone());
    let s = Served::start(bmc);
    let (id, ..) = read_all(config(s.addr(), LAB_PW));
    let r = ipmitool_lab(s.addr().port(), &["mc", "guid"]);
    r.assert_code(0);
    let printed = guid_line(&r.stdout).unwrap_or_else(|| panic!("no GUID line\n{r}"));
    assert_eq!(Some(printed.as_str()), id.primary_uuid(), "\n{r}");
    assert_eq!(printed, want.uuid);
    assert!(r.stdout.contains("SMBIOS"), "ipmitool's guess\n{r}");
}

#[test]
fn ipmitool_dcmi_power_reading_reads_the_lab_meter() {
    require!("ipmitool");
    let bmc = Bmc::new(true, Faults::default());
    let s = Served::start(bmc);
    let r = ipmitool_lab(s.addr().port(), &["dcmi", "power", "reading"]);
    r.assert_code(0);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("Instantaneous power reading"))
        .unwrap_or_else(|| panic!("no reading\n{r}"));
    assert!(
        line.split_whitespace()
            .any(|w| w == format!("{}", WATTS_ON as u32)),
        "{line}"
    );
    assert!(r.stdout.contains("activated"), "{r}");
}

#[test]
fn ipmi_sim_guid_agrees_with_ipmitool_and_it_has_no_dcmi() {
    require!("ipmi_sim", "ipmitool");
    let sim = support::IpmiSim::start(true);
    let (id, watts, sessions, _) = read_all(config(
        format!("127.0.0.1:{}", sim.port).parse().unwrap(),
        support::PASSWORD,
    ));
    // no DCMI: no reading, and no failure (read_all unwrapped it)
    assert_eq!(watts, None);
    assert_eq!(sessions, 1);
    // ipmi_sim's lan.conf GUID (tests/peers/ipmi_sim_start.sh) read under
    // ipmitool's guess; every encoding is offered for comparison
    let r = support::ipmitool(sim.port, support::PASSWORD, Some(3), &["mc", "guid"]);
    r.assert_code(0);
    let printed = guid_line(&r.stdout).unwrap_or_else(|| panic!("no GUID line\n{r}"));
    assert_eq!(Some(printed.as_str()), id.primary_uuid(), "{id:?}\n{r}");
    assert_eq!(id.uuid.len(), 3, "{id:?}");
    assert!(id
        .uuid
        .iter()
        .any(|f| f.encoding == "rfc4122" && f.uuid == "a1234567-89ab-cdef-a123-456789abcdef"));
    assert!(sim.ops().is_empty(), "reads only");
}

#[test]
fn a_bmc_without_a_system_guid_reports_no_uuid() {
    // A lab machine with no UUID answers Get System GUID with C1h
    // ("invalid command"), as a BMC without the command does.
    let bmc = Bmc::new(true, Faults::default());
    bmc.set_identity(LabIdentity {
        uuid: String::new(),
        serial: "LAB00099".into(),
    });
    let s = Served::start(bmc);
    let (id, watts, sessions, _) = read_all(config(s.addr(), LAB_PW));
    assert!(id.uuid.is_empty(), "{id:?}");
    assert_eq!((watts, sessions), (Some(WATTS_ON), 1));
    // a caller expecting a UUID refuses
    let e = ExpectedIdentity::new(Some(&LabIdentity::for_node(0).uuid), None)
        .unwrap()
        .check(&id)
        .unwrap_err();
    assert!(
        matches!(e, fencekit::engine::identity::Refusal::Unreported(_)),
        "{e}"
    );
    assert!(e.to_string().contains("does not report"), "{e}");
}

#[test]
fn pyghmi_guid_agrees_with_ipmitool() {
    // pyghmi's BMC sends its random UUID with Python's `bytes_le`: the
    // SMBIOS layout, a second implementation that uses it.
    require!("pyghmi", "ipmitool");
    let bmc = support::Pyghmi::start("3,17", true);
    let (id, watts, sessions, _) = read_all(config(
        format!("127.0.0.1:{}", bmc.port).parse().unwrap(),
        support::PASSWORD,
    ));
    assert_eq!((watts, sessions), (None, 1), "pyghmi has no DCMI");
    let r = support::ipmitool(bmc.port, support::PASSWORD, Some(3), &["mc", "guid"]);
    r.assert_code(0);
    let printed = guid_line(&r.stdout).unwrap_or_else(|| panic!("no GUID line\n{r}"));
    assert_eq!(Some(printed.as_str()), id.primary_uuid(), "{id:?}\n{r}");
    assert_eq!(id.uuid[0].encoding, "smbios", "{id:?}");
}
