//! The native SNMP driver against a real agent: net-snmp's snmpd serving a
//! simulated APC rPDU (tests/peers/snmpd_start.sh, snmp_pdu.py) and an
//! Eaton Managed ePDU.
//!
//! What this proves against an independent implementation: our BER codec,
//! community handling, v3 engine discovery, key localization, HMAC
//! (SHA-1, SHA-256, MD5) and privacy (AES-128, DES) interoperate with
//! net-snmp; the APC and Eaton profiles address the right objects (the
//! peer's ops.log records each Set); outlet groups switch every outlet and
//! confirm each; a stuck outlet fails naming it; bad credentials fail fast
//! and with the right cause.

mod support;

use fencekit::engine::driver::PowerDriver;
use fencekit::engine::error::ErrorKind;
use fencekit::engine::event::Discard;
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::{Action, PowerState};
use fencekit::engine::run::{run, Cancel, Outcome};
use fencekit::secret::Secret;
use fencekit::snmp::client::Timing;
use fencekit::snmp::config::{OutletSpec, PduEndpoint, Plug, SnmpConfig};
use fencekit::snmp::driver::SnmpDriver;
use fencekit::snmp::message::Version;
use fencekit::snmp::profile::Profile;
use fencekit::snmp::session::{SecLevel, Security, UsmUser};
use fencekit::snmp::usm::{AuthProtocol, PrivProtocol};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{Snmpd, SNMP_AUTH_PASS, SNMP_COMMUNITY, SNMP_PRIV_PASS};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn community(version: Version, c: &str) -> Security {
    Security::Community {
        version,
        community: Secret::from_str_value(c),
    }
}

fn v3(
    user: &str,
    auth: AuthProtocol,
    auth_pw: &str,
    privacy: Option<(PrivProtocol, &str)>,
) -> Security {
    Security::Usm(UsmUser {
        name: user.into(),
        level: if privacy.is_some() {
            SecLevel::AuthPriv
        } else {
            SecLevel::AuthNoPriv
        },
        auth: Some((auth, Secret::from_str_value(auth_pw))),
        privacy: privacy.map(|(p, pw)| (p, Secret::from_str_value(pw))),
    })
}

fn pdu(port: u16, label: &str, security: Security, profile: &str) -> PduEndpoint {
    PduEndpoint {
        label: label.into(),
        host: "127.0.0.1".into(),
        port,
        security,
        profile: Arc::new(Profile::builtin(profile).expect("profile")),
        timing: Timing {
            timeout: Duration::from_millis(300),
            tries: 3,
        },
    }
}

fn driver(pdus: Vec<PduEndpoint>, outlets: &[(usize, &str)]) -> SnmpDriver {
    SnmpDriver::new(SnmpConfig {
        pdus,
        outlets: outlets
            .iter()
            .map(|(p, o)| OutletSpec {
                pdu: *p,
                plug: Plug::parse(o),
            })
            .collect(),
        max_off_watts: fencekit::engine::power::DEFAULT_MAX_OFF_WATTS,
    })
    .expect("valid config")
}

fn policy() -> Policy {
    let mut p = Policy::native();
    p.poll_interval = Duration::from_millis(20);
    p.power_timeout = PowerTimeout::Wall(Duration::from_millis(800));
    p.deadline = Some(fencekit::engine::clock::Instant::now() + Duration::from_secs(20));
    p
}

/// One runtime per test thread: a driver's sockets belong to the runtime
/// that opened them.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    thread_local! {
        static RT: tokio::runtime::Runtime = rt();
    }
    RT.with(|rt| rt.block_on(f))
}

fn act(d: &mut SnmpDriver, action: Action) -> Result<Outcome, fencekit::engine::run::Failure> {
    block_on(run(d, action, &policy(), &mut Discard, Cancel::never()))
}

