//! Each device checked as the cluster manager would run it: through the
//! agent front itself ([`crate::agent::run::run_captured`]), in-process,
//! with the options in the form the manager passes (Pacemaker's fencer:
//! `key=value` lines on stdin; FAR: `--key=value` argv), first
//! `validate-all`, then `status` (which authenticates, reads the identity
//! pin when one is given, and reads the power state without changing it).
//! Every run is bounded by the agent's own step bounds; at most
//! [`PARALLEL`] run at once.

use super::{DeviceCheck, Finding, Severity};
use crate::agent::run::{run_captured, AgentEnv, EXIT_OK, EXIT_STATUS_OFF};

/// Most device checks at once.
pub const PARALLEL: usize = 8;

/// How the options reach the agent.
#[derive(Clone, Debug)]
pub enum Form {
    /// Pacemaker's fencer: `key=value` lines on stdin (without `action`).
    Stdin(Vec<(String, String)>),
    /// FAR: argv elements (without `--action`).
    Argv(Vec<String>),
}

/// One check to run.
#[derive(Clone, Debug)]
pub struct Probe {
    /// The device's name.
    pub device: String,
    /// The agent (`fence_ipmilan`, …).
    pub agent: String,
    /// The node the options are for.
    pub node: Option<String>,
    /// The options.
    pub form: Form,
}

impl Probe {
    fn run(&self, action: &str) -> crate::agent::run::Captured {
        let env = AgentEnv::plain();
        match &self.form {
            Form::Stdin(pairs) => {
                let mut text: String = pairs.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
                text.push_str(&format!("action={action}\n"));
                run_captured(&self.agent, &[], &text, &env)
            }
            Form::Argv(args) => {
                let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
                let act = format!("--action={action}");
                a.push(&act);
                run_captured(&self.agent, &a, "", &env)
            }
        }
    }
}

/// The agent's error lines (without time stamp and level), joined.
fn said(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split_once("ERROR: ").map(|(_, m)| m.trim()))
        .filter(|l| !l.is_empty() && !l.starts_with("Please use '-h'"))
        .collect();
    if lines.is_empty() {
        return stderr.lines().last().unwrap_or("").trim().to_string();
    }
    lines.join("; ")
}

/// Runs one probe: the device check's row and, when it failed, its finding.
pub fn check(p: &Probe) -> (DeviceCheck, Option<Finding>) {
    let subject = match &p.node {
        Some(n) => format!("{} for {n}", p.device),
        None => p.device.clone(),
    };
    let row = |result, detail: String| DeviceCheck {
        device: p.device.clone(),
        agent: p.agent.clone(),
        node: p.node.clone(),
        result,
        detail,
    };
    let v = p.run("validate-all");
    if v.code != EXIT_OK {
        let detail = said(&v.stderr);
        let f = Finding::new(
            "device-invalid-parameters",
            Severity::Broken,
            subject,
            format!(
                "{} refuses the parameters it would be given: {detail}",
                p.agent
            ),
            "correct the device's parameters (`fencekit agent AGENT --help` lists them)",
        );
        return (row("failed", detail), Some(f));
    }
    let s = p.run("status");
    if s.code == EXIT_OK || s.code == EXIT_STATUS_OFF {
        let detail = s.stdout.trim().to_string();
        return (row("ok", detail), None);
    }
    let detail = said(&s.stderr);
    let f = classify(&subject, &detail);
    (row("failed", detail), Some(f))
}

/// Runs the agent's `list` as the fencer does for `pcmk_host_check=dynamic-list`:
/// the names it prints (each line's plug and alias), or what it said when it failed.
pub fn list(p: &Probe) -> Result<Vec<String>, String> {
    let c = p.run("list");
    if c.code != EXIT_OK {
        return Err(said(&c.stderr));
    }
    Ok(list_names(&c.stdout))
}

