//! The lab BMC's IPMI 1.5 side: Get Session Challenge, Activate Session
//! and the session's authenticated messages (MD5, password, none), wrapped
//! as the chassis' quirks put them on the wire. RMCP+ is
//! [`super::rmcpplus`]'s; the commands a session carries are [`super`]'s.

use super::{IpmiServer, Phase, ServerSession, MAX_SESSIONS};
use crate::ipmi::codec::{self, cc, cmd, netfn, Frame, Session};
use crate::ipmi::crypto::{self, constant_time_eq};
use rand::RngCore;
use std::time::Instant;

impl IpmiServer {
    pub(super) fn handle_v15(&mut self, body: &[u8]) -> Option<Vec<u8>> {
        let p = match codec::decode_session(body, 0).ok()? {
            Session::V15(p) => p,
            Session::V20(_) => return None,
        };
        let f = Frame::decode(p.payload).ok()?;
        if p.session_id == 0 {
            if f.netfn == netfn::APP && f.cmd == cmd::GET_SESSION_CHALLENGE {
                return self.challenge(&f);
            }
            let r = self.sessionless(&f)?;
            return Some(codec::encode_v15(0, 0, 0, None, &self.frame_bytes(&r)));
        }
        let sid = p.session_id;
        let password = self.offer.password.clone();
        let q = self.quirks();
        let declared_off = q.per_msg_off || q.unexpected_auth || q.permsg_required;
        let s = self.sessions.get_mut(&sid)?;
        match s.phase {
            Phase::Challenged { auth, challenge } => {
                if f.netfn != netfn::APP || f.cmd != cmd::ACTIVATE_SESSION || f.data.len() < 22 {
                    return None;
                }
                let want = crypto::v15_code(p.auth_type, &password, sid, p.payload, p.seq);
                let ok = p.auth_type == auth
                    && match (want, p.auth_code) {
                        (Some(w), Some(c)) => constant_time_eq(&w, &c),
                        (None, None) => true,
                        _ => false,
                    }
                    && f.data[2..18] == challenge;
                {
                    let mut c = self.bmc.lock();
                    c.counters.auth_attempts += 1;
                    if !ok {
                        c.counters.auth_failures += 1;
                    }
                }
                if !ok {
                    // Real BMCs stay silent on a bad Activate Session auth code.
                    self.sessions.remove(&sid);
                    return None;
                }
                let limit = self.bmc.lock().faults.privilege_limit.unwrap_or(4);
                let max = (f.data[1] & 0x0f).clamp(1, 4);
                if q.operator_user && max > 3 {
                    // The requested maximum exceeds the user's limit (86h).
                    self.sessions.remove(&sid);
                    let msg = self.frame_bytes(&f.response(0x86, &[]));
                    let code = crypto::v15_code(auth, &password, sid, &msg, 0);
                    return Some(codec::encode_v15(auth, 0, sid, code.as_ref(), &msg));
                }
                let max = max.min(limit);
                let console_out =
                    u32::from_le_bytes([f.data[18], f.data[19], f.data[20], f.data[21]]);
                let mut expect = self.rng.next_u32();
                if expect == 0 {
                    expect = 1;
                }
                s.phase = Phase::Active15 { auth };
                s.max_privilege = max;
                s.out_seq = console_out.wrapping_sub(1);
                s.last_in_seq = expect.wrapping_sub(1);
                s.last_used = Instant::now();
                // Per-message authentication disabled: "none" for the
                // rest of the session (IPMI 2.0 §22.17, Activate Session).
                let mut data = vec![if declared_off { 0 } else { auth }];
                data.extend_from_slice(&sid.to_le_bytes());
                data.extend_from_slice(&expect.to_le_bytes());
                data.push(max);
                let r = f.response(cc::OK, &data);
                self.bmc.lock().counters.sessions += 1;
                Some(self.wrap15(sid, &r, auth))
            }
            Phase::Active15 { auth } => {
                // Without per-message authentication a request may come
                // without a code (`permsg-required`: declared, not honoured).
                let unauthenticated =
                    p.auth_type == 0 && declared_off && !q.permsg_required && auth != 0;
                if p.auth_type != auth && !unauthenticated {
                    return None;
                }
                if !unauthenticated {
                    let want = crypto::v15_code(auth, &password, sid, p.payload, p.seq);
                    match (want, p.auth_code) {
                        (Some(w), Some(c)) if constant_time_eq(&w, &c) => {}
                        (None, None) => {}
                        _ => return None,
                    }
                }
                if p.seq <= s.last_in_seq.saturating_sub(8) {
                    return None;
                }
                s.last_in_seq = s.last_in_seq.max(p.seq);
                s.last_used = Instant::now();
                let r = self.in_session(sid, &f);
                // A reply uses its request's type (`unexpected-auth`: a code
                // whatever the request carried).
                let reply_auth = if q.unexpected_auth { auth } else { p.auth_type };
                let out = self.wrap15(sid, &r, reply_auth);
                if f.netfn == netfn::APP && f.cmd == cmd::CLOSE_SESSION {
                    self.close_if_requested(sid, &f);
                }
                Some(out)
            }
            _ => None,
        }
    }

