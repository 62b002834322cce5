//! Bytes ↔ typed IPMI messages, with no I/O and no crypto.
//!
//! Layers, outermost first (IPMI 2.0 §13):
//! * RMCP header (4 bytes, class 07h IPMI or 06h ASF);
//! * an IPMI 1.5 session header (auth type ≠ 06h) or an IPMI 2.0 / RMCP+
//!   session header (auth type 06h), each with its payload and, for
//!   authenticated 2.0 packets, the integrity trailer;
//! * the payload: an IPMI LAN message (request or response frame), or an
//!   RMCP+ session set-up message (Open Session, RAKP 1-4).
//!
//! Everything received is parsed into borrowed views or small owned structs;
//! malformed input is a typed [`Malformed`] error, never a panic. The crypto
//! that fills or checks authentication fields lives in [`super::crypto`].

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

fn need(what: &'static str, data: &[u8], n: usize) -> Result<(), Malformed> {
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

fn le32(b: &[u8]) -> u32 {
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

/// RMCP+ Open Session Request (IPMI 2.0 table 13-9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenSessionRequest {
    /// Message tag, echoed by the BMC.
    pub tag: u8,
    /// Requested maximum privilege (0: highest the algorithms allow).
    pub max_privilege: u8,
    /// The console's session ID.
    pub console_sid: u32,
    /// Authentication algorithm.
    pub auth_alg: u8,
    /// Integrity algorithm.
    pub integrity_alg: u8,
    /// Confidentiality algorithm.
    pub conf_alg: u8,
}

fn algorithm_record(kind: u8, alg: u8) -> [u8; 8] {
    [kind, 0, 0, 0x08, alg & 0x3f, 0, 0, 0]
}

impl OpenSessionRequest {
    /// Encodes the payload (32 bytes).
    pub fn encode(&self) -> Vec<u8> {
        let mut p = vec![self.tag, self.max_privilege, 0, 0];
        p.extend_from_slice(&self.console_sid.to_le_bytes());
        p.extend_from_slice(&algorithm_record(0, self.auth_alg));
        p.extend_from_slice(&algorithm_record(1, self.integrity_alg));
        p.extend_from_slice(&algorithm_record(2, self.conf_alg));
        p
    }

    /// Decodes the payload (lab side).
    pub fn decode(p: &[u8]) -> Result<Self, Malformed> {
        need("Open Session Request", p, 32)?;
        Ok(OpenSessionRequest {
            tag: p[0],
            max_privilege: p[1] & 0x0f,
            console_sid: le32(&p[4..8]),
            auth_alg: p[12] & 0x3f,
            integrity_alg: p[20] & 0x3f,
            conf_alg: p[28] & 0x3f,
        })
    }
}

/// RMCP+ Open Session Response (IPMI 2.0 table 13-10).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenSessionResponse {
    /// Echoed tag.
    pub tag: u8,
    /// RMCP+ status code (table 13-15); 0 is success.
    pub status: u8,
    /// Maximum privilege (quirk: ipmi_sim reports 0).
    pub max_privilege: u8,
    /// The console's session ID, echoed.
    pub console_sid: u32,
    /// The BMC's session ID (0 on error).
    pub managed_sid: u32,
    /// Algorithms chosen (absent on error).
    pub algorithms: Option<(u8, u8, u8)>,
}

impl OpenSessionResponse {
    /// Decodes the payload. Error responses may be as short as 2 bytes
    /// (quirk: ipmi_sim answers an unsupported proposal with tag and status
    /// only); then `console_sid` is 0.
    pub fn decode(p: &[u8]) -> Result<Self, Malformed> {
        need("Open Session Response", p, 2)?;
        let status = p[1];
        if status != 0 && p.len() < 8 {
            return Ok(OpenSessionResponse {
                tag: p[0],
                status,
                max_privilege: 0,
                console_sid: 0,
                managed_sid: 0,
                algorithms: None,
            });
        }
        need("Open Session Response", p, 8)?;
        let console_sid = le32(&p[4..8]);
        if status != 0 {
            return Ok(OpenSessionResponse {
                tag: p[0],
                status,
                max_privilege: p[2] & 0x0f,
                console_sid,
                managed_sid: 0,
                algorithms: None,
            });
        }
        need("Open Session Response", p, 36)?;
        Ok(OpenSessionResponse {
            tag: p[0],
            status,
            max_privilege: p[2] & 0x0f,
            console_sid,
            managed_sid: le32(&p[8..12]),
            algorithms: Some((p[16] & 0x3f, p[24] & 0x3f, p[32] & 0x3f)),
        })
    }

