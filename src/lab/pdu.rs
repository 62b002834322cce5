//! A simulated switched PDU (an APC rPDU as PowerNet-MIB describes it)
//! speaking SNMP v1, v2c and v3 on one UDP socket, its outlets wired to lab
//! machines: switching a machine's last feeding outlet off cuts its mains
//! (its BMC goes silent, its host goes down, its load reads zero).
//!
//! It shares the codec and the USM cryptography with the client, but plays
//! the agent's part: engine discovery answers, user lookup, signature and
//! time-window checks, decryption, Reports for each failure (RFC 3414 §3.2),
//! VACM-like read-only vs read-write access. Faults: lost datagrams, an
//! outlet that refuses to switch, and a PDU that reports an outlet off while
//! it keeps feeding it (its load meter still tells the truth).

use super::bmc::Bmc;
use crate::secret::Secret;
use crate::snmp::ber::Oid;
use crate::snmp::message::{
    self, error_status, flags, CommunityMessage, Message, Pdu, PduKind, ScopedData, ScopedPdu,
    UsmParams, V3Message, Value, VarBind, Version,
};
use crate::snmp::session::ct_eq;
use crate::snmp::usm::{AuthProtocol, PrivProtocol};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;

/// sysObjectID of an APC Switched Rack PDU (rPDU), what the lab PDU claims to be.
pub const SYS_OBJECT_ID: &str = ".1.3.6.1.4.1.318.1.3.4.5";
/// Engine time window (RFC 3414 §3.2.7: 150 seconds).
const TIME_WINDOW: u32 = 150;

/// A v3 user the PDU knows (always at least authNoPriv).
#[derive(Clone, Debug)]
pub struct PduUser {
    /// securityName.
    pub name: String,
    /// Authentication protocol and password.
    pub auth: (AuthProtocol, Secret),
    /// Privacy protocol and password; `Some` makes authPriv the minimum level.
    pub privacy: Option<(PrivProtocol, Secret)>,
}

/// How the PDU answers.
#[derive(Clone, Debug)]
pub struct PduSpec {
    /// Number of outlets.
    pub outlets: u32,
    /// Read-write community.
    pub community: Secret,
    /// Read-only community.
    pub read_community: Secret,
    /// v3 users.
    pub users: Vec<PduUser>,
}

impl PduSpec {
    /// The lab's default: `outlets` outlets, community `private` (read-write)
    /// and `public` (read-only), and v3 users `fence` (SHA-256/AES) and
    /// `fencesha` (SHA-1/AES, what fence_apc_snmp's options can name), with
    /// `password` as both passwords.
    pub fn lab(outlets: u32, password: &str) -> Self {
        PduSpec {
            outlets,
            community: Secret::from_str_value("private"),
            read_community: Secret::from_str_value("public"),
            users: vec![
                PduUser {
                    name: "fence".into(),
                    auth: (AuthProtocol::Sha256, Secret::from_str_value(password)),
                    privacy: Some((PrivProtocol::Aes128, Secret::from_str_value(password))),
                },
                PduUser {
                    name: "fencesha".into(),
                    auth: (AuthProtocol::Sha1, Secret::from_str_value(password)),
                    privacy: Some((PrivProtocol::Aes128, Secret::from_str_value(password))),
                },
            ],
        }
    }
}

/// Fault knobs of a simulated PDU.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PduFaults {
    /// Fraction of datagrams lost, each direction.
    pub loss: f64,
    /// Received datagrams (1-based count) that are dropped.
    pub drop: Vec<u64>,
    /// Outlets (1-based) that accept commands but never switch (a welded relay).
    pub refuse: Vec<u32>,
    /// The PDU reports the commanded state but keeps feeding every outlet.
    pub lying: bool,
    /// Never answer.
    pub silent: bool,
}

/// Counters a test can read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PduCounters {
    /// Datagrams received (before drops).
    pub received: u64,
    /// Datagrams answered.
    pub answered: u64,
    /// Set requests carried out.
    pub sets: u64,
    /// v3 requests refused (unknown user, wrong digest, decryption error).
    pub auth_failures: u64,
}

