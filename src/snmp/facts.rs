//! A PDU's facts for `check --record` and drift: the names of the node's
//! outlets (one GET each, in the session `check` opens anyway).

use super::driver::SnmpDriver;
use crate::engine::error::ErrorKind;
use crate::platform::facts::{
    DriftName, DriftRow, FactDrift, FactRules, Outcome, Section, Severity, Value,
};
use crate::platform::{Driver, Local, Method};
use std::time::Instant;

/// The PDUs' rules.
pub struct Facts;

/// The registered rules.
pub static FACTS: Facts = Facts;

const ROWS: &[DriftRow] = &[
    (
        "outlet-renamed",
        "broken",
        "PDU: an outlet the inventory names is no longer found by that name",
    ),
    (
        "outlet-renamed",
        "changed",
        "PDU: an outlet given by number has another name than recorded",
    ),
];

impl FactRules for Facts {
    fn note<'a>(
        &'a self,
        driver: &'a mut dyn Driver,
        _method: &'a dyn Method,
        facts: &'a mut Section,
        deadline: Option<Instant>,
    ) -> Local<'a, ()> {
        Box::pin(async move {
            let Some(d) = driver.as_any_mut().downcast_mut::<SnmpDriver>() else {
                return;
            };
            // Outlet (as the inventory names it) → its name on the PDU; an
            // outlet whose name cannot be read is left out.
            if let Ok(names) = d.outlet_names(deadline).await {
                let outlets = names
                    .into_iter()
                    .filter_map(|(o, n)| Some((o, n?)))
                    .collect();
                facts.set("outlets", Value::Names(outlets));
            }
        })
    }

    fn drift_rows(&self) -> &'static [DriftRow] {
        ROWS
    }

    fn drifts(&self, was: &Section, now: Option<&Section>, o: &Outcome<'_>) -> Vec<FactDrift> {
        let (Some(was), Some(now)) = (was.names("outlets"), now.map(|n| n.names("outlets"))) else {
            return Vec::new();
        };
        let empty = Default::default();
        let now = now.unwrap_or(&empty);
        let mut out = Vec::new();
        for (outlet, name) in was {
            let current = now.get(outlet);
            if current != Some(name) {
                out.push(FactDrift {
                    drift: DriftName::OutletRenamed,
                    severity: if o.failed == Some(ErrorKind::Config) {
                        Severity::Broken
                    } else {
                        Severity::Changed
                    },
                    was: format!("{outlet} named {name}"),
                    now: match current {
                        Some(c) => format!("{outlet} named {c}"),
                        None => format!("{outlet} not found"),
                    },
                });
            }
        }
        out
    }
}
