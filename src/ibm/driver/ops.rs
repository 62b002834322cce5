//! Power requests (one POST, sent once; a lost answer read back under the
//! at-most-once rule), the self-fencing guard before a VPC stop, and the
//! lists (`list`, `list-status`) and `monitor` (one read).

use super::api::Call;
use super::*;
use crate::engine::once::{self, AfterSilence, Silence};
use crate::engine::power::Transition;
use crate::http::{Failed, Patience, Request};
use crate::platform::PlugEntry;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

/// Most pages a VPC listing reads.
const MAX_PAGES: usize = 100;
/// The metadata service's bound (it answers on the host at once, or is not there).
const METADATA_TIMEOUT: Duration = Duration::from_secs(2);

fn towards(command: PowerCommand) -> Transition {
    match command {
        PowerCommand::On => Transition::PoweringOn,
        _ => Transition::PoweringOff,
    }
}

impl IbmDriver {
    /// Sends the power request once.
    pub(super) async fn power(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        if command == PowerCommand::Off && self.cfg.service == Service::Vpc {
            self.guard(deadline).await?;
        }
        let id = self.cfg.instance.clone();
        let (url, body, verb) = match (self.cfg.service, command) {
            (Service::Vpc, PowerCommand::Off) => (
                self.instance_url(&id, "/actions"),
                json!({"type": "stop", "force": true}),
                "stop (force)",
            ),
            (Service::Vpc, _) => (
                self.instance_url(&id, "/actions"),
                json!({"type": "start"}),
                "start",
            ),
            (Service::PowerVs, PowerCommand::Off) => (
                self.instance_url(&id, "/action"),
                json!({"action": "immediate-shutdown"}),
                "immediate-shutdown",
            ),
            (Service::PowerVs, _) => (
                self.instance_url(&id, "/action"),
                json!({"action": "start"}),
                "start",
            ),
        };
        let before = self
            .last
            .as_ref()
            .and_then(|m| model::observed(self.cfg.service, m))
            .and_then(|o| o.settled());
        let what = format!("POST {verb} of instance {id}");
        // 429 refuses before anything is done; a 503 might not.
        let reply = match self
            .call(
                Method::POST,
                &url,
                Some(&body),
                &what,
                Stage::Command,
                &Patience::THROTTLE,
                deadline,
            )
            .await?
        {
            Call::Reply(r) => r,
            Call::Silent(e) => return self.unanswered(command, &what, e, deadline).await,
        };
        match reply.status {
            200..=204 => {
                tracing::debug!(%what, status = reply.status, "accepted");
                self.sent = Some(Sent {
                    command,
                    moved: false,
                    before,
                });
                Ok(())
            }
            _ => Err(self.refusal(&reply, &what, Stage::Command)),
        }
    }

    /// A power request whose answer never came: read the instance; at or
    /// on its way to the target, it took the request; otherwise the
    /// outcome is unknown and the request is not sent again.
    async fn unanswered(
        &mut self,
        command: PowerCommand,
        what: &str,
        silence: DriverError,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let read = match deadline {
            Some(d) if d <= Instant::now() + Duration::from_millis(100) => None,
            _ => self.read_machine(Stage::Command, deadline).await.ok(),
        };
        let observed = read
            .as_ref()
            .and_then(|m| model::observed(self.cfg.service, m));
        if observed == Some(Observed::InTransition(towards(command))) {
            tracing::info!(%what, "no answer, but the instance is on its way to the target");
            return Ok(());
        }
        let now = observed.and_then(|o| o.settled());
        match once::after_silence(command, None, now, Silence::Late) {
            AfterSilence::TookEffect => Ok(()),
            _ => Err(DriverError::new(
                ErrorKind::OutcomeUnknown,
                Stage::Command,
                format!(
                    "{}; whether {} carried out {what} is not known{}, and it is not sent again",
                    silence.message,
                    self.cfg.service.name(),
                    match &read {
                        Some(m) =>
                            format!(" (the instance reads {})", model::printable(&m.status, 40)),
                        None => String::new(),
                    }
                ),
            )),
        }
    }

    /// The VPC metadata service's view of the instance this process runs
    /// on: an identity token, then the instance (its ID).
    async fn this_instance(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.meta_client()?;
        let base = self.metadata_base();
        let fail = |m: String| DriverError::new(ErrorKind::DeviceError, Stage::Authenticate, m);
        let url = format!("{base}/instance_identity/v1/token?version=2022-03-01");
        let req = Request::new(
            Method::PUT,
            &url,
            "an instance identity token",
            Stage::Authenticate,
        )
        .header(
            reqwest::header::HeaderName::from_static("metadata-flavor"),
            "ibm",
        )
        .json(&json!({"expires_in": 300}))
        .within(METADATA_TIMEOUT, deadline);
        let meta = self.meta.as_mut().expect("made in meta_client");
        let reply = meta.send(&req).await.map_err(Failed::into_error)?;
        if !reply.ok() {
            return Err(fail(format!(
                "the metadata service answered {}",
                reply.status
            )));
        }
        let token = model::identity_token(&reply.body).map_err(|e| fail(e.0))?;
        meta.scrub().remember(token.as_bytes());
        let url = format!("{base}/metadata/v1/instance?version=2022-03-01");
        let mut req = Request::new(
            Method::GET,
            &url,
            "the instance metadata",
            Stage::Authenticate,
        )
        .within(METADATA_TIMEOUT, deadline);
        if !req.add_secret(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {token}").as_bytes(),
        ) {
            return Err(fail(
                "the metadata token cannot be carried in a header".into(),
            ));
        }
        let reply = meta.send(&req).await.map_err(Failed::into_error)?;
        if !reply.ok() {
            return Err(fail(format!(
                "the metadata service answered {}",
                reply.status
            )));
        }
        model::this_instance(&reply.body)
            .map(|(id, _)| id)
            .map_err(|e| fail(e.0))
    }

