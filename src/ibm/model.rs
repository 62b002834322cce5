//! Pure decisions over IBM Cloud's JSON answers (no I/O): the IAM token,
//! a VPC instance and a Power VS instance with their states, lists, the
//! error bodies of IAM, VPC and Power VS, and the VPC metadata service's
//! instance.
//!
//! States, from the API references:
//! * VPC `status`: `running` on; `stopped` off; `starting`, `pending`,
//!   `restarting`, `resuming` powering on; `stopping` powering off;
//!   `paused`, `pausing`, `suspended`, `suspending` **on** (the guest's
//!   memory is kept and it resumes where it was: never off, and off of one
//!   stops it); `failed`, `deleting` and anything else not an answer.
//! * Power VS `status`: `ACTIVE` on; `SHUTOFF` off; `BUILD`, `REBOOT`,
//!   `HARD_REBOOT`, `SOFT_REBOOT`, `RESIZE`, `VERIFY_RESIZE`, `MIGRATING`
//!   a transition; `WARNING` with `health.status` `OK` on; `ERROR`, and a
//!   `WARNING` whose health is not OK, not an answer (never off).

use crate::engine::power::{Observed, PowerState, Transition};
use serde_json::Value;
use std::time::Duration;

/// An answer that is not what the API documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadAnswer(pub String);

/// Text from the server, made printable and cut.
pub fn printable(s: &str, max: usize) -> String {
    crate::http::printable(s, max)
}

/// An IAM access token and its life.
#[derive(Debug)]
pub struct TokenAnswer {
    /// The bearer token.
    pub access_token: String,
    /// How long it lives (`expires_in`).
    pub life: Duration,
}

/// IAM's answer to the API key grant.
pub fn token(body: &[u8]) -> Result<TokenAnswer, BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("IAM's token answer is not JSON: {e}")))?;
    let t = v
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| BadAnswer("IAM's token answer has no access_token".into()))?;
    let life = v
        .get("expires_in")
        .and_then(Value::as_u64)
        .unwrap_or(3600)
        .clamp(1, 86_400);
    Ok(TokenAnswer {
        access_token: t.to_string(),
        life: Duration::from_secs(life),
    })
}

/// One machine as either API describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Its ID (`id`, `pvmInstanceID`).
    pub id: String,
    /// Its name (`name`, `serverName`).
    pub name: String,
    /// `status`.
    pub status: String,
    /// Power VS: `health.status`.
    pub health: Option<String>,
    /// VPC: `crn`; Power VS: `crn` when given.
    pub crn: Option<String>,
    /// VPC: the zone's name.
    pub zone: Option<String>,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A VPC instance (`GET /v1/instances/ID`, or one of a list).
pub fn vpc_instance(v: &Value) -> Result<Machine, BadAnswer> {
    let id = text(v, "id").ok_or_else(|| BadAnswer("the instance has no id".into()))?;
    Ok(Machine {
        name: text(v, "name").unwrap_or_default(),
        status: text(v, "status")
            .ok_or_else(|| BadAnswer(format!("instance {id} has no status")))?,
        health: None,
        crn: text(v, "crn"),
        zone: v
            .pointer("/zone/name")
            .and_then(Value::as_str)
            .map(str::to_string),
        id,
    })
}

/// A Power VS instance (`GET …/pvm-instances/ID`, or one of a list).
pub fn powervs_instance(v: &Value) -> Result<Machine, BadAnswer> {
    let id = text(v, "pvmInstanceID")
        .ok_or_else(|| BadAnswer("the instance has no pvmInstanceID".into()))?;
    Ok(Machine {
        name: text(v, "serverName").unwrap_or_default(),
        status: text(v, "status")
            .ok_or_else(|| BadAnswer(format!("instance {id} has no status")))?,
        health: v
            .pointer("/health/status")
            .and_then(Value::as_str)
            .map(str::to_string),
        crn: text(v, "crn"),
        zone: None,
        id,
    })
}

