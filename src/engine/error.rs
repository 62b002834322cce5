//! The closed set of ways an action can fail, as the engine sees them.
//!
//! Protocol modules classify their own errors into an [`ErrorKind`] (the way
//! ipmipower reduces everything to a short list of messages); the fronts
//! decide how each kind is shown and which exit code it gets.

use serde::Serialize;
use std::fmt;

/// Why a step failed, independent of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// Nothing (valid) answered before the deadline.
    Timeout,
    /// The device could not be reached at all (refused, no route, bad address).
    Unreachable,
    /// The BMC does not know the user name.
    UsernameInvalid,
    /// The BMC rejected the password (or K_g key).
    PasswordInvalid,
    /// The session could not obtain the privilege needed.
    PrivilegeNotObtained,
    /// No cipher suite or auth type both sides accept.
    CipherUnsupported,
    /// The device said it is busy or out of resources; retrying may help.
    Busy,
    /// The command is not possible in the present state (IPMI D5h, Redfish 409).
    NotInPresentState,
    /// The device answered with an error.
    DeviceError,
    /// The device answered something that does not parse or does not fit.
    Protocol,
    /// The state read back is not a usable on/off answer.
    StatusUnreadable,
    /// A power transition was not observed in time.
    TransitionTimeout,
    /// The local configuration cannot work (password too long, bad key).
    Config,
    /// The device lacks what the action needs (e.g. no safe reset type).
    Unsupported,
    /// Stopped by a signal.
    Interrupted,
    /// The device reports a different machine than the one expected
    /// (`--expect-uuid`, inventory `uuid`): the configuration names the
    /// wrong device. Nothing was powered; another level must not be tried.
    IdentityMismatch,
    /// An identity is expected but the device cannot report it (no GUID,
    /// no UUID, no serial): nothing was powered.
    IdentityUnavailable,
    /// Refused before contacting anything: the node is held (`fencekit hold`).
    Held,
    /// The power action was confirmed, but the confirmed-off hook failed.
    HookFailed,
    /// fencekit itself failed (a node task panicked): the result keeps the
    /// panic's message, and counts as a failure.
    Internal,
    /// A power command was sent and its answer never came, and nothing the
    /// driver could read shows whether it was carried out
    /// ([`crate::engine::once`]). Not a failure to retry: the command is
    /// never sent again.
    OutcomeUnknown,
    /// Refused before any power command: the target is the machine this
    /// process runs on (the AWS driver's self-fencing guard), and
    /// self-fencing was not allowed.
    SelfFence,
}

impl ErrorKind {
    /// Retrying the same step within the deadline may succeed.
    pub fn is_transient(self) -> bool {
        matches!(self, ErrorKind::Busy | ErrorKind::Timeout)
    }

    /// A short stable name (used in JSON output).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::UsernameInvalid => "username-invalid",
            ErrorKind::PasswordInvalid => "password-invalid",
            ErrorKind::PrivilegeNotObtained => "privilege-not-obtained",
            ErrorKind::CipherUnsupported => "cipher-unsupported",
            ErrorKind::Busy => "busy",
            ErrorKind::NotInPresentState => "not-in-present-state",
            ErrorKind::DeviceError => "device-error",
            ErrorKind::Protocol => "protocol",
            ErrorKind::StatusUnreadable => "status-unreadable",
            ErrorKind::TransitionTimeout => "transition-timeout",
            ErrorKind::Config => "config",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::IdentityMismatch => "identity-mismatch",
            ErrorKind::IdentityUnavailable => "identity-unavailable",
            ErrorKind::Held => "held",
            ErrorKind::HookFailed => "hook-failed",
            ErrorKind::Internal => "internal",
            ErrorKind::OutcomeUnknown => "outcome-unknown",
            ErrorKind::SelfFence => "self-fence",
        }
    }
}

/// The stage an error happened in, named in every message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Choosing a cipher suite / authentication type.
    Negotiate,
    /// Session set-up and authentication.
    Authenticate,
    /// Obtaining the session privilege.
    Privilege,
    /// Reading who the machine is and comparing it with the expected
    /// identity, before any power command.
    Identity,
    /// Reading the power state.
    Status,
    /// Sending a power command.
    Command,
    /// Waiting for a transition to be observed.
    Wait,
    /// Closing the session.
    Close,
}

impl Stage {
    /// The stage as words that read after "during".
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Negotiate => "cipher negotiation",
            Stage::Authenticate => "session set-up",
            Stage::Privilege => "privilege set-up",
            Stage::Identity => "identity check",
            Stage::Status => "status read",
            Stage::Command => "power command",
            Stage::Wait => "wait for the power transition",
            Stage::Close => "session close",
        }
    }
}

/// A classified failure of one step: a lowercase message that names the
/// cause, and the stage it happened in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverError {
    /// The class of failure.
    pub kind: ErrorKind,
    /// Where it happened.
    pub stage: Stage,
    /// What happened, lowercase, no secret.
    pub message: String,
    /// The device's port answered with ICMP port unreachable (a UDP
    /// socket's receive refused, `ECONNREFUSED`: nothing listens there, or
    /// a firewall rejects) and nothing else answered. Set by the protocol
    /// that saw it (the UDP transport's `Received::Refused`); read by fronts that
    /// name it first (the agent's "Connection refused"), never by the text.
    pub port_unreachable: bool,
}

impl DriverError {
    /// Builds an error.
    pub fn new(kind: ErrorKind, stage: Stage, message: impl Into<String>) -> Self {
        DriverError {
            kind,
            stage,
            message: message.into(),
            port_unreachable: false,
        }
    }

    /// Marks the error as the port's refusal ([`Self::port_unreachable`]).
    pub fn with_port_unreachable(mut self, refused: bool) -> Self {
        self.port_unreachable = refused;
        self
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (during {})", self.message, self.stage.as_str())
    }
}

impl std::error::Error for DriverError {}
