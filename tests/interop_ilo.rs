//! `fence_ilo` / `fence_ilo2`: fencekit and upstream (fence-agents 4.12.1,
//! RIBCL through gnutls-cli) side by side against the same iLO,
//! tests/peers/ribcl_peer.py (three firmware flavours: an iLO below RIBCL
//! 2.21, an iLO 2, an iLO 3 on RIBCL 2.30; a machine whose power never
//! changes; a wrong password; a port that accepts TCP and never answers;
//! an untrusted certificate).
//!
//! Each side runs in a thread of its own on a peer of its own, so that the
//! binary stays within its few seconds of CI time. Each test asserts what
//! both agents do; where they differ, fencekit's answer is the documented,
//! safer one (docs/ilo.md, "Differences from upstream").

mod support;

use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::hv::{self, first_line, DropIn, HvPeer, Who};
use support::AgentOut;

const PASSWORD: &str = "ilo-secret";
const LOGIN: &str = "Unable to connect/login to fencing device";

/// Upstream's fence_ilo when it can run here: fence-agents has it and
/// gnutls-cli (Debian gnutls-bin) is installed.
fn upstream(name: &'static str) -> Option<PathBuf> {
    if !support::peer_available(name) {
        return None;
    }
    static GNUTLS: OnceLock<bool> = OnceLock::new();
    let ok = *GNUTLS.get_or_init(|| support::which("gnutls-cli").is_some());
    if !ok {
        let msg = "SKIP upstream part: no gnutls-cli (Debian package gnutls-bin)";
        assert!(
            !support::require_peers(),
            "{msg}, and FENCEKIT_REQUIRE_PEERS=1"
        );
        eprintln!("{msg}");
        return None;
    }
    support::which(name)
}

const ILO: DropIn = DropIn {
    name: "fence_ilo",
    upstream,
};
const ILO2: DropIn = DropIn {
    name: "fence_ilo2",
    upstream,
};

fn peer(extra: &str) -> HvPeer {
    HvPeer::start("ribcl", support::HOST, support::free_port(), extra).expect("the iLO peer")
}

/// Runs `f` for each side and each `(agent, peer arguments)`, all at once,
/// each with a peer of its own.
fn each_side(runs: &[(&DropIn, &str, u8)], f: impl Fn(&DropIn, Who, &HvPeer, u8) + Sync) {
    if !["python3", "openssl", "curl"]
        .iter()
        .all(|p| support::peer_available(p))
    {
        return;
    }
    let f = &f;
    std::thread::scope(|s| {
        for (agent, extra, group) in runs {
            for who in agent.both() {
                s.spawn(move || f(agent, who, &peer(extra), *group));
            }
        }
    });
}

fn run(agent: &DropIn, who: Who, p: &HvPeer, extra: &[&str]) -> AgentOut {
    let a = hv::conn_args(&p.host, Some(p.port), "admin", PASSWORD, extra);
    agent.run(who, &a, None, Duration::from_secs(30))
}

#[track_caller]
fn expect(o: &AgentOut, code: i32, first: &str, who: Who) {
    hv::expect_out(o, code, first, who, &[PASSWORD]);
    assert!(
        first_line(o).contains(first),
        "{who:?}: first line {:?}, not {first:?}",
        first_line(o)
    );
}

fn state(p: &HvPeer) -> Value {
    p.control("GET", "state")
}

fn calls(p: &HvPeer, cmd: &str) -> u64 {
    state(p)["calls"][cmd].as_u64().unwrap_or(0)
}

/// Status, off, already off on an iLO 2 (fence_ilo2): both send
/// HOLD_PWR_BTN (upstream with TOGGLE="yes"). Off is reported only once the
/// iLO reads OFF (a 300 ms transition).
fn ilo2_status_off_and_already(a: &DropIn, who: Who, p: &HvPeer) {
    {
        expect(&run(a, who, p, &["-o", "status"]), 0, "Status: ON", who);
        expect(
            &run(a, who, p, &["-o", "off"]),
            0,
            "Success: Powered OFF",
            who,
        );
        assert_eq!(state(p)["power"], "OFF", "{who:?}");
        expect(
            &run(a, who, p, &["-o", "off"]),
            0,
            "Success: Already OFF",
            who,
        );
        expect(&run(a, who, p, &["-o", "status"]), 2, "Status: OFF", who);
        let (hold, set) = (calls(p, "HOLD_PWR_BTN"), calls(p, "SET_HOST_POWER"));
        assert_eq!((hold, set), (1, 0), "{who:?}");
    }
}

