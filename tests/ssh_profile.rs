//! The SSH driver's pure parts, without a server: virsh output (captured
//! from virsh 9.0 on libvirt's test driver), UUID normalisation, plug
//! checking and shell quoting (round-tripped through a real `/bin/sh`),
//! custom patterns, host key fingerprints (vectors from `ssh-keygen -lf`),
//! known_hosts lookups (plain, hashed, `[host]:port`, `@revoked`), target
//! URLs and configuration checks.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use fencekit::engine::error::ErrorKind;
use fencekit::engine::identity::normalise_uuid;
use fencekit::engine::power::{PowerCommand, PowerState};
use fencekit::secret::Secret;
use fencekit::ssh::config::{
    parse_target, Profile, SshAuth, SshConfig, SshConfigError, TargetProblem,
};
use fencekit::ssh::hostkey::HostKeyPolicy;
use fencekit::ssh::hostkey::{self, Lookup};
use fencekit::ssh::profile::{self, BadPlug, Output};
use hmac::{Hmac, Mac};
use std::path::PathBuf;
use std::process::Command;

fn out(status: i32, stdout: &str, stderr: &str) -> Output {
    Output {
        status: Some(status),
        signal: None,
        stdout: stdout.into(),
        stderr: stderr.into(),
    }
}

// ------------------------------------------------------------------ virsh --

#[test]
fn domstate_states() {
    use PowerState::{Off, On};
    for (text, want) in [
        ("running\n\n", On),
        ("idle\n", On),
        ("paused\n", On),
        ("no state\n", On),
        ("blocked\n", On),
        ("in shutdown\n", On),
        ("shut off\n\n", Off),
        // Not off for fencing (upstream reads both as off): a guest
        // suspended to RAM resumes its I/O, a crashed domain kept for a
        // dump still holds its memory (issue 23, item 6).
        ("crashed\n", On),
        ("pmsuspended\n", On),
        ("  running  \r\n", On),
    ] {
        assert_eq!(
            profile::virsh_domstate(&out(0, text, ""), "vm", false),
            Ok(want),
            "{text:?}"
        );
    }
}

#[test]
fn domstate_never_guesses() {
    for text in ["", "\n", "unknown\n", "Running state: yes\n"] {
        let e = profile::virsh_domstate(&out(0, text, ""), "vm", false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::StatusUnreadable, "{text:?}");
    }
    // a signal is not success, whatever the exit status says
    let mut o = out(0, "running\n", "");
    o.signal = Some("KILL".into());
    assert!(profile::virsh_domstate(&o, "vm", false).is_err());
}

#[test]
fn domstate_missing_domain() {
    // virsh 9.0 over an exec channel: state on stdout, errors on stderr
    let missing = out(1, "\n", "error: failed to get domain 'nope'\n");
    let e = profile::virsh_domstate(&missing, "nope", false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DeviceError);
    assert!(e.message.contains("domain not found"), "{e}");
    assert!(e.message.contains("nope"), "{e}");
    assert_eq!(
        profile::virsh_domstate(&missing, "nope", true),
        Ok(PowerState::Off)
    );
    // older libvirt wording
    let older = out(
        1,
        "",
        "error: Domain not found: no domain with matching name 'nope'\n",
    );
    assert_eq!(
        profile::virsh_domstate(&older, "nope", true),
        Ok(PowerState::Off)
    );
    // any other error is a device error, even with --missing-as-off
    let down = out(
        1,
        "",
        "error: failed to connect to the hypervisor\nerror: Failed to connect socket to '/var/run/libvirt/libvirt-sock': No such file or directory\n",
    );
    let e = profile::virsh_domstate(&down, "vm", true).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DeviceError);
    assert!(
        e.message.contains("failed to connect to the hypervisor"),
        "{e}"
    );
}

