//! Connections opened ahead of their request ([`Client::preopen`]): over
//! real TLS on loopback, direct and through a `CONNECT` proxy.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::AsyncRead;

/// What a TLS test server saw.
#[derive(Default)]
struct Seen {
    /// Connections whose handshake completed.
    handshakes: AtomicUsize,
    /// Request heads, in order.
    requests: Mutex<Vec<String>>,
}

/// A TLS server on 127.0.0.1 for `localhost` and `api.example.invalid`
/// that answers each request `200 OK` with its connection kept; the
/// connections numbered in `close_after_handshake` are closed right after
/// their handshake. Its address, the PEM file of its certificate, what it
/// saw.
async fn tls_server(
    close_after_handshake: &'static [usize],
) -> (std::net::SocketAddr, tempfile::NamedTempFile, Arc<Seen>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let params =
        rcgen::CertificateParams::new(vec!["localhost".into(), "api.example.invalid".into()])
            .unwrap();
    let cert = params.self_signed(&key).unwrap();
    let mut pem = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut pem, cert.pem().as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let log = seen.clone();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((s, _)) = l.accept().await {
            n += 1;
            let (acceptor, log) = (acceptor.clone(), log.clone());
            tokio::spawn(async move {
                let Ok(mut s) = acceptor.accept(s).await else {
                    return;
                };
                log.handshakes.fetch_add(1, Ordering::SeqCst);
                if close_after_handshake.contains(&n) {
                    let _ = s.shutdown().await;
                    return;
                }
                while let Some(head) = read_head(&mut s).await {
                    log.requests.lock().unwrap().push(head);
                    let body = "opened";
                    let a = format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if s.write_all(a.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, pem, seen)
}

/// One request head (no body), or `None` at the end of the stream.
async fn read_head(s: &mut (impl AsyncRead + Unpin)) -> Option<String> {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).await.ok()? == 0 {
            return None;
        }
        buf.push(b[0]);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// An HTTP proxy that tunnels every `CONNECT` to `to`; the CONNECT lines
/// it saw.
async fn connect_proxy(to: std::net::SocketAddr) -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let Some(head) = read_head(&mut s).await else {
                    return;
                };
                let line = head.lines().next().unwrap_or("").to_string();
                log.lock().unwrap().push(line);
                let Ok(mut up) = tokio::net::TcpStream::connect(to).await else {
                    return;
                };
                let ok = b"HTTP/1.1 200 Connection established\r\n\r\n";
                if s.write_all(ok).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut s, &mut up).await;
                }
            });
        }
    });
    (format!("http://{addr}"), seen)
}

fn verified(pem: &tempfile::NamedTempFile, proxy: Proxy) -> Client {
    Client::new(Setup {
        trust: Some(TlsTrust::Verify {
            ca_cert: Some(pem.path().to_path_buf()),
        }),
        proxy,
        ..Setup::new("the cloud API")
    })
    .unwrap()
}

/// Waits until the server has made `n` handshakes.
async fn handshakes(seen: &Seen, n: usize) {
    let t = Instant::now();
    while seen.handshakes.load(Ordering::SeqCst) < n {
        assert!(t.elapsed() < Duration::from_secs(5), "never opened");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn the_tunnel_and_handshake_are_made_before_the_request_and_carry_the_ones_after() {
    let (addr, pem, seen) = tls_server(&[]).await;
    let (proxy, connects) = connect_proxy(addr).await;
    let mut c = verified(&pem, Proxy::Url(proxy));
    let url = "https://api.example.invalid/v1/instances/i-1?version=2024-11-12";
    c.preopen(url, Duration::from_secs(5));
    // Opened, and no request sent yet.
    handshakes(&seen, 1).await;
    assert!(seen.requests.lock().unwrap().is_empty());
    assert_eq!(
        *connects.lock().unwrap(),
        ["CONNECT api.example.invalid:443 HTTP/1.1"]
    );
    for _ in 0..2 {
        let r = c.send(&get(url, Duration::from_secs(5))).await.unwrap();
        assert_eq!((r.status, &r.body[..]), (200, &b"opened"[..]));
    }
    // Both requests on that one connection, in origin form, for the host.
    assert_eq!(seen.handshakes.load(Ordering::SeqCst), 1);
    assert_eq!(connects.lock().unwrap().len(), 1);
    let requests = seen.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    for h in &requests {
        assert!(
            h.starts_with("GET /v1/instances/i-1?version=2024-11-12 HTTP/1.1\r\n"),
            "{h}"
        );
        let lower = h.to_ascii_lowercase();
        assert!(lower.contains("\r\nhost: api.example.invalid\r\n"), "{h}");
        assert!(lower.contains("\r\nuser-agent: fencekit/"), "{h}");
    }
    assert_eq!(c.requests, 2);
}

#[tokio::test]
async fn a_connection_closed_before_its_request_leaves_it_to_the_usual_way_sent_once() {
    // The server closes the connection opened ahead after its handshake:
    // the request goes on a new one, once.
    let (addr, pem, seen) = tls_server(&[1]).await;
    let mut c = verified(&pem, Proxy::None);
    let url = format!("https://localhost:{}/x", addr.port());
    c.preopen(&url, Duration::from_secs(5));
    handshakes(&seen, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = c.send(&get(&url, Duration::from_secs(5))).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(seen.requests.lock().unwrap().len(), 1);
    assert_eq!(seen.handshakes.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_connection_that_cannot_be_opened_ahead_is_no_failure_of_its_own() {
    // Nothing listens: the request's own failure is the one said, and
    // nothing was delivered.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let (_, pem, _) = tls_server(&[]).await;
    let mut c = verified(&pem, Proxy::None);
    let url = format!("https://localhost:{port}/x");
    c.preopen(&url, Duration::from_secs(5));
    let f = c
        .send(&get(&url, Duration::from_secs(2)))
        .await
        .unwrap_err();
    assert!(matches!(f, Failed::Connect(_)), "{f:?}");
    assert!(!f.maybe_delivered());
    assert!(f.error().message.contains("connection refused"), "{f:?}");
}
