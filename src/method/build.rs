//! The one method builder: from a target URL (or an inventory method's
//! driver and address) and [`MethodOptions`] to a [`MethodSpec`]. The command
//! line and the inventory both fill `MethodOptions` and come here, so they
//! share every validation (an `auth` type is IPMI 1.5's; a pinned host key
//! excludes accept-new; one kind of TLS trust) and every default.
//! Settings that belong to a run rather than a method (timeouts) are applied
//! by the caller to every method alike ([`MethodSpec::set_login_timeout`]).

use super::credential::CredentialRef;
use super::spec::MethodSpec;
use crate::engine::identity::ExpectedIdentity;
use crate::ipmi::config::{self, AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use crate::redfish::config::{is_redfish_url, parse_target as parse_redfish_target};
use crate::secret::Secret;
use crate::ssh::config::{Profile, SshAuth, SshConfig};
use std::path::PathBuf;

/// Everything a method can be given besides its endpoint, whether it comes
/// from command-line options or inventory fields. `None`/`false`: not given.
#[derive(Clone, Debug, Default)]
pub struct MethodOptions {
    /// User name (a user in the URL wins).
    pub username: Option<String>,
    /// Where the password comes from.
    pub credential: CredentialRef,
    /// Port, when the endpoint has none.
    pub ipport: Option<u16>,
    /// IPMI: `auto`, `3` or `17`.
    pub cipher: Option<String>,
    /// IPMI: privilege level.
    pub privlvl: Option<String>,
    /// IPMI: `2.0` or `1.5` (an `auth` type alone implies 1.5).
    pub ipmi_version: Option<String>,
    /// IPMI 1.5: `md5`, `password` or `none`.
    pub auth: Option<String>,
    /// IPMI: K_g in hexadecimal.
    pub kg_hex: Option<String>,
    /// IPMI: a file holding K_g in hexadecimal.
    pub kg_file: Option<PathBuf>,
    /// IPMI 1.5: trust replies without an authentication code when the BMC
    /// says per-message authentication is disabled.
    pub accept_unauthenticated_replies: bool,
    /// Redfish: the system's URI.
    pub systems_uri: Option<String>,
    /// Redfish: the service root.
    pub redfish_uri: Option<String>,
    /// Redfish: the system's id; virsh: the domain.
    pub plug: Option<String>,
    /// Redfish: a private CA (PEM).
    pub ca_cert: Option<PathBuf>,
    /// Redfish: a pinned certificate fingerprint.
    pub ssl_fingerprint: Option<String>,
    /// Redfish: no certificate check.
    pub ssl_insecure: bool,
    /// Redfish: session login instead of basic auth.
    pub redfish_session: bool,
    /// SSH: known_hosts file.
    pub ssh_known_hosts: Option<PathBuf>,
    /// SSH: a pinned host key fingerprint.
    pub ssh_host_key: Option<String>,
    /// SSH: trust an unknown host key (and record it).
    pub ssh_accept_new: bool,
    /// SSH: a private key file (the credential is its passphrase).
    pub identity_file: Option<PathBuf>,
    /// SSH: the ssh-agent.
    pub ssh_agent: bool,
    /// SSH: run commands with sudo.
    pub use_sudo: bool,
    /// SSH virsh: a missing domain counts as off.
    pub missing_as_off: bool,
    /// Manual: what the person must do.
    pub instructions: Option<String>,
    /// The system UUID the machine must report before any power command
    /// (`--expect-uuid`, inventory `uuid`).
    pub uuid: Option<String>,
    /// The serial number it must report (`--expect-serial`, inventory `serial`).
    pub serial: Option<String>,
}

/// The identity `o` pins, applied to `m` (an error for a method that has no
/// device that could report one).
fn pinned(mut m: MethodSpec, o: &MethodOptions) -> Result<MethodSpec, String> {
    m.set_expected(ExpectedIdentity::new(
        o.uuid.as_deref(),
        o.serial.as_deref(),
    )?)?;
    Ok(m)
}

/// The method a target URL names: `ipmi://`, `redfish://` (and its
/// variants) or `ssh://`.
pub fn from_url(url: &str, o: &MethodOptions) -> Result<MethodSpec, String> {
    pinned(unpinned_from_url(url, o)?, o)
}

fn unpinned_from_url(url: &str, o: &MethodOptions) -> Result<MethodSpec, String> {
    if is_redfish_url(url) {
        return redfish(url, o);
    }
    if url.to_ascii_lowercase().starts_with("ssh://") {
        return ssh(url, o);
    }
    let t = config::parse_target(url)?;
    ipmi(&t.host, t.port, t.username, o)
}

/// The method of driver `driver` (`ipmi`, `redfish`, `ssh`, `manual`; from
/// the endpoint's scheme when `None`) at `endpoint`, or at `ip` (with
/// `o.ipport`) when there is no endpoint. `node` names a manual method.
pub fn from_parts(
    node: &str,
    driver: Option<&str>,
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<MethodSpec, String> {
    pinned(unpinned_from_parts(node, driver, endpoint, ip, o)?, o)
}

fn unpinned_from_parts(
    node: &str,
    driver: Option<&str>,
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<MethodSpec, String> {
    let bracket = |ip: &str| {
        if ip.contains(':') {
            format!("[{ip}]")
        } else {
            ip.to_string()
        }
    };
    match driver {
        Some("manual") => Ok(MethodSpec::Manual {
            node: node.to_string(),
            instructions: o
                .instructions
                .clone()
                .unwrap_or_else(|| "(the inventory gives no instructions)".into()),
        }),
        Some("redfish") => match (endpoint, ip) {
            (Some(e), _) => redfish(e, o),
            (None, Some(ip)) => {
                let url = match o.ipport {
                    Some(p) => format!("redfish://{}:{p}", bracket(ip)),
                    None => format!("redfish://{}", bracket(ip)),
                };
                redfish(&url, o)
            }
            (None, None) => Err("no endpoint or ip".into()),
        },
        Some("ssh") => ssh(endpoint.ok_or("no endpoint")?, o),
        Some("ipmi") | None => match (endpoint, ip) {
            (Some(e), _) => {
                let t = config::parse_target(e)?;
                ipmi(&t.host, t.port, t.username, o)
            }
            (None, Some(ip)) => ipmi(ip, None, None, o),
            (None, None) => Err("no endpoint or ip".into()),
        },
        Some(other) => Err(format!(
            "unknown driver '{other}' (expected ipmi, redfish, ssh or manual)"
        )),
    }
}

fn ipmi(
    host: &str,
    port: Option<u16>,
    url_user: Option<String>,
    o: &MethodOptions,
) -> Result<MethodSpec, String> {
    let username = url_user.or_else(|| o.username.clone()).unwrap_or_default();
    let mut c = IpmiConfig::new(
        host,
        port.or(o.ipport).unwrap_or(623),
        username,
        Secret::default(),
    );
    if let Some(s) = &o.cipher {
        c.cipher = s.parse::<CipherChoice>()?;
    }
    if let Some(p) = &o.privlvl {
        c.privilege = p.parse::<Privilege>()?;
    }
    let auth = o.auth.as_deref().map(str::parse::<AuthType>).transpose()?;
    c.version =
        match (o.ipmi_version.as_deref(), auth) {
            (Some("1.5"), a) | (None, a @ Some(_)) => Version::Lan15(a),
            (Some("2.0") | None, None) => Version::Lanplus,
            (Some("2.0"), Some(_)) => return Err(
                "an authentication type (auth) applies to IPMI 1.5 only, not to ipmi_version 2.0"
                    .into(),
            ),
            (Some(v), _) => return Err(format!("ipmi_version '{v}' (expected 2.0 or 1.5)")),
        };
    c.kg = match (&o.kg_hex, &o.kg_file) {
        (Some(_), Some(_)) => return Err("give only one of a K_g key and a K_g file".into()),
        (Some(hex), None) => Some(config::parse_hex_kg(hex)?),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read kg_file {}: {e}", path.display()))?;
            Some(config::parse_hex_kg(text.trim())?)
        }
        (None, None) => None,
    };
    c.accept_unauthenticated_replies = o.accept_unauthenticated_replies;
    // Lengths are checked when the password is known (at build time).
    Ok(MethodSpec::Ipmi {
        config: c,
        credential: o.credential.clone(),
        expect: ExpectedIdentity::default(),
    })
}

fn redfish(url: &str, o: &MethodOptions) -> Result<MethodSpec, String> {
    let t = parse_redfish_target(url)?;
    let mut c = t.config(o.username.as_deref().unwrap_or(""), Secret::default());
    if let Some(u) = &o.systems_uri {
        c.systems_uri = Some(u.clone());
    }
    if let Some(u) = &o.redfish_uri {
        c.redfish_uri = u.clone();
    }
    c.plug = o.plug.clone();
    c.tls = crate::redfish::config::tls_trust(
        o.ssl_insecure,
        o.ca_cert.as_deref(),
        o.ssl_fingerprint.as_deref(),
    )?;
    c.session_auth = o.redfish_session;
    c.validate()?;
    Ok(MethodSpec::Redfish {
        config: c,
        credential: o.credential.clone(),
        expect: ExpectedIdentity::default(),
    })
}

fn ssh(url: &str, o: &MethodOptions) -> Result<MethodSpec, String> {
    let t = crate::ssh::config::parse_target(url)?;
    let username = t
        .username
        .or_else(|| o.username.clone())
        .ok_or("an SSH method needs a user name: ssh://USER@HOST/… or a username")?;
    let mut profile = t.profile;
    if let (Profile::Virsh { plug }, Some(p)) = (&mut profile, &o.plug) {
        if plug.is_none() {
            *plug = Some(p.clone());
        }
    }
    let mut c = SshConfig::new(&t.host, &username, SshAuth::Agent, profile);
    c.port = t.port;
    c.host_keys = crate::ssh::hostkey::host_key_policy(
        o.ssh_known_hosts.as_deref(),
        o.ssh_host_key.as_deref(),
        o.ssh_accept_new,
    )?;
    c.use_sudo = o.use_sudo;
    c.missing_as_off = o.missing_as_off;
    Ok(MethodSpec::Ssh {
        config: c,
        identity: o.identity_file.clone(),
        agent: o.ssh_agent,
        credential: o.credential.clone(),
        expect: ExpectedIdentity::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_auth_type_means_ipmi_15_and_contradicts_an_explicit_20() {
        let o = MethodOptions {
            auth: Some("md5".into()),
            ..Default::default()
        };
        let m = from_url("ipmi://bmc", &o).unwrap();
        assert!(matches!(
            m,
            MethodSpec::Ipmi { ref config, .. } if matches!(config.version, Version::Lan15(Some(_)))
        ));
        let o = MethodOptions {
            ipmi_version: Some("2.0".into()),
            ..o
        };
        let e = from_url("ipmi://bmc", &o).unwrap_err();
        assert!(e.contains("IPMI 1.5 only"), "{e}");
        // The same rule for an inventory method.
        let e = from_parts("n", Some("ipmi"), None, Some("10.0.0.1"), &o).unwrap_err();
        assert!(e.contains("IPMI 1.5 only"), "{e}");
    }

    #[test]
    fn url_and_parts_build_the_same_method() {
        let o = MethodOptions {
            username: Some("admin".into()),
            ipport: Some(6230),
            cipher: Some("3".into()),
            ..Default::default()
        };
        let a = from_url("ipmi://10.0.0.1", &o).unwrap();
        let b = from_parts("n", None, None, Some("10.0.0.1"), &o).unwrap();
        assert_eq!(a.endpoint(), b.endpoint());
        assert_eq!(a.endpoint(), "ipmi://10.0.0.1:6230");
        assert_eq!(a.username(), "admin");
    }
}
