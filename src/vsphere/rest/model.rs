//! What the vSphere Automation API's answers mean, as pure functions over
//! bytes: the two API generations and their shapes, the session id, the VM
//! list, the power state, the error body. Nothing here talks to the
//! network; everything takes arbitrary bytes without panicking.
//!
//! | | `/rest` (vSphere 6.5+) | `/api` (7.0 U2+) |
//! |---|---|---|
//! | session | `POST …/com/vmware/cis/session` → `{"value": ID}` | `POST /api/session` → `"ID"` |
//! | list | `GET …/vcenter/vm?filter.names=N` → `{"value": [..]}` | `GET /api/vcenter/vm?names=N` → `[..]` |
//! | power | `GET …/vcenter/vm/VM/power` → `{"value": {"state": S}}` | → `{"state": S}` |
//! | stop/start | `POST …/vcenter/vm/VM/power/stop` | `POST /api/vcenter/vm/VM/power?action=stop` |
//! | errors | `{"type": "com.vmware.vapi.std.errors.KIND", "value": {"messages": [..]}}` | `{"error_type": "KIND", "messages": [..]}` |

use crate::engine::power::PowerState;
use serde_json::Value;

/// Which generation of the API a path speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// `/rest`: answers wrapped in `{"value": …}`, filters `filter.X`.
    Rest,
    /// `/api`: bare answers, filters without a prefix, power by `?action=`.
    Api,
}

impl Generation {
    /// The generation an `--api-path` speaks: a path whose last segment is
    /// `api` is the newer one; anything else (upstream's `/rest`, a proxy's
    /// prefix) the older one, as upstream speaks every path.
    pub fn of_path(path: &str) -> Generation {
        match path.trim_end_matches('/').rsplit('/').next() {
            Some("api") => Generation::Api,
            _ => Generation::Rest,
        }
    }

    /// The session resource below the API path.
    pub fn session_path(self) -> &'static str {
        match self {
            Generation::Rest => "com/vmware/cis/session",
            Generation::Api => "session",
        }
    }

    /// The query key of a list filter (`names`, `vms`, `power_states`).
    pub fn filter_key(self, name: &str) -> String {
        match self {
            Generation::Rest => format!("filter.{name}"),
            Generation::Api => name.to_string(),
        }
    }

    /// The segments below the API path and the query of a power action.
    pub fn power_action(self, vm: &str, action: &str) -> (Vec<String>, Option<(String, String)>) {
        let mut path = vec![
            "vcenter".into(),
            "vm".into(),
            vm.to_string(),
            "power".into(),
        ];
        match self {
            Generation::Rest => {
                path.push(action.to_string());
                (path, None)
            }
            Generation::Api => (path, Some(("action".into(), action.to_string()))),
        }
    }

    /// A short name for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Generation::Rest => "/rest",
            Generation::Api => "/api",
        }
    }
}

/// The answer's payload: `value` under `/rest`; the answer itself under
/// `/api`. A `/rest`-shaped answer met under `/api` (or the reverse) is
/// read as what it is: the shapes cannot be confused (an `/api` object
/// never has a sole `value` member).
fn payload(v: &Value) -> &Value {
    match v {
        Value::Object(m) if m.len() == 1 && m.contains_key("value") => &m["value"],
        other => other,
    }
}

fn json(body: &[u8]) -> Result<Value, String> {
    crate::parse::json(body, &crate::parse::Limits::ANSWER).map_err(|e| match e {
        crate::parse::Refused::Json(_) => format!(
            "the answer is not JSON ({} bytes: {})",
            body.len(),
            printable(&String::from_utf8_lossy(body), 60)
        ),
        other => other.to_string(),
    })
}

/// Text from the network, bounded and on one line (the shared rule).
pub use crate::http::printable;

