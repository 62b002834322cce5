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
use crate::platform::build::{Builder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Local, Method, Party, Plain, Platform};
use std::fmt;
use std::time::{Duration, Instant};

/// Sessions at once to one Prism Central: its v4 gateway rate-limits each
/// user (upstream learned to wait on 429); a fleet stays below it.
pub const ADDRESS_LIMIT: usize = 4;
/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// Nutanix AHV (through Prism Central).
pub static PLATFORM: Plain = Plain {
    name: "nutanix",
    url_forms: super::config::URL_FORMS,
    builder: &BUILDER,
    check_fields: super::build::check_fields,
    setting_keys: &[],
    family: &super::agent::FAMILY,
    facts: Some(&super::facts::FACTS),
};

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<NutanixConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: super::build::from_parts,
    method: NutanixMethod::boxed,
};

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
    pub fn boxed(config: NutanixConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(NutanixMethod {
            config,
            credential: o.credential.clone(),
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
            crate::tls::TlsTrust::Insecure => vec![platform::insecure_warning(
                &self.config.api_url(),
                "Prism Central's",
                "it",
            )],
            _ => Vec::new(),
        }
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let c = &self.config;
            let (user, password) = platform::user_and_secret(
                c.user.as_deref(),
                &c.url(),
                "USER@",
                &self.credential,
                deadline,
            )
            .await?;
            let driver = NutanixDriver::new(c.clone(), &user, password, self.timeout)?;
            Ok(Box::new(driver) as Box<dyn Driver>)
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::build::MethodBuilder;

    #[test]
    fn a_method_shows_prism_and_the_vm_never_a_secret() {
        let o = MethodOptions {
            credential: CredentialRef::Inline(crate::secret::Secret::new(b"s3cret".to_vec())),
            ..MethodOptions::default()
        };
        let m = BUILDER
            .build_url("nutanix://fence@pc.example.com/node-1", &o)
            .unwrap()
            .unwrap();
        assert_eq!((m.platform().name(), m.username()), ("nutanix", "fence"));
        assert_eq!((m.party(), m.address_limit()), (Party::Hypervisor, Some(4)));
        assert!(!format!("{m:?}").contains("s3cret"));
        assert!(m.warnings().is_empty());
    }
}
