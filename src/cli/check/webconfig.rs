//! `check --watch --web-config FILE`: the Prometheus exporter-toolkit web
//! configuration (YAML) for the watch's `/metrics`: TLS (certificate and
//! key, client certificates verified against a CA), basic-auth users with
//! bcrypt hashes, response headers and a rate limit.
//!
//! Strict on purpose: an unknown key, or an option this responder does not
//! carry out, is refused at start (exit 64) with the key named, never
//! served less safely than the file asks. What is refused and why is in
//! docs/monitoring.md ("The web configuration").
//!
//! Secrets (the key, passwords from requests) are never logged or put in
//! an error: messages name keys and files, not values.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use zeroize::Zeroizing;

mod auth;
pub use auth::{AuthResult, RateLimit, Users};

/// The highest bcrypt cost accepted. Each step doubles the time of every
/// login, a wrong one included: cost 10 took 53 ms of CPU (htpasswd, here),
/// so 12 takes about 0.2 s of a core and 1 s under the documented 200m CPU
/// limit, while 14 would take 4 s there, near the 5 s a request may take.
pub const MAX_BCRYPT_COST: u32 = 12;

/// The file's shape (`deny_unknown_fields`: an unknown key is an error).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileShape {
    tls_server_config: Option<TlsShape>,
    http_server_config: Option<HttpShape>,
    basic_auth_users: Option<UniqueMap>,
    rate_limit: Option<RateShape>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TlsShape {
    cert: Option<String>,
    key: Option<InlineKey>,
    client_ca: Option<String>,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    client_ca_file: Option<PathBuf>,
    client_auth_type: Option<String>,
    client_allowed_sans: Option<Vec<String>>,
    min_version: Option<String>,
    max_version: Option<String>,
    cipher_suites: Option<Vec<String>>,
    prefer_server_cipher_suites: Option<bool>,
    curve_preferences: Option<Vec<String>>,
}

/// A map of strings whose keys must differ (a user given twice is an
/// error, not the last one winning).
#[derive(Default)]
struct UniqueMap(Vec<(String, String)>);

