//! The facts `check --record` keeps of a working fence path and compares
//! later (drift), declared by each platform: generic code (`fleet::verify::
//! check`, `fleet::drift`) never names one.
//!
//! A platform that has facts returns its [`FactRules`] from
//! [`Platform::facts`](super::Platform::facts). During `check` they read
//! what the platform's own driver negotiated or was offered into a
//! [`Section`] — ordered key/value pairs, written in that order as the
//! baseline's `[node.NAME.level.PLATFORM]` table — and may refuse a level
//! that would not fence safely. Drift compares a recorded section with the
//! one seen now: by default each key declared in [`FactRules::kinds`] is
//! compared and a difference is named by its [`FactKind`]; a platform
//! whose severities depend on the failure seen overrides
//! [`FactRules::drifts`].

use super::{Driver, Local, Method};
use crate::engine::error::{DriverError, ErrorKind};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Instant;

/// One fact's value, as the baseline's TOML holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A number (a cipher suite).
    Number(i64),
    /// A word or a fingerprint.
    Text(String),
    /// A list (the reset types offered).
    List(Vec<String>),
    /// Names by key (outlet → its name on the PDU): a sub-table.
    Names(BTreeMap<String, String>),
}

/// One platform's facts of a level: ordered key/value pairs (a key set
/// twice keeps its first place).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Section(Vec<(String, Value)>);

impl Section {
    /// Sets `key` (in place when it is there, else last).
    pub fn set(&mut self, key: &str, value: Value) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
    }
    /// Sets `key` to `value` when there is one (a fact not seen is left out).
    pub fn set_some(&mut self, key: &str, value: Option<Value>) {
        if let Some(v) = value {
            self.set(key, v);
        }
    }
    /// Removes `key`, returning its value.
    pub fn take(&mut self, key: &str) -> Option<Value> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// `key` as text.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Value::Text(s)) => Some(s),
            _ => None,
        }
    }
    /// `key` as a number.
    pub fn number(&self, key: &str) -> Option<i64> {
        match self.get(key) {
            Some(Value::Number(n)) => Some(*n),
            _ => None,
        }
    }
    /// `key` as a list.
    pub fn list(&self, key: &str) -> Option<&[String]> {
        match self.get(key) {
            Some(Value::List(l)) => Some(l),
            _ => None,
        }
    }
    /// `key` as names by key.
    pub fn names(&self, key: &str) -> Option<&BTreeMap<String, String>> {
        match self.get(key) {
            Some(Value::Names(n)) => Some(n),
            _ => None,
        }
    }
    /// Puts the keys in `order` first, in that order (the others keep
    /// theirs, after them): a table read back (TOML readers sort its keys)
    /// is written as it was recorded.
    pub fn order_by(&mut self, order: &[&str]) {
        let rank = |k: &str| order.iter().position(|o| *o == k).unwrap_or(order.len());
        self.0.sort_by_key(|(k, _)| rank(k));
    }
    /// The pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl Serialize for Section {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Section {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Section;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of facts")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Section, A::Error> {
                let mut s = Section::default();
                while let Some((k, v)) = a.next_entry::<String, Value>()? {
                    s.set(&k, v);
                }
                Ok(s)
            }
        }
        d.deserialize_map(V)
    }
}

/// The facts of one level, by platform name (the baseline's
/// `[node.NAME.level.PLATFORM]` tables).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Facts(BTreeMap<String, Section>);

impl Facts {
    /// True when nothing was seen.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The section of platform `name`.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.0.get(name)
    }
    /// The section of platform `name`, made empty when there is none.
    pub fn section_mut(&mut self, name: &str) -> &mut Section {
        self.0.entry(name.to_string()).or_default()
    }
    /// Sets the section of platform `name`.
    pub fn insert(&mut self, name: &str, section: Section) {
        self.0.insert(name.to_string(), section);
    }
    /// Every section, by platform name, to change.
    pub fn sections_mut(&mut self) -> impl Iterator<Item = (&str, &mut Section)> {
        self.0.iter_mut().map(|(k, v)| (k.as_str(), v))
    }
    /// Every section, by platform name.
    pub fn sections(&self) -> impl Iterator<Item = (&str, &Section)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

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

