//! The lab's IPMI BMC: RMCP+ (suites 3 and 17) and IPMI 1.5 (MD5, password,
//! none) on one UDP socket, built on the same codec and crypto as the client.
//!
//! Real clients (`ipmitool -I lanplus`, `ipmitool -I lan`, FreeIPMI) are run
//! against it in the interop tests, so a bug shared by our client and this
//! server cannot pass unnoticed.
//!
//! This file holds the sessions, the dispatch and the commands; the RMCP+
//! set-up (Open Session, RAKP) is [`rmcpplus`]'s and IPMI 1.5 sessions
//! are [`lan15`]'s.

use super::bmc::{Bmc, IpmiQuirks};
use crate::ipmi::codec::{
    self, cc, cmd, netfn, payload, DcmiPowerReading, Frame, GuidEncoding, Rmcp, Session,
};
use crate::ipmi::crypto::{SessionKeys, Suite};
use rand::{Rng, RngCore, SeedableRng};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;

mod lan15;
mod rmcpplus;

/// Credentials and protocol offer of a lab BMC.
#[derive(Clone, Debug)]
pub struct Offer {
    /// The one user name accepted.
    pub username: String,
    /// Its password.
    pub password: Vec<u8>,
    /// Cipher suites offered (3 and/or 17).
    pub suites: Vec<u8>,
    /// The BMC GUID.
    pub guid: [u8; 16],
}

/// Sessions idle longer than this are forgotten (IPMI suggests 60 s).
const SESSION_IDLE: Duration = Duration::from_secs(60);
/// At most this many sessions at once (real BMCs have few slots).
const MAX_SESSIONS: usize = 16;

enum Phase {
    /// Open Session answered; waiting for RAKP 1.
    Opened,
    /// RAKP 2 sent; waiting for RAKP 3.
    Rakp2Sent {
        rm: [u8; 16],
        rc: [u8; 16],
        role: u8,
        username: Vec<u8>,
        rakp2: Vec<u8>,
    },
    /// Active RMCP+ session.
    Active { keys: SessionKeys, rakp4: Vec<u8> },
    /// IPMI 1.5 challenge issued.
    Challenged { auth: u8, challenge: [u8; 16] },
    /// Active IPMI 1.5 session.
    Active15 { auth: u8 },
}

struct ServerSession {
    suite: Option<Suite>,
    console_sid: u32,
    /// The privilege the Open Session request asked for (the `opensesspriv`
    /// quirk hashes with it).
    open_privilege: u8,
    phase: Phase,
    privilege: u8,
    max_privilege: u8,
    out_seq: u32,
    last_in_seq: u32,
    last_used: Instant,
}

/// One simulated BMC serving IPMI on a UDP socket.
pub struct IpmiServer {
    bmc: Bmc,
    offer: Offer,
    sessions: HashMap<u32, ServerSession>,
    rng: rand::rngs::StdRng,
}

fn v20(payload_type: u8, sid: u32, p: &[u8]) -> Vec<u8> {
    codec::encode_v20(payload_type, false, sid, 0, p, 0)
}

impl IpmiServer {
    /// A server for `bmc` with `offer`.
    pub fn new(bmc: Bmc, offer: Offer, seed: u64) -> Self {
        IpmiServer {
            bmc,
            offer,
            sessions: HashMap::new(),
            rng: rand::rngs::StdRng::seed_from_u64(seed),
        }
    }

