//! Pure decisions over Azure's JSON answers: a VM and its instance view
//! (the power state as a reading: on, off, a transition, or unreadable),
//! whether an answer is about the VM asked for, long-running operations'
//! progress, Resource Manager's error answers, token answers and lists.
//! No I/O.
//!
//! Power states (`PowerState/…` in the instance view's statuses):
//! `running` is on; `stopped` and `deallocated` are off (the VM's process
//! is gone: stopped keeps the host allocated, deallocated releases it);
//! `starting` is a power-on under way; `stopping` and `deallocating` a
//! power-off under way, never off; `unknown`, anything else, and an
//! instance view without a power state (Azure's view of a VM whose host
//! stopped reporting) are unreadable, never guessed.

use crate::engine::power::{Observed, PowerState, Transition};
use serde_json::Value;

/// An answer that does not have the shape Azure documents.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadAnswer(pub String);

/// One VM as Resource Manager describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vm {
    /// Its resource ID (`/subscriptions/…/virtualMachines/NAME`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// `properties.vmId`: the VM's unique ID (also its SMBIOS UUID).
    pub vm_id: Option<String>,
    /// Its region.
    pub location: Option<String>,
    /// `properties.provisioningState`.
    pub provisioning: Option<String>,
    /// The power state's code after `PowerState/` (`running`), when the
    /// instance view has one.
    pub power: Option<String>,
    /// Whether the answer carried an instance view at all.
    pub has_view: bool,
    /// The network interfaces' resource IDs.
    pub nics: Vec<String>,
    /// `osProfile.computerName` (the guest's host name).
    pub computer_name: Option<String>,
}

fn text(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str().map(str::to_string)
}

/// A VM from a GET of it (with `$expand=instanceView`) or a list entry.
pub fn vm(v: &Value) -> Result<Vm, BadAnswer> {
    let id = text(v, &["id"]).ok_or_else(|| BadAnswer("the VM has no id".into()))?;
    let name = text(v, &["name"]).ok_or_else(|| BadAnswer("the VM has no name".into()))?;
    let props = v.get("properties");
    let view = props.and_then(|p| p.get("instanceView"));
    let mut out = Vm {
        id,
        name,
        vm_id: props.and_then(|p| text(p, &["vmId"])),
        location: text(v, &["location"]),
        provisioning: props.and_then(|p| text(p, &["provisioningState"])),
        has_view: view.is_some(),
        computer_name: props.and_then(|p| text(p, &["osProfile", "computerName"])),
        ..Vm::default()
    };
    if let Some(view) = view {
        out.power = power_code(view);
    }
    if let Some(nics) = props
        .and_then(|p| p.get("networkProfile"))
        .and_then(|n| n.get("networkInterfaces"))
        .and_then(Value::as_array)
    {
        out.nics = nics.iter().filter_map(|n| text(n, &["id"])).collect();
    }
    Ok(out)
}

/// The code after `PowerState/` in an instance view's statuses.
pub fn power_code(view: &Value) -> Option<String> {
    view.get("statuses")?
        .as_array()?
        .iter()
        .filter_map(|s| s.get("code").and_then(Value::as_str))
        .find_map(|c| {
            c.get(..11)
                .filter(|p| p.eq_ignore_ascii_case("PowerState/"))
                .map(|_| c[11..].to_ascii_lowercase())
        })
}

/// What a power state code reads as; `None`: unreadable.
pub fn observed(code: &str) -> Option<Observed> {
    Some(match code {
        "running" => Observed::Settled(PowerState::On),
        "stopped" | "deallocated" => Observed::Settled(PowerState::Off),
        "starting" => Observed::InTransition(Transition::PoweringOn),
        "stopping" | "deallocating" => Observed::InTransition(Transition::PoweringOff),
        _ => return None,
    })
}

