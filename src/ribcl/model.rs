//! What RIBCL documents say (pure, no I/O): the request documents fencekit
//! writes, the answers an iLO streams back (several `<?xml ...?>`
//! documents one after another, each with its `RESPONSE STATUS=..
//! MESSAGE=..`), and the rule that picks the off command for a firmware.
//!
//! An answer is read with a small tag scanner, not an XML parser: iLO
//! firmware writes several documents into one stream, single-quoted
//! attributes and, on some releases, text no XML parser accepts. The
//! scanner never panics, reads at most [`MAX_ANSWER`] bytes and
//! [`MAX_TAGS`] tags, and every text taken from an answer is bounded and
//! printable.
//!
//! The off rule ([`off_command`]): an iLO 2, or any firmware whose RIBCL is
//! 2.21 or later, is switched off with `HOLD_PWR_BTN` (the power button
//! held: off at once, whatever the operating system does) and never with
//! its `TOGGLE` (which powers a machine that is already off back on).
//! Below RIBCL 2.21 upstream sends `SET_HOST_POWER` (the only power command
//! such firmware has), and so does fencekit: `HOST_POWER="No"`, which the
//! firmware may carry out as a press of the button, a request the
//! operating system can take its time over; the state is read back either
//! way. On is always `SET_HOST_POWER HOST_POWER="Yes"` (it never switches
//! a running machine off, as a button press would).

use crate::engine::power::PowerState;
use crate::secret::Secret;
use zeroize::Zeroizing;

/// The largest answer read.
pub const MAX_ANSWER: usize = 256 * 1024;
/// The most tags read from one answer.
pub const MAX_TAGS: usize = 4096;
/// The status of a login the iLO refused.
pub const LOGIN_REJECTED: u32 = 0x005F;

/// One line of text from an answer: bounded, control characters as `?`.
pub fn printable(s: &str, max: usize) -> String {
    crate::http::printable(s, max)
}

/// `s` escaped for an XML attribute value in double quotes.
pub fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 => out.push_str(&format!("&#{};", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Which part of the iLO a command is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// `SERVER_INFO MODE="read"`: the host's power and data.
    ServerRead,
    /// `SERVER_INFO MODE="write"`: power changes.
    ServerWrite,
    /// `RIB_INFO MODE="read"`: the iLO itself (its firmware).
    RibRead,
}

/// One request document: the header, `RIBCL`, `LOGIN` with the user and
/// password, one section holding `command`. Zeroed when dropped (it holds
/// the password).
pub fn document(
    user: &str,
    password: &Secret,
    section: Section,
    command: &str,
) -> Zeroizing<Vec<u8>> {
    let (name, mode) = match section {
        Section::ServerRead => ("SERVER_INFO", "read"),
        Section::ServerWrite => ("SERVER_INFO", "write"),
        Section::RibRead => ("RIB_INFO", "read"),
    };
    let pw = Zeroizing::new(attr(&String::from_utf8_lossy(password.expose())));
    let mut s = Zeroizing::new(String::with_capacity(256));
    s.push_str("<?xml version=\"1.0\"?>\r\n<RIBCL VERSION=\"2.0\">\r\n<LOGIN USER_LOGIN=\"");
    s.push_str(&attr(user));
    s.push_str("\" PASSWORD=\"");
    s.push_str(&pw);
    s.push_str("\">\r\n<");
    s.push_str(name);
    s.push_str(" MODE=\"");
    s.push_str(mode);
    s.push_str("\">");
    s.push_str(command);
    s.push_str("</");
    s.push_str(name);
    s.push_str(">\r\n</LOGIN>\r\n</RIBCL>\r\n");
    Zeroizing::new(s.as_bytes().to_vec())
}

/// One tag of an answer (its name upper case; attributes unescaped).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tag {
    /// `RESPONSE`, `GET_HOST_POWER`, …
    pub name: String,
    /// `</NAME>`.
    pub closing: bool,
    /// Its attributes (names upper case), in order.
    pub attrs: Vec<(String, String)>,
}

impl Tag {
    /// The attribute `k` (upper case).
    pub fn get(&self, k: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }
}

fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-'
}

