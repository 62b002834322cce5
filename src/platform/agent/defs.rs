//! The agent definitions under `agents/`, typed.
//!
//! `agents/common.toml` holds the options every agent may share and one file
//! per agent family (`agents/ipmilan.toml`, …) names the agent, its aliases
//! with their default overrides, the options it offers and its actions. They
//! are the single source for the argv parser, the stdin reader, validation,
//! `--help`, the metadata XML and the man page.
//!
//! `build.rs` parses and resolves them at build time (through
//! `defs_source.rs`, which the tests compile too) and writes the static tables included here, so an
//! agent call parses no TOML and allocates nothing to know its options; a
//! broken definition fails the build. This module only looks them up; it
//! prints nothing.

use std::borrow::Cow;

/// The value type of an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Truth {
    /// On whenever the key is set, whatever its value (so stdin `x=0` turns it on, as upstream).
    #[default]
    Presence,
    /// On only when the value is empty (bare flag) or `1`.
    Value,
}

/// One option of a family, resolved (the family's overrides applied).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionDef {
    /// Long option name without dashes (`power-timeout`).
    pub long: &'static str,
    /// The stdin and metadata key: `long` with `-` replaced by `_`.
    key: &'static str,
    /// One-letter short option, if any.
    pub short: Option<char>,
    /// Deprecated key still accepted on stdin and listed in the metadata.
    pub old_key: Option<&'static str>,
    /// Value type.
    pub ty: OptType,
    /// Placeholder shown as `--long=[metavar]`.
    pub metavar: Option<&'static str>,
    /// Default value.
    pub default: Option<&'static str>,
    /// Metadata `required` attribute.
    pub required: bool,
    /// Metadata sort key.
    pub order: u32,
    /// Allowed values of a select.
    pub choices: &'static [&'static str],
    /// How a flag's value is read.
    pub truth: Truth,
    /// Why fencekit accepts but does not use this option.
    pub ignored: Option<&'static str>,
    /// A fencekit-only option that upstream's agent does not have: it is
    /// listed in the metadata after upstream's parameters (its `order` must
    /// put it there) and left out of comparisons with upstream.
    pub extension: bool,
    /// One-line description.
    pub desc: &'static str,
}

impl OptionDef {
    /// The stdin and metadata key: the long name with `-` replaced by `_`.
    pub fn key_str(&self) -> &'static str {
        self.key
    }

    /// [`OptionDef::key_str`] as an owned string.
    pub fn key(&self) -> String {
        self.key.to_string()
    }

    /// The short letter.
    pub fn short_char(&self) -> Option<char> {
        self.short
    }

    /// True when the option takes a value on the command line.
    pub fn takes_value(&self) -> bool {
        self.ty != OptType::Boolean
    }

    /// The option as written in usage and metadata: `-a, --ip=[ip]`, `--verbose-level`.
    pub fn getopt_text(&self) -> String {
        let mut s = String::new();
        if let Some(c) = self.short {
            s.push('-');
            s.push(c);
            s.push_str(", ");
        }
        s.push_str("--");
        s.push_str(self.long);
        if let Some(m) = self.metavar {
            s.push_str("=[");
            s.push_str(m);
            s.push(']');
        }
        s
    }
}

/// An alias of a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AliasDef {
    /// The alias's name (`fence_ilo4`).
    pub name: &'static str,
    /// Its one-line description (metadata `symlink` element).
    pub shortdesc: &'static str,
    /// Option defaults that differ from the agent's (key, value), sorted by key.
    pub defaults: &'static [(&'static str, &'static str)],
}

impl AliasDef {
    /// This alias's default for `key`, when it differs from the family's.
    pub fn default_of(&self, key: &str) -> Option<&'static str> {
        self.defaults
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }
}

