//! The engine's [`PowerDriver`] for one Nutanix AHV VM through Prism
//! Central's v4 API, and the listing `list` and `monitor` use.
//!
//! * `connect`: the VM by its extId, or by its name (`$filter=name eq
//!   '…'`): a name two VMs share is refused, the candidates named (upstream
//!   acts on the first). Without a VM (`list`, `monitor`), one page of one
//!   VM proves the credentials, as upstream's connect does.
//! * `status`: `GET …/vms/EXTID` (its ETag kept for the next action),
//!   checked to be about that VM, judged by [`super::model::judge`]: an OFF
//!   VM still placed on a host has that host's connection read
//!   (clustermgmt), and a disconnected host's VM is never off.
//! * `command`: `power-off`, `power-on`, `power-cycle` (never an ACPI or
//!   guest action), with `If-Match` and a fresh `NTNX-Request-Id`, each
//!   followed to its task's end: SUCCEEDED, or a failure naming FAILED's
//!   messages or CANCELED (upstream waits out its timeout on a canceled
//!   task). 412 (the VM changed since it was read) is busy: the engine
//!   reads again before sending again. Sent once: a request whose answer
//!   never came is not sent again ([`ErrorKind::OutcomeUnknown`]; the
//!   engine polls the state).
//! * `identity`: the VM's extId and BIOS UUID (what the guest reads as its
//!   SMBIOS system UUID), and its name.

use super::client::{Client, Posted};
use super::config::{NutanixConfig, VmRef};
use super::model::{self, TaskState, VmInfo};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{Identity, MachineName, UuidForm};
use crate::engine::power::{PowerCommand, PowerState};
use crate::platform::lost::sent_unanswered;
use crate::platform::{Listed, PlatformDriver, PlugEntry};
use crate::secret::Secret;
use std::time::{Duration, Instant};

