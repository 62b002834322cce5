//! Interop: real IPMI clients against `fencekit lab`.
//!
//! The lab's simulated BMCs are what our fast tests, demos and runbooks use;
//! here independent clients — `ipmitool -I lanplus` (suites 3 and 17),
//! FreeIPMI's `ipmipower` and upstream `fence_ipmilan` — check them, so that
//! the simulator and our client cannot share a bug unnoticed. Every change
//! made by one client is read back by another (ipmitool and our own).
//! Contract: docs/design.md (`fencekit lab` output).

mod support;

use std::time::Duration;

use support::*;

const FAST: Duration = Duration::from_secs(3);

/// `ipmitool … chassis power status` against a lab node, as true/false.
#[track_caller]
fn ipmitool_power(node: &LabNode, suite: u8) -> bool {
    let r = ipmitool_at(
        &node.host,
        node.port,
        LAB_PASSWORD,
        Some(suite),
        &["chassis", "power", "status"],
    );
    r.assert_code(0).assert_faster_than(FAST);
    match r.stdout.trim() {
        "Chassis Power is on" => true,
        "Chassis Power is off" => false,
        other => panic!("unexpected ipmitool output {other:?}\n{r}"),
    }
}

/// Our own client's view of a lab node: exit 0 on, 2 off.
#[track_caller]
fn fencekit_power(node: &LabNode, suite: &str) -> bool {
    let r = fencekit(&["status", &node.target(), "--cipher", suite], LAB_PASSWORD);
    match r.code {
        Some(0) => true,
        Some(2) => false,
        _ => panic!("fencekit status against the lab failed\n{r}"),
    }
}

fn two_node_lab() -> Lab {
    let lab = Lab::start(&["--nodes", "2", "--power", "on"]);
    assert_eq!(
        lab.nodes.len(),
        2,
        "expected two node lines before `ready`: {:?}",
        lab.banner
    );
    assert_ne!(lab.nodes[0].port, lab.nodes[1].port, "{:?}", lab.banner);
    lab
}

/// status, off, on, cycle with ipmitool `-C suite`; every state read back by
/// ipmitool and by fencekit; node02 must not be touched.
fn ipmitool_drives_lab(suite: u8) {
    let lab = two_node_lab();
    let (n1, n2) = (&lab.nodes[0], &lab.nodes[1]);
    let s = suite.to_string();
    assert!(ipmitool_power(n1, suite), "node01 should start on");
    assert!(fencekit_power(n1, &s));

    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        Some(suite),
        &["chassis", "power", "off"],
    );
    r.assert_code(0).assert_faster_than(FAST);
    assert!(r.stdout.contains("Down/Off"), "{r}");
    assert!(
        eventually(Duration::from_secs(3), || !ipmitool_power(n1, suite)),
        "node01 still on after ipmitool off"
    );
    assert!(
        !fencekit_power(n1, &s),
        "fencekit sees node01 on after ipmitool off"
    );
    assert!(ipmitool_power(n2, suite), "node02 changed with node01");

    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        Some(suite),
        &["chassis", "power", "on"],
    );
    r.assert_code(0).assert_faster_than(FAST);
    assert!(r.stdout.contains("Up/On"), "{r}");
    assert!(
        eventually(Duration::from_secs(3), || ipmitool_power(n1, suite)),
        "node01 still off after ipmitool on"
    );
    assert!(fencekit_power(n1, &s));

    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        Some(suite),
        &["chassis", "power", "cycle"],
    );
    r.assert_code(0).assert_faster_than(FAST);
    assert!(r.stdout.contains("Cycle"), "{r}");
    assert!(
        eventually(Duration::from_secs(5), || ipmitool_power(n1, suite)),
        "node01 not back on after cycle"
    );

    // the other way round: fencekit switches, ipmitool reads
    let r = fencekit(
        &["off", &n1.target(), "--cipher", &s, "--output", "json"],
        LAB_PASSWORD,
    );
    r.assert_code(0).assert_faster_than(FAST);
    assert_eq!(r.json_result()["state"], "off", "{r}");
    assert!(
        !ipmitool_power(n1, suite),
        "ipmitool sees node01 on after fencekit off"
    );
    assert!(ipmitool_power(n2, suite), "node02 changed with node01");
}

