//! `fencekit …`: from parsed options to engine runs, output and exit code.

use super::args::{ActionArgs, Cli, Command, Method, Output, SafetyArgs};
use super::plan::{begin_with_inventory, policy};
use super::render::{human_line, JsonLines, Progress, Silent};
use crate::engine::error::ErrorKind;
use crate::engine::power::{Action, PowerState};
use crate::engine::run::Cancel;
use crate::exit;
use crate::fleet::audit::Audit;
use crate::fleet::fanout::{run_fleet, FleetOptions, Observer};
use crate::fleet::plan::NodePlan;
use crate::fleet::result::{Report, Standing, TargetOutcome, TargetResult};
use crate::method::spec::MethodSpec;
use clap::Parser;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::rc::Rc;

/// Entry point of the native command line.
pub fn main(args: Vec<OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
        }
    };
    if cli.command.misplaced_metrics() {
        eprintln!("fencekit: --output openmetrics is for check only");
        return exit::USAGE;
    }
    match cli.command {
        Command::Status(a) => action(Action::Status, a, &SafetyArgs::default()),
        Command::On(a) => action(Action::On, a, &SafetyArgs::default()),
        Command::Off(f) => action(Action::Off, f.action, &f.safety),
        Command::Reboot(f) => action(Action::Reboot, f.action, &f.safety),
        Command::Monitor(a) => action(Action::Monitor, a, &SafetyArgs::default()),
        Command::Hold(h) => super::safety::hold_main(h),
        Command::Release(r) => super::safety::release_main(r),
        Command::Verify(v) => super::verify::verify(v),
        Command::Check(c) => super::check::main(c),
        Command::List(a) => super::list::main(a),
        Command::Ack { nodes, by } => {
            let mut code = exit::OK;
            for n in nodes {
                let tty = std::fs::read_link("/proc/self/fd/0")
                    .ok()
                    .filter(|_| std::io::IsTerminal::is_terminal(&std::io::stdin()))
                    .map(|p| p.display().to_string());
                match crate::fleet::manual::acknowledge(&n, by.as_deref(), tty) {
                    Ok(_) => crate::outln!("{n}: acknowledged as fenced by hand"),
                    Err(m) => {
                        eprintln!("fencekit: cannot acknowledge {n}: {m}");
                        code = exit::FAILURE;
                    }
                }
            }
            code
        }
        #[cfg(feature = "lab")]
        Command::Lab(l) => super::lab::main(l),
        Command::Completions { shell } => super::generate::completions_main(&shell),
        Command::Man { page } => super::generate::man_main(page.as_deref()),
        #[cfg(feature = "lab")]
        Command::Demo(d) => super::demo::main(d),
        Command::Agent { name, args } => crate::agent_entry(&name, args),
    }
}

/// One line of the plan of `--dry-run`.
struct PlanRow<'a> {
    node: &'a str,
    level: usize,
    method: &'static str,
    endpoint: crate::method::spec::EndpointUrl<'a>,
    username: &'a str,
    /// How the credential reads, and whether it resolves.
    credential: Checked,
    check: Cow<'static, str>,
    detail: Detail<'a>,
    expect: &'a crate::engine::identity::ExpectedIdentity,
}

impl PlanRow<'_> {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "node": self.node, "level": self.level, "method": self.method,
            "endpoint": self.endpoint.to_string(), "username": self.username,
            "credential": self.credential.0, "credential_check": self.check,
            "detail": self.detail.to_string(), "expect": self.expect,
        })
    }
}

/// How a credential reference reads, and whether it resolves (shared:
/// 200,000 rows may show one).
type Checked = std::rc::Rc<(String, Result<(), String>)>;

/// Whether credential references resolve, and how they read, each distinct
/// one checked once (100,000 nodes sharing one password file open it once,
/// not 200,000 times; once per thread where helper threads print).
#[derive(Default)]
struct CredentialChecks {
    files: HashMap<std::path::PathBuf, Checked>,
    variables: HashMap<String, Checked>,
    /// The last reference looked up: rows in a row mostly share one.
    last: Option<(crate::method::credential::CredentialRef, Checked)>,
}

