//! Pure decisions over Compute Engine's JSON answers: an instance (its
//! status as a reading: on, off, a transition, or unreadable), whether an
//! answer is about the instance asked for, zone operations and their
//! errors, the operation a `requestId` started (read back from the zone's
//! operation list), the API's error answers, token answers and list pages.
//! No I/O.
//!
//! Statuses (Compute Engine v1, `Instance.status`): `RUNNING` is on;
//! `TERMINATED` and `STOPPED` are off (the guest is gone); `PROVISIONING`
//! and `STAGING` are a start under way; `STOPPING` a stop under way, never
//! off. `SUSPENDED` and `SUSPENDING` are **not off**: the guest's memory
//! is kept and it resumes where it was, so fencekit reads them as on (an
//! off stops the instance, then confirms it). `REPAIRING` and anything
//! else are unreadable, never guessed.

use crate::engine::power::{Observed, PowerState, Transition};
use serde_json::Value;

/// An answer that does not have the shape Compute Engine documents.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadAnswer(pub String);

/// One instance as Compute Engine describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instance {
    /// Its numeric ID (a decimal string: a uint64).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its zone's name (the last part of the zone URL).
    pub zone: String,
    /// `status`.
    pub status: String,
    /// `selfLink`.
    pub self_link: Option<String>,
}

fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The last part of a resource URL (`…/zones/us-central1-a` → the zone).
pub fn last_part(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

/// An instance from a GET of it or a list entry.
pub fn instance(v: &Value) -> Result<Instance, BadAnswer> {
    let name = text(v, "name").ok_or_else(|| BadAnswer("the instance has no name".into()))?;
    Ok(Instance {
        id: text(v, "id").ok_or_else(|| BadAnswer(format!("instance {name} has no id")))?,
        zone: text(v, "zone")
            .map(|z| last_part(&z).to_string())
            .unwrap_or_default(),
        status: text(v, "status").unwrap_or_default(),
        self_link: text(v, "selfLink"),
        name,
    })
}

/// What a status means, or `None` when it is not an answer.
pub fn observed(status: &str) -> Option<Observed> {
    Some(match status {
        "RUNNING" | "SUSPENDED" | "SUSPENDING" => Observed::Settled(PowerState::On),
        "TERMINATED" | "STOPPED" => Observed::Settled(PowerState::Off),
        "PROVISIONING" | "STAGING" => Observed::InTransition(Transition::PoweringOn),
        "STOPPING" => Observed::InTransition(Transition::PoweringOff),
        _ => return None,
    })
}

/// Why an answer is not about the instance asked for, if it is not.
pub fn wrong_instance(i: &Instance, name: &str, zone: &str, id: Option<&str>) -> Option<String> {
    if i.name != name {
        return Some(format!(
            "the answer names instance {}, not {name}",
            printable(&i.name, 64)
        ));
    }
    if !zone.is_empty() && !i.zone.is_empty() && i.zone != zone {
        return Some(format!(
            "the answer is about an instance in zone {}, not {zone}",
            printable(&i.zone, 64)
        ));
    }
    match id {
        Some(id) if id != i.id => Some(format!(
            "instance {name} now has id {}, not {id} as read first (deleted and created again?)",
            printable(&i.id, 32)
        )),
        _ => None,
    }
}

/// A page of a zone's instance list: the instances and the next page's token.
pub fn instance_page(body: &[u8]) -> Result<(Vec<Instance>, Option<String>), BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("a list page: not JSON: {e}")))?;
    let items = match v.get("items") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.iter().map(instance).collect::<Result<_, _>>()?,
        Some(_) => return Err(BadAnswer("a list page whose items are not a list".into())),
    };
    let next = text(&v, "nextPageToken").filter(|t| !t.is_empty());
    Ok((items, next))
}

