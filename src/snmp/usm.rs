//! The User-based Security Model's cryptography (RFC 3414, RFC 3826,
//! RFC 7860): password-to-key, key localization, HMAC authentication
//! (MD5, SHA-1, SHA-224/256/384/512) and privacy (DES-CBC, AES-128-CFB).
//!
//! Keys are [`Secret`]s from the moment they are derived. No I/O, no state:
//! the session ([`super::session`]) decides which key signs what.

use crate::secret::Secret;
use hmac::{Hmac, Mac};
use sha2::Digest;
use std::fmt;

/// An authentication protocol (usmHMAC…AuthProtocol).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthProtocol {
    /// HMAC-MD5-96 (RFC 3414); legacy, accepted with a warning.
    Md5,
    /// HMAC-SHA-96 (RFC 3414).
    Sha1,
    /// HMAC-SHA-224 truncated to 128 bits (RFC 7860).
    Sha224,
    /// HMAC-SHA-256 truncated to 192 bits (RFC 7860).
    Sha256,
    /// HMAC-SHA-384 truncated to 256 bits (RFC 7860).
    Sha384,
    /// HMAC-SHA-512 truncated to 384 bits (RFC 7860).
    Sha512,
}

/// A privacy protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrivProtocol {
    /// CBC-DES (RFC 3414 §8); legacy, accepted with a warning.
    Des,
    /// CFB128-AES-128 (RFC 3826).
    Aes128,
}

/// Why a USM operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsmError {
    /// Empty password: RFC 3414 §11.2 asks for at least 8 characters;
    /// an empty one cannot derive a key at all.
    EmptyPassword,
    /// The privacy parameters or ciphertext have the wrong length.
    BadPrivacyParams,
    /// The localized key is too short for the privacy protocol.
    KeyTooShort,
}

impl fmt::Display for UsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UsmError::EmptyPassword => "an SNMPv3 password is empty",
            UsmError::BadPrivacyParams => {
                "the privacy parameters or ciphertext have a wrong length"
            }
            UsmError::KeyTooShort => "the localized key is too short for the privacy protocol",
        })
    }
}

impl std::error::Error for UsmError {}

/// Bytes of password material hashed to make a key (RFC 3414 A.2.1).
const EXPANSION: usize = 1_048_576;

fn expand_and_hash<D: Digest>(password: &[u8]) -> Vec<u8> {
    let mut h = D::new();
    let mut block = [0u8; 64];
    let mut idx = 0usize;
    let mut count = 0usize;
    while count < EXPANSION {
        for b in block.iter_mut() {
            *b = password[idx % password.len()];
            idx += 1;
        }
        h.update(block);
        count += 64;
    }
    h.finalize().to_vec()
}

fn localize_with<D: Digest>(ku: &[u8], engine_id: &[u8]) -> Vec<u8> {
    let mut h = D::new();
    h.update(ku);
    h.update(engine_id);
    h.update(ku);
    h.finalize().to_vec()
}

