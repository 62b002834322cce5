//! Where the `[[node]]` sections of an inventory file are, found without
//! parsing it, so that [`super::inventory`] can parse one node at a time.
//!
//! A TOML reader builds the whole document in memory before any of it is
//! read: for a file of 100,000 `[[node]]` entries that was about 3 KiB per
//! node (keys, values, their spans and decoration), a gigabyte, with the
//! reader of the time (toml 0.8). Each node's
//! section is independent of the others (an element of the `node` array of
//! tables, with its own `[[node.fence]]`, `[node.ssh]`, `[[node.check]]`),
//! so it can be read on its own (on helper threads, for a large file), and
//! the rest of the file (defaults, PDUs, identity tables) without the nodes.
//!
//! The scan follows what decides where a table header can be: strings
//! (basic, literal, and their multi-line forms, which may hold lines that
//! look like headers), comments, and arrays or inline tables that span
//! lines. Anything it does not recognise plainly — a quoted or unusual
//! header key, a `[node]` table, a `node.` header outside a node — makes it
//! give up ([`None`]), and the caller reads the whole file as one document,
//! as before.

use std::ops::Range;

/// Where a multi-line scan is between lines.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    /// Nothing open.
    None,
    /// Inside `"""…"""`.
    MultiBasic,
    /// Inside `'''…'''`.
    MultiLiteral,
}

/// A table header line: whether it is an array of tables (`[[…]]`), its
/// key's first part and whether more parts follow (all the scan needs, so
/// nothing is kept: a 100,000-node file has 300,000 headers).
struct Header<'a> {
    array: bool,
    first: &'a str,
    more: bool,
}

/// The header on `line` (which starts with `[` after blanks), or `None`
/// when it is not one the scan understands.
fn header(line: &str) -> Option<Header<'_>> {
    let t = line.trim();
    let (array, inner, after) = if let Some(rest) = t.strip_prefix("[[") {
        let end = rest.find("]]")?;
        (true, &rest[..end], &rest[end + 2..])
    } else {
        let rest = t.strip_prefix('[')?;
        let end = rest.find(']')?;
        (false, &rest[..end], &rest[end + 1..])
    };
    // Only a comment may follow.
    let after = after.trim_start();
    if !(after.is_empty() || after.starts_with('#')) {
        return None;
    }
    let bare = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let mut parts = inner.split('.').map(str::trim);
    let first = parts.next().filter(|p| bare(p))?;
    let mut more = false;
    for p in parts {
        if !bare(p) {
            return None;
        }
        more = true;
    }
    Some(Header { array, first, more })
}

/// Bytes that change the scan's state outside strings: a comment, the
/// quotes that open strings, and the brackets of arrays and inline tables.
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut k = 0;
    let special = b"#\"'[]{}";
    while k < special.len() {
        t[special[k] as usize] = true;
        k += 1;
    }
    t
};

/// Follows strings, comments and brackets through one line that is not a
/// header: returns what is left open at its end, and updates `depth` (the
/// nesting of arrays and inline tables). (It skips to the next byte that
/// matters: a 100,000-node file is 20 MB of lines.)
fn scan_line(line: &str, mut open: Open, depth: &mut i64) -> Option<Open> {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match open {
            Open::MultiBasic => {
                let Some(k) = memchr::memchr2(b'\\', b'"', &b[i..]) else {
                    break;
                };
                i += k;
                if b[i] == b'\\' {
                    i += 2;
                    continue;
                }
                if b[i..].starts_with(b"\"\"\"") {
                    // Up to two more quotes belong to the string.
                    i += 3;
                    while i < b.len() && b[i] == b'"' {
                        i += 1;
                    }
                    open = Open::None;
                    continue;
                }
                i += 1;
            }
            Open::MultiLiteral => {
                let Some(k) = memchr::memchr(b'\'', &b[i..]) else {
                    break;
                };
                i += k;
                if b[i..].starts_with(b"'''") {
                    i += 3;
                    while i < b.len() && b[i] == b'\'' {
                        i += 1;
                    }
                    open = Open::None;
                    continue;
                }
                i += 1;
            }
            Open::None => {
                let Some(k) = b[i..].iter().position(|c| SPECIAL[usize::from(*c)]) else {
                    break;
                };
                i += k;
                match b[i] {
                    b'#' => return Some(Open::None),
                    b'"' if b[i..].starts_with(b"\"\"\"") => {
                        open = Open::MultiBasic;
                        i += 3;
                    }
                    b'\'' if b[i..].starts_with(b"'''") => {
                        open = Open::MultiLiteral;
                        i += 3;
                    }
                    b'"' => {
                        // A basic string ends on its line (or the file is not TOML).
                        i += 1;
                        loop {
                            i += memchr::memchr2(b'\\', b'"', b.get(i..)?)?;
                            if b[i] == b'"' {
                                break;
                            }
                            i += 2;
                        }
                        i += 1;
                    }
                    b'\'' => {
                        i += 1 + memchr::memchr(b'\'', &b[i + 1..])? + 1;
                    }
                    b'[' | b'{' => {
                        *depth += 1;
                        i += 1;
                    }
                    // `]` or `}`.
                    _ => {
                        *depth -= 1;
                        i += 1;
                    }
                }
            }
        }
    }
    Some(open)
}