#[test]
fn virsh_command_answers() {
    let ok = out(0, "Domain 'node1' destroyed\n\n", "");
    assert_eq!(
        profile::virsh_command_result(&ok, "destroy", "node1", false),
        Ok(())
    );
    let not_running = out(
        1,
        "\n",
        "error: Failed to destroy domain 'node2'\nerror: Requested operation is not valid: domain is not running\n",
    );
    let e = profile::virsh_command_result(&not_running, "destroy", "node2", false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotInPresentState);
    let active = out(1, "", "error: Domain is already active\n");
    let e = profile::virsh_command_result(&active, "start", "node1", false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotInPresentState);
    let missing = out(1, "", "error: failed to get domain 'x'\n");
    let e = profile::virsh_command_result(&missing, "destroy", "x", false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DeviceError);
    assert!(e.message.contains("domain not found"));
    let e = profile::virsh_command_result(&missing, "destroy", "x", true).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotInPresentState);
    let e = profile::virsh_command_result(&missing, "start", "x", true).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DeviceError);
}

#[test]
fn virsh_verbs() {
    assert_eq!(profile::virsh_verb(PowerCommand::Off), Some("destroy"));
    assert_eq!(profile::virsh_verb(PowerCommand::On), Some("start"));
    assert_eq!(profile::virsh_verb(PowerCommand::Diag), Some("inject-nmi"));
    assert_eq!(profile::virsh_verb(PowerCommand::Cycle), None);
    assert_eq!(
        profile::virsh_command(Some("/usr/bin/sudo"), &["domstate", "node1"]),
        "/usr/bin/sudo virsh domstate node1"
    );
    assert_eq!(
        profile::virsh_command(None, &["list", "--all"]),
        "virsh list --all"
    );
}

#[test]
fn list_as_upstream() {
    let text = " Id   Name    State\n------------------------\n 1    node1   running\n -    node2   shut off\n 3    web-3   paused\n -    odd     no state\n 5    x       in shutdown\n 6    s3      pmsuspended\n 7    dump    crashed\n\n";
    let l = profile::virsh_list(text);
    let got: Vec<(&str, Option<PowerState>)> =
        l.iter().map(|d| (d.name.as_str(), d.state)).collect();
    assert_eq!(
        got,
        vec![
            ("node1", Some(PowerState::On)),
            ("node2", Some(PowerState::Off)),
            ("web-3", Some(PowerState::On)),
            ("odd", None),
            ("x", Some(PowerState::Off)),
            ("s3", Some(PowerState::On)),
            ("dump", Some(PowerState::On)),
        ]
    );
    // rows before the header are not domains
    assert!(profile::virsh_list("a b c\nd e f\n").is_empty());
    assert!(profile::virsh_list("").is_empty());
}

// ------------------------------------------------------------ plugs, UUIDs --

#[test]
fn uuids_are_normalised() {
    let want = Some("6f1c0a8e-12ab-4cde-9f00-0123456789ab".to_string());
    for s in [
        "6f1c0a8e-12ab-4cde-9f00-0123456789ab",
        "6F1C0A8E-12AB-4CDE-9F00-0123456789AB",
        "6f1c0a8e12ab4cde9f000123456789ab",
        "{6F1C0A8E-12AB-4CDE-9F00-0123456789AB}",
    ] {
        assert_eq!(normalise_uuid(s), want, "{s}");
    }
    for s in [
        "node1",
        "6f1c0a8e-12ab-4cde-9f00-0123456789a",
        "6f1c0a8e-12ab-4cde-9f00-0123456789ag",
    ] {
        assert_eq!(normalise_uuid(s), None, "{s}");
    }
    // The one normaliser reads UUIDs as Python's uuid.UUID (and upstream
    // fence_virsh) does: hyphens anywhere, a urn:uuid: prefix.
    for s in [
        "6f1c0a8e12ab-4cde-9f00-0123456789ab",
        "urn:uuid:6f1c0a8e-12ab-4cde-9f00-0123456789ab",
    ] {
        assert_eq!(normalise_uuid(s), want, "{s}");
    }
    assert_eq!(
        profile::virsh_plug("6F1C0A8E-12AB-4CDE-9F00-0123456789AB").unwrap(),
        "6f1c0a8e-12ab-4cde-9f00-0123456789ab"
    );
    assert_eq!(profile::virsh_plug("Node_1").unwrap(), "Node_1");
}

