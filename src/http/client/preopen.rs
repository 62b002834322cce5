//! A connection opened ahead of its first request.
//!
//! A cloud's API key is exchanged for a token at one host (IBM Cloud IAM,
//! Microsoft Entra ID, Google's token endpoint) and the token is used at
//! another (the compute API). Opened one after the other, the second
//! host's TCP connection, proxy tunnel and TLS handshake wait for the
//! token. [`Opening::start`] opens them while the token is fetched: one
//! task in the background, bounded, with the client's own TLS
//! configuration (the same trust, the same record of the certificate
//! presented). The client's next request to that host goes over it, and
//! the ones after while it stays open.
//!
//! It is an optimisation and never a second way to fail: a connection
//! that cannot be opened (or is closed when its request comes) is
//! dropped, and the request goes the usual way, as if nothing had been
//! tried. Nothing is sent on it before the request itself, and a request
//! it did not take ([`hyper`]'s `try_send_request` hands it back) was
//! not sent. Only the plain routes are opened ahead: direct, or through
//! an HTTP proxy that names no credentials while no `NO_PROXY` applies;
//! anything else is left to the usual way.

use super::message::{Failed, Reply, Request, USER_AGENT};
use crate::http::proxy::Resolved;
use crate::http::scrub::Scrub;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use reqwest::Method;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// The sending half of a connection opened ahead.
pub(super) type Sender = SendRequest<Full<Bytes>>;

/// Largest proxy answer to a `CONNECT` read.
const MAX_CONNECT_ANSWER: usize = 8 << 10;

/// Where a connection goes: `host:port` of an `https` URL.
pub(super) fn authority(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    if u.scheme() != "https" {
        return None;
    }
    Some(format!("{}:{}", u.host_str()?, u.port_or_known_default()?))
}

/// A connection being opened, or opened, to one authority.
pub(super) struct Opening {
    /// `host:port`.
    pub(super) authority: String,
    state: State,
}

enum State {
    Opening(JoinHandle<Result<Sender, String>>),
    Open(Sender),
}

impl Drop for Opening {
    fn drop(&mut self) {
        if let State::Opening(task) = &self.state {
            task.abort();
        }
    }
}

impl Opening {
    /// Starts opening a connection for `url`'s host, bounded by `limit`;
    /// `None` when the route is not a plain one (or `url` is not https).
    pub(super) fn start(
        url: &str,
        tls: Arc<rustls::ClientConfig>,
        proxy: Option<&Resolved>,
        limit: Duration,
    ) -> Option<Opening> {
        let u = reqwest::Url::parse(url).ok()?;
        let authority = authority(url)?;
        // An IPv6 literal without its brackets.
        let host = u
            .host_str()?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = u.port_or_known_default()?;
        let via = match proxy {
            None => None,
            Some(r) => {
                let (p, _) = r.https.as_ref()?;
                let p = reqwest::Url::parse(p).ok()?;
                if r.no_proxy.is_some() || !p.username().is_empty() || p.password().is_some() {
                    return None;
                }
                Some((p.host_str()?.to_string(), p.port_or_known_default()?))
            }
        };
        let name = rustls::pki_types::ServerName::try_from(host.clone()).ok()?;
        let target = authority.clone();
        let task = tokio::spawn(async move {
            let open = async {
                let tcp = match &via {
                    Some((ph, pp)) => tunnel(ph, *pp, &target).await?,
                    None => {
                        let s = TcpStream::connect((host.as_str(), port))
                            .await
                            .map_err(|e| e.to_string())?;
                        s.set_nodelay(true).map_err(|e| e.to_string())?;
                        s
                    }
                };
                let tls = tokio_rustls::TlsConnector::from(tls)
                    .connect(name, tcp)
                    .await
                    .map_err(|e| e.to_string())?;
                let (sender, conn) =
                    hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                        .await
                        .map_err(|e| e.to_string())?;
                tokio::spawn(async move {
                    let _ = conn.await;
                });
                Ok(sender)
            };
            tokio::time::timeout(limit, open)
                .await
                .map_err(|_| format!("not open within {limit:?}"))?
        });
        Some(Opening {
            authority,
            state: State::Opening(task),
        })
    }

    /// The connection, ready for a request; `None` when it could not be
    /// opened or has closed since.
    pub(super) async fn ready(&mut self) -> Option<&mut Sender> {
        if let State::Opening(task) = &mut self.state {
            match task.await {
                Ok(Ok(s)) => self.state = State::Open(s),
                Ok(Err(why)) => {
                    tracing::debug!(authority = %self.authority, %why, "not opened ahead");
                    return None;
                }
                Err(_) => return None,
            }
        }
        let State::Open(s) = &mut self.state else {
            return None;
        };
        s.ready().await.ok()?;
        Some(s)
    }
}

