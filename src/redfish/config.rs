//! What a caller configures for one Redfish service, and the BMC URL forms
//! Metal3/Ironic users already write (`redfish://host/redfish/v1/Systems/1`).

use crate::fingerprint::NotAFingerprint;
use crate::secret::Secret;
use std::fmt;
use std::time::Duration;

/// The service root used when none is given (DSP0266 §6.2).
pub const DEFAULT_REDFISH_URI: &str = "/redfish/v1";
/// Per-request timeout used when none is given.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// HTTP or HTTPS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// TLS (the default).
    Https,
    /// Plain HTTP: credentials travel in clear text; only when asked for.
    Http,
}

impl Scheme {
    /// `"https"` or `"http"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Https => "https",
            Scheme::Http => "http",
        }
    }

    /// 443 or 80.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Https => 443,
            Scheme::Http => 80,
        }
    }
}

/// How the BMC's certificate is trusted (shared by every HTTPS platform).
pub use crate::tls::TlsTrust;

/// Which variant of Redfish the URL named (informative: the driver decides
/// from what the service offers, not from the vendor name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `redfish://`.
    Generic,
    /// `idrac-redfish://`, `idrac-virtualmedia://`.
    Idrac,
    /// `ilo5-redfish://`.
    Ilo5,
}

/// Why a Redfish target, configuration or TLS trust setting is refused.
/// The texts are what users read; a front adds its own context.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// No host.
    #[error("no BMC address given")]
    NoAddress,
    /// A host with white space or a slash in it.
    #[error("'{0}' is not a host name or address")]
    BadHost(String),
    /// Port 0.
    #[error("port 0 is not a usable port")]
    PortZero,
    /// No user name.
    #[error("no user name given (Redfish needs one)")]
    NoUser,
    /// A user name HTTP Basic cannot carry.
    #[error("a user name cannot contain ':' with HTTP Basic authentication")]
    ColonInUser,
    /// A service root or system URI that is not an absolute path.
    #[error("{option} '{uri}' must be an absolute path such as /redfish/v1")]
    NotAbsolute {
        /// The option it came from (`--redfish-uri`, `--systems-uri`).
        option: &'static str,
        /// What was given.
        uri: String,
    },
    /// An expected UUID that is not one.
    #[error("'{0}' is not a UUID (expected 32 hex digits, as 8-4-4-4-12)")]
    NotUuid(String),
    /// A request timeout of zero.
    #[error("the request timeout must be above zero")]
    ZeroTimeout,
    /// Text without `://`.
    #[error("'{0}' is not a URL (expected redfish://host/…)")]
    NotUrl(String),
    /// A scheme that is not one of the Redfish ones.
    #[error(
        "unknown scheme '{0}' (expected redfish, redfish+https, redfish+http, \
         idrac-redfish, idrac-virtualmedia or ilo5-redfish)"
    )]
    UnknownScheme(String),
    /// A URL with `?` or `#`.
    #[error("'{0}': a query or fragment is not part of a BMC address")]
    QueryOrFragment(String),
    /// `user:password@` in the URL (the password is not kept).
    #[error(
        "a password in the URL is not accepted (it would show in process lists); \
         use --password-file, --password-env or FENCEKIT_PASSWORD"
    )]
    PasswordInUrl,
    /// `@` with nothing before it.
    #[error("'{0}': empty user name before '@'")]
    EmptyUser(String),
    /// A port that is not 1-65535.
    #[error("'{0}' is not a port number (1-65535)")]
    Port(String),
    /// `[` without `]`.
    #[error("'{0}': unclosed '[' in an IPv6 address")]
    UnclosedBracket(String),
    /// No host in the URL.
    #[error("no host in the URL")]
    NoHost,
    /// `//` in the path.
    #[error("'{0}': empty path segment")]
    EmptySegment(String),
    /// A path to a Manager (quirk 25); `root` is the service root to use.
    #[error(
        "'{path}' names a Manager, not a ComputerSystem; power is controlled through \
         {root}/Systems/ID (or leave the path out to discover the system)"
    )]
    Manager {
        /// The path given.
        path: String,
        /// The service root before `/Managers`.
        root: String,
    },
    /// A pinned certificate fingerprint that is not one.
    #[error(transparent)]
    Fingerprint(#[from] NotAFingerprint),
    /// More than one kind of certificate trust.
    #[error("give only one of --ssl-insecure, --ca-cert and --ssl-fingerprint")]
    TwoTrusts,
}

