//! The engine's `PowerDriver` for a node's outlets on one ePowerSwitch,
//! through its hidden page over plain HTTP (the 8M+ has no TLS).
//!
//! A read is `GET /PAGE` (Basic authentication when a user is given); a
//! switch is `GET /PAGE?Pnn=0|1`, one request per outlet, each sent once.
//! The node is on while any of its outlets reads on and off only when every
//! one reads off; an outlet the page does not carry is refused before
//! anything is switched. A switch request whose answer was lost may have
//! been carried out: it is never sent again, the other outlets still get
//! theirs, and the command ends "outcome unknown" so that the engine reads
//! the page back. The page answering a switch shows the state from before
//! it (the relay moves afterwards), so it is never taken as confirmation.

use super::config::EpsConfig;
use super::model::{self, Line};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::{PowerCommand, PowerState};
use crate::http::{Failed, Reply, Request, Setup};
use crate::platform::{Listed, PlatformDriver, PlugEntry};
use crate::secret::Secret;
use base64::Engine;
use reqwest::header::AUTHORIZATION;
use reqwest::Method;
use std::time::{Duration, Instant};

/// How messages name the device.
pub const DEVICE: &str = "the ePowerSwitch";
const DEFAULT_LIMIT: Duration = Duration::from_secs(60);

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// A node's outlets on one switch.
pub struct EpsDriver {
    cfg: EpsConfig,
    http: crate::http::Client,
    basic: Option<Secret>,
    timeout: Duration,
    monitor: bool,
    detail: Option<String>,
    warnings: Vec<String>,
}

impl EpsDriver {
    /// A driver for `cfg`; `password` is sent only with a user.
    pub fn new(
        cfg: EpsConfig,
        password: Secret,
        timeout: Duration,
    ) -> Result<EpsDriver, DriverError> {
        cfg.validate()
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let http = crate::http::Client::new(Setup {
            trust: None,
            ..Setup::new(DEVICE)
        })?;
        let basic = cfg.user.as_deref().map(|user| {
            http.scrub().remember(password.expose());
            let mut pair = format!("{user}:").into_bytes();
            pair.extend_from_slice(password.expose());
            let mut b = b"Basic ".to_vec();
            b.extend_from_slice(
                base64::engine::general_purpose::STANDARD
                    .encode(&pair)
                    .as_bytes(),
            );
            zeroize::Zeroize::zeroize(&mut pair);
            Secret::new(b)
        });
        Ok(EpsDriver {
            cfg,
            http,
            basic,
            timeout,
            monitor: false,
            detail: None,
            warnings: Vec::new(),
        })
    }

    /// For `monitor`: one authenticated read of the page.
    pub fn for_monitor(mut self) -> EpsDriver {
        self.monitor = true;
        self
    }

    fn err(&self, kind: ErrorKind, stage: Stage, m: String) -> DriverError {
        self.http.error(kind, stage, m)
    }

    async fn send(
        &mut self,
        query: Option<&str>,
        what: &str,
        stage: Stage,
        d: Instant,
    ) -> Result<Reply, Failed> {
        let url = match query {
            Some(q) => format!("{}?{q}", self.cfg.page_url()),
            None => self.cfg.page_url(),
        };
        let mut req = Request::new(Method::GET, &url, what, stage).within(self.timeout, Some(d));
        req.max_body = model::MAX_PAGE;
        if let Some(b) = &self.basic {
            req.add_secret(AUTHORIZATION, b.expose());
        }
        self.http.send(&req).await
    }

    fn refused(&self, reply: &Reply, what: &str, stage: Stage) -> DriverError {
        let user = self.cfg.user.as_deref().unwrap_or("");
        let (kind, text) = match reply.status {
            401 | 403 if self.basic.is_none() => (
                ErrorKind::PasswordInvalid,
                format!(
                    "{DEVICE} asks for a login (HTTP {}) to {what}: give the user and password",
                    reply.status
                ),
            ),
            401 | 403 => (
                ErrorKind::PasswordInvalid,
                format!(
                    "{DEVICE} refused the user '{}' or its password (HTTP {})",
                    crate::http::text::printable(user, 80),
                    reply.status
                ),
            ),
            404 => (
                ErrorKind::Config,
                format!(
                    "{DEVICE} has no page /{} (HTTP 404): is the hidden page enabled, and \
                     --page right?",
                    self.cfg.page
                ),
            ),
            s => (
                ErrorKind::DeviceError,
                format!("{DEVICE} refused to {what} (HTTP {s}: {})", reply.text(120)),
            ),
        };
        self.err(kind, stage, text)
    }

    /// The page's outlet lines.
    async fn page(
        &mut self,
        what: &str,
        stage: Stage,
        d: Instant,
    ) -> Result<Vec<Line>, DriverError> {
        let reply = self
            .send(None, what, stage, d)
            .await
            .map_err(Failed::into_error)?;
        if !reply.ok() {
            return Err(self.refused(&reply, what, stage));
        }
        let text = String::from_utf8_lossy(&reply.body);
        model::lines(&text).map_err(|why| {
            self.err(
                ErrorKind::Protocol,
                stage,
                format!("{what}: {why} ({})", reply.text(80)),
            )
        })
    }

