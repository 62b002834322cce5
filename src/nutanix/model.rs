//! What Prism Central's v4 answers mean for fencing (pure, no I/O): VMs and
//! their lists, task references and tasks, a host's connection to
//! Acropolis, the error shape, and the one rule that decides off.
//!
//! The rule ([`judge`]): `OFF` is off unless the VM is still placed on a
//! host that is disconnected (its last report is then not evidence: the VM
//! may run there). `ON`, `PAUSED` and `SUSPENDED` are on (a paused or
//! suspended VM keeps its memory and can go on: upstream counts PAUSED as
//! off). `UNDETERMINED` and anything else are unreadable, never a guess.

use crate::engine::power::PowerState;
use serde_json::Value;

/// One line of text from an answer: bounded, control characters as `?`.
pub fn printable(s: &str, max: usize) -> String {
    crate::http::printable(s, max)
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

fn json(body: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(body).map_err(|e| format!("not JSON ({e})"))
}

/// A VM as the v4 API describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmInfo {
    /// Its extId.
    pub ext_id: String,
    /// Its name.
    pub name: String,
    /// `ON`, `OFF`, `PAUSED`, `SUSPENDED`, `UNDETERMINED`, …
    pub power: String,
    /// Its BIOS (SMBIOS) UUID.
    pub bios_uuid: Option<String>,
    /// The host it is placed on, if any.
    pub host: Option<String>,
    /// Its cluster.
    pub cluster: Option<String>,
}

fn vm_of(v: &Value) -> Result<VmInfo, String> {
    let r = |k: &str| v.get(k).and_then(|x| text(x, "extId"));
    Ok(VmInfo {
        ext_id: text(v, "extId").ok_or("a VM without an extId")?,
        name: text(v, "name").unwrap_or_default(),
        power: text(v, "powerState").unwrap_or_else(|| "UNKNOWN".into()),
        bios_uuid: text(v, "biosUuid"),
        host: r("host"),
        cluster: r("cluster"),
    })
}

/// Reads `GET …/vms/EXTID` (`{"data": vm}`).
pub fn vm(body: &[u8]) -> Result<VmInfo, String> {
    let v = json(body)?;
    vm_of(v.get("data").ok_or("no data member")?)
}

/// Reads a VM list: the VMs (none when `data` is absent, as the API answers
/// an empty page) and the total the API counts.
pub fn vm_list(body: &[u8]) -> Result<(Vec<VmInfo>, Option<u64>), String> {
    let v = json(body)?;
    let total = v
        .get("metadata")
        .and_then(|m| m.get("totalAvailableResults"))
        .and_then(Value::as_u64);
    let list = match v.get("data") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.iter().map(vm_of).collect::<Result<_, _>>()?,
        Some(_) => return Err("the VMs are not a list".into()),
    };
    Ok((list, total))
}

/// `name eq 'NAME'`, quotes doubled.
pub fn name_filter(name: &str) -> String {
    format!("name eq '{}'", name.replace('\'', "''"))
}

/// Reads a power action's 202 (`{"data": {"extId": TASK}}`).
pub fn task_ref(body: &[u8]) -> Result<String, String> {
    let v = json(body)?;
    v.get("data")
        .and_then(|d| text(d, "extId"))
        .ok_or_else(|| "the answer names no task".into())
}

/// How a task stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// `QUEUED`, `RUNNING`, `CANCELING`: not over.
    Pending(String),
    /// `SUCCEEDED`.
    Succeeded,
    /// `FAILED`, with its error messages.
    Failed(String),
    /// `CANCELED` (or `SUSPENDED`): it will not carry out the change.
    Canceled(String),
}

/// Reads `GET …/tasks/TASK`; the answer must be about `task` and, when it
/// names the entities it affects, about `vm`.
pub fn task(body: &[u8], task: &str, vm: &str) -> Result<TaskState, String> {
    let v = json(body)?;
    let d = v.get("data").ok_or("no data member")?;
    if let Some(id) = text(d, "extId") {
        if id != task {
            return Err(format!(
                "the answer is about another task ({})",
                printable(&id, 80)
            ));
        }
    }
    if let Some(list) = d.get("entitiesAffected").and_then(Value::as_array) {
        let vms: Vec<String> = list
            .iter()
            .filter(|e| text(e, "rel").is_none_or(|r| r.ends_with(":vm")))
            .filter_map(|e| text(e, "extId"))
            .collect();
        if !vms.is_empty() && !vms.iter().any(|e| e.eq_ignore_ascii_case(vm)) {
            return Err(format!(
                "the task affects another VM ({}), not {vm}",
                printable(&vms.join(", "), 120)
            ));
        }
    }
    let messages = || {
        let m: Vec<String> = d
            .get("errorMessages")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|e| text(e, "message")).collect())
            .unwrap_or_default();
        match m.is_empty() {
            true => text(d, "legacyErrorMessage").unwrap_or_else(|| "no error message".into()),
            false => printable(&m.join("; "), 300),
        }
    };
    match text(d, "status").as_deref() {
        Some(s @ ("QUEUED" | "RUNNING" | "CANCELING")) => Ok(TaskState::Pending(s.into())),
        Some("SUCCEEDED") => Ok(TaskState::Succeeded),
        Some("FAILED") => Ok(TaskState::Failed(messages())),
        Some(s @ ("CANCELED" | "SUSPENDED")) => Ok(TaskState::Canceled(s.into())),
        Some(s) => Err(format!("the task's status '{}'", printable(s, 40))),
        None => Err("the task has no status".into()),
    }
}

