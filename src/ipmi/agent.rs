//! The fence_ipmilan family's own part: options → [`IpmiConfig`] and the
//! IPMI driver.
//!
//! Everything else an IPMI agent does (parsing, validation, timing, output)
//! is shared and lives in [`crate::agent::run`]; this module only knows
//! which option feeds which IPMI setting.

use crate::ipmi::config::{
    parse_hex_kg, AuthType, CipherChoice, ConfigError, IpmiConfig, Privilege, Version,
};
use crate::ipmi::driver::IpmiDriver;
use crate::ipmi::workaround::Workarounds;
use crate::platform::agent::defs::Agent;
use crate::platform::agent::key::Key;
use crate::platform::agent::values::{parse_int, Values};
use crate::platform::agent::{AgentFamily, Device, DeviceConfig};
use crate::platform::Driver;
use crate::secret::Secret;

/// Builds the IPMI configuration from validated option values (the password
/// script, if any, has already replaced `password`). The error is a message
/// that reads after "Failed: ".
pub fn config(values: &Values, agent: &Agent) -> Result<IpmiConfig, String> {
    // The front's text is the library's, after "Failed: ".
    let text = |e: ConfigError| e.to_string();
    if let Some(t) = values.get(Key::Target) {
        return Err(format!(
            "IPMI bridging (--target {t}) is not supported by fencekit; it would act on the \
             controller's own chassis instead of the bridged one, so nothing was done"
        ));
    }
    let host = values.get(Key::Ip).unwrap_or_default();
    if host.is_empty() {
        return Err("the fence device address (--ip) is empty".to_string());
    }
    let port_text = values.get(Key::Ipport).unwrap_or("623");
    let port = parse_int(port_text)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("the port {port_text} (--ipport) is not between 1 and 65535"))?;
    let lanplus = values.flag_of(agent, Key::Lanplus);
    let mut cfg = IpmiConfig::new(
        host,
        port,
        values.get(Key::Username).unwrap_or_default(),
        Secret::from_str_value(values.get(Key::Password).unwrap_or_default()),
    );
    cfg.version = if lanplus {
        Version::Lanplus
    } else {
        Version::Lan15(
            values
                .get(Key::Auth)
                .map(str::parse::<AuthType>)
                .transpose()
                .map_err(text)?,
        )
    };
    if lanplus {
        if let Some(c) = values.get(Key::Cipher) {
            cfg.cipher = c.parse::<CipherChoice>().map_err(text)?;
        }
    }
    if let Some(p) = values.get(Key::Privlvl) {
        cfg.privilege = p.parse::<Privilege>().map_err(text)?;
    }
    if let Some(kg) = values.get(Key::HexadecimalKg).filter(|k| !k.is_empty()) {
        cfg.kg = Some(parse_hex_kg(kg).map_err(text)?);
    }
    if let Some(w) = values.get(Key::Workaround) {
        cfg.workarounds = Workarounds::parse(w).map_err(|e| e.to_string())?;
    }
    if let Some(t) = values.get(Key::IpmitoolTimeout) {
        // Upstream passes it to ipmitool -N: how long one request waits for
        // its answer before it is re-sent (0: ipmitool's own default).
        let secs = parse_int(t).filter(|s| *s >= 0).ok_or_else(|| {
            format!("the IPMI request timeout {t} (--ipmitool-timeout) is not a number of seconds")
        })?;
        if secs > 0 {
            cfg.retransmit_max = std::time::Duration::from_secs(secs.min(3600) as u64);
        }
    }
    cfg.validate().map_err(text)?;
    Ok(cfg)
}

/// A one-line description of the configuration for `-v` (never the password).
pub fn describe(cfg: &IpmiConfig) -> String {
    let version = match cfg.version {
        Version::Lanplus => "IPMI v2.0 RMCP+ (lanplus)".to_string(),
        Version::Lan15(None) => "IPMI v1.5 (lan)".to_string(),
        Version::Lan15(Some(a)) => format!("IPMI v1.5 (lan, {} authentication)", a.as_str()),
    };
    let cipher = match (cfg.version, cfg.cipher) {
        (Version::Lanplus, CipherChoice::Auto) => ", cipher suite chosen with the BMC",
        (Version::Lanplus, CipherChoice::Suite(3)) => ", cipher suite 3",
        (Version::Lanplus, CipherChoice::Suite(_)) => ", cipher suite 17",
        _ => "",
    };
    format!(
        "{version} to {}:{} as {}, password {}, privilege {}{cipher}{}",
        cfg.host,
        cfg.port,
        if cfg.username.is_empty() {
            "the null user".to_string()
        } else {
            format!("'{}'", cfg.username)
        },
        if cfg.password.is_empty() {
            "empty"
        } else {
            "[set]"
        },
        cfg.privilege,
        if cfg.kg.is_some() { ", K_g [set]" } else { "" },
    ) + &if cfg.workarounds.is_empty() {
        String::new()
    } else {
        format!(", workarounds {}", cfg.workarounds.names())
    }
}

/// The real driver for a configuration.
pub fn driver(cfg: IpmiConfig) -> Result<IpmiDriver, String> {
    IpmiDriver::new(cfg).map_err(|e| e.to_string())
}

/// The family's configuration from validated option values, for the
/// front (declared in [`FAMILY`]).
pub fn device(values: &Values, agent: &Agent) -> Result<DeviceConfig, String> {
    config(values, agent).map(|c| Box::new(c) as DeviceConfig)
}

