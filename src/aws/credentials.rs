//! Where the keys come from: the credential chain, in the SDKs' order.
//!
//! 1. explicit keys (`--access-key`/`--secret-key`; the agent also takes
//!    them from stdin);
//! 2. the environment: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//!    `AWS_SESSION_TOKEN`;
//! 3. the shared files: `AWS_SHARED_CREDENTIALS_FILE` (`~/.aws/credentials`)
//!    and `AWS_CONFIG_FILE` (`~/.aws/config`), profile `AWS_PROFILE` (or
//!    `default`): static keys, or `role_arn` + `web_identity_token_file`;
//! 4. web identity: `AWS_ROLE_ARN` + `AWS_WEB_IDENTITY_TOKEN_FILE` →
//!    STS `AssumeRoleWithWebIdentity` (EKS IRSA, OpenShift in STS mode);
//! 5. the instance metadata service (IMDSv2, [`super::imds`]): the
//!    instance profile's role.
//!
//! The first source that has keys is used; one that is half there (an
//! access key without its secret, a named profile that does not exist) is
//! an error rather than a reason to go on, so a mistake never silently
//! picks up other keys. Not supported (an error naming it): profiles with
//! `source_profile`, `credential_process` or SSO, and container credentials.

use super::config::{Endpoint, Env, GivenKeys};
use super::http::{Http, Request};
use super::imds::{Imds, ImdsError};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::secret::Secret;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Keys to sign with, and where they came from.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// The access key ID.
    pub access_key_id: String,
    /// The secret access key.
    pub secret: Secret,
    /// The session token of temporary credentials.
    pub session_token: Option<Secret>,
    /// The source, for the record (never a secret).
    pub source: String,
}

impl Credentials {
    /// The access key ID as shown in records: its last four characters.
    pub fn key_hint(&self) -> String {
        let n = self.access_key_id.chars().count();
        let tail: String = self
            .access_key_id
            .chars()
            .skip(n.saturating_sub(4))
            .collect();
        format!("…{tail}")
    }
}

/// Why no keys could be had.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// Nothing in the chain has keys.
    #[error(
        "no AWS credentials: none given (--access-key/--secret-key), none in the environment \
         (AWS_ACCESS_KEY_ID), no profile with keys, no web identity (AWS_ROLE_ARN + \
         AWS_WEB_IDENTITY_TOKEN_FILE), and {imds}"
    )]
    Nothing {
        /// What the metadata service said.
        imds: String,
    },
    /// `AWS_ACCESS_KEY_ID` without `AWS_SECRET_ACCESS_KEY` or the reverse.
    #[error("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")]
    HalfEnv,
    /// A profile named by `AWS_PROFILE` that no file has.
    #[error("profile '{0}' (AWS_PROFILE) is in neither {1}")]
    NoProfile(String, String),
    /// A profile that has a key ID without its secret.
    #[error("profile '{0}' has aws_access_key_id without aws_secret_access_key (or the reverse)")]
    HalfProfile(String),
    /// A profile whose credentials come from a source fencekit does not support.
    #[error("profile '{0}' gets its credentials through {1}, which fencekit does not support; give keys, a web identity or an instance profile")]
    Unsupported(String, &'static str),
    /// The web identity token file cannot be read.
    #[error("cannot read the web identity token file {path}: {why}")]
    TokenFile { path: String, why: String },
    /// `AWS_ROLE_ARN` without `AWS_WEB_IDENTITY_TOKEN_FILE` or the reverse.
    #[error("AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE must be set together")]
    HalfWebIdentity,
    /// STS refused or failed.
    #[error("web identity: {0}")]
    Sts(DriverError),
    /// The metadata service answered, but gave no usable keys.
    #[error("the instance metadata service gave no credentials: {0}")]
    Imds(String),
}

impl CredentialError {
    /// The engine's class: a refusal by STS keeps its own, the rest is
    /// configuration (nothing usable was given).
    pub fn into_driver(self) -> DriverError {
        let kind = match &self {
            CredentialError::Sts(e) => e.kind,
            _ => ErrorKind::Config,
        };
        DriverError::new(kind, Stage::Authenticate, self.to_string())
    }
}

