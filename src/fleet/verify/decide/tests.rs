//! The verdict table, rule by rule, and the behaviours earlier versions
//! got wrong (each such test says what changed).

use super::*;
use PowerState::{Off, On};

const N: u32 = 3;

fn chan(kind: ChannelKind, src: &str, reads: &[Option<PowerState>]) -> ChannelReads {
    ChannelReads {
        source: src.into(),
        kind,
        reads: reads.to_vec(),
        unread: None,
    }
}

fn bmc(src: &str, reads: &[Option<PowerState>]) -> ChannelReads {
    chan(ChannelKind::Bmc, src, reads)
}

fn outlet(reads: &[Option<PowerState>]) -> ChannelReads {
    chan(ChannelKind::Outlet, "snmp://pdu/7", reads)
}

fn refused(src: &str, why: Unread) -> ChannelReads {
    ChannelReads {
        source: src.into(),
        kind: ChannelKind::Bmc,
        reads: vec![None],
        unread: Some(why),
    }
}

fn ch(reads: &[Option<PowerState>]) -> Vec<ChannelReads> {
    vec![bmc("ipmi://bmc", reads)]
}

fn p(kind: Probe) -> Vec<(String, Probe)> {
    vec![("h:22".to_string(), kind)]
}

fn meter(w: f64) -> Vec<(Witness, Draw)> {
    vec![(
        Witness::BmcMeter {
            channel: "ipmi://bmc".into(),
        },
        Draw::Watts(w),
    )]
}

fn load(w: f64) -> Vec<(Witness, Draw)> {
    vec![(
        Witness::OutletLoad {
            channel: "snmp://pdu/7".into(),
        },
        Draw::Watts(w),
    )]
}

fn obs(
    expect: PowerState,
    channels: Vec<ChannelReads>,
    probes: Vec<(String, Probe)>,
    draws: Vec<(Witness, Draw)>,
) -> Observations {
    Observations {
        expect,
        samples: N,
        channels,
        probes,
        draws,
        max_off_watts: DEFAULT_MAX_OFF_WATTS,
    }
}

fn verdict(o: &Observations) -> Verdict {
    decide(o).0
}

/// The rule that decided, and its verdict.
fn rule(o: &Observations) -> (&'static str, Verdict) {
    let (r, v, _) = decide_by_rule(o);
    (r, v)
}

// ---------------------------------------------------------- the table ----

