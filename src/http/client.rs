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
pub use message::{form_encode, Failed, Reply, Request, MAX_BODY, USER_AGENT};
use preopen::Opening;
use reqwest::header::HeaderMap;
use reqwest::Method;
use rustls::pki_types::CertificateDer;
use std::time::{Duration, Instant};

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
            .user_agent(USER_AGENT)
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
            let too_big = || r.too_large(peer, &this.scrub);
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

    /// `r` over the connection opened ahead for its host, if there is one
    /// and it is open; `None`: the usual way.
    async fn over_opened(
        &mut self,
        r: &Request<'_>,
        peer: &str,
        until: Instant,
    ) -> Option<Result<Reply, Option<Failed>>> {
        let mut opening = self.opening.take()?;
        if preopen::authority(r.url).as_deref() != Some(opening.authority.as_str()) {
            self.opening = Some(opening);
            return None;
        }
        let carried = opening.carry(r, peer, &self.scrub);
        let out = match tokio::time::timeout_at(until.into(), carried).await {
            Ok(Some(r)) => Some(r.map_err(Some)),
            Ok(None) => None,
            Err(_) => Some(Err(None)),
        };
        // Kept after a whole answer only; otherwise (not opened, closed,
        // handed back, broken, late) the usual way from now on.
        if matches!(out, Some(Ok(_))) {
            self.opening = Some(opening);
        }
        out
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
        r.broke(peer, &text, &self.scrub)
    }
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

mod message;
mod preopen;
#[cfg(test)]
mod tests;