/// Largest file read (credentials, config, token).
const MAX_FILE: u64 = 1 << 20;

fn read_small(path: &std::path::Path) -> std::io::Result<zeroize::Zeroizing<String>> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE)
        .read_to_end(&mut buf)?;
    let s = String::from_utf8(buf)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"))?;
    Ok(zeroize::Zeroizing::new(s))
}

/// An INI file's sections: name → key → value. `config` names its
/// sections `[profile NAME]` (and `[default]`).
fn sections(text: &str, config: bool) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let name = name.trim();
            current = if config {
                match name.strip_prefix("profile ") {
                    Some(n) => Some(n.trim().to_string()),
                    None if name == "default" => Some(name.to_string()),
                    None => None,
                }
            } else {
                Some(name.to_string())
            };
            continue;
        }
        if let (Some(sec), Some((k, v))) = (&current, l.split_once('=')) {
            out.entry(sec.clone())
                .or_default()
                .insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    out
}

/// The shared files' paths.
fn files(env: &Env) -> (Option<PathBuf>, Option<PathBuf>) {
    let home = env.get("HOME").map(PathBuf::from);
    let creds = env
        .get("AWS_SHARED_CREDENTIALS_FILE")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".aws/credentials")));
    let config = env
        .get("AWS_CONFIG_FILE")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".aws/config")));
    (creds, config)
}

/// The chosen profile's settings from both files (the credentials file's
/// win), and whether it exists at all. `None`: neither file is readable.
pub fn profile(env: &Env) -> (String, Option<BTreeMap<String, String>>, String) {
    let name = env
        .get("AWS_PROFILE")
        .or_else(|| env.get("AWS_DEFAULT_PROFILE"))
        .unwrap_or("default")
        .to_string();
    let (creds, config) = files(env);
    let mut found: Option<BTreeMap<String, String>> = None;
    let mut names = Vec::new();
    for (path, is_config) in [(config, true), (creds, false)] {
        let Some(path) = path else { continue };
        names.push(path.display().to_string());
        let Ok(text) = read_small(&path) else {
            continue;
        };
        if let Some(sec) = sections(&text, is_config).remove(&name) {
            found.get_or_insert_with(BTreeMap::new).extend(sec);
        }
    }
    (name, found, names.join(" nor "))
}

/// What the rest of the chain needs: the client, where STS and IMDS are,
/// the region, the deadline.
pub struct Context<'a> {
    /// The driver's HTTP client.
    pub http: &'a mut Http,
    /// The environment snapshot.
    pub env: &'a Env,
    /// The region (for STS).
    pub region: &'a str,
    /// The metadata service client (`Err`: disabled).
    pub imds: &'a mut Result<Imds, ImdsError>,
    /// Bound on each request.
    pub request_timeout: Duration,
    /// The step deadline.
    pub deadline: Option<Instant>,
}

