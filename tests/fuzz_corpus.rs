//! Replays every checked-in fuzz input (`fuzz/corpus/<target>/*`) through
//! the same code as the fuzz targets (`fuzz/fuzz_targets/common.rs`), on the
//! stable toolchain, so the corpus cannot rot and fixed crashes stay fixed.
//!
//! `FENCEKIT_WRITE_SEEDS=1 cargo test --test fuzz_corpus` rewrites the
//! generated seeds (`seed-*` files) from real exchanges with the lab BMC
//! and the library's own encoders; hand-written seeds and crash
//! reproducers (`crash-*`) are left alone.

#[path = "../fuzz/fuzz_targets/common.rs"]
mod common;

use std::path::{Path, PathBuf};

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
}

/// Runs every file of one target's corpus; returns how many there were.
fn replay(target: &str, body: fn(&[u8])) -> usize {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in &files {
        let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let r = std::panic::catch_unwind(|| body(&data));
        assert!(r.is_ok(), "{target}: {} fails", f.display());
    }
    assert!(!files.is_empty(), "{target}: the corpus is empty");
    files.len()
}

macro_rules! replay_tests {
    ($($t:ident),*) => {$(
        #[test]
        fn $t() {
            replay(stringify!($t), common::$t);
        }
    )*};
}

replay_tests!(
    ipmi_codec,
    ipmi_session,
    lab_ipmi_server,
    redfish_json,
    agent_stdin,
    agent_argv,
    targets,
    snmp_codec,
    snmp_session,
    lab_pdu_agent,
    bounded_parse
);

/// The recorded client sessions in the `lab_ipmi_server` seeds still replay
/// in full against a fresh lab (whose RNG is seeded): if the lab's use of its
/// RNG changes, they stop reaching the in-session code and must be
/// regenerated (`FENCEKIT_WRITE_SEEDS=1`).
#[test]
fn recorded_sessions_replay_in_full() {
    use fencekit::lab::bmc::{Bmc, Faults};
    for name in ["raw-suite3", "raw-suite17", "raw-v15-md5", "raw-v15-none"] {
        let path = corpus_dir("lab_ipmi_server").join(format!("seed-{name}"));
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let bmc = Bmc::new(true, Faults::default());
        let mut server = common::lab_bmc(bmc.clone());
        let from = std::net::SocketAddr::from(([127, 0, 0, 1], 9));
        for chunk in common::split(&data[1..]) {
            let _ = server.handle(&chunk[1..], from);
        }
        let c = bmc.counters();
        assert_eq!(
            (c.sessions, c.status_reads, c.closed),
            (1, 1, 1),
            "{name} no longer replays; regenerate with FENCEKIT_WRITE_SEEDS=1"
        );
    }
}

/// `FENCEKIT_WRITE_SEEDS=1`: rewrites the generated `seed-*` files.
#[test]
fn write_seeds() {
    if std::env::var_os("FENCEKIT_WRITE_SEEDS").is_none() {
        return;
    }
    seeds::write_all();
}

mod seeds {
    use super::common::{self, join};
    use super::corpus_dir;
    use fencekit::ipmi::codec::{self, cmd, netfn, Frame};
    use fencekit::ipmi::config::{AuthType, Privilege};
    use fencekit::ipmi::crypto::Suite;
    use fencekit::ipmi::session::{self, Active, ExpectChallenge, ExpectOpenSessionResponse};
    use fencekit::lab::bmc::{Bmc, Faults};
    use fencekit::lab::ipmi::IpmiServer;
    use fencekit::secret::Secret;
    use std::net::SocketAddr;

    /// Seeds of one target: (file name without the `seed-` prefix, bytes).
    type Seeds = Vec<(String, Vec<u8>)>;

