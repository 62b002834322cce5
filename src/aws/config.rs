//! What a caller sets for one EC2 instance: region, instance ID, explicit
//! keys (or none: the SDKs' credential chain), endpoint overrides, the
//! identity the instance must show, and whether it may be this machine
//! itself. `aws://REGION/INSTANCE` targets, and the environment the SDKs
//! read (as a snapshot, so tests can give their own).

use crate::secret::Secret;
use std::collections::BTreeMap;
use std::time::Duration;

/// Why an AWS configuration cannot work, found before anything is contacted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `aws://REGION/INSTANCE`.
    #[error("'{0}' is not an AWS target (expected aws://REGION/INSTANCE-ID, e.g. aws://us-east-1/i-0123456789abcdef0)")]
    BadTarget(String),
    /// No region anywhere.
    #[error("no region: give --region (or aws://REGION/…), or set AWS_REGION")]
    NoRegion,
    /// A region that cannot name one.
    #[error("'{0}' is not an AWS region name (expected e.g. us-east-1)")]
    BadRegion(String),
    /// No instance.
    #[error("no instance: give the instance ID (--plug i-…)")]
    NoInstance,
    /// Not an instance ID.
    #[error("'{0}' is not an EC2 instance ID (expected i- and 8 or 17 hexadecimal digits)")]
    BadInstance(String),
    /// An access key without its secret, or the reverse.
    #[error("give both the access key ID and the secret access key, or neither (then the credential chain is used)")]
    HalfKeys,
    /// An endpoint that is not an http(s) URL of a host.
    #[error("'{0}' is not an endpoint URL (expected http(s)://HOST[:PORT][/])")]
    BadEndpoint(String),
    /// A tag pin that is not KEY=VALUE.
    #[error("'{0}' is not a tag pin (expected KEY=VALUE, e.g. Name=worker-0)")]
    BadTag(String),
    /// A list filter that is not KEY=VALUE.
    #[error("'{0}' is not a filter (expected KEY=VALUE, e.g. tag:Name=worker-0 or vpc-id=vpc-1)")]
    BadFilter(String),
}

/// Keys given explicitly (`--access-key`/`--secret-key`), or none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum GivenKeys {
    /// Use the credential chain.
    #[default]
    Chain,
    /// This key pair (and no session token).
    Keys {
        /// The access key ID (not secret, but not printed whole either).
        access_key_id: String,
        /// The secret access key.
        secret: Secret,
    },
}

impl GivenKeys {
    /// From what a front was given: both or neither (empty counts as not given).
    pub fn from_parts(id: Option<&str>, secret: Option<Secret>) -> Result<Self, ConfigError> {
        let id = id.map(str::trim).filter(|s| !s.is_empty());
        let secret = secret.filter(|s| !s.is_empty());
        match (id, secret) {
            (None, None) => Ok(GivenKeys::Chain),
            (Some(id), Some(secret)) => Ok(GivenKeys::Keys {
                access_key_id: id.to_string(),
                secret,
            }),
            _ => Err(ConfigError::HalfKeys),
        }
    }
}

/// The settings of one EC2 instance as a fencing device.
#[derive(Clone, Debug)]
pub struct AwsConfig {
    /// The region (`us-east-1`).
    pub region: String,
    /// The instance (`i-…`).
    pub instance_id: String,
    /// Explicit keys, or the chain.
    pub keys: GivenKeys,
    /// The EC2 endpoint given on the command line (`--endpoint-url`); it
    /// wins over `AWS_ENDPOINT_URL_EC2` and `AWS_ENDPOINT_URL`.
    pub endpoint: Option<String>,
    /// Bound on each HTTP request (cut by the step deadline).
    pub request_timeout: Duration,
    /// Allow `off` of the instance this process runs on.
    pub allow_self_fence: bool,
    /// `list`: the instances to list (`Filter.1`: name and value).
    pub list_filter: Option<(String, String)>,
    /// `off`: stop with `SkipOsShutdown=true` (the guest's OS shutdown is not
    /// waited for), falling back to a stop without it only where EC2 proves
    /// it refused the parameter. On by default, as upstream fence_aws's
    /// `skip_os_shutdown`.
    pub skip_os_shutdown: bool,
    /// How the endpoints' certificates are trusted (`--ca-cert`,
    /// `--ssl-fingerprint`, `--ssl-insecure`: the system store, or only
    /// `AWS_CA_BUNDLE`, by default).
    pub trust: crate::tls::TlsTrust,
}

