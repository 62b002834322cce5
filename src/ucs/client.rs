//! A session with one UCS Manager over its XML API (`POST /nuova`,
//! `text/xml`), on the shared HTTP layer ([`crate::http`]): `aaaLogin`'s
//! cookie, every read sent with it, a cookie UCS Manager no longer knows
//! (error 552, "Authorization required": expired, or the session was
//! ended) replaced by one login again, a configuration change sent once
//! (a lost answer is [`Lost::Silent`], for the driver to read back), and
//! `aaaLogout` at the end, bounded, whatever happened before. The
//! password and the cookie are scrubbed from every text an answer brings
//! back and never shown.

use super::model::{self, attr, Answer, ApiError};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Failed, Reply, Request, Setup};
use crate::platform::lost::Lost;
use crate::secret::Secret;
use reqwest::Method;
use std::time::{Duration, Instant};

/// The largest answer read (the service profiles of a large domain fit).
pub const MAX_BODY: usize = model::MAX_BODY;
/// Who answers, as messages name it.
pub const DEVICE: &str = "UCS Manager";
/// How long `aaaLogout` may take at the end.
pub const LOGOUT_LIMIT: Duration = Duration::from_secs(2);

/// A session with one UCS Manager.
pub struct Client {
    http: crate::http::Client,
    url: String,
    user: String,
    password: Secret,
    cookie: Option<Secret>,
    timeout: Duration,
    logins: u32,
}

impl Client {
    /// A client for `url` (`https://UCSM:PORT/nuova`) as `user`; sends nothing.
    pub fn new(
        url: &str,
        tls: Option<&crate::tls::TlsTrust>,
        user: &str,
        password: Secret,
        timeout: Duration,
    ) -> Result<Client, DriverError> {
        let http = crate::http::Client::new(Setup {
            trust: tls.cloned(),
            tls_hint: Some(
                "UCS Manager presents its own certificate unless one was installed (Admin, Key \
                 Management, a keyring set in Communication Services): give its CA (or the \
                 certificate) with --ca-cert, or pin it with --ssl-fingerprint",
            ),
            ..Setup::new(DEVICE)
        })?;
        http.scrub().remember(password.expose());
        Ok(Client {
            http,
            url: url.to_string(),
            user: user.to_string(),
            password,
            cookie: None,
            timeout,
            logins: 0,
        })
    }

    /// Requests sent.
    pub fn requests(&self) -> u32 {
        self.http.requests
    }

    /// Logins made (a second one: the cookie had expired).
    pub fn logins(&self) -> u32 {
        self.logins
    }

