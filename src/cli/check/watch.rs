//! `fencekit check --watch INTERVAL [--listen ADDR:PORT]`: one process
//! that keeps checking (the schedule is [`crate::fleet::watch`]), keeps
//! the last result and the time of the last success of every level, logs
//! one line per change (not per check) on stderr, and serves `/metrics`
//! and `/healthz` over HTTP on the given address only.
//!
//! The HTTP side is a small HTTP/1.1 responder on tokio (GET and HEAD of
//! two paths, one request per connection, at most [`MAX_CONNECTIONS`] at
//! once, each bounded by [`REQUEST_TIMEOUT`]), so watch mode needs no HTTP
//! library and works in the slim build (`--no-default-features`). With
//! `--web-config` it speaks TLS (rustls), checks client certificates and
//! basic-auth users ([`super::webconfig`]); the file and the ones it names
//! are looked at again (at most once a second, when a connection comes)
//! and a changed set is reloaded, or kept as it was when it no longer reads.

use super::metrics::{render, LevelSample, OPENMETRICS_TYPE, PROMETHEUS_TYPE};
use super::webconfig::{AuthResult, RateLimit, WebConfig};
use crate::cli::args::{CheckArgs, Output};
use crate::exit;
use crate::fleet::drift::{compare, mark_broken, Baseline, Drift};
use crate::fleet::plan::NodePlan;
use crate::fleet::verify::facts::NodeProbe;
use crate::fleet::verify::CheckRow;
use crate::fleet::watch::{watch, NodeChecked, WatchOptions};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use zeroize::Zeroizing;

/// Connections served at once; more are closed at once.
pub const MAX_CONNECTIONS: usize = 32;
/// Bound on reading a request and writing its answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request head read.
const MAX_HEAD: usize = 8 * 1024;

/// How often the web configuration's files are looked at (when a
/// connection comes).
const WEB_CONFIG_RECHECK: Duration = Duration::from_secs(1);

/// The web configuration in force.
struct Web {
    config: Option<Rc<WebConfig>>,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    rate: Option<RateLimit>,
    stamp: Vec<Option<(SystemTime, u64, u64)>>,
    checked: Instant,
    /// The files' state when a reload last failed (said once).
    refused: Option<Vec<Option<(SystemTime, u64, u64)>>>,
}

impl Web {
    fn new(config: Option<WebConfig>) -> Web {
        let mut w = Web {
            config: None,
            acceptor: None,
            rate: None,
            stamp: Vec::new(),
            checked: Instant::now(),
            refused: None,
        };
        if let Some(c) = config {
            w.set(c);
        }
        w
    }

    fn set(&mut self, c: WebConfig) {
        self.stamp = c.stamp();
        self.acceptor = c.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        self.rate = c.rate.map(|(i, b)| RateLimit::new(i, b));
        self.config = Some(Rc::new(c));
    }

    /// Reloads the configuration when one of its files changed.
    fn refresh(&mut self) {
        let Some(c) = &self.config else { return };
        if self.checked.elapsed() < WEB_CONFIG_RECHECK {
            return;
        }
        self.checked = Instant::now();
        let now = c.stamp();
        if now == self.stamp || self.refused.as_ref() == Some(&now) {
            return;
        }
        let path = c.path.clone();
        match WebConfig::load(&path) {
            Ok(new) => {
                log(&format!(
                    "{}: changed; now {}",
                    path.display(),
                    new.describe()
                ));
                for w in &new.warnings {
                    log(&format!("warning: {w}"));
                }
                self.refused = None;
                self.set(new);
            }
            Err(e) => {
                log(&format!(
                    "{e}; the web configuration read before is kept until this is mended"
                ));
                self.refused = Some(now);
            }
        }
    }
}

/// What is kept of one level.
struct Kept {
    row: CheckRow,
    checked: SystemTime,
    last_success: Option<SystemTime>,
    checks: u64,
    drifts: Vec<Drift>,
}

/// Everything the watch knows.
struct State {
    names: Vec<String>,
    levels: Vec<Vec<Kept>>,
    probe_drifts: Vec<Vec<Drift>>,
    baseline: Option<Baseline>,
    /// When the last node check ended (for /healthz).
    last_report: Option<Instant>,
    started: Instant,
    /// How long without a finished check means the watch is stuck.
    stale_after: Duration,
    /// Nodes not yet checked once.
    unseen: usize,
    /// With --pacemaker/--far: the configuration doctor's latest findings.
    doctor: Option<std::sync::Arc<std::sync::Mutex<String>>>,
}

