//! Pure decisions over the API's answers: what a VirtualMachine, its
//! VirtualMachineInstance, its virt-launcher pods and their nodes say about
//! whether the guest runs; what a refusal (`Status`) means. No I/O.
//!
//! The rule for off: the VMI is gone or final (`Succeeded`/`Failed`) **and**
//! no virt-launcher pod of the VM is alive, judged from a current report —
//! a pod counts as gone only when it is not listed or its phase is final; a
//! pod that is not final (Running, Pending, Unknown, Terminating) on a node
//! that is Ready will be gone soon (a transition), on a node that is not
//! Ready (or gone) its qemu may still run and nobody can say otherwise:
//! not off, the node is named. A `Failed` VMI whose node is not Ready is not
//! off either (KubeVirt marks a VMI failed when its node stops answering).

use crate::engine::power::{Observed, PowerState, Transition};
use serde_json::Value;

/// The run strategy of a VirtualMachine (`spec.runStrategy`, or the
/// deprecated `spec.running`: true is Always, false Halted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunStrategy {
    /// Always running: KubeVirt starts it again whenever it stops.
    Always,
    /// Started again when it fails, not when the guest shuts down.
    RerunOnFailure,
    /// Started and stopped only by request.
    Manual,
    /// Stopped.
    Halted,
    /// Started once.
    Once,
    /// Something this version does not know.
    Other(String),
}

impl RunStrategy {
    fn parse(s: &str) -> RunStrategy {
        match s {
            "Always" => RunStrategy::Always,
            "RerunOnFailure" => RunStrategy::RerunOnFailure,
            "Manual" => RunStrategy::Manual,
            "Halted" => RunStrategy::Halted,
            "Once" => RunStrategy::Once,
            o => RunStrategy::Other(printable(o, 40)),
        }
    }

    /// As the API spells it.
    pub fn as_str(&self) -> &str {
        match self {
            RunStrategy::Always => "Always",
            RunStrategy::RerunOnFailure => "RerunOnFailure",
            RunStrategy::Manual => "Manual",
            RunStrategy::Halted => "Halted",
            RunStrategy::Once => "Once",
            RunStrategy::Other(s) => s,
        }
    }
}

/// The controlling owner an object names (`metadata.ownerReferences`
/// with `controller: true`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// `kind` (`VirtualMachine`, `VirtualMachineInstance`).
    pub kind: String,
    /// `name`.
    pub name: String,
    /// `uid`.
    pub uid: String,
}

/// Who an answer says its object is: `metadata.namespace` and `.name`,
/// and its controlling owner. Every answer is checked against what was
/// asked for ([`check_vm`], [`check_vmi`], [`check_pods`]): an answer
/// about another object is a contradiction, never evidence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// `metadata.namespace` (absent: not said).
    pub namespace: Option<String>,
    /// `metadata.name` (empty: not said).
    pub name: String,
    /// The controlling owner.
    pub owner: Option<Owner>,
}

/// What fencekit reads of a VirtualMachine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vm {
    /// Who it is.
    pub meta: Meta,
    /// `metadata.uid`.
    pub uid: String,
    /// The run strategy.
    pub strategy: RunStrategy,
    /// Whether it came from the deprecated `spec.running`.
    pub deprecated_running: bool,
    /// `status.printableStatus`.
    pub printable: String,
    /// `spec.template.spec.domain.firmware.uuid`, when set.
    pub firmware_uuid: Option<String>,
}

/// What fencekit reads of a VirtualMachineInstance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vmi {
    /// Who it is (its owner: the VirtualMachine).
    pub meta: Meta,
    /// `metadata.uid`.
    pub uid: String,
    /// `status.phase` (empty when unset).
    pub phase: String,
    /// `status.nodeName`.
    pub node: Option<String>,
    /// The `Paused` condition is True.
    pub paused: bool,
    /// `metadata.deletionTimestamp` is set: it is being stopped.
    pub deleting: bool,
    /// `spec.domain.firmware.uuid`.
    pub firmware_uuid: Option<String>,
}

