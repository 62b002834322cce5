//! The per-device advisory lock between fencekit processes, so two of them
//! never act on one power domain at once: the second waits (within its
//! deadline) and then sees the first one's result (e.g. the node already off).
//!
//! **A device is one power domain** ([`DeviceKey`], SPEC §4): the host, plus
//! the port where it is not the protocol's default (IPMI 623, Redfish 443
//! over HTTPS and 80 over HTTP, SSH 22, SNMP 161), plus the Redfish system
//! path. Several virtual BMCs behind one address (VirtualBMC: one port per
//! VM; sushy-tools: one system per VM) are several devices and proceed in
//! parallel, while IPMI on 623 and Redfish on 443 of one BMC are one device
//! and serialise. The keys nest: a key without a system (IPMI, SSH, SNMP, a
//! Redfish target found by discovery) covers the whole device, so it
//! excludes every system of it, while two systems of one device do not
//! exclude each other. A host name and its address are different keys
//! (nothing is resolved to build a key).
//!
//! **A mechanism that needs no filesystem.** On Linux a lock is a Unix socket
//! bound in the *abstract namespace* (`@fencekit/bmc/DEVICE`, a system's
//! `@fencekit/bmc/DEVICE/sys/ID`): binding succeeds for one socket at a time,
//! the kernel releases it when the process exits however it exits, and it
//! needs no writable directory (FAR's read-only root, any UID); it is shared
//! by every process of the network namespace. How the names nest, how a
//! waiter waits without polling and learns who holds the lock, and why no
//! other user can hold one hostage: [`socket`].
//!
//! **Its user's.** Only a holder running as the same UID, or as root, counts:
//! a name held by any other user's process is ignored with one warning
//! naming its PID and UID, and the process goes on under a name of its own
//! UID (`@fencekit/uid/UID/bmc/…`), which its legitimate peers check too.
//! Root counts only root's holders.
//!
//! **A hook inherits the grant.** A process started by the holder for its
//! node (the confirmed-off hook, and what the hook starts) finds a token in
//! `FENCEKIT_LOCK_GRANT` ([`Inherit`]); it shows the token to the holder it
//! meets, which lets it through when the token and the device are its own.
//!
//! **Where no socket can be had** (another OS, a seccomp filter, or both the
//! shared and the UID's name held by other users), the lock falls back to a
//! `flock`ed file, created 0600, under `$XDG_RUNTIME_DIR/fencekit` or
//! `/run/fencekit` (one file per device: its systems serialise there); where
//! that fails too, the action runs unlocked, which is said once per process.
//!
//! `FENCEKIT_LOCK_SCOPE`, when set, puts the locks in a namespace of their
//! own: processes with different scopes never wait for each other. It is
//! for test suites (and independent fencing domains on one host); leave it
//! unset in production, where every process must see every other one's
//! locks. The confirmed-off hook keeps the scope of its parent.

#[cfg(target_os = "linux")]
mod socket;

use crate::engine::error::{DriverError, ErrorKind, Stage};
use std::fs::{File, OpenOptions, TryLockError};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

// ------------------------------------------------------------------ keys ----

/// One power domain, as the lock (and the fan-out's per-device slots) sees
/// it: see the module's documentation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceKey {
    device: String,
    system: Option<String>,
    address: String,
    /// Where the system's own part (its Id) starts in `system`: the lock's
    /// name leaves out the part every system of the device shares.
    id_at: usize,
}

impl DeviceKey {
    /// The device at `host:port` of a protocol whose default port is
    /// `default_port` (the port is part of the key only when it differs).
    pub fn new(host: &str, port: u16, default_port: u16) -> DeviceKey {
        let address = normalise_host(host);
        let device = if port == default_port {
            address.clone()
        } else if address.contains(':') {
            format!("[{address}]:{port}")
        } else {
            format!("{address}:{port}")
        };
        DeviceKey {
            device,
            system: None,
            address,
            id_at: 0,
        }
    }

