//! A Prism Central v4 client on the shared HTTP layer ([`crate::http`]):
//! HTTP Basic on every request (as upstream's agent authenticates), the
//! header kept as a secret and scrubbed from what is printed, a deadline on
//! every request, bounded answers.
//!
//! Rate limits: a 429 refuses a request before carrying it out, so it is
//! waited out within the deadline for every request, power actions
//! included ([`Patience::THROTTLE`]); a 503 only for reads
//! ([`Patience::THROTTLE_OR_BUSY`]: a gateway's 503 may come after a power
//! action reached the service). A request whose answer never came is never
//! sent again here ([`Posted::Silent`]): the driver reads back.

use super::model;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Failed, Patience, Reply, Request, Setup};
use crate::secret::Secret;
use base64::Engine as _;
use reqwest::header::{HeaderName, AUTHORIZATION, IF_MATCH};
use reqwest::Method;
use std::time::{Duration, Instant};

/// Largest answer read (a page of 100 VMs is about 200 KB).
pub const MAX_BODY: usize = 8 << 20;
/// Who answers, as messages name it.
pub const DEVICE: &str = "Prism Central";
const REQUEST_ID: HeaderName = HeaderName::from_static("ntnx-request-id");

/// What became of a power action.
#[derive(Debug)]
pub enum Posted {
    /// Accepted: the task that carries it out.
    Task(String),
    /// Refused (the answer), nothing carried out.
    Refused(Reply),
    /// No answer: it may have been carried out. Never send it again blindly.
    Silent(DriverError),
}

/// A client of one Prism Central.
pub struct Client {
    http: crate::http::Client,
    base: String,
    user: String,
    basic: Secret,
    timeout: Duration,
}

impl Client {
    /// A client for `base` (`https://PRISM:PORT/api`) as `user`.
    pub fn new(
        base: &str,
        tls: &crate::tls::TlsTrust,
        user: &str,
        password: &Secret,
        timeout: Duration,
    ) -> Result<Client, DriverError> {
        let http = crate::http::Client::new(Setup {
            trust: Some(tls.clone()),
            tls_hint: Some(
                "Prism Central presents its own certificate unless one was installed (Settings, \
                 SSL Certificate): give its CA (or the certificate) with --ca-cert, or pin it \
                 with --ssl-fingerprint",
            ),
            ..Setup::new(DEVICE)
        })?;
        http.scrub().remember(password.expose());
        let mut raw = zeroize::Zeroizing::new(user.as_bytes().to_vec());
        raw.push(b':');
        raw.extend_from_slice(password.expose());
        let basic = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(&*raw)
        );
        Ok(Client {
            http,
            base: base.to_string(),
            user: user.to_string(),
            basic: Secret::from_str_value(&basic),
            timeout,
        })
    }

    /// Requests sent (each attempt counts).
    pub fn requests(&self) -> u32 {
        self.http.requests
    }

    /// Throttling answers waited out.
    pub fn throttled(&self) -> u32 {
        self.http.throttled
    }

    /// The certificate Prism Central presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.seen().fingerprint()
    }

    fn request<'a>(
        &self,
        method: Method,
        url: &'a str,
        what: &'a str,
        stage: Stage,
        d: Instant,
    ) -> Request<'a> {
        let mut req = Request::new(method, url, what, stage)
            .header(reqwest::header::ACCEPT, "application/json")
            .within(self.timeout, Some(d));
        req.max_body = MAX_BODY;
        req.add_secret(AUTHORIZATION, self.basic.expose());
        req
    }

    /// A read (`path` below `/api`, its query already encoded): the reply
    /// when it is 2xx, else the error.
    pub async fn get(
        &mut self,
        path: &str,
        what: &str,
        stage: Stage,
        d: Instant,
    ) -> Result<Reply, DriverError> {
        let url = format!("{}{path}", self.base);
        let req = self.request(Method::GET, &url, what, stage, d);
        let reply = self
            .http
            .send_patiently(&req, &Patience::THROTTLE_OR_BUSY)
            .await
            .map_err(Failed::into_error)?;
        match reply.ok() {
            true => Ok(reply),
            false => Err(self.status_error(&reply, what, stage)),
        }
    }

    /// Sends the power action `action` to VM `ext` once, `etag` its version.
    pub async fn action(
        &mut self,
        ext: &str,
        action: &str,
        etag: &str,
        request_id: &str,
        d: Instant,
    ) -> Result<Posted, DriverError> {
        let url = format!(
            "{}/vmm/v4.0/ahv/config/vms/{ext}/$actions/{action}",
            self.base
        );
        let what = format!("{action} VM {ext}");
        let req = self
            .request(Method::POST, &url, &what, Stage::Command, d)
            .header(IF_MATCH, etag)
            .header(REQUEST_ID, request_id);
        match self.http.send_patiently(&req, &Patience::THROTTLE).await {
            Ok(r) if r.status == 202 || r.ok() => model::task_ref(&r.body)
                .map(Posted::Task)
                .map_err(|m| self.bad_answer(&what, Stage::Command, m)),
            Ok(r) => Ok(Posted::Refused(r)),
            Err(f) if f.maybe_delivered() => Ok(Posted::Silent(f.into_error())),
            Err(f) => Err(f.into_error()),
        }
    }

    /// A protocol error about `what`.
    pub fn bad_answer(&self, what: &str, stage: Stage, why: String) -> DriverError {
        self.http
            .error(ErrorKind::Protocol, stage, format!("{what}: {why}"))
    }

    /// The error for an answer that is not what `what` needed.
    pub fn status_error(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let said = match model::error_text(&reply.scrubbed()) {
            Some(t) => format!("HTTP {}, {t}", reply.status),
            None => format!("HTTP {}", reply.status),
        };
        let user = model::printable(&self.user, 80);
        let (kind, text) = match reply.status {
            401 => (
                ErrorKind::PasswordInvalid,
                format!("Prism Central refused the user '{user}' or its password ({said})"),
            ),
            403 => (
                ErrorKind::PrivilegeNotObtained,
                format!(
                    "the user '{user}' may not {what} ({said}): its role needs to view VMs and \
                     hosts and to power VMs on and off (Virtual Machine Power State operations)"
                ),
            ),
            404 => (
                ErrorKind::DeviceError,
                format!("{what}: not found ({said})"),
            ),
            409 | 412 => (
                ErrorKind::Busy,
                format!("Prism Central declined {what}: the VM changed or is busy ({said})"),
            ),
            429 | 503 => (
                ErrorKind::Busy,
                format!("Prism Central is busy with {what} ({said})"),
            ),
            _ => (
                ErrorKind::DeviceError,
                format!("Prism Central refused {what} ({said})"),
            ),
        };
        self.http.error(kind, stage, text)
    }
}
