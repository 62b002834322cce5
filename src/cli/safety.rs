//! Operator safety on the command line: the options of `off`/`reboot`
//! (`--max-fence`, `--force --reason`, `--on-confirmed-off`, `--crashdump`),
//! the holds check every power-changing command makes before it contacts
//! anything, and the `fencekit hold` / `fencekit release` commands.
//!
//! The decisions are the fleet's ([`crate::fleet::guard`],
//! [`crate::fleet::hold`]); this module turns them into messages, audit
//! records and exit codes.

use super::args::{ActionArgs, HoldArgs, Method, Output, ReleaseArgs, SafetyArgs};
use super::plan::InventoryFacts;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::Action;
use crate::engine::run::Failure;
use crate::exit;
use crate::fleet::audit::{local_user, Audit};
use crate::fleet::guard::{Count, Population};
use crate::fleet::hold::{self, Hold};
use crate::fleet::hook::HookOptions;
use crate::fleet::plan::NodePlan;
use crate::fleet::result::{TargetResult, Traffic};
use crate::fleet::sequence::CrashdumpOptions;
use crate::method::credential::CredentialRef;
use clap::Parser;
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What [`prepare`] found out before anything is contacted.
pub struct Prepared {
    /// Nodes refused because they are held, with their hold.
    pub held: Vec<(String, Hold)>,
    /// The guard's count (off and reboot only).
    pub count: Option<Count>,
    /// The hook options for the fleet.
    pub hook: HookOptions,
    /// Crash dump first, if asked.
    pub crashdump: Option<CrashdumpOptions>,
}

impl Prepared {
    /// True when the count is beyond the limit (whether or not `--force` overrides it).
    pub fn exceeds(&self) -> bool {
        self.count.as_ref().is_some_and(Count::exceeded)
    }

    /// The plan's extra lines (`--dry-run`, human output).
    pub fn dry_run_lines(&self, action: Action, force: bool) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(c) = &self.count {
            let verdict = match (c.exceeded(), force) {
                (false, _) => "within the limit",
                (true, false) => "BEYOND the limit: would be refused (exit 64) without --force",
                (true, true) => "beyond the limit, forced (--force)",
            };
            out.push(format!(
                "mass-fencing guard: {action} on {}: {verdict}",
                c.describe()
            ));
        }
        for (node, h) in &self.held {
            out.push(format!(
                "held: {node} by {} until {} ({}): would be refused",
                h.by, h.until, h.reason
            ));
        }
        out
    }

    /// The plan's extra fields (`--dry-run`, JSON output).
    pub fn dry_run_json(&self, force: bool) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        if let Some(c) = &self.count {
            let mut v = serde_json::to_value(c).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("exceeded".into(), c.exceeded().into());
                o.insert("forced".into(), (c.exceeded() && force).into());
            }
            m.insert("guard".into(), v);
        }
        if !self.held.is_empty() {
            m.insert(
                "held".into(),
                serde_json::to_value(self.held.iter().map(|(_, h)| h).collect::<Vec<_>>())
                    .unwrap_or_default(),
            );
        }
        m
    }
}

fn verb(action: Action) -> &'static str {
    match action {
        Action::Off => "power off",
        Action::Reboot => "reboot",
        Action::On => "power on",
        _ => action.as_str(),
    }
}

fn usage(m: impl std::fmt::Display) -> i32 {
    eprintln!("fencekit: {m}");
    exit::USAGE
}

/// Environment variables that a credential reference of `plans` names,
/// or `--password-env` does: they hold secrets and no hook sees them.
fn secret_variables(a: &ActionArgs, plans: &[NodePlan]) -> Vec<String> {
    let mut v: Vec<String> = a.password_env.iter().cloned().collect();
    let mut seen: HashSet<&str> = a.password_env.iter().map(String::as_str).collect();
    for m in plans
        .iter()
        .flat_map(|p| p.levels.iter().chain(p.node_ssh.as_deref()))
    {
        if let CredentialRef::Env(name) = m.credential() {
            if seen.insert(name) {
                v.push(name.clone());
            }
        }
    }
    v
}

