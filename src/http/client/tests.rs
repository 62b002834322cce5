//! The request loop against scripted servers on loopback: what each way
//! of not answering becomes, the caps, throttling, the proxy, the scrub.

use super::*;
use crate::http::patience::Patience;
use base64::Engine as _;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What a scripted server does with each connection: the request it read
/// (head and body as text) → the bytes to answer (`None`: keep silent).
type Script = Arc<dyn Fn(usize, &str) -> Option<Vec<u8>> + Send + Sync>;

/// A server on 127.0.0.1 that reads one request per connection and
/// answers as the script says; the requests it saw.
async fn server(script: Script) -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut n = 0;
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            n += 1;
            let script = script.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Ok(k) = s.read(&mut chunk).await else {
                        return;
                    };
                    if k == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..k]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let req = String::from_utf8_lossy(&buf).to_string();
                log.lock().unwrap().push(req.clone());
                match script(n, &req) {
                    Some(answer) => {
                        let _ = s.write_all(&answer).await;
                        let _ = s.shutdown().await;
                    }
                    None => tokio::time::sleep(Duration::from_secs(30)).await,
                }
            });
        }
    });
    (format!("http://{addr}"), seen)
}

fn answer(status: &str, headers: &[&str], body: &str) -> Vec<u8> {
    let mut s = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for h in headers {
        s.push_str(h);
        s.push_str("\r\n");
    }
    s.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    s.into_bytes()
}

fn plain() -> Client {
    Client::new(Setup {
        trust: None,
        ..Setup::new("the test server")
    })
    .unwrap()
}

fn get<'a>(url: &'a str, limit: Duration) -> Request<'a> {
    Request::new(Method::GET, url, "GET /thing", Stage::Status).within(limit, None)
}

#[tokio::test]
async fn an_answer_with_its_headers() {
    let (base, seen) = server(Arc::new(|_, _| {
        Some(answer(
            "200 OK",
            &["x-ms-request-id: r1", "retry-after: 3"],
            "{\"a\":1}",
        ))
    }))
    .await;
    let mut c = plain();
    let url = format!("{base}/thing");
    let r = c
        .send(
            &get(&url, Duration::from_secs(5)).header(reqwest::header::ACCEPT, "application/json"),
        )
        .await
        .unwrap();
    assert!(r.ok());
    assert_eq!(r.body, b"{\"a\":1}");
    assert_eq!(r.header("x-ms-request-id"), Some("r1"));
    assert_eq!(r.retry_after(), Some(Duration::from_secs(3)));
    assert_eq!(c.requests, 1);
    let req = seen.lock().unwrap()[0].clone();
    assert!(req.starts_with("GET /thing HTTP/1.1\r\n"), "{req}");
    assert!(
        req.to_ascii_lowercase().contains("user-agent: fencekit/"),
        "{req}"
    );
}

#[tokio::test]
async fn a_reason_phrase_of_the_servers_own_is_kept_and_scrubbed() {
    let (base, seen) = server(Arc::new(|n, _| {
        Some(match n {
            1 => answer(
                "500 VM 100 is locked (backup) s3cret",
                &[],
                "{\"data\":null}",
            ),
            _ => answer("404 Not Found", &[], ""),
        })
    }))
    .await;
    let mut c = plain();
    c.scrub().remember(b"s3cret");
    let url = format!("{base}/thing");
    let form = [("username", "root@pam"), ("password", "a b&c=d")];
    let req = Request::new(Method::POST, &url, "POST /thing", Stage::Command)
        .form(&form)
        .within(Duration::from_secs(5), None);
    let r = c.send(&req).await.unwrap();
    assert_eq!(r.status, 500);
    let reason = r.reason(200).unwrap();
    assert!(reason.starts_with("VM 100 is locked (backup)"), "{reason}");
    assert!(!reason.contains("s3cret"), "{reason}");
    let sent = seen.lock().unwrap()[0].clone();
    assert!(
        sent.contains("application/x-www-form-urlencoded")
            && sent.ends_with("username=root%40pam&password=a%20b%26c%3Dd"),
        "{sent}"
    );
    let r = c.send(&get(&url, Duration::from_secs(5))).await.unwrap();
    assert_eq!(
        (r.status, r.reason(200)),
        (404, None),
        "the standard phrase is none"
    );
}

