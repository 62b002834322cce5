//! fencekit under Pacemaker's real fencer: a one-node corosync + Pacemaker
//! 2.1 cluster on loopback (`tests/peers/pacemaker_start.sh`), fencekit as
//! its fence agents, OpenIPMI `ipmi_sim` as the BMCs, driven with
//! `stonith_admin` and `cibadmin` as an operator would.
//!
//! One cluster serves every scenario; the scenarios run side by side (each
//! with its own BMCs on addresses of its own and its own node names), so
//! the binary takes about as long as the longest one: the recurring
//! monitor, watched for 30 s. The cluster is stopped when the test
//! ends, passed or failed (and by its start script if this process dies).
//! Without corosync and Pacemaker the test is skipped, saying why; under
//! `FENCEKIT_REQUIRE_PEERS=1` (CI) it fails instead.

mod support;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::thread;
use std::time::{Duration, Instant};
use support::pacemaker::{device, Cluster};
use support::{free_port, own_loopback, IpmiSim, UdpProxy, PASSWORD, USER};

/// How long the recurring monitor is watched, and its interval.
const MONITOR_FOR: Duration = Duration::from_secs(30);
const MONITOR_EVERY: &str = "3s";
/// `stonith_admin --timeout`, the same as Pacemaker's default stonith-timeout.
const FENCE_TIMEOUT: &str = "60";