/// The tags of `text`, in order (declarations, comments and text skipped).
pub fn tags(text: &str) -> Vec<Tag> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() && out.len() < MAX_TAGS {
        let Some(lt) = memchr::memchr(b'<', &b[i..]) else {
            break;
        };
        i += lt + 1;
        if b.get(i).is_some_and(|c| *c == b'?' || *c == b'!') {
            match memchr::memchr(b'>', &b[i..]) {
                Some(gt) => i += gt + 1,
                None => break,
            }
            continue;
        }
        let mut t = Tag::default();
        if b.get(i) == Some(&b'/') {
            t.closing = true;
            i += 1;
        }
        let start = i;
        while i < b.len() && is_name(b[i]) {
            i += 1;
        }
        if i == start {
            continue;
        }
        t.name = text[start..i].to_ascii_uppercase();
        // Attributes up to `>`.
        loop {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            match b.get(i) {
                None => return out,
                Some(b'>') => {
                    i += 1;
                    break;
                }
                Some(b'/') => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let ks = i;
            while i < b.len() && is_name(b[i]) {
                i += 1;
            }
            if i == ks {
                // Not an attribute: skip one byte (never loops).
                i += 1;
                continue;
            }
            let key = text[ks..i].to_ascii_uppercase();
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if b.get(i) != Some(&b'=') {
                t.attrs.push((key, String::new()));
                continue;
            }
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let Some(&q) = b.get(i).filter(|q| **q == b'"' || **q == b'\'') else {
                t.attrs.push((key, String::new()));
                continue;
            };
            i += 1;
            let Some(end) = memchr::memchr(q, &b[i..]) else {
                return out;
            };
            t.attrs.push((key, unescape(&text[i..i + end])));
            i += end + 1;
        }
        out.push(t);
    }
    out
}

/// What the iLO refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `STATUS` (0x005F: the login was rejected).
    pub status: u32,
    /// `MESSAGE`, printable.
    pub message: String,
}

impl Refusal {
    /// The user or password was refused.
    pub fn login_refused(&self) -> bool {
        let m = self.message.to_ascii_lowercase();
        self.status == LOGIN_REJECTED
            || (m.contains("login") && (m.contains("reject") || m.contains("fail")))
    }
}

/// A whole answer: every document the iLO wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// Its tags.
    pub tags: Vec<Tag>,
    /// How many `RESPONSE` tags it has.
    pub responses: usize,
    /// The first `RESPONSE` whose status is not 0.
    pub refusal: Option<Refusal>,
    /// The RIBCL version its documents name.
    pub version: Option<String>,
}

fn status_code(s: &str) -> Option<u32> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Reads an answer (any bytes).
pub fn answer(bytes: &[u8]) -> Answer {
    let bytes = &bytes[..bytes.len().min(MAX_ANSWER)];
    let text = String::from_utf8_lossy(bytes);
    let tags = tags(&text);
    let mut a = Answer::default();
    for t in tags.iter().filter(|t| !t.closing) {
        match t.name.as_str() {
            "RIBCL" if a.version.is_none() => {
                a.version = t.get("VERSION").map(|v| printable(v, 16));
            }
            "RESPONSE" => {
                a.responses += 1;
                let status = t.get("STATUS").map_or(Some(u32::MAX), status_code);
                let status = status.unwrap_or(u32::MAX);
                if status != 0 && a.refusal.is_none() {
                    a.refusal = Some(Refusal {
                        status,
                        message: printable(t.get("MESSAGE").unwrap_or("(no message)"), 200),
                    });
                }
            }
            _ => {}
        }
    }
    a.tags = tags;
    a
}

impl Answer {
    /// The first opening tag named `name`.
    pub fn find(&self, name: &str) -> Option<&Tag> {
        self.tags.iter().find(|t| !t.closing && t.name == name)
    }

    /// `GET_HOST_POWER HOST_POWER`, judged: `ON` on, `OFF` off, anything
    /// else (or nothing) unreadable.
    pub fn power(&self) -> Result<PowerState, String> {
        let Some(v) = self
            .find("GET_HOST_POWER")
            .and_then(|t| t.get("HOST_POWER"))
        else {
            return Err("the answer has no GET_HOST_POWER HOST_POWER".into());
        };
        match v.trim().to_ascii_uppercase().as_str() {
            "ON" => Ok(PowerState::On),
            "OFF" => Ok(PowerState::Off),
            other => Err(format!(
                "the iLO reports HOST_POWER \"{}\" (neither ON nor OFF)",
                printable(other, 40)
            )),
        }
    }

