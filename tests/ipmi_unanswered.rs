//! An IPMI device that answers nothing, or only with ICMP port unreachable,
//! through the real binary (native and as `fence_ipmilan`): the cause counts
//! exactly the datagrams that were sent, and a refusing port is named so in
//! the first line. No peer needed: a silent UDP socket of this process, and
//! a loopback port nothing listens at.

mod support;

use std::net::UdpSocket;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Datagrams a silent socket received, by kind: (Open Session requests,
/// sessionless IPMI 1.5 requests, others).
fn counting(sock: UdpSocket, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<(u32, u32, u32)> {
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    std::thread::spawn(move || {
        let (mut opens, mut sessionless, mut other) = (0, 0, 0);
        let mut buf = [0u8; 2048];
        while !stop.load(Ordering::SeqCst) {
            let Ok(n) = sock.recv(&mut buf) else { continue };
            let d = &buf[..n];
            match (d.get(4), d.get(5)) {
                // RMCP+ (auth type 06h), payload type 10h: Open Session Request
                (Some(0x06), Some(p)) if p & 0x3f == 0x10 => opens += 1,
                (Some(0x00), _) => sessionless += 1,
                _ => other += 1,
            }
        }
        (opens, sessionless, other)
    })
}

/// The number before `word` in `text` ("… after 7 attempts …" → 7).
fn number_before(text: &str, word: &str) -> u32 {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("no {word:?} in {text}"));
    text[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before {word:?} in {text}"))
}

#[test]
fn a_silent_bmc_at_a_fixed_suite_is_told_with_every_datagram_counted() {
    let sock = UdpSocket::bind((support::own_loopback(), 0)).unwrap();
    let addr = sock.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let counter = counting(sock, stop.clone());
    let target = format!("ipmi://admin@{}:{}", addr.ip(), addr.port());
    let r = support::fencekit(
        &["status", &target, "--cipher", "3", "--login-timeout", "4s"],
        "pw",
    );
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::SeqCst);
    let (opens, sessionless, other) = counter.join().unwrap();
    let err = r.stderr.clone();
    assert_ne!(r.code, Some(0), "{err}");
    assert!(err.contains("no answer from"), "{err}");
    let said_total = number_before(&err, "datagrams in");
    let said_opens = number_before(&err, "attempts");
    let said_probes = number_before(&err, "discovery requests");
    assert_eq!(other, 0, "{err}");
    assert_eq!(said_total, opens + sessionless, "{err}");
    assert_eq!(said_opens, opens, "{err}");
    assert_eq!(said_probes, sessionless, "{err}");
}

#[test]
fn a_port_that_answers_icmp_unreachable_is_named_in_the_first_line() {
    let (ip, port) = (support::own_loopback(), support::free_port());
    // native
    let target = format!("ipmi://admin@{ip}:{port}");
    let r = support::fencekit(&["status", &target, "--login-timeout", "3s"], "pw");
    let first = r
        .stderr
        .lines()
        .find(|l| !l.contains("warning"))
        .unwrap_or_default();
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    assert!(first.contains("(ICMP port unreachable)"), "{}", r.stderr);
    // as fence_ipmilan
    let dir = std::env::temp_dir().join(format!("fencekit-unanswered-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let agent = dir.join("fence_ipmilan");
    let _ = std::fs::remove_file(&agent);
    std::os::unix::fs::symlink(support::bin(), &agent).unwrap();
    let argv = {
        let mut c = Command::new(&agent);
        c.args([
            "--lanplus",
            "-a",
            &ip.to_string(),
            "-u",
            &port.to_string(),
            "-l",
            "admin",
            "-p",
            "pw",
            "--login-timeout=3",
            "-o",
            "status",
        ])
        .env("FENCEKIT_LOCK_SCOPE", support::lock_scope());
        support::run(c, Duration::from_secs(30))
    };
    let first = argv.stderr.lines().next().unwrap_or_default();
    assert_eq!(argv.code, Some(1), "{}", argv.stderr);
    assert!(
        first.ends_with(
            "ERROR: Connection refused: the port is unreachable (ICMP port unreachable)"
        ),
        "{}",
        argv.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A proxy in front of `bmc` that passes every datagram, except that the
/// BMC's in-session RMCP+ IPMI replies lose their integrity trailer and
/// their authenticated bit. Returns the proxy's address.
fn stripping_proxy(bmc: std::net::SocketAddr, stop: Arc<AtomicBool>) -> std::net::SocketAddr {
    let front = UdpSocket::bind((support::own_loopback(), 0)).unwrap();
    let back = UdpSocket::bind((support::own_loopback(), 0)).unwrap();
    back.connect(bmc).unwrap();
    for s in [&front, &back] {
        s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    }
    let addr = front.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut client = None;
        let mut buf = [0u8; 2048];
        while !stop.load(Ordering::SeqCst) {
            if let Ok((n, from)) = front.recv_from(&mut buf) {
                client = Some(from);
                let _ = back.send(&buf[..n]);
            }
            if let (Ok(n), Some(c)) = (back.recv(&mut buf), client) {
                let mut d = buf[..n].to_vec();
                let sid = d
                    .get(6..10)
                    .map(|b| u32::from_le_bytes(b.try_into().unwrap()));
                if d.len() > 16
                    && d[4] == 0x06
                    && d[5] & 0x3f == 0
                    && d[5] & 0x40 != 0
                    && sid != Some(0)
                {
                    let len = u16::from_le_bytes([d[14], d[15]]) as usize;
                    d[5] &= !0x40;
                    d.truncate((16 + len).min(d.len()));
                }
                let _ = front.send_to(&d, c);
            }
        }
    });
    addr
}

#[test]
fn answers_without_their_integrity_codes_are_named_as_such() {
    let lab = support::InProcessLab::start(fencekit::lab::fleet::LabSpec {
        redfish: None,
        ..fencekit::lab::fleet::LabSpec::default()
    });
    let stop = Arc::new(AtomicBool::new(false));
    let proxy = stripping_proxy(lab.nodes[0].ipmi, stop.clone());
    let target = format!("ipmi://{}@{}:{}", support::USER, proxy.ip(), proxy.port());
    let r = support::fencekit(
        &["status", &target, "--cipher", "3", "--login-timeout", "2s"],
        support::LAB_PASSWORD,
    );
    stop.store(true, Ordering::SeqCst);
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("received and refused: they arrived without their integrity codes"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("no answer"), "{}", r.stderr);
}
