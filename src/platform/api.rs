//! The method of a device reached through one API with a user and a
//! secret (a hypervisor's REST API, a blade manager's XML API): its
//! [`Method`] written once, generic over what each platform's config says
//! ([`ApiDevice`]). A platform gives its target's text, its lock, its
//! party, its warnings and how its driver is made; the plan's plumbing
//! (the credential, the identity pin, the per-request bound, the user and
//! secret resolved at build time) is the same for all of them.

use super::build::MethodOptions;
use super::credential::CredentialRef;
use super::{Driver, Local, Method, Party, Platform};
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::secret::Secret;
use std::fmt;
use std::time::{Duration, Instant};

/// What a platform's config tells the generic [`ApiMethod`].
pub trait ApiDevice: Clone + fmt::Debug + Send + Sync + 'static {
    /// The registered platform.
    fn platform() -> &'static dyn Platform;
    /// Each request's bound natively (`--login-timeout` replaces it).
    const REQUEST_TIMEOUT: Duration;
    /// The most sessions at once to one API address.
    const ADDRESS_LIMIT: usize;
    /// How a user is written in the target, for the error when none is
    /// given (`USER@`, `USER@REALM@`).
    const USER_HINT: &'static str;
    /// Who it is for `verify`.
    fn party(&self) -> Party;
    /// The target as a URL, without credentials.
    fn url(&self) -> String;
    /// How the level is reached, for plans and `-v`; never a secret.
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// The device it talks to.
    fn lock_key(&self) -> crate::lock::DeviceKey;
    /// The user, when the target or the options give one.
    fn user(&self) -> Option<&str>;
    /// What a front says once (unverified certificates, plain HTTP).
    fn warnings(&self) -> Vec<String>;
    /// The driver for `user` and `secret`, each request bound by `timeout`.
    fn driver(
        &self,
        user: &str,
        secret: Secret,
        timeout: Duration,
    ) -> Result<Box<dyn Driver>, DriverError>;
}

/// One device through its API, as a plan holds it.
#[derive(Clone, Debug)]
pub struct ApiMethod<C> {
    /// Everything but the secret.
    pub config: C,
    /// Where the password (or token secret) comes from.
    pub credential: CredentialRef,
    /// The SMBIOS UUID (or name) the machine must have.
    pub expect: ExpectedIdentity,
    /// Each request's bound.
    pub timeout: Duration,
}

impl<C: ApiDevice> ApiMethod<C> {
    /// The method, unpinned (a `Builder`'s `method`).
    pub fn boxed(config: C, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(ApiMethod {
            config,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
            timeout: C::REQUEST_TIMEOUT,
        })
    }
}

impl<C: ApiDevice> Method for ApiMethod<C> {
    fn platform(&self) -> &'static dyn Platform {
        C::platform()
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.config.url())
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.config.describe(f)
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        self.config.party()
    }
    fn address_limit(&self) -> Option<usize> {
        Some(C::ADDRESS_LIMIT)
    }
    fn username(&self) -> &str {
        self.config.user().unwrap_or("")
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    super::pinned_in_expect!();
    fn set_login_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout.max(Duration::from_secs(1));
    }
    fn warnings(&self) -> Vec<String> {
        self.config.warnings()
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let c = &self.config;
            let (user, secret) = super::user_and_secret(
                c.user(),
                &c.url(),
                C::USER_HINT,
                &self.credential,
                deadline,
            )
            .await?;
            c.driver(&user, secret, self.timeout)
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
