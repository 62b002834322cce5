//! What EC2 and STS answers mean: the XML of DescribeInstances,
//! Start/StopInstances, DescribeInstanceStatus and AssumeRoleWithWebIdentity,
//! the instance states as the engine sees them, and the classification of
//! error answers by their code. Pure functions over bytes; no I/O. Nothing
//! here panics on what the network sends: every field is optional until a
//! caller needs it, and a missing one is an error naming it.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::power::{Observed, PowerState, Transition};

/// One EC2 instance as DescribeInstances reports it (the parts fencing uses).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instance {
    /// `i-…`.
    pub id: String,
    /// `pending`, `running`, `stopping`, `stopped`, `shutting-down`, `terminated`.
    pub state: String,
    /// The private DNS name (how OpenShift and most Kubernetes on EC2 name nodes).
    pub private_dns_name: Option<String>,
    /// Its tags, in the order given.
    pub tags: Vec<(String, String)>,
    /// `StateTransitionReason`: why and when the state last changed (free text).
    pub reason: Option<String>,
    /// `StateReason`: code and message of the last change, when EC2 gives one.
    pub state_reason: Option<(String, String)>,
}

impl Instance {
    /// The value of tag `key`, if set.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The `Name` tag, or an empty string (upstream's alias column).
    pub fn name(&self) -> &str {
        self.tag("Name").unwrap_or("")
    }
}

/// What an instance state is to the engine: on, off, or a change under way.
/// `None` for a state EC2 does not document (never guessed).
pub fn observed(state: &str) -> Option<Observed> {
    Some(match state {
        "running" => Observed::Settled(PowerState::On),
        // A terminated instance is gone for good: it is fenced.
        "stopped" | "terminated" => Observed::Settled(PowerState::Off),
        "pending" => Observed::InTransition(Transition::PoweringOn),
        "stopping" | "shutting-down" => Observed::InTransition(Transition::PoweringOff),
        _ => return None,
    })
}

/// An EC2 or STS error answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// `Code` (e.g. `InvalidInstanceID.NotFound`), empty when the body has none.
    pub code: String,
    /// `Message`, as given (may be empty).
    pub message: String,
}

/// Throttling codes: the request was not carried out; the same request may
/// be sent again after a pause.
pub fn is_throttling(code: &str) -> bool {
    matches!(
        code,
        "RequestLimitExceeded"
            | "Throttling"
            | "ThrottlingException"
            | "ThrottledException"
            | "RequestThrottled"
            | "RequestThrottledException"
            | "TooManyRequestsException"
            | "SlowDown"
            | "PriorRequestNotComplete"
            | "EC2ThrottledException"
    )
}

/// Whether an error answer proves that EC2 turned a request down because of
/// the parameter `param` (an API or region that does not know it, or a value
/// it does not take there): a client error (4xx) whose code is one of the
/// parameter-validation codes and whose message names `param`. EC2 validates
/// a request before it carries any of it out, so such an answer means nothing
/// was done, and only then may the request be sent again without `param`.
/// Anything else (another code, a message that does not name it, a 5xx, no
/// answer at all) proves nothing of the kind.
pub fn refuses_parameter(e: &ApiError, param: &str) -> bool {
    (400..500).contains(&e.status)
        && matches!(
            e.code.as_str(),
            "UnknownParameter"
                | "InvalidParameter"
                | "InvalidParameterValue"
                | "InvalidParameterCombination"
                | "UnsupportedOperation"
                | "UnsupportedParameter"
        )
        && e.message
            .to_ascii_lowercase()
            .contains(&param.to_ascii_lowercase())
}

/// Text from the network, bounded and on one line (the shared rule).
pub use crate::http::printable;

