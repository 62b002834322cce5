//! The subset of ASN.1 BER that SNMP uses (RFC 3416 §3, X.690 §8): tags,
//! definite lengths, INTEGER, OCTET STRING, NULL, OBJECT IDENTIFIER,
//! SEQUENCE, and SNMP's application types.
//!
//! Decoding never panics and never allocates more than the input's size:
//! every length is checked against what is left before it is used, and
//! errors are typed ([`Malformed`]). Encoding writes definite lengths only,
//! in the shortest form (what every agent accepts). No I/O here.

use std::fmt;

/// X.690 universal tags SNMP uses.
pub mod tag {
    /// INTEGER.
    pub const INTEGER: u8 = 0x02;
    /// OCTET STRING.
    pub const OCTET_STRING: u8 = 0x04;
    /// NULL.
    pub const NULL: u8 = 0x05;
    /// OBJECT IDENTIFIER.
    pub const OID: u8 = 0x06;
    /// SEQUENCE (constructed).
    pub const SEQUENCE: u8 = 0x30;
    /// IpAddress (RFC 2578 §7.1.5, application 0).
    pub const IP_ADDRESS: u8 = 0x40;
    /// Counter32 (application 1).
    pub const COUNTER32: u8 = 0x41;
    /// Gauge32 / Unsigned32 (application 2).
    pub const GAUGE32: u8 = 0x42;
    /// TimeTicks (application 3).
    pub const TIME_TICKS: u8 = 0x43;
    /// Opaque (application 4).
    pub const OPAQUE: u8 = 0x44;
    /// Counter64 (application 6).
    pub const COUNTER64: u8 = 0x46;
    /// noSuchObject exception (RFC 3416 §3, context 0, primitive).
    pub const NO_SUCH_OBJECT: u8 = 0x80;
    /// noSuchInstance exception (context 1).
    pub const NO_SUCH_INSTANCE: u8 = 0x81;
    /// endOfMibView exception (context 2).
    pub const END_OF_MIB_VIEW: u8 = 0x82;
}

/// Why bytes are not valid BER for SNMP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// The input ends inside an element.
    TooShort,
    /// A length is indefinite, too long to represent, or overruns its container.
    BadLength,
    /// A different element was expected here.
    UnexpectedTag {
        /// The tag the grammar requires.
        expected: u8,
        /// The tag found.
        found: u8,
    },
    /// An integer does not fit its type.
    IntegerOverflow,
    /// An OBJECT IDENTIFIER is empty, too long or badly encoded.
    BadOid,
    /// Bytes remain after the element that should have been the last.
    Trailing,
    /// A field holds a value the protocol does not allow.
    BadValue(&'static str),
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformed::TooShort => f.write_str("the message ends inside an element"),
            Malformed::BadLength => f.write_str("an element length is invalid"),
            Malformed::UnexpectedTag { expected, found } => {
                write!(f, "expected tag {expected:#04x}, found {found:#04x}")
            }
            Malformed::IntegerOverflow => f.write_str("an integer is out of range"),
            Malformed::BadOid => f.write_str("an object identifier is invalid"),
            Malformed::Trailing => f.write_str("bytes follow the end of the message"),
            Malformed::BadValue(what) => write!(f, "invalid {what}"),
        }
    }
}

impl std::error::Error for Malformed {}

/// Most arcs accepted in one OID (RFC 2578 §3.5 allows 128).
pub const MAX_OID_ARCS: usize = 128;

/// Text that is not an object identifier in dotted decimal (as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an object identifier")]
pub struct NotAnOid(pub String);

/// An OBJECT IDENTIFIER, e.g. `1.3.6.1.2.1.1.2.0`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Oid(pub Vec<u32>);

impl Oid {
    /// Parses dotted decimal, with or without a leading dot.
    pub fn parse(text: &str) -> Result<Oid, NotAnOid> {
        let t = text.trim().trim_start_matches('.');
        let arcs: Result<Vec<u32>, _> = t.split('.').map(str::parse::<u32>).collect();
        match arcs {
            Ok(a) if a.len() >= 2 && a.len() <= MAX_OID_ARCS && a[0] <= 2 => Ok(Oid(a)),
            _ => Err(NotAnOid(text.to_string())),
        }
    }

