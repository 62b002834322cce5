//! The engine's [`PowerDriver`] for one Compute Engine instance.
//!
//! * `connect`: the project (the metadata server's when not given), the
//!   zone (found by the instance's name in the project's aggregated list
//!   when not given, as upstream does), a token
//!   ([`super::credentials`]), then one GET of the instance: it
//!   authenticates, shows that the instance exists, and gives its id (the
//!   identity a pin is compared with, and what every later answer must
//!   still name). The first `observe` uses that read.
//! * `observe`: a zone operation still under way is asked first (one that
//!   ended with an error fails the action; one still running is a
//!   transition); then the instance: `RUNNING`, `SUSPENDED`, `SUSPENDING`
//!   on; `TERMINATED`, `STOPPED` off; `PROVISIONING`, `STAGING`,
//!   `STOPPING` a transition; anything else not an answer (never off).
//! * `command(Off)`: the self-fencing guard (the metadata server's
//!   instance id), then `stop?noGracefulShutdown=true` (never the stop
//!   that waits for a hung guest); `command(On)`: `start`;
//!   `command(Cycle)`: the guard, then `reset` (upstream's default
//!   method). Each carries a `requestId`; its zone operation is followed
//!   to `DONE` within the step and its error read. A request whose answer
//!   was lost is read back first, never sent again blindly: the instance,
//!   and the zone's operations whose `clientOperationId` is the
//!   `requestId`. An operation found is followed; an instance at or on its
//!   way to the target (a stop, a start) took it; only when both reads
//!   answer and show nothing is it sent again, once, under the same
//!   `requestId`; a read-back that fails is "outcome unknown" and nothing
//!   is sent again.
//! * Throttling (429, 503 with `Retry-After`) is waited out within the
//!   deadline; a token the API refuses (401) is fetched again once.

mod api;
mod list;
mod ops;

use super::config::{ConfigError, Env, GceConfig};
use super::credentials::{Source, Token};
use super::model::{self, Instance};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{Identity, MachineName};
use crate::engine::power::{Observed, PowerCommand, PowerState};
use crate::http::Client;
use std::time::Instant;

/// What the self-fencing guard found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Guard {
    /// Not asked yet.
    Unchecked,
    /// The metadata server named this process's instance (its id).
    Runs(String),
    /// It could not say; the guard did not apply.
    Unknown,
}

/// A zone operation Compute Engine accepted that has not ended yet.
#[derive(Clone, Debug)]
struct Pending {
    /// What was asked.
    command: PowerCommand,
    /// The operation's name in the instance's zone.
    name: String,
}

/// Counters for the record and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// HTTP requests sent (the API, the token endpoint, the metadata server).
    pub requests: u32,
    /// Answers that were throttling.
    pub throttled: u32,
    /// Tokens fetched.
    pub tokens: u32,
}

/// One Compute Engine instance as the engine drives it.
pub struct GceDriver {
    cfg: GceConfig,
    env: Env,
    api: Option<Client>,
    metadata: Option<Client>,
    source: Option<Source>,
    token: Option<Token>,
    tokens: u32,
    /// The last read of the instance.
    last: Option<Instance>,
    /// `last` came from `connect` and no `observe` used it yet.
    fresh: bool,
    /// The instance id read first: later answers must name it.
    instance_id: Option<String>,
    pending: Option<Pending>,
    guard: Guard,
    warnings: Vec<String>,
}

/// A configuration a driver cannot be made from.
#[derive(Debug, thiserror::Error)]
pub enum NewError {
    /// The settings.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl GceDriver {
    /// A driver with the process's environment (checks the settings; no
    /// request yet).
    pub fn new(cfg: GceConfig) -> Result<Self, NewError> {
        Self::with_env(cfg, Env::from_process())
    }

