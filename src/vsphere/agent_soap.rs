//! The fence_vmware_soap family's own part: options → [`SoapConfig`], and
//! the driver the front runs ([`SoapDriver`]: the vSphere driver for one VM,
//! or, for `list`, `list-status` and `monitor`, a session that lists them).
//!
//! Parsing, validation, timing and output are shared ([`crate::agent::run`]);
//! this module only knows which option feeds which setting, with upstream's
//! rules kept where configurations depend on them:
//!
//! * the plug is a UUID when it reads as one (Python's `uuid.UUID`: 32 hex
//!   digits, hyphens, braces and `urn:uuid:` allowed), the VM's BIOS UUID;
//!   an inventory path when it starts with `/` (`/DC/vm/FOLDER/NAME`:
//!   fencekit searches the datacenter for the name and refuses it when two
//!   VMs there carry it); a VM name otherwise;
//! * TLS only with `--ssl`, `--ssl-secure` or `--ssl-insecure` (upstream
//!   speaks plain HTTP without them; fencekit too, warned), and then port
//!   443 unless `--ipport` says otherwise (80 without TLS);
//! * `--ssl-insecure` is on by presence, as upstream.
//!
//! fencekit-only extensions: `--ca-cert`, `--ssl-fingerprint` (they imply
//! TLS) and `--expect-uuid` (the BIOS or instance UUID, checked by the
//! engine before any change).

use crate::engine::driver::PowerDriver;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::{PowerCommand, PowerState};
use crate::fingerprint::{format_hex as format_fingerprint, parse_sha256 as parse_fingerprint};
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{parse_int, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::platform::PlugEntry;
use crate::secret::Secret;
use crate::tls::TlsTrust;
use crate::vsphere::client::Client;
use crate::vsphere::config::VsphereConfig;
use crate::vsphere::driver::VsphereDriver;
use crate::vsphere::model::{self, VmSelector, VmView};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Which VM the plug names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plug {
    /// No plug: list, list-status, monitor.
    None,
    /// One VM, searched in the datacenter at this inventory path when the
    /// plug was an inventory path.
    Vm {
        /// The name or BIOS UUID.
        selector: VmSelector,
        /// The datacenter's inventory path (`DC1`, `Folder/DC1`).
        datacenter: Option<String>,
    },
}

/// One vCenter (or ESXi) and the VM the plug names.
#[derive(Clone, Debug)]
pub struct SoapConfig {
    /// vCenter's address.
    pub host: String,
    /// Its port (80 or 443 by default, as upstream).
    pub port: u16,
    /// Plain HTTP (no TLS option given, as upstream).
    pub plaintext: bool,
    /// How the certificate is trusted (with TLS).
    pub tls: TlsTrust,
    /// The user.
    pub username: String,
    /// The password (never shown).
    pub password: Secret,
    /// The VM.
    pub plug: Plug,
}

impl SoapConfig {
    /// `http(s)://HOST:PORT/sdk`.
    pub fn sdk_url(&self) -> String {
        let host = match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        };
        let scheme = if self.plaintext { "http" } else { "https" };
        format!("{scheme}://{host}:{}/sdk", self.port)
    }

    /// The native target's configuration for the same VM (its lock key is
    /// the one a `vsphere://` run takes, so both serialise).
    fn native(&self) -> Option<VsphereConfig> {
        match &self.plug {
            Plug::None => None,
            Plug::Vm {
                selector,
                datacenter,
            } => Some(VsphereConfig {
                host: self.host.clone(),
                port: self.port,
                user: Some(self.username.clone()),
                vm: selector.clone(),
                datacenter: datacenter.clone(),
                tls: self.tls.clone(),
            }),
        }
    }
}

