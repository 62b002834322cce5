//! The confirmed-off hook: an operator's command run once while a node is
//! *observed* off (after `off` is confirmed; during `reboot`, between the
//! confirmed off and the power-on), e.g. to apply Kubernetes'
//! `node.kubernetes.io/out-of-service` taint, which must only be applied
//! while the node is really off.
//!
//! The command runs through `/bin/sh -c` with stdin closed, in a process
//! group of its own that is killed at its time limit (which never reaches
//! past the action's deadline), with stdout and stderr captured up to
//! [`CAPTURE_LIMIT`] bytes each into the evidence timeline. It learns what
//! happened from `FENCEKIT_*` environment variables ([`environment`]) and
//! never sees a secret: every inherited `FENCEKIT_*` variable (such as
//! `FENCEKIT_PASSWORD`) and every variable a credential reference names
//! (`--password-env`, inventory `password_env`) is removed first. It
//! inherits the grant of the per-device locks its parent holds for the node
//! (`FENCEKIT_LOCK_GRANT`, a token that is no credential and is never
//! logged, and `FENCEKIT_LOCK_SCOPE`), so `fencekit status NODE` in a hook
//! does not wait for its own parent ([`crate::lock::Inherit`]).
//!
//! The running itself is the crate's one script runner,
//! [`crate::script::run_script`] (deadline, kill of the whole group, clean
//! environment, bounded capture), which password scripts use too.

use crate::engine::event::Event;
use crate::script::{run_script, End, Script};
use serde::Serialize;
use std::time::Duration;

/// Bytes of stdout, and of stderr, kept for the timeline.
pub const CAPTURE_LIMIT: usize = 4096;

/// The confirmed-off hook of a run.
#[derive(Clone, Debug, Default)]
pub struct HookOptions {
    /// The command (`--on-confirmed-off`); when `None`, each node's
    /// inventory `on_confirmed_off`, if any.
    pub command: Option<String>,
    /// Its own time limit (cut to what is left of the action's deadline).
    pub timeout: Duration,
    /// `reboot`: power the node on even when the hook failed (the result
    /// still fails). Without it a failed hook leaves the node off.
    pub on_despite_failure: bool,
    /// Environment variables that hold secrets (credential references) and
    /// are removed from the hook's environment.
    pub scrub: Vec<String>,
}

/// What the hook is told about the node it runs for.
#[derive(Clone, Debug)]
pub struct HookContext {
    /// The node's name.
    pub node: String,
    /// `off` or `reboot`.
    pub action: String,
    /// The driver of the level that fenced it (`ipmi`, `redfish`, `ssh`).
    pub method: String,
    /// That level (1-based).
    pub level: usize,
    /// Its endpoint (no secret).
    pub endpoint: String,
    /// What the off did: `power`, or `isolated` (a switch port down).
    pub effect: crate::platform::Effect,
    /// The node's own address, if known.
    pub address: Option<String>,
    /// How off was established: `reached` or `already`.
    pub outcome: String,
    /// A one-line summary of the evidence (reads, commands, times).
    pub evidence: String,
    /// The grant of the locks held for the node (a `fencekit` the hook
    /// runs for this node is let through them) and the lock scope.
    pub lock: crate::lock::Inherit,
}

/// The hook's environment: what it may know, never a secret.
pub fn environment(c: &HookContext) -> Vec<(String, String)> {
    let mut env = vec![
        ("FENCEKIT_NODE".to_string(), c.node.clone()),
        ("FENCEKIT_ACTION".to_string(), c.action.clone()),
        ("FENCEKIT_METHOD".to_string(), c.method.clone()),
        ("FENCEKIT_LEVEL".to_string(), c.level.to_string()),
        ("FENCEKIT_ENDPOINT".to_string(), c.endpoint.clone()),
        ("FENCEKIT_STATE".to_string(), "off".to_string()),
        ("FENCEKIT_EFFECT".to_string(), c.effect.as_str().to_string()),
        ("FENCEKIT_OUTCOME".to_string(), c.outcome.clone()),
        ("FENCEKIT_EVIDENCE".to_string(), c.evidence.clone()),
    ];
    if let Some(a) = &c.address {
        env.push(("FENCEKIT_ADDRESS".to_string(), a.clone()));
    }
    env.extend(c.lock.vars().iter().cloned());
    env
}

/// What the hook did, as recorded in the result and the audit trail.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct HookReport {
    /// It exited 0 within its limit.
    pub ok: bool,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// It was killed at its time limit.
    pub timed_out: bool,
    /// How long it ran.
    pub elapsed_ms: u64,
    /// The outcome in words.
    pub detail: String,
    /// `reboot`: the node was powered on although the hook failed
    /// (`--on-despite-hook-failure`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub powered_on_anyway: bool,
}

/// Runs the hook for one node; its steps go to `emit`.
pub async fn run_hook(
    command: &str,
    ctx: &HookContext,
    limit: Duration,
    scrub: &[String],
    emit: &mut dyn FnMut(Event),
) -> HookReport {
    emit(Event::HookStarted {
        timeout_ms: limit.as_millis() as u64,
    });
    let env = environment(ctx);
    let run = run_script(&Script {
        command,
        env: &env,
        remove: scrub,
        limit,
        capture: CAPTURE_LIMIT,
    })
    .await;
    for (stream, c) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        if !c.text.is_empty() {
            emit(Event::HookOutput {
                stream: stream.into(),
                text: c.text.clone(),
                truncated: c.truncated,
            });
        }
    }
    let (ok, detail) = match &run.end {
        End::Exited(0) => (true, "exit status 0".to_string()),
        End::Exited(c) => (false, format!("exit status {c}")),
        End::Signalled => (false, "killed by a signal".to_string()),
        End::TimedOut => (
            false,
            format!("still running after {:.1}s; killed", limit.as_secs_f64()),
        ),
        End::NotStarted(e) => (false, format!("could not be started: {e}")),
    };
    // A failure names what the hook said last on stderr, for the one-line
    // result a person reads (the whole capture is in the timeline).
    let detail = match run.stderr.text.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(last) if !ok => {
            let last: String = last.trim().chars().take(200).collect();
            format!("{detail}; stderr: {last}")
        }
        _ => detail,
    };
    emit(Event::HookFinished {
        ok,
        detail: detail.clone(),
    });
    HookReport {
        ok,
        exit_code: match run.end {
            End::Exited(c) => Some(c),
            _ => None,
        },
        timed_out: run.end == End::TimedOut,
        elapsed_ms: run.elapsed.as_millis() as u64,
        detail,
        powered_on_anyway: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_shell_command_is_a_failure_not_a_panic() {
        let mut seen = Vec::new();
        let ctx = HookContext {
            node: "n".into(),
            action: "off".into(),
            method: "ipmi".into(),
            level: 1,
            endpoint: "ipmi://h:623".into(),
            effect: crate::platform::Effect::Power,
            address: None,
            outcome: "reached".into(),
            evidence: "e".into(),
            lock: Default::default(),
        };
        let rep = run_hook(
            "exec /nonexistent/hook",
            &ctx,
            Duration::from_secs(10),
            &[],
            &mut |e| seen.push(e),
        )
        .await;
        assert!(!rep.ok);
        assert_eq!(rep.exit_code, Some(127));
        assert!(matches!(seen.first(), Some(Event::HookStarted { .. })));
        assert!(matches!(
            seen.last(),
            Some(Event::HookFinished { ok: false, .. })
        ));
    }
}
