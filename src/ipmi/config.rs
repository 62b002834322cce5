//! What a caller configures for one IPMI BMC.

use crate::secret::Secret;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Longest user name IPMI can carry (IPMI 2.0 §22.29: 16 bytes).
pub const MAX_USERNAME: usize = 16;
/// Longest password for RMCP+ (IPMI 2.0: 20 bytes).
pub const MAX_PASSWORD_V2: usize = 20;
/// Longest password for IPMI 1.5 sessions (16 bytes).
pub const MAX_PASSWORD_V15: usize = 16;

/// Session privilege levels (IPMI 2.0 table 22-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Privilege {
    /// 1h.
    Callback = 1,
    /// 2h.
    User = 2,
    /// 3h.
    Operator = 3,
    /// 4h: needed by Chassis Control on most BMCs.
    Administrator = 4,
}

impl Privilege {
    /// The lowercase name fence-agents uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Privilege::Callback => "callback",
            Privilege::User => "user",
            Privilege::Operator => "operator",
            Privilege::Administrator => "administrator",
        }
    }

    /// From the wire value.
    pub fn from_u8(v: u8) -> Option<Self> {
        match v & 0x0f {
            1 => Some(Privilege::Callback),
            2 => Some(Privilege::User),
            3 => Some(Privilege::Operator),
            4 => Some(Privilege::Administrator),
            _ => None,
        }
    }
}

impl fmt::Display for Privilege {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Privilege {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "callback" => Ok(Privilege::Callback),
            "user" => Ok(Privilege::User),
            "operator" => Ok(Privilege::Operator),
            "administrator" | "admin" => Ok(Privilege::Administrator),
            _ => Err(format!(
                "unknown privilege level '{s}' (expected callback, user, operator or administrator)"
            )),
        }
    }
}

/// IPMI 1.5 authentication types (IPMI 1.5 table 6-?; 2.0 table 13-17 "AuthType").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthType {
    /// 00h: no authentication code.
    None = 0,
    /// 02h: MD5.
    Md5 = 2,
    /// 04h: "straight password / key".
    Password = 4,
}

impl AuthType {
    /// The lowercase name fence-agents uses.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthType::None => "none",
            AuthType::Md5 => "md5",
            AuthType::Password => "password",
        }
    }
}

impl FromStr for AuthType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "none" => Ok(AuthType::None),
            "md5" => Ok(AuthType::Md5),
            "password" | "straight" => Ok(AuthType::Password),
            _ => Err(format!(
                "unknown authentication type '{s}' (expected md5, password or none)"
            )),
        }
    }
}

/// Which cipher suite an RMCP+ session uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CipherChoice {
    /// Ask the BMC (briefly), prefer 17, fall back to 3.
    #[default]
    Auto,
    /// Exactly this suite (3 or 17).
    Suite(u8),
}

impl FromStr for CipherChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "auto" | "" => Ok(CipherChoice::Auto),
            "3" => Ok(CipherChoice::Suite(3)),
            "17" => Ok(CipherChoice::Suite(17)),
            other => Err(format!(
                "cipher suite '{other}' is not supported (fencekit speaks suites 3 and 17; \
                 suites without integrity and confidentiality are refused)"
            )),
        }
    }
}

/// Protocol version / session type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// IPMI v2.0 RMCP+ ("lanplus").
    Lanplus,
    /// IPMI v1.5 ("lan"), with an authentication type (None: the best the BMC offers).
    Lan15(Option<AuthType>),
}

/// Everything needed to talk to one BMC.
#[derive(Clone, Debug)]
pub struct IpmiConfig {
    /// Host name or address of the BMC.
    pub host: String,
    /// UDP port (623).
    pub port: u16,
    /// User name (may be empty: the BMC's null user).
    pub username: String,
    /// Password.
    pub password: Secret,
    /// BMC key K_g (raw bytes), if the BMC uses one.
    pub kg: Option<Secret>,
    /// Cipher suite (lanplus only).
    pub cipher: CipherChoice,
    /// Privilege level requested.
    pub privilege: Privilege,
    /// Session type.
    pub version: Version,
    /// How long the first request waits for its answer before the BMC's
    /// round-trip time is known; afterwards the wait follows the measured
    /// round trip (see [`super::pacing`]).
    pub retransmit: Duration,
    /// The longest any one transmission waits for its answer before it is
    /// re-sent (or, for a power command, the chassis is read again): the
    /// per-request bound, as ipmitool's `-N` (agent mode: `--ipmitool-timeout`).
    pub retransmit_max: Duration,
    /// Accept IPMI 1.5 in-session replies without an authentication code
    /// when the BMC declares per-message authentication disabled. Off by
    /// default: that declaration arrives unauthenticated, and trusting it
    /// lets anyone on the path forge replies (an "off" that never happened).
    pub accept_unauthenticated_replies: bool,
    /// How long the pre-session Get Channel Cipher Suites query may take
    /// (quirk: some BMCs, and ipmi_sim, never answer it).
    pub cipher_query_timeout: Duration,
}

impl IpmiConfig {
    /// A configuration with fencekit's defaults for everything but the address and credentials.
    pub fn new(
        host: impl Into<String>,
        port: u16,
        username: impl Into<String>,
        password: Secret,
    ) -> Self {
        IpmiConfig {
            host: host.into(),
            port,
            username: username.into(),
            password,
            kg: None,
            cipher: CipherChoice::Auto,
            privilege: Privilege::Administrator,
            version: Version::Lanplus,
            retransmit: Duration::from_millis(500),
            retransmit_max: super::pacing::DEFAULT_CEILING,
            accept_unauthenticated_replies: false,
            cipher_query_timeout: Duration::from_millis(300),
        }
    }

    /// Checks lengths that IPMI cannot carry, with a message a person can act on.
    pub fn validate(&self) -> Result<(), String> {
        if self.username.len() > MAX_USERNAME {
            return Err(format!(
                "the user name is {} bytes long; IPMI carries at most {MAX_USERNAME}",
                self.username.len()
            ));
        }
        let max = match self.version {
            Version::Lanplus => MAX_PASSWORD_V2,
            Version::Lan15(_) => MAX_PASSWORD_V15,
        };
        if self.password.len() > max {
            return Err(format!(
                "the password is {} bytes long; {} carries at most {max} (quirk: BMCs truncate or \
                 reject longer ones silently, so fencekit refuses instead)",
                self.password.len(),
                match self.version {
                    Version::Lanplus => "IPMI 2.0",
                    Version::Lan15(_) => "IPMI 1.5",
                }
            ));
        }
        if let Some(kg) = &self.kg {
            if kg.len() > MAX_PASSWORD_V2 {
                return Err(format!(
                    "the K_g key is {} bytes long; at most {MAX_PASSWORD_V2}",
                    kg.len()
                ));
            }
        }
        Ok(())
    }
}

/// Parses `--hexadecimal-kg` (hex digits, optional `0x`), into raw key bytes.
pub fn parse_hex_kg(s: &str) -> Result<Secret, String> {
    let t = s.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if !t.len().is_multiple_of(2) || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("the K_g key must be an even number of hexadecimal digits".into());
    }
    let bytes: Vec<u8> = (0..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&t[i..i + 2], 16).unwrap_or(0))
        .collect();
    if bytes.len() > MAX_PASSWORD_V2 {
        return Err(format!(
            "the K_g key is {} bytes long; at most {MAX_PASSWORD_V2}",
            bytes.len()
        ));
    }
    Ok(Secret::new(bytes))
}
