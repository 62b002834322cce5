//! What `check` saw of a level beyond "would it work": the facts a working
//! fence path is recorded by (`check --record`) and compared with later
//! (drift, [`crate::fleet::drift`]). One section per platform, declared
//! by the platform ([`crate::platform::facts`]); the common part (the
//! machine's identity) is the row's [`Identity`](crate::engine::identity::Identity),
//! and the node's own address is probed here.
//!
//! Everything is read in the session `check` opens anyway: no extra
//! session, no power command.

use super::decide::Probe;
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use crate::platform::facts::Facts;

/// Whether the node's own address answered on its probe ports (its
/// independent witness for `verify`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeProbe {
    /// The node.
    pub node: String,
    /// The address probed.
    pub address: String,
    /// The best answer over the ports: `accepted`, `reset`,
    /// `unreachable`, `silent` or `failed`.
    pub probe: String,
}

impl NodeProbe {
    /// True when something answers at the address (accepted or reset).
    pub fn answers(&self) -> bool {
        matches!(self.probe.as_str(), "accepted" | "reset")
    }
}

/// The word of one probe result.
fn word(p: &Probe) -> &'static str {
    match p {
        Probe::Accepted => "accepted",
        Probe::Reset => "reset",
        Probe::Unreachable => "unreachable",
        Probe::Silent => "silent",
        Probe::Failed(_) => "failed",
    }
}

/// Probes the node's address on each of its probe ports (one TCP connect
/// each, at once) and keeps the best answer; `None` for a node without an
/// address or probe ports.
pub async fn probe_node(
    node: &str,
    address: Option<&str>,
    ports: &[u16],
    timeout: Duration,
) -> Option<NodeProbe> {
    let address = address?;
    if ports.is_empty() {
        return None;
    }
    let mut set = tokio::task::JoinSet::new();
    for &port in ports {
        let host = address.to_string();
        set.spawn(async move { super::evidence::probe(&host, port, timeout).await });
    }
    let rank = |w: &str| match w {
        "accepted" => 4,
        "reset" => 3,
        "unreachable" => 2,
        "silent" => 1,
        _ => 0,
    };
    let mut best = "failed";
    while let Some(r) = set.join_next().await {
        if let Ok(p) = r {
            let w = word(&p);
            if rank(w) > rank(best) {
                best = w;
            }
        }
    }
    Some(NodeProbe {
        node: node.to_string(),
        address: address.to_string(),
        probe: best.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_probe_keeps_the_best_answer_over_the_ports() {
        let open = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = open.local_addr().unwrap().port();
        // A port nobody listens on answers with an RST on loopback.
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let t = Duration::from_secs(2);
        let p = probe_node("n", Some("127.0.0.1"), &[closed, port], t)
            .await
            .unwrap();
        assert_eq!(p.probe, "accepted");
        assert!(p.answers());
        let p = probe_node("n", Some("127.0.0.1"), &[closed], t)
            .await
            .unwrap();
        assert_eq!(p.probe, "reset");
        assert!(probe_node("n", None, &[port], t).await.is_none());
        assert!(probe_node("n", Some("127.0.0.1"), &[], t).await.is_none());
    }
}
