//! What a caller configures for one IPMI BMC.

use crate::secret::Secret;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Why an IPMI setting or target cannot be used. The texts are what users
/// read (after the front's own context, such as a node and level).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A privilege level fencekit does not know.
    #[error("unknown privilege level '{0}' (expected callback, user, operator or administrator)")]
    Privilege(String),
    /// An IPMI 1.5 authentication type fencekit does not know.
    #[error("unknown authentication type '{0}' (expected md5, password or none)")]
    AuthType(String),
    /// A cipher suite other than auto, 3 and 17.
    #[error(
        "cipher suite '{0}' is not supported (fencekit speaks suites 3 and 17; suites without \
         integrity and confidentiality are refused)"
    )]
    Cipher(String),
    /// A user name longer than IPMI carries (its length in bytes).
    #[error("the user name is {0} bytes long; IPMI carries at most {max}", max = MAX_USERNAME)]
    UsernameTooLong(usize),
    /// A password longer than the session type carries.
    #[error(
        "the password is {len} bytes long; {version} carries at most {max} (quirk: BMCs truncate \
         or reject longer ones silently, so fencekit refuses instead)"
    )]
    PasswordTooLong {
        /// Its length in bytes.
        len: usize,
        /// `IPMI 2.0` or `IPMI 1.5`.
        version: &'static str,
        /// The most that version carries.
        max: usize,
    },
    /// A K_g key longer than 20 bytes (its length).
    #[error("the K_g key is {0} bytes long; at most {max}", max = MAX_PASSWORD_V2)]
    KgTooLong(usize),
    /// K_g text that is not pairs of hexadecimal digits.
    #[error("the K_g key must be an even number of hexadecimal digits")]
    KgNotHex,
    /// Text without `://`.
    #[error("'{0}' is not a target URL (expected ipmi://HOST[:PORT]; or use --ip HOST)")]
    NotUrl(String),
    /// A scheme that is not IPMI's.
    #[error("unknown target scheme '{0}://' (expected ipmi://)")]
    UnknownScheme(String),
    /// An `ipmi://` URL that is malformed.
    #[error("'{url}': {problem}")]
    Target {
        /// The URL as written.
        url: String,
        /// What is wrong with it.
        problem: TargetProblem,
    },
}

/// What is wrong with an `ipmi://` URL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetProblem {
    /// A path, query or fragment.
    #[error("an ipmi:// target has no path")]
    Path,
    /// `user:password@`.
    #[error(
        "passwords do not belong in target URLs; use --password-file, --password-env or \
         FENCEKIT_PASSWORD"
    )]
    Password,
    /// `[` without `]`.
    #[error("unclosed '[' in the host")]
    Unclosed,
    /// Text after `]` that is not `:PORT`.
    #[error("unexpected text after ']'")]
    AfterBracket,
    /// No host.
    #[error("the host is missing")]
    NoHost,
    /// A host with brackets, blanks or control characters.
    #[error("'{0}' is not a host name or address")]
    Host(String),
    /// A port that is not 1–65535.
    #[error("'{0}' is not a port number")]
    Port(String),
}

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
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s.to_ascii_lowercase().as_str() {
            "callback" => Ok(Privilege::Callback),
            "user" => Ok(Privilege::User),
            "operator" => Ok(Privilege::Operator),
            "administrator" | "admin" => Ok(Privilege::Administrator),
            _ => Err(ConfigError::Privilege(s.to_string())),
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
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s.to_ascii_lowercase().as_str() {
            "none" => Ok(AuthType::None),
            "md5" => Ok(AuthType::Md5),
            "password" | "straight" => Ok(AuthType::Password),
            _ => Err(ConfigError::AuthType(s.to_string())),
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
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s.trim() {
            "auto" | "" => Ok(CipherChoice::Auto),
            "3" => Ok(CipherChoice::Suite(3)),
            "17" => Ok(CipherChoice::Suite(17)),
            other => Err(ConfigError::Cipher(other.to_string())),
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
    /// Vendor workarounds asked for by name ([`super::workaround`]); those
    /// that keep every check are also applied unasked when needed.
    pub workarounds: super::workaround::Workarounds,
}

/// The port RMCP and RMCP+ listen on unless told otherwise.
pub const DEFAULT_PORT: u16 = 623;

impl IpmiConfig {
    /// The device the per-device lock is keyed by (host, and the port
    /// when not 623): the same key a Redfish session to the BMC's port 443
    /// covers.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        crate::lock::DeviceKey::new(&self.host, self.port, DEFAULT_PORT)
    }

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
            workarounds: super::workaround::Workarounds::NONE,
        }
    }

    /// Checks lengths that IPMI cannot carry, with a message a person can act on.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.username.len() > MAX_USERNAME {
            return Err(ConfigError::UsernameTooLong(self.username.len()));
        }
        let max = match self.version {
            Version::Lanplus => MAX_PASSWORD_V2,
            Version::Lan15(_) => MAX_PASSWORD_V15,
        };
        if self.password.len() > max {
            return Err(ConfigError::PasswordTooLong {
                len: self.password.len(),
                version: match self.version {
                    Version::Lanplus => "IPMI 2.0",
                    Version::Lan15(_) => "IPMI 1.5",
                },
                max,
            });
        }
        if let Some(kg) = &self.kg {
            if kg.len() > MAX_PASSWORD_V2 {
                return Err(ConfigError::KgTooLong(kg.len()));
            }
        }
        Ok(())
    }
}

