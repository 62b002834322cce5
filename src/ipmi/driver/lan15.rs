//! Session set-up for IPMI 1.5 (Get Session Challenge, Activate Session),
//! and the fall-back to it when a BMC does not speak 2.0.

use super::*;

impl IpmiDriver {
    /// IPMI 1.5 set-up. The automatic choice takes MD5, then straight
    /// password, never "none": a session without authentication codes lets
    /// anyone on the path forge its answers, so it is used only when asked
    /// for (`--auth none`). A BMC that refuses administrator to this user
    /// (Activate Session 86h) is asked again for operator, once.
    pub(super) async fn handshake_v15(
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

    pub(super) async fn handshake_v15_once(
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

    /// The automatic fall-back to IPMI 1.5 (cipher choice `auto` only): when
    /// RMCP+ got no answer (`why`) and Get Channel Authentication
    /// Capabilities says the BMC speaks IPMI 1.5 only, an IPMI 1.5 session
    /// with MD5 — the strongest 1.5 authentication, and the only one taken
    /// unasked (straight password would send the password in clear, none
    /// authenticates nothing). `Ok(None)`: the BMC does not say so (or
    /// authcap was asked for: its capabilities are not believed).
    pub(super) async fn fall_back_to_v15(
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
        if self.cfg.password.len() > crate::ipmi::config::MAX_PASSWORD_V15 {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Negotiate,
                format!(
                    "{only}, and IPMI 1.5 carries passwords of at most {} bytes: this one has {}",
                    crate::ipmi::config::MAX_PASSWORD_V15,
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
}