/// A virt-launcher pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    /// Who it is (its owner: the VirtualMachineInstance).
    pub meta: Meta,
    /// Its `vm.kubevirt.io/name` label: the VM it runs.
    pub vm_label: Option<String>,
    /// `metadata.name`.
    pub name: String,
    /// `spec.nodeName`.
    pub node: Option<String>,
    /// `status.phase`.
    pub phase: String,
    /// `metadata.deletionTimestamp` is set (Terminating).
    pub deleting: bool,
    /// `kubevirt.io/created-by`: the VMI's uid.
    pub vmi_uid: Option<String>,
}

impl Pod {
    /// Its phase is final: its containers ended (reported by its kubelet).
    pub fn finished(&self) -> bool {
        self.phase == "Succeeded" || self.phase == "Failed"
    }

    fn shown(&self) -> String {
        format!(
            "{} ({}{})",
            self.name,
            if self.phase.is_empty() {
                "no phase"
            } else {
                &self.phase
            },
            if self.deleting { ", Terminating" } else { "" }
        )
    }
}

/// A node's `Ready` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeReady {
    /// `Ready=True`: its kubelet reports.
    Ready,
    /// `Ready=False` or `Unknown` (the status and its reason), or no condition.
    NotReady(String),
    /// The Node object does not exist.
    Gone,
    /// It could not be read (RBAC, an error): why.
    Unread(String),
}

fn s<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr).and_then(Value::as_str)
}

/// Text from the network, bounded and on one line (the shared rule).
pub use crate::http::printable;

fn meta(v: &Value) -> Meta {
    let owner = v
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|o| Owner {
            kind: printable(s(o, "/kind").unwrap_or(""), 60),
            name: printable(s(o, "/name").unwrap_or(""), 253),
            uid: printable(s(o, "/uid").unwrap_or(""), 64),
        });
    Meta {
        namespace: s(v, "/metadata/namespace").map(|n| printable(n, 63)),
        name: printable(s(v, "/metadata/name").unwrap_or(""), 253),
        owner,
    }
}

fn check_meta(m: &Meta, kind: &str, namespace: &str, name: &str) -> Result<(), String> {
    if m.name != name {
        return Err(format!(
            "the answer is about {kind} '{}', not '{name}' that was asked for",
            m.name
        ));
    }
    match &m.namespace {
        Some(ns) if ns != namespace => Err(format!(
            "the answer is about {kind} {name} in namespace '{ns}', not '{namespace}'"
        )),
        _ => Ok(()),
    }
}

/// Checks that a VirtualMachine answer is about `namespace/name` and, once
/// its uid is known (the first read), about the same object: a VM of that
/// name deleted and created again is another machine.
pub fn check_vm(vm: &Vm, namespace: &str, name: &str, uid: Option<&str>) -> Result<(), String> {
    check_meta(&vm.meta, "VirtualMachine", namespace, name)?;
    match uid {
        Some(u) if u != vm.uid => Err(format!(
            "VirtualMachine {name} has uid {}, not {u} as first read: another object of that name",
            vm.uid
        )),
        _ => Ok(()),
    }
}

/// Checks that a VirtualMachineInstance answer is `namespace/name`'s and
/// is controlled by the VirtualMachine of uid `vm_uid` (KubeVirt sets
/// that owner on every VMI a VM starts).
pub fn check_vmi(vmi: &Vmi, namespace: &str, name: &str, vm_uid: &str) -> Result<(), String> {
    check_meta(&vmi.meta, "VirtualMachineInstance", namespace, name)?;
    match &vmi.meta.owner {
        None => Err(format!(
            "VirtualMachineInstance {name} names no controlling VirtualMachine (ownerReferences): it cannot be shown to be VirtualMachine {name}'s"
        )),
        Some(o) if o.kind != "VirtualMachine" || o.name != name || o.uid != vm_uid => Err(format!(
            "VirtualMachineInstance {name} is controlled by {} '{}' (uid {}), not by VirtualMachine {name} (uid {vm_uid})",
            o.kind, o.name, o.uid
        )),
        Some(_) => Ok(()),
    }
}

