//! The `key=value` reader for options on standard input (how Pacemaker's
//! fencer passes them), with fence-agents' exact rules.
//!
//! Per line: strip surrounding whitespace; skip empty lines and `#`
//! comments; split at the first `=`; remove one pair of surrounding double
//! quotes from the value. A key is a long option name with `-` and `_`
//! interchangeable, or an option's deprecated key, matched case-sensitively.
//! `nodename` is ignored silently; other unknown keys are warned about.
//! Flags take only `1|yes|on|true` (stored `"1"`) or `0|no|off|false`
//! (stored `"0"`), case-insensitively; anything else is warned about and
//! skipped. The caller reads stdin only when argv is empty.

use super::defs::Agent;
use super::key::Key;
use super::values::Values;

/// What the reader found: the values and the warnings to log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StdinOptions {
    /// The options set.
    pub values: Values,
    /// Upstream's warnings, one message each, in input order.
    pub warnings: Vec<String>,
}

/// Reads `text` (the whole of stdin) for `agent`.
pub fn parse(text: &str, agent: &Agent) -> StdinOptions {
    let mut out = StdinOptions::default();
    // Python's text mode turns "\r\n" and a lone "\r" into line breaks.
    for raw in text.split(['\n', '\r']) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line.split_once('=').unwrap_or((line, ""));
        let value = unquote(value);
        let long = name.replace('_', "-");
        let Some(opt) = agent
            .options
            .iter()
            .find(|o| long == o.long || o.old_key == Some(name))
        else {
            if name != "nodename" {
                out.warnings
                    .push(format!("Parse error: Ignoring unknown option '{line}'"));
            }
            continue;
        };
        let key = opt.key_str();
        if opt.takes_value() {
            out.values.set_named(key, value);
        } else {
            match value.to_lowercase().as_str() {
                "1" | "yes" | "on" | "true" => out.values.set_named(key, "1"),
                "0" | "no" | "off" | "false" => out.values.set_named(key, "0"),
                _ => out.warnings.push(format!(
                    "Parse error: Ignoring option '{name}' because it does not have value"
                )),
            }
        }
    }
    // Upstream: verbose_level defaults to the value of `verbose` ("1"/"0"), else 0.
    if !out.values.has(Key::VerboseLevel) {
        let level = out.values.get(Key::Verbose).unwrap_or("0").to_string();
        out.values.set(Key::VerboseLevel, level);
    }
    out
}

/// Removes one pair of surrounding double quotes (`"a"` → `a`); single quotes stay.
fn unquote(v: &str) -> &str {
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::defs::agent;

    fn read(text: &str) -> StdinOptions {
        parse(text, &agent("fence_ipmilan").unwrap())
    }

    #[test]
    fn reference_example_is_read_as_upstream() {
        let r = read(
            "# c\n\n  action=status  \nipaddr=127.0.0.1\nlogin=admin\npasswd=secret\n\
             ipmitool_path=/x\nnodename=n1\nfoo=bar\nport=n1\n",
        );
        assert_eq!(r.values.get(Key::Action), Some("status"));
        assert_eq!(r.values.get(Key::Ip), Some("127.0.0.1"));
        assert_eq!(r.values.get(Key::Username), Some("admin"));
        assert_eq!(r.values.get(Key::Password), Some("secret"));
        assert_eq!(r.values.get(Key::IpmitoolPath), Some("/x"));
        assert_eq!(r.values.get(Key::Plug), Some("n1"));
        assert_eq!(
            r.warnings,
            vec!["Parse error: Ignoring unknown option 'foo=bar'"]
        );
    }

    #[test]
    fn keys_accept_dashes_or_underscores_but_are_case_sensitive() {
        let r = read("power-timeout=5\nstonith_status_sleep=2\nhexadecimal-kg=01\nACTION=off\n");
        assert_eq!(r.values.get(Key::PowerTimeout), Some("5"));
        assert_eq!(r.values.get(Key::StonithStatusSleep), Some("2"));
        assert_eq!(r.values.get(Key::HexadecimalKg), Some("01"));
        assert!(!r.values.has(Key::Action));
        assert_eq!(
            r.warnings,
            vec!["Parse error: Ignoring unknown option 'ACTION=off'"]
        );
    }

    #[test]
    fn deprecated_keys_match_only_as_written() {
        let r = read("passwd_script=echo x\nsudo=1\ndebug=/tmp/f\n");
        assert_eq!(r.values.get(Key::PasswordScript), Some("echo x"));
        assert_eq!(r.values.get(Key::UseSudo), Some("1"));
        assert_eq!(r.values.get(Key::DebugFile), Some("/tmp/f"));
        let r = read("passwd-script=echo x\n");
        assert!(!r.values.has(Key::PasswordScript));
        assert_eq!(r.warnings.len(), 1);
    }

    #[test]
    fn values_split_at_the_first_equals_and_lose_double_quotes() {
        let r = read("password=a=b\nusername=\"admin\"\nip='h'\nplug=\"\n");
        assert_eq!(r.values.get(Key::Password), Some("a=b"));
        assert_eq!(r.values.get(Key::Username), Some("admin"));
        assert_eq!(r.values.get(Key::Ip), Some("'h'"));
        assert_eq!(r.values.get(Key::Plug), Some("\""));
        let r = read("password=\"\"\nip\n");
        assert_eq!(r.values.get(Key::Password), Some(""));
        assert_eq!(r.values.get(Key::Ip), Some(""));
    }

    #[test]
    fn spaces_around_equals_make_an_unknown_key() {
        let r = read("username = bob\n");
        assert!(!r.values.has(Key::Username));
        assert_eq!(
            r.warnings,
            vec!["Parse error: Ignoring unknown option 'username = bob'"]
        );
    }

    #[test]
    fn flags_take_only_boolean_words() {
        let r = read("lanplus=YES\nquiet=off\nverbose=True\n");
        assert_eq!(r.values.get(Key::Lanplus), Some("1"));
        assert_eq!(r.values.get(Key::Quiet), Some("0"));
        assert_eq!(r.values.get(Key::Verbose), Some("1"));
        for bad in ["lanplus", "lanplus=", "lanplus=maybe"] {
            let r = read(bad);
            assert!(!r.values.has(Key::Lanplus), "{bad}");
            assert_eq!(
                r.warnings,
                vec!["Parse error: Ignoring option 'lanplus' because it does not have value"]
            );
        }
    }

    #[test]
    fn verbose_level_follows_verbose() {
        assert_eq!(read("verbose=1").values.get(Key::VerboseLevel), Some("1"));
        assert_eq!(read("verbose=0").values.get(Key::VerboseLevel), Some("0"));
        assert_eq!(read("").values.get(Key::VerboseLevel), Some("0"));
        assert_eq!(
            read("verbose=1\nverbose_level=3")
                .values
                .get(Key::VerboseLevel),
            Some("3")
        );
    }

    #[test]
    fn the_last_duplicate_wins_and_crlf_is_a_line_break() {
        let r = read("ip=a\r\nip=b\r\noption=off\r\n");
        assert_eq!(r.values.get(Key::Ip), Some("b"));
        assert_eq!(
            r.warnings,
            vec!["Parse error: Ignoring unknown option 'option=off'"]
        );
    }

    #[test]
    fn disable_timeout_is_a_value_option() {
        let r = read("disable_timeout=false\n");
        assert_eq!(r.values.get(Key::DisableTimeout), Some("false"));
    }
}
