//! Host ranges: `node[01-64,70]`, `rack[1-2]-n[1-3]`, expanded in order.
//!
//! Zero padding is kept as written (`[01-10]` gives `01`…`10`); a range
//! larger than [`MAX_EXPANSION`] names is refused rather than allocated.

/// Most names one pattern may expand to.
pub const MAX_EXPANSION: usize = 100_000;

/// Why a pattern does not expand: the pattern and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// A problem inside the pattern, named with it.
    #[error("'{pattern}': {problem}")]
    In {
        /// The pattern as written.
        pattern: String,
        /// What is wrong.
        problem: RangeProblem,
    },
    /// More than [`MAX_EXPANSION`] names in all (the pattern).
    #[error("'{0}' expands to more than {max} names", max = MAX_EXPANSION)]
    TooMany(String),
    /// A name that would be empty (the pattern).
    #[error("'{0}' expands to an empty name")]
    EmptyName(String),
}

/// What is wrong inside a pattern.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeProblem {
    /// `]` before any `[`.
    #[error("']' without '['")]
    Close,
    /// `[` never closed.
    #[error("'[' without ']'")]
    Open,
    /// `[]`.
    #[error("empty range '[]'")]
    Empty,
    /// `[9-1]` (the part).
    #[error("range '{0}' runs backwards")]
    Backwards(String),
    /// One part of more than [`MAX_EXPANSION`] (the part).
    #[error("range '{0}' is too large")]
    TooLarge(String),
    /// A set of more than [`MAX_EXPANSION`] items (the set).
    #[error("'{0}' has more than {max} items", max = MAX_EXPANSION)]
    TooManyItems(String),
    /// Not a number of at most nine digits.
    #[error("'{0}' is not a number")]
    NotNumber(String),
}

/// True when `s` contains a bracket range to expand.
pub fn is_range(s: &str) -> bool {
    s.contains('[')
}

#[cfg(test)]
thread_local! {
    /// Calls of [`expand`] on this thread, for tests that prove a caller
    /// expands each range once rather than once per name.
    static EXPANSIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many times [`expand`] ran on this thread (tests only).
#[cfg(test)]
pub(crate) fn expansions() -> usize {
    EXPANSIONS.with(|c| c.get())
}

/// Expands a host range pattern into names, in order. Linear in the
/// number of names (each is written once).
pub fn expand(pattern: &str) -> Result<Vec<String>, RangeError> {
    #[cfg(test)]
    EXPANSIONS.with(|c| c.set(c.get() + 1));
    let bad = |problem| RangeError::In {
        pattern: pattern.to_string(),
        problem,
    };
    let mut out = vec![String::new()];
    let mut rest = pattern;
    while let Some(open) = rest.find('[') {
        let prefix = &rest[..open];
        if prefix.contains(']') {
            return Err(bad(RangeProblem::Close));
        }
        let close = rest[open..]
            .find(']')
            .map(|i| open + i)
            .ok_or_else(|| bad(RangeProblem::Open))?;
        let inner = &rest[open + 1..close];
        // An IPv6 address in brackets (`ipmi://[fd00::7]:623`) stands for
        // itself: no range has a colon.
        let items = if inner.contains(':') {
            vec![rest[open..=close].to_string()]
        } else {
            parse_set(inner).map_err(bad)?
        };
        // Checked before allocating (found with the `targets` fuzz target:
        // `a[0-99999]b[0-99999]` asked for 10^10 names at once and aborted).
        if out.len().saturating_mul(items.len()) > MAX_EXPANSION {
            return Err(RangeError::TooMany(pattern.to_string()));
        }
        let mut next = Vec::with_capacity(out.len() * items.len());
        // Room for what follows too, so that no name is copied again.
        let after = rest.len() - close - 1;
        for base in &out {
            for item in &items {
                let mut name =
                    String::with_capacity(base.len() + prefix.len() + item.len() + after);
                name.push_str(base);
                name.push_str(prefix);
                name.push_str(item);
                next.push(name);
            }
        }
        out = next;
        rest = &rest[close + 1..];
    }
    if rest.contains(']') {
        return Err(bad(RangeProblem::Close));
    }
    for o in &mut out {
        o.push_str(rest);
    }
    if out.iter().any(|s| s.is_empty()) {
        return Err(RangeError::EmptyName(pattern.to_string()));
    }
    Ok(out)
}

/// `01-04,7,10-11` → ["01","02","03","04","7","10","11"].
fn parse_set(set: &str) -> Result<Vec<String>, RangeProblem> {
    if set.trim().is_empty() {
        return Err(RangeProblem::Empty);
    }
    let mut items = Vec::new();
    for part in set.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (lo, hi) = (num(a)?, num(b)?);
                if lo > hi {
                    return Err(RangeProblem::Backwards(part.to_string()));
                }
                if hi - lo >= MAX_EXPANSION as u64 {
                    return Err(RangeProblem::TooLarge(part.to_string()));
                }
                let width = if a.starts_with('0') && a.len() > 1 {
                    a.len()
                } else {
                    0
                };
                // Bounded over all the parts, not only per part (found with the
                // `targets` fuzz target: forty `0-99999` parts made four million names).
                if items.len() as u64 + (hi - lo) >= MAX_EXPANSION as u64 {
                    return Err(RangeProblem::TooManyItems(set.to_string()));
                }
                for n in lo..=hi {
                    items.push(format!("{n:0width$}"));
                }
            }
            None => {
                num(part)?;
                items.push(part.to_string());
            }
        }
    }
    Ok(items)
}

