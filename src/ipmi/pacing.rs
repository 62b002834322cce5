//! When to give up waiting for an answer: a retransmission timeout that
//! follows the BMC's measured round-trip time, with no I/O.
//!
//! A fixed interval is wrong both ways: too short for a slow BMC (a request
//! re-sent before its answer could arrive is carried out twice by a BMC
//! without duplicate detection, as OpenIPMI's `ipmi_sim` is), too long for a
//! fast one on a lossy path. So the wait is estimated the way TCP does it
//! (RFC 6298: smoothed round-trip time and its variation), from answers
//! whose transmission is known. The driver makes almost every answer name
//! its transmission:
//!
//! * every RMCP+ set-up message carries a fresh message tag, and every
//!   request that does not act (sessionless requests, reads, Set Session
//!   Privilege Level) a fresh rqSeq; the BMC echoes both (FreeIPMI's
//!   ipmipower also takes a new tag and rqSeq per transmission);
//! * a power command keeps its rqSeq when re-sent, so that a BMC can
//!   recognise the duplicate (as ipmitool keeps it): an answer to a command
//!   sent more than once is ambiguous and gives no sample (Karn's rule),
//!   and the backed-off wait is kept for the next exchange.
//!
//! An answer naming an earlier transmission than the last is taken at its
//! word: ipmi_sim, pyghmi's BMC and the lab echo the tag of the request
//! they answer. A BMC that repeated a cached answer (first tag and all)
//! would make the estimate too long, never too short: slower recovery from
//! loss, never an early re-send.
//!
//! The rule: `RTO = max(SRTT + 2·RTTVAR, 2·SRTT)`, clamped to
//! [[`FLOOR`], ceiling]. The factor 2 on SRTT keeps a margin for a BMC
//! whose round trip is steady (variation near zero) but whose slow commands
//! take longer than its quick ones; the variation counts twice, not four
//! times as in TCP, because the samples are the client's too: on a loaded
//! machine a scheduling hiccup of a few hundred milliseconds would
//! otherwise hold every wait near a second for many exchanges, and fewer
//! tries fit in the set-up bound under loss. (A power command never relies
//! on the estimate being generous: it is not re-sent without a chassis
//! read.) Before the first sample the wait is the configured
//! initial one. After a wait that ended without an answer the next one is
//! 1.5 times longer, up to `max(1 s, RTO)` (never above the ceiling): on a
//! fast BMC short steps (1 s and more between tries lose too many exchanges
//! under heavy loss), on a slow one never shorter than its own round trip.
//! Callers cut every wait at their deadline.

use std::time::Duration;

/// The shortest wait for an answer: below this, BMCs that are merely busy
/// for a moment would see bursts of retransmissions.
pub const FLOOR: Duration = Duration::from_millis(250);
/// Back-off grows to at least this on a fast BMC (see the module docs).
pub const BACKOFF_CAP: Duration = Duration::from_secs(1);
/// Default ceiling: no single transmission waits longer for its answer
/// (agent mode uses `--ipmitool-timeout` instead, as upstream's ipmitool
/// uses `-N`).
pub const DEFAULT_CEILING: Duration = Duration::from_secs(3);

/// The retransmission timer of one BMC.
#[derive(Clone, Debug)]
pub struct Pacing {
    initial: Duration,
    ceiling: Duration,
    srtt: Option<Duration>,
    rttvar: Duration,
    /// The wait the next first transmission uses (backed off until a clean sample).
    current: Duration,
    samples: u32,
}

impl Pacing {
    /// A timer that starts at `initial` and never waits longer than
    /// `ceiling` (both at least [`FLOOR`]).
    pub fn new(initial: Duration, ceiling: Duration) -> Self {
        let ceiling = ceiling.max(FLOOR);
        let initial = initial.clamp(FLOOR, ceiling);
        Pacing {
            initial,
            ceiling,
            srtt: None,
            rttvar: Duration::ZERO,
            current: initial,
            samples: 0,
        }
    }

    /// The retransmission timeout the measurements give (the initial one
    /// before any).
    pub fn rto(&self) -> Duration {
        match self.srtt {
            None => self.initial,
            Some(s) => (s + self.rttvar * 2).max(s * 2).clamp(FLOOR, self.ceiling),
        }
    }

    /// How long the first transmission of a new exchange waits.
    pub fn first_wait(&self) -> Duration {
        self.current
    }

    /// The wait after one of `waited` that ended without an answer, kept
    /// for the next exchange too (Karn) until a clean sample.
    pub fn backoff(&mut self, waited: Duration) -> Duration {
        let next = self.grown(waited);
        self.current = next;
        next
    }

    /// The wait after one of `waited` that ended without an answer, for a
    /// request that keeps its own back-off (a power command, whose silence
    /// is followed by a chassis read that must not wait longer for it).
    pub fn grown(&self, waited: Duration) -> Duration {
        let cap = BACKOFF_CAP.max(self.rto()).min(self.ceiling);
        waited.mul_f32(1.5).min(cap).max(waited.min(cap))
    }

