//! Fencing methods, below both fronts: what one method is
//! ([`spec::MethodSpec`]: driver, endpoint, credential reference), where its
//! password comes from ([`credential`]), and the driver it builds
//! ([`driver::AnyDriver`]), and the one builder both the command line and
//! the inventory use ([`build`]). The fleet runs them; the agent front
//! builds one.

pub mod build;
pub mod credential;
pub mod driver;
pub mod platforms;
pub mod spec;
