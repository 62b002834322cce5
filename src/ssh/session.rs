//! One SSH connection, blocking (libssh2 through the `ssh2` crate): TCP
//! connect, key exchange, host key check, authentication, and one exec
//! channel per command with its output captured up to a cap.
//!
//! Everything here blocks, so [`crate::ssh::driver`] runs it on tokio's
//! blocking pool. Every libssh2 call is bounded: the session timeout is set
//! to what is left before the step's deadline before each call, the TCP
//! connect uses the same budget, and a [`Killer`] lets the async side shut
//! the socket down when it gives up (deadline or cancellation), which makes
//! any call still blocked in libssh2 return at once.
//!
//! Failures are classified into [`ErrorKind`]s here, with the stage named
//! in words in the message (TCP connect, SSH handshake, host key check,
//! authentication, the command).

use super::config::{SshAuth, SshConfig};
use super::hostkey::{self, Trust};
use super::profile::Output;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use ssh2::{ErrorCode, KeyboardInteractivePrompt, MethodType, Prompt, Session};
use std::io::Read;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most output kept from one command (stdout and stderr together); more
/// is an error, so that a runaway command cannot exhaust memory.
pub const MAX_OUTPUT: usize = 1 << 20;
/// How long the session goodbye may take.
pub const CLOSE_WAIT: Duration = Duration::from_millis(300);

/// libssh2 error codes used in classification (libssh2.h, `LIBSSH2_ERROR_*`).
mod code {
    pub const BANNER_RECV: i32 = -2;
    pub const BANNER_SEND: i32 = -3;
    pub const KEX_FAILURE: i32 = -5;
    pub const SOCKET_SEND: i32 = -7;
    pub const KEY_EXCHANGE_FAILURE: i32 = -8;
    pub const TIMEOUT: i32 = -9;
    pub const SOCKET_DISCONNECT: i32 = -13;
    pub const PASSWORD_EXPIRED: i32 = -15;
    pub const FILE: i32 = -16;
    pub const METHOD_NONE: i32 = -17;
    pub const AUTHENTICATION_FAILED: i32 = -18;
    pub const PUBLICKEY_UNVERIFIED: i32 = -19;
    pub const CHANNEL_FAILURE: i32 = -21;
    pub const CHANNEL_REQUEST_DENIED: i32 = -22;
    pub const SOCKET_TIMEOUT: i32 = -30;
    pub const REQUEST_DENIED: i32 = -32;
    pub const METHOD_NOT_SUPPORTED: i32 = -33;
    pub const AGENT_PROTOCOL: i32 = -42;
    pub const SOCKET_RECV: i32 = -43;
    pub const KEYFILE_AUTH_FAILED: i32 = -48;
    pub const ALGO_UNSUPPORTED: i32 = -51;
}

fn raw_code(e: &ssh2::Error) -> i32 {
    match e.code() {
        ErrorCode::Session(c) | ErrorCode::SFTP(c) => c,
    }
}

/// Shuts the socket down from another thread, so that a libssh2 call
/// blocked on it returns. Filled as soon as the TCP connection exists.
#[derive(Clone, Default)]
pub struct Killer(Arc<Mutex<Option<TcpStream>>>);

impl Killer {
    fn arm(&self, s: &TcpStream) {
        if let (Ok(mut slot), Ok(c)) = (self.0.lock(), s.try_clone()) {
            *slot = Some(c);
        }
    }

    /// Shuts the connection down (both directions); harmless when unarmed.
    pub fn kill(&self) {
        if let Ok(mut slot) = self.0.lock() {
            if let Some(s) = slot.take() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }

    /// Forgets the socket without touching it.
    pub fn disarm(&self) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = None;
        }
    }
}

/// How far a failed connection attempt got: a host that refuses or does
/// not answer TCP is "off" to the `host` profile; anything later is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Name resolution or TCP connect.
    Tcp,
    /// Handshake, host key, authentication.
    Ssh,
}

