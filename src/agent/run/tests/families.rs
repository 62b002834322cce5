//! fence_redfish and fence_virsh through the shared front, in-process, with
//! the simulated device of `super`: option mapping, upstream's sequences and
//! output, listing, and fencekit's deliberate differences (a refused reset
//! is a failure; the plug never picks a Redfish system).

use super::*;
use crate::redfish::config::{RedfishConfig, TlsTrust};
use crate::ssh::hostkey::HostKeyPolicy;

struct Ran {
    out: Captured,
    cfg: Option<DeviceConfig>,
}

fn run_dev(name: &str, args: &[&str], stdin: &str, sim: &Sim) -> Ran {
    let mut cfg = None;
    let out = capture(|o, e| {
        let args = args.iter().map(OsString::from).collect();
        run_with_device(
            name,
            args,
            stdin.as_bytes(),
            o,
            e,
            &AgentEnv::plain(),
            |c| {
                cfg = Some(c);
                Ok(sim.clone())
            },
        )
    });
    Ran { out, cfg }
}

fn redfish_cfg(r: &Ran) -> RedfishConfig {
    match &r.cfg {
        Some(c) if c.as_any().is::<RedfishConfig>() => {
            c.as_any().downcast_ref::<RedfishConfig>().unwrap().clone()
        }
        other => panic!("not a Redfish configuration: {other:?}\n{}", r.out.stderr),
    }
}

fn virsh_cfg(r: &Ran) -> crate::ssh::agent::VirshConfig {
    match &r.cfg {
        Some(c) if c.as_any().is::<crate::ssh::agent::VirshConfig>() => c
            .as_any()
            .downcast_ref::<crate::ssh::agent::VirshConfig>()
            .unwrap()
            .clone(),
        other => panic!("not a virsh configuration: {other:?}\n{}", r.out.stderr),
    }
}

const RF: &[&str] = &[
    "-a",
    "127.0.0.1",
    "-l",
    "admin",
    "-p",
    "fencepass",
    "--power-wait=0",
    "--stonith-status-sleep=0",
];

fn rf(extra: &[&str]) -> Vec<&'static str> {
    RF.iter()
        .chain(extra)
        .map(|s| &*Box::leak(s.to_string().into_boxed_str()))
        .collect()
}

#[test]
fn redfish_runs_upstreams_sequences() {
    let sim = Sim::new(true);
    let r = run_dev("fence_redfish", &rf(&["-o", "status"]), "", &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "Status: ON\n"),
        "{}",
        r.out.stderr
    );
    let c = redfish_cfg(&r);
    assert_eq!(c.base_url(), "https://127.0.0.1:443");
    assert_eq!(
        c.tls,
        TlsTrust::Verify { ca_cert: None },
        "verified unless told otherwise"
    );
    let r = run_dev("fence_redfish", &rf(&["-o", "reboot"]), "", &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "Success: Rebooted\n")
    );
    assert_eq!(
        sim.calls(),
        vec!["status", "status", "off", "status", "on", "status"],
        "reboot is off then on, both observed (never a single restart)"
    );
    let r = run_dev("fence_redfish", &rf(&["-o", "off"]), "", &sim);
    assert_eq!(r.out.stdout, "Success: Powered OFF\n");
    let r = run_dev("fence_redfish", &rf(&["-o", "off"]), "", &sim);
    assert_eq!(r.out.stdout, "Success: Already OFF\n");
    let r = run_dev("fence_redfish", &rf(&["-o", "status"]), "", &sim);
    assert_eq!((r.out.code, r.out.stdout.as_str()), (2, "Status: OFF\n"));
    let sim = Sim::new(true);
    let r = run_dev("fence_redfish", &rf(&["-o", "diag"]), "", &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "Success: Rebooted\n")
    );
    assert_eq!(sim.calls(), vec!["status", "diag"]);
}

#[test]
fn redfish_refused_reset_is_a_failure_unlike_upstream() {
    // Upstream ignores the POST's answer and prints "Success: Rebooted" for
    // a diag the service refused (sushy answers Nmi with 501); fencekit
    // reports the refusal.
    let sim = Sim::new(true);
    sim.st().command_error = Some(ErrorKind::DeviceError);
    let r = run_dev("fence_redfish", &rf(&["-o", "diag"]), "", &sim);
    assert_eq!((r.out.code, r.out.stdout.as_str()), (1, ""));
    assert!(
        r.out.stderr.contains("simulated http 501"),
        "{}",
        r.out.stderr
    );
    let r = run_dev("fence_redfish", &rf(&["-o", "off"]), "", &sim);
    assert_eq!(r.out.code, 1);
    assert!(
        r.out
            .stderr
            .contains("Failed: Timed out waiting to power OFF"),
        "{}",
        r.out.stderr
    );
}