/// One row per rule: observations that reach it, and its verdict.
#[test]
fn every_rule_decides_its_row() {
    let off3 = || ch(&[Some(Off); 3]);
    let on3 = || ch(&[Some(On); 3]);
    let other = Unread::OtherMachine("uuid a ≠ b".into());
    let rows: Vec<(&str, Observations, Verdict)> = vec![
        (
            "identity-contradiction",
            obs(
                Off,
                vec![refused("ipmi://a", other.clone()), outlet(&[Some(Off); 3])],
                p(Probe::Silent),
                vec![],
            ),
            Verdict::Contradiction,
        ),
        (
            "reads-disagree",
            obs(Off, ch(&[Some(Off), Some(On), Some(Off)]), vec![], vec![]),
            Verdict::Contradiction,
        ),
        (
            "read-off-host-alive",
            obs(Off, off3(), p(Probe::Accepted), vec![]),
            Verdict::Contradiction,
        ),
        (
            "read-off-meter-hot",
            obs(Off, off3(), p(Probe::Silent), meter(212.0)),
            Verdict::Contradiction,
        ),
        (
            "read-on-meter-cold",
            obs(On, on3(), p(Probe::Accepted), meter(5.0)),
            Verdict::Contradiction,
        ),
        (
            "other-state-read",
            obs(Off, on3(), p(Probe::Silent), vec![]),
            Verdict::Unproven,
        ),
        (
            "host-alive",
            obs(Off, vec![], p(Probe::Reset), vec![]),
            Verdict::Unproven,
        ),
        (
            "meter-disagrees",
            obs(Off, vec![], p(Probe::Silent), meter(212.0)),
            Verdict::Unproven,
        ),
        (
            "nothing-read",
            obs(Off, ch(&[None; 3]), p(Probe::Silent), vec![]),
            Verdict::NoEvidence,
        ),
        (
            "gap",
            obs(
                Off,
                ch(&[Some(Off), None, Some(Off)]),
                p(Probe::Silent),
                vec![],
            ),
            Verdict::Unproven,
        ),
        (
            "probe-not-made",
            obs(
                Off,
                off3(),
                vec![("x.invalid:22".into(), Probe::Failed("no name".into()))],
                vec![],
            ),
            Verdict::Unproven,
        ),
        (
            "host-down-while-on",
            obs(On, on3(), p(Probe::Silent), vec![]),
            Verdict::Unproven,
        ),
        (
            "no-device-reading",
            obs(Off, vec![], p(Probe::Silent), vec![]),
            Verdict::Unproven,
        ),
        (
            "device-only",
            obs(Off, off3(), vec![], meter(9.0)),
            Verdict::BmcOnly,
        ),
        (
            "proven",
            obs(Off, off3(), p(Probe::Silent), meter(9.0)),
            Verdict::Proven,
        ),
    ];
    let mut seen = Vec::new();
    for (name, o, want) in &rows {
        let (r, v, why) = decide_by_rule(o);
        assert_eq!((r, v), (*name, *want), "row {name}: {why}");
        seen.push(*name);
    }
    let all: Vec<&str> = RULES.iter().map(|r| r.name).collect();
    assert_eq!(seen, all, "one row per rule, in the table's order");
}

#[test]
fn the_rule_is_stated_with_the_table() {
    let text = verdict_table_text();
    assert!(text.starts_with(&format!("The rule: {THE_RULE}")), "{text}");
    for (v, meaning, _) in VERDICTS {
        assert!(text.contains(v.as_str()) && text.contains(meaning));
    }
    for r in RULES {
        assert!(!r.says.is_empty(), "{}", r.name);
    }
}

// ------------------------------------------------ witnesses and types ----

#[test]
fn a_witness_carries_its_source_and_its_standing() {
    let c = "ipmi://a".to_string();
    let w = |w: Witness| (w.kind(), w.party(), w.independent(), w.source());
    assert_eq!(
        w(Witness::Bmc { channel: c.clone() }),
        ("bmc", Some(Party::Controller), false, c.clone())
    );
    // The BMC's meter is the BMC's word: it used to be "independent".
    assert_eq!(
        w(Witness::BmcMeter { channel: c.clone() }),
        (
            "bmc-meter",
            Some(Party::Controller),
            false,
            "ipmi://a power".into()
        )
    );
    assert_eq!(
        w(Witness::Outlet {
            channel: "snmp://p".into()
        }),
        ("outlet", Some(Party::Pdu), true, "snmp://p".into())
    );
    assert_eq!(
        w(Witness::OutletLoad {
            channel: "snmp://p".into()
        }),
        (
            "outlet-load",
            Some(Party::Pdu),
            true,
            "snmp://p power".into()
        )
    );
    assert_eq!(
        w(Witness::HostProbe {
            target: "h:22".into()
        }),
        ("host-probe", Some(Party::Host), true, "h:22".into())
    );
    assert_eq!(
        w(Witness::Hypervisor {
            channel: "ssh://kvm/virsh".into()
        }),
        (
            "hypervisor",
            Some(Party::Hypervisor),
            true,
            "ssh://kvm/virsh".into()
        )
    );
    assert_eq!(
        w(Witness::Manual {
            channel: "manual".into()
        }),
        ("manual", None, false, "manual".into())
    );
    assert_eq!(w(Witness::Policy), ("policy", None, false, "policy".into()));
    let e = Evidence::new(Witness::BmcMeter { channel: c }, "draws 9 W", 5, Some(true));
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["source"], "ipmi://a power");
    assert_eq!(v["witness"], "bmc-meter");
    assert_eq!(v["independent"], false);
    assert_eq!(v["agrees"], true);
}

