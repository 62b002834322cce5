//! The lab's Redfish service: one ComputerSystem backed by a shared
//! [`Bmc`] chassis (the same power the lab's IPMI side shows), over HTTP or
//! HTTPS with a certificate generated at start.
//!
//! It speaks enough Redfish for fencing clients — service root, Systems,
//! `ComputerSystem.Reset` (inline AllowableValues or an ActionInfo),
//! SessionService with X-Auth-Token, Task monitors — and has fault knobs for
//! what real BMCs do (`shared/reference/quirks.md` §Redfish): transitional
//! PoweringOn/PoweringOff, 409 "already on", busy 503s, 202 + Task, missing
//! reset types, bodies that are not JSON or are huge, and a service that
//! accepts connections and never answers. `curl` and upstream
//! `fence_redfish` are run against it in `tests/interop_redfish.rs`.
//!
//! HTTP/1.1 framing, keep-alive and `Connection: close` are hyper's; this
//! module only decides what to answer, and never panics on what it reads.

use super::bmc::Bmc;
use base64::Engine;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// Largest request body read.
const MAX_REQUEST_BODY: usize = 64 * 1024;
/// A TLS handshake or request header that takes longer is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most sessions at once (real BMCs have few slots; quirk 20).
const MAX_SESSIONS: usize = 64;

/// The reset types a typical BMC offers (all the standard ones but the
/// graceful restart).
pub const STANDARD_RESET_TYPES: &[&str] = &[
    "On",
    "ForceOff",
    "GracefulShutdown",
    "ForceRestart",
    "PowerCycle",
    "ForceOn",
    "PushPowerButton",
    "Nmi",
];

/// Which certificate an HTTPS lab serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabCert {
    /// One self-signed certificate marked CA:TRUE, like many BMCs' and
    /// sushy-tools' (webpki refuses it as an end-entity: clients must pin it).
    SelfSigned,
    /// A leaf issued by a CA generated alongside; the CA is what to trust.
    Issued,
}

/// An error answer the lab gives instead of performing a reset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabErrorAnswer {
    /// HTTP status (e.g. 503, 500, 400).
    pub status: u16,
    /// `@Message.ExtendedInfo[0].MessageId`.
    pub message_id: String,
    /// Its message.
    pub message: String,
    /// How many resets get it before they succeed (0: all of them).
    pub times: u32,
}

/// Resets answer 202 with a Task to follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LabTask {
    /// Monitor reads that still say Running.
    pub polls: u32,
    /// The task ends in Exception and the reset is not performed.
    pub fail: bool,
}

/// What GET on the system resource returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SystemBody {
    /// The real resource.
    #[default]
    Normal,
    /// An HTML page with status 200.
    NotJson,
    /// A valid resource padded to this many bytes.
    Huge(usize),
    /// The resource with `PowerState` replaced (`None`: left out).
    PowerState(Option<String>),
}

/// Redfish-specific fault knobs (the chassis' own — delay, transition,
/// stuck, silent, strict_state — live in [`super::bmc::Faults`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedfishFaults {
    /// Answer resets with this error.
    pub reset_error: Option<LabErrorAnswer>,
    /// Answer resets with 202 and a Task.
    pub task: Option<LabTask>,
    /// 409 "already powered ON/OFF" for On while on and ForceOff while off (iDRAC).
    pub conflict_when_already: bool,
    /// What the system resource looks like.
    pub system_body: SystemBody,
}

/// How a lab Redfish service is set up.
#[derive(Clone, Debug)]
pub struct RedfishLabOptions {
    /// The accepted user name.
    pub username: String,
    /// Its password.
    pub password: String,
    /// HTTPS with this certificate, or plain HTTP (`None`).
    pub tls: Option<LabCert>,
    /// Also write the PEM to trust to this file.
    pub cert_path: Option<PathBuf>,
    /// An address the certificate names besides 127.0.0.1 and localhost
    /// (a lab fleet's node listens on an address of its own).
    pub cert_ip: Option<std::net::IpAddr>,
    /// The system's Id (its URI is `/redfish/v1/Systems/<id>`).
    pub system_id: String,
    /// The system's Name.
    pub system_name: String,
    /// More systems in the collection (each on its own always-on chassis).
    pub extra_systems: u32,
    /// `ResetType@Redfish.AllowableValues`.
    pub reset_types: Vec<String>,
    /// Publish the reset types only through `@Redfish.ActionInfo`.
    pub action_info: bool,
    /// Offer SessionService.
    pub sessions: bool,
    /// Redfish fault knobs.
    pub faults: RedfishFaults,
}

