//! Trusting an HTTPS device's certificate, for every platform that speaks
//! HTTPS to its fencing device (Redfish BMCs, the Kubernetes API server of
//! KubeVirt, vCenter/ESXi): how the operator's flags become a trust
//! ([`TlsTrust`], [`trust`]: `--ca-cert`, `--ssl-fingerprint`,
//! `--ssl-insecure`, at most one), the rustls client configuration and its
//! certificate verifier, and the explanation of a refused certificate.
//!
//! Roots: with no `--ca-cert`, the system trust store (`rustls-native-certs`:
//! `/etc/ssl/certs`, `SSL_CERT_FILE`, `SSL_CERT_DIR`), because a device's
//! certificate, when it is not self-signed, comes from a site's private CA
//! that operators install there; the public web roots (webpki-roots) would
//! not help. With `--ca-cert PATH`, only that file is trusted (as curl's
//! `--cacert`): each certificate in it is a trust anchor **and** is accepted
//! when the device presents exactly it, because self-signed device
//! certificates are commonly marked CA:TRUE, which webpki refuses as an
//! end-entity. A platform may hand its own anchors instead (a kubeconfig's
//! cluster CA: [`client_config_with`]). Pinning by SHA-256 fingerprint and
//! the insecure mode skip chain checks, never the handshake signature. The
//! crypto provider is *ring* (no OpenSSL, no C toolchain beyond ring's own).
//! TLS 1.2 and 1.3.

use crate::fingerprint::NotAFingerprint;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, RootCertStore, SignatureScheme};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How a device's certificate is trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TlsTrust {
    /// Verify the chain and the name against the system's trust store, or
    /// only the certificates in `ca_cert` (PEM). A certificate in that file
    /// is also accepted when the device presents exactly it (pinning a
    /// self-signed certificate, which is often marked CA:TRUE and so
    /// unusable as a CA).
    Verify {
        /// The trusted certificates (PEM file).
        ca_cert: Option<PathBuf>,
    },
    /// Accept any certificate (`--ssl-insecure`); the handshake signature is
    /// still checked, but anyone on the path can impersonate the device.
    Insecure,
    /// Accept exactly the certificate whose DER has this SHA-256 digest.
    Fingerprint([u8; 32]),
}

impl Default for TlsTrust {
    fn default() -> Self {
        TlsTrust::Verify { ca_cert: None }
    }
}

/// Why the trust flags do not make one trust.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    /// A pinned certificate fingerprint that is not one.
    #[error(transparent)]
    Fingerprint(#[from] NotAFingerprint),
    /// More than one kind of certificate trust.
    #[error("give only one of --ssl-insecure, --ca-cert and --ssl-fingerprint")]
    TwoTrusts,
}

/// Certificate trust from the command-line options or inventory fields
/// (`--ssl-insecure`, `--ca-cert`, `--ssl-fingerprint`: at most one).
pub fn trust(
    insecure: bool,
    ca_cert: Option<&Path>,
    fingerprint: Option<&str>,
) -> Result<TlsTrust, TrustError> {
    match (insecure, ca_cert, fingerprint) {
        (true, None, None) => Ok(TlsTrust::Insecure),
        (false, ca, None) => Ok(TlsTrust::Verify {
            ca_cert: ca.map(Path::to_path_buf),
        }),
        (false, None, Some(fp)) => Ok(TlsTrust::Fingerprint(crate::fingerprint::parse_sha256(fp)?)),
        _ => Err(TrustError::TwoTrusts),
    }
}

/// What a trust is, for plans and `-v` (never a secret).
pub fn describe(trust: &TlsTrust) -> String {
    match trust {
        TlsTrust::Verify { ca_cert: None } => "TLS verified against the system trust store".into(),
        TlsTrust::Verify { ca_cert: Some(p) } => format!("TLS verified against {}", p.display()),
        TlsTrust::Insecure => "TLS NOT verified".into(),
        TlsTrust::Fingerprint(_) => "TLS pinned by fingerprint".into(),
    }
}

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
/// BMCs verified against it reads it once, not a thousand times).
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
    /// rustls refused the client certificate or its key.
    #[error("the client certificate: {0}")]
    ClientCert(rustls::Error),
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
struct DeviceVerifier {
    check: Check,
    provider: Arc<CryptoProvider>,
    seen: SeenCert,
}

