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
//! The code: this file holds the driver's state and the engine's
//! interface; `exchange` moves datagrams, `negotiate` sets up 2.0 sessions,
//! `lan15` sets up 1.5 sessions, `control` reads and changes the power.
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

mod control;
mod exchange;
mod lan15;
mod negotiate;

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
            )
            .with_port_unreachable(refused));
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
                Workaround::EndianSeq if !self.cfg.workarounds.contains(w) => {
                    "the BMC's session sequence numbers come byte-swapped (Sun ILOM): read in \
                     its byte order, every number replay-checked as before (endianseq)"
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
