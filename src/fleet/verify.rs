//! `verify`: independent evidence that a node is off (or back on), and
//! `check`: whether each fencing level *would* work, without touching power.
//!
//! Evidence for **off**: `samples` consecutive reads of "off" from every
//! configured channel (each level's BMC endpoint), spaced `interval` apart,
//! and the node's own address not answering on its probe ports. A BMC that
//! says off while the host answers is a **contradiction**: the case fencing
//! exists to catch. Evidence for **on**: the BMC reads on, and the host
//! answers on its probe ports within the boot timeout.

use super::plan::NodePlan;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind};
use crate::engine::identity::{Comparison, ExpectedIdentity, Identity};
use crate::engine::power::PowerState;
use crate::method::spec::MethodSpec;
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
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Evidence {
    /// Where it comes from (a BMC endpoint, or host:port).
    pub source: String,
    /// What was seen.
    pub observation: String,
    /// Milliseconds since verification began.
    pub at_ms: u64,
    /// Whether it agrees with the expectation (`None`: no observation could be made).
    pub agrees: Option<bool>,
}

/// The conclusion.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The evidence proves the expected state.
    Proven,
    /// Pieces of evidence contradict each other (e.g. BMC off, host answering).
    Contradiction,
    /// The evidence does not show the expected state.
    Unproven,
    /// No evidence could be gathered.
    NoEvidence,
    /// The node is on, but its configuration differs from the baseline.
    Drift,
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
    /// Every observation.
    pub evidence: Vec<Evidence>,
    /// Rejoin configuration checks (expect on, when the inventory has them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckOutcome>,
    /// Wall time.
    pub elapsed_ms: u64,
}

impl VerifyReport {
    /// Exit code contribution: 0 proven, 3 contradicted/unproven, 1 no evidence.
    pub fn exit_code(&self) -> i32 {
        match self.verdict {
            Verdict::Proven => crate::exit::OK,
            Verdict::Contradiction | Verdict::Unproven | Verdict::Drift => crate::exit::UNPROVEN,
            Verdict::NoEvidence => crate::exit::FAILURE,
        }
    }
}

/// What a TCP probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A connection was accepted: the host is up.
    Answers,
    /// Actively refused.
    Refused,
    /// Nothing within the timeout.
    Silent,
}

/// Connects to `host:port` once, within `timeout`.
pub async fn probe(host: &str, port: u16, timeout: Duration) -> Probe {
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect((host, port))).await {
        Ok(Ok(_)) => Probe::Answers,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Probe::Refused,
        Ok(Err(_)) => Probe::Silent,
        Err(_) => Probe::Silent,
    }
}

/// Decides the verdict from the evidence (pure, so it is tested on its own).
pub fn decide(
    expect: PowerState,
    bmc: &[(String, Vec<Option<PowerState>>)],
    probes: &[(String, Probe)],
) -> (Verdict, String) {
    let reads: Vec<PowerState> = bmc
        .iter()
        .flat_map(|(_, r)| r.iter().flatten().copied())
        .collect();
    if reads.is_empty() {
        return (
            Verdict::NoEvidence,
            "no BMC could be read; nothing is proven".into(),
        );
    }
    let on = reads.iter().filter(|s| **s == PowerState::On).count();
    let off = reads.len() - on;
    let answering: Vec<&str> = probes
        .iter()
        .filter(|(_, p)| *p == Probe::Answers)
        .map(|(s, _)| s.as_str())
        .collect();
    let silent_channels: Vec<&str> = bmc
        .iter()
        .filter(|(_, r)| r.iter().all(Option::is_none))
        .map(|(s, _)| s.as_str())
        .collect();
    let unread = if silent_channels.is_empty() {
        String::new()
    } else {
        format!("; unread channel(s): {}", silent_channels.join(", "))
    };
    match expect {
        PowerState::Off => {
            if on > 0 && off > 0 {
                return (
                    Verdict::Contradiction,
                    format!(
                        "BMC reads disagree ({off} off, {on} on): the state is not stable{unread}"
                    ),
                );
            }
            if on > 0 {
                return (
                    Verdict::Unproven,
                    format!("the BMC reports the node on{unread}"),
                );
            }
            if !answering.is_empty() {
                return (
                    Verdict::Contradiction,
                    format!(
                        "the BMC reports off, but the host still answers on {}: \
                         the node may not be fenced",
                        answering.join(", ")
                    ),
                );
            }
            if probes.is_empty() {
                return (
                    Verdict::Proven,
                    format!(
                        "off according to the BMC ({off} consecutive read(s)); no data-plane probe is \
                         configured, so the host itself was not checked{unread}"
                    ),
                );
            }
            (
                Verdict::Proven,
                format!(
                    "off: {off} BMC read(s) agree and the host answers on none of {} probe(s){unread}",
                    probes.len()
                ),
            )
        }
        PowerState::On => {
            if on > 0 && off > 0 {
                return (
                    Verdict::Contradiction,
                    format!("BMC reads disagree ({off} off, {on} on){unread}"),
                );
            }
            if off > 0 {
                if !answering.is_empty() {
                    return (
                        Verdict::Contradiction,
                        format!(
                            "the BMC reports off, but the host answers on {}",
                            answering.join(", ")
                        ),
                    );
                }
                return (
                    Verdict::Unproven,
                    format!("the BMC reports the node off{unread}"),
                );
            }
            let silent: Vec<&str> = probes
                .iter()
                .filter(|(_, p)| *p != Probe::Answers)
                .map(|(s, _)| s.as_str())
                .collect();
            if !silent.is_empty() {
                return (
                    Verdict::Unproven,
                    format!(
                        "the BMC reports on, but the host does not answer on {}",
                        silent.join(", ")
                    ),
                );
            }
            if probes.is_empty() {
                return (
                    Verdict::Proven,
                    format!("on according to the BMC ({on} read(s)); no data-plane probe is configured{unread}"),
                );
            }
            (
                Verdict::Proven,
                format!(
                    "on: the BMC reads on and the host answers on {} probe(s){unread}",
                    probes.len()
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

/// Reads one channel `samples` times, spaced by `interval`, in one session.
async fn sample(
    method: &MethodSpec,
    opts: &VerifyOptions,
    t0: Instant,
    evidence: &mut Vec<Evidence>,
) -> Vec<Option<PowerState>> {
    let source = method.endpoint();
    let mut out = Vec::new();
    let mut driver = match method.build(None).await {
        Ok(d) => d,
        Err(e) => {
            evidence.push(Evidence {
                source,
                observation: format!("not read: {e}"),
                at_ms: t0.elapsed().as_millis() as u64,
                agrees: None,
            });
            return vec![None];
        }
    };
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
                        "BMC reports power {s} (read {} of {})",
                        i + 1,
                        opts.samples
                    ),
                    at_ms,
                    agrees: Some(s == opts.expect),
                });
                out.push(Some(s));
            }
            Err(e) => {
                evidence.push(Evidence {
                    source: source.clone(),
                    observation: format!("read {} failed: {e}", i + 1),
                    at_ms,
                    agrees: None,
                });
                out.push(None);
                if !e.kind.is_transient() && e.kind != ErrorKind::StatusUnreadable {
                    break;
                }
            }
        }
    }
    driver.close().await;
    out
}