impl CredentialChecks {
    /// How `c` reads, and whether it resolves.
    fn check(&mut self, c: &crate::method::credential::CredentialRef) -> Checked {
        use crate::method::credential::CredentialRef;
        if let Some((r, found)) = &self.last {
            let same = match (r, c) {
                (CredentialRef::File(a), CredentialRef::File(b)) => a.as_os_str() == b.as_os_str(),
                (CredentialRef::Env(a), CredentialRef::Env(b)) => a == b,
                _ => false,
            };
            if same {
                return found.clone();
            }
        }
        let found = self.lookup(c);
        if matches!(c, CredentialRef::File(_) | CredentialRef::Env(_)) {
            self.last = Some((c.clone(), found.clone()));
        }
        found
    }

    fn lookup(&mut self, c: &crate::method::credential::CredentialRef) -> Checked {
        use crate::method::credential::CredentialRef;
        let seen = match c {
            CredentialRef::File(p) => self.files.get(p.as_path()),
            CredentialRef::Env(v) => self.variables.get(v.as_str()),
            other => {
                return Checked::new((other.describe(), other.check().map_err(|e| e.to_string())))
            }
        };
        if let Some(known) = seen {
            return known.clone();
        }
        let found = Checked::new((c.describe(), c.check().map_err(|e| e.to_string())));
        match c {
            CredentialRef::File(p) => self.files.insert(p.clone(), found.clone()),
            CredentialRef::Env(v) => self.variables.insert(v.clone(), found.clone()),
            _ => None,
        };
        found
    }
}

/// The plan's row for level `i` (from 0) of `p`, with its credential checked;
/// `ok` is cleared when a reference does not resolve.
fn plan_row<'a>(
    p: &'a NodePlan,
    i: usize,
    m: &'a MethodSpec,
    checks: &mut CredentialChecks,
    ok: &mut bool,
) -> PlanRow<'a> {
    let credential = checks.check(m.credential());
    let mut check = match &credential.1 {
        Ok(()) => Cow::Borrowed("ok"),
        Err(e) => {
            *ok = false;
            Cow::Owned(format!("MISSING: {e}"))
        }
    };
    // A method may read more references (a PDU method: up to three per PDU).
    for (label, r) in m.credentials() {
        let Some(label) = label else { continue };
        if let Err(e) = &checks.check(r).1 {
            *ok = false;
            check = Cow::Owned(format!("MISSING: {label}: {e}"));
        }
    }
    PlanRow {
        node: &p.name,
        level: i + 1,
        method: m.driver_name(),
        endpoint: m.endpoint_url(),
        username: m.username(),
        credential,
        check,
        detail: Detail(m),
        expect: m.expected(),
    }
}

/// How a level will be reached (its protocol's settings), and who it is
/// pinned to: written where it is shown, not kept.
struct Detail<'a>(&'a MethodSpec);

impl std::fmt::Display for Detail<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.description())?;
        let pin = self.0.expected();
        if !pin.is_empty() {
            f.write_str(", pinned to ")?;
            let parts = pin
                .uuid
                .iter()
                .map(|u| ("uuid", u.as_str()))
                .chain(pin.serial.iter().map(|s| ("serial", s.as_str())))
                .chain(
                    pin.names
                        .iter()
                        .map(|n| (n.source.as_str(), n.value.as_str())),
                );
            for (k, (what, value)) in parts.enumerate() {
                if k > 0 {
                    f.write_str(" and ")?;
                }
                write!(f, "{what} {value}")?;
            }
        }
        Ok(())
    }
}

/// The JSON plan, written as it is produced: one row at a time rather than
/// a document of 200,000 rows built first (the same bytes as
/// `to_string_pretty` of that document: keys in order, rows in plan order).
struct PlanDoc<'a, I> {
    action: Action,
    rows: std::cell::RefCell<Option<I>>,
    extra: &'a serde_json::Map<String, serde_json::Value>,
}

