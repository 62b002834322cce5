//! Our metadata XML against the outside world: upstream's RelaxNG schema
//! (via `xmllint`), upstream's own agents (same parameters, order, types,
//! defaults, getopt strings, symlinks and actions), and Pacemaker's parser
//! (`crm_resource --show-metadata`); and what Pacemaker 3.0 needs of every
//! agent's metadata: a `plug` (or `port`) parameter, or the fencer passes
//! no target at all, within its 20 s metadata timeout.
//!
//! Each check skips with a printed reason when its tool is missing, unless
//! `FENCEKIT_REQUIRE_PEERS=1`, which turns a skip into a failure. The
//! structural checks below the schema run everywhere.

mod support;

use fencekit::agent::defs::{agent, defs};
use fencekit::agent::metadata;
use std::path::Path;
use std::process::Command;

const RNG: &str = "/usr/share/cluster/relaxng/metadata.rng";

use support::skip;

fn names() -> Vec<&'static str> {
    defs().families.iter().flat_map(|f| f.names()).collect()
}

/// Agents fence-agents 4.12.1 (Debian 12) lacks: their facts follow the
/// newest upstream, so there is no installed agent to compare with (not a
/// missing peer: the comparison does not apply).
/// `fence_amt_ws` is in 4.12.1's source, but Debian's fence-agents does not
/// install it (its WS-Management binding, pywsman, is not in Debian 12): its
/// facts were read from that source, and there is nothing to run here.
const NOT_IN_4_12_1: &[&str] = &["fence_nutanix_ahv", "fence_amt_ws"];

/// The agents that 4.12.1 has, which the comparisons with it cover.
fn upstream_names() -> Vec<&'static str> {
    names()
        .into_iter()
        .filter(|n| !NOT_IN_4_12_1.contains(n))
        .collect()
}

fn ours(name: &str) -> String {
    metadata::render(&agent(name).expect("known agent"))
}

/// fencekit-only parameters (`extension = true` in `agents/`), which upstream
/// lacks: listed after upstream's, left out when comparing with upstream.
fn extensions(name: &str) -> Vec<String> {
    let a = agent(name).expect("known agent");
    a.family
        .options
        .iter()
        .filter(|o| o.extension)
        .map(|o| o.key())
        .collect()
}

/// `s` without the fencekit-only parameters of `name`, which must be its last ones.
fn upstream_part(name: &str, mut s: Shape) -> Shape {
    let ext = extensions(name);
    let n = s.params.len() - ext.len();
    assert!(
        s.params[n..].iter().all(|p| ext.contains(&p[0])),
        "{name}: fencekit-only parameters {ext:?} must come last"
    );
    s.params.truncate(n);
    s
}

/// What the schema and the callers care about, as comparable data.
#[derive(Debug, PartialEq)]
struct Shape {
    name: String,
    symlinks: Vec<(String, String)>,
    /// name, required, deprecated, obsoletes, getopt, type, default, options
    params: Vec<[String; 8]>,
    /// name and attributes
    actions: Vec<String>,
}

fn attr(n: roxmltree::Node<'_, '_>, a: &str) -> String {
    n.attribute(a).unwrap_or("-").to_string()
}

fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, tag: &str) -> roxmltree::Node<'a, 'i> {
    n.children()
        .find(|c| c.has_tag_name(tag))
        .unwrap_or_else(|| panic!("<{}> has no <{tag}>", n.tag_name().name()))
}

