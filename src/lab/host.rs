//! A simulated host behind a lab BMC: a TCP listener on the node's own
//! address that exists only while the node's *real* power is on, and comes
//! back a boot delay after power returns. `verify` probes it; a lying BMC
//! (see [`super::bmc::Faults::lying`]) leaves it running while reporting off.

use super::bmc::Bmc;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

/// How often the host looks at its power.
const TICK: Duration = Duration::from_millis(50);

/// A running simulated host; stops when dropped.
pub struct LabHost {
    /// Address and port it answers on while up.
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

/// The address of node `i`'s host: 127.1.(i / 250).(i % 250 + 1).
pub fn host_ip(i: u32) -> std::net::IpAddr {
    std::net::IpAddr::from([127, 1, (i / 250) as u8, (i % 250 + 1) as u8])
}

impl LabHost {
    /// Starts the host of `bmc` at `addr` (loopback only).
    pub async fn start(addr: SocketAddr, bmc: Bmc, boot_delay: Duration) -> io::Result<LabHost> {
        if !addr.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the lab only binds loopback addresses",
            ));
        }
        // Bind once now so that a bad address fails at start, not silently later.
        let first = if bmc.truly_on() {
            Some(TcpListener::bind(addr).await?)
        } else {
            let probe = TcpListener::bind(addr).await?;
            drop(probe);
            None
        };
        let task = tokio::spawn(run(addr, bmc, boot_delay, first));
        Ok(LabHost { addr, task })
    }
}

impl Drop for LabHost {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run(addr: SocketAddr, bmc: Bmc, boot_delay: Duration, first: Option<TcpListener>) {
    let mut up_since = first.as_ref().map(|_| Instant::now() - boot_delay);
    let mut listener = first;
    loop {
        if bmc.truly_on() {
            up_since.get_or_insert_with(Instant::now);
        } else {
            up_since = None;
        }
        let should_listen = up_since.is_some_and(|t| t.elapsed() >= boot_delay);
        if !should_listen {
            listener = None;
        } else if listener.is_none() {
            listener = TcpListener::bind(addr).await.ok();
        }
        match &listener {
            Some(l) => {
                if let Ok(Ok((conn, _))) = tokio::time::timeout(TICK, l.accept()).await {
                    drop(conn);
                }
            }
            None => tokio::time::sleep(TICK).await,
        }
    }
}
