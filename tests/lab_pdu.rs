//! The lab PDU: its outlets feed lab machines, and the native SNMP driver
//! fences through it; net-snmp's own clients check the simulator, so the
//! client and the simulator cannot share a bug unnoticed.

mod support;

use fencekit::engine::driver::PowerDriver;
use fencekit::engine::error::ErrorKind;
use fencekit::engine::event::Discard;
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::{Action, PowerState};
use fencekit::engine::run::{run, Cancel, Outcome};
use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::fleet::{Lab, LabSpec};
use fencekit::lab::pdu::{LabPdu, LabPduState, PduFaults, PduSpec};
use fencekit::secret::Secret;
use fencekit::snmp::client::Timing;
use fencekit::snmp::config::{OutletSpec, PduEndpoint, Plug, SnmpConfig};
use fencekit::snmp::driver::SnmpDriver;
use fencekit::snmp::message::Version;
use fencekit::snmp::profile::Profile;
use fencekit::snmp::session::{SecLevel, Security, UsmUser};
use fencekit::snmp::usm::{AuthProtocol, PrivProtocol};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const PW: &str = "labpass123";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn endpoint(p: &LabPdu, label: &str, security: Security) -> PduEndpoint {
    PduEndpoint {
        label: label.into(),
        host: p.addr.ip().to_string(),
        port: p.addr.port(),
        security,
        profile: Arc::new(Profile::builtin("apc").expect("apc")),
        // Many tries: under 30 % loss each way a try succeeds about half
        // the time, and this test is about fencing through that.
        timing: Timing {
            timeout: Duration::from_millis(100),
            tries: 14,
        },
    }
}

fn v2c() -> Security {
    Security::Community {
        version: Version::V2c,
        community: Secret::from_str_value("private"),
    }
}

fn v3() -> Security {
    Security::Usm(UsmUser {
        name: "fence".into(),
        level: SecLevel::AuthPriv,
        auth: Some((AuthProtocol::Sha256, Secret::from_str_value(PW))),
        privacy: Some((PrivProtocol::Aes128, Secret::from_str_value(PW))),
    })
}

fn policy() -> Policy {
    let mut p = Policy::native();
    p.poll_interval = Duration::from_millis(20);
    p.power_timeout = PowerTimeout::Wall(Duration::from_millis(600));
    p.deadline = Some(fencekit::engine::clock::Instant::now() + Duration::from_secs(20));
    p
}

/// Two PDUs, each feeding outlet N+1 to lab machine N (dual power supplies).
async fn two_pdus(machines: &[(&str, Bmc)]) -> (LabPdu, LabPdu) {
    let mut pdus = Vec::new();
    for _ in 0..2 {
        let state = LabPduState::new(24);
        for (i, (name, bmc)) in machines.iter().enumerate() {
            state.wire(i as u32 + 1, name, bmc);
        }
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        pdus.push(
            LabPdu::start(addr, PduSpec::lab(24, PW), state)
                .await
                .expect("lab PDU"),
        );
    }
    let b = pdus.pop().expect("two");
    let a = pdus.pop().expect("two");
    (a, b)
}

fn node_driver(a: &LabPdu, b: &LabPdu, outlet: u32, security: fn() -> Security) -> SnmpDriver {
    SnmpDriver::new(SnmpConfig {
        pdus: vec![endpoint(a, "A", security()), endpoint(b, "B", security())],
        outlets: vec![
            OutletSpec {
                pdu: 0,
                plug: Plug::parse(&outlet.to_string()),
            },
            OutletSpec {
                pdu: 1,
                plug: Plug::parse(&outlet.to_string()),
            },
        ],
        max_off_watts: fencekit::engine::power::DEFAULT_MAX_OFF_WATTS,
    })
    .expect("config")
}

