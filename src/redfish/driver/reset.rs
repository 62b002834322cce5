//! The reset side of the Redfish driver: the reset types a system offers
//! (inline, or read once from its ActionInfo) and the plan a check shows,
//! a Task monitor followed to its end after a 202, and the at-most-once
//! rule after a reset POST that got no answer. The request itself, and the
//! choice of reset type per command, are made in [`super`]'s
//! `PowerDriver::command`.

use super::{RedfishDriver, ResetPlan};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::once;
use crate::engine::power::PowerCommand;
use crate::redfish::http::{path_of, Reply};
use crate::redfish::model::{self, Offered, TaskProgress};
use reqwest::Method;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Longest pause between two Task monitor reads.
const TASK_POLL_MAX: Duration = Duration::from_secs(1);

impl RedfishDriver {
    /// The reset types on offer (reads ActionInfo once when needed).
    pub(super) async fn offered(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<(String, Option<Vec<String>>), DriverError> {
        let stage = Stage::Command;
        let sys = self
            .system
            .as_ref()
            .ok_or_else(|| DriverError::new(ErrorKind::Protocol, stage, "not connected"))?;
        let action = sys
            .reset
            .clone()
            .map_err(|e| DriverError::new(ErrorKind::Unsupported, stage, e.to_string()))?;
        let target = path_of(&action.target);
        if let Some(r) = &sys.resolved {
            return Ok((target, r.clone()));
        }
        let offered = match action.offered {
            Offered::Listed(l) => Some(l),
            Offered::Unpublished => None,
            Offered::ActionInfo(info) => {
                let v = self.get(&path_of(&info), true, stage, deadline).await?;
                let values = model::action_info_values(&v);
                if values.is_none() {
                    tracing::warn!(
                        "the ActionInfo lists no ResetType values; assuming the standard types"
                    );
                }
                values
            }
        };
        if let Some(s) = self.system.as_mut() {
            s.resolved = Some(offered.clone());
        }
        Ok((target, offered))
    }

    /// The reset types on offer and the one each command would use (for a
    /// fenceability check); connects when needed.
    pub async fn reset_plan(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<ResetPlan, DriverError> {
        self.ensure_open(deadline).await?;
        let (_, offered) = self.offered(deadline).await?;
        let choices = [
            PowerCommand::Off,
            PowerCommand::On,
            PowerCommand::Cycle,
            PowerCommand::Diag,
        ]
        .into_iter()
        .map(|c| (c, model::choose_reset(c, offered.as_deref())))
        .collect();
        Ok(ResetPlan { offered, choices })
    }

    /// Follows a Task monitor until the task ends or the deadline passes.
    pub(super) async fn follow_task(
        &mut self,
        accepted: Reply,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let stage = Stage::Command;
        let first: Option<Value> =
            crate::parse::json(&accepted.body, &crate::parse::Limits::ANSWER).ok();
        if let Some(b) = &first {
            if b.get("TaskState").is_some() {
                match model::task_progress(200, Some(b)) {
                    TaskProgress::Done => return Ok(()),
                    TaskProgress::Failed(why) => return Err(task_failed(&why)),
                    TaskProgress::Running(_) => {}
                }
            }
        }
        let monitor = accepted
            .location
            .clone()
            .or_else(|| first.as_ref().and_then(model::odata_id).map(path_of));
        let Some(monitor) = monitor else {
            tracing::warn!(
                "the reset was accepted (202) without a task to follow; the power state will tell"
            );
            return Ok(());
        };
        let mut pause = Duration::from_millis(100);
        let mut last = String::from("accepted");
        loop {
            if let Some(d) = deadline {
                let now = Instant::now();
                if now >= d {
                    return Err(DriverError::new(
                        ErrorKind::Timeout,
                        stage,
                        format!(
                            "the reset task at {monitor} did not end in time (last state: {last})"
                        ),
                    ));
                }
                pause = pause.min(d - now);
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(TASK_POLL_MAX);
            self.stats.task_polls += 1;
            let r = self
                .http(stage)?
                .send(Method::GET, &monitor, None, true, stage, deadline)
                .await?;
            if r.status == 404 {
                // Some services drop a finished task at once; the power
                // state read that follows is what counts.
                tracing::debug!(%monitor, "the task monitor is gone");
                return Ok(());
            }
            if !r.ok() {
                return Err(model::classify(
                    r.status,
                    &r.body,
                    stage,
                    &format!("GET {monitor}"),
                ));
            }
            let body: Option<Value> =
                crate::parse::json(&r.body, &crate::parse::Limits::ANSWER).ok();
            match model::task_progress(r.status, body.as_ref()) {
                TaskProgress::Done => return Ok(()),
                TaskProgress::Failed(why) => return Err(task_failed(&why)),
                TaskProgress::Running(s) => last = s,
            }
        }
    }

    /// After a reset POST that got no answer: the shared at-most-once rule
    /// ([`once::after_silence`], `Silence::Late`) with one read of the
    /// system, when the deadline leaves time for it.
    pub(super) async fn unanswered_reset(
        &mut self,
        command: PowerCommand,
        reset: &str,
        silence: DriverError,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let now = match deadline {
            Some(d) if d <= Instant::now() + Duration::from_millis(100) => None,
            _ => match self.system_body(deadline).await {
                Ok(body) => model::power_state(&body).ok(),
                Err(e) => {
                    tracing::debug!(error = %e, "no read after the unanswered reset");
                    None
                }
            },
        };
        match once::after_silence(command, None, now, once::Silence::Late) {
            once::AfterSilence::TookEffect => {
                tracing::info!(%command, "no answer to the reset, but the system reads the target");
                Ok(())
            }
            _ => Err(DriverError::new(
                ErrorKind::OutcomeUnknown,
                Stage::Command,
                format!(
                    "{} (ResetType {reset}){}; whether the BMC carried it out is not known, and \
                     it is not sent again",
                    silence.message,
                    match now {
                        Some(s) => format!(", and the system reads {s}"),
                        None => String::new(),
                    }
                ),
            )),
        }
    }
}

fn task_failed(why: &str) -> DriverError {
    DriverError::new(
        ErrorKind::DeviceError,
        Stage::Command,
        format!("the BMC's reset task failed: {why}"),
    )
}