#[derive(Debug)]
struct Outlet {
    relay: bool,
    claimed: Option<bool>,
    node: Option<(String, Bmc)>,
}

/// The PDU's outlets, faults and counters.
#[derive(Debug)]
pub struct PduState {
    id: usize,
    outlets: Vec<Outlet>,
    /// Fault knobs.
    pub faults: PduFaults,
    /// Counters.
    pub counters: PduCounters,
    /// Every outlet command carried out, "N on" / "N off".
    pub log: Vec<String>,
}

impl PduState {
    fn reported(&self, i: usize) -> bool {
        let o = &self.outlets[i];
        o.claimed.unwrap_or(o.relay)
    }

    fn watts(&self, i: usize) -> i64 {
        let o = &self.outlets[i];
        let Some((_, bmc)) = &o.node else {
            return 0;
        };
        if !o.relay {
            return 0;
        }
        let feeding = self
            .outlets
            .iter()
            .filter(|x| x.relay && x.node.as_ref().is_some_and(|(_, b)| b.same(bmc)))
            .count()
            .max(1);
        (bmc.lock().watts() / feeding as f64).round() as i64
    }

    fn switch(&mut self, i: usize, on: bool) {
        self.counters.sets += 1;
        self.log
            .push(format!("{} {}", i + 1, if on { "on" } else { "off" }));
        if self.faults.refuse.contains(&(i as u32 + 1)) {
            return;
        }
        if self.faults.lying {
            self.outlets[i].claimed = Some(on);
            return;
        }
        self.outlets[i].relay = on;
        self.outlets[i].claimed = None;
        self.refresh_mains();
    }

    /// Gives each wired machine mains power iff one of its outlets feeds it.
    fn refresh_mains(&self) {
        for o in &self.outlets {
            if let Some((_, bmc)) = &o.node {
                // A machine may hang on several PDUs: it loses mains only
                // when no PDU feeds any of its outlets ([`Feeds`]).
                let here = self
                    .outlets
                    .iter()
                    .any(|x| x.relay && x.node.as_ref().is_some_and(|(_, b)| b.same(bmc)));
                FEEDS.with_feed(bmc, self.id, here);
            }
        }
    }
}

/// Which PDUs feed which machine: a machine on two PDUs keeps mains while
/// either feeds it. Keyed by the machine's handle and the PDU's identity.
struct Feeds(Mutex<Vec<(Bmc, usize, bool)>>);

static FEEDS: Feeds = Feeds(Mutex::new(Vec::new()));

impl Feeds {
    fn with_feed(&self, bmc: &Bmc, pdu: usize, feeding: bool) {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match v.iter_mut().find(|(b, p, _)| b.same(bmc) && *p == pdu) {
            Some(e) => e.2 = feeding,
            None => v.push((bmc.clone(), pdu, feeding)),
        }
        let any = v.iter().any(|(b, _, f)| b.same(bmc) && *f);
        bmc.set_mains(any);
    }

    fn forget(&self, pdu: usize) {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|(_, p, _)| *p != pdu);
    }
}

/// A shared handle on one simulated PDU.
#[derive(Clone, Debug)]
pub struct LabPduState(Arc<Mutex<PduState>>);

impl LabPduState {
    /// A PDU with `outlets` outlets, all on, wired to nothing.
    pub fn new(outlets: u32) -> Self {
        static NEXT_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
        LabPduState(Arc::new(Mutex::new(PduState {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            outlets: (0..outlets)
                .map(|_| Outlet {
                    relay: true,
                    claimed: None,
                    node: None,
                })
                .collect(),
            faults: PduFaults::default(),
            counters: PduCounters::default(),
            log: Vec::new(),
        })))
    }

    /// Locks the state (a poisoned lock is recovered).
    pub fn lock(&self) -> MutexGuard<'_, PduState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wires outlet `n` (1-based) to machine `name`; its mains follow the outlet.
    pub fn wire(&self, n: u32, name: &str, bmc: &Bmc) {
        let mut s = self.lock();
        if let Some(o) = s.outlets.get_mut(n as usize - 1) {
            o.node = Some((name.to_string(), bmc.clone()));
        }
        s.refresh_mains();
    }

