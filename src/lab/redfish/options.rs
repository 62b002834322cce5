//! How a lab Redfish service is set up and what it saw: its options
//! (credentials, certificate, systems, reset types, sessions), each vendor
//! family's profile of them, the Redfish fault knobs, and the statistics
//! tests read. [`super`] re-exports all of it.

use super::vendor::Vendor;
use crate::lab::bmc::LabIdentity;
use std::path::PathBuf;

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
