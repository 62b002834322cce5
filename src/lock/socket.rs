//! The lock as abstract-namespace Unix sockets (Linux).
//!
//! **Names.** A whole device is `fencekit/bmc/DEVICE`; one Redfish system of
//! it is `fencekit/bmc/DEVICE/sys/ID`; a system holder also binds one of
//! [`SLOTS`] slot names `fencekit/bmc/DEVICE/slot/N`, which is how a
//! whole-device locker finds the systems in use without listing every
//! socket of the host. (`FENCEKIT_LOCK_SCOPE` adds `scope/S/` after
//! `fencekit/`; a name held by another user's process is replaced by this
//! UID's, `fencekit/uid/UID/bmc/…`; long parts are digests.)
//!
//! **Holding.** A holder binds its name and serves it: every connection is
//! told, in one line, who holds it (PID, since when, what it does), may ask
//! to be let through with a grant token, and is kept open until the holder
//! lets go — then the kernel closes it, which is the waiter's event. A
//! connection still queued when the holder exits is reset, the same event.
//!
//! **Who counts.** A waiter reads the holder's credentials from the
//! connection (`SO_PEERCRED`: the process that listens, as the kernel saw
//! it). A holder counts when it runs as the waiter's UID or as root. Any
//! other holder is ignored, with one warning naming its PID and UID; a name
//! bound by a socket that accepts no connection is no fencekit lock either
//! (its owner is looked up in `/proc` where permissions allow). When the
//! shared name of a device is held by someone who does not count, the
//! waiter takes its UID's name instead, and both kinds of name are checked
//! by everyone who counts that UID (below): processes that found the
//! shared name taken exclude each other there, and one that later finds
//! the shared name free still sees them.
//!
//! **Taking a lock** (bounded by the waiter's deadline at every step):
//! 1. bind the own name (shared, else the UID's); if a holder that counts
//!    has it, wait for it to let go (or be let through, for a hook) and
//!    start again;
//! 2. a system also binds a free slot (waiting for one when all
//!    [`SLOTS`] are in use; when every slot is held by others who do not
//!    count, it takes the whole device instead);
//! 3. only then look for conflicting holders that count: a whole device
//!    looks at its name in the other namespaces and at every slot; a
//!    system looks at the device's names and at its own name in the other
//!    namespaces. Against each, the higher-ranked one keeps its name and
//!    waits, the other lets go of its names and waits, then starts again.
//!    Rank: a whole device over a system, the shared namespace over a UID's,
//!    and at equal rank root's over another user's.
//!
//! Because both sides bind before they look, two conflicting lockers
//! cannot both miss each other: the later one to look sees the earlier,
//! so at most one acts. Waits-for only points from a higher rank to a lower
//! one, and a lower one never waits while holding, so there is no deadlock;
//! a system locker can be overtaken by a stream of whole-device lockers,
//! never for longer than its deadline, while a whole-device locker never
//! starves (new system lockers defer to it).