// ----------------------------------------------------- off, row by row ----

// An RST used to count as "host down" (Probe::Refused agreed with off);
// it is a live network stack, so it now contradicts a BMC that says off.
#[test]
fn off_is_proven_only_with_agreeing_reads_and_a_silent_host() {
    let off3 = || ch(&[Some(Off); 3]);
    assert_eq!(
        verdict(&obs(Off, off3(), p(Probe::Silent), vec![])),
        Verdict::Proven
    );
    assert_eq!(
        verdict(&obs(Off, off3(), p(Probe::Unreachable), vec![])),
        Verdict::Proven
    );
    let (v, why) = decide(&obs(Off, off3(), p(Probe::Accepted), vec![]));
    assert_eq!(v, Verdict::Contradiction);
    assert!(why.contains("answers on h:22 (accepted)"), "{why}");
    let (v, why) = decide(&obs(Off, off3(), p(Probe::Reset), vec![]));
    assert_eq!(v, Verdict::Contradiction, "an RST is a sign of life");
    assert!(why.contains("h:22 (reset)") && why.contains("RST"), "{why}");
    assert_eq!(
        verdict(&obs(
            Off,
            ch(&[Some(Off), Some(On), Some(Off)]),
            p(Probe::Silent),
            vec![]
        )),
        Verdict::Contradiction
    );
    assert_eq!(
        verdict(&obs(Off, ch(&[Some(On); 3]), p(Probe::Silent), vec![])),
        Verdict::Unproven
    );
    assert_eq!(
        verdict(&obs(Off, ch(&[None; 3]), p(Probe::Silent), vec![])),
        Verdict::NoEvidence
    );
}

// One unread channel used to leave the verdict "proven"; every channel
// must now give all its reads.
#[test]
fn channels_must_agree() {
    let two = vec![
        bmc("ipmi://a", &[Some(Off); 3]),
        bmc("redfish://a", &[Some(On); 3]),
    ];
    let (v, why) = decide(&obs(Off, two, p(Probe::Silent), vec![]));
    assert_eq!(v, Verdict::Contradiction);
    assert!(why.contains("ipmi://a: 3 off, 0 on"), "{why}");
    let one_dead = vec![
        bmc("ipmi://a", &[None, None, None]),
        bmc("redfish://a", &[Some(Off); 3]),
    ];
    let (v, why) = decide(&obs(Off, one_dead, p(Probe::Silent), vec![]));
    assert_eq!(v, Verdict::Unproven);
    assert!(why.contains("ipmi://a could not be read"), "{why}");
    // Two channels that agree are named, and are one witness.
    let both = vec![
        bmc("ipmi://a", &[Some(Off); 3]),
        bmc("redfish://a", &[Some(Off); 3]),
    ];
    let (v, why) = decide(&obs(Off, both.clone(), vec![], vec![]));
    assert_eq!(v, Verdict::BmcOnly);
    assert!(
        why.contains("through ipmi://a, redfish://a") && why.contains("not independent"),
        "{why}"
    );
    let (v, why) = decide(&obs(Off, both, p(Probe::Silent), vec![]));
    assert_eq!(v, Verdict::Proven);
    assert!(why.contains("ipmi://a, redfish://a"), "{why}");
}

#[test]
fn gaps_break_the_run() {
    // One of three reads failed: off was read twice, not three times in a row.
    let (v, why) = decide(&obs(
        Off,
        ch(&[Some(Off), None, Some(Off)]),
        p(Probe::Silent),
        vec![],
    ));
    assert_eq!(v, Verdict::Unproven);
    assert!(why.contains("gave 2 of 3 reads"), "{why}");
    // Reading stopped early (a non-transient error): fewer reads than asked.
    let (v, why) = decide(&obs(Off, ch(&[Some(Off)]), p(Probe::Silent), vec![]));
    assert_eq!(v, Verdict::Unproven);
    assert!(why.contains("gave 1 of 3 reads"), "{why}");
    // The same gap on the way up.
    assert_eq!(
        verdict(&obs(
            On,
            ch(&[Some(On), None, Some(On)]),
            p(Probe::Accepted),
            vec![]
        )),
        Verdict::Unproven
    );
}

