//! The `metadata` (also `meta-data`, `manpage`) XML, generated from the
//! definitions.
//!
//! Layout follows fence-agents 4.12.1 byte for byte where it is a fact
//! (element order, attributes, tab indentation, the two spaces in
//! `<content … />`, parameters sorted by `(order, key)`, each deprecated key
//! listed beside its replacement with `deprecated="1"` / `obsoletes="…"`);
//! the descriptions are fencekit's. It validates against upstream's
//! `metadata.rng`.

use super::defs::{Agent, OptType, OptionDef};

/// Escapes text for an XML attribute or element, as upstream escapes attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// How a parameter entry relates to a deprecated key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing<'a> {
    /// No deprecated key.
    Plain,
    /// The current key, replacing this old one.
    Obsoletes(&'a str),
    /// The old key itself.
    Deprecated,
}

/// One `<parameter>` entry: its name, the option, and its pairing.
pub type Entry<'a> = (&'a str, &'a OptionDef, Pairing<'a>);

/// The parameter entries in metadata order: every option under its key and,
/// when it has one, under its deprecated key, sorted by `(order, name)`.
pub fn entries(agent: &Agent) -> Vec<Entry<'_>> {
    let mut out: Vec<Entry<'_>> = Vec::new();
    for o in agent.options.iter() {
        match o.old_key {
            Some(old) => {
                out.push((o.key_str(), o, Pairing::Obsoletes(old)));
                out.push((old, o, Pairing::Deprecated));
            }
            None => out.push((o.key_str(), o, Pairing::Plain)),
        }
    }
    out.sort_by(|a, b| (a.1.order, a.0).cmp(&(b.1.order, b.0)));
    out
}