/// Why a VM's reading is not an answer about the VM asked for: another
/// name, another resource path, or another vmId than the one seen first
/// (deleted and created again under its name). `None`: it is.
pub fn wrong_vm(vm: &Vm, path: &str, name: &str, vm_id: Option<&str>) -> Option<String> {
    if !vm.name.eq_ignore_ascii_case(name) {
        return Some(format!(
            "the answer describes VM '{}', not '{name}'",
            printable(&vm.name, 80)
        ));
    }
    if !vm.id.eq_ignore_ascii_case(path) {
        return Some(format!(
            "the answer describes {}, not {path}",
            printable(&vm.id, 300)
        ));
    }
    match (vm_id, vm.vm_id.as_deref()) {
        (Some(want), Some(got)) if !want.eq_ignore_ascii_case(got) => Some(format!(
            "the VM's vmId is now {}, not {want} as read first (deleted and created again?)",
            printable(got, 60)
        )),
        (Some(want), None) => Some(format!("the answer has no vmId (expected {want})")),
        _ => None,
    }
}

/// A long-running operation's progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Still running.
    Running,
    /// Done, successfully.
    Succeeded,
    /// Ended without success (`Failed`, `Canceled`): its status and error.
    Failed {
        /// `Failed` or `Canceled`.
        status: String,
        /// The error's code (`OperationPreempted`), if any.
        code: String,
        /// The error's message.
        message: String,
    },
}

/// The progress an `Azure-AsyncOperation` status body reports.
pub fn async_status(body: &[u8]) -> Result<Progress, BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("the operation status is not JSON: {e}")))?;
    let status = text(&v, &["status"])
        .or_else(|| text(&v, &["properties", "provisioningState"]))
        .ok_or_else(|| BadAnswer("the operation status has no status".into()))?;
    Ok(match status.to_ascii_lowercase().as_str() {
        "succeeded" => Progress::Succeeded,
        "failed" | "canceled" | "cancelled" => {
            let (code, message) = error_parts(&v);
            Progress::Failed {
                status,
                code,
                message,
            }
        }
        // InProgress, and the custom states a provider may report.
        _ => Progress::Running,
    })
}

/// The progress a `Location` poll's answer reports: 202 running, 200/204
/// done, an error status failed.
pub fn location_status(status: u16, body: &[u8]) -> Progress {
    match status {
        202 => Progress::Running,
        200..=299 => Progress::Succeeded,
        _ => {
            let e = api_error(status, body);
            Progress::Failed {
                status: format!("HTTP {status}"),
                code: e.code,
                message: e.message,
            }
        }
    }
}

fn error_parts(v: &Value) -> (String, String) {
    let e = v.get("error").unwrap_or(v);
    (
        text(e, &["code"]).unwrap_or_default(),
        text(e, &["message"]).unwrap_or_default(),
    )
}

/// Resource Manager's error answer (`{"error": {"code", "message"}}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// The error code (`ResourceNotFound`, `AuthorizationFailed`, …).
    pub code: String,
    /// Its message, printable.
    pub message: String,
}

/// The error of a non-2xx answer (body already scrubbed by the caller).
pub fn api_error(status: u16, body: &[u8]) -> ApiError {
    let v: Option<Value> = serde_json::from_slice(body).ok();
    let (code, message) = v.as_ref().map(error_parts).unwrap_or_default();
    let message = match message.is_empty() {
        true => printable(&String::from_utf8_lossy(body), 300),
        false => printable(&message, 300),
    };
    ApiError {
        status,
        code: printable(&code, 80),
        message,
    }
}

/// A token endpoint's answer: the token and its lifetime in seconds.
pub fn token(body: &[u8]) -> Result<(String, u64), BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|_| BadAnswer("the token answer is not JSON".into()))?;
    let t = text(&v, &["access_token"])
        .filter(|t| !t.is_empty())
        .ok_or_else(|| BadAnswer("the token answer has no access_token".into()))?;
    // Entra ID says expires_in as a number, the metadata service as text.
    let secs = match v.get("expires_in") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
    .unwrap_or(300);
    Ok((t, secs))
}

