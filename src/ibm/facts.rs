//! IBM Cloud's facts for `check --record` and drift: the instance's CRN
//! (a new one under the same ID cannot happen; one that changes means the
//! answer is about another account's instance: broken), its name and zone
//! (informative), and the certificate the API presented.

use super::driver::IbmDriver;
use crate::platform::facts::{
    note_certificate, with_certificate_rows, DriftRow, FactKind, Section, Seen, Value, CERTIFICATE,
    IDENTITY_BROKEN,
};
use crate::platform::Driver;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "IBM Cloud";
    (
        "identity-changed",
        "broken",
        "IBM Cloud: the instance has another CRN than recorded (another account's or a new instance)",
    ),
);

const KINDS: &[(&str, FactKind)] = &[("crn", IDENTITY_BROKEN)];

/// IBM Cloud's rules.
pub static FACTS: Seen = Seen {
    rows: ROWS,
    kinds: KINDS,
    keys: &["crn", "name", "zone", CERTIFICATE],
    read: "crn",
    note,
};

fn note(driver: &dyn Driver, facts: &mut Section) {
    if let Some(d) = driver.as_any().downcast_ref::<IbmDriver>() {
        if let Some(m) = d.machine() {
            let text = |s: &str| Value::Text(s.to_string());
            facts.set_some("crn", m.crn.as_deref().map(text));
            facts.set("name", text(&m.name));
            facts.set_some("zone", m.zone.as_deref().map(text));
        }
        note_certificate(facts, d.certificate());
    }
}
