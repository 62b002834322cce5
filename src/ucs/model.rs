//! What UCS Manager's XML API answers mean for fencing (pure, no I/O): an
//! answer's method, its error (`errorCode`, `errorDescr`), the managed
//! objects it carries, a service profile, its server, and the one rule
//! that decides off.
//!
//! The rule ([`judge`]): the server's `operPower` decides, and only while
//! its `presence` is one of the `equipped` states: `on` (and `power-save`,
//! still running) is on, `off` is off; `unknown`, `offline`, `failed`,
//! `degraded` or anything else is unreadable. A server that is `missing`
//! from its slot is off only with `--missing-as-off`; a `mismatch` (other
//! hardware in the slot) is never off (upstream counts both as off).
//!
//! Any bytes may come back: parsing never panics nor overflows the stack
//! (the shared bounded parser, [`crate::parse::xml_bytes`]: size, depth and
//! nodes bounded before roxmltree sees it, DTDs refused), and every text
//! taken from an answer is bounded and printable.

use crate::engine::power::PowerState;

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

/// A managed object: its class and attributes, in the answer's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mo {
    /// Its class (`lsServer`, `computeBlade`, …).
    pub class: String,
    /// Its attributes.
    pub attrs: Vec<(String, String)>,
}

impl Mo {
    /// The attribute `k`, when present and not empty.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// What UCS Manager refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// `errorCode` (551: authentication failed, 552: authorization
    /// required, i.e. the cookie is unknown or expired).
    pub code: String,
    /// `errorDescr`, printable.
    pub descr: String,
}

impl ApiError {
    /// The cookie is unknown or expired: log in again.
    pub fn cookie_expired(&self) -> bool {
        self.code == "552"
    }
    /// The user or password was refused.
    pub fn login_refused(&self) -> bool {
        self.code == "551"
            || self
                .descr
                .to_ascii_lowercase()
                .contains("authentication failed")
    }
    /// The user lacks a privilege.
    pub fn privilege(&self) -> bool {
        self.descr.to_ascii_lowercase().contains("privilege")
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error {}: {}", self.code, self.descr)
    }
}

/// One answer of `POST /nuova`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// The root element's attributes (`outCookie`, …).
    pub root: Mo,
    /// What UCS Manager refused, if it did.
    pub error: Option<ApiError>,
    /// The objects of `outConfig` / `outConfigs` (inside `pair`s too).
    pub objects: Vec<Mo>,
}

/// Element names that wrap objects rather than being ones.
const WRAPPERS: &[&str] = &["outConfig", "outConfigs", "pair", "inConfig", "inConfigs"];
/// The largest answer parsed (the HTTP layer reads no more either).
pub const MAX_BODY: usize = 16 << 20;
/// Most objects one answer may carry (the whole of a large domain's
/// service profiles fits).
const MAX_OBJECTS: usize = 20_000;

/// Reads the answer to `method`: its root must be that method (or carry an
/// error).
pub fn answer(body: &[u8], method: &str) -> Result<Answer, String> {
    let doc = crate::parse::xml_bytes(body, &crate::parse::Limits::ANSWER.with_bytes(MAX_BODY))
        .map_err(|e| e.to_string())?;
    let r = doc.root_element();
    let mo = |n: roxmltree::Node| Mo {
        class: n.tag_name().name().to_string(),
        attrs: n
            .attributes()
            .map(|a| (a.name().to_string(), a.value().to_string()))
            .collect(),
    };
    let root = mo(r);
    let error = root.get("errorCode").map(|c| ApiError {
        code: printable(c, 20),
        descr: printable(root.get("errorDescr").unwrap_or("no description"), 200),
    });
    if error.is_none() && root.class != method {
        return Err(format!(
            "the answer is '{}', not {method}",
            printable(&root.class, 60)
        ));
    }
    let objects: Vec<Mo> = r
        .descendants()
        .filter(|n| n.is_element() && *n != r && !WRAPPERS.contains(&n.tag_name().name()))
        .take(MAX_OBJECTS)
        .map(mo)
        .collect();
    Ok(Answer {
        root,
        error,
        objects,
    })
}

/// A service profile (`lsServer`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Its distinguished name.
    pub dn: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub descr: String,
    /// The physical server it is associated with (`pnDn`), if any.
    pub server: Option<String>,
    /// `assocState`.
    pub assoc: String,
}

/// The profile an object is, if it is one.
pub fn profile(m: &Mo) -> Option<Profile> {
    (m.class == "lsServer").then(|| Profile {
        dn: m.get("dn").unwrap_or_default().to_string(),
        name: m.get("name").unwrap_or_default().to_string(),
        descr: m.get("descr").unwrap_or_default().to_string(),
        server: m.get("pnDn").map(str::to_string),
        assoc: m.get("assocState").unwrap_or("unknown").to_string(),
    })
}

/// A physical server (`computeBlade`, `computeRackUnit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// Its distinguished name.
    pub dn: String,
    /// Its class.
    pub class: String,
    /// `operPower`.
    pub power: String,
    /// `presence`.
    pub presence: String,
    /// Its UUID (the one its profile gave it, which its OS reads).
    pub uuid: Option<String>,
    /// Its serial number.
    pub serial: Option<String>,
    /// The profile it is assigned to (`assignedToDn`).
    pub assigned_to: Option<String>,
}

