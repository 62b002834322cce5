//! A simulated host behind a lab BMC: the node's own address as `verify`
//! probes it, looking on the wire the way a real machine does.
//!
//! * **Up** (real power on, booted): a listener that accepts connections.
//! * **Powered off, or still booting**: *silent* — SYNs are dropped, so a
//!   client sees neither a SYN-ACK nor an RST and its connect times out, as
//!   with a dead machine on a real network. Done unprivileged: the same
//!   listening socket keeps the port, with a classic BPF socket filter that
//!   drops every packet attached (`SO_ATTACH_FILTER`; the kernel runs a
//!   TCP socket's filter before it handles a SYN, `tcp_filter()` in
//!   `tcp_v4_rcv`), detached again at power-on.
//! * **Kernel alive, service stopped** (knob `host-rst`): the port is held
//!   by a socket that is bound but not listening, so the kernel answers
//!   every SYN with an RST — what a live node whose kubelet or sshd died
//!   looks like.
//! * **Alive whatever the power** (knob `host-alive`): accepts even when the
//!   chassis is off — a BMC wired to another machine, or a lying one that
//!   also cut the wrong power.
//!
//! A lying BMC ([`super::bmc::Faults::lying`]) never changes the real power,
//! so its host keeps answering while the BMC reports off.
//!
//! Each host binds its own address (`127.1.x.y`, [`host_ip`]); port 0 gives
//! each host a free port of its own, so several labs can run at once.

use super::bmc::Bmc;
use socket2::{Domain, SockFilter, SockRef, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

/// How often the host looks at its power.
const TICK: Duration = Duration::from_millis(50);

/// `BPF_RET | BPF_K` with `k = 0`: accept no byte of the packet, i.e. drop it.
const DROP_ALL: [SockFilter; 1] = [SockFilter::new(0x06, 0, 0, 0)];

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

/// What the host's address does on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// Accepts connections.
    Accepting,
    /// Answers SYNs with RST (kernel up, nothing listening).
    Reset,
    /// Drops SYNs (no machine there).
    Silent,
}

/// The socket holding the host's port, in one of the [`Wire`] modes.
enum Held {
    /// Listening; `filtered` while silent.
    Listening { listener: TcpListener, silent: bool },
    /// Bound, not listening.
    Bound(Socket),
}

fn new_socket(addr: SocketAddr) -> io::Result<Socket> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    // Lets a new socket take the port while the previous one (bound, not
    // listening) still holds it, so the port is never free for others.
    s.set_reuse_address(true)?;
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    Ok(s)
}

/// Whether this process may make a silent host: a socket filter on a TCP
/// socket (some kernels and sandboxes refuse it to an unprivileged user,
/// with `EPERM`). Nothing is bound.
pub fn silent_hosts_permitted() -> io::Result<()> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    s.attach_filter(&DROP_ALL)
}

fn listen(addr: SocketAddr, silent: bool) -> io::Result<Held> {
    let s = new_socket(addr)?;
    if silent {
        // Filter before listening: no SYN is ever answered.
        s.attach_filter(&DROP_ALL)?;
    }
    s.listen(128)?;
    let listener = TcpListener::from_std(s.into())?;
    Ok(Held::Listening { listener, silent })
}

impl Held {
    /// Switches to `want`, keeping the port held throughout.
    fn become_(self, want: Wire, addr: SocketAddr) -> io::Result<Held> {
        match (self, want) {
            (Held::Listening { listener, silent }, Wire::Accepting | Wire::Silent) => {
                let now_silent = want == Wire::Silent;
                if silent != now_silent {
                    let r = SockRef::from(&listener);
                    if now_silent {
                        r.attach_filter(&DROP_ALL)?;
                    } else {
                        r.detach_filter()?;
                    }
                }
                Ok(Held::Listening {
                    listener,
                    silent: now_silent,
                })
            }
            (held @ Held::Bound(_), Wire::Reset) => Ok(held),
            (old, Wire::Reset) => {
                let s = new_socket(addr)?;
                drop(old);
                Ok(Held::Bound(s))
            }
            (old, want) => {
                let new = listen(addr, want == Wire::Silent)?;
                drop(old);
                Ok(new)
            }
        }
    }
}

/// What the host should look like now.
fn wanted(bmc: &Bmc, up_since: Option<Instant>, boot_delay: Duration) -> Wire {
    let (alive, rst) = {
        let mut c = bmc.lock();
        let booted = up_since.is_some_and(|t| t.elapsed() >= boot_delay);
        (
            c.faults.host_alive || (c.truly_on() && booted),
            c.faults.host_rst,
        )
    };
    match (alive, rst) {
        (false, _) => Wire::Silent,
        (true, true) => Wire::Reset,
        (true, false) => Wire::Accepting,
    }
}

