//! Gathering the evidence of `verify`: every channel read `samples` times
//! in one session (and its power draw), every probe of the node's own
//! address, then [`super::decide`]'s verdict and, for a node back on, the
//! rejoin checks ([`super::rejoin`]). One node ([`verify_node`]) or many
//! ([`verify_all`]).

use super::decide::{
    decide, ChannelKind, ChannelReads, Draw, Evidence, Observations, Probe, Unread, Verdict,
    Witness, DEFAULT_MAX_OFF_WATTS,
};
use super::rejoin::{run_checks, Baseline, CheckOutcome};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind};
use crate::engine::identity::Comparison;
use crate::engine::power::PowerState;
use crate::fleet::plan::NodePlan;
use crate::method::spec::MethodSpec;
use crate::platform::Party;
use serde::Serialize;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

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
    /// The node itself (the SSH `host` profile): its port is probed.
    HostProbe(String, u16),
    /// Manual: a person's word, never a reading.
    Manual,
}

fn role(m: &MethodSpec) -> Role {
    match m.party() {
        Some(Party::Controller) => Role::Channel(ChannelKind::Bmc),
        Some(Party::Hypervisor) => Role::Channel(ChannelKind::Hypervisor),
        Some(Party::Cloud) => Role::Channel(ChannelKind::Cloud),
        Some(Party::Outlet) => Role::Channel(ChannelKind::Outlet),
        Some(Party::Fabric) => Role::Channel(ChannelKind::Fabric),
        Some(Party::Host { host, port }) => Role::HostProbe(host, port),
        None => Role::Manual,
    }
}

/// What one channel gave: its reads, why it was not read (if refused
/// before reading), and its power draw.
struct Sampled {
    reads: Vec<Option<PowerState>>,
    unread: Option<Unread>,
    draw: Option<(Witness, Draw)>,
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
) -> Sampled {
    let source = method.endpoint();
    let witness = kind.witness(&source);
    let at = || t0.elapsed().as_millis() as u64;
    let mut out = Vec::new();
    let refused = |unread: Unread| Sampled {
        reads: vec![None],
        unread: Some(unread),
        draw: None,
    };
    let mut driver = match method.build(None).await {
        Ok(d) => d,
        Err(e) => {
            evidence.push(Evidence::new(witness, format!("not read: {e}"), at(), None));
            return refused(Unread::NotBuilt(e.to_string()));
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
        let unread = match found {
            Ok(f) => match pin.compare(&f) {
                Comparison::Match(_) => None,
                Comparison::Mismatch(why) => Some((
                    Some(false),
                    format!(
                        "identity contradiction: this channel controls a different machine ({why})"
                    ),
                    Unread::OtherMachine(why.to_string()),
                )),
                Comparison::Unreported(why) => Some((
                    None,
                    format!("not read: the machine cannot be confirmed ({why})"),
                    Unread::Unconfirmed(why.to_string()),
                )),
            },
            Err(e) => Some((
                None,
                format!("not read: the identity could not be read: {e}"),
                Unread::Unconfirmed(e.to_string()),
            )),
        };
        if let Some((agrees, observation, unread)) = unread {
            evidence.push(Evidence::new(witness, observation, at(), agrees));
            driver.close().await;
            return refused(unread);
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
                // An outlet on offers power; it does not show the node on.
                let agrees = match (kind, s) {
                    (ChannelKind::Outlet, PowerState::On) => None,
                    // A port up lets traffic through; it does not show the node up.
                    (ChannelKind::Fabric, PowerState::On) => None,
                    _ => Some(s == opts.expect),
                };
                evidence.push(Evidence::new(
                    witness.clone(),
                    match kind {
                        // A switch port isolates; it has no power to report.
                        ChannelKind::Fabric => format!(
                            "the switch reports the port(s) {} (read {} of {})",
                            match s {
                                PowerState::Off => "down: the node is isolated",
                                PowerState::On => "up",
                            },
                            i + 1,
                            opts.samples
                        ),
                        _ => format!(
                            "{} reports power {s} (read {} of {})",
                            match kind {
                                ChannelKind::Outlet => "the outlet",
                                ChannelKind::Bmc => "BMC",
                                ChannelKind::Hypervisor => "the hypervisor",
                                _ => "the cloud API",
                            },
                            i + 1,
                            opts.samples
                        ),
                    },
                    at_ms,
                    agrees,
                ));
                out.push(Some(s));
            }
            Err(e) => {
                evidence.push(Evidence::new(
                    witness.clone(),
                    format!("read {} failed: {e}", i + 1),
                    at_ms,
                    None,
                ));
                out.push(None);
                if !e.kind.is_transient() && e.kind != ErrorKind::StatusUnreadable {
                    break;
                }
            }
        }
    }
    // What a control plane says about the last change (EC2: its reason and,
    // for `expect on`, its status checks): context, not a verdict of its own.
    if out.iter().any(Option::is_some) {
        let deadline = Some(Instant::now() + opts.step_timeout);
        let expect_on = opts.expect == PowerState::On;
        for line in driver.inner_mut().context(expect_on, deadline).await {
            evidence.push(Evidence::new(witness.clone(), line, at(), None));
        }
    }
    // The draw, in the same session, once the state reads are done (the
    // freshest moment); only from a device that answered.
    let meter = kind
        .meter(&source)
        .filter(|_| out.iter().any(Option::is_some));
    let draw = if let Some(meter) = meter {
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
        evidence.push(Evidence::new(meter.clone(), observation, at_ms, agrees));
        Some((meter, draw))
    } else {
        None
    };
    driver.close().await;
    Sampled {
        reads: out,
        unread: None,
        draw,
    }
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
    let ev = Evidence::new(
        Witness::HostProbe {
            target: source.clone(),
        },
        p.describe(port, opts.probe_timeout),
        t0.elapsed().as_millis() as u64,
        agrees,
    );
    ((source, p), ev)
}

