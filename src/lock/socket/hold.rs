//! Holding a lock name: binding it in the abstract namespace and serving
//! it until dropped. Every waiter is told in one line who holds it (PID,
//! since when, what it does), may ask to be let through with a grant token,
//! and is kept open until the holder lets go — then the kernel closes it,
//! which is the waiter's event. Which names to bind, and when, is
//! [`super`]'s.

use crate::lock::{same_token, Info};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A bound name, served until dropped.
#[derive(Debug)]
pub(in crate::lock) struct Owned {
    pub(super) name: String,
    pub(super) task: tokio::task::JoinHandle<()>,
}

impl Drop for Owned {
    fn drop(&mut self) {
        // The listener and every connection to it go with the task.
        self.task.abort();
    }
}

pub(super) enum Bound {
    Mine(Owned),
    Taken,
    Unavailable(std::io::Error),
}

/// Binds `name` and starts serving it.
pub(super) fn bind(name: &str, info: &Arc<Info>) -> Bound {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::DeviceKey;

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
}
