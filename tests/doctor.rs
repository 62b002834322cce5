//! `fencekit check --pacemaker --cib FILE` and `fencekit check --far FILE`
//! (the fencing configuration doctor) on configurations written here:
//! a correct two-node cluster, then each mistake on its own, with the
//! named finding and the exit code it must give. The devices are the
//! in-process lab's BMCs (IPMI), checked with the parameters the fencer
//! (or FAR) passes. The live CIB (`cibadmin -Q`) is checked in
//! tests/pacemaker.rs against the real cluster.

mod support;

use fencekit::lab::fleet::LabSpec;
use std::path::Path;
use std::time::Duration;
use support::{fencekit_cmd, run, InProcessLab, Run};

/// A stonith primitive for a lab node's BMC, fencing `hosts`, with extra
/// instance attributes.
fn device(id: &str, bmc: std::net::SocketAddr, password: &str, extra: &[(&str, &str)]) -> String {
    let mut attrs = vec![
        ("ip", bmc.ip().to_string()),
        ("ipport", bmc.port().to_string()),
        ("username", "admin".to_string()),
        ("password", password.to_string()),
        ("lanplus", "1".to_string()),
    ];
    attrs.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    let mut x = format!(
        "<primitive id=\"{id}\" class=\"stonith\" type=\"fence_ipmilan\">\
         <instance_attributes id=\"{id}-ia\">"
    );
    for (k, v) in attrs {
        x.push_str(&format!(
            "<nvpair id=\"{id}-{k}\" name=\"{k}\" value=\"{v}\"/>"
        ));
    }
    x.push_str(&format!(
        "</instance_attributes><operations><op id=\"{id}-mon\" name=\"monitor\" \
         interval=\"60s\" timeout=\"30s\"/></operations></primitive>"
    ));
    x
}

/// A two-node CIB: cluster properties, the devices, the topology.
fn cib(props: &[(&str, &str)], devices: &[String], levels: &str) -> String {
    let mut p = String::new();
    for (k, v) in props {
        p.push_str(&format!(
            "<nvpair id=\"p-{k}\" name=\"{k}\" value=\"{v}\"/>"
        ));
    }
    format!(
        "<cib><configuration><crm_config><cluster_property_set id=\"opts\">{p}\
         </cluster_property_set></crm_config>\
         <nodes><node id=\"1\" uname=\"node01\"/><node id=\"2\" uname=\"node02\"/></nodes>\
         <resources>{}</resources><fencing-topology>{levels}</fencing-topology>\
         </configuration><status/></cib>",
        devices.concat()
    )
}

/// `fencekit check --pacemaker --cib FILE ARGS… -o json`, bounded.
fn doctor(dir: &Path, xml: &str, args: &[&str]) -> Run {
    let path = dir.join("cib.xml");
    std::fs::write(&path, xml).unwrap();
    let mut a = vec![
        "check",
        "--pacemaker",
        "--cib",
        path.to_str().unwrap(),
        "-o",
        "json",
    ];
    a.extend(args);
    run(fencekit_cmd(&a, ""), Duration::from_secs(60))
}

/// The ids of the findings (and the subjects) in a JSON report.
fn findings(r: &Run) -> Vec<(String, String, String)> {
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r}"));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["subject"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn has(r: &Run, id: &str, severity: &str, subject: &str) -> bool {
    findings(r)
        .iter()
        .any(|(i, s, subj)| i == id && s == severity && subj == subject)
}

