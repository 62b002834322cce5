//! Pure Redfish decisions over parsed JSON: discovery, `PowerState`, the
//! reset types on offer and the one each intent uses, Task progress, and
//! the classification of error answers. No I/O: the driver feeds it what
//! arrived, the tests feed it captured bodies.
//!
//! Quirk numbers refer to `shared/reference/quirks.md`.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::{PowerCommand, PowerState};
use serde_json::Value;

/// The `@odata.id` of a resource or link object.
pub fn odata_id(v: &Value) -> Option<&str> {
    v.get("@odata.id").and_then(Value::as_str)
}

/// The `Systems` collection linked from the service root.
pub fn systems_link(root: &Value) -> Option<&str> {
    root.get("Systems").and_then(odata_id)
}

/// The session collection: `Links.Sessions`, else `SessionService` + `/Sessions`.
pub fn sessions_link(root: &Value) -> Option<String> {
    if let Some(s) = root
        .get("Links")
        .and_then(|l| l.get("Sessions"))
        .and_then(odata_id)
    {
        return Some(s.to_string());
    }
    root.get("SessionService")
        .and_then(odata_id)
        .map(|s| format!("{}/Sessions", s.trim_end_matches('/')))
}

/// The members' `@odata.id`s of a collection, in order.
pub fn members(collection: &Value) -> Vec<String> {
    collection
        .get("Members")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(odata_id).map(str::to_string).collect())
        .unwrap_or_default()
}

/// The last path segment of a URI (a member's Id by convention).
pub fn last_segment(uri: &str) -> &str {
    uri.trim_end_matches('/').rsplit('/').next().unwrap_or(uri)
}

/// What discovery decided from a collection's members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// This member.
    Member(String),
    /// The plug matched no member's path: read each member and compare its
    /// `Id`, `Name` and `UUID` ([`system_matches`]).
    LookUp,
}

/// Picks the system: exactly one member → it; a plug → the member whose
/// last segment or path equals it; several and no plug → an error listing
/// them. Never silently the last one (upstream fence_redfish does that).
pub fn choose_member(members: &[String], plug: Option<&str>) -> Result<Choice, String> {
    if members.is_empty() {
        return Err("the service lists no systems".into());
    }
    if let Some(p) = plug {
        let p = p.trim();
        let hit = members
            .iter()
            .find(|m| m.trim_end_matches('/') == p.trim_end_matches('/') || last_segment(m) == p);
        return Ok(match hit {
            Some(m) => Choice::Member(m.clone()),
            None => Choice::LookUp,
        });
    }
    match members {
        [one] => Ok(Choice::Member(one.clone())),
        many => Err(format!(
            "the service has {} systems ({}); choose one with a plug (its Id or Name) or --systems-uri",
            many.len(),
            list(many)
        )),
    }
}

/// The error for a plug that matched no system.
pub fn no_such_plug(plug: &str, members: &[String]) -> String {
    format!(
        "no system matches plug '{plug}' (systems: {})",
        list(members)
    )
}

fn list(members: &[String]) -> String {
    const SHOWN: usize = 16;
    let mut s = members
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if members.len() > SHOWN {
        s.push_str(&format!(", and {} more", members.len() - SHOWN));
    }
    s
}

/// True when a system resource's `Id`, `Name` or `UUID` equals `plug`.
pub fn system_matches(system: &Value, plug: &str) -> bool {
    ["Id", "Name", "UUID"].iter().any(|k| {
        system
            .get(*k)
            .and_then(Value::as_str)
            .is_some_and(|v| v == plug || (*k == "UUID" && v.eq_ignore_ascii_case(plug)))
    })
}

