//! fence-agents-remediation (FAR): a `FenceAgentsRemediationTemplate` (or a
//! `FenceAgentsRemediation`) with the Secrets it references, the argv FAR
//! builds from them for each node, and the findings about them.
//!
//! FAR's rules, as its controller applies them: `sharedparameters` are
//! rendered (`{{.NodeName}}`), `nodeparameters[key][node]` override them;
//! the shared Secret (`sharedSecretName`, by default
//! `fence-agents-credentials-shared`) and the node's Secret
//! (`nodeSecretNames[node]`, winning over the shared one) add one
//! parameter per data key; a key defined both by a Secret and by the CR
//! is refused. Each parameter is one argv element `key=value` (a bare
//! `key` for an empty value), with `--action=reboot` added when no action
//! is given. `timeout` (60 s) bounds each attempt, `retrycount` (5)
//! attempts `retryinterval` (5 s) apart.

use super::devices::{Form, Probe};
use super::timing::{fit, values_from_argv, worst_or, Fit};
use super::{secs, Finding, Report, Severity};
use crate::engine::power::Action;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// The agents FAR's image installs (its Dockerfile's packages, with the
/// aliases `fence-agents-ipmilan` also installs).
pub const FAR_IMAGE_AGENTS: &[&str] = &[
    "fence_amt_ws",
    "fence_apc_snmp",
    "fence_cisco_ucs",
    "fence_eaton_snmp",
    "fence_emerson",
    "fence_eps",
    "fence_ibmblade",
    "fence_ifmib",
    "fence_ilo2",
    "fence_intelmodular",
    "fence_ipdu",
    "fence_ipmilan",
    "fence_idrac",
    "fence_ilo3",
    "fence_ilo4",
    "fence_ilo5",
    "fence_ipmilanplus",
    "fence_imm",
    "fence_redfish",
    "fence_rhevm",
    "fence_vmware_rest",
    "fence_vmware_soap",
    "fence_kubevirt",
    "fence_ibm_powervs",
    "fence_ibm_vpc",
    "fence_aws",
    "fence_azure_arm",
    "fence_gce",
];

/// The fence-agents packages FAR's image installs (its Dockerfile, 22):
/// the packages fencekit's own image and distribution packages stand in
/// for, each with whether an agent family serves it yet (`package` in
/// `agents/*.toml`; a test holds the marks to it). A package only ever
/// turns served: when every one is, every package of FAR's image is.
pub const FAR_IMAGE_PACKAGES: &[(&str, bool)] = &[
    ("fence-agents-amt-ws", true),
    ("fence-agents-apc-snmp", true),
    ("fence-agents-cisco-ucs", true),
    ("fence-agents-eaton-snmp", true),
    ("fence-agents-emerson", true),
    ("fence-agents-eps", true),
    ("fence-agents-ibmblade", true),
    ("fence-agents-ifmib", true),
    ("fence-agents-ilo2", true),
    ("fence-agents-intelmodular", true),
    ("fence-agents-ipdu", true),
    ("fence-agents-ipmilan", true),
    ("fence-agents-redfish", true),
    ("fence-agents-rhevm", true),
    ("fence-agents-vmware-rest", true),
    ("fence-agents-vmware-soap", true),
    ("fence-agents-kubevirt", true),
    ("fence-agents-ibm-powervs", true),
    ("fence-agents-ibm-vpc", true),
    ("fence-agents-aws", true),
    ("fence-agents-azure-arm", true),
    ("fence-agents-gce", true),
];

/// FAR's defaults (its CRD).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// FAR's default pause between attempts.
pub const DEFAULT_RETRY_INTERVAL: Duration = Duration::from_secs(5);
/// FAR's default number of attempts.
pub const DEFAULT_RETRY_COUNT: i64 = 5;
/// The shared Secret FAR reads when the CR names none.
pub const DEFAULT_SHARED_SECRET: &str = "fence-agents-credentials-shared";

