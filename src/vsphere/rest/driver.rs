//! The engine's [`PowerDriver`] for one VM behind vCenter's Automation
//! (REST) API, and its listing for the agents' `list` / `monitor`.
//!
//! * `connect`: the session, then the VM by its name (`filter.names`); when
//!   no VM has that name and it looks like an identifier (`vm-123`), by
//!   identifier. A name two VMs share is refused, the candidates named
//!   (upstream silently takes the first: possibly the wrong machine).
//! * `status`: `GET …/vcenter/vm/VM/power`. `POWERED_ON` is on,
//!   `POWERED_OFF` off, `SUSPENDED` **on** (its memory image can resume and
//!   write again; upstream calls it off and leaves it suspended), any other
//!   state unreadable.
//! * `command(Off)`: `stop` (the API powers off a powered-on or a suspended
//!   VM); `command(On)`: `start`. The API answers when the operation is
//!   done. Each is sent once: a request whose answer never came is not sent
//!   again; the state is read back, and when it does not show the effect
//!   the outcome is unknown ([`ErrorKind::OutcomeUnknown`]).
//! * `close`: the session is deleted (also after an error), bounded.
//!
//! As a witness, vCenter is the fencing device's own view: alone it is
//! "bmc-only" for `verify`.

use super::client::{Client, Posted};
use super::config::RestConfig;
use super::model::{id_ok, VmPower, VmSummary};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{reported_uuid, Identity};
use crate::engine::power::{PowerCommand, PowerState};
use crate::platform::{Listed, PlatformDriver, PlugEntry};
use std::time::{Duration, Instant};

/// How long a call may take when the engine gives no deadline.
const DEFAULT_LIMIT: Duration = Duration::from_secs(60);
/// The bound on the session's deletion at the end.
const CLOSE_LIMIT: Duration = Duration::from_secs(3);

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// One VM (or, for a listing, none) behind one vCenter.
pub struct RestDriver {
    cfg: RestConfig,
    client: Client,
    vm: Option<VmSummary>,
    suspended_noted: bool,
    detail: Option<String>,
    warnings: Vec<String>,
}

impl RestDriver {
    /// A driver for `cfg` whose HTTPS trusts what `tls` trusts (checks the
    /// settings; sends nothing).
    pub fn new(cfg: RestConfig, tls: rustls::ClientConfig) -> Result<RestDriver, String> {
        cfg.validate()?;
        let client = Client::new(&cfg, tls).map_err(|e| e.message)?;
        Ok(RestDriver {
            cfg,
            client,
            vm: None,
            suspended_noted: false,
            detail: None,
            warnings: Vec::new(),
        })
    }

    /// (requests sent, sessions created).
    pub fn stats(&self) -> (u32, u32) {
        (self.client.requests, self.client.logins)
    }

    /// The VM found by `connect`.
    pub fn vm(&self) -> Option<&VmSummary> {
        self.vm.as_ref()
    }

    /// Finds the VM the plug names: by name; by identifier when no VM has
    /// that name and it is one. Two or more VMs of that name: refused.
    async fn find(&mut self, deadline: Instant) -> Result<VmSummary, DriverError> {
        let plug = self.cfg.plug.clone();
        let st = Stage::Status;
        let mut found = self.client.by_name(&plug, st, deadline).await?;
        if found.is_empty() && id_ok(&plug) {
            found = self.client.by_id(&plug, st, deadline).await?;
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(DriverError::new(
                ErrorKind::DeviceError,
                st,
                format!(
                    "vCenter lists no VM named '{}' (nor with that identifier) that the user '{}' \
                     may see",
                    super::model::printable(&plug, 80),
                    super::model::printable(&self.cfg.username, 80)
                ),
            )),
            n => {
                let ids: Vec<String> = found
                    .iter()
                    .map(|v| format!("{} ({})", v.vm, v.power.as_str()))
                    .collect();
                Err(DriverError::new(
                    ErrorKind::Config,
                    st,
                    format!(
                        "{n} VMs are named '{}': {}; refusing to guess which one to fence: give \
                         the VM's identifier as the plug (e.g. --plug {})",
                        super::model::printable(&plug, 80),
                        ids.join(", "),
                        found[0].vm
                    ),
                ))
            }
        }
    }

    fn vm_id(&self) -> Result<String, DriverError> {
        self.vm.as_ref().map(|v| v.vm.clone()).ok_or_else(|| {
            DriverError::new(ErrorKind::Protocol, Stage::Status, "not connected to a VM")
        })
    }

    async fn ensure(&mut self, deadline: Instant) -> Result<String, DriverError> {
        if self.vm.is_none() {
            let vm = self.find(deadline).await?;
            self.vm = Some(vm);
        }
        self.vm_id()
    }

    async fn read(&mut self, stage: Stage, deadline: Instant) -> Result<VmPower, DriverError> {
        let id = self.ensure(deadline).await?;
        let p = self.client.power(&id, stage, deadline).await?;
        if let Some(v) = self.vm.as_mut() {
            v.power = p.clone();
        }
        Ok(p)
    }

