//! The agent's options through the shared front, with the simulated device
//! of `super`: stdin and argv, upstream's parse errors, verbosity, the
//! password script, secrets kept out of the output, `validate-all` and the
//! documentation actions.

use super::*;

#[test]
fn stdin_is_read_only_without_arguments() {
    let sim = Sim::new(true);
    let stdin = "# pacemaker\naction=status\nipaddr=10.0.0.9\nlogin=admin\npasswd=secret\n\
                 nodename=node1\nplug=node1\nlanplus=1\nprivlvl=operator\n";
    let r = run_env("fence_ipmilan", &[], stdin, &sim, &AgentEnv::plain());
    assert_eq!(
        (r.out.code, r.out.stdout.as_str(), r.out.stderr.as_str()),
        (0, "Status: ON\n", "")
    );
    let cfg = r.cfg.unwrap();
    assert_eq!(
        (cfg.host.as_str(), cfg.username.as_str()),
        ("10.0.0.9", "admin")
    );
    assert_eq!(cfg.password.expose(), b"secret");
    assert_eq!(cfg.version, crate::ipmi::config::Version::Lanplus);
    assert_eq!(cfg.privilege, crate::ipmi::config::Privilege::Operator);

    let r = run_env(
        "fence_ipmilan",
        &["-o", "status"],
        "ip=10.0.0.9\n",
        &sim,
        &AgentEnv::plain(),
    );
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains(" ERROR: Failed: You have to enter fence address\n"));
    assert!(r.out.stderr.contains(" ERROR: Please use '-h' for usage\n"));
}

#[test]
fn empty_stdin_fails_validation() {
    let sim = Sim::new(true);
    let r = run_env("fence_ipmilan", &[], "", &sim, &AgentEnv::plain());
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains("Failed: You have to enter fence address"));
    assert!(sim.calls().is_empty());
}

#[test]
fn plug_needs_port_as_ip_on_the_command_line_only() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &["-a", "h", "-o", "status", "-n", "node1"],
        &sim,
    );
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains(" ERROR: Parser error: option -n/--plug is not recognized\n"));
    let r = run_sim(
        "fence_ipmilan",
        &["--port-as-ip", "-n", "10.1.1.1", "-o", "status"],
        &sim,
    );
    assert_eq!(r.out.code, 0, "{}", r.out.stderr);
    assert_eq!(r.cfg.unwrap().host, "10.1.1.1");
    // On stdin, port_as_ip works by presence: even =0 turns it on.
    let r = run_env(
        "fence_ipmilan",
        &[],
        "action=status\nport_as_ip=0\nport=10.2.2.2\n",
        &sim,
        &AgentEnv::plain(),
    );
    assert_eq!(r.cfg.unwrap().host, "10.2.2.2");
}

#[test]
fn docs_actions_never_make_a_driver() {
    for args in [
        vec!["-o", "metadata"],
        vec!["-o", "meta-data"],
        vec!["-o", "manpage"],
        vec!["-h"],
        vec!["--help", "-o", "bogus"],
        vec!["-V"],
        vec!["-o", "bogus", "--version"],
    ] {
        let mut made = false;
        let out = capture(|o, e| {
            let a = args.iter().map(OsString::from).collect();
            run_with_driver("fence_ilo4", a, &b""[..], o, e, &AgentEnv::plain(), |_| {
                made = true;
                Ok(Sim::new(true))
            })
        });
        assert!(!made, "{args:?}");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{args:?}");
        assert!(!out.stdout.is_empty());
    }
    let r = run_captured("fence_ilo4", &["-V"], "", &AgentEnv::plain());
    assert_eq!(r.stdout, "4.12.1\n");
    let r = run_captured("fence_ilo4", &[], "action=meta-data\n", &AgentEnv::plain());
    assert!(r
        .stdout
        .starts_with("<?xml version=\"1.0\" ?>\n<resource-agent name=\"fence_ilo4\""));
    let r = run_captured("fence_idrac", &["-h"], "", &AgentEnv::plain());
    assert!(r.stdout.starts_with("Usage:\n\tfence_idrac [options]\n"));
}

