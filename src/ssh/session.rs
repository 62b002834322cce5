//! One SSH connection (pure Rust, through `russh` on tokio): TCP connect,
//! key exchange, host key check, authentication, and one exec channel per
//! command with its output captured up to a cap.
//!
//! Everything here is async and bounded: [`open`] runs under one deadline
//! (resolution, TCP connect, handshake, host key, authentication), and
//! [`Conn::exec`] under another. When a deadline passes, or the caller drops
//! the future (cancellation), the pending work is dropped with it; dropping
//! the [`Conn`] (its session handle) ends the connection's background task,
//! which shuts the socket down.
//!
//! The host key is decided by [`hostkey::verify`] from inside the key
//! exchange (russh's `check_server_key`, called once the server has proved
//! it holds the key and before anything else is sent), so a refused key
//! ends the connection before any credential leaves.
//!
//! Failures are classified into [`ErrorKind`]s here, with the stage named
//! in words in the message (TCP connect, SSH handshake, host key check,
//! authentication, the command). russh logs through the `log` crate, which
//! fencekit does not forward; nothing here logs a secret.

use super::config::{SshAuth, SshConfig};
use super::hostkey::{self, Trust};
use super::profile::Output;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use russh::client::{self, AuthResult, Handle, KeyboardInteractiveAuthResponse};
use russh::keys::agent::client::AgentClient;
use russh::keys::agent::AgentIdentity;
use russh::keys::{HashAlg, PrivateKeyWithHashAlg, PublicKeyBase64, PublicKeyOrCertificate};
use russh::{ChannelMsg, Disconnect, MethodKind, MethodSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

/// Most output kept from one command (stdout and stderr together); more
/// is an error, so that a runaway command cannot exhaust memory.
pub const MAX_OUTPUT: usize = 1 << 20;
/// How long the session goodbye may take.
pub const CLOSE_WAIT: Duration = Duration::from_millis(300);
/// Most keyboard-interactive rounds answered before giving up (OpenSSH's
/// PAM conversation needs one).
const MAX_KBD_ROUNDS: usize = 4;

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
    /// The host key the server offered (`ssh-ed25519 SHA256:…`), trusted
    /// or not, when the handshake got that far (`check` compares it with
    /// its baseline).
    pub offered_key: Option<String>,
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

/// What the key exchange showed, shared between the session task (where
/// russh calls the [`Client`] handler) and [`open`].
#[derive(Default)]
struct Seen {
    /// The host key check: the key blob and how it was trusted, or why not.
    verdict: Option<Result<(Vec<u8>, Trust), DriverError>>,
    /// The server's identification string.
    banner: String,
    /// Negotiated key exchange.
    kex: String,
    /// Negotiated cipher.
    cipher: String,
    /// The host key offered first, described, trusted or not.
    offered: Option<String>,
}

/// russh's callbacks: the host key check and the record of what was
/// negotiated; everything else keeps russh's defaults.
struct Client {
    cfg: Arc<SshConfig>,
    seen: Arc<Mutex<Seen>>,
}

impl Client {
    fn record(&self, f: impl FnOnce(&mut Seen)) {
        if let Ok(mut s) = self.seen.lock() {
            f(&mut s);
        }
    }
}

impl client::Handler for Client {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let verdict = match key {
            PublicKeyOrCertificate::PublicKey { key, .. } => {
                let blob = key.public_key_bytes();
                let offered = hostkey::describe_key(&blob);
                self.record(|s| {
                    s.offered.get_or_insert(offered);
                });
                hostkey::verify(&self.cfg.host_keys, &self.cfg.host, self.cfg.port, &blob)
                    .map(|trust| (blob, trust))
            }
            // Never asked for (no certificate algorithms are offered).
            PublicKeyOrCertificate::Certificate(_) => Err(DriverError::new(
                ErrorKind::Protocol,
                Stage::Authenticate,
                format!(
                    "{} presented a host certificate, which fencekit does not check",
                    self.cfg.endpoint()
                ),
            )),
        };
        let mut ok = verdict.is_ok();
        self.record(|s| match (&s.verdict, verdict) {
            // A re-key must show the key that was trusted at first.
            (Some(Ok((first, _))), Ok((blob, _))) => {
                if *first != blob {
                    ok = false;
                    s.verdict = Some(Err(DriverError::new(
                        ErrorKind::Protocol,
                        Stage::Authenticate,
                        "the server changed its host key during the session",
                    )));
                }
            }
            (_, v) => s.verdict = Some(v),
        });
        Ok(ok)
    }

    async fn kex_done(
        &mut self,
        _shared_secret: Option<&[u8]>,
        names: &russh::Names,
        session: &mut client::Session,
    ) -> Result<(), Self::Error> {
        let banner = String::from_utf8_lossy(session.remote_sshid())
            .trim()
            .to_string();
        let kex = names.kex.as_ref().to_string();
        let cipher = names.cipher.as_ref().to_string();
        self.record(|s| {
            if s.kex.is_empty() {
                s.banner = banner;
                s.kex = kex;
                s.cipher = cipher;
            }
        });
        Ok(())
    }
}

