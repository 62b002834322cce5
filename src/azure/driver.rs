//! The engine's [`PowerDriver`] for one Azure VM.
//!
//! * `connect`: the subscription and resource group (the metadata
//!   service's when not given), the cloud's endpoints (an Azure Stack
//!   Hub's from its metadata), a token ([`super::credentials`]), then one
//!   GET of the VM with its instance view: it authenticates, shows that the
//!   VM exists, and gives its vmId (the identity a pin is compared with,
//!   and what every later answer must still name). The first `observe`
//!   uses that read.
//! * `observe`: a power operation still under way is asked first (one
//!   that ended in failure fails the action; one still running is a
//!   transition); then the VM with its instance view: `running` on,
//!   `stopped` / `deallocated` off, `starting`, `stopping`, `deallocating`
//!   a transition, no power state or `unknown` not an answer (never off).
//!   Every answer must name the VM asked for (name, resource path, the
//!   vmId read first): an answer about another VM is a contradiction.
//! * `command(Off)`: the self-fencing guard (the metadata service says
//!   which VM this process runs on), then `powerOff` with
//!   `skipShutdown=true`; `command(On)`: `start`. Each is sent once; its
//!   long-running operation is followed through `Azure-AsyncOperation`
//!   (or `Location`) to its end within the step, never sent again. A 409
//!   (another operation under way) is busy: the engine reads and waits.
//!   A request whose answer was lost is read back: the VM at or on its way
//!   to the target took it; anything else is "outcome unknown".
//! * Throttling (429, with `Retry-After`) is waited out within the
//!   deadline; a token Resource Manager refuses (401) is fetched again once.
//!
//! As a witness: Resource Manager runs outside the VM, so its reading is
//! evidence independent of the guest (the party under suspicion).

mod api;
mod list;
mod ops;

use super::config::{AzureConfig, ConfigError, Endpoints, Env};
use super::credentials::{Source, Token};
use super::model::{self, Vm};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{Identity, MachineName, UuidForm};
use crate::engine::power::{Observed, PowerCommand, PowerState};
use crate::http::Client;
use std::time::Instant;

/// The Compute API version fencekit speaks.
pub const COMPUTE_API: &str = "2024-07-01";

/// What the self-fencing guard found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Guard {
    /// Not asked yet.
    Unchecked,
    /// The metadata service named this process's VM (its vmId).
    Runs(model::ThisVm),
    /// It could not say; the guard did not apply.
    Unknown,
}

/// A power operation Azure accepted and that has not ended yet.
#[derive(Clone, Debug)]
struct Pending {
    /// What was asked.
    command: PowerCommand,
    /// `Azure-AsyncOperation` (status body) or `Location` (202 until done).
    url: String,
    /// Whether `url` is an `Azure-AsyncOperation`.
    async_op: bool,
}

/// Counters for the record and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// HTTP requests sent (Resource Manager, login, metadata service).
    pub requests: u32,
    /// Answers that were throttling.
    pub throttled: u32,
    /// Tokens fetched.
    pub tokens: u32,
}

/// One Azure VM as the engine drives it.
pub struct AzureDriver {
    cfg: AzureConfig,
    env: Env,
    endpoints: Option<Endpoints>,
    arm: Option<Client>,
    imds: Option<Client>,
    source: Option<Source>,
    token: Option<Token>,
    tokens: u32,
    /// The last read of the VM.
    last: Option<Vm>,
    /// `last` came from `connect` and no `observe` used it yet.
    fresh: bool,
    /// The vmId read first: later answers must name it.
    vm_id: Option<String>,
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

impl AzureDriver {
    /// A driver with the process's environment (checks the settings; no
    /// request yet).
    pub fn new(cfg: AzureConfig) -> Result<Self, NewError> {
        Self::with_env(cfg, Env::from_process())
    }

    /// A driver reading `env` instead of the process's environment.
    pub fn with_env(cfg: AzureConfig, env: Env) -> Result<Self, NewError> {
        cfg.validate()?;
        let mut warnings = Vec::new();
        if cfg.network_fencing {
            warnings.push(
                "--network-fencing: fencekit does not move the VM's network interfaces to a \
                 fence subnet; it powers the VM off and confirms it stopped (a stronger fence, \
                 docs/azure.md), and monitor unfences nothing"
                    .to_string(),
            );
        }
        if cfg.cloud == super::config::Cloud::Germany {
            warnings.push(
                "Azure Germany (--cloud=germany) closed in 2021; its endpoints are used as given"
                    .to_string(),
            );
        }
        Ok(AzureDriver {
            cfg,
            env,
            endpoints: None,
            arm: None,
            imds: None,
            source: None,
            token: None,
            tokens: 0,
            last: None,
            fresh: false,
            vm_id: None,
            pending: None,
            guard: Guard::Unchecked,
            warnings,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        let count = |c: &Option<Client>| c.as_ref().map_or((0, 0), |c| (c.requests, c.throttled));
        let (a, at) = count(&self.arm);
        let (i, it) = count(&self.imds);
        Stats {
            requests: a + i,
            throttled: at + it,
            tokens: self.tokens,
        }
    }

    /// The last read of the VM.
    pub fn vm(&self) -> Option<&Vm> {
        self.last.as_ref()
    }

    /// The subscription and resource group in use.
    pub fn scope(&self) -> (&str, &str) {
        (&self.cfg.subscription, &self.cfg.resource_group)
    }

    /// The certificate Resource Manager presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.arm.as_ref().and_then(|c| c.seen().fingerprint())
    }

    /// Resource Manager's URL in use (after `connect`).
    pub fn arm_url(&self) -> Option<&str> {
        self.endpoints.as_ref().map(|e| e.arm.as_str())
    }

    fn no_vm(&self) -> Result<(), DriverError> {
        match self.cfg.vm.is_empty() {
            true => Err(DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                ConfigError::NoVm.to_string(),
            )),
            false => Ok(()),
        }
    }

