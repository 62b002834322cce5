//! The credentials a client sent, in every form it sent them, so that no
//! text a server sends back can carry them into a message: a server that
//! echoes the request (`you sent Authorization: Basic …`) is untrusted.
//!
//! A client remembers each sensitive header it sends
//! ([`Scrub::remember_header`]: the whole value, the credential after its
//! scheme, a Basic header's decoded `user:password` and password, a
//! cookie's values) and whatever a platform puts in a body
//! ([`Scrub::remember`]: the text as it is, percent-encoded, JSON- and
//! XML-escaped, and in base64). [`Scrub::apply`] replaces every form in a
//! text with `[redacted]`. Forms shorter than [`MIN_FORM`] bytes are not
//! kept: they cannot be told from ordinary words.

use base64::Engine as _;
use std::sync::{Arc, Mutex};
use zeroize::Zeroizing;

/// The shortest form kept (a shorter password would redact ordinary words).
pub const MIN_FORM: usize = 4;

/// What replaces a credential.
pub const REDACTED: &str = "[redacted]";

/// The forms of the credentials sent so far; cheap to clone (shared).
#[derive(Clone, Default)]
pub struct Scrub {
    forms: Arc<Mutex<Vec<Zeroizing<String>>>>,
}

impl std::fmt::Debug for Scrub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scrub({} forms)", self.forms().len())
    }
}

impl Scrub {
    fn forms(&self) -> std::sync::MutexGuard<'_, Vec<Zeroizing<String>>> {
        self.forms.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn keep(&self, form: String) {
        let form = Zeroizing::new(form);
        if form.len() < MIN_FORM {
            return;
        }
        let mut forms = self.forms();
        if !forms.iter().any(|f| **f == *form) {
            forms.push(form);
            // Longest first: a form inside another is replaced after it.
            forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
        }
    }

    /// Remembers a credential that goes into a request (a password in a
    /// login body, an API key in a form, a token): as it is, and in the
    /// encodings a body or an echo may carry it.
    pub fn remember(&self, secret: &[u8]) {
        if secret.len() < MIN_FORM {
            return;
        }
        self.keep(base64::engine::general_purpose::STANDARD.encode(secret));
        let Ok(text) = std::str::from_utf8(secret) else {
            return;
        };
        self.keep(text.to_string());
        self.keep(percent_encoded(text));
        if let Ok(json) = serde_json::to_string(text) {
            self.keep(json[1..json.len() - 1].to_string());
        }
        self.keep(xml_escaped(text));
    }

    /// Remembers a sensitive header's value (`Authorization`, a session
    /// header, `Cookie`).
    pub fn remember_header(&self, value: &[u8]) {
        self.remember(value);
        let Ok(text) = std::str::from_utf8(value) else {
            return;
        };
        if let Some((scheme, cred)) = text.split_once(' ') {
            let cred = cred.trim();
            self.remember(cred.as_bytes());
            if scheme.eq_ignore_ascii_case("basic") {
                if let Ok(plain) = base64::engine::general_purpose::STANDARD.decode(cred) {
                    let plain = Zeroizing::new(plain);
                    self.remember(&plain);
                    if let Some(i) = plain.iter().position(|&b| b == b':') {
                        self.remember(&plain[i + 1..]);
                    }
                }
            }
        }
        // A cookie's values (`a=b; c=d`).
        if text.contains('=') {
            for pair in text.split(';') {
                if let Some((_, v)) = pair.split_once('=') {
                    self.remember(v.trim().as_bytes());
                }
            }
        }
    }

    /// `text` with every remembered form replaced by `[redacted]`.
    pub fn apply(&self, text: &str) -> String {
        let forms = self.forms();
        let mut out = text.to_string();
        for f in forms.iter() {
            if out.contains(f.as_str()) {
                out = out.replace(f.as_str(), REDACTED);
            }
        }
        out
    }

    /// [`super::printable`] of `text`, scrubbed first (a form cut in half
    /// by the bound would not be found afterwards).
    pub fn printable(&self, text: &str, max: usize) -> String {
        super::text::printable(&self.apply(text), max)
    }
}

fn percent_encoded(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn xml_escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_basic_header_in_every_form() {
        let s = Scrub::default();
        let b64 = base64::engine::general_purpose::STANDARD.encode("admin:s3cr&t pw");
        s.remember_header(format!("Basic {b64}").as_bytes());
        for echo in [
            format!("you sent Authorization: Basic {b64}"),
            "user admin:s3cr&t pw".to_string(),
            "password s3cr&t pw".to_string(),
            "form s3cr%26t%20pw".to_string(),
            "xml s3cr&amp;t pw".to_string(),
        ] {
            let out = s.apply(&echo);
            assert!(!out.contains("s3cr"), "{out}");
            assert!(!out.contains(&b64), "{out}");
            assert!(out.contains(REDACTED), "{out}");
        }
    }

    #[test]
    fn tokens_cookies_and_json() {
        let s = Scrub::default();
        s.remember_header(b"Bearer eyJhbGciOi.payload.sig");
        s.remember_header(b"PVEAuthCookie=PVE:root@pam:ABC123; other=x");
        s.remember(b"pa\"ss\\word");
        let out = s.apply(
            "token eyJhbGciOi.payload.sig cookie PVE:root@pam:ABC123 body {\"p\":\"pa\\\"ss\\\\word\"}",
        );
        assert!(!out.contains("eyJhbGciOi"), "{out}");
        assert!(!out.contains("ABC123"), "{out}");
        assert!(!out.contains("ss\\\\word"), "{out}");
        // Short values are not kept: ordinary words stay.
        assert_eq!(s.apply("other x"), "other x");
    }

    #[test]
    fn printable_scrubs_before_cutting() {
        let s = Scrub::default();
        s.remember(b"hunter2hunter2");
        let out = s.printable("pw=hunter2hunter2\nSuccess: Already OFF", 12);
        assert!(!out.contains("hunter"), "{out}");
        assert!(!out.contains('\n'), "{out}");
    }

    #[test]
    fn debug_shows_no_form() {
        let s = Scrub::default();
        s.remember(b"hunter2hunter2");
        assert!(!format!("{s:?}").contains("hunter"));
    }
}