/// One agent family, resolved: shared options merged with its own, overrides applied.
#[derive(Debug)]
pub struct Family {
    /// The main agent name (`fence_ipmilan`).
    pub name: &'static str,
    /// One-line description (metadata `shortdesc`).
    pub shortdesc: &'static str,
    /// Paragraph for the metadata `longdesc` and the man page.
    pub longdesc: &'static str,
    /// Metadata `vendor-url`.
    pub vendor_url: &'static str,
    /// The platform that serves it, by its registered name (`driver` in
    /// its `agents/*.toml`; the platform declares how it serves the family:
    /// `Platform::agent_family`).
    pub driver: &'static str,
    /// The fence-agents release this definition follows.
    pub compat_version: &'static str,
    /// `--plug` is the device address (with `--port-as-ip`), not an outlet.
    pub port_as_ip: bool,
    /// A user name must be given.
    pub login_required: bool,
    /// A password (or password script) must be given.
    pub password_required: bool,
    /// A plug must be given (except for list, list-status and monitor).
    pub plug_required: bool,
    /// Actions listed in the metadata, in order.
    pub actions: &'static [&'static str],
    /// Actions accepted but not listed.
    pub hidden_actions: &'static [&'static str],
    /// The first error line upstream prints when the device refuses the
    /// credentials (`login_refused` in its `agents/*.toml`); `None`: the
    /// agent front's default line (`agent::run::report`).
    pub login_refused: Option<&'static str>,
    /// The first error line upstream prints when the device accepts the
    /// credentials but refuses the action to them (403, NoPermission:
    /// `privilege_refused`); `None`: the agent front's default line.
    pub privilege_refused: Option<&'static str>,
    /// The fence-agents package upstream ships this family in
    /// (`package` in its `agents/*.toml`: `fence-agents-ipmilan`); the
    /// `.deb` and `.rpm` `Provides` it (`fencekit agents`).
    pub package: Option<&'static str>,
    /// Fabric fencing (a switch port down, `fabric` in its
    /// `agents/*.toml`): the metadata's `on` is automatic (unfencing, as
    /// fence-agents' `fabric_fencing`).
    pub fabric: bool,
    /// The first error line upstream prints for any other failure the
    /// device reported (a VM it cannot find, a task that failed:
    /// `device_failed`; fence_nutanix_ahv's `Failed: Generic error`);
    /// `None`: the agent front's lines by stage.
    pub device_failed: Option<&'static str>,
    /// The aliases.
    pub aliases: &'static [AliasDef],
    /// Every option, in usage order, with this family's overrides applied.
    pub options: &'static [OptionDef],
}

include!(concat!(env!("OUT_DIR"), "/agent_defs.rs"));

/// All definitions.
#[derive(Debug)]
pub struct Defs {
    /// Every agent family.
    pub families: [Family; FAMILY_COUNT],
}

/// An agent as invoked under one of its names: the family, and its options
/// with that name's default overrides applied.
#[derive(Clone, Debug)]
pub struct Agent {
    /// The name it was invoked as (`fence_ilo4`).
    pub invoked_as: &'static str,
    /// The family.
    pub family: &'static Family,
    /// The family's options with the alias's defaults applied (borrowed
    /// from the static table when the name is the family's own).
    pub options: Cow<'static, [OptionDef]>,
}

impl Agent {
    /// The family's own agent (its main name, no alias defaults).
    pub fn main(family: &'static Family) -> Agent {
        Agent {
            invoked_as: family.name,
            family,
            options: Cow::Borrowed(family.options),
        }
    }

    /// The option with this key (`power_timeout`).
    pub fn option(&self, key: &str) -> Option<&OptionDef> {
        self.options.iter().find(|o| o.key == key)
    }

    /// True when `action` is accepted (advertised or hidden).
    pub fn accepts_action(&self, action: &str) -> bool {
        self.family
            .actions
            .iter()
            .chain(self.family.hidden_actions)
            .any(|a| *a == action)
    }
}

impl Family {
    /// Every name this family answers to: its own, then its aliases.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.name).chain(self.aliases.iter().map(|a| a.name))
    }
}

/// The definitions compiled in by `build.rs`.
pub fn defs() -> &'static Defs {
    &DEFS_TABLE
}

/// The agent answering to `name` (a bare name such as `fence_ilo4`), with
/// that name's default overrides applied.
pub fn agent(name: &str) -> Option<Agent> {
    for fam in &defs().families {
        if fam.name == name {
            return Some(Agent::main(fam));
        }
        if let Some(alias) = fam.aliases.iter().find(|a| a.name == name) {
            let mut options = fam.options.to_vec();
            for o in &mut options {
                if let Some(d) = alias.default_of(o.key) {
                    o.default = Some(d);
                }
            }
            return Some(Agent {
                invoked_as: alias.name,
                family: fam,
                options: Cow::Owned(options),
            });
        }
    }
    None
}

