//! HTTP for the AWS driver, on the shared HTTP layer ([`crate::http`]):
//! one client per driver (connections and TLS sessions reused within an
//! action), a deadline on every request, bounded bodies, transport
//! failures classified into [`ErrorKind`]s, the signed headers' session
//! token scrubbed from every text an endpoint sends back.
//!
//! TLS trusts the system store (or only `AWS_CA_BUNDLE`, as the SDKs do),
//! read only when an https endpoint is used. Redirects are not followed and
//! proxies from the environment are not used: a signed request goes to the
//! endpoint named, and nowhere else.

use crate::engine::error::{DriverError, Stage};
use crate::http::Setup;
use crate::tls::TlsTrust;
use reqwest::header::{HeaderName, HeaderValue};
use reqwest::Method;
use std::time::{Duration, Instant};

/// Largest answer read.
pub const MAX_BODY: usize = 8 << 20;

/// What a request answered.
pub type Reply = crate::http::Reply;

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
    client: crate::http::Client,
}

/// Why the client could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// `AWS_CA_BUNDLE` cannot be read or holds no certificate.
    #[error("cannot read AWS_CA_BUNDLE {path}: {why}")]
    CaBundle { path: String, why: String },
    /// rustls or reqwest refused the set-up (the text says so).
    #[error("{0}")]
    Setup(String),
}

fn anchors(
    ca_bundle: Option<&str>,
) -> Result<Option<(Vec<rustls::pki_types::CertificateDer<'static>>, String)>, ClientError> {
    use rustls::pki_types::pem::PemObject;
    let Some(path) = ca_bundle else {
        return Ok(None);
    };
    let bad = |why: String| ClientError::CaBundle {
        path: path.to_string(),
        why,
    };
    let certs = rustls::pki_types::CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    let mut probe = rustls::RootCertStore::empty();
    if probe.add_parsable_certificates(certs.clone()).0 == 0 {
        return Err(bad("no usable PEM certificate in it".into()));
    }
    Ok(Some((certs, format!("AWS_CA_BUNDLE {path}"))))
}

impl Http {
    /// A client; `tls` reads the trust store (only needed for https).
    pub fn new(tls: bool, trust: &TlsTrust, ca_bundle: Option<&str>) -> Result<Http, ClientError> {
        let setup = match tls {
            true => Setup {
                trust: Some(trust.clone()),
                anchors: anchors(ca_bundle)?,
                tls_hint: Some("a private endpoint's CA goes in AWS_CA_BUNDLE"),
                ..Setup::new("EC2")
            },
            false => Setup {
                trust: None,
                ..Setup::new("EC2")
            },
        };
        let client = crate::http::Client::new(setup).map_err(|e| ClientError::Setup(e.message))?;
        Ok(Http { client })
    }

    /// Remembers a credential a body carries, so that no answer's text
    /// prints it.
    pub fn remember(&self, secret: &[u8]) {
        self.client.scrub().remember(secret);
    }

    /// Requests sent.
    pub fn requests(&self) -> u32 {
        self.client.requests
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
        let mut req = crate::http::Request::new(r.method.clone(), r.url, r.what, stage)
            .peer(r.peer)
            .within(limit, deadline);
        req.headers = r.headers.clone();
        req.body = r.body.clone();
        req.max_body = MAX_BODY;
        self.client
            .send(&req)
            .await
            .map_err(crate::http::Failed::into_error)
    }
}

/// A header value that is never printed (reqwest's debug output hides it).
pub fn sensitive(bytes: &[u8]) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_bytes(bytes).ok()?;
    v.set_sensitive(true);
    Some(v)
}
