//! The platform seam: what a platform (a protocol folder: IPMI, Redfish,
//! SSH, SNMP, EC2, …) implements so that generic code — the engine's
//! callers, the fleet, verify, check, the fronts — never names it.
//!
//! A platform is one folder and one registration line
//! (`method::platforms::PLATFORMS`). It declares itself with a static
//! [`Platform`] (its name, the URL schemes it owns), hands back each
//! configured method as a [`Method`] (endpoint, lock keys, verify party,
//! identity pin, building the driver), and its driver implements
//! [`PlatformDriver`] besides [`PowerDriver`]. A platform that serves a
//! ClusterLabs agent family declares it ([`Platform::agent_family`], with
//! the agent definitions and option values of [`agent`]). Nothing here is
//! built at start-up: the registry is a static slice of references.
//!
//! This module sits between the process services and the protocols
//! (docs/design.md, "Layers"), so a protocol folder may implement it.

pub mod agent;
pub mod api;
pub mod args;
pub mod build;
pub mod credential;
pub mod facts;
pub mod lost;
pub mod target;

use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::event::Tolerance;
use crate::engine::identity::{ExpectedIdentity, Identity};
use crate::engine::power::{Observed, PowerCommand, PowerReading, PowerState};
use credential::CredentialRef;
use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

/// A boxed future polled on the caller's task (every node task runs on a
/// `LocalSet`, so none needs to be `Send`).
pub type Local<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A platform's static description: one `static` per platform, in its
/// folder, listed once in `method::platforms::PLATFORMS`.
pub trait Platform: Sync {
    /// Its name: the inventory's `driver = "NAME"`, a plan's and a
    /// result's `method`, the metrics' `driver` label.
    fn name(&self) -> &'static str;
    /// Whether a target URL's scheme (lower-cased, without `://`) is this
    /// platform's.
    fn owns_scheme(&self, scheme: &str) -> bool;
    /// Its target URL forms, as `--help`, the man pages, the completions and
    /// the README list them (the rows live next to the platform's parser,
    /// whose tests check them).
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm];
    /// How a plain method of this platform is built (one endpoint and
    /// [`build::MethodOptions`]); `None`: its fronts build its methods
    /// themselves (a PDU's outlets and tables).
    fn builder(&self) -> Option<&'static dyn build::MethodBuilder> {
        None
    }
    /// Checks an inventory method's fields before anything is built: what
    /// it needs that is missing, settings that contradict. The text is what
    /// the user reads after `fence method N: `.
    fn check_fields(&self, _f: &dyn build::Fields) -> Result<(), String> {
        Ok(())
    }
    /// The keys of [`build::MethodOptions::settings`] this platform takes
    /// (an inventory's `settings` table is checked against them: any
    /// other key is refused, naming these).
    fn setting_keys(&self) -> &'static [&'static str] {
        &[]
    }
    /// Options that only this platform takes, given to a method of
    /// another (`driver`, its name, or `manual`): the error that says so.
    fn foreign_options(
        &self,
        _driver: &str,
        _o: &build::MethodOptions,
    ) -> Result<(), build::BuildError> {
        Ok(())
    }
    /// The identity a method of this platform must report: `expected`
    /// (UUID, serial) and the names its own options pin.
    fn expected_names(
        &self,
        expected: ExpectedIdentity,
        _o: &build::MethodOptions,
    ) -> Result<ExpectedIdentity, build::BuildError> {
        Ok(expected)
    }
    /// How it serves the agent family `def` (a definition whose `driver`
    /// names this platform; a platform with several families tells them by
    /// `def.name`); `None`: it serves no agent.
    fn agent_family(&self, _def: &agent::defs::Family) -> Option<&'static agent::AgentFamily> {
        None
    }
    /// Whether its methods are outlets on shared devices: an inventory
    /// method's `outlets` are expanded per node and name `[pdu.NAME]`
    /// tables, and no outlet can report which machine it feeds (a node's
    /// pin skips it).
    fn outlets(&self) -> bool {
        false
    }
    /// Builds an inventory method of this platform from its fields, where
    /// that takes more than an endpoint and [`build::MethodOptions`] (a
    /// PDU's outlets and tables); `None`: through its
    /// [`Platform::builder`].
    fn build_fields(
        &self,
        _f: &dyn build::Fields,
    ) -> Option<Result<Box<dyn Method>, build::BuildError>> {
        None
    }
    /// What `check --record` keeps of a working level for drift, and the
    /// checks beyond the generic ones ([`facts::FactRules`]); `None`:
    /// nothing but the identity.
    fn facts(&self) -> Option<&'static dyn facts::FactRules> {
        None
    }
    /// A built driver of this platform as a session on the node itself
    /// that runs commands (a node's own SSH, for rejoin checks); `None`:
    /// its methods cannot.
    fn node_session<'a>(&self, _driver: &'a mut dyn Driver) -> Option<&'a mut dyn NodeSession> {
        None
    }
}