/// A VPC list page: the instances and the next page's URL (`next.href`).
pub fn vpc_page(body: &[u8]) -> Result<(Vec<Machine>, Option<String>), BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("the instance list is not JSON: {e}")))?;
    let items = v
        .get("instances")
        .and_then(Value::as_array)
        .ok_or_else(|| BadAnswer("the instance list has no instances".into()))?;
    let list = items
        .iter()
        .map(vpc_instance)
        .collect::<Result<Vec<_>, _>>()?;
    let next = v
        .pointer("/next/href")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok((list, next))
}

/// A Power VS list (`pvmInstances`).
pub fn powervs_list(body: &[u8]) -> Result<Vec<Machine>, BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("the instance list is not JSON: {e}")))?;
    v.get("pvmInstances")
        .and_then(Value::as_array)
        .ok_or_else(|| BadAnswer("the instance list has no pvmInstances".into()))?
        .iter()
        .map(powervs_instance)
        .collect()
}

/// A VPC `status` as a reading; `None`: not an answer (never off).
pub fn vpc_observed(status: &str) -> Option<Observed> {
    use Observed::*;
    Some(match status {
        "running" => Settled(PowerState::On),
        "stopped" => Settled(PowerState::Off),
        "starting" | "pending" | "restarting" | "resuming" => InTransition(Transition::PoweringOn),
        "stopping" => InTransition(Transition::PoweringOff),
        // The guest's memory is kept: not off. An off stops it.
        "paused" | "pausing" | "suspended" | "suspending" => Settled(PowerState::On),
        _ => return None,
    })
}

/// A Power VS `status` (with its health) as a reading; `None`: not an
/// answer (never off).
pub fn powervs_observed(status: &str, health: Option<&str>) -> Option<Observed> {
    use Observed::*;
    Some(match status.to_ascii_uppercase().as_str() {
        "ACTIVE" => Settled(PowerState::On),
        "SHUTOFF" => Settled(PowerState::Off),
        "BUILD" | "REBOOT" | "HARD_REBOOT" | "SOFT_REBOOT" | "RESIZE" | "VERIFY_RESIZE"
        | "MIGRATING" => InTransition(Transition::PoweringOn),
        "WARNING" if health.is_some_and(|h| h.eq_ignore_ascii_case("OK")) => {
            Settled(PowerState::On)
        }
        _ => return None,
    })
}

/// A machine's reading, by its service.
pub fn observed(service: super::config::Service, m: &Machine) -> Option<Observed> {
    match service {
        super::config::Service::Vpc => vpc_observed(&m.status),
        super::config::Service::PowerVs => powervs_observed(&m.status, m.health.as_deref()),
    }
}

/// An API error: its code and message, from whichever body shape came
/// (VPC `errors[0]`, Power VS `description`/`error`, IAM
/// `errorCode`/`errorMessage`); the body's start otherwise.
pub fn api_error(body: &str) -> (String, String) {
    let v: Option<Value> = serde_json::from_str(body).ok();
    let pick = |v: &Value, keys: &[&str]| {
        keys.iter()
            .find_map(|k| v.pointer(k).and_then(Value::as_str))
            .map(str::to_string)
    };
    match v {
        Some(v) => (
            pick(&v, &["/errors/0/code", "/errorCode", "/error", "/code"]).unwrap_or_default(),
            pick(
                &v,
                &[
                    "/errors/0/message",
                    "/errorMessage",
                    "/description",
                    "/message",
                ],
            )
            .map(|m| printable(&m, 300))
            .unwrap_or_else(|| printable(body, 200)),
        ),
        None => (String::new(), printable(body, 200)),
    }
}

/// The VPC metadata service's instance: its ID and name.
pub fn this_instance(body: &[u8]) -> Result<(String, String), BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("the metadata service's instance is not JSON: {e}")))?;
    let id = text(&v, "id")
        .ok_or_else(|| BadAnswer("the metadata service's instance has no id".into()))?;
    Ok((id, text(&v, "name").unwrap_or_default()))
}

