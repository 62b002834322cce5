//! Secrets (passwords, BMC keys) that must never reach output, logs or argv.
//!
//! [`Secret`] owns its bytes, wipes them on drop, and prints as `[redacted]`
//! through both `Debug` and `Display`, so a secret that slips into a log line
//! or an error message shows nothing.

use std::fmt;
use zeroize::Zeroizing;

/// Bytes that are wiped on drop and never formatted.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(Zeroizing<Vec<u8>>);

impl Secret {
    /// Wraps bytes as a secret.
    pub fn new(bytes: Vec<u8>) -> Self {
        Secret(Zeroizing::new(bytes))
    }

    /// Wraps a string's bytes as a secret.
    pub fn from_str_value(s: &str) -> Self {
        Secret::new(s.as_bytes().to_vec())
    }

    /// The raw bytes; use only to feed a protocol, never to print.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_formats_its_bytes() {
        let s = Secret::from_str_value("hunter2");
        assert_eq!(format!("{s:?} {s}"), "[redacted] [redacted]");
        assert_eq!(s.expose(), b"hunter2");
    }
}
