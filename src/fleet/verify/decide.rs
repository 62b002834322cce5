//! The verdict: what the gathered observations prove ([`decide`], pure, so
//! it is tested on its own), the rule it applies ([`THE_RULE`]), the rule
//! table ([`RULES`]), the verdict table ([`VERDICTS`]) and the observation
//! types it reads. Gathering them is [`super::evidence`]'s.
//!
//! Every piece of evidence carries its source as a type ([`Witness`]). What
//! a witness can do depends on where it stands: the device under suspicion
//! (the node's BMC over any protocol, its own power meter) can contradict a
//! claim but never prove it; `proven` needs the device's own reading *and*
//! a witness from outside it.

use crate::engine::power::PowerState;
use serde::Serialize;
use std::collections::BTreeSet;
use std::time::Duration;

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

/// Where a piece of evidence comes from. The type decides what it can
/// prove ([`Witness::party`]): readings of one party agree with each other,
/// but one party alone never proves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Witness {
    /// A channel to the node's own controller: its BMC over IPMI or
    /// Redfish (two protocols to one BMC are two channels of one party),
    /// or a custom SSH command.
    Bmc {
        /// The endpoint.
        channel: String,
    },
    /// That controller's power meter (DCMI, Redfish `Power`), read in the
    /// same session as its state: the BMC's own word again.
    BmcMeter {
        /// The endpoint it was read through.
        channel: String,
    },
    /// A node's outlets on switched PDUs: a switch outside the node.
    Outlet {
        /// The method's endpoint.
        channel: String,
    },
    /// Those outlets' own load meter (per-outlet metering only).
    OutletLoad {
        /// The method's endpoint.
        channel: String,
    },
    /// A TCP probe of the node's own address (or of its SSH port).
    HostProbe {
        /// `host:port` and what it is.
        target: String,
    },
    /// The hypervisor's view of a virtual machine (virsh over SSH).
    Hypervisor {
        /// The endpoint.
        channel: String,
    },
    /// A cloud provider's view of an instance (EC2's API).
    Cloud {
        /// The endpoint.
        channel: String,
    },
    /// A person who fences by hand: their word (`fencekit ack`) is
    /// recorded, never read as a power state.
    Manual {
        /// The level's endpoint.
        channel: String,
    },
    /// A rejoin check run on the node itself (`[[node.check]]`).
    HostCheck {
        /// The node's SSH endpoint.
        via: String,
        /// The check's name.
        check: String,
    },
    /// The operator's policy (BMC-only proof accepted): no observation.
    Policy,
}

/// A party: witnesses that stand or fall together. Every channel to the
/// node's controller is one party (and its meter belongs to it); a node's
/// outlets and their load are one; the host's probes are one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Party {
    /// The node's BMC (or custom controller).
    Controller,
    /// The PDU outlets feeding the node.
    Pdu,
    /// The hypervisor running the node.
    Hypervisor,
    /// The cloud provider running the instance.
    Cloud,
    /// The node's own address.
    Host,
}

impl Witness {
    /// The source as people read it (an endpoint, `host:port`, …).
    pub fn source(&self) -> String {
        match self {
            Witness::Bmc { channel }
            | Witness::Outlet { channel }
            | Witness::Hypervisor { channel }
            | Witness::Cloud { channel }
            | Witness::Manual { channel } => channel.clone(),
            Witness::BmcMeter { channel } | Witness::OutletLoad { channel } => {
                format!("{channel} power")
            }
            Witness::HostProbe { target } => target.clone(),
            Witness::HostCheck { via, check } => format!("{via} check {check}"),
            Witness::Policy => "policy".into(),
        }
    }

    /// The type's word, in JSON (`"witness": "bmc-meter"`).
    pub fn kind(&self) -> &'static str {
        match self {
            Witness::Bmc { .. } => "bmc",
            Witness::BmcMeter { .. } => "bmc-meter",
            Witness::Outlet { .. } => "outlet",
            Witness::OutletLoad { .. } => "outlet-load",
            Witness::HostProbe { .. } => "host-probe",
            Witness::Hypervisor { .. } => "hypervisor",
            Witness::Cloud { .. } => "cloud",
            Witness::Manual { .. } => "manual",
            Witness::HostCheck { .. } => "host-check",
            Witness::Policy => "policy",
        }
    }

    /// The party it speaks for (`None`: it says nothing about power).
    pub fn party(&self) -> Option<Party> {
        match self {
            Witness::Bmc { .. } | Witness::BmcMeter { .. } => Some(Party::Controller),
            Witness::Outlet { .. } | Witness::OutletLoad { .. } => Some(Party::Pdu),
            Witness::Hypervisor { .. } => Some(Party::Hypervisor),
            Witness::Cloud { .. } => Some(Party::Cloud),
            Witness::HostProbe { .. } => Some(Party::Host),
            Witness::Manual { .. } | Witness::HostCheck { .. } | Witness::Policy => None,
        }
    }

    /// True for a witness outside the node's BMC (what `[independent]`
    /// marks in the output). The BMC's meter is not: it is the BMC's word.
    pub fn independent(&self) -> bool {
        !matches!(
            self,
            Witness::Bmc { .. }
                | Witness::BmcMeter { .. }
                | Witness::Manual { .. }
                | Witness::Policy
        )
    }
}

/// One piece of evidence.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    /// Where it comes from, as a type.
    pub witness: Witness,
    /// What was seen.
    pub observation: String,
    /// Milliseconds since verification began.
    pub at_ms: u64,
    /// Whether it agrees with the expectation (`None`: no observation could be made).
    pub agrees: Option<bool>,
}

impl Evidence {
    /// A piece of evidence.
    pub fn new(
        witness: Witness,
        observation: impl Into<String>,
        at_ms: u64,
        agrees: Option<bool>,
    ) -> Self {
        Evidence {
            witness,
            observation: observation.into(),
            at_ms,
            agrees,
        }
    }

