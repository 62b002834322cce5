//! One fencing method: which platform, which endpoint, which credential
//! reference — and the driver ([`AnyDriver`]) it builds when it is time to act.
//!
//! Credentials stay references (file, environment variable, script) until
//! the moment a driver is built, so a plan can be printed and checked
//! (`--dry-run`) without reading a secret. What differs per platform is the
//! platform's ([`crate::platform::Method`]); this type adds the one method
//! without a device, manual fencing.

use super::credential::CredentialRef;
use super::driver::AnyDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::ExpectedIdentity;
pub use crate::platform::PinError;
use crate::platform::{Method, Party};
use std::time::Instant;

/// A method ready to build a driver. Plans hold one per node and level (a
/// fleet of 100,000 nodes, 200,000 of them): a platform's method is boxed,
/// so that each is only as large as its own configuration.
#[derive(Clone, Debug)]
pub enum MethodSpec {
    /// A platform's method (IPMI, Redfish, SSH, SNMP outlets, a cloud
    /// instance, …): everything but the secrets.
    Device(Box<dyn Method>),
    /// A person fences the node by hand and acknowledges (`fencekit ack`).
    Manual {
        /// The node (acknowledgments are per node).
        node: String,
        /// What the person must do.
        instructions: String,
    },
}

impl From<Box<dyn Method>> for MethodSpec {
    fn from(m: Box<dyn Method>) -> Self {
        MethodSpec::Device(m)
    }
}

const NO_CREDENTIAL: &CredentialRef = &CredentialRef::None;
const NO_PIN: &ExpectedIdentity = &ExpectedIdentity {
    uuid: None,
    serial: None,
    names: Vec::new(),
};

impl MethodSpec {
    /// The platform's method (`None` for a manual one).
    pub fn device(&self) -> Option<&dyn Method> {
        match self {
            MethodSpec::Device(m) => Some(&**m),
            MethodSpec::Manual { .. } => None,
        }
    }

    /// The platform's method, to change (`None` for a manual one).
    pub fn device_mut(&mut self) -> Option<&mut dyn Method> {
        match self {
            MethodSpec::Device(m) => Some(&mut **m),
            MethodSpec::Manual { .. } => None,
        }
    }