/// The zone of `name` in an aggregated list page, and the next page's token.
pub fn aggregated_zone(
    body: &[u8],
    name: &str,
) -> Result<(Option<String>, Option<String>), BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("an aggregated list: not JSON: {e}")))?;
    let next = text(&v, "nextPageToken").filter(|t| !t.is_empty());
    let zones = v.get("items").and_then(Value::as_object);
    for scoped in zones.into_iter().flat_map(|z| z.values()) {
        for i in scoped
            .get("instances")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Ok(i) = instance(i) {
                if i.name == name && !i.zone.is_empty() {
                    return Ok((Some(i.zone), next));
                }
            }
        }
    }
    Ok((None, next))
}

/// A zone operation's progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// `PENDING` or `RUNNING`.
    Running,
    /// `DONE` without an error.
    Done,
    /// `DONE` with an error.
    Failed {
        /// The first error's code (`RESOURCE_NOT_READY`).
        code: String,
        /// Its message.
        message: String,
    },
}

/// An operation's name and progress.
pub type Named = (String, Progress);

/// An operation: its name and progress.
pub fn operation(body: &[u8]) -> Result<Named, BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("an operation: not JSON: {e}")))?;
    operation_of(&v)
}

/// The operation a power request's `requestId` started, from one page of
/// a zone's operation list (`zoneOperations.list` filtered by
/// `clientOperationId`, which Compute Engine sets to the `requestId` a
/// request carried), and the next page's token. Entries with another
/// `clientOperationId` are passed over (a filter the server did not
/// apply); one with this `requestId` about another instance or another
/// verb is a contradiction, never evidence.
pub fn request_operation(
    body: &[u8],
    request_id: &str,
    instance: &str,
    verb: &str,
) -> Result<(Option<Named>, Option<String>), BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("an operation list: not JSON: {e}")))?;
    let next = text(&v, "nextPageToken").filter(|t| !t.is_empty());
    let items = match v.get("items") {
        None | Some(Value::Null) => return Ok((None, next)),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(BadAnswer(
                "an operation list whose items are not a list".into(),
            ))
        }
    };
    for o in items {
        if text(o, "clientOperationId").as_deref() != Some(request_id) {
            continue;
        }
        let (name, progress) = operation_of(o)?;
        let target = text(o, "targetLink").unwrap_or_default();
        if last_part(&target) != instance {
            return Err(BadAnswer(format!(
                "operation {} of requestId {request_id} is about '{}', not instance {instance}",
                printable(&name, 80),
                printable(&target, 120)
            )));
        }
        let kind = text(o, "operationType").unwrap_or_default();
        if kind != verb {
            return Err(BadAnswer(format!(
                "operation {} of requestId {request_id} is a '{}', not a {verb}",
                printable(&name, 80),
                printable(&kind, 40)
            )));
        }
        return Ok((Some((name, progress)), next));
    }
    Ok((None, next))
}

fn operation_of(v: &Value) -> Result<(String, Progress), BadAnswer> {
    let name = text(v, "name").ok_or_else(|| BadAnswer("the operation has no name".into()))?;
    let status = text(v, "status").unwrap_or_default();
    let progress = match status.as_str() {
        "PENDING" | "RUNNING" => Progress::Running,
        "DONE" => match v.get("error") {
            Some(e) if !e.is_null() => {
                let first = e
                    .get("errors")
                    .and_then(Value::as_array)
                    .and_then(|a| a.first());
                Progress::Failed {
                    code: first
                        .and_then(|f| text(f, "code"))
                        .map(|c| printable(&c, 80))
                        .unwrap_or_else(|| "(no code)".into()),
                    message: first
                        .and_then(|f| text(f, "message"))
                        .or_else(|| text(v, "httpErrorMessage"))
                        .map(|m| printable(&m, 300))
                        .unwrap_or_default(),
                }
            }
            _ => Progress::Done,
        },
        other => {
            return Err(BadAnswer(format!(
                "operation {} has status '{}'",
                printable(&name, 80),
                printable(other, 40)
            )))
        }
    };
    Ok((name, progress))
}

/// An error answer: status, reason (`notFound`) and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// `error.errors[0].reason`, or `error.status`.
    pub reason: String,
    /// `error.message`.
    pub message: String,
}

