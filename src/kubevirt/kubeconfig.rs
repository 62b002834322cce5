//! Credentials for the Kubernetes API, in the client libraries' order:
//!
//! 1. `--kubeconfig FILE` (only that file);
//! 2. `KUBECONFIG`, a colon-separated list merged as the client libraries
//!    merge it: the first file that sets a value (the current context, a
//!    cluster, user or context of a given name) wins;
//! 3. `~/.kube/config`;
//! 4. the in-cluster service account (`KUBERNETES_SERVICE_HOST`/`PORT`, the
//!    token file and `ca.crt` of its mount), used when no kubeconfig exists.
//!
//! From a kubeconfig: the context (the target's, else `current-context`),
//! its cluster (`server`, `certificate-authority[-data]`,
//! `insecure-skip-tls-verify`) and user (`token`, `tokenFile`,
//! `client-certificate[-data]`, `client-key[-data]`, `username`/`password`);
//! relative paths are relative to the file that names them. Credential
//! plugins (`exec`, `auth-provider`) are refused by name.
//!
//! Kubeconfig files are YAML (or JSON). fencekit reads them with a small
//! reader of the YAML that `kubectl` and `oc` write: block mappings and
//! sequences, plain and quoted scalars, and one-line flow collections of
//! scalars; anchors, tags and block scalars are refused with the line.

use super::config::Env;
use crate::secret::Secret;
use base64::Engine as _;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Why no credentials could be found or used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KubeconfigError {
    /// A file cannot be read.
    #[error("cannot read {path}: {why}")]
    Read {
        /// The file.
        path: String,
        /// What failed.
        why: String,
    },
    /// A file is not a kubeconfig this reader understands.
    #[error("cannot parse kubeconfig {path}: {why}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong, with the line.
        why: String,
    },
    /// Nothing to use at all.
    #[error("no Kubernetes credentials: no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a pod (KUBERNETES_SERVICE_HOST is unset)")]
    Nothing,
    /// The context asked for, or the current one, is not there.
    #[error("{0}")]
    Missing(String),
    /// Something the kubeconfig asks for that fencekit does not do.
    #[error("{0}")]
    Unsupported(String),
}

/// How requests authenticate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// No header (a client certificate alone, or nothing).
    None,
    /// A bearer token given in the kubeconfig.
    Token(Secret),
    /// A bearer token read from a file (read again after a 401: a rotated
    /// projected service-account token).
    TokenFile(PathBuf),
    /// HTTP basic authentication.
    Basic(Secret),
}

/// Everything needed to talk to one API server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// `https://HOST:PORT` (no trailing slash).
    pub server: String,
    /// Trusted CA certificates (PEM); `None`: the system trust store.
    pub ca_pem: Option<Vec<u8>>,
    /// `insecure-skip-tls-verify: true` in the cluster entry.
    pub insecure: bool,
    /// A client certificate and its key (PEM).
    pub client: Option<(Vec<u8>, Secret)>,
    /// The request authentication.
    pub auth: Auth,
    /// The namespace the context (or the service account) defaults to.
    pub namespace: Option<String>,
    /// Where it came from, for the record (`kubeconfig /p (context c)`).
    pub source: String,
}

/// Which credentials to read.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// The context (`CONTEXT@` of a target).
    pub context: Option<String>,
}

fn read(path: &Path) -> Result<Vec<u8>, KubeconfigError> {
    std::fs::read(path).map_err(|e| KubeconfigError::Read {
        path: path.display().to_string(),
        why: e.to_string(),
    })
}

/// Resolves the credentials: kubeconfig files first, the in-cluster
/// service account when there is none.
pub fn resolve(sel: &Selection, env: &Env) -> Result<Access, KubeconfigError> {
    let files: Vec<PathBuf> = if let Some(p) = &sel.kubeconfig {
        vec![p.clone()]
    } else if let Some(list) = env.get("KUBECONFIG") {
        list.split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect()
    } else {
        env.get("HOME")
            .map(|h| Path::new(h).join(".kube/config"))
            .filter(|p| p.exists())
            .into_iter()
            .collect()
    };
    if files.is_empty() {
        if env.get("KUBERNETES_SERVICE_HOST").is_some() {
            if let Some(c) = &sel.context {
                return Err(KubeconfigError::Missing(format!(
                    "context '{c}' was asked for, but no kubeconfig exists (in a pod, the service \
                     account has no contexts: leave CONTEXT@ out)"
                )));
            }
            return in_cluster(env);
        }
        return Err(KubeconfigError::Nothing);
    }
    let mut merged = Merged::default();
    for f in &files {
        let text = read(f)?;
        let v = parse(&text).map_err(|why| KubeconfigError::Parse {
            path: f.display().to_string(),
            why,
        })?;
        merged.add(&v, f);
    }
    merged.select(sel.context.as_deref(), &files)
}

