//! OpenStack on the platform seam ([`crate::platform`]):
//! `openstack://CLOUD/SERVER` targets and inventory `driver = "openstack"`,
//! a method that builds an [`OpenstackDriver`] (the secret from the cloud
//! of clouds.yaml, or from fencekit's password sources), Nova as its
//! verify party (the fencing device's own view: alone bmc-only), one server
//! of one project as its lock, at most [`ADDRESS_LIMIT`] sessions at once
//! per Keystone.

use super::build::Settings;
use super::driver::OpenstackDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Fields, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Local, Method, Party, Platform};
use std::fmt;
use std::time::{Duration, Instant};

/// Sessions at once to one Keystone: each run takes a token, and Nova's
/// API workers are shared with every other tenant.
pub const ADDRESS_LIMIT: usize = 4;
/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// OpenStack Nova.
pub struct Openstack;

/// The registered platform.
pub static PLATFORM: Openstack = Openstack;

impl Platform for Openstack {
    fn name(&self) -> &'static str {
        "openstack"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "openstack"
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
    fn facts(&self) -> Option<&'static dyn platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
}

impl MethodBuilder for Openstack {
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        super::build::from_url(url, o).map(|r| r.map(|s| OpenstackMethod::boxed(s, o)))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        super::build::from_parts(endpoint, ip, o).map(|s| OpenstackMethod::boxed(s, o))
    }
}

/// One server through a cloud's Keystone and Nova.
#[derive(Clone, Debug)]
pub struct OpenstackMethod {
    /// Everything but the secret (a cloud's is read when the driver is built).
    pub settings: Settings,
    /// Where the secret comes from when the cloud holds none.
    pub credential: CredentialRef,
    /// The SMBIOS UUID (the server's UUID) or name the server must have.
    pub expect: ExpectedIdentity,
    /// Each request's bound.
    pub timeout: Duration,
}

impl OpenstackMethod {
    /// The method, unpinned, as a plan holds it.
    pub fn boxed(settings: Settings, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(OpenstackMethod {
            settings,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
            timeout: REQUEST_TIMEOUT,
        })
    }
}

impl Method for OpenstackMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.settings.config.url())
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.settings.config;
        if self.settings.from_cloud {
            return write!(
                f,
                "OpenStack server {} of the cloud '{}' (clouds.yaml, or the OS_* variables for \
                 env){}",
                c.server.as_deref().unwrap_or("(none)"),
                c.cloud.as_deref().unwrap_or("env"),
                self.settings
                    .over
                    .tls
                    .as_ref()
                    .map(|t| format!(", {}", crate::tls::describe(t)))
                    .unwrap_or_default()
            );
        }
        write!(
            f,
            "OpenStack server {} through {} ({}, project {}, {} interface{}), {}",
            c.server.as_deref().unwrap_or("(none)"),
            c.identity_url().unwrap_or_else(|_| c.auth_url.clone()),
            c.kind.as_str(),
            if c.project.is_empty() {
                "(the credential's)"
            } else {
                c.project.text()
            },
            c.interface,
            c.region
                .as_deref()
                .map(|r| format!(", region {r}"))
                .unwrap_or_default(),
            crate::tls::describe(&c.tls)
        )
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.settings.config.lock_key()]
    }
    fn party(&self) -> Party {
        Party::Hypervisor
    }
    fn address_limit(&self) -> Option<usize> {
        Some(ADDRESS_LIMIT)
    }
    fn username(&self) -> &str {
        self.settings
            .over
            .user
            .as_deref()
            .unwrap_or(self.settings.config.user.text())
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    platform::pinned_in_expect!();
    fn set_login_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout.max(Duration::from_secs(1));
    }
    fn warnings(&self) -> Vec<String> {
        let c = &self.settings.config;
        let insecure = [Some(&c.tls), self.settings.over.tls.as_ref()]
            .contains(&Some(&crate::tls::TlsTrust::Insecure));
        match insecure {
            true => vec![format!(
                "{}: Keystone's and Nova's certificates are not verified (--ssl-insecure): \
                 anyone on the path can impersonate the cloud and read the secret",
                c.url()
            )],
            false => Vec::new(),
        }
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let (c, from_cloud) = self
                .settings
                .resolve(&crate::http::client::process_env)
                .map_err(platform::config_error)?;
            let secret = match from_cloud {
                Some(s) => s,
                None => self
                    .credential
                    .resolve(deadline)
                    .await
                    .map_err(platform::credential_error)?,
            };
            Ok(Box::new(OpenstackDriver::new(c, secret, self.timeout)?) as Box<dyn Driver>)
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
