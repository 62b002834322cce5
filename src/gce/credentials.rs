//! Access tokens for Compute Engine, as Google's libraries find them:
//!
//! * a service-account key file (`--serviceaccount`, or the file
//!   `GOOGLE_APPLICATION_CREDENTIALS` names): a JWT naming the account,
//!   the cloud-platform scope and the key file's `token_uri`, signed RS256
//!   with the file's key ([`crate::http::jwt`]), exchanged at `token_uri`
//!   for an access token (the JWT bearer grant, RFC 7523);
//! * the metadata server: the instance's service account's token
//!   (`Metadata-Flavor: Google`, never through a proxy; its host from
//!   `GCE_METADATA_HOST` as Google's libraries read it).
//!
//! A token is used until five minutes before it expires, and fetched again
//! after the API refuses it (401).

use super::config::{Auth, Env};
use super::model;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::jwt::RsaSigner;
use crate::http::{Client, Patience, Request};
use crate::secret::Secret;
use reqwest::Method;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The scope every token asks for.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// The token endpoint when a key file names none.
pub const TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// How long a metadata server request may take (it answers on the host).
pub const METADATA_TIMEOUT: Duration = Duration::from_secs(3);
/// A token is fetched again this long before it expires.
const MARGIN: Duration = Duration::from_secs(300);

/// Where a token comes from.
pub enum Source {
    /// A service-account key.
    Key {
        /// `client_email`.
        email: String,
        /// `private_key_id` (the JWT's `kid`).
        key_id: Option<String>,
        /// `token_uri`.
        token_uri: String,
        /// The key.
        signer: Box<RsaSigner>,
        /// The file, for messages.
        path: PathBuf,
    },
    /// The metadata server's service account.
    Metadata,
}

fn config(message: String) -> DriverError {
    DriverError::new(ErrorKind::Config, Stage::Authenticate, message)
}

impl Source {
    /// The source the configuration names, or application default
    /// credentials' choice.
    pub fn choose(auth: &Auth, env: &Env) -> Result<Source, DriverError> {
        match auth {
            Auth::KeyFile(p) => key_file(p),
            Auth::Metadata => Ok(Source::Metadata),
            Auth::Default => match env.get("GOOGLE_APPLICATION_CREDENTIALS") {
                Some(p) => key_file(Path::new(p)),
                None => Ok(Source::Metadata),
            },
        }
    }

    /// For the timeline (never a secret).
    pub fn describe(&self) -> String {
        match self {
            Source::Key { email, path, .. } => {
                format!("service account {email} (key file {})", path.display())
            }
            Source::Metadata => "the metadata server's service account".into(),
        }
    }
}

/// A service-account key file's account and key.
pub fn key_file(path: &Path) -> Result<Source, DriverError> {
    let shown = path.display();
    let text = zeroize::Zeroizing::new(std::fs::read(path).map_err(|e| {
        config(format!(
            "cannot read the service-account key file {shown}: {e}"
        ))
    })?);
    let v: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|_| config(format!("the service-account key file {shown} is not JSON")))?;
    let get = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    match get("type").as_deref() {
        Some("service_account") => {}
        Some(t) => {
            return Err(config(format!(
                "{shown} holds '{}' credentials; fencekit takes a service-account key \
                 (type service_account) or the metadata server",
                model::printable(t, 40)
            )))
        }
        None => return Err(config(format!("{shown} has no credential type"))),
    }
    let email =
        get("client_email").ok_or_else(|| config(format!("{shown} has no client_email")))?;
    let pem = zeroize::Zeroizing::new(
        get("private_key").ok_or_else(|| config(format!("{shown} has no private_key")))?,
    );
    let signer = RsaSigner::from_pem(pem.as_bytes()).ok_or_else(|| {
        config(format!(
            "the private_key in {shown} is not an RSA key (PEM)"
        ))
    })?;
    let token_uri = get("token_uri").unwrap_or_else(|| TOKEN_URI.to_string());
    if !token_uri.starts_with("https://") {
        return Err(config(format!(
            "the token_uri in {shown} is not an https URL: the signed assertion is sent only over TLS"
        )));
    }
    Ok(Source::Key {
        email,
        key_id: get("private_key_id"),
        token_uri,
        signer: Box::new(signer),
        path: path.to_path_buf(),
    })
}

/// A bearer token and until when it is used.
pub struct Token {
    /// The token.
    pub value: Secret,
    /// When to fetch a new one.
    pub renew_at: Instant,
}

/// What a token request needs.
pub struct Login<'a> {
    /// The client for the token endpoint (the API's trust and proxy).
    pub http: &'a mut Client,
    /// The client for the metadata server (direct).
    pub metadata: &'a mut Client,
    /// The metadata server's base URL.
    pub metadata_base: &'a str,
    /// Each request's bound.
    pub timeout: Duration,
    /// The action's deadline.
    pub deadline: Option<Instant>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

fn token_of(body: &[u8], what: &str) -> Result<Token, DriverError> {
    let (t, secs) = model::token(body).map_err(|e| {
        DriverError::new(
            ErrorKind::Protocol,
            Stage::Authenticate,
            format!("{what}: {e}"),
        )
    })?;
    let life = Duration::from_secs(secs);
    let renew = match life > MARGIN * 2 {
        true => life - MARGIN,
        false => life / 2,
    };
    Ok(Token {
        value: Secret::from_str_value(&t),
        renew_at: Instant::now() + renew,
    })
}