impl<I: Iterator<Item = serde_json::Value>> serde::Serialize for PlanDoc<'_, I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Rows<'r, I>(&'r std::cell::RefCell<Option<I>>);
        impl<I: Iterator<Item = serde_json::Value>> serde::Serialize for Rows<'_, I> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.borrow_mut().take().into_iter().flatten())
            }
        }
        // A JSON object's keys in order (serde_json's map is sorted);
        // a field of `extra` replaces one of ours, as `extend` did.
        let mut keys: std::collections::BTreeSet<&str> =
            self.extra.keys().map(String::as_str).collect();
        keys.extend(["action", "plan"]);
        let mut map = s.serialize_map(Some(keys.len()))?;
        for k in keys {
            match (self.extra.get(k), k) {
                (Some(v), _) => map.serialize_entry(k, v)?,
                (None, "action") => map.serialize_entry(k, &self.action)?,
                _ => map.serialize_entry(k, &Rows(&self.rows))?,
            }
        }
        map.end()
    }
}

/// Nodes whose plan rows one helper thread makes at a time.
const PRINT_CHUNK: usize = 96;

/// Below this many nodes, the plan is printed by the calling thread alone.
const PRINT_PARALLEL_FROM: usize = 4096;

/// Prints the plan of `--dry-run` (with `extra` lines, or fields in JSON);
/// false when a credential reference is broken. Streamed: nothing of a row
/// outlives its line (or, for a large human plan, its chunk of rows).
fn print_plan(
    action: Action,
    plans: &[NodePlan],
    a: &ActionArgs,
    extra: (Vec<String>, serde_json::Map<String, serde_json::Value>),
) -> bool {
    use std::io::Write as _;
    let mut ok = true;
    let mut checks = CredentialChecks::default();
    let selected = |i: usize| a.level.is_none_or(|l| l as usize == i + 1);
    // Errors writing stdout (a closed pipe) are ignored, as outln! does.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if a.output == Output::Human {
        let _ = writeln!(
            out,
            "plan: {action} on {} node(s), at most {} at once; nothing is contacted",
            plans.len(),
            a.parallel
        );
        // A large plan's rows are made on helper threads, a chunk of nodes
        // at a time (each thread with its own credential checks), and
        // written in plan order. (Small chunks: a chunk's text stays below
        // the size the allocator maps and unmaps for each.)
        let rows = |checks: &mut CredentialChecks, chunk: &[NodePlan]| {
            let (mut text, mut good) = (Vec::with_capacity(PRINT_CHUNK * 400), true);
            for p in chunk {
                for (i, m) in p.levels.iter().enumerate().filter(|(i, _)| selected(*i)) {
                    let r = plan_row(p, i, m, checks, &mut good);
                    let _ = writeln!(
                        text,
                        "  {}  level {}  {} {}  user '{}'  password: {} ({})  {}",
                        r.node,
                        r.level,
                        r.method,
                        r.endpoint,
                        r.username,
                        r.credential.0,
                        r.check,
                        r.detail,
                    );
                }
            }
            (text, good)
        };
        let _ = crate::fleet::inorder::in_order(
            plans.chunks(PRINT_CHUNK),
            plans.len() >= PRINT_PARALLEL_FROM,
            CredentialChecks::default,
            rows,
            |(text, good)| {
                ok &= good;
                let _ = out.write_all(&text);
                Ok::<_, std::convert::Infallible>(true)
            },
        );
        for line in &extra.0 {
            let _ = writeln!(out, "{line}");
        }
    } else {
        let rows = plans.iter().flat_map(|p| {
            p.levels
                .iter()
                .enumerate()
                .filter(|(i, _)| selected(*i))
                .map(move |(i, m)| (p, i, m))
        });
        let ok = std::cell::RefCell::new(&mut ok);
        let checks = std::cell::RefCell::new(&mut checks);
        let doc = PlanDoc {
            action,
            rows: std::cell::RefCell::new(Some(rows.map(|(p, i, m)| {
                plan_row(p, i, m, &mut checks.borrow_mut(), &mut ok.borrow_mut()).json()
            }))),
            extra: &extra.1,
        };
        let _ = serde_json::to_writer_pretty(&mut out, &doc);
        let _ = writeln!(out);
    }
    let _ = out.flush();
    ok
}

