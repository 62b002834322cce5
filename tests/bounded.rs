//! Every wait ends within its deadline or on SIGTERM (issue 17, "bounded
//! waits"): a password script that never exits, a DNS name that never
//! resolves (IPMI, Redfish, SSH and the agent), and a signal during the
//! power-on stagger. Each test measures the real binary from the outside.

mod support;

use fencekit::lab::fleet::LabSpec;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{InProcessLab, Run};

/// Runs `c` (with a hard limit far above what the test allows).
fn timed(mut c: Command) -> Run {
    c.stdin(Stdio::null()).process_group(0);
    support::run(c, Duration::from_secs(60))
}

fn fencekit(args: &[&str]) -> Command {
    let mut c = Command::new(support::bin());
    c.args(args)
        .env("FENCEKIT_PASSWORD", support::LAB_PASSWORD)
        .env("NO_COLOR", "1");
    c
}

/// No `sleep 61729` (the marker of this file's scripts) may outlive a run.
fn no_script_left() -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    !dir.flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains("61729"))
            .unwrap_or(false)
    })
}

#[test]
fn a_password_script_that_never_exits_ends_within_the_deadline() {
    let lab = InProcessLab::start(LabSpec::default());
    let target = format!("ipmi://admin@{}", lab.nodes[0].ipmi);
    let r = timed(fencekit(&[
        "status",
        &target,
        "--password-script",
        "sleep 61729 & sleep 61729",
        "--timeout",
        "2s",
        "-o",
        "json",
    ]));
    r.assert_code(1);
    assert!(
        r.elapsed < Duration::from_secs(4),
        "took {:?}\n{r}",
        r.elapsed
    );
    assert!(
        r.stdout.contains("the password script did not finish"),
        "{r}"
    );
    assert!(
        support::eventually(Duration::from_secs(2), no_script_left),
        "the script (or its child) outlived the run"
    );
    assert!(
        lab.nodes[0].bmc.log().is_empty(),
        "the BMC was not contacted"
    );
}

/// A UDP "name server" that never answers, and a resolv.conf naming it,
/// bind-mounted over /etc/resolv.conf in a private mount namespace.
struct BlackholeDns {
    _sock: std::net::UdpSocket,
    dir: tempfile::TempDir,
}

impl BlackholeDns {
    fn start() -> BlackholeDns {
        let ip = support::own_loopback();
        let sock = std::net::UdpSocket::bind((ip, 53)).expect("bind port 53 as root");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("resolv.conf"),
            format!("nameserver {ip}\noptions timeout:30 attempts:5\n"),
        )
        .unwrap();
        BlackholeDns { _sock: sock, dir }
    }

    fn wrap(&self, argv: &[String]) -> Command {
        let mut c = support::tool("unshare");
        c.args(["--mount", "sh", "-c"])
            .arg(
                "mount --make-rprivate / && mount --bind \"$0\" /etc/resolv.conf || exit 90; \
                 exec \"$@\"",
            )
            .arg(self.dir.path().join("resolv.conf"))
            .args(argv)
            .env("FENCEKIT_PASSWORD", support::LAB_PASSWORD)
            .env("NO_COLOR", "1");
        c
    }
}

#[test]
fn a_name_that_never_resolves_ends_within_the_deadline() {
    if !support::root_with(&["unshare"]) {
        return;
    }
    let dns = BlackholeDns::start();
    let name = "bmc.never-resolves.fencekit-test";
    let bin = support::bin().display().to_string();
    let agents = tempfile::tempdir().unwrap();
    let agent = agents.path().join("fence_ipmilan");
    std::os::unix::fs::symlink(support::bin(), &agent).unwrap();
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "IPMI",
            vec![bin.clone(), "status".into(), format!("ipmi://admin@{name}")],
        ),
        (
            "Redfish",
            vec![
                bin.clone(),
                "status".into(),
                format!("redfish://admin@{name}/redfish/v1/Systems/1"),
                "--ssl-insecure".into(),
            ],
        ),
        (
            "SSH",
            vec![
                bin.clone(),
                "status".into(),
                format!("ssh://root@{name}/virsh/vm1"),
                "--ssh-accept-new".into(),
            ],
        ),
    ];
    for (what, mut argv) in cases {
        argv.extend(["--timeout", "2s", "--login-timeout", "2s", "-o", "json"].map(String::from));
        let t = Instant::now();
        let r = timed(dns.wrap(&argv));
        assert_ne!(
            r.code,
            Some(90),
            "{what}: cannot bind-mount resolv.conf\n{r}"
        );
        assert_eq!(r.code, Some(1), "{what}\n{r}");
        assert!(
            t.elapsed() < Duration::from_secs(4),
            "{what}: a name that never resolves held the run for {:?}\n{r}",
            t.elapsed()
        );
        assert!(r.stdout.contains("\"ok\": false"), "{what}\n{r}");
    }
    let t = Instant::now();
    let r = timed(dns.wrap(&[
        agent.display().to_string(),
        format!("--ip={name}"),
        "--username=admin".into(),
        "--password=lab".into(),
        "--lanplus".into(),
        "--action=status".into(),
        "--login-timeout=2".into(),
        "--power-timeout=2".into(),
    ]));
    assert_eq!(r.code, Some(1), "fence_ipmilan\n{r}");
    assert!(
        t.elapsed() < Duration::from_secs(6),
        "fence_ipmilan: {:?}\n{r}",
        t.elapsed()
    );
}

#[test]
fn sigterm_during_a_stagger_ends_the_run_at_once() {
    let lab = InProcessLab::start(LabSpec {
        nodes: 3,
        power_on: false,
        redfish: None,
        ..LabSpec::default()
    });
    let targets: Vec<String> = lab
        .nodes
        .iter()
        .map(|n| format!("ipmi://admin@{}", n.ipmi))
        .collect();
    let mut c = fencekit(&["on", "--stagger", "20s", "-o", "jsonl", "--power-wait", "0"]);
    c.args(&targets)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = c.spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                if v["event"] == "done" && tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    // Readiness: node 1's result is out; nodes 2 and 3 are in their stagger.
    let first = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("node 1 finished");
    assert_eq!(first["ok"], true, "{first}");
    let sent = Instant::now();
    support::kill_group(pid, "TERM");
    let mut rest = Vec::new();
    while rest.len() < 2 {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(v) => rest.push(v),
            Err(_) => {
                support::kill_group(pid, "KILL");
                panic!("results missing 10 s after SIGTERM, in a 20 s stagger: {rest:?}");
            }
        }
    }
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?} after SIGTERM");
    assert_eq!(status.code(), Some(1));
    for r in &rest {
        assert_eq!(r["error_kind"], "interrupted", "{r}");
        assert!(r["error"].as_str().unwrap().contains("--stagger"), "{r}");
    }
    assert!(!lab.nodes[1].bmc.is_on() && !lab.nodes[2].bmc.is_on());
    assert_eq!(lab.nodes[1].bmc.log(), Vec::<&str>::new());
}