/// Checks that every pod of a list asked for with the selector
/// `vm.kubevirt.io/name=NAME` is a launcher of that VM in that namespace.
/// A pod of another VM means the server ignored the selector: the list
/// cannot show that NAME's launchers are gone (they may simply be left
/// out), so it is a contradiction, not a list to filter.
pub fn check_pods(pods: &[Pod], namespace: &str, name: &str) -> Result<(), String> {
    for p in pods {
        if p.vm_label.as_deref() != Some(name) {
            return Err(format!(
                "the list of VM {name}'s launcher pods (labelSelector vm.kubevirt.io/name={name}) holds pod {} of {}: the API server did not apply the selector",
                p.name,
                p.vm_label
                    .as_deref()
                    .map_or("no VM".to_string(), |l| format!("VM '{l}'"))
            ));
        }
        if let Some(ns) = p.meta.namespace.as_deref().filter(|ns| *ns != namespace) {
            return Err(format!(
                "the list of VM {name}'s launcher pods in namespace '{namespace}' holds pod {} of namespace '{ns}'",
                p.name
            ));
        }
        if let Some(o) = &p.meta.owner {
            if o.kind != "VirtualMachineInstance" || o.name != name {
                return Err(format!(
                    "pod {} of VM {name} is controlled by {} '{}', not by VirtualMachineInstance {name}",
                    p.name, o.kind, o.name
                ));
            }
        }
    }
    Ok(())
}

/// Reads a VirtualMachine.
pub fn vm(v: &Value) -> Result<Vm, String> {
    if s(v, "/kind").is_some_and(|k| k != "VirtualMachine") {
        return Err(format!(
            "expected a VirtualMachine, got a {}",
            printable(s(v, "/kind").unwrap_or(""), 40)
        ));
    }
    let uid = s(v, "/metadata/uid").ok_or("the VirtualMachine has no metadata.uid")?;
    let (strategy, deprecated_running) = match (
        s(v, "/spec/runStrategy"),
        v.pointer("/spec/running").and_then(Value::as_bool),
    ) {
        (Some(r), _) => (RunStrategy::parse(r), false),
        (None, Some(true)) => (RunStrategy::Always, true),
        (None, Some(false)) => (RunStrategy::Halted, true),
        (None, None) => match s(v, "/status/runStrategy") {
            Some(r) => (RunStrategy::parse(r), false),
            None => (RunStrategy::Halted, false),
        },
    };
    Ok(Vm {
        meta: meta(v),
        uid: printable(uid, 64),
        strategy,
        deprecated_running,
        printable: printable(s(v, "/status/printableStatus").unwrap_or(""), 40),
        firmware_uuid: s(v, "/spec/template/spec/domain/firmware/uuid").map(|u| printable(u, 64)),
    })
}

/// Reads a VirtualMachineInstance.
pub fn vmi(v: &Value) -> Result<Vmi, String> {
    if s(v, "/kind").is_some_and(|k| k != "VirtualMachineInstance") {
        return Err(format!(
            "expected a VirtualMachineInstance, got a {}",
            printable(s(v, "/kind").unwrap_or(""), 40)
        ));
    }
    let paused = v
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| s(c, "/type") == Some("Paused") && s(c, "/status") == Some("True"));
    Ok(Vmi {
        meta: meta(v),
        uid: printable(s(v, "/metadata/uid").unwrap_or(""), 64),
        phase: printable(s(v, "/status/phase").unwrap_or(""), 40),
        node: s(v, "/status/nodeName")
            .filter(|n| !n.is_empty())
            .map(|n| printable(n, 253)),
        paused,
        deleting: v
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|d| !d.is_null()),
        firmware_uuid: s(v, "/spec/domain/firmware/uuid").map(|u| printable(u, 64)),
    })
}

