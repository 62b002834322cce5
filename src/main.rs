//! `fencekit`: argv[0] decides the front — a ClusterLabs agent name runs the
//! agent front, anything else the native command line. Nothing else here.
//!
//! The entry point is the C library's `main`, not Rust's (`#![no_main]`).
//! Rust's own start (`lang_start`) asks the C library for the main thread's
//! stack bounds before `main` runs, so that it can install a guard for stack
//! overflows; glibc answers that by reading and parsing `/proc/self/maps`
//! (plus `sched_getaffinity` and `getrlimit`), then it maps an alternate
//! signal stack and installs SIGSEGV and SIGBUS handlers. That was about a
//! tenth of a millisecond of every agent call, a third of what
//! `fence_ipmilan --version` costs beyond `/bin/true` (issue 34, bench/README.md
//! "Start-up"). What fencekit gives up: a stack overflow on the main thread
//! ends the process by SIGSEGV instead of a message and SIGABRT; either way
//! the call fails and the caller sees a signal.
//!
//! What it keeps, done here as Rust's start does it:
//! - SIGPIPE is ignored, so a reader that went away (`fencekit list | head`,
//!   a peer that closed its socket) is an `EPIPE` error, not a silent death.
//!   Child processes still start with SIGPIPE at its default (std's
//!   `Command` resets it).
//! - A standard descriptor (0, 1, 2) that the caller left closed is opened
//!   on `/dev/null` before anything else opens a file, so that no socket or
//!   lock file can take its number and receive what was meant for stdout.
//!
//! Arguments come from `std::env::args_os`, which glibc builds fill from the
//! C library's start whichever `main` runs; output is flushed by
//! `std::process::exit`, the only way this function ends.

// Under `cargo test --bins` the test harness brings its own `main`.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
use std::ffi::{c_char, c_int};

#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    process_start();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let name = args
        .first()
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("fencekit")
        .to_string();
    let code = if fencekit::agent_known(&name) {
        args.remove(0);
        fencekit::agent_entry(&name, args)
    } else {
        fencekit::cli::run::main(args)
    };
    std::process::exit(code);
}

/// Rust's start-up duties that fencekit keeps (see the module comment):
/// SIGPIPE ignored, and closed standard descriptors opened on `/dev/null`.
/// One `rt_sigaction` and one `poll` when all three are open.
#[cfg(not(test))]
fn process_start() {
    // SAFETY: SIG_IGN for SIGPIPE installs no handler code, and no other
    // thread exists yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: `fds` is a valid array of three pollfd for the whole call.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) };
    for p in fds {
        let closed = if polled < 0 {
            // poll refused (a sandbox without it): ask each descriptor.
            // SAFETY: F_GETFD only reads the descriptor's flags.
            let flags = unsafe { libc::fcntl(p.fd, libc::F_GETFD) };
            flags == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
        } else {
            p.revents & libc::POLLNVAL != 0
        };
        if closed {
            // open() returns the lowest free number: this one, since the
            // lower ones are open by now.
            // SAFETY: a constant NUL-terminated path.
            let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
            if fd != p.fd {
                // What Rust's start does too: without /dev/null, running on
                // with a standard descriptor free is not safe.
                std::process::abort();
            }
        }
    }
}

/// The C library's `pow`, defined in the executable so that the dynamic
/// loader never has to load libm.
///
/// tokio's multi-thread scheduler (its `rt-multi-thread` feature is switched
/// on by the SSH crate) calls `pow` for a moving average; fencekit only ever
/// builds current-thread runtimes, but the reference stays in the binary, and
/// with glibc `pow` lives in libm — a library loaded, relocated and searched
/// at every start for that one symbol: about 60 µs of a 1 ms agent call
/// (bench/README.md, "Start-up"). This definition is musl's `pow` (the
/// `libm` crate), correct to within an ulp, so anything that calls it gets
/// the right answer — including a library loaded later (the executable
/// exports the symbol, so it would take precedence over libm's).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
