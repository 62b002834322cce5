//! What Proxmox VE's answers mean for fencing (pure, no I/O): the ticket,
//! the cluster's resources and nodes, a guest's current status, its SMBIOS
//! UUID, worker tasks (UPIDs) and their exit status, and the one rule that
//! decides whether a reading is off.
//!
//! The rule ([`judge`]): a guest is off only when its node answered that
//! it is `stopped`, it is not hibernated (`lock: suspended`, or a saved
//! `vmstate`: a start resumes its memory), and its HA state is not one in
//! which the HA manager is still deciding its fate (`fence`, `recovery`,
//! `error`, …). A running guest is on whatever its QEMU status
//! (`paused`, `suspended`, `prelaunch`, …: the process is alive and can go
//! on). Anything else is unreadable, never a guess.

use super::config::Kind;
use crate::engine::power::PowerState;
use serde_json::Value;

/// One line of text from an answer: bounded, control characters as `?`.
pub fn printable(s: &str, max: usize) -> String {
    crate::http::printable(s, max)
}

/// The `data` member of an answer, or why there is none.
pub fn data(body: &[u8]) -> Result<Value, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON ({e})"))?;
    match v.get("data") {
        Some(d) => Ok(d.clone()),
        None => Err("no data member".into()),
    }
}

/// A login's ticket and CSRF token.
#[derive(Debug)]
pub struct Ticket {
    /// `PVE:USER:…`: the cookie `PVEAuthCookie`.
    pub ticket: String,
    /// The `CSRFPreventionToken` header of writes.
    pub csrf: String,
    /// The user as Proxmox VE spells it.
    pub username: String,
}

/// Reads `POST /access/ticket`'s answer.
pub fn ticket(body: &[u8]) -> Result<Ticket, String> {
    let d = data(body)?;
    let field = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_string);
    match (field("ticket"), field("CSRFPreventionToken")) {
        (Some(ticket), Some(csrf)) if !ticket.is_empty() && !csrf.is_empty() => Ok(Ticket {
            ticket,
            csrf,
            username: field("username").unwrap_or_default(),
        }),
        _ => Err("the answer holds no ticket and CSRF token".into()),
    }
}

/// An integer Proxmox VE may write as a number or a string (VMIDs).
fn int(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

/// One guest of `/cluster/resources?type=vm`: the cluster's last report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Its VMID.
    pub vmid: u32,
    /// QEMU or LXC.
    pub kind: Kind,
    /// Its name (may be empty).
    pub name: String,
    /// The node it is on.
    pub node: String,
    /// The status last reported (`running`, `stopped`, `unknown`).
    pub status: String,
    /// Its HA state, when HA manages it.
    pub hastate: Option<String>,
    /// Its lock (`backup`, `migrate`, `suspended`, …).
    pub lock: Option<String>,
    /// A template (never runs).
    pub template: bool,
}

/// A node of the cluster and whether it is online.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// Its name.
    pub node: String,
    /// Online (`status: online`).
    pub online: bool,
}

/// Reads `/cluster/resources` (any `type`): its guests and its nodes.
pub fn resources(body: &[u8]) -> Result<(Vec<Resource>, Vec<NodeInfo>), String> {
    let d = data(body)?;
    let list = d.as_array().ok_or("the resources are not a list")?;
    let (mut guests, mut nodes) = (Vec::new(), Vec::new());
    for r in list {
        match r.get("type").and_then(Value::as_str) {
            Some("node") => {
                if let Some(node) = text(r, "node") {
                    nodes.push(NodeInfo {
                        online: r.get("status").and_then(Value::as_str) == Some("online"),
                        node,
                    });
                }
            }
            Some(k @ ("qemu" | "lxc")) => {
                let vmid = int(r.get("vmid"))
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or("a guest without a VMID")?;
                guests.push(Resource {
                    vmid,
                    kind: if k == "qemu" { Kind::Qemu } else { Kind::Lxc },
                    name: text(r, "name").unwrap_or_default(),
                    node: text(r, "node").ok_or("a guest without a node")?,
                    status: text(r, "status").unwrap_or_else(|| "unknown".into()),
                    hastate: text(r, "hastate"),
                    lock: text(r, "lock"),
                    template: int(r.get("template")) == Some(1),
                });
            }
            _ => {}
        }
    }
    Ok((guests, nodes))
}

