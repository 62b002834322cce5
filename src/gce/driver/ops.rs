//! Power requests and their zone operations: one POST with a `requestId`;
//! its operation followed (polled after 0.2 s, then at most once a second) until `DONE` or the
//! step's deadline (then `observe` keeps asking it); an operation that
//! ends with an error fails the action; a lost answer asked again with the
//! same `requestId` (the API answers with the operation it already
//! started: never a second one), then read from the instance; and the
//! self-fencing guard before a stop or a reset.

use super::api::Call;
use super::*;
use crate::engine::once::{self, AfterSilence, Silence};
use crate::engine::power::Transition;
use crate::http::{Patience, Reply};
use reqwest::Method;
use std::time::Duration;

/// The first pause before an operation is polled, and the longest (each
/// pause is half again the one before).
const POLL_FIRST: Duration = Duration::from_millis(200);
const POLL_MAX: Duration = Duration::from_secs(1);
/// How long an operation is followed without a deadline.
const FOLLOW_BUDGET: Duration = Duration::from_secs(300);

fn towards(command: PowerCommand) -> Transition {
    match command {
        PowerCommand::On => Transition::PoweringOn,
        _ => Transition::PoweringOff,
    }
}

fn settled_goal(command: PowerCommand) -> &'static str {
    match command {
        PowerCommand::Off => "off",
        PowerCommand::On => "on",
        _ => "reset",
    }
}

impl GceDriver {
    /// Sends `verb` (with `query`, each part ending in `&`) once and
    /// follows its operation.
    pub(super) async fn power(
        &mut self,
        command: PowerCommand,
        verb: &str,
        query: &str,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.prepare(deadline).await?;
        let request_id = crate::http::jwt::random_uuid();
        let url = format!(
            "{}/{verb}?{query}requestId={request_id}",
            self.instance_url()
        );
        let what = format!("POST instances/{}/{verb}", self.cfg.instance);
        // A requestId makes a 503's retry safe: the API never starts a
        // second operation for one requestId.
        let first = self
            .call(
                Method::POST,
                &url,
                &what,
                Stage::Command,
                &Patience::THROTTLE_OR_BUSY,
                deadline,
            )
            .await?;
        let reply = match first {
            Call::Reply(r) => r,
            Call::Silent(e) => {
                tracing::info!(%what, "no answer: asking again with the same requestId");
                match self
                    .call(
                        Method::POST,
                        &url,
                        &what,
                        Stage::Command,
                        &Patience::THROTTLE,
                        deadline,
                    )
                    .await
                {
                    Ok(Call::Reply(r)) if r.ok() => r,
                    _ => return self.unanswered(command, &what, e, deadline).await,
                }
            }
        };
        if !reply.ok() {
            return Err(self.power_refusal(command, &reply, &what));
        }
        let (name, progress) = model::operation(&reply.body).map_err(|e| {
            DriverError::new(ErrorKind::Protocol, Stage::Command, format!("{what}: {e}"))
        })?;
        self.pending = Some(Pending { command, name });
        if self.settle(progress)? {
            return Ok(());
        }
        self.follow(deadline).await
    }

    fn power_refusal(&self, command: PowerCommand, reply: &Reply, what: &str) -> DriverError {
        let e = model::api_error(reply.status, reply.scrubbed().as_bytes());
        // A reset of an instance that is not running: "not in the present
        // state"; the engine reads it and powers it on.
        if command == PowerCommand::Cycle && reply.status == 400 && e.reason == "resourceNotReady" {
            return DriverError::new(
                ErrorKind::NotInPresentState,
                Stage::Command,
                format!("{what}: {} ({})", e.message, e.reason),
            );
        }
        self.refusal(reply, what, Stage::Command)
    }

    /// Applies an operation's progress: `true` when it has ended (well).
    fn settle(&mut self, progress: model::Progress) -> Result<bool, DriverError> {
        match progress {
            model::Progress::Running => Ok(false),
            model::Progress::Done => {
                self.pending = None;
                Ok(true)
            }
            model::Progress::Failed { code, message } => {
                let p = self.pending.take();
                let command = p.as_ref().map_or(PowerCommand::Off, |p| p.command);
                Err(DriverError::new(
                    ErrorKind::DeviceError,
                    Stage::Wait,
                    format!(
                        "Compute Engine accepted the {command} of instance {} and then its \
                         operation {} ended with an error ({code}: {message}); the instance is \
                         not taken as {}",
                        self.cfg.instance,
                        p.map(|p| p.name).unwrap_or_default(),
                        settled_goal(command)
                    ),
                ))
            }
        }
    }

