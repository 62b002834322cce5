//! Trusting a BMC's certificate: the rustls client configuration and its
//! certificate verifier.
//!
//! Roots: with no `--ca-cert`, the system trust store (`rustls-native-certs`:
//! `/etc/ssl/certs`, `SSL_CERT_FILE`, `SSL_CERT_DIR`), because a BMC's
//! certificate, when it is not self-signed, comes from a site's private CA
//! that operators install there; the public web roots (webpki-roots) would
//! not help. With `--ca-cert PATH`, only that file is trusted (as curl's
//! `--cacert`): each certificate in it is a trust anchor **and** is accepted
//! when the BMC presents exactly it, because BMC self-signed certificates are
//! commonly marked CA:TRUE, which webpki refuses as an end-entity. Pinning by
//! SHA-256 fingerprint and the insecure mode skip chain checks, never the
//! handshake signature. The crypto provider is *ring* (no OpenSSL, no C
//! toolchain beyond ring's own). TLS 1.2 and 1.3.

use super::config::TlsTrust;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, RootCertStore, SignatureScheme};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The SHA-256 digest of the certificate the server presented last (the
/// "TLS identity" recorded as evidence).
#[derive(Clone, Debug, Default)]
pub struct SeenCert(Arc<Mutex<Option<[u8; 32]>>>);

impl SeenCert {
    /// The last presented certificate's SHA-256, if a handshake got that far.
    pub fn fingerprint(&self) -> Option<[u8; 32]> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, der: &[u8]) -> [u8; 32] {
        let fp: [u8; 32] = Sha256::digest(der).into();
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(fp);
        fp
    }
}

/// The system trust store, read once per process (a fleet of a thousand
/// Redfish BMCs verified against it reads it once, not a thousand times).
fn system_roots() -> &'static RootCertStore {
    static ROOTS: std::sync::OnceLock<RootCertStore> = std::sync::OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        for e in &found.errors {
            tracing::debug!(error = %e, "skipped part of the system trust store");
        }
        let (added, _) = roots.add_parsable_certificates(found.certs);
        tracing::debug!(roots = added, "loaded the system trust store");
        roots
    })
}

/// Why a TLS client configuration could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// The `--ca-cert` file cannot be opened or read.
    #[error("cannot read --ca-cert {}: {source}", path.display())]
    ReadCa {
        path: std::path::PathBuf,
        source: rustls::pki_types::pem::Error,
    },
    /// It is read but is not PEM.
    #[error("cannot parse --ca-cert {}: {source}", path.display())]
    ParseCa {
        path: std::path::PathBuf,
        source: rustls::pki_types::pem::Error,
    },
    /// It holds no certificate.
    #[error("--ca-cert {}: no PEM certificate in the file", .0.display())]
    NoCertificate(std::path::PathBuf),
    /// rustls refused the trust anchors.
    #[error("cannot build the certificate verifier: {0}")]
    Verifier(#[from] rustls::client::VerifierBuilderError),
    /// rustls refused the protocol versions.
    #[error("cannot set up TLS: {0}")]
    Setup(#[from] rustls::Error),
}

/// Reads every certificate of a PEM file.
pub fn read_pem_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let iter = CertificateDer::pem_file_iter(path).map_err(|source| TlsSetupError::ReadCa {
        path: path.to_path_buf(),
        source,
    })?;
    let certs = iter
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsSetupError::ParseCa {
            path: path.to_path_buf(),
            source,
        })?;
    if certs.is_empty() {
        return Err(TlsSetupError::NoCertificate(path.to_path_buf()));
    }
    Ok(certs)
}

#[derive(Debug)]
struct Mismatch(String);

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Mismatch {}

enum Check {
    /// Chain to the roots (and exact pins).
    Chain {
        webpki: Option<Arc<WebPkiServerVerifier>>,
        pinned: Vec<Vec<u8>>,
    },
    Fingerprint([u8; 32]),
    Insecure,
}

/// The verifier: chain + name, an exact pin, a fingerprint, or nothing —
/// always with the handshake signature checked.
struct BmcVerifier {
    check: Check,
    provider: Arc<CryptoProvider>,
    seen: SeenCert,
}

impl fmt::Debug for BmcVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match &self.check {
            Check::Chain { pinned, .. } => format!("chain ({} pinned)", pinned.len()),
            Check::Fingerprint(_) => "fingerprint".into(),
            Check::Insecure => "insecure".into(),
        };
        f.debug_struct("BmcVerifier").field("mode", &mode).finish()
    }
}

