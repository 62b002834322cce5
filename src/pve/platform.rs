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
use crate::platform::api::{ApiDevice, ApiMethod};
use crate::platform::build::Builder;
use crate::platform::{self, Driver, Party, Plain, Platform};
use crate::secret::Secret;
use std::fmt;
use std::time::Duration;

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
pub type PveMethod = ApiMethod<PveConfig>;

impl ApiDevice for PveConfig {
    fn platform() -> &'static dyn Platform {
        &PLATFORM
    }
    const REQUEST_TIMEOUT: Duration = REQUEST_TIMEOUT;
    const ADDRESS_LIMIT: usize = ADDRESS_LIMIT;
    const USER_HINT: &'static str = "USER@REALM@";
    fn party(&self) -> Party {
        // The cluster's API is the fencing device's own view of the guest:
        // proven needs a witness outside it.
        Party::Hypervisor
    }
    fn url(&self) -> String {
        PveConfig::url(self)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Proxmox VE guest {} through {} ({}), {}{}",
            self.guest.as_ref().map_or("(none)".into(), |g| g.text()),
            self.api_url(),
            if self.token_id().is_some() {
                "API token"
            } else {
                "ticket"
            },
            crate::tls::describe(&self.tls),
            if self.skiplock { ", skiplock" } else { "" }
        )
    }
    fn lock_key(&self) -> crate::lock::DeviceKey {
        PveConfig::lock_key(self)
    }
    fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.tls == crate::tls::TlsTrust::Insecure {
            w.push(platform::insecure_warning(
                &self.api_url(),
                "the node's",
                "the cluster",
            ));
        }
        if self.skiplock {
            w.push(format!(
                "{}: skiplock: a locked guest (backup, migration, snapshot) is powered anyway",
                PveConfig::url(self)
            ));
        }
        w
    }
    fn driver(
        &self,
        user: &str,
        secret: Secret,
        timeout: Duration,
    ) -> Result<Box<dyn Driver>, DriverError> {
        Ok(Box::new(PveDriver::new(
            self.clone(),
            user,
            secret,
            timeout,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::build::{MethodBuilder, MethodOptions};
    use crate::platform::credential::CredentialRef;

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
