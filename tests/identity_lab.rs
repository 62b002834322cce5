//! Identity pinning through the real binary against the lab's IPMI and
//! Redfish BMCs (running in this process, so that each chassis' power and
//! command log can be asserted): the right UUID fences; a wrong one, a BMC
//! that cannot report its identity, and a BMC answering with another
//! node's identity (a swapped cable) are refused with exit 1 before any
//! power command, natively and as `fence_ipmilan` / `fence_redfish`; a
//! level that names the wrong machine stops the node; `check
//! --record-identity` pins the lab in one command.

mod support;

use fencekit::lab::bmc::{Bmc, Faults, LabIdentity};
use fencekit::lab::fleet::{Lab, LabSpec};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::bin;

/// One lab node as the tests see it.
struct Node {
    ipmi: String,
    redfish: String,
    cert: PathBuf,
    bmc: Bmc,
    uuid: String,
    serial: String,
}

/// A lab of `n` nodes (IPMI and HTTPS Redfish each) on a thread of its own,
/// its inventory and password file in `dir`.
struct TestLab {
    nodes: Vec<Node>,
    inventory: PathBuf,
    password: PathBuf,
    dir: tempfile::TempDir,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestLab {
    fn start(n: u32, faults: Faults) -> TestLab {
        let dir = tempfile::tempdir().unwrap();
        let certs = dir.path().join("certs");
        std::fs::create_dir_all(&certs).unwrap();
        let password = dir.path().join("pw");
        std::fs::write(&password, "lab").unwrap();
        let spec = LabSpec {
            nodes: n,
            faults,
            cert_dir: Some(certs.clone()),
            ..LabSpec::default()
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let pw = password.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let lab = Lab::start(&spec).await.unwrap();
                let nodes: Vec<_> = lab
                    .nodes
                    .iter()
                    .map(|n| {
                        let id = n.bmc().identity();
                        Node {
                            ipmi: format!("ipmi://admin@{}", n.addr()),
                            redfish: n.redfish.as_ref().unwrap().target(),
                            cert: certs.join(format!("{}.pem", n.name)),
                            bmc: n.bmc().clone(),
                            uuid: id.uuid,
                            serial: id.serial,
                        }
                    })
                    .collect();
                tx.send((nodes, lab.inventory_text(&spec, &pw))).unwrap();
                let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                drop(lab);
            });
        });
        let (nodes, text) = rx.recv().unwrap();
        let inventory = dir.path().join("lab.toml");
        std::fs::write(&inventory, text).unwrap();
        TestLab {
            nodes,
            inventory,
            password,
            dir,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    fn d(&self) -> &Path {
        self.dir.path()
    }

    /// `fencekit ARGS… --password-file PW` with a clean environment.
    fn fk(&self, args: &[&str]) -> support::Run {
        let mut c = Command::new(bin());
        c.args(args)
            .args(["-l", "admin", "--password-file"])
            .arg(&self.password)
            .env("NO_COLOR", "1")
            .env("XDG_RUNTIME_DIR", self.d())
            .env("HOME", self.d())
            .env_remove("FENCEKIT_PASSWORD")
            .env_remove("FENCEKIT_INVENTORY")
            .env_remove("FENCEKIT_AUDIT");
        support::run(c, Duration::from_secs(60))
    }

    /// The binary as agent `name`.
    fn agent(&self, name: &str, args: &[String], stdin: Option<&str>) -> support::AgentOut {
        let link = self.d().join(name);
        if !link.exists() {
            std::os::unix::fs::symlink(bin(), &link).unwrap();
        }
        support::exec_agent(&link, args, stdin, Duration::from_secs(60))
    }
}

