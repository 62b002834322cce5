//! GNU-getopt-style argv parsing, as fence-agents does it (Python's
//! `getopt.gnu_getopt`).
//!
//! Rules: `--name=value` and `--name value`; `-xvalue` and `-x value`;
//! grouped flags (`-Pv`); a value may start with `-`; a unique prefix of a
//! long name is accepted (an exact name always wins); options and positional
//! words mix freely and `--` ends the options. Errors carry upstream's
//! messages. This module knows only the option table it is given; what the
//! options mean is decided by [`crate::agent::run`].

use std::fmt;

/// One option the parser knows.
#[derive(Clone, Copy, Debug)]
pub struct Spec<'a> {
    /// Short letter, if any.
    pub short: Option<char>,
    /// Long name without dashes.
    pub long: &'a str,
    /// True when the option takes a value.
    pub takes_value: bool,
}

/// The options found, in order, and the words left over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// `(index into the specs, value)`; flags have an empty value.
    pub opts: Vec<(usize, String)>,
    /// Words that are not options (upstream only warns about them).
    pub positional: Vec<String>,
}

/// Why argv could not be parsed; `Display` gives upstream's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GetoptError {
    /// `--bogus` or `-Z`: the option as written, with its dashes.
    NotRecognized(String),
    /// `--pass` matches several long names.
    NotUniquePrefix(String),
    /// The option needs a value and none follows (full name with dashes).
    RequiresArgument(String),
    /// `--flag=value` (full name with dashes).
    MustNotHaveArgument(String),
}

impl fmt::Display for GetoptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GetoptError::NotRecognized(o) => write!(f, "option {o} not recognized"),
            GetoptError::NotUniquePrefix(o) => write!(f, "option {o} not a unique prefix"),
            GetoptError::RequiresArgument(o) => write!(f, "option {o} requires argument"),
            GetoptError::MustNotHaveArgument(o) => {
                write!(f, "option {o} must not have an argument")
            }
        }
    }
}

impl std::error::Error for GetoptError {}

/// The getopt table of an agent's options (argv parsing).
pub fn specs(options: &[crate::agent::defs::OptionDef]) -> Vec<Spec<'static>> {
    options
        .iter()
        .map(|o| Spec {
            short: o.short,
            long: o.long,
            takes_value: o.takes_value(),
        })
        .collect()
}

/// Parses `args` (without the program name) against `specs`.
pub fn gnu_getopt(args: &[String], specs: &[Spec<'_>]) -> Result<Parsed, GetoptError> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            out.positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = arg.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let idx = find_long(name, specs)?;
            let spec = specs[idx];
            let value = if spec.takes_value {
                match inline {
                    Some(v) => v,
                    None if i < args.len() => {
                        i += 1;
                        args[i - 1].clone()
                    }
                    None => return Err(GetoptError::RequiresArgument(format!("--{}", spec.long))),
                }
            } else {
                if inline.is_some() {
                    return Err(GetoptError::MustNotHaveArgument(format!("--{}", spec.long)));
                }
                String::new()
            };
            out.opts.push((idx, value));
        } else if arg.len() > 1 && arg.starts_with('-') {
            let letters = &arg[1..];
            for (pos, c) in letters.char_indices() {
                let idx = specs
                    .iter()
                    .position(|s| s.short == Some(c))
                    .ok_or_else(|| GetoptError::NotRecognized(format!("-{c}")))?;
                if specs[idx].takes_value {
                    let rest = &letters[pos + c.len_utf8()..];
                    let value = if !rest.is_empty() {
                        rest.to_string()
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        return Err(GetoptError::RequiresArgument(format!("-{c}")));
                    };
                    out.opts.push((idx, value));
                    break;
                }
                out.opts.push((idx, String::new()));
            }
        } else {
            out.positional.push(arg.clone());
        }
    }
    Ok(out)
}

