//! Throttling answers waited out within the deadline: a `429 Too Many
//! Requests` (and, where the platform says so, a `503 Service
//! Unavailable`) refuses a request before carrying it out, so sending it
//! again after the pause the server asks for (`Retry-After`, seconds or an
//! HTTP date) is safe, power requests included. The wait never crosses the
//! deadline: when the next pause would, the request fails as busy at once,
//! saying how often it was throttled and how long that took.

use super::client::{Client, Failed, Reply, Request};
use crate::engine::error::ErrorKind;
use std::time::{Duration, Instant};

/// How a platform waits out throttling.
#[derive(Clone, Copy, Debug)]
pub struct Patience {
    /// The statuses that mean "refused for now, nothing done".
    pub statuses: &'static [u16],
    /// The first pause when the server names none (doubled each time).
    pub first: Duration,
    /// The longest pause (a `Retry-After` beyond it is cut to it).
    pub max_pause: Duration,
    /// How long to keep trying when the request has no deadline.
    pub budget: Duration,
}

impl Patience {
    /// 429 only, from 250 ms up to 10 s, for at most a minute.
    pub const THROTTLE: Patience = Patience {
        statuses: &[429],
        first: Duration::from_millis(250),
        max_pause: Duration::from_secs(10),
        budget: Duration::from_secs(60),
    };

    /// 429 and 503 (a cloud API's "busy, try later").
    pub const THROTTLE_OR_BUSY: Patience = Patience {
        statuses: &[429, 503],
        ..Patience::THROTTLE
    };
}

impl Client {
    /// Sends `r`, and again after a pause while it is answered with one of
    /// `p`'s statuses, within `r.deadline` (or `p.budget`). Each throttling
    /// answer counts in [`Client::throttled`].
    pub async fn send_patiently(&mut self, r: &Request<'_>, p: &Patience) -> Result<Reply, Failed> {
        let started = Instant::now();
        let until = r.deadline.unwrap_or(started + p.budget);
        let mut pause = p.first;
        let mut tries = 0u32;
        loop {
            tries += 1;
            let reply = self.send(r).await?;
            if !p.statuses.contains(&reply.status) {
                return Ok(reply);
            }
            self.throttled += 1;
            let since = *self.throttled_since.get_or_insert_with(Instant::now);
            let asked = reply.retry_after();
            let wait = asked.unwrap_or(pause).max(pause).min(p.max_pause);
            let now = Instant::now();
            if now + wait >= until {
                let peer = r.peer.unwrap_or(self.device()).to_string();
                return Err(Failed::Throttled(self.error(
                    ErrorKind::Busy,
                    r.stage,
                    format!(
                        "{peer} throttled {} {tries} time(s) ({}{}); no time is left to try \
                         again: {} throttled answer(s) in {:.1}s, the deadline {:.1}s away",
                        r.what,
                        reply.status,
                        asked
                            .map(|a| format!(", Retry-After {}s", a.as_secs()))
                            .unwrap_or_default(),
                        self.throttled,
                        now.duration_since(since).as_secs_f64(),
                        until.saturating_duration_since(now).as_secs_f64()
                    ),
                )));
            }
            tracing::debug!(
                status = reply.status,
                tries,
                wait_ms = wait.as_millis() as u64,
                "throttled; trying again"
            );
            tokio::time::sleep(wait).await;
            pause = (pause * 2).min(p.max_pause);
        }
    }
}
