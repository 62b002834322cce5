//! Vendor workarounds, named as FreeIPMI names them (`ipmipower -W NAME`,
//! `workaround-flags` in freeipmi.conf), as data.
//!
//! Each entry says what non-compliance it tolerates, where that was seen,
//! whether fencekit applies it by itself, and what it costs. The rule
//! (docs/ipmi.md): a tolerance that keeps every integrity and
//! authentication check is applied automatically the moment the quirk is
//! seen, and said in the timeline; one that drops a check is applied only
//! when named (`--workaround`, inventory `workarounds = [...]`, the IPMI
//! agents' `--workaround`), and then warned about on every use and
//! recorded in the evidence and the audit trail. The docs table is
//! rendered from [`TABLE`] ([`markdown_table`]) and a test keeps the page
//! equal to it.

use std::fmt;
use std::str::FromStr;

/// One named workaround.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workaround {
    /// Get Channel Authentication Capabilities under-reports.
    Authcap,
    /// IPMI message checksums that do not match.
    NoChecksumCheck,
    /// IPMI 1.5 session ID 0.
    IdZero,
    /// IPMI 1.5 replies carrying authentication codes that were declared off.
    UnexpectedAuth,
    /// Per-message authentication declared off but required.
    ForcePerMsg,
    /// IPMI 1.5 sequence numbers in the wrong byte order.
    EndianSeq,
    /// IPMI 1.5 replies whose authentication codes do not verify.
    NoAuthCodeCheck,
    /// Intel RMCP+ user-name padding.
    Intel20,
    /// Supermicro (Peppercon) over-long RAKP 2 codes.
    Supermicro20,
    /// Sun ILOM RMCP+ set-up.
    Sun20,
    /// Keys hashed with the Open Session privilege.
    OpenSessPriv,
    /// An over-long RAKP 4 integrity check value.
    IntegrityCheckValue,
}

/// Whether fencekit applies a workaround without being asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Whenever the quirk is seen (naming it changes nothing).
    Automatically,
    /// Where it costs nothing (the first text); naming it adds the second.
    Partly(&'static str, &'static str),
    /// Only when named.
    WhenNamed,
}