impl LabHost {
    /// Starts the host of `bmc` at `addr` (loopback only; port 0 picks a
    /// free one). A bind that fails names the address.
    pub async fn start(addr: SocketAddr, bmc: Bmc, boot_delay: Duration) -> io::Result<LabHost> {
        if !addr.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the lab only binds loopback addresses",
            ));
        }
        // Already up at start: no boot delay.
        let up_since = bmc.truly_on().then(|| Instant::now() - boot_delay);
        let first = wanted(&bmc, up_since, boot_delay);
        let held = match first {
            Wire::Reset => new_socket(addr).map(Held::Bound),
            w => listen(addr, w == Wire::Silent),
        }
        .map_err(|e| {
            let hint = if e.kind() == io::ErrorKind::AddrInUse && addr.port() != 0 {
                format!(
                    " (another lab with --hosts {}? without a port each host gets a free one)",
                    addr.port()
                )
            } else if e.kind() == io::ErrorKind::PermissionDenied {
                " (a silent host is a socket filter, which this system refuses to this user: \
                 run the lab as root)"
                    .to_string()
            } else {
                String::new()
            };
            io::Error::new(
                e.kind(),
                format!("cannot simulate a host on {addr}: {e}{hint}"),
            )
        })?;
        let addr = match &held {
            Held::Listening { listener, .. } => listener.local_addr()?,
            Held::Bound(s) => s
                .local_addr()?
                .as_socket()
                .ok_or_else(|| io::Error::other("the host socket has no address"))?,
        };
        let task = tokio::spawn(run(addr, bmc, boot_delay, held, up_since));
        Ok(LabHost { addr, task })
    }
}

impl Drop for LabHost {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run(
    addr: SocketAddr,
    bmc: Bmc,
    boot_delay: Duration,
    held: Held,
    mut up_since: Option<Instant>,
) {
    let mut held = Some(held);
    loop {
        if bmc.truly_on() {
            up_since.get_or_insert_with(Instant::now);
        } else {
            up_since = None;
        }
        let want = wanted(&bmc, up_since, boot_delay);
        if let Some(h) = held.take() {
            held = match h.become_(want, addr) {
                Ok(h) => Some(h),
                Err(e) => {
                    tracing::warn!(%addr, error = %e, "simulated host cannot change state");
                    None
                }
            };
        }
        match &held {
            Some(Held::Listening { listener, .. }) => {
                // Accepted and closed at once; connections completed before
                // the host went silent are dropped too (a dead machine keeps none).
                let deadline = tokio::time::Instant::now() + TICK;
                while let Ok(Ok((conn, _))) =
                    tokio::time::timeout_at(deadline, listener.accept()).await
                {
                    drop(conn);
                }
            }
            _ => tokio::time::sleep(TICK).await,
        }
        if held.is_none() {
            // Try again from scratch on the next tick.
            match listen(addr, want == Wire::Silent) {
                Ok(h) => held = Some(h),
                Err(_) => tokio::time::sleep(TICK).await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::verify::{probe, Probe};
    use crate::lab::bmc::Faults;

    /// A free address for one test: its own 127.1.250.x, port 0.
    fn addr(last: u8) -> SocketAddr {
        SocketAddr::from(([127, 1, 250, last], 0))
    }

    async fn settle() {
        tokio::time::sleep(TICK * 3).await;
    }

    async fn seen(h: &LabHost) -> Probe {
        probe(
            &h.addr.ip().to_string(),
            h.addr.port(),
            Duration::from_millis(300),
        )
        .await
    }

    #[tokio::test]
    async fn off_is_silent_on_accepts_and_a_stopped_service_resets() {
        let bmc = Bmc::new(true, Faults::default());
        let h = LabHost::start(addr(1), bmc.clone(), Duration::from_millis(100))
            .await
            .unwrap();
        assert_ne!(h.addr.port(), 0, "port 0 picks a free port");
        assert_eq!(seen(&h).await, Probe::Accepted);
        bmc.set_on(false);
        settle().await;
        let t = Instant::now();
        assert_eq!(
            seen(&h).await,
            Probe::Silent,
            "a dead host neither accepts nor resets"
        );
        assert!(
            t.elapsed() >= Duration::from_millis(290),
            "it waited for the timeout"
        );
        // Booting: still silent until the boot delay passed.
        bmc.set_on(true);
        tokio::time::sleep(TICK).await;
        assert_eq!(seen(&h).await, Probe::Silent);
        settle().await;
        assert_eq!(seen(&h).await, Probe::Accepted);
        // The kernel is up but the service is not.
        bmc.lock().faults.host_rst = true;
        settle().await;
        assert_eq!(seen(&h).await, Probe::Reset);
        bmc.set_on(false);
        settle().await;
        assert_eq!(seen(&h).await, Probe::Silent);
        bmc.lock().faults.host_rst = false;
        bmc.set_on(true);
        tokio::time::sleep(Duration::from_millis(100) + TICK * 3).await;
        assert_eq!(seen(&h).await, Probe::Accepted);
    }

    #[tokio::test]
    async fn a_host_alive_knob_answers_with_the_power_off() {
        let bmc = Bmc::new(
            false,
            Faults {
                host_alive: true,
                ..Faults::default()
            },
        );
        let h = LabHost::start(addr(2), bmc.clone(), Duration::ZERO)
            .await
            .unwrap();
        assert!(!bmc.truly_on());
        assert_eq!(seen(&h).await, Probe::Accepted);
    }

    #[tokio::test]
    async fn two_hosts_on_one_address_get_their_own_ports_and_a_taken_port_is_named() {
        let a = LabHost::start(addr(3), Bmc::new(true, Faults::default()), Duration::ZERO)
            .await
            .unwrap();
        let b = LabHost::start(addr(3), Bmc::new(true, Faults::default()), Duration::ZERO)
            .await
            .unwrap();
        assert_ne!(a.addr, b.addr);
        let e = LabHost::start(a.addr, Bmc::new(true, Faults::default()), Duration::ZERO)
            .await
            .err()
            .expect("the port is taken");
        let msg = e.to_string();
        assert!(msg.contains(&a.addr.to_string()), "{msg}");
        assert!(msg.contains("another lab"), "{msg}");
    }
}