/// Cutting both of a machine's outlets cuts its mains: its BMC goes
/// silent, its load reads zero; the other machine is untouched. Power
/// back: the machine returns to its last state.
#[test]
fn fencing_through_both_pdus_cuts_the_machine() {
    rt().block_on(async {
        let lab = Lab::start(&LabSpec {
            nodes: 2,
            redfish: None,
            ..LabSpec::default()
        })
        .await
        .expect("lab");
        let machines: Vec<(&str, Bmc)> = lab
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n.bmc().clone()))
            .collect();
        let (a, b) = two_pdus(&machines).await;
        for sec in [v2c as fn() -> Security, v3] {
            let mut d = node_driver(&a, &b, 1, sec);
            let w = d
                .power_reading(None)
                .await
                .expect("reading")
                .expect("metered");
            assert!(w.watts > 200.0, "{w:?}");
            let r = run(
                &mut d,
                Action::Off,
                &policy(),
                &mut Discard,
                Cancel::never(),
            )
            .await;
            assert_eq!(
                r.map_err(|f| f.error.to_string()),
                Ok(Outcome::Reached {
                    state: PowerState::Off
                })
            );
            assert!(!a.state.relay(1) && !b.state.relay(1));
            assert!(!lab.nodes[0].bmc().has_mains(), "node01 has no mains");
            assert!(!lab.nodes[0].bmc().truly_on());
            assert!(lab.nodes[1].bmc().truly_on(), "node02 untouched");
            let w = d
                .power_reading(None)
                .await
                .expect("reading")
                .expect("metered");
            assert_eq!(w.watts, 0.0, "{}", w.source);
            // Node 1's IPMI is silent now: the BMC has no power.
            let ipmi = fencekit::ipmi::config::IpmiConfig::new(
                lab.nodes[0].addr().ip().to_string(),
                lab.nodes[0].addr().port(),
                "admin",
                Secret::from_str_value("lab"),
            );
            let mut i = fencekit::ipmi::driver::IpmiDriver::new(ipmi).expect("ipmi");
            let e = i
                .connect(Some(Instant::now() + Duration::from_millis(400)))
                .await
                .expect_err("silent BMC");
            assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
            let r = run(&mut d, Action::On, &policy(), &mut Discard, Cancel::never()).await;
            assert_eq!(
                r.map_err(|f| f.error.to_string()),
                Ok(Outcome::Reached {
                    state: PowerState::On
                })
            );
            assert!(lab.nodes[0].bmc().truly_on(), "back on (last state)");
        }
    });
}

/// One PDU feeding is enough: with outlet B:N welded on, the machine keeps
/// running, the action fails, and the message names B:N.
#[test]
fn a_refusing_outlet_fails_the_action_and_is_named() {
    rt().block_on(async {
        let bmc = Bmc::new(true, Faults::default());
        let (a, b) = two_pdus(&[("node01", bmc.clone())]).await;
        b.state.set_faults(PduFaults {
            refuse: vec![1],
            ..PduFaults::default()
        });
        let mut d = node_driver(&a, &b, 1, v2c);
        let e = run(
            &mut d,
            Action::Off,
            &policy(),
            &mut Discard,
            Cancel::never(),
        )
        .await
        .expect_err("B:1 refuses");
        assert_eq!(e.error.kind, ErrorKind::TransitionTimeout, "{}", e.error);
        assert!(e.error.message.contains("still on: B:1"), "{}", e.error);
        assert!(!e.error.message.contains("A:1"), "{}", e.error);
        assert!(bmc.truly_on(), "still fed through B:1");
    });
}

/// A PDU that reports an outlet off but keeps feeding it: status says off,
/// the load says otherwise. The off used to be believed ("Success");
/// now the load must fall within the power timeout, or the off fails
/// naming it (issue 23, item 7). Verify's witness is the same load.
#[test]
fn a_lying_pdu_is_betrayed_by_its_load() {
    rt().block_on(async {
        let bmc = Bmc::new(true, Faults::default());
        let (a, b) = two_pdus(&[("node01", bmc.clone())]).await;
        a.state.set_faults(PduFaults {
            lying: true,
            ..PduFaults::default()
        });
        b.state.set_faults(PduFaults {
            lying: true,
            ..PduFaults::default()
        });
        let mut d = node_driver(&a, &b, 1, v2c);
        let mut p = policy();
        p.power_timeout = PowerTimeout::Wall(Duration::from_millis(800));
        let r = run(&mut d, Action::Off, &p, &mut Discard, Cancel::never()).await;
        let e = r
            .expect_err("an off that still carries load is not off")
            .error;
        assert_eq!(e.kind, ErrorKind::TransitionTimeout, "{e}");
        assert!(
            e.message.contains("the outlets read off but still carry")
                && e.message.contains("A:1 212 W")
                && e.message.contains("more than 50 W"),
            "{e}"
        );
        assert!(bmc.truly_on());
        // Status alone still reads the outlets off (what verify compares).
        assert_eq!(d.status(None).await.expect("status"), PowerState::Off);
        let w = d
            .power_reading(None)
            .await
            .expect("reading")
            .expect("metered");
        assert!(w.watts > 200.0, "the load still shows the machine: {w:?}");
    });
}