/// A platform of plain methods declared by its parts (a hypervisor's API
/// behind one scheme: one builder, one agent family, its facts); each
/// part is its folder's own.
pub struct Plain {
    /// [`Platform::name`], also its one scheme.
    pub name: &'static str,
    /// [`Platform::url_forms`].
    pub url_forms: &'static [crate::engine::driver::UrlForm],
    /// [`Platform::builder`].
    pub builder: &'static dyn build::MethodBuilder,
    /// [`Platform::check_fields`].
    pub check_fields: fn(&dyn build::Fields) -> Result<(), String>,
    /// [`Platform::setting_keys`].
    pub setting_keys: &'static [&'static str],
    /// The agent family it serves ([`Platform::agent_family`]).
    pub family: &'static agent::AgentFamily,
    /// [`Platform::facts`].
    pub facts: Option<&'static dyn facts::FactRules>,
}

impl Platform for Plain {
    fn name(&self) -> &'static str {
        self.name
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == self.name
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        self.url_forms
    }
    fn builder(&self) -> Option<&'static dyn build::MethodBuilder> {
        Some(self.builder)
    }
    fn check_fields(&self, f: &dyn build::Fields) -> Result<(), String> {
        (self.check_fields)(f)
    }
    fn setting_keys(&self) -> &'static [&'static str] {
        self.setting_keys
    }
    fn agent_family(&self, _def: &agent::defs::Family) -> Option<&'static agent::AgentFamily> {
        Some(self.family)
    }
    fn facts(&self) -> Option<&'static dyn facts::FactRules> {
        self.facts
    }
}

/// What a command run on the node itself printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandOutput {
    /// Its exit status, when the node reported one.
    pub status: Option<i32>,
    /// Its standard output.
    pub stdout: String,
}

/// A session on the node itself that runs commands (rejoin checks).
pub trait NodeSession {
    /// Runs `command` (by the remote user's shell) until `deadline`.
    fn exec<'a>(
        &'a mut self,
        command: &'a str,
        deadline: Option<Instant>,
    ) -> Local<'a, Result<CommandOutput, DriverError>>;
}

/// Why an identity cannot be pinned on a method: it has no device that
/// could report one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// A manual method.
    #[error("a manual method has no device that could report an identity")]
    Manual,
    /// A PDU outlet.
    #[error("a PDU outlet cannot report which machine it feeds (no identity to check)")]
    Pdu,
}

/// Who a fencing level is for `verify`: the verdict rules are per party,
/// never per platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Party {
    /// The machine's own controller (a BMC, a custom command).
    Controller,
    /// A hypervisor that sees the guest from outside it.
    Hypervisor,
    /// A cloud control plane that sees the instance from outside it.
    Cloud,
    /// A switched outlet: cuts the power from outside, independent of the BMC.
    Outlet,
    /// A network switch's ports: cut the node off a network from outside
    /// (fabric fencing); the node keeps running, so only its own silence
    /// backs the switch's word.
    Fabric,
    /// The node itself (its SSH port is probed, never read as a channel).
    Host {
        /// The node's address.
        host: String,
        /// The port probed.
        port: u16,
    },
}

/// What a method's off does to the node: results and verify say which.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// The node's power is cut (a BMC, an outlet, a hypervisor, a cloud).
    #[default]
    Power,
    /// The node is cut off a network and keeps running (a switch port
    /// down: fabric fencing). "isolated (port down)", never "powered off".
    Isolated,
}

impl Effect {
    /// `"power"` or `"isolated"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Power => "power",
            Effect::Isolated => "isolated",
        }
    }
}