    /// Polls the pending operation until it ends or the deadline comes
    /// (then it stays pending for `observe`).
    async fn follow(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        let until = deadline.unwrap_or_else(|| Instant::now() + FOLLOW_BUDGET);
        let mut pause = POLL_FIRST;
        loop {
            if Instant::now() + pause + Duration::from_millis(200) >= until {
                tracing::debug!(
                    "the operation is still running at the step's end; observe follows it"
                );
                return Ok(());
            }
            tokio::time::sleep(pause).await;
            if self.poll_pending(deadline).await? {
                return Ok(());
            }
            pause = (pause * 3 / 2).min(POLL_MAX);
        }
    }

    /// One poll of the pending operation: whether it has ended (well).
    async fn poll_pending(&mut self, deadline: Option<Instant>) -> Result<bool, DriverError> {
        let Some(p) = self.pending.clone() else {
            return Ok(true);
        };
        let url = format!("{}/operations/{}", self.zone_url(&self.cfg.zone), p.name);
        let what = format!("GET the {} operation of {}", p.command, self.cfg.instance);
        let reply = match self
            .call(
                Method::GET,
                &url,
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
                return Ok(false);
            }
        };
        if reply.status == 404 {
            self.pending = None;
            return Err(DriverError::new(
                ErrorKind::DeviceError,
                Stage::Wait,
                format!(
                    "{what}: Compute Engine no longer knows operation {} (404)",
                    p.name
                ),
            ));
        }
        if !reply.ok() {
            return Err(self.refusal(&reply, &what, Stage::Wait));
        }
        let (_, progress) = model::operation(&reply.body).map_err(|e| {
            DriverError::new(ErrorKind::Protocol, Stage::Wait, format!("{what}: {e}"))
        })?;
        self.settle(progress)
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
            true => Ok(None),
            false => Ok(Some(towards(command))),
        }
    }

    /// A power request whose answer never came, twice: read the instance;
    /// at or on its way to the target, it took the request; otherwise the
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
            _ => self.read_instance(Stage::Command, deadline).await.ok(),
        };
        let observed = read.as_ref().and_then(|i| model::observed(&i.status));
        if command != PowerCommand::Cycle
            && observed == Some(Observed::InTransition(towards(command)))
        {
            tracing::info!(%what, "no answer, but the instance is on its way to the target");
            return Ok(());
        }
        let now = observed.and_then(|o| o.settled());
        match once::after_silence(command, None, now, Silence::Late) {
            AfterSilence::TookEffect if command != PowerCommand::Cycle => Ok(()),
            _ => Err(DriverError::new(
                ErrorKind::OutcomeUnknown,
                Stage::Command,
                format!(
                    "{}; whether Compute Engine carried out {what} is not known{}, and it is not \
                     sent again",
                    silence.message,
                    match &read {
                        Some(i) =>
                            format!(" (the instance reads {})", model::printable(&i.status, 40)),
                        None => String::new(),
                    }
                ),
            )),
        }
    }

    /// The self-fencing guard before a stop or a reset: the metadata
    /// server names the instance this process runs on (its id); the target
    /// itself is refused unless allowed. A server that cannot say is a
    /// warning, and the action goes on (a FAR pod may not reach it).
    pub(super) async fn guard(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        if self.guard == Guard::Unchecked {
            self.guard = match self.metadata_text("instance/id", deadline).await {
                Ok(id) if !id.is_empty() => Guard::Runs(id),
                Ok(_) => Guard::Unknown,
                Err(e) => {
                    self.warnings.push(format!(
                        "self-fencing guard not applied: which instance this process runs on is \
                         unknown ({}); going on with the {command} of {}",
                        e.message, self.cfg.instance
                    ));
                    Guard::Unknown
                }
            };
        }
        let Guard::Runs(me) = &self.guard else {
            return Ok(());
        };
        let same = self.instance_id.as_deref() == Some(me.as_str());
        match (same, self.cfg.allow_self_fence) {
            (false, _) => Ok(()),
            (true, true) => {
                self.warnings.push(format!(
                    "{} is the instance this process runs on: going on with the {command} \
                     (self-fencing allowed)",
                    self.cfg.instance
                ));
                Ok(())
            }
            (true, false) => Err(DriverError::new(
                ErrorKind::SelfFence,
                Stage::Command,
                format!(
                    "refusing the {command} of {} (id {me}): the metadata server says this \
                     process runs on it (self-fencing; allow it with --allow-self-fence); no \
                     power request was sent",
                    self.cfg.instance
                ),
            )),
        }
    }
}
