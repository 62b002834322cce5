//! Where a password comes from ([`CredentialRef`]: none, inline, a file, an
//! environment variable, a script) and reading it when a driver is built —
//! never earlier, so a plan can be printed and checked without a secret.

use crate::secret::Secret;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

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

    /// Reads the secret.
    pub fn resolve(&self) -> Result<Secret, String> {
        match self {
            CredentialRef::None => Ok(Secret::default()),
            CredentialRef::Inline(s) => Ok(s.clone()),
            CredentialRef::File(p) => read_file(p),
            CredentialRef::Env(v) => std::env::var_os(v)
                .map(|x| Secret::new(x.into_encoded_bytes()))
                .ok_or_else(|| {
                    format!("the environment variable {v} (from --password-env) is not set")
                }),
            CredentialRef::Script(cmd) => run_script(cmd),
        }
    }
}

/// Largest password file read (a password is at most 20 bytes; this only bounds the read).
const MAX_FILE: u64 = 4096;

/// Reads a password file: its bytes without the trailing line break.
pub fn read_file(path: &std::path::Path) -> Result<Secret, String> {
    let f = std::fs::File::open(path)
        .map_err(|e| format!("cannot read the password file {}: {e}", path.display()))?;
    let mut buf = Vec::new();
    f.take(MAX_FILE)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read the password file {}: {e}", path.display()))?;
    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buf.pop();
    }
    Ok(Secret::new(buf))
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