/// What a workaround costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Security {
    /// Every integrity and authentication check stays (why).
    Keeps(&'static str),
    /// A check is dropped (which, and what an attacker could then do).
    Weakens(&'static str),
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// Which.
    pub workaround: Workaround,
    /// FreeIPMI's name.
    pub name: &'static str,
    /// The non-compliance it tolerates.
    pub tolerates: &'static str,
    /// Hardware it was reported on (FreeIPMI's documentation).
    pub seen_on: &'static str,
    /// Whether fencekit applies it unasked.
    pub applied: Applied,
    /// What it costs.
    pub security: Security,
}

/// Every workaround fencekit knows, in FreeIPMI's order of documentation.
pub const TABLE: [Entry; 12] = [
    Entry {
        workaround: Workaround::Authcap,
        name: "authcap",
        tolerates: "Get Channel Authentication Capabilities that under-reports what the BMC \
                    does: IPMI 1.5 then uses the authentication type asked for (or MD5) even when \
                    the answer does not list it, and an answer saying \"no IPMI 2.0\" never moves \
                    a session to 1.5",
        seen_on: "Asus P5M2/P5MT-R/RS162-E4/RX4, Intel SR1520ML/X38ML, Sun Fire 2200/4150/4450 \
                  with ELOM",
        applied: Applied::WhenNamed,
        security: Security::Keeps(
            "only a capability list is disregarded; the session is authenticated as before \
             (never with authentication type none unless asked)",
        ),
    },
    Entry {
        workaround: Workaround::NoChecksumCheck,
        name: "nochecksumcheck",
        tolerates: "IPMI message checksums that do not match the message",
        seen_on: "Supermicro X9SCM-iiF, X9DRi-F, X9DRFR",
        applied: Applied::Partly(
            "for a message whose RMCP+ integrity code or IPMI 1.5 MD5 code verifies (it covers \
             every byte the checksum does)",
            "also messages nothing authenticates (answers outside a session, IPMI 1.5 without MD5)",
        ),
        security: Security::Keeps(
            "a checksum only detects corruption; authenticated messages are still checked by \
             their codes, and UDP's own checksum still applies to the others",
        ),
    },
    Entry {
        workaround: Workaround::IdZero,
        name: "idzero",
        tolerates: "an IPMI 1.5 session whose BMC puts session ID 0 on its replies",
        seen_on: "Tyan S2882 with M3289 BMC",
        applied: Applied::WhenNamed,
        security: Security::Weakens(
            "replies are no longer tied to this session by its ID: a reply meant for another \
             session of the same user (another fencekit, a monitoring tool) can be taken for \
             this one's",
        ),
    },
    Entry {
        workaround: Workaround::UnexpectedAuth,
        name: "unexpectedauth",
        tolerates: "IPMI 1.5 replies that carry authentication codes although the BMC declared \
                    per-message authentication disabled",
        seen_on: "Dell PowerEdge 2850, SC1425",
        applied: Applied::Automatically,
        security: Security::Keeps(
            "fencekit authenticates every message of a 1.5 session whatever the BMC declares, \
             and checks the code of every reply: such a reply is what it expects",
        ),
    },
    Entry {
        workaround: Workaround::ForcePerMsg,
        name: "forcepermsg",
        tolerates: "a BMC that declares per-message authentication disabled but drops \
                    unauthenticated requests",
        seen_on: "IBM eServer 325",
        applied: Applied::Automatically,
        security: Security::Keeps(
            "it adds authentication: fencekit never sends an unauthenticated request in a 1.5 \
             session with MD5 or password authentication",
        ),
    },
    Entry {
        workaround: Workaround::EndianSeq,
        name: "endianseq",
        tolerates: "IPMI 1.5 session sequence numbers sent with their bytes swapped",
        seen_on: "Sun ILOM 1.0/2.0 (depends on the service processor's byte order)",
        applied: Applied::Automatically,
        security: Security::Keeps(
            "the numbers are read in the BMC's byte order and replay-checked as before; the \
             order is decided by the session's first verified reply and kept",
        ),
    },
    Entry {
        workaround: Workaround::NoAuthCodeCheck,
        name: "noauthcodecheck",
        tolerates: "IPMI 1.5 replies whose authentication codes do not verify",
        seen_on: "Xyratex FB-H8-SRAY, Intel Windmill, Quanta Winterfell, Wiwynn Windmill",
        applied: Applied::WhenNamed,
        security: Security::Weakens(
            "replies are no longer authenticated: anyone who can send to this host from the \
             BMC's address can forge an answer, such as an \"off\" that never happened",
        ),
    },
    Entry {
        workaround: Workaround::Intel20,
        name: "intel20",
        tolerates: "an RMCP+ BMC that looks the user name up only when it is padded with zeros \
                    to 16 bytes",
        seen_on: "Intel SE7520AF2 with Intel Server Management Module (Professional Edition)",
        applied: Applied::Partly(
            "after RAKP 2 refuses the name (unauthorized name, 0Dh): once more, padded",
            "padded from the first RAKP 1",
        ),
        security: Security::Keeps(
            "the padded name is hashed into every code as sent; nothing is left unchecked",
        ),
    },
    Entry {
        workaround: Workaround::Supermicro20,
        name: "supermicro20",
        tolerates: "a RAKP 2 key-exchange code longer than the suite's HMAC",
        seen_on: "Supermicro H8QME with SIMSO daughter card (Peppercon firmware)",
        applied: Applied::Automatically,
        security: Security::Keeps(
            "the HMAC's own bytes must verify; only the bytes after it are ignored",
        ),
    },
    Entry {
        workaround: Workaround::Sun20,
        name: "sun20",
        tolerates: "Sun ILOM's RMCP+ set-up: cipher-suite records without their tags, over-long \
                    RAKP codes, keys hashed with the Open Session privilege",
        seen_on: "Sun Fire 4100/4200/4500 with ILOM",
        applied: Applied::Automatically,
        security: Security::Keeps(
            "untagged records are read as such (an unreadable list: suites 17, then 3, are \
             tried), every code is verified over its own bytes, and see opensesspriv",
        ),
    },
    Entry {
        workaround: Workaround::OpenSessPriv,
        name: "opensesspriv",
        tolerates: "an RMCP+ BMC that hashes the RAKP codes and session keys with the privilege \
                    of the Open Session request instead of RAKP 1's role",
        seen_on: "Sun Fire 4100/4200/4500 with ILOM, Inventec 5441/Dell Xanadu II, Supermicro \
                  X8DTH/X8DTG, Intel S5500WBV/Penguin Relion 700, Intel S2600JF/Appro 512X, \
                  Quanta QSSC-S4R/Appro GB812X-CN, Dell C5220",
        applied: Applied::Automatically,
        security: Security::Keeps(
            "fencekit's Open Session asks for the privilege RAKP 1 asks for, so such a BMC \
             computes the same codes; nothing is left unchecked",
        ),
    },
    Entry {
        workaround: Workaround::IntegrityCheckValue,
        name: "integritycheckvalue",
        tolerates: "a RAKP 4 integrity check value longer than the suite's (not truncated; \
                    FreeIPMI's case is cipher suite 0, whose value should be empty, a suite \
                    fencekit does not speak)",
        seen_on: "Supermicro X8DTG, X8DTU, Intel S5500WBV/Penguin Relion 700, Intel \
                  S2600JF/Appro 512X",
        applied: Applied::Automatically,
        security: Security::Keeps(
            "the suite's own 12 or 16 bytes must verify; only the bytes after them are ignored",
        ),
    },
];

impl Entry {
    /// The security column's text, without the verdict.
    pub fn security_note(&self) -> &'static str {
        match self.security {
            Security::Keeps(why) | Security::Weakens(why) => why,
        }
    }
}

