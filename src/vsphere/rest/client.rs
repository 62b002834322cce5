//! A vSphere Automation API session on the shared HTTP layer
//! ([`crate::http`]): the TLS policy handed in by the caller, the session
//! id kept as a secret, a deadline on every request, bounded answers,
//! errors classified and scrubbed of every credential sent (the password,
//! the Basic header in any encoding, the session id).
//!
//! A request whose connection could not be made is tried again briefly
//! (nothing was delivered); a request that got a 401 after the session was
//! made logs in once more and is sent again (a 401 is answered before
//! anything is carried out). A power request whose answer never came is
//! never sent again here: it comes back as [`Posted::Silent`], and the
//! driver reads the state back.

use super::config::RestConfig;
use super::model::{self, ApiError, Generation, VmPower, VmSummary};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Failed, Reply, Request, Setup};
use crate::secret::Secret;
use base64::Engine as _;
use reqwest::header::HeaderName;
use reqwest::{Method, Url};
use std::time::{Duration, Instant};

/// Largest answer read (a list of 1000 VMs is about 120 KB).
pub const MAX_BODY: usize = 8 << 20;
/// The header that carries the session.
const SESSION_HEADER: HeaderName = HeaderName::from_static("vmware-api-session-id");

/// Why a call has no answer to judge.
#[derive(Debug)]
pub enum Lost {
    /// Sent, and no (whole) answer came: it may have been carried out.
    Silent(DriverError),
    /// Not carried out (no connection, TLS refused, the login failed).
    Error(DriverError),
}

impl Lost {
    /// The error inside.
    pub fn into_error(self) -> DriverError {
        match self {
            Lost::Silent(e) | Lost::Error(e) => e,
        }
    }
}

impl From<Failed> for Lost {
    fn from(f: Failed) -> Lost {
        match f.maybe_delivered() {
            true => Lost::Silent(f.into_error()),
            false => Lost::Error(f.into_error()),
        }
    }
}

/// What became of a power request.
#[derive(Debug)]
pub enum Posted {
    /// 2xx: carried out (the API's power operations answer when done).
    Done,
    /// Refused with this status and error.
    Refused(u16, ApiError),
    /// No answer: it may have been carried out. Never send it again blindly.
    Silent(DriverError),
}

/// A session with one vCenter.
pub struct Client {
    http: crate::http::Client,
    base: Url,
    gen: Generation,
    user: String,
    password: Secret,
    session: Option<Secret>,
    timeout: Duration,
    /// Sessions created.
    pub logins: u32,
    /// Requests sent.
    pub requests: u32,
}

enum Auth {
    Basic,
    Session,
}

impl Client {
    /// A client for `cfg` with `tls` (used for `https` only).
    pub fn new(cfg: &RestConfig, tls: rustls::ClientConfig) -> Result<Client, DriverError> {
        let setup = |why: String| DriverError::new(ErrorKind::Config, Stage::Authenticate, why);
        let mut base = Url::parse(&format!("{}/", cfg.base_url()))
            .map_err(|e| setup(format!("{} is not a URL: {e}", cfg.base_url())))?;
        if base.cannot_be_a_base() {
            return Err(setup(format!("{} cannot hold a path", cfg.base_url())));
        }
        base.set_query(None);
        let http = crate::http::Client::with_tls(
            Setup {
                tls_hint: None,
                ..Setup::new("vCenter")
            },
            tls,
        )?;
        http.scrub().remember(cfg.password.expose());
        Ok(Client {
            http,
            base,
            gen: cfg.generation(),
            user: cfg.username.clone(),
            password: cfg.password.clone(),
            session: None,
            timeout: cfg.request_timeout,
            logins: 0,
            requests: 0,
        })
    }

    /// The API generation spoken.
    pub fn generation(&self) -> Generation {
        self.gen
    }

    /// Whether a session is open.
    pub fn has_session(&self) -> bool {
        self.session.is_some()
    }

    /// The URL of `segments` below the API path.
    pub fn url(&self, segments: &[&str]) -> Url {
        let mut u = self.base.clone();
        if let Ok(mut p) = u.path_segments_mut() {
            p.pop_if_empty().extend(segments);
        }
        u
    }

    fn session_url(&self) -> Url {
        let segs: Vec<&str> = self.gen.session_path().split('/').collect();
        self.url(&segs)
    }

    /// `s` without any credential sent (a server may echo them).
    pub fn scrub(&self, s: String) -> String {
        self.http.scrub().apply(&s)
    }

    fn err(&self, kind: ErrorKind, stage: Stage, message: String) -> DriverError {
        self.http.error(kind, stage, message)
    }

