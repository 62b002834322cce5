//! What the device's vendor documents for its stonith resource
//! (`AgentFamily::guide`: Microsoft's Pacemaker guide for fence_azure_arm,
//! …), compared with a device's configuration. A value outside the guide
//! is advice naming the guide and its value, never a fault: the guide is
//! the vendor's recommendation, and the doctor's own timing checks say
//! whether fencing works.

use super::cib::Device;
use super::{parse_time, Finding, Severity};
use crate::agent::defs::Agent;
use crate::platform::agent::{Guidance, GuideRule};

/// The advice for device `d` (running agent `agent`): one finding per
/// setting of its family's guide that `d` sets outside it, or leaves unset
/// where the guide asks for at least a value.
pub fn findings(d: &Device, agent: &Agent) -> Vec<Finding> {
    let Some(family) = crate::agent::families::of(agent) else {
        return Vec::new();
    };
    family
        .guide
        .iter()
        .filter_map(|g| judge(d, agent, g))
        .collect()
}

fn judge(d: &Device, agent: &Agent, g: &Guidance) -> Option<Finding> {
    let set = d
        .param(g.key)
        .or_else(|| d.meta.get(g.key).map(String::as_str));
    // Unset, an agent option has its default (`power_timeout`); a
    // Pacemaker parameter has Pacemaker's, judged as not set.
    let default = agent.option(g.key).and_then(|o| o.default);
    let number = |v: &str| parse_time(v).map(|t| t.as_secs_f64());
    let outside = match (set.or(default), g.rule) {
        (None, GuideRule::AtLeast) => true,
        (None, _) => false,
        (Some(v), GuideRule::Equal) => !v.trim().eq_ignore_ascii_case(g.value),
        (Some(v), rule) => match (number(v), number(g.value)) {
            (Some(have), Some(want)) => match rule {
                GuideRule::AtLeast => have < want,
                _ => have > want,
            },
            // Unreadable: the doctor's other checks name it.
            _ => false,
        },
    };
    if !outside {
        return None;
    }
    let (want, words) = match g.rule {
        GuideRule::AtLeast => ("at least", "raise it"),
        GuideRule::AtMost => ("at most", "lower it"),
        GuideRule::Equal => ("", "set it"),
    };
    let now = match (set, default) {
        (Some(v), _) => format!("is {v}"),
        (None, Some(v)) => format!("is not set (the agent's default: {v})"),
        (None, None) => "is not set".to_string(),
    };
    Some(Finding::new(
        "vendor-guide-differs",
        Severity::Advice,
        d.id.clone(),
        format!(
            "{} {now}; {} sets {want}{}{} for {}",
            g.key,
            g.source,
            if want.is_empty() { "" } else { " " },
            g.value,
            d.agent
        ),
        format!(
            "{words}: pcs stonith update {} {}={} (advice: the doctor's timing findings say \
             whether fencing works)",
            d.id, g.key, g.value
        ),
    ))
}
