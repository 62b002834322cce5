//! A simulated BMC's chassis: power state, transitions, fault knobs and
//! counters that tests read.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Fault knobs of one simulated BMC.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Faults {
    /// Fraction of datagrams dropped, in each direction (0.0-1.0).
    pub loss: f64,
    /// Received datagrams (1-based count) that are dropped.
    pub drop: Vec<u64>,
    /// Delay before every answer.
    pub delay: Duration,
    /// A power change becomes visible this long after the command.
    pub transition: Duration,
    /// Power never changes; commands are accepted and ignored.
    pub stuck: bool,
    /// Off-when-off and cycle-when-off answer D5h (quirk 4/5: Dell and others).
    pub strict_state: bool,
    /// Never answer anything (a black hole that still owns the port).
    pub silent: bool,
    /// Never answer Get Channel Cipher Suites (quirk 1: ipmi_sim and some BMCs).
    pub no_cipher_query: bool,
    /// Only the IPMI side is silent (the Redfish side still answers).
    pub ipmi_silent: bool,
    /// The BMC lies: it accepts power commands and reports the commanded
    /// state, but the node's real power never changes (the host keeps
    /// answering). The case `verify` exists to catch.
    pub lying: bool,
    /// The BMC flaps: after a power command its reports alternate between
    /// the new and the old state on every read (no two reads agree).
    pub flap: bool,
    /// The power meter lies: it reports the draw of a running machine
    /// whatever the real power is (`verify` must not trust it blindly).
    pub draw_lies: bool,
    /// The BMC cannot say who the machine is: IPMI Get System GUID is
    /// answered "invalid command" (C1h), and Redfish leaves out the
    /// system's `UUID` and `SerialNumber` (as older firmware does).
    pub no_identity: bool,
    /// The simulated host's kernel is alive but its service stopped: while
    /// the node is on, its port answers with an RST (see [`super::host`]).
    pub host_rst: bool,
    /// The simulated host accepts connections whatever the chassis' power
    /// (the BMC controls another machine, or cut the wrong power).
    pub host_alive: bool,
    /// The BMC has no power meter: power readings are unsupported (see
    /// [`Chassis::meter`]).
    pub no_meter: bool,
    /// No diagnostic interrupt (many BMCs): IPMI answers Chassis Control
    /// "pulse diagnostic interrupt" with CCh (invalid data field) and logs
    /// nothing; Redfish leaves `Nmi` out of the reset types.
    pub no_nmi: bool,
    /// IPMI vendor non-compliance (docs/ipmi.md): what real BMCs get wrong
    /// on the wire, for testing the workarounds against.
    pub quirks: IpmiQuirks,
    /// The user's privilege limit (IPMI level: 2 user, 3 operator; `None`:
    /// administrator): a session asking for more is refused in RAKP 2
    /// (status 0Ah, unauthorized role) and Set Session Privilege above it
    /// is answered 81h, as BMCs do for a demoted account.
    pub privilege_limit: Option<u8>,
}