    /// Serves until the socket fails (the task is aborted to stop it).
    pub async fn serve(mut self, sock: UdpSocket) {
        let sock = std::sync::Arc::new(sock);
        let mut buf = vec![0u8; 4096];
        loop {
            let Ok((n, from)) = sock.recv_from(&mut buf).await else {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            };
            let (drop_in, delay, silent) = {
                let mut c = self.bmc.lock();
                c.counters.received += 1;
                let k = c.counters.received;
                let f = &c.faults;
                let lost = f.loss > 0.0 && self.rng.gen_bool(f.loss.clamp(0.0, 1.0));
                (
                    lost || f.drop.contains(&k),
                    f.delay,
                    f.silent || f.ipmi_silent,
                )
            };
            if drop_in || silent {
                continue;
            }
            let Some(reply) = self.handle(&buf[..n], from) else {
                continue;
            };
            let lost = {
                let f = &self.bmc.lock().faults;
                f.loss > 0.0 && self.rng.gen_bool(f.loss.clamp(0.0, 1.0))
            };
            if lost {
                continue;
            }
            if !delay.is_zero() {
                // A late answer, not a stalled BMC: requests arriving
                // meanwhile are handled at once (answers keep their order,
                // all being held as long).
                let (sock, bmc) = (sock.clone(), self.bmc.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    if sock.send_to(&reply, from).await.is_ok() {
                        bmc.lock().counters.answered += 1;
                    }
                });
                continue;
            }
            if sock.send_to(&reply, from).await.is_ok() {
                self.bmc.lock().counters.answered += 1;
            }
        }
    }

    /// Handles one datagram; returns the answer, if any. Never panics on input.
    pub fn handle(&mut self, d: &[u8], _from: SocketAddr) -> Option<Vec<u8>> {
        let now = Instant::now();
        self.sessions
            .retain(|_, s| now.duration_since(s.last_used) < SESSION_IDLE);
        let body = match codec::decode_rmcp(d).ok()? {
            Rmcp::Ipmi(b) => b,
            Rmcp::Asf(b) => return asf_pong(b),
        };
        if body.first() == Some(&codec::AUTHTYPE_RMCPP) {
            if self.quirks().ipmi15_only {
                // An IPMI 1.5 BMC does not know authentication type 06h.
                return None;
            }
            self.handle_v20(body)
        } else {
            self.handle_v15(body)
        }
    }

    /// The vendor quirks this BMC has now (a test may change them).
    fn quirks(&self) -> IpmiQuirks {
        self.bmc.lock().faults.quirks.clone()
    }

    /// A response frame as this BMC puts it on the wire (`bad-checksum`:
    /// the data checksum is wrong, and any code is computed over that).
    fn frame_bytes(&self, r: &Frame) -> Vec<u8> {
        let mut b = r.encode();
        if self.quirks().bad_checksum {
            if let Some(last) = b.last_mut() {
                *last ^= 0x5a;
            }
        }
        b
    }

    fn new_sid(&mut self) -> u32 {
        loop {
            let sid = self.rng.next_u32();
            if sid != 0 && !self.sessions.contains_key(&sid) {
                return sid;
            }
        }
    }

    fn handle_v20(&mut self, body: &[u8]) -> Option<Vec<u8>> {
        // Peek at the header to find the session and its integrity length.
        if body.len() < 12 {
            return None;
        }
        let sid = u32::from_le_bytes([body[2], body[3], body[4], body[5]]);
        let icv = self
            .sessions
            .get(&sid)
            .and_then(|s| s.suite)
            .map_or(0, |s| s.icv_len());
        let p = match codec::decode_session(body, icv).ok()? {
            Session::V20(p) => p,
            Session::V15(_) => return None,
        };
        match p.payload_type {
            payload::OPEN_SESSION_REQUEST => self.open_session(p.payload),
            payload::RAKP1 => self.rakp1(p.payload),
            payload::RAKP3 => self.rakp3(p.payload),
            payload::IPMI if p.session_id == 0 => {
                let f = Frame::decode(p.payload).ok()?;
                let r = self.sessionless(&f)?;
                Some(v20(payload::IPMI, 0, &self.frame_bytes(&r)))
            }
            payload::IPMI => {
                let s = self.sessions.get_mut(&p.session_id)?;
                let Phase::Active { keys, .. } = &s.phase else {
                    return None;
                };
                if !p.authenticated || !keys.verify_integrity(p.integrity_data, p.auth_code) {
                    return None;
                }
                let plain = if p.encrypted {
                    keys.decrypt(p.payload).ok()?
                } else {
                    p.payload.to_vec()
                };
                if p.seq == 0 || p.seq <= s.last_in_seq.saturating_sub(8) {
                    return None;
                }
                s.last_in_seq = s.last_in_seq.max(p.seq);
                s.last_used = Instant::now();
                let f = Frame::decode(&plain).ok()?;
                let sid = p.session_id;
                let response = self.in_session(sid, &f);
                let message = self.frame_bytes(&response);
                let s = self.sessions.get_mut(&sid)?;
                let Phase::Active { keys, .. } = &s.phase else {
                    return None;
                };
                s.out_seq = s.out_seq.wrapping_add(1).max(1);
                let mut iv = [0u8; 16];
                self.rng.fill_bytes(&mut iv);
                let enc = keys.encrypt(&message, iv);
                let n = keys.suite().icv_len();
                let mut out =
                    codec::encode_v20(payload::IPMI, true, s.console_sid, s.out_seq, &enc, n);
                let end = out.len() - n;
                let code = keys.integrity(&out[4..end]);
                out[end..].copy_from_slice(&code);
                if matches!(f.cmd, cmd::CLOSE_SESSION) && f.netfn == netfn::APP {
                    self.close_if_requested(sid, &f);
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// Requests that need no session.
    fn sessionless(&mut self, f: &Frame) -> Option<Frame> {
        if f.netfn != netfn::APP {
            return Some(f.response(cc::INSUFFICIENT_PRIVILEGE, &[]));
        }
        match f.cmd {
            cmd::GET_CHANNEL_AUTH_CAPS => {
                let q = self.quirks();
                // An IPMI 1.5 BMC has no extended data to give.
                let v2 = f.data.first().is_some_and(|b| b & 0x80 != 0) && !q.ipmi15_only;
                // none, MD5, straight password (`authcap-wrong`: none only);
                // bit 7: extended (2.0) data present
                let offered = if q.authcap_wrong {
                    0x01
                } else {
                    0x01 | 0x04 | 0x10
                };
                let types = offered | if v2 { 0x80 } else { 0 };
                // non-null user names enabled; user-level auth on;
                // per-message authentication on unless declared off (bit 4)
                let per_msg_off = q.per_msg_off || q.unexpected_auth || q.permsg_required;
                let status = 0x04 | if per_msg_off { 0x10 } else { 0 };
                let ext = if v2 { 0x03 } else { 0x00 };
                Some(f.response(cc::OK, &[0x01, types, status, ext, 0, 0, 0, 0]))
            }
            cmd::GET_CHANNEL_CIPHER_SUITES => {
                if self.bmc.lock().faults.no_cipher_query {
                    return None;
                }
                let q = self.quirks();
                if q.ipmi15_only {
                    // IPMI 1.5 has no such command.
                    return Some(f.response(cc::INVALID_COMMAND, &[]));
                }
                let index = f.data.get(2).copied().unwrap_or(0) & 0x3f;
                let mut recs = Vec::new();
                for id in &self.offer.suites {
                    if let Some(s) = Suite::from_id(*id) {
                        let (a, i, c) = s.algorithms();
                        if q.untagged_ciphers {
                            // `untagged-ciphers` (sun20): no C0h start of record.
                            recs.extend_from_slice(&[*id, a, 0x40 | i, 0x80 | c]);
                        } else {
                            recs.extend_from_slice(&[0xc0, *id, a, 0x40 | i, 0x80 | c]);
                        }
                    }
                }
                if q.cipher_garbage {
                    // `cipher-garbage`: bytes that are no records at all.
                    recs = vec![0x5a, 0xff, 0x00, 0x13, 0x37, 0x01, 0xee, 0x42];
                }
                let start = (index as usize * 16).min(recs.len());
                let end = (start + 16).min(recs.len());
                let mut data = vec![0x01];
                data.extend_from_slice(&recs[start..end]);
                Some(f.response(cc::OK, &data))
            }
            cmd::GET_DEVICE_ID => Some(f.response(cc::OK, &device_id())),
            // Like ipmi_sim, the system GUID is answered outside a session too.
            cmd::GET_SYSTEM_GUID => Some(self.system_guid(f)),
            _ => None,
        }
    }

    /// Get System GUID from the chassis' identity, in the SMBIOS byte order
    /// most BMCs use (AMI MegaRAC and its derivatives; ipmitool 1.8.19 calls
    /// it the most common encoding): `ipmitool mc guid` then prints the same
    /// UUID as the lab's Redfish `ComputerSystem.UUID`, as on real machines.
    fn system_guid(&self, f: &Frame) -> Frame {
        let (uuid, hidden) = {
            let c = self.bmc.lock();
            (c.identity.uuid.clone(), c.faults.no_identity)
        };
        if hidden {
            // The `no-identity` fault: a BMC without the command (C1h).
            return f.response(cc::INVALID_COMMAND, &[]);
        }
        match network_bytes(&uuid) {
            Some(b) => f.response(cc::OK, &GuidEncoding::Smbios.encode(&b)),
            None => f.response(cc::INVALID_COMMAND, &[]),
        }
    }

    /// DCMI Get Power Reading from the chassis' power meter (the real
    /// draw, or a lying meter's), as one steady sample per second.
    fn dcmi_power_reading(&self, f: &Frame) -> Frame {
        if f.data.first() != Some(&codec::DCMI_GROUP) {
            return f.response(cc::INVALID_COMMAND, &[]);
        }
        if f.data.len() != 4 {
            return f.response(cc::BAD_LENGTH, &[]);
        }
        // A BMC without a meter (`no-meter`) has no DCMI power reading.
        let Some(watts) = self.bmc.lock().meter() else {
            return f.response(cc::INVALID_COMMAND, &[]);
        };
        let watts = watts.round().clamp(0.0, 65535.0) as u16;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as u32);
        let r = DcmiPowerReading {
            current: watts,
            minimum: watts,
            maximum: watts,
            average: watts,
            timestamp: now,
            period_ms: 1000,
            state: 0x40,
        };
        f.response(cc::OK, &r.encode())
    }

    /// Requests inside an active session (either version).
    fn in_session(&mut self, sid: u32, f: &Frame) -> Frame {
        let Some(s) = self.sessions.get_mut(&sid) else {
            return f.response(cc::UNSPECIFIED, &[]);
        };
        match (f.netfn, f.cmd) {
            (netfn::APP, cmd::SET_SESSION_PRIVILEGE) => {
                let want = f.data.first().copied().unwrap_or(0) & 0x0f;
                if want == 0 {
                    return f.response(cc::OK, &[s.privilege]);
                }
                if !(1..=4).contains(&want) || want > s.max_privilege {
                    return f.response(0x81, &[]);
                }
                s.privilege = want;
                f.response(cc::OK, &[want])
            }
            (netfn::APP, cmd::CLOSE_SESSION) => {
                if f.data.len() < 4 {
                    return f.response(cc::BAD_LENGTH, &[]);
                }
                let target = u32::from_le_bytes([f.data[0], f.data[1], f.data[2], f.data[3]]);
                if target != sid && !self.sessions.contains_key(&target) {
                    return f.response(0x87, &[]);
                }
                f.response(cc::OK, &[])
            }
            (netfn::APP, cmd::GET_DEVICE_ID) => f.response(cc::OK, &device_id()),
            (netfn::APP, cmd::GET_SYSTEM_GUID) => self.system_guid(f),
            (netfn::GROUP_EXT, cmd::DCMI_GET_POWER_READING) => self.dcmi_power_reading(f),
            (netfn::APP, cmd::GET_CHANNEL_AUTH_CAPS | cmd::GET_CHANNEL_CIPHER_SUITES) => self
                .sessionless(f)
                .unwrap_or_else(|| f.response(cc::INVALID_COMMAND, &[])),
            (netfn::CHASSIS, cmd::GET_CHASSIS_STATUS) => {
                let mut c = self.bmc.lock();
                c.counters.status_reads += 1;
                // `busy=N`, `busy-timeout=N`: a busy BMC, for a while.
                if c.faults.quirks.busy > 0 {
                    c.faults.quirks.busy -= 1;
                    return f.response(cc::NODE_BUSY, &[]);
                }
                if c.faults.quirks.busy_timeout > 0 {
                    c.faults.quirks.busy_timeout -= 1;
                    return f.response(cc::TIMEOUT, &[]);
                }
                let on = c.is_on();
                // power byte: bit 0 on; restore policy "always off" (00b)
                f.response(cc::OK, &[u8::from(on), 0x00, 0x00, 0x00])
            }
            (netfn::CHASSIS, cmd::CHASSIS_CONTROL) => {
                if s.privilege < 3 {
                    return f.response(cc::INSUFFICIENT_PRIVILEGE, &[]);
                }
                let Some(op) = f.data.first().copied() else {
                    return f.response(cc::BAD_LENGTH, &[]);
                };
                let mut c = self.bmc.lock();
                if c.faults.quirks.busy > 0 {
                    // Not carried out.
                    c.faults.quirks.busy -= 1;
                    return f.response(cc::NODE_BUSY, &[]);
                }
                let code = c.control(op & 0x0f);
                if code == cc::OK {
                    // Carried out, but the BMC timed out saying so.
                    let q = &mut c.faults.quirks;
                    if q.busy_timeout > 0 {
                        q.busy_timeout -= 1;
                        return f.response(cc::TIMEOUT, &[]);
                    }
                    if q.control_timeout > 0 {
                        q.control_timeout -= 1;
                        return f.response(cc::TIMEOUT, &[]);
                    }
                }
                f.response(code, &[])
            }
            _ => f.response(cc::INVALID_COMMAND, &[]),
        }
    }

    fn close_if_requested(&mut self, sid: u32, f: &Frame) {
        if f.data.len() >= 4 {
            let target = u32::from_le_bytes([f.data[0], f.data[1], f.data[2], f.data[3]]);
            if self.sessions.remove(&target).is_some() || target == sid {
                self.sessions.remove(&sid);
                self.bmc.lock().counters.closed += 1;
            }
        }
    }
}

/// A stored unauthenticated RMCP+ set-up answer with its message tag (the
/// first payload byte, after the RMCP and session headers) set to `tag`.
fn retagged(answer: &[u8], tag: u8) -> Vec<u8> {
    let mut out = answer.to_vec();
    if let Some(b) = out.get_mut(4 + 12) {
        *b = tag;
    }
    out
}

/// The 16 network-order bytes of a canonical UUID text.
fn network_bytes(uuid: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = uuid.bytes().filter(|b| *b != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}

fn device_id() -> [u8; 11] {
    // device ID 20h, revision 1, firmware 1.00, IPMI 2.0, chassis+bridge support,
    // manufacturer 0 (none), product 0.
    [
        0x20, 0x01, 0x01, 0x00, 0x02, 0x8f, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]
}

/// Answers an ASF Presence Ping (RMCP class 6, type 80h) with a Presence Pong.
fn asf_pong(b: &[u8]) -> Option<Vec<u8>> {
    if b.len() < 8 || b[4] != 0x80 {
        return None;
    }
    let tag = b[5];
    let mut out = vec![codec::RMCP_VERSION, 0x00, 0xff, codec::RMCP_CLASS_ASF];
    out.extend_from_slice(&[0x00, 0x00, 0x11, 0xbe, 0x40, tag, 0x00, 0x10]);
    out.extend_from_slice(&[0x00, 0x00, 0x11, 0xbe, 0x00, 0x00, 0x00, 0x00, 0x81, 0x00]);
    out.extend_from_slice(&[0; 6]);
    Some(out)
}

/// A running lab BMC (IPMI side).
pub struct LabIpmi {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its chassis.
    pub bmc: Bmc,
    task: tokio::task::JoinHandle<()>,
}

impl LabIpmi {
    /// Binds `addr` and serves `bmc` with `offer` until dropped.
    pub async fn start(addr: SocketAddr, bmc: Bmc, offer: Offer) -> std::io::Result<Self> {
        let sock = UdpSocket::bind(addr).await?;
        let addr = sock.local_addr()?;
        let seed = u64::from(addr.port()) ^ rand::random::<u64>();
        let server = IpmiServer::new(bmc.clone(), offer, seed);
        let task = tokio::spawn(server.serve(sock));
        Ok(LabIpmi { addr, bmc, task })
    }
}

impl Drop for LabIpmi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_never_panics_the_server() {
        let bmc = Bmc::new(true, Default::default());
        let offer = Offer {
            username: "admin".into(),
            password: b"lab".to_vec(),
            suites: vec![3, 17],
            guid: [1; 16],
        };
        let mut s = IpmiServer::new(bmc, offer, 1);
        let from: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for n in 0..20_000 {
            let len = rng.gen_range(0..80);
            let mut d: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            if n % 2 == 0 && d.len() > 5 {
                d[..4].copy_from_slice(&codec::RMCP_IPMI_HEADER);
                d[4] = if n % 4 == 0 { 6 } else { 0 };
            }
            let _ = s.handle(&d, from);
        }
    }
}
