//! The verdict: what the gathered observations prove ([`decide`], pure, so
//! it is tested on its own), the verdict table ([`VERDICTS`]) and the
//! observation types it reads. Gathering them is [`super::evidence`]'s.

use crate::engine::power::PowerState;
use serde::Serialize;
use std::time::Duration;

/// Default of `--max-off-watts`: the most a node reported off may draw.
/// A server on standby power (BMC, fans at rest) draws roughly 5–30 W; a
/// running one rarely less than 80 W. 50 W sits between the two.
pub const DEFAULT_MAX_OFF_WATTS: f64 = 50.0;

/// One piece of evidence.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Evidence {
    /// Where it comes from (a BMC endpoint, or host:port).
    pub source: String,
    /// What was seen.
    pub observation: String,
    /// Milliseconds since verification began.
    pub at_ms: u64,
    /// Whether it agrees with the expectation (`None`: no observation could be made).
    pub agrees: Option<bool>,
    /// Whether the source is independent of the node's BMC (a probe of the
    /// host, a power reading, a PDU outlet).
    pub independent: bool,
}

/// What a TCP probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A connection was accepted: the host is up.
    Accepted,
    /// Refused with an RST: a network stack answers at that address (the
    /// node's kernel, or whatever holds its address). A sign of life,
    /// never evidence of off.
    Reset,
    /// EHOSTUNREACH / ENETUNREACH / EHOSTDOWN: the neighbour or a router
    /// says nothing is there. Evidence of off.
    Unreachable,
    /// Nothing within the timeout: weak evidence of off (a firewall that
    /// drops does the same).
    Silent,
    /// The probe could not be made (the name does not resolve, no route to
    /// try, …): no observation.
    Failed(String),
}

impl Probe {
    /// Classifies a failed connection attempt.
    pub fn of_error(e: &std::io::Error) -> Probe {
        use std::io::ErrorKind as K;
        // EHOSTDOWN has no ErrorKind of its own.
        const EHOSTDOWN: i32 = 112;
        match e.kind() {
            K::ConnectionRefused | K::ConnectionReset => Probe::Reset,
            K::HostUnreachable | K::NetworkUnreachable => Probe::Unreachable,
            K::TimedOut => Probe::Silent,
            _ if e.raw_os_error() == Some(EHOSTDOWN) => Probe::Unreachable,
            _ => Probe::Failed(e.to_string()),
        }
    }

    /// What it means, for the evidence.
    pub(super) fn describe(&self, port: u16, timeout: Duration) -> String {
        match self {
            Probe::Accepted => format!("accepted: the host accepts connections on port {port}"),
            Probe::Reset => format!(
                "reset: port {port} answers with an RST — a live network stack (the kernel is up, \
                 the service is not)"
            ),
            Probe::Unreachable => {
                format!("unreachable: the network reports no host there (port {port})")
            }
            Probe::Silent => format!(
                "silent: no answer on port {port} within {:.1}s (weak: a firewall also drops)",
                timeout.as_secs_f64()
            ),
            Probe::Failed(why) => format!("not probed: {why}"),
        }
    }
}

/// The conclusion. [`VERDICTS`] says what each means and its exit code.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every channel agrees on every read and an independent witness agrees.
    Proven,
    /// Only the BMC (one or more channels to it) says so; nothing
    /// independent agrees. Fails unless BMC-only proof was accepted.
    BmcOnly,
    /// Pieces of evidence contradict each other (e.g. BMC off, host answering).
    Contradiction,
    /// The evidence does not show the expected state (a channel unread or
    /// with gaps, a probe that could not be made, the other state seen).
    Unproven,
    /// No evidence could be gathered.
    NoEvidence,
    /// The node is on, but its configuration differs from the baseline.
    Drift,
}

