//! Upstream `fence_apc_snmp` / `fence_eaton_snmp` (Python + net-snmp's
//! snmpget/snmpset/snmpwalk) and ours, side by side, with the same
//! arguments against the same real agent: net-snmp's snmpd serving a
//! simulated APC rPDU / Eaton ePDU (`tests/peers/snmpd_start.sh`). Stdout,
//! exit code and the outlet state each leaves behind must agree, case by
//! case, for SNMP v1, v2c and v3 authPriv (SHA/AES and net-snmp's default
//! MD5/DES).
//!
//! Deliberate differences (docs/pdu.md), asserted as such below:
//! * an outlet the PDU does not have reads as unreadable (exit 1), not as
//!   "Status: OFF" / "Success: Already OFF" (upstream treats any answer other
//!   than "on" as off);
//! * list-status shows each outlet's state where upstream prints UNKNOWN.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{bin, peer_available, AgentOut, Snmpd, SNMP_AUTH_PASS, SNMP_PRIV_PASS};

const LIMIT: Duration = Duration::from_secs(60);

struct Ours {
    dir: tempfile::TempDir,
}

impl Ours {
    fn new() -> Ours {
        let dir = tempfile::tempdir().unwrap();
        for name in ["fence_apc_snmp", "fence_eaton_snmp"] {
            std::os::unix::fs::symlink(bin(), dir.path().join(name)).unwrap();
        }
        Ours { dir }
    }

    fn path(&self, agent: &str) -> PathBuf {
        self.dir.path().join(agent)
    }
}

fn exec(prog: &Path, args: &[String], stdin: Option<&str>) -> AgentOut {
    support::exec_agent(prog, args, stdin, LIMIT)
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The security settings compared, as fence-agents options.
fn securities() -> Vec<(&'static str, Vec<String>)> {
    vec![
        ("v1 (default)", vec![]),
        ("v2c", words(&["--snmp-version=2c", "--community=private"])),
        (
            "v3 authPriv SHA/AES",
            words(&[
                "--snmp-version=3",
                "--username=fenceSha",
                &format!("--password={SNMP_AUTH_PASS}"),
                "--snmp-auth-prot=SHA",
                "--snmp-sec-level=authPriv",
                "--snmp-priv-prot=AES",
                &format!("--snmp-priv-passwd={SNMP_PRIV_PASS}"),
            ]),
        ),
        (
            "v3 authPriv net-snmp defaults (MD5/DES, level from the passwords)",
            words(&[
                "--snmp-version=3",
                "--username=fenceMd5",
                &format!("--password={SNMP_AUTH_PASS}"),
                &format!("--snmp-priv-passwd={SNMP_PRIV_PASS}"),
            ]),
        ),
    ]
}

struct Case<'a> {
    name: &'a str,
    args: &'a [&'a str],
    /// Outlets that are off before the run (the rest are on).
    off: &'a [u64],
    /// Outlet whose resulting state is compared.
    watch: u64,
}

fn reset(peer: &Snmpd, n: u64, off: &[u64]) {
    let mut st = peer.state();
    st["on"] = serde_json::json!((1..=n).filter(|o| !off.contains(o)).collect::<Vec<_>>());
    st["refuse"] = serde_json::json!([]);
    peer.set_state(&st);
}

fn base(peer: &Snmpd) -> Vec<String> {
    vec!["--ip=127.0.0.1".into(), format!("--ipport={}", peer.port)]
}

