//! The vSphere driver for the engine: one VM behind one vCenter (or ESXi),
//! read and powered through [`Client`]; built by `super::platform`.
//!
//! * `status` is the VM's power state judged by [`model::judge`]: suspended
//!   is on; a VM whose host stopped reporting is an error naming the host,
//!   never off.
//! * A power command is sent once. Its task is followed to the end within
//!   the deadline. An answer that never came is looked for in the VM's
//!   `recentTask`; found, it is followed; not found, the command is
//!   reported as not carried out (nothing is re-sent); unreadable, the
//!   outcome is unknown ([`ErrorKind::OutcomeUnknown`]).

use super::client::{Client, Submitted};
use super::model::{self, VmSelector, VmView};
use super::soap::PowerMethod;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{reported_uuid, Identity, UuidForm};
use crate::engine::power::{PowerCommand, PowerState};
use crate::secret::Secret;
use std::time::{Duration, Instant};

/// How long a call may take when the engine gives no deadline.
const DEFAULT_LIMIT: Duration = Duration::from_secs(30);
/// How often a running task is read.
const TASK_POLL: Duration = Duration::from_millis(250);

/// One VM to fence.
pub struct VsphereDriver {
    client: Client,
    user: String,
    password: Secret,
    selector: VmSelector,
    datacenter: Option<String>,
    vm: Option<VmView>,
    connected: bool,
    warnings: Vec<String>,
    /// What the last reading was beyond on/off (suspended, a stale host).
    detail: Option<String>,
    /// The suspended warning was given.
    said_suspended: bool,
    /// The certificate vCenter presented (what the TLS client recorded).
    seen: crate::tls::SeenCert,
}

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// A hyphenated UUID with its first three fields' bytes reversed (the
/// other byte order SMBIOS readers use).
fn swap_fields(uuid: &str) -> Option<String> {
    let hex: Vec<u8> = uuid.bytes().filter(|b| *b != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let pairs: Vec<&[u8]> = hex.chunks(2).collect();
    let mut order: Vec<usize> = vec![3, 2, 1, 0, 5, 4, 7, 6];
    order.extend(8..16);
    let out: Vec<u8> = order
        .iter()
        .flat_map(|i| pairs[*i].iter().copied())
        .collect();
    Some(crate::engine::identity::hyphenate(
        std::str::from_utf8(&out).ok()?,
    ))
}

impl VsphereDriver {
    /// A driver for the VM `selector` names, through `client`.
    pub fn new(client: Client, user: &str, password: Secret, selector: VmSelector) -> Self {
        VsphereDriver {
            client,
            user: user.to_string(),
            password,
            selector,
            datacenter: None,
            vm: None,
            connected: false,
            warnings: Vec::new(),
            detail: None,
            said_suspended: false,
            seen: crate::tls::SeenCert::default(),
        }
    }

    /// The VM as last read (after a status or a command), for `check`'s
    /// facts.
    pub fn vm(&self) -> Option<&VmView> {
        self.vm.as_ref()
    }

    /// Where the TLS client configuration of `client` records the
    /// certificate vCenter presents ([`crate::tls::client_config`]).
    pub fn with_certificate(mut self, seen: crate::tls::SeenCert) -> Self {
        self.seen = seen;
        self
    }

    /// The SHA-256 fingerprint of the certificate vCenter presented at the
    /// last handshake (trusted or not), if one got that far.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.seen.fingerprint()
    }

    /// Searches for the VM in the datacenter at this inventory path only
    /// (`DC1`, `Folder/DC1`); `None`: the whole inventory.
    pub fn with_datacenter(mut self, datacenter: Option<String>) -> Self {
        self.datacenter = datacenter;
        self
    }

    /// A new session (the last one ended first): what vCenter said.
    async fn login(&mut self, d: Instant) -> Result<String, DriverError> {
        let password = std::str::from_utf8(self.password.expose()).map_err(|_| {
            DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                "the password is not UTF-8",
            )
        })?;
        if self.connected {
            // Connected again (verify reads several times): end the last
            // session first.
            let _ = self.client.logout(d).await;
            self.connected = false;
        }
        let said = self.client.connect(&self.user, password, d).await?;
        self.connected = true;
        Ok(said)
    }

    /// Every VM of the datacenter (or the whole inventory) with its
    /// reading, for `list`.
    pub async fn list_vms(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<(VmView, model::Reading)>, DriverError> {
        let d = until(deadline);
        if !self.connected {
            self.login(d).await?;
        }
        let dc = match &self.datacenter {
            Some(path) => Some(self.client.datacenter(path, d).await?),
            None => None,
        };
        Ok(self
            .client
            .list_vms(dc.as_ref(), d)
            .await?
            .into_iter()
            .map(|v| {
                let r = model::judge(&v);
                (v, r)
            })
            .collect())
    }

    /// `HOST:PORT` of vCenter.
    pub fn target_host(&self) -> String {
        self.client.authority().to_string()
    }

    /// SOAP calls sent.
    pub fn calls(&self) -> u32 {
        self.client.calls
    }

    async fn current(&mut self, deadline: Instant) -> Result<VmView, DriverError> {
        let v = match &self.vm {
            Some(v) => {
                let first = v.clone();
                self.client.read(&first, deadline).await?
            }
            None => {
                let dc = match &self.datacenter {
                    Some(path) => Some(self.client.datacenter(path, deadline).await?),
                    None => None,
                };
                self.client
                    .find_in(&self.selector, dc.as_ref(), deadline)
                    .await?
            }
        };
        self.vm = Some(v.clone());
        Ok(v)
    }

    /// Keeps what a reading says beyond on/off; a suspended VM is said
    /// once (the engine takes warnings after connect and commands).
    fn note(&mut self, vm: &VmView, reading: &model::Reading) {
        self.detail = match reading {
            model::Reading::Suspended => {
                if !self.said_suspended {
                    self.said_suspended = true;
                    self.warnings.push(format!(
                        "vm {} is suspended: counted as on (it can resume); off powers it off",
                        vm.name
                    ));
                }
                Some(format!("vm {} is suspended (counted as on)", vm.name))
            }
            model::Reading::Stale(why) => Some(why.clone()),
            _ => None,
        };
    }

    async fn run(&mut self, method: PowerMethod, deadline: Instant) -> Result<(), DriverError> {
        let vm = self.current(deadline).await?;
        if let model::Reading::Stale(why) = model::judge(&vm) {
            // vCenter cannot reach the VM: a task would fail or, worse, be
            // queued; say why instead.
            return Err(DriverError::new(
                ErrorKind::DeviceError,
                Stage::Command,
                why,
            ));
        }
        let before = self.client.recent_tasks(&vm.moref, deadline).await?;
        let task = match self.client.submit(method, &vm.moref, deadline).await? {
            Submitted::Task(t) => t,
            Submitted::Lost(e) => {
                match self
                    .client
                    .find_lost(method, &vm.moref, &before, deadline)
                    .await
                {
                    Ok(Some(t)) => {
                        self.warnings.push(format!(
                            "the answer to {} was lost ({}); its task {} was found in the vm's recent tasks",
                            method.method(),
                            e.message,
                            t.value
                        ));
                        t
                    }
                    Ok(None) => {
                        return Err(DriverError::new(
                            e.kind,
                            Stage::Command,
                            format!(
                            "{}; vCenter shows no {} task for {}: not carried out, not sent again",
                            e.message,
                            method.method(),
                            vm.moref.value
                        ),
                        ))
                    }
                    Err(e2) => {
                        return Err(DriverError::new(
                            ErrorKind::OutcomeUnknown,
                            Stage::Command,
                            format!(
                            "{}; whether {} was carried out cannot be read ({}): not sent again",
                            e.message,
                            method.method(),
                            e2.message
                        ),
                        ))
                    }
                }
            }
        };
        self.client.follow(&task, TASK_POLL, deadline).await
    }
}

