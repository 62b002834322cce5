//! The engine's [`PowerDriver`] for one Proxmox VE guest, and the listing
//! `list` and `monitor` use.
//!
//! * `connect`: a ticket (an API token needs none), then the guest: read
//!   straight from its node when the node, kind and VMID are known (the
//!   agent's `--pve-node`), else found in the cluster's resources by VMID
//!   or name. A name two guests share is refused, the candidates named; a
//!   guest no longer on the node given is followed to the node it is on.
//! * `status`: `status/current` from the guest's node, checked to be about
//!   that guest, judged by [`super::model::judge`] (a stopped QEMU guest's
//!   configuration is read too: a saved hibernation state is not off).
//! * `command`: `status/stop` (off), `status/start` (on), `status/reset`
//!   (cycle; an LXC container, which has no reset, is stopped, seen
//!   stopped and started), each followed to its task's exit status. A
//!   task that fails after acceptance is a failure naming its exit status
//!   (a locked guest: "VM is locked (backup)"); an HA-managed guest's
//!   `hastop`/`hastart` only asks the HA manager, whose effect the engine
//!   reads back. Sent once: a request whose answer never came is not sent
//!   again ([`ErrorKind::OutcomeUnknown`]; the engine polls the state).
//!   `skiplock=1` only when configured (root@pam only).
//! * `identity`: the QEMU guest's SMBIOS UUID (`smbios1`), its VMID and name.
//!
//! As a witness, Proxmox VE is the fencing device's own view: alone it is
//! "bmc-only" for `verify`.

use super::client::Client;
use super::config::{Guest, Kind, PveConfig};
use super::model::{self, Current, Resource, TaskState, Upid};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{reported_uuid, Identity, MachineName};
use crate::engine::power::{PowerCommand, PowerState};
use crate::platform::{Listed, PlatformDriver, PlugEntry};
use crate::secret::Secret;
use reqwest::Method;
use std::time::{Duration, Instant};

/// How long a call may take when the engine gives no deadline.
const DEFAULT_LIMIT: Duration = Duration::from_secs(60);
/// The first pause between two reads of a task (doubled up to a second).
const TASK_POLL: Duration = Duration::from_millis(100);

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// Where a guest is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its VMID.
    pub vmid: u32,
    /// QEMU or LXC.
    pub kind: Kind,
    /// The node it is on.
    pub node: String,
    /// Its name, when known.
    pub name: Option<String>,
}

impl Found {
    fn path(&self, rest: &str) -> String {
        format!(
            "/nodes/{}/{}/{}{rest}",
            self.node,
            self.kind.as_str(),
            self.vmid
        )
    }
}

/// One guest (or, for a listing, none) of one cluster.
pub struct PveDriver {
    cfg: PveConfig,
    client: Client,
    found: Option<Found>,
    /// The reading `connect` made while finding the guest, for the first
    /// status read.
    first: Option<Current>,
    monitor: bool,
    detail: Option<String>,
    noted: Option<String>,
    warnings: Vec<String>,
}

impl PveDriver {
    /// A driver for `cfg` as `user` with `secret` (the password, or the API
    /// token's secret), each request bounded by `timeout`; sends nothing.
    pub fn new(
        cfg: PveConfig,
        user: &str,
        secret: Secret,
        timeout: Duration,
    ) -> Result<PveDriver, DriverError> {
        cfg.validate()
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let client = Client::new(&cfg, user, secret, timeout)?;
        Ok(PveDriver {
            cfg,
            client,
            found: None,
            first: None,
            monitor: false,
            detail: None,
            noted: None,
            warnings: Vec::new(),
        })
    }

    /// A listing that only proves the API answers (`monitor`): one read.
    pub fn for_monitor(mut self) -> PveDriver {
        self.monitor = true;
        self
    }

    /// The guest found by `connect`.
    pub fn found(&self) -> Option<&Found> {
        self.found.as_ref()
    }

