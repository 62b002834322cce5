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

use super::config::{Env, KubevirtConfig};
use super::http::{sensitive, Failed, Http, Reply, TlsSetup};
use super::kubeconfig::{self, Access, Auth, Selection};
use super::model::{self, Launchers, NodeReady, Refusal, Verdict, Vm, Vmi};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{normalise_uuid, Identity, MachineName, UuidForm};
use crate::engine::power::{Observed, PowerCommand, PowerState};
use crate::secret::Secret;
use reqwest::header::HeaderValue;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The longest pause between two attempts of a throttled request.
const THROTTLE_PAUSE_MAX: Duration = Duration::from_secs(10);
/// How long throttled requests are tried again without a deadline: never forever.
const THROTTLE_BUDGET: Duration = Duration::from_secs(60);

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
    http: Option<Http>,
    token: Option<Secret>,
    namespace: String,
    vm: Option<Vm>,
    vmi: Option<Vmi>,
    /// The VMI was read (so `vmi == None` means there is none).
    vmi_read: bool,
    detail: Option<String>,
    warnings: Vec<String>,
    throttled: u32,
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
            throttled: 0,
            pods_denied: None,
            nodes_denied: None,
            device_only_noted: false,
        })
    }

    /// (requests sent, requests throttled).
    pub fn stats(&self) -> (u32, u32) {
        (self.http.as_ref().map_or(0, |h| h.requests), self.throttled)
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

    fn base(&self) -> String {
        self.access
            .as_ref()
            .map_or(String::new(), |a| a.server.clone())
    }

    fn vm_path(&self, res: &str) -> String {
        format!(
            "/apis/{}/{}/namespaces/{}/{res}/{}",
            self.cfg.group(),
            self.cfg.version(),
            self.namespace,
            self.cfg.vm
        )
    }

    fn setup(&mut self) -> Result<(), DriverError> {
        if self.http.is_some() {
            return Ok(());
        }
        let sel = Selection {
            kubeconfig: self.cfg.kubeconfig.clone(),
            context: self.cfg.context.clone(),
        };
        let access = kubeconfig::resolve(&sel, &self.env)
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let insecure = self.cfg.insecure || access.insecure;
        if insecure {
            self.warnings.push(format!(
                "the API server's certificate is not verified ({}): anyone on the path can \
                 impersonate {}",
                if self.cfg.insecure {
                    "--ssl-insecure"
                } else {
                    "insecure-skip-tls-verify in the kubeconfig"
                },
                access.server
            ));
        }
        let tls = TlsSetup {
            ca_pem: access.ca_pem.as_deref(),
            insecure,
            client: access
                .client
                .as_ref()
                .map(|(c, k)| (c.as_slice(), k.expose())),
        };
        self.http = Some(Http::new(&tls)?);
        if !access.server.starts_with("https://") {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                format!(
                    "the API server {} is not an https URL: fencekit sends credentials only over TLS",
                    model::printable(&access.server, 200)
                ),
            ));
        }
        self.token = match &access.auth {
            Auth::TokenFile(p) => Some(kubeconfig::read_token(p).map_err(|e| {
                DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string())
            })?),
            _ => None,
        };
        if self.namespace.is_empty() {
            self.namespace = access
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_string());
        }
        self.access = Some(access);
        Ok(())
    }

    fn auth_header(&self) -> Result<Option<HeaderValue>, DriverError> {
        let bad = || {
            DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                "the credentials cannot be carried in an HTTP header",
            )
        };
        let value = |scheme: &str, s: &Secret| {
            let mut raw = zeroize::Zeroizing::new(scheme.as_bytes().to_vec());
            raw.extend_from_slice(s.expose());
            sensitive(&raw)
        };
        Ok(match self.access.as_ref().map(|a| &a.auth) {
            Some(Auth::Token(t)) => Some(value("Bearer ", t).ok_or_else(bad)?),
            Some(Auth::TokenFile(_)) => match &self.token {
                Some(t) => Some(value("Bearer ", t).ok_or_else(bad)?),
                None => None,
            },
            Some(Auth::Basic(b)) => Some(value("Basic ", b).ok_or_else(bad)?),
            _ => None,
        })
    }

    /// One request; 429 is sent again after a pause within the deadline;
    /// a 401 with a token file re-reads the token once.
    async fn call(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        what: &str,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Call, DriverError> {
        self.setup()?;
        let url = format!("{}{path}", self.base());
        let body = body.map(|b| b.to_string().into_bytes());
        let started = Instant::now();
        let until = deadline.unwrap_or(started + THROTTLE_BUDGET);
        let mut pause = Duration::from_millis(250);
        let mut reread = false;
        let mut tries = 0u32;
        loop {
            tries += 1;
            let auth = self.auth_header()?;
            let timeout = self.cfg.request_timeout;
            let http = self.http.as_mut().expect("set up above");
            let reply = match http
                .send(
                    method.clone(),
                    &url,
                    auth,
                    body.clone(),
                    what,
                    stage,
                    timeout,
                    deadline,
                )
                .await
            {
                Ok(r) => r,
                Err(Failed::Silent(e)) => return Ok(Call::Silent(e)),
                Err(f) => return Err(f.into_error()),
            };
            match reply.status {
                401 => {
                    if let (false, Some(Auth::TokenFile(p))) =
                        (reread, self.access.as_ref().map(|a| a.auth.clone()))
                    {
                        reread = true;
                        if let Ok(t) = kubeconfig::read_token(&p) {
                            if Some(&t) != self.token.as_ref() {
                                tracing::debug!(
                                    "401: the token file holds a new token; sending again"
                                );
                                self.token = Some(t);
                                continue;
                            }
                        }
                    }
                    return Err(DriverError::new(
                        ErrorKind::PasswordInvalid,
                        Stage::Authenticate,
                        format!(
                            "the API server refused the credentials for {what} (401 Unauthorized): \
                             the token is expired, revoked or rotated{} ({})",
                            if reread { " (the token file was read again)" } else { "" },
                            self.access.as_ref().map_or("", |a| a.source.as_str())
                        ),
                    ));
                }
                429 => {
                    self.throttled += 1;
                    let asked = reply.retry_after.map(Duration::from_secs);
                    let wait = asked.unwrap_or(pause).max(pause).min(THROTTLE_PAUSE_MAX);
                    if Instant::now() + wait >= until {
                        return Err(DriverError::new(
                            ErrorKind::Busy,
                            stage,
                            format!(
                                "the API server throttled {what} {tries} time(s) (429{}); no time \
                                 is left to try again ({:.1}s spent)",
                                reply
                                    .retry_after
                                    .map(|s| format!(", Retry-After {s}s"))
                                    .unwrap_or_default(),
                                started.elapsed().as_secs_f64()
                            ),
                        ));
                    }
                    tracing::debug!(
                        tries,
                        wait_ms = wait.as_millis() as u64,
                        "429; trying again"
                    );
                    tokio::time::sleep(wait).await;
                    pause = (pause * 2).min(THROTTLE_PAUSE_MAX);
                }
                _ => return Ok(Call::Reply(reply)),
            }
        }
    }

    /// A GET whose answer must come: `Ok(None)` for 404.
    async fn get(
        &mut self,
        path: &str,
        what: &str,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Result<Value, model::ApiStatus>, DriverError> {
        let reply = match self
            .call(Method::GET, path, None, what, stage, deadline)
            .await?
        {
            Call::Reply(r) => r,
            Call::Silent(e) => return Err(e),
        };
        if (200..300).contains(&reply.status) {
            return serde_json::from_slice(&reply.body).map(Ok).map_err(|e| {
                DriverError::new(
                    ErrorKind::Protocol,
                    stage,
                    format!("the answer to {what} is not JSON: {e}"),
                )
            });
        }
        Ok(Err(model::api_status(reply.status, &reply.body)))
    }

    fn status_error(&self, st: &model::ApiStatus, what: &str, stage: Stage) -> DriverError {
        let kind = match st.code {
            403 => ErrorKind::PrivilegeNotObtained,
            404 => ErrorKind::Config,
            409 => ErrorKind::NotInPresentState,
            500..=599 if st.code == 503 || st.code == 504 => ErrorKind::Busy,
            _ => ErrorKind::DeviceError,
        };
        let msg = match st.code {
            403 => format!(
                "the API server forbids {what} (403 Forbidden: {}); the RBAC of the credentials \
                 must allow it (docs/far.md)",
                st.message
            ),
            404 => format!(
                "no VirtualMachine '{}' in namespace '{}' ({what}: 404 {}): check the VM name \
                 and the namespace",
                self.cfg.vm, self.namespace, st.message
            ),
            c => format!(
                "the API server answered {what} with {c} {}: {}",
                st.reason, st.message
            ),
        };
        DriverError::new(kind, stage, msg)
    }

    async fn read_vm(
        &mut self,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Vm, DriverError> {
        let path = self.vm_path("virtualmachines");
        let what = format!("GET VirtualMachine {}/{}", self.namespace, self.cfg.vm);
        match self.get(&path, &what, stage, deadline).await? {
            Ok(v) => {
                let vm = model::vm(&v).map_err(|e| {
                    DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}"))
                })?;
                self.vm = Some(vm.clone());
                Ok(vm)
            }
            Err(st) => Err(self.status_error(&st, &what, stage)),
        }
    }

    async fn read_vmi(
        &mut self,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Option<Vmi>, DriverError> {
        let path = self.vm_path("virtualmachineinstances");
        let what = format!(
            "GET VirtualMachineInstance {}/{}",
            self.namespace, self.cfg.vm
        );
        let vmi = match self.get(&path, &what, stage, deadline).await? {
            Ok(v) => Some(model::vmi(&v).map_err(|e| {
                DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}"))
            })?),
            Err(st) if st.code == 404 => None,
            Err(st) => return Err(self.status_error(&st, &what, stage)),
        };
        self.vmi = vmi.clone();
        self.vmi_read = true;
        Ok(vmi)
    }

    async fn read_launchers(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Launchers, DriverError> {
        if let Some(why) = &self.pods_denied {
            return Ok(Launchers::Unread(why.clone()));
        }
        let path = format!(
            "/api/v1/namespaces/{}/pods?labelSelector=vm.kubevirt.io%2Fname%3D{}",
            self.namespace, self.cfg.vm
        );
        let what = format!("list pods of VM {} in {}", self.cfg.vm, self.namespace);
        match self.get(&path, &what, Stage::Status, deadline).await? {
            Ok(v) => model::pods(&v).map(Launchers::Listed).map_err(|e| {
                DriverError::new(ErrorKind::Protocol, Stage::Status, format!("{what}: {e}"))
            }),
            Err(st) if st.code == 403 => {
                let why = format!(
                    "RBAC forbids list pods in namespace {}: {}",
                    self.namespace, st.message
                );
                self.pods_denied = Some(why.clone());
                Ok(Launchers::Unread(why))
            }
            Err(st) => Err(self.status_error(&st, &what, Stage::Status)),
        }
    }

    async fn read_node(
        &mut self,
        name: &str,
        deadline: Option<Instant>,
    ) -> Result<NodeReady, DriverError> {
        if let Some(why) = &self.nodes_denied {
            return Ok(NodeReady::Unread(why.clone()));
        }
        let what = format!("GET node {name}");
        match self
            .get(
                &format!("/api/v1/nodes/{name}"),
                &what,
                Stage::Status,
                deadline,
            )
            .await?
        {
            Ok(v) => Ok(model::node_ready(&v)),
            Err(st) if st.code == 404 => Ok(NodeReady::Gone),
            Err(st) if st.code == 403 => {
                let why = format!("RBAC forbids get nodes: {}", st.message);
                self.nodes_denied = Some(why.clone());
                Ok(NodeReady::Unread(why))
            }
            Err(st) => Err(self.status_error(&st, &what, Stage::Status)),
        }
    }

    /// Reads the VMI, and the launchers and nodes when they decide; the verdict.
    async fn judge(&mut self, deadline: Option<Instant>) -> Result<Verdict, DriverError> {
        let vmi = self.read_vmi(Stage::Status, deadline).await?;
        let final_or_gone = vmi
            .as_ref()
            .is_none_or(|i| i.phase == "Succeeded" || i.phase == "Failed");
        let launchers = if final_or_gone {
            self.read_launchers(deadline).await?
        } else {
            Launchers::NotAsked
        };
        let mut nodes: BTreeMap<String, NodeReady> = BTreeMap::new();
        if final_or_gone {
            let mut names: Vec<String> = vmi.iter().filter_map(|i| i.node.clone()).collect();
            if let Launchers::Listed(pods) = &launchers {
                names.extend(
                    pods.iter()
                        .filter(|p| !p.finished())
                        .filter_map(|p| p.node.clone()),
                );
            }
            names.sort();
            names.dedup();
            for n in names {
                let r = self.read_node(&n, deadline).await?;
                nodes.insert(n, r);
            }
        }
        let ready = |n: &str| {
            nodes
                .get(n)
                .cloned()
                .unwrap_or_else(|| NodeReady::Unread("not read".into()))
        };
        Ok(model::decide(vmi.as_ref(), &launchers, &ready))
    }

    /// The VirtualMachines of the namespace (`list`).
    pub async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, DriverError> {
        self.setup()?;
        let path = format!(
            "/apis/{}/{}/namespaces/{}/virtualmachines",
            self.cfg.group(),
            self.cfg.version(),
            self.namespace
        );
        let what = format!("list VirtualMachines in {}", self.namespace);
        let v = match self.get(&path, &what, Stage::Status, deadline).await? {
            Ok(v) => v,
            Err(st) => return Err(self.status_error(&st, &what, Stage::Status)),
        };
        let items = v.get("items").and_then(Value::as_array).ok_or_else(|| {
            DriverError::new(
                ErrorKind::Protocol,
                Stage::Status,
                format!("{what}: no items"),
            )
        })?;
        Ok(items
            .iter()
            .filter_map(|i| {
                Some(Listed {
                    name: model::printable(i.pointer("/metadata/name")?.as_str()?, 253),
                    printable: model::printable(
                        i.pointer("/status/printableStatus")
                            .and_then(Value::as_str)
                            .unwrap_or(""),
                        40,
                    ),
                })
            })
            .collect())
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
                Call::Reply(r) => Sub::Refused(model::api_status(r.status, &r.body)),
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
