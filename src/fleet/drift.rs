//! Drift: how a fleet's fence paths differ from what they looked like when
//! they were recorded (`fencekit check --record`).
//!
//! The baseline is a plain TOML file, one `[node.NAME]` table per node
//! (when it was recorded, the node's probe address and whether it
//! answered) with one `[[node.NAME.level]]` entry per level that worked:
//! method, endpoint, the machine's identity and one section per driver
//! ([`Facts`]: `ipmi`, `redfish`, `ssh`, `snmp`; a new driver adds its
//! own). [`compare`] turns every difference into a named [`Drift`] with a
//! [`Severity`]; the names, what raises them and how bad they are is
//! [`DRIFTS`] (shown by `check --help` and docs/monitoring.md).
//!
//! Pure functions over [`CheckRow`]s and [`NodeProbe`]s: the reading is
//! `check`'s.

use super::verify::facts::{Facts, NodeProbe};
use super::verify::CheckRow;
use crate::engine::error::ErrorKind;
use crate::engine::identity::{Comparison as IdentityComparison, ExpectedIdentity};
use crate::engine::power::PowerState;
use crate::ipmi::config::Privilege;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The baseline format's version (the `version` key).
pub const VERSION: u32 = 1;

/// How bad a drift is (ordered: `Broken` is the worst).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Something differs: look at it. The level works as safely as before.
    Changed,
    /// The level would still work, less safely than recorded.
    Weakened,
    /// The level would not fence this node now (it fails, or it would
    /// fence another machine).
    Broken,
}

impl Severity {
    /// The word used in output and labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Changed => "changed",
            Severity::Weakened => "weakened",
            Severity::Broken => "broken",
        }
    }
}

/// The named drifts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftName {
    /// The device reports another machine, or no longer says which.
    IdentityChanged,
    /// IPMI: a weaker cipher suite than recorded, or none both accept.
    CipherDowngraded,
    /// The session's privilege is below operator (IPMI), or the account
    /// may no longer act (Redfish 403).
    PrivilegeBelowOperator,
    /// IPMI: another privilege than recorded, still operator or above.
    PrivilegeChanged,
    /// Redfish: a reset type recorded is no longer offered.
    ResetTypeGone,
    /// Redfish: another TLS certificate than recorded.
    CertificateChanged,
    /// SSH: another host key than recorded.
    HostKeyChanged,
    /// PDU: an outlet's name on the PDU changed.
    OutletRenamed,
    /// The device does not answer (or the node's own address stopped
    /// answering while its BMC reports it on).
    Unreachable,
    /// The device rejects the user name or password.
    AuthFailed,
}

impl DriftName {
    /// The name used in output, labels and docs.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftName::IdentityChanged => "identity-changed",
            DriftName::CipherDowngraded => "cipher-downgraded",
            DriftName::PrivilegeBelowOperator => "privilege-below-operator",
            DriftName::PrivilegeChanged => "privilege-changed",
            DriftName::ResetTypeGone => "reset-type-gone",
            DriftName::CertificateChanged => "certificate-changed",
            DriftName::HostKeyChanged => "host-key-changed",
            DriftName::OutletRenamed => "outlet-renamed",
            DriftName::Unreachable => "unreachable",
            DriftName::AuthFailed => "auth-failed",
        }
    }
}

