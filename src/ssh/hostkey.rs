//! Host key trust: OpenSSH-style fingerprints, known_hosts lookups (plain,
//! hashed and `[host]:port` entries, `@revoked` markers), pinned
//! fingerprints, and accept-new appends.
//!
//! The check runs right after the key exchange and before any credential
//! is sent, so an impostor never sees a password or a key signature.
//! Everything is decided here, the way OpenSSH does it, with no help from
//! the SSH library (which only hands over the key blob once the server has
//! proved it holds the key): port 22 is looked up as `host`, any other port
//! only as `[host]:port`; names match plainly (with OpenSSH's `*`, `?` and
//! `!` patterns) or hashed (`|1|salt|HMAC-SHA1`).

use crate::engine::error::{DriverError, ErrorKind, Stage};
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How the server's host key is trusted. Every variant but [`AcceptAny`]
/// refuses a key that differs from a recorded one.
///
/// [`AcceptAny`]: HostKeyPolicy::AcceptAny
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostKeyPolicy {
    /// The key must be listed in this known_hosts file (`None`:
    /// `~/.ssh/known_hosts`, then `/etc/ssh/ssh_known_hosts`). Hashed
    /// entries and `[host]:port` entries are understood; `@revoked` keys
    /// are refused.
    KnownHosts(Option<PathBuf>),
    /// The key's SHA-256 fingerprint must be this (`SHA256:` + base64, as
    /// `ssh-keygen -lf` prints it; the prefix and `=` padding are optional).
    Pinned(String),
    /// As `KnownHosts`, but a host with no recorded key is trusted and its
    /// key appended to the file (OpenSSH's `StrictHostKeyChecking
    /// accept-new`). A changed key is still refused. On a read-only file
    /// system the key is trusted for this run only.
    AcceptNew(Option<PathBuf>),
    /// No check at all. Only for fence-agent compatibility when explicitly
    /// asked for (upstream's ssh answers "yes" to unknown keys); warned about.
    AcceptAny,
}

/// Host-key options that do not make a policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostKeyOptionError {
    /// A pinned key and accept-new together.
    #[error("give only one of --ssh-host-key and --ssh-accept-new")]
    PinAndAcceptNew,
    /// A pin that is not a fingerprint.
    #[error(transparent)]
    Fingerprint(#[from] BadFingerprint),
}

/// A pinned host key that is not a SHA-256 fingerprint (as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a SHA-256 host key fingerprint (expected SHA256: and 43 base64 characters, as `ssh-keygen -lf KEY` prints)"
)]
pub struct BadFingerprint(pub String);

/// Host-key policy from the command-line options or inventory fields:
/// a pinned fingerprint, accept-new, or known_hosts (the default).
pub fn host_key_policy(
    known_hosts: Option<&Path>,
    pinned: Option<&str>,
    accept_new: bool,
) -> Result<HostKeyPolicy, HostKeyOptionError> {
    match (pinned, accept_new) {
        (Some(_), true) => Err(HostKeyOptionError::PinAndAcceptNew),
        (Some(fp), false) => Ok(HostKeyPolicy::Pinned(parse_fingerprint(fp)?)),
        (None, true) => Ok(HostKeyPolicy::AcceptNew(known_hosts.map(Path::to_path_buf))),
        (None, false) => Ok(HostKeyPolicy::KnownHosts(
            known_hosts.map(Path::to_path_buf),
        )),
    }
}

/// OpenSSH's system-wide known_hosts file.
pub const GLOBAL_KNOWN_HOSTS: &str = "/etc/ssh/ssh_known_hosts";

/// `SHA256:` + unpadded base64 of the SHA-256 of the key blob, exactly as
/// `ssh-keygen -lf` and OpenSSH's host key prompt print it.
pub fn fingerprint_sha256(blob: &[u8]) -> String {
    format!("SHA256:{}", STANDARD_NO_PAD.encode(Sha256::digest(blob)))
}

