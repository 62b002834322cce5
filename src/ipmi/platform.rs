//! IPMI on the platform seam ([`crate::platform`]): `ipmi://` targets, a
//! method that builds an [`IpmiDriver`], the BMC as its verify party.

use super::config::{CipherChoice, IpmiConfig, Version};
use super::driver::IpmiDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform};
use std::fmt;
use std::time::Instant;

/// IPMI over LAN.
pub struct Ipmi;

/// The registered platform.
pub static PLATFORM: Ipmi = Ipmi;

impl Platform for Ipmi {
    fn facts(&self) -> Option<&'static dyn crate::platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
    fn name(&self) -> &'static str {
        "ipmi"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "ipmi"
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn check_fields(&self, f: &dyn crate::platform::build::Fields) -> Result<(), String> {
        super::build::check_fields(f)
    }
    fn builder(&self) -> Option<&'static dyn MethodBuilder> {
        Some(&PLATFORM)
    }
    fn foreign_options(&self, _driver: &str, o: &MethodOptions) -> Result<(), BuildError> {
        super::build::foreign_options(o)
    }
    fn agent_family(
        &self,
        _def: &platform::agent::defs::Family,
    ) -> Option<&'static platform::agent::AgentFamily> {
        Some(&super::agent::FAMILY)
    }
}

impl MethodBuilder for Ipmi {
    /// Every URL no other platform claims: `ipmi://…` or a bare host.
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        Some(super::build::from_url(url, o).map(|c| IpmiMethod::boxed(c, o.credential.clone())))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        super::build::from_parts(endpoint, ip, o)
            .map(|c| IpmiMethod::boxed(c, o.credential.clone()))
    }
}

/// An IPMI method: the config's password is filled from `credential` at
/// build time.
#[derive(Clone, Debug)]
pub struct IpmiMethod {
    /// Everything but the password.
    pub config: IpmiConfig,
    /// Where the password comes from.
    pub credential: CredentialRef,
    /// Who the machine behind it must be (empty: not checked).
    pub expect: ExpectedIdentity,
}

impl IpmiMethod {
    /// The method, unpinned, as a plan holds it.
    pub fn boxed(config: IpmiConfig, credential: CredentialRef) -> Box<dyn Method> {
        Box::new(IpmiMethod {
            config,
            credential,
            expect: ExpectedIdentity::default(),
        })
    }
}

impl Method for IpmiMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ipmi://")?;
        platform::write_host_port(f, &self.config.host, self.config.port)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = &self.config;
        match config.version {
            Version::Lanplus => {
                f.write_str("RMCP+ cipher ")?;
                match config.cipher {
                    CipherChoice::Auto => f.write_str("auto")?,
                    CipherChoice::Suite(n) => write!(f, "{n}")?,
                }
                write!(f, ", privilege {}", config.privilege)
            }
            Version::Lan15(auth) => write!(
                f,
                "IPMI 1.5 auth {}, privilege {}",
                auth.map_or("best offered", |x| x.as_str()),
                config.privilege
            ),
        }
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        Party::Controller
    }
    fn username(&self) -> &str {
        &self.config.username
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    platform::pinned_in_expect!();
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let mut c = self.config.clone();
            c.password = self
                .credential
                .resolve(deadline)
                .await
                .map_err(platform::credential_error)?;
            IpmiDriver::new(c)
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for IpmiDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let s = self.stats();
        (s.sent, s.received, s.retransmits)
    }
    async fn list(&mut self, _deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        Err("an IPMI BMC controls one chassis: there is nothing behind it to list".into())
    }
}