/// Every drift, when it is raised and how bad it is: `(name, severity,
/// when)`, the table `check --help` and docs/monitoring.md show.
pub const DRIFTS: &[(&str, &str, &str)] = &[
    (
        "identity-changed",
        "broken",
        "the device reports another machine than recorded (a replaced mainboard, a swapped cable, a reused address)",
    ),
    (
        "identity-changed",
        "weakened",
        "the device no longer reports the identity recorded (broken when the level is pinned)",
    ),
    (
        "cipher-downgraded",
        "weakened",
        "IPMI: a weaker cipher suite than recorded (17 -> 3)",
    ),
    (
        "cipher-downgraded",
        "broken",
        "IPMI: no cipher suite both sides accept any more",
    ),
    (
        "privilege-below-operator",
        "broken",
        "the session's privilege is below operator or refused (IPMI), or the account may not act (Redfish 403)",
    ),
    (
        "privilege-changed",
        "changed",
        "IPMI: another privilege than recorded, still operator or above (administrator -> operator: fencing needs operator)",
    ),
    (
        "reset-type-gone",
        "broken",
        "Redfish: a recorded reset type is gone and power off or on has no safe one left",
    ),
    (
        "reset-type-gone",
        "weakened",
        "Redfish: the reset type off or on used is gone; another is used",
    ),
    (
        "reset-type-gone",
        "changed",
        "Redfish: another recorded reset type is gone",
    ),
    (
        "certificate-changed",
        "broken",
        "Redfish: another certificate than recorded, and it is not trusted",
    ),
    (
        "certificate-changed",
        "changed",
        "Redfish: another certificate than recorded, trusted (re-issued by a trusted CA)",
    ),
    (
        "host-key-changed",
        "broken",
        "SSH: another host key than recorded, and it is refused",
    ),
    (
        "host-key-changed",
        "changed",
        "SSH: another host key than recorded, accepted",
    ),
    (
        "outlet-renamed",
        "broken",
        "PDU: an outlet the inventory names is no longer found by that name",
    ),
    (
        "outlet-renamed",
        "changed",
        "PDU: an outlet given by number has another name than recorded",
    ),
    (
        "unreachable",
        "broken",
        "the device does not answer (stopped, moved, filtered)",
    ),
    (
        "unreachable",
        "weakened",
        "the node's own address stopped answering on its probe ports while its BMC reports it on (verify loses its independent witness)",
    ),
    (
        "auth-failed",
        "broken",
        "the device rejects the user name or password (rotated on one side only)",
    ),
];

/// `check --help`'s drift table, from [`DRIFTS`].
pub fn drift_table_text() -> String {
    let mut s = String::from("Drift against --baseline (name, severity: when):");
    for (name, sev, when) in DRIFTS {
        s.push_str(&format!("\n  {name}, {sev}: {when}"));
    }
    s
}

/// One difference from the baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// The node.
    pub node: String,
    /// The level (absent for the node's own probe address).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<usize>,
    /// Its name.
    pub drift: DriftName,
    /// How bad it is.
    pub severity: Severity,
    /// What was recorded.
    pub was: String,
    /// What is seen now.
    pub now: String,
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let place = match self.level {
            Some(l) => format!("{} level {l}", self.node),
            None => format!("{} (probe address)", self.node),
        };
        write!(
            f,
            "{place}: {} ({}): was {}, now {}",
            self.drift.as_str(),
            self.severity.as_str(),
            self.was,
            self.now
        )
    }
}

/// The recorded baseline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The format's version ([`VERSION`]).
    pub version: u32,
    /// Node name → what it looked like.
    #[serde(default)]
    pub node: BTreeMap<String, NodeRecord>,
}

/// One node as recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeRecord {
    /// When (UTC).
    pub recorded: String,
    /// The node's own address, probed on its probe ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// How it answered (`accepted`, `reset`, `unreachable`, `silent`, `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<String>,
    /// The levels that worked.
    #[serde(default)]
    pub level: Vec<LevelRecord>,
}

/// One working level as recorded (the driver's facts flattened into it:
/// `[node.NAME.level.ipmi]` and so on).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelRecord {
    /// Level number (1-based).
    pub level: usize,
    /// Driver.
    pub method: String,
    /// Endpoint (a different one means the inventory changed: no comparison).
    pub endpoint: String,
    /// The machine's UUID as the device reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Its serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Per driver.
    #[serde(flatten)]
    pub facts: Facts,
}