/// The algorithm name at the start of an SSH public key blob
/// (`ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`, …).
pub fn key_type(blob: &[u8]) -> Option<String> {
    let len = u32::from_be_bytes(blob.get(0..4)?.try_into().ok()?) as usize;
    let name = blob.get(4..4usize.checked_add(len)?)?;
    let name = std::str::from_utf8(name).ok()?;
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_graphic())).then(|| name.to_string())
}

/// `ssh-ed25519 SHA256:…` for messages.
pub fn describe_key(blob: &[u8]) -> String {
    format!(
        "{} {}",
        key_type(blob).unwrap_or_else(|| "unknown-type".into()),
        fingerprint_sha256(blob)
    )
}

/// Checks and normalises a pinned fingerprint with the one fingerprint
/// parser ([`crate::fingerprint::parse_sha256`]: `SHA256:` prefix optional,
/// `=` padding optional, 32 bytes). Returns `SHA256:<base64>` as OpenSSH
/// prints it, which is what host keys are compared with.
pub fn parse_fingerprint(s: &str) -> Result<String, BadFingerprint> {
    match crate::fingerprint::parse_sha256(s) {
        Ok(fp) => Ok(crate::fingerprint::format_openssh(&fp)),
        Err(_) => Err(BadFingerprint(s.to_string())),
    }
}

/// The name a known_hosts file records for `host:port` (OpenSSH: plain
/// host for port 22, `[host]:port` otherwise; names are lower case).
pub fn known_hosts_name(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if port == 22 {
        host
    } else {
        format!("[{host}]:{port}")
    }
}

/// The line accept-new appends: `NAME TYPE BASE64`.
pub fn known_hosts_line(host: &str, port: u16, blob: &[u8]) -> String {
    format!(
        "{} {} {}\n",
        known_hosts_name(host, port),
        key_type(blob).unwrap_or_else(|| "ssh-unknown".into()),
        STANDARD.encode(blob)
    )
}

/// The user's known_hosts file (`$HOME/.ssh/known_hosts`), if HOME is set.
pub fn user_known_hosts() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(&h).join(".ssh/known_hosts"))
}

/// What the known_hosts files say about a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// An entry for the host holds this key (file, 1-based line).
    Match(PathBuf, usize),
    /// Entries for the host exist, none with this key (first one, and the
    /// key type it records).
    Changed(PathBuf, usize, Option<String>),
    /// The key is marked `@revoked`.
    Revoked(PathBuf, usize),
    /// No entry for the host.
    Unknown,
}

/// How the key came to be trusted (for the record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Listed in a known_hosts file.
    Known(PathBuf, usize),
    /// Matches the pinned fingerprint.
    Pinned,
    /// Unknown before; appended to this file (accept-new).
    Added(PathBuf),
    /// Unknown before; trusted for this run only, since the file could not
    /// be written (read-only file system under FAR).
    AcceptedUnsaved(String),
    /// Not checked (accept-any).
    Unchecked,
}

impl Trust {
    /// A short phrase for the session detail.
    pub fn describe(&self) -> String {
        match self {
            Trust::Known(p, l) => format!("known in {}:{l}", p.display()),
            Trust::Pinned => "pinned".into(),
            Trust::Added(p) => format!("new, added to {}", p.display()),
            Trust::AcceptedUnsaved(_) => "new, accepted for this run only".into(),
            Trust::Unchecked => "NOT VERIFIED (accept-any)".into(),
        }
    }
}

fn untrusted(message: String) -> DriverError {
    // Proposed: a dedicated ErrorKind (HostKeyUntrusted); Protocol until then.
    DriverError::new(ErrorKind::Protocol, Stage::Authenticate, message)
}

