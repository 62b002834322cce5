//! Identity pinning through the real binary: the right machine is fenced,
//! any other is refused before a single power command (the simulated
//! machine's power and command log are asserted unchanged), over IPMI,
//! Redfish and SSH (virsh), natively and as `fence_ipmilan`,
//! `fence_redfish` and `fence_virsh`; levels stop at a wrong machine;
//! `check` reports identities and `check --record-identity` pins a rack.
//!
//! The lab runs in this process (on a thread of its own), so its chassis
//! can be read directly; the SSH cases use the real OpenSSH peer and
//! libvirt's virsh (`tests/peers/sshd_start.sh`).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{bin, serial, Sshd, SSH_PASS, SSH_USER};

/// `fencekit ARGS…` with a clean environment and runtime directory `dir`.
fn fk(dir: &Path, args: &[&str]) -> support::Run {
    let mut c = Command::new(bin());
    c.args(args)
        .env("NO_COLOR", "1")
        .env("XDG_RUNTIME_DIR", dir)
        .env("HOME", dir)
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("FENCEKIT_AUDIT")
        .env_remove("SSH_AUTH_SOCK");
    support::run(c, Duration::from_secs(60))
}

/// The binary under an agent name (a symlink in `dir`).
fn agent(dir: &Path, name: &str, args: &[String]) -> support::AgentOut {
    let link = dir.join(name);
    if !link.exists() {
        std::os::unix::fs::symlink(bin(), &link).unwrap();
    }
    support::exec_agent(&link, args, None, Duration::from_secs(60))
}

fn timeline_identity(result: &serde_json::Value) -> serde_json::Value {
    result["timeline"]
        .as_array()
        .and_then(|t| t.iter().find(|e| e["event"] == "identity").cloned())
        .unwrap_or(serde_json::Value::Null)
}

// ------------------------------------------------------------- SSH (virsh) --

/// The UUIDs of the peer's domains (tests/peers/target/node.xml).
const NODE1_UUID: &str = "00000000-0000-4000-8000-000000000001";
const NODE2_UUID: &str = "00000000-0000-4000-8000-000000000002";

#[test]
fn virsh_domains_are_pinned_by_their_domuuid() {
    let _one = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (key, kh) = (s.key(), s.known_hosts());
    let (key, kh) = (key.to_str().unwrap(), kh.to_str().unwrap());
    let url = format!("ssh://{SSH_USER}@127.0.0.1:{}/virsh/node1", s.port);
    s.ssh("virsh start node1 >/dev/null 2>&1; true");
    let base = ["-k", key, "--ssh-known-hosts", kh, "-o", "json"];

    // node2's UUID on node1's plug: refused, node1 keeps running.
    let mut args = vec!["off", url.as_str(), "--expect-uuid", NODE2_UUID];
    args.extend(base);
    let r = fk(d, &args);
    r.assert_code(1);
    let res = &r.json()["results"][0];
    assert_eq!(res["error_kind"], "identity-mismatch", "{r}");
    let e = res["error"].as_str().unwrap();
    assert!(
        e.contains(&format!(
            "expected uuid {NODE2_UUID}, found {NODE1_UUID} (as reported)"
        )) && e.contains("(during identity check)"),
        "{e}"
    );
    let ev = timeline_identity(res);
    assert_eq!(ev["matched"], false, "{r}");
    assert_eq!(ev["found"]["uuid"][0]["uuid"], NODE1_UUID);
    assert!(
        !res["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["event"] == "state-observed" || e["event"] == "command-sent"),
        "nothing read or sent after the identity: {r}"
    );
    assert_eq!(s.domstate("node1"), "running");

    // Its own UUID (in another spelling): fenced.
    let upper = NODE1_UUID.to_uppercase().replace('-', "");
    let mut args = vec!["off", url.as_str(), "--expect-uuid", upper.as_str()];
    args.extend(base);
    let r = fk(d, &args);
    r.assert_code(0);
    assert_eq!(timeline_identity(&r.json()["results"][0])["matched"], true);
    assert_eq!(s.domstate("node1"), "shut off");

    // As fence_virsh: the extra option, on the command line and on stdin.
    s.ssh("virsh start node1 >/dev/null 2>&1; true");
    let common = |extra: &[&str]| {
        let mut a: Vec<String> = vec![
            "--ip=127.0.0.1".into(),
            format!("--ipport={}", s.port),
            format!("--username={SSH_USER}"),
            format!("--password={SSH_PASS}"),
            format!("--ssh-known-hosts={kh}"),
            "--plug=node1".into(),
        ];
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let o = agent(
        d,
        "fence_virsh",
        &common(&["-o", "off", &format!("--expect-uuid={NODE2_UUID}")]),
    );
    assert_eq!((o.code, o.stdout.as_str()), (Some(1), ""), "{o:?}");
    assert!(
        o.stderr
            .contains("Failed: The device controls a different machine than --expect-uuid names"),
        "{}",
        o.stderr
    );
    assert_eq!(s.domstate("node1"), "running");
    let o = agent(
        d,
        "fence_virsh",
        &common(&["-o", "off", &format!("--expect-uuid={NODE1_UUID}")]),
    );
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(0), "Success: Powered OFF\n"),
        "{o:?}"
    );
    assert_eq!(s.domstate("node1"), "shut off");

    // check reads the domain's identity; the host profile reports none.
    let r = fk(
        d,
        &[
            "check",
            &url,
            "-k",
            key,
            "--ssh-known-hosts",
            kh,
            "-o",
            "json",
        ],
    );
    r.assert_code(0);
    assert_eq!(
        r.json()["checks"][0]["identity"]["uuid"][0]["uuid"],
        NODE1_UUID,
        "{r}"
    );
    let host = format!("ssh://{SSH_USER}@127.0.0.1:{}/host", s.port);
    let r = fk(
        d,
        &[
            "status",
            &host,
            "-k",
            key,
            "--ssh-known-hosts",
            kh,
            "--expect-uuid",
            NODE1_UUID,
        ],
    );
    r.assert_code(1);
    assert!(
        r.stderr.contains("does not report a system uuid") && r.stderr.contains("identity check"),
        "{r}"
    );
}

