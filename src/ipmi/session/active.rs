//! The active session: wraps requests and unwraps responses, checking
//! session IDs, sequence numbers (a replay window) and integrity or
//! authentication codes on every datagram.

use super::common::*;
use crate::ipmi::codec::{self, payload, Frame, Malformed, Rmcp, Session};
use crate::ipmi::config::AuthType;
use crate::ipmi::crypto::{self, constant_time_eq, SessionKeys};
use crate::ipmi::workaround::{Workaround, Workarounds};
use crate::secret::Secret;
use rand::RngCore;

/// Sliding window over received session sequence numbers (IPMI 2.0
/// §6.12.13 suggests accepting up to 8 behind; we accept 32 behind and
/// reject duplicates, so a replayed datagram is never accepted twice).
#[derive(Default, Debug)]
pub struct ReplayWindow {
    pub(super) highest: u32,
    pub(super) seen: u32,
}

impl ReplayWindow {
    /// Records `seq` and returns true if it is new and not too old.
    pub fn accept(&mut self, seq: u32) -> bool {
        if seq == 0 {
            return false;
        }
        if self.highest == 0 || seq > self.highest {
            let shift = seq.wrapping_sub(self.highest);
            self.seen = if self.highest == 0 || shift >= 32 {
                1
            } else {
                (self.seen << shift) | 1
            };
            self.highest = seq;
            return true;
        }
        let behind = self.highest - seq;
        if behind >= 32 || self.seen & (1 << behind) != 0 {
            return false;
        }
        self.seen |= 1 << behind;
        true
    }
}

/// What a session saw of the BMC's non-compliance: the last reply that
/// claimed to be ours and was refused, and what was tolerated.
#[derive(Debug, Default)]
pub(super) struct Seen {
    pub(super) rejected: Option<Rejected>,
    pub(super) tolerated: Workarounds,
}

/// An active RMCP+ session.
pub struct ActiveV20 {
    pub(super) keys: SessionKeys,
    pub(super) managed_sid: u32,
    pub(super) console_sid: u32,
    pub(super) out_seq: u32,
    pub(super) window: ReplayWindow,
    pub(super) seen: Seen,
}

/// An active IPMI 1.5 session.
pub struct ActiveV15 {
    pub(super) auth_type: u8,
    pub(super) password: Secret,
    pub(super) session_id: u32,
    pub(super) out_seq: u32,
    pub(super) window: ReplayWindow,
    pub(super) unauthenticated_ok: bool,
    /// The sequence number the BMC was asked to start its replies from.
    pub(super) first_seq: u32,
    /// Whether the BMC writes its sequence numbers byte-swapped (endianseq):
    /// decided by the session's first verified reply, then kept.
    pub(super) swapped: Option<bool>,
    pub(super) workarounds: Workarounds,
    pub(super) seen: Seen,
}

/// How far ahead of the number the BMC was told to start from its replies
/// may be and still be recognised as byte-swapped (endianseq).
pub(super) const SWAP_RANGE: u32 = 1 << 16;

/// True when `seq` is not near `first` but reads as near it with its bytes
/// swapped: a BMC writing its sequence numbers in the wrong byte order.
pub(super) fn byte_swapped(seq: u32, first: u32) -> bool {
    seq.wrapping_sub(first) >= SWAP_RANGE && seq.swap_bytes().wrapping_sub(first) < SWAP_RANGE
}

/// An authenticated session of either version.
pub enum Active {
    /// RMCP+.
    V20(ActiveV20),
    /// IPMI 1.5.
    V15(ActiveV15),
}

/// What unwrapping a datagram found.
#[derive(Debug, PartialEq, Eq)]
pub enum Unwrapped {
    /// A response frame from our session.
    Frame(Frame),
    /// Not ours, a replay, or not intact: ignore it.
    Ignored(&'static str),
}

impl Active {
    /// The BMC's session ID (for Close Session).
    pub fn managed_sid(&self) -> u32 {
        match self {
            Active::V20(s) => s.managed_sid,
            Active::V15(s) => s.session_id,
        }
    }

    /// The RMCP+ cipher suite (`None`: an IPMI 1.5 session).
    pub fn suite_id(&self) -> Option<u8> {
        match self {
            Active::V20(s) => Some(s.keys.suite().id()),
            Active::V15(_) => None,
        }
    }

    /// A short description for the record.
    pub fn describe(&self) -> String {
        match self {
            Active::V20(s) => format!("RMCP+ cipher suite {}", s.keys.suite().id()),
            Active::V15(s) => format!(
                "IPMI 1.5 auth {}",
                match s.auth_type {
                    0 => "none",
                    2 => "md5",
                    4 => "password",
                    _ => "other",
                }
            ),
        }
    }

