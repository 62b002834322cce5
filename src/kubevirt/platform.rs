//! KubeVirt on the platform seam ([`crate::platform`]):
//! `kubevirt://[CONTEXT@]NAMESPACE/VM` targets, a method that builds a
//! [`KubevirtDriver`] (credentials from the kubeconfig or the service
//! account, never from fencekit's password sources), the control plane as
//! its verify party (the device's own view: alone, bmc-only), its
//! VirtualMachines for `list`.

use super::config::KubevirtConfig;
use super::driver::KubevirtDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::engine::power::PowerState;
use crate::platform::build::{BuildError, MethodBuilder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, Platform, PlugEntry};
use std::fmt;
use std::time::Instant;

/// KubeVirt (OpenShift Virtualization).
pub struct Kubevirt;

/// The registered platform.
pub static PLATFORM: Kubevirt = Kubevirt;

impl Platform for Kubevirt {
    fn facts(&self) -> Option<&'static dyn crate::platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
    fn name(&self) -> &'static str {
        "kubevirt"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "kubevirt"
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn builder(&self) -> Option<&'static dyn MethodBuilder> {
        Some(&PLATFORM)
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

impl MethodBuilder for Kubevirt {
    fn build_url(
        &self,
        url: &str,
        o: &MethodOptions,
    ) -> Option<Result<Box<dyn Method>, BuildError>> {
        super::build::from_url(url, o).map(|r| r.map(KubevirtMethod::boxed))
    }
    fn build_parts(
        &self,
        endpoint: Option<&str>,
        _ip: Option<&str>,
        o: &MethodOptions,
    ) -> Result<Box<dyn Method>, BuildError> {
        super::build::from_parts(endpoint, o).map(KubevirtMethod::boxed)
    }
}

impl KubevirtMethod {
    /// A method of these settings, not pinned yet.
    pub fn boxed(config: KubevirtConfig) -> Box<dyn Method> {
        Box::new(KubevirtMethod {
            config,
            expect: ExpectedIdentity::default(),
        })
    }
}

/// A VirtualMachine through the Kubernetes API.
#[derive(Clone, Debug)]
pub struct KubevirtMethod {
    /// Everything (credentials are the kubeconfig's or the service account's).
    pub config: KubevirtConfig,
    /// The firmware UUID / VM uid the VM must have.
    pub expect: ExpectedIdentity,
}

const NONE: &CredentialRef = &CredentialRef::None;

impl Method for KubevirtMethod {
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
        write!(
            f,
            "KubeVirt VirtualMachine {} in namespace {}, credentials from {}{}",
            self.config.vm,
            self.config
                .namespace
                .as_deref()
                .unwrap_or("(the context's)"),
            match (&self.config.kubeconfig, &self.config.context) {
                (Some(k), Some(c)) => format!("{} (context {c})", k.display()),
                (Some(k), None) => k.display().to_string(),
                (None, Some(c)) => format!("the kubeconfig's context {c}"),
                (None, None) => "KUBECONFIG, ~/.kube/config or the service account".into(),
            },
            if self.config.insecure {
                ", TLS not verified"
            } else {
                ""
            }
        )
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        // The KubeVirt API is the fencing device's own view of the guest
        // (as EC2's is of an instance): proven needs a witness outside it.
        Party::Cloud
    }
    fn credential(&self) -> &CredentialRef {
        NONE
    }
    platform::pinned_in_expect!();
    fn warnings(&self) -> Vec<String> {
        if self.config.insecure {
            vec![format!(
                "{}: the API server's certificate is not verified (--ssl-insecure)",
                self.config.url()
            )]
        } else {
            Vec::new()
        }
    }
    fn build(&self, _deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            KubevirtDriver::new(self.config.clone())
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A VM's printable status as a settled state, where it is one.
fn printable_state(s: &str) -> Option<PowerState> {
    match s {
        "Running" | "Paused" => Some(PowerState::On),
        "Stopped" => Some(PowerState::Off),
        _ => None,
    }
}

impl platform::PlatformDriver for KubevirtDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let (sent, throttled) = self.stats();
        (sent, sent, throttled)
    }
    /// The namespace's VirtualMachines, as upstream lists them: the name
    /// and an empty alias, with the VM's printable status for `list-status`
    /// (a listing, never the evidence an off is judged by).
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        Ok(KubevirtDriver::list(self, deadline)
            .await?
            .into_iter()
            .map(|v| PlugEntry {
                state: printable_state(&v.printable),
                id: v.name,
                alias: String::new(),
            })
            .collect())
    }
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let ns = self.namespace().to_string();
        let vms = KubevirtDriver::list(self, deadline)
            .await
            .map_err(|e| e.to_string())?;
        Ok(vms
            .into_iter()
            .map(|v| Listed {
                target: Some(format!("kubevirt://{ns}/{}", v.name)),
                state: printable_state(&v.printable),
                name: format!("{} {}", v.name, v.printable).trim_end().to_string(),
                uri: None,
                error: None,
            })
            .collect())
    }
    /// Why the last reading was what it was (the VMI, the launcher, the
    /// node), and what the RBAC did not let fencekit read.
    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        let mut out: Vec<String> = crate::engine::driver::PowerDriver::state_detail(self)
            .into_iter()
            .map(|d| format!("KubeVirt: {d}"))
            .collect();
        out.extend(
            self.denied()
                .into_iter()
                .map(|d| format!("KubeVirt: {d} (device-only)")),
        );
        out
    }
}