// ------------------------------------------------------------ usage errors --

#[test]
fn an_expected_identity_names_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inv = d.join("inv.toml");
    std::fs::write(
        &inv,
        "[[node]]\nname = \"a\"\n[[node.fence]]\nendpoint = \"ipmi://127.0.0.1:1\"\n",
    )
    .unwrap();
    let inv = inv.to_str().unwrap();
    let u = "4c414230-0000-4001-8000-fe0000000001";
    for args in [
        vec![
            "off",
            "ipmi://127.0.0.1:1",
            "ipmi://127.0.0.1:2",
            "--expect-uuid",
            u,
        ],
        vec!["off", "-i", inv, "a", "--expect-uuid", u],
        vec!["off", "-i", inv, "--all", "--expect-serial", "S1"],
    ] {
        let r = fk(d, &args);
        r.assert_code(64);
        assert!(r.stderr.contains("name one machine"), "{args:?}: {r}");
    }
    let r = fk(d, &["off", "ipmi://127.0.0.1:1", "--expect-uuid", "node01"]);
    r.assert_code(64);
    assert!(r.stderr.contains("'node01' is not a UUID"), "{r}");

    // --dry-run shows the pin and contacts nothing.
    let r = fk(
        d,
        &[
            "off",
            "ipmi://127.0.0.1:1",
            "--expect-uuid",
            u,
            "--expect-serial",
            "S1",
            "--dry-run",
        ],
    );
    r.assert_code(0);
    assert!(
        r.stdout
            .contains(&format!("pinned to uuid {u} and serial S1")),
        "{r}"
    );
}

/// An inventory of SSH levels on the peer (password from a file).
fn ssh_inventory(d: &Path, s: &Sshd, body: &str) -> PathBuf {
    let pw = d.join("pw");
    std::fs::write(&pw, SSH_PASS).unwrap();
    let inv = d.join("inv.toml");
    std::fs::write(
        &inv,
        format!(
            "[defaults]\npassword_file = \"{}\"\nssh_known_hosts = \"{}\"\n\n{body}",
            pw.display(),
            s.known_hosts().display()
        ),
    )
    .unwrap();
    inv
}

