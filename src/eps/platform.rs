//! ePowerSwitch on the platform seam ([`crate::platform`]):
//! `eps://[USER@]HOST[:PORT]/OUTLET[,OUTLET…]` targets and inventory
//! `driver = "eps"`, a method that builds an [`EpsDriver`] (the password,
//! when a user is given, from fencekit's password sources), a switched
//! outlet as its verify party (it cuts the power from outside the node), the
//! whole switch as its lock (one page drives every outlet). An outlet
//! cannot say which machine it feeds: a node's identity pin skips it.

use super::config::EpsConfig;
use super::driver::EpsDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Fields, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Local, Method, Party, PinError, Platform};
use std::fmt;
use std::time::{Duration, Instant};

/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// ePowerSwitch.
pub struct Eps;

/// The registered platform.
pub static PLATFORM: Eps = Eps;

const NO_PIN: &ExpectedIdentity = &ExpectedIdentity {
    uuid: None,
    serial: None,
    names: Vec::new(),
};

impl Platform for Eps {
    fn name(&self) -> &'static str {
        "eps"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "eps"
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn builder(&self) -> Option<&'static dyn MethodBuilder> {
        Some(&PLATFORM)
    }
    fn check_fields(&self, f: &dyn Fields) -> Result<(), String> {
        super::build::check_fields(f)
    }
    fn setting_keys(&self) -> &'static [&'static str] {
        super::build::SETTING_KEYS
    }
    fn agent_family(
        &self,
        _def: &platform::agent::defs::Family,
    ) -> Option<&'static platform::agent::AgentFamily> {
        Some(&super::agent::FAMILY)
    }
}

impl MethodBuilder for Eps {
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        super::build::from_url(url, o).map(|r| r.map(|c| EpsMethod::boxed(c, o.credential.clone())))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        super::build::from_parts(endpoint, ip, o).map(|c| EpsMethod::boxed(c, o.credential.clone()))
    }
}

/// A node's outlets on one ePowerSwitch.
#[derive(Clone, Debug)]
pub struct EpsMethod {
    /// Everything but the secret.
    pub config: EpsConfig,
    /// Where the password comes from (used only with a user).
    pub credential: CredentialRef,
    /// Each request's bound.
    pub timeout: Duration,
}

impl EpsMethod {
    /// The method as a plan holds it.
    pub fn boxed(config: EpsConfig, credential: CredentialRef) -> Box<dyn Method> {
        Box::new(EpsMethod {
            config,
            credential,
            timeout: REQUEST_TIMEOUT,
        })
    }
}

impl Method for EpsMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.config.url())
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(
            f,
            "ePowerSwitch outlets {} through {}{}, plain HTTP",
            c.outlets.join(","),
            c.page_url(),
            match &c.user {
                Some(u) => format!(" as '{u}'"),
                None => " without a login".into(),
            }
        )
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        // A switched outlet cuts the node's power from outside.
        Party::Outlet
    }
    fn paced(&self) -> bool {
        false
    }
    fn username(&self) -> &str {
        self.config.user.as_deref().unwrap_or("")
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    fn expected(&self) -> &ExpectedIdentity {
        NO_PIN
    }
    fn pinnable(&self) -> bool {
        false
    }
    fn set_expected(&mut self, identity: ExpectedIdentity) -> Result<(), PinError> {
        match identity.is_empty() {
            true => Ok(()),
            false => Err(PinError::Pdu),
        }
    }
    fn set_login_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout.max(Duration::from_secs(1));
    }
    fn cleartext(&self) -> bool {
        self.config.user.is_some()
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let secret = match self.config.user {
                Some(_) => self
                    .credential
                    .resolve(deadline)
                    .await
                    .map_err(platform::credential_error)?,
                None => crate::secret::Secret::from_str_value(""),
            };
            Ok(
                Box::new(EpsDriver::new(self.config.clone(), secret, self.timeout)?)
                    as Box<dyn Driver>,
            )
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
