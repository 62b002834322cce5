//! SNMP messages as bytes and back (no I/O, no keys): community messages
//! of v1 and v2c (RFC 1157, RFC 1901), v3 messages (RFC 3412 §6) with the
//! USM security parameters (RFC 3414 §2.4), scoped PDUs, PDUs and variable
//! bindings (RFC 3416 §3).
//!
//! What the v3 authentication covers is the whole message with the
//! authentication parameters zeroed, so encoding reports where those bytes
//! lie and decoding records where they were found; signing and checking is
//! [`super::usm`]'s job.

use super::ber::{self, tag, Malformed, Oid, Reader};
use crate::secret::Secret;
use std::ops::Range;

/// The version field of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// SNMPv1 (version 0 on the wire).
    V1,
    /// SNMPv2c (version 1 on the wire).
    V2c,
    /// SNMPv3 (version 3 on the wire).
    V3,
}

impl Version {
    /// The wire value.
    pub fn wire(self) -> i64 {
        match self {
            Version::V1 => 0,
            Version::V2c => 1,
            Version::V3 => 3,
        }
    }

    /// As fence-agents spells it (`1`, `2c`, `3`).
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "1",
            Version::V2c => "2c",
            Version::V3 => "3",
        }
    }
}

/// PDU types (RFC 3416 §3, context-specific constructed tags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PduKind {
    /// GetRequest-PDU.
    Get,
    /// GetNextRequest-PDU.
    GetNext,
    /// Response-PDU (GetResponse in v1).
    Response,
    /// SetRequest-PDU.
    Set,
    /// GetBulkRequest-PDU (v2c and v3 only).
    GetBulk,
    /// Report-PDU (v3 engine discovery and USM errors).
    Report,
}

impl PduKind {
    /// The tag on the wire.
    pub fn tag(self) -> u8 {
        match self {
            PduKind::Get => 0xa0,
            PduKind::GetNext => 0xa1,
            PduKind::Response => 0xa2,
            PduKind::Set => 0xa3,
            PduKind::GetBulk => 0xa5,
            PduKind::Report => 0xa8,
        }
    }

    /// The PDU kind for a tag; traps and informs are not handled here.
    pub fn from_tag(t: u8) -> Option<PduKind> {
        Some(match t {
            0xa0 => PduKind::Get,
            0xa1 => PduKind::GetNext,
            0xa2 => PduKind::Response,
            0xa3 => PduKind::Set,
            0xa5 => PduKind::GetBulk,
            0xa8 => PduKind::Report,
            _ => return None,
        })
    }
}

/// Error-status values of a Response-PDU (RFC 3416 §3; v1 uses 0–5).
pub mod error_status {
    /// No error.
    pub const NO_ERROR: i64 = 0;
    /// v1: an OID names nothing (v2 reports exceptions per binding instead).
    pub const NO_SUCH_NAME: i64 = 2;
    /// A value has the wrong type or range.
    pub const BAD_VALUE: i64 = 3;
    /// v1: the variable cannot be written.
    pub const READ_ONLY: i64 = 4;
    /// Some other error.
    pub const GEN_ERR: i64 = 5;
    /// v2: the variable is not accessible.
    pub const NO_ACCESS: i64 = 6;
    /// v2: a value of the wrong ASN.1 type.
    pub const WRONG_TYPE: i64 = 7;
    /// v2: the value is not one the variable may take.
    pub const WRONG_VALUE: i64 = 10;
    /// v2: the agent would not carry out the set.
    pub const COMMIT_FAILED: i64 = 14;
    /// v2: the community or user may not do this (VACM).
    pub const AUTHORIZATION_ERROR: i64 = 16;
    /// v2: the variable cannot be written.
    pub const NOT_WRITABLE: i64 = 17;

