//! What an ePowerSwitch's hidden page means for fencing (pure, no I/O).
//!
//! The page carries one line per outlet, `P01=1<br>`: the outlet's two-digit
//! number and its state, `1` on and `0` off. fence_eps (fence-agents 4.12.1)
//! reads only lines whose value is `0` or `1` and treats any outlet it did
//! not find as unknown to the device; here an outlet line with any other
//! value is kept and is unreadable (never off), the same outlet given twice
//! with different values is unreadable, and a page without a single outlet
//! line is not the hidden page (a login or error page), never "no outlets".

use crate::engine::power::PowerState;

/// Longest page read (the 8M+'s page is a few hundred bytes).
pub const MAX_PAGE: usize = 64 << 10;

/// One outlet line of the page, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The two digits after `P`.
    pub outlet: String,
    /// What follows `=`, up to `<br>` or the end of the line (trimmed).
    pub value: String,
}

/// The outlet lines of a page, in page order; `Err` when the page has none.
pub fn lines(page: &str) -> Result<Vec<Line>, String> {
    let mut out: Vec<Line> = Vec::new();
    let b = page.as_bytes();
    let mut i = 0;
    while i + 3 < b.len() {
        let is_p = b[i] == b'P' || b[i] == b'p';
        let starts = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if is_p
            && starts
            && b[i + 1].is_ascii_digit()
            && b[i + 2].is_ascii_digit()
            && b.get(i + 3) == Some(&b'=')
        {
            let rest = &page[i + 4..];
            let end = rest.find(['<', '\n', '\r']).unwrap_or(rest.len()).min(32);
            let value = rest.get(..end).unwrap_or("").trim().to_string();
            out.push(Line {
                outlet: page[i + 1..i + 3].to_string(),
                value,
            });
            i += 4 + end;
            continue;
        }
        i += 1;
    }
    match out.is_empty() {
        true => Err(
            "the page has no outlet lines (Pnn=0|1): it is not the hidden page (is the \
             hidden page enabled, and --page right?)"
                .into(),
        ),
        false => Ok(out),
    }
}

/// An outlet's number as the page writes it: `1` and `01` are `01`.
pub fn outlet_id(plug: &str) -> Result<String, String> {
    let p = plug.trim();
    let digits = p.strip_prefix(['P', 'p']).unwrap_or(p);
    match digits.parse::<u8>() {
        Ok(n) if (1..=99).contains(&n) && digits.len() <= 2 => Ok(format!("{n:02}")),
        _ => Err(format!(
            "'{}' is not an ePowerSwitch outlet (a number from 1 to 99, as the hidden page \
             numbers them: 01 or 1)",
            crate::http::text::printable(p, 40)
        )),
    }
}

/// The state of `outlet` on the page.
pub fn state(lines: &[Line], outlet: &str) -> Result<Option<PowerState>, String> {
    let mut seen: Option<&str> = None;
    for l in lines.iter().filter(|l| l.outlet == outlet) {
        match seen {
            Some(v) if v != l.value => {
                return Err(format!(
                    "outlet {outlet} is on the page twice, as {} and as {}: unreadable",
                    crate::http::text::printable(v, 20),
                    crate::http::text::printable(&l.value, 20)
                ))
            }
            _ => seen = Some(&l.value),
        }
    }
    match seen {
        None => Ok(None),
        Some("1") => Ok(Some(PowerState::On)),
        Some("0") => Ok(Some(PowerState::Off)),
        Some(v) => Err(format!(
            "outlet {outlet} reads '{}', which is neither 1 (on) nor 0 (off): unreadable, \
             never taken for off",
            crate::http::text::printable(v, 20)
        )),
    }
}

/// The page's outlets in order, each once, with its state or why it has none.
pub fn listing(lines: &[Line]) -> Vec<(String, Result<PowerState, String>)> {
    let mut ids: Vec<&str> = Vec::new();
    for l in lines {
        if !ids.contains(&l.outlet.as_str()) {
            ids.push(&l.outlet);
        }
    }
    ids.into_iter()
        .map(|id| {
            let s = state(lines, id).and_then(|s| s.ok_or_else(|| "absent".to_string()));
            (id.to_string(), s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<html><body>\nP01=1<br>\nP02=0<br>\r\np03 = 1 <BR>P04=7<br></body></html>";

    #[test]
    fn outlet_lines_are_read_as_written() {
        let l = lines(PAGE).unwrap();
        let got: Vec<(&str, &str)> = l
            .iter()
            .map(|l| (l.outlet.as_str(), l.value.as_str()))
            .collect();
        // "p03 = 1" has a space before '=': not an outlet line, as upstream's
        // pattern does not take it either.
        assert_eq!(got, [("01", "1"), ("02", "0"), ("04", "7")]);
        assert_eq!(state(&l, "01").unwrap(), Some(PowerState::On));
        assert_eq!(state(&l, "02").unwrap(), Some(PowerState::Off));
        assert_eq!(state(&l, "03").unwrap(), None);
        assert!(state(&l, "04").unwrap_err().contains("never taken for off"));
    }

    #[test]
    fn a_page_without_outlets_is_not_the_hidden_page() {
        assert!(lines("<html><body>Please log in</body></html>")
            .unwrap_err()
            .contains("not the hidden page"));
        assert!(lines("").is_err());
        // "APP01=1" is not an outlet line: P must start a word.
        assert!(lines("XP01=1<br>").is_err());
    }

    #[test]
    fn an_outlet_given_twice_differently_is_unreadable() {
        let l = lines("P01=1<br>P01=0<br>P02=1<br>P02=1<br>").unwrap();
        assert!(state(&l, "01").unwrap_err().contains("twice"));
        assert_eq!(state(&l, "02").unwrap(), Some(PowerState::On));
        let all = listing(&l);
        assert_eq!(all.len(), 2);
        assert!(all[0].1.is_err());
    }

    #[test]
    fn outlet_numbers_take_one_or_two_digits() {
        assert_eq!(outlet_id("1").unwrap(), "01");
        assert_eq!(outlet_id("01").unwrap(), "01");
        assert_eq!(outlet_id("P12").unwrap(), "12");
        for bad in ["0", "100", "001", "a", "", "-1", "1.5"] {
            assert!(outlet_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hostile_bytes_never_panic() {
        for s in [
            "P0",
            "P01",
            "P01=",
            "P01=\u{1F600}\u{1F600}",
            "é P01=1",
            "P\u{301}01=1",
        ] {
            let _ = lines(s).map(|l| listing(&l));
        }
        let long = format!("P01={}", "9".repeat(100_000));
        let l = lines(&long).unwrap();
        assert!(l[0].value.len() <= 32);
    }
}
