//! `check`: whether each fencing level *would* work — reachable,
//! authenticated, privileged enough, the pinned machine, a state that reads,
//! a safe reset type — without touching power; and the cross-level and
//! cross-node identity flags.

use super::facts::{Facts, IpmiFacts, RedfishFacts, SnmpFacts, SshFacts};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind};
use crate::engine::identity::{Difference, ExpectedIdentity, Identity, Refusal, Unreported};
use crate::engine::power::PowerState;
use crate::fleet::plan::NodePlan;
use crate::ipmi::config::Privilege;
use crate::ipmi::driver::IpmiDriver;
use crate::method::spec::MethodSpec;
use crate::redfish::driver::{RedfishDriver, ResetPlan};
use crate::redfish::model::NoSafeReset;
use crate::redfish::platform::RedfishMethod;
use crate::snmp::driver::SnmpDriver;
use crate::ssh::driver::SshDriver;
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
    /// IPMI: the named workarounds this BMC needed (asked for, or applied
    /// by fencekit itself), for the inventory's `workarounds = [...]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workarounds: Vec<&'static str>,
    /// What was negotiated and offered, by driver (a baseline records it).
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
    /// Redfish: no reset type that is safe for power off or on.
    #[error("no safe reset type for power {}: {0}", .0.command)]
    NoSafeReset(NoSafeReset),
    /// IPMI: a session below operator (what was negotiated).
    #[error(
        "the session privilege is too low for power control ({0}); \
         chassis control needs operator or administrator"
    )]
    LowPrivilege(String),
}