impl AwsConfig {
    /// The lock key of the instance, however it is reached (every process
    /// acting on it serialises): `INSTANCE.REGION.ec2`, a name that is no
    /// network address, so no other device shares its turns.
    pub fn lock_key(&self) -> crate::lock::DeviceKey {
        crate::lock::DeviceKey::new(&format!("{}.{}.ec2", self.instance_id, self.region), 0, 0)
    }

    /// A configuration with the chain and default timeouts.
    pub fn new(region: &str, instance_id: &str) -> Self {
        AwsConfig {
            region: region.to_string(),
            instance_id: instance_id.to_string(),
            keys: GivenKeys::Chain,
            endpoint: None,
            request_timeout: Duration::from_secs(10),
            allow_self_fence: false,
            list_filter: None,
            skip_os_shutdown: true,
            trust: crate::tls::TlsTrust::default(),
        }
    }

    /// Checks the region, the instance ID and the endpoint (nothing contacted).
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_region(&self.region)?;
        // No instance: a driver that can only list.
        if !self.instance_id.is_empty() {
            check_instance(&self.instance_id)?;
        }
        if let Some(e) = &self.endpoint {
            Endpoint::parse(e)?;
        }
        Ok(())
    }
}

/// Checks an AWS region name (letters, digits and hyphens, e.g. `us-east-1`).
pub fn check_region(region: &str) -> Result<(), ConfigError> {
    if region.is_empty() {
        return Err(ConfigError::NoRegion);
    }
    let ok = region.len() <= 40
        && region.starts_with(|c: char| c.is_ascii_lowercase())
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !region.ends_with('-')
        && region.contains('-');
    if ok {
        Ok(())
    } else {
        Err(ConfigError::BadRegion(region.to_string()))
    }
}

/// Checks an instance ID: `i-` and 8 or 17 hexadecimal digits.
pub fn check_instance(id: &str) -> Result<(), ConfigError> {
    if id.is_empty() {
        return Err(ConfigError::NoInstance);
    }
    let ok = id
        .strip_prefix("i-")
        .is_some_and(|h| matches!(h.len(), 8 | 17) && h.chars().all(|c| c.is_ascii_hexdigit()));
    if ok {
        Ok(())
    } else {
        Err(ConfigError::BadInstance(id.to_string()))
    }
}

/// `aws://REGION/INSTANCE` → (region, instance), both checked.
pub fn parse_target(url: &str) -> Result<(String, String), ConfigError> {
    let bad = || ConfigError::BadTarget(url.to_string());
    let rest = url
        .get(..6)
        .filter(|s| s.eq_ignore_ascii_case("aws://"))
        .map(|_| &url[6..])
        .ok_or_else(bad)?;
    let (region, instance) = rest.split_once('/').ok_or_else(bad)?;
    let instance = instance.trim_end_matches('/');
    check_region(region)?;
    check_instance(instance)?;
    Ok((region.to_string(), instance.to_string()))
}

/// True when `url` is an `aws://` target.
pub fn is_aws_url(url: &str) -> bool {
    url.get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("aws://"))
}

/// `KEY=VALUE` (the tag pin and the list filter): the key trimmed, the value as given.
pub fn key_value(s: &str) -> Option<(String, String)> {
    let (k, v) = s.split_once('=')?;
    let k = k.trim();
    (!k.is_empty()).then(|| (k.to_string(), v.trim().to_string()))
}

