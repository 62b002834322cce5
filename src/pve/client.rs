//! A Proxmox VE API session on the shared HTTP layer ([`crate::http`]):
//! a ticket (`POST /access/ticket`, then the `PVEAuthCookie` cookie and,
//! on writes, the `CSRFPreventionToken` header) or an API token
//! (`Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET`, which needs no
//! CSRF token); every credential kept as a secret and scrubbed from what is
//! printed; a deadline on every request; bounded answers.
//!
//! A 401 to a ticket (expired: tickets last two hours, or revoked) logs in
//! once more and sends the request again: a 401 is answered before
//! anything is carried out. A 429 (a proxy in front of the cluster) is
//! waited out within the deadline ([`Patience::THROTTLE`]), for the same
//! reason. A request whose answer never came is never sent again here
//! ([`Lost::Silent`]): the driver reads back.
//!
//! Proxmox VE words its errors in the status line (`500 VM 100 not
//! running`), which [`crate::http::Reply::reason`] keeps.

use super::config::PveConfig;
use super::model;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Failed, Patience, Reply, Request, Setup};
use crate::platform::lost::Lost;
use crate::secret::Secret;
use reqwest::header::{HeaderName, AUTHORIZATION, COOKIE};
use reqwest::Method;
use std::time::{Duration, Instant};

/// Largest answer read (the resources of a cluster of 5000 guests are
/// about 2 MB).
pub const MAX_BODY: usize = 8 << 20;
/// Who answers, as messages name it.
pub const DEVICE: &str = "Proxmox VE";
const CSRF: HeaderName = HeaderName::from_static("csrfpreventiontoken");

enum Auth {
    /// A ticket from the password (`None` until logged in).
    Ticket {
        password: Secret,
        session: Option<(Secret, Secret)>,
    },
    /// `PVEAPIToken=ID=SECRET`, the whole header value.
    Token(Secret),
}

/// A session with one Proxmox VE cluster (through one node's API).
pub struct Client {
    http: crate::http::Client,
    base: String,
    user: String,
    auth: Auth,
    timeout: Duration,
    /// Tickets obtained.
    pub logins: u32,
}

