//! fencekit's vim25 client (`src/vsphere/`) against fencekit-vcsim
//! (`tests/peers/vcsim`: govmomi's simulator with a control API): login,
//! finding a VM by name, BIOS UUID, instance UUID and managed object id,
//! an ambiguous name refused, the power states judged as the platform
//! behaves (suspended is on; a VM on a host that stopped reporting is
//! stale), power tasks followed to their end with their faults named, and
//! a power request whose answer was lost found again without a second one.
//! These tests drive the client; tests/vsphere_native.rs runs the CLI.

mod support;

use fencekit::engine::error::ErrorKind;
use fencekit::engine::power::PowerState;
use fencekit::vsphere::client::{Client, Submitted};
use fencekit::vsphere::model::{judge, Reading, VmSelector};
use fencekit::vsphere::soap::{MoRef, PowerMethod};
use serde_json::Value;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{free_port, peer_scripts, peers_dir};

struct Vcsim {
    port: u16,
    info: Value,
}

impl Vcsim {
    fn start() -> Vcsim {
        let port = free_port();
        let info: Value = support::vcsim_start(port, &[]);
        Vcsim { port, info }
    }

    fn base(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    fn control(&self, path: &str) -> Value {
        let out = Command::new("curl")
            .args(["-s", "--cacert"])
            .arg(self.info["cert"].as_str().unwrap())
            .args([
                "-X",
                if path.starts_with("vms") || path.starts_with("calls") {
                    "GET"
                } else {
                    "POST"
                },
            ])
            .arg(format!("{}/fencekit/{path}", self.base()))
            .output()
            .expect("curl");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("control {path}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn vm(&self, name: &str) -> Value {
        let vms = self.control("vms");
        vms.as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {vms}"))
    }

    fn client(&self) -> Client {
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for c in
            rustls::pki_types::CertificateDer::pem_file_iter(self.info["cert"].as_str().unwrap())
                .unwrap()
        {
            roots.add(c.unwrap()).unwrap();
        }
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        Client::new(self.info["url"].as_str().unwrap(), tls).unwrap()
    }
}

impl Drop for Vcsim {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(peer_scripts().join("vcsim_stop.sh"))
            .arg(self.port.to_string())
            .env("PEERS_DIR", peers_dir())
            .output();
    }
}

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

#[test]
fn login_and_finding_vms() {
    require!("vcsim");
    let sim = Vcsim::start();
    block(async {
        let mut bad = sim.client();
        let e = bad.connect("fence", "wrong", soon()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::PasswordInvalid, "{e}");
        assert!(e.message.contains("InvalidLogin"), "{e}");

        let mut c = sim.client();
        let said = c.connect("fence", "vcsim-secret", soon()).await.unwrap();
        assert!(said.contains("VirtualCenter"), "{said}");

        let want = sim.vm("DC0_H0_VM0");
        let moref = want["moref"].as_str().unwrap();
        for sel in [
            "DC0_H0_VM0".to_string(),
            format!("uuid:{}", want["uuid"].as_str().unwrap()),
            format!("instance:{}", want["instance_uuid"].as_str().unwrap()),
            format!("moref:{moref}"),
        ] {
            let v = c
                .find(&VmSelector::parse(&sel).unwrap(), soon())
                .await
                .unwrap();
            assert_eq!(v.moref.value, moref, "{sel}");
            assert_eq!(v.host_name.as_deref(), want["host_name"].as_str(), "{sel}");
        }
        // One name, two VMs (two datacenters): refused, both listed.
        let e = c
            .find(&VmSelector::parse("twin").unwrap(), soon())
            .await
            .unwrap_err();
        let twins: Vec<String> = sim
            .control("vms")
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["name"] == "twin")
            .map(|v| v["moref"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(twins.len(), 2);
        for t in &twins {
            assert!(e.message.contains(&format!("moref:{t}")), "{e}");
        }
        for sel in [
            "nosuch",
            "moref:vm-99999",
            "uuid:00000000-0000-0000-0000-000000000001",
        ] {
            assert!(
                c.find(&VmSelector::parse(sel).unwrap(), soon())
                    .await
                    .is_err(),
                "{sel}"
            );
        }
        c.logout(soon()).await.unwrap();
        let calls = sim.control("calls");
        assert_eq!(calls["Logout"], 1, "{calls}");
    });
}

#[test]
fn states_and_power_tasks() {
    require!("vcsim");
    let sim = Vcsim::start();
    block(async {
        let mut c = sim.client();
        c.connect("fence", "vcsim-secret", soon()).await.unwrap();
        let sel = VmSelector::parse("DC0_C0_RP0_VM0").unwrap();
        let vm = c.find(&sel, soon()).await.unwrap();
        assert_eq!(judge(&vm), Reading::On);
        let every = Duration::from_millis(100);

        // off, then the state read back; a second off fails as the platform says.
        let Submitted::Task(t) = c.submit(PowerMethod::Off, &vm.moref, soon()).await.unwrap()
        else {
            panic!("answer lost")
        };
        c.follow(&t, every, soon()).await.unwrap();
        assert_eq!(judge(&c.read(&vm, soon()).await.unwrap()), Reading::Off);
        let Submitted::Task(t) = c.submit(PowerMethod::Off, &vm.moref, soon()).await.unwrap()
        else {
            panic!("answer lost")
        };
        let e = c.follow(&t, every, soon()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotInPresentState, "{e}");
        assert!(e.message.contains("InvalidPowerState"), "{e}");

        // Suspended is on; off powers it off.
        sim.control(&format!("vm?vm={}&power=suspended", vm.moref.value));
        let r = judge(&c.read(&vm, soon()).await.unwrap());
        assert_eq!(r, Reading::Suspended);
        assert_eq!(r.power_state().unwrap(), PowerState::On);
        let Submitted::Task(t) = c.submit(PowerMethod::Off, &vm.moref, soon()).await.unwrap()
        else {
            panic!("answer lost")
        };
        c.follow(&t, every, soon()).await.unwrap();
        assert_eq!(sim.vm("DC0_C0_RP0_VM0")["power"], "poweredOff");

        // A host that stopped reporting: stale, names the host; the task fails.
        sim.control(&format!("vm?vm={}&power=poweredOn", vm.moref.value));
        let host = vm.host_name.clone().unwrap();
        sim.control(&format!("host?host={host}&connection=notResponding"));
        let r = judge(&c.read(&vm, soon()).await.unwrap());
        let Reading::Stale(why) = &r else {
            panic!("{r:?}")
        };
        assert!(
            why.contains(&host) && why.contains("notResponding"),
            "{why}"
        );
        assert!(r.power_state().is_err());
        let Submitted::Task(t) = c.submit(PowerMethod::Off, &vm.moref, soon()).await.unwrap()
        else {
            panic!("answer lost")
        };
        let e = c.follow(&t, every, soon()).await.unwrap_err();
        assert!(e.message.contains("InvalidHostConnectionState"), "{e}");
        assert_eq!(sim.vm("DC0_C0_RP0_VM0")["power"], "poweredOn");
    });
}

#[test]
fn slow_failed_and_lost_tasks() {
    require!("vcsim");
    let sim = Vcsim::start();
    block(async {
        let mut c = sim.client();
        c.connect("fence", "vcsim-secret", soon()).await.unwrap();
        let vm = c
            .find(&VmSelector::parse("DC1_H0_VM0").unwrap(), soon())
            .await
            .unwrap();
        let every = Duration::from_millis(100);

        // A task that runs 1.5 s: followed to its end, not before.
        sim.control("task?method=PowerOffVM_Task&delay_ms=1500");
        let started = Instant::now();
        let Submitted::Task(t) = c.submit(PowerMethod::Off, &vm.moref, soon()).await.unwrap()
        else {
            panic!("answer lost")
        };
        c.follow(&t, every, soon()).await.unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(1400),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(judge(&c.read(&vm, soon()).await.unwrap()), Reading::Off);

        // One that outlasts the deadline: a timeout, never success.
        sim.control("task?method=PowerOnVM_Task&delay_ms=3000");
        let Submitted::Task(t) = c.submit(PowerMethod::On, &vm.moref, soon()).await.unwrap() else {
            panic!("answer lost")
        };
        let e = c
            .follow(&t, every, Instant::now() + Duration::from_millis(800))
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::TransitionTimeout, "{e}");
        tokio::time::sleep(Duration::from_millis(2500)).await;

        // A task fault is named.
        sim.control("task?method=ResetVM_Task&fault=NoPermission");
        let Submitted::Task(t) = c
            .submit(PowerMethod::Reset, &vm.moref, soon())
            .await
            .unwrap()
        else {
            panic!("answer lost")
        };
        let e = c.follow(&t, every, soon()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::PrivilegeNotObtained, "{e}");

        // The answer to an off is lost after vCenter took it: its task is
        // found in recentTask, followed, and no second off is sent.
        let before = c.recent_tasks(&vm.moref, soon()).await.unwrap();
        sim.control("soap?method=PowerOffVM_Task&drop=1");
        let calls_before = sim.control("calls")["PowerOffVM_Task"].as_u64().unwrap();
        let lost = c.submit(PowerMethod::Off, &vm.moref, soon()).await.unwrap();
        assert!(matches!(lost, Submitted::Lost(_)), "{lost:?}");
        let found = c
            .find_lost(PowerMethod::Off, &vm.moref, &before, soon())
            .await
            .unwrap()
            .expect("the lost request's task");
        c.follow(&found, every, soon()).await.unwrap();
        assert_eq!(judge(&c.read(&vm, soon()).await.unwrap()), Reading::Off);
        assert_eq!(
            sim.control("calls")["PowerOffVM_Task"].as_u64().unwrap(),
            calls_before + 1
        );
        // Nothing new since: no task to find.
        let now = c.recent_tasks(&vm.moref, soon()).await.unwrap();
        assert_eq!(
            c.find_lost(PowerMethod::Off, &vm.moref, &now, soon())
                .await
                .unwrap(),
            None::<MoRef>
        );
    });
}

/// The engine's driver: status judged (suspended on, a silent host an
/// error naming it), off confirmed, identity from the BIOS UUID, a lost
/// answer recovered with a warning, logout at close.
#[test]
fn power_driver() {
    use fencekit::engine::driver::PowerDriver;
    use fencekit::engine::power::PowerCommand;
    use fencekit::secret::Secret;
    use fencekit::vsphere::driver::VsphereDriver;
    require!("vcsim");
    let sim = Vcsim::start();
    let want = sim.vm("DC1_C0_RP0_VM1");
    block(async {
        let mut d = VsphereDriver::new(
            sim.client(),
            "fence",
            Secret::from_str_value("vcsim-secret"),
            VmSelector::parse("DC1_C0_RP0_VM1").unwrap(),
        );
        let said = d.connect(Some(soon())).await.unwrap();
        assert!(said.contains(want["moref"].as_str().unwrap()), "{said}");
        assert_eq!(d.status(Some(soon())).await.unwrap(), PowerState::On);
        let id = d.identity(Some(soon())).await.unwrap();
        assert_eq!(id.uuid[0].uuid, want["uuid"].as_str().unwrap());

        sim.control(&format!(
            "vm?vm={}&power=suspended",
            want["moref"].as_str().unwrap()
        ));
        assert_eq!(d.status(Some(soon())).await.unwrap(), PowerState::On);
        assert!(d.take_warnings().iter().any(|w| w.contains("suspended")));

        sim.control("soap?method=PowerOffVM_Task&drop=1");
        d.command(PowerCommand::Off, Some(soon())).await.unwrap();
        assert_eq!(d.status(Some(soon())).await.unwrap(), PowerState::Off);
        assert!(d.take_warnings().iter().any(|w| w.contains("was lost")));
        assert_eq!(sim.control("calls")["PowerOffVM_Task"], 1);

        sim.control(&format!(
            "host?host={}&connection=disconnected",
            want["host_name"].as_str().unwrap()
        ));
        let e = d.status(Some(soon())).await.unwrap_err();
        assert!(
            e.message.contains(want["host_name"].as_str().unwrap()),
            "{e}"
        );
        let e = d.command(PowerCommand::On, Some(soon())).await.unwrap_err();
        assert!(e.message.contains("disconnected"), "{e}");
        assert_eq!(sim.control("calls").get("PowerOnVM_Task"), None);

        d.close().await;
        assert_eq!(sim.control("calls")["Logout"], 1);
    });
}
