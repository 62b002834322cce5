//! `fencekit lab`: serve simulated BMCs until SIGINT/SIGTERM.

use crate::exit;
use crate::lab::bmc::Faults;
use crate::lab::fleet::{pdu_name, Lab, LabSpec};
use crate::lab::knobs::{apply_knob, parse_fault};
use crate::lab::pdu::PduFaults;
use crate::lab::redfish::Vendor;
use clap::Args;
use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;

/// `fencekit lab` options (about the lab: its simulated IPMI BMCs,
/// Redfish services, hosts and PDUs).
#[derive(Args, Debug, Clone)]
pub struct LabArgs {
    /// Number of simulated BMCs (at most 16384; each holds one or two open
    /// files, and the lab raises its own limit as far as it may).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub nodes: u32,
    /// Loopback address of node01's BMC; node N gets this address + N-1 (every simulated BMC has an address of its own, as real ones do)
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// First UDP port (node N gets base+N-1); 0 picks free ports.
    #[arg(long, default_value_t = 0)]
    pub ipmi_port_base: u16,
    /// User name the BMCs accept.
    #[arg(long, default_value = "admin")]
    pub username: String,
    /// Password the BMCs accept.
    #[arg(long, default_value = "lab")]
    pub password: String,
    /// Initial power state.
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    pub power: String,
    /// Drop this fraction of datagrams in each direction (0.0-1.0).
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Drop these received datagrams (1-based, per node), e.g. 1,3.
    #[arg(long, value_delimiter = ',')]
    pub drop: Vec<u64>,
    /// Delay every answer by this much.
    #[arg(long, value_name = "DUR", default_value = "0s", value_parser = crate::time::parse_duration)]
    pub delay: std::time::Duration,
    /// A power change becomes visible this long after the command.
    #[arg(long, value_name = "DUR", default_value = "0s", value_parser = crate::time::parse_duration)]
    pub transition: std::time::Duration,
    /// Power never changes (commands are accepted and ignored).
    #[arg(long)]
    pub stuck: bool,
    /// Answer Chassis Control off-when-off with D5h (like Dell).
    #[arg(long)]
    pub strict_state: bool,
    /// Only offer these cipher suites (comma list of 3, 17).
    #[arg(long, value_delimiter = ',', default_values_t = [3u8, 17u8])]
    pub ciphers: Vec<u8>,
    /// Never answer Get Channel Cipher Suites (like ipmi_sim).
    #[arg(long)]
    pub no_cipher_query: bool,
    /// Faults for some nodes: PATTERN:KNOB[+KNOB…], e.g. 'node0[1-5]:stuck' or
    /// 'node07:loss=0.5+delay=100ms'. Knobs: stuck, silent, strict-state,
    /// no-cipher-query, ipmi-silent, lying, flap, draw-lies, no-meter, no-nmi, host-rst,
    /// host-alive, redfish-no-forceoff, off,
    /// loss=R, delay=DUR, transition=DUR, identity-of=NODE, no-identity,
    /// privilege=user|operator (a demoted account), vendor=NAME.
    /// Repeatable.
    #[arg(long = "fault", value_name = "SPEC")]
    pub faults: Vec<String>,
    /// Write an inventory of the lab's nodes to this file (the password to
    /// PATH.password, Redfish certificates to PATH.certs/).
    #[arg(long, value_name = "PATH")]
    pub write_inventory: Option<PathBuf>,
    /// Simulate each node's host on 127.1.x.y (for verify): it accepts TCP
    /// connections while the node's real power is on and is silent (drops
    /// SYNs, like a dead machine) while it is off; knobs host-rst and
    /// host-alive change that. Without PORT each host gets a free port.
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "0")]
    pub hosts: Option<u16>,
    /// How long a simulated host takes to answer after power-on.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = crate::time::parse_duration)]
    pub boot_delay: std::time::Duration,
    /// Redfish service per node: https (self-signed certificate), http, or none.
    #[arg(long, default_value = "https", value_parser = ["https", "http", "none"])]
    pub redfish: String,
    /// Switched PDUs feeding the nodes (SNMP v1/v2c/v3): node N hangs on
    /// outlet N of each; with 2, every node has two power supplies.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=2))]
    pub pdus: u32,
    /// Faults for a PDU: NAME:KNOB[+KNOB…], e.g. 'B:refuse=1' or 'A:loss=0.3'.
    /// Knobs: refuse=N[,N…] (outlets that never switch), lying (reports off,
    /// keeps feeding), silent, loss=R. Repeatable.
    #[arg(long = "pdu-fault", value_name = "SPEC")]
    pub pdu_faults: Vec<String>,
    /// Make every node's Redfish service answer like this BMC family
    /// (system path, reset types, success and refusal bodies, transitions
    /// shown or hidden, 202 + Task); per node: --fault 'PATTERN:vendor=NAME'.
    #[arg(long, value_name = "NAME", default_value = "generic", value_parser = [
        "generic", "idrac", "ilo", "xcc", "smc", "supermicro", "bmcweb", "openbmc",
        "bmcweb204", "ami", "ami-task",
    ])]
    pub vendor: String,
    /// More detail on stderr.
    #[arg(long, short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
}