use super::{busy, same_token, DeviceKey, Info, Ns, Say, TargetLock};
use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How many system holders one device can have at once (between
/// processes). Every whole-device locker looks at each slot, so this is
/// also what a whole-device lock costs: one refused connection per slot.
pub(super) const SLOTS: usize = 8;

/// How long a waiter waits for a holder to say who it is (or to answer a
/// grant request) before going on without the answer.
const ANSWER: Duration = Duration::from_millis(300);

/// A bound name, served until dropped.
#[derive(Debug)]
pub(super) struct Owned {
    name: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Owned {
    fn drop(&mut self) {
        // The listener and every connection to it go with the task.
        self.task.abort();
    }
}

/// What the socket lock came to.
pub(super) enum Got {
    /// Held (or granted).
    Lock(TargetLock),
    /// No socket lock can be had here; why.
    Fallback(String),
}

// ------------------------------------------------------------- holding ----

/// The name a whole device or a system binds in namespace `ns`.
fn own_name(key: &DeviceKey, ns: Ns) -> String {
    match key.system() {
        Some(s) => super::system_name(ns, key, s),
        None => super::device_name(ns, key),
    }
}

/// The device's slot names (shared namespace).
fn slot_names(key: &DeviceKey) -> Vec<String> {
    let device = super::device_name(Ns::Shared, key);
    (0..SLOTS).map(|i| format!("{device}/slot/{i}")).collect()
}

enum Bound {
    Mine(Owned),
    Taken,
    Unavailable(std::io::Error),
}

/// Binds `name` and starts serving it.
fn bind(name: &str, info: &Arc<Info>) -> Bound {
    use std::os::linux::net::SocketAddrExt;
    let listener = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
        .and_then(|a| std::os::unix::net::UnixListener::bind_addr(&a));
    let listener = match listener {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => return Bound::Taken,
        Err(e) => return Bound::Unavailable(e),
    };
    let listener = match listener
        .set_nonblocking(true)
        .and_then(|()| tokio::net::UnixListener::from_std(listener))
    {
        Ok(l) => l,
        Err(e) => return Bound::Unavailable(e),
    };
    Bound::Mine(Owned {
        name: name.to_string(),
        task: tokio::spawn(serve(listener, info.clone())),
    })
}

/// Accepts waiters until aborted (which closes them all).
async fn serve(listener: tokio::net::UnixListener, info: Arc<Info>) {
    let mut waiters = tokio::task::JoinSet::new();
    loop {
        while waiters.try_join_next().is_some() {}
        match listener.accept().await {
            Ok((s, _)) => {
                waiters.spawn(answer(s, info.clone()));
            }
            // Out of descriptors, most likely: queued waiters still get
            // their event when this holder lets go.
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The holder's line: who it is, since when, what it does.
fn introduction(info: &Info) -> String {
    format!(
        "fencekit-lock v1 pid={} since={} what={}\n",
        info.pid,
        info.since(),
        info.what
    )
}

/// One waiter: told who holds the lock, answered, kept until it leaves or
/// the holder lets go.
async fn answer(mut s: tokio::net::UnixStream, info: Arc<Info>) {
    if s.write_all(introduction(&info).as_bytes()).await.is_err() {
        return;
    }
    let peer_uid = s.peer_cred().ok().map(|c| c.uid());
    let mut buf = Vec::new();
    let mut chunk = [0u8; 256];
    loop {
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        while let Some(i) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=i).collect();
            let reply = judge(&info, &String::from_utf8_lossy(&line), peer_uid);
            if s.write_all(reply).await.is_err() {
                return;
            }
        }
        if buf.len() > 1024 {
            return;
        }
    }
}

/// The answer to `grant TOKENS DEVICE`: granted when one token is this
/// lock's, the device is this lock's and the asker runs as this holder's
/// UID or as root.
fn judge(info: &Info, request: &str, peer_uid: Option<u32>) -> &'static [u8] {
    let mut words = request.split_whitespace();
    if words.next() != Some("grant") {
        return b"?\n";
    }
    let (Some(tokens), Some(device)) = (words.next(), words.next()) else {
        return b"refused\n";
    };
    let ok = peer_uid.is_some_and(|u| u == info.uid || u == 0)
        && device == info.device
        && tokens.split(',').any(|t| same_token(t, &info.token));
    if ok {
        b"granted\n"
    } else {
        b"refused\n"
    }
}

// ------------------------------------------------------------- looking ----

/// What a connection to a name found.
enum Reach {
    /// Nothing listens (no such name, or bound without listening).
    Nobody,
    /// A listener whose queue is full (it accepts nobody).
    Full,
    /// A listener, and who it is.
    Peer(std::os::unix::net::UnixStream, i32, u32),
    /// The connection failed otherwise.
    Failed,
}

/// One non-blocking socket reused for every connection that fails (most
/// names looked at are free: a refusal costs one system call).
struct Prober {
    fd: OwnedFd,
}

thread_local! {
    /// This thread's prober, kept between acquisitions (a fan-out takes
    /// thousands of locks).
    static PROBER: std::cell::RefCell<Option<Prober>> = const { std::cell::RefCell::new(None) };
}

/// Connects to `name` with this thread's prober.
fn reach(name: &str) -> Reach {
    PROBER.with(|p| {
        let mut p = p.borrow_mut();
        if p.is_none() {
            *p = Prober::new().ok();
        }
        match p.as_mut() {
            Some(p) => p.connect(name),
            None => Reach::Failed,
        }
    })
}

impl Prober {
    fn new() -> std::io::Result<Prober> {
        use rustix::net::{socket_with, AddressFamily, SocketFlags, SocketType};
        let fd = socket_with(
            AddressFamily::UNIX,
            SocketType::STREAM,
            SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            None,
        )?;
        Ok(Prober { fd })
    }

    fn connect(&mut self, name: &str) -> Reach {
        use rustix::io::Errno;
        let Ok(addr) = rustix::net::SocketAddrUnix::new_abstract_name(name.as_bytes()) else {
            return Reach::Failed;
        };
        match rustix::net::connect(&self.fd, &addr) {
            Ok(()) => {
                let Ok(fresh) = Prober::new() else {
                    return Reach::Failed;
                };
                let fd = std::mem::replace(&mut self.fd, fresh.fd);
                match rustix::net::sockopt::socket_peercred(&fd) {
                    Ok(c) => Reach::Peer(fd.into(), c.pid.as_raw_pid(), c.uid.as_raw()),
                    Err(_) => Reach::Failed,
                }
            }
            Err(Errno::CONNREFUSED) | Err(Errno::NOENT) => Reach::Nobody,
            Err(Errno::AGAIN) => Reach::Full,
            Err(_) => Reach::Failed,
        }
    }
}

/// A holder that counts, connected.
struct Peer {
    stream: tokio::net::UnixStream,
    pid: i32,
    uid: u32,
    buf: Vec<u8>,
    /// `since T: what`, once it said so.
    about: Option<String>,
    /// Its line was waited for (said or not).
    introduced: bool,
    /// It let go (its end closed).
    gone: bool,
}

enum Line {
    Text(String),
    Closed,
    Late,
}

impl Peer {
    /// One line from the holder, until `until`.
    async fn line(&mut self, until: tokio::time::Instant) -> Line {
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
                let l: Vec<u8> = self.buf.drain(..=i).collect();
                return Line::Text(String::from_utf8_lossy(&l).trim_end().to_string());
            }
            if self.buf.len() > 1024 {
                self.buf.clear();
            }
            let mut chunk = [0u8; 512];
            match tokio::time::timeout_at(until, self.stream.read(&mut chunk)).await {
                Err(_) => return Line::Late,
                Ok(Ok(0)) | Ok(Err(_)) => {
                    self.gone = true;
                    return Line::Closed;
                }
                Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Reads who it is (a short wait, never past `deadline`).
    async fn introduce(&mut self, deadline: Option<Instant>) {
        if self.introduced {
            return;
        }
        self.introduced = true;
        if let Line::Text(l) = self.line(answer_by(deadline)).await {
            if let Some(rest) = l.strip_prefix("fencekit-lock v1 ") {
                let since = rest
                    .split(' ')
                    .find_map(|w| w.strip_prefix("since="))
                    .unwrap_or("?");
                let what = rest.split_once(" what=").map(|x| x.1).unwrap_or("");
                self.about = Some(format!("since {since}: {what}"));
            }
        }
    }

    /// Asks to be let through with `tokens` for `device`.
    async fn grant(&mut self, tokens: &[String], device: &str, deadline: Option<Instant>) -> bool {
        let ask = format!("grant {} {device}\n", tokens.join(","));
        if self.stream.write_all(ask.as_bytes()).await.is_err() {
            self.gone = true;
            return false;
        }
        matches!(self.line(answer_by(deadline)).await, Line::Text(l) if l == "granted")
    }

    /// Returns when the holder lets go (its end closes).
    async fn released(&mut self) {
        let mut chunk = [0u8; 256];
        while !self.gone {
            match self.stream.read(&mut chunk).await {
                Ok(0) | Err(_) => self.gone = true,
                Ok(_) => {}
            }
        }
    }

    fn describe(&self) -> String {
        match &self.about {
            Some(a) => format!("PID {} (UID {}) {a}", self.pid, self.uid),
            None => format!(
                "PID {} (UID {}), which does not say what it does",
                self.pid, self.uid
            ),
        }
    }
}

/// Now + [`ANSWER`], or the deadline if sooner.
fn answer_by(deadline: Option<Instant>) -> tokio::time::Instant {
    let soon = Instant::now() + ANSWER;
    tokio::time::Instant::from_std(deadline.map_or(soon, |d| d.min(soon)))
}

/// `f`, unless the deadline passes first.
async fn within<T>(
    deadline: Option<Instant>,
    f: impl std::future::Future<Output = T>,
) -> Option<T> {
    match deadline {
        Some(d) => tokio::time::timeout_at(tokio::time::Instant::from_std(d), f)
            .await
            .ok(),
        None => Some(f.await),
    }
}

/// Returns when the first of `peers` lets go.
async fn first_released(peers: &mut [Peer]) {
    loop {
        std::future::poll_fn(|cx| {
            if peers
                .iter()
                .any(|p| p.stream.poll_read_ready(cx).is_ready())
            {
                std::task::Poll::Ready(())
            } else {
                std::task::Poll::Pending
            }
        })
        .await;
        for p in peers.iter_mut() {
            let mut chunk = [0u8; 256];
            match p.stream.try_read(&mut chunk) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    }
}

/// The process (PID, UID) that has a socket bound to `name`, from
/// `/proc/net/unix` and the descriptors in `/proc` it may read.
fn owner_of(name: &str) -> Option<(i32, u32)> {
    let table = std::fs::read_to_string("/proc/net/unix").ok()?;
    let at = format!(" @{name}");
    let inode = table
        .lines()
        .find(|l| l.ends_with(&at))?
        .split_whitespace()
        .nth(6)?
        .to_string();
    let wanted = format!("socket:[{inode}]");
    for proc_dir in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = proc_dir
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(proc_dir.path().join("fd")) else {
            continue;
        };
        let found = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == wanted.as_str())
        });
        if found {
            let status = std::fs::read_to_string(proc_dir.path().join("status")).ok()?;
            let uid = status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            return Some((pid, uid));
        }
    }
    None
}