    /// Sends one request, bounded by the client's timeout and `deadline`.
    async fn send(
        &mut self,
        method: Method,
        url: Url,
        auth: Auth,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Reply, Failed> {
        let bad = |c: &Client| {
            Failed::Connect(c.err(
                ErrorKind::Config,
                Stage::Authenticate,
                "the credentials cannot be carried in an HTTP header".to_string(),
            ))
        };
        let mut req = Request::new(method, url.as_str(), what, stage)
            .header(reqwest::header::ACCEPT, "application/json")
            .within(self.timeout, Some(deadline));
        req.max_body = MAX_BODY;
        req = match auth {
            Auth::Basic => {
                let mut raw = zeroize::Zeroizing::new(self.user.as_bytes().to_vec());
                raw.push(b':');
                raw.extend_from_slice(self.password.expose());
                let value = zeroize::Zeroizing::new(format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(&*raw)
                ));
                req.secret_header(reqwest::header::AUTHORIZATION, value.as_bytes())
                    .ok_or_else(|| bad(self))?
            }
            Auth::Session => match &self.session {
                Some(s) => req
                    .secret_header(SESSION_HEADER, s.expose())
                    .ok_or_else(|| bad(self))?,
                None => req,
            },
        };
        let r = self.http.send(&req).await;
        self.requests = self.http.requests;
        r
    }

    /// The error for an answer that is not what `what` needed.
    pub fn http_error(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let e = ApiError::parse(reply.scrubbed().as_bytes());
        let location = reply.header("location").map(|l| reply.clean(l, 200));
        self.status_error(reply.status, &e, location.as_deref(), what, stage)
    }

    /// The error for status `status` with error `e`.
    pub fn status_error(
        &self,
        status: u16,
        e: &ApiError,
        location: Option<&str>,
        what: &str,
        stage: Stage,
    ) -> DriverError {
        let said = format!("HTTP {status}, {}", e.describe());
        let (kind, text) = match (status, e.kind.as_str()) {
            (300..=399, _) => (
                ErrorKind::Config,
                format!(
                    "vCenter redirects {what} to {} ({said}): speak HTTPS with --ssl \
                     (or --ssl-insecure), or correct --ipport/--api-path",
                    location.unwrap_or("another place")
                ),
            ),
            (401, _) => (
                ErrorKind::PasswordInvalid,
                format!(
                    "vCenter refused the user name '{}' or its password ({said})",
                    model::printable(&self.user, 80)
                ),
            ),
            (403, _) => (
                ErrorKind::PrivilegeNotObtained,
                format!(
                    "the user '{}' may not {what} ({said}): its vCenter role needs System.Read \
                     on the VM to read it and VirtualMachine.Interact.PowerOff / .PowerOn to \
                     power it",
                    model::printable(&self.user, 80)
                ),
            ),
            (404, _) => (
                ErrorKind::DeviceError,
                format!("{what}: not found ({said})"),
            ),
            (_, "already_in_desired_state") => (
                ErrorKind::NotInPresentState,
                format!("vCenter declined {what}: already in that state ({said})"),
            ),
            (_, "unable_to_allocate_resource") => (
                ErrorKind::DeviceError,
                format!(
                    "vCenter refused {what} ({said}): more VMs match than the API lists at \
                     once (1000); narrow the list with --filter"
                ),
            ),
            // Only the service's own word: a bare 503 may come from a proxy
            // after the request reached the service (never sent again).
            (_, "resource_busy" | "service_unavailable") => (
                ErrorKind::Busy,
                format!("vCenter is busy with {what} ({said})"),
            ),
            _ => (
                ErrorKind::DeviceError,
                format!("vCenter refused {what} ({said})"),
            ),
        };
        self.err(kind, stage, text)
    }

    /// Creates the session (basic authentication).
    pub async fn login(&mut self, deadline: Instant) -> Result<(), DriverError> {
        let st = Stage::Authenticate;
        let url = self.session_url();
        let reply = self
            .send(
                Method::POST,
                url,
                Auth::Basic,
                "the session's creation",
                st,
                deadline,
            )
            .await
            .map_err(Failed::into_error)?;
        if !(200..300).contains(&reply.status) {
            let mut e = self.http_error(&reply, "the session's creation", st);
            if reply.status == 404 {
                e.kind = ErrorKind::Config;
                e.message = format!(
                    "vCenter has no session service at {} (HTTP 404): is --api-path right? \
                     (/rest for vSphere 6.5 and later, /api for 7.0 U2 and later)",
                    self.session_url()
                );
            }
            return Err(e);
        }
        let id = model::session_id(&reply.body)
            .map_err(|m| self.err(ErrorKind::Protocol, st, format!("session: {m}")))?;
        self.session = Some(Secret::from_str_value(&id));
        self.logins += 1;
        Ok(())
    }

    /// Deletes the session (best effort, bounded by `deadline`).
    pub async fn logout(&mut self, deadline: Instant) {
        if self.session.is_none() {
            return;
        }
        let url = self.session_url();
        let _ = self
            .send(
                Method::DELETE,
                url,
                Auth::Session,
                "the session's deletion",
                Stage::Close,
                deadline,
            )
            .await;
        self.session = None;
    }

