//! `check --output openmetrics` and `check --watch`'s `/metrics`: the
//! OpenMetrics / Prometheus text exposition of a check.
//!
//! Gauges (and, in watch mode, one counter), no sample timestamps
//! (node_exporter's textfile collector refuses them), no blank lines,
//! families in a fixed order and `# EOF` at the end: valid OpenMetrics 1.0
//! and Prometheus text format 0.0.4 (which reads `# EOF` as a comment).
//! The two differ only in how a counter's family is named (OpenMetrics:
//! without `_total`), so watch mode answers a scrape in the format its
//! `Accept` header asks for.

use crate::fleet::drift::Drift;
use crate::fleet::verify::CheckRow;
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// The content type of the OpenMetrics text format.
pub const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The content type of the Prometheus text format.
pub const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One level as the metrics show it.
pub struct LevelSample<'a> {
    /// The check's row.
    pub row: &'a CheckRow,
    /// When it was checked.
    pub checked: SystemTime,
    /// When it last worked (watch mode keeps it across checks).
    pub last_success: Option<SystemTime>,
    /// Checks of this level so far (watch mode).
    pub checks: Option<u64>,
}

/// Seconds since the Unix epoch.
pub fn unix(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A label value, escaped (backslash, double quote, newline).
fn esc(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// A number as the exposition format writes it (millisecond precision
/// for times, which is what the checks measure).
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn level_labels(r: &CheckRow) -> String {
    format!(
        "node=\"{}\",level=\"{}\",method=\"{}\"",
        esc(&r.node),
        r.level,
        esc(&r.method)
    )
}

/// The exposition text of `levels` and `drifts`; `now` is the time of the
/// check (or of this scrape, in watch mode).
pub fn render(
    levels: &[LevelSample<'_>],
    drifts: &[Drift],
    now: SystemTime,
    openmetrics: bool,
) -> String {
    let mut out = String::with_capacity(256 + levels.len() * 400);
    family(
        &mut out,
        "fencekit_level_ok",
        "gauge",
        "1 when fencing through this level would work now (reachable, authenticated, privileged, the right machine, a safe reset), else 0.",
    );
    for l in levels {
        let _ = writeln!(
            out,
            "fencekit_level_ok{{{}}} {}",
            level_labels(l.row),
            u8::from(l.row.ok)
        );
    }
    family(
        &mut out,
        "fencekit_level_check_seconds",
        "gauge",
        "How long the last check of this level took.",
    );
    for l in levels {
        let _ = writeln!(
            out,
            "fencekit_level_check_seconds{{{}}} {}",
            level_labels(l.row),
            num(l.row.elapsed_ms as f64 / 1000.0)
        );
    }
    family(
        &mut out,
        "fencekit_level_check_timestamp_seconds",
        "gauge",
        "When this level was last checked (Unix time).",
    );
    for l in levels {
        let _ = writeln!(
            out,
            "fencekit_level_check_timestamp_seconds{{{}}} {}",
            level_labels(l.row),
            num(unix(l.checked))
        );
    }
    family(
        &mut out,
        "fencekit_level_last_success_timestamp_seconds",
        "gauge",
        "When a check last found this level working (Unix time); absent until it does.",
    );
    for l in levels {
        if let Some(t) = l.last_success {
            let _ = writeln!(
                out,
                "fencekit_level_last_success_timestamp_seconds{{{}}} {}",
                level_labels(l.row),
                num(unix(t))
            );
        }
    }
    if levels.iter().any(|l| l.checks.is_some()) {
        family(
            &mut out,
            if openmetrics {
                "fencekit_level_checks"
            } else {
                "fencekit_level_checks_total"
            },
            "counter",
            "Checks of this level since fencekit check --watch started.",
        );
        for l in levels {
            if let Some(n) = l.checks {
                let _ = writeln!(
                    out,
                    "fencekit_level_checks_total{{{}}} {n}",
                    level_labels(l.row)
                );
            }
        }
    }
    family(
        &mut out,
        "fencekit_node_ok",
        "gauge",
        "1 when at least one fencing level of the node would work now, else 0.",
    );
    let mut nodes: Vec<(&str, bool)> = Vec::new();
    for l in levels {
        match nodes.iter_mut().find(|(n, _)| *n == l.row.node) {
            Some((_, ok)) => *ok |= l.row.ok,
            None => nodes.push((&l.row.node, l.row.ok)),
        }
    }
    for (node, ok) in &nodes {
        let _ = writeln!(
            out,
            "fencekit_node_ok{{node=\"{}\"}} {}",
            esc(node),
            u8::from(*ok)
        );
    }
    family(
        &mut out,
        "fencekit_level_drift",
        "gauge",
        "1 for each difference from the recorded baseline (drift and severity labels; level \"address\" is the node's own probe address).",
    );
    for d in drifts {
        let level = d.level.map_or("address".to_string(), |l| l.to_string());
        let method = d
            .level
            .and_then(|l| {
                levels
                    .iter()
                    .find(|s| s.row.node == d.node && s.row.level == l)
            })
            .map_or(String::new(), |s| s.row.method.clone());
        let _ = writeln!(
            out,
            "fencekit_level_drift{{node=\"{}\",level=\"{level}\",method=\"{}\",drift=\"{}\",severity=\"{}\"}} 1",
            esc(&d.node),
            esc(&method),
            d.drift.as_str(),
            d.severity.as_str()
        );
    }
    family(
        &mut out,
        "fencekit_check_timestamp_seconds",
        "gauge",
        "When this output was made (Unix time).",
    );
    let _ = writeln!(out, "fencekit_check_timestamp_seconds {}", num(unix(now)));
    out.push_str("# EOF\n");
    out
}

/// The doctor's findings as metric families (no `# EOF`): one
/// `fencekit_config_finding` sample per finding (labels id, severity,
/// subject), the count per severity (zeros included, so that an alert can
/// test for > 0), and each device check's result.
pub fn render_findings(r: &crate::doctor::Report) -> String {
    use crate::doctor::Severity;
    let mut out = String::with_capacity(256 + r.findings.len() * 120);
    family(
        &mut out,
        "fencekit_config_finding",
        "gauge",
        "1 for each finding of the fencing configuration doctor (check --pacemaker / --far), by id, severity and subject.",
    );
    for f in &r.findings {
        let _ = writeln!(
            out,
            "fencekit_config_finding{{source=\"{}\",id=\"{}\",severity=\"{}\",subject=\"{}\"}} 1",
            esc(&r.source),
            esc(f.id),
            f.severity.as_str(),
            esc(&f.subject)
        );
    }
    family(
        &mut out,
        "fencekit_config_findings",
        "gauge",
        "How many findings of each severity the configuration doctor reports.",
    );
    for s in [Severity::Broken, Severity::Weakened, Severity::Advice] {
        let n = r.findings.iter().filter(|f| f.severity == s).count();
        let _ = writeln!(
            out,
            "fencekit_config_findings{{source=\"{}\",severity=\"{}\"}} {n}",
            esc(&r.source),
            s.as_str()
        );
    }
    family(
        &mut out,
        "fencekit_config_device_ok",
        "gauge",
        "1 when the doctor's check of this device (with the parameters the cluster manager passes) passed, 0 when it failed; devices fencekit does not implement are left out.",
    );
    for d in r.devices.iter().filter(|d| d.result != "not-checked") {
        let _ = writeln!(
            out,
            "fencekit_config_device_ok{{source=\"{}\",device=\"{}\",node=\"{}\",agent=\"{}\"}} {}",
            esc(&r.source),
            esc(&d.device),
            esc(d.node.as_deref().unwrap_or("")),
            esc(&d.agent),
            u8::from(d.result == "ok")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::identity::ExpectedIdentity;
    use crate::fleet::drift::{DriftName, Severity};
    use crate::fleet::verify::facts::Facts;
    use std::time::Duration;

    fn row(node: &str, level: usize, ok: bool) -> CheckRow {
        CheckRow {
            node: node.into(),
            level,
            method: "ipmi".into(),
            endpoint: "ipmi://127.0.0.1".into(),
            ok,
            state: None,
            detail: None,
            error: None,
            identity: None,
            expect: ExpectedIdentity::default(),
            facts: Facts::default(),
            error_kind: None,
            elapsed_ms: 1234,
            workarounds: Vec::new(),
        }
    }

    #[test]
    fn the_exposition_names_levels_nodes_and_drifts() {
        let t = UNIX_EPOCH + Duration::from_millis(1_700_000_000_500);
        let rows = [
            row("n\"1", 1, true),
            row("n\"1", 2, false),
            row("n2", 1, false),
        ];
        let levels: Vec<LevelSample<'_>> = rows
            .iter()
            .map(|r| LevelSample {
                row: r,
                checked: t,
                last_success: r.ok.then_some(t),
                checks: None,
            })
            .collect();
        let drifts = [Drift {
            node: "n2".into(),
            level: Some(1),
            drift: DriftName::AuthFailed,
            severity: Severity::Broken,
            was: "accepted".into(),
            now: "rejected".into(),
        }];
        let text = render(&levels, &drifts, t, true);
        for line in [
            "# TYPE fencekit_level_ok gauge",
            "fencekit_level_ok{node=\"n\\\"1\",level=\"1\",method=\"ipmi\"} 1",
            "fencekit_level_ok{node=\"n\\\"1\",level=\"2\",method=\"ipmi\"} 0",
            "fencekit_level_check_seconds{node=\"n2\",level=\"1\",method=\"ipmi\"} 1.234",
            "fencekit_level_check_timestamp_seconds{node=\"n2\",level=\"1\",method=\"ipmi\"} 1700000000.500",
            "fencekit_node_ok{node=\"n\\\"1\"} 1",
            "fencekit_node_ok{node=\"n2\"} 0",
            "fencekit_level_drift{node=\"n2\",level=\"1\",method=\"ipmi\",drift=\"auth-failed\",severity=\"broken\"} 1",
            "fencekit_check_timestamp_seconds 1700000000.500",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
        assert_eq!(
            text.matches("fencekit_level_last_success_timestamp_seconds{")
                .count(),
            1
        );
        assert!(!text.contains("checks_total"));
        assert!(text.ends_with("# EOF\n"));
        assert!(!text.contains("\n\n"));
    }
}
