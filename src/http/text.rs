//! Text a server sent, made fit for one line of a message: bounded, with
//! no control characters (a forged second line such as `Success: ...`
//! cannot start a line of its own) and no credential fencekit sent
//! ([`super::Scrub`]).

/// `s` cut to `max` characters, every control character (newlines, escape
/// sequences, tabs) shown as `?`, and `…` where it was cut.
pub fn printable(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bounded_line() {
        assert_eq!(printable("ok", 10), "ok");
        assert_eq!(printable("a\nSuccess: Already OFF", 9), "a?Success…");
        assert_eq!(printable("\u{1b}[2Jx", 10), "?[2Jx");
        assert_eq!(printable("héllo", 5), "héllo");
        assert_eq!(printable("", 3), "");
    }
}