impl ApiError {
    /// The engine's view of this answer to `what` (e.g. `StopInstances i-1`),
    /// with a message that names the code and says what to check.
    pub fn classify(&self, stage: Stage, what: &str) -> DriverError {
        let code = self.code.as_str();
        let said = if self.message.is_empty() {
            String::new()
        } else {
            format!(": {}", printable(&self.message, 200))
        };
        let (kind, text) = match code {
            "AuthFailure"
            | "SignatureDoesNotMatch"
            | "IncompleteSignature"
            | "InvalidSignature"
            | "MissingAuthenticationToken" => (
                ErrorKind::PasswordInvalid,
                format!(
                    "EC2 refused the credentials ({code}{said}): check the access key and \
                     secret key, and the region"
                ),
            ),
            "InvalidClientTokenId" | "UnrecognizedClientException" | "InvalidAccessKeyId" => (
                ErrorKind::UsernameInvalid,
                format!("the access key ID is not known ({code}{said})"),
            ),
            "ExpiredToken" | "ExpiredTokenException" | "InvalidToken" => (
                ErrorKind::PasswordInvalid,
                format!("the temporary credentials are expired or invalid ({code}{said})"),
            ),
            "RequestExpired" | "RequestTimeTooSkewed" => (
                ErrorKind::Config,
                format!(
                    "the request's time is off by more than EC2 allows ({code}{said}): check \
                     this machine's clock"
                ),
            ),
            "UnauthorizedOperation" | "AccessDenied" | "AccessDeniedException" => (
                ErrorKind::PrivilegeNotObtained,
                format!(
                    "the credentials may not do {what} ({code}{said}); fencing needs \
                     ec2:DescribeInstances, ec2:StopInstances and ec2:StartInstances"
                ),
            ),
            "InvalidInstanceID.NotFound" => (
                ErrorKind::Config,
                format!("no such instance ({code}{said}): check the instance ID and the region"),
            ),
            "InvalidInstanceID.Malformed" | "InvalidInstanceID" => (
                ErrorKind::Config,
                format!("not an instance ID ({code}{said})"),
            ),
            // Stop of a pending instance, start of a stopping one: a change
            // is under way. Busy: the engine reads, waits it through, and
            // only then sends again.
            "IncorrectInstanceState" | "IncorrectState" => (
                ErrorKind::Busy,
                format!("the instance cannot do that in its present state ({code}{said})"),
            ),
            "UnsupportedOperation" | "Unsupported" | "OperationNotPermitted" => (
                ErrorKind::Unsupported,
                format!("EC2 refused {what} ({code}{said})"),
            ),
            c if is_throttling(c) => (
                ErrorKind::Busy,
                format!("EC2 throttled {what} ({code}{said})"),
            ),
            "InternalError" | "InternalFailure" | "ServiceUnavailable" | "Unavailable" => (
                ErrorKind::Busy,
                format!("EC2 failed to answer {what} ({code}{said})"),
            ),
            "InvalidParameterValue"
            | "InvalidParameter"
            | "InvalidParameterCombination"
            | "MissingParameter"
            | "UnknownParameter"
            | "InvalidAction"
            | "InvalidFilter" => (
                ErrorKind::Config,
                format!("EC2 refused the request {what} ({code}{said})"),
            ),
            "" if self.status >= 500 => (
                ErrorKind::Busy,
                format!("EC2 answered {what} with HTTP {}", self.status),
            ),
            "" => (
                ErrorKind::Protocol,
                format!(
                    "EC2 answered {what} with HTTP {} and no error code",
                    self.status
                ),
            ),
            _ if self.status >= 500 => (
                ErrorKind::Busy,
                format!("EC2 failed to answer {what} ({code}{said})"),
            ),
            _ => (
                ErrorKind::DeviceError,
                format!("EC2 refused {what} ({code}{said})"),
            ),
        };
        DriverError::new(kind, stage, text)
    }
}

/// Why an answer could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadAnswer {
    /// Not XML.
    #[error("the answer is not XML ({0})")]
    NotXml(String),
    /// Too large or nested too deep to parse.
    #[error(transparent)]
    Refused(crate::parse::Refused),
    /// A part that must be there is missing.
    #[error("the answer has no {0}")]
    Missing(&'static str),
}

fn parse(body: &[u8]) -> Result<roxmltree::Document<'_>, BadAnswer> {
    // Bounded in size and depth before roxmltree, which recurses; no DTD.
    crate::parse::xml_bytes(body, &crate::parse::Limits::ANSWER).map_err(|e| match e {
        crate::parse::Refused::Xml(m) => BadAnswer::NotXml(printable(&m, 120)),
        crate::parse::Refused::NotUtf8 => BadAnswer::NotXml("not UTF-8".into()),
        other => BadAnswer::Refused(other),
    })
}

type Node<'a, 'i> = roxmltree::Node<'a, 'i>;

fn child<'a, 'i>(n: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    n.children()
        .find(|c| c.is_element() && c.tag_name().name() == name)
}

fn text_of(n: Node<'_, '_>, name: &str) -> Option<String> {
    child(n, name).map(|c| c.text().unwrap_or("").trim().to_string())
}

fn items<'a, 'i>(n: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children()
        .filter(|c| c.is_element() && c.tag_name().name() == "item")
}