/// A failed connection attempt.
#[derive(Clone, Debug)]
pub struct OpenError {
    /// What went wrong.
    pub error: DriverError,
    /// How far it got.
    pub phase: Phase,
    /// Authentication attempts made (each one shows in the server's log).
    pub auth_attempts: u32,
}

/// A failed command.
#[derive(Clone, Debug)]
pub struct ExecError {
    /// What went wrong.
    pub error: DriverError,
    /// The server accepted the exec request (the command was started).
    pub started: bool,
    /// The connection is unusable afterwards.
    pub session_lost: bool,
}

/// An authenticated SSH connection.
pub struct Conn {
    sess: Session,
    /// `user@host:port`.
    pub endpoint: String,
    /// What was negotiated and how the host was trusted, for the record.
    pub detail: String,
    /// The host key's description (`ssh-ed25519 SHA256:…`).
    pub host_key: String,
    /// Authentication attempts made.
    pub auth_attempts: u32,
}

/// Milliseconds left before `until`, at least 1; `None` once it passed.
fn budget_ms(until: Instant) -> Option<u32> {
    let left = until.checked_duration_since(Instant::now())?;
    if left.is_zero() {
        return None;
    }
    Some(left.as_millis().clamp(1, u32::MAX as u128) as u32)
}

fn timed_out(stage: Stage, what: &str, endpoint: &str, budget: Duration) -> DriverError {
    DriverError::new(
        ErrorKind::Timeout,
        stage,
        format!(
            "{what}: no answer from {endpoint} within {:.1}s",
            budget.as_secs_f64()
        ),
    )
}

struct Opener<'a> {
    cfg: &'a SshConfig,
    until: Instant,
    started: Instant,
    endpoint: String,
    auth_attempts: u32,
}

