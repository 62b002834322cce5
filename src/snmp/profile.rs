//! PDU profiles as data: which OIDs read and switch an outlet, which
//! values mean on and off, how outlets are named, and (optionally) which
//! OID gives one outlet's load. The built-in profiles live in
//! `agents/pdu/*.toml` (APC, Eaton); users can write their own file in the
//! same format (`docs/pdu.md`) for another vendor.
//!
//! A profile has one or more variants; the device's sysObjectID picks one
//! (or the profile's `fallback`), which is how fence_apc_snmp tells an rPDU
//! from a Master Switch. This module parses and resolves; it does no I/O
//! beyond reading a user's profile file.

use super::ber::Oid;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

/// Largest profile file read.
const MAX_PROFILE: u64 = 1 << 20;

/// The built-in profiles, by name.
const BUILTIN: &[(&str, &str)] = &[
    ("apc", include_str!("../../agents/pdu/apc.toml")),
    ("eaton", include_str!("../../agents/pdu/eaton.toml")),
];

/// What the alias column of a listing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Alias {
    /// The value of the names table (the outlet's configured name).
    #[default]
    Value,
    /// The outlet number again (devices whose table holds numbers).
    Number,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    fallback: Option<String>,
    variant: Vec<RawVariant>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    id: String,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    sys_object_ids: Vec<String>,
    status: String,
    control: String,
    #[serde(default)]
    names: Option<String>,
    #[serde(default)]
    names_index: Option<String>,
    #[serde(default)]
    index_offset: i64,
    #[serde(default)]
    control_offset: i64,
    #[serde(default)]
    alias: Alias,
    #[serde(default)]
    absent_value: Option<String>,
    state_on: i64,
    state_off: i64,
    turn_on: i64,
    turn_off: i64,
    #[serde(default)]
    load: Option<String>,
    #[serde(default = "one")]
    load_scale: f64,
}

fn one() -> f64 {
    1.0
}

/// An OID with `{switch}` / `{outlet}` placeholders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Arc(u32),
    Switch,
    Outlet,
}

impl Template {
    /// Parses `.1.3.6…{outlet}`.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        for a in text.trim().trim_start_matches('.').split('.') {
            parts.push(match a {
                "{switch}" => Part::Switch,
                "{outlet}" => Part::Outlet,
                n => Part::Arc(
                    n.parse()
                        .map_err(|_| format!("'{text}' is not an OID template"))?,
                ),
            });
        }
        Ok(Template { parts })
    }

    /// True when the template uses `{switch}`.
    pub fn has_switch(&self) -> bool {
        self.parts.contains(&Part::Switch)
    }

    /// The OID for a switch and an outlet index (already offset). `None`
    /// when a negative index results.
    pub fn render(&self, switch: u32, outlet: i64) -> Option<Oid> {
        let outlet = u32::try_from(outlet).ok()?;
        Some(Oid(self
            .parts
            .iter()
            .map(|p| match p {
                Part::Arc(a) => *a,
                Part::Switch => switch,
                Part::Outlet => outlet,
            })
            .collect()))
    }

    /// Matches an OID suffix against the template: `(switch, outlet index)`.
    pub fn match_suffix(&self, suffix: &[u32]) -> Option<(u32, u32)> {
        if suffix.len() != self.parts.len() {
            return None;
        }
        let (mut sw, mut out) = (1, None);
        for (p, &a) in self.parts.iter().zip(suffix) {
            match p {
                Part::Arc(x) if *x != a => return None,
                Part::Arc(_) => {}
                Part::Switch => sw = a,
                Part::Outlet => out = Some(a),
            }
        }
        out.map(|o| (sw, o))
    }
}

