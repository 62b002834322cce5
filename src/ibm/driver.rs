//! The engine's [`PowerDriver`] for one IBM Cloud machine (a VPC
//! instance or a Power VS instance).
//!
//! * `connect`: an IAM token for the API key, then one GET of the
//!   instance: it authenticates, shows that the instance exists, and
//!   gives what every later answer must still name (its ID). The first
//!   `observe` uses that read.
//! * `observe`: the instance's `status` ([`super::model`]): on, off, a
//!   transition, or not an answer (VPC `failed`, Power VS `ERROR`: never
//!   off). After a power request, an instance that went into the
//!   transition and came back to where it was is a request that failed
//!   after the API accepted it: the action fails.
//! * `command(Off)`: VPC, the self-fencing guard (the instance metadata
//!   service names the instance this process runs on), then `stop` with
//!   `force: true` (no guest shutdown); Power VS, `immediate-shutdown`.
//!   `command(On)`: `start`. Each is sent once; a request whose answer
//!   was lost is read back, never sent again.
//! * Throttling (429, `Retry-After`) is waited out within the deadline; a
//!   token the API refuses (401) is fetched again once; a token near its
//!   end is fetched again before it is used.
//! * The token is kept between processes in the HTTP layer's encrypted
//!   cache ([`crate::http::TokenCache`], one file per API key and IAM
//!   URL): a warm call takes it from there and sends the API's request
//!   alone; a token the API refuses is removed from it before a new one
//!   is fetched.

mod api;
mod ops;

use super::config::{ConfigError, Env, IbmConfig, Service};
use super::model::{self, Machine};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{Identity, MachineName};
use crate::engine::power::{Observed, PowerCommand, PowerState};
use crate::http::{Client, TokenCache};
use crate::secret::Secret;
use std::time::{Instant, SystemTime};

/// The VPC API version fencekit speaks (`version=`).
pub const VPC_VERSION: &str = "2024-11-12";

/// A bearer token and when to fetch the next.
struct Token {
    value: Secret,
    renew_at: Instant,
    /// When IAM said it ends (by the wall clock).
    expires: SystemTime,
    /// Taken from the token cache (not fetched by this process).
    cached: bool,
}

/// What the self-fencing guard found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Guard {
    Unchecked,
    /// The metadata service named this process's instance (its ID).
    Runs(String),
    /// It could not say.
    Unknown,
}

/// A power request sent, for telling a reverted one from one under way.
#[derive(Clone, Copy, Debug)]
struct Sent {
    command: PowerCommand,
    /// The instance was read in a transition since.
    moved: bool,
    /// Where it was before.
    before: Option<PowerState>,
}

/// Counters for the record and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// HTTP requests sent (IAM, the API, the metadata service).
    pub requests: u32,
    /// Answers that were throttling.
    pub throttled: u32,
    /// Tokens fetched from IAM.
    pub tokens: u32,
    /// Tokens taken from the token cache.
    pub cached: u32,
}

/// One IBM Cloud instance as the engine drives it.
pub struct IbmDriver {
    cfg: IbmConfig,
    env: Env,
    http: Option<Client>,
    meta: Option<Client>,
    token: Option<Token>,
    tokens: u32,
    /// The token cache: `None` until first asked for.
    cache: Option<Option<TokenCache>>,
    /// Tokens taken from it.
    cached: u32,
    /// The API refused a token: the cache is not read again.
    cache_refused: bool,
    last: Option<Machine>,
    fresh: bool,
    sent: Option<Sent>,
    guard: Guard,
    warnings: Vec<String>,
}

impl IbmDriver {
    /// A driver with the process's environment (checks the settings; no
    /// request yet).
    pub fn new(cfg: IbmConfig) -> Result<Self, ConfigError> {
        Self::with_env(cfg, Env::from_process())
    }

    /// A driver reading `env` instead of the process's environment.
    pub fn with_env(cfg: IbmConfig, env: Env) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(IbmDriver {
            cfg,
            env,
            http: None,
            meta: None,
            token: None,
            tokens: 0,
            cache: None,
            cached: 0,
            cache_refused: false,
            last: None,
            fresh: false,
            sent: None,
            guard: Guard::Unchecked,
            warnings: Vec::new(),
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        let count = |c: &Option<Client>| c.as_ref().map_or((0, 0), |c| (c.requests, c.throttled));
        let (a, at) = count(&self.http);
        let (m, mt) = count(&self.meta);
        Stats {
            requests: a + m,
            throttled: at + mt,
            tokens: self.tokens,
            cached: self.cached,
        }
    }

    /// The last read of the instance.
    pub fn machine(&self) -> Option<&Machine> {
        self.last.as_ref()
    }

    /// The certificate the API presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.as_ref().and_then(|c| c.seen().fingerprint())
    }

    /// The configuration.
    pub fn config(&self) -> &IbmConfig {
        &self.cfg
    }

