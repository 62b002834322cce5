//! Running a plan: every node concurrently up to `parallel`, each with its
//! own deadline, its levels tried in order, and kindness to BMCs.
//!
//! Kindness: at most one session per device at a time (nodes that share a
//! power domain wait for each other; [`crate::lock::DeviceKey`]: the
//! systems of one Redfish service are devices of their own, the whole
//! service excludes them all), a minimum interval between two sessions on
//! one device, at most `per_address` sessions at once to one address (the
//! several devices behind one VirtualBMC or sushy-tools host), an optional
//! stagger for power-on across a range (inrush), and the advisory
//! per-device lock between fencekit processes on this host. Nodes run as
//! tasks on one thread: no thread per target, memory grows with the number
//! of nodes in flight only.
//!
//! Levels stop at a wrong machine: a level whose device reports a different
//! identity than the one pinned means the configuration is wrong for that
//! node, and the next level (a different device, possibly with the same
//! mistake, or the right machine while the wrong one stays unexplained) is
//! not tried. A device that only cannot report its identity is no evidence
//! of a wrong machine, and the next level is tried.

use super::plan::NodePlan;
use super::result::{Attempt, TargetOutcome, TargetResult, Traffic};
use super::sequence::{run_with_extras, Extras, NodeInfo, Reports};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::event::{EventSink, Stamped};
use crate::engine::policy::Policy;
use crate::engine::power::Action;
use crate::engine::run::{run, Cancel, Failure, Outcome};
use crate::kdump::listen::BindError;
use crate::lock;
use crate::lock::DeviceKey;
use crate::method::spec::MethodSpec;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{
    Mutex, OwnedMutexGuard, OwnedRwLockReadGuard, OwnedRwLockWriteGuard, OwnedSemaphorePermit,
    RwLock, Semaphore,
};

/// How a plan is run.
#[derive(Clone, Debug)]
pub struct FleetOptions {
    /// Most nodes in flight at once.
    pub parallel: usize,
    /// For `on` and `reboot`: node i starts i × stagger after the first.
    pub stagger: Duration,
    /// Least time between two sessions on the same device.
    pub bmc_interval: Duration,
    /// Most sessions at once to one address (several devices behind it).
    pub per_address: usize,
    /// Use only this level (1-based).
    pub level: Option<usize>,
    /// Take the per-BMC advisory lock.
    pub lock: bool,
    /// Timing for each action; `deadline` is set per node from `node_timeout`.
    pub policy: Policy,
    /// Each node's deadline, from the moment it starts.
    pub node_timeout: Duration,
    /// `off`/`reboot`: the confirmed-off hook (the command, or each node's
    /// inventory one when `command` is `None`).
    pub hook: super::hook::HookOptions,
    /// `off`/`reboot`: crash dump first.
    pub crashdump: Option<super::sequence::CrashdumpOptions>,
}

/// File descriptors one target in flight may hold (socket, lock sockets, TLS).
const FDS_PER_TARGET: u64 = 4;
/// File descriptors kept free for everything else.
const FDS_RESERVED: u64 = 64;

/// The most targets in flight `limit` open files allow.
fn parallel_within(limit: u64) -> usize {
    (limit.saturating_sub(FDS_RESERVED) / FDS_PER_TARGET).clamp(1, usize::MAX as u64) as usize
}

/// `requested` cut to what the open-files limit allows, with the reason
/// when it was cut: a fan-out that runs out of descriptors fails targets
/// for nothing (and could lose its per-BMC locks). The soft limit is raised
/// first, up to the hard one, when `requested` needs more (10,000 targets
/// at once need about 30,000 descriptors, the usual soft limit is 1,024).
pub fn bounded_parallel(requested: usize) -> (usize, Option<String>) {
    let wanted = (requested as u64)
        .saturating_mul(FDS_PER_TARGET)
        .saturating_add(FDS_RESERVED);
    let limit = crate::runtime::raise_open_files(wanted).soft;
    let max = parallel_within(limit);
    if requested > max {
        (
            max,
            Some(format!(
                "--parallel {requested} needs more open files than the limit of {limit} allows; \
                 running {max} at a time (raise `ulimit -n` for more)"
            )),
        )
    } else {
        (requested, None)
    }
}