fn action(action: Action, a: ActionArgs, safety: &SafetyArgs) -> i32 {
    let (plans, inventory) = match begin_with_inventory(&a) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let Err(m) = refuse_host_only(action, &plans, &a) {
        eprintln!("fencekit: {m}");
        return exit::USAGE;
    }
    // Holds, the mass-fencing guard and the extra steps' options: decided
    // before anything is contacted.
    let prep = match super::safety::prepare(action, &a, safety, &plans, inventory.as_ref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if a.dry_run {
        let extra = (
            prep.dry_run_lines(action, safety.force),
            prep.dry_run_json(safety.force),
        );
        let refused = prep.exceeds() && !safety.force;
        let printed = print_plan(action, &plans, &a, extra);
        // The process ends here: its memory goes back whole, without
        // freeing 100,000 plans one allocation at a time.
        std::mem::forget(plans);
        return if printed && !refused {
            exit::OK
        } else {
            exit::USAGE
        };
    }
    let audit = match a.audit.as_deref().map(Audit::open).transpose() {
        Ok(x) => x,
        Err(m) => {
            eprintln!("fencekit: {m}");
            return exit::USAGE;
        }
    };
    if let Err(code) = super::safety::enforce(&prep, action, safety, &plans, audit.as_ref()) {
        return code;
    }
    // Held nodes are refused here; the others go on. Results keep plan order.
    let holds: HashMap<&str, &crate::fleet::hold::Hold> =
        prep.held.iter().map(|(n, h)| (n.as_str(), h)).collect();
    let order: HashMap<String, usize> = if holds.is_empty() {
        HashMap::new()
    } else {
        plans
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), i))
            .collect()
    };
    let (plans, held): (Vec<NodePlan>, Vec<NodePlan>) = plans
        .into_iter()
        .partition(|p| !holds.contains_key(p.name.as_str()));
    let mut refused: Vec<TargetResult> = held
        .iter()
        .filter_map(|p| {
            let h = holds.get(p.name.as_str())?;
            Some(super::safety::held_result(&p.name, h, action))
        })
        .collect();
    let Some(rt) = crate::runtime::runtime("fencekit") else {
        return exit::FAILURE;
    };
    let (parallel, cut) = crate::fleet::fanout::bounded_parallel(a.parallel as usize);
    if let Some(why) = cut {
        eprintln!("fencekit: warning: {why}");
    }
    let opts = FleetOptions {
        parallel,
        stagger: a.stagger,
        bmc_interval: a.bmc_interval,
        per_address: a.max_per_address as usize,
        level: a.level.map(|l| l as usize),
        lock: !a.no_lock,
        policy: policy(&a),
        node_timeout: a.timeout,
        hook: prep.hook.clone(),
        crashdump: prep.crashdump.clone(),
    };
    let verify = a.verify && matches!(action, Action::Off | Action::Reboot);
    let verified_reboot = verify && action == Action::Reboot && a.method == Method::Onoff;
    let observer: Rc<dyn Observer> = match a.output {
        // With --verify a node's result is known only once it is verified:
        // its `done` line waits until then.
        Output::Jsonl if verify => Rc::new(EventsOnly(JsonLines)),
        Output::Jsonl => Rc::new(JsonLines),
        Output::Human => Rc::new(Progress::new(
            &plans,
            action,
            1 + u64::from(verified_reboot),
        )),
        Output::Json | Output::Openmetrics => Rc::new(Silent),
    };
    let run_phase = |plans: Vec<NodePlan>, action: Action| {
        rt.block_on(async {
            let (handle, cancel) = Cancel::new();
            let signals = tokio::spawn(crate::runtime::watch_signals(handle));
            let r = run_fleet(plans, action, &opts, cancel, observer.clone()).await;
            signals.abort();
            r
        })
    };
    let mut results = if verified_reboot {
        reboot_verified(&run_phase, &rt, plans, &a, prep.hook.on_despite_failure)
    } else if verify {
        let mut r = run_phase(plans.clone(), action);
        verify_results(&rt, plans, action, &a, &mut r);
        r
    } else {
        run_phase(plans, action)
    };
    drop(observer);
    if !refused.is_empty() {
        results.append(&mut refused);
        results.sort_by_key(|r| order.get(&r.node).copied());
    }
    if let Some(audit) = &audit {
        for r in &results {
            if let Err(m) = audit.record(r) {
                eprintln!("fencekit: warning: {m}");
            }
        }
    }
    match a.output {
        Output::Json | Output::Openmetrics => {
            // Written as it is encoded (10,000 results are megabytes).
            use std::io::Write as _;
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            match serde_json::to_writer_pretty(&mut out, &Report { results: &results }) {
                Ok(()) => {
                    let _ = writeln!(out);
                }
                Err(e) if e.is_io() => {}
                Err(e) => eprintln!("fencekit: cannot encode JSON: {e}"),
            }
            let _ = out.flush();
        }
        Output::Jsonl if verify => results.iter().for_each(|r| JsonLines.done(r)),
        Output::Jsonl => {}
        Output::Human if results.len() == 1 => {
            let r = &results[0];
            // A result (proven or not, sent or confirmed) goes to stdout;
            // a failure to act goes to stderr.
            if r.verdict.is_some() || r.standing() != Standing::Failed {
                crate::outln!("{}", human_line(r));
            } else {
                eprintln!("fencekit: {}", human_line(r));
            }
            if let Some(v) = &r.verify {
                super::verify::print_report(v);
            }
        }
        Output::Human => {
            crate::outln!("{}", super::render::table(&results));
            for r in &results {
                if let Some(v) = r.verify.as_ref().filter(|v| v.exit_code() != 0) {
                    super::verify::print_report(v);
                }
            }
            let failed = results
                .iter()
                .filter(|r| r.standing() == Standing::Failed)
                .count();
            let unproven = results
                .iter()
                .filter(|r| r.standing() == Standing::NotProven)
                .count();
            if failed > 0 {
                eprintln!("fencekit: {failed} of {} target(s) failed", results.len());
            }
            if unproven > 0 {
                eprintln!(
                    "fencekit: {unproven} of {} target(s) not proven (see the outcome column)",
                    results.len()
                );
            }
        }
    }
    exit_code(action, &results)
}