    fn not_an_answer(&self, vm: &Vm, stage: Stage) -> Result<Observed, DriverError> {
        let code = vm.power.as_deref();
        let observed = code.and_then(model::observed);
        observed.ok_or_else(|| {
            DriverError::new(
                // Polled again while time is left: a view that cannot
                // answer now is never off.
                ErrorKind::Busy,
                stage,
                match code {
                    Some(c) => format!(
                        "Azure reports PowerState/{} for VM {}, which is neither on, off nor a \
                         known transition (not off)",
                        model::printable(c, 40),
                        self.cfg.vm
                    ),
                    None if !vm.has_view => format!(
                        "the answer about VM {} carries no instance view (not off)",
                        self.cfg.vm
                    ),
                    None => format!(
                        "the instance view of VM {} has no power state: Azure cannot see the \
                         VM's state now (a host that stopped reporting; not off)",
                        self.cfg.vm
                    ),
                },
            )
        })
    }
}

impl PowerDriver for AzureDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.no_vm()?;
        self.prepare(deadline).await?;
        let vm = self.read_vm(Stage::Authenticate, deadline).await?;
        self.fresh = true;
        let source = self
            .source
            .as_ref()
            .map(Source::describe)
            .unwrap_or_default();
        Ok(format!(
            "Azure Resource Manager at {} (subscription {}, resource group {}), credentials: \
             {source}; VM {} (vmId {}) is {}",
            self.arm_url().unwrap_or(""),
            self.cfg.subscription,
            self.cfg.resource_group,
            vm.name,
            vm.vm_id.as_deref().unwrap_or("not reported"),
            vm.power
                .as_deref()
                .map(|p| format!("PowerState/{}", model::printable(p, 40)))
                .unwrap_or_else(|| "without a power state".into())
        ))
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        match self.observe(deadline).await? {
            Observed::Settled(s) => Ok(s),
            Observed::InTransition(t) => Err(DriverError::new(
                ErrorKind::Busy,
                Stage::Status,
                format!(
                    "VM {} is PowerState/{} ({t})",
                    self.cfg.vm,
                    self.last
                        .as_ref()
                        .and_then(|v| v.power.as_deref())
                        .unwrap_or("?")
                ),
            )),
        }
    }

    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        if let Some(t) = self.pending_progress(deadline).await? {
            self.fresh = false;
            return Ok(Observed::InTransition(t));
        }
        let vm = match (self.fresh, &self.last) {
            (true, Some(v)) => v.clone(),
            _ => self.read_vm(Stage::Status, deadline).await?,
        };
        self.fresh = false;
        self.not_an_answer(&vm, Stage::Status)
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.fresh = false;
        match command {
            PowerCommand::Off => {
                self.guard(deadline).await?;
                self.power(command, "powerOff?skipShutdown=true&", deadline)
                    .await
            }
            PowerCommand::On => self.power(command, "start?", deadline).await,
            other => Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Command,
                format!(
                    "Azure has no {other} that fencekit uses (restart is a guest-visible reboot \
                     nothing can observe): use reboot, which powers the VM off and on"
                ),
            )),
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let vm = match &self.last {
            Some(v) => v.clone(),
            None => self.read_vm(Stage::Identity, deadline).await?,
        };
        let mut id = Identity::default();
        if let Some(u) = vm
            .vm_id
            .as_deref()
            .and_then(crate::engine::identity::normalise_uuid)
        {
            id.names.push(MachineName::new("vmId", &u));
            id.uuid.push(UuidForm {
                uuid: u.clone(),
                encoding: "Azure vmId",
            });
            if let Some(s) = model::swapped_uuid(&u).filter(|s| *s != u) {
                id.uuid.push(UuidForm {
                    uuid: s,
                    encoding: "Azure vmId, first three fields byte-swapped (SMBIOS)",
                });
            }
        }
        if let Some(c) = &vm.computer_name {
            id.names.push(MachineName::new("computerName", c));
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
    use crate::azure::config::Auth;

    #[test]
    fn a_configuration_is_checked_before_anything_is_sent() {
        let c = AzureConfig::new("not-a-guid", "rg", "vm");
        assert!(AzureDriver::with_env(c, Env::default()).is_err());
        let mut c = AzureConfig::new("0b1f6471-1bf0-4dda-aec3-cb9272f09590", "rg", "vm");
        c.network_fencing = true;
        c.auth = Auth::ManagedIdentity { client_id: None };
        let mut d = AzureDriver::with_env(c, Env::default()).unwrap();
        let w = d.take_warnings();
        assert!(w[0].contains("--network-fencing"), "{w:?}");
        assert_eq!(d.stats(), Stats::default());
    }
}