/// Parses `--hexadecimal-kg` (hex digits, optional `0x`), into raw key bytes.
pub fn parse_hex_kg(s: &str) -> Result<Secret, ConfigError> {
    let t = s.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if !t.len().is_multiple_of(2) || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ConfigError::KgNotHex);
    }
    let bytes: Vec<u8> = (0..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&t[i..i + 2], 16).unwrap_or(0))
        .collect();
    if bytes.len() > MAX_PASSWORD_V2 {
        return Err(ConfigError::KgTooLong(bytes.len()));
    }
    Ok(Secret::new(bytes))
}

// Targets as written on the command line and in inventories:
// `ipmi://[USER@]HOST[:PORT]`.

/// A parsed IPMI target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpmiTarget {
    /// User name from the URL, if any.
    pub username: Option<String>,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// UDP port, if given.
    pub port: Option<u16>,
}

impl std::fmt::Display for IpmiTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.port {
            Some(p) => write!(f, "ipmi://{host}:{p}"),
            None => write!(f, "ipmi://{host}"),
        }
    }
}

/// Parses `ipmi://[USER@]HOST[:PORT][/]`. Other schemes get a message naming
/// what is supported.
pub fn parse_target(s: &str) -> Result<IpmiTarget, ConfigError> {
    let bad = |problem| ConfigError::Target {
        url: s.to_string(),
        problem,
    };
    let Some((scheme, rest)) = s.split_once("://") else {
        return Err(ConfigError::NotUrl(s.to_string()));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "ipmi" => {}
        _ => return Err(ConfigError::UnknownScheme(scheme.to_string())),
    }
    let rest = rest.trim_end_matches('/');
    if rest.contains('/') || rest.contains('?') || rest.contains('#') {
        return Err(bad(TargetProblem::Path));
    }
    let (user, hostport) = match rest.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, rest),
    };
    if user.is_some_and(|u| u.contains(':')) {
        return Err(bad(TargetProblem::Password));
    }
    let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
        let (h, after) = h
            .split_once(']')
            .ok_or_else(|| bad(TargetProblem::Unclosed))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| bad(TargetProblem::AfterBracket))?,
            ),
        };
        (h.to_string(), port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h.to_string(), Some(p)),
            _ => (hostport.to_string(), None),
        }
    };
    if host.is_empty() {
        return Err(bad(TargetProblem::NoHost));
    }
    // Found by fuzzing: `h[::1]:623` was taken whole as a host, which then
    // displayed as `ipmi://[h[::1]:623]` and did not read back.
    if host
        .chars()
        .any(|c| c == '[' || c == ']' || c.is_whitespace() || c.is_control())
    {
        return Err(bad(TargetProblem::Host(host)));
    }
    let port = match port {
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad(TargetProblem::Port(p.to_string())))?,
        ),
        None => None,
    };
    Ok(IpmiTarget {
        username: user.filter(|u| !u.is_empty()).map(str::to_string),
        host,
        port,
    })
}

/// The target URL forms of IPMI (see [`crate::engine::driver::UrlForm`]).
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[crate::engine::driver::UrlForm {
    scheme: "ipmi",
    form: "ipmi://[USER@]HOST[:PORT]",
    meaning: "a BMC over IPMI LAN (RMCP+ 2.0, or 1.5); port 623",
    target: true,
    example: "ipmi://admin@[fd00::17]:6230",
}];

#[cfg(test)]
mod target_tests {
    use super::*;

