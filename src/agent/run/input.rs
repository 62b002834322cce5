//! Reading what an agent is given: standard input (bounded, UTF-8),
//! argv (GNU getopt as upstream), verbosity, the password script; and the
//! two ways a call fails before it reaches the device.

use super::report::EXIT_FAILED;
use crate::agent::defs::Agent;
use crate::agent::key::Key;
use crate::agent::log::Logger;
use crate::agent::values::Values;
use crate::agent::{getopt, stdin};
use std::ffi::OsString;
use std::io::Read;

/// The line upstream logs after every usage error.
pub(super) const USAGE_HINT: &str = "Please use '-h' for usage";
/// Most stdin read (Pacemaker sends a few hundred bytes).
const STDIN_LIMIT: u64 = 1 << 20;

/// Logs `Failed: <msg>` and returns [`EXIT_FAILED`].
pub(super) fn fail(log: &Logger, msg: &str) -> i32 {
    log.error(&format!("Failed: {msg}"));
    EXIT_FAILED
}

/// Logs a usage error the way upstream does and returns [`EXIT_FAILED`].
pub(super) fn usage_error(log: &Logger, msg: &str) -> i32 {
    log.error(msg);
    log.error(USAGE_HINT);
    EXIT_FAILED
}

pub(super) fn read_stdin(mut input: impl Read, agent: &Agent, log: &Logger) -> Result<Values, i32> {
    let mut buf = Vec::new();
    if let Err(e) = (&mut input).take(STDIN_LIMIT + 1).read_to_end(&mut buf) {
        log.debug(&format!(
            "standard input is unreadable ({e}); reading it as empty"
        ));
        buf.clear();
    }
    if buf.len() as u64 > STDIN_LIMIT {
        return Err(fail(log, "standard input is larger than 1 MiB"));
    }
    let Ok(text) = String::from_utf8(buf) else {
        return Err(fail(log, "standard input is not valid UTF-8"));
    };
    let parsed = stdin::parse(&text, agent);
    for w in &parsed.warnings {
        log.warn(w);
    }
    Ok(parsed.values)
}

pub(super) fn read_argv(args: Vec<OsString>, agent: &Agent, log: &Logger) -> Result<Values, i32> {
    let mut words = Vec::with_capacity(args.len());
    for a in args {
        match a.into_string() {
            Ok(s) => words.push(s),
            Err(_) => {
                return Err(usage_error(
                    log,
                    "Parse error: an argument is not valid UTF-8",
                ))
            }
        }
    }
    let opts = &agent.options;
    let specs = getopt::specs(agent.family.options);
    let parsed = match getopt::gnu_getopt(&words, &specs) {
        Ok(p) => p,
        Err(e) => return Err(usage_error(log, &format!("Parse error: {e}"))),
    };
    if !parsed.positional.is_empty() {
        log.warn(&format!(
            "Unused arguments on command line: {}",
            python_list(&parsed.positional)
        ));
    }
    let mut values = Values::new();
    let mut verbose = 0;
    for (i, v) in parsed.opts {
        let key = opts[i].key_str();
        if key == "verbose" {
            verbose += 1;
        }
        values.set_named(key, v);
    }
    if !values.has(Key::VerboseLevel) {
        values.set(Key::VerboseLevel, verbose.to_string());
    }
    // Upstream applies this to the command line only: on stdin, Pacemaker's
    // `plug=<node>` must be accepted and ignored.
    if agent.family.port_as_ip && !values.has(Key::PortAsIp) && values.has(Key::Plug) {
        return Err(usage_error(
            log,
            "Parser error: option -n/--plug is not recognized",
        ));
    }
    Ok(values)
}

/// `['a', 'b']`, as Python prints a list of strings.
fn python_list(words: &[String]) -> String {
    let items: Vec<String> = words
        .iter()
        .map(|w| {
            if w.contains('\'') && !w.contains('"') {
                format!("\"{}\"", w.replace('\\', "\\\\"))
            } else {
                format!("'{}'", w.replace('\\', "\\\\").replace('\'', "\\'"))
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// Upstream's `verbose_level` rules, then the logger's threshold and `-q`.
pub(super) fn set_verbosity(values: &mut Values, log: &Logger) {
    let mut level = values.int(Key::VerboseLevel).unwrap_or(-1);
    if level < 0 {
        log.warn(
            "Parse error: Option 'verbose_level' must be an integer greater than or equal to 0. \
             Setting verbose_level to 0.",
        );
        level = 0;
    }
    values.set(Key::VerboseLevel, level.to_string());
    if level == 0 && values.has(Key::Verbose) {
        log.warn(
            "Parse error: Ignoring option 'verbose' because it conflicts with verbose_level=0",
        );
        values.remove(Key::Verbose);
    }
    if level > 0 {
        values.set(Key::Verbose, "1");
    }
    log.set_verbose(values.has(Key::Verbose));
    log.set_quiet(values.has(Key::Quiet));
}

/// Runs the password script through the one script runner
/// ([`crate::method::credential::run_script`]: stdin closed, output captured,
/// killed with its children after [`crate::method::credential::SCRIPT_TIMEOUT`]
/// or on SIGINT/SIGTERM) and returns its standard output with trailing
/// whitespace removed. As upstream, a failing exit status is only warned about;
/// what it writes to stderr is never shown.
pub(super) fn run_password_script(script: &str, log: &Logger) -> Result<String, String> {
    use crate::method::credential::run_script;
    let rt = crate::runtime::Runtime::new()
        .map_err(|e| format!("unable to start the I/O runtime: {e}"))?;
    let out = rt.block_on(async {
        tokio::select! {
            r = run_script(script, None) => r.map_err(|e| format!("Unable to run the password script: {e}")),
            _ = crate::runtime::terminated() => {
                Err("stopped by a signal while the password script ran".to_string())
            }
        }
    })?;
    if out.code != 0 {
        log.warn(&format!(
            "the password script exited with status {}",
            out.code
        ));
    }
    if out.stderr_len > 0 {
        log.debug(&format!(
            "the password script wrote {} bytes to stderr (not shown)",
            out.stderr_len
        ));
    }
    String::from_utf8(out.stdout.expose().to_vec())
        .map_err(|_| "the password script's output is not valid UTF-8".to_string())
}
