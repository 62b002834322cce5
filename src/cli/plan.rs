//! From the options of a command that acts on targets to node plans and
//! engine timing: target URLs (`ipmi://`, `redfish://`, `ssh://`, `--ip`)
//! get their method from the options, inventory names from the inventory.
//! Shared by `fencekit status|on|off|…` ([`super::run`]) and
//! `verify|check|list` ([`super::verify`]).

use super::args::{ActionArgs, Driver, IpmiVersion, Method};
use crate::engine::identity::ExpectedIdentity;
use crate::engine::policy::{Policy, PowerTimeout};
use crate::engine::power::RebootMethod;
use crate::exit;
use crate::fleet::guard::Limit;
use crate::fleet::inventory::Inventory;
use crate::fleet::plan::{select, NodePlan};
use crate::method::build::{self, MethodOptions};
use crate::method::credential::CredentialRef;
use crate::secret::Secret;
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

/// The credential reference the command-line options name.
fn cli_credential(a: &ActionArgs) -> CredentialRef {
    if let Some(p) = &a.password {
        CredentialRef::Inline(Secret::from_str_value(p))
    } else if let Some(f) = &a.password_file {
        CredentialRef::File(f.clone())
    } else if let Some(v) = &a.password_env {
        CredentialRef::Env(v.clone())
    } else if let Some(s) = &a.password_script {
        CredentialRef::Script(s.clone())
    } else if let Some(v) = std::env::var_os("FENCEKIT_PASSWORD") {
        CredentialRef::Inline(Secret::new(v.into_encoded_bytes()))
    } else {
        CredentialRef::None
    }
}

/// The method options the command line gives (for target URLs and `--ip`).
fn cli_options(a: &ActionArgs) -> MethodOptions {
    MethodOptions {
        username: a.username.clone(),
        credential: cli_credential(a),
        ipport: a.ipport,
        cipher: Some(a.cipher.clone()),
        privlvl: Some(a.privlvl.clone()),
        ipmi_version: a.ipmi_version.map(|v| {
            match v {
                IpmiVersion::V20 => "2.0",
                IpmiVersion::V15 => "1.5",
            }
            .to_string()
        }),
        auth: a.auth.clone(),
        kg_hex: a.hexadecimal_kg.clone(),
        kg_file: None,
        accept_unauthenticated_replies: a.accept_unauthenticated_replies,
        workarounds: a.workaround.clone(),
        systems_uri: a.systems_uri.clone(),
        redfish_uri: a.redfish_uri.clone(),
        plug: a.plug.clone(),
        ca_cert: a.ca_cert.clone(),
        ssl_fingerprint: a.ssl_fingerprint.clone(),
        ssl_insecure: a.ssl_insecure,
        redfish_session: a.redfish_session,
        ssh_known_hosts: a.ssh_known_hosts.clone(),
        ssh_host_key: a.ssh_host_key.clone(),
        ssh_accept_new: a.ssh_accept_new,
        identity_file: a.identity_file.clone(),
        ssh_agent: a.ssh_agent,
        use_sudo: a.use_sudo,
        missing_as_off: a.missing_as_off,
        instructions: None,
        uuid: a.expect_uuid.clone(),
        serial: a.expect_serial.clone(),
        region: a.aws.region.clone(),
        access_key: a.aws.access_key.clone(),
        endpoint_url: a.aws.endpoint_url.clone(),
        node_name: a.aws.expect_node_name.clone(),
        expect_tag: a.aws.expect_tag.clone(),
        allow_self_fence: a.aws.allow_self_fence,
        kubeconfig: a.kubevirt.kubeconfig.clone(),
        vm_uid: a.kubevirt.expect_vm_uid.clone(),
    }
}

/// Native timing from the command-line options.
pub fn policy(a: &ActionArgs) -> Policy {
    Policy {
        power_wait: a.power_wait,
        power_timeout: PowerTimeout::Wall(a.power_timeout),
        poll_interval: a.poll_interval,
        poll_interval_max: a.poll_interval.max(Duration::from_secs(1)),
        confirm: a.confirm,
        retry_on: a.retry_on,
        method: match a.method {
            Method::Onoff => RebootMethod::OnOff,
            Method::Cycle => RebootMethod::Cycle,
        },
        // `reboot --method cycle --verify` observes the cycle (off, then
        // on) before the verification, which alone proves nothing about it.
        observe_cycle: a.verify && a.method == Method::Cycle,
        step_timeout: a.login_timeout,
        deadline: None,
        ..Policy::native()
    }
}

/// What the mass-fencing guard needs of the inventory the plans came from
/// (so that it is read once, not again by [`super::safety::prepare`]).
#[derive(Clone, Debug)]
pub struct InventoryFacts {
    /// The file.
    pub path: PathBuf,
    /// How many nodes it names.
    pub nodes: usize,
    /// Its `[defaults] max_fence`.
    pub max_fence: Option<Limit>,
}

/// Resolves the targets of a command into node plans.
pub fn plans(a: &ActionArgs) -> Result<Vec<NodePlan>, String> {
    plans_and_inventory(a).map(|(p, _)| p)
}

