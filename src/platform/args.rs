//! What a platform declares for the native command line besides its flag
//! group (`src/NAME/args.rs`: `Args`, flattened once through
//! `method::platforms::PlatformArgs`): whether `--driver NAME` selects it,
//! and the target such a command line names.

use super::build::MethodOptions;

/// A platform that `--driver NAME` selects (with `--ip HOST`, or its own
/// options), declared in its `args.rs` and listed in
/// `method::platforms::DRIVERS`.
pub struct CliDriver {
    /// The `--driver` value: the platform's name.
    pub name: &'static str,
    /// What `--help` says of it (one line, no final period).
    pub help: &'static str,
    /// The target URL that `--driver NAME`, `--ip HOST` (`host`: an IPv6
    /// address already in brackets) and the options name; `None`: none
    /// (no `--ip` given, and the platform needs one). The text of `Err` is
    /// what the user reads after `fencekit: `.
    pub target: fn(host: Option<&str>, o: &MethodOptions) -> Result<Option<String>, String>,
}