impl Default for RedfishLabOptions {
    fn default() -> Self {
        RedfishLabOptions {
            username: "admin".into(),
            password: "lab".into(),
            tls: Some(LabCert::SelfSigned),
            cert_path: None,
            cert_ip: None,
            system_id: "1".into(),
            system_name: "node01".into(),
            extra_systems: 0,
            reset_types: STANDARD_RESET_TYPES.iter().map(|s| s.to_string()).collect(),
            action_info: false,
            sessions: true,
            faults: RedfishFaults::default(),
        }
    }
}

/// What the lab saw, for tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedfishStats {
    /// TCP connections accepted.
    pub connections: u64,
    /// HTTP requests received.
    pub requests: u64,
    /// Requests refused with 401.
    pub auth_failures: u64,
    /// Requests that authenticated with Basic.
    pub basic_auth: u64,
    /// Requests that authenticated with a session token.
    pub token_auth: u64,
    /// Sessions created.
    pub sessions_created: u64,
    /// Sessions deleted.
    pub sessions_deleted: u64,
    /// Sessions still open.
    pub sessions_open: u64,
    /// GETs of the (main) system resource.
    pub system_reads: u64,
    /// Task monitor reads.
    pub task_polls: u64,
    /// Every ResetType received, in order (also the refused ones).
    pub resets: Vec<String>,
}

struct Task {
    op: u8,
    polls_left: u32,
    fail: bool,
    done: bool,
}

struct Inner {
    faults: RedfishFaults,
    sessions: HashMap<String, u64>,
    next_session: u64,
    tasks: HashMap<u64, Task>,
    next_task: u64,
    /// The power state a reset is heading to, and until when it is in transit.
    transit: Option<(bool, Instant)>,
    reset_errors_sent: u32,
    stats: RedfishStats,
}

struct Shared {
    bmc: Bmc,
    opts: RedfishLabOptions,
    decoys: Vec<(String, Bmc)>,
    inner: Mutex<Inner>,
}

impl Shared {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running lab Redfish service; it stops when dropped.
pub struct LabRedfish {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The main system's chassis.
    pub bmc: Bmc,
    shared: Arc<Shared>,
    cert_pem: Option<String>,
    fingerprint: Option<[u8; 32]>,
    task: tokio::task::JoinHandle<()>,
}

struct Generated {
    chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    key: Vec<u8>,
    trust_pem: String,
    leaf_der: Vec<u8>,
}

fn cert_error(e: rcgen::Error) -> io::Error {
    io::Error::other(format!("cannot generate the lab certificate: {e}"))
}

fn generate(kind: LabCert, ip: Option<std::net::IpAddr>) -> io::Result<Generated> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let mut names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    names.extend(ip.map(|ip| ip.to_string()).filter(|ip| ip != "127.0.0.1"));
    let key = KeyPair::generate().map_err(cert_error)?;
    match kind {
        LabCert::SelfSigned => {
            let mut p = CertificateParams::new(names).map_err(cert_error)?;
            p.distinguished_name
                .push(DnType::CommonName, "fencekit lab BMC");
            p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            let cert = p.self_signed(&key).map_err(cert_error)?;
            Ok(Generated {
                chain: vec![cert.der().clone()],
                key: key.serialize_der(),
                trust_pem: cert.pem(),
                leaf_der: cert.der().to_vec(),
            })
        }
        LabCert::Issued => {
            let ca_key = KeyPair::generate().map_err(cert_error)?;
            let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(cert_error)?;
            ca.distinguished_name
                .push(DnType::CommonName, "fencekit lab CA");
            ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            let ca_cert = ca.self_signed(&ca_key).map_err(cert_error)?;
            let mut leaf = CertificateParams::new(names).map_err(cert_error)?;
            leaf.distinguished_name
                .push(DnType::CommonName, "fencekit lab BMC");
            let leaf_cert = leaf
                .signed_by(&key, &ca_cert, &ca_key)
                .map_err(cert_error)?;
            Ok(Generated {
                chain: vec![leaf_cert.der().clone(), ca_cert.der().clone()],
                key: key.serialize_der(),
                trust_pem: ca_cert.pem(),
                leaf_der: leaf_cert.der().to_vec(),
            })
        }
    }
}