/// Looks the key up in `files` (missing files count as empty). A revoked
/// key anywhere wins; then any matching entry; then any entry for the
/// host with another key.
pub fn lookup(files: &[PathBuf], name: &str, blob: &[u8]) -> Result<Lookup, DriverError> {
    let b64 = STANDARD.encode(blob);
    let mut found: Option<Lookup> = None;
    let mut changed: Option<Lookup> = None;
    for file in files {
        let text = match fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                tracing::debug!(file = %file.display(), error = %e, "known_hosts unreadable");
                continue;
            }
        };
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if let Some(rest) = t.strip_prefix("@revoked") {
                // @revoked PATTERNS TYPE BASE64: refuse that key for any host.
                if rest.split_whitespace().nth(2) == Some(b64.as_str()) {
                    return Ok(Lookup::Revoked(file.clone(), n));
                }
                continue;
            }
            if t.starts_with('@') {
                // @cert-authority: host certificates are not supported.
                continue;
            }
            // NAMES TYPE BASE64 [COMMENT]; a line that does not parse (a
            // key type or encoding this code does not know) skips only
            // itself.
            let mut fields = t.split_whitespace();
            let (Some(names), Some(kind), Some(key)) =
                (fields.next(), fields.next(), fields.next())
            else {
                tracing::debug!(file = %file.display(), line = n, "known_hosts line skipped");
                continue;
            };
            let recorded = match STANDARD.decode(key) {
                Ok(b) if key_type(&b).as_deref() == Some(kind) => b,
                _ => {
                    tracing::debug!(file = %file.display(), line = n, "known_hosts line skipped");
                    continue;
                }
            };
            if !names_match(names, name) {
                continue;
            }
            if recorded == blob {
                if found.is_none() {
                    found = Some(Lookup::Match(file.clone(), n));
                }
            } else if changed.is_none() {
                changed = Some(Lookup::Changed(file.clone(), n, Some(kind.to_string())));
            }
        }
    }
    Ok(found.or(changed).unwrap_or(Lookup::Unknown))
}

/// Whether the host-name field of a known_hosts line names `name` (already
/// in known_hosts form, see [`known_hosts_name`]), as OpenSSH decides: a
/// hashed field (`|1|base64(salt)|base64(HMAC-SHA1(salt, name))`) matches
/// exactly one name; otherwise a comma-separated list of patterns (`*` and
/// `?` wildcards, case-insensitive), where a matching `!pattern` excludes
/// the host whatever else matches.
pub fn names_match(field: &str, name: &str) -> bool {
    if let Some(rest) = field.strip_prefix("|1|") {
        let Some((salt, hash)) = rest.split_once('|') else {
            return false;
        };
        let (Ok(salt), Ok(hash)) = (STANDARD.decode(salt), STANDARD.decode(hash)) else {
            return false;
        };
        let Ok(mut mac) = Hmac::<sha1::Sha1>::new_from_slice(&salt) else {
            return false;
        };
        mac.update(name.as_bytes());
        // Constant time, although the hash is no secret: it is on disk.
        return mac.verify_slice(&hash).is_ok();
    }
    let name = name.to_ascii_lowercase();
    let mut matched = false;
    for pattern in field.split(',') {
        let (negated, pattern) = match pattern.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, pattern),
        };
        if glob(pattern.to_ascii_lowercase().as_bytes(), name.as_bytes()) {
            if negated {
                return false;
            }
            matched = true;
        }
    }
    matched
}

/// `*` (any run) and `?` (any one byte) wildcard match of a whole string.
fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Appends the key to `file` (creating `~/.ssh` with mode 0700 when that is
/// where it goes).
fn append(file: &Path, line: &str) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = file.parent() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    let needs_newline = fs::read(file)
        .map(|b| !b.is_empty() && !b.ends_with(b"\n"))
        .unwrap_or(false);
    let mut f = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(file)?;
    let mut text = String::new();
    if needs_newline {
        text.push('\n');
    }
    text.push_str(line);
    f.write_all(text.as_bytes())
}

fn files_for(path: &Option<PathBuf>) -> Vec<PathBuf> {
    match path {
        Some(p) => vec![p.clone()],
        None => user_known_hosts()
            .into_iter()
            .chain([PathBuf::from(GLOBAL_KNOWN_HOSTS)])
            .collect(),
    }
}