/// The named drifts (the vocabulary every platform's rules use).
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
    /// HTTPS (Redfish, vSphere, KubeVirt): another TLS certificate than
    /// recorded.
    CertificateChanged,
    /// SSH: another host key than recorded.
    HostKeyChanged,
    /// PDU: an outlet's name on the PDU changed.
    OutletRenamed,
    /// KubeVirt: the account can no longer read what proves off (the
    /// launcher pods, their nodes).
    WitnessUnreadable,
    /// KubeVirt: a setting of the machine recorded changed (its run strategy).
    SettingChanged,
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
            DriftName::WitnessUnreadable => "witness-unreadable",
            DriftName::SettingChanged => "setting-changed",
            DriftName::Unreachable => "unreachable",
            DriftName::AuthFailed => "auth-failed",
        }
    }
}

/// One row of the drift table (`check --help`, docs/monitoring.md):
/// `(name, severity, when)`.
pub type DriftRow = (&'static str, &'static str, &'static str);

/// How a difference in one declared fact is named and how bad it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FactKind {
    /// The drift raised when the value differs from the record (also when
    /// it is no longer seen on a level that works).
    pub drift: DriftName,
    /// Its severity.
    pub severity: Severity,
}

/// What `check` saw go wrong on the level now, for drift rules.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome<'a> {
    /// The kind of the failure (absent: the level works).
    pub failed: Option<ErrorKind>,
    /// Its text.
    pub error: Option<&'a str>,
}

impl Outcome<'_> {
    /// The failure's text, or `otherwise`.
    pub fn error_or(&self, otherwise: &str) -> String {
        self.error.unwrap_or(otherwise).to_string()
    }
}

/// One difference a platform's rules found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactDrift {
    /// Its name.
    pub drift: DriftName,
    /// How bad it is.
    pub severity: Severity,
    /// What was recorded.
    pub was: String,
    /// What is seen now.
    pub now: String,
}

/// Why a level would not fence, found by a platform's own check.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// A step failed (reading what the check needs).
    #[error(transparent)]
    Step(#[from] DriverError),
    /// It works, but not safely enough to fence (no safe reset type, a
    /// session below operator): the text the user reads.
    #[error("{message}")]
    Unsafe {
        /// The kind, for drift names.
        kind: ErrorKind,
        /// What is wrong.
        message: String,
    },
}

impl Refusal {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Refusal::Step(e) => e.kind,
            Refusal::Unsafe { kind, .. } => *kind,
        }
    }
}

/// A platform's part in `check` and drift. Every method has a default: a
/// platform declares only what it has.
pub trait FactRules: Sync {
    /// Checks beyond the generic ones (reachable, authenticated, identity,
    /// a state that reads), run once the state was read: may note facts in
    /// `facts` (the platform's own section). `detail` is what `connect` said.
    fn check<'a>(
        &'a self,
        _driver: &'a mut dyn Driver,
        _detail: &'a str,
        _facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, Result<(), Refusal>> {
        Box::pin(async { Ok(()) })
    }
    /// The named workarounds the device needed (the inventory's
    /// `workarounds = [...]`).
    fn workarounds(&self, _driver: &dyn Driver) -> Vec<&'static str> {
        Vec::new()
    }
    /// What the driver saw (also after a failed step: the certificate or
    /// host key offered), into the platform's section; an empty section
    /// afterwards is left out.
    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        method: &'a dyn Method,
        facts: &'a mut Section,
        deadline: Option<Instant>,
    ) -> Local<'a, ()>;
    /// The order its keys are written in (a section read back is put in
    /// it); keys not named keep theirs, after them.
    fn keys(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether the platform's section is kept even when empty (a service
    /// that answered with nothing to record).
    fn keep_empty(&self) -> bool {
        false
    }
    /// How each fact a default comparison covers is named when it differs.
    fn kinds(&self) -> &'static [(&'static str, FactKind)] {
        &[]
    }
    /// Its rows of the drift table, in order.
    fn drift_rows(&self) -> &'static [DriftRow] {
        &[]
    }
    /// The drifts of its section: `was` recorded, `now` seen (absent: not
    /// seen). By default each key of [`FactRules::kinds`] recorded whose
    /// value differs now (or is gone while the level works).
    fn drifts(
        &self,
        was: &Section,
        now: Option<&Section>,
        outcome: &Outcome<'_>,
    ) -> Vec<FactDrift> {
        by_kinds(self.kinds(), was, now, outcome)
    }
}

