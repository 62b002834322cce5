//! `fencekit verify` and `fencekit check`: rendering and exit codes around
//! [`crate::fleet::verify`].

use super::args::{ActionArgs, CheckArgs, Output, VerifyArgs};
use super::plan::begin;
use crate::engine::power::PowerState;
use crate::exit;
use crate::fleet::plan::NodePlan;
use crate::fleet::verify::{verify_all, CheckRow, Verdict, VerifyOptions, VerifyReport};

/// Verification options from the action options, with the default sampling.
pub fn default_options(a: &ActionArgs, expect: PowerState) -> VerifyOptions {
    VerifyOptions {
        boot_timeout: a.timeout,
        step_timeout: a.login_timeout,
        parallel: crate::fleet::fanout::bounded_parallel(a.parallel as usize).0,
        max_off_watts: a.max_off_watts,
        accept_bmc_only: a.accept_bmc_only,
        ..VerifyOptions::new(expect)
    }
}

/// The exit code of a set of reports: 3 if anything is contradicted or
/// unproven, else 1 if evidence was missing, else 0.
pub fn worst<'a>(reports: impl Iterator<Item = &'a VerifyReport>) -> i32 {
    let codes: Vec<i32> = reports.map(VerifyReport::exit_code).collect();
    if codes.contains(&exit::UNPROVEN) {
        exit::UNPROVEN
    } else if codes.contains(&exit::FAILURE) {
        exit::FAILURE
    } else {
        exit::OK
    }
}

/// A verdict as shown to people.
pub fn verdict_word(r: &VerifyReport) -> &'static str {
    match r.verdict {
        Verdict::Proven => "PROVEN",
        Verdict::BmcOnly if r.bmc_only_accepted => "BMC ONLY (accepted)",
        Verdict::BmcOnly => "BMC ONLY",
        Verdict::Contradiction => "CONTRADICTION",
        Verdict::Unproven => "NOT PROVEN",
        Verdict::NoEvidence => "NO EVIDENCE",
        Verdict::Drift => "DRIFT",
    }
}

/// Prints one report for people.
pub fn print_report(r: &VerifyReport) {
    let word = verdict_word(r);
    let line = format!("{}: verify {}: {word}: {}", r.node, r.expect, r.reason);
    if r.exit_code() == exit::OK {
        crate::outln!("{line}");
    } else {
        eprintln!("fencekit: {line}");
    }
    for e in &r.evidence {
        let mark = match e.agrees {
            Some(true) => "+",
            Some(false) => "!",
            None => "?",
        };
        // Independent witnesses are marked, the BMC's own reads are not.
        crate::outln!(
            "  {mark} {:>6} ms  {}{}  {}",
            e.at_ms,
            e.source(),
            if e.independent() {
                " [independent]"
            } else {
                ""
            },
            e.observation
        );
    }
}

