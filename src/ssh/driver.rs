//! The engine's [`PowerDriver`] over SSH: one connection per action, kept
//! between the steps and re-opened when lost; each status read or power
//! command is one remote command on its own exec channel, interpreted by
//! the configured [`Profile`].
//!
//! The SSH stack is async (russh on tokio), so many targets are fenced at
//! once on the caller's runtime without a thread each. Every step has a
//! concrete deadline — the engine's step deadline, cut by the configured
//! connect or command timeout — that [`session`] enforces around the whole
//! step; an abandoned action (a dropped future: cancellation) drops its
//! connection, which closes the socket.

use super::config::{Profile, SshConfig};
use super::profile::{self, Output};
use super::session::{self, Conn, ExecError, OpenError, Phase};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::Identity;
use crate::engine::power::{PowerCommand, PowerState};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `host` profile: after the power-off was started, how long to wait for
/// the command to report back before taking the silence as "accepted"
/// (the machine normally dies before it can answer).
const HOST_OFF_WAIT: Duration = Duration::from_secs(3);

/// Counters for the record and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// SSH connections opened (authenticated).
    pub sessions: u32,
    /// Connection attempts that failed.
    pub failed_sessions: u32,
    /// Authentication attempts (each one appears in the server's log).
    pub auth_attempts: u32,
    /// Remote commands started.
    pub commands: u32,
}

/// One SSH-reached power target as the engine drives it.
pub struct SshDriver {
    cfg: Arc<SshConfig>,
    /// The plug as sent (validated, UUID normalised).
    plug: Option<String>,
    conn: Option<Conn>,
    detail: Option<String>,
    stats: Stats,
    /// The host key the server offered at the last connection attempt.
    host_key: Option<String>,
}

fn until(deadline: Option<Instant>, bound: Duration) -> Instant {
    let b = Instant::now() + bound;
    match deadline {
        Some(d) => d.min(b),
        None => b,
    }
}