#[test]
fn plugs_that_cannot_be_sent_are_refused() {
    for bad in ["", "-x", "--help", "a\nb", "a\rb", "a\0b", &"x".repeat(300)] {
        assert!(profile::check_plug(bad).is_err(), "{bad:?}");
    }
    for good in ["node1", "my vm", "a;b", "$(x)", "ü-vm", "a'b"] {
        assert!(profile::check_plug(good).is_ok(), "{good:?}");
    }
}

/// What `/bin/sh` makes of `word` as one argument.
fn sh_roundtrip(word: &str) -> Vec<String> {
    let script = format!("for a in {word}; do printf '%s\\n' \"$a\"; done");
    let o = Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .output()
        .expect("/bin/sh");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn quoted_plugs_reach_the_shell_as_one_word() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("pwned");
    let nasty = [
        "node1".to_string(),
        "my vm".to_string(),
        format!("node1; touch {}", canary.display()),
        format!("$(touch {})", canary.display()),
        format!("`touch {}`", canary.display()),
        format!("a' ; touch {} ; 'b", canary.display()),
        format!("\"; touch {}; \"", canary.display()),
        "*".to_string(),
        "~root".to_string(),
        "a\\b".to_string(),
        "''".to_string(),
        "!event".to_string(),
        "x > /dev/null".to_string(),
    ];
    for plug in &nasty {
        let word = profile::shell_word(plug);
        assert_eq!(sh_roundtrip(&word), vec![plug.clone()], "{plug} as {word}");
        assert!(!canary.exists(), "{plug} ran a command");
    }
    // plain names are left as they are (upstream's command lines, sudoers rules)
    assert_eq!(profile::shell_word("node-1.example:x"), "node-1.example:x");
}

#[test]
fn custom_templates_quote_the_plug() {
    assert_eq!(
        profile::expand_template("power status {plug}", Some("node1")).unwrap(),
        "power status node1"
    );
    assert_eq!(
        profile::expand_template("power off {plug}", Some("a; rm -rf ~")).unwrap(),
        "power off 'a; rm -rf ~'"
    );
    assert!(profile::expand_template("power off {plug}", None).is_err());
    assert!(profile::expand_template("power off {plug}", Some("x\ny")).is_err());
    assert_eq!(
        profile::expand_template("ipmitool power off", None).unwrap(),
        "ipmitool power off"
    );
}

#[test]
fn custom_status_patterns() {
    let on = out(0, "on\n", "");
    let off = out(0, "off\n", "");
    assert_eq!(profile::custom_status(&on, "on", "off"), Ok(PowerState::On));
    assert_eq!(
        profile::custom_status(&off, "on", "off"),
        Ok(PowerState::Off)
    );
    let both = out(0, "on\noff\n", "");
    assert_eq!(
        profile::custom_status(&both, "on", "off").unwrap_err().kind,
        ErrorKind::StatusUnreadable
    );
    let neither = out(0, "online\n", "");
    assert_eq!(
        profile::custom_status(&neither, "on", "off")
            .unwrap_err()
            .kind,
        ErrorKind::StatusUnreadable
    );
    let failed = out(1, "", "power: unknown node 'x'\n");
    let e = profile::custom_status(&failed, "on", "off").unwrap_err();
    assert_eq!(e.kind, ErrorKind::DeviceError);
    assert!(e.message.contains("unknown node"));
    let glob = out(0, "Chassis Power is on\n", "");
    assert_eq!(
        profile::custom_status(&glob, "* is on", "* is off"),
        Ok(PowerState::On)
    );
    assert!(profile::pattern_matches("*", "anything"));
    assert!(profile::pattern_matches("a*", "a"));
    assert!(!profile::pattern_matches("ab*ba", "aba"));
}

// -------------------------------------------------------------- host keys --

