//! The engine's [`PowerDriver`] for the machine behind one iLO, in RIBCL.
//!
//! * `connect`: `RIB_INFO MODE="read"` `GET_FW_VERSION`: proves the login
//!   (a refusal is [`ErrorKind::PasswordInvalid`]) and reads the RIBCL
//!   version its answer names, the firmware and the processor (`iLO2`),
//!   which pick the off command ([`super::model::off_command`]).
//! * `status`: `SERVER_INFO MODE="read"` `GET_HOST_POWER_STATUS`: `ON` is
//!   on, `OFF` off, anything else unreadable.
//! * `command`: off is `HOLD_PWR_BTN` (or, below RIBCL 2.21 on other than
//!   an iLO 2, `SET_HOST_POWER HOST_POWER="No"`), on `SET_HOST_POWER
//!   HOST_POWER="Yes"`, reset `RESET_SERVER`; each sent once: a lost answer
//!   is never sent again ([`ErrorKind::OutcomeUnknown`]; the engine reads
//!   the state back). Success is only what `GET_HOST_POWER_STATUS` then
//!   shows (the engine polls it within its deadline).
//! * `identity`: `GET_HOST_DATA`, SMBIOS record type 1: the system UUID
//!   and serial number the machine's own firmware reports.

use super::client::Client;
use super::config::IloConfig;
use super::model::{self, Firmware, Section};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{Identity, UuidForm};
use crate::engine::power::{PowerCommand, PowerState};
use crate::platform::PlatformDriver;
use crate::secret::Secret;
use std::time::{Duration, Instant};

const DEFAULT_LIMIT: Duration = Duration::from_secs(60);

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// The machine behind one iLO.
pub struct IloDriver {
    cfg: IloConfig,
    client: Client,
    firmware: Option<Firmware>,
    detail: Option<String>,
    warnings: Vec<String>,
}

impl IloDriver {
    /// A driver for `cfg` as `user`, each exchange bounded by `timeout`;
    /// sends nothing.
    pub fn new(
        cfg: IloConfig,
        user: &str,
        password: Secret,
        timeout: Duration,
    ) -> Result<IloDriver, DriverError> {
        cfg.validate()
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let client = Client::new(&cfg.host, cfg.port, &cfg.tls, user, password, timeout)?;
        Ok(IloDriver {
            cfg,
            client,
            firmware: None,
            detail: None,
            warnings: Vec::new(),
        })
    }

    /// The firmware the login read (the forced RIBCL version applied).
    pub fn firmware(&self) -> Option<&Firmware> {
        self.firmware.as_ref()
    }

    /// The certificate the iLO presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.client.certificate()
    }

    async fn login(&mut self, d: Instant) -> Result<&Firmware, DriverError> {
        if self.firmware.is_none() {
            let a = self
                .client
                .exchange(
                    Section::RibRead,
                    model::FIRMWARE_COMMAND,
                    "log in and read the firmware (GET_FW_VERSION)",
                    Stage::Authenticate,
                    d,
                )
                .await
                .map_err(|l| l.into_error())?;
            let mut fw = a.firmware();
            if let Some(v) = self.cfg.ribcl {
                fw.ribcl = Some(v);
            }
            self.firmware = Some(fw);
        }
        Ok(self.firmware.as_ref().expect("set above"))
    }
}

impl PowerDriver for IloDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let address = self.cfg.address();
        let fw = self.login(until(deadline)).await?;
        Ok(format!("iLO {address} (RIBCL over TLS; {})", fw.describe()))
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        let a = self
            .client
            .exchange(
                Section::ServerRead,
                model::STATUS_COMMAND,
                "read the power state (GET_HOST_POWER_STATUS)",
                Stage::Status,
                until(deadline),
            )
            .await
            .map_err(|l| l.into_error())?;
        let p = a
            .power()
            .map_err(|m| DriverError::new(ErrorKind::StatusUnreadable, Stage::Status, m))?;
        self.detail = Some(format!(
            "the iLO reports HOST_POWER {}",
            match p {
                PowerState::On => "ON",
                _ => "OFF",
            }
        ));
        Ok(p)
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let d = until(deadline);
        let st = Stage::Command;
        let cmd = match command {
            PowerCommand::Off => {
                let fw = self.login(d).await?;
                let c = model::off_command(fw);
                if c.starts_with("<SET_HOST_POWER") {
                    let n = format!(
                        "{}: off is SET_HOST_POWER HOST_POWER=\"No\" (below RIBCL {}), which the \
                         firmware may carry out as a button press the operating system answers \
                         by shutting down; off is reported only once the iLO reads OFF",
                        fw.describe(),
                        model::HOLD_FROM
                    );
                    if !self.warnings.contains(&n) {
                        self.warnings.push(n);
                    }
                }
                c
            }
            PowerCommand::On => model::ON_COMMAND,
            PowerCommand::Reset => model::RESET_COMMAND,
            other => {
                return Err(DriverError::new(
                    ErrorKind::Unsupported,
                    st,
                    format!("fencekit sends an iLO no {other} over RIBCL: use off, on or reboot"),
                ))
            }
        };
        let what = format!(
            "{} ({})",
            command.as_str(),
            cmd.trim_matches(['<', '>', '/'])
        );
        self.client
            .exchange(Section::ServerWrite, cmd, &what, st, d)
            .await
            .map_err(|l| l.read_back(st, &what, "machine"))?;
        Ok(())
    }

    async fn identity(&mut self, deadline: Option<Instant>) -> Result<Identity, DriverError> {
        let a = self
            .client
            .exchange(
                Section::ServerRead,
                model::HOST_DATA_COMMAND,
                "read the SMBIOS data (GET_HOST_DATA)",
                Stage::Identity,
                until(deadline),
            )
            .await
            .map_err(|l| l.into_error())?;
        let (uuid, serial) = a.system();
        let mut id = Identity::default();
        if let Some(u) = uuid
            .as_deref()
            .and_then(crate::engine::identity::reported_uuid)
        {
            id.uuid.push(UuidForm {
                uuid: u.uuid,
                encoding: "smbios",
            });
        }
        id.serial = serial;
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

impl PlatformDriver for IloDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let n = self.client.requests();
        (n, n, 0)
    }

    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        self.detail.iter().cloned().collect()
    }
}
