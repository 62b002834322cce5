//! What an agent prints for a result: upstream's lines and exit codes,
//! plus fencekit's precise cause.

use crate::engine::error::{ErrorKind, Stage};
use crate::engine::power::{Action, PowerCommand, PowerState, RebootMethod};
use crate::engine::run::{Failure, Outcome};

/// Success (for `status`: the machine is on).
pub const EXIT_OK: i32 = 0;
/// Any failure, including usage errors (upstream never exits 3–12).
pub const EXIT_FAILED: i32 = 1;
/// `status` only: the machine is off.
pub const EXIT_STATUS_OFF: i32 = 2;

/// What to print for a result: an optional stdout line, log lines, exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The one result line on stdout, if any.
    pub stdout: Option<String>,
    /// Lines for stderr: (is_error, message); warnings otherwise.
    pub log: Vec<(bool, String)>,
    /// Exit code.
    pub code: i32,
}

/// A family's own first lines for a refusal (its `agents/*.toml`:
/// upstream's wording for that family); `None`: the default line, that of
/// any failed status read (upstream fence_ipmilan's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals<'a> {
    /// The device refused the user or its secret (`login_refused`).
    pub login: Option<&'a str>,
    /// The device accepted the credentials but refused the action to them
    /// (`privilege_refused`).
    pub privilege: Option<&'a str>,
    /// Any other failure the device reported (`device_failed`): not a
    /// timeout, an interruption or an identity refusal.
    pub device: Option<&'a str>,
}

impl<'a> Refusals<'a> {
    /// The first line for a failure of `kind`: the family's own for a
    /// refusal it declares one for, else `otherwise`. The device refused
    /// the user or its secret (a wrong password, key, token or v3 user), or
    /// the action to an accepted user (403, NoPermission), whatever the
    /// action was.
    pub fn line<'b>(&self, kind: ErrorKind, otherwise: &'b str) -> &'b str
    where
        'a: 'b,
    {
        match kind {
            ErrorKind::PasswordInvalid | ErrorKind::UsernameInvalid => {
                self.login.unwrap_or(otherwise)
            }
            ErrorKind::PrivilegeNotObtained => self.privilege.or(self.device).unwrap_or(otherwise),
            ErrorKind::Timeout
            | ErrorKind::TransitionTimeout
            | ErrorKind::Interrupted
            | ErrorKind::IdentityMismatch
            | ErrorKind::IdentityUnavailable
            | ErrorKind::SelfFence => otherwise,
            _ => self.device.unwrap_or(otherwise),
        }
    }
}

impl Refusals<'static> {
    /// The lines `family` declares.
    pub fn of(family: &crate::agent::defs::Family) -> Refusals<'static> {
        Refusals {
            login: family.login_refused,
            privilege: family.privilege_refused,
            device: family.device_failed,
        }
    }
}

