//! Cisco UCS Manager on the platform seam ([`crate::platform`]):
//! `ucs://[USER@]UCSM[:PORT]/[ORG/]PROFILE` targets and inventory
//! `driver = "ucs"`, a method that builds a [`UcsDriver`] (the password
//! from fencekit's password sources, the shared HTTPS trust), UCS Manager
//! as its verify party (the chassis' own controller: it powers the blade
//! from outside the operating system, like a BMC), one service profile of
//! one UCS Manager as its lock, at most [`ADDRESS_LIMIT`] sessions at once
//! per address.

use super::config::UcsConfig;
use super::driver::UcsDriver;
use crate::engine::error::DriverError;
use crate::platform::api::{ApiDevice, ApiMethod};
use crate::platform::build::Builder;
use crate::platform::{self, Driver, Party, Plain, Platform};
use crate::secret::Secret;
use std::fmt;
use std::time::Duration;

/// Sessions at once to one UCS Manager: it limits the web sessions of a
/// user (32 by default); a fleet stays well below.
pub const ADDRESS_LIMIT: usize = 4;
/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// Cisco UCS Manager.
pub static PLATFORM: Plain = Plain {
    name: "ucs",
    url_forms: super::config::URL_FORMS,
    builder: &BUILDER,
    check_fields: super::build::check_fields,
    setting_keys: &[],
    family: &super::agent::FAMILY,
    facts: None,
};

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<UcsConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: super::build::from_parts,
    method: UcsMethod::boxed,
};

/// One service profile through UCS Manager.
pub type UcsMethod = ApiMethod<UcsConfig>;

impl ApiDevice for UcsConfig {
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
        UcsConfig::url(self)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Cisco UCS service profile {} through {} (XML API), {}",
            self.profile_dn().as_deref().unwrap_or("(none)"),
            self.api_url(),
            self.tls
                .as_ref()
                .map_or("plain http".to_string(), crate::tls::describe)
        )
    }
    fn lock_key(&self) -> crate::lock::DeviceKey {
        UcsConfig::lock_key(self)
    }
    fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
    fn warnings(&self) -> Vec<String> {
        match self.tls {
            Some(crate::tls::TlsTrust::Insecure) => vec![platform::insecure_warning(
                &self.api_url(),
                "UCS Manager's",
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
        Ok(Box::new(UcsDriver::new(
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
    fn a_method_shows_the_profile_never_a_secret() {
        let o = MethodOptions {
            credential: CredentialRef::Inline(crate::secret::Secret::new(b"s3cret".to_vec())),
            ..MethodOptions::default()
        };
        let m = BUILDER
            .build_url("ucs://fence@ucsm.example.com/Finance/web-1", &o)
            .unwrap()
            .unwrap();
        assert_eq!((m.platform().name(), m.username()), ("ucs", "fence"));
        assert_eq!((m.party(), m.address_limit()), (Party::Controller, Some(4)));
        let (endpoint, described) = platform::shown(m.as_ref());
        assert_eq!(endpoint, "ucs://ucsm.example.com/Finance/web-1");
        assert!(
            described.contains("org-root/org-Finance/ls-web-1"),
            "{described}"
        );
        assert!(!format!("{m:?}").contains("s3cret"));
        assert!(m.warnings().is_empty());
    }
}