    /// True when `self` lies strictly below `root` (a walk's subtree test).
    pub fn starts_with(&self, root: &Oid) -> bool {
        self.0.len() > root.0.len() && self.0[..root.0.len()] == root.0[..]
    }

    /// This OID with `arcs` appended.
    pub fn child(&self, arcs: &[u32]) -> Oid {
        let mut v = self.0.clone();
        v.extend_from_slice(arcs);
        Oid(v)
    }
}

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for a in &self.0 {
            write!(f, ".{a}")?;
        }
        Ok(())
    }
}

/// A cursor over BER elements. Positions are absolute (from the start of
/// the original buffer), so a caller can find where a field lies (the USM
/// authentication parameters are signed in place).
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

/// One element: its tag, its content, and where the content starts.
#[derive(Clone, Copy, Debug)]
pub struct Element<'a> {
    /// The identifier octet (multi-octet tags are rejected).
    pub tag: u8,
    /// The content octets.
    pub content: &'a [u8],
    /// Absolute offset of the content in the original buffer.
    pub offset: usize,
}

impl<'a> Element<'a> {
    /// A reader over this (constructed) element's content.
    pub fn reader(&self) -> Reader<'a> {
        Reader {
            buf: self.content,
            pos: 0,
            base: self.offset,
        }
    }
}

impl<'a> Reader<'a> {
    /// A reader over a whole buffer.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            base: 0,
        }
    }

    /// True when every element has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Fails unless every element has been read.
    pub fn finish(&self) -> Result<(), Malformed> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(Malformed::Trailing)
        }
    }

    /// The next element's tag, without consuming it.
    pub fn peek_tag(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Reads the next element.
    pub fn element(&mut self) -> Result<Element<'a>, Malformed> {
        let rest = &self.buf[self.pos.min(self.buf.len())..];
        let (&t, after) = rest.split_first().ok_or(Malformed::TooShort)?;
        if t & 0x1f == 0x1f {
            return Err(Malformed::BadValue("multi-octet tag"));
        }
        let (&first, after) = after.split_first().ok_or(Malformed::TooShort)?;
        let (len, after) = if first < 0x80 {
            (usize::from(first), after)
        } else {
            let n = usize::from(first & 0x7f);
            // 0x80 is the indefinite form, which SNMP forbids; more than
            // four length octets cannot describe anything a datagram holds.
            if n == 0 || n > 4 {
                return Err(Malformed::BadLength);
            }
            if after.len() < n {
                return Err(Malformed::TooShort);
            }
            let len = after[..n]
                .iter()
                .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
            (len, &after[n..])
        };
        if after.len() < len {
            return Err(Malformed::BadLength);
        }
        let header = rest.len() - after.len();
        let offset = self.base + self.pos + header;
        self.pos += header + len;
        Ok(Element {
            tag: t,
            content: &after[..len],
            offset,
        })
    }

    /// Reads the next element, which must have tag `t`.
    pub fn expect(&mut self, t: u8) -> Result<Element<'a>, Malformed> {
        let e = self.element()?;
        if e.tag != t {
            return Err(Malformed::UnexpectedTag {
                expected: t,
                found: e.tag,
            });
        }
        Ok(e)
    }

    /// Reads a SEQUENCE (or another constructed tag `t`) and returns a reader over it.
    pub fn constructed(&mut self, t: u8) -> Result<Reader<'a>, Malformed> {
        Ok(self.expect(t)?.reader())
    }

    /// Reads an INTEGER that fits an i64.
    pub fn integer(&mut self) -> Result<i64, Malformed> {
        decode_signed(self.expect(tag::INTEGER)?.content)
    }

    /// Reads an INTEGER that must fit an i32 (request ids, error status).
    pub fn int32(&mut self) -> Result<i32, Malformed> {
        i32::try_from(self.integer()?).map_err(|_| Malformed::IntegerOverflow)
    }

    /// Reads an OCTET STRING.
    pub fn octets(&mut self) -> Result<&'a [u8], Malformed> {
        Ok(self.expect(tag::OCTET_STRING)?.content)
    }

    /// Reads an OCTET STRING and where its content starts.
    pub fn octets_at(&mut self) -> Result<(&'a [u8], usize), Malformed> {
        let e = self.expect(tag::OCTET_STRING)?;
        Ok((e.content, e.offset))
    }

    /// Reads an OBJECT IDENTIFIER.
    pub fn oid(&mut self) -> Result<Oid, Malformed> {
        decode_oid(self.expect(tag::OID)?.content)
    }
}