    /// The source as people read it.
    pub fn source(&self) -> String {
        self.witness.source()
    }

    /// Outside the node's BMC ([`Witness::independent`]).
    pub fn independent(&self) -> bool {
        self.witness.independent()
    }
}

impl Serialize for Evidence {
    /// `{"source", "witness", "observation", "at_ms", "agrees", "independent"}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Evidence", 6)?;
        st.serialize_field("source", &self.source())?;
        st.serialize_field("witness", self.witness.kind())?;
        st.serialize_field("observation", &self.observation)?;
        st.serialize_field("at_ms", &self.at_ms)?;
        st.serialize_field("agrees", &self.agrees)?;
        st.serialize_field("independent", &self.independent())?;
        st.end()
    }
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

    fn word(&self) -> &'static str {
        match self {
            Probe::Accepted => "accepted",
            Probe::Reset => "reset",
            Probe::Unreachable => "unreachable",
            Probe::Silent => "silent",
            Probe::Failed(_) => "not probed",
        }
    }
}

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

/// What a channel is, as a witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    /// The node's own controller (BMC, custom command): the party that may lie.
    Bmc,
    /// A device that cuts the node's power from outside (PDU outlets).
    Outlet,
    /// The hypervisor of a virtual machine.
    Hypervisor,
    /// A cloud provider's API (EC2): it sees the instance from outside the
    /// node's operating system, as a hypervisor does (issue 25).
    Cloud,
}

impl ChannelKind {
    /// The channel as a witness.
    pub fn witness(self, channel: &str) -> Witness {
        let channel = channel.to_string();
        match self {
            ChannelKind::Bmc => Witness::Bmc { channel },
            ChannelKind::Outlet => Witness::Outlet { channel },
            ChannelKind::Hypervisor => Witness::Hypervisor { channel },
            ChannelKind::Cloud => Witness::Cloud { channel },
        }
    }

    /// Its power meter as a witness (`None`: it has none).
    pub fn meter(self, channel: &str) -> Option<Witness> {
        let channel = channel.to_string();
        match self {
            ChannelKind::Bmc => Some(Witness::BmcMeter { channel }),
            ChannelKind::Outlet => Some(Witness::OutletLoad { channel }),
            ChannelKind::Hypervisor | ChannelKind::Cloud => None,
        }
    }

    fn party(self) -> Party {
        match self {
            ChannelKind::Bmc => Party::Controller,
            ChannelKind::Outlet => Party::Pdu,
            ChannelKind::Hypervisor => Party::Hypervisor,
            ChannelKind::Cloud => Party::Cloud,
        }
    }
}

/// Why a channel gave no read at all, decided before its first read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unread {
    /// It reports another machine than the one pinned: whatever it would
    /// read is about that machine. An identity contradiction.
    OtherMachine(String),
    /// The pinned machine cannot be confirmed (the identity cannot be read,
    /// or a pinned part is not reported): a gap.
    Unconfirmed(String),
    /// The method could not be set up (configuration, credentials): a gap.
    NotBuilt(String),
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
    /// Why nothing was read, when the channel was refused before reading.
    pub unread: Option<Unread>,
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
    /// Power readings: (the meter, what it read).
    pub draws: Vec<(Witness, Draw)>,
    /// The most watts a node reported off may draw.
    pub max_off_watts: f64,
}

fn list(items: &[String]) -> String {
    items.join(", ")
}

/// What the rules look at, worked out once from the observations.
struct Facts<'a> {
    o: &'a Observations,
    /// Reads asked per channel.
    n: usize,
    /// Reads of the node's state: off from any channel (an outlet off
    /// means no power), on from a controller or hypervisor (an outlet on
    /// only means power is offered).
    off: usize,
    on: usize,
    /// Channels that report another machine (`source: why`).
    other_machine: Vec<String>,
    /// Probes that found a live network stack (`host (accepted|reset)`).
    alive: Vec<String>,
    /// Probes that were accepted.
    accepted: Vec<String>,
    /// Probes that found nothing (`host (silent|unreachable)`).
    quiet: Vec<String>,
    /// Probes that found anything but an accepted connection.
    not_accepted: Vec<String>,
    /// Probes that could not be made (`host: why`).
    not_probed: Vec<String>,
    /// Meters above the threshold, at or under it (`source: N W`).
    hot: Vec<String>,
    cold: Vec<String>,
    /// Controller channels that went dark because their outlets cut the power.
    dark: Vec<String>,
    /// Channels that did not give all their reads (why), dark ones excepted.
    incomplete: Vec<String>,
    /// Whether any channel gave any read.
    anything_read: bool,
    /// Controller channels that were read (for "through …").
    bmcs: Vec<String>,
    /// Parties whose evidence agrees with the expectation.
    agree: BTreeSet<Party>,
}

impl<'a> Facts<'a> {
    fn of(o: &'a Observations) -> Self {
        let n = o.samples.max(1) as usize;
        let max = o.max_off_watts;
        let state_reads = |s: PowerState| -> usize {
            o.channels
                .iter()
                .filter(|c| s == PowerState::Off || c.kind != ChannelKind::Outlet)
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
        ] {
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
    fn per_channel(&self) -> String {
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
    fn through(&self) -> String {
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
    fn who_reads_off(&self) -> &'static str {
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
        } else {
            "the outlets read"
        }
    }

    fn max(&self) -> f64 {
        self.o.max_off_watts
    }

    /// What the device under suspicion says, in words.
    fn own_word(&self) -> String {
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
    fn witnesses_of(&self, party: Party) -> Vec<String> {
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
    fn own_meter(&self) -> Vec<String> {
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