/// One kind of device within a profile.
#[derive(Clone, Debug)]
pub struct Variant {
    /// Short identifier (`apc-rpdu`).
    pub id: String,
    /// What logs call it.
    pub label: String,
    /// sysObjectID values that select it.
    pub sys_object_ids: Vec<Oid>,
    /// Where an outlet's state is read.
    pub status: Template,
    /// Where an outlet is switched.
    pub control: Template,
    /// The table of outlet names (walked for `list` and names given as plugs).
    pub names: Option<Oid>,
    /// How the names table is indexed below `names` (default `{outlet}`).
    pub names_index: Template,
    /// OID index = outlet number + this (Eaton Managed: −1).
    pub index_offset: i64,
    /// Added to the index of the control OID only (Eaton Switched: +1).
    pub control_offset: i64,
    /// What the alias column of a listing shows.
    pub alias: Alias,
    /// A names-table value that means "no outlet here".
    pub absent_value: Option<String>,
    /// State value meaning on.
    pub state_on: i64,
    /// State value meaning off.
    pub state_off: i64,
    /// Command value that switches on.
    pub turn_on: i64,
    /// Command value that switches off.
    pub turn_off: i64,
    /// Where one outlet's load is read, if the device meters per outlet.
    pub load: Option<Template>,
    /// Multiplier from the load OID's unit to watts.
    pub load_scale: f64,
}

impl Variant {
    /// True for devices addressed as switch:outlet.
    pub fn has_switches(&self) -> bool {
        self.status.has_switch()
    }
}

/// A PDU profile.
#[derive(Clone, Debug)]
pub struct Profile {
    /// Its name (`apc`).
    pub name: String,
    /// One line about it.
    pub description: String,
    /// The variants, in the order they are tried.
    pub variants: Vec<Arc<Variant>>,
    /// The variant used when no sysObjectID matches.
    pub fallback: Option<Arc<Variant>>,
}

/// The sysObjectID scalar (SNMPv2-MIB), read to pick a variant.
pub fn sys_object_id() -> Oid {
    Oid(vec![1, 3, 6, 1, 2, 1, 1, 2, 0])
}

impl Profile {
    /// Parses a profile file's text.
    pub fn parse(text: &str) -> Result<Profile, String> {
        let raw: RawProfile =
            toml::from_str(text).map_err(|e| format!("invalid PDU profile: {e}"))?;
        if raw.variant.is_empty() {
            return Err(format!("PDU profile '{}' has no [[variant]]", raw.name));
        }
        let mut variants = Vec::new();
        for v in raw.variant {
            let ctx = |e: String| format!("PDU profile '{}', variant '{}': {e}", raw.name, v.id);
            let names_index =
                Template::parse(v.names_index.as_deref().unwrap_or("{outlet}")).map_err(ctx)?;
            let variant = Variant {
                label: v.label.clone().unwrap_or_else(|| v.id.clone()),
                sys_object_ids: v
                    .sys_object_ids
                    .iter()
                    .map(|s| Oid::parse(s))
                    .collect::<Result<_, _>>()
                    .map_err(ctx)?,
                status: Template::parse(&v.status).map_err(ctx)?,
                control: Template::parse(&v.control).map_err(ctx)?,
                names: v
                    .names
                    .as_deref()
                    .map(Oid::parse)
                    .transpose()
                    .map_err(ctx)?,
                names_index,
                index_offset: v.index_offset,
                control_offset: v.control_offset,
                alias: v.alias,
                absent_value: v.absent_value,
                state_on: v.state_on,
                state_off: v.state_off,
                turn_on: v.turn_on,
                turn_off: v.turn_off,
                load: v
                    .load
                    .as_deref()
                    .map(Template::parse)
                    .transpose()
                    .map_err(ctx)?,
                load_scale: v.load_scale,
                id: v.id.clone(),
            };
            if variant.state_on == variant.state_off {
                return Err(ctx("state_on and state_off are the same value".into()));
            }
            if !variant.load_scale.is_finite() || variant.load_scale <= 0.0 {
                return Err(ctx("load_scale must be a positive number".into()));
            }
            variants.push(Arc::new(variant));
        }
        let fallback =
            match &raw.fallback {
                Some(id) => Some(variants.iter().find(|v| &v.id == id).cloned().ok_or_else(
                    || {
                        format!(
                            "PDU profile '{}': no variant '{id}' for the fallback",
                            raw.name
                        )
                    },
                )?),
                None if variants.len() == 1 => variants.first().cloned(),
                None => None,
            };
        Ok(Profile {
            name: raw.name,
            description: raw.description,
            variants,
            fallback,
        })
    }