    /// Encodes the payload (lab side).
    pub fn encode(&self) -> Vec<u8> {
        let mut p = vec![self.tag, self.status, self.max_privilege, 0];
        p.extend_from_slice(&self.console_sid.to_le_bytes());
        if let Some((a, i, c)) = self.algorithms {
            p.extend_from_slice(&self.managed_sid.to_le_bytes());
            p.extend_from_slice(&algorithm_record(0, a));
            p.extend_from_slice(&algorithm_record(1, i));
            p.extend_from_slice(&algorithm_record(2, c));
        }
        p
    }
}

/// RAKP Message 1 (IPMI 2.0 table 13-11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rakp1 {
    /// Message tag.
    pub tag: u8,
    /// The BMC's session ID.
    pub managed_sid: u32,
    /// Console random number R_M.
    pub rm: [u8; 16],
    /// Requested role byte (privilege, bit 4 = name-only lookup).
    pub role: u8,
    /// User name (≤ 16 bytes).
    pub username: Vec<u8>,
}

impl Rakp1 {
    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = vec![self.tag, 0, 0, 0];
        p.extend_from_slice(&self.managed_sid.to_le_bytes());
        p.extend_from_slice(&self.rm);
        p.push(self.role);
        p.extend_from_slice(&[0, 0]);
        p.push(self.username.len() as u8);
        p.extend_from_slice(&self.username);
        p
    }

    /// Decodes the payload (lab side).
    pub fn decode(p: &[u8]) -> Result<Self, Malformed> {
        need("RAKP 1", p, 28)?;
        let ulen = p[27] as usize;
        if ulen > 16 {
            return Err(Malformed::BadField("RAKP 1 user name length"));
        }
        need("RAKP 1", p, 28 + ulen)?;
        let mut rm = [0u8; 16];
        rm.copy_from_slice(&p[8..24]);
        Ok(Rakp1 {
            tag: p[0],
            managed_sid: le32(&p[4..8]),
            rm,
            role: p[24],
            username: p[28..28 + ulen].to_vec(),
        })
    }
}

/// RAKP Message 2 (IPMI 2.0 table 13-12).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rakp2 {
    /// Echoed tag.
    pub tag: u8,
    /// RMCP+ status code.
    pub status: u8,
    /// The console's session ID.
    pub console_sid: u32,
    /// BMC random number R_C.
    pub rc: [u8; 16],
    /// The BMC's GUID.
    pub guid: [u8; 16],
    /// Key exchange authentication code (20 or 32 bytes).
    pub auth_code: Vec<u8>,
}

impl Rakp2 {
    /// Decodes the payload.
    pub fn decode(p: &[u8]) -> Result<Self, Malformed> {
        need("RAKP 2", p, 8)?;
        let status = p[1];
        let console_sid = le32(&p[4..8]);
        if status != 0 {
            return Ok(Rakp2 {
                tag: p[0],
                status,
                console_sid,
                rc: [0; 16],
                guid: [0; 16],
                auth_code: vec![],
            });
        }
        need("RAKP 2", p, 40)?;
        let mut rc = [0u8; 16];
        rc.copy_from_slice(&p[8..24]);
        let mut guid = [0u8; 16];
        guid.copy_from_slice(&p[24..40]);
        Ok(Rakp2 {
            tag: p[0],
            status,
            console_sid,
            rc,
            guid,
            auth_code: p[40..].to_vec(),
        })
    }

    /// Encodes the payload (lab side).
    pub fn encode(&self) -> Vec<u8> {
        let mut p = vec![self.tag, self.status, 0, 0];
        p.extend_from_slice(&self.console_sid.to_le_bytes());
        if self.status == 0 {
            p.extend_from_slice(&self.rc);
            p.extend_from_slice(&self.guid);
            p.extend_from_slice(&self.auth_code);
        }
        p
    }
}

