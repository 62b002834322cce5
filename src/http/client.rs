//! One HTTP(S) client per driver (connections and TLS sessions reused
//! within an action) and one request loop for every REST platform.
//!
//! A request is sent once. A connection that cannot be made is tried
//! again briefly within the bound (nothing was delivered); anything after
//! the request may have left is never sent again here: a missing or
//! broken answer is [`Failed::Silent`], and the caller decides (a read may
//! be repeated, a power request is read back, never re-sent blindly).
//! Every request is bounded by its own limit and the action's deadline,
//! every body by a cap (checked against `Content-Length` first, then while
//! reading). Redirects are not followed: a credential goes to the URL
//! named and nowhere else. TLS is the shared trust ([`crate::tls`]), with
//! the presented certificate recorded; a refused certificate is explained
//! by [`crate::tls::explain`] and the platform's own hint.

use super::proxy::{reqwest_proxies, Proxy, Resolved};
use super::scrub::Scrub;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::tls::{ClientAuth, SeenCert, TlsTrust};
use preopen::Opening;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::Method;
use rustls::pki_types::CertificateDer;
use std::time::{Duration, Instant};

/// The default cap of an answer's body.
pub const MAX_BODY: usize = 8 << 20;
/// Attempts of a request whose connection cannot be made.
const CONNECT_ATTEMPTS: u32 = 3;
/// The first pause between two connection attempts (doubled each time).
const CONNECT_PAUSE: Duration = Duration::from_millis(100);

/// How a client is made.
pub struct Setup<'a> {
    /// Who answers, as messages name it (`the API server`, `vCenter`).
    pub device: &'a str,
    /// The certificate trust; `None`: plain HTTP only (an `https` request
    /// is refused at the handshake).
    pub trust: Option<TlsTrust>,
    /// A platform's own trust anchors (a kubeconfig's cluster CA, a CA
    /// bundle variable), used when the trust names no `--ca-cert`.
    pub anchors: Option<(Vec<CertificateDer<'static>>, String)>,
    /// A client certificate.
    pub client_auth: Option<ClientAuth>,
    /// Added to the explanation of a refused certificate (where this
    /// platform's CA comes from).
    pub tls_hint: Option<&'a str>,
    /// The proxy choice.
    pub proxy: Proxy,
    /// The environment as the platform sees it (for [`Proxy::Env`]).
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Setup<'a> {
    /// A client for `device` verified against the system trust store,
    /// direct, with the process environment.
    pub fn new(device: &'a str) -> Setup<'a> {
        Setup {
            device,
            trust: Some(TlsTrust::default()),
            anchors: None,
            client_auth: None,
            tls_hint: None,
            proxy: Proxy::None,
            env: &process_env,
        }
    }
}

/// The process environment, as [`Setup::env`] reads it.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// One request.
pub struct Request<'a> {
    /// GET, POST, …
    pub method: Method,
    /// The full URL.
    pub url: &'a str,
    /// Its headers; a sensitive value (`HeaderValue::set_sensitive`, as
    /// [`Request::secret_header`] makes) is remembered by the scrub.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// For messages: what is asked (`GET VirtualMachine vm1`).
    pub what: &'a str,
    /// For messages: who is asked, when not the client's device.
    pub peer: Option<&'a str>,
    /// Where a failure happens.
    pub stage: Stage,
    /// This request's own bound.
    pub limit: Duration,
    /// The action's deadline.
    pub deadline: Option<Instant>,
    /// The largest body read.
    pub max_body: usize,
}