/// The API's error answer (`{"error": {"code", "message", "errors": […]}}`).
pub fn api_error(status: u16, body: &[u8]) -> ApiError {
    let v: Option<Value> = serde_json::from_slice(body).ok();
    let e = v.as_ref().and_then(|v| v.get("error"));
    let reason = e
        .and_then(|e| e.get("errors"))
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(|f| text(f, "reason"))
        .or_else(|| e.and_then(|e| text(e, "status")))
        .unwrap_or_default();
    let message = e
        .and_then(|e| text(e, "message"))
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned());
    ApiError {
        status,
        reason: printable(&reason, 60),
        message: printable(&message, 300),
    }
}

/// A token answer: the access token and its lifetime in seconds.
pub fn token(body: &[u8]) -> Result<(String, u64), BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|_| BadAnswer("the token answer is not JSON".into()))?;
    let t = v
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| BadAnswer("the token answer has no access_token".into()))?;
    let secs = v.get("expires_in").and_then(Value::as_u64).unwrap_or(3600);
    Ok((t.to_string(), secs))
}

/// A token endpoint's refusal: `error` and `error_description`.
pub fn token_error(body: &[u8]) -> (String, String) {
    let v: Option<Value> = serde_json::from_slice(body).ok();
    let get = |k: &str| {
        v.as_ref()
            .and_then(|v| v.get(k))
            .and_then(Value::as_str)
            .map(|s| printable(s, 200))
            .unwrap_or_default()
    };
    (get("error"), get("error_description"))
}

