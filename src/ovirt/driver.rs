//! The engine's `PowerDriver` for one VM: found by its name (a search whose
//! answers are checked to carry exactly that name; two VMs of that name are
//! refused) or its id, its status read from `/vms/ID` (the answer checked
//! to be about that id and that name every time), `stop` for off (never
//! `shutdown`: the guest's cooperation is not fencing), `start` for on,
//! each action's job followed to its end: accepted and then failed is a
//! failure. An action whose answer was lost is never sent again: the
//! engine's view is read back.

use super::client::Client;
use super::config::OvirtConfig;
use super::model::{self, Job, Vm};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{reported_uuid, Identity, MachineName};
use crate::engine::power::{PowerCommand, PowerState};
use crate::platform::{Listed, PlatformDriver, PlugEntry};
use crate::secret::Secret;
use reqwest::Method;
use std::time::{Duration, Instant};

const DEFAULT_LIMIT: Duration = Duration::from_secs(60);
const JOB_POLL: Duration = Duration::from_millis(100);

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// One VM of one engine.
pub struct OvirtDriver {
    cfg: OvirtConfig,
    client: Client,
    found: Option<Vm>,
    monitor: bool,
    detail: Option<String>,
    warnings: Vec<String>,
}

impl OvirtDriver {
    /// A driver for `cfg` as `user`.
    pub fn new(
        cfg: OvirtConfig,
        user: &str,
        password: Secret,
        timeout: Duration,
    ) -> Result<OvirtDriver, DriverError> {
        cfg.validate()
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let client = Client::new(&cfg, user, password, timeout)?;
        Ok(OvirtDriver {
            cfg,
            client,
            found: None,
            monitor: false,
            detail: None,
            warnings: Vec::new(),
        })
    }

    /// For `monitor`: one authenticated read of the API's root, never the list.
    pub fn for_monitor(mut self) -> OvirtDriver {
        self.monitor = true;
        self
    }

    /// The VM the target found (after a read), for `check --record`.
    pub fn found(&self) -> Option<&Vm> {
        self.found.as_ref()
    }

