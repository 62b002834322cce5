//! Redfish error answers: their messages (`@Message.ExtendedInfo`, the
//! `error` object, vendor message ids and arguments), the refusals they
//! mean (quirk numbers refer to `shared/reference/quirks.md`), and the
//! classification of an answer that is not a success into a
//! [`DriverError`]. Pure, like the rest of [`super`], which re-exports it.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use serde_json::Value;

/// One message of a Redfish error answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    /// `MessageId` (iLO 4 spells the key `MessageID`), e.g.
    /// `iLO.2.16.InvalidOperationForSystemState`.
    pub id: Option<String>,
    /// `MessageArgs`: where iLO puts the reason ("Power is off").
    pub args: Vec<String>,
    /// `Message`, when the service sends one (iLO does not).
    pub text: Option<String>,
}

impl Message {
    /// The registry-independent part of the MessageId (its last segment:
    /// `iLO.2.16.InvalidOperationForSystemState` → `InvalidOperationForSystemState`,
    /// `IDRAC.2.8.PSU501` → `PSU501`).
    pub fn key(&self) -> Option<&str> {
        self.id
            .as_deref()
            .map(|i| i.rsplit('.').next().unwrap_or(i))
    }

    /// `ID: text`, or `ID (args)` when there is no text.
    pub fn describe(&self) -> String {
        let id = self.id.as_deref().map(|i| printable(i, 80));
        let args = (!self.args.is_empty()).then(|| {
            self.args
                .iter()
                .map(|a| printable(a, 80))
                .collect::<Vec<_>>()
                .join(", ")
        });
        match (id, &self.text, args) {
            (Some(i), Some(t), _) => format!("{i}: {}", printable(t, 200)),
            (Some(i), None, Some(a)) => format!("{i} ({a})"),
            (Some(i), None, None) => i,
            (None, Some(t), _) => printable(t, 200),
            (None, None, Some(a)) => a,
            (None, None, None) => String::new(),
        }
    }
}

fn message_of(m: &Value) -> Option<Message> {
    let str_of = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
    let msg = Message {
        id: str_of("MessageId").or_else(|| str_of("MessageID")),
        args: m
            .get("MessageArgs")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        text: str_of("Message"),
    };
    (msg.id.is_some() || msg.text.is_some() || !msg.args.is_empty()).then_some(msg)
}

/// Every message of an error body: `error.@Message.ExtendedInfo[]`, a
/// top-level `@Message.ExtendedInfo[]`, and iLO 4's top-level `Messages[]`
/// (duplicates dropped).
pub fn messages(body: &Value) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let lists = [
        body.get("error")
            .and_then(|e| e.get("@Message.ExtendedInfo")),
        body.get("@Message.ExtendedInfo"),
        body.get("Messages"),
    ];
    for list in lists.into_iter().flatten() {
        let items: Vec<&Value> = match list {
            Value::Array(a) => a.iter().collect(),
            one @ Value::Object(_) => vec![one],
            _ => vec![],
        };
        for m in items.into_iter().filter_map(message_of) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}

/// The human text of a Redfish error body: `error.message` (or
/// Supermicro's `error.Message`) unless it only points at the extended
/// info, and every message with its MessageId (so the vendor's id is quoted
/// even when, like iLO, it sends no text).
pub fn error_text(body: &Value) -> Option<String> {
    let err = body.get("error").unwrap_or(body);
    let mut parts = Vec::new();
    let msgs: Vec<String> = messages(body)
        .iter()
        .map(Message::describe)
        .filter(|d| !d.is_empty())
        .collect();
    let top = err
        .get("message")
        .or_else(|| err.get("Message"))
        .and_then(Value::as_str);
    if let Some(m) = top {
        // The generic "see ExtendedInfo" line says nothing on its own.
        if msgs.is_empty() || !m.contains("ExtendedInfo") {
            parts.push(printable(m, 200));
        }
    }
    if msgs.is_empty() {
        if let Some(c) = err.get("code").and_then(Value::as_str) {
            parts.push(printable(c, 80));
        }
    }
    parts.extend(msgs);
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Every `MessageId` and `error.code` in an error body.
pub fn message_ids(body: &Value) -> Vec<String> {
    let err = body.get("error").unwrap_or(body);
    let mut ids = Vec::new();
    if let Some(c) = err.get("code").and_then(Value::as_str) {
        ids.push(c.to_string());
    }
    ids.extend(messages(body).into_iter().filter_map(|m| m.id));
    ids
}

/// What a refused request means, read from MessageIds and MessageArgs
/// first and the English text only as a fallback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The node is already in the requested state (iDRAC `PSU501`/`PSU502`
    /// "Server is already powered ON/OFF."; iLO `InvalidOperationForSystemState`
    /// with MessageArgs "Power is on"/"Power is off").
    AlreadyThere,
    /// Busy, not ready, or a power transition in progress (iLO
    /// `InvalidOperationForSystemState` "Power transition in progress";
    /// `ResourceNotReadyRetry`; any other reason iLO gives for refusing in
    /// the present power state): read the state again before deciding.
    Busy,
    /// The reset type is not accepted (`ActionParameterNotSupported` on
    /// OpenBMC, `ActionParameterValueNotInList`, `ActionParameterUnknown`).
    ResetTypeRefused,
    /// Nothing known.
    Other,
}