/// The default comparison: each key of `kinds` recorded in `was` whose
/// value differs in `now` (or is gone while the level works), named by its
/// kind.
pub fn by_kinds(
    kinds: &[(&'static str, FactKind)],
    was: &Section,
    now: Option<&Section>,
    outcome: &Outcome<'_>,
) -> Vec<FactDrift> {
    let empty = Section::default();
    let now = now.unwrap_or(&empty);
    let mut out = Vec::new();
    for (key, kind) in kinds {
        let Some(a) = was.get(key) else { continue };
        let b = now.get(key);
        if b == Some(a) || (b.is_none() && outcome.failed.is_some()) {
            continue;
        }
        out.push(FactDrift {
            drift: kind.drift,
            severity: kind.severity,
            was: format!("{key} {}", show(a)),
            now: match b {
                Some(b) => format!("{key} {}", show(b)),
                None => format!("{key} not seen"),
            },
        });
    }
    out
}

/// The key of the HTTPS certificate an HTTPS platform records (Redfish,
/// vSphere, KubeVirt): the SHA-256 of the one the server presented, as
/// `SHA256:AB:CD:…` (what `--ssl-fingerprint` takes).
pub const CERTIFICATE: &str = "certificate";

/// Notes the certificate the server presented at the last handshake
/// (`crate::tls::SeenCert`, trusted or not: also after a refused one).
pub fn note_certificate(facts: &mut Section, presented: Option<[u8; 32]>) {
    let text = presented.map(|fp| Value::Text(crate::fingerprint::format_hex(&fp)));
    facts.set_some(CERTIFICATE, text);
}

/// `certificate-changed` when the certificate recorded in `was` is not the
/// one in `now`. Broken when the level failed and `read` (a fact only seen
/// past the handshake) is not seen now: the new certificate was refused;
/// changed otherwise (it is trusted: re-issued by a trusted CA, or the new
/// one was trusted). No drift when either side has none (a baseline from
/// before the platform recorded it, or no handshake got that far).
pub fn certificate_drift(
    was: &Section,
    now: Option<&Section>,
    outcome: &Outcome<'_>,
    read: &str,
) -> Option<FactDrift> {
    let now = now?;
    let (a, b) = (was.text(CERTIFICATE)?, now.text(CERTIFICATE)?);
    if a == b {
        return None;
    }
    let refused = outcome.failed.is_some() && now.get(read).is_none();
    Some(FactDrift {
        drift: DriftName::CertificateChanged,
        severity: if refused {
            Severity::Broken
        } else {
            Severity::Changed
        },
        was: a.into(),
        now: b.into(),
    })
}

/// A platform's drift rows (`[DriftRow]`, as a `&'static` slice) followed
/// by the two of `certificate-changed`, worded with its display name:
/// `with_certificate_rows!("vSphere"; (name, severity, when), …)`.
macro_rules! with_certificate_rows {
    ($platform:literal; $($row:expr),* $(,)?) => {
        &[
            $($row,)*
            (
                "certificate-changed",
                "broken",
                concat!($platform, ": another certificate than recorded, and it is not trusted"),
            ),
            (
                "certificate-changed",
                "changed",
                concat!(
                    $platform,
                    ": another certificate than recorded, trusted (re-issued by a trusted CA)"
                ),
            ),
        ]
    };
}
pub(crate) use with_certificate_rows;

/// How a fact that names the machine itself is named when it differs: a
/// target that now finds another machine is broken.
pub const IDENTITY_BROKEN: FactKind = FactKind {
    drift: DriftName::IdentityChanged,
    severity: Severity::Broken,
};

/// The rules of an HTTPS platform whose facts are what its driver found
/// (a VM's ids, where it runs) and the certificate presented: each key of
/// `kinds` by [`by_kinds`], the certificate by [`certificate_drift`].
pub struct Seen {
    /// Its rows of the drift table ([`with_certificate_rows`]).
    pub rows: &'static [DriftRow],
    /// How each compared fact is named when it differs.
    pub kinds: &'static [(&'static str, FactKind)],
    /// The order its keys are written in.
    pub keys: &'static [&'static str],
    /// A fact seen only past the handshake ([`certificate_drift`]'s `read`).
    pub read: &'static str,
    /// Notes what the driver saw (nothing when it is another platform's).
    pub note: fn(&dyn Driver, &mut Section),
}

impl FactRules for Seen {
    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        _deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        (self.note)(driver, facts);
        Box::pin(async {})
    }
    fn kinds(&self) -> &'static [(&'static str, FactKind)] {
        self.kinds
    }
    fn keys(&self) -> &'static [&'static str] {
        self.keys
    }
    fn drift_rows(&self) -> &'static [DriftRow] {
        self.rows
    }
    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let mut out = by_kinds(self.kinds, was, now, o);
        out.extend(certificate_drift(was, now, o, self.read));
        out
    }
}