    /// The self-fencing guard before a VPC stop. A metadata service that
    /// cannot say is a warning, and the stop goes on (a FAR pod or a node
    /// outside the VPC may not reach it).
    async fn guard(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if self.guard == Guard::Unchecked {
            self.guard = match self.this_instance(deadline).await {
                Ok(id) => Guard::Runs(id),
                Err(e) => {
                    tracing::debug!(error = %e.message, "self-fencing guard not applied");
                    Guard::Unknown
                }
            };
        }
        let Guard::Runs(me) = &self.guard else {
            return Ok(());
        };
        match (me == &self.cfg.instance, self.cfg.allow_self_fence) {
            (false, _) => Ok(()),
            (true, true) => {
                self.warnings.push(format!(
                    "{} is the instance this process runs on: stopping it anyway (self-fencing \
                     allowed)",
                    self.cfg.instance
                ));
                Ok(())
            }
            (true, false) => Err(DriverError::new(
                ErrorKind::SelfFence,
                Stage::Command,
                format!(
                    "refusing to stop {}: the VPC instance metadata service says this process \
                     runs on it (self-fencing; allow it with --allow-self-fence); no power \
                     request was sent",
                    self.cfg.instance
                ),
            )),
        }
    }

    /// Every instance (VPC: the region's, page by page; Power VS: the
    /// workspace's).
    pub async fn list_machines(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<Machine>, DriverError> {
        let base = self.cfg.api_base(&self.env);
        let what = "GET the instance list".to_string();
        let mut out = Vec::new();
        match self.cfg.service {
            Service::PowerVs => {
                let url = format!(
                    "{base}/pcloud/v1/cloud-instances/{}/pvm-instances",
                    self.cfg.workspace
                );
                let body = self.get_ok(&url, &what, deadline).await?;
                out = model::powervs_list(&body)
                    .map_err(|e| DriverError::new(ErrorKind::Protocol, Stage::Status, e.0))?;
            }
            Service::Vpc => {
                let limit = if self.cfg.monitor_only {
                    1
                } else {
                    self.cfg.limit.clamp(1, 100)
                };
                let mut url =
                    format!("{base}/v1/instances?version={VPC_VERSION}&generation=2&limit={limit}");
                for _ in 0..MAX_PAGES {
                    let body = self.get_ok(&url, &what, deadline).await?;
                    let (page, next) = model::vpc_page(&body)
                        .map_err(|e| DriverError::new(ErrorKind::Protocol, Stage::Status, e.0))?;
                    out.extend(page);
                    match next {
                        None => return Ok(out),
                        Some(_) if self.cfg.monitor_only => return Ok(out),
                        Some(n) if n.starts_with(&format!("{base}/")) => url = n,
                        Some(n) => {
                            return Err(DriverError::new(
                                ErrorKind::Protocol,
                                Stage::Status,
                                format!(
                                    "the list's next page leaves the API ({}): not followed, \
                                     the token goes to {base} only",
                                    model::printable(&n, 200)
                                ),
                            ))
                        }
                    }
                }
                return Err(DriverError::new(
                    ErrorKind::Protocol,
                    Stage::Status,
                    format!("the instance list has more than {MAX_PAGES} pages"),
                ));
            }
        }
        Ok(out)
    }

    async fn get_ok(
        &mut self,
        url: &str,
        what: &str,
        deadline: Option<Instant>,
    ) -> Result<Vec<u8>, DriverError> {
        let reply = match self
            .call(
                Method::GET,
                url,
                None,
                what,
                Stage::Status,
                &Patience::THROTTLE_OR_BUSY,
                deadline,
            )
            .await?
        {
            Call::Reply(r) => r,
            Call::Silent(e) => return Err(e),
        };
        if !reply.ok() {
            return Err(self.refusal(&reply, what, Stage::Status));
        }
        Ok(reply.body)
    }

    /// The agents' `list` / `list-status` and `monitor` (one read: the
    /// plug's instance; else VPC's list with `limit=1`, Power VS's
    /// workspace).
    pub async fn plug_entries(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<PlugEntry>, DriverError> {
        if self.cfg.monitor_only {
            return self.monitor(deadline).await.map(|_| Vec::new());
        }
        let list = self.list_machines(deadline).await?;
        let service = self.cfg.service;
        Ok(list
            .into_iter()
            .map(|m| PlugEntry {
                state: match self.cfg.list_states {
                    true => model::observed(service, &m).and_then(|o| o.settled()),
                    false => None,
                },
                id: m.id,
                alias: m.name,
            })
            .collect())
    }

    async fn monitor(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if !self.cfg.instance.is_empty() {
            return self.read_machine(Stage::Status, deadline).await.map(|_| ());
        }
        match self.cfg.service {
            Service::Vpc => self.list_machines(deadline).await.map(|_| ()),
            Service::PowerVs => {
                let url = format!(
                    "{}/pcloud/v1/cloud-instances/{}",
                    self.cfg.api_base(&self.env),
                    self.cfg.workspace
                );
                self.get_ok(&url, "GET the workspace", deadline)
                    .await
                    .map(|_| ())
            }
        }
    }
}