/// One configured fencing method of a platform: everything but its
/// secrets, which stay [`CredentialRef`]s until [`Method::build`]. A plan
/// holds one per node and level, boxed (`method::spec::MethodSpec::Device`).
pub trait Method: fmt::Debug + Send + Sync {
    /// Its platform.
    fn platform(&self) -> &'static dyn Platform;
    /// A copy, boxed.
    fn clone_box(&self) -> Box<dyn Method>;
    /// The endpoint as a URL, without credentials.
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// How the level will be reached (its protocol's settings), for plans
    /// and `-v`; never a secret.
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// Every device it talks to (its power domains), sorted, deduplicated.
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey>;
    /// Who it is for `verify`.
    fn party(&self) -> Party;
    /// What its off does to the node (power, unless it isolates).
    fn effect(&self) -> Effect {
        Effect::Power
    }
    /// Whether `--bmc-interval` spaces its sessions (a PDU serves a rack's
    /// outlets one request at a time already: false).
    fn paced(&self) -> bool {
        true
    }
    /// The most sessions at once a run opens to this method's address
    /// (its device keys' `address`: a cloud's subscription, project or
    /// account), when the API's rate limits want fewer than
    /// `--max-per-address`; the smaller of the two applies.
    fn address_limit(&self) -> Option<usize> {
        None
    }
    /// The user name, for plans and audit records.
    fn username(&self) -> &str {
        ""
    }
    /// The credential reference a plan shows (the first one used).
    fn credential(&self) -> &CredentialRef;
    /// Every credential reference the method reads, with a label for a
    /// missing one's message (`Some("PDU a")`), in order (`None`: the one
    /// [`Method::credential`] shows).
    fn credentials(&self) -> Vec<(Option<String>, &CredentialRef)> {
        vec![(None, self.credential())]
    }
    /// Who the machine behind it must be (empty: not checked, or no device
    /// that could say).
    fn expected(&self) -> &ExpectedIdentity;
    /// Whether a node's pin (`uuid`, `serial`) applies to it.
    fn pinnable(&self) -> bool {
        true
    }
    /// Pins it to `identity` (an error where there is no device to report one).
    fn set_expected(&mut self, identity: ExpectedIdentity) -> Result<(), PinError>;
    /// A run's login timeout (`--login-timeout`), where the platform takes
    /// one from the method rather than the engine's step deadline.
    fn set_login_timeout(&mut self, _timeout: Duration) {}
    /// A node's off threshold in watts (metered outlets).
    fn set_max_off_watts(&mut self, _watts: f64) {}
    /// The host and port the method connects to, where that is the node
    /// itself (a node's own SSH: verify probes it).
    fn address(&self) -> Option<(String, u16)> {
        None
    }
    /// Warnings a front says once per text (an old PDU's legacy security).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// True when credentials travel in clear text, which a front says.
    fn cleartext(&self) -> bool {
        false
    }
    /// Resolves the credentials (a script gets until `deadline`) and builds
    /// the driver.
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>>;
    /// For the platform's own code: its concrete type.
    fn as_any(&self) -> &dyn Any;
}

impl Clone for Box<dyn Method> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Pins `expect` to `identity`, keeping the method's own names (an EC2
/// `node_name`) when the node's pin has none: the rule every platform with
/// a device follows.
pub fn pin(expect: &mut ExpectedIdentity, identity: ExpectedIdentity) {
    let names = std::mem::take(&mut expect.names);
    *expect = identity;
    if expect.names.is_empty() {
        expect.names = names;
    }
}

/// The pin accessors of a [`Method`] that keeps its pin in a field
/// `expect: ExpectedIdentity` and pins it by [`pin`] (every platform with a
/// device to report an identity): `expected` and `set_expected`.
macro_rules! pinned_in_expect {
    () => {
        fn expected(&self) -> &$crate::engine::identity::ExpectedIdentity {
            &self.expect
        }
        fn set_expected(
            &mut self,
            identity: $crate::engine::identity::ExpectedIdentity,
        ) -> Result<(), $crate::platform::PinError> {
            $crate::platform::pin(&mut self.expect, identity);
            Ok(())
        }
    };
}
pub(crate) use pinned_in_expect;

/// Writes `host:port`, an IPv6 address in brackets so that its port can
/// be told apart (endpoints as plans print them).
pub fn write_host_port(f: &mut fmt::Formatter<'_>, host: &str, port: u16) -> fmt::Result {
    match host.contains(':') {
        true => write!(f, "[{host}]:{port}"),
        false => write!(f, "{host}:{port}"),
    }
}

/// The [`DriverError`] of a method that cannot be configured as given.
pub fn config_error(message: String) -> DriverError {
    DriverError::new(ErrorKind::Config, Stage::Authenticate, message)
}