/// Verifies one node.
pub async fn verify_node(plan: &NodePlan, opts: &VerifyOptions) -> VerifyReport {
    let t0 = Instant::now();
    // Every channel is sampled at the same time, so N channels cost the
    // time of one.
    let runs = plan
        .levels
        .iter()
        .filter(|m| !matches!(m, MethodSpec::Manual { .. }))
        .map(|m| async move {
            let mut ev = Vec::new();
            let reads = sample(m, opts, t0, &mut ev).await;
            ((m.endpoint(), reads), ev)
        });
    let mut evidence = Vec::new();
    let mut bmc = Vec::new();
    for (channel, ev) in join_all(runs).await {
        bmc.push(channel);
        evidence.extend(ev);
    }
    evidence.sort_by_key(|e| e.at_ms);
    let mut probes = Vec::new();
    if let Some(addr) = &plan.address {
        for port in &plan.probe_ports {
            let source = if addr.contains(':') {
                format!("[{addr}]:{port}")
            } else {
                format!("{addr}:{port}")
            };
            let mut p = probe(addr, *port, opts.probe_timeout).await;
            if opts.expect == PowerState::On {
                // A host that is booting answers later: retry until the boot timeout.
                let until = t0 + opts.boot_timeout;
                while p != Probe::Answers && Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(250).min(until - Instant::now()))
                        .await;
                    p = probe(addr, *port, opts.probe_timeout).await;
                }
            }
            let observation = match p {
                Probe::Answers => format!("the host accepts connections on port {port}"),
                Probe::Refused => format!("the host refuses connections on port {port}"),
                Probe::Silent => format!(
                    "no answer on port {port} within {:.1}s",
                    opts.probe_timeout.as_secs_f64()
                ),
            };
            evidence.push(Evidence {
                source: source.clone(),
                observation,
                at_ms: t0.elapsed().as_millis() as u64,
                agrees: Some((p == Probe::Answers) == (opts.expect == PowerState::On)),
            });
            probes.push((source, p));
        }
    }
    let (mut verdict, mut reason) = decide(opts.expect, &bmc, &probes);
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
    let fail_all = |why: String| {
        plan.checks
            .iter()
            .map(|c| CheckOutcome {
                name: c.name.clone(),
                digest: None,
                exit_status: None,
                baseline: None,
                drift: false,
                error: Some(why.clone()),
            })
            .collect::<Vec<_>>()
    };
    let Some(m) = &plan.node_ssh else {
        return fail_all("no [node.ssh] to reach the node".into());
    };
    let mut driver = match m.build(None).await {
        Ok(crate::method::driver::AnyDriver::Ssh(d)) => d,
        Ok(_) => return fail_all("[node.ssh] is not an SSH method".into()),
        Err(e) => return fail_all(e.to_string()),
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
    let result: Result<(), String> = async {
        let detail = driver.connect(deadline).await.map_err(|e| e.to_string())?;
        row.detail = Some(detail);
        match driver.identity(deadline).await {
            Ok(found) => {
                let verdict = (!row.expect.is_empty()).then(|| row.expect.compare(&found));
                row.identity = Some(found);
                match verdict {
                    Some(Comparison::Mismatch(why)) => {
                        return Err(format!("a different machine than pinned: {why}"))
                    }
                    Some(Comparison::Unreported(why)) => {
                        return Err(format!("the pinned identity cannot be confirmed: {why}"))
                    }
                    _ => {}
                }
            }
            Err(e) if row.expect.is_empty() => {
                tracing::debug!(node, level, error = %e, "identity not readable");
            }
            Err(e) => return Err(format!("the pinned identity cannot be confirmed: {e}")),
        }
        row.state = Some(driver.status(deadline).await.map_err(|e| e.to_string())?);
        match &mut driver {
            crate::method::driver::AnyDriver::Redfish(d) => {
                let plan = d.reset_plan(deadline).await.map_err(|e| e.to_string())?;
                use crate::engine::power::PowerCommand;
                for (cmd, choice) in &plan.choices {
                    if matches!(cmd, PowerCommand::Off | PowerCommand::On) {
                        if let Err(why) = choice {
                            return Err(format!("no safe reset type for power {cmd}: {why}"));
                        }
                    }
                }
            }
            crate::method::driver::AnyDriver::Ssh(_) => {}
            // connect() resolved every outlet (names through the PDU's names
            // table) and status() read each one; write access cannot be
            // tested without switching, so it is left to the first action.
            crate::method::driver::AnyDriver::Snmp(_) => {}
            crate::method::driver::AnyDriver::Ipmi(_) => {
                let detail = row.detail.as_deref().unwrap_or("");
                if !(detail.contains("privilege administrator")
                    || detail.contains("privilege operator"))
                {
                    return Err(format!(
                        "the session privilege is too low for power control ({detail}); \
                         chassis control needs operator or administrator"
                    ));
                }
            }
        }
        Ok(())
    }
    .await;
    driver.close().await;
    match result {
        Ok(()) => row.ok = true,
        Err(e) => row.error = Some(e),
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

    fn ch(reads: &[Option<PowerState>]) -> Vec<(String, Vec<Option<PowerState>>)> {
        vec![("ipmi://bmc".into(), reads.to_vec())]
    }

    #[test]
    fn off_is_proven_only_with_agreeing_reads_and_a_silent_host() {
        let silent = [("h:22".to_string(), Probe::Refused)];
        assert_eq!(
            decide(Off, &ch(&[Some(Off); 3]), &silent).0,
            Verdict::Proven
        );
        let answering = [("h:22".to_string(), Probe::Answers)];
        let (v, why) = decide(Off, &ch(&[Some(Off); 3]), &answering);
        assert_eq!(v, Verdict::Contradiction);
        assert!(why.contains("still answers") && why.contains("h:22"));
        assert_eq!(
            decide(Off, &ch(&[Some(Off), Some(On), Some(Off)]), &silent).0,
            Verdict::Contradiction
        );
        assert_eq!(
            decide(Off, &ch(&[Some(On); 3]), &silent).0,
            Verdict::Unproven
        );
        assert_eq!(decide(Off, &ch(&[None]), &silent).0, Verdict::NoEvidence);
    }

    #[test]
    fn channels_must_agree() {
        let two = vec![
            ("ipmi://a".to_string(), vec![Some(Off), Some(Off)]),
            ("redfish://a".to_string(), vec![Some(On), Some(On)]),
        ];
        assert_eq!(decide(Off, &two, &[]).0, Verdict::Contradiction);
        let one_dead = vec![
            ("ipmi://a".to_string(), vec![None]),
            ("redfish://a".to_string(), vec![Some(Off), Some(Off)]),
        ];
        let (v, why) = decide(Off, &one_dead, &[]);
        assert_eq!(v, Verdict::Proven);
        assert!(why.contains("unread channel(s): ipmi://a"), "{why}");
    }

    #[test]
    fn on_needs_the_host_to_answer() {
        let answering = [("h:22".to_string(), Probe::Answers)];
        let silent = [("h:22".to_string(), Probe::Silent)];
        assert_eq!(
            decide(On, &ch(&[Some(On); 2]), &answering).0,
            Verdict::Proven
        );
        assert_eq!(
            decide(On, &ch(&[Some(On); 2]), &silent).0,
            Verdict::Unproven
        );
        assert_eq!(
            decide(On, &ch(&[Some(Off); 2]), &silent).0,
            Verdict::Unproven
        );
        assert_eq!(
            decide(On, &ch(&[Some(Off); 2]), &answering).0,
            Verdict::Contradiction
        );
    }
}