/// Every security setting the PDU peer offers: status, off (confirmed,
/// and the peer's own state says off), on again.
#[test]
fn every_version_and_security_level_switches_an_outlet() {
    let Some(peer) = Snmpd::start("apc", 8) else {
        return;
    };
    let cases = [
        ("v1", community(Version::V1, SNMP_COMMUNITY)),
        ("v2c", community(Version::V2c, SNMP_COMMUNITY)),
        (
            "v3 SHA/AES",
            v3(
                "fenceSha",
                AuthProtocol::Sha1,
                SNMP_AUTH_PASS,
                Some((PrivProtocol::Aes128, SNMP_PRIV_PASS)),
            ),
        ),
        (
            "v3 SHA-256/AES",
            v3(
                "fenceSha256",
                AuthProtocol::Sha256,
                SNMP_AUTH_PASS,
                Some((PrivProtocol::Aes128, SNMP_PRIV_PASS)),
            ),
        ),
        (
            "v3 MD5/DES",
            v3(
                "fenceMd5",
                AuthProtocol::Md5,
                SNMP_AUTH_PASS,
                Some((PrivProtocol::Des, SNMP_PRIV_PASS)),
            ),
        ),
        (
            "v3 SHA authNoPriv",
            v3("fenceAuth", AuthProtocol::Sha1, SNMP_AUTH_PASS, None),
        ),
    ];
    for (i, (name, sec)) in cases.into_iter().enumerate() {
        let outlet = (i + 1) as u64;
        let plug = outlet.to_string();
        let mut d = driver(vec![pdu(peer.port, "A", sec, "apc")], &[(0, &plug)]);
        let r = act(&mut d, Action::Status);
        assert_eq!(
            r.ok(),
            Some(Outcome::Status {
                state: PowerState::On
            }),
            "{name}\n{}",
            peer.log()
        );
        let r = act(&mut d, Action::Off);
        assert_eq!(
            r.ok(),
            Some(Outcome::Reached {
                state: PowerState::Off
            }),
            "{name}"
        );
        assert!(
            !peer.is_on(outlet),
            "{name}: the peer still feeds outlet {outlet}"
        );
        let r = act(&mut d, Action::On);
        assert_eq!(
            r.ok(),
            Some(Outcome::Reached {
                state: PowerState::On
            }),
            "{name}"
        );
        assert!(peer.is_on(outlet), "{name}");
    }
    // rPDUOutletControlOutletCommand, immediateOff (2) then immediateOn (1).
    let ops = peer.ops();
    assert!(
        ops.contains(&".1.3.6.1.4.1.318.1.1.12.3.3.1.1.4.1 2".to_string()),
        "{ops:?}"
    );
    assert!(
        ops.contains(&".1.3.6.1.4.1.318.1.1.12.3.3.1.1.4.6 1".to_string()),
        "{ops:?}"
    );
}

/// Outlet names resolve through rPDUOutletStatusOutletName (a walk), and
/// a listing shows names and states.
#[test]
fn names_resolve_and_outlets_list() {
    let Some(peer) = Snmpd::start("apc", 24) else {
        return;
    };
    peer.set_on(7, false);
    for version in [Version::V1, Version::V2c] {
        let mut d = driver(
            vec![pdu(
                peer.port,
                "A",
                community(version, SNMP_COMMUNITY),
                "apc",
            )],
            &[(0, "node07")],
        );
        let r = act(&mut d, Action::Status);
        assert_eq!(
            r.ok(),
            Some(Outcome::Status {
                state: PowerState::Off
            }),
            "{version:?}"
        );
        let list = block_on(d.list(0, None)).expect("list");
        assert_eq!(list.len(), 24);
        assert_eq!(list[6].id, "7");
        assert_eq!(list[6].alias, "node07");
        assert_eq!(list[6].state, Some(PowerState::Off));
        assert_eq!(list[0].state, Some(PowerState::On));
    }
    let mut d = driver(
        vec![pdu(
            peer.port,
            "A",
            community(Version::V2c, SNMP_COMMUNITY),
            "apc",
        )],
        &[(0, "nosuch")],
    );
    let e = act(&mut d, Action::Off).expect_err("unknown name");
    assert!(
        e.error.message.contains("Can't find port with name nosuch"),
        "{}",
        e.error
    );
    // A numbered outlet the PDU lacks is an error, never "off".
    let mut d = driver(
        vec![pdu(
            peer.port,
            "A",
            community(Version::V2c, SNMP_COMMUNITY),
            "apc",
        )],
        &[(0, "99")],
    );
    let e = act(&mut d, Action::Off).expect_err("no outlet 99");
    assert_eq!(e.error.kind, ErrorKind::DeviceError, "{}", e.error);
    assert!(e.error.message.contains("99"), "{}", e.error);
}

