//! IBM Cloud on the platform seam ([`crate::platform`]): `ibmvpc://` and
//! `powervs://` targets, a method that builds an [`IbmDriver`] (the API
//! key resolved from the password options), the cloud as its verify
//! party, the region (Power VS: the workspace) as the address whose rate
//! limit its instances share, the instances for `list`.

use super::config::IbmConfig;
use super::driver::IbmDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Builder, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform, PlugEntry};
use std::fmt;
use std::time::Instant;

/// IBM Cloud (VPC and Power Virtual Server).
pub struct Ibm;

/// The registered platform.
pub static PLATFORM: Ibm = Ibm;

/// Sessions at once per region (or workspace) in one run: the APIs rate
/// limit per account and region.
pub const PER_REGION: usize = 8;

impl Platform for Ibm {
    fn name(&self) -> &'static str {
        "ibm"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "ibmvpc" || scheme == "powervs"
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn check_fields(&self, f: &dyn crate::platform::build::Fields) -> Result<(), String> {
        super::build::check_fields(f)
    }
    fn setting_keys(&self) -> &'static [&'static str] {
        super::build::SETTINGS
    }
    fn builder(&self) -> Option<&'static dyn MethodBuilder> {
        Some(&BUILDER)
    }
    fn expected_names(
        &self,
        expected: ExpectedIdentity,
        _o: &MethodOptions,
    ) -> Result<ExpectedIdentity, BuildError> {
        Ok(expected)
    }
    fn agent_family(
        &self,
        def: &platform::agent::defs::Family,
    ) -> Option<&'static platform::agent::AgentFamily> {
        Some(super::agent::family(def.name))
    }
    fn facts(&self) -> Option<&'static dyn crate::platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
}

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<IbmConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: |endpoint, _ip, o| super::build::from_parts(endpoint, o),
    method: IbmMethod::boxed,
};

/// An IBM Cloud instance; the API key comes from `credential` at build time.
#[derive(Clone, Debug)]
pub struct IbmMethod {
    /// Everything but the API key.
    pub config: IbmConfig,
    /// Where the API key comes from.
    pub credential: CredentialRef,
    /// Who the instance must be.
    pub expect: ExpectedIdentity,
}

impl IbmMethod {
    fn boxed(config: IbmConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(IbmMethod {
            config,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
        })
    }
}

impl Method for IbmMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.config.target())
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", super::agent::describe(&self.config))
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        Party::Cloud
    }
    fn address_limit(&self) -> Option<usize> {
        Some(PER_REGION)
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    platform::pinned_in_expect!();
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let mut c = self.config.clone();
            c.apikey = self
                .credential
                .resolve(deadline)
                .await
                .map_err(platform::credential_error)?;
            if c.apikey.is_empty() {
                return Err(platform::config_error(
                    "IBM Cloud needs an API key (--password-file, --password-env, \
                     FENCEKIT_PASSWORD)"
                        .into(),
                ));
            }
            IbmDriver::new(c)
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for IbmDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let s = self.stats();
        (s.requests, s.requests, s.throttled)
    }
    /// The instances, as upstream lists them (ID, name); `list-status`
    /// with each one's state from the list. `monitor` reads one resource.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        self.plug_entries(deadline).await
    }
    /// The instances, with their states.
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let service = self.config().service;
        let list = self
            .list_machines(deadline)
            .await
            .map_err(|e| e.to_string())?;
        Ok(list
            .into_iter()
            .map(|m| Listed {
                target: None,
                state: super::model::observed(service, &m).and_then(|o| o.settled()),
                name: m.name,
                uri: Some(m.id),
                error: None,
            })
            .collect())
    }
}
