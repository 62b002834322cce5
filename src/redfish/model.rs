//! Pure Redfish decisions over parsed JSON: discovery, `PowerState`, the
//! reset types on offer and the one each intent uses, Task progress, and
//! the classification of error answers (in [`errors`], re-exported here).
//! No I/O: the driver feeds it what arrived, the tests feed it captured
//! bodies.
//!
//! Quirk numbers refer to `shared/reference/quirks.md`.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{normalise_uuid, reported_uuid, Identity};
use crate::engine::power::{Observed, PowerCommand, PowerState, Transition};
use serde_json::Value;

mod errors;

pub use errors::{
    classify, error_text, message_ids, messages, printable, refusal, Message, Refusal,
};

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
pub fn choose_member(members: &[String], plug: Option<&str>) -> Result<Choice, NoMember> {
    if members.is_empty() {
        return Err(NoMember::Empty);
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
        many => Err(NoMember::Several(many.to_vec())),
    }
}

/// Why [`choose_member`] cannot choose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoMember {
    /// The Systems collection is empty.
    #[error("the service lists no systems")]
    Empty,
    /// Several systems and nothing to choose by (their paths).
    #[error(
        "the service has {} systems ({}); choose one with a plug (its Id or Name) or --systems-uri",
        .0.len(),
        list(.0)
    )]
    Several(Vec<String>),
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

/// Reads `PowerState` as an observation: `On`/`Off` are settled states,
/// `PoweringOn`/`PoweringOff` a transition under way (never the state it
/// leads to: quirk 14 — Ironic maps PoweringOff to off); anything else, or
/// nothing, is [`ErrorKind::StatusUnreadable`] (never a guess).
pub fn observe(system: &Value) -> Result<Observed, DriverError> {
    let unreadable = |m: String| DriverError::new(ErrorKind::StatusUnreadable, Stage::Status, m);
    match system.get("PowerState") {
        None | Some(Value::Null) => Err(unreadable("the system resource has no PowerState".into())),
        Some(Value::String(s)) => {
            let t = s.trim();
            let is = |w: &str| t.eq_ignore_ascii_case(w);
            if is("On") {
                Ok(Observed::Settled(PowerState::On))
            } else if is("Off") {
                Ok(Observed::Settled(PowerState::Off))
            } else if is("PoweringOn") {
                Ok(Observed::InTransition(Transition::PoweringOn))
            } else if is("PoweringOff") {
                Ok(Observed::InTransition(Transition::PoweringOff))
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

/// Reads `PowerState` as a settled state: a transition is
/// [`ErrorKind::Busy`] here (for callers that want on or off, such as
/// `verify`'s samples); the engine reads [`observe`] instead.
pub fn power_state(system: &Value) -> Result<PowerState, DriverError> {
    match observe(system)? {
        Observed::Settled(s) => Ok(s),
        Observed::InTransition(t) => Err(DriverError::new(
            ErrorKind::Busy,
            Stage::Status,
            format!(
                "the BMC reports the transitional state {}",
                match t {
                    Transition::PoweringOn => "PoweringOn",
                    Transition::PoweringOff => "PoweringOff",
                }
            ),
        )),
    }
}

/// Vendor quirk "hidden transitions": BMC families that keep reporting the
/// *old* `PowerState` while a power change is under way
/// (`shared/reference/vendors.md`: Lenovo XCC, Supermicro, AMI MegaRAC),
/// recognised by the `Oem` key of their ComputerSystem. Returns the family.
/// For these the engine sends a command even when the state already reads
/// as its target (they accept it as a no-op), so a boot or a shutdown in
/// progress cannot hide behind "already off".
pub fn hides_transitions(system: &Value) -> Option<&'static str> {
    let oem = system.get("Oem")?.as_object()?;
    [
        ("Lenovo", "Lenovo XCC"),
        ("Supermicro", "Supermicro"),
        ("Ami", "AMI MegaRAC"),
        ("AMI", "AMI MegaRAC"),
    ]
    .iter()
    .find(|(key, _)| oem.contains_key(*key))
    .map(|(_, family)| *family)
}

/// Who a ComputerSystem says it is: `UUID` (as reported) and `SerialNumber`.
pub fn identity(system: &Value) -> Identity {
    Identity {
        names: Vec::new(),
        uuid: system
            .get("UUID")
            .and_then(Value::as_str)
            .and_then(reported_uuid)
            .into_iter()
            .collect(),
        serial: system
            .get("SerialNumber")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| printable(s, 64)),
    }
}

/// Picks the system whose `UUID` is `want` (canonical form) among
/// `(uri, reported UUID)` candidates. Err names every candidate when none
/// or several match: two systems claiming one UUID is a reason to stop,
/// not to guess.
pub fn choose_by_uuid(
    candidates: &[(String, Option<String>)],
    want: &str,
) -> Result<String, UuidChoice> {
    let hits: Vec<&String> = candidates
        .iter()
        .filter(|(_, u)| u.as_deref().and_then(normalise_uuid).as_deref() == Some(want))
        .map(|(uri, _)| uri)
        .collect();
    let (want, candidates) = (want.to_string(), candidates.to_vec());
    match hits.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(UuidChoice::NoMatch { want, candidates }),
        many => Err(UuidChoice::Several {
            count: many.len(),
            want,
            candidates,
        }),
    }
}

/// Why [`choose_by_uuid`] chose nothing; `candidates` are (path, reported
/// UUID) as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UuidChoice {
    /// No system reports the UUID.
    #[error(
        "no system behind this service reports uuid {want} (systems: {})",
        named(candidates)
    )]
    NoMatch {
        want: String,
        candidates: Vec<(String, Option<String>)>,
    },
    /// Several do: ambiguity, not evidence of a wrong machine.
    #[error(
        "{count} systems report uuid {want}; refusing to choose one (systems: {})",
        named(candidates)
    )]
    Several {
        count: usize,
        want: String,
        candidates: Vec<(String, Option<String>)>,
    },
}