    /// Whether outlet `n` (1-based) really feeds power.
    pub fn relay(&self, n: u32) -> bool {
        self.lock()
            .outlets
            .get(n as usize - 1)
            .is_some_and(|o| o.relay)
    }

    /// Replaces the fault knobs.
    pub fn set_faults(&self, f: PduFaults) {
        self.lock().faults = f;
    }

    /// The counters.
    pub fn counters(&self) -> PduCounters {
        self.lock().counters
    }

    /// The outlet commands carried out.
    pub fn log(&self) -> Vec<String> {
        self.lock().log.clone()
    }
}

struct UserKeys {
    name: Vec<u8>,
    auth: (AuthProtocol, Secret),
    privacy: Option<(PrivProtocol, Secret)>,
}

/// The agent's protocol side (no I/O): one datagram in, at most one out.
pub struct PduAgent {
    state: LabPduState,
    spec: PduSpec,
    engine_id: Vec<u8>,
    boots: u32,
    started: Instant,
    users: Vec<UserKeys>,
    salt: u64,
}

fn apc(arcs: &[u32]) -> Oid {
    let mut v = vec![1, 3, 6, 1, 4, 1, 318, 1, 1];
    v.extend_from_slice(arcs);
    Oid(v)
}

/// rPDUOutletControlOutletCommand.N
fn control_oid(n: u32) -> Oid {
    apc(&[12, 3, 3, 1, 1, 4, n])
}

impl PduAgent {
    /// An agent for `state` answering per `spec`; `engine_tag` makes the
    /// engine ID unique (e.g. the port).
    pub fn new(state: LabPduState, spec: PduSpec, engine_tag: u32) -> Self {
        let mut engine_id = vec![0x80, 0x00, 0x1f, 0x88, 0x04];
        engine_id.extend_from_slice(b"fencekit-lab-");
        engine_id.extend_from_slice(&engine_tag.to_be_bytes());
        let users = spec
            .users
            .iter()
            .filter_map(|u| {
                let ku = u.auth.0.password_to_key(&u.auth.1).ok()?;
                let auth = (u.auth.0, u.auth.0.localize(&ku, &engine_id));
                let privacy = match &u.privacy {
                    Some((p, pw)) => {
                        let k = u.auth.0.password_to_key(pw).ok()?;
                        Some((*p, u.auth.0.localize(&k, &engine_id)))
                    }
                    None => None,
                };
                Some(UserKeys {
                    name: u.name.as_bytes().to_vec(),
                    auth,
                    privacy,
                })
            })
            .collect();
        PduAgent {
            state,
            spec,
            engine_id,
            boots: 1,
            started: Instant::now(),
            users,
            salt: rand::random(),
        }
    }

    fn engine_time(&self) -> u32 {
        u32::try_from(self.started.elapsed().as_secs()).unwrap_or(u32::MAX)
    }

    fn mib(&self) -> BTreeMap<Oid, Value> {
        let s = self.state.lock();
        let mut m = BTreeMap::new();
        let sys = |n| Oid(vec![1, 3, 6, 1, 2, 1, 1, n, 0]);
        m.insert(
            sys(1),
            Value::OctetString(b"fencekit lab PDU (APC rPDU model)".to_vec()),
        );
        if let Ok(o) = Oid::parse(SYS_OBJECT_ID) {
            m.insert(sys(2), Value::Oid(o));
        }
        m.insert(
            sys(3),
            Value::TimeTicks(
                u32::try_from(self.started.elapsed().as_millis() / 10).unwrap_or(u32::MAX),
            ),
        );
        for i in 0..s.outlets.len() {
            let n = i as u32 + 1;
            let state = if s.reported(i) { 1 } else { 2 };
            let name = s.outlets[i]
                .node
                .as_ref()
                .map(|(name, _)| name.clone())
                .unwrap_or_else(|| format!("outlet{n}"));
            m.insert(control_oid(n), Value::Integer(state));
            m.insert(
                apc(&[12, 3, 5, 1, 1, 2, n]),
                Value::OctetString(name.into_bytes()),
            );
            m.insert(apc(&[12, 3, 5, 1, 1, 4, n]), Value::Integer(state));
            m.insert(apc(&[26, 9, 4, 3, 1, 7, n]), Value::Integer(s.watts(i)));
        }
        m
    }