    /// A key that names no network device (`manual/NODE`): used for the
    /// fan-out's slots only, never locked between processes.
    pub fn named(kind: &str, name: &str) -> DeviceKey {
        let device = format!("{kind}/{name}");
        DeviceKey {
            address: device.clone(),
            device,
            system: None,
            id_at: 0,
        }
    }

    /// The same device, narrowed to one system behind it (its path, e.g.
    /// `/redfish/v1/Systems/1`; a trailing `/` is not part of it). `None`
    /// keeps the whole device. `shared` is the part of the path every
    /// system of the device has (`/redfish/v1/Systems/`): the lock's name
    /// keeps only the rest.
    pub fn with_system(mut self, system: Option<&str>, shared: &str) -> DeviceKey {
        self.system = system
            .map(|s| s.trim().trim_end_matches('/'))
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        self.id_at = match &self.system {
            Some(s) if s.starts_with(shared) => shared.len(),
            _ => 0,
        };
        self
    }

    /// `HOST` or `HOST:PORT` (`[V6]:PORT`).
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The Redfish system path, when the key is narrowed to one.
    pub fn system(&self) -> Option<&str> {
        self.system.as_deref()
    }

    /// The normalised host alone (what the per-address limit counts).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The whole device this key belongs to.
    pub fn whole(&self) -> DeviceKey {
        DeviceKey {
            system: None,
            id_at: 0,
            ..self.clone()
        }
    }

    /// True when the two cannot be acted on at once: one device, and either
    /// one of them is the whole device or both are the same system.
    pub fn conflicts(&self, other: &DeviceKey) -> bool {
        self.device == other.device
            && (self.system.is_none() || other.system.is_none() || self.system == other.system)
    }

    /// True for a key of a network device (not [`DeviceKey::named`]).
    fn lockable(&self) -> bool {
        !self.device.contains('/')
    }
}

impl std::fmt::Display for DeviceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.system {
            Some(s) => write!(f, "{} system {s}", self.device),
            None => f.write_str(&self.device),
        }
    }
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

// ---------------------------------------------------------------- notices ----

/// How much a lock message matters (each front prints it its own way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Say {
    /// Which lock is held, how: for `-vv`.
    Debug,
    /// Waiting for a holder (said once per holder, with who it is).
    Info,
    /// A name held by another user's process was ignored, or no lock at
    /// all could be had: once per process and name.
    Warn,
}

/// Sends a lock message to `tracing` (the native command line's logger).
pub fn to_tracing(level: Say, msg: &str) {
    match level {
        Say::Debug => tracing::debug!("{msg}"),
        Say::Info => tracing::info!("{msg}"),
        Say::Warn => tracing::warn!("{msg}"),
    }
}

// ------------------------------------------------------------------ names ----

/// The lock namespace (`FENCEKIT_LOCK_SCOPE`), if any.
fn scope() -> Option<String> {
    std::env::var("FENCEKIT_LOCK_SCOPE")
        .ok()
        .filter(|s| !s.is_empty())
}

/// The longest abstract socket name the kernel takes (`sun_path` less the
/// leading NUL).
const MAX_ABSTRACT: usize = 107;
/// The length of a system part that is a digest.
const SYSTEM_DIGEST: usize = 20;

/// `text` when it has at most `room` bytes of plain characters, else `~`
/// and a digest of it, `digest` bytes in all: every name fits the kernel's
/// limit, and a part is spelt the same by every process that builds it.
fn part(text: &str, room: usize, digest: usize) -> String {
    let plain = |c: char| c.is_ascii_graphic() && c != '~';
    if text.len() <= room && !text.is_empty() && text.chars().all(plain) {
        return text.to_string();
    }
    use sha2::Digest;
    let hash = sha2::Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("~{}", &hex[..digest - 1])
}

/// Whose names: the shared ones, or one UID's (used while the shared name
/// is held by another user's process).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ns {
    Shared,
    Uid(u32),
}

/// `fencekit/`, the scope, the UID's part.
fn base(ns: Ns) -> String {
    let mut s = String::from("fencekit/");
    if let Some(sc) = scope() {
        s.push_str(&format!("scope/{}/", part(&sc, 15, 15)));
    }
    if let Ns::Uid(u) = ns {
        s.push_str(&format!("uid/{u}/"));
    }
    s
}

