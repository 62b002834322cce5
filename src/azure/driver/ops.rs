//! Power requests and their long-running operations: one POST, sent once;
//! its operation followed (`Azure-AsyncOperation`, else `Location`) at the
//! pace `Retry-After` asks (0.25 s to 3 s) until it ends or the step's
//! deadline comes (then `observe` keeps asking it); an operation that
//! fails or is preempted after Azure accepted it fails the action; a lost
//! answer read back under the at-most-once rule; and the self-fencing
//! guard before a power-off.

use super::api::Call;
use super::*;
use crate::engine::once::{self, AfterSilence, Silence};
use crate::engine::power::Transition;
use crate::http::{Patience, Reply};
use reqwest::Method;
use std::time::Duration;

/// The shortest and the longest pause between two polls of an operation.
const POLL_MIN: Duration = Duration::from_millis(250);
const POLL_MAX: Duration = Duration::from_secs(3);
/// How long an operation is followed without a deadline.
const FOLLOW_BUDGET: Duration = Duration::from_secs(300);

fn towards(command: PowerCommand) -> Transition {
    match command {
        PowerCommand::On => Transition::PoweringOn,
        _ => Transition::PoweringOff,
    }
}

fn pause_of(reply: &Reply) -> Duration {
    reply
        .retry_after()
        .unwrap_or(Duration::from_secs(1))
        .clamp(POLL_MIN, POLL_MAX)
}

impl AzureDriver {
    /// Sends the power request (`action?` with its query) once and follows
    /// its operation.
    pub(super) async fn power(
        &mut self,
        command: PowerCommand,
        action: &str,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let verb = action.split('?').next().unwrap_or(action).to_string();
        let url = self.url(&format!(
            "{}/{action}api-version={COMPUTE_API}",
            self.vm_path()
        ));
        let what = format!("POST virtualMachines/{}/{verb}", self.cfg.vm);
        // 429 refuses before anything is done; a 503 might not.
        let reply = match self
            .call(
                Method::POST,
                &url,
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
            200 | 204 => {
                tracing::debug!(%what, status = reply.status, "done at once");
                Ok(())
            }
            201 | 202 => {
                let op = match (
                    reply.header("azure-asyncoperation"),
                    reply.header("location"),
                ) {
                    (Some(a), _) => Some((a.to_string(), true)),
                    (None, Some(l)) => Some((l.to_string(), false)),
                    (None, None) => None,
                };
                let Some((url, async_op)) = op else {
                    tracing::debug!(%what, "accepted without an operation to follow");
                    return Ok(());
                };
                self.check_operation_url(&url)?;
                self.pending = Some(Pending {
                    command,
                    url,
                    async_op,
                });
                let first = pause_of(&reply);
                self.follow(first, deadline).await
            }
            _ => Err(self.refusal(&reply, &what, Stage::Command)),
        }
    }

    /// An operation URL must be on Resource Manager's host: the token is
    /// sent to it.
    fn check_operation_url(&self, url: &str) -> Result<(), DriverError> {
        let arm = self.url("");
        match url.starts_with(&format!("{arm}/")) {
            true => Ok(()),
            false => Err(DriverError::new(
                ErrorKind::Protocol,
                Stage::Command,
                format!(
                    "the operation to follow is at {}, not on Resource Manager ({arm}); the token \
                     is not sent there and the outcome is read from the VM",
                    model::printable(url, 200)
                ),
            )),
        }
    }

    /// Polls the pending operation until it ends or the deadline comes
    /// (then it stays pending for `observe`).
    async fn follow(
        &mut self,
        first: Duration,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let until = deadline.unwrap_or_else(|| Instant::now() + FOLLOW_BUDGET);
        let mut pause = first;
        loop {
            // Leave time for the engine's own read after the operation.
            if Instant::now() + pause + Duration::from_millis(200) >= until {
                tracing::debug!(
                    "the operation is still running at the step's end; observe follows it"
                );
                return Ok(());
            }
            tokio::time::sleep(pause).await;
            match self.poll_pending(deadline).await? {
                (true, _) => return Ok(()),
                (false, next) => pause = next,
            }
        }
    }

