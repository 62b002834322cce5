//! RMCP+ session set-up messages: Open Session Request/Response and
//! RAKP messages 1-4 (IPMI 2.0 §13.17-13.20).

use super::wire::{le32, need, Malformed};

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

#[cfg(test)]
mod tests {
    use super::super::wire::{decode_rmcp, decode_session, encode_v20, Frame, Rmcp};
    use super::*;

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
}
