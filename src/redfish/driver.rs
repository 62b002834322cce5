//! The engine's [`PowerDriver`] for Redfish: discovery, authentication
//! (Basic, or a SessionService token deleted afterwards), `PowerState`
//! reads, and `ComputerSystem.Reset` with the reset type chosen from what
//! the system offers, Task monitors followed to their end.
//!
//! Requests per action are kept to what is needed: `connect` reads the
//! system once (that read also authenticates and yields the reset action,
//! the system's identity and its vendor family), and the first `status`
//! after it uses that read instead of asking again.
//!
//! `PoweringOn`/`PoweringOff` are reported to the engine as transitions
//! ([`Observed::InTransition`]), never as errors or states.
//!
//! The reset side — the reset types on offer, Task monitors, a reset that
//! got no answer — is [`reset`]'s.

use super::config::RedfishConfig;
use super::http::{path_of, Http, Reply};
use super::model::{self, Choice, Offered, ResetAction, UuidChoice};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{normalise_uuid, Identity};
use crate::engine::power::{Observed, PowerCommand, PowerReading, PowerState};
use reqwest::Method;
use serde_json::Value;
use std::time::{Duration, Instant};

mod reset;

/// How long deleting the session may take before it is abandoned.
const CLOSE_WAIT: Duration = Duration::from_secs(1);
/// Most systems read one by one when a plug names a system by Name or UUID.
const MAX_LOOKUP: usize = 64;

/// Counters for the record and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// HTTP requests sent.
    pub requests: u32,
    /// Sessions created through SessionService.
    pub sessions_created: u32,
    /// Sessions deleted.
    pub sessions_deleted: u32,
    /// Task monitor reads.
    pub task_polls: u32,
}

/// The reset types a system offers and the one each command would use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResetPlan {
    /// What the system publishes (`None`: nothing published, standard types assumed).
    pub offered: Option<Vec<String>>,
    /// The choice per command (`Err`: no safe type, with what is offered).
    pub choices: Vec<(PowerCommand, Result<String, model::NoSafeReset>)>,
}

/// One system behind a Redfish service (for `list`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemEntry {
    /// Its `@odata.id`.
    pub uri: String,
    /// `Id`.
    pub id: String,
    /// `Name`, when given.
    pub name: Option<String>,
    /// Its power state, or why it could not be read.
    pub power: Result<PowerState, String>,
}

struct System {
    uri: String,
    reset: Result<ResetAction, model::NoResetAction>,
    /// Reset types resolved from ActionInfo, once read.
    resolved: Option<Option<Vec<String>>>,
}

