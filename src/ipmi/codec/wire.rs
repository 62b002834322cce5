//! The wire frame: RMCP header, IPMI 1.5 and 2.0 session headers and
//! trailers, the IPMI LAN message (request/response frame), the protocol's
//! constants and the words for status and completion codes.

use thiserror::Error;

/// RMCP version 1.0 (IPMI 2.0 table 13-1).
pub const RMCP_VERSION: u8 = 0x06;
/// RMCP sequence number meaning "no RMCP ACK" (IPMI 2.0 §13.1.3).
pub const RMCP_NO_ACK: u8 = 0xff;
/// RMCP message class: IPMI.
pub const RMCP_CLASS_IPMI: u8 = 0x07;
/// RMCP message class: ASF.
pub const RMCP_CLASS_ASF: u8 = 0x06;

/// Session auth type field value for RMCP+ (IPMI 2.0 table 13-8).
pub const AUTHTYPE_RMCPP: u8 = 0x06;

/// RMCP+ payload types (IPMI 2.0 table 13-16).
pub mod payload {
    /// An IPMI message.
    pub const IPMI: u8 = 0x00;
    /// RMCP+ Open Session Request.
    pub const OPEN_SESSION_REQUEST: u8 = 0x10;
    /// RMCP+ Open Session Response.
    pub const OPEN_SESSION_RESPONSE: u8 = 0x11;
    /// RAKP Message 1.
    pub const RAKP1: u8 = 0x12;
    /// RAKP Message 2.
    pub const RAKP2: u8 = 0x13;
    /// RAKP Message 3.
    pub const RAKP3: u8 = 0x14;
    /// RAKP Message 4.
    pub const RAKP4: u8 = 0x15;
    /// Payload-type bit: payload is encrypted.
    pub const ENCRYPTED: u8 = 0x80;
    /// Payload-type bit: packet carries an integrity trailer.
    pub const AUTHENTICATED: u8 = 0x40;
}

/// Network functions (IPMI 2.0 table 5-1), request values.
pub mod netfn {
    /// Chassis.
    pub const CHASSIS: u8 = 0x00;
    /// Application.
    pub const APP: u8 = 0x06;
    /// Group extension (IPMI 2.0 table 5-1: 2Ch); the first data byte names
    /// the group (DCMI: [`super::DCMI_GROUP`]).
    pub const GROUP_EXT: u8 = 0x2c;
}

/// DCMI's group extension ID (DCMI 1.5 §6.1: DCh), first byte of every DCMI
/// request and response.
pub const DCMI_GROUP: u8 = 0xdc;

/// Command numbers (IPMI 2.0 appendix G).
pub mod cmd {
    /// Chassis: Get Chassis Status.
    pub const GET_CHASSIS_STATUS: u8 = 0x01;
    /// Chassis: Chassis Control.
    pub const CHASSIS_CONTROL: u8 = 0x02;
    /// App: Get Device ID.
    pub const GET_DEVICE_ID: u8 = 0x01;
    /// App: Get Channel Authentication Capabilities.
    pub const GET_CHANNEL_AUTH_CAPS: u8 = 0x38;
    /// App: Get Session Challenge (IPMI 1.5).
    pub const GET_SESSION_CHALLENGE: u8 = 0x39;
    /// App: Activate Session (IPMI 1.5).
    pub const ACTIVATE_SESSION: u8 = 0x3a;
    /// App: Set Session Privilege Level.
    pub const SET_SESSION_PRIVILEGE: u8 = 0x3b;
    /// App: Close Session.
    pub const CLOSE_SESSION: u8 = 0x3c;
    /// App: Get Channel Cipher Suites.
    pub const GET_CHANNEL_CIPHER_SUITES: u8 = 0x54;
    /// App: Get System GUID (IPMI 2.0 §22.14).
    pub const GET_SYSTEM_GUID: u8 = 0x37;
    /// Group extension DCMI: Get Power Reading (DCMI 1.5 §6.6.1).
    pub const DCMI_GET_POWER_READING: u8 = 0x02;
}

