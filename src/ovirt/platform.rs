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
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{Builder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Local, Method, Party, Plain, Platform};
use std::fmt;
use std::time::{Duration, Instant};

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
#[derive(Clone, Debug)]
pub struct OvirtMethod {
    /// Everything but the secret.
    pub config: OvirtConfig,
    /// Where the password comes from.
    pub credential: CredentialRef,
    /// The VM id (its SMBIOS UUID) or name the VM must have.
    pub expect: ExpectedIdentity,
    /// Each request's bound.
    pub timeout: Duration,
}

impl OvirtMethod {
    /// The method, unpinned, as a plan holds it.
    pub fn boxed(config: OvirtConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(OvirtMethod {
            config,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
            timeout: REQUEST_TIMEOUT,
        })
    }
}

impl Method for OvirtMethod {
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
            "oVirt VM {} through {}, Filter: {}{}, {}",
            c.vm.as_deref().unwrap_or("(none)"),
            c.api_url(),
            c.filter,
            if c.cookies { ", session cookie" } else { "" },
            c.tls
                .as_ref()
                .map_or("plain HTTP".into(), crate::tls::describe)
        )
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        Party::Hypervisor
    }
    fn address_limit(&self) -> Option<usize> {
        Some(ADDRESS_LIMIT)
    }
    fn username(&self) -> &str {
        self.config.user.as_deref().unwrap_or("")
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    platform::pinned_in_expect!();
    fn set_login_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout.max(Duration::from_secs(1));
    }
    fn warnings(&self) -> Vec<String> {
        match self.config.tls {
            Some(crate::tls::TlsTrust::Insecure) => vec![platform::insecure_warning(
                &self.config.api_url(),
                "the engine's",
                "the engine",
            )],
            _ => Vec::new(),
        }
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let c = &self.config;
            let (user, secret) = platform::user_and_secret(
                c.user.as_deref(),
                &c.url(),
                "USER@PROFILE@",
                &self.credential,
                deadline,
            )
            .await?;
            let driver = OvirtDriver::new(c.clone(), &user, secret, self.timeout)?;
            Ok(Box::new(driver) as Box<dyn Driver>)
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
