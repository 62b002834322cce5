//! Every command the user documentation shows is run here.
//!
//! Convention for fenced blocks in `docs/*.md` (all but `docs/design.md`,
//! which is for contributors, and the generated `docs/reliability.md`) —
//! the first word of the info string is the
//! language, the rest tells this harness what to do:
//!
//! * ```` ```sh test ```` — run, in document order, by one `bash` per page
//!   (`set -Eeuo pipefail`, so a failing command fails the test unless the
//!   page handles its exit status, e.g. `|| echo "exit $?"`). Add `cwd=repo`
//!   to run a block in the source tree (in a subshell) instead of the page's
//!   scratch directory.
//! * ```` ```sh lab ```` — the `fencekit lab …` command a page asks the reader
//!   to start in a second terminal; the harness starts exactly that lab
//!   (through `tests/support`), with three rewrites so that tests can run
//!   side by side: `--ipmi-port-base P` gets free ports (and the page's
//!   mentions of ports P, P+1, … are rewritten to match), `--hosts` gets a
//!   free host port, and `--write-inventory FILE` lands in the scratch dir.
//! * ```` ```sh cluster ```` — run like `sh test`, with a one-node corosync +
//!   Pacemaker cluster running whose fencer runs fencekit as its fence agents
//!   (`tests/peers/pacemaker_start.sh`, through `tests/support/pacemaker.rs`;
//!   root, packages corosync and pacemaker). The page's whole script then runs
//!   inside the cluster's mount namespace, where `cibadmin`, `stonith_admin`
//!   and `crm_resource` reach that cluster. Without the packages these blocks
//!   are left out (SKIP; a failure under `FENCEKIT_REQUIRE_PEERS=1`).
//! * ```` ```sh untested: REASON ```` — shown only (real hardware, a
//!   container build, a privileged install); the reason is mandatory.
//! * A bare ```` ```sh ```` (or `bash`, `shell`, `console`) is an error.
//!
//! Each page runs in a fresh scratch directory with `HOME` and
//! `XDG_RUNTIME_DIR` inside it, `examples/` copied into it, `fencekit` and
//! `fence_*` symlinks to it first on `PATH`, no `FENCEKIT_*` variables, and
//! `FENCEKIT_BIN` naming the binary under test (for `install.sh`).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

/// The user documentation; `docs_are_all_listed` keeps this complete.
const PAGES: &[&str] = &[
    "docs/README.md",
    "docs/quickstart.md",
    "docs/install.md",
    "docs/operator.md",
    "docs/runbooks.md",
    "docs/pacemaker.md",
    "docs/far.md",
    "docs/security.md",
    "docs/performance.md",
    "docs/pdu.md",
    "docs/ipmi.md",
    "docs/monitoring.md",
    "docs/vsphere.md",
    "docs/vsphere-rest.md",
    "docs/azure.md",
    "docs/hypervisors.md",
    "docs/ucs.md",
];

/// What a fenced block is for.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Test { repo: bool },
    Cluster,
    Lab,
    Untested,
    Other,
}

#[derive(Debug, Clone)]
struct Block {
    kind: Kind,
    /// 1-based line of the block's first content line.
    line: usize,
    text: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The fenced blocks of a page; `Err` for a block that breaks the convention.
fn blocks(page: &str, md: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut lines = md.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let t = line.trim_start();
        let Some(info) = t.strip_prefix("```") else {
            continue;
        };
        let fence = "```";
        let info = info.trim();
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("");
        let rest: Vec<&str> = words.collect();
        let kind = match lang {
            "sh" | "bash" | "shell" | "console" => {
                if lang != "sh" {
                    return Err(format!("{page}:{}: use ```sh, not ```{lang}", i + 1));
                }
                match rest.first().copied() {
                    Some("test") => Kind::Test {
                        repo: rest[1..].contains(&"cwd=repo"),
                    },
                    Some("lab") => Kind::Lab,
                    Some("cluster") => Kind::Cluster,
                    Some(w) if w.starts_with("untested") => {
                        if rest.len() < 2 {
                            return Err(format!(
                                "{page}:{}: ```sh untested needs a reason (```sh untested: real BMC)",
                                i + 1
                            ));
                        }
                        Kind::Untested
                    }
                    _ => {
                        return Err(format!(
                            "{page}:{}: a sh block must say `test`, `cluster`, `lab` or \
                             `untested: REASON`",
                            i + 1
                        ))
                    }
                }
            }
            _ => Kind::Other,
        };
        let mut text = String::new();
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with(fence) {
                closed = true;
                break;
            }
            text.push_str(l);
            text.push('\n');
        }
        if !closed {
            return Err(format!("{page}:{}: unclosed code block", i + 1));
        }
        out.push(Block {
            kind,
            line: i + 2,
            text,
        });
    }
    Ok(out)
}

