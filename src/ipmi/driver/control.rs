//! Power control: reading the chassis, and Chassis Control sent at most
//! once by our doing (the silence rule of [`crate::engine::once`]).

use super::*;

impl IpmiDriver {
    /// Reads the power state from a Get Chassis Status answer.
    pub(super) fn chassis_state(&mut self, f: &Frame) -> Result<PowerState, DriverError> {
        match f.completion_code() {
            Ok(cc::OK) => {}
            Ok(c) => {
                let mut e = self.classify(c, Stage::Status, "Get Chassis Status");
                if e.kind == ErrorKind::DeviceError || e.kind == ErrorKind::NotInPresentState {
                    e.kind = ErrorKind::StatusUnreadable;
                }
                return Err(e);
            }
            Err(_) => {
                return Err(DriverError::new(
                    ErrorKind::StatusUnreadable,
                    Stage::Status,
                    "empty Get Chassis Status response",
                ))
            }
        }
        let status = ChassisStatus::decode(&f.data[1..]).map_err(|e| {
            DriverError::new(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!("unreadable Get Chassis Status response: {e}"),
            )
        })?;
        let state = if status.is_on() {
            PowerState::On
        } else {
            PowerState::Off
        };
        self.last_state = Some(state);
        Ok(state)
    }

    /// Reads the chassis while a power command's answer is outstanding; its
    /// late answer ends the read.
    pub(super) async fn reread(
        &mut self,
        control: &Frame,
        deadline: Option<Instant>,
    ) -> Result<Reread, DriverError> {
        let (f, late) = self
            .request_watching(
                netfn::CHASSIS,
                cmd::GET_CHASSIS_STATUS,
                &[],
                Some(control),
                Stage::Command,
                "Get Chassis Status (before re-sending a power command)",
                deadline,
            )
            .await?;
        if late {
            return Ok(Reread::Answer(f));
        }
        Ok(Reread::State(self.chassis_state(&f)?))
    }

    /// The answer to Chassis Control, as a result. `resent`: the command
    /// went out more than once (a duplicate refusal then means done).
    pub(super) fn control_answer(
        &self,
        f: &Frame,
        what: &str,
        resent: bool,
    ) -> Result<(), DriverError> {
        match f.completion_code() {
            Ok(cc::OK) => Ok(()),
            Ok(cc::DUPLICATE_REQUEST) if resent => {
                tracing::debug!(
                    "the BMC recognised the re-sent {what} as a duplicate of one it carried out"
                );
                Ok(())
            }
            Ok(c) => Err(self.classify(c, Stage::Command, what)),
            Err(_) => Err(DriverError::new(
                ErrorKind::Protocol,
                Stage::Command,
                "empty Chassis Control response",
            )),
        }
    }