#[test]
fn redfish_options_map_as_upstream() {
    let sim = Sim::new(true);
    let r = run_dev(
        "fence_redfish",
        &[
            "--ip=127.0.0.1:8443",
            "--username=admin",
            "--password=pw",
            "--ssl-insecure",
            "--systems-uri=/redfish/v1/Systems/1",
            "--redfish-uri=/rf",
            "--action=status",
            "--gnutlscli-path=/x",
        ],
        "",
        &sim,
    );
    assert_eq!(r.out.code, 0, "{}", r.out.stderr);
    let c = redfish_cfg(&r);
    assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", 8443));
    assert_eq!(c.tls, TlsTrust::Insecure);
    assert_eq!(c.systems_uri.as_deref(), Some("/redfish/v1/Systems/1"));
    assert_eq!(c.redfish_uri, "/rf");

    // Pacemaker's stdin: plug=<node> is ignored (it never picks a system),
    // ssl_insecure=0 still means insecure (upstream's presence rule), and the
    // deprecated keys and systems-uri spelling work.
    let stdin = "action=status\nipaddr=10.1.1.1\nlogin=admin\npasswd=pw\nnodename=n1\n\
                 plug=n1\nssl_insecure=0\nsystems-uri=/redfish/v1/Systems/2\nipport=8000\n";
    let r = run_dev("fence_redfish", &[], stdin, &sim);
    assert_eq!((r.out.code, r.out.stderr.as_str()), (0, ""));
    let c = redfish_cfg(&r);
    assert_eq!(c.base_url(), "https://10.1.1.1:8000");
    assert_eq!(c.tls, TlsTrust::Insecure);
    assert_eq!(c.plug, None);
    assert_eq!(c.systems_uri.as_deref(), Some("/redfish/v1/Systems/2"));

    let r = run_dev(
        "fence_redfish",
        &[
            "--port-as-ip",
            "-n",
            "10.2.2.2",
            "-l",
            "u",
            "-p",
            "p",
            "-o",
            "status",
        ],
        "",
        &sim,
    );
    assert_eq!(redfish_cfg(&r).host, "10.2.2.2");
}

#[test]
fn redfish_parse_and_validation_errors_exit_1() {
    let env = AgentEnv::plain();
    for (args, msg) in [
        (
            vec!["-a", "h", "-l", "u", "-p", "p", "-m", "cycle"],
            "Parse error: option -m not recognized",
        ),
        (
            vec!["-a", "h", "-l", "u", "-p", "p", "-n", "node1"],
            "Parser error: option -n/--plug is not recognized",
        ),
        (
            vec!["-a", "h", "-l", "u", "-p", "p", "--ssl-insecure=1"],
            "Parse error: option --ssl-insecure must not have an argument",
        ),
        (
            vec!["-a", "h", "-l", "u", "-p", "p", "--separator=;"],
            "Parse error: option --separator not recognized",
        ),
        (
            vec!["-a", "h", "-p", "p", "-o", "status"],
            "Failed: You have to set login name",
        ),
        (
            vec!["-a", "h", "-l", "u", "-o", "status"],
            "Failed: You have to enter password or password script",
        ),
        (
            vec!["-l", "u", "-p", "p", "-o", "status"],
            "Failed: You have to enter fence address",
        ),
    ] {
        let r = run_captured("fence_redfish", &args, "", &env);
        assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{args:?}");
        assert!(
            r.stderr.contains(&format!(" ERROR: {msg}\n")),
            "{args:?}: {}",
            r.stderr
        );
    }
    let ok = run_captured(
        "fence_redfish",
        &["-a", "h", "-l", "u", "-p", "p", "-o", "validate-all"],
        "",
        &env,
    );
    assert_eq!(
        (ok.code, ok.stdout.as_str(), ok.stderr.as_str()),
        (0, "", "")
    );
    for (extra, msg) in [
        (vec!["--systems-uri=Systems/1"], "must be an absolute path"),
        (vec!["--ca-cert=/nonexistent/ca.pem"], "/nonexistent/ca.pem"),
        (vec!["--ssl-fingerprint=xyz"], "not a SHA-256 fingerprint"),
        (vec!["-a", "h:0"], "not between 1 and 65535"),
    ] {
        let mut args = vec!["-a", "h", "-l", "u", "-p", "p", "-o", "validate-all"];
        args.extend(extra.iter().copied());
        let r = run_captured("fence_redfish", &args, "", &env);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(r.stderr.contains(msg), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(" ERROR: validate-all failed\n"),
            "{args:?}"
        );
    }
}

