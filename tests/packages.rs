//! The distribution packages, built and installed for real (issue 42):
//! `packaging/build.sh` makes the `.deb` (cargo-deb) and the `.rpm`
//! (cargo-generate-rpm) from the test build's own binary (the debug
//! binary `cargo test` already built, its debug sections stripped: a
//! release build would cost minutes on CI's two cores, and the packaging
//! does not depend on the profile). Then:
//!
//! * the `.deb`'s files, agent names and `Provides` (`dpkg-deb`), the
//!   `.rpm`'s files, `Provides` and scripts (`rpm -qp`);
//! * the `.deb` installed by `dpkg` into a root of its own (`--root`, the
//!   maintainer scripts run chrootless with `DPKG_ROOT`, as Debian's
//!   bootstrap tools install), in which an upstream `fence_ipmilan` and its
//!   man page stand where fence-agents puts them: fencekit's names become
//!   links to the binary and upstream's agent is diverted aside;
//! * Pacemaker's own agent discovery (`stonith_admin --list-installed`,
//!   `crm_resource --list-agents stonith`) and metadata calls
//!   (`stonith_admin --metadata`) through the installed names, in a private
//!   mount namespace where the root's `/usr` is laid over the machine's (a
//!   read-only overlay: the machine's own `/usr/sbin/fence_*`, which other
//!   tests run side by side, are never touched);
//! * `dpkg --remove` puts upstream's agent and man page back, byte for byte;
//! * the `.rpm`'s scripts (`links install rpm`, `links remove rpm`) on a
//!   root of their own: upstream's files moved aside and back (the `.rpm`
//!   itself is not installed: that needs an RPM database and root).
//!
//! Needs root, cargo-deb, cargo-generate-rpm, rpm, dpkg, objcopy, unshare
//! and pacemaker-cli-utils (tests/peers/setup.sh installs them); skipped
//! with the reason otherwise, a failure under `FENCEKIT_REQUIRE_PEERS=1`.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

fn root_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> Output {
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("{shown}: {e}"));
    assert!(
        out.status.success(),
        "{shown}: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(cmd: &mut Command) -> String {
    String::from_utf8(run(cmd).stdout).expect("UTF-8 output")
}

/// `NAME PACKAGE VERSION` lines of `packaging/agents`.
fn agents() -> Vec<(String, String, String)> {
    let text = fs::read_to_string(root_dir().join("packaging/agents")).expect("packaging/agents");
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 3, "packaging/agents line {l:?}");
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect()
}

/// FAR's agent packages not served yet (none now: all 22 are); a package
/// FAR adds is named here until an agent of its own lands.
const FAR_NOT_YET: &[&str] = &[];

/// The packages FAR's image installs, read from the FAR reference's
/// `Dockerfile` block (`fence-agents-amt-ws  -apc-snmp …`: every name after
/// the first takes the `fence-agents` prefix).
fn far_packages(reference: &str) -> Vec<String> {
    let mut lines = reference.lines().skip_while(|l| !l.contains("**Image**"));
    let block: Vec<&str> = lines
        .by_ref()
        .skip_while(|l| l.trim() != "```")
        .skip(1)
        .take_while(|l| l.trim() != "```")
        .collect();
    let mut names = Vec::new();
    for w in block.iter().flat_map(|l| l.split_whitespace()) {
        if let Some(rest) = w.strip_prefix('-') {
            names.push(format!("fence-agents-{rest}"));
        } else {
            names.push(w.to_string());
        }
    }
    names.sort();
    names
}

