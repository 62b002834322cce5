//! Where the settings come from: a cloud of `clouds.yaml` (with the
//! matching cloud of `secure.yaml` merged in), the `OS_*` environment
//! variables (an openrc file sets them), or the agent's options. One
//! reader for all: each source answers the same keys (`auth_url`,
//! `project_name`, `application_credential_id`, ... as clouds.yaml spells
//! them; the environment as `OS_` and the key in capitals).
//!
//! The files are looked for in openstacksdk's order, the first one found
//! wins: `$OS_CLIENT_CONFIG_FILE`, `./clouds.yaml`,
//! `$XDG_CONFIG_HOME/openstack/clouds.yaml` (`~/.config/openstack/`),
//! `/etc/openstack/clouds.yaml`; `secure.yaml` the same way
//! (`$OS_CLIENT_SECURE_FILE` first).

use super::config::{AuthKind, ConfigError, NameOrId, OpenstackConfig};
use crate::secret::Secret;
use crate::tls::TlsTrust;
use serde_yaml_ng::Value;
use std::path::{Path, PathBuf};

/// The largest clouds.yaml read.
const MAX_FILE: u64 = 1 << 20;

/// The settings and the secret (password, application credential secret
/// or token) one source gives.
#[derive(Debug)]
pub struct Loaded {
    /// Everything but the secret.
    pub config: OpenstackConfig,
    /// The secret, when the source holds one.
    pub secret: Option<Secret>,
    /// Where the settings were read (for messages).
    pub source: String,
}

/// The files looked for, in order.
pub fn candidates(env: &dyn Fn(&str) -> Option<String>, file: &str, over: &str) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(f) = env(over).filter(|f| !f.is_empty()) {
        v.push(PathBuf::from(f));
    }
    v.push(PathBuf::from(file));
    let conf = env("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")));
    if let Some(c) = conf {
        v.push(c.join("openstack").join(file));
    }
    v.push(Path::new("/etc/openstack").join(file));
    v
}

fn read_yaml(p: &Path) -> Result<Option<Value>, String> {
    let Ok(meta) = std::fs::metadata(p) else {
        return Ok(None);
    };
    if meta.len() > MAX_FILE {
        return Err(format!("{} is larger than 1 MiB", p.display()));
    }
    let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_yaml_ng::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{} is not YAML: {e}", p.display()))
}

fn first(paths: &[PathBuf]) -> Result<Option<(PathBuf, Value)>, String> {
    for p in paths {
        if let Some(v) = read_yaml(p)? {
            return Ok(Some((p.clone(), v)));
        }
    }
    Ok(None)
}

fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Mapping(b), Value::Mapping(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The cloud `name` of the first clouds.yaml found, secure.yaml merged.
pub fn from_clouds(name: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, String> {
    let files = candidates(env, "clouds.yaml", "OS_CLIENT_CONFIG_FILE");
    let Some((path, doc)) = first(&files)? else {
        return Err(format!(
            "no clouds.yaml found (looked for {})",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let mut cloud = doc
        .get("clouds")
        .and_then(|c| c.get(name))
        .cloned()
        .ok_or_else(|| format!("{} has no cloud '{name}'", path.display()))?;
    let secure = candidates(env, "secure.yaml", "OS_CLIENT_SECURE_FILE");
    if let Some((_, s)) = first(&secure)? {
        if let Some(c) = s.get("clouds").and_then(|c| c.get(name)).cloned() {
            merge(&mut cloud, c);
        }
    }
    let get = |k: &str| {
        cloud
            .get("auth")
            .and_then(|a| a.get(k))
            .or_else(|| cloud.get(k))
            .and_then(scalar)
            .filter(|s| !s.is_empty())
    };
    let mut l = settings(&get).map_err(|e| format!("{} cloud '{name}': {e}", path.display()))?;
    l.config.cloud = Some(name.to_string());
    l.source = format!("{} cloud '{name}'", path.display());
    Ok(l)
}

/// The `OS_*` variables of `env`.
pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, String> {
    let get = |k: &str| env(&format!("OS_{}", k.to_ascii_uppercase())).filter(|s| !s.is_empty());
    let mut l = settings(&get).map_err(|e| format!("the OS_* variables: {e}"))?;
    l.config.cloud = Some("env".into());
    l.source = "the OS_* environment variables".into();
    Ok(l)
}

/// `openstack://CLOUD/...`: `env` is the environment (or its `OS_CLOUD`),
/// any other name a cloud of clouds.yaml.
pub fn load(cloud: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, String> {
    match cloud {
        "env" => match env("OS_CLOUD").filter(|c| !c.is_empty()) {
            Some(c) => from_clouds(&c, env),
            None => from_env(env),
        },
        c => from_clouds(c, env),
    }
}

fn truth(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Some(true),
        "false" | "no" | "0" | "off" => Some(false),
        _ => None,
    }
}

/// One source's keys → the settings and the secret.
pub fn settings(get: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, ConfigError> {
    let auth_url = get("auth_url").ok_or_else(|| {
        ConfigError::Bad("no auth_url (Keystone's URL, e.g. https://keystone:5000/v3)".into())
    })?;
    let mut c = OpenstackConfig::new(&auth_url);
    c.kind = AuthKind::parse(&get("auth_type").unwrap_or_default())?;
    let pair = |name: &str, id: &str| NameOrId {
        name: get(name),
        id: get(id),
    };
    c.user = pair("username", "user_id");
    let domain = pair("domain_name", "domain_id");
    let or_domain = |d: NameOrId| if d.is_empty() { domain.clone() } else { d };
    c.user_domain = or_domain(pair("user_domain_name", "user_domain_id"));
    c.project = pair("project_name", "project_id");
    if c.project.is_empty() {
        c.project = pair("tenant_name", "tenant_id");
    }
    c.project_domain = or_domain(pair("project_domain_name", "project_domain_id"));
    c.app_cred = pair("application_credential_name", "application_credential_id");
    c.region = get("region_name");
    if let Some(i) = get("interface").or_else(|| get("endpoint_type")) {
        c.interface = i
            .trim()
            .to_ascii_lowercase()
            .trim_end_matches("url")
            .to_string();
    }
    let insecure = get("verify").and_then(|v| truth(&v)) == Some(false)
        || get("insecure").and_then(|v| truth(&v)) == Some(true);
    c.tls = match (insecure, get("cacert")) {
        (true, _) => TlsTrust::Insecure,
        (false, Some(ca)) => TlsTrust::Verify {
            ca_cert: Some(PathBuf::from(ca)),
        },
        (false, None) => TlsTrust::default(),
    };
    let secret = match c.kind {
        AuthKind::Password => get("password"),
        AuthKind::AppCredential => get("application_credential_secret"),
        AuthKind::Token => get("token"),
    }
    .map(|s| Secret::from_str_value(&s));
    Ok(Loaded {
        config: c,
        secret,
        source: String::new(),
    })
}

/// Runs an openrc file (a shell script that exports `OS_*`) the way
/// upstream does (`/bin/sh`, `.` then `env -0`) and returns the variables.
pub fn openrc(path: &Path) -> Result<Vec<(String, String)>, String> {
    if !path.is_file() {
        return Err(format!("{} does not exist", path.display()));
    }
    let out = std::process::Command::new("/bin/sh")
        .args(["-c", ". \"$1\" >/dev/null && env -0", "openrc"])
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!("{} could not be sourced", path.display()));
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter_map(|kv| {
            let s = String::from_utf8_lossy(kv);
            let (k, v) = s.split_once('=')?;
            k.starts_with("OS_").then(|| (k.to_string(), v.to_string()))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn clouds_yaml_in_order_with_secure_yaml_merged() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir_all(home.join(".config/openstack")).unwrap();
        std::fs::write(
            home.join(".config/openstack/clouds.yaml"),
            "clouds:\n  c1:\n    auth:\n      auth_url: https://k:5000\n      username: fence\n      \
             project_name: p\n      user_domain_name: Default\n    region_name: R1\n    \
             interface: internal\n    verify: false\n  ac:\n    auth_type: v3applicationcredential\n    \
             auth:\n      auth_url: https://k:5000/v3\n      application_credential_id: id1\n      \
             application_credential_secret: s3cret\n    cacert: /ca.pem\n",
        )
        .unwrap();
        std::fs::write(
            home.join(".config/openstack/secure.yaml"),
            "clouds:\n  c1:\n    auth:\n      password: pw1\n",
        )
        .unwrap();
        let env: HashMap<&str, String> = HashMap::from([("HOME", home.display().to_string())]);
        let get = |k: &str| env.get(k).cloned();
        let l = from_clouds("c1", &get).unwrap();
        assert_eq!(l.config.user.name.as_deref(), Some("fence"));
        assert_eq!(l.config.region.as_deref(), Some("R1"));
        assert_eq!(l.config.interface, "internal");
        assert_eq!(l.config.tls, TlsTrust::Insecure);
        assert_eq!(l.secret.unwrap().expose(), b"pw1");
        let l = from_clouds("ac", &get).unwrap();
        assert_eq!(l.config.kind, AuthKind::AppCredential);
        assert_eq!(l.secret.unwrap().expose(), b"s3cret");
        assert!(matches!(
            l.config.tls,
            TlsTrust::Verify { ca_cert: Some(_) }
        ));
        assert!(from_clouds("nope", &get)
            .unwrap_err()
            .contains("no cloud 'nope'"));
        // $OS_CLIENT_CONFIG_FILE comes first.
        let other = d.path().join("other.yaml");
        std::fs::write(
            &other,
            "clouds:\n  c1:\n    auth:\n      auth_url: https://o/v3\n      username: u\n",
        )
        .unwrap();
        let env2: HashMap<&str, String> = HashMap::from([
            ("HOME", home.display().to_string()),
            ("OS_CLIENT_CONFIG_FILE", other.display().to_string()),
        ]);
        let get2 = |k: &str| env2.get(k).cloned();
        assert_eq!(
            from_clouds("c1", &get2).unwrap().config.auth_url,
            "https://o/v3"
        );
    }

    #[test]
    fn the_environment_and_an_openrc() {
        let env: HashMap<&str, &str> = HashMap::from([
            ("OS_AUTH_URL", "https://k/v3"),
            ("OS_USERNAME", "u"),
            ("OS_PASSWORD", "pw"),
            ("OS_TENANT_NAME", "t"),
            ("OS_DOMAIN_NAME", "D"),
        ]);
        let get = |k: &str| env.get(k).map(|s| s.to_string());
        let l = load("env", &get).unwrap();
        assert_eq!(l.config.project.name.as_deref(), Some("t"));
        assert_eq!(l.config.user_domain.name.as_deref(), Some("D"));
        assert_eq!(l.config.project_domain.name.as_deref(), Some("D"));
        assert_eq!(l.secret.unwrap().expose(), b"pw");
        let d = tempfile::tempdir().unwrap();
        let rc = d.path().join("openrc");
        std::fs::write(
            &rc,
            "export OS_AUTH_URL=https://k/v3\nexport OS_USERNAME='a b'\n",
        )
        .unwrap();
        let vars = openrc(&rc).unwrap();
        assert!(
            vars.contains(&("OS_USERNAME".into(), "a b".into())),
            "{vars:?}"
        );
        assert!(openrc(&d.path().join("missing")).is_err());
    }
}
