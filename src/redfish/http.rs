//! HTTP I/O for the Redfish driver: one reqwest client per action (so
//! keep-alive connections and TLS sessions are reused within it), a deadline
//! on every request, bounded response bodies, and transport failures
//! classified into [`ErrorKind`]s.
//!
//! What the answers mean is decided in [`super::model`]; this module only
//! moves bytes. Redirects are not followed (a credential must not follow a
//! `Location` elsewhere) and proxies from the environment are not used (BMCs
//! sit on management networks; a proxy there is a surprise, not a default).

use super::config::{RedfishConfig, Scheme};
use super::tls::{self, SeenCert};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::secret::Secret;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use reqwest::Method;
use std::time::{Duration, Instant};

/// Largest response body accepted: a hostile or broken BMC cannot make us
/// allocate more than this per request.
pub const MAX_BODY: usize = 1 << 20;
/// Connection attempts per request when the connection itself fails.
const CONNECT_ATTEMPTS: u32 = 3;

/// What a request answered.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The `Location` header, reduced to its path.
    pub location: Option<String>,
    /// The `X-Auth-Token` header (only ever set on a session creation).
    pub token: Option<Secret>,
    /// The body (at most [`MAX_BODY`] bytes).
    pub body: Vec<u8>,
}

impl Reply {
    /// True for 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// How requests authenticate.
enum Auth {
    /// `Authorization: Basic …` on every request but the session creation.
    Basic(HeaderValue),
    /// `X-Auth-Token` from SessionService.
    Token(HeaderValue),
    /// Nothing yet (session mode before the session exists).
    None,
}

/// An HTTP client bound to one BMC.
pub struct Http {
    client: reqwest::Client,
    base: String,
    peer: String,
    auth: Auth,
    timeout: Duration,
    seen: SeenCert,
    trust: String,
    /// Requests sent (for the record and the tests).
    pub requests: u32,
}

fn sensitive(bytes: &[u8]) -> Result<HeaderValue, DriverError> {
    let mut v = HeaderValue::from_bytes(bytes).map_err(|_| {
        DriverError::new(
            ErrorKind::Config,
            Stage::Authenticate,
            "the credentials cannot be carried in an HTTP header",
        )
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// The path of a `Location` or link, whatever host it names: requests only
/// ever go to the configured BMC.
pub fn path_of(uri: &str) -> String {
    let is_scheme = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    };
    let path = match uri.split_once("://") {
        Some((scheme, rest)) if is_scheme(scheme) => match rest.find('/') {
            Some(i) => rest[i..].to_string(),
            None => "/".into(),
        },
        _ => uri.to_string(),
    };
    // The path is appended to the BMC's base URL: one that does not start
    // with '/' could change the host (`@evil.example/x` makes
    // `https://bmc:443@evil.example/x`, credentials included). Found by fuzzing.
    if path.starts_with('/') {
        path
    } else {
        format!("/{path}")
    }
}

impl Http {
    /// A client for `cfg` (builds the TLS configuration; no request yet).
    pub fn new(cfg: &RedfishConfig) -> Result<Http, DriverError> {
        let config_err = |m: String| DriverError::new(ErrorKind::Config, Stage::Authenticate, m);
        let mut builder = reqwest::Client::builder()
            .user_agent(concat!("fencekit/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .http1_only()
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true);
        let (seen, trust) = match cfg.scheme {
            Scheme::Https => {
                let (tls, seen, trust) =
                    tls::client_config(&cfg.tls).map_err(|e| config_err(e.to_string()))?;
                builder = builder.use_preconfigured_tls(tls);
                (seen, trust)
            }
            Scheme::Http => {
                // reqwest builds a TLS configuration even for http URLs and,
                // without one of ours, panics for want of a crypto provider.
                let refuse = tls::refuse_all().map_err(|e| config_err(e.to_string()))?;
                builder = builder.use_preconfigured_tls(refuse);
                (
                    SeenCert::default(),
                    "plain http (no tls: credentials travel in clear text)".to_string(),
                )
            }
        };
        let client = builder
            .build()
            .map_err(|e| config_err(format!("cannot set up the http client: {e}")))?;
        let basic = {
            use base64::Engine;
            let mut raw = zeroize::Zeroizing::new(cfg.username.as_bytes().to_vec());
            raw.push(b':');
            raw.extend_from_slice(cfg.password.expose());
            let enc = zeroize::Zeroizing::new(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(&raw[..])
            ));
            sensitive(enc.as_bytes())?
        };
        Ok(Http {
            client,
            base: cfg.base_url(),
            peer: format!("{}:{}", cfg.host, cfg.port),
            auth: if cfg.session_auth {
                Auth::None
            } else {
                Auth::Basic(basic)
            },
            timeout: cfg.request_timeout,
            seen,
            trust,
            requests: 0,
        })
    }

    /// How the certificate was trusted, and which one the BMC presented.
    pub fn tls_record(&self) -> String {
        match self.seen.fingerprint() {
            Some(fp) => format!(
                "{}, certificate {}",
                self.trust,
                crate::fingerprint::format_hex(&fp)
            ),
            None => self.trust.clone(),
        }
    }

    /// The SHA-256 of the certificate the BMC presented last, trusted or
    /// not (`None` before a handshake got that far, or over plain HTTP).
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.seen.fingerprint()
    }

    /// Switches to token authentication (after a session was created).
    pub fn use_token(&mut self, token: &Secret) -> Result<(), DriverError> {
        self.auth = Auth::Token(sensitive(token.expose())?);
        Ok(())
    }

    /// `host:port`, for messages.
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// Sends one request. `body` is JSON. `with_auth: false` sends no
    /// credentials (service root, session creation). Connection failures are
    /// retried briefly within the deadline (the request was not delivered);
    /// anything else is returned as it came.
    pub async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
        with_auth: bool,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Reply, DriverError> {
        let what = format!("{method} {path}");
        let started = Instant::now();
        let until = {
            let own = started + self.timeout;
            deadline.map_or(own, |d| d.min(own))
        };
        let mut attempt = 0;
        let mut pause = Duration::from_millis(100);
        loop {
            attempt += 1;
            if Instant::now() >= until {
                return Err(DriverError::new(
                    ErrorKind::Timeout,
                    stage,
                    format!(
                        "no answer from {} to {what} within {:.1}s",
                        self.peer,
                        started.elapsed().as_secs_f64()
                    ),
                ));
            }
            let r = self
                .once(method.clone(), path, body, with_auth, &what, stage, until)
                .await;
            match r {
                Err(Failed::Connect(e)) if attempt < CONNECT_ATTEMPTS => {
                    tracing::debug!(error = %e, attempt, "connection failed; retrying");
                    if Instant::now() + pause >= until {
                        return Err(e);
                    }
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                Err(Failed::Connect(e) | Failed::Other(e)) => {
                    if e.kind == ErrorKind::Timeout {
                        return Err(DriverError::new(
                            ErrorKind::Timeout,
                            stage,
                            format!(
                                "no answer from {} to {what} within {:.1}s",
                                self.peer,
                                started.elapsed().as_secs_f64()
                            ),
                        ));
                    }
                    return Err(e);
                }
                Ok(reply) => return Ok(reply),
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn once(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
        with_auth: bool,
        what: &str,
        stage: Stage,
        until: Instant,
    ) -> Result<Reply, Failed> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert("OData-Version", HeaderValue::from_static("4.0"));
        if with_auth {
            match &self.auth {
                Auth::Basic(v) => {
                    headers.insert(AUTHORIZATION, v.clone());
                }
                Auth::Token(v) => {
                    headers.insert("X-Auth-Token", v.clone());
                }
                Auth::None => {}
            }
        }
        let mut req = self
            .client
            .request(method, format!("{}{}", self.base, path))
            .headers(headers);
        if let Some(b) = body {
            req = req
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(b.to_vec());
        }
        self.requests += 1;
        let peer = self.peer.clone();
        let exchange = async {
            let mut resp = req
                .send()
                .await
                .map_err(|e| classify_transport(&e, stage, what, &peer))?;
            let status = resp.status().as_u16();
            let location = resp
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(path_of);
            let token = resp
                .headers()
                .get("X-Auth-Token")
                .map(|v| Secret::new(v.as_bytes().to_vec()));
            let too_big = || {
                Failed::Other(DriverError::new(
                    ErrorKind::Protocol,
                    stage,
                    format!(
                        "the answer to {what} is larger than {} KiB; refusing to read it",
                        MAX_BODY / 1024
                    ),
                ))
            };
            if resp.content_length().is_some_and(|n| n > MAX_BODY as u64) {
                return Err(too_big());
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| classify_transport(&e, stage, what, &peer))?
            {
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(too_big());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Reply {
                status,
                location,
                token,
                body,
            })
        };
        match tokio::time::timeout_at(until.into(), exchange).await {
            Ok(r) => r,
            Err(_) => Err(Failed::Other(DriverError::new(
                ErrorKind::Timeout,
                stage,
                "timed out",
            ))),
        }
    }
}

/// A failed exchange: `Connect` when nothing was delivered (safe to retry).
enum Failed {
    Connect(DriverError),
    Other(DriverError),
}

use crate::tls::find_rustls;

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

fn classify_transport(e: &reqwest::Error, stage: Stage, what: &str, peer: &str) -> Failed {
    if let Some(tls_err) = find_rustls(e) {
        return Failed::Other(DriverError::new(
            ErrorKind::Protocol,
            stage,
            format!("{} ({what} to {peer})", tls::explain(tls_err)),
        ));
    }
    if e.is_timeout() {
        return Failed::Other(DriverError::new(ErrorKind::Timeout, stage, "timed out"));
    }
    let text = chain_text(e);
    if e.is_connect() {
        let lower = text.to_ascii_lowercase();
        let why = if lower.contains("refused") {
            "connection refused"
        } else if lower.contains("dns") || lower.contains("resolve") || lower.contains("lookup") {
            "the name does not resolve"
        } else if lower.contains("unreachable") {
            "no route to the host"
        } else {
            "cannot connect"
        };
        return Failed::Connect(DriverError::new(
            ErrorKind::Unreachable,
            stage,
            format!("cannot reach {peer} ({why}) for {what}"),
        ));
    }
    Failed::Other(DriverError::new(
        ErrorKind::Protocol,
        stage,
        format!(
            "the connection to {peer} failed during {what}: {}",
            super::model::printable(&text, 200)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_keep_only_the_path() {
        assert_eq!(
            path_of("https://evil.example/redfish/v1/T/1"),
            "/redfish/v1/T/1"
        );
        assert_eq!(path_of("/redfish/v1/T/1"), "/redfish/v1/T/1");
        assert_eq!(path_of("http://h"), "/");
    }

    #[test]
    fn links_never_change_the_host() {
        // fuzz/corpus/redfish_json/crash-odata-id-host
        for (link, path) in [
            (
                "@evil.example/redfish/v1/Systems/1",
                "/@evil.example/redfish/v1/Systems/1",
            ),
            ("redfish/v1/Systems/1", "/redfish/v1/Systems/1"),
            (
                "/a?next=http://evil.example/b",
                "/a?next=http://evil.example/b",
            ),
        ] {
            assert_eq!(path_of(link), path);
            let url = reqwest::Url::parse(&format!("https://bmc.example:443{}", path_of(link)))
                .expect("a URL");
            assert_eq!(url.host_str(), Some("bmc.example"), "{link}");
        }
    }
}