/// An endpoint: scheme, the `Host` header's value, and the base URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The base URL, ending without `/`.
    pub url: String,
    /// What the `Host` header carries (and SigV4 signs): host, and the port
    /// when it is not the scheme's.
    pub host: String,
    /// True for https.
    pub tls: bool,
}

impl Endpoint {
    /// Reads `http(s)://HOST[:PORT][/]`.
    pub fn parse(s: &str) -> Result<Endpoint, ConfigError> {
        let bad = || ConfigError::BadEndpoint(s.to_string());
        let u = reqwest::Url::parse(s.trim()).map_err(|_| bad())?;
        let tls = match u.scheme() {
            "https" => true,
            "http" => false,
            _ => return Err(bad()),
        };
        let host = u.host_str().filter(|h| !h.is_empty()).ok_or_else(bad)?;
        if !u.username().is_empty() || u.password().is_some() || u.query().is_some() {
            return Err(bad());
        }
        if !matches!(u.path(), "" | "/") {
            return Err(bad());
        }
        let host = match u.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let scheme = if tls { "https" } else { "http" };
        Ok(Endpoint {
            url: format!("{scheme}://{host}"),
            host,
            tls,
        })
    }

    /// The service's public endpoint in `region` (`.amazonaws.com.cn` in China).
    pub fn default_for(service: &str, region: &str) -> Endpoint {
        let suffix = if region.starts_with("cn-") {
            "amazonaws.com.cn"
        } else {
            "amazonaws.com"
        };
        let host = format!("{service}.{region}.{suffix}");
        Endpoint {
            url: format!("https://{host}"),
            host,
            tls: true,
        }
    }
}

/// The environment variables the SDKs read, as a snapshot (tests build
/// their own with [`Env::from_pairs`]).
#[derive(Clone, Debug, Default)]
pub struct Env(BTreeMap<String, String>);

/// Every variable fencekit's AWS driver reads.
pub const ENV_VARS: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_SESSION_NAME",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_EC2",
    "AWS_ENDPOINT_URL_STS",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
    "AWS_CA_BUNDLE",
    "HOME",
];

impl Env {
    /// The process's variables (only those in [`ENV_VARS`]).
    pub fn from_process() -> Env {
        Env(ENV_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect())
    }