/// The error in an answer's body (EC2's `Response/Errors/Error` or STS's
/// `ErrorResponse/Error`), whatever the body; an empty code when it has none.
pub fn api_error(status: u16, body: &[u8]) -> ApiError {
    let found = parse(body).ok().and_then(|doc| {
        doc.descendants()
            .find(|n| n.is_element() && n.tag_name().name() == "Error")
            .map(|e| {
                (
                    text_of(e, "Code").unwrap_or_default(),
                    text_of(e, "Message").unwrap_or_default(),
                )
            })
    });
    let (code, message) = found.unwrap_or_default();
    ApiError {
        status,
        code,
        message,
    }
}

fn instance(n: Node<'_, '_>) -> Instance {
    let state = child(n, "instanceState")
        .and_then(|s| text_of(s, "name"))
        .unwrap_or_default();
    let tags = child(n, "tagSet")
        .map(|t| {
            items(t)
                .map(|i| {
                    (
                        text_of(i, "key").unwrap_or_default(),
                        text_of(i, "value").unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let state_reason = child(n, "stateReason").and_then(|r| {
        let code = text_of(r, "code").unwrap_or_default();
        let msg = text_of(r, "message").unwrap_or_default();
        (!code.is_empty() || !msg.is_empty()).then_some((code, msg))
    });
    Instance {
        id: text_of(n, "instanceId").unwrap_or_default(),
        state,
        private_dns_name: text_of(n, "privateDnsName").filter(|s| !s.is_empty()),
        tags,
        reason: text_of(n, "reason").filter(|s| !s.is_empty()),
        state_reason,
    }
}

/// A page of DescribeInstances: the instances and the next page's token.
pub fn describe_instances(body: &[u8]) -> Result<(Vec<Instance>, Option<String>), BadAnswer> {
    let doc = parse(body)?;
    let root = doc.root_element();
    let reservations = child(root, "reservationSet").ok_or(BadAnswer::Missing("reservationSet"))?;
    let mut out = Vec::new();
    for r in items(reservations) {
        if let Some(set) = child(r, "instancesSet") {
            out.extend(items(set).map(instance));
        }
    }
    let next = text_of(root, "nextToken").filter(|s| !s.is_empty());
    Ok((out, next))
}

/// The state changes a StartInstances/StopInstances answer reports:
/// (instance, previous state, current state).
pub fn state_changes(body: &[u8]) -> Result<Vec<(String, String, String)>, BadAnswer> {
    let doc = parse(body)?;
    let set =
        child(doc.root_element(), "instancesSet").ok_or(BadAnswer::Missing("instancesSet"))?;
    Ok(items(set)
        .map(|i| {
            let name = |tag| {
                child(i, tag)
                    .and_then(|s| text_of(s, "name"))
                    .unwrap_or_default()
            };
            (
                text_of(i, "instanceId").unwrap_or_default(),
                name("previousState"),
                name("currentState"),
            )
        })
        .collect())
}

/// DescribeInstanceStatus for one instance: (state, system status, instance
/// status, scheduled events' codes). `None` when EC2 lists nothing for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceStatus {
    /// The instance state.
    pub state: String,
    /// EC2's check of the host the instance runs on (`ok`, `impaired`, …).
    pub system: String,
    /// EC2's reachability check of the instance itself.
    pub instance: String,
    /// Scheduled events (e.g. `system-reboot`).
    pub events: Vec<String>,
}

/// The first entry of a DescribeInstanceStatus answer.
pub fn instance_status(body: &[u8]) -> Result<Option<InstanceStatus>, BadAnswer> {
    let doc = parse(body)?;
    let set = child(doc.root_element(), "instanceStatusSet")
        .ok_or(BadAnswer::Missing("instanceStatusSet"))?;
    let found = items(set).next().map(|i| {
        let status = |tag| {
            child(i, tag)
                .and_then(|s| text_of(s, "status"))
                .unwrap_or_default()
        };
        InstanceStatus {
            state: child(i, "instanceState")
                .and_then(|s| text_of(s, "name"))
                .unwrap_or_default(),
            system: status("systemStatus"),
            instance: status("instanceStatus"),
            events: child(i, "eventsSet")
                .map(|e| items(e).filter_map(|x| text_of(x, "code")).collect())
                .unwrap_or_default(),
        }
    });
    Ok(found)
}

/// Temporary credentials from STS: (access key ID, secret, session token).
pub type StsCredentials = (String, crate::secret::Secret, crate::secret::Secret);

/// The credentials in an AssumeRoleWithWebIdentity answer.
pub fn assumed_role(body: &[u8]) -> Result<StsCredentials, BadAnswer> {
    let doc = parse(body)?;
    let creds = doc
        .descendants()
        .find(|n| n.is_element() && n.tag_name().name() == "Credentials")
        .ok_or(BadAnswer::Missing("Credentials"))?;
    let get = |tag: &'static str| {
        text_of(creds, tag)
            .filter(|s| !s.is_empty())
            .ok_or(BadAnswer::Missing(tag))
    };
    Ok((
        get("AccessKeyId")?,
        crate::secret::Secret::from_str_value(&get("SecretAccessKey")?),
        crate::secret::Secret::from_str_value(&get("SessionToken")?),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESCRIBE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
 <requestId>r</requestId>
 <reservationSet><item><reservationId>r-1</reservationId>
  <instancesSet><item>
   <instanceId>i-0123456789abcdef0</instanceId>
   <instanceState><code>80</code><name>stopped</name></instanceState>
   <privateDnsName>ip-10-0-1-5.ec2.internal</privateDnsName>
   <reason>User initiated (2026-01-02 03:04:05 GMT)</reason>
   <stateReason><code>Client.UserInitiatedShutdown</code><message>Client.UserInitiatedShutdown: User initiated shutdown</message></stateReason>
   <blockDeviceMapping><item><deviceName>/dev/xvda</deviceName></item></blockDeviceMapping>
   <tagSet><item><key>Name</key><value>worker-0</value></item><item><key>role</key><value>w</value></item></tagSet>
  </item></instancesSet>
 </item></reservationSet>
 <nextToken>abc</nextToken>
</DescribeInstancesResponse>"#;

    #[test]
    fn reads_an_instance_and_its_tags() {
        let (list, next) = describe_instances(DESCRIBE.as_bytes()).unwrap();
        assert_eq!(next.as_deref(), Some("abc"));
        let i = &list[0];
        assert_eq!(i.id, "i-0123456789abcdef0");
        assert_eq!(i.state, "stopped");
        assert_eq!(
            i.private_dns_name.as_deref(),
            Some("ip-10-0-1-5.ec2.internal")
        );
        assert_eq!(i.name(), "worker-0");
        assert_eq!(i.tag("role"), Some("w"));
        assert!(i.reason.as_deref().unwrap().starts_with("User initiated"));
        assert_eq!(
            i.state_reason.as_ref().unwrap().0,
            "Client.UserInitiatedShutdown"
        );
    }

    #[test]
    fn states_map_to_on_off_or_a_transition() {
        assert_eq!(observed("running"), Some(Observed::Settled(PowerState::On)));
        for off in ["stopped", "terminated"] {
            assert_eq!(observed(off), Some(Observed::Settled(PowerState::Off)));
        }
        assert_eq!(
            observed("pending"),
            Some(Observed::InTransition(Transition::PoweringOn))
        );
        for t in ["stopping", "shutting-down"] {
            assert_eq!(
                observed(t),
                Some(Observed::InTransition(Transition::PoweringOff))
            );
        }
        assert_eq!(observed("hibernated"), None);
        assert_eq!(observed(""), None);
    }

    #[test]
    fn errors_are_classified_by_code() {
        let e = |code: &str, status| {
            api_error(
                status,
                format!(
                    "<Response><Errors><Error><Code>{code}</Code><Message>m</Message></Error></Errors></Response>"
                )
                .as_bytes(),
            )
            .classify(Stage::Status, "DescribeInstances")
        };
        assert_eq!(e("AuthFailure", 401).kind, ErrorKind::PasswordInvalid);
        assert_eq!(
            e("InvalidClientTokenId", 403).kind,
            ErrorKind::UsernameInvalid
        );
        assert_eq!(
            e("UnauthorizedOperation", 403).kind,
            ErrorKind::PrivilegeNotObtained
        );
        assert_eq!(e("AccessDenied", 403).kind, ErrorKind::PrivilegeNotObtained);
        let nf = e("InvalidInstanceID.NotFound", 400);
        assert_eq!(nf.kind, ErrorKind::Config);
        assert!(nf.message.contains("no such instance"), "{}", nf.message);
        assert_eq!(
            e("InvalidInstanceID.Malformed", 400).kind,
            ErrorKind::Config
        );
        assert_eq!(e("IncorrectInstanceState", 400).kind, ErrorKind::Busy);
        assert_eq!(e("RequestLimitExceeded", 503).kind, ErrorKind::Busy);
        assert_eq!(e("InternalError", 500).kind, ErrorKind::Busy);
        assert_eq!(e("Whatever", 400).kind, ErrorKind::DeviceError);
        assert!(is_throttling("RequestLimitExceeded") && !is_throttling("AuthFailure"));
        // STS's shape, and bodies that are no error at all.
        let sts = api_error(
            403,
            b"<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>no</Message></Error></ErrorResponse>",
        );
        assert_eq!(
            (sts.code.as_str(), sts.message.as_str()),
            ("AccessDenied", "no")
        );
        let html = api_error(502, b"<html><body>Bad gateway</body></html>");
        assert_eq!(html.code, "");
        assert_eq!(html.classify(Stage::Status, "x").kind, ErrorKind::Busy);
        assert_eq!(
            api_error(400, b"\xff\xfe")
                .classify(Stage::Status, "x")
                .kind,
            ErrorKind::Protocol
        );
    }

    #[test]
    fn hostile_bodies_are_errors_not_panics() {
        for body in [
            &b""[..],
            b"<",
            b"<a><reservationSet><item><instancesSet><item/></instancesSet></item></reservationSet></a>",
            b"<!DOCTYPE x [<!ENTITY a \"aaaa\">]><x>&a;</x>",
            b"\x00\x01",
        ] {
            let _ = describe_instances(body);
            let _ = state_changes(body);
            let _ = instance_status(body);
            let _ = assumed_role(body);
            let _ = api_error(400, body);
        }
        let (list, _) = describe_instances(
            b"<a><reservationSet><item><instancesSet><item/></instancesSet></item></reservationSet></a>",
        )
        .unwrap();
        assert_eq!(list[0].id, "");
        assert!(describe_instances(b"<a/>").is_err());
    }

    #[test]
    fn reads_state_changes_status_and_sts_credentials() {
        let stop = br#"<StopInstancesResponse><instancesSet><item><instanceId>i-1</instanceId>
            <currentState><code>64</code><name>stopping</name></currentState>
            <previousState><code>16</code><name>running</name></previousState></item></instancesSet></StopInstancesResponse>"#;
        assert_eq!(
            state_changes(stop).unwrap(),
            vec![("i-1".into(), "running".into(), "stopping".into())]
        );
        let st = br#"<DescribeInstanceStatusResponse><instanceStatusSet><item><instanceId>i-1</instanceId>
            <instanceState><name>running</name></instanceState><systemStatus><status>ok</status></systemStatus>
            <instanceStatus><status>initializing</status></instanceStatus>
            <eventsSet><item><code>system-reboot</code></item></eventsSet></item></instanceStatusSet></DescribeInstanceStatusResponse>"#;
        let s = instance_status(st).unwrap().unwrap();
        assert_eq!(
            (s.state.as_str(), s.system.as_str(), s.instance.as_str()),
            ("running", "ok", "initializing")
        );
        assert_eq!(s.events, vec!["system-reboot".to_string()]);
        let sts = br#"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>
            <AccessKeyId>ASIA1</AccessKeyId><SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken>
            </Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"#;
        let (id, secret, token) = assumed_role(sts).unwrap();
        assert_eq!(
            (id.as_str(), secret.expose(), token.expose()),
            ("ASIA1", &b"s"[..], &b"t"[..])
        );
        assert_eq!(
            assumed_role(b"<X><Credentials><AccessKeyId>a</AccessKeyId></Credentials></X>"),
            Err(BadAnswer::Missing("SecretAccessKey"))
        );
    }

    #[test]
    fn only_a_refusal_naming_the_parameter_allows_sending_again_without_it() {
        let err = |status: u16, code: &str, msg: &str| ApiError {
            status,
            code: code.into(),
            message: msg.into(),
        };
        let p = "SkipOsShutdown";
        assert!(refuses_parameter(
            &err(
                400,
                "UnknownParameter",
                "The parameter SkipOsShutdown is not recognized"
            ),
            p
        ));
        assert!(refuses_parameter(
            &err(
                400,
                "InvalidParameterCombination",
                "skipOsShutdown cannot be used with hibernate"
            ),
            p
        ));
        // Another parameter named, no name, another code, a server error:
        // nothing proves the stop was not carried out.
        assert!(!refuses_parameter(
            &err(
                400,
                "UnknownParameter",
                "The parameter Force is not recognized"
            ),
            p
        ));
        assert!(!refuses_parameter(&err(400, "InvalidParameter", ""), p));
        assert!(!refuses_parameter(
            &err(
                400,
                "IncorrectInstanceState",
                "SkipOsShutdown: instance is stopping"
            ),
            p
        ));
        assert!(!refuses_parameter(
            &err(500, "UnknownParameter", "SkipOsShutdown"),
            p
        ));
        let e = api_error(
            400,
            b"<Response><Errors><Error><Code>UnknownParameter</Code><Message>The parameter               SkipOsShutdown is not recognized</Message></Error></Errors></Response>",
        );
        assert!(refuses_parameter(&e, p));
    }
}
