//! The file format of the agent definitions under `agents/`, parsed and
//! resolved: shared options merged with each family's own, overrides applied.
//!
//! This module is compiled twice: by `build.rs`, which turns the resolved
//! definitions into the static tables of [`super::defs`] (so an agent call
//! parses no TOML, and a broken file fails the build with the file's name and
//! the problem), and by the library's tests, which check the same rules on
//! broken input. It is self-contained (no `crate::` paths) for that reason,
//! and does no I/O: the caller supplies the texts.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The value type of an option, as written (`type = "second"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SrcType {
    /// A flag.
    Boolean,
    /// Free text.
    String,
    /// A whole number.
    Integer,
    /// A whole number of seconds.
    Second,
    /// One of `choices`.
    Select,
}

/// How a flag's value is read, as written (`truth = "value"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SrcTruth {
    /// On whenever set.
    #[default]
    Presence,
    /// On only for `""` or `1`.
    Value,
}

/// One `[[option]]` (field meanings: the top of `agents/common.toml`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SrcOption {
    /// Long name without dashes.
    pub long: String,
    /// One-letter short option.
    #[serde(default)]
    pub short: Option<String>,
    /// Deprecated stdin/metadata key.
    #[serde(default)]
    pub old_key: Option<String>,
    /// Value type.
    #[serde(rename = "type")]
    pub ty: SrcType,
    /// Usage placeholder.
    #[serde(default)]
    pub metavar: Option<String>,
    /// Default value.
    #[serde(default)]
    pub default: Option<String>,
    /// Metadata `required`.
    #[serde(default)]
    pub required: bool,
    /// Metadata sort key.
    pub order: u32,
    /// A select's values.
    #[serde(default)]
    pub choices: Vec<String>,
    /// A flag's truth rule.
    #[serde(default)]
    pub truth: SrcTruth,
    /// Why fencekit accepts but does not use the option.
    #[serde(default)]
    pub ignored: Option<String>,
    /// A fencekit-only option.
    #[serde(default)]
    pub extension: bool,
    /// One-line description.
    pub desc: String,
}

impl SrcOption {
    /// The stdin and metadata key: the long name with `-` replaced by `_`.
    pub fn key(&self) -> String {
        self.long.replace('-', "_")
    }
}

/// Changes a family makes to a shared option (`[overrides.KEY]`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Override {
    default: Option<String>,
    metavar: Option<String>,
    desc: Option<String>,
    required: Option<bool>,
    /// Replaces the shared option's `ignored` reason; `""` means this agent uses it.
    ignored: Option<String>,
}