/// Where a scan is at a line's start: the section open, if any, and what
/// is open across lines.
#[derive(Clone, Copy)]
struct Scan {
    current: Option<usize>,
    open: Open,
    depth: i64,
}

impl Scan {
    const START: Scan = Scan {
        current: None,
        open: Open::None,
        depth: 0,
    };

    /// Nothing open across the line end: a header may start the next line.
    fn clear(&self) -> bool {
        self.open == Open::None && self.depth == 0
    }
}

/// Files from this size have their second half scanned beside the first.
const SPLIT_FROM: usize = 4 << 20;

/// Second halves scanned again (tests only).
#[cfg(test)]
static RESCANS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The byte ranges of the top-level `[[node]]` sections of `text`, each from
/// its header to the next header that is not one of its own (or the end),
/// in file order; `None` when the scan cannot tell with certainty.
///
/// A large file's second half is scanned on a helper thread from a line
/// that reads `[[node]]`, as if nothing were open there, while this thread
/// scans the first half; the second half's scan is kept when the first
/// half's ends there with nothing open (the usual case: then a sequential
/// scan would be where the second one started), and is done again from
/// where the first one ended otherwise.
pub fn node_sections(text: &str) -> Option<Vec<Range<usize>>> {
    let mut out = Vec::new();
    let half = text.len() / 2;
    // (On one core a second scanner would only take turns with this one.)
    let split = (text.len() >= SPLIT_FROM && super::inorder::helpers() >= 2)
        .then(|| memchr::memmem::find(&text.as_bytes()[half..], b"\n[[node]]"))
        .flatten()
        .map(|i| half + i + 1);
    let mut state = Scan::START;
    let rest = match split {
        None => scan(text, 0..text.len(), &mut state, &mut out),
        Some(split) => std::thread::scope(|s| {
            let second = std::thread::Builder::new().spawn_scoped(s, || {
                let (mut state, mut out) = (Scan::START, Vec::new());
                scan(text, split..text.len(), &mut state, &mut out).map(|()| (state, out))
            });
            scan(text, 0..split, &mut state, &mut out)?;
            let second = second.ok().and_then(|h| h.join().ok());
            match second {
                Some(second) if state.clear() => {
                    // The header at `split` closes the section open there.
                    if let Some(c) = state.current.take() {
                        out.push(c..split);
                    }
                    let (end, theirs) = second?;
                    out.extend(theirs);
                    state = end;
                    Some(())
                }
                _ => {
                    #[cfg(test)]
                    RESCANS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    scan(text, split..text.len(), &mut state, &mut out)
                }
            }
        }),
    };
    rest?;
    finish(state, out, text.len())
}

/// The sections of a text of `len` bytes whose scan ended in `state`:
/// `None` when something is left open at its end.
fn finish(state: Scan, mut out: Vec<Range<usize>>, len: usize) -> Option<Vec<Range<usize>>> {
    if !state.clear() {
        return None;
    }
    out.extend(state.current.map(|s| s..len));
    Some(out)
}

