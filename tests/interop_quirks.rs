//! Quirky BMCs side by side (issue 24, docs/ipmi.md): the lab's IPMI quirk
//! knobs against native fencekit, our `fence_ipmilan`, FreeIPMI's
//! `ipmipower` with and without the workaround its documentation names,
//! and `ipmitool`. The simulated chassis is read after every action (not
//! through the quirky BMC), so a client that says "ok" without the power
//! having changed, or the reverse, is caught.
//!
//! Each knob was shaped until `ipmipower` fails without its workaround and
//! succeeds with it (the BMCs themselves are not at hand): fencekit must
//! fence each one, by itself where that costs no check and with the named
//! workaround otherwise, and fail naming that workaround without it.
//!
//! Needs `ipmipower` and `ipmitool` (skips, or fails under
//! `FENCEKIT_REQUIRE_PEERS=1`, without them). Every lab runs in-process on
//! an address of its own.

mod support;

use fencekit::lab::bmc::{Bmc, Faults, IpmiQuirks};
use fencekit::lab::fleet::LabSpec;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use support::*;

/// A directory with `fence_ipmilan` → the fencekit binary.
fn agent() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fencekit-quirks")
            .tempdir()
            .unwrap()
            .keep();
        std::os::unix::fs::symlink(bin(), dir.join("fence_ipmilan")).unwrap();
        dir
    })
    .join("fence_ipmilan")
}

/// One quirky BMC and what each client needs against it.
struct Quirk {
    quirks: IpmiQuirks,
    /// Clients speak IPMI 1.5 to it (else 2.0).
    v15: bool,
    /// The workaround `ipmipower` needs (`None`: it copes without).
    freeipmi: Option<&'static str>,
    /// The workaround fencekit needs (`None`: it copes by itself).
    fencekit: Option<&'static str>,
    /// Whether `ipmitool` switches the power.
    ipmitool: bool,
}

struct Bench {
    _lab: InProcessLab,
    bmc: Bmc,
    host: String,
    port: u16,
    faults: Faults,
}

impl Bench {
    fn start(quirks: IpmiQuirks) -> Bench {
        let faults = Faults {
            quirks,
            ..Faults::default()
        };
        let lab = InProcessLab::start(LabSpec {
            faults: faults.clone(),
            redfish: None,
            ..LabSpec::default()
        });
        let node = lab.nodes[0].clone();
        Bench {
            bmc: node.bmc,
            host: node.ipmi.ip().to_string(),
            port: node.ipmi.port(),
            faults,
            _lab: lab,
        }
    }

    /// The quirks as they were at the start (counters such as `busy=N`
    /// armed again), and the power as given: before every client.
    fn rearm(&self, on: bool) {
        self.bmc.set_faults(self.faults.clone());
        self.bmc.set_on(on);
    }

    fn target(&self) -> String {
        format!("ipmi://{USER}@{}:{}", self.host, self.port)
    }

    fn fencekit(&self, action: &str, v15: bool, extra: &[&str]) -> Run {
        let t = self.target();
        let mut args = vec![action, t.as_str(), "--login-timeout", "2s"];
        if v15 {
            args.extend(["--ipmi-version", "1.5"]);
        }
        args.extend(extra);
        fencekit(&args, LAB_PASSWORD)
    }

    fn agent(&self, action: &str, v15: bool, extra: &[&str]) -> Run {
        let mut c = Command::new(agent());
        c.args(["--ip", &self.host, "--ipport", &self.port.to_string()])
            .args(["--username", USER, "--password", LAB_PASSWORD])
            .args(["--login-timeout", "2", "--power-wait", "0", "-o", action])
            .args(extra);
        if !v15 {
            c.arg("--lanplus");
        }
        run(c, Duration::from_secs(30))
    }

    fn ipmipower(&self, action: &str, v15: bool, extra: &[&str]) -> Run {
        let mut c = support::tool("ipmipower");
        c.args(["-h", &format!("{}:{}", self.host, self.port)])
            .args(["-u", USER, "-p", LAB_PASSWORD])
            .args([
                "--session-timeout",
                "3000",
                "--retransmission-timeout",
                "500",
            ])
            .args(["-D", if v15 { "LAN" } else { "LAN_2_0" }])
            .arg(action)
            .args(extra);
        if !v15 {
            c.args(["-I", "3"]);
        }
        run(c, Duration::from_secs(30))
    }

