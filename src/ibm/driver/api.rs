//! The API under the driver: one client for IAM and the service (the
//! shared trust, upstream's `--proxy` or the environment's), the metadata
//! service's client (plain HTTP on the host, no proxy; made only for the
//! self-fencing guard), the bearer token
//! (taken from the token cache or fetched when none is held, fetched when
//! the one held is near its end, and again once after a 401, the cached
//! one then removed), one request with 429 waited out, and the read of
//! the instance.

use super::*;
use crate::http::{Failed, Patience, Proxy, Reply, Request, Setup, TokenCache};
use reqwest::Method;
use std::time::{Duration, SystemTime};

/// Largest answer read.
pub const MAX_BODY: usize = 8 << 20;

/// What a call gave: an answer, or silence after the request may have left.
pub(super) enum Call {
    /// An answer (any status but 401 and the throttling ones).
    Reply(Reply),
    /// Sent, and no answer: it may have been carried out.
    Silent(DriverError),
}

/// When a token that lives `life` from now is fetched again: IBM's SDKs
/// refresh at 80 % of the life; never later than 10 s before its end.
fn renew_at(life: Duration) -> Instant {
    let early = (life / 5).max(Duration::from_secs(10)).min(life);
    Instant::now() + (life - early)
}

fn config(message: String) -> DriverError {
    DriverError::new(ErrorKind::Config, Stage::Authenticate, message)
}

impl IbmDriver {
    pub(super) fn clients(&mut self) -> Result<(), DriverError> {
        if self.http.is_none() {
            let trust = crate::tls::trust(false, self.cfg.ca_cert.as_deref(), None)
                .map_err(|e| config(e.to_string()))?;
            let env = self.env.clone();
            let lookup = move |k: &str| env.lookup(k);
            let proxy = match self.cfg.proxy_url() {
                Some(p) => Proxy::Url(p),
                None => Proxy::Env,
            };
            let http = Client::new(Setup {
                trust: Some(trust),
                proxy,
                env: &lookup,
                tls_hint: Some("IBM Cloud's CA comes from the system trust store or --ca-cert"),
                ..Setup::new(self.cfg.service.name())
            })?;
            http.scrub().remember(self.cfg.apikey.expose());
            self.http = Some(http);
        }
        Ok(())
    }

    /// The VPC metadata service's client, made when the self-fencing guard
    /// first needs it (a status never does).
    pub(super) fn meta_client(&mut self) -> Result<(), DriverError> {
        if self.meta.is_none() && self.cfg.service == Service::Vpc {
            self.meta = Some(Client::new(Setup {
                trust: None,
                proxy: Proxy::None,
                ..Setup::new("the VPC instance metadata service")
            })?);
        }
        Ok(())
    }

    /// The token cache of this API key and IAM URL, when there is one.
    fn cache(&mut self) -> Option<&TokenCache> {
        if self.cache.is_none() {
            let env = self.env.clone();
            let lookup = move |k: &str| env.lookup(k);
            let url = self.cfg.iam_token_url(&self.env);
            self.cache = Some(TokenCache::for_key_in_env(
                &lookup,
                "IBM Cloud IAM",
                &url,
                self.cfg.apikey.expose(),
            ));
        }
        self.cache.as_ref().and_then(Option::as_ref)
    }