fn tls_acceptor(g: &Generated) -> io::Result<tokio_rustls::TlsAcceptor> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(g.key.clone().into());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(g.chain.clone(), key)
        .map_err(io::Error::other)?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

impl LabRedfish {
    /// Binds `addr` (loopback only) and serves `bmc` until dropped. Must run
    /// inside a tokio runtime.
    pub async fn start(addr: SocketAddr, bmc: Bmc, opts: RedfishLabOptions) -> io::Result<Self> {
        if !addr.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the lab only binds loopback addresses (127.0.0.0/8, ::1)",
            ));
        }
        if opts.system_id.is_empty() || opts.system_id.contains('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the system id must be one non-empty path segment",
            ));
        }
        let generated = opts.tls.map(|k| generate(k, opts.cert_ip)).transpose()?;
        if let (Some(g), Some(path)) = (&generated, &opts.cert_path) {
            std::fs::write(path, &g.trust_pem)?;
        }
        let acceptor = generated.as_ref().map(tls_acceptor).transpose()?;
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let decoys = (0..opts.extra_systems)
            .map(|i| {
                (
                    format!("{}-{}", opts.system_id, i + 2),
                    Bmc::new(true, Default::default()),
                )
            })
            .collect();
        let shared = Arc::new(Shared {
            bmc: bmc.clone(),
            inner: Mutex::new(Inner {
                faults: opts.faults.clone(),
                sessions: HashMap::new(),
                next_session: 1,
                tasks: HashMap::new(),
                next_task: 1,
                transit: None,
                reset_errors_sent: 0,
                stats: RedfishStats::default(),
            }),
            opts,
            decoys,
        });
        let task = tokio::spawn(accept_loop(listener, acceptor, shared.clone()));
        Ok(LabRedfish {
            addr,
            bmc,
            shared,
            cert_pem: generated.as_ref().map(|g| g.trust_pem.clone()),
            fingerprint: generated
                .as_ref()
                .map(|g| Sha256::digest(&g.leaf_der).into()),
            task,
        })
    }

    /// `https://127.0.0.1:PORT` (or `http://…`).
    pub fn base_url(&self) -> String {
        let scheme = if self.cert_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The main system's path.
    pub fn system_uri(&self) -> String {
        format!("/redfish/v1/Systems/{}", self.shared.opts.system_id)
    }

    /// A target URL for the main system: `redfish://127.0.0.1:PORT/redfish/v1/Systems/ID`
    /// (`redfish+http://…` without TLS).
    pub fn target(&self) -> String {
        let scheme = if self.cert_pem.is_some() {
            "redfish"
        } else {
            "redfish+http"
        };
        format!("{scheme}://{}{}", self.addr, self.system_uri())
    }

    /// The PEM to trust (`--ca-cert`): the self-signed certificate, or the CA.
    pub fn cert_pem(&self) -> Option<&str> {
        self.cert_pem.as_deref()
    }

    /// SHA-256 of the certificate the server presents.
    pub fn cert_fingerprint(&self) -> Option<[u8; 32]> {
        self.fingerprint
    }

    /// What the service saw so far.
    pub fn stats(&self) -> RedfishStats {
        self.shared.inner().stats.clone()
    }

    /// Replaces the Redfish fault knobs (the chassis' own are on [`Bmc`]).
    pub fn set_faults(&self, faults: RedfishFaults) {
        let mut i = self.shared.inner();
        i.faults = faults;
        i.reset_errors_sent = 0;
    }
}

impl Drop for LabRedfish {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
) {
    // Connections live in this set, so aborting the loop ends them all.
    let mut conns = JoinSet::new();
    loop {
        while conns.try_join_next().is_some() {}
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = tcp.set_nodelay(true);
        shared.inner().stats.connections += 1;
        let shared = shared.clone();
        let acceptor = acceptor.clone();
        conns.spawn(async move {
            match acceptor {
                Some(a) => {
                    if let Ok(Ok(tls)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, a.accept(tcp)).await
                    {
                        serve_connection(tls, shared).await;
                    }
                }
                None => serve_connection(tcp, shared).await,
            }
        });
    }
}

