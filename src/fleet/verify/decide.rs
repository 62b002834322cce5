//! The verdict: what the gathered observations prove ([`decide`], pure, so
//! it is tested on its own), the rule it applies ([`THE_RULE`]), the rule
//! table ([`RULES`]) and the verdict table ([`VERDICTS`]). The observation
//! types it reads are [`observations`]' (re-exported here), and working
//! them out into the facts the rules look at is [`fold`]'s. Gathering them
//! is [`super::evidence`]'s.
//!
//! Every piece of evidence carries its source as a type ([`Witness`]). What
//! a witness can do depends on where it stands: the device under suspicion
//! (the node's BMC over any protocol, its own power meter) can contradict a
//! claim but never prove it; `proven` needs the device's own reading *and*
//! a witness from outside it.

use crate::engine::power::PowerState;
use serde::Serialize;

mod fold;
mod observations;

use fold::{list, Facts};
pub use observations::{
    ChannelKind, ChannelReads, Draw, Evidence, Observations, Party, Probe, Unread, Witness,
};

/// Default of `--max-off-watts` (one constant, with the PDU's use of it).
pub use crate::engine::power::DEFAULT_MAX_OFF_WATTS;

/// The rule `verify` applies, stated once: `verify --help`, the man page
/// and docs/operator.md show this text.
pub const THE_RULE: &str = "Evidence from the device under suspicion (its state reads, its own \
power meter, a second protocol to the same BMC) can contradict but never prove. `proven` needs \
that device's own reading and at least one witness from outside it (the host's address silent \
or unreachable, a PDU outlet off with its load at or under --max-off-watts, a hypervisor's \
or a cloud API's view), with no contradiction and no gap. Silent probes and nothing else are weak evidence only \
(unproven); a channel that reports another machine is an identity contradiction, never a dark \
BMC.";

/// The conclusion. [`VERDICTS`] says what each means and its exit code.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The device's reads agree, and a witness outside it agrees.
    Proven,
    /// Only the device under suspicion (one or more channels to it, its
    /// meter) says so. Fails unless BMC-only proof was accepted.
    BmcOnly,
    /// Pieces of evidence contradict each other (e.g. BMC off, host
    /// answering), or a channel reports another machine.
    Contradiction,
    /// The evidence does not show the expected state (a channel unread or
    /// with gaps, a probe that could not be made, the other state seen,
    /// weak evidence only).
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
        "the device's own reads agree on every read, and at least one witness from outside it \
         agrees (off: the host's address silent or unreachable, a PDU outlet off with its load \
         at or under --max-off-watts, a hypervisor; on: every probe accepted); nothing \
         contradicts and nothing is missing",
        "0",
    ),
    (
        Verdict::BmcOnly,
        "only the device under suspicion says so: its reads (over every channel to it) and its \
         own power meter agree, but nothing outside it was checked or agrees",
        "3 (0 when accepted: --accept-bmc-only, inventory accept_bmc_only)",
    ),
    (
        Verdict::Contradiction,
        "witnesses disagree: a device reads off but the host accepts or resets a connection, or \
         a meter shows more than --max-off-watts; a device reads on but a meter shows at most \
         --max-off-watts; the reads disagree; or a channel reports another machine than the one \
         pinned (identity contradiction)",
        "3",
    ),
    (
        Verdict::Unproven,
        "the evidence does not show the state: the other state was read, a channel could not be \
         read or has gaps, a probe could not be made, (on) the host does not accept connections, \
         or there is only weak evidence (silent probes and no device reading)",
        "3",
    ),
    (
        Verdict::Drift,
        "(--expect on) the node is up, but a rejoin check differs from the baseline",
        "3",
    ),
    (
        Verdict::NoEvidence,
        "nothing could be read: no channel gave a reading (and, for on, no probe was accepted)",
        "1",
    ),
];

/// The rule and the verdict table as plain text (for `--help` and the man
/// page).
pub fn verdict_table_text() -> String {
    let mut s = format!("The rule: {THE_RULE}\n\nVerdicts (verdict → exit status: meaning):\n");
    for (v, meaning, code) in VERDICTS {
        s.push_str(&format!(
            "  {} → exit {code}\n      {meaning}\n",
            v.as_str()
        ));
    }
    s
}

/// A verdict with its reason, or `None`: the rule does not apply.
type Found = Option<(Verdict, String)>;

/// One named rule of [`RULES`].
pub struct Rule {
    /// Its name (tests and the reason's origin).
    pub name: &'static str,
    /// What it says, for people.
    pub says: &'static str,
    applies: fn(&Facts) -> Found,
}

