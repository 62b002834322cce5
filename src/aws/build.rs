//! EC2 settings from a target URL or an inventory's fields and the common
//! [`MethodOptions`] (for the platform's builder, `super::platform`), and
//! the names an EC2 instance can be pinned by.

use super::config::{check_instance, is_aws_url, key_value, parse_target, AwsConfig, ConfigError};
use crate::engine::identity::ExpectedIdentity;
use crate::platform::build::{BuildError, Fields, MethodOptions};

/// What is wrong with an EC2 method's settings.
#[derive(Debug, thiserror::Error)]
pub enum AwsBuildError {
    /// A target or setting.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A name pin (node_name, a tag) on a method of another driver.
    #[error("node_name and expect_tag are compared with what EC2 reports: they apply to driver aws only")]
    NamePinNotAws,
}

impl From<AwsBuildError> for BuildError {
    fn from(e: AwsBuildError) -> BuildError {
        BuildError::platform(e)
    }
}

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        AwsBuildError::Config(e).into()
    }
}

/// The settings an `aws://REGION/ID` URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<AwsConfig, BuildError>> {
    is_aws_url(url).then(|| {
        let (region, instance) = parse_target(url)?;
        settings(&region, &instance, o)
    })
}

/// The settings of an inventory method: its endpoint, or the region
/// (`o.region`, else the environment's) and the instance in `o.plug`.
pub fn from_parts(endpoint: Option<&str>, o: &MethodOptions) -> Result<AwsConfig, BuildError> {
    match endpoint {
        Some(e) => {
            let (region, instance) = parse_target(e)?;
            settings(&region, &instance, o)
        }
        None => {
            let region = o
                .region
                .clone()
                .or_else(|| {
                    super::config::Env::from_process()
                        .region()
                        .map(str::to_string)
                })
                .ok_or(ConfigError::NoRegion)?;
            settings(&region, o.plug.as_deref().unwrap_or(""), o)
        }
    }
}

fn settings(region: &str, instance: &str, o: &MethodOptions) -> Result<AwsConfig, BuildError> {
    check_instance(instance)?;
    let mut c = AwsConfig::new(region, instance);
    c.endpoint = o.endpoint_url.clone();
    c.allow_self_fence = o.allow_self_fence;
    c.trust = crate::tls::trust(
        o.ssl_insecure,
        o.ca_cert.as_deref(),
        o.ssl_fingerprint.as_deref(),
    )
    .map_err(BuildError::platform)?;
    c.validate()?;
    Ok(c)
}

/// A name pin given for a method of another driver.
pub fn foreign_options(o: &MethodOptions) -> Result<(), BuildError> {
    match o.node_name.is_some() || o.expect_tag.is_some() {
        true => Err(AwsBuildError::NamePinNotAws.into()),
        false => Ok(()),
    }
}

/// `expected` and the names `o` pins (`node_name`, `expect_tag`).
pub fn expected_names(
    expected: ExpectedIdentity,
    o: &MethodOptions,
) -> Result<ExpectedIdentity, BuildError> {
    names(expected, o.node_name.as_deref(), o.expect_tag.as_deref())
}

/// The name pins: `PrivateDnsName` and a tag (`KEY=VALUE` → `tag:KEY`).
pub fn names(
    mut e: ExpectedIdentity,
    node_name: Option<&str>,
    tag: Option<&str>,
) -> Result<ExpectedIdentity, BuildError> {
    if let Some(n) = node_name {
        e = e.with_name("PrivateDnsName", n)?;
    }
    if let Some(t) = tag {
        let (k, v) = key_value(t).ok_or_else(|| ConfigError::BadTag(t.to_string()))?;
        e = e.with_name(&format!("tag:{k}"), &v)?;
    }
    Ok(e)
}

/// An inventory method's fields: an instance.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !f.has("endpoint") && !f.has("plug") {
        return Err("an aws method needs endpoint = \"aws://REGION/INSTANCE-ID\" or plug = \"INSTANCE-ID\" (with region)".into());
    }
    Ok(())
}
