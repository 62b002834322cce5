//! Which proxy a client goes through: none, the environment's
//! (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`, either case,
//! as curl and the cloud SDKs read them), or one an agent's own option
//! names (`--proxy`, fence_gce's `--proxyhost`/`--proxyport`). A cloud HA
//! node often reaches its API only through one.
//!
//! Through a proxy, an `https` request is a `CONNECT` tunnel: TLS still
//! ends at the device, verified as without a proxy. Only `http://` proxy
//! URLs are taken; a user and password in one are sent to the proxy only
//! and never printed.

use super::scrub::Scrub;

/// The proxy choice of a client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Proxy {
    /// Connect directly, whatever the environment says.
    #[default]
    None,
    /// The environment's proxy variables, as they are when the client is
    /// made (`get` is the platform's view of the environment).
    Env,
    /// This proxy for every request (an agent's own option).
    Url(String),
}

/// Why a proxy cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProxyError {
    /// Not an `http://HOST[:PORT]` URL.
    #[error("the proxy {shown} (from {from}) is not an http://HOST[:PORT] URL")]
    NotHttp {
        /// The URL without its credentials.
        shown: String,
        /// Where it came from (`HTTPS_PROXY`, `--proxy`).
        from: String,
    },
}

/// A proxy as resolved for one client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// For `https` URLs: the proxy URL and where it came from.
    pub https: Option<(String, String)>,
    /// For `http` URLs.
    pub http: Option<(String, String)>,
    /// `NO_PROXY`, when set.
    pub no_proxy: Option<String>,
}

impl Resolved {
    /// What the timeline says of it (`proxy http://p:3128 (HTTPS_PROXY)`),
    /// without credentials; `None` when no proxy is used.
    pub fn describe(&self) -> Option<String> {
        let (url, from) = self.https.as_ref().or(self.http.as_ref())?;
        Some(format!(
            "through the proxy {} ({from}){}",
            without_credentials(url),
            self.no_proxy
                .as_deref()
                .map(|n| format!(", except NO_PROXY {}", super::text::printable(n, 120)))
                .unwrap_or_default()
        ))
    }
}

/// `url` with any `user:password@` removed.
pub fn without_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

fn checked(url: &str, from: &str, scrub: &Scrub) -> Result<(String, String), ProxyError> {
    let url = url.trim();
    let bad = || ProxyError::NotHttp {
        shown: super::text::printable(&without_credentials(url), 120),
        from: from.to_string(),
    };
    // A bare host:port is what many set: http:// is meant.
    let full = match url.split_once("://") {
        Some((s, _)) if s.eq_ignore_ascii_case("http") => url.to_string(),
        Some(_) => return Err(bad()),
        None => format!("http://{url}"),
    };
    let parsed = reqwest::Url::parse(&full).map_err(|_| bad())?;
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad());
    }
    if let Some(pw) = parsed.password() {
        scrub.remember(pw.as_bytes());
        if let Ok(decoded) = urlencoding_decode(pw) {
            scrub.remember(decoded.as_bytes());
        }
    }
    Ok((full, from.to_string()))
}

fn urlencoding_decode(s: &str) -> Result<String, std::string::FromUtf8Error> {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out)
}

