//! Reading passwords from the sources that need more than a lookup: a
//! file and a script. (Which source applies is [`crate::fleet::method::CredentialRef`].)

use crate::secret::Secret;
use std::io::Read;
use std::process::{Command, Stdio};

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