    async fn read(&mut self, stage: Stage, d: Instant) -> Result<PowerState, DriverError> {
        let lines = self.page("read the hidden page", stage, d).await?;
        let mut on = Vec::new();
        for o in &self.cfg.outlets {
            match model::state(&lines, o) {
                Ok(Some(PowerState::Off)) => {}
                Ok(Some(_)) => on.push(o.clone()),
                Ok(None) => {
                    return Err(self.err(
                        ErrorKind::Config,
                        stage,
                        format!(
                            "{DEVICE}'s page has no outlet {o} (it carries {}): refusing to \
                             guess",
                            lines
                                .iter()
                                .map(|l| l.outlet.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ))
                }
                Err(why) => return Err(self.err(ErrorKind::StatusUnreadable, stage, why)),
            }
        }
        let n = self.cfg.outlets.len();
        self.detail = Some(match on.is_empty() {
            true => format!("every outlet of the node reads off ({n})"),
            false => format!("outlet{} {} still on", plural(on.len()), on.join(", ")),
        });
        Ok(match on.is_empty() {
            true => PowerState::Off,
            false => PowerState::On,
        })
    }

    async fn switch(&mut self, on: bool, d: Instant) -> Result<(), DriverError> {
        // Every outlet must exist before one is switched.
        self.read(Stage::Command, d).await?;
        let value = if on { "1" } else { "0" };
        let mut lost = Vec::new();
        for o in self.cfg.outlets.clone() {
            let what = format!("switch outlet {o} {}", if on { "on" } else { "off" });
            match self
                .send(Some(&format!("P{o}={value}")), &what, Stage::Command, d)
                .await
            {
                Ok(r) if r.ok() => {}
                Ok(r) => return Err(self.refused(&r, &what, Stage::Command)),
                Err(f) if f.maybe_delivered() => lost.push((o, f.into_error().message)),
                Err(f) => {
                    let e = f.into_error();
                    return Err(match lost.is_empty() {
                        true => e,
                        false => self.err(
                            ErrorKind::OutcomeUnknown,
                            Stage::Command,
                            format!("{}; before that, {}", e.message, lost_text(&lost)),
                        ),
                    });
                }
            }
        }
        match lost.is_empty() {
            true => Ok(()),
            false => Err(self.err(ErrorKind::OutcomeUnknown, Stage::Command, lost_text(&lost))),
        }
    }

    /// Every outlet on the page with its state (or why it has none).
    pub async fn all(
        &mut self,
        d: Instant,
    ) -> Result<Vec<(String, Result<PowerState, String>)>, DriverError> {
        let lines = self.page("read the hidden page", Stage::Status, d).await?;
        Ok(model::listing(&lines))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn lost_text(lost: &[(String, String)]) -> String {
    format!(
        "the switch request for outlet{} {} was sent and not answered ({}): it is never sent \
         again; the page is read back",
        plural(lost.len()),
        lost.iter()
            .map(|(o, _)| o.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        lost[0].1
    )
}

impl PowerDriver for EpsDriver {
    async fn connect(&mut self, _deadline: Option<Instant>) -> Result<String, DriverError> {
        if self.basic.is_some() {
            self.warnings.push(format!(
                "{DEVICE} speaks plain HTTP only: the password travels in clear (Basic \
                 authentication); keep the switch on a management network"
            ));
        }
        Ok(format!(
            "{DEVICE} at {}{}, outlet{} {}",
            self.cfg.page_url(),
            match &self.cfg.user {
                Some(u) => format!(" as '{}'", crate::http::text::printable(u, 80)),
                None => " without a login".into(),
            },
            plural(self.cfg.outlets.len()),
            self.cfg.outlets.join(", ")
        ))
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        self.read(Stage::Status, until(deadline)).await
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let d = until(deadline);
        match command {
            PowerCommand::Off => self.switch(false, d).await,
            PowerCommand::On => self.switch(true, d).await,
            other => Err(self.err(
                ErrorKind::Unsupported,
                Stage::Command,
                format!("an ePowerSwitch outlet has no {other}: use off, on or reboot"),
            )),
        }
    }

    fn state_detail(&self) -> Option<String> {
        self.detail.clone()
    }

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    async fn close(&mut self) {}
}

impl PlatformDriver for EpsDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let n = self.http.requests;
        (n, n, self.http.throttled)
    }

    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let d = until(deadline);
        let all = self.all(d).await?;
        if self.monitor {
            return Ok(Vec::new());
        }
        Ok(all
            .into_iter()
            .map(|(id, s)| PlugEntry {
                id,
                alias: String::new(),
                state: s.ok(),
            })
            .collect())
    }

    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let all = self.all(until(deadline)).await.map_err(|e| e.to_string())?;
        Ok(all
            .into_iter()
            .map(|(id, s)| {
                let mut c = self.cfg.clone();
                c.outlets = vec![id.clone()];
                Listed {
                    target: Some(c.url()),
                    name: format!("outlet {id}"),
                    uri: None,
                    state: s.as_ref().ok().copied(),
                    error: s.err(),
                }
            })
            .collect())
    }
}
