//! Parsing what the network sends, bounded: every XML and JSON answer a
//! platform reads (vim25 SOAP, EC2/STS, the Automation API, the Kubernetes
//! API, Redfish; RIBCL, UCS and oVirt XML when they come) goes through
//! [`xml`] or [`json`], which refuse a body too large or nested too deep
//! *before* a parser sees it.
//!
//! Why before: `roxmltree` descends recursively, so a reply of 100,000
//! nested elements overflows the stack (SIGSEGV: no error, no message, a
//! dead agent). `serde_json` stops at 128 levels by itself, but only once
//! it has recursed that far; one depth rule for both keeps the messages
//! alike. The depth scan is one pass over the bytes with no allocation and
//! no recursion; it errs towards counting deeper (a DTD, which no answer
//! fencing reads carries, is refused outright), never shallower, so what it
//! passes is safe for the parsers.
//!
//! What this leaves to callers: the meaning of the document, and capping
//! what is *read* from a socket (the HTTP layer's `max_body`); the size
//! check here holds for bodies that come some other way too.

use std::fmt;

/// The bounds of one parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest body, in bytes.
    pub bytes: usize,
    /// The deepest nesting: elements (XML), arrays and objects (JSON).
    pub depth: usize,
    /// The most XML nodes (elements, texts, attributes' owners).
    pub nodes: u32,
}

impl Limits {
    /// For a platform's answers: 16 MiB, 64 levels (a vim25 answer nests
    /// about 12, a Kubernetes object's `managedFields` about 20), 2 million
    /// nodes.
    pub const ANSWER: Limits = Limits {
        bytes: 16 << 20,
        depth: 64,
        nodes: 2_000_000,
    };

    /// [`Limits::ANSWER`] with another size cap.
    pub const fn with_bytes(self, bytes: usize) -> Limits {
        Limits { bytes, ..self }
    }
}

/// Why a body was not parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Larger than the bound.
    TooLarge {
        /// Its size.
        len: usize,
        /// The bound.
        limit: usize,
    },
    /// Nested deeper than the bound.
    TooDeep {
        /// The bound.
        limit: usize,
    },
    /// XML with a document type declaration (entities could expand it).
    Dtd,
    /// XML that is not UTF-8.
    NotUtf8,
    /// Not XML: the parser's words (printable, bounded).
    Xml(String),
    /// Not JSON: the parser's words.
    Json(String),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::TooLarge { len, limit } => write!(
                f,
                "the answer is {len} bytes, more than the {limit} fencekit reads"
            ),
            Refused::TooDeep { limit } => write!(
                f,
                "the answer is nested more than {limit} levels deep; refusing to parse it"
            ),
            Refused::Dtd => f.write_str("the answer carries a document type declaration (DTD)"),
            Refused::NotUtf8 => f.write_str("the answer is not UTF-8"),
            Refused::Xml(e) => write!(f, "not XML ({e})"),
            Refused::Json(e) => write!(f, "not JSON ({e})"),
        }
    }
}

impl std::error::Error for Refused {}

fn size(len: usize, limits: &Limits) -> Result<(), Refused> {
    if len > limits.bytes {
        return Err(Refused::TooLarge {
            len,
            limit: limits.bytes,
        });
    }
    Ok(())
}

/// An XML document within `limits`; no DTD.
pub fn xml<'i>(text: &'i str, limits: &Limits) -> Result<roxmltree::Document<'i>, Refused> {
    size(text.len(), limits)?;
    xml_depth(text.as_bytes(), limits.depth)?;
    let opts = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: limits.nodes,
    };
    roxmltree::Document::parse_with_options(text, opts)
        .map_err(|e| Refused::Xml(printable(&e.to_string())))
}

/// [`xml`] of bytes (which must be UTF-8).
pub fn xml_bytes<'i>(body: &'i [u8], limits: &Limits) -> Result<roxmltree::Document<'i>, Refused> {
    size(body.len(), limits)?;
    let text = std::str::from_utf8(body).map_err(|_| Refused::NotUtf8)?;
    xml(text, limits)
}

/// A JSON value within `limits`.
pub fn json<T: serde::de::DeserializeOwned>(body: &[u8], limits: &Limits) -> Result<T, Refused> {
    size(body.len(), limits)?;
    json_depth(body, limits.depth)?;
    serde_json::from_slice(body).map_err(|e| Refused::Json(printable(&e.to_string())))
}

