//! Cipher suites 3 and 17, the RAKP key exchange, and IPMI 1.5 auth codes.
//!
//! Suite 3: RAKP-HMAC-SHA1 / HMAC-SHA1-96 / AES-CBC-128.
//! Suite 17: RAKP-HMAC-SHA256 / HMAC-SHA256-128 / AES-CBC-128.
//! (IPMI 2.0 table 22-20, and the 2.0 errata that added the SHA-256 suites.)
//! Suites without integrity or confidentiality are deliberately absent.
//!
//! Both the client session and the lab's BMC use these functions, and tests
//! check them against pyghmi's and ipmitool's implementations on the wire.

use aes::cipher::{block_padding::NoPadding, BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use hmac::{Hmac, Mac};
use md5::{Digest, Md5};
use sha1::Sha1;
use sha2::Sha256;
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::codec::Malformed;

/// A supported cipher suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// Cipher suite 3.
    S3,
    /// Cipher suite 17.
    S17,
}

/// Authentication algorithm numbers (IPMI 2.0 table 13-17).
pub const AUTH_RAKP_HMAC_SHA1: u8 = 0x01;
/// RAKP-HMAC-SHA256 (IPMI 2.0 errata).
pub const AUTH_RAKP_HMAC_SHA256: u8 = 0x03;
/// Integrity algorithm numbers (IPMI 2.0 table 13-18).
pub const INTEGRITY_HMAC_SHA1_96: u8 = 0x01;
/// HMAC-SHA256-128.
pub const INTEGRITY_HMAC_SHA256_128: u8 = 0x04;
/// Confidentiality algorithm numbers (IPMI 2.0 table 13-19).
pub const CONF_AES_CBC_128: u8 = 0x01;

impl Suite {
    /// The suite with this ID, if supported.
    pub fn from_id(id: u8) -> Option<Suite> {
        match id {
            3 => Some(Suite::S3),
            17 => Some(Suite::S17),
            _ => None,
        }
    }

    /// The suite whose algorithms these are, if supported.
    pub fn from_algorithms(auth: u8, integrity: u8, conf: u8) -> Option<Suite> {
        [Suite::S17, Suite::S3]
            .into_iter()
            .find(|s| s.algorithms() == (auth, integrity, conf))
    }

    /// The cipher suite ID.
    pub fn id(self) -> u8 {
        match self {
            Suite::S3 => 3,
            Suite::S17 => 17,
        }
    }

    /// (authentication, integrity, confidentiality) algorithm numbers.
    pub fn algorithms(self) -> (u8, u8, u8) {
        match self {
            Suite::S3 => (
                AUTH_RAKP_HMAC_SHA1,
                INTEGRITY_HMAC_SHA1_96,
                CONF_AES_CBC_128,
            ),
            Suite::S17 => (
                AUTH_RAKP_HMAC_SHA256,
                INTEGRITY_HMAC_SHA256_128,
                CONF_AES_CBC_128,
            ),
        }
    }

    /// Length of the RAKP 2/3 key exchange authentication code (the full HMAC).
    pub fn rakp_code_len(self) -> usize {
        match self {
            Suite::S3 => 20,
            Suite::S17 => 32,
        }
    }

    /// Length of the RAKP 4 integrity check value and of each packet's integrity code.
    pub fn icv_len(self) -> usize {
        match self {
            Suite::S3 => 12,
            Suite::S17 => 16,
        }
    }

    /// The suite's HMAC over `parts`, concatenated, under `key`.
    pub fn hmac(self, key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
        match self {
            Suite::S3 => {
                let mut m = <Hmac<Sha1> as Mac>::new_from_slice(key).expect("HMAC takes any key");
                for p in parts {
                    m.update(p);
                }
                m.finalize().into_bytes().to_vec()
            }
            Suite::S17 => {
                let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key");
                for p in parts {
                    m.update(p);
                }
                m.finalize().into_bytes().to_vec()
            }
        }
    }
}

/// What both sides of a RAKP exchange know (IPMI 2.0 §13.31).
pub struct Rakp<'a> {
    /// Console session ID (SID_M).
    pub console_sid: u32,
    /// BMC session ID (SID_C).
    pub managed_sid: u32,
    /// Console random (R_M).
    pub rm: &'a [u8; 16],
    /// BMC random (R_C).
    pub rc: &'a [u8; 16],
    /// BMC GUID (GUID_C).
    pub guid: &'a [u8; 16],
    /// Role byte as sent in RAKP 1.
    pub role: u8,
    /// User name.
    pub username: &'a [u8],
}

