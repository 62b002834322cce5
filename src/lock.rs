//! The per-BMC advisory lock between fencekit processes, so two of them
//! never act on one BMC at once: the second waits (within its deadline) and
//! then sees the first one's result (e.g. the node already off).
//!
//! **One key per BMC.** [`bmc_key`] is built from the normalised host alone
//! (no protocol, no port, no user), so an IPMI session and a Redfish session
//! to the same BMC serialise, and so do `fence_ipmilan` and `fencekit off`.
//! A host name and its address are different keys (nothing is resolved to
//! build a key).
//!
//! **A mechanism that needs no filesystem.** On Linux the lock is a Unix
//! socket bound in the *abstract namespace* (`@fencekit/bmc/HOST`): binding
//! succeeds for one socket at a time, the kernel releases it when the
//! process exits however it exits, and it needs no writable directory — it
//! works on the read-only root filesystem FAR's pods run with, as any UID,
//! and is shared by every process of the network namespace (a pod's
//! containers, or a host's pacemaker and fencekit). Where abstract sockets
//! are unavailable (another OS, a seccomp filter), the lock falls back to a
//! `flock`ed file under `$XDG_RUNTIME_DIR/fencekit` or `/run/fencekit`; where
//! that fails too, the action runs unlocked and says so with a warning.
//!
//! `FENCEKIT_LOCK_SCOPE`, when set, puts the locks in a namespace of their
//! own: processes with different scopes never wait for each other. It is
//! for test suites, whose many simulated BMCs share one loopback address
//! (and for independent fencing domains on one host); leave it unset in
//! production, where every process must see every other one's locks.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use std::fs::{File, OpenOptions, TryLockError};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How often a waiting process retries (the holder's release is not signalled).
const RETRY: Duration = Duration::from_millis(25);

/// The longest abstract socket name the kernel takes (`sun_path` less the
/// leading NUL); longer keys are shortened with a hash.
const MAX_ABSTRACT: usize = 107;

/// The lock key of the BMC (or hypervisor, or host) at `host`: its
/// normalised host, whatever the protocol, port or user.
pub fn bmc_key(host: &str) -> String {
    format!("bmc/{}", normalise_host(host))
}

/// A host as one BMC: brackets and surrounding space removed, names
/// lower-cased without a trailing dot, addresses in canonical form
/// (`::ffff:10.0.0.1` is `10.0.0.1`, `2001:DB8::0:1` is `2001:db8::1`).
pub fn normalise_host(host: &str) -> String {
    let h = host.trim();
    let h = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(h);
    match h.parse::<IpAddr>() {
        Ok(ip) => ip.to_canonical().to_string(),
        Err(_) => h.trim_end_matches('.').to_ascii_lowercase(),
    }
}

/// What holds a lock.
#[derive(Debug)]
enum Held {
    /// A bound abstract-namespace socket (Linux), held for its drop.
    #[cfg(target_os = "linux")]
    Abstract {
        _socket: std::os::unix::net::UnixListener,
    },
    /// A `flock`ed file, held for its drop.
    File { _file: File },
    /// Nothing could be locked; the reason was logged.
    Nothing,
}

/// A held lock (or the documented absence of one); released on drop.
#[derive(Debug)]
pub struct TargetLock {
    held: Held,
    mechanism: String,
}

impl TargetLock {
    /// True when a lock is actually held.
    pub fn held(&self) -> bool {
        !matches!(self.held, Held::Nothing)
    }

    /// How it is held, for logs and tests: `abstract socket @fencekit/bmc/…`,
    /// `file /run/fencekit/…`, or `none (why)`.
    pub fn mechanism(&self) -> &str {
        &self.mechanism
    }
}

/// Where lock files (the fallback) and manual-fencing acknowledgments go.
pub fn lock_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("fencekit"),
        _ => PathBuf::from("/run/fencekit"),
    }
}

/// A file name for a key such as `bmc/10.0.7.1`.
pub fn file_name(key: &str) -> String {
    let mut s: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.truncate(200);
    s + ".lock"
}

/// The lock namespace (`FENCEKIT_LOCK_SCOPE`), if any.
fn scope() -> Option<String> {
    std::env::var("FENCEKIT_LOCK_SCOPE")
        .ok()
        .filter(|s| !s.is_empty())
}

/// `key` within the lock namespace.
fn scoped(key: &str) -> String {
    match scope() {
        Some(s) => format!("scope/{s}/{key}"),
        None => key.to_string(),
    }
}

/// The abstract socket name for `key`.
pub fn abstract_name(key: &str) -> String {
    let key = scoped(key);
    let name = format!("fencekit/{key}");
    if name.len() <= MAX_ABSTRACT {
        return name;
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(key.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("fencekit/sha256/{hex}")
}

/// One try at the abstract socket: `Ok(Some)` held, `Ok(None)` busy,
/// `Err` the mechanism is unavailable here.
#[cfg(target_os = "linux")]
fn try_abstract(name: &str) -> std::io::Result<Option<Held>> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let addr = SocketAddr::from_abstract_name(name.as_bytes())?;
    match UnixListener::bind_addr(&addr) {
        Ok(l) => Ok(Some(Held::Abstract { _socket: l })),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn try_abstract(_name: &str) -> std::io::Result<Option<Held>> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "abstract sockets are Linux-only",
    ))
}