    /// The RFC name of a status, for messages.
    pub fn name(s: i64) -> &'static str {
        match s {
            0 => "noError",
            1 => "tooBig",
            2 => "noSuchName",
            3 => "badValue",
            4 => "readOnly",
            5 => "genErr",
            6 => "noAccess",
            7 => "wrongType",
            8 => "wrongLength",
            9 => "wrongEncoding",
            10 => "wrongValue",
            11 => "noCreation",
            12 => "inconsistentValue",
            13 => "resourceUnavailable",
            14 => "commitFailed",
            15 => "undoFailed",
            16 => "authorizationError",
            17 => "notWritable",
            18 => "inconsistentName",
            _ => "unknown error",
        }
    }
}

/// A value in a variable binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// INTEGER / Integer32.
    Integer(i64),
    /// OCTET STRING (text or bytes).
    OctetString(Vec<u8>),
    /// NULL (the value of every binding in a request).
    Null,
    /// OBJECT IDENTIFIER.
    Oid(Oid),
    /// IpAddress.
    IpAddress([u8; 4]),
    /// Counter32.
    Counter32(u32),
    /// Gauge32 / Unsigned32.
    Gauge32(u32),
    /// TimeTicks (hundredths of a second).
    TimeTicks(u32),
    /// Opaque.
    Opaque(Vec<u8>),
    /// Counter64.
    Counter64(u64),
    /// v2 exception: no such object.
    NoSuchObject,
    /// v2 exception: no such instance.
    NoSuchInstance,
    /// v2 exception: end of the MIB view.
    EndOfMibView,
}

impl Value {
    /// The value as an integer, for any integral type.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Integer(v) => Some(*v),
            Value::Counter32(v) | Value::Gauge32(v) | Value::TimeTicks(v) => Some(i64::from(*v)),
            Value::Counter64(v) => i64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// True for the three v2 exceptions.
    pub fn is_exception(&self) -> bool {
        matches!(
            self,
            Value::NoSuchObject | Value::NoSuchInstance | Value::EndOfMibView
        )
    }

    /// The value as text the way `snmpget -Oeq` would show a string or a
    /// number (strings without quotes; used for names and comparisons).
    pub fn to_text(&self) -> String {
        match self {
            Value::OctetString(b) | Value::Opaque(b) => String::from_utf8_lossy(b).into_owned(),
            Value::Oid(o) => o.to_string(),
            Value::IpAddress(a) => format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]),
            Value::Null => String::new(),
            Value::NoSuchObject => "No Such Object".into(),
            Value::NoSuchInstance => "No Such Instance".into(),
            Value::EndOfMibView => "End of MIB".into(),
            v => v.as_int().map(|i| i.to_string()).unwrap_or_default(),
        }
    }

    fn decode(e: ber::Element<'_>) -> Result<Value, Malformed> {
        let c = e.content;
        let u32_of = |c: &[u8]| {
            u32::try_from(ber::decode_unsigned(c)?).map_err(|_| Malformed::IntegerOverflow)
        };
        Ok(match e.tag {
            tag::INTEGER => Value::Integer(ber::decode_signed(c)?),
            tag::OCTET_STRING => Value::OctetString(c.to_vec()),
            tag::NULL => {
                if !c.is_empty() {
                    return Err(Malformed::BadValue("NULL with content"));
                }
                Value::Null
            }
            tag::OID => Value::Oid(ber::decode_oid(c)?),
            tag::IP_ADDRESS => Value::IpAddress(
                c.try_into()
                    .map_err(|_| Malformed::BadValue("IpAddress length"))?,
            ),
            tag::COUNTER32 => Value::Counter32(u32_of(c)?),
            tag::GAUGE32 => Value::Gauge32(u32_of(c)?),
            tag::TIME_TICKS => Value::TimeTicks(u32_of(c)?),
            tag::OPAQUE => Value::Opaque(c.to_vec()),
            tag::COUNTER64 => Value::Counter64(ber::decode_unsigned(c)?),
            tag::NO_SUCH_OBJECT => Value::NoSuchObject,
            tag::NO_SUCH_INSTANCE => Value::NoSuchInstance,
            tag::END_OF_MIB_VIEW => Value::EndOfMibView,
            _ => return Err(Malformed::BadValue("value type")),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Integer(v) => ber::put_integer(out, *v),
            Value::OctetString(b) => ber::put(out, tag::OCTET_STRING, b),
            Value::Null => ber::put(out, tag::NULL, &[]),
            Value::Oid(o) => ber::put_oid(out, o),
            Value::IpAddress(a) => ber::put(out, tag::IP_ADDRESS, a),
            Value::Counter32(v) => ber::put_unsigned(out, tag::COUNTER32, u64::from(*v)),
            Value::Gauge32(v) => ber::put_unsigned(out, tag::GAUGE32, u64::from(*v)),
            Value::TimeTicks(v) => ber::put_unsigned(out, tag::TIME_TICKS, u64::from(*v)),
            Value::Opaque(b) => ber::put(out, tag::OPAQUE, b),
            Value::Counter64(v) => ber::put_unsigned(out, tag::COUNTER64, *v),
            Value::NoSuchObject => ber::put(out, tag::NO_SUCH_OBJECT, &[]),
            Value::NoSuchInstance => ber::put(out, tag::NO_SUCH_INSTANCE, &[]),
            Value::EndOfMibView => ber::put(out, tag::END_OF_MIB_VIEW, &[]),
        }
    }
}