/// Named entries of the merged files, first wins, each with its file's directory.
#[derive(Default)]
struct Merged {
    current: Option<String>,
    clusters: Vec<(String, Value, PathBuf)>,
    users: Vec<(String, Value, PathBuf)>,
    contexts: Vec<(String, Value, PathBuf)>,
}

impl Merged {
    fn add(&mut self, v: &Value, file: &Path) {
        let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        if self.current.is_none() {
            self.current = v
                .get("current-context")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string);
        }
        for (key, inner, list) in [
            ("clusters", "cluster", &mut self.clusters),
            ("users", "user", &mut self.users),
            ("contexts", "context", &mut self.contexts),
        ] {
            for e in v.get(key).and_then(Value::as_array).into_iter().flatten() {
                let Some(name) = e.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if list.iter().any(|(n, _, _)| n == name) {
                    continue;
                }
                let body = e.get(inner).cloned().unwrap_or(Value::Null);
                list.push((name.to_string(), body, dir.clone()));
            }
        }
    }

    fn select(&self, context: Option<&str>, files: &[PathBuf]) -> Result<Access, KubeconfigError> {
        let shown = files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        let name = match context.or(self.current.as_deref()) {
            Some(n) => n,
            None => {
                return Err(KubeconfigError::Missing(format!(
                    "kubeconfig {shown} sets no current-context; name one (kubevirt://CONTEXT@NAMESPACE/VM)"
                )))
            }
        };
        let find = |list: &[(String, Value, PathBuf)], n: &str| {
            list.iter()
                .find(|(k, _, _)| k == n)
                .map(|(_, v, d)| (v.clone(), d.clone()))
        };
        let (ctx, _) = find(&self.contexts, name).ok_or_else(|| {
            KubeconfigError::Missing(format!("kubeconfig {shown} has no context '{name}'"))
        })?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let cluster_name = s(&ctx, "cluster").unwrap_or_default();
        let user_name = s(&ctx, "user").unwrap_or_default();
        let (cluster, cdir) = find(&self.clusters, &cluster_name).ok_or_else(|| {
            KubeconfigError::Missing(format!(
                "context '{name}' names cluster '{cluster_name}', which kubeconfig {shown} does not define"
            ))
        })?;
        let server = s(&cluster, "server").ok_or_else(|| {
            KubeconfigError::Missing(format!("cluster '{cluster_name}' has no server"))
        })?;
        if cluster.get("proxy-url").is_some() {
            return Err(KubeconfigError::Unsupported(format!(
                "cluster '{cluster_name}' sets proxy-url: fencekit connects to the API server directly"
            )));
        }
        let ca_pem = match (
            s(&cluster, "certificate-authority-data"),
            s(&cluster, "certificate-authority"),
        ) {
            (Some(d), _) => Some(b64(&d, "certificate-authority-data")?),
            (None, Some(p)) => Some(read(&cdir.join(p))?),
            (None, None) => None,
        };
        let insecure = matches!(
            cluster.get("insecure-skip-tls-verify"),
            Some(Value::Bool(true))
        ) || s(&cluster, "insecure-skip-tls-verify").as_deref() == Some("true");
        let (user, udir) = if user_name.is_empty() {
            (Value::Null, cdir.clone())
        } else {
            find(&self.users, &user_name).ok_or_else(|| {
                KubeconfigError::Missing(format!(
                    "context '{name}' names user '{user_name}', which kubeconfig {shown} does not define"
                ))
            })?
        };
        for plugin in ["exec", "auth-provider"] {
            if user.get(plugin).is_some_and(|v| !v.is_null()) {
                return Err(KubeconfigError::Unsupported(format!(
                    "user '{user_name}' gets its credentials from an {plugin} plugin, which fencekit \
                     does not run: give a token (a service account's), a token file or a client \
                     certificate"
                )));
            }
        }
        let cert = match (
            s(&user, "client-certificate-data"),
            s(&user, "client-certificate"),
        ) {
            (Some(d), _) => Some(b64(&d, "client-certificate-data")?),
            (None, Some(p)) => Some(read(&udir.join(p))?),
            _ => None,
        };
        let key = match (s(&user, "client-key-data"), s(&user, "client-key")) {
            (Some(d), _) => Some(Secret::new(b64(&d, "client-key-data")?)),
            (None, Some(p)) => Some(Secret::new(read(&udir.join(p))?)),
            _ => None,
        };
        let client = match (cert, key) {
            (Some(c), Some(k)) => Some((c, k)),
            (None, None) => None,
            _ => {
                return Err(KubeconfigError::Missing(format!(
                    "user '{user_name}' has a client certificate without its key, or a key without its certificate"
                )))
            }
        };
        let auth = if let Some(t) = s(&user, "token").filter(|t| !t.is_empty()) {
            Auth::Token(Secret::from_str_value(t.trim()))
        } else if let Some(p) = s(&user, "tokenFile") {
            Auth::TokenFile(udir.join(p))
        } else if let (Some(u), Some(p)) = (s(&user, "username"), s(&user, "password")) {
            let raw = format!("{u}:{p}");
            Auth::Basic(Secret::from_str_value(
                &base64::engine::general_purpose::STANDARD.encode(raw.as_bytes()),
            ))
        } else {
            Auth::None
        };
        Ok(Access {
            server: server.trim_end_matches('/').to_string(),
            ca_pem,
            insecure,
            client,
            auth,
            namespace: s(&ctx, "namespace").filter(|n| !n.is_empty()),
            source: format!("kubeconfig {shown} (context {name})"),
        })
    }
}