/// The spec FAR works from.
#[derive(Clone, Debug, Default)]
pub struct Spec {
    /// `metadata.name` of the CR.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// `FenceAgentsRemediationTemplate` or `FenceAgentsRemediation`.
    pub kind: String,
    /// `agent`.
    pub agent: String,
    /// `sharedparameters`.
    pub shared: BTreeMap<String, String>,
    /// `nodeparameters`: key → node → value.
    pub per_node: BTreeMap<String, BTreeMap<String, String>>,
    /// `sharedSecretName`.
    pub shared_secret: String,
    /// `nodeSecretNames`: node → Secret.
    pub node_secrets: BTreeMap<String, String>,
    /// `retrycount`.
    pub retry_count: i64,
    /// `retryinterval`.
    pub retry_interval: Duration,
    /// `timeout`.
    pub timeout: Duration,
}

/// A Go duration (`60s`, `1m30s`, `500ms`, `1.5h`).
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    let mut total = 0f64;
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let v: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..u] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[u..];
        total += v * scale;
    }
    (total.is_finite() && total < 1e12).then(|| Duration::from_secs_f64(total))
}

fn str_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    let s = match v {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every YAML (or JSON) document in `text`; a `List` is unpacked into its items.
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(text) {
        let v: Value =
            serde::Deserialize::deserialize(doc).map_err(|e| format!("not YAML: {e}"))?;
        if v.is_null() {
            continue;
        }
        match v.get("items").and_then(Value::as_array) {
            Some(items) if v["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                out.extend(items.iter().cloned())
            }
            _ => out.push(v),
        }
    }
    Ok(out)
}

impl Spec {
    /// The spec of a FenceAgentsRemediationTemplate (`spec.template.spec`)
    /// or FenceAgentsRemediation (`spec`) object.
    pub fn from_object(v: &Value) -> Result<Spec, String> {
        let kind = v["kind"].as_str().unwrap_or("").to_string();
        let spec = match kind.as_str() {
            "FenceAgentsRemediationTemplate" => &v["spec"]["template"]["spec"],
            "FenceAgentsRemediation" => &v["spec"],
            other => {
                return Err(format!(
                    "expected a FenceAgentsRemediationTemplate or FenceAgentsRemediation, found \
                     kind '{other}'"
                ))
            }
        };
        let agent = spec["agent"]
            .as_str()
            .ok_or("the spec has no agent")?
            .to_string();
        let dur = |k: &str, d: Duration| -> Result<Duration, String> {
            match spec[k].as_str() {
                None => Ok(d),
                Some(s) => parse_go_duration(s).ok_or(format!("{k}: '{s}' is not a duration")),
            }
        };
        Ok(Spec {
            name: v["metadata"]["name"].as_str().unwrap_or("").to_string(),
            namespace: v["metadata"]["namespace"].as_str().map(str::to_string),
            kind,
            agent,
            shared: str_map(&spec["sharedparameters"]),
            per_node: spec["nodeparameters"]
                .as_object()
                .map(|o| o.iter().map(|(k, v)| (k.clone(), str_map(v))).collect())
                .unwrap_or_default(),
            shared_secret: spec["sharedSecretName"]
                .as_str()
                .unwrap_or(DEFAULT_SHARED_SECRET)
                .to_string(),
            node_secrets: str_map(&spec["nodeSecretNames"]),
            retry_count: spec["retrycount"].as_i64().unwrap_or(DEFAULT_RETRY_COUNT),
            retry_interval: dur("retryinterval", DEFAULT_RETRY_INTERVAL)?,
            timeout: dur("timeout", DEFAULT_TIMEOUT)?,
        })
    }

    /// The nodes the spec names (in nodeparameters or nodeSecretNames).
    pub fn named_nodes(&self) -> Vec<String> {
        let mut n: Vec<String> = self
            .per_node
            .values()
            .flat_map(|m| m.keys().cloned())
            .chain(self.node_secrets.keys().cloned())
            .collect();
        n.sort();
        n.dedup();
        n
    }
}