/// On and already on on an iLO 2 that is off: upstream presses
/// HOLD_PWR_BTN TOGGLE="yes" again, fencekit sends SET_HOST_POWER "Yes"
/// (never a toggle, which powers off a machine that came on meanwhile).
fn ilo2_on_and_already(a: &DropIn, who: Who, p: &HvPeer) {
    {
        p.set("set?power=OFF");
        expect(
            &run(a, who, p, &["-o", "on"]),
            0,
            "Success: Powered ON",
            who,
        );
        assert_eq!(state(p)["power"], "ON", "{who:?}");
        expect(
            &run(a, who, p, &["-o", "on"]),
            0,
            "Success: Already ON",
            who,
        );
        let (hold, set) = (calls(p, "HOLD_PWR_BTN"), calls(p, "SET_HOST_POWER"));
        match who {
            Who::Upstream => assert_eq!((hold, set), (1, 0)),
            Who::Fencekit => assert_eq!((hold, set), (0, 1)),
        }
        assert_eq!(calls(p, "PRESS_PWR_BTN"), 0);
    }
}

/// Reboot below RIBCL 2.21 (both: SET_HOST_POWER off and on) and on an
/// iLO 3 on RIBCL 2.30 (upstream: HOLD_PWR_BTN then PRESS_PWR_BTN;
/// fencekit: HOLD_PWR_BTN then SET_HOST_POWER "Yes"); --ribcl-version
/// forcing the old rule on the iLO 3.
fn reboot_by_firmware_flavour(a: &DropIn, who: Who, p: &HvPeer) {
    {
        {
            let old = state(p)["flavour"]["ribcl"] == "2.20";
            expect(
                &run(a, who, p, &["-o", "reboot"]),
                0,
                "Success: Rebooted",
                who,
            );
            assert_eq!(state(p)["power"], "ON");
            let c = |n| calls(p, n);
            let got = (c("HOLD_PWR_BTN"), c("SET_HOST_POWER"), c("PRESS_PWR_BTN"));
            let want = match (old, who) {
                (true, _) => (0, 2, 0),
                (false, Who::Upstream) => (1, 0, 1),
                (false, Who::Fencekit) => (1, 1, 0),
            };
            assert_eq!(got, want, "{who:?} old={old}");
            if !old {
                // --ribcl-version: upstream compares the text with a number
                // and fails with a TypeError before any command; fencekit
                // acts by the forced version (SET_HOST_POWER below 2.21).
                let o = run(a, who, p, &["-o", "off", "--ribcl-version", "2.0"]);
                match who {
                    Who::Upstream => {
                        assert_eq!(o.code, Some(1), "{o:?}");
                        assert!(o.stderr.contains("TypeError"), "{o:?}");
                        assert_eq!(c("SET_HOST_POWER"), want.1);
                    }
                    Who::Fencekit => {
                        expect(&o, 0, "Success: Powered OFF", who);
                        assert_eq!(c("SET_HOST_POWER"), want.1 + 1);
                    }
                }
            }
        }
    }
}