/// Resolves the keys: the chain, in order (see the module documentation).
pub async fn resolve(given: &GivenKeys, cx: Context<'_>) -> Result<Credentials, CredentialError> {
    if let GivenKeys::Keys {
        access_key_id,
        secret,
    } = given
    {
        return Ok(Credentials {
            access_key_id: access_key_id.clone(),
            secret: secret.clone(),
            session_token: None,
            source: "the keys given (--access-key/--secret-key)".into(),
        });
    }
    let env = cx.env;
    match (
        env.get("AWS_ACCESS_KEY_ID"),
        env.get("AWS_SECRET_ACCESS_KEY"),
    ) {
        (Some(id), Some(secret)) => {
            return Ok(Credentials {
                access_key_id: id.to_string(),
                secret: Secret::from_str_value(secret),
                session_token: env.get("AWS_SESSION_TOKEN").map(Secret::from_str_value),
                source: "the environment (AWS_ACCESS_KEY_ID)".into(),
            })
        }
        (None, None) => {}
        _ => return Err(CredentialError::HalfEnv),
    }
    let (name, prof, paths) = profile(env);
    let named = env.get("AWS_PROFILE").is_some() || env.get("AWS_DEFAULT_PROFILE").is_some();
    match prof {
        None if named => return Err(CredentialError::NoProfile(name, paths)),
        None => {}
        Some(p) => {
            match (p.get("aws_access_key_id"), p.get("aws_secret_access_key")) {
                (Some(id), Some(secret)) if !id.is_empty() && !secret.is_empty() => {
                    return Ok(Credentials {
                        access_key_id: id.clone(),
                        secret: Secret::from_str_value(secret),
                        session_token: p
                            .get("aws_session_token")
                            .filter(|t| !t.is_empty())
                            .map(|t| Secret::from_str_value(t)),
                        source: format!("profile '{name}' of the shared files"),
                    })
                }
                (None, None) => {}
                _ => return Err(CredentialError::HalfProfile(name)),
            }
            if let (Some(role), Some(file)) = (p.get("role_arn"), p.get("web_identity_token_file"))
            {
                let session = p.get("role_session_name").cloned();
                return web_identity(role, file, session, &format!("profile '{name}'"), cx).await;
            }
            for (key, what) in [
                ("source_profile", "source_profile (role chaining)"),
                ("credential_source", "credential_source"),
                ("credential_process", "credential_process"),
                ("sso_start_url", "SSO"),
                ("sso_session", "SSO"),
            ] {
                if p.contains_key(key) {
                    return Err(CredentialError::Unsupported(name, what));
                }
            }
        }
    }
    match (
        env.get("AWS_ROLE_ARN"),
        env.get("AWS_WEB_IDENTITY_TOKEN_FILE"),
    ) {
        (Some(role), Some(file)) => {
            let session = env.get("AWS_ROLE_SESSION_NAME").map(str::to_string);
            let (role, file) = (role.to_string(), file.to_string());
            return web_identity(&role, &file, session, "AWS_ROLE_ARN", cx).await;
        }
        (None, None) => {}
        _ => return Err(CredentialError::HalfWebIdentity),
    }
    instance_profile(cx).await
}

/// STS `AssumeRoleWithWebIdentity` with the token in `file` (unsigned, as the
/// API is called).
async fn web_identity(
    role: &str,
    file: &str,
    session: Option<String>,
    from: &str,
    cx: Context<'_>,
) -> Result<Credentials, CredentialError> {
    let token = read_small(std::path::Path::new(file)).map_err(|e| CredentialError::TokenFile {
        path: file.to_string(),
        why: e.to_string(),
    })?;
    let token = token.trim();
    if token.is_empty() {
        return Err(CredentialError::TokenFile {
            path: file.to_string(),
            why: "it is empty".into(),
        });
    }
    let endpoint = match cx.env.endpoint("sts") {
        Some(e) => Endpoint::parse(e).map_err(|e| {
            CredentialError::Sts(DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                format!("AWS_ENDPOINT_URL_STS: {e}"),
            ))
        })?,
        None => Endpoint::default_for("sts", cx.region),
    };
    let session = session.unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        format!("fencekit-{t}")
    });
    let body = zeroize::Zeroizing::new(super::sigv4::canonical_query(&[
        ("Action", "AssumeRoleWithWebIdentity"),
        ("Version", "2011-06-15"),
        ("RoleArn", role),
        ("RoleSessionName", &session),
        ("WebIdentityToken", token),
    ]));
    let peer = format!("STS at {}", endpoint.url);
    // An endpoint that echoes the request must not print the token.
    cx.http.remember(token.as_bytes());
    let r = Request {
        method: reqwest::Method::POST,
        url: &format!("{}/", endpoint.url),
        headers: vec![(
            reqwest::header::CONTENT_TYPE,
            reqwest::header::HeaderValue::from_static(
                "application/x-www-form-urlencoded; charset=utf-8",
            ),
        )],
        body: Some(body.as_bytes().to_vec()),
        what: "AssumeRoleWithWebIdentity",
        peer: &peer,
    };
    let reply = cx
        .http
        .send(&r, Stage::Authenticate, cx.request_timeout, cx.deadline)
        .await
        .map_err(CredentialError::Sts)?;
    if !reply.ok() {
        let e = super::model::api_error(reply.status, reply.scrubbed().as_bytes());
        return Err(CredentialError::Sts(e.classify(
            Stage::Authenticate,
            &format!("AssumeRoleWithWebIdentity for {role}"),
        )));
    }
    let (id, secret, token) = super::model::assumed_role(&reply.body).map_err(|e| {
        CredentialError::Sts(DriverError::new(
            ErrorKind::Protocol,
            Stage::Authenticate,
            format!("STS: {e}"),
        ))
    })?;
    Ok(Credentials {
        access_key_id: id,
        secret,
        session_token: Some(token),
        source: format!("web identity ({from}: role {role}, through {peer})"),
    })
}

