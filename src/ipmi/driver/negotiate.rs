//! Session set-up and negotiation for IPMI 2.0: Get Channel Cipher Suites,
//! the version probe, Get Channel Authentication Capabilities, Open
//! Session and RAKP 1-4, the privilege level, and closing the session.

use super::*;

impl IpmiDriver {
    /// Get Channel Cipher Suites (sessionless), bounded by a short timeout.
    /// Quirk (ipmitool#199; ipmi_sim): some BMCs never answer this; `None` then.
    pub(super) async fn query_suites(&mut self, deadline: Option<Instant>) -> Option<Offered> {
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
    pub(super) async fn speaks_v20(&mut self, deadline: Option<Instant>) -> Option<bool> {
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
    pub(super) async fn handshake_v20(
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
    pub(super) async fn handshake_v20_once(
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
    pub(super) async fn auth_caps(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<(u8, u8), DriverError> {
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

    /// Set Session Privilege Level to the privilege asked for. Refused
    /// administrator (80h, 81h: many users are limited to operator), it
    /// asks for operator, which is all power control needs.
    pub(super) async fn set_privilege(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
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

    pub(super) async fn open(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
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

    pub(super) async fn open_v20_inner(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Active, DriverError> {
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
                // These probes stay with `--cipher` (they are sent only after
                // that silence): they turn a BMC that drops the proposal, or
                // speaks 1.5 only, into a prompt named error (docs/ipmi.md).
                let started = Instant::now();
                let at_start = self.stats();
                let probe = Instant::now() + SUITE_PROBE_WAIT;
                let first = Some(deadline.map_or(probe, |d| d.min(probe)));
                let mut probes = 0;
                let r = match self.handshake_v20(suite, first, deadline).await {
                    Err(e)
                        if e.kind == ErrorKind::Timeout
                            && deadline.is_none_or(|d| Instant::now() < d) =>
                    {
                        let before = self.stats().sent;
                        let checked = self.suite_spoken(id, deadline).await;
                        probes = self.stats().sent - before;
                        match checked {
                            Err(e) => Err(e),
                            Ok(()) => self.handshake_v20(suite, deadline, deadline).await,
                        }
                    }
                    other => other,
                };
                match r {
                    // Nothing at all answered: the cause counts every
                    // datagram of the call (Open Session and the probes).
                    Err(mut e)
                        if e.kind == ErrorKind::Timeout
                            && self.stats().received == at_start.received =>
                    {
                        let now = self.stats();
                        let total = now.sent - at_start.sent;
                        e.port_unreachable = now.refused > at_start.refused;
                        let what = if e.port_unreachable {
                            "the port is unreachable (ICMP port unreachable) at"
                        } else {
                            "no answer from"
                        };
                        let opens = total - probes;
                        let probes = match probes {
                            0 => String::new(),
                            n => format!(
                                " and {n} discovery request{} after the first silence (Get Channel \
                                 Cipher Suites, Get Channel Authentication Capabilities)",
                                if n == 1 { "" } else { "s" }
                            ),
                        };
                        e.message = format!(
                            "{what} {}:{} to Open Session (cipher suite {id}) after {opens} attempt{}{probes}: \
                             {total} datagrams in {:.1}s",
                            self.cfg.host,
                            self.cfg.port,
                            if opens == 1 { "" } else { "s" },
                            started.elapsed().as_secs_f64()
                        );
                        Err(e)
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

    /// After Open Session for suite `id` went unanswered a moment: asks
    /// what the BMC offers (and, without an answer, whether it speaks 2.0
    /// at all), so that a BMC that drops the proposal or speaks 1.5 only
    /// is named at once. `Ok`: keep trying the suite.
    pub(super) async fn suite_spoken(
        &mut self,
        id: u8,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        match self.query_suites(deadline).await {
            Some(Offered::Suites(offered)) if !offered.contains(&id) => Err(DriverError::new(
                ErrorKind::CipherUnsupported,
                Stage::Negotiate,
                format!(
                    "the BMC ignores Open Session for cipher suite {id} and offers \
                     suites {offered:?}: choose one of them that fencekit speaks (3 or 17) \
                     with --cipher, or leave --cipher out"
                ),
            )),
            Some(Offered::Suites(_) | Offered::Unreadable(_)) => Ok(()),
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
                Ok(())
            }
        }
    }

    /// Wraps [`Self::open_v20_inner`] so that a BMC that answered nothing at
    /// all gets one message naming everything that was tried.
    pub(super) async fn open_v20(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Active, DriverError> {
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
                e.port_unreachable = self.stats().refused > before.refused;
                let what = if e.port_unreachable {
                    "the port is unreachable (ICMP port unreachable) at"
                } else {
                    "no answer from"
                };
                e.message = format!(
                    "{what} {}:{} for {:.1}s ({} datagrams: Get Channel Cipher Suites, then Open \
                     Session for suites 17 and 3): check the address and port, and that IPMI over \
                     LAN is enabled on the BMC",
                    self.cfg.host,
                    self.cfg.port,
                    started.elapsed().as_secs_f64(),
                    self.stats().sent - before.sent
                );
                Err(e)
            }
            other => other,
        }
    }

    pub(super) async fn ensure_open(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        if self.active.is_none() {
            self.open(deadline).await?;
        }
        Ok(())
    }

    pub(super) async fn close_session(&mut self) {
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
}