/// RAKP Message 3 (IPMI 2.0 table 13-13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rakp3 {
    /// Message tag.
    pub tag: u8,
    /// RMCP+ status code (the console may report an error to the BMC).
    pub status: u8,
    /// The BMC's session ID.
    pub managed_sid: u32,
    /// Key exchange authentication code.
    pub auth_code: Vec<u8>,
}

impl Rakp3 {
    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = vec![self.tag, self.status, 0, 0];
        p.extend_from_slice(&self.managed_sid.to_le_bytes());
        p.extend_from_slice(&self.auth_code);
        p
    }

    /// Decodes the payload (lab side).
    pub fn decode(p: &[u8]) -> Result<Self, Malformed> {
        need("RAKP 3", p, 8)?;
        Ok(Rakp3 {
            tag: p[0],
            status: p[1],
            managed_sid: le32(&p[4..8]),
            auth_code: p[8..].to_vec(),
        })
    }
}

/// RAKP Message 4 (IPMI 2.0 table 13-14).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rakp4 {
    /// Echoed tag.
    pub tag: u8,
    /// RMCP+ status code.
    pub status: u8,
    /// The console's session ID.
    pub console_sid: u32,
    /// Integrity check value (12 or 16 bytes).
    pub icv: Vec<u8>,
}

impl Rakp4 {
    /// Decodes the payload.
    pub fn decode(p: &[u8]) -> Result<Self, Malformed> {
        need("RAKP 4", p, 8)?;
        Ok(Rakp4 {
            tag: p[0],
            status: p[1],
            console_sid: le32(&p[4..8]),
            icv: p[8..].to_vec(),
        })
    }

    /// Encodes the payload (lab side).
    pub fn encode(&self) -> Vec<u8> {
        let mut p = vec![self.tag, self.status, 0, 0];
        p.extend_from_slice(&self.console_sid.to_le_bytes());
        p.extend_from_slice(&self.icv);
        p
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

/// Get Chassis Status response data after the completion code (IPMI 2.0 table 28-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChassisStatus {
    /// Current power state byte; bit 0 = system power is on.
    pub power: u8,
}

impl ChassisStatus {
    /// Decodes the data following the completion code.
    pub fn decode(data: &[u8]) -> Result<Self, Malformed> {
        need("Get Chassis Status response", data, 3)?;
        Ok(ChassisStatus { power: data[0] })
    }

    /// System power is on.
    pub fn is_on(&self) -> bool {
        self.power & 1 == 1
    }
}

/// One cipher suite record from Get Channel Cipher Suites (IPMI 2.0 table 22-19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CipherSuiteRecord {
    /// Cipher suite ID.
    pub id: u8,
    /// Authentication algorithm.
    pub auth: u8,
    /// Integrity algorithms offered (first listed).
    pub integrity: u8,
    /// Confidentiality algorithm (first listed).
    pub conf: u8,
}