fn printable(s: &str) -> String {
    s.chars()
        .take(160)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Refuses XML nested deeper than `limit` elements (and any DTD). Markup
/// is told apart as XML 1.0 §2 has it: comments, CDATA sections and
/// processing instructions hold no elements; a tag ends at the first `>`
/// outside quotes; `<` never appears in text.
fn xml_depth(b: &[u8], limit: usize) -> Result<(), Refused> {
    let mut depth = 0usize;
    let mut i = 0usize;
    let skip_to = |from: usize, end: &[u8]| -> usize {
        match b[from..].windows(end.len()).position(|w| w == end) {
            Some(p) => from + p + end.len(),
            None => b.len(),
        }
    };
    while i < b.len() {
        let Some(p) = memchr::memchr(b'<', &b[i..]) else {
            break;
        };
        i += p;
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            i = skip_to(i + 4, b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            i = skip_to(i + 9, b"]]>");
        } else if rest.starts_with(b"<?") {
            i = skip_to(i + 2, b"?>");
        } else if rest.starts_with(b"<!") {
            return Err(Refused::Dtd);
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            i = skip_to(i + 2, b">");
        } else {
            // A start tag: to its `>` outside quoted attribute values.
            let mut j = i + 1;
            let mut quote = None;
            while j < b.len() {
                match (quote, b[j]) {
                    (None, b'"' | b'\'') => quote = Some(b[j]),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'>') => break,
                    _ => {}
                }
                j += 1;
            }
            let empty = j < b.len() && j > i + 1 && b[j - 1] == b'/' && quote.is_none();
            if !empty {
                depth += 1;
                if depth > limit {
                    return Err(Refused::TooDeep { limit });
                }
            }
            i = j + 1;
        }
    }
    Ok(())
}

/// Refuses JSON nested deeper than `limit` arrays and objects (strings,
/// with their escapes, hold no nesting).
fn json_depth(b: &[u8], limit: usize) -> Result<(), Refused> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &c in b {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Err(Refused::TooDeep { limit });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(n: usize) -> String {
        format!("<a>{}{}</a>", "<b>".repeat(n), "</b>".repeat(n))
    }

    #[test]
    fn deep_xml_is_refused_before_the_parser_recurses() {
        // 100,000 levels overflow roxmltree's stack; refused, no crash.
        assert_eq!(
            xml(&nested(100_000), &Limits::ANSWER).unwrap_err(),
            Refused::TooDeep { limit: 64 }
        );
        assert!(xml(&nested(63), &Limits::ANSWER).is_ok());
        assert_eq!(
            xml(&nested(64), &Limits::ANSWER).unwrap_err(),
            Refused::TooDeep { limit: 64 }
        );
        // Empty elements, comments, CDATA, PIs and quoted '>' add no depth.
        let flat = format!(
            "<?xml version=\"1.0\"?><a x='>' y=\"/>\">{}<!-- <b> --><![CDATA[<c>]]><?p <d>?></a>",
            "<e/><f a='1'/>".repeat(1000)
        );
        assert!(xml(&flat, &Limits::ANSWER).is_ok());
        // A quoted '/>' does not make a start tag empty.
        let tricky = format!("<a>{}", "<b c='/>'>".repeat(100));
        assert_eq!(
            xml(&tricky, &Limits::ANSWER).unwrap_err(),
            Refused::TooDeep { limit: 64 }
        );
    }

    #[test]
    fn a_dtd_size_and_bad_bytes_are_refused_by_name() {
        let dtd = "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>";
        assert_eq!(xml(dtd, &Limits::ANSWER).unwrap_err(), Refused::Dtd);
        let small = Limits::ANSWER.with_bytes(10);
        assert_eq!(
            xml("<a>0123456789</a>", &small).unwrap_err(),
            Refused::TooLarge { len: 17, limit: 10 }
        );
        assert_eq!(
            xml_bytes(b"<a>\xff</a>", &Limits::ANSWER).unwrap_err(),
            Refused::NotUtf8
        );
        assert!(matches!(
            xml("<a><b></a>", &Limits::ANSWER),
            Err(Refused::Xml(_))
        ));
        let few = Limits {
            nodes: 10,
            ..Limits::ANSWER
        };
        assert!(matches!(
            xml(&format!("<r>{}</r>", "<a/>".repeat(50)), &few),
            Err(Refused::Xml(_))
        ));
    }

    #[test]
    fn deep_json_is_refused_and_strings_do_not_count() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(
            json::<serde_json::Value>(deep.as_bytes(), &Limits::ANSWER).unwrap_err(),
            Refused::TooDeep { limit: 64 }
        );
        let ok = format!("{}1{}", "[".repeat(64), "]".repeat(64));
        assert!(json::<serde_json::Value>(ok.as_bytes(), &Limits::ANSWER).is_ok());
        let s = format!(r#"{{"a": "{}\"[[", "b": [1]}}"#, "[{".repeat(500));
        let v: serde_json::Value = json(s.as_bytes(), &Limits::ANSWER).unwrap();
        assert_eq!(v["b"][0], 1);
        assert!(matches!(
            json::<serde_json::Value>(b"{nope", &Limits::ANSWER),
            Err(Refused::Json(_))
        ));
        assert_eq!(
            json::<serde_json::Value>(b"[1, 2, 3]", &Limits::ANSWER.with_bytes(4)).unwrap_err(),
            Refused::TooLarge { len: 9, limit: 4 }
        );
        // Messages read after "failed to" / name the bound.
        assert!(Refused::TooDeep { limit: 64 }
            .to_string()
            .contains("64 levels"));
    }
}