/// Everything needed to talk to one Redfish system.
#[derive(Clone)]
pub struct RedfishConfig {
    /// HTTPS or HTTP.
    pub scheme: Scheme,
    /// Host name or IP address (IPv6 without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// User name.
    pub username: String,
    /// Password (never printed).
    pub password: Secret,
    /// Service root for discovery (default `/redfish/v1`).
    pub redfish_uri: String,
    /// The ComputerSystem resource, when known (skips discovery).
    pub systems_uri: Option<String>,
    /// Which of several systems: its Id, last path segment, `@odata.id`, Name or UUID.
    pub plug: Option<String>,
    /// The system UUID the caller expects (any spelling
    /// [`crate::engine::identity::normalise_uuid`] reads). Without `systems_uri`
    /// and `plug`, it selects the system among several: exactly one member
    /// must report it, or discovery refuses and names the candidates.
    /// (Comparing it with the fenced system is the engine's identity check.)
    pub expect_uuid: Option<String>,
    /// Certificate trust.
    pub tls: TlsTrust,
    /// Use SessionService (X-Auth-Token) instead of HTTP Basic on every request.
    pub session_auth: bool,
    /// Upper bound for each HTTP request (cut further by the step deadline).
    pub request_timeout: Duration,
    /// The vendor the URL named, if any.
    pub flavor: Flavor,
}

impl fmt::Debug for RedfishConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedfishConfig")
            .field("scheme", &self.scheme)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &self.password)
            .field("redfish_uri", &self.redfish_uri)
            .field("systems_uri", &self.systems_uri)
            .field("plug", &self.plug)
            .field("expect_uuid", &self.expect_uuid)
            .field("tls", &self.tls)
            .field("session_auth", &self.session_auth)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

impl RedfishConfig {
    /// The device the per-device lock is keyed by: host, the port when
    /// it is not the scheme's default, and the system when the target
    /// names its path (`systems_uri`, or a `plug` given as an
    /// `@odata.id`). A system chosen by discovery (no path, a plug that is
    /// an Id, a Name or a UUID) is not known before the service is asked,
    /// so such a run covers the whole service.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        let system = self
            .systems_uri
            .as_deref()
            .or(self.plug.as_deref().filter(|p| p.starts_with('/')));
        crate::lock::DeviceKey::new(&self.host, self.port, self.scheme.default_port())
            .with_system(system, "/redfish/v1/Systems/")
    }

    /// HTTPS on `port` with verified certificates, Basic auth and discovery.
    pub fn new(host: &str, port: u16, username: &str, password: Secret) -> Self {
        RedfishConfig {
            scheme: Scheme::Https,
            host: host.to_string(),
            port,
            username: username.to_string(),
            password,
            redfish_uri: DEFAULT_REDFISH_URI.to_string(),
            systems_uri: None,
            plug: None,
            expect_uuid: None,
            tls: TlsTrust::default(),
            session_auth: false,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            flavor: Flavor::Generic,
        }
    }

    /// `scheme://host:port` (IPv6 hosts in brackets), without a path.
    pub fn base_url(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{}://{}:{}", self.scheme.as_str(), host, self.port)
    }

    /// Checks what can be checked before any request.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.is_empty() {
            return Err(ConfigError::NoAddress);
        }
        if self.host.chars().any(|c| c.is_whitespace() || c == '/') {
            return Err(ConfigError::BadHost(self.host.clone()));
        }
        if self.port == 0 {
            return Err(ConfigError::PortZero);
        }
        if self.username.is_empty() {
            return Err(ConfigError::NoUser);
        }
        if self.username.contains(':') {
            return Err(ConfigError::ColonInUser);
        }
        for (option, uri) in [
            ("--redfish-uri", Some(&self.redfish_uri)),
            ("--systems-uri", self.systems_uri.as_ref()),
        ] {
            if let Some(u) = uri {
                if !u.starts_with('/') || u.chars().any(|c| c.is_whitespace() || c == '#') {
                    return Err(ConfigError::NotAbsolute {
                        option,
                        uri: u.clone(),
                    });
                }
            }
        }
        if let Some(u) = &self.expect_uuid {
            if crate::engine::identity::normalise_uuid(u).is_none() {
                return Err(ConfigError::NotUuid(u.clone()));
            }
        }
        if self.request_timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout);
        }
        Ok(())
    }
}