fn b64(s: &str, what: &str) -> Result<Vec<u8>, KubeconfigError> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_err(|e| KubeconfigError::Parse {
            path: what.to_string(),
            why: format!("not base64: {e}"),
        })
}

/// The in-cluster service account.
fn in_cluster(env: &Env) -> Result<Access, KubeconfigError> {
    let host = env.get("KUBERNETES_SERVICE_HOST").unwrap_or_default();
    let port = env.get("KUBERNETES_SERVICE_PORT").unwrap_or("443");
    let dir = env.service_account_dir();
    let token = dir.join("token");
    if !token.exists() {
        return Err(KubeconfigError::Missing(format!(
            "in a pod (KUBERNETES_SERVICE_HOST is set) but {} does not exist: mount a service \
             account token (automountServiceAccountToken) or give a kubeconfig",
            token.display()
        )));
    }
    let ca = read(&dir.join("ca.crt"))?;
    let namespace = std::fs::read_to_string(dir.join("namespace"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    Ok(Access {
        server: format!("https://{host}:{port}"),
        ca_pem: Some(ca),
        insecure: false,
        client: None,
        auth: Auth::TokenFile(token),
        namespace,
        source: format!("in-cluster service account ({})", dir.display()),
    })
}

/// Reads a token file (trimmed).
pub fn read_token(path: &Path) -> Result<Secret, KubeconfigError> {
    let raw = read(path)?;
    let t = String::from_utf8_lossy(&raw).trim().to_string();
    if t.is_empty() {
        return Err(KubeconfigError::Missing(format!(
            "token file {} is empty",
            path.display()
        )));
    }
    Ok(Secret::from_str_value(&t))
}

// ---- the YAML reader --------------------------------------------------------

/// Parses a kubeconfig (JSON, or the YAML kubectl writes) into a JSON value
/// (every scalar a string, `true`/`false` of `insecure-skip-tls-verify` included).
pub fn parse(text: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(text).map_err(|_| "not UTF-8".to_string())?;
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        return crate::parse::json(trimmed.as_bytes(), &crate::parse::Limits::ANSWER)
            .map_err(|e| e.to_string());
    }
    let mut lines = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') || content == "---" {
            continue;
        }
        if line.starts_with('\t') {
            return Err(format!("line {}: tab indentation", n + 1));
        }
        if content == "..." {
            break;
        }
        lines.push(Line {
            n: n + 1,
            indent: line.len() - content.len(),
            text: content.to_string(),
        });
    }
    if lines.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let mut p = Parser { lines, at: 0 };
    let indent = p.lines[0].indent;
    let v = p.block(indent)?;
    if p.at < p.lines.len() {
        return Err(format!("line {}: unexpected indentation", p.lines[p.at].n));
    }
    Ok(v)
}

struct Line {
    n: usize,
    indent: usize,
    text: String,
}

struct Parser {
    lines: Vec<Line>,
    at: usize,
}

impl Parser {
    fn block(&mut self, indent: usize) -> Result<Value, String> {
        let first = &self.lines[self.at];
        if first.text == "-" || first.text.starts_with("- ") {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        }
    }

