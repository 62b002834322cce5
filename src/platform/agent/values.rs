//! The options an invocation set, by key, with upstream's semantics.
//!
//! fence-agents keeps every option as a string under its long name; a flag
//! given on the command line holds `""`, one given on stdin `"1"` or `"0"`,
//! and almost every check asks only whether the key is present. [`Values`]
//! keeps that model (so `ssl_insecure=0` still turns the feature on, as
//! upstream) and adds typed readers for the exceptions.

use super::defs::{Agent, OptType, OptionDef, Truth};
use super::key::Key;
use std::collections::BTreeMap;

/// Option values by key (`power_timeout`), as strings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Values(BTreeMap<String, String>);

impl Values {
    /// An empty set.
    pub fn new() -> Self {
        Values::default()
    }

    /// Sets a value (the last one given wins).
    pub fn set(&mut self, key: Key, value: impl Into<String>) {
        self.set_named(key.as_str(), value);
    }

    /// The value, if the key is set.
    pub fn get(&self, key: Key) -> Option<&str> {
        self.get_named(key.as_str())
    }

    /// True when the key is set, whatever its value.
    pub fn has(&self, key: Key) -> bool {
        self.has_named(key.as_str())
    }

    /// Removes a key.
    pub fn remove(&mut self, key: Key) -> Option<String> {
        self.0.remove(key.as_str())
    }

    /// Sets a value by a definition's key: only for code driven by the
    /// definitions themselves (argv, stdin, defaults), never for reading a
    /// particular option.
    pub fn set_named(&mut self, key: &str, value: impl Into<String>) {
        self.0.insert(key.to_string(), value.into());
    }

    /// The value of a definition's key (see [`Values::set_named`]).
    pub fn get_named(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Whether a definition's key is set (see [`Values::set_named`]).
    pub fn has_named(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// Keys and values in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether a flag is on, by the option's truth rule.
    pub fn flag(&self, opt: &OptionDef) -> bool {
        match (self.get_named(opt.key_str()), opt.truth) {
            (None, _) => false,
            (Some(_), Truth::Presence) => true,
            (Some(v), Truth::Value) => v.is_empty() || v == "1",
        }
    }

    /// Whether the agent's flag `key` is on (false for an option the agent lacks).
    pub fn flag_of(&self, agent: &Agent, key: Key) -> bool {
        agent.option(key.as_str()).is_some_and(|o| self.flag(o))
    }

    /// Fills in every default that is not set.
    pub fn apply_defaults(&mut self, agent: &Agent) {
        for o in agent.options.iter() {
            if let Some(d) = o.default {
                if !self.has_named(o.key_str()) {
                    self.set_named(o.key_str(), d);
                }
            }
        }
    }

    /// An integer or seconds value, read as Python's `int()` reads it.
    pub fn int(&self, key: Key) -> Option<i64> {
        self.get(key).and_then(parse_int)
    }

    /// `--ipport`, or `default` when not given (the error reads after
    /// "Failed: ").
    pub fn port(&self, default: &str) -> Result<u16, String> {
        let text = self.get(Key::Ipport).unwrap_or(default);
        parse_int(text)
            .and_then(|p| u16::try_from(p).ok())
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("the port {text} (--ipport) is not between 1 and 65535"))
    }

    /// The certificate trust an HTTP agent's options ask for: a pinned
    /// fingerprint, else a CA file, else insecure, else the system store
    /// when `--ssl`/`--ssl-secure` asks for TLS; `None` (plain HTTP) when
    /// nothing does, as upstream.
    pub fn tls_trust(&self, agent: &Agent) -> Result<Option<crate::tls::TlsTrust>, String> {
        use crate::tls::TlsTrust;
        if let Some(fp) = self.get(Key::SslFingerprint).filter(|s| !s.is_empty()) {
            let fp = crate::fingerprint::parse_sha256(fp).map_err(|e| e.to_string())?;
            return Ok(Some(TlsTrust::Fingerprint(fp)));
        }
        if let Some(path) = self.get(Key::CaCert).filter(|s| !s.is_empty()) {
            return Ok(Some(TlsTrust::Verify {
                ca_cert: Some(std::path::PathBuf::from(path)),
            }));
        }
        if self.flag_of(agent, Key::SslInsecure) {
            return Ok(Some(TlsTrust::Insecure));
        }
        if self.flag_of(agent, Key::Ssl) || self.flag_of(agent, Key::SslSecure) {
            return Ok(Some(TlsTrust::Verify { ca_cert: None }));
        }
        Ok(None)
    }

    /// The trust of an agent that speaks HTTPS only: [`Values::tls_trust`],
    /// the system store when no option names one.
    pub fn https_trust(&self, agent: &Agent) -> Result<crate::tls::TlsTrust, String> {
        Ok(self
            .tls_trust(agent)?
            .unwrap_or(crate::tls::TlsTrust::Verify { ca_cert: None }))
    }

    /// Each request's bound: the larger of `--shell-timeout` and
    /// `--login-timeout`, 5 s when neither is given, within 5 to 60 s.
    pub fn request_timeout(&self) -> std::time::Duration {
        let secs = [Key::ShellTimeout, Key::LoginTimeout]
            .iter()
            .filter_map(|k| self.int(*k))
            .max()
            .unwrap_or(5)
            .clamp(5, 60);
        std::time::Duration::from_secs(secs as u64)
    }
}

/// How a description for `-v` shows a secret: `empty` or `[set]`, never
/// the secret.
pub fn secret_state(s: &crate::secret::Secret) -> &'static str {
    match s.is_empty() {
        true => "empty",
        false => "[set]",
    }
}

