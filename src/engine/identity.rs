//! Which machine a device says it controls, and whether that is the one
//! the caller expects: the guard against powering off the wrong machine.
//!
//! Drivers report an [`Identity`] (system UUID in every byte order the
//! protocol may have used, serial number); callers state an
//! [`ExpectedIdentity`]; [`ExpectedIdentity::check`] compares the two. The
//! byte-order knowledge lives with each protocol (IPMI's GUID encodings in
//! `ipmi`); here a UUID is always the canonical lower-case hyphenated text.

use serde::Serialize;
use std::fmt;

/// One reading of the system UUID: the canonical text and how the device's
/// bytes were read to get it (e.g. `"as reported"`, `"smbios"`, `"rfc4122"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UuidForm {
    /// Lower-case, hyphenated 8-4-4-4-12.
    pub uuid: String,
    /// The encoding that produced this text.
    pub encoding: &'static str,
}

/// What a device reports about the machine behind it. Empty fields mean
/// the device cannot report them (never a guess).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// The system UUID, once per plausible encoding; the first is the one
    /// to show when a single value is wanted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uuid: Vec<UuidForm>,
    /// The serial number, trimmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Names the device gives the machine, each with where it comes from
    /// (a cloud API: EC2's `PrivateDnsName`, its tags).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<MachineName>,
}

/// A name of the machine and where it comes from (`PrivateDnsName`,
/// `tag:Name`): what a cloud API knows an instance by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MachineName {
    /// Where the name comes from, e.g. `PrivateDnsName` or `tag:Name`.
    pub source: String,
    /// The name.
    pub value: String,
}

impl MachineName {
    /// A name from `source`.
    pub fn new(source: &str, value: &str) -> Self {
        MachineName {
            source: source.to_string(),
            value: value.to_string(),
        }
    }

    /// Whether two values of this source name the same thing: DNS names
    /// compare without case and a trailing dot, tags exactly (trimmed).
    fn same(&self, other: &str) -> bool {
        let (a, b) = (self.value.trim(), other.trim());
        if self.source.starts_with("tag:") {
            a == b
        } else {
            a.trim_end_matches('.')
                .eq_ignore_ascii_case(b.trim_end_matches('.'))
        }
    }
}

impl Identity {
    /// The UUID to show (the first form), if any.
    pub fn primary_uuid(&self) -> Option<&str> {
        self.uuid.first().map(|f| f.uuid.as_str())
    }

    /// True when the device reported nothing.
    pub fn is_empty(&self) -> bool {
        self.uuid.is_empty() && self.serial.is_none() && self.names.is_empty()
    }

    /// The name `source` gives the machine, if reported.
    pub fn name(&self, source: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|n| n.source == source)
            .map(|n| n.value.as_str())
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(u) = self.primary_uuid() {
            parts.push(format!("uuid {u}"));
        }
        if let Some(s) = &self.serial {
            parts.push(format!("serial {s}"));
        }
        // The first name only (the pinned one comes first): tags can be many.
        if let Some(n) = self.names.first() {
            parts.push(format!("{} {}", n.source, n.value));
        }
        if parts.is_empty() {
            f.write_str("no identity reported")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// Why an expected identity cannot be stated as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// An expected UUID that does not read as one (the text as given).
    #[error("'{0}' is not a UUID (expected 32 hex digits, as 8-4-4-4-12)")]
    NotUuid(String),
    /// An expected serial number that is empty after trimming.
    #[error("the expected serial number is empty")]
    EmptySerial,
    /// An expected name that is empty after trimming.
    #[error("the expected {0} is empty")]
    EmptyName(String),
}

/// A part the device reported that differs from the expected one: the
/// device controls a different machine.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Difference {
    /// Another system UUID (`found`: every form it reads as, see
    /// [`Identity::uuid_forms`]).
    #[error("expected uuid {want}, found {found}")]
    Uuid {
        /// The expected UUID.
        want: String,
        /// The reported UUID in each encoding.
        found: String,
    },
    /// Another serial number.
    #[error("expected serial {want}, found {found}")]
    Serial {
        /// The expected serial number.
        want: String,
        /// The reported one.
        found: String,
    },
    /// Another name from the same source.
    #[error("expected {from} {want}, found {found}")]
    Name {
        /// Where the name comes from.
        from: String,
        /// The expected name.
        want: String,
        /// The reported one.
        found: String,
    },
}