/// Scans the lines of `text[range]` (which starts a line) from `state`,
/// adding the sections it closes to `out`.
fn scan(
    text: &str,
    range: Range<usize>,
    state: &mut Scan,
    out: &mut Vec<Range<usize>>,
) -> Option<()> {
    let mut at = range.start;
    let mut ends =
        memchr::memchr_iter(b'\n', &text.as_bytes()[range.clone()]).map(|i| range.start + i + 1);
    loop {
        // Each line with its end (the last may have none).
        let end = match ends.next() {
            Some(end) => end,
            None if at < range.end => range.end,
            None => break,
        };
        let (start, line) = (at, &text[at..end]);
        at = end;
        if state.clear() && line.trim_start().starts_with('[') {
            let h = header(line)?;
            match (h.array, h.first == "node", h.more) {
                (true, true, false) => {
                    if let Some(s) = state.current.take() {
                        out.push(s..start);
                    }
                    state.current = Some(start);
                }
                // A node's own tables: they continue its section.
                (_, true, true) if state.current.is_some() => {}
                // `[node]`, or a node's table with no node before it.
                (_, true, _) => return None,
                _ => {
                    if let Some(s) = state.current.take() {
                        out.push(s..start);
                    }
                }
            }
            continue;
        }
        state.open = scan_line(line, state.open, &mut state.depth)?;
        if state.depth < 0 {
            return None;
        }
    }
    Some(())
}

/// The rest of a file: its text without the node sections (whole lines,
/// so what is left reads as the same TOML), and where each piece of it
/// stands in the file.
pub struct Rest {
    /// The pieces between the sections, one after the other.
    pub text: String,
    /// Each piece's start: in `text`, and in the file.
    pieces: Vec<(usize, usize)>,
}

impl Rest {
    /// Where byte `offset` of [`Rest::text`] stands in the file.
    pub fn in_file(&self, offset: usize) -> usize {
        let i = self.pieces.partition_point(|&(at, _)| at <= offset);
        match i.checked_sub(1).map(|i| self.pieces[i]) {
            Some((at, file)) => file + (offset - at),
            None => offset,
        }
    }
}

