//! How the driver exchanges datagrams: the UDP transport, sessionless
//! requests before a session, and requests in a session, retransmitted
//! on the pacing's schedule inside the deadline.

use super::*;

impl IpmiDriver {
    pub(super) async fn transport(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<&mut Transport, DriverError> {
        if self.transport.is_none() {
            self.transport = Some(
                Transport::connect(&self.cfg.host, self.cfg.port, deadline, MAX_DATAGRAM).await?,
            );
        }
        Ok(self.transport.as_mut().expect("just set"))
    }

    /// A sessionless request (IPMI 1.5 framing), a fresh rqSeq per
    /// transmission so that each answer names its transmission. The flag:
    /// whether the answer's IPMI checksums match (nothing else vouches for
    /// it; the caller decides).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn sessionless(
        &mut self,
        net_fn: u8,
        command: u8,
        data: &[u8],
        stage: Stage,
        what: &str,
        first_wait: Option<Duration>,
        deadline: Option<Instant>,
    ) -> Result<(Frame, bool), DriverError> {
        let mut seq = self.rq_seq;
        let t = self.transport.as_mut().expect("transport is open");
        let r = exchange(
            t,
            &mut self.stats,
            &mut self.pacing,
            &mut Sent::default(),
            stage,
            what,
            first_wait,
            deadline,
            None,
            |sent| {
                let s = bump(&mut seq);
                sent.push(s);
                session::sessionless_request(net_fn, command, s, data)
            },
            |sent, d| {
                Ok(session::sessionless_answer(d, net_fn, command, sent)
                    .map(|(f, n, sums_ok)| ((f, sums_ok), Some(n))))
            },
        )
        .await;
        self.rq_seq = seq;
        r
    }

    /// Sends one in-session request that does not act and returns the
    /// response. A busy answer (C0h node busy, C3h timeout while
    /// processing, CFh duplicated request) is asked again in the same
    /// session after a pause (200 ms, doubling up to 2 s) while the deadline
    /// leaves room for it: repeating a read is harmless.
    pub(super) async fn request(
        &mut self,
        net_fn: u8,
        command: u8,
        data: &[u8],
        stage: Stage,
        what: &str,
        deadline: Option<Instant>,
    ) -> Result<Frame, DriverError> {
        let mut pause = BUSY_PAUSE;
        let mut tries = 0;
        loop {
            let (f, _) = self
                .request_watching(net_fn, command, data, None, stage, what, deadline)
                .await?;
            let busy = matches!(
                f.completion_code(),
                Ok(cc::NODE_BUSY | cc::TIMEOUT | cc::DUPLICATE_REQUEST)
            );
            let room = match deadline {
                Some(d) => Instant::now() + pause < d,
                None => tries < BUSY_TRIES,
            };
            if !busy || !room {
                return Ok(f);
            }
            let c = f.completion_code().unwrap_or_default();
            self.tolerate(
                None,
                format!(
                    "the BMC answered {what} with {} ({c:#04x}): asked again after {} ms, in \
                     the same session",
                    codec::completion_text(c),
                    pause.as_millis()
                ),
            );
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(BUSY_PAUSE_MAX);
            tries += 1;
        }
    }

    /// Sends a request that does not act (a read, Set Session Privilege
    /// Level) in the session until it is answered, and meanwhile also
    /// accepts a late answer to `also`, an earlier request. Each
    /// transmission takes a fresh rqSeq (as FreeIPMI does): repeating a read
    /// is harmless, and the echoed rqSeq tells which transmission an answer
    /// answers, so every answer measures the round trip. (Requests that act
    /// keep theirs: see [`Self::control`].) Returns the answer and whether
    /// it answers `also`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn request_watching(
        &mut self,
        net_fn: u8,
        command: u8,
        data: &[u8],
        also: Option<&Frame>,
        stage: Stage,
        what: &str,
        deadline: Option<Instant>,
    ) -> Result<(Frame, bool), DriverError> {
        let (Some(t), Some(active)) = (self.transport.as_mut(), self.active.as_mut()) else {
            return Err(DriverError::new(
                ErrorKind::Protocol,
                stage,
                "no session is open",
            ));
        };
        let mut seq = self.rq_seq;
        // never reuse the rqSeq of the request still watched for
        let mut next = || loop {
            let s = bump(&mut seq);
            if also.is_none_or(|o| o.seq != s) {
                return s;
            }
        };
        let refused_before = active.rejected().cloned();
        let mut state = (active, Sent::default());
        let r = exchange(
            t,
            &mut self.stats,
            &mut self.pacing,
            &mut state,
            stage,
            what,
            None,
            deadline,
            None,
            |(a, sent)| {
                let s = next();
                sent.push(s);
                a.wrap(&Frame::request(net_fn, command, s, data))
            },
            |(a, sent), d| match a.unwrap(d) {
                Unwrapped::Frame(f)
                    if f.answers(net_fn, command, f.seq) && sent.which(f.seq).is_some() =>
                {
                    let n = sent.which(f.seq);
                    Ok(Some(((f, false), n)))
                }
                Unwrapped::Frame(f) if also.is_some_and(|o| f.answers(o.netfn, o.cmd, o.seq)) => {
                    Ok(Some(((f, true), Some(0))))
                }
                Unwrapped::Frame(_) => Ok(None),
                Unwrapped::Ignored(why) => {
                    tracing::debug!(why, "ignored a datagram");
                    Ok(None)
                }
            },
        )
        .await;
        self.rq_seq = seq;
        self.collect_session_tolerances();
        let mut r = r;
        if let Err(e) = &mut r {
            if e.kind == ErrorKind::Timeout {
                // Answers came and were refused: say what was wrong with
                // them, not "no answer".
                // Each reason counted; only refusals a stray datagram
                // cannot explain make it a protocol error.
                if let Some(refused) = self
                    .active
                    .as_ref()
                    .and_then(|a| a.rejected())
                    .map(|r| r.since(refused_before.as_ref()))
                    .filter(|r| r.count > 0)
                {
                    if refused.decisive() > 0 {
                        e.kind = ErrorKind::Protocol;
                        e.message = refused.describe(&self.cfg.host, what);
                    } else {
                        e.message =
                            format!("{} ({})", e.message, refused.describe(&self.cfg.host, what));
                    }
                }
                // The session may be gone (BMC reset, idle timeout): set up a
                // fresh one on the next call.
                self.active = None;
                self.detail = None;
            }
        }
        r
    }
}
