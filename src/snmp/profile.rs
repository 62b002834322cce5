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

use super::ber::{NotAnOid, Oid};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Text that is not an OID template (as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an OID template")]
pub struct NotATemplate(pub String);

/// What is wrong with one variant of a profile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VariantProblem {
    /// An OID template that does not parse.
    #[error(transparent)]
    Template(#[from] NotATemplate),
    /// An OID that does not parse.
    #[error(transparent)]
    Oid(#[from] NotAnOid),
    /// One value for on and off.
    #[error("state_on and state_off are the same value")]
    SameStates,
    /// A load scale that is not a positive number.
    #[error("load_scale must be a positive number")]
    LoadScale,
    /// A link column without the values that mean down.
    #[error("link needs link_down (the values that mean the link is down)")]
    LinkValues,
}

/// Why a PDU profile cannot be loaded. The texts are what users read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Text that is not a profile (TOML or field errors).
    #[error("invalid PDU profile: {0}")]
    Toml(toml::de::Error),
    /// A profile without variants (its name).
    #[error("PDU profile '{0}' has no [[variant]]")]
    NoVariant(String),
    /// A variant that is wrong.
    #[error("PDU profile '{profile}', variant '{variant}': {problem}")]
    Variant {
        /// The profile's name.
        profile: String,
        /// The variant's id.
        variant: String,
        /// What is wrong.
        problem: VariantProblem,
    },
    /// A fallback that names no variant.
    #[error("PDU profile '{profile}': no variant '{id}' for the fallback")]
    Fallback {
        /// The profile's name.
        profile: String,
        /// The fallback named.
        id: String,
    },
    /// Neither a built-in name nor a path (the text as given).
    #[error(
        "unknown PDU profile '{0}' (built-in: {}; or give a path to a profile file)",
        Profile::builtin_names().join(", ")
    )]
    Unknown(String),
    /// A profile file that cannot be read.
    #[error("cannot read PDU profile {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Largest profile file read.
const MAX_PROFILE: u64 = 1 << 20;

/// The built-in profiles, by name.
const BUILTIN: &[(&str, &str)] = &[
    ("apc", include_str!("../../agents/pdu/apc.toml")),
    ("eaton", include_str!("../../agents/pdu/eaton.toml")),
    ("ibmblade", include_str!("../../agents/pdu/ibmblade.toml")),
    (
        "intelmodular",
        include_str!("../../agents/pdu/intelmodular.toml"),
    ),
    ("ipdu", include_str!("../../agents/pdu/ipdu.toml")),
    ("emerson", include_str!("../../agents/pdu/emerson.toml")),
    ("ifmib", include_str!("../../agents/pdu/ifmib.toml")),
];

/// What switching a profile's ports does to the node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// The outlets feed the node: off cuts its power.
    #[default]
    Power,
    /// The ports are the node's network links (a switch's IF-MIB): off
    /// isolates the node, which keeps running (fabric fencing).
    Isolated,
}

/// What the alias column of a listing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Alias {
    /// The value of the names table (the outlet's configured name).
    #[default]
    Value,
    /// The outlet number again (devices whose table holds numbers).
    Number,
    /// Nothing: the device has no outlet names (blade chassis).
    None,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    fallback: Option<String>,
    #[serde(default)]
    effect: Effect,
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
    list_table: Option<String>,
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
    #[serde(default)]
    more_names: Vec<String>,
    #[serde(default)]
    link: Option<String>,
    #[serde(default)]
    link_up: Option<i64>,
    #[serde(default)]
    link_down: Vec<i64>,
}

fn one() -> f64 {
    1.0
}

/// Most arcs an `{index}` outlet identifier has.
pub const MAX_INDEX: usize = 6;

/// An outlet identified by several arcs (`{index}`: Emerson's
/// PDU.BRANCH.RECEPTACLE), written as dotted numbers (`1.1.3`); empty for
/// devices that number outlets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Index {
    arcs: [u32; MAX_INDEX],
    len: u8,
}

impl Index {
    /// From arcs; `None` when there are none or more than [`MAX_INDEX`].
    pub fn from_arcs(arcs: &[u32]) -> Option<Index> {
        if arcs.is_empty() || arcs.len() > MAX_INDEX {
            return None;
        }
        let mut i = Index::default();
        i.arcs[..arcs.len()].copy_from_slice(arcs);
        i.len = arcs.len() as u8;
        Some(i)
    }