/// Whether a host's hypervisor is connected to Acropolis (`None`: the
/// answer does not say).
pub fn host_connected(body: &[u8]) -> Result<Option<bool>, String> {
    let v = json(body)?;
    let h = v.get("data").and_then(|d| d.get("hypervisor"));
    Ok(
        match h
            .and_then(|h| text(h, "acropolisConnectionState"))
            .as_deref()
        {
            Some("CONNECTED") => Some(true),
            Some(_) => Some(false),
            None => None,
        },
    )
}

/// The v4 error's messages and codes, for a message.
pub fn error_text(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let list = v.get("data")?.get("error")?.as_array()?;
    let parts: Vec<String> = list
        .iter()
        .filter_map(|e| {
            let m = text(e, "message")?;
            Some(match text(e, "code") {
                Some(c) => format!("{c}: {m}"),
                None => m,
            })
        })
        .collect();
    (!parts.is_empty()).then(|| printable(&parts.join("; "), 300))
}

/// What a reading says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// On, off, or why it is neither.
    pub state: Result<PowerState, String>,
    /// Why an "on" is not plainly running.
    pub note: Option<String>,
}

/// The rule (module documentation). `host_connected`: the VM's host's
/// connection, when it was read (an `OFF` VM still placed on a host).
pub fn judge(vm: &VmInfo, host_connected: Option<bool>) -> Judged {
    let plain = |state| Judged { state, note: None };
    match vm.power.as_str() {
        "ON" => plain(Ok(PowerState::On)),
        p @ ("PAUSED" | "SUSPENDED") => Judged {
            state: Ok(PowerState::On),
            note: Some(format!(
                "the VM is {p}: it keeps its memory and can go on (not off)"
            )),
        },
        "OFF" => match (&vm.host, host_connected) {
            (None, _) | (Some(_), Some(true)) => plain(Ok(PowerState::Off)),
            (Some(h), Some(false)) => plain(Err(format!(
                "its host {h} is disconnected: the last report (OFF) is not evidence, the VM \
                 may still run there"
            ))),
            (Some(h), None) => plain(Err(format!(
                "it is still placed on host {h}, whose connection could not be read: OFF is \
                 not evidence"
            ))),
        },
        other => plain(Err(format!(
            "Prism Central reports the power state '{}'",
            printable(other, 40)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vm(power: &str, host: Option<&str>) -> VmInfo {
        VmInfo {
            ext_id: "e".into(),
            name: "n".into(),
            power: power.into(),
            bios_uuid: None,
            host: host.map(str::to_string),
            cluster: None,
        }
    }

    #[test]
    fn off_only_when_nothing_can_run_it() {
        let (on, off) = (Ok(PowerState::On), Ok(PowerState::Off));
        assert_eq!(judge(&vm("ON", Some("h")), Some(false)).state, on);
        assert_eq!(judge(&vm("OFF", None), None).state, off);
        assert_eq!(judge(&vm("OFF", Some("h")), Some(true)).state, off);
        assert!(judge(&vm("OFF", Some("h")), Some(false))
            .state
            .unwrap_err()
            .contains("disconnected"));
        assert!(judge(&vm("OFF", Some("h")), None).state.is_err());
        for p in ["PAUSED", "SUSPENDED"] {
            let j = judge(&vm(p, Some("h")), None);
            assert_eq!(j.state, on);
            assert!(j.note.unwrap().contains(p));
        }
        assert!(judge(&vm("UNDETERMINED", Some("h")), None).state.is_err());
    }

    #[test]
    fn answers_read_as_the_v4_api_writes_them() {
        let b = json!({"data": {"extId": "e1", "name": "n1", "powerState": "ON",
            "biosUuid": "b1", "host": {"extId": "h1"}, "cluster": {"extId": "c1"}}});
        let v = super::vm(b.to_string().as_bytes()).unwrap();
        assert_eq!(
            (
                v.host.as_deref(),
                v.cluster.as_deref(),
                v.bios_uuid.as_deref()
            ),
            (Some("h1"), Some("c1"), Some("b1"))
        );
        let (l, total) = vm_list(br#"{"metadata":{"totalAvailableResults":0}}"#).unwrap();
        assert!(l.is_empty());
        assert_eq!(total, Some(0));
        assert_eq!(name_filter("o'brien"), "name eq 'o''brien'");
        assert_eq!(
            task_ref(br#"{"data":{"extId":"ZXJnb24=:t1"}}"#).unwrap(),
            "ZXJnb24=:t1"
        );
        let t = |s: &str| {
            json!({"data": {"extId": "t1", "status": s, "entitiesAffected": [{"extId": "E1", "rel": "vmm:ahv:config:vm"}],
                            "errorMessages": [{"message": "boom"}]}})
            .to_string()
        };
        assert_eq!(
            task(t("RUNNING").as_bytes(), "t1", "e1"),
            Ok(TaskState::Pending("RUNNING".into()))
        );
        assert_eq!(
            task(t("FAILED").as_bytes(), "t1", "e1"),
            Ok(TaskState::Failed("boom".into()))
        );
        assert_eq!(
            task(t("CANCELED").as_bytes(), "t1", "e1"),
            Ok(TaskState::Canceled("CANCELED".into()))
        );
        assert!(task(t("SUCCEEDED").as_bytes(), "t2", "e1")
            .unwrap_err()
            .contains("another task"));
        assert!(task(t("SUCCEEDED").as_bytes(), "t1", "e2")
            .unwrap_err()
            .contains("another VM"));
        let h = json!({"data": {"hypervisor": {"acropolisConnectionState": "DISCONNECTED"}}});
        assert_eq!(host_connected(h.to_string().as_bytes()), Ok(Some(false)));
        assert_eq!(
            error_text(r#"{"data":{"error":[{"message":"VM not found","code":"VMM-30303"}]}}"#)
                .as_deref(),
            Some("VMM-30303: VM not found")
        );
    }
}
