//! What both fronts need before they talk to a device: a single-threaded
//! tokio runtime that never waits long for its blocking work when it is
//! dropped, the stderr logger of the native command line, and the SIGINT /
//! SIGTERM watch that turns a signal into the engine's cancellation.
//!
//! The fronts build the runtime only for commands that talk to devices, so
//! `--version`, help and metadata never start one.

use crate::engine::run::CancelHandle;
use std::time::Duration;

/// How long dropping a [`Runtime`] waits for its blocking-pool work (a DNS
/// lookup in `getaddrinfo`) before it leaves it behind:
/// the process is exiting, and a stuck resolver must not keep it alive past
/// the deadline it already reported.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_millis(100);

/// A current-thread tokio runtime that shuts down with [`SHUTDOWN_TIMEOUT`]
/// when dropped (a plain tokio runtime waits for its blocking tasks forever).
pub struct Runtime {
    inner: Option<tokio::runtime::Runtime>,
}

impl Runtime {
    /// Builds the runtime (I/O and timers enabled).
    pub fn new() -> std::io::Result<Self> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map(|rt| Runtime { inner: Some(rt) })
    }

    /// Runs `future` to completion on this thread.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        match &self.inner {
            Some(rt) => rt.block_on(future),
            None => unreachable!("the runtime is only taken in drop"),
        }
    }

    /// The tokio handle (to spawn from synchronous code).
    pub fn handle(&self) -> &tokio::runtime::Handle {
        match &self.inner {
            Some(rt) => rt.handle(),
            None => unreachable!("the runtime is only taken in drop"),
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(rt) = self.inner.take() {
            rt.shutdown_timeout(SHUTDOWN_TIMEOUT);
        }
    }
}

/// This process's limits on open files (`RLIMIT_NOFILE`); `u64::MAX` for
/// no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFiles {
    /// The limit in force (soft).
    pub soft: u64,
    /// The most the soft limit may be raised to without privileges (hard).
    pub hard: u64,
}

/// The limits on open files in force.
pub fn open_files() -> OpenFiles {
    use rustix::process::{getrlimit, Resource};
    let l = getrlimit(Resource::Nofile);
    OpenFiles {
        soft: l.current.unwrap_or(u64::MAX),
        hard: l.maximum.unwrap_or(u64::MAX),
    }
}

/// Raises the soft limit on open files to `wanted` where it is lower: up to
/// the hard limit, and past it where the process may raise that too (root,
/// `CAP_SYS_RESOURCE`). Never lowers a limit. Returns the limits in force
/// afterwards: the caller compares them with what it needs and says so.
///
/// Only called by what needs many descriptors at once (a lab of thousands
/// of BMCs, a fan-out with a large `--parallel`); a child process (a hook, a
/// password script) started after it inherits the raised soft limit.
pub fn raise_open_files(wanted: u64) -> OpenFiles {
    use rustix::process::{setrlimit, Resource, Rlimit};
    let now = open_files();
    if now.soft >= wanted {
        return now;
    }
    let set = |soft: u64, hard: u64| {
        setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(soft),
                maximum: (hard != u64::MAX).then_some(hard),
            },
        )
    };
    if wanted > now.hard {
        // Needs the privilege to raise the hard limit; without it, the hard
        // limit is the most there is.
        if set(wanted, wanted).is_ok() {
            return open_files();
        }
    }
    let _ = set(wanted.min(now.hard), now.hard);
    open_files()
}

/// The runtime, or `None` after printing why, prefixed with `who`.
pub fn runtime(who: &str) -> Option<Runtime> {
    match Runtime::new() {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("{who}: cannot start the async runtime: {e}");
            None
        }
    }
}

/// Installs the native command line's stderr logger at the requested
/// verbosity (`-v` info, `-vv` debug, `-vvv` trace). The agent front logs
/// through its own upstream-shaped logger instead.
pub fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::new(format!("fencekit={level}"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(
            std::env::var_os("NO_COLOR").is_none()
                && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        )
        .with_target(false)
        .try_init();
}

/// SIGINT and SIGTERM handlers, installed: from then on those signals are
/// caught, never the default termination. Install before announcing
/// readiness, so a caller that signals right after "ready" is heard.
pub struct Terminations(Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>);

impl Terminations {
    /// Installs the handlers (must run inside the runtime).
    pub fn install() -> Self {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(int), Ok(term)) => Terminations(Some((int, term))),
            _ => Terminations(None),
        }
    }

    /// Waits for SIGINT or SIGTERM. Never returns when the handlers could
    /// not be installed (then the default disposition, termination, applies).
    pub async fn wait(mut self) {
        match &mut self.0 {
            Some((int, term)) => {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            }
            None => std::future::pending::<()>().await,
        }
    }
}

/// Waits for SIGINT or SIGTERM (handlers installed now).
pub async fn terminated() {
    Terminations::install().wait().await
}

/// Cancels the running actions on SIGINT or SIGTERM.
pub async fn watch_signals(handle: CancelHandle) {
    terminated().await;
    handle.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_files_limit_is_raised_as_asked_and_never_lowered() {
        let before = open_files();
        assert!(before.soft <= before.hard);
        assert_eq!(raise_open_files(1), before, "nothing lowered");
        assert_eq!(raise_open_files(before.soft), before, "nothing to do");
        if before.soft < before.hard {
            let wanted = before.soft + 1;
            let after = raise_open_files(wanted);
            assert_eq!(after.soft, wanted, "raised to what was asked, no more");
            assert_eq!(after.hard, before.hard);
        }
    }
}
