//! The SNMP family beyond APC and Eaton (issue 41): upstream
//! `fence_ibmblade`, `fence_intelmodular`, `fence_ipdu` and
//! `fence_emerson` (Python +
//! net-snmp's tools) and ours, side by side, with the same arguments
//! against the same real agent: net-snmp's snmpd serving the device's MIB
//! subtree through `tests/peers/snmp_pdu.py`. Exit code, stdout and the
//! state left behind must agree case by case, for each agent's default
//! SNMP version and for v2c / v3 authPriv.
//!
//! Deliberate differences (docs/pdu.md), asserted as such:
//! * an outlet or bay the device lacks (v2c: noSuchInstance) is unreadable
//!   (exit 1), where upstream reads anything but "on" as off and prints
//!   `Success: Already OFF`;
//! * a name two outlets carry is refused before anything is switched;
//! * fence_ipdu's list-status shows the states (upstream: UNKNOWN);
//! * fence_emerson's list prints names without quotes (upstream keeps
//!   net-snmp's), and a receptacle name as plug is looked up (upstream
//!   appends it to the OID and fails).

mod support;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{bin, peer_available, AgentOut, Snmpd, SNMP_AUTH_PASS, SNMP_PRIV_PASS};

const LIMIT: Duration = Duration::from_secs(90);
const OUTLETS: u64 = 6;

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// One agent under test: its name, the peer kind, and the security
/// settings compared (the first is the agent's default way).
struct Subject {
    agent: &'static str,
    kind: &'static str,
    securities: Vec<(&'static str, Vec<String>)>,
    /// Whether the device names its outlets.
    named: bool,
    /// Whether outlets are PDU.BRANCH.RECEPTACLE (`1.1.N` for outlet N).
    dotted: bool,
}

impl Subject {
    /// The plug text for outlet `n`.
    fn plug(&self, n: u64) -> String {
        if self.dotted {
            format!("1.1.{n}")
        } else {
            n.to_string()
        }
    }

    /// `args` with every `--plug=N` written as this device's plug.
    fn args(&self, args: &[&str]) -> Vec<String> {
        args.iter()
            .map(|a| match a.strip_prefix("--plug=").map(str::parse::<u64>) {
                Some(Ok(n)) => format!("--plug={}", self.plug(n)),
                _ => a.to_string(),
            })
            .collect()
    }

    /// Upstream's stdout as ours prints it (fence_emerson: no quotes).
    fn normal(&self, stdout: &str) -> String {
        if self.dotted {
            stdout.replace('"', "")
        } else {
            stdout.to_string()
        }
    }
}

fn v3_sha() -> Vec<String> {
    words(&[
        "--snmp-version=3",
        "--username=fenceSha",
        &format!("--password={SNMP_AUTH_PASS}"),
        "--snmp-auth-prot=SHA",
        "--snmp-sec-level=authPriv",
        "--snmp-priv-prot=AES",
        &format!("--snmp-priv-passwd={SNMP_PRIV_PASS}"),
    ])
}

fn v3_sha_default() -> Vec<String> {
    // fence_ipdu speaks v3 without --snmp-version.
    v3_sha().into_iter().skip(1).collect()
}

fn subjects() -> Vec<Subject> {
    let v2c = words(&["--snmp-version=2c", "--community=private"]);
    vec![
        Subject {
            agent: "fence_ibmblade",
            kind: "ibmblade",
            securities: vec![
                ("v1 (default)", words(&["--community=private"])),
                ("v2c", v2c.clone()),
                ("v3 authPriv SHA/AES", v3_sha()),
            ],
            named: false,
            dotted: false,
        },
        Subject {
            agent: "fence_intelmodular",
            kind: "intelmodular",
            securities: vec![
                ("community alone (v2c)", words(&["--community=private"])),
                ("v1", words(&["--snmp-version=1", "--community=private"])),
                ("v3 authPriv SHA/AES", v3_sha()),
            ],
            named: false,
            dotted: false,
        },
        Subject {
            agent: "fence_ipdu",
            kind: "ipdu",
            securities: vec![
                ("v3 (default) authPriv SHA/AES", v3_sha_default()),
                ("v2c", v2c.clone()),
            ],
            named: true,
            dotted: false,
        },
        // power_wait is 5 s by default for this agent (its metadata test
        // holds that): 0 here keeps the cases quick for both.
        Subject {
            agent: "fence_emerson",
            kind: "emerson",
            securities: vec![
                (
                    "community alone (v2c)",
                    words(&["--community=private", "--power-wait=0"]),
                ),
                ("v1", {
                    let mut a = words(&["--snmp-version=1", "--community=private"]);
                    a.push("--power-wait=0".into());
                    a
                }),
                ("v3 authPriv SHA/AES", {
                    let mut a = v3_sha();
                    a.push("--power-wait=0".into());
                    a
                }),
            ],
            named: true,
            dotted: true,
        },
    ]
}

struct Ours {
    dir: tempfile::TempDir,
}

impl Ours {
    fn new() -> Ours {
        let dir = tempfile::tempdir().unwrap();
        for s in subjects() {
            std::os::unix::fs::symlink(bin(), dir.path().join(s.agent)).unwrap();
        }
        Ours { dir }
    }

