//! Proxmox VE on the platform seam ([`crate::platform`]):
//! `pve://[USER@]HOST[:PORT]/[NODE/]VM` targets and inventory
//! `driver = "pve"`, a method that builds a [`PveDriver`] (the password or
//! API token secret from fencekit's password sources, the shared HTTPS
//! trust), the cluster as its verify party (a hypervisor's control plane:
//! the fencing device's own view, alone bmc-only), one guest of one
//! cluster as its lock, at most [`ADDRESS_LIMIT`] sessions at once per
//! address.

use super::config::PveConfig;
use super::driver::PveDriver;
use crate::engine::error::DriverError;
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{Builder, MethodOptions};
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Local, Method, Party, Plain, Platform};
use std::fmt;
use std::time::{Duration, Instant};

/// Sessions at once to one API address: pveproxy serves with three worker
/// processes by default, each a request at a time.
pub const ADDRESS_LIMIT: usize = 3;
/// Each request's bound natively.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// Proxmox VE (QEMU VMs and LXC containers).
pub static PLATFORM: Plain = Plain {
    name: "pve",
    url_forms: super::config::URL_FORMS,
    builder: &BUILDER,
    check_fields: super::build::check_fields,
    setting_keys: super::build::SETTING_KEYS,
    family: &super::agent::FAMILY,
    facts: Some(&super::facts::FACTS),
};

/// How its methods are built (`super::build`).
pub static BUILDER: Builder<PveConfig> = Builder {
    from_url: super::build::from_url,
    from_parts: super::build::from_parts,
    method: PveMethod::boxed,
};

/// One guest through a Proxmox VE cluster's API.
#[derive(Clone, Debug)]
pub struct PveMethod {
    /// Everything but the secret.
    pub config: PveConfig,
    /// Where the password (or the API token's secret) comes from.
    pub credential: CredentialRef,
    /// The SMBIOS UUID (or VMID, name) the guest must have.
    pub expect: ExpectedIdentity,
    /// Each request's bound.
    pub timeout: Duration,
}

impl PveMethod {
    /// The method, unpinned, as a plan holds it.
    pub fn boxed(config: PveConfig, o: &MethodOptions) -> Box<dyn Method> {
        Box::new(PveMethod {
            config,
            credential: o.credential.clone(),
            expect: ExpectedIdentity::default(),
            timeout: REQUEST_TIMEOUT,
        })
    }
}

impl Method for PveMethod {
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
            "Proxmox VE guest {} through {} ({}), {}{}",
            c.guest.as_ref().map_or("(none)".into(), |g| g.text()),
            c.api_url(),
            if c.token_id().is_some() {
                "API token"
            } else {
                "ticket"
            },
            crate::tls::describe(&c.tls),
            if c.skiplock { ", skiplock" } else { "" }
        )
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        vec![self.config.lock_key()]
    }
    fn party(&self) -> Party {
        // The cluster's API is the fencing device's own view of the guest:
        // proven needs a witness outside it.
        Party::Hypervisor
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
        let mut w = Vec::new();
        if self.config.tls == crate::tls::TlsTrust::Insecure {
            w.push(platform::insecure_warning(
                &self.config.api_url(),
                "the node's",
                "the cluster",
            ));
        }
        if self.config.skiplock {
            w.push(format!(
                "{}: skiplock: a locked guest (backup, migration, snapshot) is powered anyway",
                self.config.url()
            ));
        }
        w
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let c = &self.config;
            let (user, secret) = platform::user_and_secret(
                c.user.as_deref(),
                &c.url(),
                "USER@REALM@",
                &self.credential,
                deadline,
            )
            .await?;
            let driver = PveDriver::new(c.clone(), &user, secret, self.timeout)?;
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
    fn a_method_shows_its_cluster_and_guest_never_a_secret() {
        let o = MethodOptions {
            ssl_insecure: true,
            credential: CredentialRef::Inline(crate::secret::Secret::new(b"s3cret".to_vec())),
            ..MethodOptions::default()
        };
        let m = BUILDER
            .build_url("pve://fence@pve!fk@pve1.example.com/pve2/101", &o)
            .unwrap()
            .unwrap();
        assert_eq!(m.platform().name(), "pve");
        assert_eq!(m.username(), "fence@pve!fk");
        assert_eq!((m.party(), m.address_limit()), (Party::Hypervisor, Some(3)));
        let (endpoint, d) = platform::shown(m.as_ref());
        assert_eq!(endpoint, "pve://pve1.example.com/pve2/101");
        assert!(d.contains("API token") && d.contains("NOT verified"), "{d}");
        assert!(!d.contains("s3cret") && !format!("{m:?}").contains("s3cret"));
        assert_eq!(m.warnings().len(), 1);
    }
}