/// Resolves a long name or a unique prefix of one; an exact name always wins.
fn find_long(name: &str, specs: &[Spec<'_>]) -> Result<usize, GetoptError> {
    if let Some(i) = specs.iter().position(|s| s.long == name) {
        return Ok(i);
    }
    let mut hits = specs
        .iter()
        .enumerate()
        .filter(|(_, s)| s.long.starts_with(name));
    match (hits.next(), hits.next()) {
        (Some((i, _)), None) => Ok(i),
        (Some(_), Some(_)) => Err(GetoptError::NotUniquePrefix(format!("--{name}"))),
        (None, _) => Err(GetoptError::NotRecognized(format!("--{name}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[Spec<'static>] = &[
        Spec {
            short: Some('o'),
            long: "action",
            takes_value: true,
        },
        Spec {
            short: Some('a'),
            long: "ip",
            takes_value: true,
        },
        Spec {
            short: None,
            long: "ipport",
            takes_value: true,
        },
        Spec {
            short: Some('p'),
            long: "password",
            takes_value: true,
        },
        Spec {
            short: Some('S'),
            long: "password-script",
            takes_value: true,
        },
        Spec {
            short: Some('P'),
            long: "lanplus",
            takes_value: false,
        },
        Spec {
            short: Some('v'),
            long: "verbose",
            takes_value: false,
        },
        Spec {
            short: None,
            long: "verbose-level",
            takes_value: true,
        },
    ];

    fn parse(args: &[&str]) -> Result<Parsed, GetoptError> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        gnu_getopt(&v, SPECS)
    }

    fn opts(args: &[&str]) -> Vec<(&'static str, String)> {
        parse(args)
            .expect("parses")
            .opts
            .into_iter()
            .map(|(i, v)| (SPECS[i].long, v))
            .collect()
    }

    fn o(l: &'static str, v: &str) -> (&'static str, String) {
        (l, v.to_string())
    }

    #[test]
    fn long_options_take_values_inline_or_separately() {
        assert_eq!(
            opts(&["--ip=h", "--action", "off"]),
            vec![o("ip", "h"), o("action", "off")]
        );
        assert_eq!(opts(&["--password=a=b"]), vec![o("password", "a=b")]);
        assert_eq!(opts(&["--password="]), vec![o("password", "")]);
    }

    #[test]
    fn values_may_start_with_a_dash() {
        assert_eq!(
            opts(&["--action", "status", "--password", "-dash"]),
            vec![o("action", "status"), o("password", "-dash")]
        );
        assert_eq!(opts(&["-p", "--ip"]), vec![o("password", "--ip")]);
    }

    #[test]
    fn short_options_group_and_take_attached_or_next_values() {
        assert_eq!(opts(&["-ostatus"]), vec![o("action", "status")]);
        assert_eq!(opts(&["-o", "status"]), vec![o("action", "status")]);
        assert_eq!(
            opts(&["-Pvostatus"]),
            vec![o("lanplus", ""), o("verbose", ""), o("action", "status")]
        );
        assert_eq!(opts(&["-Pa", "h"]), vec![o("lanplus", ""), o("ip", "h")]);
    }

    #[test]
    fn unique_prefixes_resolve_and_exact_names_win() {
        assert_eq!(opts(&["--act=on"]), vec![o("action", "on")]);
        assert_eq!(opts(&["--ip=x"]), vec![o("ip", "x")]);
        assert_eq!(opts(&["--ipp=624"]), vec![o("ipport", "624")]);
        assert_eq!(
            opts(&["--password-s", "x"]),
            vec![o("password-script", "x")]
        );
        assert_eq!(opts(&["--verbose"]), vec![o("verbose", "")]);
    }

    #[test]
    fn errors_carry_upstream_messages() {
        let msg = |a: &[&str]| parse(a).unwrap_err().to_string();
        assert_eq!(msg(&["--pass", "x"]), "option --pass not a unique prefix");
        assert_eq!(
            msg(&["--lanplus=1"]),
            "option --lanplus must not have an argument"
        );
        assert_eq!(
            msg(&["--lan=1"]),
            "option --lanplus must not have an argument"
        );
        assert_eq!(msg(&["--bogus"]), "option --bogus not recognized");
        assert_eq!(msg(&["-Z"]), "option -Z not recognized");
        assert_eq!(msg(&["-PZ"]), "option -Z not recognized");
        assert_eq!(msg(&["-o"]), "option -o requires argument");
        assert_eq!(msg(&["--act"]), "option --action requires argument");
        assert_eq!(
            msg(&["--ip=h", "--action"]),
            "option --action requires argument"
        );
    }

    #[test]
    fn positional_words_are_collected_and_double_dash_ends_options() {
        let p = parse(&["foo", "-o", "off", "bar", "-", "--", "-v"]).unwrap();
        assert_eq!(p.positional, vec!["foo", "bar", "-", "-v"]);
        assert_eq!(p.opts, vec![(0, "off".to_string())]);
    }

    #[test]
    fn repeated_options_are_all_reported_in_order() {
        let p = opts(&["-v", "-vv", "--verbose", "-o", "on", "--action=off"]);
        assert_eq!(p.iter().filter(|(l, _)| *l == "verbose").count(), 4);
        assert_eq!(p.last(), Some(&o("action", "off")));
    }

    #[test]
    fn non_ascii_short_letters_do_not_panic() {
        assert_eq!(
            parse(&["-é"]).unwrap_err().to_string(),
            "option -é not recognized"
        );
        assert_eq!(opts(&["-oé"]), vec![o("action", "é")]);
    }
}