#[test]
fn the_pacemaker_doctor_names_each_mistake_and_passes_a_correct_cluster() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 2,
        ..LabSpec::default()
    });
    let (b1, b2) = (lab.nodes[0].ipmi, lab.nodes[1].ipmi);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = || {
        vec![
            device(
                "fk1",
                b1,
                "lab",
                &[("pcmk_host_list", "node01"), ("pcmk_delay_base", "5s")],
            ),
            device("fk2", b2, "lab", &[("pcmk_host_list", "node02")]),
        ]
    };
    let props = [("stonith-enabled", "true"), ("stonith-timeout", "90s")];

    // The correct configuration: no finding, both devices checked, exit 0.
    let r = doctor(d, &cib(&props, &good(), ""), &[]);
    r.assert_code(0);
    assert_eq!(findings(&r), vec![], "{r}");
    let v = r.json();
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 2, "{r}");
    assert!(devs.iter().all(|x| x["result"] == "ok"), "{r}");
    assert!(
        !r.stdout.contains("\"lab\""),
        "no password in the output: {r}"
    );

    // stonith-timeout below the device's worst case only (power_timeout=40:
    // 40 s login + (2 s power_wait + 40 s) off + the same on = 124 s > 90 s,
    // when every wait lasts its bound; a working BMC takes about 9 s):
    // advice with the arithmetic, exit 0.
    let mut devs = good();
    devs[1] = device(
        "fk2",
        b2,
        "lab",
        &[("pcmk_host_list", "node02"), ("power_timeout", "40")],
    );
    let r = doctor(d, &cib(&props, &devs, ""), &["--no-device-check"]);
    r.assert_code(0);
    assert!(
        has(&r, "stonith-timeout-below-worst-case", "advice", "fk2"),
        "{r}"
    );
    assert!(r.stdout.contains("= 124 s"), "{r}");
    // Below a working BMC's run (power_wait=50: 1 s + 2 × (50 s + 2 s) =
    // 105 s > 90 s): broken.
    devs[1] = device(
        "fk2",
        b2,
        "lab",
        &[("pcmk_host_list", "node02"), ("power_wait", "50")],
    );
    let r = doctor(d, &cib(&props, &devs, ""), &["--no-device-check"]);
    r.assert_code(1);
    assert!(has(&r, "stonith-timeout-too-short", "broken", "fk2"), "{r}");
    assert!(r.stdout.contains("takes about 105 s"), "{r}");
    // The same under Pacemaker 3.0.2's name of the property.
    let props3 = [("fencing-enabled", "true"), ("fencing-timeout", "90s")];
    let r = doctor(d, &cib(&props3, &devs, ""), &["--no-device-check"]);
    r.assert_code(1);
    assert!(has(&r, "stonith-timeout-too-short", "broken", "fk2"), "{r}");
    assert!(r.stdout.contains("fencing-timeout = 90 s"), "{r}");
    // fencing-timeout wins over stonith-timeout (3.0.2's rule), and the
    // doctor says both are set.
    let both = [("fencing-timeout", "200s"), ("stonith-timeout", "90s")];
    let r = doctor(d, &cib(&both, &devs, ""), &["--no-device-check"]);
    assert!(
        !has(&r, "stonith-timeout-too-short", "broken", "fk2"),
        "{r}"
    );
    assert!(has(&r, "property-both-names", "advice", "cluster"), "{r}");
    // ... but a cluster before 3.0.2 ignores fencing-timeout.
    let old = [
        ("fencing-timeout", "200s"),
        ("stonith-timeout", "90s"),
        ("dc-version", "2.1.5-a3f44794f94"),
    ];
    let r = doctor(d, &cib(&old, &devs, ""), &["--no-device-check"]);
    assert!(has(&r, "stonith-timeout-too-short", "broken", "fk2"), "{r}");
    assert!(has(&r, "property-name-ignored", "advice", "cluster"), "{r}");
    // fencing-enabled=false is stonith-enabled=false.
    let r = doctor(
        d,
        &cib(&[("fencing-enabled", "false")], &good(), ""),
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(has(&r, "stonith-disabled", "broken", "cluster"), "{r}");
    // ... and fixed by the device's own pcmk_reboot_timeout.
    devs[1] = device(
        "fk2",
        b2,
        "lab",
        &[
            ("pcmk_host_list", "node02"),
            ("power_timeout", "40"),
            ("pcmk_reboot_timeout", "130s"),
        ],
    );
    let r = doctor(d, &cib(&props, &devs, ""), &["--no-device-check"]);
    assert!(
        !has(&r, "stonith-timeout-too-short", "broken", "fk2"),
        "{r}"
    );
    // Summed over a level: two 64 s devices in one level exceed 90 s only
    // at their worst (advice); with power_wait=25 each working device takes
    // 55 s, 110 s together (broken).
    let level = "<fencing-level id=\"lv\" index=\"1\" target=\"node02\" devices=\"fk1,fk2\"/>";
    let r = doctor(d, &cib(&props, &good(), level), &["--no-device-check"]);
    r.assert_code(0);
    assert!(
        has(&r, "stonith-timeout-below-worst-case", "advice", "level lv"),
        "{r}"
    );
    let slow: Vec<String> = good()
        .iter()
        .map(|x| {
            x.replace(
                "</instance_attributes>",
                "<nvpair id=\"pw\" name=\"power_wait\" value=\"25\"/></instance_attributes>",
            )
        })
        .collect();
    let r = doctor(d, &cib(&props, &slow, level), &["--no-device-check"]);
    r.assert_code(1);
    assert!(
        has(&r, "stonith-timeout-too-short", "broken", "level lv"),
        "{r}"
    );

    // A node no device claims (a typo in pcmk_host_list).
    let mut devs = good();
    devs[1] = device("fk2", b2, "lab", &[("pcmk_host_list", "node2")]);
    let r = doctor(d, &cib(&props, &devs, ""), &["--no-device-check"]);
    r.assert_code(1);
    assert!(has(&r, "host-not-covered", "broken", "node02"), "{r}");
    assert!(has(&r, "host-unknown", "advice", "fk2"), "{r}");
    // pcmk_host_map claims too.
    devs[1] = device("fk2", b2, "lab", &[("pcmk_host_map", "node02:2")]);
    let r = doctor(d, &cib(&props, &devs, ""), &["--no-device-check"]);
    r.assert_code(0);

    // A topology level naming a missing device.
    let r = doctor(
        d,
        &cib(
            &props,
            &good(),
            "<fencing-level id=\"lv1\" index=\"1\" target=\"node01\" devices=\"fk1\"/>\
             <fencing-level id=\"lv2\" index=\"2\" target-pattern=\"node0[0-9]\" devices=\"fk-gone\"/>",
        ),
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(
        has(&r, "level-names-missing-device", "broken", "level lv2"),
        "{r}"
    );

    // Two nodes, no delay anywhere.
    let devs = vec![
        device("fk1", b1, "lab", &[("pcmk_host_list", "node01")]),
        device("fk2", b2, "lab", &[("pcmk_host_list", "node02")]),
    ];
    let r = doctor(d, &cib(&props, &devs, ""), &["--no-device-check"]);
    r.assert_code(4);
    assert!(has(&r, "fence-race-no-delay", "weakened", "cluster"), "{r}");

    // priority-fencing-delay below twice pcmk_delay_max.
    let devs = vec![
        device(
            "fk1",
            b1,
            "lab",
            &[("pcmk_host_list", "node01"), ("pcmk_delay_max", "15s")],
        ),
        device("fk2", b2, "lab", &[("pcmk_host_list", "node02")]),
    ];
    let mut p = props.to_vec();
    p.push(("priority-fencing-delay", "20s"));
    let r = doctor(d, &cib(&p, &devs, ""), &["--no-device-check"]);
    r.assert_code(4);
    assert!(
        has(&r, "priority-delay-too-short", "weakened", "cluster"),
        "{r}"
    );
    p.pop();
    p.push(("priority-fencing-delay", "30s"));
    let r = doctor(d, &cib(&p, &devs, ""), &["--no-device-check"]);
    r.assert_code(0);

    // stonith-watchdog-timeout below SBD_WATCHDOG_TIMEOUT; then twice it.
    let sbd = d.join("sbd");
    std::fs::write(&sbd, "SBD_DEVICE=\nSBD_WATCHDOG_TIMEOUT=\"10\"\n").unwrap();
    let mut p = props.to_vec();
    p.push(("stonith-watchdog-timeout", "5s"));
    let sbd_arg = ["--no-device-check", "--sbd-config", sbd.to_str().unwrap()];
    let r = doctor(d, &cib(&p, &good(), ""), &sbd_arg);
    r.assert_code(1);
    assert!(
        has(&r, "watchdog-timeout-below-sbd", "broken", "cluster"),
        "{r}"
    );
    p.pop();
    p.push(("stonith-watchdog-timeout", "20s"));
    let r = doctor(d, &cib(&p, &good(), ""), &sbd_arg);
    r.assert_code(0);

    // stonith-enabled=false.
    let r = doctor(
        d,
        &cib(&[("stonith-enabled", "false")], &good(), ""),
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(has(&r, "stonith-disabled", "broken", "cluster"), "{r}");

    // A monitor timeout shorter than the device's monitor.
    let mut devs = good();
    devs[1] = device("fk2", b2, "lab", &[("pcmk_host_list", "node02")])
        .replace("timeout=\"30s\"", "timeout=\"10s\"");
    let r = doctor(d, &cib(&props, &devs, ""), &["--no-device-check"]);
    // Below its 20 s login bound only: advice.
    r.assert_code(0);
    assert!(
        has(&r, "monitor-timeout-below-worst-case", "advice", "fk2"),
        "{r}"
    );
    // Below a working BMC's 1 s login: every monitor is killed.
    devs[1] = devs[1].replace("timeout=\"10s\"", "timeout=\"500ms\"");
    let r = doctor(d, &cib(&props, &devs, ""), &["--no-device-check"]);
    r.assert_code(4);
    assert!(
        has(&r, "monitor-timeout-too-short", "weakened", "fk2"),
        "{r}"
    );

    // An agent fencekit does not implement: listed as not checked.
    let mut devs = good();
    devs.push(
        "<primitive id=\"scsi\" class=\"stonith\" type=\"fence_scsi\">\
         <instance_attributes id=\"s\"><nvpair id=\"s1\" name=\"pcmk_host_list\" \
         value=\"node01 node02\"/></instance_attributes></primitive>"
            .to_string(),
    );
    let r = doctor(d, &cib(&props, &devs, ""), &[]);
    assert!(has(&r, "agent-not-checked", "advice", "scsi"), "{r}");
    let v = r.json();
    assert!(
        v["devices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["device"] == "scsi" && x["result"] == "not-checked"),
        "{r}"
    );

    // A device whose BMC password is wrong: checked with the fencer's
    // parameters, refused, nothing switched.
    let mut devs = good();
    devs[1] = device("fk2", b2, "wrong-one", &[("pcmk_host_list", "node02")]);
    let r = doctor(d, &cib(&props, &devs, ""), &[]);
    r.assert_code(1);
    assert!(
        has(&r, "device-auth-failed", "broken", "fk2 for node02"),
        "{r}"
    );
    assert!(!r.stdout.contains("wrong-one"), "{r}");
    assert!(
        lab.nodes.iter().all(|n| n.bmc.is_on()),
        "nothing powered off"
    );

    // The same report as a table and as OpenMetrics.
    let path = d.join("cib.xml");
    let r = run(
        fencekit_cmd(
            &["check", "--pacemaker", "--cib", path.to_str().unwrap()],
            "",
        ),
        Duration::from_secs(60),
    );
    r.assert_code(1);
    assert!(
        r.stdout
            .contains("broken   device-auth-failed [fk2 for node02]"),
        "{r}"
    );
    assert!(r.stdout.contains("fix: "), "{r}");
    let r = run(
        fencekit_cmd(
            &[
                "check",
                "--pacemaker",
                "--cib",
                path.to_str().unwrap(),
                "-o",
                "openmetrics",
            ],
            "",
        ),
        Duration::from_secs(60),
    );
    r.assert_code(1);
    assert!(
        r.stdout.contains(
            "fencekit_config_finding{source=\"pacemaker\",id=\"device-auth-failed\",\
             severity=\"broken\",subject=\"fk2 for node02\"} 1"
        ),
        "{r}"
    );
    assert!(
        r.stdout
            .contains("fencekit_config_findings{source=\"pacemaker\",severity=\"broken\"} 1"),
        "{r}"
    );
    assert!(r.stdout.contains("fencekit_config_device_ok{source=\"pacemaker\",device=\"fk1\",node=\"node01\",agent=\"fence_ipmilan\"} 1"), "{r}");
    assert!(r.stdout.ends_with("# EOF\n"), "{r}");

    // Unreadable input: a usage error.
    let r = doctor(d, "<cib><oops", &[]);
    r.assert_code(64);
}

/// A FenceAgentsRemediationTemplate for the lab's two nodes (written from
/// FAR's API types: spec.template.spec with agent, sharedparameters,
/// nodeparameters, sharedSecretName, retrycount, retryinterval, timeout),
/// its shared Secret (data, base64), and the nodes.
fn far_template(
    b1: std::net::SocketAddr,
    b2: std::net::SocketAddr,
    extra_shared: &str,
    timeout: &str,
) -> String {
    format!(
        "apiVersion: fence-agents-remediation.medik8s.io/v1alpha1
kind: FenceAgentsRemediationTemplate
metadata:
  name: lab
  namespace: far
spec:
  template:
    spec:
      agent: fence_ipmilan
      sharedparameters:
        --username: admin
        --lanplus: \"\"
        --action: reboot
{extra_shared}      nodeparameters:
        --ip:
          node01: \"{}\"
          node02: \"{}\"
        --ipport:
          node01: \"{}\"
          node02: \"{}\"
      sharedSecretName: lab-credentials
      retrycount: 5
      retryinterval: 5s
      timeout: {timeout}
      remediationStrategy: OutOfServiceTaint
",
        b1.ip(),
        b2.ip(),
        b1.port(),
        b2.port()
    )
}

fn far_secret(password: &str) -> String {
    use base64::Engine as _;
    format!(
        "apiVersion: v1
kind: Secret
metadata:
  name: lab-credentials
  namespace: far
type: Opaque
data:
  --password: {}
",
        base64::engine::general_purpose::STANDARD.encode(password)
    )
}

fn far(dir: &Path, template: &str, secret: &str, nodes: &str, args: &[&str]) -> Run {
    let (t, s, n) = (
        dir.join("far.yaml"),
        dir.join("secret.yaml"),
        dir.join("nodes"),
    );
    std::fs::write(&t, template).unwrap();
    std::fs::write(&s, secret).unwrap();
    std::fs::write(&n, nodes).unwrap();
    let mut a = vec![
        "check",
        "--far",
        t.to_str().unwrap(),
        "--secret",
        s.to_str().unwrap(),
        "--nodes",
        n.to_str().unwrap(),
        "-o",
        "json",
    ];
    a.extend(args);
    run(fencekit_cmd(&a, ""), Duration::from_secs(60))
}

#[test]
fn the_far_doctor_names_each_mistake_and_passes_a_correct_template() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 2,
        ..LabSpec::default()
    });
    let (b1, b2) = (lab.nodes[0].ipmi, lab.nodes[1].ipmi);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let nodes = "node01\nnode02\n";

    // Correct: fence_ipmilan's reboot needs 64 s, the timeout is 90 s.
    let r = far(
        d,
        &far_template(b1, b2, "", "90s"),
        &far_secret("lab"),
        nodes,
        &[],
    );
    r.assert_code(0);
    assert_eq!(findings(&r), vec![], "{r}");
    let v = r.json();
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 2, "{r}");
    assert!(devs.iter().all(|x| x["result"] == "ok"), "{r}");
    assert!(!r.stdout.contains("\"lab\""), "{r}");

    // A parameter the agent does not know, and one without its dashes.
    let r = far(
        d,
        &far_template(
            b1,
            b2,
            "        --pass: abc\n        cipher: \"3\"\n",
            "90s",
        ),
        &far_secret("lab"),
        nodes,
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(
        has(
            &r,
            "unknown-parameter",
            "broken",
            "FenceAgentsRemediationTemplate lab: --pass"
        ),
        "{r}"
    );
    assert!(
        has(
            &r,
            "unknown-parameter",
            "broken",
            "FenceAgentsRemediationTemplate lab: cipher"
        ),
        "{r}"
    );

    // A node without its parameters (node03 is in the cluster, not in the template).
    let r = far(
        d,
        &far_template(b1, b2, "", "90s"),
        &far_secret("lab"),
        "node01\nnode02\nnode03\n",
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(
        has(&r, "node-without-parameters", "broken", "node03"),
        "{r}"
    );
    // The nodes as `kubectl get nodes -o yaml` prints them.
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node01\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node03\n";
    let r = far(
        d,
        &far_template(b1, b2, "", "90s"),
        &far_secret("lab"),
        list,
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(
        has(&r, "node-without-parameters", "broken", "node03"),
        "{r}"
    );

    // A timeout below the worst case only (FAR's default 60 s < 64 s, when
    // every wait lasts its whole bound): advice with the arithmetic, exit 0.
    let r = far(
        d,
        &far_template(b1, b2, "", "60s"),
        &far_secret("lab"),
        nodes,
        &["--no-device-check"],
    );
    r.assert_code(0);
    assert!(
        has(&r, "far-timeout-below-worst-case", "advice", "node01"),
        "{r}"
    );
    assert!(!has(&r, "far-timeout-too-short", "broken", "node01"), "{r}");
    assert!(
        r.stdout
            .contains("session set-up 20 s + off: power_wait 2 s + off: the power state 20 s")
            && r.stdout.contains("= 64 s"),
        "{r}"
    );
    // A timeout below a working BMC's run (1 s set-up + 2 × (2 s power_wait
    // + 2 s) = 9 s > 5 s): broken, FAR kills every attempt.
    let r = far(
        d,
        &far_template(b1, b2, "", "5s"),
        &far_secret("lab"),
        nodes,
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(has(&r, "far-timeout-too-short", "broken", "node01"), "{r}");
    assert!(has(&r, "far-timeout-too-short", "broken", "node02"), "{r}");
    assert!(r.stdout.contains("takes about 9 s"), "{r}");
    // A power_wait that alone outlasts the timeout: broken too.
    let r = far(
        d,
        &far_template(b1, b2, "        --power-wait: \"40\"\n", "60s"),
        &far_secret("lab"),
        nodes,
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(has(&r, "far-timeout-too-short", "broken", "node01"), "{r}");

    // Retries beyond NHC's timeout: 5 × (90 s + 5 s) = 475 s > 300 s.
    let r = far(
        d,
        &far_template(b1, b2, "", "90s"),
        &far_secret("lab"),
        nodes,
        &["--no-device-check", "--remediation-timeout", "300s"],
    );
    r.assert_code(4);
    assert!(
        has(
            &r,
            "far-retries-exceed-remediation-timeout",
            "weakened",
            "FenceAgentsRemediationTemplate lab"
        ),
        "{r}"
    );

    // A wrong password, checked with the argv FAR builds.
    let r = far(
        d,
        &far_template(b1, b2, "", "90s"),
        &far_secret("wrong-one"),
        nodes,
        &[],
    );
    r.assert_code(1);
    assert!(
        has(
            &r,
            "device-auth-failed",
            "broken",
            "FenceAgentsRemediationTemplate lab for node01"
        ),
        "{r}"
    );
    assert!(
        has(
            &r,
            "device-auth-failed",
            "broken",
            "FenceAgentsRemediationTemplate lab for node02"
        ),
        "{r}"
    );
    assert!(!r.stdout.contains("wrong-one"), "{r}");
    assert!(
        lab.nodes.iter().all(|n| n.bmc.is_on()),
        "nothing powered off"
    );

    // An agent FAR's image does not ship and fencekit does not implement.
    let t = far_template(b1, b2, "", "90s").replace("fence_ipmilan", "fence_scsi");
    let r = far(d, &t, &far_secret("lab"), nodes, &["--no-device-check"]);
    r.assert_code(1);
    assert!(
        has(
            &r,
            "agent-not-in-far-image",
            "broken",
            "FenceAgentsRemediationTemplate lab"
        ),
        "{r}"
    );

    // A FenceAgentsRemediation (the CR NHC creates) reads the same.
    let t = far_template(b1, b2, "", "5s")
        .replace(
            "kind: FenceAgentsRemediationTemplate",
            "kind: FenceAgentsRemediation",
        )
        .replace("  template:\n    spec:\n", "  x:\n")
        .replace("\n      ", "\n  ");
    let r = far(d, &t, &far_secret("lab"), nodes, &["--no-device-check"]);
    assert!(has(&r, "far-timeout-too-short", "broken", "node02"), "{r}");

    // Not a FAR object: a usage error.
    let r = far(d, "kind: ConfigMap\n", "", nodes, &[]);
    r.assert_code(64);
}

/// Every finding id the doctor can report is documented, with its fix, in
/// docs/pacemaker.md or docs/far.md (the table rows of their first section).
#[test]
fn every_finding_id_is_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs: String = ["docs/pacemaker.md", "docs/far.md"]
        .iter()
        .map(|p| std::fs::read_to_string(root.join(p)).unwrap())
        .collect();
    let mut ids = Vec::new();
    for f in std::fs::read_dir(root.join("src/doctor")).unwrap() {
        let src = std::fs::read_to_string(f.unwrap().path()).unwrap();
        let code = src.split("#[cfg(test)]").next().unwrap();
        for part in code.split("Finding::new(").skip(1) {
            let s = part.trim_start();
            if let Some(rest) = s.strip_prefix('"') {
                ids.push(rest[..rest.find('"').unwrap()].to_string());
            }
        }
    }
    ids.sort();
    ids.dedup();
    assert!(ids.len() >= 30, "{ids:?}");
    let missing: Vec<&String> = ids
        .iter()
        .filter(|id| {
            !docs
                .lines()
                .any(|l| l.starts_with('|') && l.contains(&format!("`{id}`")))
        })
        .collect();
    assert!(missing.is_empty(), "not in the docs' tables: {missing:?}");
}

/// A stonith primitive of agent `agent` with these instance attributes.
fn primitive(id: &str, agent: &str, attrs: &[(&str, String)]) -> String {
    let mut x = format!(
        "<primitive id=\"{id}\" class=\"stonith\" type=\"{agent}\">\
         <instance_attributes id=\"{id}-ia\">"
    );
    for (k, v) in attrs {
        x.push_str(&format!(
            "<nvpair id=\"{id}-{k}\" name=\"{k}\" value=\"{v}\"/>"
        ));
    }
    x.push_str("</instance_attributes></primitive>");
    x
}

/// A device that names no nodes is asked with its agent's `list`, as the
/// fencer's `pcmk_host_check=dynamic-list` does: a node it lists is
/// covered, one it does not list is named. An IPMI device has no list
/// (the agent prints upstream's notice), so Pacemaker's default for it is
/// `status`: left to fencing time, with the advice.
#[test]
fn a_device_without_a_host_list_covers_only_the_nodes_its_list_names() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 2,
        ..LabSpec::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // fence_redfish does not offer `list` in its metadata (as upstream), so
    // the check is set as an administrator sets it.
    let redfish = |id: &str, n: usize, extra: &[(&str, &str)]| {
        let a = lab.nodes[n].redfish.unwrap();
        let mut attrs = vec![
            ("ip", a.ip().to_string()),
            ("ipport", a.port().to_string()),
            ("username", "admin".to_string()),
            ("password", "lab".to_string()),
            ("ssl_insecure", "1".to_string()),
            ("pcmk_host_check", "dynamic-list".to_string()),
        ];
        attrs.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        primitive(id, "fence_redfish", &attrs)
    };
    let props = [
        ("stonith-timeout", "300s"),
        ("priority-fencing-delay", "20s"),
    ];

    // Lab node 1's BMC lists its system, named node01: node01 is covered,
    // node02 is not listed and no other device claims it.
    let r = doctor(d, &cib(&props, &[redfish("rf1", 0, &[])], ""), &[]);
    assert!(
        has(&r, "host-not-in-device-list", "broken", "node02"),
        "{r}"
    );
    assert!(
        !findings(&r).iter().any(|(_, _, s)| s == "node01"),
        "node01 is listed: {r}"
    );
    assert!(!has(&r, "host-not-covered", "broken", "node02"), "{r}");
    assert!(!has(&r, "host-claim-dynamic", "advice", "rf1"), "{r}");
    assert!(r.stdout.contains("node01"), "{r}");
    r.assert_code(1);

    // Each node's own BMC as a device: both listed, nothing to say.
    let both = [redfish("rf1", 0, &[]), redfish("rf2", 1, &[])];
    let r = doctor(d, &cib(&props, &both, ""), &[]);
    assert!(
        !findings(&r)
            .iter()
            .any(|(i, _, _)| i == "host-not-in-device-list" || i == "host-not-covered"),
        "{r}"
    );

    // pcmk_host_map: the fencer looks for the mapped plug, not the name.
    let mapped = [redfish(
        "rf1",
        0,
        &[(
            "pcmk_host_map",
            "node01:/redfish/v1/Systems/9;node02:/redfish/v1/Systems/1",
        )],
    )];
    let r = doctor(d, &cib(&props, &mapped, ""), &[]);
    assert!(
        !has(&r, "host-not-in-device-list", "broken", "node02"),
        "{r}"
    );
    assert!(
        has(&r, "host-not-in-device-list", "broken", "node01"),
        "{r}"
    );

    // A wrong password: the list fails, named with what the agent said.
    let r = doctor(
        d,
        &cib(&props, &[redfish("rf1", 0, &[("password", "nope")])], ""),
        &[],
    );
    for n in ["node01", "node02"] {
        assert!(has(&r, "host-not-in-device-list", "broken", n), "{r}");
    }
    assert!(r.stdout.contains("failed"), "{r}");
    // The same with another device claiming both nodes: a weakened device.
    let other = device(
        "ip1",
        lab.nodes[0].ipmi,
        "lab",
        &[("pcmk_host_list", "node01,node02")],
    );
    let r = doctor(
        d,
        &cib(
            &props,
            &[redfish("rf1", 0, &[("password", "nope")]), other],
            "",
        ),
        &[],
    );
    for n in ["node01", "node02"] {
        assert!(has(&r, "host-not-in-device-list", "weakened", n), "{r}");
        assert!(!has(&r, "host-not-in-device-list", "broken", n), "{r}");
    }

    // Device checks off: nothing is asked, the advice stays.
    let r = doctor(
        d,
        &cib(&props, &[redfish("rf1", 0, &[])], ""),
        &["--no-device-check"],
    );
    assert!(has(&r, "host-claim-dynamic", "advice", "rf1"), "{r}");
    assert!(
        !has(&r, "host-not-in-device-list", "broken", "node02"),
        "{r}"
    );

    // fence_ipmilan with no host list: Pacemaker's default is `status`
    // (its metadata has no `list`), decided at fencing time.
    let b1 = lab.nodes[0].ipmi;
    let r = doctor(d, &cib(&props, &[device("ip1", b1, "lab", &[])], ""), &[]);
    assert!(has(&r, "host-claim-dynamic", "advice", "ip1"), "{r}");
    assert!(
        !has(&r, "host-not-in-device-list", "broken", "node01"),
        "{r}"
    );
    // Forced to dynamic-list, its list names no machine: neither node.
    let r = doctor(
        d,
        &cib(
            &props,
            &[device(
                "ip1",
                b1,
                "lab",
                &[("pcmk_host_check", "dynamic-list")],
            )],
            "",
        ),
        &[],
    );
    for n in ["node01", "node02"] {
        assert!(has(&r, "host-not-in-device-list", "broken", n), "{r}");
    }
}

/// One HTTP GET of `/metrics`: the body.
fn scrape(addr: std::net::SocketAddr) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    out.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}

/// `check --watch` with `--pacemaker`: the findings are served with the
/// levels' metrics, and follow the configuration as it changes.
#[test]
fn the_watch_serves_the_doctors_findings_and_follows_the_configuration() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 2,
        ..LabSpec::default()
    });
    let (b1, b2) = (lab.nodes[0].ipmi, lab.nodes[1].ipmi);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pw = d.join("pw");
    std::fs::write(&pw, "lab").unwrap();
    let inv = d.join("inv.toml");
    std::fs::write(
        &inv,
        format!(
            "[defaults]\nusername = \"admin\"\npassword_file = \"{}\"\n\n[[node]]\nname = \
             \"node01\"\n  [[node.fence]]\n  endpoint = \"ipmi://{b1}\"\n",
            pw.display()
        ),
    )
    .unwrap();
    let props = [("stonith-timeout", "90s")];
    let typo = vec![
        device(
            "fk1",
            b1,
            "lab",
            &[("pcmk_host_list", "node01"), ("pcmk_delay_base", "5s")],
        ),
        device("fk2", b2, "lab", &[("pcmk_host_list", "node2")]),
    ];
    let cib_path = d.join("cib.xml");
    std::fs::write(&cib_path, cib(&props, &typo, "")).unwrap();
    let listen = std::net::SocketAddr::new(support::own_loopback().into(), support::free_port());
    let mut child = std::process::Command::new(support::bin())
        .args(["check", "--all", "-i"])
        .arg(&inv)
        .args([
            "--watch",
            "200ms",
            "--listen",
            &listen.to_string(),
            "--pacemaker",
            "--cib",
        ])
        .arg(&cib_path)
        .arg("--no-device-check")
        .env("NO_COLOR", "1")
        .env("FENCEKIT_LOCK_SCOPE", support::lock_scope())
        .env_remove("FENCEKIT_INVENTORY")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let finding = "fencekit_config_finding{source=\"pacemaker\",id=\"host-not-covered\",\
                   severity=\"broken\",subject=\"node02\"} 1";
    let mut last = String::new();
    let seen = support::eventually(Duration::from_secs(20), || {
        last = scrape(listen).unwrap_or_default();
        last.contains(finding) && last.contains("fencekit_level_ok{node=\"node01\"")
    });
    assert!(seen, "{last}");
    assert!(last.ends_with("# EOF\n"), "{last}");
    assert_eq!(last.matches("# EOF").count(), 1, "{last}");
    // The typo fixed: the finding clears without a restart.
    let fixed = typo[1].replace("value=\"node2\"", "value=\"node02\"");
    std::fs::write(&cib_path, cib(&props, &[typo[0].clone(), fixed], "")).unwrap();
    let cleared = support::eventually(Duration::from_secs(20), || {
        last = scrape(listen).unwrap_or_default();
        !last.is_empty()
            && !last.contains(finding)
            && last.contains("fencekit_config_findings{source=\"pacemaker\",severity=\"broken\"} 0")
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(cleared, "{last}");
}

/// `check --watch --pacemaker` with no target: the doctor alone runs and
/// its findings are served on /metrics (no level metrics, one `# EOF`).
#[test]
fn the_watch_runs_the_doctor_alone_without_targets() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 2,
        ..LabSpec::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cib_path = d.join("cib.xml");
    let devs = [device(
        "fk1",
        lab.nodes[0].ipmi,
        "lab",
        &[("pcmk_host_list", "node01"), ("pcmk_delay_base", "5s")],
    )];
    std::fs::write(&cib_path, cib(&[("stonith-timeout", "90s")], &devs, "")).unwrap();
    let listen = std::net::SocketAddr::new(support::own_loopback().into(), support::free_port());
    let mut child = std::process::Command::new(support::bin())
        .args(["check", "--watch", "200ms", "--listen", &listen.to_string()])
        .args(["--pacemaker", "--no-device-check", "--cib"])
        .arg(&cib_path)
        .env("NO_COLOR", "1")
        .env("FENCEKIT_LOCK_SCOPE", support::lock_scope())
        .env_remove("FENCEKIT_INVENTORY")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let finding = "fencekit_config_finding{source=\"pacemaker\",id=\"host-not-covered\",\
                   severity=\"broken\",subject=\"node02\"} 1";
    let mut last = String::new();
    let seen = support::eventually(Duration::from_secs(20), || {
        last = scrape(listen).unwrap_or_default();
        last.contains(finding)
    });
    // Still running after serving: the watch waits to be stopped.
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen, "{last}");
    assert!(running);
    assert!(last.ends_with("# EOF\n"), "{last}");
    assert_eq!(last.matches("# EOF").count(), 1, "{last}");
    assert!(!last.contains("fencekit_level_ok{"), "{last}");
}