fn hmac_with<M: Mac + hmac::digest::KeyInit>(key: &[u8], msg: &[u8]) -> Vec<u8> {
    // Every key length is valid for HMAC, so this cannot fail.
    match <M as hmac::digest::KeyInit>::new_from_slice(key) {
        Ok(mut m) => {
            m.update(msg);
            m.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    }
}

impl AuthProtocol {
    /// Parses fence-agents' and net-snmp's spellings (`MD5`, `SHA`, `SHA-256`, …).
    pub fn parse(s: &str) -> Option<AuthProtocol> {
        Some(
            match s.to_ascii_uppercase().replace(['-', '_'], "").as_str() {
                "MD5" => AuthProtocol::Md5,
                "SHA" | "SHA1" => AuthProtocol::Sha1,
                "SHA224" => AuthProtocol::Sha224,
                "SHA256" => AuthProtocol::Sha256,
                "SHA384" => AuthProtocol::Sha384,
                "SHA512" => AuthProtocol::Sha512,
                _ => return None,
            },
        )
    }

    /// The name as net-snmp writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthProtocol::Md5 => "MD5",
            AuthProtocol::Sha1 => "SHA",
            AuthProtocol::Sha224 => "SHA-224",
            AuthProtocol::Sha256 => "SHA-256",
            AuthProtocol::Sha384 => "SHA-384",
            AuthProtocol::Sha512 => "SHA-512",
        }
    }

    /// Length of msgAuthenticationParameters.
    pub fn mac_len(self) -> usize {
        match self {
            AuthProtocol::Md5 | AuthProtocol::Sha1 => 12,
            AuthProtocol::Sha224 => 16,
            AuthProtocol::Sha256 => 24,
            AuthProtocol::Sha384 => 32,
            AuthProtocol::Sha512 => 48,
        }
    }

    /// True for protocols kept only for old devices.
    pub fn is_legacy(self) -> bool {
        self == AuthProtocol::Md5
    }

    /// Ku: the non-localized key for a password (RFC 3414 A.2).
    pub fn password_to_key(self, password: &Secret) -> Result<Secret, UsmError> {
        let p = password.expose();
        if p.is_empty() {
            return Err(UsmError::EmptyPassword);
        }
        Ok(Secret::new(match self {
            AuthProtocol::Md5 => expand_and_hash::<md5::Md5>(p),
            AuthProtocol::Sha1 => expand_and_hash::<sha1::Sha1>(p),
            AuthProtocol::Sha224 => expand_and_hash::<sha2::Sha224>(p),
            AuthProtocol::Sha256 => expand_and_hash::<sha2::Sha256>(p),
            AuthProtocol::Sha384 => expand_and_hash::<sha2::Sha384>(p),
            AuthProtocol::Sha512 => expand_and_hash::<sha2::Sha512>(p),
        }))
    }

    /// Kul: `ku` localized to an engine (RFC 3414 §2.6).
    pub fn localize(self, ku: &Secret, engine_id: &[u8]) -> Secret {
        let k = ku.expose();
        Secret::new(match self {
            AuthProtocol::Md5 => localize_with::<md5::Md5>(k, engine_id),
            AuthProtocol::Sha1 => localize_with::<sha1::Sha1>(k, engine_id),
            AuthProtocol::Sha224 => localize_with::<sha2::Sha224>(k, engine_id),
            AuthProtocol::Sha256 => localize_with::<sha2::Sha256>(k, engine_id),
            AuthProtocol::Sha384 => localize_with::<sha2::Sha384>(k, engine_id),
            AuthProtocol::Sha512 => localize_with::<sha2::Sha512>(k, engine_id),
        })
    }

    /// The truncated HMAC of `msg` (whose authentication parameters are zero).
    pub fn sign(self, key: &Secret, msg: &[u8]) -> Vec<u8> {
        let k = key.expose();
        let mut mac = match self {
            AuthProtocol::Md5 => hmac_with::<Hmac<md5::Md5>>(k, msg),
            AuthProtocol::Sha1 => hmac_with::<Hmac<sha1::Sha1>>(k, msg),
            AuthProtocol::Sha224 => hmac_with::<Hmac<sha2::Sha224>>(k, msg),
            AuthProtocol::Sha256 => hmac_with::<Hmac<sha2::Sha256>>(k, msg),
            AuthProtocol::Sha384 => hmac_with::<Hmac<sha2::Sha384>>(k, msg),
            AuthProtocol::Sha512 => hmac_with::<Hmac<sha2::Sha512>>(k, msg),
        };
        mac.truncate(self.mac_len());
        mac
    }

    /// Checks a message's authentication parameters (at `range`) in
    /// constant time over the MAC bytes.
    pub fn verify(self, key: &Secret, msg: &[u8], range: std::ops::Range<usize>) -> bool {
        if range.len() != self.mac_len() || range.end > msg.len() {
            return false;
        }
        let mut zeroed = msg.to_vec();
        let got = zeroed[range.clone()].to_vec();
        zeroed[range].fill(0);
        let want = self.sign(key, &zeroed);
        want.len() == got.len() && want.iter().zip(&got).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

impl PrivProtocol {
    /// Parses `DES` or `AES` (`AES128`, `AES-128`).
    pub fn parse(s: &str) -> Option<PrivProtocol> {
        Some(
            match s.to_ascii_uppercase().replace(['-', '_'], "").as_str() {
                "DES" => PrivProtocol::Des,
                "AES" | "AES128" => PrivProtocol::Aes128,
                _ => return None,
            },
        )
    }

    /// The name as net-snmp writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            PrivProtocol::Des => "DES",
            PrivProtocol::Aes128 => "AES",
        }
    }

    /// True for protocols kept only for old devices.
    pub fn is_legacy(self) -> bool {
        self == PrivProtocol::Des
    }

    /// Encrypts a scoped PDU. `salt` must never repeat for one key; returns
    /// the ciphertext and msgPrivacyParameters.
    pub fn encrypt(
        self,
        key: &Secret,
        boots: u32,
        time: u32,
        salt: u64,
        plain: &[u8],
    ) -> Result<(Vec<u8>, Vec<u8>), UsmError> {
        use aes::cipher::{
            block_padding::NoPadding, AsyncStreamCipher, BlockEncryptMut, KeyIvInit,
        };
        let k = key.expose();
        if k.len() < 16 {
            return Err(UsmError::KeyTooShort);
        }
        match self {
            PrivProtocol::Des => {
                // RFC 3414 §8.1.1.1: salt = boots ‖ local counter; IV = pre-IV ⊕ salt.
                let mut params = [0u8; 8];
                params[..4].copy_from_slice(&boots.to_be_bytes());
                params[4..].copy_from_slice(&(salt as u32).to_be_bytes());
                let mut iv = [0u8; 8];
                for i in 0..8 {
                    iv[i] = k[8 + i] ^ params[i];
                }
                let mut buf = plain.to_vec();
                let pad = (8 - buf.len() % 8) % 8;
                buf.resize(buf.len() + pad, 0);
                let enc = cbc::Encryptor::<des::Des>::new_from_slices(&k[..8], &iv)
                    .map_err(|_| UsmError::KeyTooShort)?;
                let n = buf.len();
                enc.encrypt_padded_mut::<NoPadding>(&mut buf, n)
                    .map_err(|_| UsmError::BadPrivacyParams)?;
                Ok((buf, params.to_vec()))
            }
            PrivProtocol::Aes128 => {
                // RFC 3826 §3.1.2.1: IV = boots ‖ time ‖ 64-bit salt.
                let params = salt.to_be_bytes();
                let iv = aes_iv(boots, time, &params);
                let mut buf = plain.to_vec();
                cfb_mode::Encryptor::<aes::Aes128>::new_from_slices(&k[..16], &iv)
                    .map_err(|_| UsmError::KeyTooShort)?
                    .encrypt(&mut buf);
                Ok((buf, params.to_vec()))
            }
        }
    }

    /// Decrypts an encryptedPDU with the sender's privacy parameters.
    pub fn decrypt(
        self,
        key: &Secret,
        boots: u32,
        time: u32,
        params: &[u8],
        cipher_text: &[u8],
    ) -> Result<Vec<u8>, UsmError> {
        use aes::cipher::{
            block_padding::NoPadding, AsyncStreamCipher, BlockDecryptMut, KeyIvInit,
        };
        let k = key.expose();
        if k.len() < 16 {
            return Err(UsmError::KeyTooShort);
        }
        if params.len() != 8 {
            return Err(UsmError::BadPrivacyParams);
        }
        match self {
            PrivProtocol::Des => {
                if !cipher_text.len().is_multiple_of(8) || cipher_text.is_empty() {
                    return Err(UsmError::BadPrivacyParams);
                }
                let mut iv = [0u8; 8];
                for i in 0..8 {
                    iv[i] = k[8 + i] ^ params[i];
                }
                let mut buf = cipher_text.to_vec();
                cbc::Decryptor::<des::Des>::new_from_slices(&k[..8], &iv)
                    .map_err(|_| UsmError::KeyTooShort)?
                    .decrypt_padded_mut::<NoPadding>(&mut buf)
                    .map_err(|_| UsmError::BadPrivacyParams)?;
                Ok(buf)
            }
            PrivProtocol::Aes128 => {
                let iv = aes_iv(boots, time, params);
                let mut buf = cipher_text.to_vec();
                cfb_mode::Decryptor::<aes::Aes128>::new_from_slices(&k[..16], &iv)
                    .map_err(|_| UsmError::KeyTooShort)?
                    .decrypt(&mut buf);
                Ok(buf)
            }
        }
    }
}