/// `text` without `sections` (from [`node_sections`]).
pub fn rest(text: &str, sections: &[Range<usize>]) -> Rest {
    let mut out = Rest {
        text: String::new(),
        pieces: Vec::new(),
    };
    let mut from = 0;
    let ends = sections.iter().map(|r| (r.start, r.end));
    for (to, next) in ends.chain([(text.len(), text.len())]) {
        if from < to {
            out.pieces.push((out.text.len(), from));
            out.text.push_str(&text[from..to]);
        }
        from = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'a>(text: &'a str, r: &[Range<usize>]) -> Vec<&'a str> {
        r.iter().map(|r| &text[r.clone()]).collect()
    }

    #[test]
    fn node_sections_run_from_their_header_to_the_next_other_table() {
        let text = "[defaults]\nusername = \"a\"\n\n\
                    [[node]]\nname = \"n1\"\n  [[node.fence]]\n  endpoint = \"ipmi://h\"\n\
                    [node.ssh]\nendpoint = \"ssh://x/host\"\n\
                    [[ node ]] # two\nname = \"n2\"\n\
                    [pdu.A]\nendpoint = \"snmp://p\"\n\
                    [[node]]\nname = \"n3\"";
        let s = node_sections(text).unwrap();
        assert_eq!(
            pieces(text, &s),
            [
                "[[node]]\nname = \"n1\"\n  [[node.fence]]\n  endpoint = \"ipmi://h\"\n\
                 [node.ssh]\nendpoint = \"ssh://x/host\"\n",
                "[[ node ]] # two\nname = \"n2\"\n",
                "[[node]]\nname = \"n3\"",
            ]
        );
        let rest = rest(text, &s);
        assert_eq!(
            rest.text,
            "[defaults]\nusername = \"a\"\n\n[pdu.A]\nendpoint = \"snmp://p\"\n"
        );
        // Each byte of the rest where it is in the file.
        for (i, b) in rest.text.bytes().enumerate() {
            assert_eq!(text.as_bytes()[rest.in_file(i)], b, "{i}");
        }
        let pdu = rest.text.find("[pdu.A]").unwrap();
        assert_eq!(rest.in_file(pdu), text.find("[pdu.A]").unwrap());
    }

    #[test]
    fn strings_and_values_over_several_lines_hide_what_looks_like_headers() {
        let text =
            "[[node]]\nname = \"n1\"\non_confirmed_off = \"\"\"\n[[node]]\n[pdu.X]\n\"\"\"\n\
                    probe_ports = [\n  22,\n]\nx = '''\n[a]\n'''\ny = [\n[1],\n]\n\
                    z = \"[[node]] # \\\" [b]\"\n[[node]]\nname = \"n2\"\n";
        let s = node_sections(text).unwrap();
        assert_eq!(s.len(), 2);
        assert!(pieces(text, &s)[0].ends_with("z = \"[[node]] # \\\" [b]\"\n"));
        assert_eq!(pieces(text, &s)[1], "[[node]]\nname = \"n2\"\n");
    }

    /// [`node_sections`] on one thread, from the start.
    fn one_scan(text: &str) -> Option<Vec<Range<usize>>> {
        let (mut state, mut out) = (Scan::START, Vec::new());
        scan(text, 0..text.len(), &mut state, &mut out)?;
        finish(state, out, text.len())
    }

    #[test]
    fn a_large_file_scanned_in_two_halves_gives_what_one_scan_gives() {
        let node = |i: usize| {
            format!("[[node]]\nname = \"n{i}\"\n  [[node.fence]]\n  endpoint = \"ipmi://h{i}\"\n")
        };
        let n = SPLIT_FROM / node(0).len() + 1000;
        let plain: String = (0..n).map(node).collect();
        let sections = node_sections(&plain).unwrap();
        assert_eq!(sections.len(), n);
        assert_eq!(Some(&sections), one_scan(&plain).as_ref());
        // What would make the second half's start wrong: the middle inside
        // a multi-line string, an array over lines, or a section that does
        // not read; then the second half is scanned again.
        // The node whose text holds the file's middle byte.
        let mut before = 0;
        let mid = (0..n)
            .find(|&i| {
                before += node(i).len();
                before > plain.len() / 2
            })
            .unwrap();
        let middle = |open: &str, close: &str| {
            let mut text = String::new();
            for i in 0..n {
                if i == mid {
                    text += &format!("[[node]]\nname = \"m\"\nx = {open}\n");
                    for _ in 0..10 {
                        text += &node(i);
                    }
                    text += close;
                    text += "\n";
                } else {
                    text += &node(i);
                }
            }
            text
        };
        for (open, close) in [("\"\"\"", "\"\"\""), ("'''", "'''"), ("[", "]")] {
            let text = middle(open, close);
            let rescans = RESCANS.load(std::sync::atomic::Ordering::Relaxed);
            let got = node_sections(&text);
            // (Split only where a second core scans beside this one.)
            let split = usize::from(super::super::inorder::helpers() >= 2);
            assert_eq!(
                RESCANS.load(std::sync::atomic::Ordering::Relaxed),
                rescans + split,
                "{open}: the first half ends inside the value"
            );
            assert_eq!(got, one_scan(&text), "{open}");
            assert_eq!(got.map(|s| s.len()), Some(n), "{open}");
        }
        let unclosed = middle("\"\"\"", "");
        assert_eq!(node_sections(&unclosed), None);
        let broken = plain.replacen(&node(n - 3), "[node]\nname = \"x\"\n", 1);
        assert_eq!(node_sections(&broken), None);
    }

    #[test]
    fn what_the_scan_cannot_be_sure_of_is_left_to_the_reader() {
        for text in [
            "[node]\nname = \"a\"\n",
            "[[node.fence]]\nendpoint = \"x\"\n",
            "[[\"node\"]]\nname = \"a\"\n",
            "[[node]]\nname = \"a\"\nx = \"\"\"\nopen\n",
            "[[node]]\nname = \"a\"\nx = [\n",
            "[[node]] x = 1\n",
            "[[node]]\nname = \"unterminated\n",
        ] {
            assert_eq!(node_sections(text), None, "{text}");
        }
        assert_eq!(node_sections("[defaults]\nx = 1\n"), Some(vec![]));
    }
}
