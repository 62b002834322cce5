//! One RIBCL exchange with an iLO: a TCP connection to its port, TLS 1.2
//! or 1.3 (rustls; an iLO that offers only SSL 3.0 or TLS 1.0 is refused
//! by name, never reached with them), one request document written, and
//! every document it answers read until it closes the connection (as it
//! does after `</RIBCL>`), within the exchange's bound. Each exchange is
//! its own connection and its own login, as HPE's own scripting tools do
//! it: nothing is left open between them.
//!
//! A power change whose answer did not come whole is [`Lost::Silent`] (it
//! may have been carried out): the driver reads the state back and never
//! sends it again. The password is only ever in the request's bytes,
//! zeroed once written.

use super::model::{self, Answer, Section, MAX_ANSWER};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::platform::lost::Lost;
use crate::secret::Secret;
use crate::tls::{SeenCert, TlsTrust};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Who answers, as messages name it.
pub const DEVICE: &str = "the iLO";

/// Exchanges with one iLO.
pub struct Client {
    host: String,
    port: u16,
    user: String,
    password: Secret,
    tls: Arc<rustls::ClientConfig>,
    seen: SeenCert,
    timeout: Duration,
    requests: u32,
}

impl Client {
    /// A client for `host:port` as `user`, each exchange bound by
    /// `timeout`; sends nothing.
    pub fn new(
        host: &str,
        port: u16,
        trust: &TlsTrust,
        user: &str,
        password: Secret,
        timeout: Duration,
    ) -> Result<Client, DriverError> {
        let (tls, seen, _) = crate::tls::client_config(trust)
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Negotiate, e.to_string()))?;
        Ok(Client {
            host: host.to_string(),
            port,
            user: user.to_string(),
            password,
            tls: Arc::new(tls),
            seen,
            timeout,
            requests: 0,
        })
    }

    /// Exchanges made.
    pub fn requests(&self) -> u32 {
        self.requests
    }

    /// The certificate the iLO presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.seen.fingerprint()
    }

    fn address(&self) -> String {
        crate::platform::target::host_port(&self.host, self.port)
    }

    fn err(&self, kind: ErrorKind, stage: Stage, m: String) -> DriverError {
        DriverError::new(kind, stage, m)
    }

    /// Sends `command` in `section` and reads the whole answer; a refusal
    /// in it is an error (a refused login: [`ErrorKind::PasswordInvalid`]).
    /// `what` names it in messages.
    pub async fn exchange(
        &mut self,
        section: Section,
        command: &str,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<Answer, Lost> {
        let until = deadline.min(Instant::now() + self.timeout);
        let until_t = tokio::time::Instant::from_std(until);
        let bound = until.saturating_duration_since(Instant::now());
        let timed_out = |c: &Client, sent: bool| {
            let e = c.err(
                ErrorKind::Timeout,
                stage,
                format!(
                    "{what}: {DEVICE} at {} did not answer within {:.1} s",
                    c.address(),
                    bound.as_secs_f64()
                ),
            );
            match sent {
                true => Lost::Silent(e),
                false => Lost::Error(e),
            }
        };
        self.requests += 1;
        // An address is connected to as it is: a name only is resolved (on
        // tokio's blocking pool, a thread of its own).
        let ip = self
            .host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .ok();
        let connect = async {
            match ip {
                Some(ip) => tokio::net::TcpStream::connect((ip, self.port)).await,
                None => tokio::net::TcpStream::connect((self.host.as_str(), self.port)).await,
            }
        };
        let tcp = match tokio::time::timeout_at(until_t, connect).await {
            Err(_) => return Err(timed_out(self, false)),
            Ok(Err(e)) => {
                return Err(Lost::Error(self.err(
                    ErrorKind::Unreachable,
                    stage,
                    format!("{what}: cannot reach {DEVICE} at {} ({e})", self.address()),
                )))
            }
            Ok(Ok(s)) => s,
        };
        let _ = tcp.set_nodelay(true);
        let name = rustls::pki_types::ServerName::try_from(self.host.clone()).map_err(|_| {
            Lost::Error(self.err(
                ErrorKind::Config,
                stage,
                format!("'{}' is not a host name TLS can check", self.host),
            ))
        })?;
        let connector = tokio_rustls::TlsConnector::from(self.tls.clone());
        let mut tls = match tokio::time::timeout_at(until_t, connector.connect(name, tcp)).await {
            Err(_) => return Err(timed_out(self, false)),
            Ok(Err(e)) => {
                let why = match crate::tls::find_rustls(&e) {
                    Some(r) => crate::tls::explain(r, DEVICE),
                    None if e.kind() == std::io::ErrorKind::UnexpectedEof
                        || e.kind() == std::io::ErrorKind::ConnectionReset =>
                    {
                        format!(
                            "{DEVICE} closed the connection during the TLS handshake ({e}): it may \
                             speak only SSL 3.0 or TLS 1.0, which fencekit never uses \
                             (docs/ilo.md, \"Old TLS\")"
                        )
                    }
                    None => e.to_string(),
                };
                return Err(Lost::Error(self.err(
                    ErrorKind::Protocol,
                    stage,
                    format!("{what}: TLS with {} failed: {why}", self.address()),
                )));
            }
            Ok(Ok(s)) => s,
        };
        let doc = model::document(&self.user, &self.password, section, command);
        match tokio::time::timeout_at(until_t, async {
            tls.write_all(&doc).await?;
            tls.flush().await
        })
        .await
        {
            Err(_) => return Err(timed_out(self, true)),
            Ok(Err(e)) => {
                let e = self.err(
                    ErrorKind::Unreachable,
                    stage,
                    format!("{what}: the connection to {} broke ({e})", self.address()),
                );
                return Err(Lost::Silent(e));
            }
            Ok(Ok(())) => {}
        }
        drop(doc);
        let mut buf = Vec::with_capacity(2048);
        let mut chunk = [0u8; 8192];
        loop {
            match tokio::time::timeout_at(until_t, tls.read(&mut chunk)).await {
                Err(_) => {
                    // The whole answer never came: a refusal in it still counts.
                    let a = model::answer(&buf);
                    if let Some(r) = a.refusal {
                        return Err(Lost::Error(self.refused(&r, what, stage)));
                    }
                    return Err(timed_out(self, true));
                }
                Ok(Ok(0)) => break,
                Ok(Ok(n)) => {
                    if buf.len() + n > MAX_ANSWER {
                        return Err(Lost::Silent(self.err(
                            ErrorKind::Protocol,
                            stage,
                            format!("{what}: {DEVICE} answered more than {MAX_ANSWER} bytes"),
                        )));
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                // iLO firmware commonly closes without TLS close_notify.
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Ok(Err(e)) => {
                    let a = model::answer(&buf);
                    if let Some(r) = a.refusal {
                        return Err(Lost::Error(self.refused(&r, what, stage)));
                    }
                    return Err(Lost::Silent(self.err(
                        ErrorKind::Unreachable,
                        stage,
                        format!("{what}: the connection to {} broke ({e})", self.address()),
                    )));
                }
            }
        }
        let a = model::answer(&buf);
        if let Some(r) = &a.refusal {
            return Err(Lost::Error(self.refused(r, what, stage)));
        }
        if a.responses == 0 {
            return Err(Lost::Silent(self.err(
                ErrorKind::Protocol,
                stage,
                format!(
                    "{what}: {DEVICE} closed the connection with no RIBCL RESPONSE ({} bytes)",
                    buf.len()
                ),
            )));
        }
        Ok(a)
    }

    fn refused(&self, r: &model::Refusal, what: &str, stage: Stage) -> DriverError {
        if r.login_refused() {
            return self.err(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                format!(
                    "{DEVICE} refused the login of '{}' (STATUS 0x{:04X}: {})",
                    model::printable(&self.user, 64),
                    r.status,
                    r.message
                ),
            );
        }
        self.err(
            ErrorKind::DeviceError,
            stage,
            format!(
                "{what}: {DEVICE} answered STATUS 0x{:04X}: {}",
                r.status, r.message
            ),
        )
    }
}
