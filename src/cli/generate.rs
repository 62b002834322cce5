//! Generated artefacts: shell completions and man pages, from the clap
//! definition of the native CLI ([`Cli`]) and the `agents/` definitions.
//!
//! Everything here is deterministic (no dates, no paths), so the checked-in
//! copies under `completions/` and `man/` can be compared with a fresh
//! rendering (`tests/generated_cli.rs`; `FENCEKIT_REGENERATE=1` rewrites
//! them). The agent pages (`man/fence_*.8`) are rendered by
//! [`crate::agent::man`]; this module only prints them for `fencekit man`.
//! The hand-written parts of the native pages (exit status, environment,
//! files, examples) live here, next to the generator, so that one place
//! owns each page.

use super::args::Cli;
use crate::exit;
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, CommandFactory};
use clap_complete::Shell;
use std::io::Write;

/// The shells `fencekit completions` knows, with the file each script is
/// checked in as under `completions/`.
pub const SHELLS: &[(&str, Shell, &str)] = &[
    ("bash", Shell::Bash, "fencekit.bash"),
    ("zsh", Shell::Zsh, "_fencekit"),
    ("fish", Shell::Fish, "fencekit.fish"),
    ("powershell", Shell::PowerShell, "_fencekit.ps1"),
    ("elvish", Shell::Elvish, "fencekit.elv"),
];

/// Subcommands that take targets (node names complete from the inventory in bash).
const TARGET_COMMANDS: &[&str] = &[
    "status", "on", "off", "reboot", "monitor", "verify", "check", "list", "ack",
];

/// `fencekit completions SHELL`.
pub fn completions_main(shell: &str) -> i32 {
    match completion(shell) {
        Some(script) => print_out(&script),
        None => {
            eprintln!(
                "fencekit: unknown shell '{shell}' (expected one of: {})",
                shell_names().join(", ")
            );
            exit::USAGE
        }
    }
}

/// `fencekit man [PAGE]`: the roff source of a native page (`fencekit`,
/// `fencekit-SUBCOMMAND`, or just `SUBCOMMAND`) or of a fence agent's page.
pub fn man_main(page: Option<&str>) -> i32 {
    let name = page.unwrap_or("fencekit");
    match man_page(name) {
        Some(text) => print_out(&text),
        None => {
            eprintln!(
                "fencekit: no man page '{name}' (expected one of: {})",
                page_names().join(", ")
            );
            exit::USAGE
        }
    }
}

/// Writes `text` to stdout; a closed pipe (`| head`) is not an error.
fn print_out(text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            eprintln!("fencekit: cannot write to stdout: {e}");
            exit::FAILURE
        }
    }
}

/// Shell names, in [`SHELLS`] order.
pub fn shell_names() -> Vec<&'static str> {
    SHELLS.iter().map(|(n, _, _)| *n).collect()
}

/// The CLI as the generators see it: [`Cli`] plus the value lists that
/// clap cannot know from the types (agent names, shells, page names).
pub fn command() -> clap::Command {
    let agents = crate::agent::run::agent_names();
    // clap keeps possible values as `&'static str` (without its `string`
    // feature); these few names live as long as the process anyway.
    let mut pages: Vec<&'static str> = vec!["fencekit"];
    pages.extend(
        Cli::command()
            .get_subcommands()
            .map(|s| &*Box::leak(format!("fencekit-{}", s.get_name()).into_boxed_str())),
    );
    pages.extend(agents.iter().copied());
    Cli::command()
        .disable_help_subcommand(true)
        .mut_subcommand("agent", |c| {
            // `mut_arg` moves the argument to the end: move `args` after it
            // again, since positionals are numbered in order.
            c.mut_arg("name", |a| {
                a.value_parser(PossibleValuesParser::new(agents))
            })
            .mut_arg("args", |a| a)
        })
        .mut_subcommand("completions", |c| {
            c.mut_arg("shell", |a| {
                a.value_parser(PossibleValuesParser::new(shell_names()))
            })
        })
        .mut_subcommand("man", |c| {
            c.mut_arg("page", |a| a.value_parser(PossibleValuesParser::new(pages)))
        })
}

