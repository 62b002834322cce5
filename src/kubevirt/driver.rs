//! The engine's [`PowerDriver`] for one KubeVirt VirtualMachine.
//!
//! * `connect`: the credentials ([`super::kubeconfig`]), then one GET of the
//!   VirtualMachine: it authenticates, shows that the VM exists in that
//!   namespace, and gives its `metadata.uid` and run strategy.
//! * `observe`: the VirtualMachineInstance; when it is gone or final, the
//!   VM's virt-launcher pods and their nodes ([`super::model::decide`]).
//! * `command(Off)`: the `stop` subresource with `gracePeriod: 0` (a hard
//!   stop: the guest's graceful shutdown, up to its
//!   `terminationGracePeriodSeconds`, is not waited for). `command(On)`:
//!   `start`. `command(Cycle)`: `restart` with `gracePeriodSeconds: 0`.
//!   A 409 is read as what it names (not running, already running, a run
//!   strategy that refuses) and the VM is read back before anything is
//!   decided; a request whose answer never came is never sent again: the
//!   VM is read back, and when nothing shows it took effect its outcome is
//!   unknown ([`ErrorKind::OutcomeUnknown`]).
//! * 429: the request was not carried out; it is sent again after the
//!   server's `Retry-After` (or a growing pause), within the deadline.
//! * 401 with a token file (the in-cluster service account's projected
//!   token, rotated by the kubelet): the file is read again and the request
//!   sent once more with the new token.
//!
//! As a witness: the KubeVirt API is the fencing device's own view (as
//! EC2's is): alone it is "bmc-only" for `verify`.
//!
//! The parts: `api` (credentials, one request with its 401 and 429
//! handling, API `Status` answers as errors) and `read` (the VM, the VMI,
//! the off proof from the launcher pods and their nodes, `list`); this file
//! holds the power commands, their refusals and the engine's trait.

use super::config::{Env, KubevirtConfig};
use super::http::TlsSetup;
use super::kubeconfig::{self, Access, Auth, Selection};
use super::model::{self, Launchers, NodeReady, Refusal, Verdict, Vm, Vmi};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{normalise_uuid, Identity, MachineName, UuidForm};
use crate::engine::power::{Observed, PowerCommand, PowerState};
use crate::http::{Client, Patience, Reply, Request};
use crate::secret::Secret;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Instant;

mod api;
mod read;

/// One VirtualMachine in the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// `metadata.name`.
    pub name: String,
    /// `status.printableStatus`.
    pub printable: String,
}

/// The outcome of one API call.
enum Call {
    /// An answer (any status but 401/429, which are handled).
    Reply(Reply),
    /// No answer: the request may have been carried out.
    Silent(DriverError),
}

/// What a subresource PUT came to.
enum Sub {
    /// 2xx.
    Accepted,
    /// Refused (a `Status`).
    Refused(model::ApiStatus),
    /// No answer.
    Silent(DriverError),
}

/// One KubeVirt VirtualMachine as the engine drives it.
pub struct KubevirtDriver {
    cfg: KubevirtConfig,
    env: Env,
    access: Option<Access>,
    http: Option<Client>,
    token: Option<Secret>,
    namespace: String,
    vm: Option<Vm>,
    vmi: Option<Vmi>,
    /// The VMI was read (so `vmi == None` means there is none).
    vmi_read: bool,
    detail: Option<String>,
    warnings: Vec<String>,
    pods_denied: Option<String>,
    nodes_denied: Option<String>,
    device_only_noted: bool,
}

impl KubevirtDriver {
    /// A driver with the process's environment (checks the settings; no request yet).
    pub fn new(cfg: KubevirtConfig) -> Result<Self, super::config::ConfigError> {
        Self::with_env(cfg, Env::from_process())
    }

    /// A driver reading `env` instead of the process's environment.
    pub fn with_env(cfg: KubevirtConfig, env: Env) -> Result<Self, super::config::ConfigError> {
        cfg.validate()?;
        Ok(KubevirtDriver {
            namespace: cfg.namespace.clone().unwrap_or_default(),
            cfg,
            env,
            access: None,
            http: None,
            token: None,
            vm: None,
            vmi: None,
            vmi_read: false,
            detail: None,
            warnings: Vec::new(),
            pods_denied: None,
            nodes_denied: None,
            device_only_noted: false,
        })
    }

    /// (requests sent, requests throttled).
    pub fn stats(&self) -> (u32, u32) {
        self.http
            .as_ref()
            .map_or((0, 0), |h| (h.requests, h.throttled))
    }