/// IPMI wire behaviours of non-compliant BMCs, each modelled on what
/// FreeIPMI's documentation of its workarounds (`man ipmipower`,
/// WORKAROUNDS) describes and on the IPMI 2.0 specification. Every field is
/// one `--fault` knob (`lab::knobs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IpmiQuirks {
    /// `bad-checksum`: every IPMI message the BMC sends has a wrong second
    /// (data) checksum; integrity and authentication codes are computed over
    /// the message as sent, so they verify (Supermicro X9: nochecksumcheck).
    pub bad_checksum: bool,
    /// `rakp2-long`: the RAKP 2 key-exchange code carries one byte more than
    /// the suite's HMAC (Supermicro H8QME, Sun ILOM: supermicro20, sun20).
    pub rakp2_long: bool,
    /// `rakp4-untruncated`: the RAKP 4 integrity check value is the whole
    /// HMAC instead of its first 12 or 16 bytes (integritycheckvalue).
    pub rakp4_untruncated: bool,
    /// `pad-username`: RAKP 1 must carry the user name padded with zeros to
    /// 16 bytes; any other length is refused "unauthorized name" (0Dh)
    /// (Intel SE7520AF2: intel20).
    pub pad_username: bool,
    /// `untagged-ciphers`: Get Channel Cipher Suites lists its records
    /// without the C0h start-of-record tags (Sun ILOM: sun20).
    pub untagged_ciphers: bool,
    /// `cipher-garbage`: Get Channel Cipher Suites answers bytes that are
    /// no cipher-suite records at all.
    pub cipher_garbage: bool,
    /// `opensesspriv`: the RAKP codes and the session integrity key are
    /// hashed with the privilege of the Open Session request in place of
    /// RAKP 1's (Sun ILOM, Supermicro X8, Intel S5500WBV …: opensesspriv).
    pub opensesspriv: bool,
    /// `ipmi15-only`: an IPMI 1.5 BMC: every RMCP+ datagram is ignored, Get
    /// Channel Cipher Suites is an unknown command (C1h), and Get Channel
    /// Authentication Capabilities reports no IPMI 2.0.
    pub ipmi15_only: bool,
    /// `session-id-zero`: in an active IPMI 1.5 session the BMC's replies
    /// carry session ID 0 (Tyan S2882: idzero).
    pub session_id_zero: bool,
    /// `bad-authcode`: the authentication codes of the BMC's IPMI 1.5
    /// in-session replies do not verify (Intel/Quanta/Wiwynn Windmill:
    /// noauthcodecheck).
    pub bad_authcode: bool,
    /// `per-msg-off`: IPMI 1.5 per-message authentication disabled: Get
    /// Channel Authentication Capabilities says so, Activate Session names
    /// authentication type none for the rest of the session, requests
    /// without a code are accepted, and each reply uses its request's type.
    pub per_msg_off: bool,
    /// `unexpected-auth`: as `per-msg-off`, but every reply carries an MD5
    /// code, also to requests without one (Dell PE2850: unexpectedauth).
    pub unexpected_auth: bool,
    /// `permsg-required`: as `per-msg-off` in what it declares, but requests
    /// without an authentication code are dropped (IBM eServer 325:
    /// forcepermsg).
    pub permsg_required: bool,
    /// `endianseq`: the session sequence numbers of the BMC's IPMI 1.5
    /// replies are written with their bytes swapped (Sun ILOM 1.0/2.0:
    /// endianseq).
    pub endianseq: bool,
    /// `authcap-wrong`: Get Channel Authentication Capabilities lists only
    /// authentication type none, although MD5 and straight password work
    /// (Asus, Intel SR1520ML, Sun ELOM: authcap).
    pub authcap_wrong: bool,
    /// `busy=N`: the next N chassis requests (status or control) are
    /// answered C0h, node busy, and not carried out.
    pub busy: u32,
    /// `busy-timeout=N`: the next N chassis requests are answered C3h,
    /// timeout while processing; a Chassis Control is carried out anyway.
    pub busy_timeout: u32,
    /// `control-timeout=N`: the next N Chassis Control requests are carried
    /// out and answered C3h, timeout while processing.
    pub control_timeout: u32,
    /// `operator-user`: the user's privilege limit is operator (RMCP+: Set
    /// Session Privilege Level to administrator answers 81h; IPMI 1.5:
    /// Activate Session asking for administrator answers 86h).
    pub operator_user: bool,
}

/// Who a simulated machine is: what its BMC reports as the system UUID
/// (Redfish `UUID`, IPMI Get System GUID) and serial number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabIdentity {
    /// Canonical lower-case 8-4-4-4-12 text (RFC 4122 field order).
    pub uuid: String,
    /// Serial number.
    pub serial: String,
}

impl LabIdentity {
    /// The identity of lab node `index` (0-based): distinct per node, the
    /// same on every run, so a recorded inventory stays valid.
    pub fn for_node(index: u32) -> Self {
        let n = index + 1;
        LabIdentity {
            uuid: format!(
                "4c414230-{:04x}-4{:03x}-8000-{:012x}",
                n >> 12 & 0xffff,
                n & 0xfff,
                0xfe00_0000_0000u64 | n as u64
            ),
            serial: format!("LAB{n:05}"),
        }
    }
}

impl Default for LabIdentity {
    fn default() -> Self {
        LabIdentity::for_node(0)
    }
}

/// Watts a simulated running machine draws.
pub const WATTS_ON: f64 = 212.0;
/// Watts a simulated machine draws while off (BMC and fans on standby power).
pub const WATTS_STANDBY: f64 = 9.0;

/// Counters a test can read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Datagrams received (before drops).
    pub received: u64,
    /// Datagrams answered.
    pub answered: u64,
    /// Sessions opened (RAKP 4 / Activate Session succeeded).
    pub sessions: u64,
    /// Sessions closed by Close Session.
    pub closed: u64,
    /// Authentication attempts (RAKP 3 / Activate Session), failed or not.
    pub auth_attempts: u64,
    /// Failed authentication attempts.
    pub auth_failures: u64,
    /// Chassis Control commands received.
    pub commands: u64,
    /// Get Chassis Status requests received.
    pub status_reads: u64,
}

