//! The mass-fencing guard: an `off` or `reboot` that would act on more
//! nodes than a limit is refused before anything is contacted, unless the
//! operator forces it (and says why, for the audit trail).
//!
//! A typo in a host range (`node[1-64]` for `node[1-6]`) or a network
//! partition that makes half a cluster look dead should not turn into an
//! outage (oVirt skips fencing when half its hosts lost connectivity;
//! OpenStack InstanceHA refuses when more than half are down).
//!
//! The limit is a number of nodes (`8`) or a share (`25%`) of the
//! *population*: the inventory's nodes when the targets come from an
//! inventory (names, ranges, `--all`), otherwise the targets named. A share
//! never allows less than one node: fencing a single node is what fencing
//! is for. This module decides; the front prints, audits and exits.

use serde::Serialize;
use std::fmt;

/// The most nodes one `off`/`reboot` may act on. Serialised as written
/// (`"8"`, `"25%"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many nodes.
    Nodes(u32),
    /// At most this percentage (1–100) of the population, rounded down,
    /// never below one node.
    Percent(u32),
}

impl Limit {
    /// The limit in nodes for a population of `population` nodes.
    pub fn nodes(self, population: usize) -> usize {
        match self {
            Limit::Nodes(n) => n as usize,
            Limit::Percent(p) => (population * p as usize / 100).max(1),
        }
    }
}

/// A `--max-fence` / `max_fence` value that is not a limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadLimit {
    /// Neither `N` nor `P%`.
    #[error("max-fence '{0}': expected a number of nodes (8) or a percentage (25%)")]
    NotALimit(String),
    /// A percentage outside 1–100.
    #[error("max-fence '{0}': a percentage is 1% to 100%")]
    PercentOutOfRange(String),
    /// Zero nodes.
    #[error(
        "max-fence '{0}': the limit is at least 1 node (hold nodes with `fencekit hold` to keep them untouched)"
    )]
    Zero(String),
}

impl std::str::FromStr for Limit {
    type Err = BadLimit;

    /// `N` (1 or more) or `P%` (1–100).
    fn from_str(s: &str) -> Result<Self, BadLimit> {
        let t = s.trim();
        let bad = || BadLimit::NotALimit(s.to_string());
        if let Some(p) = t.strip_suffix('%') {
            let p: u32 = p.trim().parse().map_err(|_| bad())?;
            if !(1..=100).contains(&p) {
                return Err(BadLimit::PercentOutOfRange(s.to_string()));
            }
            return Ok(Limit::Percent(p));
        }
        let n: u32 = t.parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(BadLimit::Zero(s.to_string()));
        }
        Ok(Limit::Nodes(n))
    }
}

impl Serialize for Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Nodes(n) => write!(f, "{n}"),
            Limit::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// What the limit is a share of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Population {
    /// The inventory's nodes.
    Inventory,
    /// The targets named on the command line (no inventory).
    Targets,
}

/// The guard's view of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Count {
    /// Nodes the action would act on (held nodes excluded: they are refused anyway).
    pub acting: usize,
    /// The limit as given, if any.
    pub limit: Option<Limit>,
    /// Where the limit came from (`--max-fence`, or the inventory's file name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The limit in nodes.
    pub allowed: Option<usize>,
    /// The population a percentage is taken of.
    pub population: usize,
    /// What the population is.
    pub of: Population,
}

impl Count {
    /// Counts `acting` nodes against `limit` (from `source`).
    pub fn new(
        acting: usize,
        limit: Option<Limit>,
        source: Option<String>,
        population: usize,
        of: Population,
    ) -> Self {
        Count {
            acting,
            allowed: limit.map(|l| l.nodes(population)),
            limit,
            source,
            population,
            of,
        }
    }

    /// True when the action would act on more nodes than allowed.
    pub fn exceeded(&self) -> bool {
        self.allowed.is_some_and(|a| self.acting > a)
    }

    /// The count in words: "5 node(s), limit 2 (50% of the inventory's 4 nodes, from --max-fence)".
    pub fn describe(&self) -> String {
        let Some((limit, allowed)) = self.limit.zip(self.allowed) else {
            return format!("{} node(s), no --max-fence limit", self.acting);
        };
        let of = match self.of {
            Population::Inventory => format!("the inventory's {} node(s)", self.population),
            Population::Targets => format!("the {} target(s) named", self.population),
        };
        let limit_words = match limit {
            Limit::Nodes(n) => format!("limit {n}"),
            Limit::Percent(p) => format!("limit {allowed} ({p}% of {of})"),
        };
        let from = self
            .source
            .as_deref()
            .map(|s| format!(", from {s}"))
            .unwrap_or_default();
        format!("{} node(s), {limit_words}{from}", self.acting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_and_refuse_nonsense() {
        assert_eq!("8".parse(), Ok(Limit::Nodes(8)));
        assert_eq!(" 25% ".parse(), Ok(Limit::Percent(25)));
        assert_eq!("100%".parse(), Ok(Limit::Percent(100)));
        for bad in ["-1", "x", "5.5", "%", ""] {
            assert_eq!(
                bad.parse::<Limit>(),
                Err(BadLimit::NotALimit(bad.into())),
                "{bad}"
            );
        }
        assert_eq!("0".parse::<Limit>(), Err(BadLimit::Zero("0".into())));
        for bad in ["0%", "101%"] {
            assert_eq!(
                bad.parse::<Limit>(),
                Err(BadLimit::PercentOutOfRange(bad.into()))
            );
        }
        assert_eq!(Limit::Percent(25).to_string(), "25%");
    }

    #[test]
    fn a_share_rounds_down_but_allows_one_node() {
        assert_eq!(Limit::Percent(50).nodes(64), 32);
        assert_eq!(Limit::Percent(10).nodes(64), 6);
        assert_eq!(Limit::Percent(10).nodes(6), 1);
        assert_eq!(Limit::Nodes(3).nodes(1000), 3);
    }

    #[test]
    fn the_typo_range_is_caught() {
        // node[1-64] typed for node[1-6] in a 64-node inventory, limit 10%.
        let c = Count::new(
            64,
            Some(Limit::Percent(10)),
            Some("--max-fence".into()),
            64,
            Population::Inventory,
        );
        assert!(c.exceeded());
        assert_eq!(
            c.describe(),
            "64 node(s), limit 6 (10% of the inventory's 64 node(s)), from --max-fence"
        );
        let ok = Count::new(6, Some(Limit::Percent(10)), None, 64, Population::Inventory);
        assert!(!ok.exceeded());
        let none = Count::new(64, None, None, 64, Population::Inventory);
        assert!(!none.exceeded());
        assert_eq!(none.describe(), "64 node(s), no --max-fence limit");
    }
}
