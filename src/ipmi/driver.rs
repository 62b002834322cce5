//! The engine's [`PowerDriver`] for IPMI: session set-up with cipher
//! negotiation, retransmission paced by the BMC's measured round-trip time
//! inside deadlines, chassis status and control (never carried out twice
//! by our doing), identity (Get System GUID), power draw (DCMI), and
//! session clean-up.
//!
//! Power commands are not retransmitted like the other requests. A Chassis
//! Control whose answer does not come within the retransmission timeout is
//! not re-sent blindly: the chassis is read first (Get Chassis Status),
//! while a late answer to the command is still accepted. The at-most-once
//! rule shared with Redfish ([`crate::engine::once::after_silence`])
//! decides: the reading shows the command took effect (off/on: the target
//! state; cycle: off after on) — that is the answer; an off or on not
//! carried out yet is re-sent, with the same rqSeq (a BMC with duplicate
//! detection then recognises it; its "cannot execute duplicated request"
//! answer counts as done); a cycle, reset or NMI whose effect no read shows
//! is never re-sent: after one more wait for its late answer it ends in
//! [`ErrorKind::OutcomeUnknown`]. A power command left unanswered when a
//! call ends is remembered, so a caller's retry of the same command also
//! reads first.
//!
//! Vendor quirks handled here are named where they are handled (see
//! `../shared/reference/quirks.md` for the evidence behind each).

use super::codec::{
    self, cc, chassis_control, cmd, netfn, ChassisStatus, DcmiPowerReading, Frame, SystemGuid,
};
use super::config::{AuthType, CipherChoice, ConfigError, IpmiConfig, Privilege, Version};
use super::crypto::Suite;
use super::pacing::Pacing;
use super::session::{self, Active, ExpectChallenge, ExpectOpenSessionResponse, Sent, Unwrapped};
use super::workaround::{Workaround, Workarounds};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::event::Tolerance;
use crate::engine::identity::{Identity, UuidForm};
use crate::engine::once::{self, AfterSilence, Silence};
use crate::engine::power::{PowerCommand, PowerReading, PowerState};
use crate::udp::{Received, Transport};
use std::time::{Duration, Instant};

/// Largest datagram accepted; IPMI messages are far smaller.
const MAX_DATAGRAM: usize = 2048;
/// How long Close Session may take before the session is simply abandoned.
const CLOSE_WAIT: Duration = Duration::from_millis(300);
/// In automatic cipher choice without an answer to Get Channel Cipher Suites,
/// how long an Open Session for suite 17 may go unanswered before trying 3.
const SUITE_PROBE_WAIT: Duration = Duration::from_millis(1200);

/// Counters for the record (and the datagram-count benchmark).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Datagrams sent.
    pub sent: u32,
    /// Datagrams received.
    pub received: u32,
    /// ICMP port-unreachable reports (nothing listens at the BMC's port).
    pub refused: u32,
    /// Retransmissions among the sent ones.
    pub retransmits: u32,
    /// Sessions opened.
    pub sessions: u32,
}

/// A power command sent and not answered (yet).
#[derive(Clone, Copy, Debug)]
struct Unanswered {
    command: PowerCommand,
    /// Its rqSeq, which identifies it inside session `session`.
    seq: u8,
    session: u32,
}

/// An IPMI BMC as the engine drives it.
pub struct IpmiDriver {
    cfg: IpmiConfig,
    transport: Option<Transport>,
    active: Option<Active>,
    granted: Option<Privilege>,
    rq_seq: u8,
    detail: Option<String>,
    stats: Stats,
    pacing: Pacing,
    /// Sessions opened so far (an rqSeq names a request only in its session).
    session_no: u32,
    /// The last power state read.
    last_state: Option<PowerState>,
    /// A power command whose answer never came.
    unanswered: Option<Unanswered>,
    /// The last [`PowerDriver::connect`] failed after the BMC answered
    /// part of the set-up (see [`PowerDriver::set_up_answered`]).
    set_up_answered: bool,
    /// The privilege the current set-up asks for: the configured one, or
    /// operator after the BMC refused administrator to this user.
    asking: Privilege,
    /// Tolerated non-compliance not yet taken by the engine.
    tolerances: Vec<Tolerance>,
    /// Named workarounds this BMC needed so far (for `check`).
    needed: Workarounds,
    /// Named workarounds already said in the current session.
    said: Workarounds,
    /// The session fell back to IPMI 1.5 (the BMC speaks nothing else).
    fell_back_to_v15: bool,
}

