//! What the service's handlers share: the main chassis, the options, the
//! decoy systems, and the mutable state behind one lock (sessions, tasks,
//! the fault knobs' progress, statistics); and the reset types offered now.

use super::options::{RedfishFaults, RedfishLabOptions, RedfishStats};
use crate::lab::bmc::Bmc;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

pub(super) struct Task {
    pub(super) op: u8,
    pub(super) polls_left: u32,
    pub(super) fail: bool,
    pub(super) done: bool,
    /// The reset was applied when accepted; the task runs until the
    /// chassis' transition ends (AMI with asynchronous operations).
    pub(super) follows_transition: bool,
}

pub(super) struct Inner {
    pub(super) faults: RedfishFaults,
    pub(super) sessions: HashMap<String, u64>,
    pub(super) next_session: u64,
    pub(super) tasks: HashMap<u64, Task>,
    pub(super) next_task: u64,
    pub(super) reset_errors_sent: u32,
    /// The stale-read flip happened.
    pub(super) flipped: bool,
    /// The first request arrived.
    pub(super) begun: bool,
    pub(super) stats: RedfishStats,
}

pub(super) struct Shared {
    pub(super) bmc: Bmc,
    pub(super) opts: RedfishLabOptions,
    pub(super) decoys: Vec<(String, Bmc)>,
    pub(super) inner: Mutex<Inner>,
}

/// The reset types offered now: the configured ones, without `Nmi` while
/// the chassis has the `no-nmi` fault.
pub(super) fn reset_types(shared: &Shared) -> Vec<String> {
    let no_nmi = shared.bmc.lock().faults.no_nmi;
    shared
        .opts
        .reset_types
        .iter()
        .filter(|t| !(no_nmi && *t == "Nmi"))
        .cloned()
        .collect()
}

impl Shared {
    pub(super) fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}