#[tokio::test]
async fn a_silent_server_is_sent_no_answer_within_the_bound() {
    let (base, seen) = server(Arc::new(|_, _| None)).await;
    let mut c = plain();
    let url = format!("{base}/thing");
    let t = Instant::now();
    let f = c
        .send(&get(&url, Duration::from_millis(300)))
        .await
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(f.maybe_delivered());
    let e = f.into_error();
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(
        e.message
            .starts_with("no answer from the test server to GET /thing within 0."),
        "{}",
        e.message
    );
    // Sent once: nothing is sent again after it may have been delivered.
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_connection_closed_after_the_request_may_have_been_carried_out() {
    let (base, seen) = server(Arc::new(|_, _| Some(Vec::new()))).await;
    let mut c = plain();
    let url = format!("{base}/thing");
    let f = c
        .send(&get(&url, Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(matches!(f, Failed::Silent(_)), "{f:?}");
    assert!(
        f.error()
            .message
            .contains("the connection to the test server broke during GET /thing"),
        "{}",
        f.error().message
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_tried_again_then_named() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut c = plain();
    let url = format!("http://127.0.0.1:{port}/thing");
    let f = c
        .send(&get(&url, Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(!f.maybe_delivered());
    let Failed::Connect(e) = f else {
        panic!("{f:?}")
    };
    assert_eq!(e.kind, ErrorKind::Unreachable);
    assert_eq!(
        e.message,
        "cannot reach the test server (connection refused) for GET /thing"
    );
    assert_eq!(c.requests, CONNECT_ATTEMPTS);
}

#[tokio::test]
async fn bodies_are_capped_announced_or_not() {
    let big = "x".repeat(5000);
    let b2 = big.clone();
    let (base, _) = server(Arc::new(move |n, _| match n {
        1 => Some(answer("200 OK", &[], &b2)),
        _ => {
            // Chunked, no length announced.
            let mut s = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
            for _ in 0..5 {
                s.extend_from_slice(format!("3e8\r\n{}\r\n", "y".repeat(1000)).as_bytes());
            }
            s.extend_from_slice(b"0\r\n\r\n");
            Some(s)
        }
    }))
    .await;
    let mut c = plain();
    let url = format!("{base}/thing");
    for _ in 0..2 {
        let mut r = get(&url, Duration::from_secs(5));
        r.max_body = 4096;
        let f = c.send(&r).await.unwrap_err();
        assert!(matches!(f, Failed::TooLarge(_)), "{f:?}");
        assert!(
            f.error().message.contains("larger than 4 KiB"),
            "{}",
            f.error().message
        );
    }
    let mut r = get(&url, Duration::from_secs(5));
    r.max_body = 8000;
    assert_eq!(c.send(&r).await.unwrap().body.len(), 5000);
}

#[tokio::test]
async fn an_echoed_credential_is_never_in_the_text() {
    let (base, _) = server(Arc::new(|_, req: &str| {
        let auth = req
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("authorization:"))
            .unwrap_or("")
            .to_string();
        Some(answer(
            "401 Unauthorized",
            &[],
            &format!("{{\"error\":\"bad credentials; you sent {auth}\"}}"),
        ))
    }))
    .await;
    let mut c = plain();
    let url = format!("{base}/thing");
    let token = base64::engine::general_purpose::STANDARD.encode("root@pam:Pa55word!");
    let r = get(&url, Duration::from_secs(5))
        .secret_header(
            reqwest::header::AUTHORIZATION,
            format!("Basic {token}").as_bytes(),
        )
        .unwrap();
    let reply = c.send(&r).await.unwrap();
    assert_eq!(reply.status, 401);
    let text = reply.text(500);
    assert!(text.contains("you sent"), "{text}");
    for leak in [token.as_str(), "Pa55word!", "root@pam:Pa55word!"] {
        assert!(!text.contains(leak), "{text}");
    }
    let e = c.error(
        ErrorKind::PasswordInvalid,
        Stage::Authenticate,
        format!("refused: {}", String::from_utf8_lossy(&reply.body)),
    );
    assert!(!e.message.contains("Pa55word"), "{}", e.message);
}

#[tokio::test]
async fn throttling_is_waited_out_within_the_deadline() {
    let (base, seen) = server(Arc::new(|n, _| match n {
        1 | 2 => Some(answer(
            "429 Too Many Requests",
            &["retry-after: 0"],
            "slow down",
        )),
        _ => Some(answer("200 OK", &[], "ok")),
    }))
    .await;
    let mut c = plain();
    let url = format!("{base}/thing");
    let p = Patience {
        first: Duration::from_millis(10),
        ..Patience::THROTTLE
    };
    let r = c
        .send_patiently(&get(&url, Duration::from_secs(5)), &p)
        .await
        .unwrap();
    assert_eq!(r.body, b"ok");
    assert_eq!(c.throttled, 2);
    assert_eq!(seen.lock().unwrap().len(), 3);

    // Throttled for good: busy once the next pause would cross the deadline.
    let (base, seen) = server(Arc::new(|_, _| {
        Some(answer(
            "503 Service Unavailable",
            &["retry-after: 1"],
            "busy",
        ))
    }))
    .await;
    let url = format!("{base}/thing");
    let deadline = Instant::now() + Duration::from_millis(1500);
    let t = Instant::now();
    let f = c
        .send_patiently(
            &get(&url, Duration::from_secs(5)).within(Duration::from_secs(5), Some(deadline)),
            &Patience::THROTTLE_OR_BUSY,
        )
        .await
        .unwrap_err();
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
    let Failed::Throttled(e) = f else {
        panic!("{f:?}")
    };
    assert_eq!(e.kind, ErrorKind::Busy);
    assert!(
        e.message
            .starts_with("the test server throttled GET /thing 2 time(s) (503, Retry-After 1s)"),
        "{}",
        e.message
    );
    assert_eq!(seen.lock().unwrap().len(), 2);
    // Statuses the platform did not name come back as answers.
    let r = c
        .send_patiently(&get(&url, Duration::from_secs(5)), &Patience::THROTTLE)
        .await
        .unwrap();
    assert_eq!(r.status, 503);
}

#[tokio::test]
async fn requests_go_through_the_proxy_named() {
    // The proxy: answers absolute-form requests itself, refuses CONNECT.
    let (proxy, seen) = server(Arc::new(|_, req: &str| {
        if req.starts_with("CONNECT ") {
            Some(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n".to_vec())
        } else {
            Some(answer("200 OK", &[], "via proxy"))
        }
    }))
    .await;
    let proxy_url = proxy.replace("http://", "http://puser:pr0xyPW@");
    let mut c = Client::new(Setup {
        proxy: Proxy::Url(proxy_url),
        ..Setup::new("the cloud API")
    })
    .unwrap();
    let d = c.proxy_described().unwrap();
    assert!(d.starts_with("through the proxy http://127.0.0.1:"), "{d}");
    assert!(!d.contains("pr0xy"), "{d}");
    let r = c
        .send(&get(
            "http://api.example.invalid/v1/vm",
            Duration::from_secs(5),
        ))
        .await
        .unwrap();
    assert_eq!(r.body, b"via proxy");
    let req = seen.lock().unwrap()[0].clone();
    assert!(
        req.starts_with("GET http://api.example.invalid/v1/vm HTTP/1.1"),
        "{req}"
    );
    let f = c
        .send(&get(
            "https://api.example.invalid/v1/vm",
            Duration::from_secs(5),
        ))
        .await
        .unwrap_err();
    assert!(!f.maybe_delivered(), "{f:?}");
    let m = &f.error().message;
    assert!(m.contains("proxy"), "{m}");
    assert!(!m.contains("pr0xyPW"), "{m}");
    assert!(seen.lock().unwrap()[1].starts_with("CONNECT api.example.invalid:443"));
}

#[tokio::test]
async fn no_proxy_and_the_environment() {
    let (proxy, seen) = server(Arc::new(|_, _| Some(answer("200 OK", &[], "via proxy")))).await;
    let (direct, _) = server(Arc::new(|_, _| Some(answer("200 OK", &[], "direct")))).await;
    let p = proxy.clone();
    let env = move |k: &str| match k {
        "http_proxy" => Some(p.clone()),
        "NO_PROXY" => Some("localhost,127.0.0.1".to_string()),
        _ => None,
    };
    let mut c = Client::new(Setup {
        proxy: Proxy::Env,
        env: &env,
        ..Setup::new("the cloud API")
    })
    .unwrap();
    let url = format!("{direct}/x");
    assert_eq!(
        c.send(&get(&url, Duration::from_secs(5)))
            .await
            .unwrap()
            .body,
        b"direct"
    );
    assert!(seen.lock().unwrap().is_empty());
    let r = c
        .send(&get(
            "http://metadata.example.invalid/x",
            Duration::from_secs(5),
        ))
        .await
        .unwrap();
    assert_eq!(r.body, b"via proxy");
}

#[test]
fn form_bodies_are_percent_encoded() {
    assert_eq!(form_encode("a b+c/d=é~"), "a%20b%2Bc%2Fd%3D%C3%A9~");
    let r = Request::new(Method::POST, "http://h/t", "token", Stage::Authenticate).form(&[
        ("grant_type", "client_credentials"),
        ("scope", "https://m/.default"),
    ]);
    assert_eq!(
        r.body.as_deref(),
        Some(&b"grant_type=client_credentials&scope=https%3A%2F%2Fm%2F.default"[..])
    );
    assert!(r.headers.iter().any(
        |(k, v)| k == reqwest::header::CONTENT_TYPE && v == "application/x-www-form-urlencoded"
    ));
}

#[cfg(feature = "lab")]
mod opened_ahead;