/// `ssh-keygen -t ed25519` output and what `ssh-keygen -lf` says about it.
const ED25519: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIKeDrrk5/AEYEwtUG6ax8P2BdijpjQWZA6UZZCG5Hzh5";
const ED25519_FP: &str = "SHA256:5XU7J9amn3m96k9m+bilUaiTAN4R6oqui5AUeoIgcqo";
const ECDSA: &str = "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBNQydAZmNyrg8iXgPYktlKwNrlD/Z2FRcWBmocSzStgw9DlVZEOA2oQ81LBrtMLUXB8Gfp5CG9FJV9ikPTiqlFM=";
const ECDSA_FP: &str = "SHA256:XRzjXZDAovY6wj1HGk0F3Jl2PKWJcy1LZo7pgQtwaNU";

fn blob(b64: &str) -> Vec<u8> {
    STANDARD.decode(b64).unwrap()
}

#[test]
fn fingerprints_match_ssh_keygen() {
    assert_eq!(hostkey::fingerprint_sha256(&blob(ED25519)), ED25519_FP);
    assert_eq!(hostkey::fingerprint_sha256(&blob(ECDSA)), ECDSA_FP);
    assert_eq!(
        hostkey::key_type(&blob(ED25519)).as_deref(),
        Some("ssh-ed25519")
    );
    assert_eq!(
        hostkey::key_type(&blob(ECDSA)).as_deref(),
        Some("ecdsa-sha2-nistp256")
    );
    assert_eq!(hostkey::key_type(b"\xff\xff"), None);
    assert_eq!(hostkey::key_type(b"\x00\x00\x00\x09abc"), None);
    assert_eq!(
        hostkey::describe_key(&blob(ED25519)),
        format!("ssh-ed25519 {ED25519_FP}")
    );
}

#[test]
fn pinned_fingerprints_are_parsed_leniently_and_checked_strictly() {
    let bare = ED25519_FP.strip_prefix("SHA256:").unwrap();
    for s in [
        ED25519_FP.to_string(),
        bare.to_string(),
        format!("{ED25519_FP}="),
        format!("  {ED25519_FP} "),
    ] {
        assert_eq!(hostkey::parse_fingerprint(&s).unwrap(), ED25519_FP, "{s}");
    }
    for s in ["", "SHA256:", "MD5:aa:bb", "SHA256:abc", &ED25519_FP[..40]] {
        assert!(hostkey::parse_fingerprint(s).is_err(), "{s}");
    }
}

#[test]
fn known_hosts_names_follow_openssh() {
    assert_eq!(hostkey::known_hosts_name("Example.COM", 22), "example.com");
    assert_eq!(
        hostkey::known_hosts_name("10.0.0.1", 2222),
        "[10.0.0.1]:2222"
    );
    assert_eq!(hostkey::known_hosts_name("::1", 2222), "[::1]:2222");
    assert_eq!(
        hostkey::known_hosts_line("10.0.0.1", 2222, &blob(ED25519)),
        format!("[10.0.0.1]:2222 ssh-ed25519 {ED25519}\n")
    );
}

/// OpenSSH's hashed host name: `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`.
fn hashed(name: &str, salt: &[u8]) -> String {
    let mut mac = Hmac::<sha1::Sha1>::new_from_slice(salt).unwrap();
    mac.update(name.as_bytes());
    format!(
        "|1|{}|{}",
        STANDARD.encode(salt),
        STANDARD.encode(mac.finalize().into_bytes())
    )
}

fn lookup(text: &str, host: &str, port: u16, key: &str) -> Lookup {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("known_hosts");
    std::fs::write(&f, text).unwrap();
    let r = hostkey::lookup(
        &[PathBuf::from("/nonexistent/known_hosts"), f.clone()],
        &hostkey::known_hosts_name(host, port),
        &blob(key),
    )
    .unwrap();
    match r {
        Lookup::Match(_, l) => Lookup::Match(PathBuf::new(), l),
        Lookup::Changed(_, l, t) => Lookup::Changed(PathBuf::new(), l, t),
        Lookup::Revoked(_, l) => Lookup::Revoked(PathBuf::new(), l),
        Lookup::Unknown => Lookup::Unknown,
    }
}

