//! `check --watch`: checking a fleet again and again without ever being
//! harder on a BMC than one `check` is.
//!
//! Every node has its own schedule: all are checked at once at the start
//! (bounded by `parallel`, as one `check`), then each again about every
//! `interval`, measured from the start of its previous check, with ±10 %
//! jitter so the checks spread out instead of arriving in bursts. A node's
//! next check never starts before its previous one ended (a check that
//! outlasts the interval is followed by the next one at once, never
//! overlapped). Every device (BMC, PDU, hypervisor: `MethodSpec::device_keys`)
//! has one slot: at most one session to it at a time from this process,
//! and `bmc_interval` between two (not for PDUs, as in the fan-out). A
//! check sends no power command (see [`crate::fleet::verify::check`]).
//!
//! [`watch`] reports each node's rows as they come; what to keep and show is
//! the front's.

use super::plan::NodePlan;
use super::verify::facts::{probe_node, NodeProbe};
use super::verify::{check_level, flag_disagreements, CheckRow};
use crate::method::spec::MethodSpec;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, Mutex, Semaphore};
use tokio::time::Instant;

/// How long in-flight checks may finish (and close their sessions) once
/// the watch is asked to stop.
pub const STOP_GRACE: Duration = Duration::from_millis(500);

/// The schedule.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// About how often each node is checked.
    pub interval: Duration,
    /// The jitter, as a fraction of `interval` either way (0.1: ±10 %).
    pub jitter: f64,
    /// Bound on each step of a check (`--login-timeout`).
    pub step: Duration,
    /// Most nodes checked at once.
    pub parallel: usize,
    /// Least time between two sessions on one device.
    pub bmc_interval: Duration,
    /// Probe each node's own address with this timeout (baseline mode).
    pub probe: Option<Duration>,
}

/// One node checked.
#[derive(Clone, Debug)]
pub struct NodeChecked {
    /// The node's index in the plans.
    pub index: usize,
    /// Its levels.
    pub rows: Vec<CheckRow>,
    /// Its address, when probed.
    pub probe: Option<NodeProbe>,
    /// When the check ended.
    pub at: SystemTime,
}

type Slots = RefCell<HashMap<String, Rc<Mutex<Option<Instant>>>>>;

/// The next start: `interval` ± jitter after `began`, never before `ended`.
fn next_start(began: Instant, ended: Instant, opts: &WatchOptions) -> Instant {
    let j = opts.jitter.clamp(0.0, 0.5);
    let factor = 1.0 + j * (2.0 * rand::random::<f64>() - 1.0);
    (began + opts.interval.mul_f64(factor)).max(ended)
}

/// Checks one level in its devices' slots.
async fn level_in_slots(
    p: &NodePlan,
    level: usize,
    m: &MethodSpec,
    opts: &WatchOptions,
    slots: &Slots,
) -> CheckRow {
    // One session per address at a time: the watch is never in a hurry,
    // so the virtual BMCs behind one address (ports, Redfish systems) and
    // the protocols of one BMC all take turns.
    let mut keys: Vec<String> = m
        .device_keys()
        .iter()
        .map(|k| k.address().to_string())
        .collect();
    keys.sort();
    keys.dedup();
    let held: Vec<_> = keys
        .into_iter()
        .map(|k| {
            slots
                .borrow_mut()
                .entry(k)
                .or_insert_with(|| Rc::new(Mutex::new(None)))
                .clone()
        })
        .collect();
    let mut guards = Vec::with_capacity(held.len());
    for s in &held {
        guards.push(s.lock().await);
    }
    let pause = match m.paced() {
        false => Duration::ZERO,
        true => opts.bmc_interval,
    };
    if let Some(last) = guards.iter().filter_map(|g| **g).max() {
        tokio::time::sleep_until(last + pause).await;
    }
    let row = check_level(&p.name, level, m, opts.step).await;
    let done = Instant::now();
    for g in &mut guards {
        **g = Some(done);
    }
    row
}