/// A BMC URL split into its parts (no credentials: those come separately).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedfishTarget {
    /// HTTPS or HTTP.
    pub scheme: Scheme,
    /// Host (IPv6 without brackets).
    pub host: String,
    /// Port, or the scheme's default.
    pub port: u16,
    /// `user@` from the URL, if any.
    pub username: Option<String>,
    /// Service root for discovery.
    pub redfish_uri: String,
    /// The system's path, when the URL named one.
    pub systems_uri: Option<String>,
    /// The vendor the URL named.
    pub flavor: Flavor,
}

impl RedfishTarget {
    /// A configuration for this target with the given credentials (the
    /// URL's user name wins over `username` when both are present).
    pub fn config(&self, username: &str, password: Secret) -> RedfishConfig {
        let user = self.username.as_deref().unwrap_or(username);
        let mut c = RedfishConfig::new(&self.host, self.port, user, password);
        c.scheme = self.scheme;
        c.redfish_uri = self.redfish_uri.clone();
        c.systems_uri = self.systems_uri.clone();
        c.flavor = self.flavor;
        c
    }
}

/// True when `url` starts with one of the Redfish schemes [`parse_target`] takes.
pub fn is_redfish_url(url: &str) -> bool {
    url.split_once("://")
        .is_some_and(|(s, _)| scheme_of(&s.to_ascii_lowercase()).is_some())
}

fn scheme_of(s: &str) -> Option<(Scheme, Flavor)> {
    let (base, transport) = match s.split_once('+') {
        Some((b, "https")) => (b, Some(Scheme::Https)),
        Some((b, "http")) => (b, Some(Scheme::Http)),
        Some(_) => return None,
        None => (s, None),
    };
    let flavor = BASES.iter().find(|(b, _)| *b == base)?.1;
    Some((transport.unwrap_or(Scheme::Https), flavor))
}

/// The schemes (without `+http`/`+https`) and the BMC family each names:
/// Metal3/Ironic's names. [`URL_FORMS`] has a row for each.
const BASES: &[(&str, Flavor)] = &[
    ("redfish", Flavor::Generic),
    ("redfish-virtualmedia", Flavor::Generic),
    ("idrac-redfish", Flavor::Idrac),
    ("idrac-virtualmedia", Flavor::Idrac),
    ("ilo5-redfish", Flavor::Ilo5),
];

/// The target URL forms of Redfish (see [`crate::engine::driver::UrlForm`]).
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[
    crate::engine::driver::UrlForm {
        scheme: "redfish",
        form: "redfish://[USER@]HOST[:PORT][/redfish/v1[/Systems/ID]]",
        meaning: "a Redfish BMC over HTTPS (without /Systems/ID: found by discovery); port 443",
        target: true,
        example: "redfish://admin@10.0.7.18/redfish/v1/Systems/1",
    },
    crate::engine::driver::UrlForm {
        scheme: "redfish+https",
        form: "redfish+https://[USER@]HOST[:PORT][/PATH]",
        meaning: "the same, HTTPS said explicitly (Metal3)",
        target: true,
        example: "redfish+https://10.0.7.18:8443",
    },
    crate::engine::driver::UrlForm {
        scheme: "redfish+http",
        form: "redfish+http://[USER@]HOST[:PORT][/PATH]",
        meaning: "Redfish over plain HTTP (emulators, labs); port 80",
        target: true,
        example: "redfish+http://127.0.0.1:8000/redfish/v1/Systems/abc",
    },
    crate::engine::driver::UrlForm {
        scheme: "redfish-virtualmedia",
        form: "redfish-virtualmedia://[USER@]HOST[:PORT][/PATH]",
        meaning: "Metal3's virtual-media name: power through Redfish as redfish://",
        target: true,
        example: "redfish-virtualmedia://10.0.7.18/redfish/v1/Systems/1",
    },
    crate::engine::driver::UrlForm {
        scheme: "idrac-redfish",
        form: "idrac-redfish://[USER@]HOST[:PORT][/PATH]",
        meaning: "a Dell iDRAC through Redfish (Metal3)",
        target: true,
        example: "idrac-redfish://root@10.0.7.19/redfish/v1/Systems/System.Embedded.1",
    },
    crate::engine::driver::UrlForm {
        scheme: "idrac-virtualmedia",
        form: "idrac-virtualmedia://[USER@]HOST[:PORT][/PATH]",
        meaning: "Metal3's iDRAC virtual-media name: power as idrac-redfish://",
        target: true,
        example: "idrac-virtualmedia://10.0.7.19",
    },
    crate::engine::driver::UrlForm {
        scheme: "ilo5-redfish",
        form: "ilo5-redfish://[USER@]HOST[:PORT][/PATH]",
        meaning: "an HPE iLO 5 through Redfish (Metal3)",
        target: true,
        example: "ilo5-redfish://10.0.7.20/redfish/v1/Systems/1",
    },
    crate::engine::driver::UrlForm {
        scheme: "",
        form: "SCHEME+http://..., SCHEME+https://...",
        meaning: "any Redfish scheme above over plain HTTP or HTTPS, e.g. idrac-redfish+http://",
        target: true,
        example: "ilo5-redfish+http://10.0.7.20:8080",
    },
];

