//! What vSphere's answers mean for fencing: which VM a target names, when a
//! power state is evidence, what a task's end says, and how a power task
//! whose answer was lost is found again (issue 32).

use super::soap::{MoRef, Object, PowerMethod, TaskInfo};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::PowerState;

/// Checks that a `RetrievePropertiesEx` answer is about the objects asked
/// for: every `objectContent` names one of `asked` (type and id), none
/// twice, and no property twice with two values (the same value twice is
/// tolerated: it says one thing). An answer about another object is a
/// contradiction, never evidence.
pub fn check_objects(asked: &[MoRef], got: &[Object]) -> Result<(), String> {
    let mut seen: Vec<&MoRef> = Vec::new();
    for o in got {
        if !asked.contains(&o.obj) {
            let wanted: Vec<&str> = asked.iter().map(|m| m.value.as_str()).collect();
            return Err(format!(
                "the answer is about {} {}, which was not asked for ({}): an answer about \
                 another object is not believed",
                o.obj.kind,
                o.obj.value,
                wanted.join(", ")
            ));
        }
        if seen.contains(&&o.obj) {
            return Err(format!(
                "the answer holds {} {} twice: it cannot say which is its state",
                o.obj.kind, o.obj.value
            ));
        }
        seen.push(&o.obj);
        for (i, (path, v)) in o.props.iter().enumerate() {
            if o.props[..i].iter().any(|(p, w)| p == path && w != v) {
                return Err(format!(
                    "the answer gives property {path} of {} twice with two values: it \
                     contradicts itself",
                    o.obj.value
                ));
            }
        }
    }
    Ok(())
}

/// Checks that a VM read again is the one first found: same moref (the
/// answer's object) and, where vCenter gave them, the same instance and
/// BIOS UUIDs (a VM removed and another registered under a reused id is
/// another machine).
pub fn check_same_vm(first: &VmView, now: &VmView) -> Result<(), String> {
    if now.moref != first.moref {
        return Err(format!(
            "the answer for {} is about {}",
            first.moref.value, now.moref.value
        ));
    }
    let same = |a: &Option<String>, b: &Option<String>| a.is_none() || a == b;
    if !same(&first.instance_uuid, &now.instance_uuid) {
        return Err(format!(
            "{} now has instance UUID {}, not {} as first read: another object",
            first.moref.value,
            now.instance_uuid.as_deref().unwrap_or("(none)"),
            first.instance_uuid.as_deref().unwrap_or("")
        ));
    }
    if !same(&first.bios_uuid, &now.bios_uuid) {
        return Err(format!(
            "{} now has BIOS UUID {}, not {} as first read: another object",
            first.moref.value,
            now.bios_uuid.as_deref().unwrap_or("(none)"),
            first.bios_uuid.as_deref().unwrap_or("")
        ));
    }
    Ok(())
}

/// How a target names its VM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VmSelector {
    /// The inventory name (`name`); several VMs may carry it.
    Name(String),
    /// `uuid:…`: the BIOS UUID (`config.uuid`, the guest's SMBIOS UUID).
    BiosUuid(String),
    /// `instance:…`: vCenter's instance UUID (`config.instanceUuid`).
    InstanceUuid(String),
    /// `moref:vm-123`: the managed object id.
    Moref(String),
}

fn uuid_ok(u: &str) -> bool {
    let hex: String = u.chars().filter(|c| *c != '-').collect();
    hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit())
}

impl VmSelector {
    /// Reads a target's VM part: `uuid:`, `instance:`, `moref:` or a name.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(u) = s.strip_prefix("uuid:") {
            if !uuid_ok(u) {
                return Err(format!(
                    "'{u}' is not a UUID (uuid:XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX)"
                ));
            }
            return Ok(VmSelector::BiosUuid(u.to_ascii_lowercase()));
        }
        if let Some(u) = s.strip_prefix("instance:") {
            if !uuid_ok(u) {
                return Err(format!(
                    "'{u}' is not a UUID (instance:XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX)"
                ));
            }
            return Ok(VmSelector::InstanceUuid(u.to_ascii_lowercase()));
        }
        if let Some(m) = s.strip_prefix("moref:") {
            if m.is_empty()
                || !m
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(format!("'{m}' is not a managed object id (moref:vm-123)"));
            }
            return Ok(VmSelector::Moref(m.to_string()));
        }
        if s.is_empty() {
            return Err("no VM given".into());
        }
        Ok(VmSelector::Name(s.to_string()))
    }
}

