//! The fence_eps family's own part: options → [`EpsDevice`].
//!
//! Upstream's rules kept: plain HTTP, the hidden page `hidden.htm` unless
//! `--page`, Basic authentication only when `--username` is given (an empty
//! password then), the plug the outlet's two-digit number. Differences
//! (docs/pdu.md): `--ipport` is honoured (upstream connects to port 80
//! whatever it says); an outlet may be written `1` for `01`; several plugs
//! are switched together and each confirmed.

use super::config::EpsConfig;
use super::driver::EpsDriver;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{parse_int, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::secret::Secret;
use std::time::Duration;

/// The hidden page's option, read by its definition's name.
const PAGE: &str = "page";

/// A node's outlets as the agent reaches them.
#[derive(Debug)]
pub struct EpsDevice {
    /// The target's settings.
    pub config: EpsConfig,
    /// The password (sent only with a user).
    pub secret: Secret,
    /// Each request's bound.
    pub timeout: Duration,
    /// `monitor`: one read of the page.
    pub monitor: bool,
}

/// Builds the device from validated option values. The error reads after "Failed: ".
pub fn config(values: &Values, _agent: &Agent) -> Result<EpsDevice, String> {
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    let mut c = EpsConfig::new(&host);
    let port_text = values.get(Key::Ipport).unwrap_or("80");
    c.port = parse_int(port_text)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("the port {port_text} (--ipport) is not between 1 and 65535"))?;
    c.user = values
        .get(Key::Username)
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(str::to_string);
    if let Some(p) = values
        .get_named(PAGE)
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        c.page = p.trim_start_matches('/').to_string();
    }
    let sep = values
        .get(Key::PlugSeparator)
        .filter(|s| !s.is_empty())
        .unwrap_or(",");
    let plug = values.get(Key::Plug).unwrap_or_default();
    if !plug.trim().is_empty() {
        c.set_outlets(plug, sep).map_err(|e| e.to_string())?;
    }
    c.validate().map_err(|e| e.to_string())?;
    let timeout = [Key::ShellTimeout, Key::LoginTimeout]
        .iter()
        .filter_map(|k| values.int(*k))
        .max()
        .unwrap_or(5)
        .clamp(3, 60);
    Ok(EpsDevice {
        config: c,
        secret: Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
        timeout: Duration::from_secs(timeout as u64),
        monitor: values.get(Key::Action) == Some("monitor"),
    })
}

fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// How the ePowerSwitch platform serves fence_eps.
pub static FAMILY: AgentFamily = AgentFamily {
    lists: true,
    read_by_name: &[PAGE],
    ..AgentFamily::new(device)
};

impl Device for EpsDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.config.lock_key())
    }
    fn describe(&self) -> String {
        let c = &self.config;
        format!(
            "ePowerSwitch {}{}, outlets {}, plain HTTP, {} s per request",
            c.page_url(),
            match &c.user {
                Some(u) => format!(
                    " as '{}' (password {})",
                    crate::http::text::printable(u, 80),
                    if self.secret.is_empty() {
                        "empty"
                    } else {
                        "[set]"
                    }
                ),
                None => " without a login".into(),
            },
            match c.outlets.is_empty() {
                true => "(none: listing)".to_string(),
                false => c.outlets.join(", "),
            },
            self.timeout.as_secs()
        )
    }
    fn warnings(&self) -> Vec<String> {
        match &self.config.user {
            Some(_) => vec!["the switch speaks plain HTTP: the password travels in clear".into()],
            None => Vec::new(),
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let d = *self;
        let drv = EpsDriver::new(d.config, d.secret, d.timeout).map_err(|e| e.message)?;
        Ok(Box::new(match d.monitor {
            true => drv.for_monitor(),
            false => drv,
        }))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    fn cfg_of(pairs: &[(&str, &str)]) -> Result<EpsDevice, String> {
        let (v, a) = validated("fence_eps", pairs);
        config(&v, &a)
    }

    #[test]
    fn upstream_defaults_and_options() {
        let d = cfg_of(&[("ip", "eps1"), ("plug", "3")]).unwrap();
        assert_eq!(d.config.page_url(), "http://eps1:80/hidden.htm");
        assert_eq!(d.config.outlets, ["03"]);
        assert!(d.config.user.is_none());
        let d = cfg_of(&[
            ("ip", "eps1"),
            ("ipport", "8080"),
            ("username", "admin"),
            ("password", "hunter22"),
            ("page", "/cfg.htm"),
            ("plug", "01+02"),
            ("plug_separator", "+"),
        ])
        .unwrap();
        assert_eq!(d.config.page_url(), "http://eps1:8080/cfg.htm");
        assert_eq!(d.config.outlets, ["01", "02"]);
        assert!(!d.describe().contains("hunter22"));
        assert_eq!(d.warnings().len(), 1);
        assert!(cfg_of(&[("ip", "eps1"), ("plug", "100")])
            .unwrap_err()
            .contains("not an ePowerSwitch outlet"));
    }
}