/// Verifies one node.
pub async fn verify_node(plan: &NodePlan, opts: &VerifyOptions) -> VerifyReport {
    let t0 = Instant::now();
    let max_off_watts = plan.max_off_watts.unwrap_or(opts.max_off_watts);
    let mut probe_targets: Vec<(String, u16, String)> = Vec::new();
    let mut channels = Vec::new();
    let mut evidence = Vec::new();
    for m in &plan.levels {
        match role(m) {
            Role::Channel(kind) => channels.push((m, kind)),
            Role::HostProbe(host, port) => {
                if !probe_targets
                    .iter()
                    .any(|(h, p, _)| *h == host && *p == port)
                {
                    let label = format!(" ({}, host profile)", m.driver_name());
                    probe_targets.push((host, port, label));
                }
            }
            Role::Manual => evidence.push(Evidence::new(
                Witness::Manual {
                    channel: m.endpoint(),
                },
                "a person fences this level by hand: their acknowledgment is a word, not a \
                 reading (no evidence of power)",
                0,
                None,
            )),
        }
    }
    // The node's own SSH (rejoin checks) is the node itself too.
    let own = plan.node_ssh.as_deref().and_then(MethodSpec::device);
    if let Some((m, (host, port))) = own.and_then(|m| Some((m, m.address()?))) {
        if !probe_targets
            .iter()
            .any(|(h, p, _)| *h == host && *p == port)
        {
            let label = format!(" ({}, the node's own)", m.platform().name());
            probe_targets.push((host, port, label));
        }
    }
    if let Some(addr) = &plan.address {
        for port in &plan.probe_ports {
            if !probe_targets.iter().any(|(h, p, _)| h == addr && p == port) {
                probe_targets.push((addr.clone(), *port, String::new()));
            }
        }
    }
    // Every channel is sampled at the same time, so N channels cost the
    // time of one.
    let runs = channels.iter().map(|(m, kind)| async move {
        let mut ev = Vec::new();
        let got = sample(m, *kind, opts, max_off_watts, t0, &mut ev).await;
        (
            ChannelReads {
                source: m.endpoint(),
                kind: *kind,
                reads: got.reads,
                unread: got.unread,
            },
            got.draw,
            ev,
        )
    });
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
        evidence.push(Evidence::new(
            Witness::Policy,
            format!("BMC-only proof accepted by {by}"),
            t0.elapsed().as_millis() as u64,
            None,
        ));
    }
    let mut checks = Vec::new();
    if opts.expect == PowerState::On && verdict == Verdict::Proven && !plan.checks.is_empty() {
        checks = run_checks(
            plan,
            opts.baseline.as_ref(),
            opts.step_timeout,
            t0,
            &mut evidence,
        )
        .await;
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
/// Verifies every node, at most `opts.parallel` at once, in plan order.
pub async fn verify_all(plans: &[NodePlan], opts: &VerifyOptions) -> Vec<VerifyReport> {
    let local = tokio::task::LocalSet::new();
    let plans = plans.to_vec();
    let opts = opts.clone();
    local
        .run_until(async move {
            let sem = Rc::new(Semaphore::new(opts.parallel.max(1)));
            let opts = Rc::new(opts);
            let expect = opts.expect;
            let handles: Vec<_> = plans
                .into_iter()
                .map(|p| {
                    let (sem, opts) = (sem.clone(), opts.clone());
                    let name = p.name.clone();
                    let task = tokio::task::spawn_local(async move {
                        let _permit = sem.acquire().await;
                        verify_node(&p, &opts).await
                    });
                    (name, task)
                })
                .collect();
            // A node whose task panicked is a report of its own, counted
            // as a failure (no evidence), never left out.
            crate::fleet::tasks::join_in_order(handles, |node, why| VerifyReport {
                node,
                expect,
                verdict: Verdict::NoEvidence,
                reason: format!("the verification did not finish: {why}; nothing is proven"),
                bmc_only_accepted: false,
                evidence: Vec::new(),
                checks: Vec::new(),
                elapsed_ms: 0,
            })
            .await
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::verify::decide::{verdict_table_text, VERDICTS};
    use PowerState::Off;

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
}
