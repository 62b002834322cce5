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
//!
//! The parts: holding a name (`hold`: binding and serving it), looking at
//! a name someone else holds (`look`: connecting, the holder's line,
//! grants, waiting for it to let go) and, here, which names to take and
//! the taking itself.

use super::{busy, DeviceKey, Info, Ns, Say, TargetLock};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod hold;
mod look;

pub(super) use hold::Owned;
use hold::{bind, Bound};
use look::{first_released, owner_of, reach, within, Peer, Reach};

/// How many system holders one device can have at once (between
/// processes). Every whole-device locker looks at each slot, so this is
/// also what a whole-device lock costs: one refused connection per slot.
pub(super) const SLOTS: usize = 8;

/// What the socket lock came to.
pub(super) enum Got {
    /// Held (or granted).
    Lock(TargetLock),
    /// No socket lock can be had here; why.
    Fallback(String),
}

// --------------------------------------------------------------- names ----

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