/// Reads `PowerState`. `On`/`Off` are states; the transitional
/// `PoweringOn`/`PoweringOff` are [`ErrorKind::Busy`] (a missed poll, never
/// the target state: quirk 14 — Ironic maps PoweringOff to off); anything
/// else, or nothing, is [`ErrorKind::StatusUnreadable`] (never a guess).
pub fn power_state(system: &Value) -> Result<PowerState, DriverError> {
    let unreadable = |m: String| DriverError::new(ErrorKind::StatusUnreadable, Stage::Status, m);
    match system.get("PowerState") {
        None | Some(Value::Null) => Err(unreadable("the system resource has no PowerState".into())),
        Some(Value::String(s)) => {
            let t = s.trim();
            if t.eq_ignore_ascii_case("On") {
                Ok(PowerState::On)
            } else if t.eq_ignore_ascii_case("Off") {
                Ok(PowerState::Off)
            } else if t.eq_ignore_ascii_case("PoweringOn") || t.eq_ignore_ascii_case("PoweringOff")
            {
                Err(DriverError::new(
                    ErrorKind::Busy,
                    Stage::Status,
                    format!("the BMC reports the transitional state {t}"),
                ))
            } else {
                Err(unreadable(format!(
                    "unknown PowerState '{}'",
                    printable(t, 40)
                )))
            }
        }
        Some(other) => Err(unreadable(format!(
            "PowerState is not a string ({})",
            printable(&other.to_string(), 40)
        ))),
    }
}

/// Where the reset types are published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offered {
    /// `ResetType@Redfish.AllowableValues` in the action.
    Listed(Vec<String>),
    /// Only through `@Redfish.ActionInfo` (quirk 18: some services); read it.
    ActionInfo(String),
    /// Not published at all: the standard types are assumed.
    Unpublished,
}

/// `Actions["#ComputerSystem.Reset"]` of a system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResetAction {
    /// The URI to POST to.
    pub target: String,
    /// The reset types on offer.
    pub offered: Offered,
}

/// Reads the reset action of a system resource.
pub fn reset_action(system: &Value) -> Result<ResetAction, String> {
    let action = system
        .get("Actions")
        .and_then(|a| a.get("#ComputerSystem.Reset"))
        .ok_or("the system offers no #ComputerSystem.Reset action")?;
    let target = action
        .get("target")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or("the #ComputerSystem.Reset action has no target")?
        .to_string();
    let listed = action
        .get("ResetType@Redfish.AllowableValues")
        .and_then(Value::as_array)
        .map(|a| strings(a));
    let offered = match (
        listed,
        action.get("@Redfish.ActionInfo").and_then(Value::as_str),
    ) {
        (Some(l), _) if !l.is_empty() => Offered::Listed(l),
        (_, Some(info)) => Offered::ActionInfo(info.to_string()),
        _ => Offered::Unpublished,
    };
    Ok(ResetAction { target, offered })
}

fn strings(a: &[Value]) -> Vec<String> {
    a.iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// The `ResetType` allowable values of an ActionInfo resource.
pub fn action_info_values(info: &Value) -> Option<Vec<String>> {
    info.get("Parameters")?
        .as_array()?
        .iter()
        .find(|p| p.get("Name").and_then(Value::as_str) == Some("ResetType"))?
        .get("AllowableValues")?
        .as_array()
        .map(|a| strings(a))
}

/// Reset types acceptable for a command, best first. Graceful types and
/// `PushPowerButton` (a toggle) are never used to fence.
pub fn preferences(command: PowerCommand) -> &'static [&'static str] {
    match command {
        PowerCommand::Off => &["ForceOff"],
        PowerCommand::On => &["On", "ForceOn"],
        PowerCommand::Cycle => &["ForceRestart", "PowerCycle"],
        PowerCommand::Reset => &["ForceRestart"],
        PowerCommand::Diag => &["Nmi"],
    }
}

/// The reset type for `command` among those offered (`None`: not
/// published, so the first preference is assumed). Err names what is offered.
pub fn choose_reset(command: PowerCommand, offered: Option<&[String]>) -> Result<String, String> {
    let wanted = preferences(command);
    let Some(offered) = offered else {
        return Ok(wanted[0].to_string());
    };
    for w in wanted {
        if let Some(o) = offered.iter().find(|o| o.as_str() == *w) {
            return Ok(o.clone());
        }
    }
    // Tolerate a service that spells the standard names in another case.
    for w in wanted {
        if let Some(o) = offered.iter().find(|o| o.eq_ignore_ascii_case(w)) {
            return Ok(o.clone());
        }
    }
    Err(format!(
        "the BMC offers no safe reset type for {command} (wanted {}; offered: {})",
        wanted.join(" or "),
        if offered.is_empty() {
            "none".to_string()
        } else {
            offered.join(", ")
        }
    ))
}