    /// Wraps a request in a new datagram (each call takes a new session
    /// sequence number, so retransmissions are never replays).
    pub fn wrap(&mut self, frame: &Frame) -> Vec<u8> {
        let msg = frame.encode();
        match self {
            Active::V20(s) => {
                s.out_seq = s.out_seq.wrapping_add(1).max(1);
                let mut iv = [0u8; 16];
                rand::rngs::OsRng.fill_bytes(&mut iv);
                let enc = s.keys.encrypt(&msg, iv);
                let n = s.keys.suite().icv_len();
                let mut d =
                    codec::encode_v20(payload::IPMI, true, s.managed_sid, s.out_seq, &enc, n);
                let end = d.len() - n;
                let code = s.keys.integrity(&d[4..end]);
                d[end..].copy_from_slice(&code);
                d
            }
            Active::V15(s) => {
                s.out_seq = s.out_seq.wrapping_add(1).max(1);
                let code = crypto::v15_code(
                    s.auth_type,
                    s.password.expose(),
                    s.session_id,
                    &msg,
                    s.out_seq,
                );
                codec::encode_v15(s.auth_type, s.out_seq, s.session_id, code.as_ref(), &msg)
            }
        }
    }

    /// Checks and opens a datagram that claims to belong to this session.
    pub fn unwrap(&mut self, d: &[u8]) -> Unwrapped {
        let Some(body) = ipmi_body(d) else {
            return Unwrapped::Ignored("not RMCP/IPMI");
        };
        match self {
            Active::V20(s) => {
                let icv = s.keys.suite().icv_len();
                let p = match codec::decode_session(body, icv) {
                    Ok(Session::V20(p)) => p,
                    _ => return Unwrapped::Ignored("malformed"),
                };
                if p.session_id != s.console_sid {
                    s.seen.note("they carry another session's ID");
                    return Unwrapped::Ignored("wrong session ID");
                }
                if p.payload_type == payload::IPMI && !p.authenticated {
                    s.seen
                        .reject("they arrived without their integrity codes", None);
                    return Unwrapped::Ignored("no integrity code");
                }
                if p.payload_type != payload::IPMI || !p.encrypted {
                    s.seen
                        .reject("they arrived unencrypted or as another payload", None);
                    return Unwrapped::Ignored("unencrypted or unexpected payload");
                }
                if !s.keys.verify_integrity(p.integrity_data, p.auth_code) {
                    s.seen.reject(
                        "their integrity codes do not verify (a wrong K_g key, or forged)",
                        None,
                    );
                    return Unwrapped::Ignored("bad integrity code");
                }
                let plain = match s.keys.decrypt(p.payload) {
                    Ok(x) => x,
                    Err(_) => return Unwrapped::Ignored("undecryptable"),
                };
                if !s.window.accept(p.seq) {
                    s.seen.note("their sequence numbers were replayed or stale");
                    return Unwrapped::Ignored("replayed or stale sequence number");
                }
                match Frame::decode_unchecked(&plain) {
                    Ok((f, sums_ok)) => {
                        if !sums_ok {
                            // nochecksumcheck, automatic: the integrity code
                            // covers every byte the checksums do.
                            s.seen.tolerated.insert(Workaround::NoChecksumCheck);
                        }
                        Unwrapped::Frame(f)
                    }
                    Err(_) => Unwrapped::Ignored("malformed message"),
                }
            }
            Active::V15(s) => {
                let p = match codec::decode_session(body, 0) {
                    Ok(Session::V15(p)) => p,
                    _ => return Unwrapped::Ignored("malformed"),
                };
                if p.session_id != s.session_id {
                    if p.session_id != 0 {
                        s.seen.note("they carry another session's ID");
                        return Unwrapped::Ignored("wrong session ID");
                    }
                    if !s.workarounds.contains(Workaround::IdZero) {
                        s.seen.reject(
                            "they carry session ID 0, not this session's (seen on Tyan S2882)",
                            Some(Workaround::IdZero),
                        );
                        return Unwrapped::Ignored("session ID 0");
                    }
                    s.seen.tolerated.insert(Workaround::IdZero);
                }
                // Does an authentication code vouch for the message bytes?
                let mut vouched = false;
                if s.auth_type != 0 {
                    // Replies carry our auth type, or none only where the
                    // BMC declared per-message authentication disabled.
                    if p.auth_type == 0 {
                        if !s.unauthenticated_ok {
                            s.seen.reject(
                                "they carry no authentication code (the BMC has per-message \
                                 authentication disabled?); only --accept-unauthenticated-replies \
                                 takes them, and with it anyone on the path could forge answers",
                                None,
                            );
                            return Unwrapped::Ignored(
                                "unauthenticated reply in an authenticated session",
                            );
                        }
                    } else {
                        if p.auth_type != s.auth_type {
                            s.seen.reject(
                                "they carry another authentication type than the session's",
                                None,
                            );
                            return Unwrapped::Ignored("unexpected auth type");
                        }
                        if s.workarounds.contains(Workaround::NoAuthCodeCheck) {
                            s.seen.tolerated.insert(Workaround::NoAuthCodeCheck);
                        } else {
                            let want = crypto::v15_code(
                                p.auth_type,
                                s.password.expose(),
                                p.session_id,
                                p.payload,
                                p.seq,
                            );
                            match (want, p.auth_code) {
                                (Some(w), Some(c)) if constant_time_eq(&w, &c) => {}
                                _ => {
                                    s.seen.reject(
                                        "their authentication codes do not verify (seen on \
                                         Windmill boards; or a forged reply)",
                                        Some(Workaround::NoAuthCodeCheck),
                                    );
                                    return Unwrapped::Ignored("bad authentication code");
                                }
                            }
                            // MD5 covers the message; a straight password does not.
                            vouched = p.auth_type == AuthType::Md5 as u8;
                        }
                    }
                }
                let Ok((f, sums_ok)) = Frame::decode_unchecked(p.payload) else {
                    return Unwrapped::Ignored("malformed message");
                };
                if !sums_ok {
                    if vouched || s.workarounds.contains(Workaround::NoChecksumCheck) {
                        s.seen.tolerated.insert(Workaround::NoChecksumCheck);
                    } else {
                        s.seen.reject(
                            "their IPMI checksums are wrong (seen on Supermicro X9 boards)",
                            Some(Workaround::NoChecksumCheck),
                        );
                        return Unwrapped::Ignored("bad checksum");
                    }
                }
                // endianseq: read the number in the BMC's byte order. Asked
                // for, or recognised by the session's first verified reply
                // (a number that only makes sense swapped): it costs no
                // check, every number is replay-checked as before, so it
                // is tolerated without being asked and named in the record.
                // Once decided, the order is kept for the whole session.
                let swapped = *s.swapped.get_or_insert_with(|| {
                    s.workarounds.contains(Workaround::EndianSeq)
                        || byte_swapped(p.seq, s.first_seq)
                });
                let seq = if swapped {
                    s.seen.tolerated.insert(Workaround::EndianSeq);
                    p.seq.swap_bytes()
                } else {
                    p.seq
                };
                // Only an intact message moves the replay window, and every
                // sequence number is checked (0 included: no exemption
                // inside a session, or one recorded reply could be replayed
                // as seq 0 forever).
                if !s.window.accept(seq) {
                    s.seen.note("their sequence numbers were replayed or stale");
                    return Unwrapped::Ignored("replayed or stale sequence number");
                }
                Unwrapped::Frame(f)
            }
        }
    }

