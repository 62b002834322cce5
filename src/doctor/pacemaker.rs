//! Pacemaker's fencing configuration: the findings about the CIB
//! ([`super::cib`]: its stonith resources, fencing topology, cluster
//! properties and nodes, SBD's configuration).

use super::devices::{Form, Probe};
use super::properties::{FENCING_ENABLED, FENCING_TIMEOUT, FENCING_WATCHDOG_TIMEOUT};
use super::timing::{fit, fit_sum, worst_or, Fit};
use super::{parse_time, secs, Finding, Report, Severity};
use crate::agent::defs::Agent;
use crate::agent::values::Values;
use crate::engine::power::Action;
use std::collections::BTreeMap;
use std::time::Duration;

pub use super::cib::{
    parse_sbd, Cib, Device, Level, Node, Sbd, Target, DEFAULT_OP_TIMEOUT,
    DEFAULT_SBD_WATCHDOG_TIMEOUT, DEFAULT_STONITH_TIMEOUT,
};

/// What else the doctor was told.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// SBD on the node, when known (`None`: sbd is not configured here).
    pub sbd: Option<Sbd>,
    /// Check the devices themselves.
    pub probe_devices: bool,
}

fn falsy(v: &str) -> bool {
    matches!(
        v.to_lowercase().as_str(),
        "false" | "no" | "0" | "off" | "n"
    )
}