/// The names in `list` output (`plug,alias` lines; blanks, commas and
/// semicolons separate).
pub fn list_names(out: &str) -> Vec<String> {
    out.split([',', ';', ' ', '\t', '\n', '\r'])
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// [`list`] for every probe, at most [`PARALLEL`] at once; results in probe order.
pub fn list_all(probes: &[Probe]) -> Vec<Result<Vec<String>, String>> {
    let mut out = Vec::with_capacity(probes.len());
    for chunk in probes.chunks(PARALLEL) {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk.iter().map(|p| s.spawn(move || list(p))).collect();
            for h in handles {
                out.push(
                    h.join()
                        .unwrap_or_else(|_| Err("the listing itself failed".into())),
                );
            }
        });
    }
    out
}

/// The finding for a device whose `status` failed, from what the agent said.
fn classify(subject: &str, detail: &str) -> Finding {
    let low = detail.to_lowercase();
    if low.contains("expect-uuid")
        || low.contains("expect-node-name")
        || low.contains("identity check")
    {
        Finding::new(
            "device-identity-mismatch",
            Severity::Broken,
            subject,
            format!("the device does not control the machine it is pinned to: {detail}"),
            "point the device at the node's own BMC, or correct expect_uuid",
        )
    } else if [
        "password",
        "user name",
        "credentials",
        "rejected the authentication",
        "snmpv3 user",
        "for user",
    ]
    .iter()
    .any(|w| low.contains(w))
    {
        Finding::new(
            "device-auth-failed",
            Severity::Broken,
            subject,
            format!("the device refuses the credentials: {detail}"),
            "set the user name and password the BMC accepts (the same on every node's copy)",
        )
    } else {
        Finding::new(
            "device-unreachable",
            Severity::Broken,
            subject,
            format!("the device does not answer as it should: {detail}"),
            "check the address, port and network path from every cluster node to the device",
        )
    }
}

/// Runs every probe, at most [`PARALLEL`] at once; results in probe order.
pub fn check_all(probes: &[Probe]) -> Vec<(DeviceCheck, Option<Finding>)> {
    let mut out = Vec::with_capacity(probes.len());
    for chunk in probes.chunks(PARALLEL) {
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk.iter().map(|p| s.spawn(move || check(p))).collect();
            handles
                .into_iter()
                .zip(chunk)
                .map(|(h, p)| {
                    h.join().unwrap_or_else(|_| {
                        (
                            DeviceCheck {
                                device: p.device.clone(),
                                agent: p.agent.clone(),
                                node: p.node.clone(),
                                result: "failed",
                                detail: "the check itself failed".into(),
                            },
                            None,
                        )
                    })
                })
                .collect()
        });
        out.extend(results);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_told_apart_by_what_the_agent_said() {
        let c = |d: &str| classify("x", d).id;
        assert_eq!(
            c("Connection timed out; cause: the port is unreachable (ICMP port unreachable) from \
               127.0.0.1:16231 to Get Channel Authentication Capabilities after 21 attempts in \
               20.0s (during cipher negotiation)"),
            "device-unreachable"
        );
        assert_eq!(
            c("Failed: Unable to obtain correct plug status or plug is not available; cause: the \
               BMC's RAKP 2 proof does not match our password: the password is wrong (during \
               session set-up)"),
            "device-auth-failed"
        );
        assert_eq!(
            c("cause: the BMC rejected the credentials (http 401 Unauthorized to GET /redfish/v1)"),
            "device-auth-failed"
        );
        assert_eq!(
            c("Failed: The device controls a different machine than --expect-uuid names; nothing \
               was powered"),
            "device-identity-mismatch"
        );
    }

    #[test]
    fn list_lines_give_plugs_and_aliases() {
        assert_eq!(
            list_names("/redfish/v1/Systems/1,node01\n2,\n\n"),
            vec!["/redfish/v1/Systems/1", "node01", "2"]
        );
        assert!(list_names("").is_empty());
    }

    #[test]
    fn only_error_lines_are_kept() {
        let e = "2026-01-01 00:00:00,000 WARNING: Parse error: x\n\
                 2026-01-01 00:00:00,001 ERROR: Connection timed out\n\
                 2026-01-01 00:00:00,001 ERROR: cause: no answer\n";
        assert_eq!(said(e), "Connection timed out; cause: no answer");
    }
}