/// The [`DriverError`] of a credential that could not be read.
pub fn credential_error(e: credential::CredentialError) -> DriverError {
    DriverError::new(e.kind(), Stage::Authenticate, e.to_string())
}

/// The user a method logs in as and its secret (resolved until
/// `deadline`); no user is a configuration error naming `url` and how to
/// give one (`hint`: `USER@` in the target).
pub async fn user_and_secret(
    user: Option<&str>,
    url: &str,
    hint: &str,
    credential: &CredentialRef,
    deadline: Option<Instant>,
) -> Result<(String, crate::secret::Secret), DriverError> {
    let user = user.ok_or_else(|| {
        config_error(format!(
            "{url}: no user (give {hint} in the target or --username)"
        ))
    })?;
    let secret = credential
        .resolve(deadline)
        .await
        .map_err(credential_error)?;
    Ok((user.to_string(), secret))
}

/// The warning of a method whose server certificate is not checked
/// (`--ssl-insecure`): `whose` certificate, at `url`, and `whom` anyone on
/// the path can impersonate.
pub fn insecure_warning(url: &str, whose: &str, whom: &str) -> String {
    format!(
        "{url}: {whose} certificate is not verified (--ssl-insecure): anyone on the path can \
         impersonate {whom} and read the password"
    )
}

/// One row of `fencekit list`: a system, domain, outlet or instance behind
/// a device.
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    /// The device it was read from when that is not the method's endpoint
    /// (an outlet's PDU).
    pub target: Option<String>,
    /// Its name (and alias).
    pub name: String,
    /// Where it lives on the device (a Redfish system's path).
    pub uri: Option<String>,
    /// Its power state, when read.
    pub state: Option<PowerState>,
    /// Why its state could not be read.
    pub error: Option<String>,
}

/// One plug behind a device, as the agents' `list` / `list-status` print it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlugEntry {
    /// What `--plug` (or, for Redfish, `--systems-uri`) takes.
    pub id: String,
    /// Upstream's alias column (often empty).
    pub alias: String,
    /// Its power state, when it could be read.
    pub state: Option<PowerState>,
}

/// What a platform's driver adds to [`PowerDriver`]; every default fits a
/// driver that has nothing behind it to list.
#[allow(async_fn_in_trait)]
pub trait PlatformDriver: PowerDriver + 'static {
    /// Datagrams or requests sent, received, retransmitted (or throttled).
    fn traffic(&self) -> (u32, u32, u32) {
        (0, 0, 0)
    }
    /// Every plug with its state (the agents' `list`).
    async fn plugs(&mut self, _deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        Err(DriverError::new(
            ErrorKind::Unsupported,
            Stage::Status,
            "this device has no plugs to list",
        ))
    }
    /// What `fencekit list` shows behind the device (an error text when it
    /// has nothing to list).
    async fn list(&mut self, _deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        Err("this device has nothing behind it to list".into())
    }
    /// Context for `verify` once the state was read: what a control plane
    /// says about the last change (never a verdict of its own).
    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        Vec::new()
    }
}