    /// The last reply that claimed to be this session's and was refused.
    pub fn rejected(&self) -> Option<&Rejected> {
        match self {
            Active::V20(s) => s.seen.rejected.as_ref(),
            Active::V15(s) => s.seen.rejected.as_ref(),
        }
    }

    /// What was tolerated since the last call (then forgotten).
    pub fn take_tolerated(&mut self) -> Workarounds {
        let seen = match self {
            Active::V20(s) => &mut s.seen,
            Active::V15(s) => &mut s.seen,
        };
        std::mem::take(&mut seen.tolerated)
    }
}

impl Seen {
    /// Counts a refusal that a stray or late datagram also explains:
    /// named in the cause, never taken for a protocol error by itself.
    pub(super) fn note(&mut self, why: &'static str) {
        Rejected::record(&mut self.rejected, why, None, false);
    }

    pub(super) fn reject(&mut self, why: &'static str, workaround: Option<Workaround>) {
        Rejected::record(&mut self.rejected, why, workaround, true);
    }
}

/// Errors from decoding are folded into "ignored" by the session; this
/// helper exists for fuzz targets and tests that want the typed error.
pub fn decode_any(d: &[u8], icv_len: usize) -> Result<(), Malformed> {
    if let Rmcp::Ipmi(body) = codec::decode_rmcp(d)? {
        match codec::decode_session(body, icv_len)? {
            Session::V15(p) => {
                Frame::decode(p.payload)?;
            }
            Session::V20(p) => {
                if p.payload_type == payload::IPMI && !p.encrypted {
                    Frame::decode(p.payload)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn replay_window_rejects_duplicates_and_stale() {
        let mut w = ReplayWindow::default();
        assert!(!w.accept(0));
        assert!(w.accept(5));
        assert!(!w.accept(5));
        assert!(w.accept(7));
        assert!(w.accept(6));
        assert!(!w.accept(6));
        assert!(w.accept(100));
        assert!(!w.accept(60));
        assert!(w.accept(90));
    }
}