/// Python's `uuid.UUID(text)`: `urn:uuid:` and braces stripped, hyphens
/// ignored, 32 hex digits; the canonical lower-case form.
pub fn python_uuid(text: &str) -> Option<String> {
    let t = text.trim();
    let t = t.strip_prefix("urn:").unwrap_or(t);
    let t = t.strip_prefix("uuid:").unwrap_or(t);
    let t = t.trim_matches(|c| c == '{' || c == '}');
    let hex: String = t.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let h = hex.to_ascii_lowercase();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

/// What upstream's plug names: a BIOS UUID, an inventory path or a name.
pub fn parse_plug(plug: &str) -> Result<Plug, String> {
    if plug.is_empty() {
        return Ok(Plug::None);
    }
    if let Some(u) = python_uuid(plug) {
        return Ok(Plug::Vm {
            selector: VmSelector::BiosUuid(u),
            datacenter: None,
        });
    }
    if let Some(path) = plug.strip_prefix('/') {
        // /DATACENTER[/…]/vm/[FOLDER/…]NAME: the datacenter is everything
        // before the first `vm` folder, the VM the last part.
        let parts: Vec<&str> = path.split('/').collect();
        let at = parts.iter().skip(1).position(|p| *p == "vm").map(|i| i + 1);
        let name = parts.last().copied().unwrap_or("");
        return match at {
            Some(i) if i + 1 < parts.len() && !name.is_empty() && !parts[..i].contains(&"") => {
                Ok(Plug::Vm {
                    selector: VmSelector::Name(name.to_string()),
                    datacenter: Some(parts[..i].join("/")),
                })
            }
            _ => Err(format!(
                "the plug '{plug}' is not an inventory path (/DATACENTER/vm/[FOLDER/]NAME)"
            )),
        };
    }
    Ok(Plug::Vm {
        selector: VmSelector::Name(plug.to_string()),
        datacenter: None,
    })
}

/// The certificate trust: a pinned fingerprint, else a CA file, else
/// insecure (by presence, as upstream), else the system store.
fn trust(values: &Values, agent: &Agent) -> Result<TlsTrust, String> {
    if let Some(fp) = values.get(Key::SslFingerprint).filter(|s| !s.is_empty()) {
        return Ok(TlsTrust::Fingerprint(
            parse_fingerprint(fp).map_err(|e| e.to_string())?,
        ));
    }
    if let Some(path) = values.get(Key::CaCert).filter(|s| !s.is_empty()) {
        return Ok(TlsTrust::Verify {
            ca_cert: Some(PathBuf::from(path)),
        });
    }
    if values.flag_of(agent, Key::SslInsecure) {
        return Ok(TlsTrust::Insecure);
    }
    Ok(TlsTrust::Verify { ca_cert: None })
}

/// Builds the configuration from validated option values (the password
/// script, if any, has already replaced `password`). The error is a message
/// that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<SoapConfig, String> {
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    if host.is_empty() {
        return Err("the vCenter address (--ip) is empty".to_string());
    }
    let tls_given = [Key::Ssl, Key::SslSecure, Key::SslInsecure]
        .iter()
        .any(|k| values.flag_of(agent, *k))
        || [Key::CaCert, Key::SslFingerprint]
            .iter()
            .any(|k| values.get(*k).is_some_and(|v| !v.is_empty()));
    let port_text = values.get(Key::Ipport).unwrap_or("80");
    let mut port = parse_int(port_text)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("the port {port_text} (--ipport) is not between 1 and 65535"))?;
    // Upstream's default port is 443 with TLS and 80 without; the
    // definitions can give one default only (80, as upstream's metadata).
    if tls_given && port == 80 {
        port = 443;
    }
    // Listing names no VM: upstream ignores a plug given to list or monitor.
    let listing = matches!(
        values.get(Key::Action).unwrap_or_default(),
        "list" | "list-status" | "monitor"
    );
    let plug = match listing {
        true => Plug::None,
        false => parse_plug(values.get(Key::Plug).unwrap_or_default().trim())?,
    };
    Ok(SoapConfig {
        host,
        port,
        plaintext: !tls_given,
        tls: trust(values, agent)?,
        username: values.get(Key::Username).unwrap_or_default().to_string(),
        password: Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
        plug,
    })
}

