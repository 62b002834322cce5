//! WS-Management requests to one AMT machine (`POST /wsman`,
//! `application/soap+xml`) with HTTP Digest authentication
//! ([`crate::http::digest`]) on the shared HTTP layer.
//!
//! The first request goes without credentials: AMT refuses it with 401
//! and its challenge, and did nothing. Every request after carries the
//! answer (`nc` counted on). A 401 to an answered request is a wrong user
//! or password, except once in a row for a nonce AMT calls stale: then the
//! same request is sent again with the new nonce (refused, so not carried
//! out). A request whose answer was lost is [`Lost::Silent`], never sent
//! again here. The password never leaves this process: Digest sends only
//! a hash, and the `Authorization` header is scrubbed from every text.

use super::model::{self, Answer};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::digest::{self, Challenge, Digest, Refusal};
use crate::http::{Reply, Request, Setup};
use crate::platform::lost::Lost;
use crate::secret::Secret;
use reqwest::header::AUTHORIZATION;
use reqwest::Method;
use std::time::{Duration, Instant};

/// Who answers, as messages name it.
pub const DEVICE: &str = "Intel AMT";

/// WS-Management requests to one machine.
pub struct Client {
    http: crate::http::Client,
    url: String,
    path: String,
    user: String,
    password: Secret,
    digest: Option<Digest>,
    timeout: Duration,
}

impl Client {
    /// A client for `url` (`http(s)://HOST:PORT/wsman`) as `user`; sends nothing.
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
                "AMT presents the certificate provisioned into it (or a self-signed one): give \
                 its CA with --ca-cert, or pin it with --ssl-fingerprint",
            ),
            ..Setup::new(DEVICE)
        })?;
        http.scrub().remember(password.expose());
        let path = url
            .find("://")
            .and_then(|i| url[i + 3..].find('/').map(|j| url[i + 3 + j..].to_string()))
            .unwrap_or_else(|| "/wsman".into());
        Ok(Client {
            http,
            url: url.to_string(),
            path,
            user: user.to_string(),
            password,
            digest: None,
            timeout,
        })
    }

    /// Requests sent.
    pub fn requests(&self) -> u32 {
        self.http.requests
    }

    /// The certificate AMT presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.seen().fingerprint()
    }

    /// The Digest algorithm in use, once AMT has challenged.
    pub fn algorithm(&self) -> Option<&'static str> {
        self.digest
            .as_ref()
            .map(|d| d.challenge().algorithm.as_str())
    }

    fn refused(&self, stage: Stage, why: String) -> DriverError {
        self.http.error(ErrorKind::PasswordInvalid, stage, why)
    }

    /// Posts `envelope` (`what` names it), authenticating as needed.
    pub async fn post(
        &mut self,
        envelope: &str,
        what: &str,
        stage: Stage,
        d: Instant,
    ) -> Result<Reply, Lost> {
        let user = crate::http::printable(&self.user, 80);
        // At most: unauthenticated, then answered, then once more with a
        // stale nonce renewed.
        for _ in 0..3 {
            let mut req = Request::new(Method::POST, &self.url, what, stage)
                .body(
                    "application/soap+xml;charset=UTF-8",
                    envelope.as_bytes().to_vec(),
                )
                .within(self.timeout, Some(d));
            req.max_body = model::MAX_BODY;
            let answered = self.digest.is_some();
            if let Some(dg) = self.digest.as_mut() {
                let value = dg.authorization(
                    "POST",
                    &self.path,
                    &self.user,
                    self.password.expose(),
                    &digest::cnonce(),
                );
                if !req.add_secret(AUTHORIZATION, value.as_bytes()) {
                    return Err(Lost::Error(self.refused(
                        stage,
                        format!("the user '{user}' cannot be sent in an HTTP header"),
                    )));
                }
            }
            let r = self.http.send(&req).await.map_err(Lost::from)?;
            if r.status != 401 {
                if let Some(dg) = self.digest.as_mut() {
                    dg.accepted();
                }
                return Ok(r);
            }
            let www: Vec<&str> = r
                .headers
                .get_all(reqwest::header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            match self.digest.as_mut() {
                Some(dg) if answered => match dg.refused(www) {
                    Refusal::Stale => continue,
                    Refusal::Credentials => {
                        return Err(Lost::Error(self.refused(
                            stage,
                            format!(
                            "AMT refused the user '{user}' or its password (HTTP 401 to {what})"
                        ),
                        )))
                    }
                },
                _ => match Challenge::parse(www) {
                    Ok(c) => self.digest = Some(Digest::new(c)),
                    Err(e) => {
                        return Err(Lost::Error(self.http.error(
                            ErrorKind::Protocol,
                            stage,
                            format!("{what}: {e}"),
                        )))
                    }
                },
            }
        }
        Err(Lost::Error(self.refused(
            stage,
            format!("AMT kept refusing the user '{user}' (HTTP 401 to {what})"),
        )))
    }

    /// Posts `envelope` and reads element `name` of class `class` from the
    /// answer, or its fault. A 200 or a SOAP fault (AMT answers faults
    /// with 400 or 500) is an answer; any other status a device error. An
    /// answer that cannot be read at [`Stage::Command`] may have been
    /// carried out ([`Lost::Silent`]).
    pub async fn call(
        &mut self,
        envelope: &str,
        class: &str,
        name: &str,
        what: &str,
        stage: Stage,
        d: Instant,
    ) -> Result<Answer, Lost> {
        let r = self.post(envelope, what, stage, d).await?;
        let read = model::read(&r.body, class, name);
        match (r.status, read) {
            (200, Ok(a)) => Ok(a),
            (_, Ok(a @ Answer::Fault(_))) => Ok(a),
            (200, Err(why)) => {
                let e = self
                    .http
                    .error(ErrorKind::Protocol, stage, format!("{what}: {why}"));
                Err(match stage {
                    Stage::Command => Lost::Silent(e),
                    _ => Lost::Error(e),
                })
            }
            (s, _) => Err(Lost::Error(self.http.error(
                ErrorKind::DeviceError,
                stage,
                format!("{what}: AMT answered HTTP {s} ({})", r.text(160)),
            ))),
        }
    }
}