impl fmt::Debug for DeviceVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match &self.check {
            Check::Chain { pinned, .. } => format!("chain ({} pinned)", pinned.len()),
            Check::Fingerprint(_) => "fingerprint".into(),
            Check::Insecure => "insecure".into(),
        };
        f.debug_struct("DeviceVerifier")
            .field("mode", &mode)
            .finish()
    }
}

impl ServerCertVerifier for DeviceVerifier {
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
        .map_err(|e| signature_refused(e, cert))
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
        .map_err(|e| signature_refused(e, cert))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The smallest RSA modulus fencekit's TLS (ring, through rustls) verifies
/// a handshake signature with.
pub const MIN_RSA_BITS: usize = 2048;

/// A server key too small for the TLS library's signature checks. No trust
/// option can lift it (`--ssl-insecure` skips the certificate's checks,
/// never the handshake signature), so its message advises none.
#[derive(Debug)]
pub struct KeyTooSmall {
    /// The RSA modulus's size in bits.
    pub bits: usize,
}

impl fmt::Display for KeyTooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the server's {}-bit RSA key is below what fencekit's TLS accepts (RSA keys of \
             {MIN_RSA_BITS} bits or more, or ECDSA); no trust option lifts this: give the \
             device a certificate with a larger key",
            self.bits
        )
    }
}

impl std::error::Error for KeyTooSmall {}

/// A refused handshake signature, named for what it is when the server's
/// key is an RSA key below [`MIN_RSA_BITS`].
fn signature_refused(e: rustls::Error, cert: &CertificateDer<'_>) -> rustls::Error {
    match rsa_bits(cert.as_ref()) {
        Some(bits) if bits < MIN_RSA_BITS => rustls::Error::InvalidCertificate(
            CertificateError::Other(OtherError(Arc::new(KeyTooSmall { bits }))),
        ),
        _ => e,
    }
}

/// Whether `e` is a server key too small for the TLS library.
pub fn key_too_small(e: &rustls::Error) -> Option<usize> {
    match e {
        rustls::Error::InvalidCertificate(CertificateError::Other(o)) => {
            o.0.downcast_ref::<KeyTooSmall>().map(|k| k.bits)
        }
        _ => None,
    }
}

/// One DER element: (tag, content, rest); `None` when it does not parse.
fn der(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, b) = b.split_first()?;
    let (&first, mut b) = b.split_first()?;
    let len = if first < 0x80 {
        first as usize
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || b.len() < n {
            return None;
        }
        let l = b[..n].iter().fold(0usize, |a, &x| (a << 8) | x as usize);
        b = &b[n..];
        l
    };
    (b.len() >= len).then(|| (tag, &b[..len], &b[len..]))
}

/// The modulus size of a certificate's RSA public key (`None`: not RSA, or
/// not a certificate this walk reads). A bounded walk over the DER, no
/// recursion: Certificate → tbsCertificate → subjectPublicKeyInfo.
pub fn rsa_bits(cert: &[u8]) -> Option<usize> {
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    let (_, certificate, _) = der(cert).filter(|t| t.0 == 0x30)?;
    let (_, mut tbs, _) = der(certificate).filter(|t| t.0 == 0x30)?;
    // [0] version (optional), serial, signature, issuer, validity, subject.
    if tbs.first() == Some(&0xa0) {
        tbs = der(tbs)?.2;
    }
    for _ in 0..5 {
        tbs = der(tbs)?.2;
    }
    let (_, spki, _) = der(tbs).filter(|t| t.0 == 0x30)?;
    let (_, alg, rest) = der(spki).filter(|t| t.0 == 0x30)?;
    let (_, oid, _) = der(alg).filter(|t| t.0 == 0x06)?;
    if oid != RSA {
        return None;
    }
    let (_, bits, _) = der(rest).filter(|t| t.0 == 0x03)?;
    let (_, key, _) = der(bits.get(1..)?).filter(|t| t.0 == 0x30)?;
    let (_, modulus, _) = der(key).filter(|t| t.0 == 0x02)?;
    let m: &[u8] = {
        let mut m = modulus;
        while m.first() == Some(&0) {
            m = &m[1..];
        }
        m
    };
    let top = *m.first()?;
    Some((m.len() - 1) * 8 + (8 - top.leading_zeros() as usize))
}