#[test]
fn known_hosts_lookups() {
    let p = PathBuf::new;
    let plain = format!("# c\n\nh1,10.0.0.1 ssh-ed25519 {ED25519}\n");
    assert_eq!(lookup(&plain, "h1", 22, ED25519), Lookup::Match(p(), 3));
    assert_eq!(
        lookup(&plain, "10.0.0.1", 22, ED25519),
        Lookup::Match(p(), 3)
    );
    assert_eq!(lookup(&plain, "H1", 22, ED25519), Lookup::Match(p(), 3));
    // another port needs its own [host]:port entry
    assert_eq!(lookup(&plain, "h1", 2222, ED25519), Lookup::Unknown);
    let ported = format!("[h1]:2222 ssh-ed25519 {ED25519}\n");
    assert_eq!(lookup(&ported, "h1", 2222, ED25519), Lookup::Match(p(), 1));
    assert_eq!(lookup(&ported, "h1", 22, ED25519), Lookup::Unknown);
    // a different key for the host: changed
    let other = format!("h1 ecdsa-sha2-nistp256 {ECDSA}\n");
    assert_eq!(
        lookup(&other, "h1", 22, ED25519),
        Lookup::Changed(p(), 1, Some("ecdsa-sha2-nistp256".into()))
    );
    // ...unless another line has the right one
    let both = format!("{other}h1 ssh-ed25519 {ED25519}\n");
    assert_eq!(lookup(&both, "h1", 22, ED25519), Lookup::Match(p(), 2));
    // hashed names, with and without a port
    let h = format!(
        "{} ssh-ed25519 {ED25519}\n{} ssh-ed25519 {ED25519}\n",
        hashed("h2", b"0123456789abcdef0123"),
        hashed("[h3]:2200", b"saltsaltsaltsaltsalt")
    );
    assert_eq!(lookup(&h, "h2", 22, ED25519), Lookup::Match(p(), 1));
    assert_eq!(lookup(&h, "h3", 2200, ED25519), Lookup::Match(p(), 2));
    assert_eq!(lookup(&h, "h3", 22, ED25519), Lookup::Unknown);
    assert_eq!(
        lookup(&h, "h2", 22, ECDSA),
        Lookup::Changed(p(), 1, Some("ssh-ed25519".into()))
    );
    // @revoked wins over a matching entry
    let revoked = format!("h1 ssh-ed25519 {ED25519}\n@revoked * ssh-ed25519 {ED25519}\n");
    assert_eq!(lookup(&revoked, "h1", 22, ED25519), Lookup::Revoked(p(), 2));
    // lines that do not parse are skipped, not fatal
    let junk = format!(
        "@cert-authority *.example ssh-ed25519 {ED25519}\nh1 ssh-new-type AAAA\ngarbage\nh1 ssh-ed25519 {ED25519}\n"
    );
    assert_eq!(lookup(&junk, "h1", 22, ED25519), Lookup::Match(p(), 4));
}

#[test]
fn known_hosts_patterns_as_openssh_reads_them() {
    // wildcards, case-insensitive
    assert!(hostkey::names_match("*.example.org", "db1.example.org"));
    assert!(hostkey::names_match("DB?.example.org", "db1.example.org"));
    assert!(!hostkey::names_match("db?.example.org", "db10.example.org"));
    assert!(hostkey::names_match("10.0.0.*", "10.0.0.7"));
    assert!(!hostkey::names_match("10.0.0.*", "10.0.1.7"));
    // a negated pattern excludes, whatever else matches
    assert!(!hostkey::names_match(
        "*.example.org,!db1.example.org",
        "db1.example.org"
    ));
    assert!(hostkey::names_match(
        "*.example.org,!db1.example.org",
        "db2.example.org"
    ));
    assert!(!hostkey::names_match("!db1", "db2"));
    // [host]:port entries are names like any other
    assert!(hostkey::names_match("[h1]:2222,h1", "[h1]:2222"));
    assert!(!hostkey::names_match("[h1]:2222", "h1"));
    // hashed: exactly one name; a damaged hash matches nothing
    let h = hashed("[h3]:2200", b"saltsaltsaltsaltsalt");
    assert!(hostkey::names_match(&h, "[h3]:2200"));
    assert!(!hostkey::names_match(&h, "[H3]:2200"));
    assert!(!hostkey::names_match(&h, "h3"));
    assert!(!hostkey::names_match("|1|AAAA|", "h3"));
    assert!(!hostkey::names_match("|1|!!!|???", "h3"));
    // and in a file: a wildcard entry with another key is a changed key
    let p = PathBuf::new;
    let wild = format!("*.example.org ecdsa-sha2-nistp256 {ECDSA}\n");
    assert_eq!(
        lookup(&wild, "db1.example.org", 22, ED25519),
        Lookup::Changed(p(), 1, Some("ecdsa-sha2-nistp256".into()))
    );
    assert_eq!(
        lookup(&wild, "db1.example.org", 22, ECDSA),
        Lookup::Match(p(), 1)
    );
    assert_eq!(lookup(&wild, "db1.example.com", 22, ECDSA), Lookup::Unknown);
}