impl<'a> Request<'a> {
    /// A request without headers or body, bounded by 10 s.
    pub fn new(method: Method, url: &'a str, what: &'a str, stage: Stage) -> Request<'a> {
        Request {
            method,
            url,
            headers: Vec::new(),
            body: None,
            what,
            peer: None,
            stage,
            limit: Duration::from_secs(10),
            deadline: None,
            max_body: MAX_BODY,
        }
    }

    /// Adds a header (an invalid value is dropped: callers build values
    /// from their own text).
    pub fn header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((name, v));
        }
        self
    }

    /// Adds a header whose value is a credential: never printed, and
    /// scrubbed from every answer's text. `None` when the bytes cannot be
    /// a header value.
    pub fn secret_header(mut self, name: HeaderName, value: &[u8]) -> Option<Self> {
        self.add_secret(name, value).then_some(self)
    }

    /// [`Request::secret_header`] in place; false (and nothing added) when
    /// the bytes cannot be a header value.
    pub fn add_secret(&mut self, name: HeaderName, value: &[u8]) -> bool {
        match HeaderValue::from_bytes(value) {
            Ok(mut v) => {
                v.set_sensitive(true);
                self.headers.push((name, v));
                true
            }
            Err(_) => false,
        }
    }

    /// A JSON body (with its content type).
    pub fn json(mut self, body: &serde_json::Value) -> Self {
        self.headers.push((
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ));
        self.body = Some(body.to_string().into_bytes());
        self
    }

    /// A body of this content type.
    pub fn body(mut self, content_type: &'static str, body: Vec<u8>) -> Self {
        self.headers.push((
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static(content_type),
        ));
        self.body = Some(body);
        self
    }

    /// An `application/x-www-form-urlencoded` body of these pairs (an
    /// OAuth token request). A credential among them must also be
    /// `remember`ed by the client's scrub: the body is not a header.
    pub fn form(self, pairs: &[(&str, &str)]) -> Self {
        let body = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.body("application/x-www-form-urlencoded", body.into_bytes())
    }

    /// Bounded by `limit`, and by `deadline` when one is given.
    pub fn within(mut self, limit: Duration, deadline: Option<Instant>) -> Self {
        self.limit = limit;
        self.deadline = deadline;
        self
    }

    /// Names who is asked, when not the client's device.
    pub fn peer(mut self, peer: &'a str) -> Self {
        self.peer = Some(peer);
        self
    }

    /// When the request must have its answer.
    pub fn until(&self, started: Instant) -> Instant {
        let own = started + self.limit;
        self.deadline.map_or(own, |d| d.min(own))
    }
}

/// What a request answered.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The answer's headers.
    pub headers: HeaderMap,
    /// The body, at most the request's cap.
    pub body: Vec<u8>,
    /// The status line's reason phrase when the server wrote its own
    /// (Proxmox VE words its errors there: `500 VM 100 not running`);
    /// raw: print it only through [`Reply::reason`].
    pub reason_phrase: Option<String>,
    scrub: Scrub,
}

impl Reply {
    /// A reply as a test or a platform's own transport makes one.
    pub fn new(status: u16, headers: HeaderMap, body: Vec<u8>, scrub: Scrub) -> Reply {
        Reply {
            status,
            headers,
            body,
            reason_phrase: None,
            scrub,
        }
    }

    /// The same reply with the server's own reason phrase.
    pub fn with_reason(mut self, reason: &str) -> Reply {
        self.reason_phrase = Some(reason.to_string());
        self
    }

    /// The server's own reason phrase as one printable line of at most
    /// `max` characters, without any credential the client sent; `None`
    /// when the server wrote the standard one (or none).
    pub fn reason(&self, max: usize) -> Option<String> {
        self.reason_phrase
            .as_deref()
            .map(|r| self.scrub.printable(r, max))
    }

    /// True for 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// A header's value as text (`None`: absent or not text).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// `Retry-After`, in seconds or as an HTTP date.
    pub fn retry_after(&self) -> Option<Duration> {
        super::when::retry_after(self.header("retry-after")?, std::time::SystemTime::now())
    }

    /// The body as one printable line of at most `max` characters,
    /// without any credential the client sent.
    pub fn text(&self, max: usize) -> String {
        self.scrub
            .printable(&String::from_utf8_lossy(&self.body), max)
    }

    /// The whole body as text without any credential the client sent,
    /// for error answers a model reads messages from (scrubbed before
    /// anything cuts it, so no part of a credential survives the cut).
    /// Never for answers a model reads state from: a credential may be
    /// part of an identifier there (a vim25 session key is part of its
    /// container views' morefs).
    pub fn scrubbed(&self) -> String {
        self.scrub.apply(&String::from_utf8_lossy(&self.body))
    }

