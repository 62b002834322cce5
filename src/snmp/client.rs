//! An SNMP client over [`Transport`] driven by a [`Session`]: Get, Set and
//! walks, each one request/response exchange with retransmission inside the
//! caller's deadline, errors classified for the engine.
//!
//! Retransmission follows net-snmp's habit (a fixed number of tries, each
//! waiting longer) but never outlives the deadline; a retransmission of a v3
//! request is re-encoded (fresh msgID and engine time) and an answer to any
//! transmission of the request counts. Every error names the stage and the
//! agent, and never a community or password.

use super::ber::Oid;
use super::message::{error_status, Pdu, PduKind, Value, VarBind, Version};
use super::session::{get_pdu, Outgoing, Reply, ReportKind, Security, Session};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::udp::{Received, Transport};
use std::time::{Duration, Instant};

/// Largest datagram accepted (the largest UDP payload: a PDU's walk may be long).
const MAX_DATAGRAM: usize = 65_535;

/// Per-request timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Wait for the first answer (net-snmp's `-t`, 1 s).
    pub timeout: Duration,
    /// Transmissions per request, the first included (net-snmp's `-r 5` is 6).
    pub tries: u32,
}

impl Default for Timing {
    /// Native mode: 0.5 s, then 1 s per try, 6 tries (a silent agent — or
    /// a wrong community, which looks the same — fails in about 5.5 s).
    fn default() -> Self {
        Timing {
            timeout: Duration::from_millis(500),
            tries: 6,
        }
    }
}

/// Longest wait between two transmissions: 1 s, like net-snmp's fixed
/// interval. Longer gaps cost more tries inside a deadline than they save
/// under loss (the IPMI transport found the same, tests/reliability.rs).
const MAX_WAIT: Duration = Duration::from_secs(1);
/// GetBulk max-repetitions for walks (a PDU's outlet table fits in a few).
const BULK_REPETITIONS: i64 = 24;
/// Most bindings a walk collects (loop guard against a broken agent).
const MAX_WALK: usize = 10_000;

/// Counters for the record and the benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Datagrams sent.
    pub sent: u32,
    /// Datagrams received.
    pub received: u32,
    /// Retransmissions among the sent ones.
    pub retransmits: u32,
}

/// A client for one agent.
pub struct Client {
    t: Transport,
    session: Session,
    timing: Timing,
    retransmits: u32,
}

