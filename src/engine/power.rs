//! Power states, commands and actions.

use serde::Serialize;
use std::fmt;

/// An observed power state. There is deliberately no "unknown": a state
/// that cannot be read is an error, never a guess.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PowerState {
    /// The node has power.
    On,
    /// The node is powered off.
    Off,
}

impl PowerState {
    /// `"on"` or `"off"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PowerState::On => "on",
            PowerState::Off => "off",
        }
    }
}

impl fmt::Display for PowerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A power change a device reports as under way (Redfish `PoweringOn` /
/// `PoweringOff`). A transition is a state to wait through, never an
/// answer: it never counts as the state it leads to (SPEC §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transition {
    /// The node is being powered on (booting).
    PoweringOn,
    /// The node is being powered off (shutting down).
    PoweringOff,
}

impl Transition {
    /// `"powering-on"` or `"powering-off"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transition::PoweringOn => "powering-on",
            Transition::PoweringOff => "powering-off",
        }
    }

    /// The transition in words (`"powering on"`).
    pub fn words(self) -> &'static str {
        match self {
            Transition::PoweringOn => "powering on",
            Transition::PoweringOff => "powering off",
        }
    }
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.words())
    }
}

/// One reading of a device's power: settled, or a transition under way.
///
/// [`PowerState`] keeps meaning a settled on/off; a driver that can see a
/// transition reports it here instead of as an error, so the engine can wait
/// through it (and `status` can say so) rather than give up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum Observed {
    /// On or off.
    Settled(PowerState),
    /// A power change is under way.
    InTransition(Transition),
}

impl Observed {
    /// The settled state, if the reading is one.
    pub fn settled(self) -> Option<PowerState> {
        match self {
            Observed::Settled(s) => Some(s),
            Observed::InTransition(_) => None,
        }
    }
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observed::Settled(s) => s.fmt(f),
            Observed::InTransition(t) => t.fmt(f),
        }
    }
}

/// The most watts a node reported off may draw (`--max-off-watts`,
/// inventory `max_off_watts`): a server on standby power (BMC, fans at
/// rest) draws roughly 5–30 W, a running one rarely less than 80 W. 50 W
/// sits between the two. `verify` and a PDU's outlets that read off use it.
pub const DEFAULT_MAX_OFF_WATTS: f64 = 50.0;

/// A measured power draw: independent evidence of whether a machine is
/// really off (a node reported off that draws load is not off).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PowerReading {
    /// Watts drawn now (or averaged over the device's sampling period).
    pub watts: f64,
    /// Where the figure comes from (e.g. "dcmi", "/redfish/v1/Chassis/1/Power").
    pub source: String,
}

/// A power command sent to a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PowerCommand {
    /// Hard power off (IPMI "power down").
    Off,
    /// Power on (IPMI "power up").
    On,
    /// Off then on inside the device (IPMI "power cycle").
    Cycle,
    /// Hard reset without a power transition.
    Reset,
    /// Diagnostic interrupt (NMI).
    Diag,
}

impl PowerCommand {
    /// The command's name as shown to people.
    pub fn as_str(self) -> &'static str {
        match self {
            PowerCommand::Off => "off",
            PowerCommand::On => "on",
            PowerCommand::Cycle => "cycle",
            PowerCommand::Reset => "reset",
            PowerCommand::Diag => "diag",
        }
    }
}

impl fmt::Display for PowerCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a caller asks of one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Read the power state.
    Status,
    /// Power on and confirm.
    On,
    /// Hard power off and confirm.
    Off,
    /// Off (confirmed) then on, or one power cycle (`RebootMethod::Cycle`).
    Reboot,
    /// Check that the device answers and authenticates.
    Monitor,
    /// Send a diagnostic interrupt.
    Diag,
}

impl Action {
    /// The action's name as written on command lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Status => "status",
            Action::On => "on",
            Action::Off => "off",
            Action::Reboot => "reboot",
            Action::Monitor => "monitor",
            Action::Diag => "diag",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How `reboot` is carried out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RebootMethod {
    /// Off, confirmed; then on, confirmed. The default: every step is observed.
    #[default]
    OnOff,
    /// One power-cycle command; nothing is observed in between, so it is unverified.
    Cycle,
}