/// One VM as read with [`super::soap::VM_PATHS`], its host's connection
/// state added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmView {
    /// The VM.
    pub moref: MoRef,
    /// Its inventory name.
    pub name: String,
    /// `runtime.powerState`: poweredOn, poweredOff, suspended.
    pub power_state: String,
    /// `runtime.connectionState`: connected, disconnected, orphaned,
    /// inaccessible, invalid.
    pub connection_state: String,
    /// `runtime.host`.
    pub host: Option<MoRef>,
    /// The host's name, where read.
    pub host_name: Option<String>,
    /// The host's `runtime.connectionState`: connected, disconnected,
    /// notResponding.
    pub host_connection: Option<String>,
    /// `config.uuid`.
    pub bios_uuid: Option<String>,
    /// `config.instanceUuid`.
    pub instance_uuid: Option<String>,
}

impl VmView {
    /// A VM's view from its collected properties (the host's state is added
    /// by the caller).
    pub fn from_object(o: &Object) -> Self {
        VmView {
            moref: o.obj.clone(),
            name: o.text("name").unwrap_or("").to_string(),
            power_state: o.text("runtime.powerState").unwrap_or("").to_string(),
            connection_state: o.text("runtime.connectionState").unwrap_or("").to_string(),
            host: o.reference("runtime.host").cloned(),
            host_name: None,
            host_connection: None,
            bios_uuid: o.text("config.uuid").map(str::to_ascii_lowercase),
            instance_uuid: o.text("config.instanceUuid").map(str::to_ascii_lowercase),
        }
    }

    fn host_words(&self) -> String {
        match (&self.host_name, &self.host) {
            (Some(n), Some(h)) => format!("host {n} ({})", h.value),
            (None, Some(h)) => format!("host {}", h.value),
            _ => "its host".into(),
        }
    }
}

/// What a VM's power state is worth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// poweredOn.
    On,
    /// poweredOff, read from a connected host.
    Off,
    /// suspended: the memory image can resume and run again, so it is on
    /// for fencing (`off` powers it off and confirms).
    Suspended,
    /// The host does not report (disconnected, notResponding) or the VM is
    /// orphaned/inaccessible/invalid: the state is vCenter's last copy, not
    /// evidence. The text names the host and why.
    Stale(String),
}

impl Reading {
    /// The power state for the engine: suspended is on; a stale reading is
    /// an error that names the host, never off.
    pub fn power_state(&self) -> Result<PowerState, DriverError> {
        match self {
            Reading::On | Reading::Suspended => Ok(PowerState::On),
            Reading::Off => Ok(PowerState::Off),
            Reading::Stale(why) => Err(DriverError::new(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                why.clone(),
            )),
        }
    }
}

/// Judges a VM's power state.
pub fn judge(vm: &VmView) -> Reading {
    let stale = |why: String| {
        Reading::Stale(format!(
            "vm {} ({}): {why}; its power state '{}' is vCenter's last copy, not evidence",
            vm.name, vm.moref.value, vm.power_state
        ))
    };
    match vm.host_connection.as_deref() {
        Some("connected") => {}
        Some(other) => return stale(format!("{} is {other}", vm.host_words())),
        None => return stale(format!("the state of {} is unknown", vm.host_words())),
    }
    if vm.connection_state != "connected" {
        return stale(format!(
            "the vm is {} on {}",
            if vm.connection_state.is_empty() {
                "in an unknown connection state"
            } else {
                &vm.connection_state
            },
            vm.host_words()
        ));
    }
    match vm.power_state.as_str() {
        "poweredOn" => Reading::On,
        "poweredOff" => Reading::Off,
        "suspended" => Reading::Suspended,
        other => stale(format!("power state '{other}' is not one fencing knows")),
    }
}