/// One `[[alias]]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SrcAlias {
    /// The alias's name.
    pub name: String,
    /// Its one-line description.
    pub shortdesc: String,
    /// Option defaults that differ from the family's (key → value, sorted by key).
    #[serde(default)]
    pub defaults: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommonFile {
    option: Vec<SrcOption>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyFile {
    name: String,
    shortdesc: String,
    longdesc: String,
    vendor_url: String,
    driver: String,
    compat_version: String,
    port_as_ip: bool,
    login_required: bool,
    password_required: bool,
    plug_required: bool,
    actions: Vec<String>,
    hidden_actions: Vec<String>,
    #[serde(default)]
    login_refused: Option<String>,
    #[serde(default)]
    privilege_refused: Option<String>,
    #[serde(default)]
    package: Option<String>,
    #[serde(default)]
    fabric: bool,
    device_failed: Option<String>,
    options: Vec<String>,
    #[serde(default)]
    overrides: BTreeMap<String, Override>,
    #[serde(default)]
    alias: Vec<SrcAlias>,
    #[serde(default)]
    option: Vec<SrcOption>,
}

/// One family, resolved: its options in `options` order with its overrides applied.
#[derive(Clone, Debug)]
pub struct SrcFamily {
    /// Main agent name.
    pub name: String,
    /// One-line description.
    pub shortdesc: String,
    /// Paragraph for metadata and man page.
    pub longdesc: String,
    /// Metadata `vendor-url`.
    pub vendor_url: String,
    /// The platform that serves it, by its registered name (the
    /// library's tests check that one is registered under it).
    pub driver: String,
    /// The fence-agents release followed.
    pub compat_version: String,
    /// `--plug` is the device address.
    pub port_as_ip: bool,
    /// A user name is required.
    pub login_required: bool,
    /// A password is required.
    pub password_required: bool,
    /// A plug is required.
    pub plug_required: bool,
    /// Advertised actions.
    pub actions: Vec<String>,
    /// Accepted, unadvertised actions.
    pub hidden_actions: Vec<String>,
    /// The first error line when the device refuses the credentials
    /// (`login_refused`; none: the agent front's default line).
    pub login_refused: Option<String>,
    /// The first error line when the device accepts the credentials but
    /// refuses the action to them (`privilege_refused`; none: the default).
    pub privilege_refused: Option<String>,
    /// The fence-agents package upstream ships these agents in
    /// (`fence-agents-ipmilan`: Fedora's, RHEL's and FAR's split); the
    /// distribution packages `Provides` it.
    pub package: Option<String>,
    /// Fabric fencing (`fabric = true`): the metadata marks `on` automatic
    /// (unfencing), as fence-agents' `fabric_fencing` does.
    pub fabric: bool,
    /// The first error line for any other failure the device reported
    /// (`device_failed`; none: the default lines by stage).
    pub device_failed: Option<String>,
    /// Aliases.
    pub aliases: Vec<SrcAlias>,
    /// Options, resolved.
    pub options: Vec<SrcOption>,
}

/// Parses and resolves `common` (`agents/common.toml`) and the family files
/// (file name, text), in order; the error names the file and the problem.
pub fn load(common: &str, families: &[(&str, &str)]) -> Result<Vec<SrcFamily>, String> {
    let common: CommonFile =
        toml::from_str(common).map_err(|e| format!("agents/common.toml: {e}"))?;
    let mut out = Vec::new();
    for (file, text) in families {
        let f: FamilyFile = toml::from_str(text).map_err(|e| format!("agents/{file}: {e}"))?;
        out.push(resolve(file, f, &common.option)?);
    }
    Ok(out)
}

fn resolve(file: &str, f: FamilyFile, common: &[SrcOption]) -> Result<SrcFamily, String> {
    for (key, line) in [
        ("login_refused", &f.login_refused),
        ("privilege_refused", &f.privilege_refused),
        ("device_failed", &f.device_failed),
    ] {
        if line
            .as_ref()
            .is_some_and(|l| l.trim().is_empty() || l.contains('\n'))
        {
            return Err(format!("agents/{file}: {key} must be one non-empty line"));
        }
    }
    if let Some(p) = &f.package {
        if !p.starts_with("fence-agents-")
            || !p[13..]
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(format!(
                "agents/{file}: package `{p}` is not a fence-agents package name \
                 (fence-agents-NAME, lowercase)"
            ));
        }
    }
    let mut options = Vec::new();
    for key in &f.options {
        let found = f
            .option
            .iter()
            .chain(common)
            .find(|o| &o.key() == key)
            .ok_or_else(|| format!("agents/{file}: option `{key}` is defined nowhere"))?;
        let mut o = found.clone();
        if let Some(ov) = f.overrides.get(key) {
            // `default = ""` takes the shared default away (the agent has none).
            if let Some(d) = &ov.default {
                o.default = (!d.is_empty()).then(|| d.clone());
            }
            if let Some(m) = &ov.metavar {
                o.metavar = Some(m.clone());
            }
            if let Some(d) = &ov.desc {
                o.desc = d.clone();
            }
            if let Some(r) = ov.required {
                o.required = r;
            }
            if let Some(i) = &ov.ignored {
                o.ignored = (!i.is_empty()).then(|| i.clone());
            }
        }
        options.push(o);
    }
    for key in f.overrides.keys() {
        if !f.options.contains(key) {
            return Err(format!(
                "agents/{file}: override of `{key}`, which the agent does not offer"
            ));
        }
    }
    for o in &f.option {
        if !f.options.contains(&o.key()) {
            return Err(format!(
                "agents/{file}: option `{}` is defined but not listed in `options`",
                o.key()
            ));
        }
    }
    for o in &options {
        if let Some(s) = &o.short {
            if s.chars().count() != 1 {
                return Err(format!(
                    "agents/{file}: short option `{s}` of --{} is not one letter",
                    o.long
                ));
            }
        }
    }
    Ok(SrcFamily {
        name: f.name,
        shortdesc: f.shortdesc,
        longdesc: f.longdesc,
        vendor_url: f.vendor_url,
        driver: f.driver,
        compat_version: f.compat_version,
        port_as_ip: f.port_as_ip,
        login_required: f.login_required,
        password_required: f.password_required,
        plug_required: f.plug_required,
        actions: f.actions,
        hidden_actions: f.hidden_actions,
        login_refused: f.login_refused,
        privilege_refused: f.privilege_refused,
        package: f.package,
        fabric: f.fabric,
        device_failed: f.device_failed,
        aliases: f.alias,
        options,
    })
}