impl Drop for TestLab {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn identity_event(result: &serde_json::Value) -> serde_json::Value {
    result["timeline"]
        .as_array()
        .and_then(|t| t.iter().find(|e| e["event"] == "identity").cloned())
        .unwrap_or(serde_json::Value::Null)
}

/// Asserts that `bmc` saw no power command and is still on.
fn untouched(bmc: &Bmc, what: &str) {
    assert!(bmc.log().is_empty(), "{what}: commands {:?}", bmc.log());
    assert!(bmc.is_on(), "{what}: the power changed");
}

/// The native command line over IPMI and Redfish.
#[test]
fn native_fences_the_pinned_machine_and_refuses_any_other() {
    let lab = TestLab::start(2, Faults::default());
    let (n1, n2) = (&lab.nodes[0], &lab.nodes[1]);
    let cert = n1.cert.to_str().unwrap().to_string();
    for (proto, target, extra) in [
        ("ipmi", n1.ipmi.as_str(), vec![]),
        (
            "redfish",
            n1.redfish.as_str(),
            vec!["--ca-cert", cert.as_str()],
        ),
    ] {
        // node02's UUID: refused, exit 1, nothing sent.
        let mut args = vec!["off", target, "--expect-uuid", &n2.uuid, "-o", "json"];
        args.extend(&extra);
        let r = lab.fk(&args);
        r.assert_code(1);
        let res = &r.json()["results"][0];
        assert_eq!(res["error_kind"], "identity-mismatch", "{proto}: {r}");
        let e = res["error"].as_str().unwrap();
        assert!(
            e.starts_with(&format!(
                "refusing to act on a different machine: expected uuid {}, found ",
                n2.uuid
            )) && e.contains(&n1.uuid)
                && e.contains("no power command was sent (during identity check)"),
            "{proto}: {e}"
        );
        assert_eq!(identity_event(res)["matched"], false, "{proto}");
        untouched(&n1.bmc, proto);
        untouched(&n2.bmc, proto);

        // Its own UUID (upper case, no hyphens): fenced, and the timeline
        // names the encoding that matched.
        let spelled = n1.uuid.to_uppercase().replace('-', "");
        let mut args = vec!["off", target, "--expect-uuid", &spelled, "-o", "json"];
        args.extend(&extra);
        let r = lab.fk(&args);
        r.assert_code(0);
        let ev = identity_event(&r.json()["results"][0]);
        assert_eq!(ev["matched"], true, "{proto}: {r}");
        assert!(ev["encoding"].is_string(), "{proto}: {ev}");
        assert!(!n1.bmc.is_on(), "{proto}: fenced");
        n1.bmc.set_on(true);
        n1.bmc.lock().log.clear();
    }

    // Redfish also reports the serial number.
    let cert = cert.as_str();
    let r = lab.fk(&[
        "status",
        &n1.redfish,
        "--ca-cert",
        cert,
        "--expect-serial",
        &n2.serial,
    ]);
    r.assert_code(1);
    assert!(
        r.stderr.contains(&format!(
            "expected serial {}, found {}",
            n2.serial, n1.serial
        )),
        "{r}"
    );
    let r = lab.fk(&[
        "status",
        &n1.redfish,
        "--ca-cert",
        cert,
        "--expect-serial",
        &n1.serial.to_lowercase(),
        "--expect-uuid",
        &n1.uuid,
    ]);
    r.assert_code(0);
}

/// `fence_ipmilan` and `fence_redfish` with the extra option.
#[test]
fn agents_fence_the_pinned_machine_and_refuse_any_other() {
    let lab = TestLab::start(2, Faults::default());
    let (n1, n2) = (&lab.nodes[0], &lab.nodes[1]);
    let ipmi_port = n1.ipmi.rsplit(':').next().unwrap().to_string();
    let redfish_addr = n1
        .redfish
        .split("//")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let redfish_port = redfish_addr.rsplit(':').next().unwrap().to_string();
    // Parameters as (stdin key, value); argv is `--key-with-dashes=value`.
    let ipmilan = |uuid: &str, action: &str| -> Vec<(String, String)> {
        vec![
            ("ip".into(), "127.0.0.1".into()),
            ("ipport".into(), ipmi_port.clone()),
            ("username".into(), "admin".into()),
            ("password".into(), "lab".into()),
            ("lanplus".into(), "1".into()),
            ("power_wait".into(), "0".into()),
            ("action".into(), action.into()),
            ("expect_uuid".into(), uuid.into()),
        ]
    };
    let redfish = |uuid: &str, action: &str| -> Vec<(String, String)> {
        vec![
            ("ip".into(), "127.0.0.1".into()),
            ("ipport".into(), redfish_port.clone()),
            ("username".into(), "admin".into()),
            ("password".into(), "lab".into()),
            ("ca_cert".into(), n1.cert.display().to_string()),
            ("power_wait".into(), "0".into()),
            ("action".into(), action.into()),
            ("expect_uuid".into(), uuid.into()),
        ]
    };
    let argv = |p: Vec<(String, String)>| -> Vec<String> {
        p.into_iter()
            .map(|(k, v)| match k.as_str() {
                // a flag takes no value on the command line
                "lanplus" => "--lanplus".to_string(),
                _ => format!("--{}={v}", k.replace('_', "-")),
            })
            .collect()
    };
    let stdin = |p: Vec<(String, String)>| -> String {
        p.into_iter().map(|(k, v)| format!("{k}={v}\n")).collect()
    };
    type Params<'a> = &'a dyn Fn(&str, &str) -> Vec<(String, String)>;
    for (name, params) in [
        ("fence_ipmilan", &ipmilan as Params),
        ("fence_redfish", &redfish as Params),
    ] {
        for action in ["off", "reboot", "status", "monitor"] {
            let o = lab.agent(name, &argv(params(&n2.uuid, action)), None);
            assert_eq!(
                (o.code, o.stdout.as_str()),
                (Some(1), ""),
                "{name} {action}: {o:?}"
            );
            assert!(
                o.stderr.contains(
                    "Failed: The device controls a different machine than --expect-uuid names"
                ) && o.stderr.contains(&format!("expected uuid {}", n2.uuid)),
                "{name} {action}: {}",
                o.stderr
            );
            untouched(&n1.bmc, name);
        }
        let o = lab.agent(name, &argv(params(&n1.uuid, "off")), None);
        assert_eq!(
            (o.code, o.stdout.as_str()),
            (Some(0), "Success: Powered OFF\n"),
            "{name}: {o:?}"
        );
        assert!(!n1.bmc.is_on());
        // On stdin, the way Pacemaker passes it.
        let o = lab.agent(name, &[], Some(&stdin(params(&n1.uuid, "on"))));
        assert_eq!(
            (o.code, o.stdout.as_str()),
            (Some(0), "Success: Powered ON\n"),
            "{name}: {o:?}"
        );
        assert!(n1.bmc.is_on());
        n1.bmc.lock().log.clear();
    }
}

/// A BMC that cannot report its identity, while one is expected.
#[test]
fn a_bmc_that_cannot_report_its_identity_is_refused() {
    let lab = TestLab::start(
        1,
        Faults {
            no_identity: true,
            ..Faults::default()
        },
    );
    let n1 = &lab.nodes[0];
    let cert = n1.cert.to_str().unwrap();
    for (target, extra) in [
        (n1.ipmi.as_str(), vec![]),
        (n1.redfish.as_str(), vec!["--ca-cert", cert]),
    ] {
        let mut args = vec!["off", target, "--expect-uuid", &n1.uuid, "-o", "json"];
        args.extend(&extra);
        let r = lab.fk(&args);
        r.assert_code(1);
        let res = &r.json()["results"][0];
        assert_eq!(res["error_kind"], "identity-unavailable", "{target}: {r}");
        assert!(
            res["error"]
                .as_str()
                .unwrap()
                .contains("does not report a system uuid"),
            "{r}"
        );
        untouched(&n1.bmc, target);
        // Without a pin nothing is read and the node is fenced as before.
        let mut args = vec!["status", target];
        args.extend(&extra);
        lab.fk(&args).assert_code(0);
    }
}

/// The lab's identity-of fault: node01's BMC answers as node02 (a swapped
/// cable). The pinned inventory refuses, and level 2 is not tried.
#[test]
fn a_bmc_answering_as_another_node_is_refused_and_stops_the_levels() {
    let lab = TestLab::start(2, Faults::default());
    let (n1, n2) = (&lab.nodes[0], &lab.nodes[1]);
    let inv = lab.inventory.to_str().unwrap();

    // Pin the rack in one command; append; fence with it.
    let r = lab.fk(&["check", "-i", inv, "--all", "--record-identity"]);
    r.assert_code(0);
    for n in &lab.nodes {
        assert!(r.stdout.contains(&format!("uuid = \"{}\"", n.uuid)), "{r}");
    }
    // IPMI reports no serial number, so no serial could be checked through
    // level 1: none is recorded.
    assert!(!r.stdout.contains("serial ="), "{r}");
    let mut text = std::fs::read_to_string(&lab.inventory).unwrap();
    text.push_str(&r.stdout);
    std::fs::write(&lab.inventory, &text).unwrap();
    let r = lab.fk(&["off", "-i", inv, "node01", "-o", "json"]);
    r.assert_code(0);
    assert_eq!(
        identity_event(&r.json()["results"][0])["matched"],
        true,
        "{r}"
    );
    n1.bmc.set_on(true);
    n1.bmc.lock().log.clear();

    // The cable is swapped: node01's BMC now answers with node02's identity
    // on both IPMI and Redfish (one chassis).
    n1.bmc.set_identity(LabIdentity::for_node(1));
    let r = lab.fk(&["off", "-i", inv, "node01", "-o", "json"]);
    r.assert_code(1);
    let res = &r.json()["results"][0];
    assert_eq!(res["error_kind"], "identity-mismatch", "{r}");
    assert_eq!(res["level"], 1);
    assert!(
        res["error"]
            .as_str()
            .unwrap()
            .contains("level(s) 2 not tried"),
        "{r}"
    );
    untouched(&n1.bmc, "swapped node01");
    untouched(&n2.bmc, "node02");

    // verify takes no evidence from a channel that controls another machine.
    let r = lab.fk(&[
        "verify",
        "-i",
        inv,
        "node01",
        "--samples",
        "1",
        "-o",
        "json",
    ]);
    assert_ne!(r.code, Some(0), "{r}");
    assert!(
        r.stdout
            .contains("this channel controls a different machine"),
        "{r}"
    );

    // check flags it.
    let r = lab.fk(&["check", "-i", inv, "node01"]);
    r.assert_code(1);
    assert!(r.stdout.contains("a different machine than pinned"), "{r}");
}

/// A Redfish service with several systems: the pinned UUID chooses one
/// without a systems path; none or two reporting it is refused, naming the
/// candidates; nothing is reset then. Native and as `fence_redfish`.
#[test]
fn an_expected_uuid_chooses_among_several_systems() {
    let dir = tempfile::tempdir().unwrap();
    let main = LabIdentity::for_node(0);
    let other = LabIdentity::for_node(1);
    let start = |extra: Vec<LabIdentity>, cert: &Path| {
        let bmc = Bmc::new(true, Faults::default());
        bmc.set_identity(main.clone());
        RedfishOnThread::start(bmc, extra, cert)
    };
    let fk = |args: &[&str]| {
        let mut c = Command::new(bin());
        c.args(args)
            .env("FENCEKIT_PASSWORD", "lab")
            .env("NO_COLOR", "1")
            .env("XDG_RUNTIME_DIR", dir.path())
            .env_remove("FENCEKIT_INVENTORY");
        support::run(c, Duration::from_secs(60))
    };

    // Systems 1 (main), 1-2 (other), 1-3 (made up).
    let cert = dir.path().join("a.pem");
    let lab = start(vec![other.clone()], &cert);
    let bmc = lab.bmc.clone();
    let url = format!("redfish://admin@{}", lab.addr);
    let ca = cert.to_str().unwrap();
    // Without a pin: refused, as before (several systems, none chosen).
    let r = fk(&["off", &url, "--ca-cert", ca]);
    r.assert_code(1);
    assert!(bmc.is_on() && lab.resets().is_empty(), "{r}");
    // A UUID nobody reports: a wrong machine, every candidate named.
    let nobody = LabIdentity::for_node(9).uuid;
    let r = fk(&[
        "off",
        &url,
        "--ca-cert",
        ca,
        "--expect-uuid",
        &nobody,
        "-o",
        "json",
    ]);
    r.assert_code(1);
    let res = &r.json()["results"][0];
    assert_eq!(res["error_kind"], "identity-mismatch", "{r}");
    let e = res["error"].as_str().unwrap();
    for want in [
        "/redfish/v1/Systems/1 (uuid",
        "/redfish/v1/Systems/1-2 (uuid",
        "/redfish/v1/Systems/1-3 (uuid",
        main.uuid.as_str(),
        other.uuid.as_str(),
    ] {
        assert!(e.contains(want), "{want}: {e}");
    }
    assert!(bmc.is_on() && lab.resets().is_empty(), "{r}");
    // The main system's UUID, in another spelling: it is chosen and fenced.
    let spelled = format!("{{{}}}", main.uuid.to_uppercase());
    let r = fk(&[
        "off",
        &url,
        "--ca-cert",
        ca,
        "--expect-uuid",
        &spelled,
        "-o",
        "json",
    ]);
    r.assert_code(0);
    assert_eq!(
        r.json()["results"][0]["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event"] == "identity")
            .map(|e| e["matched"].clone()),
        Some(serde_json::Value::Bool(true)),
        "{r}"
    );
    assert!(!bmc.is_on(), "the main system, chosen by its UUID");
    assert_eq!(lab.resets().len(), 1, "one reset, to the main system");
    bmc.set_on(true);
    // fence_redfish: the same choice without --systems-uri.
    let link = dir.path().join("fence_redfish");
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    let port = lab.addr.port().to_string();
    let args = |uuid: &str| -> Vec<String> {
        vec![
            "--ip=127.0.0.1".into(),
            format!("--ipport={port}"),
            "--username=admin".into(),
            "--password=lab".into(),
            format!("--ca-cert={ca}"),
            "--power-wait=0".into(),
            "--action=off".into(),
            format!("--expect-uuid={uuid}"),
        ]
    };
    let o = support::exec_agent(&link, &args(&nobody), None, Duration::from_secs(60));
    assert_eq!((o.code, o.stdout.as_str()), (Some(1), ""), "{o:?}");
    assert!(
        o.stderr.contains("/redfish/v1/Systems/1-2 (uuid"),
        "{}",
        o.stderr
    );
    assert!(bmc.is_on());
    let o = support::exec_agent(&link, &args(&main.uuid), None, Duration::from_secs(60));
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(0), "Success: Powered OFF\n"),
        "{o:?}"
    );
    assert!(!bmc.is_on());
    drop(lab);

    // Two systems claim the main system's UUID: refused, both named.
    let cert = dir.path().join("b.pem");
    let lab = start(vec![main.clone()], &cert);
    let bmc = lab.bmc.clone();
    let url = format!("redfish://admin@{}", lab.addr);
    let ca = cert.to_str().unwrap();
    let r = fk(&["off", &url, "--ca-cert", ca, "--expect-uuid", &main.uuid]);
    r.assert_code(1);
    assert!(
        r.stderr
            .contains(&format!("2 systems report uuid {}", main.uuid))
            && r.stderr.contains("/redfish/v1/Systems/1 (uuid")
            && r.stderr.contains("/redfish/v1/Systems/1-2 (uuid"),
        "{r}"
    );
    assert!(bmc.is_on() && lab.resets().is_empty(), "{r}");
    drop(lab);
}