impl Client {
    /// A client for `cfg`'s API as `user` with `secret` (the password, or
    /// the API token's secret when `user` names a token).
    pub fn new(
        cfg: &PveConfig,
        user: &str,
        secret: Secret,
        timeout: Duration,
    ) -> Result<Client, DriverError> {
        let http = crate::http::Client::new(Setup {
            trust: Some(cfg.tls.clone()),
            tls_hint: Some(
                "a Proxmox VE node presents /etc/pve/local/pve-ssl.pem, signed by the cluster's \
                 CA /etc/pve/pve-root-ca.pem: give that CA with --ca-cert (or pin the node's \
                 certificate with --ssl-fingerprint)",
            ),
            ..Setup::new(DEVICE)
        })?;
        http.scrub().remember(secret.expose());
        let auth = match user.contains('!') {
            true => {
                let mut v = format!("PVEAPIToken={user}=").into_bytes();
                v.extend_from_slice(secret.expose());
                Auth::Token(Secret::new(v))
            }
            false => Auth::Ticket {
                password: secret,
                session: None,
            },
        };
        Ok(Client {
            http,
            base: cfg.api_url(),
            user: user.to_string(),
            auth,
            timeout,
            logins: 0,
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

    /// The certificate the API presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.seen().fingerprint()
    }

    /// Whether an API token (not a ticket) authenticates.
    pub fn uses_token(&self) -> bool {
        matches!(self.auth, Auth::Token(_))
    }

    fn err(&self, kind: ErrorKind, stage: Stage, message: String) -> DriverError {
        self.http.error(kind, stage, message)
    }

    /// Obtains a ticket (nothing to do for an API token).
    pub async fn login(&mut self, deadline: Instant) -> Result<(), DriverError> {
        let Auth::Ticket { password, .. } = &self.auth else {
            return Ok(());
        };
        let st = Stage::Authenticate;
        let url = format!("{}/access/ticket", self.base);
        let pass = String::from_utf8_lossy(password.expose()).into_owned();
        let pass = zeroize::Zeroizing::new(pass);
        let req = Request::new(Method::POST, &url, "the login (access/ticket)", st)
            .form(&[("username", &self.user), ("password", &pass)])
            .within(self.timeout, Some(deadline));
        let reply = self
            .http
            .send_patiently(&req, &Patience::THROTTLE)
            .await
            .map_err(Failed::into_error)?;
        if !reply.ok() {
            return Err(self.status_error(&reply, "log in", st));
        }
        let t = model::ticket(&reply.body)
            .map_err(|m| self.err(ErrorKind::Protocol, st, format!("the login: {m}")))?;
        self.http.scrub().remember(t.ticket.as_bytes());
        self.http.scrub().remember(t.csrf.as_bytes());
        if let Auth::Ticket { session, .. } = &mut self.auth {
            *session = Some((
                Secret::from_str_value(&t.ticket),
                Secret::from_str_value(&t.csrf),
            ));
        }
        self.logins += 1;
        Ok(())
    }

    /// The error for an answer that is not what `what` needed.
    pub fn status_error(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let reason = reply.reason(200);
        let said = match (&reason, model::param_errors(&reply.scrubbed())) {
            (Some(r), Some(p)) => format!("HTTP {} {r}: {p}", reply.status),
            (Some(r), None) => format!("HTTP {} {r}", reply.status),
            (None, Some(p)) => format!("HTTP {}: {p}", reply.status),
            (None, None) => format!("HTTP {}", reply.status),
        };
        let r = reason.unwrap_or_default().to_ascii_lowercase();
        let user = model::printable(&self.user, 80);
        let (kind, text) = match reply.status {
            401 if self.uses_token() => (
                ErrorKind::PasswordInvalid,
                format!("Proxmox VE refused the API token '{user}' ({said})"),
            ),
            401 => (
                ErrorKind::PasswordInvalid,
                format!("Proxmox VE refused the user '{user}' or its password ({said})"),
            ),
            403 => (
                ErrorKind::PrivilegeNotObtained,
                format!(
                    "the user '{user}' may not {what} ({said}): its role needs VM.Audit on \
                     /vms/VMID to read a guest and VM.PowerMgmt to power it (an API token with \
                     privilege separation needs them itself)"
                ),
            ),
            595 => (
                ErrorKind::Unreachable,
                format!(
                    "{what}: the node holding the guest does not answer the cluster ({said}): \
                     it may be offline, and its guests may still run"
                ),
            ),
            400 if r.contains("parameter") => (
                ErrorKind::Config,
                format!("Proxmox VE refused the parameters of {what} ({said})"),
            ),
            501 => (
                ErrorKind::Unsupported,
                format!("Proxmox VE has no such request: {what} ({said})"),
            ),
            500 if r.contains("does not exist") => (
                ErrorKind::DeviceError,
                format!("{what}: no such guest there ({said})"),
            ),
            _ => (
                ErrorKind::DeviceError,
                format!("Proxmox VE refused {what} ({said})"),
            ),
        };
        self.err(kind, stage, text)
    }

    fn request<'a>(
        &self,
        method: Method,
        url: &'a str,
        form: &[(&str, &str)],
        what: &'a str,
        stage: Stage,
        deadline: Instant,
    ) -> Request<'a> {
        let mut req = Request::new(method.clone(), url, what, stage)
            .header(reqwest::header::ACCEPT, "application/json")
            .within(self.timeout, Some(deadline));
        req.max_body = MAX_BODY;
        if !form.is_empty() {
            req = req.form(form);
        }
        match &self.auth {
            Auth::Token(h) => {
                req.add_secret(AUTHORIZATION, h.expose());
            }
            Auth::Ticket {
                session: Some((ticket, csrf)),
                ..
            } => {
                let mut cookie = b"PVEAuthCookie=".to_vec();
                cookie.extend_from_slice(ticket.expose());
                req.add_secret(COOKIE, &cookie);
                if method != Method::GET {
                    req.add_secret(CSRF, csrf.expose());
                }
            }
            Auth::Ticket { session: None, .. } => {}
        }
        req
    }

    /// One request (`path` below `/api2/json`); a 401 to a ticket logs in
    /// once more and sends it again; 429 is waited out within `deadline`.
    pub async fn call(
        &mut self,
        method: Method,
        path: &str,
        form: &[(&str, &str)],
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Reply, Lost> {
        if matches!(self.auth, Auth::Ticket { session: None, .. }) {
            self.login(deadline).await.map_err(Lost::Error)?;
        }
        let url = format!("{}{path}", self.base);
        let mut relogged = false;
        loop {
            let req = self.request(method.clone(), &url, form, what, stage, deadline);
            let reply = self.http.send_patiently(&req, &Patience::THROTTLE).await?;
            if reply.status != 401 || relogged || self.uses_token() {
                return Ok(reply);
            }
            tracing::debug!("ticket refused (expired?): logging in again");
            relogged = true;
            if let Auth::Ticket { session, .. } = &mut self.auth {
                *session = None;
            }
            self.login(deadline).await.map_err(Lost::Error)?;
        }
    }

    /// A read: the answer's body when it is 2xx, else the error.
    pub async fn get(
        &mut self,
        path: &str,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Vec<u8>, DriverError> {
        let reply = self
            .call(Method::GET, path, &[], what, stage, deadline)
            .await
            .map_err(Lost::into_error)?;
        match reply.ok() {
            true => Ok(reply.body),
            false => Err(self.status_error(&reply, what, stage)),
        }
    }

    /// A protocol error about `what`.
    pub fn bad_answer(&self, what: &str, stage: Stage, why: String) -> DriverError {
        self.err(ErrorKind::Protocol, stage, format!("{what}: {why}"))
    }
}
