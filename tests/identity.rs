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

use std::path::Path;
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