/// Parses the concatenated record data of Get Channel Cipher Suites.
/// Unparseable tails are ignored: the list is advice, the Open Session
/// exchange is authoritative.
pub fn parse_cipher_suite_records(data: &[u8]) -> Vec<CipherSuiteRecord> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        match data[i] {
            0xc0 | 0xc1 => {
                let skip = if data[i] == 0xc1 { 3 } else { 0 };
                let start = i + 1;
                if start + skip >= data.len() {
                    break;
                }
                let id = data[start];
                let mut j = start + 1 + skip;
                let (mut auth, mut integ, mut conf) = (None, None, None);
                while j < data.len() && data[j] & 0xc0 != 0xc0 {
                    let b = data[j];
                    match b & 0xc0 {
                        0x00 => auth = auth.or(Some(b & 0x3f)),
                        0x40 => integ = integ.or(Some(b & 0x3f)),
                        0x80 => conf = conf.or(Some(b & 0x3f)),
                        _ => {}
                    }
                    j += 1;
                }
                if let (Some(auth), Some(integrity), Some(conf)) = (auth, integ, conf) {
                    out.push(CipherSuiteRecord {
                        id,
                        auth,
                        integrity,
                        conf,
                    });
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

/// Reads Get Channel Cipher Suites data whose records lack their C0h
/// start-of-record tags (Sun ILOM, FreeIPMI's `sun20`): runs of an ID
/// followed by its authentication (00b), integrity (01b) and
/// confidentiality (10b) algorithm bytes. Empty unless every byte fits.
pub fn parse_untagged_cipher_suite_records(data: &[u8]) -> Vec<CipherSuiteRecord> {
    let mut out = Vec::new();
    for rec in data.chunks(4) {
        match rec {
            [id, a, i, c] if a & 0xc0 == 0 && i & 0xc0 == 0x40 && c & 0xc0 == 0x80 => {
                out.push(CipherSuiteRecord {
                    id: *id,
                    auth: a & 0x3f,
                    integrity: i & 0x3f,
                    conf: c & 0x3f,
                })
            }
            _ => return Vec::new(),
        }
    }
    out
}

/// How a BMC laid out the 16 bytes of a GUID. BMCs disagree, so the
/// system GUID is read under each (see [`SystemGuid`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuidEncoding {
    /// SMBIOS (3.0 §7.2.1): time_low, time_mid, time_hi_and_version
    /// little-endian, the rest in network order — the bytes of the SMBIOS
    /// system UUID as `dmidecode` and Redfish `ComputerSystem.UUID` print
    /// them. ipmitool 1.8.19 names it the most common BMC encoding ("Most
    /// implementations like AMI MegaRAC do it the SMBIOS way",
    /// include/ipmitool/ipmi_mc.h) and prefers it when guessing.
    Smbios,
    /// RFC 4122 §4.1.2: every field in network order, the bytes as printed.
    Rfc4122,
    /// The IPMI specification's own layout (IPMI 2.0 §20.8, table 20-10;
    /// used by §22.14): all 16 bytes least-significant first, i.e. the
    /// RFC 4122 bytes fully reversed.
    Ipmi,
}

impl GuidEncoding {
    /// Every encoding, in the order a guess prefers them (ipmitool's: SMBIOS, IPMI, RFC 4122).
    pub const ALL: [GuidEncoding; 3] = [
        GuidEncoding::Smbios,
        GuidEncoding::Ipmi,
        GuidEncoding::Rfc4122,
    ];

    /// The name shown with a UUID read this way.
    pub fn as_str(self) -> &'static str {
        match self {
            GuidEncoding::Smbios => "smbios",
            GuidEncoding::Rfc4122 => "rfc4122",
            GuidEncoding::Ipmi => "ipmi",
        }
    }

    /// The RFC 4122 (network-order) bytes of a GUID stored this way.
    pub fn to_network_order(self, raw: &[u8; 16]) -> [u8; 16] {
        let mut b = *raw;
        match self {
            GuidEncoding::Rfc4122 => {}
            GuidEncoding::Smbios => {
                b[0..4].reverse();
                b[4..6].reverse();
                b[6..8].reverse();
            }
            GuidEncoding::Ipmi => b.reverse(),
        }
        b
    }

    /// The 16 bytes a BMC using this encoding sends for the UUID whose
    /// network-order bytes are `uuid` (the inverse of [`Self::to_network_order`]).
    pub fn encode(self, uuid: &[u8; 16]) -> [u8; 16] {
        // each transformation is its own inverse
        self.to_network_order(uuid)
    }
}

/// Get System GUID response data after the completion code (IPMI 2.0 §22.14:
/// 16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemGuid {
    /// The bytes as the BMC sent them.
    pub raw: [u8; 16],
}

impl SystemGuid {
    /// Decodes the data following the completion code (exactly 16 bytes;
    /// ipmitool refuses any other length too).
    pub fn decode(data: &[u8]) -> Result<Self, Malformed> {
        if data.len() != 16 {
            return Err(Malformed::BadLength {
                field: 16,
                actual: data.len(),
            });
        }
        let mut raw = [0u8; 16];
        raw.copy_from_slice(data);
        Ok(SystemGuid { raw })
    }

    /// The canonical 8-4-4-4-12 text of the GUID read under `enc`.
    pub fn text(&self, enc: GuidEncoding) -> String {
        let b = enc.to_network_order(&self.raw);
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        crate::engine::identity::hyphenate(&h)
    }

