//! `fencekit check` without `--pacemaker`/`--far`/`--watch`: would each
//! fencing level work, without touching power; the table, JSON or metrics,
//! compared with a baseline (`super::baseline`), and `--record-identity`
//! (`super::identity`).

use crate::cli::args::{CheckArgs, Output};
use crate::cli::plan::begin;
use crate::cli::render::shorten;
use crate::exit;
use crate::fleet::verify::CheckRow;

/// Entry point of `fencekit check`.
pub fn main(c: CheckArgs) -> i32 {
    if (c.pacemaker || c.cib.is_some() || c.far.is_some()) && c.watch.is_none() {
        return super::doctor::doctor(&c);
    }
    if c.watch.is_some() {
        return super::watch::main(c);
    }
    let a = &c.action;
    let plans = match begin(a) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut base = match super::baseline::load_baseline(&c) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let Some(rt) = crate::runtime::runtime("fencekit") else {
        return exit::FAILURE;
    };
    let parallel = crate::fleet::fanout::bounded_parallel(a.parallel as usize).0;
    let probe = base.is_some().then_some(c.probe_timeout);
    let (mut rows, probes) = rt.block_on(super::baseline::check_and_probe(
        &plans,
        a.login_timeout,
        parallel,
        probe,
    ));
    let checked = std::time::SystemTime::now();
    // Recording takes what is there now; otherwise every difference from
    // the baseline is a drift.
    let compared = base
        .as_ref()
        .filter(|_| !c.record)
        .map(|b| crate::fleet::drift::compare(b, &rows, &probes));
    let drifts = compared
        .as_ref()
        .map(|c| c.drifts.clone())
        .unwrap_or_default();
    crate::fleet::drift::mark_broken(&mut rows, &drifts);
    let recorded = c
        .record_identity
        .then(|| super::identity::record_identity(&plans, &rows));
    match a.output {
        Output::Json | Output::Jsonl => {
            let mut doc = serde_json::json!({ "checks": rows });
            if let Some(cmp) = &compared {
                doc["drifts"] = serde_json::json!(cmp.drifts);
                doc["stale"] = serde_json::json!(cmp.stale);
            }
            if !probes.is_empty() {
                doc["probes"] = serde_json::json!(probes);
            }
            if let Some((toml, _)) = &recorded {
                doc["record_identity"] = serde_json::Value::String(toml.clone());
            }
            crate::outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        Output::Openmetrics => {
            let levels: Vec<_> = rows
                .iter()
                .map(|r| super::metrics::LevelSample {
                    row: r,
                    checked,
                    last_success: r.ok.then_some(checked),
                    checks: None,
                })
                .collect();
            crate::outln!(
                "{}",
                super::metrics::render(&levels, &drifts, checked, true).trim_end()
            );
        }
        Output::Human => {
            let mut b = tabled::builder::Builder::default();
            let mut head = vec![
                "node", "level", "method", "endpoint", "identity", "result", "detail",
            ];
            if compared.is_some() {
                head.insert(6, "drift");
            }
            b.push_record(head);
            for r in &rows {
                let mut cells = vec![
                    r.node.clone(),
                    r.level.to_string(),
                    r.method.clone(),
                    r.endpoint.clone(),
                    identity_cell(r),
                    if r.ok {
                        "ok".into()
                    } else {
                        "WOULD FAIL".into()
                    },
                    shorten(
                        r.error
                            .clone()
                            .or_else(|| r.detail.clone())
                            .unwrap_or_default(),
                        110,
                    ),
                ];
                if compared.is_some() {
                    cells.insert(6, super::baseline::drift_cell(&drifts, r));
                }
                b.push_record(cells);
            }
            let mut t = b.build();
            t.with(tabled::settings::Style::sharp());
            match &recorded {
                // stdout carries only the TOML, so that it can be appended
                // to the inventory as it is.
                Some((toml, _)) => {
                    eprintln!("{t}");
                    crate::outln!("{}", toml.trim_end());
                }
                None => crate::outln!("{t}"),
            }
            for d in &drifts {
                crate::outln!("drift: {d}");
            }
        }
    }
    let mut code = super::baseline::exit_code(&rows, &drifts);
    if !rows.iter().all(|r| r.ok) {
        let bad = rows.iter().filter(|r| !r.ok).count();
        eprintln!(
            "fencekit: {bad} of {} fencing level(s) would fail",
            rows.len()
        );
    }
    if let Some(cmp) = &compared {
        for s in &cmp.stale {
            eprintln!("fencekit: warning: not compared (record it again): {s}");
        }
        if let Some(w) = crate::fleet::drift::worst(&cmp.drifts) {
            eprintln!(
                "fencekit: {} drift(s) from the baseline (worst: {})",
                cmp.drifts.len(),
                w.as_str()
            );
        }
    }
    if let Some((_, skipped)) = &recorded {
        for why in skipped {
            eprintln!("fencekit: not recorded: {why}");
        }
        if !skipped.is_empty() {
            code = exit::FAILURE;
        }
    }
    if let (true, Some(b)) = (c.record, base.as_mut()) {
        let r = super::baseline::record(b, &c, &rows, &probes);
        if r != exit::OK {
            code = r;
        }
    }
    // The metrics carry the findings: a textfile collector's
    // `check -o openmetrics > f.tmp && mv f.tmp f.prom` must publish them.
    if a.output == Output::Openmetrics && code != exit::USAGE {
        code = exit::OK;
    }
    code
}

/// The identity column of `check`: the first UUID form and the serial.
fn identity_cell(r: &CheckRow) -> String {
    match &r.identity {
        None => "-".into(),
        Some(id) if id.is_empty() => "not reported".into(),
        Some(id) => {
            let mut parts = Vec::new();
            parts.extend(id.uuid.first().map(|f| f.uuid.clone()));
            parts.extend(id.serial.clone());
            parts.join(" ")
        }
    }
}
