//! `verify`: independent evidence that a node is off (or back on), and
//! `check`: whether each fencing level *would* work, without touching power.
//!
//! Evidence comes from three kinds of source, each a line with its time:
//!
//! * **channels**: every fencing level's device, read `samples` times in a
//!   row, `interval` apart. A BMC reached over IPMI and over Redfish is two
//!   channels that must agree, but they are one witness: the BMC, the party
//!   that may lie. A PDU outlet is a channel that *is* independent of the
//!   BMC. Every channel must give all its reads, without a gap.
//! * **probes**: TCP connections to the node's own address on its probe
//!   ports (and to the SSH port of a `host`-profile level). A probe ends in
//!   one of four ways ([`Probe`]): *accepted* (the host is up), *reset* (an
//!   RST: a network stack answers at that address — the node's kernel is
//!   alive even if the probed service is not, so never evidence of off),
//!   *unreachable* (EHOSTUNREACH/ENETUNREACH: the neighbour or a router says
//!   nothing is there) or *silent* (no answer within the probe timeout; weak,
//!   a firewall does the same).
//! * **power draw**: each channel's [`PowerDriver::power_reading`], where the
//!   device measures it. A node reported off that draws more than
//!   `max_off_watts` is not off; one reported on that draws at most that is
//!   not running.
//!
//! Each piece of evidence carries its source as a type ([`Witness`]).
//! [`decide`] applies [`THE_RULE`] through the named rules of [`RULES`] and
//! gives a [`Verdict`] (the table is [`VERDICTS`]): the device under
//! suspicion (the BMC, over any protocol, and its own meter) can contradict
//! but never prove; `proven` needs its reading *and* a witness outside it.
//! The device's word alone is `bmc-only`, which fails (exit 3) unless the
//! operator accepted BMC-only proof for that node.
//!
//! The parts: [`evidence`] gathers (channels, probes, draws) and reports,
//! [`decide`] holds the verdict table and the decision, [`rejoin`] the
//! configuration checks of a node back on, [`check`] the fenceability check,
//! [`facts`] what a check saw of each level beyond "would it work" (cipher
//! suite, privilege, certificate, host key, reset types, outlet names) and
//! the probe of a node's own address, for `check --record` and drift.

pub mod check;
pub mod decide;
pub mod evidence;
pub mod facts;
pub mod rejoin;

pub use check::{
    check_all, check_level, check_node, flag_disagreements, flag_shared_machines, CheckRow,
};
pub use decide::{
    decide, decide_by_rule, verdict_table_text, ChannelKind, ChannelReads, Draw, Evidence,
    Observations, Party, Probe, Unread, Verdict, Witness, DEFAULT_MAX_OFF_WATTS, RULES, THE_RULE,
    VERDICTS,
};
pub use evidence::{probe, verify_all, verify_node, VerifyOptions, VerifyReport};
pub use rejoin::{Baseline, CheckOutcome};