/// An authenticated SSH connection. Dropping it ends the connection.
pub struct Conn {
    handle: Handle<Client>,
    /// `user@host:port`.
    pub endpoint: String,
    /// What was negotiated and how the host was trusted, for the record.
    pub detail: String,
    /// The host key's description (`ssh-ed25519 SHA256:…`).
    pub host_key: String,
    /// Authentication attempts made.
    pub auth_attempts: u32,
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
    cfg: &'a Arc<SshConfig>,
    started: Instant,
    endpoint: String,
    auth_attempts: u32,
    /// The step under way (for a timeout's message).
    step: &'static str,
    phase: Phase,
    seen: Arc<Mutex<Seen>>,
    /// The trusted host key's description and how it was trusted.
    key: Option<(String, String)>,
}

impl Opener<'_> {
    fn fail(&self, error: DriverError, phase: Phase) -> OpenError {
        OpenError {
            error,
            phase,
            auth_attempts: self.auth_attempts,
            offered_key: self.seen.lock().ok().and_then(|s| s.offered.clone()),
        }
    }

    fn ssh_fail(&self, kind: ErrorKind, msg: String) -> OpenError {
        self.fail(DriverError::new(kind, Stage::Authenticate, msg), Phase::Ssh)
    }

    /// Classifies a russh error from set-up step `what`.
    fn classify(&self, what: &str, e: &russh::Error) -> OpenError {
        use russh::Error as E;
        let (kind, msg) = match e {
            E::ConnectionTimeout | E::InactivityTimeout | E::KeepaliveTimeout | E::Elapsed(_) => {
                return self.fail(
                    timed_out(
                        Stage::Authenticate,
                        what,
                        &self.endpoint,
                        self.started.elapsed(),
                    ),
                    Phase::Ssh,
                )
            }
            E::IO(_)
            | E::Disconnect
            | E::HUP
            | E::SendError
            | E::RecvError
            | E::Version
            | E::Join(_) => (
                ErrorKind::Unreachable,
                format!(
                    "{what}: {} closed the connection ({e}); is it an SSH server, and does it accept this client (MaxStartups, AllowUsers, tcp wrappers)?",
                    self.endpoint
                ),
            ),
            E::NoCommonAlgo { .. } | E::UnknownAlgo | E::KexInit | E::Kex => (
                ErrorKind::CipherUnsupported,
                format!(
                    "{what}: no key exchange, cipher or host key algorithm in common with {} ({e})",
                    self.endpoint
                ),
            ),
            _ => (
                ErrorKind::Protocol,
                format!("{what} with {} failed: {e}", self.endpoint),
            ),
        };
        self.ssh_fail(kind, msg)
    }

    async fn tcp(&mut self) -> Result<TcpStream, OpenError> {
        let stage = Stage::Authenticate;
        self.step = "name resolution";
        let addrs: Vec<SocketAddr> =
            match tokio::net::lookup_host((self.cfg.host.as_str(), self.cfg.port)).await {
                Ok(a) => a.collect(),
                Err(e) => {
                    return Err(self.fail(
                        DriverError::new(
                            ErrorKind::Unreachable,
                            stage,
                            format!("cannot resolve '{}': {e}", self.cfg.host),
                        ),
                        Phase::Tcp,
                    ))
                }
            };
        self.step = "TCP connect";
        let mut last: Option<DriverError> = None;
        for addr in &addrs {
            match TcpStream::connect(addr).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Err(e) => {
                    let why = match e.kind() {
                        std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                        _ => e.to_string(),
                    };
                    last = Some(DriverError::new(
                        ErrorKind::Unreachable,
                        stage,
                        format!("TCP connect to {addr}: {why}"),
                    ));
                }
            }
        }
        Err(self.fail(
            last.unwrap_or_else(|| {
                DriverError::new(
                    ErrorKind::Unreachable,
                    stage,
                    format!("'{}' resolves to no address", self.cfg.host),
                )
            }),
            Phase::Tcp,
        ))
    }

    /// TCP, handshake, host key, authentication (unbounded: [`open`] puts
    /// the deadline around it).
    async fn run(&mut self) -> Result<Conn, OpenError> {
        let tcp = self.tcp().await?;
        self.phase = Phase::Ssh;
        self.step = "SSH handshake";
        let config = Arc::new(client::Config {
            nodelay: true,
            inactivity_timeout: None,
            ..Default::default()
        });
        let handler = Client {
            cfg: self.cfg.clone(),
            seen: self.seen.clone(),
        };
        let connected = client::connect_stream(config, tcp, handler).await;
        // The host key verdict explains a refused key better than russh's
        // "unknown server key", and must be positive before anything else.
        let verdict = self.seen.lock().ok().and_then(|s| s.verdict.clone());
        let mut handle = match (connected, verdict) {
            (Ok(h), Some(Ok((blob, trust)))) => {
                if let Trust::AcceptedUnsaved(why) = &trust {
                    tracing::debug!(%why, "host key accepted for this run only");
                }
                self.key = Some((hostkey::describe_key(&blob), trust.describe()));
                h
            }
            (_, Some(Err(e))) => return Err(self.fail(e, Phase::Ssh)),
            (Err(e), _) => return Err(self.classify("SSH handshake", &e)),
            (Ok(_), None) => {
                return Err(self.ssh_fail(
                    ErrorKind::Protocol,
                    format!("{} sent no host key", self.endpoint),
                ))
            }
        };
        self.step = "authentication";
        self.authenticate(&mut handle).await?;
        let (banner, kex, cipher) = self
            .seen
            .lock()
            .map(|s| (s.banner.clone(), s.kex.clone(), s.cipher.clone()))
            .unwrap_or_default();
        let (host_key, trust) = self.key.take().unwrap_or_default();
        let detail = format!(
            "ssh {} ({banner}), kex {kex}, cipher {cipher}, host key {host_key} {trust}, {}",
            self.endpoint,
            self.cfg.auth.describe()
        );
        Ok(Conn {
            handle,
            endpoint: self.endpoint.clone(),
            detail,
            host_key,
            auth_attempts: self.auth_attempts,
        })
    }
}