impl<'de> Deserialize<'de> for UniqueMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = UniqueMap;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of names to strings")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<UniqueMap, A::Error> {
                let mut out: Vec<(String, String)> = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, String>()? {
                    if out.iter().any(|(seen, _)| *seen == k) {
                        return Err(serde::de::Error::custom(format!("{k} is given twice")));
                    }
                    out.push((k, v));
                }
                Ok(UniqueMap(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A key written in the file: zeroised when dropped.
struct InlineKey(Zeroizing<String>);

impl<'de> Deserialize<'de> for InlineKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| InlineKey(Zeroizing::new(s)))
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct HttpShape {
    http2: Option<bool>,
    headers: Option<UniqueMap>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RateShape {
    interval: Option<serde_yaml_ng::Value>,
    burst: Option<u32>,
}

/// Why a web configuration cannot be used: names the file and the key.
#[derive(Debug)]
pub struct WebConfigError(pub String);

impl std::fmt::Display for WebConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(file: &Path, key: &str, why: impl std::fmt::Display) -> WebConfigError {
    WebConfigError(format!("--web-config {}: {key}: {why}", file.display()))
}

/// Response headers that may be set, and the values a browser knows.
const HEADERS: &[(&str, &[&str])] = &[
    ("Content-Security-Policy", &[]),
    ("X-Frame-Options", &["deny", "sameorigin"]),
    ("X-Content-Type-Options", &["nosniff"]),
    ("X-XSS-Protection", &[]),
    ("Strict-Transport-Security", &[]),
];

/// The TLS 1.2 suites that can be named (Go's names, as the file uses
/// them, and the ones fencekit's TLS library serves). TLS 1.3's suites are
/// not configurable (as in Go).
const SUITES: &[(&str, rustls::CipherSuite)] = &[
    (
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        rustls::CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
        rustls::CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
];

/// Go's curve names and the key-exchange groups fencekit has.
const CURVES: &[(&str, rustls::NamedGroup)] = &[
    ("X25519", rustls::NamedGroup::X25519),
    ("CurveP256", rustls::NamedGroup::secp256r1),
    ("CurveP384", rustls::NamedGroup::secp384r1),
];

/// A web configuration ready to serve with.
pub struct WebConfig {
    /// The file it was read from.
    pub path: PathBuf,
    /// TLS, when configured.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Client certificates verified against the CA: `Some(true)` required
    /// (RequireAndVerifyClientCert), `Some(false)` when given.
    pub client_certs: Option<bool>,
    /// Basic-auth users, when configured.
    pub users: Option<Users>,
    /// Headers added to every answer.
    pub headers: Vec<(String, String)>,
    /// Token bucket: one request per interval, bursts of `burst`.
    pub rate: Option<(Duration, u32)>,
    /// Said once at start (and after a reload).
    pub warnings: Vec<String>,
    /// The files it depends on (itself, certificate, key, CA), to notice a change.
    pub files: Vec<PathBuf>,
}

impl WebConfig {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<WebConfig, WebConfigError> {
        let text = Zeroizing::new(
            std::fs::read_to_string(path)
                .map_err(|e| WebConfigError(format!("--web-config {}: {e}", path.display())))?,
        );
        let base = path.parent().unwrap_or(Path::new("."));
        let shape: FileShape = if text.trim().is_empty() {
            FileShape::default()
        } else {
            serde_yaml_ng::from_str(&text).map_err(|e| {
                // serde_yaml's message names the key (with its path) and the
                // line. It quotes a value only of the wrong type: `key` and
                // the users' hashes take any string, so none of those.
                WebConfigError(format!("--web-config {}: {e}", path.display()))
            })?
        };
        let mut warnings = Vec::new();
        let mut files = vec![path.to_path_buf()];
        let world_readable = |p: &Path| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o004 != 0)
        };

        let mut client_certs = None;
        let tls = match shape.tls_server_config {
            None => None,
            Some(t) => {
                let resolve = |p: &Path| {
                    if p.is_absolute() {
                        p.to_path_buf()
                    } else {
                        base.join(p)
                    }
                };
                let pem = |inline: Option<&str>,
                           file: Option<&PathBuf>,
                           key: &str,
                           files: &mut Vec<PathBuf>|
                 -> Result<Option<Zeroizing<Vec<u8>>>, WebConfigError> {
                    match (inline, file) {
                        (Some(_), Some(_)) => Err(bad(
                            path,
                            &format!("tls_server_config.{key}"),
                            format!("give either {key} or {key}_file, not both"),
                        )),
                        (Some(s), None) => Ok(Some(Zeroizing::new(s.as_bytes().to_vec()))),
                        (None, Some(f)) => {
                            let f = resolve(f);
                            let bytes = std::fs::read(&f).map_err(|e| {
                                bad(
                                    path,
                                    &format!("tls_server_config.{key}_file"),
                                    format!("{}: {e}", f.display()),
                                )
                            })?;
                            files.push(f);
                            Ok(Some(Zeroizing::new(bytes)))
                        }
                        (None, None) => Ok(None),
                    }
                };
                let cert = pem(t.cert.as_deref(), t.cert_file.as_ref(), "cert", &mut files)?
                    .ok_or_else(|| bad(path, "tls_server_config", "needs cert_file (or cert)"))?;
                let key = pem(
                    t.key.as_ref().map(|k| k.0.as_str()),
                    t.key_file.as_ref(),
                    "key",
                    &mut files,
                )?
                .ok_or_else(|| bad(path, "tls_server_config", "needs key_file (or key)"))?;
                if t.key.is_some() && world_readable(path) {
                    warnings.push(format!(
                        "{}: the TLS key is written in this file and every user of this \
                         machine may read it: chmod o-r, or use key_file",
                        path.display()
                    ));
                }
                if let Some(f) = &t.key_file {
                    let f = resolve(f);
                    if world_readable(&f) {
                        warnings.push(format!(
                            "{}: every user of this machine may read this TLS key: chmod o-r",
                            f.display()
                        ));
                    }
                }
                let ca = pem(
                    t.client_ca.as_deref(),
                    t.client_ca_file.as_ref(),
                    "client_ca",
                    &mut files,
                )?;
                if t.client_allowed_sans.is_some() {
                    return Err(bad(
                        path,
                        "tls_server_config.client_allowed_sans",
                        "not supported: fencekit cannot match a client certificate's names; \
                         give such clients a CA of their own (client_ca_file)",
                    ));
                }
                let auth = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
                let key_name = "tls_server_config.client_auth_type";
                let verify = match auth {
                    "NoClientCert" => {
                        if ca.is_some() {
                            return Err(bad(
                                path,
                                key_name,
                                "a client CA is given but client_auth_type is NoClientCert, \
                                 so no certificate would be checked: set \
                                 RequireAndVerifyClientCert (or VerifyClientCertIfGiven)",
                            ));
                        }
                        None
                    }
                    "RequestClientCert" | "RequireAnyClientCert" => {
                        return Err(bad(
                            path,
                            key_name,
                            format!(
                                "{auth} accepts any certificate without checking it, which \
                                 authenticates no one; fencekit refuses it: use \
                                 RequireAndVerifyClientCert with client_ca_file"
                            ),
                        ))
                    }
                    "VerifyClientCertIfGiven" => Some(false),
                    "RequireAndVerifyClientCert" => Some(true),
                    other => {
                        return Err(bad(
                            path,
                            key_name,
                            format!(
                                "unknown value {other:?} (NoClientCert, VerifyClientCertIfGiven, \
                                 RequireAndVerifyClientCert; RequestClientCert and \
                                 RequireAnyClientCert are refused)"
                            ),
                        ))
                    }
                };
                client_certs = verify;
                let mut provider = rustls::crypto::ring::default_provider();
                if let Some(names) = &t.cipher_suites {
                    let mut chosen: Vec<rustls::SupportedCipherSuite> = provider
                        .cipher_suites
                        .iter()
                        .filter(|s| s.tls13().is_some())
                        .copied()
                        .collect();
                    for n in names {
                        let Some((_, id)) = SUITES.iter().find(|(name, _)| name == n) else {
                            return Err(bad(
                                path,
                                "tls_server_config.cipher_suites",
                                format!(
                                    "{n:?} is not served (TLS 1.2 suites served: {})",
                                    SUITES
                                        .iter()
                                        .map(|(n, _)| *n)
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                ),
                            ));
                        };
                        if let Some(s) = provider.cipher_suites.iter().find(|s| s.suite() == *id) {
                            if !chosen.contains(s) {
                                chosen.push(*s);
                            }
                        }
                    }
                    provider.cipher_suites = chosen;
                }
                if let Some(names) = &t.curve_preferences {
                    let mut groups = Vec::new();
                    for n in names {
                        let found = CURVES
                            .iter()
                            .find(|(name, _)| name == n)
                            .and_then(|(_, g)| {
                                provider.kx_groups.iter().find(|k| k.name() == *g).copied()
                            });
                        let Some(g) = found else {
                            return Err(bad(
                                path,
                                "tls_server_config.curve_preferences",
                                format!("{n:?} is not served (X25519, CurveP256, CurveP384)"),
                            ));
                        };
                        groups.push(g);
                    }
                    if groups.is_empty() {
                        return Err(bad(path, "tls_server_config.curve_preferences", "is empty"));
                    }
                    provider.kx_groups = groups;
                }
                let version = |key: &str, v: Option<&str>, default: u8| match v {
                    None => Ok(default),
                    Some("TLS10") => Ok(10),
                    Some("TLS11") => Ok(11),
                    Some("TLS12") => Ok(12),
                    Some("TLS13") => Ok(13),
                    Some(other) => Err(bad(
                        path,
                        &format!("tls_server_config.{key}"),
                        format!("unknown version {other:?} (TLS10, TLS11, TLS12, TLS13)"),
                    )),
                };
                let min = version("min_version", t.min_version.as_deref(), 12)?;
                let max = version("max_version", t.max_version.as_deref(), 13)?;
                if max < 12 {
                    return Err(bad(
                        path,
                        "tls_server_config.max_version",
                        "fencekit serves TLS 1.2 and 1.3 only",
                    ));
                }
                if min > max {
                    return Err(bad(
                        path,
                        "tls_server_config.min_version",
                        "is above max_version",
                    ));
                }
                if min < 12 {
                    warnings.push(format!(
                        "{}: min_version below TLS12: TLS 1.2 is served at least",
                        path.display()
                    ));
                }
                let versions: Vec<&'static rustls::SupportedProtocolVersion> = [
                    (12u8, &rustls::version::TLS12),
                    (13u8, &rustls::version::TLS13),
                ]
                .into_iter()
                .filter(|(v, _)| (min.max(12)..=max).contains(v))
                .map(|(_, p)| p)
                .collect();
                if min.max(12) == 13 && !provider.cipher_suites.iter().any(|s| s.tls13().is_some())
                {
                    return Err(bad(path, "tls_server_config.min_version", "no suite left"));
                }
                if max == 12 && !provider.cipher_suites.iter().any(|s| s.tls13().is_none()) {
                    return Err(bad(
                        path,
                        "tls_server_config.cipher_suites",
                        "no TLS 1.2 suite left",
                    ));
                }
                let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert)
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(path, "tls_server_config.cert_file", e))?;
                if certs.is_empty() {
                    return Err(bad(
                        path,
                        "tls_server_config.cert_file",
                        "no PEM certificate in it",
                    ));
                }
                // The PEM reader's error names the section, never the bytes.
                let key_der = PrivateKeyDer::from_pem_slice(&key).map_err(|e| {
                    bad(
                        path,
                        "tls_server_config.key_file",
                        format!("no private key read: {e}"),
                    )
                })?;
                let provider = Arc::new(provider);
                let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
                    .with_protocol_versions(&versions)
                    .map_err(|e| bad(path, "tls_server_config", e))?;
                let builder = match verify {
                    None => builder.with_no_client_auth(),
                    Some(required) => {
                        let ca = ca.ok_or_else(|| {
                            bad(
                                path,
                                key_name,
                                format!("{auth} needs client_ca_file (or client_ca)"),
                            )
                        })?;
                        let mut roots = rustls::RootCertStore::empty();
                        for c in CertificateDer::pem_slice_iter(&ca) {
                            let c =
                                c.map_err(|e| bad(path, "tls_server_config.client_ca_file", e))?;
                            roots
                                .add(c)
                                .map_err(|e| bad(path, "tls_server_config.client_ca_file", e))?;
                        }
                        if roots.is_empty() {
                            return Err(bad(
                                path,
                                "tls_server_config.client_ca_file",
                                "no PEM certificate in it",
                            ));
                        }
                        let v = rustls::server::WebPkiClientVerifier::builder_with_provider(
                            Arc::new(roots),
                            provider,
                        );
                        let v = if required {
                            v
                        } else {
                            v.allow_unauthenticated()
                        };
                        builder.with_client_cert_verifier(
                            v.build()
                                .map_err(|e| bad(path, "tls_server_config.client_ca_file", e))?,
                        )
                    }
                };
                let mut config = builder.with_single_cert(certs, key_der).map_err(|e| {
                    bad(
                        path,
                        "tls_server_config.key_file",
                        format!("the key does not go with the certificate: {e}"),
                    )
                })?;
                config.ignore_client_order = t.prefer_server_cipher_suites.unwrap_or(true);
                config.alpn_protocols = vec![b"http/1.1".to_vec()];
                Some(Arc::new(config))
            }
        };

        let http = shape.http_server_config.unwrap_or_default();
        // HTTP/2 or not: this responder speaks HTTP/1.1 (offered by ALPN),
        // which every scraper speaks; `http2` changes nothing of its safety.
        let _ = http.http2;
        let mut headers = Vec::new();
        for (name, value) in http.headers.unwrap_or_default().0 {
            let key = format!("http_server_config.headers.{name}");
            let Some((canon, allowed)) =
                HEADERS.iter().find(|(h, _)| h.eq_ignore_ascii_case(&name))
            else {
                return Err(bad(
                    path,
                    &key,
                    format!(
                        "this header cannot be set (only {})",
                        HEADERS
                            .iter()
                            .map(|(h, _)| *h)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            };
            if value.chars().any(|c| c.is_control()) {
                return Err(bad(path, &key, "a control character in the value"));
            }
            if !allowed.is_empty() && !allowed.iter().any(|a| a.eq_ignore_ascii_case(&value)) {
                return Err(bad(
                    path,
                    &key,
                    format!("{value:?} is not one of {}", allowed.join(", ")),
                ));
            }
            if !value.is_empty() {
                headers.push((canon.to_string(), value));
            }
        }

        let users = match shape.basic_auth_users {
            Some(UniqueMap(map)) if !map.is_empty() => {
                let mut entries = Vec::with_capacity(map.len());
                let mut max_cost = 4;
                for (user, hash) in map {
                    let key = format!("basic_auth_users.{user}");
                    if user.contains(':') {
                        return Err(bad(path, &key, "a user name cannot hold ':'"));
                    }
                    let cost = match hash.parse::<bcrypt::HashParts>() {
                        Ok(p) => p.get_cost(),
                        Err(_) => {
                            return Err(bad(
                                path,
                                &key,
                                "not a bcrypt hash ($2y$, $2b$ or $2a$, 60 characters: \
                                 `htpasswd -nBC 10 \"\" | tr -d ':\\n'` makes one)",
                            ))
                        }
                    };
                    if !(4..=MAX_BCRYPT_COST).contains(&cost) {
                        return Err(bad(
                            path,
                            &key,
                            format!(
                                "bcrypt cost {cost} is outside 4..={MAX_BCRYPT_COST} (each \
                                 step doubles the time of every login, a wrong one \
                                 included; 10 takes about 50 ms of a core)"
                            ),
                        ));
                    }
                    max_cost = max_cost.max(cost);
                    entries.push((Sha256::digest(user.as_bytes()).into(), hash));
                }
                if tls.is_none() {
                    warnings.push(format!(
                        "{}: basic_auth_users without tls_server_config: passwords cross the \
                         network in clear text; add tls_server_config",
                        path.display()
                    ));
                }
                Some(Users::new(entries, max_cost))
            }
            _ => None,
        };

        let rate = match shape.rate_limit {
            None => None,
            Some(r) => {
                let interval = match &r.interval {
                    None => Duration::ZERO,
                    Some(serde_yaml_ng::Value::Number(n)) if n.as_u64() == Some(0) => {
                        Duration::ZERO
                    }
                    Some(serde_yaml_ng::Value::String(s)) => crate::time::parse_duration(s)
                        .map_err(|e| bad(path, "rate_limit.interval", e))?,
                    Some(_) => {
                        return Err(bad(
                            path,
                            "rate_limit.interval",
                            "a duration such as 1s or 500ms",
                        ))
                    }
                };
                let burst = r.burst.unwrap_or(0);
                if interval.is_zero() {
                    None
                } else if burst == 0 {
                    return Err(bad(
                        path,
                        "rate_limit.burst",
                        "must be at least 1 when interval is set (0 would refuse every request)",
                    ));
                } else {
                    Some((interval, burst))
                }
            }
        };

        Ok(WebConfig {
            path: path.to_path_buf(),
            tls,
            client_certs,
            users,
            headers,
            rate,
            warnings,
            files,
        })
    }

    /// What a change of any of its files looks like (modification time,
    /// size, inode, each following links, as a mounted Secret swaps them).
    pub fn stamp(&self) -> Vec<Option<(SystemTime, u64, u64)>> {
        use std::os::unix::fs::MetadataExt;
        self.files
            .iter()
            .map(|f| {
                std::fs::metadata(f).ok().map(|m| {
                    (
                        m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                        m.len(),
                        m.ino(),
                    )
                })
            })
            .collect()
    }

    /// One line for the start log: what the endpoint asks of a client.
    pub fn describe(&self) -> String {
        let mut parts = vec![if self.tls.is_some() {
            "TLS"
        } else {
            "plain HTTP"
        }
        .to_string()];
        match self.client_certs {
            Some(true) => parts.push("client certificate required".into()),
            Some(false) => parts.push("client certificate verified when given".into()),
            None => {}
        }
        if self.users.is_some() {
            parts.push("basic auth".into());
        }
        if let Some((i, b)) = self.rate {
            parts.push(format!(
                "at most {b} request(s) at once, then one per {i:?}"
            ));
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<WebConfig, String> {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("web.yml");
        std::fs::write(&f, text).unwrap();
        WebConfig::load(&f).map_err(|e| e.0)
    }

    #[test]
    fn unknown_keys_and_unsupported_options_are_named() {
        let e = load("tls_server_config:\n  cert_file: a\n  kye_file: b\n")
            .err()
            .unwrap();
        assert!(e.contains("kye_file"), "{e}");
        let e = load("basic_auth_user:\n  a: b\n").err().unwrap();
        assert!(e.contains("basic_auth_user"), "{e}");
        let e = load("http_server_config:\n  headers:\n    Server: x\n")
            .err()
            .unwrap();
        assert!(e.contains("http_server_config.headers.Server"), "{e}");
        let e = load("http_server_config:\n  headers:\n    X-Frame-Options: allow\n")
            .err()
            .unwrap();
        assert!(e.contains("X-Frame-Options"), "{e}");
        let e = load("basic_auth_users:\n  alice: secret\n").err().unwrap();
        assert!(
            e.contains("basic_auth_users.alice") && !e.contains("secret"),
            "{e}"
        );
        let hash31 = format!("$2y$31${}", ".".repeat(53));
        let e = load(&format!("basic_auth_users:\n  alice: '{hash31}'\n"))
            .err()
            .unwrap();
        assert!(e.contains("cost 31"), "{e}");
        let e = load("rate_limit:\n  interval: 1s\n  burst: 0\n")
            .err()
            .unwrap();
        assert!(e.contains("rate_limit.burst"), "{e}");
    }

    #[test]
    fn an_empty_file_serves_plain_http() {
        let c = load("").unwrap();
        assert!(c.tls.is_none() && c.users.is_none() && c.warnings.is_empty());
        let c = load("http_server_config:\n  http2: false\n  headers:\n    x-content-type-options: NoSniff\n").unwrap();
        assert_eq!(
            c.headers,
            vec![("X-Content-Type-Options".into(), "NoSniff".into())]
        );
    }

    #[test]
    fn basic_auth_over_plain_http_is_warned_about() {
        let h = format!("$2y$04${}", ".".repeat(53));
        let c = load(&format!("basic_auth_users:\n  alice: '{h}'\n")).unwrap();
        assert!(c.users.is_some());
        assert!(c.warnings[0].contains("clear text"), "{:?}", c.warnings);
    }
}