/// The template fencekit ships passes its own doctor.
#[test]
fn the_packaged_far_template_passes_the_doctor() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    std::fs::write(&nodes, "worker-0\nworker-1\nworker-2\n").unwrap();
    let t = Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/far-template.yaml");
    let r = run(
        fencekit_cmd(
            &[
                "check",
                "--far",
                t.to_str().unwrap(),
                "--nodes",
                nodes.to_str().unwrap(),
                "--no-device-check",
                "-o",
                "json",
            ],
            "",
        ),
        Duration::from_secs(30),
    );
    r.assert_code(0);
    assert_eq!(findings(&r), vec![], "{r}");
}

/// The doctor's figure is the agent's own: `fence_ipmilan -v` logs the
/// same worst case that `check --pacemaker` compares with stonith-timeout.
#[test]
fn the_agent_logs_the_worst_case_the_doctor_uses() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 1,
        ..LabSpec::default()
    });
    let b = lab.nodes[0].ipmi;
    let stdin = format!(
        "ip={}\nipport={}\nusername=admin\npassword=lab\nlanplus=1\npower_timeout=40\naction=status\nverbose=1\n",
        b.ip(),
        b.port()
    );
    let mut c = fencekit_cmd(&["agent", "fence_ipmilan"], "");
    c.stdin(std::process::Stdio::piped());
    let mut child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // status: the 40 s login bound only
    assert!(err.contains("status may take up to 40 s"), "{err}");
    // and the doctor's reboot figure for the same parameters: 40 + 2 × (2 + 40)
    let dir = tempfile::tempdir().unwrap();
    let devs = vec![device(
        "fk1",
        b,
        "lab",
        &[
            ("pcmk_host_list", "node01 node02"),
            ("power_timeout", "40"),
            ("pcmk_delay_base", "5s"),
        ],
    )];
    let r = doctor(dir.path(), &cib(&[], &devs, ""), &["--no-device-check"]);
    assert!(r.stdout.contains("= 124 s"), "{r}");
}

