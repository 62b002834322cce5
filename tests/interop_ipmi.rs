//! Interop: the native `fencekit` IPMI client against real BMC implementations.
//!
//! Peers: OpenIPMI `ipmi_sim` (suites 0-14; never answers Get Channel Cipher
//! Suites; sessions start at USER privilege), the pyghmi BMC (suites 3 and/or
//! 17) and `udp_proxy.py` (datagram counting, loss, black hole). Every state
//! change is checked on the peer's own state file, not only in our output.
//! Contract: docs/design.md ("Native CLI").

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use support::*;

/// A normal action against a healthy loopback BMC (debug build, busy CI).
const FAST: Duration = Duration::from_secs(2);
/// Words a "no answer" failure should use.
const TIMEOUT_WORDS: &[&str] = &[
    "timed out",
    "timeout",
    "no answer",
    "no response",
    "not respond",
    "unreachable",
];
/// Words a bad-credential failure should use.
const AUTH_WORDS: &[&str] = &["password", "authenticat", "credential"];

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// `fencekit ACTION TARGET [--cipher C] [EXTRA…]` with the peers' password.
fn fk(action: &str, target: &str, cipher: Option<&str>, extra: &[&str]) -> Run {
    fk_pw(action, target, cipher, extra, PASSWORD)
}

fn fk_pw(action: &str, target: &str, cipher: Option<&str>, extra: &[&str], pw: &str) -> Run {
    let mut args = vec![action, target];
    if let Some(c) = cipher {
        args.extend(["--cipher", c]);
    }
    args.extend(extra);
    fencekit(&args, pw)
}

/// Checks a JSON result: action, ok, state.
#[track_caller]
fn assert_json(r: &Run, action: &str, ok: bool, state: Option<&str>) {
    let res = r.json_result();
    assert_eq!(res["action"], action, "action\n{r}");
    assert_eq!(res["ok"], ok, "ok\n{r}");
    if let Some(s) = state {
        assert_eq!(res["state"], s, "state\n{r}");
    }
    if ok {
        assert!(res["error"].is_null(), "error on success\n{r}");
    } else {
        assert!(res["error"].is_string(), "no error string on failure\n{r}");
    }
    assert!(res["elapsed_ms"].is_u64(), "elapsed_ms\n{r}");
}

/// Human status output says `on` (and not `off`), or the reverse.
#[track_caller]
fn assert_human_state(r: &Run, on: bool) {
    let words = r.stdout_words();
    let (yes, no) = if on { ("on", "off") } else { ("off", "on") };
    assert!(
        words.iter().any(|w| w == yes) && !words.iter().any(|w| w == no),
        "human output should say {yes}\n{r}"
    );
}

// ------------------------------------------------------------ ipmi_sim ----

#[test]
fn ipmi_sim_status_cipher3_human_and_json() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(true);
    let r = fk("status", &sim.target(), Some("3"), &[]);
    r.assert_code(0).assert_faster_than(FAST);
    assert_human_state(&r, true);
    let r = fk("status", &sim.target(), Some("3"), &["--output", "json"]);
    r.assert_code(0).assert_faster_than(FAST);
    assert_json(&r, "status", true, Some("on"));
    assert!(
        sim.ops().is_empty(),
        "status must not change power: {:?}",
        sim.ops()
    );
    assert!(sim.power());
}

#[test]
fn ipmi_sim_status_off_exits_2() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(false);
    let r = fk("status", &sim.target(), Some("3"), &[]);
    r.assert_code(2).assert_faster_than(FAST);
    assert_human_state(&r, false);
    let r = fk("status", &sim.target(), Some("3"), &["--output", "json"]);
    r.assert_code(2);
    assert_json(&r, "status", true, Some("off"));
    assert!(!sim.power());
}