/// What Get Channel Cipher Suites told.
#[derive(Debug)]
enum Offered {
    /// These suite IDs (every record, usable or not).
    Suites(Vec<u8>),
    /// An answer that lists no readable suite: why.
    Unreadable(&'static str),
    /// The BMC answered the command with this completion code (an IPMI 1.5
    /// BMC does not know it).
    Refused(u8),
}

/// Busy answers to a request that does not act are asked again after this
/// long, doubling up to [`BUSY_PAUSE_MAX`], within the deadline.
const BUSY_PAUSE: Duration = Duration::from_millis(200);
/// The longest pause between two busy answers.
const BUSY_PAUSE_MAX: Duration = Duration::from_secs(2);
/// Without a deadline (`disable_timeout`), busy answers are asked again at most this often.
const BUSY_TRIES: u32 = 30;

/// What `accept` found: the answer, and which transmission (1-based) it
/// answers when the datagram says so (0: none of this exchange's).
type Found<R> = Option<(R, Option<u32>)>;

/// Next rqSeq (6 bits, never 0).
fn bump(seq: &mut u8) -> u8 {
    *seq = (*seq + 1) & 0x3f;
    if *seq == 0 {
        *seq = 1;
    }
    *seq
}

/// One request/response exchange with retransmission: `make` builds each
/// (re)transmission, `accept` picks the answer out of whatever arrives.
/// Waits follow `pacing` (its back-off included) unless `first_wait` is
/// given (a short probe that keeps its own steps); the round trip of an
/// answer whose transmission is known becomes a sample.
#[allow(clippy::too_many_arguments)]
async fn exchange<S, R>(
    t: &mut Transport,
    stats: &mut Stats,
    pacing: &mut Pacing,
    state: &mut S,
    stage: Stage,
    what: &str,
    first_wait: Option<Duration>,
    deadline: Option<Instant>,
    max_tries: Option<u32>,
    mut make: impl FnMut(&mut S) -> Vec<u8>,
    mut accept: impl FnMut(&mut S, &[u8]) -> Result<Found<R>, DriverError>,
) -> Result<R, DriverError> {
    let started = Instant::now();
    let mut wait = first_wait.unwrap_or_else(|| pacing.first_wait());
    let mut refused = false;
    let mut sent_at: Vec<Instant> = Vec::new();
    loop {
        let d = make(state);
        t.send(&d).await;
        sent_at.push(Instant::now());
        let tries = sent_at.len() as u32;
        if tries > 1 {
            stats.retransmits += 1;
        }
        let mut until = Instant::now() + wait;
        if let Some(dl) = deadline {
            until = until.min(dl);
        }
        loop {
            match t.recv_until(until).await {
                Received::Datagram(d) => {
                    if let Some((r, which)) = accept(state, &d)? {
                        // An answer that names its transmission (or answers
                        // the only one) is a sample; otherwise Karn (see
                        // `pacing`). Transmission 0: an answer to another
                        // request, which measures nothing.
                        match which.or((tries == 1).then_some(1)) {
                            Some(0) => {}
                            Some(n) => match sent_at.get(n as usize - 1) {
                                Some(at) => pacing.sample(at.elapsed()),
                                None => pacing.ambiguous(wait),
                            },
                            None => pacing.ambiguous(wait),
                        }
                        tracing::trace!(what, tries, ?which, srtt = ?pacing.srtt(), next = ?pacing.first_wait(), "answered");
                        return Ok(r);
                    }
                }
                Received::Refused => {
                    refused = true;
                    tokio::time::sleep_until(until.into()).await;
                    break;
                }
                Received::Nothing => break,
            }
        }
        let out_of_tries = max_tries.is_some_and(|m| tries >= m);
        if out_of_tries || deadline.is_some_and(|dl| Instant::now() >= dl) {
            let why = if refused {
                "the port is unreachable (ICMP port unreachable)"
            } else {
                "no answer"
            };
            return Err(DriverError::new(
                ErrorKind::Timeout,
                stage,
                format!(
                    "{why} from {} to {what} after {} attempt{} in {:.1}s",
                    t.peer(),
                    tries,
                    if tries == 1 { "" } else { "s" },
                    started.elapsed().as_secs_f64()
                ),
            ));
        }
        wait = match first_wait {
            Some(_) => wait.mul_f32(1.5),
            None => pacing.backoff(wait),
        };
    }
}

/// The IPMI 1.5 authentication type to use: the one asked for if the BMC
/// offers it (`offered`: the Get Channel Authentication Capabilities mask);
/// without a request MD5, then straight password, never "none" (a session
/// without authentication codes lets anyone on the path forge its answers).
/// `authcap`: the mask is not believed (the asked type, or MD5, is used).
pub fn choose_auth(
    asked: Option<AuthType>,
    offered: u8,
    authcap: bool,
) -> Result<AuthType, DriverError> {
    let supports = |a: AuthType| offered & (1 << (a as u8)) != 0;
    let hint = "; if the BMC under-reports its capabilities (Asus, Intel SR1520ML, Sun ELOM), \
                --workaround authcap uses it anyway";
    match asked {
        Some(a) if supports(a) || authcap => Ok(a),
        None if authcap => Ok(AuthType::Md5),
        Some(a) => Err(DriverError::new(
            ErrorKind::CipherUnsupported,
            Stage::Negotiate,
            format!(
                "the BMC does not offer IPMI 1.5 authentication type {} (offered mask {offered:#04x}){hint}",
                a.as_str()
            ),
        )),
        None => [AuthType::Md5, AuthType::Password]
            .into_iter()
            .find(|a| supports(*a))
            .ok_or_else(|| {
                DriverError::new(
                    ErrorKind::CipherUnsupported,
                    Stage::Negotiate,
                    if supports(AuthType::None) {
                        format!(
                            "the BMC offers IPMI 1.5 authentication type none only (mask {offered:#04x}); \
                             fencekit never chooses it by itself (anyone on the path could forge the \
                             BMC's answers): ask for it with --auth none, or use IPMI 2.0{hint}"
                        )
                    } else {
                        format!(
                            "the BMC offers no usable IPMI 1.5 authentication type (mask {offered:#04x}){hint}"
                        )
                    },
                )
            }),
    }
}

/// What a re-read of the chassis found.
enum Reread {
    /// The late answer to the power command itself.
    Answer(Frame),
    /// The power state.
    State(PowerState),
}

impl IpmiDriver {
    /// A driver for one BMC; checks what IPMI cannot carry.
    pub fn new(cfg: IpmiConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let pacing = Pacing::new(cfg.retransmit, cfg.retransmit_max);
        let asking = cfg.privilege;
        Ok(IpmiDriver {
            cfg,
            transport: None,
            active: None,
            granted: None,
            rq_seq: 0,
            detail: None,
            stats: Stats::default(),
            pacing,
            session_no: 0,
            last_state: None,
            unanswered: None,
            set_up_answered: false,
            asking,
            tolerances: Vec::new(),
            needed: Workarounds::NONE,
            said: Workarounds::NONE,
            fell_back_to_v15: false,
        })
    }

    /// The named workarounds this BMC needed so far, asked for or applied
    /// by fencekit itself (what `check` reports, for an inventory's
    /// `workarounds = [...]`).
    pub fn workarounds_needed(&self) -> Workarounds {
        self.needed
    }

    /// Says that `what` was tolerated (once per session for a named
    /// workaround), for the timeline.
    fn tolerate(&mut self, workaround: Option<Workaround>, detail: String) {
        if let Some(w) = workaround {
            self.needed.insert(w);
            if self.said.contains(w) {
                return;
            }
            self.said.insert(w);
        }
        tracing::info!(workaround = workaround.map(Workaround::name), "{detail}");
        self.tolerances.push(Tolerance {
            name: workaround.map(Workaround::name),
            detail,
            weakens_security: workaround.is_some_and(Workaround::weakens_security),
        });
    }

    /// Takes what the open session tolerated into the record.
    fn collect_session_tolerances(&mut self) {
        let Some(active) = self.active.as_mut() else {
            return;
        };
        let seen: Vec<Workaround> = active.take_tolerated().iter().collect();
        for w in seen {
            let detail = match w {
                Workaround::NoChecksumCheck if !self.cfg.workarounds.contains(w) => {
                    "the BMC's replies carry wrong IPMI checksums (Supermicro X9): accepted, \
                     their integrity or MD5 codes verify"
                }
                Workaround::NoChecksumCheck => {
                    "the BMC's replies carry wrong IPMI checksums: accepted, as asked"
                }
                Workaround::IdZero => {
                    "the BMC's replies carry session ID 0 (Tyan S2882): accepted, as asked"
                }
                Workaround::EndianSeq => {
                    "the BMC's session sequence numbers are read byte-swapped (Sun ILOM), as asked"
                }
                Workaround::NoAuthCodeCheck => {
                    "the BMC's replies are accepted without checking their authentication \
                     codes, as asked"
                }
                _ => "tolerated",
            };
            self.tolerate(Some(w), detail.to_string());
        }
    }

    /// Datagram counters so far (including the open transport's).
    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        if let Some(t) = &self.transport {
            s.sent += t.sent;
            s.received += t.received;
            s.refused += t.refused;
        }
        s
    }

    /// The session's privilege (what the BMC granted, else what was asked
    /// for), as `connect` describes it; meaningful once connected.
    pub fn privilege(&self) -> Privilege {
        self.granted.unwrap_or(self.cfg.privilege)
    }

