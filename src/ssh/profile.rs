//! What runs on the remote side, and what its answers mean — no I/O.
//!
//! Each [`crate::ssh::config::Profile`] turns a power intent into one shell
//! command line (run over its own exec channel) and classifies what came
//! back (exit status and output) into a power state or an
//! [`ErrorKind`]. The `virsh` rules follow upstream `fence_virsh`
//! (`reference/fence-agents.md` §5.3); deliberate differences are named
//! where they are made. Plugs reach the remote shell only as single words:
//! validated, then quoted when they hold anything beyond `[A-Za-z0-9._:@+=-]`.
//! Running the commands is [`crate::ssh::session`]'s job.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::identity::{reported_uuid, Identity};
use crate::engine::power::{PowerCommand, PowerState};

/// Longest plug accepted (libvirt domain names have no fixed limit; this is
/// far beyond any real one and keeps command lines short).
pub const MAX_PLUG_LEN: usize = 255;

/// `virsh domstate` lines that mean the domain is on, for fencing: it still
/// holds its memory and can go on writing to shared storage. Upstream's
/// list, plus two it reads as off (see [`virsh_domstate`]):
/// * `paused` (upstream: on): the guest's vCPUs are stopped, its memory
///   kept; `virsh resume` continues it where it was.
/// * `pmsuspended` (upstream: off): suspended to RAM by the guest; it keeps
///   its memory and resumes its I/O on a wake-up event.
/// * `crashed` (upstream: off): a crashed domain kept for a dump
///   (`on_crash` preserve or coredump-*) is still active with its memory;
///   `virsh destroy` ends it. (A crashed domain that libvirt already
///   destroyed reads `shut off`.)
const VIRSH_ON: [&str; 7] = [
    "running",
    "blocked",
    "idle",
    "no state",
    "paused",
    "pmsuspended",
    "crashed",
];
/// `virsh domstate` lines that mean the domain is off: it has stopped and
/// holds nothing.
const VIRSH_OFF: [&str; 1] = ["shut off"];
/// First words of a `virsh list` state column that mean on (upstream's
/// regex only sees the first word, so "no state" is not among them;
/// `pmsuspended` and `crashed` are on here too, as for `domstate`).
const LIST_ON: [&str; 6] = [
    "running",
    "blocked",
    "idle",
    "paused",
    "pmsuspended",
    "crashed",
];
/// First words of a `virsh list` state column that mean off (`in` is
/// upstream's reading of `in shutdown`).
const LIST_OFF: [&str; 2] = ["shut", "in"];

/// What a remote command did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// The command's exit status, when the server reported one.
    pub status: Option<i32>,
    /// The signal that ended it, when the server reported one.
    pub signal: Option<String>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Output {
    /// True when the command exited with status 0 (and no signal).
    pub fn success(&self) -> bool {
        self.status == Some(0) && self.signal.is_none()
    }

    /// The non-empty lines of stdout, then of stderr, trimmed (upstream
    /// reads both through one pty).
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.stdout
            .lines()
            .chain(self.stderr.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
    }

    /// True when stdout or stderr contains `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.stdout.contains(needle) || self.stderr.contains(needle)
    }

    /// The output shortened to one readable line for a message.
    pub fn brief(&self) -> String {
        let joined: Vec<&str> = self.lines().collect();
        printable(&joined.join(" / "), 200)
    }

    /// "exit status N" / "killed by signal S" / "no exit status".
    pub fn describe_exit(&self) -> String {
        match (&self.status, &self.signal) {
            (_, Some(s)) => format!("killed by signal {s}"),
            (Some(n), None) => format!("exit status {n}"),
            (None, None) => "no exit status".into(),
        }
    }
}

/// `s` cut to `max` characters, control characters shown as `?`.
pub fn printable(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}

/// Characters that need no quoting in a POSIX shell word.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '@' | '+' | '=' | '-' | ',' | '/')
}

