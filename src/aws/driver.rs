//! The engine's [`PowerDriver`] for one EC2 instance.
//!
//! * `connect`: the credentials (the chain, [`super::credentials`]), then one
//!   `DescribeInstances` of the instance: it authenticates, shows that the
//!   instance exists, and gives its state, private DNS name and tags (the
//!   identity a pin is compared with). The first `observe` uses that read.
//! * `observe`: `DescribeInstances`; `running` is on, `stopped` and
//!   `terminated` off, `pending` / `stopping` / `shutting-down` a transition
//!   the engine waits through, anything else unreadable (never guessed).
//! * `command(Off)`: the self-fencing guard (the metadata service says which
//!   instance this process runs on; the target itself is refused unless
//!   allowed), then `StopInstances` with `Force=true` and `SkipOsShutdown=true`
//!   (sent once more without it only when EC2's answer proves it refused
//!   that parameter). `command(On)`:
//!   `StartInstances`. A reboot is the engine's off (confirmed `stopped`)
//!   then on (confirmed `running`); `RebootInstances`, a soft reboot that
//!   nothing can observe, is never used.
//! * Throttling (`RequestLimitExceeded` and kin): EC2 did not carry out the
//!   request, so the same request is signed again and sent after an
//!   exponential pause with jitter, as long as the step deadline allows.
//!
//! As a witness: the EC2 API runs outside the instance, so its reading of
//! the instance's state is evidence independent of the node's own operating
//! system (which, as the party under suspicion, could contradict but never
//! prove that it is off).

use super::config::{AwsConfig, ConfigError, Endpoint, Env};
use super::credentials::{self, Credentials};
use super::http::{sensitive, ClientError, Http, Request};
use super::imds::{Imds, ImdsError};
use super::model::{self, Instance};
use super::sigv4;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{Identity, MachineName};
use crate::engine::power::{Observed, PowerCommand, PowerState};
use reqwest::header::{HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE, HOST};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The EC2 API version fencekit speaks.
pub const EC2_VERSION: &str = "2016-11-15";
/// The longest pause between two attempts of a throttled request.
const THROTTLE_PAUSE_MAX: Duration = Duration::from_secs(5);
/// How long throttled requests are tried again without a deadline
/// (Pacemaker's `disable_timeout`): never forever.
const THROTTLE_BUDGET: Duration = Duration::from_secs(60);
/// Most pages a listing reads.
const MAX_PAGES: usize = 100;

/// Counters for the record and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// HTTP requests sent (EC2, STS and the metadata service).
    pub requests: u32,
    /// Requests EC2 throttled (each was sent again after a pause, or failed).
    pub throttled: u32,
}

/// A configuration a driver cannot be made from.
#[derive(Debug, thiserror::Error)]
pub enum NewError {
    /// The settings.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An endpoint from the environment.
    #[error("{var}: {source}")]
    EnvEndpoint {
        /// The variable.
        var: &'static str,
        /// What is wrong.
        source: ConfigError,
    },
}

/// What the self-fencing guard found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Guard {
    /// Not asked yet.
    Unchecked,
    /// The metadata service named this process's instance.
    Runs(String),
    /// It could not say; the guard did not apply.
    Unknown,
}

/// One EC2 instance as the engine drives it.
pub struct AwsDriver {
    cfg: AwsConfig,
    env: Env,
    ec2: Endpoint,
    http: Option<Http>,
    imds: Result<Imds, ImdsError>,
    creds: Option<Credentials>,
    /// The last DescribeInstances read of the instance.
    last: Option<Instance>,
    /// `last` came from `connect` and no `observe` used it yet.
    fresh: bool,
    guard: Guard,
    warnings: Vec<String>,
    throttled: u32,
}

fn hv(s: &str) -> HeaderValue {
    // Every value passed here is ASCII built by this module.
    HeaderValue::from_str(s).unwrap_or_else(|_| HeaderValue::from_static("invalid"))
}

impl AwsDriver {
    /// A driver with the process's environment (checks the settings; no request yet).
    pub fn new(cfg: AwsConfig) -> Result<Self, NewError> {
        Self::with_env(cfg, Env::from_process())
    }

