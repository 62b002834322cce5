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
//! Vendor profiles ([`Vendor`]: iDRAC, iLO, XCC, Supermicro, OpenBMC, AMI)
//! make the service answer like each family (`shared/reference/vendors.md`):
//! its system paths and reset types, its success bodies, its no-op refusals
//! (iDRAC 409 PSU501/PSU502, iLO 400 InvalidOperationForSystemState with the
//! reason only in MessageArgs), iLO's refusal during a transition, whether a
//! read during a transition shows PoweringOn/PoweringOff or the old state,
//! and 202 + Task for AMI with asynchronous operations. Every system also
//! serves its identity (`UUID`, `SerialNumber` from the chassis) and a
//! Chassis with a `Power` resource (`PowerConsumedWatts` from its meter).
//!
//! HTTP/1.1 framing, keep-alive and `Connection: close` are hyper's; this
//! module only decides what to answer, and never panics on what it reads.

use super::bmc::{Bmc, LabIdentity};
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
use std::time::Duration;
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabCert {
    /// One self-signed certificate marked CA:TRUE, like many BMCs' and
    /// sushy-tools' (webpki refuses it as an end-entity: clients must pin it).
    SelfSigned,
    /// A leaf issued by a CA generated alongside; the CA is what to trust.
    Issued,
    /// This certificate (PEM) and PKCS#8 key (PEM), made elsewhere.
    Given {
        /// The certificate, PEM.
        cert_pem: String,
        /// Its private key, PEM.
        key_pem: String,
    },
}

/// Which BMC family the service answers like (`shared/reference/vendors.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Vendor {
    /// fencekit's own: the fault knobs decide (204 on success).
    #[default]
    Generic,
    /// Dell iDRAC 8/9: 204; 409 PSU501/PSU502 for no-ops; shows transitions.
    Idrac,
    /// HPE iLO 5/6: 200 with an `error`-shaped Success body; 400
    /// InvalidOperationForSystemState (MessageArgs only) for no-ops and
    /// during a transition; shows transitions.
    Ilo,
    /// Lenovo XCC: 204, accepts no-ops, keeps the old state during a transition.
    Xcc,
    /// Supermicro X12/X13: 200 `{"Success": …}`, accepts no-ops, keeps the old state.
    Smc,
    /// OpenBMC bmcweb: 200 + Base Success, accepts no-ops, shows transitions.
    Bmcweb,
    /// OpenBMC builds that answer 204 (BlueField).
    Bmcweb204,
    /// AMI MegaRAC (NVIDIA DGX): 204, two systems, keeps the old state.
    Ami,
    /// AMI MegaRAC with asynchronous operations: 202 + a Task that runs
    /// until the transition ends.
    AmiTask,
}

impl Vendor {
    /// Every profile, in the order `--vendor` lists them.
    pub const ALL: [Vendor; 9] = [
        Vendor::Generic,
        Vendor::Idrac,
        Vendor::Ilo,
        Vendor::Xcc,
        Vendor::Smc,
        Vendor::Bmcweb,
        Vendor::Bmcweb204,
        Vendor::Ami,
        Vendor::AmiTask,
    ];

