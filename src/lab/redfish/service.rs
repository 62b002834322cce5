//! The service's connections and routing: accepting (the TLS handshake
//! bounded), HTTP/1.1 through hyper, the per-request fault knobs (delay,
//! silence, a transition at the first request), authentication (Basic or
//! a session token), SessionService (sessions created and deleted, in a
//! bounded number of slots) and which handler answers which path. The
//! resources themselves are [`super::resources`]', resets and tasks
//! [`super::actions`]'.

use super::actions::{reset, task};
use super::http::{empty, error, method_not_allowed, not_found, read_body, respond, Answer};
use super::resources::{
    chassis, chassis_collection, chassis_power, is_system, service_root, system, systems,
};
use super::state::{reset_types, Shared};
use base64::Engine;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, LOCATION, WWW_AUTHENTICATE};
use hyper::{Method, Request};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// A TLS handshake or request header that takes longer is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most sessions at once (real BMCs have few slots; quirk 20).
const MAX_SESSIONS: usize = 64;

pub(super) async fn accept_loop(
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
) {
    // Connections live in this set, so aborting the loop ends them all.
    let mut conns = JoinSet::new();
    loop {
        while conns.try_join_next().is_some() {}
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = tcp.set_nodelay(true);
        shared.inner().stats.connections += 1;
        let shared = shared.clone();
        let acceptor = acceptor.clone();
        conns.spawn(async move {
            match acceptor {
                Some(a) => {
                    if let Ok(Ok(tls)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, a.accept(tcp)).await
                    {
                        serve_connection(tls, shared).await;
                    }
                }
                None => serve_connection(tcp, shared).await,
            }
        });
    }
}

pub(super) async fn serve_connection<S>(io: S, shared: Arc<Shared>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(handle(&shared, req).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HANDSHAKE_TIMEOUT)
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service)
        .await;
}

/// Basic credentials or a session token; `Some(true)` basic, `Some(false)` token.
pub(super) fn authenticate(shared: &Shared, req: &Request<Incoming>) -> Option<bool> {
    if let Some(t) = req.headers().get("X-Auth-Token") {
        let t = t.to_str().ok()?;
        return shared.inner().sessions.contains_key(t).then_some(false);
    }
    let h = req
        .headers()
        .get(hyper::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, b64) = h.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    let text = std::str::from_utf8(&raw).ok()?;
    let (u, p) = text.split_once(':')?;
    (u == shared.opts.username && p == shared.opts.password).then_some(true)
}

pub(super) async fn handle(shared: &Arc<Shared>, req: Request<Incoming>) -> Answer {
    let (delay, silent) = {
        let mut c = shared.bmc.lock();
        c.counters.received += 1;
        (c.faults.delay, c.faults.silent)
    };
    let begin = {
        let mut i = shared.inner();
        i.stats.requests += 1;
        let first = !i.begun;
        i.begun = true;
        i.faults.transition_at_first_request.filter(|_| first)
    };
    if let Some(on) = begin {
        shared.bmc.set_on(!on);
        shared.bmc.lock().begin_transition(on);
    }
    if silent {
        // Accepted, read, and never answered: clients must give up on their own.
        std::future::pending::<()>().await;
    }
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let answer = route(shared, req).await;
    shared.bmc.lock().counters.answered += 1;
    answer
}

