//! The audit trail: one JSON line per completed target action.
//!
//! Each record is written with a single `write` on a file opened for
//! append, then `fsync`ed, so concurrent fencekit processes never interleave
//! or lose lines. Records carry no secret. Auditing is optional: nothing
//! requires a writable filesystem unless `--audit` / `FENCEKIT_AUDIT` asks.

use super::result::TargetResult;
use crate::engine::event::Event;
use crate::time::utc_now;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An audit file.
#[derive(Clone, Debug)]
pub struct Audit {
    path: PathBuf,
}

/// What one record says about the evidence behind its outcome.
#[derive(Serialize)]
struct Evidence<'a> {
    reads: usize,
    last_state: Option<&'a str>,
    commands: Vec<String>,
    session: Option<&'a str>,
    datagrams_sent: u32,
    retransmits: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    acknowledged_by: Option<String>,
    /// The identity check before any power command, when one was expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    identity: Option<IdentityEvidence<'a>>,
    /// `--verify`: what the verification found.
    #[serde(skip_serializing_if = "Option::is_none")]
    verify: Option<VerifySummary<'a>>,
    /// The device's non-compliance that was tolerated, and the named
    /// workarounds in use (IPMI: docs/ipmi.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    workarounds: Vec<WorkaroundEvidence<'a>>,
}

/// One tolerance or workaround, as recorded.
#[derive(Serialize)]
struct WorkaroundEvidence<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    detail: &'a str,
    weakens_security: bool,
}

/// What the identity check compared, as recorded.
#[derive(Serialize)]
struct IdentityEvidence<'a> {
    expected: &'a crate::engine::identity::ExpectedIdentity,
    found: &'a crate::engine::identity::Identity,
    matched: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    encoding: Option<&'static str>,
}

/// What a verification found, for the record: the verdict, why, whether
/// BMC-only proof was accepted, and what the independent witnesses saw.
#[derive(Serialize)]
struct VerifySummary<'a> {
    expect: crate::engine::power::PowerState,
    verdict: crate::fleet::verify::Verdict,
    reason: &'a str,
    bmc_only_accepted: bool,
    independent: Vec<String>,
}

impl<'a> VerifySummary<'a> {
    fn of(r: &'a crate::fleet::verify::VerifyReport) -> Self {
        VerifySummary {
            expect: r.expect,
            verdict: r.verdict,
            reason: &r.reason,
            bmc_only_accepted: r.bmc_only_accepted,
            independent: r
                .evidence
                .iter()
                .filter(|e| e.independent())
                .map(|e| format!("{}: {}", e.source(), e.observation))
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct Record<'a> {
    time: String,
    user: String,
    host: String,
    pid: u32,
    version: &'static str,
    node: &'a str,
    action: &'a str,
    method: Option<&'a str>,
    endpoint: Option<&'a str>,
    level: Option<usize>,
    ok: bool,
    outcome: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    action_outcome: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<&'a str>,
    state: Option<&'a str>,
    error_kind: Option<&'a str>,
    error: Option<&'a str>,
    evidence: Evidence<'a>,
    duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    crashdump: Option<&'a super::sequence::CrashdumpReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hook: Option<&'a super::hook::HookReport>,
}

/// The local user, for records.
pub fn local_user() -> String {
    for var in ["USER", "LOGNAME"] {
        if let Ok(u) = std::env::var(var) {
            if !u.is_empty() {
                return u;
            }
        }
    }
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| format!("uid {u}")))
        })
        .unwrap_or_else(|| "unknown".into())
}

