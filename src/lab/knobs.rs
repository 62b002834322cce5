//! Fault knobs as written after `--fault PATTERN:` (`stuck`, `loss=0.3`,
//! `delay=2s`, `identity-of=node02` …): parsing and applying them to a
//! chassis' [`Faults`]. Pure functions; `fencekit lab` (in the CLI front)
//! and the tests call them.

use super::bmc::Faults;

/// One `--fault` spec: the node names it applies to and how to change them.
#[derive(Debug)]
pub struct FaultSpec {
    /// The nodes it applies to (a host range expanded).
    pub names: Vec<String>,
    /// The knobs, in order (`stuck`, `delay=2s`, `identity-of=node02` …).
    pub knobs: Vec<String>,
}

/// A `--fault` spec that cannot be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadFault {
    /// No `:` between the pattern and the knobs (the spec).
    #[error("--fault '{0}': expected PATTERN:KNOB[+KNOB…]")]
    NoKnobs(String),
    /// A pattern that is not a host range.
    #[error(transparent)]
    Pattern(#[from] crate::fleet::hostrange::RangeError),
    /// A knob that is wrong (the spec, and what is wrong).
    #[error("--fault '{spec}': {knob}")]
    Knob { spec: String, knob: BadKnob },
}

/// A fault knob that is unknown or lacks a usable value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadKnob {
    #[error("unknown fault knob '{0}'")]
    Unknown(String),
    /// A vendor profile that does not exist (as given).
    #[error(
        "vendor={0}: not a profile (generic, idrac, ilo, xcc, smc, bmcweb, bmcweb204, ami, ami-task)"
    )]
    Vendor(String),
    #[error("identity-of needs a node name")]
    IdentityOf,
    #[error("loss needs a ratio between 0 and 1")]
    Loss,
    /// A knob that counts (its name) without a whole number.
    #[error("{0} needs a whole number")]
    Count(String),
    /// A privilege limit that is not one (as given).
    #[error("privilege={0}: not user, operator or administrator")]
    Privilege(String),
    /// A knob that needs a value and has none (its name).
    #[error("{0} needs a value")]
    NoValue(String),
    /// A duration knob whose value is not one.
    #[error(transparent)]
    Duration(#[from] crate::time::BadDuration),
}

/// Parses one `--fault PATTERN:KNOB[+KNOB…]`, checking every knob.
pub fn parse_fault(spec: &str) -> Result<FaultSpec, BadFault> {
    let (pattern, knobs) = spec
        .rsplit_once(':')
        .ok_or_else(|| BadFault::NoKnobs(spec.to_string()))?;
    let names = crate::fleet::hostrange::expand(pattern)?;
    let knobs: Vec<String> = knobs.split('+').map(|k| k.trim().to_string()).collect();
    let mut probe = Faults::default();
    let mut on = true;
    for k in &knobs {
        apply_knob(k, &mut probe, &mut on).map_err(|knob| BadFault::Knob {
            spec: spec.to_string(),
            knob,
        })?;
    }
    Ok(FaultSpec { names, knobs })
}