/// `s` as one POSIX shell word: unchanged when it only has plain
/// characters, else in single quotes (`'` written as `'\''`). Every POSIX
/// shell, and csh/tcsh, read the result as exactly `s` (control characters
/// are refused earlier by [`check_plug`]).
pub fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(is_plain) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// A plug (domain name or UUID) that must not reach a command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadPlug {
    /// Nothing at all.
    #[error("the plug (domain name or UUID) is empty")]
    Empty,
    /// Longer than [`MAX_PLUG_LEN`] bytes (its length).
    #[error("the plug is {0} bytes long; at most {max} are accepted", max = MAX_PLUG_LEN)]
    TooLong(usize),
    /// Control characters (the plug as printed, cut to 60 characters).
    #[error("the plug '{0}' contains control characters")]
    Control(String),
    /// A leading `-` (the plug as printed).
    #[error("the plug '{0}' starts with '-', which the remote command would read as an option")]
    Dash(String),
    /// A template with `{plug}` and no plug given (the template).
    #[error("the command template '{0}' needs a plug, and none was given")]
    TemplateNeedsPlug(String),
}

/// Checks a plug before it goes anywhere near a command line: not empty,
/// not longer than [`MAX_PLUG_LEN`], no control characters (a newline would
/// end the command), and no leading `-` (it would be read as an option).
pub fn check_plug(plug: &str) -> Result<(), BadPlug> {
    if plug.is_empty() {
        return Err(BadPlug::Empty);
    }
    if plug.len() > MAX_PLUG_LEN {
        return Err(BadPlug::TooLong(plug.len()));
    }
    if plug.chars().any(char::is_control) {
        return Err(BadPlug::Control(printable(plug, 60)));
    }
    if plug.starts_with('-') {
        return Err(BadPlug::Dash(printable(plug, 60)));
    }
    Ok(())
}

/// The plug as it is sent: validated, UUIDs normalised.
pub fn virsh_plug(plug: &str) -> Result<String, BadPlug> {
    check_plug(plug)?;
    Ok(crate::engine::identity::normalise_uuid(plug).unwrap_or_else(|| plug.to_string()))
}

/// `[SUDO ]virsh ARGS…` with `ARGS` already shell words. The sudo prefix is
/// trusted configuration and used as written, as upstream does (so that
/// `/usr/bin/sudo -n` works).
pub fn virsh_command(sudo: Option<&str>, args: &[&str]) -> String {
    let mut cmd = String::new();
    if let Some(s) = sudo {
        cmd.push_str(s);
        cmd.push(' ');
    }
    cmd.push_str("virsh");
    for a in args {
        cmd.push(' ');
        cmd.push_str(a);
    }
    cmd
}

/// The virsh subcommand for a power command (`None`: virsh has none).
pub fn virsh_verb(command: PowerCommand) -> Option<&'static str> {
    match command {
        PowerCommand::Off => Some("destroy"),
        PowerCommand::On => Some("start"),
        PowerCommand::Reset => Some("reset"),
        PowerCommand::Diag => Some("inject-nmi"),
        PowerCommand::Cycle => None,
    }
}

/// True when virsh said it knows no such domain.
fn is_missing_domain(out: &Output) -> bool {
    out.contains("failed to get domain")
        || out.contains("Domain not found")
        || out.contains("domain not found")
}

/// The first `error:` line of virsh's output (or the whole output).
fn virsh_error(out: &Output) -> String {
    let errors: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("error:") && l.len() > "error:".len())
        .collect();
    if errors.is_empty() {
        out.brief()
    } else {
        printable(&errors.join(" / "), 200)
    }
}

/// Reads `virsh domstate` output.
///
/// Upstream semantics, with deliberate differences (a state is never
/// guessed, and off means the domain holds nothing any more): an
/// unrecognised answer is [`ErrorKind::StatusUnreadable`] rather than off;
/// `in shutdown` (the guest is still running its shutdown), `pmsuspended`
/// (suspended to RAM) and `crashed` (kept, with its memory, for a dump) are
/// on rather than off, so that an off is only confirmed once the domain
/// really stopped (`virsh destroy` stops each of them).
pub fn virsh_domstate(
    out: &Output,
    plug: &str,
    missing_as_off: bool,
) -> Result<PowerState, DriverError> {
    let stage = Stage::Status;
    if is_missing_domain(out) {
        if missing_as_off {
            return Ok(PowerState::Off);
        }
        return Err(DriverError::new(
            ErrorKind::DeviceError,
            stage,
            format!(
                "domain not found: virsh knows no domain '{}' (give an existing name or UUID, or --missing-as-off)",
                printable(plug, 80)
            ),
        ));
    }
    if out.lines().any(|l| l.starts_with("error:")) || !out.success() {
        return Err(DriverError::new(
            ErrorKind::DeviceError,
            stage,
            format!(
                "virsh domstate {} failed ({}): {}",
                printable(plug, 80),
                out.describe_exit(),
                virsh_error(out)
            ),
        ));
    }
    let mut off = false;
    for line in out.lines() {
        if VIRSH_ON.contains(&line) || line == "in shutdown" {
            return Ok(PowerState::On);
        }
        off |= VIRSH_OFF.contains(&line);
    }
    if off {
        return Ok(PowerState::Off);
    }
    Err(DriverError::new(
        ErrorKind::StatusUnreadable,
        stage,
        format!(
            "virsh domstate {} answered '{}', which is neither a running nor a stopped state",
            printable(plug, 80),
            out.brief()
        ),
    ))
}