/// A baseline that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The file cannot be read.
    #[error("cannot read the baseline {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// It is not a baseline.
    #[error("the baseline {} is not valid: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    /// Another format version.
    #[error(
        "the baseline {} is format version {found}; this fencekit reads version {VERSION} \
         (record it again with check --record)",
        path.display()
    )]
    Version { path: PathBuf, found: u32 },
    /// It cannot be written.
    #[error("cannot write the baseline {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Baseline {
    /// An empty baseline of the current version.
    pub fn new() -> Self {
        Baseline {
            version: VERSION,
            node: BTreeMap::new(),
        }
    }

    /// Reads `path`.
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text).map_err(|e| match e {
            Parse::Toml(message) => BaselineError::Parse {
                path: path.to_path_buf(),
                message,
            },
            Parse::Version(found) => BaselineError::Version {
                path: path.to_path_buf(),
                found,
            },
        })
    }

    fn parse(text: &str) -> Result<Self, Parse> {
        let b: Baseline = toml::from_str(text).map_err(|e| Parse::Toml(e.message().to_string()))?;
        if b.version != VERSION {
            return Err(Parse::Version(b.version));
        }
        Ok(b)
    }

    /// The TOML text, with a header saying what it is and when it was written.
    pub fn to_text(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        format!(
            "# fencekit check baseline, written by `fencekit check --record` at {}.\n\
             # What each fencing level looked like while it worked: review it and keep it\n\
             # under version control. `fencekit check --baseline FILE` reports every\n\
             # difference as a named drift; after an intended change, record that node\n\
             # again (`fencekit check NODE --baseline FILE --record`).\n{body}",
            crate::time::utc_now()
        )
    }

    /// Writes `path` whole (a temporary file renamed over it).
    pub fn save(&self, path: &Path) -> Result<(), BaselineError> {
        let err = |source| BaselineError::Write {
            path: path.to_path_buf(),
            source,
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, self.to_text()).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
    }

    /// Records the levels of `rows` that work (replacing what was recorded
    /// for them; a level that fails now keeps its earlier record), and the
    /// probes. Returns why each level that would fail was not recorded.
    pub fn record(&mut self, rows: &[CheckRow], probes: &[NodeProbe]) -> Vec<String> {
        let now = crate::time::utc_now();
        let mut skipped = Vec::new();
        for r in rows {
            if r.method == "manual" {
                continue;
            }
            if !r.ok {
                skipped.push(format!(
                    "{} level {} would fail: {}",
                    r.node,
                    r.level,
                    r.error.as_deref().unwrap_or("?")
                ));
                continue;
            }
            let n = self.node.entry(r.node.clone()).or_default();
            n.recorded = now.clone();
            let rec = LevelRecord {
                level: r.level,
                method: r.method.clone(),
                endpoint: r.endpoint.clone(),
                uuid: r
                    .identity
                    .as_ref()
                    .and_then(|i| i.uuid.first().map(|f| f.uuid.clone())),
                serial: r.identity.as_ref().and_then(|i| i.serial.clone()),
                facts: r.facts.clone(),
            };
            n.level.retain(|l| l.level != r.level);
            n.level.push(rec);
            n.level.sort_by_key(|l| l.level);
        }
        for p in probes {
            let n = self.node.entry(p.node.clone()).or_default();
            if n.recorded.is_empty() {
                n.recorded = now.clone();
            }
            n.address = Some(p.address.clone());
            n.probe = Some(p.probe.clone());
        }
        skipped
    }
}

enum Parse {
    Toml(String),
    Version(u32),
}

/// What [`compare`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Every drift, in row order.
    pub drifts: Vec<Drift>,
    /// Levels whose method or endpoint differ from the record (the
    /// inventory changed): not compared, record them again.
    pub stale: Vec<String>,
}

fn rank_suite(s: u8) -> u8 {
    match s {
        17 => 2,
        3 => 1,
        _ => 0,
    }
}

fn describe_expected(e: &ExpectedIdentity) -> String {
    let mut parts = Vec::new();
    parts.extend(e.uuid.as_ref().map(|u| format!("uuid {u}")));
    parts.extend(e.serial.as_ref().map(|s| format!("serial {s}")));
    parts.join(", ")
}

