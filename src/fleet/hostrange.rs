//! Host ranges: `node[01-64,70]`, `rack[1-2]-n[1-3]`, expanded in order.
//!
//! Zero padding is kept as written (`[01-10]` gives `01`…`10`); a range
//! larger than [`MAX_EXPANSION`] names is refused rather than allocated.

/// Most names one pattern may expand to.
pub const MAX_EXPANSION: usize = 100_000;

/// True when `s` contains a bracket range to expand.
pub fn is_range(s: &str) -> bool {
    s.contains('[')
}

/// Expands a host range pattern into names, in order.
pub fn expand(pattern: &str) -> Result<Vec<String>, String> {
    let mut out = vec![String::new()];
    let mut rest = pattern;
    while let Some(open) = rest.find('[') {
        let prefix = &rest[..open];
        if prefix.contains(']') {
            return Err(format!("'{pattern}': ']' without '['"));
        }
        let close = rest[open..]
            .find(']')
            .map(|i| open + i)
            .ok_or_else(|| format!("'{pattern}': '[' without ']'"))?;
        let items = parse_set(&rest[open + 1..close]).map_err(|m| format!("'{pattern}': {m}"))?;
        // Checked before allocating (found with the `targets` fuzz target:
        // `a[0-99999]b[0-99999]` asked for 10^10 names at once and aborted).
        if out.len().saturating_mul(items.len()) > MAX_EXPANSION {
            return Err(format!(
                "'{pattern}' expands to more than {MAX_EXPANSION} names"
            ));
        }
        let mut next = Vec::with_capacity(out.len() * items.len());
        for base in &out {
            for item in &items {
                next.push(format!("{base}{prefix}{item}"));
            }
        }
        out = next;
        rest = &rest[close + 1..];
    }
    if rest.contains(']') {
        return Err(format!("'{pattern}': ']' without '['"));
    }
    for o in &mut out {
        o.push_str(rest);
    }
    if out.iter().any(|s| s.is_empty()) {
        return Err(format!("'{pattern}' expands to an empty name"));
    }
    Ok(out)
}

/// `01-04,7,10-11` → ["01","02","03","04","7","10","11"].
fn parse_set(set: &str) -> Result<Vec<String>, String> {
    if set.trim().is_empty() {
        return Err("empty range '[]'".into());
    }
    let mut items = Vec::new();
    for part in set.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (lo, hi) = (num(a)?, num(b)?);
                if lo > hi {
                    return Err(format!("range '{part}' runs backwards"));
                }
                if hi - lo >= MAX_EXPANSION as u64 {
                    return Err(format!("range '{part}' is too large"));
                }
                let width = if a.starts_with('0') && a.len() > 1 {
                    a.len()
                } else {
                    0
                };
                // Bounded over all the parts, not only per part (found with the
                // `targets` fuzz target: forty `0-99999` parts made four million names).
                if items.len() as u64 + (hi - lo) >= MAX_EXPANSION as u64 {
                    return Err(format!("'{set}' has more than {MAX_EXPANSION} items"));
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

fn num(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 9 {
        return Err(format!("'{s}' is not a number"));
    }
    s.parse().map_err(|_| format!("'{s}' is not a number"))
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
}
