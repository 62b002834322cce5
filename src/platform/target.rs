//! The parts of a hypervisor's or controller's target URL,
//! `SCHEME://[USER@]HOST[:PORT]/PATH[?QUERY]`, split once for the platforms
//! that name a machine by a path behind a management address (Proxmox VE,
//! Nutanix, …): the user (whose own `@`, as in `root@pam`, may be written as
//! is: the last `@` before the host separates), an IPv6 host in brackets,
//! `%XX` escapes in the user and each path segment. What the segments mean
//! is the platform's.

/// A target URL in parts; the user and the segments unescaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The user, if the URL names one.
    pub user: Option<String>,
    /// The host (an IPv6 address without its brackets).
    pub host: String,
    /// The port, if given.
    pub port: Option<u16>,
    /// The path's segments (a trailing `/` ignored), unescaped.
    pub segments: Vec<String>,
    /// The query's `KEY=VALUE` pairs, unescaped, in order.
    pub query: Vec<(String, String)>,
}

/// Why a URL does not split into a [`Target`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Another scheme, no `://`, no host, an empty user or segment.
    #[error("not a {0}:// URL")]
    Shape(String),
    /// A port that is not 1-65535.
    #[error("'{0}' is not a port (1-65535)")]
    Port(String),
    /// A `%XX` escape that is not one, or not UTF-8.
    #[error("'{0}': a %-escape that is not UTF-8 text")]
    Escape(String),
}

/// Decodes `%XX` escapes.
pub fn unescape(s: &str) -> Result<String, TargetError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| TargetError::Escape(s.to_string()))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| TargetError::Escape(s.to_string()))
}

/// Escapes what the URL form gives a meaning to (`%`, `/`, `?`, `#`, `@`,
/// `&`, spaces and controls), for a segment or a user written back.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' | '/' | '?' | '#' | '@' | '&' => out.push_str(&format!("%{:02X}", c as u32)),
            c if c.is_whitespace() || c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `host:port` as a URL writes it (an IPv6 address in brackets).
pub fn host_port(host: &str, port: u16) -> String {
    match host.contains(':') {
        true => format!("[{host}]:{port}"),
        false => format!("{host}:{port}"),
    }
}

impl Target {
    /// Splits `url`, whose scheme must be `scheme` (any case).
    pub fn parse(url: &str, scheme: &str) -> Result<Target, TargetError> {
        let bad = || TargetError::Shape(scheme.to_string());
        let (s, rest) = url.split_once("://").ok_or_else(bad)?;
        if !s.eq_ignore_ascii_case(scheme) {
            return Err(bad());
        }
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(unescape(u)?), h),
            Some(_) => return Err(bad()),
            None => (None, authority),
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(bad)?;
            match after {
                "" => (h, None),
                p => (h, Some(p.strip_prefix(':').ok_or_else(bad)?)),
            }
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() || host.contains(['/', '#', ' ']) {
            return Err(bad());
        }
        let port = match port {
            None => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| TargetError::Port(p.to_string()))?,
            ),
        };
        let path = path.strip_suffix('/').unwrap_or(path);
        let segments = match path {
            "" => Vec::new(),
            p => p.split('/').map(unescape).collect::<Result<Vec<_>, _>>()?,
        };
        if segments.iter().any(String::is_empty) {
            return Err(bad());
        }
        let mut pairs = Vec::new();
        for kv in query.unwrap_or("").split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            pairs.push((unescape(k)?, unescape(v)?));
        }
        Ok(Target {
            user,
            host: host.to_string(),
            port,
            segments,
            query: pairs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_with_realms_hosts_ports_and_segments() {
        let t = Target::parse("PVE://root@pam@[fe80::1]:8006/pve1/100/?kind=lxc", "pve").unwrap();
        assert_eq!(t.user.as_deref(), Some("root@pam"));
        assert_eq!((t.host.as_str(), t.port), ("fe80::1", Some(8006)));
        assert_eq!(t.segments, ["pve1", "100"]);
        assert_eq!(t.query, [("kind".to_string(), "lxc".to_string())]);
        let t = Target::parse("nutanix://fence%40corp@pc/web%2F01", "nutanix").unwrap();
        assert_eq!(t.user.as_deref(), Some("fence@corp"));
        assert_eq!(t.segments, ["web/01"]);
        assert_eq!(escape("web/01 a@b"), "web%2F01%20a%40b");
        assert_eq!(host_port("fe80::1", 9440), "[fe80::1]:9440");
        for bad in [
            "pve:/x",
            "redfish://h/x",
            "pve://@h/x",
            "pve://h:0/x",
            "pve://h:99999/x",
            "pve://h//x",
            "pve://h/%zz",
            "pve://[fe80::1/x",
        ] {
            assert!(Target::parse(bad, "pve").is_err(), "{bad}");
        }
        assert_eq!(
            Target::parse("pve://h:x/1", "pve"),
            Err(TargetError::Port("x".into()))
        );
    }
}
