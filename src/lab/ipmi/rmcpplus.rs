//! The lab BMC's RMCP+ session set-up (IPMI 2.0 section 13.17-13.23):
//! Open Session, RAKP 1/2 and RAKP 3/4 with suites 3 and 17, as the
//! chassis' quirks shape them. Dispatch, commands in a session and IPMI
//! 1.5 are [`super`]'s and [`super::lan15`]'s.

use super::{retagged, v20, IpmiServer, Phase, ServerSession, MAX_SESSIONS};
use crate::ipmi::codec::{
    payload, OpenSessionRequest, OpenSessionResponse, Rakp1, Rakp2, Rakp3, Rakp4,
};
use crate::ipmi::crypto::{self, constant_time_eq, Rakp, SessionKeys, Suite};
use rand::RngCore;
use std::time::Instant;

impl IpmiServer {
    pub(super) fn open_session(&mut self, p: &[u8]) -> Option<Vec<u8>> {
        let rq = OpenSessionRequest::decode(p).ok()?;
        let fail = |status| {
            let r = OpenSessionResponse {
                tag: rq.tag,
                status,
                max_privilege: 0,
                console_sid: rq.console_sid,
                managed_sid: 0,
                algorithms: None,
            };
            Some(v20(payload::OPEN_SESSION_RESPONSE, 0, &r.encode()))
        };
        let suite = match Suite::from_algorithms(rq.auth_alg, rq.integrity_alg, rq.conf_alg) {
            Some(s) if self.offer.suites.contains(&s.id()) => s,
            _ => return fail(0x11),
        };
        if self.sessions.len() >= MAX_SESSIONS {
            return fail(0x01);
        }
        let sid = self.new_sid();
        self.sessions.insert(
            sid,
            ServerSession {
                suite: Some(suite),
                console_sid: rq.console_sid,
                phase: Phase::Opened,
                open_privilege: rq.max_privilege,
                privilege: 2,
                max_privilege: 4,
                out_seq: 0,
                last_in_seq: 0,
                last_used: Instant::now(),
            },
        );
        let r = OpenSessionResponse {
            tag: rq.tag,
            status: 0,
            max_privilege: if rq.max_privilege == 0 {
                4
            } else {
                rq.max_privilege.min(4)
            },
            console_sid: rq.console_sid,
            managed_sid: sid,
            algorithms: Some(suite.algorithms()),
        };
        Some(v20(payload::OPEN_SESSION_RESPONSE, 0, &r.encode()))
    }

    pub(super) fn rakp1(&mut self, p: &[u8]) -> Option<Vec<u8>> {
        let rq = Rakp1::decode(p).ok()?;
        let mut rc = [0u8; 16];
        self.rng.fill_bytes(&mut rc);
        let guid = self.offer.guid;
        let q = self.quirks();
        let user_ok = if q.pad_username {
            // `pad-username` (intel20): only the name padded to 16 bytes is found.
            rq.username.len() == 16
                && rq.username.iter().rev().skip_while(|b| **b == 0).count()
                    == self.offer.username.len()
                && rq.username.starts_with(self.offer.username.as_bytes())
        } else {
            rq.username == self.offer.username.as_bytes()
        };
        let password = self.offer.password.clone();
        let limit = self.bmc.lock().faults.privilege_limit.unwrap_or(4);
        let s = self.sessions.get_mut(&rq.managed_sid)?;
        let suite = s.suite?;
        // A retransmitted RAKP 1 gets the same RAKP 2 again, under the tag
        // of the request it answers (as ipmi_sim and pyghmi's BMC answer).
        if let Phase::Rakp2Sent { rm, rakp2, .. } = &s.phase {
            if *rm == rq.rm {
                return Some(retagged(rakp2, rq.tag));
            }
        }
        if !matches!(s.phase, Phase::Opened) {
            return None;
        }
        // A demoted account: asking for more than its limit is refused.
        if user_ok && (rq.role & 0x0f) > limit {
            let r = Rakp2 {
                tag: rq.tag,
                status: 0x0a,
                console_sid: s.console_sid,
                rc: [0; 16],
                guid: [0; 16],
                auth_code: vec![],
            };
            self.sessions.remove(&rq.managed_sid);
            return Some(v20(payload::RAKP2, 0, &r.encode()));
        }
        if !user_ok {
            let r = Rakp2 {
                tag: rq.tag,
                status: 0x0d,
                console_sid: s.console_sid,
                rc: [0; 16],
                guid: [0; 16],
                auth_code: vec![],
            };
            let sid = rq.managed_sid;
            let console = s.console_sid;
            self.sessions.remove(&sid);
            let _ = console;
            return Some(v20(payload::RAKP2, 0, &r.encode()));
        }
        // `opensesspriv`: the privilege hashed is the Open Session request's,
        // not the one RAKP 1 asked for (its lookup bit stays).
        let hashed_role = if q.opensesspriv {
            (s.open_privilege & 0x0f) | (rq.role & 0xf0)
        } else {
            rq.role
        };
        let mut code = Rakp {
            console_sid: s.console_sid,
            managed_sid: rq.managed_sid,
            rm: &rq.rm,
            rc: &rc,
            guid: &guid,
            role: hashed_role,
            username: &rq.username,
        }
        .rakp2_code(suite, crypto::kuid(&password));
        if q.rakp2_long {
            // One byte too many after the HMAC (supermicro20, sun20).
            code.push(0);
        }
        let r = Rakp2 {
            tag: rq.tag,
            status: 0,
            console_sid: s.console_sid,
            rc,
            guid,
            auth_code: code,
        };
        let out = v20(payload::RAKP2, 0, &r.encode());
        // `operator-user`: the user may never go above operator.
        s.max_privilege = (rq.role & 0x0f).clamp(1, if q.operator_user { 3 } else { 4 });
        s.phase = Phase::Rakp2Sent {
            rm: rq.rm,
            rc,
            role: hashed_role,
            username: rq.username,
            rakp2: out.clone(),
        };
        s.last_used = Instant::now();
        Some(out)
    }