#[test]
fn ipmi_sim_off_then_on_cipher3_changes_sim_state() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(true);
    let r = fk("off", &sim.target(), Some("3"), &["--output", "json"]);
    r.assert_code(0).assert_faster_than(FAST);
    assert_json(&r, "off", true, Some("off"));
    assert!(!sim.power(), "sim still on after off\n{r}");
    assert_eq!(sim.ops(), ["set power 0"], "sim ops after off");

    // and back through the status command: exit 2 now
    fk("status", &sim.target(), Some("3"), &[]).assert_code(2);

    let r = fk("on", &sim.target(), Some("3"), &["--output", "json"]);
    r.assert_code(0).assert_faster_than(FAST);
    assert_json(&r, "on", true, Some("on"));
    assert!(sim.power(), "sim still off after on\n{r}");
    assert_eq!(sim.ops(), ["set power 0", "set power 1"]);
}

#[test]
fn ipmi_sim_off_when_already_off_succeeds() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(false);
    let r = fk("off", &sim.target(), Some("3"), &[]);
    r.assert_code(0).assert_faster_than(FAST);
    assert!(!sim.power());
}

#[test]
fn ipmi_sim_reboot_cipher3_goes_off_then_on() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(true);
    let r = fk("reboot", &sim.target(), Some("3"), &["--output", "json"]);
    r.assert_code(0).assert_faster_than(Duration::from_secs(5));
    assert_json(&r, "reboot", true, None);
    let st = &r.json_result()["state"];
    assert!(st.is_null() || st == "on", "state after reboot\n{r}");
    assert!(sim.power(), "sim off after reboot\n{r}");
    let ops = sim.ops();
    let off = ops.iter().position(|o| o == "set power 0");
    let on = ops.iter().rposition(|o| o == "set power 1");
    assert!(
        matches!((off, on), (Some(a), Some(b)) if a < b),
        "reboot (method onoff) should switch off then on, ops: {ops:?}"
    );
}

#[test]
fn ipmi_sim_reboot_from_off_powers_on() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(false);
    let r = fk("reboot", &sim.target(), Some("3"), &[]);
    r.assert_code(0).assert_faster_than(Duration::from_secs(5));
    assert!(sim.power(), "sim off after reboot\n{r}");
}

#[test]
fn ipmi_sim_without_cipher_works_quickly() {
    // ipmi_sim never answers Get Channel Cipher Suites: ipmitool loses 10 s on
    // it. Our automatic choice must not.
    require!("ipmi_sim");
    let sim = IpmiSim::start(true);
    let r = fk("status", &sim.target(), None, &["--output", "json"]);
    r.assert_code(0).assert_faster_than(secs(1.5));
    assert_json(&r, "status", true, Some("on"));
    println!("auto cipher status against ipmi_sim: {:?}", r.elapsed);

    let r = fk("off", &sim.target(), None, &[]);
    r.assert_code(0).assert_faster_than(secs(1.5));
    assert!(!sim.power(), "sim still on\n{r}");
}

#[test]
fn ipmi_sim_without_cipher_datagrams() {
    require!("ipmi_sim", "udp_proxy");
    let sim = IpmiSim::start(true);
    let proxy = UdpProxy::start(Some(sim.port), &[]);
    let r = fk("status", &proxy.target(), None, &[]);
    r.assert_code(0).assert_faster_than(secs(1.5));
    let n = proxy.client_datagrams();
    println!(
        "auto cipher status against ipmi_sim: {n} client datagrams\n{}",
        proxy.log()
    );
    assert!(
        n <= 11,
        "{n} datagrams (ipmitool -C 3 sends 11)\n{}",
        proxy.log()
    );
}

#[test]
fn ipmi_sim_cipher17_unsupported_fails_cleanly() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(true);
    let r = fk("off", &sim.target(), Some("17"), &[]);
    r.assert_code(1).assert_faster_than(Duration::from_secs(3));
    r.assert_mentions(&["cipher", "suite", "algorithm"]);
    assert!(sim.power(), "power changed by a failed login");
    assert!(sim.ops().is_empty());
}

