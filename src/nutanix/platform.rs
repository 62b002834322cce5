//! Nutanix AHV on the platform seam ([`crate::platform`]):
//! `nutanix://[USER@]PRISM[:PORT]/VM` targets and inventory
//! `driver = "nutanix"`, a method that builds a [`NutanixDriver`] (the
//! password from fencekit's password sources, the shared HTTPS trust),
//! Prism Central as its verify party (a hypervisor's control plane: the
//! fencing device's own view, alone bmc-only), one VM of one Prism Central
//! as its lock, at most [`ADDRESS_LIMIT`] sessions at once per address.

use super::config::NutanixConfig;
use super::driver::NutanixDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Fields, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Local, Method, Party, Platform};
use std::fmt;
use std::time::{Duration, Instant};

/// Sessions at once to one Prism Central: its v4 gateway rate-limits each
/// user (upstream learned to wait on 429); a fleet stays below it.
pub const ADDRESS_LIMIT: usize = 4;
/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// Nutanix AHV (through Prism Central).
pub struct Nutanix;

/// The registered platform.
pub static PLATFORM: Nutanix = Nutanix;

impl Platform for Nutanix {
    fn name(&self) -> &'static str {
        "nutanix"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "nutanix"
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

impl MethodBuilder for Nutanix {
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        super::build::from_url(url, o)
            .map(|r| r.map(|c| NutanixMethod::boxed(c, o.credential.clone())))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        super::build::from_parts(endpoint, ip, o)
            .map(|c| NutanixMethod::boxed(c, o.credential.clone()))
    }
}

/// One VM through Prism Central.
#[derive(Clone, Debug)]
pub struct NutanixMethod {
    /// Everything but the password.
    pub config: NutanixConfig,
    /// Where the password comes from.
    pub credential: CredentialRef,
    /// The BIOS UUID (or extId) the VM must have.
    pub expect: ExpectedIdentity,
    /// Each request's bound.
    pub timeout: Duration,
}

impl NutanixMethod {
    /// The method, unpinned, as a plan holds it.
    pub fn boxed(config: NutanixConfig, credential: CredentialRef) -> Box<dyn Method> {
        Box::new(NutanixMethod {
            config,
            credential,
            expect: ExpectedIdentity::default(),
            timeout: REQUEST_TIMEOUT,
        })
    }
}

impl Method for NutanixMethod {
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
        write!(
            f,
            "Nutanix AHV VM {} through {} (v4, basic auth), {}",
            self.config.vm.as_ref().map_or("(none)", |v| v.text()),
            self.config.api_url(),
            crate::tls::describe(&self.config.tls)
        )
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        // Prism Central is the fencing device's own view of the VM: proven
        // needs a witness outside it.
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
            crate::tls::TlsTrust::Insecure => vec![format!(
                "{}: Prism Central's certificate is not verified (--ssl-insecure): anyone on \
                 the path can impersonate it and read the password",
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
                    "{}: no user (give USER@ in the target or --username)",
                    c.url()
                ))
            })?;
            let password = self
                .credential
                .resolve(deadline)
                .await
                .map_err(platform::credential_error)?;
            Ok(Box::new(NutanixDriver::new(
                c.clone(),
                &user,
                password,
                self.timeout,
            )?) as Box<dyn Driver>)
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_shows_prism_and_the_vm_never_a_secret() {
        let o = MethodOptions {
            credential: CredentialRef::Inline(crate::secret::Secret::new(b"s3cret".to_vec())),
            ..MethodOptions::default()
        };
        let m = PLATFORM
            .build_url("nutanix://fence@pc.example.com/node-1", &o)
            .unwrap()
            .unwrap();
        assert_eq!((m.platform().name(), m.username()), ("nutanix", "fence"));
        assert_eq!((m.party(), m.address_limit()), (Party::Hypervisor, Some(4)));
        assert!(!format!("{m:?}").contains("s3cret"));
        assert!(m.warnings().is_empty());
    }
}
