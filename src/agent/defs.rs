//! The agent definitions under `agents/`, typed.
//!
//! `agents/common.toml` holds the options every agent may share and one file
//! per agent family (`agents/ipmilan.toml`, …) names the agent, its aliases
//! with their default overrides, the options it offers and its actions. They
//! are embedded at build time and are the single source for the argv parser,
//! the stdin reader, validation, `--help`, the metadata XML and the man page.
//! This module only loads and resolves them; it prints nothing.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

const COMMON: &str = include_str!("../../agents/common.toml");
const FAMILIES: &[(&str, &str)] = &[
    ("ipmilan.toml", include_str!("../../agents/ipmilan.toml")),
    ("redfish.toml", include_str!("../../agents/redfish.toml")),
    ("virsh.toml", include_str!("../../agents/virsh.toml")),
    ("apc_snmp.toml", include_str!("../../agents/apc_snmp.toml")),
    (
        "eaton_snmp.toml",
        include_str!("../../agents/eaton_snmp.toml"),
    ),
];

/// The value type of an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptType {
    /// A flag: no value on the command line.
    Boolean,
    /// Free text.
    String,
    /// A whole number (Python `int()` syntax).
    Integer,
    /// A whole number of seconds (Python `int()` syntax).
    Second,
    /// One of the option's `choices`, compared case-insensitively.
    Select,
}

impl OptType {
    /// The metadata `content type` word.
    pub fn as_str(self) -> &'static str {
        match self {
            OptType::Boolean => "boolean",
            OptType::String => "string",
            OptType::Integer => "integer",
            OptType::Second => "second",
            OptType::Select => "select",
        }
    }
}

/// How a flag's stored value is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Truth {
    /// On whenever the key is set, whatever its value (so stdin `x=0` turns it on, as upstream).
    #[default]
    Presence,
    /// On only when the value is empty (bare flag) or `1`.
    Value,
}

/// Which protocol driver serves an agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverKind {
    /// IPMI over LAN (v1.5 and v2.0 RMCP+).
    Ipmi,
    /// Redfish over HTTPS.
    Redfish,
    /// SSH to a hypervisor running virsh.
    Ssh,
    /// SNMP to a switched PDU.
    Snmp,
}

/// One option as written in a definition file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionDef {
    /// Long option name without dashes (`power-timeout`).
    pub long: String,
    /// One-letter short option, if any.
    #[serde(default)]
    pub short: Option<String>,
    /// Deprecated key still accepted on stdin and listed in the metadata.
    #[serde(default)]
    pub old_key: Option<String>,
    /// Value type.
    #[serde(rename = "type")]
    pub ty: OptType,
    /// Placeholder shown as `--long=[metavar]`.
    #[serde(default)]
    pub metavar: Option<String>,
    /// Default value.
    #[serde(default)]
    pub default: Option<String>,
    /// Metadata `required` attribute.
    #[serde(default)]
    pub required: bool,
    /// Metadata sort key.
    pub order: u32,
    /// Allowed values of a select.
    #[serde(default)]
    pub choices: Vec<String>,
    /// How a flag's value is read.
    #[serde(default)]
    pub truth: Truth,
    /// Why fencekit accepts but does not use this option.
    #[serde(default)]
    pub ignored: Option<String>,
    /// A fencekit-only option that upstream's agent does not have: it is
    /// listed in the metadata after upstream's parameters (its `order` must
    /// put it there) and left out of comparisons with upstream.
    #[serde(default)]
    pub extension: bool,
    /// One-line description.
    pub desc: String,
}

impl OptionDef {
    /// The stdin and metadata key: the long name with `-` replaced by `_`.
    pub fn key(&self) -> String {
        self.long.replace('-', "_")
    }

    /// The short letter as a char.
    pub fn short_char(&self) -> Option<char> {
        self.short.as_deref().and_then(|s| s.chars().next())
    }

    /// True when the option takes a value on the command line.
    pub fn takes_value(&self) -> bool {
        self.ty != OptType::Boolean
    }

    /// The option as written in usage and metadata: `-a, --ip=[ip]`, `--verbose-level`.
    pub fn getopt_text(&self) -> String {
        let mut s = String::new();
        if let Some(c) = self.short_char() {
            s.push('-');
            s.push(c);
            s.push_str(", ");
        }
        s.push_str("--");
        s.push_str(&self.long);
        if let Some(m) = &self.metavar {
            s.push_str("=[");
            s.push_str(m);
            s.push(']');
        }
        s
    }
}

/// Changes an agent makes to a shared option.
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