/// The name of the whole device (its part leaves room for a system's).
fn device_name(ns: Ns, key: &DeviceKey) -> String {
    let base = base(ns);
    let room = MAX_ABSTRACT - base.len() - "bmc/".len() - "/sys/".len() - SYSTEM_DIGEST;
    format!("{base}bmc/{}", part(&key.device, room, 32))
}

/// The name of one system of the device (its Id, or a digest of it where
/// it does not fit).
fn system_name(ns: Ns, key: &DeviceKey, system: &str) -> String {
    let id = system.get(key.id_at..).unwrap_or(system);
    let device = device_name(ns, key);
    let room = MAX_ABSTRACT - device.len() - "/sys/".len();
    format!("{device}/sys/{}", part(id, room, SYSTEM_DIGEST))
}

/// The abstract socket name the key's holder binds (shared namespace), as
/// `/proc/net/unix` lists it without the leading `@`.
pub fn abstract_name(key: &DeviceKey) -> String {
    match &key.system {
        Some(s) => system_name(Ns::Shared, key, s),
        None => device_name(Ns::Shared, key),
    }
}

// -------------------------------------------------------------- the lock ----

/// What holds a lock.
#[derive(Debug)]
enum Held {
    /// Bound abstract-namespace sockets (Linux), served until dropped.
    #[cfg(target_os = "linux")]
    Abstract { _names: Vec<socket::Owned> },
    /// A `flock`ed file, held for its drop.
    File { _file: File },
    /// Inside the grant of the holder that started this process (a hook).
    Granted,
    /// Nothing could be locked; the reason was said.
    Nothing,
}

/// A held lock (or the documented absence of one); released on drop.
#[derive(Debug)]
pub struct TargetLock {
    held: Held,
    mechanism: String,
    /// What a child of this process shows a holder to be let through.
    grant: Vec<String>,
}

impl TargetLock {
    /// True when a lock is actually held (or granted by the holder).
    pub fn held(&self) -> bool {
        !matches!(self.held, Held::Nothing)
    }

    /// How it is held, for logs and tests: `abstract socket @fencekit/bmc/…`,
    /// `file /run/fencekit/…`, `granted by …`, or `none (why)`.
    pub fn mechanism(&self) -> &str {
        &self.mechanism
    }

    fn nothing(mechanism: String) -> TargetLock {
        TargetLock {
            held: Held::Nothing,
            mechanism,
            grant: Vec::new(),
        }
    }
}

/// What a process started for a node (the confirmed-off hook) inherits from
/// the locks its parent holds for that node: the tokens that let it
/// through them (`FENCEKIT_LOCK_GRANT`) and the lock scope. Never printed:
/// its `Debug` shows no token.
#[derive(Clone, Default)]
pub struct Inherit {
    vars: Vec<(String, String)>,
}

impl std::fmt::Debug for Inherit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inherit(..)")
    }
}

/// The variable that carries the grant tokens to a hook.
pub const GRANT_VAR: &str = "FENCEKIT_LOCK_GRANT";

impl Inherit {
    /// From the locks held for the node (and the scope of this process).
    pub fn from_locks<'a>(locks: impl IntoIterator<Item = &'a TargetLock>) -> Inherit {
        let mut tokens: Vec<String> = locks.into_iter().flat_map(|l| l.grant.clone()).collect();
        tokens.sort();
        tokens.dedup();
        let mut vars = Vec::new();
        if !tokens.is_empty() {
            vars.push((GRANT_VAR.to_string(), tokens.join(",")));
        }
        if let Some(s) = scope() {
            vars.push(("FENCEKIT_LOCK_SCOPE".to_string(), s));
        }
        Inherit { vars }
    }

    /// The environment variables to set in the child.
    pub fn vars(&self) -> &[(String, String)] {
        &self.vars
    }
}

