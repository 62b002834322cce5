//! Fabric fencing (issue 41): upstream `fence_ifmib` (Python + net-snmp's
//! tools) and ours side by side, with the same arguments against the same
//! real agent: net-snmp's snmpd serving a switch's IF-MIB rows through
//! `tests/peers/snmp_pdu.py` (ifAdminStatus writable, ifOperStatus
//! following it 0.3 s later). Exit code, stdout and the port left behind
//! are compared case by case; then the native `ifmib://` target and
//! `verify` of an isolated node.
//!
//! Deliberate differences (docs/pdu.md, "Fabric fencing"), asserted as such:
//! * a port name two ports carry (ifDescr `storage`) is refused, nothing
//!   set down (upstream sets the first one down and says Success);
//! * a port given by ifName is found (upstream looks at ifDescr only);
//! * a port the switch lacks is unreadable (exit 1; upstream: Status: OFF);
//! * off waits for ifOperStatus down: a port whose link stays up fails the
//!   off (upstream stops at ifAdminStatus and says Success);
//! * list shows ifIndex,ifDescr (upstream: ifDescr,ifAlias).

mod support;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::{bin, peer_available, AgentOut, Snmpd};

const LIMIT: Duration = Duration::from_secs(30);
const PORTS: u64 = 8;

struct Ours {
    dir: tempfile::TempDir,
}

impl Ours {
    fn new() -> Ours {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(bin(), dir.path().join("fence_ifmib")).unwrap();
        Ours { dir }
    }
    fn agent(&self) -> PathBuf {
        self.dir.path().join("fence_ifmib")
    }
}

fn upstream() -> PathBuf {
    PathBuf::from("/usr/sbin/fence_ifmib")
}

fn available() -> bool {
    peer_available("fence_ifmib") && peer_available("snmpget")
}

fn exec(prog: &Path, args: &[String]) -> AgentOut {
    support::exec_agent(prog, args, None, LIMIT)
}

/// Every port up but `down` (admin and link alike, settled); ports 7 and 8
/// both called `storage` in ifDescr; `stuck`: links that read up whatever.
fn reset(peer: &Snmpd, down: &[u64], stuck: &[u64]) {
    let mut st = peer.state();
    st["on"] = serde_json::json!((1..=PORTS)
        .filter(|o| !down.contains(o))
        .collect::<Vec<_>>());
    st["changed"] = serde_json::json!({});
    // The link follows at once, except where a case says otherwise.
    st["link_delay"] = serde_json::json!(0);
    st["stuck"] = serde_json::json!(stuck);
    st["descr"] = serde_json::json!({"7": "storage", "8": "storage"});
    peer.set_state(&st);
}

fn args(peer: &Snmpd, rest: &[&str]) -> Vec<String> {
    let mut a = vec![
        "--ip=127.0.0.1".to_string(),
        format!("--ipport={}", peer.port),
        "--community=private".to_string(),
    ];
    a.extend(rest.iter().map(|s| s.to_string()));
    a
}

/// What one agent did: exit code, stdout, whether the watched port is up.
type Seen = (Option<i32>, String, bool);

/// One power case: name, arguments, ports down first, (exit, stdout, up).
type PowerCase<'a> = (&'a str, &'a [&'a str], &'a [u64], (i32, &'a str, bool));

/// Both agents from the same state: (exit code, stdout, port `watch` up).
fn both(
    ours: &Ours,
    peer: &Snmpd,
    rest: &[&str],
    down: &[u64],
    watch: u64,
) -> (Seen, Seen, String) {
    let a = args(peer, rest);
    reset(peer, down, &[]);
    let up = exec(&upstream(), &a);
    let up_state = peer.is_on(watch);
    reset(peer, down, &[]);
    let us = exec(&ours.agent(), &a);
    let our_state = peer.is_on(watch);
    let ctx = format!(
        "{rest:?}\nupstream ({:?}): {}{}\nours ({:?}): {}{}",
        up.took, up.stdout, up.stderr, us.took, us.stdout, us.stderr
    );
    (
        (up.code, up.stdout.trim().to_string(), up_state),
        (us.code, us.stdout.trim().to_string(), our_state),
        ctx,
    )
}