    /// `1.1.3` (numbers only, no empty arc).
    pub fn parse(text: &str) -> Option<Index> {
        let arcs: Option<Vec<u32>> = text
            .split('.')
            .map(|a| {
                a.bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| a.parse().ok())
                    .flatten()
            })
            .collect();
        Index::from_arcs(&arcs?)
    }

    /// The arcs.
    pub fn arcs(&self) -> &[u32] {
        &self.arcs[..usize::from(self.len)]
    }
}

impl std::fmt::Display for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (k, a) in self.arcs().iter().enumerate() {
            if k > 0 {
                f.write_str(".")?;
            }
            write!(f, "{a}")?;
        }
        Ok(())
    }
}

/// An OID with `{switch}` / `{outlet}` placeholders, or a final `{index}`
/// (an outlet identified by several arcs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Arc(u32),
    Switch,
    Outlet,
    Index,
}

impl Template {
    /// Parses `.1.3.6…{outlet}`.
    pub fn parse(text: &str) -> Result<Template, NotATemplate> {
        let mut parts = Vec::new();
        for a in text.trim().trim_start_matches('.').split('.') {
            parts.push(match a {
                "{switch}" => Part::Switch,
                "{outlet}" => Part::Outlet,
                "{index}" => Part::Index,
                n => Part::Arc(n.parse().map_err(|_| NotATemplate(text.to_string()))?),
            });
        }
        // `{index}` takes the rest of the OID: it can only end it, alone.
        let indexes = parts.iter().filter(|p| **p == Part::Index).count();
        if indexes > 1
            || (indexes == 1 && parts.last() != Some(&Part::Index))
            || (indexes == 1
                && parts
                    .iter()
                    .any(|p| matches!(p, Part::Outlet | Part::Switch)))
        {
            return Err(NotATemplate(text.to_string()));
        }
        Ok(Template { parts })
    }

    /// True when the template uses `{switch}`.
    pub fn has_switch(&self) -> bool {
        self.parts.contains(&Part::Switch)
    }

    /// True when the template ends in `{index}`.
    pub fn has_index(&self) -> bool {
        self.parts.last() == Some(&Part::Index)
    }

    /// The OID for a switch and an outlet index (already offset). `None`
    /// when a negative index results.
    pub fn render(&self, switch: u32, outlet: i64) -> Option<Oid> {
        self.render_at(switch, outlet, None)
    }

    /// As [`render`](Self::render); `{index}` takes `index`'s arcs, or the
    /// outlet number when there is none.
    pub fn render_at(&self, switch: u32, outlet: i64, index: Option<&Index>) -> Option<Oid> {
        let outlet = u32::try_from(outlet).ok()?;
        let mut arcs = Vec::with_capacity(self.parts.len() + MAX_INDEX);
        for p in &self.parts {
            match p {
                Part::Arc(a) => arcs.push(*a),
                Part::Switch => arcs.push(switch),
                Part::Outlet => arcs.push(outlet),
                Part::Index => match index {
                    Some(i) => arcs.extend_from_slice(i.arcs()),
                    None => arcs.push(outlet),
                },
            }
        }
        Some(Oid(arcs))
    }

    /// Matches an OID suffix against the template: `(switch, outlet index)`
    /// (for `{index}`, its last arc).
    pub fn match_suffix(&self, suffix: &[u32]) -> Option<(u32, u32)> {
        if self.has_index() {
            let n = self.parts.len() - 1;
            let (head, index) = (suffix.get(..n)?, suffix.get(n..)?);
            let prefix_ok = self.parts[..n]
                .iter()
                .zip(head)
                .all(|(p, a)| matches!(p, Part::Arc(x) if x == a));
            Index::from_arcs(index).filter(|_| prefix_ok)?;
            return index.last().map(|&o| (1, o));
        }
        if suffix.len() != self.parts.len() {
            return None;
        }
        let (mut sw, mut out) = (1, None);
        for (p, &a) in self.parts.iter().zip(suffix) {
            match p {
                Part::Arc(x) if *x != a => return None,
                Part::Arc(_) | Part::Index => {}
                Part::Switch => sw = a,
                Part::Outlet => out = Some(a),
            }
        }
        out.map(|o| (sw, o))
    }

