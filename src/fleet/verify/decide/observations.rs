//! The observation types the verdict reads: where a piece of evidence
//! comes from ([`Witness`], its [`Party`]), a probe's result ([`Probe`]),
//! what each channel read ([`ChannelReads`]), power draws ([`Draw`]) and
//! all of it together ([`Observations`]). Gathering them is
//! [`crate::fleet::verify::evidence`]'s; concluding from them is
//! [`super`]'s.

use crate::engine::power::PowerState;
use serde::Serialize;
use std::time::Duration;

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
    /// A node's ports on a network switch (fabric fencing): the switch's
    /// word that the node is cut off; it says nothing of the node's power.
    Port {
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
    /// The switch ports that connect the node (fabric fencing).
    Fabric,
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
            | Witness::Port { channel }
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
            Witness::Port { .. } => "switch-port",
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
            Witness::Port { .. } => Some(Party::Fabric),
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

    /// What it means, for the evidence (`verify::evidence` words its probes
    /// with it; `pub(crate)` because a path-scoped visibility would name
    /// `fleet::verify` from below it).
    pub(crate) fn describe(&self, port: u16, timeout: Duration) -> String {
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

    pub(super) fn word(&self) -> &'static str {
        match self {
            Probe::Accepted => "accepted",
            Probe::Reset => "reset",
            Probe::Unreachable => "unreachable",
            Probe::Silent => "silent",
            Probe::Failed(_) => "not probed",
        }
    }
}

/// What a channel is, as a witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    /// The node's own controller (BMC, custom command): the party that may lie.
    Bmc,
    /// A device that cuts the node's power from outside (PDU outlets).
    Outlet,
    /// A switch that cuts the node's network (its ports down): it isolates,
    /// it does not power off, so the node's own silence must back it.
    Fabric,
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
            ChannelKind::Fabric => Witness::Port { channel },
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
            ChannelKind::Hypervisor | ChannelKind::Cloud | ChannelKind::Fabric => None,
        }
    }

    pub(super) fn party(self) -> Party {
        match self {
            ChannelKind::Bmc => Party::Controller,
            ChannelKind::Outlet => Party::Pdu,
            ChannelKind::Fabric => Party::Fabric,
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

/// Everything [`decide`](super::decide) looks at.
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