/// A one-line description of the configuration for `-v` (never the password).
pub fn describe(cfg: &SoapConfig) -> String {
    let tls = if cfg.plaintext {
        "plain HTTP (no TLS option given)".to_string()
    } else {
        match &cfg.tls {
            TlsTrust::Verify { ca_cert: None } => {
                "certificate verified against the system store".into()
            }
            TlsTrust::Verify { ca_cert: Some(p) } => {
                format!("certificate verified against {}", p.display())
            }
            TlsTrust::Insecure => "certificate NOT verified (--ssl-insecure)".to_string(),
            TlsTrust::Fingerprint(fp) => {
                format!("certificate pinned to {}", format_fingerprint(fp))
            }
        }
    };
    let vm = match &cfg.plug {
        Plug::None => "(none: listing)".to_string(),
        Plug::Vm {
            selector,
            datacenter,
        } => {
            let which = match selector {
                VmSelector::BiosUuid(u) => format!("with BIOS UUID {u}"),
                VmSelector::InstanceUuid(u) => format!("with instance UUID {u}"),
                VmSelector::Moref(m) => m.clone(),
                VmSelector::Name(n) => format!("named '{n}'"),
            };
            match datacenter {
                Some(dc) => format!("{which} in datacenter {dc}"),
                None => which,
            }
        }
    };
    format!(
        "vSphere {} as '{}', password {}, VM {vm}, {tls}",
        cfg.sdk_url(),
        cfg.username,
        if cfg.password.is_empty() {
            "empty"
        } else {
            "[set]"
        },
    )
}

/// The family's configuration from validated option values, for the
/// front (declared in [`FAMILY`]).
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// How the vSphere platform serves fence_vmware_soap.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    ..AgentFamily::new(device)
};

