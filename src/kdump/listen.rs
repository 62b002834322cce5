//! Listening for fence_kdump messages: one UDP socket, every datagram
//! decoded and handed to every waiter with its sender's address; and the
//! wait for one node's dump ([`wait_for_dump`]).
//!
//! One socket serves a whole run (nodes fenced in parallel share the port,
//! as one fence_kdump listener would); each waiter keeps only what comes
//! from its node's addresses, the way fence_kdump compares the sender with
//! the node's resolved address.

use super::codec::{decode, Malformed, Message};
use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;
use tokio::net::UdpSocket;
use tokio::sync::broadcast;
// tokio's clock (engine::clock), so that waits can be tested paused; the
// same instants as std's when the clock runs.
use tokio::time::Instant;

/// One datagram received on the kdump port.
#[derive(Clone, Debug)]
pub struct Heard {
    /// The sender (IPv4-mapped IPv6 addresses are given as IPv4).
    pub from: IpAddr,
    /// When it arrived.
    pub at: Instant,
    /// What it said.
    pub message: Result<Message, Malformed>,
}

/// A bound kdump socket and the task that reads it; stops when dropped.
pub struct Listener {
    port: u16,
    tx: broadcast::Sender<Heard>,
    task: tokio::task::JoinHandle<()>,
}

/// Datagrams kept for a waiter that is behind (fence_kdump_send sends one
/// per node every few seconds: a waiter is never this far behind for long).
const BACKLOG: usize = 256;

/// The kdump port could not be bound (in use, or below 1024 without the
/// privilege).
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on UDP port {port}: {source}")]
pub struct BindError {
    pub port: u16,
    pub source: std::io::Error,
}