    /// The profile's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Vendor::Generic => "generic",
            Vendor::Idrac => "idrac",
            Vendor::Ilo => "ilo",
            Vendor::Xcc => "xcc",
            Vendor::Smc => "smc",
            Vendor::Bmcweb => "bmcweb",
            Vendor::Bmcweb204 => "bmcweb204",
            Vendor::Ami => "ami",
            Vendor::AmiTask => "ami-task",
        }
    }

    /// Reads a profile name (`supermicro` and `openbmc` are accepted for
    /// `smc` and `bmcweb`).
    pub fn parse(name: &str) -> Option<Vendor> {
        match name.to_ascii_lowercase().as_str() {
            "supermicro" => Some(Vendor::Smc),
            "openbmc" => Some(Vendor::Bmcweb),
            n => Vendor::ALL.into_iter().find(|v| v.name() == n),
        }
    }

    /// A read during a transition shows PoweringOn/PoweringOff (the others
    /// keep reporting the old state).
    pub fn shows_transitions(self) -> bool {
        !matches!(
            self,
            Vendor::Xcc | Vendor::Smc | Vendor::Ami | Vendor::AmiTask
        )
    }

    /// The `Oem` key of the family's ComputerSystem (how clients tell them apart).
    fn oem(self) -> Option<&'static str> {
        match self {
            Vendor::Idrac => Some("Dell"),
            Vendor::Ilo => Some("Hpe"),
            Vendor::Xcc => Some("Lenovo"),
            Vendor::Smc => Some("Supermicro"),
            Vendor::Ami | Vendor::AmiTask => Some("Ami"),
            _ => None,
        }
    }

    fn manufacturer(self) -> &'static str {
        match self {
            Vendor::Idrac => "Dell Inc.",
            Vendor::Ilo => "HPE",
            Vendor::Xcc => "Lenovo",
            Vendor::Smc => "Supermicro",
            Vendor::Ami | Vendor::AmiTask => "NVIDIA",
            _ => "fencekit lab",
        }
    }
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
    /// Another actor flips the power (settled, at once) right after the
    /// first read of the system: the client's next command meets a state it
    /// did not read (a stale read).
    pub flip_after_read: bool,
    /// Another actor starts a boot (`Some(true)`) or a shutdown
    /// (`Some(false)`) of the chassis' `transition` when the first request
    /// arrives: the client meets a node whose power is changing.
    pub transition_at_first_request: Option<bool>,
    /// A slow BMC: the reset is carried out at once, and its answer held
    /// this long (past a client's request timeout: the answer is late, not
    /// lost, and the client must not POST it again).
    pub reset_answer_delay: std::time::Duration,
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
    /// The identities of the extra systems, in order (a missing one is
    /// made up, distinct from every other; repeat the main system's to
    /// model two systems claiming one UUID).
    pub extra_identities: Vec<LabIdentity>,
    /// The BMC family the service answers like.
    pub vendor: Vendor,
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
            extra_identities: Vec::new(),
            vendor: Vendor::Generic,
            reset_types: STANDARD_RESET_TYPES.iter().map(|s| s.to_string()).collect(),
            action_info: false,
            sessions: true,
            faults: RedfishFaults::default(),
        }
    }
}