/// `off=ForceOff, on=On, cycle=ForceRestart, diag=Nmi` (or `-` where none fits).
pub fn describe_plan(offered: Option<&[String]>) -> String {
    [
        PowerCommand::Off,
        PowerCommand::On,
        PowerCommand::Cycle,
        PowerCommand::Diag,
    ]
    .iter()
    .map(|c| {
        format!(
            "{c}={}",
            choose_reset(*c, offered).unwrap_or_else(|_| "-".into())
        )
    })
    .collect::<Vec<_>>()
    .join(", ")
}

/// Where a Task stands (quirk 23: resets may answer 202 + a Task).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskProgress {
    /// Still running; the state named.
    Running(String),
    /// Finished successfully.
    Done,
    /// Finished unsuccessfully; why.
    Failed(String),
}

/// Reads a Task monitor or Task answer.
pub fn task_progress(status: u16, body: Option<&Value>) -> TaskProgress {
    let state = body
        .and_then(|b| b.get("TaskState"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let health = body
        .and_then(|b| b.get("TaskStatus"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let why = || {
        body.and_then(task_messages)
            .unwrap_or_else(|| format!("task state {state}"))
    };
    match state {
        "Completed" if health.eq_ignore_ascii_case("Critical") => TaskProgress::Failed(why()),
        "Completed" => TaskProgress::Done,
        "Exception" | "Killed" | "Cancelled" | "Cancelling" | "Interrupted" => {
            TaskProgress::Failed(why())
        }
        "" if status == 202 => TaskProgress::Running("accepted".into()),
        "" => TaskProgress::Done,
        s => TaskProgress::Running(s.to_string()),
    }
}

fn task_messages(body: &Value) -> Option<String> {
    let msgs = body.get("Messages")?.as_array()?;
    let text: Vec<String> = msgs
        .iter()
        .filter_map(|m| m.get("Message").and_then(Value::as_str))
        .map(|m| printable(m, 200))
        .collect();
    (!text.is_empty()).then(|| text.join("; "))
}

/// The human text of a Redfish error body: `error.message` and every
/// `@Message.ExtendedInfo[].Message`.
pub fn error_text(body: &Value) -> Option<String> {
    let err = body.get("error").unwrap_or(body);
    let mut parts = Vec::new();
    let info = err
        .get("@Message.ExtendedInfo")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("Message").and_then(Value::as_str))
                .map(|m| printable(m, 200))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if let Some(m) = err.get("message").and_then(Value::as_str) {
        // The generic "see ExtendedInfo" line says nothing on its own.
        if info.is_empty() || !m.contains("ExtendedInfo") {
            parts.push(printable(m, 200));
        }
    }
    parts.extend(info);
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Every `MessageId` and `error.code` in an error body.
pub fn message_ids(body: &Value) -> Vec<String> {
    let err = body.get("error").unwrap_or(body);
    let mut ids = Vec::new();
    if let Some(c) = err.get("code").and_then(Value::as_str) {
        ids.push(c.to_string());
    }
    if let Some(a) = err.get("@Message.ExtendedInfo").and_then(Value::as_array) {
        ids.extend(
            a.iter()
                .filter_map(|m| m.get("MessageId").and_then(Value::as_str))
                .map(str::to_string),
        );
    }
    ids
}

/// At most `max` characters of `s`, control characters replaced.
pub fn printable(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out.trim().to_string()
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        400 => "bad request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not found",
        405 => "method not allowed",
        409 => "conflict",
        429 => "too many requests",
        500 => "internal server error",
        501 => "not implemented",
        502 => "bad gateway",
        503 => "service unavailable",
        504 => "gateway timeout",
        300..=399 => "redirect",
        _ => "error",
    }
}

/// Classifies a non-success HTTP answer. `what` is the request (`POST /x`);
/// `raw` the body as received (shown when it is not a Redfish error).
pub fn classify(status: u16, raw: &[u8], stage: Stage, what: &str) -> DriverError {
    let body: Option<Value> = serde_json::from_slice(raw).ok();
    let text = body.as_ref().and_then(error_text).or_else(|| {
        let t = String::from_utf8_lossy(raw);
        let t = printable(&t, 160);
        (!t.is_empty() && !t.starts_with('<')).then_some(t)
    });
    let ids = body.as_ref().map(message_ids).unwrap_or_default();
    let has_id = |needle: &str| ids.iter().any(|i| i.contains(needle));
    let lower = text.as_deref().unwrap_or("").to_ascii_lowercase();
    let shown = match &text {
        Some(t) => format!(": {t}"),
        None => String::new(),
    };
    let base = format!(
        "the BMC answered {what} with http {status} ({}){shown}",
        reason_phrase(status)
    );
    let already = lower.contains("already") || has_id("PSU501");
    let busy_words = [
        "busy",
        "try again",
        "retry",
        "in progress",
        "not ready",
        "temporarily",
    ]
    .iter()
    .any(|w| lower.contains(w));
    let kind = if has_id("ResourceNotReadyRetry") {
        // Quirk 21 (iLO): explicitly retryable.
        ErrorKind::Busy
    } else if status == 403 {
        // Authenticated, but the account may not do this (DSP0266:
        // InsufficientPrivilege); a different password would not help.
        return DriverError::new(
            ErrorKind::PrivilegeNotObtained,
            stage,
            format!(
                "the BMC refused {what} with http 403 (forbidden): the account lacks the \
                 privilege for it{shown}"
            ),
        );
    } else if status == 401 {
        return DriverError::new(
            ErrorKind::PasswordInvalid,
            stage,
            format!(
                "the BMC rejected the credentials (http {status} {} to {what}){shown}",
                reason_phrase(status)
            ),
        );
    } else if has_id("InvalidOperationForSystemState") {
        // Quirks 15/16 (iLO): "power is off" to a reset while off means the
        // state is already reached or the command does not apply; "power
        // transition in progress" means busy.
        if already || lower.contains("power is off") {
            ErrorKind::NotInPresentState
        } else {
            ErrorKind::Busy
        }
    } else if status == 409 && already {
        // Quirk 17 (iDRAC): 409 "Server is already powered ON".
        ErrorKind::NotInPresentState
    } else if matches!(status, 503 | 429) || (status == 500 && busy_words) {
        // Quirks 20/21: iDRAC 500 busy / 503 queue full; OpenBMC 503 after reboot.
        ErrorKind::Busy
    } else {
        ErrorKind::DeviceError
    };
    let message = if status == 404 && what.ends_with("/redfish/v1") {
        format!("{base}; is Redfish enabled on the BMC? (quirk: disabled Redfish answers 404)")
    } else {
        base
    };
    DriverError::new(kind, stage, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn power_states() {
        assert_eq!(
            power_state(&json!({"PowerState": "On"})),
            Ok(PowerState::On)
        );
        assert_eq!(
            power_state(&json!({"PowerState": " Off "})),
            Ok(PowerState::Off)
        );
        let e = power_state(&json!({"PowerState": "PoweringOff"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Busy);
        assert!(e.message.contains("PoweringOff"));
        let e = power_state(&json!({"PowerState": "PoweringOn"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Busy);
        for bad in [
            json!({}),
            json!({"PowerState": null}),
            json!({"PowerState": "Paused"}),
            json!({"PowerState": 1}),
        ] {
            assert_eq!(
                power_state(&bad).unwrap_err().kind,
                ErrorKind::StatusUnreadable
            );
        }
    }

    #[test]
    fn discovery_choices() {
        let one = vec!["/redfish/v1/Systems/1".to_string()];
        assert_eq!(
            choose_member(&one, None),
            Ok(Choice::Member(one[0].clone()))
        );
        let two = vec![
            "/redfish/v1/Systems/a".to_string(),
            "/redfish/v1/Systems/b/".to_string(),
        ];
        let e = choose_member(&two, None).unwrap_err();
        assert!(
            e.contains("2 systems") && e.contains("/Systems/a") && e.contains("/Systems/b"),
            "{e}"
        );
        assert_eq!(
            choose_member(&two, Some("b")),
            Ok(Choice::Member(two[1].clone()))
        );
        assert_eq!(
            choose_member(&two, Some("/redfish/v1/Systems/a/")),
            Ok(Choice::Member(two[0].clone()))
        );
        assert_eq!(choose_member(&two, Some("node2")), Ok(Choice::LookUp));
        assert!(choose_member(&[], None).is_err());
        assert!(system_matches(
            &json!({"Id": "x", "Name": "node2"}),
            "node2"
        ));
        assert!(!system_matches(&json!({"Id": "x"}), "y"));
        let root = json!({"Systems": {"@odata.id": "/redfish/v1/Systems"},
                          "SessionService": {"@odata.id": "/redfish/v1/SessionService"}});
        assert_eq!(systems_link(&root), Some("/redfish/v1/Systems"));
        assert_eq!(
            sessions_link(&root).as_deref(),
            Some("/redfish/v1/SessionService/Sessions")
        );
        let root = json!({"Links": {"Sessions": {"@odata.id": "/s"}}});
        assert_eq!(sessions_link(&root).as_deref(), Some("/s"));
        assert_eq!(
            members(&json!({"Members": [{"@odata.id": "/a"}, {"x": 1}, 3]})),
            vec!["/a"]
        );
    }

    #[test]
    fn reset_actions() {
        let sys = json!({"Actions": {"#ComputerSystem.Reset": {
            "target": "/r", "ResetType@Redfish.AllowableValues": ["On", "ForceOff"]}}});
        assert_eq!(
            reset_action(&sys),
            Ok(ResetAction {
                target: "/r".into(),
                offered: Offered::Listed(vec!["On".into(), "ForceOff".into()])
            })
        );
        let sys = json!({"Actions": {"#ComputerSystem.Reset": {
            "target": "/r", "@Redfish.ActionInfo": "/info"}}});
        assert_eq!(
            reset_action(&sys).unwrap().offered,
            Offered::ActionInfo("/info".into())
        );
        let sys = json!({"Actions": {"#ComputerSystem.Reset": {"target": "/r"}}});
        assert_eq!(reset_action(&sys).unwrap().offered, Offered::Unpublished);
        assert!(reset_action(&json!({})).is_err());
        let info =
            json!({"Parameters": [{"Name": "ResetType", "AllowableValues": ["ForceOff", "Nmi"]}]});
        assert_eq!(
            action_info_values(&info),
            Some(vec!["ForceOff".into(), "Nmi".into()])
        );
    }

    #[test]
    fn reset_type_mapping() {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // iDRAC9 R740xd (quirk 18): no PowerCycle, no GracefulRestart.
        let idrac = v(&[
            "On",
            "ForceOff",
            "ForceRestart",
            "GracefulShutdown",
            "PushPowerButton",
            "Nmi",
        ]);
        assert_eq!(
            choose_reset(PowerCommand::Off, Some(&idrac)).unwrap(),
            "ForceOff"
        );
        assert_eq!(choose_reset(PowerCommand::On, Some(&idrac)).unwrap(), "On");
        assert_eq!(
            choose_reset(PowerCommand::Cycle, Some(&idrac)).unwrap(),
            "ForceRestart"
        );
        assert_eq!(
            choose_reset(PowerCommand::Diag, Some(&idrac)).unwrap(),
            "Nmi"
        );
        let other = v(&["ForceOn", "ForceOff", "PowerCycle"]);
        assert_eq!(
            choose_reset(PowerCommand::On, Some(&other)).unwrap(),
            "ForceOn"
        );
        assert_eq!(
            choose_reset(PowerCommand::Cycle, Some(&other)).unwrap(),
            "PowerCycle"
        );
        // Early OpenBMC: no ForceOff is not replaced by a graceful shutdown.
        let early = v(&["On", "GracefulRestart", "GracefulShutdown"]);
        let e = choose_reset(PowerCommand::Off, Some(&early)).unwrap_err();
        assert!(
            e.contains("no safe reset type for off") && e.contains("GracefulShutdown"),
            "{e}"
        );
        assert_eq!(choose_reset(PowerCommand::Off, None).unwrap(), "ForceOff");
        assert_eq!(describe_plan(Some(&early)), "off=-, on=On, cycle=-, diag=-");
    }

    #[test]
    fn tasks() {
        assert_eq!(
            task_progress(202, None),
            TaskProgress::Running("accepted".into())
        );
        assert_eq!(
            task_progress(200, Some(&json!({"TaskState": "Running"}))),
            TaskProgress::Running("Running".into())
        );
        assert_eq!(
            task_progress(
                200,
                Some(&json!({"TaskState": "Completed", "TaskStatus": "OK"}))
            ),
            TaskProgress::Done
        );
        assert_eq!(task_progress(204, None), TaskProgress::Done);
        let f = task_progress(
            200,
            Some(&json!({"TaskState": "Exception", "Messages": [{"Message": "power fault"}]})),
        );
        assert_eq!(f, TaskProgress::Failed("power fault".into()));
    }

    #[test]
    fn classification() {
        let k = |s: u16, b: Value| {
            classify(s, b.to_string().as_bytes(), Stage::Command, "POST /r").kind
        };
        assert_eq!(
            k(
                409,
                json!({"error": {"message": "Server is already powered ON."}})
            ),
            ErrorKind::NotInPresentState
        );
        assert_eq!(
            k(409, json!({"error": {"message": "conflict"}})),
            ErrorKind::DeviceError
        );
        assert_eq!(
            k(
                400,
                json!({"error": {"code": "iLO.0.10.ExtendedInfo", "@Message.ExtendedInfo": [
                {"MessageId": "iLO.2.14.InvalidOperationForSystemState", "Message": "Power transition in progress. Retry later."}]}})
            ),
            ErrorKind::Busy
        );
        assert_eq!(
            k(
                400,
                json!({"error": {"@Message.ExtendedInfo": [
                {"MessageId": "iLO.2.14.InvalidOperationForSystemState", "Message": "Power is off."}]}})
            ),
            ErrorKind::NotInPresentState
        );
        assert_eq!(k(503, json!({})), ErrorKind::Busy);
        assert_eq!(
            k(500, json!({"error": {"message": "the BMC is busy"}})),
            ErrorKind::Busy
        );
        assert_eq!(
            k(500, json!({"error": {"message": "internal"}})),
            ErrorKind::DeviceError
        );
        assert_eq!(
            k(
                400,
                json!({"error": {"@Message.ExtendedInfo": [{"MessageId": "Base.1.0.ResourceNotReadyRetry"}]}})
            ),
            ErrorKind::Busy
        );
        let e = classify(401, b"", Stage::Status, "GET /s");
        assert_eq!(e.kind, ErrorKind::PasswordInvalid);
        assert!(
            e.message.contains("rejected the credentials"),
            "{}",
            e.message
        );
        let e = classify(404, b"<html>x</html>", Stage::Status, "GET /redfish/v1");
        assert!(
            e.message.contains("GET /redfish/v1") && e.message.contains("Redfish enabled"),
            "{}",
            e.message
        );
        let e = classify(
            400,
            json!({"error": {"code": "Base.1.8.GeneralError", "message": "A general error has occurred. See ExtendedInfo for more information.",
                "@Message.ExtendedInfo": [{"MessageId": "Base.1.8.ActionParameterUnknown", "Message": "bad ResetType"}]}}).to_string().as_bytes(),
            Stage::Command,
            "POST /r",
        );
        assert_eq!(e.kind, ErrorKind::DeviceError);
        assert!(e.message.ends_with(": bad ResetType"), "{}", e.message);
    }

    #[test]
    fn hostile_json_never_panics() {
        for b in [
            json!(null),
            json!([]),
            json!("x"),
            json!({"error": 3}),
            json!({"Members": {"a": 1}}),
            json!({"Actions": {"#ComputerSystem.Reset": []}}),
            json!({"Parameters": "x"}),
        ] {
            let _ = power_state(&b);
            let _ = members(&b);
            let _ = reset_action(&b);
            let _ = action_info_values(&b);
            let _ = error_text(&b);
            let _ = task_progress(200, Some(&b));
            let _ = classify(500, b.to_string().as_bytes(), Stage::Command, "x");
        }
        assert_eq!(printable("a\u{7}b", 10), "a b");
        assert_eq!(last_segment("/a/b/"), "b");
    }
}
