//! The fencing configuration doctor (`fencekit check --pacemaker`,
//! `fencekit check --far`): what a cluster manager will actually run,
//! read from its configuration, and the named findings about it.
//!
//! * [`pacemaker`]: the CIB (stonith resources, fencing topology, cluster
//!   properties, nodes) and SBD's configuration, and their findings;
//! * [`far`]: a FenceAgentsRemediation(Template) with its Secrets, the
//!   argv FAR builds from it, and its findings;
//! * [`timing`]: each device's worst case and a working device's run,
//!   from the agent front's own bounds ([`crate::agent::run::waits`]), and
//!   how they fit in a timeout ([`timing::fit`]);
//! * [`properties`]: the fencing cluster options under their names before
//!   and since Pacemaker 3.0.2 (`stonith-*`, `fencing-*`);
//! * [`hostmap`]: `pcmk_host_map` as Pacemaker 3.0.2 (and earlier) parse it;
//! * [`devices`]: each device checked in-process through the agent front,
//!   with exactly the parameters the cluster manager would pass.
//!
//! This layer sits above the agent front (it reads options as an agent
//! does) and below the command line, which renders its [`Report`].

pub mod cib;
pub mod devices;
pub mod far;
pub mod hostmap;
pub mod pacemaker;
pub mod properties;
pub mod regex;
pub mod timing;

use serde::Serialize;

/// How bad a finding is (ordered: `Broken` is the worst).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Works, but could be better or could not be checked.
    Advice,
    /// Fencing works, but less safely or less surely than it should.
    Weakened,
    /// Fencing fails (or the cluster stops) when it is needed.
    Broken,
}

impl Severity {
    /// The word used in tables, JSON and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Advice => "advice",
            Severity::Weakened => "weakened",
            Severity::Broken => "broken",
        }
    }
}

/// One named finding about the configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Its id (`host-not-covered`, …), documented with its fix.
    pub id: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What it is about: a node, a device, a level, the cluster.
    pub subject: String,
    /// What is wrong, with the figures.
    pub message: String,
    /// What to change.
    pub fix: String,
}

impl Finding {
    /// A finding.
    pub fn new(
        id: &'static str,
        severity: Severity,
        subject: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Finding {
            id,
            severity,
            subject: subject.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// The result of one device check (one device, for one node).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceCheck {
    /// The device (stonith resource id, or the FAR template's name).
    pub device: String,
    /// The agent.
    pub agent: String,
    /// The node it was checked for (`None`: the device as a whole).
    pub node: Option<String>,
    /// `ok`, `failed` or `not-checked`.
    pub result: &'static str,
    /// What the agent said (its result line and cause), never a secret.
    pub detail: String,
}

/// Everything the doctor found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// What it read (`pacemaker`, `far`).
    pub source: String,
    /// The findings, worst first.
    pub findings: Vec<Finding>,
    /// The devices it checked.
    pub devices: Vec<DeviceCheck>,
}

impl Report {
    /// Sorts the findings worst first (then by id and subject), and drops repeats.
    pub fn finish(&mut self) {
        self.findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(a.id.cmp(b.id))
                .then(a.subject.cmp(&b.subject))
        });
        self.findings.dedup();
    }

    /// The worst severity found, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// A time as Pacemaker writes it: a number of seconds, or a number with a
/// unit (`ms`, `msec`, `us`, `usec`, `s`, `sec`, `m`, `min`, `h`, `hr`), or
/// an ISO 8601 duration (`PT1M30S`). `None` when it does not parse.
pub fn parse_time(s: &str) -> Option<std::time::Duration> {
    use std::time::Duration;
    let t = s.trim();
    if let Some(iso) = t.strip_prefix("PT").or_else(|| t.strip_prefix("pt")) {
        let mut total = 0f64;
        let mut num = String::new();
        for c in iso.chars() {
            if c.is_ascii_digit() || c == '.' {
                num.push(c);
                continue;
            }
            let v: f64 = num.parse().ok()?;
            num.clear();
            total += v * match c.to_ascii_uppercase() {
                'H' => 3600.0,
                'M' => 60.0,
                'S' => 1.0,
                _ => return None,
            };
        }
        return num.is_empty().then(|| Duration::from_secs_f64(total));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let v: f64 = n.parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "ms" | "msec" | "msecs" => 0.001,
        "us" | "usec" | "usecs" => 0.000_001,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
        _ => return None,
    };
    let secs = v * scale;
    (secs.is_finite() && secs < 1e12).then(|| Duration::from_secs_f64(secs))
}

/// Seconds, as findings write them (`60 s`, `2.5 s`).
pub fn secs(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn pacemaker_times_parse() {
        let d = |s| parse_time(s);
        assert_eq!(d("60"), Some(Duration::from_secs(60)));
        assert_eq!(d("60s"), Some(Duration::from_secs(60)));
        assert_eq!(d("2min"), Some(Duration::from_secs(120)));
        assert_eq!(d("1m"), Some(Duration::from_secs(60)));
        assert_eq!(d("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(d("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(d("PT1M30S"), Some(Duration::from_secs(90)));
        assert_eq!(d("ten"), None);
        assert_eq!(d("5 parsecs"), None);
        assert_eq!(d("-5"), None);
    }

    #[test]
    fn findings_sort_worst_first() {
        let mut r = Report::default();
        r.findings
            .push(Finding::new("b", Severity::Advice, "x", "", ""));
        r.findings
            .push(Finding::new("a", Severity::Broken, "x", "", ""));
        r.findings
            .push(Finding::new("a", Severity::Broken, "x", "", ""));
        r.finish();
        assert_eq!(r.findings.len(), 2);
        assert_eq!(r.findings[0].id, "a");
        assert_eq!(r.worst(), Some(Severity::Broken));
    }
}