#[test]
fn lab_ipmitool_cipher3() {
    require!("ipmitool");
    ipmitool_drives_lab(3);
}

#[test]
fn lab_ipmitool_cipher17() {
    require!("ipmitool");
    ipmitool_drives_lab(17);
}

#[test]
fn lab_ipmitool_without_cipher_is_quick() {
    // ipmitool without -C asks Get Channel Cipher Suites first: a lab that
    // does not answer it costs every such client 10 s.
    require!("ipmitool");
    let lab = two_node_lab();
    let n1 = &lab.nodes[0];
    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        None,
        &["chassis", "power", "status"],
    );
    r.assert_code(0).assert_faster_than(FAST);
    assert_eq!(r.stdout.trim(), "Chassis Power is on", "{r}");

    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        None,
        &["channel", "getciphers", "ipmi"],
    );
    r.assert_code(0).assert_faster_than(FAST);
    let ids: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        ids.contains(&"3") && ids.contains(&"17"),
        "lab should list suites 3 and 17\n{r}"
    );
}

#[test]
fn lab_rejects_wrong_password() {
    require!("ipmitool");
    let lab = two_node_lab();
    let n1 = &lab.nodes[0];
    for suite in [3u8, 17] {
        let r = ipmitool_at(
            &n1.host,
            n1.port,
            "not-the-lab-password",
            Some(suite),
            &["chassis", "power", "off"],
        );
        assert!(
            r.code.is_some_and(|c| c != 0),
            "ipmitool -C {suite} with a wrong password succeeded\n{r}"
        );
        // a clean RAKP rejection, not silence (ipmitool would retry for ~10 s)
        r.assert_faster_than(FAST);
        assert!(
            !r.stdout.contains("Down/Off"),
            "wrong password switched power\n{r}"
        );
    }
    assert!(
        ipmitool_power(n1, 3),
        "node01 switched off by a rejected login"
    );

    let r = fencekit(
        &["off", &n1.target(), "--cipher", "17"],
        "not-the-lab-password",
    );
    r.assert_code(1).assert_faster_than(FAST);
    assert!(
        fencekit_power(n1, "3"),
        "node01 switched off by a rejected login"
    );
}

/// `ipmipower -D LAN_2_0 -h 127.0.0.1:PORT -u admin -p lab -I SUITE ARGS…`
fn ipmipower(node: &LabNode, suite: u8, args: &[&str]) -> Run {
    let mut c = support::tool("ipmipower");
    c.args([
        "-D",
        "LAN_2_0",
        "-h",
        &format!("{}:{}", node.host, node.port),
    ])
    .args(["-u", USER, "-p", LAB_PASSWORD, "-I", &suite.to_string()])
    .args(args);
    run(c, Duration::from_secs(40))
}

#[test]
fn lab_ipmipower_without_workarounds() {
    // FreeIPMI checks what ipmi_sim gets wrong (max privilege in the Open
    // Session response): the lab must pass without `-W opensesspriv`.
    require!("ipmipower");
    let lab = two_node_lab();
    let n1 = &lab.nodes[0];
    let who = n1.host.clone();
    for suite in [3u8, 17] {
        let r = ipmipower(n1, suite, &["--stat"]);
        r.assert_code(0).assert_faster_than(FAST);
        assert_eq!(r.stdout.trim(), format!("{who}: on"), "suite {suite}\n{r}");
    }
    let r = ipmipower(n1, 3, &["--off"]);
    r.assert_code(0).assert_faster_than(FAST);
    assert_eq!(r.stdout.trim(), format!("{who}: ok"), "{r}");
    assert!(
        eventually(Duration::from_secs(3), || !fencekit_power(n1, "17")),
        "node01 still on after ipmipower --off"
    );
    let r = ipmipower(n1, 17, &["--stat"]);
    assert_eq!(r.stdout.trim(), format!("{who}: off"), "{r}");
    let r = ipmipower(n1, 17, &["--on"]);
    r.assert_code(0);
    assert_eq!(r.stdout.trim(), format!("{who}: ok"), "{r}");
    assert!(eventually(Duration::from_secs(3), || ipmitool_power(n1, 3)));
}

