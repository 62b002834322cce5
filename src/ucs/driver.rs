//! The engine's [`PowerDriver`] for one Cisco UCS service profile through
//! UCS Manager's XML API, and the listing `list` and `monitor` use.
//!
//! * `connect`: `aaaLogin` (the cookie kept, never shown).
//! * `status`: `configResolveDn` of the profile (`org-root[/org-X…]/ls-NAME`)
//!   for its associated server (`pnDn`), then of that server
//!   (`computeBlade` or `computeRackUnit`), judged by [`super::model::judge`]
//!   on its `operPower` (upstream's reading). The server must say it is
//!   assigned to that profile, and keep the UUID it was first read with.
//!   A profile that does not exist or has no server fails, or reads off
//!   with `--missing-as-off` (upstream's option).
//! * `command`: `configConfMo` setting the profile's `lsPower` to
//!   `admin-down` or `admin-up` (what upstream sends), sent once: a lost
//!   answer is never sent again ([`ErrorKind::OutcomeUnknown`]; the engine
//!   reads the server back). Success is only what `operPower` then shows.
//! * `identity`: the server's UUID (the one its profile gives it, which
//!   its operating system reads as its SMBIOS UUID) and serial number,
//!   the profile's name.
//! * `close`: `aaaLogout`, bounded, on every path.

use super::client::Client;
use super::config::UcsConfig;
use super::model::{self, Profile, Server};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{Identity, MachineName, UuidForm};
use crate::engine::power::{PowerCommand, PowerState};
use crate::platform::{Listed, PlatformDriver, PlugEntry};
use crate::secret::Secret;
use std::time::{Duration, Instant};

const DEFAULT_LIMIT: Duration = Duration::from_secs(60);

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// What a reading of the profile found.
enum Found {
    /// Its server.
    Server(Box<(Profile, Server)>),
    /// No such profile, or one without a server: why.
    Missing(String),
}

/// One service profile (or, for a listing, none) behind one UCS Manager.
pub struct UcsDriver {
    cfg: UcsConfig,
    client: Client,
    profile: Option<Profile>,
    server: Option<Server>,
    first_uuid: Option<String>,
    monitor: bool,
    detail: Option<String>,
    warnings: Vec<String>,
}

impl UcsDriver {
    /// A driver for `cfg` as `user`, each request bounded by `timeout`; sends nothing.
    pub fn new(
        cfg: UcsConfig,
        user: &str,
        password: Secret,
        timeout: Duration,
    ) -> Result<UcsDriver, DriverError> {
        cfg.validate()
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let client = Client::new(&cfg.api_url(), cfg.tls.as_ref(), user, password, timeout)?;
        Ok(UcsDriver {
            cfg,
            client,
            profile: None,
            server: None,
            first_uuid: None,
            monitor: false,
            detail: None,
            warnings: Vec::new(),
        })
    }

    /// A listing that only proves the API answers (`monitor`): the login.
    pub fn for_monitor(mut self) -> UcsDriver {
        self.monitor = true;
        self
    }

    /// The profile and server last read.
    pub fn found(&self) -> (Option<&Profile>, Option<&Server>) {
        (self.profile.as_ref(), self.server.as_ref())
    }