impl Opener<'_> {
    fn fail(&self, error: DriverError, phase: Phase) -> OpenError {
        OpenError {
            error,
            phase,
            auth_attempts: self.auth_attempts,
        }
    }

    /// Sets the session timeout to what is left, or fails when nothing is.
    fn arm(&self, sess: &Session, what: &str, phase: Phase) -> Result<(), OpenError> {
        match budget_ms(self.until) {
            Some(ms) => {
                sess.set_timeout(ms);
                Ok(())
            }
            None => Err(self.fail(
                timed_out(
                    Stage::Authenticate,
                    what,
                    &self.endpoint,
                    self.started.elapsed(),
                ),
                phase,
            )),
        }
    }

    /// Classifies a libssh2 error from set-up step `what`.
    fn classify(&self, what: &str, e: &ssh2::Error) -> OpenError {
        let stage = Stage::Authenticate;
        let c = raw_code(e);
        let (kind, msg) = match c {
            code::TIMEOUT | code::SOCKET_TIMEOUT => {
                return self.fail(
                    timed_out(stage, what, &self.endpoint, self.started.elapsed()),
                    Phase::Ssh,
                )
            }
            code::BANNER_RECV
            | code::BANNER_SEND
            | code::SOCKET_DISCONNECT
            | code::SOCKET_RECV
            | code::SOCKET_SEND => (
                ErrorKind::Unreachable,
                format!(
                    "{what}: {} closed the connection ({}); is it an SSH server, and does it accept this client (MaxStartups, AllowUsers, tcp wrappers)?",
                    self.endpoint,
                    e.message()
                ),
            ),
            code::KEX_FAILURE | code::KEY_EXCHANGE_FAILURE | code::ALGO_UNSUPPORTED => (
                ErrorKind::CipherUnsupported,
                format!(
                    "{what}: no key exchange, cipher or host key algorithm in common with {} ({})",
                    self.endpoint,
                    e.message()
                ),
            ),
            _ => (
                ErrorKind::Protocol,
                format!("{what} with {} failed: {}", self.endpoint, e.message()),
            ),
        };
        self.fail(DriverError::new(kind, stage, msg), Phase::Ssh)
    }

    fn tcp(&self) -> Result<TcpStream, OpenError> {
        let stage = Stage::Authenticate;
        let addrs: Vec<SocketAddr> = (self.cfg.host.as_str(), self.cfg.port)
            .to_socket_addrs()
            .map_err(|e| {
                self.fail(
                    DriverError::new(
                        ErrorKind::Unreachable,
                        stage,
                        format!("cannot resolve '{}': {e}", self.cfg.host),
                    ),
                    Phase::Tcp,
                )
            })?
            .collect();
        let mut last: Option<DriverError> = None;
        for addr in &addrs {
            let Some(left) = self.until.checked_duration_since(Instant::now()) else {
                break;
            };
            if left.is_zero() {
                break;
            }
            match TcpStream::connect_timeout(addr, left) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Err(e) => {
                    let (kind, why) = match e.kind() {
                        std::io::ErrorKind::ConnectionRefused => {
                            (ErrorKind::Unreachable, "connection refused".to_string())
                        }
                        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => (
                            ErrorKind::Timeout,
                            format!("no answer within {:.1}s", left.as_secs_f64()),
                        ),
                        _ => (ErrorKind::Unreachable, e.to_string()),
                    };
                    last = Some(DriverError::new(
                        kind,
                        stage,
                        format!("TCP connect to {addr}: {why}"),
                    ));
                }
            }
        }
        Err(self.fail(
            last.unwrap_or_else(|| {
                if addrs.is_empty() {
                    DriverError::new(
                        ErrorKind::Unreachable,
                        stage,
                        format!("'{}' resolves to no address", self.cfg.host),
                    )
                } else {
                    timed_out(stage, "TCP connect", &self.endpoint, self.started.elapsed())
                }
            }),
            Phase::Tcp,
        ))
    }

    fn authenticate(&mut self, sess: &Session) -> Result<(), OpenError> {
        let stage = Stage::Authenticate;
        let user = self.cfg.username.as_str();
        match &self.cfg.auth {
            SshAuth::Password(secret) => {
                let password = std::str::from_utf8(secret.expose()).map_err(|_| {
                    self.fail(
                        DriverError::new(ErrorKind::Config, stage, "the password is not UTF-8"),
                        Phase::Ssh,
                    )
                })?;
                // The "none" probe that lists the methods is not counted
                // against MaxAuthTries by OpenSSH.
                self.arm(sess, "authentication", Phase::Ssh)?;
                let methods = match sess.auth_methods(user) {
                    Ok(m) => m.to_string(),
                    Err(_) if sess.authenticated() => return Ok(()),
                    Err(e) => return Err(self.classify("authentication", &e)),
                };
                self.arm(sess, "authentication", Phase::Ssh)?;
                self.auth_attempts += 1;
                let r = if methods.split(',').any(|m| m == "password") {
                    sess.userauth_password(user, password)
                } else if methods.split(',').any(|m| m == "keyboard-interactive") {
                    let mut p = PasswordPrompt {
                        password,
                        answered: false,
                    };
                    sess.userauth_keyboard_interactive(user, &mut p)
                } else {
                    self.auth_attempts -= 1;
                    return Err(self.fail(
                        DriverError::new(
                            ErrorKind::Unsupported,
                            stage,
                            format!(
                                "{} does not accept passwords (it offers: {methods}); use a key or the ssh-agent",
                                self.endpoint
                            ),
                        ),
                        Phase::Ssh,
                    ));
                };
                r.map_err(|e| self.auth_error(&e, "password"))
            }
            SshAuth::Key { path, passphrase } => {
                let pass = match passphrase {
                    Some(p) => Some(std::str::from_utf8(p.expose()).map_err(|_| {
                        self.fail(
                            DriverError::new(
                                ErrorKind::Config,
                                stage,
                                "the key passphrase is not UTF-8",
                            ),
                            Phase::Ssh,
                        )
                    })?),
                    None => None,
                };
                self.arm(sess, "authentication", Phase::Ssh)?;
                self.auth_attempts += 1;
                sess.userauth_pubkey_file(user, None, path, pass)
                    .map_err(|e| match raw_code(&e) {
                        code::FILE | code::KEYFILE_AUTH_FAILED => {
                            self.auth_attempts -= 1;
                            self.fail(
                                DriverError::new(
                                    ErrorKind::Config,
                                    stage,
                                    format!(
                                        "cannot use the private key {}: {} (wrong or missing passphrase, or a key format libssh2 cannot read)",
                                        path.display(),
                                        e.message()
                                    ),
                                ),
                                Phase::Ssh,
                            )
                        }
                        _ => self.auth_error(&e, &format!("key {}", path.display())),
                    })
            }
            SshAuth::Agent => {
                self.arm(sess, "authentication", Phase::Ssh)?;
                let config_err = |msg: String| DriverError::new(ErrorKind::Config, stage, msg);
                let mut agent = sess
                    .agent()
                    .map_err(|e| self.fail(config_err(format!("ssh-agent: {e}")), Phase::Ssh))?;
                if let Some(p) = &self.cfg.agent_socket {
                    agent.set_identity_path(p).map_err(|e| {
                        self.fail(
                            config_err(format!("ssh-agent socket {}: {e}", p.display())),
                            Phase::Ssh,
                        )
                    })?;
                }
                let where_ = self
                    .cfg
                    .agent_socket
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .or_else(|| std::env::var("SSH_AUTH_SOCK").ok())
                    .unwrap_or_else(|| "SSH_AUTH_SOCK unset".into());
                agent.connect().map_err(|e| {
                    self.fail(
                        config_err(format!(
                            "cannot reach the ssh-agent at {where_}: {}",
                            e.message()
                        )),
                        Phase::Ssh,
                    )
                })?;
                agent.list_identities().map_err(|e| {
                    self.fail(
                        config_err(format!(
                            "the ssh-agent did not list its keys: {}",
                            e.message()
                        )),
                        Phase::Ssh,
                    )
                })?;
                let ids = agent.identities().unwrap_or_default();
                if ids.is_empty() {
                    return Err(self.fail(
                        config_err(format!("the ssh-agent at {where_} holds no keys")),
                        Phase::Ssh,
                    ));
                }
                let mut last = None;
                for id in &ids {
                    self.arm(sess, "authentication", Phase::Ssh)?;
                    self.auth_attempts += 1;
                    match agent.userauth(user, id) {
                        Ok(()) => {
                            let _ = agent.disconnect();
                            return Ok(());
                        }
                        Err(e) => match raw_code(&e) {
                            code::AUTHENTICATION_FAILED
                            | code::PUBLICKEY_UNVERIFIED
                            | code::AGENT_PROTOCOL => last = Some(e),
                            _ => return Err(self.classify("authentication", &e)),
                        },
                    }
                }
                let _ = agent.disconnect();
                let why = last.map(|e| e.message().to_string()).unwrap_or_default();
                Err(self.fail(
                    DriverError::new(
                        ErrorKind::PasswordInvalid,
                        stage,
                        format!(
                            "{} accepted none of the {} key(s) in the ssh-agent for user {user} ({why})",
                            self.endpoint,
                            ids.len()
                        ),
                    ),
                    Phase::Ssh,
                ))
            }
        }
    }

    fn auth_error(&self, e: &ssh2::Error, what: &str) -> OpenError {
        let stage = Stage::Authenticate;
        match raw_code(e) {
            code::AUTHENTICATION_FAILED | code::PUBLICKEY_UNVERIFIED | code::METHOD_NONE => self
                .fail(
                    DriverError::new(
                        ErrorKind::PasswordInvalid,
                        stage,
                        format!(
                            "{} rejected the {what} for user {} (one attempt made)",
                            self.endpoint, self.cfg.username
                        ),
                    ),
                    Phase::Ssh,
                ),
            code::PASSWORD_EXPIRED => self.fail(
                DriverError::new(
                    ErrorKind::PasswordInvalid,
                    stage,
                    format!(
                        "the password of {} on {} has expired",
                        self.cfg.username, self.endpoint
                    ),
                ),
                Phase::Ssh,
            ),
            code::METHOD_NOT_SUPPORTED => self.fail(
                DriverError::new(
                    ErrorKind::Unsupported,
                    stage,
                    format!("{} does not accept {what} authentication", self.endpoint),
                ),
                Phase::Ssh,
            ),
            _ => self.classify("authentication", e),
        }
    }
}