#[test]
fn validate_all_checks_input_and_never_contacts_the_device() {
    let env = AgentEnv::plain();
    let ok = run_captured(
        "fence_ipmilan",
        &["-a", "h", "-o", "validate-all"],
        "",
        &env,
    );
    assert_eq!(
        (ok.code, ok.stdout.as_str(), ok.stderr.as_str()),
        (0, "", "")
    );
    for (args, msg) in [
        (
            vec!["-o", "validate-all"],
            "Failed: You have to enter fence address",
        ),
        (
            vec!["-a", "h", "-o", "validate-all", "--privlvl=foo"],
            "valid choice for --privlvl",
        ),
        (
            vec!["-a", "h", "-o", "validate-all", "--power-timeout=abc"],
            "not a valid time in seconds",
        ),
        (
            vec!["-a", "h", "-o", "validate-all", "-P", "-C", "1"],
            "cipher suite '1' is not supported",
        ),
        (vec!["-o", "validate-all", "--target=0x20"], "--target"),
    ] {
        let r = run_captured("fence_ipmilan", &args, "", &env);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(r.stderr.contains(msg), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(" ERROR: validate-all failed\n"),
            "{args:?}"
        );
        assert!(
            r.stderr.ends_with(" ERROR: Please use '-h' for usage\n"),
            "{args:?}"
        );
    }
    // Every problem is reported, not only the first.
    let r = run_captured(
        "fence_ipmilan",
        &["-o", "validate-all", "-L", "x", "--delay=y"],
        "",
        &env,
    );
    assert_eq!(
        r.stderr.matches(" ERROR: Failed: ").count(),
        3,
        "{}",
        r.stderr
    );
    let r = run_captured("fence_ipmilan", &["-a", "h", "-o", "bogus"], "", &env);
    assert_eq!(r.code, 1);
    assert!(r
        .stderr
        .contains(" ERROR: Failed: Unrecognised action 'bogus'\n"));
}

#[test]
fn parse_errors_exit_1_with_upstream_messages() {
    let env = AgentEnv::plain();
    for (args, msg) in [
        (
            vec!["--pass", "x"],
            "Parse error: option --pass not a unique prefix",
        ),
        (
            vec!["--lanplus=1", "-a", "h"],
            "Parse error: option --lanplus must not have an argument",
        ),
        (
            vec!["--bogus"],
            "Parse error: option --bogus not recognized",
        ),
        (vec!["-a"], "Parse error: option -a requires argument"),
        (
            vec!["--separator=,"],
            "Parse error: option --separator not recognized",
        ),
    ] {
        let r = run_captured("fence_ipmilan", &args, "", &env);
        assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{args:?}");
        assert!(
            r.stderr.contains(&format!(" ERROR: {msg}\n")),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn far_style_arguments_work_in_any_order() {
    let sim = Sim::new(true);
    let orders: [&[&str]; 3] = [
        &[
            "--password=x",
            "--lanplus",
            "--ipport=6234",
            "--action=status",
            "--ip=h",
            "--username=admin",
        ],
        &[
            "--username=admin",
            "--action=status",
            "--ip=h",
            "--lanplus",
            "--ipport=6234",
            "--password=x",
        ],
        &[
            "--action",
            "status",
            "--ip",
            "h",
            "--lanplus",
            "--password",
            "-dash",
            "--username",
            "admin",
            "--ipport",
            "6234",
        ],
    ];
    for args in orders {
        let r = run_sim("fence_ipmilan", args, &sim);
        assert_eq!(
            (r.out.code, r.out.stdout.as_str()),
            (0, "Status: ON\n"),
            "{args:?}: {}",
            r.out.stderr
        );
        let cfg = r.cfg.unwrap();
        assert_eq!(
            (cfg.port, cfg.version),
            (6234, crate::ipmi::config::Version::Lanplus)
        );
    }
    let r = run_sim(
        "fence_ipmilan",
        &["--action", "status", "--ip", "h", "--password", "-dash"],
        &sim,
    );
    assert_eq!(r.cfg.unwrap().password.expose(), b"-dash");
}

#[test]
fn positional_words_only_warn() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &["-a", "h", "-o", "status", "foo", "it's"],
        &sim,
    );
    assert_eq!(r.out.code, 0);
    assert!(
        r.out
            .stderr
            .contains(" WARNING: Unused arguments on command line: ['foo', \"it's\"]\n"),
        "{}",
        r.out.stderr
    );
}

#[test]
fn secrets_never_reach_the_output() {
    let sim = Sim::new(true);
    let r = run_fast(
        &[
            "-a", "h", "-l", "admin", "-p", "hunter2", "-o", "reboot", "-vvv",
        ],
        &sim,
    );
    assert_eq!(r.out.code, 0);
    assert!(r.out.stderr.contains(" DEBUG: "), "verbose shows details");
    assert!(r.out.stderr.contains("password [set]"), "{}", r.out.stderr);
    assert!(!r.out.stderr.contains("hunter2") && !r.out.stdout.contains("hunter2"));
}

#[test]
fn the_password_script_is_run_and_right_stripped() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &[
            "-a",
            "h",
            "-o",
            "status",
            "-p",
            "ignored",
            "-S",
            "printf 's3cret  \\n\\n'; echo noise >&2",
        ],
        &sim,
    );
    assert_eq!(r.out.code, 0, "{}", r.out.stderr);
    assert_eq!(r.cfg.unwrap().password.expose(), b"s3cret");
    assert!(!r.out.stderr.contains("noise"));
}