impl Verdict {
    /// The word used in JSON, audit records and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Proven => "proven",
            Verdict::BmcOnly => "bmc-only",
            Verdict::Contradiction => "contradiction",
            Verdict::Unproven => "unproven",
            Verdict::NoEvidence => "no-evidence",
            Verdict::Drift => "drift",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict table: verdict, what it means, exit code. `fencekit verify
/// --help`, the man page and `docs/operator.md` show it.
pub const VERDICTS: &[(Verdict, &str, &str)] = &[
    (
        Verdict::Proven,
        "every channel gave all its reads, all agreeing, and at least one independent \
         witness agrees (off: a silent or unreachable probe, a power draw at or under \
         --max-off-watts, a PDU outlet reading off; on: every probe accepted)",
        "0",
    ),
    (
        Verdict::BmcOnly,
        "the BMC reports the state on every read (over every channel to it); nothing \
         independent was checked",
        "3 (0 when accepted: --accept-bmc-only, inventory accept_bmc_only)",
    ),
    (
        Verdict::Contradiction,
        "witnesses disagree: the BMC reports off but the host accepts or resets a \
         connection, or draws more than --max-off-watts; or reads disagree",
        "3",
    ),
    (
        Verdict::Unproven,
        "the evidence does not show the state: the other state was read, a channel \
         could not be read or has gaps, a probe could not be made, (on) the host does \
         not accept connections",
        "3",
    ),
    (
        Verdict::Drift,
        "(--expect on) the node is up, but a rejoin check differs from the baseline",
        "3",
    ),
    (Verdict::NoEvidence, "no channel could be read at all", "1"),
];

/// The verdict table as plain text (for `--help` and the man page).
pub fn verdict_table_text() -> String {
    let mut s = String::from("Verdicts (verdict → exit status: meaning):\n");
    for (v, meaning, code) in VERDICTS {
        s.push_str(&format!(
            "  {} → exit {code}\n      {meaning}\n",
            v.as_str()
        ));
    }
    s
}

/// What a channel is, as a witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    /// The node's own controller (BMC, hypervisor): the party that may lie.
    Bmc,
    /// A device that cuts the node's power from outside (a PDU outlet):
    /// independent of the BMC.
    Outlet,
    // --- AWS (issue 25): a cloud provider's API, e.g. EC2. ---
    /// A cloud provider's API (EC2): it runs outside the instance, so its
    /// reading of the instance's state is independent of the node's own
    /// operating system, the party under suspicion (whose word could
    /// contradict, never prove, that it is off).
    Cloud,
}

/// What one channel read, in order (`None`: a read that failed).
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelReads {
    /// The endpoint.
    pub source: String,
    /// What kind of witness it is.
    pub kind: ChannelKind,
    /// The reads, in order; fewer than asked when reading stopped early.
    pub reads: Vec<Option<PowerState>>,
}

/// A power draw reading.
#[derive(Clone, Debug, PartialEq)]
pub enum Draw {
    /// Watts drawn.
    Watts(f64),
    /// The device does not measure it: no evidence, not a failure.
    Unsupported,
    /// The reading failed: no evidence, not a failure.
    Failed(String),
}

/// Everything [`decide`] looks at.
#[derive(Clone, Debug)]
pub struct Observations {
    /// The state to prove.
    pub expect: PowerState,
    /// Reads asked of every channel.
    pub samples: u32,
    /// The channels.
    pub channels: Vec<ChannelReads>,
    /// The probes: (host:port, what was found).
    pub probes: Vec<(String, Probe)>,
    /// Power readings: (source, draw).
    pub draws: Vec<(String, Draw)>,
    /// The most watts a node reported off may draw.
    pub max_off_watts: f64,
}

fn list(items: &[String]) -> String {
    items.join(", ")
}