    /// The encoding a reader would guess, as ipmitool 1.8.19 `mc guid`
    /// (auto) does: among the encodings whose version nibble is valid
    /// (1-5), a time-based (version 1) one whose timestamp lies between
    /// 1970 and `now_unix` wins at once (in RFC 4122, IPMI, SMBIOS order);
    /// otherwise the last valid in that order, so SMBIOS beats IPMI beats
    /// RFC 4122. `None`: no encoding gives a valid version.
    pub fn guess(&self, now_unix: i64) -> Option<GuidEncoding> {
        let mut pick = None;
        for enc in [
            GuidEncoding::Rfc4122,
            GuidEncoding::Ipmi,
            GuidEncoding::Smbios,
        ] {
            let b = enc.to_network_order(&self.raw);
            let version = b[6] >> 4;
            if !(1..=5).contains(&version) {
                continue;
            }
            pick = Some(enc);
            if version == 1 {
                let time_hi = u64::from(u16::from_be_bytes([b[6], b[7]]) & 0x0fff);
                let time_mid = u64::from(u16::from_be_bytes([b[4], b[5]]));
                let time_low = u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                let t100ns = (time_hi << 48) | (time_mid << 32) | time_low;
                // 100 ns intervals since 1582-10-15; 12219292800 s to 1970
                let unix = (t100ns / 10_000_000) as i64 - 12_219_292_800;
                if (0..=now_unix).contains(&unix) {
                    break;
                }
            }
        }
        pick
    }

    /// The GUID under every encoding, the guessed one first, without
    /// repeats (a GUID can read the same two ways).
    pub fn readings(&self, now_unix: i64) -> Vec<(GuidEncoding, String)> {
        let first = self.guess(now_unix);
        let order = first
            .into_iter()
            .chain(GuidEncoding::ALL.into_iter().filter(|e| Some(*e) != first));
        let mut out: Vec<(GuidEncoding, String)> = Vec::new();
        for enc in order {
            let t = self.text(enc);
            if !out.iter().any(|(_, x)| *x == t) {
                out.push((enc, t));
            }
        }
        out
    }
}

/// DCMI Get Power Reading request data, mode 01h "system power statistics"
/// (DCMI 1.5 table 6-16; what `ipmitool dcmi power reading` sends).
pub fn dcmi_power_reading_request() -> [u8; 4] {
    [DCMI_GROUP, 0x01, 0x00, 0x00]
}

/// DCMI Get Power Reading response data after the completion code (DCMI
/// 1.5 table 6-16), all figures least-significant byte first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcmiPowerReading {
    /// Current power, watts.
    pub current: u16,
    /// Minimum over the sampling period, watts.
    pub minimum: u16,
    /// Maximum over the sampling period, watts.
    pub maximum: u16,
    /// Average over the sampling period, watts.
    pub average: u16,
    /// IPMI timestamp of the reading.
    pub timestamp: u32,
    /// Statistics reporting period, milliseconds.
    pub period_ms: u32,
    /// Power reading state byte; bit 6 set = power measurement active.
    pub state: u8,
}

impl DcmiPowerReading {
    /// Bytes of the response data after the completion code.
    pub const LEN: usize = 18;

    /// Decodes the data following the completion code (group ID first).
    pub fn decode(data: &[u8]) -> Result<Self, Malformed> {
        need("DCMI Get Power Reading response", data, Self::LEN)?;
        if data[0] != DCMI_GROUP {
            return Err(Malformed::BadField("DCMI group extension ID"));
        }
        let u16le = |i: usize| u16::from_le_bytes([data[i], data[i + 1]]);
        Ok(DcmiPowerReading {
            current: u16le(1),
            minimum: u16le(3),
            maximum: u16le(5),
            average: u16le(7),
            timestamp: le32(&data[9..13]),
            period_ms: le32(&data[13..17]),
            state: data[17],
        })
    }

    /// Encodes the data after the completion code (lab side).
    pub fn encode(&self) -> Vec<u8> {
        let mut d = vec![DCMI_GROUP];
        for w in [self.current, self.minimum, self.maximum, self.average] {
            d.extend_from_slice(&w.to_le_bytes());
        }
        d.extend_from_slice(&self.timestamp.to_le_bytes());
        d.extend_from_slice(&self.period_ms.to_le_bytes());
        d.push(self.state);
        d
    }