/// [`plans`], and what the guard needs of the inventory, if one was read.
pub fn plans_and_inventory(
    a: &ActionArgs,
) -> Result<(Vec<NodePlan>, Option<InventoryFacts>), String> {
    let inventory = a
        .inventory
        .as_deref()
        .map(Inventory::load)
        .transpose()
        .map_err(|e| e.to_string())?;
    let facts = inventory.as_ref().map(|inv| InventoryFacts {
        path: inv.path.clone(),
        nodes: inv.nodes.len(),
        max_fence: inv.max_fence,
    });
    let mut words = a.targets.clone();
    if let Some(ip) = &a.ip {
        let host = if ip.contains(':') {
            format!("[{ip}]")
        } else {
            ip.clone()
        };
        words.push(match a.driver {
            Driver::Ipmi => format!("ipmi://{host}"),
            Driver::Redfish => match a.ipport {
                Some(p) => format!("redfish://{host}:{p}"),
                None => format!("redfish://{host}"),
            },
            Driver::Ssh => format!(
                "ssh://{}{host}:{}/virsh/{}",
                a.username
                    .as_deref()
                    .map(|u| format!("{u}@"))
                    .unwrap_or_default(),
                a.ipport.unwrap_or(22),
                a.plug.as_deref().unwrap_or("")
            ),
            Driver::Aws => {
                return Err(
                    "--driver aws takes no --ip: give --region and --plug INSTANCE-ID".into(),
                )
            }
        });
    } else if a.driver == Driver::Aws {
        // An EC2 instance: --region (or AWS_REGION) and --plug.
        let region = a
            .aws
            .region
            .clone()
            .or_else(|| {
                crate::aws::config::Env::from_process()
                    .region()
                    .map(str::to_string)
            })
            .ok_or_else(|| crate::aws::config::ConfigError::NoRegion.to_string())?;
        let plug = a
            .plug
            .as_deref()
            .ok_or("--driver aws needs --plug INSTANCE-ID")?;
        words.push(format!("aws://{region}/{plug}"));
    }
    if words.is_empty() && !a.all {
        return Err(
            "no target given: name one as ipmi://HOST[:PORT], use --ip HOST, or name \
                    inventory nodes (--inventory PATH) or --all"
                .into(),
        );
    }
    let names = a.aws.expect_node_name.is_some() || a.aws.expect_tag.is_some();
    if names {
        let urls = words.iter().filter(|w| w.contains("://")).count();
        if a.all || urls != words.len() || urls != 1 {
            return Err(
                "--expect-node-name/--expect-tag name one machine: give exactly one aws:// target \
                 (or --driver aws --plug ID); pin inventory nodes with node_name = \"…\""
                    .into(),
            );
        }
    }
    if a.expect_uuid.is_some() || a.expect_serial.is_some() {
        ExpectedIdentity::new(a.expect_uuid.as_deref(), a.expect_serial.as_deref())
            .map_err(|e| format!("--expect-uuid/--expect-serial: {e}"))?;
        // One expected identity names one machine: one URL target, no
        // inventory names (those are pinned in the inventory).
        let urls = words.iter().filter(|w| w.contains("://")).count();
        if a.all || urls != words.len() || urls != 1 {
            return Err(
                "--expect-uuid/--expect-serial name one machine: give exactly one target URL \
                 (or --ip); pin inventory nodes with uuid = \"…\" / serial = \"…\" in the \
                 inventory"
                    .into(),
            );
        }
    }
    let options = cli_options(a);
    let mut p = select(&words, a.all, inventory, &|u| build::from_url(u, &options))
        .map_err(|e| e.to_string())?;
    if p.is_empty() {
        return Err("the selection matches no node".into());
    }
    // Each warning once (a set: one per node of 100,000 would be a scan each).
    let mut warned: HashSet<String> = HashSet::new();
    for m in p.iter().flat_map(|n| &n.levels).filter(|m| m.cleartext()) {
        let endpoint = m.endpoint();
        if !warned.contains(&endpoint) {
            eprintln!(
                "fencekit: warning: {endpoint}: plain HTTP: the password and the power commands \
                 cross the network unprotected"
            );
            warned.insert(endpoint);
        }
    }
    // Legacy security accepted for old devices (PDUs' v1/v2c communities
    // and MD5/DES), said once per text.
    for m in p.iter().flat_map(|n| &n.levels) {
        if let Some(m) = m.device() {
            for w in m.warnings() {
                if !warned.contains(&w) {
                    eprintln!("fencekit: warning: {w}");
                    warned.insert(w);
                }
            }
        }
    }
    for n in &mut p {
        // Run-wide settings apply to every method alike, from a URL or an inventory.
        for m in n.levels.iter_mut().chain(n.node_ssh.as_deref_mut()) {
            m.set_login_timeout(a.login_timeout);
            m.set_max_off_watts(n.max_off_watts.unwrap_or(a.max_off_watts));
        }
        if n.address.is_none() {
            n.address = a.address.clone();
        }
        if n.probe_ports.is_empty() {
            n.probe_ports = a.probe_ports.clone();
        }
    }
    Ok((p, facts))
}

/// Warns once that `--password` is visible to other local users.
pub fn warn_visible_password(a: &ActionArgs) {
    if a.password.is_some() {
        eprintln!(
            "fencekit: warning: --password is visible to other local users; prefer \
             --password-file, --password-env or FENCEKIT_PASSWORD"
        );
    }
}

/// What every command acting on targets does first: logging, the
/// `--password` warning, and the plan. `Err` is the exit code (usage).
pub fn begin(a: &ActionArgs) -> Result<Vec<NodePlan>, i32> {
    begin_with_inventory(a).map(|(p, _)| p)
}

/// [`begin`], and what the guard needs of the inventory.
pub fn begin_with_inventory(
    a: &ActionArgs,
) -> Result<(Vec<NodePlan>, Option<InventoryFacts>), i32> {
    crate::runtime::init_logging(a.verbose);
    warn_visible_password(a);
    plans_and_inventory(a).map_err(|m| {
        eprintln!("fencekit: {m}");
        exit::USAGE
    })
}
