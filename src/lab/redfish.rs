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
//!
//! The parts: the options, fault knobs and statistics (`options`, all
//! re-exported here), the vendor families and their answers (`vendor`),
//! the state the handlers share (`state`), connections, authentication,
//! sessions and routing (`service`), the resources (`resources`), resets
//! and tasks (`actions`), and the HTTP answer shapes (`http`). This file
//! starts the service, with its certificate.

use super::bmc::{Bmc, LabIdentity};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;

mod actions;
mod http;
mod options;
mod resources;
mod service;
mod state;
mod vendor;

pub use options::{
    LabCert, LabErrorAnswer, LabTask, RedfishFaults, RedfishLabOptions, RedfishStats, SystemBody,
    STANDARD_RESET_TYPES,
};
pub use vendor::Vendor;

use service::accept_loop;
use state::{Inner, Shared};

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

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use std::time::Duration;
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
