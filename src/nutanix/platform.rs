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
use crate::platform::api::{ApiDevice, ApiMethod};
use crate::platform::build::Builder;
use crate::platform::{self, Driver, Party, Plain, Platform};
use crate::secret::Secret;
use std::fmt;
use std::time::Duration;

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
pub type NutanixMethod = ApiMethod<NutanixConfig>;

impl ApiDevice for NutanixConfig {
    fn platform() -> &'static dyn Platform {
        &PLATFORM
    }
    const REQUEST_TIMEOUT: Duration = REQUEST_TIMEOUT;
    const ADDRESS_LIMIT: usize = ADDRESS_LIMIT;
    const USER_HINT: &'static str = "USER@";
    fn party(&self) -> Party {
        // Prism Central is the fencing device's own view of the VM: proven
        // needs a witness outside it.
        Party::Hypervisor
    }
    fn url(&self) -> String {
        NutanixConfig::url(self)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Nutanix AHV VM {} through {} (v4, basic auth), {}",
            self.vm.as_ref().map_or("(none)", |v| v.text()),
            self.api_url(),
            crate::tls::describe(&self.tls)
        )
    }
    fn lock_key(&self) -> crate::lock::DeviceKey {
        NutanixConfig::lock_key(self)
    }
    fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
    fn warnings(&self) -> Vec<String> {
        match self.tls {
            crate::tls::TlsTrust::Insecure => vec![platform::insecure_warning(
                &self.api_url(),
                "Prism Central's",
                "it",
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
        Ok(Box::new(NutanixDriver::new(
            self.clone(),
            user,
            secret,
            timeout,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::build::{MethodBuilder, MethodOptions};
    use crate::platform::credential::CredentialRef;

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
