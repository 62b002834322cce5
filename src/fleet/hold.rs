//! Holds: an operator's "do not touch" on a node. While a node is held,
//! power-changing actions on it (`on`, `off`, `reboot`) are refused before
//! anything is contacted; `status`, `verify` and `check` still work. A hold
//! expires by itself (`--for` is mandatory) or is released.
//!
//! Holds are small JSON files beside the per-BMC locks
//! (`$XDG_RUNTIME_DIR/fencekit/hold` or `/run/fencekit/hold`), so they work
//! without an inventory and across fencekit processes on this host. They
//! are local to the host, like the locks. Placing one where nothing can be
//! written (a read-only root) fails with a clear error; reading where no
//! hold directory exists is simply "no holds".
//!
//! A hold names a node (an inventory name or a target URL) and, when the
//! node was resolved through an inventory, its fencing endpoints, so that
//! the same machine addressed by its BMC URL is held too.

use crate::lock::lock_dir;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One hold.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Hold {
    /// The node (inventory name, or a target URL).
    pub node: String,
    /// Its fencing endpoints (`ipmi://HOST:PORT`, …), which are held too.
    #[serde(default)]
    pub endpoints: Vec<String>,
    /// Who placed it.
    pub by: String,
    /// On which host.
    pub host: String,
    /// Why.
    pub reason: String,
    /// When it was placed (RFC 3339, UTC).
    pub since: String,
    /// When it expires (RFC 3339, UTC).
    pub until: String,
    /// When it expires, in seconds since the epoch.
    pub until_epoch: u64,
    /// A hold file that cannot be read (its path, and why): it still holds
    /// the node it is named for ([`Hold::covers`]), until it is fixed or
    /// released. Never written.
    #[serde(skip)]
    pub unreadable: Option<(PathBuf, String)>,
}

impl Hold {
    /// A hold on `node` for `duration` from now.
    pub fn new(
        node: &str,
        endpoints: Vec<String>,
        by: &str,
        reason: &str,
        duration: Duration,
    ) -> Hold {
        let now = SystemTime::now();
        let until = now + duration;
        Hold {
            node: node.to_string(),
            endpoints,
            by: by.to_string(),
            host: super::audit::host_name(),
            reason: reason.to_string(),
            since: crate::time::utc(now),
            until: crate::time::utc(until),
            // Rounded up: a hold never ends before the time it names.
            until_epoch: epoch(until + Duration::from_millis(999)),
            unreadable: None,
        }
    }

    /// The hold a file that cannot be read stands for: it never expires,
    /// and covers the node (or endpoint) the file is named for.
    fn unreadable(path: &Path, why: String) -> Hold {
        Hold {
            node: path.display().to_string(),
            endpoints: Vec::new(),
            by: "?".into(),
            host: String::new(),
            reason: why.clone(),
            since: String::new(),
            until: "it is fixed or released".into(),
            until_epoch: u64::MAX,
            unreadable: Some((path.to_path_buf(), why)),
        }
    }

    /// True once the hold has expired.
    pub fn expired(&self) -> bool {
        epoch(SystemTime::now()) >= self.until_epoch
    }

    /// True when the hold covers a node called `name` whose fencing
    /// endpoints are `endpoints`.
    pub fn covers(&self, name: &str, endpoints: &[String]) -> bool {
        if let Some((file, _)) = &self.unreadable {
            let dir = file.parent().unwrap_or(Path::new("."));
            return std::iter::once(name)
                .chain(endpoints.iter().map(String::as_str))
                .any(|n| path_in(dir, n) == *file);
        }
        self.node == name
            || endpoints
                .iter()
                .any(|e| self.endpoints.iter().any(|h| h == e) || *e == self.node)
    }

    /// Why an action on the node is refused, in words.
    pub fn refusal(&self, action: &str) -> String {
        if let Some((file, why)) = &self.unreadable {
            return format!(
                "held: cannot read hold file {} ({why}): {action} refused; fix the file, or \
                 remove it with `fencekit release NODE`",
                file.display()
            );
        }
        format!(
            "{} is held by {} until {} ({}): {action} refused; `fencekit release {}` lifts the hold",
            self.node, self.by, self.until, self.reason, self.node
        )
    }
}

