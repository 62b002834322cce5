//! One request, what it answered, and why a request has no usable
//! answer: the client's messages, apart from the client (so that the
//! connection opened ahead, `preopen`, speaks them too).

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::scrub::Scrub;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::Method;
use std::time::{Duration, Instant};

/// The default cap of an answer's body.
pub const MAX_BODY: usize = 8 << 20;

/// The client's `User-Agent`.
pub const USER_AGENT: &str = concat!("fencekit/", env!("CARGO_PKG_VERSION"));

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

    /// Its answer was larger than its cap: received, and not read.
    pub(super) fn too_large(&self, peer: &str, scrub: &Scrub) -> Failed {
        Failed::TooLarge(DriverError::new(
            ErrorKind::Protocol,
            self.stage,
            scrub.apply(&format!(
                "the answer of {peer} to {} is larger than {} KiB; refusing to read it",
                self.what,
                self.max_body >> 10
            )),
        ))
    }

    /// The connection broke after it may have left: `why`, scrubbed.
    pub(super) fn broke(&self, peer: &str, why: &dyn std::fmt::Display, scrub: &Scrub) -> Failed {
        Failed::Silent(DriverError::new(
            ErrorKind::Timeout,
            self.stage,
            scrub.apply(&format!(
                "the connection to {peer} broke during {}: {why}",
                self.what
            )),
        ))
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
    pub(super) scrub: Scrub,
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
        crate::http::when::retry_after(self.header("retry-after")?, std::time::SystemTime::now())
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
