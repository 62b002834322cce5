//! The engine's [`PowerDriver`] for a node's outlets on switched PDUs.
//!
//! A node may hang on several outlets (dual power supplies), on one PDU or
//! on several. The driver treats them as one machine: `status` reads every
//! outlet (one Get per PDU, all its outlets batched) and says on while any
//! outlet is on and off only when every outlet reads off; a command is sent
//! to every outlet (one Set per PDU), so the engine's confirmation of off
//! is a confirmation that each outlet reads off, and `on` is only ever sent
//! by the engine after that. A value that is neither the profile's on nor
//! its off is an error naming the outlet, never a guess (fence_apc_snmp
//! reads anything but "on" as off). [`PowerDriver::state_detail`] names the
//! outlets still on when a transition times out.
//!
//! The power reading is the sum of the outlets' own load (watts), only when
//! every outlet is metered by outlet; bank or phase totals are never used,
//! since other machines draw from the same bank. The engine reads through
//! [`PowerDriver::observe`], which holds outlets that read off but still
//! carry more than `max_off_watts` to be on: after an `off` their load must
//! fall within the power timeout, or the action fails naming it (a welded
//! relay is exactly an outlet that reads off and keeps feeding the node).
//! An outlet name that more than one outlet carries is refused before
//! anything is read or switched.

use super::ber::Oid;
use super::client::Client;
use super::config::{Plug, SnmpConfig};
use super::message::{Value, VarBind};
use super::profile::{self, Alias, Index, Variant};
use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::{Observed, PowerCommand, PowerReading, PowerState};
use std::sync::Arc;
use std::time::Instant;

mod fabric;

/// Most bindings per Get when reading many outlets (stays far below any
/// agent's message size limit).
const BATCH: usize = 32;

/// One outlet resolved to its index on its PDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Resolved {
    switch: u32,
    outlet: i64,
    /// The outlet's arcs on devices that identify it by several (`{index}`).
    index: Option<Index>,
}

impl Resolved {
    /// What a plug option takes for this outlet (`7`, `2:7`, `1.1.7`).
    fn id(&self, v: &Variant) -> String {
        match (&self.index, v.has_switches()) {
            (Some(i), _) => i.to_string(),
            (None, true) => format!("{}:{}", self.switch, self.outlet),
            (None, false) => self.outlet.to_string(),
        }
    }
}

struct Conn {
    client: Client,
    variant: Arc<Variant>,
}

/// One entry of a PDU's outlet listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutletEntry {
    /// What a plug option takes (`7`, or `2:7` on devices with switches).
    pub id: String,
    /// The outlet's name on the device (or its number, per the profile).
    pub alias: String,
    /// Its state, when it reads as on or off.
    pub state: Option<PowerState>,
}

/// A node's outlets as the engine drives them.
pub struct SnmpDriver {
    cfg: SnmpConfig,
    conns: Vec<Option<Conn>>,
    resolved: Vec<Option<Resolved>>,
    last: Vec<Option<PowerState>>,
    /// The last read found every outlet off, yet this load on them (each
    /// outlet's figure, and the total): not off.
    loaded: Option<(Vec<String>, f64)>,
    /// Traffic of sessions already closed.
    spent: super::client::Stats,
    /// Switch ports: what the last read found of each port's link.
    links: Vec<Option<fabric::Link>>,
}

impl SnmpDriver {
    /// Checks the configuration offline; connects to nothing.
    pub fn new(cfg: SnmpConfig) -> Result<Self, super::config::ConfigError> {
        cfg.validate()?;
        let n = cfg.pdus.len();
        let m = cfg.outlets.len();
        Ok(SnmpDriver {
            cfg,
            conns: (0..n).map(|_| None).collect(),
            resolved: vec![None; m],
            last: vec![None; m],
            loaded: None,
            spent: super::client::Stats::default(),
            links: vec![None; m],
        })
    }

    /// Datagrams sent, received and retransmitted, over every PDU session.
    pub fn stats(&self) -> super::client::Stats {
        let mut t = self.spent;
        for c in self.conns.iter().flatten() {
            let s = c.client.stats();
            t.sent += s.sent;
            t.received += s.received;
            t.retransmits += s.retransmits;
        }
        t
    }

