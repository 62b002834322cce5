//! Looking at a lock name held by someone else: connecting to it (one
//! reused non-blocking socket for the names nobody holds), reading the
//! holder's credentials and its line, asking for a grant, waiting for it
//! to let go, and finding the owner of a name bound by a socket that
//! accepts no connection (`/proc`). What to make of a holder is
//! [`super`]'s.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a waiter waits for a holder to say who it is (or to answer a
/// grant request) before going on without the answer.
const ANSWER: Duration = Duration::from_millis(300);

/// What a connection to a name found.
pub(super) enum Reach {
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
pub(super) fn reach(name: &str) -> Reach {
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
pub(super) struct Peer {
    pub(super) stream: tokio::net::UnixStream,
    pub(super) pid: i32,
    pub(super) uid: u32,
    pub(super) buf: Vec<u8>,
    /// `since T: what`, once it said so.
    pub(super) about: Option<String>,
    /// Its line was waited for (said or not).
    pub(super) introduced: bool,
    /// It let go (its end closed).
    pub(super) gone: bool,
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
    pub(super) async fn introduce(&mut self, deadline: Option<Instant>) {
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
    pub(super) async fn grant(
        &mut self,
        tokens: &[String],
        device: &str,
        deadline: Option<Instant>,
    ) -> bool {
        let ask = format!("grant {} {device}\n", tokens.join(","));
        if self.stream.write_all(ask.as_bytes()).await.is_err() {
            self.gone = true;
            return false;
        }
        matches!(self.line(answer_by(deadline)).await, Line::Text(l) if l == "granted")
    }

    /// Returns when the holder lets go (its end closes).
    pub(super) async fn released(&mut self) {
        let mut chunk = [0u8; 256];
        while !self.gone {
            match self.stream.read(&mut chunk).await {
                Ok(0) | Err(_) => self.gone = true,
                Ok(_) => {}
            }
        }
    }

    pub(super) fn describe(&self) -> String {
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
pub(super) async fn within<T>(
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
pub(super) async fn first_released(peers: &mut [Peer]) {
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
pub(super) fn owner_of(name: &str) -> Option<(i32, u32)> {
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