impl Device for SoapConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        // Listing changes nothing: no lock.
        self.native().map(|n| n.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn warnings(&self) -> Vec<String> {
        if self.plaintext {
            vec![format!(
                "{}: no TLS (give --ssl or --ssl-insecure): the password crosses the network in clear text",
                self.sdk_url()
            )]
        } else if self.tls == TlsTrust::Insecure {
            vec!["--ssl-insecure: vCenter's certificate is not verified (anyone on the path could impersonate it)".into()]
        } else {
            Vec::new()
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        // Without TLS the configuration is never used (the URL is http://).
        let trust = if self.plaintext {
            TlsTrust::Insecure
        } else {
            self.tls.clone()
        };
        let (tls, _, _) = crate::tls::client_config(&trust).map_err(|e| e.to_string())?;
        let client = Client::new(&self.sdk_url(), tls).map_err(|e| e.message)?;
        let mode = match &self.plug {
            Plug::None => Mode::List {
                client: Box::new(client),
                user: self.username.clone(),
                password: self.password.clone(),
                connected: false,
            },
            Plug::Vm {
                selector,
                datacenter,
            } => Mode::Vm(Box::new(
                VsphereDriver::new(
                    client,
                    &self.username,
                    self.password.clone(),
                    selector.clone(),
                )
                .with_datacenter(datacenter.clone()),
            )),
        };
        Ok(Box::new(SoapDriver { mode }) as Box<dyn crate::platform::Driver>)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The agent's driver: one VM, or a session that lists them.
pub struct SoapDriver {
    mode: Mode,
}

enum Mode {
    Vm(Box<VsphereDriver>),
    List {
        client: Box<Client>,
        user: String,
        password: Secret,
        connected: bool,
    },
}

/// How long a call may take when the front gives no deadline.
const DEFAULT_LIMIT: Duration = Duration::from_secs(30);

fn listing_only(what: &str) -> DriverError {
    DriverError::new(
        ErrorKind::Config,
        Stage::Status,
        format!("no plug given: {what} needs the VM (--plug)"),
    )
}

/// A listed VM as upstream's `list` prints it: name, BIOS UUID; its state
/// only where it is evidence (a VM on a host that stopped reporting has
/// none).
pub fn plug_entry(vm: &VmView) -> PlugEntry {
    PlugEntry {
        id: vm.name.clone(),
        alias: vm.bios_uuid.clone().unwrap_or_default(),
        state: model::judge(vm).power_state().ok(),
    }
}

impl SoapDriver {
    async fn login(&mut self, deadline: Instant) -> Result<String, DriverError> {
        let Mode::List {
            client,
            user,
            password,
            connected,
        } = &mut self.mode
        else {
            return Ok(String::new());
        };
        if *connected {
            return Ok(String::new());
        }
        let pw = std::str::from_utf8(password.expose()).map_err(|_| {
            DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                "the password is not UTF-8",
            )
        })?;
        let said = client.connect(user, pw, deadline).await?;
        *connected = true;
        Ok(said)
    }
}

impl PowerDriver for SoapDriver {
    async fn connect(&mut self, deadline: Option<Instant>) -> Result<String, DriverError> {
        match &mut self.mode {
            Mode::Vm(d) => d.connect(deadline).await,
            Mode::List { .. } => {
                self.login(deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT))
                    .await
            }
        }
    }

    async fn status(&mut self, deadline: Option<Instant>) -> Result<PowerState, DriverError> {
        match &mut self.mode {
            Mode::Vm(d) => d.status(deadline).await,
            Mode::List { .. } => Err(listing_only("status")),
        }
    }

    async fn observe(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<crate::engine::power::Observed, DriverError> {
        match &mut self.mode {
            Mode::Vm(d) => d.observe(deadline).await,
            Mode::List { .. } => Err(listing_only("status")),
        }
    }

    fn shows_transitions(&self) -> bool {
        match &self.mode {
            Mode::Vm(d) => d.shows_transitions(),
            Mode::List { .. } => false,
        }
    }

    async fn command(
        &mut self,
        command: PowerCommand,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        match &mut self.mode {
            Mode::Vm(d) => d.command(command, deadline).await,
            Mode::List { .. } => Err(listing_only("a power command")),
        }
    }

    async fn identity(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<crate::engine::identity::Identity, DriverError> {
        match &mut self.mode {
            Mode::Vm(d) => d.identity(deadline).await,
            Mode::List { .. } => Err(listing_only("--expect-uuid")),
        }
    }

    fn observes_off(&self) -> bool {
        match &self.mode {
            Mode::Vm(d) => d.observes_off(),
            Mode::List { .. } => false,
        }
    }

    fn set_up_answered(&self) -> bool {
        match &self.mode {
            Mode::Vm(d) => d.set_up_answered(),
            Mode::List { connected, .. } => *connected,
        }
    }

    fn state_detail(&self) -> Option<String> {
        match &self.mode {
            Mode::Vm(d) => d.state_detail(),
            Mode::List { .. } => None,
        }
    }

    fn take_tolerances(&mut self) -> Vec<crate::engine::event::Tolerance> {
        match &mut self.mode {
            Mode::Vm(d) => d.take_tolerances(),
            Mode::List { .. } => Vec::new(),
        }
    }

    fn take_warnings(&mut self) -> Vec<String> {
        match &mut self.mode {
            Mode::Vm(d) => d.take_warnings(),
            Mode::List { .. } => Vec::new(),
        }
    }

    async fn close(&mut self) {
        match &mut self.mode {
            Mode::Vm(d) => d.close().await,
            Mode::List {
                client, connected, ..
            } => {
                if *connected {
                    let _ = client.logout(Instant::now() + Duration::from_secs(5)).await;
                    *connected = false;
                }
            }
        }
    }
}

impl crate::platform::PlatformDriver for SoapDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let calls = match &self.mode {
            Mode::Vm(d) => d.calls(),
            Mode::List { client, .. } => client.calls,
        };
        (calls, calls, 0)
    }

    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        let d = deadline.unwrap_or_else(|| Instant::now() + DEFAULT_LIMIT);
        if matches!(self.mode, Mode::Vm(_)) {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Status,
                "list names no VM: give no --plug",
            ));
        }
        self.login(d).await?;
        let Mode::List { client, .. } = &mut self.mode else {
            unreachable!("checked above")
        };
        let vms = client.list_vms(None, d).await?;
        Ok(vms.iter().map(plug_entry).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<SoapConfig, String> {
        let (v, a) = validated("fence_vmware_soap", pairs);
        config(&v, &a)
    }

    const BASE: &[(&str, &str)] = &[
        ("ip", "vc.example.com"),
        ("username", "fence@vsphere.local"),
        ("password", "p4ss"),
        ("plug", "node-1"),
    ];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        BASE.iter().chain(extra).copied().collect()
    }

    #[test]
    fn ports_and_tls_follow_upstream() {
        let c = cfg_of(BASE).unwrap();
        assert_eq!(c.sdk_url(), "http://vc.example.com:80/sdk");
        assert!(c.plaintext);
        assert_eq!(c.warnings().len(), 1);
        for flag in ["ssl", "ssl_secure"] {
            let c = cfg_of(&with(&[(flag, "1")])).unwrap();
            assert_eq!(c.sdk_url(), "https://vc.example.com:443/sdk", "{flag}");
            assert_eq!(c.tls, TlsTrust::Verify { ca_cert: None });
            assert!(c.warnings().is_empty());
        }
        // On by presence, as upstream: ssl_insecure=0 is insecure too.
        let c = cfg_of(&with(&[("ssl_insecure", "0")])).unwrap();
        assert_eq!(c.tls, TlsTrust::Insecure);
        assert_eq!(c.port, 443);
        let c = cfg_of(&with(&[("ssl", "1"), ("ipport", "8443")])).unwrap();
        assert_eq!(c.sdk_url(), "https://vc.example.com:8443/sdk");
        let c = cfg_of(&with(&[("ipport", "8080")])).unwrap();
        assert_eq!(c.sdk_url(), "http://vc.example.com:8080/sdk");
        let c = cfg_of(&with(&[("ca_cert", "/etc/vc.pem")])).unwrap();
        assert!(!c.plaintext && c.port == 443);
        assert!(cfg_of(&with(&[("ipport", "0")])).is_err());
        assert!(cfg_of(&with(&[("ssl_fingerprint", "nope")])).is_err());
    }

    #[test]
    fn plugs_read_as_upstream_reads_them() {
        let vm = |s: VmSelector, dc: Option<&str>| Plug::Vm {
            selector: s,
            datacenter: dc.map(str::to_string),
        };
        let u = "4211ab00-1111-2222-3333-444455556666";
        for text in [
            u,
            "4211AB00111122223333444455556666",
            "{4211ab00-1111-2222-3333-444455556666}",
            "urn:uuid:4211ab00-1111-2222-3333-444455556666",
        ] {
            assert_eq!(
                parse_plug(text).unwrap(),
                vm(VmSelector::BiosUuid(u.into()), None),
                "{text}"
            );
        }
        assert_eq!(
            parse_plug("node-1").unwrap(),
            vm(VmSelector::Name("node-1".into()), None)
        );
        assert_eq!(
            parse_plug("/DC1/vm/Discovered virtual machine/db 1").unwrap(),
            vm(VmSelector::Name("db 1".into()), Some("DC1"))
        );
        assert_eq!(
            parse_plug("/Site A/DC2/vm/x").unwrap(),
            vm(VmSelector::Name("x".into()), Some("Site A/DC2"))
        );
        assert_eq!(parse_plug("").unwrap(), Plug::None);
        for bad in ["/DC1/host/x", "/vm/x", "/DC1/vm/", "/DC1/vm", "//vm/x"] {
            assert!(parse_plug(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lock_keys_match_the_native_target() {
        let c = cfg_of(&with(&[("ssl", "1")])).unwrap();
        let native = VsphereConfig::from_url("vsphere://vc.example.com/node-1").unwrap();
        assert_eq!(c.lock_key(), Some(native.lock_key()));
        let listing = cfg_of(&[("ip", "vc"), ("username", "u"), ("action", "list")]).unwrap();
        assert_eq!(listing.plug, Plug::None);
        assert_eq!(listing.lock_key(), None);
        let listing = cfg_of(&with(&[("action", "monitor")])).unwrap();
        assert_eq!(
            listing.plug,
            Plug::None,
            "a plug given to monitor is ignored"
        );
    }

    #[test]
    fn the_description_never_shows_the_password() {
        let c = cfg_of(&with(&[("ssl_insecure", "")])).unwrap();
        let d = describe(&c);
        assert!(
            d.contains("password [set]") && d.contains("NOT verified") && !d.contains("p4ss"),
            "{d}"
        );
        assert!(!format!("{c:?}").contains("p4ss"));
    }
}
