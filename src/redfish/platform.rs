//! Redfish on the platform seam ([`crate::platform`]): `redfish://` and the
//! Metal3 schemes (`redfish+http`, `redfish+https`, `idrac-redfish`,
//! `ilo5-redfish`, …), a method that builds a [`RedfishDriver`], the BMC as
//! its verify party, its systems for `list`.

use super::config::{RedfishConfig, Scheme, TlsTrust};
use super::driver::RedfishDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform, PlugEntry};
use std::fmt;
use std::time::Instant;

/// Redfish (DMTF), and the Metal3 schemes that name it.
pub struct Redfish;

/// The registered platform.
pub static PLATFORM: Redfish = Redfish;

impl Platform for Redfish {
    fn facts(&self) -> Option<&'static dyn crate::platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
    fn name(&self) -> &'static str {
        "redfish"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme.contains("redfish")
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn check_fields(&self, f: &dyn crate::platform::build::Fields) -> Result<(), String> {
        super::build::check_fields(f)
    }
    fn builder(&self) -> Option<&'static dyn MethodBuilder> {
        Some(&PLATFORM)
    }
    fn agent_family(
        &self,
        _def: &platform::agent::defs::Family,
    ) -> Option<&'static platform::agent::AgentFamily> {
        Some(&super::agent::FAMILY)
    }
}

impl MethodBuilder for Redfish {
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        super::build::from_url(url, o)
            .map(|r| r.map(|c| RedfishMethod::boxed(c, o.credential.clone())))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        super::build::from_parts(endpoint, ip, o)
            .map(|c| RedfishMethod::boxed(c, o.credential.clone()))
    }
}

/// A Redfish method: the config's password is filled from `credential` at
/// build time.
#[derive(Clone, Debug)]
pub struct RedfishMethod {
    /// Everything but the password.
    pub config: RedfishConfig,
    /// Where the password comes from.
    pub credential: CredentialRef,
    /// Who the machine behind it must be (empty: not checked). With a UUID
    /// and no systems URI, it also chooses the system.
    pub expect: ExpectedIdentity,
}

impl RedfishMethod {
    /// The method, unpinned, as a plan holds it.
    pub fn boxed(config: RedfishConfig, credential: CredentialRef) -> Box<dyn Method> {
        Box::new(RedfishMethod {
            config,
            credential,
            expect: ExpectedIdentity::default(),
        })
    }
}

impl Method for RedfishMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = &self.config;
        write!(f, "{}://", config.scheme.as_str())?;
        platform::write_host_port(f, &config.host, config.port)?;
        f.write_str(config.systems_uri.as_ref().unwrap_or(&config.redfish_uri))?;
        match &config.plug {
            Some(p) => write!(f, " (system {p})"),
            None => Ok(()),
        }
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.config.tls {
            TlsTrust::Verify { ca_cert: None } => {
                f.write_str("TLS verified (system trust store)")?
            }
            TlsTrust::Verify { ca_cert: Some(p) } => {
                write!(f, "TLS verified against {}", p.display())?
            }
            TlsTrust::Insecure => f.write_str("TLS NOT verified")?,
            TlsTrust::Fingerprint(_) => f.write_str("TLS pinned by fingerprint")?,
        }
        f.write_str(if self.config.session_auth {
            ", session auth"
        } else {
            ", basic auth"
        })
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        Party::Controller
    }
    fn username(&self) -> &str {
        &self.config.username
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    platform::pinned_in_expect!();
    fn cleartext(&self) -> bool {
        self.config.scheme == Scheme::Http
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let mut c = self.config.clone();
            c.password = self
                .credential
                .resolve(deadline)
                .await
                .map_err(platform::credential_error)?;
            // The pinned UUID also chooses among several systems.
            if c.expect_uuid.is_none() {
                c.expect_uuid = self.expect.uuid.clone();
            }
            RedfishDriver::new(c)
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for RedfishDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let s = self.stats();
        (s.requests, s.requests, 0)
    }
    /// The systems behind the service: their paths (what `--systems-uri`
    /// takes), their `Name`, their `PowerState`.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let systems = self.list_systems(deadline).await?;
        Ok(systems
            .into_iter()
            .map(|s| PlugEntry {
                id: s.uri,
                alias: s.name.unwrap_or_default(),
                state: s.power.ok(),
            })
            .collect())
    }
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let systems = self
            .list_systems(deadline)
            .await
            .map_err(|e| e.to_string())?;
        Ok(systems
            .into_iter()
            .map(|s| Listed {
                target: None,
                name: s.name.clone().unwrap_or_else(|| s.id.clone()),
                uri: Some(s.uri),
                state: s.power.as_ref().ok().copied(),
                error: s.power.err(),
            })
            .collect())
    }
}