fn text(o: &Option<String>) -> String {
    o.clone().unwrap_or_else(|| "none".into())
}

/// The drifts of one level against its record.
fn level_drifts(rec: &LevelRecord, r: &CheckRow) -> Vec<Drift> {
    let mut out = Vec::new();
    let mut push = |drift, severity, was: String, now: String| {
        out.push(Drift {
            node: r.node.clone(),
            level: Some(r.level),
            drift,
            severity,
            was,
            now,
        })
    };
    let failed = (!r.ok).then_some(r.error_kind).flatten();
    match failed {
        Some(ErrorKind::Timeout | ErrorKind::Unreachable) => {
            push(
                DriftName::Unreachable,
                Severity::Broken,
                "answering".into(),
                r.error.clone().unwrap_or_else(|| "no answer".into()),
            );
            return out;
        }
        Some(ErrorKind::PasswordInvalid | ErrorKind::UsernameInvalid) => {
            push(
                DriftName::AuthFailed,
                Severity::Broken,
                "accepted".into(),
                r.error.clone().unwrap_or_else(|| "rejected".into()),
            );
            return out;
        }
        _ => {}
    }

    // Identity.
    let recorded = ExpectedIdentity {
        uuid: rec.uuid.clone(),
        serial: rec.serial.clone(),
        names: Vec::new(),
    };
    if let (false, Some(found)) = (recorded.is_empty(), &r.identity) {
        let was = describe_expected(&recorded);
        match recorded.compare(found) {
            IdentityComparison::Match(_) => {}
            IdentityComparison::Mismatch(_) => push(
                DriftName::IdentityChanged,
                Severity::Broken,
                was,
                crate::fleet::identity::describe(found),
            ),
            IdentityComparison::Unreported(_) => {
                let pinned = failed == Some(ErrorKind::IdentityUnavailable);
                push(
                    DriftName::IdentityChanged,
                    if pinned {
                        Severity::Broken
                    } else {
                        Severity::Weakened
                    },
                    was,
                    crate::fleet::identity::describe(found),
                )
            }
        }
    }

    // IPMI: cipher suite and privilege.
    if let Some(was) = &rec.facts.ipmi {
        let now = r.facts.ipmi.clone().unwrap_or_default();
        if let Some(a) = was.cipher_suite {
            match now.cipher_suite {
                Some(b) if rank_suite(b) < rank_suite(a) => push(
                    DriftName::CipherDowngraded,
                    Severity::Weakened,
                    format!("cipher suite {a}"),
                    format!("cipher suite {b}"),
                ),
                None if failed == Some(ErrorKind::CipherUnsupported) => push(
                    DriftName::CipherDowngraded,
                    Severity::Broken,
                    format!("cipher suite {a}"),
                    r.error.clone().unwrap_or_default(),
                ),
                _ => {}
            }
        }
        let parse = |p: &Option<String>| p.as_deref().and_then(|p| p.parse::<Privilege>().ok());
        let (p0, p1) = (parse(&was.privilege), parse(&now.privilege));
        if failed == Some(ErrorKind::PrivilegeNotObtained)
            || p1.is_some_and(|p| p < Privilege::Operator)
        {
            push(
                DriftName::PrivilegeBelowOperator,
                Severity::Broken,
                text(&was.privilege),
                match &now.privilege {
                    Some(p) if p1.is_some_and(|p| p < Privilege::Operator) => p.clone(),
                    _ => r.error.clone().unwrap_or_else(|| "refused".into()),
                },
            );
        } else if let (Some(a), Some(b)) = (p0, p1) {
            if a != b {
                push(
                    DriftName::PrivilegeChanged,
                    Severity::Changed,
                    a.as_str().into(),
                    b.as_str().into(),
                );
            }
        }
    } else if failed == Some(ErrorKind::PrivilegeNotObtained) {
        push(
            DriftName::PrivilegeBelowOperator,
            Severity::Broken,
            "allowed".into(),
            r.error.clone().unwrap_or_default(),
        );
    }

    // Redfish: reset types and certificate.
    if let Some(was) = &rec.facts.redfish {
        let now = r.facts.redfish.clone().unwrap_or_default();
        if let (Some(before), Some(after)) = (&was.reset_types, &now.reset_types) {
            let gone: Vec<&String> = before.iter().filter(|t| !after.contains(t)).collect();
            if !gone.is_empty() {
                let severity = if failed == Some(ErrorKind::Unsupported)
                    && (now.reset_off.is_none() || now.reset_on.is_none())
                {
                    Severity::Broken
                } else if was.reset_off != now.reset_off || was.reset_on != now.reset_on {
                    Severity::Weakened
                } else {
                    Severity::Changed
                };
                push(
                    DriftName::ResetTypeGone,
                    severity,
                    before.join(", "),
                    format!(
                        "{} (gone: {})",
                        after.join(", "),
                        gone.iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
        if let (Some(a), Some(b)) = (&was.certificate, &now.certificate) {
            if a != b {
                // Refused at the handshake: the system was never read.
                let refused = failed.is_some() && now.auth.is_none();
                push(
                    DriftName::CertificateChanged,
                    if refused {
                        Severity::Broken
                    } else {
                        Severity::Changed
                    },
                    a.clone(),
                    b.clone(),
                );
            }
        }
    }

    // SSH: host key.
    if let Some(a) = rec.facts.ssh.as_ref().and_then(|s| s.host_key.as_ref()) {
        if let Some(b) = r.facts.ssh.as_ref().and_then(|s| s.host_key.as_ref()) {
            if a != b {
                push(
                    DriftName::HostKeyChanged,
                    if failed.is_some() {
                        Severity::Broken
                    } else {
                        Severity::Changed
                    },
                    a.clone(),
                    b.clone(),
                );
            }
        }
    }

    // PDU: outlet names.
    if let (Some(was), Some(now)) = (&rec.facts.snmp, &r.facts.snmp) {
        for (outlet, name) in &was.outlets {
            let current = now.outlets.get(outlet);
            if current != Some(name) {
                push(
                    DriftName::OutletRenamed,
                    if failed == Some(ErrorKind::Config) {
                        Severity::Broken
                    } else {
                        Severity::Changed
                    },
                    format!("{outlet} named {name}"),
                    match current {
                        Some(c) => format!("{outlet} named {c}"),
                        None => format!("{outlet} not found"),
                    },
                );
            }
        }
    }
    out
}

/// Every difference between `rows` (and `probes`) and `base`. Levels and
/// nodes that were not recorded are not compared.
pub fn compare(base: &Baseline, rows: &[CheckRow], probes: &[NodeProbe]) -> Comparison {
    let mut c = Comparison::default();
    for r in rows {
        let Some(rec) = base
            .node
            .get(&r.node)
            .and_then(|n| n.level.iter().find(|l| l.level == r.level))
        else {
            continue;
        };
        if rec.method != r.method || rec.endpoint != r.endpoint {
            c.stale.push(format!(
                "{} level {}: recorded as {} {}, now {} {}",
                r.node, r.level, rec.method, rec.endpoint, r.method, r.endpoint
            ));
            continue;
        }
        c.drifts.extend(level_drifts(rec, r));
    }
    for p in probes {
        let Some(n) = base.node.get(&p.node) else {
            continue;
        };
        let answered = matches!(n.probe.as_deref(), Some("accepted" | "reset"));
        // Silence is what off looks like: only a node its BMC reports on
        // has lost its witness.
        let on = rows
            .iter()
            .any(|r| r.node == p.node && r.state == Some(PowerState::On));
        if answered && !p.answers() && on {
            c.drifts.push(Drift {
                node: p.node.clone(),
                level: None,
                drift: DriftName::Unreachable,
                severity: Severity::Weakened,
                was: format!("{} {}", p.address, n.probe.as_deref().unwrap_or("?")),
                now: format!("{} {}", p.address, p.probe),
            });
        }
    }
    c
}

/// Marks every level with a broken drift as one that would not work (an
/// unpinned level that reaches another machine "works", but would fence
/// the wrong one).
pub fn mark_broken(rows: &mut [CheckRow], drifts: &[Drift]) {
    for d in drifts.iter().filter(|d| d.severity == Severity::Broken) {
        if let Some(r) = rows
            .iter_mut()
            .find(|r| r.node == d.node && Some(r.level) == d.level)
        {
            if r.ok {
                r.ok = false;
                r.error = Some(format!(
                    "{} since the baseline: was {}, now {}",
                    d.drift.as_str(),
                    d.was,
                    d.now
                ));
            }
        }
    }
}

/// The worst severity among `drifts`.
pub fn worst(drifts: &[Drift]) -> Option<Severity> {
    drifts.iter().map(|d| d.severity).max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::identity::{Identity, UuidForm};
    use crate::fleet::verify::facts::{IpmiFacts, RedfishFacts, SnmpFacts};

    const UUID: &str = "4c414230-0000-4001-8000-fe0000000001";

    fn row(level: usize, method: &str, facts: Facts) -> CheckRow {
        CheckRow {
            node: "node01".into(),
            level,
            method: method.into(),
            endpoint: format!("{method}://127.0.0.1:16231"),
            ok: true,
            state: Some(PowerState::On),
            detail: None,
            error: None,
            identity: Some(Identity {
                names: Vec::new(),
                uuid: vec![UuidForm {
                    uuid: UUID.into(),
                    encoding: "smbios",
                }],
                serial: (method == "redfish").then(|| "LAB00001".into()),
            }),
            expect: ExpectedIdentity::default(),
            facts,
            error_kind: None,
            elapsed_ms: 3,
            workarounds: Vec::new(),
        }
    }

    fn ipmi(suite: u8, privilege: &str) -> Facts {
        Facts {
            ipmi: Some(IpmiFacts {
                cipher_suite: Some(suite),
                privilege: Some(privilege.into()),
            }),
            ..Facts::default()
        }
    }

    fn redfish(cert: &str, types: &[&str]) -> Facts {
        Facts {
            redfish: Some(RedfishFacts {
                auth: Some("basic".into()),
                certificate: Some(cert.into()),
                reset_types: Some(types.iter().map(|t| t.to_string()).collect()),
                reset_off: Some("ForceOff".into()),
                reset_on: Some("On".into()),
            }),
            ..Facts::default()
        }
    }

    fn fleet() -> Vec<CheckRow> {
        let mut pdu = row(
            3,
            "snmp",
            Facts {
                snmp: Some(SnmpFacts {
                    outlets: [("A:1".to_string(), "node01".to_string())].into(),
                }),
                ..Facts::default()
            },
        );
        pdu.identity = None;
        vec![
            row(1, "ipmi", ipmi(17, "administrator")),
            row(
                2,
                "redfish",
                redfish("AB:CD", &["On", "ForceOff", "ForceRestart"]),
            ),
            pdu,
        ]
    }

    fn probe(word: &str) -> NodeProbe {
        NodeProbe {
            node: "node01".into(),
            address: "127.1.0.1".into(),
            probe: word.into(),
        }
    }

    fn recorded() -> Baseline {
        let mut b = Baseline::new();
        assert!(b.record(&fleet(), &[probe("accepted")]).is_empty());
        b
    }

    #[test]
    fn a_baseline_is_reviewable_toml_that_reads_back() {
        let b = recorded();
        let text = b.to_text();
        assert!(text.starts_with("# fencekit check baseline"), "{text}");
        for line in [
            "version = 1",
            "[node.node01]",
            "probe = \"accepted\"",
            "[[node.node01.level]]",
            "[node.node01.level.ipmi]",
            "cipher_suite = 17",
            "privilege = \"administrator\"",
            "[node.node01.level.redfish]",
            "certificate = \"AB:CD\"",
            "[node.node01.level.snmp.outlets]",
            "\"A:1\" = \"node01\"",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "no line {line:?} in\n{text}"
            );
        }
        let back = Baseline::parse(&text).map_err(|_| ()).unwrap();
        assert_eq!(back, b);
        assert!(matches!(
            Baseline::parse("version = 2\n"),
            Err(Parse::Version(2))
        ));
        assert!(matches!(
            Baseline::parse("version = 1\nbogus = 1\n"),
            Err(Parse::Toml(_))
        ));
    }

    #[test]
    fn an_unchanged_fleet_has_no_drift() {
        let c = compare(&recorded(), &fleet(), &[probe("accepted")]);
        assert_eq!(c, Comparison::default());
        // Silence while the node is off is not a drift either.
        let mut off = fleet();
        off.iter_mut().for_each(|r| r.state = Some(PowerState::Off));
        assert!(compare(&recorded(), &off, &[probe("silent")])
            .drifts
            .is_empty());
    }

    fn one(rows: &[CheckRow], probes: &[NodeProbe]) -> (DriftName, Severity) {
        let c = compare(&recorded(), rows, probes);
        assert_eq!(c.drifts.len(), 1, "{:#?}", c.drifts);
        (c.drifts[0].drift, c.drifts[0].severity)
    }

    fn failing(mut r: CheckRow, kind: ErrorKind) -> CheckRow {
        r.ok = false;
        r.error_kind = Some(kind);
        r.error = Some(format!("{kind:?}"));
        r
    }

    #[test]
    fn each_difference_has_its_name_and_severity() {
        use DriftName as N;
        use Severity as S;
        let p = [probe("accepted")];
        let base = fleet();
        let with = |i: usize, r: CheckRow| {
            let mut v = base.clone();
            v[i] = r;
            v
        };
        // IPMI
        let r = with(0, row(1, "ipmi", ipmi(3, "administrator")));
        assert_eq!(one(&r, &p), (N::CipherDowngraded, S::Weakened));
        let r = with(
            0,
            failing(
                row(1, "ipmi", Facts::default()),
                ErrorKind::CipherUnsupported,
            ),
        );
        assert_eq!(one(&r, &p), (N::CipherDowngraded, S::Broken));
        let r = with(0, row(1, "ipmi", ipmi(17, "operator")));
        assert_eq!(one(&r, &p), (N::PrivilegeChanged, S::Changed));
        let r = with(
            0,
            failing(
                row(1, "ipmi", ipmi(17, "user")),
                ErrorKind::PrivilegeNotObtained,
            ),
        );
        assert_eq!(one(&r, &p), (N::PrivilegeBelowOperator, S::Broken));
        let r = with(
            0,
            failing(row(1, "ipmi", Facts::default()), ErrorKind::PasswordInvalid),
        );
        assert_eq!(one(&r, &p), (N::AuthFailed, S::Broken));
        let r = with(
            0,
            failing(row(1, "ipmi", Facts::default()), ErrorKind::Timeout),
        );
        assert_eq!(one(&r, &p), (N::Unreachable, S::Broken));
        let mut other = row(1, "ipmi", ipmi(17, "administrator"));
        other.identity.as_mut().unwrap().uuid[0].uuid =
            "4c414230-0000-4002-8000-fe0000000002".into();
        assert_eq!(one(&with(0, other), &p), (N::IdentityChanged, S::Broken));
        let mut silent = row(1, "ipmi", ipmi(17, "administrator"));
        silent.identity = Some(Identity::default());
        assert_eq!(
            one(&with(0, silent.clone()), &p),
            (N::IdentityChanged, S::Weakened)
        );
        let pinned = failing(silent, ErrorKind::IdentityUnavailable);
        assert_eq!(one(&with(0, pinned), &p), (N::IdentityChanged, S::Broken));
        // Redfish
        let r = with(
            1,
            row(
                2,
                "redfish",
                redfish("EF:01", &["On", "ForceOff", "ForceRestart"]),
            ),
        );
        assert_eq!(one(&r, &p), (N::CertificateChanged, S::Changed));
        let mut refused = failing(
            row(2, "redfish", redfish("EF:01", &[])),
            ErrorKind::Protocol,
        );
        refused.facts.redfish = Some(RedfishFacts {
            certificate: Some("EF:01".into()),
            ..RedfishFacts::default()
        });
        assert_eq!(
            one(&with(1, refused), &p),
            (N::CertificateChanged, S::Broken)
        );
        let r = with(1, row(2, "redfish", redfish("AB:CD", &["On", "ForceOff"])));
        assert_eq!(one(&r, &p), (N::ResetTypeGone, S::Changed));
        let mut f = redfish("AB:CD", &["On", "GracefulShutdown", "ForceRestart"]);
        f.redfish.as_mut().unwrap().reset_off = Some("GracefulShutdown".into());
        assert_eq!(
            one(&with(1, row(2, "redfish", f)), &p),
            (N::ResetTypeGone, S::Weakened)
        );
        let mut f = redfish("AB:CD", &["On", "ForceRestart"]);
        f.redfish.as_mut().unwrap().reset_off = None;
        let r = failing(row(2, "redfish", f), ErrorKind::Unsupported);
        assert_eq!(one(&with(1, r), &p), (N::ResetTypeGone, S::Broken));
        // PDU
        let mut f = fleet()[2].facts.clone();
        f.snmp
            .as_mut()
            .unwrap()
            .outlets
            .insert("A:1".into(), "spare".into());
        let mut r = fleet()[2].clone();
        r.facts = f;
        assert_eq!(one(&with(2, r.clone()), &p), (N::OutletRenamed, S::Changed));
        r.facts.snmp.as_mut().unwrap().outlets.clear();
        let r = failing(r, ErrorKind::Config);
        assert_eq!(one(&with(2, r), &p), (N::OutletRenamed, S::Broken));
        // The node's own address.
        let d = compare(&recorded(), &base, &[probe("silent")]).drifts;
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].drift, d[0].severity, d[0].level),
            (N::Unreachable, S::Weakened, None)
        );
    }

    #[test]
    fn another_endpoint_is_not_compared_and_broken_drifts_fail_the_level() {
        let mut rows = fleet();
        rows[0].endpoint = "ipmi://127.0.0.9:623".into();
        rows[0].facts = ipmi(3, "administrator");
        let c = compare(&recorded(), &rows, &[]);
        assert!(c.drifts.is_empty());
        assert_eq!(c.stale.len(), 1, "{:?}", c.stale);

        let mut rows = fleet();
        rows[0].identity.as_mut().unwrap().uuid[0].uuid =
            "4c414230-0000-4002-8000-fe0000000002".into();
        let c = compare(&recorded(), &rows, &[]);
        assert!(rows[0].ok);
        mark_broken(&mut rows, &c.drifts);
        assert!(!rows[0].ok);
        assert!(rows[0]
            .error
            .as_deref()
            .unwrap()
            .starts_with("identity-changed since the baseline"));
        assert_eq!(worst(&c.drifts), Some(Severity::Broken));
        assert_eq!(c.drifts[0].to_string(), format!(
            "node01 level 1: identity-changed (broken): was uuid {UUID}, now uuid 4c414230-0000-4002-8000-fe0000000002 (smbios)"
        ));
    }

    #[test]
    fn a_failing_level_keeps_its_earlier_record() {
        let mut b = recorded();
        let mut rows = fleet();
        rows[0] = failing(rows[0].clone(), ErrorKind::Timeout);
        let skipped = b.record(&rows, &[]);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].starts_with("node01 level 1 would fail"));
        assert_eq!(b.node["node01"].level[0].facts, ipmi(17, "administrator"));
        assert_eq!(b.node["node01"].level.len(), 3);
    }
}