#[test]
fn lab_ipmipower_names_bad_credentials() {
    // FreeIPMI maps the RAKP status codes to messages: the lab must send the
    // right ones (RAKP 2 "unauthorized name" / integrity check failures).
    require!("ipmipower");
    let lab = two_node_lab();
    let n1 = &lab.nodes[0];
    let who = &n1.host;
    for suite in [3u8, 17] {
        let mut c = support::tool("ipmipower");
        c.args(["-D", "LAN_2_0", "-h", &format!("{who}:{}", n1.port)])
            .args([
                "-u",
                USER,
                "-p",
                "wrong",
                "-I",
                &suite.to_string(),
                "--stat",
            ]);
        let r = run(c, Duration::from_secs(40));
        r.assert_faster_than(FAST);
        assert_eq!(
            r.stdout.trim(),
            format!("{who}: password invalid"),
            "suite {suite}\n{r}"
        );

        let mut c = support::tool("ipmipower");
        c.args(["-D", "LAN_2_0", "-h", &format!("{who}:{}", n1.port)])
            .args([
                "-u",
                "nobody",
                "-p",
                LAB_PASSWORD,
                "-I",
                &suite.to_string(),
                "--stat",
            ]);
        let r = run(c, Duration::from_secs(40));
        r.assert_faster_than(FAST);
        assert_eq!(
            r.stdout.trim(),
            format!("{who}: username invalid"),
            "suite {suite}\n{r}"
        );
    }
}

/// Upstream `fence_ipmilan` against a lab node.
fn fence_ipmilan(node: &LabNode, action: &str, extra: &[&str]) -> Run {
    let mut c = support::tool("fence_ipmilan");
    c.args(["--ip", &node.host, "--ipport", &node.port.to_string()])
        .args(["--username", USER, "--password", LAB_PASSWORD])
        .args(["--lanplus", "-o", action])
        .args(extra)
        .env("PYTHONWARNINGS", "ignore");
    run(c, Duration::from_secs(60))
}

#[test]
fn lab_upstream_fence_ipmilan() {
    require!("fence_ipmilan");
    let lab = two_node_lab();
    let n1 = &lab.nodes[0];
    let r = fence_ipmilan(n1, "status", &["-C", "3"]);
    r.assert_code(0).assert_faster_than(Duration::from_secs(5));
    assert_eq!(r.stdout.trim(), "Status: ON", "{r}");

    let r = fence_ipmilan(n1, "off", &["-C", "17", "--power-wait", "0"]);
    r.assert_code(0).assert_faster_than(Duration::from_secs(10));
    assert_eq!(r.stdout.trim(), "Success: Powered OFF", "{r}");
    assert!(
        !fencekit_power(n1, "3"),
        "node01 on after fence_ipmilan off"
    );

    let r = fence_ipmilan(n1, "status", &["-C", "3"]);
    r.assert_code(2);
    assert_eq!(r.stdout.trim(), "Status: OFF", "{r}");

    let r = fence_ipmilan(n1, "reboot", &["-C", "3", "--power-wait", "0"]);
    r.assert_code(0).assert_faster_than(Duration::from_secs(15));
    assert_eq!(r.stdout.trim(), "Success: Rebooted", "{r}");
    assert!(
        fencekit_power(n1, "17"),
        "node01 off after fence_ipmilan reboot"
    );

    // lab's password is not "password": upstream must fail against it
    let mut c = support::tool("fence_ipmilan");
    c.args(["--ip", &n1.host, "--ipport", &n1.port.to_string()])
        .args([
            "--username",
            USER,
            "--password",
            "wrong",
            "--lanplus",
            "-C",
            "3",
        ])
        .args(["-o", "status"])
        .env("PYTHONWARNINGS", "ignore");
    let r = run(c, Duration::from_secs(60));
    r.assert_code(1);
}

