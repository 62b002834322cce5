//! The native `vsphere` platform end to end: `fencekit` with
//! `vsphere://USER@HOST:PORT/VM` targets and inventory `driver = "vsphere"`
//! against fencekit-vcsim (tests/peers/vcsim: govmomi's simulator with a
//! control API). Power states as vSphere behaves (suspended is on and off
//! confirms poweredOff; a VM whose host stopped reporting is never off and
//! the host is named), at most once (a lost answer is found again, never
//! re-sent), identity (`--expect-uuid` against the BIOS and the instance
//! UUID, refused before any change), ambiguous names, the shared TLS trust
//! and verify's verdict (vCenter alone is bmc-only). docs/vsphere.md.

mod support;

use serde_json::Value;
use std::process::Command;
use std::time::Duration;
use support::{fencekit, free_port, peer_scripts, peers_dir, Run};

const PASSWORD: &str = "vcsim-secret";

/// One fencekit-vcsim, stopped on drop (by its PID, through vcsim_stop.sh).
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

    fn cert(&self) -> &str {
        self.info["cert"].as_str().unwrap()
    }

    fn target(&self, vm: &str) -> String {
        format!("vsphere://fence@127.0.0.1:{}/{vm}", self.port)
    }

    /// `fencekit ARGS… TARGET --ca-cert CERT`.
    fn run(&self, args: &[&str], vm: &str) -> Run {
        let target = self.target(vm);
        let mut all: Vec<&str> = args.to_vec();
        all.extend([target.as_str(), "--ca-cert", self.cert()]);
        fencekit(&all, PASSWORD)
    }

    fn control(&self, method: &str, path: &str) -> Value {
        let out = Command::new("curl")
            .args(["-s", "--cacert", self.cert(), "-X", method])
            .arg(format!("https://127.0.0.1:{}/fencekit/{path}", self.port))
            .output()
            .expect("curl");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("control {path}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn vm(&self, name: &str) -> Value {
        let vms = self.control("GET", "vms");
        vms.as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {vms}"))
    }

    fn power(&self, name: &str) -> String {
        self.vm(name)["power"].as_str().unwrap().to_string()
    }

    /// SOAP calls of `method` served so far.
    fn calls(&self, method: &str) -> u64 {
        self.control("GET", "calls")[method].as_u64().unwrap_or(0)
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

#[test]
fn status_off_on_reboot_and_already_in_state() {
    require!("vcsim");
    let sim = Vcsim::start();
    let vm = "DC0_H0_VM0";
    let r = sim.run(&["status"], vm);
    r.assert_code(0);
    assert!(r.stdout.contains(": on"), "{r}");

    let r = sim.run(&["off"], vm);
    r.assert_code(0)
        .assert_mentions(&["powered off (confirmed)"]);
    assert_eq!(sim.power(vm), "poweredOff");
    // Off: status exits 2 (docs/design.md's exit table).
    let r = sim.run(&["status"], vm);
    r.assert_code(2);
    assert!(r.stdout.contains(": off"), "{r}");
    let offs = sim.calls("PowerOffVM_Task");
    sim.run(&["off"], vm)
        .assert_code(0)
        .assert_mentions(&["already off"]);
    assert_eq!(
        sim.calls("PowerOffVM_Task"),
        offs,
        "already off: nothing sent"
    );

    sim.run(&["on"], vm)
        .assert_code(0)
        .assert_mentions(&["powered on (confirmed)"]);
    assert_eq!(sim.power(vm), "poweredOn");
    let ons = sim.calls("PowerOnVM_Task");
    sim.run(&["on"], vm)
        .assert_code(0)
        .assert_mentions(&["already on"]);
    assert_eq!(sim.calls("PowerOnVM_Task"), ons);

    sim.run(&["reboot"], vm)
        .assert_code(0)
        .assert_mentions(&["off confirmed, then on confirmed"]);
    assert_eq!(sim.power(vm), "poweredOn");
    assert_eq!(sim.calls("PowerOnVM_Task"), ons + 1);
    // Every session logged out.
    assert_eq!(sim.calls("Login"), sim.calls("Logout"));
}

#[test]
fn a_suspended_vm_is_on_and_off_leaves_it_powered_off() {
    require!("vcsim");
    let sim = Vcsim::start();
    let vm = "DC0_C0_RP0_VM0";
    sim.control("POST", &format!("vm?vm={vm}&power=suspended"));
    let r = sim.run(&["status"], vm);
    r.assert_code(0).assert_mentions(&["is suspended"]);
    assert!(r.stdout.contains(": on"), "suspended counts as on: {r}");
    let r = sim.run(&["off"], vm);
    r.assert_code(0)
        .assert_mentions(&["powered off (confirmed)"]);
    assert_eq!(sim.power(vm), "poweredOff");
    assert_eq!(sim.calls("PowerOffVM_Task"), 1);
}

#[test]
fn a_vm_whose_host_stopped_reporting_is_never_off_and_the_host_is_named() {
    require!("vcsim");
    let sim = Vcsim::start();
    // DC0_C0_H0 runs DC0_C0_RP0_VM1 (the peer's inventory).
    let vm = "DC0_C0_RP0_VM1";
    let host = sim.vm(vm)["host_name"].as_str().unwrap().to_string();
    for state in ["disconnected", "notResponding"] {
        sim.control("POST", &format!("host?host={host}&connection={state}"));
        let r = sim.run(&["status"], vm);
        r.assert_code(1).assert_mentions(&[&format!("host {host}")]);
        assert!(r.text().contains(&state.to_lowercase()), "{r}");
        assert!(r.text().contains("not evidence"), "{r}");
        let r = sim.run(&["off"], vm);
        r.assert_code(1).assert_mentions(&[&format!("host {host}")]);
        assert!(!r.text().contains("powered off"), "{r}");
        assert_eq!(
            sim.calls("PowerOffVM_Task"),
            0,
            "nothing sent to a stale vm"
        );
    }
    // The host back: fenced as usual.
    sim.control("POST", &format!("host?host={host}&connection=connected"));
    sim.run(&["off"], vm).assert_code(0);
    assert_eq!(sim.power(vm), "poweredOff");
}

#[test]
fn a_wrong_expected_uuid_changes_nothing_and_either_uuid_matches() {
    require!("vcsim");
    let sim = Vcsim::start();
    let vm = "DC1_H0_VM0";
    let info = sim.vm(vm);
    let r = sim.run(
        &[
            "off",
            "--expect-uuid",
            "00112233-4455-6677-8899-aabbccddeeff",
        ],
        vm,
    );
    r.assert_code(1)
        .assert_mentions(&["no power command was sent"]);
    assert!(r.text().contains(info["uuid"].as_str().unwrap()), "{r}");
    assert_eq!(sim.power(vm), "poweredOn");
    assert_eq!(sim.calls("PowerOffVM_Task"), 0);

    // The BIOS UUID (the guest's SMBIOS UUID) and the instance UUID both pin it.
    let bios = info["uuid"].as_str().unwrap().to_uppercase();
    sim.run(&["off", "--expect-uuid", &bios], vm).assert_code(0);
    assert_eq!(sim.power(vm), "poweredOff");
    let instance = info["instance_uuid"].as_str().unwrap();
    sim.run(&["on", "--expect-uuid", instance], vm)
        .assert_code(0);
    assert_eq!(sim.power(vm), "poweredOn");
    // The BIOS UUID as a guest reading SMBIOS in the other byte order sees it.
    let b = info["uuid"].as_str().unwrap().replace('-', "");
    let swapped = format!(
        "{}{}{}{}-{}{}-{}{}-{}-{}",
        &b[6..8],
        &b[4..6],
        &b[2..4],
        &b[0..2],
        &b[10..12],
        &b[8..10],
        &b[14..16],
        &b[12..14],
        &b[16..20],
        &b[20..32]
    );
    sim.run(&["off", "--expect-uuid", &swapped], vm)
        .assert_code(0);
    assert_eq!(sim.power(vm), "poweredOff");
}

#[test]
fn vms_are_named_by_name_uuid_instance_or_moref_and_ambiguous_names_refused() {
    require!("vcsim");
    let sim = Vcsim::start();
    // The peer names one VM of each datacenter "twin".
    let r = sim.run(&["status"], "twin");
    r.assert_code(1)
        .assert_mentions(&["2 virtual machines have name 'twin'"]);
    let twins: Vec<Value> = sim
        .control("GET", "vms")
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["name"] == "twin")
        .cloned()
        .collect();
    assert_eq!(twins.len(), 2);
    for t in &twins {
        assert!(
            r.text()
                .contains(&format!("moref:{}", t["moref"].as_str().unwrap())),
            "{r}"
        );
    }
    assert_eq!(sim.calls("PowerOffVM_Task"), 0);
    // A datacenter narrows the search: the twin of DC1 alone.
    let dc1 = twins.iter().find(|t| t["datacenter"] == "DC1").unwrap();
    sim.run(&["off"], "twin?datacenter=DC1").assert_code(0);
    let now: Vec<Value> = sim.control("GET", "vms").as_array().unwrap().clone();
    for t in now.iter().filter(|v| v["name"] == "twin") {
        let expect = if t["moref"] == dc1["moref"] {
            "poweredOff"
        } else {
            "poweredOn"
        };
        assert_eq!(t["power"], expect, "{t}");
    }
    sim.run(&["status"], "twin?datacenter=DC7")
        .assert_code(1)
        .assert_mentions(&["no datacenter at the inventory path 'dc7'"]);
    // The other selectors.
    let m = dc1["moref"].as_str().unwrap();
    for sel in [
        format!("moref:{m}"),
        format!("uuid:{}", dc1["uuid"].as_str().unwrap()),
        format!("instance:{}", dc1["instance_uuid"].as_str().unwrap()),
    ] {
        let r = sim.run(&["status"], &sel);
        r.assert_code(2);
    }
    sim.run(&["status"], "no-such-vm")
        .assert_code(1)
        .assert_mentions(&["no virtual machine with name 'no-such-vm'"]);
    // A bad target is a usage error before anything is contacted.
    let r = fencekit(&["status", "vsphere://127.0.0.1/uuid:nope"], PASSWORD);
    r.assert_code(64).assert_mentions(&["is not a uuid"]);
}

#[test]
fn wrong_password_untrusted_certificate_fingerprint_and_insecure() {
    require!("vcsim");
    let sim = Vcsim::start();
    let vm = "DC0_H0_VM0";
    let t = sim.target(vm);
    let r = fencekit(&["status", &t, "--ca-cert", sim.cert()], "wrong");
    r.assert_code(1).assert_mentions(&["invalidlogin"]);
    assert!(!r.text().contains("wrong"), "no secret in the output: {r}");
    let r = fencekit(&["status", &t], PASSWORD);
    r.assert_code(1)
        .assert_mentions(&["vcenter's certificate is not trusted"]);
    let fp = format!(
        "SHA256:{}",
        sim.info["fingerprint"].as_str().unwrap().replace(':', "")
    );
    fencekit(&["status", &t, "--ssl-fingerprint", &fp], PASSWORD).assert_code(0);
    let other = format!("SHA256:{}", "00".repeat(32));
    fencekit(&["status", &t, "--ssl-fingerprint", &other], PASSWORD)
        .assert_code(1)
        .assert_mentions(&["not the pinned"]);
    fencekit(&["status", &t, "--ssl-insecure"], PASSWORD)
        .assert_code(0)
        .assert_mentions(&["certificate is not verified (--ssl-insecure)"]);
    fencekit(
        &["status", &t, "--ssl-insecure", "--ca-cert", sim.cert()],
        PASSWORD,
    )
    .assert_code(64)
    .assert_mentions(&["only one of"]);
    assert_eq!(sim.calls("PowerOffVM_Task"), 0);
}

#[test]
fn a_lost_answer_is_found_again_never_sent_twice() {
    require!("vcsim");
    let sim = Vcsim::start();
    let vm = "DC0_H0_VM0";
    // The next PowerOffVM_Task is carried out and its answer lost.
    sim.control("POST", "soap?method=PowerOffVM_Task&drop=1");
    let r = sim.run(&["off"], vm);
    r.assert_code(0)
        .assert_mentions(&["powered off (confirmed)"]);
    assert!(r.text().contains("was lost"), "{r}");
    assert_eq!(sim.calls("PowerOffVM_Task"), 1, "sent once: {r}");
    assert_eq!(sim.power(vm), "poweredOff");
    // A reset (reboot --method cycle) whose answer is lost: found in the
    // VM's recent tasks and followed, never sent twice.
    sim.run(&["on"], vm).assert_code(0);
    sim.control("POST", "soap?method=ResetVM_Task&drop=1");
    let r = sim.run(&["reboot", "--method", "cycle"], vm);
    r.assert_code(3).assert_mentions(&["was lost"]);
    assert_eq!(
        sim.calls("ResetVM_Task"),
        1,
        "a reset is never re-sent: {r}"
    );
    assert_eq!(sim.power(vm), "poweredOn");
}

#[test]
fn inventory_driver_vsphere_and_verify_says_bmc_only() {
    require!("vcsim");
    let sim = Vcsim::start();
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv.toml");
    let pw = dir.path().join("pw");
    std::fs::write(&pw, PASSWORD).unwrap();
    // One node by endpoint, one by ip and plug.
    std::fs::write(
        &inv,
        format!(
            "[[node]]\nname = \"guest-1\"\n  [[node.fence]]\n  driver = \"vsphere\"\n  \
             endpoint = \"vsphere://fence@127.0.0.1:{port}/DC0_C0_RP0_VM1\"\n  \
             ca_cert = \"{cert}\"\n  password_file = \"{pw}\"\n\
             [[node]]\nname = \"guest-2\"\n  [[node.fence]]\n  driver = \"vsphere\"\n  \
             ip = \"127.0.0.1\"\n  ipport = {port}\n  plug = \"DC1_C0_RP0_VM0\"\n  \
             username = \"fence\"\n  ca_cert = \"{cert}\"\n  password_file = \"{pw}\"\n",
            port = sim.port,
            cert = sim.cert(),
            pw = pw.display()
        ),
    )
    .unwrap();
    let inv = inv.to_str().unwrap();
    for (node, vm) in [("guest-1", "DC0_C0_RP0_VM1"), ("guest-2", "DC1_C0_RP0_VM0")] {
        let r = fencekit(&["off", node, "--inventory", inv], "");
        r.assert_code(0)
            .assert_mentions(&["powered off (confirmed)"]);
        assert_eq!(sim.power(vm), "poweredOff");
    }
    // vCenter alone is the device's own view: bmc-only, never proven.
    let r = support::run(
        support::fencekit_cmd(&["verify", "guest-1", "--inventory", inv], ""),
        Duration::from_secs(60),
    );
    r.assert_code(3).assert_mentions(&["bmc only"]);
    assert!(r.text().contains("the hypervisor reports power off"), "{r}");
    // check --record keeps the VM's moref and instance UUID; the same VMs
    // checked again drift nothing.
    let base = dir.path().join("baseline.toml");
    let base = base.to_str().unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--all", "--inventory", inv, "--baseline", base];
        args.extend_from_slice(extra);
        support::run(support::fencekit_cmd(&args, ""), Duration::from_secs(60))
    };
    check(&["--record"]).assert_code(0);
    let recorded = std::fs::read_to_string(base).unwrap();
    for key in ["vm = \"vm-", "instance_uuid = \"", "bios_uuid = \""] {
        assert!(
            recorded.contains(key),
            "{key} not in the baseline:\n{recorded}"
        );
    }
    check(&[]).assert_code(0);
}

