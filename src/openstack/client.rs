//! Keystone and Nova on the shared HTTP layer ([`crate::http`]): a token
//! (`POST /v3/auth/tokens`: password, application credential or token;
//! `X-Subject-Token`), the compute endpoint from its catalog (region and
//! interface, [`super::model::compute_endpoint`]), then every Nova request
//! with `X-Auth-Token` and microversion 2.16 (`host_status` for
//! administrators). The password and the token are secrets, scrubbed from
//! everything printed; each request is bounded; answers are capped.
//!
//! A 401 from Nova (the token expired or was revoked) gets one new token
//! and the request again: a 401 carried nothing out. A 429 is waited out
//! within the deadline ([`Patience::THROTTLE`]), for the same reason. A
//! request whose answer never came is never sent again here
//! ([`Lost::Silent`]): the driver reads back.

use super::config::{AuthKind, NameOrId, OpenstackConfig};
use super::model;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Failed, Patience, Reply, Request, Setup};
use crate::secret::Secret;
use reqwest::header::HeaderName;
use reqwest::Method;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The largest answer read (a page of 1000 detailed servers is ~3 MB).
pub const MAX_BODY: usize = 16 << 20;
/// Who answers, as messages name it.
pub const DEVICE: &str = "OpenStack";
const TOKEN: HeaderName = HeaderName::from_static("x-auth-token");
const MICROVERSION: HeaderName = HeaderName::from_static("openstack-api-version");

pub use crate::platform::lost::Lost;

/// A session with one cloud's Keystone and Nova.
pub struct Client {
    http: crate::http::Client,
    cfg: OpenstackConfig,
    secret: Secret,
    token: Option<Secret>,
    compute: Option<String>,
    timeout: Duration,
    /// Tokens obtained.
    pub logins: u32,
}

fn name_or_id(n: &NameOrId) -> Value {
    match (&n.id, &n.name) {
        (Some(id), _) => json!({ "id": id }),
        (None, Some(name)) => json!({ "name": name }),
        (None, None) => Value::Null,
    }
}

impl Client {
    /// A client for `cfg` with `secret` (the password, the application
    /// credential's secret or the token); sends nothing.
    pub fn new(
        cfg: &OpenstackConfig,
        secret: Secret,
        timeout: Duration,
    ) -> Result<Client, DriverError> {
        let http = crate::http::Client::new(Setup {
            trust: Some(cfg.tls.clone()),
            tls_hint: Some(
                "give the CA that signed Keystone's and Nova's certificates with --ca-cert \
                 (clouds.yaml: cacert; OS_CACERT), or pin the certificate with --ssl-fingerprint",
            ),
            ..Setup::new(DEVICE)
        })?;
        http.scrub().remember(secret.expose());
        Ok(Client {
            http,
            cfg: cfg.clone(),
            secret,
            token: None,
            compute: None,
            timeout,
            logins: 0,
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

    /// The certificate presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.seen().fingerprint()
    }

    /// The compute endpoint the catalog gave.
    pub fn compute(&self) -> Option<&str> {
        self.compute.as_deref()
    }

    fn err(&self, kind: ErrorKind, stage: Stage, message: String) -> DriverError {
        self.http.error(kind, stage, message)
    }

    fn scope(&self) -> Value {
        let c = &self.cfg;
        let mut p = name_or_id(&c.project);
        if c.project.id.is_none() && !c.project_domain.is_empty() {
            p["domain"] = name_or_id(&c.project_domain);
        }
        match p.is_null() {
            true => Value::Null,
            false => json!({ "project": p }),
        }
    }

    fn user(&self) -> Value {
        let c = &self.cfg;
        let mut u = name_or_id(&c.user);
        if c.user.id.is_none() && !c.user_domain.is_empty() {
            u["domain"] = name_or_id(&c.user_domain);
        }
        u
    }

    fn auth_body(&self) -> Value {
        let secret = String::from_utf8_lossy(self.secret.expose()).into_owned();
        let secret = zeroize::Zeroizing::new(secret);
        let c = &self.cfg;
        let (identity, scope) = match c.kind {
            AuthKind::Password => {
                let mut u = self.user();
                u["password"] = Value::from(secret.as_str());
                (
                    json!({"methods": ["password"], "password": {"user": u}}),
                    self.scope(),
                )
            }
            AuthKind::AppCredential => {
                let mut a = name_or_id(&c.app_cred);
                if c.app_cred.id.is_none() {
                    a["user"] = self.user();
                }
                a["secret"] = Value::from(secret.as_str());
                (
                    json!({"methods": ["application_credential"], "application_credential": a}),
                    Value::Null,
                )
            }
            AuthKind::Token => (
                json!({"methods": ["token"], "token": {"id": secret.as_str()}}),
                self.scope(),
            ),
        };
        let mut auth = json!({ "identity": identity });
        if !scope.is_null() {
            auth["scope"] = scope;
        }
        json!({ "auth": auth })
    }

    /// Obtains a token and the compute endpoint.
    pub async fn login(&mut self, deadline: Instant) -> Result<(), DriverError> {
        let st = Stage::Authenticate;
        let url = format!(
            "{}/auth/tokens",
            self.cfg
                .identity_url()
                .map_err(|e| self.err(ErrorKind::Config, st, e.to_string()))?
        );
        let what = "the token request (auth/tokens)";
        let body = self.auth_body();
        let req = Request::new(Method::POST, &url, what, st)
            .header(reqwest::header::ACCEPT, "application/json")
            .json(&body)
            .peer("Keystone")
            .within(self.timeout, Some(deadline));
        drop(body);
        let reply = self
            .http
            .send_patiently(&req, &Patience::THROTTLE)
            .await
            .map_err(Failed::into_error)?;
        if !reply.ok() {
            return Err(self.keystone_error(&reply));
        }
        let token = reply
            .header("x-subject-token")
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                self.err(
                    ErrorKind::Protocol,
                    st,
                    "Keystone's answer has no X-Subject-Token".into(),
                )
            })?
            .to_string();
        self.http.scrub().remember(token.as_bytes());
        let t = model::token(&reply.body)
            .map_err(|m| self.err(ErrorKind::Protocol, st, format!("{what}: {m}")))?;
        let ep = model::compute_endpoint(&t, self.cfg.region.as_deref(), &self.cfg.interface)
            .map_err(|m| self.err(ErrorKind::Config, st, m))?;
        self.token = Some(Secret::from_str_value(&token));
        self.compute = Some(ep);
        self.logins += 1;
        Ok(())
    }