#[test]
fn ipmi_sim_wrong_password_fails_fast_and_names_it() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(true);
    let r = fk_pw("off", &sim.target(), Some("3"), &[], "not-the-password");
    r.assert_code(1).assert_faster_than(Duration::from_secs(3));
    r.assert_mentions(AUTH_WORDS);
    assert!(
        !r.stderr.contains("not-the-password") && !r.stdout.contains("not-the-password"),
        "password leaked into output\n{r}"
    );
    assert!(sim.power(), "power changed despite wrong password");
    assert!(sim.ops().is_empty());

    let r = fk_pw(
        "status",
        &sim.target(),
        None,
        &["--output", "json"],
        "wrong",
    );
    r.assert_code(1).assert_faster_than(Duration::from_secs(3));
    assert_json(&r, "status", false, None);
}

#[test]
fn ipmi_sim_wrong_user_fails_fast() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(true);
    let t = format!("ipmi://nobody@{HOST}:{}", sim.port);
    let r = fk("status", &t, Some("3"), &[]);
    r.assert_code(1).assert_faster_than(Duration::from_secs(3));
    r.assert_mentions(&["user", "name", "authenticat", "credential"]);
}

#[test]
fn ipmi_sim_stuck_power_times_out_without_false_success() {
    require!("ipmi_sim");
    let sim = IpmiSim::start(true);
    sim.set_stuck(true);
    let r = fk("off", &sim.target(), Some("3"), &["--power-timeout", "2s"]);
    r.assert_code(1)
        .assert_elapsed_within(secs(1.8), secs(5.0))
        .assert_mentions(&["timed out waiting to power off"]);
    assert!(
        !r.text().contains("success"),
        "a stuck BMC must not be reported as fenced\n{r}"
    );
    assert!(sim.power(), "stuck sim changed power");
    assert!(
        sim.ops().iter().any(|o| o == "set power 0"),
        "the off command was never sent: {:?}",
        sim.ops()
    );

    let r = fk(
        "off",
        &sim.target(),
        Some("3"),
        &["--power-timeout", "2s", "--output", "json"],
    );
    r.assert_code(1).assert_elapsed_within(secs(1.8), secs(5.0));
    assert_json(&r, "off", false, Some("on"));
    let err = r.json_result()["error"]
        .as_str()
        .unwrap_or("")
        .to_lowercase();
    assert!(err.contains("timed out"), "error: {err}\n{r}");
}

// ------------------------------------------------------ loss, no answer ----

#[test]
fn black_hole_fails_at_overall_timeout() {
    require!("udp_proxy");
    let hole = UdpProxy::start(None, &[]);
    let r = fk("status", &hole.target(), Some("3"), &["--timeout", "3s"]);
    r.assert_code(1)
        .assert_elapsed_within(secs(2.7), secs(4.5))
        .assert_mentions(TIMEOUT_WORDS);
    assert!(
        hole.client_datagrams() >= 2,
        "no retransmission at all?\n{}",
        hole.log()
    );
}

#[test]
fn black_hole_fails_at_login_timeout() {
    require!("udp_proxy");
    let hole = UdpProxy::start(None, &[]);
    let r = fk(
        "off",
        &hole.target(),
        None,
        &["--login-timeout", "2s", "--output", "json"],
    );
    r.assert_code(1).assert_elapsed_within(secs(1.8), secs(3.5));
    assert_json(&r, "off", false, None);
    let err = r.json_result()["error"]
        .as_str()
        .unwrap_or("")
        .to_lowercase();
    assert!(
        TIMEOUT_WORDS.iter().any(|w| err.contains(w)),
        "error should say it timed out: {err}\n{r}"
    );
    println!(
        "black hole, login timeout 2 s: {} datagrams in {:?}",
        hole.client_datagrams(),
        r.elapsed
    );
}

#[test]
fn black_hole_default_deadline_never_hangs() {
    // defaults: --login-timeout 10s, --timeout 60s: must give up at ~10 s
    require!("udp_proxy");
    let hole = UdpProxy::start(None, &[]);
    let r = fk("status", &hole.target(), Some("3"), &[]);
    r.assert_code(1)
        .assert_elapsed_within(secs(9.5), secs(12.5))
        .assert_mentions(TIMEOUT_WORDS);
}

