//! `pcmk_host_map` as Pacemaker's fencer parses it.
//!
//! Pacemaker 3.0.2 (`daemons/fenced/fenced_commands.c`,
//! `build_port_aliases`) strips the value, splits it at every `;`, space
//! and tab, and splits each mapping at its first `:` or `=` into node and
//! port; a mapping without a separator, or with nothing on one side, is
//! logged as malformed and skipped. A backslash is an ordinary character.
//! Releases before it scanned the text character by character: a backslash
//! escaped the next character (and was removed from the port), and every
//! `:` or `=` started the node name anew, so `a:b:c` mapped `b` to `c`
//! where 3.0.2 maps `a` to `b:c`. Node names compare without case in both.

use super::{Finding, Severity};

/// A map as 3.0.2 reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostMap {
    /// (node, port), in order; a later mapping of a node replaces an earlier one.
    pub pairs: Vec<(String, String)>,
    /// The mappings 3.0.2 skips as malformed.
    pub malformed: Vec<String>,
}

impl HostMap {
    /// The port of `node` (compared without case), the last mapping winning.
    pub fn port(&self, node: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(node))
            .map(|(_, p)| p.as_str())
    }
}

/// `text` as Pacemaker 3.0.2 parses it.
pub fn parse(text: &str) -> HostMap {
    let mut m = HostMap::default();
    // g_strstrip: leading and trailing whitespace.
    let stripped = text.trim_matches(|c: char| c.is_ascii_whitespace());
    for mapping in stripped.split([';', ' ', '\t']) {
        if mapping.is_empty() {
            continue;
        }
        match mapping.split_once([':', '=']) {
            Some((n, p)) if !n.is_empty() && !p.is_empty() => {
                m.pairs.push((n.to_string(), p.to_string()))
            }
            _ => m.malformed.push(mapping.to_string()),
        }
    }
    m
}

/// `text` as Pacemaker before 3.0.2 parses it: (node, port), in order.
pub fn parse_legacy(text: &str) -> Vec<(String, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut name: Option<&[u8]> = None;
    let (mut last, mut i) = (0usize, 0usize);
    while i <= b.len() {
        let c = b.get(i).copied().unwrap_or(0);
        match c {
            b'\\' => i += 1,
            b'=' | b':' => {
                if i > last {
                    name = Some(&b[last..i]);
                }
                last = i + 1;
            }
            0 | b';' | b' ' | b'\t' => {
                if let Some(n) = name.take() {
                    let value: Vec<u8> = b[last.min(i)..i]
                        .iter()
                        .copied()
                        .filter(|&c| c != b'\\')
                        .collect();
                    out.push((
                        String::from_utf8_lossy(n).into_owned(),
                        String::from_utf8_lossy(&value).into_owned(),
                    ));
                }
                last = i + 1;
            }
            _ => {}
        }
        if c == 0 {
            break;
        }
        i += 1;
    }
    out
}

/// The findings about device `id`'s `pcmk_host_map`: mappings 3.0.2
/// skips, and nodes the releases before and since 3.0.2 map differently.
pub fn findings(id: &str, text: &str) -> Vec<Finding> {
    let now = parse(text);
    let mut out = Vec::new();
    for m in &now.malformed {
        out.push(Finding::new(
            "host-map-malformed",
            Severity::Weakened,
            id,
            format!(
                "pcmk_host_map entry '{m}' is not NODE:PORT: Pacemaker 3.0.2 skips it \
                 ('Malformed mapping'), so the fencer passes the node's own name as the port"
            ),
            "write each mapping as node:port, separated by ';' or spaces (no spaces around ':')",
        ));
    }
    let before = parse_legacy(text);
    let port_before = |node: &str| {
        before
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(node))
            .map(|(_, p)| p.as_str())
    };
    let mut nodes: Vec<&str> = now
        .pairs
        .iter()
        .map(|(n, _)| n.as_str())
        .chain(before.iter().map(|(n, _)| n.as_str()))
        .collect();
    nodes.sort_unstable_by_key(|n| n.to_ascii_lowercase());
    nodes.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    for n in nodes {
        let (old, new) = (port_before(n), now.port(n));
        if old != new {
            let show = |p: Option<&str>| p.map_or("nothing".to_string(), |p| format!("'{p}'"));
            out.push(Finding::new(
                "host-map-read-differently",
                Severity::Weakened,
                id,
                format!(
                    "Pacemaker 3.0.2 and later map '{n}' to {} in pcmk_host_map, earlier \
                     releases to {}: after an upgrade (or on a node not yet upgraded) the fencer \
                     passes another port for it",
                    show(new),
                    show(old)
                ),
                "write mappings both read alike: node:port with no backslash and one ':' per \
                 mapping, separated by ';'",
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn maps_parse_as_3_0_2_parses_them() {
        let m = parse(" node1:1;node2=2 \tnode3:vm-3 ");
        assert_eq!(
            m.pairs,
            pairs(&[("node1", "1"), ("node2", "2"), ("node3", "vm-3")])
        );
        assert!(m.malformed.is_empty());
        assert_eq!(m.port("NODE2"), Some("2"));
        // The first separator splits; the port keeps the rest.
        assert_eq!(parse("a:b:c").pairs, pairs(&[("a", "b:c")]));
        // No separator, or an empty side: skipped.
        let m = parse("node1 node2: :3 node4:4");
        assert_eq!(m.pairs, pairs(&[("node4", "4")]));
        assert_eq!(m.malformed, vec!["node1", "node2:", ":3"]);
        // Commas are no separator: one mapping with a comma in the port.
        assert_eq!(parse("n1:1,n2:2").pairs, pairs(&[("n1", "1,n2:2")]));
        // A backslash is kept.
        assert_eq!(parse("n1:vm\\ 1").pairs, pairs(&[("n1", "vm\\")]));
    }

    #[test]
    fn earlier_releases_read_some_maps_otherwise() {
        assert_eq!(
            parse_legacy("node1:1;node2=2"),
            pairs(&[("node1", "1"), ("node2", "2")])
        );
        assert_eq!(parse_legacy("a:b:c"), pairs(&[("b", "c")]));
        assert_eq!(parse_legacy("n1:vm\\ 1"), pairs(&[("n1", "vm 1")]));
        assert_eq!(parse_legacy("n1:1,n2:2"), pairs(&[("1,n2", "2")]));
        // Alike: no finding.
        assert!(findings("d", "node1:1;node2:2 node3=3").is_empty());
        let f = findings("d", "n1:1,n2:2");
        assert!(
            f.iter()
                .any(|f| f.id == "host-map-read-differently"
                    && f.message.contains("'n1' to '1,n2:2'")),
            "{f:?}"
        );
        let f = findings("d", "node1 node2:2");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].id, "host-map-malformed");
    }
}