/// The power cases, FAR's and Pacemaker's way: both agents agree.
#[test]
fn power_cases_agree_with_upstream() {
    if !available() {
        return;
    }
    let Some(peer) = Snmpd::start("ifmib", PORTS as u32) else {
        return;
    };
    let t0 = Instant::now();
    let ours = Ours::new();
    let cases: &[PowerCase] = &[
        (
            "status on",
            &["-n", "3", "-o", "status"],
            &[],
            (0, "Status: ON", true),
        ),
        (
            "status off",
            &["-n", "3", "-o", "status"],
            &[3],
            (2, "Status: OFF", false),
        ),
        (
            "off",
            &["-n", "3", "-o", "off"],
            &[],
            (0, "Success: Powered OFF", false),
        ),
        // The default action of fabric fencing is off.
        (
            "default action",
            &["-n", "3"],
            &[],
            (0, "Success: Powered OFF", false),
        ),
        (
            "already off",
            &["-n", "3", "-o", "off"],
            &[3],
            (0, "Success: Already OFF", false),
        ),
        (
            "on",
            &["-n", "3", "-o", "on"],
            &[3],
            (0, "Success: Powered ON", true),
        ),
        (
            "already on",
            &["-n", "3", "-o", "on"],
            &[],
            (0, "Success: Already ON", true),
        ),
        (
            "disable",
            &["-n", "3", "-o", "disable"],
            &[],
            (0, "Success: Powered OFF", false),
        ),
        (
            "enable",
            &["-n", "3", "-o", "enable"],
            &[3],
            (0, "Success: Powered ON", true),
        ),
        (
            "by ifDescr",
            &["-n", "GigabitEthernet1/0/5", "-o", "off"],
            &[],
            (0, "Success: Powered OFF", false),
        ),
        (
            "unknown name",
            &["-n", "nosuch", "-o", "off"],
            &[],
            (1, "", true),
        ),
        ("monitor", &["-o", "monitor"], &[], (0, "", true)),
        // No reboot in fabric fencing.
        ("reboot", &["-n", "3", "-o", "reboot"], &[], (1, "", true)),
    ];
    for (name, rest, down, (code, out, state)) in cases {
        let watch = if name.starts_with("by ifDescr") { 5 } else { 3 };
        let (up, us, ctx) = both(&ours, &peer, rest, down, watch);
        let want = (Some(*code), out.to_string(), *state);
        assert_eq!(up, want, "upstream, {name}: {ctx}");
        assert_eq!(us, want, "ours, {name}: {ctx}");
    }
    // Pacemaker's way: key=value lines on stdin, no arguments.
    let stdin = format!(
        "ipaddr=127.0.0.1\nipport={}\ncommunity=private\nport=3\naction=off\nnodename=n3\n",
        peer.port
    );
    for prog in [upstream(), ours.agent()] {
        reset(&peer, &[], &[]);
        let r = support::exec_agent(&prog, &[], Some(&stdin), LIMIT);
        assert_eq!(
            (r.code, r.stdout.trim()),
            (Some(0), "Success: Powered OFF"),
            "{prog:?}: {}",
            r.stderr
        );
        assert!(!peer.is_on(3), "{prog:?}");
    }
    // Two ports of one node (a bond): ours sets both down and confirms
    // both links down. Upstream caches the first port's index and sets
    // port 3 down twice: port 4 stays up, and it says Success.
    let (up, us, ctx) = both(&ours, &peer, &["-n", "3,4", "-o", "off"], &[], 4);
    assert_eq!(
        up,
        (Some(0), "Success: Powered OFF".to_string(), true),
        "{ctx}"
    );
    assert_eq!(
        us,
        (Some(0), "Success: Powered OFF".to_string(), false),
        "{ctx}"
    );
    assert!(!peer.is_on(3), "{ctx}");
    // A link that stays up fails ours (upstream stops at ifAdminStatus and
    // says Success).
    // A link that follows 0.3 s later: ours polls until it reads down.
    let a = args(&peer, &["-n", "3", "-o", "off"]);
    reset(&peer, &[], &[]);
    let mut st = peer.state();
    st["link_delay"] = serde_json::json!(0.3);
    peer.set_state(&st);
    let us = exec(&ours.agent(), &a);
    assert_eq!(
        (us.code, us.stdout.trim()),
        (Some(0), "Success: Powered OFF"),
        "{}",
        us.stderr
    );
    assert!(us.took >= Duration::from_millis(300), "{:?}", us.took);
    let a = args(&peer, &["-n", "3,4", "-o", "off", "--power-timeout=2"]);
    reset(&peer, &[], &[4]);
    let up = exec(&upstream(), &a);
    assert_eq!(
        (up.code, up.stdout.trim()),
        (Some(0), "Success: Powered OFF"),
        "{}",
        up.stderr
    );
    reset(&peer, &[], &[4]);
    let us = exec(&ours.agent(), &a);
    assert_eq!((us.code, us.stdout.trim()), (Some(1), ""), "{}", us.stderr);
    assert!(
        us.stderr.contains("port(s) 4 administratively down")
            && us.stderr.contains("link still reads up"),
        "{}",
        us.stderr
    );
    assert!(
        !peer.is_on(3) && !peer.is_on(4),
        "both set down, neither confirmed isolated"
    );
    eprintln!("power cases: {:.1}s", t0.elapsed().as_secs_f64());
}