#[test]
fn bmc_reads_alone_are_bmc_only() {
    let (v, why) = decide(&obs(Off, ch(&[Some(Off); 3]), vec![], vec![]));
    assert_eq!(v, Verdict::BmcOnly);
    assert!(
        why.contains("3 consecutive read(s) through ipmi://bmc")
            && why.contains("nothing independent was checked"),
        "{why}"
    );
    // A device that does not measure power adds no witness, and no failure.
    let meter_says = |d: Draw| {
        vec![(
            Witness::BmcMeter {
                channel: "ipmi://bmc".into(),
            },
            d,
        )]
    };
    assert_eq!(
        verdict(&obs(
            Off,
            ch(&[Some(Off); 3]),
            vec![],
            meter_says(Draw::Unsupported)
        )),
        Verdict::BmcOnly
    );
    assert_eq!(
        verdict(&obs(
            Off,
            ch(&[Some(Off); 3]),
            vec![],
            meter_says(Draw::Failed("no DCMI".into()))
        )),
        Verdict::BmcOnly
    );
    assert_eq!(
        verdict(&obs(On, ch(&[Some(On); 3]), vec![], vec![])),
        Verdict::BmcOnly
    );
}

// A low draw on the BMC's own meter used to be a witness of its own
// ("proven" with no probe, no outlet: issue 23, item 1). The meter is
// the BMC's word: it can contradict, never prove.
#[test]
fn power_draw_is_a_witness_both_ways() {
    let (v, why) = decide(&obs(Off, ch(&[Some(Off); 3]), vec![], meter(9.0)));
    assert_eq!(v, Verdict::BmcOnly, "the BMC's meter never proves: {why}");
    assert!(
        why.contains("9 W (at most 50 W)") && why.contains("its word again"),
        "{why}"
    );
    let (v, why) = decide(&obs(Off, ch(&[Some(Off); 3]), vec![], meter(212.0)));
    assert_eq!(v, Verdict::Contradiction);
    assert!(
        why.contains("212 W") && why.contains("more than 50 W"),
        "{why}"
    );
    // Exactly at the threshold agrees (still the BMC's own word); the
    // threshold is configurable.
    assert_eq!(
        verdict(&obs(Off, ch(&[Some(Off); 3]), vec![], meter(50.0))),
        Verdict::BmcOnly
    );
    assert_eq!(
        verdict(&obs(
            Off,
            ch(&[Some(Off); 3]),
            p(Probe::Silent),
            meter(50.0)
        )),
        Verdict::Proven
    );
    let mut o = obs(Off, ch(&[Some(Off); 3]), vec![], meter(30.0));
    o.max_off_watts = 20.0;
    assert_eq!(verdict(&o), Verdict::Contradiction);
    // A hot draw outweighs a silent probe.
    assert_eq!(
        verdict(&obs(
            Off,
            ch(&[Some(Off); 3]),
            p(Probe::Silent),
            meter(212.0)
        )),
        Verdict::Contradiction
    );
    // The other way: a node "on" that draws what a machine on standby
    // draws is contradicted (it used to be proven: issue 23, item 3).
    let (v, why) = decide(&obs(On, ch(&[Some(On); 3]), p(Probe::Accepted), meter(5.0)));
    assert_eq!(v, Verdict::Contradiction);
    assert!(
        why.contains("draws at most 50 W") && why.contains("5 W"),
        "{why}"
    );
    assert_eq!(
        verdict(&obs(
            On,
            ch(&[Some(On); 3]),
            p(Probe::Accepted),
            meter(212.0)
        )),
        Verdict::Proven
    );
}

