//! Upstream `fence_virsh` and ours, side by side, with the same arguments
//! against the same real OpenSSH server and its state-keeping `virsh`
//! (`tests/peers/sshd_start.sh`): stdout, exit code and the domain state
//! each leaves behind must agree.
//!
//! One deliberate difference in the arguments: upstream reaches the peer
//! through `--ssh-path ssh-wrap` (whose ssh_config names the peer's
//! known_hosts and accepts nothing else); ours checks host keys itself and
//! is given the same file with `--ssh-known-hosts`. Upstream's own default
//! is to answer "yes" to an unknown key; ours refuses unless told (README).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{bin, peer_available, serial, Sshd, SSH_PASS, SSH_USER};

struct Pair {
    ours: PathBuf,
    _dir: tempfile::TempDir,
}

fn ours() -> Pair {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("fence_virsh");
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    Pair {
        ours: link,
        _dir: dir,
    }
}

fn run(prog: &Path, args: &[String]) -> support::Run {
    let mut c = Command::new(prog);
    c.args(args).env("NO_COLOR", "1").current_dir("/");
    support::run(c, Duration::from_secs(60))
}

fn common(s: &Sshd, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "--ip=127.0.0.1".into(),
        format!("--ipport={}", s.port),
        format!("--username={SSH_USER}"),
        format!("--password={SSH_PASS}"),
    ];
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

fn upstream_args(s: &Sshd, extra: &[&str]) -> Vec<String> {
    let mut a = common(s, extra);
    a.push(format!("--ssh-path={}", s.dir.join("ssh-wrap").display()));
    a
}

fn our_args(s: &Sshd, extra: &[&str]) -> Vec<String> {
    let mut a = common(s, extra);
    a.push(format!("--ssh-known-hosts={}", s.known_hosts().display()));
    a
}

/// Runs one case with both, each from the same starting state, and compares.
fn case(s: &Sshd, p: &Pair, name: &str, extra: &[&str], setup: &dyn Fn(&Sshd), watch: &str) {
    setup(s);
    let up = run(Path::new("/usr/sbin/fence_virsh"), &upstream_args(s, extra));
    let up_state = s.domstate(watch);
    setup(s);
    let us = run(&p.ours, &our_args(s, extra));
    let our_state = s.domstate(watch);
    assert_eq!(
        (up.code, up.stdout.trim()),
        (us.code, us.stdout.trim()),
        "{name}: upstream\n{up}\nours\n{us}"
    );
    assert_eq!(up_state, our_state, "{name}: resulting state of {watch}");
}

#[test]
fn fence_virsh_side_by_side_with_upstream() {
    let _one = serial();
    if !peer_available("fence_virsh") {
        return;
    }
    let Some(s) = Sshd::start() else { return };
    let p = ours();
    let start1 = |s: &Sshd| {
        s.ssh("virsh start node1 >/dev/null 2>&1; true");
    };
    let stop1 = |s: &Sshd| {
        s.ssh("virsh destroy node1 >/dev/null 2>&1; true");
    };
    let none = |_: &Sshd| {};
    case(
        &s,
        &p,
        "status on",
        &["--plug=node1", "-o", "status"],
        &start1,
        "node1",
    );
    case(
        &s,
        &p,
        "status off",
        &["--plug=node2", "-o", "status"],
        &none,
        "node2",
    );
    case(
        &s,
        &p,
        "off a running domain",
        &["--plug=node1", "-o", "off"],
        &start1,
        "node1",
    );
    case(
        &s,
        &p,
        "off an off domain",
        &["--plug=node1", "-o", "off"],
        &stop1,
        "node1",
    );
    case(&s, &p, "on", &["--plug=node1", "-o", "on"], &stop1, "node1");
    case(
        &s,
        &p,
        "reboot",
        &["--plug=node1", "-o", "reboot"],
        &start1,
        "node1",
    );
    case(
        &s,
        &p,
        "list-status",
        &["-o", "list-status"],
        &start1,
        "node1",
    );
    case(&s, &p, "list", &["-o", "list"], &none, "node1");
    case(
        &s,
        &p,
        "list-status, separator",
        &["-o", "list-status", "--separator=;"],
        &none,
        "node1",
    );
    case(
        &s,
        &p,
        "unknown domain",
        &["--plug=nosuch", "-o", "status"],
        &none,
        "node1",
    );
    case(
        &s,
        &p,
        "unknown domain, missing as off",
        &["--plug=nosuch", "--missing-as-off", "-o", "status"],
        &none,
        "node1",
    );
    case(&s, &p, "monitor", &["-o", "monitor"], &none, "node1");
    case(&s, &p, "no plug", &["-o", "status"], &none, "node1");
    // Wrong password: both fail (exit 1, nothing on stdout); ours fast.
    let bad = |args: Vec<String>| {
        args.into_iter()
            .map(|a| {
                if a.starts_with("--password=") {
                    "--password=wrong".into()
                } else {
                    a
                }
            })
            .collect::<Vec<String>>()
    };
    let up = run(
        Path::new("/usr/sbin/fence_virsh"),
        &bad(upstream_args(&s, &["--plug=node1", "-o", "status"])),
    );
    let us = run(
        &p.ours,
        &bad(our_args(&s, &["--plug=node1", "-o", "status"])),
    );
    assert_eq!(
        (up.code, us.code),
        (Some(1), Some(1)),
        "upstream\n{up}\nours\n{us}"
    );
    assert!(us.stdout.trim().is_empty());
    assert!(!us.stderr.contains("wrong"), "the password is not echoed");
    // The same first line (agents/virsh.toml, login_refused); ours then
    // names the user and the refusal.
    let first = |o: &str| support::error_lines(o).first().map(|l| l.to_string());
    assert_eq!(
        (first(&up.stderr), first(&us.stderr)),
        (
            Some("Unable to connect/login to fencing device".to_string()),
            Some("Unable to connect/login to fencing device".to_string())
        ),
        "upstream\n{up}\nours\n{us}"
    );
    assert!(us.stderr.contains("for user"), "{us}");
}
