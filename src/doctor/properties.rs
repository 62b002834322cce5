//! Pacemaker's fencing cluster options under both of their names:
//! Pacemaker 3.0.2 renamed `stonith-enabled`, `stonith-action`,
//! `stonith-timeout`, `stonith-watchdog-timeout`, `stonith-max-attempts`
//! and `fence-reaction` to `fencing-*`, and keeps reading the old name when
//! the new one is not set (`lib/common/options.c`: each option's
//! `alt_name`, looked up only when `name` is absent). A Pacemaker before
//! 3.0.2 knows only the old names. The doctor reads an option as the
//! cluster's own version does (`dc-version`; when it is not recorded, as
//! 3.0.2 does), and says when a spelling is set that the cluster ignores.

use super::cib::{Cib, DEFAULT_STONITH_TIMEOUT};
use super::parse_time;
use super::{Finding, Severity};
use crate::engine::power::Action;
use std::time::Duration;

/// A cluster option, by its name since Pacemaker 3.0.2 and the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Property {
    /// The name since 3.0.2 (`fencing-timeout`).
    pub name: &'static str,
    /// The name before 3.0.2 (`stonith-timeout`), still read by 3.0.2 as
    /// a fallback.
    pub legacy: &'static str,
}

/// Whether fencing is enabled.
pub const FENCING_ENABLED: Property = Property {
    name: "fencing-enabled",
    legacy: "stonith-enabled",
};
/// The fencing action (reboot or off).
pub const FENCING_ACTION: Property = Property {
    name: "fencing-action",
    legacy: "stonith-action",
};
/// The default timeout of a fencing action.
pub const FENCING_TIMEOUT: Property = Property {
    name: "fencing-timeout",
    legacy: "stonith-timeout",
};
/// Watchdog-based self-fencing (SBD).
pub const FENCING_WATCHDOG_TIMEOUT: Property = Property {
    name: "fencing-watchdog-timeout",
    legacy: "stonith-watchdog-timeout",
};
/// How often fencing may fail before it is not retried at once.
pub const FENCING_MAX_ATTEMPTS: Property = Property {
    name: "fencing-max-attempts",
    legacy: "stonith-max-attempts",
};
/// How a node reacts to news of its own fencing.
pub const FENCING_REACTION: Property = Property {
    name: "fencing-reaction",
    legacy: "fence-reaction",
};

/// Every renamed fencing option.
pub const RENAMED: &[Property] = &[
    FENCING_ENABLED,
    FENCING_ACTION,
    FENCING_TIMEOUT,
    FENCING_WATCHDOG_TIMEOUT,
    FENCING_MAX_ATTEMPTS,
    FENCING_REACTION,
];

/// The first release that reads the `fencing-*` names.
pub const RENAMED_IN: (u32, u32, u32) = (3, 0, 2);

/// A Pacemaker version as `dc-version` records it (`2.1.5-a3f44794f94`,
/// `3.0.2-1.el10-…`): its first three numbers.
pub fn parse_version(s: &str) -> Option<(u32, u32, u32)> {
    let head = s.trim().split(['-', ' ', '+']).next()?;
    let mut n = head.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        n.next()??,
        n.next().flatten().unwrap_or(0),
        n.next().flatten().unwrap_or(0),
    ))
}

impl Cib {
    /// `fencing-timeout` / `stonith-timeout` (its default when not set or
    /// unreadable).
    pub fn stonith_timeout(&self) -> Duration {
        self.option_value(FENCING_TIMEOUT)
            .and_then(parse_time)
            .unwrap_or(DEFAULT_STONITH_TIMEOUT)
    }

    /// The fencing action (`fencing-action` / `stonith-action`: reboot unless off).
    pub fn action(&self) -> Action {
        match self.option_value(FENCING_ACTION) {
            Some("off" | "poweroff") => Action::Off,
            _ => Action::Reboot,
        }
    }

    /// The Pacemaker version of the cluster's DC, when the CIB records it.
    pub fn pacemaker_version(&self) -> Option<(u32, u32, u32)> {
        self.prop("dc-version").and_then(parse_version)
    }

    /// True when the cluster reads the `fencing-*` names: 3.0.2 and later,
    /// or an unrecorded version (read as the newest does).
    pub fn reads_new_names(&self) -> bool {
        self.pacemaker_version().is_none_or(|v| v >= RENAMED_IN)
    }

    /// `p`'s value as the cluster reads it, with the name it was found
    /// under: the new name, else the old one (3.0.2 and later); the old
    /// name only (before 3.0.2).
    pub fn option(&self, p: Property) -> Option<(&'static str, &str)> {
        if self.reads_new_names() {
            if let Some(v) = self.prop(p.name) {
                return Some((p.name, v));
            }
        }
        self.prop(p.legacy).map(|v| (p.legacy, v))
    }