/// Names, refusals, listing and devices that do not answer.
#[test]
fn names_refusals_and_silence() {
    if !available() {
        return;
    }
    let Some(peer) = Snmpd::start("ifmib", PORTS as u32) else {
        return;
    };
    let t0 = Instant::now();
    let ours = Ours::new();
    // Ambiguous ifDescr: upstream sets port 7 down; ours refuses.
    let (up, us, ctx) = both(&ours, &peer, &["-n", "storage", "-o", "off"], &[], 7);
    assert_eq!(up, (Some(0), "Success: Powered OFF".into(), false), "{ctx}");
    assert_eq!(us, (Some(1), String::new(), true), "{ctx}");
    assert!(
        ctx.contains("ambiguous") && ctx.contains("7 and 8"),
        "{ctx}"
    );
    assert!(peer.is_on(8));
    // By ifName: found by ours, not by upstream.
    let (up, us, ctx) = both(&ours, &peer, &["-n", "Gi1/0/6", "-o", "off"], &[], 6);
    assert_eq!(up, (Some(1), String::new(), true), "{ctx}");
    assert_eq!(us, (Some(0), "Success: Powered OFF".into(), false), "{ctx}");
    // A port the switch lacks: upstream reads it off, ours fails.
    let (up, us, ctx) = both(&ours, &peer, &["-n", "99", "-o", "status"], &[], 1);
    assert_eq!(up, (Some(2), "Status: OFF".into(), true), "{ctx}");
    assert_eq!(us, (Some(1), String::new(), true), "{ctx}");
    // list: upstream by ifDescr and ifAlias, one line per name (ports 7
    // and 8 show as one); ours every port by ifIndex and ifDescr.
    let (up, us, ctx) = both(&ours, &peer, &["-o", "list"], &[2], 2);
    assert_eq!(up.0, Some(0), "{ctx}");
    assert_eq!(us.0, Some(0), "{ctx}");
    let up_lines: Vec<&str> = up.1.lines().collect();
    let our_lines: Vec<&str> = us.1.lines().collect();
    assert_eq!(up_lines.len(), PORTS as usize - 1, "{ctx}");
    assert_eq!(up_lines[6], "storage,node08", "{ctx}");
    assert_eq!(our_lines[6..], ["7,storage", "8,storage"], "{ctx}");
    assert_eq!(our_lines.len(), PORTS as usize, "{ctx}");
    assert_eq!(up_lines[2], "GigabitEthernet1/0/3,node03", "{ctx}");
    assert_eq!(our_lines[2], "3,GigabitEthernet1/0/3", "{ctx}");
    // A wrong community and a device that never answers: both fail,
    // bounded by login_timeout + shell_timeout (all four at once).
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port().to_string();
    reset(&peer, &[], &[]);
    let runs: Vec<(String, PathBuf, Vec<String>)> = [upstream(), ours.agent()]
        .into_iter()
        .flat_map(|prog| {
            let mut wrong = args(&peer, &["-n", "3", "-o", "off"]);
            wrong[2] = "--community=wrong".into();
            let mut gone = wrong.clone();
            gone[1] = format!("--ipport={silent_port}");
            [("wrong community", wrong), ("no answer", gone)]
                .into_iter()
                .map(move |(n, mut a)| {
                    a.extend(["--login-timeout=1".into(), "--shell-timeout=1".into()]);
                    (n.to_string(), prog.clone(), a)
                })
        })
        .collect();
    let handles: Vec<_> = runs
        .into_iter()
        .map(|(n, prog, a)| std::thread::spawn(move || (n, prog.clone(), exec(&prog, &a))))
        .collect();
    for h in handles {
        let (n, prog, r) = h.join().unwrap();
        assert_eq!(r.code, Some(1), "{n} {prog:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.took < Duration::from_secs(5),
            "{n} {prog:?} took {:?}",
            r.took
        );
    }
    assert!(peer.is_on(3), "nothing was set down");
    eprintln!("names and refusals: {:.1}s", t0.elapsed().as_secs_f64());
}