/// Refusals: a wrong password (argv and stdin), an untrusted
/// certificate, --notls and --tls1.0.
fn refusals(a: &DropIn, who: Who, p: &HvPeer) {
    {
        // A wrong password: the same first line, exit 1, nothing sent.
        let mut args = hv::conn_args(&p.host, Some(p.port), "admin", "wrong", &["-o", "off"]);
        let o = a.run(who, &args, None, Duration::from_secs(30));
        expect(&o, 1, LOGIN, who);
        assert_eq!(state(p)["logins"]["refused"], 1, "{who:?}");
        // The same from Pacemaker's stdin.
        args.clear();
        let stdin = format!(
            "action=status\nip={}\nipport={}\nusername=admin\npassword=wrong\nssl_insecure=1\n",
            p.host, p.port
        );
        let o = a.run(who, &args, Some(&stdin), Duration::from_secs(30));
        expect(&o, 1, LOGIN, who);
        // An untrusted certificate: refused without --ssl-insecure.
        let a2: Vec<String> = [
            "--ip",
            &p.host,
            "--ipport",
            &p.port.to_string(),
            "-l",
            "admin",
            "-p",
            PASSWORD,
            "-o",
            "status",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = a.run(who, &a2, None, Duration::from_secs(30));
        assert_eq!(o.code, Some(1), "{who:?}: {o:?}");
        // --notls: upstream asks gnutls-cli for SSL 3.0 and still gets a
        // modern protocol from this peer; fencekit refuses it by name.
        let o = run(a, who, p, &["-o", "status", "--notls"]);
        match who {
            Who::Upstream => expect(&o, 0, "Status: ON", who),
            Who::Fencekit => expect(&o, 1, "--notls asks for SSL 3.0", who),
        }
        let o = run(a, who, p, &["-o", "status", "--tls1.0"]);
        match who {
            Who::Upstream => assert!(matches!(o.code, Some(0 | 1)), "{o:?}"),
            Who::Fencekit => expect(&o, 1, "--tls1.0 asks for TLS 1.0", who),
        }
    }
}

/// monitor, list, a machine whose power never changes.
fn monitor_list_and_stuck(a: &DropIn, who: Who, p: &HvPeer) {
    {
        // monitor: a status read, nothing printed; list: upstream's notice.
        let o = run(a, who, p, &["-o", "monitor"]);
        assert_eq!((o.code, o.stdout.as_str()), (Some(0), ""), "{who:?}: {o:?}");
        let o = run(a, who, p, &["-o", "list"]);
        expect(
            &o,
            0,
            "NOTICE: List option is not working on this device yet",
            who,
        );
        // A machine whose power never changes.
        p.set("set?stuck=1");
        let o = run(a, who, p, &["-o", "off", "--power-timeout", "2"]);
        expect(&o, 1, "Failed: Timed out waiting to power OFF", who);
        assert_eq!(state(p)["power"], "ON");
        assert_eq!(
            calls(p, "HOLD_PWR_BTN"),
            1,
            "{who:?} sent off more than once"
        );
    }
}

/// An iLO that accepts TCP and never answers.
fn silent(a: &DropIn, who: Who, p: &HvPeer) {
    {
        // An iLO that accepts TCP and never answers: bounded by --login-timeout.
        let silent = p.info["silent_port"].as_u64().unwrap().to_string();
        let a3 = hv::conn_args(
            &p.host,
            None,
            "admin",
            PASSWORD,
            &["--ipport", &silent, "-o", "off", "--login-timeout", "2"],
        );
        let o = a.run(who, &a3, None, Duration::from_secs(30));
        assert_eq!(o.code, Some(1), "{who:?}: {o:?}");
        assert!(o.took < Duration::from_secs(6), "{who:?} took {:?}", o.took);
        let line = first_line(&o);
        match who {
            Who::Upstream => assert!(line.contains(LOGIN), "{line}"),
            Who::Fencekit => assert!(line.contains("Connection timed out"), "{line}"),
        }
    }
}

/// Every group at once (one test: libtest would run two at a time on CI's
/// two cores), each side of each on a peer of its own.
#[test]
fn side_by_side_with_upstream() {
    let t = Instant::now();
    let groups: [fn(&DropIn, Who, &HvPeer); 6] = [
        ilo2_status_off_and_already,
        ilo2_on_and_already,
        reboot_by_firmware_flavour,
        refusals,
        monitor_list_and_stuck,
        silent,
    ];
    each_side(
        &[
            (&ILO2, "--flavour ilo2 --power-ms 300", 0),
            (&ILO2, "--flavour ilo2 --power-ms 300", 1),
            (&ILO, "--flavour old --power-ms 0", 2),
            (&ILO, "--flavour ilo3 --power-ms 0", 2),
            (&ILO, "--flavour ilo3 --power-ms 0", 3),
            (&ILO, "--flavour ilo3 --power-ms 0", 4),
            (&ILO, "--flavour ilo3 --power-ms 0", 5),
        ],
        |a, who, p, g| {
            let t = Instant::now();
            groups[g as usize](a, who, p);
            println!("group {g} {who:?}: {:.1} s", t.elapsed().as_secs_f64());
        },
    );
    println!("all groups: {:.1} s", t.elapsed().as_secs_f64());
}

/// ilo:// natively: status, the identity pin (GET_HOST_DATA's SMBIOS
/// UUID) that lets off through or refuses it before anything is sent.
#[test]
fn native_target_and_its_identity_pin() {
    if !["python3", "openssl", "curl"]
        .iter()
        .all(|p| support::peer_available(p))
    {
        return;
    }
    let p = peer("--flavour ilo2 --power-ms 0");
    let uuid = p.info["uuid"].as_str().unwrap().to_string();
    let target = format!("ilo://admin@{}:{}", p.host, p.port);
    let fk = |args: &[&str]| {
        let mut a = args.to_vec();
        a.push("--ssl-insecure");
        support::fencekit(&a, PASSWORD)
    };
    let r = fk(&["status", &target]);
    r.assert_code(0);
    assert!(r.text().to_lowercase().contains("on"), "{}", r.text());
    let wrong = "00000000-0000-0000-0000-000000000001";
    let r = fk(&["off", &target, "--expect-uuid", wrong]);
    assert_ne!(r.code, Some(0), "{}", r.text());
    assert_eq!(
        (state(&p)["power"].as_str(), calls(&p, "HOLD_PWR_BTN")),
        (Some("ON"), 0)
    );
    let r = fk(&["off", &target, "--expect-uuid", &uuid]);
    r.assert_code(0);
    assert_eq!(state(&p)["power"], "OFF", "{}", r.text());
    assert_eq!(calls(&p, "GET_HOST_DATA"), 2);
}