/// Classifies the answer to `virsh destroy|start|reset|inject-nmi`.
/// "domain is not running" (destroy of a stopped domain) and "already
/// active" (start of a running one) are [`ErrorKind::NotInPresentState`], so
/// the engine reads the state again instead of trusting either.
pub fn virsh_command_result(
    out: &Output,
    verb: &str,
    plug: &str,
    missing_as_off: bool,
) -> Result<(), DriverError> {
    let stage = Stage::Command;
    if out.success() {
        return Ok(());
    }
    let text = format!("{}\n{}", out.stdout, out.stderr).to_ascii_lowercase();
    if text.contains("domain is not running") || text.contains("already active") {
        return Err(DriverError::new(
            ErrorKind::NotInPresentState,
            stage,
            format!("virsh {verb} declined: {}", virsh_error(out)),
        ));
    }
    if is_missing_domain(out) {
        let kind = if missing_as_off && verb == "destroy" {
            // A domain that does not exist is off (--missing-as-off); let
            // the engine read that again rather than call it done here.
            ErrorKind::NotInPresentState
        } else {
            ErrorKind::DeviceError
        };
        return Err(DriverError::new(
            kind,
            stage,
            format!(
                "domain not found: virsh knows no domain '{}'",
                printable(plug, 80)
            ),
        ));
    }
    Err(DriverError::new(
        ErrorKind::DeviceError,
        stage,
        format!(
            "virsh {verb} {} failed ({}): {}",
            printable(plug, 80),
            out.describe_exit(),
            virsh_error(out)
        ),
    ))
}

/// One domain from `virsh list --all`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    /// Column 2 (the name).
    pub name: String,
    /// On/off from the first word of the state column; `None` when that
    /// word is not a known state (upstream would say off).
    pub state: Option<PowerState>,
}

/// Parses `virsh list --all` the way upstream does: after a header row whose
/// first two words are `Id Name`, every row with at least three words is a
/// domain `(id, name, state…)`. "no state" is not on here (upstream's regex
/// sees only "no"); we report it as unknown.
pub fn virsh_list(text: &str) -> Vec<Domain> {
    let mut out = Vec::new();
    let mut seen_header = false;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() < 3 {
            continue;
        }
        if !seen_header {
            seen_header =
                words[0].eq_ignore_ascii_case("id") && words[1].eq_ignore_ascii_case("name");
            continue;
        }
        let first = words[2].to_ascii_lowercase();
        let state = if LIST_ON.contains(&first.as_str()) {
            Some(PowerState::On)
        } else if LIST_OFF.contains(&first.as_str()) {
            Some(PowerState::Off)
        } else {
            None
        };
        out.push(Domain {
            name: words[1].to_string(),
            state,
        });
    }
    out
}

/// The `host` profile's power-off: immediate, no shutdown scripts (the
/// second `--force` skips even the service manager, like pulling the plug
/// as far as software can).
pub const HOST_OFF: &str = "systemctl poweroff --force --force";
/// The `host` profile's hard reset.
pub const HOST_RESET: &str = "systemctl reboot --force --force";
/// The `host` profile's liveness probe.
pub const HOST_PROBE: &str = "true";

/// Prefixes `cmd` with the sudo path (as written) when asked.
pub fn with_sudo(sudo: Option<&str>, cmd: &str) -> String {
    match sudo {
        Some(s) => format!("{s} {cmd}"),
        None => cmd.to_string(),
    }
}