/// Watches a fleet run (progress, streaming output). Called on one thread.
pub trait Observer {
    /// An engine event of `node` at `level`.
    fn event(&self, node: &str, level: usize, event: &Stamped);
    /// `node` is finished.
    fn done(&self, result: &TargetResult);
    /// Where a person can confirm a manual fencing, if the front offers it.
    fn prompt(&self) -> Option<&dyn super::manual::Prompt> {
        None
    }
}

struct NodeSink<'a> {
    node: &'a str,
    level: usize,
    timeline: Vec<Stamped>,
    observer: &'a dyn Observer,
}

impl EventSink for NodeSink<'_> {
    fn emit(&mut self, event: &Stamped) {
        self.observer.event(self.node, self.level, event);
        self.timeline.push(event.clone());
    }
}

/// One device's turn within this run: the whole device takes `whole` for
/// writing, a Redfish system of it for reading plus its own `systems` entry.
#[derive(Default)]
struct DeviceSlot {
    whole: Arc<RwLock<()>>,
    systems: RefCell<HashMap<String, Arc<Mutex<()>>>>,
    /// When the last session on the device ended (`--bmc-interval`).
    last: Cell<Option<Instant>>,
}

/// The run's turns: per device, and permits per address.
#[derive(Default)]
struct BmcSlots {
    devices: RefCell<HashMap<String, Rc<DeviceSlot>>>,
    addresses: RefCell<HashMap<String, Arc<Semaphore>>>,
}

/// A turn held on one device.
enum Turn {
    Whole(#[allow(dead_code)] OwnedRwLockWriteGuard<()>),
    System(
        #[allow(dead_code)] OwnedRwLockReadGuard<()>,
        #[allow(dead_code)] OwnedMutexGuard<()>,
    ),
}

/// Everything a session needs before it starts: its devices' turns, then
/// its addresses' permits.
struct Turns {
    devices: Vec<(Rc<DeviceSlot>, Turn)>,
    _permits: Vec<OwnedSemaphorePermit>,
}

impl BmcSlots {
    fn device(&self, key: &DeviceKey) -> Rc<DeviceSlot> {
        self.devices
            .borrow_mut()
            .entry(key.device().to_string())
            .or_default()
            .clone()
    }

    /// Waits for the turn of every key (sorted, so that no two nodes
    /// sharing devices each hold one the other waits for), then for the
    /// interval since the devices' last sessions, then for a permit per
    /// key on its address. Permits come last: a node never holds one
    /// while it waits for a device.
    async fn turn(&self, keys: &[DeviceKey], interval: Duration, per_address: usize) -> Turns {
        let mut devices = Vec::with_capacity(keys.len());
        for key in keys {
            let slot = self.device(key);
            let turn = match key.system() {
                None => Turn::Whole(slot.whole.clone().write_owned().await),
                Some(s) => {
                    let shared = slot.whole.clone().read_owned().await;
                    let own = slot
                        .systems
                        .borrow_mut()
                        .entry(s.to_string())
                        .or_default()
                        .clone();
                    Turn::System(shared, own.lock_owned().await)
                }
            };
            devices.push((slot, turn));
        }
        if let Some(t) = devices.iter().filter_map(|(d, _)| d.last.get()).max() {
            let ready = t + interval;
            if ready > Instant::now() {
                tokio::time::sleep_until(ready.into()).await;
            }
        }
        let mut wanted: BTreeMap<&str, u32> = BTreeMap::new();
        for key in keys {
            *wanted.entry(key.address()).or_default() += 1;
        }
        let limit = per_address.max(1);
        let mut permits = Vec::with_capacity(wanted.len());
        for (address, n) in wanted {
            let sem = self
                .addresses
                .borrow_mut()
                .entry(address.to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(limit)))
                .clone();
            let n = n.min(limit as u32);
            if let Ok(p) = sem.acquire_many_owned(n).await {
                permits.push(p);
            }
        }
        Turns {
            devices,
            _permits: permits,
        }
    }
}

