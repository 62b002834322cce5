//! What the engine's XML answers mean for fencing (pure, bounded by
//! [`crate::parse`]): a VM (id, name, status), a list of VMs, an action's
//! reply and its job, a fault; and [`judge`], the rule that decides off.
//!
//! Off is `down` and nothing else: a paused, suspended VM, one saving or
//! restoring its memory, migrating, powering up or down, waiting for launch
//! or rebooting is on (its process exists or is about to); `unknown`,
//! `image_locked`, `unassigned`, a status this code does not know and a VM
//! without a status are unreadable (upstream calls a reply without status
//! off). `not_responding` (the host cannot reach the VM's monitor) is on: its
//! QEMU process may run.

use crate::engine::power::PowerState;
use crate::parse::Limits;
use roxmltree::Node;

pub use crate::http::text::printable;

/// The bounds of an answer: 8 MiB, 64 levels.
pub const LIMITS: Limits = Limits::ANSWER.with_bytes(8 << 20);

/// One VM as the engine shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vm {
    /// The VM's id (a UUID; the guest's SMBIOS system UUID).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its status (`up`, `down`, ...), when the answer has one.
    pub status: Option<String>,
    /// The id of the host it runs on.
    pub host: Option<String>,
}

fn child<'a>(n: Node<'a, 'a>, tag: &str) -> Option<Node<'a, 'a>> {
    n.children().find(|c| c.is_element() && c.has_tag_name(tag))
}

fn text_of(n: Node<'_, '_>, tag: &str) -> Option<String> {
    child(n, tag).map(|c| c.text().unwrap_or_default().trim().to_string())
}

fn vm_of(n: Node<'_, '_>) -> Result<Vm, String> {
    let id = n
        .attribute("id")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or("a <vm> without an id")?;
    Ok(Vm {
        id: id.to_string(),
        name: text_of(n, "name").unwrap_or_default(),
        status: text_of(n, "status").filter(|s| !s.is_empty()),
        host: child(n, "host").and_then(|h| h.attribute("id").map(str::to_string)),
    })
}

fn doc(body: &[u8]) -> Result<roxmltree::Document<'_>, String> {
    crate::parse::xml_bytes(body, &LIMITS).map_err(|e| e.to_string())
}

/// A `<vm>` document.
pub fn vm(body: &[u8]) -> Result<Vm, String> {
    let d = doc(body)?;
    let r = d.root_element();
    if !r.has_tag_name("vm") {
        return Err(format!(
            "the answer is a <{}>, not a <vm>",
            printable(r.tag_name().name(), 40)
        ));
    }
    vm_of(r)
}

/// A `<vms>` document (a list or a search).
pub fn vms(body: &[u8]) -> Result<Vec<Vm>, String> {
    let d = doc(body)?;
    let r = d.root_element();
    if !r.has_tag_name("vms") {
        return Err(format!(
            "the answer is a <{}>, not a <vms> list",
            printable(r.tag_name().name(), 40)
        ));
    }
    r.children()
        .filter(|c| c.is_element() && c.has_tag_name("vm"))
        .map(vm_of)
        .collect()
}

/// A `<fault>`'s reason and detail, when the body is one.
pub fn fault(body: &[u8]) -> Option<String> {
    let d = doc(body).ok()?;
    let r = d.root_element();
    if !r.has_tag_name("fault") {
        return None;
    }
    let reason = text_of(r, "reason").unwrap_or_default();
    let detail = text_of(r, "detail").unwrap_or_default();
    let s = match (reason.is_empty(), detail.is_empty()) {
        (false, false) => format!("{reason}: {detail}"),
        (false, true) => reason,
        _ => detail,
    };
    Some(printable(&s, 300)).filter(|s| !s.is_empty())
}

/// An `<action>` reply: its status (`complete`, `failed`, `pending`), its
/// fault's text, and the id of the job that carries it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// `complete`, `pending`, `in_progress`, `failed`.
    pub status: Option<String>,
    /// The fault carried in the action.
    pub fault: Option<String>,
    /// The job's id.
    pub job: Option<String>,
}

/// Parses an `<action>` reply.
pub fn action(body: &[u8]) -> Result<Action, String> {
    let d = doc(body)?;
    let r = d.root_element();
    if !r.has_tag_name("action") {
        return Err(format!(
            "the answer is a <{}>, not an <action>",
            printable(r.tag_name().name(), 40)
        ));
    }
    let fault = child(r, "fault").map(|f| {
        let reason = text_of(f, "reason").unwrap_or_default();
        let detail = text_of(f, "detail").unwrap_or_default();
        printable(format!("{reason} {detail}").trim(), 300)
    });
    Ok(Action {
        status: text_of(r, "status"),
        fault,
        job: child(r, "job").and_then(|j| j.attribute("id").map(str::to_string)),
    })
}