/// A Secret's data (base64 `data`, plain `stringData`), by name.
pub fn secret(v: &Value) -> Option<(String, BTreeMap<String, String>)> {
    use base64::Engine as _;
    if v["kind"].as_str() != Some("Secret") {
        return None;
    }
    let name = v["metadata"]["name"].as_str()?.to_string();
    let mut data = BTreeMap::new();
    for (k, b64) in str_map(&v["data"]) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .ok()?;
        data.insert(k, String::from_utf8_lossy(&bytes).into_owned());
    }
    data.extend(str_map(&v["stringData"]));
    Some((name, data))
}

/// Node names from a Node list (`kubectl get nodes -o yaml`), or plain
/// lines (one name each; `#` comments).
pub fn node_names(text: &str) -> Vec<String> {
    if let Ok(docs) = documents(text) {
        let names: Vec<String> = docs
            .iter()
            .filter(|d| d["kind"].as_str() == Some("Node"))
            .filter_map(|d| d["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        if !names.is_empty() {
            return names;
        }
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// What FAR is run with.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The Secrets available, by name.
    pub secrets: BTreeMap<String, BTreeMap<String, String>>,
    /// The cluster's nodes (`None`: unknown; the nodes the spec names are used).
    pub nodes: Option<Vec<String>>,
    /// NHC's overall remediation timeout, when known.
    pub remediation_timeout: Option<Duration>,
    /// Check the devices themselves.
    pub probe_devices: bool,
}

fn render(v: &str, node: &str) -> String {
    let mut out = v.to_string();
    for pat in ["{{.NodeName}}", "{{ .NodeName }}"] {
        out = out.replace(pat, node);
    }
    out
}

/// The parameters FAR passes for `node`, in argv order of keys (FAR's own
/// order is random), without the action; and the duplicates it refuses.
fn parameters(spec: &Spec, inputs: &Inputs, node: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let mut p: BTreeMap<String, String> = spec
        .shared
        .iter()
        .map(|(k, v)| (k.clone(), render(v, node)))
        .collect();
    for (k, nodes) in &spec.per_node {
        if let Some(v) = nodes.get(node) {
            p.insert(k.clone(), v.clone());
        }
    }
    let mut secret: BTreeMap<String, String> = inputs
        .secrets
        .get(&spec.shared_secret)
        .map(|s| {
            s.iter()
                .map(|(k, v)| (k.clone(), render(v, node)))
                .collect()
        })
        .unwrap_or_default();
    if let Some(s) = spec
        .node_secrets
        .get(node)
        .and_then(|n| inputs.secrets.get(n))
    {
        secret.extend(s.clone());
    }
    let dups: Vec<String> = secret
        .keys()
        .filter(|k| p.contains_key(*k))
        .cloned()
        .collect();
    p.extend(secret);
    (p, dups)
}

/// The argv elements FAR builds from `params` (without argv[0]).
pub fn argv(params: &BTreeMap<String, String>) -> Vec<String> {
    params
        .iter()
        .map(|(k, v)| {
            if v.is_empty() {
                k.clone()
            } else {
                format!("{k}={v}")
            }
        })
        .collect()
}

/// The action FAR runs: `--action`'s value, else reboot. `Err` for one FAR refuses.
fn action_of(p: &BTreeMap<String, String>) -> Result<Action, String> {
    match p
        .get("--action")
        .or_else(|| p.get("action"))
        .map(String::as_str)
    {
        None | Some("") | Some("reboot") => Ok(Action::Reboot),
        Some("off") => Ok(Action::Off),
        Some(other) => Err(other.to_string()),
    }
}

/// Every finding about `spec`, and (with `probe_devices`) each node's device check.
pub fn diagnose(spec: &Spec, inputs: &Inputs) -> Report {
    let mut r = Report {
        source: "far".into(),
        ..Report::default()
    };
    let f = &mut r.findings;
    let subject = format!("{} {}", spec.kind, spec.name);
    let def = crate::agent::defs::agent(&spec.agent);
    let shipped = FAR_IMAGE_AGENTS.contains(&spec.agent.as_str());
    match (shipped, def.is_some()) {
        (true, _) => {}
        (false, true) => f.push(Finding::new(
            "agent-not-in-far-image",
            Severity::Advice,
            &subject,
            format!(
                "FAR's own image does not ship {}: its webhook refuses the CR unless the image \
                 is fencekit's (packaging/Containerfile), which links it",
                spec.agent
            ),
            "run FAR with the fencekit image, or use an agent FAR ships",
        )),
        (false, false) => f.push(Finding::new(
            "agent-not-in-far-image",
            Severity::Broken,
            &subject,
            format!(
                "FAR's image does not ship {} and fencekit does not implement it: FAR's webhook \
                 refuses the CR (no /usr/sbin/{})",
                spec.agent, spec.agent
            ),
            "use an agent FAR ships (fence_ipmilan, fence_redfish, fence_aws, …)",
        )),
    }
    if def.is_none() {
        f.push(Finding::new(
            "agent-not-checked",
            Severity::Advice,
            &subject,
            format!(
                "{} is not an agent fencekit implements: its parameters, timing and devices were \
                 not checked",
                spec.agent
            ),
            "check it by hand (fence_AGENT --action status with the template's parameters)",
        ));
    }

    // Parameter names, as the agent reads argv.
    let keys: Vec<&String> = spec
        .shared
        .keys()
        .chain(spec.per_node.keys())
        .chain(
            inputs
                .secrets
                .get(&spec.shared_secret)
                .into_iter()
                .flat_map(|s| s.keys()),
        )
        .chain(
            spec.node_secrets
                .values()
                .filter_map(|n| inputs.secrets.get(n))
                .flat_map(|s| s.keys()),
        )
        .collect();
    if let Some(def) = &def {
        let mut seen = Vec::new();
        for k in keys {
            if seen.contains(&k) {
                continue;
            }
            seen.push(k);
            let known = match k.strip_prefix("--") {
                // As getopt reads it: the long name, or a prefix of only one.
                Some(name) => {
                    def.options.iter().any(|o| o.long == name)
                        || (!name.is_empty()
                            && def
                                .options
                                .iter()
                                .filter(|o| o.long.starts_with(name))
                                .count()
                                == 1)
                }
                None => {
                    let mut c = k.chars();
                    c.next() == Some('-')
                        && c.next().is_some_and(|ch| {
                            c.next().is_none()
                                && def.options.iter().any(|o| o.short_char() == Some(ch))
                        })
                }
            };
            if !known {
                let why = if k.starts_with('-') {
                    format!(
                        "{} has no option {k} (nor one it abbreviates alone)",
                        spec.agent
                    )
                } else {
                    format!(
                        "FAR passes the key as written, so '{k}' reaches {} as a word without \
                         dashes, not as an option",
                        spec.agent
                    )
                };
                f.push(Finding::new(
                    "unknown-parameter",
                    Severity::Broken,
                    format!("{subject}: {k}"),
                    format!("{why}: the agent refuses its argv, and every fencing fails"),
                    format!(
                        "correct or remove it (`{} --help` lists the options; keys need their \
                         two dashes, e.g. --ip)",
                        spec.agent
                    ),
                ));
            }
        }
    }

    // Secrets it names that are not there.
    let mut named: Vec<&String> = spec.node_secrets.values().collect();
    if spec.shared_secret != DEFAULT_SHARED_SECRET {
        named.push(&spec.shared_secret);
    }
    named.sort();
    named.dedup();
    for n in named {
        if !inputs.secrets.contains_key(n) {
            f.push(Finding::new(
                "far-secret-missing",
                Severity::Broken,
                format!("Secret {n}"),
                format!(
                    "the spec names Secret {n}, which was not found: FAR cannot build the argv"
                ),
                format!("create Secret {n} in the CR's namespace (or give it with --secret FILE)"),
            ));
        }
    }

    // Retries.
    if spec.retry_count <= 0 {
        f.push(Finding::new(
            "far-retrycount-zero",
            Severity::Broken,
            &subject,
            format!(
                "retrycount is {}: FAR runs no attempt at all and records the fencing as \
                 succeeded",
                spec.retry_count
            ),
            "set retrycount to 1 or more (default 5)",
        ));
    }
    if let Some(total) = inputs.remediation_timeout {
        let n = spec.retry_count.max(1) as u32;
        let needed = (spec.timeout + spec.retry_interval) * n;
        if needed > total {
            f.push(Finding::new(
                "far-retries-exceed-remediation-timeout",
                Severity::Weakened,
                &subject,
                format!(
                    "retrycount × (timeout + retryinterval) = {n} × ({} + {}) = {}, more than the \
                     remediation's timeout of {}: NHC gives up (and escalates) while FAR may still \
                     be retrying",
                    secs(spec.timeout),
                    secs(spec.retry_interval),
                    secs(needed),
                    secs(total)
                ),
                "lower retrycount, or raise the remediation's timeout in the NodeHealthCheck",
            ));
        }
    }

    // Nodes.
    let nodes = inputs.nodes.clone().unwrap_or_else(|| spec.named_nodes());
    let node_specific = !spec.per_node.is_empty()
        || !spec.node_secrets.is_empty()
        || spec.shared.values().any(|v| render(v, "\u{0}") != *v);
    if !node_specific {
        f.push(Finding::new(
            "node-without-parameters",
            Severity::Broken,
            &subject,
            "no node-specific parameter (nodeparameters, nodeSecretNames, or {{.NodeName}} in a \
             shared parameter): FAR refuses the spec (mandatory parameters are missing)",
            "add nodeparameters (e.g. --ip per node)",
        ));
    }
    let mut probes = Vec::new();
    for node in &nodes {
        let missing: Vec<&String> = spec
            .per_node
            .iter()
            .filter(|(_, m)| !m.contains_key(node))
            .map(|(k, _)| k)
            .collect();
        if !missing.is_empty() {
            let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            f.push(Finding::new(
                "node-without-parameters",
                Severity::Broken,
                node,
                format!(
                    "nodeparameters has no {} for node {node}: its fencing runs without them \
                     (or with the shared value), so it fails or hits another machine",
                    list.join(", ")
                ),
                format!(
                    "add {node} under each of {} in nodeparameters",
                    list.join(", ")
                ),
            ));
            continue;
        }
        let (params, dups) = parameters(spec, inputs, node);
        for d in dups {
            f.push(Finding::new(
                "far-duplicate-parameter",
                Severity::Broken,
                node,
                format!("{d} is set both by a Secret and by the CR: FAR refuses to run the agent"),
                format!("define {d} in one place only"),
            ));
        }
        let action = match action_of(&params) {
            Ok(a) => a,
            Err(other) => {
                f.push(Finding::new(
                    "far-unsupported-action",
                    Severity::Broken,
                    &subject,
                    format!("--action is '{other}': FAR runs only reboot or off"),
                    "set --action to reboot or off, or leave it out (reboot)",
                ));
                continue;
            }
        };
        let Some(def) = &def else { continue };
        let mut args = argv(&params);
        args.retain(|a| {
            a != "--action" && !a.starts_with("--action=") && !a.starts_with("action=")
        });
        if let Some(values) = values_from_argv(def, &args) {
            let what = format!("a {} through {}", action.as_str(), spec.agent);
            match fit(&values, def, action, spec.timeout) {
                Fit::NormalRunExceeds { typical } => f.push(Finding::new(
                    "far-timeout-too-short",
                    Severity::Broken,
                    node,
                    format!(
                        "{what} takes about {} with these parameters even when the device \
                         answers at once ({}), more than FAR's timeout of {}: FAR kills every \
                         attempt (SIGKILL), and fencing that would work fails",
                        secs(typical.total()),
                        typical.arithmetic(),
                        secs(spec.timeout)
                    ),
                    format!(
                        "set timeout: {}s in the spec (or lower power_wait/delay)",
                        worst_or(&values, def, action, typical.total()).as_secs() + 10
                    ),
                )),
                Fit::WorstCaseOnly { worst, typical } => f.push(Finding::new(
                    "far-timeout-below-worst-case",
                    Severity::Advice,
                    node,
                    format!(
                        "{what} exceeds FAR's timeout of {} only if every wait lasts its whole \
                         bound ({}); a working device's run takes about {}. FAR kills such an \
                         attempt and tries again ({} attempts)",
                        secs(spec.timeout),
                        worst.arithmetic(),
                        secs(typical.total()),
                        spec.retry_count.max(1)
                    ),
                    format!(
                        "nothing, or timeout: {}s in the spec to let even the slowest run finish",
                        worst.total().as_secs() + 10
                    ),
                )),
                Fit::Unbounded => f.push(Finding::new(
                    "timing-unbounded",
                    Severity::Advice,
                    node,
                    "--disable-timeout or --power-timeout=0 lift the agent's wait for the power \
                     state: only FAR's SIGKILL ends it",
                    "remove --disable-timeout / --power-timeout=0",
                )),
                Fit::Fits => {}
            }
        }
        if inputs.probe_devices {
            probes.push(Probe {
                device: subject.clone(),
                agent: spec.agent.clone(),
                node: Some(node.clone()),
                form: Form::Argv(args),
            });
        }
    }
    if inputs.nodes.is_none() && !nodes.is_empty() {
        f.push(Finding::new(
            "nodes-not-given",
            Severity::Advice,
            &subject,
            "the cluster's nodes were not given (--nodes or --kubeconfig): only the nodes the \
             spec names were checked, so a node it forgets is not found",
            "pass --nodes FILE (kubectl get nodes -o yaml > nodes.yaml) or --kubeconfig",
        ));
    }
    for (row, finding) in super::devices::check_all(&probes) {
        r.devices.push(row);
        r.findings.extend(finding);
    }
    r.finish();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which of FAR's 22 packages the agent families serve (`package` in
    /// `agents/*.toml`), reported on stderr (`cargo test --lib
    /// far_packages -- --nocapture`), and held to the marks of
    /// [`FAR_IMAGE_PACKAGES`].
    #[test]
    fn far_packages_served_and_still_missing() {
        let served: Vec<&str> = crate::agent::defs::packages()
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        let missing: Vec<&str> = FAR_IMAGE_PACKAGES
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| !served.contains(p))
            .collect();
        eprintln!(
            "FAR's image packages served: {} of {}; still missing: {}",
            FAR_IMAGE_PACKAGES.len() - missing.len(),
            FAR_IMAGE_PACKAGES.len(),
            if missing.is_empty() {
                "none".to_string()
            } else {
                missing.join(", ")
            }
        );
        let now_served: Vec<&str> = FAR_IMAGE_PACKAGES
            .iter()
            .filter(|(p, marked)| !marked && served.contains(p))
            .map(|(p, _)| *p)
            .collect();
        assert!(
            now_served.is_empty(),
            "served now, mark them served in FAR_IMAGE_PACKAGES: {now_served:?}"
        );
        let marked_missing: Vec<&str> = FAR_IMAGE_PACKAGES
            .iter()
            .filter(|(p, marked)| *marked && !served.contains(p))
            .map(|(p, _)| *p)
            .collect();
        assert!(
            marked_missing.is_empty(),
            "a package of FAR's image marked served is missing: {marked_missing:?}"
        );
        assert_eq!(FAR_IMAGE_PACKAGES.len(), 22, "FAR's image installs 22");
    }

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_go_duration("60s"), Some(Duration::from_secs(60)));
        assert_eq!(parse_go_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("60"), None);
        assert_eq!(parse_go_duration(""), None);
    }

    #[test]
    fn the_argv_is_fars() {
        let mut p = BTreeMap::new();
        p.insert("--lanplus".to_string(), String::new());
        p.insert("--ip".to_string(), "10.0.0.1".to_string());
        assert_eq!(argv(&p), vec!["--ip=10.0.0.1", "--lanplus"]);
    }
}