    fn path(&self, agent: &str) -> PathBuf {
        self.dir.path().join(agent)
    }
}

fn upstream(agent: &str) -> PathBuf {
    Path::new("/usr/sbin").join(agent)
}

fn exec(prog: &Path, args: &[String], stdin: Option<&str>) -> AgentOut {
    support::exec_agent(prog, args, stdin, LIMIT)
}

/// Every outlet on but `off`; no delay, nothing refused, default names.
fn reset(peer: &Snmpd, off: &[u64]) {
    let mut st = peer.state();
    st["on"] = serde_json::json!((1..=OUTLETS)
        .filter(|o| !off.contains(o))
        .collect::<Vec<_>>());
    st["refuse"] = serde_json::json!([]);
    st["delay"] = serde_json::json!(0);
    st["pending"] = serde_json::json!({});
    st["names"] = serde_json::json!({});
    peer.set_state(&st);
}

fn base(port: u16) -> Vec<String> {
    vec!["--ip=127.0.0.1".into(), format!("--ipport={port}")]
}

struct Case<'a> {
    name: &'a str,
    args: &'a [&'a str],
    off: &'a [u64],
    watch: u64,
}

/// Both agents from the same starting state: same exit code, stdout and
/// resulting state of the watched outlet.
fn compare(s: &Subject, ours: &Ours, peer: &Snmpd, sec: &(&str, Vec<String>), c: &Case) {
    let mut args = base(peer.port);
    args.extend(sec.1.iter().cloned());
    args.extend(s.args(c.args));
    reset(peer, c.off);
    let up = exec(&upstream(s.agent), &args, None);
    let up_state = peer.is_on(c.watch);
    reset(peer, c.off);
    let us = exec(&ours.path(s.agent), &args, None);
    let our_state = peer.is_on(c.watch);
    let ctx = format!(
        "{} {} [{}]\nupstream ({:?}): {}{}\nours ({:?}): {}{}",
        s.agent, c.name, sec.0, up.took, up.stdout, up.stderr, us.took, us.stdout, us.stderr
    );
    assert_eq!(
        (up.code, s.normal(&up.stdout).trim()),
        (us.code, us.stdout.trim()),
        "{ctx}"
    );
    assert_eq!(up_state, our_state, "state of {}: {ctx}", c.watch);
}