#[test]
fn list_shows_every_vm_by_moref_and_a_stale_one_with_its_host() {
    require!("vcsim");
    let sim = Vcsim::start();
    let stale = sim.vm("DC0_C0_RP0_VM1");
    let host = stale["host_name"].as_str().unwrap().to_string();
    sim.control("POST", &format!("host?host={host}&connection=disconnected"));
    let r = sim.run(&["list"], "any");
    r.assert_code(0);
    let vms = sim.control("GET", "vms");
    for v in vms.as_array().unwrap() {
        let row = r
            .stdout
            .lines()
            .find(|l| l.contains(&format!("/moref:{} ", v["moref"].as_str().unwrap())))
            .unwrap_or_else(|| panic!("no row for {v}\n{r}"));
        assert!(row.contains(v["uuid"].as_str().unwrap()), "{row}");
        if v["moref"] == stale["moref"] {
            assert!(row.contains(&format!("host {host}")), "{row}");
        } else {
            assert!(row.contains(" on "), "{row}");
        }
    }
    // A datacenter narrows the list.
    let r = sim.run(&["list"], "any?datacenter=DC1");
    r.assert_code(0);
    assert!(!r.stdout.contains("DC0_"), "{r}");
    assert!(r.stdout.contains("DC1_H0_VM0"), "{r}");
    assert_eq!(sim.calls("Login"), sim.calls("Logout"));
}
