//! Targets as written on the command line: `ipmi://[USER@]HOST[:PORT]`.

use std::fmt;

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

impl fmt::Display for IpmiTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
pub fn parse(s: &str) -> Result<IpmiTarget, String> {
    let Some((scheme, rest)) = s.split_once("://") else {
        return Err(format!(
            "'{s}' is not a target URL (expected ipmi://HOST[:PORT]; or use --ip HOST)"
        ));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "ipmi" => {}
        "redfish" | "redfish+http" | "redfish+https" | "idrac-redfish" | "ilo5-redfish" | "ssh" => {
            return Err(format!(
                "'{scheme}://' targets are not supported by this build yet (only ipmi://)"
            ))
        }
        _ => {
            return Err(format!(
                "unknown target scheme '{scheme}://' (expected ipmi://)"
            ))
        }
    }
    let rest = rest.trim_end_matches('/');
    if rest.contains('/') || rest.contains('?') || rest.contains('#') {
        return Err(format!("'{s}': an ipmi:// target has no path"));
    }
    let (user, hostport) = match rest.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, rest),
    };
    if user.is_some_and(|u| u.contains(':')) {
        return Err(format!(
            "'{s}': passwords do not belong in target URLs; use --password-file, --password-env or FENCEKIT_PASSWORD"
        ));
    }
    let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
        let (h, after) = h
            .split_once(']')
            .ok_or_else(|| format!("'{s}': unclosed '[' in the host"))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("'{s}': unexpected text after ']'"))?,
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
        return Err(format!("'{s}': the host is missing"));
    }
    // Found by fuzzing: `h[::1]:623` was taken whole as a host, which then
    // displayed as `ipmi://[h[::1]:623]` and did not read back.
    if host
        .chars()
        .any(|c| c == '[' || c == ']' || c.is_whitespace() || c.is_control())
    {
        return Err(format!("'{s}': '{host}' is not a host name or address"));
    }
    let port = match port {
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("'{s}': '{p}' is not a port number"))?,
        ),
        None => None,
    };
    Ok(IpmiTarget {
        username: user.filter(|u| !u.is_empty()).map(str::to_string),
        host,
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let t = parse("ipmi://admin@127.0.0.1:6230").unwrap();
        assert_eq!(t.username.as_deref(), Some("admin"));
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", Some(6230)));
        assert_eq!(parse("ipmi://bmc7/").unwrap().port, None);
        assert_eq!(parse("ipmi://[::1]:623").unwrap().host, "::1");
        assert_eq!(
            parse("ipmi://[::1]:623").unwrap().to_string(),
            "ipmi://[::1]:623"
        );
        assert!(parse("ipmi://a:b@h").unwrap_err().contains("passwords"));
        assert!(parse("ipmi://h:0").is_err());
        assert!(parse("ipmi://h:99999").is_err());
        assert!(parse("http://h").is_err());
        assert!(parse("node07").is_err());
        assert!(parse("ipmi://").is_err());
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
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let t = parse("ipmi://[fe80::1]:623").unwrap();
        assert_eq!(parse(&t.to_string()).unwrap(), t);
    }
}