impl Opener<'_> {
    fn rejected(&self, what: &str) -> OpenError {
        self.ssh_fail(
            ErrorKind::PasswordInvalid,
            format!(
                "{} rejected the {what} for user {} (one attempt made)",
                self.endpoint, self.cfg.username
            ),
        )
    }

    fn config(&self, msg: String) -> OpenError {
        self.ssh_fail(ErrorKind::Config, msg)
    }

    async fn authenticate(&mut self, h: &mut Handle<Client>) -> Result<(), OpenError> {
        let user = self.cfg.username.clone();
        let cfg = self.cfg.clone();
        match &cfg.auth {
            SshAuth::Password(secret) => {
                let password = std::str::from_utf8(secret.expose())
                    .map_err(|_| self.config("the password is not UTF-8".into()))?;
                // The "none" probe that lists the methods is not counted
                // against MaxAuthTries by OpenSSH.
                let methods = match h.authenticate_none(user.as_str()).await {
                    Ok(AuthResult::Success) => return Ok(()),
                    Ok(AuthResult::Failure {
                        remaining_methods, ..
                    }) => remaining_methods,
                    Err(e) => return Err(self.classify("authentication", &e)),
                };
                let offers = |k: MethodKind| methods.contains(&k);
                if offers(MethodKind::Password) {
                    self.auth_attempts += 1;
                    match h.authenticate_password(user.as_str(), password).await {
                        Ok(AuthResult::Success) => Ok(()),
                        Ok(AuthResult::Failure { .. }) => Err(self.rejected("password")),
                        Err(e) => Err(self.classify("authentication", &e)),
                    }
                } else if offers(MethodKind::KeyboardInteractive) {
                    self.auth_attempts += 1;
                    self.keyboard_interactive(h, &user, password).await
                } else {
                    Err(self.ssh_fail(
                        ErrorKind::Unsupported,
                        format!(
                            "{} does not accept passwords (it offers: {}); use a key or the ssh-agent",
                            self.endpoint,
                            method_names(&methods)
                        ),
                    ))
                }
            }
            SshAuth::Key { path, passphrase } => {
                let pass = match passphrase {
                    Some(p) => Some(
                        std::str::from_utf8(p.expose())
                            .map_err(|_| self.config("the key passphrase is not UTF-8".into()))?,
                    ),
                    None => None,
                };
                let key = russh::keys::load_secret_key(path, pass).map_err(|e| {
                    self.config(format!(
                        "cannot use the private key {}: {} (wrong or missing passphrase, or a key format fencekit cannot read)",
                        path.display(),
                        key_error(&e)
                    ))
                })?;
                let hash = if key.algorithm().is_rsa() {
                    self.rsa_hash(h).await?
                } else {
                    None
                };
                self.auth_attempts += 1;
                let key = PrivateKeyWithHashAlg::new(Arc::new(key), hash);
                match h.authenticate_publickey(user.as_str(), key).await {
                    Ok(AuthResult::Success) => Ok(()),
                    Ok(AuthResult::Failure { .. }) => {
                        Err(self.rejected(&format!("key {}", path.display())))
                    }
                    Err(e) => Err(self.classify("authentication", &e)),
                }
            }
            SshAuth::Agent => self.agent(h, &user).await,
        }
    }

    /// The RSA signature hash: the best the server lists in its
    /// `server-sig-algs` (rsa-sha2-512, then rsa-sha2-256, then SHA-1's
    /// ssh-rsa); rsa-sha2-256 when it lists none (RFC 8332's choice).
    async fn rsa_hash(&self, h: &Handle<Client>) -> Result<Option<HashAlg>, OpenError> {
        match h.best_supported_rsa_hash().await {
            Ok(Some(best)) => Ok(best),
            Ok(None) => Ok(Some(HashAlg::Sha256)),
            Err(e) => Err(self.classify("authentication", &e)),
        }
    }

    /// Keyboard-interactive with the password: the first prompt that does
    /// not echo gets it, once; any other prompt an empty answer.
    async fn keyboard_interactive(
        &mut self,
        h: &mut Handle<Client>,
        user: &str,
        password: &str,
    ) -> Result<(), OpenError> {
        let mut answered = false;
        let mut reply = h.authenticate_keyboard_interactive_start(user, None).await;
        for _ in 0..MAX_KBD_ROUNDS {
            match reply {
                Ok(KeyboardInteractiveAuthResponse::Success) => return Ok(()),
                Ok(KeyboardInteractiveAuthResponse::Failure { .. }) => {
                    return Err(self.rejected("password"))
                }
                Ok(KeyboardInteractiveAuthResponse::InfoRequest { prompts, .. }) => {
                    let answers = prompts
                        .iter()
                        .map(|p| {
                            if !p.echo && !answered {
                                answered = true;
                                password.to_string()
                            } else {
                                String::new()
                            }
                        })
                        .collect();
                    reply = h.authenticate_keyboard_interactive_respond(answers).await;
                }
                Err(e) => return Err(self.classify("authentication", &e)),
            }
        }
        Err(self.ssh_fail(
            ErrorKind::Protocol,
            format!(
                "{} kept asking keyboard-interactive questions ({MAX_KBD_ROUNDS} rounds)",
                self.endpoint
            ),
        ))
    }

    /// Every key the ssh-agent holds, in its order, until one is accepted.
    async fn agent(&mut self, h: &mut Handle<Client>, user: &str) -> Result<(), OpenError> {
        let socket = self
            .cfg
            .agent_socket
            .clone()
            .or_else(|| std::env::var_os("SSH_AUTH_SOCK").map(Into::into));
        let Some(socket) = socket else {
            return Err(self.config(
                "cannot reach the ssh-agent at SSH_AUTH_SOCK unset: set SSH_AUTH_SOCK or give the agent socket".into(),
            ));
        };
        let where_ = socket.display().to_string();
        let mut agent = AgentClient::connect_uds(&socket)
            .await
            .map_err(|e| self.config(format!("cannot reach the ssh-agent at {where_}: {e}")))?;
        let ids = agent
            .request_identities()
            .await
            .map_err(|e| self.config(format!("the ssh-agent did not list its keys: {e}")))?;
        let keys: Vec<_> = ids
            .iter()
            .filter_map(|id| match id {
                AgentIdentity::PublicKey { key, .. } => Some(key.clone()),
                AgentIdentity::Certificate { .. } => None,
            })
            .collect();
        if keys.is_empty() {
            return Err(self.config(format!("the ssh-agent at {where_} holds no keys")));
        }
        let mut last = String::new();
        for key in &keys {
            let hash = if key.algorithm().is_rsa() {
                self.rsa_hash(h).await?
            } else {
                None
            };
            self.auth_attempts += 1;
            match h
                .authenticate_publickey_with(user, key.clone(), hash, &mut agent)
                .await
            {
                Ok(AuthResult::Success) => return Ok(()),
                Ok(AuthResult::Failure { .. }) => last = "refused".into(),
                Err(russh::AgentAuthError::Key(e)) => {
                    last = format!("the agent could not sign: {e}")
                }
                Err(russh::AgentAuthError::Send(_)) => {
                    return Err(self.classify("authentication", &russh::Error::SendError))
                }
            }
        }
        Err(self.ssh_fail(
            ErrorKind::PasswordInvalid,
            format!(
                "{} accepted none of the {} key(s) in the ssh-agent for user {user} ({last})",
                self.endpoint,
                keys.len()
            ),
        ))
    }
}

