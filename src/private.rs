//! Files an operator keeps — audit records, holds, manual-fencing
//! acknowledgments, the agents' `--debug-file` — and the directories of
//! fencekit's run-time state are created readable by their owner only:
//! files 0600 and directories 0700, whatever the umask. They hold no secret,
//! but they are the record of who fenced what and why.
//!
//! Only what fencekit creates gets that mode: a file or directory that
//! already exists keeps its own (an operator who made the audit file 0640 for
//! a group keeps it so).

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode of a file fencekit creates.
pub const FILE_MODE: u32 = 0o600;
/// The mode of a directory fencekit creates.
pub const DIR_MODE: u32 = 0o700;

/// A new file at `path`, `FILE_MODE` exactly: created with that mode (so it
/// is never more open, even for a moment), then set to it (the umask may
/// have taken bits away).
fn create_new(path: &Path, append: bool) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .write(true)
        .append(append)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)?;
    f.set_permissions(Permissions::from_mode(FILE_MODE))?;
    Ok(f)
}

/// `path` opened for appending: created `FILE_MODE` when it does not exist,
/// opened as it is (its mode untouched) when it does.
pub fn open_append(path: &Path) -> std::io::Result<File> {
    // Two tries: a file removed between the two opens is created on the second.
    let mut last = None;
    for _ in 0..2 {
        match create_new(path, true) {
            Ok(f) => return Ok(f),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                match OpenOptions::new().append(true).open(path) {
                    Ok(f) => return Ok(f),
                    Err(e) if e.kind() == ErrorKind::NotFound => last = Some(e),
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| ErrorKind::NotFound.into()))
}

/// Writes `bytes` to a new file at `path` (a temporary file about to be
/// renamed into place), `FILE_MODE`; a stale file of that name is replaced.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = match create_new(path, false) {
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            std::fs::remove_file(path)?;
            create_new(path, false)?
        }
        r => r?,
    };
    f.write_all(bytes)
}

/// Creates `dir` and its missing parents, each `DIR_MODE` (less what the
/// umask takes; never more). Existing directories keep their mode.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().mode() & 0o7777
    }

    #[test]
    fn new_files_are_private_and_existing_ones_keep_their_mode() {
        let d = tempfile::tempdir().unwrap();
        let fresh = d.path().join("audit.jsonl");
        open_append(&fresh).unwrap().write_all(b"one\n").unwrap();
        assert_eq!(mode(&fresh), 0o600);
        open_append(&fresh).unwrap().write_all(b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "one\ntwo\n");

        let shared = d.path().join("shared.jsonl");
        std::fs::write(&shared, "x\n").unwrap();
        std::fs::set_permissions(&shared, Permissions::from_mode(0o640)).unwrap();
        open_append(&shared).unwrap().write_all(b"y\n").unwrap();
        assert_eq!(mode(&shared), 0o640, "an existing file keeps its mode");

        let tmp = d.path().join(".tmp");
        std::fs::write(&tmp, "stale, wide open").unwrap();
        std::fs::set_permissions(&tmp, Permissions::from_mode(0o666)).unwrap();
        write_new(&tmp, b"fresh").unwrap();
        assert_eq!(mode(&tmp), 0o600, "a stale temporary file is replaced");
        assert_eq!(std::fs::read_to_string(&tmp).unwrap(), "fresh");

        let dir = d.path().join("a/b");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&dir) & 0o077, 0, "no group or other bits");
        assert_eq!(mode(&d.path().join("a")) & 0o077, 0);
    }
}