/// An expected part the device does not report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    /// No system UUID (the expected one).
    #[error("expected uuid {0}, but the device does not report a system uuid")]
    Uuid(String),
    /// No serial number (the expected one).
    #[error("expected serial {0}, but the device does not report a serial number")]
    Serial(String),
    /// No name from that source (source, the expected name).
    #[error("expected {0} {1}, but the device does not report a {0}")]
    Name(String, String),
}

/// Every expected part the device does not report (never empty), each
/// named, joined with "; ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreported(pub Vec<Missing>);

impl fmt::Display for Unreported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, m) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{m}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Unreported {}

/// Why [`ExpectedIdentity::check`] refuses a device.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A different machine.
    #[error(transparent)]
    Different(#[from] Difference),
    /// A device that cannot report an expected part.
    #[error(transparent)]
    Unreported(#[from] Unreported),
}

/// The identity a caller expects (either part optional).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExpectedIdentity {
    /// Canonical UUID (see [`normalise_uuid`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Serial number, compared case-insensitively after trimming.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Names the machine must have (`--expect-node-name`: EC2's
    /// `PrivateDnsName`; `--expect-tag K=V`: `tag:K`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<MachineName>,
}

/// How an expected identity was matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdentityMatch {
    /// The encoding under which the UUID matched (`None`: no UUID expected).
    pub uuid_encoding: Option<&'static str>,
    /// True when a serial was expected and matched.
    pub serial: bool,
}

impl ExpectedIdentity {
    /// Builds an expectation; `uuid` must read as a UUID.
    pub fn new(uuid: Option<&str>, serial: Option<&str>) -> Result<Self, IdentityError> {
        let uuid = match uuid {
            Some(u) => {
                Some(normalise_uuid(u).ok_or_else(|| IdentityError::NotUuid(u.to_string()))?)
            }
            None => None,
        };
        let serial = match serial.map(str::trim) {
            Some("") => return Err(IdentityError::EmptySerial),
            s => s.map(str::to_string),
        };
        Ok(ExpectedIdentity {
            uuid,
            serial,
            names: Vec::new(),
        })
    }

    /// Adds a name the machine must have (from `source`, e.g. `PrivateDnsName`).
    pub fn with_name(mut self, source: &str, value: &str) -> Result<Self, IdentityError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(IdentityError::EmptyName(source.to_string()));
        }
        self.names.push(MachineName::new(source, value));
        Ok(self)
    }

    /// True when nothing is expected.
    pub fn is_empty(&self) -> bool {
        self.uuid.is_none() && self.serial.is_none() && self.names.is_empty()
    }

    /// Compares with what the device reported. `Err` names expected vs found.
    /// A device that cannot report a part that is expected is a mismatch.
    pub fn check(&self, found: &Identity) -> Result<IdentityMatch, Refusal> {
        match self.compare(found) {
            Comparison::Match(m) => Ok(m),
            Comparison::Mismatch(e) => Err(e.into()),
            Comparison::Unreported(e) => Err(e.into()),
        }
    }

    /// Compares with what the device reported, telling a different machine
    /// ([`Comparison::Mismatch`]: some part the device reported differs)
    /// from a device that cannot say ([`Comparison::Unreported`]: every
    /// part it reported matches, but an expected part is missing). A
    /// mismatch of any part wins over a missing one: it is evidence of a
    /// different machine.
    pub fn compare(&self, found: &Identity) -> Comparison {
        let mut m = IdentityMatch {
            uuid_encoding: None,
            serial: false,
        };
        let mut missing = Vec::new();
        if let Some(want) = &self.uuid {
            if found.uuid.is_empty() {
                missing.push(Missing::Uuid(want.clone()));
            } else {
                match found.uuid.iter().find(|f| &f.uuid == want) {
                    Some(f) => m.uuid_encoding = Some(f.encoding),
                    None => {
                        return Comparison::Mismatch(Difference::Uuid {
                            want: want.clone(),
                            found: found.uuid_forms(),
                        })
                    }
                }
            }
        }
        if let Some(want) = &self.serial {
            match &found.serial {
                None => missing.push(Missing::Serial(want.clone())),
                Some(s) if s.trim().eq_ignore_ascii_case(want.trim()) => m.serial = true,
                Some(s) => {
                    return Comparison::Mismatch(Difference::Serial {
                        want: want.clone(),
                        found: s.clone(),
                    })
                }
            }
        }
        for want in &self.names {
            match found.name(&want.source) {
                None => missing.push(Missing::Name(want.source.clone(), want.value.clone())),
                Some(f) if want.same(f) => {}
                Some(f) => {
                    return Comparison::Mismatch(Difference::Name {
                        from: want.source.clone(),
                        want: want.value.clone(),
                        found: f.to_string(),
                    })
                }
            }
        }
        if missing.is_empty() {
            Comparison::Match(m)
        } else {
            Comparison::Unreported(Unreported(missing))
        }
    }
}