/// A node on two outlets of two PDUs: both are switched, each confirmed;
/// a stuck outlet fails the action and is named; load is summed.
#[test]
fn outlet_groups_on_two_pdus() {
    let Some(a) = Snmpd::start("apc", 8) else {
        return;
    };
    let Some(b) = Snmpd::start("apc", 8) else {
        return;
    };
    let sec = || community(Version::V2c, SNMP_COMMUNITY);
    let mut d = driver(
        vec![
            pdu(a.port, "A", sec(), "apc"),
            pdu(b.port, "B", sec(), "apc"),
        ],
        &[(0, "7"), (1, "7")],
    );
    let w = block_on(d.power_reading(None))
        .expect("reading")
        .expect("metered");
    assert_eq!(w.watts, 240.0, "{}", w.source);
    let r = act(&mut d, Action::Off).map_err(|f| f.error.to_string());
    assert_eq!(
        r,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert!(!a.is_on(7) && !b.is_on(7));
    let w = block_on(d.power_reading(None))
        .expect("reading")
        .expect("metered");
    assert_eq!(w.watts, 0.0, "{}", w.source);
    assert!(
        w.source.contains("A:7") && w.source.contains("B:7"),
        "{}",
        w.source
    );
    act(&mut d, Action::On).expect("on");
    assert!(a.is_on(7) && b.is_on(7));

    b.set_refuse(&[7]);
    let e = act(&mut d, Action::Off).expect_err("B:7 is stuck on");
    assert_eq!(e.error.kind, ErrorKind::TransitionTimeout, "{}", e.error);
    assert!(e.error.message.contains("still on: B:7"), "{}", e.error);
    assert!(!a.is_on(7), "A:7 was switched off all the same");
    assert!(b.is_on(7));
}

/// Bad credentials: a wrong community is silence (snmpd drops it), so it
/// ends after the tries; v3 errors come back as Reports and end at once.
#[test]
fn wrong_credentials_fail_cleanly_and_fast() {
    let Some(peer) = Snmpd::start("apc", 4) else {
        return;
    };
    let t0 = Instant::now();
    let mut d = driver(
        vec![pdu(peer.port, "A", community(Version::V2c, "wrong"), "apc")],
        &[(0, "1")],
    );
    let e = act(&mut d, Action::Off).expect_err("wrong community");
    assert_eq!(e.error.kind, ErrorKind::Timeout, "{}", e.error);
    assert!(e.error.message.contains("wrong community"), "{}", e.error);
    assert!(!e.error.message.contains("wrong\""), "{}", e.error);
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());

    let cases = [
        (
            v3(
                "fenceSha",
                AuthProtocol::Sha1,
                "badpass123",
                Some((PrivProtocol::Aes128, SNMP_PRIV_PASS)),
            ),
            ErrorKind::PasswordInvalid,
        ),
        (
            v3("nosuchuser", AuthProtocol::Sha1, SNMP_AUTH_PASS, None),
            ErrorKind::UsernameInvalid,
        ),
        (
            v3(
                "fenceSha",
                AuthProtocol::Md5,
                SNMP_AUTH_PASS,
                Some((PrivProtocol::Aes128, SNMP_PRIV_PASS)),
            ),
            ErrorKind::PasswordInvalid,
        ),
    ];
    for (sec, kind) in cases {
        let t0 = Instant::now();
        let mut d = driver(vec![pdu(peer.port, "A", sec, "apc")], &[(0, "1")]);
        let e = act(&mut d, Action::Off).expect_err("bad v3 credentials");
        assert_eq!(e.error.kind, kind, "{}", e.error);
        assert!(
            t0.elapsed() < Duration::from_secs(1),
            "{:?}: {}",
            t0.elapsed(),
            e.error
        );
        assert!(!e.error.message.contains("badpass") && !e.error.message.contains("authpass"));
    }
    assert!(peer.is_on(1), "no bad credential switched anything");

    // A read-only community cannot switch: refused, with the cause.
    let mut d = driver(
        vec![pdu(
            peer.port,
            "A",
            community(Version::V2c, "public"),
            "apc",
        )],
        &[(0, "2")],
    );
    let e = act(&mut d, Action::Off).expect_err("read-only");
    assert_eq!(e.error.kind, ErrorKind::PrivilegeNotObtained, "{}", e.error);
    assert!(peer.is_on(2));
}