    /// Given variables (tests).
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Env {
        Env(pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    /// A variable's value, when set and not empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// True when the variable says yes (`true`, `1`, case-insensitive).
    pub fn yes(&self, key: &str) -> bool {
        self.get(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
    }

    /// The region the environment names (`AWS_REGION`, then `AWS_DEFAULT_REGION`).
    pub fn region(&self) -> Option<&str> {
        self.get("AWS_REGION")
            .or_else(|| self.get("AWS_DEFAULT_REGION"))
    }

    /// The endpoint for `service` (`ec2`, `sts`): `AWS_ENDPOINT_URL_<SERVICE>`,
    /// then `AWS_ENDPOINT_URL`, unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS`.
    pub fn endpoint(&self, service: &str) -> Option<&str> {
        if self.yes("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS") {
            return None;
        }
        self.get(&format!(
            "AWS_ENDPOINT_URL_{}",
            service.to_ascii_uppercase()
        ))
        .or_else(|| self.get("AWS_ENDPOINT_URL"))
    }
}

/// The target URL form of EC2 (see [`crate::engine::driver::UrlForm`]).
pub const URL_FORMS: &[crate::engine::driver::UrlForm] = &[crate::engine::driver::UrlForm {
    scheme: "aws",
    form: "aws://REGION/INSTANCE-ID",
    meaning: "an Amazon EC2 instance, through the EC2 API",
    target: true,
    example: "aws://us-east-1/i-0123456789abcdef0",
}];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_regions_and_instances() {
        assert_eq!(
            parse_target("aws://us-east-1/i-0123456789abcdef0").unwrap(),
            ("us-east-1".into(), "i-0123456789abcdef0".into())
        );
        assert_eq!(
            parse_target("AWS://eu-west-3/i-01234567/").unwrap().1,
            "i-01234567"
        );
        assert!(matches!(
            parse_target("aws://us-east-1"),
            Err(ConfigError::BadTarget(_))
        ));
        assert!(matches!(
            parse_target("aws://US_EAST/i-01234567"),
            Err(ConfigError::BadRegion(_))
        ));
        assert!(matches!(
            parse_target("aws://us-east-1/i-xyz"),
            Err(ConfigError::BadInstance(_))
        ));
        assert!(check_region("us-gov-west-1").is_ok() && check_region("cn-north-1").is_ok());
        assert!(check_region("useast1").is_err() && check_region("us-east-").is_err());
        assert!(check_instance("i-0123456789abcdef0").is_ok());
        assert!(check_instance("i-0123456789abcdef").is_err());
        assert!(is_aws_url("aws://x/y") && !is_aws_url("ipmi://x"));
    }

    #[test]
    fn endpoints_keep_a_non_default_port_in_the_host() {
        let e = Endpoint::parse("http://127.0.0.1:5000").unwrap();
        assert_eq!(
            (e.url.as_str(), e.host.as_str(), e.tls),
            ("http://127.0.0.1:5000", "127.0.0.1:5000", false)
        );
        let e = Endpoint::parse("https://ec2.us-east-1.amazonaws.com:443/").unwrap();
        assert_eq!(e.host, "ec2.us-east-1.amazonaws.com");
        assert!(Endpoint::parse("ftp://h").is_err());
        assert!(Endpoint::parse("http://u:p@h").is_err());
        assert!(Endpoint::parse("http://h/x").is_err());
        assert_eq!(
            Endpoint::default_for("ec2", "cn-north-1").host,
            "ec2.cn-north-1.amazonaws.com.cn"
        );
        assert_eq!(
            Endpoint::default_for("sts", "us-east-1").url,
            "https://sts.us-east-1.amazonaws.com"
        );
    }

    #[test]
    fn the_environment_names_endpoints_and_regions() {
        let env = Env::from_pairs(&[
            ("AWS_ENDPOINT_URL", "http://a"),
            ("AWS_ENDPOINT_URL_STS", "http://s"),
            ("AWS_DEFAULT_REGION", "eu-west-1"),
        ]);
        assert_eq!(env.endpoint("ec2"), Some("http://a"));
        assert_eq!(env.endpoint("sts"), Some("http://s"));
        assert_eq!(env.region(), Some("eu-west-1"));
        let ignored = Env::from_pairs(&[
            ("AWS_ENDPOINT_URL", "http://a"),
            ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true"),
        ]);
        assert_eq!(ignored.endpoint("ec2"), None);
    }

    #[test]
    fn keys_come_in_pairs() {
        assert_eq!(GivenKeys::from_parts(None, None), Ok(GivenKeys::Chain));
        assert_eq!(
            GivenKeys::from_parts(Some(""), Some(Secret::default())),
            Ok(GivenKeys::Chain)
        );
        assert_eq!(
            GivenKeys::from_parts(Some("AKID"), None),
            Err(ConfigError::HalfKeys)
        );
        assert!(matches!(
            GivenKeys::from_parts(Some("AKID"), Some(Secret::from_str_value("s"))),
            Ok(GivenKeys::Keys { .. })
        ));
        assert_eq!(
            key_value(" Name = worker-0"),
            Some(("Name".into(), "worker-0".into()))
        );
        assert_eq!(key_value("novalue"), None);
        assert_eq!(key_value("=v"), None);
    }
}

#[cfg(test)]
mod url_form_tests {
    #[test]
    fn every_url_form_parses() {
        for f in super::URL_FORMS {
            assert!(f.form.starts_with(&format!("{}://", f.scheme)), "{f:?}");
            super::parse_target(f.example)
                .map(|_| ())
                .unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }
}