fn list(files: &[PathBuf]) -> String {
    let v: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    if v.is_empty() {
        "no known_hosts file (HOME is not set)".into()
    } else {
        v.join(", ")
    }
}

/// Decides whether the offered host key is trusted under `policy`.
pub fn verify(
    policy: &HostKeyPolicy,
    host: &str,
    port: u16,
    blob: &[u8],
) -> Result<Trust, DriverError> {
    let name = known_hosts_name(host, port);
    let offered = describe_key(blob);
    let fp = fingerprint_sha256(blob);
    let (path, accept_new) = match policy {
        HostKeyPolicy::AcceptAny => {
            tracing::warn!(host = %name, key = %offered, "host key NOT verified (accept-any)");
            return Ok(Trust::Unchecked);
        }
        HostKeyPolicy::Pinned(pin) => {
            let pin = parse_fingerprint(pin).map_err(|e| untrusted(e.to_string()))?;
            if pin == fp {
                return Ok(Trust::Pinned);
            }
            return Err(untrusted(format!(
                "the host key of {name} is {offered}, not the pinned {pin}: someone may be impersonating the host, or its key was replaced (if that is expected, pin the new fingerprint after checking it on the host with `ssh-keygen -lf` on its host key)"
            )));
        }
        HostKeyPolicy::KnownHosts(p) => (p, false),
        HostKeyPolicy::AcceptNew(p) => (p, true),
    };
    let files = files_for(path);
    match lookup(&files, &name, blob)? {
        Lookup::Match(f, l) => Ok(Trust::Known(f, l)),
        Lookup::Revoked(f, l) => Err(untrusted(format!(
            "the host key of {name} ({offered}) is marked @revoked in {}:{l}",
            f.display()
        ))),
        Lookup::Changed(f, l, recorded) => {
            let recorded = recorded.map(|t| format!(" ({t})")).unwrap_or_default();
            Err(untrusted(format!(
                "the host key of {name} has CHANGED: it offers {offered}, but {}:{l} records another key{recorded}; someone may be impersonating the host (man in the middle), or it was reinstalled — if the change is expected, check the new fingerprint on the host, remove the old entry (`ssh-keygen -R '{name}' -f {}`) and trust the new key",
                f.display(),
                f.display()
            )))
        }
        Lookup::Unknown if accept_new => {
            let target = match path {
                Some(p) => Some(p.clone()),
                None => user_known_hosts(),
            };
            let Some(target) = target else {
                let why = "HOME is not set".to_string();
                tracing::debug!(host = %name, key = %offered, "accept-new: key trusted for this run only ({why})");
                return Ok(Trust::AcceptedUnsaved(why));
            };
            match append(&target, &known_hosts_line(host, port, blob)) {
                Ok(()) => {
                    tracing::info!(host = %name, key = %offered, file = %target.display(), "accept-new: host key added");
                    Ok(Trust::Added(target))
                }
                Err(e) => {
                    let why = format!("cannot write {}: {e}", target.display());
                    tracing::debug!(host = %name, key = %offered, "accept-new: key trusted for this run only ({why})");
                    Ok(Trust::AcceptedUnsaved(why))
                }
            }
        }
        Lookup::Unknown => {
            let short_type = key_type(blob)
                .map(|t| t.trim_start_matches("ssh-").to_string())
                .unwrap_or_else(|| "ed25519".into());
            let file = files
                .first()
                .map(|f| f.display().to_string())
                .unwrap_or_else(|| "~/.ssh/known_hosts".into());
            let port_arg = if port == 22 {
                String::new()
            } else {
                format!("-p {port} ")
            };
            Err(untrusted(format!(
                "the host key of {name} is not known: it offers {offered} ({} has no entry); check that fingerprint on the host (`ssh-keygen -lf` on its host key), then trust it: pin it with --ssh-host-key {fp}, add it with `ssh-keyscan {port_arg}-t {short_type} {host} >> {file}`, or let fencekit add it with --ssh-accept-new",
                list(&files)
            )))
        }
    }
}