async fn serve_connection<S>(io: S, shared: Arc<Shared>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(handle(&shared, req).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HANDSHAKE_TIMEOUT)
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service)
        .await;
}

type Answer = Response<Full<Bytes>>;

fn respond(status: u16, body: &Value) -> Answer {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    r.headers_mut()
        .insert("OData-Version", HeaderValue::from_static("4.0"));
    r
}

fn empty(status: u16) -> Answer {
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::NO_CONTENT);
    r
}

fn error(status: u16, message_id: &str, message: &str) -> Answer {
    respond(
        status,
        &json!({"error": {
            "code": "Base.1.8.GeneralError",
            "message": "A general error has occurred. See ExtendedInfo for more information.",
            "@Message.ExtendedInfo": [{
                "@odata.type": "#Message.v1_0_0.Message",
                "MessageId": message_id,
                "Message": message,
                "Severity": "Warning",
            }],
        }}),
    )
}

fn not_found(path: &str) -> Answer {
    error(
        404,
        "Base.1.8.ResourceMissingAtURI",
        &format!("The resource at the URI {path} was not found."),
    )
}

fn method_not_allowed() -> Answer {
    error(
        405,
        "Base.1.8.OperationNotAllowed",
        "The HTTP method is not allowed on this resource.",
    )
}

/// Basic credentials or a session token; `Some(true)` basic, `Some(false)` token.
fn authenticate(shared: &Shared, req: &Request<Incoming>) -> Option<bool> {
    if let Some(t) = req.headers().get("X-Auth-Token") {
        let t = t.to_str().ok()?;
        return shared.inner().sessions.contains_key(t).then_some(false);
    }
    let h = req
        .headers()
        .get(hyper::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, b64) = h.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    let text = std::str::from_utf8(&raw).ok()?;
    let (u, p) = text.split_once(':')?;
    (u == shared.opts.username && p == shared.opts.password).then_some(true)
}

async fn handle(shared: &Arc<Shared>, req: Request<Incoming>) -> Answer {
    let (delay, silent) = {
        let mut c = shared.bmc.lock();
        c.counters.received += 1;
        (c.faults.delay, c.faults.silent)
    };
    shared.inner().stats.requests += 1;
    if silent {
        // Accepted, read, and never answered: clients must give up on their own.
        std::future::pending::<()>().await;
    }
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let answer = route(shared, req).await;
    shared.bmc.lock().counters.answered += 1;
    answer
}

async fn read_body(req: Request<Incoming>) -> Result<Bytes, Answer> {
    match Limited::new(req.into_body(), MAX_REQUEST_BODY)
        .collect()
        .await
    {
        Ok(b) => Ok(b.to_bytes()),
        Err(_) => Err(error(
            413,
            "Base.1.8.GeneralError",
            "The request body is too large or broken.",
        )),
    }
}

