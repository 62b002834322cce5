//! JSON Web Tokens signed RS256 (RFC 7515 / 7519), for the clouds whose
//! token endpoints take a signed assertion instead of a secret: an Azure
//! service principal's certificate (`client_assertion`, RFC 7523) and a
//! Google service-account key (the JWT bearer grant).
//!
//! The key is signed with `ring` (already built for rustls; its RSA
//! signing reads PKCS#8 and PKCS#1 keys). Pure: the caller gives the
//! header and the claims; nothing here does I/O.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::signature::{RsaKeyPair, RSA_PKCS1_SHA256};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;

/// An RSA private key that signs JWTs with RS256.
pub struct RsaSigner {
    key: RsaKeyPair,
}

impl std::fmt::Debug for RsaSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RsaSigner([key])")
    }
}

impl RsaSigner {
    /// The first RSA private key of PEM text (PKCS#8 `PRIVATE KEY` or
    /// PKCS#1 `RSA PRIVATE KEY`); `None` when there is none ring takes.
    pub fn from_pem(pem: &[u8]) -> Option<RsaSigner> {
        let key = match PrivateKeyDer::from_pem_slice(pem) {
            Ok(PrivateKeyDer::Pkcs8(k)) => RsaKeyPair::from_pkcs8(k.secret_pkcs8_der()).ok(),
            Ok(PrivateKeyDer::Pkcs1(k)) => RsaKeyPair::from_der(k.secret_pkcs1_der()).ok(),
            _ => None,
        }?;
        Some(RsaSigner { key })
    }

    /// The public key (PKCS#1 `RSAPublicKey` DER), for verifying.
    pub fn public_der(&self) -> &[u8] {
        self.key.public().as_ref()
    }

    /// `header.claims.signature`, each base64url without padding; `alg`
    /// is set to RS256 and `typ` to JWT in the header given.
    pub fn sign(&self, header: serde_json::Value, claims: &serde_json::Value) -> String {
        let mut header = header;
        if let Some(h) = header.as_object_mut() {
            h.insert("alg".into(), "RS256".into());
            h.insert("typ".into(), "JWT".into());
        }
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let mut sig = vec![0u8; self.key.public().modulus_len()];
        // Fails only for a key ring refused to load, which from_pem did not.
        if self
            .key
            .sign(
                &RSA_PKCS1_SHA256,
                &ring::rand::SystemRandom::new(),
                signed.as_bytes(),
                &mut sig,
            )
            .is_err()
        {
            sig.clear();
        }
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(sig))
    }
}

/// A random UUID (v4): a JWT's `jti`, a request's idempotency key.
pub fn random_uuid() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jwt_is_signed_rs256_and_verifies() {
        let pem = include_str!("../azure/testdata/client-key.pem");
        let s = RsaSigner::from_pem(pem.as_bytes()).unwrap();
        let t = s.sign(
            serde_json::json!({"kid": "k1"}),
            &serde_json::json!({"iss": "a"}),
        );
        let parts: Vec<&str> = t.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(
            (header["alg"].as_str(), header["kid"].as_str()),
            (Some("RS256"), Some("k1"))
        );
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            s.public_der(),
        )
        .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
        .unwrap();
        assert!(RsaSigner::from_pem(b"no key").is_none());
        let u = random_uuid();
        assert_eq!((u.len(), &u[14..15]), (36, "4"));
        assert_ne!(random_uuid(), u);
    }
}
