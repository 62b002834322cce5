//! What Keystone's and Nova's JSON answers mean for fencing (pure, bounded
//! by [`crate::parse`]): a token's catalog and the compute endpoint chosen
//! from it, a server (status, `OS-EXT-STS:power_state`, `task_state`,
//! `vm_state`, `host_status`), a page of servers, an error body; and
//! [`judge`], the rule that decides off.
//!
//! Off is narrow: `SHUTOFF` with power state 4 (shutdown) and no task under
//! way, or `SHELVED_OFFLOADED` (no hypervisor holds the server) with no
//! task. Everything else is not off: `ACTIVE`, `PAUSED`, `SUSPENDED`,
//! `SHELVED` (still on its host), `RESCUE`, a resize or migration, and
//! `ERROR` (its domain may run; `os-stop` is allowed there) are on; a task
//! under way is a transition; `UNKNOWN` (the compute host does not report),
//! a server whose compute service is down (`host_status` DOWN or UNKNOWN,
//! shown to administrators), a `SHUTOFF` without a power state or with
//! another one, and a status this code does not know are unreadable.

use crate::engine::power::{Observed, PowerState, Transition};
use crate::parse::Limits;
use serde_json::Value;

pub use crate::http::text::printable;

/// The bounds of an answer: 16 MiB (a page of 1000 detailed servers), 64 levels.
pub const LIMITS: Limits = Limits::ANSWER;

/// Nova's power state codes (`OS-EXT-STS:power_state`).
pub const NOSTATE: i64 = 0;
/// Running.
pub const RUNNING: i64 = 1;
/// Paused.
pub const PAUSED: i64 = 3;
/// Shut down.
pub const SHUTDOWN: i64 = 4;
/// Crashed.
pub const CRASHED: i64 = 6;
/// Suspended.
pub const SUSPENDED: i64 = 7;

/// A power state code's name.
pub fn power_name(code: i64) -> &'static str {
    match code {
        NOSTATE => "NOSTATE",
        RUNNING => "RUNNING",
        PAUSED => "PAUSED",
        SHUTDOWN => "SHUTDOWN",
        CRASHED => "CRASHED",
        SUSPENDED => "SUSPENDED",
        _ => "an unknown code",
    }
}

fn doc(body: &[u8]) -> Result<Value, String> {
    crate::parse::json(body, &LIMITS).map_err(|e| e.to_string())
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// One server as Nova shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Server {
    /// Its UUID (the guest's SMBIOS system UUID on libvirt/KVM).
    pub id: String,
    /// Its name.
    pub name: String,
    /// `status` (`ACTIVE`, `SHUTOFF`, ...).
    pub status: Option<String>,
    /// `OS-EXT-STS:power_state`.
    pub power: Option<i64>,
    /// `OS-EXT-STS:task_state` (`None` when null).
    pub task: Option<String>,
    /// `OS-EXT-STS:vm_state`.
    pub vm_state: Option<String>,
    /// `host_status` (microversion 2.16, administrators): UP, DOWN,
    /// MAINTENANCE, UNKNOWN, or empty.
    pub host_status: Option<String>,
    /// The fault Nova recorded (an `ERROR` server's).
    pub fault: Option<String>,
}

fn server_of(v: &Value) -> Result<Server, String> {
    let id = text(v, "id").ok_or("a server without an id")?;
    let fault = v.get("fault").and_then(|f| text(f, "message"));
    Ok(Server {
        id,
        name: v
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        status: text(v, "status").map(|s| s.to_ascii_uppercase()),
        power: v.get("OS-EXT-STS:power_state").and_then(Value::as_i64),
        task: text(v, "OS-EXT-STS:task_state"),
        vm_state: text(v, "OS-EXT-STS:vm_state"),
        host_status: text(v, "host_status").map(|s| s.to_ascii_uppercase()),
        fault: fault.map(|f| printable(&f, 300)),
    })
}