/// An alias as written in a definition file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasDef {
    /// The alias's name (`fence_ilo4`).
    pub name: String,
    /// Its one-line description (metadata `symlink` element).
    pub shortdesc: String,
    /// Option defaults that differ from the agent's (key → value).
    #[serde(default)]
    pub defaults: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommonFile {
    option: Vec<OptionDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyFile {
    name: String,
    shortdesc: String,
    longdesc: String,
    vendor_url: String,
    driver: DriverKind,
    compat_version: String,
    port_as_ip: bool,
    login_required: bool,
    password_required: bool,
    plug_required: bool,
    actions: Vec<String>,
    hidden_actions: Vec<String>,
    options: Vec<String>,
    #[serde(default)]
    overrides: BTreeMap<String, Override>,
    #[serde(default)]
    alias: Vec<AliasDef>,
    #[serde(default)]
    option: Vec<OptionDef>,
}

/// One agent family, resolved: shared options merged with its own, overrides applied.
#[derive(Clone, Debug)]
pub struct Family {
    /// The main agent name (`fence_ipmilan`).
    pub name: String,
    /// One-line description (metadata `shortdesc`).
    pub shortdesc: String,
    /// Paragraph for the metadata `longdesc` and the man page.
    pub longdesc: String,
    /// Metadata `vendor-url`.
    pub vendor_url: String,
    /// The protocol driver.
    pub driver: DriverKind,
    /// The fence-agents release this definition follows.
    pub compat_version: String,
    /// `--plug` is the device address (with `--port-as-ip`), not an outlet.
    pub port_as_ip: bool,
    /// A user name must be given.
    pub login_required: bool,
    /// A password (or password script) must be given.
    pub password_required: bool,
    /// A plug must be given (except for list, list-status and monitor).
    pub plug_required: bool,
    /// Actions listed in the metadata, in order.
    pub actions: Vec<String>,
    /// Actions accepted but not listed.
    pub hidden_actions: Vec<String>,
    /// The aliases.
    pub aliases: Vec<AliasDef>,
    /// Every option, in usage order, with this family's overrides applied.
    pub options: Vec<OptionDef>,
}

/// All definitions, or the first problem found in them.
#[derive(Debug)]
pub struct Defs {
    /// Every agent family.
    pub families: Vec<Family>,
}

/// An agent as invoked under one of its names: the family with that name's
/// default overrides applied.
#[derive(Clone, Debug)]
pub struct Agent {
    /// The name it was invoked as (`fence_ilo4`).
    pub invoked_as: String,
    /// The family, with the alias's defaults applied to `options`.
    pub family: Family,
}

impl Agent {
    /// The option with this key (`power_timeout`).
    pub fn option(&self, key: &str) -> Option<&OptionDef> {
        self.family.options.iter().find(|o| o.key() == key)
    }

    /// True when `action` is accepted (advertised or hidden).
    pub fn accepts_action(&self, action: &str) -> bool {
        self.family
            .actions
            .iter()
            .chain(&self.family.hidden_actions)
            .any(|a| a == action)
    }
}

impl Family {
    /// The getopt table of this family's options (argv parsing).
    pub fn getopt_specs(&self) -> Vec<super::getopt::Spec<'_>> {
        self.options
            .iter()
            .map(|o| super::getopt::Spec {
                short: o.short_char(),
                long: &o.long,
                takes_value: o.takes_value(),
            })
            .collect()
    }

    /// Every name this family answers to: its own, then its aliases.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(|a| a.name.as_str()))
    }
}

/// Parses and resolves the given definition texts (used by [`defs`] and the tests).
pub fn load(common: &str, families: &[(&str, &str)]) -> Result<Defs, String> {
    let common: CommonFile =
        toml::from_str(common).map_err(|e| format!("agents/common.toml: {e}"))?;
    let mut out = Vec::new();
    for (file, text) in families {
        let f: FamilyFile = toml::from_str(text).map_err(|e| format!("agents/{file}: {e}"))?;
        out.push(resolve(file, f, &common.option)?);
    }
    Ok(Defs { families: out })
}

fn resolve(file: &str, f: FamilyFile, common: &[OptionDef]) -> Result<Family, String> {
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
            if let Some(d) = &ov.default {
                o.default = Some(d.clone());
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
    Ok(Family {
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
        aliases: f.alias,
        options,
    })
}

/// The embedded definitions.
///
/// They are checked by the tests below, so a failure here is a build defect,
/// never a consequence of input.
pub fn defs() -> &'static Defs {
    static DEFS: OnceLock<Defs> = OnceLock::new();
    DEFS.get_or_init(|| {
        load(COMMON, FAMILIES)
            .unwrap_or_else(|e| panic!("embedded agent definitions are invalid: {e}"))
    })
}

