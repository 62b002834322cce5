//! Credential references, defined below the platforms
//! ([`crate::platform::credential`]) and re-exported here for the fronts.

pub use crate::platform::credential::*;
