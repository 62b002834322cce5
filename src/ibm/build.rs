//! IBM Cloud settings from a target URL or an inventory's fields and the
//! common [`MethodOptions`]: the credential is the API key, `endpoint_url`
//! the service's endpoint, `ca_cert` the trust; IBM's own settings by key
//! ([`SETTINGS`]).

use super::config::{
    check_id, check_region, parse_api_type, parse_target, service_of, ConfigError, IbmConfig,
    Service,
};
use crate::platform::build::{BuildError, Fields, MethodOptions};

/// IBM's setting keys: `crn` (Power VS: the workspace's CRN, sent with
/// every request), `api_type` (`public` or `private` endpoints),
/// `iam_endpoint`, `proxy`, and for an inventory method without an
/// endpoint `service` (`vpc` or `powervs`), `region` and `workspace`
/// with the instance in `plug`.
pub const SETTINGS: &[&str] = &[
    "crn",
    "api_type",
    "iam_endpoint",
    "proxy",
    "service",
    "region",
    "workspace",
];

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::platform(e)
    }
}

/// The settings a target URL names, or `None` for another URL.
pub fn from_url(url: &str, o: &MethodOptions) -> Option<Result<IbmConfig, BuildError>> {
    service_of(url).map(|_| {
        let (s, r, w, i) = parse_target(url)?;
        settings(s, &r, &w, &i, o)
    })
}

/// The settings of an inventory method: its endpoint, or the `service`,
/// `region` and `workspace` settings and the instance in `plug`.
pub fn from_parts(endpoint: Option<&str>, o: &MethodOptions) -> Result<IbmConfig, BuildError> {
    if let Some(e) = endpoint {
        let (s, r, w, i) = parse_target(e)?;
        return settings(s, &r, &w, &i, o);
    }
    let service = match o.setting("service").unwrap_or("vpc") {
        "vpc" | "ibmvpc" => Service::Vpc,
        "powervs" | "power-vs" => Service::PowerVs,
        other => {
            return Err(
                ConfigError::BadTarget(format!("service '{other}' (vpc or powervs)")).into(),
            )
        }
    };
    let r = o.setting("region").or(o.region.as_deref()).unwrap_or("");
    let w = o.setting("workspace").unwrap_or("");
    let i = o.plug.as_deref().unwrap_or("");
    check_region(r)?;
    check_id(i)?;
    settings(service, r, w, i, o)
}

fn settings(
    service: Service,
    region: &str,
    workspace: &str,
    instance: &str,
    o: &MethodOptions,
) -> Result<IbmConfig, BuildError> {
    let mut c = IbmConfig::new(service, region, instance);
    c.workspace = workspace.to_string();
    c.crn = o.setting("crn").unwrap_or("").trim().to_string();
    c.private = parse_api_type(o.setting("api_type"), false)?;
    c.api_endpoint = o.endpoint_url.clone();
    c.iam_endpoint = o.setting("iam_endpoint").map(str::to_string);
    c.proxy = o.setting("proxy").map(str::to_string);
    c.ca_cert = o.ca_cert.clone();
    c.allow_self_fence = o.allow_self_fence;
    c.validate()?;
    Ok(c)
}

/// An inventory method's fields: an instance.
pub fn check_fields(f: &dyn Fields) -> Result<(), String> {
    if !f.has("endpoint") && !f.has("plug") {
        return Err(
            "an ibm method needs endpoint = \"ibmvpc://REGION/INSTANCE-ID\" (or \
                    \"powervs://REGION/WORKSPACE-ID/INSTANCE-ID\") or plug = \"INSTANCE-ID\" \
                    with settings region (and service, workspace, crn for Power VS)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_settings_make_the_configuration() {
        let mut o = MethodOptions::default();
        o.set("api_type", "private");
        let c = from_url("ibmvpc://us-south/0717_a", &o).unwrap().unwrap();
        assert!(c.private && c.service == Service::Vpc);
        assert!(from_url("aws://x/y", &o).is_none());
        assert!(
            from_url("powervs://lon/ws-1/pvm-1", &o).unwrap().is_ok(),
            "the CRN is asked for when connecting"
        );
        o.set("crn", "crn:v1:bluemix:public:power-iaas:lon06:a/acc:ws-1::");
        let c = from_url("powervs://lon/ws-1/pvm-1", &o).unwrap().unwrap();
        assert_eq!(
            (c.workspace.as_str(), c.instance.as_str()),
            ("ws-1", "pvm-1")
        );
        let mut o = MethodOptions {
            plug: Some("pvm-2".into()),
            ..Default::default()
        };
        o.set("service", "powervs");
        o.set("region", "lon");
        o.set("workspace", "ws-1");
        o.set("crn", "crn:v1:x");
        assert_eq!(from_parts(None, &o).unwrap().instance, "pvm-2");
        o.set("service", "classic");
        assert!(from_parts(None, &o).is_err());
    }
}
