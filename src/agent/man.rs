//! Man pages (`man/fence_*.8`), generated from the definitions.
//!
//! One page per agent family; each alias gets a `.so` page pointing at it,
//! and the family page lists the aliases with their own defaults. The text
//! is deterministic (no date), so the checked-in pages can be compared with
//! a fresh rendering in the tests.

use super::defs::{Agent, Family, OptType};
use super::usage::describe;

/// Escapes text for roff: backslashes, dashes, and a leading `.` or `'`.
pub fn roff(s: &str) -> String {
    let t = s.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The page of `family` (rendered as its main agent).
pub fn render(family: &'static Family) -> String {
    let agent = Agent::main(family);
    let name = family.name;
    let mut m = String::new();
    m.push_str(&format!(
        ".TH {} 8 \"\" \"fencekit\" \"Fence agents\"\n",
        name.to_uppercase()
    ));
    m.push_str(".SH NAME\n");
    m.push_str(&format!("{} \\- {}\n", roff(name), roff(family.shortdesc)));
    m.push_str(".SH SYNOPSIS\n");
    m.push_str(&format!(".B {}\n[\\fIOPTION\\fR]...\n.br\n", roff(name)));
    m.push_str(&format!(".B {}\n< \\fIkey=value lines\\fR\n", roff(name)));
    m.push_str(".SH DESCRIPTION\n");
    m.push_str(&format!("{}\n", roff(family.longdesc)));
    m.push_str(".PP\n");
    m.push_str(
        "Options come either from the command line or, when there are no arguments at \
         all, from standard input as \\fIkey\\fR=\\fIvalue\\fR lines, which is how \
         Pacemaker's fencer runs agents. On standard input a key is the long option \
         name with \\(aq\\-\\(aq or \\(aq_\\(aq, or one of the deprecated keys listed \
         below; blank lines and lines starting with # are skipped, a value may be \
         wrapped in double quotes, and unknown keys are reported and ignored \
         (\\fInodename\\fR silently). Flags take 1, yes, on or true (or 0, no, off, \
         false); note that, as in fence\\-agents, most flags are on as soon as they \
         are given, whatever the value.\n",
    );
    if !family.aliases.is_empty() {
        m.push_str(".SH ALIASES\n");
        m.push_str("The same agent answers to these names, with the defaults shown:\n");
        for a in family.aliases {
            m.push_str(&format!(".TP\n.B {}\n{}.", roff(a.name), roff(a.shortdesc)));
            if !a.defaults.is_empty() {
                let d: Vec<String> = a
                    .defaults
                    .iter()
                    .map(|(k, v)| format!("{}={}", roff(k), roff(v)))
                    .collect();
                m.push_str(&format!(" Defaults: {}.", d.join(", ")));
            }
            m.push('\n');
        }
    }
    m.push_str(".SH OPTIONS\n");
    let mut opts: Vec<_> = family.options.iter().collect();
    opts.sort_by_key(|o| o.order);
    for o in opts {
        m.push_str(".TP\n");
        m.push_str(&format!(".B {}\n", roff(&o.getopt_text())));
        m.push_str(&roff(&describe(&agent, o)));
        m.push('.');
        let mut keys = format!(" Standard input key: \\fB{}\\fR", roff(o.key_str()));
        if let Some(old) = o.old_key {
            keys.push_str(&format!(" (deprecated: \\fB{}\\fR)", roff(old)));
        }
        m.push_str(&keys);
        m.push('.');
        if o.ty == OptType::Boolean {
            m.push_str(" A flag: it takes no value on the command line.");
        }
        m.push('\n');
    }
    m.push_str(".SH ACTIONS\n");
    m.push_str(&format!(
        "{}.\n",
        roff(
            &family
                .actions
                .iter()
                .chain(family.hidden_actions)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        )
    ));
    m.push_str(".PP\n");
    m.push_str(
        "\\fBstatus\\fR prints \\fBStatus: ON\\fR or \\fBStatus: OFF\\fR; \\fBon\\fR, \
         \\fBoff\\fR and \\fBreboot\\fR print one \\fBSuccess:\\fR line once the new \
         state has been read back; failures are logged on standard error as \
         \\fBFailed:\\fR lines followed by the precise cause. \\fBmetadata\\fR (also \
         \\fBmeta\\-data\\fR and \\fBmanpage\\fR) prints the XML description used by \
         Pacemaker; \\fBvalidate\\-all\\fR checks the options without contacting the \
         device.\n",
    );
    m.push_str(".SH EXIT STATUS\n");
    m.push_str(".TP\n.B 0\nSuccess; for \\fBstatus\\fR, the machine is on.\n");
    m.push_str(".TP\n.B 1\nFailure, including invalid options.\n");
    m.push_str(".TP\n.B 2\n\\fBstatus\\fR only: the machine is off.\n");
    m.push_str(".SH SEE ALSO\n");
    m.push_str(".BR fencekit (1)\n");
    m
}

/// The page of an alias: a roff include of its family's page.
pub fn render_alias(family: &Family) -> String {
    format!(".so man8/{}.8\n", family.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::defs::defs;

    #[test]
    fn page_lists_options_aliases_and_exit_codes() {
        let fam = &defs().families[0];
        let page = render(fam);
        assert!(page.starts_with(".TH FENCE_IPMILAN 8 "));
        assert!(page.contains(".B \\-a, \\-\\-ip=[ip]\n"));
        assert!(page.contains("(deprecated: \\fBipaddr\\fR)"));
        assert!(page.contains(".B fence_ilo3\n"));
        assert!(page.contains("lanplus=1, power_wait=4"));
        assert!(page.contains(".SH EXIT STATUS\n"));
        for line in page.lines() {
            assert!(
                !line.starts_with('\'') && !line.is_empty(),
                "bad roff line {line:?}"
            );
        }
        assert_eq!(render_alias(fam), ".so man8/fence_ipmilan.8\n");
    }

    #[test]
    fn roff_escapes() {
        assert_eq!(roff("a-b\\c"), "a\\-b\\ec");
        assert_eq!(roff(".x"), "\\&.x");
    }
}
