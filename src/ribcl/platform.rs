//! HPE iLO (RIBCL) on the platform seam ([`crate::platform`]):
//! `ilo://[USER@]HOST[:PORT]` targets and inventory `driver = "ilo"`, a
//! method that builds an [`IloDriver`] (the password from fencekit's
//! password sources, the shared TLS trust), the iLO as its verify party (a
//! BMC: it powers the machine from outside its operating system), the iLO
//! as its lock, at most [`ADDRESS_LIMIT`] connections at once per address.

use super::config::IloConfig;
use super::driver::IloDriver;
use crate::engine::error::DriverError;
use crate::platform::api::{ApiDevice, ApiMethod};
use crate::platform::build::Builder;
use crate::platform::{self, Driver, Party, Plain, Platform};
use crate::secret::Secret;
use std::fmt;
use std::time::Duration;

/// Connections at once to one iLO: its embedded web server serves few.
pub const ADDRESS_LIMIT: usize = 2;
/// Each exchange's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// HPE iLO through RIBCL.
pub static PLATFORM: Plain = Plain {
    name: "ilo",
    url_forms: super::config::URL_FORMS,
    builder: &BUILDER,
    check_fields: super::config::check_fields,
    setting_keys: &[],
    family: &super::agent::FAMILY,
    facts: None,
};

/// How its methods are built.
pub static BUILDER: Builder<IloConfig> = Builder {
    from_url: super::config::from_url,
    from_parts: super::config::from_parts,
    method: IloMethod::boxed,
};

/// One iLO's machine.
pub type IloMethod = ApiMethod<IloConfig>;

impl ApiDevice for IloConfig {
    fn platform() -> &'static dyn Platform {
        &PLATFORM
    }
    const REQUEST_TIMEOUT: Duration = REQUEST_TIMEOUT;
    const ADDRESS_LIMIT: usize = ADDRESS_LIMIT;
    const USER_HINT: &'static str = "USER@";
    fn party(&self) -> Party {
        Party::Controller
    }
    fn url(&self) -> String {
        IloConfig::url(self)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "HPE iLO {} (RIBCL over TLS 1.2+), {}",
            self.address(),
            crate::tls::describe(&self.tls)
        )?;
        if let Some(v) = self.ribcl {
            write!(f, ", RIBCL {v:.2} forced")?;
        }
        Ok(())
    }
    fn lock_key(&self) -> crate::lock::DeviceKey {
        IloConfig::lock_key(self)
    }
    fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
    fn warnings(&self) -> Vec<String> {
        match self.tls {
            crate::tls::TlsTrust::Insecure => vec![platform::insecure_warning(
                &self.address(),
                "the iLO's",
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
        Ok(Box::new(IloDriver::new(
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
    fn a_method_shows_the_ilo_never_a_secret() {
        let o = MethodOptions {
            credential: CredentialRef::Inline(crate::secret::Secret::new(b"s3cret".to_vec())),
            ssl_insecure: true,
            ..MethodOptions::default()
        };
        let m = BUILDER
            .build_url("ilo://fence@ilo1.example.com:4443", &o)
            .unwrap()
            .unwrap();
        assert_eq!((m.platform().name(), m.username()), ("ilo", "fence"));
        assert_eq!((m.party(), m.address_limit()), (Party::Controller, Some(2)));
        let (endpoint, described) = platform::shown(m.as_ref());
        assert_eq!(endpoint, "ilo://ilo1.example.com:4443");
        assert!(described.contains("RIBCL"), "{described}");
        assert!(!format!("{m:?}").contains("s3cret"));
        assert_eq!(m.warnings().len(), 1);
    }
}
