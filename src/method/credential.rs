//! Where a password comes from ([`CredentialRef`]: none, inline, a file, an
//! environment variable, a script) and reading it when a driver is built —
//! never earlier, so a plan can be printed and checked without a secret.

use crate::engine::error::ErrorKind;
use crate::secret::Secret;
use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Where a password comes from.
#[derive(Clone, Debug, Default)]
pub enum CredentialRef {
    /// No password (the BMC's null password).
    #[default]
    None,
    /// Given directly (command line or environment already read).
    Inline(Secret),
    /// The first line of a file.
    File(PathBuf),
    /// An environment variable.
    Env(String),
    /// The output of `sh -c CMD`.
    Script(String),
}

impl CredentialRef {
    /// Describes the reference without revealing a secret.
    pub fn describe(&self) -> String {
        match self {
            CredentialRef::None => "none".into(),
            CredentialRef::Inline(_) => "given on the command line or in FENCEKIT_PASSWORD".into(),
            CredentialRef::File(p) => format!("file {}", p.display()),
            CredentialRef::Env(v) => format!("environment variable {v}"),
            CredentialRef::Script(_) => "password script".into(),
        }
    }

    /// Checks that the reference can be resolved, without reading a secret
    /// (scripts are not run).
    pub fn check(&self) -> Result<(), String> {
        match self {
            CredentialRef::File(p) => std::fs::File::open(p)
                .map(|_| ())
                .map_err(|e| format!("password file {}: {e}", p.display())),
            CredentialRef::Env(v) => std::env::var_os(v)
                .map(|_| ())
                .ok_or_else(|| format!("environment variable {v} is not set")),
            _ => Ok(()),
        }
    }

    /// Reads the secret; a script gets until `deadline` (and at most
    /// [`SCRIPT_TIMEOUT`]).
    pub async fn resolve(&self, deadline: Option<Instant>) -> Result<Secret, CredentialError> {
        match self {
            CredentialRef::None => Ok(Secret::default()),
            CredentialRef::Inline(s) => Ok(s.clone()),
            CredentialRef::File(p) => read_file(p),
            CredentialRef::Env(v) => std::env::var_os(v)
                .map(|x| Secret::new(x.into_encoded_bytes()))
                .ok_or_else(|| CredentialError::EnvNotSet(v.clone())),
            CredentialRef::Script(cmd) => {
                let out = run_script(cmd, deadline).await?;
                if !out.status.success() {
                    return Err(CredentialError::ScriptFailed(out.status));
                }
                Ok(out.stdout)
            }
        }
    }
}

/// Why a password could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// The password file cannot be read.
    #[error("cannot read the password file {}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The environment variable is not set.
    #[error("the environment variable {0} (from --password-env) is not set")]
    EnvNotSet(String),
    /// The script cannot be started.
    #[error("cannot run the password script: {0}")]
    Spawn(std::io::Error),
    /// The script did not finish in time (it was killed, with its children).
    #[error("the password script did not finish within {:.1}s (it was stopped)", .0.as_secs_f64())]
    Timeout(Duration),
    /// The script exited unsuccessfully.
    #[error("the password script failed ({0})")]
    ScriptFailed(std::process::ExitStatus),
}

impl CredentialError {
    /// The engine's class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CredentialError::Timeout(_) => ErrorKind::Timeout,
            _ => ErrorKind::Config,
        }
    }
}

/// Largest password file read (a password is at most 20 bytes; this only bounds the read).
const MAX_FILE: u64 = 4096;

/// Reads a password file: its bytes without the trailing line break.
pub fn read_file(path: &std::path::Path) -> Result<Secret, CredentialError> {
    let err = |source| CredentialError::File {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(err)?;
    let mut buf = Vec::new();
    f.take(MAX_FILE).read_to_end(&mut buf).map_err(err)?;
    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buf.pop();
    }
    Ok(Secret::new(buf))
}

/// The longest a password script may run, whatever the caller's deadline.
pub const SCRIPT_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest script output read (a password is short; this bounds memory).
const MAX_SCRIPT_OUTPUT: u64 = 64 * 1024;