fn read(page: &str) -> String {
    std::fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// Splits a one-line command into words (single and double quotes).
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in cmd.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            None => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Replaces the whole decimal number `from` with `to` wherever it stands alone.
fn replace_number(text: &str, from: u16, to: u16) -> String {
    let from = from.to_string();
    let mut out = String::new();
    let mut rest = text;
    while let Some(pos) = rest.find(&from) {
        let before = rest[..pos].chars().last();
        let after = rest[pos + from.len()..].chars().next();
        out.push_str(&rest[..pos]);
        if before.is_some_and(|c| c.is_ascii_digit()) || after.is_some_and(|c| c.is_ascii_digit()) {
            out.push_str(&from);
        } else {
            out.push_str(&to.to_string());
        }
        rest = &rest[pos + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Labs share the 127.0.0.N and 127.1.x.y addresses: one lab starts at a
/// time, so that the free ports one page picks are bound before the next
/// page looks (each page has its own runtime directory, so its locks are its
/// own).
static LABS: Mutex<()> = Mutex::new(());

/// Runs every `sh test` block of `page`, against its `sh lab` lab if any.
fn run_page(page: &str) {
    let md = read(page);
    let blocks = blocks(page, &md).unwrap_or_else(|e| panic!("{e}"));
    let wants_cluster = blocks.iter().any(|b| b.kind == Kind::Cluster);
    // Started before the lab (it takes a few seconds); stopped after the
    // page's script, on drop.
    let cluster = if wants_cluster {
        support::pacemaker::Cluster::start()
    } else {
        None
    };
    let tests: Vec<&Block> = blocks
        .iter()
        .filter(|b| match b.kind {
            Kind::Test { .. } => true,
            Kind::Cluster => cluster.is_some(),
            _ => false,
        })
        .collect();
    assert!(
        !tests.is_empty() || page == "docs/README.md",
        "{page}: no `sh test` block"
    );
    let labs: Vec<&Block> = blocks.iter().filter(|b| b.kind == Kind::Lab).collect();
    assert!(labs.len() <= 1, "{page}: more than one `sh lab` block");

    let scratch = tempfile::Builder::new()
        .prefix("fencekit-docs-")
        .tempdir()
        .unwrap();
    let work = scratch.path().join("work");
    let home = scratch.path().join("home");
    let run_dir = scratch.path().join("run");
    let agents = scratch.path().join("agents");
    for d in [&work, &home, &run_dir, &agents] {
        std::fs::create_dir_all(d).unwrap();
    }
    for name in fencekit::agent::run::agent_names() {
        std::os::unix::fs::symlink(support::bin(), agents.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(support::bin(), agents.join("fencekit")).unwrap();

    let mut ports: Vec<(u16, u16)> = Vec::new();
    let _lab = labs.first().map(|b| {
        // Held until this lab is up: its ports are bound before another
        // page looks for free ones. The pages then run side by side.
        let _serial = LABS.lock().unwrap_or_else(|e| e.into_inner());
        let line = b.text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let w = words(line);
        assert!(
            w.len() >= 2 && w[0] == "fencekit" && w[1] == "lab",
            "{page}:{}: a `sh lab` block holds one `fencekit lab …` command",
            b.line
        );
        let mut args: Vec<String> = Vec::new();
        let nodes: u16 = w
            .iter()
            .position(|a| a == "--nodes")
            .and_then(|i| w.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let mut i = 2;
        while i < w.len() {
            let a = &w[i];
            match a.as_str() {
                "--ipmi-port-base" => {
                    let doc: u16 = w[i + 1].parse().expect("numeric port base");
                    // The page's own ports when they are free, so that the
                    // numbers a reader sees are the ones used.
                    let real = if (0..nodes).all(|k| {
                        // node k+1 is 127.0.0.(k+1), on port doc+k
                        let at = std::net::Ipv4Addr::new(127, 0, 0, (k + 1) as u8);
                        support::port_is_free_at(at, doc + k)
                    }) {
                        doc
                    } else {
                        support::free_ports(nodes)
                    };
                    ports.extend((0..nodes).map(|k| (doc + k, real + k)));
                    args.extend([a.clone(), real.to_string()]);
                    i += 2;
                }
                "--hosts" => {
                    let explicit = w.get(i + 1).and_then(|n| n.parse::<u16>().ok());
                    let doc = explicit.unwrap_or(10250);
                    let real = if host_port_is_free(doc, nodes) {
                        doc
                    } else {
                        support::free_port()
                    };
                    ports.push((doc, real));
                    args.extend([a.clone(), real.to_string()]);
                    i += if explicit.is_some() { 2 } else { 1 };
                }
                "--write-inventory" => {
                    args.extend([a.clone(), work.join(&w[i + 1]).display().to_string()]);
                    i += 2;
                }
                _ => {
                    args.push(a.clone());
                    i += 1;
                }
            }
        }
        // The documents name the lab's addresses (node N is 127.0.0.N).
        if !args.iter().any(|a| a == "--bind") {
            args.extend(["--bind".to_string(), "127.0.0.1".to_string()]);
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        support::Lab::start(&refs)
    });

    copy_dir(&root().join("examples"), &work.join("examples"), &ports);

    // One script, with a table from its lines back to the page's lines.
    let mut script = String::from(
        "set -Eeuo pipefail\ntrap 'echo \"DOCS-FAILED-AT-LINE $LINENO: $BASH_COMMAND\" >&2' ERR\n",
    );
    let mut origin: Vec<usize> = vec![0, 0];
    for b in &tests {
        let mut text = b.text.clone();
        for (doc, real) in ports.iter().rev() {
            text = replace_number(&text, *doc, *real);
        }
        let repo = matches!(b.kind, Kind::Test { repo: true });
        if repo {
            script.push_str(&format!("( cd '{}'\n", root().display()));
            origin.push(b.line);
        }
        for (k, l) in text.lines().enumerate() {
            script.push_str(l);
            script.push('\n');
            origin.push(b.line + k);
        }
        if repo {
            script.push_str(")\n");
            origin.push(b.line);
        }
    }
    let bindir = support::bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}:{}",
        agents.display(),
        bindir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // With a cluster, in its mount namespace (its tools and its fencer's
    // agents); the page's files, PATH and the lab are the same there.
    let mut c = match &cluster {
        Some(cl) => cl.command("bash"),
        None => Command::new("bash"),
    };
    c.arg("-c")
        .arg(&script)
        .current_dir(&work)
        .env("PATH", path)
        .env("HOME", &home)
        .env("XDG_RUNTIME_DIR", &run_dir)
        .env("NO_COLOR", "1")
        .env("FENCEKIT_BIN", support::bin())
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("FENCEKIT_AUDIT")
        .env_remove("RUST_LOG");
    let r = support::run(c, Duration::from_secs(300));
    if r.code != Some(0) {
        let at = r
            .stderr
            .lines()
            .filter_map(|l| l.strip_prefix("DOCS-FAILED-AT-LINE "))
            .filter_map(|n| n.split(':').next()?.trim().parse::<usize>().ok())
            .next()
            .and_then(|n| origin.get(n).copied())
            .map(|l| format!("{page}:{l}"))
            .unwrap_or_else(|| page.to_string());
        panic!("a documented command failed at {at}\n{r}");
    }
}

/// True when TCP `port` is free on the simulated hosts' addresses (127.1.0.N).
fn host_port_is_free(port: u16, nodes: u16) -> bool {
    (1..=nodes.min(250)).all(|n| {
        std::net::TcpListener::bind((std::net::Ipv4Addr::new(127, 1, 0, n as u8), port)).is_ok()
    })
}

/// Copies `examples/` into the scratch dir, with the lab's ports rewritten
/// as in the page's commands.
fn copy_dir(from: &Path, to: &Path, ports: &[(u16, u16)]) {
    std::fs::create_dir_all(to).unwrap();
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()), ports);
        } else {
            let mut text = std::fs::read_to_string(&p).unwrap();
            for (doc, real) in ports.iter().rev() {
                text = replace_number(&text, *doc, *real);
            }
            std::fs::write(to.join(e.file_name()), text).unwrap();
        }
    }
}

#[test]
fn docs_are_all_listed_and_follow_the_convention() {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| PathBuf::from("docs").join(e.file_name()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        // design notes and the generated reliability figures (written by
        // tests/reliability.rs) carry no commands to run
        .filter(|p| p != Path::new("docs/design.md") && p != Path::new("docs/reliability.md"))
        .collect();
    found.sort();
    let mut listed: Vec<PathBuf> = PAGES.iter().map(PathBuf::from).collect();
    listed.sort();
    assert_eq!(found, listed, "docs/*.md and PAGES in tests/docs.rs differ");
    for page in PAGES {
        blocks(page, &read(page)).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The verify rule and the verdict table are stated once, in code
/// (`fleet::verify::{THE_RULE, VERDICTS}`); the operator's guide shows the
/// same words (line breaks, quote marks and backticks aside).
#[test]
fn the_guide_states_the_verify_rule_and_verdicts_as_the_code_does() {
    let flat = |t: &str| {
        t.replace(['`', '>', '|'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let guide = flat(&read("docs/operator.md"));
    assert!(
        guide.contains(&flat(fencekit::fleet::verify::THE_RULE)),
        "docs/operator.md does not state THE_RULE as src/fleet/verify/decide.rs does"
    );
    for (v, meaning, code) in fencekit::fleet::verify::VERDICTS {
        let row = flat(&format!("{} | {meaning} | {code}", v.as_str()));
        assert!(
            guide.contains(&row),
            "docs/operator.md lacks the row: {row}"
        );
    }
}

#[test]
fn the_convention_is_enforced() {
    assert!(blocks("x", "```sh\nls\n```\n").is_err());
    assert!(blocks("x", "```bash test\nls\n```\n").is_err());
    assert!(blocks("x", "```sh untested\nls\n```\n").is_err());
    assert_eq!(
        blocks("x", "```sh cluster\nstonith_admin -I\n```\n").unwrap()[0].kind,
        Kind::Cluster
    );
    assert!(blocks("x", "```sh test\nls\n").is_err());
    let b = blocks(
        "x",
        "a\n```sh untested: real BMC\nls\n```\n```toml\nx=1\n```\n",
    )
    .unwrap();
    assert_eq!(b[0].kind, Kind::Untested);
    assert_eq!(b[0].line, 3);
    assert_eq!(b[1].kind, Kind::Other);
    assert_eq!(
        replace_number("127.0.0.1:16231 116231 162311 =16231", 16231, 20001),
        "127.0.0.1:20001 116231 162311 =20001"
    );
    assert_eq!(
        words("fencekit lab --fault 'node0[1-2]:stuck' x"),
        ["fencekit", "lab", "--fault", "node0[1-2]:stuck", "x"]
    );
}

#[test]
fn quickstart() {
    run_page("docs/quickstart.md");
}

#[test]
fn install() {
    run_page("docs/install.md");
}

#[test]
fn operator_guide() {
    run_page("docs/operator.md");
}

#[test]
fn runbooks() {
    run_page("docs/runbooks.md");
}

#[test]
fn pacemaker() {
    run_page("docs/pacemaker.md");
}

#[test]
fn far() {
    run_page("docs/far.md");
}

#[test]
fn security() {
    run_page("docs/security.md");
}

#[test]
fn pdu() {
    run_page("docs/pdu.md");
}

#[test]
fn vsphere() {
    run_page("docs/vsphere.md");
}

#[test]
fn performance() {
    run_page("docs/performance.md");
}

#[test]
fn vsphere_rest() {
    run_page("docs/vsphere-rest.md");
}

#[test]
fn ipmi_workarounds() {
    run_page("docs/ipmi.md");
}

/// docs/ipmi.md's workaround table is the code's (`ipmi::workaround::TABLE`),
/// rendered; `FENCEKIT_REGENERATE=1` rewrites it.
#[test]
fn the_workaround_table_is_the_codes() {
    let page = "docs/ipmi.md";
    let md = read(page);
    let begin = md
        .find("<!-- BEGIN workaround table")
        .expect("docs/ipmi.md has the BEGIN marker");
    let start = begin + md[begin..].find('\n').expect("a line") + 1;
    let end = md
        .find("<!-- END workaround table -->")
        .expect("docs/ipmi.md has the END marker");
    let want = fencekit::ipmi::workaround::markdown_table();
    if std::env::var("FENCEKIT_REGENERATE").is_ok_and(|v| v == "1") {
        let text = format!("{}{want}{}", &md[..start], &md[end..]);
        std::fs::write(root().join(page), text).expect("write docs/ipmi.md");
        return;
    }
    assert_eq!(
        &md[start..end],
        want,
        "docs/ipmi.md's workaround table differs from src/ipmi/workaround.rs: run \
         `FENCEKIT_REGENERATE=1 cargo test --test docs the_workaround_table` and commit it"
    );
    // every name in the table is one the CLI accepts
    for e in &fencekit::ipmi::workaround::TABLE {
        assert!(
            md[start..end].contains(&format!("| `{}` |", e.name)),
            "{}",
            e.name
        );
    }
}

#[test]
fn monitoring() {
    run_page("docs/monitoring.md");
}

/// The YAML blocks of a page, each parsed (python3's yaml module) into a
/// list of documents; `None` (after a SKIP, or a failure under
/// FENCEKIT_REQUIRE_PEERS=1) without python3-yaml.
fn yaml_documents(page: &str) -> Option<Vec<serde_json::Value>> {
    let probe = Command::new("python3")
        .args(["-c", "import yaml"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        support::skip("python3 cannot import yaml (Debian package python3-yaml)");
        return None;
    }
    let md = read(page);
    let mut out = Vec::new();
    let mut in_yaml = false;
    let mut text = String::new();
    for line in md.lines() {
        match (in_yaml, line.trim_start().strip_prefix("```")) {
            (false, Some(info)) if info.trim() == "yaml" => {
                in_yaml = true;
                text.clear();
            }
            (true, Some(_)) => {
                in_yaml = false;
                let dir = tempfile::tempdir().unwrap();
                let f = dir.path().join("block.yaml");
                std::fs::write(&f, &text).unwrap();
                let mut c = Command::new("python3");
                c.args([
                    "-c",
                    "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
                ])
                .arg(&f);
                let r = support::run(c, Duration::from_secs(30));
                assert_eq!(
                    r.code,
                    Some(0),
                    "{page}: a yaml block does not parse\n{text}\n{r}"
                );
                let docs: Vec<serde_json::Value> = serde_json::from_str(r.stdout.trim()).unwrap();
                out.extend(docs.into_iter().filter(|d| !d.is_null()));
            }
            (true, None) => {
                text.push_str(line);
                text.push('\n');
            }
            _ => {}
        }
    }
    Some(out)
}

/// `fencekit ARGS… --help` exits 0 only when every argument before
/// `--help` is one `fencekit` takes.
fn assert_fencekit_args(args: &[serde_json::Value], what: &str) {
    let args: Vec<&str> = args.iter().map(|a| a.as_str().unwrap()).collect();
    let mut c = Command::new(support::bin());
    c.args(&args).arg("--help");
    let r = support::run(c, Duration::from_secs(30));
    assert_eq!(r.code, Some(0), "{what}: fencekit refuses {args:?}\n{r}");
}

/// docs/monitoring.md's Kubernetes manifests are checked for shape (never
/// applied): FAR's namespace and Secret as packaging/far-template.yaml has
/// them, the Secret's key mounted where the inventory reads the password,
/// the ConfigMap's and Secrets' files where the arguments name them,
/// arguments fencekit accepts, the watch's port, probe, Service and
/// ServiceMonitor agreeing; the web configuration in its Secret is one
/// fencekit accepts (with a certificate where it names the TLS Secret's
/// files), and its bcrypt hash is the scrape Secret's password.
#[test]
fn monitoring_manifests_have_their_shape() {
    let Some(docs) = yaml_documents("docs/monitoring.md") else {
        return;
    };
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        docs.iter().filter(|d| d["kind"] == kind).collect()
    };
    let mut kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "ConfigMap",
            "CronJob",
            "Deployment",
            "Secret",
            "Secret",
            "Service",
            "ServiceMonitor"
        ]
    );
    let secrets = of("Secret");
    let own_secret = |name: &str| secrets.iter().find(|s| s["metadata"]["name"] == name);
    // FAR's namespace and credentials Secret, as the FAR template has them.
    let far = std::fs::read_to_string(root().join("packaging/far-template.yaml")).unwrap();
    let namespace = far
        .lines()
        .find_map(|l| l.trim().strip_prefix("namespace: "))
        .unwrap();
    let secret = far
        .lines()
        .find_map(|l| l.trim().strip_prefix("sharedSecretName: "))
        .unwrap();
    for d in &docs {
        assert!(d["apiVersion"].is_string(), "{d}");
        assert!(d["metadata"]["name"].is_string(), "{d}");
        assert_eq!(d["metadata"]["namespace"], namespace, "{d}");
    }
    let config = of("ConfigMap")[0];
    let inventory = config["data"]["inventory.toml"].as_str().unwrap();
    fencekit::fleet::inventory::Inventory::parse(inventory, Path::new("inventory.toml"))
        .unwrap_or_else(|e| panic!("the ConfigMap's inventory: {e}"));
    assert!(config["data"]["baseline.toml"]
        .as_str()
        .unwrap()
        .contains("version = 1"));

    let cron = of("CronJob")[0];
    assert_eq!(
        cron["spec"]["schedule"]
            .as_str()
            .unwrap()
            .split(' ')
            .count(),
        5
    );
    let cron_pod = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(cron_pod["restartPolicy"], "Never");
    let deployment = of("Deployment")[0];
    let pod = &deployment["spec"]["template"]["spec"];
    for (what, pod) in [("CronJob", cron_pod), ("Deployment", pod)] {
        let c = &pod["containers"][0];
        assert_eq!(c["command"][0], "/usr/sbin/fencekit", "{what}");
        assert_eq!(
            c["securityContext"]["readOnlyRootFilesystem"], true,
            "{what}"
        );
        let args = c["args"].as_array().unwrap();
        assert_eq!(args[0], "check", "{what}");
        assert_fencekit_args(args, what);
        let volumes = pod["volumes"].as_array().unwrap();
        let volume = |name: &str| volumes.iter().find(|v| v["name"] == name).unwrap();
        for m in c["volumeMounts"].as_array().unwrap() {
            let v = volume(m["name"].as_str().unwrap());
            let dir = m["mountPath"].as_str().unwrap();
            if let Some(cm) = v["configMap"]["name"].as_str() {
                assert_eq!(cm, config["metadata"]["name"], "{what}");
                // Every file the arguments name under it is a key of the ConfigMap.
                for a in args.iter().filter_map(|a| a.as_str()) {
                    if let Some(file) = a.strip_prefix(&format!("{dir}/")) {
                        assert!(config["data"][file].is_string(), "{what}: {a}");
                    }
                }
            } else if let Some(own) = own_secret(v["secret"]["secretName"].as_str().unwrap()) {
                // One of the page's Secrets: the files the arguments name are its keys.
                for a in args.iter().filter_map(|a| a.as_str()) {
                    if let Some(file) = a.strip_prefix(&format!("{dir}/")) {
                        assert!(own["stringData"][file].is_string(), "{what}: {a}");
                    }
                }
            } else if v["secret"]["secretName"] != secret {
                // The TLS Secret the Service's annotation has issued.
                assert_eq!(v["secret"]["secretName"], "fencekit-watch-tls", "{what}");
                assert_eq!(v["secret"]["defaultMode"], 0o440, "{what}");
            } else {
                let s = &v["secret"];
                assert_eq!(s["secretName"], secret, "{what}");
                let item = &s["items"][0];
                assert_eq!(item["key"], "--password", "{what}");
                let path = format!("{dir}/{}", item["path"].as_str().unwrap());
                assert!(
                    inventory.contains(&format!("password_file = \"{path}\"")),
                    "{what}: the inventory does not read {path}"
                );
            }
        }
    }
    // The watch: its port, probe and Service agree.
    let labels = &deployment["spec"]["template"]["metadata"]["labels"];
    for (k, v) in deployment["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap()
    {
        assert_eq!(&labels[k], v);
    }
    let c = &pod["containers"][0];
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    let listen = args[args.iter().position(|a| *a == "--listen").unwrap() + 1];
    let port: u64 = listen.rsplit(':').next().unwrap().parse().unwrap();
    assert!(args.contains(&"--watch"));
    let named = &c["ports"][0];
    assert_eq!(named["containerPort"], port);
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["livenessProbe"]["httpGet"]["port"], named["name"]);
    assert_eq!(c["livenessProbe"]["httpGet"]["scheme"], "HTTPS");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_ne!(c["securityContext"]["runAsUser"], 0);
    let service = of("Service")[0];
    for (k, v) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(&labels[k], v);
    }
    assert_eq!(service["spec"]["ports"][0]["targetPort"], named["name"]);
    assert_eq!(
        service["metadata"]["annotations"]["service.beta.openshift.io/serving-cert-secret-name"],
        "fencekit-watch-tls"
    );

    // The ServiceMonitor scrapes that Service over TLS with the scrape Secret.
    let monitor = of("ServiceMonitor")[0];
    for (k, v) in monitor["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap()
    {
        assert_eq!(&service["metadata"]["labels"][k], v);
    }
    let endpoint = &monitor["spec"]["endpoints"][0];
    assert_eq!(endpoint["port"], service["spec"]["ports"][0]["name"]);
    assert_eq!(endpoint["scheme"], "https");
    assert_eq!(
        endpoint["tlsConfig"]["serverName"],
        format!(
            "{}.{namespace}.svc",
            service["metadata"]["name"].as_str().unwrap()
        )
    );
    let user_ref = &endpoint["basicAuth"]["username"];
    let pass_ref = &endpoint["basicAuth"]["password"];
    let scrape = own_secret(user_ref["name"].as_str().unwrap()).unwrap();
    assert_eq!(pass_ref["name"], scrape["metadata"]["name"]);
    let user = scrape["stringData"][user_ref["key"].as_str().unwrap()]
        .as_str()
        .unwrap();
    let password = scrape["stringData"][pass_ref["key"].as_str().unwrap()]
        .as_str()
        .unwrap();

    // The web configuration: accepted by fencekit with a certificate and key
    // where it names the TLS Secret's files; the scrape password matches.
    let web_arg = args[args.iter().position(|a| *a == "--web-config").unwrap() + 1];
    let (web_dir, web_file) = web_arg.rsplit_once('/').unwrap();
    let web_mount = c["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"] == web_dir)
        .unwrap();
    let web_volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == web_mount["name"])
        .unwrap();
    let web_secret = own_secret(web_volume["secret"]["secretName"].as_str().unwrap()).unwrap();
    let web = web_secret["stringData"][web_file].as_str().unwrap();
    let tls_mount = c["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "tls")
        .unwrap()["mountPath"]
        .as_str()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ck = rcgen::generate_simple_self_signed(vec!["fencekit-watch".to_string()]).unwrap();
    std::fs::write(dir.path().join("tls.crt"), ck.cert.pem()).unwrap();
    std::fs::write(dir.path().join("tls.key"), ck.key_pair.serialize_pem()).unwrap();
    assert!(web.contains(&format!("{tls_mount}/tls.crt")), "{web}");
    let local = web.replace(
        &format!("{tls_mount}/"),
        &format!("{}/", dir.path().display()),
    );
    let file = dir.path().join(web_file);
    std::fs::write(&file, local).unwrap();
    let loaded = fencekit::cli::check::webconfig::WebConfig::load(&file)
        .unwrap_or_else(|e| panic!("the documented web configuration: {e}"));
    assert!(loaded.tls.is_some() && loaded.users.is_some());
    let hash = web
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{user}: ")))
        .unwrap();
    assert!(bcrypt::verify(password, hash).unwrap(), "{user}'s hash");
}

#[test]
fn azure() {
    run_page("docs/azure.md");
}

#[test]
fn hypervisors() {
    run_page("docs/hypervisors.md");
}

#[test]
fn ucs() {
    run_page("docs/ucs.md");
}

#[test]
fn index_has_no_commands() {
    run_page("docs/README.md");
}