/// The signed assertion of a key for `now` (valid one hour).
pub fn assertion(source: &Source, now: u64) -> Option<String> {
    let Source::Key {
        email,
        key_id,
        token_uri,
        signer,
        ..
    } = source
    else {
        return None;
    };
    let header = match key_id {
        Some(k) => serde_json::json!({ "kid": k }),
        None => serde_json::json!({}),
    };
    let claims = serde_json::json!({
        "iss": email,
        "scope": SCOPE,
        "aud": token_uri,
        "iat": now,
        "exp": now + 3600,
    });
    Some(signer.sign(header, &claims))
}

/// Fetches a token from `source`.
pub async fn fetch(source: &Source, l: Login<'_>) -> Result<Token, DriverError> {
    let stage = Stage::Authenticate;
    let Source::Key {
        email, token_uri, ..
    } = source
    else {
        return metadata_token(l).await;
    };
    let jwt = zeroize::Zeroizing::new(assertion(source, now_secs()).unwrap_or_default());
    l.http.scrub().remember(jwt.as_bytes());
    let what = format!("a token for {email}");
    let req = Request::new(Method::POST, token_uri, &what, stage)
        .header(reqwest::header::ACCEPT, "application/json")
        .form(&[
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", jwt.as_str()),
        ])
        .within(l.timeout, l.deadline)
        .peer("the token endpoint");
    let reply = l
        .http
        .send_patiently(&req, &Patience::THROTTLE_OR_BUSY)
        .await
        .map_err(|f| f.into_error())?;
    if reply.ok() {
        return token_of(&reply.body, &what);
    }
    let (code, description) = model::token_error(reply.scrubbed().as_bytes());
    Err(DriverError::new(
        match reply.status {
            400 | 401 | 403 => ErrorKind::PasswordInvalid,
            429 | 503 => ErrorKind::Busy,
            _ => ErrorKind::DeviceError,
        },
        stage,
        format!(
            "the token endpoint refused service account {email} ({} {code}: {description})",
            reply.status
        ),
    ))
}

/// One GET of the metadata server (`Metadata-Flavor: Google`).
pub async fn metadata_get(
    http: &mut Client,
    base: &str,
    path: &str,
    deadline: Option<Instant>,
) -> Result<crate::http::Reply, DriverError> {
    let url = format!("{base}/{path}");
    let what = format!("the metadata server's {path}");
    let req = Request::new(Method::GET, &url, &what, Stage::Authenticate)
        .header(
            reqwest::header::HeaderName::from_static("metadata-flavor"),
            "Google",
        )
        .within(METADATA_TIMEOUT, deadline)
        .peer("the metadata server");
    let patience = Patience {
        statuses: &[429, 500, 503],
        ..Patience::THROTTLE
    };
    let reply = http.send_patiently(&req, &patience).await.map_err(|f| {
        let mut e = f.into_error();
        e.message = format!(
            "{} (is this a Compute Engine instance? GCE_METADATA_HOST names another metadata \
             server; --serviceaccount names a key file)",
            e.message
        );
        e
    })?;
    match reply.header("metadata-flavor") {
        Some(f) if f.eq_ignore_ascii_case("google") => Ok(reply),
        _ => Err(DriverError::new(
            ErrorKind::Protocol,
            Stage::Authenticate,
            format!("{what}: the answer is not the metadata server's (no Metadata-Flavor: Google)"),
        )),
    }
}

async fn metadata_token(l: Login<'_>) -> Result<Token, DriverError> {
    let what = "the service account's token from the metadata server";
    let reply = metadata_get(
        l.metadata,
        l.metadata_base,
        "instance/service-accounts/default/token",
        l.deadline,
    )
    .await?;
    if reply.ok() {
        return token_of(&reply.body, what);
    }
    Err(DriverError::new(
        match reply.status {
            403 | 404 => ErrorKind::PasswordInvalid,
            _ => ErrorKind::DeviceError,
        },
        Stage::Authenticate,
        format!(
            "the metadata server gave no token ({}: {}): the instance needs a service account \
             with the cloud-platform scope, or give --serviceaccount",
            reply.status,
            reply.text(200)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    fn write_key(dir: &Path, kind: &str) -> PathBuf {
        let key = include_str!("../azure/testdata/client-key.pem");
        let p = dir.join(format!("{kind}.json"));
        let v = serde_json::json!({"type": kind, "client_email": "fence@p.iam.gserviceaccount.com",
            "private_key": key, "private_key_id": "k1", "token_uri": "https://oauth2.example/token"});
        std::fs::write(&p, v.to_string()).unwrap();
        p
    }

    #[test]
    fn key_files_and_the_default_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = write_key(dir.path(), "service_account");
        let s = Source::choose(&Auth::KeyFile(p.clone()), &Env::default()).unwrap();
        assert!(s.describe().contains("fence@p.iam"));
        let a = assertion(&s, 1_700_000_000).unwrap();
        let claims: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(a.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["aud"], "https://oauth2.example/token");
        assert_eq!(claims["scope"], SCOPE);
        assert_eq!(claims["exp"], 1_700_003_600u64);
        let env = Env::from_pairs(&[("GOOGLE_APPLICATION_CREDENTIALS", p.to_str().unwrap())]);
        assert!(matches!(
            Source::choose(&Auth::Default, &env).unwrap(),
            Source::Key { .. }
        ));
        assert!(matches!(
            Source::choose(&Auth::Default, &Env::default()).unwrap(),
            Source::Metadata
        ));
        let u = write_key(dir.path(), "authorized_user");
        let e = Source::choose(&Auth::KeyFile(u), &Env::default())
            .err()
            .unwrap();
        assert!(e.message.contains("authorized_user"), "{}", e.message);
        let e = Source::choose(&Auth::KeyFile("/nonexistent.json".into()), &Env::default())
            .err()
            .unwrap();
        assert_eq!(e.kind, ErrorKind::Config);
    }
}