impl PowerDriver for VsphereDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let d = until(deadline);
        let said = self.login(d).await?;
        let vm = self.current(d).await?;
        self.note(&vm, &model::judge(&vm));
        Ok(format!(
            "{said}; vm {} ({}) on {}",
            vm.name,
            vm.moref.value,
            vm.host_name.as_deref().unwrap_or("an unknown host")
        ))
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        let vm = self.current(until(deadline)).await?;
        let reading = model::judge(&vm);
        self.note(&vm, &reading);
        reading.power_state()
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let method = match command {
            PowerCommand::Off => PowerMethod::Off,
            PowerCommand::On => PowerMethod::On,
            // A hard reset of the VM (`reboot --method cycle`): sent once,
            // its task followed, never sent again.
            PowerCommand::Reset | PowerCommand::Cycle => PowerMethod::Reset,
            other => {
                return Err(DriverError::new(
                    ErrorKind::Unsupported,
                    Stage::Command,
                    format!("vSphere has no {other} that fencekit uses"),
                ))
            }
        };
        self.run(method, until(deadline)).await
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let vm = self.current(until(deadline)).await?;
        // The BIOS UUID is what the guest reads as its SMBIOS system UUID
        // (first: the one shown). Guests of some virtual hardware versions
        // read its first three fields byte-swapped (a Kubernetes node's
        // systemUUID then differs from config.uuid): that form matches too.
        // The instance UUID is vCenter's own.
        let bios = vm.bios_uuid.as_deref().and_then(reported_uuid);
        let swapped = bios.as_ref().and_then(|b| swap_fields(&b.uuid));
        let uuid = [
            bios.map(|f| UuidForm {
                encoding: "config.uuid",
                ..f
            }),
            swapped.map(|uuid| UuidForm {
                uuid,
                encoding: "config.uuid, first fields byte-swapped",
            }),
            vm.instance_uuid
                .as_deref()
                .and_then(reported_uuid)
                .map(|f| UuidForm {
                    encoding: "config.instanceUuid",
                    ..f
                }),
        ]
        .into_iter()
        .flatten()
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
        if self.connected {
            let _ = self
                .client
                .logout(Instant::now() + Duration::from_secs(5))
                .await;
            self.connected = false;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swapped_form_reverses_the_first_three_fields() {
        assert_eq!(
            super::swap_fields("00112233-4455-6677-8899-aabbccddeeff").as_deref(),
            Some("33221100-5544-7766-8899-aabbccddeeff")
        );
        assert_eq!(super::swap_fields("0011"), None);
    }
}