/// One variable binding: a name and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarBind {
    /// The variable.
    pub oid: Oid,
    /// Its value (NULL in requests other than Set).
    pub value: Value,
}

impl VarBind {
    /// A binding with a NULL value, as requests carry.
    pub fn null(oid: Oid) -> Self {
        VarBind {
            oid,
            value: Value::Null,
        }
    }
}

/// A PDU. For GetBulk, `error_status` is non-repeaters and `error_index`
/// max-repetitions (RFC 3416 §4.2.3 reuses the fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pdu {
    /// The PDU type.
    pub kind: PduKind,
    /// Matches a response to its request.
    pub request_id: i32,
    /// error-status (or non-repeaters).
    pub error_status: i64,
    /// error-index (or max-repetitions).
    pub error_index: i64,
    /// The bindings.
    pub varbinds: Vec<VarBind>,
}

/// Most bindings decoded from one PDU (a datagram cannot hold more of any use).
const MAX_VARBINDS: usize = 1024;

impl Pdu {
    /// A request of `kind` for `varbinds`.
    pub fn request(kind: PduKind, request_id: i32, varbinds: Vec<VarBind>) -> Self {
        Pdu {
            kind,
            request_id,
            error_status: 0,
            error_index: 0,
            varbinds,
        }
    }

    /// Appends the PDU's encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut vbs = Vec::with_capacity(16 * self.varbinds.len());
        for vb in &self.varbinds {
            let mut one = Vec::with_capacity(32);
            ber::put_oid(&mut one, &vb.oid);
            vb.value.encode(&mut one);
            ber::put(&mut vbs, tag::SEQUENCE, &one);
        }
        let mut body = Vec::with_capacity(vbs.len() + 16);
        ber::put_integer(&mut body, i64::from(self.request_id));
        ber::put_integer(&mut body, self.error_status);
        ber::put_integer(&mut body, self.error_index);
        ber::put(&mut body, tag::SEQUENCE, &vbs);
        ber::put(out, self.kind.tag(), &body);
    }

    /// Decodes one PDU element from `r`.
    pub fn decode(r: &mut Reader<'_>) -> Result<Pdu, Malformed> {
        let e = r.element()?;
        let kind = PduKind::from_tag(e.tag).ok_or(Malformed::BadValue("PDU type"))?;
        let mut p = e.reader();
        let request_id = p.int32()?;
        let error_status = p.integer()?;
        let error_index = p.integer()?;
        let mut list = p.constructed(tag::SEQUENCE)?;
        p.finish()?;
        let mut varbinds = Vec::new();
        while !list.is_empty() {
            if varbinds.len() >= MAX_VARBINDS {
                return Err(Malformed::BadValue("number of bindings"));
            }
            let mut vb = list.constructed(tag::SEQUENCE)?;
            let oid = vb.oid()?;
            let value = Value::decode(vb.element()?)?;
            vb.finish()?;
            varbinds.push(VarBind { oid, value });
        }
        Ok(Pdu {
            kind,
            request_id,
            error_status,
            error_index,
            varbinds,
        })
    }
}

