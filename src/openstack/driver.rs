//! The engine's [`PowerDriver`] for one Nova server, and the listing
//! `list` and `monitor` use.
//!
//! * `connect`: a token and the compute endpoint, then the server: by UUID
//!   (`GET /servers/ID`) or by name (pages of `/servers/detail?name=`
//!   filtered to the exact name: two servers of that name are refused,
//!   never the first).
//! * `observe`/`status`: `GET /servers/ID`, checked to be about that
//!   server (and, by name, still that name), judged by
//!   [`super::model::judge`] (a task under way is a transition).
//! * `command`: `os-stop` (off), `os-start` (on), a `HARD` reboot (cycle);
//!   each 202 followed until its task ends: ending in `ERROR`, or elsewhere
//!   than the goal, is a failure naming Nova's fault. A 409 is never a
//!   success by itself (the engine reads the state back). Sent once: a
//!   request whose answer never came is not sent again
//!   ([`ErrorKind::OutcomeUnknown`]).
//! * `identity`: the server's UUID, which Nova on libvirt/KVM gives the
//!   guest as its SMBIOS system UUID, and its name.
//!
//! As a witness, Nova is the fencing device's own view: alone it is
//! "bmc-only" for `verify`.

use super::client::{Client, Lost};
use super::config::OpenstackConfig;
use super::model::{self, Server};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{reported_uuid, Identity, MachineName};
use crate::engine::power::{Observed, PowerCommand, PowerState};
use crate::platform::{Listed, PlatformDriver, PlugEntry};
use crate::secret::Secret;
use reqwest::Method;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const DEFAULT_LIMIT: Duration = Duration::from_secs(60);
const TASK_POLL: Duration = Duration::from_millis(100);
/// Servers per page of a listing.
const PAGE: usize = 500;
/// The most pages read (a project of 500,000 servers).
const MAX_PAGES: usize = 1000;

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// A name as an anchored regular expression (Nova filters names by regex).
fn anchored(name: &str) -> String {
    let mut s = String::from("^");
    for c in name.chars() {
        if "\\.^$|?*+()[]{}-".contains(c) {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('$');
    s
}

/// One server of one project.
pub struct OpenstackDriver {
    cfg: OpenstackConfig,
    client: Client,
    found: Option<Server>,
    /// The reading that found the server, for the first status read.
    first: Option<Server>,
    by_name: bool,
    monitor: bool,
    detail: Option<String>,
    warnings: Vec<String>,
}

impl OpenstackDriver {
    /// A driver for `cfg` with `secret`, each request bounded by `timeout`.
    pub fn new(
        cfg: OpenstackConfig,
        secret: Secret,
        timeout: Duration,
    ) -> Result<OpenstackDriver, DriverError> {
        cfg.validate()
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let client = Client::new(&cfg, secret, timeout)?;
        Ok(OpenstackDriver {
            cfg,
            client,
            found: None,
            first: None,
            by_name: false,
            monitor: false,
            detail: None,
            warnings: Vec::new(),
        })
    }

    /// For `monitor`: a token and one server read (`limit=1`), never the list.
    pub fn for_monitor(mut self) -> OpenstackDriver {
        self.monitor = true;
        self
    }

    /// The server found.
    pub fn found(&self) -> Option<&Server> {
        self.found.as_ref()
    }

    /// The certificate presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.client.certificate()
    }

    fn err(&self, kind: ErrorKind, stage: Stage, m: String) -> DriverError {
        DriverError::new(kind, stage, m)
    }

    /// Pages of `/servers/detail` (with `query`), every server.
    async fn pages(&mut self, query: &str, d: Instant) -> Result<Vec<Server>, DriverError> {
        let what = "list the servers";
        let st = Stage::Status;
        let mut all: Vec<Server> = Vec::new();
        let mut marker: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut path = format!("/servers/detail?limit={PAGE}{query}");
            if let Some(m) = &marker {
                path.push_str(&format!("&marker={}", crate::http::client::form_encode(m)));
            }
            let body = self.client.get(&path, what, st, d).await?;
            let (page, next) =
                model::servers(&body).map_err(|m| self.client.bad_answer(what, st, m))?;
            let last = page.last().map(|s| s.id.clone());
            if page.iter().any(|s| all.iter().any(|a| a.id == s.id)) {
                return Err(self.client.bad_answer(
                    what,
                    st,
                    "a page repeats a server already listed (the marker was not honoured)".into(),
                ));
            }
            all.extend(page);
            match (next, last) {
                (true, Some(l)) => marker = Some(l),
                _ => return Ok(all),
            }
        }
        Err(self
            .client
            .bad_answer(what, st, format!("more than {MAX_PAGES} pages of servers")))
    }

    async fn by_id(&mut self, id: &str, stage: Stage, d: Instant) -> Result<Server, Lost> {
        let what = format!("read server {}", model::printable(id, 60));
        let reply = self
            .client
            .call(
                Method::GET,
                &format!("/servers/{id}"),
                None,
                &what,
                stage,
                d,
            )
            .await?;
        if !reply.ok() {
            return Err(Lost::Error(self.client.status_error(&reply, &what, stage)));
        }
        let s = model::server(&reply.body)
            .map_err(|m| Lost::Error(self.client.bad_answer(&what, stage, m)))?;
        if !s.id.eq_ignore_ascii_case(id) {
            return Err(Lost::Error(self.err(
                ErrorKind::Protocol,
                stage,
                format!(
                    "{what}: the answer is about server '{}' (never evidence)",
                    model::printable(&s.id, 60)
                ),
            )));
        }
        Ok(s)
    }

    async fn locate(&mut self, d: Instant) -> Result<Server, DriverError> {
        if let Some(s) = &self.found {
            return Ok(s.clone());
        }
        let st = Stage::Status;
        let want = self
            .cfg
            .server
            .clone()
            .ok_or_else(|| self.err(ErrorKind::Config, st, "no server named".into()))?;
        if reported_uuid(&want).is_some() {
            match self.by_id(&want.to_ascii_lowercase(), st, d).await {
                Ok(s) => {
                    self.found = Some(s.clone());
                    self.first = Some(s.clone());
                    return Ok(s);
                }
                Err(Lost::Error(e)) if e.message.contains("no such server") => {}
                Err(e) => return Err(e.into_error()),
            }
        }
        let q = format!(
            "&name={}",
            crate::http::client::form_encode(&anchored(&want))
        );
        let mut hits: Vec<Server> = self
            .pages(&q, d)
            .await?
            .into_iter()
            .filter(|s| s.name == want)
            .collect();
        match hits.len() {
            0 => Err(self.err(
                ErrorKind::DeviceError,
                st,
                format!(
                    "Nova lists no server '{}' in the project (by UUID or exact name)",
                    model::printable(&want, 80)
                ),
            )),
            1 => {
                let s = hits.remove(0);
                self.by_name = true;
                self.found = Some(s.clone());
                self.first = Some(s.clone());
                Ok(s)
            }
            n => Err(self.err(
                ErrorKind::Config,
                st,
                format!(
                    "{n} servers are named '{}' ({}): refusing to guess which one to fence: \
                     give the server's UUID",
                    model::printable(&want, 80),
                    hits.iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }

    /// The server now, checked to be the one found (and its name kept).
    async fn current(&mut self, f: &Server, stage: Stage, d: Instant) -> Result<Server, Lost> {
        let s = self.by_id(&f.id, stage, d).await?;
        if self.by_name && s.name != f.name {
            return Err(Lost::Error(self.err(
                ErrorKind::IdentityMismatch,
                stage,
                format!(
                    "server {} is now named '{}', not '{}': refusing to act on it",
                    f.id,
                    model::printable(&s.name, 80),
                    model::printable(&f.name, 80)
                ),
            )));
        }
        Ok(s)
    }

    fn describe(s: &Server) -> String {
        let mut t = format!(
            "Nova reports server {} ({}) {}",
            model::printable(&s.name, 80),
            s.id,
            s.status.as_deref().unwrap_or("without a status")
        );
        if let Some(p) = s.power {
            t.push_str(&format!(", power state {p} ({})", model::power_name(p)));
        }
        if let Some(k) = &s.task {
            t.push_str(&format!(", task {}", model::printable(k, 40)));
        }
        if let Some(h) = &s.host_status {
            t.push_str(&format!(", host {h}"));
        }
        t
    }

    async fn read(&mut self, d: Instant) -> Result<Observed, DriverError> {
        let f = self.locate(d).await?;
        let s = match self.first.take() {
            Some(s) => s,
            None => self
                .current(&f, Stage::Status, d)
                .await
                .map_err(Lost::into_error)?,
        };
        self.detail = Some(Self::describe(&s));
        model::judge(&s).map_err(|why| {
            self.err(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!("server {}: {why}", model::printable(&s.name, 80)),
            )
        })
    }

    /// Follows an accepted action until its task ends.
    async fn follow(
        &mut self,
        f: &Server,
        action: &str,
        goal: PowerState,
        d: Instant,
    ) -> Result<(), DriverError> {
        let mut pause = TASK_POLL;
        let mut seen_task = false;
        loop {
            let s = match self.current(f, Stage::Command, d).await {
                Ok(s) => Some(s),
                // A read may be repeated (it changes nothing).
                Err(Lost::Silent(e)) if Instant::now() < d => {
                    tracing::debug!(error = %e, "server read unanswered; reading again");
                    None
                }
                Err(e) => return Err(e.into_error()),
            };
            if let Some(s) = s {
                self.detail = Some(Self::describe(&s));
                match (&s.task, s.status.as_deref()) {
                    (Some(_), _) => seen_task = true,
                    (None, Some("ERROR")) => {
                        return Err(self.err(
                            ErrorKind::DeviceError,
                            Stage::Command,
                            format!(
                                "Nova accepted the {action} of server {} and it ended in ERROR: {}",
                                f.id,
                                s.fault.as_deref().unwrap_or("no fault recorded")
                            ),
                        ))
                    }
                    (None, status) => {
                        let there = model::judge(&s).ok() == Some(Observed::Settled(goal));
                        if there || !seen_task {
                            return Ok(());
                        }
                        return Err(self.err(
                            ErrorKind::DeviceError,
                            Stage::Command,
                            format!(
                                "Nova accepted the {action} of server {} and its task ended with \
                                 the server {} (not {goal}){}",
                                f.id,
                                status.unwrap_or("without a status"),
                                s.fault
                                    .as_deref()
                                    .map(|x| format!(": {x}"))
                                    .unwrap_or_default()
                            ),
                        ));
                    }
                }
            }
            if Instant::now() + pause >= d {
                return Err(self.err(
                    ErrorKind::Timeout,
                    Stage::Command,
                    format!(
                        "the {action} of server {} is still under way at the deadline; it is \
                         never sent again",
                        f.id
                    ),
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// Sends one server action once and follows it.
    async fn power(
        &mut self,
        action: &str,
        body: Value,
        goal: PowerState,
        d: Instant,
    ) -> Result<(), DriverError> {
        let f = self.locate(d).await?;
        let st = Stage::Command;
        let what = format!("{action} server {}", model::printable(&f.name, 80));
        let path = format!("/servers/{}/action", f.id);
        let reply = match self
            .client
            .call(Method::POST, &path, Some(&body), &what, st, d)
            .await
        {
            Ok(r) => r,
            Err(l) => return Err(l.read_back(st, &what, "server")),
        };
        if !reply.ok() {
            return Err(self.client.status_error(&reply, &what, st));
        }
        self.follow(&f, action, goal, d).await
    }

    /// Every server of the project, with its state (or why it has none).
    pub async fn all(
        &mut self,
        d: Instant,
    ) -> Result<Vec<(Server, Result<Observed, String>)>, DriverError> {
        Ok(self
            .pages("", d)
            .await?
            .into_iter()
            .map(|s| {
                let j = model::judge(&s);
                (s, j)
            })
            .collect())
    }
}

impl PowerDriver for OpenstackDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let d = until(deadline);
        self.client.login(d).await?;
        let mut said = format!(
            "OpenStack {} ({}), compute {}",
            self.cfg
                .identity_url()
                .unwrap_or_else(|_| self.cfg.auth_url.clone()),
            self.cfg.kind.as_str(),
            self.client.compute().unwrap_or_default()
        );
        if self.cfg.server.is_some() {
            let f = self.locate(d).await?;
            said.push_str(&format!(
                "; server {} ({})",
                model::printable(&f.name, 80),
                f.id
            ));
        }
        Ok(said)
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        match self.read(until(deadline)).await? {
            Observed::Settled(s) => Ok(s),
            Observed::InTransition(t) => Err(self.err(
                ErrorKind::Busy,
                Stage::Status,
                format!("the server is {t}: a task is under way"),
            )),
        }
    }

    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        self.read(until(deadline)).await
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let d = until(deadline);
        match command {
            PowerCommand::Off => {
                self.power("os-stop", json!({"os-stop": null}), PowerState::Off, d)
                    .await
            }
            PowerCommand::On => {
                self.power("os-start", json!({"os-start": null}), PowerState::On, d)
                    .await
            }
            PowerCommand::Cycle => {
                let b = json!({"reboot": {"type": "HARD"}});
                self.power("HARD reboot", b, PowerState::On, d).await
            }
            other => Err(self.err(
                ErrorKind::Unsupported,
                Stage::Command,
                format!("Nova has no {other} for a server: use off, on or reboot"),
            )),
        }
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let d = until(deadline);
        let f = self.locate(d).await?;
        let s = self
            .current(&f, Stage::Identity, d)
            .await
            .map_err(Lost::into_error)?;
        let mut id = Identity::default();
        id.names.push(MachineName::new("server-id", &s.id));
        id.names.push(MachineName::new("name", &s.name));
        // Nova's libvirt driver gives the guest the server's UUID as its
        // SMBIOS system UUID.
        id.uuid = reported_uuid(&s.id).into_iter().collect();
        Ok(id)
    }

    fn state_detail(&self) -> Option<String> {
        self.detail.clone()
    }

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    async fn close(&mut self) {}
}

impl PlatformDriver for OpenstackDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let n = self.client.requests();
        (n, n, self.client.throttled())
    }

    /// The servers as `UUID,NAME` (upstream's). For `monitor`, a token and
    /// one server read (`limit=1`), never the list.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let d = until(deadline);
        if self.monitor {
            self.client
                .get("/servers?limit=1", "read one server", Stage::Status, d)
                .await?;
            return Ok(Vec::new());
        }
        Ok(self
            .all(d)
            .await?
            .into_iter()
            .map(|(s, j)| PlugEntry {
                id: s.id,
                alias: s.name,
                state: j.ok().and_then(Observed::settled),
            })
            .collect())
    }

    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let all = self.all(until(deadline)).await.map_err(|e| e.to_string())?;
        Ok(all
            .into_iter()
            .map(|(s, j)| {
                let mut c = self.cfg.clone();
                c.server = Some(s.id.clone());
                let (state, error) = match j {
                    Ok(Observed::Settled(p)) => (Some(p), None),
                    Ok(Observed::InTransition(t)) => (None, Some(format!("{t}: a task runs"))),
                    Err(e) => (None, Some(e)),
                };
                Listed {
                    target: Some(c.url()),
                    name: format!("{} ({})", s.name, s.id),
                    uri: None,
                    state,
                    error,
                }
            })
            .collect())
    }

    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        self.detail.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_anchored_and_escaped() {
        assert_eq!(super::anchored("node1"), "^node1$");
        assert_eq!(super::anchored("a.b(c)"), "^a\\.b\\(c\\)$");
    }
}