impl Device for IpmiConfig {
    fn lock_key(&self) -> Option<crate::lock::DeviceKey> {
        Some(self.lock_key())
    }
    fn describe(&self) -> String {
        describe(self)
    }
    fn driver(self: Box<Self>) -> Result<Box<dyn Driver>, String> {
        crate::ipmi::driver::IpmiDriver::new(*self)
            .map(|d| Box::new(d) as Box<dyn Driver>)
            .map_err(|e| e.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How the platform serves the fence_ipmilan family (`Platform::agent_family`).
pub static FAMILY: AgentFamily = AgentFamily::new(device);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::values::validated;

    fn cfg_of(name: &str, pairs: &[(&str, &str)]) -> Result<IpmiConfig, String> {
        let (v, a) = validated(name, pairs);
        config(&v, &a)
    }

    #[test]
    fn workarounds_are_freeipmis_names() {
        let c = cfg_of(
            "fence_ipmilan",
            &[("ip", "h"), ("workaround", "nochecksumcheck,idzero")],
        )
        .unwrap();
        assert_eq!(c.workarounds.names(), "nochecksumcheck,idzero");
        assert!(describe(&c).ends_with(", workarounds nochecksumcheck,idzero"));
        let e = cfg_of("fence_ipmilan", &[("ip", "h"), ("workaround", "intel2")]).unwrap_err();
        assert!(e.starts_with("unknown IPMI workaround 'intel2'"), "{e}");
        let c = cfg_of("fence_ipmilan", &[("ip", "h")]).unwrap();
        assert!(c.workarounds.is_empty());
    }

    #[test]
    fn defaults_give_a_lan15_session_as_administrator() {
        let c = cfg_of("fence_ipmilan", &[("ip", "h")]).unwrap();
        assert_eq!((c.host.as_str(), c.port), ("h", 623));
        assert_eq!(c.version, Version::Lan15(None));
        assert_eq!(c.privilege, Privilege::Administrator);
        assert!(c.username.is_empty() && c.password.is_empty() && c.kg.is_none());
    }

    #[test]
    fn lanplus_follows_the_alias_and_the_value_rule() {
        let c = cfg_of("fence_ilo4", &[("ip", "h")]).unwrap();
        assert_eq!(c.version, Version::Lanplus);
        let c = cfg_of("fence_ilo4", &[("ip", "h"), ("lanplus", "0")]).unwrap();
        assert_eq!(c.version, Version::Lan15(None));
        let c = cfg_of("fence_ipmilan", &[("ip", "h"), ("lanplus", "")]).unwrap();
        assert_eq!(c.version, Version::Lanplus);
    }

    #[test]
    fn options_map_to_ipmi_settings() {
        let c = cfg_of(
            "fence_ipmilan",
            &[
                ("ip", "10.0.0.1"),
                ("ipport", "6230"),
                ("username", "admin"),
                ("password", "pw"),
                ("lanplus", "1"),
                ("cipher", "17"),
                ("privlvl", "operator"),
                ("hexadecimal_kg", "0102"),
            ],
        )
        .unwrap();
        assert_eq!(c.port, 6230);
        assert_eq!(c.cipher, CipherChoice::Suite(17));
        assert_eq!(c.privilege, Privilege::Operator);
        assert_eq!(c.kg.as_ref().map(|k| k.expose().to_vec()), Some(vec![1, 2]));
        assert_eq!(c.password.expose(), b"pw");
        let c = cfg_of("fence_ipmilan", &[("ip", "h"), ("auth", "md5")]).unwrap();
        assert_eq!(c.version, Version::Lan15(Some(AuthType::Md5)));
        // --ipmitool-timeout bounds each request's wait (upstream's default 2)
        let c = cfg_of("fence_ipmilan", &[("ip", "h")]).unwrap();
        assert_eq!(c.retransmit_max, std::time::Duration::from_secs(2));
        let c = cfg_of("fence_ipmilan", &[("ip", "h"), ("ipmitool_timeout", "5")]).unwrap();
        assert_eq!(c.retransmit_max, std::time::Duration::from_secs(5));
        let e = cfg_of("fence_ipmilan", &[("ip", "h"), ("ipmitool_timeout", "x")]).unwrap_err();
        assert!(e.contains("--ipmitool-timeout"), "{e}");
    }

    #[test]
    fn unusable_settings_are_refused_with_a_reason() {
        let e = cfg_of(
            "fence_ipmilan",
            &[("ip", "h"), ("lanplus", "1"), ("cipher", "1")],
        )
        .unwrap_err();
        assert!(e.contains("cipher suite '1' is not supported"), "{e}");
        // Without lanplus the cipher is not used (as with ipmitool -I lan).
        assert!(cfg_of("fence_ipmilan", &[("ip", "h"), ("cipher", "1")]).is_ok());
        let e = cfg_of("fence_ipmilan", &[("ip", "h"), ("hexadecimal_kg", "xyz")]).unwrap_err();
        assert!(e.contains("hexadecimal"), "{e}");
        let e = cfg_of("fence_ipmilan", &[("ip", "h"), ("ipport", "70000")]).unwrap_err();
        assert!(e.contains("70000"), "{e}");
        let e = cfg_of("fence_ipmilan", &[("target", "0x20")]).unwrap_err();
        assert!(e.contains("--target"), "{e}");
        let long = "x".repeat(21);
        let e = cfg_of("fence_ilo4", &[("ip", "h"), ("password", &long)]).unwrap_err();
        assert!(e.contains("21 bytes") && !e.contains(&long), "{e}");
    }

    #[test]
    fn the_description_never_shows_the_password() {
        let c = cfg_of(
            "fence_ilo4",
            &[("ip", "h"), ("username", "u"), ("password", "hunter2")],
        )
        .unwrap();
        let d = describe(&c);
        assert!(
            d.contains("password [set]") && !d.contains("hunter2"),
            "{d}"
        );
    }
}
