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
//!   `max_off_watts` is not off.
//!
//! [`decide`] turns them into a [`Verdict`] (the table is [`VERDICTS`]):
//! `proven` needs every channel's reads to agree *and* at least one
//! independent witness to agree; BMC reads alone are `bmc-only`, which fails
//! (exit 3) unless the operator accepted BMC-only proof for that node.

use super::plan::NodePlan;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind};
use crate::engine::identity::{
    Comparison, Difference, ExpectedIdentity, Identity, Refusal, Unreported,
};
use crate::engine::power::PowerState;
use crate::ipmi::config::Privilege;
use crate::method::spec::MethodSpec;
use crate::redfish::driver::ResetPlan;
use crate::redfish::model::NoSafeReset;
use serde::Serialize;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Default of `--max-off-watts`: the most a node reported off may draw.
/// A server on standby power (BMC, fans at rest) draws roughly 5–30 W; a
/// running one rarely less than 80 W. 50 W sits between the two.
pub const DEFAULT_MAX_OFF_WATTS: f64 = 50.0;

/// How verification is done.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// The state to prove.
    pub expect: PowerState,
    /// Consecutive BMC reads per channel.
    pub samples: u32,
    /// Time between two reads.
    pub interval: Duration,
    /// Bound on one TCP probe.
    pub probe_timeout: Duration,
    /// For `expect on`: how long the host may take to answer.
    pub boot_timeout: Duration,
    /// Bound on each BMC step (session set-up, one read).
    pub step_timeout: Duration,
    /// Most nodes verified at once.
    pub parallel: usize,
    /// Recorded check digests to compare with: node → check → `sha256:…`.
    pub baseline: Option<Baseline>,
    /// The most watts a node reported off may draw (a node's inventory
    /// `max_off_watts` overrides it).
    pub max_off_watts: f64,
    /// Accept BMC-only proof for every node (`--accept-bmc-only`; a node's
    /// inventory `accept_bmc_only` does it for that node).
    pub accept_bmc_only: bool,
}

impl VerifyOptions {
    /// Three reads one second apart, one-second probes, the default
    /// threshold, no baseline, BMC-only proof not accepted.
    pub fn new(expect: PowerState) -> Self {
        VerifyOptions {
            expect,
            samples: 3,
            interval: Duration::from_secs(1),
            probe_timeout: Duration::from_secs(1),
            boot_timeout: Duration::from_secs(120),
            step_timeout: Duration::from_secs(10),
            parallel: 128,
            baseline: None,
            max_off_watts: DEFAULT_MAX_OFF_WATTS,
            accept_bmc_only: false,
        }
    }
}

/// Recorded rejoin-check digests: node → check name → `sha256:HEX`.
pub type Baseline = std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

/// One rejoin configuration check's result.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CheckOutcome {
    /// The check's name.
    pub name: String,
    /// `sha256:HEX` of its standard output (absent if it could not run).
    pub digest: Option<String>,
    /// Its exit status.
    pub exit_status: Option<i32>,
    /// The recorded digest it was compared with.
    pub baseline: Option<String>,
    /// True when it differs from the baseline.
    pub drift: bool,
    /// Why it could not run.
    pub error: Option<String>,
}

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

/// Verification of one node.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// The node.
    pub node: String,
    /// The expected state.
    pub expect: PowerState,
    /// The conclusion.
    pub verdict: Verdict,
    /// Why, in words.
    pub reason: String,
    /// `bmc-only` was accepted as proof for this node (flag or inventory).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bmc_only_accepted: bool,
    /// Every observation.
    pub evidence: Vec<Evidence>,
    /// Rejoin configuration checks (expect on, when the inventory has them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckOutcome>,
    /// Wall time.
    pub elapsed_ms: u64,
}