async fn route(shared: &Arc<Shared>, req: Request<Incoming>) -> Answer {
    let method = req.method().clone();
    let path = req.uri().path().trim_end_matches('/').to_string();
    let path = if path.is_empty() {
        "/".to_string()
    } else {
        path
    };
    let sessions_path = "/redfish/v1/SessionService/Sessions";
    // Open to everyone: the service root (DSP0266) and session creation.
    match (&method, path.as_str()) {
        (&Method::GET, "/redfish") => return respond(200, &json!({"v1": "/redfish/v1/"})),
        (&Method::GET, "/redfish/v1") => return respond(200, &service_root(shared)),
        (&Method::POST, p) if p == sessions_path && shared.opts.sessions => {
            return create_session(shared, req).await
        }
        // Without SessionService (like sushy-tools), its URIs do not exist.
        (_, p) if p.starts_with("/redfish/v1/SessionService") && !shared.opts.sessions => {
            return not_found(p)
        }
        _ => {}
    }
    match authenticate(shared, &req) {
        Some(basic) => {
            let mut i = shared.inner();
            if basic {
                i.stats.basic_auth += 1;
            } else {
                i.stats.token_auth += 1;
            }
        }
        None => {
            shared.inner().stats.auth_failures += 1;
            {
                let mut c = shared.bmc.lock();
                c.counters.auth_attempts += 1;
                c.counters.auth_failures += 1;
            }
            let mut r = error(
                401,
                "Base.1.8.NoValidSession",
                "There is no valid session established with the implementation.",
            );
            r.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"fencekit lab\""),
            );
            return r;
        }
    }
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    match (method, segments.as_slice()) {
        (Method::GET, ["redfish", "v1", "Systems"]) => respond(200, &systems(shared)),
        (Method::GET, ["redfish", "v1", "Systems", id]) => system(shared, id, &path),
        (Method::POST, ["redfish", "v1", "Systems", id, "Actions", "ComputerSystem.Reset"]) => {
            if !is_system(shared, id) {
                return not_found(&path);
            }
            let id = id.to_string();
            match read_body(req).await {
                Ok(body) => reset(shared, &id, &body),
                Err(a) => a,
            }
        }
        (Method::GET, ["redfish", "v1", "Systems", id, "ResetActionInfo"])
            if shared.opts.action_info && is_system(shared, id) =>
        {
            respond(
                200,
                &json!({
                    "@odata.id": path,
                    "@odata.type": "#ActionInfo.v1_1_2.ActionInfo",
                    "Id": "ResetActionInfo",
                    "Name": "Reset Action Info",
                    "Parameters": [{
                        "Name": "ResetType",
                        "Required": true,
                        "DataType": "String",
                        "AllowableValues": shared.opts.reset_types,
                    }],
                }),
            )
        }
        (Method::GET, ["redfish", "v1", "SessionService"]) if shared.opts.sessions => respond(
            200,
            &json!({
                "@odata.id": "/redfish/v1/SessionService",
                "@odata.type": "#SessionService.v1_1_8.SessionService",
                "Id": "SessionService",
                "Name": "Session Service",
                "ServiceEnabled": true,
                "SessionTimeout": 600,
                "Sessions": {"@odata.id": sessions_path},
            }),
        ),
        (Method::GET, ["redfish", "v1", "SessionService", "Sessions"]) if shared.opts.sessions => {
            let ids: Vec<u64> = shared.inner().sessions.values().copied().collect();
            let members: Vec<Value> = ids
                .iter()
                .map(|n| json!({"@odata.id": format!("{sessions_path}/{n}")}))
                .collect();
            respond(
                200,
                &json!({
                    "@odata.id": sessions_path,
                    "@odata.type": "#SessionCollection.SessionCollection",
                    "Name": "Session Collection",
                    "Members@odata.count": members.len(),
                    "Members": members,
                }),
            )
        }
        (Method::DELETE, ["redfish", "v1", "SessionService", "Sessions", n])
            if shared.opts.sessions =>
        {
            let Ok(n) = n.parse::<u64>() else {
                return not_found(&path);
            };
            let removed = {
                let mut i = shared.inner();
                let before = i.sessions.len();
                i.sessions.retain(|_, v| *v != n);
                let removed = i.sessions.len() < before;
                if removed {
                    i.stats.sessions_deleted += 1;
                    i.stats.sessions_open = i.sessions.len() as u64;
                }
                removed
            };
            if removed {
                shared.bmc.lock().counters.closed += 1;
                empty(204)
            } else {
                not_found(&path)
            }
        }
        (Method::GET, ["redfish", "v1", "TaskService", "Tasks", n]) => task(shared, n, &path),
        (
            _,
            ["redfish", "v1", "Systems", ..]
            | ["redfish", "v1", "SessionService", ..]
            | ["redfish", "v1", "TaskService", ..],
        ) if known_resource(shared, &segments) => method_not_allowed(),
        _ => not_found(&path),
    }
}

fn known_resource(shared: &Shared, segments: &[&str]) -> bool {
    match segments {
        ["redfish", "v1", "Systems"] => true,
        ["redfish", "v1", "Systems", id] => is_system(shared, id),
        ["redfish", "v1", "Systems", id, "Actions", "ComputerSystem.Reset"] => {
            is_system(shared, id)
        }
        ["redfish", "v1", "SessionService", ..] => shared.opts.sessions,
        _ => false,
    }
}

fn is_system(shared: &Shared, id: &str) -> bool {
    id == shared.opts.system_id || shared.decoys.iter().any(|(d, _)| d == id)
}