/// A TCP listener that never answers a SYN: backlog 0 and one connection
/// of its own queued, so the kernel drops new SYNs (a silent host).
fn silent_listener() -> (socket2::Socket, socket2::Socket, u16) {
    use socket2::{Domain, Socket, Type};
    let l = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    l.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )
    .unwrap();
    l.listen(0).unwrap();
    let at = l.local_addr().unwrap().as_socket().unwrap();
    let own = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    own.connect(&at.into()).unwrap();
    (l, own, at.port())
}

/// Native `ifmib://`: off isolates (JSON says so), and verify's verdict:
/// the switch says down and the node's address still answers =
/// contradiction; silent = proven; the switch alone = bmc-only.
#[test]
fn native_off_and_verify_of_an_isolated_node() {
    if !peer_available("snmpget") {
        return;
    }
    let Some(peer) = Snmpd::start("ifmib", PORTS as u32) else {
        return;
    };
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let community = dir.path().join("community");
    std::fs::write(&community, "private\n").unwrap();
    let url = format!("ifmib://127.0.0.1:{}/3,Gi1%2F0%2F4", peer.port);
    let fk = |a: &[&str]| {
        let mut c = std::process::Command::new(bin());
        c.args(a)
            .args(["--password-file", community.to_str().unwrap()])
            .env("NO_COLOR", "1")
            .env("XDG_RUNTIME_DIR", dir.path())
            .env_remove("FENCEKIT_INVENTORY")
            .env_remove("FENCEKIT_AUDIT");
        support::run(c, LIMIT)
    };
    reset(&peer, &[], &[]);
    let r = fk(&["off", &url, "-o", "json"]);
    r.assert_code(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &v["results"][0];
    assert_eq!(
        (&res["effect"], &res["state"], &res["outcome"]),
        (&"isolated".into(), &"off".into(), &"reached".into()),
        "{r}"
    );
    assert!(!peer.is_on(3) && !peer.is_on(4));
    let r = fk(&["status", &url]);
    r.assert_code(2);
    // Text: isolated, never "powered off".
    reset(&peer, &[], &[]);
    let r = fk(&["off", &url]);
    assert!(r.stdout.contains("isolated (port down"), "{r}");
    assert!(!r.stdout.contains("powered off"), "{r}");

    let alive = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let alive_port = alive.local_addr().unwrap().port().to_string();
    let (_l, _own, silent_port) = silent_listener();
    let silent_port = silent_port.to_string();
    let verify = |port: Option<&str>| {
        let mut a = vec![
            "verify",
            &url,
            "--samples",
            "1",
            "--probe-timeout",
            "0.5s",
            "-o",
            "json",
        ];
        if let Some(p) = port {
            a.extend(["--address", "127.0.0.1", "--probe-port", p]);
        }
        let r = fk(&a);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_default();
        (r, v)
    };
    let verdict = |v: &serde_json::Value| {
        let r = &v["results"][0];
        let rep = if r["verify"].is_object() {
            &r["verify"]
        } else {
            r
        };
        (
            rep["verdict"].as_str().unwrap_or("").to_string(),
            rep["reason"].as_str().unwrap_or("").to_string(),
        )
    };
    let (r, v) = verify(Some(&alive_port));
    r.assert_code(3);
    let (word, reason) = verdict(&v);
    assert_eq!(word, "contradiction", "{r}");
    assert!(reason.contains("host answers"), "{reason}");
    let (r, v) = verify(Some(&silent_port));
    r.assert_code(0);
    let (word, reason) = verdict(&v);
    assert_eq!(word, "proven", "{r}");
    assert!(
        reason.contains("switch port(s) down") && reason.contains("silent"),
        "{reason}"
    );
    let (r, v) = verify(None);
    r.assert_code(3);
    assert_eq!(verdict(&v).0, "bmc-only", "{r}");
    eprintln!("native and verify: {:.1}s", t0.elapsed().as_secs_f64());
}