// -------------------------------------------------------------- taking ----

/// A whole device outranks a system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    System,
    Device,
}

/// Rank of a holder of a `kind` name in `ns`.
fn rank(kind: Kind, ns: Ns) -> (Kind, u8) {
    (kind, u8::from(ns == Ns::Shared))
}

enum Look {
    /// Nothing that counts (free, or just released).
    Nobody,
    /// A listener that accepts nobody.
    Deaf,
    /// A holder of another user.
    Stranger(i32, u32),
    /// A holder that counts.
    Holder(Peer),
}

enum Own {
    Bound(Ns, Owned),
    Granted(i32, String),
    Again,
    Fallback(String),
}

/// One acquisition.
struct Attempt<'a> {
    key: DeviceKey,
    deadline: Option<Instant>,
    uid: u32,
    tokens: Vec<String>,
    info: Arc<Info>,
    say: &'a dyn Fn(Say, &str),
    started: Instant,
    /// Holders this attempt said it waits for.
    told: HashSet<i32>,
    /// Holders that let this process through (its parent, for a hook).
    let_through: Vec<i32>,
}

/// Names ignored so far in this process (one warning each).
static IGNORED: Mutex<Option<HashSet<(String, i32)>>> = Mutex::new(None);

pub(super) async fn acquire(
    key: &DeviceKey,
    deadline: Option<Instant>,
    what: &str,
    say: &dyn Fn(Say, &str),
    started: Instant,
    tokens: Vec<String>,
) -> Result<Got, crate::engine::error::DriverError> {
    let mut a = Attempt {
        key: key.clone(),
        deadline,
        uid: super::euid(),
        tokens,
        info: Arc::new(Info::new(key, what)),
        say,
        started,
        told: HashSet::new(),
        let_through: Vec::new(),
    };
    a.run().await
}