/// The rules, in order: the first that applies decides. Contradictions
/// first (they are what fencing exists to catch), then what keeps the
/// state unproven, then how much outside evidence there is.
pub const RULES: &[Rule] = &[
    Rule {
        name: "identity-contradiction",
        says: "a channel reports another machine than the one pinned → contradiction",
        applies: identity_contradiction,
    },
    Rule {
        name: "reads-disagree",
        says: "one read says off, another on → contradiction",
        applies: reads_disagree,
    },
    Rule {
        name: "read-off-host-alive",
        says: "read off, but the host accepts or resets a connection → contradiction",
        applies: read_off_host_alive,
    },
    Rule {
        name: "read-off-meter-hot",
        says: "read off, but a meter shows more than --max-off-watts → contradiction",
        applies: read_off_meter_hot,
    },
    Rule {
        name: "read-on-meter-cold",
        says: "read on, but a meter shows at most --max-off-watts → contradiction",
        applies: read_on_meter_cold,
    },
    Rule {
        name: "other-state-read",
        says: "the channels read the other state → unproven",
        applies: other_state_read,
    },
    Rule {
        name: "host-alive",
        says: "(off) nothing reads off and the host answers → unproven",
        applies: host_alive,
    },
    Rule {
        name: "meter-disagrees",
        says: "nothing reads the state and a meter shows the other one → unproven",
        applies: meter_disagrees,
    },
    Rule {
        name: "nothing-read",
        says: "no channel gave any read → no-evidence (unproven when the host answers on)",
        applies: nothing_read,
    },
    Rule {
        name: "gap",
        says: "a channel was not read, or gave fewer reads than asked → unproven",
        applies: gap,
    },
    Rule {
        name: "probe-not-made",
        says: "a probe could not be made → unproven",
        applies: probe_not_made,
    },
    Rule {
        name: "host-down-while-on",
        says: "(on) a probe was not accepted → unproven",
        applies: host_down_while_on,
    },
    Rule {
        name: "no-device-reading",
        says: "no channel read the state: probes alone are weak evidence → unproven \
               (no-evidence with nothing at all)",
        applies: no_device_reading,
    },
    Rule {
        name: "device-only",
        says: "only the device under suspicion agrees → bmc-only",
        applies: device_only,
    },
    Rule {
        name: "proven",
        says: "the device's reading and a witness outside it agree → proven",
        applies: proven,
    },
];

fn identity_contradiction(f: &Facts) -> Found {
    (!f.other_machine.is_empty()).then(|| {
        (
            Verdict::Contradiction,
            format!(
                "identity contradiction: {}; its readings are about that machine, not this \
                 node, and nothing it says is evidence (check the inventory's endpoint and pin)",
                list(&f.other_machine)
            ),
        )
    })
}

fn reads_disagree(f: &Facts) -> Found {
    (f.on > 0 && f.off > 0).then(|| {
        (
            Verdict::Contradiction,
            format!(
                "the reads disagree ({} off, {} on — {}): the state is not stable",
                f.off,
                f.on,
                f.per_channel()
            ),
        )
    })
}

fn read_off_host_alive(f: &Facts) -> Found {
    if f.off == 0 || f.alive.is_empty() {
        return None;
    }
    let rst = if f.o.probes.iter().any(|(_, p)| *p == Probe::Reset) {
        " (an RST is a live network stack, not a dead host)"
    } else {
        ""
    };
    Some((
        Verdict::Contradiction,
        format!(
            "{} off, but the host answers on {}: the node may not be fenced{rst}",
            f.who_reads_off(),
            list(&f.alive)
        ),
    ))
}

fn read_off_meter_hot(f: &Facts) -> Found {
    (f.off > 0 && !f.hot.is_empty()).then(|| {
        (
            Verdict::Contradiction,
            format!(
                "{} off, but the node draws more than {:.0} W ({}): the node may not be fenced",
                f.who_reads_off(),
                f.max(),
                list(&f.hot)
            ),
        )
    })
}

fn read_on_meter_cold(f: &Facts) -> Found {
    (f.on > 0 && !f.cold.is_empty()).then(|| {
        (
            Verdict::Contradiction,
            format!(
                "the node is reported on, but draws at most {:.0} W ({}): what a machine on \
                 standby draws, not a running one",
                f.max(),
                list(&f.cold)
            ),
        )
    })
}

fn other_state_read(f: &Facts) -> Found {
    let (other, count) = match f.o.expect {
        PowerState::Off => (PowerState::On, f.on),
        PowerState::On => (PowerState::Off, f.off),
    };
    (count > 0).then(|| {
        (
            Verdict::Unproven,
            format!("the node is reported {other} ({})", f.per_channel()),
        )
    })
}

fn host_alive(f: &Facts) -> Found {
    (f.o.expect == PowerState::Off && !f.alive.is_empty()).then(|| {
        (
            Verdict::Unproven,
            format!("the host answers on {}: it is not off", list(&f.alive)),
        )
    })
}