fn service_root(shared: &Shared) -> Value {
    let mut root = json!({
        "@odata.id": "/redfish/v1/",
        "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
        "Id": "RootService",
        "Name": "fencekit lab Redfish service",
        "RedfishVersion": "1.6.0",
        "UUID": "00000000-0000-4000-8000-00000000fe00",
        "Systems": {"@odata.id": "/redfish/v1/Systems"},
    });
    if shared.opts.sessions {
        root["SessionService"] = json!({"@odata.id": "/redfish/v1/SessionService"});
        root["Links"] = json!({"Sessions": {"@odata.id": "/redfish/v1/SessionService/Sessions"}});
    }
    root
}

fn systems(shared: &Shared) -> Value {
    let mut members =
        vec![json!({"@odata.id": format!("/redfish/v1/Systems/{}", shared.opts.system_id)})];
    members.extend(
        shared
            .decoys
            .iter()
            .map(|(id, _)| json!({"@odata.id": format!("/redfish/v1/Systems/{id}")})),
    );
    json!({
        "@odata.id": "/redfish/v1/Systems",
        "@odata.type": "#ComputerSystemCollection.ComputerSystemCollection",
        "Name": "Computer System Collection",
        "Members@odata.count": members.len(),
        "Members": members,
    })
}

/// The visible PowerState, transitional while a reset is in transit.
fn power_word(shared: &Shared, bmc: &Bmc, main: bool) -> &'static str {
    let (on, stuck) = {
        let mut c = bmc.lock();
        c.counters.status_reads += 1;
        (c.is_on(), c.faults.stuck)
    };
    if main && !stuck {
        if let Some((target, until)) = shared.inner().transit {
            if Instant::now() < until && on != target {
                return if target { "PoweringOn" } else { "PoweringOff" };
            }
        }
    }
    if on {
        "On"
    } else {
        "Off"
    }
}

fn system(shared: &Shared, id: &str, path: &str) -> Answer {
    let (bmc, name, main) = if id == shared.opts.system_id {
        (&shared.bmc, shared.opts.system_name.clone(), true)
    } else if let Some((_, b)) = shared.decoys.iter().find(|(d, _)| d == id) {
        (b, format!("decoy {id}"), false)
    } else {
        return not_found(path);
    };
    let power = power_word(shared, bmc, main);
    let reset_target = format!("{path}/Actions/ComputerSystem.Reset");
    let action = if shared.opts.action_info {
        json!({"target": reset_target, "@Redfish.ActionInfo": format!("{path}/ResetActionInfo")})
    } else {
        json!({"target": reset_target, "ResetType@Redfish.AllowableValues": shared.opts.reset_types})
    };
    let mut body = json!({
        "@odata.id": path,
        "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
        "Id": id,
        "Name": name,
        "UUID": format!("00000000-0000-4000-8000-{:012}", if main { 1 } else { 2 }),
        "SystemType": "Physical",
        "PowerState": power,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Actions": {"#ComputerSystem.Reset": action},
    });
    if !main {
        return respond(200, &body);
    }
    let shape = {
        let mut i = shared.inner();
        i.stats.system_reads += 1;
        i.faults.system_body.clone()
    };
    match shape {
        SystemBody::Normal => respond(200, &body),
        SystemBody::NotJson => {
            let mut r = Response::new(Full::new(Bytes::from_static(
                b"<html><body>Service temporarily unavailable</body></html>",
            )));
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("text/html"));
            r
        }
        SystemBody::Huge(n) => {
            body["Oem"] = json!({"Padding": "x".repeat(n)});
            respond(200, &body)
        }
        SystemBody::PowerState(p) => {
            match p {
                Some(s) => body["PowerState"] = json!(s),
                None => {
                    if let Some(o) = body.as_object_mut() {
                        o.remove("PowerState");
                    }
                }
            }
            respond(200, &body)
        }
    }
}

/// Applies a chassis operation (IPMI chassis control codes) and records the
/// transit window; returns the completion code.
fn apply(shared: &Shared, op: u8) -> u8 {
    let (cc, transition) = {
        let mut c = shared.bmc.lock();
        let cc = c.control(op);
        (cc, c.faults.transition)
    };
    if cc == 0 && !transition.is_zero() {
        let target = op == 1;
        if op <= 2 {
            shared.inner().transit = Some((target, Instant::now() + transition));
        }
    }
    cc
}