/// A log line (stderr, UTC time first).
fn log(line: &str) {
    eprintln!("{} {line}", crate::time::utc_now());
}

fn place(r: &CheckRow) -> String {
    format!("{} level {} ({} {})", r.node, r.level, r.method, r.endpoint)
}

impl State {
    /// Takes one node's new rows: drift, what changed (logged), what is kept.
    fn update(&mut self, n: NodeChecked) {
        let NodeChecked {
            index,
            mut rows,
            probe,
            at,
        } = n;
        let probes: Vec<NodeProbe> = probe.into_iter().collect();
        let drifts = self
            .baseline
            .as_ref()
            .map(|b| compare(b, &rows, &probes).drifts)
            .unwrap_or_default();
        mark_broken(&mut rows, &drifts);
        let first = self.levels[index].is_empty();
        let mut kept = Vec::with_capacity(rows.len());
        for r in rows {
            let old = self.levels[index].iter().find(|k| k.row.level == r.level);
            let mine: Vec<Drift> = drifts
                .iter()
                .filter(|d| d.level == Some(r.level))
                .cloned()
                .collect();
            match old {
                None if !r.ok => log(&format!(
                    "{}: would fail: {}",
                    place(&r),
                    r.error.as_deref().unwrap_or("?")
                )),
                Some(o) if o.row.ok && !r.ok => log(&format!(
                    "{}: would fail now: {}",
                    place(&r),
                    r.error.as_deref().unwrap_or("?")
                )),
                Some(o) if !o.row.ok && r.ok => log(&format!("{}: works again", place(&r))),
                _ => {}
            }
            let before: &[Drift] = old.map_or(&[], |o| &o.drifts);
            log_drift_changes(&place(&r), before, &mine);
            kept.push(Kept {
                checked: at,
                last_success: if r.ok {
                    Some(at)
                } else {
                    old.and_then(|o| o.last_success)
                },
                checks: old.map_or(0, |o| o.checks) + 1,
                drifts: mine,
                row: r,
            });
        }
        let probe_drifts: Vec<Drift> = drifts.into_iter().filter(|d| d.level.is_none()).collect();
        log_drift_changes(
            &format!("{} (its own address)", self.names[index]),
            &self.probe_drifts[index],
            &probe_drifts,
        );
        self.probe_drifts[index] = probe_drifts;
        self.levels[index] = kept;
        self.last_report = Some(Instant::now());
        if first {
            self.unseen -= 1;
            if self.unseen == 0 {
                let (ok, all) = self.counts();
                log(&format!(
                    "every node checked once: {ok} of {all} level(s) would work, {} drift(s); \
                     from now on one line per change",
                    self.drifts().len()
                ));
            }
        }
    }

    fn counts(&self) -> (usize, usize) {
        let all = self.levels.iter().flatten();
        (all.clone().filter(|k| k.row.ok).count(), all.count())
    }

    fn drifts(&self) -> Vec<Drift> {
        let mut d: Vec<Drift> = Vec::new();
        for (levels, probe) in self.levels.iter().zip(&self.probe_drifts) {
            d.extend(levels.iter().flat_map(|k| k.drifts.iter().cloned()));
            d.extend(probe.iter().cloned());
        }
        d
    }

    /// The exposition text now.
    fn metrics(&self, openmetrics: bool) -> String {
        let mut rows: Vec<CheckRow> = self
            .levels
            .iter()
            .flatten()
            .map(|k| k.row.clone())
            .collect();
        crate::fleet::verify::flag_shared_machines(&mut rows);
        let kept: Vec<&Kept> = self.levels.iter().flatten().collect();
        let samples: Vec<LevelSample<'_>> = rows
            .iter()
            .zip(&kept)
            .map(|(r, k)| LevelSample {
                row: r,
                checked: k.checked,
                last_success: k.last_success,
                checks: Some(k.checks),
            })
            .collect();
        let text = render(&samples, &self.drifts(), SystemTime::now(), openmetrics);
        super::doctor::with_findings(text, self.doctor.as_deref())
    }

    /// `/healthz`: whether checks are still finishing.
    fn health(&self) -> (bool, String) {
        if self.names.is_empty() {
            // The doctor alone: its runs are bounded by the agents' own bounds.
            return (true, "ok: configuration findings on /metrics\n".into());
        }
        let since = self.last_report.unwrap_or(self.started).elapsed();
        let (ok, all) = self.counts();
        if since > self.stale_after {
            (
                false,
                format!("stale: no check finished for {:.0}s\n", since.as_secs_f64()),
            )
        } else {
            (
                true,
                format!(
                    "ok: {ok} of {all} level(s) would work; {} node(s) not checked yet\n",
                    self.unseen
                ),
            )
        }
    }
}

