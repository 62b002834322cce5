//! `check --pacemaker` / `check --far`: the configuration doctor
//! ([`crate::doctor`]) run on the CIB or a FAR template, its report
//! rendered, and (with `--watch`) run again on a thread of its own.

use crate::cli::args::CheckArgs;
use crate::exit;
use std::sync::Arc;
use std::time::Duration;

/// How long `cibadmin -Q` (or `kubectl`) may take.
const TOOL_LIMIT: Duration = Duration::from_secs(30);

/// Runs `prog args…` with no stdin, killed after `limit`; its stdout, or
/// why it failed (its stderr's last line).
pub fn run_tool(prog: &str, args: &[&str], limit: Duration) -> Result<String, String> {
    use std::io::Read as _;
    let mut child = std::process::Command::new(prog)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {prog}: {e}"))?;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        if let Some(s) = out.as_mut() {
            let _ = s.take(64 << 20).read_to_end(&mut o);
        }
        if let Some(s) = err.as_mut() {
            let _ = s.take(1 << 20).read_to_end(&mut e);
        }
        (o, e)
    });
    let t0 = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if t0.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{prog} did not finish within {} s",
                    limit.as_secs()
                ));
            }
        }
    };
    let (o, e) = reader.join().unwrap_or_default();
    if !status.success() {
        let e = String::from_utf8_lossy(&e);
        let why = e.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!("{prog} failed ({status}): {why}"));
    }
    String::from_utf8(o).map_err(|_| format!("{prog}'s output is not UTF-8"))
}

/// SBD on this node: `--sbd-config` (sbd taken to run with it), else the
/// distribution's file when a process named `sbd` runs.
fn sbd(c: &CheckArgs) -> Result<Option<crate::doctor::pacemaker::Sbd>, String> {
    use crate::doctor::pacemaker::{parse_sbd, Sbd};
    if let Some(p) = &c.sbd_config {
        let text =
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        return Ok(Some(Sbd {
            watchdog_timeout: parse_sbd(&text),
            active: true,
            source: p.display().to_string(),
        }));
    }
    let running = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten().any(|e| {
                std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "sbd")
            })
        })
        .unwrap_or(false);
    for p in ["/etc/sysconfig/sbd", "/etc/default/sbd"] {
        if let Ok(text) = std::fs::read_to_string(p) {
            return Ok(Some(Sbd {
                watchdog_timeout: parse_sbd(&text),
                active: running,
                source: p.to_string(),
            }));
        }
    }
    Ok(None)
}

/// The doctor's report for `check --pacemaker` / `--far`; `Err` is an
/// input that could not be read.
pub fn diagnose(c: &CheckArgs) -> Result<crate::doctor::Report, String> {
    if let Some(path) = &c.far {
        return far_diagnose(c, path);
    }
    let xml = match &c.cib {
        Some(p) => {
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?
        }
        None => run_tool("cibadmin", &["-Q"], TOOL_LIMIT)?,
    };
    let cib = crate::doctor::pacemaker::Cib::parse(&xml)?;
    let opts = crate::doctor::pacemaker::Options {
        sbd: sbd(c)?,
        probe_devices: !c.no_device_check,
    };
    Ok(crate::doctor::pacemaker::diagnose(&cib, &opts))
}

/// The exit status of a doctor's report: 1 broken, 4 weakened, else 0.
pub fn doctor_exit(r: &crate::doctor::Report) -> i32 {
    use crate::doctor::Severity;
    match r.worst() {
        Some(Severity::Broken) => exit::FAILURE,
        Some(Severity::Weakened) => exit::DRIFT_WEAKENED,
        _ => exit::OK,
    }
}

/// `check --pacemaker` / `check --far`.
pub fn doctor(c: &CheckArgs) -> i32 {
    use crate::cli::args::Output;
    let report = match diagnose(c) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fencekit: {e}");
            return exit::USAGE;
        }
    };
    match c.action.output {
        Output::Json | Output::Jsonl => {
            crate::outln!(
                "{}",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            );
        }
        Output::Openmetrics => {
            let text = super::metrics::render_findings(&report);
            crate::outln!("{text}# EOF");
        }
        Output::Human => print_report(&report),
    }
    doctor_exit(&report)
}

fn print_report(r: &crate::doctor::Report) {
    for d in &r.devices {
        let node = d
            .node
            .as_deref()
            .map(|n| format!(" for {n}"))
            .unwrap_or_default();
        let detail = if d.detail.is_empty() {
            String::new()
        } else {
            format!(": {}", d.detail)
        };
        crate::outln!(
            "device {}{node} ({}): {}{detail}",
            d.device,
            d.agent,
            d.result
        );
    }
    for f in &r.findings {
        crate::outln!(
            "{:<8} {} [{}]: {}",
            f.severity.as_str(),
            f.id,
            f.subject,
            f.message
        );
        crate::outln!("         fix: {}", f.fix);
    }
    let count = |s| r.findings.iter().filter(|f| f.severity == s).count();
    use crate::doctor::Severity;
    crate::outln!(
        "{}: {} broken, {} weakened, {} advice; {} device check(s), {} failed",
        r.source,
        count(Severity::Broken),
        count(Severity::Weakened),
        count(Severity::Advice),
        r.devices.len(),
        r.devices.iter().filter(|d| d.result == "failed").count()
    );
}

