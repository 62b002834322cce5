//! `fencekit verify`: rendering and exit codes around
//! [`crate::fleet::verify`] (also the reports of `off|reboot --verify`).

use super::args::{ActionArgs, Output, VerifyArgs};
use super::plan::begin;
use crate::engine::power::PowerState;
use crate::exit;
use crate::fleet::verify::{verify_all, Verdict, VerifyOptions, VerifyReport};

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