/// The overall exit code (SPEC §3): 1 when any target failed, else 3 when
/// any result is not proven (a verify verdict, a command sent unverified),
/// else 2 for `status` with a target off, else 0.
pub fn exit_code(action: Action, results: &[TargetResult]) -> i32 {
    let codes: Vec<i32> = results.iter().map(TargetResult::exit_code).collect();
    if codes.contains(&exit::FAILURE) {
        return exit::FAILURE;
    }
    if codes.contains(&exit::UNPROVEN) {
        return exit::UNPROVEN;
    }
    if action == Action::Status && results.iter().any(|r| r.state == Some(PowerState::Off)) {
        return exit::STATUS_OFF;
    }
    exit::OK
}

/// Refuses an `off` or `reboot` of a node whose only fencing level is a
/// host profile (a command run on the node itself), unless the operator
/// opted in: such a node is only asked to power itself off, which nothing
/// can observe.
fn refuse_host_only(action: Action, plans: &[NodePlan], a: &ActionArgs) -> Result<(), String> {
    if !matches!(action, Action::Off | Action::Reboot) || a.allow_host_only {
        return Ok(());
    }
    let level = a.level.map(|l| l as usize);
    match plans
        .iter()
        .find(|p| p.host_only(level) && !p.allow_host_only)
    {
        None => Ok(()),
        Some(p) => Err(format!(
            "{}: its only fencing level{} is the host profile (a command run on the node \
             itself), which asks the node to power itself off and cannot observe it off (a hung \
             or partitioned node is not fenced); add a BMC or PDU level, or opt in with \
             --allow-host-only (inventory: allow_host_only = true) and prove each result with \
             --verify",
            p.name,
            p.levels
                .get(level.map_or(0, |l| l - 1))
                .map(|m| format!(" ({})", m.endpoint()))
                .unwrap_or_default()
        )),
    }
}

