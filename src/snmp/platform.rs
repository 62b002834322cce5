//! SNMP PDUs on the platform seam ([`crate::platform`]): a method for a
//! node's outlets on one or more PDUs (a lock key per PDU), its secrets
//! per PDU, the outlet as its verify party, the outlets for `list`.

use super::build::{outlet_parts, BuildError, SnmpOptions};
use super::config::SnmpConfig;
use super::driver::SnmpDriver;
use super::secrets::{fill_snmp, SnmpCredentials};
use super::session::Security;
use crate::engine::error::{DriverError, Stage};
use crate::engine::identity::ExpectedIdentity;
use crate::platform::credential::CredentialRef;
use crate::platform::{self, Driver, Listed, Local, Method, Party, PinError, Platform, PlugEntry};
use std::fmt;
use std::time::Instant;

/// SNMP v1/v2c/v3 to switched PDUs.
pub struct Snmp;

/// The registered platform.
pub static PLATFORM: Snmp = Snmp;

impl Platform for Snmp {
    fn facts(&self) -> Option<&'static dyn crate::platform::facts::FactRules> {
        Some(&super::facts::FACTS)
    }
    fn outlets(&self) -> bool {
        true
    }
    fn build_fields(
        &self,
        f: &dyn crate::platform::build::Fields,
    ) -> Option<Result<Box<dyn Method>, crate::platform::build::BuildError>> {
        Some(from_fields(f).map_err(Into::into))
    }
    fn name(&self) -> &'static str {
        "snmp"
    }
    fn owns_scheme(&self, scheme: &str) -> bool {
        scheme == "snmp" || scheme == "ifmib"
    }
    fn builder(&self) -> Option<&'static dyn crate::platform::build::MethodBuilder> {
        Some(&PLATFORM)
    }
    fn url_forms(&self) -> &'static [crate::engine::driver::UrlForm] {
        super::config::URL_FORMS
    }
    fn check_fields(&self, f: &dyn crate::platform::build::Fields) -> Result<(), String> {
        super::config::check_fields(f)
    }
    fn agent_family(
        &self,
        _def: &platform::agent::defs::Family,
    ) -> Option<&'static platform::agent::AgentFamily> {
        Some(&super::agent::FAMILY)
    }
}

impl crate::platform::build::MethodBuilder for Snmp {
    /// `ifmib://SWITCH[:PORT]/PORT[,PORT…]`: the node's switch ports.
    fn build_url(
        &self,
        url: &str,
        o: &crate::platform::build::MethodOptions,
    ) -> Option<Result<Box<dyn Method>, crate::platform::build::BuildError>> {
        ifmib_url(url, o)
    }
    /// Inventories build PDU methods from their fields
    /// ([`Platform::build_fields`]), never from here.
    fn build_parts(
        &self,
        _endpoint: Option<&str>,
        _ip: Option<&str>,
        _o: &crate::platform::build::MethodOptions,
    ) -> Result<Box<dyn Method>, crate::platform::build::BuildError> {
        Err(crate::platform::build::BuildError::NoEndpoint)
    }
}

/// Why an `ifmib://` target cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum IfmibUrlError {
    /// Not `ifmib://SWITCH[:PORT]/PORT[,PORT…]`.
    #[error("'{0}': a switch's ports are ifmib://SWITCH[:PORT]/PORT[,PORT...] (a port by ifIndex, ifDescr or ifName, %2F for a '/')")]
    Shape(String),
    /// A user in the URL (SNMPv3 is an inventory's).
    #[error("'{0}': ifmib:// speaks SNMPv2c with the community from the password options; for SNMPv3 use an inventory method (driver = \"snmp\", profile = \"ifmib\")")]
    User(String),
}

/// The method an `ifmib://` target names (`None`: another scheme).
pub fn ifmib_url(
    url: &str,
    o: &crate::platform::build::MethodOptions,
) -> Option<Result<Box<dyn Method>, crate::platform::build::BuildError>> {
    use crate::platform::build::BuildError;
    if !crate::platform::build::has_scheme(url, "ifmib") {
        return None;
    }
    let shape = || BuildError::Platform(Box::new(IfmibUrlError::Shape(url.to_string())));
    let Ok(t) = crate::platform::target::Target::parse(url, "ifmib") else {
        return Some(Err(shape()));
    };
    if t.user.is_some() {
        return Some(Err(BuildError::Platform(Box::new(IfmibUrlError::User(
            url.to_string(),
        )))));
    }
    let [ports] = t.segments.as_slice() else {
        return Some(Err(shape()));
    };
    let outlets: Vec<String> = ports.split(',').map(str::to_string).collect();
    if outlets.iter().any(String::is_empty) || !t.query.is_empty() {
        return Some(Err(shape()));
    }
    let host = crate::platform::target::host_port(&t.host, t.port.unwrap_or(161));
    let pdu = super::build::PduOptions {
        endpoint: Some(format!("snmp://{host}")),
        ip: None,
        ipport: None,
        profile: Some("ifmib".into()),
        version: Some("2c".into()),
        security_level: None,
        auth_protocol: None,
        priv_protocol: None,
        username: None,
        community: o.credential.clone(),
        auth: CredentialRef::None,
        privacy: CredentialRef::None,
        timing: None,
    };
    Some(
        snmp(&SnmpOptions {
            own: Some(pdu),
            named: Vec::new(),
            outlets,
            defaults: super::build::PduDefaults::NATIVE,
        })
        .map_err(Into::into),
    )
}

