//! Resource Manager under the driver: the clients (Resource Manager and
//! the login endpoint through the shared trust and the environment's
//! proxy; the metadata service direct), the scope and endpoints found
//! once, the bearer token (fetched again when near its end or after a
//! 401), one request with 429 waited out, and the reads of the VM and of
//! the resource group's list (paged, only ever from Resource Manager's own
//! host: a `nextLink` elsewhere would carry the token away).

use super::*;
use crate::azure::credentials::{self, Login, IMDS};
use crate::http::{Failed, Patience, Proxy, Reply, Request, Setup};
use reqwest::Method;

/// Largest answer read.
pub const MAX_BODY: usize = 8 << 20;

/// What a call gave: an answer, or silence after the request may have left.
pub(super) enum Call {
    /// An answer (any status but 401 and the throttling ones).
    Reply(Reply),
    /// Sent, and no answer: it may have been carried out.
    Silent(DriverError),
}

fn config(message: String) -> DriverError {
    DriverError::new(ErrorKind::Config, Stage::Authenticate, message)
}

impl AzureDriver {
    fn clients(&mut self) -> Result<(), DriverError> {
        if self.arm.is_none() {
            let trust = crate::tls::trust(self.cfg.insecure, self.cfg.ca_cert.as_deref(), None)
                .map_err(|e| config(e.to_string()))?;
            if self.cfg.insecure {
                self.warnings.push(
                    "Resource Manager's certificate is not verified (--ssl-insecure): anyone on \
                     the path can impersonate it and take the token"
                        .into(),
                );
            }
            let env = self.env.clone();
            let lookup = move |k: &str| env.lookup(k);
            self.arm = Some(Client::new(Setup {
                trust: Some(trust),
                proxy: Proxy::Env,
                env: &lookup,
                tls_hint: Some(
                    "Resource Manager's CA comes from the system trust store or --ca-cert",
                ),
                ..Setup::new("Azure Resource Manager")
            })?);
        }
        if self.imds.is_none() {
            // Plain HTTP on the host: no proxy, no certificate trust to load.
            self.imds = Some(Client::new(Setup {
                trust: None,
                proxy: Proxy::None,
                ..Setup::new("the instance metadata service")
            })?);
        }
        Ok(())
    }

    fn imds_base(&self) -> String {
        self.env
            .get("AZURE_POD_IDENTITY_AUTHORITY_HOST")
            .unwrap_or(IMDS)
            .trim_end_matches('/')
            .to_string()
    }