/// The completion script for `shell`, or `None` for a shell we do not know.
pub fn completion(shell: &str) -> Option<String> {
    let (_, sh, _) = SHELLS.iter().find(|(n, _, _)| *n == shell)?;
    let mut cmd = command();
    let mut buf = Vec::new();
    clap_complete::generate(*sh, &mut cmd, "fencekit", &mut buf);
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    if *sh == Shell::Bash {
        text.push_str(&bash_nodes(&command()));
    }
    Some(text)
}

/// Every completion file: its name under `completions/` and its content.
pub fn completion_files() -> Vec<(&'static str, String)> {
    SHELLS
        .iter()
        .map(|(name, _, file)| (*file, completion(name).expect("listed shells render")))
        .collect()
}

/// The bash addition that completes inventory node names: it asks
/// `fencekit status --all --dry-run -o json` (which reads the inventory and
/// contacts nothing, and never runs a password script) for the nodes of the
/// inventory named by `--inventory`/`-i` on the line or `FENCEKIT_INVENTORY`.
fn bash_nodes(cmd: &clap::Command) -> String {
    // Options that take a value: after one of these, the word is that value.
    let mut valued: Vec<String> = Vec::new();
    for sub in cmd.get_subcommands() {
        for a in sub.get_arguments().filter(|a| takes_value(a)) {
            if let Some(l) = a.get_long() {
                valued.push(format!("--{l}"));
            }
            if let Some(s) = a.get_short() {
                valued.push(format!("-{s}"));
            }
        }
    }
    valued.sort();
    valued.dedup();
    format!(
        r#"
# Added by fencekit (src/cli/generate.rs): node names of the inventory
# (--inventory/-i on the line, or $FENCEKIT_INVENTORY) complete as targets.
# The inventory is read with `fencekit status --all --dry-run`, which
# contacts nothing and runs no password script.
_fencekit_nodes() {{
    local inv="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            --inventory|-i) inv="${{COMP_WORDS[i+1]}}" ;;
            --inventory=*) inv="${{COMP_WORDS[i]#--inventory=}}" ;;
        esac
    done
    [[ -n "$inv" ]] || inv="${{FENCEKIT_INVENTORY-}}"
    [[ -n "$inv" && -r "$inv" ]] || return 0
    "${{COMP_WORDS[0]}}" status --inventory "$inv" --all --dry-run --output json 2>/dev/null \
        | sed -n 's/^ *"node": "\([^"]*\)",\{{0,1\}}$/\1/p' | sort -u
}}

_fencekit_with_nodes() {{
    _fencekit "$@"
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    case "${{COMP_WORDS[1]-}}" in
        {commands}) ;;
        *) return 0 ;;
    esac
    [[ "$cur" == -* ]] && return 0
    case " {valued} " in
        *" $prev "*) return 0 ;;
    esac
    local IFS=$'\n'
    COMPREPLY=($(printf '%s\n' "${{COMPREPLY[@]}}" | grep -v '^\[') $(compgen -W "$(_fencekit_nodes)" -- "$cur"))
}}

if [[ "${{BASH_VERSINFO[0]}}" -eq 4 && "${{BASH_VERSINFO[1]}}" -ge 4 || "${{BASH_VERSINFO[0]}}" -gt 4 ]]; then
    complete -F _fencekit_with_nodes -o nosort -o bashdefault -o default fencekit
else
    complete -F _fencekit_with_nodes -o bashdefault -o default fencekit
fi
"#,
        commands = [TARGET_COMMANDS, &["hold", "release"]].concat().join("|"),
        valued = valued.join(" "),
    )
}

fn takes_value(a: &Arg) -> bool {
    !a.is_positional() && matches!(a.get_action(), ArgAction::Set | ArgAction::Append)
}