    /// The open session's RMCP+ cipher suite (`None` when no RMCP+
    /// session is open, or for IPMI 1.5).
    pub fn cipher_suite(&self) -> Option<u8> {
        self.active.as_ref().and_then(Active::suite_id)
    }

    /// The retransmission timer (its round-trip estimate), for the record and tests.
    pub fn pacing(&self) -> &Pacing {
        &self.pacing
    }

    fn next_seq(&mut self) -> u8 {
        bump(&mut self.rq_seq)
    }

    async fn transport(
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
    async fn sessionless(
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

    /// Get Channel Cipher Suites (sessionless), bounded by a short timeout.
    /// Quirk (ipmitool#199; ipmi_sim): some BMCs never answer this; `None` then.
    async fn query_suites(&mut self, deadline: Option<Instant>) -> Option<Offered> {
        let mut until = Instant::now() + self.cfg.cipher_query_timeout;
        if let Some(d) = deadline {
            until = until.min(d);
        }
        let first_wait = self.cfg.cipher_query_timeout / 2;
        let mut records = Vec::new();
        for index in 0u8..8 {
            let (r, sums_ok) = self
                .sessionless(
                    netfn::APP,
                    cmd::GET_CHANNEL_CIPHER_SUITES,
                    &[0x0e, 0x00, 0x80 | index],
                    Stage::Negotiate,
                    "Get Channel Cipher Suites",
                    Some(first_wait),
                    Some(until),
                )
                .await
                .ok()?;
            if !sums_ok {
                // Supermicro X9: the list is unauthenticated anyway, and
                // nothing in it can be trusted now.
                return Some(Offered::Unreadable("its IPMI checksum is wrong"));
            }
            match r.completion_code() {
                Ok(cc::OK) if r.data.len() >= 2 => {}
                Ok(cc::OK) => return Some(Offered::Unreadable("it is empty")),
                Ok(c) if index == 0 => return Some(Offered::Refused(c)),
                // A later page refused: what was read so far counts.
                Ok(_) => break,
                Err(_) => return Some(Offered::Unreadable("it is empty")),
            }
            let chunk = &r.data[2..];
            records.extend_from_slice(chunk);
            // Suite 17 is the best we speak: once it is listed, stop paging.
            let has17 = codec::parse_cipher_suite_records(&records)
                .iter()
                .any(|r| r.id == 17);
            if chunk.len() < 16 || has17 {
                break;
            }
        }
        let mut parsed = codec::parse_cipher_suite_records(&records);
        if parsed.is_empty() && !records.is_empty() {
            // sun20: Sun ILOM leaves out the records' start-of-record tags.
            parsed = codec::parse_untagged_cipher_suite_records(&records);
            if parsed.is_empty() {
                return Some(Offered::Unreadable("its records cannot be read"));
            }
            self.tolerate(
                Some(Workaround::Sun20),
                "the BMC lists its cipher suites without the records' tags (Sun ILOM): read \
                 as such"
                    .into(),
            );
        }
        if parsed.is_empty() {
            return Some(Offered::Unreadable("it lists no suite"));
        }
        let ids = parsed
            .iter()
            .filter(|r| Suite::from_algorithms(r.auth, r.integrity, r.conf).is_some())
            .map(|r| r.id)
            .collect::<Vec<_>>();
        let all = parsed.iter().map(|r| r.id).collect::<Vec<_>>();
        tracing::debug!(offered = ?all, usable = ?ids, "Get Channel Cipher Suites answered");
        Some(Offered::Suites(all))
    }

    /// Get Channel Authentication Capabilities asked for the IPMI 2.0
    /// extended data, briefly: `Some(false)` when the BMC says it speaks
    /// IPMI 1.5 only, `Some(true)` when it speaks 2.0, `None` without a
    /// readable answer.
    async fn speaks_v20(&mut self, deadline: Option<Instant>) -> Option<bool> {
        let mut until = Instant::now() + self.cfg.cipher_query_timeout;
        if let Some(d) = deadline {
            until = until.min(d);
        }
        let (f, sums_ok) = self
            .sessionless(
                netfn::APP,
                cmd::GET_CHANNEL_AUTH_CAPS,
                &[0x8e, self.asking as u8],
                Stage::Negotiate,
                "Get Channel Authentication Capabilities",
                Some(self.cfg.cipher_query_timeout / 2),
                Some(until),
            )
            .await
            .ok()?;
        if !sums_ok && !self.cfg.workarounds.contains(Workaround::NoChecksumCheck) {
            return None;
        }
        match f.completion_code().ok()? {
            // An IPMI 1.5 BMC may refuse the 2.0 bit itself.
            cc::INVALID_DATA => Some(false),
            cc::OK if f.data.len() >= 5 => Some(f.data[2] & 0x80 != 0 && f.data[4] & 0x02 != 0),
            cc::OK if f.data.len() >= 3 => Some(f.data[2] & 0x80 != 0),
            _ => None,
        }
    }

    /// RMCP+ set-up for one suite, state by state (see [`session`]).
    /// `open_deadline` bounds only the Open Session exchange (a short probe
    /// when the suite may be unsupported); once the BMC has answered it, the
    /// rest runs to `deadline`, so a lossy network never leaves a
    /// half-authenticated session behind.
    ///
    /// Two refusals are answered with a second set-up, once each, within
    /// `deadline`: the user name refused (RAKP 2 status 0Dh or 0Ch) is sent
    /// again padded with zeros to 16 bytes (intel20); privilege
    /// administrator refused (09h, 0Ah) is asked again as operator, which
    /// is all fencing needs.
    async fn handshake_v20(
        &mut self,
        suite: Suite,
        open_deadline: Option<Instant>,
        deadline: Option<Instant>,
    ) -> Result<Active, DriverError> {
        let mut pad = self.cfg.workarounds.contains(Workaround::Intel20);
        let mut padded_again = false;
        let mut lowered = false;
        let mut open_deadline = open_deadline;
        loop {
            let r = self
                .handshake_v20_once(suite, pad, open_deadline, deadline)
                .await;
            let time_left = deadline.is_none_or(|d| Instant::now() < d);
            let n = self.cfg.username.len();
            match r {
                Err(e)
                    if e.kind == ErrorKind::UsernameInvalid
                        && !pad
                        && (1..16).contains(&n)
                        && time_left =>
                {
                    tracing::debug!(error = %e, "user name refused: trying it padded (intel20)");
                    pad = true;
                    padded_again = true;
                }
                Err(e)
                    if e.kind == ErrorKind::PrivilegeNotObtained
                        && self.asking == Privilege::Administrator
                        && !lowered
                        && time_left =>
                {
                    tracing::debug!(error = %e, "administrator refused: asking for operator");
                    self.asking = Privilege::Operator;
                    lowered = true;
                    self.tolerate(
                        None,
                        format!(
                            "the BMC refused privilege administrator to this user ({}): the \
                             session asks for operator, which is enough for power control",
                            e.message
                        ),
                    );
                }
                Err(e) if padded_again && e.kind == ErrorKind::UsernameInvalid => {
                    // Padding did not help either: the name is unknown.
                    return Err(e);
                }
                Ok(a) => {
                    if padded_again {
                        self.tolerate(
                            Some(Workaround::Intel20),
                            "the BMC found the user name only padded with zeros to 16 bytes \
                             (Intel SE7520AF2): RAKP 1 carried it so"
                                .into(),
                        );
                    }
                    return Ok(a);
                }
                Err(e) => return Err(e),
            }
            // The BMC answered: the retry may use the whole set-up time.
            open_deadline = deadline;
        }
    }

    /// One RMCP+ set-up (see [`Self::handshake_v20`]); `pad`: intel20.
    async fn handshake_v20_once(
        &mut self,
        suite: Suite,
        pad: bool,
        open_deadline: Option<Instant>,
        deadline: Option<Instant>,
    ) -> Result<Active, DriverError> {
        let mut hs = ExpectOpenSessionResponse::new(
            suite,
            self.asking,
            &self.cfg.username,
            self.cfg.password.clone(),
            self.cfg.kg.clone(),
        );
        if pad {
            hs = hs.pad_user_name();
        }
        let t = self.transport.as_mut().expect("transport is open");
        let (st, pc) = (&mut self.stats, &mut self.pacing);
        let opened = exchange(
            t,
            st,
            pc,
            &mut hs,
            Stage::Negotiate,
            &format!("Open Session (cipher suite {})", suite.id()),
            None,
            open_deadline,
            None,
            |h| h.request(),
            |h, d| {
                Ok(h.on_response(d)?.map(|o| {
                    let n = o.transmission;
                    (o, Some(n))
                }))
            },
        )
        .await?;
        let mut hs = hs.into_rakp(opened);
        let verified = exchange(
            t,
            st,
            pc,
            &mut hs,
            Stage::Authenticate,
            "RAKP 1",
            None,
            deadline,
            None,
            |h| h.request(),
            |h, d| {
                Ok(h.on_response(d)?.map(|v| {
                    let n = v.transmission;
                    (v, Some(n))
                }))
            },
        )
        .await;
        let verified = match verified {
            Ok(v) => v,
            Err(e) => {
                if e.kind == ErrorKind::PasswordInvalid {
                    // Tell the BMC to drop the half-open session (RAKP 3 with
                    // status 0Fh) so a wrong password costs it no session slot.
                    t.send(&hs.abort_notice()).await;
                }
                return Err(e);
            }
        };
        let extra = verified.extra_bytes;
        let mut hs = hs.into_rakp3(verified);
        let keys = exchange(
            t,
            st,
            pc,
            &mut hs,
            Stage::Authenticate,
            "RAKP 3",
            None,
            deadline,
            None,
            |h| h.request(),
            |h, d| {
                Ok(h.on_response(d)?.map(|v| {
                    let n = v.transmission;
                    (v, Some(n))
                }))
            },
        )
        .await?;
        let extra4 = keys.extra_bytes;
        let active = hs.into_active(keys);
        if extra > 0 {
            self.tolerate(
                Some(Workaround::Supermicro20),
                format!(
                    "the BMC's RAKP 2 key-exchange code carried {extra} byte(s) after the HMAC \
                     (Supermicro H8QME, Sun ILOM): ignored, the HMAC verified"
                ),
            );
        }
        if extra4 > 0 {
            self.tolerate(
                Some(Workaround::IntegrityCheckValue),
                format!(
                    "the BMC's RAKP 4 integrity check value was not truncated ({extra4} byte(s) \
                     more than the suite's): its first bytes verified"
                ),
            );
        }
        Ok(active)
    }

    /// Get Channel Authentication Capabilities: (auth types offered, status
    /// flags byte; bit 4 set = per-message authentication disabled).
    async fn auth_caps(&mut self, deadline: Option<Instant>) -> Result<(u8, u8), DriverError> {
        let privilege = self.asking as u8;
        let what = "Get Channel Authentication Capabilities";
        let (f, sums_ok) = self
            .sessionless(
                netfn::APP,
                cmd::GET_CHANNEL_AUTH_CAPS,
                &[0x0e, privilege],
                Stage::Negotiate,
                what,
                None,
                deadline,
            )
            .await?;
        if !sums_ok {
            if !self.cfg.workarounds.contains(Workaround::NoChecksumCheck) {
                return Err(DriverError::new(
                    ErrorKind::Protocol,
                    Stage::Negotiate,
                    format!(
                        "the BMC answered {what}, but the answer's IPMI checksum is wrong (seen \
                         on Supermicro X9 boards): --workaround nochecksumcheck accepts such \
                         answers"
                    ),
                ));
            }
            self.tolerate(
                Some(Workaround::NoChecksumCheck),
                format!("the BMC's answer to {what} has a wrong IPMI checksum: accepted, as asked"),
            );
        }
        match f.completion_code() {
            Ok(cc::OK) if f.data.len() >= 4 => Ok((f.data[2], f.data[3])),
            Ok(cc::OK) if f.data.len() >= 3 => Ok((f.data[2], 0)),
            Ok(c) => Err(DriverError::new(
                ErrorKind::DeviceError,
                Stage::Negotiate,
                format!("{what} failed: {} ({c:#04x})", codec::completion_text(c)),
            )),
            Err(_) => Err(DriverError::new(
                ErrorKind::Protocol,
                Stage::Negotiate,
                format!("empty {what} response"),
            )),
        }
    }

    /// IPMI 1.5 set-up. The automatic choice takes MD5, then straight
    /// password, never "none": a session without authentication codes lets
    /// anyone on the path forge its answers, so it is used only when asked
    /// for (`--auth none`). A BMC that refuses administrator to this user
    /// (Activate Session 86h) is asked again for operator, once.
    async fn handshake_v15(
        &mut self,
        auth: Option<AuthType>,
        deadline: Option<Instant>,
    ) -> Result<Active, DriverError> {
        match self.handshake_v15_once(auth, deadline).await {
            Err(e)
                if e.kind == ErrorKind::PrivilegeNotObtained
                    && self.asking == Privilege::Administrator
                    && deadline.is_none_or(|d| Instant::now() < d) =>
            {
                self.asking = Privilege::Operator;
                self.tolerate(
                    None,
                    format!(
                        "the BMC refused privilege administrator to this user ({}): the session \
                         asks for operator, which is enough for power control",
                        e.message
                    ),
                );
                self.handshake_v15_once(auth, deadline).await
            }
            other => other,
        }
    }

    async fn handshake_v15_once(
        &mut self,
        auth: Option<AuthType>,
        deadline: Option<Instant>,
    ) -> Result<Active, DriverError> {
        let (offered, flags) = self.auth_caps(deadline).await?;
        let per_message_auth_disabled = flags & 0x10 != 0;
        let authcap = self.cfg.workarounds.contains(Workaround::Authcap);
        let chosen = choose_auth(auth, offered, authcap)?;
        if authcap && offered & (1 << (chosen as u8)) == 0 {
            self.tolerate(
                Some(Workaround::Authcap),
                format!(
                    "the BMC does not list authentication type {} (mask {offered:#04x}): used \
                     anyway, as asked",
                    chosen.as_str()
                ),
            );
        }
        let auth = chosen;
        let mut hs = ExpectChallenge::new(
            auth,
            self.asking,
            &self.cfg.username,
            self.cfg.password.clone(),
        );
        hs.workarounds(self.cfg.workarounds);
        hs.declared_per_message_auth_off(per_message_auth_disabled);
        if per_message_auth_disabled && auth != AuthType::None {
            if self.cfg.accept_unauthenticated_replies {
                tracing::warn!(
                    "the BMC declares per-message authentication disabled: replies without \
                     authentication codes are accepted (as asked)"
                );
            } else {
                tracing::debug!(
                    "the BMC declares per-message authentication disabled; ignored: replies \
                     must still carry authentication codes"
                );
            }
        }
        hs.accept_unauthenticated_replies(
            per_message_auth_disabled && self.cfg.accept_unauthenticated_replies,
        );
        let mut seq = self.rq_seq;
        let t = self.transport.as_mut().expect("transport is open");
        let (st, pc) = (&mut self.stats, &mut self.pacing);
        let challenge = exchange(
            t,
            st,
            pc,
            &mut hs,
            Stage::Authenticate,
            "Get Session Challenge",
            None,
            deadline,
            None,
            |h| h.request(bump(&mut seq)),
            |h, d| {
                Ok(h.on_response(d)?.map(|c| {
                    let n = c.transmission;
                    (c, Some(n))
                }))
            },
        )
        .await;
        let challenge = match challenge {
            Ok(c) => c,
            Err(e) => {
                self.rq_seq = seq;
                return Err(e);
            }
        };
        let mut hs = hs.into_activation(challenge);
        let seq2 = bump(&mut seq);
        self.rq_seq = seq;
        let r = exchange(
            t,
            st,
            pc,
            &mut hs,
            Stage::Authenticate,
            "Activate Session",
            None,
            deadline,
            Some(3),
            |h| h.request(seq2),
            |h, d| {
                Ok(h.on_response(d)?.map(|a| {
                    let n = a.transmission;
                    (a, (n > 0).then_some(n))
                }))
            },
        )
        .await;
        match r {
            Ok(a) => {
                if a.none_for_the_rest {
                    self.tolerate(
                        None,
                        "the BMC declares per-message authentication disabled (authentication \
                         type none for the rest of the session): every request is \
                         authenticated anyway and every reply's code is checked, as FreeIPMI's \
                         forcepermsg and unexpectedauth would"
                            .into(),
                    );
                }
                if a.bad_checksum {
                    self.tolerate(
                        Some(Workaround::NoChecksumCheck),
                        "the BMC's answer to Activate Session has a wrong IPMI checksum: \
                         accepted, as asked"
                            .into(),
                    );
                }
                Ok(hs.into_active(a))
            }
            Err(e) if e.kind == ErrorKind::Timeout && auth != AuthType::None => {
                // A BMC that drops an Activate Session whose auth code does
                // not verify looks like silence: say what it most likely means.
                Err(DriverError::new(
                    ErrorKind::PasswordInvalid,
                    Stage::Authenticate,
                    format!(
                        "the BMC did not answer Activate Session ({}): the password is most likely wrong",
                        e.message
                    ),
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// Sends one in-session request that does not act and returns the
    /// response. A busy answer (C0h node busy, C3h timeout while
    /// processing, CFh duplicated request) is asked again in the same
    /// session after a pause (200 ms, doubling up to 2 s) while the deadline
    /// leaves room for it: repeating a read is harmless.
    async fn request(
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
    async fn request_watching(
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
        let refused_before = active.rejected().map_or(0, |r| r.count);
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
                if let Some(refused) = self
                    .active
                    .as_ref()
                    .and_then(|a| a.rejected())
                    .filter(|r| r.count > refused_before)
                {
                    e.kind = ErrorKind::Protocol;
                    e.message = refused.describe(&self.cfg.host, what);
                }
                // The session may be gone (BMC reset, idle timeout): set up a
                // fresh one on the next call.
                self.active = None;
                self.detail = None;
            }
        }
        r
    }

    /// Set Session Privilege Level to the privilege asked for. Refused
    /// administrator (80h, 81h: many users are limited to operator), it
    /// asks for operator, which is all power control needs.
    async fn set_privilege(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        loop {
            let want = self.asking;
            let f = self
                .request(
                    netfn::APP,
                    cmd::SET_SESSION_PRIVILEGE,
                    &[want as u8],
                    Stage::Privilege,
                    "Set Session Privilege Level",
                    deadline,
                )
                .await?;
            return match f.completion_code() {
                Ok(cc::OK) => {
                    self.granted = f.data.get(1).and_then(|b| Privilege::from_u8(*b)).or(Some(want));
                    Ok(())
                }
                Ok(c @ (0x80 | 0x81))
                    if want == Privilege::Administrator
                        && deadline.is_none_or(|d| Instant::now() < d) =>
                {
                    self.asking = Privilege::Operator;
                    self.tolerate(
                        None,
                        format!(
                            "the BMC refused privilege administrator to this user (Set Session \
                             Privilege Level {c:#04x}): the session runs as operator, which is \
                             enough for power control"
                        ),
                    );
                    continue;
                }
                Ok(c @ (0x80 | 0x81)) => Err(DriverError::new(
                    ErrorKind::PrivilegeNotObtained,
                    Stage::Privilege,
                    format!(
                        "the BMC refused privilege level {want}: {} ({c:#04x}); try a lower --privlvl or a user with more rights",
                        if c == 0x80 {
                            "not available to this user"
                        } else {
                            "above the limit of this user or channel"
                        }
                    ),
                )),
                Ok(c) => Err(DriverError::new(
                    ErrorKind::PrivilegeNotObtained,
                    Stage::Privilege,
                    format!(
                        "Set Session Privilege Level failed: {} ({c:#04x})",
                        codec::completion_text(c)
                    ),
                )),
                Err(e) => Err(DriverError::new(ErrorKind::Protocol, Stage::Privilege, e.to_string())),
            };
        }
    }

    async fn open(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.transport(deadline).await?;
        // Every session says again what it tolerates.
        self.said = Workarounds::NONE;
        let active = match self.cfg.version {
            Version::Lan15(auth) => self.handshake_v15(auth, deadline).await?,
            Version::Lanplus => self.open_v20(deadline).await?,
        };
        // The named workarounds that drop a check apply to IPMI 1.5
        // sessions: each such session warns again, before its first request.
        if matches!(active, Active::V15(_)) {
            for w in self.cfg.workarounds.weakening() {
                self.tolerate(Some(w), w.entry().security_note().to_string());
            }
        }
        self.stats.sessions += 1;
        self.session_no += 1;
        let described = active.describe();
        self.active = Some(active);
        if let Err(e) = self.set_privilege(deadline).await {
            self.close_session().await;
            return Err(e);
        }
        let detail = if self.fell_back_to_v15 {
            format!(
                "{described} (the BMC speaks IPMI 1.5 only), privilege {}",
                self.privilege()
            )
        } else {
            format!("{described}, privilege {}", self.privilege())
        };
        self.detail = Some(detail.clone());
        Ok(detail)
    }

    async fn open_v20_inner(&mut self, deadline: Option<Instant>) -> Result<Active, DriverError> {
        match self.cfg.cipher {
            CipherChoice::Suite(id) => {
                let suite = Suite::from_id(id).ok_or_else(|| {
                    DriverError::new(
                        ErrorKind::Config,
                        Stage::Negotiate,
                        format!("cipher suite {id} is not supported (3 or 17)"),
                    )
                })?;
                // Quirk (ipmi_sim, and BMCs without suite 17): an Open Session
                // proposing unsupported algorithms is dropped, not refused.
                // After a short silence, ask what the BMC offers; if the
                // suite is not among them, say so now instead of at the deadline.
                let probe = Instant::now() + SUITE_PROBE_WAIT;
                let first = Some(deadline.map_or(probe, |d| d.min(probe)));
                match self.handshake_v20(suite, first, deadline).await {
                    Err(e)
                        if e.kind == ErrorKind::Timeout
                            && deadline.is_none_or(|d| Instant::now() < d) =>
                    {
                        match self.query_suites(deadline).await {
                            Some(Offered::Suites(offered)) if !offered.contains(&id) => {
                                return Err(DriverError::new(
                                    ErrorKind::CipherUnsupported,
                                    Stage::Negotiate,
                                    format!(
                                        "the BMC ignores Open Session for cipher suite {id} and offers \
                                         suites {offered:?}: choose one of them that fencekit speaks (3 or 17) \
                                         with --cipher, or leave --cipher out"
                                    ),
                                ));
                            }
                            Some(Offered::Suites(_) | Offered::Unreadable(_)) => {}
                            Some(Offered::Refused(_)) | None => {
                                if !self.cfg.workarounds.contains(Workaround::Authcap)
                                    && self.speaks_v20(deadline).await == Some(false)
                                {
                                    return Err(DriverError::new(
                                        ErrorKind::CipherUnsupported,
                                        Stage::Negotiate,
                                        format!(
                                            "the BMC ignores Open Session for cipher suite {id}, and Get \
                                             Channel Authentication Capabilities says it speaks IPMI 1.5 \
                                             only: use --ipmi-version 1.5, or leave --cipher out to fall \
                                             back to it automatically"
                                        ),
                                    ));
                                }
                            }
                        }
                        self.handshake_v20(suite, deadline, deadline).await
                    }
                    other => other,
                }
            }
            CipherChoice::Auto => {
                let offered = self.query_suites(deadline).await;
                let mut asked_caps = false;
                let listed = matches!(offered, Some(Offered::Suites(_)));
                let candidates: Vec<Suite> = match &offered {
                    Some(Offered::Suites(ids)) => {
                        let c: Vec<Suite> = [Suite::S17, Suite::S3]
                            .into_iter()
                            .filter(|s| ids.contains(&s.id()))
                            .collect();
                        if c.is_empty() {
                            return Err(DriverError::new(
                                ErrorKind::CipherUnsupported,
                                Stage::Negotiate,
                                format!(
                                    "the BMC offers cipher suites {ids:?}, none of which fencekit accepts (3 or 17: \
                                     suites without integrity and confidentiality are refused)"
                                ),
                            ));
                        }
                        c
                    }
                    Some(Offered::Unreadable(why)) => {
                        self.tolerate(
                            None,
                            format!(
                                "the BMC's answer to Get Channel Cipher Suites cannot be used ({why}): \
                                 suites 17, then 3, are tried"
                            ),
                        );
                        vec![Suite::S17, Suite::S3]
                    }
                    Some(Offered::Refused(c)) => {
                        // A BMC that does not know the command may be an
                        // IPMI 1.5 one: ask it before trying RMCP+.
                        asked_caps = true;
                        let why = format!(
                            "it answered Get Channel Cipher Suites with {} ({c:#04x})",
                            codec::completion_text(*c)
                        );
                        if let Some(a) = self.fall_back_to_v15(&why, deadline).await? {
                            return Ok(a);
                        }
                        vec![Suite::S17, Suite::S3]
                    }
                    None => vec![Suite::S17, Suite::S3],
                };
                let mut last = None;
                for (i, suite) in candidates.iter().enumerate() {
                    let more = i + 1 < candidates.len();
                    // Without the BMC's list, a BMC that silently drops an
                    // unsupported proposal must not eat the whole deadline.
                    let dl = if more && !listed {
                        let probe = Instant::now() + SUITE_PROBE_WAIT;
                        Some(deadline.map_or(probe, |d| d.min(probe)))
                    } else {
                        deadline
                    };
                    match self.handshake_v20(*suite, dl, deadline).await {
                        Ok(a) => return Ok(a),
                        // Quirks 2 and 3 (xcat#6002, ipmitool#350/#376): a
                        // suite refused or advertised-but-broken: try the next.
                        // Silence counts only at Open Session (a BMC dropping
                        // a proposal it cannot speak): once it answered, the
                        // suite is spoken, and a RAKP that times out is the
                        // network's doing, to be reported as such, not
                        // hidden behind a next suite tried with no time left.
                        Err(e)
                            if more
                                && deadline.is_none_or(|d| Instant::now() < d)
                                && (e.kind == ErrorKind::CipherUnsupported
                                    || (e.kind == ErrorKind::Timeout
                                        && e.stage == Stage::Negotiate
                                        && !listed)) =>
                        {
                            // No answer to RMCP+ at all: an IPMI 1.5 BMC?
                            if e.kind == ErrorKind::Timeout && !asked_caps {
                                asked_caps = true;
                                let why = format!(
                                    "Open Session for cipher suite {} went unanswered",
                                    suite.id()
                                );
                                if let Some(a) = self.fall_back_to_v15(&why, deadline).await? {
                                    return Ok(a);
                                }
                            }
                            tracing::debug!(suite = suite.id(), error = %e, "trying the next cipher suite");
                            last = Some(e);
                        }
                        Err(e) => return Err(e),
                    }
                }
                Err(last.unwrap_or_else(|| {
                    DriverError::new(
                        ErrorKind::CipherUnsupported,
                        Stage::Negotiate,
                        "no cipher suite worked",
                    )
                }))
            }
        }
    }

    /// The automatic fall-back to IPMI 1.5 (cipher choice `auto` only): when
    /// RMCP+ got no answer (`why`) and Get Channel Authentication
    /// Capabilities says the BMC speaks IPMI 1.5 only, an IPMI 1.5 session
    /// with MD5 — the strongest 1.5 authentication, and the only one taken
    /// unasked (straight password would send the password in clear, none
    /// authenticates nothing). `Ok(None)`: the BMC does not say so (or
    /// authcap was asked for: its capabilities are not believed).
    async fn fall_back_to_v15(
        &mut self,
        why: &str,
        deadline: Option<Instant>,
    ) -> Result<Option<Active>, DriverError> {
        if self.cfg.workarounds.contains(Workaround::Authcap)
            || self.speaks_v20(deadline).await != Some(false)
        {
            return Ok(None);
        }
        let only = format!(
            "the BMC speaks IPMI 1.5 only ({why}, and Get Channel Authentication Capabilities \
             reports no IPMI 2.0)"
        );
        if self.cfg.password.len() > super::config::MAX_PASSWORD_V15 {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Negotiate,
                format!(
                    "{only}, and IPMI 1.5 carries passwords of at most {} bytes: this one has {}",
                    super::config::MAX_PASSWORD_V15,
                    self.cfg.password.len()
                ),
            ));
        }
        self.tolerate(
            None,
            format!(
                "{only}: an IPMI 1.5 session with MD5 authentication is used (every message \
                 authenticated, none encrypted)"
            ),
        );
        match self.handshake_v15(Some(AuthType::Md5), deadline).await {
            Ok(a) => {
                self.fell_back_to_v15 = true;
                Ok(Some(a))
            }
            Err(e) if e.kind == ErrorKind::CipherUnsupported => Err(DriverError::new(
                ErrorKind::CipherUnsupported,
                Stage::Negotiate,
                format!(
                    "{only}, and does not offer MD5 authentication ({}): fencekit takes no weaker \
                     type by itself; --ipmi-version 1.5 --auth password sends the password in \
                     clear",
                    e.message
                ),
            )),
            Err(e) => Err(e),
        }
    }

    /// Wraps [`Self::open_v20_inner`] so that a BMC that answered nothing at
    /// all gets one message naming everything that was tried.
    async fn open_v20(&mut self, deadline: Option<Instant>) -> Result<Active, DriverError> {
        let started = Instant::now();
        let auto = self.cfg.cipher == CipherChoice::Auto;
        let before = self.stats();
        let r = self.open_v20_inner(deadline).await;
        match r {
            Err(mut e)
                if auto
                    && e.kind == ErrorKind::Timeout
                    && self.stats().received == before.received =>
            {
                // ICMP port unreachable is all the network said: nothing
                // listens at that port (or a firewall rejects).
                let what = if self.stats().refused > before.refused {
                    "the port is unreachable (ICMP port unreachable) at"
                } else {
                    "no answer from"
                };
                e.message = format!(
                    "{what} {}:{} for {:.1}s (Get Channel Cipher Suites, then Open Session \
                     for suites 17 and 3): check the address and port, and that IPMI over LAN is \
                     enabled on the BMC",
                    self.cfg.host,
                    self.cfg.port,
                    started.elapsed().as_secs_f64()
                );
                Err(e)
            }
            other => other,
        }
    }

    async fn ensure_open(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if self.active.is_none() {
            self.open(deadline).await?;
        }
        Ok(())
    }

    async fn close_session(&mut self) {
        self.collect_session_tolerances();
        let Some(mut active) = self.active.take() else {
            return;
        };
        let sid = active.managed_sid();
        let seq = self.next_seq();
        let frame = Frame::request(netfn::APP, cmd::CLOSE_SESSION, seq, &sid.to_le_bytes());
        if let Some(t) = self.transport.as_mut() {
            let until = Instant::now() + CLOSE_WAIT;
            // One transmission per round trip (a slow BMC gets one), at
            // most CLOSE_WAIT in all: nobody waits for the answer.
            let first = self.pacing.rto().min(CLOSE_WAIT);
            let _ = exchange(
                t,
                &mut self.stats,
                &mut self.pacing,
                &mut active,
                Stage::Close,
                "Close Session",
                Some(first),
                Some(until),
                None,
                |a| a.wrap(&frame),
                |a, d| match a.unwrap(d) {
                    Unwrapped::Frame(f) if f.answers(netfn::APP, cmd::CLOSE_SESSION, seq) => {
                        Ok(Some(((), None)))
                    }
                    _ => Ok(None),
                },
            )
            .await;
        }
        self.detail = None;
    }

    fn classify(&self, c: u8, stage: Stage, what: &str) -> DriverError {
        let text = codec::completion_text(c);
        let kind = match c {
            cc::NOT_IN_PRESENT_STATE => ErrorKind::NotInPresentState,
            // Quirk 10 (openbmc#1810, #1812, #3253): busy, timeout and
            // "unspecified" answers during transitions or BMC boot are transient.
            cc::NODE_BUSY | cc::TIMEOUT | cc::UNSPECIFIED | 0xd2 => ErrorKind::Busy,
            // Not carried out (a re-sent command's CFh is handled before).
            cc::DUPLICATE_REQUEST => ErrorKind::Busy,
            cc::INSUFFICIENT_PRIVILEGE if self.granted == Some(Privilege::Administrator) => {
                // Quirk 10 (openbmc#1812): spurious "insufficient privilege"
                // on an administrator session during a transition.
                ErrorKind::Busy
            }
            cc::INSUFFICIENT_PRIVILEGE => ErrorKind::PrivilegeNotObtained,
            _ => ErrorKind::DeviceError,
        };
        DriverError::new(
            kind,
            stage,
            format!("the BMC answered {what} with {text} ({c:#04x})"),
        )
    }
}

/// Seconds since 1970, for guessing a time-based GUID's encoding.
fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Completion codes that mean "this BMC does not have it" (the command, the
/// group extension, the sub-function): no evidence, not a failure.
fn unsupported(c: u8) -> bool {
    matches!(
        c,
        cc::INVALID_COMMAND | 0xc2 | 0xcb | cc::INVALID_DATA | cc::NOT_IN_PRESENT_STATE | 0xd6
    ) || (0x80..=0x8f).contains(&c)
}

impl IpmiDriver {
    /// Reads the power state from a Get Chassis Status answer.
    fn chassis_state(&mut self, f: &Frame) -> Result<PowerState, DriverError> {
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
    async fn reread(
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
    fn control_answer(&self, f: &Frame, what: &str, resent: bool) -> Result<(), DriverError> {
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
    async fn control(
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
    fn outcome_unknown(&self, what: &str, sends: u32, started: Instant, and: &str) -> DriverError {
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

impl PowerDriver for IpmiDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        if let (Some(_), Some(d)) = (&self.active, &self.detail) {
            return Ok(d.clone());
        }
        let before = self.stats().received;
        let r = self.open(deadline).await;
        self.set_up_answered = r.is_err() && self.stats().received > before;
        r
    }

    fn set_up_answered(&self) -> bool {
        self.set_up_answered
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        self.ensure_open(deadline).await?;
        let f = self
            .request(
                netfn::CHASSIS,
                cmd::GET_CHASSIS_STATUS,
                &[],
                Stage::Status,
                "Get Chassis Status",
                deadline,
            )
            .await?;
        self.chassis_state(&f)
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.control(command, deadline).await
    }

    /// Get System GUID (App 37h) in the current session, read under every
    /// encoding BMCs use ([`codec::GuidEncoding`]), the one ipmitool would
    /// guess first. A BMC that does not implement the command reports no
    /// UUID (a caller expecting one refuses). The serial number is not read
    /// (it would take FRU inventory reads; see docs/design.md).
    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        self.ensure_open(deadline).await?;
        let f = self
            .request(
                netfn::APP,
                cmd::GET_SYSTEM_GUID,
                &[],
                Stage::Status,
                "Get System GUID",
                deadline,
            )
            .await?;
        match f.completion_code() {
            Ok(cc::OK) => {}
            Ok(c) if unsupported(c) => {
                tracing::debug!(
                    "Get System GUID answered {c:#04x}: the BMC reports no system GUID"
                );
                return Ok(Identity::default());
            }
            Ok(c) => return Err(self.classify(c, Stage::Status, "Get System GUID")),
            Err(_) => {
                return Err(DriverError::new(
                    ErrorKind::Protocol,
                    Stage::Status,
                    "empty Get System GUID response",
                ))
            }
        }
        let guid = SystemGuid::decode(&f.data[1..]).map_err(|e| {
            DriverError::new(
                ErrorKind::Protocol,
                Stage::Status,
                format!("unreadable Get System GUID response: {e}"),
            )
        })?;
        if guid.raw.iter().all(|b| *b == 0) || guid.raw.iter().all(|b| *b == 0xff) {
            // SMBIOS 3.0 §7.2.1: all zeros or all ones mean "not present / not set".
            return Ok(Identity::default());
        }
        Ok(Identity {
            names: Vec::new(),
            uuid: guid
                .readings(now_unix())
                .into_iter()
                .map(|(enc, uuid)| UuidForm {
                    uuid,
                    encoding: enc.as_str(),
                })
                .collect(),
            serial: None,
        })
    }

    /// DCMI Get Power Reading in the current session: the current draw when
    /// the BMC measures it; `None` when it answers that it cannot (no DCMI,
    /// measurement not active): no evidence, not a failure.
    async fn power_reading(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<PowerReading>, DriverError> {
        self.ensure_open(deadline).await?;
        let f = self
            .request(
                netfn::GROUP_EXT,
                cmd::DCMI_GET_POWER_READING,
                &codec::dcmi_power_reading_request(),
                Stage::Status,
                "DCMI Get Power Reading",
                deadline,
            )
            .await?;
        match f.completion_code() {
            Ok(cc::OK) => {}
            Ok(c) if unsupported(c) || c == cc::INSUFFICIENT_PRIVILEGE => {
                tracing::debug!("DCMI Get Power Reading answered {c:#04x}: no power reading");
                return Ok(None);
            }
            Ok(c) => return Err(self.classify(c, Stage::Status, "DCMI Get Power Reading")),
            Err(_) => return Ok(None),
        }
        match DcmiPowerReading::decode(&f.data[1..]) {
            Ok(r) if r.active() => Ok(Some(PowerReading {
                watts: f64::from(r.current),
                source: "dcmi".into(),
            })),
            Ok(_) => {
                tracing::debug!("DCMI power measurement is not active: no power reading");
                Ok(None)
            }
            Err(e) => {
                // Not DCMI after all (another group's answer, a short one).
                tracing::debug!("DCMI Get Power Reading answer unreadable ({e}): no power reading");
                Ok(None)
            }
        }
    }

    fn take_tolerances(&mut self) -> Vec<Tolerance> {
        self.collect_session_tolerances();
        std::mem::take(&mut self.tolerances)
    }

    async fn close(&mut self) {
        self.close_session().await;
        if let Some(t) = self.transport.take() {
            self.stats.sent += t.sent;
            self.stats.received += t.received;
            self.stats.refused += t.refused;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_authentication_never_picks_none() {
        // mask bits: 0 none, 2 MD5, 4 straight password
        assert_eq!(choose_auth(None, 0x15, false).unwrap(), AuthType::Md5);
        assert_eq!(choose_auth(None, 0x11, false).unwrap(), AuthType::Password);
        let e = choose_auth(None, 0x01, false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::CipherUnsupported);
        assert!(e.message.contains("--auth none"), "{e}");
        assert!(e.message.contains("--workaround authcap"), "{e}");
        // only when asked
        assert_eq!(
            choose_auth(Some(AuthType::None), 0x15, false).unwrap(),
            AuthType::None
        );
        assert!(choose_auth(Some(AuthType::Md5), 0x01, false).is_err());
        assert!(choose_auth(None, 0x00, false)
            .unwrap_err()
            .message
            .contains("no usable"));
        // authcap: the mask is not believed, and still never none unasked
        assert_eq!(choose_auth(None, 0x01, true).unwrap(), AuthType::Md5);
        assert_eq!(
            choose_auth(Some(AuthType::Password), 0x01, true).unwrap(),
            AuthType::Password
        );
    }

    // The driver asks the shared at-most-once rule (engine::once) with
    // `Silence::MaybeLost`: a datagram may never have reached the BMC. It
    // used to have a rule of its own (`took_effect`), which re-sent a cycle
    // that already finished (the node back on), and every reset and NMI.
    #[test]
    fn only_a_visible_effect_ends_an_unanswered_command() {
        use once::AfterSilence::*;
        use PowerCommand::*;
        use PowerState::{Off as IsOff, On as IsOn};
        let rule = |c, before, now| once::after_silence(c, before, Some(now), Silence::MaybeLost);
        assert_eq!(rule(Off, Some(IsOn), IsOff), TookEffect);
        assert_eq!(rule(Off, Some(IsOn), IsOn), SendAgain);
        assert_eq!(rule(On, Some(IsOff), IsOn), TookEffect);
        assert_eq!(rule(On, None, IsOff), SendAgain);
        // a cycle shows as off only when it was on before
        assert_eq!(rule(Cycle, Some(IsOn), IsOff), TookEffect);
        assert_eq!(rule(Cycle, Some(IsOff), IsOff), Unknown);
        assert_eq!(rule(Cycle, None, IsOff), Unknown);
        // a finished cycle looks like one never carried out: never again
        assert_eq!(rule(Cycle, Some(IsOn), IsOn), Unknown);
        // a reset or an NMI is never seen, and never sent twice
        for s in [IsOn, IsOff] {
            assert_eq!(rule(Reset, Some(IsOn), s), Unknown);
            assert_eq!(rule(Diag, Some(IsOn), s), Unknown);
        }
    }

    #[test]
    fn unsupported_answers_are_no_evidence() {
        for c in [0xc1, 0xc2, 0xcb, 0xcc, 0xd5, 0xd6, 0x80, 0x8f] {
            assert!(unsupported(c), "{c:#04x}");
        }
        for c in [0x00, 0xc0, 0xc3, 0xd4, 0xff] {
            assert!(!unsupported(c), "{c:#04x}");
        }
    }
}