/// A v1 or v2c message. The community is a secret (it is the password).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommunityMessage {
    /// V1 or V2c.
    pub version: Version,
    /// The community string.
    pub community: Secret,
    /// The PDU.
    pub pdu: Pdu,
}

impl CommunityMessage {
    /// The message's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(64 + self.community.len());
        ber::put_integer(&mut body, self.version.wire());
        ber::put(&mut body, tag::OCTET_STRING, self.community.expose());
        self.pdu.encode(&mut body);
        let mut out = Vec::with_capacity(body.len() + 4);
        ber::put(&mut out, tag::SEQUENCE, &body);
        out
    }
}

/// msgFlags bits (RFC 3412 §6.4).
pub mod flags {
    /// Authenticated.
    pub const AUTH: u8 = 0x01;
    /// Encrypted.
    pub const PRIV: u8 = 0x02;
    /// The receiver should answer with a Report on error.
    pub const REPORTABLE: u8 = 0x04;
}

/// The USM security model number (RFC 3411).
pub const SECURITY_MODEL_USM: i64 = 3;

/// UsmSecurityParameters (RFC 3414 §2.4).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct UsmParams {
    /// msgAuthoritativeEngineID.
    pub engine_id: Vec<u8>,
    /// msgAuthoritativeEngineBoots.
    pub boots: u32,
    /// msgAuthoritativeEngineTime (seconds).
    pub time: u32,
    /// msgUserName.
    pub user: Vec<u8>,
    /// msgAuthenticationParameters (the truncated HMAC, or empty).
    pub auth: Vec<u8>,
    /// msgPrivacyParameters (the salt, or empty).
    pub privacy: Vec<u8>,
}

/// A scoped PDU (RFC 3412 §6.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopedPdu {
    /// contextEngineID.
    pub context_engine_id: Vec<u8>,
    /// contextName.
    pub context_name: Vec<u8>,
    /// The PDU.
    pub pdu: Pdu,
}

impl ScopedPdu {
    /// The scoped PDU's bytes (what privacy encrypts).
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(64);
        ber::put(&mut body, tag::OCTET_STRING, &self.context_engine_id);
        ber::put(&mut body, tag::OCTET_STRING, &self.context_name);
        self.pdu.encode(&mut body);
        let mut out = Vec::with_capacity(body.len() + 4);
        ber::put(&mut out, tag::SEQUENCE, &body);
        out
    }

    /// Decodes a scoped PDU; bytes after it (DES padding) are ignored, as
    /// RFC 3414 §8.3.2 allows.
    pub fn decode(buf: &[u8]) -> Result<ScopedPdu, Malformed> {
        let mut r = Reader::new(buf);
        let mut s = r.constructed(tag::SEQUENCE)?;
        let context_engine_id = s.octets()?.to_vec();
        let context_name = s.octets()?.to_vec();
        let pdu = Pdu::decode(&mut s)?;
        s.finish()?;
        Ok(ScopedPdu {
            context_engine_id,
            context_name,
            pdu,
        })
    }
}

/// The scoped PDU of a v3 message: in clear, or encrypted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScopedData {
    /// Plaintext.
    Plain(ScopedPdu),
    /// The encryptedPDU octets.
    Encrypted(Vec<u8>),
}

/// A v3 message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct V3Message {
    /// msgID.
    pub msg_id: i32,
    /// msgMaxSize.
    pub max_size: i32,
    /// msgFlags.
    pub flags: u8,
    /// The USM parameters.
    pub usm: UsmParams,
    /// The scoped PDU.
    pub data: ScopedData,
    /// Where msgAuthenticationParameters' content lies in the encoded
    /// message (what is zeroed to compute or check the HMAC).
    pub auth_range: Range<usize>,
}