    /// A driver reading `env` instead of the process's environment.
    pub fn with_env(cfg: AwsConfig, env: Env) -> Result<Self, NewError> {
        cfg.validate()?;
        let ec2 = match (&cfg.endpoint, env.endpoint("ec2")) {
            (Some(e), _) => Endpoint::parse(e)?,
            (None, Some(e)) => Endpoint::parse(e).map_err(|source| NewError::EnvEndpoint {
                var: if env.get("AWS_ENDPOINT_URL_EC2").is_some() {
                    "AWS_ENDPOINT_URL_EC2"
                } else {
                    "AWS_ENDPOINT_URL"
                },
                source,
            })?,
            (None, None) => Endpoint::default_for("ec2", &cfg.region),
        };
        let imds = Imds::from_env(&env);
        Ok(AwsDriver {
            cfg,
            env,
            ec2,
            http: None,
            imds,
            creds: None,
            last: None,
            fresh: false,
            guard: Guard::Unchecked,
            warnings: Vec::new(),
            throttled: 0,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        Stats {
            requests: self.http.as_ref().map_or(0, |h| h.requests()),
            throttled: self.throttled,
        }
    }

    /// The EC2 endpoint used.
    pub fn endpoint(&self) -> &str {
        &self.ec2.url
    }

    /// The last read of the instance.
    pub fn instance(&self) -> Option<&Instance> {
        self.last.as_ref()
    }

    fn http(&mut self) -> Result<&mut Http, DriverError> {
        if self.http.is_none() {
            // The trust store is read only for https (EC2, or STS for a web
            // identity, whose default endpoint is https).
            let sts_tls = self.env.get("AWS_ROLE_ARN").is_some()
                && self
                    .env
                    .endpoint("sts")
                    .is_none_or(|e| e.starts_with("https"));
            let http = Http::new(
                self.ec2.tls || sts_tls,
                &self.cfg.trust,
                self.env.get("AWS_CA_BUNDLE"),
            )
            .map_err(|e: ClientError| {
                DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string())
            })?;
            self.http = Some(http);
        }
        Ok(self.http.as_mut().expect("just set"))
    }

    async fn credentials(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if self.creds.is_some() {
            return Ok(());
        }
        self.http()?;
        let http = self.http.as_mut().expect("made above");
        let c = credentials::resolve(
            &self.cfg.keys,
            credentials::Context {
                http,
                env: &self.env,
                region: &self.cfg.region,
                imds: &mut self.imds,
                request_timeout: self.cfg.request_timeout,
                deadline,
            },
        )
        .await
        .map_err(credentials::CredentialError::into_driver)?;
        self.creds = Some(c);
        Ok(())
    }

    /// One signed EC2 Query API call; throttled answers are sent again
    /// after a pause within the deadline. `Ok`: the 2xx body.
    async fn call(
        &mut self,
        action: &str,
        params: &[(&str, &str)],
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Vec<u8>, DriverError> {
        let what = what_of(action, params);
        self.call_api(action, params, stage, deadline)
            .await?
            .map_err(|e| e.classify(stage, &what))
    }

    /// [`Self::call`] with EC2's error answer (other than throttling) given
    /// back as it came: `Ok(Err(e))` is an answer that refused the request.
    async fn call_api(
        &mut self,
        action: &str,
        params: &[(&str, &str)],
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Result<Vec<u8>, model::ApiError>, DriverError> {
        self.credentials(deadline).await?;
        let what = what_of(action, params);
        let mut all: Vec<(&str, &str)> = vec![("Action", action), ("Version", EC2_VERSION)];
        all.extend_from_slice(params);
        let body = sigv4::canonical_query(&all);
        let peer = format!("EC2 at {}", self.ec2.url);
        let url = format!("{}/", self.ec2.url);
        let started = Instant::now();
        let until = deadline.unwrap_or(started + THROTTLE_BUDGET);
        let mut pause = Duration::from_millis(200);
        let mut tries = 0u32;
        loop {
            tries += 1;
            let headers = self.sign(&body, stage)?;
            let r = Request {
                method: reqwest::Method::POST,
                url: &url,
                headers,
                body: Some(body.as_bytes().to_vec()),
                what: &what,
                peer: &peer,
            };
            let timeout = self.cfg.request_timeout;
            let reply = self.http()?.send(&r, stage, timeout, deadline).await?;
            if reply.ok() {
                return Ok(Ok(reply.body));
            }
            let err = model::api_error(reply.status, reply.scrubbed().as_bytes());
            if !model::is_throttling(&err.code) {
                return Ok(Err(err));
            }
            self.throttled += 1;
            let jitter =
                Duration::from_millis(rand::random::<u64>() % (pause.as_millis() as u64 / 2 + 1));
            let wait = pause + jitter;
            if Instant::now() + wait >= until {
                return Err(DriverError::new(
                    ErrorKind::Busy,
                    stage,
                    format!(
                        "EC2 throttled {what} {tries} time(s) ({}); no time is left to try again \
                         ({:.1}s spent)",
                        err.code,
                        started.elapsed().as_secs_f64()
                    ),
                ));
            }
            tracing::debug!(code = %err.code, tries, wait_ms = wait.as_millis() as u64, "throttled; trying again");
            tokio::time::sleep(wait).await;
            pause = (pause * 2).min(THROTTLE_PAUSE_MAX);
        }
    }

    /// The headers of one signed request (signed now).
    fn sign(
        &self,
        body: &str,
        stage: Stage,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, DriverError> {
        let creds = self.creds.as_ref().ok_or_else(|| {
            DriverError::new(ErrorKind::Protocol, stage, "no credentials resolved")
        })?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let amz_date = sigv4::amz_date(now);
        const CT: &str = "application/x-www-form-urlencoded; charset=utf-8";
        let token = creds
            .session_token
            .as_ref()
            .map(|t| String::from_utf8_lossy(t.expose()).into_owned());
        let token = token.map(zeroize::Zeroizing::new);
        let mut signed: Vec<(&str, &str)> = vec![
            ("content-type", CT),
            ("host", &self.ec2.host),
            ("x-amz-date", &amz_date),
        ];
        if let Some(t) = &token {
            signed.push(("x-amz-security-token", t.as_str()));
        }
        let scope = sigv4::Scope {
            amz_date: &amz_date,
            region: &self.cfg.region,
            service: "ec2",
        };
        let auth = sigv4::authorization(
            &creds.access_key_id,
            creds.secret.expose(),
            &scope,
            &sigv4::Request {
                method: "POST",
                path: "/",
                query: &[],
                headers: &signed,
                payload: body.as_bytes(),
            },
        );
        let bad = || {
            DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                "the credentials cannot be carried in an HTTP header",
            )
        };
        let mut headers = vec![
            (CONTENT_TYPE, HeaderValue::from_static(CT)),
            (HOST, hv(&self.ec2.host)),
            (HeaderName::from_static("x-amz-date"), hv(&amz_date)),
            (AUTHORIZATION, sensitive(auth.as_bytes()).ok_or_else(bad)?),
        ];
        if let Some(t) = &token {
            headers.push((
                HeaderName::from_static("x-amz-security-token"),
                sensitive(t.as_bytes()).ok_or_else(bad)?,
            ));
        }
        Ok(headers)
    }

    /// Reads the instance (`DescribeInstances` of its ID).
    async fn describe(
        &mut self,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Instance, DriverError> {
        let id = self.cfg.instance_id.clone();
        let body = self
            .call(
                "DescribeInstances",
                &[("InstanceId.1", &id)],
                stage,
                deadline,
            )
            .await?;
        let (list, _) = model::describe_instances(&body).map_err(|e| {
            DriverError::new(
                ErrorKind::Protocol,
                stage,
                format!("DescribeInstances {id}: {e}"),
            )
        })?;
        // The answer must be about the instance asked for, once: another
        // instance's state is a contradiction, never evidence.
        let others: Vec<String> = list
            .iter()
            .filter(|i| i.id != id)
            .map(|i| crate::http::printable(&i.id, 40))
            .collect();
        let mine = list.iter().filter(|i| i.id == id).count();
        if !others.is_empty() || mine > 1 {
            return Err(DriverError::new(
                ErrorKind::StatusUnreadable,
                stage,
                format!(
                    "DescribeInstances {id} answered about {}: an answer about another object \
                     is not believed",
                    if mine > 1 {
                        format!("{id} {mine} times")
                    } else {
                        others.join(", ")
                    }
                ),
            ));
        }
        match list.into_iter().find(|i| i.id == id) {
            Some(i) => {
                self.last = Some(i.clone());
                Ok(i)
            }
            None => Err(DriverError::new(
                ErrorKind::Config,
                stage,
                format!(
                    "no such instance: EC2 lists no {id} in region {} (check the instance ID \
                     and the region)",
                    self.cfg.region
                ),
            )),
        }
    }

    /// The instances the configuration's filter selects (all without one).
    pub async fn list_configured(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<Instance>, DriverError> {
        let filter = self.cfg.list_filter.clone();
        self.list(filter, deadline).await
    }

    /// Every instance EC2 lists (with `filter`: `Filter.1`), page by page
    /// within the deadline.
    pub async fn list(
        &mut self,
        filter: Option<(String, String)>,
        deadline: Option<Instant>,
    ) -> Result<Vec<Instance>, DriverError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut params: Vec<(&str, &str)> = vec![("MaxResults", "1000")];
            if let Some((k, v)) = &filter {
                params.push(("Filter.1.Name", k));
                params.push(("Filter.1.Value.1", v));
            }
            if let Some(t) = &token {
                params.push(("NextToken", t));
            }
            let body = self
                .call("DescribeInstances", &params, Stage::Status, deadline)
                .await?;
            let (page, next) = model::describe_instances(&body).map_err(|e| {
                DriverError::new(
                    ErrorKind::Protocol,
                    Stage::Status,
                    format!("DescribeInstances: {e}"),
                )
            })?;
            out.extend(page);
            match next {
                Some(n) => token = Some(n),
                None => return Ok(out),
            }
        }
        Err(DriverError::new(
            ErrorKind::Protocol,
            Stage::Status,
            format!("DescribeInstances gave more than {MAX_PAGES} pages; narrow it with a filter"),
        ))
    }

    /// What EC2 says beyond the state, for `verify`: the last change and its
    /// reason, and (with `checks`) DescribeInstanceStatus's status checks
    /// and scheduled events. Lines of text; failures are lines too.
    pub async fn evidence(&mut self, checks: bool, deadline: Option<Instant>) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(i) = &self.last {
            if let Some(r) = &i.reason {
                out.push(format!(
                    "EC2 StateTransitionReason of {}: {}",
                    i.id,
                    model::printable(r, 200)
                ));
            }
            if let Some((code, msg)) = &i.state_reason {
                out.push(format!(
                    "EC2 StateReason of {}: {} ({})",
                    i.id,
                    model::printable(code, 80),
                    model::printable(msg, 200)
                ));
            }
        }
        if checks {
            let id = self.cfg.instance_id.clone();
            let r = self
                .call(
                    "DescribeInstanceStatus",
                    &[("InstanceId.1", &id), ("IncludeAllInstances", "true")],
                    Stage::Status,
                    deadline,
                )
                .await;
            out.push(match r.map(|b| model::instance_status(&b)) {
                Ok(Ok(Some(s))) => format!(
                    "EC2 DescribeInstanceStatus of {id}: {}, system status {}, instance status {}{}",
                    s.state,
                    if s.system.is_empty() { "not reported" } else { &s.system },
                    if s.instance.is_empty() { "not reported" } else { &s.instance },
                    if s.events.is_empty() {
                        String::new()
                    } else {
                        format!(", scheduled events {}", s.events.join(", "))
                    }
                ),
                Ok(Ok(None)) => format!("EC2 DescribeInstanceStatus lists nothing for {id}"),
                Ok(Err(e)) => format!("EC2 DescribeInstanceStatus of {id}: {e}"),
                Err(e) => format!("EC2 DescribeInstanceStatus of {id} failed: {e}"),
            });
        }
        out
    }

    /// The self-fencing guard, before a stop: asks the metadata service
    /// which instance this process runs on. The target itself is refused
    /// unless allowed; a service that cannot say is recorded and the stop
    /// goes on (a FAR pod may not reach it).
    async fn guard(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if self.guard == Guard::Unchecked {
            self.http()?;
            let http = self.http.as_mut().expect("made above");
            let found = match &mut self.imds {
                Ok(imds) => imds
                    .get(http, "/latest/meta-data/instance-id", deadline)
                    .await
                    .map(|s| s.to_string()),
                Err(e) => Err(e.clone()),
            };
            self.guard = match found {
                Ok(id) if !id.is_empty() => Guard::Runs(id),
                other => {
                    let why = match other {
                        Err(e) => e.to_string(),
                        Ok(_) => "it gave an empty instance ID".into(),
                    };
                    self.warnings.push(format!(
                        "self-fencing guard not applied: which instance this process runs on is \
                         unknown ({why}); stopping {} anyway",
                        self.cfg.instance_id
                    ));
                    Guard::Unknown
                }
            };
        }
        match &self.guard {
            Guard::Runs(me) if *me == self.cfg.instance_id => {
                if self.cfg.allow_self_fence {
                    self.warnings.push(format!(
                        "{me} is the instance this process runs on: stopping it anyway \
                         (self-fencing allowed)"
                    ));
                    Ok(())
                } else {
                    Err(DriverError::new(
                        ErrorKind::SelfFence,
                        Stage::Command,
                        format!(
                            "refusing to stop {me}: the instance metadata service says this \
                             process runs on it (self-fencing; allow it with \
                             --allow-self-fence); no power command was sent"
                        ),
                    ))
                }
            }
            _ => Ok(()),
        }
    }

    /// `StopInstances` with `Force`, and `SkipOsShutdown` unless turned
    /// off. At most once: the stop is sent a second time (without
    /// `SkipOsShutdown`) only after an answer that proves EC2 refused that
    /// parameter and so carried nothing out; a lost or unreadable answer is
    /// the first stop's outcome, never a reason to send it again.
    async fn stop(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        const FORCE: (&str, &str) = ("Force", "true");
        if !self.cfg.skip_os_shutdown {
            return self.change("StopInstances", &[FORCE], deadline).await;
        }
        let with = [FORCE, ("SkipOsShutdown", "true")];
        match self.change_api("StopInstances", &with, deadline).await? {
            Ok(()) => {
                tracing::debug!("StopInstances sent with SkipOsShutdown=true");
                Ok(())
            }
            Err(e) if model::refuses_parameter(&e, "SkipOsShutdown") => {
                self.warnings.push(format!(
                    "EC2 refused SkipOsShutdown ({}: {}); nothing was stopped by that request, \
                     so {} is stopped again without it (Force only: the guest's operating \
                     system may take its shutdown time first)",
                    model::printable(&e.code, 80),
                    model::printable(&e.message, 200),
                    self.cfg.instance_id
                ));
                self.change("StopInstances", &[FORCE], deadline).await
            }
            Err(e) => {
                let what = format!("StopInstances {}", self.cfg.instance_id);
                Err(e.classify(Stage::Command, &what))
            }
        }
    }

    async fn change(
        &mut self,
        action: &str,
        extra: &[(&str, &str)],
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let what = format!("{action} {}", self.cfg.instance_id);
        self.change_api(action, extra, deadline)
            .await?
            .map_err(|e| e.classify(Stage::Command, &what))
    }

    /// [`Self::change`] with EC2's refusal given back as it came.
    async fn change_api(
        &mut self,
        action: &str,
        extra: &[(&str, &str)],
        deadline: Option<Instant>,
    ) -> Result<Result<(), model::ApiError>, DriverError> {
        let id = self.cfg.instance_id.clone();
        let mut params = vec![("InstanceId.1", id.as_str())];
        params.extend_from_slice(extra);
        let body = match self
            .call_api(action, &params, Stage::Command, deadline)
            .await?
        {
            Ok(b) => b,
            Err(e) => return Ok(Err(e)),
        };
        let changes = model::state_changes(&body).map_err(|e| {
            DriverError::new(
                ErrorKind::Protocol,
                Stage::Command,
                format!("{action} {id}: {e}"),
            )
        })?;
        if !changes.iter().any(|(i, _, _)| *i == id) {
            return Err(DriverError::new(
                ErrorKind::Protocol,
                Stage::Command,
                format!("the answer to {action} {id} does not name {id}"),
            ));
        }
        // The answer's state is not a reading to act on; the engine polls.
        self.fresh = false;
        Ok(Ok(()))
    }
}

/// `ACTION INSTANCE` for messages (the action alone without an instance).
fn what_of(action: &str, params: &[(&str, &str)]) -> String {
    match params.iter().find(|(k, _)| k.starts_with("InstanceId")) {
        Some((_, id)) => format!("{action} {id}"),
        None => action.to_string(),
    }
}

impl PowerDriver for AwsDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        if self.cfg.instance_id.is_empty() {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                ConfigError::NoInstance.to_string(),
            ));
        }
        self.credentials(deadline).await?;
        let i = self.describe(Stage::Authenticate, deadline).await?;
        self.fresh = true;
        let creds = self.creds.as_ref().expect("resolved above");
        let dns = i
            .private_dns_name
            .as_deref()
            .map(|d| format!(", private DNS name {d}"))
            .unwrap_or_default();
        Ok(format!(
            "EC2 at {} (region {}), credentials from {} (access key {}); instance {} is {}{dns}",
            self.ec2.url,
            self.cfg.region,
            creds.source,
            creds.key_hint(),
            i.id,
            model::printable(&i.state, 40)
        ))
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        match self.observe(deadline).await? {
            Observed::Settled(s) => Ok(s),
            Observed::InTransition(t) => Err(DriverError::new(
                ErrorKind::Busy,
                Stage::Status,
                format!(
                    "{} is {} ({t})",
                    self.cfg.instance_id,
                    self.last.as_ref().map_or("", |i| i.state.as_str())
                ),
            )),
        }
    }

    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        let i = match (self.fresh, &self.last) {
            (true, Some(i)) => i.clone(),
            _ => self.describe(Stage::Status, deadline).await?,
        };
        self.fresh = false;
        model::observed(&i.state).ok_or_else(|| {
            DriverError::new(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!(
                    "EC2 reports state '{}' for {}, which is neither on, off nor a known transition",
                    model::printable(&i.state, 40),
                    i.id
                ),
            )
        })
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        match command {
            PowerCommand::Off => {
                self.guard(deadline).await?;
                self.stop(deadline).await
            }
            PowerCommand::On => {
                if self.last.as_ref().is_some_and(|i| i.state == "terminated") {
                    return Err(DriverError::new(
                        ErrorKind::Unsupported,
                        Stage::Command,
                        format!(
                            "{} is terminated: a terminated instance cannot be started again",
                            self.cfg.instance_id
                        ),
                    ));
                }
                self.change("StartInstances", &[], deadline).await
            }
            other => Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Command,
                format!(
                    "EC2 has no {other} that fencekit uses (RebootInstances is a soft reboot \
                     nothing can observe): use reboot, which stops and starts the instance"
                ),
            )),
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let i = match &self.last {
            Some(i) => i.clone(),
            None => self.describe(Stage::Identity, deadline).await?,
        };
        let mut names = Vec::new();
        if let Some(d) = &i.private_dns_name {
            names.push(MachineName::new("PrivateDnsName", d));
        }
        for (k, v) in &i.tags {
            names.push(MachineName::new(&format!("tag:{k}"), v));
        }
        Ok(Identity {
            names,
            ..Identity::default()
        })
    }

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    async fn close(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_come_from_the_flag_then_the_environment() {
        let cfg = |e: Option<&str>| {
            let mut c = AwsConfig::new("eu-west-1", "i-0123456789abcdef0");
            c.endpoint = e.map(str::to_string);
            c
        };
        let env = Env::from_pairs(&[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:1"),
            ("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:2"),
        ]);
        let d = AwsDriver::with_env(cfg(Some("http://127.0.0.1:3")), env.clone()).unwrap();
        assert_eq!(d.endpoint(), "http://127.0.0.1:3");
        let d = AwsDriver::with_env(cfg(None), env).unwrap();
        assert_eq!(d.endpoint(), "http://127.0.0.1:2");
        let d = AwsDriver::with_env(cfg(None), Env::default()).unwrap();
        assert_eq!(d.endpoint(), "https://ec2.eu-west-1.amazonaws.com");
        let bad = Env::from_pairs(&[("AWS_ENDPOINT_URL", "nope")]);
        let e = AwsDriver::with_env(cfg(None), bad).err().unwrap();
        assert!(e.to_string().starts_with("AWS_ENDPOINT_URL:"), "{e}");
        let e = AwsDriver::with_env(AwsConfig::new("eu-west-1", "i-1"), Env::default())
            .err()
            .unwrap();
        assert!(matches!(e, NewError::Config(ConfigError::BadInstance(_))));
    }
}