/// A configuration a driver cannot be made from.
#[derive(Debug, thiserror::Error)]
pub enum NewError {
    #[error(transparent)]
    Config(#[from] super::config::ConfigError),
    /// The `--ca-cert` file (read now, not at the first fence).
    #[error(transparent)]
    Tls(#[from] super::tls::TlsSetupError),
}

/// A Redfish system as the engine drives it.
pub struct RedfishDriver {
    cfg: RedfishConfig,
    http: Option<Http>,
    system: Option<System>,
    /// The system resource read during `connect`, used by the next `status`.
    fresh: Option<Value>,
    /// The session resource to delete, when SessionService is used.
    session: Option<Option<String>>,
    detail: Option<String>,
    stats: Stats,
    /// Who the system says it is (from the last read of its resource).
    identity: Option<Identity>,
    /// The vendor family, when it is one that hides transitions.
    hides: Option<&'static str>,
    /// The chassis the system links to (for its power draw).
    chassis: Vec<String>,
}

fn parse_json(reply: &Reply, stage: Stage, what: &str) -> Result<Value, DriverError> {
    crate::parse::json(&reply.body, &crate::parse::Limits::ANSWER).map_err(|e| {
        let head = model::printable(&String::from_utf8_lossy(&reply.body), 60);
        let why = match e {
            crate::parse::Refused::Json(j) => format!("is not JSON ({j}; it begins '{head}')"),
            other => format!("is refused: {other}"),
        };
        DriverError::new(
            ErrorKind::Protocol,
            stage,
            format!("the answer to {what} {why}"),
        )
    })
}

impl RedfishDriver {
    /// A driver for one system; checks the configuration (no request yet).
    pub fn new(cfg: RedfishConfig) -> Result<Self, NewError> {
        cfg.validate()?;
        if let super::config::TlsTrust::Verify {
            ca_cert: Some(path),
        } = &cfg.tls
        {
            // Fail at configuration time, not at the first fence.
            super::tls::read_pem_certs(path)?;
        }
        Ok(RedfishDriver {
            cfg,
            http: None,
            system: None,
            fresh: None,
            session: None,
            detail: None,
            stats: Stats::default(),
            identity: None,
            hides: None,
            chassis: Vec::new(),
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        if let Some(h) = &self.http {
            s.requests += h.requests;
        }
        s
    }

    /// Whether it authenticates with a SessionService token (else basic).
    pub fn session_auth(&self) -> bool {
        self.cfg.session_auth
    }

    /// The system's path, once discovered.
    pub fn system_uri(&self) -> Option<&str> {
        self.system.as_ref().map(|s| s.uri.as_str())
    }

    /// The SHA-256 fingerprint of the certificate the BMC presented at the
    /// last connection, trusted or not (`check` compares it with its baseline).
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.as_ref().and_then(Http::certificate)
    }

    /// The vendor family whose quirk "hidden transitions" applies, if any.
    pub fn hidden_transitions(&self) -> Option<&'static str> {
        self.hides
    }

    /// Records what a read of the system resource tells beyond its power.
    fn note_system(&mut self, system: &Value) {
        self.identity = Some(model::identity(system));
        self.hides = model::hides_transitions(system);
        self.chassis = model::chassis_links(system);
    }

    /// Reads the system resource (the one read during `connect` first).
    async fn system_body(&mut self, deadline: Option<Instant>) -> Result<Value, DriverError> {
        self.ensure_open(deadline).await?;
        let body = match self.fresh.take() {
            Some(b) => b,
            None => {
                let uri = self.system_uri().unwrap_or_default().to_string();
                self.get(&uri, true, Stage::Status, deadline).await?
            }
        };
        self.note_system(&body);
        Ok(body)
    }

    fn http(&mut self, stage: Stage) -> Result<&mut Http, DriverError> {
        self.http
            .as_mut()
            .ok_or_else(|| DriverError::new(ErrorKind::Protocol, stage, "not connected"))
    }

    async fn get(
        &mut self,
        path: &str,
        with_auth: bool,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Value, DriverError> {
        let what = format!("GET {path}");
        let r = self
            .http(stage)?
            .send(Method::GET, path, None, with_auth, stage, deadline)
            .await?;
        if !r.ok() {
            return Err(model::classify(r.status, &r.body, stage, &what));
        }
        parse_json(&r, stage, &what)
    }

    /// GET that reads "not there" (404, 405, 501) as `None`.
    async fn get_optional(
        &mut self,
        path: &str,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Option<Value>, DriverError> {
        let what = format!("GET {path}");
        let r = self
            .http(stage)?
            .send(Method::GET, path, None, true, stage, deadline)
            .await?;
        if matches!(r.status, 404 | 405 | 501) {
            return Ok(None);
        }
        if !r.ok() {
            return Err(model::classify(r.status, &r.body, stage, &what));
        }
        parse_json(&r, stage, &what).map(Some)
    }

    async fn create_session(
        &mut self,
        root: &Value,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let stage = Stage::Authenticate;
        let path = model::sessions_link(root)
            .unwrap_or_else(|| format!("{}/SessionService/Sessions", self.cfg.redfish_uri));
        let password = std::str::from_utf8(self.cfg.password.expose()).map_err(|_| {
            DriverError::new(
                ErrorKind::Config,
                stage,
                "the password is not UTF-8, which a Redfish session request cannot carry",
            )
        })?;
        let body = zeroize::Zeroizing::new(
            serde_json::to_vec(&serde_json::json!({
                "UserName": self.cfg.username,
                "Password": password,
            }))
            .map_err(|e| DriverError::new(ErrorKind::Config, stage, e.to_string()))?,
        );
        // Quirk 20: some BMCs refuse a session request that also carries
        // Basic credentials, so this one carries none.
        let r = self
            .http(stage)?
            .send(Method::POST, &path, Some(&body), false, stage, deadline)
            .await?;
        let what = format!("POST {path}");
        if matches!(r.status, 404 | 405 | 501) {
            return Err(DriverError::new(
                ErrorKind::Unsupported,
                stage,
                format!(
                    "the BMC has no SessionService (http {} to {what}); use HTTP Basic authentication (leave out --redfish-session)",
                    r.status
                ),
            ));
        }
        if !r.ok() {
            return Err(model::classify(r.status, &r.body, stage, &what));
        }
        let token = r.token.clone().ok_or_else(|| {
            DriverError::new(
                ErrorKind::Protocol,
                stage,
                format!("the answer to {what} carries no X-Auth-Token"),
            )
        })?;
        let uri = r.location.clone().or_else(|| {
            crate::parse::json::<Value>(&r.body, &crate::parse::Limits::ANSWER)
                .ok()
                .and_then(|v| model::odata_id(&v).map(path_of))
        });
        if uri.is_none() {
            tracing::warn!("the BMC did not say where the session lives; it cannot be deleted");
        }
        self.session = Some(uri);
        self.stats.sessions_created += 1;
        self.http(stage)?.use_token(&token)
    }

    /// Finds the system: `systems_uri`, else the only member, else the plug.
    async fn discover(
        &mut self,
        root: &Value,
        deadline: Option<Instant>,
    ) -> Result<(String, Option<Value>), DriverError> {
        let stage = Stage::Authenticate;
        let collection = model::systems_link(root).ok_or_else(|| {
            DriverError::new(
                ErrorKind::Unsupported,
                stage,
                format!(
                    "the service root {} has no Systems collection",
                    self.cfg.redfish_uri
                ),
            )
        })?;
        let collection = path_of(collection);
        let list = self.get(&collection, true, stage, deadline).await?;
        let members = model::members(&list);
        let plug = self.cfg.plug.clone();
        if let (None, Some(want), [_, _, ..]) = (&plug, &self.cfg.expect_uuid, members.as_slice()) {
            // Several systems and an expected UUID: the UUID chooses.
            let want = normalise_uuid(want).unwrap_or_else(|| want.clone());
            let mut candidates = Vec::new();
            let mut bodies = Vec::new();
            for m in members.iter().take(MAX_LOOKUP) {
                let path = path_of(m);
                let sys = self.get(&path, true, stage, deadline).await?;
                let uuid = sys.get("UUID").and_then(Value::as_str).map(str::to_string);
                candidates.push((path.clone(), uuid));
                bodies.push((path, sys));
            }
            let chosen = model::choose_by_uuid(&candidates, &want).map_err(|e| {
                // No system is the pinned machine: this service does not
                // control it (the fleet then tries no further level). Several
                // claiming it is ambiguity, not evidence of a wrong machine.
                let m = e.to_string();
                match e {
                    UuidChoice::NoMatch { .. } if e.none_reported() => {
                        DriverError::new(ErrorKind::IdentityUnavailable, Stage::Identity, m)
                    }
                    UuidChoice::NoMatch { .. } => {
                        DriverError::new(ErrorKind::IdentityMismatch, Stage::Identity, m)
                    }
                    UuidChoice::Several { .. } => DriverError::new(ErrorKind::Config, stage, m),
                }
            })?;
            let body = bodies
                .into_iter()
                .find(|(p, _)| *p == chosen)
                .map(|(_, b)| b);
            return Ok((chosen, body));
        }
        match model::choose_member(&members, plug.as_deref())
            .map_err(|e| DriverError::new(ErrorKind::Config, stage, e.to_string()))?
        {
            Choice::Member(m) => Ok((path_of(&m), None)),
            Choice::LookUp => {
                let plug = plug.unwrap_or_default();
                for m in members.iter().take(MAX_LOOKUP) {
                    let path = path_of(m);
                    let sys = self.get(&path, true, stage, deadline).await?;
                    if model::system_matches(&sys, &plug) {
                        return Ok((path, Some(sys)));
                    }
                }
                Err(DriverError::new(
                    ErrorKind::Config,
                    stage,
                    model::no_such_plug(&plug, &members),
                ))
            }
        }
    }

    async fn open(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let stage = Stage::Authenticate;
        self.http = Some(Http::new(&self.cfg)?);
        let need_root = self.cfg.systems_uri.is_none() || self.cfg.session_auth;
        let root = if need_root {
            let root_uri = self.cfg.redfish_uri.clone();
            // The service root needs no credentials (DSP0266); in Basic mode
            // they are sent anyway, as upstream does, for services that want them.
            let with_auth = !self.cfg.session_auth;
            Some(self.get(&root_uri, with_auth, stage, deadline).await?)
        } else {
            None
        };
        if self.cfg.session_auth {
            let r = root.clone().unwrap_or(Value::Null);
            self.create_session(&r, deadline).await?;
        }
        let (uri, body) = match self.cfg.systems_uri.clone() {
            Some(u) => (u, None),
            None => {
                let r = root.unwrap_or(Value::Null);
                self.discover(&r, deadline).await?
            }
        };
        let body = match body {
            Some(b) => b,
            None => self.get(&uri, true, stage, deadline).await?,
        };
        let reset = model::reset_action(&body);
        let plan = match &reset {
            Ok(ResetAction {
                offered: Offered::Listed(l),
                ..
            }) => format!("reset types {}", model::describe_plan(Some(l))),
            Ok(ResetAction {
                offered: Offered::ActionInfo(_),
                ..
            }) => "reset types listed in ActionInfo (read at the first command)".to_string(),
            Ok(ResetAction {
                offered: Offered::Unpublished,
                ..
            }) => format!(
                "reset types not published, assuming {}",
                model::describe_plan(None)
            ),
            Err(e) => e.to_string(),
        };
        self.system = Some(System {
            uri: uri.clone(),
            reset,
            resolved: None,
        });
        self.note_system(&body);
        self.fresh = Some(body);
        let plan = match self.hides {
            Some(family) => format!(
                "{plan}; quirk hidden-transitions ({family}: the old state is reported during \
                 a power change, so commands are sent even when the state already matches)"
            ),
            None => plan,
        };
        let auth = if self.cfg.session_auth {
            "session token"
        } else {
            "basic auth"
        };
        let tls = self.http(stage)?.tls_record();
        let detail = format!(
            "redfish {}{uri}, {auth}, {tls}, {plan}",
            self.cfg.base_url()
        );
        tracing::debug!(%detail, "redfish connected");
        self.detail = Some(detail.clone());
        Ok(detail)
    }

    async fn ensure_open(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if self.http.is_none() || self.system.is_none() {
            self.open(deadline).await?;
        }
        Ok(())
    }

    /// Every system behind the service with its power state (for `list`).
    /// Opens its own client; call [`PowerDriver::close`] afterwards.
    pub async fn list_systems(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<SystemEntry>, DriverError> {
        let stage = Stage::Status;
        if self.http.is_none() {
            self.http = Some(Http::new(&self.cfg)?);
        }
        let root_uri = self.cfg.redfish_uri.clone();
        let root = self.get(&root_uri, true, stage, deadline).await?;
        let collection = model::systems_link(&root).map(path_of).ok_or_else(|| {
            DriverError::new(
                ErrorKind::Unsupported,
                stage,
                "the service root has no Systems collection",
            )
        })?;
        let list = self.get(&collection, true, stage, deadline).await?;
        let mut out = Vec::new();
        for m in model::members(&list).iter().take(MAX_LOOKUP) {
            let uri = path_of(m);
            let sys = self.get(&uri, true, stage, deadline).await?;
            out.push(SystemEntry {
                id: sys
                    .get("Id")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| model::last_segment(&uri))
                    .to_string(),
                name: sys.get("Name").and_then(Value::as_str).map(str::to_string),
                power: model::power_state(&sys).map_err(|e| e.message),
                uri,
            });
        }
        Ok(out)
    }
}

impl PowerDriver for RedfishDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        if let (Some(_), Some(_), Some(d)) = (&self.http, &self.system, &self.detail) {
            return Ok(d.clone());
        }
        self.open(deadline).await
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        let body = self.system_body(deadline).await?;
        model::power_state(&body)
    }

    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        let body = self.system_body(deadline).await?;
        model::observe(&body)
    }

    fn shows_transitions(&self) -> bool {
        self.hides.is_none()
    }

    /// `UUID` and `SerialNumber` of the system, from the read `connect`
    /// (or the last status read) made: no request of its own.
    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        self.ensure_open(deadline).await?;
        match &self.identity {
            Some(i) => Ok(i.clone()),
            None => {
                let body = self.system_body(deadline).await?;
                // `system_body` consumed the fresh read; keep it for `status`.
                self.fresh = Some(body);
                Ok(self.identity.clone().unwrap_or_default())
            }
        }
    }

