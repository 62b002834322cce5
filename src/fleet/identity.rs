//! Identities across a node's methods, for `fencekit check`: whether the
//! levels of one node agree about which machine they control, and the
//! pins `check --record-identity` prints for an inventory.
//!
//! Two methods of one node describe the same machine when some UUID form
//! of one equals some UUID form of the other (an IPMI GUID is reported in
//! every byte order it may have been written in, so an SMBIOS-order GUID
//! and a Redfish UUID of the same machine meet), and their serials, when
//! both report one, are equal. Pure functions: the reading is done by the
//! callers in `verify`.

use crate::engine::identity::{ExpectedIdentity, Identity};

/// What one level of a node reported, as the checks see it.
#[derive(Clone, Debug)]
pub struct LevelIdentity<'a> {
    /// Level number (1-based).
    pub level: usize,
    /// Its endpoint, for messages.
    pub endpoint: &'a str,
    /// What its device reported; `None` when it could not be read.
    pub found: Option<&'a Identity>,
}

/// Every pair of levels that report different machines, as messages naming
/// both levels and what each reported: `(level a, level b, message)`.
pub fn disagreements(levels: &[LevelIdentity<'_>]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for (i, a) in levels.iter().enumerate() {
        for b in &levels[i + 1..] {
            let (Some(fa), Some(fb)) = (a.found, b.found) else {
                continue;
            };
            if fa.agrees_with(fb) == Some(false) {
                out.push((
                    a.level,
                    b.level,
                    format!(
                        "level {} ({}) and level {} ({}) report different machines: {} vs {}",
                        a.level,
                        a.endpoint,
                        b.level,
                        b.endpoint,
                        describe(fa),
                        describe(fb)
                    ),
                ));
            }
        }
    }
    out
}

/// Pairs of levels of *different* nodes that report the same system UUID
/// (under any encoding): two nodes that claim one machine, a reused address
/// or a swapped cable. `(index a, index b, message)` into `rows`, given as
/// (node, level, endpoint, identity). Linear in the number of UUID forms.
pub fn same_machine_elsewhere(
    rows: &[(&str, usize, &str, Option<&Identity>)],
) -> Vec<(usize, usize, String)> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut out: Vec<(usize, usize, String)> = Vec::new();
    let mut pairs: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    for (i, (node, level, endpoint, found)) in rows.iter().enumerate() {
        let Some(found) = found else { continue };
        for form in &found.uuid {
            match seen.get(form.uuid.as_str()) {
                Some(&j) if rows[j].0 != *node => {
                    if pairs.insert((j, i)) {
                        let (n2, l2, e2, _) = rows[j];
                        out.push((
                            j,
                            i,
                            format!(
                                "node {n2} level {l2} ({e2}) and node {node} level {level} \
                                 ({endpoint}) report the same machine (uuid {}): one of them \
                                 points at the wrong BMC",
                                form.uuid
                            ),
                        ));
                    }
                }
                Some(_) => {}
                None => {
                    seen.insert(form.uuid.as_str(), i);
                }
            }
        }
    }
    out
}

/// Every UUID form and the serial, for messages.
pub fn describe(id: &Identity) -> String {
    let mut parts = Vec::new();
    if !id.uuid.is_empty() {
        parts.push(format!("uuid {}", id.uuid_forms()));
    }
    if let Some(s) = &id.serial {
        parts.push(format!("serial {s}"));
    }
    if parts.is_empty() {
        "no identity reported".into()
    } else {
        parts.join(", ")
    }
}

/// Why no pin can be recorded for a node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoPin {
    /// The node has no level with a device.
    #[error("no level with a device (nothing to read an identity from)")]
    NoLevels,
    /// A level did not answer.
    #[error("level {level} ({endpoint}) did not answer, so its identity could not be compared")]
    NoAnswer { level: usize, endpoint: String },
    /// Two levels report different machines ([`disagreements`]' words).
    #[error("{0}")]
    Disagreement(String),
    /// No level reports any identity.
    #[error("no level reports an identity (nothing to pin)")]
    NothingReported,
    /// Every level reports something, but no part all of them report.
    #[error(
        "the levels report no identity part in common (a uuid on one, a serial on \
         another): pin each [[node.fence]] with its own uuid or serial"
    )]
    NothingInCommon,
    /// Some levels report nothing (`level N (endpoint)` each).
    #[error(
        "{} cannot report an identity: pin the other levels in their own \
         [[node.fence]] with uuid = \"…\"",
        silent.join(" and ")
    )]
    Silent { silent: Vec<String> },
}

