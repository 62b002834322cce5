//! `check`: whether each fencing level *would* work — reachable,
//! authenticated, privileged enough, the pinned machine, a state that reads,
//! a safe reset type — without touching power; and the cross-level and
//! cross-node identity flags.

use super::facts::Facts;
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind};
use crate::engine::identity::{Difference, ExpectedIdentity, Identity, Refusal, Unreported};
use crate::engine::power::PowerState;
use crate::fleet::plan::NodePlan;
use crate::method::spec::MethodSpec;
use crate::platform::facts::{FactRules, Refusal as PlatformRefusal, Section};
use serde::Serialize;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// One level's fenceability.
#[derive(Clone, Debug, Serialize)]
pub struct CheckRow {
    /// The node.
    pub node: String,
    /// Level (1-based).
    pub level: usize,
    /// Driver.
    pub method: String,
    /// Endpoint.
    pub endpoint: String,
    /// Whether fencing through this level would work.
    pub ok: bool,
    /// The power state read, if any.
    pub state: Option<PowerState>,
    /// What was negotiated (cipher suite, privilege, TLS identity, reset types).
    pub detail: Option<String>,
    /// Why it would not work.
    pub error: Option<String>,
    /// What the device reports about the machine (absent when it could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// The identity this level is pinned to (absent when none).
    #[serde(skip_serializing_if = "ExpectedIdentity::is_empty")]
    pub expect: ExpectedIdentity,
    /// The named workarounds the device needed (asked for, or applied by
    /// fencekit itself), for the inventory's `workarounds = [...]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workarounds: Vec<&'static str>,
    /// What was negotiated and offered, by platform (a baseline records it).
    #[serde(skip_serializing_if = "Facts::is_empty")]
    pub facts: Facts,
    /// The kind of the failure of a step (absent when none failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// How long checking this level took.
    pub elapsed_ms: u64,
}

/// Why fencing through one level would not work (`fencekit check`); the
/// row keeps its text.
#[derive(Debug, thiserror::Error)]
enum CheckProblem {
    /// A step failed: building the driver, connecting, reading the state or
    /// the reset types.
    #[error(transparent)]
    Step(#[from] DriverError),
    /// The device reports another machine than the level is pinned to.
    #[error("a different machine than pinned: {0}")]
    Mismatch(Difference),
    /// The device does not report a part the pin names.
    #[error("the pinned identity cannot be confirmed: {0}")]
    Unreported(Unreported),
    /// The identity could not be read from a pinned level.
    #[error("the pinned identity cannot be confirmed: {0}")]
    IdentityUnread(DriverError),
    /// The platform's own check refused the level (no safe reset type, a
    /// session below operator).
    #[error(transparent)]
    Platform(PlatformRefusal),
}

impl CheckProblem {
    /// The kind of failure, for drift names.
    fn kind(&self) -> ErrorKind {
        match self {
            CheckProblem::Step(e) | CheckProblem::IdentityUnread(e) => e.kind,
            CheckProblem::Mismatch(_) => ErrorKind::IdentityMismatch,
            CheckProblem::Unreported(_) => ErrorKind::IdentityUnavailable,
            CheckProblem::Platform(r) => r.kind(),
        }
    }
}

impl From<Refusal> for CheckProblem {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Different(why) => CheckProblem::Mismatch(why),
            Refusal::Unreported(why) => CheckProblem::Unreported(why),
        }
    }
}

/// The pinned identity against what the device reported (`Ok` also when
/// nothing is pinned).
fn pin_holds(expect: &ExpectedIdentity, found: &Identity) -> Result<(), CheckProblem> {
    expect.check(found)?;
    Ok(())
}