#[test]
fn an_outlet_reading_off_is_independent() {
    let chans = vec![bmc("ipmi://a", &[Some(Off); 3]), outlet(&[Some(Off); 3])];
    let (v, why) = decide(&obs(Off, chans.clone(), vec![], vec![]));
    assert_eq!(v, Verdict::Proven);
    assert!(why.contains("snmp://pdu/7 (outlet off)"), "{why}");
    // With its load metered near zero: proven without a probe.
    let (v, why) = decide(&obs(Off, chans.clone(), vec![], load(0.0)));
    assert_eq!(v, Verdict::Proven);
    assert!(
        why.contains("snmp://pdu/7 power: 0 W (at most 50 W)"),
        "{why}"
    );
    // An outlet off that still carries load: a welded relay.
    let (v, why) = decide(&obs(Off, chans, vec![], load(180.0)));
    assert_eq!(v, Verdict::Contradiction);
    assert!(why.contains("snmp://pdu/7 power: 180 W"), "{why}");
    // An outlet on offers power; it says nothing about the node (the BMC
    // switched it off): no contradiction, and no witness either.
    let chans = vec![bmc("ipmi://a", &[Some(Off); 3]), outlet(&[Some(On); 3])];
    assert_eq!(
        rule(&obs(Off, chans.clone(), vec![], vec![])),
        ("device-only", Verdict::BmcOnly)
    );
    assert_eq!(
        verdict(&obs(Off, chans, p(Probe::Silent), vec![])),
        Verdict::Proven
    );
    // For on, outlets on prove nothing, unless their meter shows a
    // running machine: then the PDU is a party that agrees.
    let pdu_only = || vec![outlet(&[Some(On); 3])];
    assert_eq!(
        rule(&obs(On, pdu_only(), p(Probe::Accepted), vec![])),
        ("no-device-reading", Verdict::Unproven)
    );
    let (r, v, why) = decide_by_rule(&obs(On, pdu_only(), p(Probe::Accepted), load(212.0)));
    assert_eq!((r, v), ("proven", Verdict::Proven), "{why}");
    assert!(why.contains("212 W (more than 50 W)"), "{why}");
    // No power at the outlet, yet the BMC says on.
    let chans = vec![bmc("ipmi://a", &[Some(On); 3]), outlet(&[Some(Off); 3])];
    assert_eq!(
        rule(&obs(On, chans, p(Probe::Accepted), vec![])),
        ("reads-disagree", Verdict::Contradiction)
    );
}

