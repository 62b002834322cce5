//! The engine's API on the shared HTTP layer: `Version: 4`, XML both ways,
//! the `Filter` header, Basic authentication, and, when asked, the
//! engine's session (`Prefer: persistent-auth` answered with a `JSESSIONID`
//! cookie, sent instead of the password afterwards; a refused session is
//! replaced once by Basic authentication: a 401 carried nothing out).
//! The session lives as long as the process; it is never written to a file.

use super::config::OvirtConfig;
use super::model;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Patience, Reply, Request, Setup};
use crate::platform::lost::Lost;
use crate::secret::Secret;
use base64::Engine;
use reqwest::header::{HeaderName, AUTHORIZATION, COOKIE};
use reqwest::Method;
use std::time::{Duration, Instant};

/// The largest answer read (a list of a few thousand VMs).
pub const MAX_BODY: usize = 8 << 20;
/// How messages name the device.
pub const DEVICE: &str = "the oVirt engine";

/// The engine's API for one user.
pub struct Client {
    http: crate::http::Client,
    base: String,
    user: String,
    basic: Secret,
    filter: bool,
    cookies: bool,
    session: Option<Secret>,
    timeout: Duration,
}

impl Client {
    /// A client for `cfg` as `user` with `password`.
    pub fn new(
        cfg: &OvirtConfig,
        user: &str,
        password: Secret,
        timeout: Duration,
    ) -> Result<Client, DriverError> {
        let http = crate::http::Client::new(Setup {
            trust: cfg.tls.clone(),
            tls_hint: Some(
                "the engine's CA is served at \
                 /ovirt-engine/services/pki-resource?resource=ca-certificate&format=X509-PEM-CA: \
                 give it with --ca-cert (or pin the engine's certificate with --ssl-fingerprint)",
            ),
            ..Setup::new(DEVICE)
        })?;
        http.scrub().remember(password.expose());
        let mut pair = format!("{user}:").into_bytes();
        pair.extend_from_slice(password.expose());
        let mut basic = b"Basic ".to_vec();
        basic.extend_from_slice(
            base64::engine::general_purpose::STANDARD
                .encode(&pair)
                .as_bytes(),
        );
        zeroize::Zeroize::zeroize(&mut pair);
        Ok(Client {
            http,
            base: cfg.api_url(),
            user: user.to_string(),
            basic: Secret::new(basic),
            filter: cfg.filter,
            cookies: cfg.cookies,
            session: None,
            timeout,
        })
    }

    /// Requests sent.
    pub fn requests(&self) -> u32 {
        self.http.requests
    }

    /// Throttled answers waited out.
    pub fn throttled(&self) -> u32 {
        self.http.throttled
    }

    /// Whether a session cookie is held.
    pub fn has_session(&self) -> bool {
        self.session.is_some()
    }

    fn err(&self, kind: ErrorKind, stage: Stage, message: String) -> DriverError {
        self.http.error(kind, stage, message)
    }

    /// The error an answer other than 2xx means.
    pub fn status_error(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let said = match model::fault(&reply.body) {
            Some(f) => format!("HTTP {}: {}", reply.status, reply.clean(&f, 300)),
            None => format!("HTTP {}", reply.status),
        };
        let user = model::printable(&self.user, 80);
        let (kind, text) = match reply.status {
            401 => (
                ErrorKind::PasswordInvalid,
                format!("the engine refused the user '{user}' or its password ({said})"),
            ),
            403 => (
                ErrorKind::PrivilegeNotObtained,
                format!(
                    "the user '{user}' may not {what} ({said}): a user without an \
                     administrative role needs the Filter header (on unless --disable-http-filter) \
                     and a role with the VM's power permissions (UserVmManager)"
                ),
            ),
            404 => (
                ErrorKind::DeviceError,
                format!(
                    "{what}: the engine has no such object (a VM deleted, a job purged) ({said})"
                ),
            ),
            409 => (
                ErrorKind::NotInPresentState,
                format!("the engine refused to {what} ({said})"),
            ),
            _ => (
                ErrorKind::DeviceError,
                format!("the engine refused to {what} ({said})"),
            ),
        };
        self.err(kind, stage, text)
    }

    fn request<'a>(
        &self,
        method: &Method,
        url: &'a str,
        what: &'a str,
        stage: Stage,
        deadline: Instant,
    ) -> Request<'a> {
        let mut req = Request::new(method.clone(), url, what, stage)
            .header(reqwest::header::ACCEPT, "application/xml")
            .header(HeaderName::from_static("version"), "4")
            .header(
                HeaderName::from_static("filter"),
                if self.filter { "true" } else { "false" },
            )
            .within(self.timeout, Some(deadline));
        req.max_body = MAX_BODY;
        if self.cookies {
            req = req.header(HeaderName::from_static("prefer"), "persistent-auth");
        }
        if *method == Method::POST {
            req = req.body("application/xml", b"<action/>".to_vec());
        }
        match &self.session {
            Some(c) => {
                req.add_secret(COOKIE, c.expose());
            }
            None => {
                req.add_secret(AUTHORIZATION, self.basic.expose());
            }
        }
        req
    }

    /// Sends one request; a refused session is replaced once by Basic.
    pub async fn call(
        &mut self,
        method: Method,
        path: &str,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Reply, Lost> {
        let url = format!("{}{path}", self.base);
        loop {
            let req = self.request(&method, &url, what, stage, deadline);
            let reply = self.http.send_patiently(&req, &Patience::THROTTLE).await?;
            if reply.status == 401 && self.session.is_some() {
                tracing::debug!("the engine's session was refused (expired?): Basic again");
                self.session = None;
                continue;
            }
            if self.cookies && self.session.is_none() && reply.ok() {
                if let Some(c) = reply.header("set-cookie").and_then(session_cookie) {
                    self.http.scrub().remember(c.as_bytes());
                    self.session = Some(Secret::from_str_value(&c));
                }
            }
            return Ok(reply);
        }
    }

    /// A GET whose answer must be 2xx: its body.
    pub async fn get(
        &mut self,
        path: &str,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Vec<u8>, DriverError> {
        let reply = self
            .call(Method::GET, path, what, stage, deadline)
            .await
            .map_err(Lost::into_error)?;
        match reply.ok() {
            true => Ok(reply.body),
            false => Err(self.status_error(&reply, what, stage)),
        }
    }

    /// The certificate the engine presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.seen().fingerprint()
    }

    /// An answer that does not parse.
    pub fn bad_answer(&self, what: &str, stage: Stage, why: String) -> DriverError {
        self.err(ErrorKind::Protocol, stage, format!("{what}: {why}"))
    }
}

/// `JSESSIONID=...` out of a Set-Cookie value.
fn session_cookie(v: &str) -> Option<String> {
    let first = v.split(';').next()?.trim();
    let (k, val) = first.split_once('=')?;
    (k.trim() == "JSESSIONID" && !val.is_empty() && val.is_ascii())
        .then(|| format!("JSESSIONID={}", val.trim()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_session_cookie_is_read_from_set_cookie() {
        assert_eq!(
            super::session_cookie("JSESSIONID=abc; Path=/ovirt-engine/api; Secure").as_deref(),
            Some("JSESSIONID=abc")
        );
        assert_eq!(super::session_cookie("other=1"), None);
    }
}
