//! Evidence folding: the observations worked out once into the facts the
//! rules look at ([`Facts`]) — how many reads say off or on, which probes
//! found a live host, which meters run hot, which channels went dark
//! behind their outlets or left a gap, which parties agree — and those
//! facts in words for the reasons. The rules themselves, and the verdict,
//! are [`super`]'s.

use super::observations::{
    ChannelKind, ChannelReads, Draw, Observations, Party, Probe, Unread, Witness,
};
use crate::engine::power::PowerState;
use std::collections::BTreeSet;

/// Items joined for a reason: `a, b, c`.
pub(super) fn list(items: &[String]) -> String {
    items.join(", ")
}

/// What the rules look at, worked out once from the observations.
pub(super) struct Facts<'a> {
    pub(super) o: &'a Observations,
    /// Reads asked per channel.
    pub(super) n: usize,
    /// Reads of the node's state: off from any channel (an outlet off
    /// means no power), on from a controller or hypervisor (an outlet on
    /// only means power is offered).
    pub(super) off: usize,
    pub(super) on: usize,
    /// Channels that report another machine (`source: why`).
    pub(super) other_machine: Vec<String>,
    /// Probes that found a live network stack (`host (accepted|reset)`).
    pub(super) alive: Vec<String>,
    /// Probes that were accepted.
    pub(super) accepted: Vec<String>,
    /// Probes that found nothing (`host (silent|unreachable)`).
    pub(super) quiet: Vec<String>,
    /// Probes that found anything but an accepted connection.
    pub(super) not_accepted: Vec<String>,
    /// Probes that could not be made (`host: why`).
    pub(super) not_probed: Vec<String>,
    /// Meters above the threshold, at or under it (`source: N W`).
    pub(super) hot: Vec<String>,
    pub(super) cold: Vec<String>,
    /// Controller channels that went dark because their outlets cut the power.
    pub(super) dark: Vec<String>,
    /// Channels that did not give all their reads (why), dark ones excepted.
    pub(super) incomplete: Vec<String>,
    /// Whether any channel gave any read.
    pub(super) anything_read: bool,
    /// Controller channels that were read (for "through …").
    pub(super) bmcs: Vec<String>,
    /// Parties whose evidence agrees with the expectation.
    pub(super) agree: BTreeSet<Party>,
}