// Issue 23, item 2: a channel refused because it reports another machine
// used to look "dark" behind outlets that read off, and the verdict was
// "proven". It is an identity contradiction; a channel that cannot confirm
// the machine, or cannot be set up, is a gap — never dark.
#[test]
fn a_bmc_dark_behind_an_outlet_that_reads_off_is_no_gap() {
    // The outlet cut the power, and the BMC went dark with it.
    let chans = vec![bmc("ipmi://a", &[None; 3]), outlet(&[Some(Off); 3])];
    let (v, why) = decide(&obs(Off, chans, p(Probe::Silent), vec![]));
    assert_eq!(v, Verdict::Proven);
    assert!(
        why.contains("ipmi://a cannot be read, as expected with its power cut"),
        "{why}"
    );
    // Without a probe: the BMC's silence agrees with the outlet, as a
    // silent host would (and a load near zero with both).
    let chans = vec![bmc("ipmi://a", &[None; 3]), outlet(&[Some(Off); 3])];
    assert_eq!(
        rule(&obs(Off, chans.clone(), vec![], load(0.0))),
        ("proven", Verdict::Proven)
    );
    // A node on its outlets alone: the PDU's own word.
    assert_eq!(
        rule(&obs(Off, vec![outlet(&[Some(Off); 3])], vec![], load(0.0))),
        ("device-only", Verdict::BmcOnly)
    );
    // Not when the outlet itself has a gap, or still draws power.
    let chans = vec![
        bmc("ipmi://a", &[None; 3]),
        outlet(&[Some(Off), None, Some(Off)]),
    ];
    assert_eq!(
        verdict(&obs(Off, chans, p(Probe::Silent), vec![])),
        Verdict::Unproven
    );
    let chans = vec![bmc("ipmi://a", &[None; 3]), outlet(&[Some(Off); 3])];
    assert_eq!(
        verdict(&obs(Off, chans, vec![], load(212.0))),
        Verdict::Contradiction
    );
    // A BMC with a gap (it answered, then not) is still a gap.
    let chans = vec![
        bmc("ipmi://a", &[Some(Off), None, None]),
        outlet(&[Some(Off); 3]),
    ];
    assert_eq!(verdict(&obs(Off, chans, vec![], vec![])), Verdict::Unproven);
    // And a host that answers contradicts the outlet (the wrong outlet?).
    let chans = vec![bmc("ipmi://a", &[None; 3]), outlet(&[Some(Off); 3])];
    assert_eq!(
        verdict(&obs(Off, chans, p(Probe::Accepted), vec![])),
        Verdict::Contradiction
    );
    // Another machine is never dark: an identity contradiction.
    let other = refused("ipmi://a", Unread::OtherMachine("uuid 1 ≠ 2".into()));
    let (r, v, why) = decide_by_rule(&obs(
        Off,
        vec![other, outlet(&[Some(Off); 3])],
        p(Probe::Silent),
        vec![],
    ));
    assert_eq!((r, v), ("identity-contradiction", Verdict::Contradiction));
    assert!(
        why.contains("identity contradiction: ipmi://a: uuid 1 ≠ 2") && !why.contains("dark"),
        "{why}"
    );
    // An identity that cannot be read, or a method that cannot be set up:
    // a gap, not dark.
    for unread in [
        Unread::Unconfirmed("no GUID".into()),
        Unread::NotBuilt("no password".into()),
    ] {
        let chans = vec![refused("ipmi://a", unread), outlet(&[Some(Off); 3])];
        let (r, v, why) = decide_by_rule(&obs(Off, chans, p(Probe::Silent), vec![]));
        assert_eq!((r, v), ("gap", Verdict::Unproven), "{why}");
        assert!(why.contains("ipmi://a was not read"), "{why}");
    }
}

#[test]
fn a_probe_that_could_not_be_made_is_unproven() {
    let mut probes = p(Probe::Silent);
    probes.push((
        "nowhere.invalid:22".into(),
        Probe::Failed("failed to look up".into()),
    ));
    let (v, why) = decide(&obs(Off, ch(&[Some(Off); 3]), probes, vec![]));
    assert_eq!(v, Verdict::Unproven);
    assert!(
        why.contains("nowhere.invalid:22: failed to look up"),
        "{why}"
    );
}

// A manual level alone with a silent host used to be "proven" (issue 23,
// item 4): one silent probe is weak evidence, and nothing else read the
// node off.
#[test]
fn without_channels_witnesses_decide() {
    let (v, why) = decide(&obs(Off, vec![], p(Probe::Silent), vec![]));
    assert_eq!(v, Verdict::Unproven);
    assert!(
        why.starts_with("weak evidence only: h:22 (silent)"),
        "{why}"
    );
    // Two probes of the one host are still the host alone.
    let mut two = p(Probe::Silent);
    two.push(("h:10250".into(), Probe::Unreachable));
    assert_eq!(
        rule(&obs(Off, vec![], two, vec![])),
        ("no-device-reading", Verdict::Unproven)
    );
    assert_eq!(
        verdict(&obs(Off, vec![], p(Probe::Accepted), vec![])),
        Verdict::Unproven
    );
    assert_eq!(
        verdict(&obs(Off, vec![], vec![], vec![])),
        Verdict::NoEvidence
    );
}

// ------------------------------------------------------ on, row by row ----