    /// The SHA-256 fingerprint of the certificate the API server presented
    /// at the last handshake (trusted or not), if one got that far.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.http.as_ref().and_then(|h| h.seen().fingerprint())
    }

    /// The VM as last read.
    pub fn vm(&self) -> Option<&Vm> {
        self.vm.as_ref()
    }

    /// The namespace used (after `connect`).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Whether the RBAC given lets fencekit read the launcher pods and
    /// nodes (after a status read that needed them): what was denied.
    pub fn denied(&self) -> Vec<String> {
        self.pods_denied
            .iter()
            .chain(self.nodes_denied.iter())
            .cloned()
            .collect()
    }

    /// PUTs a subresource.
    async fn subresource(
        &mut self,
        verb: &str,
        body: Value,
        deadline: Option<Instant>,
    ) -> Result<Sub, DriverError> {
        let path = format!(
            "/apis/subresources.{}/{}/namespaces/{}/virtualmachines/{}/{verb}",
            self.cfg.group(),
            self.cfg.version(),
            self.namespace,
            self.cfg.vm
        );
        let what = format!("PUT {verb} {}/{} {body}", self.namespace, self.cfg.vm);
        Ok(
            match self
                .call(
                    Method::PUT,
                    &path,
                    Some(&body),
                    &what,
                    Stage::Command,
                    deadline,
                )
                .await?
            {
                Call::Reply(r) if (200..300).contains(&r.status) => Sub::Accepted,
                Call::Reply(r) => {
                    Sub::Refused(model::api_status(r.status, r.scrubbed().as_bytes()))
                }
                Call::Silent(e) => Sub::Silent(e),
            },
        )
    }

    /// After a command whose answer never came: whether a read shows it took effect.
    async fn took_effect(
        &mut self,
        command: PowerCommand,
        before_vmi_uid: Option<String>,
        silence: DriverError,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let vm = self.read_vm(Stage::Command, deadline).await;
        let vmi = self.read_vmi(Stage::Command, deadline).await;
        let (Ok(vm), Ok(vmi)) = (vm, vmi) else {
            return Err(unknown(
                command,
                &silence,
                "and the VM could not be read back",
            ));
        };
        let shows = match command {
            PowerCommand::Off => {
                vmi.as_ref()
                    .is_none_or(|i| i.deleting || i.phase == "Succeeded" || i.phase == "Failed")
                    || vm.strategy == model::RunStrategy::Halted
            }
            PowerCommand::On => vmi
                .as_ref()
                .is_some_and(|i| !i.deleting && i.phase != "Succeeded" && i.phase != "Failed"),
            _ => vmi
                .as_ref()
                .is_some_and(|i| i.deleting || Some(&i.uid) != before_vmi_uid.as_ref()),
        };
        if shows {
            self.warnings.push(format!(
                "{} went unanswered ({}), and a read shows it took effect",
                command, silence.message
            ));
            Ok(())
        } else {
            Err(unknown(
                command,
                &silence,
                "and a read does not show it took effect",
            ))
        }
    }
}

fn unknown(command: PowerCommand, silence: &DriverError, why: &str) -> DriverError {
    DriverError::new(
        ErrorKind::OutcomeUnknown,
        Stage::Command,
        format!(
            "{command} was sent and not answered ({}), {why}: it is never sent again",
            silence.message
        ),
    )
}