#[test]
fn status_datagrams_not_more_than_ipmitool() {
    require!("ipmi_sim", "udp_proxy", "ipmitool");
    let sim = IpmiSim::start(true);

    let p1 = UdpProxy::start(Some(sim.port), &[]);
    let it = ipmitool(p1.port, PASSWORD, Some(3), &["chassis", "power", "status"]);
    it.assert_code(0);
    let theirs = p1.client_datagrams();

    let p2 = UdpProxy::start(Some(sim.port), &[]);
    let r = fk("status", &p2.target(), Some("3"), &["--output", "json"]);
    r.assert_code(0);
    let ours = p2.client_datagrams();
    // our own traffic accounting, when reported, must match the wire
    if let Some(sent) = r.json_result()["traffic"]["sent"].as_u64() {
        assert_eq!(sent as usize, ours, "JSON traffic.sent vs proxy count\n{r}");
    }
    println!("client datagrams per status, cipher 3: fencekit {ours}, ipmitool {theirs}");
    assert!(
        ours <= theirs.min(11),
        "fencekit {ours} > ipmitool {theirs}\n{}",
        p2.log()
    );
    assert!(
        ours >= 5,
        "implausibly few datagrams ({ours}) for an RMCP+ session"
    );
}

#[test]
fn dropped_datagrams_are_retransmitted() {
    require!("ipmi_sim", "udp_proxy");
    let sim = IpmiSim::start(true);
    let proxy = UdpProxy::start(Some(sim.port), &[1, 3]);
    let r = fk("status", &proxy.target(), Some("3"), &[]);
    r.assert_code(0).assert_faster_than(Duration::from_secs(6));
    let d = proxy.datagrams();
    assert_eq!(d.iter().filter(|d| d.dropped).count(), 2, "{}", proxy.log());
    println!(
        "status with datagrams 1 and 3 dropped: {:?}, {} datagrams",
        r.elapsed,
        d.len()
    );

    let proxy = UdpProxy::start(Some(sim.port), &[1, 3]);
    let r = fk("off", &proxy.target(), Some("3"), &[]);
    r.assert_code(0).assert_faster_than(Duration::from_secs(6));
    assert!(!sim.power(), "sim still on\n{r}");
    assert_eq!(
        sim.ops(),
        ["set power 0"],
        "exactly one power-off despite retransmissions"
    );
}

/// Client datagram indices (1-based, among the first `n`) that a seeded
/// pseudo-random 30 % loss drops: deterministic, so a failure reproduces.
fn loss_30(seed: u64, n: usize) -> Vec<usize> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (1..=n)
        .filter(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % 10 < 3
        })
        .collect()
}

#[test]
fn thirty_percent_loss_off_and_on_still_succeed() {
    // SPEC §11: 30 % random loss, every action still succeeds within its
    // deadline (here only client→BMC datagrams are lost).
    require!("ipmi_sim", "udp_proxy");
    let sim = IpmiSim::start(true);
    for seed in [1u64, 4, 5, 8] {
        let drops = loss_30(seed, 200);
        let (action, want) = if sim.power() {
            ("off", false)
        } else {
            ("on", true)
        };
        let proxy = UdpProxy::start(Some(sim.port), &drops);
        let r = fk(action, &proxy.target(), Some("3"), &["--timeout", "20s"]);
        let d = proxy.datagrams();
        let lost = d.iter().filter(|d| d.dropped).count();
        println!(
            "seed {seed}: {action} with {lost} of {} datagrams lost: {:?}",
            d.len(),
            r.elapsed
        );
        r.assert_code(0).assert_faster_than(Duration::from_secs(20));
        assert_eq!(
            sim.power(),
            want,
            "seed {seed}: {action} not carried out\n{r}"
        );
    }
}

// -------------------------------------------------------------- pyghmi ----