/// Reads a PodList: its pods and, when the server split the list into
/// pages, the `metadata.continue` token of the next one.
pub fn pods(v: &Value) -> Result<(Vec<Pod>, Option<String>), String> {
    let items = v
        .pointer("/items")
        .and_then(Value::as_array)
        .ok_or("the pod list has no items")?;
    let next = s(v, "/metadata/continue")
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let pods = items
        .iter()
        .map(|p| Pod {
            meta: meta(p),
            vm_label: s(p, "/metadata/labels/vm.kubevirt.io~1name").map(|l| printable(l, 253)),
            name: printable(s(p, "/metadata/name").unwrap_or("?"), 253),
            node: s(p, "/spec/nodeName")
                .filter(|n| !n.is_empty())
                .map(|n| printable(n, 253)),
            phase: printable(s(p, "/status/phase").unwrap_or(""), 40),
            deleting: p
                .pointer("/metadata/deletionTimestamp")
                .is_some_and(|d| !d.is_null()),
            vmi_uid: s(p, "/metadata/labels/kubevirt.io~1created-by").map(|u| printable(u, 64)),
        })
        .collect();
    Ok((pods, next))
}

/// Reads a Node's Ready condition.
pub fn node_ready(v: &Value) -> NodeReady {
    let ready = v
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| s(c, "/type") == Some("Ready"));
    match ready {
        Some(c) if s(c, "/status") == Some("True") => NodeReady::Ready,
        Some(c) => NodeReady::NotReady(format!(
            "Ready={}{}",
            printable(s(c, "/status").unwrap_or("?"), 20),
            s(c, "/reason")
                .map(|r| format!(" ({})", printable(r, 60)))
                .unwrap_or_default()
        )),
        None => NodeReady::NotReady("no Ready condition".into()),
    }
}

/// What the launcher pods could be read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launchers {
    /// Listed (the VM's `vm.kubevirt.io/name` pods).
    Listed(Vec<Pod>),
    /// Not readable (RBAC forbids it): why.
    Unread(String),
    /// Not needed (the VMI runs).
    NotAsked,
}

/// A decision about the guest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A reading the engine can use; with the evidence for the record.
    Seen(Observed, String),
    /// Off judged from the VMI alone, the launcher unreadable (device-only): why.
    OffVmiOnly(String),
    /// Neither on nor off, and waiting will not tell (a lost node): why,
    /// naming the node.
    NotOff(String),
    /// A phase that says nothing (`Unknown`, or unknown to fencekit).
    Unreadable(String),
}