impl RedfishLabOptions {
    /// The options of a vendor profile: the family's system path, its reset
    /// types as its captured tree publishes them (inline or ActionInfo),
    /// and (AMI) its second system without a reset action.
    pub fn vendor(vendor: Vendor) -> Self {
        let types = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let d = RedfishLabOptions {
            vendor,
            ..RedfishLabOptions::default()
        };
        match vendor {
            Vendor::Generic => d,
            Vendor::Idrac => RedfishLabOptions {
                system_id: "System.Embedded.1".into(),
                reset_types: types(&[
                    "On",
                    "ForceOff",
                    "ForceRestart",
                    "GracefulRestart",
                    "GracefulShutdown",
                    "PushPowerButton",
                    "Nmi",
                    "PowerCycle",
                ]),
                ..d
            },
            Vendor::Ilo => RedfishLabOptions {
                reset_types: types(&[
                    "On",
                    "ForceOff",
                    "GracefulShutdown",
                    "ForceRestart",
                    "Nmi",
                    "PushPowerButton",
                    "GracefulRestart",
                ]),
                ..d
            },
            Vendor::Xcc => RedfishLabOptions {
                reset_types: types(&[
                    "On",
                    "ForceOff",
                    "GracefulShutdown",
                    "GracefulRestart",
                    "ForceRestart",
                    "Nmi",
                    "ForceOn",
                ]),
                ..d
            },
            Vendor::Smc => RedfishLabOptions {
                action_info: true,
                reset_types: types(&[
                    "On",
                    "ForceOff",
                    "GracefulShutdown",
                    "GracefulRestart",
                    "ForceRestart",
                    "Nmi",
                    "ForceOn",
                    "PowerCycle",
                ]),
                ..d
            },
            Vendor::Bmcweb | Vendor::Bmcweb204 => RedfishLabOptions {
                system_id: "system".into(),
                action_info: true,
                reset_types: types(&[
                    "On",
                    "ForceOff",
                    "ForceOn",
                    "ForceRestart",
                    "GracefulRestart",
                    "GracefulShutdown",
                    "PowerCycle",
                    "Nmi",
                ]),
                ..d
            },
            Vendor::Ami | Vendor::AmiTask => RedfishLabOptions {
                system_id: "DGX".into(),
                action_info: true,
                extra_systems: 1,
                reset_types: types(&["ForceOff", "ForceRestart", "GracefulShutdown", "On"]),
                ..d
            },
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
    /// The reset was applied when accepted; the task runs until the
    /// chassis' transition ends (AMI with asynchronous operations).
    follows_transition: bool,
}

struct Inner {
    faults: RedfishFaults,
    sessions: HashMap<String, u64>,
    next_session: u64,
    tasks: HashMap<u64, Task>,
    next_task: u64,
    reset_errors_sent: u32,
    /// The stale-read flip happened.
    flipped: bool,
    /// The first request arrived.
    begun: bool,
    stats: RedfishStats,
}

struct Shared {
    bmc: Bmc,
    opts: RedfishLabOptions,
    decoys: Vec<(String, Bmc)>,
    inner: Mutex<Inner>,
}

/// The reset types offered now: the configured ones, without `Nmi` while
/// the chassis has the `no-nmi` fault.
fn reset_types(shared: &Shared) -> Vec<String> {
    let no_nmi = shared.bmc.lock().faults.no_nmi;
    shared
        .opts
        .reset_types
        .iter()
        .filter(|t| !(no_nmi && *t == "Nmi"))
        .cloned()
        .collect()
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

fn generate(kind: &LabCert, ip: Option<std::net::IpAddr>) -> io::Result<Generated> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let mut names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    names.extend(ip.map(|ip| ip.to_string()).filter(|ip| ip != "127.0.0.1"));
    let key = KeyPair::generate().map_err(cert_error)?;
    match kind {
        LabCert::Given { cert_pem, key_pem } => {
            let bad = |what: &str| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("the given {what} is not PEM"),
                )
            };
            use rustls::pki_types::pem::PemObject;
            let der = rustls::pki_types::CertificateDer::from_pem_slice(cert_pem.as_bytes())
                .map_err(|_| bad("certificate"))?;
            let key = rustls::pki_types::PrivatePkcs8KeyDer::from_pem_slice(key_pem.as_bytes())
                .map_err(|_| bad("key"))?;
            Ok(Generated {
                leaf_der: der.to_vec(),
                chain: vec![der],
                key: key.secret_pkcs8_der().to_vec(),
                trust_pem: cert_pem.clone(),
            })
        }
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
        let generated = opts
            .tls
            .as_ref()
            .map(|k| generate(k, opts.cert_ip))
            .transpose()?;
        if let (Some(g), Some(path)) = (&generated, &opts.cert_path) {
            std::fs::write(path, &g.trust_pem)?;
        }
        let acceptor = generated.as_ref().map(tls_acceptor).transpose()?;
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let decoys = (0..opts.extra_systems)
            .map(|i| {
                let id = match opts.vendor {
                    // The DGX capture: the baseboard is a second system.
                    Vendor::Ami | Vendor::AmiTask if i == 0 => "HGX_Baseboard_0".to_string(),
                    _ => format!("{}-{}", opts.system_id, i + 2),
                };
                let b = Bmc::new(true, Default::default());
                b.set_identity(
                    opts.extra_identities
                        .get(i as usize)
                        .cloned()
                        .unwrap_or_else(|| LabIdentity::for_node(0x8000 + i)),
                );
                (id, b)
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
                reset_errors_sent: 0,
                flipped: false,
                begun: false,
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

    /// Starts a power change under way (a boot with `true`, a shutdown
    /// with `false`) as another actor would, lasting the chassis'
    /// `transition`; the family shows it as it would.
    pub fn begin_transition(&self, on: bool) {
        self.bmc.set_on(!on);
        self.bmc.lock().begin_transition(on);
    }

    /// The service's vendor profile.
    pub fn vendor(&self) -> Vendor {
        self.shared.opts.vendor
    }

    /// Replaces the Redfish fault knobs (the chassis' own are on [`Bmc`]).
    pub fn set_faults(&self, faults: RedfishFaults) {
        let mut i = self.shared.inner();
        i.faults = faults;
        i.reset_errors_sent = 0;
        i.flipped = false;
        i.begun = false;
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
    let begin = {
        let mut i = shared.inner();
        i.stats.requests += 1;
        let first = !i.begun;
        i.begun = true;
        i.faults.transition_at_first_request.filter(|_| first)
    };
    if let Some(on) = begin {
        shared.bmc.set_on(!on);
        shared.bmc.lock().begin_transition(on);
    }
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
                Ok(body) => {
                    let answer = reset(shared, &id, &body);
                    let hold = shared.inner().faults.reset_answer_delay;
                    if !hold.is_zero() {
                        tokio::time::sleep(hold).await;
                    }
                    answer
                }
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
                        "AllowableValues": reset_types(shared),
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
        (Method::GET, ["redfish", "v1", "Chassis"]) => respond(200, &chassis_collection(shared)),
        (Method::GET, ["redfish", "v1", "Chassis", id]) => chassis(shared, id, &path),
        (Method::GET, ["redfish", "v1", "Chassis", id, "Power"]) => {
            chassis_power(shared, id, &path)
        }
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
        "Chassis": {"@odata.id": "/redfish/v1/Chassis"},
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

/// The visible PowerState: a change under way shows as PoweringOn /
/// PoweringOff where the family shows transitions, as the old state where
/// it does not (vendors.md "GET during a transition").
fn power_word(shared: &Shared, bmc: &Bmc, main: bool) -> &'static str {
    let (on, moving) = {
        let mut c = bmc.lock();
        c.counters.status_reads += 1;
        (c.is_on(), c.transition())
    };
    if main && shared.opts.vendor.shows_transitions() {
        if let Some(target) = moving {
            return if target { "PoweringOn" } else { "PoweringOff" };
        }
    }
    if on {
        "On"
    } else {
        "Off"
    }
}

fn chassis_id(system_id: &str) -> String {
    system_id.to_string()
}

fn system(shared: &Shared, id: &str, path: &str) -> Answer {
    let vendor = shared.opts.vendor;
    let (bmc, name, main) = if id == shared.opts.system_id {
        (&shared.bmc, shared.opts.system_name.clone(), true)
    } else if let Some((_, b)) = shared.decoys.iter().find(|(d, _)| d == id) {
        (b, format!("decoy {id}"), false)
    } else {
        return not_found(path);
    };
    let power = power_word(shared, bmc, main);
    let identity = bmc.identity();
    let reset_target = format!("{path}/Actions/ComputerSystem.Reset");
    let action = if shared.opts.action_info {
        json!({"target": reset_target, "@Redfish.ActionInfo": format!("{path}/ResetActionInfo")})
    } else {
        json!({"target": reset_target, "ResetType@Redfish.AllowableValues": reset_types(shared)})
    };
    let mut body = json!({
        "@odata.id": path,
        "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
        "Id": id,
        "Name": name,
        "UUID": identity.uuid,
        "SerialNumber": identity.serial,
        "Manufacturer": vendor.manufacturer(),
        "SystemType": "Physical",
        "PowerState": power,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Links": {"Chassis": [{"@odata.id": format!("/redfish/v1/Chassis/{}", chassis_id(id))}]},
        "Actions": {"#ComputerSystem.Reset": action},
    });
    if let Some(key) = vendor.oem() {
        body["Oem"] = json!({ key: {} });
    }
    if bmc.lock().faults.no_identity {
        // Firmware that publishes neither (both are optional in the schema).
        if let Some(o) = body.as_object_mut() {
            o.remove("UUID");
            o.remove("SerialNumber");
        }
    }
    if !main {
        if matches!(vendor, Vendor::Ami | Vendor::AmiTask) {
            // The DGX capture's HGX_Baseboard_0 has no reset action.
            if let Some(o) = body.as_object_mut() {
                o.remove("Actions");
            }
            body["Oem"] = json!({"Nvidia": {}});
        }
        return respond(200, &body);
    }
    let (shape, flip) = {
        let mut i = shared.inner();
        i.stats.system_reads += 1;
        let flip = i.faults.flip_after_read && !i.flipped;
        if flip {
            i.flipped = true;
        }
        (i.faults.system_body.clone(), flip)
    };
    if flip {
        // Another actor, right after this read: the power changes at once.
        let now = shared.bmc.is_on();
        shared.bmc.set_on(!now);
    }
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

/// The bmc behind a system id (the main one or a decoy).
fn bmc_of<'a>(shared: &'a Shared, id: &str) -> Option<&'a Bmc> {
    if id == chassis_id(&shared.opts.system_id) {
        Some(&shared.bmc)
    } else {
        shared
            .decoys
            .iter()
            .find(|(d, _)| chassis_id(d) == id)
            .map(|(_, b)| b)
    }
}

fn chassis_collection(shared: &Shared) -> Value {
    let mut ids = vec![chassis_id(&shared.opts.system_id)];
    ids.extend(shared.decoys.iter().map(|(d, _)| chassis_id(d)));
    let members: Vec<Value> = ids
        .iter()
        .map(|i| json!({"@odata.id": format!("/redfish/v1/Chassis/{i}")}))
        .collect();
    json!({
        "@odata.id": "/redfish/v1/Chassis",
        "@odata.type": "#ChassisCollection.ChassisCollection",
        "Name": "Chassis Collection",
        "Members@odata.count": members.len(),
        "Members": members,
    })
}

fn chassis(shared: &Shared, id: &str, path: &str) -> Answer {
    let Some(bmc) = bmc_of(shared, id) else {
        return not_found(path);
    };
    let identity = bmc.identity();
    let mut doc = json!({
        "@odata.id": path,
        "@odata.type": "#Chassis.v1_14_0.Chassis",
        "Id": id,
        "Name": format!("chassis {id}"),
        "ChassisType": "RackMount",
        "SerialNumber": identity.serial,
        "PowerState": if bmc.truly_on() { "On" } else { "Off" },
        "Links": {"ComputerSystems": [{"@odata.id": format!("/redfish/v1/Systems/{id}")}]},
    });
    // A chassis without a power meter (`no-meter`) links no Power resource.
    if bmc.lock().meter().is_some() {
        doc["Power"] = json!({"@odata.id": format!("{path}/Power")});
    }
    respond(200, &doc)
}

/// `Power`: the meter's reading (the real draw, unless it lies: `draw-lies`).
fn chassis_power(shared: &Shared, id: &str, path: &str) -> Answer {
    let Some(bmc) = bmc_of(shared, id) else {
        return not_found(path);
    };
    let Some(watts) = bmc.lock().meter() else {
        return not_found(path);
    };
    respond(
        200,
        &json!({
            "@odata.id": path,
            "@odata.type": "#Power.v1_7_0.Power",
            "Id": "Power",
            "Name": "Power",
            "PowerControl": [{
                "@odata.id": format!("{path}#/PowerControl/0"),
                "MemberId": "0",
                "Name": "System Power Control",
                "PowerConsumedWatts": watts,
            }],
        }),
    )
}

/// Applies a chassis operation (IPMI chassis control codes); returns the
/// completion code. The chassis keeps the transition window.
fn apply(shared: &Shared, op: u8) -> u8 {
    shared.bmc.lock().control(op)
}

/// Each family's answers to a reset (vendors.md).
mod answers {
    use super::{empty, error, respond, Answer, Vendor};
    use serde_json::json;

    /// The success answer ("success answer" column).
    pub fn success(v: Vendor) -> Answer {
        match v {
            // Captured iLO 5 transcript: 200 with an `error`-shaped Success.
            Vendor::Ilo => respond(
                200,
                &json!({"error": {"code": "iLO.0.10.ExtendedInfo",
                    "message": "See @Message.ExtendedInfo for more information.",
                    "@Message.ExtendedInfo": [{"MessageId": "Base.1.4.Success"}]}}),
            ),
            Vendor::Smc => respond(
                200,
                &json!({"Success": {"code": "Base.v1_4_0.Success",
                    "Message": "Successfully Completed Request."}}),
            ),
            Vendor::Bmcweb => respond(
                200,
                &json!({"@Message.ExtendedInfo": [{
                    "@odata.type": "#Message.v1_1_1.Message",
                    "Message": "The request completed successfully.",
                    "MessageArgs": [],
                    "MessageId": "Base.1.16.0.Success",
                    "MessageSeverity": "OK",
                    "Resolution": "None"}]}),
            ),
            _ => empty(204),
        }
    }

    /// iLO's refusal: the reason only in MessageArgs, no Message.
    pub fn ilo(reason: &str) -> Answer {
        respond(
            400,
            &json!({"error": {"code": "iLO.0.10.ExtendedInfo",
                "message": "See @Message.ExtendedInfo for more information.",
                "@Message.ExtendedInfo": [{"MessageArgs": [reason],
                    "MessageId": "iLO.2.16.InvalidOperationForSystemState"}]}}),
        )
    }

    /// The answer to a request that would change nothing, or `None` where
    /// the family accepts it.
    pub fn already(v: Vendor, on: bool) -> Option<Answer> {
        match v {
            Vendor::Idrac => {
                let (id, text) = if on {
                    ("IDRAC.2.8.PSU501", "Server is already powered ON.")
                } else {
                    ("IDRAC.2.8.PSU502", "Server is already powered OFF.")
                };
                Some(respond(
                    409,
                    &json!({"error": {"code": "Base.1.12.GeneralError",
                        "message": "A general error has occurred. See ExtendedInfo for more information",
                        "@Message.ExtendedInfo": [{"Message": text, "MessageArgs": [],
                            "MessageId": id, "Resolution": "No response action is required.",
                            "Severity": "Informational"}]}}),
                ))
            }
            Vendor::Ilo => Some(ilo(if on { "Power is on" } else { "Power is off" })),
            _ => None,
        }
    }

    /// A ResetType the system does not publish.
    pub fn not_in_list(v: Vendor, rt: &str) -> Answer {
        match v {
            Vendor::Bmcweb | Vendor::Bmcweb204 => error(
                400,
                "Base.1.16.0.ActionParameterNotSupported",
                &format!("The parameter {rt} for the action ComputerSystem.Reset is not supported on the target resource."),
            ),
            _ => error(
                400,
                "Base.1.8.ActionParameterNotSupported",
                &format!("The parameter {rt} for the action ComputerSystem.Reset is not supported on the target resource."),
            ),
        }
    }
}

fn reset(shared: &Shared, id: &str, body: &[u8]) -> Answer {
    let vendor = shared.opts.vendor;
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
    if !reset_types(shared).contains(&rt) {
        return answers::not_in_list(vendor, &rt);
    }
    if id != shared.opts.system_id {
        if matches!(vendor, Vendor::Ami | Vendor::AmiTask) {
            return not_found(&format!(
                "/redfish/v1/Systems/{id}/Actions/ComputerSystem.Reset"
            ));
        }
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
    let (on, moving) = {
        let mut c = shared.bmc.lock();
        (c.is_on(), c.transition())
    };
    let op = match rt.as_str() {
        "On" | "ForceOn" => 1,
        "ForceOff" | "GracefulShutdown" => 0,
        "PushPowerButton" => u8::from(!moving.unwrap_or(on)),
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
    if vendor == Vendor::Ilo && moving.is_some() {
        // quirks.md 15: iLO refuses during a transition.
        return answers::ilo("Power transition in progress. Retry later");
    }
    // A request that changes nothing: iDRAC and iLO refuse it (also a
    // restart while off); the others accept it and do nothing.
    let settled = moving.is_none();
    let no_op = settled && ((op == 1 && on) || (op == 0 && !on));
    if no_op || (settled && op == 2 && !on) {
        if let Some(a) = answers::already(vendor, op == 1) {
            return a;
        }
    }
    if faults.conflict_when_already && ((op == 1 && on) || (op == 0 && !on)) {
        let word = if on { "ON" } else { "OFF" };
        return error(
            409,
            "IDRAC.2.8.PSU501",
            &format!("Server is already powered {word}."),
        );
    }
    let heading_there = moving.is_some_and(|t| (op == 1 && t) || (op == 0 && !t));
    if vendor == Vendor::AmiTask {
        // Applied now; the task runs until the transition ends.
        if !no_op && !heading_there {
            apply(shared, op);
        }
        return new_task(shared, op, 0, false, true);
    }
    if let Some(t) = faults.task {
        return new_task(shared, op, t.polls, t.fail, false);
    }
    if vendor != Vendor::Generic {
        // These families accept no-ops and requests during a transition.
        if !no_op && !heading_there {
            apply(shared, op);
        }
        return answers::success(vendor);
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

fn new_task(shared: &Shared, op: u8, polls: u32, fail: bool, follows: bool) -> Answer {
    let n = {
        let mut i = shared.inner();
        let n = i.next_task;
        i.next_task += 1;
        i.tasks.insert(
            n,
            Task {
                op,
                polls_left: polls,
                fail,
                done: follows,
                follows_transition: follows,
            },
        );
        n
    };
    let uri = format!("/redfish/v1/TaskService/Tasks/{n}");
    let mut r = respond(202, &task_body(&uri, n, "Running", "OK", None));
    if let Ok(v) = HeaderValue::from_str(&uri) {
        r.headers_mut().insert(LOCATION, v);
    }
    r
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
    let follows = {
        let mut i = shared.inner();
        i.stats.task_polls += 1;
        match i.tasks.get(&n) {
            None => return not_found(path),
            Some(t) => t.follows_transition,
        }
    };
    if follows {
        // DSP0266 asynchronous operations: 202 while running, then 200.
        let moving = shared.bmc.lock().transition().is_some();
        return if moving {
            let mut r = respond(202, &task_body(path, n, "Running", "OK", None));
            if let Ok(v) = HeaderValue::from_str(path) {
                r.headers_mut().insert(LOCATION, v);
            }
            r
        } else {
            respond(200, &task_body(path, n, "Completed", "OK", None))
        };
    }
    let step = {
        let mut i = shared.inner();
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
