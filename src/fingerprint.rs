//! SHA-256 fingerprints as people paste them — of a TLS certificate
//! (`openssl x509 -fingerprint -sha256`: hex with colons) or of an SSH host
//! key (`ssh-keygen -l`: `SHA256:` + base64) — parsed by one function for
//! every front and protocol, and printed in either form.

use base64::engine::general_purpose::STANDARD_NO_PAD;
use base64::Engine;

/// Text that is not a SHA-256 fingerprint (the text as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a SHA-256 fingerprint (expected SHA256: and 64 hex digits, colons allowed)")]
pub struct NotAFingerprint(pub String);

/// `SHA256:AB:CD:…` (the form `openssl x509 -fingerprint -sha256` prints).
pub fn format_hex(fp: &[u8; 32]) -> String {
    let hex: Vec<String> = fp.iter().map(|b| format!("{b:02X}")).collect();
    format!("SHA256:{}", hex.join(":"))
}

/// Parses a SHA-256 fingerprint: optional `SHA256:` / `sha256=` prefix, then
/// 64 hex digits (colons allowed) or 43-44 characters of base64 (OpenSSH style).
pub fn parse_sha256(s: &str) -> Result<[u8; 32], NotAFingerprint> {
    let t = s.trim();
    let body = [
        "SHA256:",
        "sha256:",
        "SHA256=",
        "sha256=",
        "sha256 Fingerprint=",
    ]
    .iter()
    .find_map(|p| t.strip_prefix(p))
    .unwrap_or(t);
    let hex: String = body.chars().filter(|c| *c != ':').collect();
    if hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        let mut out = [0u8; 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
                .map_err(|_| NotAFingerprint(s.to_string()))?;
        }
        return Ok(out);
    }
    let b64 = body.trim_end_matches('=');
    if let Ok(v) = STANDARD_NO_PAD.decode(b64) {
        if let Ok(a) = <[u8; 32]>::try_from(v.as_slice()) {
            return Ok(a);
        }
    }
    Err(NotAFingerprint(s.to_string()))
}

/// `SHA256:` + unpadded base64 (the form `ssh-keygen -l` prints).
pub fn format_openssh(fp: &[u8; 32]) -> String {
    format!("SHA256:{}", STANDARD_NO_PAD.encode(fp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_round_trip() {
        let fp = [0xabu8; 32];
        let s = format_hex(&fp);
        assert!(s.starts_with("SHA256:AB:AB"));
        assert_eq!(parse_sha256(&s), Ok(fp));
        assert_eq!(parse_sha256(&"ab".repeat(32)), Ok(fp));
        let b = STANDARD_NO_PAD.encode(fp);
        assert_eq!(parse_sha256(&format!("SHA256:{b}")), Ok(fp));
        assert!(parse_sha256("SHA256:abcd").is_err());
        assert_eq!(parse_sha256(&format_openssh(&fp)), Ok(fp));
    }
}