/// Environment variables a password script never inherits: fencekit's own
/// password source (a script that fetches the password needs no password).
pub const SCRIPT_ENV_REMOVED: &[&str] = &["FENCEKIT_PASSWORD"];

/// What a password script produced.
#[derive(Debug)]
pub struct ScriptOutput {
    /// Its standard output, trailing whitespace removed: the password.
    pub stdout: Secret,
    /// How it exited.
    pub status: std::process::ExitStatus,
    /// How much it wrote to stderr (never shown: it may echo a secret).
    pub stderr_len: usize,
}

/// Runs a password script through `sh -c` — the one runner of both fronts:
/// stdin closed, stdout and stderr captured (bounded), `LANG=C`, without the
/// [`SCRIPT_ENV_REMOVED`] variables, in a process group of its own that is
/// killed whole (`SIGKILL`) at `deadline` (at most [`SCRIPT_TIMEOUT`] from
/// now) or when the caller stops waiting (a signal). Whether a failing exit
/// status is an error is the caller's call (agents use the output anyway,
/// as upstream does).
pub async fn run_script(
    cmd: &str,
    deadline: Option<Instant>,
) -> Result<ScriptOutput, CredentialError> {
    use tokio::io::AsyncReadExt;
    let started = Instant::now();
    let limit = started + SCRIPT_TIMEOUT;
    let until = deadline.map_or(limit, |d| d.min(limit));
    let mut c = tokio::process::Command::new("/bin/sh");
    c.arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .process_group(0)
        .kill_on_drop(true);
    for v in SCRIPT_ENV_REMOVED {
        c.env_remove(v);
    }
    let mut child = c.spawn().map_err(CredentialError::Spawn)?;
    // Kills the script's whole process group however this function ends.
    let _group = GroupKiller(child.id());
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(CredentialError::Spawn(std::io::Error::other(
            "the script's pipes are missing",
        )));
    };
    let work = async {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let (mut out, mut err) = (out.take(MAX_SCRIPT_OUTPUT), err.take(MAX_SCRIPT_OUTPUT));
        let (_, _, status) = tokio::join!(
            out.read_to_end(&mut stdout),
            err.read_to_end(&mut stderr),
            child.wait()
        );
        status.map(|s| (s, stdout, stderr.len()))
    };
    match tokio::time::timeout_at(until.into(), work).await {
        Ok(Ok((status, mut stdout, stderr_len))) => {
            while stdout.last().is_some_and(|b| b.is_ascii_whitespace()) {
                stdout.pop();
            }
            Ok(ScriptOutput {
                stdout: Secret::new(stdout),
                status,
                stderr_len,
            })
        }
        Ok(Err(e)) => Err(CredentialError::Spawn(e)),
        Err(_) => Err(CredentialError::Timeout(started.elapsed())),
    }
}

/// Sends SIGKILL to a process group when dropped: the script and whatever
/// it started (`kill_on_drop` alone would leave grandchildren running).
struct GroupKiller(Option<u32>);

impl Drop for GroupKiller {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) with a negative pid signals only that process
            // group, the script's own (process_group(0) above); a group that
            // is already gone gives ESRCH, which is ignored.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_script_that_never_exits_is_stopped_at_the_deadline() {
        let t = Instant::now();
        // The grandchild holds the pipes open: only killing the group ends it.
        let e = run_script(
            "sleep 600 & sleep 600; echo pw",
            Some(t + Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
        assert!(matches!(e, CredentialError::Timeout(_)), "{e}");
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    }

    #[tokio::test]
    async fn scripts_see_no_stdin_and_no_fencekit_password() {
        std::env::set_var("FENCEKIT_PASSWORD", "leak");
        let out = run_script(
            "read x && echo got-stdin; echo \"pw-${FENCEKIT_PASSWORD:-unset}\" ; echo noise >&2",
            None,
        )
        .await
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout.expose(), b"pw-unset");
        assert_eq!(out.stderr_len, 6);
        let failed = CredentialRef::Script("echo x; exit 3".into())
            .resolve(None)
            .await
            .unwrap_err();
        assert!(failed.to_string().contains("failed"), "{failed}");
    }
}
