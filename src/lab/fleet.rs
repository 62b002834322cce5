//! Starting several simulated BMCs at once, in-process.

use super::bmc::{Bmc, Faults, LabIdentity};
use super::host::{host_ip, LabHost};
use super::ipmi::{LabIpmi, Offer};
use super::pdu::{LabPdu, LabPduState, PduSpec};
use super::redfish::{LabCert, LabRedfish, RedfishLabOptions, Vendor};
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
    /// Serve Redfish too: `Some(true)` HTTPS (self-signed), `Some(false)` plain HTTP.
    pub redfish: Option<bool>,
    /// Where to write each node's Redfish certificate (`DIR/NAME.pem`).
    pub cert_dir: Option<std::path::PathBuf>,
    /// Simulate each node's host on 127.1.x.y:PORT (0: a free port per
    /// host), up after this boot delay.
    pub hosts: Option<(u16, std::time::Duration)>,
    /// Nodes whose Redfish service offers no ForceOff (a firmware quirk).
    pub no_forceoff: Vec<String>,
    /// Switched PDUs feeding the nodes (0, 1 or 2): node N hangs on outlet
    /// N of each, so with 2 every node has two power supplies.
    pub pdus: u32,
    /// The BMC family every node's Redfish service answers like.
    pub vendor: Vendor,
    /// Nodes that answer like another family than `vendor`.
    pub node_vendors: Vec<(String, Vendor)>,
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
            redfish: Some(true),
            cert_dir: None,
            hosts: None,
            no_forceoff: Vec::new(),
            pdus: 0,
            vendor: Vendor::Generic,
            node_vendors: Vec::new(),
        }
    }
}

/// One running simulated node.
pub struct LabNode {
    /// Its name (node01, node02, …).
    pub name: String,
    /// Its IPMI BMC.
    pub ipmi: LabIpmi,
    /// Its Redfish service (same chassis), if served.
    pub redfish: Option<LabRedfish>,
    /// Its simulated host, if any.
    pub host: Option<LabHost>,
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
    /// The PDUs (named A, B, …), in order.
    pub pdus: Vec<LabPdu>,
}

/// Most nodes one lab serves: 16,384, enough to rehearse a fleet of 10,000.
/// Node N's BMC is at `--bind` + N-1 (127.0.0.1 to 127.0.64.0 from the
/// default), below the simulated hosts' 127.1.0.0/16 ([`host_ip`]); each
/// node holds one or two sockets open ([`open_files_needed`]).
pub const MAX_NODES: u32 = 16_384;

/// Open files a lab of `spec` needs: a socket per node for IPMI, one more
/// for Redfish and one for a simulated host, the PDUs, and room for the
/// connections clients open and the runtime's own.
pub fn open_files_needed(spec: &LabSpec) -> u64 {
    let per_node = 1 + u64::from(spec.redfish.is_some()) + u64::from(spec.hosts.is_some());
    u64::from(spec.nodes) * per_node + u64::from(spec.pdus) + 1024
}

/// Outlets of a lab PDU: 24 (a common rack PDU), or one per node if more.
pub fn pdu_outlets(nodes: u32) -> u32 {
    nodes.max(24)
}

/// The name of lab PDU `i`: A, B, …
pub fn pdu_name(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

/// Node names are zero-padded to the width of the count (at least 2).
pub fn node_name(i: u32, count: u32) -> String {
    let width = count.to_string().len().max(2);
    format!("node{:0width$}", i + 1)
}

/// The address of node `i` (0-based): `bind` plus `i`, so every simulated
/// BMC has an address of its own, as real BMCs do (the per-BMC lock is keyed
/// by address). On `::1`, the only IPv6 loopback address, all nodes share it.
pub fn node_address(bind: IpAddr, i: u32) -> std::io::Result<IpAddr> {
    match bind {
        IpAddr::V4(v4) => u32::from(v4)
            .checked_add(i)
            .map(|n| IpAddr::from(std::net::Ipv4Addr::from(n)))
            .filter(IpAddr::is_loopback)
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{i} nodes from {bind} leave 127.0.0.0/8"),
                )
            }),
        IpAddr::V6(_) => Ok(bind),
    }
}