#[test]
fn redfish_lists_the_systems_instead_of_a_notice() {
    let sim = Sim::new(true);
    sim.st().plugs = vec![
        PlugEntry {
            id: "/redfish/v1/Systems/1".into(),
            alias: "node1".into(),
            state: Some(PowerState::On),
        },
        PlugEntry {
            id: "/redfish/v1/Systems/2".into(),
            alias: String::new(),
            state: None,
        },
    ];
    let r = run_dev("fence_redfish", &rf(&["-o", "list"]), "", &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "/redfish/v1/Systems/1,node1\n/redfish/v1/Systems/2,\n"),
        "{}",
        r.out.stderr
    );
    let r = run_dev("fence_redfish", &rf(&["-o", "list-status"]), "", &sim);
    assert_eq!(
        r.out.stdout,
        "/redfish/v1/Systems/1,node1,on\n/redfish/v1/Systems/2,,UNKNOWN\n"
    );
    assert!(sim.st().closed);
    sim.st().status_error = Some(ErrorKind::PasswordInvalid);
    let r = run_dev("fence_redfish", &rf(&["-o", "list"]), "", &sim);
    assert_eq!((r.out.code, r.out.stdout.as_str()), (1, ""));
    assert!(r
        .out
        .stderr
        .contains("Failed: Unable to obtain correct plug status"));
}

#[test]
fn redfish_never_prints_the_password() {
    let sim = Sim::new(true);
    let r = run_dev(
        "fence_redfish",
        &[
            "-a",
            "h",
            "-l",
            "admin",
            "-p",
            "hunter2",
            "-o",
            "reboot",
            "-vvv",
            "--power-wait=0",
            "--stonith-status-sleep=0",
        ],
        "",
        &sim,
    );
    assert_eq!(r.out.code, 0);
    assert!(r.out.stderr.contains("password [set]"), "{}", r.out.stderr);
    assert!(!r.out.stderr.contains("hunter2") && !r.out.stdout.contains("hunter2"));
}

const VS: &[&str] = &["-a", "127.0.0.1", "-l", "root", "-p", "pw"];

fn vs(extra: &[&str]) -> Vec<&'static str> {
    VS.iter()
        .chain(extra)
        .map(|s| &*Box::leak(s.to_string().into_boxed_str()))
        .collect()
}

#[test]
fn virsh_validates_like_upstream() {
    let env = AgentEnv::plain();
    for (args, msg) in [
        (
            vs(&["-o", "status"]),
            "Failed: You have to enter plug number or machine identification",
        ),
        (
            vec!["-a", "h", "-l", "u", "-n", "vm1"],
            "Failed: You have to enter password, password script or identity file",
        ),
        (
            vec!["-a", "h", "-p", "p", "-n", "vm1"],
            "Failed: You have to set login name",
        ),
        (
            vs(&["-n", "vm1", "-k", "/nonexistent/id"]),
            "Failed: Identity file /nonexistent/id does not exist",
        ),
        (
            vs(&["-n", "vm1", "--lanplus"]),
            "Parse error: option --lanplus not recognized",
        ),
        (
            vs(&["-n", "vm1", "-o", "diag"]),
            "Failed: Unrecognised action 'diag'",
        ),
        (
            vs(&["-n", "vm1", "--ssh=1"]),
            "Parse error: option --ssh must not have an argument",
        ),
    ] {
        let r = run_captured("fence_virsh", &args, "", &env);
        assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{args:?}");
        assert!(
            r.stderr.contains(&format!(" ERROR: {msg}\n")),
            "{args:?}: {}",
            r.stderr
        );
    }
    // nodename does not stand in for the plug (upstream neither).
    let r = run_captured(
        "fence_virsh",
        &[],
        "action=status\nip=h\nlogin=root\npasswd=pw\nnodename=vm1\n",
        &env,
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("You have to enter plug number"),
        "{}",
        r.stderr
    );
    for args in [
        vs(&["-n", "vm1", "-o", "validate-all"]),
        vs(&["-n", "vm1", "-o", "monitor", "-o", "VALIDATE-ALL"]),
    ] {
        let r = run_captured("fence_virsh", &args, "", &env);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
    }
}