impl Rakp<'_> {
    /// RAKP 2 key exchange code: HMAC_Kuid(SID_M, SID_C, R_M, R_C, GUID_C, ROLE_M, ULEN, UNAME).
    pub fn rakp2_code(&self, suite: Suite, kuid: &[u8]) -> Vec<u8> {
        suite.hmac(
            kuid,
            &[
                &self.console_sid.to_le_bytes(),
                &self.managed_sid.to_le_bytes(),
                self.rm,
                self.rc,
                self.guid,
                &[self.role, self.username.len() as u8],
                self.username,
            ],
        )
    }

    /// RAKP 3 key exchange code: HMAC_Kuid(R_C, SID_M, ROLE_M, ULEN, UNAME).
    pub fn rakp3_code(&self, suite: Suite, kuid: &[u8]) -> Vec<u8> {
        suite.hmac(
            kuid,
            &[
                self.rc,
                &self.console_sid.to_le_bytes(),
                &[self.role, self.username.len() as u8],
                self.username,
            ],
        )
    }

    /// Session integrity key: HMAC_Kg(R_M, R_C, ROLE_M, ULEN, UNAME); K_g
    /// defaults to K_uid when the BMC has no BMC key.
    pub fn sik(&self, suite: Suite, kg: &[u8]) -> Vec<u8> {
        suite.hmac(
            kg,
            &[
                self.rm,
                self.rc,
                &[self.role, self.username.len() as u8],
                self.username,
            ],
        )
    }

    /// RAKP 4 integrity check value: HMAC_SIK(R_M, SID_C, GUID_C), truncated.
    pub fn rakp4_icv(&self, suite: Suite, sik: &[u8]) -> Vec<u8> {
        let mut v = suite.hmac(sik, &[self.rm, &self.managed_sid.to_le_bytes(), self.guid]);
        v.truncate(suite.icv_len());
        v
    }
}

/// The keys of an active RMCP+ session.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SessionKeys {
    #[zeroize(skip)]
    suite: Suite,
    k1: Vec<u8>,
    aes_key: [u8; 16],
}

impl Zeroize for Suite {
    fn zeroize(&mut self) {}
}

impl SessionKeys {
    /// Derives K1 (integrity) and K2 (AES key) from the SIK:
    /// K_n = HMAC_SIK(n repeated 20 times), for both suites.
    pub fn derive(suite: Suite, sik: &[u8]) -> Self {
        let k1 = suite.hmac(sik, &[&[0x01; 20]]);
        let mut k2 = suite.hmac(sik, &[&[0x02; 20]]);
        let mut aes_key = [0u8; 16];
        aes_key.copy_from_slice(&k2[..16]);
        k2.zeroize();
        SessionKeys { suite, k1, aes_key }
    }

    /// The suite these keys belong to.
    pub fn suite(&self) -> Suite {
        self.suite
    }

    /// Integrity code over `data` (auth type .. next header), truncated.
    pub fn integrity(&self, data: &[u8]) -> Vec<u8> {
        let mut v = self.suite.hmac(&self.k1, &[data]);
        v.truncate(self.suite.icv_len());
        v
    }

    /// Checks an integrity code in constant time.
    pub fn verify_integrity(&self, data: &[u8], code: &[u8]) -> bool {
        let want = self.integrity(data);
        want.len() == code.len() && constant_time_eq(&want, code)
    }

    /// AES-CBC-128 encryption with IPMI's confidentiality trailer
    /// (pad bytes 01h, 02h, … then the pad length; IPMI 2.0 table 13-20).
    /// Returns IV ‖ ciphertext.
    pub fn encrypt(&self, plain: &[u8], iv: [u8; 16]) -> Vec<u8> {
        let pad = (16 - (plain.len() + 1) % 16) % 16;
        let mut buf = Vec::with_capacity(16 + plain.len() + pad + 1);
        buf.extend_from_slice(plain);
        buf.extend((1..=pad).map(|i| i as u8));
        buf.push(pad as u8);
        let n = buf.len();
        let enc = cbc::Encryptor::<aes::Aes128>::new(&self.aes_key.into(), &iv.into());
        let ct = enc
            .encrypt_padded_mut::<NoPadding>(&mut buf, n)
            .expect("length is a multiple of the block size");
        let mut out = Vec::with_capacity(16 + ct.len());
        out.extend_from_slice(&iv);
        out.extend_from_slice(ct);
        out
    }

    /// Reverses [`SessionKeys::encrypt`].
    pub fn decrypt(&self, data: &[u8]) -> Result<Vec<u8>, Malformed> {
        if data.len() < 32 || !data.len().is_multiple_of(16) {
            return Err(Malformed::BadPadding);
        }
        let mut iv = [0u8; 16];
        iv.copy_from_slice(&data[..16]);
        let mut buf = data[16..].to_vec();
        let dec = cbc::Decryptor::<aes::Aes128>::new(&self.aes_key.into(), &iv.into());
        let plain = dec
            .decrypt_padded_mut::<NoPadding>(&mut buf)
            .map_err(|_| Malformed::BadPadding)?;
        let pad = *plain.last().ok_or(Malformed::BadPadding)? as usize;
        if pad > 15 || pad + 1 > plain.len() {
            return Err(Malformed::BadPadding);
        }
        let body_len = plain.len() - 1 - pad;
        // Pad bytes should be 01h, 02h, …; some BMCs pad with other values,
        // so only the length is trusted (integrity has already been checked).
        Ok(plain[..body_len].to_vec())
    }
}