    /// After a power request that got no answer: what a read shows.
    async fn after_silence(
        &mut self,
        command: PowerCommand,
        target: PowerState,
        silence: DriverError,
        deadline: Instant,
    ) -> Result<(), DriverError> {
        let unknown = |why: String| {
            DriverError::new(
                ErrorKind::OutcomeUnknown,
                Stage::Command,
                format!(
                    "{command} was sent and not answered ({}), {why}: it is never sent again",
                    silence.message
                ),
            )
        };
        // The request may still be under way at vCenter: read within what
        // is left (at least a moment).
        let read_until = deadline.max(Instant::now() + Duration::from_secs(2));
        match self.read(Stage::Command, read_until).await {
            Ok(p) if p.fencing_state() == Some(target) => {
                self.warnings.push(format!(
                    "{command} went unanswered ({}), and a read shows it took effect ({})",
                    silence.message,
                    p.as_str()
                ));
                Ok(())
            }
            Ok(p) => Err(unknown(format!("and the VM reads {}", p.as_str()))),
            Err(e) => Err(unknown(format!(
                "and the VM could not be read back ({})",
                e.message
            ))),
        }
    }

    /// Every VM the listing selects (`--filter`), for `list` and `monitor`.
    pub async fn list_vms(&mut self, deadline: Instant) -> Result<Vec<VmSummary>, DriverError> {
        let filter = self.cfg.filter.clone();
        match self
            .client
            .vms(&[], filter.as_deref(), Stage::Status, deadline)
            .await?
        {
            Ok(l) => Ok(l),
            // More VMs than the API lists at once: for monitor, the API
            // answered (upstream's monitor passes too).
            Err((400, e)) if self.cfg.monitor && e.kind == "unable_to_allocate_resource" => {
                self.warnings.push(format!(
                    "monitor: vCenter answers, but lists no VMs at once ({}); list needs --filter",
                    e.describe()
                ));
                Ok(Vec::new())
            }
            Err((status, e)) => {
                Err(self
                    .client
                    .status_error(status, &e, None, "list VMs", Stage::Status))
            }
        }
    }
}

impl PowerDriver for RestDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let d = until(deadline);
        self.client.login(d).await?;
        let mut said = format!(
            "vCenter {} ({} API) as '{}'",
            self.cfg.base_url(),
            self.client.generation().as_str(),
            self.cfg.username
        );
        if !self.cfg.plug.is_empty() {
            let vm = self.find(d).await?;
            said.push_str(&format!("; vm {} ({})", vm.name, vm.vm));
            self.vm = Some(vm);
        }
        Ok(said)
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        let p = self.read(Stage::Status, until(deadline)).await?;
        self.detail = Some(format!("vCenter reports {}", p.as_str()));
        if p == VmPower::Suspended && !self.suspended_noted {
            self.suspended_noted = true;
            self.warnings.push(format!(
                "vm {} is SUSPENDED: counted as on (it can resume); off powers it off",
                self.cfg.plug
            ));
        }
        p.fencing_state().ok_or_else(|| {
            DriverError::new(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!("vCenter reports the power state '{}'", p.as_str()),
            )
        })
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let (action, target) = match command {
            PowerCommand::Off => ("stop", PowerState::Off),
            PowerCommand::On => ("start", PowerState::On),
            other => {
                return Err(DriverError::new(
                    ErrorKind::Unsupported,
                    Stage::Command,
                    format!("the vSphere REST agent has no {other}: use off, on or reboot"),
                ))
            }
        };
        let d = until(deadline);
        let id = self.ensure(d).await?;
        match self.client.power_action(&id, action, d).await? {
            Posted::Done => Ok(()),
            Posted::Refused(status, e) => {
                let what = format!("power {action} {id}");
                Err(self
                    .client
                    .status_error(status, &e, None, &what, Stage::Command))
            }
            Posted::Silent(e) => self.after_silence(command, target, e, d).await,
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let d = until(deadline);
        let id = self.ensure(d).await?;
        let uuid = self
            .client
            .bios_uuid(&id, d)
            .await?
            .as_deref()
            .and_then(reported_uuid)
            .into_iter()
            .collect();
        Ok(Identity {
            uuid,
            ..Identity::default()
        })
    }

    fn state_detail(&self) -> Option<String> {
        self.detail.clone()
    }

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    async fn close(&mut self) {
        if self.client.has_session() {
            self.client.logout(Instant::now() + CLOSE_LIMIT).await;
        }
    }
}

impl PlatformDriver for RestDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        (self.client.requests, self.client.requests, 0)
    }

    /// The VMs as upstream lists them: the name and an empty second column,
    /// one line per name. A name several VMs share is listed once, its
    /// state unknown (its plug would be refused); a suspended VM is on.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let vms = self.list_vms(until(deadline)).await?;
        let mut out: Vec<PlugEntry> = Vec::with_capacity(vms.len());
        for v in vms {
            match out.iter_mut().find(|p| p.id == v.name) {
                Some(p) => p.state = None,
                None => out.push(PlugEntry {
                    state: v.power.fencing_state(),
                    id: v.name,
                    alias: String::new(),
                }),
            }
        }
        Ok(out)
    }

    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let vms = self
            .list_vms(until(deadline))
            .await
            .map_err(|e| e.to_string())?;
        Ok(vms
            .into_iter()
            .map(|v| Listed {
                target: None,
                state: v.power.fencing_state(),
                name: format!("{} {} {}", v.name, v.vm, v.power.as_str()),
                uri: None,
                error: None,
            })
            .collect())
    }
}