/// Checks the options, reads the holds and counts the nodes against the
/// guard, contacting nothing. `inventory`: what the plans' inventory said
/// (read once, by [`super::plan::plans_and_inventory`]). `Err` is the exit
/// code (usage errors).
pub fn prepare(
    action: Action,
    a: &ActionArgs,
    s: &SafetyArgs,
    plans: &[NodePlan],
    inventory: Option<&InventoryFacts>,
) -> Result<Prepared, i32> {
    let changes_power = matches!(action, Action::On | Action::Off | Action::Reboot);
    let held = if changes_power {
        match hold::active() {
            Ok(holds) if holds.is_empty() => Vec::new(),
            Ok(holds) => {
                warn_unreadable(&holds);
                let index = hold::Index::new(&holds);
                plans
                    .iter()
                    .filter_map(|p| {
                        let eps: Vec<String> = p.levels.iter().map(|m| m.endpoint()).collect();
                        index
                            .covering(&p.name, &eps)
                            .map(|h| (p.name.clone(), h.clone()))
                    })
                    .collect()
            }
            Err(m) => {
                // A hold directory that cannot be read must not block fencing.
                eprintln!("fencekit: warning: {m}; acting as if no node were held");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let fencing = matches!(action, Action::Off | Action::Reboot);
    if !fencing {
        return Ok(Prepared {
            held,
            count: None,
            hook: HookOptions::default(),
            crashdump: None,
        });
    }
    let (limit, source) = match (s.max_fence, inventory) {
        (Some(l), _) => (Some(l), Some("--max-fence".to_string())),
        (None, Some(inv)) => (
            inv.max_fence,
            inv.max_fence
                .map(|_| format!("{} (max_fence)", inv.path.display())),
        ),
        (None, None) => (None, None),
    };
    let (population, of) = match inventory {
        Some(inv) => (
            inv.nodes + plans.iter().filter(|p| p.name.contains("://")).count(),
            Population::Inventory,
        ),
        None => (plans.len(), Population::Targets),
    };
    let count = Count::new(plans.len() - held.len(), limit, source, population, of);

    let hooked = s.on_confirmed_off.is_some() || plans.iter().any(|p| p.on_confirmed_off.is_some());
    if hooked && action == Action::Reboot && a.method == Method::Cycle {
        return Err(usage(
            "a power cycle is never observed off, so the confirmed-off hook cannot run: \
             use --method onoff (the default) with --on-confirmed-off or an inventory's \
             on_confirmed_off",
        ));
    }
    if s.on_despite_hook_failure && action != Action::Reboot {
        return Err(usage("--on-despite-hook-failure applies to reboot only"));
    }
    if s.crashdump {
        let needed = s.crashdump_wait + a.power_timeout + a.login_timeout;
        if needed > a.timeout {
            return Err(usage(format!(
                "--crashdump-wait {:.0}s leaves no time for the power-off within --timeout \
                 {:.0}s (the wait, --power-timeout and --login-timeout must fit): raise --timeout \
                 to at least {:.0}s or shorten --crashdump-wait",
                s.crashdump_wait.as_secs_f64(),
                a.timeout.as_secs_f64(),
                needed.as_secs_f64().ceil()
            )));
        }
        if let Some(p) = plans.iter().find(|p| p.address.is_none()) {
            return Err(usage(format!(
                "--crashdump needs the node's own address to recognise its kdump messages: \
                 {} has none (--address HOST, or `address` in the inventory)",
                p.name
            )));
        }
    }
    Ok(Prepared {
        held,
        count: Some(count),
        hook: HookOptions {
            command: s.on_confirmed_off.clone(),
            timeout: s.hook_timeout,
            on_despite_failure: s.on_despite_hook_failure,
            scrub: secret_variables(a, plans),
        },
        crashdump: s.crashdump.then_some(CrashdumpOptions {
            wait: s.crashdump_wait,
            quiet: s.kdump_quiet,
            port: s.kdump_port,
        }),
    })
}

/// An audit record of the guard refusing or being forced.
#[derive(Serialize)]
struct GuardRecord<'a> {
    event: &'static str,
    action: &'a str,
    #[serde(flatten)]
    count: &'a Count,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    targets: Vec<&'a str>,
}

/// Applies the guard: `Ok` to go on, `Err` with the exit code to stop
/// (nothing has been contacted either way).
pub fn enforce<'a>(
    prep: &'a Prepared,
    action: Action,
    s: &'a SafetyArgs,
    plans: &'a [NodePlan],
    audit: Option<&Audit>,
) -> Result<(), i32> {
    let Some(count) = prep.count.as_ref().filter(|c| c.exceeded()) else {
        return Ok(());
    };
    let held: HashSet<&str> = prep.held.iter().map(|(h, _)| h.as_str()).collect();
    let targets: Vec<&str> = plans
        .iter()
        .map(|p| p.name.as_str())
        .filter(|n| !held.contains(n))
        .collect();
    let record = |event: &'static str, reason: Option<&'a str>| GuardRecord {
        event,
        action: action.as_str(),
        count,
        reason,
        targets: targets.clone(),
    };
    if !s.force {
        if let Some(audit) = audit {
            if let Err(m) = audit.record_event(&record("max-fence-refused", None)) {
                eprintln!("fencekit: warning: {m}");
            }
        }
        eprintln!(
            "fencekit: refusing to {} {} node(s): that is more than the mass-fencing \
             guard allows ({}). Nothing was contacted. Check the selection (a host range \
             typo? half the cluster unreachable?); if it is really meant, add --force \
             --reason TEXT (recorded in the audit trail).",
            verb(action),
            count.acting,
            count.describe()
        );
        return Err(exit::USAGE);
    }
    let reason = s.reason.as_deref().unwrap_or_default();
    let Some(audit) = audit else {
        eprintln!(
            "fencekit: --force beyond the mass-fencing guard needs an audit trail (--audit PATH \
             or FENCEKIT_AUDIT): who forced it and why must be recorded. Nothing was contacted."
        );
        return Err(exit::USAGE);
    };
    if let Err(m) = audit.record_event(&record("max-fence-forced", Some(reason))) {
        eprintln!(
            "fencekit: cannot record the override, so it is not made: {m}. Nothing was contacted."
        );
        return Err(exit::FAILURE);
    }
    eprintln!(
        "fencekit: warning: --force: {action} of {} node(s) by {}, beyond the mass-fencing guard ({}); \
         reason: {reason} (recorded)",
        count.acting,
        local_user(),
        count.describe()
    );
    Ok(())
}

/// The result of a node refused because it is held (nothing contacted).
pub fn held_result(node: &str, h: &Hold, action: Action) -> TargetResult {
    let message = h.refusal(action.as_str());
    let mut r = TargetResult::new(
        node.to_string(),
        action,
        &Err(Failure {
            error: DriverError::new(ErrorKind::Held, Stage::Authenticate, message.clone()),
            last_state: None,
        }),
        Duration::ZERO,
        vec![],
        Traffic::default(),
    );
    r.error = Some(message);
    r
}

// ---- fencekit hold / release -------------------------------------------

/// Target words as a command acting on targets would read them.
#[derive(Parser)]
#[command(name = "fencekit")]
struct Bare {
    #[command(flatten)]
    a: ActionArgs,
}

/// Nodes named by `words`: (the name a hold is kept under, the endpoints
/// held with it). URLs are kept under their canonical endpoint
/// (`ipmi://HOST:PORT`); names and ranges resolve through the inventory
/// when one is given, and stand for themselves otherwise.
fn resolve(
    words: &[String],
    all: bool,
    inventory: Option<&Path>,
) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut push = |n: String, e: Vec<String>| {
        if seen.insert(n.clone()) {
            out.push((n, e));
        }
    };
    // `None` stands for --all (every node of the inventory).
    let requests = words.iter().map(Some).chain(all.then_some(None));
    for w in requests {
        let bare_word = w.filter(|w| !w.contains("://") && inventory.is_none());
        if let Some(w) = bare_word {
            let names = if crate::fleet::hostrange::is_range(w) {
                crate::fleet::hostrange::expand(w).map_err(|e| e.to_string())?
            } else {
                vec![w.clone()]
            };
            for n in names {
                push(n, Vec::new());
            }
            continue;
        }
        let mut argv = vec!["fencekit".to_string()];
        if let Some(i) = inventory {
            argv.extend(["--inventory".to_string(), i.display().to_string()]);
        }
        match w {
            Some(w) => argv.extend(["--".to_string(), w.clone()]),
            None => argv.push("--all".into()),
        }
        let bare = Bare::try_parse_from(argv).map_err(|e| e.to_string())?;
        for p in super::plan::plans(&bare.a)? {
            let eps: Vec<String> = p.levels.iter().map(|m| m.endpoint()).collect();
            if p.name.contains("://") {
                let key = eps.first().cloned().unwrap_or_else(|| p.name.clone());
                push(key, eps);
            } else {
                push(p.name, eps);
            }
        }
    }
    Ok(out)
}