impl V3Message {
    /// Encodes the message; `auth_range` in the result says where the
    /// authentication parameters' bytes are (the caller signs in place).
    pub fn encode(&self) -> (Vec<u8>, Range<usize>) {
        let mut usm = Vec::with_capacity(64 + self.usm.engine_id.len());
        ber::put(&mut usm, tag::OCTET_STRING, &self.usm.engine_id);
        ber::put_integer(&mut usm, i64::from(self.usm.boots));
        ber::put_integer(&mut usm, i64::from(self.usm.time));
        ber::put(&mut usm, tag::OCTET_STRING, &self.usm.user);
        let auth_in_usm = usm.len() + ber::header_len(self.usm.auth.len());
        ber::put(&mut usm, tag::OCTET_STRING, &self.usm.auth);
        ber::put(&mut usm, tag::OCTET_STRING, &self.usm.privacy);
        let mut usm_seq = Vec::with_capacity(usm.len() + 4);
        ber::put(&mut usm_seq, tag::SEQUENCE, &usm);
        let auth_in_usm = auth_in_usm + ber::header_len(usm.len());

        let mut header = Vec::with_capacity(24);
        ber::put_integer(&mut header, i64::from(self.msg_id));
        ber::put_integer(&mut header, i64::from(self.max_size));
        ber::put(&mut header, tag::OCTET_STRING, &[self.flags]);
        ber::put_integer(&mut header, SECURITY_MODEL_USM);

        let mut body = Vec::with_capacity(128 + usm_seq.len());
        ber::put_integer(&mut body, Version::V3.wire());
        ber::put(&mut body, tag::SEQUENCE, &header);
        let auth_in_body = body.len() + ber::header_len(usm_seq.len()) + auth_in_usm;
        ber::put(&mut body, tag::OCTET_STRING, &usm_seq);
        match &self.data {
            ScopedData::Plain(s) => body.extend_from_slice(&s.encode()),
            ScopedData::Encrypted(e) => ber::put(&mut body, tag::OCTET_STRING, e),
        }
        let mut out = Vec::with_capacity(body.len() + 4);
        ber::put(&mut out, tag::SEQUENCE, &body);
        let start = ber::header_len(body.len()) + auth_in_body;
        (out, start..start + self.usm.auth.len())
    }
}

/// Any message this codec understands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// v1 or v2c.
    Community(CommunityMessage),
    /// v3.
    V3(V3Message),
}