/// A value as drift texts show it.
pub fn show(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::Text(s) => s.clone(),
        Value::List(l) => l.join(", "),
        Value::Names(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_keeps_its_order_and_reads_back() {
        let mut s = Section::default();
        s.set("b", Value::Text("x".into()));
        s.set("a", Value::Number(3));
        s.set("b", Value::Text("y".into()));
        s.set_some("c", None);
        assert_eq!(s.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(
            (s.text("b"), s.number("a"), s.text("a")),
            (Some("y"), Some(3), None)
        );
        let mut f = Facts::default();
        f.insert("p", s.clone());
        let text = toml::to_string(&f).unwrap();
        assert_eq!(text, "[p]\nb = \"y\"\na = 3\n");
        let mut back: Facts = toml::from_str(&text).unwrap();
        for (_, s) in back.sections_mut() {
            s.order_by(&["b", "a"]);
        }
        assert_eq!(back, f);
    }

    struct Rules;
    impl FactRules for Rules {
        fn note<'a>(
            &'a self,
            _: &'a mut dyn Driver,
            _: &'a dyn Method,
            _: &'a mut Section,
            _: Option<Instant>,
        ) -> Local<'a, ()> {
            Box::pin(async {})
        }
        fn kinds(&self) -> &'static [(&'static str, FactKind)] {
            &[(
                "uid",
                FactKind {
                    drift: DriftName::IdentityChanged,
                    severity: Severity::Broken,
                },
            )]
        }
    }

    #[test]
    fn declared_kinds_name_a_difference() {
        let mut was = Section::default();
        was.set("uid", Value::Text("1".into()));
        was.set("other", Value::Text("a".into()));
        let mut now = was.clone();
        now.set("other", Value::Text("b".into()));
        let ok = Outcome::default();
        assert!(Rules.drifts(&was, Some(&now), &ok).is_empty(), "undeclared");
        now.set("uid", Value::Text("2".into()));
        let d = Rules.drifts(&was, Some(&now), &ok);
        assert_eq!(
            d,
            vec![FactDrift {
                drift: DriftName::IdentityChanged,
                severity: Severity::Broken,
                was: "uid 1".into(),
                now: "uid 2".into(),
            }]
        );
        let failed = Outcome {
            failed: Some(ErrorKind::Protocol),
            error: None,
        };
        assert!(Rules.drifts(&was, None, &failed).is_empty(), "not read now");
        assert_eq!(Rules.drifts(&was, None, &ok)[0].now, "uid not seen");
    }

    #[test]
    fn a_certificate_is_noted_and_its_change_named_by_whether_it_was_refused() {
        let mut was = Section::default();
        note_certificate(&mut was, None);
        assert!(was.get(CERTIFICATE).is_none(), "no handshake, no fact");
        note_certificate(&mut was, Some([0xab; 32]));
        let recorded = was.text(CERTIFICATE).unwrap().to_string();
        assert_eq!(recorded, format!("SHA256:{}AB", "AB:".repeat(31)));
        was.set("vm", Value::Text("vm-1".into()));
        let ok = Outcome::default();
        let failed = Outcome {
            failed: Some(ErrorKind::Protocol),
            error: None,
        };
        assert_eq!(certificate_drift(&was, Some(&was), &failed, "vm"), None);
        let mut now = Section::default();
        note_certificate(&mut now, Some([0xcd; 32]));
        // Refused: nothing past the handshake was read.
        let d = certificate_drift(&was, Some(&now), &failed, "vm").unwrap();
        assert_eq!(
            (d.drift, d.severity, d.was.as_str()),
            (
                DriftName::CertificateChanged,
                Severity::Broken,
                recorded.as_str()
            )
        );
        assert_eq!(d.now, format!("SHA256:{}CD", "CD:".repeat(31)));
        // Trusted: the level works (or failed past the handshake).
        let d = certificate_drift(&was, Some(&now), &ok, "vm").unwrap();
        assert_eq!(d.severity, Severity::Changed);
        now.set("vm", Value::Text("vm-1".into()));
        let d = certificate_drift(&was, Some(&now), &failed, "vm").unwrap();
        assert_eq!(d.severity, Severity::Changed);
        // A baseline from before certificates were recorded, or nothing seen now.
        let mut old = was.clone();
        old.take(CERTIFICATE);
        assert_eq!(certificate_drift(&old, Some(&now), &ok, "vm"), None);
        assert_eq!(certificate_drift(&was, None, &failed, "vm"), None);
        let rows: &[DriftRow] = with_certificate_rows!("Platform"; ("a", "b", "c"));
        assert_eq!(
            rows.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(),
            [
                ("a", "b"),
                ("certificate-changed", "broken"),
                ("certificate-changed", "changed")
            ]
        );
        assert!(rows[1].2.starts_with("Platform: another certificate"));
    }
}