/// `password,publickey` for messages.
fn method_names(m: &MethodSet) -> String {
    let v: Vec<&str> = m.iter().map(<&str>::from).collect();
    if v.is_empty() {
        "nothing".into()
    } else {
        v.join(",")
    }
}

/// A key loading error in words (never the passphrase: russh's errors do
/// not carry it).
fn key_error(e: &russh::keys::Error) -> String {
    match e {
        russh::keys::Error::KeyIsEncrypted => {
            "the key is encrypted and no passphrase was given".into()
        }
        russh::keys::Error::IO(io) => io.to_string(),
        other => other.to_string(),
    }
}

/// Connects, checks the host key, authenticates; all before `until`.
pub async fn open(cfg: Arc<SshConfig>, until: Instant) -> Result<Conn, OpenError> {
    let mut o = Opener {
        cfg: &cfg,
        started: Instant::now(),
        endpoint: cfg.endpoint(),
        auth_attempts: 0,
        step: "TCP connect",
        phase: Phase::Tcp,
        seen: Arc::default(),
        key: None,
    };
    let r = tokio::time::timeout_at(until.into(), o.run()).await;
    match r {
        Ok(r) => r,
        Err(_) => Err(o.fail(
            timed_out(
                Stage::Authenticate,
                o.step,
                &o.endpoint,
                o.started.elapsed(),
            ),
            o.phase,
        )),
    }
}