pub(super) async fn route(shared: &Arc<Shared>, req: Request<Incoming>) -> Answer {
    let method = req.method().clone();
    let path = req.uri().path().trim_end_matches('/').to_string();
    let path = if path.is_empty() {
        "/".to_string()
    } else {
        path
    };
    let sessions_path = "/redfish/v1/SessionService/Sessions";
    // Open to everyone: the service root (DSP0266) and session creation.
    match (&method, path.as_str()) {
        (&Method::GET, "/redfish") => return respond(200, &json!({"v1": "/redfish/v1/"})),
        (&Method::GET, "/redfish/v1") => return respond(200, &service_root(shared)),
        (&Method::POST, p) if p == sessions_path && shared.opts.sessions => {
            return create_session(shared, req).await
        }
        // Without SessionService (like sushy-tools), its URIs do not exist.
        (_, p) if p.starts_with("/redfish/v1/SessionService") && !shared.opts.sessions => {
            return not_found(p)
        }
        _ => {}
    }
    match authenticate(shared, &req) {
        Some(basic) => {
            let mut i = shared.inner();
            if basic {
                i.stats.basic_auth += 1;
            } else {
                i.stats.token_auth += 1;
            }
        }
        None => {
            shared.inner().stats.auth_failures += 1;
            {
                let mut c = shared.bmc.lock();
                c.counters.auth_attempts += 1;
                c.counters.auth_failures += 1;
            }
            let mut r = error(
                401,
                "Base.1.8.NoValidSession",
                "There is no valid session established with the implementation.",
            );
            r.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"fencekit lab\""),
            );
            return r;
        }
    }
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    match (method, segments.as_slice()) {
        (Method::GET, ["redfish", "v1", "Systems"]) => respond(200, &systems(shared)),
        (Method::GET, ["redfish", "v1", "Systems", id]) => system(shared, id, &path),
        (Method::POST, ["redfish", "v1", "Systems", id, "Actions", "ComputerSystem.Reset"]) => {
            if !is_system(shared, id) {
                return not_found(&path);
            }
            let id = id.to_string();
            match read_body(req).await {
                Ok(body) => {
                    let answer = reset(shared, &id, &body);
                    let hold = shared.inner().faults.reset_answer_delay;
                    if !hold.is_zero() {
                        tokio::time::sleep(hold).await;
                    }
                    answer
                }
                Err(a) => a,
            }
        }
        (Method::GET, ["redfish", "v1", "Systems", id, "ResetActionInfo"])
            if shared.opts.action_info && is_system(shared, id) =>
        {
            respond(
                200,
                &json!({
                    "@odata.id": path,
                    "@odata.type": "#ActionInfo.v1_1_2.ActionInfo",
                    "Id": "ResetActionInfo",
                    "Name": "Reset Action Info",
                    "Parameters": [{
                        "Name": "ResetType",
                        "Required": true,
                        "DataType": "String",
                        "AllowableValues": reset_types(shared),
                    }],
                }),
            )
        }
        (Method::GET, ["redfish", "v1", "SessionService"]) if shared.opts.sessions => respond(
            200,
            &json!({
                "@odata.id": "/redfish/v1/SessionService",
                "@odata.type": "#SessionService.v1_1_8.SessionService",
                "Id": "SessionService",
                "Name": "Session Service",
                "ServiceEnabled": true,
                "SessionTimeout": 600,
                "Sessions": {"@odata.id": sessions_path},
            }),
        ),
        (Method::GET, ["redfish", "v1", "SessionService", "Sessions"]) if shared.opts.sessions => {
            let ids: Vec<u64> = shared.inner().sessions.values().copied().collect();
            let members: Vec<Value> = ids
                .iter()
                .map(|n| json!({"@odata.id": format!("{sessions_path}/{n}")}))
                .collect();
            respond(
                200,
                &json!({
                    "@odata.id": sessions_path,
                    "@odata.type": "#SessionCollection.SessionCollection",
                    "Name": "Session Collection",
                    "Members@odata.count": members.len(),
                    "Members": members,
                }),
            )
        }
        (Method::DELETE, ["redfish", "v1", "SessionService", "Sessions", n])
            if shared.opts.sessions =>
        {
            let Ok(n) = n.parse::<u64>() else {
                return not_found(&path);
            };
            let removed = {
                let mut i = shared.inner();
                let before = i.sessions.len();
                i.sessions.retain(|_, v| *v != n);
                let removed = i.sessions.len() < before;
                if removed {
                    i.stats.sessions_deleted += 1;
                    i.stats.sessions_open = i.sessions.len() as u64;
                }
                removed
            };
            if removed {
                shared.bmc.lock().counters.closed += 1;
                empty(204)
            } else {
                not_found(&path)
            }
        }
        (Method::GET, ["redfish", "v1", "TaskService", "Tasks", n]) => task(shared, n, &path),
        (Method::GET, ["redfish", "v1", "Chassis"]) => respond(200, &chassis_collection(shared)),
        (Method::GET, ["redfish", "v1", "Chassis", id]) => chassis(shared, id, &path),
        (Method::GET, ["redfish", "v1", "Chassis", id, "Power"]) => {
            chassis_power(shared, id, &path)
        }
        (
            _,
            ["redfish", "v1", "Systems", ..]
            | ["redfish", "v1", "SessionService", ..]
            | ["redfish", "v1", "TaskService", ..],
        ) if known_resource(shared, &segments) => method_not_allowed(),
        _ => not_found(&path),
    }
}

pub(super) fn known_resource(shared: &Shared, segments: &[&str]) -> bool {
    match segments {
        ["redfish", "v1", "Systems"] => true,
        ["redfish", "v1", "Systems", id] => is_system(shared, id),
        ["redfish", "v1", "Systems", id, "Actions", "ComputerSystem.Reset"] => {
            is_system(shared, id)
        }
        ["redfish", "v1", "SessionService", ..] => shared.opts.sessions,
        _ => false,
    }
}

pub(super) async fn create_session(shared: &Arc<Shared>, req: Request<Incoming>) -> Answer {
    let body = match read_body(req).await {
        Ok(b) => b,
        Err(a) => return a,
    };
    let creds = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
        Some((
            v.get("UserName")?.as_str()?.to_string(),
            v.get("Password")?.as_str()?.to_string(),
        ))
    });
    {
        let mut c = shared.bmc.lock();
        c.counters.auth_attempts += 1;
    }
    let Some((user, pass)) = creds else {
        return error(
            400,
            "Base.1.8.PropertyMissing",
            "The property UserName or Password is a required property and must be included in the request.",
        );
    };
    if user != shared.opts.username || pass != shared.opts.password {
        shared.inner().stats.auth_failures += 1;
        shared.bmc.lock().counters.auth_failures += 1;
        return error(
            401,
            "Base.1.8.ResourceAtUriUnauthorized",
            "While accessing the resource at /redfish/v1/SessionService/Sessions, the service received an authorization error.",
        );
    }
    let (token, n) = {
        let mut i = shared.inner();
        if i.sessions.len() >= MAX_SESSIONS {
            // Quirk 20 (iDRAC RAC0218): out of session slots.
            return error(
                503,
                "Base.1.8.SessionLimitExceeded",
                "The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.",
            );
        }
        let n = i.next_session;
        i.next_session += 1;
        let token: String = {
            let bytes: [u8; 16] = rand::random();
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        };
        i.sessions.insert(token.clone(), n);
        i.stats.sessions_created += 1;
        i.stats.sessions_open = i.sessions.len() as u64;
        (token, n)
    };
    shared.bmc.lock().counters.sessions += 1;
    let uri = format!("/redfish/v1/SessionService/Sessions/{n}");
    let mut r = respond(
        201,
        &json!({
            "@odata.id": uri,
            "@odata.type": "#Session.v1_3_0.Session",
            "Id": n.to_string(),
            "Name": "User Session",
            "UserName": user,
        }),
    );
    if let Ok(v) = HeaderValue::from_str(&token) {
        r.headers_mut().insert("X-Auth-Token", v);
    }
    if let Ok(v) = HeaderValue::from_str(&uri) {
        r.headers_mut().insert(LOCATION, v);
    }
    r
}