impl PowerDriver for KubevirtDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.setup()?;
        let vm = self.read_vm(Stage::Authenticate, deadline).await?;
        let a = self.access.as_ref().expect("set up");
        Ok(format!(
            "API server {}, credentials from {}; VirtualMachine {}/{} (uid {}, runStrategy {}{}{})",
            a.server,
            a.source,
            self.namespace,
            self.cfg.vm,
            vm.uid,
            vm.strategy.as_str(),
            if vm.deprecated_running {
                " from spec.running"
            } else {
                ""
            },
            if vm.printable.is_empty() {
                String::new()
            } else {
                format!(", {}", vm.printable)
            }
        ))
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        match self.observe(deadline).await? {
            Observed::Settled(s) => Ok(s),
            Observed::InTransition(t) => Err(DriverError::new(
                ErrorKind::Busy,
                Stage::Status,
                format!(
                    "{} is {t}: {}",
                    self.cfg.vm,
                    self.detail.as_deref().unwrap_or("")
                ),
            )),
        }
    }

    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        match self.judge(deadline).await? {
            Verdict::Seen(o, why) => {
                self.detail = Some(why);
                Ok(o)
            }
            Verdict::OffVmiOnly(why) => {
                if !self.device_only_noted {
                    self.device_only_noted = true;
                    self.warnings.push(why.clone());
                }
                self.detail = Some(why);
                Ok(Observed::Settled(PowerState::Off))
            }
            Verdict::NotOff(why) => {
                self.detail = Some(why.clone());
                Err(DriverError::new(
                    ErrorKind::StatusUnreadable,
                    Stage::Status,
                    format!("{}/{} is not off: {why}", self.namespace, self.cfg.vm),
                ))
            }
            Verdict::Unreadable(why) => {
                self.detail = Some(why.clone());
                Err(DriverError::new(
                    ErrorKind::StatusUnreadable,
                    Stage::Status,
                    why,
                ))
            }
        }
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let (verb, body) = match command {
            PowerCommand::Off => ("stop", json!({ "gracePeriod": 0 })),
            PowerCommand::On => ("start", json!({})),
            PowerCommand::Cycle => ("restart", json!({ "gracePeriodSeconds": 0 })),
            other => {
                return Err(DriverError::new(
                    ErrorKind::Unsupported,
                    Stage::Command,
                    format!(
                        "KubeVirt has no {other}: use off, on, reboot or --method cycle (restart)"
                    ),
                ))
            }
        };
        let before = self.vmi.as_ref().map(|i| i.uid.clone());
        let refused = match self.subresource(verb, body, deadline).await? {
            Sub::Accepted => {
                self.vmi_read = false;
                return Ok(());
            }
            // A gateway's 502/504: the API server behind it may have
            // carried the request out. Read back, never sent again.
            Sub::Refused(st) if matches!(st.code, 502 | 504) => {
                let e = self.status_error(&st, &format!("{verb} {}", self.cfg.vm), Stage::Command);
                return self.took_effect(command, before, e, deadline).await;
            }
            Sub::Refused(st) => st,
            Sub::Silent(e) => return self.took_effect(command, before, e, deadline).await,
        };
        if refused.code != 409 {
            return Err(self.status_error(
                &refused,
                &format!("{verb} {}", self.cfg.vm),
                Stage::Command,
            ));
        }
        // A refusal: read back before deciding anything.
        let vm = self.read_vm(Stage::Command, deadline).await?;
        let vmi = self.read_vmi(Stage::Command, deadline).await?;
        let live = vmi
            .as_ref()
            .is_some_and(|i| i.phase != "Succeeded" && i.phase != "Failed");
        let said = format!("KubeVirt refused {verb} (409: {})", refused.message);
        let strategy = vm.strategy.as_str().to_string();
        let err = |kind, why: String| Err(DriverError::new(kind, Stage::Command, why));
        match (command, model::refusal(&refused.message)) {
            (PowerCommand::Off, Refusal::NotRunning) => err(
                ErrorKind::NotInPresentState,
                format!("{said}: already stopped (runStrategy {strategy})"),
            ),
            (PowerCommand::On, Refusal::AlreadyRunning) => err(
                ErrorKind::NotInPresentState,
                format!("{said}: already running"),
            ),
            (PowerCommand::On, Refusal::Strategy(_)) if live || vm.strategy == model::RunStrategy::Always => err(
                ErrorKind::NotInPresentState,
                format!("{said}: runStrategy {strategy} keeps it running; KubeVirt starts it itself"),
            ),
            (_, r) => err(
                ErrorKind::DeviceError,
                format!(
                    "{said}{}; runStrategy {strategy}, the VMI {}",
                    match r {
                        Refusal::Strategy(_) => format!(": runStrategy {strategy} does not allow it"),
                        _ => String::new(),
                    },
                    vmi.as_ref().map_or("is gone".to_string(), |i| format!("is {}", i.phase))
                ),
            ),
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let vm = match &self.vm {
            Some(v) => v.clone(),
            None => self.read_vm(Stage::Identity, deadline).await?,
        };
        if !self.vmi_read {
            self.read_vmi(Stage::Identity, deadline).await?;
        }
        // The VMI's firmware UUID is what the guest sees (SMBIOS); the VM
        // template's when no VMI runs and it is set there.
        let fw = self
            .vmi
            .as_ref()
            .and_then(|i| i.firmware_uuid.clone())
            .or(vm.firmware_uuid.clone());
        let uuid = fw
            .and_then(|u| normalise_uuid(&u))
            .map(|u| UuidForm {
                uuid: u,
                encoding: "firmware",
            })
            .into_iter()
            .collect();
        Ok(Identity {
            uuid,
            serial: None,
            names: vec![MachineName::new("metadata.uid", &vm.uid)],
        })
    }

    fn state_detail(&self) -> Option<String> {
        self.detail.clone()
    }

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    async fn close(&mut self) {}
}