/// Checks one level: reachable, authenticates, privilege, the machine's
/// identity (read and reported; compared with the pin, if any), status
/// readable, and what the platform checks itself (its
/// [`FactRules::check`]: a safe reset type, enough privilege). Changes no
/// power state.
pub async fn check_level(node: &str, level: usize, m: &MethodSpec, step: Duration) -> CheckRow {
    let mut row = CheckRow {
        node: node.to_string(),
        level,
        method: m.driver_name().into(),
        endpoint: m.endpoint(),
        ok: false,
        state: None,
        detail: None,
        error: None,
        identity: None,
        expect: m.expected().clone(),
        workarounds: Vec::new(),
        facts: Facts::default(),
        error_kind: None,
        elapsed_ms: 0,
    };
    let started = Instant::now();
    if let MethodSpec::Manual { .. } = m {
        row.ok = true;
        row.detail = Some(format!(
            "a person fences by hand and confirms with: fencekit ack {node}"
        ));
        return row;
    }
    let mut driver = match m.build(None).await {
        Ok(d) => d,
        Err(e) => {
            row.error = Some(e.to_string());
            row.error_kind = Some(e.kind);
            return row;
        }
    };
    let deadline = Some(Instant::now() + step);
    let rules: Option<&dyn FactRules> = m.device().and_then(|d| d.platform().facts());
    let mut section = Section::default();
    let result: Result<(), CheckProblem> = async {
        let detail = driver.connect(deadline).await?;
        row.detail = Some(detail);
        match driver.identity(deadline).await {
            Ok(found) => {
                let pinned = pin_holds(&row.expect, &found);
                row.identity = Some(found);
                pinned?;
            }
            Err(e) if row.expect.is_empty() => {
                tracing::debug!(node, level, error = %e, "identity not readable");
            }
            Err(e) => return Err(CheckProblem::IdentityUnread(e)),
        }
        row.state = Some(driver.status(deadline).await?);
        // Write access cannot be tested without switching: it is left to
        // the first action.
        if let Some(rules) = rules {
            let detail = row.detail.clone().unwrap_or_default();
            rules
                .check(driver.inner_mut(), &detail, &mut section, deadline)
                .await
                .map_err(CheckProblem::Platform)?;
        }
        Ok(())
    }
    .await;
    if let Some(rules) = rules {
        row.workarounds = rules.workarounds(driver.inner());
    }
    if !row.workarounds.is_empty() {
        let list: Vec<String> = row.workarounds.iter().map(|w| format!("{w:?}")).collect();
        row.detail = Some(format!(
            "{}; needed workarounds = [{}]",
            row.detail.as_deref().unwrap_or("no session"),
            list.join(", ")
        ));
    }
    if let (Some(rules), Some(method)) = (rules, m.device()) {
        // Also after a failed step: the certificate or host key offered,
        // the cipher suite that worked.
        rules
            .note(driver.inner_mut(), method, &mut section, deadline)
            .await;
        if rules.keep_empty() || section != Section::default() {
            row.facts.insert(method.platform().name(), section);
        }
    }
    driver.close().await;
    match result {
        Ok(()) => row.ok = true,
        Err(e) => {
            row.error_kind = Some(e.kind());
            row.error = Some(e.to_string());
        }
    }
    row.elapsed_ms = started.elapsed().as_millis() as u64;
    row
}

/// Marks the levels of one node that report different machines (under
/// every UUID encoding): at least one of them controls the wrong machine.
pub fn flag_disagreements(rows: &mut [CheckRow]) {
    let found: Vec<crate::fleet::identity::LevelIdentity<'_>> = rows
        .iter()
        .map(|r| crate::fleet::identity::LevelIdentity {
            level: r.level,
            endpoint: &r.endpoint,
            found: r.identity.as_ref(),
        })
        .collect();
    let bad = crate::fleet::identity::disagreements(&found);
    for (a, b, why) in bad {
        for r in rows.iter_mut().filter(|r| r.level == a || r.level == b) {
            r.ok = false;
            r.error = Some(match r.error.take() {
                Some(e) if !e.contains(&why) => format!("{e}; {why}"),
                Some(e) => e,
                None => why.clone(),
            });
        }
    }
}

/// Checks every level of one node, one after the other, and marks the
/// levels that report different machines.
pub async fn check_node(p: &NodePlan, step: Duration) -> Vec<CheckRow> {
    let mut rows = Vec::with_capacity(p.levels.len());
    for (i, m) in p.levels.iter().enumerate() {
        rows.push(check_level(&p.name, i + 1, m, step).await);
    }
    flag_disagreements(&mut rows);
    rows
}