/// The session id of a session's creation: a JSON string, bare or as
/// `value`. Bounded (a real id is 32–64 characters) and header-safe.
pub fn session_id(body: &[u8]) -> Result<String, String> {
    let v = json(body)?;
    let id = payload(&v)
        .as_str()
        .ok_or("the session answer holds no session id")?;
    if id.is_empty() || id.len() > 512 || !id.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the session id in the answer is empty, too long or not printable".into());
    }
    Ok(id.to_string())
}

/// A VM's power state as the API names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VmPower {
    /// `POWERED_ON`.
    On,
    /// `POWERED_OFF`.
    Off,
    /// `SUSPENDED`: the memory image can resume and write again.
    Suspended,
    /// Anything else (a newer release's state): never read as off.
    Other(String),
}

impl VmPower {
    /// Reads the API's name.
    pub fn parse(s: &str) -> VmPower {
        match s {
            "POWERED_ON" => VmPower::On,
            "POWERED_OFF" => VmPower::Off,
            "SUSPENDED" => VmPower::Suspended,
            other => VmPower::Other(printable(other, 40)),
        }
    }

    /// What it means for fencing: suspended is **on** (it can resume);
    /// an unknown state is no state at all (`None`).
    pub fn fencing_state(&self) -> Option<PowerState> {
        match self {
            VmPower::On | VmPower::Suspended => Some(PowerState::On),
            VmPower::Off => Some(PowerState::Off),
            VmPower::Other(_) => None,
        }
    }

    /// The API's name.
    pub fn as_str(&self) -> &str {
        match self {
            VmPower::On => "POWERED_ON",
            VmPower::Off => "POWERED_OFF",
            VmPower::Suspended => "SUSPENDED",
            VmPower::Other(s) => s,
        }
    }
}

/// One VM of a list (`vcenter/vm`'s summary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmSummary {
    /// Its identifier (`vm-123`).
    pub vm: String,
    /// Its inventory name.
    pub name: String,
    /// Its power state.
    pub power: VmPower,
}

/// A VM identifier as the API hands them out: safe in a path segment.
pub fn id_ok(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

/// Reads a list of VM summaries. An entry without an identifier is an
/// error (it could not be acted on, and skipping it could hide a twin).
pub fn vm_list(body: &[u8]) -> Result<Vec<VmSummary>, String> {
    let v = json(body)?;
    let items = payload(&v).as_array().ok_or("the VM list is not a list")?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let vm = item
            .get("vm")
            .and_then(Value::as_str)
            .filter(|id| id_ok(id))
            .ok_or("a VM in the list has no usable identifier")?;
        let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
        let power = item
            .get("power_state")
            .and_then(Value::as_str)
            .map(VmPower::parse)
            .unwrap_or_else(|| VmPower::Other("(none)".into()));
        out.push(VmSummary {
            vm: vm.to_string(),
            name: name.to_string(),
            power,
        });
    }
    Ok(out)
}

/// Reads a VM's power information (`{"state": S, …}`).
pub fn power(body: &[u8]) -> Result<VmPower, String> {
    let v = json(body)?;
    payload(&v)
        .get("state")
        .and_then(Value::as_str)
        .map(VmPower::parse)
        .ok_or_else(|| "the power answer has no state".to_string())
}

/// Reads a VM's BIOS UUID from its information (`identity.bios_uuid`,
/// vSphere 7.0 and later); `None` where the release does not say.
pub fn bios_uuid(body: &[u8]) -> Option<String> {
    let v = json(body).ok()?;
    payload(&v)
        .pointer("/identity/bios_uuid")
        .and_then(Value::as_str)
        .map(|s| printable(s, 64))
}

/// An error answer: its standard error kind (lower case, as the `/rest`
/// type's last part: `not_found`, `already_in_desired_state`, …) and its
/// first message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiError {
    /// The kind, lower case; empty when the body names none.
    pub kind: String,
    /// The first default message, printable; empty when there is none.
    pub message: String,
}