/// The result of [`ExpectedIdentity::compare`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// Everything expected was reported and matches.
    Match(IdentityMatch),
    /// The device reported a different machine (names expected vs found).
    Mismatch(Difference),
    /// The device could not report an expected part (names what is missing).
    Unreported(Unreported),
}

impl Identity {
    /// Every UUID form as `UUID (encoding)`, joined with " or ".
    pub fn uuid_forms(&self) -> String {
        let seen: Vec<String> = self
            .uuid
            .iter()
            .map(|f| format!("{} ({})", f.uuid, f.encoding))
            .collect();
        seen.join(" or ")
    }

    /// Whether two devices describe the same machine: `Some(false)` when
    /// both report a UUID and no form of one equals any form of the other
    /// (every byte order is tried), or both report a serial and the serials
    /// differ; `Some(true)` when something comparable agrees and nothing
    /// disagrees; `None` when there is nothing to compare.
    pub fn agrees_with(&self, other: &Identity) -> Option<bool> {
        let mut compared = false;
        if !self.uuid.is_empty() && !other.uuid.is_empty() {
            compared = true;
            if self.common_uuid(other).is_none() {
                return Some(false);
            }
        }
        if let (Some(a), Some(b)) = (&self.serial, &other.serial) {
            compared = true;
            if !a.trim().eq_ignore_ascii_case(b.trim()) {
                return Some(false);
            }
        }
        compared.then_some(true)
    }

    /// The first UUID form of `self` that `other` also reports (under any
    /// encoding): the spelling both devices agree on.
    pub fn common_uuid(&self, other: &Identity) -> Option<&UuidForm> {
        self.uuid
            .iter()
            .find(|f| other.uuid.iter().any(|g| g.uuid == f.uuid))
    }
}

/// `Some(lower-case 8-4-4-4-12)` when `s` reads as a UUID the way Python's
/// `uuid.UUID` reads one: surrounding blanks, an optional `urn:uuid:`
/// prefix, optional braces, hyphens anywhere, either case. The one UUID
/// normaliser of the project.
pub fn normalise_uuid(s: &str) -> Option<String> {
    let t = s.trim();
    let t = t.strip_prefix("urn:").unwrap_or(t);
    let t = t.strip_prefix("uuid:").unwrap_or(t);
    let t = t.trim_start_matches('{').trim_end_matches('}');
    let hex: String = t.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some(hyphenate(&hex.to_ascii_lowercase()))
}

