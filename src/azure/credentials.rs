//! Access tokens for Resource Manager, in the Azure SDKs' order.
//!
//! * a service principal with a client secret, or with a certificate (a
//!   client assertion signed with its key: [`super::assertion`]), from the
//!   options or from `AZURE_CLIENT_ID` / `AZURE_TENANT_ID` with
//!   `AZURE_CLIENT_SECRET` or `AZURE_CLIENT_CERTIFICATE_PATH`;
//! * a workload identity: the federated token in
//!   `AZURE_FEDERATED_TOKEN_FILE` (read again for every token: the kubelet
//!   rotates it) exchanged as a client assertion, as on AKS and OpenShift;
//! * the managed identity: the instance metadata service's token endpoint
//!   (`Metadata: true`, never through a proxy).
//!
//! Service principals and workload identities ask the cloud's login
//! endpoint (`AZURE_AUTHORITY_HOST` when set) for the
//! `client_credentials` grant; every secret put in a body is remembered
//! by the client's scrub first. A token is used until five minutes before
//! it expires, and fetched again after Resource Manager refuses it.

use super::assertion::{random_jti, Signer};
use super::config::{Auth, AzureConfig, Env};
use super::model;
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Client, Patience, Request};
use crate::secret::Secret;
use reqwest::Method;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use zeroize::Zeroizing;

/// The instance metadata service, when `AZURE_POD_IDENTITY_AUTHORITY_HOST`
/// names no other.
pub const IMDS: &str = "http://169.254.169.254";
/// How long a metadata service request may take (it answers on the host).
pub const IMDS_TIMEOUT: Duration = Duration::from_secs(3);
/// A token is fetched again this long before it expires.
const MARGIN: Duration = Duration::from_secs(300);

/// Where a token comes from.
#[derive(Debug)]
pub enum Source {
    /// A service principal's secret.
    Secret {
        /// Its tenant.
        tenant: String,
        /// Its application (client) ID.
        client_id: String,
        /// The secret.
        secret: Secret,
    },
    /// A service principal's certificate.
    Certificate {
        /// Its tenant.
        tenant: String,
        /// Its application (client) ID.
        client_id: String,
        /// The certificate and key.
        signer: Box<Signer>,
        /// The PEM file, for messages.
        path: PathBuf,
    },
    /// A workload identity's federated token file.
    Workload {
        /// Its tenant.
        tenant: String,
        /// Its client ID.
        client_id: String,
        /// The token file.
        file: PathBuf,
    },
    /// The metadata service's managed identity.
    Imds {
        /// A user-assigned identity's client ID.
        client_id: Option<String>,
    },
}

fn config(message: String) -> DriverError {
    DriverError::new(ErrorKind::Config, Stage::Authenticate, message)
}

fn certificate(tenant: &str, client_id: &str, path: PathBuf) -> Result<Source, DriverError> {
    let signer = Signer::from_file(&path).map_err(|e| config(e.to_string()))?;
    Ok(Source::Certificate {
        tenant: tenant.to_string(),
        client_id: client_id.to_string(),
        signer: Box::new(signer),
        path,
    })
}

impl Source {
    /// The source `cfg` names, or the first of the SDKs' order the
    /// environment offers.
    pub fn choose(cfg: &AzureConfig, env: &Env) -> Result<Source, DriverError> {
        let tenant = cfg
            .tenant
            .clone()
            .or_else(|| env.get("AZURE_TENANT_ID").map(str::to_string));
        let need_tenant = || {
            tenant
                .clone()
                .ok_or_else(|| config(super::config::ConfigError::NoTenant.to_string()))
        };
        let workload = || match (
            env.get("AZURE_FEDERATED_TOKEN_FILE"),
            env.get("AZURE_CLIENT_ID"),
            tenant.as_deref(),
        ) {
            (Some(f), Some(c), Some(t)) => Some(Source::Workload {
                tenant: t.to_string(),
                client_id: c.to_string(),
                file: PathBuf::from(f),
            }),
            _ => None,
        };
        match &cfg.auth {
            Auth::Secret { client_id, secret } => Ok(Source::Secret {
                tenant: need_tenant()?,
                client_id: client_id.clone(),
                secret: secret.clone(),
            }),
            Auth::Certificate { client_id, path } => {
                certificate(&need_tenant()?, client_id, path.clone())
            }
            Auth::ManagedIdentity { client_id } => Ok(match (workload(), client_id) {
                (Some(w), None) => w,
                _ => Source::Imds {
                    client_id: client_id.clone(),
                },
            }),
            Auth::Chain => {
                let id = env.get("AZURE_CLIENT_ID");
                if let (Some(id), Some(s)) = (id, env.get("AZURE_CLIENT_SECRET")) {
                    return Ok(Source::Secret {
                        tenant: need_tenant()?,
                        client_id: id.to_string(),
                        secret: Secret::from_str_value(s),
                    });
                }
                if let (Some(id), Some(p)) = (id, env.get("AZURE_CLIENT_CERTIFICATE_PATH")) {
                    return certificate(&need_tenant()?, id, PathBuf::from(p));
                }
                Ok(workload().unwrap_or(Source::Imds {
                    client_id: id.map(str::to_string),
                }))
            }
        }
    }