/// The settings of a fence_ipmilan device for `sim` (cipher suite 3:
/// ipmi_sim has no 17), fencing `nodes`.
fn ipmi_params(host: Ipv4Addr, port: u16, password: &str, nodes: &str) -> Vec<(String, String)> {
    [
        ("ip", host.to_string()),
        ("ipport", port.to_string()),
        ("username", USER.to_string()),
        ("password", password.to_string()),
        ("lanplus", "1".to_string()),
        ("cipher", "3".to_string()),
        ("pcmk_host_list", nodes.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn add_device(c: &Cluster, id: &str, params: &[(String, String)], monitor: Option<&str>) {
    let p: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    c.create(&device(id, "fence_ipmilan", &p, monitor));
}

/// `stonith_admin ARGS…` (with the fencing timeout), killed after 120 s.
fn stonith_admin(c: &Cluster, args: &[&str]) -> support::Run {
    let mut a: Vec<&str> = args.to_vec();
    if args
        .iter()
        .any(|x| matches!(*x, "--reboot" | "--fence" | "--unfence"))
    {
        a.extend(["--timeout", FENCE_TIMEOUT]);
    }
    c.tool("stonith_admin", &a, Duration::from_secs(120))
}

fn new_ops(sim: &IpmiSim, seen: &mut usize) -> Vec<String> {
    let ops = sim.ops();
    let new = ops[*seen..].to_vec();
    *seen = ops.len();
    new
}

/// The agents the fencer can run are fencekit's: its metadata (its own
/// descriptions), through `stonith_admin` and `crm_resource` (both run the
/// agent from /usr/sbin in their own process), and `--validate`, which runs
/// the agent's validate-all.
fn metadata_and_validate(c: &Cluster) {
    let r = stonith_admin(c, &["--list-installed"]);
    assert_eq!(r.code, Some(0), "{r}");
    for name in [
        "fence_ipmilan",
        "fence_ilo4",
        "fence_redfish",
        "fence_virsh",
    ] {
        assert!(r.stdout.lines().any(|l| l.trim() == name), "{name}: {r}");
    }
    // fencekit's description of disable_timeout, not upstream's.
    let ours = "reaching the device stays bounded";
    let r = stonith_admin(c, &["--metadata", "--agent", "fence_ipmilan"]);
    assert_eq!(r.code, Some(0), "{r}");
    assert!(
        r.stdout.contains("<resource-agent name=\"fence_ipmilan\""),
        "{r}"
    );
    assert!(r.stdout.contains(ours), "{r}");
    let r = c.tool(
        "crm_resource",
        &["--show-metadata", "stonith:fence_redfish"],
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(0), "{r}");
    assert!(r.stdout.contains(ours), "{r}");

    let base = [
        "--validate",
        "--agent",
        "fence_ipmilan",
        "--option",
        "ip=127.0.0.1",
        "--option",
        "username=admin",
        "--option",
        "password=secret",
        "--option",
        "lanplus=1",
    ];
    let r = stonith_admin(c, &base);
    assert_eq!(r.code, Some(0), "{r}");
    let mut bad = base.to_vec();
    bad.extend(["--option", "privlvl=superuser"]);
    let r = stonith_admin(c, &bad);
    assert_ne!(r.code, Some(0), "{r}");
    assert!(r.text().contains("--privlvl"), "the agent's reason: {r}");
    assert!(!r.text().contains("secret"), "{r}");
}

/// `--reboot`, `--fence` (off) and `--unfence` (on): each switches the BMC
/// exactly as asked, once.
fn reboot_fence_unfence(c: &Cluster) {
    let host = own_loopback();
    let sim = IpmiSim::start_at(host, free_port(), USER, PASSWORD, true, None);
    add_device(
        c,
        "fk-node02",
        &ipmi_params(host, sim.port, PASSWORD, "node02"),
        None,
    );
    assert!(c.wait_started("fk-node02", Duration::from_secs(60)));
    let mut seen = sim.ops().len();
    assert_eq!(seen, 0, "starting the device (a monitor) switches nothing");

    let r = stonith_admin(c, &["--reboot", "node02"]);
    assert_eq!(r.code, Some(0), "{r}");
    assert_eq!(new_ops(&sim, &mut seen), ["set power 0", "set power 1"]);
    assert!(sim.power());

    let r = stonith_admin(c, &["--fence", "node02"]);
    assert_eq!(r.code, Some(0), "{r}");
    assert_eq!(new_ops(&sim, &mut seen), ["set power 0"]);
    assert!(!sim.power());

    let r = stonith_admin(c, &["--unfence", "node02"]);
    assert_eq!(r.code, Some(0), "{r}");
    assert_eq!(new_ops(&sim, &mut seen), ["set power 1"]);
    assert!(sim.power());

    let r = stonith_admin(c, &["--history", "node02"]);
    assert_eq!(r.code, Some(0), "{r}");
    assert!(r.stdout.contains(" of node02 successful"), "{r}");
    assert!(!r.stdout.contains("failed"), "{r}");
}

/// A wrong password: every run of the agent (the device's start, then the
/// fencing and Pacemaker's retry of it) fails cleanly with its reason in
/// the fencer's log, and nothing is switched.
fn wrong_password(c: &Cluster) {
    let host = own_loopback();
    let sim = IpmiSim::start_at(host, free_port(), USER, PASSWORD, true, None);
    add_device(
        c,
        "fk-node04",
        &ipmi_params(host, sim.port, "not-the-password", "node04"),
        None,
    );
    let t0 = Instant::now();
    let r = stonith_admin(c, &["--reboot", "node04"]);
    assert_ne!(r.code, Some(0), "{r}");
    assert!(t0.elapsed() < Duration::from_secs(30), "{r}");
    assert!(sim.ops().is_empty(), "nothing switched: {:?}", sim.ops());
    assert!(sim.power());

    let cause = "cause: the BMC's RAKP 2 proof does not match our password: the password is wrong";
    let stderr = c.agent_stderr();
    let runs: Vec<u32> = stderr
        .iter()
        .filter(|(_, _, l)| l.contains(cause))
        .map(|(_, pid, _)| *pid)
        .collect();
    assert!(runs.len() >= 2, "the reboot and its retry: {stderr:?}");
    for pid in runs {
        let lines: Vec<&str> = stderr
            .iter()
            .filter(|(_, p, _)| *p == pid)
            .map(|(_, _, l)| l.as_str())
            .collect();
        assert_eq!(lines.len(), 2, "one failure, one cause: {lines:?}");
        assert!(
            lines[0].ends_with(
                "ERROR: Failed: Unable to obtain correct plug status or plug is not available"
            ),
            "{lines:?}"
        );
        assert!(!lines.concat().contains("not-the-password"));
    }
}

/// A BMC that went away after its device started (every datagram answered
/// with ICMP port unreachable): fencekit's attempt fails in about 20 s with
/// its reason in the fencer's log, and Pacemaker's second attempt
/// (pcmk_reboot_retries) runs and fails the same way, all within
/// stonith-timeout.
fn unreachable_bmc(c: &Cluster) {
    let host = own_loopback();
    let sim = IpmiSim::start_at(host, free_port(), USER, PASSWORD, true, None);
    let port = sim.port;
    add_device(
        c,
        "fk-node03",
        &ipmi_params(host, port, PASSWORD, "node03"),
        None,
    );
    assert!(c.wait_started("fk-node03", Duration::from_secs(60)));
    // The start (and the monitor it runs) is over before the BMC goes: a
    // fence must not queue behind a monitor of an unreachable BMC.
    assert!(
        c.log()
            .lines()
            .any(|l| l.contains("fk-node03 start (call ") && l.contains("exited with status 0")),
        "the device's start finished:\n{}",
        c.log()
    );
    drop(sim);

    let bmc = format!(" {host}:{port} ");
    let runs = |c: &Cluster| -> Vec<u32> {
        let mut pids: Vec<u32> = c
            .agent_stderr()
            .into_iter()
            .filter(|(_, _, l)| {
                l.contains("cause: the port is unreachable (ICMP port unreachable)")
                    && l.contains(&bmc)
            })
            .map(|(_, pid, _)| pid)
            .collect();
        pids.sort();
        pids.dedup();
        pids
    };
    let t0 = Instant::now();
    let (r, first) = thread::scope(|s| {
        let fence = s.spawn(|| stonith_admin(c, &["--reboot", "node03"]));
        let mut first = None;
        while !fence.is_finished() {
            if first.is_none() && !runs(c).is_empty() {
                first = Some(t0.elapsed());
            }
            thread::sleep(Duration::from_millis(100));
        }
        (fence.join().unwrap(), first)
    });
    let took = t0.elapsed();
    assert_ne!(r.code, Some(0), "{r}");
    let first = first.expect("fencekit's reason in the fencer's log");
    eprintln!(
        "unreachable BMC under the fencer: first failure logged after {:.1}s, \
         stonith_admin gave up after {:.1}s",
        first.as_secs_f64(),
        took.as_secs_f64()
    );
    assert!(first < Duration::from_secs(30), "{first:?}");
    assert!(
        took < Duration::from_secs(60),
        "before stonith-timeout: {took:?}"
    );
    assert_eq!(runs(c).len(), 2, "a second attempt ran:\n{}", c.log());
    assert!(c
        .log()
        .contains("Attempt 2 to execute fence_ipmilan (reboot)"));
}

/// A slow BMC (every answer held back 700 ms by a proxy, longer than the
/// first retransmission wait): fenced once, exactly one off and one on.
fn slow_bmc(c: &Cluster) {
    let sim = IpmiSim::start_at(own_loopback(), free_port(), USER, PASSWORD, true, None);
    let proxy = UdpProxy::start_between(
        own_loopback(),
        Some(SocketAddrV4::new(sim.host, sim.port)),
        &[],
        &["--delay", "700ms"],
    );
    add_device(
        c,
        "fk-node06",
        &ipmi_params(proxy.host, proxy.port, PASSWORD, "node06"),
        None,
    );
    assert!(c.wait_started("fk-node06", Duration::from_secs(90)));
    let r = stonith_admin(c, &["--reboot", "node06"]);
    assert_eq!(r.code, Some(0), "{r}\n{}", proxy.log());
    assert_eq!(sim.ops(), ["set power 0", "set power 1"]);
}

/// One device, two nodes: `pcmk_host_map` gives each node's BMC address as
/// the plug, `port_as_ip` makes it the address; each reboot reaches its
/// own BMC only.
fn host_map(c: &Cluster) {
    let port = free_port();
    let a = IpmiSim::start_at(own_loopback(), port, USER, PASSWORD, true, None);
    let b = IpmiSim::start_at(own_loopback(), port, USER, PASSWORD, true, None);
    let mut params = ipmi_params(a.host, port, PASSWORD, "");
    params.retain(|(k, _)| k != "pcmk_host_list");
    params.push(("port_as_ip".into(), "1".into()));
    params.push((
        "pcmk_host_map".into(),
        format!("node07:{};node08:{}", a.host, b.host),
    ));
    add_device(c, "fk-map", &params, None);
    assert!(c.wait_started("fk-map", Duration::from_secs(60)));
    let r = stonith_admin(c, &["--list", "node08"]);
    assert!(r.stdout.contains("fk-map"), "{r}");
    let r = stonith_admin(c, &["--reboot", "node08"]);
    assert_eq!(r.code, Some(0), "{r}");
    assert_eq!(
        (a.ops().len(), b.ops()),
        (0, vec!["set power 0".into(), "set power 1".into()])
    );
    let r = stonith_admin(c, &["--reboot", "node07"]);
    assert_eq!(r.code, Some(0), "{r}");
    assert_eq!(a.ops(), ["set power 0", "set power 1"]);
    assert_eq!(b.ops().len(), 2);
}

/// The device's recurring monitor for 30 s: every run succeeds (each
/// is in the fencer's log) and switches nothing.
fn recurring_monitor(c: &Cluster) {
    let host = own_loopback();
    let sim = IpmiSim::start_at(host, free_port(), USER, PASSWORD, true, None);
    add_device(
        c,
        "fk-mon",
        &ipmi_params(host, sim.port, PASSWORD, "node09"),
        Some(MONITOR_EVERY),
    );
    assert!(c.wait_started("fk-mon", Duration::from_secs(60)));
    thread::sleep(MONITOR_FOR);
    let log = c.log();
    let runs: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.contains("(log_async_result)")
                && l.contains("Operation 'monitor' [")
                && l.contains(" using fk-mon ")
        })
        .collect();
    let ok = runs.iter().filter(|l| l.contains(" returned 0 ")).count();
    assert_eq!(ok, runs.len(), "every monitor succeeded: {runs:#?}");
    // One at the start, then one every 3 s: 10 in a quiet 30 s. Under
    // load Pacemaker's controller throttles and spaces them out (seen with
    // a 5 s period: a 21 s gap after the first, 9 in a minute, with the
    // load average above 2 on two cores), so the test asks for fewer than
    // half: a recurring monitor, not its exact period.
    assert!(ok >= 4, "{ok} monitors in {MONITOR_FOR:?}: {runs:#?}");
    assert!(sim.ops().is_empty() && sim.power());
    assert!(c.wait_started("fk-mon", Duration::from_secs(5)));
}

/// `fencekit check --pacemaker -o json` inside the cluster's namespace
/// (so that it reads the live CIB with `cibadmin -Q`): its exit code and
/// findings as (id, subject).
fn doctor(c: &Cluster, extra: &[&str]) -> (support::Run, Vec<(String, String)>) {
    let mut args = vec!["check", "--pacemaker", "-o", "json"];
    args.extend(extra);
    let r = c.tool(
        support::bin().to_str().unwrap(),
        &args,
        Duration::from_secs(90),
    );
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r}"));
    let f = v["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["subject"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (r, f)
}

fn set_property(c: &Cluster, name: &str, value: Option<&str>) {
    let mut a = vec!["--type", "crm_config", "--name", name];
    match value {
        Some(v) => a.extend(["--update", v]),
        None => a.push("--delete"),
    }
    let r = c.tool("crm_attribute", &a, Duration::from_secs(30));
    assert_eq!(r.code, Some(0), "{r}");
}

/// The configuration doctor on the live CIB, before any other scenario
/// adds devices: the bare cluster (node01 claimed by no device), then a
/// correct device (exit 0), a stonith-timeout below its worst case, and a
/// second device with a wrong password; the cluster is left as it was.
fn doctor_live(c: &Cluster) {
    let t0 = Instant::now();
    let pair = |id: &str, subject: &str| (id.to_string(), subject.to_string());
    let (r, f) = doctor(c, &[]);
    assert_eq!(r.code, Some(1), "{r}");
    assert!(f.contains(&pair("host-not-covered", "node01")), "{r}");

    let host = own_loopback();
    let sim = IpmiSim::start_at(host, free_port(), USER, PASSWORD, true, None);
    add_device(
        c,
        "fk-doctor",
        &ipmi_params(host, sim.port, PASSWORD, "node01"),
        Some("60s"),
    );
    assert!(c.wait_started("fk-doctor", Duration::from_secs(60)));
    // fence_ipmilan's defaults need 64 s for a reboot when every wait
    // lasts its bound (20 s login, 2 s power_wait and 20 s power_timeout
    // per power step), more than Pacemaker's default stonith-timeout of
    // 60 s, but a working BMC's reboot takes about 9 s: advice, exit 0 (the
    // resource as `pcs stonith create` makes it passes).
    let (r, f) = doctor(c, &[]);
    assert_eq!(
        f,
        vec![pair("stonith-timeout-below-worst-case", "fk-doctor")],
        "{r}"
    );
    assert_eq!(r.code, Some(0), "{r}");
    assert!(r.stdout.contains("= 64 s"), "{r}");
    // Below the working run: broken.
    set_property(c, "stonith-timeout", Some("5s"));
    let (r, f) = doctor(c, &[]);
    assert_eq!(
        f,
        vec![pair("stonith-timeout-too-short", "fk-doctor")],
        "{r}"
    );
    assert_eq!(r.code, Some(1), "{r}");
    set_property(c, "stonith-timeout", Some("70s"));
    let (r, f) = doctor(c, &[]);
    assert_eq!(f, vec![], "{r}");
    assert_eq!(r.code, Some(0), "{r}");
    assert!(r.stdout.contains("\"result\": \"ok\""), "{r}");

    // A second device for node01 whose password is wrong.
    let mut bad = ipmi_params(host, sim.port, "not-the-password", "node01");
    bad.push(("pcmk_host_check".into(), "static-list".into()));
    add_device(c, "fk-doctor-bad", &bad, None);
    let (r, f) = doctor(c, &[]);
    assert_eq!(r.code, Some(1), "{r}");
    assert!(
        f.contains(&pair("device-auth-failed", "fk-doctor-bad for node01")),
        "{r}"
    );
    assert!(!r.stdout.contains("not-the-password"), "{r}");

    for id in ["fk-doctor-bad", "fk-doctor"] {
        let r = c.tool(
            "cibadmin",
            &[
                "--delete",
                "--xml-text",
                &format!("<primitive id=\"{id}\"/>"),
            ],
            Duration::from_secs(30),
        );
        assert_eq!(r.code, Some(0), "{r}");
    }
    set_property(c, "stonith-timeout", None);
    assert!(sim.ops().is_empty() && sim.power(), "nothing switched");
    eprintln!(
        "doctor on the live CIB took {:.1}s",
        t0.elapsed().as_secs_f64()
    );
}

/// One scenario, against the shared cluster.
type Scenario = fn(&Cluster);

#[test]
fn fencekit_under_pacemakers_fencer() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    // First, alone: it reads the whole CIB.
    doctor_live(&cluster);
    let t0 = Instant::now();
    let scenarios: &[(&str, Scenario)] = &[
        ("metadata and validate", metadata_and_validate),
        ("reboot, fence, unfence", reboot_fence_unfence),
        ("wrong password", wrong_password),
        ("unreachable BMC", unreachable_bmc),
        ("slow BMC", slow_bmc),
        ("pcmk_host_map", host_map),
        ("recurring monitor", recurring_monitor),
    ];
    let failed: Vec<&str> = thread::scope(|s| {
        let handles: Vec<_> = scenarios
            .iter()
            .map(|(name, f)| {
                let c = &cluster;
                (
                    *name,
                    thread::Builder::new()
                        .name(format!("fencekit_under_pacemakers_fencer: {name}"))
                        .spawn_scoped(s, move || f(c))
                        .unwrap(),
                )
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|(name, h)| h.join().is_err().then_some(name))
            .collect()
    });
    eprintln!("scenarios took {:.1}s", t0.elapsed().as_secs_f64());
    if !failed.is_empty() {
        let log = cluster.log();
        let lines: Vec<&str> = log.lines().filter(|l| !l.contains("\tdebug: ")).collect();
        let tail = &lines[lines.len().saturating_sub(60)..];
        eprintln!("the cluster's log, last lines:\n{}", tail.join("\n"));
        panic!("failed: {failed:?} (each scenario's panic is above)");
    }
}