    fn no_instance(&self) -> Result<(), DriverError> {
        let missing = match () {
            _ if self.cfg.instance.is_empty() => ConfigError::NoInstance,
            _ if self.cfg.service == Service::PowerVs && self.cfg.crn.is_empty() => {
                ConfigError::NoCrn
            }
            _ => return Ok(()),
        };
        Err(DriverError::new(
            ErrorKind::Config,
            Stage::Authenticate,
            missing.to_string(),
        ))
    }

    /// The reading of `m`, or why it is none (busy: read again while time
    /// is left; never off).
    fn reading(&self, m: &Machine, stage: Stage) -> Result<Observed, DriverError> {
        model::observed(self.cfg.service, m).ok_or_else(|| {
            DriverError::new(
                ErrorKind::Busy,
                stage,
                format!(
                    "{} reports instance {} {}{}, which is neither on, off nor a known \
                     transition (not off)",
                    self.cfg.service.name(),
                    self.cfg.instance,
                    model::printable(&m.status, 40),
                    match &m.health {
                        Some(h) => format!(" (health {})", model::printable(h, 20)),
                        None => String::new(),
                    }
                ),
            )
        })
    }

    /// After a power request: an instance back where it was after moving
    /// is a request that failed after acceptance.
    fn judge(&mut self, o: Observed) -> Result<Observed, DriverError> {
        let Some(s) = self.sent.as_mut() else {
            return Ok(o);
        };
        match o {
            Observed::InTransition(_) => {
                s.moved = true;
                Ok(o)
            }
            Observed::Settled(now) => {
                let target = match s.command {
                    PowerCommand::Off => PowerState::Off,
                    _ => PowerState::On,
                };
                if now == target {
                    self.sent = None;
                    return Ok(o);
                }
                if s.moved && s.before == Some(now) {
                    let c = s.command;
                    self.sent = None;
                    return Err(DriverError::new(
                        ErrorKind::DeviceError,
                        Stage::Wait,
                        format!(
                            "{} accepted the {c} of instance {} and then it went back to {} \
                             (the request failed after acceptance); it is not taken as {}",
                            self.cfg.service.name(),
                            self.cfg.instance,
                            self.last.as_ref().map_or("?", |m| m.status.as_str()),
                            target
                        ),
                    ));
                }
                Ok(o)
            }
        }
    }
}

impl PowerDriver for IbmDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.no_instance()?;
        let m = self.read_machine(Stage::Authenticate, deadline).await?;
        self.fresh = true;
        let from = match self.token.as_ref().is_some_and(|t| t.cached) {
            true => "token from the cache",
            false => "token from IAM",
        };
        Ok(format!(
            "{} at {} (IAM {}, {from}): instance {} ({}) is {}",
            self.cfg.service.name(),
            self.cfg.api_base(&self.env),
            self.cfg.iam_token_url(&self.env),
            m.id,
            model::printable(&m.name, 64),
            model::printable(&m.status, 40)
        ))
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        match self.observe(deadline).await? {
            Observed::Settled(s) => Ok(s),
            Observed::InTransition(t) => Err(DriverError::new(
                ErrorKind::Busy,
                Stage::Status,
                format!(
                    "instance {} is {} ({t})",
                    self.cfg.instance,
                    self.last.as_ref().map_or("?", |m| m.status.as_str())
                ),
            )),
        }
    }

    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        let m = match (self.fresh, &self.last) {
            (true, Some(m)) => m.clone(),
            _ => self.read_machine(Stage::Status, deadline).await?,
        };
        self.fresh = false;
        let o = self.reading(&m, Stage::Status)?;
        self.judge(o)
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.fresh = false;
        match command {
            PowerCommand::Off | PowerCommand::On => self.power(command, deadline).await,
            other => Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Command,
                format!(
                    "fencekit does not send {other} to {} (a reboot request is guest-visible \
                     and nothing can observe it): use reboot, which powers the instance off \
                     and on",
                    self.cfg.service.name()
                ),
            )),
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let m = match &self.last {
            Some(m) => m.clone(),
            None => self.read_machine(Stage::Identity, deadline).await?,
        };
        let mut id = Identity::default();
        id.names.push(MachineName::new("instanceId", &m.id));
        if !m.name.is_empty() {
            id.names.push(MachineName::new("name", &m.name));
        }
        if let Some(c) = &m.crn {
            id.names.push(MachineName::new("crn", c));
        }
        Ok(id)
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
    fn a_configuration_is_checked_before_anything_is_sent() {
        let c = IbmConfig::new(Service::PowerVs, "lon", "pvm-1");
        assert!(
            IbmDriver::with_env(c, Env::default()).is_err(),
            "no workspace"
        );
        let c = IbmConfig::new(Service::Vpc, "us-south", "i-1");
        let d = IbmDriver::with_env(c, Env::default()).unwrap();
        assert_eq!(d.stats(), Stats::default());
    }
}