/// One lab Redfish service with two extra systems, on a thread of its own.
struct RedfishOnThread {
    addr: std::net::SocketAddr,
    bmc: Bmc,
    ask: Option<std::sync::mpsc::Sender<std::sync::mpsc::Sender<Vec<String>>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RedfishOnThread {
    fn start(bmc: Bmc, extra: Vec<LabIdentity>, cert: &Path) -> Self {
        use fencekit::lab::redfish::{LabRedfish, RedfishLabOptions};
        let opts = RedfishLabOptions {
            extra_systems: 2,
            extra_identities: extra,
            cert_path: Some(cert.to_path_buf()),
            ..RedfishLabOptions::default()
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let (ask, asked) = std::sync::mpsc::channel::<std::sync::mpsc::Sender<Vec<String>>>();
        let b = bmc.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let lab = LabRedfish::start("127.0.0.1:0".parse().unwrap(), b, opts)
                    .await
                    .unwrap();
                tx.send(lab.addr).unwrap();
                // Serve until the test hangs up, answering stats requests.
                loop {
                    let next = asked.try_recv();
                    match next {
                        Ok(reply) => {
                            let _ = reply.send(lab.stats().resets);
                        }
                        Err(std::sync::mpsc::TryRecvError::Empty) => {
                            tokio::time::sleep(Duration::from_millis(10)).await
                        }
                        Err(_) => break,
                    }
                }
            });
        });
        let addr = rx.recv().unwrap();
        RedfishOnThread {
            addr,
            bmc,
            ask: Some(ask),
            thread: Some(thread),
        }
    }

    /// The reset types the service received.
    fn resets(&self) -> Vec<String> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.ask.as_ref().unwrap().send(tx).unwrap();
        rx.recv().unwrap()
    }
}

impl Drop for RedfishOnThread {
    fn drop(&mut self) {
        drop(self.ask.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
