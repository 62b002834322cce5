//! SSH through the native command line and an inventory, against the real
//! OpenSSH peer: `list`, levels, strict host keys by default.

mod support;

use std::process::Command;
use std::time::Duration;
use support::{bin, serial, Sshd, SSH_USER};

fn fk(dir: &std::path::Path, args: &[&str]) -> support::Run {
    let mut c = Command::new(bin());
    c.args(args)
        .env("NO_COLOR", "1")
        .env("XDG_RUNTIME_DIR", dir)
        .env("HOME", dir)
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("SSH_AUTH_SOCK");
    support::run(c, Duration::from_secs(60))
}

#[test]
fn ssh_targets_inventory_levels_and_host_keys() {
    let _one = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = s.key();
    let kh = s.known_hosts();
    let url = |dom: &str| format!("ssh://{SSH_USER}@127.0.0.1:{}/virsh/{dom}", s.port);
    let (key, kh) = (key.to_str().unwrap(), kh.to_str().unwrap());

    // list: the hypervisor's domains with their states
    let r = fk(
        d,
        &[
            "list",
            &url(""),
            "-k",
            key,
            "--ssh-known-hosts",
            kh,
            "-o",
            "json",
        ],
    );
    r.assert_code(0);
    let list = r.json()["list"].as_array().cloned().unwrap();
    let state = |n: &str| {
        list.iter()
            .find(|x| x["name"] == n)
            .map(|x| x["state"].clone())
    };
    assert_eq!(state("node1"), Some("on".into()), "{r}");
    assert_eq!(state("node2"), Some("off".into()), "{r}");

    // strict host keys by default: no known_hosts entry, no login
    let logins = || s.log().matches("Accepted publickey").count();
    let before = logins();
    let r = fk(d, &["status", &url("node1"), "-k", key]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("not known") && r.stderr.contains("SHA256:"),
        "{r}"
    );
    assert_eq!(
        logins(),
        before,
        "no credential was offered to an unknown host"
    );

    // an inventory: level 1 dead IPMI, level 2 the hypervisor
    let pw = d.join("pw");
    std::fs::write(&pw, "fencepass").unwrap();
    let inv = d.join("inv.toml");
    std::fs::write(
        &inv,
        format!(
            "[[node]]\nname = \"vm1\"\n\
             [[node.fence]]\nendpoint = \"ipmi://127.0.0.1:1\"\npassword_file = \"{pw}\"\n\
             [[node.fence]]\nendpoint = \"{u}\"\npassword_file = \"{pw}\"\nssh_known_hosts = \"{kh}\"\n",
            pw = pw.display(),
            u = url("node1"),
        ),
    )
    .unwrap();
    let inv = inv.to_str().unwrap();
    let r = fk(
        d,
        &[
            "off",
            "-i",
            inv,
            "vm1",
            "--login-timeout",
            "1s",
            "-o",
            "json",
        ],
    );
    r.assert_code(0);
    let res = &r.json()["results"][0];
    assert_eq!(res["method"], "ssh", "{r}");
    assert_eq!(res["level"], 2);
    assert_eq!(s.domstate("node1"), "shut off");
    let r = fk(d, &["on", "-i", inv, "vm1", "--level", "2"]);
    r.assert_code(0);
    assert_eq!(s.domstate("node1"), "running");
    let r = fk(d, &["off", "-i", inv, "vm1", "--dry-run"]);
    r.assert_code(0);
    assert!(
        r.stdout
            .contains("virsh profile, password, host key checked against"),
        "{r}"
    );
}

#[test]
fn rejoin_checks_record_a_baseline_and_report_drift() {
    let _one = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lab_inv = d.join("lab.toml");
    let lab = support::Lab::start(&[
        "--nodes",
        "1",
        "--write-inventory",
        lab_inv.to_str().unwrap(),
    ]);
    let node = &lab.nodes[0];
    let inv = d.join("inv.toml");
    std::fs::write(
        &inv,
        format!(
            "[[node]]\nname = \"n1\"\n\
             [[node.fence]]\nendpoint = \"ipmi://admin@{host}:{port}\"\npassword_file = \"{pw}.password\"\n\
             [node.ssh]\nendpoint = \"ssh://{SSH_USER}@127.0.0.1:{sp}/host\"\nidentity_file = \"{key}\"\nssh_known_hosts = \"{kh}\"\n\
             [[node.check]]\nname = \"power-config\"\ncommand = \"cat ~/state/node2\"\n\
             [[node.check]]\nname = \"kernel\"\ncommand = \"uname -sr\"\n",
            host = node.host,
            port = node.port,
            pw = lab_inv.display(),
            sp = s.port,
            key = s.key().display(),
            kh = s.known_hosts().display(),
        ),
    )
    .unwrap();
    let (inv, base) = (inv.to_str().unwrap().to_string(), d.join("baseline.json"));
    let base = base.to_str().unwrap();
    let verify = |extra: &[&str]| {
        let mut a = vec![
            "verify",
            "-i",
            &inv,
            "n1",
            "--expect",
            "on",
            "--samples",
            "1",
            "-o",
            "json",
        ];
        a.extend(extra);
        fk(d, &a)
    };
    let r = verify(&["--record-baseline", base]);
    r.assert_code(0);
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base).unwrap()).unwrap();
    assert!(
        recorded["n1"]["power-config"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{recorded}"
    );

    // after a reboot, proven on and no drift
    fk(d, &["reboot", "-i", &inv, "n1"]).assert_code(0);
    let r = verify(&["--baseline", base]);
    r.assert_code(0);
    let rep = &r.json()["results"][0];
    assert_eq!(rep["verdict"], "proven", "{r}");
    assert!(rep["reason"].as_str().unwrap().contains("no drift"), "{r}");

    // a changed file on the node is drift, named per check
    s.ssh("power on node2").assert_code(0);
    let r = verify(&["--baseline", base]);
    r.assert_code(3);
    let rep = &r.json()["results"][0];
    assert_eq!(rep["verdict"], "drift", "{r}");
    let checks = rep["checks"].as_array().unwrap();
    let drift = |n: &str| checks.iter().find(|c| c["name"] == n).unwrap()["drift"].clone();
    assert_eq!(drift("power-config"), true);
    assert_eq!(drift("kernel"), false);
}