    /// A token from the cache, when none is held and one there has time
    /// left.
    fn cached_token(&mut self) -> Option<Token> {
        if self.token.is_some() || self.cache_refused || self.cfg.apikey.is_empty() {
            return None;
        }
        let (value, expires) = self.cache()?.load()?;
        let left = expires
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO);
        self.cached += 1;
        let http = self.http.as_mut().expect("made in clients");
        http.scrub().remember(value.expose());
        tracing::info!(
            left_s = left.as_secs(),
            "IAM token from the token cache (no IAM exchange)"
        );
        Some(Token {
            value,
            renew_at: renew_at(left),
            expires,
            cached: true,
        })
    }

    /// The bearer header's value: the token held, else one from the
    /// cache, else one fetched (also when the one held is near its end).
    pub(super) async fn bearer(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<zeroize::Zeroizing<Vec<u8>>, DriverError> {
        self.clients()?;
        if self
            .token
            .as_ref()
            .is_none_or(|t| Instant::now() >= t.renew_at)
        {
            // The API's connection opens while IAM answers.
            let api = self.cfg.api_base(&self.env);
            let http = self.http.as_mut().expect("made in clients");
            http.preopen(&api, self.cfg.request_timeout);
            match self.cached_token() {
                Some(t) => self.token = Some(t),
                None => {
                    let t = self.fetch_token(deadline).await?;
                    if let Some(c) = self.cache() {
                        c.store(t.value.expose(), t.expires);
                    }
                    tracing::info!("IAM token fetched");
                    self.token = Some(t);
                }
            }
        }
        let t = self.token.as_ref().expect("fetched above");
        let mut v = zeroize::Zeroizing::new(b"Bearer ".to_vec());
        v.extend_from_slice(t.value.expose());
        Ok(v)
    }

    /// The API key exchanged for a token at IAM.
    async fn fetch_token(&mut self, deadline: Option<Instant>) -> Result<Token, DriverError> {
        if self.cfg.apikey.is_empty() {
            return Err(config(ConfigError::NoApiKey.to_string()));
        }
        let url = self.cfg.iam_token_url(&self.env);
        let key = String::from_utf8_lossy(self.cfg.apikey.expose()).into_owned();
        let key = zeroize::Zeroizing::new(key);
        let req = Request::new(Method::POST, &url, "an IAM token", Stage::Authenticate)
            .peer("IBM Cloud IAM")
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&[
                ("grant_type", "urn:ibm:params:oauth:grant-type:apikey"),
                ("apikey", key.as_str()),
            ])
            .within(self.cfg.request_timeout, deadline);
        let http = self.http.as_mut().expect("made in clients");
        let reply = http
            .send_patiently(&req, &Patience::THROTTLE_OR_BUSY)
            .await
            .map_err(Failed::into_error)?;
        self.tokens += 1;
        if !reply.ok() {
            let (code, message) = model::api_error(&reply.scrubbed());
            let kind = match reply.status {
                400 | 401 | 403 => ErrorKind::PasswordInvalid,
                _ => ErrorKind::DeviceError,
            };
            return Err(DriverError::new(
                kind,
                Stage::Authenticate,
                format!(
                    "IAM refused the API key ({} {code}: {message})",
                    reply.status
                ),
            ));
        }
        let t = model::token(&reply.body)
            .map_err(|e| DriverError::new(ErrorKind::Protocol, Stage::Authenticate, e.0))?;
        http.scrub().remember(t.access_token.as_bytes());
        Ok(Token {
            value: Secret::from_str_value(&t.access_token),
            renew_at: renew_at(t.life),
            expires: SystemTime::now() + t.life,
            cached: false,
        })
    }

    /// One API request with the token (and, for Power VS, the CRN); 429
    /// waited out within the deadline (`patience`), a 401 answered by one
    /// fresh token.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn call(
        &mut self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
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
            if let Some(b) = body {
                req = req.json(b);
            }
            if self.cfg.service == Service::PowerVs {
                req = req.header(
                    reqwest::header::HeaderName::from_static("crn"),
                    &self.cfg.crn,
                );
            }
            req.max_body = MAX_BODY;
            if !req.add_secret(reqwest::header::AUTHORIZATION, &auth) {
                return Err(config(
                    "the token cannot be carried in an HTTP header".into(),
                ));
            }
            let http = self.http.as_mut().expect("made in bearer");
            let reply = match http.send_patiently(&req, patience).await {
                Ok(r) => r,
                Err(f) if f.maybe_delivered() => return Ok(Call::Silent(f.into_error())),
                Err(f) => return Err(f.into_error()),
            };
            if reply.status != 401 {
                return Ok(Call::Reply(reply));
            }
            let (code, message) = model::api_error(&reply.scrubbed());
            if !refreshed {
                // Refused before it was carried out: a new token, once.
                tracing::debug!(%code, "401: fetching a new token");
                refreshed = true;
                // Never the refused token again, from the cache either.
                self.token = None;
                self.cache_refused = true;
                if let Some(c) = self.cache() {
                    c.forget();
                }
                continue;
            }
            return Err(DriverError::new(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                format!(
                    "{} refused the token for {what} (401 {code}: {message}), also a fresh one",
                    self.cfg.service.name()
                ),
            ));
        }
    }

    /// A refusal as an error of its kind.
    pub(super) fn refusal(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let (code, message) = model::api_error(&reply.scrubbed());
        let kind = match reply.status {
            403 => ErrorKind::PrivilegeNotObtained,
            404 => ErrorKind::Config,
            409 | 429 | 503 | 504 => ErrorKind::Busy,
            _ => ErrorKind::DeviceError,
        };
        let name = self.cfg.service.name();
        let message = match reply.status {
            403 => format!(
                "{name} forbids {what} (403 {code}: {message}): the API key's service ID or \
                 user needs the Operator role on the instance (docs/ibm.md)"
            ),
            404 => format!(
                "{name} has no instance '{}'{} ({what}: 404 {code}: {message})",
                self.cfg.instance,
                match self.cfg.service {
                    Service::Vpc => format!(" in region {}", self.cfg.region),
                    Service::PowerVs => format!(" in workspace {}", self.cfg.workspace),
                }
            ),
            s => format!("{name} answered {what} with {s} {code}: {message}"),
        };
        DriverError::new(kind, stage, message)
    }

    /// The instance's URL (`suffix` appended to its path).
    pub(super) fn instance_url(&self, id: &str, suffix: &str) -> String {
        let base = self.cfg.api_base(&self.env);
        match self.cfg.service {
            Service::Vpc => {
                format!("{base}/v1/instances/{id}{suffix}?version={VPC_VERSION}&generation=2")
            }
            Service::PowerVs => format!(
                "{base}/pcloud/v1/cloud-instances/{}/pvm-instances/{id}{suffix}",
                self.cfg.workspace
            ),
        }
    }

    /// GET one instance, by `id`; checks that the answer is about it.
    pub(super) async fn read_id(
        &mut self,
        id: &str,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Machine, DriverError> {
        let url = self.instance_url(id, "");
        let what = format!("GET instance {id}");
        let reply = match self
            .call(
                Method::GET,
                &url,
                None,
                &what,
                stage,
                &Patience::THROTTLE_OR_BUSY,
                deadline,
            )
            .await?
        {
            Call::Reply(r) => r,
            Call::Silent(e) => return Err(e),
        };
        if !reply.ok() {
            return Err(self.refusal(&reply, &what, stage));
        }
        let v: serde_json::Value = serde_json::from_slice(&reply.body).map_err(|e| {
            DriverError::new(ErrorKind::Protocol, stage, format!("{what}: not JSON: {e}"))
        })?;
        let m = match self.cfg.service {
            Service::Vpc => model::vpc_instance(&v),
            Service::PowerVs => model::powervs_instance(&v),
        }
        .map_err(|e| DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {}", e.0)))?;
        if m.id != id {
            return Err(DriverError::new(
                ErrorKind::IdentityMismatch,
                stage,
                format!(
                    "{what}: the answer is about instance {}; it is not evidence about the \
                     instance asked for",
                    model::printable(&m.id, 80)
                ),
            ));
        }
        Ok(m)
    }

    /// Reads the instance the configuration names.
    pub(super) async fn read_machine(
        &mut self,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Machine, DriverError> {
        let id = self.cfg.instance.clone();
        let m = self.read_id(&id, stage, deadline).await?;
        self.last = Some(m.clone());
        Ok(m)
    }

    /// The VPC metadata service's base URL.
    pub(super) fn metadata_base(&self) -> String {
        self.env
            .get("IBM_VPC_METADATA_SERVICE_ENDPOINT")
            .unwrap_or("http://api.metadata.cloud.ibm.com")
            .trim_end_matches('/')
            .to_string()
    }
}
