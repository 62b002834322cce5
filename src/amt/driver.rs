//! The engine's [`PowerDriver`] for one Intel AMT machine over
//! WS-Management.
//!
//! * `connect`: the first Get of the power state (AMT's Digest challenge
//!   answered on the way): a wrong password fails here.
//! * `status`: a Get of `CIM_AssociatedPowerManagementService`, its
//!   `PowerState` judged by [`model::judge`] (sleep and hibernate count as
//!   on, 6 and 8 as off, anything else unreadable).
//! * `command`: `ChangeBootOrder` first when a boot device is set (before
//!   on and reset only: an off boots nothing), then one
//!   `RequestPowerStateChange` (2 on, 8 off, 10 reset for a cycle), sent
//!   once: a lost answer is [`ErrorKind::OutcomeUnknown`] and the engine
//!   reads the state back. `ReturnValue` 0 is acceptance, never success:
//!   the engine polls the Get until it reads the new state or its deadline
//!   passes.
//! * No identity (AMT's `PlatformGUID` is not read: no upstream reads it),
//!   no listing (AMT drives one machine; upstream lists nothing).

use super::client::Client;
use super::config::AmtConfig;
use super::model::{self, state, Answer, Returned};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::{PowerCommand, PowerState};
use crate::platform::PlatformDriver;
use crate::secret::Secret;
use std::time::{Duration, Instant};

const DEFAULT_LIMIT: Duration = Duration::from_secs(60);

fn until(deadline: Option<Instant>) -> Instant {
    deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT)
}

/// One AMT machine.
pub struct AmtDriver {
    cfg: AmtConfig,
    client: Client,
    detail: Option<String>,
}

impl AmtDriver {
    /// A driver for `cfg` as `user`, each request bounded by `timeout`; sends nothing.
    pub fn new(
        cfg: AmtConfig,
        user: &str,
        password: Secret,
        timeout: Duration,
    ) -> Result<AmtDriver, DriverError> {
        cfg.validate()
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let client = Client::new(&cfg.wsman_url(), cfg.tls.as_ref(), user, password, timeout)?;
        Ok(AmtDriver {
            cfg,
            client,
            detail: None,
        })
    }

    /// The certificate AMT presented last.
    pub fn certificate(&self) -> Option<[u8; 32]> {
        self.client.certificate()
    }

    fn fault(&self, f: &model::Fault, what: &str, stage: Stage) -> DriverError {
        let kind = match f.access_denied() {
            true => ErrorKind::PrivilegeNotObtained,
            false => ErrorKind::DeviceError,
        };
        DriverError::new(kind, stage, format!("AMT refused to {what} ({f})"))
    }

    async fn read(&mut self, stage: Stage, d: Instant) -> Result<PowerState, DriverError> {
        let what = "read the power state (Get CIM_AssociatedPowerManagementService)";
        let env = model::get_power_state(&self.cfg.wsman_url());
        let a = self
            .client
            .call(&env, model::ASSOCIATED_PMS, "PowerState", what, stage, d)
            .await
            .map_err(crate::platform::lost::Lost::into_error)?;
        let v = match a {
            Answer::Fault(f) => return Err(self.fault(&f, "read the power state", stage)),
            Answer::Value(None) => {
                return Err(DriverError::new(
                    ErrorKind::StatusUnreadable,
                    stage,
                    "AMT's answer carries no PowerState",
                ))
            }
            Answer::Value(Some(v)) => v,
        };
        let j = model::judge(&v);
        self.detail = Some(match v.parse::<u16>() {
            Ok(n) => format!("AMT reports PowerState {n} ({})", model::state_name(n)),
            Err(_) => format!("AMT reports PowerState '{v}'"),
        });
        j.map_err(|why| DriverError::new(ErrorKind::StatusUnreadable, stage, why))
    }

    /// Invokes `envelope` (method `what` of `class`) and judges its `ReturnValue`.
    async fn invoke(
        &mut self,
        envelope: &str,
        class: &str,
        what: &str,
        d: Instant,
    ) -> Result<(), DriverError> {
        let st = Stage::Command;
        let a = self
            .client
            .call(envelope, class, "ReturnValue", what, st, d)
            .await
            .map_err(|l| l.read_back(st, what, "machine"))?;
        let v = match a {
            Answer::Fault(f) => return Err(self.fault(&f, what, st)),
            Answer::Value(None) => {
                return Err(crate::platform::lost::sent_unanswered(
                    st,
                    what,
                    &DriverError::new(ErrorKind::Protocol, st, "no ReturnValue"),
                    "machine",
                ))
            }
            Answer::Value(Some(v)) => v,
        };
        match model::returned(&v) {
            Returned::Accepted => Ok(()),
            Returned::NotInPresentState(n) => Err(DriverError::new(
                ErrorKind::NotInPresentState,
                st,
                format!("AMT declined to {what} in the machine's present state (ReturnValue {n})"),
            )),
            Returned::NotSupported => Err(DriverError::new(
                ErrorKind::Unsupported,
                st,
                format!("AMT does not support {what} (ReturnValue 1)"),
            )),
            Returned::Failed(m) => Err(DriverError::new(
                ErrorKind::DeviceError,
                st,
                format!("AMT failed to {what} ({m})"),
            )),
        }
    }
}

impl PowerDriver for AmtDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        let d = until(deadline);
        // The first Get answers the challenge and proves the credentials;
        // its state is read again by `status`.
        let what = "read the power state (Get CIM_AssociatedPowerManagementService)";
        let env = model::get_power_state(&self.cfg.wsman_url());
        let a = self
            .client
            .call(
                &env,
                model::ASSOCIATED_PMS,
                "PowerState",
                what,
                Stage::Authenticate,
                d,
            )
            .await
            .map_err(crate::platform::lost::Lost::into_error)?;
        if let Answer::Fault(f) = a {
            return Err(self.fault(&f, "read the power state", Stage::Authenticate));
        }
        Ok(format!(
            "Intel AMT {} (WS-Management, Digest {})",
            self.cfg.wsman_url(),
            self.client.algorithm().unwrap_or("not asked")
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
        let value = match command {
            PowerCommand::On => state::ON,
            PowerCommand::Off => state::OFF,
            PowerCommand::Cycle | PowerCommand::Reset => state::RESET,
            other => {
                return Err(DriverError::new(
                    ErrorKind::Unsupported,
                    Stage::Command,
                    format!("fencekit sends AMT no {other}: use off, on or reboot"),
                ))
            }
        };
        if let (Some(b), true) = (self.cfg.boot, value != state::OFF) {
            let env = model::change_boot_order(&self.cfg.wsman_url(), b);
            let what = format!("set the boot device to {} (ChangeBootOrder)", b.as_str());
            // Nothing is powered by it: a lost answer is a plain failure.
            self.invoke(&env, model::BOOT_CONFIG, &what, d)
                .await
                .map_err(|mut e| {
                    if e.kind == ErrorKind::OutcomeUnknown {
                        e.kind = ErrorKind::DeviceError;
                    }
                    e
                })?;
        }
        let env = model::request_power_state_change(&self.cfg.wsman_url(), value);
        let what = format!(
            "change the power state to {value} ({}) (RequestPowerStateChange)",
            model::state_name(value)
        );
        self.invoke(&env, model::PMS, &what, d).await
    }

    fn state_detail(&self) -> Option<String> {
        self.detail.clone()
    }

    /// Nothing to end: WS-Management over HTTP keeps no session.
    async fn close(&mut self) {}
}

impl PlatformDriver for AmtDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let n = self.client.requests();
        (n, n, 0)
    }
}