fn log_drift_changes(place: &str, before: &[Drift], now: &[Drift]) {
    let same = |a: &Drift, b: &Drift| a.drift == b.drift && a.severity == b.severity;
    for d in now.iter().filter(|d| !before.iter().any(|b| same(b, d))) {
        log(&format!(
            "{place}: drift {} ({}): was {}, now {}",
            d.drift.as_str(),
            d.severity.as_str(),
            d.was,
            d.now
        ));
    }
    for d in before.iter().filter(|b| !now.iter().any(|d| same(b, d))) {
        log(&format!("{place}: drift {} cleared", d.drift.as_str()));
    }
}

/// Entry point of `fencekit check --watch`.
pub fn main(c: CheckArgs) -> i32 {
    let Some(interval) = c.watch.filter(|i| !i.is_zero()) else {
        eprintln!("fencekit: --watch needs an interval above zero");
        return exit::USAGE;
    };
    let a = &c.action;
    if !matches!(a.output, Output::Human | Output::Openmetrics) {
        eprintln!(
            "fencekit: --watch logs each change as a line on stderr and serves metrics with \
             --listen; --output does not apply"
        );
        return exit::USAGE;
    }
    let web = match &c.web_config {
        Some(path) => match WebConfig::load(path) {
            Ok(w) => {
                for warning in &w.warnings {
                    log(&format!("warning: {warning}"));
                }
                Some(w)
            }
            Err(e) => {
                eprintln!("fencekit: {e}");
                return exit::USAGE;
            }
        },
        None => None,
    };
    // With --pacemaker/--far and no target, the watch serves the doctor's
    // findings alone.
    let doctor_only = (c.pacemaker || c.cib.is_some() || c.far.is_some())
        && a.targets.is_empty()
        && a.ip.is_none()
        && a.plug.is_none()
        && !a.all;
    let plans = if doctor_only {
        crate::runtime::init_logging(a.verbose);
        Vec::new()
    } else {
        match crate::cli::plan::begin(a) {
            Ok(p) => p,
            Err(code) => return code,
        }
    };
    let baseline = match super::baseline::load_baseline(&c) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let Some(rt) = crate::runtime::runtime("fencekit") else {
        return exit::FAILURE;
    };
    let listener = match c.listen {
        Some(addr) => match rt.block_on(tokio::net::TcpListener::bind(addr)) {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!("fencekit: cannot listen on {addr}: {e}");
                return exit::FAILURE;
            }
        },
        None => None,
    };
    let opts = WatchOptions {
        interval,
        jitter: 0.1,
        step: a.login_timeout,
        parallel: crate::fleet::fanout::bounded_parallel(a.parallel as usize).0,
        bmc_interval: a.bmc_interval,
        probe: baseline.as_ref().map(|_| c.probe_timeout),
    };
    let most_levels = plans.iter().map(|p| p.levels.len()).max().unwrap_or(0) as u32;
    let state = Rc::new(RefCell::new(State {
        names: plans.iter().map(|p| p.name.clone()).collect(),
        levels: plans.iter().map(|_| Vec::new()).collect(),
        probe_drifts: plans.iter().map(|_| Vec::new()).collect(),
        baseline,
        last_report: None,
        started: Instant::now(),
        stale_after: interval * 3 + a.login_timeout * (4 * most_levels + 2),
        unseen: plans.len(),
        doctor: super::doctor::watch_doctor(&c, interval),
    }));
    let local = tokio::task::LocalSet::new();
    let web = Rc::new(RefCell::new(Web::new(web)));
    rt.block_on(local.run_until(run(plans, opts, listener, state, web)));
    exit::OK
}

