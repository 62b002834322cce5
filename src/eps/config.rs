//! What a caller sets for a node's outlets on one ePowerSwitch: the
//! switch's host and port (plain HTTP, as the device speaks it), the user
//! of its Basic authentication (none: the hidden page may be open), the
//! hidden page's name, and the node's outlets.
//! `eps://[USER@]HOST[:PORT]/OUTLET[,OUTLET…][?page=NAME]`.

use super::model::outlet_id;
use crate::engine::driver::UrlForm;
use crate::platform::target::{host_port, Target};

/// The device's HTTP port.
pub const DEFAULT_PORT: u16 = 80;
/// The hidden page's name unless told.
pub const DEFAULT_PAGE: &str = "hidden.htm";

/// The URL forms (`--help`, man pages, README).
pub const URL_FORMS: &[UrlForm] = &[UrlForm {
    scheme: "eps",
    form: "eps://[USER@]HOST[:PORT]/OUTLET[,OUTLET...]",
    meaning: "outlets of an ePowerSwitch 8M+ through its hidden page (?page=NAME)",
    target: true,
    example: "eps://admin@eps1.example.com/03,04",
}];

/// Why an ePowerSwitch target cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `eps://[USER@]HOST[:PORT]/OUTLET[,OUTLET…]`.
    #[error("'{0}' is not an ePowerSwitch target (expected eps://[USER@]HOST[:PORT]/OUTLET[,OUTLET...][?page=NAME], e.g. eps://admin@eps1.example.com/03,04)")]
    BadTarget(String),
    /// A host, page or outlet the device cannot have.
    #[error("{0}")]
    Bad(String),
}

/// A node's outlets on one ePowerSwitch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpsConfig {
    /// The switch's host.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The Basic authentication user; `None`: no authentication sent.
    pub user: Option<String>,
    /// The hidden page's name, without the leading `/`.
    pub page: String,
    /// The node's outlets, two digits each as the page writes them; empty
    /// for a listing.
    pub outlets: Vec<String>,
}

impl EpsConfig {
    /// A configuration for `host`, port 80, the default page, no outlet yet.
    pub fn new(host: &str) -> EpsConfig {
        EpsConfig {
            host: host.to_string(),
            port: DEFAULT_PORT,
            user: None,
            page: DEFAULT_PAGE.to_string(),
            outlets: Vec::new(),
        }
    }

    /// Parses `eps://[USER@]HOST[:PORT]/OUTLET[,OUTLET…][?page=NAME]`.
    pub fn from_url(url: &str) -> Result<EpsConfig, ConfigError> {
        let bad = || ConfigError::BadTarget(url.to_string());
        let t = Target::parse(url, "eps").map_err(|_| bad())?;
        let mut c = EpsConfig::new(&t.host);
        c.port = t.port.unwrap_or(DEFAULT_PORT);
        c.user = t.user;
        for (k, v) in &t.query {
            match k.as_str() {
                "page" => c.page = v.trim_start_matches('/').to_string(),
                _ => return Err(bad()),
            }
        }
        match t.segments.as_slice() {
            [outlets] => c.set_outlets(outlets, ",")?,
            _ => return Err(bad()),
        }
        c.validate()?;
        Ok(c)
    }

    /// Sets the outlets from `text`, split at `sep`.
    pub fn set_outlets(&mut self, text: &str, sep: &str) -> Result<(), ConfigError> {
        let mut out: Vec<String> = Vec::new();
        for p in text.split(sep).map(str::trim).filter(|p| !p.is_empty()) {
            let id = outlet_id(p).map_err(ConfigError::Bad)?;
            if !out.contains(&id) {
                out.push(id);
            }
        }
        if out.is_empty() {
            return Err(ConfigError::Bad(format!(
                "'{}' names no outlet",
                crate::http::text::printable(text, 40)
            )));
        }
        self.outlets = out;
        Ok(())
    }

    /// Checks what can be checked offline.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.is_empty() || self.host.contains(['/', '@', '?', '#', ' ']) {
            return Err(ConfigError::Bad(format!(
                "'{}' cannot be an ePowerSwitch host",
                crate::http::text::printable(&self.host, 80)
            )));
        }
        let p = &self.page;
        let page_ok = !p.is_empty()
            && p.len() <= 128
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
            && !p.contains("..");
        if !page_ok {
            return Err(ConfigError::Bad(format!(
                "'{}' cannot be the hidden page's name (letters, digits, '.', '_', '-', '/')",
                crate::http::text::printable(p, 80)
            )));
        }
        Ok(())
    }

    /// `http://HOST:PORT/PAGE`.
    pub fn page_url(&self) -> String {
        format!("http://{}/{}", host_port(&self.host, self.port), self.page)
    }

    /// The target as a URL, without the user.
    pub fn url(&self) -> String {
        let hp = match self.port {
            DEFAULT_PORT if self.host.contains(':') => format!("[{}]", self.host),
            DEFAULT_PORT => self.host.clone(),
            p => host_port(&self.host, p),
        };
        let mut s = format!("eps://{hp}/{}", self.outlets.join(","));
        if self.page != DEFAULT_PAGE {
            s.push_str("?page=");
            s.push_str(&self.page);
        }
        s
    }

    /// The lock key: the whole switch (one page drives every outlet).
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_outlets_on_a_switch() {
        let c = EpsConfig::from_url("eps://admin@eps1.example/3,04").unwrap();
        assert_eq!(c.user.as_deref(), Some("admin"));
        assert_eq!(c.outlets, ["03", "04"]);
        assert_eq!(c.page_url(), "http://eps1.example:80/hidden.htm");
        assert_eq!(c.url(), "eps://eps1.example/03,04");
        let c = EpsConfig::from_url("eps://[fe80::1]:8080/1?page=cfg/h.htm").unwrap();
        assert_eq!(c.url(), "eps://[fe80::1]:8080/01?page=cfg/h.htm");
        assert_eq!(c.page_url(), "http://[fe80::1]:8080/cfg/h.htm");
        for bad in [
            "eps://h",
            "eps://h/1/2",
            "eps://h/0",
            "eps://h/x",
            "eps://h/1?x=1",
            "eps://h/1?page=../etc",
            "eps://h/1?page=a%20b",
            "pve://h/1",
        ] {
            assert!(EpsConfig::from_url(bad).is_err(), "{bad}");
        }
        for f in URL_FORMS {
            assert!(EpsConfig::from_url(f.example).is_ok(), "{}", f.example);
        }
        let a = EpsConfig::from_url("eps://e/1").unwrap().lock_key();
        let b = EpsConfig::from_url("eps://e/2").unwrap().lock_key();
        assert!(a.conflicts(&b), "one page drives every outlet of a switch");
    }
}