impl SshDriver {
    /// A driver for one target; checks the configuration (no connection yet).
    pub fn new(cfg: SshConfig) -> Result<Self, super::config::SshConfigError> {
        cfg.validate()?;
        let plug = match &cfg.profile {
            Profile::Virsh { plug: Some(p) } => Some(profile::virsh_plug(p)?),
            Profile::Custom { plug: Some(p), .. } => Some(p.clone()),
            _ => None,
        };
        Ok(SshDriver {
            cfg: Arc::new(cfg),
            plug,
            conn: None,
            detail: None,
            stats: Stats::default(),
            host_key: None,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The configuration in use.
    pub fn config(&self) -> &SshConfig {
        &self.cfg
    }

    /// The plug as it is sent (virsh: UUIDs normalised).
    pub fn plug(&self) -> Option<&str> {
        self.plug.as_deref()
    }

    /// The host key the server offered at the last connection attempt
    /// (`ssh-ed25519 SHA256:…`), whether it was trusted or not.
    pub fn host_key(&self) -> Option<&str> {
        self.host_key.as_deref()
    }

    /// Opens a connection (bounded by the connect timeout).
    async fn open(&mut self, deadline: Option<Instant>) -> Result<(), OpenError> {
        let cfg = self.cfg.clone();
        let until = until(deadline, cfg.connect_timeout);
        match session::open(cfg, until).await {
            Ok(conn) => {
                self.stats.sessions += 1;
                self.stats.auth_attempts += conn.auth_attempts;
                tracing::debug!(detail = %conn.detail, "ssh connected");
                self.detail = Some(self.describe(&conn));
                self.host_key = Some(conn.host_key.clone());
                self.conn = Some(conn);
                Ok(())
            }
            Err(e) => {
                self.stats.failed_sessions += 1;
                self.stats.auth_attempts += e.auth_attempts;
                self.host_key = e.offered_key.clone();
                Err(e)
            }
        }
    }

    fn describe(&self, conn: &Conn) -> String {
        let what = match (&self.cfg.profile, &self.plug) {
            (Profile::Virsh { .. }, Some(p)) => format!("profile virsh, domain {p}"),
            (Profile::Virsh { .. }, None) => "profile virsh".into(),
            (Profile::Host, _) => "profile host (the host seen from itself: off cannot be \
                 observed, an off is sent unverified; prove it with verify)"
                .into(),
            (Profile::Custom { .. }, Some(p)) => format!("profile custom, plug {p}"),
            (Profile::Custom { .. }, None) => "profile custom".into(),
        };
        let sudo = if self.cfg.use_sudo { ", via sudo" } else { "" };
        format!("{}, {what}{sudo}", conn.detail)
    }

    async fn ensure_open(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if self.conn.is_none() {
            self.open(deadline).await.map_err(|e| e.error)?;
        }
        Ok(())
    }

    /// Runs one command on the open connection (opening it if needed);
    /// a connection found dead before the command started is re-opened once.
    async fn run(
        &mut self,
        command: String,
        deadline: Option<Instant>,
        bound: Duration,
        stage: Stage,
    ) -> Result<Output, ExecError> {
        let mut reopened = false;
        loop {
            if let Err(error) = self.ensure_open(deadline).await {
                return Err(ExecError {
                    error,
                    started: false,
                    session_lost: true,
                });
            }
            let Some(conn) = self.conn.take() else {
                return Err(ExecError {
                    error: DriverError::new(ErrorKind::Protocol, stage, "no SSH connection"),
                    started: false,
                    session_lost: true,
                });
            };
            let until = until(deadline, bound);
            let cmd = command.clone();
            tracing::debug!(command = %cmd, "ssh exec");
            self.stats.commands += 1;
            // Dropped with this future when the action is abandoned, which
            // closes the connection.
            let r = conn.exec(&cmd, until, stage).await;
            match r {
                Ok(out) => {
                    self.conn = Some(conn);
                    tracing::debug!(status = ?out.status, output = %out.brief(), "ssh exec done");
                    return Ok(out);
                }
                Err(e) => {
                    if e.session_lost {
                        drop(conn);
                    } else {
                        self.conn = Some(conn);
                    }
                    if !e.started && e.session_lost && !reopened {
                        // A connection that died while idle (server restart,
                        // idle timeout): open a fresh one and try again.
                        tracing::debug!(error = %e.error, "ssh connection lost; reconnecting");
                        reopened = true;
                        self.stats.commands -= 1;
                        continue;
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Runs one command (rejoin configuration checks), bounded by the
    /// command timeout and `deadline`; returns its output whatever its exit
    /// status. Connects when needed; call [`PowerDriver::close`] afterwards.
    pub async fn exec(
        &mut self,
        command: &str,
        deadline: Option<Instant>,
    ) -> Result<crate::ssh::profile::Output, DriverError> {
        let bound = self.cfg.command_timeout;
        self.run(command.to_string(), deadline, bound, Stage::Status)
            .await
            .map_err(|e| e.error)
    }

    fn plug_required(&self, stage: Stage) -> Result<String, DriverError> {
        self.plug.clone().ok_or_else(|| {
            DriverError::new(
                ErrorKind::Config,
                stage,
                "no plug given (the domain name or UUID of the virtual machine)",
            )
        })
    }

    /// The domains on a virsh host with their states (`virsh list --all`,
    /// parsed as upstream `fence_virsh` does). Connects when needed; call
    /// [`PowerDriver::close`] afterwards.
    pub async fn list(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<(String, Option<PowerState>)>, DriverError> {
        let stage = Stage::Status;
        if !matches!(self.cfg.profile, Profile::Virsh { .. }) {
            return Err(DriverError::new(
                ErrorKind::Unsupported,
                stage,
                format!(
                    "the {} profile has no list of plugs (only virsh does)",
                    self.cfg.profile.name()
                ),
            ));
        }
        let cmd = profile::virsh_command(self.cfg.sudo(), &["list", "--all"]);
        let out = self
            .run(cmd, deadline, self.cfg.command_timeout, stage)
            .await
            .map_err(|e| e.error)?;
        if !out.success() {
            return Err(DriverError::new(
                ErrorKind::DeviceError,
                stage,
                format!(
                    "virsh list --all failed ({}): {}",
                    out.describe_exit(),
                    out.brief()
                ),
            ));
        }
        Ok(profile::virsh_list(&out.stdout)
            .into_iter()
            .map(|d| (d.name, d.state))
            .collect())
    }

    /// `host` profile: on when a login works and `true` runs. Never off: a
    /// host that cannot be reached (refused, silent, a name that does not
    /// resolve, a stopped sshd) may be off, partitioned or misnamed, and
    /// the profile cannot tell which, so its status is unreadable.
    async fn host_status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        let stage = Stage::Status;
        let probe = profile::HOST_PROBE.to_string();
        for _ in 0..2 {
            if self.conn.is_none() {
                match self.open(deadline).await {
                    Ok(()) => {}
                    Err(e) if e.phase == Phase::Tcp => return Err(self.host_unreadable(e.error)),
                    Err(e) => return Err(e.error),
                }
            }
            match self
                .run(probe.clone(), deadline, self.cfg.command_timeout, stage)
                .await
            {
                Ok(out) if out.success() => return Ok(PowerState::On),
                Ok(out) => {
                    return Err(DriverError::new(
                        ErrorKind::StatusUnreadable,
                        stage,
                        format!(
                            "the host answered, but `true` failed ({}): {}",
                            out.describe_exit(),
                            out.brief()
                        ),
                    ))
                }
                // The connection died under us: look again with a fresh one.
                Err(e) if e.session_lost && e.error.kind == ErrorKind::Unreachable => {
                    self.conn = None;
                    continue;
                }
                Err(e) => return Err(e.error),
            }
        }
        Err(DriverError::new(
            ErrorKind::StatusUnreadable,
            stage,
            "the host keeps dropping the SSH connection",
        ))
    }

    /// `host` profile: what an unreachable host means — nothing about its
    /// power (the status is unreadable, whatever the network said).
    fn host_unreadable(&self, e: DriverError) -> DriverError {
        DriverError::new(
            ErrorKind::StatusUnreadable,
            Stage::Status,
            format!(
                "cannot reach {} over SSH ({}): the host profile cannot tell a powered-off \
                 host from an unreachable one, so the power state is unknown",
                self.cfg.endpoint(),
                e.message
            ),
        )
    }

    /// `host` profile: a command that kills the machine (and so the
    /// connection): once started, a dropped connection or silence means
    /// accepted; a reported failure is an error.
    async fn host_kill(&mut self, cmd: &str, deadline: Option<Instant>) -> Result<(), DriverError> {
        let stage = Stage::Command;
        let cmd = profile::with_sudo(self.cfg.sudo(), cmd);
        let r = self.run(cmd.clone(), deadline, HOST_OFF_WAIT, stage).await;
        // Whatever happened, this connection is done.
        self.conn = None;
        match r {
            // Killed by a signal or no status at all: the machine went
            // down under the command, which is what was asked.
            Ok(out) if out.success() || out.status.is_none() || out.signal.is_some() => Ok(()),
            Ok(out) => Err(DriverError::new(
                ErrorKind::DeviceError,
                stage,
                format!("`{cmd}` failed ({}): {}", out.describe_exit(), out.brief()),
            )),
            Err(e) if e.started => {
                tracing::debug!(error = %e.error, "host profile: connection gone after the power command, as expected");
                Ok(())
            }
            Err(e) => Err(e.error),
        }
    }
}

impl PowerDriver for SshDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        if let (Some(_), Some(d)) = (&self.conn, &self.detail) {
            return Ok(d.clone());
        }
        match self.open(deadline).await {
            Ok(()) => Ok(self.detail.clone().unwrap_or_default()),
            Err(e) if e.phase == Phase::Tcp && matches!(self.cfg.profile, Profile::Host) => {
                Err(self.host_unreadable(e.error))
            }
            Err(e) => Err(e.error),
        }
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        let stage = Stage::Status;
        let cfg = self.cfg.clone();
        match &cfg.profile {
            Profile::Virsh { .. } => {
                let plug = self.plug_required(stage)?;
                let cmd =
                    profile::virsh_command(cfg.sudo(), &["domstate", &profile::shell_word(&plug)]);
                let out = self
                    .run(cmd, deadline, cfg.command_timeout, stage)
                    .await
                    .map_err(|e| e.error)?;
                profile::virsh_domstate(&out, &plug, cfg.missing_as_off)
            }
            Profile::Host => self.host_status(deadline).await,
            Profile::Custom {
                status,
                on_pattern,
                off_pattern,
                ..
            } => {
                let cmd = profile::expand_template(status, self.plug.as_deref())
                    .map_err(|m| DriverError::new(ErrorKind::Config, stage, m.to_string()))?;
                let cmd = profile::with_sudo(cfg.sudo(), &cmd);
                let out = self
                    .run(cmd, deadline, cfg.command_timeout, stage)
                    .await
                    .map_err(|e| e.error)?;
                profile::custom_status(&out, on_pattern, off_pattern)
            }
        }
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let stage = Stage::Command;
        let cfg = self.cfg.clone();
        let unsupported = |why: String| Err(DriverError::new(ErrorKind::Unsupported, stage, why));
        match &cfg.profile {
            Profile::Virsh { .. } => {
                let Some(verb) = profile::virsh_verb(command) else {
                    return unsupported(format!(
                        "virsh has no {command} command (use reboot with the on/off method)"
                    ));
                };
                let plug = self.plug_required(stage)?;
                let cmd = profile::virsh_command(cfg.sudo(), &[verb, &profile::shell_word(&plug)]);
                tracing::info!(%command, %cmd, "sending virsh command");
                let out = self
                    .run(cmd, deadline, cfg.command_timeout, stage)
                    .await
                    .map_err(|e| e.error)?;
                profile::virsh_command_result(&out, verb, &plug, cfg.missing_as_off)
            }
            Profile::Host => match command {
                PowerCommand::Off => self.host_kill(profile::HOST_OFF, deadline).await,
                PowerCommand::Reset | PowerCommand::Cycle => {
                    self.host_kill(profile::HOST_RESET, deadline).await
                }
                PowerCommand::On => unsupported(
                    "the host profile cannot power a machine on (nothing answers SSH while it is off); use a BMC method for on".into(),
                ),
                PowerCommand::Diag => {
                    unsupported("the host profile has no diagnostic interrupt".into())
                }
            },
            Profile::Custom { on, off, .. } => {
                let (template, what) = match command {
                    PowerCommand::On => (on, "on"),
                    PowerCommand::Off => (off, "off"),
                    other => {
                        return unsupported(format!(
                            "the custom profile defines no {other} command"
                        ))
                    }
                };
                let cmd = profile::expand_template(template, self.plug.as_deref())
                    .map_err(|m| DriverError::new(ErrorKind::Config, stage, m.to_string()))?;
                let cmd = profile::with_sudo(cfg.sudo(), &cmd);
                tracing::info!(%command, %cmd, "sending custom command");
                let out = self
                    .run(cmd, deadline, cfg.command_timeout, stage)
                    .await
                    .map_err(|e| e.error)?;
                profile::custom_command_result(&out, what)
            }
        }
    }

    /// virsh: `virsh domuuid DOMAIN`; custom: the profile's `uuid`
    /// template, if it has one; host: nothing (a login proves no identity).
    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let stage = Stage::Identity;
        let cfg = self.cfg.clone();
        let (cmd, what) = match &cfg.profile {
            Profile::Virsh { .. } => {
                let plug = self.plug_required(stage)?;
                let w = profile::shell_word(&plug);
                (
                    profile::virsh_command(cfg.sudo(), &["domuuid", &w]),
                    format!("virsh domuuid {}", profile::printable(&plug, 80)),
                )
            }
            Profile::Custom {
                uuid: Some(template),
                ..
            } => {
                let cmd = profile::expand_template(template, self.plug.as_deref())
                    .map_err(|m| DriverError::new(ErrorKind::Config, stage, m.to_string()))?;
                (
                    profile::with_sudo(cfg.sudo(), &cmd),
                    "the uuid command".to_string(),
                )
            }
            Profile::Custom { uuid: None, .. } | Profile::Host => return Ok(Identity::default()),
        };
        let out = self
            .run(cmd, deadline, cfg.command_timeout, stage)
            .await
            .map_err(|e| e.error)?;
        profile::uuid_answer(&out, &what)
    }

    fn observes_off(&self) -> bool {
        !matches!(self.cfg.profile, Profile::Host)
    }

    async fn close(&mut self) {
        self.detail = None;
        if let Some(conn) = self.conn.take() {
            conn.close().await;
        }
    }
}