fn reset(shared: &Shared, id: &str, body: &[u8]) -> Answer {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return error(
            400,
            "Base.1.8.MalformedJSON",
            "The request body submitted was malformed JSON and could not be parsed.",
        );
    };
    let Some(rt) = v.get("ResetType").and_then(Value::as_str) else {
        return error(
            400,
            "Base.1.8.ActionParameterMissing",
            "The action ComputerSystem.Reset requires the parameter ResetType to be present.",
        );
    };
    let rt = rt.to_string();
    shared.inner().stats.resets.push(rt.clone());
    if !shared.opts.reset_types.contains(&rt) {
        return error(
            400,
            "Base.1.8.ActionParameterNotSupported",
            &format!("The parameter {rt} for the action ComputerSystem.Reset is not supported on the target resource."),
        );
    }
    if id != shared.opts.system_id {
        // Decoys accept resets and stay as they are.
        return empty(204);
    }
    let faults = {
        let mut i = shared.inner();
        let f = i.faults.clone();
        if let Some(e) = &f.reset_error {
            if e.times == 0 || i.reset_errors_sent < e.times {
                i.reset_errors_sent += 1;
                return error(e.status, &e.message_id, &e.message);
            }
        }
        f
    };
    let on = shared.bmc.is_on();
    let op = match rt.as_str() {
        "On" | "ForceOn" => 1,
        "ForceOff" | "GracefulShutdown" => 0,
        "PushPowerButton" => u8::from(!on),
        "ForceRestart" | "GracefulRestart" | "PowerCycle" => 2,
        "Nmi" => 4,
        _ => {
            return error(
                400,
                "Base.1.8.ActionParameterValueNotInList",
                &format!("The value {rt} for the parameter ResetType is not in the list of acceptable values."),
            )
        }
    };
    if faults.conflict_when_already && ((op == 1 && on) || (op == 0 && !on)) {
        let word = if on { "ON" } else { "OFF" };
        return error(
            409,
            "IDRAC.2.8.PSU501",
            &format!("Server is already powered {word}."),
        );
    }
    if let Some(t) = faults.task {
        let n = {
            let mut i = shared.inner();
            let n = i.next_task;
            i.next_task += 1;
            i.tasks.insert(
                n,
                Task {
                    op,
                    polls_left: t.polls,
                    fail: t.fail,
                    done: false,
                },
            );
            n
        };
        let uri = format!("/redfish/v1/TaskService/Tasks/{n}");
        let mut r = respond(202, &task_body(&uri, n, "Running", "OK", None));
        if let Ok(v) = HeaderValue::from_str(&uri) {
            r.headers_mut().insert(LOCATION, v);
        }
        return r;
    }
    match apply(shared, op) {
        0 => empty(204),
        0xd5 => error(
            409,
            "Base.1.8.ActionNotSupported",
            &format!(
                "The chassis is already powered {}.",
                if on { "on" } else { "off" }
            ),
        ),
        _ => error(
            500,
            "Base.1.8.InternalError",
            "The chassis refused the request.",
        ),
    }
}

fn task_body(uri: &str, n: u64, state: &str, status: &str, message: Option<&str>) -> Value {
    let mut t = json!({
        "@odata.id": uri,
        "@odata.type": "#Task.v1_4_3.Task",
        "Id": n.to_string(),
        "Name": "ComputerSystem.Reset",
        "TaskState": state,
        "TaskStatus": status,
        "TaskMonitor": uri,
    });
    if let Some(m) = message {
        t["Messages"] = json!([{"MessageId": "Base.1.8.GeneralError", "Message": m}]);
    }
    t
}

