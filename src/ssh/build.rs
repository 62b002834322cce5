//! SSH settings (a host's own commands, virsh) from a target URL or an
//! inventory's fields and the common [`MethodOptions`] (for the platform's
//! builder, `super::platform`).

use super::config::{parse_target, Profile, SshAuth, SshConfig};
use crate::platform::build::{BuildError, Fields, MethodOptions};

/// What is wrong with an SSH method's settings.
#[derive(Debug, thiserror::Error)]
pub enum SshBuildError {
    /// The target.
    #[error(transparent)]
    Target(#[from] super::config::BadTarget),
    /// Host-key settings that make no policy.
    #[error(transparent)]
    HostKey(#[from] super::hostkey::HostKeyOptionError),
    /// No user.
    #[error("an SSH method needs a user name: ssh://USER@HOST/… or a username")]
    User,
}

impl From<SshBuildError> for BuildError {
    fn from(e: SshBuildError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings an `ssh://` target URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<SshConfig, BuildError>> {
    url.to_ascii_lowercase()
        .starts_with("ssh://")
        .then(|| Ok(settings(url, o)?))
}

/// The settings of an inventory method at `endpoint` (it needs one).
pub fn from_parts(endpoint: Option<&str>, o: &MethodOptions) -> Result<SshConfig, BuildError> {
    Ok(settings(endpoint.ok_or(BuildError::NoEndpoint)?, o)?)
}

fn settings(url: &str, o: &MethodOptions) -> Result<SshConfig, SshBuildError> {
    let t = parse_target(url)?;
    let username = t
        .username
        .or_else(|| o.username.clone())
        .ok_or(SshBuildError::User)?;
    let mut profile = t.profile;
    if let (Profile::Virsh { plug }, Some(p)) = (&mut profile, &o.plug) {
        if plug.is_none() {
            *plug = Some(p.clone());
        }
    }
    let mut c = SshConfig::new(&t.host, &username, SshAuth::Agent, profile);
    c.port = t.port;
    c.host_keys = super::hostkey::host_key_policy(
        o.ssh_known_hosts.as_deref(),
        o.ssh_host_key.as_deref(),
        o.ssh_accept_new,
    )?;
    c.use_sudo = o.use_sudo;
    c.missing_as_off = o.missing_as_off;
    Ok(c)
}

/// An inventory method's fields: an endpoint.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !f.has("endpoint") {
        return Err(
            "an ssh method needs endpoint = \"ssh://USER@HOST[:PORT]/virsh/DOMAIN\" (or /host)"
                .into(),
        );
    }
    Ok(())
}