    /// The driver's name (the platform's, or `manual`).
    pub fn driver_name(&self) -> &'static str {
        match self {
            MethodSpec::Device(m) => m.platform().name(),
            MethodSpec::Manual { .. } => "manual",
        }
    }

    /// The endpoint as a URL, without credentials.
    pub fn endpoint(&self) -> String {
        self.endpoint_url().to_string()
    }

    /// [`MethodSpec::endpoint`], written where it is shown (a plan of
    /// 100,000 nodes prints them all).
    pub fn endpoint_url(&self) -> EndpointUrl<'_> {
        EndpointUrl(self)
    }

    /// How the level will be reached (its protocol's settings), written
    /// where it is shown; never a secret.
    pub fn description(&self) -> Description<'_> {
        Description(self)
    }

    /// Who the level is for `verify` (`None`: manual, a person's word).
    pub fn party(&self) -> Option<Party> {
        self.device().map(Method::party)
    }

    /// Whether `--bmc-interval` spaces this method's sessions.
    pub fn paced(&self) -> bool {
        self.device().is_none_or(Method::paced)
    }

    /// The platform's own limit of sessions at once to this method's
    /// address, if it has one ([`Method::address_limit`]).
    pub fn address_limit(&self) -> Option<usize> {
        self.device().and_then(Method::address_limit)
    }

    /// Applies a run's login timeout (`--login-timeout`) to the method
    /// where its platform takes one (an SSH connection's TCP connect,
    /// handshake and authentication; the others take theirs from the
    /// engine's step deadline). The same for methods from URLs and from an
    /// inventory.
    pub fn set_login_timeout(&mut self, timeout: std::time::Duration) {
        if let Some(m) = self.device_mut() {
            m.set_login_timeout(timeout);
        }
    }

    /// Applies a node's off threshold (`--max-off-watts`, inventory
    /// `max_off_watts`): the most load its outlets may still carry once
    /// they read off (metered outlets; the others do not meter an off node).
    pub fn set_max_off_watts(&mut self, watts: f64) {
        if let Some(m) = self.device_mut() {
            m.set_max_off_watts(watts);
        }
    }

    /// Every device this method talks to, as [`crate::lock::DeviceKey`]s
    /// (one for most; one per PDU for outlets on several PDUs), sorted:
    /// one session at a time per device (or per Redfish system of a
    /// device), taken in this order by everyone (no lock-order deadlock).
    /// Methods with conflicting keys share a power domain (blades behind
    /// one controller, IPMI and Redfish on one BMC) and are serialised.
    pub fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        match self {
            MethodSpec::Device(m) => m.device_keys(),
            MethodSpec::Manual { node, .. } => vec![crate::lock::DeviceKey::named("manual", node)],
        }
    }

    /// True when the method sends credentials in clear text (Redfish over
    /// plain HTTP), which a front should say.
    pub fn cleartext(&self) -> bool {
        self.device().is_some_and(Method::cleartext)
    }

    /// The user name, for plans and audit records.
    pub fn username(&self) -> &str {
        self.device().map_or("", Method::username)
    }

    /// The credential reference.
    pub fn credential(&self) -> &CredentialRef {
        self.device().map_or(NO_CREDENTIAL, Method::credential)
    }

    /// Every credential reference the method reads, each with a label for
    /// a missing one's message (a PDU's).
    pub fn credentials(&self) -> Vec<(Option<String>, &CredentialRef)> {
        match self {
            MethodSpec::Device(m) => m.credentials(),
            MethodSpec::Manual { .. } => vec![(None, NO_CREDENTIAL)],
        }
    }

    /// Who the machine behind this method must be (empty for manual and
    /// PDU methods, which have no device that could say, and when nothing
    /// is pinned).
    pub fn expected(&self) -> &ExpectedIdentity {
        self.device().map_or(NO_PIN, Method::expected)
    }

    /// Whether the method talks to a device that a pin applies to (a node's
    /// `uuid`/`serial` skips manual and PDU methods).
    pub fn pinnable(&self) -> bool {
        self.device().is_some_and(Method::pinnable)
    }

    /// Pins the method to `identity`. `Err` for a manual or PDU method,
    /// which has no device that could report one.
    pub fn set_expected(&mut self, identity: ExpectedIdentity) -> Result<(), PinError> {
        match self {
            MethodSpec::Device(m) => m.set_expected(identity),
            MethodSpec::Manual { .. } if identity.is_empty() => Ok(()),
            MethodSpec::Manual { .. } => Err(PinError::Manual),
        }
    }

    /// Resolves the credential (a script gets until `deadline`) and builds
    /// the driver (not for manual methods, which have none).
    pub async fn build(&self, deadline: Option<Instant>) -> Result<AnyDriver, DriverError> {
        match self {
            MethodSpec::Device(m) => m.build(deadline).await.map(AnyDriver),
            MethodSpec::Manual { .. } => Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Status,
                "a manual method has no device to talk to",
            )),
        }
    }
}

/// A method's endpoint as a URL, without credentials ([`MethodSpec::endpoint_url`]).
#[derive(Clone, Copy)]
pub struct EndpointUrl<'a>(&'a MethodSpec);

impl std::fmt::Display for EndpointUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            MethodSpec::Device(m) => m.endpoint(f),
            MethodSpec::Manual { node, .. } => write!(f, "manual:{node}"),
        }
    }
}

/// How a method will be reached ([`MethodSpec::description`]).
#[derive(Clone, Copy)]
pub struct Description<'a>(&'a MethodSpec);

impl std::fmt::Display for Description<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            MethodSpec::Device(m) => m.describe(f),
            MethodSpec::Manual { instructions, .. } => write!(f, "by hand: {instructions}"),
        }
    }
}

#[cfg(test)]
mod size {
    /// A fleet keeps a method per node and level (200,000 of them for
    /// 100,000 nodes with two levels): a driver's configuration added to
    /// the enum unboxed makes every one of them as large as it.
    #[test]
    fn a_method_is_as_small_as_its_boxed_configurations_allow() {
        let size = std::mem::size_of::<super::MethodSpec>();
        assert!(
            size <= 160,
            "MethodSpec is {size} bytes: box the large variant's config"
        );
    }
}