/// Checks every level of every node, at most `parallel` nodes at once.
pub async fn check_all(plans: &[NodePlan], step: Duration, parallel: usize) -> Vec<CheckRow> {
    let local = tokio::task::LocalSet::new();
    let plans = plans.to_vec();
    local
        .run_until(async move {
            let sem = Rc::new(Semaphore::new(parallel.max(1)));
            let handles: Vec<_> = plans
                .into_iter()
                .map(|p| {
                    let sem = sem.clone();
                    let key = p.clone();
                    let task = tokio::task::spawn_local(async move {
                        let _permit = sem.acquire().await;
                        check_node(&p, step).await
                    });
                    (key, task)
                })
                .collect();
            // A node whose task panicked keeps a failed row per level.
            let mut out: Vec<CheckRow> = crate::fleet::tasks::join_in_order(handles, lost_rows)
                .await
                .into_iter()
                .flatten()
                .collect();
            flag_shared_machines(&mut out);
            out
        })
        .await
}

/// The rows of a node whose check did not finish: one failed row per level
/// (one for the node when it has none), with the reason.
fn lost_rows(p: NodePlan, why: String) -> Vec<CheckRow> {
    let row = |level: usize, m: Option<&MethodSpec>| CheckRow {
        node: p.name.clone(),
        level,
        method: m.map_or("-", |m| m.driver_name()).into(),
        endpoint: m.map(|m| m.endpoint()).unwrap_or_default(),
        ok: false,
        state: None,
        detail: None,
        error: Some(format!("the check did not finish: {why}")),
        identity: None,
        expect: m.map(|m| m.expected().clone()).unwrap_or_default(),
        facts: Default::default(),
        error_kind: Some(crate::engine::error::ErrorKind::Internal),
        elapsed_ms: 0,
        workarounds: Vec::new(),
    };
    if p.levels.is_empty() {
        return vec![row(0, None)];
    }
    p.levels
        .iter()
        .enumerate()
        .map(|(i, m)| row(i + 1, Some(m)))
        .collect()
}

/// Marks the levels of different nodes that report one machine.
pub fn flag_shared_machines(rows: &mut [CheckRow]) {
    let view: Vec<(&str, usize, &str, Option<&Identity>)> = rows
        .iter()
        .map(|r| {
            (
                r.node.as_str(),
                r.level,
                r.endpoint.as_str(),
                r.identity.as_ref(),
            )
        })
        .collect();
    let shared = crate::fleet::identity::same_machine_elsewhere(&view);
    for (a, b, why) in shared {
        for i in [a, b] {
            let r = &mut rows[i];
            r.ok = false;
            r.error = Some(match r.error.take() {
                Some(e) => format!("{e}; {why}"),
                None => why.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::error::ErrorKind;

    #[test]
    fn a_level_that_would_not_fence_says_why_by_variant() {
        let uuid = "4c4c4544-0033-4b10-8030-c8c04f4d4e32";
        let pin = ExpectedIdentity::new(Some(uuid), None).unwrap();
        let other = Identity {
            names: Vec::new(),
            uuid: vec![crate::engine::identity::UuidForm {
                uuid: "00000000-0000-0000-0000-000000000001".into(),
                encoding: "as reported",
            }],
            serial: None,
        };
        let e = pin_holds(&pin, &other).unwrap_err();
        assert!(matches!(e, CheckProblem::Mismatch(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "a different machine than pinned: expected uuid {uuid}, found \
                 00000000-0000-0000-0000-000000000001 (as reported)"
            )
        );
        let e = pin_holds(&pin, &Identity::default()).unwrap_err();
        assert!(matches!(e, CheckProblem::Unreported(_)), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("the pinned identity cannot be confirmed: expected uuid"),
            "{e}"
        );
        assert!(pin_holds(&ExpectedIdentity::default(), &other).is_ok());

        let step = DriverError::new(
            ErrorKind::Unreachable,
            crate::engine::error::Stage::Authenticate,
            "no answer",
        );
        let e = CheckProblem::from(step.clone());
        assert_eq!(e.to_string(), step.to_string(), "a step's own text");
        let e = CheckProblem::IdentityUnread(step.clone());
        assert_eq!(
            e.to_string(),
            format!("the pinned identity cannot be confirmed: {step}")
        );
    }
}