/// The server an object is, if it is one.
pub fn server(m: &Mo) -> Option<Server> {
    matches!(m.class.as_str(), "computeBlade" | "computeRackUnit").then(|| Server {
        dn: m.get("dn").unwrap_or_default().to_string(),
        class: m.class.clone(),
        power: m.get("operPower").unwrap_or("unknown").to_string(),
        presence: m.get("presence").unwrap_or("unknown").to_string(),
        uuid: m.get("uuid").map(str::to_string),
        serial: m.get("serial").map(str::to_string),
        assigned_to: m.get("assignedToDn").map(str::to_string),
    })
}

/// The rule (module documentation).
pub fn judge(s: &Server, missing_as_off: bool) -> Result<PowerState, String> {
    let p = |t: &str| printable(t, 40);
    if !s.presence.starts_with("equipped") {
        return match (s.presence.as_str(), missing_as_off) {
            ("missing", true) => Ok(PowerState::Off),
            ("missing", false) => Err(format!(
                "server {} is missing from its slot (presence 'missing'): its power cannot be \
                 read (--missing-as-off counts it as off)",
                p(&s.dn)
            )),
            (other, _) => Err(format!(
                "server {} has presence '{}': its power reading is not evidence",
                p(&s.dn),
                p(other)
            )),
        };
    }
    match s.power.as_str() {
        "on" | "power-save" => Ok(PowerState::On),
        "off" => Ok(PowerState::Off),
        other => Err(format!(
            "UCS Manager reports server {} with operPower '{}'",
            p(&s.dn),
            p(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn srv(power: &str, presence: &str) -> Server {
        Server {
            dn: "sys/chassis-1/blade-1".into(),
            class: "computeBlade".into(),
            power: power.into(),
            presence: presence.into(),
            uuid: None,
            serial: None,
            assigned_to: None,
        }
    }

    #[test]
    fn off_only_when_an_equipped_server_reads_off() {
        assert_eq!(judge(&srv("on", "equipped"), false), Ok(PowerState::On));
        assert_eq!(judge(&srv("off", "equipped"), false), Ok(PowerState::Off));
        assert_eq!(
            judge(&srv("off", "equipped-not-primary"), false),
            Ok(PowerState::Off)
        );
        assert!(judge(&srv("unknown", "equipped"), true).is_err());
        assert!(judge(&srv("off", "missing"), false).is_err());
        assert_eq!(judge(&srv("off", "missing"), true), Ok(PowerState::Off));
        assert!(judge(&srv("off", "mismatch"), true).is_err());
    }

    #[test]
    fn answers_read_as_ucs_manager_writes_them() {
        let a = answer(
            br#"<aaaLogin cookie="" response="yes" outCookie="1/ab" outRefreshPeriod="600"/>"#,
            "aaaLogin",
        )
        .unwrap();
        assert_eq!(a.root.get("outCookie"), Some("1/ab"));
        assert!(a.error.is_none());
        let a = answer(
            br#"<aaaLogin cookie="" response="yes" errorCode="551" invocationResult="unidentified-fail" errorDescr="Authentication failed"/>"#,
            "aaaLogin",
        )
        .unwrap();
        assert!(a.error.unwrap().login_refused());
        let a = answer(
            br#"<error cookie="" response="yes" errorCode="552" errorDescr="Authorization required"/>"#,
            "configResolveDn",
        )
        .unwrap();
        assert!(a.error.unwrap().cookie_expired());
        let a = answer(
            br#"<configResolveDn dn="org-root/ls-a" response="yes"><outConfig><lsServer dn="org-root/ls-a" name="a" pnDn="sys/chassis-1/blade-1" assocState="associated"/></outConfig></configResolveDn>"#,
            "configResolveDn",
        )
        .unwrap();
        let p = profile(&a.objects[0]).unwrap();
        assert_eq!(p.server.as_deref(), Some("sys/chassis-1/blade-1"));
        let a = answer(
            br#"<configResolveDn dn="x" response="yes"><outConfig/></configResolveDn>"#,
            "configResolveDn",
        )
        .unwrap();
        assert!(a.objects.is_empty());
        assert!(answer(b"<aaaLogout/>", "aaaLogin").is_err());
        assert_eq!(attr(r#"a"<&>'b"#), "a&quot;&lt;&amp;&gt;&apos;b");
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let pieces: &[&[u8]] = &[
            b"<",
            b">",
            b"/",
            b"=",
            b"\"",
            b"'",
            b"&",
            b"&amp;",
            b"&#0;",
            b"<!DOCTYPE x [<!ENTITY a \"b\">]>",
            b"<?xml version=\"1.0\"?>",
            b"configResolveDn",
            b"outConfig",
            b"lsServer",
            b" dn=",
            b" operPower=\"on\"",
            b" errorCode=\"552\"",
            b"\xff\xfe",
            b"\0",
            b"]]>",
            b"<![CDATA[",
            b"<!--",
            b"-->",
            b" ",
            b"x",
        ];
        for _ in 0..4000 {
            let mut body = Vec::new();
            for _ in 0..(next() % 24) {
                body.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
            if let Ok(a) = answer(&body, "configResolveDn") {
                for o in &a.objects {
                    let _ = (profile(o), server(o).map(|s| judge(&s, true)));
                }
            }
        }
        // Deep nesting and a DTD's entities: refused or bounded, no panic.
        let deep = "<a>".repeat(5000) + &"</a>".repeat(5000);
        let _ = answer(deep.as_bytes(), "a");
        let bomb = br#"<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><configResolveDn x="&b;"/>"#;
        let _ = answer(bomb, "configResolveDn");
    }
}