    fn ipmitool(&self, v15: bool, cipher: Option<u8>, args: &[&str]) -> Run {
        let mut c = support::tool("ipmitool");
        c.args(["-I", if v15 { "lan" } else { "lanplus" }])
            .args(["-H", &self.host, "-p", &self.port.to_string()])
            .args(["-U", USER, "-P", LAB_PASSWORD, "-N", "1", "-R", "2"]);
        if let (false, Some(s)) = (v15, cipher) {
            c.args(["-C", &s.to_string()]);
        }
        c.args(args);
        run(c, Duration::from_secs(40))
    }

    #[track_caller]
    fn power_is(&self, on: bool, who: &str, r: &Run) {
        assert!(
            eventually(Duration::from_secs(2), || self.bmc.truly_on() == on),
            "{who}: the simulated power should be {}\n{r}",
            if on { "on" } else { "off" }
        );
    }
}

/// Every client against `q`, the power read from the simulation after
/// each action.
fn side_by_side(name: &str, q: Quirk) {
    require!("ipmipower", "ipmitool");
    let b = Bench::start(q.quirks.clone());
    let v15 = q.v15;

    // native fencekit: off
    b.rearm(true);
    if let Some(w) = q.fencekit {
        let r = b.fencekit("off", v15, &[]);
        r.assert_code(1)
            .assert_mentions(&[&format!("--workaround {w}")]);
        b.power_is(true, &format!("{name}: fencekit without {w}"), &r);
        b.rearm(true);
        let r = b.fencekit("off", v15, &["--workaround", w, "--output", "json"]);
        r.assert_code(0);
        b.power_is(false, &format!("{name}: fencekit --workaround {w}"), &r);
        assert!(
            r.stdout.contains(&format!("\"name\": \"{w}\"")),
            "{name}: {r}"
        );
    } else {
        let r = b.fencekit("off", v15, &[]);
        r.assert_code(0);
        b.power_is(false, &format!("{name}: fencekit"), &r);
    }

    // our fence_ipmilan: on
    b.rearm(false);
    if let Some(w) = q.fencekit {
        let r = b.agent("on", v15, &[]);
        r.assert_code(1)
            .assert_mentions(&[&format!("--workaround {w}")]);
        b.power_is(false, &format!("{name}: fence_ipmilan without {w}"), &r);
        b.rearm(false);
        let r = b.agent("on", v15, &["--workaround", w]);
        r.assert_code(0);
        assert_eq!(r.stdout.trim(), "Success: Powered ON", "{name}: {r}");
        b.power_is(true, &format!("{name}: fence_ipmilan --workaround {w}"), &r);
    } else {
        let r = b.agent("on", v15, &[]);
        r.assert_code(0);
        b.power_is(true, &format!("{name}: fence_ipmilan"), &r);
    }

    // ipmipower: off, without and with its workaround
    let ok_line = format!("{}: ok", b.host);
    b.rearm(true);
    let r = b.ipmipower("--off", v15, &[]);
    match q.freeipmi {
        Some(w) => {
            assert_ne!(
                r.stdout.trim(),
                ok_line,
                "{name}: ipmipower without -W {w}\n{r}"
            );
            b.power_is(true, &format!("{name}: ipmipower without -W {w}"), &r);
            b.rearm(true);
            let r = b.ipmipower("--off", v15, &["-W", w]);
            assert_eq!(r.stdout.trim(), ok_line, "{name}: ipmipower -W {w}\n{r}");
            b.power_is(false, &format!("{name}: ipmipower -W {w}"), &r);
        }
        None => {
            assert_eq!(r.stdout.trim(), ok_line, "{name}: ipmipower\n{r}");
            b.power_is(false, &format!("{name}: ipmipower"), &r);
        }
    }

    // ipmitool: on
    b.rearm(false);
    let cipher = (!q.quirks.untagged_ciphers && !q.quirks.cipher_garbage).then_some(3);
    let r = b.ipmitool(v15, cipher, &["chassis", "power", "on"]);
    if q.ipmitool {
        r.assert_code(0);
        b.power_is(true, &format!("{name}: ipmitool"), &r);
    } else {
        assert_ne!(r.code, Some(0), "{name}: ipmitool should fail\n{r}");
        b.power_is(false, &format!("{name}: ipmitool (failed)"), &r);
    }
}

