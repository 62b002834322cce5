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
use crate::platform::build::{BuildError, Fields, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Local, Method, Party, Platform};
use std::fmt;
use std::time::{Duration, Instant};

/// Sessions at once to one engine.
pub const ADDRESS_LIMIT: usize = 4;
/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// oVirt / RHV.
pub struct Ovirt;

/// The registered platform.
pub static PLATFORM: Ovirt = Ovirt;

impl Platform for Ovirt {
    fn name(&self) -> &'static str {
        "ovirt"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "ovirt"
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

impl MethodBuilder for Ovirt {
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        super::build::from_url(url, o)
            .map(|r| r.map(|c| OvirtMethod::boxed(c, o.credential.clone())))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        super::build::from_parts(endpoint, ip, o)
            .map(|c| OvirtMethod::boxed(c, o.credential.clone()))
    }
}

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
    pub fn boxed(config: OvirtConfig, credential: CredentialRef) -> Box<dyn Method> {
        Box::new(OvirtMethod {
            config,
            credential,
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
            Some(crate::tls::TlsTrust::Insecure) => vec![format!(
                "{}: the engine's certificate is not verified (--ssl-insecure): anyone on the \
                 path can impersonate the engine and read the password",
                self.config.api_url()
            )],
            _ => Vec::new(),
        }
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let c = &self.config;
            let user = c.user.clone().ok_or_else(|| {
                platform::config_error(format!(
                    "{}: no user (give USER@PROFILE@ in the target or --username)",
                    c.url()
                ))
            })?;
            let secret = self
                .credential
                .resolve(deadline)
                .await
                .map_err(platform::credential_error)?;
            Ok(
                Box::new(OvirtDriver::new(c.clone(), &user, secret, self.timeout)?)
                    as Box<dyn Driver>,
            )
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