/// Python `int()` on a string: surrounding whitespace, an optional sign,
/// decimal digits with single underscores between them. `None` when it
/// would raise (or does not fit an `i64`).
pub fn parse_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let n: i64 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

/// Checks what upstream's `_validate_input` checks, in its order, and
/// returns each failure's message (without the "Please use '-h'" line).
/// Select values are upper-cased in place, as upstream does, and compared
/// case-insensitively.
pub fn validate(values: &mut Values, agent: &Agent) -> Vec<String> {
    let fam = &agent.family;
    let mut errors = Vec::new();
    if fam.login_required && !values.has(Key::Username) {
        errors.push("Failed: You have to set login name".to_string());
    }
    // Upstream also accepts --target in place of an address (it then fails
    // later); fencekit refuses --target at run time. Agents without an
    // address (fence_aws: an API, not a device) need none.
    if agent.option("ip").is_some() && !values.has(Key::Ip) && !values.has(Key::Target) {
        errors.push("Failed: You have to enter fence address".to_string());
    }
    // Agents with an identity file (fence_virsh) accept it in place of a password.
    let keyed = agent.option("identity_file").is_some();
    if fam.password_required
        && !values.has(Key::Password)
        && !values.has(Key::PasswordScript)
        && (!keyed || !values.has(Key::IdentityFile))
    {
        errors.push(if keyed {
            "Failed: You have to enter password, password script or identity file".to_string()
        } else {
            "Failed: You have to enter password or password script".to_string()
        });
    }
    if keyed {
        // (What else an identity file needs is the family's check.)
        if let Some(file) = values.get(Key::IdentityFile) {
            if !std::path::Path::new(file).is_file() {
                errors.push(format!("Failed: Identity file {file} does not exist"));
            }
        }
    }
    let action = values.get(Key::Action).unwrap_or_default();
    if fam.plug_required
        && !fam.port_as_ip
        && !values.has(Key::Plug)
        && !matches!(action, "list" | "list-status" | "monitor")
    {
        errors.push("Failed: You have to enter plug number or machine identification".to_string());
    }
    for o in agent.options.iter().filter(|o| o.ty == OptType::Select) {
        if let Some(v) = values.get_named(o.key_str()) {
            let upper = v.to_uppercase();
            let ok = o.choices.iter().any(|c| c.to_uppercase() == upper);
            values.set_named(o.key_str(), upper);
            if !ok {
                let list: Vec<String> = o.choices.iter().map(|c| format!("'{c}'")).collect();
                errors.push(format!(
                    "Failed: You have to enter a valid choice for --{} from the valid values: [{}]",
                    o.long,
                    list.join(", ")
                ));
            }
        }
    }
    for o in agent.options.iter() {
        let Some(v) = values.get_named(o.key_str()) else {
            continue;
        };
        let bad = matches!(o.ty, OptType::Integer | OptType::Second) && parse_int(v).is_none();
        if bad && o.ty == OptType::Second {
            errors.push(format!(
                "Failed: The value you have entered for --{} is not a valid time in seconds",
                o.long
            ));
        } else if bad {
            errors.push(format!(
                "Failed: The value you have entered for --{} is not a valid integer",
                o.long
            ));
        }
    }
    errors
}