/// A token endpoint's refusal: `error` and `error_description` (the
/// AADSTS code first), printable.
pub fn token_error(body: &[u8]) -> (String, String) {
    let v: Option<Value> = serde_json::from_slice(body).ok();
    let get = |k: &str| {
        v.as_ref()
            .and_then(|v| text(v, &[k]))
            .map(|s| printable(s.lines().next().unwrap_or(""), 240))
            .unwrap_or_default()
    };
    (get("error"), get("error_description"))
}

/// One page of a list: its VMs and the next page's URL.
pub fn vm_page(body: &[u8]) -> Result<(Vec<Vm>, Option<String>), BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("the list is not JSON: {e}")))?;
    let items = v
        .get("value")
        .and_then(Value::as_array)
        .ok_or_else(|| BadAnswer("the list has no value array".into()))?;
    let vms = items.iter().map(vm).collect::<Result<Vec<_>, _>>()?;
    Ok((vms, text(&v, &["nextLink"]).filter(|s| !s.is_empty())))
}

/// What the instance metadata service says about the VM it serves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThisVm {
    /// `compute.vmId`.
    pub vm_id: String,
    /// `compute.name`.
    pub name: String,
    /// `compute.resourceGroupName`.
    pub resource_group: String,
    /// `compute.subscriptionId`.
    pub subscription: String,
}

/// The metadata service's `compute` (the whole answer or its `compute`).
pub fn this_vm(body: &[u8]) -> Result<ThisVm, BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|_| BadAnswer("the instance metadata is not JSON".into()))?;
    let c = v.get("compute").unwrap_or(&v);
    let get = |k: &str| text(c, &[k]).unwrap_or_default();
    let out = ThisVm {
        vm_id: get("vmId"),
        name: get("name"),
        resource_group: get("resourceGroupName"),
        subscription: get("subscriptionId"),
    };
    match out.vm_id.is_empty() && out.name.is_empty() {
        true => Err(BadAnswer("the instance metadata names no VM".into())),
        false => Ok(out),
    }
}

/// A UUID with its first three fields byte-swapped: how Azure's vmId and
/// the SMBIOS system UUID a guest reads relate on some generations and
/// kernels (the SMBIOS fields are little-endian).
pub fn swapped_uuid(u: &str) -> Option<String> {
    let n = crate::engine::identity::normalise_uuid(u)?;
    let h: Vec<&str> = n.split('-').collect();
    let rev = |s: &str| {
        (0..s.len())
            .step_by(2)
            .rev()
            .map(|i| &s[i..i + 2])
            .collect::<String>()
    };
    Some(format!(
        "{}-{}-{}-{}-{}",
        rev(h[0]),
        rev(h[1]),
        rev(h[2]),
        h[3],
        h[4]
    ))
}

