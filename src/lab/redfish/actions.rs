//! `ComputerSystem.Reset` and the Task monitors: reading the request, the
//! fault knobs that refuse it, each family's no-op rules and answers, and
//! applying it to the chassis (at once, or when its task says so).

use super::http::{empty, error, not_found, respond, Answer};
use super::state::{reset_types, Shared, Task};
use super::vendor::{answers, Vendor};
use hyper::header::{HeaderValue, LOCATION};
use serde_json::{json, Value};

/// Applies a chassis operation (IPMI chassis control codes); returns the
/// completion code. The chassis keeps the transition window.
pub(super) fn apply(shared: &Shared, op: u8) -> u8 {
    shared.bmc.lock().control(op)
}

pub(super) fn reset(shared: &Shared, id: &str, body: &[u8]) -> Answer {
    let vendor = shared.opts.vendor;
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return error(
            400,
            "Base.1.8.MalformedJSON",
            "The request body submitted was malformed JSON and could not be parsed.",
        );
    };
    let Some(rt) = v.get("ResetType").and_then(Value::as_str) else {
        return error(
            400,
            "Base.1.8.ActionParameterMissing",
            "The action ComputerSystem.Reset requires the parameter ResetType to be present.",
        );
    };
    let rt = rt.to_string();
    shared.inner().stats.resets.push(rt.clone());
    if !reset_types(shared).contains(&rt) {
        return answers::not_in_list(vendor, &rt);
    }
    if id != shared.opts.system_id {
        if matches!(vendor, Vendor::Ami | Vendor::AmiTask) {
            return not_found(&format!(
                "/redfish/v1/Systems/{id}/Actions/ComputerSystem.Reset"
            ));
        }
        // Decoys accept resets and stay as they are.
        return empty(204);
    }
    let faults = {
        let mut i = shared.inner();
        let f = i.faults.clone();
        if let Some(e) = &f.reset_error {
            if e.times == 0 || i.reset_errors_sent < e.times {
                i.reset_errors_sent += 1;
                return error(e.status, &e.message_id, &e.message);
            }
        }
        f
    };
    let (on, moving) = {
        let mut c = shared.bmc.lock();
        (c.is_on(), c.transition())
    };
    let op = match rt.as_str() {
        "On" | "ForceOn" => 1,
        "ForceOff" | "GracefulShutdown" => 0,
        "PushPowerButton" => u8::from(!moving.unwrap_or(on)),
        "ForceRestart" | "GracefulRestart" | "PowerCycle" => 2,
        "Nmi" => 4,
        _ => {
            return error(
                400,
                "Base.1.8.ActionParameterValueNotInList",
                &format!("The value {rt} for the parameter ResetType is not in the list of acceptable values."),
            )
        }
    };
    if vendor == Vendor::Ilo && moving.is_some() {
        // quirks.md 15: iLO refuses during a transition.
        return answers::ilo("Power transition in progress. Retry later");
    }
    // A request that changes nothing: iDRAC and iLO refuse it (also a
    // restart while off); the others accept it and do nothing.
    let settled = moving.is_none();
    let no_op = settled && ((op == 1 && on) || (op == 0 && !on));
    if no_op || (settled && op == 2 && !on) {
        if let Some(a) = answers::already(vendor, op == 1) {
            return a;
        }
    }
    if faults.conflict_when_already && ((op == 1 && on) || (op == 0 && !on)) {
        let word = if on { "ON" } else { "OFF" };
        return error(
            409,
            "IDRAC.2.8.PSU501",
            &format!("Server is already powered {word}."),
        );
    }
    let heading_there = moving.is_some_and(|t| (op == 1 && t) || (op == 0 && !t));
    if vendor == Vendor::AmiTask {
        // Applied now; the task runs until the transition ends.
        if !no_op && !heading_there {
            apply(shared, op);
        }
        return new_task(shared, op, 0, false, true);
    }
    if let Some(t) = faults.task {
        return new_task(shared, op, t.polls, t.fail, false);
    }
    if vendor != Vendor::Generic {
        // These families accept no-ops and requests during a transition.
        if !no_op && !heading_there {
            apply(shared, op);
        }
        return answers::success(vendor);
    }
    match apply(shared, op) {
        0 => empty(204),
        0xd5 => error(
            409,
            "Base.1.8.ActionNotSupported",
            &format!(
                "The chassis is already powered {}.",
                if on { "on" } else { "off" }
            ),
        ),
        _ => error(
            500,
            "Base.1.8.InternalError",
            "The chassis refused the request.",
        ),
    }
}

pub(super) fn new_task(shared: &Shared, op: u8, polls: u32, fail: bool, follows: bool) -> Answer {
    let n = {
        let mut i = shared.inner();
        let n = i.next_task;
        i.next_task += 1;
        i.tasks.insert(
            n,
            Task {
                op,
                polls_left: polls,
                fail,
                done: follows,
                follows_transition: follows,
            },
        );
        n
    };
    let uri = format!("/redfish/v1/TaskService/Tasks/{n}");
    let mut r = respond(202, &task_body(&uri, n, "Running", "OK", None));
    if let Ok(v) = HeaderValue::from_str(&uri) {
        r.headers_mut().insert(LOCATION, v);
    }
    r
}

pub(super) fn task_body(
    uri: &str,
    n: u64,
    state: &str,
    status: &str,
    message: Option<&str>,
) -> Value {
    let mut t = json!({
        "@odata.id": uri,
        "@odata.type": "#Task.v1_4_3.Task",
        "Id": n.to_string(),
        "Name": "ComputerSystem.Reset",
        "TaskState": state,
        "TaskStatus": status,
        "TaskMonitor": uri,
    });
    if let Some(m) = message {
        t["Messages"] = json!([{"MessageId": "Base.1.8.GeneralError", "Message": m}]);
    }
    t
}

pub(super) fn task(shared: &Shared, n: &str, path: &str) -> Answer {
    let Ok(n) = n.parse::<u64>() else {
        return not_found(path);
    };
    enum Step {
        Running,
        Fail,
        Apply(u8),
        Done,
    }
    let follows = {
        let mut i = shared.inner();
        i.stats.task_polls += 1;
        match i.tasks.get(&n) {
            None => return not_found(path),
            Some(t) => t.follows_transition,
        }
    };
    if follows {
        // DSP0266 asynchronous operations: 202 while running, then 200.
        let moving = shared.bmc.lock().transition().is_some();
        return if moving {
            let mut r = respond(202, &task_body(path, n, "Running", "OK", None));
            if let Ok(v) = HeaderValue::from_str(path) {
                r.headers_mut().insert(LOCATION, v);
            }
            r
        } else {
            respond(200, &task_body(path, n, "Completed", "OK", None))
        };
    }
    let step = {
        let mut i = shared.inner();
        match i.tasks.get_mut(&n) {
            None => return not_found(path),
            Some(t) if t.polls_left > 0 => {
                t.polls_left -= 1;
                Step::Running
            }
            Some(t) if t.fail => Step::Fail,
            Some(t) if !t.done => {
                t.done = true;
                Step::Apply(t.op)
            }
            Some(_) => Step::Done,
        }
    };
    match step {
        Step::Running => respond(202, &task_body(path, n, "Running", "OK", None)),
        Step::Fail => respond(
            200,
            &task_body(
                path,
                n,
                "Exception",
                "Critical",
                Some("The lab failed the reset task."),
            ),
        ),
        Step::Apply(op) => {
            apply(shared, op);
            respond(200, &task_body(path, n, "Completed", "OK", None))
        }
        Step::Done => respond(200, &task_body(path, n, "Completed", "OK", None)),
    }
}