    /// The chassis' power draw: `Links.Chassis` → `Power`
    /// (`PowerControl[].PowerConsumedWatts`), else `EnvironmentMetrics`
    /// (`PowerWatts.Reading`). `Ok(None)` when the service publishes none
    /// (sushy-tools, for one): no evidence, not a failure.
    async fn power_reading(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<PowerReading>, DriverError> {
        self.ensure_open(deadline).await?;
        let stage = Stage::Status;
        for chassis in self.chassis.clone().iter().take(4) {
            let Some(doc) = self
                .get_optional(&path_of(chassis), stage, deadline)
                .await?
            else {
                continue;
            };
            for source in model::power_sources(&doc) {
                let (uri, parse): (&str, fn(&Value) -> Option<f64>) = match &source {
                    model::PowerSource::Power(u) => (u, model::power_control_watts),
                    model::PowerSource::EnvironmentMetrics(u) => (u, model::environment_watts),
                };
                let uri = path_of(uri);
                if let Some(v) = self.get_optional(&uri, stage, deadline).await? {
                    if let Some(watts) = parse(&v) {
                        return Ok(Some(PowerReading { watts, source: uri }));
                    }
                }
            }
        }
        Ok(None)
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.ensure_open(deadline).await?;
        self.fresh = None;
        let stage = Stage::Command;
        let (target, offered) = self.offered(deadline).await?;
        let reset = model::choose_reset(command, offered.as_deref())
            .map_err(|e| DriverError::new(ErrorKind::Unsupported, stage, e.to_string()))?;
        tracing::info!(%command, reset_type = %reset, %target, "sending ComputerSystem.Reset");
        let body = serde_json::to_vec(&serde_json::json!({ "ResetType": reset }))
            .map_err(|e| DriverError::new(ErrorKind::Protocol, stage, e.to_string()))?;
        let sent = self
            .http(stage)?
            .send(Method::POST, &target, Some(&body), true, stage, deadline)
            .await;
        let r = match sent {
            Ok(r) => r,
            // No answer in time: the request went over TCP, so the BMC has
            // it and may still carry it out. Never POSTed again (at most
            // once, engine::once): one read, if time is left, can only show
            // that an off or on took effect.
            Err(e) if e.kind == ErrorKind::Timeout => {
                return self.unanswered_reset(command, &reset, e, deadline).await
            }
            Err(e) => return Err(e),
        };
        match r.status {
            202 => self.follow_task(r, deadline).await,
            s if (200..300).contains(&s) => Ok(()),
            s => {
                let mut e = model::classify(s, &r.body, stage, &format!("POST {target}"));
                e.message = format!("{} (ResetType {reset})", e.message);
                Err(e)
            }
        }
    }

    async fn close(&mut self) {
        if let (Some(http), Some(Some(uri))) = (self.http.as_mut(), self.session.take()) {
            let until = Instant::now() + CLOSE_WAIT;
            match http
                .send(Method::DELETE, &uri, None, true, Stage::Close, Some(until))
                .await
            {
                Ok(r) if r.ok() || r.status == 404 => self.stats.sessions_deleted += 1,
                Ok(r) => tracing::debug!(status = r.status, "the session was not deleted"),
                Err(e) => tracing::debug!(error = %e, "the session was not deleted"),
            }
        }
        if let Some(h) = self.http.take() {
            self.stats.requests += h.requests;
        }
        self.session = None;
        self.system = None;
        self.fresh = None;
        self.detail = None;
        self.identity = None;
        self.hides = None;
        self.chassis.clear();
    }
}
