//! The fence_ilo family's own part (fence_ilo, fence_ilo2): options →
//! [`IloDevice`].
//!
//! Upstream's rules kept: TLS always (`--ssl` is on by default), the
//! certificate verified unless `--ssl-insecure`, port 443, `--ribcl-version`
//! forcing the version the off command is chosen by, `list` answered with
//! upstream's notice (the iLO has no plugs). Differences (docs/ilo.md):
//! `--notls` and `--tls1.0` are refused by name (exit 1, nothing sent):
//! fencekit speaks TLS 1.2 and 1.3 only; each exchange is bounded by
//! `--login-timeout` (1 to 60 s).
//!
//! fencekit-only extensions: `--ca-cert`, `--ssl-fingerprint` and
//! `--expect-uuid` (the SMBIOS UUID, checked by the engine before any
//! change).

use super::config::IloConfig;
use super::driver::IloDriver;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{secret_state, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::secret::Secret;
use crate::tls::TlsTrust;
use std::time::Duration;

/// The options its code reads by their definition's names.
const RIBCL: &str = "ribcl_version";
const TLS10: &str = "tls1.0";

/// One iLO as the agent reaches it.
#[derive(Debug)]
pub struct IloDevice {
    /// The target's settings.
    pub config: IloConfig,
    /// The user.
    pub user: String,
    /// Its password.
    pub password: Secret,
    /// Each exchange's bound.
    pub timeout: Duration,
}

/// Builds the device from validated option values. The error reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<IloDevice, String> {
    let host = values.get(Key::Ip).unwrap_or_default().trim().to_string();
    let mut c = IloConfig::new(&host);
    c.tls = values.https_trust(agent)?;
    c.port = values.port("443")?;
    c.set_ribcl(values.get_named(RIBCL).unwrap_or_default())
        .map_err(|e| e.to_string())?;
    c.validate().map_err(|e| e.to_string())?;
    let timeout = values.int(Key::LoginTimeout).unwrap_or(10).clamp(1, 60);
    Ok(IloDevice {
        config: c,
        user: values.get(Key::Username).unwrap_or_default().to_string(),
        password: Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
        timeout: Duration::from_secs(timeout as u64),
    })
}

/// `--notls` and `--tls1.0`, refused by name.
fn check(values: &Values, agent: &Agent) -> Vec<String> {
    let mut out = Vec::new();
    for (key, what) in [(Key::Notls.as_str(), "SSL 3.0"), (TLS10, "TLS 1.0")] {
        if agent.option(key).is_some_and(|o| values.flag(o)) {
            out.push(format!(
                "Failed: --{key} asks for {what}, which fencekit never speaks (TLS 1.2 and 1.3 \
                 only): nothing was sent. An iLO that speaks only older TLS needs newer firmware, or \
                 upstream's agent (docs/ilo.md, \"Old TLS\")"
            ));
        }
    }
    out
}

fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

/// How the RIBCL platform serves fence_ilo and fence_ilo2.
pub static FAMILY: AgentFamily = AgentFamily {
    check,
    read_by_name: &[RIBCL, TLS10],
    ..AgentFamily::new(device)
};

impl Device for IloDevice {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.config.lock_key())
    }
    fn describe(&self) -> String {
        let c = &self.config;
        format!(
            "iLO {} (RIBCL) as '{}', password {}, {}, {} s per exchange{}",
            c.address(),
            self.user,
            secret_state(&self.password),
            crate::tls::describe(&c.tls),
            self.timeout.as_secs(),
            c.ribcl
                .map(|v| format!(", RIBCL {v:.2} forced"))
                .unwrap_or_default()
        )
    }
    fn warnings(&self) -> Vec<String> {
        match self.config.tls {
            TlsTrust::Insecure => {
                vec!["--ssl-insecure: the iLO's certificate is not verified".into()]
            }
            _ => Vec::new(),
        }
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn crate::platform::Driver>, String> {
        let d = *self;
        let drv =
            IloDriver::new(d.config, &d.user, d.password, d.timeout).map_err(|e| e.message)?;
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
    fn upstream_defaults_and_the_refused_old_tls() {
        let base = [
            ("ip", "ilo1.example"),
            ("username", "admin"),
            ("password", "hunter22"),
        ];
        let (v, a) = validated("fence_ilo", &base);
        let d = config(&v, &a).unwrap();
        assert_eq!((d.config.port, &d.config.tls), (443, &TlsTrust::default()));
        assert_eq!(d.timeout, Duration::from_secs(10));
        assert!(!d.describe().contains("hunter22"));
        assert!(check(&v, &a).is_empty());
        let mut p = base.to_vec();
        p.extend([
            ("ssl_insecure", "1"),
            ("ribcl_version", "2.20"),
            ("ipport", "4443"),
        ]);
        let (v, a) = validated("fence_ilo2", &p);
        let d = config(&v, &a).unwrap();
        assert_eq!(
            (d.config.port, &d.config.tls, d.config.ribcl),
            (4443, &TlsTrust::Insecure, Some(2.20))
        );
        assert_eq!(d.warnings().len(), 1);
        for k in ["notls", "tls1.0"] {
            let mut p = base.to_vec();
            p.push((k, "1"));
            let (v, a) = validated("fence_ilo", &p);
            let e = check(&v, &a);
            assert_eq!(e.len(), 1, "{k}");
            assert!(e[0].contains(&format!("--{k}")), "{e:?}");
        }
    }
}
