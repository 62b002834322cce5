//! The part of POSIX extended regular expressions that fencing topology
//! `target-pattern`s use in practice: literals, `.`, bracket classes
//! (`[a-c0-9]`, `[^x]`), `\` escapes (`\d`, `\.`), the anchors `^` and `$`,
//! and the repeats `*`, `+`, `?`. Matching is unanchored, as regexec's.
//! Anything else (groups, alternation, counted repeats) is
//! [`Unsupported`]: the doctor then says the pattern was not checked.

/// The pattern uses more than this matcher knows.
#[derive(Debug, PartialEq, Eq)]
pub struct Unsupported;

#[derive(Debug, Clone)]
enum Atom {
    Any,
    Char(char),
    Class(Vec<(char, char)>, bool),
}

#[derive(Debug, Clone)]
struct Piece {
    atom: Atom,
    min: usize,
    max: usize,
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    start: bool,
    end: bool,
    pieces: Vec<Piece>,
}

impl Atom {
    fn matches(&self, c: char) -> bool {
        match self {
            Atom::Any => true,
            Atom::Char(x) => *x == c,
            Atom::Class(ranges, negated) => {
                ranges.iter().any(|(a, b)| *a <= c && c <= *b) != *negated
            }
        }
    }
}

impl Pattern {
    /// Compiles `p`.
    pub fn new(p: &str) -> Result<Pattern, Unsupported> {
        let mut chars: Vec<char> = p.chars().collect();
        let start = chars.first() == Some(&'^');
        if start {
            chars.remove(0);
        }
        let end =
            chars.last() == Some(&'$') && !(chars.len() >= 2 && chars[chars.len() - 2] == '\\');
        if end {
            chars.pop();
        }
        let mut pieces: Vec<Piece> = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            let atom = match c {
                '.' => Atom::Any,
                '\\' => {
                    let e = *chars.get(i).ok_or(Unsupported)?;
                    i += 1;
                    match e {
                        'd' => Atom::Class(vec![('0', '9')], false),
                        e if e.is_ascii_alphanumeric() => return Err(Unsupported),
                        e => Atom::Char(e),
                    }
                }
                '[' => {
                    let negated = chars.get(i) == Some(&'^');
                    if negated {
                        i += 1;
                    }
                    let mut ranges = Vec::new();
                    let mut first = true;
                    loop {
                        let c = *chars.get(i).ok_or(Unsupported)?;
                        i += 1;
                        if c == ']' && !first {
                            break;
                        }
                        if c == '[' {
                            return Err(Unsupported);
                        }
                        first = false;
                        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|n| *n != ']')
                        {
                            ranges.push((c, chars[i + 1]));
                            i += 2;
                        } else {
                            ranges.push((c, c));
                        }
                    }
                    Atom::Class(ranges, negated)
                }
                '*' | '+' | '?' => {
                    let last = pieces.last_mut().ok_or(Unsupported)?;
                    if last.min != 1 || last.max != 1 {
                        return Err(Unsupported);
                    }
                    (last.min, last.max) = match c {
                        '*' => (0, usize::MAX),
                        '+' => (1, usize::MAX),
                        _ => (0, 1),
                    };
                    continue;
                }
                '(' | ')' | '|' | '{' | '}' | '^' | '$' => return Err(Unsupported),
                c => Atom::Char(c),
            };
            pieces.push(Piece {
                atom,
                min: 1,
                max: 1,
            });
        }
        Ok(Pattern { start, end, pieces })
    }

    /// True when the pattern matches somewhere in `s`.
    pub fn is_match(&self, s: &str) -> bool {
        let chars: Vec<char> = s.chars().collect();
        let starts = if self.start { 0..=0 } else { 0..=chars.len() };
        starts.into_iter().any(|i| self.at(&chars, i, 0))
    }

    fn at(&self, s: &[char], i: usize, p: usize) -> bool {
        let Some(piece) = self.pieces.get(p) else {
            return !self.end || i == s.len();
        };
        // Greedy: the longest run first, then shorter ones.
        let mut n = 0;
        while n < piece.max && i + n < s.len() && piece.atom.matches(s[i + n]) {
            n += 1;
        }
        (piece.min..=n).rev().any(|k| self.at(s, i + k, p + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topology_patterns_match_as_regexec_would() {
        let m = |p: &str, s: &str| Pattern::new(p).unwrap().is_match(s);
        assert!(m("node[0-9]+", "node12"));
        assert!(m("node", "a-node-b"));
        assert!(!m("^node$", "node1"));
        assert!(m("^node\\d$", "node1"));
        assert!(m("^db.*", "db-west"));
        assert!(!m("^db.*", "xdb"));
        assert!(m("^n[^x]de$", "node"));
        assert!(m("^nodes?$", "node"));
        assert!(Pattern::new("(a|b)").is_err());
        assert!(Pattern::new("a{2}").is_err());
        assert!(Pattern::new("*a").is_err());
    }
}