#[test]
fn pyghmi_suite3_only() {
    require!("pyghmi");
    let bmc = Pyghmi::start("3", true);
    let r = fk("status", &bmc.target(), Some("3"), &["--output", "json"]);
    r.assert_code(0).assert_faster_than(FAST);
    assert_json(&r, "status", true, Some("on"));

    let r = fk("off", &bmc.target(), Some("3"), &[]);
    r.assert_code(0).assert_faster_than(FAST);
    assert!(!bmc.power(), "pyghmi still on\n{r}");

    // automatic choice falls back to the only suite offered
    let r = fk("on", &bmc.target(), None, &[]);
    r.assert_code(0).assert_faster_than(FAST);
    assert!(bmc.power(), "pyghmi still off\n{r}");

    // asking for 17 where only 3 is offered: clean, fast failure
    let r = fk("status", &bmc.target(), Some("17"), &[]);
    r.assert_code(1).assert_faster_than(Duration::from_secs(3));
    r.assert_mentions(&["cipher", "suite", "algorithm"]);
}

#[test]
fn pyghmi_suite17_only() {
    require!("pyghmi");
    let bmc = Pyghmi::start("17", true);
    let r = fk("status", &bmc.target(), Some("17"), &["--output", "json"]);
    r.assert_code(0).assert_faster_than(FAST);
    assert_json(&r, "status", true, Some("on"));

    let r = fk("off", &bmc.target(), Some("17"), &["--output", "json"]);
    r.assert_code(0).assert_faster_than(FAST);
    assert_json(&r, "off", true, Some("off"));
    assert!(!bmc.power(), "pyghmi still on\n{r}");

    fk("status", &bmc.target(), None, &[]).assert_code(2);

    let r = fk("on", &bmc.target(), None, &[]);
    r.assert_code(0).assert_faster_than(FAST);
    assert!(bmc.power(), "pyghmi still off\n{r}");

    let r = fk("status", &bmc.target(), Some("3"), &[]);
    r.assert_code(1).assert_faster_than(Duration::from_secs(3));
    r.assert_mentions(&["cipher", "suite", "algorithm"]);
}

/// Sizes of the client datagrams of one `fencekit status` through a proxy.
fn status_sizes(bmc_port: u16, cipher: Option<&str>) -> (Run, Vec<usize>) {
    let proxy = UdpProxy::start(Some(bmc_port), &[]);
    let r = fk("status", &proxy.target(), cipher, &["--output", "json"]);
    let sizes = proxy.datagrams().iter().map(|d| d.bytes).collect();
    (r, sizes)
}

#[test]
fn pyghmi_both_suites_auto_picks_17() {
    require!("pyghmi", "udp_proxy");
    let bmc = Pyghmi::start("3,17", true);
    let (r3, s3) = status_sizes(bmc.port, Some("3"));
    r3.assert_code(0);
    let (r17, s17) = status_sizes(bmc.port, Some("17"));
    r17.assert_code(0);
    let (ra, sa) = status_sizes(bmc.port, None);
    ra.assert_code(0).assert_faster_than(FAST);
    assert_json(&ra, "status", true, Some("on"));
    println!("datagram sizes: suite 3 {s3:?}, suite 17 {s17:?}, auto {sa:?}");

    // RAKP 3 and the integrity trailers differ in size between the suites
    // (HMAC-SHA1 20/12 bytes vs HMAC-SHA256 32/16): that tells which suite
    // the automatic choice negotiated, whatever our output says.
    let only17: Vec<usize> = s17.iter().copied().filter(|s| !s3.contains(s)).collect();
    let only3: Vec<usize> = s3.iter().copied().filter(|s| !s17.contains(s)).collect();
    assert!(
        !only17.is_empty() && !only3.is_empty(),
        "suites indistinguishable: {s3:?} {s17:?}"
    );
    assert!(
        only17.iter().all(|s| sa.contains(s)) && !only3.iter().any(|s| sa.contains(s)),
        "auto did not negotiate suite 17: auto {sa:?}, suite 3 {s3:?}, suite 17 {s17:?}"
    );
    // if the JSON reports the suite, it must say 17
    let res = ra.json_result();
    for key in ["cipher", "cipher_suite", "suite"] {
        if let Some(v) = res.get(key).filter(|v| !v.is_null()) {
            assert!(v == 17 || v == "17", "{key} = {v}\n{ra}");
        }
    }
    if let Some(session) = res["session"].as_str() {
        assert!(session.contains("suite 17"), "session: {session}\n{ra}");
    }
    assert!(bmc.power());
}