/// The tokens this process inherited (`FENCEKIT_LOCK_GRANT`).
fn inherited_tokens() -> Vec<String> {
    std::env::var(GRANT_VAR)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|t| t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_string)
        .collect()
}

/// A fresh token for a lock this process takes (16 random bytes, hex).
fn new_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Compares two tokens in time independent of where they differ.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// What the holder tells a waiter about itself.
#[derive(Debug)]
struct Info {
    pid: u32,
    uid: u32,
    /// When its name became visible (set again when it binds it).
    since: std::sync::Mutex<String>,
    what: String,
    device: String,
    token: String,
}

impl Info {
    /// When it holds: from now.
    fn mark(&self) {
        *self.since.lock().unwrap_or_else(|e| e.into_inner()) = crate::time::utc_now();
    }

    fn since(&self) -> String {
        self.since.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn new(key: &DeviceKey, what: &str) -> Info {
        let what: String = what
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(200)
            .collect();
        Info {
            pid: std::process::id(),
            uid: euid(),
            since: std::sync::Mutex::new(crate::time::utc_now()),
            what,
            device: key.device.clone(),
            token: new_token(),
        }
    }
}

/// This process's effective UID.
fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

// -------------------------------------------------------- run-time files ----

/// Where lock files (the fallback), holds and manual-fencing
/// acknowledgments go.
pub fn lock_dir() -> PathBuf {
    run_dir(std::env::var_os("XDG_RUNTIME_DIR").as_deref())
}

/// fencekit's run-time directory for a value of `XDG_RUNTIME_DIR`:
/// `$XDG_RUNTIME_DIR/fencekit` when it is set, else `/run/fencekit`.
pub fn run_dir(xdg_runtime_dir: Option<&std::ffi::OsStr>) -> PathBuf {
    match xdg_runtime_dir {
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

/// A directory of fencekit's run-time state (locks, acknowledgments) that
/// cannot be created.
#[derive(Debug, thiserror::Error)]
#[error("cannot create {}: {source}", dir.display())]
pub struct CreateDirError {
    pub dir: PathBuf,
    pub source: std::io::Error,
}

/// Creates `dir` and its parents (0700, see [`crate::private`]).
pub fn create_dir(dir: &std::path::Path) -> Result<(), CreateDirError> {
    crate::private::create_dir(dir).map_err(|source| CreateDirError {
        dir: dir.to_path_buf(),
        source,
    })
}

// ---------------------------------------------------------------- acquire ----

/// The error of a waiter whose deadline came first.
fn busy(key: &DeviceKey, holder: &str, started: Instant) -> DriverError {
    DriverError::new(
        ErrorKind::Timeout,
        Stage::Authenticate,
        format!(
            "another fencekit process ({holder}) still holds the lock of {key} after {:.1}s",
            started.elapsed().as_secs_f64()
        ),
    )
}

/// Whether "no lock at all" was said already in this process.
static UNLOCKED_SAID: AtomicBool = AtomicBool::new(false);

/// The documented absence of a lock, said (as a warning) once per process.
fn unlocked(key: &DeviceKey, why: String, say: &dyn Fn(Say, &str)) -> TargetLock {
    let mechanism = format!("none ({why})");
    let level = if UNLOCKED_SAID.swap(true, Ordering::Relaxed) {
        Say::Debug
    } else {
        Say::Warn
    };
    say(
        level,
        &format!("running without the per-device lock for {key}: {mechanism}"),
    );
    TargetLock::nothing(mechanism)
}

/// Takes the lock for `key`, waiting (without polling, where the kernel can
/// say when a holder lets go) until `deadline` if a legitimate holder has
/// it. `what` is what this process is doing (`off node02 (level 1)`), told
/// to waiters; messages go to `say`. Cancellation is the caller's: drop the
/// future.
pub async fn acquire(
    key: &DeviceKey,
    deadline: Option<Instant>,
    what: &str,
    say: &dyn Fn(Say, &str),
) -> Result<TargetLock, DriverError> {
    acquire_as(key, deadline, what, say, inherited_tokens()).await
}

/// [`acquire`] with the grant tokens this process shows holders.
async fn acquire_as(
    key: &DeviceKey,
    deadline: Option<Instant>,
    what: &str,
    say: &dyn Fn(Say, &str),
    tokens: Vec<String>,
) -> Result<TargetLock, DriverError> {
    let started = Instant::now();
    if !key.lockable() {
        return Ok(TargetLock::nothing("none (not a network device)".into()));
    }
    #[cfg(target_os = "linux")]
    let why = match socket::acquire(key, deadline, what, say, started, tokens.clone()).await? {
        socket::Got::Lock(l) => return Ok(l),
        socket::Got::Fallback(why) => why,
    };
    #[cfg(not(target_os = "linux"))]
    let why = String::from("abstract sockets are Linux-only");
    let request = Request {
        key,
        deadline,
        what,
        say,
        started,
        tokens,
    };
    file_lock(&request, &lock_dir(), why).await
}

/// One acquisition, as the fallback sees it.
struct Request<'a> {
    key: &'a DeviceKey,
    deadline: Option<Instant>,
    what: &'a str,
    say: &'a dyn Fn(Say, &str),
    started: Instant,
    tokens: Vec<String>,
}

/// The fallback: a `flock`ed file per device, polled (no event says when
/// a `flock` is released), with what the holder is doing written in it.
async fn file_lock(
    r: &Request<'_>,
    dir: &std::path::Path,
    why: String,
) -> Result<TargetLock, DriverError> {
    let (key, deadline, say) = (r.key, r.deadline, r.say);
    let stem = match scope() {
        Some(s) => format!("scope/{s}/bmc/{}", key.device),
        None => format!("bmc/{}", key.device),
    };
    let path = dir.join(file_name(&stem));
    let opened = create_dir(dir).map_err(|e| e.to_string()).and_then(|()| {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(crate::private::FILE_MODE)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))
    });
    let mut file = match opened {
        Ok(f) => f,
        Err(e) => return Ok(unlocked(key, format!("{why}; lock file: {e}"), say)),
    };
    let info = Info::new(key, r.what);
    let mut pause = Duration::from_millis(10);
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => {
                info.mark();
                write_info(&mut file, &info);
                let mechanism = format!("file {}", path.display());
                say(
                    Say::Debug,
                    &format!("holding the lock of {key} ({mechanism}; {why})"),
                );
                return Ok(TargetLock {
                    held: Held::File { _file: file },
                    mechanism,
                    grant: vec![info.token.clone()],
                });
            }
            Err(TryLockError::WouldBlock) => {
                let holder = read_info(&path);
                if let Some(h) = &holder {
                    if r.tokens
                        .iter()
                        .any(|t| same_token(&token_digest(t), &h.digest))
                    {
                        return Ok(TargetLock {
                            held: Held::Granted,
                            mechanism: format!(
                                "granted by PID {} (file {})",
                                h.pid,
                                path.display()
                            ),
                            grant: r.tokens.clone(),
                        });
                    }
                }
                let who = holder
                    .map(|h| h.describe())
                    .unwrap_or_else(|| "it does not say who it is".into());
                if !told {
                    told = true;
                    say(
                        Say::Info,
                        &format!("waiting for the lock of {key}: held by {who}"),
                    );
                }
                if deadline.is_some_and(|d| Instant::now() + pause >= d) {
                    return Err(busy(key, &who, r.started));
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(250));
            }
            Err(TryLockError::Error(e)) => {
                return Ok(unlocked(
                    key,
                    format!("{why}; cannot lock {}: {e}", path.display()),
                    say,
                ));
            }
        }
    }
}