fn aes_iv(boots: u32, time: u32, salt: &[u8]) -> [u8; 16] {
    let mut iv = [0u8; 16];
    iv[..4].copy_from_slice(&boots.to_be_bytes());
    iv[4..8].copy_from_slice(&time.to_be_bytes());
    iv[8..].copy_from_slice(&salt[..8]);
    iv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    const ENGINE: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    #[test]
    fn rfc3414_a3_key_localization_vectors() {
        // RFC 3414 A.3.1 (MD5) and A.3.2 (SHA), password "maplesyrup".
        let pw = Secret::from_str_value("maplesyrup");
        let ku = AuthProtocol::Md5.password_to_key(&pw).unwrap();
        assert_eq!(hex(ku.expose()), "9faf3283884e92834ebc9847d8edd963");
        let kul = AuthProtocol::Md5.localize(&ku, &ENGINE);
        assert_eq!(hex(kul.expose()), "526f5eed9fcce26f8964c2930787d82b");
        let ku = AuthProtocol::Sha1.password_to_key(&pw).unwrap();
        assert_eq!(hex(ku.expose()), "9fb5cc0381497b3793528939ff788d5d79145211");
        let kul = AuthProtocol::Sha1.localize(&ku, &ENGINE);
        assert_eq!(
            hex(kul.expose()),
            "6695febc9288e36282235fc7151f128497b38f3f"
        );
    }

    #[test]
    fn empty_passwords_are_refused() {
        assert_eq!(
            AuthProtocol::Sha1.password_to_key(&Secret::default()),
            Err(UsmError::EmptyPassword)
        );
    }

    #[test]
    fn mac_lengths_follow_rfc7860() {
        let key = Secret::new(vec![1; 32]);
        for p in [
            AuthProtocol::Md5,
            AuthProtocol::Sha1,
            AuthProtocol::Sha224,
            AuthProtocol::Sha256,
            AuthProtocol::Sha384,
            AuthProtocol::Sha512,
        ] {
            let mut msg = vec![7u8; 80];
            let range = 10..10 + p.mac_len();
            msg[range.clone()].fill(0);
            let mac = p.sign(&key, &msg);
            assert_eq!(mac.len(), p.mac_len());
            msg[range.clone()].copy_from_slice(&mac);
            assert!(p.verify(&key, &msg, range.clone()));
            msg[0] ^= 1;
            assert!(!p.verify(&key, &msg, range));
        }
    }

    #[test]
    fn privacy_round_trips() {
        let key = Secret::new((0u8..20).collect());
        let plain: Vec<u8> = (0u8..45).collect();
        for p in [PrivProtocol::Des, PrivProtocol::Aes128] {
            let (ct, params) = p
                .encrypt(&key, 3, 1000, 0x0102_0304_0506_0708, &plain)
                .unwrap();
            assert_ne!(&ct[..plain.len()], &plain[..]);
            let back = p.decrypt(&key, 3, 1000, &params, &ct).unwrap();
            assert_eq!(&back[..plain.len()], &plain[..]);
            assert!(p.decrypt(&key, 3, 1000, &params[..4], &ct).is_err());
        }
    }
}