#[test]
fn verify_explains_how_to_trust() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("known_hosts");
    std::fs::write(&f, "").unwrap();
    let e = hostkey::verify(
        &HostKeyPolicy::KnownHosts(Some(f.clone())),
        "10.0.0.9",
        2222,
        &blob(ED25519),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Protocol);
    for needle in [
        "[10.0.0.9]:2222",
        ED25519_FP,
        "--ssh-host-key",
        "--ssh-accept-new",
        "ssh-keyscan -p 2222 -t ed25519 10.0.0.9",
    ] {
        assert!(e.message.contains(needle), "{needle} missing: {e}");
    }
    // accept-new writes exactly one line, and then it is known
    let t = hostkey::verify(
        &HostKeyPolicy::AcceptNew(Some(f.clone())),
        "10.0.0.9",
        2222,
        &blob(ED25519),
    )
    .unwrap();
    assert_eq!(t, hostkey::Trust::Added(f.clone()));
    let t = hostkey::verify(
        &HostKeyPolicy::KnownHosts(Some(f.clone())),
        "10.0.0.9",
        2222,
        &blob(ED25519),
    )
    .unwrap();
    assert_eq!(t, hostkey::Trust::Known(f.clone(), 1));
    // and a different key for it is refused, by both policies
    for policy in [
        HostKeyPolicy::KnownHosts(Some(f.clone())),
        HostKeyPolicy::AcceptNew(Some(f.clone())),
    ] {
        let e = hostkey::verify(&policy, "10.0.0.9", 2222, &blob(ECDSA)).unwrap_err();
        assert!(e.message.contains("CHANGED"), "{e}");
        assert!(e.message.contains(ECDSA_FP), "{e}");
    }
    assert_eq!(std::fs::read_to_string(&f).unwrap().lines().count(), 1);
    // pinning
    let pinned = HostKeyPolicy::Pinned(ED25519_FP.into());
    assert_eq!(
        hostkey::verify(&pinned, "h", 22, &blob(ED25519)),
        Ok(hostkey::Trust::Pinned)
    );
    let e = hostkey::verify(&pinned, "h", 22, &blob(ECDSA)).unwrap_err();
    assert!(e.message.contains(ECDSA_FP) && e.message.contains(ED25519_FP));
}

// --------------------------------------------------------- targets, config --