    /// The `{index}` arcs of a suffix that [`match_suffix`](Self::match_suffix) matched.
    pub fn index_of(&self, suffix: &[u32]) -> Option<Index> {
        self.match_suffix(suffix)?;
        self.has_index()
            .then(|| Index::from_arcs(&suffix[self.parts.len() - 1..]))
            .flatten()
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
    /// The table walked to enumerate outlets for `list` when the device
    /// has no names table (indexed like `names_index`).
    pub list_table: Option<Oid>,
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
    /// Further names tables a name given as a plug is looked up in (IF-MIB
    /// ifName besides ifDescr), indexed like `names`.
    pub more_names: Vec<Oid>,
    /// Where a port's link (operational) state is read: a port is off only
    /// once it also reads one of `link_down` here (IF-MIB ifOperStatus).
    pub link: Option<Template>,
    /// The link value meaning up.
    pub link_up: i64,
    /// The link values meaning down.
    pub link_down: Vec<i64>,
}

impl Variant {
    /// True for devices addressed as switch:outlet.
    pub fn has_switches(&self) -> bool {
        self.status.has_switch()
    }

    /// True for devices whose outlets are identified by several arcs
    /// (`{index}`, given as `1.1.3`).
    pub fn has_index(&self) -> bool {
        self.status.has_index()
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
    /// What switching off does to the node.
    pub effect: Effect,
}

/// The sysObjectID scalar (SNMPv2-MIB), read to pick a variant.
pub fn sys_object_id() -> Oid {
    Oid(vec![1, 3, 6, 1, 2, 1, 1, 2, 0])
}

impl Profile {
    /// Parses a profile file's text.
    pub fn parse(text: &str) -> Result<Profile, ProfileError> {
        let raw: RawProfile = toml::from_str(text).map_err(ProfileError::Toml)?;
        if raw.variant.is_empty() {
            return Err(ProfileError::NoVariant(raw.name));
        }
        let mut variants = Vec::new();
        for v in raw.variant {
            let ctx = |e: VariantProblem| ProfileError::Variant {
                profile: raw.name.clone(),
                variant: v.id.clone(),
                problem: e,
            };
            let names_index = Template::parse(v.names_index.as_deref().unwrap_or("{outlet}"))
                .map_err(|e| ctx(e.into()))?;
            let variant = Variant {
                label: v.label.clone().unwrap_or_else(|| v.id.clone()),
                sys_object_ids: v
                    .sys_object_ids
                    .iter()
                    .map(|s| Oid::parse(s))
                    .collect::<Result<_, _>>()
                    .map_err(|e| ctx(e.into()))?,
                status: Template::parse(&v.status).map_err(|e| ctx(e.into()))?,
                control: Template::parse(&v.control).map_err(|e| ctx(e.into()))?,
                names: v
                    .names
                    .as_deref()
                    .map(Oid::parse)
                    .transpose()
                    .map_err(|e| ctx(e.into()))?,
                names_index,
                list_table: v
                    .list_table
                    .as_deref()
                    .map(Oid::parse)
                    .transpose()
                    .map_err(|e| ctx(e.into()))?,
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
                    .map_err(|e| ctx(e.into()))?,
                load_scale: v.load_scale,
                more_names: v
                    .more_names
                    .iter()
                    .map(|s| Oid::parse(s))
                    .collect::<Result<_, _>>()
                    .map_err(|e| ctx(e.into()))?,
                link: v
                    .link
                    .as_deref()
                    .map(Template::parse)
                    .transpose()
                    .map_err(|e| ctx(e.into()))?,
                link_up: v.link_up.unwrap_or(1),
                link_down: v.link_down.clone(),
                id: v.id.clone(),
            };
            if variant.link.is_some() && variant.link_down.is_empty() {
                return Err(ctx(VariantProblem::LinkValues));
            }
            if variant.state_on == variant.state_off {
                return Err(ctx(VariantProblem::SameStates));
            }
            if !variant.load_scale.is_finite() || variant.load_scale <= 0.0 {
                return Err(ctx(VariantProblem::LoadScale));
            }
            variants.push(Arc::new(variant));
        }
        let fallback =
            match &raw.fallback {
                Some(id) => Some(variants.iter().find(|v| &v.id == id).cloned().ok_or_else(
                    || ProfileError::Fallback {
                        profile: raw.name.clone(),
                        id: id.clone(),
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
            effect: raw.effect,
        })
    }

    /// A built-in profile by name (`apc`, `eaton`).
    pub fn builtin(name: &str) -> Option<Profile> {
        // Parsed once per process: a fleet builds one method per node, and
        // many nodes name the same profile. Variants are shared (`Arc`).
        static PARSED: OnceLock<Vec<(&str, Profile)>> = OnceLock::new();
        PARSED
            .get_or_init(|| {
                BUILTIN
                    .iter()
                    .filter_map(|(n, text)| Profile::parse(text).ok().map(|p| (*n, p)))
                    .collect()
            })
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, p)| p.clone())
    }

