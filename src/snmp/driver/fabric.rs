//! Switch ports (fabric fencing, profiles with a `link` column: IF-MIB):
//! what sets a port apart from an outlet. A port switched down
//! (ifAdminStatus) has cut the node off only once its link reads down too
//! (ifOperStatus), so the driver reads every port's link with its
//! administrative state: the node reads off only when every port is
//! administratively down *and* its link is down; a port down whose link
//! still reads up holds the node on (the engine keeps polling until its
//! deadline, then fails naming the port). A port switched up is on at once;
//! its link comes back when the node's interface does, and is reported as
//! observed (logged, and in the verify context), never waited for: a node
//! that is powered off has no link to bring up.

use super::{SnmpDriver, Which};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::PowerState;
use std::time::Instant;

/// What a port's link read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Link {
    /// Up (traffic passes).
    Up,
    /// Down, not present, or its lower layer down.
    Down,
    /// Anything else (testing, unknown, dormant): not down.
    Other(i64),
}

impl SnmpDriver {
    /// Whether every PDU of the node has a link column (switch ports).
    pub(super) fn has_links(&self) -> bool {
        !self.cfg.outlets.is_empty()
            && (0..self.cfg.outlets.len())
                .all(|i| self.variant_of(i).is_some_and(|v| v.link.is_some()))
    }

    /// Reads every port's link; true when all read down. Ports whose
    /// administrative state is up and whose link is not are logged.
    pub(super) async fn read_links(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<bool, DriverError> {
        let values = self.read_all(Which::Link, Stage::Status, deadline).await?;
        let mut all_down = true;
        for (i, value) in values {
            let v = self.variant_of(i).ok_or_else(|| {
                DriverError::new(ErrorKind::Protocol, Stage::Status, "no session")
            })?;
            let link = match value.as_int() {
                Some(x) if x == v.link_up => Link::Up,
                Some(x) if v.link_down.contains(&x) => Link::Down,
                Some(x) => Link::Other(x),
                None => {
                    return Err(DriverError::new(
                        ErrorKind::StatusUnreadable,
                        Stage::Status,
                        format!(
                            "port {} link state reads '{}', not a number",
                            self.cfg.outlet_label(i),
                            value.to_text()
                        ),
                    ))
                }
            };
            all_down &= link == Link::Down;
            if self.last[i] == Some(PowerState::On) && link != Link::Up {
                tracing::info!(
                    port = %self.cfg.outlet_label(i),
                    "the port is up, its link is not (yet): it comes up with the node's interface"
                );
            }
            self.links[i] = Some(link);
        }
        Ok(all_down)
    }

    /// The ports switched down whose link still reads up, in words.
    pub(super) fn link_detail(&self) -> Option<String> {
        let up: Vec<String> = (0..self.cfg.outlets.len())
            .filter(|&i| {
                self.last[i] == Some(PowerState::Off)
                    && matches!(self.links[i], Some(Link::Up | Link::Other(_)))
            })
            .map(|i| self.cfg.outlet_label(i))
            .collect();
        (!up.is_empty()).then(|| {
            format!(
                "port(s) {} administratively down, but the link still reads up: the node is \
                 not isolated",
                up.join(", ")
            )
        })
    }

    /// Each port's state and link, for verify's context.
    pub fn link_words(&self) -> Vec<String> {
        (0..self.cfg.outlets.len())
            .filter_map(|i| {
                let admin = self.last[i]?;
                let link = match self.links[i]? {
                    Link::Up => "up".to_string(),
                    Link::Down => "down".to_string(),
                    Link::Other(x) => format!("neither up nor down ({x})"),
                };
                let admin = match admin {
                    PowerState::On => "up",
                    PowerState::Off => "down",
                };
                Some(format!(
                    "port {}: administratively {admin}, link {link}",
                    self.cfg.outlet_label(i)
                ))
            })
            .collect()
    }
}