/// Parses metadata and checks the structure `metadata.rng` requires.
fn shape(xml: &str) -> Shape {
    let doc = roxmltree::Document::parse(xml).expect("well-formed XML");
    let root = doc.root_element();
    assert!(root.has_tag_name("resource-agent"));
    let elems: Vec<_> = root.children().filter(|c| c.is_element()).collect();
    let tags: Vec<&str> = elems.iter().map(|e| e.tag_name().name()).collect();
    let first_other = tags
        .iter()
        .position(|t| *t != "symlink")
        .unwrap_or(tags.len());
    assert_eq!(
        &tags[first_other..],
        ["longdesc", "vendor-url", "parameters", "actions"],
        "element order"
    );
    assert!(root.attribute("shortdesc").is_some());
    let symlinks = elems[..first_other]
        .iter()
        .map(|s| (attr(*s, "name"), attr(*s, "shortdesc")))
        .collect();
    let mut params = Vec::new();
    for p in child(root, "parameters")
        .children()
        .filter(|c| c.is_element())
    {
        assert!(p.has_tag_name("parameter"));
        for a in ["unique", "required"] {
            assert!(
                matches!(p.attribute(a), Some("0" | "1")),
                "{a} of {}",
                attr(p, "name")
            );
        }
        let content = child(p, "content");
        let ty = attr(content, "type");
        assert!(
            ["boolean", "string", "second", "integer", "select"].contains(&ty.as_str()),
            "content type {ty}"
        );
        let options: Vec<String> = content
            .children()
            .filter(|c| c.is_element())
            .map(|o| {
                assert!(o.has_tag_name("option") && ty == "select");
                attr(o, "value")
            })
            .collect();
        let sd = child(p, "shortdesc");
        assert!(sd.attribute("lang").is_some() && sd.text().is_some_and(|t| !t.is_empty()));
        params.push([
            attr(p, "name"),
            attr(p, "required"),
            attr(p, "deprecated"),
            attr(p, "obsoletes"),
            attr(child(p, "getopt"), "mixed"),
            ty,
            attr(content, "default"),
            options.join("|"),
        ]);
    }
    assert!(!params.is_empty());
    let actions: Vec<String> = child(root, "actions")
        .children()
        .filter(|c| c.is_element())
        .map(|a| {
            let mut s = attr(a, "name");
            for extra in ["automatic", "on_target"] {
                if let Some(v) = a.attribute(extra) {
                    s.push_str(&format!(" {extra}={v}"));
                }
            }
            s
        })
        .collect();
    assert!(!actions.is_empty());
    Shape {
        name: attr(root, "name"),
        symlinks,
        params,
        actions,
    }
}

#[test]
fn our_metadata_has_the_structure_the_schema_requires() {
    for name in names() {
        let s = shape(&ours(name));
        assert_eq!(s.name, name);
        let p: Vec<&str> = s.params.iter().map(|p| p[0].as_str()).collect();
        assert!(
            p.contains(&"plug") && p.contains(&"port"),
            "Pacemaker looks for plug/port"
        );
        // Fabric fencing (fence_ifmib) has no reboot, and its on is
        // automatic (unfencing), as upstream's fabric_fencing.
        let fabric = name == "fence_ifmib";
        assert_eq!(s.actions.contains(&"reboot".to_string()), !fabric, "{name}");
        assert!(s.actions.contains(&"status".to_string()));
        let on = if fabric {
            "on automatic=1"
        } else {
            "on automatic=0"
        };
        assert_eq!(s.actions[0], on, "{name}");
    }
}