/// A `{"server": {...}}` answer.
pub fn server(body: &[u8]) -> Result<Server, String> {
    let d = doc(body)?;
    let s = d
        .get("server")
        .filter(|s| s.is_object())
        .ok_or("the answer has no \"server\" object")?;
    server_of(s)
}

/// A page of `GET /servers/detail`: the servers and whether Nova links a
/// next page.
pub fn servers(body: &[u8]) -> Result<(Vec<Server>, bool), String> {
    let d = doc(body)?;
    let list = d
        .get("servers")
        .and_then(Value::as_array)
        .ok_or("the answer has no \"servers\" list")?;
    let next = d
        .get("servers_links")
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|x| text(x, "rel").as_deref() == Some("next")));
    let s = list.iter().map(server_of).collect::<Result<Vec<_>, _>>()?;
    Ok((s, next))
}

/// The message of a Nova (`{"itemNotFound": {"message": ...}}`) or
/// Keystone (`{"error": {"message": ...}}`) error body.
pub fn error_message(body: &[u8]) -> Option<String> {
    let d = doc(body).ok()?;
    let o = d.as_object()?;
    o.values()
        .find_map(|v| text(v, "message"))
        .map(|m| printable(&m, 300))
}

/// What a server's reading means for fencing.
pub fn judge(s: &Server) -> Result<Observed, String> {
    let Some(status) = s.status.as_deref() else {
        return Err("Nova's answer has no status (never off by omission)".into());
    };
    if let Some(h) = s.host_status.as_deref() {
        if h == "DOWN" || h == "UNKNOWN" {
            return Err(format!(
                "the server's compute service is {h}: its last report ({status}) is not \
                 evidence, and the server may still run"
            ));
        }
    }
    if let Some(t) = s.task.as_deref() {
        let to = match t {
            "powering-off"
            | "shelving"
            | "shelving_offloading"
            | "deleting"
            | "suspending"
            | "pausing" => Transition::PoweringOff,
            _ => Transition::PoweringOn,
        };
        return Ok(Observed::InTransition(to));
    }
    let power = s.power;
    match status {
        "SHUTOFF" => match power {
            Some(SHUTDOWN) if s.vm_state.as_deref().is_none_or(|v| v == "stopped") => {
                Ok(Observed::Settled(PowerState::Off))
            }
            Some(p) => Err(format!(
                "SHUTOFF with power state {p} ({}), not 4 (SHUTDOWN): not known to be off",
                power_name(p)
            )),
            None => Err(
                "SHUTOFF without OS-EXT-STS:power_state (hidden by policy?): never off by \
                 omission"
                    .into(),
            ),
        },
        "SHELVED_OFFLOADED" => Ok(Observed::Settled(PowerState::Off)),
        "ACTIVE" | "PAUSED" | "SUSPENDED" | "SHELVED" | "RESCUE" | "VERIFY_RESIZE" | "RESIZE"
        | "REVERT_RESIZE" | "MIGRATING" | "REBOOT" | "HARD_REBOOT" | "PASSWORD" | "REBUILD"
        | "BUILD" | "ERROR" => Ok(Observed::Settled(PowerState::On)),
        "UNKNOWN" => Err(
            "Nova reports the server UNKNOWN: its compute host does not report, and the server \
             may still run"
                .into(),
        ),
        other => Err(format!(
            "Nova reports the status '{}', which is not known to mean off",
            printable(other, 40)
        )),
    }
}

/// A token's scope and catalog.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Token {
    /// The project it is scoped to (its id), when scoped to one.
    pub project: Option<String>,
    /// The catalog.
    pub catalog: Vec<Service>,
}

/// One service of the catalog.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Service {
    /// `compute`, `identity`, ...
    pub kind: String,
    /// Its endpoints: interface, region, URL.
    pub endpoints: Vec<(String, String, String)>,
}