/// The chassis' power as the simulation sees it.
#[derive(Debug)]
pub struct Chassis {
    on: bool,
    /// What a lying BMC claims (see [`Faults::lying`]).
    claimed: Option<bool>,
    /// Reads since the last command (for [`Faults::flap`]).
    reads: u64,
    /// A pending change: the new state and when it becomes visible.
    pending: Vec<(bool, Instant)>,
    /// Configured faults.
    pub faults: Faults,
    /// Counters.
    pub counters: Counters,
    /// Every power command, in order, for tests ("off", "on", "cycle", …).
    pub log: Vec<&'static str>,
    /// Who the machine is (a test or a fault may change it: a swapped cable).
    pub identity: LabIdentity,
    /// Mains power from the PDU outlets feeding the machine. Without it
    /// nothing runs: the host is down, the BMC is silent, the meter reads 0.
    mains: bool,
    /// `faults.silent` as it was before mains was cut (restored with mains).
    silent_before_cut: bool,
    /// A commanded change still under way: where it heads and when it is
    /// done (what a BMC that shows transitions reports as PoweringOn/Off).
    transit: Option<(bool, Instant)>,
}

/// How long a power cycle keeps the node off (ipmi_sim uses 1 s).
pub const CYCLE_OFF_TIME: Duration = Duration::from_millis(1000);

impl Chassis {
    fn settle(&mut self) {
        let now = Instant::now();
        self.pending.sort_by_key(|(_, t)| *t);
        while let Some((on, t)) = self.pending.first().copied() {
            if t > now {
                break;
            }
            self.on = on;
            self.pending.remove(0);
        }
    }

    /// The power state the BMC reports (a lying BMC reports what it was
    /// told; a flapping one alternates after a command).
    pub fn is_on(&mut self) -> bool {
        self.settle();
        let reported = match (self.faults.lying, self.claimed) {
            (true, Some(c)) => c,
            _ => self.on,
        };
        if self.faults.flap && !self.log.is_empty() {
            self.reads += 1;
            if self.reads.is_multiple_of(2) {
                return !reported;
            }
        }
        reported
    }

    /// The node's real power state (what its host experiences): on only
    /// with mains power.
    pub fn truly_on(&mut self) -> bool {
        self.settle();
        self.on && self.mains
    }

    /// True while some outlet feeds the machine.
    pub fn has_mains(&self) -> bool {
        self.mains
    }

    /// Cuts or restores mains power (what a lab PDU does when it switches
    /// the machine's outlets). Without mains the BMC goes silent; with it
    /// back the machine returns to its last power state (the usual
    /// "restore last state" firmware setting).
    pub fn set_mains(&mut self, mains: bool) {
        if self.mains == mains {
            return;
        }
        self.mains = mains;
        if mains {
            self.faults.silent = self.silent_before_cut;
        } else {
            self.silent_before_cut = self.faults.silent;
            self.faults.silent = true;
        }
    }

    /// The power draw the BMC's meter reports: the real draw, unless the
    /// meter lies ([`Faults::draw_lies`]).
    pub fn watts(&mut self) -> f64 {
        if !self.mains {
            return 0.0;
        }
        if self.truly_on() || self.faults.draw_lies {
            WATTS_ON
        } else {
            WATTS_STANDBY
        }
    }

    /// What the BMC's power meter shows, if it has one ([`Faults::no_meter`]).
    pub fn meter(&mut self) -> Option<f64> {
        (!self.faults.no_meter).then(|| self.watts())
    }

    /// Schedules a power change; it replaces any change still pending (a
    /// ForceOff during a boot cancels the boot, as on real BMCs).
    fn schedule(&mut self, on: bool, after: Duration) {
        self.pending.clear();
        if after.is_zero() {
            self.on = on;
            self.transit = None;
        } else {
            let until = Instant::now() + after;
            self.pending.push((on, until));
            self.transit = Some((on, until));
        }
    }

    /// The change under way, if any: `Some(true)` powering on, `Some(false)`
    /// powering off (the node still shows its old state meanwhile).
    pub fn transition(&mut self) -> Option<bool> {
        self.settle();
        match self.transit {
            Some((target, until)) if Instant::now() < until && self.on != target => Some(target),
            _ => {
                self.transit = None;
                None
            }
        }
    }

    /// Starts a power change of `faults.transition` as another actor would
    /// (the power button, a watchdog): not a command this BMC received.
    pub fn begin_transition(&mut self, on: bool) {
        let t = self.faults.transition;
        self.schedule(on, t);
    }

    /// The real power at `at`, the power once every pending change is done,
    /// and when that is (for tests that look at the node after a client).
    pub fn forecast(&mut self, at: Instant) -> (bool, bool, Instant) {
        self.settle();
        let mut now_on = self.on;
        let mut last = self.on;
        let mut ends = Instant::now();
        for (on, t) in &self.pending {
            if *t <= at {
                now_on = *on;
            }
            last = *on;
            ends = ends.max(*t);
        }
        (now_on, last, ends)
    }