#[test]
fn lab_announces_loopback_nodes_and_stops_on_drop() {
    let mut lab = Lab::start(&["--nodes", "3"]);
    assert_eq!(lab.nodes.len(), 3, "{:?}", lab.banner);
    for (i, n) in lab.nodes.iter().enumerate() {
        assert!(n.host.starts_with("127."), "{}", n.line);
        assert_eq!(n.name, format!("node{:02}", i + 1), "{}", n.line);
        assert!(
            wait_udp_bound_at(n.ip(), n.port, Duration::from_secs(1)),
            "{} not bound",
            n.line
        );
    }
    assert!(lab.running());
    let pid = lab.pid();
    let ports: Vec<(std::net::Ipv4Addr, u16)> =
        lab.nodes.iter().map(|n| (n.ip(), n.port)).collect();
    drop(lab);
    assert!(!pid_alive(pid), "lab {pid} still running after drop");
    assert!(
        eventually(Duration::from_secs(2), || ports
            .iter()
            .all(|(h, p)| port_is_free_at(*h, *p))),
        "lab ports still bound after it stopped: {ports:?}"
    );
}

// ------------------------------------------- fault knobs, seen by ipmitool ----

#[test]
fn lab_stuck_knob_seen_by_ipmitool() {
    require!("ipmitool");
    let lab = Lab::start(&["--nodes", "1", "--stuck"]);
    let n1 = &lab.nodes[0];
    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        Some(3),
        &["chassis", "power", "off"],
    );
    r.assert_code(0).assert_faster_than(FAST);
    std::thread::sleep(Duration::from_millis(500));
    assert!(ipmitool_power(n1, 3), "a --stuck node switched off");
    let r = fencekit(
        &["off", &n1.target(), "--power-timeout", "1s"],
        LAB_PASSWORD,
    );
    r.assert_code(1)
        .assert_elapsed_within(Duration::from_millis(900), Duration::from_secs(4))
        .assert_mentions(&["timed out waiting to power off"]);
}

#[test]
fn lab_transition_knob_seen_by_ipmitool() {
    require!("ipmitool");
    let lab = Lab::start(&["--nodes", "1", "--transition", "1s"]);
    let n1 = &lab.nodes[0];
    let t0 = std::time::Instant::now();
    ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        Some(17),
        &["chassis", "power", "off"],
    )
    .assert_code(0);
    assert!(
        ipmitool_power(n1, 17),
        "off visible before the 1 s transition"
    );
    assert!(
        eventually(Duration::from_secs(4), || !ipmitool_power(n1, 17)),
        "never switched off"
    );
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "transition took {took:?}, expected about 1 s"
    );
}

#[test]
fn lab_cipher_list_knob_seen_by_ipmitool() {
    require!("ipmitool");
    let lab = Lab::start(&["--nodes", "1", "--ciphers", "17"]);
    let n1 = &lab.nodes[0];
    assert!(ipmitool_power(n1, 17));
    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        Some(3),
        &["chassis", "power", "status"],
    );
    assert!(
        r.code.is_some_and(|c| c != 0),
        "suite 3 accepted by a 17-only lab\n{r}"
    );
    r.assert_faster_than(FAST);
    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        None,
        &["channel", "getciphers", "ipmi"],
    );
    r.assert_code(0).assert_faster_than(FAST);
    let ids: Vec<&str> = r
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids, ["17"], "lab should list only suite 17\n{r}");
}

#[test]
fn lab_drop_knob_ipmitool_retransmits() {
    require!("ipmitool");
    let lab = Lab::start(&["--nodes", "1", "--drop", "1"]);
    let n1 = &lab.nodes[0];
    // ipmitool retransmits after about 1 s
    let r = ipmitool_at(
        &n1.host,
        n1.port,
        LAB_PASSWORD,
        Some(3),
        &["chassis", "power", "status"],
    );
    r.assert_code(0)
        .assert_elapsed_within(Duration::from_millis(500), Duration::from_secs(6));
    assert_eq!(r.stdout.trim(), "Chassis Power is on", "{r}");
}

#[test]
fn lab_stops_cleanly_on_sigterm() {
    let mut lab = Lab::start(&["--nodes", "2"]);
    let ports: Vec<(std::net::Ipv4Addr, u16)> =
        lab.nodes.iter().map(|n| (n.ip(), n.port)).collect();
    let st = lab.terminate(Duration::from_secs(3));
    assert!(st.is_some(), "lab still running 3 s after SIGTERM");
    assert_eq!(
        st.and_then(|s| s.code()),
        Some(0),
        "lab exit status after SIGTERM"
    );
    assert!(
        ports.iter().all(|(h, p)| port_is_free_at(*h, *p)),
        "ports still bound: {ports:?}"
    );
}