    /// The certificate UCS Manager presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.client.certificate()
    }

    fn err(kind: ErrorKind, stage: Stage, m: String) -> DriverError {
        DriverError::new(kind, stage, m)
    }

    fn profile_dn(&self, stage: Stage) -> Result<String, DriverError> {
        self.cfg
            .profile_dn()
            .ok_or_else(|| Self::err(ErrorKind::Config, stage, "no service profile named".into()))
    }

    /// Reads the profile and its server.
    async fn find(&mut self, stage: Stage, d: Instant) -> Result<Found, DriverError> {
        let dn = self.profile_dn(stage)?;
        let a = self.client.resolve_dn(&dn, stage, d).await?;
        let Some(p) = a.objects.iter().find_map(model::profile) else {
            return Ok(Found::Missing(format!(
                "UCS Manager has no service profile {dn} that the user may see{}",
                match self.cfg.orgs.is_empty() {
                    true => " (one in a sub-organization needs --suborg, or its ORG in the target)",
                    false => "",
                }
            )));
        };
        if p.dn != dn {
            return Err(self.client.bad_answer(
                &format!("read {dn}"),
                stage,
                format!(
                    "the answer is about {} (never evidence)",
                    model::printable(&p.dn, 120)
                ),
            ));
        }
        let Some(pn) = p.server.clone() else {
            let why = format!(
                "service profile {dn} is associated with no server (assocState '{}')",
                model::printable(&p.assoc, 40)
            );
            self.profile = Some(p);
            return Ok(Found::Missing(why));
        };
        let a = self.client.resolve_dn(&pn, stage, d).await?;
        let what = format!("read server {}", model::printable(&pn, 120));
        let s = a.objects.iter().find_map(model::server).ok_or_else(|| {
            Self::err(
                ErrorKind::StatusUnreadable,
                stage,
                format!("{what}: UCS Manager has no such server (profile {dn} names it)"),
            )
        })?;
        if s.dn != pn {
            return Err(self.client.bad_answer(
                &what,
                stage,
                format!(
                    "the answer is about {} (never evidence)",
                    model::printable(&s.dn, 120)
                ),
            ));
        }
        if let Some(to) = s.assigned_to.as_deref().filter(|to| *to != dn) {
            return Err(Self::err(
                ErrorKind::Protocol,
                stage,
                format!(
                    "server {pn} is assigned to {}, not {dn}: its power is not this profile's (never evidence)",
                    model::printable(to, 120)
                ),
            ));
        }
        if let (Some(first), Some(now)) = (self.first_uuid.as_deref(), s.uuid.as_deref()) {
            if !first.eq_ignore_ascii_case(now) {
                return Err(Self::err(
                    ErrorKind::Protocol,
                    stage,
                    format!(
                        "server {pn} now has UUID {}, not {first} as first read: the profile is on another machine (never evidence)",
                        model::printable(now, 60)
                    ),
                ));
            }
        }
        if self.first_uuid.is_none() {
            self.first_uuid = s.uuid.clone();
        }
        Ok(Found::Server(Box::new((p, s))))
    }

    /// Reads and judges the profile's server.
    async fn read(&mut self, d: Instant) -> Result<PowerState, DriverError> {
        match self.find(Stage::Status, d).await? {
            Found::Missing(why) if self.cfg.missing_as_off => {
                self.detail = Some(format!("{why}: off (--missing-as-off)"));
                self.server = None;
                Ok(PowerState::Off)
            }
            Found::Missing(why) => {
                self.detail = Some(why.clone());
                Err(Self::err(ErrorKind::DeviceError, Stage::Status, why))
            }
            Found::Server(b) => {
                let (p, s) = *b;
                self.detail = Some(format!(
                    "UCS Manager reports server {} of profile {} operPower {}, presence {}",
                    s.dn, p.name, s.power, s.presence
                ));
                if s.power == "power-save" {
                    let n = format!("server {} is in power-save: it runs (not off)", s.dn);
                    if !self.warnings.contains(&n) {
                        self.warnings.push(n);
                    }
                }
                let j = model::judge(&s, self.cfg.missing_as_off);
                self.profile = Some(p);
                self.server = Some(s);
                j.map_err(|why| Self::err(ErrorKind::StatusUnreadable, Stage::Status, why))
            }
        }
    }

    /// Sets the profile's power state once.
    async fn power(&mut self, state: &str, d: Instant) -> Result<(), DriverError> {
        let st = Stage::Command;
        let dn = self.profile_dn(st)?;
        if self.server.is_none() {
            // A profile without a server has nothing to power (missing-as-off
            // read it off): nothing is sent.
            match self.find(st, d).await? {
                Found::Missing(why) => return Err(Self::err(ErrorKind::DeviceError, st, why)),
                Found::Server(b) => {
                    let (p, s) = *b;
                    self.profile = Some(p);
                    self.server = Some(s);
                }
            }
        }
        let what = format!("set {dn}/power to {state}");
        let a = self
            .client
            .set_power(&dn, state, d)
            .await
            .map_err(|l| l.read_back(st, &what, "server"))?;
        if let Some(p) = a.objects.iter().find(|o| o.class == "lsPower") {
            if let Some(got) = p.get("state").filter(|s| *s != state) {
                self.warnings.push(format!(
                    "UCS Manager stored {dn}/power as '{}' for '{state}'",
                    model::printable(got, 40)
                ));
            }
        }
        Ok(())
    }

    /// Every service profile (`configResolveClass lsServer`).
    pub async fn list_profiles(&mut self, d: Instant) -> Result<Vec<Profile>, DriverError> {
        let a = self.client.resolve_class("lsServer", d).await?;
        Ok(a.objects.iter().filter_map(model::profile).collect())
    }
}