fn meter_disagrees(f: &Facts) -> Found {
    let max = f.max();
    match f.o.expect {
        PowerState::Off if !f.hot.is_empty() => Some((
            Verdict::Unproven,
            format!("the node draws more than {max:.0} W ({})", list(&f.hot)),
        )),
        PowerState::On if !f.cold.is_empty() => Some((
            Verdict::Unproven,
            format!(
                "the node draws at most {max:.0} W ({}): not a running machine",
                list(&f.cold)
            ),
        )),
        _ => None,
    }
}

fn nothing_read(f: &Facts) -> Found {
    if f.o.channels.is_empty() || f.anything_read || !f.dark.is_empty() {
        return None;
    }
    if f.o.expect == PowerState::On && !f.accepted.is_empty() {
        return Some((
            Verdict::Unproven,
            format!(
                "no channel could be read ({}), though the host accepts on {}",
                list(&f.incomplete),
                list(&f.accepted)
            ),
        ));
    }
    Some((
        Verdict::NoEvidence,
        format!(
            "no channel could be read ({}); nothing is proven",
            list(&f.incomplete)
        ),
    ))
}

fn gap(f: &Facts) -> Found {
    (!f.incomplete.is_empty()).then(|| {
        (
            Verdict::Unproven,
            format!(
                "{}; every channel must give {} reads in a row",
                list(&f.incomplete),
                f.n
            ),
        )
    })
}

fn probe_not_made(f: &Facts) -> Found {
    (!f.not_probed.is_empty()).then(|| {
        (
            Verdict::Unproven,
            format!("a probe could not be made ({})", list(&f.not_probed)),
        )
    })
}

fn host_down_while_on(f: &Facts) -> Found {
    (f.o.expect == PowerState::On && !f.not_accepted.is_empty()).then(|| {
        (
            Verdict::Unproven,
            format!(
                "the BMC reports on, but the host does not accept connections on {}",
                list(&f.not_accepted)
            ),
        )
    })
}

fn no_device_reading(f: &Facts) -> Found {
    let device = [
        Party::Controller,
        Party::Pdu,
        Party::Fabric,
        Party::Hypervisor,
        Party::Cloud,
    ];
    if device.iter().any(|p| f.agree.contains(p)) {
        return None;
    }
    let host = f.witnesses_of(Party::Host);
    if f.agree.contains(&Party::Host) {
        return Some((
            Verdict::Unproven,
            format!(
                "weak evidence only: {} and no device read the node {} (a firewall, a dropped \
                 link or a hung node look the same)",
                list(&host),
                f.o.expect
            ),
        ));
    }
    Some((
        Verdict::NoEvidence,
        "nothing to read: no channel and no witness".into(),
    ))
}

fn device_only(f: &Facts) -> Found {
    if f.agree.len() != 1 {
        return None;
    }
    let meter = f.own_meter();
    let meter = if meter.is_empty() {
        String::new()
    } else {
        format!(
            "; its own meter agrees ({}), but that is its word again",
            list(&meter)
        )
    };
    let missing = match (f.o.expect, f.agree.contains(&Party::Pdu)) {
        // A switch port down isolates a node that keeps running: only the
        // node's own address, silent from here, backs the switch's word.
        _ if f.agree.contains(&Party::Fabric) => {
            "the node's own address was not found silent or unreachable from here, and a \
             switch port down isolates, it does not power off"
        }
        (PowerState::Off, false) => "no probe answered silent or unreachable, no outlet read off",
        (PowerState::Off, true) => "no probe answered silent or unreachable, no other device",
        (PowerState::On, _) => "no probe is configured",
    };
    Some((
        Verdict::BmcOnly,
        format!(
            "{}{meter}; nothing independent was checked ({missing}): the device under \
             suspicion never proves its own claim",
            f.own_word()
        ),
    ))
}

fn proven(f: &Facts) -> Found {
    let outside: Vec<String> = f
        .agree
        .iter()
        .filter(|p| **p != Party::Controller)
        .flat_map(|p| f.witnesses_of(*p))
        .collect();
    let word = f.own_word();
    let lead = match (f.o.expect, word.is_empty()) {
        (s, true) => s.to_string(),
        (s, false) => format!("{s}: {word}"),
    };
    Some((
        Verdict::Proven,
        format!(
            "{lead}; {} independent witness(es) agree: {}",
            outside.len(),
            list(&outside)
        ),
    ))
}

/// Decides the verdict from the evidence (pure, so it is tested on its
/// own): the first of [`RULES`] that applies. Returns the rule's name too.
pub fn decide_by_rule(o: &Observations) -> (&'static str, Verdict, String) {
    let facts = Facts::of(o);
    for rule in RULES {
        if let Some((v, why)) = (rule.applies)(&facts) {
            return (rule.name, v, why);
        }
    }
    unreachable!("the last rule always applies")
}

/// Decides the verdict from the evidence: [`decide_by_rule`] without the
/// rule's name.
pub fn decide(o: &Observations) -> (Verdict, String) {
    let (_, v, why) = decide_by_rule(o);
    (v, why)
}

#[cfg(test)]
mod tests;