fn num(s: &str) -> Result<u64, RangeProblem> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 9 {
        return Err(RangeProblem::NotNumber(s.to_string()));
    }
    s.parse()
        .map_err(|_| RangeProblem::NotNumber(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_with_padding_and_lists() {
        assert_eq!(
            expand("node[01-03,10]").unwrap(),
            ["node01", "node02", "node03", "node10"]
        );
        assert_eq!(expand("n[8-10]").unwrap(), ["n8", "n9", "n10"]);
        assert_eq!(
            expand("r[1-2]-n[1-2].lab").unwrap(),
            ["r1-n1.lab", "r1-n2.lab", "r2-n1.lab", "r2-n2.lab"]
        );
        assert_eq!(expand("plain").unwrap(), ["plain"]);
    }

    #[test]
    fn an_ipv6_address_in_brackets_is_not_a_range() {
        assert_eq!(
            expand("redfish://[fe80::1]:8443/redfish/v1/Systems/1").unwrap(),
            ["redfish://[fe80::1]:8443/redfish/v1/Systems/1"]
        );
        // Beside a range of its own.
        assert_eq!(
            expand("ipmi://[fd00::7]:62[3-4]").unwrap(),
            ["ipmi://[fd00::7]:623", "ipmi://[fd00::7]:624"]
        );
        assert_eq!(expand("fd00::1[0-1]").unwrap(), ["fd00::10", "fd00::11"]);
    }

    #[test]
    fn rejects_bad_patterns() {
        for bad in [
            "n[",
            "n]",
            "n[]",
            "n[3-1]",
            "n[a-b]",
            "n[1-9999999999]",
            "[1-2][",
            "n[-]",
        ] {
            assert!(expand(bad).is_err(), "{bad}");
        }
        assert!(expand("n[0-99999]x[0-9]").is_err(), "bounded expansion");
    }

    #[test]
    fn huge_expansions_are_refused_before_allocation() {
        // fuzz/corpus/targets/crash-hostrange-product and -parts
        assert!(expand("a[0-99999]b[0-99999]").is_err());
        let parts = vec!["0-99999"; 40].join(",");
        assert!(expand(&format!("h[{parts}]")).is_err());
        assert_eq!(expand("h[0-49999,0-49999]").unwrap().len(), 100_000);
        assert_eq!(expand("h[0-99999]").unwrap().len(), 100_000);
    }

    #[test]
    fn messages_read_as_they_always_have() {
        let text = |p: &str| expand(p).unwrap_err().to_string();
        assert_eq!(text("a]b["), "'a]b[': ']' without '['");
        assert_eq!(text("n[1-2"), "'n[1-2': '[' without ']'");
        assert_eq!(text("n[]"), "'n[]': empty range '[]'");
        assert_eq!(text("n[9-1]"), "'n[9-1]': range '9-1' runs backwards");
        assert_eq!(
            text("n[0-999999]"),
            "'n[0-999999]': range '0-999999' is too large"
        );
        assert_eq!(text("n[x]"), "'n[x]': 'x' is not a number");
        assert_eq!(
            text("a[0-99999]b[0-9]"),
            "'a[0-99999]b[0-9]' expands to more than 100000 names"
        );
        assert_eq!(
            text("n[0-60000,0-60000]"),
            "'n[0-60000,0-60000]': '0-60000,0-60000' has more than 100000 items"
        );
        assert_eq!(text("n1]"), "'n1]': ']' without '['");
    }
}
