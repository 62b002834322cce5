//! Per-target advisory locks, so two fencekit processes on one host never
//! act on the same BMC at once: the second waits (within its deadline) and
//! then sees the first one's result (e.g. the node already off).
//!
//! Locks live under `$XDG_RUNTIME_DIR/fencekit` or `/run/fencekit`. Where
//! neither can be written (FAR's read-only root filesystem), locking is
//! skipped with a debug message: never an error.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A held lock (or the absence of one where locking is impossible); released on drop.
#[derive(Debug)]
pub struct TargetLock {
    _file: Option<File>,
}

impl TargetLock {
    /// True when a lock file is actually held.
    pub fn held(&self) -> bool {
        self._file.is_some()
    }
}

/// Where lock files go.
pub fn lock_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("fencekit"),
        _ => PathBuf::from("/run/fencekit"),
    }
}

/// A file name for a key such as `ipmi://10.0.7.1:623`.
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

/// Takes the lock for `key`, waiting until `deadline` if another process holds it.
pub async fn acquire(key: &str, deadline: Option<Instant>) -> Result<TargetLock, DriverError> {
    let dir = lock_dir();
    let none = |why: String| {
        tracing::debug!("not locking {key}: {why}");
        Ok(TargetLock { _file: None })
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return none(format!("cannot create {}: {e}", dir.display()));
    }
    let path = dir.join(file_name(key));
    let file = match OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) => return none(format!("cannot open {}: {e}", path.display())),
    };
    let started = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(TargetLock { _file: Some(file) }),
            Err(TryLockError::WouldBlock) => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Err(DriverError::new(
                        ErrorKind::Timeout,
                        Stage::Authenticate,
                        format!(
                            "another fencekit process is still acting on {key} after {:.1}s (lock {})",
                            started.elapsed().as_secs_f64(),
                            path.display()
                        ),
                    ));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(TryLockError::Error(e)) => {
                return none(format!("cannot lock {}: {e}", path.display()))
            }
        }
    }
}