    /// The names of the built-in profiles.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// A built-in name, or else a path to a profile file.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Some(p) = Profile::builtin(name_or_path) {
            return Ok(p);
        }
        let path = Path::new(name_or_path);
        if !name_or_path.contains('/') && !name_or_path.ends_with(".toml") {
            return Err(ProfileError::Unknown(name_or_path.to_string()));
        }
        // Bounded: a profile is a few kilobytes; a device file must not hang us.
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| {
                std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_PROFILE), &mut text)
            })
            .map_err(|source| ProfileError::Read {
                path: path.to_path_buf(),
                source,
            })?;
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

    /// One row per device: the fence-agents 4.12.1 facts, written out here
    /// independently of `agents/pdu/*.toml`, against what the profile
    /// resolves for bay/outlet 3.
    #[test]
    fn blade_and_ipdu_profiles_row_by_row() {
        struct Row {
            profile: &'static str,
            sys: Option<&'static str>,
            variant: &'static str,
            status: &'static str,
            control: &'static str,
            names: Option<&'static str>,
            list: &'static str,
            alias: Alias,
            read: (i64, i64),
            write: (i64, i64),
        }
        let rows = [
            Row {
                profile: "ibmblade",
                sys: None,
                variant: "ibm-bladecenter",
                status: ".1.3.6.1.4.1.2.3.51.2.22.1.5.1.1.4.3",
                control: ".1.3.6.1.4.1.2.3.51.2.22.1.6.1.1.7.3",
                names: None,
                list: ".1.3.6.1.4.1.2.3.51.2.22.1.5.1.1.4",
                alias: Alias::None,
                read: (1, 0),
                write: (1, 0),
            },
            Row {
                profile: "intelmodular",
                sys: None,
                variant: "intel-modular",
                status: ".1.3.6.1.4.1.343.2.19.1.2.10.202.1.1.6.3",
                control: ".1.3.6.1.4.1.343.2.19.1.2.10.202.1.1.6.3",
                names: None,
                list: ".1.3.6.1.4.1.343.2.19.1.2.10.202.1.1.6",
                alias: Alias::None,
                read: (2, 0),
                write: (2, 3),
            },
            Row {
                profile: "ipdu",
                sys: Some(".1.3.6.1.4.1.2.6.223"),
                variant: "ibm-ipdu",
                status: ".1.3.6.1.4.1.2.6.223.8.2.2.1.11.3",
                control: ".1.3.6.1.4.1.2.6.223.8.2.2.1.11.3",
                names: Some(".1.3.6.1.4.1.2.6.223.8.2.2.1.2"),
                list: ".1.3.6.1.4.1.2.6.223.8.2.2.1.2",
                alias: Alias::Value,
                read: (1, 0),
                write: (1, 0),
            },
            // Upstream uses the iPDU table whatever the sysObjectID says.
            Row {
                profile: "ipdu",
                sys: Some(".1.3.6.1.4.1.99.1"),
                variant: "ibm-ipdu",
                status: ".1.3.6.1.4.1.2.6.223.8.2.2.1.11.3",
                control: ".1.3.6.1.4.1.2.6.223.8.2.2.1.11.3",
                names: Some(".1.3.6.1.4.1.2.6.223.8.2.2.1.2"),
                list: ".1.3.6.1.4.1.2.6.223.8.2.2.1.2",
                alias: Alias::Value,
                read: (1, 0),
                write: (1, 0),
            },
            // Receptacles are PDU.BRANCH.RECEPTACLE: the plug 3 is index 3,
            // `1.1.3` is checked below.
            Row {
                profile: "emerson",
                sys: None,
                variant: "emerson-mpx",
                status: ".1.3.6.1.4.1.476.1.42.3.8.50.20.1.95.3",
                control: ".1.3.6.1.4.1.476.1.42.3.8.50.20.1.100.3",
                names: Some(".1.3.6.1.4.1.476.1.42.3.8.50.20.1.10"),
                list: ".1.3.6.1.4.1.476.1.42.3.8.50.20.1.10",
                alias: Alias::Value,
                read: (2, 1),
                write: (1, 0),
            },
        ];
        for r in rows {
            let p = Profile::builtin(r.profile).expect(r.profile);
            let sys = r.sys.map(|s| Oid::parse(s).unwrap());
            let v = p.pick(sys.as_ref()).expect("a variant");
            let ctx = format!("{} {:?}", r.profile, r.sys);
            assert_eq!(v.id, r.variant, "{ctx}");
            let at = |t: &Template| t.render(1, 3 + v.index_offset).unwrap().to_string();
            assert_eq!(at(&v.status), r.status, "{ctx}");
            assert_eq!(
                v.control
                    .render(1, 3 + v.index_offset + v.control_offset)
                    .unwrap()
                    .to_string(),
                r.control,
                "{ctx}"
            );
            assert_eq!(v.names.as_ref().map(|o| o.to_string()).as_deref(), r.names);
            let listed = v.names.clone().or_else(|| v.list_table.clone()).unwrap();
            assert_eq!(listed.to_string(), r.list, "{ctx}");
            assert_eq!(v.names_index.match_suffix(&[3]), Some((1, 3)), "{ctx}");
            assert_eq!(v.alias, r.alias, "{ctx}");
            assert_eq!((v.state_on, v.state_off), r.read, "{ctx}");
            assert_eq!((v.turn_on, v.turn_off), r.write, "{ctx}");
            assert!(!v.has_switches() && v.load.is_none(), "{ctx}");
            assert_eq!(v.has_index(), r.profile == "emerson", "{ctx}");
        }
        let em = Profile::builtin("emerson").unwrap().pick(None).unwrap();
        let i = Index::parse("1.1.3").unwrap();
        assert_eq!(
            em.control.render_at(1, 3, Some(&i)).unwrap().to_string(),
            ".1.3.6.1.4.1.476.1.42.3.8.50.20.1.100.1.1.3"
        );
        assert_eq!(em.names_index.match_suffix(&[1, 2, 7]), Some((1, 7)));
        assert_eq!(
            em.names_index.index_of(&[1, 2, 7]).map(|i| i.to_string()),
            Some("1.2.7".into())
        );
    }

    /// The switch profile (fabric fencing), against IF-MIB (RFC 2863) and
    /// fence-agents 4.12.1 facts written out here: ifAdminStatus read and
    /// written (up 1, down 2), ifOperStatus as the link, ifDescr and
    /// ifName as names, the effect isolation.
    #[test]
    fn the_switch_profile_row() {
        let p = Profile::builtin("ifmib").expect("ifmib profile");
        assert_eq!(p.effect, Effect::Isolated);
        let v = p.pick(None).expect("one variant for any device");
        let at = |t: &Template| t.render(1, 3).unwrap().to_string();
        assert_eq!(at(&v.status), ".1.3.6.1.2.1.2.2.1.7.3");
        assert_eq!(at(&v.control), ".1.3.6.1.2.1.2.2.1.7.3");
        assert_eq!(at(v.link.as_ref().unwrap()), ".1.3.6.1.2.1.2.2.1.8.3");
        assert_eq!(
            v.names.as_ref().map(|o| o.to_string()).as_deref(),
            Some(".1.3.6.1.2.1.2.2.1.2")
        );
        let more: Vec<String> = v.more_names.iter().map(|o| o.to_string()).collect();
        assert_eq!(more, [".1.3.6.1.2.1.31.1.1.1.1"]);
        assert_eq!(
            (v.state_on, v.state_off, v.turn_on, v.turn_off),
            (1, 2, 1, 2)
        );
        assert_eq!((v.link_up, v.link_down.as_slice()), (1, &[2, 6, 7][..]));
        assert!(!v.has_switches() && !v.has_index() && v.load.is_none());
        for other in ["apc", "eaton", "ipdu"] {
            assert_eq!(Profile::builtin(other).unwrap().effect, Effect::Power);
        }
        let e = Profile::parse(
            "name='x'\n[[variant]]\nid='a'\nstatus='1.3.{outlet}'\ncontrol='1.3.{outlet}'\n\
             state_on=1\nstate_off=2\nturn_on=1\nturn_off=2\nlink='1.4.{outlet}'\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("link needs link_down"), "{e}");
    }

    #[test]
    fn index_templates_and_dotted_plugs() {
        for bad in ["1.3.{index}.4", "1.3.{index}.{index}", "1.{switch}.{index}"] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
        for (text, ok) in [
            ("1.1.3", true),
            ("7", true),
            ("1..3", false),
            ("a.1", false),
            ("", false),
            ("1.2.3.4.5.6.7", false),
            ("+1.2", false),
        ] {
            assert_eq!(Index::parse(text).is_some(), ok, "{text}");
        }
        let t = Template::parse(".1.3.{index}").unwrap();
        assert_eq!(t.match_suffix(&[]), None);
        assert_eq!(t.render(1, 9).unwrap().to_string(), ".1.3.9");
    }

    #[test]
    fn bad_profiles_are_refused_with_a_reason() {
        let e = Profile::parse("name='x'\n[[variant]]\nid='a'\nstatus='1.3.{outlet}'\ncontrol='1.3.{outlet}'\nstate_on=1\nstate_off=1\nturn_on=1\nturn_off=2\n").unwrap_err();
        assert!(
            matches!(
                &e,
                ProfileError::Variant {
                    problem: VariantProblem::SameStates,
                    ..
                }
            ),
            "{e}"
        );
        assert!(Profile::parse("name='x'\nvariant=[]\n").is_err());
        assert!(matches!(
            Profile::load("nosuch"),
            Err(ProfileError::Unknown(_))
        ));
    }

    #[test]
    fn messages_read_as_they_always_have() {
        let text = |t: &str| Profile::parse(t).unwrap_err().to_string();
        let variant = |extra: &str| {
            format!(
                "name='x'\n[[variant]]\nid='a'\nstatus='1.3.{{outlet}}'\n\
                 control='1.3.{{outlet}}'\nstate_on=1\nstate_off=2\nturn_on=1\n\
                 turn_off=2\n{extra}"
            )
        };
        assert!(Profile::parse(&variant("")).is_ok());
        assert!(text("name=").starts_with("invalid PDU profile: "));
        assert_eq!(
            text("name='x'\nvariant=[]\n"),
            "PDU profile 'x' has no [[variant]]"
        );
        assert_eq!(
            text(&variant("state_on=2\n").replace("state_on=1\n", "")),
            "PDU profile 'x', variant 'a': state_on and state_off are the same value"
        );
        assert_eq!(
            text(&variant("load_scale=0.0\n")),
            "PDU profile 'x', variant 'a': load_scale must be a positive number"
        );
        assert_eq!(
            text(&variant("load='1.3.x'\n")),
            "PDU profile 'x', variant 'a': '1.3.x' is not an OID template"
        );
        assert_eq!(
            text(&variant("names='1'\n")),
            "PDU profile 'x', variant 'a': '1' is not an object identifier"
        );
        assert_eq!(
            text(&variant("").replace("name='x'\n", "name='x'\nfallback='b'\n")),
            "PDU profile 'x': no variant 'b' for the fallback"
        );
        assert_eq!(
            Profile::load("nosuch").unwrap_err().to_string(),
            "unknown PDU profile 'nosuch' (built-in: apc, eaton, ibmblade, intelmodular, ipdu, emerson, ifmib; or give a path to a profile file)"
        );
        assert!(Profile::load("/nonexistent/p.toml")
            .unwrap_err()
            .to_string()
            .starts_with("cannot read PDU profile /nonexistent/p.toml: No such file"));
    }
}