impl Workaround {
    /// Its row of [`TABLE`].
    pub fn entry(self) -> &'static Entry {
        TABLE
            .iter()
            .find(|e| e.workaround == self)
            .expect("every workaround has a row")
    }

    /// FreeIPMI's name.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// True when it drops an integrity or authentication check.
    pub fn weakens_security(self) -> bool {
        matches!(self.entry().security, Security::Weakens(_))
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Workaround {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`TABLE`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown IPMI workaround '{0}' (known: {known})", known = known_names())]
pub struct UnknownWorkaround(pub String);

fn known_names() -> String {
    TABLE.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}

impl FromStr for Workaround {
    type Err = UnknownWorkaround;
    fn from_str(s: &str) -> Result<Self, UnknownWorkaround> {
        let t = s.trim().to_ascii_lowercase();
        TABLE
            .iter()
            .find(|e| e.name == t)
            .map(|e| e.workaround)
            .ok_or_else(|| UnknownWorkaround(s.trim().to_string()))
    }
}

/// A set of workarounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Workarounds(u16);

impl Workarounds {
    /// No workaround.
    pub const NONE: Workarounds = Workarounds(0);

    /// Parses `a,b` (commas or blanks between names; `none` or nothing:
    /// the empty set, as FreeIPMI's `-W none`).
    pub fn parse(list: &str) -> Result<Workarounds, UnknownWorkaround> {
        Self::from_names(list.split(|c: char| c == ',' || c.is_whitespace()))
    }

    /// The set named by `names` (each a name or `none`; blanks skipped).
    pub fn from_names<'a>(
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Workarounds, UnknownWorkaround> {
        let mut set = Workarounds::NONE;
        for n in names {
            let n = n.trim();
            if n.is_empty() || n.eq_ignore_ascii_case("none") {
                continue;
            }
            set.insert(n.parse()?);
        }
        Ok(set)
    }

    /// Adds one.
    pub fn insert(&mut self, w: Workaround) {
        self.0 |= w.bit();
    }

    /// Whether `w` is in the set.
    pub fn contains(self, w: Workaround) -> bool {
        self.0 & w.bit() != 0
    }

    /// True for the empty set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The members, in [`TABLE`] order.
    pub fn iter(self) -> impl Iterator<Item = Workaround> {
        TABLE
            .iter()
            .map(|e| e.workaround)
            .filter(move |w| self.contains(*w))
    }

    /// The members that drop a check.
    pub fn weakening(self) -> impl Iterator<Item = Workaround> {
        self.iter().filter(|w| w.weakens_security())
    }

    /// The names, comma-separated (`none` for the empty set).
    pub fn names(self) -> String {
        if self.is_empty() {
            return "none".into();
        }
        self.iter()
            .map(Workaround::name)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The table as Markdown, for docs/ipmi.md (kept equal by a test).
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| name | tolerates | seen on | applied by fencekit | security |\n|---|---|---|---|---|\n",
    );
    for e in &TABLE {
        let applied = match e.applied {
            Applied::Automatically => "automatically, when seen".to_string(),
            Applied::Partly(auto, named) => {
                format!("automatically {auto}; named, {named}")
            }
            Applied::WhenNamed => "only when named".to_string(),
        };
        let security = match e.security {
            Security::Keeps(why) => format!("keeps every check: {why}"),
            Security::Weakens(why) => format!("**weakens**: {why}"),
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            e.name, e.tolerates, e.seen_on, applied, security
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workaround_has_one_row_and_a_distinct_name() {
        let mut names: Vec<&str> = TABLE.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
        for e in &TABLE {
            assert_eq!(e.workaround.entry().name, e.name);
            assert_eq!(e.name.parse::<Workaround>().unwrap(), e.workaround);
        }
    }

    #[test]
    fn the_weakening_ones_are_never_automatic() {
        for e in &TABLE {
            if matches!(e.security, Security::Weakens(_)) {
                assert_eq!(e.applied, Applied::WhenNamed, "{}", e.name);
            }
        }
        let weak: Vec<&str> = TABLE
            .iter()
            .filter(|e| e.workaround.weakens_security())
            .map(|e| e.name)
            .collect();
        assert_eq!(weak, ["idzero", "noauthcodecheck"]);
    }

    #[test]
    fn lists_parse_as_freeipmi_writes_them() {
        let w = Workarounds::parse("nochecksumcheck,intel20").unwrap();
        assert!(w.contains(Workaround::NoChecksumCheck) && w.contains(Workaround::Intel20));
        assert!(!w.contains(Workaround::IdZero));
        assert_eq!(w.names(), "nochecksumcheck,intel20");
        assert_eq!(Workarounds::parse("none").unwrap(), Workarounds::NONE);
        assert_eq!(Workarounds::parse("").unwrap().names(), "none");
        assert_eq!(
            Workarounds::parse("IDZERO noauthcodecheck")
                .unwrap()
                .weakening()
                .collect::<Vec<_>>(),
            [Workaround::IdZero, Workaround::NoAuthCodeCheck]
        );
        assert_eq!(
            Workarounds::parse("intel20,bogus").unwrap_err().to_string(),
            "unknown IPMI workaround 'bogus' (known: authcap, nochecksumcheck, idzero, \
             unexpectedauth, forcepermsg, endianseq, noauthcodecheck, intel20, supermicro20, \
             sun20, opensesspriv, integritycheckvalue)"
        );
    }
}