/// Expands `{plug}` in a custom template to the plug as one shell word.
/// Templates are trusted configuration; the plug is not, and is checked
/// and quoted here.
pub fn expand_template(template: &str, plug: Option<&str>) -> Result<String, BadPlug> {
    if !template.contains("{plug}") {
        return Ok(template.to_string());
    }
    let plug = plug.ok_or_else(|| BadPlug::TemplateNeedsPlug(template.to_string()))?;
    check_plug(plug)?;
    Ok(template.replace("{plug}", &shell_word(plug)))
}

/// A simple output pattern: matches a trimmed output line that equals it,
/// with `*` standing for any run of characters (no other syntax).
pub fn pattern_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return line == pattern;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// Reads a custom status command's answer: on when a line matches
/// `on_pattern`, off when one matches `off_pattern`; both or neither (or a
/// failed command) is an error, never a guess.
pub fn custom_status(
    out: &Output,
    on_pattern: &str,
    off_pattern: &str,
) -> Result<PowerState, DriverError> {
    let stage = Stage::Status;
    if !out.success() {
        return Err(DriverError::new(
            ErrorKind::DeviceError,
            stage,
            format!(
                "the status command failed ({}): {}",
                out.describe_exit(),
                out.brief()
            ),
        ));
    }
    let on = out.lines().any(|l| pattern_matches(on_pattern, l));
    let off = out.lines().any(|l| pattern_matches(off_pattern, l));
    match (on, off) {
        (true, false) => Ok(PowerState::On),
        (false, true) => Ok(PowerState::Off),
        (true, true) => Err(DriverError::new(
            ErrorKind::StatusUnreadable,
            stage,
            format!(
                "the status output matches both the on pattern '{on_pattern}' and the off pattern '{off_pattern}': {}",
                out.brief()
            ),
        )),
        (false, false) => Err(DriverError::new(
            ErrorKind::StatusUnreadable,
            stage,
            format!(
                "the status output matches neither '{on_pattern}' nor '{off_pattern}': {}",
                out.brief()
            ),
        )),
    }
}

/// Reads the answer to a UUID command (`virsh domuuid DOMAIN`, a custom
/// profile's `uuid` template): the first output line that reads as a UUID.
/// A failed command, or one that prints no UUID, is a
/// [`ErrorKind::DeviceError`] naming what it printed.
pub fn uuid_answer(out: &Output, what: &str) -> Result<Identity, DriverError> {
    let stage = Stage::Identity;
    if !out.success() || out.lines().any(|l| l.starts_with("error:")) {
        return Err(DriverError::new(
            ErrorKind::DeviceError,
            stage,
            format!(
                "{what} failed ({}): {}",
                out.describe_exit(),
                virsh_error(out)
            ),
        ));
    }
    match out.lines().find_map(reported_uuid) {
        Some(form) => Ok(Identity {
            names: Vec::new(),
            uuid: vec![form],
            serial: None,
        }),
        None => Err(DriverError::new(
            ErrorKind::DeviceError,
            stage,
            format!("{what} printed no UUID: '{}'", out.brief()),
        )),
    }
}

/// Classifies a custom on/off command's answer: exit status 0 is accepted.
pub fn custom_command_result(out: &Output, what: &str) -> Result<(), DriverError> {
    if out.success() {
        return Ok(());
    }
    Err(DriverError::new(
        ErrorKind::DeviceError,
        Stage::Command,
        format!(
            "the {what} command failed ({}): {}",
            out.describe_exit(),
            out.brief()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(status: i32, text: &str) -> Output {
        Output {
            status: Some(status),
            signal: None,
            stdout: text.into(),
            stderr: String::new(),
        }
    }

    #[test]
    fn quoting_keeps_metacharacters_inert() {
        assert_eq!(shell_word("node1"), "node1");
        assert_eq!(shell_word("node1; touch /x"), "'node1; touch /x'");
        assert_eq!(shell_word("a'b"), "'a'\\''b'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn patterns() {
        assert!(pattern_matches("on", "on"));
        assert!(!pattern_matches("on", "online"));
        assert!(pattern_matches("*running*", "state: running now"));
        assert!(pattern_matches("Power is *", "Power is on"));
        assert!(!pattern_matches("a*b*c", "acb"));
    }

    #[test]
    fn domstate_in_shutdown_is_not_off() {
        assert_eq!(
            virsh_domstate(&out(0, "in shutdown\n"), "x", false),
            Ok(PowerState::On)
        );
    }
}