fn spec(a: &LabArgs) -> Result<LabSpec, String> {
    let bind: IpAddr = a
        .bind
        .parse()
        .map_err(|_| format!("--bind '{}' is not an IP address", a.bind))?;
    if !bind.is_loopback() {
        return Err(format!(
            "--bind {bind}: the lab only serves on loopback (127.0.0.0/8 or ::1)"
        ));
    }
    if !(0.0..=1.0).contains(&a.loss) {
        return Err("--loss must be between 0.0 and 1.0".into());
    }
    if a.ciphers.iter().any(|c| !matches!(c, 3 | 17)) || a.ciphers.is_empty() {
        return Err("--ciphers takes 3 and/or 17".into());
    }
    Ok(LabSpec {
        bind,
        port_base: a.ipmi_port_base,
        nodes: a.nodes,
        username: a.username.clone(),
        password: a.password.clone(),
        power_on: a.power == "on",
        suites: a.ciphers.clone(),
        redfish: match a.redfish.as_str() {
            "https" => Some(true),
            "http" => Some(false),
            _ => None,
        },
        hosts: a.hosts.map(|p| (p, a.boot_delay)),
        pdus: a.pdus,
        no_forceoff: a
            .faults
            .iter()
            .filter_map(|f| parse_fault(f).ok())
            .filter(|f| f.knobs.iter().any(|k| k == "redfish-no-forceoff"))
            .flat_map(|f| f.names)
            .collect(),
        vendor: Vendor::parse(&a.vendor)
            .ok_or_else(|| format!("--vendor '{}' is not a known profile", a.vendor))?,
        node_vendors: a
            .faults
            .iter()
            .filter_map(|f| parse_fault(f).ok())
            .flat_map(|f| {
                let v = f
                    .knobs
                    .iter()
                    .filter_map(|k| k.strip_prefix("vendor="))
                    .filter_map(Vendor::parse)
                    .next_back();
                f.names.into_iter().filter_map(move |n| v.map(|v| (n, v)))
            })
            .collect(),
        cert_dir: a.write_inventory.as_ref().map(|p| {
            let mut d = p.as_os_str().to_owned();
            d.push(".certs");
            std::path::PathBuf::from(d)
        }),
        faults: Faults {
            loss: a.loss,
            drop: a.drop.clone(),
            delay: a.delay,
            transition: a.transition,
            stuck: a.stuck,
            strict_state: a.strict_state,
            silent: false,
            no_cipher_query: a.no_cipher_query,
            ..Faults::default()
        },
    })
}

fn write_inventory(path: &std::path::Path, lab: &Lab, spec: &LabSpec) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut pw_path = path.as_os_str().to_owned();
    pw_path.push(".password");
    let pw_path = std::path::PathBuf::from(pw_path);
    let abs = std::path::absolute(&pw_path).unwrap_or(pw_path.clone());
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&pw_path)
        .map_err(|e| format!("cannot write {}: {e}", pw_path.display()))?;
    f.write_all(spec.password.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", pw_path.display()))?;
    std::fs::write(path, lab.inventory_text(spec, &abs))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// One `--pdu-fault` spec: the PDU's name and its knobs.
fn parse_pdu_fault(spec: &str) -> Result<(String, PduFaults), String> {
    let (name, knobs) = spec
        .split_once(':')
        .ok_or_else(|| format!("--pdu-fault '{spec}': expected NAME:KNOB[+KNOB…]"))?;
    let mut f = PduFaults::default();
    for k in knobs.split('+') {
        let (knob, value) = match k.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (k.trim(), None),
        };
        match (knob, value) {
            ("lying", None) => f.lying = true,
            ("silent", None) => f.silent = true,
            ("loss", Some(v)) => {
                f.loss = v
                    .parse()
                    .ok()
                    .filter(|r| (0.0..=1.0).contains(r))
                    .ok_or_else(|| {
                        format!("--pdu-fault '{spec}': loss needs a ratio between 0 and 1")
                    })?
            }
            ("refuse", Some(v)) => {
                for n in v.split(',') {
                    f.refuse.push(n.trim().parse().map_err(|_| {
                        format!("--pdu-fault '{spec}': refuse takes outlet numbers")
                    })?);
                }
            }
            _ => return Err(format!("--pdu-fault '{spec}': unknown knob '{k}'")),
        }
    }
    Ok((name.to_string(), f))
}

