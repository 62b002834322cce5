//! Exit codes of the native command line (`fencekit …`).
//!
//! Agent mode (`fence_ipmilan` & co.) uses upstream's 0 / 1 / 2 instead;
//! those live in [`crate::agent`].

/// Every target reached the requested state (for `status`: no target is
/// off: each is on, or in a power transition, which the output names).
pub const OK: i32 = 0;
/// At least one target failed: it could not be reached, authenticated or
/// confirmed; it is held (`fencekit hold`); or its confirmed-off hook failed.
/// `check`: a level would fail (a `broken` drift included); `check
/// --pacemaker`/`--far`: a `broken` finding.
pub const FAILURE: i32 = 1;
/// `status` only: every target is confirmed off and nothing failed (fence-agents convention).
pub const STATUS_OFF: i32 = 2;
/// The result is not proven: `verify` (or `--verify`) gave a verdict other
/// than proven, or a command was sent that nothing observed (a power cycle,
/// an off through the SSH `host` profile).
pub const UNPROVEN: i32 = 3;
/// `check --baseline` only: every level would work, but one works less
/// safely than recorded (a `weakened` drift, none `broken`); `check
/// --pacemaker`/`--far`: a `weakened` finding, none `broken`.
pub const DRIFT_WEAKENED: i32 = 4;
/// `check --baseline` only: every level would work as safely as recorded,
/// but something differs from the baseline (a `changed` drift: look at it).
pub const DRIFT_CHANGED: i32 = 5;
/// Usage error: a bad option, an unknown target, an unreadable inventory; or
/// an `off`/`reboot` beyond the mass-fencing guard (refused before any contact).
pub const USAGE: i32 = 64;

/// One line per exit code, for `--help` and the man page.
pub const TABLE: &[(i32, &str)] = &[
    (
        OK,
        "every target reached the requested state (status: none is off; each is on or in a transition)",
    ),
    (
        FAILURE,
        "at least one target could not be reached, authenticated or confirmed (or is held, or its confirmed-off hook failed, or fencekit itself failed on it; check: a level would fail, a broken drift included; check --pacemaker/--far: a broken finding)",
    ),
    (
        STATUS_OFF,
        "status only: the targets are confirmed off, nothing failed",
    ),
    (
        UNPROVEN,
        "not proven: a verify verdict other than proven (contradiction, unproven, bmc-only, \
         drift), a command sent that nothing observed (reboot --method cycle, off through a \
         host profile: a command run on the node itself), or a command sent whose outcome is unknown (no answer, and no read \
         shows whether it was carried out; it is never sent again)",
    ),
    (
        DRIFT_WEAKENED,
        "check --baseline: every level would work, but one is weaker than recorded (a weakened drift); check --pacemaker/--far: a weakened finding, none broken",
    ),
    (
        DRIFT_CHANGED,
        "check --baseline: every level works as recorded, but something changed (a changed drift)",
    ),
    (
        USAGE,
        "usage error: bad option, unknown target, unreadable input; or beyond --max-fence (nothing contacted)",
    ),
];

/// The `Exit status:` block of `fencekit --help`, generated from [`TABLE`]
/// (so the help, the man page and the constants cannot drift apart).
pub fn help_text() -> String {
    let mut s = String::from("Exit status:");
    for (code, text) in TABLE {
        s.push_str(&format!("\n  {code:<3} {text}"));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_help_lists_every_code_once() {
        let h = super::help_text();
        assert!(h.starts_with("Exit status:\n  0   every target"), "{h}");
        for (code, text) in super::TABLE {
            assert_eq!(h.matches(text).count(), 1, "{code}");
        }
        let last = super::TABLE[super::TABLE.len() - 1];
        assert_eq!(last.0, super::USAGE);
        assert!(h.ends_with(&format!("64  {}", last.1)), "{h}");
    }
}