/// Completion codes (IPMI 2.0 table 5-2) that the client acts on.
pub mod cc {
    /// Command completed normally.
    pub const OK: u8 = 0x00;
    /// Node busy.
    pub const NODE_BUSY: u8 = 0xc0;
    /// Invalid command.
    pub const INVALID_COMMAND: u8 = 0xc1;
    /// Timeout while processing.
    pub const TIMEOUT: u8 = 0xc3;
    /// Out of space.
    pub const OUT_OF_SPACE: u8 = 0xc4;
    /// Request data length invalid.
    pub const BAD_LENGTH: u8 = 0xc7;
    /// Invalid data field in request.
    pub const INVALID_DATA: u8 = 0xcc;
    /// Insufficient privilege level.
    pub const INSUFFICIENT_PRIVILEGE: u8 = 0xd4;
    /// Command not supported in present state.
    pub const NOT_IN_PRESENT_STATE: u8 = 0xd5;
    /// Cannot execute a duplicated request (IPMI 2.0 table 5-2: a BMC that
    /// recognised a re-sent request it already carried out).
    pub const DUPLICATE_REQUEST: u8 = 0xcf;
    /// Unspecified error.
    pub const UNSPECIFIED: u8 = 0xff;
}

/// Chassis Control data byte (IPMI 2.0 table 28-4).
pub mod chassis_control {
    /// Power down (hard off).
    pub const POWER_DOWN: u8 = 0x00;
    /// Power up.
    pub const POWER_UP: u8 = 0x01;
    /// Power cycle.
    pub const POWER_CYCLE: u8 = 0x02;
    /// Hard reset.
    pub const HARD_RESET: u8 = 0x03;
    /// Pulse diagnostic interrupt.
    pub const DIAGNOSTIC_INTERRUPT: u8 = 0x04;
}

/// The BMC's slave address (IPMI 2.0 §5.1).
pub const BMC_SA: u8 = 0x20;
/// The remote console's software ID (IPMI 2.0 §5.5: 81h for a remote console).
pub const CONSOLE_SWID: u8 = 0x81;

/// Why bytes could not be decoded.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum Malformed {
    /// Fewer bytes than the structure needs.
    #[error("packet too short: {what} needs {need} bytes, got {got}")]
    TooShort {
        /// The structure.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        got: usize,
    },
    /// Not an RMCP packet, or a class we do not speak.
    #[error("not an RMCP IPMI packet (version {version:#04x}, class {class:#04x})")]
    NotRmcp {
        /// RMCP version byte.
        version: u8,
        /// RMCP class byte.
        class: u8,
    },
    /// A length field disagrees with the datagram.
    #[error("length field says {field} bytes but {actual} are present")]
    BadLength {
        /// Declared length.
        field: usize,
        /// Actual length.
        actual: usize,
    },
    /// An IPMI message checksum is wrong.
    #[error("IPMI message checksum mismatch")]
    BadChecksum,
    /// The integrity trailer is malformed (pad, next header).
    #[error("malformed integrity trailer")]
    BadTrailer,
    /// The integrity code does not verify.
    #[error("integrity check failed")]
    BadIntegrity,
    /// The payload cannot be decrypted.
    #[error("confidentiality padding invalid")]
    BadPadding,
    /// A field holds a value the structure does not allow.
    #[error("invalid field {0}")]
    BadField(&'static str),
}

pub(super) fn need(what: &'static str, data: &[u8], n: usize) -> Result<(), Malformed> {
    if data.len() < n {
        Err(Malformed::TooShort {
            what,
            need: n,
            got: data.len(),
        })
    } else {
        Ok(())
    }
}

pub(super) fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// IPMI checksum: the two's complement of the byte sum (IPMI 2.0 §13.8).
pub fn checksum(bytes: &[u8]) -> u8 {
    bytes
        .iter()
        .fold(0u8, |a, b| a.wrapping_add(*b))
        .wrapping_neg()
}

/// The RMCP header for IPMI messages.
pub const RMCP_IPMI_HEADER: [u8; 4] = [RMCP_VERSION, 0x00, RMCP_NO_ACK, RMCP_CLASS_IPMI];

/// An RMCP packet's class and body.
#[derive(Debug, PartialEq, Eq)]
pub enum Rmcp<'a> {
    /// IPMI class: the session layer follows.
    Ipmi(&'a [u8]),
    /// ASF class (presence ping/pong).
    Asf(&'a [u8]),
}

/// Splits off the RMCP header.
pub fn decode_rmcp(datagram: &[u8]) -> Result<Rmcp<'_>, Malformed> {
    need("RMCP header", datagram, 4)?;
    let (version, class) = (datagram[0], datagram[3] & 0x1f);
    if version != RMCP_VERSION {
        return Err(Malformed::NotRmcp { version, class });
    }
    match class {
        RMCP_CLASS_IPMI => Ok(Rmcp::Ipmi(&datagram[4..])),
        RMCP_CLASS_ASF => Ok(Rmcp::Asf(&datagram[4..])),
        _ => Err(Malformed::NotRmcp { version, class }),
    }
}