/// Every finding about `cib`, and (with `probe_devices`) the devices' checks.
pub fn diagnose(cib: &Cib, opts: &Options) -> Report {
    let mut r = Report {
        source: "pacemaker".into(),
        ..Report::default()
    };
    let f = &mut r.findings;
    let stonith_timeout = cib.stonith_timeout();
    let action = cib.action();

    f.extend(super::properties::findings(cib));
    if let Some((name, _)) = cib.option(FENCING_ENABLED).filter(|(_, v)| falsy(v)) {
        f.push(Finding::new(
            "stonith-disabled",
            Severity::Broken,
            "cluster",
            format!(
                "{name} is false: the cluster never fences a node it lost, and recovers its \
                 resources elsewhere while they may still run"
            ),
            format!("pcs property set {name}=true (crm configure property {name}=true)"),
        ));
    }
    let devices: Vec<&Device> = cib.devices.iter().filter(|d| !d.stopped()).collect();
    if devices.is_empty() && cib.option(FENCING_WATCHDOG_TIMEOUT).is_none() {
        f.push(Finding::new(
            "no-fence-device",
            Severity::Broken,
            "cluster",
            "the configuration has no fence device",
            "add a stonith resource for every node (pcs stonith create …)",
        ));
    }

    // Coverage.
    let names: Vec<&str> = cib.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut dynamic_noted = Vec::new();
    // Devices the fencer asks with `list` (dynamic-list) and fencekit can
    // run: asked now, with the parameters the fencer passes for `list`.
    let listed: Vec<(String, Result<Vec<String>, String>)> = if opts.probe_devices {
        let probes: Vec<Probe> = devices
            .iter()
            .filter(|d| {
                d.host_check() == "dynamic-list" && crate::agent::defs::agent(&d.agent).is_some()
            })
            .map(|d| Probe {
                device: d.id.clone(),
                agent: d.agent.clone(),
                node: None,
                form: Form::Stdin(d.agent_params()),
            })
            .collect();
        let lists = super::devices::list_all(&probes);
        probes.into_iter().map(|p| p.device).zip(lists).collect()
    } else {
        Vec::new()
    };
    for node in &cib.nodes {
        let mut covered = false;
        // Listing devices that do not list this node: (device, why, list failed).
        let mut unlisted: Vec<(String, String, bool)> = Vec::new();
        for d in &devices {
            match d.host_check().as_str() {
                "none" => covered = true,
                "static-list" => {
                    if d.host_list().contains(&node.name)
                        || d.host_map()
                            .iter()
                            .any(|(h, _)| h.eq_ignore_ascii_case(&node.name))
                    {
                        covered = true;
                    }
                }
                "dynamic-list" if listed.iter().any(|(id, _)| *id == d.id) => {
                    let (_, l) = listed.iter().find(|(id, _)| *id == d.id).unwrap();
                    // The fencer looks for the node's pcmk_host_map port, or its name.
                    let alias = d
                        .host_map()
                        .into_iter()
                        .rfind(|(n, _)| n.eq_ignore_ascii_case(&node.name))
                        .map(|(_, p)| p)
                        .unwrap_or_else(|| node.name.clone());
                    match l {
                        Ok(names) if names.contains(&alias) => covered = true,
                        Ok(names) => unlisted.push((
                            d.id.clone(),
                            format!(
                                "its `list` does not name '{alias}' (it lists {})",
                                if names.is_empty() {
                                    "nothing".to_string()
                                } else {
                                    names.join(", ")
                                }
                            ),
                            false,
                        )),
                        Err(e) => {
                            unlisted.push((d.id.clone(), format!("its `list` failed: {e}"), true))
                        }
                    }
                }
                _ => {
                    // dynamic-list / status, not asked here: decided by asking
                    // the device at fencing time.
                    covered = true;
                    if !dynamic_noted.contains(&d.id) {
                        dynamic_noted.push(d.id.clone());
                    }
                }
            }
        }
        for l in &cib.levels {
            match cib.level_applies(l, node) {
                Ok(true) if l.devices.iter().all(|id| cib.device(id).is_some()) => covered = true,
                Ok(_) => {}
                Err(()) => {
                    f.push(Finding::new(
                        "pattern-not-checked",
                        Severity::Advice,
                        format!("level {}", l.id),
                        "the level's target-pattern uses regular expression syntax the doctor \
                         does not evaluate (groups, alternation, counted repeats); it is taken \
                         to match every node",
                        "nothing, or use a simpler pattern or target= per node",
                    ));
                    covered = true;
                }
            }
        }
        for (id, why, failed) in &unlisted {
            // A device that lists other machines is not meant for this node;
            // one whose list failed is a finding even when another covers it.
            if covered && !failed {
                continue;
            }
            f.push(Finding::new(
                "host-not-in-device-list",
                if covered {
                    Severity::Weakened
                } else {
                    Severity::Broken
                },
                &node.name,
                format!(
                    "{id} names no nodes, so the fencer asks its agent's `list` \
                     (pcmk_host_check=dynamic-list) whether it can fence {}: {why}",
                    node.name
                ),
                "put the node in the device's pcmk_host_list, or map it to the device's \
                 plug in pcmk_host_map (pcmk_host_check=static-list)",
            ));
        }
        if !covered && !unlisted.is_empty() {
            continue;
        }
        if !covered {
            f.push(Finding::new(
                "host-not-covered",
                Severity::Broken,
                &node.name,
                format!(
                    "no fence device claims {} (pcmk_host_list, pcmk_host_map) and no fencing \
                     level targets it: fencing it fails",
                    node.name
                ),
                "add the node to a device's pcmk_host_list or pcmk_host_map (check the \
                 spelling against `crm_node -l`), or add a device for it",
            ));
        }
    }
    for id in &dynamic_noted {
        f.push(Finding::new(
            "host-claim-dynamic",
            Severity::Advice,
            id,
            "the device names no nodes (no pcmk_host_list or pcmk_host_map): the fencer asks \
             it at fencing time, so a missing node shows only then",
            "list the nodes it fences in pcmk_host_list (or pcmk_host_map)",
        ));
    }
    if !names.is_empty() {
        for d in &devices {
            let claimed = d
                .host_list()
                .into_iter()
                .chain(d.host_map().into_iter().map(|(n, _)| n));
            for h in claimed {
                if !names.iter().any(|n| n.eq_ignore_ascii_case(&h)) {
                    f.push(Finding::new(
                        "host-unknown",
                        Severity::Advice,
                        &d.id,
                        format!("the device claims '{h}', which is not a node of this cluster"),
                        "correct the name in pcmk_host_list / pcmk_host_map (node names as \
                         `crm_node -l` prints them)",
                    ));
                }
            }
        }
    }
    for l in &cib.levels {
        for id in &l.devices {
            if cib.device(id).is_none() {
                f.push(Finding::new(
                    "level-names-missing-device",
                    Severity::Broken,
                    format!("level {}", l.id),
                    format!(
                        "fencing level {} (index {}) names device '{id}', which does not exist: \
                         the level always fails",
                        l.id, l.index
                    ),
                    "pcs stonith level remove/add with existing device ids (see `pcs stonith \
                     status`), or create the device",
                ));
            }
        }
    }

    // Timing.
    let action_name = action.as_str();
    let st_name = cib.spelling(FENCING_TIMEOUT);
    // Each device's option values and agent, for the levels' sums.
    let mut timed: BTreeMap<&str, (Values, Agent)> = BTreeMap::new();
    for d in &devices {
        let node = d
            .host_map()
            .into_iter()
            .map(|(n, _)| n)
            .chain(d.host_list())
            .next()
            .or_else(|| names.first().map(|n| n.to_string()))
            .unwrap_or_default();
        let own = d.time(&format!("pcmk_{action_name}_timeout"));
        let budget = own.unwrap_or(stonith_timeout);
        let which = if own.is_some() {
            format!("pcmk_{action_name}_timeout")
        } else {
            st_name.to_string()
        };
        let params = d.params_for(&node);
        let (Some(def), Some(values)) = (
            crate::agent::defs::agent(&d.agent),
            super::timing::values(&d.agent, &params),
        ) else {
            f.push(Finding::new(
                "agent-not-checked",
                Severity::Advice,
                &d.id,
                format!(
                    "{} is not an agent fencekit implements: its timing and the device itself \
                     were not checked",
                    d.agent
                ),
                "check it by hand (stonith_admin --reboot on a test node)",
            ));
            continue;
        };
        let what = format!("a {action_name} through {}", d.agent);
        match fit(&values, &def, action, budget) {
            Fit::Fits => {}
            Fit::Unbounded => f.push(Finding::new(
                "timing-unbounded",
                Severity::Advice,
                &d.id,
                "disable_timeout or power_timeout=0 lift the agent's wait for the power state: \
                 only the fencer's timeout ends it",
                "remove disable_timeout from the device's parameters",
            )),
            Fit::NormalRunExceeds { typical } => f.push(Finding::new(
                "stonith-timeout-too-short",
                Severity::Broken,
                &d.id,
                format!(
                    "{what} takes about {} with these parameters even when the device answers \
                     at once ({}), more than {which} = {}: the fencer kills it first, and \
                     fencing that would work fails",
                    secs(typical.total()),
                    typical.arithmetic(),
                    secs(budget)
                ),
                format!(
                    "pcs stonith update {} pcmk_{action_name}_timeout={}s (or raise {st_name})",
                    d.id,
                    worst_or(&values, &def, action, typical.total()).as_secs() + 10
                ),
            )),
            Fit::WorstCaseOnly { worst, typical } => f.push(Finding::new(
                "stonith-timeout-below-worst-case",
                Severity::Advice,
                &d.id,
                format!(
                    "{what} exceeds {which} = {} only if every wait lasts its whole bound ({}); \
                     a working device's run takes about {}",
                    secs(budget),
                    worst.arithmetic(),
                    secs(typical.total())
                ),
                format!(
                    "nothing, or pcs stonith update {} pcmk_{action_name}_timeout={}s to let even \
                     the slowest run finish",
                    d.id,
                    worst.total().as_secs() + 10
                ),
            )),
        }
        // The monitor, by the same rule.
        match &d.monitor {
            None => f.push(Finding::new(
                "monitor-missing",
                Severity::Advice,
                &d.id,
                "the device has no recurring monitor: a broken BMC shows only when fencing fails",
                format!("pcs resource op add {} monitor interval=60s", d.id),
            )),
            Some((_, timeout)) => {
                let t = timeout
                    .as_deref()
                    .and_then(parse_time)
                    .or_else(|| cib.op_defaults.get("timeout").and_then(|t| parse_time(t)))
                    .unwrap_or(DEFAULT_OP_TIMEOUT);
                let mv = super::timing::values(&d.agent, &d.agent_params());
                match mv.as_ref().map(|v| fit(v, &def, Action::Monitor, t)) {
                    Some(Fit::NormalRunExceeds { typical }) => f.push(Finding::new(
                        "monitor-timeout-too-short",
                        Severity::Weakened,
                        &d.id,
                        format!(
                            "the device's monitor takes about {} even when the device answers \
                             at once, more than its timeout of {}: every monitor is killed, \
                             which says nothing about the device and fails the resource",
                            secs(typical.total()),
                            secs(t)
                        ),
                        format!(
                            "pcs resource update {} op monitor timeout={}s",
                            d.id,
                            mv.as_ref()
                                .map_or(typical.total(), |v| {
                                    worst_or(v, &def, Action::Monitor, typical.total())
                                })
                                .as_secs()
                                + 10
                        ),
                    )),
                    Some(Fit::WorstCaseOnly { worst, typical }) => f.push(Finding::new(
                        "monitor-timeout-below-worst-case",
                        Severity::Advice,
                        &d.id,
                        format!(
                            "the device's monitor exceeds its timeout of {} only if the device \
                             uses its whole login bound ({}); a working device's monitor takes \
                             about {}",
                            secs(t),
                            worst.arithmetic(),
                            secs(typical.total())
                        ),
                        format!(
                            "nothing, or pcs resource update {} op monitor timeout={}s",
                            d.id,
                            worst.total().as_secs() + 10
                        ),
                    )),
                    _ => {}
                }
            }
        }
        if let Some(map) = d.param("pcmk_host_map") {
            f.extend(super::hostmap::findings(&d.id, map));
        }
        timed.insert(&d.id, (values, def));
    }
    for l in &cib.levels {
        let parts: Option<Vec<(Values, Agent)>> = l
            .devices
            .iter()
            .map(|id| timed.get(id.as_str()).cloned())
            .collect();
        let Some(parts) = parts.filter(|p| p.len() > 1) else {
            continue;
        };
        let subject = format!("level {}", l.id);
        let n = parts.len();
        match fit_sum(&parts, action, stonith_timeout) {
            Fit::NormalRunExceeds { typical } => f.push(Finding::new(
                "stonith-timeout-too-short",
                Severity::Broken,
                subject,
                format!(
                    "the level's {n} devices run one after the other and take about {} together \
                     even when each answers at once, more than {st_name} = {}",
                    secs(typical.total()),
                    secs(stonith_timeout)
                ),
                format!(
                    "pcs property set {st_name}={}s",
                    typical.total().as_secs() + 10
                ),
            )),
            Fit::WorstCaseOnly { worst, typical } => f.push(Finding::new(
                "stonith-timeout-below-worst-case",
                Severity::Advice,
                subject,
                format!(
                    "the level's {n} devices run one after the other and exceed {st_name} = {} \
                     together only if every wait lasts its whole bound ({}); working devices \
                     take about {}",
                    secs(stonith_timeout),
                    secs(worst.total()),
                    secs(typical.total())
                ),
                format!(
                    "nothing, or pcs property set {st_name}={}s",
                    worst.total().as_secs() + 10
                ),
            )),
            _ => {}
        }
    }

    // Two-node races.
    let delay_max = devices
        .iter()
        .filter_map(|d| d.time("pcmk_delay_max"))
        .max()
        .unwrap_or_default();
    let delay_base = devices
        .iter()
        .filter_map(|d| d.time("pcmk_delay_base"))
        .max()
        .unwrap_or_default();
    let agent_delay = devices
        .iter()
        .filter_map(|d| d.param("delay").and_then(parse_time))
        .max()
        .unwrap_or_default();
    let priority = cib
        .prop("priority-fencing-delay")
        .and_then(parse_time)
        .unwrap_or_default();
    if cib.nodes.len() == 2
        && delay_max.is_zero()
        && delay_base.is_zero()
        && agent_delay.is_zero()
        && priority.is_zero()
    {
        f.push(Finding::new(
            "fence-race-no-delay",
            Severity::Weakened,
            "cluster",
            "a two-node cluster with no fencing delay: on a split both nodes fence each other at \
             once, and both may go down",
            "pcs stonith update DEVICE-OF-ONE-NODE pcmk_delay_base=5s (a fixed delay for the node \
             that should survive), or pcmk_delay_max=15s, or priority-fencing-delay",
        ));
    }
    if !priority.is_zero() && !delay_max.is_zero() && priority < delay_max * 2 {
        f.push(Finding::new(
            "priority-delay-too-short",
            Severity::Weakened,
            "cluster",
            format!(
                "priority-fencing-delay = {} is less than twice the largest pcmk_delay_max ({}): \
                 the random delay can outlast it and the node with the resources may lose the race",
                secs(priority),
                secs(delay_max)
            ),
            format!(
                "pcs property set priority-fencing-delay={}s",
                (delay_max * 2).as_secs()
            ),
        ));
    }

    // SBD and the watchdog.
    let swt_name = cib.spelling(FENCING_WATCHDOG_TIMEOUT);
    let swt = cib.option_value(FENCING_WATCHDOG_TIMEOUT).map(str::trim);
    let swt_value: Option<f64> = swt.and_then(|v| {
        let neg = v.starts_with('-');
        let d = parse_time(v.trim_start_matches('-'))?.as_secs_f64();
        Some(if neg { -d } else { d })
    });
    match swt_value {
        Some(v) if v > 0.0 => {
            let swt = Duration::from_secs_f64(v);
            match &opts.sbd {
                Some(sbd) if sbd.active => {
                    if swt <= sbd.watchdog_timeout {
                        f.push(Finding::new(
                            "watchdog-timeout-below-sbd",
                            Severity::Broken,
                            "cluster",
                            format!(
                                "{swt_name} = {} is not above SBD_WATCHDOG_TIMEOUT \
                                 = {} ({}): Pacemaker refuses it and stops, and a lost node \
                                 would be taken for dead before its watchdog fired",
                                secs(swt),
                                secs(sbd.watchdog_timeout),
                                sbd.source
                            ),
                            format!(
                                "pcs property set {swt_name}={}s (twice \
                                 SBD_WATCHDOG_TIMEOUT)",
                                (sbd.watchdog_timeout * 2).as_secs()
                            ),
                        ));
                    } else if swt < sbd.watchdog_timeout * 2 {
                        f.push(Finding::new(
                            "watchdog-timeout-tight",
                            Severity::Advice,
                            "cluster",
                            format!(
                                "{swt_name} = {} is less than twice \
                                 SBD_WATCHDOG_TIMEOUT = {}",
                                secs(swt),
                                secs(sbd.watchdog_timeout)
                            ),
                            format!(
                                "pcs property set {swt_name}={}s",
                                (sbd.watchdog_timeout * 2).as_secs()
                            ),
                        ));
                    }
                }
                _ => f.push(Finding::new(
                    "watchdog-without-sbd",
                    Severity::Broken,
                    "cluster",
                    format!(
                        "{swt_name} = {} but sbd is not running on this node: \
                         Pacemaker stops, and watchdog fencing cannot work",
                        secs(swt)
                    ),
                    format!(
                        "enable and start sbd (with SBD_WATCHDOG_TIMEOUT below {swt_name}) on \
                         every node, or set {swt_name}=0"
                    ),
                )),
            }
            for d in devices.iter().filter(|d| d.agent == "fence_watchdog") {
                let budget = d
                    .time(&format!("pcmk_{action_name}_timeout"))
                    .unwrap_or(stonith_timeout);
                if budget <= swt {
                    f.push(Finding::new(
                        "watchdog-level-timeout-too-short",
                        Severity::Broken,
                        &d.id,
                        format!(
                            "fence_watchdog waits {swt_name} = {} for the lost node \
                             to self-fence, but its timeout is {}",
                            secs(swt),
                            secs(budget)
                        ),
                        format!(
                            "pcs stonith update {} pcmk_{action_name}_timeout={}s",
                            d.id,
                            swt.as_secs() + 10
                        ),
                    ));
                }
            }
        }
        Some(v) if v < 0.0 => f.push(Finding::new(
            "watchdog-timeout-auto",
            Severity::Advice,
            "cluster",
            "a negative fencing-watchdog-timeout (stonith-watchdog-timeout) asks Pacemaker to compute it from each node's \
             SBD_WATCHDOG_TIMEOUT, which is unsafe when the nodes differ",
            "set it explicitly to twice SBD_WATCHDOG_TIMEOUT, the same on every node",
        )),
        _ => {}
    }

    // The devices themselves.
    if opts.probe_devices {
        let mut probes = Vec::new();
        for d in &devices {
            if crate::agent::defs::agent(&d.agent).is_none() {
                r.devices.push(super::DeviceCheck {
                    device: d.id.clone(),
                    agent: d.agent.clone(),
                    node: None,
                    result: "not-checked",
                    detail: "not an agent fencekit implements".into(),
                });
                continue;
            }
            let mut targets: Vec<String> = d
                .host_map()
                .into_iter()
                .map(|(n, _)| n)
                .chain(d.host_list())
                .collect();
            if targets.is_empty() {
                targets = names.iter().map(|n| n.to_string()).collect();
            }
            targets.dedup();
            let mut seen = Vec::new();
            for n in targets {
                let p = d.params_for(&n);
                // One check per distinct set of parameters (the node name aside).
                let key: Vec<_> = p.iter().filter(|(k, _)| k != "nodename").cloned().collect();
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                probes.push(Probe {
                    device: d.id.clone(),
                    agent: d.agent.clone(),
                    node: Some(n),
                    form: Form::Stdin(p),
                });
            }
        }
        for (row, finding) in super::devices::check_all(&probes) {
            r.devices.push(row);
            r.findings.extend(finding);
        }
    }
    r.finish();
    r
}
