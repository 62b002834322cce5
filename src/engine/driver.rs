//! The interface every protocol driver implements for the engine.

use super::error::DriverError;
use super::event::Tolerance;
use super::identity::Identity;
use super::power::{Observed, PowerCommand, PowerReading, PowerState};
use std::time::Instant;

/// One device (BMC, hypervisor) as the engine drives it.
///
/// Every call gets a deadline and must return by then (the engine always
/// gives one, Pacemaker's `disable_timeout` included: that lifts only the
/// engine's wait for the power state; `None` is left to direct callers). Drivers keep their session
/// between calls and re-establish it themselves when it is lost.
#[allow(async_fn_in_trait)]
pub trait PowerDriver {
    /// Opens the session (authenticates); returns what was negotiated, for the record.
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError>;

    /// Reads the power state. A state that is neither on nor off is an error.
    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError>;

    /// Reads the power state, a transition under way included (Redfish
    /// `PoweringOn`/`PoweringOff`). The engine reads through this method.
    /// The default reads [`status`](Self::status): a device that cannot
    /// report transitions only ever reports settled states.
    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        self.status(deadline).await.map(Observed::Settled)
    }

    /// False when the device may keep reporting the *old* state while a
    /// power change is under way (some BMC families do not show
    /// transitions: `shared/reference/vendors.md`). Then a first reading
    /// that already shows an action's target cannot rule out a boot or a
    /// shutdown in progress, and the engine sends the command anyway (such
    /// devices accept it as a no-op) before confirming. Meaningful after
    /// [`connect`](Self::connect); the default trusts the reading.
    fn shows_transitions(&self) -> bool {
        true
    }

    /// Sends a power command. `Err` with `ErrorKind::NotInPresentState` means the
    /// device declined it in a way that may only mean "already there".
    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError>;

    /// Reads who the device says the machine is (system UUID, serial), in
    /// the current session. The default reports nothing, which a caller
    /// that expects an identity treats as a mismatch.
    async fn identity(&mut self, _deadline: Option<Instant>) -> Result<Identity, DriverError> {
        Ok(Identity::default())
    }

    /// Reads the machine's power draw, where the device measures it.
    /// `Ok(None)`: the device cannot tell (no evidence, not a failure).
    async fn power_reading(
        &mut self,
        _deadline: Option<Instant>,
    ) -> Result<Option<PowerReading>, DriverError> {
        Ok(None)
    }

    /// Whether a status read can observe the machine off. False for a
    /// device that only sees the machine from the machine itself (the SSH
    /// `host` profile: off and unreachable look the same), where the engine
    /// reports an `off` as sent, unverified ([`crate::engine::run::Outcome::OffSent`])
    /// instead of polling for a state it cannot see.
    fn observes_off(&self) -> bool {
        true
    }

    /// After a [`connect`](Self::connect) that failed with a timeout:
    /// whether the device answered part of that set-up. Then the path
    /// loses datagrams but the device is there, and the engine starts a
    /// new set-up within the action's deadline instead of failing at the
    /// login timeout; a device that answered nothing still fails there, so
    /// the next level gets its turn. The default (false) never retries.
    fn set_up_answered(&self) -> bool {
        false
    }

    /// What the driver knows beyond on/off about the last state it read,
    /// for a failure message (e.g. which of a node's outlets is still on).
    /// The default has nothing to add.
    fn state_detail(&self) -> Option<String> {
        None
    }

    /// What the driver tolerated since the last call (a device's
    /// non-compliance handled, a named workaround in use), for the
    /// timeline; the engine takes them after every call. The default has none.
    fn take_tolerances(&mut self) -> Vec<Tolerance> {
        Vec::new()
    }

    /// Notes the driver collected since the last call that the timeline
    /// should carry as warnings (something it could not check and went on
    /// without, e.g. the AWS self-fencing guard when the metadata service
    /// does not answer). The engine takes them after `connect` and after
    /// each command. The default has none.
    fn take_warnings(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// Ends the session; best effort, bounded by a short timeout of its own.
    async fn close(&mut self);
}

/// One form of target URL a platform accepts, as users read it in `--help`,
/// the man pages, the completions and the README (all rendered from the
/// platforms' `URL_FORMS` tables, gathered by `Platform::url_forms`). Each
/// platform's tests check its rows against its own parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UrlForm {
    /// The scheme, lower case, without `://` (`ipmi`, `redfish+http`);
    /// empty for a row that describes a family of schemes.
    pub scheme: &'static str,
    /// The form, with its optional parts in brackets (`ipmi://[USER@]HOST[:PORT]`).
    pub form: &'static str,
    /// What it names, in one line.
    pub meaning: &'static str,
    /// True when the native commands take it as a target; false when only an
    /// inventory `endpoint` may name it.
    pub target: bool,
    /// A URL of this form the parser accepts (checked by the platform's tests).
    pub example: &'static str,
}