/// A built driver behind a box: [`PowerDriver`] and [`PlatformDriver`]
/// with boxed futures (object-safe). Every [`PlatformDriver`] is one.
pub trait Driver {
    /// [`PowerDriver::connect`].
    fn connect(&mut self, deadline: Option<Instant>) -> Local<'_, Result<String, DriverError>>;
    /// [`PowerDriver::status`].
    fn status(&mut self, deadline: Option<Instant>) -> Local<'_, Result<PowerState, DriverError>>;
    /// [`PowerDriver::observe`].
    fn observe(&mut self, deadline: Option<Instant>) -> Local<'_, Result<Observed, DriverError>>;
    /// [`PowerDriver::shows_transitions`].
    fn shows_transitions(&self) -> bool;
    /// [`PowerDriver::command`].
    fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Local<'_, Result<(), DriverError>>;
    /// [`PowerDriver::identity`].
    fn identity(&mut self, deadline: Option<Instant>) -> Local<'_, Result<Identity, DriverError>>;
    /// [`PowerDriver::power_reading`].
    fn power_reading(
        &mut self,
        deadline: Option<Instant>,
    ) -> Local<'_, Result<Option<PowerReading>, DriverError>>;
    /// [`PowerDriver::observes_off`].
    fn observes_off(&self) -> bool;
    /// [`PowerDriver::set_up_answered`].
    fn set_up_answered(&self) -> bool;
    /// [`PowerDriver::state_detail`].
    fn state_detail(&self) -> Option<String>;
    /// [`PowerDriver::take_tolerances`].
    fn take_tolerances(&mut self) -> Vec<Tolerance>;
    /// [`PowerDriver::take_warnings`].
    fn take_warnings(&mut self) -> Vec<String>;
    /// [`PowerDriver::close`].
    fn close(&mut self) -> Local<'_, ()>;
    /// [`PlatformDriver::traffic`].
    fn traffic(&self) -> (u32, u32, u32);
    /// [`PlatformDriver::plugs`].
    fn plugs(
        &mut self,
        deadline: Option<Instant>,
    ) -> Local<'_, Result<Vec<PlugEntry>, DriverError>>;
    /// [`PlatformDriver::list`].
    fn list(&mut self, deadline: Option<Instant>) -> Local<'_, Result<Vec<Listed>, String>>;
    /// [`PlatformDriver::context`].
    fn context(&mut self, expect_on: bool, deadline: Option<Instant>) -> Local<'_, Vec<String>>;
    /// For the platform's own code: its concrete type.
    fn as_any(&self) -> &dyn Any;
    /// For the platform's own code: its concrete type, to change.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// For the platform's own code: its concrete type, to keep.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: PlatformDriver> Driver for T {
    fn connect(&mut self, deadline: Option<Instant>) -> Local<'_, Result<String, DriverError>> {
        Box::pin(PowerDriver::connect(self, deadline))
    }
    fn status(&mut self, deadline: Option<Instant>) -> Local<'_, Result<PowerState, DriverError>> {
        Box::pin(PowerDriver::status(self, deadline))
    }
    fn observe(&mut self, deadline: Option<Instant>) -> Local<'_, Result<Observed, DriverError>> {
        Box::pin(PowerDriver::observe(self, deadline))
    }
    fn shows_transitions(&self) -> bool {
        PowerDriver::shows_transitions(self)
    }
    fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Local<'_, Result<(), DriverError>> {
        Box::pin(PowerDriver::command(self, command, deadline))
    }
    fn identity(&mut self, deadline: Option<Instant>) -> Local<'_, Result<Identity, DriverError>> {
        Box::pin(PowerDriver::identity(self, deadline))
    }
    fn power_reading(
        &mut self,
        deadline: Option<Instant>,
    ) -> Local<'_, Result<Option<PowerReading>, DriverError>> {
        Box::pin(PowerDriver::power_reading(self, deadline))
    }
    fn observes_off(&self) -> bool {
        PowerDriver::observes_off(self)
    }
    fn set_up_answered(&self) -> bool {
        PowerDriver::set_up_answered(self)
    }
    fn state_detail(&self) -> Option<String> {
        PowerDriver::state_detail(self)
    }
    fn take_tolerances(&mut self) -> Vec<Tolerance> {
        PowerDriver::take_tolerances(self)
    }
    fn take_warnings(&mut self) -> Vec<String> {
        PowerDriver::take_warnings(self)
    }
    fn close(&mut self) -> Local<'_, ()> {
        Box::pin(PowerDriver::close(self))
    }
    fn traffic(&self) -> (u32, u32, u32) {
        PlatformDriver::traffic(self)
    }
    fn plugs(
        &mut self,
        deadline: Option<Instant>,
    ) -> Local<'_, Result<Vec<PlugEntry>, DriverError>> {
        Box::pin(PlatformDriver::plugs(self, deadline))
    }
    fn list(&mut self, deadline: Option<Instant>) -> Local<'_, Result<Vec<Listed>, String>> {
        Box::pin(PlatformDriver::list(self, deadline))
    }
    fn context(&mut self, expect_on: bool, deadline: Option<Instant>) -> Local<'_, Vec<String>> {
        Box::pin(PlatformDriver::context(self, expect_on, deadline))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A method's endpoint and its description, as plans print them (for the
/// platforms' tests).
#[cfg(test)]
pub(crate) fn shown(m: &dyn Method) -> (String, String) {
    struct Shown<'a>(&'a dyn Method, bool);
    impl fmt::Display for Shown<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self.1 {
                true => self.0.endpoint(f),
                false => self.0.describe(f),
            }
        }
    }
    (Shown(m, true).to_string(), Shown(m, false).to_string())
}