impl<'a> Facts<'a> {
    pub(super) fn of(o: &'a Observations) -> Self {
        let n = o.samples.max(1) as usize;
        let max = o.max_off_watts;
        let state_reads = |s: PowerState| -> usize {
            o.channels
                .iter()
                .filter(|c| {
                    s == PowerState::Off
                        || !matches!(c.kind, ChannelKind::Outlet | ChannelKind::Fabric)
                })
                .flat_map(|c| c.reads.iter())
                .filter(|r| **r == Some(s))
                .count()
        };
        let probes = |f: &dyn Fn(&Probe) -> bool| -> Vec<String> {
            o.probes
                .iter()
                .filter(|(_, p)| f(p))
                .map(|(s, p)| format!("{s} ({})", p.word()))
                .collect()
        };
        let watts = |hot: bool, only: Option<fn(&Witness) -> bool>| -> Vec<String> {
            o.draws
                .iter()
                .filter(|(w, _)| only.is_none_or(|f| f(w)))
                .filter_map(|(w, d)| match d {
                    Draw::Watts(x) if (*x > max) == hot => {
                        Some(format!("{}: {x:.0} W", w.source()))
                    }
                    _ => None,
                })
                .collect()
        };
        let is_load: fn(&Witness) -> bool = |w| matches!(w, Witness::OutletLoad { .. });
        let hot_outlets = watts(true, Some(is_load)).len();
        let complete = |c: &ChannelReads, s: PowerState| {
            c.unread.is_none() && c.reads.len() >= n && c.reads.iter().all(|r| *r == Some(s))
        };
        let outlets: Vec<&ChannelReads> = o
            .channels
            .iter()
            .filter(|c| c.kind == ChannelKind::Outlet)
            .collect();
        // Outlets that cut the node's power on every read, with no load
        // above the threshold: a BMC fed by the same supplies going dark is
        // what off looks like. Never for a channel refused by identity.
        let cut = o.expect == PowerState::Off
            && hot_outlets == 0
            && !outlets.is_empty()
            && outlets.iter().all(|c| complete(c, PowerState::Off));
        let is_dark = |c: &ChannelReads| {
            cut && c.kind == ChannelKind::Bmc
                && c.unread.is_none()
                && c.reads.iter().all(Option::is_none)
        };
        let dark = o
            .channels
            .iter()
            .filter(|c| is_dark(c))
            .map(|c| c.source.clone())
            .collect();
        let incomplete = o
            .channels
            .iter()
            .filter(|c| !is_dark(c))
            .filter_map(|c| {
                let got = c.reads.iter().flatten().count();
                match &c.unread {
                    Some(Unread::OtherMachine(why)) => {
                        Some(format!("{} reports another machine ({why})", c.source))
                    }
                    Some(Unread::Unconfirmed(why)) => Some(format!(
                        "{} was not read: the pinned machine cannot be confirmed ({why})",
                        c.source
                    )),
                    Some(Unread::NotBuilt(why)) => {
                        Some(format!("{} was not read: {why}", c.source))
                    }
                    None if got == 0 => Some(format!("{} could not be read", c.source)),
                    None if got < n || c.reads.len() < n => Some(format!(
                        "{} gave {got} of {n} reads (a gap breaks the run)",
                        c.source
                    )),
                    None => None,
                }
            })
            .collect();
        let quiet = probes(&|p| matches!(p, Probe::Silent | Probe::Unreachable));
        let alive = probes(&|p| matches!(p, Probe::Accepted | Probe::Reset));
        let not_probed: Vec<String> = o
            .probes
            .iter()
            .filter_map(|(s, p)| match p {
                Probe::Failed(why) => Some(format!("{s}: {why}")),
                _ => None,
            })
            .collect();
        // Which parties agree with the expectation.
        let mut agree = BTreeSet::new();
        for kind in [
            ChannelKind::Bmc,
            ChannelKind::Hypervisor,
            ChannelKind::Cloud,
            ChannelKind::Outlet,
            ChannelKind::Fabric,
        ] {
            if kind == ChannelKind::Fabric && o.expect == PowerState::On {
                // A port up lets traffic through; it does not show the node up.
                continue;
            }
            if kind == ChannelKind::Outlet && o.expect == PowerState::On && hot_outlets == 0 {
                // An outlet on offers power; it does not show the node on,
                // unless its meter shows a running machine's load.
                continue;
            }
            let read: Vec<&ChannelReads> = o
                .channels
                .iter()
                .filter(|c| c.kind == kind && !is_dark(c))
                .collect();
            // A BMC dark behind outlets that cut its power is the
            // controller's silence: what off looks like (as a silent probe
            // is the host's).
            let silent =
                kind == ChannelKind::Bmc && read.is_empty() && o.channels.iter().any(&is_dark);
            if silent || (!read.is_empty() && read.iter().all(|c| complete(c, o.expect))) {
                if kind == ChannelKind::Outlet && o.expect == PowerState::Off && hot_outlets > 0 {
                    continue;
                }
                agree.insert(kind.party());
            }
        }
        let host_agrees = match o.expect {
            PowerState::Off => !quiet.is_empty() && alive.is_empty() && not_probed.is_empty(),
            PowerState::On => {
                !o.probes.is_empty() && o.probes.iter().all(|(_, p)| *p == Probe::Accepted)
            }
        };
        if host_agrees {
            agree.insert(Party::Host);
        }
        Facts {
            o,
            n,
            off: state_reads(PowerState::Off),
            on: state_reads(PowerState::On),
            other_machine: o
                .channels
                .iter()
                .filter_map(|c| match &c.unread {
                    Some(Unread::OtherMachine(why)) => Some(format!("{}: {why}", c.source)),
                    _ => None,
                })
                .collect(),
            accepted: probes(&|p| *p == Probe::Accepted),
            not_accepted: probes(&|p| *p != Probe::Accepted),
            alive,
            quiet,
            not_probed,
            hot: watts(true, None),
            cold: watts(false, None),
            dark,
            incomplete,
            anything_read: o
                .channels
                .iter()
                .any(|c| c.reads.iter().any(Option::is_some)),
            bmcs: o
                .channels
                .iter()
                .filter(|c| c.kind == ChannelKind::Bmc && !is_dark(c) && c.unread.is_none())
                .map(|c| c.source.clone())
                .collect(),
            agree,
        }
    }

    /// `source: N off, M on; …` for every channel.
    pub(super) fn per_channel(&self) -> String {
        self.o
            .channels
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
    }

    /// ` through A` / ` through A, B (2 channels … one witness …)`.
    pub(super) fn through(&self) -> String {
        match self.bmcs.len() {
            0 => String::new(),
            1 => format!(" through {}", self.bmcs[0]),
            k => format!(
                " through {} ({k} channels to the node's controller: they agree, but they are \
                 one witness, not independent of it)",
                list(&self.bmcs)
            ),
        }
    }