    /// `s` (text taken from this answer) without the client's credentials,
    /// printable and bounded.
    pub fn clean(&self, s: &str, max: usize) -> String {
        self.scrub.printable(s, max)
    }
}

/// Why a request has no usable answer.
#[derive(Debug)]
pub enum Failed {
    /// No connection was made: nothing was delivered.
    Connect(DriverError),
    /// The TLS handshake was refused: nothing was delivered.
    Tls(DriverError),
    /// Sent (or partly), and no whole answer came in time, or the
    /// connection broke: it may have been carried out.
    Silent(DriverError),
    /// An answer too large to read came: it was received and processed.
    TooLarge(DriverError),
    /// Throttled (429/503) until no time was left ([`super::Patience`]):
    /// refused each time, nothing carried out.
    Throttled(DriverError),
}

impl Failed {
    /// The error inside.
    pub fn into_error(self) -> DriverError {
        match self {
            Failed::Connect(e)
            | Failed::Tls(e)
            | Failed::Silent(e)
            | Failed::TooLarge(e)
            | Failed::Throttled(e) => e,
        }
    }

    /// The error inside, borrowed.
    pub fn error(&self) -> &DriverError {
        match self {
            Failed::Connect(e)
            | Failed::Tls(e)
            | Failed::Silent(e)
            | Failed::TooLarge(e)
            | Failed::Throttled(e) => e,
        }
    }

    /// Whether the request may have reached the device and been carried
    /// out (the at-most-once rule: read back, never send again blindly).
    pub fn maybe_delivered(&self) -> bool {
        matches!(self, Failed::Silent(_) | Failed::TooLarge(_))
    }
}

/// An HTTP(S) client.
pub struct Client {
    inner: reqwest::Client,
    device: String,
    tls_hint: Option<String>,
    seen: SeenCert,
    trust_described: String,
    proxy: Option<Resolved>,
    scrub: Scrub,
    tls: std::sync::Arc<rustls::ClientConfig>,
    /// A connection opened ahead of its first request ([`Client::preopen`]).
    opening: Option<Opening>,
    /// Requests sent (each attempt counts).
    pub requests: u32,
    /// Answers that were throttling (429/503 waited out by
    /// [`Client::send_patiently`]).
    pub throttled: u32,
    /// When the first throttling answer came (the time a run has spent
    /// throttled is counted from it, across requests).
    pub throttled_since: Option<Instant>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("device", &self.device)
            .field("trust", &self.trust_described)
            .field("requests", &self.requests)
            .finish()
    }
}

fn setup_error(why: impl std::fmt::Display) -> DriverError {
    DriverError::new(
        ErrorKind::Config,
        Stage::Authenticate,
        format!("cannot set up the HTTPS client: {why}"),
    )
}

impl Client {
    /// A client as `s` says.
    pub fn new(mut s: Setup<'_>) -> Result<Client, DriverError> {
        let (config, seen, described) = match &s.trust {
            Some(t) => crate::tls::client_config_with(t, s.anchors.take(), s.client_auth.take())
                .map_err(setup_error)?,
            None => (
                crate::tls::refuse_all().map_err(setup_error)?,
                SeenCert::default(),
                "plain http".to_string(),
            ),
        };
        Client::build(&s, config, seen, described)
    }

    /// A client with a TLS configuration the platform made itself from
    /// the shared trust (its own recorder of the presented certificate);
    /// `s.trust`, `s.anchors` and `s.client_auth` are not used.
    pub fn with_tls(s: Setup<'_>, config: rustls::ClientConfig) -> Result<Client, DriverError> {
        Client::build(
            &s,
            config,
            SeenCert::default(),
            "tls as configured".to_string(),
        )
    }

