//! Fault knobs as written after `--fault PATTERN:` (`stuck`, `loss=0.3`,
//! `delay=2s`, `identity-of=node02` …): parsing and applying them to a
//! chassis' [`Faults`]. Pure functions; `fencekit lab` (in the CLI front)
//! and the tests call them.

use super::bmc::Faults;

/// One `--fault` spec: the node names it applies to and how to change them.
pub struct FaultSpec {
    /// The nodes it applies to (a host range expanded).
    pub names: Vec<String>,
    /// The knobs, in order (`stuck`, `delay=2s`, `identity-of=node02` …).
    pub knobs: Vec<String>,
}

/// Parses one `--fault PATTERN:KNOB[+KNOB…]`, checking every knob.
pub fn parse_fault(spec: &str) -> Result<FaultSpec, String> {
    let (pattern, knobs) = spec
        .rsplit_once(':')
        .ok_or_else(|| format!("--fault '{spec}': expected PATTERN:KNOB[+KNOB…]"))?;
    let names = crate::fleet::hostrange::expand(pattern).map_err(|e| e.to_string())?;
    let knobs: Vec<String> = knobs.split('+').map(|k| k.trim().to_string()).collect();
    let mut probe = Faults::default();
    let mut on = true;
    for k in &knobs {
        apply_knob(k, &mut probe, &mut on).map_err(|m| format!("--fault '{spec}': {m}"))?;
    }
    Ok(FaultSpec { names, knobs })
}

/// Applies knob `k` to `f` (`off` clears `on`). Knobs the lab applies
/// elsewhere (`redfish-no-forceoff`, `vendor`, `identity-of`) are only checked here.
pub fn apply_knob(k: &str, f: &mut Faults, on: &mut bool) -> Result<(), String> {
    let (name, value) = match k.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (k, None),
    };
    let dur = |v: Option<&str>| {
        v.ok_or_else(|| format!("{name} needs a value"))
            .and_then(|v| crate::time::parse_duration(v).map_err(|e| e.to_string()))
    };
    match name {
        "stuck" => f.stuck = true,
        "silent" => f.silent = true,
        "strict-state" => f.strict_state = true,
        "no-cipher-query" => f.no_cipher_query = true,
        "ipmi-silent" => f.ipmi_silent = true,
        "lying" => f.lying = true,
        "flap" => f.flap = true,
        "draw-lies" => f.draw_lies = true,
        "no-identity" => f.no_identity = true,
        "host-rst" => f.host_rst = true,
        "host-alive" => f.host_alive = true,
        "no-meter" => f.no_meter = true,
        "no-nmi" => f.no_nmi = true,
        // applied when the lab starts (see `spec`)
        "redfish-no-forceoff" => {}
        "vendor" => {
            let v = value.unwrap_or_default();
            if super::redfish::Vendor::parse(v).is_none() {
                return Err(format!(
                    "vendor={v}: not a profile (generic, idrac, ilo, xcc, smc, bmcweb, \
                     bmcweb204, ami, ami-task)"
                ));
            }
        }
        // applied once every node exists (see `main`)
        "identity-of" => {
            value
                .filter(|v| !v.is_empty())
                .ok_or("identity-of needs a node name")?;
        }
        "off" => *on = false,
        "loss" => {
            let r: f64 = value
                .and_then(|v| v.parse().ok())
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or("loss needs a ratio between 0 and 1")?;
            f.loss = r;
        }
        "delay" => f.delay = dur(value)?,
        "transition" => f.transition = dur(value)?,
        other => return Err(format!("unknown fault knob '{other}'")),
    }
    Ok(())
}