/// `kubectl` (or else `oc`) with `--kubeconfig`, bounded.
fn kube(kubeconfig: &std::path::Path, args: &[&str]) -> Result<String, String> {
    let k = kubeconfig.to_string_lossy();
    let mut a = vec!["--kubeconfig", &k];
    a.extend(args);
    match run_tool("kubectl", &a, TOOL_LIMIT) {
        Err(e) if e.starts_with("cannot run kubectl") => run_tool("oc", &a, TOOL_LIMIT),
        other => other,
    }
}

/// `check --far`: the CR, its Secrets and the nodes, read; then the report.
fn far_diagnose(c: &CheckArgs, path: &std::path::Path) -> Result<crate::doctor::Report, String> {
    use crate::doctor::far;
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let docs = far::documents(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))?;
    let cr = docs
        .iter()
        .find(|d| {
            matches!(
                d["kind"].as_str(),
                Some("FenceAgentsRemediationTemplate" | "FenceAgentsRemediation")
            )
        })
        .ok_or_else(|| {
            format!(
                "{}: no FenceAgentsRemediationTemplate or FenceAgentsRemediation in it",
                path.display()
            )
        })?;
    let spec = far::Spec::from_object(cr).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut inputs = far::Inputs {
        remediation_timeout: c.remediation_timeout,
        probe_devices: !c.no_device_check,
        ..far::Inputs::default()
    };
    let mut all = docs.clone();
    for s in &c.secrets {
        all.extend(far::documents(&read(s)?).map_err(|e| format!("{}: {e}", s.display()))?);
    }
    // The kubeconfig the command line names (`--kubeconfig`), as any method
    // would get it.
    if let Some(k) = &crate::cli::plan::cli_options(&c.action).kubeconfig {
        let ns = spec.namespace.clone().unwrap_or_else(|| "default".into());
        let mut names: Vec<&String> = spec.node_secrets.values().collect();
        names.push(&spec.shared_secret);
        names.sort();
        names.dedup();
        for n in names {
            // A Secret that is not there is a finding, not an error.
            if let Ok(text) = kube(k, &["-n", &ns, "get", "secret", n, "-o", "json"]) {
                all.extend(far::documents(&text).unwrap_or_default());
            }
        }
        if c.nodes.is_none() {
            let text = kube(k, &["get", "nodes", "-o", "json"])?;
            inputs.nodes = Some(far::node_names(&text));
        }
    }
    for d in &all {
        if let Some((name, data)) = far::secret(d) {
            inputs.secrets.insert(name, data);
        }
    }
    if let Some(n) = &c.nodes {
        inputs.nodes = Some(far::node_names(&read(n)?));
    }
    Ok(far::diagnose(&spec, &inputs))
}

/// `check --watch` with `--pacemaker`/`--far`: the doctor again every
/// `interval` on a thread of its own (its device checks are bounded by the
/// agents' own step bounds, and share the per-device lock with the
/// watch's); one log line per finding that appears or clears. Returns the
/// latest findings as metric families, for `/metrics`; `None` without
/// `--pacemaker`/`--far`.
pub fn watch_doctor(c: &CheckArgs, interval: Duration) -> Option<Arc<std::sync::Mutex<String>>> {
    if !(c.pacemaker || c.cib.is_some() || c.far.is_some()) {
        return None;
    }
    let latest = Arc::new(std::sync::Mutex::new(String::new()));
    let (shared, c) = (latest.clone(), c.clone());
    std::thread::Builder::new()
        .name("doctor".into())
        .spawn(move || {
            let mut before: Vec<(String, String, String)> = Vec::new();
            loop {
                match diagnose(&c) {
                    Ok(r) => {
                        let now: Vec<(String, String, String)> = r
                            .findings
                            .iter()
                            .map(|f| {
                                (
                                    f.id.to_string(),
                                    f.subject.clone(),
                                    f.severity.as_str().into(),
                                )
                            })
                            .collect();
                        for (id, subject, sev) in now.iter().filter(|f| !before.contains(f)) {
                            eprintln!("fencekit: {}: finding {id} ({sev}) on {subject}", r.source);
                        }
                        for (id, subject, _) in before.iter().filter(|f| !now.contains(f)) {
                            eprintln!("fencekit: {}: finding {id} on {subject} cleared", r.source);
                        }
                        before = now;
                        let text = super::metrics::render_findings(&r);
                        *shared.lock().unwrap_or_else(|e| e.into_inner()) = text;
                    }
                    Err(e) => eprintln!("fencekit: configuration not checked: {e}"),
                }
                std::thread::sleep(interval);
            }
        })
        .ok()?;
    Some(latest)
}

/// `text` (an exposition ending in `# EOF`) with the doctor's families
/// added before its end.
pub fn with_findings(text: String, findings: Option<&std::sync::Mutex<String>>) -> String {
    let Some(f) = findings else {
        return text;
    };
    let f = f.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match text.strip_suffix("# EOF\n") {
        Some(head) => format!("{head}{f}# EOF\n"),
        None => format!("{text}{f}"),
    }
}