    /// Handles one datagram; `None` means no answer (not ours, or dropped
    /// as a real agent would drop it).
    pub fn handle(&mut self, d: &[u8]) -> Option<Vec<u8>> {
        match message::decode(d).ok()? {
            Message::Community(m) => self.handle_community(m),
            Message::V3(m) => self.handle_v3(d, m),
        }
    }

    fn handle_community(&mut self, m: CommunityMessage) -> Option<Vec<u8>> {
        let rw = ct_eq(m.community.expose(), self.spec.community.expose());
        let ro = ct_eq(m.community.expose(), self.spec.read_community.expose());
        if !rw && !ro {
            // snmpInBadCommunityNames: real agents stay silent.
            return None;
        }
        let pdu = self.process(&m.pdu, m.version, rw)?;
        Some(
            CommunityMessage {
                version: m.version,
                community: m.community,
                pdu,
            }
            .encode(),
        )
    }

    fn report(
        &mut self,
        msg_id: i32,
        request_id: i32,
        stat: u32,
        user: Option<usize>,
    ) -> Option<Vec<u8>> {
        let pdu = Pdu {
            kind: PduKind::Report,
            request_id,
            error_status: 0,
            error_index: 0,
            varbinds: vec![VarBind {
                oid: Oid(vec![1, 3, 6, 1, 6, 3, 15, 1, 1, stat, 0]),
                value: Value::Counter32(1),
            }],
        };
        self.reply_v3(msg_id, user, false, pdu)
    }

    fn handle_v3(&mut self, bytes: &[u8], m: V3Message) -> Option<Vec<u8>> {
        let request_id = match &m.data {
            ScopedData::Plain(s) => s.pdu.request_id,
            ScopedData::Encrypted(_) => 0,
        };
        // RFC 3414 §3.2.3: unknown engine ID (discovery) → report.
        if m.usm.engine_id != self.engine_id {
            if m.flags & flags::REPORTABLE == 0 {
                return None;
            }
            return self.report(m.msg_id, request_id, 4, None);
        }
        let Some(ui) = self.users.iter().position(|u| u.name == m.usm.user) else {
            self.state.lock().counters.auth_failures += 1;
            return self.report(m.msg_id, request_id, 3, None);
        };
        let needs_priv = self.users[ui].privacy.is_some();
        let has_auth = m.flags & flags::AUTH != 0;
        let has_priv = m.flags & flags::PRIV != 0;
        if !has_auth || (needs_priv && !has_priv) {
            return self.report(m.msg_id, request_id, 1, None);
        }
        let (ap, ak) = self.users[ui].auth.clone();
        if !ap.verify(&ak, bytes, m.auth_range.clone()) {
            self.state.lock().counters.auth_failures += 1;
            return self.report(m.msg_id, request_id, 5, None);
        }
        let now = self.engine_time();
        if m.usm.boots != self.boots || m.usm.time.abs_diff(now) > TIME_WINDOW {
            let pdu_id = request_id;
            return self.report(m.msg_id, pdu_id, 2, Some(ui));
        }
        let scoped = match &m.data {
            ScopedData::Plain(s) => s.clone(),
            ScopedData::Encrypted(ct) => {
                let (pp, pk) = self.users[ui].privacy.clone()?;
                let plain = pp.decrypt(&pk, m.usm.boots, m.usm.time, &m.usm.privacy, ct);
                match plain.ok().and_then(|p| ScopedPdu::decode(&p).ok()) {
                    Some(s) => s,
                    None => {
                        self.state.lock().counters.auth_failures += 1;
                        return self.report(m.msg_id, 0, 6, None);
                    }
                }
            }
        };
        let pdu = self.process(&scoped.pdu, Version::V3, true)?;
        self.reply_v3(m.msg_id, Some(ui), has_priv, pdu)
    }