#[test]
fn target_urls() {
    let t = parse_target("ssh://root@hv1:2222/virsh/web-01").unwrap();
    assert_eq!(
        (t.host.as_str(), t.port, t.username.as_deref()),
        ("hv1", 2222, Some("root"))
    );
    assert_eq!(
        t.profile,
        Profile::Virsh {
            plug: Some("web-01".into())
        }
    );
    let t = parse_target("ssh://[fd00::1]/virsh").unwrap();
    assert_eq!((t.host.as_str(), t.port, t.username), ("fd00::1", 22, None));
    assert_eq!(t.profile, Profile::Virsh { plug: None });
    let t = parse_target("ssh://admin@node7/host").unwrap();
    assert_eq!(t.profile, Profile::Host);
    for bad in [
        "ssh://hv1",
        "ssh://hv1/",
        "ssh://hv1/xen/vm",
        "ssh://hv1:0/host",
        "ssh://hv1:x/host",
        "ssh://:22/host",
        "ipmi://hv1/host",
        "ssh://[fd00::1/host",
        "ssh://hv1/virsh/-x",
    ] {
        assert!(parse_target(bad).is_err(), "{bad}");
    }
    let problem = |url: &str| parse_target(url).unwrap_err().problem;
    assert_eq!(problem("ipmi://hv1/host"), TargetProblem::NotSsh);
    assert_eq!(
        problem("ssh://[fd00::1/host"),
        TargetProblem::UnclosedBracket
    );
    assert_eq!(problem("ssh://:22/host"), TargetProblem::NoHost);
    assert_eq!(
        problem("ssh://hv1:x/host"),
        TargetProblem::BadPort("x".into())
    );
    assert_eq!(
        problem("ssh://hv1/xen/vm"),
        TargetProblem::UnknownProfile("xen".into())
    );
    assert_eq!(
        problem("ssh://hv1/virsh/-x"),
        TargetProblem::Plug(BadPlug::Dash("-x".into()))
    );
    assert_eq!(
        parse_target("ssh://hv1:0/host").unwrap_err().to_string(),
        "'ssh://hv1:0/host': '0' is not a port"
    );
}

#[test]
fn config_checks() {
    let virsh = |plug: &str| Profile::Virsh {
        plug: Some(plug.into()),
    };
    let pw = || SshAuth::Password(Secret::from_str_value("pw"));
    assert!(SshConfig::new("hv1", "root", pw(), virsh("vm"))
        .validate()
        .is_ok());
    let err = |c: SshConfig| c.validate().unwrap_err();
    assert_eq!(
        err(SshConfig::new("", "root", pw(), virsh("vm"))),
        SshConfigError::NoHost
    );
    assert_eq!(
        err(SshConfig::new("hv 1", "root", pw(), virsh("vm"))),
        SshConfigError::BadHost("hv 1".into())
    );
    assert_eq!(
        err(SshConfig::new("hv1", "", pw(), virsh("vm"))),
        SshConfigError::NoUser
    );
    assert_eq!(
        err(SshConfig::new("hv1", "root", pw(), virsh("-vm"))),
        SshConfigError::Plug(BadPlug::Dash("-vm".into()))
    );
    let e = err(SshConfig::new(
        "hv1",
        "root",
        SshAuth::Key {
            path: "/nonexistent/id_ed25519".into(),
            passphrase: None,
        },
        virsh("vm"),
    ));
    assert_eq!(
        e,
        SshConfigError::NoIdentityFile("/nonexistent/id_ed25519".into())
    );
    assert!(e.to_string().contains("does not exist"), "{e}");
    let mut c = SshConfig::new("hv1", "root", pw(), virsh("vm"));
    c.host_keys = HostKeyPolicy::Pinned("SHA256:nope".into());
    assert!(matches!(err(c), SshConfigError::Fingerprint(_)));
    let mut c = SshConfig::new(
        "hv1",
        "root",
        SshAuth::Password(Secret::new(vec![0xff])),
        virsh("vm"),
    );
    assert_eq!(err(c.clone()), SshConfigError::PasswordNotUtf8);
    c.auth = pw();
    c.profile = Profile::Custom {
        status: "s {plug}".into(),
        on: "on".into(),
        off: "off".into(),
        on_pattern: "x".into(),
        off_pattern: "x".into(),
        plug: Some("p".into()),
        uuid: None,
    };
    let e = err(c);
    assert_eq!(e, SshConfigError::SamePatterns("x".into()));
    assert!(e.to_string().contains("same"));
    // a secret never shows in Debug
    let dbg = format!("{:?}", SshConfig::new("hv1", "root", pw(), virsh("vm")));
    assert!(
        dbg.contains("[redacted]") && !dbg.contains("\"pw\""),
        "{dbg}"
    );
}