fn q(f: impl FnOnce(&mut IpmiQuirks)) -> IpmiQuirks {
    let mut q = IpmiQuirks::default();
    f(&mut q);
    q
}

#[test]
fn supermicro_x9_bad_checksums_rmcpp() {
    side_by_side(
        "bad-checksum (2.0)",
        Quirk {
            quirks: q(|q| q.bad_checksum = true),
            v15: false,
            freeipmi: Some("nochecksumcheck"),
            fencekit: None,
            ipmitool: true,
        },
    );
}

#[test]
fn supermicro_x9_bad_checksums_ipmi15() {
    // Get Channel Authentication Capabilities has nothing that vouches for
    // it: named only (the in-session replies' MD5 codes then cover the rest).
    side_by_side(
        "bad-checksum (1.5)",
        Quirk {
            quirks: q(|q| q.bad_checksum = true),
            v15: true,
            freeipmi: Some("nochecksumcheck"),
            fencekit: Some("nochecksumcheck"),
            ipmitool: true,
        },
    );
}

#[test]
fn supermicro_h8qme_long_rakp2() {
    side_by_side(
        "rakp2-long",
        Quirk {
            quirks: q(|q| q.rakp2_long = true),
            v15: false,
            freeipmi: Some("supermicro20"),
            fencekit: None,
            ipmitool: true,
        },
    );
}

#[test]
fn untruncated_rakp4_check_value() {
    side_by_side(
        "rakp4-untruncated",
        Quirk {
            quirks: q(|q| q.rakp4_untruncated = true),
            v15: false,
            freeipmi: None,
            fencekit: None,
            ipmitool: true,
        },
    );
}

#[test]
fn intel_se7520af2_padded_user_name() {
    side_by_side(
        "pad-username",
        Quirk {
            quirks: q(|q| q.pad_username = true),
            v15: false,
            freeipmi: Some("intel20"),
            fencekit: None,
            ipmitool: false,
        },
    );
}

#[test]
fn sun_ilom_rmcpp() {
    // untagged cipher records, one byte too many in RAKP 2, keys hashed
    // with the Open Session privilege
    side_by_side(
        "sun ilom",
        Quirk {
            quirks: q(|q| {
                q.untagged_ciphers = true;
                q.rakp2_long = true;
                q.opensesspriv = true;
            }),
            v15: false,
            freeipmi: Some("sun20"),
            fencekit: None,
            ipmitool: false,
        },
    );
}

#[test]
fn open_session_privilege_hashing() {
    side_by_side(
        "opensesspriv",
        Quirk {
            quirks: q(|q| q.opensesspriv = true),
            v15: false,
            freeipmi: Some("opensesspriv"),
            fencekit: None,
            ipmitool: false,
        },
    );
}

#[test]
fn garbage_cipher_suite_list() {
    side_by_side(
        "cipher-garbage",
        Quirk {
            quirks: q(|q| q.cipher_garbage = true),
            v15: false,
            freeipmi: None,
            fencekit: None,
            ipmitool: true,
        },
    );
}

#[test]
fn tyan_s2882_session_id_zero() {
    side_by_side(
        "session-id-zero",
        Quirk {
            quirks: q(|q| q.session_id_zero = true),
            v15: true,
            freeipmi: Some("idzero"),
            fencekit: Some("idzero"),
            ipmitool: true,
        },
    );
}

#[test]
fn windmill_wrong_auth_codes() {
    side_by_side(
        "bad-authcode",
        Quirk {
            quirks: q(|q| q.bad_authcode = true),
            v15: true,
            freeipmi: Some("noauthcodecheck"),
            fencekit: Some("noauthcodecheck"),
            ipmitool: true,
        },
    );
}

#[test]
fn dell_pe2850_unexpected_auth_codes() {
    side_by_side(
        "unexpected-auth",
        Quirk {
            quirks: q(|q| q.unexpected_auth = true),
            v15: true,
            freeipmi: Some("unexpectedauth"),
            fencekit: None,
            ipmitool: true,
        },
    );
}