/// Picks the one VM a selector names among the candidates found: none is
/// "not found", several are refused with every candidate listed.
pub fn pick(selector: &VmSelector, found: Vec<VmView>) -> Result<VmView, DriverError> {
    let what = match selector {
        VmSelector::Name(n) => format!("name '{n}'"),
        VmSelector::BiosUuid(u) => format!("BIOS UUID {u}"),
        VmSelector::InstanceUuid(u) => format!("instance UUID {u}"),
        VmSelector::Moref(m) => format!("managed object {m}"),
    };
    let mut found: Vec<VmView> = found
        .into_iter()
        .filter(|v| match selector {
            VmSelector::Name(n) => v.name == *n,
            VmSelector::BiosUuid(u) => v.bios_uuid.as_deref() == Some(u.as_str()),
            VmSelector::InstanceUuid(u) => v.instance_uuid.as_deref() == Some(u.as_str()),
            VmSelector::Moref(m) => v.moref.value == *m,
        })
        .collect();
    match found.len() {
        0 => Err(DriverError::new(
            ErrorKind::DeviceError,
            Stage::Status,
            format!("no virtual machine with {what}"),
        )),
        1 => Ok(found.remove(0)),
        _ => {
            found.sort_by(|a, b| a.moref.value.cmp(&b.moref.value));
            let list: Vec<String> = found
                .iter()
                .map(|v| {
                    format!(
                        "moref:{} (uuid:{})",
                        v.moref.value,
                        v.bios_uuid.as_deref().unwrap_or("?")
                    )
                })
                .collect();
            Err(DriverError::new(
                ErrorKind::Config,
                Stage::Status,
                format!(
                    "{} virtual machines have {what}; name one: {}",
                    found.len(),
                    list.join(", ")
                ),
            ))
        }
    }
}

/// The error kind of a vSphere fault (a method's SOAP fault or a task's
/// error).
pub fn fault_kind(name: &str) -> ErrorKind {
    match name {
        "InvalidLogin" => ErrorKind::PasswordInvalid,
        "NoPermission" | "NotAuthenticated" | "RestrictedVersion" => {
            ErrorKind::PrivilegeNotObtained
        }
        "InvalidPowerState" | "InvalidState" => ErrorKind::NotInPresentState,
        "TaskInProgress" => ErrorKind::Busy,
        "NotSupported" | "MethodNotFound" => ErrorKind::Unsupported,
        _ => ErrorKind::DeviceError,
    }
}

/// A followed task as the engine needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskEnd {
    /// queued or running: keep following until the deadline.
    Pending,
    /// success.
    Done,
    /// error, with the fault's kind and a message naming the fault.
    Failed(DriverError),
}

/// Reads a task's state.
pub fn task_end(t: &TaskInfo) -> TaskEnd {
    match t.state.as_str() {
        "queued" | "running" => TaskEnd::Pending,
        "success" => TaskEnd::Done,
        "error" => {
            let fault = t.fault.clone().unwrap_or_default();
            let mut msg = format!(
                "task {} ({}) failed: vSphere fault {}",
                t.task.value,
                t.description_id,
                if fault.is_empty() {
                    "(unnamed)"
                } else {
                    &fault
                }
            );
            if !t.message.is_empty() {
                msg.push_str(&format!(": {}", t.message));
            }
            TaskEnd::Failed(DriverError::new(fault_kind(&fault), Stage::Command, msg))
        }
        other => TaskEnd::Failed(DriverError::new(
            ErrorKind::Protocol,
            Stage::Command,
            format!("task {} in unknown state '{other}'", t.task.value),
        )),
    }
}