    fn reply_v3(
        &mut self,
        msg_id: i32,
        user: Option<usize>,
        encrypt: bool,
        pdu: Pdu,
    ) -> Option<Vec<u8>> {
        let time = self.engine_time();
        let scoped = ScopedPdu {
            context_engine_id: self.engine_id.clone(),
            context_name: vec![],
            pdu,
        };
        let mut f = 0u8;
        let mut usm = UsmParams {
            engine_id: self.engine_id.clone(),
            boots: self.boots,
            time,
            user: vec![],
            auth: vec![],
            privacy: vec![],
        };
        let mut data = ScopedData::Plain(scoped.clone());
        if let Some(ui) = user {
            let u = &self.users[ui];
            f |= flags::AUTH;
            usm.user = u.name.clone();
            usm.auth = vec![0; u.auth.0.mac_len()];
            if encrypt {
                if let Some((p, k)) = &u.privacy {
                    self.salt = self.salt.wrapping_add(1);
                    let (ct, params) = p
                        .encrypt(k, self.boots, time, self.salt, &scoped.encode())
                        .ok()?;
                    f |= flags::PRIV;
                    usm.privacy = params;
                    data = ScopedData::Encrypted(ct);
                }
            }
        }
        let (mut bytes, range) = V3Message {
            msg_id,
            max_size: 65507,
            flags: f,
            usm,
            data,
            auth_range: 0..0,
        }
        .encode();
        if let Some(ui) = user {
            let (p, k) = &self.users[ui].auth;
            let mac = p.sign(k, &bytes);
            bytes.get_mut(range)?.copy_from_slice(&mac);
        }
        Some(bytes)
    }

    /// Runs a request PDU against the MIB; the Response PDU.
    fn process(&mut self, req: &Pdu, version: Version, writable: bool) -> Option<Pdu> {
        let v1 = version == Version::V1;
        let mut resp = Pdu {
            kind: PduKind::Response,
            request_id: req.request_id,
            error_status: 0,
            error_index: 0,
            varbinds: Vec::new(),
        };
        let fail = |mut r: Pdu, status: i64, index: usize| {
            r.error_status = status;
            r.error_index = index as i64 + 1;
            r.varbinds = req.varbinds.clone();
            r
        };
        match req.kind {
            PduKind::Get => {
                let mib = self.mib();
                for (i, vb) in req.varbinds.iter().enumerate() {
                    match mib.get(&vb.oid) {
                        Some(v) => resp.varbinds.push(VarBind {
                            oid: vb.oid.clone(),
                            value: v.clone(),
                        }),
                        None if v1 => return Some(fail(resp, error_status::NO_SUCH_NAME, i)),
                        None => resp.varbinds.push(VarBind {
                            oid: vb.oid.clone(),
                            value: Value::NoSuchInstance,
                        }),
                    }
                }
            }
            PduKind::GetNext | PduKind::GetBulk => {
                let mib = self.mib();
                let bulk = req.kind == PduKind::GetBulk && !v1;
                let non_rep = if bulk {
                    req.error_status.clamp(0, 64) as usize
                } else {
                    req.varbinds.len()
                };
                let reps = if bulk {
                    req.error_index.clamp(1, 64) as usize
                } else {
                    1
                };
                for (i, vb) in req.varbinds.iter().enumerate() {
                    let count = if i < non_rep { 1 } else { reps };
                    let mut cursor = vb.oid.clone();
                    for _ in 0..count {
                        let next = mib
                            .range((
                                std::ops::Bound::Excluded(cursor.clone()),
                                std::ops::Bound::Unbounded,
                            ))
                            .next();
                        match next {
                            Some((o, v)) => {
                                resp.varbinds.push(VarBind {
                                    oid: o.clone(),
                                    value: v.clone(),
                                });
                                cursor = o.clone();
                            }
                            None if v1 => return Some(fail(resp, error_status::NO_SUCH_NAME, i)),
                            None => {
                                resp.varbinds.push(VarBind {
                                    oid: cursor.clone(),
                                    value: Value::EndOfMibView,
                                });
                                break;
                            }
                        }
                    }
                }
            }
            PduKind::Set => {
                let n_outlets = self.spec.outlets;
                let mut changes = Vec::new();
                for (i, vb) in req.varbinds.iter().enumerate() {
                    if !writable {
                        let status = if v1 {
                            error_status::NO_SUCH_NAME
                        } else {
                            error_status::NO_ACCESS
                        };
                        return Some(fail(resp, status, i));
                    }
                    let outlet = (1..=n_outlets).find(|&n| control_oid(n) == vb.oid);
                    let Some(n) = outlet else {
                        let status = if v1 {
                            error_status::NO_SUCH_NAME
                        } else {
                            error_status::NOT_WRITABLE
                        };
                        return Some(fail(resp, status, i));
                    };
                    match vb.value {
                        Value::Integer(1) => changes.push((n, true)),
                        Value::Integer(2) => changes.push((n, false)),
                        Value::Integer(_) => {
                            let status = if v1 {
                                error_status::BAD_VALUE
                            } else {
                                error_status::WRONG_VALUE
                            };
                            return Some(fail(resp, status, i));
                        }
                        _ => {
                            let status = if v1 {
                                error_status::BAD_VALUE
                            } else {
                                error_status::WRONG_TYPE
                            };
                            return Some(fail(resp, status, i));
                        }
                    }
                }
                {
                    let mut s = self.state.lock();
                    for (n, on) in changes {
                        s.switch(n as usize - 1, on);
                    }
                }
                resp.varbinds = req.varbinds.clone();
            }
            _ => return None,
        }
        Some(resp)
    }
}