/// Reads what a refusal means (see [`Refusal`]).
pub fn refusal(status: u16, body: Option<&Value>) -> Refusal {
    let msgs = body.map(messages).unwrap_or_default();
    let keyed = |k: &str| msgs.iter().any(|m| m.key() == Some(k));
    let words = |m: &Message| {
        let mut w = m.args.join(" ");
        if let Some(t) = &m.text {
            w.push(' ');
            w.push_str(t);
        }
        w.to_ascii_lowercase()
    };
    let already_words =
        |w: &str| w.contains("already") || w.contains("power is off") || w.contains("power is on");
    if keyed("PSU501") || keyed("PSU502") {
        return Refusal::AlreadyThere;
    }
    if let Some(m) = msgs
        .iter()
        .find(|m| m.key() == Some("InvalidOperationForSystemState"))
    {
        // iLO: the reason is in MessageArgs only. "Power is off/on" means
        // the state is already what the command leads to; anything else
        // (a transition in progress) means: read again, then decide.
        return if already_words(&words(m)) {
            Refusal::AlreadyThere
        } else {
            Refusal::Busy
        };
    }
    if keyed("ResourceNotReadyRetry") || keyed("ServiceTemporarilyUnavailable") {
        return Refusal::Busy;
    }
    if [
        "ActionParameterNotSupported",
        "ActionParameterValueNotInList",
        "ActionParameterUnknown",
        "ActionParameterValueError",
        "ActionParameterValueTypeError",
    ]
    .iter()
    .any(|k| keyed(k))
    {
        return Refusal::ResetTypeRefused;
    }
    let all: String = msgs.iter().map(words).collect::<Vec<_>>().join(" ");
    let top = body
        .map(|b| b.get("error").unwrap_or(b))
        .and_then(|e| e.get("message").or_else(|| e.get("Message")))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    let text = format!("{all} {top}");
    if status == 409 && text.contains("already") {
        // Quirk 17 (iDRAC) without its MessageId.
        return Refusal::AlreadyThere;
    }
    let busy_words = [
        "busy",
        "try again",
        "retry",
        "in progress",
        "not ready",
        "temporarily",
    ]
    .iter()
    .any(|w| text.contains(w));
    if matches!(status, 503 | 429) || (status == 500 && busy_words) {
        // Quirks 20/21: iDRAC 500 busy / 503 queue full; OpenBMC 503 after reboot.
        return Refusal::Busy;
    }
    Refusal::Other
}

/// At most `max` characters of `s`, control characters replaced.
pub fn printable(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out.trim().to_string()
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        400 => "bad request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not found",
        405 => "method not allowed",
        409 => "conflict",
        429 => "too many requests",
        500 => "internal server error",
        501 => "not implemented",
        502 => "bad gateway",
        503 => "service unavailable",
        504 => "gateway timeout",
        300..=399 => "redirect",
        _ => "error",
    }
}