/// Why a wait outside the engine ended early.
enum Stopped {
    /// The node's deadline passed.
    Deadline,
    /// SIGINT/SIGTERM.
    Cancelled,
}

/// `work`, unless the deadline passes or the run is cancelled first: every
/// wait of the fan-out (stagger, a permit, a BMC slot, the lock) goes
/// through here, so none outlives a deadline or ignores a signal.
async fn bounded<T>(
    work: impl std::future::Future<Output = T>,
    deadline: Option<Instant>,
    cancel: &Cancel,
) -> Result<T, Stopped> {
    let mut cancel = cancel.clone();
    let expired = async {
        match deadline {
            Some(d) => tokio::time::sleep_until(d.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Stopped::Cancelled),
        _ = expired => Err(Stopped::Deadline),
        v = work => Ok(v),
    }
}

/// The result of a node stopped before its action reached a device.
fn stopped(node: &str, action: Action, why: Stopped, waiting_for: &str) -> TargetResult {
    let (kind, what) = match why {
        Stopped::Cancelled => (ErrorKind::Interrupted, "stopped by a signal"),
        Stopped::Deadline => (ErrorKind::Timeout, "the deadline passed"),
    };
    let mut r = TargetResult::new(
        node.to_string(),
        action,
        &Err(Failure {
            error: DriverError::new(
                kind,
                Stage::Authenticate,
                format!("{what} while waiting for {waiting_for}; the device was not contacted"),
            ),
            last_state: None,
        }),
        Duration::ZERO,
        vec![],
        Traffic::default(),
    );
    r.node = node.to_string();
    r
}

/// The run's kdump listener, when crash dump first is asked (or why there is none).
type KdumpListener = Option<Result<crate::kdump::listen::Listener, BindError>>;

/// Runs `action` on every node of `plans`; results come back in plan order.
pub async fn run_fleet(
    plans: Vec<NodePlan>,
    action: Action,
    opts: &FleetOptions,
    cancel: Cancel,
    observer: Rc<dyn Observer>,
) -> Vec<TargetResult> {
    let local = tokio::task::LocalSet::new();
    let opts = Rc::new(opts.clone());
    local
        .run_until(async move {
            let sem = Rc::new(Semaphore::new(opts.parallel.max(1)));
            let slots: Rc<BmcSlots> = Rc::new(BmcSlots::default());
            // One kdump socket for the whole run: nodes fenced in parallel share the port.
            let kdump: Rc<KdumpListener> = Rc::new(match &opts.crashdump {
                Some(c) if matches!(action, Action::Off | Action::Reboot) => {
                    Some(crate::kdump::listen::Listener::bind(c.port).await)
                }
                _ => None,
            });
            let mut handles = Vec::with_capacity(plans.len());
            for (i, plan) in plans.into_iter().enumerate() {
                let name = plan.name.clone();
                let (sem, slots, opts, cancel, observer, kdump) = (
                    sem.clone(),
                    slots.clone(),
                    opts.clone(),
                    cancel.clone(),
                    observer.clone(),
                    kdump.clone(),
                );
                let task = tokio::task::spawn_local(async move {
                    if matches!(action, Action::On | Action::Reboot) && !opts.stagger.is_zero() {
                        let stagger = tokio::time::sleep(opts.stagger * i as u32);
                        if let Err(why) = bounded(stagger, None, &cancel).await {
                            let r = stopped(&plan.name, action, why, "its turn (--stagger)");
                            observer.done(&r);
                            return r;
                        }
                    }
                    let _permit = match bounded(sem.acquire(), None, &cancel).await {
                        Ok(p) => p,
                        Err(why) => {
                            let r = stopped(&plan.name, action, why, "a free slot (--parallel)");
                            observer.done(&r);
                            return r;
                        }
                    };
                    // Boxed: a node's run is a large future (about 9 KiB with
                    // its drivers), made only once the node has its slot, so
                    // that nodes still waiting for one cost a few hundred
                    // bytes each (10,000 waiting took 90 MiB).
                    let r = Box::pin(node(
                        plan, action, &opts, &slots, &kdump, cancel, &*observer,
                    ))
                    .await;
                    observer.done(&r);
                    r
                });
                handles.push((name, task));
            }
            // A node whose task panicked is a failed result with the
            // panic's message, reported and counted like any failure.
            super::tasks::join_in_order(handles, |node, why| {
                let r = lost(&node, action, why);
                observer.done(&r);
                r
            })
            .await
        })
        .await
}

/// The result of a node whose task did not finish (a panic in fencekit):
/// a failure, with what is known of it. Whether a power command was sent
/// before is not known: the error says so.
fn lost(node: &str, action: Action, why: String) -> TargetResult {
    let mut r = TargetResult::new(
        node.to_string(),
        action,
        &Err(Failure {
            error: DriverError::new(
                ErrorKind::Internal,
                Stage::Command,
                format!(
                    "fencekit failed on this node ({why}); whether a power command was sent \
                     is not known: check the node's power before acting again"
                ),
            ),
            last_state: None,
        }),
        Duration::ZERO,
        vec![],
        Traffic::default(),
    );
    r.node = node.to_string();
    r
}

fn failed(node: &str, method: &MethodSpec, action: Action, error: DriverError) -> TargetResult {
    TargetResult::new(
        node.to_string(),
        action,
        &Err(Failure {
            error,
            last_state: None,
        }),
        Duration::ZERO,
        vec![],
        Traffic::default(),
    )
    .tap(|r| {
        r.method = Some(method.driver_name().into());
        r.endpoint = Some(method.endpoint());
    })
}

trait Tap: Sized {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}
impl Tap for TargetResult {}

async fn node(
    plan: NodePlan,
    action: Action,
    opts: &FleetOptions,
    slots: &BmcSlots,
    kdump: &KdumpListener,
    cancel: Cancel,
    observer: &dyn Observer,
) -> TargetResult {
    let began = Instant::now();
    let levels: Vec<(usize, &MethodSpec)> = match opts.level {
        Some(l) => plan
            .levels
            .get(l - 1)
            .map(|m| vec![(l, m)])
            .unwrap_or_default(),
        None => plan
            .levels
            .iter()
            .enumerate()
            .map(|(i, m)| (i + 1, m))
            .collect(),
    };
    if levels.is_empty() {
        let mut r = TargetResult::new(
            plan.name.clone(),
            action,
            &Err(Failure {
                error: DriverError::new(
                    ErrorKind::Config,
                    Stage::Authenticate,
                    format!(
                        "node {} has no fencing level {}",
                        plan.name,
                        opts.level.unwrap_or(1)
                    ),
                ),
                last_state: None,
            }),
            Duration::ZERO,
            vec![],
            Traffic::default(),
        );
        r.node = plan.name.clone();
        return r;
    }
    let deadline = began + opts.node_timeout;
    let mut attempts: Vec<Attempt> = Vec::new();
    // One NMI per node: a later level does not interrupt a dump under way.
    let mut nmi_sent = false;
    let mut last: Option<TargetResult> = None;
    for (level, method) in levels {
        // A turn on every device the method talks to (several for outlets
        // on several PDUs). The pause protects BMCs that wedge under
        // bursts; a PDU serves a whole rack's outlets and one request at a
        // time already spares it.
        let keys = method.device_keys();
        let interval = match method.paced() {
            false => Duration::ZERO,
            true => opts.bmc_interval,
        };
        let per_address = method
            .address_limit()
            .map_or(opts.per_address, |l| l.min(opts.per_address));
        let turn = slots.turn(&keys, interval, per_address);
        let turns = match bounded(turn, Some(deadline), &cancel).await {
            Ok(g) => g,
            Err(why) => {
                let mut r = stopped(
                    &plan.name,
                    action,
                    why,
                    "another node on the same device (--bmc-interval, --max-per-address)",
                );
                r.level = Some(level);
                r.method = Some(method.driver_name().into());
                r.endpoint = Some(method.endpoint());
                r.elapsed_ms = began.elapsed().as_millis() as u64;
                r.attempts = attempts;
                return r;
            }
        };
        let mut result = attempt(
            &plan,
            level,
            method,
            action,
            opts,
            deadline,
            kdump.as_ref().filter(|_| !nmi_sent),
            cancel.clone(),
            observer,
        )
        .await;
        nmi_sent |= result.crashdump.as_ref().is_some_and(|c| c.nmi == "sent");
        let done = Instant::now();
        for (d, _) in &turns.devices {
            d.last.set(Some(done));
        }
        drop(turns);
        result.node = plan.name.clone();
        result.level = Some(level);
        result.elapsed_ms = began.elapsed().as_millis() as u64;
        // A power-off sent through a method that cannot observe it (the
        // SSH host profile) goes on to the next level, which may confirm
        // it; a cycle or an interrupt that was accepted must not be repeated.
        // A failed hook is not a failed level: the node is off (confirmed);
        // another level would only fence it again and run the hook twice.
        // A command whose outcome is unknown is not repeated by the next
        // level either (at most once), an off excepted
        // (`TargetResult::next_level_may_act`).
        let wrong_machine = result.error_kind == Some(ErrorKind::IdentityMismatch);
        let next = result.next_level_may_act();
        // (A URL target has one level and no configuration to blame.)
        if wrong_machine && !plan.name.contains("://") {
            let skipped: Vec<String> = plan
                .levels
                .iter()
                .enumerate()
                .skip(level)
                .filter(|_| opts.level.is_none())
                .map(|(i, _)| (i + 1).to_string())
                .collect();
            let e = result.error.get_or_insert_with(String::new);
            e.push_str(&format!(
                "; the configuration of node {} is wrong: level {level} ({}) controls another machine",
                plan.name,
                method.endpoint()
            ));
            if !skipped.is_empty() {
                e.push_str(&format!("; level(s) {} not tried", skipped.join(", ")));
            }
        }
        if next {
            attempts.push(Attempt {
                level,
                method: method.driver_name().into(),
                endpoint: method.endpoint(),
                error: result.error.clone().unwrap_or_default(),
            });
            last = Some(result);
            continue;
        }
        attempts.retain(|a| a.level != level);
        result.attempts = attempts;
        return result;
    }
    let mut r = last.expect("at least one level ran");
    attempts.pop();
    r.attempts = attempts;
    r
}

#[allow(clippy::too_many_arguments)]
async fn attempt(
    plan: &NodePlan,
    level: usize,
    method: &MethodSpec,
    action: Action,
    opts: &FleetOptions,
    deadline: Instant,
    kdump: Option<&Result<crate::kdump::listen::Listener, BindError>>,
    cancel: Cancel,
    observer: &dyn Observer,
) -> TargetResult {
    let name = plan.name.as_str();
    if let MethodSpec::Manual { instructions, .. } = method {
        let began = Instant::now();
        let mut sink = NodeSink {
            node: name,
            level,
            timeline: Vec::new(),
            observer,
        };
        let r = super::manual::fence_by_hand(
            name,
            action,
            instructions,
            deadline,
            &mut sink,
            observer.prompt(),
            cancel,
        )
        .await;
        let mut t = TargetResult::new(
            method.endpoint(),
            action,
            &r,
            began.elapsed(),
            sink.timeline,
            Traffic::default(),
        );
        t.method = Some("manual".into());
        t.endpoint = Some(method.endpoint());
        return t;
    }
    // Every device's lock, in the sorted order of device_keys (no
    // lock-order deadlock between processes), each wait bounded and
    // cancellable.
    let mut _locks = Vec::new();
    if opts.lock {
        let what = format!("{} {name} (level {level})", action.as_str());
        for key in method.device_keys() {
            let acquiring = lock::acquire(&key, Some(deadline), &what, &lock::to_tracing);
            match bounded(acquiring, None, &cancel).await {
                Ok(Ok(l)) => _locks.push(l),
                Ok(Err(e)) => return failed(name, method, action, e),
                Err(why) => {
                    let mut r =
                        stopped(name, action, why, "another fencekit process on this device");
                    r.method = Some(method.driver_name().into());
                    r.endpoint = Some(method.endpoint());
                    return r;
                }
            }
        }
    }
    let mut driver = match method.build(Some(deadline)).await {
        Ok(d) => d,
        Err(e) => return failed(name, method, action, e),
    };
    let policy = Policy {
        deadline: Some(crate::engine::clock::from_std(deadline)),
        expect: method.expected().clone(),
        ..opts.policy.clone()
    };
    let began = Instant::now();
    let mut sink = NodeSink {
        node: name,
        level,
        timeline: Vec::new(),
        observer,
    };
    let hook_command = match action {
        Action::Off | Action::Reboot => opts
            .hook
            .command
            .as_deref()
            .or(plan.on_confirmed_off.as_deref()),
        _ => None,
    };
    let crashdump = match (action, &opts.crashdump, kdump) {
        (Action::Off | Action::Reboot, Some(c), Some(l)) => Some((c, l)),
        _ => None,
    };
    let (r, reports): (Result<Outcome, Failure>, Reports) =
        if hook_command.is_some() || crashdump.is_some() {
            let info = NodeInfo {
                name,
                address: plan.address.as_deref(),
                level,
                method: method.driver_name(),
                endpoint: method.endpoint(),
                effect: method.device().map(|m| m.effect()).unwrap_or_default(),
                lock: lock::Inherit::from_locks(&_locks),
            };
            let extras = Extras {
                crashdump,
                hook: hook_command.map(|c| (c, &opts.hook)),
            };
            run_with_extras(
                &mut driver,
                action,
                &policy,
                &mut sink,
                cancel,
                &info,
                &extras,
            )
            .await
        } else {
            (
                run(&mut driver, action, &policy, &mut sink, cancel).await,
                Reports::default(),
            )
        };
    let (sent, received, retransmits) = driver.traffic();
    let mut t = TargetResult::new(
        method.endpoint(),
        action,
        &r,
        began.elapsed(),
        sink.timeline,
        Traffic {
            sent,
            received,
            retransmits,
        },
    );
    t.method = Some(method.driver_name().into());
    t.endpoint = Some(method.endpoint());
    t.effect = method.device().map(|m| m.effect()).unwrap_or_default();
    t.crashdump = reports.crashdump;
    if let Some(h) = reports.hook {
        if !h.ok {
            t.error_kind = Some(ErrorKind::HookFailed);
            t.error = Some(hook_failure(action, &h, t.outcome));
            t.settle();
        }
        t.hook = Some(h);
    }
    t
}

/// The error of a result whose confirmed-off hook failed: the node's state
/// comes first, so that nobody reads it as "not fenced".
fn hook_failure(
    action: Action,
    h: &super::hook::HookReport,
    outcome: Option<TargetOutcome>,
) -> String {
    match (action, outcome) {
        (Action::Off, _) => format!(
            "the node is off (confirmed), but the confirmed-off hook failed: {}",
            h.detail
        ),
        (_, Some(TargetOutcome::Rebooted)) => format!(
            "rebooted (off confirmed, then on confirmed), but the confirmed-off hook failed: {}; \
             the node was powered on anyway (--on-despite-hook-failure)",
            h.detail
        ),
        (_, Some(TargetOutcome::FencedNotRestored)) if !h.powered_on_anyway => format!(
            "the node is fenced (off, confirmed) and was left off: the confirmed-off hook \
             failed ({}); fencekit does not power on a node whose clean-up failed \
             (--on-despite-hook-failure does)",
            h.detail
        ),
        _ => format!(
            "the node is fenced (off, confirmed), the confirmed-off hook failed ({}), and the \
             power-on did not succeed",
            h.detail
        ),
    }
}