/// For a family's unit tests: the values of agent `name` from option
/// `pairs`, with its defaults applied and the shared checks passed (a
/// failed check fails the test, naming it).
#[cfg(test)]
pub fn validated(name: &str, pairs: &[(&str, &str)]) -> (Values, Agent) {
    let agent = super::defs::agent(name).unwrap_or_else(|| panic!("no agent {name}"));
    let mut v = Values::new();
    for (k, val) in pairs {
        v.set_named(k, *val);
    }
    v.apply_defaults(&agent);
    let errors = validate(&mut v, &agent);
    assert!(errors.is_empty(), "{errors:?}");
    (v, agent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::agent::defs::agent;

    #[test]
    fn int_follows_python() {
        assert_eq!(parse_int("5"), Some(5));
        assert_eq!(parse_int(" 5 "), Some(5));
        assert_eq!(parse_int("+5"), Some(5));
        assert_eq!(parse_int("-1"), Some(-1));
        assert_eq!(parse_int("1_000"), Some(1000));
        for bad in [
            "",
            " ",
            "1.5",
            "abc",
            "0x10",
            "_1",
            "1_",
            "1__0",
            "- 1",
            "--1",
            "99999999999999999999",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn flags_follow_their_truth_rule() {
        let a = agent("fence_ipmilan").unwrap();
        let lanplus = a.option("lanplus").unwrap();
        let quiet = a.option("quiet").unwrap();
        let mut v = Values::new();
        assert!(!v.flag(lanplus) && !v.flag(quiet));
        for (val, on) in [("", true), ("1", true), ("0", false)] {
            v.set(Key::Lanplus, val);
            v.set(Key::Quiet, val);
            assert_eq!(v.flag(lanplus), on, "lanplus={val:?}");
            assert!(v.flag(quiet), "quiet={val:?} is on by presence");
        }
    }

    #[test]
    fn defaults_fill_only_what_is_unset() {
        let a = agent("fence_ilo3").unwrap();
        let mut v = Values::new();
        v.set(Key::PowerWait, "7");
        v.apply_defaults(&a);
        assert_eq!(v.get(Key::PowerWait), Some("7"));
        assert_eq!(v.get(Key::Lanplus), Some("1"));
        assert_eq!(v.get(Key::Action), Some("reboot"));
        assert_eq!(v.get(Key::Ipport), Some("623"));
        assert!(!v.has(Key::Ip) && !v.has(Key::Verbose));
    }

    #[test]
    fn validation_reports_upstream_messages_in_order() {
        let a = agent("fence_ipmilan").unwrap();
        let mut v = Values::new();
        v.apply_defaults(&a);
        v.set(Key::Privlvl, "foo");
        v.set(Key::PowerTimeout, "abc");
        v.set(Key::Ipport, "x");
        let e = validate(&mut v, &a);
        assert_eq!(
            e,
            vec![
                "Failed: You have to enter fence address",
                "Failed: You have to enter a valid choice for --privlvl from the valid values: \
                 ['callback', 'user', 'operator', 'administrator']",
                "Failed: The value you have entered for --ipport is not a valid integer",
                "Failed: The value you have entered for --power-timeout is not a valid time in seconds",
            ]
        );
    }

    #[test]
    fn selects_are_case_insensitive_and_stored_upper_case() {
        let a = agent("fence_ipmilan").unwrap();
        let mut v = Values::new();
        v.apply_defaults(&a);
        v.set(Key::Ip, "h");
        v.set(Key::Auth, "Md5");
        assert!(validate(&mut v, &a).is_empty());
        assert_eq!(v.get(Key::Auth), Some("MD5"));
        assert_eq!(v.get(Key::Privlvl), Some("ADMINISTRATOR"));
        assert_eq!(v.get(Key::Method), Some("ONOFF"));
    }

    #[test]
    fn virsh_needs_login_password_or_key_and_a_plug() {
        let a = agent("fence_virsh").unwrap();
        let mut v = Values::new();
        v.apply_defaults(&a);
        assert_eq!(
            validate(&mut v, &a),
            vec![
                "Failed: You have to set login name",
                "Failed: You have to enter fence address",
                "Failed: You have to enter password, password script or identity file",
                "Failed: You have to enter plug number or machine identification",
            ]
        );
        v.set(Key::Username, "root");
        v.set(Key::Ip, "h");
        v.set(Key::IdentityFile, "/nonexistent/key");
        v.set(Key::Action, "list");
        assert_eq!(
            validate(&mut v, &a),
            vec!["Failed: Identity file /nonexistent/key does not exist"]
        );
        let key = tempfile::NamedTempFile::new().unwrap();
        v.set(Key::IdentityFile, key.path().to_str().unwrap());
        assert!(validate(&mut v, &a).is_empty(), "list needs no plug");
        v.set(Key::Action, "status");
        assert_eq!(
            validate(&mut v, &a),
            vec!["Failed: You have to enter plug number or machine identification"]
        );
        v.set(Key::Plug, "vm1");
        assert!(validate(&mut v, &a).is_empty());
    }

    #[test]
    fn redfish_needs_login_and_password() {
        let a = agent("fence_redfish").unwrap();
        let mut v = Values::new();
        v.apply_defaults(&a);
        v.set(Key::Ip, "h");
        assert_eq!(
            validate(&mut v, &a),
            vec![
                "Failed: You have to set login name",
                "Failed: You have to enter password or password script",
            ]
        );
        v.set(Key::Username, "u");
        v.set(Key::PasswordScript, "echo x");
        assert!(validate(&mut v, &a).is_empty());
    }

    #[test]
    fn target_stands_in_for_the_address_as_upstream() {
        let a = agent("fence_ipmilan").unwrap();
        let mut v = Values::new();
        v.apply_defaults(&a);
        v.set(Key::Target, "0x20");
        assert!(validate(&mut v, &a).is_empty());
    }
}