    /// One request in the session; a 401 (the session expired) logs in
    /// once more and sends it again (a 401 is answered before anything is
    /// carried out).
    async fn call(
        &mut self,
        method: Method,
        url: Url,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Reply, Lost> {
        if self.session.is_none() {
            self.login(deadline).await.map_err(Lost::Error)?;
        }
        let reply = self
            .send(
                method.clone(),
                url.clone(),
                Auth::Session,
                what,
                stage,
                deadline,
            )
            .await?;
        if reply.status != 401 {
            return Ok(reply);
        }
        self.session = None;
        self.login(deadline).await.map_err(Lost::Error)?;
        Ok(self
            .send(method, url, Auth::Session, what, stage, deadline)
            .await?)
    }

    /// The VMs a list query selects: `Ok(Err(..))` is the API's refusal
    /// (status and error), for the caller to judge.
    pub async fn vms(
        &mut self,
        query: &[(String, String)],
        raw: Option<&str>,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Result<Vec<VmSummary>, (u16, ApiError)>, DriverError> {
        let mut url = self.url(&["vcenter", "vm"]);
        if let Some(r) = raw.filter(|r| !r.is_empty()) {
            url.set_query(Some(r));
        }
        if !query.is_empty() {
            let mut q = url.query_pairs_mut();
            for (k, v) in query {
                q.append_pair(k, v);
            }
        }
        let reply = self
            .call(Method::GET, url, "the VM list", stage, deadline)
            .await
            .map_err(Lost::into_error)?;
        if reply.status != 200 {
            if reply.status == 401 || reply.status == 403 || !(400..500).contains(&reply.status) {
                return Err(self.http_error(&reply, "list VMs", stage));
            }
            return Ok(Err((
                reply.status,
                ApiError::parse(reply.scrubbed().as_bytes()),
            )));
        }
        model::vm_list(&reply.body)
            .map(Ok)
            .map_err(|m| self.err(ErrorKind::Protocol, stage, format!("the VM list: {m}")))
    }

    /// The VMs named `name` (the name filter; exact, as vCenter matches it).
    pub async fn by_name(
        &mut self,
        name: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Vec<VmSummary>, DriverError> {
        let q = [(self.gen.filter_key("names"), name.to_string())];
        match self.vms(&q, None, stage, deadline).await? {
            Ok(l) => Ok(l.into_iter().filter(|v| v.name == name).collect()),
            Err((status, e)) => Err(self.status_error(status, &e, None, "list VMs by name", stage)),
        }
    }

    /// The VM whose identifier is `id`, if any.
    pub async fn by_id(
        &mut self,
        id: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Vec<VmSummary>, DriverError> {
        let q = [(self.gen.filter_key("vms"), id.to_string())];
        match self.vms(&q, None, stage, deadline).await? {
            Ok(l) => Ok(l.into_iter().filter(|v| v.vm == id).collect()),
            // An identifier the API cannot parse selects nothing.
            Err((400, _)) => Ok(Vec::new()),
            Err((status, e)) => Err(self.status_error(status, &e, None, "list VMs by id", stage)),
        }
    }

    /// The power state of VM `id`.
    pub async fn power(
        &mut self,
        id: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<VmPower, DriverError> {
        let url = self.url(&["vcenter", "vm", id, "power"]);
        let what = format!("read the power state of {id}");
        let reply = self
            .call(Method::GET, url, &what, stage, deadline)
            .await
            .map_err(Lost::into_error)?;
        if reply.status != 200 {
            let mut e = self.http_error(&reply, &what, stage);
            if reply.status == 404 {
                e.message = format!(
                    "vm {id} no longer exists on vCenter (HTTP 404, {})",
                    ApiError::parse(reply.scrubbed().as_bytes()).describe()
                );
            }
            return Err(e);
        }
        model::power(&reply.body)
            .map_err(|m| self.err(ErrorKind::Protocol, stage, format!("{what}: {m}")))
    }

    /// The BIOS UUID of VM `id`, where the release reports it.
    pub async fn bios_uuid(
        &mut self,
        id: &str,
        deadline: Instant,
    ) -> Result<Option<String>, DriverError> {
        let url = self.url(&["vcenter", "vm", id]);
        let what = format!("read vm {id}");
        let reply = self
            .call(Method::GET, url, &what, Stage::Identity, deadline)
            .await
            .map_err(Lost::into_error)?;
        if reply.status != 200 {
            return Err(self.http_error(&reply, &what, Stage::Identity));
        }
        Ok(model::bios_uuid(&reply.body))
    }

    /// Sends the power action `action` (`stop`, `start`) to VM `id`, once.
    pub async fn power_action(
        &mut self,
        id: &str,
        action: &str,
        deadline: Instant,
    ) -> Result<Posted, DriverError> {
        let (segments, query) = self.gen.power_action(id, action);
        let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
        let mut url = self.url(&segs);
        if let Some((k, v)) = query {
            url.query_pairs_mut().append_pair(&k, &v);
        }
        let what = format!("power {action} {id}");
        match self
            .call(Method::POST, url, &what, Stage::Command, deadline)
            .await
        {
            Ok(r) if (200..300).contains(&r.status) => Ok(Posted::Done),
            Ok(r) => Ok(Posted::Refused(
                r.status,
                ApiError::parse(r.scrubbed().as_bytes()),
            )),
            Err(Lost::Silent(e)) => Ok(Posted::Silent(e)),
            Err(Lost::Error(e)) => Err(e),
        }
    }
}