/// The body of `POST /v3/auth/tokens` (201).
pub fn token(body: &[u8]) -> Result<Token, String> {
    let d = doc(body)?;
    let t = d.get("token").ok_or("the answer has no \"token\" object")?;
    let catalog = t
        .get("catalog")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .map(|s| Service {
                    kind: text(s, "type").unwrap_or_default(),
                    endpoints: s
                        .get("endpoints")
                        .and_then(Value::as_array)
                        .map(|e| {
                            e.iter()
                                .map(|x| {
                                    (
                                        text(x, "interface").unwrap_or_default(),
                                        text(x, "region_id")
                                            .or_else(|| text(x, "region"))
                                            .unwrap_or_default(),
                                        text(x, "url").unwrap_or_default(),
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Token {
        project: t.get("project").and_then(|p| text(p, "id")),
        catalog,
    })
}

/// The compute endpoint of `interface` (public, internal, admin) in
/// `region`; without a region, the one region that has it (several are
/// refused: never a guess).
pub fn compute_endpoint(
    t: &Token,
    region: Option<&str>,
    interface: &str,
) -> Result<String, String> {
    let all: Vec<&(String, String, String)> = t
        .catalog
        .iter()
        .filter(|s| s.kind == "compute")
        .flat_map(|s| s.endpoints.iter())
        .filter(|(i, _, u)| i.eq_ignore_ascii_case(interface) && !u.is_empty())
        .collect();
    if all.is_empty() {
        return Err(format!(
            "the token's catalog has no compute endpoint with the {interface} interface \
             (is the token scoped to a project?)"
        ));
    }
    let hits: Vec<&&(String, String, String)> = all
        .iter()
        .filter(|(_, r, _)| region.is_none_or(|w| w == r))
        .collect();
    let mut urls: Vec<&str> = hits.iter().map(|(_, _, u)| u.as_str()).collect();
    urls.sort_unstable();
    urls.dedup();
    match (urls.as_slice(), region) {
        ([one], _) => Ok(one.trim_end_matches('/').to_string()),
        ([], Some(r)) => Err(format!(
            "the catalog has no {interface} compute endpoint in region '{}' (regions: {})",
            printable(r, 60),
            regions(&all)
        )),
        _ => Err(format!(
            "the catalog has {interface} compute endpoints in several regions ({}): name one \
             (region_name, --region-name, OS_REGION_NAME)",
            regions(&all)
        )),
    }
}

fn regions(all: &[&(String, String, String)]) -> String {
    let mut r: Vec<&str> = all.iter().map(|(_, r, _)| r.as_str()).collect();
    r.sort_unstable();
    r.dedup();
    r.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn srv(status: &str, power: Option<i64>, task: Option<&str>) -> Server {
        Server {
            id: "u".into(),
            status: Some(status.into()),
            power,
            task: task.map(str::to_string),
            ..Server::default()
        }
    }

    #[test]
    fn only_a_settled_shutoff_or_an_offloaded_server_is_off() {
        let off = Ok(Observed::Settled(PowerState::Off));
        let on = Ok(Observed::Settled(PowerState::On));
        assert_eq!(judge(&srv("SHUTOFF", Some(SHUTDOWN), None)), off);
        assert_eq!(judge(&srv("SHELVED_OFFLOADED", Some(SHUTDOWN), None)), off);
        assert_eq!(judge(&srv("SHELVED_OFFLOADED", Some(NOSTATE), None)), off);
        for (s, p) in [
            ("ACTIVE", RUNNING),
            ("PAUSED", PAUSED),
            ("SUSPENDED", SUSPENDED),
            ("SHELVED", SHUTDOWN),
            ("ERROR", RUNNING),
            ("ERROR", SHUTDOWN),
            ("RESCUE", RUNNING),
        ] {
            assert_eq!(judge(&srv(s, Some(p), None)), on, "{s}");
        }
        for (s, p) in [
            ("SHUTOFF", Some(CRASHED)),
            ("SHUTOFF", Some(RUNNING)),
            ("SHUTOFF", None),
            ("UNKNOWN", Some(RUNNING)),
            ("UNKNOWN", Some(SHUTDOWN)),
            ("ZZZ", Some(SHUTDOWN)),
        ] {
            assert!(judge(&srv(s, p, None)).is_err(), "{s} {p:?}");
        }
        assert!(judge(&Server::default()).is_err());
        // A task under way is never off, whatever the status.
        for t in ["powering-off", "powering-on", "rebooting_hard", "migrating"] {
            let r = judge(&srv("SHUTOFF", Some(SHUTDOWN), Some(t))).unwrap();
            assert!(matches!(r, Observed::InTransition(_)), "{t}");
        }
        // The compute service down: the last report is not evidence.
        let mut s = srv("SHUTOFF", Some(SHUTDOWN), None);
        s.host_status = Some("DOWN".into());
        assert!(judge(&s).unwrap_err().contains("DOWN"));
        s.host_status = Some("UP".into());
        assert_eq!(judge(&s), off);
        s.vm_state = Some("error".into());
        assert!(judge(&s).is_err());
    }

    #[test]
    fn answers_parse_bounded() {
        let body = json!({"server": {"id": "a1", "name": "n1", "status": "shutoff",
            "OS-EXT-STS:power_state": 4, "OS-EXT-STS:task_state": null,
            "OS-EXT-STS:vm_state": "stopped", "fault": {"message": "boom\nSuccess"}}});
        let s = server(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            (s.id.as_str(), s.status.as_deref()),
            ("a1", Some("SHUTOFF"))
        );
        assert_eq!((s.power, s.task.as_deref()), (Some(4), None));
        assert_eq!(s.fault.as_deref(), Some("boom?Success"));
        assert!(server(br#"{"server": {"name": "x"}}"#).is_err());
        assert!(server(br#"{"servers": []}"#).is_err());
        let deep = "[".repeat(10_000);
        assert!(server(deep.as_bytes()).is_err());
        let page = json!({"servers": [{"id": "a", "name": "x"}],
            "servers_links": [{"rel": "next", "href": "h"}]});
        let (l, next) = servers(page.to_string().as_bytes()).unwrap();
        assert_eq!((l.len(), next), (1, true));
        assert_eq!(
            error_message(br#"{"conflictingRequest": {"code": 409, "message": "locked"}}"#)
                .as_deref(),
            Some("locked")
        );
        assert_eq!(
            error_message(br#"{"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}}"#)
                .as_deref(),
            Some("The request you have made requires authentication.")
        );
    }

    #[test]
    fn the_compute_endpoint_by_interface_and_region() {
        let body = json!({"token": {"project": {"id": "p1"}, "catalog": [
            {"type": "identity", "endpoints": [{"interface": "public", "region": "R1", "url": "http://k/v3"}]},
            {"type": "compute", "endpoints": [
                {"interface": "public", "region_id": "R1", "url": "https://n1/v2.1/"},
                {"interface": "internal", "region_id": "R1", "url": "http://n1i/v2.1"},
                {"interface": "public", "region_id": "R2", "url": "https://n2/v2.1"}]}]}});
        let t = token(body.to_string().as_bytes()).unwrap();
        assert_eq!(t.project.as_deref(), Some("p1"));
        assert_eq!(
            compute_endpoint(&t, Some("R1"), "public").as_deref(),
            Ok("https://n1/v2.1")
        );
        assert_eq!(
            compute_endpoint(&t, None, "internal").as_deref(),
            Ok("http://n1i/v2.1")
        );
        assert!(compute_endpoint(&t, None, "public")
            .unwrap_err()
            .contains("R1, R2"));
        assert!(compute_endpoint(&t, Some("R3"), "public").is_err());
        assert!(compute_endpoint(&t, Some("R2"), "admin").is_err());
        assert!(compute_endpoint(&Token::default(), None, "public").is_err());
    }
}
