//! What a caller sets for one Intel AMT machine: its address and port
//! (16992 plain HTTP, 16993 HTTPS, as AMT serves WS-Management), the user
//! (`admin` unless told: the one account upstream logs in as), the TLS
//! trust (`None`: plain HTTP, Digest authentication still), and the boot
//! device to set before a power change (`--boot-option`, the agent only).
//! `amt://[USER@]HOST[:PORT]` targets.

use super::model::BootOption;
use crate::engine::driver::UrlForm;
use crate::platform::target::{host_port, Target};
use crate::tls::TlsTrust;

/// AMT's WS-Management port over plain HTTP.
pub const DEFAULT_PORT: u16 = 16992;
/// AMT's WS-Management port over TLS.
pub const TLS_PORT: u16 = 16993;
/// The user upstream always logs in as (AMT's built-in administrator).
pub const DEFAULT_USER: &str = "admin";

/// The URL forms (`--help`, man pages, README).
pub const URL_FORMS: &[UrlForm] = &[UrlForm {
    scheme: "amt",
    form: "amt://[USER@]HOST[:PORT]",
    meaning:
        "an Intel AMT machine via WS-Management (16992 HTTP, 16993 HTTPS; user admin unless given)",
    target: true,
    example: "amt://admin@desk-7.example.com:16993",
}];

/// Why an AMT target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `amt://[USER@]HOST[:PORT]`.
    #[error("'{0}' is not an Intel AMT target (expected amt://[USER@]HOST[:PORT], e.g. amt://admin@desk-7.example.com:16993)")]
    BadTarget(String),
    /// A host or user that cannot be one.
    #[error("'{0}' cannot be a {1}")]
    BadName(String, &'static str),
}

/// One AMT machine and how to reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmtConfig {
    /// The machine's AMT address.
    pub host: String,
    /// Its WS-Management port.
    pub port: u16,
    /// The Digest user (`None`: [`DEFAULT_USER`]).
    pub user: Option<String>,
    /// How the certificate is trusted; `None`: plain HTTP.
    pub tls: Option<TlsTrust>,
    /// The boot device set before each power-on or reset.
    pub boot: Option<BootOption>,
}

impl AmtConfig {
    /// A configuration for `host`, plain HTTP on 16992.
    pub fn new(host: &str) -> AmtConfig {
        AmtConfig {
            host: host.to_string(),
            port: DEFAULT_PORT,
            user: None,
            tls: None,
            boot: None,
        }
    }

    /// Parses `amt://[USER@]HOST[:PORT]`: HTTPS on 16993, plain HTTP on
    /// any other port (the trust options make it HTTPS: `super::build`).
    pub fn from_url(url: &str) -> Result<AmtConfig, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let t = Target::parse(url, "amt").map_err(|_| bad())?;
        if !t.query.is_empty() || t.segments.iter().any(|s| !s.is_empty()) {
            return Err(bad());
        }
        let mut c = AmtConfig::new(&t.host);
        c.port = t.port.unwrap_or(DEFAULT_PORT);
        c.user = t.user;
        if c.port == TLS_PORT {
            c.tls = Some(TlsTrust::default());
        }
        c.validate()?;
        Ok(c)
    }

    /// Checks what can be checked offline.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.is_empty() || self.host.contains(['/', '@', '?', '#', ' ']) {
            return Err(ConfigError::BadName(self.host.clone(), "host"));
        }
        if let Some(u) = &self.user {
            if u.is_empty() || u.chars().any(char::is_control) || u.len() > 128 {
                return Err(ConfigError::BadName(u.clone(), "user"));
            }
        }
        if self.port == 0 {
            return Err(ConfigError::BadName("0".into(), "port"));
        }
        Ok(())
    }

    /// The user logged in as.
    pub fn user(&self) -> &str {
        self.user.as_deref().unwrap_or(DEFAULT_USER)
    }

    /// `http://HOST:PORT/wsman` (`https://` with TLS).
    pub fn wsman_url(&self) -> String {
        let scheme = match self.tls {
            Some(_) => "https",
            None => "http",
        };
        format!("{scheme}://{}/wsman", host_port(&self.host, self.port))
    }

    /// The target as a URL, without the user.
    pub fn url(&self) -> String {
        let hp = match self.port {
            DEFAULT_PORT if self.host.contains(':') => format!("[{}]", self.host),
            DEFAULT_PORT => self.host.clone(),
            p => host_port(&self.host, p),
        };
        format!("amt://{hp}")
    }

    /// The lock key: the machine (its HTTP and HTTPS ports are one device).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let port = match self.port {
            TLS_PORT => DEFAULT_PORT,
            p => p,
        };
        crate::lock::DeviceKey::new(&self.host, port, DEFAULT_PORT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_ports_and_the_user() {
        let c = AmtConfig::from_url("amt://desk-7.example.com").unwrap();
        assert_eq!((c.user(), c.port, &c.tls), ("admin", 16992, &None));
        assert_eq!(c.wsman_url(), "http://desk-7.example.com:16992/wsman");
        assert_eq!(c.url(), "amt://desk-7.example.com");
        let c = AmtConfig::from_url("amt://fence@[fe80::1]:16993").unwrap();
        assert_eq!(c.user(), "fence");
        assert_eq!(c.wsman_url(), "https://[fe80::1]:16993/wsman");
        assert_eq!(c.url(), "amt://[fe80::1]:16993");
        assert_eq!(
            c.lock_key(),
            AmtConfig::from_url("amt://[fe80::1]").unwrap().lock_key()
        );
        for bad in [
            "amt://",
            "amt://h/x",
            "amt://h?boot=pxe",
            "ucs://h/p",
            "amt://a b",
        ] {
            assert!(AmtConfig::from_url(bad).is_err(), "{bad}");
        }
        assert!(AmtConfig::from_url("amt://h/").is_ok());
        for f in URL_FORMS {
            assert!(AmtConfig::from_url(f.example).is_ok(), "{}", f.example);
        }
    }
}