/// Checks `plans` on `opts`'s schedule until `stop` resolves, calling
/// `report` with every node checked. Then lets the checks under way end
/// within [`STOP_GRACE`] and drops the rest. Must run inside a
/// [`tokio::task::LocalSet`].
pub async fn watch(
    plans: &[NodePlan],
    opts: &WatchOptions,
    stop: impl std::future::Future<Output = ()>,
    mut report: impl FnMut(NodeChecked),
) {
    let sem = Rc::new(Semaphore::new(opts.parallel.max(1)));
    let slots: Rc<Slots> = Rc::new(RefCell::new(HashMap::new()));
    let stopping = Rc::new(Cell::new(false));
    let busy = Rc::new(Cell::new(0usize));
    let (tx, mut rx) = mpsc::unbounded_channel::<NodeChecked>();
    let mut tasks = Vec::with_capacity(plans.len());
    for (index, plan) in plans.iter().enumerate() {
        let (plan, opts, sem, slots, stopping, busy, tx) = (
            plan.clone(),
            opts.clone(),
            sem.clone(),
            slots.clone(),
            stopping.clone(),
            busy.clone(),
            tx.clone(),
        );
        tasks.push(tokio::task::spawn_local(async move {
            let mut due = Instant::now();
            loop {
                tokio::time::sleep_until(due).await;
                let Ok(_permit) = sem.acquire().await else {
                    return;
                };
                if stopping.get() {
                    return;
                }
                busy.set(busy.get() + 1);
                let began = Instant::now();
                let probe = async {
                    match opts.probe {
                        Some(t) => {
                            probe_node(&plan.name, plan.address.as_deref(), &plan.probe_ports, t)
                                .await
                        }
                        None => None,
                    }
                };
                let levels = async {
                    let mut rows = Vec::with_capacity(plan.levels.len());
                    for (i, m) in plan.levels.iter().enumerate() {
                        // Asked to stop: no new session.
                        if stopping.get() {
                            return None;
                        }
                        rows.push(level_in_slots(&plan, i + 1, m, &opts, &slots).await);
                    }
                    flag_disagreements(&mut rows);
                    Some(rows)
                };
                let (rows, probe) = tokio::join!(levels, probe);
                busy.set(busy.get() - 1);
                let Some(rows) = rows else {
                    return;
                };
                let _ = tx.send(NodeChecked {
                    index,
                    rows,
                    probe,
                    at: SystemTime::now(),
                });
                due = next_start(began, Instant::now(), &opts);
            }
        }));
    }
    drop(tx);
    // Nothing to check (a watch that serves only the configuration
    // doctor's findings): wait to be stopped.
    if plans.is_empty() {
        stop.await;
        return;
    }
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            got = rx.recv() => match got {
                Some(n) => report(n),
                None => break,
            },
        }
    }
    stopping.set(true);
    let grace = Instant::now() + STOP_GRACE;
    while busy.get() > 0 && Instant::now() < grace {
        tokio::select! {
            got = rx.recv() => if let Some(n) = got { report(n) },
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
    for t in &tasks {
        t.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_check_is_jittered_and_never_overlaps() {
        let opts = WatchOptions {
            interval: Duration::from_secs(10),
            jitter: 0.1,
            step: Duration::from_secs(1),
            parallel: 1,
            bmc_interval: Duration::ZERO,
            probe: None,
        };
        let t0 = Instant::now();
        let mut seen = Vec::new();
        for _ in 0..200 {
            let n = next_start(t0, t0 + Duration::from_secs(1), &opts) - t0;
            assert!(
                n >= Duration::from_secs(9) && n <= Duration::from_secs(11),
                "{n:?}"
            );
            seen.push(n);
        }
        seen.sort();
        assert!(
            seen[199] - seen[0] > Duration::from_secs(1),
            "spread: {seen:?}"
        );
        // A check longer than the interval is followed at once, not overlapped.
        let late = t0 + Duration::from_secs(30);
        assert_eq!(next_start(t0, late, &opts), late);
    }
}
