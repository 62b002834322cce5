//! HTTP for the AWS driver: one reqwest client per driver (connections and
//! TLS sessions reused within an action), a deadline on every request,
//! bounded bodies, transport failures classified into [`ErrorKind`]s.
//!
//! TLS trusts the system store (or only `AWS_CA_BUNDLE`, as the SDKs do),
//! read only when an https endpoint is used. Redirects are not followed and
//! proxies from the environment are not used: a signed request goes to the
//! endpoint named, and nowhere else.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::Method;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest answer read.
pub const MAX_BODY: usize = 8 << 20;
/// Attempts of a request whose connection itself fails (nothing was delivered).
const CONNECT_ATTEMPTS: u32 = 3;

/// What a request answered.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The body (at most [`MAX_BODY`] bytes).
    pub body: Vec<u8>,
}

impl Reply {
    /// True for 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// One request.
pub struct Request<'a> {
    /// GET, PUT, POST.
    pub method: Method,
    /// The full URL.
    pub url: &'a str,
    /// Headers (a `host` here replaces the URL's).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// For messages: what is asked (`DescribeInstances i-…`).
    pub what: &'a str,
    /// For messages: who is asked (`EC2 at https://…`).
    pub peer: &'a str,
}

/// An HTTP client.
pub struct Http {
    client: reqwest::Client,
    /// Requests sent.
    pub requests: u32,
}

/// Why the client could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// `AWS_CA_BUNDLE` cannot be read or holds no certificate.
    #[error("cannot read AWS_CA_BUNDLE {path}: {why}")]
    CaBundle { path: String, why: String },
    /// rustls or reqwest refused the set-up.
    #[error("cannot set up the HTTPS client: {0}")]
    Setup(String),
}

fn roots(ca_bundle: Option<&str>) -> Result<rustls::RootCertStore, ClientError> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    match ca_bundle {
        Some(path) => {
            let bad = |why: String| ClientError::CaBundle {
                path: path.to_string(),
                why,
            };
            let certs = rustls::pki_types::CertificateDer::pem_file_iter(path)
                .map_err(|e| bad(e.to_string()))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad(e.to_string()))?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(bad("no usable PEM certificate in it".into()));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            tracing::debug!(roots = added, "loaded the system trust store");
        }
    }
    Ok(roots)
}

impl Http {
    /// A client; `tls` reads the trust store (only needed for https).
    pub fn new(tls: bool, ca_bundle: Option<&str>) -> Result<Http, ClientError> {
        let roots = if tls {
            roots(ca_bundle)?
        } else {
            rustls::RootCertStore::empty()
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ClientError::Setup(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let client = reqwest::Client::builder()
            .user_agent(concat!("fencekit/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .http1_only()
            .tcp_nodelay(true)
            .use_preconfigured_tls(config)
            .build()
            .map_err(|e| ClientError::Setup(e.to_string()))?;
        Ok(Http {
            client,
            requests: 0,
        })
    }

    /// Sends one request, bounded by `limit` and `deadline`. A connection
    /// that cannot be made is tried again briefly (nothing was delivered);
    /// anything else comes back as it came.
    pub async fn send(
        &mut self,
        r: &Request<'_>,
        stage: Stage,
        limit: Duration,
        deadline: Option<Instant>,
    ) -> Result<Reply, DriverError> {
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
                    "no answer from {} to {} within {:.1}s",
                    r.peer,
                    r.what,
                    started.elapsed().as_secs_f64()
                ),
            )
        };
        let mut pause = Duration::from_millis(100);
        for attempt in 1..=CONNECT_ATTEMPTS {
            if Instant::now() >= until {
                return Err(late());
            }
            match self.once(r, stage, until).await {
                Ok(reply) => return Ok(reply),
                Err(Failed::Timeout) => return Err(late()),
                Err(Failed::Connect(e)) if attempt < CONNECT_ATTEMPTS => {
                    if Instant::now() + pause >= until {
                        return Err(e);
                    }
                    tracing::debug!(error = %e, attempt, "connection failed; trying again");
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                Err(Failed::Connect(e) | Failed::Other(e)) => return Err(e),
            }
        }
        Err(late())
    }

    async fn once(
        &mut self,
        r: &Request<'_>,
        stage: Stage,
        until: Instant,
    ) -> Result<Reply, Failed> {
        let mut headers = HeaderMap::new();
        for (k, v) in &r.headers {
            headers.insert(k.clone(), v.clone());
        }
        let mut req = self
            .client
            .request(r.method.clone(), r.url)
            .headers(headers);
        if let Some(b) = &r.body {
            req = req.body(b.clone());
        }
        self.requests += 1;
        let exchange = async {
            let mut resp = req.send().await.map_err(|e| classify(&e, stage, r))?;
            let status = resp.status().as_u16();
            let too_big = || {
                Failed::Other(DriverError::new(
                    ErrorKind::Protocol,
                    stage,
                    format!(
                        "the answer to {} is larger than {} MiB; refusing to read it",
                        r.what,
                        MAX_BODY >> 20
                    ),
                ))
            };
            if resp.content_length().is_some_and(|n| n > MAX_BODY as u64) {
                return Err(too_big());
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&e, stage, r))? {
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(too_big());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Reply { status, body })
        };
        match tokio::time::timeout_at(until.into(), exchange).await {
            Ok(r) => r,
            Err(_) => Err(Failed::Timeout),
        }
    }
}

/// A failed exchange: `Connect` when nothing was delivered (safe to retry).
enum Failed {
    Connect(DriverError),
    Timeout,
    Other(DriverError),
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

fn classify(e: &reqwest::Error, stage: Stage, r: &Request<'_>) -> Failed {
    if e.is_timeout() {
        return Failed::Timeout;
    }
    let text = chain_text(e);
    let lower = text.to_ascii_lowercase();
    if e.is_connect() {
        let why = if lower.contains("certificate") || lower.contains("tls") {
            return Failed::Other(DriverError::new(
                ErrorKind::Protocol,
                stage,
                format!(
                    "the TLS handshake with {} failed ({}); a private endpoint's CA goes in \
                     AWS_CA_BUNDLE",
                    r.peer,
                    super::model::printable(&text, 200)
                ),
            ));
        } else if lower.contains("refused") {
            "connection refused"
        } else if lower.contains("dns") || lower.contains("resolve") || lower.contains("lookup") {
            "the name does not resolve: check the region and the endpoint"
        } else if lower.contains("unreachable") {
            "no route to the host"
        } else {
            "cannot connect"
        };
        return Failed::Connect(DriverError::new(
            ErrorKind::Unreachable,
            stage,
            format!("cannot reach {} ({why}) for {}", r.peer, r.what),
        ));
    }
    Failed::Other(DriverError::new(
        ErrorKind::Protocol,
        stage,
        format!(
            "the connection to {} failed during {}: {}",
            r.peer,
            r.what,
            super::model::printable(&text, 200)
        ),
    ))
}

/// A header value that is never printed (reqwest's debug output hides it).
pub fn sensitive(bytes: &[u8]) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_bytes(bytes).ok()?;
    v.set_sensitive(true);
    Some(v)
}
