//! The lab's HTTP answer shapes: a JSON body with Redfish's headers, an
//! empty answer, a Redfish error with its `@Message.ExtendedInfo`, 404 and
//! 405, and the bounded read of a request body. What to answer is decided
//! beside it: routing in [`super::service`], resources in
//! [`super::resources`], resets and tasks in [`super::actions`].

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Value};

/// Largest request body read.
const MAX_REQUEST_BODY: usize = 64 * 1024;

pub(super) type Answer = Response<Full<Bytes>>;

pub(super) fn respond(status: u16, body: &Value) -> Answer {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    r.headers_mut()
        .insert("OData-Version", HeaderValue::from_static("4.0"));
    r
}

pub(super) fn empty(status: u16) -> Answer {
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::NO_CONTENT);
    r
}

pub(super) fn error(status: u16, message_id: &str, message: &str) -> Answer {
    respond(
        status,
        &json!({"error": {
            "code": "Base.1.8.GeneralError",
            "message": "A general error has occurred. See ExtendedInfo for more information.",
            "@Message.ExtendedInfo": [{
                "@odata.type": "#Message.v1_0_0.Message",
                "MessageId": message_id,
                "Message": message,
                "Severity": "Warning",
            }],
        }}),
    )
}

pub(super) fn not_found(path: &str) -> Answer {
    error(
        404,
        "Base.1.8.ResourceMissingAtURI",
        &format!("The resource at the URI {path} was not found."),
    )
}

pub(super) fn method_not_allowed() -> Answer {
    error(
        405,
        "Base.1.8.OperationNotAllowed",
        "The HTTP method is not allowed on this resource.",
    )
}

pub(super) async fn read_body(req: Request<Incoming>) -> Result<Bytes, Answer> {
    match Limited::new(req.into_body(), MAX_REQUEST_BODY)
        .collect()
        .await
    {
        Ok(b) => Ok(b.to_bytes()),
        Err(_) => Err(error(
            413,
            "Base.1.8.GeneralError",
            "The request body is too large or broken.",
        )),
    }
}
