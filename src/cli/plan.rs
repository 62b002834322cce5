//! From the options of a command that acts on targets to node plans and
//! engine timing: target URLs (and `--driver NAME --ip HOST`, which the
//! platform turns into one) get their method from the options, inventory
//! names from the inventory.
//! Shared by `fencekit status|on|off|…` ([`super::run`]) and
//! `verify|check|list` ([`super::verify`]).

use super::args::{ActionArgs, Method};
use crate::engine::identity::ExpectedIdentity;
use crate::engine::policy::{Policy, PowerTimeout};
use crate::engine::power::RebootMethod;
use crate::exit;
use crate::fleet::guard::Limit;
use crate::fleet::inventory::Inventory;
use crate::fleet::plan::{select, NodePlan};
use crate::method::build::{self, MethodOptions};
use crate::method::credential::CredentialRef;
use crate::method::platforms;
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

/// The method options the command line gives (for target URLs and `--ip`):
/// the generic ones, then each platform's flags.
pub fn cli_options(a: &ActionArgs) -> MethodOptions {
    let mut o = MethodOptions {
        username: a.username.clone(),
        credential: cli_credential(a),
        ipport: a.ipport,
        plug: a.plug.clone(),
        ca_cert: a.ca_cert.clone(),
        ssl_fingerprint: a.ssl_fingerprint.clone(),
        ssl_insecure: a.ssl_insecure,
        uuid: a.expect_uuid.clone(),
        serial: a.expect_serial.clone(),
        ..MethodOptions::default()
    };
    a.platforms.apply(&mut o);
    o
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
    let options = cli_options(a);
    let mut words = a.targets.clone();
    let host = a.ip.as_ref().map(|ip| {
        if ip.contains(':') {
            format!("[{ip}]")
        } else {
            ip.clone()
        }
    });
    // `--driver NAME`: the platform names the target of `--ip HOST` (or of
    // its own options, without one). The value parser allows only these.
    if let Some(driver) = platforms::driver(&a.driver) {
        if let Some(url) = (driver.target)(host.as_deref(), &options)? {
            words.push(url);
        }
    }
    if words.is_empty() && !a.all {
        return Err(format!(
            "no target given: name one as {}, use --ip HOST, or name inventory nodes \
             (--inventory PATH) or --all",
            platforms::DEFAULT
                .url_forms()
                .first()
                .map_or("a URL", |f| f.form)
        ));
    }
    if let Some(why) = a.platforms.one_machine() {
        let urls = words.iter().filter(|w| w.contains("://")).count();
        if a.all || urls != words.len() || urls != 1 {
            return Err(why.into());
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