    fn write(target: &str, seeds: Seeds) {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).expect("corpus directory");
        for e in std::fs::read_dir(&dir).expect("corpus directory") {
            let p = e.expect("entry").path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("seed-") {
                std::fs::remove_file(&p).expect("remove old seed");
            }
        }
        for (name, data) in seeds {
            std::fs::write(dir.join(format!("seed-{name}")), data).expect("write seed");
        }
    }

    pub fn write_all() {
        write("ipmi_codec", ipmi_codec());
        write("ipmi_session", ipmi_session());
        write("lab_ipmi_server", lab_ipmi_server());
        write("redfish_json", text(REDFISH));
        write("agent_stdin", text(STDIN));
        write("agent_argv", argv());
        write("targets", text(TARGETS));
        super::snmp::write_all(write);
    }

    fn text(list: &[(&str, &str)]) -> Seeds {
        list.iter()
            .map(|(n, t)| (n.to_string(), t.as_bytes().to_vec()))
            .collect()
    }

    /// A lab BMC that records every datagram in and out.
    struct Recorder {
        server: IpmiServer,
        log: Vec<(String, Vec<u8>)>,
    }

    impl Recorder {
        fn new() -> Self {
            Recorder {
                // The same BMC (and RNG seed) as the fuzz targets use.
                server: common::lab_bmc(Bmc::new(true, Faults::default())),
                log: Vec::new(),
            }
        }

        fn send(&mut self, what: &str, d: Vec<u8>) -> Vec<u8> {
            let from = SocketAddr::from(([127, 0, 0, 1], 9));
            let answer = self
                .server
                .handle(&d, from)
                .unwrap_or_else(|| panic!("no answer to {what}"));
            self.log.push((format!("{what}-rq"), d));
            self.log.push((format!("{what}-rs"), answer.clone()));
            answer
        }
    }

    /// The in-session requests of a fence: privilege, status, off, close.
    fn requests(sid: u32) -> Vec<(&'static str, Frame)> {
        vec![
            (
                "set-privilege",
                Frame::request(netfn::APP, cmd::SET_SESSION_PRIVILEGE, 3, &[4]),
            ),
            (
                "system-guid",
                Frame::request(netfn::APP, cmd::GET_SYSTEM_GUID, 7, &[]),
            ),
            (
                "dcmi-power-reading",
                Frame::request(
                    netfn::GROUP_EXT,
                    cmd::DCMI_GET_POWER_READING,
                    8,
                    &codec::dcmi_power_reading_request(),
                ),
            ),
            (
                "chassis-status",
                Frame::request(netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, 4, &[]),
            ),
            (
                "power-off",
                Frame::request(netfn::CHASSIS, cmd::CHASSIS_CONTROL, 5, &[0]),
            ),
            (
                "close-session",
                Frame::request(netfn::APP, cmd::CLOSE_SESSION, 6, &sid.to_le_bytes()),
            ),
        ]
    }

    fn in_session(rec: &mut Recorder, mut active: Active, tag: &str) {
        for (what, rq) in requests(active.managed_sid()) {
            let d = active.wrap(&rq);
            let answer = rec.send(&format!("{tag}-{what}"), d);
            assert!(matches!(
                active.unwrap(&answer),
                session::Unwrapped::Frame(_)
            ));
        }
    }

    fn rmcpp(rec: &mut Recorder, suite: Suite) {
        let tag = format!("suite{}", suite.id());
        let d = session::sessionless_request(netfn::APP, cmd::GET_CHANNEL_AUTH_CAPS, 1, &[0x8e, 4]);
        rec.send(&format!("{tag}-auth-caps"), d);
        let d = session::sessionless_request(
            netfn::APP,
            cmd::GET_CHANNEL_CIPHER_SUITES,
            2,
            &[0x0e, 0x00, 0x80],
        );
        rec.send(&format!("{tag}-cipher-suites"), d);
        let mut hs = ExpectOpenSessionResponse::new(
            suite,
            Privilege::Administrator,
            "admin",
            Secret::from_str_value("lab"),
            None,
        );
        let r = rec.send(&format!("{tag}-open-session"), hs.request());
        let opened = hs.on_response(&r).unwrap().unwrap();
        let mut hs = hs.into_rakp(opened);
        let r = rec.send(&format!("{tag}-rakp1"), hs.request());
        let verified = hs.on_response(&r).unwrap().unwrap();
        let mut hs = hs.into_rakp3(verified);
        let r = rec.send(&format!("{tag}-rakp3"), hs.request());
        let keys = hs.on_response(&r).unwrap().unwrap();
        in_session(rec, hs.into_active(keys), &tag);
    }

    fn v15(rec: &mut Recorder, auth: AuthType) {
        let tag = format!("v15-{}", auth.as_str());
        let mut hs = ExpectChallenge::new(
            auth,
            Privilege::Administrator,
            "admin",
            Secret::from_str_value("lab"),
        );
        let r = rec.send(&format!("{tag}-challenge"), hs.request(1));
        let challenge = hs.on_response(&r).unwrap().unwrap();
        let mut hs = hs.into_activation(challenge);
        let r = rec.send(&format!("{tag}-activate"), hs.request(2));
        let activated = hs.on_response(&r).unwrap().unwrap();
        in_session(rec, hs.into_active(activated), &tag);
    }

    /// Every datagram of our client's exchanges with the lab, and the bare
    /// payloads the codec also decodes.
    fn ipmi_codec() -> Seeds {
        let mut out = Seeds::new();
        for run in 0..5 {
            let mut rec = Recorder::new();
            match run {
                0 => rmcpp(&mut rec, Suite::S3),
                1 => rmcpp(&mut rec, Suite::S17),
                2 => v15(&mut rec, AuthType::Md5),
                3 => v15(&mut rec, AuthType::Password),
                _ => v15(&mut rec, AuthType::None),
            }
            out.extend(rec.log);
        }
        // ASF presence ping (RMCP class 6).
        out.push((
            "asf-ping".into(),
            vec![6, 0, 0xff, 6, 0, 0, 0x11, 0xbe, 0x80, 0x21, 0, 0],
        ));
        // Get Channel Cipher Suites record data, as pyghmi's BMC sends it.
        out.push((
            "cipher-records".into(),
            vec![0xc0, 3, 0x01, 0x41, 0x81, 0xc0, 17, 0x03, 0x44, 0x81],
        ));
        // Get Chassis Status data after the completion code (power on).
        out.push(("chassis-status-data".into(), vec![0x01, 0x00, 0x40, 0x00]));
        // Get System GUID data: the lab's node 1 in SMBIOS order.
        out.push((
            "system-guid-data".into(),
            codec::GuidEncoding::Smbios
                .encode(&[
                    0x4c, 0x41, 0x42, 0x30, 0, 0, 0x40, 0x01, 0x80, 0, 0xfe, 0, 0, 0, 0, 1,
                ])
                .to_vec(),
        ));
        // DCMI Get Power Reading data: 212 W, measurement active.
        out.push((
            "dcmi-power-reading-data".into(),
            codec::DcmiPowerReading {
                current: 212,
                minimum: 9,
                maximum: 212,
                average: 150,
                timestamp: 0x6000_0000,
                period_ms: 1000,
                state: 0x40,
            }
            .encode(),
        ));
        out
    }

    fn mode(f: impl Fn(u8) -> bool) -> u8 {
        (0..=255u8).find(|m| f(*m)).expect("a mode byte")
    }

    fn input(mode: u8, chunks: &[Vec<u8>]) -> Vec<u8> {
        let mut d = vec![mode];
        d.extend(join(chunks));
        d
    }

    fn rq(kind: u8, netfn: u8, cmd: u8, data: &[u8]) -> Vec<u8> {
        let mut c = vec![kind, netfn, cmd];
        c.extend_from_slice(data);
        c
    }

    /// A fence's requests as request chunks (kind 1) of the active stages,
    /// each followed by `then` (e.g. "unwrap the answer").
    fn fence_script(then: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut chunks = Vec::new();
        for c in [
            rq(1, netfn::APP, cmd::SET_SESSION_PRIVILEGE, &[4]),
            rq(1, netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, &[]),
            rq(1, netfn::CHASSIS, cmd::CHASSIS_CONTROL, &[2]),
            rq(1, netfn::APP, cmd::GET_DEVICE_ID, &[]),
            rq(1, netfn::APP, cmd::GET_SYSTEM_GUID, &[]),
            rq(
                1,
                netfn::GROUP_EXT,
                cmd::DCMI_GET_POWER_READING,
                &codec::dcmi_power_reading_request(),
            ),
            rq(1, netfn::APP, cmd::CLOSE_SESSION, &[0, 0, 0, 0]),
        ] {
            chunks.push(c);
            chunks.extend(then.iter().cloned());
        }
        chunks
    }

    fn ipmi_session() -> Seeds {
        let mut out = Seeds::new();
        // Raw datagrams to offer each stage: one of each kind from a recording.
        let mut rec = Recorder::new();
        rmcpp(&mut rec, Suite::S17);
        let raw: Vec<Vec<u8>> = rec.log.iter().map(|(_, d)| d.clone()).collect();
        let genuine = vec![2u8];
        let raws = |from: usize, n: usize| -> Vec<Vec<u8>> {
            raw.iter()
                .skip(from)
                .take(n)
                .map(|d| {
                    let mut c = vec![0u8];
                    c.extend_from_slice(d);
                    c
                })
                .collect()
        };
        for (stage, name) in [(0u8, "open-session"), (1, "rakp2"), (2, "rakp4")] {
            for suite in [0u8, 1] {
                let m = mode(|m| m & 1 == suite && (m >> 1) % 7 == stage);
                // status byte of the payload (datagram offset 17), then a truncation
                let mut chunks = vec![vec![1, 17, 0x0f], vec![1, 20, 0x01, 10]];
                chunks.extend(raws(4, 6));
                chunks.push(genuine.clone());
                chunks.push(genuine.clone());
                out.push((
                    format!("{name}-suite{}", if suite == 0 { 3 } else { 17 }),
                    input(m, &chunks),
                ));
            }
        }
        for suite in [0u8, 1] {
            let m = mode(|m| m & 1 == suite && (m >> 1) % 7 == 3);
            let mut chunks = fence_script(&[vec![2, 30, 0x01], vec![3], vec![3]]);
            chunks.extend(raws(10, 4));
            out.push((
                format!("active-suite{}", if suite == 0 { 3 } else { 17 }),
                input(m, &chunks),
            ));
        }
        for (auth, name) in [(0u8, "md5"), (1, "password"), (2, "none")] {
            for (stage, what) in [(4u8, "challenge"), (5, "activate"), (6, "active")] {
                let m = mode(|m| (m >> 1) % 7 == stage && (m >> 4) % 3 == auth);
                let chunks = if stage == 6 {
                    fence_script(&[vec![2, 20, 0x01], vec![3]])
                } else {
                    vec![vec![1, 21, 0x81], vec![1, 25, 0x01, 30], genuine.clone()]
                };
                out.push((format!("v15-{what}-{name}"), input(m, &chunks)));
            }
        }
        out
    }

    fn lab_ipmi_server() -> Seeds {
        let mut out = Seeds::new();
        let sessionless = vec![
            rq(1, netfn::APP, cmd::GET_CHANNEL_AUTH_CAPS, &[0x8e, 4]),
            rq(
                1,
                netfn::APP,
                cmd::GET_CHANNEL_CIPHER_SUITES,
                &[0x0e, 0, 0x80],
            ),
            rq(1, netfn::APP, cmd::GET_DEVICE_ID, &[]),
            rq(1, netfn::APP, cmd::GET_SYSTEM_GUID, &[]),
            rq(
                1,
                netfn::GROUP_EXT,
                cmd::DCMI_GET_POWER_READING,
                &codec::dcmi_power_reading_request(),
            ),
            rq(1, netfn::APP, cmd::GET_SESSION_CHALLENGE, &{
                let mut d = vec![2];
                d.extend_from_slice(b"admin\0\0\0\0\0\0\0\0\0\0\0");
                d
            }),
            rq(1, netfn::CHASSIS, cmd::GET_CHASSIS_STATUS, &[]),
        ];
        out.push(("sessionless".into(), input(0, &sessionless)));
        for (m, name) in [
            (1u8, "suite3"),
            (2, "suite17"),
            (3, "v15-md5"),
            (4, "v15-password"),
            (5, "v15-none"),
        ] {
            let script = fence_script(&[vec![2, 30, 0x01], vec![3]]);
            out.push((format!("{name}-fence"), input(m, &script)));
            // strict state, power off, stuck
            out.push((
                format!("{name}-faults"),
                input(m | 0x08 | 0x10, &fence_script(&[])),
            ));
        }
        // Whole recorded client sessions as raw datagrams: the lab's RNG is
        // seeded, so a fresh lab answers them exactly as recorded.
        for (run, name) in [
            (0, "raw-suite3"),
            (1, "raw-suite17"),
            (2, "raw-v15-md5"),
            (3, "raw-v15-none"),
        ] {
            let mut rec = Recorder::new();
            match run {
                0 => rmcpp(&mut rec, Suite::S3),
                1 => rmcpp(&mut rec, Suite::S17),
                2 => v15(&mut rec, AuthType::Md5),
                _ => v15(&mut rec, AuthType::None),
            }
            let chunks: Vec<Vec<u8>> = rec
                .log
                .iter()
                .filter(|(n, _)| n.ends_with("-rq"))
                .map(|(_, d)| {
                    let mut c = vec![0u8];
                    c.extend_from_slice(d);
                    c
                })
                .collect();
            out.push((name.into(), input(0, &chunks)));
        }
        // ASF ping, then the same as a replay and edited.
        out.push((
            "asf".into(),
            input(
                0,
                &[
                    vec![0, 6, 0, 0xff, 6, 0, 0, 0x11, 0xbe, 0x80, 0x21, 0, 0],
                    vec![3],
                    vec![2, 9, 0x01],
                ],
            ),
        ));
        let _ = codec::RMCP_VERSION;
        out
    }

    fn argv() -> Seeds {
        ARGV.iter()
            .map(|(n, words)| (n.to_string(), words.join("\0").into_bytes()))
            .collect()
    }

    const STDIN: &[(&str, &str)] = &[
        (
            "reference",
            "# c\n\n  action=status  \nipaddr=127.0.0.1\nlogin=admin\npasswd=secret\n\
             ipmitool_path=FAKE\nnodename=n1\nfoo=bar\nport=n1\n",
        ),
        (
            "options",
            "action=reboot\nip=10.0.0.1\nusername=\"admin\"\npassword=pw\nlanplus=1\n\
             privlvl=operator\ncipher=3\nhexadecimal_kg=0102\nipport=6230\nmethod=cycle\n\
             power_timeout=20\npower_wait=2\nstonith_status_sleep=1\nretry_on=3\n",
        ),
        (
            "lan15",
            "action=off\nipaddr=h\nlogin=u\npasswd=p\nlanplus=0\nauth=md5\ndelay=5\n\
             verbose=1\nverbose_level=3\nquiet=off\ndisable_timeout=true\n",
        ),
        (
            "alias-ilo3",
            "#!fence_ilo3\naction=status\nip=h\nusername=admin\npassword=x\n",
        ),
        (
            "alias-idrac",
            "#!fence_idrac\naction=monitor\nip=h\nusername=root\npassword=calvin\n",
        ),
        (
            "crlf-quotes",
            "ip=a\r\nip=\"b\"\r\naction='on'\r\nusername=\"\"\rpassword=a=b\n",
        ),
        (
            "port-as-ip",
            "action=status\nport=10.0.0.9\nport_as_ip=1\nusername=a\npassword=b\n",
        ),
        (
            "flags",
            "lanplus=YES\nquiet=off\nverbose=True\nlanplus=maybe\nlanplus\nsudo=1\n",
        ),
        (
            "redfish",
            "#!fence_redfish\naction=reboot\nip=10.0.0.1:8443\nusername=root\npassword=calvin\n\
             ssl_insecure=1\nsystems_uri=/redfish/v1/Systems/1\nredfish_uri=/redfish/v1\n\
             ssl_fingerprint=AB:CD\npower_timeout=30\n",
        ),
        (
            "virsh",
            "#!fence_virsh\naction=status\nip=hv1\nusername=root\nplug={0F0E0D0C-0B0A-0908-0706-050403020100}\n\
             ssh_options=-oStrictHostKeyChecking=accept-new -o UserKnownHostsFile=/tmp/k\n\
             inet4_only=1\nuse_sudo=1\nmissing_as_off=1\nplug_separator=;\n",
        ),
        (
            "hostile",
            "action=metadata\nipport=99999\npower_timeout=9223372036854775807\n\
             delay=-1\nverbose_level=-2\nretry_on=1_000\nhexadecimal_kg=0x\ncipher=0\n\
             target=0x20\nip=\n",
        ),
    ];

    const ARGV: &[(&str, &[&str])] = &[
        (
            "far-style",
            &[
                "--password=x",
                "--lanplus",
                "--ipport=6234",
                "--action=status",
                "--ip=127.0.0.1",
                "--username=admin",
            ],
        ),
        (
            "short",
            &[
                "-a", "h", "-l", "admin", "-p", "-dash", "-Pvo", "reboot", "-m", "cycle",
            ],
        ),
        (
            "prefixes",
            &[
                "--act=on",
                "--ip",
                "h",
                "--pass",
                "x",
                "--verbose-level=2",
                "--",
                "-v",
            ],
        ),
        (
            "argv0-ilo4",
            &[
                "fence_ilo4",
                "-o",
                "off",
                "-a",
                "h",
                "-l",
                "u",
                "-p",
                "p",
                "--delay=3",
            ],
        ),
        ("plug-without-port-as-ip", &["-n", "node1", "-a", "h"]),
        (
            "port-as-ip",
            &[
                "--port-as-ip",
                "-n",
                "10.0.0.1",
                "-l",
                "u",
                "-p",
                "p",
                "-o",
                "status",
            ],
        ),
        ("flag-with-value", &["--lanplus=1", "-o"]),
        (
            "kg-cipher",
            &[
                "-P",
                "-C",
                "17",
                "-L",
                "operator",
                "--hexadecimal-kg=0x0102",
                "-a",
                "h",
                "--power-timeout",
                "0",
            ],
        ),
        (
            "argv0-redfish",
            &[
                "fence_redfish",
                "-a",
                "[fe80::1]",
                "-u",
                "8443",
                "-l",
                "u",
                "-p",
                "p",
                "--systems-uri=/redfish/v1/Systems/1",
                "--ssl-insecure",
                "-o",
                "off",
            ],
        ),
        (
            "argv0-virsh",
            &[
                "fence_virsh",
                "-a",
                "hv",
                "-l",
                "root",
                "-n",
                "vm1",
                "-x",
                "--missing-as-off",
                "--ssh-options=-o StrictHostKeyChecking=no",
                "-o",
                "list-status",
            ],
        ),
        ("utf8", &["-é", "--ip=\u{1F600}", "stray", "-"]),
    ];

    const REDFISH: &[(&str, &str)] = &[
        (
            "root-links-sessions",
            r##"200 {"@odata.id": "/redfish/v1/", "Systems": {"@odata.id": "/redfish/v1/Systems"}, "Links": {"Sessions": {"@odata.id": "/redfish/v1/SessionService/Sessions"}}, "SessionService": {"@odata.id": "/redfish/v1/SessionService/"}}"##,
        ),
        (
            "members-many",
            r##"{"Members": [{"@odata.id": "/redfish/v1/Systems/System.Embedded.1"}, {"@odata.id": "https://10.0.0.1/redfish/v1/Systems/2/"}, {"x": 1}, 3], "Members@odata.count": 4}"##,
        ),
        (
            "system-idrac",
            r##"{"Id": "System.Embedded.1", "Name": "System", "UUID": "4c4c4544-0042-3510-8052-b8c04f4b4e32", "PowerState": "On", "Actions": {"#ComputerSystem.Reset": {"target": "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset", "ResetType@Redfish.AllowableValues": ["On", "ForceOff", "ForceRestart", "GracefulShutdown", "PushPowerButton", "Nmi"]}}}"##,
        ),
        (
            "system-actioninfo",
            r##"{"Id": "1", "PowerState": "PoweringOff", "Actions": {"#ComputerSystem.Reset": {"target": "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", "@Redfish.ActionInfo": "/redfish/v1/Systems/1/ResetActionInfo"}}}"##,
        ),
        (
            "actioninfo",
            r##"{"@odata.id": "/redfish/v1/Systems/1/ResetActionInfo", "Parameters": [{"Name": "ResetType", "Required": true, "DataType": "String", "AllowableValues": ["On", "ForceOff", "GracefulRestart", "GracefulShutdown", "forcerestart", "PowerCycle"]}]}"##,
        ),
        (
            "task-running",
            r##"202 {"@odata.id": "/redfish/v1/TaskService/Tasks/7", "TaskState": "Running", "TaskStatus": "OK"}"##,
        ),
        (
            "task-exception",
            r##"200 {"TaskState": "Exception", "TaskStatus": "Critical", "Messages": [{"Message": "power\u0007 fault", "MessageId": "Base.1.8.GeneralError"}]}"##,
        ),
        (
            "task-completed-critical",
            r##"200 {"TaskState": "Completed", "TaskStatus": "Critical"}"##,
        ),
        (
            "ilo-transition",
            r##"400 {"error": {"code": "iLO.0.10.ExtendedInfo", "message": "See @Message.ExtendedInfo for more information.", "@Message.ExtendedInfo": [{"MessageId": "iLO.2.14.InvalidOperationForSystemState", "Message": "Power transition in progress. Retry later."}]}}"##,
        ),
        (
            "ilo-not-ready",
            r##"400 {"error": {"@Message.ExtendedInfo": [{"MessageId": "Base.1.0.ResourceNotReadyRetry"}]}}"##,
        ),
        (
            "idrac-already-on",
            r##"409 {"error": {"@Message.ExtendedInfo": [{"Message": "Server is already powered ON.", "MessageId": "IDRAC.2.1.PSU501"}], "code": "Base.1.0.GeneralError", "message": "A general error has occurred. See ExtendedInfo for more information"}}"##,
        ),
        (
            "busy-html",
            "503 <html><body>Service Unavailable</body></html>",
        ),
        ("not-json", "500 the BMC is busy, try again\r\n\u{0}"),
        ("no-redfish", "404 "),
        (
            "odd-values",
            r##"{"PowerState": 1, "Actions": {"#ComputerSystem.Reset": {"target": "", "ResetType@Redfish.AllowableValues": []}}, "Members": {"a": 1}, "error": 3, "Parameters": "x"}"##,
        ),
        (
            "nested",
            r##"[{"PowerState": " off "}, {"PowerState": null}, [[[{"Id": "x", "Members": [{"@odata.id": "/x"}]}]]]]"##,
        ),
    ];

    const TARGETS: &[(&str, &str)] = &[
        ("ipmi-user-port", "tipmi://admin@127.0.0.1:6230"),
        ("ipmi-v6", "tipmi://[::1]:623/"),
        ("ipmi-password", "tipmi://a:b@h"),
        ("redfish-system", "rredfish://root@10.0.0.1:8443/redfish/v1/Systems/1"),
        ("redfish-idrac", "ridrac-redfish+http://[fe80::1]/redfish/v1"),
        ("redfish-manager", "rilo5-redfish://h/redfish/v1/Managers/1"),
        ("range-pad", "hnode[01-04,7,10-11].example"),
        ("range-two", "hrack[1-2]-node[001-003]"),
        ("duration-ms", "d500ms"),
        ("duration-min", "d1.5 min"),
        (
            "inventory",
            "i[defaults]\nusername = \"admin\"\npassword_file = \"/etc/fencekit/bmc.pw\"\nprobe_ports = [22]\n\n\
             [defaults.ipmi]\ncipher = 17\n\n[[node]]\nname = \"node[01-04]\"\naddress = \"10.0.1.[1-4]\"\n\
             probe_ports = [22, 10250]\n  [[node.fence]]\n  endpoint = \"ipmi://10.0.7.[1-4]\"\n\
             [[node]]\nname = \"db1\"\n[[node.fence]]\nendpoint = \"ipmi://admin@127.0.0.1:6230\"\n\
             [[node.fence]]\nip = \"10.0.0.2\"\nipmi_version = \"1.5\"\nauth = \"md5\"\npassword_env = \"PW\"\n",
        ),
        (
            "inventory-errors",
            "i[[node]]\nname = \"n1\"\n[[node.fence]]\nendpoint = \"ipmi://h\"\npassword = \"hunter2\"\n\
             [[node]]\nname = \"n1\"\n[[node.fence]]\ndriver = \"redfish\"\n",
        ),
        ("all-parsers", "ipmi://h[1-3]:6[23-24]"),
    ];
}