/// Answers keyboard-interactive prompts with the password, once.
struct PasswordPrompt<'a> {
    password: &'a str,
    answered: bool,
}

impl KeyboardInteractivePrompt for PasswordPrompt<'_> {
    fn prompt<'a>(
        &mut self,
        _username: &str,
        _instructions: &str,
        prompts: &[Prompt<'a>],
    ) -> Vec<String> {
        prompts
            .iter()
            .map(|p| {
                if !p.echo && !self.answered {
                    self.answered = true;
                    self.password.to_string()
                } else {
                    String::new()
                }
            })
            .collect()
    }
}

/// Connects, checks the host key, authenticates; all before `until`.
pub fn open(cfg: &SshConfig, until: Instant, killer: &Killer) -> Result<Conn, OpenError> {
    let mut o = Opener {
        cfg,
        until,
        started: Instant::now(),
        endpoint: cfg.endpoint(),
        auth_attempts: 0,
    };
    let tcp = o.tcp()?;
    killer.arm(&tcp);
    let mut sess = Session::new().map_err(|e| o.classify("SSH set-up", &e))?;
    sess.set_tcp_stream(tcp);
    sess.set_blocking(true);
    sess.set_compress(false);
    o.arm(&sess, "SSH handshake", Phase::Ssh)?;
    sess.handshake()
        .map_err(|e| o.classify("SSH handshake", &e))?;
    let (blob, _) = sess.host_key().ok_or_else(|| {
        o.fail(
            DriverError::new(
                ErrorKind::Protocol,
                Stage::Authenticate,
                format!("{} sent no host key", o.endpoint),
            ),
            Phase::Ssh,
        )
    })?;
    let blob = blob.to_vec();
    let host_key = hostkey::describe_key(&blob);
    let trust = hostkey::verify(&sess, &cfg.host_keys, &cfg.host, cfg.port, &blob)
        .map_err(|e| o.fail(e, Phase::Ssh))?;
    if let Trust::AcceptedUnsaved(why) = &trust {
        tracing::debug!(%why, "host key accepted for this run only");
    }
    o.authenticate(&sess)?;
    if !sess.authenticated() {
        return Err(o.fail(
            DriverError::new(
                ErrorKind::PasswordInvalid,
                Stage::Authenticate,
                format!("{} did not complete authentication", o.endpoint),
            ),
            Phase::Ssh,
        ));
    }
    let banner = sess.banner().unwrap_or("").trim().to_string();
    let kex = sess.methods(MethodType::Kex).unwrap_or("?").to_string();
    let cipher = sess.methods(MethodType::CryptCs).unwrap_or("?").to_string();
    let detail = format!(
        "ssh {} ({banner}), kex {kex}, cipher {cipher}, host key {host_key} {}, {}",
        o.endpoint,
        trust.describe(),
        cfg.auth.describe()
    );
    Ok(Conn {
        sess,
        endpoint: o.endpoint.clone(),
        detail,
        host_key,
        auth_attempts: o.auth_attempts,
    })
}