#[test]
fn the_packages_cover_every_agent_package_far_ships() {
    let path = root_dir().join("../shared/reference/far.md");
    let Ok(reference) = fs::read_to_string(&path) else {
        support::skip(&format!("no {} beside the repository", path.display()));
        return;
    };
    let far = far_packages(&reference);
    assert_eq!(far.len(), 22, "FAR ships 22 agent packages: {far:?}");
    let ours: std::collections::BTreeSet<String> =
        agents().into_iter().map(|(_, p, _)| p).collect();
    let missing: Vec<&str> = far
        .iter()
        .map(String::as_str)
        .filter(|p| !ours.contains(*p))
        .collect();
    assert_eq!(
        missing, FAR_NOT_YET,
        "FAR's packages that packaging/agents does not serve (FAR_NOT_YET must say exactly these)"
    );
}

/// The tools this test needs, or why not (a skip).
fn tools_present() -> bool {
    if !support::root_with(&["unshare", "mount"]) {
        return false;
    }
    for (tool, from) in [
        ("dpkg", "dpkg"),
        ("dpkg-deb", "dpkg"),
        ("rpm", "rpm"),
        ("objcopy", "binutils"),
        ("stonith_admin", "pacemaker-cli-utils"),
        ("crm_resource", "pacemaker-cli-utils"),
        ("fence_ipmilan", "fence-agents"),
    ] {
        if support::which(tool).is_none() {
            support::skip(&format!("no `{tool}` (Debian package {from})"));
            return false;
        }
    }
    for (sub, version) in [
        ("deb", "cargo-deb 3.8.0"),
        ("generate-rpm", "cargo-generate-rpm 0.21.1"),
    ] {
        let v = Command::new("cargo").args([sub, "--version"]).output();
        let v = v.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        if v.as_deref().ok() != Some(version) {
            support::skip(&format!(
                "no {version} (`cargo install --locked`, as tests/peers/setup.sh does): found {v:?}"
            ));
            return false;
        }
    }
    true
}

fn dpkg(root: &Path) -> Command {
    let mut c = support::tool("dpkg");
    c.arg(format!("--root={}", root.display())).args([
        "--force-script-chrootless",
        "--force-depends",
        "--log=/dev/null",
    ]);
    c
}

/// `script` run by `sh` in a private mount namespace where `root`'s `/usr`
/// is laid over the machine's.
fn in_root_view(root: &Path, script: &str) -> String {
    let mount = format!(
        "mount -t overlay fencekit-package -o lowerdir={}/usr:/usr /usr || \
         {{ echo 'no overlayfs here: cannot lay the package root over /usr' >&2; exit 97; }}\n",
        root.display()
    );
    stdout(
        support::tool("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-euc"])
            .arg(mount + script),
    )
}

/// What an agent's metadata says: its name, description and parameter
/// names in order (`None` for text that is no metadata).
fn said(xml: &str) -> Option<(String, String, Vec<String>)> {
    let doc = roxmltree::Document::parse(xml).ok()?;
    let agent = doc.root_element();
    let longdesc = agent
        .children()
        .find(|c| c.has_tag_name("longdesc"))
        .and_then(|c| c.text())
        .unwrap_or("")
        .to_string();
    let params = agent
        .descendants()
        .filter(|c| c.has_tag_name("parameter"))
        .filter_map(|c| c.attribute("name").map(str::to_string))
        .collect();
    Some((agent.attribute("name")?.to_string(), longdesc, params))
}