    /// One poll of the pending operation: `(ended, next pause)`. An
    /// operation that ended without success is the error.
    async fn poll_pending(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<(bool, Duration), DriverError> {
        let Some(p) = self.pending.clone() else {
            return Ok((true, POLL_MIN));
        };
        let what = format!("GET the {} operation of {}", p.command, self.cfg.vm);
        let reply = match self
            .call(
                Method::GET,
                &p.url,
                &what,
                Stage::Wait,
                &Patience::THROTTLE_OR_BUSY,
                deadline,
            )
            .await?
        {
            Call::Reply(r) => r,
            // A lost read is read again at the next poll.
            Call::Silent(e) => {
                tracing::debug!(error = %e, "no answer to the operation's poll");
                return Ok((false, POLL_MAX));
            }
        };
        let progress = match p.async_op {
            true if reply.ok() => model::async_status(&reply.body).map_err(|e| {
                DriverError::new(ErrorKind::Protocol, Stage::Wait, format!("{what}: {e}"))
            })?,
            true if reply.status == 404 => {
                return Err(DriverError::new(
                    ErrorKind::DeviceError,
                    Stage::Wait,
                    format!("{what}: Resource Manager no longer knows the operation (404)"),
                ))
            }
            true => return Err(self.refusal(&reply, &what, Stage::Wait)),
            false => model::location_status(reply.status, reply.scrubbed().as_bytes()),
        };
        match progress {
            model::Progress::Running => Ok((false, pause_of(&reply))),
            model::Progress::Succeeded => {
                tracing::debug!(%what, "the operation succeeded");
                self.pending = None;
                Ok((true, POLL_MIN))
            }
            model::Progress::Failed {
                status,
                code,
                message,
            } => {
                self.pending = None;
                Err(DriverError::new(
                    ErrorKind::DeviceError,
                    Stage::Wait,
                    format!(
                        "Azure accepted the {} of VM {} and then its operation ended {status} \
                         ({code}: {message}); the VM is not taken as {}",
                        p.command,
                        self.cfg.vm,
                        if p.command == PowerCommand::Off {
                            "off"
                        } else {
                            "on"
                        }
                    ),
                ))
            }
        }
    }

    /// For `observe`: the transition a still running operation means, or
    /// `None` when none is pending (any more).
    pub(super) async fn pending_progress(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<Transition>, DriverError> {
        let Some(command) = self.pending.as_ref().map(|p| p.command) else {
            return Ok(None);
        };
        match self.poll_pending(deadline).await? {
            (true, _) => Ok(None),
            (false, _) => Ok(Some(towards(command))),
        }
    }

    /// A power request whose answer never came: read the VM; at or on its
    /// way to the target, it took the request; otherwise the outcome is
    /// unknown and the request is not sent again.
    async fn unanswered(
        &mut self,
        command: PowerCommand,
        what: &str,
        silence: DriverError,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let read = match deadline {
            Some(d) if d <= Instant::now() + Duration::from_millis(100) => None,
            _ => self.read_vm(Stage::Command, deadline).await.ok(),
        };
        let observed = read
            .as_ref()
            .and_then(|v| v.power.as_deref())
            .and_then(model::observed);
        if observed == Some(Observed::InTransition(towards(command))) {
            tracing::info!(%what, "no answer, but the VM is on its way to the target");
            return Ok(());
        }
        let now = observed.and_then(|o| o.settled());
        match once::after_silence(command, None, now, Silence::Late) {
            AfterSilence::TookEffect => Ok(()),
            _ => Err(DriverError::new(
                ErrorKind::OutcomeUnknown,
                Stage::Command,
                format!(
                    "{}; whether Azure carried out {what} is not known{}, and it is not sent again",
                    silence.message,
                    match read.as_ref().and_then(|v| v.power.as_deref()) {
                        Some(p) =>
                            format!(" (the VM reads PowerState/{})", model::printable(p, 40)),
                        None => String::new(),
                    }
                ),
            )),
        }
    }

    /// The self-fencing guard before a power-off: the metadata service
    /// names the VM this process runs on; the target itself is refused
    /// unless allowed. A service that cannot say is a warning, and the
    /// power-off goes on (a FAR pod may not reach it).
    pub(super) async fn guard(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if self.guard == Guard::Unchecked {
            self.guard = match self.this_vm(deadline).await {
                Ok(me) => Guard::Runs(me),
                Err(e) => {
                    self.warnings.push(format!(
                        "self-fencing guard not applied: which VM this process runs on is \
                         unknown ({}); powering {} off anyway",
                        e.message, self.cfg.vm
                    ));
                    Guard::Unknown
                }
            };
        }
        let Guard::Runs(me) = &self.guard else {
            return Ok(());
        };
        let target = self.vm_id.as_deref().unwrap_or("");
        let same = (!me.vm_id.is_empty() && me.vm_id.eq_ignore_ascii_case(target))
            || (me.name.eq_ignore_ascii_case(&self.cfg.vm)
                && me
                    .resource_group
                    .eq_ignore_ascii_case(&self.cfg.resource_group)
                && me.subscription.eq_ignore_ascii_case(&self.cfg.subscription));
        match (same, self.cfg.allow_self_fence) {
            (false, _) => Ok(()),
            (true, true) => {
                self.warnings.push(format!(
                    "{} is the VM this process runs on: powering it off anyway (self-fencing \
                     allowed)",
                    self.cfg.vm
                ));
                Ok(())
            }
            (true, false) => Err(DriverError::new(
                ErrorKind::SelfFence,
                Stage::Command,
                format!(
                    "refusing to power off {} (vmId {}): the instance metadata service says this \
                     process runs on it (self-fencing; allow it with --allow-self-fence); no power \
                     request was sent",
                    self.cfg.vm, me.vm_id
                ),
            )),
        }
    }
}