impl Listener {
    /// Binds `port` on every address: IPv6 `[::]` (which also receives IPv4
    /// on Linux's default dual-stack setting), or `0.0.0.0` where IPv6 is
    /// unavailable. Must run inside a tokio runtime.
    pub async fn bind(port: u16) -> Result<Listener, BindError> {
        match Self::bind_addr(SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port)).await {
            Ok(l) => Ok(l),
            Err(_) => Self::bind_addr(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port))
                .await
                .map_err(|source| BindError { port, source }),
        }
    }

    /// Binds exactly `addr` (tests bind loopback).
    pub async fn bind_addr(addr: SocketAddr) -> std::io::Result<Listener> {
        let socket = UdpSocket::bind(addr).await?;
        let port = socket.local_addr()?.port();
        let (tx, _) = broadcast::channel(BACKLOG);
        let sender = tx.clone();
        let task = tokio::spawn(async move {
            // One byte more than a message, so that a longer datagram is
            // seen as too long rather than cut to a valid prefix.
            let mut buf = [0u8; super::codec::MESSAGE_LEN + 1];
            loop {
                match socket.recv_from(&mut buf).await {
                    Ok((n, from)) => {
                        let heard = Heard {
                            from: from.ip().to_canonical(),
                            at: Instant::now(),
                            message: decode(&buf[..n]),
                        };
                        tracing::debug!(from = %heard.from, message = ?heard.message, "kdump datagram");
                        // No receiver is not an error: nobody waits right now.
                        let _ = sender.send(heard);
                    }
                    Err(e) => {
                        // ICMP errors surface here on some systems; keep listening.
                        tracing::debug!("kdump socket: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            }
        });
        Ok(Listener { port, tx, task })
    }

    /// The port actually bound.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A receiver of every datagram from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Heard> {
        self.tx.subscribe()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How a wait for a dump ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// No valid message from the node before the limit.
    NoMessage,
    /// Messages came, then stopped for the quiet period: the kdump kernel
    /// is done (the node reboots or powers off by itself after a dump).
    Quiet,
    /// Messages were still coming when the limit was reached.
    Limit,
}

/// The result of [`wait_for_dump`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DumpWait {
    /// Valid messages received from the node.
    pub messages: u32,
    /// How it ended.
    pub ended: Ended,
}

/// Waits until the node's kdump is done: for the first valid message from
/// one of `from` until `limit`, then for as long as messages keep coming
/// (each one gives `quiet` more time), never past `limit`. Messages from
/// other addresses and malformed ones are ignored. `first` is called once,
/// when the first valid message arrives, with its sender.
pub async fn wait_for_dump(
    rx: &mut broadcast::Receiver<Heard>,
    from: &HashSet<IpAddr>,
    limit: Instant,
    quiet: Duration,
    first: &mut dyn FnMut(IpAddr),
) -> DumpWait {
    let mut messages = 0u32;
    let mut until = limit;
    loop {
        let heard = tokio::select! {
            r = rx.recv() => r,
            _ = tokio::time::sleep_until(until) => {
                let ended = match messages {
                    0 => Ended::NoMessage,
                    _ if until < limit => Ended::Quiet,
                    _ => Ended::Limit,
                };
                return DumpWait { messages, ended };
            }
        };
        let heard = match heard {
            Ok(h) => h,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            // The listener is gone: nothing more will come; wait out the time.
            Err(broadcast::error::RecvError::Closed) => {
                tokio::time::sleep_until(until).await;
                continue;
            }
        };
        if !from.contains(&heard.from) || heard.message.is_err() {
            continue;
        }
        messages += 1;
        if messages == 1 {
            first(heard.from);
        }
        until = (heard.at + quiet).min(limit);
    }
}

#[cfg(test)]
mod tests {
    use super::super::codec::encode_v1;
    use super::*;

    async fn send_from(to: u16, bytes: &[u8]) {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        s.send_to(bytes, ("127.0.0.1", to)).await.unwrap();
    }

    fn node() -> HashSet<IpAddr> {
        [IpAddr::V4(Ipv4Addr::LOCALHOST)].into_iter().collect()
    }

    #[tokio::test]
    async fn a_port_in_use_is_a_bind_error_naming_it() {
        let first = Listener::bind(0).await.unwrap();
        let port = first.port();
        let e = match Listener::bind(port).await {
            Err(e) => e,
            Ok(_) => panic!("bound port {port} twice"),
        };
        assert_eq!(e.port, port);
        assert_eq!(e.source.kind(), std::io::ErrorKind::AddrInUse);
        assert!(e
            .to_string()
            .starts_with(&format!("cannot listen on UDP port {port}: ")));
    }

    #[tokio::test]
    async fn messages_from_the_node_extend_the_wait_until_they_stop() {
        let l = Listener::bind_addr("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let mut rx = l.subscribe();
        let port = l.port();
        let sender = tokio::spawn(async move {
            for _ in 0..3 {
                send_from(port, &encode_v1()).await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let began = Instant::now();
        let mut seen = None;
        let w = wait_for_dump(
            &mut rx,
            &node(),
            began + Duration::from_secs(10),
            Duration::from_millis(400),
            &mut |a| seen = Some(a),
        )
        .await;
        sender.await.unwrap();
        assert_eq!(
            w,
            DumpWait {
                messages: 3,
                ended: Ended::Quiet
            }
        );
        assert_eq!(seen, Some(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        let took = began.elapsed();
        assert!(
            took >= Duration::from_millis(550) && took < Duration::from_secs(5),
            "{took:?}"
        );
    }

    #[tokio::test]
    async fn strangers_and_garbage_do_not_count() {
        let l = Listener::bind_addr("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let mut rx = l.subscribe();
        send_from(l.port(), b"not a kdump message").await;
        send_from(l.port(), &[0u8; 8]).await;
        let other: HashSet<IpAddr> = ["10.9.9.9".parse().unwrap()].into_iter().collect();
        let mut never = |_| panic!("no valid message from the node");
        let fut = wait_for_dump(
            &mut rx,
            &other,
            Instant::now() + Duration::from_millis(300),
            Duration::from_millis(100),
            &mut never,
        );
        send_from(l.port(), &encode_v1()).await;
        assert_eq!(
            fut.await,
            DumpWait {
                messages: 0,
                ended: Ended::NoMessage
            }
        );
    }

    #[tokio::test]
    async fn the_limit_bounds_a_dump_that_keeps_reporting() {
        let l = Listener::bind_addr("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let mut rx = l.subscribe();
        let port = l.port();
        let sender = tokio::spawn(async move {
            for _ in 0..20 {
                send_from(port, &encode_v1()).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        let began = Instant::now();
        let w = wait_for_dump(
            &mut rx,
            &node(),
            began + Duration::from_millis(300),
            Duration::from_secs(5),
            &mut |_| {},
        )
        .await;
        sender.abort();
        assert_eq!(w.ended, Ended::Limit);
        assert!(w.messages >= 2, "{w:?}");
        assert!(began.elapsed() < Duration::from_secs(2));
    }
}
