//! Power requests and their zone operations: one POST with a `requestId`;
//! its operation followed (polled after 0.2 s, then at most once a second) until `DONE` or the
//! step's deadline (then `observe` keeps asking it); an operation that
//! ends with an error fails the action; and the self-fencing guard before
//! a stop or a reset.
//!
//! A POST whose answer was lost is read back before anything else is sent:
//! the instance, and the zone's operations filtered by
//! `clientOperationId = "R"` (Compute Engine sets an operation's
//! `clientOperationId` to the `requestId` it was sent with). An operation
//! found is adopted and followed; an instance at or on its way to the
//! target (a stop or a start; a reset shows nothing there) took the
//! request. Only when both reads answer and show nothing of it is the
//! request sent again: once, under the same `requestId` (the API never
//! starts a second operation for one), and the timeline says so. A
//! read-back that fails (no answer, an error status, a 403 on the list)
//! is "outcome unknown", and nothing is sent again.

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

/// How many pages of a filtered operation list are read (the filter
/// leaves at most one operation: more pages mean it was not applied).
const READ_BACK_PAGES: usize = 5;

/// What the read-back of a power request whose answer was lost found.
enum ReadBack {
    /// An operation carries the request's `requestId`: it was accepted.
    Operation(String, model::Progress),
    /// No operation to follow, but the instance reads at or on its way to
    /// the target (its status).
    Effect(String),
    /// Both reads answered and neither shows the request (the instance's
    /// status): it may be sent again, once, under the same `requestId`.
    Nothing(String),
    /// A read failed (why): the outcome is unknown.
    Unreadable(String),
}

/// "Outcome unknown" for `what`, whose answer `silence` lost, after a
/// read-back that could not tell (`why`): never sent again.
fn outcome_unknown(silence: &DriverError, what: &str, why: &str) -> DriverError {
    DriverError::new(
        ErrorKind::OutcomeUnknown,
        Stage::Command,
        format!(
            "{}; whether Compute Engine carried out {what} is not known ({why}), and it is not \
             sent again",
            silence.message
        ),
    )
}

