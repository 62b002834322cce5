//! An agent's timing: the engine policy from its option values, the step
//! bound, and the `delay` before contacting the device.

use crate::agent::key::Key;
use crate::agent::values::Values;
use crate::engine::policy::{Policy, PowerTimeout};
use crate::engine::power::{Action, RebootMethod};
use std::time::Duration;

/// Longest per-step bound (about ten years): larger values mean "no practical limit".
const MAX_STEP_SECS: i64 = 10 * 365 * 86_400;
/// The step bound when `power_timeout` is 0: its default.
const DEFAULT_STEP: Duration = Duration::from_secs(20);

/// True when `disable_timeout` is on (given, or set from `PCMK_service`).
pub(super) fn timeouts_disabled(values: &Values) -> bool {
    values
        .get(Key::DisableTimeout)
        .is_some_and(|v| matches!(v.to_lowercase().as_str(), "1" | "yes" | "on" | "true"))
}

/// The bound on each step that talks to the device: `power_timeout`
/// seconds, as upstream bounds each ipmitool run; its default when
/// `power_timeout` is 0 (which lifts only the wait for the power state).
pub(super) fn step_timeout(values: &Values) -> Duration {
    match values.int(Key::PowerTimeout) {
        Some(n) if n > 0 => Duration::from_secs(n.min(MAX_STEP_SECS) as u64),
        _ => DEFAULT_STEP,
    }
}

/// The engine policy for the (post-processed) option values.
///
/// `disable_timeout` (and `power_timeout=0`) lift only the wait for the new
/// power state ([`PowerTimeout::Unlimited`]); the session set-up, each
/// request and the wait for the per-BMC lock keep their step bound, so a
/// BMC that cannot be reached fails as it does without Pacemaker.
pub fn policy(values: &Values) -> Policy {
    let secs = |k: Key| Duration::from_secs(values.int(k).unwrap_or(0).max(0) as u64);
    let power_timeout = values.int(Key::PowerTimeout).unwrap_or(20);
    let interval = secs(Key::StonithStatusSleep);
    let mut p = Policy::agent();
    p.power_wait = secs(Key::PowerWait);
    p.poll_interval = interval;
    p.poll_interval_max = interval;
    p.retry_on = values
        .int(Key::RetryOn)
        .unwrap_or(1)
        .clamp(0, i64::from(u32::MAX)) as u32;
    p.method = match values.get(Key::Method) {
        Some(m) if m.eq_ignore_ascii_case("cycle") => RebootMethod::Cycle,
        _ => RebootMethod::OnOff,
    };
    // Upstream counts polls, and kills each ipmitool after as many seconds.
    p.power_timeout = if power_timeout > 0 && !timeouts_disabled(values) {
        PowerTimeout::Polls(power_timeout.min(i64::from(u32::MAX)) as u32)
    } else {
        PowerTimeout::Unlimited
    };
    p.step_timeout = step_timeout(values);
    p.deadline = None;
    p
}

/// How long to wait before contacting the device: `1 + delay − elapsed`,
/// for off and reboot only, and only when `delay` is not the string "0".
pub fn delay_for(values: &Values, action: Action, elapsed: Duration) -> Option<Duration> {
    if !matches!(action, Action::Off | Action::Reboot) || values.get(Key::Delay) == Some("0") {
        return None;
    }
    let delay = values.int(Key::Delay).unwrap_or(0) as f64;
    let left = 1.0 + delay - elapsed.as_secs_f64();
    (left > 0.0).then(|| Duration::from_secs_f64(left))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::defs;

    #[test]
    fn policy_maps_upstream_timing() {
        let a = defs::agent("fence_ilo3").unwrap();
        let mut v = Values::new();
        v.apply_defaults(&a);
        let p = policy(&v);
        assert_eq!(p.power_wait, Duration::from_secs(4));
        assert_eq!(p.power_timeout, PowerTimeout::Polls(20));
        assert_eq!(p.step_timeout, Duration::from_secs(20));
        assert_eq!(
            (p.poll_interval, p.poll_interval_max),
            (Duration::from_secs(1), Duration::from_secs(1))
        );
        assert_eq!(
            (p.retry_on, p.confirm, p.method),
            (1, 1, RebootMethod::OnOff)
        );
        assert!(p.deadline.is_none());
        // disable_timeout (Pacemaker): only the wait for the power state is
        // lifted; every step keeps power_timeout's bound.
        v.set(Key::DisableTimeout, "true");
        v.set(Key::PowerTimeout, "7");
        let p = policy(&v);
        assert_eq!(
            (p.power_timeout, p.step_timeout),
            (PowerTimeout::Unlimited, Duration::from_secs(7))
        );
        v.set(Key::DisableTimeout, "false");
        assert_eq!(policy(&v).power_timeout, PowerTimeout::Polls(7));
        // power_timeout=0 lifts that wait too, and the steps keep the default.
        v.set(Key::PowerTimeout, "0");
        v.set(Key::Method, "CYCLE");
        v.set(Key::PowerWait, "-3");
        let p = policy(&v);
        assert_eq!(
            (p.power_timeout, p.step_timeout),
            (PowerTimeout::Unlimited, Duration::from_secs(20))
        );
        assert_eq!(
            (p.method, p.power_wait),
            (RebootMethod::Cycle, Duration::ZERO)
        );
    }

    #[test]
    fn delay_rule() {
        let mut v = Values::new();
        v.set(Key::Delay, "0");
        assert_eq!(delay_for(&v, Action::Off, Duration::ZERO), None);
        v.set(Key::Delay, "00");
        assert_eq!(
            delay_for(&v, Action::Off, Duration::ZERO),
            Some(Duration::from_secs(1))
        );
        v.set(Key::Delay, "3");
        assert_eq!(
            delay_for(&v, Action::Reboot, Duration::from_secs(1)),
            Some(Duration::from_secs(3))
        );
        assert_eq!(delay_for(&v, Action::Status, Duration::ZERO), None);
        assert_eq!(delay_for(&v, Action::Diag, Duration::ZERO), None);
        assert_eq!(delay_for(&v, Action::Off, Duration::from_secs(9)), None);
    }
}