impl Conn {
    /// Runs `command` on its own exec channel (no pty) and returns its exit
    /// status and output (stdout and stderr merged, at most [`MAX_OUTPUT`]
    /// bytes), all before `until`.
    pub fn exec(&self, command: &str, until: Instant, stage: Stage) -> Result<Output, ExecError> {
        let started_at = Instant::now();
        let short = super::profile::printable(command, 80);
        let mut started = false;
        let err = |e: DriverError, started: bool, lost: bool| {
            if lost {
                // The channel and session are dropped next; in blocking mode
                // freeing a channel whose command still runs waits for it.
                self.sess.set_blocking(false);
            }
            ExecError {
                error: e,
                started,
                session_lost: lost,
            }
        };
        let timeout = |started: bool| {
            err(
                DriverError::new(
                    ErrorKind::Timeout,
                    stage,
                    format!(
                        "`{short}` on {} did not finish within {:.1}s",
                        self.endpoint,
                        started_at.elapsed().as_secs_f64()
                    ),
                ),
                started,
                true,
            )
        };
        let lost = |e: &ssh2::Error, started: bool| {
            let c = raw_code(e);
            if c == code::TIMEOUT || c == code::SOCKET_TIMEOUT {
                return None;
            }
            let (kind, what) = match c {
                code::CHANNEL_FAILURE | code::CHANNEL_REQUEST_DENIED | code::REQUEST_DENIED => (
                    ErrorKind::DeviceError,
                    "the server refused to run it".to_string(),
                ),
                _ => (
                    ErrorKind::Unreachable,
                    format!("connection lost: {}", e.message()),
                ),
            };
            Some(err(
                DriverError::new(
                    kind,
                    stage,
                    format!("`{short}` on {}: {what}", self.endpoint),
                ),
                started,
                kind == ErrorKind::Unreachable,
            ))
        };
        macro_rules! budget {
            () => {
                match budget_ms(until) {
                    Some(ms) => self.sess.set_timeout(ms),
                    None => return Err(timeout(started)),
                }
            };
        }
        budget!();
        let mut ch = match self.sess.channel_session() {
            Ok(c) => c,
            Err(e) => return Err(lost(&e, false).unwrap_or_else(|| timeout(false))),
        };
        budget!();
        if let Err(e) = ch.exec(command) {
            return Err(lost(&e, false).unwrap_or_else(|| timeout(false)));
        }
        started = true;
        let mut buf = vec![0u8; 16 * 1024];
        // stdout to its end, then stderr: libssh2 queues stderr meanwhile
        // (a command that floods stderr beyond the channel window before
        // closing stdout stalls until the deadline, which then ends it).
        let mut texts: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
        for (i, stream) in [ch.stream(0), ch.stderr()].iter_mut().enumerate() {
            loop {
                budget!();
                match stream.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if texts[0].len() + texts[1].len() + n > MAX_OUTPUT {
                            return Err(err(
                            DriverError::new(
                                ErrorKind::Protocol,
                                stage,
                                format!(
                                    "`{short}` on {} printed more than {} KiB; output cut, command abandoned",
                                    self.endpoint,
                                    MAX_OUTPUT / 1024
                                ),
                            ),
                            true,
                            true,
                        ));
                        }
                        texts[i].extend_from_slice(&buf[..n]);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                        return Err(timeout(true))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(e) => {
                        return Err(err(
                            DriverError::new(
                                ErrorKind::Unreachable,
                                stage,
                                format!("`{short}` on {}: connection lost: {e}", self.endpoint),
                            ),
                            true,
                            true,
                        ))
                    }
                }
            }
        }
        budget!();
        // The exit status arrives with (before) the channel close.
        let closed = ch.wait_close();
        let signal = ch
            .exit_signal()
            .ok()
            .and_then(|s| s.exit_signal)
            .filter(|s| !s.is_empty());
        let status = match closed {
            Ok(()) => ch.exit_status().ok(),
            Err(_) => None,
        };
        let [stdout, stderr] = texts;
        Ok(Output {
            status,
            signal,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        })
    }

    /// Says goodbye (bounded by [`CLOSE_WAIT`]).
    pub fn close(self) {
        self.sess.set_timeout(CLOSE_WAIT.as_millis() as u32);
        let _ = self.sess.disconnect(None, "fencekit done", None);
    }
}
