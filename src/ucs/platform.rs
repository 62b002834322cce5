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
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{Builder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Local, Method, Party, Plain, Platform};
use std::fmt;
use std::time::{Duration, Instant};

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
#[derive(Clone, Debug)]
pub struct UcsMethod {
    /// Everything but the password.
    pub config: UcsConfig,
    /// Where the password comes from.
    pub credential: CredentialRef,
    /// The UUID (or serial) the server must have.
    pub expect: ExpectedIdentity,
    /// Each request's bound.
    pub timeout: Duration,
}

impl UcsMethod {
    /// The method, unpinned, as a plan holds it.
    pub fn boxed(config: UcsConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(UcsMethod {
            config,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
            timeout: REQUEST_TIMEOUT,
        })
    }
}

impl Method for UcsMethod {
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
            "Cisco UCS service profile {} through {} (XML API), {}",
            c.profile_dn().as_deref().unwrap_or("(none)"),
            c.api_url(),
            c.tls
                .as_ref()
                .map_or("plain http".to_string(), crate::tls::describe)
        )
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        Party::Controller
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
                "UCS Manager's",
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
            let driver = UcsDriver::new(c.clone(), &user, password, self.timeout)?;
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