    fn sequence(&mut self, indent: usize) -> Result<Value, String> {
        let mut out = Vec::new();
        while self.at < self.lines.len() {
            let l = &self.lines[self.at];
            if l.indent != indent || !(l.text == "-" || l.text.starts_with("- ")) {
                break;
            }
            let rest = l.text[1..].trim_start().to_string();
            let n = l.n;
            if rest.is_empty() {
                self.at += 1;
                out.push(self.nested(indent, n)?);
            } else if split_key(&rest).is_some() && !rest.starts_with(['"', '\'', '{', '[']) {
                // "- key: value": a mapping whose first key sits after the dash.
                let col = indent + (l.text.len() - rest.len());
                self.lines[self.at] = Line {
                    n,
                    indent: col,
                    text: rest,
                };
                out.push(self.mapping(col)?);
            } else {
                self.at += 1;
                out.push(scalar(&rest, n)?);
            }
        }
        Ok(Value::Array(out))
    }

    /// The value of a key or dash whose text was empty: a deeper block, a
    /// sequence at the same indentation (for keys), or null.
    fn nested(&mut self, indent: usize, n: usize) -> Result<Value, String> {
        match self.lines.get(self.at) {
            Some(next) if next.indent > indent => {
                let i = next.indent;
                self.block(i)
            }
            Some(next)
                if next.indent == indent && (next.text == "-" || next.text.starts_with("- ")) =>
            {
                let _ = n;
                self.sequence(indent)
            }
            _ => Ok(Value::Null),
        }
    }

    fn mapping(&mut self, indent: usize) -> Result<Value, String> {
        let mut out = Map::new();
        while self.at < self.lines.len() {
            let l = &self.lines[self.at];
            if l.indent != indent || l.text == "-" || l.text.starts_with("- ") {
                if l.indent > indent {
                    return Err(format!("line {}: unexpected indentation", l.n));
                }
                break;
            }
            let n = l.n;
            let (k, v) =
                split_key(&l.text).ok_or_else(|| format!("line {n}: expected 'key: value'"))?;
            let key = match scalar(&k, n)? {
                Value::String(s) => s,
                _ => return Err(format!("line {n}: a key must be a scalar")),
            };
            self.at += 1;
            let value = if v.is_empty() {
                let nested = self.nested(indent, n)?;
                // A sequence at the key's own indentation belongs to the key.
                nested
            } else {
                scalar(&v, n)?
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Splits `key: value` (or `key:`) at the first colon outside quotes that is
/// followed by a space or the end.
fn split_key(s: &str) -> Option<(String, String)> {
    let b = s.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(b'"') if c == b'\\' => i += 1,
            Some(_) => {}
            None if (c == b'"' || c == b'\'') && i == 0 => quote = Some(c),
            None if c == b':' && (i + 1 == b.len() || b[i + 1] == b' ') => {
                return Some((s[..i].trim().to_string(), s[i + 1..].trim().to_string()));
            }
            None if c == b'{' || c == b'[' => return None,
            None => {}
        }
        i += 1;
    }
    None
}

fn scalar(s: &str, n: usize) -> Result<Value, String> {
    let s = s.trim();
    match s.as_bytes().first() {
        Some(b'"') => {
            let end = closing(s, b'"').ok_or_else(|| format!("line {n}: unterminated string"))?;
            let mut out = String::new();
            let mut it = s[1..end].chars();
            while let Some(c) = it.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match it.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    Some('/') => out.push('/'),
                    Some(o) => return Err(format!("line {n}: unsupported escape \\{o}")),
                    None => return Err(format!("line {n}: unterminated string")),
                }
            }
            rest_is_comment(&s[end + 1..], n)?;
            Ok(Value::String(out))
        }
        Some(b'\'') => {
            let end = closing(s, b'\'').ok_or_else(|| format!("line {n}: unterminated string"))?;
            rest_is_comment(&s[end + 1..], n)?;
            Ok(Value::String(s[1..end].replace("''", "'")))
        }
        Some(b'{') | Some(b'[') => flow(s, n),
        Some(b'&') | Some(b'*') | Some(b'!') | Some(b'|') | Some(b'>') => Err(format!(
            "line {n}: anchors, aliases, tags and block scalars are not supported in a kubeconfig"
        )),
        _ => {
            let v = match s.find(" #") {
                Some(i) => s[..i].trim_end(),
                None => s,
            };
            Ok(match v {
                "" | "~" | "null" => Value::Null,
                _ => Value::String(v.to_string()),
            })
        }
    }
}

