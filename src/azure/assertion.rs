//! A service principal's certificate credential: the client assertion
//! Entra ID takes instead of a secret (RFC 7523), a JWT signed RS256 with
//! the certificate's private key, naming the certificate by its SHA-1
//! thumbprint (`x5t`) as the Azure SDKs do.
//!
//! The JWT is signed by the shared RS256 signer ([`crate::http::jwt`]). Pure: the caller gives the time
//! and the token endpoint; nothing here does I/O but reading the PEM file.

use crate::http::jwt::RsaSigner;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use sha1::Digest as _;
use std::path::Path;

/// Why a certificate credential cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CertError {
    /// The file cannot be read.
    #[error("cannot read the client certificate {path}: {why}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// No certificate in it.
    #[error("{0} holds no PEM certificate")]
    NoCertificate(String),
    /// No usable private key in it.
    #[error("{0} holds no RSA private key (PEM, PKCS#8 or PKCS#1; an encrypted key must be decrypted first)")]
    NoKey(String),
}

/// A certificate and its key, ready to sign assertions.
pub struct Signer {
    key: RsaSigner,
    thumbprint: String,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("x5t", &self.thumbprint)
            .finish()
    }
}

impl Signer {
    /// The certificate and key of a PEM file (the Azure SDKs' format for
    /// `AZURE_CLIENT_CERTIFICATE_PATH`: both in one file).
    pub fn from_file(path: &Path) -> Result<Signer, CertError> {
        let shown = path.display().to_string();
        let pem = zeroize::Zeroizing::new(std::fs::read(path).map_err(|e| CertError::Read {
            path: shown.clone(),
            why: e.to_string(),
        })?);
        Signer::from_pem(&pem, &shown)
    }

    /// From PEM text; `shown` names it in errors.
    pub fn from_pem(pem: &[u8], shown: &str) -> Result<Signer, CertError> {
        let cert = CertificateDer::pem_slice_iter(pem)
            .filter_map(Result::ok)
            .next()
            .ok_or_else(|| CertError::NoCertificate(shown.to_string()))?;
        let key = RsaSigner::from_pem(pem).ok_or_else(|| CertError::NoKey(shown.to_string()))?;
        Ok(Signer {
            key,
            thumbprint: URL_SAFE_NO_PAD.encode(sha1::Sha1::digest(cert.as_ref())),
        })
    }

    /// The certificate's SHA-1 thumbprint, base64url (the `x5t` header).
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// A client assertion for `client_id` at `token_url`, valid from
    /// `now` (seconds since the epoch) for ten minutes, with `jti` unique.
    pub fn assertion(&self, client_id: &str, token_url: &str, now: u64, jti: &str) -> String {
        let claims = serde_json::json!({
            "aud": token_url,
            "iss": client_id,
            "sub": client_id,
            "jti": jti,
            "nbf": now,
            "iat": now,
            "exp": now + 600,
        });
        self.key
            .sign(serde_json::json!({"x5t": self.thumbprint}), &claims)
    }
}

/// A random UUID (v4) for an assertion's `jti`.
pub fn random_jti() -> String {
    crate::http::jwt::random_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2048-bit test key (PKCS#8) and its self-signed certificate,
    /// made with openssl for these tests only.
    fn pem_pair() -> Option<Vec<u8>> {
        let key = include_str!("testdata/client-key.pem");
        let cert = include_str!("testdata/client-cert.pem");
        Some(format!("{cert}{key}").into_bytes())
    }

    #[test]
    fn an_assertion_is_a_signed_jwt_naming_the_certificate() {
        let pem = pem_pair().unwrap();
        let s = Signer::from_pem(&pem, "test").unwrap();
        let a = s.assertion(
            "app-1",
            "https://login/t/oauth2/v2.0/token",
            1_700_000_000,
            "j",
        );
        let parts: Vec<&str> = a.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], "RS256");
        assert_eq!(header["x5t"], s.thumbprint());
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "app-1");
        assert_eq!(claims["exp"], 1_700_000_600u64);
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        assert_eq!(sig.len(), 256);
        // The signature verifies with the certificate's public key.
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            s.key.public_der(),
        );
        public
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
        assert!(matches!(
            Signer::from_pem(include_str!("testdata/client-cert.pem").as_bytes(), "c"),
            Err(CertError::NoKey(_))
        ));
        assert!(matches!(
            Signer::from_pem(b"nothing", "n"),
            Err(CertError::NoCertificate(_))
        ));
        let j = random_jti();
        assert_eq!((j.len(), &j[14..15]), (36, "4"));
    }
}
