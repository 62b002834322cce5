//! Amazon EC2 on the platform seam ([`crate::platform`]): `aws://REGION/ID`
//! targets, a method that builds an [`AwsDriver`] (keys given, or the SDKs'
//! chain), the cloud control plane as its verify party, its instances for
//! `list`, and what EC2 says about the last change as verify context.

use super::config::{AwsConfig, GivenKeys};
use super::driver::AwsDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Builder, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform, PlugEntry};
use std::fmt;
use std::time::Instant;

/// Amazon EC2.
pub struct Aws;

/// The registered platform.
pub static PLATFORM: Aws = Aws;

impl Platform for Aws {
    fn name(&self) -> &'static str {
        "aws"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "aws"
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn check_fields(&self, f: &dyn crate::platform::build::Fields) -> Result<(), String> {
        super::build::check_fields(f)
    }
    fn builder(&self) -> Option<&'static dyn MethodBuilder> {
        Some(&BUILDER)
    }
    fn foreign_options(&self, _driver: &str, o: &MethodOptions) -> Result<(), BuildError> {
        super::build::foreign_options(o)
    }
    fn expected_names(
        &self,
        expected: ExpectedIdentity,
        o: &MethodOptions,
    ) -> Result<ExpectedIdentity, BuildError> {
        super::build::expected_names(expected, o)
    }
    fn agent_family(
        &self,
        _def: &platform::agent::defs::Family,
    ) -> Option<&'static platform::agent::AgentFamily> {
        Some(&super::agent::FAMILY)
    }
}

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<AwsConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: |endpoint, _ip, o| super::build::from_parts(endpoint, o),
    method: AwsMethod::boxed,
};

/// An EC2 instance through the EC2 API. With an access key ID, the secret
/// access key comes from `credential` at build time; without one, the
/// SDKs' credential chain is used.
#[derive(Clone, Debug)]
pub struct AwsMethod {
    /// Everything but the keys.
    pub config: AwsConfig,
    /// The access key ID, when keys are given.
    pub access_key: Option<String>,
    /// Where the secret access key comes from (with `access_key`).
    pub credential: CredentialRef,
    /// The names the instance must have (`node_name`, a tag).
    pub expect: ExpectedIdentity,
}

impl AwsMethod {
    /// A method of `config` with `o`'s access key and credential.
    fn boxed(config: AwsConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(AwsMethod {
            config,
            access_key: o.access_key.clone().filter(|k| !k.trim().is_empty()),
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
        })
    }
}

const NONE: &CredentialRef = &CredentialRef::None;

impl Method for AwsMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "aws://{}/{}",
            self.config.region, self.config.instance_id
        )
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "EC2 instance {} in {}, {}{}",
            self.config.instance_id,
            self.config.region,
            if self.access_key.is_some() {
                "access key given"
            } else {
                "credentials from the chain (environment, shared files, web identity, \
                 instance metadata)"
            },
            if self.config.allow_self_fence {
                ", self-fencing allowed"
            } else {
                ""
            }
        )
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        // EC2 sees the instance from outside it (issue 25).
        Party::Cloud
    }
    fn credential(&self) -> &CredentialRef {
        match self.access_key {
            Some(_) => &self.credential,
            None => NONE,
        }
    }
    // The method's own names (node_name, a tag) stay when a node's UUID
    // or serial is pinned over them ([`platform::pin`]).
    platform::pinned_in_expect!();
    fn warnings(&self) -> Vec<String> {
        match self.config.trust {
            crate::tls::TlsTrust::Insecure => vec![format!(
                "{}: the endpoints' certificates are not verified (--ssl-insecure): anyone \
                 on the path can impersonate EC2 and read the signed requests",
                self.config.instance_id
            )],
            _ => Vec::new(),
        }
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let mut c = self.config.clone();
            // Without an access key ID the chain is used, whatever
            // password source the run names.
            let secret = match self.access_key {
                Some(_) => Some(
                    self.credential
                        .resolve(deadline)
                        .await
                        .map_err(platform::credential_error)?,
                ),
                None => None,
            };
            c.keys = GivenKeys::from_parts(self.access_key.as_deref(), secret)
                .map_err(|e| platform::config_error(e.to_string()))?;
            AwsDriver::new(c)
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for AwsDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let s = self.stats();
        (s.requests, s.requests, s.throttled)
    }
    /// The instances (`--filter` selects), as upstream lists them: the ID
    /// and an empty alias (fence-agents 4.12.1 prints no name), with their
    /// state for `list-status`.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        Ok(self
            .list_configured(deadline)
            .await?
            .into_iter()
            .map(|i| PlugEntry {
                state: super::model::observed(&i.state).and_then(|o| o.settled()),
                id: i.id,
                alias: String::new(),
            })
            .collect())
    }
    /// The region's instances (the credentials' view of it).
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let instances = AwsDriver::list(self, None, deadline)
            .await
            .map_err(|e| e.to_string())?;
        Ok(instances
            .into_iter()
            .map(|i| Listed {
                target: None,
                name: format!("{} {}", i.id, i.name()).trim_end().to_string(),
                uri: None,
                state: super::model::observed(&i.state).and_then(|o| o.settled()),
                error: None,
            })
            .collect())
    }
    /// What EC2 says about the last change (its reason) and, for `expect
    /// on`, its status checks.
    async fn context(&mut self, expect_on: bool, deadline: Option<Instant>) -> Vec<String> {
        self.evidence(expect_on, deadline).await
    }
}