/// Whether `vmi` (None: no VMI) with its launchers and the nodes'
/// readiness (`ready(node)`) is on, off, in transition, or not off.
pub fn decide(
    vmi: Option<&Vmi>,
    launchers: &Launchers,
    ready: &dyn Fn(&str) -> NodeReady,
) -> Verdict {
    use Observed::{InTransition, Settled};
    if let Some(i) = vmi {
        let on_node = i
            .node
            .as_deref()
            .map(|n| format!(" on node {n}"))
            .unwrap_or_default();
        match i.phase.as_str() {
            "Running" if i.deleting => {
                return Verdict::Seen(
                    InTransition(Transition::PoweringOff),
                    format!("the VMI is Running{on_node} and being stopped"),
                )
            }
            "Running" => {
                let what = if i.paused { "Running, paused (its memory kept)" } else { "Running" };
                return Verdict::Seen(Settled(PowerState::On), format!("the VMI is {what}{on_node}"));
            }
            "" | "Pending" | "Scheduling" | "Scheduled" => {
                let t = if i.deleting { Transition::PoweringOff } else { Transition::PoweringOn };
                return Verdict::Seen(
                    InTransition(t),
                    format!(
                        "the VMI is {}{on_node}{}",
                        if i.phase.is_empty() { "created, no phase yet" } else { &i.phase },
                        if i.deleting { " and being stopped" } else { "" }
                    ),
                );
            }
            "Succeeded" | "Failed" => {}
            "Unknown" => {
                return Verdict::Unreadable(format!(
                    "KubeVirt reports the VMI's phase as Unknown{on_node} (its state cannot be obtained)"
                ))
            }
            other => {
                return Verdict::Unreadable(format!(
                    "KubeVirt reports VMI phase '{other}'{on_node}, which is neither on, off nor a known transition"
                ))
            }
        }
        // A final VMI: its node must report (a Failed VMI on a lost node may still run there).
        if let Some(n) = &i.node {
            match ready(n) {
                NodeReady::Ready => {}
                NodeReady::NotReady(why) => {
                    return Verdict::NotOff(format!(
                        "the VMI is {} but its node {n} is not Ready ({why}): the guest may \
                         still run there; fence node {n} itself",
                        i.phase
                    ))
                }
                NodeReady::Gone => {
                    return Verdict::NotOff(format!(
                        "the VMI is {} on node {n}, whose Node object is gone: nothing reports \
                         whether the guest still runs there",
                        i.phase
                    ))
                }
                NodeReady::Unread(why) if i.phase == "Failed" => {
                    return Verdict::NotOff(format!(
                        "the VMI is Failed on node {n}, whose readiness cannot be read ({why}): \
                         a VMI fails when its node stops answering, so this is not proof of off"
                    ))
                }
                NodeReady::Unread(_) => {}
            }
        }
    }
    let gone = match vmi {
        None => "the VMI is gone".to_string(),
        Some(i) => format!("the VMI is {}", i.phase),
    };
    let pods = match launchers {
        Launchers::Listed(p) => p,
        Launchers::Unread(why) => {
            return Verdict::OffVmiOnly(format!(
                "{gone}; the virt-launcher pods cannot be read ({why}): off by the VMI alone \
                 (device-only, not proven by the launcher)"
            ))
        }
        Launchers::NotAsked => {
            return Verdict::Unreadable(format!("{gone}; the launcher pods were not read"))
        }
    };
    let alive: Vec<&Pod> = pods.iter().filter(|p| !p.finished()).collect();
    if alive.is_empty() {
        return Verdict::Seen(
            Settled(PowerState::Off),
            format!(
                "{gone} and no virt-launcher pod is alive{}",
                if pods.is_empty() {
                    String::new()
                } else {
                    format!(" ({} finished)", pods.len())
                }
            ),
        );
    }
    // Any alive pod on a node that does not report: not off, named.
    let mut waiting = Vec::new();
    for p in &alive {
        let Some(n) = &p.node else {
            // Not scheduled: no qemu can run yet; it goes away with its VMI.
            waiting.push(format!("{} unscheduled", p.shown()));
            continue;
        };
        match ready(n) {
            NodeReady::Ready => waiting.push(format!("{} on node {n}", p.shown())),
            NodeReady::NotReady(why) => {
                return Verdict::NotOff(format!(
                    "{gone}, but its virt-launcher pod {} is still on node {n}, which is not \
                     Ready ({why}): the guest may still run there; fence node {n} itself",
                    p.shown()
                ))
            }
            NodeReady::Gone => {
                return Verdict::NotOff(format!(
                    "{gone}, but its virt-launcher pod {} is bound to node {n}, whose Node \
                     object is gone: nothing reports whether the guest still runs there",
                    p.shown()
                ))
            }
            NodeReady::Unread(why) => waiting.push(format!(
                "{} on node {n} (whose readiness cannot be read: {why})",
                p.shown()
            )),
        }
    }
    Verdict::Seen(
        InTransition(Transition::PoweringOff),
        format!(
            "{gone}, but virt-launcher pod(s) still alive: {}",
            waiting.join(", ")
        ),
    )
}

/// A `Status` answer: reason and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiStatus {
    /// HTTP status.
    pub code: u16,
    /// `reason` (`NotFound`, `Conflict`, …).
    pub reason: String,
    /// `message`, printable.
    pub message: String,
}