/// The 8-4-4-4-12 form of 32 hexadecimal digits (`hex` is taken as it is:
/// callers pass lower case).
pub fn hyphenate(hex: &str) -> String {
    debug_assert_eq!(hex.len(), 32);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A UUID as reported by a device that spells it as text (Redfish, virsh).
pub fn reported_uuid(text: &str) -> Option<UuidForm> {
    normalise_uuid(text).map(|uuid| UuidForm {
        uuid,
        encoding: "as reported",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_read_like_python() {
        let want = Some("00112233-4455-6677-8899-aabbccddeeff".to_string());
        for s in [
            "00112233-4455-6677-8899-aabbccddeeff",
            "00112233445566778899AABBCCDDEEFF",
            "{00112233-4455-6677-8899-AABBCCDDEEFF}",
            "urn:uuid:00112233-4455-6677-8899-aabbccddeeff",
            " 0011-2233-4455-6677-8899-aabb-ccdd-eeff ",
        ] {
            assert_eq!(normalise_uuid(s), want, "{s}");
        }
        for s in ["", "0011", "g0112233-4455-6677-8899-aabbccddeeff", "node01"] {
            assert_eq!(normalise_uuid(s), None, "{s}");
        }
    }

    fn found(uuids: &[(&str, &'static str)], serial: Option<&str>) -> Identity {
        Identity {
            uuid: uuids
                .iter()
                .map(|(u, e)| UuidForm {
                    uuid: u.to_string(),
                    encoding: e,
                })
                .collect(),
            serial: serial.map(str::to_string),
            names: Vec::new(),
        }
    }

    #[test]
    fn names_compare_by_source() {
        let want = ExpectedIdentity::default()
            .with_name("PrivateDnsName", "ip-10-0-1-5.ec2.internal")
            .unwrap()
            .with_name("tag:Name", "worker-0")
            .unwrap();
        let dev = |dns: &str, tag: &str| Identity {
            names: vec![
                MachineName::new("PrivateDnsName", dns),
                MachineName::new("tag:Name", tag),
            ],
            ..Identity::default()
        };
        assert!(want
            .check(&dev("IP-10-0-1-5.ec2.internal.", "worker-0"))
            .is_ok());
        assert_eq!(
            want.check(&dev("ip-10-0-1-6.ec2.internal", "worker-0"))
                .unwrap_err()
                .to_string(),
            "expected PrivateDnsName ip-10-0-1-5.ec2.internal, found ip-10-0-1-6.ec2.internal"
        );
        assert!(matches!(
            want.compare(&dev("ip-10-0-1-5.ec2.internal", "Worker-0")),
            Comparison::Mismatch(Difference::Name { .. })
        ));
        assert_eq!(
            want.check(&Identity::default()).unwrap_err().to_string(),
            "expected PrivateDnsName ip-10-0-1-5.ec2.internal, but the device does not report \
             a PrivateDnsName; expected tag:Name worker-0, but the device does not report a tag:Name"
        );
        assert_eq!(
            ExpectedIdentity::default().with_name("tag:Name", " "),
            Err(IdentityError::EmptyName("tag:Name".into()))
        );
        assert!(!want.is_empty());
    }

    #[test]
    fn check_names_the_matching_encoding_and_every_mismatch() {
        let want =
            ExpectedIdentity::new(Some("00112233-4455-6677-8899-AABBCCDDEEFF"), None).unwrap();
        let dev = found(
            &[
                ("33221100-5544-7766-8899-aabbccddeeff", "smbios"),
                ("00112233-4455-6677-8899-aabbccddeeff", "rfc4122"),
            ],
            None,
        );
        assert_eq!(want.check(&dev).unwrap().uuid_encoding, Some("rfc4122"));

        let other = found(
            &[("ffffffff-4455-6677-8899-aabbccddeeff", "as reported")],
            None,
        );
        let e = want.check(&other).unwrap_err().to_string();
        assert!(
            e.contains("00112233-4455-6677-8899-aabbccddeeff") && e.contains("ffffffff"),
            "{e}"
        );

        let e = want.check(&Identity::default()).unwrap_err().to_string();
        assert!(e.contains("does not report"), "{e}");
    }

    #[test]
    fn serials_compare_trimmed_and_case_insensitively() {
        let want = ExpectedIdentity::new(None, Some(" ABC123 ")).unwrap();
        assert!(want.check(&found(&[], Some("abc123"))).unwrap().serial);
        assert!(want.check(&found(&[], Some("ABC124"))).is_err());
        assert!(want.check(&found(&[], None)).is_err());
        assert!(ExpectedIdentity::new(None, Some("  ")).is_err());
        assert!(ExpectedIdentity::new(Some("node01"), None).is_err());
    }

    #[test]
    fn a_mismatch_wins_over_a_missing_part() {
        let want = ExpectedIdentity::new(Some("00112233-4455-6677-8899-aabbccddeeff"), Some("S1"))
            .unwrap();
        let no_uuid_other_serial = found(&[], Some("S2"));
        assert!(matches!(
            want.compare(&no_uuid_other_serial),
            Comparison::Mismatch(e) if e.to_string() == "expected serial S1, found S2"
        ));
        let nothing = Identity::default();
        assert!(matches!(
            want.compare(&nothing),
            Comparison::Unreported(e) if e.0.len() == 2
        ));
        let right_uuid_no_serial = found(
            &[("00112233-4455-6677-8899-aabbccddeeff", "as reported")],
            None,
        );
        assert!(matches!(
            want.compare(&right_uuid_no_serial),
            Comparison::Unreported(_)
        ));
    }

    #[test]
    fn two_devices_agree_under_any_encoding() {
        let ipmi = found(
            &[
                ("33221100-5544-7766-8899-aabbccddeeff", "smbios"),
                ("00112233-4455-6677-8899-aabbccddeeff", "rfc4122"),
            ],
            None,
        );
        let redfish = found(
            &[("33221100-5544-7766-8899-aabbccddeeff", "as reported")],
            Some("S"),
        );
        assert_eq!(ipmi.agrees_with(&redfish), Some(true));
        assert_eq!(
            ipmi.common_uuid(&redfish).map(|f| f.encoding),
            Some("smbios")
        );
        let other = found(
            &[("ffffffff-5544-7766-8899-aabbccddeeff", "as reported")],
            Some("S"),
        );
        assert_eq!(ipmi.agrees_with(&other), Some(false));
        assert_eq!(redfish.agrees_with(&found(&[], Some("T"))), Some(false));
        assert_eq!(
            ipmi.agrees_with(&found(&[], Some("T"))),
            None,
            "nothing comparable"
        );
        assert_eq!(Identity::default().agrees_with(&ipmi), None);
    }

    #[test]
    fn messages_read_as_they_always_have() {
        let uuid = "00112233-4455-6677-8899-aabbccddeeff";
        assert_eq!(
            ExpectedIdentity::new(Some("node01"), None)
                .unwrap_err()
                .to_string(),
            "'node01' is not a UUID (expected 32 hex digits, as 8-4-4-4-12)"
        );
        assert_eq!(
            ExpectedIdentity::new(None, Some(" "))
                .unwrap_err()
                .to_string(),
            "the expected serial number is empty"
        );
        let both = ExpectedIdentity::new(Some(uuid), Some("S1")).unwrap();
        let text = |found: &Identity| both.check(found).unwrap_err().to_string();
        assert_eq!(
            text(&Identity::default()),
            "expected uuid 00112233-4455-6677-8899-aabbccddeeff, but the device does not \
             report a system uuid; expected serial S1, but the device does not report a \
             serial number"
        );
        assert_eq!(
            text(&found(
                &[
                    ("ffffffff-4455-6677-8899-aabbccddeeff", "as reported"),
                    ("ffffffff-5544-7766-8899-aabbccddeeff", "smbios")
                ],
                Some("S1")
            )),
            "expected uuid 00112233-4455-6677-8899-aabbccddeeff, found \
             ffffffff-4455-6677-8899-aabbccddeeff (as reported) or \
             ffffffff-5544-7766-8899-aabbccddeeff (smbios)"
        );
        assert_eq!(
            text(&found(&[(uuid, "as reported")], Some("S2"))),
            "expected serial S1, found S2"
        );
    }
}
