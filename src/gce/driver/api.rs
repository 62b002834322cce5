//! The Compute Engine API under the driver: the clients (the API and the
//! token endpoint through the shared trust and the proxy; the metadata
//! server direct), the project and zone found once, the bearer token
//! (fetched again when near its end or after a 401), one request with
//! throttling waited out, and the read of the instance.

use super::*;
use crate::gce::config::COMPUTE;
use crate::gce::credentials::{self, Login};
use crate::http::{Patience, Proxy, Reply, Request, Setup};
use reqwest::Method;

/// Largest answer read (a 500-instance list page is a few MB at most).
pub const MAX_BODY: usize = 16 << 20;

/// What a call gave: an answer, or silence after the request may have left.
pub(super) enum Call {
    /// An answer (any status but 401 and the throttling ones).
    Reply(Reply),
    /// Sent, and no answer: it may have been carried out.
    Silent(DriverError),
}

fn config(message: String) -> DriverError {
    DriverError::new(ErrorKind::Config, Stage::Authenticate, message)
}

impl GceDriver {
    fn clients(&mut self) -> Result<(), DriverError> {
        if self.api.is_none() {
            let trust = crate::tls::trust(self.cfg.insecure, self.cfg.ca_cert.as_deref(), None)
                .map_err(|e| config(e.to_string()))?;
            if self.cfg.insecure {
                self.warnings.push(
                    "Compute Engine's certificate is not verified (--ssl-insecure): anyone on \
                     the path can impersonate it and take the token"
                        .into(),
                );
            }
            let env = self.env.clone();
            let lookup = move |k: &str| env.lookup(k);
            self.api = Some(Client::new(Setup {
                trust: Some(trust),
                proxy: match &self.cfg.proxy {
                    Some(p) => Proxy::Url(p.clone()),
                    None => Proxy::Env,
                },
                env: &lookup,
                tls_hint: Some("the API's CA comes from the system trust store or --ca-cert"),
                ..Setup::new("Compute Engine")
            })?);
        }
        if self.metadata.is_none() {
            // Plain HTTP on the host: no proxy, no certificate trust to load.
            self.metadata = Some(Client::new(Setup {
                trust: None,
                proxy: Proxy::None,
                ..Setup::new("the metadata server")
            })?);
        }
        Ok(())
    }

    pub(super) fn api_base(&self) -> String {
        self.cfg
            .api_endpoint
            .as_deref()
            .unwrap_or(COMPUTE)
            .trim_end_matches('/')
            .to_string()
    }

    /// One text value of the metadata server (`project/project-id`).
    pub(super) async fn metadata_text(
        &mut self,
        path: &str,
        deadline: Option<Instant>,
    ) -> Result<String, DriverError> {
        self.clients()?;
        let base = self.env.metadata_base();
        let http = self.metadata.as_mut().expect("made above");
        let reply = credentials::metadata_get(http, &base, path, deadline).await?;
        if !reply.ok() {
            return Err(DriverError::new(
                ErrorKind::DeviceError,
                Stage::Authenticate,
                format!(
                    "the metadata server answered {path} with {}: {}",
                    reply.status,
                    reply.text(200)
                ),
            ));
        }
        Ok(model::printable(
            String::from_utf8_lossy(&reply.body).trim(),
            200,
        ))
    }

    /// Everything before the first API request: the clients, the project,
    /// the credentials, the token, the zone.
    pub(super) async fn prepare(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        self.clients()?;
        if self.cfg.project.is_empty() {
            let p = self
                .metadata_text("project/project-id", deadline)
                .await
                .map_err(|e| {
                    config(format!(
                        "no project given, and the metadata server cannot name it ({}): give \
                         --project",
                        e.message
                    ))
                })?;
            self.cfg.project = p;
            self.cfg.validate().map_err(|e| config(e.to_string()))?;
        }
        if self.source.is_none() {
            self.source = Some(Source::choose(&self.cfg.auth, &self.env)?);
        }
        self.bearer(deadline).await?;
        if self.cfg.zone.is_empty() && !self.cfg.instance.is_empty() {
            self.cfg.zone = self.find_zone(deadline).await?;
        }
        Ok(())
    }

