//! Where a PDU method's secrets come from ([`SnmpCredentials`], one per
//! PDU), and filling them into its configuration: read when a method is
//! built ([`fill_snmp`]), or given inline by a front that read them already
//! (the SNMP agents: [`inline_snmp_secrets`]).

use super::config::SnmpConfig;
use super::session::Security;
use crate::engine::error::ErrorKind;
use crate::platform::credential::{CredentialError, CredentialRef};
use crate::secret::Secret;
use std::time::Instant;

/// Where one PDU's secrets come from.
#[derive(Clone, Debug, Default)]
pub struct SnmpCredentials {
    /// v1/v2c community.
    pub community: CredentialRef,
    /// v3 authentication password.
    pub auth: CredentialRef,
    /// v3 privacy password.
    pub privacy: CredentialRef,
}

impl SnmpCredentials {
    /// The references that apply to `security`.
    pub fn used(&self, security: &Security) -> Vec<&CredentialRef> {
        match security {
            Security::Community { .. } => vec![&self.community],
            Security::Usm(u) => {
                let mut v = Vec::new();
                if u.auth.is_some() {
                    v.push(&self.auth);
                }
                if u.privacy.is_some() {
                    v.push(&self.privacy);
                }
                v
            }
        }
    }
}

/// Why a PDU's secrets could not be filled in.
#[derive(Debug, thiserror::Error)]
pub enum PduSecretError {
    /// A reference that needs reading where only inline secrets are taken.
    #[error("PDU {pdu}: a secret from {from} cannot be read here")]
    NotInline { pdu: String, from: String },
    /// A reference that could not be read.
    #[error("PDU {pdu}: {source}")]
    Credential {
        pdu: String,
        source: CredentialError,
    },
    /// A community-based PDU with an empty community.
    #[error("PDU {pdu}: no community (community_file, community_env or community_script)")]
    NoCommunity { pdu: String },
}

impl PduSecretError {
    /// The engine's class: a password script that ran out of time is a
    /// timeout, anything else a configuration error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            PduSecretError::Credential { source, .. } => source.kind(),
            _ => ErrorKind::Config,
        }
    }
}

/// `config` with the secrets `credentials` give inline, for a front that
/// has read them already (the SNMP agents: options, stdin, their password
/// scripts): [`CredentialRef::Inline`] fills a slot, [`CredentialRef::None`]
/// leaves it empty (refused later where the security level needs it), any
/// other reference is an error (it would need reading: use the method's
/// `build`).
pub fn inline_snmp_secrets(
    config: &SnmpConfig,
    credentials: &[SnmpCredentials],
) -> Result<SnmpConfig, PduSecretError> {
    let take = |r: &CredentialRef, label: &str| match r {
        CredentialRef::Inline(s) => Ok(s.clone()),
        CredentialRef::None => Ok(Secret::default()),
        other => Err(PduSecretError::NotInline {
            pdu: label.to_string(),
            from: other.describe(),
        }),
    };
    let mut c = config.clone();
    for (p, cred) in c.pdus.iter_mut().zip(credentials) {
        match &mut p.security {
            Security::Community { community, .. } => *community = take(&cred.community, &p.label)?,
            Security::Usm(u) => {
                if let Some((_, pw)) = &mut u.auth {
                    *pw = take(&cred.auth, &p.label)?;
                }
                if let Some((_, pw)) = &mut u.privacy {
                    *pw = take(&cred.privacy, &p.label)?;
                }
            }
        }
    }
    Ok(c)
}

/// Fills the secrets of `config` from `credentials` (scripts until `deadline`).
pub async fn fill_snmp(
    config: &SnmpConfig,
    credentials: &[SnmpCredentials],
    deadline: Option<Instant>,
) -> Result<SnmpConfig, PduSecretError> {
    let mut c = config.clone();
    for (p, cred) in c.pdus.iter_mut().zip(credentials) {
        let pdu = p.label.clone();
        let what = |source| PduSecretError::Credential {
            pdu: pdu.clone(),
            source,
        };
        match &mut p.security {
            Security::Community { community, .. } => {
                *community = cred.community.resolve(deadline).await.map_err(what)?;
                if community.is_empty() {
                    return Err(PduSecretError::NoCommunity { pdu });
                }
            }
            Security::Usm(u) => {
                if let Some((_, pw)) = &mut u.auth {
                    *pw = cred.auth.resolve(deadline).await.map_err(what)?;
                }
                if let Some((_, pw)) = &mut u.privacy {
                    *pw = cred.privacy.resolve(deadline).await.map_err(what)?;
                }
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pdu_password_script_out_of_time_stays_a_timeout() {
        let e = PduSecretError::Credential {
            pdu: "pdu-a".into(),
            source: CredentialError::Timeout(std::time::Duration::from_secs(2)),
        };
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert!(e
            .to_string()
            .starts_with("PDU pdu-a: the password script did not finish"));
        let e = PduSecretError::NoCommunity {
            pdu: "pdu-a".into(),
        };
        assert_eq!(e.kind(), ErrorKind::Config);
    }
}
