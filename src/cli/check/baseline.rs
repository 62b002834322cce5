//! `check --baseline`/`--record`: the baseline `check` compares with, the
//! checks and probes it compares, the drift column and the exit code.

use crate::cli::args::CheckArgs;
use crate::exit;
use crate::fleet::drift::{Baseline, Drift, Severity};
use crate::fleet::plan::NodePlan;
use crate::fleet::verify::facts::{probe_node, NodeProbe};
use crate::fleet::verify::{check_all, CheckRow};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The baseline `check` works with: the one to compare with (it must
/// exist), or the one `--record` adds to (empty when there is none yet).
/// `Err` is the exit code after saying why.
pub fn load_baseline(c: &CheckArgs) -> Result<Option<Baseline>, i32> {
    let Some(path) = &c.baseline else {
        return Ok(None);
    };
    if c.record && !path.exists() {
        return Ok(Some(Baseline::new()));
    }
    match Baseline::load(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) => {
            eprintln!("fencekit: {e}");
            if !c.record {
                eprintln!(
                    "fencekit: record one first: fencekit check --all --baseline {} --record",
                    path.display()
                );
            }
            Err(exit::USAGE)
        }
    }
}

/// Probes every node's own address, at most `parallel` at once (in plan order).
pub async fn probe_all(plans: &[NodePlan], timeout: Duration, parallel: usize) -> Vec<NodeProbe> {
    let sem = Arc::new(Semaphore::new(parallel.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (i, p) in plans.iter().enumerate() {
        let (sem, name, address, ports) = (
            sem.clone(),
            p.name.clone(),
            p.address.clone(),
            p.probe_ports.clone(),
        );
        set.spawn(async move {
            let _permit = sem.acquire().await;
            (
                i,
                probe_node(&name, address.as_deref(), &ports, timeout).await,
            )
        });
    }
    let mut out = Vec::new();
    while let Some(r) = set.join_next().await {
        if let Ok((i, Some(p))) = r {
            out.push((i, p));
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, p)| p).collect()
}

/// Every level checked and, when `probe` is given, every node's address
/// probed (at the same time).
pub async fn check_and_probe(
    plans: &[NodePlan],
    step: Duration,
    parallel: usize,
    probe: Option<Duration>,
) -> (Vec<CheckRow>, Vec<NodeProbe>) {
    let probes = async {
        match probe {
            Some(t) => probe_all(plans, t, parallel).await,
            None => Vec::new(),
        }
    };
    tokio::join!(check_all(plans, step, parallel), probes)
}

/// The exit status of a check: 1 when a level would fail (a broken drift
/// included), else 4 for a weakened drift, 5 for a changed one, else 0.
pub fn exit_code(rows: &[CheckRow], drifts: &[Drift]) -> i32 {
    if rows.iter().any(|r| !r.ok) {
        return exit::FAILURE;
    }
    match crate::fleet::drift::worst(drifts) {
        Some(Severity::Broken) => exit::FAILURE,
        Some(Severity::Weakened) => exit::DRIFT_WEAKENED,
        Some(Severity::Changed) => exit::DRIFT_CHANGED,
        None => exit::OK,
    }
}

/// The drift column of the table: the names of a level's drifts.
pub fn drift_cell(drifts: &[Drift], r: &CheckRow) -> String {
    let names: Vec<&str> = drifts
        .iter()
        .filter(|d| d.node == r.node && d.level == Some(r.level))
        .map(|d| d.drift.as_str())
        .collect();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(", ")
    }
}

/// `--record`: adds what works now to the baseline and writes it; says
/// what was not recorded. Returns the exit code it adds (1 when a level
/// could not be recorded or the file not written).
pub fn record(base: &mut Baseline, c: &CheckArgs, rows: &[CheckRow], probes: &[NodeProbe]) -> i32 {
    let Some(path) = &c.baseline else {
        return exit::USAGE;
    };
    let skipped = base.record(rows, probes);
    if let Err(e) = base.save(path) {
        eprintln!("fencekit: {e}");
        return exit::FAILURE;
    }
    let levels = rows.iter().filter(|r| r.ok && r.method != "manual").count();
    let nodes = {
        let mut n: Vec<&str> = rows
            .iter()
            .filter(|r| r.ok)
            .map(|r| r.node.as_str())
            .collect();
        n.dedup();
        n.len()
    };
    eprintln!(
        "fencekit: recorded {levels} level(s) of {nodes} node(s) in {}",
        path.display()
    );
    for why in &skipped {
        eprintln!("fencekit: not recorded: {why}");
    }
    if skipped.is_empty() {
        exit::OK
    } else {
        exit::FAILURE
    }
}
