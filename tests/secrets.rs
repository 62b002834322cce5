//! Secrets never leak (SPEC §11): a distinctive password, passed every way
//! fencekit accepts one, through every action, at the highest verbosity,
//! with JSON output and an audit file, on success and failure paths, never
//! shows up — in clear, hex or base64 — in stdout, stderr, the audit file or
//! the command line of a child process; and fencekit runs no child process
//! except the password script's `sh`.
//!
//! (Passwords, keys and tokens live in `Secret`, which wipes them on drop
//! through `zeroize`; that part is not observable from outside.)

mod support;

use base64::Engine;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use support::{bin, Lab};

/// Accepted by the lab (at most 16 bytes: IPMI 1.5 carries no more).
const PW: &str = "Zq7-SeKr1t-9xVb";
/// Rejected by the lab.
const WRONG: &str = "Wr0ng-SeKr1t-4kP";

/// Every form in which a password could leak.
fn forms(pw: &str) -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let hex: String = pw.bytes().map(|b| format!("{b:02x}")).collect();
    vec![
        pw.to_string(),
        hex.clone(),
        hex.to_uppercase(),
        b64.encode(pw),
        b64.encode(format!("admin:{pw}")),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(pw),
    ]
    .into_iter()
    .fold(Vec::new(), |mut v, f| {
        if !v.contains(&f) {
            v.push(f);
        }
        v
    })
}

/// What one run did.
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// `(comm, cmdline)` of every child process seen while it ran.
    children: Vec<(String, String)>,
}

fn children_of(pid: u32) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let ppid: u32 = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if ppid == pid {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                .unwrap_or_default();
            out.push((stat[open + 1..close].to_string(), cmdline));
        }
    }
    out
}