/// Where a job stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Job {
    /// Not ended yet.
    Running,
    /// Ended well.
    Finished,
    /// Failed or aborted: its description.
    Failed(String),
}

/// A `<job>` document, which must be the job asked about.
pub fn job(body: &[u8], id: &str) -> Result<Job, String> {
    let d = doc(body)?;
    let r = d.root_element();
    if !r.has_tag_name("job") {
        return Err("the answer is not a <job>".into());
    }
    if r.attribute("id") != Some(id) {
        return Err(format!(
            "the answer is about job '{}', not {id} (never evidence)",
            printable(r.attribute("id").unwrap_or_default(), 60)
        ));
    }
    let status = text_of(r, "status")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let why = text_of(r, "description").unwrap_or_default();
    Ok(match status.as_str() {
        "finished" => Job::Finished,
        "started" | "unknown" | "" => Job::Running,
        other => Job::Failed(printable(&format!("{other}: {why}"), 300)),
    })
}

/// The power state a VM's status means, or why it says nothing.
pub fn judge(status: Option<&str>) -> Result<PowerState, String> {
    let Some(s) = status else {
        return Err("the engine's answer has no status (never off by omission)".into());
    };
    match s.to_ascii_lowercase().as_str() {
        "down" => Ok(PowerState::Off),
        "up" | "powering_up" | "powering_down" | "reboot_in_progress" | "paused" | "suspended"
        | "saving_state" | "restoring_state" | "migrating" | "wait_for_launch"
        | "not_responding" => Ok(PowerState::On),
        "unknown" => Err(
            "the engine reports the VM unknown: its host does not answer, and the VM may still run"
                .into(),
        ),
        "image_locked" => {
            Err("the VM's disks are locked (image_locked): neither on nor off".into())
        }
        other => Err(format!(
            "the engine reports the status '{}', which is not known to mean off",
            printable(other, 40)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_down_is_off() {
        assert_eq!(judge(Some("down")), Ok(PowerState::Off));
        for on in [
            "up",
            "paused",
            "suspended",
            "saving_state",
            "restoring_state",
            "migrating",
            "not_responding",
            "powering_down",
            "wait_for_launch",
            "powering_up",
        ] {
            assert_eq!(judge(Some(on)), Ok(PowerState::On), "{on}");
        }
        for bad in ["unknown", "image_locked", "unassigned", "zzz"] {
            assert!(judge(Some(bad)).is_err(), "{bad}");
        }
        assert!(judge(None).is_err());
    }

    #[test]
    fn documents_parse_bounded() {
        let v =
            vm(br#"<vm href="/x" id="a1"><name>n1</name><status>up</status><host id="h1"/></vm>"#)
                .unwrap();
        assert_eq!((v.id.as_str(), v.name.as_str()), ("a1", "n1"));
        assert_eq!(
            (v.status.as_deref(), v.host.as_deref()),
            (Some("up"), Some("h1"))
        );
        let l = vms(br#"<vms><vm id="a"><name>x</name></vm><vm id="b"><name>y</name><status>down</status></vm></vms>"#).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].status, None);
        assert!(vms(b"<vm id='a'/>").is_err());
        assert!(vm(b"<vm><name>x</name></vm>").is_err());
        let deep = "<a>".repeat(10_000);
        assert!(vm(deep.as_bytes()).is_err());
        let a = action(br#"<action><status>complete</status><job id="j1"/></action>"#).unwrap();
        assert_eq!(
            (a.status.as_deref(), a.job.as_deref()),
            (Some("complete"), Some("j1"))
        );
        assert_eq!(
            job(br#"<job id="j1"><status>finished</status></job>"#, "j1"),
            Ok(Job::Finished)
        );
        assert!(matches!(
            job(
                br#"<job id="j1"><status>failed</status><description>x</description></job>"#,
                "j1"
            ),
            Ok(Job::Failed(_))
        ));
        assert!(job(br#"<job id="j2"><status>finished</status></job>"#, "j1").is_err());
        assert_eq!(
            fault(b"<fault><reason>Operation Failed</reason><detail>[Cannot stop VM.]</detail></fault>")
                .as_deref(),
            Some("Operation Failed: [Cannot stop VM.]")
        );
    }
}