#[test]
fn packages_build_install_into_their_own_root_and_pacemaker_finds_the_agents() {
    if !tools_present() {
        return;
    }
    let started = Instant::now();
    let agents = agents();
    let names: Vec<&str> = agents.iter().map(|(n, _, _)| n.as_str()).collect();
    assert!(
        names.contains(&"fence_ipmilan") && names.len() > 10,
        "{names:?}"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("packages");

    // Build both, from the binary under test.
    run(Command::new("sh")
        .arg(root_dir().join("packaging/build.sh"))
        .arg("--bin")
        .arg(support::bin())
        .arg("--out")
        .arg(&out)
        .arg("--fast")
        .current_dir(root_dir()));
    let built = started.elapsed();
    let find = |ext: &str| -> PathBuf {
        let found: Vec<PathBuf> = fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        assert_eq!(found.len(), 1, "one .{ext} in {}: {found:?}", out.display());
        found[0].clone()
    };
    let (deb, rpm) = (find("deb"), find("rpm"));

    // The .deb: its files and relations.
    let listing = stdout(support::tool("dpkg-deb").arg("--contents").arg(&deb));
    let files: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(|p| p.trim_start_matches('.'))
        .collect();
    let mut wanted = vec![
        "/usr/bin/fencekit".to_string(),
        "/usr/libexec/fencekit/links".to_string(),
        "/usr/share/fencekit/agents".to_string(),
        "/usr/share/doc/fencekit/copyright".to_string(),
        "/usr/share/doc/fencekit/README.md".to_string(),
        "/usr/share/doc/fencekit/docs/install.md".to_string(),
        "/usr/share/bash-completion/completions/fencekit".to_string(),
        "/usr/share/zsh/vendor-completions/_fencekit".to_string(),
        "/usr/share/fish/vendor_completions.d/fencekit.fish".to_string(),
    ];
    for n in &names {
        wanted.push(format!("/usr/share/fencekit/man8/{n}.8"));
    }
    for w in &wanted {
        assert!(
            files
                .iter()
                .any(|f| f == w || f.strip_suffix(".gz") == Some(w)),
            "the .deb lacks {w}:\n{listing}"
        );
    }
    assert!(
        files
            .iter()
            .any(|f| f.starts_with("/usr/share/man/man1/fencekit")),
        "no fencekit man page in the .deb:\n{listing}"
    );
    // No path fence-agents owns: the agent names are made by the scripts.
    let upstream_owned = stdout(Command::new("dpkg-query").args(["-L", "fence-agents"]));
    let upstream_owned: Vec<&str> = upstream_owned.lines().collect();
    for f in &files {
        if !f.ends_with('/') && upstream_owned.contains(f) {
            panic!("the .deb ships {f}, which fence-agents owns");
        }
    }
    let provides = stdout(
        support::tool("dpkg-deb")
            .arg("--field")
            .arg(&deb)
            .arg("Provides"),
    );
    let mut expected: Vec<String> = vec!["fence-agents (= 4.12.1)".into()];
    for (_, p, v) in &agents {
        expected.push(format!("{p} (= {v})"));
    }
    for e in &expected {
        assert!(
            provides.split(',').any(|p| p.trim() == e),
            "the .deb does not provide {e}: {provides}"
        );
    }

    // The .rpm: its Provides, files and scripts.
    let rpm_provides = stdout(support::tool("rpm").args(["-qp", "--provides"]).arg(&rpm));
    for (_, p, v) in &agents {
        let line = format!("{p} = {v}");
        assert!(
            rpm_provides.lines().any(|l| l.trim() == line),
            "the .rpm does not provide {line}:\n{rpm_provides}"
        );
    }
    let rpm_files = stdout(support::tool("rpm").args(["-qpl"]).arg(&rpm));
    for w in wanted
        .iter()
        .filter(|w| !w.ends_with("/copyright") && !w.contains("zsh"))
        .map(String::as_str)
        .chain([
            "/usr/share/licenses/fencekit/LICENSE",
            "/usr/share/zsh/site-functions/_fencekit",
        ])
    {
        assert!(
            rpm_files.lines().any(|l| l == w),
            "the .rpm lacks {w}:\n{rpm_files}"
        );
    }
    let scripts = stdout(support::tool("rpm").args(["-qp", "--scripts"]).arg(&rpm));
    assert!(
        scripts.contains("/usr/libexec/fencekit/links install rpm")
            && scripts.contains("/usr/libexec/fencekit/links remove rpm"),
        "the .rpm's scripts do not link and unlink the agent names:\n{scripts}"
    );

    // A root of its own, with upstream's fence_ipmilan where fence-agents
    // installs it.
    let root = tmp.path().join("root");
    for d in [
        "var/lib/dpkg/info",
        "var/lib/dpkg/updates",
        "usr/sbin",
        "usr/share/man/man8",
    ] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    let upstream = fs::read("/usr/sbin/fence_ipmilan").expect("upstream's /usr/sbin/fence_ipmilan");
    let upstream_page = b"upstream's page (stand-in)".to_vec();
    fs::write(root.join("usr/sbin/fence_ipmilan"), &upstream).unwrap();
    fs::write(
        root.join("usr/share/man/man8/fence_ipmilan.8.gz"),
        &upstream_page,
    )
    .unwrap();

    let t = Instant::now();
    run(dpkg(&root).arg("--install").arg(&deb));
    let installed = t.elapsed();
    for n in &names {
        let link = root.join("usr/sbin").join(n);
        assert_eq!(
            fs::read_link(&link).unwrap_or_else(|e| panic!("{}: {e}", link.display())),
            Path::new("/usr/bin/fencekit"),
            "{n}"
        );
    }
    assert_eq!(
        fs::read(root.join("usr/libexec/fencekit/fence-agents/fence_ipmilan")).unwrap(),
        upstream,
        "upstream's agent is kept aside while fencekit is installed"
    );
    assert_eq!(
        fs::read(root.join("usr/libexec/fencekit/fence-agents/man8/fence_ipmilan.8.gz")).unwrap(),
        upstream_page
    );
    let diversions = stdout(
        support::tool("dpkg-divert")
            .arg(format!("--root={}", root.display()))
            .arg("--list"),
    );
    for n in &names {
        assert!(
            diversions.contains(&format!("diversion of /usr/sbin/{n} to ")),
            "no diversion of {n}:\n{diversions}"
        );
    }
    let status = stdout(
        support::tool("dpkg-query")
            .arg(format!("--root={}", root.display()))
            .args(["-W", "-f=${Status}", "fencekit"]),
    );
    assert_eq!(status, "install ok installed");

    // Pacemaker's discovery and metadata through the installed names.
    let t = Instant::now();
    let mut script = String::from(
        "stonith_admin --list-installed\necho '--- crm_resource'\n\
         crm_resource --list-agents stonith\necho '--- links'\n",
    );
    for n in &names {
        script.push_str(&format!("echo \"{n} $(readlink /usr/sbin/{n})\"\n"));
    }
    let listed = in_root_view(&root, &script);
    let (discovered, rest) = listed.split_once("--- crm_resource").expect("both lists");
    let (crm, links) = rest.split_once("--- links").expect("the links");
    for n in &names {
        assert!(
            discovered.lines().any(|l| l.trim() == *n),
            "stonith_admin --list-installed does not list {n}:\n{discovered}"
        );
        assert!(
            crm.lines().any(|l| l.trim() == *n),
            "crm_resource --list-agents stonith does not list {n}:\n{crm}"
        );
        assert!(
            links.lines().any(|l| l == format!("{n} /usr/bin/fencekit")),
            "{n} is not fencekit's in the installed view:\n{links}"
        );
    }
    // Pacemaker re-renders the metadata (its own layout, start/stop
    // actions added): compared by what it says, the description and the
    // parameters in order, with fencekit's (agents/generated/, drift-tested).
    let mut differs_from_upstream = 0;
    for n in &names {
        let meta = in_root_view(&root, &format!("stonith_admin --metadata --agent {n}"));
        let ours =
            fs::read_to_string(root_dir().join(format!("agents/generated/{n}.metadata.xml")))
                .unwrap_or_else(|e| panic!("agents/generated/{n}.metadata.xml: {e}"));
        assert_eq!(
            said(&meta),
            said(&ours),
            "{n}'s metadata through Pacemaker is not fencekit's:\n{meta}"
        );
        // Upstream's own agent of that name, outside the view, says
        // something else: the call above did not reach it.
        if let Ok(o) = Command::new(format!("/usr/sbin/{n}"))
            .arg("-o")
            .arg("metadata")
            .output()
        {
            if said(&String::from_utf8_lossy(&o.stdout)) != said(&ours) {
                differs_from_upstream += 1;
            }
        }
    }
    assert!(
        differs_from_upstream > 0,
        "every upstream agent's metadata equals fencekit's: the check cannot tell them apart"
    );
    let discovered_in = t.elapsed();

    // Removing gives upstream's agent and page back.
    run(dpkg(&root).args(["--remove", "fencekit"]));
    assert_eq!(
        fs::read(root.join("usr/sbin/fence_ipmilan")).unwrap(),
        upstream
    );
    assert_eq!(
        fs::read(root.join("usr/share/man/man8/fence_ipmilan.8.gz")).unwrap(),
        upstream_page
    );
    for n in names.iter().filter(|n| **n != "fence_ipmilan") {
        assert!(
            fs::symlink_metadata(root.join("usr/sbin").join(n)).is_err(),
            "{n} is left behind after removal"
        );
    }
    let diversions = stdout(
        support::tool("dpkg-divert")
            .arg(format!("--root={}", root.display()))
            .arg("--list"),
    );
    assert!(
        !diversions.contains("fencekit"),
        "diversions left after removal:\n{diversions}"
    );
    assert!(!root.join("usr/bin/fencekit").exists());
    run(dpkg(&root).args(["--purge", "fencekit"]));
    assert!(!root.join("var/lib/fencekit").exists());

    // The .rpm's scripts (`links install rpm` / `links remove rpm`, as
    // `rpm -qp --scripts` showed) on a root of their own: RPM has no
    // diversions, so upstream's files are moved aside and back.
    let rroot = tmp.path().join("rpm-root");
    for d in ["usr/share/fencekit/man8", "usr/sbin", "usr/share/man/man8"] {
        fs::create_dir_all(rroot.join(d)).unwrap();
    }
    fs::copy(
        root_dir().join("packaging/agents"),
        rroot.join("usr/share/fencekit/agents"),
    )
    .unwrap();
    for n in &names {
        let page = format!("{n}.8");
        fs::copy(
            root_dir().join("man").join(&page),
            rroot.join("usr/share/fencekit/man8").join(&page),
        )
        .unwrap();
    }
    fs::write(rroot.join("usr/sbin/fence_ipmilan"), &upstream).unwrap();
    fs::write(
        rroot.join("usr/share/man/man8/fence_ipmilan.8.gz"),
        &upstream_page,
    )
    .unwrap();
    let links = |what: &str| {
        run(Command::new("sh")
            .arg(root_dir().join("packaging/links.sh"))
            .args([what, "rpm"])
            .env("DPKG_ROOT", &rroot));
    };
    links("install");
    for n in &names {
        assert_eq!(
            fs::read_link(rroot.join("usr/sbin").join(n)).unwrap(),
            Path::new("/usr/bin/fencekit")
        );
    }
    assert_eq!(
        fs::read(rroot.join("usr/libexec/fencekit/fence-agents/fence_ipmilan")).unwrap(),
        upstream
    );
    links("remove");
    assert_eq!(
        fs::read(rroot.join("usr/sbin/fence_ipmilan")).unwrap(),
        upstream
    );
    assert_eq!(
        fs::read(rroot.join("usr/share/man/man8/fence_ipmilan.8.gz")).unwrap(),
        upstream_page
    );
    let left: Vec<_> = fs::read_dir(rroot.join("usr/sbin"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("fence_ipmilan")],
        "after links remove rpm"
    );

    eprintln!(
        "packages: built in {:.1?}, installed in {:.1?}, discovery and {} metadata calls in \
         {:.1?}, all in {:.1?} (.deb {} KiB, .rpm {} KiB)",
        built,
        installed,
        names.len(),
        discovered_in,
        started.elapsed(),
        fs::metadata(&deb).unwrap().len() / 1024,
        fs::metadata(&rpm).unwrap().len() / 1024
    );
}