    /// `GET_FW_VERSION`'s firmware.
    pub fn firmware(&self) -> Firmware {
        let t = self.find("GET_FW_VERSION");
        let get = |k: &str| t.and_then(|t| t.get(k)).map(|v| printable(v.trim(), 40));
        Firmware {
            ribcl: self.version.as_deref().and_then(number),
            version: get("FIRMWARE_VERSION"),
            processor: get("MANAGEMENT_PROCESSOR"),
        }
    }

    /// `GET_HOST_DATA`'s SMBIOS record type 1: (UUID, serial number).
    pub fn system(&self) -> (Option<String>, Option<String>) {
        let mut in_type1 = false;
        let (mut uuid, mut serial) = (None, None);
        for t in &self.tags {
            match (t.name.as_str(), t.closing) {
                ("SMBIOS_RECORD", false) => in_type1 = t.get("TYPE").map(str::trim) == Some("1"),
                ("SMBIOS_RECORD", true) => in_type1 = false,
                ("FIELD", false) if in_type1 => {
                    let v = t.get("VALUE").map(|v| printable(v.trim(), 64));
                    match t
                        .get("NAME")
                        .map(|n| n.trim().to_ascii_lowercase())
                        .as_deref()
                    {
                        Some("uuid") => uuid = v,
                        Some("serial number") => serial = v,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        (
            uuid.filter(|s| !s.is_empty()),
            serial.filter(|s| !s.is_empty()),
        )
    }
}

/// A version number (`2.22`).
pub fn number(s: &str) -> Option<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// What the iLO says of its firmware.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Firmware {
    /// The RIBCL version its answers name (`--ribcl-version` replaces it).
    pub ribcl: Option<f64>,
    /// `FIRMWARE_VERSION`.
    pub version: Option<String>,
    /// `MANAGEMENT_PROCESSOR` (`iLO`, `iLO2`, `iLO3`, …).
    pub processor: Option<String>,
}

impl Firmware {
    /// For plans and `-v`.
    pub fn describe(&self) -> String {
        format!(
            "RIBCL {}, {} firmware {}",
            self.ribcl.map_or("?".to_string(), |v| format!("{v:.2}")),
            self.processor.as_deref().unwrap_or("iLO"),
            self.version.as_deref().unwrap_or("?")
        )
    }
}

/// The RIBCL version from which `HOLD_PWR_BTN` is used (upstream's rule).
pub const HOLD_FROM: f64 = 2.21;

/// The off command for `fw` (the module's rule).
pub fn off_command(fw: &Firmware) -> &'static str {
    let ilo2 = fw
        .processor
        .as_deref()
        .is_some_and(|p| p.eq_ignore_ascii_case("ilo2"));
    // Unknown version: the newer command (the firmware says "unknown
    // command" rather than doing something else).
    if ilo2 || fw.ribcl.is_none_or(|v| v >= HOLD_FROM - 1e-9) {
        "<HOLD_PWR_BTN/>"
    } else {
        "<SET_HOST_POWER HOST_POWER=\"No\"/>"
    }
}

/// The on command.
pub const ON_COMMAND: &str = "<SET_HOST_POWER HOST_POWER=\"Yes\"/>";
/// The warm reset.
pub const RESET_COMMAND: &str = "<RESET_SERVER/>";
/// The power state read.
pub const STATUS_COMMAND: &str = "<GET_HOST_POWER_STATUS/>";
/// The firmware read (the login check).
pub const FIRMWARE_COMMAND: &str = "<GET_FW_VERSION/>";
/// The SMBIOS read (the identity).
pub const HOST_DATA_COMMAND: &str = "<GET_HOST_DATA/>";

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "<?xml version=\"1.0\"?>\r\n<RIBCL VERSION=\"2.22\">\r\n<RESPONSE\r\n    STATUS=\"0x0000\"\r\n    MESSAGE='No error'\r\n     />\r\n</RIBCL>\r\n<?xml version=\"1.0\"?>\r\n<RIBCL VERSION=\"2.22\">\r\n<RESPONSE STATUS=\"0x0000\" MESSAGE='No error'/>\r\n<GET_FW_VERSION\r\n    FIRMWARE_VERSION = \"1.50\"\r\n    MANAGEMENT_PROCESSOR = \"iLO2\"\r\n    />\r\n<GET_HOST_POWER\r\n HOST_POWER=\"OFF\"\r\n />\r\n</RIBCL>\r\n";

    #[test]
    fn streamed_documents_their_version_power_and_firmware() {
        let a = answer(STREAM.as_bytes());
        assert_eq!((a.responses, a.refusal.clone()), (2, None));
        assert_eq!(a.version.as_deref(), Some("2.22"));
        assert_eq!(a.power(), Ok(PowerState::Off));
        let fw = a.firmware();
        assert_eq!(fw.processor.as_deref(), Some("iLO2"));
        assert_eq!(fw.describe(), "RIBCL 2.22, iLO2 firmware 1.50");
        assert_eq!(off_command(&fw), "<HOLD_PWR_BTN/>");
    }

    #[test]
    fn refusals_unreadable_power_and_garbage() {
        let a = answer(b"<?xml version=\"1.0\"?><RIBCL VERSION=\"2.20\"><RESPONSE STATUS=\"0x005F\" MESSAGE='Login credentials rejected.'/></RIBCL>");
        let r = a.refusal.unwrap();
        assert!(r.login_refused(), "{r:?}");
        let a = answer(b"<RIBCL VERSION=\"2.2\"><RESPONSE STATUS=\"0x0000\"/><GET_HOST_POWER HOST_POWER=\"UNKNOWN\"/>");
        assert!(a.power().is_err());
        assert!(answer(b"").power().is_err());
        for junk in [
            &b"<<<<\"'"[..],
            b"<A B='",
            b"<A B=",
            b"\xff\xfe<X",
            b"</",
            b"<?",
        ] {
            let _ = answer(junk);
        }
        let many = "<A/>".repeat(MAX_TAGS * 2);
        assert_eq!(answer(many.as_bytes()).tags.len(), MAX_TAGS);
    }

    #[test]
    fn the_off_rule_by_firmware() {
        let fw = |r: f64, p: &str| Firmware {
            ribcl: Some(r),
            version: Some("1.0".into()),
            processor: Some(p.into()),
        };
        assert_eq!(
            off_command(&fw(2.20, "iLO")),
            "<SET_HOST_POWER HOST_POWER=\"No\"/>"
        );
        assert_eq!(off_command(&fw(2.20, "iLO2")), "<HOLD_PWR_BTN/>");
        assert_eq!(off_command(&fw(2.21, "iLO")), "<HOLD_PWR_BTN/>");
        assert_eq!(off_command(&Firmware::default()), "<HOLD_PWR_BTN/>");
    }

    #[test]
    fn documents_escape_and_hold_the_login() {
        let d = document(
            "a\"<b",
            &Secret::new(b"p&'x".to_vec()),
            Section::ServerWrite,
            ON_COMMAND,
        );
        let s = String::from_utf8(d.to_vec()).unwrap();
        assert!(s.starts_with("<?xml version=\"1.0\"?>\r\n<RIBCL VERSION=\"2.0\">"));
        assert!(
            s.contains("USER_LOGIN=\"a&quot;&lt;b\" PASSWORD=\"p&amp;&apos;x\""),
            "{s}"
        );
        assert!(s.contains(
            "<SERVER_INFO MODE=\"write\"><SET_HOST_POWER HOST_POWER=\"Yes\"/></SERVER_INFO>"
        ));
        let t = tags(&s);
        assert_eq!(t[1].get("USER_LOGIN"), Some("a\"<b"));
    }

    #[test]
    fn smbios_type_one_gives_the_uuid_and_serial() {
        let a = answer(b"<GET_HOST_DATA><SMBIOS_RECORD TYPE=\"0\"><FIELD NAME=\"UUID\" VALUE=\"no\"/></SMBIOS_RECORD><SMBIOS_RECORD TYPE=\"1\"><FIELD NAME=\"Serial Number\" VALUE=\"USE1 \"/><FIELD NAME=\"UUID\" VALUE=\"34313236-3934-5553-4537-31394B415A33\"/></SMBIOS_RECORD></GET_HOST_DATA>");
        assert_eq!(
            a.system(),
            (
                Some("34313236-3934-5553-4537-31394B415A33".into()),
                Some("USE1".into())
            )
        );
    }
}