const CASES: &[Case] = &[
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
        name: "on when on",
        args: &["--plug=3", "--action=on"],
        off: &[],
        watch: 3,
    },
    Case {
        name: "reboot (FAR's argv)",
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

/// The cases run under every security an agent offers.
const SESSION_CASES: &[&str] = &["status off", "off", "on"];

fn side_by_side(s: &Subject) {
    if !(peer_available(s.agent) && peer_available("snmpget")) {
        return;
    }
    let Some(peer) = Snmpd::start(s.kind, OUTLETS as u32) else {
        return;
    };
    let ours = Ours::new();
    // Every case under the agent's first security; under the others (the
    // session layer differs, not the agent), a read, a set and its read-back.
    for (i, sec) in s.securities.iter().enumerate() {
        for c in CASES {
            if i == 0 || SESSION_CASES.contains(&c.name) {
                compare(s, &ours, &peer, sec, c);
            }
        }
    }
    let sec = &s.securities[0];
    if s.dotted {
        // Deliberate difference: a receptacle name is looked up; upstream
        // appends it to the OID, which net-snmp refuses (exit 1).
        let mut args = base(peer.port);
        args.extend(sec.1.iter().cloned());
        args.extend(words(&["--plug=node05", "-o", "off"]));
        reset(&peer, &[]);
        let up = exec(&upstream(s.agent), &args, None);
        assert_eq!((up.code, up.stdout.trim()), (Some(1), ""), "{}", up.stderr);
        assert!(peer.is_on(5));
        let us = exec(&ours.path(s.agent), &args, None);
        assert_eq!(
            (us.code, us.stdout.trim()),
            (Some(0), "Success: Powered OFF"),
            "{}",
            us.stderr
        );
        assert!(!peer.is_on(5));
    }
    if s.named && !s.dotted {
        compare(
            s,
            &ours,
            &peer,
            sec,
            &Case {
                name: "off by outlet name",
                args: &["--plug=node05", "-o", "off"],
                off: &[],
                watch: 5,
            },
        );
        compare(
            s,
            &ours,
            &peer,
            sec,
            &Case {
                name: "unknown outlet name",
                args: &["--plug=nosuch", "-o", "off"],
                off: &[],
                watch: 1,
            },
        );
    }
    if !s.named {
        // No names on a chassis: a name is refused by both (upstream's
        // OID does not parse; ours: no names table), nothing switched.
        compare(
            s,
            &ours,
            &peer,
            sec,
            &Case {
                name: "a name where bays are numbers",
                args: &["--plug=node05", "-o", "off"],
                off: &[],
                watch: 5,
            },
        );
    }
    if !s.named || s.dotted {
        // list-status: upstream reads the states from the same walk.
        compare(
            s,
            &ours,
            &peer,
            sec,
            &Case {
                name: "list-status",
                args: &["-o", "list-status"],
                off: &[2],
                watch: 2,
            },
        );
    }

    // Pacemaker's way: key=value lines on stdin, no arguments.
    let mut stdin = format!(
        "ipaddr=127.0.0.1\nipport={}\nport={}\naction=off\nnodename=n4\n",
        peer.port,
        s.plug(4)
    );
    for a in &sec.1 {
        let (k, v) = a.trim_start_matches("--").split_once('=').unwrap();
        stdin.push_str(&format!("{}={v}\n", k.replace('-', "_")));
    }
    reset(&peer, &[]);
    let up = exec(&upstream(s.agent), &[], Some(&stdin));
    assert!(!peer.is_on(4), "upstream via stdin: {}", up.stderr);
    reset(&peer, &[]);
    let us = exec(&ours.path(s.agent), &[], Some(&stdin));
    assert_eq!(
        (up.code, up.stdout.trim()),
        (us.code, us.stdout.trim()),
        "{} stdin: {}\n{}",
        s.agent,
        up.stderr,
        us.stderr
    );
    assert!(!peer.is_on(4));

    // A command that takes 2 s to act (a blade shutting down): both poll
    // until the state is observed.
    for prog in [upstream(s.agent), ours.path(s.agent)] {
        reset(&peer, &[]);
        let mut st = peer.state();
        st["delay"] = serde_json::json!(2);
        peer.set_state(&st);
        let mut args = base(peer.port);
        args.extend(sec.1.iter().cloned());
        args.extend(s.args(&["--plug=2", "-o", "off"]));
        let r = exec(&prog, &args, None);
        assert_eq!(
            (r.code, r.stdout.trim()),
            (Some(0), "Success: Powered OFF"),
            "{prog:?} with a delay: {}",
            r.stderr
        );
        assert!(r.took >= Duration::from_secs(2), "{prog:?}: {:?}", r.took);
        assert!(!peer.is_on(2));
    }

    // A set the device refuses (read-only community: snmpd answers
    // noAccess / authorizationError): both fail, nothing switched.
    reset(&peer, &[]);
    let mut args = base(peer.port);
    args.extend(s.args(&[
        "--snmp-version=2c",
        "--community=public",
        "--plug=3",
        "-o",
        "off",
    ]));
    let up = exec(&upstream(s.agent), &args, None);
    let us = exec(&ours.path(s.agent), &args, None);
    assert_eq!(
        (up.code, up.stdout.trim()),
        (us.code, us.stdout.trim()),
        "read-only community: {}\n{}",
        up.stderr,
        us.stderr
    );
    assert_eq!(us.code, Some(1));
    assert!(peer.is_on(3));

    // Deliberate difference: an outlet the device lacks (v2c answers
    // noSuchInstance). Upstream reads it as off and fences nothing.
    reset(&peer, &[]);
    let mut args = base(peer.port);
    args.extend(s.args(&[
        "--snmp-version=2c",
        "--community=private",
        "--plug=99",
        "-o",
        "off",
    ]));
    let up = exec(&upstream(s.agent), &args, None);
    let us = exec(&ours.path(s.agent), &args, None);
    assert_eq!(
        (up.code, up.stdout.trim()),
        (Some(0), "Success: Already OFF"),
        "{}",
        up.stderr
    );
    assert_eq!((us.code, us.stdout.trim()), (Some(1), ""), "{}", us.stderr);
    assert!(us.stderr.contains(&s.plug(99)), "{}", us.stderr);
}

#[test]
fn fence_ibmblade_side_by_side_with_upstream() {
    side_by_side(&subjects()[0]);
}

#[test]
fn fence_intelmodular_side_by_side_with_upstream() {
    side_by_side(&subjects()[1]);
}

#[test]
fn fence_ipdu_side_by_side_with_upstream() {
    side_by_side(&subjects()[2]);
}

#[test]
fn fence_emerson_side_by_side_with_upstream() {
    side_by_side(&subjects()[3]);
}

/// A wrong community (silence on the wire, as snmpd gives it) and a
/// device that never answers at all: both fail with exit 1 and no
/// stdout, within their bounded tries, without switching anything.
#[test]
fn wrong_community_and_silent_device_are_bounded_failures() {
    if !(peer_available("fence_ibmblade") && peer_available("snmpget")) {
        return;
    }
    let Some(peer) = Snmpd::start("ipdu", 4) else {
        return;
    };
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let ours = Ours::new();
    // The agents side by side: each case waits out its tries.
    let subjects = subjects();
    std::thread::scope(|scope| {
        for s in &subjects {
            let (ours, peer) = (&ours, &peer);
            scope.spawn(move || bounded_failures(s, ours, peer, silent_port));
        }
    });
    assert!(peer.is_on(1), "nothing was switched");
    drop(silent);
}

fn bounded_failures(s: &Subject, ours: &Ours, peer: &Snmpd, silent_port: u16) {
    {
        for (what, port, extra) in [
            (
                "wrong community",
                peer.port,
                words(&["--snmp-version=2c", "--community=badcommunity7"]),
            ),
            (
                "silent device",
                silent_port,
                words(&["--snmp-version=2c", "--community=private"]),
            ),
        ] {
            let mut args = base(port);
            args.extend(extra);
            args.extend(s.args(&[
                "--plug=1",
                "-o",
                "off",
                "--login-timeout=1",
                "--shell-timeout=1",
            ]));
            let up = exec(&upstream(s.agent), &args, None);
            let us = exec(&ours.path(s.agent), &args, None);
            assert_eq!(
                (up.code, up.stdout.trim()),
                (us.code, us.stdout.trim()),
                "{} {what}\n{}\n{}",
                s.agent,
                up.stderr,
                us.stderr
            );
            assert_eq!(us.code, Some(1));
            assert!(
                us.took <= up.took + Duration::from_secs(2) && us.took < Duration::from_secs(15),
                "{} {what}: ours {:?}, upstream {:?}",
                s.agent,
                us.took,
                up.took
            );
            assert!(!us.stderr.contains("badcommunity7"), "{}", us.stderr);
        }
    }
}

/// fence_ipdu: a name two outlets carry. Upstream switches one of them
/// (the last it walked) and says Success; ours refuses, naming both, and
/// sends no set. list-status: ours reads the states, upstream UNKNOWN.
#[test]
fn fence_ipdu_ambiguous_name_and_list_status() {
    if !(peer_available("fence_ipdu") && peer_available("snmpget")) {
        return;
    }
    let Some(peer) = Snmpd::start("ipdu", OUTLETS as u32) else {
        return;
    };
    let ours = Ours::new();
    let mut args = base(peer.port);
    args.extend(words(&["--snmp-version=2c", "--community=private"]));
    let with = |extra: &[&str]| {
        let mut a = args.clone();
        a.extend(words(extra));
        a
    };
    let dup = |peer: &Snmpd| {
        reset(peer, &[]);
        let mut st = peer.state();
        st["names"] = serde_json::json!({"4": "dup", "5": "dup"});
        peer.set_state(&st);
    };
    dup(&peer);
    let up = exec(
        &upstream("fence_ipdu"),
        &with(&["--plug=dup", "-o", "off"]),
        None,
    );
    assert_eq!(
        (up.code, up.stdout.trim()),
        (Some(0), "Success: Powered OFF"),
        "{}",
        up.stderr
    );
    assert!(!(peer.is_on(4) && peer.is_on(5)), "upstream switched one");
    dup(&peer);
    let sets = peer.ops().len();
    let us = exec(
        &ours.path("fence_ipdu"),
        &with(&["--plug=dup", "-o", "off"]),
        None,
    );
    assert_eq!((us.code, us.stdout.trim()), (Some(1), ""), "{}", us.stderr);
    assert!(
        us.stderr.contains("ambiguous") && us.stderr.contains("outlets 4 and 5"),
        "{}",
        us.stderr
    );
    assert!(peer.is_on(4) && peer.is_on(5));
    assert_eq!(peer.ops().len(), sets, "no set at all");

    reset(&peer, &[2]);
    let up = exec(&upstream("fence_ipdu"), &with(&["-o", "list-status"]), None);
    let us = exec(
        &ours.path("fence_ipdu"),
        &with(&["-o", "list-status"]),
        None,
    );
    assert_eq!((up.code, us.code), (Some(0), Some(0)));
    let cols = |s: &str| {
        s.lines()
            .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
    };
    assert_eq!(cols(&up.stdout), cols(&us.stdout));
    assert!(up.stdout.contains("2,node02,UNKNOWN"), "{}", up.stdout);
    assert!(
        us.stdout.contains("2,node02,off") && us.stdout.contains("1,node01,on"),
        "{}",
        us.stdout
    );
}

/// fence_emerson: a name two receptacles carry is refused, naming both
/// (upstream cannot take a name at all: it appends it to the OID).
#[test]
fn fence_emerson_refuses_an_ambiguous_name() {
    if !(peer_available("fence_emerson") && peer_available("snmpget")) {
        return;
    }
    let Some(peer) = Snmpd::start("emerson", OUTLETS as u32) else {
        return;
    };
    let ours = Ours::new();
    reset(&peer, &[]);
    let mut st = peer.state();
    st["names"] = serde_json::json!({"4": "dup", "5": "dup"});
    peer.set_state(&st);
    let mut args = base(peer.port);
    args.extend(words(&["--community=private", "--plug=dup", "-o", "off"]));
    let up = exec(&upstream("fence_emerson"), &args, None);
    assert_eq!((up.code, up.stdout.trim()), (Some(1), ""), "{}", up.stderr);
    let sets = peer.ops().len();
    let us = exec(&ours.path("fence_emerson"), &args, None);
    assert_eq!((us.code, us.stdout.trim()), (Some(1), ""), "{}", us.stderr);
    assert!(
        us.stderr.contains("ambiguous") && us.stderr.contains("outlets 1.1.4 and 1.1.5"),
        "{}",
        us.stderr
    );
    assert!(peer.is_on(4) && peer.is_on(5));
    assert_eq!(peer.ops().len(), sets, "no set at all");
}