// ------------------------------------------------------------ man pages ----

/// Every man page name `fencekit man` accepts: the native pages, then the
/// agents (main names and aliases).
pub fn page_names() -> Vec<String> {
    let mut names: Vec<String> = native_pages().into_iter().map(|(n, _)| n).collect();
    names.extend(
        crate::agent::run::agent_names()
            .into_iter()
            .map(str::to_string),
    );
    names
}

/// The roff source of page `name`: `fencekit`, `fencekit-SUB` (or `SUB`),
/// or an agent name (its family's page, rendered by [`crate::agent::man`]).
pub fn man_page(name: &str) -> Option<String> {
    let defs = crate::agent::defs::defs();
    if let Some(fam) = defs.families.iter().find(|f| f.names().any(|n| n == name)) {
        return Some(crate::agent::man::render(fam));
    }
    let wanted = if name == "fencekit" || name.starts_with("fencekit-") {
        name.to_string()
    } else {
        format!("fencekit-{name}")
    };
    native_pages()
        .into_iter()
        .find(|(n, _)| *n == wanted)
        .map(|(_, text)| text)
}

/// Every native page: `fencekit` and `fencekit-SUB` for each subcommand,
/// with its file name stem and roff text (`man/NAME.1`).
pub fn native_pages() -> Vec<(String, String)> {
    let mut cmd = command();
    cmd.build();
    let mut out = vec![("fencekit".to_string(), render_page(&cmd, None))];
    for sub in cmd.get_subcommands() {
        let name = format!("fencekit-{}", sub.get_name());
        out.push((name, render_page(sub, Some(sub.get_name()))));
    }
    out
}

fn render_page(cmd: &clap::Command, sub: Option<&str>) -> String {
    let title = match sub {
        None => "FENCEKIT".to_string(),
        Some(s) => format!("FENCEKIT-{}", s.to_uppercase()),
    };
    let man = clap_mangen::Man::new(cmd.clone())
        .title(title)
        .source(format!("fencekit {}", env!("CARGO_PKG_VERSION")))
        .manual("fencekit manual");
    let mut buf: Vec<u8> = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = man.render_title(&mut buf);
    let _ = man.render_name_section(&mut buf);
    let _ = man.render_synopsis_section(&mut buf);
    let _ = man.render_description_section(&mut buf);
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        let _ = man.render_options_section(&mut buf);
    }
    if cmd.has_subcommands() {
        let _ = man.render_subcommands_section(&mut buf);
    }
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    text.push_str(&hand_written(sub));
    text
}

/// Escapes text for roff (backslashes, dashes, a leading `.` or `'`).
fn roff(s: &str) -> String {
    crate::agent::man::roff(s)
}

fn section(out: &mut String, name: &str) {
    out.push_str(&format!(".SH \"{name}\"\n"));
}

fn tagged(out: &mut String, tag: &str, text: &str) {
    out.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(tag), roff(text)));
}

fn example(out: &mut String, what: &str, cmd: &str) {
    out.push_str(&format!(
        ".PP\n{}\n.PP\n.RS 4\n.nf\n{}\n.fi\n.RE\n",
        roff(what),
        roff(cmd)
    ));
}

/// Which of the hand-written sections a page gets.
fn acts_on_targets(sub: Option<&str>) -> bool {
    sub.is_none() || sub.is_some_and(|s| TARGET_COMMANDS.contains(&s))
}

/// Whether a page lists the URL forms: the commands that take target URLs.
fn takes_urls(sub: Option<&str>) -> bool {
    sub.is_none() || sub.is_some_and(|s| s != "ack" && TARGET_COMMANDS.contains(&s))
}