/// 30 % loss each way: retransmission inside the deadline still fences.
#[test]
fn lossy_pdu_still_fences() {
    rt().block_on(async {
        let bmc = Bmc::new(true, Faults::default());
        let (a, b) = two_pdus(&[("node01", bmc.clone())]).await;
        for p in [&a, &b] {
            p.state.set_faults(PduFaults {
                loss: 0.3,
                ..PduFaults::default()
            });
        }
        for sec in [v2c as fn() -> Security, v3] {
            let mut d = node_driver(&a, &b, 1, sec);
            let mut p = policy();
            p.power_timeout = PowerTimeout::Wall(Duration::from_secs(15));
            p.deadline = Some(fencekit::engine::clock::Instant::now() + Duration::from_secs(60));
            let r = run(&mut d, Action::Reboot, &p, &mut Discard, Cancel::never()).await;
            assert_eq!(
                r.map_err(|f| f.error.to_string()),
                Ok(Outcome::Rebooted),
                "{:?}",
                a.state.log()
            );
            assert!(a.state.log().contains(&"1 off".to_string()));
        }
    });
}

/// net-snmp's snmpget/snmpset/snmpwalk against the lab PDU: v1, v2c and
/// v3 SHA-256/AES (what an operator's tools see).
#[test]
fn net_snmp_clients_drive_the_lab_pdu() {
    require!("snmpget", "snmpset", "snmpwalk");
    let rt = rt();
    let bmc = Bmc::new(true, Faults::default());
    let pdu = rt.block_on(async {
        let state = LabPduState::new(8);
        state.wire(3, "node03", &bmc);
        LabPdu::start(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            PduSpec::lab(8, PW),
            state,
        )
        .await
        .expect("lab PDU")
    });
    let target = format!("127.0.0.1:{}", pdu.addr.port());
    let v3 = [
        "-v3", "-u", "fence", "-l", "authPriv", "-a", "SHA-256", "-A", PW, "-x", "AES", "-X", PW,
    ];
    let tool = |bin: &str, auth: &[&str], rest: &[&str]| {
        let mut c = std::process::Command::new(bin);
        c.args(["-m", "", "-Oqn", "-t", "1", "-r", "2"])
            .args(auth)
            .arg(&target)
            .args(rest);
        // The runtime serves the lab PDU while the tool runs.
        let child = std::thread::spawn(move || c.output().expect("run net-snmp tool"));
        let out = loop {
            if child.is_finished() {
                break child.join().expect("join");
            }
            rt.block_on(async { tokio::time::sleep(Duration::from_millis(10)).await });
        };
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let name = ".1.3.6.1.4.1.318.1.1.12.3.5.1.1.2.3";
    let ctl = ".1.3.6.1.4.1.318.1.1.12.3.3.1.1.4.3";
    for auth in [
        &["-v1", "-c", "private"][..],
        &["-v2c", "-c", "private"][..],
        &v3[..],
    ] {
        let (ok, out) = tool("snmpget", auth, &[name, ".1.3.6.1.2.1.1.2.0"]);
        assert!(ok, "{auth:?}: {out}");
        assert!(
            out.contains("\"node03\"") && out.contains(".1.3.6.1.4.1.318.1.3.4.5"),
            "{out}"
        );
        let (ok, out) = tool("snmpset", auth, &[ctl, "i", "2"]);
        assert!(ok, "{auth:?}: {out}");
        assert!(!bmc.has_mains(), "{auth:?}: outlet 3 feeds node03");
        let (ok, out) = tool("snmpset", auth, &[ctl, "i", "1"]);
        assert!(ok && bmc.has_mains(), "{auth:?}: {out}");
        let (ok, out) = tool("snmpwalk", auth, &[".1.3.6.1.4.1.318.1.1.12.3.5.1.1.2"]);
        assert!(ok, "{out}");
        assert_eq!(out.lines().count(), 8, "{out}");
    }
    let (ok, out) = tool("snmpset", &["-v2c", "-c", "public"], &[ctl, "i", "2"]);
    assert!(
        !ok && bmc.has_mains(),
        "read-only community must not switch: {out}"
    );
    let (ok, _) = tool(
        "snmpget",
        &[
            "-v3",
            "-u",
            "fence",
            "-l",
            "authPriv",
            "-a",
            "SHA-256",
            "-A",
            "wrongpass1",
            "-x",
            "AES",
            "-X",
            PW,
        ],
        &[name],
    );
    assert!(!ok, "wrong v3 password accepted");
    assert!(pdu.state.counters().auth_failures >= 1);
}