/// The PDU method of a node: its outlets on their PDUs
/// ([`outlet_parts`]: at least one outlet).
pub fn snmp(o: &SnmpOptions) -> Result<Box<dyn Method>, BuildError> {
    let (config, credentials) = outlet_parts(o)?;
    Ok(SnmpMethod::boxed(config, credentials))
}

/// An SNMP method: a node's outlets on one or more PDUs; each PDU's
/// secrets are filled from its [`SnmpCredentials`] at build time.
#[derive(Clone, Debug)]
pub struct SnmpMethod {
    /// Everything but the secrets (their slots hold empty secrets).
    pub config: SnmpConfig,
    /// Per PDU, in the order of `config.pdus`.
    pub credentials: Vec<SnmpCredentials>,
}

impl SnmpMethod {
    /// The method as a plan holds it.
    pub fn boxed(config: SnmpConfig, credentials: Vec<SnmpCredentials>) -> Box<dyn Method> {
        Box::new(SnmpMethod {
            config,
            credentials,
        })
    }
}

const NONE: &CredentialRef = &CredentialRef::None;
const NO_PIN: &ExpectedIdentity = &ExpectedIdentity {
    uuid: None,
    serial: None,
    names: Vec::new(),
};

impl Method for SnmpMethod {
    fn platform(&self) -> &'static dyn Platform {
        &PLATFORM
    }
    fn clone_box(&self) -> Box<dyn Method> {
        Box::new(self.clone())
    }
    fn endpoint(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = &self.config;
        for (i, p) in config.pdus.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}/", p.url())?;
            let outlets = config.outlets.iter().filter(|o| o.pdu == i);
            for (k, o) in outlets.enumerate() {
                if k > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{}", o.plug)?;
            }
        }
        Ok(())
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.config.describe())
    }
    fn device_keys(&self) -> Vec<crate::lock::DeviceKey> {
        let mut keys: Vec<_> = self.config.pdus.iter().map(|p| p.lock_key()).collect();
        keys.sort();
        keys.dedup();
        keys
    }
    fn party(&self) -> Party {
        // A PDU cuts the node's power from outside: independent of the BMC;
        // a switch's ports cut its network.
        match self.effect() {
            platform::Effect::Isolated => Party::Fabric,
            platform::Effect::Power => Party::Outlet,
        }
    }
    fn effect(&self) -> platform::Effect {
        match self.config.is_fabric() {
            true => platform::Effect::Isolated,
            false => platform::Effect::Power,
        }
    }
    fn paced(&self) -> bool {
        false
    }
    fn username(&self) -> &str {
        match self.config.pdus.first().map(|p| &p.security) {
            Some(Security::Usm(u)) => &u.name,
            _ => "",
        }
    }
    fn credential(&self) -> &CredentialRef {
        match (self.config.pdus.first(), self.credentials.first()) {
            (Some(p), Some(c)) => c.used(&p.security).first().copied().unwrap_or(NONE),
            _ => NONE,
        }
    }
    fn credentials(&self) -> Vec<(Option<String>, &CredentialRef)> {
        let mut v = Vec::new();
        for (pdu, c) in self.config.pdus.iter().zip(&self.credentials) {
            for r in c.used(&pdu.security) {
                v.push((Some(format!("PDU {}", pdu.label)), r));
            }
        }
        v
    }
    fn expected(&self) -> &ExpectedIdentity {
        NO_PIN
    }
    fn pinnable(&self) -> bool {
        false
    }
    fn set_expected(&mut self, identity: ExpectedIdentity) -> Result<(), PinError> {
        match identity.is_empty() {
            true => Ok(()),
            false => Err(PinError::Pdu),
        }
    }
    fn warnings(&self) -> Vec<String> {
        self.config.legacy_warnings()
    }
    fn set_max_off_watts(&mut self, watts: f64) {
        self.config.max_off_watts = watts;
    }
    fn build(&self, deadline: Option<Instant>) -> Local<'_, Result<Box<dyn Driver>, DriverError>> {
        Box::pin(async move {
            let c = fill_snmp(&self.config, &self.credentials, deadline)
                .await
                .map_err(|e| DriverError::new(e.kind(), Stage::Authenticate, e.to_string()))?;
            SnmpDriver::new(c)
                .map(|d| Box::new(d) as Box<dyn Driver>)
                .map_err(|e| platform::config_error(e.to_string()))
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl platform::PlatformDriver for SnmpDriver {
    fn traffic(&self) -> (u32, u32, u32) {
        let s = self.stats();
        (s.sent, s.received, s.retransmits)
    }
    /// Switch ports: each port's administrative state and link.
    async fn context(&mut self, _expect_on: bool, _deadline: Option<Instant>) -> Vec<String> {
        self.link_words()
    }
    /// The PDU's outlets: number (or SWITCH:OUTLET), name, state.
    async fn plugs(&mut self, deadline: Option<Instant>) -> Result<Vec<PlugEntry>, DriverError> {
        Ok(SnmpDriver::list(self, 0, deadline)
            .await?
            .into_iter()
            .map(|o| PlugEntry {
                id: o.id,
                alias: o.alias,
                state: o.state,
            })
            .collect())
    }
    /// Every PDU's outlets, each row naming its PDU; a PDU that cannot be
    /// listed is a row with its error.
    async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, String> {
        let mut rows = Vec::new();
        for pdu in 0..self.config().pdus.len() {
            let label = self.config().pdus[pdu].url();
            match SnmpDriver::list(self, pdu, deadline).await {
                Ok(outlets) => rows.extend(outlets.into_iter().map(|o| Listed {
                    target: Some(label.clone()),
                    name: format!("{} {}", o.id, o.alias),
                    uri: None,
                    state: o.state,
                    error: None,
                })),
                Err(e) => rows.push(Listed {
                    target: None,
                    name: "-".into(),
                    uri: None,
                    state: None,
                    error: Some(e.to_string()),
                }),
            }
        }
        Ok(rows)
    }
}

/// A credential reference from an inventory's `NAME_file`, `NAME_env` or
/// `NAME_script` field (the first given).
fn reference(
    f: &dyn crate::platform::build::Fields,
    name: &str,
) -> crate::platform::credential::CredentialRef {
    if let Some(p) = f.get(&format!("{name}_file")) {
        crate::platform::credential::CredentialRef::File(p.into())
    } else if let Some(v) = f.get(&format!("{name}_env")) {
        crate::platform::credential::CredentialRef::Env(v.to_string())
    } else if let Some(s) = f.get(&format!("{name}_script")) {
        crate::platform::credential::CredentialRef::Script(s.to_string())
    } else {
        crate::platform::credential::CredentialRef::None
    }
}

/// One PDU's options from an inventory's fields (a method's own endpoint or
/// a `[pdu.NAME]` table).
fn pdu_fields(f: &dyn crate::platform::build::Fields) -> super::build::PduOptions {
    let text = |k: &str| f.get(k).map(str::to_string);
    super::build::PduOptions {
        endpoint: text("endpoint"),
        ip: None,
        ipport: None,
        profile: text("profile"),
        version: text("snmp_version"),
        security_level: text("security_level"),
        auth_protocol: text("auth_protocol"),
        priv_protocol: text("priv_protocol"),
        username: text("username"),
        community: reference(f, "community"),
        auth: reference(f, "password"),
        privacy: reference(f, "priv_password"),
        timing: None,
    }
}

/// An inventory's PDU method: the node's outlets on its own endpoint and on
/// the `[pdu.NAME]` PDUs they name, through [`snmp`] with fencekit's
/// defaults.
pub fn from_fields(
    f: &dyn crate::platform::build::Fields,
) -> Result<Box<dyn Method>, super::build::BuildError> {
    snmp(&super::build::SnmpOptions {
        own: f.has("endpoint").then(|| pdu_fields(f)),
        named: f
            .tables("pdus")
            .into_iter()
            .map(|(name, table)| (name.to_string(), pdu_fields(table)))
            .collect(),
        outlets: f.list("outlets").to_vec(),
        defaults: super::build::PduDefaults::NATIVE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::build::MethodOptions;

    #[test]
    fn ifmib_targets_name_a_switchs_ports() {
        let o = MethodOptions::default();
        assert!(ifmib_url("snmp://sw/3", &o).is_none());
        for f in super::super::config::URL_FORMS.iter().filter(|f| f.target) {
            let m = ifmib_url(f.example, &o).expect("ifmib").expect(f.example);
            let m = m.as_any().downcast_ref::<SnmpMethod>().unwrap();
            assert_eq!(m.effect(), platform::Effect::Isolated);
            assert_eq!(m.party(), Party::Fabric);
            let ports: Vec<String> = m
                .config
                .outlets
                .iter()
                .map(|p| p.plug.to_string())
                .collect();
            assert_eq!(ports, ["Gi1/0/3", "7"]);
            assert_eq!(m.config.pdus[0].port, 1161);
        }
        for bad in [
            "ifmib://sw",
            "ifmib://sw/",
            "ifmib://sw/3/4",
            "ifmib://sw/3,,4",
            "ifmib://u@sw/3",
        ] {
            assert!(ifmib_url(bad, &o).is_some_and(|r| r.is_err()), "{bad}");
        }
        let e = ifmib_url("ifmib://u@sw/3", &o)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(e.contains("SNMPv3"), "{e}");
    }
}