/// An IPMI 1.5 session-layer packet (IPMI 2.0 table 13-4).
#[derive(Debug, PartialEq, Eq)]
pub struct V15<'a> {
    /// Authentication type (00h none, 02h MD5, 04h password).
    pub auth_type: u8,
    /// Session sequence number.
    pub seq: u32,
    /// Session ID (0 outside a session).
    pub session_id: u32,
    /// The 16-byte authentication code (present when auth_type ≠ 0).
    pub auth_code: Option<[u8; 16]>,
    /// The IPMI message.
    pub payload: &'a [u8],
}

/// An IPMI 2.0 / RMCP+ session-layer packet (IPMI 2.0 table 13-8).
#[derive(Debug, PartialEq, Eq)]
pub struct V20<'a> {
    /// Payload is encrypted.
    pub encrypted: bool,
    /// Packet carries an integrity trailer.
    pub authenticated: bool,
    /// Payload type (low 6 bits).
    pub payload_type: u8,
    /// Session ID (the receiver's).
    pub session_id: u32,
    /// Session sequence number.
    pub seq: u32,
    /// The (possibly encrypted) payload.
    pub payload: &'a [u8],
    /// The bytes the integrity code covers (auth type .. next header).
    pub integrity_data: &'a [u8],
    /// The integrity code (empty when not authenticated).
    pub auth_code: &'a [u8],
}

/// A session-layer packet of either version.
#[derive(Debug, PartialEq, Eq)]
pub enum Session<'a> {
    /// IPMI 1.5.
    V15(V15<'a>),
    /// IPMI 2.0 / RMCP+.
    V20(V20<'a>),
}

/// Decodes the session layer. `auth_code_len` is the integrity code length
/// of the current RMCP+ session (0 outside one); it is needed to find the
/// trailer of authenticated 2.0 packets.
pub fn decode_session(body: &[u8], auth_code_len: usize) -> Result<Session<'_>, Malformed> {
    need("session header", body, 1)?;
    // Bits 7:4 are reserved (IPMI 2.0 table 13-8): dispatch on the auth type
    // nibble, as the 1.5 decoder reads it (found by fuzzing: A6h was taken as
    // a 1.5 packet of auth type 6, which re-encoded as RMCP+).
    if body[0] & 0x0f == AUTHTYPE_RMCPP {
        decode_v20(body, auth_code_len).map(Session::V20)
    } else {
        decode_v15(body).map(Session::V15)
    }
}

fn decode_v15(body: &[u8]) -> Result<V15<'_>, Malformed> {
    need("IPMI 1.5 session header", body, 10)?;
    let auth_type = body[0] & 0x0f;
    let seq = le32(&body[1..5]);
    let session_id = le32(&body[5..9]);
    let (auth_code, rest) = if auth_type == 0 {
        (None, &body[9..])
    } else {
        need("IPMI 1.5 session header", body, 26)?;
        let mut code = [0u8; 16];
        code.copy_from_slice(&body[9..25]);
        (Some(code), &body[25..])
    };
    let len = rest[0] as usize;
    let payload = &rest[1..];
    // Some BMCs add a legacy pad byte after the message; never fewer bytes.
    if payload.len() < len {
        return Err(Malformed::BadLength {
            field: len,
            actual: payload.len(),
        });
    }
    Ok(V15 {
        auth_type,
        seq,
        session_id,
        auth_code,
        payload: &payload[..len],
    })
}

