//! A device's worst case, as fencekit's agent front bounds it for that
//! agent and those parameters: the options are read as the agent reads
//! them ([`crate::agent::stdin::parse`], defaults applied), and the bound
//! is [`crate::agent::run::worst_case`], the same computation the agent
//! logs when it runs. No second formula lives here: [`fit`] compares a
//! cluster manager's timeout with the same waits, in the worst case and in
//! a working device's run.

use crate::agent::defs;
use crate::agent::key::Key;
use crate::agent::values::Values;
use crate::engine::policy::{Case, Waits};
use crate::engine::power::Action;
use std::time::Duration;

/// How long an action of a device can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worst {
    /// fencekit does not implement the agent: no figure.
    NotImplemented,
    /// The wait for the power state has no bound (`disable_timeout`, `power_timeout=0`).
    Unbounded,
    /// At most this long.
    Bounded(Duration),
}

/// The option values `agent` would run with, given `params` (option
/// names as on stdin or argv without the dashes); `None` when fencekit
/// does not implement the agent.
pub fn values(agent: &str, params: &[(String, String)]) -> Option<Values> {
    let def = defs::agent(agent)?;
    let text: String = params.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    let v = crate::agent::stdin::parse(&text, &def).values;
    Some(finish(v, &def))
}

/// As the agent finishes reading its options: `port_as_ip`, then defaults.
fn finish(mut v: Values, def: &defs::Agent) -> Values {
    if v.has(Key::PortAsIp) {
        if let Some(plug) = v.get(Key::Plug).map(str::to_string) {
            v.set(Key::Ip, plug);
        }
    }
    v.apply_defaults(def);
    v
}

/// The option values `def` would run with, given FAR's argv elements
/// (`--key=value`, bare `--flag`); words it does not know are left out
/// (the doctor names them itself). `None` when there is nothing to read.
pub fn values_from_argv(def: &defs::Agent, args: &[String]) -> Option<Values> {
    let mut v = Values::new();
    for a in args {
        let Some(body) = a.strip_prefix("--") else {
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, val)) => (n, Some(val)),
            None => (body, None),
        };
        let Some(o) = def.options.iter().find(|o| o.long == name) else {
            continue;
        };
        match (o.takes_value(), value) {
            (true, Some(val)) => v.set_named(o.key_str(), val),
            (true, None) => {}
            (false, _) => v.set_named(o.key_str(), "1"),
        }
    }
    Some(finish(v, def))
}

/// The worst case of `action` for `agent` with `params`.
pub fn worst_case(agent: &str, params: &[(String, String)], action: Action) -> Worst {
    let Some(def) = defs::agent(agent) else {
        return Worst::NotImplemented;
    };
    match values(agent, params) {
        None => Worst::NotImplemented,
        Some(v) => match crate::agent::run::worst_case(&v, &def, action) {
            Some(d) => Worst::Bounded(d),
            None => Worst::Unbounded,
        },
    }
}

/// How a device's action fits in the time the cluster manager gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Even the worst case ends in time.
    Fits,
    /// The wait for the power state has no bound (the worst case is
    /// unknown), but a working device's run ends in time.
    Unbounded,
    /// Only a run whose waits use up their bounds takes longer: the worst
    /// case (with its arithmetic) and a working device's run.
    WorstCaseOnly {
        /// Every wait at its bound.
        worst: Waits,
        /// A working device's run.
        typical: Waits,
    },
    /// A working device's run already takes longer: fencing fails even
    /// when everything answers.
    NormalRunExceeds {
        /// A working device's run.
        typical: Waits,
    },
}

/// How `action` of `def` with `values` fits in `budget`: the doctor's one
/// rule for FAR's `timeout`, `stonith-timeout`/`fencing-timeout` and
/// `pcmk_<action>_timeout`. A timeout below a working device's run
/// ([`Case::Typical`]) fails fencing that would have worked; one only below
/// the worst case fails a run only when its waits use up their bounds.
pub fn fit(values: &Values, def: &defs::Agent, action: Action, budget: Duration) -> Fit {
    use crate::agent::run::waits;
    classify(
        waits(values, def, action, Case::Typical).unwrap_or_default(),
        waits(values, def, action, Case::Worst),
        budget,
    )
}

fn classify(typical: Waits, worst: Option<Waits>, budget: Duration) -> Fit {
    if typical.total() > budget {
        return Fit::NormalRunExceeds { typical };
    }
    match worst {
        None => Fit::Unbounded,
        Some(worst) if worst.total() > budget => Fit::WorstCaseOnly { worst, typical },
        Some(_) => Fit::Fits,
    }
}

/// [`fit`] for `agent` with `params` (as on stdin); `None` when fencekit
/// does not implement the agent.
pub fn fit_params(
    agent: &str,
    params: &[(String, String)],
    action: Action,
    budget: Duration,
) -> Option<Fit> {
    let def = defs::agent(agent)?;
    let v = values(agent, params)?;
    Some(fit(&v, &def, action, budget))
}

/// [`fit`] of several devices run one after the other (a fencing level):
/// their waits added up.
pub fn fit_sum(parts: &[(Values, defs::Agent)], action: Action, budget: Duration) -> Fit {
    use crate::agent::run::waits;
    let mut typical = Waits::default();
    let mut worst = Some(Waits::default());
    for (v, def) in parts {
        typical
            .0
            .extend(waits(v, def, action, Case::Typical).unwrap_or_default().0);
        worst = match (worst, waits(v, def, action, Case::Worst)) {
            (Some(mut all), Some(w)) => {
                all.0.extend(w.0);
                Some(all)
            }
            _ => None,
        };
    }
    classify(typical, worst, budget)
}

/// The worst case of `action`, or `otherwise` when it has no bound.
pub fn worst_or(
    values: &Values,
    def: &defs::Agent,
    action: Action,
    otherwise: Duration,
) -> Duration {
    crate::agent::run::worst_case(values, def, action).unwrap_or(otherwise)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_worst_case_follows_the_agents_options() {
        let base = p(&[("ip", "192.0.2.1"), ("username", "u"), ("password", "p")]);
        let w = worst_case("fence_ipmilan", &base, Action::Reboot);
        let Worst::Bounded(d) = w else {
            panic!("{w:?}")
        };
        let mut slower = base.clone();
        slower.extend(p(&[("power_timeout", "40"), ("power_wait", "5")]));
        let Worst::Bounded(e) = worst_case("fence_ipmilan", &slower, Action::Reboot) else {
            panic!()
        };
        assert!(e > d + Duration::from_secs(40), "{d:?} {e:?}");
        let mut delayed = base.clone();
        delayed.push(("delay".into(), "15".into()));
        let Worst::Bounded(f) = worst_case("fence_ipmilan", &delayed, Action::Reboot) else {
            panic!()
        };
        assert_eq!(f, d + Duration::from_secs(16));
        let mut off = base.clone();
        off.push(("disable_timeout".into(), "1".into()));
        assert_eq!(
            worst_case("fence_ipmilan", &off, Action::Off),
            Worst::Unbounded
        );
        assert_eq!(
            worst_case("fence_scsi", &base, Action::Off),
            Worst::NotImplemented
        );
    }
}