/// Entry point of `fencekit verify`.
pub fn verify(v: VerifyArgs) -> i32 {
    let a = &v.action;
    let plans = match begin(a) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let audit = match a
        .audit
        .as_deref()
        .map(crate::fleet::audit::Audit::open)
        .transpose()
    {
        Ok(x) => x,
        Err(m) => {
            eprintln!("fencekit: {m}");
            return exit::USAGE;
        }
    };
    let mut opts = default_options(
        a,
        if v.expect == "on" {
            PowerState::On
        } else {
            PowerState::Off
        },
    );
    opts.samples = v.samples;
    opts.interval = v.interval;
    opts.probe_timeout = v.probe_timeout;
    opts.boot_timeout = v.boot_timeout;
    if let Some(path) = &v.baseline {
        match std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_slice(&t).map_err(|e| e.to_string()))
        {
            Ok(b) => opts.baseline = Some(b),
            Err(e) => {
                eprintln!("fencekit: cannot read the baseline {}: {e}", path.display());
                return exit::USAGE;
            }
        }
    }
    if v.record_baseline.is_some() && v.expect != "on" {
        eprintln!("fencekit: --record-baseline goes with --expect on");
        return exit::USAGE;
    }
    let Some(rt) = crate::runtime::runtime("fencekit") else {
        return exit::FAILURE;
    };
    let reports = rt.block_on(verify_all(&plans, &opts));
    if let Some(audit) = &audit {
        for r in &reports {
            if let Err(m) = audit.record_verify(r) {
                eprintln!("fencekit: warning: {m}");
            }
        }
    }
    if let Some(path) = &v.record_baseline {
        let mut base: crate::fleet::verify::Baseline = std::fs::read(path)
            .ok()
            .and_then(|t| serde_json::from_slice(&t).ok())
            .unwrap_or_default();
        for r in &reports {
            let entry = base.entry(r.node.clone()).or_default();
            for c in &r.checks {
                if let Some(d) = &c.digest {
                    entry.insert(c.name.clone(), d.clone());
                }
            }
        }
        let text = serde_json::to_vec_pretty(&base).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text) {
            eprintln!(
                "fencekit: cannot write the baseline {}: {e}",
                path.display()
            );
            return exit::FAILURE;
        }
    }
    match a.output {
        Output::Json | Output::Jsonl | Output::Openmetrics => {
            let doc = serde_json::json!({ "results": reports });
            crate::outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        Output::Human => reports.iter().for_each(print_report),
    }
    worst(reports.iter())
}