fn decode_v20(body: &[u8], auth_code_len: usize) -> Result<V20<'_>, Malformed> {
    need("RMCP+ session header", body, 12)?;
    let pt = body[1];
    let encrypted = pt & payload::ENCRYPTED != 0;
    let authenticated = pt & payload::AUTHENTICATED != 0;
    let payload_type = pt & 0x3f;
    if payload_type == 0x02 {
        // OEM explicit payloads carry 6 more header bytes; never used here.
        return Err(Malformed::BadField("OEM payload type"));
    }
    let session_id = le32(&body[2..6]);
    let seq = le32(&body[6..10]);
    let len = u16::from_le_bytes([body[10], body[11]]) as usize;
    let end = 12 + len;
    if body.len() < end {
        return Err(Malformed::BadLength {
            field: len,
            actual: body.len() - 12,
        });
    }
    let payload = &body[12..end];
    if !authenticated {
        return Ok(V20 {
            encrypted,
            authenticated,
            payload_type,
            session_id,
            seq,
            payload,
            integrity_data: &body[..end],
            auth_code: &[],
        });
    }
    if auth_code_len == 0 {
        return Err(Malformed::BadField(
            "authenticated packet outside a session",
        ));
    }
    // trailer: pad (FFh…), pad length, next header (07h), auth code
    if body.len() < end + 2 + auth_code_len {
        return Err(Malformed::BadTrailer);
    }
    let code_at = body.len() - auth_code_len;
    let next_header = body[code_at - 1];
    let pad_len = body[code_at - 2] as usize;
    if next_header != 0x07 || end + pad_len + 2 != code_at {
        return Err(Malformed::BadTrailer);
    }
    if body[end..end + pad_len].iter().any(|b| *b != 0xff) {
        return Err(Malformed::BadTrailer);
    }
    Ok(V20 {
        encrypted,
        authenticated,
        payload_type,
        session_id,
        seq,
        payload,
        integrity_data: &body[..code_at],
        auth_code: &body[code_at..],
    })
}

/// Encodes an RMCP + IPMI 1.5 session packet around `payload`.
pub fn encode_v15(
    auth_type: u8,
    seq: u32,
    session_id: u32,
    auth_code: Option<&[u8; 16]>,
    payload: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 26 + payload.len());
    out.extend_from_slice(&RMCP_IPMI_HEADER);
    out.push(auth_type);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&session_id.to_le_bytes());
    if let Some(code) = auth_code {
        out.extend_from_slice(code);
    }
    out.push(payload.len() as u8);
    out.extend_from_slice(payload);
    out
}

/// Encodes an RMCP + RMCP+ session packet. When `auth_code_len` > 0 the
/// integrity pad, pad length and next header are appended, followed by
/// `auth_code_len` zero bytes that the caller overwrites with the code
/// computed over `out[4..out.len() - auth_code_len]`.
pub fn encode_v20(
    payload_type: u8,
    encrypted: bool,
    session_id: u32,
    seq: u32,
    payload: &[u8],
    auth_code_len: usize,
) -> Vec<u8> {
    let mut pt = payload_type & 0x3f;
    if encrypted {
        pt |= payload::ENCRYPTED;
    }
    if auth_code_len > 0 {
        pt |= payload::AUTHENTICATED;
    }
    let mut out = Vec::with_capacity(4 + 12 + payload.len() + 4 + auth_code_len + 3);
    out.extend_from_slice(&RMCP_IPMI_HEADER);
    out.push(AUTHTYPE_RMCPP);
    out.push(pt);
    out.extend_from_slice(&session_id.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    out.extend_from_slice(payload);
    if auth_code_len > 0 {
        // IPMI 2.0 §13.28.4: pad so that auth type .. next header is a multiple of 4.
        let covered = 12 + payload.len() + 2;
        let pad = (4 - covered % 4) % 4;
        out.extend(std::iter::repeat_n(0xffu8, pad));
        out.push(pad as u8);
        out.push(0x07);
        out.extend(std::iter::repeat_n(0u8, auth_code_len));
    }
    out
}

/// An IPMI LAN message frame (IPMI 2.0 table 13-4, "IPMI Msg").
///
/// Requests and responses share a layout; for a request `addr1` is the
/// responder (BMC) address and `addr2` the requester; a response swaps them
/// and carries the completion code as the first data byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// rsSA (request) or rqSA (response).
    pub addr1: u8,
    /// Network function (odd for responses).
    pub netfn: u8,
    /// LUN paired with `addr1`.
    pub lun1: u8,
    /// rqSA (request) or rsSA (response).
    pub addr2: u8,
    /// rqSeq: the requester's sequence number (6 bits).
    pub seq: u8,
    /// LUN paired with `addr2`.
    pub lun2: u8,
    /// Command.
    pub cmd: u8,
    /// Data (for a response, starting with the completion code).
    pub data: Vec<u8>,
}

