//! IPMI settings from a target URL or an inventory's fields and the common
//! [`MethodOptions`] (for the platform's builder, `super::platform`): their
//! checks and defaults, shared by the command line and the inventory.

use super::config::{self, AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use crate::platform::build::{BuildError, Fields, MethodOptions};
use crate::secret::Secret;
use std::path::PathBuf;

/// What is wrong with an IPMI method's settings.
#[derive(Debug, thiserror::Error)]
pub enum IpmiBuildError {
    /// A target or setting.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// A workaround name fencekit does not know.
    #[error(transparent)]
    Workaround(#[from] super::workaround::UnknownWorkaround),
    /// Workarounds on a method that does not speak IPMI.
    #[error("workarounds apply to IPMI methods only")]
    WorkaroundsNotIpmi,
    /// An IPMI 1.5 authentication type with `ipmi_version` 2.0.
    #[error("an authentication type (auth) applies to IPMI 1.5 only, not to ipmi_version 2.0")]
    AuthWithLanplus,
    /// An IPMI version other than 2.0 and 1.5.
    #[error("ipmi_version '{0}' (expected 2.0 or 1.5)")]
    IpmiVersion(String),
    /// Both a K_g key and a K_g file.
    #[error("give only one of a K_g key and a K_g file")]
    TwoKg,
    /// A K_g file that cannot be read.
    #[error("cannot read kg_file {}: {source}", path.display())]
    KgFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl From<IpmiBuildError> for BuildError {
    fn from(e: IpmiBuildError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a target URL names: `ipmi://…` or a bare host (an
/// unknown scheme is refused by [`config::parse_target`]).
pub fn from_url(url: &str, o: &MethodOptions) -> Result<IpmiConfig, BuildError> {
    let t = config::parse_target(url).map_err(IpmiBuildError::from)?;
    Ok(settings(&t.host, t.port, t.username, o)?)
}

/// The settings of an inventory method at `endpoint` or at `ip`.
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<IpmiConfig, BuildError> {
    match (endpoint, ip) {
        (Some(e), _) => from_url(e, o),
        (None, Some(ip)) => Ok(settings(ip, None, None, o)?),
        (None, None) => Err(BuildError::NoAddress),
    }
}

/// Workarounds named for a method of another driver.
pub fn foreign_options(o: &MethodOptions) -> Result<(), BuildError> {
    let named = o
        .workarounds
        .as_deref()
        .is_some_and(|w| !super::workaround::Workarounds::parse(w).is_ok_and(|w| w.is_empty()));
    match named {
        true => Err(IpmiBuildError::WorkaroundsNotIpmi.into()),
        false => Ok(()),
    }
}

fn settings(
    host: &str,
    port: Option<u16>,
    url_user: Option<String>,
    o: &MethodOptions,
) -> Result<IpmiConfig, IpmiBuildError> {
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
    c.version = match (o.ipmi_version.as_deref(), auth) {
        (Some("1.5"), a) | (None, a @ Some(_)) => Version::Lan15(a),
        (Some("2.0") | None, None) => Version::Lanplus,
        (Some("2.0"), Some(_)) => return Err(IpmiBuildError::AuthWithLanplus),
        (Some(v), _) => return Err(IpmiBuildError::IpmiVersion(v.to_string())),
    };
    c.kg = match (&o.kg_hex, &o.kg_file) {
        (Some(_), Some(_)) => return Err(IpmiBuildError::TwoKg),
        (Some(hex), None) => Some(config::parse_hex_kg(hex)?),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|source| IpmiBuildError::KgFile {
                path: path.clone(),
                source,
            })?;
            Some(config::parse_hex_kg(text.trim())?)
        }
        (None, None) => None,
    };
    c.accept_unauthenticated_replies = o.accept_unauthenticated_replies;
    if let Some(w) = &o.workarounds {
        c.workarounds = super::workaround::Workarounds::parse(w)?;
    }
    // Lengths are checked when the password is known (at build time).
    Ok(c)
}

/// An inventory method's fields: an address.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !f.has("endpoint") && !f.has("ip") {
        return Err("an ipmi method needs endpoint = \"ipmi://HOST[:PORT]\" or ip".into());
    }
    Ok(())
}
