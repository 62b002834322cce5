//! OpenStack's facts for `check --record` and drift: the server's UUID
//! (on libvirt/KVM also the guest's SMBIOS UUID: a target by name that now
//! finds another UUID names another machine), its `host_status` when the
//! policy shows it (informative: a host that went DOWN is worth reading,
//! not a change of identity), and the certificate Keystone or Nova
//! presented (`certificate-changed`; none over plain HTTP).

use super::driver::OpenstackDriver;
use crate::platform::facts::{
    note_certificate, with_certificate_rows, DriftRow, FactKind, Section, Seen, Value, CERTIFICATE,
    IDENTITY_BROKEN,
};
use crate::platform::Driver;

const ROWS: &[DriftRow] = with_certificate_rows!(
    "OpenStack";
    (
        "identity-changed",
        "broken",
        "OpenStack: the target finds a server with another UUID (SMBIOS UUID) than recorded",
    ),
);

const KINDS: &[(&str, FactKind)] = &[("server_id", IDENTITY_BROKEN)];

/// OpenStack's rules.
pub static FACTS: Seen = Seen {
    rows: ROWS,
    kinds: KINDS,
    keys: &["server_id", "name", "host_status", CERTIFICATE],
    read: "server_id",
    note,
};

/// What the driver found, and the certificate it was shown.
fn note(driver: &dyn Driver, facts: &mut Section) {
    if let Some(d) = driver.as_any().downcast_ref::<OpenstackDriver>() {
        if let Some(s) = d.found() {
            let text = |s: &str| Value::Text(s.to_string());
            facts.set("server_id", text(&s.id));
            facts.set_some(
                "name",
                Some(&s.name).filter(|n| !n.is_empty()).map(|n| text(n)),
            );
            facts.set_some("host_status", s.host_status.as_deref().map(text));
        }
        note_certificate(facts, d.certificate());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::facts::{DriftName, FactRules, Outcome, Severity};

    fn seen(id: &str, host_status: &str) -> Section {
        let mut s = Section::default();
        s.set("server_id", Value::Text(id.into()));
        s.set("name", Value::Text("node1".into()));
        s.set("host_status", Value::Text(host_status.into()));
        s
    }

    #[test]
    fn another_server_uuid_is_broken_a_host_status_change_is_no_drift() {
        let ok = Outcome::default();
        let was = seen("a1", "UP");
        assert!(FACTS
            .drifts(&was, Some(&seen("a1", "DOWN")), &ok)
            .is_empty());
        let d = FACTS.drifts(&was, Some(&seen("b2", "UP")), &ok);
        assert_eq!(
            d.iter().map(|d| (d.drift, d.severity)).collect::<Vec<_>>(),
            [(DriftName::IdentityChanged, Severity::Broken)]
        );
        let (mut a, mut b) = (was.clone(), was.clone());
        note_certificate(&mut a, Some([1; 32]));
        note_certificate(&mut b, Some([2; 32]));
        let d = FACTS.drifts(&a, Some(&b), &ok);
        assert_eq!(d[0].drift, DriftName::CertificateChanged);
    }
}