/// Network text made printable and bounded.
pub fn printable(s: &str, max: usize) -> String {
    crate::http::printable(s, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statuses_map_to_readings_and_suspended_is_never_off() {
        use PowerState::*;
        assert_eq!(observed("RUNNING"), Some(Observed::Settled(On)));
        assert_eq!(observed("TERMINATED"), Some(Observed::Settled(Off)));
        assert_eq!(observed("STOPPED"), Some(Observed::Settled(Off)));
        for s in ["SUSPENDED", "SUSPENDING"] {
            assert_eq!(observed(s), Some(Observed::Settled(On)), "{s}");
        }
        assert_eq!(
            observed("STOPPING"),
            Some(Observed::InTransition(Transition::PoweringOff))
        );
        assert_eq!(
            observed("STAGING"),
            Some(Observed::InTransition(Transition::PoweringOn))
        );
        assert_eq!(observed("REPAIRING"), None);
        assert_eq!(observed(""), None);
    }

    #[test]
    fn instances_pages_and_answers_about_another() {
        let v = json!({"id": "123", "name": "n1", "status": "RUNNING",
            "zone": "https://x/compute/v1/projects/p/zones/z-a"});
        let i = instance(&v).unwrap();
        assert_eq!((i.id.as_str(), i.zone.as_str()), ("123", "z-a"));
        assert!(wrong_instance(&i, "n1", "z-a", Some("123")).is_none());
        assert!(wrong_instance(&i, "n2", "z-a", None).is_some());
        assert!(wrong_instance(&i, "n1", "z-b", None).is_some());
        assert!(wrong_instance(&i, "n1", "z-a", Some("9")).is_some());
        let page = json!({"items": [v], "nextPageToken": "t2"}).to_string();
        let (items, next) = instance_page(page.as_bytes()).unwrap();
        assert_eq!((items.len(), next.as_deref()), (1, Some("t2")));
        assert_eq!(instance_page(b"{}").unwrap().0.len(), 0);
        assert!(instance_page(b"nope").is_err());
        let agg = json!({"items": {"zones/z-a": {"warning": {}}, "zones/z-b": {"instances": [
            {"id": "1", "name": "n1", "zone": "projects/p/zones/z-b"}]}}});
        assert_eq!(
            aggregated_zone(agg.to_string().as_bytes(), "n1")
                .unwrap()
                .0
                .as_deref(),
            Some("z-b")
        );
    }

    #[test]
    fn operations_errors_and_tokens() {
        let op = |v: Value| operation(v.to_string().as_bytes()).unwrap();
        assert_eq!(
            op(json!({"name": "o", "status": "RUNNING"})).1,
            Progress::Running
        );
        assert_eq!(op(json!({"name": "o", "status": "DONE"})).1, Progress::Done);
        let f = op(json!({"name": "o", "status": "DONE", "error": {"errors": [
            {"code": "RESOURCE_NOT_READY", "message": "no"}]}}));
        assert!(matches!(f.1, Progress::Failed { ref code, .. } if code == "RESOURCE_NOT_READY"));
        assert!(operation(br#"{"name":"o","status":"WEIRD"}"#).is_err());
        assert!(operation(b"[]").is_err());
        let e = api_error(
            404,
            br#"{"error":{"code":404,"message":"gone","errors":[{"reason":"notFound"}]}}"#,
        );
        assert_eq!(
            (e.reason.as_str(), e.message.as_str()),
            ("notFound", "gone")
        );
        assert_eq!(
            token(br#"{"access_token":"t","expires_in":60}"#).unwrap(),
            ("t".into(), 60)
        );
        assert!(token(b"{}").is_err());
        assert_eq!(
            token_error(br#"{"error":"invalid_grant","error_description":"bad"}"#).0,
            "invalid_grant"
        );
    }

    #[test]
    fn the_operation_a_request_id_started_is_found_in_a_list_page() {
        let r = "0b6f1f5e-8d3a-4c1e-9a57-3d2b7c1e4f10";
        let link = "https://x/compute/v1/projects/p/zones/z-a/instances/n1";
        let page = |items: Value| {
            let v = json!({"kind": "compute#operationList", "items": items});
            request_operation(v.to_string().as_bytes(), r, "n1", "stop")
        };
        // Compute Engine's answer to the filter: the one operation.
        let (found, next) = page(json!([{"name": "op-1", "status": "RUNNING",
            "operationType": "stop", "targetLink": link, "clientOperationId": r}]))
        .unwrap();
        assert_eq!(found, Some(("op-1".into(), Progress::Running)));
        assert_eq!(next, None);
        // An ended one keeps its error.
        let (found, _) = page(
            json!([{"name": "op-1", "status": "DONE", "operationType": "stop",
            "targetLink": link, "clientOperationId": r,
            "error": {"errors": [{"code": "QUOTA", "message": "no"}]}}]),
        )
        .unwrap();
        assert!(matches!(found, Some((_, Progress::Failed { ref code, .. })) if code == "QUOTA"));
        // Nothing for it: no items at all (the API leaves `items` out), or
        // other requests' operations (a filter not applied) with the next page.
        let empty = br#"{"kind":"compute#operationList","id":"projects/p/zones/z-a/operations"}"#;
        assert_eq!(
            request_operation(empty, r, "n1", "stop").unwrap(),
            (None, None)
        );
        let other = json!({"items": [{"name": "op-2", "status": "DONE", "operationType": "stop",
            "targetLink": link, "clientOperationId": "another"}, {"name": "op-3",
            "status": "DONE", "operationType": "stop", "targetLink": link}],
            "nextPageToken": "p2"});
        assert_eq!(
            request_operation(other.to_string().as_bytes(), r, "n1", "stop").unwrap(),
            (None, Some("p2".into()))
        );
        // This requestId about another instance or verb: a contradiction.
        let elsewhere = link.replace("/n1", "/n2");
        assert!(page(
            json!([{"name": "op-1", "status": "DONE", "operationType": "stop",
            "targetLink": elsewhere, "clientOperationId": r}])
        )
        .is_err());
        assert!(page(
            json!([{"name": "op-1", "status": "DONE", "operationType": "start",
            "targetLink": link, "clientOperationId": r}])
        )
        .is_err());
        assert!(page(json!({"name": "op-1"})).is_err());
        assert!(request_operation(b"<html>", r, "n1", "stop").is_err());
    }
}