    /// The certificate UCS Manager presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.seen().fingerprint()
    }

    /// Whether a session is open.
    pub fn logged_in(&self) -> bool {
        self.cookie.is_some()
    }

    async fn post(
        &mut self,
        body: Vec<u8>,
        what: &str,
        stage: Stage,
        limit: Duration,
        d: Instant,
    ) -> Result<Reply, Failed> {
        let mut req = Request::new(Method::POST, &self.url, what, stage)
            .body("text/xml", body)
            .within(limit, Some(d));
        req.max_body = MAX_BODY;
        self.http.send(&req).await
    }

    fn read(
        &self,
        r: &Reply,
        method: &str,
        what: &str,
        stage: Stage,
    ) -> Result<Answer, DriverError> {
        if !r.ok() {
            return Err(self.http.error(
                ErrorKind::DeviceError,
                stage,
                format!("{what}: UCS Manager answered HTTP {}", r.status),
            ));
        }
        model::answer(&r.body, method).map_err(|m| self.bad_answer(what, stage, m))
    }

    /// A protocol error about `what`.
    pub fn bad_answer(&self, what: &str, stage: Stage, why: String) -> DriverError {
        self.http
            .error(ErrorKind::Protocol, stage, format!("{what}: {why}"))
    }

    /// The error UCS Manager's refusal `e` of `what` is.
    pub fn refused(&self, e: &ApiError, what: &str, stage: Stage) -> DriverError {
        let user = model::printable(&self.user, 80);
        let (kind, text) = if e.login_refused() {
            (
                ErrorKind::PasswordInvalid,
                format!("UCS Manager refused the user '{user}' or its password ({e})"),
            )
        } else if e.cookie_expired() {
            (
                ErrorKind::PasswordInvalid,
                format!("UCS Manager refused {what} right after a fresh login of '{user}' ({e})"),
            )
        } else if e.privilege() {
            (
                ErrorKind::PrivilegeNotObtained,
                format!(
                    "the user '{user}' may not {what} ({e}): its role needs the ls-power \
                     (Service Profile Power) or ls-server-oper privilege"
                ),
            )
        } else {
            (
                ErrorKind::DeviceError,
                format!("UCS Manager refused {what} ({e})"),
            )
        };
        self.http.error(kind, stage, text)
    }

    /// Logs in (`aaaLogin`), replacing any cookie held.
    pub async fn login(&mut self, d: Instant) -> Result<(), DriverError> {
        let what = "log in (aaaLogin)";
        let st = Stage::Authenticate;
        let body = format!(
            r#"<aaaLogin inName="{}" inPassword="{}" />"#,
            attr(&self.user),
            attr(&String::from_utf8_lossy(self.password.expose()))
        );
        self.cookie = None;
        let r = self
            .post(body.into_bytes(), what, st, self.timeout, d)
            .await
            .map_err(Failed::into_error)?;
        let a = self.read(&r, "aaaLogin", what, st)?;
        if let Some(e) = &a.error {
            return Err(self.refused(e, what, st));
        }
        let cookie = a
            .root
            .get("outCookie")
            .ok_or_else(|| self.bad_answer(what, st, "no outCookie in the answer".into()))?;
        self.http.scrub().remember(cookie.as_bytes());
        self.cookie = Some(Secret::from_str_value(cookie));
        self.logins += 1;
        Ok(())
    }

    fn cookie(&self) -> String {
        self.cookie
            .as_ref()
            .map(|c| attr(&String::from_utf8_lossy(c.expose())))
            .unwrap_or_default()
    }

    /// One call `method` whose body `body` builds around the cookie (its
    /// attribute value, escaped): logs in first when no session is open,
    /// and once again when UCS Manager no longer knows the cookie (552:
    /// the request was refused, not carried out). `Lost::Silent`: sent and
    /// not answered.
    async fn call(
        &mut self,
        method: &str,
        body: &dyn Fn(&str) -> String,
        what: &str,
        stage: Stage,
        d: Instant,
    ) -> Result<Answer, Lost> {
        if self.cookie.is_none() {
            self.login(d).await.map_err(Lost::Error)?;
        }
        for again in [false, true] {
            let xml = body(&self.cookie());
            let r = self
                .post(xml.into_bytes(), what, stage, self.timeout, d)
                .await
                .map_err(Lost::from)?;
            let a = match self.read(&r, method, what, stage) {
                Ok(a) => a,
                // An answer that cannot be read: it may have been carried out.
                Err(e) if stage == Stage::Command => return Err(Lost::Silent(e)),
                Err(e) => return Err(Lost::Error(e)),
            };
            match &a.error {
                None => return Ok(a),
                Some(e) if e.cookie_expired() && !again => {
                    self.login(d).await.map_err(Lost::Error)?;
                }
                Some(e) => return Err(Lost::Error(self.refused(e, what, stage))),
            }
        }
        unreachable!("the loop returns")
    }

    /// `configResolveDn` of `dn` (not hierarchical): the objects found
    /// (none for an unknown dn).
    pub async fn resolve_dn(
        &mut self,
        dn: &str,
        stage: Stage,
        d: Instant,
    ) -> Result<Answer, DriverError> {
        let what = format!("read {}", model::printable(dn, 120));
        let dn = attr(dn);
        let body = move |c: &str| {
            format!(r#"<configResolveDn cookie="{c}" inHierarchical="false" dn="{dn}"/>"#)
        };
        self.call("configResolveDn", &body, &what, stage, d)
            .await
            .map_err(Lost::into_error)
    }

    /// `configResolveClass` of `class` (not hierarchical).
    pub async fn resolve_class(&mut self, class: &str, d: Instant) -> Result<Answer, DriverError> {
        let what = format!("list {class}");
        let class = attr(class);
        let body = move |c: &str| {
            format!(
                r#"<configResolveClass cookie="{c}" inHierarchical="false" classId="{class}"/>"#
            )
        };
        self.call("configResolveClass", &body, &what, Stage::Status, d)
            .await
            .map_err(Lost::into_error)
    }

    /// `configConfMo` setting the `lsPower` of profile `profile_dn` to
    /// `state`, sent once (again only after a 552 refusal).
    pub async fn set_power(
        &mut self,
        profile_dn: &str,
        state: &str,
        d: Instant,
    ) -> Result<Answer, Lost> {
        let what = format!(
            "set {}/power to {state} (configConfMo)",
            model::printable(profile_dn, 120)
        );
        let dn = attr(&format!("{profile_dn}/power"));
        let state = attr(state);
        let body = move |c: &str| {
            format!(
                r#"<configConfMo cookie="{c}" dn="{dn}" inHierarchical="false"><inConfig><lsPower dn="{dn}" state="{state}" status="modified"/></inConfig></configConfMo>"#
            )
        };
        self.call("configConfMo", &body, &what, Stage::Command, d)
            .await
    }

    /// Ends the session (`aaaLogout`), bounded by [`LOGOUT_LIMIT`]; what
    /// it answers does not matter.
    pub async fn logout(&mut self) {
        if self.cookie.is_none() {
            return;
        }
        let body = format!(r#"<aaaLogout inCookie="{}" />"#, self.cookie());
        self.cookie = None;
        let d = Instant::now() + LOGOUT_LIMIT;
        let _ = self
            .post(
                body.into_bytes(),
                "log out (aaaLogout)",
                Stage::Command,
                LOGOUT_LIMIT,
                d,
            )
            .await;
    }
}
