//! Starting several simulated BMCs at once, in-process.

use super::bmc::{Bmc, Faults};
use super::ipmi::{LabIpmi, Offer};
use std::net::{IpAddr, SocketAddr};

/// What every node of a lab shares.
#[derive(Clone, Debug)]
pub struct LabSpec {
    /// Address to bind (loopback).
    pub bind: IpAddr,
    /// First port (node i gets base + i); 0 picks free ports.
    pub port_base: u16,
    /// Number of nodes.
    pub nodes: u32,
    /// Accepted user name.
    pub username: String,
    /// Accepted password.
    pub password: String,
    /// Initial power.
    pub power_on: bool,
    /// Cipher suites offered.
    pub suites: Vec<u8>,
    /// Fault knobs for every node.
    pub faults: Faults,
}

impl Default for LabSpec {
    fn default() -> Self {
        LabSpec {
            bind: IpAddr::from([127, 0, 0, 1]),
            port_base: 0,
            nodes: 1,
            username: "admin".into(),
            password: "lab".into(),
            power_on: true,
            suites: vec![3, 17],
            faults: Faults::default(),
        }
    }
}

/// One running simulated node.
pub struct LabNode {
    /// Its name (node01, node02, …).
    pub name: String,
    /// Its IPMI BMC.
    pub ipmi: LabIpmi,
}

impl LabNode {
    /// The BMC's chassis (power state, counters, faults).
    pub fn bmc(&self) -> &Bmc {
        &self.ipmi.bmc
    }

    /// The IPMI endpoint.
    pub fn addr(&self) -> SocketAddr {
        self.ipmi.addr
    }
}

/// A running lab: its nodes stop when it is dropped.
pub struct Lab {
    /// The nodes, in order.
    pub nodes: Vec<LabNode>,
}

/// Node names are zero-padded to the width of the count (at least 2).
pub fn node_name(i: u32, count: u32) -> String {
    let width = count.to_string().len().max(2);
    format!("node{:0width$}", i + 1)
}

impl Lab {
    /// Starts `spec.nodes` BMCs. Must run inside a tokio runtime.
    pub async fn start(spec: &LabSpec) -> std::io::Result<Lab> {
        if !spec.bind.is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the lab only binds loopback addresses (127.0.0.0/8, ::1)",
            ));
        }
        let mut nodes = Vec::with_capacity(spec.nodes as usize);
        for i in 0..spec.nodes {
            let port = if spec.port_base == 0 {
                0
            } else {
                spec.port_base.checked_add(i as u16).ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::InvalidInput, "port range overflows")
                })?
            };
            let mut guid = [0u8; 16];
            guid[..4].copy_from_slice(&(i + 1).to_le_bytes());
            guid[15] = 0xfe;
            let offer = Offer {
                username: spec.username.clone(),
                password: spec.password.as_bytes().to_vec(),
                suites: spec.suites.clone(),
                guid,
            };
            let bmc = Bmc::new(spec.power_on, spec.faults.clone());
            let ipmi = LabIpmi::start(SocketAddr::new(spec.bind, port), bmc, offer).await?;
            nodes.push(LabNode {
                name: node_name(i, spec.nodes),
                ipmi,
            });
        }
        Ok(Lab { nodes })
    }
}
