//! What every set-up state and the active session share: the refusal
//! record ([`Rejected`]), the transmissions of one request ([`Sent`]),
//! sessionless requests, and the error helpers.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::ipmi::codec::{self, payload, Frame, Rmcp, Session};
use crate::ipmi::workaround::Workaround;

/// RAKP 1 role bit: look the user up by name only (IPMI 2.0 table 13-11).
pub(super) const NAME_ONLY_LOOKUP: u8 = 0x10;
/// Transmissions whose tag (or rqSeq) is remembered per state; older ones
/// are forgotten (their answers are then ignored, and re-sent for).
pub(super) const REMEMBERED: usize = 16;

/// Datagram → IPMI body, or `None` if it is not an IPMI-class RMCP packet.
pub(super) fn ipmi_body(d: &[u8]) -> Option<&[u8]> {
    match codec::decode_rmcp(d) {
        Ok(Rmcp::Ipmi(b)) => Some(b),
        _ => None,
    }
}

/// Picks out an unauthenticated RMCP+ payload of type `want`.
pub(super) fn v20_payload(d: &[u8], want: u8) -> Option<Vec<u8>> {
    let body = ipmi_body(d)?;
    match codec::decode_session(body, 0) {
        Ok(Session::V20(p)) if p.payload_type == want && !p.encrypted => Some(p.payload.to_vec()),
        _ => None,
    }
}

pub(super) fn err(kind: ErrorKind, stage: Stage, msg: impl Into<String>) -> DriverError {
    DriverError::new(kind, stage, msg)
}

pub(super) fn rmcpp_error(stage: Stage, step: &str, status: u8) -> DriverError {
    let text = codec::rmcpp_status_text(status);
    let kind = match status {
        0x01 | 0x0b => ErrorKind::Busy,
        0x0d | 0x0c => ErrorKind::UsernameInvalid,
        0x0f => ErrorKind::PasswordInvalid,
        0x09 | 0x0a => ErrorKind::PrivilegeNotObtained,
        0x03..=0x07 | 0x10 | 0x11 => ErrorKind::CipherUnsupported,
        _ => ErrorKind::DeviceError,
    };
    let hint = match kind {
        ErrorKind::UsernameInvalid => ": the BMC does not know this user name",
        ErrorKind::PasswordInvalid => ": the password (or K_g key) is wrong",
        _ => "",
    };
    err(
        kind,
        stage,
        format!("the BMC refused {step}: {text} (RMCP+ status {status:#04x}){hint}"),
    )
}

/// The identifiers (message tags, or rqSeqs) given to the transmissions of
/// one request, in order: an answer echoing one of them names its
/// transmission (1-based).
#[derive(Clone, Debug, Default)]
pub struct Sent {
    pub(super) ids: Vec<u8>,
    pub(super) first: u32,
}

/// Replies that claimed to be a session's and were refused, counted by
/// why. "No answer" is said only when there are none (see the driver).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// What was wrong with the last one.
    pub why: &'static str,
    /// The workaround that would accept the last one, if one would.
    pub workaround: Option<Workaround>,
    /// How many were refused, for every reason.
    pub count: u32,
    /// How many for each reason, in the order first seen.
    pub reasons: Vec<Refusal>,
}

/// One reason for refusing replies, and how many it refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// What was wrong with them ("arrived without their integrity codes").
    pub why: &'static str,
    /// The workaround that would accept them, if one would.
    pub workaround: Option<Workaround>,
    /// How many.
    pub count: u32,
    /// False for what a late or stray datagram also shows (another
    /// session's ID, a stale sequence number): named, but it does not turn
    /// silence into a protocol error.
    pub decisive: bool,
}

impl Rejected {
    /// Records one more refusal for `why`.
    pub(super) fn record(
        slot: &mut Option<Rejected>,
        why: &'static str,
        workaround: Option<Workaround>,
        decisive: bool,
    ) {
        let r = slot.get_or_insert_with(|| Rejected {
            why,
            workaround,
            count: 0,
            reasons: Vec::new(),
        });
        r.why = why;
        r.workaround = workaround;
        r.count += 1;
        match r.reasons.iter_mut().find(|x| x.why == why) {
            Some(x) => x.count += 1,
            None => r.reasons.push(Refusal {
                why,
                workaround,
                count: 1,
                decisive,
            }),
        }
    }

    /// How many refusals were decisive (see [`Refusal::decisive`]).
    pub fn decisive(&self) -> u32 {
        self.reasons
            .iter()
            .filter(|x| x.decisive)
            .map(|x| x.count)
            .sum()
    }

    /// Counts per reason since `before` (an earlier copy of this record).
    pub fn since(&self, before: Option<&Rejected>) -> Rejected {
        let mut out = Rejected {
            why: self.why,
            workaround: self.workaround,
            count: 0,
            reasons: Vec::new(),
        };
        for x in &self.reasons {
            let was = before
                .and_then(|b| b.reasons.iter().find(|y| y.why == x.why))
                .map_or(0, |y| y.count);
            if x.count > was {
                out.count += x.count - was;
                out.reasons.push(Refusal {
                    count: x.count - was,
                    ..x.clone()
                });
            }
        }
        out
    }