fn epoch(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Where holds live.
pub fn hold_dir() -> PathBuf {
    lock_dir().join("hold")
}

/// The file of `node`'s hold in `dir`: a readable prefix and a digest of
/// the whole name, so that two names never share a file.
fn path_in(dir: &Path, node: &str) -> PathBuf {
    let stem = crate::lock::file_name(node);
    let stem = stem.trim_end_matches(".lock");
    let stem: String = stem.chars().take(100).collect();
    let digest = Sha256::digest(node.as_bytes());
    let tag: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{stem}-{tag}.json"))
}

/// Why holds could not be placed, released or read.
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    /// The hold directory cannot be created or written.
    #[error(
        "cannot record holds in {}: {source}; holds live beside fencekit's locks and need a \
         writable directory (set XDG_RUNTIME_DIR, or make /run/fencekit writable)",
        dir.display()
    )]
    Unwritable {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// A hold that cannot be encoded (never expected: plain strings).
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    /// A hold file that exists but cannot be removed.
    #[error("cannot release the hold {}: {source}", path.display())]
    Release {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A hold directory that exists but cannot be listed.
    #[error("cannot read the holds in {}: {source}", dir.display())]
    Unreadable {
        dir: PathBuf,
        source: std::io::Error,
    },
}

fn unwritable(dir: &Path, source: std::io::Error) -> HoldError {
    HoldError::Unwritable {
        dir: dir.to_path_buf(),
        source,
    }
}

/// Places (or replaces) a hold; returns its file.
pub fn place(hold: &Hold) -> Result<PathBuf, HoldError> {
    place_in(&hold_dir(), hold)
}

/// [`place`] in `dir`.
pub fn place_in(dir: &Path, hold: &Hold) -> Result<PathBuf, HoldError> {
    crate::private::create_dir(dir).map_err(|e| unwritable(dir, e))?;
    let path = path_in(dir, &hold.node);
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        std::process::id(),
        path.file_name().and_then(|n| n.to_str()).unwrap_or("hold")
    ));
    let text = serde_json::to_vec_pretty(hold)?;
    crate::private::write_new(&tmp, &text).map_err(|e| unwritable(dir, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        unwritable(dir, e)
    })?;
    Ok(path)
}

/// Releases `node`'s hold; `Ok(None)` when it was not held (or had expired).
pub fn release(node: &str) -> Result<Option<Hold>, HoldError> {
    release_in(&hold_dir(), node)
}

/// [`release`] in `dir`.
pub fn release_in(dir: &Path, node: &str) -> Result<Option<Hold>, HoldError> {
    let path = path_in(dir, node);
    let held = read(&path).filter(|h| h.node == node);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(held.filter(|h| !h.expired())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(HoldError::Release { path, source }),
    }
}

fn read(path: &Path) -> Option<Hold> {
    read_file(path).ok()
}

/// A hold file, or why it cannot be read.
fn read_file(path: &Path) -> Result<Hold, String> {
    // A hold file is small; anything larger is not one of ours.
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > 64 * 1024 {
        return Err(format!("{} bytes, too large for a hold", meta.len()));
    }
    let text = std::fs::read(path).map_err(|e| e.to_string())?;
    serde_json::from_slice(&text).map_err(|e| format!("not a hold: {e}"))
}

/// The holds in force, oldest expiry first. No hold directory is no hold;
/// an unreadable one is an error (the caller decides what that means).
pub fn active() -> Result<Vec<Hold>, HoldError> {
    active_in(&hold_dir())
}

/// [`active`] in `dir`. Expired holds are removed on the way (best effort).
pub fn active_in(dir: &Path) -> Result<Vec<Hold>, HoldError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(HoldError::Unreadable {
                dir: dir.to_path_buf(),
                source,
            })
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        // A file that cannot be read holds the node it is named for: a
        // hold must not end because its file was damaged.
        let h = read_file(&path).unwrap_or_else(|why| Hold::unreadable(&path, why));
        if h.expired() {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        out.push(h);
    }
    out.sort_by(|a, b| (a.until_epoch, &a.node).cmp(&(b.until_epoch, &b.node)));
    Ok(out)
}