    fn who(&self) -> String {
        let c = &self.cfg;
        let u = model::printable(c.user.text(), 80);
        match c.kind {
            AuthKind::Password => format!("the user '{u}'"),
            AuthKind::AppCredential => format!(
                "the application credential '{}'",
                model::printable(c.app_cred.text(), 80)
            ),
            AuthKind::Token => "the token".into(),
        }
    }

    fn keystone_error(&self, reply: &Reply) -> DriverError {
        let said = match model::error_message(&reply.body) {
            Some(m) => format!("HTTP {}: {}", reply.status, reply.clean(&m, 300)),
            None => format!("HTTP {}", reply.status),
        };
        let (kind, text) = match reply.status {
            401 => (
                ErrorKind::PasswordInvalid,
                format!(
                    "Keystone refused {} (its secret, its domain, or the project '{}') ({said})",
                    self.who(),
                    model::printable(self.cfg.project.text(), 80)
                ),
            ),
            403 => (
                ErrorKind::PrivilegeNotObtained,
                format!("Keystone refused a token to {} ({said})", self.who()),
            ),
            _ => (
                ErrorKind::DeviceError,
                format!("Keystone refused the token request ({said})"),
            ),
        };
        self.err(kind, Stage::Authenticate, text)
    }

    /// The error for a Nova answer that is not what `what` needed.
    pub fn status_error(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let msg = model::error_message(&reply.body).map(|m| reply.clean(&m, 300));
        let said = match &msg {
            Some(m) => format!("HTTP {}: {m}", reply.status),
            None => format!("HTTP {}", reply.status),
        };
        let low = msg.unwrap_or_default().to_ascii_lowercase();
        let (kind, text) = match reply.status {
            401 => (
                ErrorKind::PasswordInvalid,
                format!("Nova refused the token of {} ({said})", self.who()),
            ),
            403 => (
                ErrorKind::PrivilegeNotObtained,
                format!(
                    "{} may not {what} ({said}): the project role needs Nova's \
                     os_compute_api:servers:show, :stop, :start and :reboot (the member role \
                     has them)",
                    self.who()
                ),
            ),
            404 => (
                ErrorKind::DeviceError,
                format!("{what}: Nova has no such server in the project ({said})"),
            ),
            409 if low.contains("locked") => (
                ErrorKind::DeviceError,
                format!(
                    "Nova refused to {what}: the server is locked ({said}); its owner or an \
                     administrator unlocks it"
                ),
            ),
            409 if low.contains("task_state") => (
                ErrorKind::Busy,
                format!("Nova refused to {what} while a task runs ({said})"),
            ),
            409 => (
                ErrorKind::NotInPresentState,
                format!("Nova refused to {what} in the server's present state ({said})"),
            ),
            _ => (
                ErrorKind::DeviceError,
                format!("Nova refused to {what} ({said})"),
            ),
        };
        self.err(kind, stage, text)
    }

    fn request<'a>(
        &self,
        method: &Method,
        url: &'a str,
        body: Option<&Value>,
        what: &'a str,
        stage: Stage,
        deadline: Instant,
    ) -> Request<'a> {
        let mut req = Request::new(method.clone(), url, what, stage)
            .header(reqwest::header::ACCEPT, "application/json")
            .header(MICROVERSION, "compute 2.16")
            .peer("Nova")
            .within(self.timeout, Some(deadline));
        req.max_body = MAX_BODY;
        if let Some(b) = body {
            req = req.json(b);
        }
        if let Some(t) = &self.token {
            req.add_secret(TOKEN, t.expose());
        }
        req
    }

    /// One Nova request (`path` below the compute endpoint); a 401 gets a
    /// new token once and the request again; 429 is waited out.
    pub async fn call(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Reply, Lost> {
        if self.token.is_none() {
            self.login(deadline).await.map_err(Lost::Error)?;
        }
        let mut again = false;
        loop {
            let url = format!("{}{path}", self.compute.as_deref().unwrap_or_default());
            let req = self.request(&method, &url, body, what, stage, deadline);
            let reply = self.http.send_patiently(&req, &Patience::THROTTLE).await?;
            if reply.status != 401 || again {
                return Ok(reply);
            }
            tracing::debug!("Nova refused the token (expired?): a new one");
            again = true;
            self.token = None;
            self.login(deadline).await.map_err(Lost::Error)?;
        }
    }

    /// A read: the body of a 2xx answer, else the error.
    pub async fn get(
        &mut self,
        path: &str,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Vec<u8>, DriverError> {
        let reply = self
            .call(Method::GET, path, None, what, stage, deadline)
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