/// Text from an answer on one bounded line.
pub fn printable(s: &str, max: usize) -> String {
    crate::http::printable(s, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(codes: &[&str]) -> Value {
        json!({
            "id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/node1",
            "name": "node1",
            "location": "westeurope",
            "properties": {
                "vmId": "8f2b3c4d-1111-2222-3333-444455556666",
                "provisioningState": "Succeeded",
                "instanceView": {"statuses": codes.iter().map(|c| json!({"code": c})).collect::<Vec<_>>()},
                "networkProfile": {"networkInterfaces": [{"id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/n1"}]}
            }
        })
    }

    #[test]
    fn power_states_read_as_on_off_transition_or_nothing() {
        let code = |c: &[&str]| vm(&view(c)).unwrap().power;
        assert_eq!(
            code(&["ProvisioningState/succeeded", "PowerState/running"]).as_deref(),
            Some("running")
        );
        assert_eq!(code(&["ProvisioningState/succeeded"]), None, "stale view");
        let on = Observed::Settled(PowerState::On);
        let off = Observed::Settled(PowerState::Off);
        assert_eq!(observed("running"), Some(on));
        assert_eq!(observed("stopped"), Some(off));
        assert_eq!(observed("deallocated"), Some(off));
        assert_eq!(
            observed("stopping"),
            Some(Observed::InTransition(Transition::PoweringOff))
        );
        assert_eq!(
            observed("deallocating"),
            Some(Observed::InTransition(Transition::PoweringOff))
        );
        assert_eq!(
            observed("starting"),
            Some(Observed::InTransition(Transition::PoweringOn))
        );
        assert_eq!(observed("unknown"), None);
        assert_eq!(observed("hibernated"), None, "never guessed");
        let v = vm(&view(&["PowerState/stopped"])).unwrap();
        assert_eq!(v.nics.len(), 1);
        assert_eq!(
            v.vm_id.as_deref(),
            Some("8f2b3c4d-1111-2222-3333-444455556666")
        );
    }

    #[test]
    fn an_answer_about_another_vm_is_refused() {
        let v = vm(&view(&["PowerState/running"])).unwrap();
        let path =
            "/subscriptions/s/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/node1";
        assert_eq!(wrong_vm(&v, path, "NODE1", None), None);
        assert_eq!(
            wrong_vm(
                &v,
                path,
                "node1",
                Some("8F2B3C4D-1111-2222-3333-444455556666")
            ),
            None
        );
        assert!(wrong_vm(&v, path, "node2", None)
            .unwrap()
            .contains("not 'node2'"));
        assert!(wrong_vm(&v, &path.replace("node1", "x/node1"), "node1", None).is_some());
        assert!(wrong_vm(
            &v,
            path,
            "node1",
            Some("00000000-0000-0000-0000-000000000001")
        )
        .unwrap()
        .contains("vmId"));
    }

    #[test]
    fn operations_end_in_success_or_failure() {
        assert_eq!(
            async_status(br#"{"status":"InProgress"}"#),
            Ok(Progress::Running)
        );
        assert_eq!(
            async_status(br#"{"status":"Succeeded"}"#),
            Ok(Progress::Succeeded)
        );
        let f = async_status(
            br#"{"status":"Failed","error":{"code":"OperationPreempted","message":"preempted"}}"#,
        )
        .unwrap();
        assert!(matches!(f, Progress::Failed { ref code, .. } if code == "OperationPreempted"));
        assert!(async_status(b"{}").is_err());
        assert_eq!(location_status(202, b""), Progress::Running);
        assert_eq!(location_status(204, b""), Progress::Succeeded);
        assert!(matches!(
            location_status(
                500,
                br#"{"error":{"code":"InternalExecutionError","message":"x"}}"#
            ),
            Progress::Failed { .. }
        ));
    }

    #[test]
    fn errors_tokens_lists_and_metadata() {
        let e = api_error(
            404,
            br#"{"error":{"code":"ResourceNotFound","message":"The Resource was not found."}}"#,
        );
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("ResourceNotFound", "The Resource was not found.")
        );
        assert_eq!(api_error(502, b"bad gateway").message, "bad gateway");
        assert_eq!(
            token(br#"{"access_token":"t","expires_in":3599}"#),
            Ok(("t".into(), 3599))
        );
        assert_eq!(
            token(br#"{"access_token":"t","expires_in":"86399"}"#),
            Ok(("t".into(), 86399))
        );
        assert!(token(br#"{"error":"invalid_client"}"#).is_err());
        assert_eq!(
            token_error(br#"{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret.\r\nTrace ID: x"}"#),
            ("invalid_client".into(), "AADSTS7000215: Invalid client secret.".into())
        );
        let page = format!(
            r#"{{"value":[{}],"nextLink":"https://m/next"}}"#,
            view(&["PowerState/running"])
        );
        let (vms, next) = vm_page(page.as_bytes()).unwrap();
        assert_eq!((vms.len(), next.as_deref()), (1, Some("https://m/next")));
        let me = this_vm(
            br#"{"compute":{"vmId":"v","name":"n","resourceGroupName":"rg","subscriptionId":"s"}}"#,
        )
        .unwrap();
        assert_eq!((me.vm_id.as_str(), me.resource_group.as_str()), ("v", "rg"));
        assert!(this_vm(b"{}").is_err());
        assert_eq!(
            swapped_uuid("8F2B3C4D-1111-2222-3333-444455556666").as_deref(),
            Some("4d3c2b8f-1111-2222-3333-444455556666")
        );
    }
}