    /// Applies a Chassis Control request; returns the completion code.
    pub fn control(&mut self, op: u8) -> u8 {
        self.counters.commands += 1;
        self.reads = 0;
        let on = self.is_on();
        if op == 4 && self.faults.no_nmi {
            return 0xcc;
        }
        let name = match op {
            0 => "off",
            1 => "on",
            2 => "cycle",
            3 => "reset",
            4 => "diag",
            5 => "soft",
            _ => return 0xcc,
        };
        self.log.push(name);
        let t = self.faults.transition;
        if self.faults.strict_state && !on && matches!(op, 0 | 2 | 5) {
            return 0xd5;
        }
        if self.faults.lying {
            match op {
                0 | 5 => self.claimed = Some(false),
                1 => self.claimed = Some(true),
                _ => {}
            }
            return 0;
        }
        if self.faults.stuck {
            return 0;
        }
        match op {
            0 | 5 => self.schedule(false, t),
            1 => self.schedule(true, t),
            2 => {
                self.schedule(false, t);
                self.pending
                    .push((true, Instant::now() + t + CYCLE_OFF_TIME));
            }
            _ => {}
        }
        0
    }
}

/// A shared handle on one simulated BMC's chassis.
#[derive(Clone, Debug)]
pub struct Bmc(Arc<Mutex<Chassis>>);

impl Bmc {
    /// A BMC with the given initial power and faults.
    pub fn new(on: bool, faults: Faults) -> Self {
        Bmc(Arc::new(Mutex::new(Chassis {
            on,
            claimed: None,
            reads: 0,
            pending: Vec::new(),
            faults,
            counters: Counters::default(),
            log: Vec::new(),
            identity: LabIdentity::default(),
            mains: true,
            silent_before_cut: false,
            transit: None,
        })))
    }

    /// Locks the chassis (a poisoned lock is recovered: the simulation has no invariants to lose).
    pub fn lock(&self) -> MutexGuard<'_, Chassis> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The visible power state.
    pub fn is_on(&self) -> bool {
        self.lock().is_on()
    }

    /// Sets the power state at once (a test's hand on the switch).
    pub fn set_on(&self, on: bool) {
        let mut c = self.lock();
        c.pending.clear();
        c.transit = None;
        c.claimed = None;
        c.on = on;
    }

    /// The node's real power state (what its host experiences).
    pub fn truly_on(&self) -> bool {
        self.lock().truly_on()
    }

    /// Replaces the fault knobs.
    pub fn set_faults(&self, f: Faults) {
        self.lock().faults = f;
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        self.lock().counters
    }

    /// Who the machine is.
    pub fn identity(&self) -> LabIdentity {
        self.lock().identity.clone()
    }

    /// Changes who the machine is (a replaced mainboard, a swapped cable).
    pub fn set_identity(&self, id: LabIdentity) {
        self.lock().identity = id;
    }

    /// The power commands received, in order.
    pub fn log(&self) -> Vec<&'static str> {
        self.lock().log.clone()
    }

    /// True while some outlet feeds the machine.
    pub fn has_mains(&self) -> bool {
        self.lock().has_mains()
    }

    /// Cuts or restores mains power (see [`Chassis::set_mains`]).
    pub fn set_mains(&self, mains: bool) {
        self.lock().set_mains(mains);
    }

    /// True when both handles are the same machine.
    pub fn same(&self, other: &Bmc) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_distinct_uuids() {
        let a = LabIdentity::for_node(0);
        let b = LabIdentity::for_node(1);
        let c = LabIdentity::for_node(4095);
        assert_ne!(a, b);
        assert_ne!(b.uuid, c.uuid);
        for id in [&a, &b, &c] {
            assert_eq!(
                crate::engine::identity::normalise_uuid(&id.uuid).as_deref(),
                Some(id.uuid.as_str())
            );
        }
        assert_eq!(a.serial, "LAB00001");
    }

    #[test]
    fn without_mains_nothing_runs_and_last_state_returns() {
        let bmc = Bmc::new(true, Faults::default());
        bmc.set_mains(false);
        assert!(!bmc.truly_on());
        assert!(bmc.lock().faults.silent, "no mains: the BMC is silent");
        assert_eq!(bmc.lock().watts(), 0.0);
        bmc.set_mains(true);
        assert!(bmc.truly_on(), "restores the last power state");
        assert!(!bmc.lock().faults.silent);
    }

    #[test]
    fn the_meter_follows_real_power_unless_it_lies() {
        let bmc = Bmc::new(
            true,
            Faults {
                lying: true,
                ..Faults::default()
            },
        );
        assert_eq!(bmc.lock().watts(), WATTS_ON);
        bmc.lock().control(0);
        assert!(!bmc.is_on(), "a lying BMC reports off");
        assert_eq!(bmc.lock().watts(), WATTS_ON, "the host still draws power");
        bmc.set_on(false);
        assert_eq!(bmc.lock().watts(), WATTS_STANDBY);
        bmc.lock().faults.draw_lies = true;
        assert_eq!(bmc.lock().watts(), WATTS_ON);
    }
}