/// Classifies a non-success HTTP answer. `what` is the request (`POST /x`);
/// `raw` the body as received (shown when it is not a Redfish error). The
/// vendor's MessageIds are quoted in the message, so an unknown refusal
/// still names what the BMC said.
pub fn classify(status: u16, raw: &[u8], stage: Stage, what: &str) -> DriverError {
    let body: Option<Value> = crate::parse::json(raw, &crate::parse::Limits::ANSWER).ok();
    let text = body.as_ref().and_then(error_text).or_else(|| {
        let t = String::from_utf8_lossy(raw);
        let t = printable(&t, 160);
        (!t.is_empty() && !t.starts_with('<')).then_some(t)
    });
    let shown = match &text {
        Some(t) => format!(": {t}"),
        None => String::new(),
    };
    let base = format!(
        "the BMC answered {what} with http {status} ({}){shown}",
        reason_phrase(status)
    );
    if status == 403 {
        // Authenticated, but the account may not do this (DSP0266:
        // InsufficientPrivilege); a different password would not help.
        return DriverError::new(
            ErrorKind::PrivilegeNotObtained,
            stage,
            format!(
                "the BMC refused {what} with http 403 (forbidden): the account lacks the \
                 privilege for it{shown}"
            ),
        );
    }
    if status == 401 {
        return DriverError::new(
            ErrorKind::PasswordInvalid,
            stage,
            format!(
                "the BMC rejected the credentials (http {status} {} to {what}){shown}",
                reason_phrase(status)
            ),
        );
    }
    let kind = match refusal(status, body.as_ref()) {
        Refusal::AlreadyThere => ErrorKind::NotInPresentState,
        Refusal::Busy => ErrorKind::Busy,
        Refusal::ResetTypeRefused => ErrorKind::Unsupported,
        Refusal::Other => ErrorKind::DeviceError,
    };
    let message = if status == 404 && what.ends_with("/redfish/v1") {
        format!("{base}; is Redfish enabled on the BMC? (quirk: disabled Redfish answers 404)")
    } else {
        base
    };
    DriverError::new(kind, stage, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(status: u16, body: Value) -> ErrorKind {
        classify(
            status,
            body.to_string().as_bytes(),
            Stage::Command,
            "POST /r",
        )
        .kind
    }

    // Bodies as real BMCs send them (shared/reference/vendors.md evidence).
    fn ilo5(args: &[&str]) -> Value {
        // iLO 5 2.x: reason only in MessageArgs, no Message
        // (captured redfish-bash.sh transcript, On while on).
        json!({"error": {"code": "iLO.0.10.ExtendedInfo",
            "message": "See @Message.ExtendedInfo for more information.",
            "@Message.ExtendedInfo": [{"MessageArgs": args,
                "MessageId": "iLO.2.16.InvalidOperationForSystemState"}]}})
    }

    fn ilo4(args: &[&str]) -> Value {
        // iLO 4 1.30 spells the key MessageID and repeats it in `Messages`
        // (goldyfruit/ansible-ilo#1, reset while off).
        json!({"Messages": [{"MessageArgs": args,
                "MessageID": "iLO.0.10.InvalidOperationForSystemState"}],
            "Type": "ExtendedError.1.0.0",
            "error": {"@Message.ExtendedInfo": [{"MessageArgs": args,
                "MessageID": "iLO.0.10.InvalidOperationForSystemState"}],
                "code": "iLO.0.10.ExtendedInfo",
                "message": "See @Message.ExtendedInfo for more information."}})
    }

    fn idrac(id: &str, text: &str) -> Value {
        // iDRAC9: Base GeneralError with the PSU message in ExtendedInfo
        // (dell/dellemc-openmanage-ansible-modules#132).
        json!({"error": {"@Message.ExtendedInfo": [{"Message": text, "MessageArgs": [],
                "MessageArgs@odata.count": 0, "MessageId": id, "RelatedProperties": [],
                "RelatedProperties@odata.count": 0,
                "Resolution": "No response action is required.", "Severity": "Informational"}],
            "code": "Base.1.12.GeneralError",
            "message": "A general error has occurred. See ExtendedInfo for more information"}})
    }

    #[test]
    fn refusals_are_read_from_message_ids_and_args() {
        use ErrorKind::*;
        assert_eq!(kind(400, ilo5(&["Power is off"])), NotInPresentState);
        assert_eq!(kind(400, ilo5(&["Power is on"])), NotInPresentState);
        assert_eq!(kind(400, ilo4(&["Power is off"])), NotInPresentState);
        assert_eq!(
            kind(400, ilo5(&["Power transition in progress. Retry later"])),
            Busy
        );
        assert_eq!(kind(400, ilo5(&[])), Busy, "unknown reason: read again");
        assert_eq!(
            kind(
                409,
                idrac("IDRAC.2.8.PSU501", "Server is already powered ON.")
            ),
            NotInPresentState
        );
        assert_eq!(
            kind(
                409,
                idrac("IDRAC.2.8.PSU502", "Server is already powered OFF.")
            ),
            NotInPresentState
        );
        // OpenBMC bmcweb: a reset type it does not take.
        let bmcweb = json!({"error": {"code": "Base.1.16.0.ActionParameterNotSupported",
            "message": "The parameter ForceOn for the action ComputerSystem.Reset is not supported on the target resource.",
            "@Message.ExtendedInfo": [{"@odata.type": "#Message.v1_1_1.Message",
                "Message": "The parameter ForceOn for the action ComputerSystem.Reset is not supported on the target resource.",
                "MessageArgs": ["ForceOn", "ComputerSystem.Reset"],
                "MessageId": "Base.1.16.0.ActionParameterNotSupported",
                "MessageSeverity": "Warning",
                "Resolution": "Remove the parameter supplied and resubmit the request if the operation failed."}]}});
        assert_eq!(kind(400, bmcweb.clone()), Unsupported);
        // Supermicro spells the top-level text `Message`.
        let smc = json!({"error": {"code": "Base.v1_4_0.GeneralError",
            "Message": "A general error has occurred. See ExtendedInfo for more information.",
            "@Message.ExtendedInfo": [{"MessageId": "Base.v1_4_0.ActionParameterValueNotInList",
                "Severity": "Warning", "MessageArgs": ["PushPowerButton", "ResetType", "ComputerSystem.Reset"],
                "Message": "The value PushPowerButton for the property ResetType is not in the list of acceptable values.",
                "Resolution": "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed."}]}});
        assert_eq!(kind(400, smc.clone()), Unsupported);
        // Text only, no MessageId (older iDRAC): still "already".
        assert_eq!(
            kind(
                409,
                json!({"error": {"message": "Server is already powered ON."}})
            ),
            NotInPresentState
        );
        assert_eq!(
            kind(409, json!({"error": {"message": "conflict"}})),
            DeviceError
        );
        assert_eq!(kind(503, json!({})), Busy);
        assert_eq!(
            kind(500, json!({"error": {"message": "the BMC is busy"}})),
            Busy
        );
        assert_eq!(
            kind(500, json!({"error": {"message": "internal"}})),
            DeviceError
        );
        assert_eq!(
            kind(
                400,
                json!({"error": {"@Message.ExtendedInfo": [{"MessageId": "Base.1.0.ResourceNotReadyRetry"}]}})
            ),
            Busy
        );
    }

    #[test]
    fn messages_quote_the_vendor_id_even_without_text() {
        let e = classify(
            400,
            ilo5(&["Power is off"]).to_string().as_bytes(),
            Stage::Command,
            "POST /r",
        );
        assert!(
            e.message
                .contains("iLO.2.16.InvalidOperationForSystemState (Power is off)"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("See @Message"), "{}", e.message);
        let e = classify(
            400,
            json!({"error": {"code": "Vendor.1.0.Weird",
                "@Message.ExtendedInfo": [{"MessageId": "Vendor.1.0.PowerLocked"}]}})
            .to_string()
            .as_bytes(),
            Stage::Command,
            "POST /r",
        );
        assert_eq!(e.kind, ErrorKind::DeviceError);
        assert!(
            e.message.contains("Vendor.1.0.PowerLocked"),
            "{}",
            e.message
        );
        let e = classify(
            409,
            idrac("IDRAC.2.8.PSU501", "Server is already powered ON.")
                .to_string()
                .as_bytes(),
            Stage::Command,
            "POST /r",
        );
        assert!(
            e.message
                .ends_with(": IDRAC.2.8.PSU501: Server is already powered ON."),
            "{}",
            e.message
        );
    }

    #[test]
    fn classification() {
        let e = classify(401, b"", Stage::Status, "GET /s");
        assert_eq!(e.kind, ErrorKind::PasswordInvalid);
        assert!(
            e.message.contains("rejected the credentials"),
            "{}",
            e.message
        );
        let e = classify(404, b"<html>x</html>", Stage::Status, "GET /redfish/v1");
        assert!(
            e.message.contains("GET /redfish/v1") && e.message.contains("Redfish enabled"),
            "{}",
            e.message
        );
        let e = classify(
            400,
            json!({"error": {"code": "Base.1.8.GeneralError", "message": "A general error has occurred. See ExtendedInfo for more information.",
                "@Message.ExtendedInfo": [{"MessageId": "Base.1.8.ActionParameterUnknown", "Message": "bad ResetType"}]}}).to_string().as_bytes(),
            Stage::Command,
            "POST /r",
        );
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert!(e.message.ends_with(": bad ResetType"), "{}", e.message);
    }
}