/// Seeds of the SNMP targets: real exchanges between the client session
/// and the lab PDU agent (v1, v2c, v3 discovery and authPriv).
mod snmp {
    use super::common::{join, SEP};
    use fencekit::lab::pdu::{LabPduState, PduAgent, PduSpec};
    use fencekit::secret::Secret;
    use fencekit::snmp::ber::Oid;
    use fencekit::snmp::message::{PduKind, Version};
    use fencekit::snmp::session::{get_pdu, Reply, SecLevel, Security, Session, UsmUser};
    use fencekit::snmp::usm::{AuthProtocol, PrivProtocol};
    use std::time::Instant;

    type Seeds = Vec<(String, Vec<u8>)>;

    fn exchange(
        agent: &mut PduAgent,
        sec: Security,
        kind: PduKind,
    ) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let now = Instant::now();
        let mut s = Session::new(sec).expect("session");
        let (mut requests, mut replies) = (Vec::new(), Vec::new());
        if s.needs_discovery() {
            let d = s.discovery();
            let r = agent.handle(&d.bytes).expect("discovery answer");
            assert_eq!(
                s.accept(&r, std::slice::from_ref(&d), now),
                Ok(Some(Reply::Resend))
            );
            requests.push(d.bytes);
            replies.push(r);
        }
        let rid = s.new_request_id();
        let mut pdu = get_pdu(
            rid,
            &[Oid(vec![1, 3, 6, 1, 4, 1, 318, 1, 1, 12, 3, 5, 1, 1, 4, 1])],
        );
        pdu.kind = kind;
        let o = s.request(&pdu, now).expect("request");
        let r = agent.handle(&o.bytes).expect("answer");
        assert!(matches!(
            s.accept(&r, std::slice::from_ref(&o), now),
            Ok(Some(Reply::Response(_)))
        ));
        requests.push(o.bytes);
        replies.push(r);
        (requests, replies)
    }

    pub fn write_all(write: fn(&str, Seeds)) {
        let mut agent = PduAgent::new(LabPduState::new(4), PduSpec::lab(4, "fuzzpass1"), 7);
        let cases = [
            (
                "v1-get",
                Security::Community {
                    version: Version::V1,
                    community: Secret::from_str_value("private"),
                },
                PduKind::Get,
            ),
            (
                "v2c-getnext",
                Security::Community {
                    version: Version::V2c,
                    community: Secret::from_str_value("private"),
                },
                PduKind::GetNext,
            ),
            (
                "v3-authpriv-get",
                Security::Usm(UsmUser {
                    name: "fence".into(),
                    level: SecLevel::AuthPriv,
                    auth: Some((AuthProtocol::Sha256, Secret::from_str_value("fuzzpass1"))),
                    privacy: Some((PrivProtocol::Aes128, Secret::from_str_value("fuzzpass1"))),
                }),
                PduKind::Get,
            ),
        ];
        let (mut codec, mut session, mut server) = (Seeds::new(), Seeds::new(), Seeds::new());
        for (name, sec, kind) in cases {
            let (requests, replies) = exchange(&mut agent, sec, kind);
            for (i, d) in requests.iter().chain(&replies).enumerate() {
                codec.push((format!("{name}-{i}"), d.clone()));
            }
            session.push((name.to_string(), join(&replies)));
            server.push((name.to_string(), join(&requests)));
        }
        let _ = SEP;
        write("snmp_codec", codec);
        write("snmp_session", session);
        write("lab_pdu_agent", server);
    }
}