#[test]
fn levels_stop_at_a_wrong_machine_and_check_pins_a_rack() {
    let _one = serial();
    let Some(s) = Sshd::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dom = |name: &str| format!("ssh://{SSH_USER}@127.0.0.1:{}/virsh/{name}", s.port);
    s.ssh("virsh start node1 >/dev/null 2>&1; virsh start node2 >/dev/null 2>&1; true");

    // vm1 is node1; level 1 points at node2 by mistake (a swapped plug),
    // level 2 at node1. Level 2 must not be tried: the configuration is wrong.
    let inv = ssh_inventory(
        d,
        &s,
        &format!(
            "[[node]]\nname = \"vm1\"\nuuid = \"{NODE1_UUID}\"\n\
             [[node.fence]]\nendpoint = \"{}\"\n[[node.fence]]\nendpoint = \"{}\"\n",
            dom("node2"),
            dom("node1")
        ),
    );
    let audit = d.join("audit.jsonl");
    let (inv_s, audit_s) = (inv.to_str().unwrap(), audit.to_str().unwrap());
    let r = fk(
        d,
        &["off", "-i", inv_s, "vm1", "-o", "json", "--audit", audit_s],
    );
    r.assert_code(1);
    let res = &r.json()["results"][0];
    assert_eq!(res["error_kind"], "identity-mismatch", "{r}");
    assert_eq!(res["level"], 1, "{r}");
    let e = res["error"].as_str().unwrap();
    assert!(
        e.contains("the configuration of node vm1 is wrong") && e.contains("level(s) 2 not tried"),
        "{e}"
    );
    assert_eq!(s.domstate("node1"), "running", "level 2 was not tried");
    assert_eq!(
        s.domstate("node2"),
        "running",
        "the wrong machine is untouched"
    );
    let rec: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&audit)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(rec["error_kind"], "identity-mismatch");
    assert_eq!(rec["evidence"]["identity"]["matched"], false, "{rec}");
    assert_eq!(rec["evidence"]["identity"]["expected"]["uuid"], NODE1_UUID);
    assert_eq!(
        rec["evidence"]["identity"]["found"]["uuid"][0]["uuid"],
        NODE2_UUID
    );
    assert_eq!(rec["evidence"]["commands"], serde_json::json!([]));

    // check flags the node whose levels name two machines, and records nothing for it.
    let unpinned = ssh_inventory(
        d,
        &s,
        &format!(
            "[[node]]\nname = \"vm1\"\n[[node.fence]]\nendpoint = \"{}\"\n\
             [[node.fence]]\nendpoint = \"{}\"\n\n\
             [[node]]\nname = \"vm2\"\n[[node.fence]]\nendpoint = \"{}\"\n",
            dom("node1"),
            dom("node2"),
            dom("node2"),
        ),
    );
    let r = fk(
        d,
        &[
            "check",
            "-i",
            unpinned.to_str().unwrap(),
            "--all",
            "--record-identity",
        ],
    );
    r.assert_code(1);
    assert!(
        r.stderr.contains("level 1 (") && r.stderr.contains("report different machines"),
        "{r}"
    );
    // vm2's only level is the machine vm1's level 2 reports: two nodes
    // claim one machine, which check flags too.
    assert!(
        r.stderr.contains("node vm1 level 2 (")
            && r.stderr
                .contains("report the same machine (uuid 00000000-0000-4000-8000-000000000002)"),
        "{r}"
    );
    assert!(r.stderr.contains("not recorded: vm1:"), "{r}");
    assert!(r.stderr.contains("not recorded: vm2:"), "{r}");
    assert!(!r.stdout.contains("[identity."), "{r}");

    // Round trip: record a correct inventory, append, fence with it.
    let good = ssh_inventory(
        d,
        &s,
        &format!(
            "[[node]]\nname = \"vm[1-2]\"\n[[node.fence]]\nendpoint = \"{}\"\n",
            dom("node[1-2]")
        ),
    );
    let good_s = good.to_str().unwrap();
    let r = fk(d, &["check", "-i", good_s, "--all", "--record-identity"]);
    r.assert_code(0);
    let mut text = std::fs::read_to_string(&good).unwrap();
    text.push_str(&r.stdout);
    std::fs::write(&good, &text).unwrap();
    assert!(
        text.contains(&format!("[identity.vm1]\nuuid = \"{NODE1_UUID}\"")),
        "{text}"
    );
    let r = fk(d, &["off", "-i", good_s, "vm1", "-o", "json"]);
    r.assert_code(0);
    assert_eq!(
        timeline_identity(&r.json()["results"][0])["matched"],
        true,
        "{r}"
    );
    assert_eq!(s.domstate("node1"), "shut off");
    // Recording again adds nothing: every node is pinned.
    let r = fk(d, &["check", "-i", good_s, "--all", "--record-identity"]);
    r.assert_code(0);
    assert!(!r.stdout.contains("[identity."), "{r}");

    // The plugs get swapped in the inventory: the pin refuses, nothing changes.
    std::fs::write(&good, text.replace("virsh/node[1-2]", "virsh/node[2,1]")).unwrap();
    let r = fk(d, &["off", "-i", good_s, "vm[1-2]", "-o", "json"]);
    r.assert_code(1);
    for res in r.json()["results"].as_array().unwrap() {
        assert_eq!(res["error_kind"], "identity-mismatch", "{r}");
    }
    assert_eq!(s.domstate("node1"), "shut off");
    assert_eq!(s.domstate("node2"), "running");
}
