//! HTTPS to the Kubernetes API server: one reqwest client per driver,
//! rustls with the cluster's CA (or the system trust store when the
//! kubeconfig names none), an optional client certificate, a deadline on
//! every request, bounded bodies, transport failures classified.
//!
//! `--ssl-insecure` (or the kubeconfig's `insecure-skip-tls-verify`) accepts
//! any certificate; the handshake signature is still checked. Redirects are
//! not followed and proxies from the environment are not used.

use super::model::printable;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::tls::{ClientAuth, SeenCert, TlsTrust};
use reqwest::header::{HeaderMap, HeaderValue};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::time::{Duration, Instant};

/// Largest answer read.
pub const MAX_BODY: usize = 16 << 20;
/// Attempts of a request whose connection cannot be made (nothing was delivered).
const CONNECT_ATTEMPTS: u32 = 3;

/// What a request answered.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// `Retry-After` in seconds, when given.
    pub retry_after: Option<u64>,
    /// The body (at most [`MAX_BODY`] bytes).
    pub body: Vec<u8>,
}

/// How TLS is set up.
pub struct TlsSetup<'a> {
    /// CA certificates (PEM); `None`: the system trust store.
    pub ca_pem: Option<&'a [u8]>,
    /// Accept any certificate.
    pub insecure: bool,
    /// Client certificate chain and key (PEM).
    pub client: Option<(&'a [u8], &'a [u8])>,
}

/// The client.
pub struct Http {
    client: reqwest::Client,
    /// The certificate the API server presented (none over plain HTTP).
    pub seen: SeenCert,
    /// Requests sent.
    pub requests: u32,
}

/// Why a request failed before any answer (and whether it may be sent again).
pub enum Failed {
    /// No connection was made: nothing was delivered.
    Connect(DriverError),
    /// Sent, and no answer came in time: it may have been carried out.
    Silent(DriverError),
    /// Anything else (TLS, a broken answer).
    Other(DriverError),
}

impl Failed {
    /// The error inside.
    pub fn into_error(self) -> DriverError {
        match self {
            Failed::Connect(e) | Failed::Silent(e) | Failed::Other(e) => e,
        }
    }
}

fn setup_error(why: impl std::fmt::Display) -> DriverError {
    DriverError::new(
        ErrorKind::Config,
        Stage::Authenticate,
        format!("cannot set up TLS to the API server: {why}"),
    )
}

impl Http {
    /// A client for `tls`.
    pub fn new(tls: &TlsSetup<'_>) -> Result<Http, DriverError> {
        // The shared HTTPS trust (crate::tls): the cluster's CA as the
        // anchors (or the system trust store), any certificate when insecure.
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
        let client = match tls.client {
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
        let (config, seen, _) =
            crate::tls::client_config_with(&trust, anchors, client).map_err(setup_error)?;
        let client = reqwest::Client::builder()
            .user_agent(concat!("fencekit/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .http1_only()
            .tcp_nodelay(true)
            .use_preconfigured_tls(config)
            .build()
            .map_err(setup_error)?;
        Ok(Http {
            client,
            seen,
            requests: 0,
        })
    }

    /// Sends one request, bounded by `limit` and `deadline`. A connection
    /// that cannot be made is tried again briefly (nothing was delivered).
    #[allow(clippy::too_many_arguments)]
    pub async fn send(
        &mut self,
        method: reqwest::Method,
        url: &str,
        auth: Option<HeaderValue>,
        body: Option<Vec<u8>>,
        what: &str,
        stage: Stage,
        limit: Duration,
        deadline: Option<Instant>,
    ) -> Result<Reply, Failed> {
        let started = Instant::now();
        let until = {
            let own = started + limit;
            deadline.map_or(own, |d| d.min(own))
        };
        let late = || {
            DriverError::new(
                ErrorKind::Timeout,
                stage,
                format!(
                    "no answer from the API server to {what} within {:.1}s",
                    started.elapsed().as_secs_f64()
                ),
            )
        };
        let mut pause = Duration::from_millis(100);
        for attempt in 1..=CONNECT_ATTEMPTS {
            if Instant::now() >= until {
                return Err(Failed::Silent(late()));
            }
            let mut headers = HeaderMap::new();
            headers.insert(
                reqwest::header::ACCEPT,
                HeaderValue::from_static("application/json"),
            );
            if let Some(a) = &auth {
                headers.insert(reqwest::header::AUTHORIZATION, a.clone());
            }
            let mut req = self.client.request(method.clone(), url).headers(headers);
            if let Some(b) = &body {
                req = req
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(b.clone());
            }
            self.requests += 1;
            let exchange = async {
                let mut resp = req.send().await.map_err(|e| classify(&e, stage, what))?;
                let status = resp.status().as_u16();
                let retry_after = resp
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok());
                let mut body = Vec::new();
                while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&e, stage, what))? {
                    if body.len() + chunk.len() > MAX_BODY {
                        return Err(Failed::Other(DriverError::new(
                            ErrorKind::Protocol,
                            stage,
                            format!("the answer to {what} is larger than {} MiB", MAX_BODY >> 20),
                        )));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(Reply {
                    status,
                    retry_after,
                    body,
                })
            };
            match tokio::time::timeout_at(until.into(), exchange).await {
                Ok(Ok(r)) => return Ok(r),
                Ok(Err(Failed::Connect(e))) if attempt < CONNECT_ATTEMPTS => {
                    if Instant::now() + pause >= until {
                        return Err(Failed::Connect(e));
                    }
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                Ok(Err(f)) => return Err(f),
                Err(_) => return Err(Failed::Silent(late())),
            }
        }
        Err(Failed::Silent(late()))
    }
}

fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        cur = s.source();
    }
    parts.join(": ")
}

fn classify(e: &reqwest::Error, stage: Stage, what: &str) -> Failed {
    let text = chain_text(e);
    let lower = text.to_ascii_lowercase();
    if e.is_timeout() {
        return Failed::Silent(DriverError::new(
            ErrorKind::Timeout,
            stage,
            format!("no answer from the API server to {what}"),
        ));
    }
    if e.is_connect() {
        if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
            return Failed::Other(DriverError::new(
                ErrorKind::Protocol,
                stage,
                format!(
                    "the TLS handshake with the API server failed ({}); the cluster's CA comes \
                     from the kubeconfig (certificate-authority[-data]) or the service \
                     account's ca.crt",
                    printable(&text, 200)
                ),
            ));
        }
        let why = if lower.contains("refused") {
            "connection refused"
        } else if lower.contains("dns") || lower.contains("resolve") {
            "the name does not resolve"
        } else {
            "cannot connect"
        };
        return Failed::Connect(DriverError::new(
            ErrorKind::Unreachable,
            stage,
            format!("cannot reach the API server ({why}) for {what}"),
        ));
    }
    Failed::Other(DriverError::new(
        ErrorKind::Protocol,
        stage,
        format!(
            "the connection to the API server failed during {what}: {}",
            printable(&text, 200)
        ),
    ))
}

/// A header value that is never printed.
pub fn sensitive(bytes: &[u8]) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_bytes(bytes).ok()?;
    v.set_sensitive(true);
    Some(v)
}