/// Maps an engine result to upstream's output (plus fencekit's precise cause).
pub fn report(
    action: Action,
    method: RebootMethod,
    refusals: Refusals<'_>,
    result: &Result<Outcome, Failure>,
) -> Report {
    let ok = |line: &str, code| Report {
        stdout: Some(line.to_string()),
        log: vec![],
        code,
    };
    match result {
        Ok(Outcome::Status {
            state: PowerState::On,
        }) => ok("Status: ON", EXIT_OK),
        Ok(Outcome::Status {
            state: PowerState::Off,
        }) => ok("Status: OFF", EXIT_STATUS_OFF),
        // Upstream fence_redfish maps every PowerState but "Off" to "on", so
        // PoweringOn and PoweringOff print `Status: ON` (exit 0). Kept: it is
        // safe, since it never says OFF before the node is off (Pacemaker
        // and FAR read OFF as fenced). The engine itself never takes a
        // transition for a state (README, differences from upstream).
        Ok(Outcome::InTransition { .. }) => ok("Status: ON", EXIT_OK),
        Ok(Outcome::Already {
            state: PowerState::On,
        }) => ok("Success: Already ON", EXIT_OK),
        Ok(Outcome::Already {
            state: PowerState::Off,
        }) => ok("Success: Already OFF", EXIT_OK),
        Ok(Outcome::Reached {
            state: PowerState::On,
        }) => ok("Success: Powered ON", EXIT_OK),
        Ok(Outcome::Reached {
            state: PowerState::Off,
        }) => ok("Success: Powered OFF", EXIT_OK),
        Ok(Outcome::Rebooted | Outcome::Cycled | Outcome::CycleSent | Outcome::DiagSent) => {
            ok("Success: Rebooted", EXIT_OK)
        }
        // Sent, no answer, and nothing shows whether it was carried out:
        // never sent again, and never a success (Pacemaker retries with
        // its own judgement; fencekit did not act twice).
        Ok(Outcome::OutcomeUnknown { command, reason }) => Report {
            stdout: None,
            log: vec![
                (
                    true,
                    match command {
                        PowerCommand::Off => "Failed: Timed out waiting to power OFF",
                        PowerCommand::On => "Failed: Timed out waiting to power ON",
                        _ => "Connection timed out",
                    }
                    .to_string(),
                ),
                (
                    true,
                    format!(
                        "cause: sent, outcome unknown: power {command} got no answer ({reason}); \
                         it was not sent again"
                    ),
                ),
            ],
            code: EXIT_FAILED,
        },
        Ok(Outcome::FencedNotRestored { error }) => Report {
            stdout: Some("Success: Rebooted".to_string()),
            log: vec![
                (true, "Timed out waiting to power ON".to_string()),
                (
                    false,
                    format!("the node was powered off (fenced) but did not come back on: {error}"),
                ),
            ],
            code: EXIT_OK,
        },
        Ok(Outcome::Monitored) => Report {
            stdout: None,
            log: vec![],
            code: EXIT_OK,
        },
        // No agent definition reaches these (no host profile, no manual
        // method); were one to, nothing observed the node off: a failure.
        Ok(o @ (Outcome::OffSent | Outcome::Acknowledged { .. })) => Report {
            stdout: None,
            log: vec![
                (true, "Failed: Timed out waiting to power OFF".to_string()),
                (
                    true,
                    format!("cause: nothing observed the node off ({o:?})"),
                ),
            ],
            code: EXIT_FAILED,
        },
        Err(f) => {
            let e = &f.error;
            let first = match e.kind {
                ErrorKind::Interrupted => "Failed: Interrupted by a signal; the session was closed",
                // Only with fencekit's --expect-uuid (fence_aws's name pins: `name_pin_line`).
                ErrorKind::IdentityMismatch => {
                    "Failed: The device controls a different machine than --expect-uuid names; nothing was powered"
                }
                ErrorKind::IdentityUnavailable => {
                    "Failed: The device cannot report the machine's identity that --expect-uuid asks for; nothing was powered"
                }
                // fence_aws: the instance the agent runs on.
                ErrorKind::SelfFence => {
                    "Failed: Refusing to stop the instance this agent runs on (self-fencing); nothing was changed"
                }
                // Only ICMP port unreachable came back (IPMI): say so first.
                ErrorKind::Timeout if e.port_unreachable => {
                    "Connection refused: the port is unreachable (ICMP port unreachable)"
                }
                ErrorKind::Timeout => "Connection timed out",
                // What was awaited follows from the action: `on`, and a
                // cycle's wait for the node to come back, wait for ON; an
                // on/off reboot whose power-on fails is Ok(FencedNotRestored),
                // so its transition errors come from waiting for OFF.
                ErrorKind::TransitionTimeout
                    if action == Action::On
                        || (action == Action::Reboot && method == RebootMethod::Cycle) =>
                {
                    "Failed: Timed out waiting to power ON"
                }
                ErrorKind::TransitionTimeout => "Failed: Timed out waiting to power OFF",
                _ if matches!(action, Action::Diag)
                    || (action == Action::Reboot && method == RebootMethod::Cycle) =>
                {
                    if matches!(e.stage, Stage::Command | Stage::Wait) {
                        "Connection timed out"
                    } else {
                        "Failed: Unable to obtain correct plug status or plug is not available"
                    }
                }
                _ if matches!(e.stage, Stage::Command | Stage::Wait) => match action {
                    Action::On => "Failed: Timed out waiting to power ON",
                    _ => "Failed: Timed out waiting to power OFF",
                },
                _ => "Failed: Unable to obtain correct plug status or plug is not available",
            };
            let first = refusals.line(e.kind, first);
            let mut cause = format!("cause: {e}");
            if let (ErrorKind::Interrupted, Some(s)) = (e.kind, f.last_state) {
                cause.push_str(&format!("; last state read: {s}"));
            }
            Report {
                stdout: None,
                log: vec![(true, first.to_string()), (true, cause)],
                code: EXIT_FAILED,
            }
        }
    }
}