    /// The bearer header's value, with a token fetched when none is held
    /// or the one held is near its end.
    pub(super) async fn bearer(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<zeroize::Zeroizing<Vec<u8>>, DriverError> {
        if self
            .token
            .as_ref()
            .is_none_or(|t| Instant::now() >= t.renew_at)
        {
            // The compute API's connection opens while the token comes.
            let api = self.api_base();
            let http = self.api.as_mut().expect("made in prepare");
            http.preopen(&api, self.cfg.request_timeout);
            let base = self.env.metadata_base();
            let source = self.source.as_ref().expect("chosen in prepare");
            let token = credentials::fetch(
                source,
                Login {
                    http: self.api.as_mut().expect("made in prepare"),
                    metadata: self.metadata.as_mut().expect("made in prepare"),
                    metadata_base: &base,
                    timeout: self.cfg.request_timeout,
                    deadline,
                },
            )
            .await?;
            self.tokens += 1;
            self.token = Some(token);
        }
        let t = self.token.as_ref().expect("fetched above");
        let mut v = zeroize::Zeroizing::new(b"Bearer ".to_vec());
        v.extend_from_slice(t.value.expose());
        Ok(v)
    }

    /// `…/compute/v1/projects/P/zones/Z` for `zone`.
    pub(super) fn zone_url(&self, zone: &str) -> String {
        format!(
            "{}/compute/v1/projects/{}/zones/{zone}",
            self.api_base(),
            self.cfg.project
        )
    }

    /// The instance's URL.
    pub(super) fn instance_url(&self) -> String {
        format!(
            "{}/instances/{}",
            self.zone_url(&self.cfg.zone),
            self.cfg.instance
        )
    }

    /// One API request with the token; throttling waited out within the
    /// deadline (`patience`), a 401 answered by one fresh token.
    pub(super) async fn call(
        &mut self,
        method: Method,
        url: &str,
        what: &str,
        stage: Stage,
        patience: &Patience,
        deadline: Option<Instant>,
    ) -> Result<Call, DriverError> {
        let mut refreshed = false;
        loop {
            let auth = self.bearer(deadline).await?;
            let mut req = Request::new(method.clone(), url, what, stage)
                .header(reqwest::header::ACCEPT, "application/json")
                .within(self.cfg.request_timeout, deadline);
            if method == Method::POST {
                req = req.body("application/json", Vec::new());
            }
            req.max_body = MAX_BODY;
            if !req.add_secret(reqwest::header::AUTHORIZATION, &auth) {
                return Err(config(
                    "the token cannot be carried in an HTTP header".into(),
                ));
            }
            let http = self.api.as_mut().expect("made in prepare");
            let reply = match http.send_patiently(&req, patience).await {
                Ok(r) => r,
                Err(f) if f.maybe_delivered() => return Ok(Call::Silent(f.into_error())),
                Err(f) => return Err(f.into_error()),
            };
            if reply.status != 401 {
                return Ok(Call::Reply(reply));
            }
            let e = model::api_error(401, reply.scrubbed().as_bytes());
            if !refreshed {
                // Refused before it was carried out: a new token, once.
                tracing::debug!(reason = %e.reason, "401: fetching a new token");
                refreshed = true;
                self.token = None;
                continue;
            }
            return Err(DriverError::new(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                format!(
                    "Compute Engine refused the token for {what} (401 {}: {}), also a fresh one",
                    e.reason, e.message
                ),
            ));
        }
    }

    /// A GET whose silence is an error.
    pub(super) async fn get(
        &mut self,
        url: &str,
        what: &str,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Reply, DriverError> {
        match self
            .call(
                Method::GET,
                url,
                what,
                stage,
                &Patience::THROTTLE_OR_BUSY,
                deadline,
            )
            .await?
        {
            Call::Reply(r) => Ok(r),
            Call::Silent(e) => Err(e),
        }
    }

    /// A refusal of the API as an error of its kind.
    pub(super) fn refusal(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let e = model::api_error(reply.status, reply.scrubbed().as_bytes());
        let kind = match e.status {
            403 => ErrorKind::PrivilegeNotObtained,
            404 => ErrorKind::Config,
            409 | 429 | 503 | 504 => ErrorKind::Busy,
            _ => ErrorKind::DeviceError,
        };
        let message = match e.status {
            403 => format!(
                "Compute Engine forbids {what} ({} {}): the service account needs the \
                 permissions docs/gce.md lists",
                e.reason, e.message
            ),
            404 => format!(
                "no instance '{}' in zone '{}' of project {} ({what}: {} {})",
                self.cfg.instance, self.cfg.zone, self.cfg.project, e.reason, e.message
            ),
            s => format!(
                "Compute Engine answered {what} with {s} {}: {}",
                e.reason, e.message
            ),
        };
        DriverError::new(kind, stage, message)
    }

    /// Reads the instance and checks that the answer is about it.
    pub(super) async fn read_instance(
        &mut self,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Instance, DriverError> {
        self.prepare(deadline).await?;
        let url = self.instance_url();
        let what = format!("GET instances/{}", self.cfg.instance);
        let reply = self.get(&url, &what, stage, deadline).await?;
        if !reply.ok() {
            return Err(self.refusal(&reply, &what, stage));
        }
        let v: serde_json::Value = serde_json::from_slice(&reply.body).map_err(|e| {
            DriverError::new(ErrorKind::Protocol, stage, format!("{what}: not JSON: {e}"))
        })?;
        let i = model::instance(&v)
            .map_err(|e| DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}")))?;
        if let Some(why) = model::wrong_instance(
            &i,
            &self.cfg.instance,
            &self.cfg.zone,
            self.instance_id.as_deref(),
        ) {
            return Err(DriverError::new(
                ErrorKind::IdentityMismatch,
                stage,
                format!("{what}: {why}; this answer is not evidence about the instance asked for"),
            ));
        }
        if self.instance_id.is_none() {
            self.instance_id = Some(i.id.clone());
        }
        self.last = Some(i.clone());
        Ok(i)
    }

    /// The zone of the instance, by its name in the project's aggregated
    /// list (all pages).
    async fn find_zone(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let filter = crate::http::client::form_encode(&format!("name = \"{}\"", self.cfg.instance));
        let base = format!(
            "{}/compute/v1/projects/{}/aggregated/instances?filter={filter}",
            self.api_base(),
            self.cfg.project
        );
        let mut url = base.clone();
        let what = format!(
            "GET aggregated/instances (the zone of {})",
            self.cfg.instance
        );
        for _ in 0..list::MAX_PAGES {
            let reply = self.get(&url, &what, Stage::Authenticate, deadline).await?;
            if !reply.ok() {
                return Err(self.refusal(&reply, &what, Stage::Authenticate));
            }
            let (zone, next) = model::aggregated_zone(&reply.body, &self.cfg.instance)
                .map_err(|e| DriverError::new(ErrorKind::Protocol, Stage::Authenticate, e.0))?;
            if let Some(z) = zone {
                crate::gce::config::check_zone(&z).map_err(|e| config(e.to_string()))?;
                return Ok(z);
            }
            match next {
                Some(t) => {
                    url = format!("{base}&pageToken={}", crate::http::client::form_encode(&t))
                }
                None => break,
            }
        }
        Err(DriverError::new(
            ErrorKind::Config,
            Stage::Authenticate,
            format!(
                "no instance '{}' in any zone of project {}: give --zone",
                self.cfg.instance, self.cfg.project
            ),
        ))
    }
}