/// Decides the verdict from the evidence (pure, so it is tested on its own).
pub fn decide(o: &Observations) -> (Verdict, String) {
    let reads = |s: PowerState| -> usize {
        o.channels
            .iter()
            .flat_map(|c| c.reads.iter())
            .filter(|r| **r == Some(s))
            .count()
    };
    let (on, off) = (reads(PowerState::On), reads(PowerState::Off));
    let n = o.samples.max(1) as usize;
    let per_channel = || -> String {
        o.channels
            .iter()
            .map(|c| {
                let f = |s| c.reads.iter().filter(|r| **r == Some(s)).count();
                format!(
                    "{}: {} off, {} on",
                    c.source,
                    f(PowerState::Off),
                    f(PowerState::On)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let probes_where = |f: &dyn Fn(&Probe) -> bool| -> Vec<String> {
        o.probes
            .iter()
            .filter(|(_, p)| f(p))
            .map(|(s, p)| {
                let word = match p {
                    Probe::Accepted => "accepted",
                    Probe::Reset => "reset",
                    Probe::Unreachable => "unreachable",
                    Probe::Silent => "silent",
                    Probe::Failed(_) => "not probed",
                };
                format!("{s} ({word})")
            })
            .collect()
    };
    let alive = probes_where(&|p| matches!(p, Probe::Accepted | Probe::Reset));
    let accepted = probes_where(&|p| *p == Probe::Accepted);
    let not_probed: Vec<String> = o
        .probes
        .iter()
        .filter_map(|(s, p)| match p {
            Probe::Failed(why) => Some(format!("{s}: {why}")),
            _ => None,
        })
        .collect();
    let hot: Vec<String> = o
        .draws
        .iter()
        .filter_map(|(s, d)| match d {
            Draw::Watts(w) if *w > o.max_off_watts => Some(format!("{s}: {w:.0} W")),
            _ => None,
        })
        .collect();
    let cool: Vec<String> = o
        .draws
        .iter()
        .filter_map(|(s, d)| match d {
            Draw::Watts(w) if *w <= o.max_off_watts => Some(format!("{s}: {w:.0} W")),
            _ => None,
        })
        .collect();
    // Channels that did not give all their reads.
    // Outlets that read off on every read, with no meter above the
    // threshold: the node's power is cut from outside, so its BMC (fed by
    // the same supplies) going dark is what off looks like, not a gap.
    let cut = o.expect == PowerState::Off
        && hot.is_empty()
        && o.channels.iter().any(|c| c.kind == ChannelKind::Outlet)
        && o.channels
            .iter()
            .filter(|c| c.kind == ChannelKind::Outlet)
            .all(|c| c.reads.len() >= n && c.reads.iter().all(|r| *r == Some(PowerState::Off)));
    let dark =
        |c: &ChannelReads| cut && c.kind == ChannelKind::Bmc && c.reads.iter().all(Option::is_none);
    let darkened: Vec<String> = o
        .channels
        .iter()
        .filter(|c| dark(c))
        .map(|c| c.source.clone())
        .collect();
    let incomplete: Vec<String> = o
        .channels
        .iter()
        .filter(|c| !dark(c))
        .filter_map(|c| {
            let got = c.reads.iter().flatten().count();
            if got == 0 {
                Some(format!("{} could not be read", c.source))
            } else if got < n || c.reads.len() < n {
                Some(format!(
                    "{} gave {got} of {n} reads (a gap breaks the run)",
                    c.source
                ))
            } else {
                None
            }
        })
        .collect();
    let bmcs: Vec<String> = o
        .channels
        .iter()
        .filter(|c| c.kind == ChannelKind::Bmc && !dark(c))
        .map(|c| c.source.clone())
        .collect();
    let through = match bmcs.len() {
        0 => String::new(),
        1 => format!(" through {}", bmcs[0]),
        _ => format!(
            " through {} ({} channels to the node's controller: they agree, but they are one \
             witness, not independent of it)",
            list(&bmcs),
            bmcs.len()
        ),
    };
    // What keeps either expectation from being proven, in the same words.
    let nothing_read = || {
        (
            Verdict::NoEvidence,
            format!(
                "no channel could be read ({}); nothing is proven",
                list(&incomplete)
            ),
        )
    };
    let gap = || {
        if !incomplete.is_empty() {
            Some((
                Verdict::Unproven,
                format!(
                    "{}; every channel must give {n} reads in a row",
                    list(&incomplete)
                ),
            ))
        } else if !not_probed.is_empty() {
            Some((
                Verdict::Unproven,
                format!("a probe could not be made ({})", list(&not_probed)),
            ))
        } else {
            None
        }
    };
    let max = o.max_off_watts;
    match o.expect {
        PowerState::Off => {
            let mut contra = Vec::new();
            if on > 0 && off > 0 {
                contra.push(format!(
                    "the reads disagree ({off} off, {on} on — {}): the state is not stable",
                    per_channel()
                ));
            }
            if off > 0 && !alive.is_empty() {
                let rst = if o.probes.iter().any(|(_, p)| *p == Probe::Reset) {
                    " (an RST is a live network stack, not a dead host)"
                } else {
                    ""
                };
                contra.push(format!(
                    "the BMC reports off, but the host answers on {}: the node may not be \
                     fenced{rst}",
                    list(&alive)
                ));
            }
            if off > 0 && !hot.is_empty() {
                contra.push(format!(
                    "the BMC reports off, but the node draws more than {max:.0} W ({}): the node \
                     may not be fenced",
                    list(&hot)
                ));
            }
            if !contra.is_empty() {
                return (Verdict::Contradiction, contra.join("; "));
            }
            if on > 0 {
                return (
                    Verdict::Unproven,
                    format!("the node is reported on ({})", per_channel()),
                );
            }
            if !alive.is_empty() {
                return (
                    Verdict::Unproven,
                    format!("the host answers on {}: it is not off", list(&alive)),
                );
            }
            if !hot.is_empty() {
                return (
                    Verdict::Unproven,
                    format!("the node draws more than {max:.0} W ({})", list(&hot)),
                );
            }
            if !o.channels.is_empty() && off == 0 {
                return nothing_read();
            }
            if let Some(gap) = gap() {
                return gap;
            }
            let mut witnesses: Vec<String> =
                probes_where(&|p| matches!(p, Probe::Silent | Probe::Unreachable));
            witnesses.extend(cool.iter().map(|c| format!("{c} (at most {max:.0} W)")));
            witnesses.extend(
                o.channels
                    .iter()
                    .filter(|c| c.kind == ChannelKind::Outlet)
                    .map(|c| format!("{} (outlet off)", c.source)),
            );
            // AWS (issue 25): the cloud API, outside the instance.
            witnesses.extend(
                o.channels
                    .iter()
                    .filter(|c| c.kind == ChannelKind::Cloud)
                    .map(|c| format!("{} (the cloud API reports it off)", c.source)),
            );
            let mut bmc_part = if bmcs.is_empty() {
                String::new()
            } else {
                format!("the BMC reports off on {n} consecutive read(s){through}")
            };
            if !darkened.is_empty() {
                if !bmc_part.is_empty() {
                    bmc_part.push_str("; ");
                }
                bmc_part.push_str(&format!(
                    "{} cannot be read, as expected with its power cut at the outlet",
                    list(&darkened)
                ));
            }
            if witnesses.is_empty() {
                if bmcs.is_empty() {
                    return (
                        Verdict::NoEvidence,
                        "nothing to read: no channel and no independent witness".into(),
                    );
                }
                return (
                    Verdict::BmcOnly,
                    format!(
                        "{bmc_part}; nothing independent was checked (no probe answered silent or \
                         unreachable, no power reading, no outlet)"
                    ),
                );
            }
            let lead = if bmc_part.is_empty() {
                String::from("off")
            } else {
                format!("off: {bmc_part}")
            };
            (
                Verdict::Proven,
                format!(
                    "{lead}; {} independent witness(es) agree: {}",
                    witnesses.len(),
                    list(&witnesses)
                ),
            )
        }
        PowerState::On => {
            if on > 0 && off > 0 {
                return (
                    Verdict::Contradiction,
                    format!(
                        "the reads disagree ({off} off, {on} on — {})",
                        per_channel()
                    ),
                );
            }
            if off > 0 {
                if !accepted.is_empty() || !hot.is_empty() {
                    let mut seen = accepted.clone();
                    seen.extend(hot.iter().cloned());
                    return (
                        Verdict::Contradiction,
                        format!(
                            "the BMC reports off, but the host is alive: {}",
                            list(&seen)
                        ),
                    );
                }
                return (
                    Verdict::Unproven,
                    format!("the node is reported off ({})", per_channel()),
                );
            }
            if !o.channels.is_empty() && on == 0 {
                if accepted.is_empty() {
                    return nothing_read();
                }
                return (
                    Verdict::Unproven,
                    format!(
                        "no channel could be read ({}), though the host accepts on {}",
                        list(&incomplete),
                        list(&accepted)
                    ),
                );
            }
            if let Some(gap) = gap() {
                return gap;
            }
            let down = probes_where(&|p| *p != Probe::Accepted);
            if !down.is_empty() {
                return (
                    Verdict::Unproven,
                    format!(
                        "the BMC reports on, but the host does not accept connections on {}",
                        list(&down)
                    ),
                );
            }
            if o.probes.is_empty() {
                return (
                    Verdict::BmcOnly,
                    format!(
                        "the BMC reports on on {n} consecutive read(s){through}; nothing \
                         independent was checked (no probe is configured)"
                    ),
                );
            }
            (
                Verdict::Proven,
                format!(
                    "on: the BMC reports on on {n} consecutive read(s){through}, and the host \
                     accepts connections on {}",
                    list(&accepted)
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PowerState::{Off, On};

    const N: u32 = 3;

    fn bmc(src: &str, reads: &[Option<PowerState>]) -> ChannelReads {
        ChannelReads {
            source: src.into(),
            kind: ChannelKind::Bmc,
            reads: reads.to_vec(),
        }
    }

    fn ch(reads: &[Option<PowerState>]) -> Vec<ChannelReads> {
        vec![bmc("ipmi://bmc", reads)]
    }

    fn p(kind: Probe) -> Vec<(String, Probe)> {
        vec![("h:22".to_string(), kind)]
    }

    fn obs(
        expect: PowerState,
        channels: Vec<ChannelReads>,
        probes: Vec<(String, Probe)>,
        draws: Vec<(String, Draw)>,
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
        let unsupported = vec![("ipmi://bmc power".to_string(), Draw::Unsupported)];
        assert_eq!(
            verdict(&obs(Off, ch(&[Some(Off); 3]), vec![], unsupported)),
            Verdict::BmcOnly
        );
        let failed = vec![(
            "ipmi://bmc power".to_string(),
            Draw::Failed("no DCMI".into()),
        )];
        assert_eq!(
            verdict(&obs(Off, ch(&[Some(Off); 3]), vec![], failed)),
            Verdict::BmcOnly
        );
        assert_eq!(
            verdict(&obs(On, ch(&[Some(On); 3]), vec![], vec![])),
            Verdict::BmcOnly
        );
    }

    #[test]
    fn power_draw_is_a_witness_both_ways() {
        let draw = |w| vec![("redfish://a power".to_string(), Draw::Watts(w))];
        let (v, why) = decide(&obs(Off, ch(&[Some(Off); 3]), vec![], draw(9.0)));
        assert_eq!(v, Verdict::Proven);
        assert!(why.contains("9 W (at most 50 W)"), "{why}");
        let (v, why) = decide(&obs(Off, ch(&[Some(Off); 3]), vec![], draw(212.0)));
        assert_eq!(v, Verdict::Contradiction);
        assert!(
            why.contains("212 W") && why.contains("more than 50 W"),
            "{why}"
        );
        // Exactly at the threshold agrees; the threshold is configurable.
        assert_eq!(
            verdict(&obs(Off, ch(&[Some(Off); 3]), vec![], draw(50.0))),
            Verdict::Proven
        );
        let mut o = obs(Off, ch(&[Some(Off); 3]), vec![], draw(30.0));
        o.max_off_watts = 20.0;
        assert_eq!(verdict(&o), Verdict::Contradiction);
        // A hot draw outweighs a silent probe.
        assert_eq!(
            verdict(&obs(
                Off,
                ch(&[Some(Off); 3]),
                p(Probe::Silent),
                draw(212.0)
            )),
            Verdict::Contradiction
        );
    }

    #[test]
    fn an_outlet_reading_off_is_independent() {
        let chans = vec![
            bmc("ipmi://a", &[Some(Off); 3]),
            ChannelReads {
                source: "snmp://pdu/7".into(),
                kind: ChannelKind::Outlet,
                reads: vec![Some(Off); 3],
            },
        ];
        let (v, why) = decide(&obs(Off, chans, vec![], vec![]));
        assert_eq!(v, Verdict::Proven);
        assert!(why.contains("snmp://pdu/7 (outlet off)"), "{why}");
    }

    #[test]
    fn a_bmc_dark_behind_an_outlet_that_reads_off_is_no_gap() {
        let outlet = |reads: &[Option<PowerState>]| ChannelReads {
            source: "snmp://pdu/7".into(),
            kind: ChannelKind::Outlet,
            reads: reads.to_vec(),
        };
        // The outlet cut the power, and the BMC went dark with it.
        let chans = vec![bmc("ipmi://a", &[None; 3]), outlet(&[Some(Off); 3])];
        let (v, why) = decide(&obs(Off, chans, p(Probe::Silent), vec![]));
        assert_eq!(v, Verdict::Proven);
        assert!(
            why.contains("ipmi://a cannot be read, as expected with its power cut"),
            "{why}"
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
        let hot = vec![("snmp://pdu/7 power".to_string(), Draw::Watts(212.0))];
        assert_eq!(
            verdict(&obs(Off, chans, vec![], hot)),
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

    #[test]
    fn without_channels_witnesses_decide() {
        // A manual level alone: a person's word plus a silent host.
        assert_eq!(
            verdict(&obs(Off, vec![], p(Probe::Silent), vec![])),
            Verdict::Proven
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
}