/// Reads `/nodes`: every node and whether it is online.
pub fn nodes(body: &[u8]) -> Result<Vec<NodeInfo>, String> {
    let d = data(body)?;
    let list = d.as_array().ok_or("the nodes are not a list")?;
    Ok(list
        .iter()
        .filter_map(|n| {
            Some(NodeInfo {
                node: text(n, "node")?,
                online: n.get("status").and_then(Value::as_str) == Some("online"),
            })
        })
        .collect())
}

/// A guest's `status/current`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Current {
    /// The VMID the answer is about.
    pub vmid: Option<u32>,
    /// Its name.
    pub name: Option<String>,
    /// `running` or `stopped`.
    pub status: String,
    /// QEMU's own status (`running`, `paused`, `suspended`, `prelaunch`, …).
    pub qmpstatus: Option<String>,
    /// Its lock.
    pub lock: Option<String>,
    /// Its HA state, when HA manages it.
    pub ha: Option<String>,
}

/// Reads `status/current`.
pub fn current(body: &[u8]) -> Result<Current, String> {
    let d = data(body)?;
    if !d.is_object() {
        return Err("the status is not an object".into());
    }
    let ha = d.get("ha");
    let managed = ha
        .map(|h| int(h.get("managed")) == Some(1))
        .unwrap_or(false);
    Ok(Current {
        vmid: int(d.get("vmid")).and_then(|n| u32::try_from(n).ok()),
        name: text(&d, "name"),
        status: text(&d, "status").ok_or("the status names no state")?,
        qmpstatus: text(&d, "qmpstatus"),
        lock: text(&d, "lock"),
        ha: ha
            .filter(|_| managed)
            .and_then(|h| text(h, "state"))
            .or_else(|| managed.then(|| "managed".into())),
    })
}

/// HA states in which the guest's placement or fate is still being
/// decided: its last status is not evidence.
const HA_UNSETTLED: &[&str] = &[
    "fence", "recovery", "error", "freeze", "migrate", "relocate",
];

/// What a reading says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// On, off, or why it is neither.
    pub state: Result<PowerState, String>,
    /// Why an "on" is not plainly running (paused, suspended, hibernated).
    pub note: Option<String>,
}

/// The rule (module documentation): what `c` (and the configuration's
/// saved state, `vmstate`) says of a guest.
pub fn judge(c: &Current, vmstate: bool) -> Judged {
    let on = |note: Option<String>| Judged {
        state: Ok(PowerState::On),
        note,
    };
    let ha = c.ha.as_deref().unwrap_or("");
    if HA_UNSETTLED.contains(&ha) {
        let why = format!(
            "its HA state is '{ha}' (the HA manager is still deciding where it runs): the \
             status '{}' is not evidence",
            printable(&c.status, 40)
        );
        return match c.status.as_str() {
            "running" => on(Some(why)),
            _ => Judged {
                state: Err(why),
                note: None,
            },
        };
    }
    match c.status.as_str() {
        "running" => match c.qmpstatus.as_deref() {
            None | Some("running") => on(None),
            Some(q) => on(Some(format!(
                "QEMU reports '{}': the process is alive and can go on (not off)",
                printable(q, 40)
            ))),
        },
        "stopped" if c.lock.as_deref() == Some("suspended") || vmstate => on(Some(
            "hibernated (its memory is saved and a start resumes it): not off".into(),
        )),
        "stopped" => Judged {
            state: Ok(PowerState::Off),
            note: None,
        },
        other => Judged {
            state: Err(format!(
                "the node reports the status '{}'",
                printable(other, 40)
            )),
            note: None,
        },
    }
}

/// The SMBIOS UUID of a QEMU guest's configuration (`smbios1: uuid=…`) and
/// whether a hibernation state is saved (`vmstate`).
pub fn config(body: &[u8]) -> Result<(Option<String>, bool, Option<String>), String> {
    let d = data(body)?;
    let uuid = text(&d, "smbios1").and_then(|s| {
        s.split(',')
            .find_map(|kv| kv.trim().strip_prefix("uuid=").map(str::to_string))
    });
    let name = text(&d, "name").or_else(|| text(&d, "hostname"));
    Ok((uuid, d.get("vmstate").is_some(), name))
}

