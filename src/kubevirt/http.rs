//! The Kubernetes API server's client on the shared HTTP layer
//! ([`crate::http`]): the cluster's CA from the kubeconfig (or the system
//! trust store when it names none) as the anchors of the shared TLS trust,
//! and an optional client certificate.
//!
//! `--ssl-insecure` (or the kubeconfig's `insecure-skip-tls-verify`) accepts
//! any certificate; the handshake signature is still checked. Redirects are
//! not followed and proxies from the environment are not used.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Client, Setup};
use crate::tls::{ClientAuth, TlsTrust};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Largest answer read.
pub const MAX_BODY: usize = 16 << 20;

/// What the API server is called in messages.
pub const DEVICE: &str = "the API server";

/// How TLS is set up.
pub struct TlsSetup<'a> {
    /// CA certificates (PEM); `None`: the system trust store.
    pub ca_pem: Option<&'a [u8]>,
    /// Accept any certificate.
    pub insecure: bool,
    /// Client certificate chain and key (PEM).
    pub client: Option<(&'a [u8], &'a [u8])>,
}

fn setup_error(why: impl std::fmt::Display) -> DriverError {
    DriverError::new(
        ErrorKind::Config,
        Stage::Authenticate,
        format!("cannot set up TLS to the API server: {why}"),
    )
}

/// A client for `tls`.
pub fn client(tls: &TlsSetup<'_>) -> Result<Client, DriverError> {
    let trust = match tls.insecure {
        true => TlsTrust::Insecure,
        false => TlsTrust::default(),
    };
    let anchors = match tls.ca_pem {
        Some(pem) => {
            let certs = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| setup_error(format!("the cluster's CA is not PEM: {e}")))?;
            if certs.is_empty() {
                return Err(setup_error("the cluster's CA holds no usable certificate"));
            }
            Some((certs, "the cluster's CA".to_string()))
        }
        None => None,
    };
    let client_auth = match tls.client {
        None => None,
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| setup_error(format!("the client certificate is not PEM: {e}")))?;
            if chain.is_empty() {
                return Err(setup_error("the client certificate holds no certificate"));
            }
            let key = PrivateKeyDer::from_pem_slice(key)
                .map_err(|_| setup_error("the client key is not a PEM private key"))?;
            Some(ClientAuth { chain, key })
        }
    };
    Client::new(Setup {
        trust: Some(trust),
        anchors,
        client_auth,
        tls_hint: Some(
            "the cluster's CA comes from the kubeconfig (certificate-authority[-data]) or the \
             service account's ca.crt",
        ),
        ..Setup::new(DEVICE)
    })
}