async fn run(
    plans: Vec<NodePlan>,
    opts: WatchOptions,
    listener: Option<tokio::net::TcpListener>,
    state: Rc<RefCell<State>>,
    web: Rc<RefCell<Web>>,
) {
    // Installed before saying anything, so a signal right after is heard.
    let terms = crate::runtime::Terminations::install();
    let levels: usize = plans.iter().map(|p| p.levels.len()).sum();
    let serving = match listener.as_ref().and_then(|l| l.local_addr().ok()) {
        Some(addr) => match &web.borrow().config {
            Some(c) => format!(
                "; /metrics and /healthz on {}://{addr} ({})",
                if c.tls.is_some() { "https" } else { "http" },
                c.describe()
            ),
            None => format!("; /metrics and /healthz on http://{addr}"),
        },
        None => String::new(),
    };
    log(&format!(
        "watching {} node(s), {levels} level(s), each about every {:.1}s{serving}; no power \
         command is ever sent; SIGTERM stops",
        plans.len(),
        opts.interval.as_secs_f64()
    ));
    let server = {
        let state = state.clone();
        async move {
            match listener {
                Some(l) => serve(l, state, web).await,
                None => std::future::pending().await,
            }
        }
    };
    let checks = watch(&plans, &opts, terms.wait(), |n| {
        state.borrow_mut().update(n)
    });
    tokio::select! {
        _ = checks => {}
        _ = server => {}
    }
    log("stopped");
}

/// Accepts connections until dropped.
async fn serve(
    listener: tokio::net::TcpListener,
    state: Rc<RefCell<State>>,
    web: Rc<RefCell<Web>>,
) {
    let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let sock = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of descriptors and the like: wait, do not spin.
                tracing::debug!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            continue;
        };
        let state = state.clone();
        let web = web.clone();
        web.borrow_mut().refresh();
        let (acceptor, config) = {
            let w = web.borrow();
            (w.acceptor.clone(), w.config.clone())
        };
        tokio::task::spawn_local(async move {
            let _permit = permit;
            let served = async {
                match acceptor {
                    Some(tls) => match tls.accept(sock).await {
                        Ok(s) => answer(s, &state, &web, config.as_deref()).await,
                        Err(e) => {
                            // A client without an accepted certificate, or
                            // plain HTTP to a TLS port.
                            tracing::debug!(error = %e, "TLS handshake refused");
                            Ok(())
                        }
                    },
                    None => answer(sock, &state, &web, config.as_deref()).await,
                }
            };
            let _ = tokio::time::timeout(REQUEST_TIMEOUT, served).await;
        });
    }
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    head_only: bool,
    path: String,
    openmetrics: bool,
    authorization: Option<Authorization>,
}

/// An `Authorization` header's value: zeroised when dropped, never printed.
#[derive(PartialEq, Eq)]
struct Authorization(Zeroizing<String>);

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorization(…)")
    }
}

/// Parses a request head; `Err` is the status line to answer with.
fn parse_request(head: &[u8]) -> Result<Request, &'static str> {
    let text = std::str::from_utf8(head).map_err(|_| "400 Bad Request")?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target, version) = (first.next(), first.next(), first.next());
    let (Some(method), Some(target), Some(version)) = (method, target, version) else {
        return Err("400 Bad Request");
    };
    if !version.starts_with("HTTP/1.") {
        return Err("505 HTTP Version Not Supported");
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Err("405 Method Not Allowed"),
    };
    let path = target.split('?').next().unwrap_or("").to_string();
    let mut openmetrics = false;
    let mut authorization = None;
    for (k, v) in lines.filter_map(|l| l.split_once(':')) {
        let k = k.trim();
        if k.eq_ignore_ascii_case("accept") && v.contains("application/openmetrics-text") {
            openmetrics = true;
        } else if k.eq_ignore_ascii_case("authorization") {
            authorization = Some(Authorization(Zeroizing::new(v.trim().to_string())));
        }
    }
    Ok(Request {
        head_only,
        path,
        openmetrics,
        authorization,
    })
}