/// The token as the lock file keeps it (a digest, never the token).
fn token_digest(token: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes who holds the lock file into it.
fn write_info(file: &mut File, info: &Info) {
    use std::io::{Seek, Write};
    let line = format!(
        "pid={} uid={} since={} grant={} what={}\n",
        info.pid,
        info.uid,
        info.since(),
        token_digest(&info.token),
        info.what
    );
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(line.as_bytes()));
}

/// Who holds a lock file, as it wrote it.
struct FileHolder {
    pid: String,
    uid: String,
    since: String,
    digest: String,
    what: String,
}

impl FileHolder {
    fn describe(&self) -> String {
        format!(
            "PID {} (UID {}) since {}: {}",
            self.pid, self.uid, self.since, self.what
        )
    }
}

fn read_info(path: &std::path::Path) -> Option<FileHolder> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().next()?;
    let (head, what) = line.split_once(" what=")?;
    let field = |k: &str| {
        head.split(' ')
            .find_map(|f| f.strip_prefix(k))
            .map(str::to_string)
    };
    Some(FileHolder {
        pid: field("pid=")?,
        uid: field("uid=")?,
        since: field("since=")?,
        digest: field("grant=")?,
        what: what.to_string(),
    })
}

#[cfg(test)]
mod tests {
    /// The part of a Redfish system path every system shares.
    const SYSTEMS: &str = "/redfish/v1/Systems/";
    use super::*;