impl ServerCertVerifier for BmcVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let fp = self.seen.record(end_entity.as_ref());
        match &self.check {
            Check::Insecure => Ok(ServerCertVerified::assertion()),
            Check::Fingerprint(want) => {
                if &fp == want {
                    Ok(ServerCertVerified::assertion())
                } else {
                    Err(rustls::Error::InvalidCertificate(CertificateError::Other(
                        OtherError(Arc::new(Mismatch(format!(
                            "the certificate's fingerprint is {}, not the pinned {}",
                            crate::fingerprint::format_hex(&fp),
                            crate::fingerprint::format_hex(want)
                        )))),
                    )))
                }
            }
            Check::Chain { webpki, pinned } => {
                // An exact copy of a certificate the operator trusts is that
                // identity, whatever its CA flag or names say.
                if pinned.iter().any(|p| p.as_slice() == end_entity.as_ref()) {
                    return Ok(ServerCertVerified::assertion());
                }
                match webpki {
                    Some(v) => v.verify_server_cert(
                        end_entity,
                        intermediates,
                        server_name,
                        ocsp_response,
                        now,
                    ),
                    None => Err(rustls::Error::InvalidCertificate(
                        CertificateError::UnknownIssuer,
                    )),
                }
            }
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A client configuration for `trust`, the recorder of the presented
/// certificate, and a short description of the trust used (for the record).
pub fn client_config(
    trust: &TlsTrust,
) -> Result<(rustls::ClientConfig, SeenCert, String), TlsSetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (check, described) = match trust {
        TlsTrust::Insecure => (
            Check::Insecure,
            "tls not verified (--ssl-insecure)".to_string(),
        ),
        TlsTrust::Fingerprint(fp) => (
            Check::Fingerprint(*fp),
            format!("tls pinned to {}", crate::fingerprint::format_hex(fp)),
        ),
        TlsTrust::Verify { ca_cert } => {
            let mut roots = RootCertStore::empty();
            let (pinned, described) = match ca_cert {
                Some(path) => {
                    let certs = read_pem_certs(path)?;
                    let pinned = certs.iter().map(|c| c.as_ref().to_vec()).collect();
                    // Certificates webpki cannot use as anchors still count as pins.
                    roots.add_parsable_certificates(certs);
                    (pinned, format!("tls verified against {}", path.display()))
                }
                None => {
                    roots = system_roots().clone();
                    (
                        Vec::new(),
                        "tls verified against the system trust store".to_string(),
                    )
                }
            };
            let webpki = if roots.is_empty() {
                None
            } else {
                Some(
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()?,
                )
            };
            (Check::Chain { webpki, pinned }, described)
        }
    };
    let seen = SeenCert::default();
    let verifier = Arc::new(BmcVerifier {
        check,
        provider: provider.clone(),
        seen: seen.clone(),
    });
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok((config, seen, described))
}

/// A configuration that trusts no certificate at all (for plain-HTTP
/// clients, which must still be given one).
pub fn refuse_all() -> Result<rustls::ClientConfig, TlsSetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(BmcVerifier {
        check: Check::Chain {
            webpki: None,
            pinned: Vec::new(),
        },
        provider: provider.clone(),
        seen: SeenCert::default(),
    });
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// A lowercase explanation of a TLS failure, with what to do about it.
pub fn explain(e: &rustls::Error) -> String {
    const HINT: &str = "trust it with --ca-cert (the BMC's certificate or its CA), \
                        pin it with --ssl-fingerprint, or skip the check with --ssl-insecure";
    match e {
        rustls::Error::InvalidCertificate(c) => {
            let why = match c {
                CertificateError::UnknownIssuer => "it is not signed by a trusted CA".to_string(),
                CertificateError::NotValidForName
                | CertificateError::NotValidForNameContext { .. } => {
                    "it does not name this host".to_string()
                }
                CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                    "it has expired".to_string()
                }
                // webpki refuses a CA:TRUE certificate as the server's own
                // (common for BMC self-signed certificates).
                CertificateError::Other(o) if o.to_string().contains("CaUsedAsEndEntity") => {
                    "it is a CA certificate (CA:TRUE) used as the server's own, and it is not \
                     pinned with --ca-cert"
                        .to_string()
                }
                CertificateError::Other(o) => o.to_string(),
                other => format!("{other:?}").to_lowercase(),
            };
            format!("the BMC's certificate is not trusted: {why}; {HINT}")
        }
        other => format!("the tls handshake failed: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_build() {
        for t in [
            TlsTrust::Insecure,
            TlsTrust::Fingerprint([1; 32]),
            TlsTrust::Verify { ca_cert: None },
        ] {
            client_config(&t).unwrap();
        }
        let e = client_config(&TlsTrust::Verify {
            ca_cert: Some("/nonexistent/ca.pem".into()),
        })
        .unwrap_err();
        assert!(
            matches!(&e, TlsSetupError::ReadCa { path, .. } if path.ends_with("ca.pem")),
            "{e}"
        );
        assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        assert!(matches!(
            read_pem_certs(&empty),
            Err(TlsSetupError::NoCertificate(p)) if p == empty
        ));
    }
}
