//! A connected UDP socket to one device, with bounded waits and counters:
//! the transport IPMI (RMCP/RMCP+) and SNMP share.
//!
//! A connected socket only delivers datagrams from the device's address and
//! port, so replies from anywhere else never reach the session layer above.
//! Resolution is bounded by the deadline too. The transport decides nothing
//! about content: each protocol's session says what is its own.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;

/// What a bounded receive found.
#[derive(Debug)]
pub enum Received {
    /// A datagram from the device's address.
    Datagram(Vec<u8>),
    /// Nothing before the wait ended.
    Nothing,
    /// The network reported the port unreachable (ICMP; `ECONNREFUSED` on
    /// the connected socket). A protocol whose call ends with only this
    /// marks its error so ([`DriverError::with_port_unreachable`]).
    Refused,
}

/// A socket connected to one device.
pub struct Transport {
    sock: UdpSocket,
    peer: SocketAddr,
    buf: Vec<u8>,
    /// Datagrams sent, retransmissions included.
    pub sent: u32,
    /// Datagrams received from the device's address.
    pub received: u32,
    /// ICMP port-unreachable reports for this socket (a receive refused).
    pub refused: u32,
}

impl Transport {
    /// Resolves `host` and connects a UDP socket to it, within `deadline`.
    /// Datagrams longer than `max_datagram` are truncated (each protocol
    /// sizes its buffer: a fleet holds one per device).
    pub async fn connect(
        host: &str,
        port: u16,
        deadline: Option<Instant>,
        max_datagram: usize,
    ) -> Result<Self, DriverError> {
        let unreachable =
            |m: String| DriverError::new(ErrorKind::Unreachable, Stage::Authenticate, m);
        let lookup = tokio::net::lookup_host((host, port));
        let found = match deadline {
            Some(d) => tokio::time::timeout_at(d.into(), lookup)
                .await
                .map_err(|_| {
                    DriverError::new(
                        ErrorKind::Timeout,
                        Stage::Authenticate,
                        format!("resolving {host} took longer than the deadline"),
                    )
                })?,
            None => lookup.await,
        };
        let peer = found
            .map_err(|e| unreachable(format!("cannot resolve {host}: {e}")))?
            .next()
            .ok_or_else(|| unreachable(format!("{host} resolves to no address")))?;
        let local = if peer.is_ipv4() {
            SocketAddr::from(([0, 0, 0, 0], 0))
        } else {
            SocketAddr::from(([0u16; 8], 0))
        };
        let sock = UdpSocket::bind(local)
            .await
            .map_err(|e| unreachable(format!("cannot open a UDP socket: {e}")))?;
        sock.connect(peer)
            .await
            .map_err(|e| unreachable(format!("cannot reach {peer}: {e}")))?;
        Ok(Transport {
            sock,
            peer,
            buf: vec![0; max_datagram],
            sent: 0,
            received: 0,
            refused: 0,
        })
    }

    /// The device's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Sends one datagram. Send errors (e.g. an earlier ICMP error surfacing)
    /// are reported as `Refused` by the next receive, not here.
    pub async fn send(&mut self, d: &[u8]) {
        self.sent += 1;
        let _ = self.sock.send(d).await;
    }

    /// Waits for one datagram until `until`.
    pub async fn recv_until(&mut self, until: Instant) -> Received {
        let now = Instant::now();
        if until <= now {
            return Received::Nothing;
        }
        self.recv_for(until - now).await
    }

    /// Waits for one datagram for at most `wait`.
    pub async fn recv_for(&mut self, wait: Duration) -> Received {
        match tokio::time::timeout(wait, self.sock.recv(&mut self.buf)).await {
            Ok(Ok(n)) => {
                self.received += 1;
                Received::Datagram(self.buf[..n].to_vec())
            }
            Ok(Err(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
                self.refused += 1;
                Received::Refused
            }
            Ok(Err(_)) | Err(_) => Received::Nothing,
        }
    }
}