/// The README's table of URL forms (between its `url-forms` markers),
/// rendered from the platforms' URL forms.
pub fn readme_url_forms() -> String {
    let mut s = String::from("| URL form | names | as a target |\n|---|---|---|\n");
    for f in crate::method::url_forms() {
        s.push_str(&format!(
            "| `{}` | {} | {} |\n",
            f.form,
            f.meaning,
            if f.target {
                "yes"
            } else {
                "inventory endpoint only"
            }
        ));
    }
    s
}

/// The README with its URL-forms table replaced by a fresh rendering;
/// `None` when the markers are missing.
pub fn readme_with_url_forms(readme: &str) -> Option<String> {
    let (head, rest) = readme.split_once(README_FORMS_BEGIN)?;
    let (_, tail) = rest.split_once(README_FORMS_END)?;
    Some(format!(
        "{head}{README_FORMS_BEGIN}\n{}{README_FORMS_END}{tail}",
        readme_url_forms()
    ))
}

/// The README's markers around the generated table.
pub const README_FORMS_BEGIN: &str =
    "<!-- url-forms: generated from the platforms' URL_FORMS; FENCEKIT_REGENERATE=1 cargo test --test generated_cli -->";
/// The end marker.
pub const README_FORMS_END: &str = "<!-- /url-forms -->";

/// EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE ALSO of a native page.
fn hand_written(sub: Option<&str>) -> String {
    let mut m = String::new();
    if takes_urls(sub) {
        section(&mut m, "TARGETS");
        m.push_str(&format!(
            ".PP\n{}\n",
            roff(
                "A target is a URL of one of these forms, or a node name or host range \
                 (node[01-04]) from the inventory. A password never goes in a URL."
            )
        ));
        for f in crate::method::url_forms() {
            let inv = if f.target {
                ""
            } else {
                " (inventory endpoint only)"
            };
            tagged(&mut m, f.form, &format!("{}{inv}.", f.meaning));
        }
    }
    if sub == Some("verify") {
        section(&mut m, "THE RULE");
        m.push_str(&format!(".PP\n{}\n", roff(crate::fleet::verify::THE_RULE)));
        section(&mut m, "VERDICTS");
        for (v, meaning, code) in crate::fleet::verify::VERDICTS {
            tagged(
                &mut m,
                v.as_str(),
                &format!("{meaning}. Exit status {code}."),
            );
        }
        m.push_str(&format!(
            ".PP
{}
",
            roff(
                "A TCP probe of the node's address ends accepted (the host is up), reset (an RST: \
                 a network stack answers there, so the kernel is alive: never evidence of off), \
                 unreachable (EHOSTUNREACH or ENETUNREACH: evidence of off) or silent (no answer \
                 within --probe-timeout: weak evidence of off, a firewall also drops). The same \
                 verdicts, with their exit status, are the result of off and reboot with --verify."
            )
        ));
    }
    section(&mut m, "EXIT STATUS");
    match sub {
        Some("agent") => {
            m.push_str(
                "As the named fence agent (fence\\-agents convention): 0 success (for \
                 \\fBstatus\\fR: on), 1 failure or usage error, 2 \\fBstatus\\fR only: off.\n",
            );
        }
        Some("lab") => {
            m.push_str("0 after SIGINT or SIGTERM; 1 when the lab cannot start; 64 usage error.\n");
        }
        Some("demo") => {
            m.push_str("0 when every step of the demonstration succeeded; 1 otherwise.\n");
        }
        Some("agents") => m.push_str("0 success; 1 when standard output is gone.\n"),
        Some("completions") | Some("man") => {
            m.push_str(
                "0 success; 64 an unknown shell or page (the message lists the known ones).\n",
            );
        }
        _ => {
            for (code, text) in exit::TABLE {
                tagged(&mut m, &code.to_string(), text);
            }
        }
    }
    if acts_on_targets(sub) || sub == Some("agent") {
        section(&mut m, "ENVIRONMENT");
        if acts_on_targets(sub) {
            tagged(
                &mut m,
                "FENCEKIT_PASSWORD",
                "The BMC password when no other source (--password-file, --password-env, \
                 --password-script, an inventory reference) is given. Never printed.",
            );
            tagged(
                &mut m,
                "FENCEKIT_INVENTORY",
                "The inventory file (same as --inventory).",
            );
            tagged(
                &mut m,
                "FENCEKIT_AUDIT",
                "Append one JSON line per finished target to this file (same as --audit).",
            );
            tagged(
                &mut m,
                "XDG_RUNTIME_DIR",
                "Where per-BMC locks and manual acknowledgments live ($XDG_RUNTIME_DIR/fencekit); \
                 /run/fencekit when unset.",
            );
            tagged(&mut m, "NO_COLOR", "When set, no colour in log output.");
        }
        if matches!(sub, Some("off") | Some("reboot")) {
            tagged(
                &mut m,
                "FENCEKIT_NODE, FENCEKIT_ACTION, FENCEKIT_METHOD, FENCEKIT_LEVEL",
                "Set for the --on-confirmed-off hook (with FENCEKIT_ENDPOINT, FENCEKIT_ADDRESS, \
                 FENCEKIT_STATE=off, FENCEKIT_EFFECT, FENCEKIT_OUTCOME and FENCEKIT_EVIDENCE): the \
                 node, off or reboot, the driver and level that fenced it. The hook never sees \
                 FENCEKIT_PASSWORD, any other inherited FENCEKIT_ variable, or a variable a \
                 credential reference names.",
            );
        }
        if sub.is_none() || sub == Some("agent") {
            tagged(
                &mut m,
                "PCMK_service",
                "Agent mode: pacemaker-fenced turns on disable_timeout, as in fence-agents; it lifts \
                 only the wait for the new power state (connecting and each request stay bounded).",
            );
        }
    }
    if matches!(sub, Some("hold") | Some("release")) {
        section(&mut m, "ENVIRONMENT");
        tagged(
            &mut m,
            "FENCEKIT_INVENTORY",
            "The inventory (same as --inventory): names and ranges resolve there.",
        );
        tagged(
            &mut m,
            "FENCEKIT_AUDIT",
            "Append one JSON line per hold or release to this file (same as --audit).",
        );
        tagged(
            &mut m,
            "XDG_RUNTIME_DIR",
            "Holds live in $XDG_RUNTIME_DIR/fencekit/hold (/run/fencekit/hold when unset), \
             beside the per-BMC locks; where that cannot be written, hold fails (exit 1).",
        );
    }
    if acts_on_targets(sub) {
        section(&mut m, "FILES");
        tagged(
            &mut m,
            "$XDG_RUNTIME_DIR/fencekit/, /run/fencekit/",
            "Lock files that serialise fencekit processes acting on the same BMC (skipped, with a \
             debug message, on a read-only filesystem; --no-lock turns them off).",
        );
        tagged(
            &mut m,
            "$XDG_RUNTIME_DIR/fencekit/ack/",
            "Acknowledgments written by fencekit ack for manual fencing methods.",
        );
        tagged(
            &mut m,
            "$XDG_RUNTIME_DIR/fencekit/hold/",
            "Holds placed by fencekit hold: on, off and reboot refuse held nodes (exit 1).",
        );
        tagged(
            &mut m,
            "inventory (TOML)",
            "Nodes, their addresses and probe ports, and their fencing methods in level order, \
             with credential references (password_file, password_env, password_script), never \
             plain passwords. See /usr/share/doc/fencekit/runbooks.md.",
        );
    }
    section(&mut m, "EXAMPLES");
    for (what, cmd) in examples(sub) {
        example(&mut m, what, cmd);
    }
    section(&mut m, "SEE ALSO");
    let mut also: Vec<String> = Vec::new();
    if sub.is_some() {
        also.push(".BR fencekit (1)".into());
    } else {
        for s in [
            "status", "off", "reboot", "verify", "check", "hold", "ack", "lab", "agent",
        ] {
            also.push(format!(".BR fencekit\\-{s} (1)"));
        }
    }
    if sub.is_none() || sub == Some("agent") {
        also.push(".BR fence_ipmilan (8)".into());
        also.push(".BR fence_redfish (8)".into());
        also.push(".BR fence_virsh (8)".into());
    }
    let n = also.len();
    for (i, a) in also.into_iter().enumerate() {
        m.push_str(&a);
        if i + 1 < n {
            m.push_str(" ,");
        }
        m.push('\n');
    }
    m
}