    fn build(
        s: &Setup<'_>,
        config: rustls::ClientConfig,
        seen: SeenCert,
        trust_described: String,
    ) -> Result<Client, DriverError> {
        let scrub = Scrub::default();
        let proxy = s
            .proxy
            .resolve(s.env, &scrub)
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let mut b = reqwest::Client::builder()
            .user_agent(concat!("fencekit/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .http1_only()
            .tcp_nodelay(true)
            .use_preconfigured_tls(config.clone());
        if let Some(r) = &proxy {
            for p in reqwest_proxies(r).map_err(setup_error)? {
                b = b.proxy(p);
            }
        }
        let inner = b.build().map_err(setup_error)?;
        Ok(Client {
            inner,
            device: s.device.to_string(),
            tls_hint: s.tls_hint.map(str::to_string),
            seen,
            trust_described,
            proxy,
            scrub,
            tls: std::sync::Arc::new(config),
            opening: None,
            requests: 0,
            throttled: 0,
            throttled_since: None,
        })
    }

    /// Who answers, as messages name it.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The certificate the server presented last.
    pub fn seen(&self) -> &SeenCert {
        &self.seen
    }

    /// The trust used, for the timeline (`tls verified against …`).
    pub fn trust_described(&self) -> &str {
        &self.trust_described
    }

    /// The proxy used, for the timeline; `None`: direct.
    pub fn proxy_described(&self) -> Option<String> {
        self.proxy.as_ref().and_then(Resolved::describe)
    }

    /// The scrub of this client's credentials (a platform remembers what
    /// it puts in bodies, and cleans what it prints).
    pub fn scrub(&self) -> &Scrub {
        &self.scrub
    }

    /// Starts opening a connection to `url`'s host (https only) in the
    /// background, bounded by `limit`, for the next request there (while
    /// a token is fetched from another host: `preopen`). One at a
    /// time; a connection that cannot be opened is never an error.
    pub fn preopen(&mut self, url: &str, limit: Duration) {
        let Some(authority) = preopen::authority(url) else {
            return;
        };
        if self
            .opening
            .as_ref()
            .is_some_and(|o| o.authority == authority)
        {
            return;
        }
        self.opening = Opening::start(url, self.tls.clone(), self.proxy.as_ref(), limit);
    }

    /// Sends `r` once (a connection that cannot be made is tried again
    /// within the bound), bounded by `r.limit` and `r.deadline`.
    pub async fn send(&mut self, r: &Request<'_>) -> Result<Reply, Failed> {
        for (_, v) in &r.headers {
            if v.is_sensitive() {
                self.scrub.remember_header(v.as_bytes());
            }
        }
        let started = Instant::now();
        let until = r.until(started);
        let peer = r.peer.unwrap_or(&self.device).to_string();
        let late = |c: &Client| {
            Failed::Silent(c.error(
                ErrorKind::Timeout,
                r.stage,
                format!(
                    "no answer from {peer} to {} within {:.1}s",
                    r.what,
                    started.elapsed().as_secs_f64()
                ),
            ))
        };
        let mut pause = CONNECT_PAUSE;
        for attempt in 1..=CONNECT_ATTEMPTS {
            if Instant::now() >= until {
                return Err(late(self));
            }
            match self.once(r, &peer, until).await {
                Ok(reply) => return Ok(reply),
                Err(None) => return Err(late(self)),
                Err(Some(Failed::Connect(e))) if attempt < CONNECT_ATTEMPTS => {
                    if Instant::now() + pause >= until {
                        return Err(Failed::Connect(e));
                    }
                    tracing::debug!(error = %e, attempt, "connection failed; trying again");
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                Err(Some(f)) => return Err(f),
            }
        }
        Err(late(self))
    }

    /// One attempt; `Err(None)`: the bound passed.
    async fn once(
        &mut self,
        r: &Request<'_>,
        peer: &str,
        until: Instant,
    ) -> Result<Reply, Option<Failed>> {
        let mut headers = HeaderMap::new();
        for (k, v) in &r.headers {
            headers.insert(k.clone(), v.clone());
        }
        let mut req = self.inner.request(r.method.clone(), r.url).headers(headers);
        if let Some(b) = &r.body {
            req = req.body(b.clone());
        } else if r.method == Method::POST || r.method == Method::PUT {
            req = req.header(reqwest::header::CONTENT_LENGTH, "0");
        }
        self.requests += 1;
        if let Some(reply) = self.over_opened(r, peer, until).await {
            return reply;
        }
        let this = &*self;
        let exchange = async {
            let mut resp = req.send().await.map_err(|e| this.classify(&e, r, peer))?;
            let status = resp.status().as_u16();
            let reason_phrase = resp
                .extensions()
                .get::<hyper::ext::ReasonPhrase>()
                .map(|r| String::from_utf8_lossy(r.as_bytes()).into_owned());
            let too_big = || {
                Failed::TooLarge(this.error(
                    ErrorKind::Protocol,
                    r.stage,
                    format!(
                        "the answer of {peer} to {} is larger than {} KiB; refusing to read it",
                        r.what,
                        r.max_body >> 10
                    ),
                ))
            };
            if resp.content_length().is_some_and(|n| n > r.max_body as u64) {
                return Err(too_big());
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(|e| this.classify(&e, r, peer))? {
                if body.len() + chunk.len() > r.max_body {
                    return Err(too_big());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Reply {
                status,
                headers: std::mem::take(resp.headers_mut()),
                body,
                reason_phrase,
                scrub: this.scrub.clone(),
            })
        };
        match tokio::time::timeout_at(until.into(), exchange).await {
            Ok(r) => r.map_err(Some),
            Err(_) => Err(None),
        }
    }

    /// An error whose text passed the scrub.
    pub fn error(&self, kind: ErrorKind, stage: Stage, message: String) -> DriverError {
        DriverError::new(kind, stage, self.scrub.apply(&message))
    }

    fn classify(&self, e: &reqwest::Error, r: &Request<'_>, peer: &str) -> Failed {
        let text = self.scrub.printable(&chain_text(e), 240);
        let lower = text.to_ascii_lowercase();
        if e.is_timeout() {
            return Failed::Silent(self.error(
                ErrorKind::Timeout,
                r.stage,
                format!("no answer from {peer} to {}", r.what),
            ));
        }
        if e.is_connect() {
            if let Some(tls) = crate::tls::find_rustls(e) {
                let mut why = crate::tls::explain(tls, peer);
                // A hint about trust cannot help a key no trust option lifts.
                if let Some(h) = self
                    .tls_hint
                    .as_ref()
                    .filter(|_| crate::tls::key_too_small(tls).is_none())
                {
                    why = format!("{why}; {h}");
                }
                return Failed::Tls(self.error(ErrorKind::Protocol, r.stage, why));
            }
            if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake")
            {
                return Failed::Tls(self.error(
                    ErrorKind::Protocol,
                    r.stage,
                    format!(
                        "the TLS handshake with {peer} failed during {} ({text}){}",
                        r.what,
                        self.tls_hint
                            .as_deref()
                            .map(|h| format!("; {h}"))
                            .unwrap_or_default()
                    ),
                ));
            }
            let via = self
                .proxy
                .as_ref()
                .and_then(Resolved::describe)
                .map(|p| format!(", {p}"))
                .unwrap_or_default();
            let why = if lower.contains("tunnel") || lower.contains("proxy") {
                format!("the proxy refused or failed: {text}")
            } else if lower.contains("refused") {
                "connection refused".to_string()
            } else if lower.contains("dns")
                || lower.contains("resolve")
                || lower.contains("lookup")
                || lower.contains("name or service")
            {
                "the name does not resolve".to_string()
            } else if lower.contains("unreachable") {
                "no route to the host".to_string()
            } else {
                "cannot connect".to_string()
            };
            return Failed::Connect(self.error(
                ErrorKind::Unreachable,
                r.stage,
                format!("cannot reach {peer} ({why}{via}) for {}", r.what),
            ));
        }
        // The request may have left: the answer broke off or never came.
        Failed::Silent(self.error(
            ErrorKind::Timeout,
            r.stage,
            format!("the connection to {peer} broke during {}: {text}", r.what),
        ))
    }
}

/// `s` percent-encoded for a form body: unreserved characters as they are,
/// every other byte as `%XX` (a space too, never `+`).
pub fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// An error and its causes, each once.
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

mod preopen;
#[cfg(test)]
mod tests;