impl UuidChoice {
    /// True when no candidate reported a UUID at all (nothing to compare).
    pub fn none_reported(&self) -> bool {
        match self {
            UuidChoice::NoMatch { candidates, .. } | UuidChoice::Several { candidates, .. } => {
                candidates.iter().all(|(_, u)| u.is_none())
            }
        }
    }
}

/// The first 16 candidates with what each reported, for messages.
fn named(candidates: &[(String, Option<String>)]) -> String {
    candidates
        .iter()
        .take(16)
        .map(|(uri, u)| format!("{uri} (uuid {})", u.as_deref().unwrap_or("not reported")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The chassis a system links to (`Links.Chassis`), in order.
pub fn chassis_links(system: &Value) -> Vec<String> {
    system
        .get("Links")
        .and_then(|l| l.get("Chassis"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(odata_id).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Where a chassis publishes its power draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PowerSource {
    /// `Power` (`PowerControl[].PowerConsumedWatts`; deprecated, ubiquitous).
    Power(String),
    /// `EnvironmentMetrics` (`PowerWatts.Reading`; the newer model, where
    /// `PowerSubsystem` replaces `Power`).
    EnvironmentMetrics(String),
}

/// The power-draw resources of a chassis, best first.
pub fn power_sources(chassis: &Value) -> Vec<PowerSource> {
    let mut out = Vec::new();
    if let Some(p) = chassis.get("Power").and_then(odata_id) {
        out.push(PowerSource::Power(p.to_string()));
    }
    if let Some(e) = chassis.get("EnvironmentMetrics").and_then(odata_id) {
        out.push(PowerSource::EnvironmentMetrics(e.to_string()));
    }
    out
}

fn watts(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
        .filter(|w| w.is_finite() && *w >= 0.0)
}

/// The draw in a `Power` resource: the first `PowerControl` entry with a
/// reading (by convention the whole chassis; the others, when present, are
/// parts of it and adding them would count twice).
pub fn power_control_watts(power: &Value) -> Option<f64> {
    power
        .get("PowerControl")?
        .as_array()?
        .iter()
        .find_map(|c| watts(c.get("PowerConsumedWatts")))
}

/// The draw in an `EnvironmentMetrics` resource (`PowerWatts.Reading`).
pub fn environment_watts(metrics: &Value) -> Option<f64> {
    watts(metrics.get("PowerWatts").and_then(|p| p.get("Reading")))
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
pub fn reset_action(system: &Value) -> Result<ResetAction, NoResetAction> {
    let action = system
        .get("Actions")
        .and_then(|a| a.get("#ComputerSystem.Reset"))
        .ok_or(NoResetAction::Missing)?;
    let target = action
        .get("target")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or(NoResetAction::NoTarget)?
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
pub fn choose_reset(
    command: PowerCommand,
    offered: Option<&[String]>,
) -> Result<String, NoSafeReset> {
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
    Err(NoSafeReset {
        command,
        offered: offered.to_vec(),
    })
}

/// No reset type [`preferences`] accepts for `command` is among `offered`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the BMC offers no safe reset type for {command} (wanted {}; offered: {})",
    preferences(*command).join(" or "),
    if offered.is_empty() { "none".to_string() } else { offered.join(", ") }
)]
pub struct NoSafeReset {
    pub command: PowerCommand,
    pub offered: Vec<String>,
}

/// A system resource without a usable reset action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoResetAction {
    #[error("the system offers no #ComputerSystem.Reset action")]
    Missing,
    #[error("the #ComputerSystem.Reset action has no target")]
    NoTarget,
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
        assert_eq!(e, NoMember::Several(two.clone()));
        let e = e.to_string();
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
        assert_eq!(choose_member(&[], None), Err(NoMember::Empty));
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
        assert_eq!(reset_action(&json!({})), Err(NoResetAction::Missing));
        let sys = json!({"Actions": {"#ComputerSystem.Reset": {"target": ""}}});
        assert_eq!(reset_action(&sys), Err(NoResetAction::NoTarget));
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
        assert_eq!(
            (e.command, e.offered.clone()),
            (PowerCommand::Off, early.clone())
        );
        let e = e.to_string();
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
    fn transitions_are_observations() {
        use crate::engine::power::{Observed, Transition};
        assert_eq!(
            observe(&json!({"PowerState": "PoweringOn"})),
            Ok(Observed::InTransition(Transition::PoweringOn))
        );
        assert_eq!(
            observe(&json!({"PowerState": "poweringoff"})),
            Ok(Observed::InTransition(Transition::PoweringOff))
        );
        assert_eq!(
            observe(&json!({"PowerState": "Off"})),
            Ok(Observed::Settled(PowerState::Off))
        );
        assert_eq!(
            observe(&json!({"PowerState": "Paused"})).unwrap_err().kind,
            ErrorKind::StatusUnreadable
        );
    }

    #[test]
    fn vendor_families_that_hide_transitions() {
        for (oem, fam) in [
            ("Lenovo", Some("Lenovo XCC")),
            ("Supermicro", Some("Supermicro")),
            ("Ami", Some("AMI MegaRAC")),
            ("Dell", None),
            ("Hpe", None),
        ] {
            assert_eq!(hides_transitions(&json!({"Oem": {oem: {}}})), fam, "{oem}");
        }
        assert_eq!(hides_transitions(&json!({"Id": "system"})), None);
    }

    #[test]
    fn identity_and_uuid_selection() {
        let id = identity(&json!({"UUID": "6173ECEC-6EF5-11EE-834A-0A8FC3A58A71",
            "SerialNumber": " J105958B "}));
        assert_eq!(
            id.primary_uuid(),
            Some("6173ecec-6ef5-11ee-834a-0a8fc3a58a71")
        );
        assert_eq!(id.serial.as_deref(), Some("J105958B"));
        assert!(identity(&json!({"UUID": "not-a-uuid", "SerialNumber": ""})).is_empty());
        let c = |l: &[(&str, Option<&str>)]| {
            l.iter()
                .map(|(u, id)| (u.to_string(), id.map(str::to_string)))
                .collect::<Vec<_>>()
        };
        let want = "b11dd4f2-bfde-1000-02bc-5cff35fbe6e9";
        let two = c(&[
            (
                "/redfish/v1/Systems/DGX",
                Some("B11DD4F2-BFDE-1000-02BC-5CFF35FBE6E9"),
            ),
            (
                "/redfish/v1/Systems/HGX_Baseboard_0",
                Some("0bd03ed4-3f75-04e8-9c62-3d4652b78d87"),
            ),
        ]);
        assert_eq!(
            choose_by_uuid(&two, want).unwrap(),
            "/redfish/v1/Systems/DGX"
        );
        let e = choose_by_uuid(&two, "00000000-0000-0000-0000-000000000001").unwrap_err();
        assert!(matches!(e, UuidChoice::NoMatch { .. }) && !e.none_reported());
        let e = e.to_string();
        assert!(
            e.contains("no system") && e.contains("HGX_Baseboard_0") && e.contains("/DGX"),
            "{e}"
        );
        let dup = c(&[("/a", Some(want)), ("/b", Some(want)), ("/c", None)]);
        let e = choose_by_uuid(&dup, want).unwrap_err();
        assert!(matches!(e, UuidChoice::Several { count: 2, .. }));
        let e = e.to_string();
        assert!(
            e.starts_with("2 systems report uuid")
                && e.contains("/a (uuid")
                && e.contains("/b (uuid"),
            "{e}"
        );
        assert!(e.contains("/c (uuid not reported)"), "{e}");
    }

    #[test]
    fn power_draw_documents() {
        let chassis = json!({"Power": {"@odata.id": "/redfish/v1/Chassis/1/Power"},
            "EnvironmentMetrics": {"@odata.id": "/redfish/v1/Chassis/1/EnvironmentMetrics"}});
        assert_eq!(
            power_sources(&chassis),
            vec![
                PowerSource::Power("/redfish/v1/Chassis/1/Power".into()),
                PowerSource::EnvironmentMetrics("/redfish/v1/Chassis/1/EnvironmentMetrics".into())
            ]
        );
        let power = json!({"PowerControl": [{"Name": "System Power Control"},
            {"PowerConsumedWatts": 212}, {"PowerConsumedWatts": 40}]});
        assert_eq!(power_control_watts(&power), Some(212.0));
        assert_eq!(
            power_control_watts(&json!({"PowerControl": [{"PowerConsumedWatts": null}]})),
            None
        );
        assert_eq!(
            power_control_watts(&json!({"PowerControl": [{"PowerConsumedWatts": -3}]})),
            None
        );
        assert_eq!(
            environment_watts(&json!({"PowerWatts": {"Reading": 9.5}})),
            Some(9.5)
        );
        assert_eq!(
            chassis_links(&json!({"Links": {"Chassis": [{"@odata.id": "/redfish/v1/Chassis/1"}]}})),
            vec!["/redfish/v1/Chassis/1"]
        );
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
            let _ = observe(&b);
            let _ = hides_transitions(&b);
            let _ = identity(&b);
            let _ = chassis_links(&b);
            let _ = power_sources(&b);
            let _ = power_control_watts(&b);
            let _ = environment_watts(&b);
            let _ = messages(&b);
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