    /// The configuration.
    pub fn config(&self) -> &SnmpConfig {
        &self.cfg
    }

    async fn conn(
        &mut self,
        pdu: usize,
        deadline: Option<Instant>,
    ) -> Result<&mut Conn, DriverError> {
        if self.conns[pdu].is_none() {
            let p = &self.cfg.pdus[pdu];
            let mut client =
                Client::connect(&p.host, p.port, p.security.clone(), p.timing, deadline).await?;
            // fence_apc_snmp reads sysObjectID to pick the table; a device
            // without it gets the profile's fallback.
            let sys = match client
                .get(&[profile::sys_object_id()], Stage::Authenticate, deadline)
                .await
            {
                Ok(vbs) => match vbs.first().map(|v| &v.value) {
                    Some(Value::Oid(o)) => Some(o.clone()),
                    _ => None,
                },
                Err(e) if e.kind == ErrorKind::DeviceError => None,
                Err(e) => return Err(e),
            };
            let variant = p.profile.pick(sys.as_ref()).ok_or_else(|| {
                DriverError::new(
                    ErrorKind::Unsupported,
                    Stage::Authenticate,
                    format!(
                        "PDU {}: its sysObjectID {} matches no variant of profile '{}'",
                        p.label,
                        sys.map(|s| s.to_string())
                            .unwrap_or_else(|| "(none)".into()),
                        p.profile.name
                    ),
                )
            })?;
            self.conns[pdu] = Some(Conn { client, variant });
        }
        self.conns[pdu]
            .as_mut()
            .ok_or_else(|| DriverError::new(ErrorKind::Protocol, Stage::Authenticate, "no session"))
    }