/// Constant-time comparison of two equal-length byte strings.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A password padded with zeros to 16 bytes (IPMI 1.5) or 20 bytes (K_uid
/// for RMCP+ is the password as-is; see [`kuid`]).
pub fn pad16(password: &[u8]) -> [u8; 16] {
    let mut p = [0u8; 16];
    let n = password.len().min(16);
    p[..n].copy_from_slice(&password[..n]);
    p
}

/// K_uid for RMCP+: the user's password, zero-padded to 20 bytes, as
/// ipmitool and pyghmi use it for HMAC keys. Trailing zeros do not change an
/// HMAC key shorter than the block size, so the unpadded bytes are used.
pub fn kuid(password: &[u8]) -> &[u8] {
    password
}

/// IPMI 1.5 authentication code for auth type MD5 (IPMI 1.5 §6.12.4, 2.0 §22.17.1):
/// MD5(password ‖ session ID ‖ message ‖ session sequence ‖ password).
pub fn v15_md5(password: &[u8], session_id: u32, message: &[u8], seq: u32) -> [u8; 16] {
    let pw = pad16(password);
    let mut h = Md5::new();
    h.update(pw);
    h.update(session_id.to_le_bytes());
    h.update(message);
    h.update(seq.to_le_bytes());
    h.update(pw);
    h.finalize().into()
}

/// IPMI 1.5 authentication code for a session challenge / message: the
/// code for `auth_type` (0 none, 2 MD5, 4 straight password).
pub fn v15_code(
    auth_type: u8,
    password: &[u8],
    session_id: u32,
    message: &[u8],
    seq: u32,
) -> Option<[u8; 16]> {
    match auth_type {
        0 => None,
        2 => Some(v15_md5(password, session_id, message, seq)),
        _ => Some(pad16(password)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha1_rfc2202_case_2() {
        let out = Suite::S3.hmac(b"Jefe", &[b"what do ya want ", b"for nothing?"]);
        assert_eq!(
            out,
            [
                0xef, 0xfc, 0xdf, 0x6a, 0xe5, 0xeb, 0x2f, 0xa2, 0xd2, 0x74, 0x16, 0xd5, 0xf1, 0x84,
                0xdf, 0x9c, 0x25, 0x9a, 0x7c, 0x79
            ]
        );
    }

    #[test]
    fn hmac_sha256_rfc4231_case_2() {
        let out = Suite::S17.hmac(b"Jefe", &[b"what do ya want for nothing?"]);
        assert_eq!(out[..4], [0x5b, 0xdc, 0xc1, 0x46]);
        assert_eq!(out.len(), 32);
    }

    #[test]
    fn aes_roundtrip_all_lengths() {
        let keys = SessionKeys::derive(Suite::S17, &[9u8; 32]);
        for n in 0..50 {
            let plain: Vec<u8> = (0..n as u8).collect();
            let ct = keys.encrypt(&plain, [n as u8; 16]);
            assert_eq!(ct.len() % 16, 0);
            assert_eq!(keys.decrypt(&ct).unwrap(), plain);
        }
        assert_eq!(keys.decrypt(&[0u8; 15]), Err(Malformed::BadPadding));
    }

    #[test]
    fn integrity_truncation_and_check() {
        for (suite, len) in [(Suite::S3, 12), (Suite::S17, 16)] {
            let k = SessionKeys::derive(suite, b"sik");
            let code = k.integrity(b"data");
            assert_eq!(code.len(), len);
            assert!(k.verify_integrity(b"data", &code));
            assert!(!k.verify_integrity(b"datb", &code));
        }
    }

    #[test]
    fn suite_algorithms_map_back() {
        for s in [Suite::S3, Suite::S17] {
            let (a, i, c) = s.algorithms();
            assert_eq!(Suite::from_algorithms(a, i, c), Some(s));
            assert_eq!(Suite::from_id(s.id()), Some(s));
        }
        assert_eq!(Suite::from_id(0), None);
    }

    #[test]
    fn md5_code_depends_on_every_input() {
        let a = v15_md5(b"pw", 1, b"m", 1);
        assert_ne!(a, v15_md5(b"pv", 1, b"m", 1));
        assert_ne!(a, v15_md5(b"pw", 2, b"m", 1));
        assert_ne!(a, v15_md5(b"pw", 1, b"n", 1));
        assert_ne!(a, v15_md5(b"pw", 1, b"m", 2));
        assert_eq!(v15_code(4, b"pw", 0, b"", 0), Some(pad16(b"pw")));
    }
}
