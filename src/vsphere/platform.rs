//! vSphere on the platform seam ([`crate::platform`]):
//! `vsphere://[USER@]HOST[:PORT]/VM[?datacenter=PATH]` targets and
//! inventory `driver = "vsphere"`, a method that builds a [`VsphereDriver`]
//! (the password from fencekit's password sources, the shared HTTPS trust),
//! vCenter as its verify party (a hypervisor's control plane: the fencing
//! device's own view, alone bmc-only), one VM of one vCenter as its lock.

use super::client::Client;
use super::config::VsphereConfig;
use super::driver::VsphereDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{Builder, Fields, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform};
use std::fmt;
use std::time::Instant;

/// VMware vSphere (vCenter or a standalone ESXi host), vim25 SOAP.
pub struct Vsphere;

/// The registered platform.
pub static PLATFORM: Vsphere = Vsphere;

impl Platform for Vsphere {
    fn facts(&self) -> Option<&'static dyn crate::platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
    fn agent_family(
        &self,
        def: &crate::platform::agent::defs::Family,
    ) -> Option<&'static crate::platform::agent::AgentFamily> {
        match def.name {
            "fence_vmware_soap" => Some(&super::agent_soap::FAMILY),
            "fence_vmware_rest" => Some(&super::agent_rest::FAMILY),
            _ => None,
        }
    }
    fn name(&self) -> &'static str {
        "vsphere"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "vsphere"
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn builder(&self) -> Option<&'static dyn MethodBuilder> {
        Some(&BUILDER)
    }
    fn check_fields(&self, f: &dyn Fields) -> Result<(), String> {
        super::build::check_fields(f)
    }
}

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<VsphereConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: super::build::from_parts,
    method: VsphereMethod::boxed,
};

/// One VM through vCenter: the password is read from `credential` at build
/// time.
#[derive(Clone, Debug)]
pub struct VsphereMethod {
    /// Everything but the password.
    pub config: VsphereConfig,
    /// Where the password comes from.
    pub credential: CredentialRef,
    /// The BIOS or instance UUID the VM must have (empty: not checked).
    pub expect: ExpectedIdentity,
}

impl VsphereMethod {
    /// The method, unpinned, as a plan holds it.
    pub fn boxed(config: VsphereConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(VsphereMethod {
            config,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
        })
    }
}

impl Method for VsphereMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The user is shown by `username`, not in the endpoint.
        let mut c = self.config.clone();
        c.user = None;
        f.write_str(&c.url())
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "vSphere VM {} through {}, {}",
            self.config.vm_text(),
            self.config.sdk_url(),
            crate::tls::describe(&self.config.tls)
        )?;
        match &self.config.datacenter {
            Some(dc) => write!(f, ", datacenter {dc}"),
            None => Ok(()),
        }
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        // vCenter is the fencing device's own view of the guest (a
        // hypervisor's control plane, as EC2's API is of an instance):
        // proven needs a witness outside it.
        Party::Hypervisor
    }
    fn username(&self) -> &str {
        self.config.user.as_deref().unwrap_or("")
    }
    fn credential(&self) -> &CredentialRef {
        &self.credential
    }
    platform::pinned_in_expect!();
    fn warnings(&self) -> Vec<String> {
        match self.config.tls {
            crate::tls::TlsTrust::Insecure => vec![platform::insecure_warning(
                &self.config.sdk_url(),
                "vCenter's",
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
            let (tls, seen, _) = crate::tls::client_config(&c.tls)
                .map_err(|e| platform::config_error(e.to_string()))?;
            let client = Client::new(&c.sdk_url(), tls)?;
            Ok(Box::new(
                VsphereDriver::new(client, &user, password, c.vm.clone())
                    .with_datacenter(c.datacenter.clone())
                    .with_certificate(seen),
            ) as Box<dyn Driver>)
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for VsphereDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let calls = self.calls();
        (calls, calls, 0)
    }
    /// Every VM behind vCenter (of the target's datacenter, if it names
    /// one): the name, `moref:` and BIOS UUID, the state when it is
    /// evidence (a stale one is an error naming the host).
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let host = self.target_host();
        let vms = self.list_vms(deadline).await.map_err(|e| e.to_string())?;
        Ok(vms
            .into_iter()
            .map(|(v, reading)| {
                let state = reading.power_state();
                Listed {
                    target: Some(format!("vsphere://{host}/moref:{}", v.moref.value)),
                    name: match &v.bios_uuid {
                        Some(u) => format!("{} (uuid:{u})", v.name),
                        None => v.name.clone(),
                    },
                    uri: None,
                    state: state.as_ref().ok().copied(),
                    error: state.err().map(|e| e.message),
                }
            })
            .collect())
    }
    /// What the last reading was beyond on/off (a suspended VM, a host that
    /// stopped reporting), for verify.
    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        crate::engine::driver::PowerDriver::state_detail(self)
            .into_iter()
            .map(|d| format!("vCenter: {d}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_shows_its_vcenter_and_vm_never_a_secret() {
        let o = MethodOptions {
            ssl_insecure: true,
            credential: CredentialRef::Inline(crate::secret::Secret::new(b"s3cret".to_vec())),
            ..MethodOptions::default()
        };
        let m = BUILDER
            .build_url("vsphere://fence@vc.example.com/node-1?datacenter=DC1", &o)
            .unwrap()
            .unwrap();
        assert_eq!(m.platform().name(), "vsphere");
        assert_eq!(m.username(), "fence");
        assert_eq!(m.party(), Party::Hypervisor);
        let (endpoint, described) = platform::shown(m.as_ref());
        assert_eq!(endpoint, "vsphere://vc.example.com/node-1?datacenter=DC1");
        assert!(
            described.contains("TLS NOT verified") && described.contains("datacenter DC1"),
            "{described}"
        );
        assert!(!described.contains("s3cret") && !format!("{m:?}").contains("s3cret"));
        assert_eq!(m.warnings().len(), 1);
        assert_eq!(m.device_keys().len(), 1);
    }
}
