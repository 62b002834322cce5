//! Drift: how a fleet's fence paths differ from what they looked like when
//! they were recorded (`fencekit check --record`).
//!
//! The baseline is a plain TOML file, one `[node.NAME]` table per node
//! (when it was recorded, the node's probe address and whether it
//! answered) with one `[[node.NAME.level]]` entry per level that worked:
//! method, endpoint, the machine's identity and one section per platform
//! ([`Facts`], `[node.NAME.level.PLATFORM]`, declared by the platform:
//! [`crate::platform::facts`]). [`compare`] turns every difference into a
//! named [`Drift`] with a [`Severity`]; the names, what raises them and how
//! bad they are is [`drifts`] (shown by `check --help` and
//! docs/monitoring.md), each platform's rules adding its own.
//!
//! Pure functions over [`CheckRow`]s and [`NodeProbe`]s: the reading is
//! `check`'s.

use super::verify::facts::{Facts, NodeProbe};
use super::verify::CheckRow;
use crate::engine::error::ErrorKind;
use crate::engine::identity::{Comparison as IdentityComparison, ExpectedIdentity};
use crate::engine::power::PowerState;
use crate::method::platforms::PLATFORMS;
pub use crate::platform::facts::{DriftName, Severity};
use crate::platform::facts::{DriftRow, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The baseline format's version (the `version` key).
pub const VERSION: u32 = 1;

/// The drifts every level can show, before the platforms' own rows.
const FIRST: &[DriftRow] = &[
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
];

/// The drifts every level can show, after the platforms' own rows.
const LAST: &[DriftRow] = &[
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

/// Every drift, when it is raised and how bad it is: `(name, severity,
/// when)`, the table `check --help` and docs/monitoring.md show (each
/// platform's rows come from its
/// [`crate::platform::facts::FactRules::drift_rows`], in the
/// registry's order).
pub fn drifts() -> Vec<DriftRow> {
    let own = PLATFORMS
        .iter()
        .filter_map(|p| p.facts())
        .flat_map(|f| f.drift_rows().iter());
    FIRST.iter().chain(own).chain(LAST).copied().collect()
}

/// `check --help`'s drift table, from [`drifts`].
pub fn drift_table_text() -> String {
    let mut s = String::from("Drift against --baseline (name, severity: when):");
    for (name, sev, when) in drifts() {
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

/// One working level as recorded (the platform's facts flattened into it:
/// `[node.NAME.level.PLATFORM]`).
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
    /// Per platform.
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
        let mut b = b;
        // Written back as recorded: each platform's keys in its order.
        for level in b.node.values_mut().flat_map(|n| n.level.iter_mut()) {
            for (name, section) in level.facts.sections_mut() {
                if let Some(rules) = crate::method::platforms::by_name(name).and_then(|p| p.facts())
                {
                    section.order_by(rules.keys());
                }
            }
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

fn describe_expected(e: &ExpectedIdentity) -> String {
    let mut parts = Vec::new();
    parts.extend(e.uuid.as_ref().map(|u| format!("uuid {u}")));
    parts.extend(e.serial.as_ref().map(|s| format!("serial {s}")));
    parts.join(", ")
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

    // The platforms' own facts; a refused privilege is named even where
    // no platform's rules say more.
    let outcome = Outcome {
        failed,
        error: r.error.as_deref(),
    };
    let mut own = Vec::new();
    for (name, was) in rec.facts.sections() {
        let Some(rules) = crate::method::platforms::by_name(name).and_then(|p| p.facts()) else {
            continue;
        };
        own.extend(rules.drifts(was, r.facts.section(name), &outcome));
    }
    if failed == Some(ErrorKind::PrivilegeNotObtained)
        && !own
            .iter()
            .any(|d| d.drift == DriftName::PrivilegeBelowOperator)
    {
        push(
            DriftName::PrivilegeBelowOperator,
            Severity::Broken,
            "allowed".into(),
            r.error.clone().unwrap_or_default(),
        );
    }
    for d in own {
        push(d.drift, d.severity, d.was, d.now);
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
    use crate::platform::facts::{Section, Value};

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

    fn text(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn one_section(name: &str, pairs: Vec<(&str, Value)>) -> Facts {
        let mut s = Section::default();
        for (k, v) in pairs {
            s.set(k, v);
        }
        let mut f = Facts::default();
        f.insert(name, s);
        f
    }

    fn ipmi(suite: u8, privilege: &str) -> Facts {
        one_section(
            "ipmi",
            vec![
                ("cipher_suite", Value::Number(suite.into())),
                ("privilege", text(privilege)),
            ],
        )
    }

    fn redfish(cert: &str, types: &[&str]) -> Facts {
        one_section(
            "redfish",
            vec![
                ("auth", text("basic")),
                ("certificate", text(cert)),
                (
                    "reset_types",
                    Value::List(types.iter().map(|t| t.to_string()).collect()),
                ),
                ("reset_off", text("ForceOff")),
                ("reset_on", text("On")),
            ],
        )
    }

    fn outlets(pairs: &[(&str, &str)]) -> Facts {
        let names = pairs
            .iter()
            .map(|(o, n)| (o.to_string(), n.to_string()))
            .collect();
        one_section("snmp", vec![("outlets", Value::Names(names))])
    }

    fn fleet() -> Vec<CheckRow> {
        let mut pdu = row(3, "snmp", outlets(&[("A:1", "node01")]));
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

    /// A baseline written by the code before the facts moved to the
    /// platforms (typed per-driver sections) reads, compares without drift
    /// against the same fleet, and is written back key for key.
    #[test]
    fn a_baseline_recorded_before_the_platforms_declared_their_facts_still_reads() {
        let fixture = include_str!("drift/baseline-v1.toml");
        let old = Baseline::parse(fixture).map_err(|_| ()).unwrap();
        let mut rows = fleet();
        let mut ssh = row(
            4,
            "ssh",
            one_section("ssh", vec![("host_key", text("ssh-ed25519 SHA256:abc"))]),
        );
        ssh.identity.as_mut().unwrap().serial = None;
        rows.push(ssh.clone());
        let c = compare(&old, &rows, &[probe("accepted")]);
        assert_eq!(c, Comparison::default());
        // The same facts recorded now are the same record.
        let mut now = Baseline::new();
        now.record(&rows, &[probe("accepted")]);
        for n in now.node.values_mut() {
            n.recorded = old.node["node01"].recorded.clone();
        }
        assert_eq!(now, old);
        let body = |t: &str| {
            t.lines()
                .skip_while(|l| l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(body(&now.to_text()), body(fixture));
        // And a change is still named from the old record.
        ssh.facts = one_section("ssh", vec![("host_key", text("ssh-ed25519 SHA256:new"))]);
        *rows.last_mut().unwrap() = ssh;
        let c = compare(&old, &rows, &[probe("accepted")]);
        assert_eq!(c.drifts.len(), 1, "{:?}", c.drifts);
        assert_eq!(
            c.drifts[0].to_string(),
            "node01 level 4: host-key-changed (changed): was ssh-ed25519 SHA256:abc, \
             now ssh-ed25519 SHA256:new"
        );
    }

    /// vSphere and KubeVirt levels recorded before they kept the certificate
    /// compare without drift for it; recorded with one, a new one is named.
    #[test]
    fn a_certificate_missing_from_an_older_vsphere_or_kubevirt_record_is_no_drift() {
        let rows = |cert: Option<&str>| {
            let with = |mut pairs: Vec<(&'static str, Value)>| {
                if let Some(c) = cert {
                    pairs.push(("certificate", text(c)));
                }
                pairs
            };
            let vsphere = with(vec![("vm", text("vm-42")), ("instance_uuid", text("5012"))]);
            let kubevirt = with(vec![
                ("vm_uid", text("u1")),
                ("run_strategy", text("Always")),
            ]);
            vec![
                row(1, "vsphere", one_section("vsphere", vsphere)),
                row(2, "kubevirt", one_section("kubevirt", kubevirt)),
            ]
        };
        let mut old = Baseline::new();
        assert!(old.record(&rows(None), &[probe("accepted")]).is_empty());
        let old = Baseline::parse(&old.to_text()).map_err(|_| ()).unwrap();
        let c = compare(&old, &rows(Some("SHA256:AB")), &[probe("accepted")]);
        assert_eq!(c, Comparison::default());
        let mut was = Baseline::new();
        assert!(was
            .record(&rows(Some("SHA256:AB")), &[probe("accepted")])
            .is_empty());
        let c = compare(&was, &rows(Some("SHA256:CD")), &[probe("accepted")]);
        let named: Vec<_> = c
            .drifts
            .iter()
            .map(|d| (d.level, d.drift, d.severity))
            .collect();
        assert_eq!(
            named,
            [
                (Some(1), DriftName::CertificateChanged, Severity::Changed),
                (Some(2), DriftName::CertificateChanged, Severity::Changed),
            ]
        );
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
        refused.facts = one_section("redfish", vec![("certificate", text("EF:01"))]);
        assert_eq!(
            one(&with(1, refused), &p),
            (N::CertificateChanged, S::Broken)
        );
        let r = with(1, row(2, "redfish", redfish("AB:CD", &["On", "ForceOff"])));
        assert_eq!(one(&r, &p), (N::ResetTypeGone, S::Changed));
        let mut f = redfish("AB:CD", &["On", "GracefulShutdown", "ForceRestart"]);
        f.section_mut("redfish")
            .set("reset_off", text("GracefulShutdown"));
        assert_eq!(
            one(&with(1, row(2, "redfish", f)), &p),
            (N::ResetTypeGone, S::Weakened)
        );
        let mut f = redfish("AB:CD", &["On", "ForceRestart"]);
        f.section_mut("redfish").take("reset_off");
        let r = failing(row(2, "redfish", f), ErrorKind::Unsupported);
        assert_eq!(one(&with(1, r), &p), (N::ResetTypeGone, S::Broken));
        // PDU
        let mut r = fleet()[2].clone();
        r.facts = outlets(&[("A:1", "spare")]);
        assert_eq!(one(&with(2, r.clone()), &p), (N::OutletRenamed, S::Changed));
        r.facts = outlets(&[]);
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