    fn ipmi(h: &str) -> DeviceKey {
        DeviceKey::new(h, 623, 623)
    }

    #[test]
    fn one_key_per_device_whatever_the_spelling() {
        assert_eq!(ipmi("10.0.0.1").device(), "10.0.0.1");
        assert_eq!(ipmi("[2001:DB8::0:1]"), ipmi("2001:db8::1"));
        assert_eq!(ipmi("::ffff:10.0.0.1"), ipmi("10.0.0.1"));
        assert_eq!(ipmi("BMC7.Example.com."), ipmi("bmc7.example.com"));
        assert_ne!(ipmi("10.0.0.1"), ipmi("10.0.0.2"));
        // IPMI on 623 and Redfish on 443 of one BMC: one device.
        assert_eq!(DeviceKey::new("10.0.0.1", 443, 443), ipmi("10.0.0.1"));
        // VirtualBMC: one address, one port per VM: several devices.
        let (a, b) = (
            DeviceKey::new("10.0.0.1", 6230, 623),
            DeviceKey::new("10.0.0.1", 6231, 623),
        );
        assert_eq!((a.device(), b.device()), ("10.0.0.1:6230", "10.0.0.1:6231"));
        assert!(!a.conflicts(&b));
        assert_eq!(a.address(), b.address());
        assert_eq!(DeviceKey::new("::1", 8000, 443).device(), "[::1]:8000");
    }

    #[test]
    fn systems_nest_under_their_device() {
        let whole = DeviceKey::new("10.0.0.1", 443, 443);
        let s1 = whole
            .clone()
            .with_system(Some("/redfish/v1/Systems/1/"), SYSTEMS);
        let s2 = whole
            .clone()
            .with_system(Some("/redfish/v1/Systems/2"), SYSTEMS);
        assert_eq!(s1.system(), Some("/redfish/v1/Systems/1"));
        assert!(
            !s1.conflicts(&s2),
            "two systems of one device run in parallel"
        );
        assert!(s1.conflicts(&s1.clone()));
        assert!(whole.conflicts(&s1) && s2.conflicts(&whole));
        assert!(
            ipmi("10.0.0.1").conflicts(&s1),
            "IPMI excludes a Redfish system"
        );
        assert!(!DeviceKey::new("10.0.0.1", 8000, 443).conflicts(&s1));
        assert_eq!(s1.whole(), whole);
        assert_eq!(s1.to_string(), "10.0.0.1 system /redfish/v1/Systems/1");
        assert_eq!(whole.clone().with_system(Some(" "), SYSTEMS), whole);
    }