    /// The certificate the API presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.client.certificate()
    }

    fn err(&self, kind: ErrorKind, stage: Stage, m: String) -> DriverError {
        DriverError::new(kind, stage, m)
    }

    /// The guests and nodes the cluster reports.
    async fn resources(
        &mut self,
        query: &str,
        d: Instant,
    ) -> Result<(Vec<Resource>, Vec<model::NodeInfo>), DriverError> {
        let what = "read the cluster's resources";
        let body = self
            .client
            .get(
                &format!("/cluster/resources{query}"),
                what,
                Stage::Status,
                d,
            )
            .await?;
        model::resources(&body).map_err(|m| self.client.bad_answer(what, Stage::Status, m))
    }

    /// Finds the guest in the cluster's resources.
    async fn find(&mut self, guest: &Guest, d: Instant) -> Result<Found, DriverError> {
        let st = Stage::Status;
        let (all, _) = self.resources("?type=vm", d).await?;
        let kind = self.cfg.kind;
        let mut hits: Vec<Resource> = all
            .into_iter()
            .filter(|r| match guest {
                Guest::Id(n) => r.vmid == *n,
                Guest::Name(s) => r.name == *s,
            })
            .filter(|r| kind.is_none_or(|k| k == r.kind))
            .collect();
        match hits.len() {
            0 => Err(self.err(
                ErrorKind::DeviceError,
                st,
                format!(
                    "the cluster lists no {} guest '{}' that the user may see (VM.Audit)",
                    kind.map_or("", Kind::as_str),
                    model::printable(&guest.text(), 80)
                ),
            )),
            1 => {
                let r = hits.remove(0);
                if let Some(n) = self.cfg.node.as_deref().filter(|n| *n != r.node) {
                    self.warnings.push(format!(
                        "guest {} is on node {}, not {n} (moved): acting on it there",
                        r.vmid, r.node
                    ));
                }
                Ok(Found {
                    vmid: r.vmid,
                    kind: r.kind,
                    name: Some(r.name).filter(|n| !n.is_empty()),
                    node: r.node,
                })
            }
            n => {
                let ids: Vec<String> = hits
                    .iter()
                    .map(|r| format!("{} on {} ({})", r.vmid, r.node, r.status))
                    .collect();
                Err(self.err(
                    ErrorKind::Config,
                    st,
                    format!(
                        "{n} guests are named '{}': {}; refusing to guess which one to fence: \
                         give the VMID (e.g. {})",
                        model::printable(&guest.text(), 80),
                        ids.join(", "),
                        hits[0].vmid
                    ),
                ))
            }
        }
    }

    /// The guest: straight from its node when node, kind and VMID are all
    /// given, else (or when it is not there) from the cluster's resources.
    async fn locate(&mut self, d: Instant) -> Result<Found, DriverError> {
        if let Some(f) = &self.found {
            return Ok(f.clone());
        }
        let guest =
            self.cfg.guest.clone().ok_or_else(|| {
                self.err(ErrorKind::Config, Stage::Status, "no guest named".into())
            })?;
        let direct = match (&guest, &self.cfg.node, self.cfg.kind) {
            (Guest::Id(vmid), Some(node), Some(kind)) => Some(Found {
                vmid: *vmid,
                kind,
                node: node.clone(),
                name: None,
            }),
            _ => None,
        };
        let found = match direct {
            Some(f) => match self.current(&f, d).await {
                Ok(c) => {
                    let name = c.name.clone();
                    self.first = Some(c);
                    Found { name, ..f }
                }
                // Not on that node (moved, or another kind): look for it.
                Err(e) if e.message.contains("no such guest there") => self.find(&guest, d).await?,
                Err(e) => return Err(e),
            },
            None => self.find(&guest, d).await?,
        };
        self.found = Some(found.clone());
        Ok(found)
    }

    /// `status/current` of `f`, checked to be about it.
    async fn current(&mut self, f: &Found, d: Instant) -> Result<Current, DriverError> {
        let what = format!("read the status of guest {} on {}", f.vmid, f.node);
        let body = self
            .client
            .get(&f.path("/status/current"), &what, Stage::Status, d)
            .await?;
        let c =
            model::current(&body).map_err(|m| self.client.bad_answer(&what, Stage::Status, m))?;
        if c.vmid.is_some_and(|v| v != f.vmid) {
            return Err(self.err(
                ErrorKind::Protocol,
                Stage::Status,
                format!(
                    "{what}: the answer is about guest {} (never evidence)",
                    c.vmid.unwrap_or_default()
                ),
            ));
        }
        if let (Some(Guest::Name(want)), Some(got)) = (&self.cfg.guest, &c.name) {
            if want != got {
                return Err(self.err(
                    ErrorKind::IdentityMismatch,
                    Stage::Status,
                    format!(
                        "guest {} is now named '{}', not '{}': refusing to act on it",
                        f.vmid,
                        model::printable(got, 80),
                        model::printable(want, 80)
                    ),
                ));
            }
        }
        Ok(c)
    }

    /// The configuration's SMBIOS UUID, saved state and name.
    async fn config(
        &mut self,
        f: &Found,
        stage: Stage,
        d: Instant,
    ) -> Result<(Option<String>, bool, Option<String>), DriverError> {
        let what = format!("read the configuration of guest {}", f.vmid);
        let body = self.client.get(&f.path("/config"), &what, stage, d).await?;
        model::config(&body).map_err(|m| self.client.bad_answer(&what, stage, m))
    }

    /// Reads and judges the guest.
    async fn read(&mut self, d: Instant) -> Result<PowerState, DriverError> {
        let f = self.locate(d).await?;
        let c = match self.first.take() {
            Some(c) => c,
            None => self.current(&f, d).await?,
        };
        let saved = match (f.kind, c.status.as_str()) {
            (Kind::Qemu, "stopped") => self.config(&f, Stage::Status, d).await?.1,
            _ => false,
        };
        let j = model::judge(&c, saved);
        let mut detail = format!("Proxmox VE reports guest {} {}", f.vmid, c.status);
        if let Some(q) = c.qmpstatus.as_deref().filter(|q| *q != c.status) {
            detail.push_str(&format!(" (QEMU: {q})"));
        }
        if let Some(l) = &c.lock {
            detail.push_str(&format!(", lock {l}"));
        }
        if let Some(h) = &c.ha {
            detail.push_str(&format!(", HA {h}"));
        }
        self.detail = Some(detail);
        if let Some(n) = j.note {
            if self.noted.as_deref() != Some(n.as_str()) {
                self.warnings.push(format!("guest {}: {n}", f.vmid));
                self.noted = Some(n);
            }
        }
        j.state.map_err(|why| {
            self.err(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!("guest {}: {why}", f.vmid),
            )
        })
    }

    /// Follows task `upid` to its end within `d`.
    async fn follow(&mut self, upid: &Upid, d: Instant) -> Result<TaskState, DriverError> {
        let path = format!("/nodes/{}/tasks/{}/status", upid.node, upid.text);
        let what = format!("read task {}", upid.kind);
        let mut pause = TASK_POLL;
        loop {
            let state = match self.client.get(&path, &what, Stage::Command, d).await {
                Ok(body) => model::task(&body, upid)
                    .map_err(|m| self.client.bad_answer(&what, Stage::Command, m))?,
                // A read of the task may be repeated (it changes nothing).
                Err(e) if e.kind == ErrorKind::Timeout && Instant::now() < d => {
                    tracing::debug!(error = %e, "task read unanswered; reading again");
                    TaskState::Running
                }
                Err(e) => return Err(e),
            };
            if state != TaskState::Running {
                return Ok(state);
            }
            if Instant::now() + pause >= d {
                return Err(self.err(
                    ErrorKind::Timeout,
                    Stage::Command,
                    format!(
                        "task {} ({}) still runs at the deadline; its outcome is read back, the \
                         request is never sent again",
                        upid.kind, upid.text
                    ),
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// Sends `action` (`stop`, `start`, `reset`) once and follows its task.
    async fn power(&mut self, action: &str, d: Instant) -> Result<(), DriverError> {
        let f = self.locate(d).await?;
        let st = Stage::Command;
        let what = format!("{action} guest {} on {}", f.vmid, f.node);
        let form: &[(&str, &str)] = match self.cfg.skiplock {
            true => &[("skiplock", "1")],
            false => &[],
        };
        let path = f.path(&format!("/status/{action}"));
        let reply = (self
            .client
            .call(Method::POST, &path, form, &what, st, d)
            .await)
            .map_err(|l| l.read_back(st, &what, "guest"))?;
        if !reply.ok() {
            return Err(self.client.status_error(&reply, &what, st));
        }
        let upid = model::upid(&reply.body).map_err(|m| self.client.bad_answer(&what, st, m))?;
        if upid.id != f.vmid.to_string() {
            return Err(self.err(
                ErrorKind::Protocol,
                st,
                format!(
                    "{what}: the answer names a task for guest '{}' (never evidence)",
                    model::printable(&upid.id, 40)
                ),
            ));
        }
        match self.follow(&upid, d).await? {
            TaskState::Ok if upid.kind.starts_with("ha") => {
                self.warnings.push(format!(
                    "guest {} is managed by HA: {} handed the {action} to the HA manager; the \
                     state is read back",
                    f.vmid, upid.kind
                ));
                Ok(())
            }
            TaskState::Ok | TaskState::Running => Ok(()),
            TaskState::Failed(why) => {
                let low = why.to_ascii_lowercase();
                let kind = if low.contains("already running") || low.contains("not running") {
                    ErrorKind::NotInPresentState
                } else {
                    ErrorKind::DeviceError
                };
                let hint = match (low.contains("locked"), self.cfg.skiplock) {
                    _ if low.contains("(suspended)") => {
                        "; the guest is hibernated: a start resumes its saved memory; discard the \
                         saved state (unlock it and remove its vmstate) for it to count as off \
                         (skiplock does not discard it)"
                    }
                    (true, false) => {
                        "; the lock belongs to another operation (backup, migration, snapshot, \
                         hibernation): end it, or let root@pam send skiplock (--skiplock)"
                    }
                    _ => "",
                };
                Err(self.err(
                    kind,
                    st,
                    format!(
                        "Proxmox VE accepted the {action} of guest {} and its task {} failed: \
                         {why}{hint}",
                        f.vmid, upid.text
                    ),
                ))
            }
        }
    }

    /// An LXC container's cycle: stop, seen stopped, start.
    async fn cycle_container(&mut self, d: Instant) -> Result<(), DriverError> {
        self.power("stop", d).await?;
        let mut pause = TASK_POLL;
        loop {
            if self.read(d).await? == PowerState::Off {
                break;
            }
            if Instant::now() + pause >= d {
                return Err(self.err(
                    ErrorKind::TransitionTimeout,
                    Stage::Wait,
                    "the container was not seen stopped before the deadline; not started".into(),
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
        self.power("start", d).await
    }

    /// Every guest the cluster reports, with the state its last report
    /// allows (none for an offline node's, an unsettled HA state's or an
    /// unknown status), for `list`.
    pub async fn guests(
        &mut self,
        d: Instant,
    ) -> Result<Vec<(Resource, Option<PowerState>, Option<String>)>, DriverError> {
        let (guests, nodes) = self.resources("", d).await?;
        let mut out = Vec::with_capacity(guests.len());
        for g in guests.into_iter().filter(|g| !g.template) {
            let online = nodes.iter().any(|n| n.node == g.node && n.online);
            let c = Current {
                vmid: Some(g.vmid),
                name: None,
                status: g.status.clone(),
                qmpstatus: None,
                lock: g.lock.clone(),
                ha: g.hastate.clone(),
            };
            let (state, why) = match online {
                false => (
                    None,
                    Some(format!(
                        "node {} is offline: its last report is not evidence",
                        g.node
                    )),
                ),
                true => match model::judge(&c, false).state {
                    Ok(s) => (Some(s), None),
                    Err(w) => (None, Some(w)),
                },
            };
            out.push((g, state, why));
        }
        Ok(out)
    }
}

impl PowerDriver for PveDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let d = until(deadline);
        self.client.login(d).await?;
        let user = self.cfg.user.clone().unwrap_or_default();
        let mut said = format!(
            "Proxmox VE {} as '{user}' ({})",
            self.cfg.api_url(),
            if self.client.uses_token() {
                "API token"
            } else {
                "ticket"
            }
        );
        if self.cfg.guest.is_some() {
            let f = self.locate(d).await?;
            said.push_str(&format!(
                "; {} guest {} on {}",
                f.kind.as_str(),
                f.vmid,
                f.node
            ));
        }
        if self.cfg.skiplock {
            self.warnings.push(
                "skiplock: power requests override the guest's lock (a backup, migration or \
                 snapshot in progress is cut short)"
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
            PowerCommand::Cycle => match self.locate(d).await?.kind {
                Kind::Qemu => self.power("reset", d).await,
                Kind::Lxc => self.cycle_container(d).await,
            },
            other => Err(self.err(
                ErrorKind::Unsupported,
                Stage::Command,
                format!("Proxmox VE has no {other} for a guest: use off, on or reboot"),
            )),
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let d = until(deadline);
        let f = self.locate(d).await?;
        let mut id = Identity::default();
        id.names.push(MachineName::new("vmid", &f.vmid.to_string()));
        if f.kind == Kind::Qemu {
            let (uuid, _, name) = self.config(&f, Stage::Identity, d).await?;
            id.uuid = uuid
                .as_deref()
                .and_then(reported_uuid)
                .into_iter()
                .collect();
            if let Some(n) = name.or(f.name.clone()) {
                id.names.push(MachineName::new("name", &n));
            }
        }
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

impl PlatformDriver for PveDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let n = self.client.requests();
        (n, n, self.client.throttled())
    }

    /// The guests as `VMID,NAME` (upstream keys its list by VMID). For
    /// `monitor`, one authenticated read (`/version`), never the list.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let d = until(deadline);
        if self.monitor {
            self.client
                .get("/version", "read the version", Stage::Status, d)
                .await?;
            return Ok(Vec::new());
        }
        Ok(self
            .guests(d)
            .await?
            .into_iter()
            .map(|(g, state, _)| PlugEntry {
                id: g.vmid.to_string(),
                alias: g.name,
                state,
            })
            .collect())
    }

    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let guests = self
            .guests(until(deadline))
            .await
            .map_err(|e| e.to_string())?;
        let at = |g: &Resource| {
            let mut c = self.cfg.clone();
            c.node = Some(g.node.clone());
            c.guest = Some(Guest::Id(g.vmid));
            c.kind = None;
            c.url()
        };
        Ok(guests
            .iter()
            .map(|(g, state, why)| Listed {
                target: Some(at(g)),
                name: format!("{} ({} {})", g.name, g.kind.as_str(), g.vmid),
                uri: None,
                state: *state,
                error: why.clone(),
            })
            .collect())
    }

    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        self.detail.iter().cloned().collect()
    }
}