/// A wrong privacy password: the agent cannot decrypt and says so, or stays
/// silent; either way no outlet moves and the action fails.
#[test]
fn wrong_privacy_password_fails() {
    let Some(peer) = Snmpd::start("apc", 2) else {
        return;
    };
    let t0 = Instant::now();
    let mut d = driver(
        vec![pdu(
            peer.port,
            "A",
            v3(
                "fenceSha",
                AuthProtocol::Sha1,
                SNMP_AUTH_PASS,
                Some((PrivProtocol::Aes128, "wrongpriv1")),
            ),
            "apc",
        )],
        &[(0, "1")],
    );
    let e = act(&mut d, Action::Off).expect_err("wrong privacy password");
    assert!(
        matches!(
            e.error.kind,
            ErrorKind::PasswordInvalid | ErrorKind::Timeout
        ),
        "{}",
        e.error
    );
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert!(peer.is_on(1));
}

/// The Eaton Managed ePDU profile: zero-based table, 1 = on, 0 = off.
#[test]
fn eaton_managed_epdu() {
    let Some(peer) = Snmpd::start("eaton", 8) else {
        return;
    };
    let mut d = driver(
        vec![pdu(
            peer.port,
            "E",
            community(Version::V1, SNMP_COMMUNITY),
            "eaton",
        )],
        &[(0, "3")],
    );
    act(&mut d, Action::Off).expect("off");
    assert!(!peer.is_on(3) && peer.is_on(2) && peer.is_on(4));
    assert!(
        peer.ops()
            .contains(&".1.3.6.1.4.1.534.6.6.6.1.2.2.1.3.2 0".to_string()),
        "{:?}",
        peer.ops()
    );
    let list = block_on(d.list(0, None)).expect("list");
    assert_eq!(list.len(), 8);
    assert_eq!(
        (list[2].id.as_str(), list[2].alias.as_str(), list[2].state),
        ("3", "3", Some(PowerState::Off))
    );
    assert_eq!(
        block_on(d.power_reading(None)),
        Ok(None),
        "no per-outlet meter in this profile"
    );
}

/// Native, through an inventory, against snmpd (issue 23, item 7): an
/// outlet name two outlets carry is refused before anything is switched
/// (exit 1, both named); an outlet that reads off while it keeps its load
/// fails the off at the power timeout, naming the load (exit 1).
#[test]
fn native_refuses_an_ambiguous_name_and_a_welded_outlet() {
    let Some(peer) = Snmpd::start("apc", 8) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let community = dir.path().join("community");
    std::fs::write(&community, "private\n").unwrap();
    let inv = dir.path().join("pdu.toml");
    std::fs::write(
        &inv,
        format!(
            "[pdu.A]\nendpoint = \"snmp://127.0.0.1:{}\"\nsnmp_version = \"2c\"\n\
             community_file = \"{}\"\n\
             [[node]]\nname = \"dup\"\n[[node.fence]]\ndriver = \"snmp\"\noutlets = [\"A:dup\"]\n\
             [[node]]\nname = \"welded\"\n[[node.fence]]\ndriver = \"snmp\"\noutlets = [\"A:3\"]\n",
            peer.port,
            community.display()
        ),
    )
    .unwrap();
    let inv = inv.to_str().unwrap();
    let fk = |args: &[&str]| {
        let mut c = std::process::Command::new(support::bin());
        c.args(args)
            .env("NO_COLOR", "1")
            .env("XDG_RUNTIME_DIR", dir.path())
            .env_remove("FENCEKIT_INVENTORY");
        support::run(c, Duration::from_secs(60))
    };
    let mut st = peer.state();
    st["names"] = serde_json::json!({"7": "dup", "8": "dup"});
    st["welded"] = serde_json::json!([3]);
    peer.set_state(&st);

    let r = fk(&["off", "-i", inv, "dup"]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("the outlet name 'dup' is ambiguous")
            && r.stderr.contains("outlets 7 and 8")
            && r.stderr.contains("nothing was switched"),
        "{r}"
    );
    assert!(peer.is_on(7) && peer.is_on(8));
    assert!(peer.ops().is_empty(), "{:?}", peer.ops());

    let r = fk(&["off", "-i", inv, "welded", "--power-timeout", "2s"]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("timed out waiting to power OFF")
            && r.stderr
                .contains("the outlets read off but still carry 120 W"),
        "{r}"
    );
    // The same threshold as verify's: a node's max_off_watts above the load lets it pass.
    let r = fk(&["off", "-i", inv, "welded", "--max-off-watts", "150"]);
    r.assert_code(0);
}