/// The agent answering to `name` (a bare name such as `fence_ilo4`), with
/// that name's default overrides applied.
pub fn agent(name: &str) -> Option<Agent> {
    for fam in &defs().families {
        if fam.name == name {
            return Some(Agent {
                invoked_as: name.to_string(),
                family: fam.clone(),
            });
        }
        if let Some(alias) = fam.aliases.iter().find(|a| a.name == name) {
            let mut family = fam.clone();
            for o in &mut family.options {
                if let Some(d) = alias.defaults.get(&o.key()) {
                    o.default = Some(d.clone());
                }
            }
            return Some(Agent {
                invoked_as: name.to_string(),
                family,
            });
        }
    }
    None
}

/// Every agent name fencekit answers to, main names and aliases.
pub fn all_names() -> Vec<&'static str> {
    defs().families.iter().flat_map(|f| f.names()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn opt_keys(f: &Family) -> BTreeSet<String> {
        f.options.iter().map(|o| o.key()).collect()
    }

    #[test]
    fn embedded_definitions_load() {
        let d = load(COMMON, FAMILIES).expect("definitions parse");
        assert!(!d.families.is_empty());
        assert_eq!(d.families[0].name, "fence_ipmilan");
    }

    #[test]
    fn short_letters_are_unique_per_agent() {
        for f in &defs().families {
            let mut seen = BTreeSet::new();
            for o in &f.options {
                if let Some(s) = &o.short {
                    assert_eq!(
                        s.chars().count(),
                        1,
                        "{}: short `{s}` is not one letter",
                        o.long
                    );
                    assert!(
                        s != ":" && s != "-",
                        "{}: short `{s}` cannot be parsed",
                        o.long
                    );
                    assert!(seen.insert(s.clone()), "{}: short -{s} used twice", f.name);
                }
            }
        }
    }

    #[test]
    fn long_names_and_keys_are_unique_per_agent() {
        for f in &defs().families {
            let mut seen = BTreeSet::new();
            for o in &f.options {
                assert!(
                    !o.long.is_empty() && !o.long.starts_with('-'),
                    "bad long name {}",
                    o.long
                );
                assert!(
                    !o.long.contains('_') && !o.long.contains('='),
                    "bad long name {}",
                    o.long
                );
                assert!(seen.insert(o.key()), "{}: key {} twice", f.name, o.key());
            }
            for o in &f.options {
                if let Some(old) = &o.old_key {
                    assert!(
                        seen.insert(old.clone()),
                        "{}: old key {old} clashes",
                        f.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_deprecated_key_differs_from_its_replacement() {
        for f in &defs().families {
            for o in &f.options {
                if let Some(old) = &o.old_key {
                    assert_ne!(old, &o.key(), "{}: old key equals the key", o.long);
                    // Upstream's one exception: fence_redfish's internal keys
                    // `redfish-uri` / `systems-uri` are the long names themselves.
                    if !["redfish-uri", "systems-uri"].contains(&old.as_str()) {
                        assert_ne!(
                            old.replace('_', "-"),
                            o.long,
                            "{}: old key is just a spelling",
                            o.long
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn selects_have_choices_and_only_selects_do() {
        for f in &defs().families {
            for o in &f.options {
                if o.ty == OptType::Select {
                    assert!(!o.choices.is_empty(), "{} has no choices", o.long);
                    if let Some(d) = &o.default {
                        assert!(
                            o.choices.contains(d),
                            "{}: default {d} not a choice",
                            o.long
                        );
                    }
                } else {
                    assert!(
                        o.choices.is_empty(),
                        "{} has choices but is no select",
                        o.long
                    );
                }
            }
        }
    }

    #[test]
    fn flags_have_no_placeholder_and_truth_rules_fit() {
        for f in &defs().families {
            for o in &f.options {
                if o.ty == OptType::Boolean {
                    assert!(o.metavar.is_none(), "flag {} has a placeholder", o.long);
                } else {
                    assert_eq!(o.truth, Truth::Presence, "{}: truth is for flags", o.long);
                }
                if let Some(m) = &o.metavar {
                    assert!(
                        !m.is_empty() && !m.contains(']'),
                        "{}: bad placeholder",
                        o.long
                    );
                }
            }
        }
    }

    #[test]
    fn numeric_defaults_parse() {
        for name in all_names() {
            let a = agent(name).expect("known name");
            for o in &a.family.options {
                if matches!(o.ty, OptType::Integer | OptType::Second) {
                    if let Some(d) = &o.default {
                        assert!(d.parse::<i64>().is_ok(), "{name}: {} default {d}", o.long);
                    }
                }
            }
        }
    }

    #[test]
    fn alias_defaults_name_existing_options() {
        for f in &defs().families {
            let keys = opt_keys(f);
            for a in &f.aliases {
                assert!(a.name.starts_with("fence_"), "{}", a.name);
                for k in a.defaults.keys() {
                    assert!(
                        keys.contains(k),
                        "{}: default for unknown option {k}",
                        a.name
                    );
                }
            }
        }
    }

    #[test]
    fn agent_names_are_unique() {
        let names = all_names();
        let set: BTreeSet<_> = names.iter().collect();
        assert_eq!(set.len(), names.len());
    }

    #[test]
    fn actions_are_known_and_unique() {
        const KNOWN: &[&str] = &[
            "on",
            "off",
            "reboot",
            "status",
            "monitor",
            "list",
            "list-status",
            "metadata",
            "manpage",
            "validate-all",
            "diag",
        ];
        for f in &defs().families {
            let all: Vec<_> = f.actions.iter().chain(&f.hidden_actions).collect();
            let set: BTreeSet<_> = all.iter().collect();
            assert_eq!(
                set.len(),
                all.len(),
                "{}: an action is listed twice",
                f.name
            );
            for a in all {
                assert!(
                    KNOWN.contains(&a.as_str()),
                    "{}: unknown action {a}",
                    f.name
                );
            }
            assert_eq!(
                f.actions.first().map(String::as_str),
                Some("on"),
                "metadata lists on first"
            );
            let default = f
                .options
                .iter()
                .find(|o| o.long == "action")
                .and_then(|o| o.default.clone());
            assert!(
                default.is_some_and(|d| f.actions.contains(&d)),
                "{}: default action",
                f.name
            );
        }
    }

    #[test]
    fn the_options_every_front_relies_on_exist() {
        for f in &defs().families {
            let keys = opt_keys(f);
            for k in [
                "action",
                "ip",
                "ipport",
                "username",
                "password",
                "password_script",
                "plug",
                "verbose",
                "verbose_level",
                "debug_file",
                "quiet",
                "version",
                "help",
                "delay",
                "power_timeout",
                "power_wait",
                "stonith_status_sleep",
                "retry_on",
                "disable_timeout",
                "login_timeout",
            ] {
                assert!(keys.contains(k), "{}: missing {k}", f.name);
            }
            assert_eq!(
                keys.contains("port_as_ip"),
                f.port_as_ip,
                "{}: --port-as-ip exactly on port-as-ip agents",
                f.name
            );
        }
    }

    #[test]
    fn extensions_come_after_every_upstream_option() {
        for f in &defs().families {
            let last_upstream = f
                .options
                .iter()
                .filter(|o| !o.extension)
                .map(|o| o.order)
                .max()
                .unwrap_or(0);
            for o in f.options.iter().filter(|o| o.extension) {
                assert!(
                    o.order > last_upstream && o.old_key.is_none() && o.short.is_none(),
                    "{}: extension --{} must sort last and have no short letter or old key",
                    f.name,
                    o.long
                );
            }
        }
    }

    #[test]
    fn ipmi_aliases_carry_upstream_defaults() {
        let d = |name: &str, key: &str| {
            agent(name).and_then(|a| a.option(key).and_then(|o| o.default.clone()))
        };
        for n in [
            "fence_ipmilanplus",
            "fence_ilo3",
            "fence_ilo4",
            "fence_ilo5",
        ] {
            assert_eq!(d(n, "lanplus").as_deref(), Some("1"), "{n}");
        }
        for n in ["fence_ipmilan", "fence_imm", "fence_idrac"] {
            assert_eq!(d(n, "lanplus").as_deref(), Some("0"), "{n}");
        }
        assert_eq!(d("fence_ilo3", "power_wait").as_deref(), Some("4"));
        assert_eq!(d("fence_ilo4", "power_wait").as_deref(), Some("2"));
        assert_eq!(d("fence_ipmilan", "ipport").as_deref(), Some("623"));
        assert!(agent("fence_nonesuch").is_none());
    }

    #[test]
    fn a_broken_definition_is_reported_not_resolved() {
        let bad = r#"
name = "fence_x"
shortdesc = "x"
longdesc = "x"
vendor_url = ""
driver = "ipmi"
compat_version = "1"
port_as_ip = true
login_required = false
password_required = false
plug_required = false
actions = ["on"]
hidden_actions = []
options = ["nope"]
"#;
        let e = load(COMMON, &[("x.toml", bad)]).unwrap_err();
        assert!(e.contains("`nope` is defined nowhere"), "{e}");
        let typo = bad.replace("actions = [\"on\"]", "actions = [\"on\"]\nbogus = 1");
        assert!(load(COMMON, &[("x.toml", &typo)]).is_err());
    }
}