    /// Who reads the node off: "the BMC reports" (or the hypervisor),
    /// else "the outlets read".
    pub(super) fn who_reads_off(&self) -> &'static str {
        let reads_off = |k: ChannelKind| {
            self.o
                .channels
                .iter()
                .filter(|c| c.kind == k)
                .any(|c| c.reads.contains(&Some(PowerState::Off)))
        };
        if reads_off(ChannelKind::Bmc) {
            "the BMC reports"
        } else if reads_off(ChannelKind::Hypervisor) {
            "the hypervisor reports"
        } else if reads_off(ChannelKind::Fabric) {
            "the switch reports the node's port(s) down, i.e."
        } else {
            "the outlets read"
        }
    }

    pub(super) fn max(&self) -> f64 {
        self.o.max_off_watts
    }

    /// What the device under suspicion says, in words.
    pub(super) fn own_word(&self) -> String {
        let n = self.n;
        let state = self.o.expect;
        let mut parts = Vec::new();
        if !self.bmcs.is_empty() {
            parts.push(format!(
                "the BMC reports {state} on {n} consecutive read(s){}",
                self.through()
            ));
        }
        for c in &self.o.channels {
            if self.agree.contains(&c.kind.party()) {
                match c.kind {
                    ChannelKind::Hypervisor => parts.push(format!(
                        "the hypervisor reports {state} on {n} consecutive read(s) through {}",
                        c.source
                    )),
                    ChannelKind::Outlet => parts.push(format!(
                        "the outlets read {state} on {n} consecutive read(s) through {}",
                        c.source
                    )),
                    ChannelKind::Cloud => parts.push(format!(
                        "the cloud API reports {state} on {n} consecutive read(s) through {}",
                        c.source
                    )),
                    ChannelKind::Fabric => parts.push(format!(
                        "the switch reports the node's port(s) down (isolated, not powered \
                         off) on {n} consecutive read(s) through {}",
                        c.source
                    )),
                    ChannelKind::Bmc => {}
                }
            }
        }
        if !self.dark.is_empty() {
            parts.push(format!(
                "{} cannot be read, as expected with its power cut at the outlet",
                list(&self.dark)
            ));
        }
        parts.join("; ")
    }

    /// The agreeing witnesses of `party`, in words.
    pub(super) fn witnesses_of(&self, party: Party) -> Vec<String> {
        let max = self.max();
        match party {
            Party::Host => match self.o.expect {
                PowerState::Off => self.quiet.clone(),
                PowerState::On => self.accepted.clone(),
            },
            Party::Pdu => {
                let (state, bound) = match self.o.expect {
                    PowerState::Off => ("off", "at most"),
                    PowerState::On => ("on", "more than"),
                };
                let mut w: Vec<String> = self
                    .o
                    .channels
                    .iter()
                    .filter(|c| c.kind == ChannelKind::Outlet)
                    .map(|c| format!("{} (outlet {state})", c.source))
                    .collect();
                w.extend(
                    self.o
                        .draws
                        .iter()
                        .filter(|(wt, _)| matches!(wt, Witness::OutletLoad { .. }))
                        .filter_map(|(wt, d)| match d {
                            Draw::Watts(x) => {
                                Some(format!("{}: {x:.0} W ({bound} {max:.0} W)", wt.source()))
                            }
                            _ => None,
                        }),
                );
                w
            }
            Party::Hypervisor => self
                .o
                .channels
                .iter()
                .filter(|c| c.kind == ChannelKind::Hypervisor)
                .map(|c| format!("{} (hypervisor reads {})", c.source, self.o.expect))
                .collect(),
            Party::Fabric => self
                .o
                .channels
                .iter()
                .filter(|c| c.kind == ChannelKind::Fabric)
                .map(|c| format!("{} (switch port(s) down)", c.source))
                .collect(),
            Party::Cloud => self
                .o
                .channels
                .iter()
                .filter(|c| c.kind == ChannelKind::Cloud)
                .map(|c| format!("{} (the cloud API reads {})", c.source, self.o.expect))
                .collect(),
            Party::Controller => self
                .dark
                .iter()
                .map(|d| format!("{d} (dark with its power cut)"))
                .collect(),
        }
    }

    /// The BMC's own meter readings that agree, in words (they never count).
    pub(super) fn own_meter(&self) -> Vec<String> {
        let max = self.max();
        self.o
            .draws
            .iter()
            .filter(|(w, _)| matches!(w, Witness::BmcMeter { .. }))
            .filter_map(|(w, d)| match d {
                Draw::Watts(x) => Some(format!("{}: {x:.0} W (at most {max:.0} W)", w.source())),
                _ => None,
            })
            .collect()
    }
}