/// A running lab PDU; stops when dropped.
pub struct LabPdu {
    /// Where it answers.
    pub addr: SocketAddr,
    /// Its outlets, faults and counters.
    pub state: LabPduState,
    task: tokio::task::JoinHandle<()>,
}

impl LabPdu {
    /// Serves `state` per `spec` on `addr` (loopback only).
    pub async fn start(
        addr: SocketAddr,
        spec: PduSpec,
        state: LabPduState,
    ) -> std::io::Result<LabPdu> {
        if !addr.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the lab only binds loopback addresses",
            ));
        }
        let sock = UdpSocket::bind(addr).await?;
        let addr = sock.local_addr()?;
        let agent = PduAgent::new(state.clone(), spec, u32::from(addr.port()));
        let task = tokio::spawn(serve(sock, agent));
        Ok(LabPdu { addr, state, task })
    }

    /// `snmp://ADDR:PORT`.
    pub fn endpoint(&self) -> String {
        format!("snmp://{}:{}", self.addr.ip(), self.addr.port())
    }
}

impl Drop for LabPdu {
    fn drop(&mut self) {
        self.task.abort();
        let id = self.state.lock().id;
        FEEDS.forget(id);
    }
}

async fn serve(sock: UdpSocket, mut agent: PduAgent) {
    let mut buf = vec![0u8; 65_535];
    let mut rng = rand::rngs::StdRng::from_entropy();
    loop {
        let Ok((n, from)) = sock.recv_from(&mut buf).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let (drop_in, drop_out) = {
            let mut s = agent.state.lock();
            s.counters.received += 1;
            let count = s.counters.received;
            let f = &s.faults;
            let lost_in = f.silent
                || f.drop.contains(&count)
                || (f.loss > 0.0 && rng.gen_bool(f.loss.min(1.0)));
            let lost_out = f.loss > 0.0 && rng.gen_bool(f.loss.min(1.0));
            (lost_in, lost_out)
        };
        if drop_in {
            continue;
        }
        let Some(reply) = agent.handle(&buf[..n]) else {
            continue;
        };
        if drop_out {
            continue;
        }
        agent.state.lock().counters.answered += 1;
        let _ = sock.send_to(&reply, from).await;
    }
}