#[derive(Serialize)]
struct HoldRecord<'a> {
    event: &'static str,
    node: &'a str,
    by: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    until: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    endpoints: &'a [String],
}

fn open_audit(path: Option<&Path>) -> Result<Option<Audit>, i32> {
    path.map(Audit::open).transpose().map_err(usage)
}

fn left(h: &Hold) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let s = h.until_epoch.saturating_sub(now);
    match (s / 3600, s / 60 % 60) {
        (0, 0) => format!("{s}s left"),
        (0, m) => format!("{m}m left"),
        (h, m) => format!("{h}h{m:02}m left"),
    }
}

/// `fencekit hold`.
pub fn hold_main(h: HoldArgs) -> i32 {
    if h.list {
        return list(&h);
    }
    let (Some(duration), Some(reason)) = (h.duration, h.reason.as_deref()) else {
        return usage("hold needs --for DUR and --reason TEXT");
    };
    if duration.is_zero() {
        return usage("--for must be longer than 0s");
    }
    if reason.trim().is_empty() {
        return usage("--reason must say why");
    }
    let nodes = match resolve(&h.targets, h.all, h.inventory.as_deref()) {
        Ok(n) => n,
        Err(m) => return usage(m),
    };
    let audit = match open_audit(h.audit.as_deref()) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let by = h.by.clone().unwrap_or_else(local_user);
    for (node, endpoints) in nodes {
        let hold = Hold::new(&node, endpoints, &by, reason, duration);
        if let Err(m) = hold::place(&hold) {
            eprintln!("fencekit: cannot hold {node}: {m}");
            return exit::FAILURE;
        }
        crate::outln!(
            "{node}: held by {by} until {} ({}): {reason}",
            hold.until,
            left(&hold)
        );
        if let Some(audit) = &audit {
            let rec = HoldRecord {
                event: "hold",
                node: &node,
                by: &by,
                reason: Some(reason),
                until: Some(&hold.until),
                endpoints: &hold.endpoints,
            };
            if let Err(m) = audit.record_event(&rec) {
                eprintln!("fencekit: warning: {m}");
            }
        }
    }
    exit::OK
}