impl Frame {
    /// A request from the remote console to the BMC.
    pub fn request(netfn: u8, cmd: u8, seq: u8, data: &[u8]) -> Self {
        Frame {
            addr1: BMC_SA,
            netfn,
            lun1: 0,
            addr2: CONSOLE_SWID,
            seq: seq & 0x3f,
            lun2: 0,
            cmd,
            data: data.to_vec(),
        }
    }

    /// The response to this request, with completion code `cc` and `data`.
    pub fn response(&self, cc: u8, data: &[u8]) -> Self {
        let mut d = Vec::with_capacity(1 + data.len());
        d.push(cc);
        d.extend_from_slice(data);
        Frame {
            addr1: self.addr2,
            netfn: self.netfn | 1,
            lun1: self.lun2,
            addr2: self.addr1,
            seq: self.seq,
            lun2: self.lun1,
            cmd: self.cmd,
            data: d,
        }
    }

    /// Encodes the frame with both checksums.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(7 + self.data.len());
        out.push(self.addr1);
        out.push((self.netfn << 2) | (self.lun1 & 3));
        out.push(checksum(&out[0..2]));
        out.push(self.addr2);
        out.push((self.seq << 2) | (self.lun2 & 3));
        out.push(self.cmd);
        out.extend_from_slice(&self.data);
        out.push(checksum(&out[3..]));
        out
    }

    /// Decodes and checks both checksums.
    pub fn decode(bytes: &[u8]) -> Result<Self, Malformed> {
        match Self::decode_unchecked(bytes)? {
            (f, true) => Ok(f),
            (_, false) => Err(Malformed::BadChecksum),
        }
    }

    /// Decodes without insisting on the checksums; the flag says whether
    /// both match. For a caller that has verified the bytes otherwise (an
    /// integrity or authentication code over them), or that was told to
    /// accept such messages (the `nochecksumcheck` workaround).
    pub fn decode_unchecked(bytes: &[u8]) -> Result<(Self, bool), Malformed> {
        need("IPMI message", bytes, 7)?;
        let last = bytes.len() - 1;
        let sums_ok =
            checksum(&bytes[0..2]) == bytes[2] && checksum(&bytes[3..last]) == bytes[last];
        Ok((
            Frame {
                addr1: bytes[0],
                netfn: bytes[1] >> 2,
                lun1: bytes[1] & 3,
                addr2: bytes[3],
                seq: bytes[4] >> 2,
                lun2: bytes[4] & 3,
                cmd: bytes[5],
                data: bytes[6..last].to_vec(),
            },
            sums_ok,
        ))
    }

    /// For a response: the completion code (the first data byte).
    pub fn completion_code(&self) -> Result<u8, Malformed> {
        self.data
            .first()
            .copied()
            .ok_or(Malformed::BadField("missing completion code"))
    }

    /// True when this frame answers a request with `netfn`, `cmd` and `seq`.
    pub fn answers(&self, netfn: u8, cmd: u8, seq: u8) -> bool {
        self.netfn == (netfn | 1) && self.cmd == cmd && self.seq == (seq & 0x3f)
    }
}

/// RMCP+ status codes (IPMI 2.0 table 13-15), as words for messages.
pub fn rmcpp_status_text(code: u8) -> &'static str {
    match code {
        0x00 => "no errors",
        0x01 => "insufficient resources to create a session",
        0x02 => "invalid session ID",
        0x03 => "invalid payload type",
        0x04 => "invalid authentication algorithm",
        0x05 => "invalid integrity algorithm",
        0x06 => "no matching authentication payload",
        0x07 => "no matching integrity payload",
        0x08 => "inactive session ID",
        0x09 => "invalid role",
        0x0a => "unauthorized role or privilege level requested",
        0x0b => "insufficient resources to create a session at the requested role",
        0x0c => "invalid name length",
        0x0d => "unauthorized name",
        0x0e => "unauthorized GUID",
        0x0f => "invalid integrity check value",
        0x10 => "invalid confidentiality algorithm",
        0x11 => "no cipher suite match with proposed security algorithms",
        0x12 => "illegal or unrecognized parameter",
        _ => "unknown status",
    }
}