/// The defaults people start from pass the doctor with exit 0 (issue 42):
/// FAR's documented template (fence_ipmilan with --lanplus, an IP and port
/// per node, timeout 60s, retrycount 5, retryinterval 5s; FAR's README and
/// CRD defaults) and the stonith resources `pcs stonith create NAME
/// fence_ipmilan ip=… username=… password=… lanplus=1 pcmk_host_list=NODE`
/// writes (instance attributes only, a monitor every 60 s without a
/// timeout of its own) in a cluster `pcs cluster setup` made (no
/// stonith-timeout: Pacemaker's 60 s). Every device is checked against the
/// lab's BMCs. What remains is advice, with the arithmetic.
#[test]
fn the_default_far_template_and_pcs_stonith_resources_pass_the_doctor() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 3,
        ..LabSpec::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (b1, b2) = (lab.nodes[0].ipmi, lab.nodes[1].ipmi);
    let r = far(
        d,
        &far_template(b1, b2, "", "60s").replace("        --action: reboot\n", ""),
        &far_secret("lab"),
        "node01\nnode02\n",
        &[],
    );
    r.assert_code(0);
    let v = r.json();
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 2, "{r}");
    assert!(devs.iter().all(|x| x["result"] == "ok"), "{r}");
    for (_, severity, _) in findings(&r) {
        assert_eq!(severity, "advice", "{r}");
    }
    assert!(
        has(&r, "far-timeout-below-worst-case", "advice", "node01"),
        "{r}"
    );

    let names = ["node01", "node02", "node03"];
    let mut prims = String::new();
    for (i, n) in names.iter().enumerate() {
        let b = lab.nodes[i].ipmi;
        let id = format!("fence-{n}");
        prims.push_str(&format!("<primitive class=\"stonith\" id=\"{id}\" type=\"fence_ipmilan\"><instance_attributes id=\"{id}-instance_attributes\">"));
        for (k, v) in [
            ("ip", b.ip().to_string()),
            ("ipport", b.port().to_string()),
            ("lanplus", "1".to_string()),
            ("password", "lab".to_string()),
            ("pcmk_host_list", n.to_string()),
            ("username", "admin".to_string()),
        ] {
            prims.push_str(&format!(
                "<nvpair id=\"{id}-instance_attributes-{k}\" name=\"{k}\" value=\"{v}\"/>"
            ));
        }
        prims.push_str(&format!(
            "</instance_attributes><operations><op id=\"{id}-monitor-interval-60s\" \
             interval=\"60s\" name=\"monitor\"/></operations></primitive>"
        ));
    }
    let nodes: String = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("<node id=\"{}\" uname=\"{n}\"/>", i + 1))
        .collect();
    let xml = format!(
        "<cib crm_feature_set=\"3.16.2\" validate-with=\"pacemaker-3.9\"><configuration>\
         <crm_config><cluster_property_set id=\"cib-bootstrap-options\">\
         <nvpair id=\"cib-bootstrap-options-have-watchdog\" name=\"have-watchdog\" value=\"false\"/>\
         <nvpair id=\"cib-bootstrap-options-dc-version\" name=\"dc-version\" value=\"2.1.5-a3f44794f94\"/>\
         <nvpair id=\"cib-bootstrap-options-cluster-infrastructure\" name=\"cluster-infrastructure\" value=\"corosync\"/>\
         <nvpair id=\"cib-bootstrap-options-cluster-name\" name=\"cluster-name\" value=\"lab\"/>\
         </cluster_property_set></crm_config><nodes>{nodes}</nodes><resources>{prims}</resources>\
         <constraints/></configuration><status/></cib>"
    );
    let r = doctor(d, &xml, &[]);
    r.assert_code(0);
    let v = r.json();
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 3, "{r}");
    assert!(devs.iter().all(|x| x["result"] == "ok"), "{r}");
    for (_, severity, _) in findings(&r) {
        assert_eq!(severity, "advice", "{r}");
    }
    for n in names {
        let id = format!("fence-{n}");
        assert!(
            has(&r, "stonith-timeout-below-worst-case", "advice", &id),
            "{r}"
        );
    }
    assert!(r.stdout.contains("stonith-timeout = 60 s"), "{r}");
    // The same cluster on Pacemaker 3.0.2 names the property fencing-timeout.
    let r = doctor(
        d,
        &xml.replace("2.1.5-a3f44794f94", "3.0.2-1"),
        &["--no-device-check"],
    );
    r.assert_code(0);
    assert!(r.stdout.contains("fencing-timeout = 60 s"), "{r}");
}