fn task(shared: &Shared, n: &str, path: &str) -> Answer {
    let Ok(n) = n.parse::<u64>() else {
        return not_found(path);
    };
    enum Step {
        Running,
        Fail,
        Apply(u8),
        Done,
    }
    let step = {
        let mut i = shared.inner();
        i.stats.task_polls += 1;
        match i.tasks.get_mut(&n) {
            None => return not_found(path),
            Some(t) if t.polls_left > 0 => {
                t.polls_left -= 1;
                Step::Running
            }
            Some(t) if t.fail => Step::Fail,
            Some(t) if !t.done => {
                t.done = true;
                Step::Apply(t.op)
            }
            Some(_) => Step::Done,
        }
    };
    match step {
        Step::Running => respond(202, &task_body(path, n, "Running", "OK", None)),
        Step::Fail => respond(
            200,
            &task_body(
                path,
                n,
                "Exception",
                "Critical",
                Some("The lab failed the reset task."),
            ),
        ),
        Step::Apply(op) => {
            apply(shared, op);
            respond(200, &task_body(path, n, "Completed", "OK", None))
        }
        Step::Done => respond(200, &task_body(path, n, "Completed", "OK", None)),
    }
}

async fn create_session(shared: &Arc<Shared>, req: Request<Incoming>) -> Answer {
    let body = match read_body(req).await {
        Ok(b) => b,
        Err(a) => return a,
    };
    let creds = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
        Some((
            v.get("UserName")?.as_str()?.to_string(),
            v.get("Password")?.as_str()?.to_string(),
        ))
    });
    {
        let mut c = shared.bmc.lock();
        c.counters.auth_attempts += 1;
    }
    let Some((user, pass)) = creds else {
        return error(
            400,
            "Base.1.8.PropertyMissing",
            "The property UserName or Password is a required property and must be included in the request.",
        );
    };
    if user != shared.opts.username || pass != shared.opts.password {
        shared.inner().stats.auth_failures += 1;
        shared.bmc.lock().counters.auth_failures += 1;
        return error(
            401,
            "Base.1.8.ResourceAtUriUnauthorized",
            "While accessing the resource at /redfish/v1/SessionService/Sessions, the service received an authorization error.",
        );
    }
    let (token, n) = {
        let mut i = shared.inner();
        if i.sessions.len() >= MAX_SESSIONS {
            // Quirk 20 (iDRAC RAC0218): out of session slots.
            return error(
                503,
                "Base.1.8.SessionLimitExceeded",
                "The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.",
            );
        }
        let n = i.next_session;
        i.next_session += 1;
        let token: String = {
            let bytes: [u8; 16] = rand::random();
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        };
        i.sessions.insert(token.clone(), n);
        i.stats.sessions_created += 1;
        i.stats.sessions_open = i.sessions.len() as u64;
        (token, n)
    };
    shared.bmc.lock().counters.sessions += 1;
    let uri = format!("/redfish/v1/SessionService/Sessions/{n}");
    let mut r = respond(
        201,
        &json!({
            "@odata.id": uri,
            "@odata.type": "#Session.v1_3_0.Session",
            "Id": n.to_string(),
            "Name": "User Session",
            "UserName": user,
        }),
    );
    if let Ok(v) = HeaderValue::from_str(&token) {
        r.headers_mut().insert("X-Auth-Token", v);
    }
    if let Ok(v) = HeaderValue::from_str(&uri) {
        r.headers_mut().insert(LOCATION, v);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn raw(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(request).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn garbage_and_keep_alive() {
        let opts = RedfishLabOptions {
            tls: None,
            ..Default::default()
        };
        let lab = LabRedfish::start(
            "127.0.0.1:0".parse().unwrap(),
            Bmc::new(true, Default::default()),
            opts,
        )
        .await
        .unwrap();
        let out = raw(lab.addr, b"\x00\x01garbage\r\n\r\n").await;
        assert!(out.is_empty() || out.starts_with("HTTP/1.1 400"), "{out}");
        // Two requests on one connection, the second asks to close.
        let auth = base64::engine::general_purpose::STANDARD.encode("admin:lab");
        let req = format!(
            "GET /redfish/v1/Systems/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {auth}\r\n\r\n\
             GET /redfish/v1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        );
        let out = raw(lab.addr, req.as_bytes()).await;
        assert_eq!(out.matches("HTTP/1.1 200").count(), 2, "{out}");
        assert!(out.contains("\"PowerState\":\"On\""));
        let out = raw(
            lab.addr,
            b"POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        )
        .await;
        assert!(out.starts_with("HTTP/1.1 401"), "{out}");
        assert_eq!(lab.stats().connections, 3);
        assert!(lab.bmc.is_on());
    }
}