#[test]
fn ibm_eserver_325_per_message_auth_required() {
    side_by_side(
        "permsg-required",
        Quirk {
            quirks: q(|q| q.permsg_required = true),
            v15: true,
            freeipmi: Some("forcepermsg"),
            fencekit: None,
            ipmitool: false,
        },
    );
}

#[test]
fn sun_ilom_byte_swapped_sequence_numbers() {
    // Read in the BMC's byte order without being asked (every number still
    // replay-checked): fencekit needs no workaround, and names it.
    side_by_side(
        "endianseq",
        Quirk {
            quirks: q(|q| q.endianseq = true),
            v15: true,
            freeipmi: Some("endianseq"),
            fencekit: None,
            ipmitool: true,
        },
    );
    let b = Bench::start(q(|q| q.endianseq = true));
    for extra in [&[][..], &["--workaround", "endianseq"][..]] {
        b.rearm(true);
        let mut args = vec!["--output", "json"];
        args.extend_from_slice(extra);
        let r = b.fencekit("off", true, &args);
        r.assert_code(0);
        b.power_is(false, &format!("endianseq {extra:?}"), &r);
        assert!(
            r.stdout.contains("\"name\": \"endianseq\""),
            "{extra:?}: {r}"
        );
    }
}

#[test]
fn under_reported_authentication_capabilities() {
    // ipmitool "works" here by opening a session with authentication type
    // none, which the BMC listed: anyone could have answered it.
    side_by_side(
        "authcap-wrong",
        Quirk {
            quirks: q(|q| q.authcap_wrong = true),
            v15: true,
            freeipmi: Some("authcap"),
            fencekit: Some("authcap"),
            ipmitool: true,
        },
    );
}

#[test]
fn operator_only_user() {
    for v15 in [false, true] {
        side_by_side(
            "operator-user",
            Quirk {
                quirks: q(|q| q.operator_user = true),
                v15,
                freeipmi: None,
                fencekit: None,
                ipmitool: false,
            },
        );
    }
}

#[test]
fn ipmi15_only_bmc_is_found_quickly() {
    require!("ipmipower", "ipmitool");
    for silent_cipher_query in [false, true] {
        let b = Bench::start(q(|q| q.ipmi15_only = true));
        b.bmc.lock().faults.no_cipher_query = silent_cipher_query;
        let mut f = b.faults.clone();
        f.no_cipher_query = silent_cipher_query;
        b.bmc.set_faults(f.clone());
        // fencekit's default (2.0, automatic cipher) finds out within 3 s
        let t0 = Instant::now();
        let r = b.fencekit("off", false, &["--output", "json"]);
        r.assert_code(0);
        assert!(
            t0.elapsed() < Duration::from_secs(3),
            "took {:?}\n{r}",
            t0.elapsed()
        );
        assert!(
            r.stdout.contains("the BMC speaks IPMI 1.5 only"),
            "said in the output\n{r}"
        );
        b.power_is(false, "fencekit (2.0 default)", &r);
        // our agent with --lanplus too
        b.bmc.set_on(true);
        let r = b.agent("off", false, &[]);
        r.assert_code(0);
        b.power_is(false, "fence_ipmilan --lanplus", &r);
        // a fixed suite fails at once, naming the cause
        b.bmc.set_on(true);
        let r = b.fencekit("status", false, &["--cipher", "3"]);
        r.assert_code(1)
            .assert_mentions(&["IPMI 1.5 only", "--ipmi-version 1.5"])
            .assert_faster_than(Duration::from_secs(3));
        // ipmipower and ipmitool: 2.0 fails, 1.5 works
        let r = b.ipmipower("--stat", false, &[]);
        assert_eq!(
            r.stdout.trim(),
            format!("{}: ipmi 2.0 unavailable", b.host),
            "{r}"
        );
        let r = b.ipmipower("--off", true, &[]);
        assert_eq!(r.stdout.trim(), format!("{}: ok", b.host), "{r}");
        b.power_is(false, "ipmipower -D LAN", &r);
        let r = b.ipmitool(false, None, &["chassis", "power", "on"]);
        assert_ne!(r.code, Some(0), "{r}");
        b.power_is(false, "ipmitool lanplus (failed)", &r);
        let r = b.ipmitool(true, None, &["chassis", "power", "on"]);
        r.assert_code(0);
        b.power_is(true, "ipmitool lan", &r);
    }
}