/// `pcmk_host_map` as Pacemaker 3.0.2 parses it: split at `;`, spaces and
/// tabs, each mapping at its first `:`; a node whose mapping is malformed
/// is not covered, and a map earlier releases read otherwise is named.
#[test]
fn the_host_map_is_read_as_pacemaker_3_0_2_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bmc: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap();
    let props = [("stonith-timeout", "90s")];
    let with_map = |map: &str| {
        vec![device(
            "fk1",
            bmc,
            "lab",
            &[("pcmk_host_map", map), ("pcmk_delay_base", "5s")],
        )]
    };
    // Both nodes mapped (either separator, case aside): covered.
    let r = doctor(
        d,
        &cib(&props, &with_map("NODE01:1;node02=2"), ""),
        &["--no-device-check"],
    );
    assert!(
        !findings(&r)
            .iter()
            .any(|(id, _, _)| id.starts_with("host-")),
        "{r}"
    );
    // "node02 : 2" is three malformed mappings to 3.0.2: node02 is not covered.
    let r = doctor(
        d,
        &cib(&props, &with_map("node01:1 node02 : 2"), ""),
        &["--no-device-check"],
    );
    r.assert_code(1);
    assert!(has(&r, "host-not-covered", "broken", "node02"), "{r}");
    assert!(has(&r, "host-map-malformed", "weakened", "fk1"), "{r}");
    // Commas: 3.0.2 maps node01 to "1,node02:2" and leaves node02 out;
    // 2.1 mapped "1,node02" to 2.
    let r = doctor(
        d,
        &cib(&props, &with_map("node01:1,node02:2"), ""),
        &["--no-device-check"],
    );
    assert!(has(&r, "host-not-covered", "broken", "node02"), "{r}");
    assert!(
        has(&r, "host-map-read-differently", "weakened", "fk1"),
        "{r}"
    );
}