#[test]
fn quiet_silences_stderr_and_the_debug_file_gets_the_log() {
    let sim = Sim::new(true);
    sim.st().status_error = Some(ErrorKind::StatusUnreadable);
    let r = run_fast(&["-a", "h", "-o", "status", "-q"], &sim);
    assert_eq!((r.out.code, r.out.stderr.as_str()), (1, ""));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("debug.log");
    let p = path.to_str().unwrap();
    let r = run_fast(&["-a", "h", "-o", "status", "-q", "-v", "-D", p], &sim);
    assert_eq!(r.out.stderr, "");
    let logged = std::fs::read_to_string(&path).unwrap();
    assert!(
        logged.contains(" DEBUG: ") && logged.contains("Failed: Unable to obtain"),
        "{logged}"
    );
    let r = run_fast(
        &["-a", "h", "-o", "status", "-D", "/nonexistent/dir/x.log"],
        &sim,
    );
    assert_eq!(r.out.code, 1);
    assert!(r
        .out
        .stderr
        .contains("Failed: Unable to create file /nonexistent/dir/x.log"));
}

#[test]
fn verbose_level_rules() {
    let sim = Sim::new(true);
    let r = run_env(
        "fence_ipmilan",
        &[],
        "action=status\nip=h\nverbose=0\n",
        &sim,
        &AgentEnv::plain(),
    );
    assert!(r.out.stderr.contains(
        " WARNING: Parse error: Ignoring option 'verbose' because it conflicts with verbose_level=0\n"
    ));
    assert!(!r.out.stderr.contains("DEBUG"));
    let r = run_env(
        "fence_ipmilan",
        &[],
        "action=status\nip=h\nverbose_level=2\n",
        &sim,
        &AgentEnv::plain(),
    );
    assert!(
        r.out.stderr.contains(" DEBUG: "),
        "verbose_level alone turns on debug"
    );
    let r = run_sim(
        "fence_ipmilan",
        &["-a", "h", "-o", "status", "--verbose-level=x"],
        &sim,
    );
    assert!(r
        .out
        .stderr
        .contains("must be an integer greater than or equal to 0"));
}

#[test]
fn ignored_compatibility_options_get_a_debug_line() {
    let sim = Sim::new(true);
    let r = run_sim(
        "fence_ipmilan",
        &[
            "-a",
            "h",
            "-o",
            "status",
            "-v",
            "--ipmitool-path=/x",
            "--use-sudo",
            "--ipmitool-timeout=5",
        ],
        &sim,
    );
    assert_eq!(r.out.code, 0);
    for o in ["--ipmitool-path", "--use-sudo"] {
        assert!(
            r.out.stderr.contains(&format!(" DEBUG: ignoring {o}: ")),
            "{o}: {}",
            r.out.stderr
        );
    }
    assert!(
        !r.out.stderr.contains("ignoring --sudo-path"),
        "defaults are not reported"
    );
    // --ipmitool-timeout is used: it bounds each IPMI request's wait
    assert!(
        !r.out.stderr.contains("ignoring --ipmitool-timeout"),
        "{}",
        r.out.stderr
    );
}

#[test]
fn list_prints_upstreams_notice() {
    let r = run_captured(
        "fence_ipmilan",
        &["-a", "h", "-o", "list-status"],
        "",
        &AgentEnv::plain(),
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "NOTICE: List option is not working on this device yet\n")
    );
}
