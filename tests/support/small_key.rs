//! An HTTPS server whose certificate has a 1024-bit RSA key (issue 42 §3:
//! old ESXi and vCenter, Go's own test servers): `openssl s_server` on
//! loopback, its key and certificate made at test time, stopped on drop.
//! Only the handshake matters: fencekit must refuse it naming the key
//! size, never advising the `--ssl-insecure` it was given.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The running server.
pub struct SmallKeyServer {
    /// Its loopback port.
    pub port: u16,
    child: Child,
    dir: PathBuf,
}

/// What fencekit must say about such a server.
pub const CAUSE: &str = "the server's 1024-bit RSA key is below what fencekit's TLS accepts";

impl SmallKeyServer {
    /// Starts one; `None` (a printed skip, a failure under
    /// `FENCEKIT_REQUIRE_PEERS=1`) without openssl.
    pub fn start() -> Option<SmallKeyServer> {
        if !super::peer_available("openssl") {
            return None;
        }
        let port = super::free_port();
        let dir = std::env::temp_dir().join(format!("fk-smallkey-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let made = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-days", "2",
            ])
            .args(["-subj", "/CN=127.0.0.1", "-keyout"])
            .arg(dir.join("key.pem"))
            .arg("-out")
            .arg(dir.join("cert.pem"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl req");
        assert!(
            made.success(),
            "openssl could not make a 1024-bit RSA certificate"
        );
        // Security level 0: OpenSSL itself would refuse to serve a 1024-bit key.
        let child = Command::new("openssl")
            .args([
                "s_server",
                "-quiet",
                "-www",
                "-cipher",
                "DEFAULT:@SECLEVEL=0",
            ])
            .arg("-accept")
            .arg(format!("127.0.0.1:{port}"))
            .arg("-key")
            .arg(dir.join("key.pem"))
            .arg("-cert")
            .arg(dir.join("cert.pem"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openssl s_server");
        let s = SmallKeyServer { port, child, dir };
        let until = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < until, "openssl s_server did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(s)
    }

    /// Its certificate (PEM).
    pub fn cert(&self) -> PathBuf {
        self.dir.join("cert.pem")
    }

    /// Asserts that a run refused the server naming the key size and
    /// advised no trust flag.
    #[track_caller]
    pub fn assert_refused(r: &super::Run) {
        assert_ne!(r.code, Some(0), "{r}");
        let text = r.text();
        assert!(text.contains(&CAUSE.to_lowercase()), "{r}");
        assert!(!text.contains("skip the check with"), "{r}");
        assert!(!text.contains("not trusted"), "{r}");
    }
}

impl Drop for SmallKeyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
