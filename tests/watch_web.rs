//! `check --watch --listen … --web-config FILE` through the real binary:
//! `/metrics` over TLS with a basic-auth user whose bcrypt hash htpasswd
//! made (an independent implementation), read by curl and by a rustls
//! client; refused (401, promptly) without credentials, with a wrong
//! password or an unknown user; a client-certificate-required endpoint
//! refusing a client without a certificate and one from another CA; bad
//! files refused at start (exit 64) with the key named; the file reloaded
//! when it changes; no password in the log.

mod support;

use fencekit::lab::fleet::LabSpec;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{bin, free_port, own_loopback, InProcessLab};

const PASSWORD: &str = "scrape-me-7Qx";

/// A running watch of one lab node, killed (by PID) on drop.
struct Watch {
    child: Child,
    stderr: PathBuf,
    listen: SocketAddr,
    dir: tempfile::TempDir,
    _lab: InProcessLab,
}

fn watch_command(dir: &Path, listen: SocketAddr, web: &Path, lab: &InProcessLab) -> Command {
    let pw = dir.join("bmc-password");
    std::fs::write(&pw, "lab").unwrap();
    let inv = dir.join("inv.toml");
    std::fs::write(
        &inv,
        format!(
            "[defaults]\nusername = \"admin\"\npassword_file = \"{}\"\n\n[[node]]\nname = \"node01\"\n  [[node.fence]]\n  endpoint = \"ipmi://{}\"\n",
            pw.display(),
            lab.nodes[0].ipmi
        ),
    )
    .unwrap();
    let mut c = Command::new(bin());
    c.args(["check", "-vvv", "--all", "-i"])
        .arg(&inv)
        .args(["--watch", "200ms", "--listen", &listen.to_string()])
        .args(["--login-timeout", "2s", "--bmc-interval", "10ms"])
        .arg("--web-config")
        .arg(web)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HOME", dir)
        .env("RUST_LOG", "trace")
        .env_remove("FENCEKIT_PASSWORD")
        .env_remove("FENCEKIT_INVENTORY")
        .env_remove("FENCEKIT_BASELINE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0);
    c
}

fn lab() -> InProcessLab {
    InProcessLab::start(LabSpec {
        nodes: 1,
        redfish: None,
        ..LabSpec::default()
    })
}

impl Watch {
    /// Starts the watch with `web` (a web configuration) written in its
    /// directory as web.yml; `files` are written there first.
    fn start(ip: IpAddr, web: &str, files: &[(&str, &str)]) -> Watch {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let key = dir.path().join("server.key");
        if key.exists() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let path = dir.path().join("web.yml");
        std::fs::write(&path, web).unwrap();
        let lab = lab();
        let listen = SocketAddr::new(ip, free_port());
        let stderr = dir.path().join("stderr");
        let child = watch_command(dir.path(), listen, &path, &lab)
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("start fencekit check --watch");
        let w = Watch {
            child,
            stderr,
            listen,
            dir,
            _lab: lab,
        };
        assert!(
            support::eventually(Duration::from_secs(15), || w
                .log()
                .contains("every node checked once")),
            "the watch did not start\n{}",
            w.log()
        );
        w
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            support::kill_group(self.child.id(), "KILL");
            let _ = self.child.wait();
        }
    }
}

/// A test PKI: a CA, a server certificate for the watch's address, a
/// client certificate from the CA and one from another CA.
struct Pki {
    ca: String,
    server_cert: String,
    server_key: String,
    client_cert: String,
    client_key: String,
    stranger_cert: String,
    stranger_key: String,
}

fn ca(name: &str) -> (rcgen::Certificate, rcgen::KeyPair) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    p.distinguished_name
        .push(rcgen::DnType::CommonName, name.to_string());
    p.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    (p.self_signed(&key).unwrap(), key)
}