impl Lab {
    /// Starts `spec.nodes` BMCs, node `i` at [`node_address`]`(spec.bind, i)`. Must run inside a tokio runtime.
    pub async fn start(spec: &LabSpec) -> std::io::Result<Lab> {
        if !spec.bind.is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the lab only binds loopback addresses (127.0.0.0/8, ::1)",
            ));
        }
        if let (Some(_), IpAddr::V4(first)) = (spec.hosts, spec.bind) {
            // The simulated hosts live on 127.1.0.0/16: no BMC may be there.
            let last = u32::from(first).saturating_add(spec.nodes.saturating_sub(1));
            let hosts = u32::from(std::net::Ipv4Addr::new(127, 1, 0, 0))
                ..=u32::from(std::net::Ipv4Addr::new(127, 1, 255, 255));
            if u32::from(first) <= *hosts.end() && last >= *hosts.start() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "{} nodes from {} reach 127.1.0.0/16, where the simulated hosts are",
                        spec.nodes, spec.bind
                    ),
                ));
            }
        }
        let mut nodes = Vec::with_capacity(spec.nodes as usize);
        // Per-node settings by name (the last one given wins), looked up
        // once per node rather than searched (16,384 nodes).
        let vendors: std::collections::HashMap<&str, Vendor> = spec
            .node_vendors
            .iter()
            .map(|(n, v)| (n.as_str(), *v))
            .collect();
        let no_forceoff: std::collections::HashSet<&str> =
            spec.no_forceoff.iter().map(String::as_str).collect();
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
            bmc.set_identity(LabIdentity::for_node(i));
            let name = node_name(i, spec.nodes);
            let ip = node_address(spec.bind, i)?;
            let ipmi = LabIpmi::start(SocketAddr::new(ip, port), bmc.clone(), offer).await?;
            let redfish = match spec.redfish {
                None => None,
                Some(tls) => {
                    let vendor = vendors.get(name.as_str()).copied().unwrap_or(spec.vendor);
                    let profile = RedfishLabOptions::vendor(vendor);
                    let opts = RedfishLabOptions {
                        username: spec.username.clone(),
                        password: spec.password.clone(),
                        tls: tls.then_some(LabCert::SelfSigned),
                        cert_path: match (&spec.cert_dir, tls) {
                            (Some(d), true) => Some(d.join(format!("{name}.pem"))),
                            _ => None,
                        },
                        system_name: name.clone(),
                        cert_ip: Some(ip),
                        ..profile
                    };
                    let mut opts = opts;
                    if no_forceoff.contains(name.as_str()) {
                        opts.reset_types.retain(|t| t != "ForceOff");
                    }
                    // Same port number as IPMI when fixed (TCP and UDP do not collide).
                    Some(LabRedfish::start(SocketAddr::new(ip, port), bmc, opts).await?)
                }
            };
            let host = match spec.hosts {
                Some((port, boot)) => Some(
                    LabHost::start(SocketAddr::new(host_ip(i), port), ipmi.bmc.clone(), boot)
                        .await
                        .map_err(|e| std::io::Error::new(e.kind(), format!("{name}: {e}")))?,
                ),
                None => None,
            };
            nodes.push(LabNode {
                name,
                ipmi,
                redfish,
                host,
            });
        }
        let mut pdus = Vec::new();
        for k in 0..spec.pdus.min(26) {
            let outlets = pdu_outlets(spec.nodes);
            // After the nodes' addresses: a PDU is a device of its own, with
            // its own lock key (it must not share one with node01's BMC).
            let addr = node_address(spec.bind, spec.nodes + k)?;
            let state = LabPduState::new(outlets);
            for (i, n) in nodes.iter().enumerate() {
                state.wire(i as u32 + 1, &n.name, n.bmc());
            }
            pdus.push(
                LabPdu::start(
                    SocketAddr::new(addr, 0),
                    PduSpec::lab(outlets, &spec.password),
                    state,
                )
                .await?,
            );
        }
        Ok(Lab { nodes, pdus })
    }

    /// The inventory text for this running lab (credentials by reference).
    pub fn inventory_text(&self, spec: &LabSpec, password_file: &std::path::Path) -> String {
        let mut s = String::from(
            "# Written by `fencekit lab --write-inventory`; valid while the lab runs.\n",
        );
        s.push_str(&format!(
            "[defaults]\nusername = \"{}\"\npassword_file = \"{}\"\n",
            spec.username,
            password_file.display()
        ));
        // The PDUs: SNMPv3 user "fence", SHA-256/AES, the lab password for both.
        for (i, p) in self.pdus.iter().enumerate() {
            s.push_str(&format!(
                "\n[pdu.{}]\nendpoint = \"{}\"\nprofile = \"apc\"\nsnmp_version = \"3\"\nusername = \"fence\"\n\
                 auth_protocol = \"SHA-256\"\npriv_protocol = \"AES\"\npriv_password_file = \"{}\"\n",
                pdu_name(i),
                p.endpoint(),
                password_file.display()
            ));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let a = n.addr();
            s.push_str(&format!("\n[[node]]\nname = \"{}\"\n", n.name));
            if let Some(h) = &n.host {
                s.push_str(&format!(
                    "address = \"{}\"\nprobe_ports = [{}]\n",
                    h.addr.ip(),
                    h.addr.port()
                ));
            }
            s.push_str(&format!(
                "  [[node.fence]]\n  endpoint = \"ipmi://{}:{}\"\n",
                a.ip(),
                a.port()
            ));
            if let Some(r) = &n.redfish {
                s.push_str(&format!(
                    "  [[node.fence]]\n  endpoint = \"{}\"\n",
                    r.target()
                ));
                if let Some(d) = &spec.cert_dir {
                    if r.cert_pem().is_some() {
                        let p = std::path::absolute(d.join(format!("{}.pem", n.name)))
                            .unwrap_or_else(|_| d.join(format!("{}.pem", n.name)));
                        s.push_str(&format!("  ca_cert = \"{}\"\n", p.display()));
                    }
                }
            }
            if !self.pdus.is_empty() {
                let k = i + 1;
                let outlets: Vec<String> = (0..self.pdus.len())
                    .map(|i| format!("\"{}:{k}\"", pdu_name(i)))
                    .collect();
                s.push_str(&format!(
                    "  [[node.fence]]\n  driver = \"snmp\"\n  outlets = [{}]\n",
                    outlets.join(", ")
                ));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_thousand_nodes_each_get_a_loopback_address_of_their_own() {
        let bind = IpAddr::from([127, 0, 0, 1]);
        let mut seen = std::collections::HashSet::new();
        for i in 0..MAX_NODES {
            let a = node_address(bind, i).unwrap();
            assert!(a.is_loopback(), "{a}");
            assert!(seen.insert(a), "{a} twice");
            assert_ne!(a, host_ip(i), "a BMC on a host's address");
        }
        assert_eq!(
            node_address(bind, MAX_NODES - 1).unwrap(),
            IpAddr::from([127, 0, 64, 0])
        );
        // Below the simulated hosts (127.1.0.0/16).
        assert!(seen
            .iter()
            .all(|a| matches!(a, IpAddr::V4(v) if v.octets()[1] == 0)));
        assert!(node_address(IpAddr::from([127, 255, 255, 0]), 300).is_err());
        assert_eq!(node_name(16_383, MAX_NODES), "node16384");
    }

    #[test]
    fn the_open_files_a_lab_needs_grow_with_what_each_node_serves() {
        let spec = |redfish, hosts| LabSpec {
            nodes: MAX_NODES,
            redfish,
            hosts,
            ..LabSpec::default()
        };
        let boot = std::time::Duration::ZERO;
        assert_eq!(open_files_needed(&spec(None, None)), 16_384 + 1024);
        assert_eq!(
            open_files_needed(&spec(Some(true), None)),
            2 * 16_384 + 1024
        );
        assert_eq!(
            open_files_needed(&spec(Some(true), Some((0, boot)))),
            3 * 16_384 + 1024
        );
    }

    #[tokio::test]
    async fn bmcs_on_the_hosts_addresses_are_refused_before_anything_is_bound() {
        let spec = LabSpec {
            bind: IpAddr::from([127, 0, 255, 0]),
            nodes: 300,
            redfish: None,
            hosts: Some((0, std::time::Duration::ZERO)),
            ..LabSpec::default()
        };
        let e = Lab::start(&spec).await.err().unwrap().to_string();
        assert!(e.contains("127.1.0.0/16"), "{e}");
    }
}