/// The pin to record for a node from what its levels reported: the UUID
/// spelling every level reports (under some encoding) and the serial, each
/// only when every level reports it, so that the pin can be checked through
/// every level. `Err` says why nothing can be recorded.
pub fn pin_for(levels: &[LevelIdentity<'_>]) -> Result<ExpectedIdentity, NoPin> {
    if levels.is_empty() {
        return Err(NoPin::NoLevels);
    }
    let mut found = Vec::with_capacity(levels.len());
    for l in levels {
        match l.found {
            Some(f) => found.push(f),
            None => {
                return Err(NoPin::NoAnswer {
                    level: l.level,
                    endpoint: l.endpoint.to_string(),
                })
            }
        }
    }
    if let Some((_, _, why)) = disagreements(levels).into_iter().next() {
        return Err(NoPin::Disagreement(why));
    }
    let first = found[0];
    // The first spelling of level 1 that every other level also reports.
    let uuid = first
        .uuid
        .iter()
        .find(|f| {
            found[1..]
                .iter()
                .all(|o| o.uuid.iter().any(|g| g.uuid == f.uuid))
        })
        .map(|f| f.uuid.clone());
    let serial = match found.iter().all(|f| f.serial.is_some()) {
        true => first.serial.clone(),
        false => None,
    };
    if uuid.is_none() && serial.is_none() {
        let silent: Vec<String> = levels
            .iter()
            .zip(&found)
            .filter(|(_, f)| f.is_empty())
            .map(|(l, _)| format!("level {} ({})", l.level, l.endpoint))
            .collect();
        return Err(if silent.len() == levels.len() {
            NoPin::NothingReported
        } else if silent.is_empty() {
            NoPin::NothingInCommon
        } else {
            NoPin::Silent { silent }
        });
    }
    Ok(ExpectedIdentity {
        uuid,
        serial,
        ..ExpectedIdentity::default()
    })
}

/// Escapes `s` as a TOML basic string.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `[identity.NAME]` table for one node (a quoted key when the name
/// is not a bare TOML key).
pub fn identity_table(node: &str, pin: &ExpectedIdentity) -> String {
    let bare = !node.is_empty()
        && node
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let key = if bare {
        node.to_string()
    } else {
        toml_string(node)
    };
    let mut s = format!("[identity.{key}]\n");
    if let Some(u) = &pin.uuid {
        s.push_str(&format!("uuid = {}\n", toml_string(u)));
    }
    if let Some(v) = &pin.serial {
        s.push_str(&format!("serial = {}\n", toml_string(v)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::identity::UuidForm;

    fn id(uuids: &[(&str, &'static str)], serial: Option<&str>) -> Identity {
        Identity {
            names: Vec::new(),
            uuid: uuids
                .iter()
                .map(|(u, e)| UuidForm {
                    uuid: u.to_string(),
                    encoding: e,
                })
                .collect(),
            serial: serial.map(str::to_string),
        }
    }

    const SMBIOS: &str = "3042414c-0000-0140-8000-fe0000000001";
    const RFC: &str = "4c414230-0000-4001-8000-fe0000000001";

    #[test]
    fn an_ipmi_guid_and_a_redfish_uuid_of_one_machine_agree_and_are_recorded_as_redfish_spells_it()
    {
        let ipmi = id(&[(SMBIOS, "smbios"), (RFC, "rfc4122")], None);
        let redfish = id(&[(RFC, "as reported")], Some("LAB00001"));
        let levels = [
            LevelIdentity {
                level: 1,
                endpoint: "ipmi://h:623",
                found: Some(&ipmi),
            },
            LevelIdentity {
                level: 2,
                endpoint: "redfish://h",
                found: Some(&redfish),
            },
        ];
        assert!(disagreements(&levels).is_empty());
        let pin = pin_for(&levels).unwrap();
        assert_eq!(pin.uuid.as_deref(), Some(RFC));
        assert_eq!(pin.serial, None, "level 1 reports no serial");
        assert_eq!(
            identity_table("node01", &pin),
            format!("[identity.node01]\nuuid = \"{RFC}\"\n")
        );
    }

    #[test]
    fn levels_that_name_different_machines_are_flagged_and_not_recorded() {
        let ipmi = id(&[(SMBIOS, "smbios"), (RFC, "rfc4122")], None);
        let other = id(
            &[("4c414230-0000-4002-8000-fe0000000002", "as reported")],
            None,
        );
        let levels = [
            LevelIdentity {
                level: 1,
                endpoint: "ipmi://h:623",
                found: Some(&ipmi),
            },
            LevelIdentity {
                level: 2,
                endpoint: "redfish://g",
                found: Some(&other),
            },
        ];
        let d = disagreements(&levels);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].2
                .contains("level 1 (ipmi://h:623) and level 2 (redfish://g)")
                && d[0].2.contains("smbios")
                && d[0].2.contains("4c414230-0000-4002"),
            "{}",
            d[0].2
        );
        assert_eq!(pin_for(&levels), Err(NoPin::Disagreement(d[0].2.clone())));
    }

    #[test]
    fn a_level_that_cannot_report_or_answer_blocks_a_node_pin() {
        let ipmi = id(&[(RFC, "rfc4122")], None);
        let none = Identity::default();
        let levels = [
            LevelIdentity {
                level: 1,
                endpoint: "ipmi://h",
                found: Some(&ipmi),
            },
            LevelIdentity {
                level: 2,
                endpoint: "ssh://h/host",
                found: Some(&none),
            },
        ];
        let e = pin_for(&levels).unwrap_err();
        assert_eq!(
            e,
            NoPin::Silent {
                silent: vec!["level 2 (ssh://h/host)".into()]
            }
        );
        assert!(
            e.to_string()
                .starts_with("level 2 (ssh://h/host) cannot report"),
            "{e}"
        );
        let levels = [LevelIdentity {
            level: 1,
            endpoint: "ipmi://h",
            found: None,
        }];
        let e = pin_for(&levels).unwrap_err();
        assert_eq!(
            e,
            NoPin::NoAnswer {
                level: 1,
                endpoint: "ipmi://h".into()
            }
        );
        assert!(e.to_string().contains("did not answer"), "{e}");
        assert_eq!(pin_for(&[]), Err(NoPin::NoLevels));
    }

    #[test]
    fn odd_node_names_are_quoted() {
        let pin = ExpectedIdentity {
            names: Vec::new(),
            uuid: None,
            serial: Some("A\"B".into()),
        };
        assert_eq!(
            identity_table("db.1", &pin),
            "[identity.\"db.1\"]\nserial = \"A\\\"B\"\n"
        );
    }

    #[test]
    fn two_nodes_claiming_one_machine_are_found_once() {
        let a = id(&[(SMBIOS, "smbios"), (RFC, "rfc4122")], None);
        let b = id(&[(RFC, "as reported")], None);
        let c = id(
            &[("4c414230-0000-4002-8000-fe0000000002", "as reported")],
            None,
        );
        let rows = [
            ("node01", 1, "ipmi://a", Some(&a)),
            ("node01", 2, "redfish://a", Some(&b)),
            ("node02", 1, "redfish://b", Some(&b)),
            ("node03", 1, "redfish://c", Some(&c)),
            ("node04", 1, "redfish://d", None),
        ];
        let found = same_machine_elsewhere(&rows);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].0, found[0].1), (0, 2));
        assert!(
            found[0]
                .2
                .contains("node node01 level 1 (ipmi://a) and node node02 level 1")
                && found[0].2.contains(RFC),
            "{}",
            found[0].2
        );
    }
}