/// Reads an error answer (a `Status`, or anything).
pub fn api_status(code: u16, body: &[u8]) -> ApiStatus {
    let v: Value = crate::parse::json(body, &crate::parse::Limits::ANSWER).unwrap_or(Value::Null);
    let message = s(&v, "/message")
        .map(|m| printable(m, 300))
        .unwrap_or_else(|| printable(&String::from_utf8_lossy(&body[..body.len().min(300)]), 300));
    ApiStatus {
        code,
        reason: printable(s(&v, "/reason").unwrap_or(""), 40),
        message,
    }
}

/// A start/stop/restart refusal (409), named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// "VM is not running": nothing to stop.
    NotRunning,
    /// "VM is already running".
    AlreadyRunning,
    /// "Always does not support manual start requests" (and kin): the run
    /// strategy starts it itself or refuses.
    Strategy(String),
    /// Another conflict.
    Other(String),
}

/// Names a 409's message.
pub fn refusal(message: &str) -> Refusal {
    let m = message.to_ascii_lowercase();
    if m.contains("not running") {
        Refusal::NotRunning
    } else if m.contains("already running") {
        Refusal::AlreadyRunning
    } else if m.contains("does not support manual") {
        Refusal::Strategy(printable(message, 200))
    } else {
        Refusal::Other(printable(message, 200))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vmi_in(phase: &str, node: Option<&str>) -> Vmi {
        Vmi {
            meta: Meta::default(),
            uid: "u1".into(),
            phase: phase.into(),
            node: node.map(str::to_string),
            paused: false,
            deleting: false,
            firmware_uuid: None,
        }
    }

    fn pod(phase: &str, node: &str, deleting: bool) -> Pod {
        Pod {
            meta: Meta::default(),
            vm_label: Some("vm".into()),
            name: "virt-launcher-vm-abcde".into(),
            node: Some(node.into()),
            phase: phase.into(),
            deleting,
            vmi_uid: Some("u1".into()),
        }
    }

    fn all_ready(_: &str) -> NodeReady {
        NodeReady::Ready
    }

    fn lost(n: &str) -> NodeReady {
        if n == "worker-1" {
            NodeReady::NotReady("Ready=Unknown (NodeStatusUnknown)".into())
        } else {
            NodeReady::Ready
        }
    }

    fn seen(v: &Verdict) -> Option<Observed> {
        match v {
            Verdict::Seen(o, _) => Some(*o),
            _ => None,
        }
    }

    #[test]
    fn phases_map_to_on_transitions_and_unknown() {
        use Observed::*;
        let none = Launchers::NotAsked;
        let on = Some(Settled(PowerState::On));
        assert_eq!(
            seen(&decide(
                Some(&vmi_in("Running", Some("w"))),
                &none,
                &all_ready
            )),
            on
        );
        let mut paused = vmi_in("Running", Some("w"));
        paused.paused = true;
        let v = decide(Some(&paused), &none, &all_ready);
        assert_eq!(seen(&v), on);
        assert!(format!("{v:?}").contains("paused"));
        for p in ["", "Pending", "Scheduling", "Scheduled"] {
            assert_eq!(
                seen(&decide(Some(&vmi_in(p, None)), &none, &all_ready)),
                Some(InTransition(Transition::PoweringOn)),
                "{p}"
            );
        }
        let mut stopping = vmi_in("Running", Some("w"));
        stopping.deleting = true;
        assert_eq!(
            seen(&decide(Some(&stopping), &none, &all_ready)),
            Some(InTransition(Transition::PoweringOff))
        );
        for p in ["Unknown", "Exploded"] {
            assert!(matches!(
                decide(Some(&vmi_in(p, Some("w"))), &none, &all_ready),
                Verdict::Unreadable(_)
            ));
        }
    }

    #[test]
    fn off_needs_a_final_vmi_and_no_live_launcher_on_a_ready_node() {
        let off = Some(Observed::Settled(PowerState::Off));
        let empty = Launchers::Listed(vec![]);
        assert_eq!(seen(&decide(None, &empty, &all_ready)), off);
        for p in ["Succeeded", "Failed"] {
            assert_eq!(
                seen(&decide(
                    Some(&vmi_in(p, Some("worker-0"))),
                    &empty,
                    &all_ready
                )),
                off
            );
        }
        // Finished pods do not count.
        let done = Launchers::Listed(vec![pod("Succeeded", "worker-1", false)]);
        assert_eq!(seen(&decide(None, &done, &lost)), off);
        // A terminating pod on a Ready node: still going.
        let going = Launchers::Listed(vec![pod("Running", "worker-0", true)]);
        assert_eq!(
            seen(&decide(None, &going, &all_ready)),
            Some(Observed::InTransition(Transition::PoweringOff))
        );
    }

    #[test]
    fn a_failed_vmi_or_a_live_launcher_on_a_lost_node_is_not_off_and_names_the_node() {
        let empty = Launchers::Listed(vec![]);
        match decide(Some(&vmi_in("Failed", Some("worker-1"))), &empty, &lost) {
            Verdict::NotOff(why) => assert!(why.contains("node worker-1"), "{why}"),
            o => panic!("{o:?}"),
        }
        let running = Launchers::Listed(vec![pod("Running", "worker-1", true)]);
        match decide(None, &running, &lost) {
            Verdict::NotOff(why) => {
                assert!(
                    why.contains("worker-1") && why.contains("Terminating"),
                    "{why}"
                )
            }
            o => panic!("{o:?}"),
        }
        match decide(None, &running, &|_| NodeReady::Gone) {
            Verdict::NotOff(why) => assert!(why.contains("gone"), "{why}"),
            o => panic!("{o:?}"),
        }
        // A Failed VMI whose node cannot be read is not proof either.
        let unread = |_: &str| NodeReady::Unread("403".into());
        assert!(matches!(
            decide(Some(&vmi_in("Failed", Some("w"))), &empty, &unread),
            Verdict::NotOff(_)
        ));
    }

    #[test]
    fn unreadable_launchers_give_device_only_off() {
        let v = decide(
            None,
            &Launchers::Unread("RBAC forbids list pods".into()),
            &all_ready,
        );
        match v {
            Verdict::OffVmiOnly(why) => assert!(why.contains("device-only"), "{why}"),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn objects_are_read_from_the_api_shapes() {
        let v = vm(&json!({"kind":"VirtualMachine","metadata":{"uid":"abc"},
            "spec":{"running":false,"template":{"spec":{"domain":{"firmware":{"uuid":"f-1"}}}}},
            "status":{"printableStatus":"Stopped"}}))
        .unwrap();
        assert_eq!(v.strategy, RunStrategy::Halted);
        assert!(v.deprecated_running);
        assert_eq!(v.firmware_uuid.as_deref(), Some("f-1"));
        let v =
            vm(&json!({"metadata":{"uid":"abc"},"spec":{"runStrategy":"RerunOnFailure"}})).unwrap();
        assert_eq!(v.strategy, RunStrategy::RerunOnFailure);
        assert!(vm(&json!({"kind":"Pod","metadata":{"uid":"x"}})).is_err());
        let i = vmi(
            &json!({"kind":"VirtualMachineInstance","metadata":{"uid":"u",
            "deletionTimestamp":"2024-01-01T00:00:00Z"},"status":{"phase":"Running","nodeName":"w0",
            "conditions":[{"type":"Paused","status":"True"}]}}),
        )
        .unwrap();
        assert!(i.paused && i.deleting);
        assert_eq!(i.node.as_deref(), Some("w0"));
        let p = pods(&json!({"items":[{"metadata":{"name":"virt-launcher-a",
            "labels":{"kubevirt.io/created-by":"u"}},"spec":{"nodeName":"w0"},"status":{"phase":"Running"}}]}))
        .unwrap();
        assert_eq!(p.0[0].vmi_uid.as_deref(), Some("u"));
        assert_eq!(p.1, None);
        assert_eq!(
            node_ready(
                &json!({"status":{"conditions":[{"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown"}]}})
            ),
            NodeReady::NotReady("Ready=Unknown (NodeStatusUnknown)".into())
        );
        assert_eq!(
            node_ready(&json!({"status":{"conditions":[{"type":"Ready","status":"True"}]}})),
            NodeReady::Ready
        );
    }

    #[test]
    fn refusals_are_named() {
        let st = api_status(
            409,
            br#"{"kind":"Status","reason":"Conflict","message":"Operation cannot be fulfilled on virtualmachine.kubevirt.io \"vm\": VM is not running"}"#,
        );
        assert_eq!(st.reason, "Conflict");
        assert_eq!(refusal(&st.message), Refusal::NotRunning);
        assert_eq!(refusal("x: VM is already running"), Refusal::AlreadyRunning);
        assert!(matches!(
            refusal("Always does not support manual start requests"),
            Refusal::Strategy(_)
        ));
        assert!(matches!(refusal("odd"), Refusal::Other(_)));
        // Bytes that are not JSON are shown bounded and printable.
        let st = api_status(500, b"\x1b[31mboom");
        assert!(!st.message.contains('\x1b'));
    }

    #[test]
    fn an_answer_about_another_object_is_refused() {
        let obj = |kind: &str, name: &str, uid: &str, owner: serde_json::Value| {
            json!({"kind": kind, "metadata": {"name": name, "namespace": "ns", "uid": uid,
                "ownerReferences": [owner]}, "spec": {"runStrategy": "Always"},
                "status": {"phase": "Running"}})
        };
        let vm1 = vm(&obj("VirtualMachine", "vm1", "u1", json!({}))).unwrap();
        assert!(check_vm(&vm1, "ns", "vm1", None).is_ok());
        assert!(check_vm(&vm1, "ns", "vm1", Some("u1")).is_ok());
        // Same name, another uid: deleted and created again.
        assert!(check_vm(&vm1, "ns", "vm1", Some("u0"))
            .unwrap_err()
            .contains("another object"));
        assert!(check_vm(&vm1, "other", "vm1", None).is_err());
        assert!(check_vm(&vm1, "ns", "vm2", None).is_err());
        let own = |name: &str, uid: &str| json!({"kind": "VirtualMachine", "name": name, "uid": uid, "controller": true});
        let i = vmi(&obj(
            "VirtualMachineInstance",
            "vm1",
            "i1",
            own("vm1", "u1"),
        ))
        .unwrap();
        assert!(check_vmi(&i, "ns", "vm1", "u1").is_ok());
        assert!(check_vmi(&i, "ns", "vm1", "u9").is_err());
        let other = vmi(&obj(
            "VirtualMachineInstance",
            "vm-other",
            "i2",
            own("vm-other", "u2"),
        ))
        .unwrap();
        assert!(check_vmi(&other, "ns", "vm1", "u1")
            .unwrap_err()
            .contains("vm-other"));
        let orphan = vmi(&obj("VirtualMachineInstance", "vm1", "i3", json!({}))).unwrap();
        assert!(check_vmi(&orphan, "ns", "vm1", "u1").is_err());
        // A pod list that ignored its selector.
        let list = |vm: &str| {
            json!({"items": [{"metadata": {"name": format!("virt-launcher-{vm}-x"),
                "namespace": "ns", "labels": {"vm.kubevirt.io/name": vm},
                "ownerReferences": [{"kind": "VirtualMachineInstance", "name": vm,
                "uid": "i", "controller": true}]}, "status": {"phase": "Running"}}]})
        };
        assert!(check_pods(&pods(&list("vm1")).unwrap().0, "ns", "vm1").is_ok());
        assert!(check_pods(&pods(&list("vm-other")).unwrap().0, "ns", "vm1")
            .unwrap_err()
            .contains("did not apply the selector"));
        let mut paged = list("vm1");
        paged["metadata"] = json!({"continue": "tok"});
        assert_eq!(pods(&paged).unwrap().1.as_deref(), Some("tok"));
    }
}