impl Attempt<'_> {
    /// The namespaces whose holders count for this process.
    fn namespaces(&self) -> Vec<Ns> {
        let mut v = vec![Ns::Shared, Ns::Uid(self.uid)];
        if self.uid != 0 {
            v.push(Ns::Uid(0));
        }
        v
    }

    fn counts(&self, uid: u32) -> bool {
        uid == self.uid || uid == 0
    }

    fn expired(&self, holder: &str) -> crate::engine::error::DriverError {
        busy(&self.key, holder, self.started)
    }

    async fn run(&mut self) -> Result<Got, crate::engine::error::DriverError> {
        loop {
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(self.expired("the deadline came first"));
            }
            let kind = match self.key.system() {
                Some(_) => Kind::System,
                None => Kind::Device,
            };
            let (ns, mut owned) = match self.own().await? {
                Own::Bound(ns, o) => {
                    self.info.mark();
                    (ns, vec![o])
                }
                Own::Granted(pid, name) => {
                    let mechanism = format!(
                        "granted by PID {pid}, which holds @{name} and started this process"
                    );
                    (self.say)(Say::Debug, &format!("lock of {}: {mechanism}", self.key));
                    return Ok(Got::Lock(TargetLock {
                        held: super::Held::Granted,
                        mechanism,
                        grant: self.tokens.clone(),
                    }));
                }
                Own::Again => continue,
                Own::Fallback(why) => return Ok(Got::Fallback(why)),
            };
            if kind == Kind::System {
                match self.slot().await? {
                    Some(o) => owned.push(o),
                    None => {
                        (self.say)(
                            Say::Debug,
                            &format!(
                                "every slot of device {} is held by others: taking the whole device",
                                self.key.device()
                            ),
                        );
                        self.key = self.key.whole();
                        continue;
                    }
                }
            }
            match self.clear(kind, ns).await? {
                None => {
                    let names: Vec<String> = owned.iter().map(|o| format!("@{}", o.name)).collect();
                    let mut mechanism = format!("abstract socket {}", names.join(" + "));
                    if !self.let_through.is_empty() {
                        mechanism.push_str(&format!(
                            " (let through by PID {:?}, which started this process)",
                            self.let_through
                        ));
                    }
                    (self.say)(
                        Say::Debug,
                        &format!("holding the lock of {} ({mechanism})", self.key),
                    );
                    return Ok(Got::Lock(TargetLock {
                        held: super::Held::Abstract { _names: owned },
                        mechanism,
                        grant: vec![self.info.token.clone()],
                    }));
                }
                Some(higher) => {
                    drop(owned);
                    self.wait(higher).await?;
                }
            }
        }
    }

    /// Step 1: binds the own name, in the shared namespace or this UID's.
    async fn own(&mut self) -> Result<Own, crate::engine::error::DriverError> {
        for ns in [Ns::Shared, Ns::Uid(self.uid)] {
            let name = own_name(&self.key, ns);
            let mut tries = 0;
            loop {
                match bind(&name, &self.info) {
                    Bound::Mine(o) => return Ok(Own::Bound(ns, o)),
                    Bound::Unavailable(e) => {
                        return Ok(Own::Fallback(format!(
                            "abstract socket @{name} unavailable: {e}"
                        )))
                    }
                    Bound::Taken => {}
                }
                match self.look(&name).await {
                    Look::Holder(mut p) => {
                        if self.granted(&mut p).await {
                            return Ok(Own::Granted(p.pid, name));
                        }
                        self.wait(p).await?;
                        return Ok(Own::Again);
                    }
                    Look::Stranger(pid, uid) => {
                        self.ignore(&name, Some((pid, uid)), None);
                        break;
                    }
                    // Let go of just now, or bound by something that does not
                    // listen: a few more tries tell them apart.
                    Look::Nobody | Look::Deaf => {
                        tries += 1;
                        if tries > 4 {
                            self.ignore(&name, owner_of(&name), Some("accepts no connection"));
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(5 * tries)).await;
                    }
                }
            }
        }
        Ok(Own::Fallback(
            "the device's shared name and this user's are both held by other users' processes"
                .into(),
        ))
    }

    /// Step 2: a free slot of the device (a system's presence), or `None`
    /// when every slot is held by processes that do not count.
    async fn slot(&mut self) -> Result<Option<Owned>, crate::engine::error::DriverError> {
        let mut said = false;
        loop {
            let mut busy = Vec::new();
            for name in slot_names(&self.key) {
                // A second try when the holder let go between the two
                // calls; still taken then, the name is bound by a socket
                // that does not listen, and skipped.
                for _ in 0..2 {
                    match bind(&name, &self.info) {
                        Bound::Mine(o) => return Ok(Some(o)),
                        Bound::Unavailable(_) => return Ok(None),
                        Bound::Taken => {}
                    }
                    match self.look(&name).await {
                        Look::Holder(p) => busy.push(p),
                        Look::Nobody => continue,
                        Look::Deaf | Look::Stranger(..) => {}
                    }
                    break;
                }
            }
            if busy.is_empty() {
                return Ok(None);
            }
            if !said {
                said = true;
                (self.say)(
                    Say::Info,
                    &format!(
                        "waiting for one of the {SLOTS} sessions to systems of device {} to end",
                        self.key.device()
                    ),
                );
            }
            if within(self.deadline, first_released(&mut busy))
                .await
                .is_none()
            {
                return Err(self.expired(&format!(
                    "{SLOTS} sessions to systems of device {}",
                    self.key.device()
                )));
            }
        }
    }

    /// The names that conflict with holding a `kind` name in `ns`, with the
    /// kind and namespace of each.
    fn conflicting(&self, kind: Kind, ns: Ns) -> Vec<(Kind, Ns, String)> {
        let mut out = Vec::new();
        for other in self.namespaces() {
            match kind {
                Kind::Device => {
                    if other != ns {
                        out.push((Kind::Device, other, super::device_name(other, &self.key)));
                    }
                }
                Kind::System => {
                    out.push((Kind::Device, other, super::device_name(other, &self.key)));
                    if other != ns {
                        out.push((Kind::System, other, own_name(&self.key, other)));
                    }
                }
            }
        }
        if kind == Kind::Device {
            for name in slot_names(&self.key) {
                out.push((Kind::System, Ns::Shared, name));
            }
        }
        out
    }

    /// Step 3: waits for lower-ranked conflicting holders; returns the first
    /// higher-ranked one (to let go for), or `None` when nothing conflicts.
    async fn clear(
        &mut self,
        kind: Kind,
        ns: Ns,
    ) -> Result<Option<Peer>, crate::engine::error::DriverError> {
        let mine = rank(kind, ns);
        'scan: loop {
            for (their_kind, their_ns, name) in self.conflicting(kind, ns) {
                match self.look(&name).await {
                    Look::Holder(mut p) => {
                        if self.granted(&mut p).await {
                            self.let_through.push(p.pid);
                            continue;
                        }
                        if p.gone {
                            continue;
                        }
                        let theirs = rank(their_kind, their_ns);
                        if theirs > mine || (theirs == mine && p.uid == 0 && self.uid != 0) {
                            return Ok(Some(p));
                        }
                        self.wait(p).await?;
                        continue 'scan;
                    }
                    Look::Stranger(pid, uid) => self.ignore(&name, Some((pid, uid)), None),
                    Look::Nobody | Look::Deaf => {}
                }
            }
            return Ok(None);
        }
    }

    /// Connects to `name` and says what is there.
    async fn look(&mut self, name: &str) -> Look {
        match reach(name) {
            Reach::Nobody | Reach::Failed => Look::Nobody,
            Reach::Full => Look::Deaf,
            Reach::Peer(_, pid, uid) if !self.counts(uid) => Look::Stranger(pid, uid),
            Reach::Peer(s, pid, uid) => match tokio::net::UnixStream::from_std(s) {
                Ok(stream) => Look::Holder(Peer {
                    stream,
                    pid,
                    uid,
                    buf: Vec::new(),
                    about: None,
                    introduced: false,
                    gone: false,
                }),
                Err(_) => Look::Nobody,
            },
        }
    }

    /// Reads who the holder is and, with inherited tokens, asks to be let
    /// through: true when it grants.
    async fn granted(&mut self, p: &mut Peer) -> bool {
        p.introduce(self.deadline).await;
        if p.gone || self.tokens.is_empty() {
            return false;
        }
        let device = self.key.device().to_string();
        p.grant(&self.tokens, &device, self.deadline).await
    }

    /// Waits for `p` to let go, saying once who it is.
    async fn wait(&mut self, mut p: Peer) -> Result<(), crate::engine::error::DriverError> {
        if p.gone {
            return Ok(());
        }
        p.introduce(self.deadline).await;
        if p.gone {
            return Ok(());
        }
        let who = p.describe();
        if self.told.insert(p.pid) {
            (self.say)(
                Say::Info,
                &format!("waiting for the lock of {}: held by {who}", self.key),
            );
        }
        match within(self.deadline, p.released()).await {
            Some(()) => Ok(()),
            None => Err(self.expired(&who)),
        }
    }

    /// Says (once per process, name and PID) that a name is ignored: held
    /// by another user's process, or bound by a socket that `deaf` says
    /// what is wrong with.
    fn ignore(&self, name: &str, owner: Option<(i32, u32)>, deaf: Option<&str>) {
        let who = match owner {
            Some((pid, uid)) => format!("PID {pid} (UID {uid})"),
            None => "a process that cannot be identified".to_string(),
        };
        let why = match deaf {
            Some(d) => format!("it is bound by {who}, which {d}: no fencekit lock"),
            None => format!(
                "it is held by {who}, another user's process (only UID {} and root count)",
                self.uid
            ),
        };
        let first = IGNORED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashSet::new)
            .insert((name.to_string(), owner.map_or(-1, |o| o.0)));
        (self.say)(
            if first { Say::Warn } else { Say::Debug },
            &format!("ignoring the lock @{name}: {why}; fencing goes on without waiting for it"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(device: &str) -> Info {
        Info::new(&DeviceKey::new(device, 623, 623), "off node02")
    }

    #[test]
    fn a_grant_needs_the_token_the_device_and_the_user() {
        let i = info("10.0.0.1");
        let ask = |t: &str, d: &str| format!("grant {t} {d}\n");
        let good = ask(&format!("ffff,{}", i.token), "10.0.0.1");
        assert_eq!(judge(&i, &good, Some(i.uid)), b"granted\n");
        assert_eq!(judge(&i, &good, Some(0)), b"granted\n");
        assert_eq!(
            judge(&i, &good, Some(i.uid + 1).filter(|u| *u != 0)),
            b"refused\n"
        );
        assert_eq!(judge(&i, &good, None), b"refused\n");
        assert_eq!(
            judge(&i, &ask(&i.token, "10.0.0.2"), Some(i.uid)),
            b"refused\n"
        );
        assert_eq!(
            judge(&i, &ask(&"0".repeat(32), "10.0.0.1"), Some(i.uid)),
            b"refused\n"
        );
        assert_eq!(judge(&i, "what\n", Some(i.uid)), b"?\n");
        assert_eq!(judge(&i, "grant\n", Some(i.uid)), b"refused\n");
    }

    #[test]
    fn ranks_put_the_device_first_and_the_shared_names_before_a_users() {
        assert!(rank(Kind::Device, Ns::Uid(0)) > rank(Kind::System, Ns::Shared));
        assert!(rank(Kind::Device, Ns::Shared) > rank(Kind::Device, Ns::Uid(5)));
        assert!(rank(Kind::System, Ns::Shared) > rank(Kind::System, Ns::Uid(5)));
        assert_eq!(
            rank(Kind::System, Ns::Uid(0)),
            rank(Kind::System, Ns::Uid(5))
        );
    }
}