/// The index of the quote closing the string that starts at 0.
fn closing(s: &str, q: u8) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        if q == b'"' && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == q {
            if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

fn rest_is_comment(rest: &str, n: usize) -> Result<(), String> {
    let r = rest.trim();
    if r.is_empty() || r.starts_with('#') {
        Ok(())
    } else {
        Err(format!("line {n}: text after a quoted string"))
    }
}

/// A one-line flow collection of scalars: `{}`, `[]`, `{a: b, c: d}`, `[a, b]`.
fn flow(s: &str, n: usize) -> Result<Value, String> {
    let s = match s.find(" #") {
        Some(i) if !s[..i].contains(['"', '\'']) => s[..i].trim_end(),
        _ => s,
    };
    let (open, close) = (s.as_bytes()[0], *s.as_bytes().last().unwrap_or(&0));
    if !((open == b'{' && close == b'}') || (open == b'[' && close == b']')) || s.len() < 2 {
        return Err(format!(
            "line {n}: a flow collection must close on its line"
        ));
    }
    let inner = s[1..s.len() - 1].trim();
    if inner.contains(['{', '[', '"', '\'']) {
        return Err(format!(
            "line {n}: nested or quoted flow collections are not supported"
        ));
    }
    let parts = inner.split(',').map(str::trim).filter(|p| !p.is_empty());
    if open == b'[' {
        return parts
            .map(|p| scalar(p, n))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    let mut m = Map::new();
    for p in parts {
        let (k, v) = split_key(p)
            .ok_or_else(|| format!("line {n}: expected 'key: value' in a flow mapping"))?;
        m.insert(k, scalar(&v, n)?);
    }
    Ok(Value::Object(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const KUBECTL: &str = r#"apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Zm9v
    server: https://api.ocp.example:6443
  name: ocp
- cluster:
    insecure-skip-tls-verify: true
    server: "https://10.0.0.1:6443/"
  name: lab
contexts:
- context:
    cluster: ocp
    namespace: guests
    user: fencer/ocp
  name: fencing
- context: {cluster: lab, user: admin}
  name: lab
current-context: fencing
kind: Config
preferences: {}
users:
- name: fencer/ocp
  user:
    token: sha256~abc  # a comment
- name: admin
  user:
    username: 'ad''min'
    password: "p\"w"
"#;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        p
    }

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fk-kubeconfig-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn reads_what_kubectl_writes() {
        let v = parse(KUBECTL.as_bytes()).unwrap();
        assert_eq!(v["current-context"], "fencing");
        assert_eq!(
            v["clusters"][1]["cluster"]["server"],
            "https://10.0.0.1:6443/"
        );
        assert_eq!(
            v["clusters"][1]["cluster"]["insecure-skip-tls-verify"],
            "true"
        );
        assert_eq!(v["contexts"][1]["context"]["cluster"], "lab");
        assert_eq!(v["users"][0]["user"]["token"], "sha256~abc");
        assert_eq!(v["users"][1]["user"]["username"], "ad'min");
        assert_eq!(v["users"][1]["user"]["password"], "p\"w");
        assert_eq!(v["preferences"], serde_json::json!({}));
        // JSON is a kubeconfig too.
        let j = parse(br#"{"current-context":"x","clusters":[]}"#).unwrap();
        assert_eq!(j["current-context"], "x");
    }

    #[test]
    fn refuses_what_it_cannot_read_with_the_line() {
        for (bad, want) in [
            ("a: &x 1\n", "line 1"),
            ("a:\n  b: |\n    x\n", "line 2"),
            ("a: b\n    c: d\n", "line 2"),
            ("a: \"open\n", "line 1"),
            ("\ta: b\n", "tab"),
        ] {
            let e = parse(bad.as_bytes()).unwrap_err();
            assert!(e.contains(want), "{bad:?}: {e}");
        }
    }

    #[test]
    fn selects_the_context_cluster_and_user() {
        let d = tmp("select");
        let p = write(&d, "config", KUBECTL);
        let sel = Selection {
            kubeconfig: Some(p.clone()),
            context: None,
        };
        let a = resolve(&sel, &Env::default()).unwrap();
        assert_eq!(a.server, "https://api.ocp.example:6443");
        assert_eq!(a.ca_pem.as_deref(), Some(&b"foo"[..]));
        assert_eq!(a.namespace.as_deref(), Some("guests"));
        assert_eq!(a.auth, Auth::Token(Secret::from_str_value("sha256~abc")));
        assert!(!a.insecure);
        assert!(a.source.contains("context fencing"), "{}", a.source);
        let sel = Selection {
            kubeconfig: Some(p),
            context: Some("lab".into()),
        };
        let a = resolve(&sel, &Env::default()).unwrap();
        assert_eq!(a.server, "https://10.0.0.1:6443");
        assert!(a.insecure);
        assert_eq!(a.namespace, None);
        assert!(matches!(a.auth, Auth::Basic(_)));
        // The secret never prints.
        assert!(!format!("{a:?}").contains("sha256~abc"));
    }

    #[test]
    fn kubeconfig_lists_merge_first_wins_and_paths_are_relative_to_their_file() {
        let d = tmp("merge");
        write(&d, "ca.pem", "CA");
        write(&d, "tok", "  rotated-token\n");
        let first = write(
            &d,
            "one",
            "current-context: a\nclusters:\n- name: c\n  cluster:\n    server: https://one:1\n    certificate-authority: ca.pem\nusers:\n- name: u\n  user:\n    tokenFile: tok\n",
        );
        let second = write(
            &d,
            "two",
            "current-context: b\ncontexts:\n- name: a\n  context:\n    cluster: c\n    user: u\nclusters:\n- name: c\n  cluster:\n    server: https://two:2\n",
        );
        let env = Env::from_pairs(&[(
            "KUBECONFIG",
            &format!("{}:/nonexistent/x:{}", first.display(), second.display()),
        )]);
        let a = resolve(&Selection::default(), &env).unwrap();
        assert_eq!(a.server, "https://one:1");
        assert_eq!(a.ca_pem.as_deref(), Some(&b"CA"[..]));
        assert_eq!(a.auth, Auth::TokenFile(d.join("tok")));
        assert_eq!(
            read_token(&d.join("tok")).unwrap(),
            Secret::from_str_value("rotated-token")
        );
        // A missing context is named.
        let sel = Selection {
            kubeconfig: None,
            context: Some("nope".into()),
        };
        let e = resolve(&sel, &env).unwrap_err();
        assert!(e.to_string().contains("no context 'nope'"), "{e}");
    }

    #[test]
    fn credential_plugins_are_refused_by_name() {
        let d = tmp("exec");
        let p = write(
            &d,
            "config",
            "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: https://h:1}\nusers:\n- name: u\n  user:\n    exec:\n      command: oc\n",
        );
        let e = resolve(
            &Selection {
                kubeconfig: Some(p),
                context: None,
            },
            &Env::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("exec plugin"), "{e}");
    }

    #[test]
    fn in_cluster_is_the_fallback() {
        let d = tmp("sa");
        write(&d, "token", "sa-token\n");
        write(&d, "ca.crt", "CA");
        write(&d, "namespace", "fencing\n");
        let dir = d.display().to_string();
        let env = Env::from_pairs(&[
            ("HOME", "/nonexistent"),
            ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
            ("KUBERNETES_SERVICE_PORT", "443"),
            ("FENCEKIT_SERVICEACCOUNT_DIR", &dir),
        ]);
        let a = resolve(&Selection::default(), &env).unwrap();
        assert_eq!(a.server, "https://10.96.0.1:443");
        assert_eq!(a.auth, Auth::TokenFile(d.join("token")));
        assert_eq!(a.namespace.as_deref(), Some("fencing"));
        let e = resolve(
            &Selection::default(),
            &Env::from_pairs(&[("HOME", "/nonexistent")]),
        );
        assert_eq!(e.unwrap_err(), KubeconfigError::Nothing);
    }

    #[test]
    fn never_panics_on_odd_bytes() {
        let pieces = [
            "a:", " b", "- ", "-", ": ", "\"", "'", "{", "}", "[", "]", "#", "\n", "  ", "x", "\\",
            "é", ",", "...", "---", "\t",
        ];
        // Every text of up to four pieces, and a few long ones.
        let mut texts = Vec::new();
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    texts.push(format!("{a}{b}{c}"));
                    for d in ["\n", ": ", "- "] {
                        texts.push(format!("{a}{b}{d}{c}"));
                    }
                }
            }
        }
        texts.push("a:\n- b:\n  - c: [x, y]\n  -\n- 'd'\n".repeat(50));
        for t in &texts {
            let _ = parse(t.as_bytes());
        }
        assert!(parse(&[0xff, 0xfe]).is_err());
    }
}
