//! Where a password comes from ([`CredentialRef`]: none, inline, a file, an
//! environment variable, a script) and reading it when a driver is built —
//! never earlier, so a plan can be printed and checked without a secret.

use crate::engine::error::ErrorKind;
use crate::secret::Secret;
use std::io::Read;
use std::path::PathBuf;
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
    pub fn check(&self) -> Result<(), Unresolvable> {
        match self {
            CredentialRef::File(p) => {
                std::fs::File::open(p)
                    .map(|_| ())
                    .map_err(|source| Unresolvable::File {
                        path: p.clone(),
                        source,
                    })
            }
            CredentialRef::Env(v) => std::env::var_os(v)
                .map(|_| ())
                .ok_or_else(|| Unresolvable::EnvNotSet(v.clone())),
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
                if out.code != 0 {
                    return Err(CredentialError::ScriptFailed(out.code));
                }
                Ok(out.stdout)
            }
        }
    }
}

/// Why [`CredentialRef::check`] finds a reference that cannot be resolved.
#[derive(Debug, thiserror::Error)]
pub enum Unresolvable {
    /// The password file cannot be opened.
    #[error("password file {}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The environment variable is not set.
    #[error("environment variable {0} is not set")]
    EnvNotSet(String),
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
    /// The script exited unsuccessfully (its exit code; -1: a signal).
    #[error("the password script failed (exit status {0})")]
    ScriptFailed(i32),
    /// The script printed more than a password.
    #[error("the password script printed more than {0} bytes")]
    TooLong(usize),
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

/// Largest script output kept (a password is short; a longer output is an error).
const MAX_SCRIPT_OUTPUT: usize = 4096;

/// What a password script produced.
#[derive(Debug)]
pub struct ScriptOutput {
    /// Its standard output, trailing whitespace removed: the password.
    pub stdout: Secret,
    /// Its exit code.
    pub code: i32,
    /// How much it wrote to stderr (never shown: it may echo a secret).
    pub stderr_len: usize,
}

/// Runs a password script through the one script runner
/// ([`crate::script::run_script`]: stdin closed, no `FENCEKIT_*` variable,
/// its process group killed at the deadline or when the caller stops
/// waiting), with `LANG=C`, until `deadline` and at most [`SCRIPT_TIMEOUT`].
/// Whether a failing exit code is an error is the caller's call (agents use
/// the output anyway, as upstream does).
pub async fn run_script(
    cmd: &str,
    deadline: Option<Instant>,
) -> Result<ScriptOutput, CredentialError> {
    let now = Instant::now();
    let limit = deadline
        .map_or(SCRIPT_TIMEOUT, |d| d.saturating_duration_since(now))
        .min(SCRIPT_TIMEOUT);
    let env = [
        ("LANG".to_string(), "C".to_string()),
        ("LC_ALL".to_string(), "C".to_string()),
    ];
    let run = crate::script::run_script(&crate::script::Script {
        command: cmd,
        env: &env,
        remove: &[],
        limit,
        capture: MAX_SCRIPT_OUTPUT,
    })
    .await;
    let code = match run.end {
        crate::script::End::Exited(c) => c,
        crate::script::End::Signalled => -1,
        crate::script::End::TimedOut => return Err(CredentialError::Timeout(run.elapsed)),
        crate::script::End::NotStarted(e) => {
            return Err(CredentialError::Spawn(std::io::Error::other(e)))
        }
    };
    if run.stdout.truncated {
        return Err(CredentialError::TooLong(MAX_SCRIPT_OUTPUT));
    }
    let mut stdout = run.stdout.text.into_bytes();
    while stdout.last().is_some_and(|b| b.is_ascii_whitespace()) {
        stdout.pop();
    }
    Ok(ScriptOutput {
        stdout: Secret::new(stdout),
        code,
        stderr_len: run.stderr.text.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_what_cannot_be_resolved_without_reading_a_secret() {
        let missing = PathBuf::from("/nonexistent/fencekit-password");
        match CredentialRef::File(missing.clone()).check() {
            Err(Unresolvable::File { path, .. }) => assert_eq!(path, missing),
            other => panic!("{other:?}"),
        }
        let var = "FENCEKIT_TEST_SURELY_UNSET_4711";
        match CredentialRef::Env(var.into()).check() {
            Err(e @ Unresolvable::EnvNotSet(_)) => {
                assert_eq!(
                    e.to_string(),
                    format!("environment variable {var} is not set")
                )
            }
            other => panic!("{other:?}"),
        }
        // A script is not run by a check.
        assert!(CredentialRef::Script("exit 1".into()).check().is_ok());
    }

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
        assert_eq!(out.code, 0);
        assert_eq!(out.stdout.expose(), b"pw-unset");
        assert_eq!(out.stderr_len, 6);
        let failed = CredentialRef::Script("echo x; exit 3".into())
            .resolve(None)
            .await
            .unwrap_err();
        assert!(failed.to_string().contains("failed"), "{failed}");
    }
}