fn leaf(
    names: Vec<String>,
    usage: rcgen::ExtendedKeyUsagePurpose,
    ca: &(rcgen::Certificate, rcgen::KeyPair),
) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(names.clone()).unwrap();
    p.distinguished_name
        .push(rcgen::DnType::CommonName, names[0].clone());
    p.extended_key_usages = vec![usage];
    let cert = p.signed_by(&key, &ca.0, &ca.1).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Pki {
    fn new(ip: IpAddr) -> Pki {
        let ours = ca("fencekit test CA");
        let theirs = ca("someone else's CA");
        let (server_cert, server_key) = leaf(
            vec![ip.to_string()],
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
            &ours,
        );
        let (client_cert, client_key) = leaf(
            vec!["prometheus".into()],
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
            &ours,
        );
        let (stranger_cert, stranger_key) = leaf(
            vec!["prometheus".into()],
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
            &theirs,
        );
        Pki {
            ca: ours.0.pem(),
            server_cert,
            server_key,
            client_cert,
            client_key,
            stranger_cert,
            stranger_key,
        }
    }

    fn files(&self) -> Vec<(&str, &str)> {
        vec![
            ("ca.pem", self.ca.as_str()),
            ("server.pem", self.server_cert.as_str()),
            ("server.key", self.server_key.as_str()),
            ("client.pem", self.client_cert.as_str()),
            ("client.key", self.client_key.as_str()),
            ("stranger.pem", self.stranger_cert.as_str()),
            ("stranger.key", self.stranger_key.as_str()),
        ]
    }
}

/// `htpasswd -nbB -C COST USER PASSWORD`'s hash.
fn htpasswd(user: &str, password: &str, cost: u32) -> String {
    let mut c = Command::new("htpasswd");
    c.args(["-nbB", "-C", &cost.to_string(), user, password]);
    let r = support::run(c, Duration::from_secs(60));
    r.assert_code(0);
    let line = r.stdout.trim();
    let hash = line.strip_prefix(&format!("{user}:")).unwrap().to_string();
    assert!(hash.starts_with("$2y$"), "{line}");
    hash
}

/// What one request got: the status (None: no HTTP answer), head, body.
#[derive(Debug)]
struct Got {
    status: Option<u16>,
    head: String,
    body: String,
    /// The client's error, if any (a refused handshake).
    error: Option<String>,
}

fn parse(out: &str) -> Got {
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((out, ""));
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok());
    Got {
        status,
        head: head.to_string(),
        body: body.to_string(),
        error: None,
    }
}

fn request(path: &str, addr: SocketAddr, auth: Option<(&str, &str)>) -> String {
    use base64::Engine as _;
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n");
    if let Some((u, p)) = auth {
        let b = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
        req.push_str(&format!("Authorization: Basic {b}\r\n"));
    }
    req.push_str("\r\n");
    req
}

/// One request over TLS with rustls (trusting `ca`, presenting `client`).
fn https(
    addr: SocketAddr,
    path: &str,
    ca: &str,
    client: Option<(&str, &str)>,
    auth: Option<(&str, &str)>,
) -> Got {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let b = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots);
    let config = match client {
        None => b.with_no_client_auth(),
        Some((cert, key)) => b
            .with_client_auth_cert(
                CertificateDer::pem_slice_iter(cert.as_bytes())
                    .map(|c| c.unwrap())
                    .collect(),
                PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
            )
            .unwrap(),
    };
    let conn =
        rustls::ClientConnection::new(Arc::new(config), ServerName::from(addr.ip())).unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut out = Vec::new();
    let got = tls
        .write_all(request(path, addr, auth).as_bytes())
        .and_then(|_| tls.read_to_end(&mut out));
    Got {
        error: got.err().map(|e| e.to_string()),
        ..parse(&String::from_utf8_lossy(&out))
    }
}

