//! Where a password comes from: a file, an environment variable, a script,
//! `FENCEKIT_PASSWORD`, or (visibly) the command line.

use crate::secret::Secret;
use std::io::Read;
use std::process::{Command, Stdio};

/// The sources a person can name, in the order they are consulted.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// `--password` (visible to other local users through /proc).
    pub argv: Option<Secret>,
    /// `--password-file PATH`.
    pub file: Option<std::path::PathBuf>,
    /// `--password-env VAR`.
    pub env: Option<String>,
    /// `--password-script CMD`.
    pub script: Option<String>,
}

/// Largest password file read (a password is at most 20 bytes; this only bounds the read).
const MAX_FILE: u64 = 4096;

/// Resolves the password; `None` when no source is given (an empty password).
/// `FENCEKIT_PASSWORD` is consulted last.
pub fn resolve(s: &Sources) -> Result<Option<Secret>, String> {
    if let Some(p) = resolve_only(s)? {
        return Ok(Some(p));
    }
    Ok(std::env::var_os("FENCEKIT_PASSWORD").map(|v| Secret::new(v.into_encoded_bytes())))
}

/// Like [`resolve`], without the `FENCEKIT_PASSWORD` fallback.
pub fn resolve_only(s: &Sources) -> Result<Option<Secret>, String> {
    if let Some(p) = &s.argv {
        return Ok(Some(p.clone()));
    }
    if let Some(path) = &s.file {
        let f = std::fs::File::open(path)
            .map_err(|e| format!("cannot read the password file {}: {e}", path.display()))?;
        let mut buf = Vec::new();
        f.take(MAX_FILE)
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read the password file {}: {e}", path.display()))?;
        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            buf.pop();
        }
        return Ok(Some(Secret::new(buf)));
    }
    if let Some(var) = &s.env {
        return match std::env::var_os(var) {
            Some(v) => Ok(Some(Secret::new(v.into_encoded_bytes()))),
            None => Err(format!(
                "the environment variable {var} (from --password-env) is not set"
            )),
        };
    }
    if let Some(cmd) = &s.script {
        return run_script(cmd).map(Some);
    }
    Ok(None)
}

/// Runs a password script through `sh -c`; its stdout, right-stripped, is the
/// password. The child's stdout is captured, its stderr passes through, and
/// it is waited for, so no child outlives this call.
pub fn run_script(cmd: &str) -> Result<Secret, String> {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run the password script: {e}"))?;
    if !out.status.success() {
        return Err(format!("the password script failed ({})", out.status));
    }
    let mut v = out.stdout;
    while v.last().is_some_and(|b| b.is_ascii_whitespace()) {
        v.pop();
    }
    Ok(Secret::new(v))
}