/// Warns about every hold file that cannot be read (it holds the node it
/// is named for).
fn warn_unreadable(holds: &[Hold]) {
    for (file, why) in holds.iter().filter_map(|h| h.unreadable.as_ref()) {
        eprintln!(
            "fencekit: warning: cannot read hold file {} ({why}); the node it is named for is \
             held until it is fixed or released",
            file.display()
        );
    }
}

fn list(h: &HoldArgs) -> i32 {
    let holds = match hold::active() {
        Ok(x) => x,
        Err(m) => {
            eprintln!("fencekit: {m}");
            return exit::FAILURE;
        }
    };
    if h.output != Output::Human {
        let doc = serde_json::json!({ "holds": holds });
        crate::outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return exit::OK;
    }
    if holds.is_empty() {
        crate::outln!("no holds");
    }
    warn_unreadable(&holds);
    for x in holds.iter().filter(|x| x.unreadable.is_none()) {
        crate::outln!(
            "{}: held by {} on {} until {} ({}): {}",
            x.node,
            x.by,
            x.host,
            x.until,
            left(x),
            x.reason
        );
    }
    exit::OK
}

/// `fencekit release`.
pub fn release_main(r: ReleaseArgs) -> i32 {
    let nodes = if r.all {
        match hold::active() {
            Ok(holds) => holds
                .into_iter()
                .filter_map(|h| match h.unreadable {
                    // A damaged hold file: released by removing it.
                    Some((file, why)) => {
                        match std::fs::remove_file(&file) {
                            Ok(()) => crate::outln!(
                                "{}: removed (a hold file that could not be read: {why})",
                                file.display()
                            ),
                            Err(e) => eprintln!("fencekit: cannot remove {}: {e}", file.display()),
                        }
                        None
                    }
                    None => Some((h.node, h.endpoints)),
                })
                .collect(),
            Err(m) => {
                eprintln!("fencekit: {m}");
                return exit::FAILURE;
            }
        }
    } else {
        match resolve(&r.targets, false, r.inventory.as_deref()) {
            Ok(n) => n,
            Err(m) => return usage(m),
        }
    };
    let audit = match open_audit(r.audit.as_deref()) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let by = r.by.clone().unwrap_or_else(local_user);
    let mut code = exit::OK;
    for (node, _) in nodes {
        match hold::release(&node) {
            Ok(Some(was)) => {
                crate::outln!(
                    "{node}: released (was held by {} for: {})",
                    was.by,
                    was.reason
                );
                if let Some(audit) = &audit {
                    let rec = HoldRecord {
                        event: "release",
                        node: &node,
                        by: &by,
                        reason: Some(&was.reason),
                        until: None,
                        endpoints: &[],
                    };
                    if let Err(m) = audit.record_event(&rec) {
                        eprintln!("fencekit: warning: {m}");
                    }
                }
            }
            Ok(None) => crate::outln!("{node}: not held"),
            Err(m) => {
                eprintln!("fencekit: {m}");
                code = exit::FAILURE;
            }
        }
    }
    code
}