/// A worker task's id, `UPID:NODE:PID:PSTART:STARTTIME:TYPE:ID:USER:`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upid {
    /// The whole id.
    pub text: String,
    /// The node that runs it.
    pub node: String,
    /// Its type (`qmstop`, `hastop`, `vzstart`, …).
    pub kind: String,
    /// The object it works on (the VMID).
    pub id: String,
}

/// Reads a power request's answer: `{"data": "UPID:…"}`.
pub fn upid(body: &[u8]) -> Result<Upid, String> {
    let d = data(body)?;
    let s = d.as_str().ok_or("the answer names no task")?;
    parse_upid(s).ok_or_else(|| format!("'{}' is not a task id", printable(s, 120)))
}

/// Splits a UPID.
pub fn parse_upid(s: &str) -> Option<Upid> {
    let p: Vec<&str> = s.split(':').collect();
    if p.len() < 8 || p[0] != "UPID" || !super::config::node_ok(p[1]) {
        return None;
    }
    Some(Upid {
        text: s.to_string(),
        node: p[1].to_string(),
        kind: p[5].to_string(),
        id: p[6].to_string(),
    })
}

/// A task's `status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Still running.
    Running,
    /// Ended well (`exitstatus: OK`).
    Ok,
    /// Ended with this error (its exit status; `WARNINGS: N` counts as well).
    Failed(String),
}

/// Reads `/nodes/N/tasks/UPID/status`; the answer must be about `upid`.
pub fn task(body: &[u8], upid: &Upid) -> Result<TaskState, String> {
    let d = data(body)?;
    if let Some(u) = text(&d, "upid") {
        if u != upid.text {
            return Err(format!(
                "the answer is about another task ({})",
                printable(&u, 120)
            ));
        }
    }
    match text(&d, "status").as_deref() {
        Some("running") => Ok(TaskState::Running),
        Some("stopped") => match text(&d, "exitstatus").as_deref() {
            Some("OK") => Ok(TaskState::Ok),
            Some(w) if w.starts_with("WARNINGS") => Ok(TaskState::Ok),
            Some(e) => Ok(TaskState::Failed(printable(e, 200))),
            None => Err("the task stopped without an exit status".into()),
        },
        Some(s) => Err(format!("the task's status '{}'", printable(s, 40))),
        None => Err("the task's status is missing".into()),
    }
}