impl Conn {
    /// Runs `command` on its own exec channel (no pty) and returns its exit
    /// status and output (stdout and stderr kept apart, at most
    /// [`MAX_OUTPUT`] bytes together), all before `until`.
    pub async fn exec(
        &self,
        command: &str,
        until: Instant,
        stage: Stage,
    ) -> Result<Output, ExecError> {
        let started_at = Instant::now();
        let short = super::profile::printable(command, 80);
        let mut started = false;
        let r = tokio::time::timeout_at(
            until.into(),
            self.exec_inner(command, stage, &short, &mut started),
        )
        .await;
        match r {
            Ok(r) => r,
            Err(_) => Err(ExecError {
                error: DriverError::new(
                    ErrorKind::Timeout,
                    stage,
                    format!(
                        "`{short}` on {} did not finish within {:.1}s",
                        self.endpoint,
                        started_at.elapsed().as_secs_f64()
                    ),
                ),
                started,
                session_lost: true,
            }),
        }
    }

    async fn exec_inner(
        &self,
        command: &str,
        stage: Stage,
        short: &str,
        started: &mut bool,
    ) -> Result<Output, ExecError> {
        let fail = |kind: ErrorKind, what: String, started: bool, lost: bool| ExecError {
            error: DriverError::new(
                kind,
                stage,
                format!("`{short}` on {}: {what}", self.endpoint),
            ),
            started,
            session_lost: lost,
        };
        let lost = |e: &russh::Error, started: bool| match e {
            russh::Error::ChannelOpenFailure(_) | russh::Error::RequestDenied => fail(
                ErrorKind::DeviceError,
                "the server refused to run it".into(),
                started,
                false,
            ),
            _ => fail(
                ErrorKind::Unreachable,
                format!("connection lost: {e}"),
                started,
                true,
            ),
        };
        let mut ch = self
            .handle
            .channel_open_session()
            .await
            .map_err(|e| lost(&e, false))?;
        ch.exec(true, command).await.map_err(|e| lost(&e, false))?;
        let mut texts: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
        let mut status = None;
        let mut signal = None;
        loop {
            let Some(msg) = ch.wait().await else {
                // The channel ended without its close: the connection is gone.
                return Err(fail(
                    ErrorKind::Unreachable,
                    "connection lost".into(),
                    *started,
                    true,
                ));
            };
            let (i, data) = match msg {
                ChannelMsg::Success => {
                    *started = true;
                    continue;
                }
                ChannelMsg::Failure if !*started => {
                    let _ = ch.close().await;
                    return Err(fail(
                        ErrorKind::DeviceError,
                        "the server refused to run it".into(),
                        false,
                        false,
                    ));
                }
                ChannelMsg::Data { data } => (0, data),
                ChannelMsg::ExtendedData { data, .. } => (1, data),
                ChannelMsg::ExitStatus { exit_status } => {
                    *started = true;
                    status = Some(exit_status as i32);
                    continue;
                }
                ChannelMsg::ExitSignal { signal_name, .. } => {
                    *started = true;
                    signal = Some(sig_name(&signal_name));
                    continue;
                }
                ChannelMsg::Close => break,
                _ => continue,
            };
            *started = true;
            if texts[0].len() + texts[1].len() + data.len() > MAX_OUTPUT {
                return Err(fail(
                    ErrorKind::Protocol,
                    format!(
                        "printed more than {} KiB; output cut, command abandoned",
                        MAX_OUTPUT / 1024
                    ),
                    true,
                    true,
                ));
            }
            texts[i].extend_from_slice(&data);
        }
        let [stdout, stderr] = texts;
        Ok(Output {
            status,
            signal: signal.filter(|s: &String| !s.is_empty()),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        })
    }

    /// Says goodbye (bounded by [`CLOSE_WAIT`]); the connection ends when
    /// `self` is dropped in any case.
    pub async fn close(self) {
        let bye = self
            .handle
            .disconnect(Disconnect::ByApplication, "fencekit done", "");
        let _ = tokio::time::timeout(CLOSE_WAIT, bye).await;
    }
}

/// A signal's name as OpenSSH sends it (`KILL`, `TERM`, …).
fn sig_name(s: &russh::Sig) -> String {
    use russh::Sig;
    match s {
        Sig::ABRT => "ABRT",
        Sig::ALRM => "ALRM",
        Sig::FPE => "FPE",
        Sig::HUP => "HUP",
        Sig::ILL => "ILL",
        Sig::INT => "INT",
        Sig::KILL => "KILL",
        Sig::PIPE => "PIPE",
        Sig::QUIT => "QUIT",
        Sig::SEGV => "SEGV",
        Sig::TERM => "TERM",
        Sig::USR1 => "USR1",
        Sig::Custom(name) => name.as_str(),
    }
    .to_string()
}