    /// A driver reading `env` instead of the process's environment.
    pub fn with_env(cfg: GceConfig, env: Env) -> Result<Self, NewError> {
        cfg.validate()?;
        let mut warnings = Vec::new();
        if cfg.early_exit {
            warnings.push(
                "--earlyexit: fencekit still follows the operation and confirms the instance's \
                 state before it reports success (docs/gce.md)"
                    .to_string(),
            );
        }
        Ok(GceDriver {
            cfg,
            env,
            api: None,
            metadata: None,
            source: None,
            token: None,
            tokens: 0,
            last: None,
            fresh: false,
            instance_id: None,
            pending: None,
            guard: Guard::Unchecked,
            warnings,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        let count = |c: &Option<Client>| c.as_ref().map_or((0, 0), |c| (c.requests, c.throttled));
        let (a, at) = count(&self.api);
        let (m, mt) = count(&self.metadata);
        Stats {
            requests: a + m,
            throttled: at + mt,
            tokens: self.tokens,
        }
    }

    /// The last read of the instance.
    pub fn instance(&self) -> Option<&Instance> {
        self.last.as_ref()
    }

    /// The certificate the API presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.api.as_ref().and_then(|c| c.seen().fingerprint())
    }

    fn no_instance(&self) -> Result<(), DriverError> {
        match self.cfg.instance.is_empty() {
            true => Err(DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                ConfigError::NoInstance.to_string(),
            )),
            false => Ok(()),
        }
    }

    fn reading(&self, i: &Instance, stage: Stage) -> Result<Observed, DriverError> {
        model::observed(&i.status).ok_or_else(|| {
            DriverError::new(
                // Polled again while time is left: never off.
                ErrorKind::Busy,
                stage,
                format!(
                    "Compute Engine reports instance {} as '{}', which is neither on, off nor a \
                     known transition (not off)",
                    self.cfg.instance,
                    model::printable(&i.status, 40)
                ),
            )
        })
    }
}

impl PowerDriver for GceDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.no_instance()?;
        self.prepare(deadline).await?;
        let i = self.read_instance(Stage::Authenticate, deadline).await?;
        self.fresh = true;
        let source = self
            .source
            .as_ref()
            .map(Source::describe)
            .unwrap_or_default();
        Ok(format!(
            "Compute Engine at {} (project {}, zone {}), credentials: {source}; instance {} \
             (id {}) is {}",
            self.api_base(),
            self.cfg.project,
            self.cfg.zone,
            i.name,
            i.id,
            model::printable(&i.status, 40)
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
                    self.last.as_ref().map_or("?", |i| i.status.as_str())
                ),
            )),
        }
    }

    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        if let Some(t) = self.pending_progress(deadline).await? {
            self.fresh = false;
            return Ok(Observed::InTransition(t));
        }
        let i = match (self.fresh, &self.last) {
            (true, Some(i)) => i.clone(),
            _ => self.read_instance(Stage::Status, deadline).await?,
        };
        self.fresh = false;
        self.reading(&i, Stage::Status)
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.fresh = false;
        match command {
            PowerCommand::Off => {
                self.guard(command, deadline).await?;
                self.power(command, "stop", "noGracefulShutdown=true&", deadline)
                    .await
            }
            PowerCommand::On => self.power(command, "start", "", deadline).await,
            PowerCommand::Cycle => {
                self.guard(command, deadline).await?;
                self.power(command, "reset", "", deadline).await
            }
            other => Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Command,
                format!(
                    "Compute Engine has no {other} that fencekit uses: use reboot (off then on), \
                     or the cycle method (reset)"
                ),
            )),
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let i = match &self.last {
            Some(i) => i.clone(),
            None => self.read_instance(Stage::Identity, deadline).await?,
        };
        let mut id = Identity::default();
        id.names.push(MachineName::new("instanceId", &i.id));
        id.names.push(MachineName::new("name", &i.name));
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
        let c = GceConfig::new("x", "z", "n");
        assert!(GceDriver::with_env(c, Env::default()).is_err());
        let mut c = GceConfig::new("my-project", "z-a", "node1");
        c.early_exit = true;
        let mut d = GceDriver::with_env(c, Env::default()).unwrap();
        assert!(d.take_warnings()[0].contains("--earlyexit"));
        assert_eq!(d.stats(), Stats::default());
    }
}
