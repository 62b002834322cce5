//! oVirt on the platform seam ([`crate::platform`]):
//! `ovirt://[USER@]ENGINE[:PORT]/VM` targets and inventory
//! `driver = "ovirt"`, a method that builds an [`OvirtDriver`] (the password
//! from fencekit's password sources, the shared HTTPS trust), the engine as
//! its verify party (the fencing device's own view, alone bmc-only), one VM
//! of one engine as its lock, at most [`ADDRESS_LIMIT`] sessions at once
//! per engine.

use super::config::OvirtConfig;
use super::driver::OvirtDriver;
use crate::engine::error::DriverError;
use crate::platform::api::{ApiDevice, ApiMethod};
use crate::platform::build::Builder;
use crate::platform::{self, Driver, Party, Plain, Platform};
use crate::secret::Secret;
use std::fmt;
use std::time::Duration;

/// Sessions at once to one engine.
pub const ADDRESS_LIMIT: usize = 4;
/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// oVirt / RHV.
pub static PLATFORM: Plain = Plain {
    name: "ovirt",
    url_forms: super::config::URL_FORMS,
    builder: &BUILDER,
    check_fields: super::build::check_fields,
    setting_keys: super::build::SETTING_KEYS,
    family: &super::agent::FAMILY,
    facts: Some(&super::facts::FACTS),
};

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<OvirtConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: super::build::from_parts,
    method: OvirtMethod::boxed,
};

/// One VM through an oVirt engine's API.
pub type OvirtMethod = ApiMethod<OvirtConfig>;

impl ApiDevice for OvirtConfig {
    fn platform() -> &'static dyn Platform {
        &PLATFORM
    }
    const REQUEST_TIMEOUT: Duration = REQUEST_TIMEOUT;
    const ADDRESS_LIMIT: usize = ADDRESS_LIMIT;
    const USER_HINT: &'static str = "USER@PROFILE@";
    fn party(&self) -> Party {
        Party::Hypervisor
    }
    fn url(&self) -> String {
        OvirtConfig::url(self)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "oVirt VM {} through {}, Filter: {}{}, {}",
            self.vm.as_deref().unwrap_or("(none)"),
            self.api_url(),
            self.filter,
            if self.cookies { ", session cookie" } else { "" },
            self.tls
                .as_ref()
                .map_or("plain HTTP".into(), crate::tls::describe)
        )
    }
    fn lock_key(&self) -> crate::lock::DeviceKey {
        OvirtConfig::lock_key(self)
    }
    fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
    fn warnings(&self) -> Vec<String> {
        match self.tls {
            Some(crate::tls::TlsTrust::Insecure) => vec![platform::insecure_warning(
                &self.api_url(),
                "the engine's",
                "the engine",
            )],
            _ => Vec::new(),
        }
    }
    fn driver(
        &self,
        user: &str,
        secret: Secret,
        timeout: Duration,
    ) -> Result<Box<dyn Driver>, DriverError> {
        Ok(Box::new(OvirtDriver::new(
            self.clone(),
            user,
            secret,
            timeout,
        )?))
    }
}