    /// The metadata service's view of the VM this process runs on.
    pub(super) async fn this_vm(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<model::ThisVm, DriverError> {
        self.clients()?;
        let url = format!(
            "{}/metadata/instance/compute?api-version=2021-02-01&format=json",
            self.imds_base()
        );
        let req = Request::new(
            Method::GET,
            &url,
            "the instance metadata",
            Stage::Authenticate,
        )
        .header(reqwest::header::HeaderName::from_static("metadata"), "true")
        .within(credentials::IMDS_TIMEOUT, deadline);
        let http = self.imds.as_mut().expect("made above");
        let reply = http.send(&req).await.map_err(Failed::into_error)?;
        if !reply.ok() {
            return Err(DriverError::new(
                ErrorKind::DeviceError,
                Stage::Authenticate,
                format!(
                    "the instance metadata service answered {}: {}",
                    reply.status,
                    reply.text(200)
                ),
            ));
        }
        model::this_vm(&reply.body)
            .map_err(|e| DriverError::new(ErrorKind::Protocol, Stage::Authenticate, e.0))
    }

    /// Everything before the first Resource Manager request: the clients,
    /// the subscription and resource group, the endpoints, the token.
    pub(super) async fn prepare(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        self.clients()?;
        if self.cfg.subscription.is_empty() || self.cfg.resource_group.is_empty() {
            let me = self.this_vm(deadline).await.map_err(|e| {
                config(format!(
                    "no subscription or resource group given, and the instance metadata service \
                     cannot name them ({}): give --subscriptionId and --resourceGroup",
                    e.message
                ))
            })?;
            if self.cfg.subscription.is_empty() {
                self.cfg.subscription = me.subscription.clone();
            }
            if self.cfg.resource_group.is_empty() {
                self.cfg.resource_group = me.resource_group.clone();
            }
            self.cfg.validate().map_err(|e| config(e.to_string()))?;
            self.guard = Guard::Runs(me);
        }
        if self.endpoints.is_none() {
            self.endpoints = Some(self.find_endpoints(deadline).await?);
        }
        if self.source.is_none() {
            self.source = Some(Source::choose(&self.cfg, &self.env)?);
        }
        self.bearer(deadline).await.map(|_| ())
    }

    async fn find_endpoints(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Endpoints, DriverError> {
        let mut e = match self.cfg.cloud.endpoints() {
            Some(e) => e,
            None => {
                let crate::azure::config::Cloud::Stack(arm) = self.cfg.cloud.clone() else {
                    unreachable!("every other cloud has fixed endpoints")
                };
                self.stack_endpoints(&arm, deadline).await?
            }
        };
        if let Some(a) = self.env.get("AZURE_AUTHORITY_HOST") {
            e.authority = a.trim_end_matches('/').to_string();
        }
        if let Some(arm) = &self.cfg.arm_endpoint {
            e.arm = arm.trim_end_matches('/').to_string();
        }
        Ok(e)
    }

    /// An Azure Stack Hub's endpoints from its `/metadata/endpoints`.
    async fn stack_endpoints(
        &mut self,
        arm: &str,
        deadline: Option<Instant>,
    ) -> Result<Endpoints, DriverError> {
        let url = format!("{arm}/metadata/endpoints?api-version=2015-01-01");
        let req = Request::new(
            Method::GET,
            &url,
            "the Stack Hub's endpoints",
            Stage::Authenticate,
        )
        .within(self.cfg.request_timeout, deadline);
        let http = self.arm.as_mut().expect("made first");
        let reply = http.send(&req).await.map_err(Failed::into_error)?;
        let v: Option<serde_json::Value> = reply
            .ok()
            .then(|| serde_json::from_slice(&reply.body).ok())
            .flatten();
        let login = v
            .as_ref()
            .and_then(|v| v.pointer("/authentication/loginEndpoint"))
            .and_then(|l| l.as_str());
        let audience = v
            .as_ref()
            .and_then(|v| v.pointer("/authentication/audiences/0"))
            .and_then(|l| l.as_str())
            .unwrap_or(arm);
        match login {
            Some(l) if l.starts_with("https://") => Ok(Endpoints {
                arm: arm.to_string(),
                authority: l
                    .trim_end_matches('/')
                    .trim_end_matches("/adfs")
                    .to_string(),
                scope: format!("{}/.default", audience.trim_end_matches('/')),
            }),
            _ => Err(config(format!(
                "the Azure Stack Hub at {arm} gave no login endpoint in /metadata/endpoints \
                 ({} {})",
                reply.status,
                reply.text(200)
            ))),
        }
    }

    /// The bearer header's value, with a token fetched when none is held
    /// or the one held is near its end.
    pub(super) async fn bearer(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<zeroize::Zeroizing<Vec<u8>>, DriverError> {
        if self
            .token
            .as_ref()
            .is_none_or(|t| Instant::now() >= t.renew_at)
        {
            let endpoints = self.endpoints.clone().expect("found in prepare");
            // Azure Resource Manager's connection opens while the token comes.
            let arm = self.url("/");
            let http = self.arm.as_mut().expect("made in prepare");
            http.preopen(&arm, self.cfg.request_timeout);
            let imds_base = self.imds_base();
            let source = self.source.as_ref().expect("chosen in prepare");
            let token = credentials::fetch(
                source,
                Login {
                    http: self.arm.as_mut().expect("made in prepare"),
                    imds: self.imds.as_mut().expect("made in prepare"),
                    authority: &endpoints.authority,
                    scope: &endpoints.scope,
                    imds_base: &imds_base,
                    timeout: self.cfg.request_timeout,
                    deadline,
                },
            )
            .await?;
            self.tokens += 1;
            self.token = Some(token);
        }
        let t = self.token.as_ref().expect("fetched above");
        let mut v = zeroize::Zeroizing::new(b"Bearer ".to_vec());
        v.extend_from_slice(t.value.expose());
        Ok(v)
    }

    /// `/subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/VM`.
    pub(super) fn vm_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Compute/virtualMachines/{}",
            self.group_path(),
            self.cfg.vm
        )
    }

    pub(super) fn group_path(&self) -> String {
        format!(
            "/subscriptions/{}/resourceGroups/{}",
            self.cfg.subscription, self.cfg.resource_group
        )
    }

    pub(super) fn url(&self, path_and_query: &str) -> String {
        format!(
            "{}{path_and_query}",
            self.endpoints.as_ref().map_or("", |e| e.arm.as_str())
        )
    }

    /// One Resource Manager request with the token; 429 waited out within
    /// the deadline (`patience`), a 401 answered by one fresh token.
    pub(super) async fn call(
        &mut self,
        method: Method,
        url: &str,
        what: &str,
        stage: Stage,
        patience: &Patience,
        deadline: Option<Instant>,
    ) -> Result<Call, DriverError> {
        self.prepare(deadline).await?;
        let mut refreshed = false;
        loop {
            let auth = self.bearer(deadline).await?;
            let mut req = Request::new(method.clone(), url, what, stage)
                .header(reqwest::header::ACCEPT, "application/json")
                .within(self.cfg.request_timeout, deadline);
            req.max_body = MAX_BODY;
            if !req.add_secret(reqwest::header::AUTHORIZATION, &auth) {
                return Err(config(
                    "the token cannot be carried in an HTTP header".into(),
                ));
            }
            let http = self.arm.as_mut().expect("made in prepare");
            let reply = match http.send_patiently(&req, patience).await {
                Ok(r) => r,
                Err(f) if f.maybe_delivered() => return Ok(Call::Silent(f.into_error())),
                Err(f) => return Err(f.into_error()),
            };
            if reply.status != 401 {
                return Ok(Call::Reply(reply));
            }
            let e = model::api_error(401, reply.scrubbed().as_bytes());
            if !refreshed {
                // Refused before it was carried out: a new token, once.
                tracing::debug!(code = %e.code, "401: fetching a new token");
                refreshed = true;
                self.token = None;
                continue;
            }
            return Err(DriverError::new(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                format!(
                    "Resource Manager refused the token for {what} (401 {}: {}), also a fresh one",
                    e.code, e.message
                ),
            ));
        }
    }

    /// A refusal of Resource Manager as an error of its kind.
    pub(super) fn refusal(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let e = model::api_error(reply.status, reply.scrubbed().as_bytes());
        let kind = match (e.status, e.code.as_str()) {
            (403, _) => ErrorKind::PrivilegeNotObtained,
            (404, _) => ErrorKind::Config,
            (409, _) => ErrorKind::Busy,
            (429 | 503 | 504, _) => ErrorKind::Busy,
            _ => ErrorKind::DeviceError,
        };
        let message = match e.status {
            403 => format!(
                "Resource Manager forbids {what} ({} {}): the identity's role must allow it \
                 (docs/azure.md lists the actions)",
                e.code, e.message
            ),
            404 => format!(
                "no VM '{}' in resource group '{}' of subscription {} ({what}: {} {})",
                self.cfg.vm, self.cfg.resource_group, self.cfg.subscription, e.code, e.message
            ),
            s => format!(
                "Resource Manager answered {what} with {s} {}: {}",
                e.code, e.message
            ),
        };
        DriverError::new(kind, stage, message)
    }

    /// Reads the VM with its instance view and checks that the answer is
    /// about it.
    pub(super) async fn read_vm(
        &mut self,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Vm, DriverError> {
        self.prepare(deadline).await?;
        let path = self.vm_path();
        let url = self.url(&format!(
            "{path}?$expand=instanceView&api-version={COMPUTE_API}"
        ));
        let what = format!("GET virtualMachines/{}", self.cfg.vm);
        let reply = match self
            .call(
                Method::GET,
                &url,
                &what,
                stage,
                &Patience::THROTTLE_OR_BUSY,
                deadline,
            )
            .await?
        {
            Call::Reply(r) => r,
            Call::Silent(e) => return Err(e),
        };
        if !reply.ok() {
            return Err(self.refusal(&reply, &what, stage));
        }
        let v: serde_json::Value = serde_json::from_slice(&reply.body).map_err(|e| {
            DriverError::new(ErrorKind::Protocol, stage, format!("{what}: not JSON: {e}"))
        })?;
        let vm = model::vm(&v)
            .map_err(|e| DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}")))?;
        if let Some(why) = model::wrong_vm(&vm, &path, &self.cfg.vm, self.vm_id.as_deref()) {
            return Err(DriverError::new(
                ErrorKind::IdentityMismatch,
                stage,
                format!("{what}: {why}; this answer is not evidence about the VM asked for"),
            ));
        }
        if self.vm_id.is_none() {
            self.vm_id = vm.vm_id.clone();
        }
        self.last = Some(vm.clone());
        Ok(vm)
    }
}
