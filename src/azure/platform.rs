//! Azure on the platform seam ([`crate::platform`]):
//! `azure://SUBSCRIPTION/RESOURCE-GROUP/VM` targets, a method that builds
//! an [`AzureDriver`] (a service principal's secret resolved from the
//! password options, or the other credentials), Resource Manager as its
//! verify party, the subscription as the address whose rate limit its VMs
//! share, the resource group's VMs for `list`.

use super::config::{Auth, AzureConfig};
use super::driver::AzureDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Builder, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform, PlugEntry};
use std::fmt;
use std::time::Instant;

/// Microsoft Azure (Resource Manager).
pub struct Azure;

/// The registered platform.
pub static PLATFORM: Azure = Azure;

/// Sessions at once per subscription in one run: Resource Manager
/// throttles per subscription and principal (Compute's power actions
/// share small buckets), and Azure's guide keeps a cluster at
/// `pcmk_action_limit=3`.
pub const PER_SUBSCRIPTION: usize = 8;

impl Platform for Azure {
    fn name(&self) -> &'static str {
        "azure"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "azure"
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
pub static BUILDER: Builder<AzureConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: |endpoint, _ip, o| super::build::from_parts(endpoint, o),
    method: AzureMethod::boxed,
};

/// An Azure VM through Resource Manager. A service principal's secret
/// comes from `credential` at build time.
#[derive(Clone, Debug)]
pub struct AzureMethod {
    /// Everything but the secret.
    pub config: AzureConfig,
    /// Where the client secret comes from (a service principal with one).
    pub credential: CredentialRef,
    /// Who the VM must be (vmId, the SMBIOS UUID).
    pub expect: ExpectedIdentity,
}

impl AzureMethod {
    fn boxed(config: AzureConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(AzureMethod {
            config,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
        })
    }
}

const NONE: &CredentialRef = &CredentialRef::None;

impl Method for AzureMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(
            f,
            "azure://{}/{}/{}",
            c.subscription, c.resource_group, c.vm
        )
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(
            f,
            "Azure VM {} in resource group {} of subscription {} ({} cloud), {}{}",
            c.vm,
            if c.resource_group.is_empty() {
                "(metadata service's)"
            } else {
                &c.resource_group
            },
            if c.subscription.is_empty() {
                "(metadata service's)"
            } else {
                &c.subscription
            },
            c.cloud.name(),
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
        // Resource Manager sees the VM from outside it.
        Party::Cloud
    }
    fn address_limit(&self) -> Option<usize> {
        Some(PER_SUBSCRIPTION)
    }
    fn username(&self) -> &str {
        match &self.config.auth {
            Auth::Secret { client_id, .. } | Auth::Certificate { client_id, .. } => client_id,
            _ => "",
        }
    }
    fn credential(&self) -> &CredentialRef {
        match self.config.auth {
            Auth::Secret { .. } => &self.credential,
            _ => NONE,
        }
    }
    platform::pinned_in_expect!();
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let mut c = self.config.clone();
            if let Auth::Secret { secret, .. } = &mut c.auth {
                *secret = self
                    .credential
                    .resolve(deadline)
                    .await
                    .map_err(platform::credential_error)?;
                if secret.is_empty() {
                    return Err(platform::config_error(
                        "a client ID (--username) needs its secret (--password-file, \
                         --password-env, FENCEKIT_PASSWORD) or --azure-client-certificate"
                            .into(),
                    ));
                }
            }
            AzureDriver::new(c)
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for AzureDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let s = self.stats();
        (s.requests, s.requests, s.throttled)
    }
    /// The resource group's VMs, as upstream lists them (the name, no
    /// alias); `list-status` reads each one's state. `monitor` reads one
    /// VM, never the list.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        self.plug_entries(deadline).await
    }
    /// The resource group's VMs, with their states.
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let vms = self.list_vms(deadline).await.map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for v in vms {
            let state = self.state_of(&v.name, deadline).await;
            out.push(Listed {
                target: None,
                name: v.name,
                uri: Some(v.id),
                state,
                error: None,
            });
        }
        Ok(out)
    }
}