    #[test]
    fn names_fit_the_abstract_namespace_and_nest() {
        let long = DeviceKey::new(&"a".repeat(300), 65535, 623).with_system(
            Some(&format!("/redfish/v1/Systems/{}", "s".repeat(200))),
            SYSTEMS,
        );
        for ns in [Ns::Shared, Ns::Uid(u32::MAX)] {
            let n = system_name(ns, &long, long.system().unwrap());
            assert!(n.len() <= MAX_ABSTRACT, "{n} ({})", n.len());
            assert!(n.starts_with(&device_name(ns, &long)), "{n}");
        }
        let k = DeviceKey::new("10.0.0.1", 8000, 443)
            .with_system(Some("/redfish/v1/Systems/1"), SYSTEMS);
        let uuid = "/redfish/v1/Systems/00000000-0000-4000-8000-000000000001";
        if scope().is_none() {
            assert_eq!(abstract_name(&k), "fencekit/bmc/10.0.0.1:8000/sys/1");
            assert_eq!(abstract_name(&k.whole()), "fencekit/bmc/10.0.0.1:8000");
            assert_eq!(
                device_name(Ns::Uid(0), &k),
                "fencekit/uid/0/bmc/10.0.0.1:8000"
            );
            assert_eq!(
                abstract_name(&k.clone().with_system(Some(uuid), SYSTEMS)),
                "fencekit/bmc/10.0.0.1:8000/sys/00000000-0000-4000-8000-000000000001",
                "a sushy-tools system's UUID fits as it is"
            );
        }
        assert_ne!(part(&"x".repeat(40), 20, 20), part(&"y".repeat(40), 20, 20));
        assert_eq!(
            part("~1", 20, 20).len(),
            20,
            "a literal never looks like a digest"
        );
    }