/// After a power request whose answer was lost: the task it created, if
/// any, among the VM's `recentTask` infos — one of `method` on this VM that
/// was not in `before` (the recentTask read before the request). `None`
/// means the request left no task: the power state read decides, and the
/// request is never sent blindly again.
pub fn lost_task<'a>(
    method: PowerMethod,
    vm: &MoRef,
    before: &[MoRef],
    now: &'a [TaskInfo],
) -> Result<Option<&'a TaskInfo>, DriverError> {
    let new: Vec<&TaskInfo> = now
        .iter()
        .filter(|t| {
            t.description_id == method.description_id()
                && t.entity.as_ref() == Some(vm)
                && !before.contains(&t.task)
        })
        .collect();
    match new.len() {
        0 => Ok(None),
        1 => Ok(Some(new[0])),
        n => Err(DriverError::new(
            ErrorKind::OutcomeUnknown,
            Stage::Command,
            format!(
                "{n} new {} tasks on {} since the request (someone else acts on this vm too)",
                method.method(),
                vm.value
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn answers_about_other_objects_or_twice_with_two_values_are_refused() {
        use crate::vsphere::soap::Value;
        let vm = |id: &str, props: &[(&str, &str)]| Object {
            obj: MoRef::new("VirtualMachine", id),
            props: props
                .iter()
                .map(|(p, v)| (p.to_string(), Value::Text(v.to_string())))
                .collect(),
            missing: Vec::new(),
        };
        let asked = [MoRef::new("VirtualMachine", "vm-101")];
        let on = ("runtime.powerState", "poweredOn");
        let off = ("runtime.powerState", "poweredOff");
        assert!(check_objects(&asked, &[vm("vm-101", &[on])]).is_ok());
        assert!(check_objects(&asked, &[vm("vm-101", &[on, on])]).is_ok());
        assert!(check_objects(&asked, &[vm("vm-101", &[on, off])])
            .unwrap_err()
            .contains("two values"));
        assert!(check_objects(&asked, &[vm("vm-999", &[off])])
            .unwrap_err()
            .contains("vm-999"));
        assert!(check_objects(&asked, &[vm("vm-101", &[on]), vm("vm-101", &[off])]).is_err());
    }

    use super::*;

    fn vm(power: &str, conn: &str, host_conn: Option<&str>) -> VmView {
        VmView {
            moref: MoRef::new("VirtualMachine", "vm-105"),
            name: "node1".into(),
            power_state: power.into(),
            connection_state: conn.into(),
            host: Some(MoRef::new("HostSystem", "host-63")),
            host_name: Some("esx3.example".into()),
            host_connection: host_conn.map(String::from),
            bios_uuid: Some("4212aaaa-bbbb-cccc-dddd-eeeeffff0001".into()),
            instance_uuid: Some("5012aaaa-bbbb-cccc-dddd-eeeeffff0001".into()),
        }
    }

    #[test]
    fn selectors() {
        assert_eq!(
            VmSelector::parse("uuid:4212AAAA-bbbb-cccc-dddd-eeeeffff0001"),
            Ok(VmSelector::BiosUuid(
                "4212aaaa-bbbb-cccc-dddd-eeeeffff0001".into()
            ))
        );
        assert!(matches!(
            VmSelector::parse("instance:5012aaaabbbbccccddddeeeeffff0001"),
            Ok(VmSelector::InstanceUuid(_))
        ));
        assert_eq!(
            VmSelector::parse("moref:vm-123"),
            Ok(VmSelector::Moref("vm-123".into()))
        );
        assert_eq!(
            VmSelector::parse("web 01"),
            Ok(VmSelector::Name("web 01".into()))
        );
        for bad in ["uuid:xyz", "instance:", "moref:", "moref:vm 1", "  "] {
            assert!(VmSelector::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn states_as_the_platform_behaves() {
        let c = Some("connected");
        assert_eq!(judge(&vm("poweredOn", "connected", c)), Reading::On);
        assert_eq!(judge(&vm("poweredOff", "connected", c)), Reading::Off);
        // Suspended is on: off must power it off.
        assert_eq!(judge(&vm("suspended", "connected", c)), Reading::Suspended);
        assert_eq!(
            judge(&vm("suspended", "connected", c)).power_state(),
            Ok(PowerState::On)
        );
        // A host that does not report: poweredOff is no evidence; the host is named.
        for h in ["disconnected", "notResponding"] {
            let r = judge(&vm("poweredOff", "disconnected", Some(h)));
            let Reading::Stale(why) = &r else {
                panic!("{r:?}")
            };
            assert!(why.contains("esx3.example") && why.contains(h), "{why}");
            let e = r.power_state().unwrap_err();
            assert_eq!(e.kind, ErrorKind::StatusUnreadable);
        }
        for vc in ["orphaned", "inaccessible", "invalid", "disconnected"] {
            assert!(
                matches!(judge(&vm("poweredOff", vc, c)), Reading::Stale(_)),
                "{vc}"
            );
        }
        // The host's state not read: not evidence either.
        assert!(matches!(
            judge(&vm("poweredOff", "connected", None)),
            Reading::Stale(_)
        ));
        assert!(matches!(
            judge(&vm("unknownState", "connected", c)),
            Reading::Stale(_)
        ));
    }

    #[test]
    fn ambiguous_names_are_refused_with_candidates() {
        let a = vm("poweredOn", "connected", Some("connected"));
        let mut b = a.clone();
        b.moref = MoRef::new("VirtualMachine", "vm-96");
        b.bios_uuid = Some("4212aaaa-bbbb-cccc-dddd-eeeeffff0002".into());
        let mut other = a.clone();
        other.name = "node2".into();
        other.moref = MoRef::new("VirtualMachine", "vm-7");
        let e = pick(
            &VmSelector::Name("node1".into()),
            vec![a.clone(), b.clone(), other.clone()],
        )
        .unwrap_err();
        assert!(
            e.message.contains("moref:vm-105") && e.message.contains("moref:vm-96"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("vm-7"));
        let one = pick(
            &VmSelector::Moref("vm-96".into()),
            vec![a.clone(), b.clone()],
        )
        .unwrap();
        assert_eq!(one.moref.value, "vm-96");
        let by_uuid = pick(
            &VmSelector::BiosUuid("4212aaaa-bbbb-cccc-dddd-eeeeffff0002".into()),
            vec![a.clone(), b],
        )
        .unwrap();
        assert_eq!(by_uuid.moref.value, "vm-96");
        assert!(pick(&VmSelector::Name("nosuch".into()), vec![a]).is_err());
    }

    fn task(id: &str, desc: &str, entity: &str, state: &str, fault: Option<&str>) -> TaskInfo {
        TaskInfo {
            task: MoRef::new("Task", id),
            state: state.into(),
            description_id: desc.into(),
            entity: Some(MoRef::new("VirtualMachine", entity)),
            fault: fault.map(String::from),
            message: String::new(),
        }
    }

    #[test]
    fn task_faults_are_named() {
        let t = task(
            "task-9",
            "VirtualMachine.powerOff",
            "vm-105",
            "error",
            Some("NoPermission"),
        );
        let TaskEnd::Failed(e) = task_end(&t) else {
            panic!()
        };
        assert_eq!(e.kind, ErrorKind::PrivilegeNotObtained);
        assert!(e.message.contains("NoPermission"));
        assert_eq!(fault_kind("InvalidLogin"), ErrorKind::PasswordInvalid);
        assert_eq!(
            fault_kind("InvalidPowerState"),
            ErrorKind::NotInPresentState
        );
        assert_eq!(fault_kind("TaskInProgress"), ErrorKind::Busy);
        assert_eq!(
            fault_kind("InvalidHostConnectionState"),
            ErrorKind::DeviceError
        );
        assert_eq!(
            task_end(&task("t", "d", "vm-1", "running", None)),
            TaskEnd::Pending
        );
        assert_eq!(
            task_end(&task("t", "d", "vm-1", "success", None)),
            TaskEnd::Done
        );
    }

    #[test]
    fn a_lost_answer_finds_its_task_or_none() {
        let vm = MoRef::new("VirtualMachine", "vm-105");
        let before = vec![MoRef::new("Task", "task-1")];
        let now = vec![
            task(
                "task-1",
                "VirtualMachine.powerOff",
                "vm-105",
                "success",
                None,
            ),
            task(
                "task-2",
                "VirtualMachine.powerOn",
                "vm-105",
                "success",
                None,
            ),
            task(
                "task-3",
                "VirtualMachine.powerOff",
                "vm-999",
                "running",
                None,
            ),
            task(
                "task-4",
                "VirtualMachine.powerOff",
                "vm-105",
                "running",
                None,
            ),
        ];
        let found = lost_task(PowerMethod::Off, &vm, &before, &now).unwrap();
        assert_eq!(found.map(|t| t.task.value.as_str()), Some("task-4"));
        // Only the old task: the request left none.
        assert_eq!(
            lost_task(PowerMethod::Off, &vm, &before, &now[..3]).unwrap(),
            None
        );
        // Two new ones: cannot tell which is ours.
        let mut two = now.clone();
        two.push(task(
            "task-5",
            "VirtualMachine.powerOff",
            "vm-105",
            "queued",
            None,
        ));
        assert_eq!(
            lost_task(PowerMethod::Off, &vm, &before, &two)
                .unwrap_err()
                .kind,
            ErrorKind::OutcomeUnknown
        );
    }
}