/// The hold covering a node, if any (the first of `holds` that does).
pub fn covering<'a>(holds: &'a [Hold], name: &str, endpoints: &[String]) -> Option<&'a Hold> {
    Index::new(holds).covering(name, endpoints)
}

/// The holds in force, indexed by what they cover, for a plan that asks
/// once per node: a lookup per name and endpoint, not a scan of every hold
/// (100,000 nodes under `hold --all` would otherwise compare 10^10 names).
pub struct Index<'a> {
    holds: &'a [Hold],
    /// A hold's node → the first hold naming it.
    by_node: HashMap<&'a str, usize>,
    /// A hold's node or one of its endpoints → the first such hold.
    by_endpoint: HashMap<&'a str, usize>,
    /// Hold files that cannot be read (a few at most): each asked itself
    /// ([`Hold::covers`], by the file's name).
    unreadable: Vec<usize>,
}

impl<'a> Index<'a> {
    /// Indexes `holds` (in their order: the first covering hold wins).
    pub fn new(holds: &'a [Hold]) -> Index<'a> {
        let mut by_node = HashMap::new();
        let mut by_endpoint = HashMap::new();
        let mut unreadable = Vec::new();
        for (i, h) in holds.iter().enumerate() {
            if h.unreadable.is_some() {
                unreadable.push(i);
                continue;
            }
            by_node.entry(h.node.as_str()).or_insert(i);
            for key in std::iter::once(&h.node).chain(&h.endpoints) {
                by_endpoint.entry(key.as_str()).or_insert(i);
            }
        }
        Index {
            holds,
            by_node,
            by_endpoint,
            unreadable,
        }
    }

    /// The first hold that [`Hold::covers`] a node called `name` whose
    /// fencing endpoints are `endpoints`.
    pub fn covering(&self, name: &str, endpoints: &[String]) -> Option<&'a Hold> {
        let first = std::iter::once(self.by_node.get(name).copied())
            .chain(
                endpoints
                    .iter()
                    .map(|e| self.by_endpoint.get(e.as_str()).copied()),
            )
            .flatten()
            .chain(
                self.unreadable
                    .iter()
                    .copied()
                    .filter(|i| self.holds[*i].covers(name, endpoints)),
            )
            .min()?;
        Some(&self.holds[first])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_are_placed_listed_matched_and_released() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("hold");
        assert_eq!(active_in(&dir).unwrap(), vec![], "no directory, no hold");
        let h = Hold::new(
            "node03",
            vec!["ipmi://10.0.7.3:623".into()],
            "alice",
            "disk swap",
            Duration::from_secs(3600),
        );
        place_in(&dir, &h).unwrap();
        let b = Hold::new(
            "ipmi://10.0.7.9:623",
            vec![],
            "bob",
            "bios",
            Duration::from_secs(60),
        );
        place_in(&dir, &b).unwrap();
        let all = active_in(&dir).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].node, "ipmi://10.0.7.9:623", "soonest expiry first");
        assert!(covering(&all, "node03", &[]).is_some());
        assert!(
            covering(
                &all,
                "ipmi://admin@10.0.7.3",
                &["ipmi://10.0.7.3:623".into()]
            )
            .is_some(),
            "the same BMC by URL is held too"
        );
        assert!(covering(&all, "x", &["ipmi://10.0.7.9:623".into()]).is_some());
        assert!(covering(&all, "node04", &["ipmi://10.0.7.4:623".into()]).is_none());
        assert!(h.refusal("off").contains("held by alice until"));
        assert_eq!(
            release_in(&dir, "node03").unwrap().map(|h| h.by),
            Some("alice".into())
        );
        assert_eq!(release_in(&dir, "node03").unwrap(), None);
        assert_eq!(active_in(&dir).unwrap().len(), 1);
    }

    #[test]
    fn the_index_finds_the_hold_a_scan_would() {
        let h = |node: &str, eps: &[&str]| {
            let eps = eps.iter().map(|e| e.to_string()).collect();
            Hold::new(node, eps, "alice", "x", Duration::from_secs(60))
        };
        let holds = [
            h("n1", &["ipmi://b1:623"]),
            h("ipmi://b2:623", &[]),
            h("n3", &["ipmi://b3:623", "redfish://b3:443"]),
            h("n1", &["ipmi://b9:623"]),
            h("n4", &["ipmi://b1:623"]),
        ];
        let index = Index::new(&holds);
        let eps = [
            "ipmi://b1:623",
            "ipmi://b2:623",
            "redfish://b3:443",
            "ipmi://b9:623",
            "x",
        ];
        for name in ["n1", "n3", "n4", "n5", "ipmi://b2:623", "ipmi://b1:623"] {
            for a in 0..=eps.len() {
                for b in a..=eps.len() {
                    let endpoints: Vec<String> = eps[a..b].iter().map(|e| e.to_string()).collect();
                    let scan = holds.iter().position(|x| x.covers(name, &endpoints));
                    let found = index
                        .covering(name, &endpoints)
                        .map(|x| holds.iter().position(|y| std::ptr::eq(x, y)).unwrap());
                    assert_eq!(found, scan, "{name} {endpoints:?}");
                }
            }
        }
    }

    #[test]
    fn expired_holds_vanish() {
        let d = tempfile::tempdir().unwrap();
        let mut h = Hold::new("n1", vec![], "alice", "x", Duration::from_secs(60));
        h.until_epoch = epoch(SystemTime::now()) - 1;
        place_in(d.path(), &h).unwrap();
        assert_eq!(active_in(d.path()).unwrap(), vec![]);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "removed");
    }

    #[test]
    fn a_hold_file_that_does_not_parse_holds_its_node() {
        let d = tempfile::tempdir().unwrap();
        let h = Hold::new("node07", vec![], "alice", "x", Duration::from_secs(60));
        let path = place_in(d.path(), &h).unwrap();
        std::fs::write(&path, b"{\"node\": \"node07\", trunc").unwrap();
        let all = active_in(d.path()).unwrap();
        assert_eq!(all.len(), 1, "{all:?}");
        let held = covering(&all, "node07", &[]).expect("still held");
        let why = held.refusal("off");
        assert!(
            why.starts_with(&format!("held: cannot read hold file {}", path.display()))
                && why.contains("off refused"),
            "{why}"
        );
        assert!(covering(&all, "node08", &[]).is_none(), "only its node");
        // Named for an endpoint: that endpoint is held.
        let ep = Hold::new(
            "ipmi://10.0.7.9:623",
            vec![],
            "bob",
            "y",
            Duration::from_secs(60),
        );
        let ep_path = place_in(d.path(), &ep).unwrap();
        std::fs::write(&ep_path, b"").unwrap();
        let all = active_in(d.path()).unwrap();
        assert!(covering(&all, "node09", &["ipmi://10.0.7.9:623".into()]).is_some());
        // Releasing removes the damaged file.
        assert_eq!(release_in(d.path(), "node07").unwrap(), None);
        assert!(covering(&active_in(d.path()).unwrap(), "node07", &[]).is_none());
    }

    #[test]
    fn names_that_sanitise_alike_keep_separate_files() {
        let d = tempfile::tempdir().unwrap();
        assert_ne!(path_in(d.path(), "a/b"), path_in(d.path(), "a_b"));
    }

    #[test]
    fn an_unwritable_place_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let h = Hold::new("n1", vec![], "alice", "x", Duration::from_secs(60));
        let e = place_in(&file.join("hold"), &h).unwrap_err();
        assert!(matches!(&e, HoldError::Unwritable { dir, .. } if *dir == file.join("hold")));
        let e = e.to_string();
        assert!(
            e.contains("cannot record holds in") && e.contains("writable"),
            "{e}"
        );
        assert!(
            active_in(&file.join("hold")).is_err()
                || active_in(&file.join("hold")).unwrap().is_empty()
        );
    }
}