    /// Chassis Control, carried out at most once by our doing (see the
    /// module docs): no answer within the retransmission timeout → read
    /// the chassis → the shared rule ([`once::after_silence`]) decides:
    /// done if the read shows the effect; the same request again only for
    /// an off or on the read shows not carried out; otherwise (a cycle, a
    /// reset, an NMI) one more wait for the late answer without sending,
    /// one more read, then [`ErrorKind::OutcomeUnknown`] — never a second
    /// transmission.
    pub(super) async fn control(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.ensure_open(deadline).await?;
        let byte = match command {
            PowerCommand::Off => chassis_control::POWER_DOWN,
            PowerCommand::On => chassis_control::POWER_UP,
            PowerCommand::Cycle => chassis_control::POWER_CYCLE,
            PowerCommand::Reset => chassis_control::HARD_RESET,
            PowerCommand::Diag => chassis_control::DIAGNOSTIC_INTERRUPT,
        };
        let what = format!("Chassis Control ({command})");
        // The same command left unanswered by an earlier call (a caller's
        // retry): read before anything is sent, and keep its identity.
        let earlier = self.unanswered.take().filter(|u| u.command == command);
        let seq = match earlier {
            Some(u) if u.session == self.session_no => u.seq,
            _ => self.next_seq(),
        };
        let frame = Frame::request(netfn::CHASSIS, cmd::CHASSIS_CONTROL, seq, &[byte]);
        let before = self.last_state;
        let mut must_read = earlier.is_some();
        let mut wait = self.pacing.first_wait();
        let mut sends = 0u32;
        let mut rounds = 0u32;
        // Reads that could not show whether it was carried out.
        let mut unknown_reads = 0u32;
        let started = Instant::now();
        let resent = |sends: u32| sends > 1 || earlier.is_some();
        loop {
            self.unanswered = Some(Unanswered {
                command,
                seq,
                session: self.session_no,
            });
            let mut listen_only = false;
            if must_read {
                let now = match self.reread(&frame, deadline).await {
                    Ok(Reread::Answer(f)) => {
                        self.unanswered = None;
                        return self.control_answer(&f, &what, resent(sends));
                    }
                    Ok(Reread::State(now)) => now,
                    Err(e) => {
                        return Err(self.outcome_unknown(
                            &what,
                            sends,
                            started,
                            &format!("and the chassis could not be read: {}", e.message),
                        ))
                    }
                };
                match once::after_silence(command, before, Some(now), Silence::MaybeLost) {
                    AfterSilence::TookEffect => {
                        self.unanswered = None;
                        tracing::info!(
                            "no answer to {what}, but the chassis reads {now}: not sent again"
                        );
                        return Ok(());
                    }
                    AfterSilence::SendAgain => {
                        tracing::debug!(
                            "no answer to {what} and the chassis reads {now}: sending it again"
                        );
                    }
                    AfterSilence::Unknown => {
                        unknown_reads += 1;
                        if unknown_reads >= 2 || deadline.is_some_and(|dl| Instant::now() >= dl) {
                            return Err(self.outcome_unknown(
                                &what,
                                sends,
                                started,
                                &format!("and the chassis reads {now}, which cannot show it"),
                            ));
                        }
                        tracing::debug!(
                            "no answer to {what} and the chassis reads {now}: waiting for a late \
                             answer, not sending it again"
                        );
                        listen_only = true;
                    }
                }
            }
            let (Some(t), Some(active)) = (self.transport.as_mut(), self.active.as_mut()) else {
                return Err(DriverError::new(
                    ErrorKind::Protocol,
                    Stage::Command,
                    "no session is open",
                ));
            };
            if !listen_only {
                t.send(&active.wrap(&frame)).await;
                sends += 1;
                if resent(sends) {
                    self.stats.retransmits += 1;
                }
            }
            rounds += 1;
            let sent_at = Instant::now();
            let mut until = sent_at + wait;
            if let Some(dl) = deadline {
                until = until.min(dl);
            }
            loop {
                match t.recv_until(until).await {
                    Received::Datagram(d) => match active.unwrap(&d) {
                        // C3h, timeout while processing: it may have been
                        // carried out. Like no answer: the chassis is read
                        // before anything is sent again.
                        Unwrapped::Frame(f)
                            if f.answers(frame.netfn, frame.cmd, frame.seq)
                                && f.completion_code() == Ok(cc::TIMEOUT) =>
                        {
                            break
                        }
                        Unwrapped::Frame(f) if f.answers(frame.netfn, frame.cmd, frame.seq) => {
                            if rounds == 1 && sends == 1 && earlier.is_none() {
                                self.pacing.sample(sent_at.elapsed());
                            }
                            self.unanswered = None;
                            return self.control_answer(&f, &what, resent(sends));
                        }
                        Unwrapped::Frame(_) => {}
                        Unwrapped::Ignored(why) => tracing::debug!(why, "ignored a datagram"),
                    },
                    Received::Refused => {
                        tokio::time::sleep_until(until.into()).await;
                        break;
                    }
                    Received::Nothing => break,
                }
            }
            if deadline.is_some_and(|dl| Instant::now() >= dl) {
                // Whether the BMC carried it out is unknown: the next call
                // for this command reads the chassis before sending.
                self.active = None;
                self.detail = None;
                return Err(self.outcome_unknown(&what, sends, started, "before the deadline"));
            }
            wait = self.pacing.grown(wait);
            must_read = true;
        }
    }

    /// A power command that got no answer and whose effect no read shows:
    /// never sent again (the engine reports it "sent, outcome unknown").
    pub(super) fn outcome_unknown(
        &self,
        what: &str,
        sends: u32,
        started: Instant,
        and: &str,
    ) -> DriverError {
        DriverError::new(
            ErrorKind::OutcomeUnknown,
            Stage::Command,
            format!(
                "no answer from {} to {what} after {sends} transmission{} in {:.1}s, {and}; \
                 whether the BMC carried it out is not known, and it is not sent again",
                self.cfg.host,
                if sends == 1 { "" } else { "s" },
                started.elapsed().as_secs_f64()
            ),
        )
    }
}