/// `reboot --verify` (on/off method): an off, verified, then an on,
/// verified, so that a BMC that only claims the off cannot pass a reboot.
/// A node whose off is not proven is left as it is (not powered on).
/// A confirmed-off hook runs in the off (as for `off`); when it fails the
/// node is left off unless `on_despite_hook_failure`, as without --verify.
fn reboot_verified(
    run_phase: &dyn Fn(Vec<NodePlan>, Action) -> Vec<TargetResult>,
    rt: &crate::runtime::Runtime,
    plans: Vec<NodePlan>,
    a: &ActionArgs,
    on_despite_hook_failure: bool,
) -> Vec<TargetResult> {
    let mut offs = run_phase(plans.clone(), Action::Off);
    verify_results(rt, plans.clone(), Action::Off, a, &mut offs);
    let interrupted = offs
        .iter()
        .any(|r| r.error_kind == Some(ErrorKind::Interrupted));
    // Nodes whose off allows the on (a set of names, not a scan per node).
    let may_power_on: HashSet<&str> = offs
        .iter()
        .filter(|r| {
            let proven = r.verify.as_ref().is_some_and(|v| v.exit_code() == exit::OK);
            let hook_failed = r.error_kind == Some(ErrorKind::HookFailed);
            r.action_outcome.is_some_and(|o| !o.unverified())
                && (r.ok || (hook_failed && proven && on_despite_hook_failure))
        })
        .map(|r| r.node.as_str())
        .collect();
    let on_plans: Vec<NodePlan> = plans
        .into_iter()
        .filter(|p| !interrupted && may_power_on.contains(p.name.as_str()))
        .collect();
    let mut ons = if on_plans.is_empty() {
        Vec::new()
    } else {
        run_phase(on_plans.clone(), Action::On)
    };
    verify_results(rt, on_plans, Action::On, a, &mut ons);
    let mut ons: HashMap<String, TargetResult> =
        ons.into_iter().map(|r| (r.node.clone(), r)).collect();
    offs.into_iter()
        .map(|off| {
            let on = ons.remove(&off.node);
            TargetResult::join_reboot(off, on)
        })
        .collect()
}

/// An observer that passes events on but keeps results back (they are
/// printed once verified).
struct EventsOnly<O>(O);

impl<O: Observer> Observer for EventsOnly<O> {
    fn event(&self, node: &str, level: usize, event: &crate::engine::event::Stamped) {
        self.0.event(node, level, event)
    }
    fn done(&self, _: &TargetResult) {}
    fn prompt(&self) -> Option<&dyn crate::fleet::manual::Prompt> {
        self.0.prompt()
    }
}

/// `--verify` after `off` / `reboot`: verifies every node whose action
/// completed or was sent unverified, and folds each report into its result.
fn verify_results(
    rt: &crate::runtime::Runtime,
    plans: Vec<NodePlan>,
    action: Action,
    a: &ActionArgs,
    results: &mut [TargetResult],
) {
    let expect_of = |r: &TargetResult| match (action, r.outcome) {
        // A reboot through a method that cannot observe off stopped at the off.
        (_, Some(TargetOutcome::OffSent)) | (Action::Off, _) => PowerState::Off,
        _ => PowerState::On,
    };
    for expect in [PowerState::Off, PowerState::On] {
        // Nodes to verify (by name: a set, not a scan of the results per node).
        let due: HashSet<&str> = results
            .iter()
            .filter(|r| {
                // Confirmed, or sent in a way a proof can complete (not
                // an unobserved cycle); a failed confirmed-off hook does
                // not change what the off did.
                let acted =
                    r.verification_can_prove() || r.error_kind == Some(ErrorKind::HookFailed);
                acted && expect_of(r) == expect
            })
            .map(|r| r.node.as_str())
            .collect();
        let todo: Vec<NodePlan> = plans
            .iter()
            .filter(|p| due.contains(p.name.as_str()))
            .cloned()
            .collect();
        if todo.is_empty() {
            continue;
        }
        let opts = super::verify::default_options(a, expect);
        let reports = rt.block_on(crate::fleet::verify::verify_all(&todo, &opts));
        // The first result of each node, as a scan would find it.
        let mut at: HashMap<String, usize> = HashMap::new();
        for (i, r) in results.iter().enumerate() {
            at.entry(r.node.clone()).or_insert(i);
        }
        for rep in reports {
            if let Some(&i) = at.get(&rep.node) {
                results[i].fold_verify(rep);
            }
        }
    }
}