    /// Connects to every PDU and resolves every outlet (names are looked up
    /// in the device's names table).
    async fn prepare(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        let (unit, device) = (self.cfg.unit(), self.cfg.device_word());
        if self.cfg.outlets.is_empty() {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                format!("no {unit} is given (the plug or outlets setting)"),
            ));
        }
        for i in 0..self.cfg.outlets.len() {
            if self.resolved[i].is_some() {
                continue;
            }
            let spec = self.cfg.outlets[i].clone();
            let label = self.cfg.outlet_label(i);
            let pdu_label = self.cfg.pdus[spec.pdu].label.clone();
            let conn = self.conn(spec.pdu, deadline).await?;
            let v = conn.variant.clone();
            let r = match &spec.plug {
                Plug::Number { switch, outlet } => Resolved {
                    switch: if v.has_switches() {
                        switch.unwrap_or(1)
                    } else {
                        1
                    },
                    outlet: i64::from(*outlet),
                    index: v
                        .has_index()
                        .then(|| Index::from_arcs(&[*outlet]))
                        .flatten(),
                },
                // A device whose outlets are dotted numbers takes them as given.
                Plug::Name(name) if v.has_index() && Index::parse(name).is_some() => {
                    let index = Index::parse(name);
                    Resolved {
                        switch: 1,
                        outlet: index
                            .and_then(|i| i.arcs().last().copied())
                            .map_or(0, i64::from),
                        index,
                    }
                }
                Plug::Name(name) => {
                    let Some(root) = v.names.clone() else {
                        return Err(DriverError::new(
                            ErrorKind::Config,
                            Stage::Authenticate,
                            format!("{unit} '{label}': {device} {pdu_label} ({}) has no names table; give the {unit} number", v.label),
                        ));
                    };
                    // Every names table (IF-MIB: ifDescr, then ifName); a
                    // port that carries the name in both is one port.
                    let mut found: Vec<Resolved> = Vec::new();
                    for root in std::iter::once(&root).chain(&v.more_names) {
                        let table = conn
                            .client
                            .walk(root, Stage::Authenticate, deadline)
                            .await?;
                        for vb in &table {
                            let text = vb.value.to_text();
                            if text.trim_matches('"') != name {
                                continue;
                            }
                            let suffix = &vb.oid.0[root.0.len()..];
                            let Some((sw, idx)) = v.names_index.match_suffix(suffix) else {
                                continue;
                            };
                            let r = Resolved {
                                switch: sw,
                                outlet: i64::from(idx) - v.index_offset,
                                index: v.names_index.index_of(suffix),
                            };
                            if !found.contains(&r) {
                                found.push(r);
                            }
                        }
                    }
                    match found.as_slice() {
                        [one] => *one,
                        [] => {
                            return Err(DriverError::new(
                                ErrorKind::Config,
                                Stage::Authenticate,
                                format!("Can't find port with name {name} on {device} {pdu_label}"),
                            ))
                        }
                        // Several outlets carry the name: which one feeds
                        // the node cannot be told, so none is touched
                        // (upstream switches one of them and says Success).
                        many => {
                            let ids: Vec<String> = many.iter().map(|r| r.id(&v)).collect();
                            return Err(DriverError::new(
                                ErrorKind::Config,
                                Stage::Authenticate,
                                format!(
                                    "the {unit} name '{name}' is ambiguous on {device} {pdu_label}: \
                                     {unit}s {} all carry it; nothing was switched (give the \
                                     {unit} number)",
                                    ids.join(" and ")
                                ),
                            ));
                        }
                    }
                }
            };
            self.resolved[i] = Some(r);
        }
        Ok(())
    }

    fn oid(v: &Variant, which: Which, r: Resolved) -> Option<Oid> {
        let idx = r.outlet + v.index_offset;
        match which {
            Which::Status => v.status.render_at(r.switch, idx, r.index.as_ref()),
            Which::Control => {
                v.control
                    .render_at(r.switch, idx + v.control_offset, r.index.as_ref())
            }
            Which::Load => v.load.as_ref()?.render_at(r.switch, idx, r.index.as_ref()),
            Which::Link => v.link.as_ref()?.render_at(r.switch, idx, r.index.as_ref()),
        }
    }

    /// Reads one template for every outlet, PDU by PDU: `(outlet index, value)`.
    /// The outlets on PDU `pdu`: their indexes, labels and resolved OIDs
    /// (`None` when the node has no outlet there).
    fn on_pdu(&self, pdu: usize) -> Option<(Vec<usize>, Vec<String>, Vec<Resolved>)> {
        let mine: Vec<usize> = (0..self.cfg.outlets.len())
            .filter(|&i| self.cfg.outlets[i].pdu == pdu)
            .collect();
        if mine.is_empty() {
            return None;
        }
        let labels = mine.iter().map(|&i| self.cfg.outlet_label(i)).collect();
        let resolved = mine.iter().filter_map(|&i| self.resolved[i]).collect();
        Some((mine, labels, resolved))
    }

    async fn read_all(
        &mut self,
        which: Which,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Vec<(usize, Value)>, DriverError> {
        self.prepare(deadline).await?;
        let unit = self.cfg.unit();
        let mut out = Vec::with_capacity(self.cfg.outlets.len());
        for pdu in 0..self.cfg.pdus.len() {
            let Some((mine, labels, resolved)) = self.on_pdu(pdu) else {
                continue;
            };
            let conn = self.conn(pdu, deadline).await?;
            let v = conn.variant.clone();
            let mut oids = Vec::with_capacity(mine.len());
            for (k, r) in resolved.iter().enumerate() {
                oids.push(Self::oid(&v, which, *r).ok_or_else(|| {
                    DriverError::new(
                        ErrorKind::Config,
                        stage,
                        format!(
                            "{unit} {} has no OID on {} (index out of range)",
                            labels[k], v.label
                        ),
                    )
                })?);
            }
            for (chunk_no, chunk) in oids.chunks(BATCH).enumerate() {
                let vbs = conn
                    .client
                    .get(chunk, stage, deadline)
                    .await
                    .map_err(|mut e| {
                        if e.kind == ErrorKind::DeviceError {
                            e.message = format!("{unit}(s) {}: {}", labels.join(", "), e.message);
                        }
                        e
                    })?;
                for (k, vb) in vbs.into_iter().enumerate() {
                    out.push((mine[chunk_no * BATCH + k], vb.value));
                }
            }
        }
        Ok(out)
    }

    fn state_of(&self, v: &Variant, i: usize, value: &Value) -> Result<PowerState, DriverError> {
        match value.as_int() {
            Some(x) if x == v.state_on => Ok(PowerState::On),
            Some(x) if x == v.state_off => Ok(PowerState::Off),
            _ => Err(DriverError::new(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!(
                    "{} {} reads '{}', neither on ({}) nor off ({})",
                    self.cfg.unit(),
                    self.cfg.outlet_label(i),
                    value.to_text(),
                    v.state_on,
                    v.state_off
                ),
            )),
        }
    }

    fn variant_of(&self, outlet: usize) -> Option<Arc<Variant>> {
        self.conns[self.cfg.outlets[outlet].pdu]
            .as_ref()
            .map(|c| c.variant.clone())
    }

    /// The name each of the node's outlets has on its PDU, in the order of
    /// the configuration, with the outlet's label: an outlet given by name
    /// keeps that name while the PDU still has it (`None` once it does
    /// not); one given by number is read from the PDU's names table
    /// (`None` where the profile has no names table or the slot is empty).
    /// One GET per outlet; for `check`'s baseline.
    pub async fn outlet_names(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<(String, Option<String>)>, DriverError> {
        let mut out = Vec::with_capacity(self.cfg.outlets.len());
        for i in 0..self.cfg.outlets.len() {
            let spec = self.cfg.outlets[i].clone();
            let label = self.cfg.outlet_label(i);
            let name = match &spec.plug {
                Plug::Name(n) => self.resolved[i].is_some().then(|| n.clone()),
                Plug::Number { switch, outlet } => {
                    let conn = self.conn(spec.pdu, deadline).await?;
                    let v = conn.variant.clone();
                    let sw = if v.has_switches() {
                        switch.unwrap_or(1)
                    } else {
                        1
                    };
                    let oid = match (&v.names, v.alias) {
                        (Some(root), Alias::Value) => v
                            .names_index
                            .render(sw, i64::from(*outlet) + v.index_offset)
                            .map(|t| Oid(root.0.iter().chain(&t.0).copied().collect())),
                        _ => None,
                    };
                    match oid {
                        None => None,
                        Some(oid) => {
                            let vbs = conn
                                .client
                                .get(std::slice::from_ref(&oid), Stage::Status, deadline)
                                .await?;
                            vbs.first()
                                .filter(|vb| !vb.value.is_exception())
                                .map(|vb| vb.value.to_text().trim_matches('"').to_string())
                                .filter(|t| v.absent_value.as_deref() != Some(t.as_str()))
                        }
                    }
                }
            };
            out.push((label, name));
        }
        Ok(out)
    }

    /// Every outlet on PDU `pdu` with its name and state (for `list`).
    pub async fn list(
        &mut self,
        pdu: usize,
        deadline: Option<Instant>,
    ) -> Result<Vec<OutletEntry>, DriverError> {
        let conn = self.conn(pdu, deadline).await?;
        let v = conn.variant.clone();
        let Some(root) = v.names.clone().or_else(|| v.list_table.clone()) else {
            return Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Status,
                format!("{} has no outlet table to list", v.label),
            ));
        };
        let table = conn.client.walk(&root, Stage::Status, deadline).await?;
        let mut entries = Vec::new();
        let mut status_oids = Vec::new();
        for vb in table {
            let suffix = &vb.oid.0[root.0.len()..];
            let Some((sw, idx)) = v.names_index.match_suffix(suffix) else {
                continue;
            };
            let text = vb.value.to_text();
            if v.absent_value.as_deref() == Some(text.as_str()) {
                continue;
            }
            let number = i64::from(idx) - v.index_offset;
            let index = v.names_index.index_of(suffix);
            let id = Resolved {
                switch: sw,
                outlet: number,
                index,
            }
            .id(&v);
            let alias = match v.alias {
                Alias::Value => text.trim_matches('"').to_string(),
                Alias::Number => number.to_string(),
                Alias::None => String::new(),
            };
            if let Some(o) = v.status.render_at(sw, i64::from(idx), index.as_ref()) {
                status_oids.push((entries.len(), o));
            }
            entries.push(OutletEntry {
                id,
                alias,
                state: None,
            });
        }
        for chunk in status_oids.chunks(BATCH) {
            let oids: Vec<Oid> = chunk.iter().map(|(_, o)| o.clone()).collect();
            // One unreadable state must not hide the listing: read one by
            // one if the batch fails, and leave UNKNOWN where it fails.
            match conn.client.get(&oids, Stage::Status, deadline).await {
                Ok(vbs) => {
                    for ((k, _), vb) in chunk.iter().zip(vbs) {
                        entries[*k].state = state_value(&v, &vb.value);
                    }
                }
                Err(e) if e.kind == ErrorKind::DeviceError => {
                    for (k, o) in chunk {
                        if let Ok(vbs) = conn
                            .client
                            .get(std::slice::from_ref(o), Stage::Status, deadline)
                            .await
                        {
                            entries[*k].state =
                                vbs.first().and_then(|vb| state_value(&v, &vb.value));
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(entries)
    }

    async fn switch_all(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        self.prepare(deadline).await?;
        let unit = self.cfg.unit();
        let mut first_err: Option<DriverError> = None;
        for pdu in 0..self.cfg.pdus.len() {
            let Some((_, labels, resolved)) = self.on_pdu(pdu) else {
                continue;
            };
            let result = async {
                let conn = self.conn(pdu, deadline).await?;
                let v = conn.variant.clone();
                let value = match command {
                    PowerCommand::Off => v.turn_off,
                    _ => v.turn_on,
                };
                let mut vbs = Vec::with_capacity(resolved.len());
                for (k, r) in resolved.iter().enumerate() {
                    let oid = Self::oid(&v, Which::Control, *r).ok_or_else(|| {
                        DriverError::new(
                            ErrorKind::Config,
                            Stage::Command,
                            format!("{unit} {} has no control OID", labels[k]),
                        )
                    })?;
                    vbs.push(VarBind {
                        oid,
                        value: Value::Integer(value),
                    });
                }
                conn.client
                    .set(vbs, Stage::Command, deadline)
                    .await
                    .map_err(|mut e| {
                        e.message = format!("{unit}(s) {}: {}", labels.join(", "), e.message);
                        e
                    })
            }
            .await;
            // Keep going: the other PDUs' outlets are switched even when one
            // PDU fails, and the first failure is reported.
            if let Err(e) = result {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl SnmpDriver {
    /// Every outlet's own load, in watts, and their sum; `None` when some
    /// outlet's PDU does not meter outlets (bank or phase totals are never
    /// used: other machines draw from them too).
    async fn loads(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<(Vec<String>, f64)>, DriverError> {
        self.prepare(deadline).await?;
        for i in 0..self.cfg.outlets.len() {
            if self.variant_of(i).is_none_or(|v| v.load.is_none()) {
                return Ok(None);
            }
        }
        let values = self.read_all(Which::Load, Stage::Status, deadline).await?;
        let mut total = 0.0;
        let mut parts = Vec::new();
        for (i, value) in values {
            let v = self.variant_of(i).ok_or_else(|| {
                DriverError::new(ErrorKind::Protocol, Stage::Status, "no session")
            })?;
            let Some(raw) = value.as_int() else {
                return Err(DriverError::new(
                    ErrorKind::StatusUnreadable,
                    Stage::Status,
                    format!(
                        "outlet {} load reads '{}', not a number",
                        self.cfg.outlet_label(i),
                        value.to_text()
                    ),
                ));
            };
            let w = raw as f64 * v.load_scale;
            total += w;
            parts.push(format!("{} {w} W", self.cfg.outlet_label(i)));
        }
        Ok(Some((parts, total)))
    }
}

#[derive(Clone, Copy)]
enum Which {
    Status,
    Control,
    Load,
    /// A switch port's link state (profiles with `link`: IF-MIB).
    Link,
}

fn state_value(v: &Variant, value: &Value) -> Option<PowerState> {
    match value.as_int() {
        Some(x) if x == v.state_on => Some(PowerState::On),
        Some(x) if x == v.state_off => Some(PowerState::Off),
        _ => None,
    }
}

impl PowerDriver for SnmpDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        self.prepare(deadline).await?;
        let mut parts = Vec::new();
        for (i, c) in self.conns.iter().enumerate() {
            if let Some(c) = c {
                parts.push(format!(
                    "{} ({}): {}",
                    self.cfg.pdus[i].label,
                    c.variant.label,
                    c.client.describe()
                ));
            }
        }
        let outlets: Vec<String> = (0..self.cfg.outlets.len())
            .map(|i| self.cfg.outlet_label(i))
            .collect();
        Ok(format!(
            "{}; {}s {}",
            parts.join("; "),
            self.cfg.unit(),
            outlets.join(", ")
        ))
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        let values = self
            .read_all(Which::Status, Stage::Status, deadline)
            .await?;
        let mut any_on = false;
        for (i, value) in values {
            let v = self.variant_of(i).ok_or_else(|| {
                DriverError::new(ErrorKind::Protocol, Stage::Status, "no session")
            })?;
            let s = self.state_of(&v, i, &value)?;
            self.last[i] = Some(s);
            any_on |= s == PowerState::On;
        }
        // Switch ports: down only once their link reads down too.
        if self.has_links() {
            let all_down = self.read_links(deadline).await?;
            any_on |= !all_down;
        }
        Ok(if any_on {
            PowerState::On
        } else {
            PowerState::Off
        })
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        match command {
            PowerCommand::Off | PowerCommand::On => self.switch_all(command, deadline).await,
            other => Err(DriverError::new(
                ErrorKind::Unsupported,
                Stage::Command,
                format!(
                    "a PDU outlet has no '{other}' command fencekit can confirm (use off and on)"
                ),
            )),
        }
    }

    async fn power_reading(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<PowerReading>, DriverError> {
        Ok(self
            .loads(deadline)
            .await?
            .map(|(parts, total)| PowerReading {
                watts: total,
                source: format!("snmp outlet load ({})", parts.join(", ")),
            }))
    }

    /// Reads through [`status`](Self::status): on while any outlet is on.
    /// When every outlet reads off and the PDU meters them, their load must
    /// have fallen too: an outlet that reads off while its outlets still
    /// carry more than `max_off_watts` (a welded relay, a status that lies)
    /// is not off, so it reads on (the engine then keeps polling, and at
    /// its power timeout fails naming the load, [`Self::state_detail`]). A
    /// load that cannot be read is no evidence either way.
    async fn observe(&mut self, deadline: Option<Instant>) -> Result<Observed, DriverError> {
        self.loaded = None;
        let state = self.status(deadline).await?;
        if state == PowerState::On {
            return Ok(Observed::Settled(state));
        }
        match self.loads(deadline).await {
            Ok(Some((parts, total))) if total > self.cfg.max_off_watts => {
                tracing::warn!(
                    total,
                    "the outlets read off but still carry load ({})",
                    parts.join(", ")
                );
                self.loaded = Some((parts, total));
                Ok(Observed::Settled(PowerState::On))
            }
            Ok(_) => Ok(Observed::Settled(state)),
            Err(e) => {
                tracing::debug!(error = %e, "no load reading after the outlets read off");
                Ok(Observed::Settled(state))
            }
        }
    }

    fn state_detail(&self) -> Option<String> {
        if let Some((parts, total)) = &self.loaded {
            return Some(format!(
                "the outlets read off but still carry {total:.0} W ({}; more than {:.0} W): a \
                 welded relay, or not the node's outlets",
                parts.join(", "),
                self.cfg.max_off_watts
            ));
        }
        if let Some(d) = self.link_detail() {
            return Some(d);
        }
        let on: Vec<String> = (0..self.cfg.outlets.len())
            .filter(|&i| self.last[i] == Some(PowerState::On))
            .map(|i| self.cfg.outlet_label(i))
            .collect();
        if on.is_empty() {
            return None;
        }
        Some(format!(
            "{}(s) still on: {}",
            self.cfg.unit(),
            on.join(", ")
        ))
    }

    async fn close(&mut self) {
        // UDP has no session to close; dropping the sockets is enough.
        let total = self.stats();
        for c in &mut self.conns {
            *c = None;
        }
        self.spent = total;
        self.resolved.iter_mut().for_each(|r| *r = None);
    }
}