/// Hand-written examples per page: (what it does, the command).
fn examples(sub: Option<&str>) -> Vec<(&'static str, &'static str)> {
    match sub {
        None => vec![
            (
                "Rehearse on simulated BMCs (another terminal), then fence one:",
                "fencekit lab --nodes 4 --hosts --write-inventory lab.toml\n\
                 fencekit off --inventory lab.toml node02 --verify",
            ),
            (
                "Read the power state of a real BMC, the password from a file:",
                "fencekit status ipmi://admin@10.0.7.17 --password-file /etc/fencekit/bmc07.pw",
            ),
            (
                "A rack from the inventory, as JSON:",
                "fencekit status --inventory rack.toml 'node[01-16]' --output json",
            ),
        ],
        Some("status") => vec![
            (
                "One BMC; exit 0 on, 2 off, 1 unreadable:",
                "fencekit status ipmi://admin@10.0.7.17 --password-env BMC_PW",
            ),
            (
                "Every node of an inventory:",
                "fencekit status --inventory rack.toml --all",
            ),
        ],
        Some("on") => vec![(
            "Power a range on, 2 s apart (inrush):",
            "fencekit on --inventory rack.toml 'node[01-16]' --stagger 2s",
        )],
        Some("off") => vec![
            (
                "Fence a node and prove it is off:",
                "fencekit off --inventory rack.toml node07 --verify",
            ),
            (
                "A BMC given by URL, password from a file:",
                "fencekit off redfish://admin@10.0.7.17/redfish/v1/Systems/1 --password-file bmc.pw",
            ),
            (
                "Never more than a quarter of the rack by mistake (exit 64, nothing contacted):",
                "fencekit off --inventory rack.toml 'node[01-16]' --max-fence 25%",
            ),
            (
                "Taint the Kubernetes node while it is observed off:",
                "fencekit off --inventory rack.toml node07 --on-confirmed-off \\\n    \
                 'kubectl taint nodes \"$FENCEKIT_NODE\" node.kubernetes.io/out-of-service=nodeshutdown:NoExecute'",
            ),
            (
                "NMI first, let kdump save a crash dump (up to 5 minutes), then power off:",
                "fencekit off --inventory rack.toml node07 --crashdump --crashdump-wait 5m --timeout 6m",
            ),
        ],
        Some("reboot") => vec![
            (
                "Off (confirmed), then on (confirmed), as JSON with the timeline:",
                "fencekit reboot --inventory rack.toml node07 --output json",
            ),
            (
                "Clean up while the node is off; a failing clean-up leaves it off:",
                "fencekit reboot --inventory rack.toml node07 --on-confirmed-off /etc/fencekit/cleanup.sh",
            ),
        ],
        Some("hold") => vec![
            (
                "Keep node07 from being fenced or powered during its maintenance:",
                "fencekit hold --inventory rack.toml node07 --for 2h --reason 'DIMM swap, ticket 4711'",
            ),
            ("Who holds what, why and until when:", "fencekit hold --list"),
        ],
        Some("release") => vec![(
            "End the maintenance early:",
            "fencekit release --inventory rack.toml node07",
        )],
        Some("monitor") => vec![(
            "Does the BMC answer and accept the credentials?",
            "fencekit monitor ipmi://admin@10.0.7.17 --password-file bmc.pw",
        )],
        Some("verify") => vec![
            (
                "Prove a fenced node is off (BMC reads and host probes):",
                "fencekit verify --inventory rack.toml node07",
            ),
            (
                "Before a node rejoins: on, and answering:",
                "fencekit verify --inventory rack.toml node07 --expect on",
            ),
        ],
        Some("check") => vec![(
            "Would every fencing level of every node work? (changes nothing)",
            "fencekit check --inventory rack.toml --all",
        )],
        Some("list") => vec![(
            "The systems behind a Redfish service, with their power state:",
            "fencekit list redfish://admin@10.0.7.17 --password-file bmc.pw",
        )],
        Some("ack") => vec![(
            "Confirm that node09 was switched off by hand:",
            "fencekit ack node09 --by alice",
        )],
        Some("lab") => vec![
            (
                "Four simulated BMCs with hosts, and an inventory for them:",
                "fencekit lab --nodes 4 --hosts --write-inventory lab.toml",
            ),
            (
                "A lossy, slow BMC that reports off while its host still answers:",
                "fencekit lab --nodes 2 --hosts --fault 'node02:lying+loss=0.3'",
            ),
        ],
        Some("demo") => vec![("Fence a simulated node, step by step:", "fencekit demo")],
        Some("completions") => vec![
            (
                "Install the bash completion for the current user:",
                "fencekit completions bash > ~/.local/share/bash-completion/completions/fencekit",
            ),
            (
                "zsh:",
                "fencekit completions zsh > ~/.zfunc/_fencekit",
            ),
        ],
        Some("man") => vec![
            ("Read a page without installing it:", "fencekit man fencekit-off | man -l -"),
            ("An agent's page:", "fencekit man fence_ipmilan | man -l -"),
        ],
        Some("agents") => vec![
            ("Every agent name, its fence-agents package and release:", "fencekit agents"),
            (
                "Link every name in a directory (as packaging/Containerfile does):",
                "for a in $(fencekit agents | cut -d' ' -f1); do ln -sf fencekit \"/usr/sbin/$a\"; done",
            ),
        ],
        Some("agent") => vec![(
            "Run as fence_ipmilan without a symlink:",
            "fencekit agent fence_ipmilan --ip=10.0.7.17 --username=admin \\\n    \
             --password-script='cat /etc/fencekit/bmc07.pw' --lanplus --action=status",
        )],
        Some(_) => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_renders_and_names_every_subcommand() {
        for (name, _, _) in SHELLS {
            let s = completion(name).expect("renders");
            for sub in ["status", "off", "verify", "lab", "agent"] {
                assert!(s.contains(sub), "{name} lacks {sub}");
            }
            // clap_complete completes positional values in bash and zsh only
            if matches!(*name, "bash" | "zsh") {
                assert!(s.contains("fence_ilo4"), "{name} lacks the agent names");
            }
        }
        assert!(completion("tcsh").is_none());
    }

    #[test]
    fn pages_cover_every_subcommand_and_resolve() {
        let pages = native_pages();
        assert_eq!(pages[0].0, "fencekit");
        assert!(pages.iter().any(|(n, _)| n == "fencekit-status"));
        assert!(!pages.iter().any(|(n, _)| n == "fencekit-help"));
        let main = man_page("fencekit").unwrap();
        assert!(main.contains("\n.TH FENCEKIT 1 "));
        assert!(main.contains(".SH \"EXIT STATUS\""));
        assert!(main.contains("FENCEKIT_PASSWORD"));
        assert!(man_page("off").unwrap().contains("\n.TH FENCEKIT-OFF 1 "));
        assert!(man_page("fence_ilo4")
            .unwrap()
            .starts_with(".TH FENCE_IPMILAN 8 "));
        assert!(man_page("nope").is_none());
    }

    #[test]
    fn exit_status_lists_every_code() {
        let page = man_page("fencekit-status").unwrap();
        for (code, _) in exit::TABLE {
            assert!(page.contains(&format!("\\fB{code}\\fR")), "{code}");
        }
    }
}