/// Runs `c` with both agents from the same starting state; compares exit
/// code, stdout and the watched outlet's resulting state.
fn compare(
    agent: &str,
    ours: &Ours,
    peer: &Snmpd,
    outlets: u64,
    sec: &(&str, Vec<String>),
    c: &Case,
) {
    let mut args = base(peer);
    args.extend(sec.1.iter().cloned());
    args.extend(c.args.iter().map(|s| s.to_string()));
    reset(peer, outlets, c.off);
    let up = exec(&Path::new("/usr/sbin").join(agent), &args, None);
    let up_state = peer.is_on(c.watch);
    reset(peer, outlets, c.off);
    let us = exec(&ours.path(agent), &args, None);
    let our_state = peer.is_on(c.watch);
    let ctx = format!(
        "{agent} {} [{}]\nupstream ({:?}): {}{}\nours ({:?}): {}{}",
        c.name, sec.0, up.took, up.stdout, up.stderr, us.took, us.stdout, us.stderr
    );
    assert_eq!(
        (up.code, up.stdout.trim()),
        (us.code, us.stdout.trim()),
        "{ctx}"
    );
    assert_eq!(
        up_state, our_state,
        "resulting state of outlet {}: {ctx}",
        c.watch
    );
}

#[test]
fn fence_apc_snmp_side_by_side_with_upstream() {
    if !(peer_available("fence_apc_snmp") && peer_available("snmpget")) {
        return;
    }
    let Some(peer) = Snmpd::start("apc", 8) else {
        return;
    };
    let ours = Ours::new();
    let cases = [
        Case {
            name: "status on",
            args: &["--plug=3", "-o", "status"],
            off: &[],
            watch: 3,
        },
        Case {
            name: "status off",
            args: &["--plug=3", "-o", "status"],
            off: &[3],
            watch: 3,
        },
        Case {
            name: "off",
            args: &["--plug=3", "--action=off"],
            off: &[],
            watch: 3,
        },
        Case {
            name: "off when off",
            args: &["--plug=3", "--action=off"],
            off: &[3],
            watch: 3,
        },
        Case {
            name: "on",
            args: &["--plug=3", "--action=on"],
            off: &[3],
            watch: 3,
        },
        Case {
            name: "reboot",
            args: &["--plug=3", "--action=reboot"],
            off: &[],
            watch: 3,
        },
        Case {
            name: "reboot when off",
            args: &["--plug=3", "--action=reboot"],
            off: &[3],
            watch: 3,
        },
        Case {
            name: "off by outlet name",
            args: &["--plug=node05", "-o", "off"],
            off: &[],
            watch: 5,
        },
        Case {
            name: "switch:outlet",
            args: &["--plug=1:6", "-o", "off"],
            off: &[],
            watch: 6,
        },
        Case {
            name: "unknown outlet name",
            args: &["--plug=nosuch", "-o", "off"],
            off: &[],
            watch: 1,
        },
        Case {
            name: "list",
            args: &["-o", "list"],
            off: &[2],
            watch: 2,
        },
        Case {
            name: "monitor",
            args: &["-o", "monitor"],
            off: &[],
            watch: 1,
        },
    ];
    for sec in &securities() {
        for c in &cases {
            compare("fence_apc_snmp", &ours, &peer, 8, sec, c);
        }
    }

    // Pacemaker's way: no arguments, key=value lines on stdin.
    let stdin = format!(
        "ipaddr=127.0.0.1\nipport={}\nport=4\naction=off\nnodename=n4\n",
        peer.port
    );
    reset(&peer, 8, &[]);
    let up = exec(Path::new("/usr/sbin/fence_apc_snmp"), &[], Some(&stdin));
    reset(&peer, 8, &[]);
    let us = exec(&ours.path("fence_apc_snmp"), &[], Some(&stdin));
    assert_eq!(
        (up.code, up.stdout.trim()),
        (us.code, us.stdout.trim()),
        "stdin: {}\n{}",
        up.stderr,
        us.stderr
    );
    assert!(!peer.is_on(4));

    // list-status: same outlets and names; ours reads the states.
    reset(&peer, 8, &[2]);
    let mut args = base(&peer);
    args.extend(words(&["-o", "list-status"]));
    let up = exec(Path::new("/usr/sbin/fence_apc_snmp"), &args, None);
    let us = exec(&ours.path("fence_apc_snmp"), &args, None);
    assert_eq!((up.code, us.code), (Some(0), Some(0)));
    let cols = |s: &str, n: usize| {
        s.lines()
            .map(|l| l.split(',').take(n).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
    };
    assert_eq!(cols(&up.stdout, 2), cols(&us.stdout, 2));
    assert!(up.stdout.contains("2,node02,UNKNOWN"), "{}", up.stdout);
    assert!(
        us.stdout.contains("2,node02,off") && us.stdout.contains("1,node01,on"),
        "{}",
        us.stdout
    );

    // Deliberate difference: an outlet the PDU lacks (v2c answers
    // noSuchInstance). Upstream reads it as off and "fences" nothing.
    reset(&peer, 8, &[]);
    let mut args = base(&peer);
    args.extend(words(&["--snmp-version=2c", "--plug=99", "-o", "off"]));
    let up = exec(Path::new("/usr/sbin/fence_apc_snmp"), &args, None);
    let us = exec(&ours.path("fence_apc_snmp"), &args, None);
    assert_eq!(
        (up.code, up.stdout.trim()),
        (Some(0), "Success: Already OFF"),
        "{}",
        up.stderr
    );
    assert_eq!((us.code, us.stdout.trim()), (Some(1), ""), "{}", us.stderr);
    assert!(us.stderr.contains("99"), "{}", us.stderr);
}

/// Bad credentials: the same exit code and no stdout, without switching
/// anything; ours fails about as fast (v3: at once, on the agent's report).
#[test]
fn bad_credentials_side_by_side() {
    if !(peer_available("fence_apc_snmp") && peer_available("snmpget")) {
        return;
    }
    let Some(peer) = Snmpd::start("apc", 4) else {
        return;
    };
    let ours = Ours::new();
    let bad = [
        words(&[
            "--snmp-version=2c",
            "--community=badcommunity7",
            "--login-timeout=1",
            "--shell-timeout=1",
        ]),
        words(&[
            "--snmp-version=3",
            "--username=fenceSha",
            "--password=wrongpass1",
            "--snmp-auth-prot=SHA",
            "--snmp-priv-prot=AES",
            &format!("--snmp-priv-passwd={SNMP_PRIV_PASS}"),
        ]),
        words(&[
            "--snmp-version=3",
            "--username=nosuchuser",
            "--password=wrongpass1",
            "--snmp-auth-prot=SHA",
            "--snmp-sec-level=authNoPriv",
        ]),
    ];
    for extra in &bad {
        let mut args = base(&peer);
        args.extend(extra.iter().cloned());
        args.extend(words(&["--plug=1", "-o", "off"]));
        let up = exec(Path::new("/usr/sbin/fence_apc_snmp"), &args, None);
        let us = exec(&ours.path("fence_apc_snmp"), &args, None);
        assert_eq!(
            (up.code, up.stdout.trim()),
            (us.code, us.stdout.trim()),
            "{extra:?}\n{}\n{}",
            up.stderr,
            us.stderr
        );
        assert_eq!(us.code, Some(1));
        assert!(peer.is_on(1), "{extra:?}");
        assert!(
            us.took <= up.took + Duration::from_secs(2),
            "{extra:?}: ours {:?}, upstream {:?}",
            us.took,
            up.took
        );
        for secret in ["wrongpass1", "badcommunity7", SNMP_PRIV_PASS] {
            assert!(!us.stderr.contains(secret), "{}", us.stderr);
        }
    }
}

#[test]
fn fence_eaton_snmp_side_by_side_with_upstream() {
    if !(peer_available("fence_eaton_snmp") && peer_available("snmpget")) {
        return;
    }
    let Some(peer) = Snmpd::start("eaton", 8) else {
        return;
    };
    let ours = Ours::new();
    // power_wait defaults to 2 s for this agent: keep the cases few.
    let cases = [
        Case {
            name: "status on",
            args: &["--plug=3", "-o", "status"],
            off: &[],
            watch: 3,
        },
        Case {
            name: "status off",
            args: &["--plug=3", "-o", "status"],
            off: &[3],
            watch: 3,
        },
        Case {
            name: "off",
            args: &["--plug=3", "-o", "off", "--power-wait=0"],
            off: &[],
            watch: 3,
        },
        Case {
            name: "on",
            args: &["--plug=3", "-o", "on", "--power-wait=0"],
            off: &[3],
            watch: 3,
        },
        Case {
            name: "list",
            args: &["-o", "list"],
            off: &[],
            watch: 1,
        },
    ];
    for sec in &securities()[..2] {
        for c in &cases {
            compare("fence_eaton_snmp", &ours, &peer, 8, sec, c);
        }
    }
}

/// Deliberate differences from upstream, never a false success (issue 23,
/// item 7), against the same snmpd PDU:
/// * a plug name that two outlets carry: upstream switches one of them
///   and prints `Success: Powered OFF`; ours refuses before anything is
///   switched (exit 1) and names both outlets;
/// * an outlet whose relay is welded (it reads off and keeps its load):
///   upstream prints `Success: Powered OFF`; ours waits for the load to
///   fall within the power timeout, then fails naming it.
#[test]
fn ambiguous_names_and_welded_outlets_are_never_a_success() {
    if !(peer_available("fence_apc_snmp") && peer_available("snmpget")) {
        return;
    }
    let Some(peer) = Snmpd::start("apc", 8) else {
        return;
    };
    let ours = Ours::new();
    let agent = |prog: &Path, extra: &[&str]| {
        let mut args = base(&peer);
        args.extend(words(&["--snmp-version=2c", "--community=private"]));
        args.extend(words(extra));
        exec(prog, &args, None)
    };
    let upstream = Path::new("/usr/sbin/fence_apc_snmp");

    // Two outlets named "dup".
    let named = |peer: &Snmpd| {
        reset(peer, 8, &[]);
        let mut st = peer.state();
        st["names"] = serde_json::json!({"7": "dup", "8": "dup"});
        st["welded"] = serde_json::json!([]);
        peer.set_state(&st);
    };
    named(&peer);
    let up = agent(upstream, &["--plug=dup", "-o", "off"]);
    assert_eq!(
        (up.code, up.stdout.trim()),
        (Some(0), "Success: Powered OFF"),
        "{}",
        up.stderr
    );
    assert!(
        !(peer.is_on(7) && peer.is_on(8)),
        "upstream switched one of the two"
    );
    named(&peer);
    let sets = peer.ops().len();
    let us = agent(&ours.path("fence_apc_snmp"), &["--plug=dup", "-o", "off"]);
    assert_eq!((us.code, us.stdout.trim()), (Some(1), ""), "{}", us.stderr);
    assert!(
        us.stderr.contains("ambiguous") && us.stderr.contains("outlets 7 and 8"),
        "{}",
        us.stderr
    );
    assert!(peer.is_on(7) && peer.is_on(8), "nothing was switched");
    assert_eq!(peer.ops().len(), sets, "no set at all");

    // Outlet 3's relay is welded: it reads off and keeps its 120 W.
    let welded = |peer: &Snmpd| {
        reset(peer, 8, &[]);
        let mut st = peer.state();
        st["welded"] = serde_json::json!([3]);
        peer.set_state(&st);
    };
    welded(&peer);
    let up = agent(upstream, &["--plug=3", "-o", "off", "--power-timeout=2"]);
    assert_eq!(
        (up.code, up.stdout.trim()),
        (Some(0), "Success: Powered OFF"),
        "{}",
        up.stderr
    );
    welded(&peer);
    let us = agent(
        &ours.path("fence_apc_snmp"),
        &["--plug=3", "-o", "off", "--power-timeout=2"],
    );
    assert_eq!((us.code, us.stdout.trim()), (Some(1), ""), "{}", us.stderr);
    assert!(
        us.stderr.contains("Failed: Timed out waiting to power OFF")
            && us.stderr.contains("still carry 120 W")
            && us.stderr.contains("3 120 W"),
        "{}",
        us.stderr
    );
    assert!(!peer.is_on(3), "the outlet was switched (and reads off)");
}