/// A parameter error's text (`{"errors": {"skiplock": "Only root …"}}`).
pub fn param_errors(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let e = v.get("errors")?.as_object()?;
    let parts: Vec<String> = e
        .iter()
        .map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or("").trim()))
        .collect();
    (!parts.is_empty()).then(|| printable(&parts.join("; "), 300))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cur(status: &str, qmp: Option<&str>, lock: Option<&str>, ha: Option<&str>) -> Current {
        Current {
            vmid: Some(100),
            name: None,
            status: status.into(),
            qmpstatus: qmp.map(str::to_string),
            lock: lock.map(str::to_string),
            ha: ha.map(str::to_string),
        }
    }

    #[test]
    fn only_a_stopped_guest_that_cannot_resume_is_off() {
        let off = Ok(PowerState::Off);
        let on = Ok(PowerState::On);
        assert_eq!(
            judge(&cur("stopped", Some("stopped"), None, None), false).state,
            off
        );
        assert_eq!(
            judge(&cur("stopped", None, Some("backup"), None), false).state,
            off
        );
        for q in ["paused", "suspended", "prelaunch", "running"] {
            assert_eq!(
                judge(&cur("running", Some(q), None, None), false).state,
                on,
                "{q}"
            );
        }
        let h = judge(
            &cur("stopped", Some("stopped"), Some("suspended"), None),
            false,
        );
        assert_eq!(h.state, on);
        assert!(h.note.unwrap().contains("hibernated"));
        assert_eq!(judge(&cur("stopped", None, None, None), true).state, on);
        let f = judge(&cur("stopped", None, None, Some("fence")), false);
        assert!(f.state.unwrap_err().contains("'fence'"));
        assert_eq!(
            judge(&cur("running", None, None, Some("fence")), false).state,
            on
        );
        assert_eq!(
            judge(&cur("stopped", None, None, Some("stopped")), false).state,
            off
        );
        assert!(judge(&cur("unknown", None, None, None), false)
            .state
            .is_err());
    }

    #[test]
    fn answers_read_as_proxmox_ve_writes_them() {
        let b = json!({"data": {"ticket": "PVE:root@pam:1::x", "CSRFPreventionToken": "1:y",
                                "username": "root@pam"}});
        let t = ticket(b.to_string().as_bytes()).unwrap();
        assert_eq!(
            (t.ticket.as_str(), t.csrf.as_str()),
            ("PVE:root@pam:1::x", "1:y")
        );
        assert!(ticket(br#"{"data":null}"#).is_err());
        let r = json!({"data": [
            {"type": "node", "node": "pve3", "status": "offline"},
            {"type": "qemu", "vmid": 100, "name": "n1", "node": "pve1", "status": "running",
             "hastate": "started"},
            {"type": "lxc", "vmid": "200", "node": "pve2", "status": "stopped", "lock": "backup"},
            {"type": "storage", "id": "storage/pve1/local"}]});
        let (g, n) = resources(r.to_string().as_bytes()).unwrap();
        assert_eq!(
            n,
            [NodeInfo {
                node: "pve3".into(),
                online: false
            }]
        );
        assert_eq!(
            (g[0].vmid, g[0].kind, g[0].hastate.as_deref()),
            (100, Kind::Qemu, Some("started"))
        );
        assert_eq!(
            (g[1].vmid, g[1].kind, g[1].lock.as_deref()),
            (200, Kind::Lxc, Some("backup"))
        );
        let c = json!({"data": {"vmid": 105, "status": "stopped", "qmpstatus": "stopped",
                                "lock": "suspended", "ha": {"managed": 0}}});
        let c = current(c.to_string().as_bytes()).unwrap();
        assert_eq!(
            (c.vmid, c.lock.as_deref(), c.ha),
            (Some(105), Some("suspended"), None)
        );
        let c = json!({"data": {"status": "running", "ha": {"managed": 1, "state": "fence"}}});
        assert_eq!(
            current(c.to_string().as_bytes()).unwrap().ha.as_deref(),
            Some("fence")
        );
        let conf = json!({"data": {"smbios1": "manufacturer=x,uuid=0b8d7e4c-1f0e-4e2a-9a55-3f1e0c9b7d21",
                                   "vmstate": "local:state", "name": "n1"}});
        let (u, saved, name) = config(conf.to_string().as_bytes()).unwrap();
        assert_eq!(u.as_deref(), Some("0b8d7e4c-1f0e-4e2a-9a55-3f1e0c9b7d21"));
        assert!(saved);
        assert_eq!(name.as_deref(), Some("n1"));
    }

    #[test]
    fn tasks_end_ok_or_with_their_error_and_must_be_ours() {
        let u = upid(br#"{"data":"UPID:pve1:0000ABCD:00012345:6523A1B2:qmstop:100:root@pam:"}"#)
            .unwrap();
        assert_eq!(
            (u.node.as_str(), u.kind.as_str(), u.id.as_str()),
            ("pve1", "qmstop", "100")
        );
        assert!(upid(br#"{"data":null}"#).is_err());
        assert!(parse_upid("UPID:bad node:1:2:3:qmstop:100:u:").is_none());
        let body = |s: Value| s.to_string().into_bytes();
        let mut d = json!({"data": {"upid": u.text, "status": "running"}});
        assert_eq!(task(&body(d.clone()), &u), Ok(TaskState::Running));
        d["data"]["status"] = json!("stopped");
        d["data"]["exitstatus"] = json!("VM is locked (backup)");
        assert_eq!(
            task(&body(d.clone()), &u),
            Ok(TaskState::Failed("VM is locked (backup)".into()))
        );
        d["data"]["exitstatus"] = json!("OK");
        assert_eq!(task(&body(d.clone()), &u), Ok(TaskState::Ok));
        d["data"]["upid"] = json!("UPID:pve1:1:2:3:qmstop:101:root@pam:");
        assert!(task(&body(d), &u).unwrap_err().contains("another task"));
        assert_eq!(
            param_errors(
                r#"{"data":null,"errors":{"skiplock":"Only root may use this option.\n"}}"#
            )
            .as_deref(),
            Some("skiplock: Only root may use this option.")
        );
    }
}