#[test]
fn on_needs_the_host_to_accept() {
    let on2 = || ch(&[Some(On); 3]);
    assert_eq!(
        verdict(&obs(On, on2(), p(Probe::Accepted), vec![])),
        Verdict::Proven
    );
    assert_eq!(
        verdict(&obs(On, on2(), p(Probe::Silent), vec![])),
        Verdict::Unproven
    );
    // Only an accepted connection proves the host up; an RST does not.
    let (v, why) = decide(&obs(On, on2(), p(Probe::Reset), vec![]));
    assert_eq!(v, Verdict::Unproven);
    assert!(why.contains("h:22 (reset)"), "{why}");
    assert_eq!(
        verdict(&obs(On, ch(&[Some(Off); 3]), p(Probe::Silent), vec![])),
        Verdict::Unproven
    );
    assert_eq!(
        verdict(&obs(On, ch(&[Some(Off); 3]), p(Probe::Accepted), vec![])),
        Verdict::Contradiction
    );
    // A BMC that reads off while a live kernel resets the probe: the same
    // contradiction as for off (it used to be "unproven").
    assert_eq!(
        rule(&obs(On, ch(&[Some(Off); 3]), p(Probe::Reset), vec![])),
        ("read-off-host-alive", Verdict::Contradiction)
    );
    assert_eq!(
        verdict(&obs(
            On,
            ch(&[Some(On), Some(Off), Some(On)]),
            p(Probe::Accepted),
            vec![]
        )),
        Verdict::Contradiction
    );
    assert_eq!(
        verdict(&obs(On, ch(&[None; 3]), p(Probe::Silent), vec![])),
        Verdict::NoEvidence
    );
    assert_eq!(
        verdict(&obs(On, ch(&[None; 3]), p(Probe::Accepted), vec![])),
        Verdict::Unproven
    );
}

// Issue 23, item 3: with no channel at all, `--expect on` used to say
// `bmc-only` ("the BMC reports on" when no BMC was read), which
// --accept-bmc-only turned into exit 0.
#[test]
fn on_with_nothing_read_is_no_evidence() {
    let (r, v, why) = decide_by_rule(&obs(On, vec![], vec![], vec![]));
    assert_eq!((r, v), ("no-device-reading", Verdict::NoEvidence), "{why}");
    assert!(!why.contains("BMC reports on"), "{why}");
    // The host answering alone is weak: no device read the node on.
    assert_eq!(
        rule(&obs(On, vec![], p(Probe::Accepted), vec![])),
        ("no-device-reading", Verdict::Unproven)
    );
    // A low draw with nothing read on: not a running machine.
    assert_eq!(
        rule(&obs(On, vec![], p(Probe::Accepted), meter(5.0))),
        ("meter-disagrees", Verdict::Unproven)
    );
}

#[test]
fn a_hypervisor_is_a_witness_outside_the_bmc() {
    let chans = vec![
        bmc("redfish://a", &[Some(Off); 3]),
        chan(ChannelKind::Hypervisor, "ssh://kvm/virsh", &[Some(Off); 3]),
    ];
    let (v, why) = decide(&obs(Off, chans, vec![], vec![]));
    assert_eq!(v, Verdict::Proven);
    assert!(
        why.contains("ssh://kvm/virsh (hypervisor reads off)"),
        "{why}"
    );
    // Alone, the hypervisor is the device under suspicion.
    let alone = vec![chan(
        ChannelKind::Hypervisor,
        "ssh://kvm/virsh",
        &[Some(Off); 3],
    )];
    assert_eq!(
        rule(&obs(Off, alone.clone(), vec![], vec![])),
        ("device-only", Verdict::BmcOnly)
    );
    assert_eq!(
        verdict(&obs(Off, alone, p(Probe::Silent), vec![])),
        Verdict::Proven
    );
}