/// Entry point of `fencekit lab`.
pub fn main(a: LabArgs) -> i32 {
    crate::runtime::init_logging(a.verbose);
    let spec = match spec(&a) {
        Ok(s) => s,
        Err(m) => {
            eprintln!("fencekit lab: {m}");
            return exit::USAGE;
        }
    };
    let faults = match a
        .faults
        .iter()
        .map(|f| parse_fault(f))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(f) => f,
        Err(m) => {
            eprintln!("fencekit lab: {m}");
            return exit::USAGE;
        }
    };
    let pdu_faults = match a
        .pdu_faults
        .iter()
        .map(|f| parse_pdu_fault(f))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(f) => f,
        Err(m) => {
            eprintln!("fencekit lab: {m}");
            return exit::USAGE;
        }
    };
    // Thousands of BMCs need thousands of sockets: raise this process's
    // limit as far as it may go, and say so plainly when that is not enough
    // (rather than failing on the node that finds no descriptor left).
    let needed = crate::lab::fleet::open_files_needed(&spec);
    let limits = crate::runtime::raise_open_files(needed);
    if limits.soft < needed {
        eprintln!(
            "fencekit lab: {} node(s) need about {needed} open files, but the limit is {} \
             (hard limit {}): raise it (ulimit -n {needed}, as root if above the hard limit), \
             or serve fewer nodes (--redfish none needs one per node)",
            spec.nodes, limits.soft, limits.hard
        );
        return exit::FAILURE;
    }
    let Some(rt) = crate::runtime::runtime("fencekit lab") else {
        return exit::FAILURE;
    };
    if let Some(d) = &spec.cert_dir {
        if let Err(e) = std::fs::create_dir_all(d) {
            eprintln!("fencekit lab: cannot create {}: {e}", d.display());
            return exit::FAILURE;
        }
    }
    rt.block_on(async {
        // Before "ready" is printed: a SIGTERM right after it must stop the
        // lab cleanly, not kill it by default disposition.
        let signals = crate::runtime::Terminations::install();
        let lab = match Lab::start(&spec).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("fencekit lab: cannot start: {e}");
                return exit::FAILURE;
            }
        };
        // Nodes by name (a fault pattern may name all 16,384 of them).
        let by_name: std::collections::HashMap<&str, usize> = lab
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        for fs in &faults {
            for name in &fs.names {
                let Some(n) = by_name.get(name.as_str()).map(|&i| &lab.nodes[i]) else {
                    eprintln!("fencekit lab: --fault names no node '{name}'");
                    return exit::USAGE;
                };
                let mut f = n.bmc().lock().faults.clone();
                let mut on = spec.power_on;
                for k in &fs.knobs {
                    let _ = apply_knob(k, &mut f, &mut on);
                    // A swapped cable or a reused address: this BMC answers
                    // with another node's identity.
                    // The other node's own identity, not its current one,
                    // so that two faults can swap a pair.
                    if let Some(other) = k.strip_prefix("identity-of=") {
                        let Some(&i) = by_name.get(other) else {
                            eprintln!("fencekit lab: identity-of names no node '{other}'");
                            return exit::USAGE;
                        };
                        n.bmc()
                            .set_identity(crate::lab::bmc::LabIdentity::for_node(i as u32));
                    }
                }
                n.bmc().set_faults(f);
                n.bmc().set_on(on);
            }
        }
        for (name, f) in &pdu_faults {
            let Some(i) = (0..lab.pdus.len()).find(|&i| &pdu_name(i) == name) else {
                eprintln!("fencekit lab: --pdu-fault names no PDU '{name}' (see --pdus)");
                return exit::USAGE;
            };
            lab.pdus[i].state.set_faults(f.clone());
        }
        if let Some(path) = &a.write_inventory {
            if let Err(m) = write_inventory(path, &lab, &spec) {
                eprintln!("fencekit lab: {m}");
                return exit::FAILURE;
            }
        }
        {
            let mut out = std::io::stdout().lock();
            for n in &lab.nodes {
                let a = n.addr();
                let hint = if spec.password == "lab" {
                    format!(
                        "  (try: FENCEKIT_PASSWORD=lab fencekit status ipmi://{}@{}:{})",
                        spec.username,
                        a.ip(),
                        a.port()
                    )
                } else {
                    String::new()
                };
                let mut redfish = n
                    .redfish
                    .as_ref()
                    .map(|r| format!(" {}", r.target()))
                    .unwrap_or_default();
                if let Some(h) = &n.host {
                    redfish.push_str(&format!(" host={}", h.addr));
                }
                let _ = writeln!(
                    out,
                    "{} ipmi://{}:{}{redfish}{hint}",
                    n.name,
                    a.ip(),
                    a.port()
                );
            }
            for (i, p) in lab.pdus.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "pdu {} {} (outlets 1-{}: node N on outlet N; v2c community private, v3 users fence SHA-256/AES and fencesha SHA/AES)",
                    pdu_name(i),
                    p.endpoint(),
                    crate::lab::fleet::pdu_outlets(spec.nodes)
                );
            }
            let _ = writeln!(
                out,
                "ready: {} simulated BMC(s); Ctrl-C stops",
                lab.nodes.len()
            );
            let _ = out.flush();
        }
        signals.wait().await;
        drop(lab);
        exit::OK
    })
}
