//! Intel AMT on the platform seam ([`crate::platform`]): `amt://` targets
//! and inventory `driver = "amt"`, a method (the generic
//! [`ApiMethod`]) that builds an [`AmtDriver`] (the password from
//! fencekit's password sources), the machine's own management engine as
//! its verify party (it powers the machine from outside the operating
//! system, like a BMC, but shares its power supply and often its network
//! port), the machine as its lock.

use super::config::AmtConfig;
use super::driver::AmtDriver;
use crate::engine::error::DriverError;
use crate::platform::api::{ApiDevice, ApiMethod};
use crate::platform::build::Builder;
use crate::platform::{self, Driver, Party, Plain, Platform};
use crate::secret::Secret;
use std::fmt;
use std::time::Duration;

/// Sessions at once to one AMT machine (its web server is small).
pub const ADDRESS_LIMIT: usize = 1;
/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Intel AMT.
pub static PLATFORM: Plain = Plain {
    name: "amt",
    url_forms: super::config::URL_FORMS,
    builder: &BUILDER,
    check_fields: super::build::check_fields,
    setting_keys: &[],
    family: &super::agent::FAMILY,
    facts: None,
};

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<AmtConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: super::build::from_parts,
    method: AmtMethod::boxed,
};

/// One AMT machine.
pub type AmtMethod = ApiMethod<AmtConfig>;

impl ApiDevice for AmtConfig {
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
        AmtConfig::url(self)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Intel AMT {} (WS-Management, HTTP Digest), {}",
            self.wsman_url(),
            self.tls
                .as_ref()
                .map_or("plain http".to_string(), crate::tls::describe)
        )
    }
    fn lock_key(&self) -> crate::lock::DeviceKey {
        AmtConfig::lock_key(self)
    }
    fn user(&self) -> Option<&str> {
        Some(AmtConfig::user(self))
    }
    fn warnings(&self) -> Vec<String> {
        match self.tls {
            Some(crate::tls::TlsTrust::Insecure) => {
                vec![platform::insecure_warning(&self.wsman_url(), "AMT's", "it")]
            }
            _ => Vec::new(),
        }
    }
    fn driver(
        &self,
        user: &str,
        secret: Secret,
        timeout: Duration,
    ) -> Result<Box<dyn Driver>, DriverError> {
        Ok(Box::new(AmtDriver::new(
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
    fn a_method_shows_the_machine_never_a_secret() {
        let o = MethodOptions {
            credential: CredentialRef::Inline(crate::secret::Secret::new(b"s3cret".to_vec())),
            ..MethodOptions::default()
        };
        let m = BUILDER
            .build_url("amt://desk-7.example.com", &o)
            .unwrap()
            .unwrap();
        assert_eq!((m.platform().name(), m.username()), ("amt", "admin"));
        assert_eq!((m.party(), m.address_limit()), (Party::Controller, Some(1)));
        let (endpoint, described) = platform::shown(m.as_ref());
        assert_eq!(endpoint, "amt://desk-7.example.com");
        assert!(
            described.contains("http://desk-7.example.com:16992/wsman"),
            "{described}"
        );
        assert!(!format!("{m:?}").contains("s3cret"));
    }
}