#[test]
fn a_cloud_api_is_a_party_of_its_own_never_proof_alone() {
    let ec2 = || {
        chan(
            ChannelKind::Cloud,
            "aws://us-east-1/i-0abc",
            &[Some(Off); 3],
        )
    };
    // Alone, EC2 is the fencing device: its word is device-only.
    let (rule_name, v) = rule(&obs(Off, vec![ec2()], vec![], vec![]));
    assert_eq!((rule_name, v), ("device-only", Verdict::BmcOnly));
    let (_, why) = decide(&obs(Off, vec![ec2()], vec![], vec![]));
    assert!(why.contains("the cloud API reports off"), "{why}");
    // The node's own address going quiet is a second party: proven.
    let (v, why) = decide(&obs(Off, vec![ec2()], p(Probe::Silent), vec![]));
    assert_eq!(v, Verdict::Proven, "{why}");
    // The host still answering contradicts it.
    assert_eq!(
        verdict(&obs(Off, vec![ec2()], p(Probe::Accepted), vec![])),
        Verdict::Contradiction
    );
    // Nothing read from EC2 and nothing else: no evidence.
    let unread = vec![chan(ChannelKind::Cloud, "aws://us-east-1/i-0abc", &[None])];
    assert_eq!(
        verdict(&obs(Off, unread, vec![], vec![])),
        Verdict::NoEvidence
    );
}

/// Fabric fencing (issue 41): a switch port down isolates a node that
/// keeps running. The switch alone is its own word (bmc-only), the node's
/// address silent besides proves it, the address answering contradicts it;
/// a port up says nothing of the node, and it never darkens a BMC.
#[test]
fn a_switch_port_down_is_isolation_backed_only_by_the_nodes_silence() {
    let port = |r: PowerState| chan(ChannelKind::Fabric, "ifmib://sw/3", &[Some(r); 3]);
    let (rule_name, v) = rule(&obs(Off, vec![port(Off)], vec![], vec![]));
    assert_eq!((rule_name, v), ("device-only", Verdict::BmcOnly));
    let (_, why) = decide(&obs(Off, vec![port(Off)], vec![], vec![]));
    assert!(why.contains("isolated, not powered off"), "{why}");
    let (v, why) = decide(&obs(Off, vec![port(Off)], p(Probe::Silent), vec![]));
    assert_eq!(v, Verdict::Proven, "{why}");
    assert!(why.contains("ifmib://sw/3 (switch port(s) down)"), "{why}");
    let (rule_name, v) = rule(&obs(Off, vec![port(Off)], p(Probe::Accepted), vec![]));
    assert_eq!(
        (rule_name, v),
        ("read-off-host-alive", Verdict::Contradiction)
    );
    assert_eq!(
        verdict(&obs(Off, vec![port(Off)], p(Probe::Reset), vec![])),
        Verdict::Contradiction
    );
    // A port up is no reading of the node: the host's acceptance decides.
    let (rule_name, _) = rule(&obs(On, vec![port(On)], vec![], vec![]));
    assert_ne!(rule_name, "proven");
    // A BMC that cannot be read while the port is down is a gap, not dark:
    // the port cut the network, not the BMC's power.
    let dark = vec![port(Off), bmc("ipmi://bmc", &[None, None, None])];
    assert_eq!(rule(&obs(Off, dark, p(Probe::Silent), vec![])).0, "gap");
    assert_eq!(
        (
            Witness::Port {
                channel: "ifmib://sw/3".into()
            }
            .kind(),
            Witness::Port {
                channel: "x".into()
            }
            .party()
        ),
        ("switch-port", Some(Party::Fabric))
    );
}

#[test]
fn probe_errors_are_classified_as_on_the_wire() {
    let e = std::io::Error::from_raw_os_error;
    assert_eq!(Probe::of_error(&e(111)), Probe::Reset); // ECONNREFUSED
    assert_eq!(Probe::of_error(&e(113)), Probe::Unreachable); // EHOSTUNREACH
    assert_eq!(Probe::of_error(&e(101)), Probe::Unreachable); // ENETUNREACH
    assert_eq!(Probe::of_error(&e(112)), Probe::Unreachable); // EHOSTDOWN
    assert_eq!(Probe::of_error(&e(110)), Probe::Silent); // ETIMEDOUT
    assert!(matches!(Probe::of_error(&e(99)), Probe::Failed(_))); // EADDRNOTAVAIL
}