#[test]
fn virsh_options_map_to_the_ssh_settings() {
    let sim = Sim::new(true);
    let stdin = "action=status\nipaddr=127.0.0.1\nlogin=root\npasswd=pw\nport=0E4E3F2A1B2C4D5E8F90A1B2C3D4E5F6\n\
                 secure=0\nsudo=1\nmissing_as_off=1\nssh_options=-o StrictHostKeyChecking=accept-new\n\
                 cmd_prompt=#\nssh_path=/x\n";
    let r = run_dev("fence_virsh", &[], stdin, &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str(), r.out.stderr.as_str()),
        (0, "Status: ON\n", "")
    );
    let c = virsh_cfg(&r);
    assert_eq!(
        c.domain.as_deref(),
        Some("0e4e3f2a-1b2c-4d5e-8f90-a1b2c3d4e5f6")
    );
    assert_eq!(c.sudo.as_deref(), Some("/usr/bin/sudo"));
    assert!(c.missing_as_off);
    assert_eq!(c.host_keys, HostKeyPolicy::AcceptNew(None));
    // Default: strict host keys (upstream accepts any unknown key).
    let r = run_dev("fence_virsh", &vs(&["-n", "vm1", "-o", "status"]), "", &sim);
    assert_eq!(virsh_cfg(&r).host_keys, HostKeyPolicy::KnownHosts(None));
}

#[test]
fn virsh_lists_domains_in_upstreams_format() {
    let sim = Sim::new(true);
    sim.st().plugs = vec![
        PlugEntry {
            id: "vm1".into(),
            alias: String::new(),
            state: Some(PowerState::On),
        },
        PlugEntry {
            id: "vm2".into(),
            alias: String::new(),
            state: Some(PowerState::Off),
        },
    ];
    let r = run_dev("fence_virsh", &vs(&["-o", "list"]), "", &sim);
    assert_eq!(
        (r.out.code, r.out.stdout.as_str()),
        (0, "vm1,\nvm2,\n"),
        "{}",
        r.out.stderr
    );
    let r = run_dev(
        "fence_virsh",
        &vs(&["-o", "list-status", "-C", ";"]),
        "",
        &sim,
    );
    assert_eq!(r.out.stdout, "vm1;;on\nvm2;;off\n");
    // monitor lists (proving the hypervisor answers) and prints nothing.
    let r = run_dev("fence_virsh", &vs(&["-o", "monitor"]), "", &sim);
    assert_eq!((r.out.code, r.out.stdout.as_str()), (0, ""));
    assert_eq!(sim.calls(), vec!["list", "list", "list"]);
}

#[test]
fn virsh_validate_all_checks_the_ssh_settings() {
    let env = AgentEnv::plain();
    let r = run_captured(
        "fence_virsh",
        &vs(&[
            "-n",
            "vm1",
            "-o",
            "validate-all",
            "--ssh-host-key=SHA256:!!",
        ]),
        "",
        &env,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(" ERROR: validate-all failed\n"),
        "{}",
        r.stderr
    );
    let r = run_captured(
        "fence_virsh",
        &vs(&["-n", "-vm1", "-o", "validate-all"]),
        "",
        &env,
    );
    assert_eq!(r.code, 1, "a plug the SSH driver refuses: {}", r.stderr);
}

#[test]
fn refused_credentials_print_the_family_line_for_actions_and_lists() {
    let stdin = |action: &str| {
        format!("action={action}\nipaddr=127.0.0.1\nlogin=root\npasswd=pw\nport=node1\n")
    };
    let first_error = |stderr: &str| {
        stderr
            .lines()
            .find_map(|l| l.split_once(" ERROR: ").map(|(_, m)| m.to_string()))
    };
    let login = "Unable to connect/login to fencing device";
    for action in ["status", "off", "list", "monitor"] {
        let sim = Sim::new(true);
        sim.st().status_error = Some(ErrorKind::PasswordInvalid);
        let r = run_dev("fence_virsh", &[], &stdin(action), &sim);
        assert_eq!(r.out.code, 1, "{action}: {}", r.out.stderr);
        assert_eq!(
            first_error(&r.out.stderr).as_deref(),
            Some(login),
            "{action}: {}",
            r.out.stderr
        );
        assert!(r.out.stderr.contains(" ERROR: cause: "), "{}", r.out.stderr);
        assert!(!r.out.stderr.contains("pw"), "{}", r.out.stderr);
        // A refused privilege: fence_virsh declares no line for it.
        let sim = Sim::new(true);
        sim.st().status_error = Some(ErrorKind::PrivilegeNotObtained);
        let r = run_dev("fence_virsh", &[], &stdin(action), &sim);
        assert_eq!(
            first_error(&r.out.stderr).as_deref(),
            Some("Failed: Unable to obtain correct plug status or plug is not available"),
            "{action}: {}",
            r.out.stderr
        );
    }
}