    #[test]
    fn forms() {
        let t = parse_target("ipmi://admin@127.0.0.1:6230").unwrap();
        assert_eq!(t.username.as_deref(), Some("admin"));
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", Some(6230)));
        assert_eq!(parse_target("ipmi://bmc7/").unwrap().port, None);
        assert_eq!(parse_target("ipmi://[::1]:623").unwrap().host, "::1");
        assert_eq!(
            parse_target("ipmi://[::1]:623").unwrap().to_string(),
            "ipmi://[::1]:623"
        );
        assert!(parse_target("ipmi://a:b@h")
            .unwrap_err()
            .to_string()
            .contains("passwords"));
        assert!(parse_target("ipmi://h:0").is_err());
        assert!(parse_target("ipmi://h:99999").is_err());
        assert!(parse_target("http://h").is_err());
        assert!(parse_target("node07").is_err());
        assert!(parse_target("ipmi://").is_err());
    }

    #[test]
    fn hosts_with_brackets_or_control_characters_are_refused() {
        // fuzz/corpus/targets/crash-ipmi-host-brackets
        for bad in [
            "ipmi://\u{1}1[::1]:623/",
            "ipmi://h[1]",
            "ipmi://[[]",
            "ipmi://a b",
        ] {
            assert!(parse_target(bad).is_err(), "{bad:?}");
        }
        let t = parse_target("ipmi://[fe80::1]:623").unwrap();
        assert_eq!(parse_target(&t.to_string()).unwrap(), t);
    }

    #[test]
    fn messages_read_as_they_always_have() {
        let text = |r: Result<IpmiTarget, ConfigError>| r.unwrap_err().to_string();
        assert_eq!(
            text(parse_target("node07")),
            "'node07' is not a target URL (expected ipmi://HOST[:PORT]; or use --ip HOST)"
        );
        // Another platform's scheme given to an IPMI method is refused by
        // `method::build` first ("driver ipmi does not take 'ssh://'
        // endpoints …"); the IPMI parser knows only its own.
        assert_eq!(
            text(parse_target("ssh://h")),
            "unknown target scheme 'ssh://' (expected ipmi://)"
        );
        assert_eq!(
            text(parse_target("http://h")),
            "unknown target scheme 'http://' (expected ipmi://)"
        );
        assert_eq!(
            text(parse_target("ipmi://h/x")),
            "'ipmi://h/x': an ipmi:// target has no path"
        );
        assert_eq!(
            text(parse_target("ipmi://u:p@h")),
            "'ipmi://u:p@h': passwords do not belong in target URLs; use --password-file, \
             --password-env or FENCEKIT_PASSWORD"
        );
        assert_eq!(
            text(parse_target("ipmi://[::1")),
            "'ipmi://[::1': unclosed '[' in the host"
        );
        assert_eq!(
            text(parse_target("ipmi://[::1]x")),
            "'ipmi://[::1]x': unexpected text after ']'"
        );
        assert_eq!(
            text(parse_target("ipmi://:623")),
            "'ipmi://:623': the host is missing"
        );
        assert_eq!(
            text(parse_target("ipmi://a b")),
            "'ipmi://a b': 'a b' is not a host name or address"
        );
        assert_eq!(
            text(parse_target("ipmi://h:0")),
            "'ipmi://h:0': '0' is not a port number"
        );
        assert_eq!(
            "root".parse::<Privilege>().unwrap_err().to_string(),
            "unknown privilege level 'root' (expected callback, user, operator or administrator)"
        );
        assert_eq!(
            "sha".parse::<AuthType>().unwrap_err().to_string(),
            "unknown authentication type 'sha' (expected md5, password or none)"
        );
        assert_eq!(
            "0".parse::<CipherChoice>().unwrap_err().to_string(),
            "cipher suite '0' is not supported (fencekit speaks suites 3 and 17; suites without \
             integrity and confidentiality are refused)"
        );
        assert_eq!(
            parse_hex_kg("abc").unwrap_err().to_string(),
            "the K_g key must be an even number of hexadecimal digits"
        );
        assert_eq!(
            parse_hex_kg(&"00".repeat(21)).unwrap_err().to_string(),
            "the K_g key is 21 bytes long; at most 20"
        );
        let mut c = IpmiConfig::new("h", 623, "u".repeat(17), Secret::default());
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "the user name is 17 bytes long; IPMI carries at most 16"
        );
        c.username = "u".into();
        c.version = Version::Lan15(None);
        c.password = Secret::from_str_value(&"p".repeat(17));
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "the password is 17 bytes long; IPMI 1.5 carries at most 16 (quirk: BMCs truncate \
             or reject longer ones silently, so fencekit refuses instead)"
        );
    }
}

#[cfg(test)]
mod url_form_tests {
    #[test]
    fn every_url_form_parses() {
        for f in super::URL_FORMS {
            assert!(f.form.starts_with(&format!("{}://", f.scheme)), "{f:?}");
            super::parse_target(f.example)
                .map(|_| ())
                .unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }
}