impl GceDriver {
    /// Sends `verb` (with `query`, each part ending in `&`) once and
    /// follows its operation; a lost answer is read back first
    /// ([`Self::read_back`]) and the request sent again, once and under the
    /// same `requestId`, only when the read-back shows nothing of it.
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
        let (reply, what) = match first {
            Call::Reply(r) => (r, what),
            Call::Silent(silence) => {
                match self.read_back(command, verb, &request_id, deadline).await {
                    ReadBack::Operation(name, progress) => {
                        let note = format!(
                            "the answer to {what} was lost; Compute Engine's operation {name} \
                             carries its requestId {request_id}: it is followed, nothing is \
                             sent again"
                        );
                        tracing::info!(%what, operation = %name, "{note}");
                        self.warnings.push(note);
                        self.pending = Some(Pending { command, name });
                        if self.settle(progress)? {
                            return Ok(());
                        }
                        return self.follow(deadline).await;
                    }
                    ReadBack::Effect(status) => {
                        tracing::info!(
                            %what,
                            %status,
                            "no answer, but the instance reads at or on its way to the target"
                        );
                        return Ok(());
                    }
                    ReadBack::Unreadable(why) => {
                        return Err(outcome_unknown(&silence, &what, &why));
                    }
                    ReadBack::Nothing(status) => {
                        let note = format!(
                            "the answer to {what} was lost and the read-back showed nothing of \
                             it (the instance reads {status}; no operation carries its \
                             requestId): sent again, once, with the same requestId {request_id}"
                        );
                        tracing::info!(%what, %request_id, "{note}");
                        self.warnings.push(note);
                        let again = format!(
                            "{what} (sent again after the read-back showed nothing of the first)"
                        );
                        match self
                            .call(
                                Method::POST,
                                &url,
                                &again,
                                Stage::Command,
                                &Patience::THROTTLE,
                                deadline,
                            )
                            .await?
                        {
                            Call::Reply(r) => (r, again),
                            Call::Silent(e) => {
                                return Err(outcome_unknown(
                                    &e,
                                    &again,
                                    "no answer again; it is not sent a third time",
                                ))
                            }
                        }
                    }
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

    /// A power request whose answer was lost, read back: the instance, and
    /// the zone's operations filtered by the request's `requestId`
    /// (`clientOperationId = "R"`; Compute Engine sets an operation's
    /// `clientOperationId` to the `requestId` it was sent with).
    async fn read_back(
        &mut self,
        command: PowerCommand,
        verb: &str,
        request_id: &str,
        deadline: Option<Instant>,
    ) -> ReadBack {
        if deadline.is_some_and(|d| d <= Instant::now() + Duration::from_millis(100)) {
            return ReadBack::Unreadable("no time was left in the step to read it back".into());
        }
        let instance = match self.read_instance(Stage::Command, deadline).await {
            Ok(i) => i,
            Err(e) => {
                return ReadBack::Unreadable(format!(
                    "the instance could not be read: {}",
                    e.message
                ))
            }
        };
        let status = model::printable(&instance.status, 40);
        // The instance shows a stop or a start (at the target, or on its
        // way there); a reset leaves it RUNNING, which shows nothing.
        let observed = model::observed(&instance.status);
        let effect = command != PowerCommand::Cycle
            && (observed == Some(Observed::InTransition(towards(command)))
                || once::after_silence(
                    command,
                    None,
                    observed.and_then(|o| o.settled()),
                    Silence::Late,
                ) == AfterSilence::TookEffect);
        match self.request_operation(verb, request_id, deadline).await {
            Ok(Some((name, progress))) => ReadBack::Operation(name, progress),
            Ok(None) if effect => ReadBack::Effect(status),
            Ok(None) => ReadBack::Nothing(status),
            // The instance's reading stands on its own: the engine confirms
            // the state before it reports success.
            Err(why) if effect => {
                tracing::info!(%why, "the operations could not be listed; the instance reads {status}");
                ReadBack::Effect(status)
            }
            Err(why) => ReadBack::Unreadable(format!("the instance reads {status}, and {why}")),
        }
    }

    /// The zone operation whose `clientOperationId` is `request_id` (all
    /// pages of the filtered list, up to [`READ_BACK_PAGES`]), or why the
    /// list could not be read.
    async fn request_operation(
        &mut self,
        verb: &str,
        request_id: &str,
        deadline: Option<Instant>,
    ) -> Result<Option<model::Named>, String> {
        let filter =
            crate::http::client::form_encode(&format!("clientOperationId = \"{request_id}\""));
        let base = format!(
            "{}/operations?filter={filter}",
            self.zone_url(&self.cfg.zone)
        );
        let what = format!(
            "GET operations of zone {} (requestId {request_id})",
            self.cfg.zone
        );
        let mut url = base.clone();
        for _ in 0..READ_BACK_PAGES {
            let reply = match self
                .call(
                    Method::GET,
                    &url,
                    &what,
                    Stage::Command,
                    &Patience::THROTTLE_OR_BUSY,
                    deadline,
                )
                .await
            {
                Ok(Call::Reply(r)) => r,
                Ok(Call::Silent(e)) | Err(e) => {
                    return Err(format!("the operations could not be listed: {}", e.message))
                }
            };
            if !reply.ok() {
                let e = self.refusal(&reply, &what, Stage::Command);
                return Err(match reply.status {
                    403 => e.message,
                    s => {
                        let a = model::api_error(s, reply.scrubbed().as_bytes());
                        format!(
                            "Compute Engine answered {what} with {s} {}: {}",
                            a.reason, a.message
                        )
                    }
                });
            }
            let (found, next) =
                model::request_operation(&reply.body, request_id, &self.cfg.instance, verb)
                    .map_err(|e| format!("{what}: {e}"))?;
            match (found, next) {
                (Some(op), _) => return Ok(Some(op)),
                (None, None) => return Ok(None),
                (None, Some(t)) => {
                    url = format!("{base}&pageToken={}", crate::http::client::form_encode(&t))
                }
            }
        }
        Err(format!(
            "{what}: the list did not end within {READ_BACK_PAGES} pages"
        ))
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