/// A client certificate and its key (a kubeconfig's user).
pub struct ClientAuth {
    /// The certificate chain, the client's own first.
    pub chain: Vec<CertificateDer<'static>>,
    /// Its private key.
    pub key: PrivateKeyDer<'static>,
}

/// A client configuration for `trust`, the recorder of the presented
/// certificate, and a short description of the trust used (for the record).
pub fn client_config(
    trust: &TlsTrust,
) -> Result<(rustls::ClientConfig, SeenCert, String), TlsSetupError> {
    client_config_with(trust, None, None)
}

/// [`client_config`] with a platform's own anchors and a client
/// certificate. `anchors` (the certificates and where they come from)
/// replace the system trust store when `trust` names no `--ca-cert`.
pub fn client_config_with(
    trust: &TlsTrust,
    anchors: Option<(Vec<CertificateDer<'static>>, String)>,
    client: Option<ClientAuth>,
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
            let (pinned, described) = match (ca_cert, anchors) {
                (Some(path), _) => {
                    let certs = read_pem_certs(path)?;
                    let pinned = certs.iter().map(|c| c.as_ref().to_vec()).collect();
                    // Certificates webpki cannot use as anchors still count as pins.
                    roots.add_parsable_certificates(certs);
                    (pinned, format!("tls verified against {}", path.display()))
                }
                (None, Some((certs, from))) => {
                    let pinned = certs.iter().map(|c| c.as_ref().to_vec()).collect();
                    roots.add_parsable_certificates(certs);
                    (pinned, format!("tls verified against {from}"))
                }
                (None, None) => {
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
    let verifier = Arc::new(DeviceVerifier {
        check,
        provider: provider.clone(),
        seen: seen.clone(),
    });
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match client {
        None => builder.with_no_client_auth(),
        Some(c) => builder
            .with_client_auth_cert(c.chain, c.key)
            .map_err(TlsSetupError::ClientCert)?,
    };
    Ok((config, seen, described))
}

/// A configuration that trusts no certificate at all (for plain-HTTP
/// clients, which must still be given one).
pub fn refuse_all() -> Result<rustls::ClientConfig, TlsSetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(DeviceVerifier {
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

/// The first rustls error in an error's chain (a reqwest error's causes),
/// looking inside the `io::Error`s tokio-rustls wraps it in.
pub fn find_rustls<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut cur: Option<&'a (dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        // io::Error::source() skips the wrapped error itself (and tokio-rustls
        // wraps io::Errors in io::Errors): step into it instead.
        if let Some(inner) = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            cur = Some(inner);
            continue;
        }
        cur = err.source();
    }
    None
}

/// A lowercase explanation of a TLS failure, with what to do about it;
/// `device` names the peer (`the BMC`, `vCenter`).
pub fn explain(e: &rustls::Error, device: &str) -> String {
    if let Some(bits) = key_too_small(e) {
        return format!(
            "{device}'s certificate cannot be used: {}",
            KeyTooSmall { bits }
        );
    }
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
                // (common for self-signed device certificates).
                CertificateError::Other(o) if o.to_string().contains("CaUsedAsEndEntity") => {
                    "it is a CA certificate (CA:TRUE) used as the server's own, and it is not \
                     pinned with --ca-cert"
                        .to_string()
                }
                CertificateError::Other(o) => o.to_string(),
                other => format!("{other:?}").to_lowercase(),
            };
            format!(
                "{device}'s certificate is not trusted: {why}; trust it with --ca-cert \
                 ({device}'s certificate or its CA), pin it with --ssl-fingerprint, or skip \
                 the check with --ssl-insecure"
            )
        }
        other => format!("the tls handshake failed: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_trust_from_the_flags() {
        assert_eq!(trust(false, None, None), Ok(TlsTrust::default()));
        assert_eq!(trust(true, None, None), Ok(TlsTrust::Insecure));
        assert_eq!(
            trust(true, Some(Path::new("/ca.pem")), None),
            Err(TrustError::TwoTrusts)
        );
        assert!(matches!(
            trust(false, None, Some("nope")),
            Err(TrustError::Fingerprint(_))
        ));
        let e = explain(
            &rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
            "vCenter",
        );
        assert!(
            e.starts_with("vCenter's certificate is not trusted: it is not signed"),
            "{e}"
        );
    }

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

    const RSA_1024: &str = "-----BEGIN CERTIFICATE-----\nMIICBDCCAW2gAwIBAgIUGVvmn39Jk5g23gtkqxcGu0hIfv0wDQYJKoZIhvcNAQEL\nBQAwFDESMBAGA1UEAwwJMTI3LjAuMC4xMB4XDTI2MTIwNjIzNDU1NVoXDTM2MTIw\nMzIzNDU1NVowFDESMBAGA1UEAwwJMTI3LjAuMC4xMIGfMA0GCSqGSIb3DQEBAQUA\nA4GNADCBiQKBgQCn6x6yD1be8TTJ11J0SRcfQA+XadA+vUWSb9wHF/mYb2Q/cCDe\n8oRaJc8ga4CJapYQedCFjXM/kLLliH2GeU7/fEW2hOwywyiN35RNtnQrMiQnWDE7\nQDo7R1JP+48uwZ4Bv9oTW1QoPaLPl56GG+DHtdOoJeKPXSjLGy7BqSZXKQIDAQAB\no1MwUTAdBgNVHQ4EFgQUOu8MDWVRqqBZpR/Ou0nUi7y7rEQwHwYDVR0jBBgwFoAU\nOu8MDWVRqqBZpR/Ou0nUi7y7rEQwDwYDVR0TAQH/BAUwAwEB/zANBgkqhkiG9w0B\nAQsFAAOBgQBMPAPwYKImgHS21CdG5Itk2IJPQzvhkyDx7mvbku86lliDw7j78lcS\nny6AKoynu163P3iP/k7rWEx9ldRjgNtS6WpC0CEKS5TIoCYswfSzG+yuCd2YHDkV\njPgNXTFGyqucCqtiUHAR11yPLyMsJzsf5Ctxi3zGYrqZf6Y/38IZcQ==\n-----END CERTIFICATE-----";
    const RSA_2048: &str = "-----BEGIN CERTIFICATE-----\nMIIC+TCCAeGgAwIBAgIUeMAOo8yAd0umzsTXX6LEADDijIAwDQYJKoZIhvcNAQEL\nBQAwDDEKMAgGA1UEAwwBeDAeFw0yNjEyMDYyMzQ1NTVaFw0zNjEyMDMyMzQ1NTVa\nMAwxCjAIBgNVBAMMAXgwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQCn\nRTrXAFg4jJhXN9LsIj6D3gjY1BbdgfgNoukWdKxWbsQFUqSw6u4nbgwPva8RJ3gA\ns8eCjAEYgX2sL7zG/U4w17t6F5fD76sxVkcJJY+ThD3ZHcMwRtIgCa5ceHBzgN58\n3CP188Kn4DvT2NF/bK1equM84/9NsUSy49b/tV6+9TwSqZ0U07aeTWlv3hhQfBAa\n89gKUch5HajAa294g93JOcQtw2FcWUnzaNrsMclDrDS3Tb+SKWJKo6SgzBmk+7vi\naTx9SWOSGZV9CSonbZGIh5Ift/8UhUSeknJbD1SP8iPeBct3MloN41zVHL2QWe+L\nzq/msltRAaE44KOXVaX9AgMBAAGjUzBRMB0GA1UdDgQWBBSDZFXsd5lj854Y1ASg\ne+HfJtCSAzAfBgNVHSMEGDAWgBSDZFXsd5lj854Y1ASge+HfJtCSAzAPBgNVHRMB\nAf8EBTADAQH/MA0GCSqGSIb3DQEBCwUAA4IBAQAilQJxPDMGygT949A7pz2b3hDX\nHesnlT9+Ec/dPC19BJAS/hEuQpFXZbEAw3DrQC+XGjZC4WMukiFFcxDCLx1U/uUu\nIVkuFm3LX0k3ZgiLjfhGRJjtSVES2R6+CaoRZCK7AGlRCKiVPa/OBQGvlL+LWkdQ\nUBc058aP59gITTfXYCyOireJk6cuFRZFI4ThosQ4Wy2bsL8FuzuTXRW0bH14oEpS\nsc7LGAMFtf6z6L4LXvizi42AEbuln8KMZwr0BexBc/19k65ALR+aPuRtstUogWFa\nfP2dvXYoS3s1ib2JIiGQ59lMW3ZZoPNQE9rlom2bqDM8fh9ICCDyzO2O6s6I\n-----END CERTIFICATE-----";
    const EC_P256: &str = "-----BEGIN CERTIFICATE-----\nMIIBbTCCAROgAwIBAgIUMnY496zS5hU69iYQdio+HAwvdpQwCgYIKoZIzj0EAwIw\nDDEKMAgGA1UEAwwBeDAeFw0yNjEyMDYyMzQ1NTVaFw0zNjEyMDMyMzQ1NTVaMAwx\nCjAIBgNVBAMMAXgwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQBjBvO4djGB2CK\nq05uHBhQA9VxXx+gqM2AeeKX9GfOzKIccix9FJoEtc6ry0wb8LtmUhWg+1zbL/fS\ncLgX4Pgco1MwUTAdBgNVHQ4EFgQUdgFnFdR+Tc1ASH2NOM/WFTabIwQwHwYDVR0j\nBBgwFoAUdgFnFdR+Tc1ASH2NOM/WFTabIwQwDwYDVR0TAQH/BAUwAwEB/zAKBggq\nhkjOPQQDAgNIADBFAiAbvTlfDAS7e01Q+8WGcL7n7ZF0mkbPN/USYAvA5hb9mAIh\nAMlEW84naYxYigE08QWg5pNbHzsb2fGokLULlgZMF3wJ\n-----END CERTIFICATE-----";

    fn der_of(pem: &str) -> Vec<u8> {
        CertificateDer::from_pem_slice(pem.as_bytes())
            .unwrap()
            .as_ref()
            .to_vec()
    }

    #[test]
    fn an_rsa_key_too_small_is_named_and_no_flag_advised() {
        assert_eq!(rsa_bits(&der_of(RSA_1024)), Some(1024));
        assert_eq!(rsa_bits(&der_of(RSA_2048)), Some(2048));
        assert_eq!(rsa_bits(&der_of(EC_P256)), None);
        for junk in [
            &b""[..],
            b"\x30",
            b"\x30\x84\xff\xff\xff\xff",
            b"\x30\x03\x30\x01",
        ] {
            assert_eq!(rsa_bits(junk), None);
        }
        let small = CertificateDer::from(der_of(RSA_1024));
        let e = signature_refused(
            rustls::Error::InvalidCertificate(CertificateError::BadSignature),
            &small,
        );
        assert_eq!(key_too_small(&e), Some(1024));
        let text = explain(&e, "vCenter");
        assert!(
            text.contains("the server's 1024-bit RSA key is below what fencekit's TLS accepts"),
            "{text}"
        );
        assert!(!text.contains("--ssl-insecure"), "{text}");
        // A large key's refused signature stays what it was.
        let big = CertificateDer::from(der_of(RSA_2048));
        let e = signature_refused(
            rustls::Error::InvalidCertificate(CertificateError::BadSignature),
            &big,
        );
        assert_eq!(key_too_small(&e), None);
    }
}
