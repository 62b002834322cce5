//! The fence_amt_ws family's own part: options → [`AmtDevice`].
//!
//! Upstream's rules kept: the user is always `admin` (upstream offers no
//! login option), plain HTTP on `--ipport` (16992), `--plug` the address
//! only together with `--port-as-ip`, `--boot-option` (pxe, hd, hdsafe,
//! cd, diag) set before the power change, `--method=cycle` a master bus
//! reset (10), no `list`. Differences (docs/amt.md): the boot device is set
//! before on and reset only (an off boots nothing); the bound of each
//! request is the larger of `--shell-timeout` and `--login-timeout` (3 to
//! 60 s).
//!
//! fencekit-only extensions: `--ca-cert` and `--ssl-fingerprint` (HTTPS,
//! for a machine provisioned with TLS on 16993).

use super::config::{AmtConfig, DEFAULT_USER};
use super::driver::AmtDriver;
use super::model::BootOption;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{secret_state, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::secret::Secret;
use std::time::Duration;

/// The boot device's option, read by its definition's name.
const BOOT_OPTION: &str = "boot_option";

/// One AMT machine as the agent reaches it.
#[derive(Debug)]
pub struct AmtDevice {
    /// The target's settings.
    pub config: AmtConfig,
    /// Its password.
    pub password: Secret,
    /// Each request's bound.
    pub timeout: Duration,
}

/// Builds the device from validated option values. The error reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<AmtDevice, String> {
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    let mut c = AmtConfig::new(&host);
    c.tls = values.tls_trust(agent)?;
    c.port = values.port("16992")?;
    c.user = Some(DEFAULT_USER.to_string());
    if let Some(b) = values
        .get_named(BOOT_OPTION)
        .map(str::trim)
        .filter(|b| !b.is_empty())
    {
        c.boot = Some(BootOption::parse(b).ok_or_else(|| {
            format!(
                "the boot option '{}' is none of pxe, hd, hdsafe, cd and diag",
                crate::http::printable(b, 40)
            )
        })?);
    }
    c.validate().map_err(|e| e.to_string())?;
    let timeout = [Key::ShellTimeout, Key::LoginTimeout]
        .iter()
        .filter_map(|k| values.int(*k))
        .max()
        .unwrap_or(5)
        .clamp(3, 60);
    Ok(AmtDevice {
        config: c,
        password: Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
        timeout: Duration::from_secs(timeout as u64),
    })
}

fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// How the AMT platform serves fence_amt_ws.
pub static FAMILY: AgentFamily = AgentFamily {
    read_by_name: &[BOOT_OPTION],
    ..AgentFamily::new(device)
};

impl Device for AmtDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.config.lock_key())
    }
    fn describe(&self) -> String {
        let c = &self.config;
        format!(
            "Intel AMT {} as '{}' (HTTP Digest), password {}, {}, {} s per request{}",
            c.wsman_url(),
            c.user(),
            secret_state(&self.password),
            c.tls
                .as_ref()
                .map_or("plain http".to_string(), crate::tls::describe),
            self.timeout.as_secs(),
            c.boot
                .map(|b| format!(", boot device {} before on and reset", b.as_str()))
                .unwrap_or_default()
        )
    }
    fn warnings(&self) -> Vec<String> {
        match self.config.tls {
            Some(crate::tls::TlsTrust::Insecure) => {
                vec!["AMT's certificate is not verified".into()]
            }
            None => vec![
                "plain HTTP (upstream's only transport): the password is sent only as a Digest hash, but the requests and answers travel in clear"
                    .into(),
            ],
            _ => Vec::new(),
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let d = *self;
        let user = d.config.user().to_string();
        let drv = AmtDriver::new(d.config, &user, d.password, d.timeout).map_err(|e| e.message)?;
        Ok(Box::new(drv))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    #[test]
    fn upstream_defaults_and_the_boot_option() {
        let base = [("ip", "desk.example"), ("password", "hunter22")];
        let (v, a) = validated("fence_amt_ws", &base);
        let d = config(&v, &a).unwrap();
        assert_eq!(d.config.wsman_url(), "http://desk.example:16992/wsman");
        assert_eq!((d.config.user(), d.config.boot), ("admin", None));
        assert!(!d.describe().contains("hunter22"));
        assert_eq!(d.warnings().len(), 1, "plain HTTP is warned");
        let mut p = base.to_vec();
        p.extend([("boot_option", "pxe"), ("ipport", "16993")]);
        let (v, a) = validated("fence_amt_ws", &p);
        let d = config(&v, &a).unwrap();
        assert_eq!(d.config.boot, Some(BootOption::Pxe));
        assert_eq!(d.config.wsman_url(), "http://desk.example:16993/wsman");
    }
}
