//! GCE's facts for `check --record` and drift: the instance's id (a new
//! one means the instance was deleted and created again under its name:
//! broken), its zone (informative), and the certificate the API presented.

use super::driver::GceDriver;
use crate::platform::facts::{
    note_certificate, with_certificate_rows, DriftRow, FactKind, Section, Seen, Value, CERTIFICATE,
    IDENTITY_BROKEN,
};
use crate::platform::Driver;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "GCE";
    (
        "identity-changed",
        "broken",
        "GCE: the instance has another id than recorded (deleted and created again under its name)",
    ),
);

const KINDS: &[(&str, FactKind)] = &[("instance_id", IDENTITY_BROKEN)];

/// GCE's rules.
pub static FACTS: Seen = Seen {
    rows: ROWS,
    kinds: KINDS,
    keys: &["instance_id", "zone", CERTIFICATE],
    read: "instance_id",
    note,
};

fn note(driver: &dyn Driver, facts: &mut Section) {
    if let Some(d) = driver.as_any().downcast_ref::<GceDriver>() {
        if let Some(i) = d.instance() {
            facts.set("instance_id", Value::Text(i.id.clone()));
            facts.set("zone", Value::Text(i.zone.clone()));
        }
        note_certificate(facts, d.certificate());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::facts::{DriftName, FactRules, Outcome, Severity};

    fn seen(id: &str) -> Section {
        let mut s = Section::default();
        s.set("instance_id", Value::Text(id.to_string()));
        s
    }

    #[test]
    fn a_new_instance_id_is_broken() {
        let ok = Outcome::default();
        let was = seen("1");
        assert!(FACTS.drifts(&was, Some(&was), &ok).is_empty());
        let d = FACTS.drifts(&was, Some(&seen("2")), &ok);
        assert_eq!(
            (d[0].drift, d[0].severity),
            (DriftName::IdentityChanged, Severity::Broken)
        );
    }
}