    pub(super) fn challenge(&mut self, f: &Frame) -> Option<Vec<u8>> {
        if f.data.len() < 17 {
            return Some(codec::encode_v15(
                0,
                0,
                0,
                None,
                &f.response(cc::BAD_LENGTH, &[]).encode(),
            ));
        }
        let auth = f.data[0] & 0x0f;
        let name: Vec<u8> = f.data[1..17]
            .iter()
            .copied()
            .take_while(|b| *b != 0)
            .collect();
        let bad_checksum = self.quirks().bad_checksum;
        let respond = |r: Frame| {
            let mut b = r.encode();
            if bad_checksum {
                if let Some(last) = b.last_mut() {
                    *last ^= 0x5a;
                }
            }
            Some(codec::encode_v15(0, 0, 0, None, &b))
        };
        if !matches!(auth, 0 | 2 | 4) {
            return respond(f.response(cc::INVALID_DATA, &[]));
        }
        if name != self.offer.username.as_bytes() {
            return respond(f.response(0x81, &[]));
        }
        if self.sessions.len() >= MAX_SESSIONS {
            return respond(f.response(cc::OUT_OF_SPACE, &[]));
        }
        let sid = self.new_sid();
        let mut challenge = [0u8; 16];
        self.rng.fill_bytes(&mut challenge);
        self.sessions.insert(
            sid,
            ServerSession {
                suite: None,
                console_sid: sid,
                phase: Phase::Challenged { auth, challenge },
                open_privilege: 0,
                privilege: 2,
                max_privilege: 4,
                out_seq: 0,
                last_in_seq: 0,
                last_used: Instant::now(),
            },
        );
        let mut data = sid.to_le_bytes().to_vec();
        data.extend_from_slice(&challenge);
        respond(f.response(cc::OK, &data))
    }

    /// A reply in 1.5 session `sid`, authenticated with `auth` (0: none),
    /// as this BMC's quirks put it on the wire.
    pub(super) fn wrap15(&mut self, sid: u32, r: &Frame, auth: u8) -> Vec<u8> {
        let password = self.offer.password.clone();
        let q = self.quirks();
        let msg = self.frame_bytes(r);
        let Some(s) = self.sessions.get_mut(&sid) else {
            return codec::encode_v15(0, 0, sid, None, &msg);
        };
        s.out_seq = s.out_seq.wrapping_add(1).max(1);
        // `endianseq`: the number goes out byte-swapped (and is hashed as sent).
        let seq = if q.endianseq {
            s.out_seq.swap_bytes()
        } else {
            s.out_seq
        };
        // `session-id-zero` (idzero): the header says session 0.
        let header_sid = if q.session_id_zero { 0 } else { sid };
        let mut code = crypto::v15_code(auth, &password, header_sid, &msg, seq);
        if q.bad_authcode {
            // `bad-authcode` (noauthcodecheck): a code that does not verify.
            if let Some(c) = code.as_mut() {
                c.iter_mut().for_each(|b| *b ^= 0xa5);
            }
        }
        codec::encode_v15(auth, seq, header_sid, code.as_ref(), &msg)
    }
}