#[test]
fn pyghmi_both_suites_explicit_and_list() {
    require!("pyghmi");
    let bmc = Pyghmi::start("3,17", false);
    for c in ["3", "17"] {
        let r = fk("status", &bmc.target(), Some(c), &[]);
        r.assert_code(2).assert_faster_than(FAST);
        assert_human_state(&r, false);
    }
    let r = fk("on", &bmc.target(), Some("17"), &[]);
    r.assert_code(0);
    assert!(bmc.power(), "pyghmi still off\n{r}");
}

#[test]
fn pyghmi_datagrams_not_more_than_ipmitool() {
    require!("pyghmi", "udp_proxy", "ipmitool");
    let bmc = Pyghmi::start("3,17", true);
    for suite in [3u8, 17] {
        let p1 = UdpProxy::start(Some(bmc.port), &[]);
        ipmitool(
            p1.port,
            PASSWORD,
            Some(suite),
            &["chassis", "power", "status"],
        )
        .assert_code(0);
        let theirs = p1.client_datagrams();
        let p2 = UdpProxy::start(Some(bmc.port), &[]);
        fk("status", &p2.target(), Some(&suite.to_string()), &[]).assert_code(0);
        let ours = p2.client_datagrams();
        println!("pyghmi suite {suite}: fencekit {ours} datagrams, ipmitool {theirs}");
        assert!(
            ours <= theirs,
            "suite {suite}: fencekit {ours} > ipmitool {theirs}\n{}",
            p2.log()
        );
    }
}

#[test]
fn pyghmi_reboot_goes_through_off() {
    require!("pyghmi");
    let bmc = Pyghmi::start("3,17", true);
    // watch the BMC's own state file while the reboot runs
    let stop = Arc::new(AtomicBool::new(false));
    let seen_off = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (stop, seen_off) = (stop.clone(), seen_off.clone());
        let f = bmc.state_file().to_path_buf();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                if std::fs::read_to_string(&f).is_ok_and(|s| s.trim() == "0") {
                    seen_off.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let r = fk("reboot", &bmc.target(), Some("17"), &[]);
    stop.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    r.assert_code(0).assert_faster_than(Duration::from_secs(5));
    assert!(
        seen_off.load(Ordering::SeqCst),
        "the BMC was never off during the reboot\n{r}"
    );
    assert!(bmc.power(), "pyghmi off after reboot\n{r}");
}

#[test]
fn pyghmi_wrong_password_fails_fast() {
    require!("pyghmi");
    let bmc = Pyghmi::start("3,17", true);
    for c in [Some("3"), Some("17"), None] {
        let r = fk_pw("off", &bmc.target(), c, &[], "bad-password");
        r.assert_code(1).assert_faster_than(Duration::from_secs(3));
        r.assert_mentions(AUTH_WORDS);
        assert!(!r.text().contains("bad-password"), "password leaked\n{r}");
    }
    assert!(bmc.power(), "power changed despite wrong password");
}

#[test]
fn pyghmi_unknown_user_fails_fast() {
    require!("pyghmi");
    let bmc = Pyghmi::start("17", true);
    let t = format!("ipmi://nobody@{HOST}:{}", bmc.port);
    let r = fk("status", &t, Some("17"), &[]);
    r.assert_code(1).assert_faster_than(Duration::from_secs(3));
    r.assert_mentions(&["user", "name", "authenticat", "credential"]);
}