impl Opening {
    /// `r` over this connection, if it is open: `None` when the request
    /// was not sent on it (the usual way takes it, as if nothing had been
    /// tried). Errors name `peer`, without what `scrub` knows.
    pub(super) async fn carry(
        &mut self,
        r: &Request<'_>,
        peer: &str,
        scrub: &Scrub,
    ) -> Option<Result<Reply, Failed>> {
        let req = request(r)?;
        let sender = self.ready().await?;
        let broke = |e: &dyn std::fmt::Display| r.broke(peer, e, scrub);
        let resp = match sender.try_send_request(req).await {
            Ok(resp) => resp,
            Err(mut e) => {
                // Handed back: it was not sent.
                return match e.take_message() {
                    Some(_) => None,
                    None => Some(Err(broke(e.error()))),
                };
            }
        };
        let (parts, mut incoming) = resp.into_parts();
        let too_big = || r.too_large(peer, scrub);
        let announced = parts
            .headers
            .get(reqwest::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if announced.is_some_and(|n| n > r.max_body as u64) {
            return Some(Err(too_big()));
        }
        let mut body = Vec::new();
        while let Some(frame) = http_body_util::BodyExt::frame(&mut incoming).await {
            let frame = match frame {
                Ok(f) => f,
                Err(e) => return Some(Err(broke(&e))),
            };
            if let Ok(chunk) = frame.into_data() {
                if body.len() + chunk.len() > r.max_body {
                    return Some(Err(too_big()));
                }
                body.extend_from_slice(&chunk);
            }
        }
        let mut reply = Reply::new(parts.status.as_u16(), parts.headers, body, scrub.clone());
        if let Some(reason) = parts.extensions.get::<hyper::ext::ReasonPhrase>() {
            reply = reply.with_reason(&String::from_utf8_lossy(reason.as_bytes()));
        }
        Some(Ok(reply))
    }
}

/// `r` as hyper sends it on a connection of its own: origin form, the
/// `Host`, the client's `User-Agent`, and what reqwest would add (`Accept:
/// */*`, a zero `Content-Length` on an empty POST or PUT).
fn request(r: &Request<'_>) -> Option<hyper::Request<Full<Bytes>>> {
    let u = reqwest::Url::parse(r.url).ok()?;
    let host = match u.port() {
        Some(p) => format!("{}:{p}", u.host_str()?),
        None => u.host_str()?.to_string(),
    };
    let path = match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_string(),
    };
    let mut b = hyper::Request::builder()
        .method(r.method.clone())
        .uri(path)
        .header(reqwest::header::HOST, host)
        .header(reqwest::header::USER_AGENT, USER_AGENT);
    if !r.headers.iter().any(|(k, _)| k == reqwest::header::ACCEPT) {
        b = b.header(reqwest::header::ACCEPT, "*/*");
    }
    for (k, v) in &r.headers {
        b = b.header(k, v);
    }
    let body = r.body.clone().unwrap_or_default();
    if body.is_empty() && (r.method == Method::POST || r.method == Method::PUT) {
        b = b.header(reqwest::header::CONTENT_LENGTH, "0");
    }
    b.body(Full::new(body.into())).ok()
}

/// A TCP connection to `authority` through the HTTP proxy at
/// `host:port` (`CONNECT`).
async fn tunnel(host: &str, port: u16, authority: &str) -> Result<TcpStream, String> {
    let mut s = TcpStream::connect((host, port))
        .await
        .map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    let ask = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
    s.write_all(ask.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    // The proxy's answer ends at a blank line, and the server speaks only
    // after the client's hello: any byte after it is not a tunnel to use.
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    let end = loop {
        if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 || head.len() + n > MAX_CONNECT_ANSWER {
            return Err("the proxy did not answer CONNECT".into());
        }
        head.extend_from_slice(&chunk[..n]);
    };
    if end != head.len() {
        return Err("the proxy sent more than its answer to CONNECT".into());
    }
    let line = head.split(|&c| c == b'\r').next().unwrap_or_default();
    let code = std::str::from_utf8(line)
        .ok()
        .and_then(|l| l.split_whitespace().nth(1));
    match code {
        Some(c) if c.starts_with('2') && c.len() == 3 => Ok(s),
        _ => Err("the proxy refused CONNECT".into()),
    }
}