/// Applies knob `k` to `f` (`off` clears `on`). Knobs the lab applies
/// elsewhere (`redfish-no-forceoff`, `vendor`, `identity-of`) are only checked here.
pub fn apply_knob(k: &str, f: &mut Faults, on: &mut bool) -> Result<(), BadKnob> {
    let (name, value) = match k.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (k, None),
    };
    let dur = |v: Option<&str>| {
        let v = v.ok_or_else(|| BadKnob::NoValue(name.to_string()))?;
        crate::time::parse_duration(v).map_err(BadKnob::from)
    };
    let count = |v: Option<&str>| {
        v.ok_or_else(|| BadKnob::NoValue(name.to_string()))?
            .parse::<u32>()
            .map_err(|_| BadKnob::Count(name.to_string()))
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
        // IPMI vendor non-compliance (`IpmiQuirks`; docs/ipmi.md)
        "bad-checksum" => f.quirks.bad_checksum = true,
        "rakp2-long" => f.quirks.rakp2_long = true,
        "rakp4-untruncated" => f.quirks.rakp4_untruncated = true,
        "pad-username" => f.quirks.pad_username = true,
        "untagged-ciphers" => f.quirks.untagged_ciphers = true,
        "cipher-garbage" => f.quirks.cipher_garbage = true,
        "opensesspriv" => f.quirks.opensesspriv = true,
        "ipmi15-only" => f.quirks.ipmi15_only = true,
        "session-id-zero" => f.quirks.session_id_zero = true,
        "bad-authcode" => f.quirks.bad_authcode = true,
        "per-msg-off" => f.quirks.per_msg_off = true,
        "unexpected-auth" => f.quirks.unexpected_auth = true,
        "permsg-required" => f.quirks.permsg_required = true,
        "endianseq" => f.quirks.endianseq = true,
        "authcap-wrong" => f.quirks.authcap_wrong = true,
        "operator-user" => f.quirks.operator_user = true,
        "busy" => f.quirks.busy = count(value)?,
        "busy-timeout" => f.quirks.busy_timeout = count(value)?,
        "control-timeout" => f.quirks.control_timeout = count(value)?,
        // applied when the lab starts (see `spec`)
        "redfish-no-forceoff" => {}
        "vendor" => {
            let v = value.unwrap_or_default();
            if super::redfish::Vendor::parse(v).is_none() {
                return Err(BadKnob::Vendor(v.to_string()));
            }
        }
        // applied once every node exists (see `main`)
        "identity-of" => {
            value.filter(|v| !v.is_empty()).ok_or(BadKnob::IdentityOf)?;
        }
        "off" => *on = false,
        "loss" => {
            let r: f64 = value
                .and_then(|v| v.parse().ok())
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or(BadKnob::Loss)?;
            f.loss = r;
        }
        "privilege" => {
            let level = match value.unwrap_or_default() {
                "user" => 2,
                "operator" => 3,
                "administrator" | "admin" => 4,
                v => return Err(BadKnob::Privilege(v.to_string())),
            };
            f.privilege_limit = (level < 4).then_some(level);
        }
        "delay" => f.delay = dur(value)?,
        "transition" => f.transition = dur(value)?,
        other => return Err(BadKnob::Unknown(other.to_string())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::BadDuration;

    fn knob(spec: &str) -> BadKnob {
        match parse_fault(spec) {
            Err(BadFault::Knob { knob, .. }) => knob,
            other => panic!("{spec}: {:?}", other.map(|f| f.knobs)),
        }
    }

    #[test]
    fn faults_are_checked_knob_by_knob() {
        let f = parse_fault("node[01-02]:stuck+delay=2s").unwrap();
        assert_eq!(f.names, ["node01", "node02"]);
        assert_eq!(f.knobs, ["stuck", "delay=2s"]);
        assert!(matches!(parse_fault("node01"), Err(BadFault::NoKnobs(_))));
        assert!(matches!(
            parse_fault("node[1-:stuck"),
            Err(BadFault::Pattern(_))
        ));
        assert_eq!(knob("node01:bogus"), BadKnob::Unknown("bogus".into()));
        assert_eq!(knob("node01:delay"), BadKnob::NoValue("delay".into()));
        assert_eq!(
            knob("node01:delay=soon"),
            BadKnob::Duration(BadDuration::NotANumber("soon".into()))
        );
        assert_eq!(knob("node01:loss=2"), BadKnob::Loss);
        assert_eq!(knob("node01:busy=x"), BadKnob::Count("busy".into()));
        assert_eq!(knob("node01:busy"), BadKnob::NoValue("busy".into()));
        let mut f = Faults::default();
        let mut on = true;
        for k in ["bad-checksum", "busy-timeout=2", "ipmi15-only"] {
            apply_knob(k, &mut f, &mut on).unwrap();
        }
        assert!(f.quirks.bad_checksum && f.quirks.ipmi15_only);
        assert_eq!(f.quirks.busy_timeout, 2);
        assert_eq!(knob("node01:vendor=acme"), BadKnob::Vendor("acme".into()));
        assert_eq!(knob("node01:identity-of="), BadKnob::IdentityOf);
        assert_eq!(
            knob("node01:privilege=root"),
            BadKnob::Privilege("root".into())
        );
        let mut f = Faults::default();
        apply_knob("privilege=user", &mut f, &mut true).unwrap();
        assert_eq!(f.privilege_limit, Some(2));
        assert_eq!(
            parse_fault("node01:stuck+bogus").unwrap_err().to_string(),
            "--fault 'node01:stuck+bogus': unknown fault knob 'bogus'"
        );
    }
}
