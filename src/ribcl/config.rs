//! What a caller sets for one HPE iLO reached through RIBCL: its address
//! and port (443), the user, the TLS trust, a forced RIBCL version
//! (upstream's `--ribcl-version`). `ilo://[USER@]HOST[:PORT]` targets, and
//! the settings from a URL or an inventory method's fields with the common
//! [`MethodOptions`] (for the platform's builder, `super::platform`).

use crate::engine::driver::UrlForm;
use crate::platform::build::{has_scheme, BuildError, Fields, MethodOptions};
use crate::platform::target::{host_port, Target};
use crate::tls::TlsTrust;

/// The iLO's RIBCL port (TLS).
pub const DEFAULT_PORT: u16 = 443;

/// The URL forms (`--help`, man pages, README).
pub const URL_FORMS: &[UrlForm] = &[UrlForm {
    scheme: "ilo",
    form: "ilo://[USER@]HOST[:PORT]",
    meaning: "an HPE iLO (iLO, iLO 2, iLO 3/4) through RIBCL over TLS",
    target: true,
    example: "ilo://fence@ilo-node1.example.com",
}];

/// Why an iLO target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `ilo://[USER@]HOST[:PORT]`.
    #[error("'{0}' is not an iLO target (expected ilo://[USER@]HOST[:PORT], e.g. ilo://fence@ilo-node1.example.com)")]
    BadTarget(String),
    /// A host that cannot be one.
    #[error("'{0}' cannot be an iLO's host")]
    BadHost(String),
    /// A RIBCL version that is not a number.
    #[error("'{0}' is not a RIBCL version (a number such as 2.22)")]
    BadVersion(String),
}

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// One iLO and how to reach it.
#[derive(Clone, Debug, PartialEq)]
pub struct IloConfig {
    /// Its address.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The user the URL names (`--username` is used when it names none).
    pub user: Option<String>,
    /// How its certificate is trusted.
    pub tls: TlsTrust,
    /// The RIBCL version to act by instead of the one it reports.
    pub ribcl: Option<f64>,
}

impl IloConfig {
    /// A configuration for `host` on 443, the system trust store.
    pub fn new(host: &str) -> IloConfig {
        IloConfig {
            host: host.to_string(),
            port: DEFAULT_PORT,
            user: None,
            tls: TlsTrust::default(),
            ribcl: None,
        }
    }

    /// Parses `ilo://[USER@]HOST[:PORT]`.
    pub fn from_url(url: &str) -> Result<IloConfig, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let t = Target::parse(url, "ilo").map_err(|_| bad())?;
        if !t.segments.iter().all(|s| s.is_empty()) || !t.query.is_empty() {
            return Err(bad());
        }
        let mut c = IloConfig::new(&t.host);
        c.port = t.port.unwrap_or(DEFAULT_PORT);
        c.user = t.user;
        c.validate()?;
        Ok(c)
    }

    /// Sets the forced RIBCL version (`2.22`; empty: none).
    pub fn set_ribcl(&mut self, v: &str) -> Result<(), ConfigError> {
        let v = v.trim();
        self.ribcl = match v {
            "" => None,
            v => Some(super::model::number(v).ok_or_else(|| ConfigError::BadVersion(v.into()))?),
        };
        Ok(())
    }

    /// Checks what can be checked offline.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.is_empty()
            || self.host.len() > 255
            || self.host.contains(['/', '@', '?', '#', ' '])
            || self.host.chars().any(char::is_control)
        {
            return Err(ConfigError::BadHost(self.host.clone()));
        }
        Ok(())
    }

    /// `HOST:PORT`, for messages.
    pub fn address(&self) -> String {
        host_port(&self.host, self.port)
    }

    /// The target as a URL, without the user.
    pub fn url(&self) -> String {
        match self.port {
            DEFAULT_PORT if self.host.contains(':') => format!("ilo://[{}]", self.host),
            DEFAULT_PORT => format!("ilo://{}", self.host),
            p => format!("ilo://{}", host_port(&self.host, p)),
        }
    }

    /// The lock key: the iLO (one machine behind it).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
    }
}

/// The settings an `ilo://` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<IloConfig, BuildError>> {
    has_scheme(url, "ilo").then(|| {
        IloConfig::from_url(url)
            .map_err(BuildError::from)
            .and_then(|c| settings(c, o))
    })
}

/// The settings of an inventory method: its endpoint (an `ilo://` URL), or
/// `ip` (with `ipport`).
pub fn from_parts(
    endpoint: Option<&str>,
    ip: Option<&str>,
    o: &MethodOptions,
) -> Result<IloConfig, BuildError> {
    let c = match (endpoint, ip) {
        (Some(e), _) => IloConfig::from_url(e)?,
        (None, Some(ip)) => {
            let mut c = IloConfig::new(ip.trim());
            c.port = o.ipport.unwrap_or(DEFAULT_PORT);
            c
        }
        (None, None) => return Err(BuildError::NoAddress),
    };
    settings(c, o)
}

fn settings(mut c: IloConfig, o: &MethodOptions) -> Result<IloConfig, BuildError> {
    c.user = o.user_or(c.user.take());
    c.tls = o.tls_trust()?;
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an endpoint or `ip`; one kind of TLS trust.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !(f.has("endpoint") || f.has("ip")) {
        return Err("an ilo method needs endpoint = \"ilo://[USER@]HOST[:PORT]\" (or ip)".into());
    }
    let trusts = ["ca_cert", "ssl_fingerprint", "ssl_insecure"];
    if trusts.iter().filter(|k| f.has(k)).count() > 1 {
        return Err("give only one of ca_cert, ssl_fingerprint and ssl_insecure".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_options_and_versions() {
        let c = IloConfig::from_url("ilo://fence@ilo1.example.com").unwrap();
        assert_eq!((c.user.as_deref(), c.port), (Some("fence"), 443));
        assert_eq!(c.url(), "ilo://ilo1.example.com");
        let c = IloConfig::from_url("ilo://[fe80::1]:8443").unwrap();
        assert_eq!(c.url(), "ilo://[fe80::1]:8443");
        for bad in ["ilo://", "ilo://h/x", "ilo://h?x=1", "pve://h"] {
            assert!(IloConfig::from_url(bad).is_err(), "{bad}");
        }
        for f in URL_FORMS {
            assert!(IloConfig::from_url(f.example).is_ok());
        }
        let mut c = IloConfig::new("h");
        c.set_ribcl("2.20").unwrap();
        assert_eq!(c.ribcl, Some(2.20));
        assert!(c.set_ribcl("two").is_err());
        let o = MethodOptions {
            username: Some("admin".into()),
            ssl_insecure: true,
            ipport: Some(4443),
            ..MethodOptions::default()
        };
        let c = from_parts(None, Some("10.0.0.9"), &o).unwrap();
        assert_eq!(
            (c.port, c.user.as_deref(), &c.tls),
            (4443, Some("admin"), &TlsTrust::Insecure)
        );
        assert!(from_url("ucs://u/p", &o).is_none());
        assert!(matches!(
            from_parts(None, None, &o),
            Err(BuildError::NoAddress)
        ));
    }
}
