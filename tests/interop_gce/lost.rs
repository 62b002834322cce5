//! Power requests whose answer was lost, on a peer of its own: fencekit
//! reads them back (the instance, and the zone's operations filtered by
//! `clientOperationId`) before anything else is sent; it sends one again,
//! once and under the same `requestId`, only when both reads show nothing
//! of it; a read-back that fails is "outcome unknown", nothing re-sent.
//! The peer counts the POSTs it received.

use super::*;

/// The POSTs the peer received for `verb` on `name`: their requestIds.
fn posts(peer: &Peer, name: &str, verb: &str) -> Vec<String> {
    peer.requests(&format!("/instances/{name}/{verb}"))
        .iter()
        .filter(|l| l["method"] == "POST")
        .map(|l| {
            let q = l["query"].as_str().unwrap_or("");
            q.split('&')
                .find_map(|kv| kv.strip_prefix("requestId="))
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// The read-backs: GETs of the zone's operations with a filter naming
/// `request_id` as the `clientOperationId`.
fn read_backs(peer: &Peer, request_id: &str) -> usize {
    peer.requests(&format!("/zones/{ZONE}/operations"))
        .iter()
        .filter(|l| {
            let q = l["query"].as_str().unwrap_or("");
            q.contains("clientOperationId") && q.contains(request_id)
        })
        .count()
}

pub(super) fn lost_answers_are_read_back() {
    let t0 = Instant::now();
    let Some(peer) = Peer::start(0.3) else { return };
    let peer: &'static Peer = Box::leak(Box::new(peer));
    let lap = |what: &str| eprintln!("  {what}: {:.1}s", t0.elapsed().as_secs_f64());
    for n in ["l-lose", "l-before", "l-forbid", "l-forbid-lost", "l-reset"] {
        peer.instance(n, json!({}));
    }

    lap("lost after the work");
    // The stop is carried out and its answer lost: the read-back finds its
    // operation by requestId and follows it; one POST.
    peer.fault(json!({"lose": {"stop:l-lose": 1}}));
    let o = ours(peer, &on("l-lose", &["-o", "off", "-v"]), &[]);
    expect(&o, 0, "Success: Powered OFF");
    let sent = posts(peer, "l-lose", "stop");
    assert_eq!(sent.len(), 1, "never sent again: {sent:?}\n{}", o.text());
    assert!(
        o.text().contains("carries its requestid") && o.text().contains("nothing is sent again"),
        "{}",
        o.text()
    );
    assert_eq!(read_backs(peer, &sent[0]), 1, "{}", o.text());
    assert_eq!(peer.ops("l-lose", "stop").len(), 1);
    assert_eq!(peer.status("l-lose"), "TERMINATED");

    lap("lost before the work");
    // Dropped before anything was done: the instance reads RUNNING and no
    // operation carries the requestId, so the stop is sent again, once,
    // under the same requestId; off confirmed.
    peer.fault(json!({"drop_before": {"stop:l-before": 1}}));
    let o = ours(peer, &on("l-before", &["-o", "off", "-v"]), &[]);
    expect(&o, 0, "Success: Powered OFF");
    let sent = posts(peer, "l-before", "stop");
    assert_eq!(sent.len(), 2, "{sent:?}\n{}", o.text());
    assert!(!sent[0].is_empty() && sent[0] == sent[1], "{sent:?}");
    assert_eq!(read_backs(peer, &sent[0]), 1);
    // The timeline (-v) says why it was sent again.
    assert!(
        o.text().contains("the read-back showed nothing of it")
            && o.text().contains(&format!(
                "sent again, once, with the same requestid {}",
                sent[0]
            )),
        "{}",
        o.text()
    );
    assert_eq!(peer.ops("l-before", "stop").len(), 1);
    assert_eq!(peer.status("l-before"), "TERMINATED");

    lap("a reset lost before the work");
    // A reset leaves the instance RUNNING: only its operation shows it.
    // None carries the requestId, so it is sent again under it; once.
    peer.fault(json!({"drop_before": {"reset:l-reset": 1}}));
    let o = ours(peer, &on("l-reset", &["-o", "reboot"]), &[]);
    expect(&o, 0, "Success: Rebooted");
    let sent = posts(peer, "l-reset", "reset");
    assert_eq!(sent.len(), 2, "{sent:?}\n{}", o.text());
    assert_eq!(sent[0], sent[1]);
    assert_eq!(peer.ops("l-reset", "reset").len(), 1);
    // And lost after the work: its operation is found and followed.
    peer.fault(json!({"lose": {"reset:l-reset": 1}}));
    let o = ours(peer, &on("l-reset", &["-o", "reboot"]), &[]);
    expect(&o, 0, "Success: Rebooted");
    assert_eq!(posts(peer, "l-reset", "reset").len(), 3, "{}", o.text());
    assert_eq!(peer.ops("l-reset", "reset").len(), 2);

    lap("the operations list forbidden");
    // The list is refused (403) and the instance still reads RUNNING:
    // nothing shows whether the stop was taken. Outcome unknown, never
    // sent again: the engine polls the state (never off) and the failure
    // names the silence. One POST.
    peer.fault(json!({"drop_before": {"stop:l-forbid": 1},
        "forbid": ["compute.zoneOperations.list"]}));
    let o = ours(
        peer,
        &on("l-forbid", &["-o", "off", "--power-timeout", "2"]),
        &[],
    );
    let t = o.text();
    assert_eq!(o.code, Some(1), "{t}");
    assert!(
        t.contains("is not known")
            && t.contains("compute.zoneoperations.list")
            && t.contains("not sent again"),
        "{t}"
    );
    assert_eq!(posts(peer, "l-forbid", "stop").len(), 1, "{t}");
    assert_eq!(peer.status("l-forbid"), "RUNNING");
    // Natively: the engine's outcome-unknown path, not a failure to retry.
    peer.fault(json!({"drop_before": {"stop:l-forbid": 1}}));
    // (The metadata server's token: of another instance, the guard passes.)
    peer.control(json!({"op": "metadata", "instance": format!("{PROJECT}/{ZONE}/l-lose")}));
    let mut d = driver_of(peer, config(peer, "l-forbid"));
    let e = act(&mut d, Action::Off, Duration::from_secs(2)).unwrap_err();
    assert!(
        matches!(
            e.error.kind,
            ErrorKind::OutcomeUnknown | ErrorKind::TransitionTimeout
        ),
        "{e:?}"
    );
    assert!(
        e.error.message.contains("not sent again")
            && e.error.message.contains("compute.zoneOperations.list"),
        "{}",
        e.error.message
    );
    assert_eq!(posts(peer, "l-forbid", "stop").len(), 2, "one more, once");
    assert_eq!(peer.status("l-forbid"), "RUNNING");

    lap("the list forbidden, the stop taken");
    // The list is refused, but the instance reads STOPPING: the stop was
    // taken; the engine confirms off. One POST.
    peer.fault(json!({"lose": {"stop:l-forbid-lost": 1}}));
    let o = ours(peer, &on("l-forbid-lost", &["-o", "off"]), &[]);
    expect(&o, 0, "Success: Powered OFF");
    assert_eq!(posts(peer, "l-forbid-lost", "stop").len(), 1);
    peer.fault(json!({"forbid": []}));
    eprintln!(
        "lost_answers_are_read_back: {:.1}s",
        t0.elapsed().as_secs_f64()
    );
}