impl CheckProblem {
    /// The kind of failure, for drift names.
    fn kind(&self) -> ErrorKind {
        match self {
            CheckProblem::Step(e) | CheckProblem::IdentityUnread(e) => e.kind,
            CheckProblem::Mismatch(_) => ErrorKind::IdentityMismatch,
            CheckProblem::Unreported(_) => ErrorKind::IdentityUnavailable,
            CheckProblem::NoSafeReset(_) => ErrorKind::Unsupported,
            CheckProblem::LowPrivilege(_) => ErrorKind::PrivilegeNotObtained,
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

/// Every power off and on has a safe reset type.
fn resets_are_safe(plan: &ResetPlan) -> Result<(), CheckProblem> {
    use crate::engine::power::PowerCommand;
    for (cmd, choice) in &plan.choices {
        if let (PowerCommand::Off | PowerCommand::On, Err(why)) = (cmd, choice) {
            return Err(CheckProblem::NoSafeReset(why.clone()));
        }
    }
    Ok(())
}

/// An IPMI session of privilege `granted` may control chassis power;
/// `detail` (what `connect` said) goes into the refusal.
fn privilege_suffices(granted: Privilege, detail: &str) -> Result<(), CheckProblem> {
    if granted >= Privilege::Operator {
        Ok(())
    } else {
        Err(CheckProblem::LowPrivilege(detail.to_string()))
    }
}

/// Checks one level: reachable, authenticates, privilege, the machine's
/// identity (read and reported; compared with the pin, if any), status
/// readable, and (Redfish) a safe reset type for off and on. Changes no
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
        // SSH: nothing more. SNMP: connect() resolved every outlet (names
        // through the PDU's names table) and status() read each one; write
        // access cannot be tested without switching, so it is left to the
        // first action. AWS (issue 25): connect() read the instance with the
        // keys; whether they may stop it shows only at the first stop.
        let any = driver.inner_mut().as_any_mut();
        if let Some(d) = any.downcast_mut::<RedfishDriver>() {
            let plan = d.reset_plan(deadline).await?;
            note_resets(&mut row.facts, &plan);
            resets_are_safe(&plan)?;
        } else if let Some(d) = any.downcast_mut::<IpmiDriver>() {
            privilege_suffices(d.privilege(), row.detail.as_deref().unwrap_or(""))?;
        }
        Ok(())
    }
    .await;
    if let Some(d) = driver.inner().as_any().downcast_ref::<IpmiDriver>() {
        row.workarounds = d
            .workarounds_needed()
            .iter()
            .map(crate::ipmi::workaround::Workaround::name)
            .collect();
        if !row.workarounds.is_empty() {
            let list: Vec<String> = row.workarounds.iter().map(|w| format!("{w:?}")).collect();
            row.detail = Some(format!(
                "{}; needed workarounds = [{}]",
                row.detail.as_deref().unwrap_or("no session"),
                list.join(", ")
            ));
        }
    }
    note_facts(&mut row.facts, &mut driver, m, deadline).await;
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

/// The reset types on offer and the ones off and on would use.
fn note_resets(facts: &mut Facts, plan: &ResetPlan) {
    use crate::engine::power::PowerCommand;
    let chosen = |c: PowerCommand| {
        plan.choices
            .iter()
            .find(|(cmd, _)| *cmd == c)
            .and_then(|(_, r)| r.as_ref().ok().cloned())
    };
    let f = facts.redfish.get_or_insert_with(RedfishFacts::default);
    f.reset_types = plan.offered.clone();
    f.reset_off = chosen(PowerCommand::Off);
    f.reset_on = chosen(PowerCommand::On);
}

/// What the driver saw beyond the checks (also after a failed step: the
/// certificate or host key offered, the cipher suite that worked).
async fn note_facts(
    facts: &mut Facts,
    driver: &mut crate::method::driver::AnyDriver,
    m: &MethodSpec,
    deadline: Option<Instant>,
) {
    let any = driver.inner_mut().as_any_mut();
    if let Some(d) = any.downcast_mut::<IpmiDriver>() {
        let suite = d.cipher_suite();
        // The privilege means something only once a session was set up.
        let privilege = suite.is_some().then(|| d.privilege().as_str().to_string());
        if suite.is_some() || privilege.is_some() {
            facts.ipmi = Some(IpmiFacts {
                cipher_suite: suite,
                privilege,
            });
        }
    } else if let Some(d) = any.downcast_mut::<RedfishDriver>() {
        let session = m
            .device()
            .and_then(|m| m.as_any().downcast_ref::<RedfishMethod>())
            .is_some_and(|m| m.config.session_auth);
        let f = facts.redfish.get_or_insert_with(RedfishFacts::default);
        f.certificate = d
            .certificate()
            .map(|fp| crate::fingerprint::format_hex(&fp));
        if d.system_uri().is_some() {
            f.auth = Some(if session { "session" } else { "basic" }.to_string());
        }
    } else if let Some(d) = any.downcast_mut::<SshDriver>() {
        if let Some(k) = d.host_key() {
            facts.ssh = Some(SshFacts {
                host_key: Some(k.to_string()),
            });
        }
    } else if let Some(d) = any.downcast_mut::<SnmpDriver>() {
        if let Ok(names) = d.outlet_names(deadline).await {
            let outlets = names
                .into_iter()
                .filter_map(|(o, n)| Some((o, n?)))
                .collect();
            facts.snmp = Some(SnmpFacts { outlets });
        }
    }
    // AWS: the instance ID is the device itself; its names are the
    // identity (compared by the pin), nothing else is negotiated.
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

        use crate::engine::power::PowerCommand;
        let refused = NoSafeReset {
            command: PowerCommand::Off,
            offered: vec!["On".into()],
        };
        let plan = ResetPlan {
            offered: Some(vec!["On".into()]),
            choices: vec![
                (PowerCommand::On, Ok("On".into())),
                (PowerCommand::Off, Err(refused.clone())),
            ],
        };
        let e = resets_are_safe(&plan).unwrap_err();
        assert!(
            matches!(&e, CheckProblem::NoSafeReset(r) if *r == refused),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!("no safe reset type for power off: {refused}")
        );

        assert!(
            privilege_suffices(Privilege::Operator, "cipher suite 17, privilege operator").is_ok()
        );
        let e = privilege_suffices(Privilege::User, "cipher suite 17, privilege user").unwrap_err();
        assert!(
            matches!(&e, CheckProblem::LowPrivilege(d) if d.ends_with("user")),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "the session privilege is too low for power control (cipher suite 17, \
             privilege user); chassis control needs operator or administrator"
        );

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