impl VerifyReport {
    /// Exit code contribution: 0 proven (or accepted `bmc-only`), 3
    /// contradicted, unproven, `bmc-only` or drifted, 1 no evidence.
    pub fn exit_code(&self) -> i32 {
        match self.verdict {
            Verdict::Proven => crate::exit::OK,
            Verdict::BmcOnly if self.bmc_only_accepted => crate::exit::OK,
            Verdict::BmcOnly | Verdict::Contradiction | Verdict::Unproven | Verdict::Drift => {
                crate::exit::UNPROVEN
            }
            Verdict::NoEvidence => crate::exit::FAILURE,
        }
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
    fn describe(&self, port: u16, timeout: Duration) -> String {
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

/// Connects to `host:port` once, within `timeout` (name resolution
/// included). A name that does not resolve is no observation of the host
/// ([`Probe::Failed`]), never silence.
pub async fn probe(host: &str, port: u16, timeout: Duration) -> Probe {
    let until = tokio::time::Instant::now() + timeout;
    let addr = match tokio::time::timeout_at(until, tokio::net::lookup_host((host, port))).await {
        Ok(Ok(mut addrs)) => match addrs.next() {
            Some(a) => a,
            None => return Probe::Failed(format!("{host} has no address")),
        },
        Ok(Err(e)) => return Probe::Failed(format!("cannot resolve {host}: {e}")),
        Err(_) => {
            return Probe::Failed(format!(
                "resolving {host} took more than {:.1}s",
                timeout.as_secs_f64()
            ))
        }
    };
    match tokio::time::timeout_at(until, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => Probe::Accepted,
        Ok(Err(e)) => Probe::of_error(&e),
        Err(_) => Probe::Silent,
    }
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

/// Awaits every future, concurrently on this task, keeping their order.
async fn join_all<F: std::future::Future>(futs: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut futs: Vec<std::pin::Pin<Box<F>>> = futs.map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = (0..futs.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futs.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}

/// How a fencing level serves verification.
enum Role {
    /// A channel: read its state (and its power draw).
    Channel(ChannelKind),
    /// The SSH `host` profile: the node itself; its SSH port is probed.
    HostProbe(String, u16),
    /// Manual: nothing to read.
    Nothing,
}

fn role(m: &MethodSpec) -> Role {
    match m {
        MethodSpec::Ipmi { .. } | MethodSpec::Redfish { .. } => Role::Channel(ChannelKind::Bmc),
        MethodSpec::Ssh { config, .. } => match config.profile {
            crate::ssh::config::Profile::Host => Role::HostProbe(config.host.clone(), config.port),
            // A hypervisor (or a custom command) is the node's controller.
            _ => Role::Channel(ChannelKind::Bmc),
        },
        // A PDU cuts the node's power from outside: independent of the BMC.
        MethodSpec::Snmp { .. } => Role::Channel(ChannelKind::Outlet),
        // AWS (issue 25): EC2 sees the instance from outside it.
        MethodSpec::Aws { .. } => Role::Channel(ChannelKind::Cloud),
        MethodSpec::Manual { .. } => Role::Nothing,
    }
}

/// Reads one channel `samples` times, spaced by `interval`, in one
/// session, then its power draw.
async fn sample(
    method: &MethodSpec,
    kind: ChannelKind,
    opts: &VerifyOptions,
    max_off_watts: f64,
    t0: Instant,
    evidence: &mut Vec<Evidence>,
) -> (Vec<Option<PowerState>>, Option<Draw>) {
    let source = method.endpoint();
    let independent = kind != ChannelKind::Bmc;
    let mut out = Vec::new();
    let mut driver = match method.build(None).await {
        Ok(d) => d,
        Err(e) => {
            evidence.push(Evidence {
                source,
                observation: format!("not read: {e}"),
                at_ms: t0.elapsed().as_millis() as u64,
                agrees: None,
                independent,
            });
            return (vec![None], None);
        }
    };
    // A pinned channel must first show it controls the pinned machine:
    // readings of another machine are no evidence about this node.
    let pin = method.expected();
    if !pin.is_empty() {
        let deadline = Some(Instant::now() + opts.step_timeout);
        let found = match driver.connect(deadline).await {
            Ok(_) => driver.identity(deadline).await,
            Err(e) => Err(e),
        };
        let refused = match found {
            Ok(f) => match pin.compare(&f) {
                Comparison::Match(_) => None,
                Comparison::Mismatch(why) => Some(format!(
                    "not read: this channel controls a different machine ({why})"
                )),
                Comparison::Unreported(why) => {
                    Some(format!("not read: the machine cannot be confirmed ({why})"))
                }
            },
            Err(e) => Some(format!("not read: the identity could not be read: {e}")),
        };
        if let Some(observation) = refused {
            evidence.push(Evidence {
                source,
                observation,
                at_ms: t0.elapsed().as_millis() as u64,
                agrees: None,
                independent,
            });
            driver.close().await;
            return (vec![None], None);
        }
    }
    if opts.expect == PowerState::On {
        // Right after a reboot or a power cycle the BMC may still read off:
        // wait (within the boot timeout) for "on" before sampling.
        let until = t0 + opts.boot_timeout;
        loop {
            let deadline = Some(Instant::now() + opts.step_timeout);
            let r = match driver.connect(deadline).await {
                Ok(_) => driver.status(deadline).await,
                Err(e) => Err(e),
            };
            match r {
                Ok(PowerState::Off) if Instant::now() + opts.interval < until => {
                    tokio::time::sleep(opts.interval).await;
                }
                _ => break,
            }
        }
    }
    for i in 0..opts.samples.max(1) {
        if i > 0 {
            tokio::time::sleep(opts.interval).await;
        }
        let deadline = Some(Instant::now() + opts.step_timeout);
        let r: Result<PowerState, DriverError> = match driver.connect(deadline).await {
            Ok(_) => driver.status(deadline).await,
            Err(e) => Err(e),
        };
        let at_ms = t0.elapsed().as_millis() as u64;
        match r {
            Ok(s) => {
                evidence.push(Evidence {
                    source: source.clone(),
                    observation: format!(
                        "{} reports power {s} (read {} of {})",
                        match kind {
                            ChannelKind::Bmc => "BMC",
                            ChannelKind::Outlet => "the outlet",
                            ChannelKind::Cloud => "the cloud API",
                        },
                        i + 1,
                        opts.samples
                    ),
                    at_ms,
                    agrees: Some(s == opts.expect),
                    independent,
                });
                out.push(Some(s));
            }
            Err(e) => {
                evidence.push(Evidence {
                    source: source.clone(),
                    observation: format!("read {} failed: {e}", i + 1),
                    at_ms,
                    agrees: None,
                    independent,
                });
                out.push(None);
                if !e.kind.is_transient() && e.kind != ErrorKind::StatusUnreadable {
                    break;
                }
            }
        }
    }
    // AWS (issue 25): what EC2 says about the last change (its reason) and,
    // for `expect on`, its status checks: context, not a verdict of its own.
    if let crate::method::driver::AnyDriver::Aws(d) = &mut driver {
        if out.iter().any(Option::is_some) {
            let deadline = Some(Instant::now() + opts.step_timeout);
            for line in d.evidence(opts.expect == PowerState::On, deadline).await {
                evidence.push(Evidence {
                    source: source.clone(),
                    observation: line,
                    at_ms: t0.elapsed().as_millis() as u64,
                    agrees: None,
                    independent,
                });
            }
        }
    }
    // The draw, in the same session, once the state reads are done (the
    // freshest moment); only from a device that answered.
    let draw = if out.iter().any(Option::is_some) {
        let deadline = Some(Instant::now() + opts.step_timeout);
        let r = driver.power_reading(deadline).await;
        let at_ms = t0.elapsed().as_millis() as u64;
        let (draw, observation, agrees) = match r {
            Ok(Some(p)) => {
                let below = p.watts <= max_off_watts;
                (
                    Draw::Watts(p.watts),
                    format!(
                        "draws {:.0} W ({}; an off node draws at most {max_off_watts:.0} W)",
                        p.watts, p.source
                    ),
                    Some(below == (opts.expect == PowerState::Off)),
                )
            }
            Ok(None) => (
                Draw::Unsupported,
                "no power reading (the device does not measure it)".to_string(),
                None,
            ),
            Err(e) => (
                Draw::Failed(e.to_string()),
                format!("no power reading: {e}"),
                None,
            ),
        };
        evidence.push(Evidence {
            source: format!("{source} power"),
            observation,
            at_ms,
            agrees,
            independent: true,
        });
        Some(draw)
    } else {
        None
    };
    driver.close().await;
    (out, draw)
}

/// Probes `addr:port` (for `expect on`, again until the boot timeout).
async fn probe_one(
    addr: &str,
    port: u16,
    what: &str,
    opts: &VerifyOptions,
    t0: Instant,
) -> ((String, Probe), Evidence) {
    let source = if addr.contains(':') {
        format!("[{addr}]:{port}{what}")
    } else {
        format!("{addr}:{port}{what}")
    };
    let mut p = probe(addr, port, opts.probe_timeout).await;
    if opts.expect == PowerState::On {
        // A host that is booting answers later: retry until the boot timeout.
        let until = t0 + opts.boot_timeout;
        while p != Probe::Accepted && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(250).min(until - Instant::now())).await;
            p = probe(addr, port, opts.probe_timeout).await;
        }
    }
    let agrees = match (&p, opts.expect) {
        (Probe::Failed(_), _) => None,
        (Probe::Accepted, e) => Some(e == PowerState::On),
        (Probe::Reset, _) => Some(false),
        (Probe::Silent | Probe::Unreachable, e) => Some(e == PowerState::Off),
    };
    let ev = Evidence {
        source: source.clone(),
        observation: p.describe(port, opts.probe_timeout),
        at_ms: t0.elapsed().as_millis() as u64,
        agrees,
        independent: true,
    };
    ((source, p), ev)
}

/// Verifies one node.
pub async fn verify_node(plan: &NodePlan, opts: &VerifyOptions) -> VerifyReport {
    let t0 = Instant::now();
    let max_off_watts = plan.max_off_watts.unwrap_or(opts.max_off_watts);
    let mut probe_targets: Vec<(String, u16, &'static str)> = Vec::new();
    let mut channels = Vec::new();
    for m in &plan.levels {
        match role(m) {
            Role::Channel(kind) => channels.push((m, kind)),
            Role::HostProbe(host, port) => {
                if !probe_targets
                    .iter()
                    .any(|(h, p, _)| *h == host && *p == port)
                {
                    probe_targets.push((host, port, " (ssh, host profile)"));
                }
            }
            Role::Nothing => {}
        }
    }
    // The node's own SSH (rejoin checks) is the node itself too.
    if let Some(MethodSpec::Ssh { config, .. }) = &plan.node_ssh {
        if !probe_targets
            .iter()
            .any(|(h, p, _)| *h == config.host && *p == config.port)
        {
            probe_targets.push((config.host.clone(), config.port, " (ssh, the node's own)"));
        }
    }
    if let Some(addr) = &plan.address {
        for port in &plan.probe_ports {
            if !probe_targets.iter().any(|(h, p, _)| h == addr && p == port) {
                probe_targets.push((addr.clone(), *port, ""));
            }
        }
    }
    // Every channel is sampled at the same time, so N channels cost the
    // time of one.
    let runs = channels.iter().map(|(m, kind)| async move {
        let mut ev = Vec::new();
        let (reads, draw) = sample(m, *kind, opts, max_off_watts, t0, &mut ev).await;
        (
            ChannelReads {
                source: m.endpoint(),
                kind: *kind,
                reads,
            },
            draw.map(|d| (format!("{} power", m.endpoint()), d)),
            ev,
        )
    });
    let mut evidence = Vec::new();
    let mut obs = Observations {
        expect: opts.expect,
        samples: opts.samples,
        channels: Vec::new(),
        probes: Vec::new(),
        draws: Vec::new(),
        max_off_watts,
    };
    for (channel, draw, ev) in join_all(runs).await {
        obs.channels.push(channel);
        obs.draws.extend(draw);
        evidence.extend(ev);
    }
    // Then the host itself, every probe at once.
    let probes = probe_targets
        .iter()
        .map(|(h, p, what)| probe_one(h, *p, what, opts, t0));
    for (p, ev) in join_all(probes).await {
        obs.probes.push(p);
        evidence.push(ev);
    }
    evidence.sort_by_key(|e| e.at_ms);
    let (mut verdict, mut reason) = decide(&obs);
    let mut bmc_only_accepted = false;
    if verdict == Verdict::BmcOnly && (opts.accept_bmc_only || plan.accept_bmc_only) {
        bmc_only_accepted = true;
        let by = if plan.accept_bmc_only {
            "the inventory's accept_bmc_only for this node"
        } else {
            "--accept-bmc-only"
        };
        reason = format!("{reason}; accepted as proof by {by}");
        evidence.push(Evidence {
            source: "policy".into(),
            observation: format!("BMC-only proof accepted by {by}"),
            at_ms: t0.elapsed().as_millis() as u64,
            agrees: None,
            independent: false,
        });
    }
    let mut checks = Vec::new();
    if opts.expect == PowerState::On && verdict == Verdict::Proven && !plan.checks.is_empty() {
        checks = run_checks(plan, opts, t0, &mut evidence).await;
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| c.digest.is_none())
            .map(|c| c.name.as_str())
            .collect();
        let drifted: Vec<&str> = checks
            .iter()
            .filter(|c| c.drift)
            .map(|c| c.name.as_str())
            .collect();
        if !failed.is_empty() {
            verdict = Verdict::Unproven;
            reason = format!(
                "{reason}; but check(s) could not run: {}",
                failed.join(", ")
            );
        } else if !drifted.is_empty() {
            verdict = Verdict::Drift;
            reason = format!(
                "{reason}; but the configuration drifted from the baseline: {} (re-run set-up before it rejoins)",
                drifted.join(", ")
            );
        } else if opts.baseline.is_some() {
            reason = format!(
                "{reason}; {} check(s) match the baseline (no drift)",
                checks.len()
            );
        }
    }
    VerifyReport {
        node: plan.name.clone(),
        expect: opts.expect,
        verdict,
        reason,
        bmc_only_accepted,
        evidence,
        checks,
        elapsed_ms: t0.elapsed().as_millis() as u64,
    }
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(data);
    let mut s = String::from("sha256:");
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Why a node's rejoin checks cannot run at all.
#[derive(Debug, thiserror::Error)]
enum NoCheckSession {
    /// The node has no `[node.ssh]`.
    #[error("no [node.ssh] to reach the node")]
    NoSsh,
    /// Its `[node.ssh]` is another kind of method.
    #[error("[node.ssh] is not an SSH method")]
    NotSsh,
    /// Its SSH driver cannot be built (credential, configuration).
    #[error(transparent)]
    Build(DriverError),
}

/// The SSH driver of a node's `[node.ssh]`, for its rejoin checks.
async fn check_session(
    m: Option<&MethodSpec>,
) -> Result<crate::ssh::driver::SshDriver, NoCheckSession> {
    match m.ok_or(NoCheckSession::NoSsh)?.build(None).await {
        Ok(crate::method::driver::AnyDriver::Ssh(d)) => Ok(d),
        Ok(_) => Err(NoCheckSession::NotSsh),
        Err(e) => Err(NoCheckSession::Build(e)),
    }
}

/// Runs the node's rejoin checks over SSH and compares their digests.
async fn run_checks(
    plan: &NodePlan,
    opts: &VerifyOptions,
    t0: Instant,
    evidence: &mut Vec<Evidence>,
) -> Vec<CheckOutcome> {
    let recorded = opts.baseline.as_ref().and_then(|b| b.get(&plan.name));
    let source = plan
        .node_ssh
        .as_ref()
        .map(|m| m.endpoint())
        .unwrap_or_default();
    let fail_all = |why: NoCheckSession| {
        plan.checks
            .iter()
            .map(|c| CheckOutcome {
                name: c.name.clone(),
                digest: None,
                exit_status: None,
                baseline: None,
                drift: false,
                error: Some(why.to_string()),
            })
            .collect::<Vec<_>>()
    };
    let mut driver = match check_session(plan.node_ssh.as_ref()).await {
        Ok(d) => d,
        Err(why) => return fail_all(why),
    };
    let mut out = Vec::new();
    for c in &plan.checks {
        let deadline = Some(Instant::now() + opts.step_timeout);
        let r = driver.exec(&c.command, deadline).await;
        let at_ms = t0.elapsed().as_millis() as u64;
        let outcome = match r {
            Ok(o) => {
                let digest = sha256_hex(o.stdout.as_bytes());
                let base = recorded.and_then(|b| b.get(&c.name)).cloned();
                let drift = base.as_ref().is_some_and(|b| *b != digest);
                evidence.push(Evidence {
                    source: format!("{source} check {}", c.name),
                    observation: match (&base, drift) {
                        (None, _) => format!(
                            "{digest} (exit {}); no baseline to compare",
                            o.status.unwrap_or(-1)
                        ),
                        (Some(_), false) => format!("{digest} matches the baseline"),
                        (Some(b), true) => format!("{digest} differs from the baseline {b}"),
                    },
                    at_ms,
                    agrees: base.as_ref().map(|_| !drift),
                    independent: true,
                });
                CheckOutcome {
                    name: c.name.clone(),
                    digest: Some(digest),
                    exit_status: o.status,
                    baseline: base,
                    drift,
                    error: None,
                }
            }
            Err(e) => {
                evidence.push(Evidence {
                    source: format!("{source} check {}", c.name),
                    observation: format!("could not run: {e}"),
                    at_ms,
                    agrees: None,
                    independent: true,
                });
                CheckOutcome {
                    name: c.name.clone(),
                    digest: None,
                    exit_status: None,
                    baseline: None,
                    drift: false,
                    error: Some(e.to_string()),
                }
            }
        };
        out.push(outcome);
    }
    crate::engine::driver::PowerDriver::close(&mut driver).await;
    out
}

/// Verifies every node, at most `opts.parallel` at once, in plan order.
pub async fn verify_all(plans: &[NodePlan], opts: &VerifyOptions) -> Vec<VerifyReport> {
    let local = tokio::task::LocalSet::new();
    let plans = plans.to_vec();
    let opts = opts.clone();
    local
        .run_until(async move {
            let sem = Rc::new(Semaphore::new(opts.parallel.max(1)));
            let opts = Rc::new(opts);
            let handles: Vec<_> = plans
                .into_iter()
                .map(|p| {
                    let (sem, opts) = (sem.clone(), opts.clone());
                    tokio::task::spawn_local(async move {
                        let _permit = sem.acquire().await;
                        verify_node(&p, &opts).await
                    })
                })
                .collect();
            let mut out = Vec::new();
            for h in handles {
                if let Ok(r) = h.await {
                    out.push(r);
                }
            }
            out
        })
        .await
}

/// One level's fenceability.
#[derive(Clone, Debug, Serialize)]
pub struct CheckRow {
    /// The node.
    pub node: String,
    /// Level (1-based).
    pub level: usize,
    /// Driver.
    pub method: String,
    /// Endpoint.
    pub endpoint: String,
    /// Whether fencing through this level would work.
    pub ok: bool,
    /// The power state read, if any.
    pub state: Option<PowerState>,
    /// What was negotiated (cipher suite, privilege, TLS identity, reset types).
    pub detail: Option<String>,
    /// Why it would not work.
    pub error: Option<String>,
    /// What the device reports about the machine (absent when it could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// The identity this level is pinned to (absent when none).
    #[serde(skip_serializing_if = "ExpectedIdentity::is_empty")]
    pub expect: ExpectedIdentity,
}

/// Why fencing through one level would not work (`fencekit check`); the
/// row keeps its text.
#[derive(Debug, thiserror::Error)]
enum CheckProblem {
    /// A step failed: building the driver, connecting, reading the state or
    /// the reset types.
    #[error(transparent)]
    Step(#[from] DriverError),
    /// The device reports another machine than the level is pinned to.
    #[error("a different machine than pinned: {0}")]
    Mismatch(Difference),
    /// The device does not report a part the pin names.
    #[error("the pinned identity cannot be confirmed: {0}")]
    Unreported(Unreported),
    /// The identity could not be read from a pinned level.
    #[error("the pinned identity cannot be confirmed: {0}")]
    IdentityUnread(DriverError),
    /// Redfish: no reset type that is safe for power off or on.
    #[error("no safe reset type for power {}: {0}", .0.command)]
    NoSafeReset(NoSafeReset),
    /// IPMI: a session below operator (what was negotiated).
    #[error(
        "the session privilege is too low for power control ({0}); \
         chassis control needs operator or administrator"
    )]
    LowPrivilege(String),
}

impl From<Refusal> for CheckProblem {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Different(why) => CheckProblem::Mismatch(why),
            Refusal::Unreported(why) => CheckProblem::Unreported(why),
        }
    }
}

/// The pinned identity against what the device reported (`Ok` also when
/// nothing is pinned).
fn pin_holds(expect: &ExpectedIdentity, found: &Identity) -> Result<(), CheckProblem> {
    expect.check(found)?;
    Ok(())
}

/// Every power off and on has a safe reset type.
fn resets_are_safe(plan: &ResetPlan) -> Result<(), CheckProblem> {
    use crate::engine::power::PowerCommand;
    for (cmd, choice) in &plan.choices {
        if let (PowerCommand::Off | PowerCommand::On, Err(why)) = (cmd, choice) {
            return Err(CheckProblem::NoSafeReset(why.clone()));
        }
    }
    Ok(())
}

/// An IPMI session of privilege `granted` may control chassis power;
/// `detail` (what `connect` said) goes into the refusal.
fn privilege_suffices(granted: Privilege, detail: &str) -> Result<(), CheckProblem> {
    if granted >= Privilege::Operator {
        Ok(())
    } else {
        Err(CheckProblem::LowPrivilege(detail.to_string()))
    }
}

/// Checks one level: reachable, authenticates, privilege, the machine's
/// identity (read and reported; compared with the pin, if any), status
/// readable, and (Redfish) a safe reset type for off and on. Changes no
/// power state.
pub async fn check_level(node: &str, level: usize, m: &MethodSpec, step: Duration) -> CheckRow {
    let mut row = CheckRow {
        node: node.to_string(),
        level,
        method: m.driver_name().into(),
        endpoint: m.endpoint(),
        ok: false,
        state: None,
        detail: None,
        error: None,
        identity: None,
        expect: m.expected().clone(),
    };
    if let MethodSpec::Manual { .. } = m {
        row.ok = true;
        row.detail = Some(format!(
            "a person fences by hand and confirms with: fencekit ack {node}"
        ));
        return row;
    }
    let mut driver = match m.build(None).await {
        Ok(d) => d,
        Err(e) => {
            row.error = Some(e.to_string());
            return row;
        }
    };
    let deadline = Some(Instant::now() + step);
    let result: Result<(), CheckProblem> = async {
        let detail = driver.connect(deadline).await?;
        row.detail = Some(detail);
        match driver.identity(deadline).await {
            Ok(found) => {
                let pinned = pin_holds(&row.expect, &found);
                row.identity = Some(found);
                pinned?;
            }
            Err(e) if row.expect.is_empty() => {
                tracing::debug!(node, level, error = %e, "identity not readable");
            }
            Err(e) => return Err(CheckProblem::IdentityUnread(e)),
        }
        row.state = Some(driver.status(deadline).await?);
        match &mut driver {
            crate::method::driver::AnyDriver::Redfish(d) => {
                resets_are_safe(&d.reset_plan(deadline).await?)?;
            }
            crate::method::driver::AnyDriver::Ssh(_) => {}
            // connect() resolved every outlet (names through the PDU's names
            // table) and status() read each one; write access cannot be
            // tested without switching, so it is left to the first action.
            crate::method::driver::AnyDriver::Snmp(_) => {}
            // AWS (issue 25): connect() read the instance with the keys;
            // whether they may stop it shows only at the first stop.
            crate::method::driver::AnyDriver::Aws(_) => {}
            crate::method::driver::AnyDriver::Ipmi(d) => {
                privilege_suffices(d.privilege(), row.detail.as_deref().unwrap_or(""))?;
            }
        }
        Ok(())
    }
    .await;
    driver.close().await;
    match result {
        Ok(()) => row.ok = true,
        Err(e) => row.error = Some(e.to_string()),
    }
    row
}

/// Marks the levels of one node that report different machines (under
/// every UUID encoding): at least one of them controls the wrong machine.
fn flag_disagreements(rows: &mut [CheckRow]) {
    let found: Vec<super::identity::LevelIdentity<'_>> = rows
        .iter()
        .map(|r| super::identity::LevelIdentity {
            level: r.level,
            endpoint: &r.endpoint,
            found: r.identity.as_ref(),
        })
        .collect();
    let bad = super::identity::disagreements(&found);
    for (a, b, why) in bad {
        for r in rows.iter_mut().filter(|r| r.level == a || r.level == b) {
            r.ok = false;
            r.error = Some(match r.error.take() {
                Some(e) if !e.contains(&why) => format!("{e}; {why}"),
                Some(e) => e,
                None => why.clone(),
            });
        }
    }
}

/// Checks every level of every node, at most `parallel` nodes at once.
pub async fn check_all(plans: &[NodePlan], step: Duration, parallel: usize) -> Vec<CheckRow> {
    let local = tokio::task::LocalSet::new();
    let plans = plans.to_vec();
    local
        .run_until(async move {
            let sem = Rc::new(Semaphore::new(parallel.max(1)));
            let handles: Vec<_> = plans
                .into_iter()
                .map(|p| {
                    let sem = sem.clone();
                    tokio::task::spawn_local(async move {
                        let _permit = sem.acquire().await;
                        let mut rows = Vec::new();
                        for (i, m) in p.levels.iter().enumerate() {
                            rows.push(check_level(&p.name, i + 1, m, step).await);
                        }
                        flag_disagreements(&mut rows);
                        rows
                    })
                })
                .collect();
            let mut out = Vec::new();
            for h in handles {
                if let Ok(r) = h.await {
                    out.extend(r);
                }
            }
            flag_shared_machines(&mut out);
            out
        })
        .await
}

/// Marks the levels of different nodes that report one machine.
fn flag_shared_machines(rows: &mut [CheckRow]) {
    let view: Vec<(&str, usize, &str, Option<&Identity>)> = rows
        .iter()
        .map(|r| {
            (
                r.node.as_str(),
                r.level,
                r.endpoint.as_str(),
                r.identity.as_ref(),
            )
        })
        .collect();
    let shared = super::identity::same_machine_elsewhere(&view);
    for (a, b, why) in shared {
        for i in [a, b] {
            let r = &mut rows[i];
            r.ok = false;
            r.error = Some(match r.error.take() {
                Some(e) => format!("{e}; {why}"),
                None => why.clone(),
            });
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

    #[test]
    fn exit_codes_follow_the_table() {
        let rep = |verdict, accepted| VerifyReport {
            node: "n".into(),
            expect: Off,
            verdict,
            reason: String::new(),
            bmc_only_accepted: accepted,
            evidence: vec![],
            checks: vec![],
            elapsed_ms: 0,
        };
        for (v, _, code) in VERDICTS {
            let first: i32 = code[..1].parse().unwrap();
            assert_eq!(rep(*v, false).exit_code(), first, "{v}");
        }
        assert_eq!(rep(Verdict::BmcOnly, true).exit_code(), 0);
        assert_eq!(rep(Verdict::Contradiction, true).exit_code(), 3);
        let text = verdict_table_text();
        for (v, _, _) in VERDICTS {
            assert!(text.contains(v.as_str()));
            assert_eq!(
                serde_json::to_value(v).unwrap(),
                serde_json::Value::String(v.as_str().into())
            );
        }
    }

    #[tokio::test]
    async fn a_probe_tells_accepted_from_reset() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let t = Duration::from_secs(2);
        assert_eq!(probe("127.0.0.1", port, t).await, Probe::Accepted);
        drop(l);
        assert_eq!(probe("127.0.0.1", port, t).await, Probe::Reset);
        assert!(matches!(
            probe("no-such-host.invalid", 22, t).await,
            Probe::Failed(_)
        ));
    }

    #[test]
    fn a_level_that_would_not_fence_says_why_by_variant() {
        let uuid = "4c4c4544-0033-4b10-8030-c8c04f4d4e32";
        let pin = ExpectedIdentity::new(Some(uuid), None).unwrap();
        let other = Identity {
            names: Vec::new(),
            uuid: vec![crate::engine::identity::UuidForm {
                uuid: "00000000-0000-0000-0000-000000000001".into(),
                encoding: "as reported",
            }],
            serial: None,
        };
        let e = pin_holds(&pin, &other).unwrap_err();
        assert!(matches!(e, CheckProblem::Mismatch(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "a different machine than pinned: expected uuid {uuid}, found \
                 00000000-0000-0000-0000-000000000001 (as reported)"
            )
        );
        let e = pin_holds(&pin, &Identity::default()).unwrap_err();
        assert!(matches!(e, CheckProblem::Unreported(_)), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("the pinned identity cannot be confirmed: expected uuid"),
            "{e}"
        );
        assert!(pin_holds(&ExpectedIdentity::default(), &other).is_ok());

        use crate::engine::power::PowerCommand;
        let refused = NoSafeReset {
            command: PowerCommand::Off,
            offered: vec!["On".into()],
        };
        let plan = ResetPlan {
            offered: Some(vec!["On".into()]),
            choices: vec![
                (PowerCommand::On, Ok("On".into())),
                (PowerCommand::Off, Err(refused.clone())),
            ],
        };
        let e = resets_are_safe(&plan).unwrap_err();
        assert!(
            matches!(&e, CheckProblem::NoSafeReset(r) if *r == refused),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!("no safe reset type for power off: {refused}")
        );

        assert!(
            privilege_suffices(Privilege::Operator, "cipher suite 17, privilege operator").is_ok()
        );
        let e = privilege_suffices(Privilege::User, "cipher suite 17, privilege user").unwrap_err();
        assert!(
            matches!(&e, CheckProblem::LowPrivilege(d) if d.ends_with("user")),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "the session privilege is too low for power control (cipher suite 17, \
             privilege user); chassis control needs operator or administrator"
        );

        let step = DriverError::new(
            ErrorKind::Unreachable,
            crate::engine::error::Stage::Authenticate,
            "no answer",
        );
        let e = CheckProblem::from(step.clone());
        assert_eq!(e.to_string(), step.to_string(), "a step's own text");
        let e = CheckProblem::IdentityUnread(step.clone());
        assert_eq!(
            e.to_string(),
            format!("the pinned identity cannot be confirmed: {step}")
        );
    }

    #[tokio::test]
    async fn checks_without_an_ssh_session_say_why_by_variant() {
        let e = check_session(None).await.err().unwrap();
        assert!(matches!(e, NoCheckSession::NoSsh), "{e:?}");
        assert_eq!(e.to_string(), "no [node.ssh] to reach the node");
        let manual = MethodSpec::Manual {
            node: "n1".into(),
            instructions: "pull the plug".into(),
        };
        let e = check_session(Some(&manual)).await.err().unwrap();
        assert!(
            matches!(&e, NoCheckSession::Build(d) if d.kind == ErrorKind::Unsupported),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "a manual method has no device to talk to (during status read)"
        );
        let ipmi = crate::method::build::from_url(
            "ipmi://admin@127.0.0.1",
            &crate::method::build::MethodOptions {
                credential: crate::method::credential::CredentialRef::Inline(
                    crate::secret::Secret::from_str_value("secret"),
                ),
                ..Default::default()
            },
        )
        .unwrap();
        let e = check_session(Some(&ipmi)).await.err().unwrap();
        assert!(matches!(e, NoCheckSession::NotSsh), "{e:?}");
        assert_eq!(e.to_string(), "[node.ssh] is not an SSH method");
    }
}