/// Decodes one datagram.
pub fn decode(buf: &[u8]) -> Result<Message, Malformed> {
    let mut outer = Reader::new(buf);
    let mut m = outer.constructed(tag::SEQUENCE)?;
    outer.finish()?;
    let version = m.integer()?;
    match version {
        0 | 1 => {
            let community = Secret::new(m.octets()?.to_vec());
            let pdu = Pdu::decode(&mut m)?;
            m.finish()?;
            Ok(Message::Community(CommunityMessage {
                version: if version == 0 {
                    Version::V1
                } else {
                    Version::V2c
                },
                community,
                pdu,
            }))
        }
        3 => {
            let mut h = m.constructed(tag::SEQUENCE)?;
            let msg_id = h.int32()?;
            let max_size = h.int32()?;
            let f = h.octets()?;
            let [flags] = f else {
                return Err(Malformed::BadValue("msgFlags length"));
            };
            if h.integer()? != SECURITY_MODEL_USM {
                return Err(Malformed::BadValue(
                    "security model (only USM is supported)",
                ));
            }
            h.finish()?;
            let mut sp = m.expect(tag::OCTET_STRING)?.reader();
            let mut u = sp.constructed(tag::SEQUENCE)?;
            sp.finish()?;
            let engine_id = u.octets()?.to_vec();
            let boots = u32::try_from(u.integer()?).map_err(|_| Malformed::IntegerOverflow)?;
            let time = u32::try_from(u.integer()?).map_err(|_| Malformed::IntegerOverflow)?;
            let user = u.octets()?.to_vec();
            let (auth, at) = u.octets_at()?;
            let privacy = u.octets()?.to_vec();
            u.finish()?;
            let data = if m.peek_tag() == Some(tag::OCTET_STRING) {
                ScopedData::Encrypted(m.octets()?.to_vec())
            } else {
                let e = m.expect(tag::SEQUENCE)?;
                // Re-read the whole element so the decoder sees its header.
                let start = e.offset - ber::header_len(e.content.len());
                let whole = buf
                    .get(start..e.offset + e.content.len())
                    .ok_or(Malformed::BadLength)?;
                ScopedData::Plain(ScopedPdu::decode(whole)?)
            };
            m.finish()?;
            Ok(Message::V3(V3Message {
                msg_id,
                max_size,
                flags: *flags,
                usm: UsmParams {
                    engine_id,
                    boots,
                    time,
                    user,
                    auth: auth.to_vec(),
                    privacy,
                },
                data,
                auth_range: at..at + auth.len(),
            }))
        }
        _ => Err(Malformed::BadValue("version")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(s: &str) -> Oid {
        Oid::parse(s).unwrap()
    }

    #[test]
    fn community_get_matches_net_snmp_bytes() {
        // `snmpget -v2c -c public HOST .1.3.6.1.2.1.1.2.0` with request-id
        // 0x1234, as captured from net-snmp.
        let m = CommunityMessage {
            version: Version::V2c,
            community: Secret::from_str_value("public"),
            pdu: Pdu::request(
                PduKind::Get,
                0x1234,
                vec![VarBind::null(oid("1.3.6.1.2.1.1.2.0"))],
            ),
        };
        let bytes = m.encode();
        let expected = [
            0x30, 0x27, 0x02, 0x01, 0x01, 0x04, 0x06, b'p', b'u', b'b', b'l', b'i', b'c', 0xa0,
            0x1a, 0x02, 0x02, 0x12, 0x34, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x0e, 0x30,
            0x0c, 0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x02, 0x00, 0x05, 0x00,
        ];
        assert_eq!(bytes, expected);
        assert_eq!(decode(&bytes), Ok(Message::Community(m)));
    }

    #[test]
    fn v3_round_trip_and_auth_range() {
        let m = V3Message {
            msg_id: 77,
            max_size: 65507,
            flags: flags::AUTH | flags::REPORTABLE,
            usm: UsmParams {
                engine_id: vec![0x80, 0, 0x1f, 0x88, 4, 1, 2, 3],
                boots: 5,
                time: 300,
                user: b"fence".to_vec(),
                auth: vec![0; 12],
                privacy: vec![],
            },
            data: ScopedData::Plain(ScopedPdu {
                context_engine_id: vec![1, 2],
                context_name: vec![],
                pdu: Pdu::request(
                    PduKind::Get,
                    9,
                    vec![VarBind::null(oid("1.3.6.1.2.1.1.2.0"))],
                ),
            }),
            auth_range: 0..0,
        };
        let (mut bytes, range) = m.encode();
        assert_eq!(range.len(), 12);
        bytes[range.clone()].copy_from_slice(&[0xab; 12]);
        let Ok(Message::V3(d)) = decode(&bytes) else {
            panic!("not v3")
        };
        assert_eq!(d.auth_range, range);
        assert_eq!(d.usm.auth, vec![0xab; 12]);
        assert_eq!(d.data, m.data);
    }

    #[test]
    fn traps_and_garbage_are_errors() {
        assert!(decode(&[0x30, 0x03, 0x02, 0x01, 0x07]).is_err());
        assert!(decode(&[]).is_err());
        let trap = [
            0x30, 0x0b, 0x02, 0x01, 0x00, 0x04, 0x00, 0xa4, 0x04, 0x02, 0x02, 0x00, 0x01,
        ];
        assert!(decode(&trap).is_err());
    }
}