    /// For the timeline (never a secret).
    pub fn describe(&self) -> String {
        match self {
            Source::Secret {
                tenant, client_id, ..
            } => format!("service principal {client_id} (tenant {tenant}, client secret)"),
            Source::Certificate {
                tenant,
                client_id,
                signer,
                path,
            } => format!(
                "service principal {client_id} (tenant {tenant}, certificate {} x5t {})",
                path.display(),
                signer.thumbprint()
            ),
            Source::Workload {
                tenant,
                client_id,
                file,
            } => format!(
                "workload identity {client_id} (tenant {tenant}, token file {})",
                file.display()
            ),
            Source::Imds { client_id: None } => {
                "the managed identity (instance metadata service)".into()
            }
            Source::Imds { client_id: Some(c) } => {
                format!("the user-assigned managed identity {c} (instance metadata service)")
            }
        }
    }
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
    /// The client for the login endpoint (the same trust and proxy as
    /// Resource Manager's).
    pub http: &'a mut Client,
    /// The client for the metadata service (direct).
    pub imds: &'a mut Client,
    /// The login endpoint's URL (no trailing slash).
    pub authority: &'a str,
    /// The scope (`https://management.azure.com/.default`).
    pub scope: &'a str,
    /// The metadata service's URL.
    pub imds_base: &'a str,
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

fn token_of(body: &[u8], stage: Stage, what: &str) -> Result<Token, DriverError> {
    let (t, secs) = model::token(body)
        .map_err(|e| DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}")))?;
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

/// Fetches a token from `source`.
pub async fn fetch(source: &Source, l: Login<'_>) -> Result<Token, DriverError> {
    let stage = Stage::Authenticate;
    let (tenant, client_id, secret_pairs): (&str, &str, Vec<(&str, Zeroizing<String>)>) =
        match source {
            Source::Imds { client_id } => return imds_token(client_id.as_deref(), l).await,
            Source::Secret {
                tenant,
                client_id,
                secret,
            } => {
                let s = String::from_utf8_lossy(secret.expose()).into_owned();
                (
                    tenant,
                    client_id,
                    vec![("client_secret", Zeroizing::new(s))],
                )
            }
            Source::Certificate {
                tenant,
                client_id,
                signer,
                ..
            } => {
                let url = token_url(l.authority, tenant);
                let a = signer.assertion(client_id, &url, now_secs(), &random_jti());
                (tenant, client_id, assertion_pairs(a))
            }
            Source::Workload {
                tenant,
                client_id,
                file,
            } => {
                let a = std::fs::read_to_string(file).map_err(|e| {
                    config(format!(
                        "cannot read the federated token file {} (AZURE_FEDERATED_TOKEN_FILE): {e}",
                        file.display()
                    ))
                })?;
                (tenant, client_id, assertion_pairs(a.trim().to_string()))
            }
        };
    let url = token_url(l.authority, tenant);
    let what = format!("a token for {client_id}");
    let mut pairs: Vec<(&str, &str)> = vec![
        ("grant_type", "client_credentials"),
        ("client_id", client_id),
        ("scope", l.scope),
    ];
    for (k, v) in &secret_pairs {
        if *k != "client_assertion_type" {
            l.http.scrub().remember(v.as_bytes());
        }
        pairs.push((k, v.as_str()));
    }
    let req = Request::new(Method::POST, &url, &what, stage)
        .header(reqwest::header::ACCEPT, "application/json")
        .form(&pairs)
        .within(l.timeout, l.deadline)
        .peer("the login endpoint");
    drop(secret_pairs);
    let reply = l
        .http
        .send_patiently(&req, &Patience::THROTTLE_OR_BUSY)
        .await
        .map_err(|f| f.into_error())?;
    if reply.ok() {
        return token_of(&reply.body, stage, &what);
    }
    let (code, description) = model::token_error(reply.scrubbed().as_bytes());
    let kind = match reply.status {
        400 | 401 | 403 => ErrorKind::PasswordInvalid,
        429 | 503 => ErrorKind::Busy,
        _ => ErrorKind::DeviceError,
    };
    Err(DriverError::new(
        kind,
        stage,
        format!(
            "the login endpoint refused {client_id} in tenant {tenant} ({} {code}: {description})",
            reply.status
        ),
    ))
}

fn assertion_pairs(assertion: String) -> Vec<(&'static str, Zeroizing<String>)> {
    vec![
        (
            "client_assertion_type",
            Zeroizing::new("urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_string()),
        ),
        ("client_assertion", Zeroizing::new(assertion)),
    ]
}

/// The tenant's token endpoint.
pub fn token_url(authority: &str, tenant: &str) -> String {
    format!(
        "{}/{}/oauth2/v2.0/token",
        authority.trim_end_matches('/'),
        crate::http::client::form_encode(tenant)
    )
}

/// The scope's resource, as the metadata service takes it
/// (`https://management.azure.com/`).
pub fn resource_of(scope: &str) -> String {
    format!(
        "{}/",
        scope.trim_end_matches("/.default").trim_end_matches('/')
    )
}

async fn imds_token(client_id: Option<&str>, l: Login<'_>) -> Result<Token, DriverError> {
    let stage = Stage::Authenticate;
    let mut url = format!(
        "{}/metadata/identity/oauth2/token?api-version=2018-02-01&resource={}",
        l.imds_base.trim_end_matches('/'),
        crate::http::client::form_encode(&resource_of(l.scope))
    );
    if let Some(c) = client_id {
        url.push_str(&format!(
            "&client_id={}",
            crate::http::client::form_encode(c)
        ));
    }
    let what = "a managed identity token";
    let req = Request::new(Method::GET, &url, what, stage)
        .header(reqwest::header::HeaderName::from_static("metadata"), "true")
        .within(l.timeout.min(IMDS_TIMEOUT * 2), l.deadline)
        .peer("the instance metadata service");
    // The metadata service asks for a retry with 429, 500 and 503.
    let patience = Patience {
        statuses: &[429, 500, 503],
        ..Patience::THROTTLE
    };
    let reply = l.imds.send_patiently(&req, &patience).await.map_err(|f| {
        let mut e = f.into_error();
        e.message = format!(
            "{} (is this an Azure VM with a managed identity? AZURE_POD_IDENTITY_AUTHORITY_HOST \
                 names another metadata service)",
            e.message
        );
        e
    })?;
    if reply.ok() {
        return token_of(&reply.body, stage, what);
    }
    let (code, description) = model::token_error(reply.scrubbed().as_bytes());
    Err(DriverError::new(
        match reply.status {
            400 | 401 | 403 | 404 => ErrorKind::PasswordInvalid,
            _ => ErrorKind::DeviceError,
        },
        stage,
        format!(
            "the instance metadata service gave no managed identity token ({} {code}: \
             {description}): the VM needs a managed identity{}",
            reply.status,
            match client_id {
                Some(c) => format!(" with client ID {c}"),
                None => String::new(),
            }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUB: &str = "0b1f6471-1bf0-4dda-aec3-cb9272f09590";

    fn cfg(auth: Auth) -> AzureConfig {
        let mut c = AzureConfig::new(SUB, "rg", "vm");
        c.auth = auth;
        c
    }

    #[test]
    fn the_chain_follows_the_sdks_order() {
        let env = Env::from_pairs(&[
            ("AZURE_CLIENT_ID", "app"),
            ("AZURE_TENANT_ID", "t"),
            ("AZURE_CLIENT_SECRET", "s3cret"),
            (
                "AZURE_FEDERATED_TOKEN_FILE",
                "/var/run/secrets/azure/tokens/token",
            ),
        ]);
        let s = Source::choose(&cfg(Auth::Chain), &env).unwrap();
        assert!(matches!(s, Source::Secret { ref client_id, .. } if client_id == "app"));
        assert!(!s.describe().contains("s3cret"));
        let env = Env::from_pairs(&[
            ("AZURE_CLIENT_ID", "app"),
            ("AZURE_TENANT_ID", "t"),
            ("AZURE_FEDERATED_TOKEN_FILE", "/tok"),
        ]);
        assert!(matches!(
            Source::choose(&cfg(Auth::Chain), &env).unwrap(),
            Source::Workload { .. }
        ));
        assert!(matches!(
            Source::choose(&cfg(Auth::ManagedIdentity { client_id: None }), &env).unwrap(),
            Source::Workload { .. }
        ));
        assert!(matches!(
            Source::choose(&cfg(Auth::Chain), &Env::default()).unwrap(),
            Source::Imds { client_id: None }
        ));
        let e = Source::choose(
            &cfg(Auth::Secret {
                client_id: "a".into(),
                secret: Secret::from_str_value("x"),
            }),
            &Env::default(),
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        let e = Source::choose(
            &cfg(Auth::Certificate {
                client_id: "a".into(),
                path: "/nonexistent.pem".into(),
            }),
            &Env::from_pairs(&[("AZURE_TENANT_ID", "t")]),
        )
        .unwrap_err();
        assert!(e.message.contains("/nonexistent.pem"), "{}", e.message);
    }

    #[test]
    fn urls_of_the_token_endpoints() {
        assert_eq!(
            token_url(
                "https://login.microsoftonline.com/",
                "contoso.onmicrosoft.com"
            ),
            "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token"
        );
        assert_eq!(
            resource_of("https://management.azure.com/.default"),
            "https://management.azure.com/"
        );
    }
}