    /// A built-in profile by name (`apc`, `eaton`).
    pub fn builtin(name: &str) -> Option<Profile> {
        BUILTIN
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, text)| Profile::parse(text).ok())
    }

    /// The names of the built-in profiles.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// A built-in name, or else a path to a profile file.
    pub fn load(name_or_path: &str) -> Result<Profile, String> {
        if let Some(p) = Profile::builtin(name_or_path) {
            return Ok(p);
        }
        let path = Path::new(name_or_path);
        if !name_or_path.contains('/') && !name_or_path.ends_with(".toml") {
            return Err(format!(
                "unknown PDU profile '{name_or_path}' (built-in: {}; or give a path to a profile file)",
                Profile::builtin_names().join(", ")
            ));
        }
        // Bounded: a profile is a few kilobytes; a device file must not hang us.
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| {
                std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_PROFILE), &mut text)
            })
            .map_err(|e| format!("cannot read PDU profile {}: {e}", path.display()))?;
        Profile::parse(&text)
    }

    /// The variant for a device whose sysObjectID is `sys` (`None`: unreadable).
    pub fn pick(&self, sys: Option<&Oid>) -> Option<Arc<Variant>> {
        if let Some(sys) = sys {
            if let Some(v) = self
                .variants
                .iter()
                .find(|v| v.sys_object_ids.contains(sys))
            {
                return Some(v.clone());
            }
        }
        self.fallback.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_pick_by_sys_object_id() {
        for (name, text) in BUILTIN {
            Profile::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let apc = Profile::builtin("apc").expect("apc profile");
        let rpdu = apc
            .pick(Some(&Oid::parse(".1.3.6.1.4.1.318.1.3.4.5").unwrap()))
            .unwrap();
        assert_eq!(rpdu.id, "apc-rpdu");
        assert_eq!(
            rpdu.control.render(1, 7).unwrap().to_string(),
            ".1.3.6.1.4.1.318.1.1.12.3.3.1.1.4.7"
        );
        assert_eq!(apc.pick(None).unwrap().id, "apc-ms");
        let msp = apc
            .pick(Some(&Oid::parse(".1.3.6.1.4.1.318.1.3.4.4").unwrap()))
            .unwrap();
        assert!(msp.has_switches());
        assert_eq!(
            msp.status.render(2, 5).unwrap().to_string(),
            ".1.3.6.1.4.1.318.1.1.6.7.1.1.5.2.1.5"
        );
        assert_eq!(msp.names_index.match_suffix(&[2, 1, 5]), Some((2, 5)));
        let eaton = Profile::builtin("eaton").unwrap();
        assert!(eaton
            .pick(Some(&Oid::parse(".1.3.6.1.4.1.1.1").unwrap()))
            .is_none());
    }

    #[test]
    fn bad_profiles_are_refused_with_a_reason() {
        let e = Profile::parse("name='x'\n[[variant]]\nid='a'\nstatus='1.3.{outlet}'\ncontrol='1.3.{outlet}'\nstate_on=1\nstate_off=1\nturn_on=1\nturn_off=2\n").unwrap_err();
        assert!(e.contains("same value"), "{e}");
        assert!(Profile::parse("name='x'\nvariant=[]\n").is_err());
        assert!(Profile::load("nosuch")
            .unwrap_err()
            .contains("built-in: apc, eaton"));
    }
}