/// Parses `redfish://[user@]host[:port][/redfish/v1[/Systems/ID]]` and the
/// other Metal3/Ironic forms: `redfish+https://`, `redfish+http://`,
/// `idrac-redfish://`, `idrac-virtualmedia://`, `ilo5-redfish://` (each also
/// with `+http`/`+https`). A path without a system id means discovery; a
/// path to a Manager is refused with a hint (quirk 25).
pub fn parse_target(url: &str) -> Result<RedfishTarget, ConfigError> {
    let (scheme_text, rest) = url
        .split_once("://")
        .ok_or_else(|| ConfigError::NotUrl(url.to_string()))?;
    let (scheme, flavor) = scheme_of(&scheme_text.to_ascii_lowercase())
        .ok_or_else(|| ConfigError::UnknownScheme(scheme_text.to_string()))?;
    if rest.contains('?') || rest.contains('#') {
        return Err(ConfigError::QueryOrFragment(url.to_string()));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let username = match userinfo {
        Some(u) if u.contains(':') => return Err(ConfigError::PasswordInUrl),
        Some("") => return Err(ConfigError::EmptyUser(url.to_string())),
        Some(u) => Some(u.to_string()),
        None => None,
    };
    let (host, port) = split_host_port(hostport)?;
    let port = port.unwrap_or(scheme.default_port());
    let (redfish_uri, systems_uri) = split_path(path)?;
    Ok(RedfishTarget {
        scheme,
        host,
        port,
        username,
        redfish_uri,
        systems_uri,
        flavor,
    })
}

fn split_host_port(s: &str) -> Result<(String, Option<u16>), ConfigError> {
    let bad_port = |p: &str| ConfigError::Port(p.to_string());
    let parse_port = |p: &str| match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(bad_port(p)),
        Ok(n) => Ok(n),
    };
    if let Some(v6) = s.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| ConfigError::UnclosedBracket(s.to_string()))?;
        let port = match after {
            "" => None,
            p => Some(parse_port(p.strip_prefix(':').ok_or_else(|| bad_port(p))?)?),
        };
        if host.is_empty() {
            return Err(ConfigError::NoHost);
        }
        return Ok((host.to_string(), port));
    }
    let (host, port) = match s.split_once(':') {
        Some((h, p)) => (h, Some(parse_port(p)?)),
        None => (s, None),
    };
    if host.is_empty() {
        return Err(ConfigError::NoHost);
    }
    Ok((host.to_string(), port))
}

fn split_path(path: &str) -> Result<(String, Option<String>), ConfigError> {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return Ok((DEFAULT_REDFISH_URI.to_string(), None));
    }
    if trimmed.contains("//") {
        return Err(ConfigError::EmptySegment(path.to_string()));
    }
    let lower = trimmed.to_ascii_lowercase();
    if let Some(i) = lower.find("/managers") {
        let root = &trimmed[..i];
        return Err(ConfigError::Manager {
            path: path.to_string(),
            root: if root.is_empty() {
                DEFAULT_REDFISH_URI
            } else {
                root
            }
            .to_string(),
        });
    }
    if let Some(i) = lower.find("/systems") {
        let root = &trimmed[..i];
        let root = if root.is_empty() {
            DEFAULT_REDFISH_URI
        } else {
            root
        };
        let after = &trimmed[i + "/systems".len()..];
        return Ok(match after {
            "" => (root.to_string(), None),
            _ if after.starts_with('/') => (root.to_string(), Some(trimmed.to_string())),
            // e.g. /redfish/v1/SystemsX: not a systems path, a root
            _ => (trimmed.to_string(), None),
        });
    }
    Ok((trimmed.to_string(), None))
}

