//! From the options of a command that acts on targets to node plans and
//! engine timing: target URLs (`ipmi://`, `redfish://`, `ssh://`, `--ip`)
//! get their method from the options, inventory names from the inventory.
//! Shared by `fencekit status|on|off|…` ([`super::run`]) and
//! `verify|check|list` ([`super::verify`]).

use super::args::{ActionArgs, Driver, IpmiVersion, Method};
use crate::engine::identity::ExpectedIdentity;
use crate::engine::policy::{Policy, PowerTimeout};
use crate::engine::power::RebootMethod;
use crate::exit;
use crate::fleet::inventory::Inventory;
use crate::fleet::plan::{select, NodePlan};
use crate::ipmi::config::{self, AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use crate::method::credential::CredentialRef;
use crate::method::spec::MethodSpec;
use crate::redfish::config::{is_redfish_url, parse_target as parse_redfish_target};
use crate::secret::Secret;
use crate::ssh::config::{SshAuth, SshConfig};
use std::time::Duration;

/// The credential reference the command-line options name.
fn cli_credential(a: &ActionArgs) -> CredentialRef {
    if let Some(p) = &a.password {
        CredentialRef::Inline(Secret::from_str_value(p))
    } else if let Some(f) = &a.password_file {
        CredentialRef::File(f.clone())
    } else if let Some(v) = &a.password_env {
        CredentialRef::Env(v.clone())
    } else if let Some(s) = &a.password_script {
        CredentialRef::Script(s.clone())
    } else if let Some(v) = std::env::var_os("FENCEKIT_PASSWORD") {
        CredentialRef::Inline(Secret::new(v.into_encoded_bytes()))
    } else {
        CredentialRef::None
    }
}

fn redfish_method(a: &ActionArgs, url: &str) -> Result<MethodSpec, String> {
    let t = parse_redfish_target(url)?;
    let mut c = t.config(a.username.as_deref().unwrap_or(""), Secret::default());
    if let Some(u) = &a.systems_uri {
        c.systems_uri = Some(u.clone());
    }
    if let Some(u) = &a.redfish_uri {
        c.redfish_uri = u.clone();
    }
    c.plug = a.plug.clone();
    c.tls = crate::redfish::config::tls_trust(
        a.ssl_insecure,
        a.ca_cert.as_deref(),
        a.ssl_fingerprint.as_deref(),
    )?;
    c.session_auth = a.redfish_session;
    c.validate()?;
    Ok(MethodSpec::Redfish {
        config: c,
        credential: cli_credential(a),
        expect: Default::default(),
    })
}

fn ssh_method(a: &ActionArgs, url: &str) -> Result<MethodSpec, String> {
    let t = crate::ssh::config::parse_target(url)?;
    let username = t
        .username
        .or_else(|| a.username.clone())
        .ok_or("an SSH target needs a user name: ssh://USER@HOST/… or --username")?;
    let mut profile = t.profile;
    if let (crate::ssh::config::Profile::Virsh { plug }, Some(p)) = (&mut profile, &a.plug) {
        if plug.is_none() {
            *plug = Some(p.clone());
        }
    }
    let mut c = SshConfig::new(&t.host, &username, SshAuth::Agent, profile);
    c.port = t.port;
    c.host_keys = crate::ssh::hostkey::host_key_policy(
        a.ssh_known_hosts.as_deref(),
        a.ssh_host_key.as_deref(),
        a.ssh_accept_new,
    )?;
    c.use_sudo = a.use_sudo;
    c.missing_as_off = a.missing_as_off;
    c.connect_timeout = a.login_timeout;
    Ok(MethodSpec::Ssh {
        config: c,
        identity: a.identity_file.clone(),
        agent: a.ssh_agent,
        credential: cli_credential(a),
        expect: Default::default(),
    })
}

/// The identity `--expect-uuid` / `--expect-serial` name.
fn cli_expected(a: &ActionArgs) -> Result<ExpectedIdentity, String> {
    ExpectedIdentity::new(a.expect_uuid.as_deref(), a.expect_serial.as_deref())
        .map_err(|e| format!("--expect-uuid/--expect-serial: {e}"))
}

/// The method a target URL (or `--ip`) gets from the command-line options,
/// pinned to `--expect-uuid` / `--expect-serial`.
fn url_method(a: &ActionArgs, url: &str) -> Result<MethodSpec, String> {
    let mut m = unpinned_url_method(a, url)?;
    m.set_expected(cli_expected(a)?)?;
    Ok(m)
}

fn unpinned_url_method(a: &ActionArgs, url: &str) -> Result<MethodSpec, String> {
    if is_redfish_url(url) {
        return redfish_method(a, url);
    }
    if url.to_ascii_lowercase().starts_with("ssh://") {
        return ssh_method(a, url);
    }
    let t = config::parse_target(url)?;
    let credential = cli_credential(a);
    let auth: Option<AuthType> = a.auth.as_deref().map(str::parse).transpose()?;
    let username = t
        .username
        .or_else(|| a.username.clone())
        .unwrap_or_default();
    let mut c = IpmiConfig::new(
        t.host,
        t.port.or(a.ipport).unwrap_or(623),
        username,
        Secret::default(),
    );
    c.privilege = a.privlvl.parse::<Privilege>()?;
    c.cipher = a.cipher.parse::<CipherChoice>()?;
    c.version = match (a.ipmi_version, auth) {
        (IpmiVersion::V15, auth) => Version::Lan15(auth),
        (IpmiVersion::V20, Some(auth)) => Version::Lan15(Some(auth)),
        (IpmiVersion::V20, None) => Version::Lanplus,
    };
    c.kg = a
        .hexadecimal_kg
        .as_deref()
        .map(config::parse_hex_kg)
        .transpose()?;
    c.accept_unauthenticated_replies = a.accept_unauthenticated_replies;
    Ok(MethodSpec::Ipmi {
        config: c,
        credential,
        expect: Default::default(),
    })
}

/// Native timing from the command-line options.
pub fn policy(a: &ActionArgs) -> Policy {
    Policy {
        power_wait: a.power_wait,
        power_timeout: PowerTimeout::Wall(a.power_timeout),
        poll_interval: a.poll_interval,
        poll_interval_max: a.poll_interval.max(Duration::from_secs(1)),
        confirm: a.confirm,
        retry_on: a.retry_on,
        method: match a.method {
            Method::Onoff => RebootMethod::OnOff,
            Method::Cycle => RebootMethod::Cycle,
        },
        step_timeout: Some(a.login_timeout),
        deadline: None,
        ..Policy::native()
    }
}

/// Resolves the targets of a command into node plans.
pub fn plans(a: &ActionArgs) -> Result<Vec<NodePlan>, String> {
    let inventory = a.inventory.as_deref().map(Inventory::load).transpose()?;
    let mut words = a.targets.clone();
    if let Some(ip) = &a.ip {
        let host = if ip.contains(':') {
            format!("[{ip}]")
        } else {
            ip.clone()
        };
        words.push(match a.driver {
            Driver::Ipmi => format!("ipmi://{host}"),
            Driver::Redfish => match a.ipport {
                Some(p) => format!("redfish://{host}:{p}"),
                None => format!("redfish://{host}"),
            },
            Driver::Ssh => format!(
                "ssh://{}{host}:{}/virsh/{}",
                a.username
                    .as_deref()
                    .map(|u| format!("{u}@"))
                    .unwrap_or_default(),
                a.ipport.unwrap_or(22),
                a.plug.as_deref().unwrap_or("")
            ),
        });
    }
    if words.is_empty() && !a.all {
        return Err(
            "no target given: name one as ipmi://HOST[:PORT], use --ip HOST, or name \
                    inventory nodes (--inventory PATH) or --all"
                .into(),
        );
    }
    if !cli_expected(a)?.is_empty() {
        // One expected identity names one machine: one URL target, no
        // inventory names (those are pinned in the inventory).
        let urls = words.iter().filter(|w| w.contains("://")).count();
        if a.all || urls != words.len() || urls != 1 {
            return Err(
                "--expect-uuid/--expect-serial name one machine: give exactly one target URL \
                 (or --ip); pin inventory nodes with uuid = \"…\" / serial = \"…\" in the \
                 inventory"
                    .into(),
            );
        }
    }
    let mut p = select(&words, a.all, inventory.as_ref(), &|u| url_method(a, u))?;
    if p.is_empty() {
        return Err("the selection matches no node".into());
    }
    let mut warned: Vec<String> = Vec::new();
    for m in p.iter().flat_map(|n| &n.levels).filter(|m| m.cleartext()) {
        if !warned.contains(&m.endpoint()) {
            eprintln!(
                "fencekit: warning: {}: plain HTTP: the password and the power commands cross \
                 the network unprotected",
                m.endpoint()
            );
            warned.push(m.endpoint());
        }
    }
    // SNMP: v1/v2c communities and MD5/DES are accepted for old PDUs, said once per PDU.
    for m in p.iter().flat_map(|n| &n.levels) {
        if let MethodSpec::Snmp { config, .. } = m {
            for w in config.legacy_warnings() {
                if !warned.contains(&w) {
                    eprintln!("fencekit: warning: {w}");
                    warned.push(w);
                }
            }
        }
    }
    for n in &mut p {
        if n.address.is_none() {
            n.address = a.address.clone();
        }
        if n.probe_ports.is_empty() {
            n.probe_ports = a.probe_ports.clone();
        }
    }
    Ok(p)
}

/// Warns once that `--password` is visible to other local users.
pub fn warn_visible_password(a: &ActionArgs) {
    if a.password.is_some() {
        eprintln!(
            "fencekit: warning: --password is visible to other local users; prefer \
             --password-file, --password-env or FENCEKIT_PASSWORD"
        );
    }
}

/// What every command acting on targets does first: logging, the
/// `--password` warning, and the plan. `Err` is the exit code (usage).
pub fn begin(a: &ActionArgs) -> Result<Vec<NodePlan>, i32> {
    crate::runtime::init_logging(a.verbose);
    warn_visible_password(a);
    plans(a).map_err(|m| {
        eprintln!("fencekit: {m}");
        exit::USAGE
    })
}