/// This host's name, for records.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Why an audit record could not be kept. The texts are what users read.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file cannot be opened for appending.
    #[error("cannot open the audit file {}: {source}", path.display())]
    Open {
        /// The audit file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The record cannot be encoded (not expected: records are plain data).
    #[error("cannot encode an audit record: {0}")]
    Encode(serde_json::Error),
    /// The line cannot be written or synced.
    #[error("cannot write the audit file {}: {source}", path.display())]
    Write {
        /// The audit file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Audit {
    /// An audit trail at `path`; checks now that it can be appended to.
    pub fn open(path: &Path) -> Result<Audit, AuditError> {
        crate::private::open_append(path).map_err(|source| AuditError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Audit {
            path: path.to_path_buf(),
        })
    }

    /// Appends one record for a finished target action.
    pub fn record(&self, r: &TargetResult) -> Result<(), AuditError> {
        let commands = r
            .timeline
            .iter()
            .filter_map(|s| match &s.event {
                Event::CommandSent { command } => Some(format!("{command}")),
                Event::CommandDeclined { command, .. } => Some(format!("{command} (declined)")),
                Event::CommandUnanswered { command, .. } => {
                    Some(format!("{command} (no answer: outcome unknown)"))
                }
                _ => None,
            })
            .collect();
        let reads = r
            .timeline
            .iter()
            .filter(|s| matches!(s.event, Event::StateObserved { .. }))
            .count();
        let rec = Record {
            time: utc_now(),
            user: local_user(),
            host: host_name(),
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION"),
            node: &r.node,
            action: r.action.as_str(),
            method: r.method.as_deref(),
            endpoint: r.endpoint.as_deref(),
            level: r.level,
            ok: r.ok,
            outcome: r.outcome.map(|o| o.as_str()),
            action_outcome: r.action_outcome.map(|o| o.as_str()),
            verdict: r.verdict.map(|v| v.as_str()),
            state: r.state.map(|s| s.as_str()),
            error_kind: r.error_kind.map(|k| k.as_str()),
            error: r.error.as_deref(),
            evidence: Evidence {
                reads,
                last_state: r.state.map(|s| s.as_str()),
                commands,
                session: r.session.as_deref(),
                datagrams_sent: r.traffic.sent,
                retransmits: r.traffic.retransmits,
                acknowledged_by: r.timeline.iter().find_map(|s| match &s.event {
                    Event::Acknowledged { by, at } => Some(format!("{by} at {at}")),
                    _ => None,
                }),
                identity: r.timeline.iter().find_map(|s| match &s.event {
                    Event::Identity {
                        expected,
                        found,
                        matched,
                        encoding,
                    } => Some(IdentityEvidence {
                        expected,
                        found,
                        matched: *matched,
                        encoding: *encoding,
                    }),
                    _ => None,
                }),
                verify: r.verify.as_ref().map(VerifySummary::of),
                workarounds: r
                    .timeline
                    .iter()
                    .filter_map(|s| match &s.event {
                        Event::Workaround {
                            name,
                            detail,
                            weakens_security,
                        } => Some(WorkaroundEvidence {
                            name: name.as_deref(),
                            detail,
                            weakens_security: *weakens_security,
                        }),
                        _ => None,
                    })
                    .collect(),
            },
            duration_ms: r.elapsed_ms,
            crashdump: r.crashdump.as_ref(),
            hook: r.hook.as_ref(),
        };
        self.append(&rec)
    }

    /// Appends a record of an operator's safety decision that is not a
    /// target action (a hold placed or released, the mass-fencing guard
    /// refusing or being forced): the common header (time, user, host,
    /// pid, version), then `event`'s own fields.
    pub fn record_event(&self, event: &impl Serialize) -> Result<(), AuditError> {
        #[derive(Serialize)]
        struct Rec<'a, E: Serialize> {
            time: String,
            user: String,
            host: String,
            pid: u32,
            version: &'static str,
            #[serde(flatten)]
            event: &'a E,
        }
        self.append(&Rec {
            time: utc_now(),
            user: local_user(),
            host: host_name(),
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION"),
            event,
        })
    }
}

#[derive(Serialize)]
struct VerifyRecord<'a> {
    time: String,
    user: String,
    host: String,
    pid: u32,
    version: &'static str,
    node: &'a str,
    action: &'static str,
    expect: crate::engine::power::PowerState,
    ok: bool,
    verdict: crate::fleet::verify::Verdict,
    reason: &'a str,
    bmc_only_accepted: bool,
    evidence: usize,
    independent: Vec<String>,
    drifted_checks: Vec<&'a str>,
    duration_ms: u64,
}

impl Audit {
    /// Appends one record for a finished verification.
    pub fn record_verify(&self, r: &crate::fleet::verify::VerifyReport) -> Result<(), AuditError> {
        let rec = VerifyRecord {
            time: utc_now(),
            user: local_user(),
            host: host_name(),
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION"),
            node: &r.node,
            action: "verify",
            expect: r.expect,
            ok: r.exit_code() == 0,
            verdict: r.verdict,
            reason: &r.reason,
            bmc_only_accepted: r.bmc_only_accepted,
            evidence: r.evidence.len(),
            independent: VerifySummary::of(r).independent,
            drifted_checks: r
                .checks
                .iter()
                .filter(|c| c.drift)
                .map(|c| c.name.as_str())
                .collect(),
            duration_ms: r.elapsed_ms,
        };
        self.append(&rec)
    }

    /// One write of one line on a file opened for append, then fsync.
    fn append(&self, rec: &impl Serialize) -> Result<(), AuditError> {
        let mut line = serde_json::to_vec(rec).map_err(AuditError::Encode)?;
        line.push(b'\n');
        let mut f = crate::private::open_append(&self.path).map_err(|source| AuditError::Open {
            path: self.path.clone(),
            source,
        })?;
        f.write_all(&line)
            .and_then(|_| f.sync_data())
            .map_err(|source| AuditError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_format_shape() {
        let t = utc_now();
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z') && t.as_bytes()[10] == b'T');
    }

    #[test]
    fn an_unwritable_audit_file_is_named() {
        let e = Audit::open(Path::new("/nonexistent-fencekit-dir/audit.jsonl")).unwrap_err();
        assert!(matches!(e, AuditError::Open { .. }));
        assert_eq!(
            e.to_string(),
            "cannot open the audit file /nonexistent-fencekit-dir/audit.jsonl: No such file or \
             directory (os error 2)"
        );
    }
}