#[test]
fn busy_bmc_is_asked_again_within_the_deadline() {
    require!("ipmipower", "ipmitool");
    // C0h node busy, then C3h timeout while processing, on the first reads
    for quirks in [q(|q| q.busy = 3), q(|q| q.busy_timeout = 3)] {
        let b = Bench::start(quirks);
        b.rearm(true);
        let r = b.fencekit("off", false, &["--output", "json"]);
        r.assert_code(0);
        assert!(r.stdout.contains("asked again"), "{r}");
        b.power_is(false, "fencekit off (busy)", &r);
        b.rearm(true);
        let r = b.fencekit("status", true, &[]);
        r.assert_code(0);
        b.rearm(false);
        let r = b.agent("on", false, &[]);
        r.assert_code(0);
        b.power_is(true, "fence_ipmilan on (busy)", &r);
        // ipmipower: C3h to a status read is a silent exit 0
        b.rearm(true);
        let r = b.ipmipower("--stat", false, &[]);
        if b.faults.quirks.busy_timeout > 0 {
            assert_eq!((r.code, r.stdout.trim()), (Some(0), ""), "{r}");
        }
        // ipmitool gives up on the first busy answer
        b.rearm(true);
        let r = b.ipmitool(false, Some(3), &["chassis", "power", "status"]);
        assert_ne!(r.code, Some(0), "{r}");
    }
}

#[test]
fn chassis_control_timeout_is_read_back_not_resent() {
    require!("ipmitool");
    // C3h to Chassis Control: carried out. fencekit reads the chassis and
    // does not send the command again.
    let b = Bench::start(q(|q| q.control_timeout = 1));
    b.rearm(true);
    let r = b.fencekit("off", false, &[]);
    r.assert_code(0);
    b.power_is(false, "fencekit off (C3h)", &r);
    assert_eq!(b.bmc.log(), ["off"], "sent once: {r}");
    b.rearm(false);
    let r = b.agent("on", true, &[]);
    r.assert_code(0);
    b.power_is(true, "fence_ipmilan on (C3h)", &r);
    // ipmitool reports the C3h as a failure although the power changed
    b.rearm(true);
    let r = b.ipmitool(false, Some(3), &["chassis", "power", "off"]);
    assert_ne!(r.code, Some(0), "{r}");
    b.power_is(false, "ipmitool off (C3h: carried out)", &r);
}

#[test]
fn check_names_what_a_bmc_needed_and_the_audit_records_what_was_used() {
    // no peer needed: fencekit and the lab only
    let b = Bench::start(q(|q| {
        q.pad_username = true;
        q.rakp2_long = true;
        q.operator_user = true;
    }));
    let r = fencekit(&["check", &b.target(), "--output", "json"], LAB_PASSWORD);
    r.assert_code(0);
    let row = &r.json()["checks"][0];
    assert_eq!(
        row["workarounds"],
        serde_json::json!(["intel20", "supermicro20"]),
        "{r}"
    );
    let detail = row["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("privilege operator"),
        "the granted level: {r}"
    );
    assert!(
        detail.contains(r#"needed workarounds = ["intel20", "supermicro20"]"#),
        "{r}"
    );
    assert!(b.bmc.truly_on(), "check switched nothing");

    // a workaround that drops a check: a warning on every use, and the audit
    let b = Bench::start(q(|q| q.bad_authcode = true));
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    for _ in 0..2 {
        b.rearm(true);
        let r = b.fencekit(
            "off",
            true,
            &["-W", "noauthcodecheck", "--audit", audit.to_str().unwrap()],
        );
        r.assert_code(0);
        assert!(
            r.stderr.contains("warning: ipmi://admin@")
                && r.stderr.contains("workaround noauthcodecheck in use"),
            "warned on every use\n{r}"
        );
        b.power_is(false, "fencekit -W noauthcodecheck", &r);
    }
    let lines = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(lines.lines().count(), 2);
    for l in lines.lines() {
        let rec: serde_json::Value = serde_json::from_str(l).unwrap();
        let w = &rec["evidence"]["workarounds"];
        assert!(
            w.as_array().is_some_and(|a| a
                .iter()
                .any(|x| x["name"] == "noauthcodecheck" && x["weakens_security"] == true)),
            "{rec}"
        );
    }
}
