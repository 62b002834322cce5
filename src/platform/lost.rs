//! A request whose answer may have been lost after the device carried it
//! out ([`Lost`]): what the HTTP platforms' clients hand back for a power
//! action, so that their drivers read the state back and never send it
//! again blindly (docs/design.md, "Fencing safety").

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::Failed;

/// Why a call has no answer to judge.
#[derive(Debug)]
pub enum Lost {
    /// Sent, and no (whole) answer came: it may have been carried out.
    Silent(DriverError),
    /// Not carried out (no connection, TLS refused, the login failed, or
    /// answered with an error).
    Error(DriverError),
}

impl Lost {
    /// The error inside, either way.
    pub fn into_error(self) -> DriverError {
        match self {
            Lost::Silent(e) | Lost::Error(e) => e,
        }
    }

    /// The error of a power action `what` at `stage`: a silent one is
    /// [`sent_unanswered`] (the state of `thing`, `VM` or `guest`, is read
    /// back), any other the error as it came.
    pub fn read_back(self, stage: Stage, what: &str, thing: &str) -> DriverError {
        match self {
            Lost::Silent(e) => sent_unanswered(stage, what, &e, thing),
            Lost::Error(e) => e,
        }
    }
}

impl From<Failed> for Lost {
    fn from(f: Failed) -> Lost {
        match f.maybe_delivered() {
            true => Lost::Silent(f.into_error()),
            false => Lost::Error(f.into_error()),
        }
    }
}

/// The outcome-unknown error of a power action `what` that was sent and
/// not answered (`e`): it is never sent again, the state of `thing` is read
/// back.
pub fn sent_unanswered(stage: Stage, what: &str, e: &DriverError, thing: &str) -> DriverError {
    DriverError::new(
        ErrorKind::OutcomeUnknown,
        stage,
        format!(
            "{what} was sent and not answered ({}): it is never sent again; the {thing}'s \
             state is read back",
            e.message
        ),
    )
}