impl ApiError {
    /// Reads an error body of either generation; anything else (HTML from
    /// a proxy, nothing) gives an empty error.
    pub fn parse(body: &[u8]) -> ApiError {
        let Ok(v) = crate::parse::json::<Value>(body, &crate::parse::Limits::ANSWER) else {
            return ApiError::default();
        };
        let kind = v
            .get("error_type")
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
            .or_else(|| {
                v.get("type")
                    .and_then(Value::as_str)
                    .map(|t| t.rsplit('.').next().unwrap_or(t).to_ascii_lowercase())
            })
            .unwrap_or_default();
        let messages = v
            .get("messages")
            .or_else(|| v.pointer("/value/messages"))
            .and_then(Value::as_array);
        let message = messages
            .and_then(|m| m.first())
            .and_then(|m| m.get("default_message"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        ApiError {
            kind: printable(&kind, 60),
            message: printable(message, 200),
        }
    }

    /// `KIND: message` (or what there is), for a message.
    pub fn describe(&self) -> String {
        match (self.kind.is_empty(), self.message.is_empty()) {
            (false, false) => format!("{}: {}", self.kind, self.message),
            (false, true) => self.kind.clone(),
            (true, false) => self.message.clone(),
            (true, true) => "no error body".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_by_path() {
        assert_eq!(Generation::of_path("/rest"), Generation::Rest);
        assert_eq!(Generation::of_path("/api"), Generation::Api);
        assert_eq!(Generation::of_path("/api/"), Generation::Api);
        assert_eq!(Generation::of_path("/proxy/vc1/api"), Generation::Api);
        assert_eq!(Generation::of_path("/proxy/rest"), Generation::Rest);
        assert_eq!(Generation::of_path(""), Generation::Rest);
        assert_eq!(Generation::Rest.filter_key("names"), "filter.names");
        assert_eq!(Generation::Api.filter_key("names"), "names");
        let (p, q) = Generation::Rest.power_action("vm-1", "stop");
        assert_eq!(
            (p.join("/"), q),
            ("vcenter/vm/vm-1/power/stop".into(), None)
        );
        let (p, q) = Generation::Api.power_action("vm-1", "start");
        assert_eq!(
            (p.join("/"), q),
            (
                "vcenter/vm/vm-1/power".into(),
                Some(("action".into(), "start".into()))
            )
        );
    }

    #[test]
    fn session_ids_of_both_shapes() {
        assert_eq!(session_id(br#"{"value":"abc123"}"#).unwrap(), "abc123");
        assert_eq!(session_id(br#""abc123""#).unwrap(), "abc123");
        assert!(session_id(br#"{"value":""}"#).is_err());
        assert!(session_id(br#"{"value":"a b"}"#).is_err());
        assert!(session_id(br#"{"value":"a\r\nX-Evil: 1"}"#).is_err());
        assert!(session_id(b"<html>").is_err());
        assert!(session_id(br#"{"value":7}"#).is_err());
    }

    #[test]
    fn states_map_for_fencing() {
        assert_eq!(
            VmPower::parse("POWERED_ON").fencing_state(),
            Some(PowerState::On)
        );
        assert_eq!(
            VmPower::parse("POWERED_OFF").fencing_state(),
            Some(PowerState::Off)
        );
        // Suspended can resume: not off (upstream calls it off).
        assert_eq!(
            VmPower::parse("SUSPENDED").fencing_state(),
            Some(PowerState::On)
        );
        assert_eq!(VmPower::parse("powered_off").fencing_state(), None);
        assert_eq!(VmPower::parse("").fencing_state(), None);
        assert_eq!(
            power(br#"{"value":{"state":"SUSPENDED"}}"#).unwrap(),
            VmPower::Suspended
        );
        assert_eq!(
            power(br#"{"state":"POWERED_OFF","clean_power_off":true}"#).unwrap(),
            VmPower::Off
        );
        assert!(power(br#"{"value":{}}"#).is_err());
    }

    #[test]
    fn lists_of_both_shapes() {
        let rest =
            br#"{"value":[{"vm":"vm-101","name":"node1","power_state":"POWERED_ON","cpu_count":1},
            {"vm":"vm-104","name":"node4","power_state":"SUSPENDED"}]}"#;
        let l = vm_list(rest).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!((l[1].vm.as_str(), l[1].name.as_str()), ("vm-104", "node4"));
        assert_eq!(l[1].power, VmPower::Suspended);
        let api = br#"[{"vm":"vm-9","name":"x","power_state":"POWERED_OFF"}]"#;
        assert_eq!(vm_list(api).unwrap()[0].power, VmPower::Off);
        assert_eq!(vm_list(br#"{"value":[]}"#).unwrap(), vec![]);
        assert!(vm_list(br#"[{"name":"x"}]"#).is_err(), "no identifier");
        assert!(vm_list(br#"[{"vm":"../../session","name":"x"}]"#).is_err());
        assert!(vm_list(br#"{"value":{}}"#).is_err());
    }

    #[test]
    fn errors_of_both_shapes() {
        let rest = br#"{"type":"com.vmware.vapi.std.errors.already_in_desired_state",
            "value":{"messages":[{"default_message":"Virtual machine is already powered off.","id":"x","args":[]}]}}"#;
        let e = ApiError::parse(rest);
        assert_eq!(e.kind, "already_in_desired_state");
        assert_eq!(e.message, "Virtual machine is already powered off.");
        let api = br#"{"error_type":"UNAUTHORIZED","messages":[{"default_message":"Permission denied.\n"}]}"#;
        let e = ApiError::parse(api);
        assert_eq!(e.kind, "unauthorized");
        assert_eq!(e.message, "Permission denied.?");
        assert_eq!(e.describe(), "unauthorized: Permission denied.?");
        assert_eq!(
            ApiError::parse(b"<html>bad gateway</html>").describe(),
            "no error body"
        );
    }

    #[test]
    fn bios_uuid_when_the_release_says() {
        let b = br#"{"value":{"name":"n","identity":{"bios_uuid":"4210c1a2-0000-0000-0000-000000000001"}}}"#;
        assert_eq!(
            bios_uuid(b).as_deref(),
            Some("4210c1a2-0000-0000-0000-000000000001")
        );
        assert_eq!(bios_uuid(br#"{"value":{"name":"n"}}"#), None);
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A small deterministic generator: bytes, JSON-ish fragments, and
        // truncations of real answers.
        let seeds: [&[u8]; 6] = [
            br#"{"value":[{"vm":"vm-1","name":"a","power_state":"POWERED_ON"}]}"#,
            br#"{"type":"com.vmware.vapi.std.errors.not_found","value":{"messages":[{"default_message":"x"}]}}"#,
            br#"{"value":{"state":"SUSPENDED"}}"#,
            br#""0123456789abcdef""#,
            br#"{"error_type":"NOT_FOUND","messages":[1,{"default_message":null}]}"#,
            b"\xff\xfe\x00{[\"",
        ];
        let mut x: u32 = 0x1234_5678;
        for seed in seeds {
            for cut in 0..=seed.len() {
                let b = &seed[..cut];
                let _ = (vm_list(b), power(b), session_id(b), bios_uuid(b));
                let _ = ApiError::parse(b).describe();
            }
        }
        for _ in 0..2000 {
            let n = (x % 64) as usize;
            let mut b = Vec::with_capacity(n);
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                const ALPHABET: &[u8] = b"{}[]\":,value state vm\\\x00\xff";
                b.push(ALPHABET[x as usize % ALPHABET.len()]);
            }
            let _ = (vm_list(&b), power(&b), session_id(&b), bios_uuid(&b));
            let _ = ApiError::parse(&b).describe();
        }
    }
}