async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    mut sock: S,
    state: &RefCell<State>,
    web: &RefCell<Web>,
    config: Option<&WebConfig>,
) -> std::io::Result<()> {
    // The head may hold a password: both buffers are zeroised when dropped.
    let mut head = Zeroizing::new(Vec::with_capacity(1024));
    let mut buf = Zeroizing::new([0u8; 1024]);
    let complete = loop {
        let n = sock.read(&mut buf[..]).await?;
        if n == 0 {
            break false;
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            head.truncate(end);
            break true;
        }
        if head.len() > MAX_HEAD {
            break false;
        }
    };
    let mut extra: Vec<(&str, &str)> = Vec::new();
    let (status, ctype, body, head_only) = match complete.then(|| parse_request(&head)) {
        None => (
            "400 Bad Request",
            "text/plain",
            "bad request\n".to_string(),
            false,
        ),
        Some(Err(status)) => (status, "text/plain", format!("{status}\n"), false),
        Some(Ok(r)) if !web.borrow_mut().rate.as_mut().is_none_or(|l| l.allow()) => {
            extra.push(("Retry-After", "1"));
            (
                "429 Too Many Requests",
                "text/plain",
                "too many requests\n".to_string(),
                r.head_only,
            )
        }
        Some(Ok(r)) if r.path == "/healthz" && config.is_some_and(|c| c.users.is_some()) => {
            // Liveness for a probe that holds no password: the status
            // code and one word, nothing about the fleet.
            let (ok, _) = state.borrow().health();
            let (status, body) = if ok {
                ("200 OK", "ok\n")
            } else {
                ("503 Service Unavailable", "stale\n")
            };
            (status, "text/plain", body.to_string(), r.head_only)
        }
        Some(Ok(r)) => {
            let users = config.and_then(|c| c.users.as_ref());
            let auth = match users {
                None => AuthResult::Allowed,
                Some(u) => {
                    u.check(r.authorization.as_ref().map(|a| a.0.as_str()))
                        .await
                }
            };
            match auth {
                AuthResult::Allowed => {}
                AuthResult::Refused => {
                    extra.push((
                        "WWW-Authenticate",
                        "Basic realm=\"fencekit\", charset=\"UTF-8\"",
                    ));
                    return respond(
                        &mut sock,
                        "401 Unauthorized",
                        "text/plain",
                        "unauthorized\n",
                        r.head_only,
                        config,
                        &extra,
                    )
                    .await;
                }
                AuthResult::Busy => {
                    extra.push(("Retry-After", "1"));
                    return respond(
                        &mut sock,
                        "503 Service Unavailable",
                        "text/plain",
                        "busy checking passwords; try again\n",
                        r.head_only,
                        config,
                        &extra,
                    )
                    .await;
                }
            }
            let (status, ctype, body) = match r.path.as_str() {
                "/metrics" => (
                    "200 OK",
                    if r.openmetrics {
                        OPENMETRICS_TYPE
                    } else {
                        PROMETHEUS_TYPE
                    },
                    state.borrow().metrics(r.openmetrics),
                ),
                "/healthz" => {
                    let (ok, text) = state.borrow().health();
                    (
                        if ok {
                            "200 OK"
                        } else {
                            "503 Service Unavailable"
                        },
                        "text/plain",
                        text,
                    )
                }
                "/" => (
                    "200 OK",
                    "text/plain",
                    "fencekit check --watch: /metrics, /healthz\n".to_string(),
                ),
                _ => ("404 Not Found", "text/plain", "not found\n".to_string()),
            };
            (status, ctype, body, r.head_only)
        }
    };
    respond(&mut sock, status, ctype, &body, head_only, config, &extra).await
}

/// Writes the answer (with the configured headers and `extra`) and closes.
async fn respond<S: AsyncWrite + Unpin>(
    sock: &mut S,
    status: &str,
    ctype: &str,
    body: &str,
    head_only: bool,
    config: Option<&WebConfig>,
    extra: &[(&str, &str)],
) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    let configured = config.map_or(&[][..], |c| &c.headers[..]);
    for (k, v) in configured
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(extra.iter().copied())
    {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    sock.write_all(&out).await?;
    sock.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_strictly() {
        let r = parse_request(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: application/openmetrics-text;version=1.0.0").unwrap();
        assert_eq!(
            r,
            Request {
                head_only: false,
                path: "/metrics".into(),
                openmetrics: true,
                authorization: None,
            }
        );
        // The credentials are kept, and never shown.
        let r = parse_request(b"GET /metrics HTTP/1.1\r\nauthorization: Basic YWxpY2U6c2VjcmV0")
            .unwrap();
        assert_eq!(
            r.authorization.as_ref().map(|a| a.0.as_str()),
            Some("Basic YWxpY2U6c2VjcmV0")
        );
        assert!(!format!("{r:?}").contains("YWxpY2U6c2VjcmV0"), "{r:?}");
        let r = parse_request(b"HEAD /healthz HTTP/1.0").unwrap();
        assert!(r.head_only && !r.openmetrics);
        assert_eq!(
            parse_request(b"POST /metrics HTTP/1.1"),
            Err("405 Method Not Allowed")
        );
        assert_eq!(parse_request(b"GET /metrics"), Err("400 Bad Request"));
        assert_eq!(
            parse_request(b"GET / SPDY/3"),
            Err("505 HTTP Version Not Supported")
        );
        assert_eq!(parse_request(&[0xff, 0xfe]), Err("400 Bad Request"));
    }
}