/// Completion codes as words for messages (IPMI 2.0 table 5-2).
pub fn completion_text(code: u8) -> &'static str {
    match code {
        0x00 => "ok",
        0x80 => "command-specific error 80h",
        0x81 => "command-specific error 81h",
        0xc0 => "node busy",
        0xc1 => "invalid command",
        0xc2 => "command invalid for the given LUN",
        0xc3 => "timeout while processing the command",
        0xc4 => "out of space",
        0xc5 => "reservation cancelled or invalid",
        0xc6 => "request data truncated",
        0xc7 => "request data length invalid",
        0xc8 => "request data field length limit exceeded",
        0xc9 => "parameter out of range",
        0xca => "cannot return the number of requested data bytes",
        0xcb => "requested sensor, data or record not present",
        0xcc => "invalid data field in request",
        0xcd => "command illegal for the specified sensor or record type",
        0xce => "command response could not be provided",
        0xcf => "cannot execute a duplicated request",
        0xd0 => "SDR repository in update mode",
        0xd1 => "device in firmware update mode",
        0xd2 => "BMC initialization in progress",
        0xd3 => "destination unavailable",
        0xd4 => "insufficient privilege level",
        0xd5 => "command not supported in present state",
        0xd6 => "command sub-function disabled or unavailable",
        0xff => "unspecified error",
        _ => "unknown completion code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_matches_spec_example() {
        // rsSA 20h, netFn/LUN 18h (App request) → checksum C8h
        assert_eq!(checksum(&[0x20, 0x18]), 0xc8);
    }

    #[test]
    fn frame_roundtrip_and_answers() {
        let rq = Frame::request(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 5, &[]);
        let bytes = rq.encode();
        assert_eq!(bytes, vec![0x20, 0x00, 0xe0, 0x81, 0x14, 0x01, 0x6a]);
        assert_eq!(Frame::decode(&bytes).unwrap(), rq);
        let rs = rq.response(0, &[0x01, 0x00, 0x40]);
        let back = Frame::decode(&rs.encode()).unwrap();
        assert!(back.answers(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 5));
        assert!(!back.answers(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 6));
        assert_eq!(back.completion_code(), Ok(0));
    }

    #[test]
    fn frame_rejects_bad_checksums() {
        let mut b = Frame::request(netfn::APP, cmd::GET_DEVICE_ID, 1, &[]).encode();
        b[6] ^= 1;
        assert_eq!(Frame::decode(&b), Err(Malformed::BadChecksum));
        b[6] ^= 1;
        b[2] ^= 1;
        assert_eq!(Frame::decode(&b), Err(Malformed::BadChecksum));
    }

    #[test]
    fn v20_trailer_layout_is_multiple_of_four() {
        for len in 0..40 {
            let payload = vec![0xabu8; len];
            let d = encode_v20(0, true, 7, 9, &payload, 12);
            let body = match decode_rmcp(&d).unwrap() {
                Rmcp::Ipmi(b) => b,
                _ => unreachable!(),
            };
            let Session::V20(p) = decode_session(body, 12).unwrap() else {
                panic!("not v2.0")
            };
            assert_eq!(p.integrity_data.len() % 4, 0);
            assert_eq!(p.payload, &payload[..]);
            assert_eq!(p.auth_code.len(), 12);
            assert!(p.encrypted && p.authenticated);
            assert_eq!((p.session_id, p.seq), (7, 9));
        }
    }

    #[test]
    fn v15_roundtrip() {
        let code = [7u8; 16];
        let d = encode_v15(2, 3, 4, Some(&code), &[1, 2, 3]);
        let Rmcp::Ipmi(body) = decode_rmcp(&d).unwrap() else {
            panic!()
        };
        let Session::V15(p) = decode_session(body, 0).unwrap() else {
            panic!()
        };
        assert_eq!(p.auth_type, 2);
        assert_eq!((p.seq, p.session_id), (3, 4));
        assert_eq!(p.auth_code, Some(code));
        assert_eq!(p.payload, &[1, 2, 3]);
    }

    #[test]
    fn reserved_auth_type_bits_do_not_turn_rmcpp_into_v15() {
        // fuzz/corpus/ipmi_codec/crash-authtype-reserved-bits
        let mut d = encode_v20(payload::RAKP1, false, 0, 0, &[0; 32], 0);
        d[4] = 0xa6;
        let Rmcp::Ipmi(body) = decode_rmcp(&d).unwrap() else {
            panic!()
        };
        let Session::V20(p) = decode_session(body, 0).unwrap() else {
            panic!("decoded as IPMI 1.5")
        };
        assert_eq!(p.payload_type, payload::RAKP1);
    }
}