const DEFAULT_LIMIT: Duration = Duration::from_secs(60);
const TASK_POLL: Duration = Duration::from_millis(200);
const VMS: &str = "/vmm/v4.0/ahv/config/vms";
/// VMs per page of a listing (the API's most).
const PAGE: usize = 100;

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// `s` percent-encoded for a query value.
fn query_value(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A random (version 4) UUID, for `NTNX-Request-Id`.
fn request_id() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// One VM (or, for a listing, none) behind one Prism Central.
pub struct NutanixDriver {
    cfg: NutanixConfig,
    client: Client,
    vm: Option<VmInfo>,
    etag: Option<String>,
    monitor: bool,
    detail: Option<String>,
    noted: Option<String>,
    warnings: Vec<String>,
}

impl NutanixDriver {
    /// A driver for `cfg` as `user`, each request bounded by `timeout`; sends nothing.
    pub fn new(
        cfg: NutanixConfig,
        user: &str,
        password: Secret,
        timeout: Duration,
    ) -> Result<NutanixDriver, DriverError> {
        cfg.validate()
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let client = Client::new(&cfg.api_url(), &cfg.tls, user, &password, timeout)?;
        Ok(NutanixDriver {
            cfg,
            client,
            vm: None,
            etag: None,
            monitor: false,
            detail: None,
            noted: None,
            warnings: Vec::new(),
        })
    }

    /// A listing that only proves the API answers (`monitor`): one read.
    pub fn for_monitor(mut self) -> NutanixDriver {
        self.monitor = true;
        self
    }

    /// The VM found by `connect`.
    pub fn vm(&self) -> Option<&VmInfo> {
        self.vm.as_ref()
    }

    /// The certificate Prism Central presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.client.certificate()
    }

    fn err(kind: ErrorKind, stage: Stage, m: String) -> DriverError {
        DriverError::new(kind, stage, m)
    }

    /// One page of VMs, `filter` applied.
    async fn page(
        &mut self,
        filter: Option<&str>,
        limit: usize,
        page: usize,
        d: Instant,
    ) -> Result<(Vec<VmInfo>, Option<u64>), DriverError> {
        let mut path = format!("{VMS}?$limit={limit}&$page={page}");
        if let Some(f) = filter {
            path.push_str(&format!("&$filter={}", query_value(f)));
        }
        let what = "list VMs";
        let r = self.client.get(&path, what, Stage::Status, d).await?;
        model::vm_list(&r.body).map_err(|m| self.client.bad_answer(what, Stage::Status, m))
    }

    /// Reads VM `ext` (and keeps its ETag).
    async fn get_vm(&mut self, ext: &str, stage: Stage, d: Instant) -> Result<VmInfo, DriverError> {
        let what = format!("read VM {ext}");
        let r = self
            .client
            .get(&format!("{VMS}/{ext}"), &what, stage, d)
            .await?;
        let vm = model::vm(&r.body).map_err(|m| self.client.bad_answer(&what, stage, m))?;
        if !vm.ext_id.eq_ignore_ascii_case(ext) {
            return Err(Self::err(
                ErrorKind::Protocol,
                stage,
                format!(
                    "{what}: the answer is about VM {} (never evidence)",
                    model::printable(&vm.ext_id, 60)
                ),
            ));
        }
        // The first read's BIOS UUID is the VM's: a later answer under the
        // same extId with another one is about another machine.
        if let Some(first) = self.vm.as_ref().and_then(|v| v.bios_uuid.as_deref()) {
            if let Some(b) = vm.bios_uuid.as_deref() {
                if !b.eq_ignore_ascii_case(first) {
                    return Err(Self::err(
                        ErrorKind::Protocol,
                        stage,
                        format!(
                            "{what}: the answer names BIOS UUID {}, not {first} as first read (never evidence)",
                            model::printable(b, 60)
                        ),
                    ));
                }
            }
        }
        if let Some(VmRef::Name(want)) = &self.cfg.vm {
            if vm.name != *want {
                return Err(Self::err(
                    ErrorKind::IdentityMismatch,
                    stage,
                    format!(
                        "VM {ext} is now named '{}', not '{}': refusing to act on it",
                        model::printable(&vm.name, 80),
                        model::printable(want, 80)
                    ),
                ));
            }
        }
        self.etag = r.header("etag").map(str::to_string);
        Ok(vm)
    }

    /// Finds the VM the target names.
    async fn find(&mut self, d: Instant) -> Result<VmInfo, DriverError> {
        let st = Stage::Status;
        match self.cfg.vm.clone() {
            None => Err(Self::err(ErrorKind::Config, st, "no VM named".into())),
            Some(VmRef::ExtId(e)) => self.get_vm(&e, st, d).await,
            Some(VmRef::Name(name)) => {
                let (all, _) = self
                    .page(Some(&model::name_filter(&name)), PAGE, 0, d)
                    .await?;
                let mut hits: Vec<VmInfo> = all.into_iter().filter(|v| v.name == name).collect();
                match hits.len() {
                    0 => Err(Self::err(
                        ErrorKind::DeviceError,
                        st,
                        format!(
                            "Prism Central lists no VM named '{}' that the user may see",
                            model::printable(&name, 80)
                        ),
                    )),
                    1 => Ok(hits.remove(0)),
                    n => {
                        let ids: Vec<String> = hits
                            .iter()
                            .map(|v| format!("{} ({})", v.ext_id, v.power))
                            .collect();
                        Err(Self::err(
                            ErrorKind::Config,
                            st,
                            format!(
                                "{n} VMs are named '{}': {}; refusing to guess which one to fence: give \
                                 the VM's extId as the plug (e.g. {})",
                                model::printable(&name, 80),
                                ids.join(", "),
                                hits[0].ext_id
                            ),
                        ))
                    }
                }
            }
        }
    }

    fn ext_id(&self) -> Result<String, DriverError> {
        self.vm.as_ref().map(|v| v.ext_id.clone()).ok_or_else(|| {
            Self::err(
                ErrorKind::Protocol,
                Stage::Status,
                "not connected to a VM".into(),
            )
        })
    }

    async fn ensure(&mut self, d: Instant) -> Result<String, DriverError> {
        if self.vm.is_none() {
            let vm = self.find(d).await?;
            self.vm = Some(vm);
        }
        self.ext_id()
    }

    /// Whether `vm`'s host is connected (read only for an OFF VM still placed).
    async fn host_connected(
        &mut self,
        vm: &VmInfo,
        d: Instant,
    ) -> Result<Option<bool>, DriverError> {
        let (Some(host), Some(cluster)) = (&vm.host, &vm.cluster) else {
            return Ok(None);
        };
        let what = format!("read host {host}");
        let path = format!("/clustermgmt/v4.0/config/clusters/{cluster}/hosts/{host}");
        let r = self.client.get(&path, &what, Stage::Status, d).await?;
        model::host_connected(&r.body).map_err(|m| self.client.bad_answer(&what, Stage::Status, m))
    }

    /// Reads and judges the VM.
    async fn read(&mut self, d: Instant) -> Result<PowerState, DriverError> {
        let ext = self.ensure(d).await?;
        let vm = self.get_vm(&ext, Stage::Status, d).await?;
        let connected = match (vm.power.as_str(), vm.host.is_some()) {
            ("OFF", true) => self.host_connected(&vm, d).await?,
            _ => None,
        };
        let j = model::judge(&vm, connected);
        self.detail = Some(format!(
            "Prism Central reports VM {} {}{}",
            vm.name,
            vm.power,
            vm.host
                .as_deref()
                .map(|h| format!(" on host {h}"))
                .unwrap_or_default()
        ));
        if let Some(n) = j.note {
            if self.noted.as_deref() != Some(n.as_str()) {
                self.warnings.push(format!("VM {}: {n}", vm.name));
                self.noted = Some(n);
            }
        }
        self.vm = Some(vm);
        j.state.map_err(|why| {
            Self::err(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!("VM {ext}: {why}"),
            )
        })
    }

    /// Follows task `task` of VM `ext` to its end within `d`.
    async fn follow(
        &mut self,
        task: &str,
        ext: &str,
        d: Instant,
    ) -> Result<TaskState, DriverError> {
        let path = format!("/prism/v4.0/config/tasks/{task}");
        let what = format!("read task {task}");
        let mut pause = TASK_POLL;
        loop {
            let state = match self.client.get(&path, &what, Stage::Command, d).await {
                Ok(r) => model::task(&r.body, task, ext)
                    .map_err(|m| self.client.bad_answer(&what, Stage::Command, m))?,
                Err(e) if e.kind == ErrorKind::Timeout && Instant::now() < d => {
                    TaskState::Pending("unread".into())
                }
                Err(e) => return Err(e),
            };
            if !matches!(state, TaskState::Pending(_)) {
                return Ok(state);
            }
            if Instant::now() + pause >= d {
                return Err(Self::err(
                    ErrorKind::Timeout,
                    Stage::Command,
                    format!("task {task} is not over at the deadline; its outcome is read back, the request is never sent again"),
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    /// Sends `action` once and follows its task.
    async fn power(&mut self, action: &str, d: Instant) -> Result<(), DriverError> {
        let ext = self.ensure(d).await?;
        if self.etag.is_none() {
            self.get_vm(&ext, Stage::Command, d).await?;
        }
        let etag = self.etag.clone().ok_or_else(|| {
            Self::err(
                ErrorKind::Protocol,
                Stage::Command,
                format!("Prism Central gave VM {ext} no ETag to act on"),
            )
        })?;
        let st = Stage::Command;
        let what = format!("{action} VM {ext}");
        let task = match self
            .client
            .action(&ext, action, &etag, &request_id(), d)
            .await?
        {
            Posted::Task(t) => t,
            Posted::Refused(r) => {
                self.etag = None;
                return Err(self.client.status_error(&r, &what, st));
            }
            Posted::Silent(e) => return Err(sent_unanswered(st, &what, &e, "VM")),
        };
        self.etag = None;
        match self.follow(&task, &ext, d).await? {
            TaskState::Succeeded | TaskState::Pending(_) => Ok(()),
            TaskState::Failed(why) => {
                let kind = match why.contains("INVALID_STATE") || why.to_ascii_lowercase().contains("already") {
                    true => ErrorKind::NotInPresentState,
                    false => ErrorKind::DeviceError,
                };
                Err(Self::err(kind, st, format!("Prism Central accepted {what} and its task {task} failed: {why}")))
            }
            TaskState::Canceled(s) => Err(Self::err(
                ErrorKind::DeviceError,
                st,
                format!("Prism Central accepted {what} and its task {task} ended {s}: nothing was changed by it"),
            )),
        }
    }

    /// Every VM the listing selects (`--filter`), page by page.
    pub async fn list_vms(&mut self, d: Instant) -> Result<Vec<VmInfo>, DriverError> {
        let filter = self.cfg.filter.clone();
        let mut out = Vec::new();
        for page in 0..1000 {
            let (vms, total) = self.page(filter.as_deref(), PAGE, page, d).await?;
            let n = vms.len();
            out.extend(vms);
            if n < PAGE || total.is_some_and(|t| out.len() as u64 >= t) {
                break;
            }
        }
        Ok(out)
    }
}

impl PowerDriver for NutanixDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let d = until(deadline);
        let mut said = format!("Prism Central {} (v4 API)", self.cfg.api_url());
        match &self.cfg.vm {
            Some(_) => {
                let vm = self.find(d).await?;
                said.push_str(&format!("; VM {} ({})", vm.name, vm.ext_id));
                self.vm = Some(vm);
            }
            None => {
                self.page(None, 1, 0, d).await?;
            }
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
        let action = match command {
            PowerCommand::Off => "power-off",
            PowerCommand::On => "power-on",
            PowerCommand::Cycle => "power-cycle",
            other => {
                return Err(Self::err(
                    ErrorKind::Unsupported,
                    Stage::Command,
                    format!("fencekit sends Nutanix no {other}: use off, on or reboot"),
                ))
            }
        };
        self.power(action, until(deadline)).await
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let d = until(deadline);
        let ext = self.ensure(d).await?;
        let vm = match &self.vm {
            Some(v) if v.bios_uuid.is_some() => v.clone(),
            _ => self.get_vm(&ext, Stage::Identity, d).await?,
        };
        let mut id = Identity::default();
        for (text, encoding) in [
            (vm.bios_uuid.as_deref(), "smbios"),
            (Some(vm.ext_id.as_str()), "vm extId"),
        ] {
            if let Some(u) = text.and_then(crate::engine::identity::reported_uuid) {
                id.uuid.push(UuidForm {
                    uuid: u.uuid,
                    encoding,
                });
            }
        }
        id.names.push(MachineName::new("name", &vm.name));
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

impl PlatformDriver for NutanixDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let n = self.client.requests();
        (n, n, self.client.throttled())
    }

    /// The VMs as upstream lists them (`NAME,EXTID`); a VM whose state is
    /// not plainly on or off (paused, on a host that may be stale) has
    /// none. For `monitor`, one page of one VM.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let d = until(deadline);
        if self.monitor {
            self.page(None, 1, 0, d).await?;
            return Ok(Vec::new());
        }
        Ok(self
            .list_vms(d)
            .await?
            .into_iter()
            .map(|v| PlugEntry {
                state: list_state(&v),
                id: v.name,
                alias: v.ext_id,
            })
            .collect())
    }

    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let vms = self
            .list_vms(until(deadline))
            .await
            .map_err(|e| e.to_string())?;
        let mut c = self.cfg.clone();
        Ok(vms
            .into_iter()
            .map(|v| {
                c.vm = Some(VmRef::ExtId(v.ext_id.clone()));
                Listed {
                    target: Some(c.url()),
                    state: list_state(&v),
                    name: format!("{} {}", v.name, v.power),
                    uri: None,
                    error: None,
                }
            })
            .collect())
    }

    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        self.detail.iter().cloned().collect()
    }
}

/// A listed VM's state: ON on, OFF off when no host holds it, else none.
fn list_state(v: &VmInfo) -> Option<PowerState> {
    match (v.power.as_str(), &v.host) {
        ("ON" | "PAUSED" | "SUSPENDED", _) => Some(PowerState::On),
        ("OFF", None) => Some(PowerState::Off),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_and_request_ids() {
        assert_eq!(query_value("name eq 'a b'"), "name%20eq%20%27a%20b%27");
        let a = request_id();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert_ne!(a, request_id());
    }
}