impl PowerDriver for UcsDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.client.login(until(deadline)).await?;
        let mut said = format!("UCS Manager {} (XML API)", self.cfg.api_url());
        if let Some(dn) = self.cfg.profile_dn() {
            said.push_str(&format!("; service profile {dn}"));
        }
        Ok(said)
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        self.read(until(deadline)).await
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let state = match command {
            PowerCommand::Off => "admin-down",
            PowerCommand::On => "admin-up",
            other => {
                return Err(Self::err(
                    ErrorKind::Unsupported,
                    Stage::Command,
                    format!("fencekit sends UCS Manager no {other}: use off, on or reboot"),
                ))
            }
        };
        self.power(state, until(deadline)).await
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let d = until(deadline);
        if self.server.is_none() {
            match self.find(Stage::Identity, d).await? {
                Found::Missing(why) => {
                    return Err(Self::err(
                        ErrorKind::IdentityUnavailable,
                        Stage::Identity,
                        why,
                    ))
                }
                Found::Server(b) => {
                    let (p, s) = *b;
                    self.profile = Some(p);
                    self.server = Some(s);
                }
            }
        }
        let mut id = Identity::default();
        if let Some(s) = &self.server {
            if let Some(u) = s
                .uuid
                .as_deref()
                .and_then(crate::engine::identity::reported_uuid)
            {
                id.uuid.push(UuidForm {
                    uuid: u.uuid,
                    encoding: "smbios",
                });
            }
            id.serial = s.serial.as_ref().map(|x| x.trim().to_string());
        }
        if let Some(p) = &self.profile {
            id.names.push(MachineName::new("service profile", &p.name));
        }
        Ok(id)
    }

    fn state_detail(&self) -> Option<String> {
        self.detail.clone()
    }

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    async fn close(&mut self) {
        self.client.logout().await;
    }
}

impl PlatformDriver for UcsDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let n = self.client.requests();
        (n, n, 0)
    }

    /// The profiles as upstream lists them (`DN,DESCRIPTION`, no state);
    /// for `monitor`, the same read, nothing printed.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let d = until(deadline);
        if self.monitor {
            self.list_profiles(d).await?;
            return Ok(Vec::new());
        }
        Ok(self
            .list_profiles(d)
            .await?
            .into_iter()
            .map(|p| PlugEntry {
                id: p.dn,
                alias: p.descr,
                state: None,
            })
            .collect())
    }

    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let profiles = self
            .list_profiles(until(deadline))
            .await
            .map_err(|e| e.to_string())?;
        let mut c = self.cfg.clone();
        Ok(profiles
            .into_iter()
            .filter_map(|p| {
                let rest = p.dn.strip_prefix("org-root/")?;
                let mut parts: Vec<&str> = rest.split('/').collect();
                let name = parts.pop()?.strip_prefix("ls-")?.to_string();
                c.orgs = parts.iter().map(|s| s.to_string()).collect();
                c.profile = Some(name);
                Some(Listed {
                    target: Some(c.url()),
                    state: None,
                    name: format!(
                        "{} ({})",
                        p.name,
                        p.server.as_deref().unwrap_or("no server")
                    ),
                    uri: Some(p.dn),
                    error: None,
                })
            })
            .collect())
    }

    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        self.detail.iter().cloned().collect()
    }
}