#[test]
fn our_metadata_validates_against_upstreams_schema() {
    if !Path::new(RNG).exists() {
        return skip(&format!(
            "{RNG} is not installed (Debian package fence-agents-common)"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    for name in names() {
        let path = dir.path().join(format!("{name}.xml"));
        std::fs::write(&path, ours(name)).unwrap();
        let o = match support::tool("xmllint")
            .arg("--noout")
            .arg("--relaxng")
            .arg(RNG)
            .arg(&path)
            .output()
        {
            Ok(o) => o,
            Err(_) => return skip("xmllint is not installed (Debian package libxml2-utils)"),
        };
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn our_metadata_matches_upstreams_agents_except_for_wording() {
    for name in upstream_names() {
        let bin = format!("/usr/sbin/{name}");
        if !Path::new(&bin).exists() {
            return skip(&format!(
                "{bin} is not installed (Debian package fence-agents)"
            ));
        }
        let o = Command::new(&bin)
            .args(["-o", "metadata"])
            .env("PYTHONWARNINGS", "ignore")
            .output()
            .unwrap();
        assert!(o.status.success(), "{bin} -o metadata failed");
        let up = shape(&String::from_utf8_lossy(&o.stdout));
        let us = upstream_part(name, shape(&ours(name)));
        assert_eq!(us.name, up.name);
        assert_eq!(
            us.symlinks, up.symlinks,
            "{name}: symlinks and their shortdescs"
        );
        assert_eq!(us.actions, up.actions, "{name}: actions");
        let names_of = |s: &Shape| s.params.iter().map(|p| p[0].clone()).collect::<Vec<_>>();
        assert_eq!(
            names_of(&us),
            names_of(&up),
            "{name}: parameter names and order"
        );
        for (a, b) in us.params.iter().zip(&up.params) {
            assert_eq!(a, b, "{name}: parameter {} (name, required, deprecated, obsoletes, getopt, type, default, choices)", a[0]);
        }
    }
}

#[test]
fn pacemaker_parses_our_metadata() {
    if !Path::new("/usr/sbin/crm_resource").exists() {
        return skip("crm_resource is not installed (Debian package pacemaker-cli-utils)");
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    if !root {
        return skip(
            "not root: cannot bind-mount over /usr/sbin/fence_* in a private mount namespace",
        );
    }
    for name in upstream_names() {
        let target = format!("/usr/sbin/{name}");
        if !Path::new(&target).exists() {
            skip(&format!("{target} does not exist to be replaced"));
            continue;
        }
        // Pacemaker runs the agent by its path, so argv[0] names the agent
        // although the bind mount puts our binary there. Pacemaker rewrites
        // what it reads (adds start/stop, relaxes `required`), so ours is
        // compared with what it shows for upstream's agent.
        let show = |script: &str| {
            support::tool("unshare")
                .args(["-m", "sh", "-c", script])
                .output()
        };
        let plain = format!("crm_resource --show-metadata stonith:{name}");
        let mounted = format!(
            "mount --bind {bin} {target} && {plain}",
            bin = env!("CARGO_BIN_EXE_fencekit"),
        );
        let (up, o) = match (show(&plain), show(&mounted)) {
            (Ok(up), Ok(o)) => (up, o),
            (Err(e), _) | (_, Err(e)) => return skip(&format!("unshare is unavailable: {e}")),
        };
        let stderr = String::from_utf8_lossy(&o.stderr);
        if !o.status.success() && stderr.contains("unshare failed") {
            return skip(&format!("no mount namespaces here: {stderr}"));
        }
        assert!(
            up.status.success(),
            "{name}: crm_resource on upstream's agent failed"
        );
        assert!(o.status.success(), "{name}: crm_resource failed: {stderr}");
        let s = shape(&String::from_utf8_lossy(&o.stdout));
        assert_eq!(
            s.name, name,
            "Pacemaker ran our binary under the agent's name"
        );
        let theirs = shape(&String::from_utf8_lossy(&up.stdout));
        // Pacemaker adds its own parameters (pcmk_*) after the agent's; the
        // fencekit-only ones are taken out wherever they landed.
        let ext = extensions(name);
        let mut s = s;
        s.params.retain(|p| !ext.contains(&p[0]));
        assert_eq!(s, theirs, "{name}: Pacemaker's view of ours and upstream's");
    }
}

/// Pacemaker 3.0's fencer passes the target only to agents whose metadata
/// has a parameter named `plug` (preferred) or `port`
/// (`stonith__default_host_arg`, an XPath `//parameter[@name=…]`), and
/// gives the metadata call 20 s. Every name of every family (those other
/// families add included) must list `plug`, and answer `-o metadata` from
/// the binary well inside that bound.
#[test]
fn every_agent_tells_pacemaker_3_where_the_target_goes() {
    let mut slowest = (std::time::Duration::ZERO, "");
    for name in names() {
        let t0 = std::time::Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_fencekit"))
            .args(["agent", name, "-o", "metadata"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let took = t0.elapsed();
        assert!(o.status.success(), "{name}: -o metadata failed");
        if took > slowest.0 {
            slowest = (took, name);
        }
        assert!(
            took < std::time::Duration::from_secs(5),
            "{name}: metadata took {took:?} (Pacemaker 3.0 allows 20 s)"
        );
        let xml = String::from_utf8(o.stdout).unwrap();
        assert_eq!(
            xml,
            ours(name),
            "{name}: the binary prints the rendered metadata"
        );
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let host_arg = ["plug", "port"].into_iter().find(|p| {
            doc.descendants()
                .any(|n| n.has_tag_name("parameter") && n.attribute("name") == Some(*p))
        });
        assert_eq!(
            host_arg,
            Some("plug"),
            "{name}: Pacemaker 3.0 would pass the target as {host_arg:?}"
        );
    }
    eprintln!(
        "slowest metadata call: {} in {:?} ({} agents)",
        slowest.1,
        slowest.0,
        names().len()
    );
}