    pub(super) fn rakp3(&mut self, p: &[u8]) -> Option<Vec<u8>> {
        let rq = Rakp3::decode(p).ok()?;
        let guid = self.offer.guid;
        let password = self.offer.password.clone();
        let s = self.sessions.get_mut(&rq.managed_sid)?;
        let suite = s.suite?;
        if let Phase::Active { rakp4, .. } = &s.phase {
            return Some(retagged(rakp4, rq.tag));
        }
        let Phase::Rakp2Sent {
            rm,
            rc,
            role,
            username,
            ..
        } = &s.phase
        else {
            return None;
        };
        let console_sid = s.console_sid;
        if rq.status != 0 {
            // The console gave up (e.g. it found our RAKP 2 wrong).
            self.sessions.remove(&rq.managed_sid);
            return None;
        }
        let rakp = Rakp {
            console_sid,
            managed_sid: rq.managed_sid,
            rm,
            rc,
            guid: &guid,
            role: *role,
            username,
        };
        // `pad-username` (intel20): RAKP 3 is checked against the stored
        // name, without the padding RAKP 1 needed, and the privilege without
        // the lookup bit (what FreeIPMI's intel20 sends); RAKP 2 and the
        // session key use the name as RAKP 1 carried it.
        let want = if self.bmc.lock().faults.quirks.pad_username {
            let stored: Vec<u8> = username.iter().copied().take_while(|b| *b != 0).collect();
            Rakp {
                username: &stored,
                role: *role & 0x0f,
                ..rakp
            }
            .rakp3_code(suite, crypto::kuid(&password))
        } else {
            rakp.rakp3_code(suite, crypto::kuid(&password))
        };
        let ok = want.len() == rq.auth_code.len() && constant_time_eq(&want, &rq.auth_code);
        {
            let mut c = self.bmc.lock();
            c.counters.auth_attempts += 1;
            if !ok {
                c.counters.auth_failures += 1;
            }
        }
        if !ok {
            let r = Rakp4 {
                tag: rq.tag,
                status: 0x0f,
                console_sid,
                icv: vec![],
            };
            self.sessions.remove(&rq.managed_sid);
            return Some(v20(payload::RAKP4, 0, &r.encode()));
        }
        let sik = rakp.sik(suite, crypto::kuid(&password));
        let icv = if self.bmc.lock().faults.quirks.rakp4_untruncated {
            // The whole HMAC, not its first 12 or 16 bytes.
            suite.hmac(&sik, &[rm, &rq.managed_sid.to_le_bytes(), &guid])
        } else {
            rakp.rakp4_icv(suite, &sik)
        };
        let keys = SessionKeys::derive(suite, &sik);
        let r = Rakp4 {
            tag: rq.tag,
            status: 0,
            console_sid,
            icv,
        };
        let out = v20(payload::RAKP4, 0, &r.encode());
        s.phase = Phase::Active {
            keys,
            rakp4: out.clone(),
        };
        s.last_used = Instant::now();
        self.bmc.lock().counters.sessions += 1;
        Some(out)
    }
}