/// Runs `cmd` with `stdin`, sampling its children every few milliseconds.
fn exec(mut cmd: Command, stdin: &str, limit: Duration) -> Out {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().expect("spawn");
    let pid = child.id();
    let mut input = child.stdin.take().unwrap();
    let text = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let ro = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let re = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let t0 = Instant::now();
    let mut children: Vec<(String, String)> = Vec::new();
    let status = loop {
        for c in children_of(pid) {
            if !children.contains(&c) {
                children.push(c);
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > limit {
            support::kill_group(pid, "KILL");
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(3));
    };
    let _ = writer.join();
    Out {
        code: status.code(),
        stdout: ro.join().unwrap(),
        stderr: re.join().unwrap(),
        children,
    }
}

/// One way of passing the password to the native CLI.
#[derive(Clone)]
struct Source {
    name: &'static str,
    /// Extra arguments (`{pw}` is replaced by the password).
    args: Vec<String>,
    /// Extra environment (`{pw}` replaced).
    env: Vec<(String, String)>,
    /// Use this inventory (node names as targets) instead of URLs.
    inventory: Option<fn(&Fixture, &str) -> PathBuf>,
    /// A script runs: an `sh` child is expected.
    script: bool,
}

/// The lab and the files the runs share.
struct Fixture {
    _lab: Lab,
    dir: tempfile::TempDir,
    /// The lab's own inventory (password_file), as written.
    inventory: String,
    /// `ipmi://admin@127.0.0.1:PORT` of node01..06 (05: stuck; 06: slow,
    /// 1 s transitions; the runs are spread over 01-04).
    ipmi: Vec<String>,
    /// Each node's Redfish URL and its certificate.
    redfish: Vec<String>,
    redfish_ca: Vec<PathBuf>,
    host_port: u16,
}

impl Fixture {
    fn start() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let inv = dir.path().join("lab.toml");
        let host_port = support::free_port();
        let lab = Lab::start(&[
            "--nodes",
            "6",
            "--password",
            PW,
            "--fault",
            "node05:stuck",
            "--fault",
            "node06:transition=1s",
            "--hosts",
            &host_port.to_string(),
            "--boot-delay",
            "0s",
            "--write-inventory",
            inv.to_str().unwrap(),
        ]);
        let ipmi = lab.nodes.iter().map(|n| n.target()).collect();
        let redfish = lab
            .nodes
            .iter()
            .map(|n| {
                n.line
                    .split_whitespace()
                    .find(|w| w.starts_with("redfish://"))
                    .expect("redfish URL in the lab banner")
                    .replacen("redfish://", "redfish://admin@", 1)
            })
            .collect();
        let redfish_ca = (1..=6)
            .map(|i| dir.path().join(format!("lab.toml.certs/node{i:02}.pem")))
            .collect();
        let inventory = std::fs::read_to_string(&inv).unwrap();
        for (name, pw) in [("right.pw", PW), ("wrong.pw", WRONG)] {
            std::fs::write(dir.path().join(name), format!("{pw}\n")).unwrap();
        }
        Fixture {
            _lab: lab,
            dir,
            inventory,
            ipmi,
            redfish,
            redfish_ca,
            host_port,
        }
    }

    fn pw_file(&self, pw: &str) -> String {
        let name = if pw == PW { "right.pw" } else { "wrong.pw" };
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    /// A script that reads the password file (so its command line never
    /// holds the password) and takes a moment, so the sampler sees it.
    fn script(&self, pw: &str) -> String {
        format!(
            "read -r p < '{}'; sleep 0.2; printf '%s\\n' \"$p\"",
            self.pw_file(pw)
        )
    }

    /// The lab's inventory with its credential line replaced.
    fn inventory_with(&self, tag: &str, line: String) -> PathBuf {
        let text: String = self
            .inventory
            .lines()
            .map(|l| {
                if l.starts_with("password_file") {
                    line.clone()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let p = self.dir.path().join(format!("inv-{tag}.toml"));
        std::fs::write(&p, text).unwrap();
        p
    }
}

fn inv_file(f: &Fixture, pw: &str) -> PathBuf {
    f.inventory_with(
        &format!("file-{}", pw.len()),
        format!("password_file = \"{}\"", f.pw_file(pw)),
    )
}

fn inv_env(f: &Fixture, _pw: &str) -> PathBuf {
    f.inventory_with("env", "password_env = \"FK_TEST_BMC_PW\"".into())
}

fn inv_script(f: &Fixture, pw: &str) -> PathBuf {
    let s = f.script(pw).replace('\\', "\\\\").replace('"', "\\\"");
    f.inventory_with(
        &format!("script-{}", pw.len()),
        format!("password_script = \"{s}\""),
    )
}

fn sources(f: &Fixture, pw: &str) -> Vec<Source> {
    let s = |name, args: &[String], env: &[(&str, &str)], inventory, script| Source {
        name,
        args: args.to_vec(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        inventory,
        script,
    };
    vec![
        s(
            "--password",
            &["--password".into(), pw.into()],
            &[],
            None,
            false,
        ),
        s(
            "--password-file",
            &["--password-file".into(), f.pw_file(pw)],
            &[],
            None,
            false,
        ),
        s(
            "--password-env",
            &["--password-env".into(), "FK_TEST_BMC_PW".into()],
            &[("FK_TEST_BMC_PW", pw)],
            None,
            false,
        ),
        s(
            "--password-script",
            &["--password-script".into(), f.script(pw)],
            &[],
            None,
            true,
        ),
        s(
            "FENCEKIT_PASSWORD",
            &[],
            &[("FENCEKIT_PASSWORD", pw)],
            None,
            false,
        ),
        s("inventory password_file", &[], &[], Some(inv_file), false),
        s(
            "inventory password_env",
            &[],
            &[("FK_TEST_BMC_PW", pw)],
            Some(inv_env),
            false,
        ),
        s(
            "inventory password_script",
            &[],
            &[],
            Some(inv_script),
            true,
        ),
    ]
}

/// Everything checked after a run; returns what went wrong.
fn leaks(label: &str, o: &Out, audit: Option<&Path>, pw: &str, script: bool) -> Vec<String> {
    let mut bad = Vec::new();
    let audit_text = audit
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    for form in forms(pw) {
        for (what, text) in [
            ("stdout", &o.stdout),
            ("stderr", &o.stderr),
            ("audit", &audit_text),
        ] {
            if text.contains(&form) {
                bad.push(format!("{label}: {what} contains {form:?}"));
            }
        }
        for (comm, cmdline) in &o.children {
            if cmdline.contains(&form) {
                bad.push(format!(
                    "{label}: child {comm} has it in its argv: {cmdline}"
                ));
            }
        }
    }
    for (comm, cmdline) in &o.children {
        // Between fork and exec the script's child still bears our name.
        let script_child = comm == "sh" || comm == "fencekit" || comm.starts_with("fence_");
        if !(script && script_child) {
            bad.push(format!(
                "{label}: unexpected child process {comm}: {cmdline}"
            ));
        }
    }
    bad
}

fn native_cmd(f: &Fixture, src: &Source, pw: &str, args: &[String]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .args(&src.args)
        .current_dir(f.dir.path())
        .env("NO_COLOR", "1")
        .env("XDG_RUNTIME_DIR", f.dir.path())
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("FENCEKIT_AUDIT")
        .env_remove("RUST_LOG");
    for (k, v) in &src.env {
        c.env(k, v.replace("{pw}", pw));
    }
    c
}

/// Runs jobs on a few threads; collects every problem.
fn run_all(jobs: Vec<Box<dyn FnOnce() -> Vec<String> + Send + '_>>) -> Vec<String> {
    let jobs = Mutex::new(jobs);
    let problems = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..6 {
            s.spawn(|| loop {
                let Some(job) = jobs.lock().unwrap().pop() else {
                    break;
                };
                let p = job();
                problems.lock().unwrap().extend(p);
            });
        }
    });
    problems.into_inner().unwrap()
}

#[test]
fn native_mode_never_shows_the_password() {
    let f = Fixture::start();
    let dead = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let dead_target = format!("ipmi://admin@{}", dead.local_addr().unwrap());
    let hp = f.host_port.to_string();
    let mut jobs: Vec<Box<dyn FnOnce() -> Vec<String> + Send + '_>> = Vec::new();
    let mut n = 0usize;
    // (pw, what, args for a URL run, args for an inventory run, must succeed)
    type Case = (&'static str, String, Vec<String>, Vec<String>, Option<i32>);
    let mut cases: Vec<Case> = Vec::new();
    let url = |i: usize| f.ipmi[i].clone();
    let verify_url = |t: String| {
        vec![
            "verify".to_string(),
            t,
            "--address".into(),
            "{ADDR}".into(),
            "--probe-port".into(),
            hp.clone(),
            "--samples".into(),
            "2".into(),
            "--interval".into(),
            "50ms".into(),
            "--probe-timeout".into(),
            "300ms".into(),
        ]
    };
    let vtail = |mut v: Vec<String>| {
        v.extend(
            [
                "--samples",
                "2",
                "--interval",
                "50ms",
                "--probe-timeout",
                "300ms",
            ]
            .map(String::from),
        );
        v
    };
    for action in ["status", "on", "off", "reboot", "monitor", "check"] {
        let want = match action {
            "status" => None,
            _ => Some(0),
        };
        cases.push((
            PW,
            action.into(),
            vec![action.into(), "{URL}".to_string()],
            vec![action.into(), "{NODE}".into(), "--level".into(), "1".into()],
            want,
        ));
    }
    cases.push((
        PW,
        "verify".into(),
        verify_url("{URL}".to_string()),
        vtail(vec![
            "verify".into(),
            "{NODE}".into(),
            "--level".into(),
            "1".into(),
        ]),
        None,
    ));
    // Redfish (Basic auth carries base64("admin:" + password)).
    for action in ["status", "off", "reboot"] {
        cases.push((
            PW,
            format!("redfish {action}"),
            vec![
                action.into(),
                "{RF}".to_string(),
                "--ca-cert".into(),
                "{RFCA}".to_string(),
            ],
            vec![action.into(), "{NODE}".into(), "--level".into(), "2".into()],
            if action == "status" { None } else { Some(0) },
        ));
    }
    // IPMI 1.5 with the straight-password authentication type, where the
    // password itself is in every datagram.
    cases.push((
        PW,
        "ipmi 1.5 password auth off".into(),
        vec![
            "off".into(),
            "{URL}".to_string(),
            "--ipmi-version".into(),
            "1.5".into(),
            "--auth".into(),
            "password".into(),
        ],
        vec!["off".into(), "{NODE}".into(), "--level".into(), "1".into()],
        Some(0),
    ));
    // Failure paths.
    for action in ["status", "off"] {
        cases.push((
            WRONG,
            format!("wrong password {action}"),
            vec![action.into(), "{URL}".to_string()],
            vec![action.into(), "{NODE}".into(), "--level".into(), "1".into()],
            Some(1),
        ));
    }
    cases.push((
        WRONG,
        "wrong password redfish off".into(),
        vec![
            "off".into(),
            "{RF}".to_string(),
            "--ca-cert".into(),
            "{RFCA}".to_string(),
        ],
        vec!["off".into(), "{NODE}".into(), "--level".into(), "2".into()],
        Some(1),
    ));
    cases.push((
        PW,
        "unreachable off".into(),
        vec![
            "off".into(),
            dead_target.clone(),
            "--login-timeout".into(),
            "1s".into(),
        ],
        vec![],
        Some(1),
    ));
    cases.push((
        PW,
        "stuck off".into(),
        vec!["off".into(), url(4), "--power-timeout".into(), "1s".into()],
        vec![
            "off".into(),
            "node05".into(),
            "--level".into(),
            "1".into(),
            "--power-timeout".into(),
            "1s".into(),
        ],
        Some(1),
    ));
    // A slow action (1 s transitions): the sampler watches it throughout.
    cases.push((
        PW,
        "slow reboot".into(),
        vec!["reboot".into(), url(5)],
        vec![
            "reboot".into(),
            "node06".into(),
            "--level".into(),
            "1".into(),
        ],
        Some(0),
    ));

    for (pw, what, url_args, inv_args, want) in cases {
        for src in sources(&f, pw) {
            // the slow BMC serialises its runs: a few sources are enough there
            if what == "slow reboot"
                && !matches!(
                    src.name,
                    "--password-script"
                        | "inventory password_script"
                        | "--password-file"
                        | "FENCEKIT_PASSWORD"
                )
            {
                continue;
            }
            let args = match src.inventory {
                Some(_) if inv_args.is_empty() => continue,
                Some(make) => {
                    let mut a = inv_args.clone();
                    a.push("-i".into());
                    a.push(make(&f, pw).to_string_lossy().into_owned());
                    a
                }
                None => url_args.clone(),
            };
            for json in [true, false] {
                let human_too =
                    matches!(what.as_str(), "status" | "wrong password off" | "stuck off");
                if !json && !human_too {
                    continue;
                }
                n += 1;
                // spread the runs over node01-04 (each BMC serialises its own)
                let k = n % 4;
                let args: Vec<String> = args
                    .iter()
                    .map(|a| {
                        a.replace("{URL}", &f.ipmi[k])
                            .replace("{NODE}", &format!("node{:02}", k + 1))
                            .replace("{RFCA}", &f.redfish_ca[k].to_string_lossy())
                            .replace("{RF}", &f.redfish[k])
                            .replace("{ADDR}", &format!("127.1.0.{}", k + 1))
                    })
                    .collect();
                let audit = f.dir.path().join(format!("audit-{n}.jsonl"));
                let mut full = args.clone();
                full.push("-vvv".into());
                if json {
                    full.extend(["-o".into(), "json".into(), "--audit".into()]);
                    full.push(audit.to_string_lossy().into_owned());
                }
                let label = format!(
                    "{what} via {} ({})",
                    src.name,
                    if json { "json" } else { "human" }
                );
                let cmd = native_cmd(&f, &src, pw, &full);
                let script = src.script;
                let argv_source = src.name == "--password";
                // (`verify` and `check` neither warn about --password nor
                // write audit records yet: reported, not asserted.)
                let checks = full[0] == "verify" || full[0] == "check";
                jobs.push(Box::new(move || {
                    let o = exec(cmd, "", Duration::from_secs(40));
                    let mut bad = leaks(&label, &o, json.then_some(audit.as_path()), pw, script);
                    bad.extend(leaks(&label, &o, None, WRONG, script));
                    bad.extend(leaks(&label, &o, None, PW, script));
                    if let Some(w) = want {
                        if o.code != Some(w) {
                            bad.push(format!(
                                "{label}: exit {:?}, expected {w}\nstderr:\n{}",
                                o.code,
                                o.stderr
                                    .lines()
                                    .filter(|l| !l.contains("TRACE") && !l.contains("DEBUG"))
                                    .take(20)
                                    .collect::<Vec<_>>()
                                    .join("\n")
                            ));
                        }
                    }
                    // `check` writes no audit record (it changes nothing); `verify` does.
                    let audited = !checks || full[0] == "verify";
                    if json && audited && std::fs::metadata(&audit).map_or(true, |m| m.len() == 0) {
                        bad.push(format!("{label}: no audit record was written"));
                    }
                    if o.code == Some(64) {
                        bad.push(format!("{label}: usage error\n{}", o.stderr));
                    }
                    let warnings = o
                        .stderr
                        .lines()
                        .filter(|l| l.contains("--password is visible to other local users"))
                        .count();
                    let expected = usize::from(argv_source);
                    if warnings != expected {
                        bad.push(format!(
                            "{label}: {warnings} --password warning line(s), expected {expected}"
                        ));
                    }
                    if script && o.code != Some(64) && !o.children.iter().any(|c| c.0 == "sh") {
                        bad.push(format!("{label}: the password script's sh was never seen"));
                    }
                    bad
                }));
            }
        }
    }
    let count = jobs.len();
    let t0 = Instant::now();
    let problems = run_all(jobs);
    println!("{count} native runs in {:?}", t0.elapsed());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A directory with the agent symlinks.
fn agent_path(name: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let d = tempfile::Builder::new()
            .prefix("fencekit-secrets")
            .tempdir()
            .unwrap()
            .keep();
        for n in ["fence_ipmilan", "fence_redfish", "fence_apc_snmp"] {
            std::os::unix::fs::symlink(bin(), d.join(n)).unwrap();
        }
        d
    });
    dir.join(name)
}

#[test]
fn agent_mode_never_shows_the_password() {
    let f = Fixture::start();
    let dead = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let dead_port = dead.local_addr().unwrap().port().to_string();
    // (host, port) of node i: every lab BMC has an address of its own.
    let port = |i: usize| {
        let hostport = f.ipmi[i]
            .rsplit_once('@')
            .map_or(f.ipmi[i].as_str(), |x| x.1);
        let (h, p) = hostport.rsplit_once(':').unwrap();
        (h.to_string(), p.to_string())
    };
    // (pw, label, device options as key=value, action, expected exit)
    type AgentCase = (
        &'static str,
        String,
        Vec<(String, String)>,
        &'static str,
        Option<i32>,
    );
    let mut cases: Vec<AgentCase> = Vec::new();
    let dev = |(h, p): (String, String)| {
        vec![
            ("ip".to_string(), h),
            ("ipport".to_string(), p),
            ("username".to_string(), "admin".to_string()),
            ("lanplus".to_string(), "1".to_string()),
            ("power_wait".to_string(), "0".to_string()),
        ]
    };
    for (i, action) in ["status", "off", "reboot", "monitor", "validate-all"]
        .into_iter()
        .enumerate()
    {
        let want = if action == "status" { None } else { Some(0) };
        cases.push((PW, action.into(), dev(port(i % 4)), action, want));
    }
    cases.push((
        WRONG,
        "wrong password status".into(),
        dev(port(0)),
        "status",
        Some(1),
    ));
    cases.push((
        WRONG,
        "wrong password off".into(),
        dev(port(0)),
        "off",
        Some(1),
    ));
    let mut d = dev(("127.0.0.1".to_string(), dead_port));
    d.push(("power_timeout".into(), "1".into()));
    d.push(("login_timeout".into(), "1".into()));
    cases.push((PW, "unreachable off".into(), d, "off", Some(1)));
    let mut d = dev(port(4));
    d.push(("power_timeout".into(), "1".into()));
    cases.push((PW, "stuck off".into(), d, "off", Some(1)));
    cases.push((PW, "slow reboot".into(), dev(port(5)), "reboot", Some(0)));
    // Agents take no lock: runs on one BMC are serialised here instead.
    let node_locks: Vec<Mutex<()>> = (0..7).map(|_| Mutex::new(())).collect();
    let node_locks = &node_locks;
    let node_of = |device: &[(String, String)]| {
        let p = &device[1].1;
        (0..6).find(|i| port(*i).1 == *p).unwrap_or(6)
    };

    let mut jobs: Vec<Box<dyn FnOnce() -> Vec<String> + Send + '_>> = Vec::new();
    for (pw, what, device, action, want) in cases {
        // How the password is passed: argv --password=, argv
        // --password-script=, stdin password=, passwd=, passwd_script=.
        for how in [
            "argv password",
            "argv password-script",
            "stdin password",
            "stdin passwd",
            "stdin passwd_script",
        ] {
            let script = how.contains("script");
            let secret_value = if script { f.script(pw) } else { pw.to_string() };
            let mut cmd = Command::new(agent_path("fence_ipmilan"));
            cmd.current_dir("/")
                .env_remove("HOME")
                .env_remove("XDG_RUNTIME_DIR")
                .env_remove("PCMK_service")
                .env_remove("FENCEKIT_PASSWORD");
            let mut stdin = String::new();
            if let Some(opt) = how.strip_prefix("argv ") {
                for (k, v) in &device {
                    if k == "lanplus" {
                        cmd.arg("--lanplus");
                    } else {
                        cmd.arg(format!("--{}={v}", k.replace('_', "-")));
                    }
                }
                cmd.arg(format!("--{opt}={secret_value}"));
                cmd.arg(format!("--action={action}"));
                cmd.args(["-v", "-v", "-v"]);
            } else {
                let key = how.strip_prefix("stdin ").unwrap();
                for (k, v) in &device {
                    stdin.push_str(&format!("{k}={v}\n"));
                }
                stdin.push_str(&format!(
                    "{key}={secret_value}\naction={action}\nverbose=1\n"
                ));
            }
            let label = format!("fence_ipmilan {what} via {how}");
            let node = node_of(&device);
            jobs.push(Box::new(move || {
                let _serial = node_locks[node].lock().unwrap_or_else(|e| e.into_inner());
                let o = exec(cmd, &stdin, Duration::from_secs(40));
                let mut bad = leaks(&label, &o, None, pw, script);
                if let Some(w) = want {
                    if o.code != Some(w) {
                        bad.push(format!(
                            "{label}: exit {:?}, expected {w}\n{}",
                            o.code, o.stderr
                        ));
                    }
                }
                if o.stderr.contains("visible to other") {
                    bad.push(format!("{label}: agent mode warned about --password"));
                }
                if script && !o.children.iter().any(|c| c.0 == "sh") && action != "validate-all" {
                    bad.push(format!("{label}: the password script's sh was never seen"));
                }
                bad
            }));
        }
    }
    let count = jobs.len();
    let t0 = Instant::now();
    let problems = run_all(jobs);
    println!("{count} agent runs in {:?}", t0.elapsed());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn the_detector_finds_every_form() {
    for form in forms(PW) {
        let o = Out {
            code: Some(0),
            stdout: format!("x {form} y"),
            stderr: String::new(),
            children: vec![],
        };
        assert!(!leaks("probe", &o, None, PW, false).is_empty(), "{form}");
    }
    let o = Out {
        code: Some(0),
        stdout: String::new(),
        stderr: String::new(),
        children: vec![("cat".into(), "cat /etc/x".into())],
    };
    assert_eq!(
        leaks("probe", &o, None, PW, true).len(),
        1,
        "a child that is not sh"
    );
}

/// SNMP (issue 15): the v3 passwords of an inventory's PDU level (success
/// and wrong-password paths) and the community and v3 passwords given to
/// fence_apc_snmp never show at -vvv, in JSON or in the audit file.
#[test]
fn snmp_secrets_never_show() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("lab.toml");
    let lab = Lab::start(&[
        "--nodes",
        "2",
        "--pdus",
        "2",
        "--redfish",
        "none",
        "--password",
        PW,
        "--write-inventory",
        inv.to_str().unwrap(),
    ]);
    let wrong_pw = dir.path().join("wrong.pw");
    std::fs::write(&wrong_pw, format!("{WRONG}\n")).unwrap();
    let text = std::fs::read_to_string(&inv).unwrap();
    let wrong_inv = dir.path().join("wrong.toml");
    std::fs::write(
        &wrong_inv,
        text.replace(
            &format!("priv_password_file = \"{}.password\"", inv.display()),
            &format!("priv_password_file = \"{}\"", wrong_pw.display()),
        ),
    )
    .unwrap();
    let audit = dir.path().join("audit.jsonl");
    let mut bad = Vec::new();
    let native = |inventory: &Path, action: &str| {
        let mut c = Command::new(bin());
        c.args([
            action,
            "-i",
            inventory.to_str().unwrap(),
            "node01",
            "--level",
            "2",
        ])
        .args(["-vvv", "-o", "json", "--audit", audit.to_str().unwrap()])
        .args(["--timeout", "20s"])
        .env("XDG_RUNTIME_DIR", dir.path())
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY");
        exec(c, "", Duration::from_secs(60))
    };
    for action in ["status", "off", "on", "check"] {
        let o = native(&inv, action);
        assert_eq!(o.code, Some(0), "{action}: {}", o.stderr);
        bad.extend(leaks(
            &format!("native {action}"),
            &o,
            Some(&audit),
            PW,
            false,
        ));
    }
    let o = native(&wrong_inv, "off");
    assert_eq!(o.code, Some(1), "wrong privacy password: {}", o.stderr);
    for pw in [PW, WRONG] {
        bad.extend(leaks(
            "native off, wrong privacy password",
            &o,
            Some(&audit),
            pw,
            false,
        ));
    }
    let pdu = text
        .lines()
        .find_map(|l| l.strip_prefix("endpoint = \"snmp://"))
        .and_then(|l| l.strip_suffix('"'))
        .expect("a PDU endpoint");
    let (host, port) = pdu.rsplit_once(':').unwrap();
    let agent = |extra: &[&str]| {
        let mut c = Command::new(agent_path("fence_apc_snmp"));
        c.args([
            format!("--ip={host}"),
            format!("--ipport={port}"),
            "--plug=2".into(),
        ])
        .args(extra)
        .args(["-vvv", "-o", "status"]);
        exec(c, "", Duration::from_secs(60))
    };
    let v3 = [
        "--snmp-version=3",
        "--username=fence",
        "--snmp-auth-prot=SHA",
    ];
    let o = agent(
        &[
            &v3[..],
            &[
                &format!("--password={PW}"),
                &format!("--snmp-priv-passwd={PW}"),
            ],
        ]
        .concat(),
    );
    assert_eq!(
        o.code,
        Some(1),
        "SHA-1 is not the lab's SHA-256: refused\n{}",
        o.stderr
    );
    bad.extend(leaks("agent v3", &o, None, PW, false));
    let o = agent(&[
        "--snmp-version=2c",
        &format!("--community={PW}"),
        "--login-timeout=1",
        "--shell-timeout=1",
    ]);
    assert_eq!(
        o.code,
        Some(1),
        "an unknown community goes unanswered\n{}",
        o.stderr
    );
    bad.extend(leaks("agent v2c community", &o, None, PW, false));
    drop(lab);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