    /// An answer came that may answer any of several transmissions while
    /// the wait `waited` was running (Karn: no sample, and the backed-off
    /// wait is kept for the next exchange, whose answer can then be clean).
    pub fn ambiguous(&mut self, waited: Duration) {
        self.current = waited.max(self.rto()).min(self.ceiling);
    }

    /// Records the round trip of an answer whose transmission is known.
    pub fn sample(&mut self, rtt: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(s) => {
                let diff = s.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + diff) / 4;
                self.srtt = Some((s * 7 + rtt) / 8);
            }
        }
        self.samples += 1;
        self.current = self.rto();
    }

    /// The smoothed round-trip time, once measured.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// Clean samples taken so far.
    pub fn samples(&self) -> u32 {
        self.samples
    }

    /// The longest any single transmission waits.
    pub fn ceiling(&self) -> Duration {
        self.ceiling
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn before_any_sample_the_initial_wait_backs_off_to_one_second() {
        let mut p = Pacing::new(ms(250), DEFAULT_CEILING);
        assert_eq!(p.first_wait(), ms(250));
        let mut w = p.first_wait();
        let mut steps = vec![w];
        for _ in 0..5 {
            w = p.backoff(w);
            steps.push(w);
        }
        let want = [250, 375, 562, 843, 1000, 1000];
        for (got, want) in steps.iter().zip(want) {
            assert!(got.abs_diff(ms(want)) < ms(1), "{steps:?}");
        }
        // Karn: the backed-off wait is kept for the next exchange.
        assert_eq!(p.first_wait(), w);
    }

    #[test]
    fn a_fast_bmc_gets_the_floor() {
        let mut p = Pacing::new(ms(250), DEFAULT_CEILING);
        for _ in 0..4 {
            p.sample(ms(1));
        }
        assert_eq!(p.rto(), FLOOR);
        assert_eq!(p.first_wait(), FLOOR);
    }

    #[test]
    fn a_slow_bmc_is_given_twice_its_round_trip() {
        // ipmi_sim behind a 1 s delay: the first sample sets SRTT = 1 s,
        // RTTVAR = 0.5 s → 2 s; steady samples keep it at 2 s, never the
        // round trip itself.
        let mut p = Pacing::new(ms(250), DEFAULT_CEILING);
        p.sample(ms(1000));
        assert_eq!(p.rto(), ms(2000));
        for _ in 0..40 {
            p.sample(ms(1000));
        }
        assert!(p.rto() >= ms(2000) && p.rto() < ms(2100), "{:?}", p.rto());
        // back-off on a slow BMC never drops below its timeout
        let w = p.first_wait();
        assert!(p.backoff(w) >= w);
        let mut q = Pacing::new(ms(250), DEFAULT_CEILING);
        q.sample(ms(400));
        assert_eq!(q.rto(), ms(800));
        // a jittery BMC (0.4-1.2 s) gets more than its slowest answer
        let mut j = Pacing::new(ms(250), DEFAULT_CEILING);
        for i in 0..40 {
            j.sample(ms(if i % 2 == 0 { 400 } else { 1200 }));
        }
        assert!(j.rto() > ms(1200), "{:?}", j.rto());
        // a one-off hiccup on a fast BMC does not hold the waits up
        let mut h = Pacing::new(ms(250), DEFAULT_CEILING);
        for _ in 0..4 {
            h.sample(ms(1));
        }
        h.sample(ms(400));
        assert!(h.rto() < ms(400), "{:?}", h.rto());
    }

    #[test]
    fn the_ceiling_bounds_every_wait() {
        let mut p = Pacing::new(ms(250), ms(2000));
        p.sample(ms(1800));
        assert_eq!(p.rto(), ms(2000));
        let w = p.first_wait();
        assert_eq!(p.backoff(w), ms(2000));
        // a ceiling below the floor is raised to it; the initial wait is clamped
        let p = Pacing::new(ms(5000), ms(10));
        assert_eq!((p.ceiling(), p.first_wait()), (FLOOR, FLOOR));
    }

    #[test]
    fn an_ambiguous_answer_keeps_the_backed_off_wait() {
        let mut p = Pacing::new(ms(500), DEFAULT_CEILING);
        p.sample(ms(1));
        let w = p.backoff(p.first_wait());
        p.ambiguous(w);
        assert_eq!((p.first_wait(), p.samples()), (w, 1));
        // never below the timeout, never beyond the ceiling
        p.ambiguous(ms(1));
        assert_eq!(p.first_wait(), FLOOR);
        p.ambiguous(ms(10_000));
        assert_eq!(p.first_wait(), DEFAULT_CEILING);
    }

    #[test]
    fn a_clean_sample_ends_the_back_off() {
        let mut p = Pacing::new(ms(250), DEFAULT_CEILING);
        let w = p.backoff(p.first_wait());
        let w = p.backoff(w);
        assert!(p.first_wait() > ms(500), "{w:?}");
        p.sample(ms(2));
        assert_eq!(p.first_wait(), FLOOR);
        assert_eq!(p.samples(), 1);
        assert_eq!(p.srtt(), Some(ms(2)));
    }
}
