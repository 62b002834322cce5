//! The EC2 instance metadata service (IMDS), version 2: a session token
//! first (`PUT /latest/api/token`), then reads with it; version 1 only when
//! the service answers the token request with 403, 404 or 405 (as the SDKs
//! fall back). Endpoint `http://169.254.169.254`, or
//! `AWS_EC2_METADATA_SERVICE_ENDPOINT` (`…_ENDPOINT_MODE=IPv6`:
//! `http://[fd00:ec2::254]`); `AWS_EC2_METADATA_DISABLED=true` turns it off.
//! Each request waits at most [`IMDS_TIMEOUT`] (the SDKs' default): off
//! EC2, or in a pod whose hop limit drops the answers, nothing answers.

use super::config::Env;
use super::http::{sensitive, Http, Request};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use reqwest::header::{HeaderName, HeaderValue};
use reqwest::Method;
use std::time::{Duration, Instant};

/// The longest one metadata request may take.
pub const IMDS_TIMEOUT: Duration = Duration::from_secs(1);
const TOKEN_TTL: &str = "300";

/// A metadata service client (the token is kept for the driver's life).
pub struct Imds {
    base: String,
    /// `None`: not asked yet; `Some(None)`: version 1 (no token).
    token: Option<Option<HeaderValue>>,
}

/// Why a metadata read gave nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImdsError {
    /// Turned off by `AWS_EC2_METADATA_DISABLED`.
    #[error("the instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)")]
    Disabled,
    /// Nothing answered (not on EC2, or the answers do not come back).
    #[error("the instance metadata service at {0} did not answer: {1}")]
    Unreachable(String, String),
    /// It answered with an error status.
    #[error("the instance metadata service answered {path} with HTTP {status}")]
    Status { path: String, status: u16 },
}

impl Imds {
    /// The client the environment describes; `Err(Disabled)` when it is off.
    pub fn from_env(env: &Env) -> Result<Imds, ImdsError> {
        if env.yes("AWS_EC2_METADATA_DISABLED") {
            return Err(ImdsError::Disabled);
        }
        let base = match env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT") {
            Some(e) => e.trim_end_matches('/').to_string(),
            None if env
                .get("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE")
                .is_some_and(|m| m.eq_ignore_ascii_case("ipv6")) =>
            {
                "http://[fd00:ec2::254]".to_string()
            }
            None => "http://169.254.169.254".to_string(),
        };
        Ok(Imds { base, token: None })
    }

    /// The endpoint (for messages).
    pub fn endpoint(&self) -> &str {
        &self.base
    }

    fn cut(deadline: Option<Instant>) -> Option<Instant> {
        let own = Instant::now() + IMDS_TIMEOUT;
        Some(deadline.map_or(own, |d| d.min(own)))
    }

    async fn token(
        &mut self,
        http: &mut Http,
        deadline: Option<Instant>,
    ) -> Result<Option<HeaderValue>, ImdsError> {
        if let Some(t) = &self.token {
            return Ok(t.clone());
        }
        let url = format!("{}/latest/api/token", self.base);
        let r = Request {
            method: Method::PUT,
            url: &url,
            headers: vec![(
                HeaderName::from_static("x-aws-ec2-metadata-token-ttl-seconds"),
                HeaderValue::from_static(TOKEN_TTL),
            )],
            body: None,
            what: "PUT /latest/api/token",
            peer: "the instance metadata service",
        };
        let reply = http
            .send(&r, Stage::Authenticate, IMDS_TIMEOUT, Self::cut(deadline))
            .await
            .map_err(|e| ImdsError::Unreachable(self.base.clone(), e.message))?;
        let token = match reply.status {
            200 => {
                let t = sensitive(reply.body.trim_ascii()).ok_or_else(|| ImdsError::Status {
                    path: "/latest/api/token".into(),
                    status: 200,
                })?;
                Some(t)
            }
            // Version 1 only (what the SDKs do on these answers).
            403..=405 => None,
            status => {
                return Err(ImdsError::Status {
                    path: "/latest/api/token".into(),
                    status,
                })
            }
        };
        self.token = Some(token.clone());
        Ok(token)
    }

    /// Reads `path` (e.g. `/latest/meta-data/instance-id`) as text.
    pub async fn get(
        &mut self,
        http: &mut Http,
        path: &str,
        deadline: Option<Instant>,
    ) -> Result<zeroize::Zeroizing<String>, ImdsError> {
        let token = self.token(http, deadline).await?;
        let url = format!("{}{path}", self.base);
        let what = format!("GET {path}");
        let mut headers = Vec::new();
        if let Some(t) = token {
            headers.push((HeaderName::from_static("x-aws-ec2-metadata-token"), t));
        }
        let r = Request {
            method: Method::GET,
            url: &url,
            headers,
            body: None,
            what: &what,
            peer: "the instance metadata service",
        };
        let reply = http
            .send(&r, Stage::Authenticate, IMDS_TIMEOUT, Self::cut(deadline))
            .await
            .map_err(|e| ImdsError::Unreachable(self.base.clone(), e.message))?;
        if !reply.ok() {
            return Err(ImdsError::Status {
                path: path.to_string(),
                status: reply.status,
            });
        }
        Ok(zeroize::Zeroizing::new(
            String::from_utf8_lossy(&reply.body).trim().to_string(),
        ))
    }
}

impl ImdsError {
    /// As an engine error at `stage` (a missing service is unreachable).
    pub fn into_driver(self, stage: Stage) -> DriverError {
        let kind = match &self {
            ImdsError::Disabled => ErrorKind::Config,
            ImdsError::Unreachable(..) => ErrorKind::Unreachable,
            ImdsError::Status { .. } => ErrorKind::DeviceError,
        };
        DriverError::new(kind, stage, self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_follows_the_environment() {
        let i = Imds::from_env(&Env::default()).unwrap();
        assert_eq!(i.endpoint(), "http://169.254.169.254");
        let i = Imds::from_env(&Env::from_pairs(&[(
            "AWS_EC2_METADATA_SERVICE_ENDPOINT",
            "http://127.0.0.1:9/",
        )]))
        .unwrap();
        assert_eq!(i.endpoint(), "http://127.0.0.1:9");
        let i = Imds::from_env(&Env::from_pairs(&[(
            "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
            "IPv6",
        )]))
        .unwrap();
        assert_eq!(i.endpoint(), "http://[fd00:ec2::254]");
        assert!(matches!(
            Imds::from_env(&Env::from_pairs(&[("AWS_EC2_METADATA_DISABLED", "true")])),
            Err(ImdsError::Disabled)
        ));
    }
}