/// Two's-complement content octets → i64.
pub fn decode_signed(c: &[u8]) -> Result<i64, Malformed> {
    if c.is_empty() {
        return Err(Malformed::BadValue("empty integer"));
    }
    if c.len() > 8 {
        return Err(Malformed::IntegerOverflow);
    }
    let mut v: i64 = if c[0] & 0x80 != 0 { -1 } else { 0 };
    for &b in c {
        v = (v << 8) | i64::from(b);
    }
    Ok(v)
}

/// Content octets of an unsigned application type → u64 (at most 64 bits
/// of value, one leading zero octet allowed).
pub fn decode_unsigned(c: &[u8]) -> Result<u64, Malformed> {
    if c.is_empty() {
        return Err(Malformed::BadValue("empty integer"));
    }
    let c = if c.len() > 1 && c[0] == 0 { &c[1..] } else { c };
    if c.len() > 8 {
        return Err(Malformed::IntegerOverflow);
    }
    Ok(c.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
}

/// OID content octets → arcs (X.690 §8.19).
pub fn decode_oid(c: &[u8]) -> Result<Oid, Malformed> {
    if c.is_empty() {
        return Err(Malformed::BadOid);
    }
    let mut arcs = Vec::with_capacity(c.len().min(MAX_OID_ARCS) + 1);
    let mut acc: u64 = 0;
    let mut first = true;
    for (i, &b) in c.iter().enumerate() {
        if acc == 0 && b == 0x80 {
            // A leading 0x80 is a non-minimal encoding.
            return Err(Malformed::BadOid);
        }
        acc = (acc << 7) | u64::from(b & 0x7f);
        if acc > u64::from(u32::MAX) + 80 {
            return Err(Malformed::BadOid);
        }
        if b & 0x80 == 0 {
            if first {
                let (a, b) = match acc {
                    0..=39 => (0, acc),
                    40..=79 => (1, acc - 40),
                    _ => (2, acc - 80),
                };
                arcs.push(a);
                arcs.push(u32::try_from(b).map_err(|_| Malformed::BadOid)?);
                first = false;
            } else {
                arcs.push(u32::try_from(acc).map_err(|_| Malformed::BadOid)?);
            }
            acc = 0;
            if arcs.len() > MAX_OID_ARCS {
                return Err(Malformed::BadOid);
            }
        } else if i == c.len() - 1 {
            return Err(Malformed::BadOid);
        }
    }
    Ok(Oid(arcs))
}

/// Appends a length in the shortest definite form.
fn put_len(out: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = (len as u32).to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (4 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
}

/// The size of a tag-and-length header for `len` content octets.
pub fn header_len(len: usize) -> usize {
    match len {
        0..=0x7f => 2,
        0x80..=0xff => 3,
        0x100..=0xffff => 4,
        0x1_0000..=0xff_ffff => 5,
        _ => 6,
    }
}

/// Appends one element.
pub fn put(out: &mut Vec<u8>, t: u8, content: &[u8]) {
    out.push(t);
    put_len(out, content.len());
    out.extend_from_slice(content);
}

/// Appends an INTEGER.
pub fn put_integer(out: &mut Vec<u8>, v: i64) {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    // Drop redundant leading octets while the sign bit stays the same.
    while start < 7
        && ((bytes[start] == 0 && bytes[start + 1] & 0x80 == 0)
            || (bytes[start] == 0xff && bytes[start + 1] & 0x80 != 0))
    {
        start += 1;
    }
    put(out, tag::INTEGER, &bytes[start..]);
}

/// Appends an unsigned application value (Counter32, Gauge32, …).
pub fn put_unsigned(out: &mut Vec<u8>, t: u8, v: u64) {
    let bytes = v.to_be_bytes();
    let mut start = bytes.iter().take_while(|&&b| b == 0).count().min(7);
    let mut content = Vec::with_capacity(9);
    if bytes[start] & 0x80 != 0 {
        content.push(0);
    } else if start == 8 {
        start = 7;
    }
    content.extend_from_slice(&bytes[start..]);
    put(out, t, &content);
}

/// Appends an OBJECT IDENTIFIER.
pub fn put_oid(out: &mut Vec<u8>, oid: &Oid) {
    let mut c = Vec::with_capacity(oid.0.len() + 4);
    let arcs = &oid.0;
    let (a, b) = (
        arcs.first().copied().unwrap_or(0),
        arcs.get(1).copied().unwrap_or(0),
    );
    push_subid(&mut c, u64::from(a.min(2)) * 40 + u64::from(b));
    for &x in arcs.iter().skip(2) {
        push_subid(&mut c, u64::from(x));
    }
    put(out, tag::OID, &c);
}

fn push_subid(out: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 10];
    let mut n = 0;
    let mut v = v;
    loop {
        tmp[n] = (v & 0x7f) as u8;
        n += 1;
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    for i in (0..n).rev() {
        out.push(tmp[i] | if i > 0 { 0x80 } else { 0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_in_shortest_form() {
        for (v, enc) in [
            (0i64, vec![0x02, 1, 0]),
            (127, vec![0x02, 1, 0x7f]),
            (128, vec![0x02, 2, 0, 0x80]),
            (-1, vec![0x02, 1, 0xff]),
            (-129, vec![0x02, 2, 0xff, 0x7f]),
            (i64::from(i32::MAX), vec![0x02, 4, 0x7f, 0xff, 0xff, 0xff]),
        ] {
            let mut out = Vec::new();
            put_integer(&mut out, v);
            assert_eq!(out, enc, "{v}");
            assert_eq!(Reader::new(&out).integer(), Ok(v));
        }
    }

    #[test]
    fn oids_round_trip() {
        let oid = Oid::parse(".1.3.6.1.4.1.318.1.1.12.3.3.1.1.4.200000").unwrap();
        let mut out = Vec::new();
        put_oid(&mut out, &oid);
        assert_eq!(&out[..4], &[0x06, 0x12, 0x2b, 0x06]);
        assert_eq!(Reader::new(&out).oid(), Ok(oid.clone()));
        assert_eq!(oid.to_string(), ".1.3.6.1.4.1.318.1.1.12.3.3.1.1.4.200000");
    }

    #[test]
    fn long_lengths_and_truncation() {
        let mut out = Vec::new();
        put(&mut out, tag::OCTET_STRING, &[7u8; 300]);
        assert_eq!(&out[..4], &[0x04, 0x82, 0x01, 0x2c]);
        assert_eq!(header_len(300), 4);
        assert_eq!(Reader::new(&out).octets().map(<[u8]>::len), Ok(300));
        assert_eq!(Reader::new(&out[..100]).octets(), Err(Malformed::BadLength));
        assert_eq!(
            Reader::new(&[0x04, 0x80]).element().map(|_| ()),
            Err(Malformed::BadLength)
        );
        assert_eq!(
            Reader::new(&[0x04]).element().map(|_| ()),
            Err(Malformed::TooShort)
        );
    }

    #[test]
    fn bad_oids_are_refused() {
        for bad in [
            &[][..],
            &[0x2b, 0x86][..],
            &[0x80, 0x01][..],
            &[0xff; 12][..],
        ] {
            assert_eq!(decode_oid(bad), Err(Malformed::BadOid), "{bad:?}");
        }
    }

    #[test]
    fn unsigned_values() {
        let mut out = Vec::new();
        put_unsigned(&mut out, tag::COUNTER32, u64::from(u32::MAX));
        assert_eq!(out, vec![0x41, 5, 0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(decode_unsigned(&out[2..]), Ok(u64::from(u32::MAX)));
        out.clear();
        put_unsigned(&mut out, tag::GAUGE32, 0);
        assert_eq!(out, vec![0x42, 1, 0]);
    }
}