/// The first line for a refusal by fence_aws's name pins (`--expect-node-name`,
/// `--expect-tag`), which [`report`] words for `--expect-uuid`.
pub(super) fn name_pin_line(kind: ErrorKind) -> Option<&'static str> {
    match kind {
        ErrorKind::IdentityMismatch => Some(
            "Failed: The instance is a different machine than --expect-node-name/--expect-tag \
             names; nothing was changed",
        ),
        ErrorKind::IdentityUnavailable => Some(
            "Failed: The instance does not report what --expect-node-name/--expect-tag asks \
             for; nothing was changed",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::error::DriverError;

    #[test]
    fn report_maps_every_error_kind_to_upstream_lines() {
        let fail = |kind, stage, msg: &str| {
            Err(Failure {
                error: DriverError::new(kind, stage, msg),
                last_state: Some(PowerState::On),
            })
        };
        let first = |a, m, r: &Result<Outcome, Failure>| {
            report(a, m, Refusals::default(), r).log[0].1.clone()
        };
        let on = RebootMethod::OnOff;
        assert_eq!(
            first(
                Action::Status,
                on,
                &fail(ErrorKind::PasswordInvalid, Stage::Authenticate, "x")
            ),
            "Failed: Unable to obtain correct plug status or plug is not available"
        );
        assert_eq!(
            first(
                Action::Off,
                on,
                &fail(ErrorKind::Timeout, Stage::Status, "x")
            ),
            "Connection timed out"
        );
        // The port's refusal is told by its flag, whatever the text says.
        let refused = |refused: bool, msg: &str| {
            Err(Failure {
                error: DriverError::new(ErrorKind::Timeout, Stage::Authenticate, msg)
                    .with_port_unreachable(refused),
                last_state: None,
            })
        };
        assert_eq!(
            first(Action::Status, on, &refused(true, "x")),
            "Connection refused: the port is unreachable (ICMP port unreachable)"
        );
        assert_eq!(
            first(
                Action::Status,
                on,
                &refused(false, "a message naming (ICMP port unreachable)")
            ),
            "Connection timed out"
        );
        assert_eq!(
            first(
                Action::Off,
                on,
                &fail(ErrorKind::DeviceError, Stage::Command, "x")
            ),
            "Failed: Timed out waiting to power OFF"
        );
        assert_eq!(
            first(
                Action::On,
                on,
                &fail(ErrorKind::DeviceError, Stage::Wait, "x")
            ),
            "Failed: Timed out waiting to power ON"
        );
        assert_eq!(
            first(
                Action::Reboot,
                RebootMethod::Cycle,
                &fail(ErrorKind::DeviceError, Stage::Command, "x")
            ),
            "Connection timed out"
        );
        assert_eq!(
            first(
                Action::Reboot,
                RebootMethod::Cycle,
                &fail(
                    ErrorKind::TransitionTimeout,
                    Stage::Wait,
                    "timed out waiting to power ON"
                )
            ),
            "Failed: Timed out waiting to power ON"
        );
        let r = report(
            Action::Off,
            on,
            Refusals::default(),
            &fail(ErrorKind::Interrupted, Stage::Wait, "stopped by a signal"),
        );
        assert_eq!(r.code, 1);
        assert!(r.log[1].1.contains("last state read: on"));
        let r = report(
            Action::Status,
            on,
            Refusals::default(),
            &Ok(Outcome::Status {
                state: PowerState::Off,
            }),
        );
        assert_eq!((r.stdout.as_deref(), r.code), (Some("Status: OFF"), 2));
    }

    #[test]
    fn refused_credentials_print_the_family_line_and_keep_the_cause() {
        let fail = |kind, stage| {
            Err(Failure {
                error: DriverError::new(kind, stage, "vCenter refused the user name 'fence'"),
                last_state: None,
            })
        };
        let login = "Unable to connect/login to fencing device";
        let refusals = Refusals {
            login: Some(login),
            ..Refusals::default()
        };
        let on = RebootMethod::OnOff;
        for kind in [ErrorKind::PasswordInvalid, ErrorKind::UsernameInvalid] {
            for (action, method, stage) in [
                (Action::Status, on, Stage::Authenticate),
                (Action::Off, on, Stage::Command),
                (Action::Reboot, RebootMethod::Cycle, Stage::Status),
                (Action::On, on, Stage::Wait),
            ] {
                let r = report(action, method, refusals, &fail(kind, stage));
                assert_eq!(r.code, EXIT_FAILED);
                assert_eq!(r.log[0], (true, login.to_string()), "{kind:?} {action:?}");
                let cause = &r.log[1].1;
                assert!(
                    cause.starts_with("cause: ") && cause.contains("refused the user name 'fence'"),
                    "{cause}"
                );
                // Without a family line: the default (upstream fence_ipmilan's).
                let r = report(action, method, Refusals::default(), &fail(kind, stage));
                assert_ne!(r.log[0].1, login);
            }
        }
        // A refused privilege (403, NoPermission): the family's own line
        // for it where it declares one, else the usual line.
        let denied = fail(ErrorKind::PrivilegeNotObtained, Stage::Command);
        let r = report(Action::Off, on, refusals, &denied);
        assert_eq!(r.log[0].1, "Failed: Timed out waiting to power OFF");
        let status_line = "Failed: Unable to obtain correct plug status or plug is not available";
        let r = report(
            Action::Off,
            on,
            Refusals {
                privilege: Some(status_line),
                ..Refusals::default()
            },
            &denied,
        );
        assert_eq!(r.log[0].1, status_line);
        assert!(r.log[1].1.starts_with("cause: "), "{:?}", r.log);
        // Other failures keep theirs.
        let r = report(
            Action::Off,
            on,
            Refusals {
                login: Some(login),
                privilege: Some(status_line),
                device: Some("Failed: Generic error"),
            },
            &fail(ErrorKind::Timeout, Stage::Authenticate),
        );
        assert_eq!(r.log[0].1, "Connection timed out");
        // A family's line for the device's other failures (fence_nutanix_ahv's).
        let generic = Refusals {
            device: Some("Failed: Generic error"),
            ..refusals
        };
        for (kind, stage) in [
            (ErrorKind::DeviceError, Stage::Status),
            (ErrorKind::StatusUnreadable, Stage::Status),
            (ErrorKind::Config, Stage::Status),
            (ErrorKind::DeviceError, Stage::Command),
        ] {
            let r = report(Action::Off, on, generic, &fail(kind, stage));
            assert_eq!(r.log[0].1, "Failed: Generic error", "{kind:?}");
        }
        for kind in [ErrorKind::TransitionTimeout, ErrorKind::IdentityMismatch] {
            let r = report(Action::Off, on, generic, &fail(kind, Stage::Wait));
            assert_ne!(r.log[0].1, "Failed: Generic error", "{kind:?}");
        }
        let r = report(
            Action::Status,
            on,
            generic,
            &fail(ErrorKind::PasswordInvalid, Stage::Status),
        );
        assert_eq!(r.log[0].1, login);
    }
}