impl Client {
    /// Opens a socket to `host:port` and, for v3, discovers the engine.
    pub async fn connect(
        host: &str,
        port: u16,
        security: Security,
        timing: Timing,
        deadline: Option<Instant>,
    ) -> Result<Client, DriverError> {
        let deriving = Instant::now();
        let session = Session::new(security)
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        // Deriving v3 keys hashes a megabyte per password, here, before a
        // datagram leaves: if that used up the step's time, say so rather
        // than blame the PDU for an answer it was never asked for.
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(DriverError::new(
                ErrorKind::Timeout,
                Stage::Authenticate,
                format!(
                    "the step's time ran out before anything was sent to {host}:{port}: \
                     deriving the SNMPv3 keys took {} ms on this machine",
                    deriving.elapsed().as_millis()
                ),
            ));
        }
        let t = Transport::connect(host, port, deadline, MAX_DATAGRAM).await?;
        let mut c = Client {
            t,
            session,
            timing,
            retransmits: 0,
        };
        if c.session.needs_discovery() {
            c.discover(deadline).await?;
        }
        Ok(c)
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        Stats {
            sent: self.t.sent,
            received: self.t.received,
            retransmits: self.retransmits,
        }
    }

    /// The protocol version in use.
    pub fn version(&self) -> Version {
        self.session.security().version()
    }

    /// The agent's address and the security in use, for the record.
    pub fn describe(&self) -> String {
        let mut s = format!("{} {}", self.t.peer(), self.session.security().describe());
        if let Some(id) = self.session.engine_id() {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            s.push_str(&format!(", engine {hex}"));
        }
        s
    }

    async fn discover(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        let stage = Stage::Authenticate;
        let mut sent: Vec<Outgoing> = Vec::new();
        let started = Instant::now();
        let mut wait = self.timing.timeout;
        for _ in 0..self.timing.tries.max(1) {
            let out = self.session.discovery();
            self.t.send(&out.bytes).await;
            if !sent.is_empty() {
                self.retransmits += 1;
            }
            sent.push(out);
            match self.wait_reply(&sent, wait, deadline, stage).await? {
                Some(Reply::Resend) => return Ok(()),
                Some(Reply::Report(k)) => return Err(report_error(k, stage, &self.t)),
                Some(Reply::Response(_)) | None => {}
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            wait = (wait * 2).min(MAX_WAIT);
        }
        Err(self.no_answer(stage, "engine discovery", sent.len(), started))
    }

    /// Waits up to `wait` (and the deadline) for a reply to `sent`.
    async fn wait_reply(
        &mut self,
        sent: &[Outgoing],
        wait: Duration,
        deadline: Option<Instant>,
        stage: Stage,
    ) -> Result<Option<Reply>, DriverError> {
        let mut until = Instant::now() + wait;
        if let Some(d) = deadline {
            until = until.min(d);
        }
        loop {
            match self.t.recv_until(until).await {
                Received::Datagram(d) => {
                    let r = self
                        .session
                        .accept(&d, sent, Instant::now())
                        .map_err(|e| DriverError::new(ErrorKind::Protocol, stage, e.to_string()))?;
                    if let Some(r) = r {
                        return Ok(Some(r));
                    }
                }
                Received::Refused => {
                    return Err(DriverError::new(
                        ErrorKind::Unreachable,
                        stage,
                        format!(
                            "{} refused the datagram (ICMP port unreachable: no SNMP agent there)",
                            self.t.peer()
                        ),
                    )
                    .with_port_unreachable(true))
                }
                Received::Nothing => return Ok(None),
            }
        }
    }

    fn no_answer(&self, stage: Stage, what: &str, tries: usize, started: Instant) -> DriverError {
        let hint = match self.session.security() {
            Security::Community { .. } => {
                " (a wrong community or SNMP version goes unanswered too)"
            }
            Security::Usm(_) => "",
        };
        DriverError::new(
            ErrorKind::Timeout,
            stage,
            format!(
                "no answer from {} to {what} after {tries} attempt{} in {:.1}s{hint}",
                self.t.peer(),
                if tries == 1 { "" } else { "s" },
                started.elapsed().as_secs_f64()
            ),
        )
    }

    /// One request/response exchange; `what` names it in errors.
    pub async fn exchange(
        &mut self,
        pdu: Pdu,
        stage: Stage,
        what: &str,
        deadline: Option<Instant>,
    ) -> Result<Pdu, DriverError> {
        let mut sent: Vec<Outgoing> = Vec::new();
        let started = Instant::now();
        let mut wait = self.timing.timeout;
        let mut resyncs = 0;
        let mut tries = 0u32;
        while tries < self.timing.tries.max(1) {
            let out = self
                .session
                .request(&pdu, Instant::now())
                .map_err(|e| DriverError::new(ErrorKind::Config, stage, e.to_string()))?;
            self.t.send(&out.bytes).await;
            if tries > 0 {
                self.retransmits += 1;
            }
            tries += 1;
            sent.push(out);
            match self.wait_reply(&sent, wait, deadline, stage).await? {
                Some(Reply::Response(p)) => return Ok(p),
                Some(Reply::Resend) if resyncs < 2 => {
                    // The agent's clock was re-learned: send again at once,
                    // without counting it as a retransmission.
                    resyncs += 1;
                    tries -= 1;
                    continue;
                }
                Some(Reply::Resend) => {
                    return Err(DriverError::new(
                        ErrorKind::Protocol,
                        stage,
                        format!(
                            "{} keeps reporting our engine time as outside its window",
                            self.t.peer()
                        ),
                    ))
                }
                Some(Reply::Report(k)) => return Err(report_error(k, stage, &self.t)),
                None => {}
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            wait = (wait * 2).min(MAX_WAIT);
        }
        Err(self.no_answer(stage, what, sent.len(), started))
    }

    /// Reads `oids`; every one must exist.
    pub async fn get(
        &mut self,
        oids: &[Oid],
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Vec<VarBind>, DriverError> {
        let rid = self.session.new_request_id();
        let what = format!("get {}", oid_list(oids));
        let resp = self
            .exchange(get_pdu(rid, oids), stage, &what, deadline)
            .await?;
        check_status(&resp, stage, &what, false)?;
        if resp.varbinds.len() != oids.len() {
            return Err(DriverError::new(
                ErrorKind::Protocol,
                stage,
                format!(
                    "the answer to {what} has {} bindings, not {}",
                    resp.varbinds.len(),
                    oids.len()
                ),
            ));
        }
        for (vb, oid) in resp.varbinds.iter().zip(oids) {
            if vb.oid != *oid {
                return Err(DriverError::new(
                    ErrorKind::Protocol,
                    stage,
                    format!("the answer to {what} names {} instead of {oid}", vb.oid),
                ));
            }
            if vb.value.is_exception() {
                return Err(DriverError::new(
                    ErrorKind::DeviceError,
                    stage,
                    format!("the agent has no object {oid} ({})", vb.value.to_text()),
                ));
            }
        }
        Ok(resp.varbinds)
    }

    /// Writes `varbinds` in one Set.
    pub async fn set(
        &mut self,
        varbinds: Vec<VarBind>,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let rid = self.session.new_request_id();
        let oids: Vec<Oid> = varbinds.iter().map(|v| v.oid.clone()).collect();
        let what = format!("set {}", oid_list(&oids));
        let resp = self
            .exchange(
                Pdu::request(PduKind::Set, rid, varbinds),
                stage,
                &what,
                deadline,
            )
            .await?;
        check_status(&resp, stage, &what, true)
    }

    /// Every binding below `root`, in order (GetNext for v1, GetBulk otherwise).
    pub async fn walk(
        &mut self,
        root: &Oid,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Vec<VarBind>, DriverError> {
        let mut out: Vec<VarBind> = Vec::new();
        let mut cursor = root.clone();
        let what = format!("walk {root}");
        loop {
            let rid = self.session.new_request_id();
            let mut pdu = Pdu::request(PduKind::GetNext, rid, vec![VarBind::null(cursor.clone())]);
            if self.version() != Version::V1 {
                pdu.kind = PduKind::GetBulk;
                pdu.error_index = BULK_REPETITIONS;
            }
            let resp = self.exchange(pdu, stage, &what, deadline).await?;
            if self.version() == Version::V1 && resp.error_status == error_status::NO_SUCH_NAME {
                return Ok(out);
            }
            check_status(&resp, stage, &what, false)?;
            if resp.varbinds.is_empty() {
                return Ok(out);
            }
            for vb in resp.varbinds {
                if vb.value == Value::EndOfMibView || !vb.oid.starts_with(root) {
                    return Ok(out);
                }
                if vb.oid <= cursor {
                    return Err(DriverError::new(
                        ErrorKind::Protocol,
                        stage,
                        format!("the agent's walk of {root} went backwards at {}", vb.oid),
                    ));
                }
                cursor = vb.oid.clone();
                out.push(vb);
                if out.len() >= MAX_WALK {
                    return Err(DriverError::new(
                        ErrorKind::Protocol,
                        stage,
                        format!("the walk of {root} returned more than {MAX_WALK} objects"),
                    ));
                }
            }
        }
    }
}

fn oid_list(oids: &[Oid]) -> String {
    match oids {
        [one] => one.to_string(),
        [first, ..] => format!("{first} and {} more", oids.len() - 1),
        [] => "nothing".into(),
    }
}

/// Turns a Response's error-status into an error.
fn check_status(p: &Pdu, stage: Stage, what: &str, is_set: bool) -> Result<(), DriverError> {
    let s = p.error_status;
    if s == error_status::NO_ERROR {
        return Ok(());
    }
    let culprit = usize::try_from(p.error_index)
        .ok()
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| p.varbinds.get(i))
        .map(|vb| format!(" at {}", vb.oid))
        .unwrap_or_default();
    let kind = match s {
        error_status::AUTHORIZATION_ERROR
        | error_status::NO_ACCESS
        | error_status::NOT_WRITABLE
        | error_status::READ_ONLY => ErrorKind::PrivilegeNotObtained,
        // net-snmp answers a v1 Set through a read-only community with noSuchName.
        error_status::NO_SUCH_NAME if is_set => ErrorKind::PrivilegeNotObtained,
        error_status::GEN_ERR | error_status::COMMIT_FAILED => ErrorKind::DeviceError,
        _ => ErrorKind::DeviceError,
    };
    let hint = if kind == ErrorKind::PrivilegeNotObtained {
        " (a read-only community or user cannot switch outlets)"
    } else {
        ""
    };
    Err(DriverError::new(
        kind,
        stage,
        format!(
            "the agent refused to {what}: {}{culprit}{hint}",
            error_status::name(s)
        ),
    ))
}

/// A v3 Report as an engine error.
fn report_error(k: ReportKind, stage: Stage, t: &Transport) -> DriverError {
    let peer = t.peer();
    let (kind, msg) = match k {
        ReportKind::UnknownUserName => (
            ErrorKind::UsernameInvalid,
            format!("{peer} does not know the SNMPv3 user"),
        ),
        ReportKind::WrongDigests => (
            ErrorKind::PasswordInvalid,
            format!(
                "{peer} rejected the authentication (wrong authentication password or protocol)"
            ),
        ),
        ReportKind::DecryptionErrors => (
            ErrorKind::PasswordInvalid,
            format!("{peer} could not decrypt the request (wrong privacy password or protocol)"),
        ),
        ReportKind::UnsupportedSecLevel => (
            ErrorKind::CipherUnsupported,
            format!("{peer} does not accept this security level for the user"),
        ),
        ReportKind::NotInTimeWindow => (
            ErrorKind::Protocol,
            format!("{peer} reports our engine time outside its window"),
        ),
        ReportKind::UnknownEngineId => (
            ErrorKind::Protocol,
            format!("{peer} does not recognise its own engine ID in our request"),
        ),
        ReportKind::Other(o) => (ErrorKind::DeviceError, format!("{peer} sent report {o}")),
    };
    DriverError::new(kind, stage, msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snmp::session::{SecLevel, UsmUser};
    use crate::snmp::usm::{AuthProtocol, PrivProtocol};

    /// A step whose time the key derivation used up is named as local work,
    /// not as a PDU that did not answer (nothing was sent to it).
    #[tokio::test]
    async fn a_step_spent_deriving_keys_is_not_blamed_on_the_pdu() {
        let user = UsmUser {
            name: "fence".into(),
            level: SecLevel::AuthPriv,
            auth: Some((
                AuthProtocol::Sha1,
                crate::secret::Secret::from_str_value("authpass1"),
            )),
            privacy: Some((
                PrivProtocol::Aes128,
                crate::secret::Secret::from_str_value("privpass1"),
            )),
        };
        let err = match Client::connect(
            "192.0.2.1",
            161,
            Security::Usm(user),
            Timing::default(),
            Some(Instant::now()),
        )
        .await
        {
            Ok(_) => panic!("connected past its deadline"),
            Err(e) => e,
        };
        assert_eq!(err.kind, ErrorKind::Timeout);
        let text = err.to_string();
        assert!(
            text.contains("before anything was sent to 192.0.2.1:161"),
            "{text}"
        );
        assert!(text.contains("deriving the SNMPv3 keys took"), "{text}");
        assert!(
            !text.contains("authpass1") && !text.contains("privpass1"),
            "{text}"
        );
    }
}
