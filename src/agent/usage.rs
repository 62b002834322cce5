//! The `--help` text, generated from the definitions.
//!
//! Same idea as fence-agents' usage (one line per option, `-x, --long=[value]`
//! then a description, continuation lines indented), in fencekit's words.

use super::defs::{Agent, OptType, OptionDef};

const WIDTH: usize = 80;
const INDENT: usize = 3;
const COLUMN: usize = 31;

/// The text an option gets in the help, with choices and default.
pub fn describe(agent: &Agent, o: &OptionDef) -> String {
    let mut d = o.desc.to_string();
    if o.long == "action" {
        let names: Vec<&str> = (agent.family.actions.iter())
            .chain(agent.family.hidden_actions)
            .copied()
            .collect();
        d.push_str(": ");
        d.push_str(&names.join(", "));
        if let Some(def) = o.default {
            d.push_str(&format!(" (default: {def})"));
        }
        return d;
    }
    if o.ty == OptType::Select {
        d.push_str(&format!(" ({})", o.choices.join("|")));
    }
    if let Some(def) = o.default {
        if o.ty != OptType::Boolean {
            d.push_str(&format!(" (default: {def})"));
        } else if def != "0" {
            d.push_str(" (on by default)");
        }
    }
    d
}

/// Wraps `text` into lines of at most `width` characters (words never split).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The whole `--help` output for `agent` as invoked.
pub fn render(agent: &Agent) -> String {
    let mut s = format!("Usage:\n\t{} [options]\nOptions:\n", agent.invoked_as);
    let mut opts: Vec<&OptionDef> = agent.options.iter().collect();
    opts.sort_by_key(|o| o.order); // stable: ties keep the definition's order
    for o in opts {
        let head = o.getopt_text();
        let pad = if head.chars().count() < COLUMN {
            COLUMN - head.chars().count()
        } else {
            1
        };
        let desc_col = INDENT + head.chars().count() + pad;
        let lines = wrap(&describe(agent, o), WIDTH.saturating_sub(desc_col).max(20));
        s.push_str(&format!("{}{head}{}", " ".repeat(INDENT), " ".repeat(pad)));
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                s.push_str(&" ".repeat(desc_col));
            }
            s.push_str(line);
            s.push('\n');
        }
    }
    s.push_str(
        "\nWithout arguments, the options are read from standard input as key=value\n\
         lines (ip=10.0.0.5, username=admin, action=status, ...); a key is the long\n\
         option name with '-' or '_'.\n\
         Exit status: 0 done (status: the machine is on), 1 failed, 2 status: the\n\
         machine is off.\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::defs::agent;

    #[test]
    fn help_lists_every_option_once() {
        let a = agent("fence_ipmilan").unwrap();
        let text = render(&a);
        assert!(text.starts_with("Usage:\n\tfence_ipmilan [options]\nOptions:\n"));
        for o in a.options.iter() {
            let head = format!("   {} ", o.getopt_text());
            assert_eq!(text.matches(&head).count(), 1, "{head:?} in\n{text}");
        }
    }

    #[test]
    fn help_shows_choices_defaults_and_actions() {
        let raw = render(&agent("fence_ilo3").unwrap());
        assert!(raw.lines().all(|l| l.chars().count() <= 80), "{raw}");
        let text = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("(callback|user|operator|administrator)"),
            "{text}"
        );
        assert!(text.contains("--power-wait=[seconds] Seconds to wait after each on/off command"));
        assert!(
            text.contains("(default: 4)"),
            "power_wait 4 on ilo3: {text}"
        );
        assert!(text.contains("validate-all, diag, list, list-status (default: reboot)"));
        assert!(text.contains("(on by default)"), "lanplus on for ilo3");
    }

    #[test]
    fn wrap_keeps_words_whole() {
        assert_eq!(wrap("aa bb cc", 5), vec!["aa bb", "cc"]);
        assert_eq!(wrap("", 5), vec![""]);
        assert_eq!(wrap("abcdefgh ij", 4), vec!["abcdefgh", "ij"]);
    }
}