    /// The certificate the engine presented last (none over plain HTTP).
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.client.certificate()
    }

    fn err(&self, kind: ErrorKind, stage: Stage, m: String) -> DriverError {
        DriverError::new(kind, stage, m)
    }

    async fn locate(&mut self, d: Instant) -> Result<Vm, DriverError> {
        if let Some(v) = &self.found {
            return Ok(v.clone());
        }
        let st = Stage::Status;
        let want = self
            .cfg
            .vm
            .clone()
            .ok_or_else(|| self.err(ErrorKind::Config, st, "no VM named".into()))?;
        let term = match want.contains([' ', '"']) {
            true => format!("name=\"{}\"", want.replace('"', "")),
            false => format!("name={want}"),
        };
        let what = "search the VMs";
        let path = format!("/vms?search={}", crate::http::client::form_encode(&term));
        let body = self.client.get(&path, what, st, d).await?;
        let all = model::vms(&body).map_err(|m| self.client.bad_answer(what, st, m))?;
        let mut hits: Vec<Vm> = all.into_iter().filter(|v| v.name == want).collect();
        if hits.is_empty() && crate::engine::identity::reported_uuid(&want).is_some() {
            let what = "read the VM by its id";
            let body = self
                .client
                .get(&format!("/vms/{}", want.to_ascii_lowercase()), what, st, d)
                .await?;
            let v = model::vm(&body).map_err(|m| self.client.bad_answer(what, st, m))?;
            if !v.id.eq_ignore_ascii_case(&want) {
                return Err(self.err(
                    ErrorKind::Protocol,
                    st,
                    format!("{what}: the answer is about another VM (never evidence)"),
                ));
            }
            hits.push(v);
        }
        match hits.len() {
            0 => Err(self.err(
                ErrorKind::DeviceError,
                st,
                format!(
                    "the engine lists no VM named '{}' that the user may see",
                    model::printable(&want, 80)
                ),
            )),
            1 => {
                let v = hits.remove(0);
                self.found = Some(v.clone());
                Ok(v)
            }
            n => Err(self.err(
                ErrorKind::Config,
                st,
                format!(
                    "{n} VMs are named '{}' ({}): refusing to guess which one to fence: give \
                     the VM's id",
                    model::printable(&want, 80),
                    hits.iter()
                        .map(|v| v.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }

    async fn current(&mut self, f: &Vm, stage: Stage, d: Instant) -> Result<Vm, DriverError> {
        let what = format!("read VM {}", f.id);
        let body = self
            .client
            .get(&format!("/vms/{}", f.id), &what, stage, d)
            .await?;
        let v = model::vm(&body).map_err(|m| self.client.bad_answer(&what, stage, m))?;
        if v.id != f.id {
            return Err(self.err(
                ErrorKind::Protocol,
                stage,
                format!(
                    "{what}: the answer is about VM '{}' (never evidence)",
                    model::printable(&v.id, 60)
                ),
            ));
        }
        if v.name != f.name {
            return Err(self.err(
                ErrorKind::IdentityMismatch,
                stage,
                format!(
                    "VM {} is now named '{}', not '{}': refusing to act on it",
                    f.id,
                    model::printable(&v.name, 80),
                    model::printable(&f.name, 80)
                ),
            ));
        }
        Ok(v)
    }

    async fn read(&mut self, d: Instant) -> Result<PowerState, DriverError> {
        let f = self.locate(d).await?;
        let v = self.current(&f, Stage::Status, d).await?;
        self.detail = Some(format!(
            "the engine reports VM {} ({}) {}",
            model::printable(&v.name, 80),
            v.id,
            v.status.as_deref().unwrap_or("without a status")
        ));
        model::judge(v.status.as_deref()).map_err(|why| {
            self.err(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!("VM {}: {why}", model::printable(&v.name, 80)),
            )
        })
    }

    async fn follow(&mut self, job: &str, action: &str, d: Instant) -> Result<(), DriverError> {
        let what = format!("read the job of the {action}");
        let mut pause = JOB_POLL;
        loop {
            let state = match self
                .client
                .get(&format!("/jobs/{job}"), &what, Stage::Command, d)
                .await
            {
                Ok(body) => model::job(&body, job)
                    .map_err(|m| self.client.bad_answer(&what, Stage::Command, m))?,
                Err(e) if e.kind == ErrorKind::Timeout && Instant::now() < d => Job::Running,
                Err(e) => return Err(e),
            };
            match state {
                Job::Finished => return Ok(()),
                Job::Failed(why) => {
                    return Err(self.err(
                        ErrorKind::DeviceError,
                        Stage::Command,
                        format!("the engine accepted the {action} and its job failed: {why}"),
                    ))
                }
                Job::Running => {}
            }
            if Instant::now() + pause >= d {
                return Err(self.err(
                    ErrorKind::Timeout,
                    Stage::Command,
                    format!(
                        "the {action}'s job {job} still runs at the deadline; the request is \
                         never sent again"
                    ),
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    async fn power(&mut self, action: &str, d: Instant) -> Result<(), DriverError> {
        let f = self.locate(d).await?;
        let st = Stage::Command;
        let what = format!("{action} VM {}", model::printable(&f.name, 80));
        let path = format!("/vms/{}/{action}", f.id);
        let reply = (self.client.call(Method::POST, &path, &what, st, d).await)
            .map_err(|l| l.read_back(st, &what, "VM"))?;
        if !reply.ok() {
            return Err(self.client.status_error(&reply, &what, st));
        }
        let a = model::action(&reply.body).map_err(|m| self.client.bad_answer(&what, st, m))?;
        if a.status.as_deref() == Some("failed") || a.fault.is_some() {
            return Err(self.err(
                ErrorKind::DeviceError,
                st,
                format!(
                    "the engine answered the {action} with a failure: {}",
                    a.fault.unwrap_or_else(|| "no reason given".into())
                ),
            ));
        }
        match a.job {
            Some(j) => self.follow(&j, action, d).await,
            None => Ok(()),
        }
    }

    /// Every VM the user may see, with its state (or why it has none).
    pub async fn all(
        &mut self,
        d: Instant,
    ) -> Result<Vec<(Vm, Result<PowerState, String>)>, DriverError> {
        let what = "list the VMs";
        let body = self.client.get("/vms", what, Stage::Status, d).await?;
        let vms = model::vms(&body).map_err(|m| self.client.bad_answer(what, Stage::Status, m))?;
        Ok(vms
            .into_iter()
            .map(|v| {
                let s = model::judge(v.status.as_deref());
                (v, s)
            })
            .collect())
    }
}

impl PowerDriver for OvirtDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let d = until(deadline);
        let mut said = format!(
            "the oVirt engine {} as '{}'",
            self.cfg.api_url(),
            model::printable(self.cfg.user.as_deref().unwrap_or_default(), 80)
        );
        if self.cfg.vm.is_some() {
            let f = self.locate(d).await?;
            said.push_str(&format!(
                "; VM {} ({})",
                model::printable(&f.name, 80),
                f.id
            ));
        }
        if self.cfg.tls.is_none() {
            self.warnings.push(
                "plain HTTP (no --ssl): the password travels in clear and anyone on the path \
                 can impersonate the engine"
                    .into(),
            );
        }
        Ok(said)
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        self.read(until(deadline)).await
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let d = until(deadline);
        match command {
            PowerCommand::Off => self.power("stop", d).await,
            PowerCommand::On => self.power("start", d).await,
            other => Err(self.err(
                ErrorKind::Unsupported,
                Stage::Command,
                format!("oVirt has no {other} for a VM here: use off, on or reboot"),
            )),
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let d = until(deadline);
        let f = self.locate(d).await?;
        let v = self.current(&f, Stage::Identity, d).await?;
        let mut id = Identity::default();
        id.names.push(MachineName::new("vm-id", &v.id));
        id.names.push(MachineName::new("name", &v.name));
        // The engine gives a VM its id as the SMBIOS system UUID.
        id.uuid = reported_uuid(&v.id).into_iter().collect();
        Ok(id)
    }

    fn state_detail(&self) -> Option<String> {
        self.detail.clone()
    }

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    async fn close(&mut self) {}
}

impl PlatformDriver for OvirtDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let n = self.client.requests();
        (n, n, self.client.throttled())
    }

    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let d = until(deadline);
        if self.monitor {
            self.client
                .get("", "read the API's root", Stage::Status, d)
                .await?;
            return Ok(Vec::new());
        }
        Ok(self
            .all(d)
            .await?
            .into_iter()
            .map(|(v, s)| PlugEntry {
                id: v.name,
                alias: String::new(),
                state: s.ok(),
            })
            .collect())
    }

    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let vms = self.all(until(deadline)).await.map_err(|e| e.to_string())?;
        Ok(vms
            .into_iter()
            .map(|(v, s)| {
                let mut c = self.cfg.clone();
                c.vm = Some(v.name.clone());
                Listed {
                    target: Some(c.url()),
                    name: format!("{} ({})", v.name, v.id),
                    uri: None,
                    state: s.as_ref().ok().copied(),
                    error: s.err(),
                }
            })
            .collect())
    }

    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        self.detail.iter().cloned().collect()
    }
}