    /// The BMC says the figures are a live measurement (state bit 6).
    pub fn active(&self) -> bool {
        self.state & 0x40 != 0
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
    fn truncations_never_panic() {
        let full = {
            let mut d = encode_v20(
                0,
                false,
                1,
                1,
                &[0x20, 0x18, 0xc8, 0x81, 0x04, 0x01, 0x7a],
                16,
            );
            let n = d.len();
            d[n - 1] = 1;
            d
        };
        for cut in 0..full.len() {
            let part = &full[..cut];
            if let Ok(Rmcp::Ipmi(body)) = decode_rmcp(part) {
                let _ = decode_session(body, 16);
                let _ = decode_session(body, 0);
                let _ = OpenSessionResponse::decode(body);
                let _ = Rakp2::decode(body);
                let _ = Rakp4::decode(body);
                let _ = Rakp1::decode(body);
                let _ = Frame::decode(body);
            }
        }
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

    #[test]
    fn open_session_roundtrip() {
        let rq = OpenSessionRequest {
            tag: 3,
            max_privilege: 4,
            console_sid: 0xa0b0c0d0,
            auth_alg: 3,
            integrity_alg: 4,
            conf_alg: 1,
        };
        assert_eq!(OpenSessionRequest::decode(&rq.encode()).unwrap(), rq);
        let rs = OpenSessionResponse {
            tag: 3,
            status: 0,
            max_privilege: 0,
            console_sid: 0xa0b0c0d0,
            managed_sid: 0x01020304,
            algorithms: Some((3, 4, 1)),
        };
        assert_eq!(OpenSessionResponse::decode(&rs.encode()).unwrap(), rs);
    }

    #[test]
    fn cipher_suite_records_parse() {
        // pyghmi's answer: suites 3 and 17
        let data = [0xc0, 3, 0x01, 0x41, 0x81, 0xc0, 17, 0x03, 0x44, 0x81];
        let r = parse_cipher_suite_records(&data);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[1],
            CipherSuiteRecord {
                id: 17,
                auth: 3,
                integrity: 4,
                conf: 1
            }
        );
        assert!(parse_cipher_suite_records(&[0xc0]).is_empty());
        // Sun ILOM's records without tags: not records to the tagged
        // reader, the same suites to the untagged one
        let untagged = [3, 0x01, 0x41, 0x81, 17, 0x03, 0x44, 0x81];
        assert!(parse_cipher_suite_records(&untagged).is_empty());
        assert_eq!(parse_untagged_cipher_suite_records(&untagged)[1], r[1]);
        // garbage is neither
        let junk = [0x5a, 0xff, 0x00, 0x13, 0x37, 0x01, 0xee, 0x42];
        assert!(parse_cipher_suite_records(&junk).is_empty());
        assert!(parse_untagged_cipher_suite_records(&junk).is_empty());
        assert!(parse_untagged_cipher_suite_records(&untagged[..6]).is_empty());
    }

    /// One GUID, 00112233-4455-6677-8899-aabbccddeeff, as each encoding
    /// stores it (SMBIOS 3.0 §7.2.1 gives this example for its layout).
    const SMBIOS_BYTES: [u8; 16] = [
        0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
        0xff,
    ];
    const RFC4122_BYTES: [u8; 16] = [
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
        0xff,
    ];
    const IPMI_BYTES: [u8; 16] = [
        0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
        0x00,
    ];
    const GUID: &str = "00112233-4455-6677-8899-aabbccddeeff";

    #[test]
    fn one_guid_in_each_encoding_reads_the_same() {
        for (enc, raw) in [
            (GuidEncoding::Smbios, SMBIOS_BYTES),
            (GuidEncoding::Rfc4122, RFC4122_BYTES),
            (GuidEncoding::Ipmi, IPMI_BYTES),
        ] {
            let g = SystemGuid::decode(&raw).unwrap();
            assert_eq!(g.text(enc), GUID, "{enc:?}");
            assert_eq!(enc.encode(&RFC4122_BYTES), raw, "{enc:?}");
            // every encoding is among the readings, each named once
            let r = g.readings(0);
            assert!(r.contains(&(enc, GUID.to_string())), "{enc:?}: {r:?}");
            assert_eq!(r.len(), 3);
        }
        // the other readings of the SMBIOS bytes are what a wrong guess prints
        let g = SystemGuid::decode(&SMBIOS_BYTES).unwrap();
        assert_eq!(
            g.text(GuidEncoding::Rfc4122),
            "33221100-5544-7766-8899-aabbccddeeff"
        );
        assert_eq!(
            g.text(GuidEncoding::Ipmi),
            "ffeeddcc-bbaa-9988-6677-445500112233"
        );
    }

    #[test]
    fn the_guess_follows_ipmitool() {
        // a version-4 GUID (the lab's node 1) stored each way is guessed right
        let uuid = [
            0x4c, 0x41, 0x42, 0x30, 0x00, 0x00, 0x40, 0x01, 0x80, 0x00, 0xfe, 0x00, 0x00, 0x00,
            0x00, 0x01,
        ];
        for enc in GuidEncoding::ALL {
            let g = SystemGuid::decode(&enc.encode(&uuid)).unwrap();
            assert_eq!(g.guess(0), Some(enc), "{enc:?}");
            let first = &g.readings(0)[0];
            assert_eq!(
                first,
                &(enc, "4c414230-0000-4001-8000-fe0000000001".to_string())
            );
        }
        // when several readings have a valid version, SMBIOS wins (ipmitool:
        // "GUID_SMBIOS ... will take precedence")
        let both = [
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x40, 0x80, 0, 0, 0, 0, 0, 0, 1,
        ];
        assert_eq!(
            SystemGuid::decode(&both).unwrap().guess(0),
            Some(GuidEncoding::Smbios)
        );
        // a time-based GUID with a plausible timestamp is taken at once:
        // RFC 4122 order, 2020-ish time (time_hi 0x1ea, version 1)
        let t = [
            0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xea, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4,
            0x30, 0xc8,
        ];
        assert_eq!(
            SystemGuid::decode(&t).unwrap().guess(2_000_000_000),
            Some(GuidEncoding::Rfc4122)
        );
        // nothing valid: no guess, every reading still offered
        let none = SystemGuid::decode(&[0u8; 16]).unwrap();
        assert_eq!(none.guess(0), None);
        assert_eq!(none.readings(0).len(), 1, "all three read the same");
    }

    #[test]
    fn system_guid_needs_exactly_sixteen_bytes() {
        assert!(SystemGuid::decode(&[0; 15]).is_err());
        assert!(SystemGuid::decode(&[0; 17]).is_err());
        assert!(SystemGuid::decode(&[]).is_err());
    }

    #[test]
    fn dcmi_power_reading_roundtrip_and_state() {
        let r = DcmiPowerReading {
            current: 212,
            minimum: 9,
            maximum: 300,
            average: 150,
            timestamp: 0x5f5e_1000,
            period_ms: 1000,
            state: 0x40,
        };
        let d = r.encode();
        assert_eq!(d.len(), DcmiPowerReading::LEN);
        assert_eq!(&d[..3], &[DCMI_GROUP, 212, 0]);
        assert_eq!(DcmiPowerReading::decode(&d), Ok(r));
        assert!(r.active());
        assert!(!DcmiPowerReading { state: 0, ..r }.active());
        // a reading from ipmitool's struct layout: group, cur 0x0102, ...
        let wire = [
            0xdc, 0x02, 0x01, 0x01, 0x00, 0x03, 0x00, 0x02, 0x01, 0x01, 0x02, 0x03, 0x04, 0xe8,
            0x03, 0x00, 0x00, 0x40,
        ];
        let p = DcmiPowerReading::decode(&wire).unwrap();
        assert_eq!(
            (p.current, p.minimum, p.maximum, p.average),
            (0x0102, 1, 3, 0x0102)
        );
        assert_eq!((p.timestamp, p.period_ms), (0x04030201, 1000));
        // not DCMI, or short: typed errors
        let mut other = wire;
        other[0] = 0x00;
        assert!(DcmiPowerReading::decode(&other).is_err());
        for n in 0..wire.len() {
            assert!(DcmiPowerReading::decode(&wire[..n]).is_err());
        }
        assert_eq!(dcmi_power_reading_request(), [0xdc, 0x01, 0x00, 0x00]);
    }
}