/// Certificate trust from the command-line options or inventory fields
/// (`--ssl-insecure`, `--ca-cert`, `--ssl-fingerprint`: at most one).
pub fn tls_trust(
    insecure: bool,
    ca_cert: Option<&std::path::Path>,
    fingerprint: Option<&str>,
) -> Result<TlsTrust, ConfigError> {
    crate::tls::trust(insecure, ca_cert, fingerprint).map_err(|e| match e {
        crate::tls::TrustError::Fingerprint(f) => ConfigError::Fingerprint(f),
        crate::tls::TrustError::TwoTrusts => ConfigError::TwoTrusts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metal3_forms() {
        let t = parse_target("redfish://10.1.2.3/redfish/v1/Systems/1").unwrap();
        assert_eq!(t.scheme, Scheme::Https);
        assert_eq!((t.host.as_str(), t.port), ("10.1.2.3", 443));
        assert_eq!(t.redfish_uri, "/redfish/v1");
        assert_eq!(t.systems_uri.as_deref(), Some("/redfish/v1/Systems/1"));

        let t = parse_target("redfish+http://bmc:8000/redfish/v1/").unwrap();
        assert_eq!((t.scheme, t.port), (Scheme::Http, 8000));
        assert_eq!(t.systems_uri, None);

        let t =
            parse_target("idrac-redfish://admin@bmc/redfish/v1/Systems/System.Embedded.1").unwrap();
        assert_eq!(t.flavor, Flavor::Idrac);
        assert_eq!(t.username.as_deref(), Some("admin"));
        assert_eq!(
            t.systems_uri.as_deref(),
            Some("/redfish/v1/Systems/System.Embedded.1")
        );

        let t = parse_target("ilo5-redfish://[fe80::1]:8443").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("fe80::1", 8443));
        assert_eq!(t.flavor, Flavor::Ilo5);
        assert_eq!(t.redfish_uri, "/redfish/v1");

        let t = parse_target("redfish+https://h/redfish/v1/Systems").unwrap();
        assert_eq!(t.systems_uri, None);
        let t = parse_target("REDFISH://h").unwrap();
        assert_eq!(t.scheme, Scheme::Https);
    }

    #[test]
    fn refusals_say_why() {
        let e = parse_target("redfish://u:pw@h/").unwrap_err();
        assert_eq!(e, ConfigError::PasswordInUrl);
        assert!(!e.to_string().contains("pw@"));
        assert!(matches!(
            parse_target("redfish://h/redfish/v1/Managers/1"),
            Err(ConfigError::Manager { .. })
        ));
        assert!(matches!(
            parse_target("ipmi://h"),
            Err(ConfigError::UnknownScheme(_))
        ));
        assert!(matches!(
            parse_target("redfish://h:0/"),
            Err(ConfigError::Port(_))
        ));
        assert!(matches!(
            parse_target("redfish://h:x/"),
            Err(ConfigError::Port(_))
        ));
        assert_eq!(parse_target("redfish://:443/"), Err(ConfigError::NoHost));
        assert!(parse_target("redfish://h/?a=b").is_err());
        assert!(parse_target("bmc").is_err());
        assert!(is_redfish_url("idrac-redfish+https://x"));
        assert!(!is_redfish_url("ipmi://x"));
    }

    #[test]
    fn messages_read_as_they_always_have() {
        let text = |r: Result<RedfishTarget, ConfigError>| r.unwrap_err().to_string();
        assert_eq!(
            text(parse_target("bmc")),
            "'bmc' is not a URL (expected redfish://host/…)"
        );
        assert_eq!(
            text(parse_target("ipmi://h")),
            "unknown scheme 'ipmi' (expected redfish, redfish+https, redfish+http, \
             idrac-redfish, idrac-virtualmedia or ilo5-redfish)"
        );
        assert_eq!(
            text(parse_target("redfish://h/?a=b")),
            "'redfish://h/?a=b': a query or fragment is not part of a BMC address"
        );
        assert_eq!(
            text(parse_target("redfish://u:pw@h/")),
            "a password in the URL is not accepted (it would show in process lists); \
             use --password-file, --password-env or FENCEKIT_PASSWORD"
        );
        assert_eq!(
            text(parse_target("redfish://@h/")),
            "'redfish://@h/': empty user name before '@'"
        );
        assert_eq!(
            text(parse_target("redfish://h:0/")),
            "'0' is not a port number (1-65535)"
        );
        assert_eq!(
            text(parse_target("redfish://[::1]x/")),
            "'x' is not a port number (1-65535)"
        );
        assert_eq!(
            text(parse_target("redfish://[::1/")),
            "'[::1': unclosed '[' in an IPv6 address"
        );
        assert_eq!(text(parse_target("redfish://[]/")), "no host in the URL");
        assert_eq!(
            text(parse_target("redfish://h/redfish//v1")),
            "'/redfish//v1': empty path segment"
        );
        assert_eq!(
            text(parse_target("redfish://h/Managers/1")),
            "'/Managers/1' names a Manager, not a ComputerSystem; power is controlled \
             through /redfish/v1/Systems/ID (or leave the path out to discover the system)"
        );
        assert_eq!(
            text(parse_target("redfish://h/rf/Managers/1")),
            "'/rf/Managers/1' names a Manager, not a ComputerSystem; power is controlled \
             through /rf/Systems/ID (or leave the path out to discover the system)"
        );
        assert_eq!(
            tls_trust(true, None, Some("x")).unwrap_err().to_string(),
            "give only one of --ssl-insecure, --ca-cert and --ssl-fingerprint"
        );
        assert_eq!(
            tls_trust(false, None, Some("SHA256:abcd"))
                .unwrap_err()
                .to_string(),
            "'SHA256:abcd' is not a SHA-256 fingerprint (expected SHA256: and 64 hex digits, \
             colons allowed)"
        );

        let good = RedfishConfig::new("h", 443, "u", Secret::default());
        good.validate().unwrap();
        type Spoil = fn(&mut RedfishConfig);
        let cases: [(Spoil, &str); 9] = [
            (|c| c.host.clear(), "no BMC address given"),
            (
                |c| c.host = "a b".into(),
                "'a b' is not a host name or address",
            ),
            (|c| c.port = 0, "port 0 is not a usable port"),
            (
                |c| c.username.clear(),
                "no user name given (Redfish needs one)",
            ),
            (
                |c| c.username = "a:b".into(),
                "a user name cannot contain ':' with HTTP Basic authentication",
            ),
            (
                |c| c.redfish_uri = "redfish/v1".into(),
                "--redfish-uri 'redfish/v1' must be an absolute path such as /redfish/v1",
            ),
            (
                |c| c.systems_uri = Some("/a#b".into()),
                "--systems-uri '/a#b' must be an absolute path such as /redfish/v1",
            ),
            (
                |c| c.expect_uuid = Some("nope".into()),
                "'nope' is not a UUID (expected 32 hex digits, as 8-4-4-4-12)",
            ),
            (
                |c| c.request_timeout = Duration::ZERO,
                "the request timeout must be above zero",
            ),
        ];
        for (spoil, want) in cases {
            let mut c = good.clone();
            spoil(&mut c);
            assert_eq!(c.validate().unwrap_err().to_string(), want);
        }
    }

    #[test]
    fn config_from_target_and_debug_redacts() {
        let t = parse_target("redfish+http://[::1]:8000/redfish/v1/Systems/a").unwrap();
        let c = t.config("root", Secret::from_str_value("hunter2"));
        assert_eq!(c.base_url(), "http://[::1]:8000");
        assert_eq!(c.username, "root");
        c.validate().unwrap();
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("hunter2"));
        let mut bad = c.clone();
        bad.systems_uri = Some("Systems/1".into());
        assert!(bad.validate().is_err());
    }
}

#[cfg(test)]
mod url_form_tests {
    use super::{parse_target, BASES, URL_FORMS};

    #[test]
    fn every_url_form_parses_and_every_scheme_has_a_form() {
        for f in URL_FORMS {
            parse_target(f.example).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
        for (base, _) in BASES {
            assert!(
                URL_FORMS.iter().any(|f| f.scheme == *base),
                "redfish scheme {base}:// has no row in URL_FORMS"
            );
            for t in ["http", "https"] {
                parse_target(&format!("{base}+{t}://h")).unwrap();
            }
        }
        assert!(parse_target("redfish+ftp://h").is_err());
    }
}
