//! Rejoin checks (`verify --expect on` with `[[node.check]]`): each check's
//! command runs on the node itself (its session method, through
//! [`Platform::node_session`]) and its output's SHA-256 is
//! compared with a recorded baseline, so drift is found before the node
//! rejoins.

use super::decide::{Evidence, Witness};
use crate::engine::driver::PowerDriver;
use crate::engine::error::DriverError;
use crate::fleet::inventory::NODE_SESSION;
use crate::fleet::plan::NodePlan;
use crate::method::driver::AnyDriver;
use crate::method::spec::MethodSpec;
use crate::platform::Platform;
use serde::Serialize;
use std::time::{Duration, Instant};

/// Recorded rejoin-check digests: node → check name → `sha256:HEX`.
pub type Baseline = std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

/// One rejoin configuration check's result.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CheckOutcome {
    /// The check's name.
    pub name: String,
    /// `sha256:HEX` of its standard output (absent if it could not run).
    pub digest: Option<String>,
    /// Its exit status.
    pub exit_status: Option<i32>,
    /// The recorded digest it was compared with.
    pub baseline: Option<String>,
    /// True when it differs from the baseline.
    pub drift: bool,
    /// Why it could not run.
    pub error: Option<String>,
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(data);
    let mut s = String::from("sha256:");
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Why a node's rejoin checks cannot run at all.
#[derive(Debug, thiserror::Error)]
enum NoCheckSession {
    /// The node has no way to reach itself.
    #[error("no {NODE_SESSION} to reach the node")]
    NoSession,
    /// Its method cannot run commands on the node.
    #[error("{NODE_SESSION} cannot run commands on the node")]
    NotASession,
    /// Its driver cannot be built (credential, configuration).
    #[error(transparent)]
    Build(DriverError),
}

/// The built driver of a node's session method and its platform (which
/// runs the commands on it), for its rejoin checks.
struct Session {
    driver: AnyDriver,
    platform: &'static dyn Platform,
}

/// The session of a node's own method (`[node.ssh]`), for its rejoin checks.
async fn check_session(m: Option<&MethodSpec>) -> Result<Session, NoCheckSession> {
    let m = m.ok_or(NoCheckSession::NoSession)?;
    let mut driver = m.build(None).await.map_err(NoCheckSession::Build)?;
    let platform = m.device().ok_or(NoCheckSession::NotASession)?.platform();
    if platform.node_session(driver.inner_mut()).is_none() {
        return Err(NoCheckSession::NotASession);
    }
    Ok(Session { driver, platform })
}

/// Runs the node's rejoin checks on the node itself and compares their
/// digests.
pub(super) async fn run_checks(
    plan: &NodePlan,
    baseline: Option<&Baseline>,
    step: Duration,
    t0: Instant,
    evidence: &mut Vec<Evidence>,
) -> Vec<CheckOutcome> {
    let recorded = baseline.and_then(|b| b.get(&plan.name));
    let source = plan
        .node_ssh
        .as_ref()
        .map(|m| m.endpoint())
        .unwrap_or_default();
    let fail_all = |why: NoCheckSession| {
        plan.checks
            .iter()
            .map(|c| CheckOutcome {
                name: c.name.clone(),
                digest: None,
                exit_status: None,
                baseline: None,
                drift: false,
                error: Some(why.to_string()),
            })
            .collect::<Vec<_>>()
    };
    let Session {
        mut driver,
        platform,
    } = match check_session(plan.node_ssh.as_deref()).await {
        Ok(s) => s,
        Err(why) => return fail_all(why),
    };
    let Some(session) = platform.node_session(driver.inner_mut()) else {
        driver.close().await;
        return fail_all(NoCheckSession::NotASession);
    };
    let mut out = Vec::new();
    for c in &plan.checks {
        let deadline = Some(Instant::now() + step);
        let r = session.exec(&c.command, deadline).await;
        let at_ms = t0.elapsed().as_millis() as u64;
        let outcome = match r {
            Ok(o) => {
                let digest = sha256_hex(o.stdout.as_bytes());
                let base = recorded.and_then(|b| b.get(&c.name)).cloned();
                let drift = base.as_ref().is_some_and(|b| *b != digest);
                evidence.push(Evidence::new(
                    Witness::HostCheck {
                        via: source.clone(),
                        check: c.name.clone(),
                    },
                    match (&base, drift) {
                        (None, _) => format!(
                            "{digest} (exit {}); no baseline to compare",
                            o.status.unwrap_or(-1)
                        ),
                        (Some(_), false) => format!("{digest} matches the baseline"),
                        (Some(b), true) => format!("{digest} differs from the baseline {b}"),
                    },
                    at_ms,
                    base.as_ref().map(|_| !drift),
                ));
                CheckOutcome {
                    name: c.name.clone(),
                    digest: Some(digest),
                    exit_status: o.status,
                    baseline: base,
                    drift,
                    error: None,
                }
            }
            Err(e) => {
                evidence.push(Evidence::new(
                    Witness::HostCheck {
                        via: source.clone(),
                        check: c.name.clone(),
                    },
                    format!("could not run: {e}"),
                    at_ms,
                    None,
                ));
                CheckOutcome {
                    name: c.name.clone(),
                    digest: None,
                    exit_status: None,
                    baseline: None,
                    drift: false,
                    error: Some(e.to_string()),
                }
            }
        };
        out.push(outcome);
    }
    driver.close().await;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::error::ErrorKind;

    #[tokio::test]
    async fn checks_without_a_node_session_say_why_by_variant() {
        let e = check_session(None).await.err().unwrap();
        assert!(matches!(e, NoCheckSession::NoSession), "{e:?}");
        assert_eq!(e.to_string(), "no [node.ssh] to reach the node");
        let manual = MethodSpec::Manual {
            node: "n1".into(),
            instructions: "pull the plug".into(),
        };
        let e = check_session(Some(&manual)).await.err().unwrap();
        assert!(
            matches!(&e, NoCheckSession::Build(d) if d.kind == ErrorKind::Unsupported),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "a manual method has no device to talk to (during status read)"
        );
        let ipmi = crate::method::build::from_url(
            "ipmi://admin@127.0.0.1",
            &crate::method::build::MethodOptions {
                credential: crate::method::credential::CredentialRef::Inline(
                    crate::secret::Secret::from_str_value("secret"),
                ),
                ..Default::default()
            },
        )
        .unwrap();
        let e = check_session(Some(&ipmi)).await.err().unwrap();
        assert!(matches!(e, NoCheckSession::NotASession), "{e:?}");
        assert_eq!(e.to_string(), "[node.ssh] cannot run commands on the node");
    }
}
