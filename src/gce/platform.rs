//! GCE on the platform seam ([`crate::platform`]): `gce://PROJECT/ZONE/INSTANCE`
//! targets, a method that builds a [`GceDriver`], the Compute Engine API
//! as its verify party, the project as the address whose quota its
//! instances share, the zones' instances for `list`.

use super::config::GceConfig;
use super::driver::GceDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Builder, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform, PlugEntry};
use std::fmt;
use std::time::Instant;

/// Google Compute Engine.
pub struct Gce;

/// The registered platform.
pub static PLATFORM: Gce = Gce;

/// Sessions at once per project in one run: the API's rate quota is per
/// project (and per region for operations).
pub const PER_PROJECT: usize = 8;

impl Platform for Gce {
    fn name(&self) -> &'static str {
        "gce"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "gce"
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
    fn facts(&self) -> Option<&'static dyn crate::platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
}

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<GceConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: |endpoint, _ip, o| super::build::from_parts(endpoint, o),
    method: GceMethod::boxed,
};

/// A Compute Engine instance through the API.
#[derive(Clone, Debug)]
pub struct GceMethod {
    /// The settings.
    pub config: GceConfig,
    /// Who the instance must be (its id).
    pub expect: ExpectedIdentity,
}

impl GceMethod {
    fn boxed(config: GceConfig, _o: &MethodOptions) -> Box<dyn Method> {
        Box::new(GceMethod {
            config,
            expect: ExpectedIdentity::default(),
        })
    }
}

const NONE: &CredentialRef = &CredentialRef::None;

impl Method for GceMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(f, "gce://{}/{}/{}", c.project, c.zone, c.instance)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(
            f,
            "GCE instance {} in zone {} of project {}, {}{}",
            c.instance,
            if c.zone.is_empty() {
                "(found by name)"
            } else {
                &c.zone
            },
            if c.project.is_empty() {
                "(metadata server's)"
            } else {
                &c.project
            },
            c.auth.describe(),
            if c.allow_self_fence {
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
        // The API sees the instance from outside it.
        Party::Cloud
    }
    fn address_limit(&self) -> Option<usize> {
        Some(PER_PROJECT)
    }
    fn username(&self) -> &str {
        ""
    }
    fn credential(&self) -> &CredentialRef {
        NONE
    }
    platform::pinned_in_expect!();
    fn build(&self, _deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            GceDriver::new(self.config.clone())
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for GceDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let s = self.stats();
        (s.requests, s.requests, s.throttled)
    }
    /// The zones' instances, as upstream lists them (id, name);
    /// `list-status` with the states the list carries. `monitor` reads one
    /// instance, never the list.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        self.plug_entries(deadline).await
    }
    /// The zones' instances, with their states.
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let list = self
            .list_instances(deadline)
            .await
            .map_err(|e| e.to_string())?;
        Ok(list
            .into_iter()
            .map(|i| Listed {
                target: None,
                state: super::model::observed(&i.status).and_then(|o| o.settled()),
                uri: i.self_link,
                name: i.name,
                error: None,
            })
            .collect())
    }
}