fn shorten(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
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

/// Entry point of `fencekit check`.
pub fn check(c: CheckArgs) -> i32 {
    if c.watch.is_some() {
        return super::watch::main(c);
    }
    let a = &c.action;
    let plans = match begin(a) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut base = match super::check::load_baseline(&c) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let Some(rt) = crate::runtime::runtime("fencekit") else {
        return exit::FAILURE;
    };
    let parallel = crate::fleet::fanout::bounded_parallel(a.parallel as usize).0;
    let probe = base.is_some().then_some(c.probe_timeout);
    let (mut rows, probes) = rt.block_on(super::check::check_and_probe(
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
    let recorded = c.record_identity.then(|| record_identity(&plans, &rows));
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
                    cells.insert(6, super::check::drift_cell(&drifts, r));
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
    let mut code = super::check::exit_code(&rows, &drifts);
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
        let r = super::check::record(b, &c, &rows, &probes);
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

/// `check --record-identity`: the `[identity.NODE]` tables of every
/// inventory node that is not pinned yet, and why a node was not recorded.
/// URL targets get a comment with the `--expect-uuid` to use.
fn record_identity(plans: &[NodePlan], rows: &[CheckRow]) -> (String, Vec<String>) {
    use crate::fleet::identity::{identity_table, pin_for, LevelIdentity};
    let mut toml = format!(
        "# Recorded by `fencekit check --record-identity` at {}: the machine behind\n\
         # each node's fencing levels. Appended to the inventory, it makes every level\n\
         # refuse to power anything but this machine.\n",
        crate::time::utc_now()
    );
    let mut skipped = Vec::new();
    // Each node's rows, in order (grouped once, not searched per node).
    let mut by_node: std::collections::HashMap<&str, Vec<&CheckRow>> =
        std::collections::HashMap::new();
    for r in rows {
        by_node.entry(r.node.as_str()).or_default().push(r);
    }
    for p in plans {
        let own: &[&CheckRow] = by_node.get(p.name.as_str()).map_or(&[], |v| v);
        // Levels a node pin applies to (not manual or PDU methods).
        let pinnable = |level: usize| p.levels.get(level - 1).is_some_and(|m| m.pinnable());
        let levels: Vec<LevelIdentity<'_>> = own
            .iter()
            .filter(|r| pinnable(r.level))
            .map(|r| LevelIdentity {
                level: r.level,
                endpoint: &r.endpoint,
                found: r.identity.as_ref(),
            })
            .collect();
        if p.levels.iter().any(|m| !m.expected().is_empty()) {
            toml.push_str(&format!(
                "# {}: already pinned in the inventory (not recorded again)\n",
                p.name
            ));
            continue;
        }
        // A level that would fail (a disagreement, a machine another node
        // also reports, no answer) leaves the node unrecorded.
        let failing = own.iter().find(|r| !r.ok).map(|r| {
            format!(
                "level {} would fail: {}",
                r.level,
                r.error.as_deref().unwrap_or("?")
            )
        });
        let pin = match failing.map_or_else(|| pin_for(&levels).map_err(|e| e.to_string()), Err) {
            Ok(pin) => pin,
            Err(why) => {
                // A comment stays one line whatever the device said.
                let line = why.replace(['\n', '\r'], " ");
                toml.push_str(&format!("# {}: not recorded: {line}\n", p.name));
                skipped.push(format!("{}: {why}", p.name));
                continue;
            }
        };
        if p.name.contains("://") {
            let mut opts = Vec::new();
            opts.extend(pin.uuid.as_ref().map(|u| format!("--expect-uuid {u}")));
            opts.extend(pin.serial.as_ref().map(|s| format!("--expect-serial {s}")));
            toml.push_str(&format!(
                "# {}: not an inventory node; pin it with {}\n",
                p.name,
                opts.join(" ")
            ));
            continue;
        }
        toml.push('\n');
        toml.push_str(&identity_table(&p.name, &pin));
    }
    (toml, skipped)
}

/// One thing behind a device, for `fencekit list`.
#[derive(serde::Serialize)]
struct Listed {
    target: String,
    name: String,
    uri: Option<String>,
    state: Option<PowerState>,
    error: Option<String>,
}

async fn list_one(
    p: &crate::fleet::plan::NodePlan,
    level: usize,
    step: std::time::Duration,
) -> Vec<Listed> {
    use crate::engine::driver::PowerDriver;
    let Some(m) = p.levels.get(level) else {
        return vec![];
    };
    let target = m.endpoint();
    let fail = |e: String| {
        vec![Listed {
            target: target.clone(),
            name: "-".into(),
            uri: None,
            state: None,
            error: Some(e),
        }]
    };
    let mut driver = match m.build(None).await {
        Ok(d) => d,
        Err(e) => return fail(e.to_string()),
    };
    let deadline = Some(std::time::Instant::now() + step);
    let out = match driver.inner_mut().list(deadline).await {
        Ok(rows) => rows
            .into_iter()
            .map(|r| Listed {
                target: r.target.unwrap_or_else(|| target.clone()),
                name: r.name,
                uri: r.uri,
                state: r.state,
                error: r.error,
            })
            .collect(),
        Err(e) => fail(e),
    };
    driver.close().await;
    out
}

/// Entry point of `fencekit list`.
pub fn list(a: ActionArgs) -> i32 {
    let plans = match begin(&a) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Some(rt) = crate::runtime::runtime("fencekit") else {
        return exit::FAILURE;
    };
    let level = a.level.map_or(0, |l| l as usize - 1);
    let rows: Vec<Listed> = rt.block_on(async {
        let mut all = Vec::new();
        for p in &plans {
            all.extend(list_one(p, level, a.login_timeout).await);
        }
        all
    });
    match a.output {
        Output::Json | Output::Jsonl | Output::Openmetrics => {
            let doc = serde_json::json!({ "list": rows });
            crate::outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        Output::Human => {
            let mut b = tabled::builder::Builder::default();
            b.push_record(["target", "name", "state", "path / error"]);
            for r in &rows {
                b.push_record([
                    r.target.clone(),
                    r.name.clone(),
                    r.state.map_or("-".into(), |s| s.to_string()),
                    shorten(
                        r.error
                            .clone()
                            .or_else(|| r.uri.clone())
                            .unwrap_or_default(),
                        100,
                    ),
                ]);
            }
            let mut t = b.build();
            t.with(tabled::settings::Style::sharp());
            crate::outln!("{t}");
        }
    }
    if rows.iter().any(|r| r.name == "-") {
        exit::FAILURE
    } else {
        exit::OK
    }
}