/// Appends `s` to `out`, escaped as [`escape`] does (no intermediate string:
/// the metadata path is part of an agent call's start-up).
fn push_escaped(out: &mut String, s: &str) {
    let mut rest = s;
    while let Some(i) = rest.find(['&', '"', '<', '>', '\'']) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'&' => "&amp;",
            b'"' => "&quot;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            _ => "&apos;",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

/// One piece of the document: literal markup, or text to escape.
enum Piece<'a> {
    Raw(&'a str),
    Text(&'a str),
}
use Piece::{Raw, Text};

/// Appends the pieces to `out`.
fn put(out: &mut String, pieces: &[Piece<'_>]) {
    for piece in pieces {
        match piece {
            Raw(s) => out.push_str(s),
            Text(s) => push_escaped(out, s),
        }
    }
}

/// The metadata XML of `agent` as invoked (its `name` attribute is the invoked name).
pub fn render(agent: &Agent) -> String {
    let fam = &agent.family;
    // One buffer sized for the largest agent's document, appended in place.
    let mut x = String::with_capacity(16 * 1024);
    x.push_str("<?xml version=\"1.0\" ?>\n");
    put(
        &mut x,
        &[
            Raw("<resource-agent name=\""),
            Text(agent.invoked_as),
            Raw("\" shortdesc=\""),
            Text(fam.shortdesc),
            Raw("\" >\n"),
        ],
    );
    for a in fam.aliases {
        put(
            &mut x,
            &[
                Raw("<symlink name=\""),
                Text(a.name),
                Raw("\" shortdesc=\""),
                Text(a.shortdesc),
                Raw("\"/>\n"),
            ],
        );
    }
    put(
        &mut x,
        &[Raw("<longdesc>"), Text(fam.longdesc), Raw("</longdesc>\n")],
    );
    put(
        &mut x,
        &[
            Raw("<vendor-url>"),
            Text(fam.vendor_url),
            Raw("</vendor-url>\n"),
        ],
    );
    x.push_str("<parameters>\n");
    for (name, o, pairing) in entries(agent) {
        put(&mut x, &[Raw("\t<parameter name=\""), Text(name)]);
        x.push_str(if o.required {
            "\" unique=\"0\" required=\"1\""
        } else {
            "\" unique=\"0\" required=\"0\""
        });
        match pairing {
            Pairing::Plain => {}
            Pairing::Obsoletes(old) => put(&mut x, &[Raw(" obsoletes=\""), Text(old), Raw("\"")]),
            Pairing::Deprecated => x.push_str(" deprecated=\"1\""),
        }
        put(
            &mut x,
            &[
                Raw(">\n\t\t<getopt mixed=\""),
                Text(&o.getopt_text()),
                Raw("\" />\n\t\t<content type=\""),
                Raw(o.ty.as_str()),
                Raw("\" "),
            ],
        );
        if let Some(d) = o.default {
            put(&mut x, &[Raw("default=\""), Text(d), Raw("\" ")]);
        }
        if o.ty == OptType::Select {
            x.push_str(" >\n");
            for c in o.choices {
                put(
                    &mut x,
                    &[Raw("\t\t\t<option value=\""), Text(c), Raw("\" />\n")],
                );
            }
            x.push_str("\t\t</content>\n");
        } else {
            x.push_str(" />\n");
        }
        put(
            &mut x,
            &[
                Raw("\t\t<shortdesc lang=\"en\">"),
                Text(o.desc),
                Raw("</shortdesc>\n\t</parameter>\n"),
            ],
        );
    }
    x.push_str("</parameters>\n<actions>\n");
    for a in fam.actions {
        if *a == "on" {
            let automatic = u8::from(fam.fabric);
            x.push_str(&format!(
                "\t<action name=\"on\" automatic=\"{automatic}\"/>\n"
            ));
        } else {
            put(&mut x, &[Raw("\t<action name=\""), Text(a), Raw("\" />\n")]);
        }
    }
    x.push_str("</actions>\n</resource-agent>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::defs::agent;

    fn param_names(xml: &str) -> Vec<String> {
        xml.lines()
            .filter_map(|l| l.strip_prefix("\t<parameter name=\""))
            .map(|l| l.split('"').next().unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn parameters_are_in_upstream_order() {
        // fencekit's extras (expect_uuid) come after every upstream parameter.
        let xml = render(&agent("fence_ipmilan").unwrap());
        let want = "action auth cipher hexadecimal_kg ip ipaddr ipport lanplus login method passwd \
                    passwd_script password password_script plug port privlvl target username quiet \
                    verbose verbose_level debug debug_file version help plug_separator delay \
                    disable_timeout ipmitool_path login_timeout port_as_ip power_timeout power_wait \
                    shell_timeout stonith_status_sleep ipmitool_timeout retry_on sudo use_sudo sudo_path \
                    expect_uuid workaround";
        assert_eq!(
            param_names(&xml),
            want.split_whitespace().collect::<Vec<_>>()
        );
    }

    #[test]
    fn layout_matches_upstream_conventions() {
        let xml = render(&agent("fence_ilo3").unwrap());
        assert!(xml.starts_with(
            "<?xml version=\"1.0\" ?>\n<resource-agent name=\"fence_ilo3\" shortdesc=\"Fence agent for IPMI\" >\n\
             <symlink name=\"fence_ilo3\" shortdesc=\"Fence agent for HP iLO3\"/>\n"
        ));
        assert!(xml.contains(
            "\t<parameter name=\"ip\" unique=\"0\" required=\"0\" obsoletes=\"ipaddr\">\n\
             \t\t<getopt mixed=\"-a, --ip=[ip]\" />\n\t\t<content type=\"string\"  />\n"
        ));
        assert!(xml.contains(
            "\t<parameter name=\"ipaddr\" unique=\"0\" required=\"0\" deprecated=\"1\">\n"
        ));
        assert!(
            xml.contains("\t\t<content type=\"boolean\" default=\"1\"  />\n"),
            "lanplus on for ilo3"
        );
        assert!(
            xml.contains("\t\t<content type=\"second\" default=\"4\"  />\n"),
            "power_wait 4 for ilo3"
        );
        assert!(xml.contains("\t\t<content type=\"select\"  >\n\t\t\t<option value=\"md5\" />\n"));
        assert!(xml.contains("\t\t<content type=\"select\" default=\"onoff\"  >\n"));
        assert!(xml.contains(
            "\t\t<getopt mixed=\"--verbose-level\" />\n\t\t<content type=\"integer\"  />\n"
        ));
        assert!(xml.contains("\t<parameter name=\"action\" unique=\"0\" required=\"1\">\n"));
        assert!(xml.ends_with(
            "<actions>\n\t<action name=\"on\" automatic=\"0\"/>\n\t<action name=\"off\" />\n\
             \t<action name=\"reboot\" />\n\t<action name=\"status\" />\n\t<action name=\"monitor\" />\n\
             \t<action name=\"metadata\" />\n\t<action name=\"manpage\" />\n\
             \t<action name=\"validate-all\" />\n\t<action name=\"diag\" />\n</actions>\n</resource-agent>\n"
        ));
        assert!(
            !xml.contains("name=\"list\""),
            "port-as-ip agents do not advertise list"
        );
    }

    #[test]
    fn escaping_covers_markup_characters() {
        assert_eq!(
            escape(r#"<a href='x'>&"#),
            "&lt;a href=&apos;x&apos;&gt;&amp;"
        );
        let xml = render(&agent("fence_ipmilan").unwrap());
        assert!(xml.contains("getopt mixed=\"--disable-timeout=[true/false]\""));
    }
}