    /// `p`'s value as the cluster reads it.
    pub fn option_value(&self, p: Property) -> Option<&str> {
        self.option(p).map(|(_, v)| v)
    }

    /// The name to write `p` as in a finding: the one that is set, else
    /// the new name where the cluster reads it and the old name where it
    /// does not (or its version is not recorded: every release reads it).
    pub fn spelling(&self, p: Property) -> &'static str {
        match self.option(p) {
            Some((name, _)) => name,
            None if self.pacemaker_version().is_some_and(|v| v >= RENAMED_IN) => p.name,
            None => p.legacy,
        }
    }
}

/// The findings about the spellings: a name the cluster's version
/// ignores, and both names set to different values.
pub fn findings(cib: &Cib) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in RENAMED {
        let (new, old) = (cib.prop(p.name), cib.prop(p.legacy));
        match (new, old) {
            (Some(n), _) if !cib.reads_new_names() => out.push(Finding::new(
                "property-name-ignored",
                Severity::Advice,
                "cluster",
                format!(
                    "{}={n} is set, but this cluster's Pacemaker ({}) reads only {}{}: the \
                     setting has no effect",
                    p.name,
                    cib.prop("dc-version").unwrap_or("?"),
                    p.legacy,
                    old.map(|o| format!(" (set to {o})")).unwrap_or_default()
                ),
                format!(
                    "set {} instead (pcs property set {}=…) until every node runs Pacemaker \
                     3.0.2 or later",
                    p.legacy, p.legacy
                ),
            )),
            (Some(n), Some(o)) if n != o => out.push(Finding::new(
                "property-both-names",
                Severity::Advice,
                "cluster",
                format!(
                    "{}={n} and {}={o} are both set: Pacemaker 3.0.2 and later use {n}, \
                     earlier releases (nodes not yet upgraded) {o}",
                    p.name, p.legacy
                ),
                format!(
                    "keep one: {} (every release since 3.0.2) or {} (older releases too)",
                    p.name, p.legacy
                ),
            )),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cib(props: &[(&str, &str)]) -> Cib {
        let mut p = String::new();
        for (k, v) in props {
            p.push_str(&format!(
                "<nvpair id=\"p-{k}\" name=\"{k}\" value=\"{v}\"/>"
            ));
        }
        Cib::parse(&format!(
            "<cib><configuration><crm_config><cluster_property_set id=\"o\">{p}\
             </cluster_property_set></crm_config></configuration></cib>"
        ))
        .unwrap()
    }

    #[test]
    fn versions_parse_from_dc_version() {
        assert_eq!(parse_version("2.1.5-a3f44794f94"), Some((2, 1, 5)));
        assert_eq!(parse_version("3.0.2-1.el10-cafe"), Some((3, 0, 2)));
        assert_eq!(parse_version("3.1"), Some((3, 1, 0)));
        assert_eq!(parse_version("x"), None);
    }

    #[test]
    fn both_spellings_are_read_as_the_clusters_version_reads_them() {
        // No version recorded: the new name wins, the old one is the fallback.
        let c = cib(&[("stonith-timeout", "90s")]);
        assert_eq!(c.option(FENCING_TIMEOUT), Some(("stonith-timeout", "90s")));
        let c = cib(&[("fencing-timeout", "120s")]);
        assert_eq!(c.option(FENCING_TIMEOUT), Some(("fencing-timeout", "120s")));
        let c = cib(&[("fencing-timeout", "120s"), ("stonith-timeout", "90s")]);
        assert_eq!(c.option_value(FENCING_TIMEOUT), Some("120s"));
        assert_eq!(findings(&c)[0].id, "property-both-names");
        // 2.1 reads the old name only, and says the new one does nothing.
        let c = cib(&[("fencing-timeout", "120s"), ("dc-version", "2.1.5-a3f4")]);
        assert_eq!(c.option(FENCING_TIMEOUT), None);
        assert_eq!(c.spelling(FENCING_TIMEOUT), "stonith-timeout");
        let f = findings(&c);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].id, "property-name-ignored");
        assert!(f[0].message.contains("fencing-timeout=120s"), "{f:?}");
        // 3.0.2: either name; a finding names the new one when neither is set.
        let c = cib(&[("dc-version", "3.0.2-1")]);
        assert_eq!(c.spelling(FENCING_TIMEOUT), "fencing-timeout");
        assert!(findings(&c).is_empty());
        let c = cib(&[("dc-version", "3.0.2-1"), ("stonith-enabled", "false")]);
        assert_eq!(
            c.option(FENCING_ENABLED),
            Some(("stonith-enabled", "false"))
        );
        // Equal values under both names are no finding.
        let c = cib(&[("fencing-action", "off"), ("stonith-action", "off")]);
        assert!(findings(&c).is_empty());
    }
}