/// True when `name` is an agent name (main or alias); allocates nothing.
pub fn is_agent(name: &str) -> bool {
    defs().families.iter().any(|f| f.names().any(|n| n == name))
}

/// The fence-agents packages the families are served in place of, each
/// once, with the release followed (sorted): what the distribution packages
/// `Provide`.
pub fn packages() -> Vec<(&'static str, &'static str)> {
    let mut p: Vec<(&str, &str)> = defs()
        .families
        .iter()
        .filter_map(|f| f.package.map(|p| (p, f.compat_version)))
        .collect();
    p.sort_unstable();
    p.dedup();
    p
}

/// Every agent name fencekit answers to, main names and aliases.
pub fn all_names() -> Vec<&'static str> {
    defs().families.iter().flat_map(|f| f.names()).collect()
}

#[cfg(test)]
mod tests {
    use super::super::defs_source::load;
    use super::*;
    use std::collections::BTreeSet;

    fn opt_keys(f: &Family) -> BTreeSet<&'static str> {
        f.options.iter().map(|o| o.key_str()).collect()
    }

    fn text(file: &str) -> String {
        let path = format!("{}/agents/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn compiled_tables_match_the_definition_files() {
        let texts: Vec<(&str, String)> = FAMILY_FILES.iter().map(|f| (*f, text(f))).collect();
        let pairs: Vec<(&str, &str)> = texts.iter().map(|(f, t)| (*f, t.as_str())).collect();
        let src = load(&text("common.toml"), &pairs).expect("definitions parse");
        assert_eq!(src.len(), defs().families.len());
        assert_eq!(defs().families[0].name, "fence_ipmilan");
        for (s, f) in src.iter().zip(&defs().families) {
            assert_eq!(
                (s.name.as_str(), s.shortdesc.as_str(), s.longdesc.as_str()),
                (f.name, f.shortdesc, f.longdesc)
            );
            assert_eq!(
                (s.vendor_url.as_str(), s.compat_version.as_str()),
                (f.vendor_url, f.compat_version)
            );
            assert_eq!(format!("{:?}", s.driver), format!("{:?}", f.driver));
            assert_eq!(
                (
                    s.port_as_ip,
                    s.login_required,
                    s.password_required,
                    s.plug_required
                ),
                (
                    f.port_as_ip,
                    f.login_required,
                    f.password_required,
                    f.plug_required
                )
            );
            assert_eq!(s.actions, f.actions);
            assert_eq!(s.hidden_actions, f.hidden_actions);
            assert_eq!(s.fabric, f.fabric);
            assert_eq!(s.login_refused.as_deref(), f.login_refused);
            assert_eq!(s.privilege_refused.as_deref(), f.privilege_refused);
            assert_eq!(s.package.as_deref(), f.package);
            assert_eq!(s.device_failed.as_deref(), f.device_failed);
            assert_eq!(s.aliases.len(), f.aliases.len());
            for (sa, a) in s.aliases.iter().zip(f.aliases) {
                assert_eq!(
                    (sa.name.as_str(), sa.shortdesc.as_str()),
                    (a.name, a.shortdesc)
                );
                let defaults: Vec<(&str, &str)> = sa
                    .defaults
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                assert_eq!(defaults, a.defaults);
            }
            assert_eq!(s.options.len(), f.options.len());
            for (so, o) in s.options.iter().zip(f.options) {
                assert_eq!((so.key().as_str(), so.long.as_str()), (o.key_str(), o.long));
                assert_eq!(so.short.as_deref().and_then(|c| c.chars().next()), o.short);
                assert_eq!(so.old_key.as_deref(), o.old_key);
                assert_eq!(format!("{:?}", so.ty), format!("{:?}", o.ty));
                assert_eq!(so.metavar.as_deref(), o.metavar);
                assert_eq!(so.default.as_deref(), o.default);
                assert_eq!(
                    (so.required, so.order, so.extension),
                    (o.required, o.order, o.extension)
                );
                assert_eq!(so.choices, o.choices);
                assert_eq!(format!("{:?}", so.truth), format!("{:?}", o.truth));
                assert_eq!(
                    (so.ignored.as_deref(), so.desc.as_str()),
                    (o.ignored, o.desc)
                );
            }
        }
        // Every family file under agents/ is compiled in.
        let mut on_disk: Vec<String> =
            std::fs::read_dir(format!("{}/agents", env!("CARGO_MANIFEST_DIR")))
                .expect("agents/")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".toml") && n != "common.toml")
                .collect();
        on_disk.sort();
        let mut listed: Vec<String> = FAMILY_FILES.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(on_disk, listed);
    }

    #[test]
    fn short_letters_are_unique_per_agent() {
        for f in &defs().families {
            let mut seen = BTreeSet::new();
            for o in f.options {
                if let Some(s) = o.short {
                    assert!(
                        s != ':' && s != '-',
                        "{}: short `{s}` cannot be parsed",
                        o.long
                    );
                    assert!(seen.insert(s), "{}: short -{s} used twice", f.name);
                }
            }
        }
    }

    #[test]
    fn long_names_and_keys_are_unique_per_agent() {
        for f in &defs().families {
            let mut seen = BTreeSet::new();
            for o in f.options {
                assert!(
                    !o.long.is_empty() && !o.long.starts_with('-'),
                    "bad long name {}",
                    o.long
                );
                // Upstream fence_aws spells one long option with '_'.
                assert!(
                    (!o.long.contains('_') || o.long == "boto3_debug") && !o.long.contains('='),
                    "bad long name {}",
                    o.long
                );
                assert!(
                    seen.insert(o.key_str()),
                    "{}: key {} twice",
                    f.name,
                    o.key_str()
                );
            }
            for o in f.options {
                if let Some(old) = o.old_key {
                    assert!(seen.insert(old), "{}: old key {old} clashes", f.name);
                }
            }
        }
    }

    #[test]
    fn every_deprecated_key_differs_from_its_replacement() {
        for f in &defs().families {
            for o in f.options {
                if let Some(old) = o.old_key {
                    assert_ne!(old, o.key_str(), "{}: old key equals the key", o.long);
                    // Upstream's exceptions: fence_redfish's internal keys
                    // `redfish-uri` / `systems-uri` are the long names
                    // themselves, and fence_azure_arm lists `network-fencing`
                    // as the deprecated spelling of `network_fencing`, and
                    // fence_openstack its four Keystone options' long names, and
                    // fence_ibm_powervs `api-type`.
                    if ![
                        "redfish-uri",
                        "systems-uri",
                        "network-fencing",
                        "stackdriver-logging",
                        "api-type",
                        "auth-url",
                        "project-name",
                        "user-domain-name",
                        "project-domain-name",
                    ]
                    .contains(&old)
                    {
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
            for o in f.options {
                if o.ty == OptType::Select {
                    assert!(!o.choices.is_empty(), "{} has no choices", o.long);
                    if let Some(d) = o.default {
                        assert!(
                            o.choices.contains(&d),
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
            for o in f.options {
                if o.ty == OptType::Boolean {
                    assert!(o.metavar.is_none(), "flag {} has a placeholder", o.long);
                } else {
                    assert_eq!(o.truth, Truth::Presence, "{}: truth is for flags", o.long);
                }
                if let Some(m) = o.metavar {
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
            for o in a.options.iter() {
                if matches!(o.ty, OptType::Integer | OptType::Second) {
                    if let Some(d) = o.default {
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
            for a in f.aliases {
                assert!(a.name.starts_with("fence_"), "{}", a.name);
                for (k, _) in a.defaults {
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
            // fence-agents' fabric fencing: on and off.
            "enable",
            "disable",
        ];
        for f in &defs().families {
            let all: Vec<_> = f.actions.iter().chain(f.hidden_actions).collect();
            let set: BTreeSet<_> = all.iter().collect();
            assert_eq!(
                set.len(),
                all.len(),
                "{}: an action is listed twice",
                f.name
            );
            for a in all {
                assert!(KNOWN.contains(a), "{}: unknown action {a}", f.name);
            }
            assert_eq!(
                f.actions.first().copied(),
                Some("on"),
                "metadata lists on first"
            );
            let default = f
                .options
                .iter()
                .find(|o| o.long == "action")
                .and_then(|o| o.default);
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
            // fence_aws, fence_kubevirt, fence_gce, fence_ibm_vpc and
            // fence_ibm_powervs talk to an API with credentials of its own:
            // no address, no login, no password.
            // fence_azure_arm: a service principal's ID and secret, no
            // address; fence_openstack: Keystone's URL, no address.
            let device: &[&str] = if ["aws", "kubevirt", "gce", "ibm"].contains(&f.driver) {
                &[]
            } else if f.driver == "azure" || f.driver == "openstack" {
                &["username", "password", "password_script"]
            } else if f.driver == "amt" {
                // fence_amt_ws logs in as AMT's admin, always: no login.
                &["ip", "ipport", "password", "password_script"]
            } else {
                &["ip", "ipport", "username", "password", "password_script"]
            };
            for k in device {
                assert!(keys.contains(k), "{}: missing {k}", f.name);
            }
            for k in [
                "action",
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
        let d =
            |name: &str, key: &str| agent(name).and_then(|a| a.option(key).and_then(|o| o.default));
        for n in [
            "fence_ipmilanplus",
            "fence_ilo3",
            "fence_ilo4",
            "fence_ilo5",
        ] {
            assert_eq!(d(n, "lanplus"), Some("1"), "{n}");
        }
        for n in ["fence_ipmilan", "fence_imm", "fence_idrac"] {
            assert_eq!(d(n, "lanplus"), Some("0"), "{n}");
        }
        assert_eq!(d("fence_ilo3", "power_wait"), Some("4"));
        assert_eq!(d("fence_ilo4", "power_wait"), Some("2"));
        assert_eq!(d("fence_ipmilan", "ipport"), Some("623"));
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
        let common = text("common.toml");
        let e = load(&common, &[("x.toml", bad)]).unwrap_err();
        assert!(
            e.contains("agents/x.toml: option `nope` is defined nowhere"),
            "{e}"
        );
        let typo = bad.replace("actions = [\"on\"]", "actions = [\"on\"]\nbogus = 1");
        let e = load(&common, &[("x.toml", &typo)]).unwrap_err();
        assert!(e.contains("agents/x.toml") && e.contains("bogus"), "{e}");
        let not_toml = bad.replace("name = \"fence_x\"", "name = fence_x");
        let e = load(&common, &[("x.toml", &not_toml)]).unwrap_err();
        assert!(e.starts_with("agents/x.toml: "), "{e}");
        let two_letters = bad.replace("options = [\"nope\"]", "options = [\"nope\"]\n")
            + "[[option]]\nlong = \"nope\"\nshort = \"ab\"\ntype = \"string\"\norder = 1\ndesc = \"x\"\n";
        let e = load(&common, &[("x.toml", &two_letters)]).unwrap_err();
        assert!(
            e.contains("short option `ab` of --nope is not one letter"),
            "{e}"
        );
        for key in ["login_refused", "privilege_refused", "device_failed"] {
            for bad_line in ["\"\"", "\"a\\nb\""] {
                let two_lines = bad.replace(
                    "hidden_actions = []",
                    &format!("hidden_actions = []\n{key} = {bad_line}"),
                );
                let e = load(&common, &[("x.toml", &two_lines)]).unwrap_err();
                assert!(
                    e.contains(&format!("agents/x.toml: {key} must be one non-empty line")),
                    "{e}"
                );
            }
        }
    }

    /// Every family says which fence-agents package upstream ships it in
    /// (`package = "fence-agents-NAME"` in its file): the distribution
    /// packages derive their `Provides` from it.
    #[test]
    fn every_family_names_its_fence_agents_package() {
        let missing: Vec<&str> = defs()
            .families
            .iter()
            .filter(|f| f.package.is_none())
            .map(|f| f.name)
            .collect();
        assert!(
            missing.is_empty(),
            "add package = \"fence-agents-…\" to the agents/*.toml of {missing:?}"
        );
    }
}