/// The metadata service's instance identity token.
pub fn identity_token(body: &[u8]) -> Result<String, BadAnswer> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BadAnswer(format!("the metadata service's token is not JSON: {e}")))?;
    text(&v, "access_token")
        .ok_or_else(|| BadAnswer("the metadata service gave no access_token".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ibm::config::Service;
    use serde_json::json;

    #[test]
    fn vpc_states_paused_is_never_off() {
        assert_eq!(
            vpc_observed("running"),
            Some(Observed::Settled(PowerState::On))
        );
        assert_eq!(
            vpc_observed("stopped"),
            Some(Observed::Settled(PowerState::Off))
        );
        assert_eq!(
            vpc_observed("stopping"),
            Some(Observed::InTransition(Transition::PoweringOff))
        );
        for s in ["starting", "pending", "restarting", "resuming"] {
            assert_eq!(
                vpc_observed(s),
                Some(Observed::InTransition(Transition::PoweringOn)),
                "{s}"
            );
        }
        for s in ["paused", "pausing", "suspended", "suspending"] {
            assert_eq!(
                vpc_observed(s),
                Some(Observed::Settled(PowerState::On)),
                "{s}"
            );
        }
        for s in ["failed", "deleting", "", "STOPPED"] {
            assert_eq!(vpc_observed(s), None, "{s}");
        }
    }

    #[test]
    fn power_vs_states_error_is_never_off() {
        assert_eq!(
            powervs_observed("ACTIVE", None),
            Some(Observed::Settled(PowerState::On))
        );
        assert_eq!(
            powervs_observed("SHUTOFF", Some("OK")),
            Some(Observed::Settled(PowerState::Off))
        );
        assert_eq!(
            powervs_observed("BUILD", None),
            Some(Observed::InTransition(Transition::PoweringOn))
        );
        assert_eq!(
            powervs_observed("WARNING", Some("OK")),
            Some(Observed::Settled(PowerState::On))
        );
        assert_eq!(powervs_observed("WARNING", Some("UNKNOWN")), None);
        assert_eq!(powervs_observed("ERROR", Some("OK")), None);
        assert_eq!(powervs_observed("ERROR", None), None);
    }

    #[test]
    fn answers_parse() {
        let t =
            token(br#"{"access_token":"eyJ","expires_in":1200,"token_type":"Bearer"}"#).unwrap();
        assert_eq!(
            (t.access_token.as_str(), t.life),
            ("eyJ", Duration::from_secs(1200))
        );
        assert!(token(b"{}").is_err());
        let m = vpc_instance(
            &json!({"id":"0717_a","name":"n1","status":"running","zone":{"name":"us-south-1"}}),
        )
        .unwrap();
        assert_eq!(
            (m.name.as_str(), m.zone.as_deref()),
            ("n1", Some("us-south-1"))
        );
        assert_eq!(
            observed(Service::Vpc, &m),
            Some(Observed::Settled(PowerState::On))
        );
        let p = powervs_instance(&json!({"pvmInstanceID":"p1","serverName":"lpar1","status":"ERROR","health":{"status":"UNKNOWN"}})).unwrap();
        assert_eq!(observed(Service::PowerVs, &p), None);
        let (list, next) = vpc_page(br#"{"instances":[{"id":"a","name":"x","status":"stopped"}],"next":{"href":"https://h/v1/instances?start=2"}}"#).unwrap();
        assert_eq!(
            (list.len(), next.as_deref()),
            (1, Some("https://h/v1/instances?start=2"))
        );
        assert_eq!(powervs_list(br#"{"pvmInstances":[]}"#).unwrap(), vec![]);
        assert_eq!(
            api_error(r#"{"errors":[{"code":"not_found","message":"Instance not found"}]}"#).0,
            "not_found"
        );
        assert_eq!(api_error(r#"{"errorCode":"BXNIM0415E","errorMessage":"Provided API key could not be found."}"#).0, "BXNIM0415E");
        assert_eq!(
            api_error(r#"{"description":"pvm-instance not found","error":"not found"}"#).1,
            "pvm-instance not found"
        );
        assert_eq!(
            this_instance(br#"{"id":"0717_x","name":"me"}"#).unwrap().0,
            "0717_x"
        );
    }
}
