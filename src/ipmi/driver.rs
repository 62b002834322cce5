//! The engine's [`PowerDriver`] for IPMI: session set-up with cipher
//! negotiation, retransmission with back-off inside deadlines, chassis
//! status and control, and session clean-up.
//!
//! Vendor quirks handled here are named where they are handled (see
//! `../shared/reference/quirks.md` for the evidence behind each).

use super::codec::{self, cc, chassis_control, cmd, netfn, ChassisStatus, Frame};
use super::config::{AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use super::crypto::Suite;
use super::session::{self, Active, Handshake, Handshake15, Unwrapped};
use super::transport::{Received, Transport};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::{PowerCommand, PowerState};
use std::time::{Duration, Instant};

/// Longest wait between retransmissions. 1 s (ipmitool's lanplus
/// interval), not more: under 30 % loss in both directions a session set-up
/// needs several exchanges inside one `--login-timeout`, and longer gaps made
/// about one action in ten miss it (tests/reliability.rs).
const MAX_RETRANSMIT: Duration = Duration::from_secs(1);
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
    /// Retransmissions among the sent ones.
    pub retransmits: u32,
    /// Sessions opened.
    pub sessions: u32,
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
}

/// One request/response exchange with retransmission: `make` builds each
/// (re)transmission, `accept` picks the answer out of whatever arrives.
#[allow(clippy::too_many_arguments)]
async fn exchange<S, R>(
    t: &mut Transport,
    stats: &mut Stats,
    state: &mut S,
    stage: Stage,
    what: &str,
    first_wait: Duration,
    deadline: Option<Instant>,
    max_tries: Option<u32>,
    mut make: impl FnMut(&mut S) -> Vec<u8>,
    mut accept: impl FnMut(&mut S, &[u8]) -> Result<Option<R>, DriverError>,
) -> Result<R, DriverError> {
    let started = Instant::now();
    let mut wait = first_wait;
    let mut refused = false;
    let mut tries = 0u32;
    loop {
        let d = make(state);
        t.send(&d).await;
        tries += 1;
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
                    if let Some(r) = accept(state, &d)? {
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
        wait = (wait.mul_f32(1.5)).min(MAX_RETRANSMIT);
    }
}

impl IpmiDriver {
    /// A driver for one BMC; checks what IPMI cannot carry.
    pub fn new(cfg: IpmiConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(IpmiDriver {
            cfg,
            transport: None,
            active: None,
            granted: None,
            rq_seq: 0,
            detail: None,
            stats: Stats::default(),
        })
    }

    /// Datagram counters so far (including the open transport's).
    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        if let Some(t) = &self.transport {
            s.sent += t.sent;
            s.received += t.received;
        }
        s
    }

    fn next_seq(&mut self) -> u8 {
        self.rq_seq = (self.rq_seq + 1) & 0x3f;
        if self.rq_seq == 0 {
            self.rq_seq = 1;
        }
        self.rq_seq
    }

    async fn transport(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<&mut Transport, DriverError> {
        if self.transport.is_none() {
            self.transport =
                Some(Transport::connect(&self.cfg.host, self.cfg.port, deadline).await?);
        }
        Ok(self.transport.as_mut().expect("just set"))
    }

    /// Get Channel Cipher Suites (sessionless), bounded by a short timeout.
    /// Quirk (ipmitool#199; ipmi_sim): some BMCs never answer this; `None` then.
    async fn query_suites(&mut self, deadline: Option<Instant>) -> Option<Vec<u8>> {
        let mut until = Instant::now() + self.cfg.cipher_query_timeout;
        if let Some(d) = deadline {
            until = until.min(d);
        }
        let first_wait = self.cfg.cipher_query_timeout / 2;
        let mut records = Vec::new();
        for index in 0u8..8 {
            let seq = self.next_seq();
            let t = self.transport.as_mut()?;
            let r = exchange(
                t,
                &mut self.stats,
                &mut (),
                Stage::Negotiate,
                "Get Channel Cipher Suites",
                first_wait,
                Some(until),
                None,
                |_| {
                    session::sessionless_request(
                        netfn::APP,
                        cmd::GET_CHANNEL_CIPHER_SUITES,
                        seq,
                        &[0x0e, 0x00, 0x80 | index],
                    )
                },
                |_, d| {
                    Ok(session::sessionless_response(
                        d,
                        netfn::APP,
                        cmd::GET_CHANNEL_CIPHER_SUITES,
                        seq,
                    ))
                },
            )
            .await
            .ok()?;
            if r.completion_code().ok()? != cc::OK || r.data.len() < 2 {
                return None;
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
        let ids = codec::parse_cipher_suite_records(&records)
            .into_iter()
            .filter(|r| Suite::from_algorithms(r.auth, r.integrity, r.conf).is_some())
            .map(|r| r.id)
            .collect::<Vec<_>>();
        let all = codec::parse_cipher_suite_records(&records)
            .into_iter()
            .map(|r| r.id)
            .collect::<Vec<_>>();
        tracing::debug!(offered = ?all, usable = ?ids, "Get Channel Cipher Suites answered");
        Some(all)
    }

    /// RMCP+ set-up for one suite. `open_deadline` bounds only the Open
    /// Session exchange (a short probe when the suite may be unsupported);
    /// once the BMC has answered it, the rest runs to `deadline`, so a lossy
    /// network never leaves a half-authenticated session behind.
    async fn handshake_v20(
        &mut self,
        suite: Suite,
        open_deadline: Option<Instant>,
        deadline: Option<Instant>,
    ) -> Result<Active, DriverError> {
        let mut hs = Handshake::new(
            suite,
            self.cfg.privilege,
            &self.cfg.username,
            self.cfg.password.clone(),
            self.cfg.kg.clone(),
        );
        let wait = self.cfg.retransmit;
        let t = self.transport.as_mut().expect("transport is open");
        let st = &mut self.stats;
        exchange(
            t,
            st,
            &mut hs,
            Stage::Negotiate,
            &format!("Open Session (cipher suite {})", suite.id()),
            wait,
            open_deadline,
            None,
            |h| h.open_session_request(),
            |h, d| h.on_open_session_response(d),
        )
        .await?;
        let r2 = exchange(
            t,
            st,
            &mut hs,
            Stage::Authenticate,
            "RAKP 1",
            wait,
            deadline,
            None,
            |h| h.rakp1(),
            |h, d| h.on_rakp2(d),
        )
        .await;
        if let Err(e) = r2 {
            if e.kind == ErrorKind::PasswordInvalid {
                // Tell the BMC to drop the half-open session (RAKP 3 with
                // status 0Fh) so a wrong password costs it no session slot.
                t.send(&hs.rakp3(0x0f)).await;
            }
            return Err(e);
        }
        exchange(
            t,
            st,
            &mut hs,
            Stage::Authenticate,
            "RAKP 3",
            wait,
            deadline,
            None,
            |h| h.rakp3(0),
            |h, d| h.on_rakp4(d),
        )
        .await
    }

    /// Get Channel Authentication Capabilities: (auth types offered, status
    /// flags byte; bit 4 set = per-message authentication disabled).
    async fn auth_caps(&mut self, deadline: Option<Instant>) -> Result<(u8, u8), DriverError> {
        let seq = self.next_seq();
        let privilege = self.cfg.privilege as u8;
        let wait = self.cfg.retransmit;
        let t = self.transport.as_mut().expect("transport is open");
        let f = exchange(
            t,
            &mut self.stats,
            &mut (),
            Stage::Negotiate,
            "Get Channel Authentication Capabilities",
            wait,
            deadline,
            None,
            |_| {
                session::sessionless_request(
                    netfn::APP,
                    cmd::GET_CHANNEL_AUTH_CAPS,
                    seq,
                    &[0x0e, privilege],
                )
            },
            |_, d| {
                Ok(session::sessionless_response(
                    d,
                    netfn::APP,
                    cmd::GET_CHANNEL_AUTH_CAPS,
                    seq,
                ))
            },
        )
        .await?;
        match f.completion_code() {
            Ok(cc::OK) if f.data.len() >= 4 => Ok((f.data[2], f.data[3])),
            Ok(cc::OK) if f.data.len() >= 3 => Ok((f.data[2], 0)),
            Ok(c) => Err(DriverError::new(
                ErrorKind::DeviceError,
                Stage::Negotiate,
                format!(
                    "Get Channel Authentication Capabilities failed: {} ({c:#04x})",
                    codec::completion_text(c)
                ),
            )),
            Err(_) => Err(DriverError::new(
                ErrorKind::Protocol,
                Stage::Negotiate,
                "empty Get Channel Authentication Capabilities response",
            )),
        }
    }

    async fn handshake_v15(
        &mut self,
        auth: Option<AuthType>,
        deadline: Option<Instant>,
    ) -> Result<Active, DriverError> {
        let (offered, flags) = self.auth_caps(deadline).await?;
        let per_message_auth_disabled = flags & 0x10 != 0;
        let supports = |a: AuthType| offered & (1 << (a as u8)) != 0;
        let auth = match auth {
            Some(a) if supports(a) => a,
            Some(a) => {
                return Err(DriverError::new(
                    ErrorKind::CipherUnsupported,
                    Stage::Negotiate,
                    format!(
                        "the BMC does not offer IPMI 1.5 authentication type {} (offered mask {offered:#04x})",
                        a.as_str()
                    ),
                ))
            }
            None => [AuthType::Md5, AuthType::Password, AuthType::None]
                .into_iter()
                .find(|a| supports(*a))
                .ok_or_else(|| {
                    DriverError::new(
                        ErrorKind::CipherUnsupported,
                        Stage::Negotiate,
                        format!("the BMC offers no usable IPMI 1.5 authentication type (mask {offered:#04x})"),
                    )
                })?,
        };
        let mut hs = Handshake15::new(
            auth,
            self.cfg.privilege,
            &self.cfg.username,
            self.cfg.password.clone(),
        );
        hs.accept_unauthenticated_replies(per_message_auth_disabled);
        let seq = self.next_seq();
        let wait = self.cfg.retransmit;
        let t = self.transport.as_mut().expect("transport is open");
        let st = &mut self.stats;
        exchange(
            t,
            st,
            &mut hs,
            Stage::Authenticate,
            "Get Session Challenge",
            wait,
            deadline,
            None,
            |h| h.challenge_request(seq),
            |h, d| h.on_challenge(d, seq),
        )
        .await?;
        let seq2 = (seq + 1) & 0x3f;
        self.rq_seq = seq2;
        let r = exchange(
            t,
            st,
            &mut hs,
            Stage::Authenticate,
            "Activate Session",
            wait,
            deadline,
            Some(3),
            |h| h.activate_request(seq2),
            |h, d| h.on_activate(d, seq2),
        )
        .await;
        match r {
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
            other => other,
        }
    }

    /// Sends one in-session request and returns the response frame.
    async fn request(
        &mut self,
        net_fn: u8,
        command: u8,
        data: &[u8],
        stage: Stage,
        what: &str,
        deadline: Option<Instant>,
    ) -> Result<Frame, DriverError> {
        let seq = self.next_seq();
        let frame = Frame::request(net_fn, command, seq, data);
        let wait = self.cfg.retransmit;
        let (Some(t), Some(active)) = (self.transport.as_mut(), self.active.as_mut()) else {
            return Err(DriverError::new(
                ErrorKind::Protocol,
                stage,
                "no session is open",
            ));
        };
        let r = exchange(
            t,
            &mut self.stats,
            active,
            stage,
            what,
            wait,
            deadline,
            None,
            |a| a.wrap(&frame),
            |a, d| match a.unwrap(d) {
                Unwrapped::Frame(f) if f.answers(net_fn, command, seq) => Ok(Some(f)),
                Unwrapped::Frame(_) => Ok(None),
                Unwrapped::Ignored(why) => {
                    tracing::debug!(why, "ignored a datagram");
                    Ok(None)
                }
            },
        )
        .await;
        if let Err(e) = &r {
            if e.kind == ErrorKind::Timeout {
                // The session may be gone (BMC reset, idle timeout): set up a
                // fresh one on the next call.
                self.active = None;
                self.detail = None;
            }
        }
        r
    }

    async fn set_privilege(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        let want = self.cfg.privilege;
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
        match f.completion_code() {
            Ok(cc::OK) => {
                self.granted = f.data.get(1).and_then(|b| Privilege::from_u8(*b)).or(Some(want));
                Ok(())
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
        }
    }

    async fn open(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.transport(deadline).await?;
        let active = match self.cfg.version {
            Version::Lan15(auth) => self.handshake_v15(auth, deadline).await?,
            Version::Lanplus => self.open_v20(deadline).await?,
        };
        self.stats.sessions += 1;
        let described = active.describe();
        self.active = Some(active);
        if let Err(e) = self.set_privilege(deadline).await {
            self.close_session().await;
            return Err(e);
        }
        let granted = self.granted.unwrap_or(self.cfg.privilege);
        let detail = format!("{described}, privilege {granted}");
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
                        if let Some(offered) = self.query_suites(deadline).await {
                            if !offered.contains(&id) {
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
                        }
                        self.handshake_v20(suite, deadline, deadline).await
                    }
                    other => other,
                }
            }
            CipherChoice::Auto => {
                let offered = self.query_suites(deadline).await;
                let candidates: Vec<Suite> = match &offered {
                    Some(ids) => {
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
                    None => vec![Suite::S17, Suite::S3],
                };
                let mut last = None;
                for (i, suite) in candidates.iter().enumerate() {
                    let more = i + 1 < candidates.len();
                    // Without the BMC's list, a BMC that silently drops an
                    // unsupported proposal must not eat the whole deadline.
                    let dl = if more && offered.is_none() {
                        let probe = Instant::now() + SUITE_PROBE_WAIT;
                        Some(deadline.map_or(probe, |d| d.min(probe)))
                    } else {
                        deadline
                    };
                    match self.handshake_v20(*suite, dl, deadline).await {
                        Ok(a) => return Ok(a),
                        // Quirks 2 and 3 (xcat#6002, ipmitool#350/#376): a
                        // suite refused or advertised-but-broken: try the next.
                        Err(e)
                            if more
                                && (e.kind == ErrorKind::CipherUnsupported
                                    || (e.kind == ErrorKind::Timeout && offered.is_none())) =>
                        {
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

    /// Wraps [`Self::open_v20_inner`] so that a BMC that answered nothing at
    /// all gets one message naming everything that was tried.
    async fn open_v20(&mut self, deadline: Option<Instant>) -> Result<Active, DriverError> {
        let started = Instant::now();
        let auto = self.cfg.cipher == CipherChoice::Auto;
        let before = self.stats().received;
        let r = self.open_v20_inner(deadline).await;
        match r {
            Err(mut e)
                if auto && e.kind == ErrorKind::Timeout && self.stats().received == before =>
            {
                e.message = format!(
                    "no answer from {}:{} in {:.1}s (Get Channel Cipher Suites, then Open Session \
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
        let Some(mut active) = self.active.take() else {
            return;
        };
        let sid = active.managed_sid();
        let seq = self.next_seq();
        let frame = Frame::request(netfn::APP, cmd::CLOSE_SESSION, seq, &sid.to_le_bytes());
        if let Some(t) = self.transport.as_mut() {
            let until = Instant::now() + CLOSE_WAIT;
            let _ = exchange(
                t,
                &mut self.stats,
                &mut active,
                Stage::Close,
                "Close Session",
                CLOSE_WAIT / 2,
                Some(until),
                None,
                |a| a.wrap(&frame),
                |a, d| match a.unwrap(d) {
                    Unwrapped::Frame(f) if f.answers(netfn::APP, cmd::CLOSE_SESSION, seq) => {
                        Ok(Some(()))
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

impl PowerDriver for IpmiDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        if let (Some(_), Some(d)) = (&self.active, &self.detail) {
            return Ok(d.clone());
        }
        self.open(deadline).await
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
        Ok(if status.is_on() {
            PowerState::On
        } else {
            PowerState::Off
        })
    }

    async fn command(
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
        let f = self
            .request(
                netfn::CHASSIS,
                cmd::CHASSIS_CONTROL,
                &[byte],
                Stage::Command,
                &what,
                deadline,
            )
            .await?;
        match f.completion_code() {
            Ok(cc::OK) => Ok(()),
            Ok(c) => Err(self.classify(c, Stage::Command, &what)),
            Err(_) => Err(DriverError::new(
                ErrorKind::Protocol,
                Stage::Command,
                "empty Chassis Control response",
            )),
        }
    }

    async fn close(&mut self) {
        self.close_session().await;
        if let Some(t) = self.transport.take() {
            self.stats.sent += t.sent;
            self.stats.received += t.received;
        }
    }
}