/// One request over plain HTTP.
fn http(addr: SocketAddr, path: &str, auth: Option<(&str, &str)>) -> Got {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    s.write_all(request(path, addr, auth).as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    parse(&String::from_utf8_lossy(&out))
}

/// curl over HTTPS, credentials from a config file (not argv).
fn curl(w: &Watch, path: &str, args: &[&str], user: Option<(&str, &str)>) -> support::Run {
    let mut c = Command::new("curl");
    c.args([
        "-sS",
        "--max-time",
        "15",
        "-o",
        "-",
        "-w",
        "\nstatus=%{http_code}\n",
    ])
    .arg("--cacert")
    .arg(w.path("ca.pem"))
    .args(args);
    if let Some((u, p)) = user {
        let cfg = w.path("curl.cfg");
        std::fs::write(&cfg, format!("user = \"{u}:{p}\"\n")).unwrap();
        c.arg("-K").arg(cfg);
    }
    c.arg(format!("https://{}{path}", w.listen));
    support::run(c, Duration::from_secs(30))
}

fn tls_config(users: &str, extra_tls: &str) -> String {
    format!(
        "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n{extra_tls}\
         http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n{users}"
    )
}

#[test]
fn metrics_over_tls_with_basic_auth_and_refusals() {
    require!("htpasswd", "curl");
    let ip = own_loopback().into();
    let pki = Pki::new(ip);
    let hash = htpasswd("alice", PASSWORD, 10);
    let users = format!("basic_auth_users:\n  alice: '{hash}'\n");
    let w = Watch::start(ip, &tls_config(&users, ""), &pki.files());
    assert!(
        w.log()
            .contains(&format!("on https://{} (TLS, basic auth)", w.listen)),
        "{}",
        w.log()
    );
    // The key is the owner's only; the file naming it may be read by all.
    assert!(!w.log().contains("warning:"), "{}", w.log());
    let ok = Some(("alice", PASSWORD));

    // The right password: the metrics (timed: the first one verifies the
    // bcrypt hash, the next ones are remembered).
    let t0 = Instant::now();
    let got = https(w.listen, "/metrics", &pki.ca, None, ok);
    let first = t0.elapsed();
    assert_eq!(got.status, Some(200), "{got:?}\n{}", w.log());
    assert!(
        got.body
            .contains("fencekit_level_ok{node=\"node01\",level=\"1\",method=\"ipmi\"} 1"),
        "{got:?}"
    );
    assert!(
        got.head.contains("X-Content-Type-Options: nosniff"),
        "{got:?}"
    );
    let t0 = Instant::now();
    assert_eq!(
        https(w.listen, "/metrics", &pki.ca, None, ok).status,
        Some(200)
    );
    let again = t0.elapsed();
    eprintln!("first authenticated scrape {first:?}, the next {again:?}");

    // curl, an independent client, with the password and without.
    let r = curl(&w, "/metrics", &[], ok);
    r.assert_code(0);
    assert!(r.stdout.contains("status=200"), "{r}");
    assert!(
        r.stdout.contains("fencekit_node_ok{node=\"node01\"} 1"),
        "{r}"
    );
    let r = curl(&w, "/metrics", &["-i"], None);
    assert!(r.stdout.contains("status=401"), "{r}");
    assert!(r.stdout.contains("WWW-Authenticate: Basic"), "{r}");

    // No credentials, a wrong password, an unknown user: 401, promptly.
    for auth in [
        None,
        Some(("alice", "scrape-me-7Qy")),
        Some(("alice", "")),
        Some(("mallory", PASSWORD)),
    ] {
        let t0 = Instant::now();
        let got = https(w.listen, "/metrics", &pki.ca, None, auth);
        let took = t0.elapsed();
        assert_eq!(got.status, Some(401), "{auth:?}: {got:?}");
        assert!(
            got.head.contains("WWW-Authenticate: Basic"),
            "{auth:?}: {got:?}"
        );
        assert!(!got.body.contains("fencekit_"), "{got:?}");
        assert!(took < Duration::from_secs(4), "{auth:?}: {took:?}");
        eprintln!("refused {:?} in {took:?}", auth.map(|a| a.0));
    }

    // /healthz for a probe without a password: the status and one word.
    let got = https(w.listen, "/healthz", &pki.ca, None, None);
    assert_eq!((got.status, got.body.as_str()), (Some(200), "ok\n"));
    // Plain HTTP to the TLS port gets no HTTP answer.
    let got = http(w.listen, "/metrics", ok);
    assert_eq!(got.status, None, "{got:?}");

    // Not one password in the log (at -vvv, RUST_LOG=trace).
    let log = w.log();
    assert!(
        !log.contains(PASSWORD) && !log.contains("scrape-me"),
        "{log}"
    );
    assert!(!log.contains(&pki.server_key), "{log}");
}

#[test]
fn a_client_certificate_is_required_when_asked() {
    require!("curl");
    let ip = own_loopback().into();
    let pki = Pki::new(ip);
    let w = Watch::start(
        ip,
        &tls_config(
            "",
            "  client_ca_file: ca.pem\n  client_auth_type: RequireAndVerifyClientCert\n",
        ),
        &pki.files(),
    );
    assert!(
        w.log().contains("(TLS, client certificate required)"),
        "{}",
        w.log()
    );
    let client = Some((pki.client_cert.as_str(), pki.client_key.as_str()));
    let got = https(w.listen, "/metrics", &pki.ca, client, None);
    assert_eq!(got.status, Some(200), "{got:?}");
    assert!(got.body.contains("fencekit_node_ok"), "{got:?}");
    // Without a certificate, or with one from another CA: no answer.
    let got = https(w.listen, "/metrics", &pki.ca, None, None);
    assert_eq!(got.status, None, "{got:?}");
    let why = got.error.unwrap_or_default();
    assert!(why.contains("CertificateRequired"), "{why}");
    let stranger = Some((pki.stranger_cert.as_str(), pki.stranger_key.as_str()));
    let got = https(w.listen, "/metrics", &pki.ca, stranger, None);
    assert_eq!(got.status, None, "{got:?}");
    assert!(got.error.is_some(), "{got:?}");
    // curl likewise.
    let r = curl(&w, "/metrics", &[], None);
    assert_ne!(r.code, Some(0), "{r}");
    assert!(!r.stdout.contains("fencekit_"), "{r}");
    let (cert, key) = (w.path("client.pem"), w.path("client.key"));
    let r = curl(
        &w,
        "/metrics",
        &[
            "--cert",
            cert.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ],
        None,
    );
    r.assert_code(0);
    assert!(r.stdout.contains("status=200"), "{r}");
}

#[test]
fn basic_auth_over_plain_http_is_warned_about_and_a_changed_file_is_reloaded() {
    // Hashed here with the crate (htpasswd's are tested above).
    let hash = bcrypt::hash(PASSWORD, 4).unwrap();
    let w = Watch::start(
        own_loopback().into(),
        &format!("basic_auth_users:\n  alice: '{hash}'\n"),
        &[],
    );
    let log = w.log();
    assert!(
        log.contains("warning:") && log.contains("clear text"),
        "{log}"
    );
    assert_eq!(
        http(w.listen, "/metrics", Some(("alice", PASSWORD))).status,
        Some(200)
    );
    assert_eq!(http(w.listen, "/metrics", None).status, Some(401));

    // Another user: served within seconds, alice no longer.
    let hash = bcrypt::hash("bobs-password", 4).unwrap();
    std::fs::write(
        w.path("web.yml"),
        format!("basic_auth_users:\n  bob: '{hash}'\n"),
    )
    .unwrap();
    assert!(
        support::eventually(Duration::from_secs(10), || http(
            w.listen,
            "/metrics",
            Some(("bob", "bobs-password"))
        )
        .status
            == Some(200)),
        "{}",
        w.log()
    );
    assert_eq!(
        http(w.listen, "/metrics", Some(("alice", PASSWORD))).status,
        Some(401)
    );
    // A broken file: said once, the previous configuration kept.
    std::fs::write(w.path("web.yml"), "basic_auth_users:\n  bob: nonsense\n").unwrap();
    assert!(
        support::eventually(Duration::from_secs(10), || {
            let _ = http(w.listen, "/healthz", None);
            w.log().contains("is kept until this is mended")
        }),
        "{}",
        w.log()
    );
    assert_eq!(
        http(w.listen, "/metrics", Some(("bob", "bobs-password"))).status,
        Some(200)
    );
    let log = w.log();
    assert_eq!(
        log.matches("is kept until this is mended").count(),
        1,
        "{log}"
    );
    assert!(
        !log.contains(PASSWORD) && !log.contains("bobs-password"),
        "{log}"
    );
}

#[test]
fn a_bad_web_config_is_refused_at_start_with_the_key_named() {
    let lab = lab();
    let pki = Pki::new(own_loopback().into());
    let cost13 = format!("$2y$13${}", ".".repeat(53));
    let cases: &[(&str, String)] = &[
        (
            "kye_file",
            "tls_server_config:\n  cert_file: server.pem\n  kye_file: server.key\n".into(),
        ),
        ("basic_auth_user", "basic_auth_user:\n  alice: x\n".into()),
        (
            "tls_server_config.client_auth_type: RequireAnyClientCert",
            tls_config("", "  client_auth_type: RequireAnyClientCert\n"),
        ),
        (
            "tls_server_config.client_auth_type: RequireAndVerifyClientCert needs client_ca_file",
            tls_config("", "  client_auth_type: RequireAndVerifyClientCert\n"),
        ),
        (
            "tls_server_config.client_allowed_sans",
            tls_config(
                "",
                "  client_ca_file: ca.pem\n  client_auth_type: RequireAndVerifyClientCert\n  client_allowed_sans: [prometheus]\n",
            ),
        ),
        (
            "tls_server_config.cipher_suites: \"TLS_RSA_WITH_AES_128_CBC_SHA\"",
            tls_config("", "  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n"),
        ),
        (
            "tls_server_config.max_version",
            tls_config("", "  max_version: TLS11\n"),
        ),
        (
            "basic_auth_users.alice: bcrypt cost 13",
            format!("basic_auth_users:\n  alice: '{cost13}'\n"),
        ),
        (
            "http_server_config.headers.Server",
            "http_server_config:\n  headers:\n    Server: fencekit\n".into(),
        ),
        (
            "tls_server_config.key_file: the key does not go with the certificate",
            "tls_server_config:\n  cert_file: server.pem\n  key_file: client.key\n".into(),
        ),
    ];
    for (named, text) in cases {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in pki.files() {
            std::fs::write(dir.path().join(name), content).unwrap();
        }
        let web = dir.path().join("web.yml");
        std::fs::write(&web, text).unwrap();
        let listen = SocketAddr::new(own_loopback().into(), free_port());
        let mut c = watch_command(dir.path(), listen, &web, &lab);
        c.stderr(Stdio::piped());
        let r = support::run(c, Duration::from_secs(30));
        assert_eq!(r.code, Some(64), "{named}: {r}");
        assert!(r.stderr.contains(named), "{named}: {r}");
        assert!(TcpStream::connect(listen).is_err(), "{named}: it listens");
    }
}

#[test]
fn readable_keys_and_old_versions_are_warned_about_and_accepted_options_load() {
    use fencekit::cli::check::webconfig::WebConfig;
    use std::os::unix::fs::PermissionsExt;
    let pki = Pki::new(own_loopback().into());
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in pki.files() {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    let key = dir.path().join("server.key");
    let load = |text: &str| {
        let f = dir.path().join("web.yml");
        std::fs::write(&f, text).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        WebConfig::load(&f).unwrap_or_else(|e| panic!("{text}: {e}"))
    };
    // A key file every user may read: warned about; the owner's only: not.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let c = load(&tls_config("", ""));
    assert!(
        c.warnings.iter().any(|w| w.contains("server.key")),
        "{:?}",
        c.warnings
    );
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(load(&tls_config("", "")).warnings.is_empty());
    // The key written in a file every user may read.
    let inline: String = pki
        .server_key
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect();
    let c = load(&format!(
        "tls_server_config:\n  cert_file: server.pem\n  key: |\n{inline}"
    ));
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("written in this file")),
        "{:?}",
        c.warnings
    );
    // Options carried out: verified when given, versions, suites, curves,
    // a rate limit.
    let c = load(&tls_config(
        "rate_limit:\n  interval: 1s\n  burst: 5\n",
        "  client_ca_file: ca.pem\n  client_auth_type: VerifyClientCertIfGiven\n  min_version: TLS10\n  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]\n  prefer_server_cipher_suites: false\n  curve_preferences: [X25519, CurveP256]\n",
    ));
    assert_eq!(c.client_certs, Some(false));
    assert_eq!(c.rate, Some((Duration::from_secs(1), 5)));
    assert!(
        c.warnings.iter().any(|w| w.contains("TLS 1.2 is served")),
        "{:?}",
        c.warnings
    );
    let tls = c.tls.unwrap();
    assert!(!tls.ignore_client_order);
    assert_eq!(
        tls.crypto_provider()
            .cipher_suites
            .iter()
            .filter(|s| s.tls13().is_none())
            .map(|s| s.suite())
            .collect::<Vec<_>>(),
        [rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]
    );
}
