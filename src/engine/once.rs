//! At most once: whether a power command whose answer never came may be
//! sent again. One pure function, [`after_silence`], that every protocol
//! driver asks (IPMI in `IpmiDriver::control`, Redfish after its reset
//! POST); the engine never re-sends a command that ended in
//! [`crate::engine::error::ErrorKind::OutcomeUnknown`].
//!
//! The rule: a command is sent again only when its effect can be read back
//! and a read shows it is not there, and only over a path that may have
//! lost the request itself. A cycle, a reset or an NMI leaves nothing a
//! later read can tell from "never carried out" (a cycle that already
//! finished reads on, as before it), so after silence they are never sent
//! again: their outcome is unknown, a result of its own, not a failure to
//! retry.

use super::power::{PowerCommand, PowerState};

/// How the answer went missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Silence {
    /// A datagram that may have been lost on the way (IPMI over UDP): the
    /// device may never have seen the request.
    MaybeLost,
    /// A request delivered over a stream whose answer is late (Redfish over
    /// TCP): the device has it and may still be carrying it out.
    Late,
}

/// What may follow a power command that went unanswered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterSilence {
    /// The read shows the command's effect: it was carried out. Done.
    TookEffect,
    /// Sending the same request again is safe: its effect can be read back,
    /// the read shows it is not there, and the request may have been lost.
    SendAgain,
    /// Whether it was carried out cannot be known: never send it again.
    Unknown,
}

/// The at-most-once rule: what may follow `command`, sent while the
/// device read `before` and answered by nothing, now that a read shows
/// `now` (`None`: no read could be made), the answer missing as `silence`
/// says.
///
/// | command | read now | silence | decision |
/// |---|---|---|---|
/// | any | none | any | `Unknown` |
/// | off | off | any | `TookEffect` |
/// | on | on | any | `TookEffect` |
/// | off / on | the other state | `MaybeLost` | `SendAgain` |
/// | off / on | the other state | `Late` | `Unknown` |
/// | cycle | off, read on before | any | `TookEffect` (the cycle is under way) |
/// | cycle | anything else | any | `Unknown` |
/// | reset, diag (NMI) | anything | any | `Unknown` |
pub fn after_silence(
    command: PowerCommand,
    before: Option<PowerState>,
    now: Option<PowerState>,
    silence: Silence,
) -> AfterSilence {
    use AfterSilence::*;
    use PowerState::{Off, On};
    let Some(now) = now else {
        return Unknown;
    };
    match command {
        PowerCommand::Off | PowerCommand::On => {
            let target = if command == PowerCommand::Off {
                Off
            } else {
                On
            };
            match (now == target, silence) {
                (true, _) => TookEffect,
                (false, Silence::MaybeLost) => SendAgain,
                (false, Silence::Late) => Unknown,
            }
        }
        // A cycle holds the power off for at least a second (IPMI 2.0
        // table 28-4): off after on is the cycle under way. On again may be
        // a cycle already finished, or one never carried out.
        PowerCommand::Cycle if before == Some(On) && now == Off => TookEffect,
        PowerCommand::Cycle | PowerCommand::Reset | PowerCommand::Diag => Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AfterSilence::*;
    use PowerCommand::*;
    use PowerState::{Off as IsOff, On as IsOn};
    use Silence::*;

    /// The table of [`after_silence`], row by row, every combination.
    #[test]
    fn the_table() {
        let states = [None, Some(IsOn), Some(IsOff)];
        for command in [Off, On, Cycle, Reset, Diag] {
            for before in states {
                for now in states {
                    for silence in [MaybeLost, Late] {
                        let want = match (command, before, now, silence) {
                            (_, _, None, _) => Unknown,
                            (Off, _, Some(IsOff), _) | (On, _, Some(IsOn), _) => TookEffect,
                            (Off | On, _, Some(_), MaybeLost) => SendAgain,
                            (Off | On, _, Some(_), Late) => Unknown,
                            (Cycle, Some(IsOn), Some(IsOff), _) => TookEffect,
                            (Cycle | Reset | Diag, _, _, _) => Unknown,
                        };
                        assert_eq!(
                            after_silence(command, before, now, silence),
                            want,
                            "{command} before {before:?} now {now:?} {silence:?}"
                        );
                    }
                }
            }
        }
    }

    // The cases that used to go wrong (issue 23, item 9).
    #[test]
    fn a_finished_cycle_a_reset_and_an_nmi_are_never_sent_again() {
        // A cycle that already finished reads on, as one never carried out.
        assert_eq!(
            after_silence(Cycle, Some(IsOn), Some(IsOn), MaybeLost),
            Unknown
        );
        // A reset or an NMI shows nothing, whatever the read.
        for now in [Some(IsOn), Some(IsOff)] {
            assert_eq!(after_silence(Reset, Some(IsOn), now, MaybeLost), Unknown);
            assert_eq!(after_silence(Diag, Some(IsOn), now, MaybeLost), Unknown);
        }
        // A late HTTP answer: the device has the request; never a second one.
        assert_eq!(after_silence(Off, Some(IsOn), Some(IsOn), Late), Unknown);
        // Off and on over a lossy path: read, then the same request again.
        assert_eq!(
            after_silence(Off, Some(IsOn), Some(IsOn), MaybeLost),
            SendAgain
        );
        assert_eq!(
            after_silence(Off, Some(IsOn), Some(IsOff), MaybeLost),
            TookEffect
        );
    }
}