/// The instance profile's keys from the metadata service.
async fn instance_profile(cx: Context<'_>) -> Result<Credentials, CredentialError> {
    let imds = match cx.imds {
        Ok(i) => i,
        Err(e) => {
            return Err(CredentialError::Nothing {
                imds: e.to_string(),
            })
        }
    };
    const ROLES: &str = "/latest/meta-data/iam/security-credentials/";
    let roles = match imds.get(cx.http, ROLES, cx.deadline).await {
        Ok(r) => r,
        Err(e @ ImdsError::Unreachable(..)) => {
            return Err(CredentialError::Nothing {
                imds: e.to_string(),
            })
        }
        Err(ImdsError::Status { status: 404, .. }) => {
            return Err(CredentialError::Nothing {
                imds: "the instance has no instance profile (IAM role)".into(),
            })
        }
        Err(e) => return Err(CredentialError::Imds(e.to_string())),
    };
    let role = roles.lines().next().unwrap_or("").trim().to_string();
    if role.is_empty() || role.contains('/') {
        return Err(CredentialError::Imds(
            "it names no role in iam/security-credentials/".into(),
        ));
    }
    let doc = imds
        .get(cx.http, &format!("{ROLES}{role}"), cx.deadline)
        .await
        .map_err(|e| CredentialError::Imds(e.to_string()))?;
    let v: serde_json::Value = crate::parse::json(doc.as_bytes(), &crate::parse::Limits::ANSWER)
        .map_err(|_| CredentialError::Imds("the role's credentials are not JSON".into()))?;
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).filter(|s| !s.is_empty());
    if field("Code").is_some_and(|c| c != "Success") {
        return Err(CredentialError::Imds(format!(
            "the role's credentials have Code {}",
            super::model::printable(field("Code").unwrap_or(""), 60)
        )));
    }
    match (field("AccessKeyId"), field("SecretAccessKey")) {
        (Some(id), Some(secret)) => Ok(Credentials {
            access_key_id: id.to_string(),
            secret: Secret::from_str_value(secret),
            session_token: field("Token").map(Secret::from_str_value),
            source: format!(
                "the instance metadata service (instance profile role {role} at {})",
                imds.endpoint()
            ),
        }),
        _ => Err(CredentialError::Imds(
            "the role's credentials lack AccessKeyId or SecretAccessKey".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(given: GivenKeys, env: &Env) -> Result<Credentials, CredentialError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut http = Http::new(false, &Default::default(), None).unwrap();
            let mut imds = Err(ImdsError::Disabled);
            resolve(
                &given,
                Context {
                    http: &mut http,
                    env,
                    region: "us-east-1",
                    imds: &mut imds,
                    request_timeout: Duration::from_secs(1),
                    deadline: None,
                },
            )
            .await
        })
    }

    #[test]
    fn explicit_keys_win_then_the_environment() {
        let env = Env::from_pairs(&[
            ("AWS_ACCESS_KEY_ID", "AKIAENV0000000001234"),
            ("AWS_SECRET_ACCESS_KEY", "envsecret"),
            ("AWS_SESSION_TOKEN", "tok"),
        ]);
        let c = run(
            GivenKeys::Keys {
                access_key_id: "AKIAGIVEN".into(),
                secret: Secret::from_str_value("s"),
            },
            &env,
        )
        .unwrap();
        assert_eq!(c.access_key_id, "AKIAGIVEN");
        assert!(c.session_token.is_none());
        let c = run(GivenKeys::Chain, &env).unwrap();
        assert_eq!(c.access_key_id, "AKIAENV0000000001234");
        assert_eq!(c.session_token.unwrap().expose(), b"tok");
        assert_eq!(c.source, "the environment (AWS_ACCESS_KEY_ID)");
        assert_eq!(
            Credentials {
                access_key_id: "AKIAENV0000000001234".into(),
                secret: Secret::default(),
                session_token: None,
                source: String::new()
            }
            .key_hint(),
            "…1234"
        );
        let half = Env::from_pairs(&[("AWS_ACCESS_KEY_ID", "A")]);
        assert!(matches!(
            run(GivenKeys::Chain, &half),
            Err(CredentialError::HalfEnv)
        ));
    }

    #[test]
    fn profiles_from_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let creds = dir.path().join("credentials");
        let config = dir.path().join("config");
        std::fs::write(
            &creds,
            "[default]\naws_access_key_id = AKIADEF\naws_secret_access_key = d\n\
             # comment\n[ops]\naws_access_key_id=AKIAOPS\naws_secret_access_key=o\n\
             aws_session_token = t\n[half]\naws_access_key_id = X\n",
        )
        .unwrap();
        std::fs::write(
            &config,
            "[default]\nregion = eu-west-1\n[profile chained]\nrole_arn = r\nsource_profile = ops\n",
        )
        .unwrap();
        let env = |profile: Option<&str>| {
            let mut v = vec![
                ("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap()),
                ("AWS_CONFIG_FILE", config.to_str().unwrap()),
            ];
            if let Some(p) = profile {
                v.push(("AWS_PROFILE", p));
            }
            Env::from_pairs(&v)
        };
        let c = run(GivenKeys::Chain, &env(None)).unwrap();
        assert_eq!(c.access_key_id, "AKIADEF");
        assert_eq!(profile(&env(None)).1.unwrap()["region"], "eu-west-1");
        let c = run(GivenKeys::Chain, &env(Some("ops"))).unwrap();
        assert_eq!(
            (c.access_key_id.as_str(), c.session_token.unwrap().expose()),
            ("AKIAOPS", &b"t"[..])
        );
        assert!(matches!(
            run(GivenKeys::Chain, &env(Some("nope"))),
            Err(CredentialError::NoProfile(..))
        ));
        assert!(matches!(
            run(GivenKeys::Chain, &env(Some("half"))),
            Err(CredentialError::HalfProfile(_))
        ));
        assert!(matches!(
            run(GivenKeys::Chain, &env(Some("chained"))),
            Err(CredentialError::Unsupported(
                _,
                "source_profile (role chaining)"
            ))
        ));
    }

    #[test]
    fn nothing_anywhere_says_what_was_tried() {
        let e = run(
            GivenKeys::Chain,
            &Env::from_pairs(&[("HOME", "/nonexistent")]),
        )
        .unwrap_err();
        let t = e.to_string();
        assert!(
            t.starts_with("no AWS credentials") && t.contains("disabled"),
            "{t}"
        );
        assert_eq!(e.into_driver().kind, ErrorKind::Config);
        let half = Env::from_pairs(&[
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
            ("HOME", "/nonexistent"),
        ]);
        assert!(matches!(
            run(GivenKeys::Chain, &half),
            Err(CredentialError::HalfWebIdentity)
        ));
        let missing = Env::from_pairs(&[
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token"),
            ("HOME", "/nonexistent"),
        ]);
        assert!(matches!(
            run(GivenKeys::Chain, &missing),
            Err(CredentialError::TokenFile { .. })
        ));
    }
}