    /// "3 answers from FROM to WHAT were received and refused: WHY (2);
    /// WHY (1); --workaround W accepts them …".
    pub fn describe(&self, from: &str, what: &str) -> String {
        let whys: Vec<String> = if self.reasons.len() <= 1 {
            vec![self.why.to_string()]
        } else {
            self.reasons
                .iter()
                .map(|x| format!("{} ({})", x.why, x.count))
                .collect()
        };
        let hint = match self
            .reasons
            .iter()
            .find_map(|x| x.workaround)
            .or(self.workaround)
        {
            Some(w) if w.weakens_security() => format!(
                "; --workaround {w} accepts them, at a cost: {}",
                w.entry().security_note()
            ),
            Some(w) => format!("; --workaround {w} accepts them"),
            None => String::new(),
        };
        format!(
            "{} answer{} from {from} to {what} {} received and refused: {}{hint}",
            self.count,
            if self.count == 1 { "" } else { "s" },
            if self.count == 1 { "was" } else { "were" },
            whys.join("; ")
        )
    }
}

impl Sent {
    /// Records the identifier of the next transmission.
    pub fn push(&mut self, id: u8) {
        if self.ids.len() == REMEMBERED {
            self.ids.remove(0);
            self.first += 1;
        }
        self.ids.push(id);
    }

    /// The transmission (1-based) that carried `id`, if it was one of ours.
    /// Identifiers are distinct per transmission, so the latest match wins.
    pub fn which(&self, id: u8) -> Option<u32> {
        self.ids
            .iter()
            .rposition(|x| *x == id)
            .map(|i| self.first + i as u32 + 1)
    }

    /// Transmissions so far.
    pub fn count(&self) -> u32 {
        self.first + self.ids.len() as u32
    }
}

/// Sessionless request in IPMI 1.5 framing (auth type none, session 0),
/// which every BMC accepts before a session exists.
pub fn sessionless_request(netfn: u8, cmd: u8, rq_seq: u8, data: &[u8]) -> Vec<u8> {
    let f = Frame::request(netfn, cmd, rq_seq, data).encode();
    codec::encode_v15(0, 0, 0, None, &f)
}

/// Picks the response to a sessionless request out of a datagram (any framing).
pub fn sessionless_response(d: &[u8], netfn: u8, cmd: u8, rq_seq: u8) -> Option<Frame> {
    let body = ipmi_body(d)?;
    let p = match codec::decode_session(body, 0).ok()? {
        Session::V15(p) if p.session_id == 0 => p.payload,
        Session::V20(p) if p.session_id == 0 && p.payload_type == payload::IPMI => p.payload,
        _ => return None,
    };
    let f = Frame::decode(p).ok()?;
    f.answers(netfn, cmd, rq_seq).then_some(f)
}

/// Picks the response to a sessionless request sent with any of the rqSeqs
/// in `sent`: the frame, the transmission it answers, and whether its IPMI
/// checksums match (nothing else vouches for a sessionless answer, so the
/// caller decides what a wrong one means: see `nochecksumcheck`).
pub fn sessionless_answer(d: &[u8], netfn: u8, cmd: u8, sent: &Sent) -> Option<(Frame, u32, bool)> {
    let body = ipmi_body(d)?;
    let p = match codec::decode_session(body, 0).ok()? {
        Session::V15(p) if p.session_id == 0 => p.payload,
        Session::V20(p) if p.session_id == 0 && p.payload_type == payload::IPMI => p.payload,
        _ => return None,
    };
    let (f, sums_ok) = Frame::decode_unchecked(p).ok()?;
    let n = sent.which(f.seq)?;
    f.answers(netfn, cmd, f.seq).then_some((f, n, sums_ok))
}

/// The error for a set-up answer whose IPMI checksum is wrong, when
/// nothing else vouches for it and `nochecksumcheck` was not asked for.
pub(super) fn bad_checksum(stage: Stage, what: &str) -> DriverError {
    err(
        ErrorKind::Protocol,
        stage,
        format!(
            "the BMC answered {what}, but the answer's IPMI checksum is wrong (seen on \
             Supermicro X9 boards): --workaround nochecksumcheck accepts such answers"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_by_reason() {
        let mut slot = None;
        Rejected::record(
            &mut slot,
            "they arrived without their integrity codes",
            None,
            true,
        );
        let before = slot.clone();
        Rejected::record(
            &mut slot,
            "they arrived without their integrity codes",
            None,
            true,
        );
        Rejected::record(
            &mut slot,
            "their sequence numbers were replayed or stale",
            None,
            false,
        );
        let r = slot.unwrap();
        assert_eq!((r.count, r.decisive()), (3, 2));
        let since = r.since(before.as_ref());
        assert_eq!((since.count, since.decisive()), (2, 1));
        assert_eq!(
            since.describe("h", "Get Chassis Status"),
            "2 answers from h to Get Chassis Status were received and refused: they arrived \
             without their integrity codes (1); their sequence numbers were replayed or stale (1)"
        );
        // one reason: said once, without a count
        let mut one = None;
        Rejected::record(&mut one, "they carry another session's ID", None, false);
        let one = one.unwrap();
        assert_eq!(one.decisive(), 0);
        assert_eq!(
            one.describe("h", "x"),
            "1 answer from h to x was received and refused: they carry another session's ID"
        );
    }
}