/// A directory of fencekit's run-time state (locks, acknowledgments) that
/// cannot be created.
#[derive(Debug, thiserror::Error)]
#[error("cannot create {}: {source}", dir.display())]
pub struct CreateDirError {
    pub dir: PathBuf,
    pub source: std::io::Error,
}

/// Creates `dir` and its parents.
pub fn create_dir(dir: &std::path::Path) -> Result<(), CreateDirError> {
    crate::private::create_dir(dir).map_err(|source| CreateDirError {
        dir: dir.to_path_buf(),
        source,
    })
}

/// Why the fallback lock file could not be opened.
#[derive(Debug, thiserror::Error)]
enum LockFileError {
    #[error(transparent)]
    CreateDir(#[from] CreateDirError),
    #[error("cannot open {}: {source}", path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The fallback lock file, opened (not yet locked).
fn open_file(key: &str) -> Result<(File, PathBuf), LockFileError> {
    let dir = lock_dir();
    create_dir(&dir)?;
    let path = dir.join(file_name(&scoped(key)));
    match OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
    {
        Ok(f) => Ok((f, path)),
        Err(source) => Err(LockFileError::Open { path, source }),
    }
}

fn busy(key: &str, what: &str, started: Instant) -> DriverError {
    DriverError::new(
        ErrorKind::Timeout,
        Stage::Authenticate,
        format!(
            "another fencekit process is still acting on {key} after {:.1}s ({what})",
            started.elapsed().as_secs_f64()
        ),
    )
}

/// Takes the lock for `key` (see [`bmc_key`]), waiting until `deadline` if
/// another process holds it. Cancellation is the caller's: drop the future.
pub async fn acquire(key: &str, deadline: Option<Instant>) -> Result<TargetLock, DriverError> {
    let started = Instant::now();
    let name = abstract_name(key);
    let unavailable = loop {
        match try_abstract(&name) {
            Ok(Some(held)) => {
                tracing::debug!("holding the lock for {key} (abstract socket @{name})");
                return Ok(TargetLock {
                    held,
                    mechanism: format!("abstract socket @{name}"),
                });
            }
            Ok(None) => {
                if deadline.is_some_and(|d| Instant::now() + RETRY >= d) {
                    return Err(busy(key, &format!("lock @{name}"), started));
                }
                tracing::debug!("waiting for the lock for {key} (@{name})");
                tokio::time::sleep(RETRY).await;
            }
            Err(e) => break e,
        }
    };
    let (file, path) = match open_file(key) {
        Ok(x) => x,
        Err(why) => {
            let mechanism =
                format!("none (abstract socket unavailable: {unavailable}; lock file: {why})");
            tracing::warn!("running without the per-BMC lock for {key}: {mechanism}");
            return Ok(TargetLock {
                held: Held::Nothing,
                mechanism,
            });
        }
    };
    loop {
        match file.try_lock() {
            Ok(()) => {
                tracing::debug!("holding the lock for {key} (file {})", path.display());
                return Ok(TargetLock {
                    held: Held::File { _file: file },
                    mechanism: format!("file {}", path.display()),
                });
            }
            Err(TryLockError::WouldBlock) => {
                if deadline.is_some_and(|d| Instant::now() + RETRY >= d) {
                    return Err(busy(key, &format!("lock {}", path.display()), started));
                }
                tokio::time::sleep(RETRY).await;
            }
            Err(TryLockError::Error(e)) => {
                let mechanism = format!("none (cannot lock {}: {e})", path.display());
                tracing::warn!("running without the per-BMC lock for {key}: {mechanism}");
                return Ok(TargetLock {
                    held: Held::Nothing,
                    mechanism,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_per_bmc_whatever_the_spelling() {
        assert_eq!(bmc_key("10.0.0.1"), "bmc/10.0.0.1");
        assert_eq!(bmc_key("[2001:DB8::0:1]"), bmc_key("2001:db8::1"));
        assert_eq!(bmc_key("::ffff:10.0.0.1"), bmc_key("10.0.0.1"));
        assert_eq!(bmc_key("BMC7.Example.com."), bmc_key("bmc7.example.com"));
        assert_ne!(bmc_key("10.0.0.1"), bmc_key("10.0.0.2"));
    }

    #[test]
    fn long_keys_fit_the_abstract_namespace() {
        let k = bmc_key(&"a".repeat(300));
        assert!(abstract_name(&k).len() <= MAX_ABSTRACT);
        assert_ne!(abstract_name(&k), abstract_name(&bmc_key(&"b".repeat(300))));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_second_holder_waits_until_the_first_lets_go() {
        let key = format!("bmc/test-{}-{:?}", std::process::id(), Instant::now());
        let first = acquire(&key, None).await.unwrap();
        assert!(first.held(), "{}", first.mechanism());
        assert!(first.mechanism().starts_with("abstract socket"));
        let soon = Instant::now() + Duration::from_millis(150);
        let e = acquire(&key, Some(soon)).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Timeout);
        assert!(e.message.contains("another fencekit process"), "{e}");
        drop(first);
        let second = acquire(&key, Some(Instant::now() + Duration::from_secs(2)))
            .await
            .unwrap();
        assert!(second.held());
    }
}