impl Proxy {
    /// The proxies this choice gives, reading the environment through
    /// `get` (the first of a variable's spellings that is set and not
    /// empty); `scrub` learns a proxy password.
    pub fn resolve(
        &self,
        get: &dyn Fn(&str) -> Option<String>,
        scrub: &Scrub,
    ) -> Result<Option<Resolved>, ProxyError> {
        let var = |names: &[&str]| {
            names.iter().find_map(|n| {
                get(n)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| (v, n.to_string()))
            })
        };
        match self {
            Proxy::None => Ok(None),
            Proxy::Url(u) => {
                let p = checked(u, "--proxy", scrub)?;
                Ok(Some(Resolved {
                    https: Some(p.clone()),
                    http: Some(p),
                    no_proxy: None,
                }))
            }
            Proxy::Env => {
                let all = var(&["ALL_PROXY", "all_proxy"]);
                let https = var(&["HTTPS_PROXY", "https_proxy"]).or_else(|| all.clone());
                // Upper-case HTTP_PROXY is left alone, as curl does (a CGI
                // request's Proxy: header lands there).
                let http = var(&["http_proxy"]).or(all);
                if https.is_none() && http.is_none() {
                    return Ok(None);
                }
                Ok(Some(Resolved {
                    https: https.map(|(u, f)| checked(&u, &f, scrub)).transpose()?,
                    http: http.map(|(u, f)| checked(&u, &f, scrub)).transpose()?,
                    no_proxy: var(&["NO_PROXY", "no_proxy"]).map(|(v, _)| v),
                }))
            }
        }
    }
}

/// The reqwest proxies for `r`.
pub(super) fn reqwest_proxies(r: &Resolved) -> Result<Vec<reqwest::Proxy>, String> {
    let no_proxy = || {
        r.no_proxy
            .as_deref()
            .and_then(reqwest::NoProxy::from_string)
    };
    let mut out = Vec::new();
    if let Some((u, _)) = &r.https {
        out.push(
            reqwest::Proxy::https(u)
                .map_err(|e| e.to_string())?
                .no_proxy(no_proxy()),
        );
    }
    if let Some((u, _)) = &r.http {
        out.push(
            reqwest::Proxy::http(u)
                .map_err(|e| e.to_string())?
                .no_proxy(no_proxy()),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_environment_in_curls_order() {
        let s = Scrub::default();
        assert_eq!(Proxy::Env.resolve(&env(&[]), &s), Ok(None));
        assert_eq!(
            Proxy::None.resolve(&env(&[("HTTPS_PROXY", "p:1")]), &s),
            Ok(None)
        );
        let r = Proxy::Env
            .resolve(
                &env(&[
                    ("https_proxy", "proxy.corp:3128"),
                    ("NO_PROXY", "169.254.169.254"),
                ]),
                &s,
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            r.https,
            Some(("http://proxy.corp:3128".into(), "https_proxy".into()))
        );
        assert_eq!(r.http, None);
        assert_eq!(r.no_proxy.as_deref(), Some("169.254.169.254"));
        let d = r.describe().unwrap();
        assert!(d.contains("http://proxy.corp:3128 (https_proxy)"), "{d}");
        let r = Proxy::Env
            .resolve(&env(&[("HTTP_PROXY", "x:1"), ("ALL_PROXY", "all:2")]), &s)
            .unwrap()
            .unwrap();
        assert_eq!(r.https.unwrap().0, "http://all:2");
        assert_eq!(r.http.unwrap().0, "http://all:2");
    }

    #[test]
    fn credentials_are_kept_from_text() {
        let s = Scrub::default();
        let r = Proxy::Url("http://user:pr0xy%21pw@p.corp:8080".into())
            .resolve(&env(&[]), &s)
            .unwrap()
            .unwrap();
        let d = r.describe().unwrap();
        assert!(!d.contains("pr0xy"), "{d}");
        assert!(d.contains("http://p.corp:8080"), "{d}");
        assert!(!s.apply("echo pr0xy!pw pr0xy%21pw").contains("pr0xy"));
    }

    #[test]
    fn only_http_proxies() {
        let s = Scrub::default();
        for bad in ["socks5://p:1", "https://p:1", "http://", "http://:3128"] {
            let e = Proxy::Url(bad.into()).resolve(&env(&[]), &s).unwrap_err();
            assert!(
                e.to_string().contains("is not an http://HOST[:PORT] URL"),
                "{e}"
            );
        }
        let e = Proxy::Env
            .resolve(&env(&[("HTTPS_PROXY", "socks5://u:secretpw@p:1")]), &s)
            .unwrap_err();
        assert!(e.to_string().contains("HTTPS_PROXY"), "{e}");
        assert!(!e.to_string().contains("secretpw"), "{e}");
    }
}