    #[test]
    fn tokens_are_fresh_and_compared_whole() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(same_token(&a, &a.clone()));
        assert!(!same_token(&a, &b) && !same_token(&a, &a[..31]));
        let inh = Inherit {
            vars: vec![(GRANT_VAR.into(), a.clone())],
        };
        assert!(!format!("{inh:?}").contains(&a), "Debug shows no token");
    }

    /// A device of this test's own.
    fn fresh() -> DeviceKey {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        DeviceKey::new(&format!("t{}-{n}.lock.test", std::process::id()), 623, 623)
    }

    type Said = std::rc::Rc<std::cell::RefCell<Vec<(Say, String)>>>;

    fn recorder() -> (Said, impl Fn(Say, &str)) {
        let said: Said = Default::default();
        let s = said.clone();
        (said, move |l: Say, m: &str| {
            s.borrow_mut().push((l, m.to_string()))
        })
    }

    fn soon(ms: u64) -> Option<Instant> {
        Some(Instant::now() + Duration::from_millis(ms))
    }

    async fn take(
        key: &DeviceKey,
        deadline: Option<Instant>,
        tokens: &[String],
    ) -> Result<TargetLock, DriverError> {
        acquire_as(key, deadline, "test", &|_, _| {}, tokens.to_vec()).await
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_waiter_says_who_holds_the_lock_keeps_its_deadline_and_wakes_on_release() {
        let key = fresh();
        let first = acquire_as(&key, None, "off node02 (level 1)", &|_, _| {}, vec![])
            .await
            .unwrap();
        assert!(first.held());
        assert!(
            first.mechanism().starts_with("abstract socket @fencekit/"),
            "{}",
            first.mechanism()
        );
        let (said, say) = recorder();
        let t = Instant::now();
        let e = acquire_as(&key, soon(300), "status", &say, vec![])
            .await
            .unwrap_err();
        let waited = t.elapsed();
        assert!(
            waited >= Duration::from_millis(300) && waited < Duration::from_secs(2),
            "{waited:?}"
        );
        assert_eq!(e.kind, ErrorKind::Timeout);
        let pid = format!("PID {}", std::process::id());
        assert!(
            e.message.contains("another fencekit process")
                && e.message.contains(&pid)
                && e.message.contains("off node02 (level 1)"),
            "{e}"
        );
        let waits: Vec<_> = said
            .borrow()
            .iter()
            .filter(|(l, _)| *l == Say::Info)
            .cloned()
            .collect();
        assert_eq!(waits.len(), 1, "said once: {waits:?}");
        assert!(
            waits[0].1.contains(&pid) && waits[0].1.contains(" since 20"),
            "{waits:?}"
        );

        // Released while a waiter waits: it takes the lock at once.
        let release = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            drop(first);
        });
        let t = Instant::now();
        let second = take(&key, soon(5000), &[]).await.unwrap();
        assert!(second.held());
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        release.await.unwrap();
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn systems_run_in_parallel_and_the_whole_device_excludes_them() {
        let dev = fresh();
        let s1 = dev
            .clone()
            .with_system(Some("/redfish/v1/Systems/1"), SYSTEMS);
        let s2 = dev
            .clone()
            .with_system(Some("/redfish/v1/Systems/2"), SYSTEMS);
        let a = take(&s1, soon(1000), &[]).await.unwrap();
        let b = take(&s2, soon(1000), &[]).await.unwrap();
        assert!(
            a.mechanism().contains("/sys/1") && a.mechanism().contains("/slot/"),
            "{}",
            a.mechanism()
        );
        assert!(
            take(&s1, soon(200), &[]).await.is_err(),
            "one system, one holder"
        );
        let e = take(&dev, soon(200), &[]).await.unwrap_err();
        assert!(e.message.contains("still holds"), "{e}");
        drop((a, b));
        let whole = take(&dev, soon(2000), &[]).await.unwrap();
        assert!(
            take(&s2, soon(200), &[]).await.is_err(),
            "a system waits for the device"
        );
        drop(whole);
        take(&s2, soon(2000), &[]).await.unwrap();
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_child_with_the_holders_token_is_let_through_and_no_one_else() {
        let key = fresh();
        let parent = take(&key, None, &[]).await.unwrap();
        let child = take(&key, soon(2000), &parent.grant).await.unwrap();
        assert!(child.held());
        assert!(
            child.mechanism().starts_with("granted by PID"),
            "{}",
            child.mechanism()
        );
        assert!(
            take(&key, soon(200), &[new_token()]).await.is_err(),
            "another token"
        );
        assert!(take(&key, soon(200), &[]).await.is_err(), "no token");
        // A child that wants the whole device while its parent holds a system.
        let dev = fresh();
        let sys = take(
            &dev.clone()
                .with_system(Some("/redfish/v1/Systems/7"), SYSTEMS),
            None,
            &[],
        )
        .await
        .unwrap();
        let child = take(&dev, soon(2000), &sys.grant).await.unwrap();
        assert!(
            child.mechanism().contains("let through by PID"),
            "{}",
            child.mechanism()
        );
        // The parent's token is no good for another device.
        let other = fresh();
        let _other = take(&other, None, &[]).await.unwrap();
        assert!(take(&other, soon(200), &parent.grant).await.is_err());
    }

    #[tokio::test]
    async fn the_file_fallback_says_who_holds_it_and_lets_a_child_through() {
        let dir = tempfile::tempdir().unwrap();
        let key = fresh();
        let req = |deadline, tokens: Vec<String>, say| Request {
            key: &key,
            deadline,
            what: "off node03",
            say,
            started: Instant::now(),
            tokens,
        };
        let quiet = |_: Say, _: &str| {};
        let first = file_lock(&req(None, vec![], &quiet), dir.path(), "test".into())
            .await
            .unwrap();
        assert!(
            first.mechanism().starts_with("file "),
            "{}",
            first.mechanism()
        );
        let path = first.mechanism().trim_start_matches("file ").to_string();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains(&first.grant[0]),
            "the file keeps a digest, not the token"
        );
        let (said, say) = recorder();
        let e = file_lock(&req(soon(200), vec![], &say), dir.path(), "test".into())
            .await
            .unwrap_err();
        assert!(e.message.contains("off node03"), "{e}");
        assert!(said
            .borrow()
            .iter()
            .any(|(l, m)| *l == Say::Info && m.contains("off node03")));
        let child = file_lock(
            &req(soon(2000), first.grant.clone(), &quiet),
            dir.path(),
            "test".into(),
        )
        .await
        .unwrap();
        assert!(
            child.mechanism().starts_with("granted"),
            "{}",
            child.mechanism()
        );
        drop(first);
        file_lock(&req(soon(2000), vec![], &quiet), dir.path(), "test".into())
            .await
            .unwrap();
    }
}
