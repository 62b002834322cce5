//! The API client under the driver: credentials set up once (the
//! kubeconfig or the service account, TLS, the namespace), the bearer or
//! basic header, one request with its 429 back-off within the deadline and
//! the token file read again after a 401, GETs, and API `Status` answers
//! turned into named errors.

use super::*;

/// The longest pause between two attempts of a throttled request.
const THROTTLE_PAUSE_MAX: Duration = Duration::from_secs(10);
/// How long throttled requests are tried again without a deadline: never forever.
const THROTTLE_BUDGET: Duration = Duration::from_secs(60);

impl KubevirtDriver {
    fn base(&self) -> String {
        self.access
            .as_ref()
            .map_or(String::new(), |a| a.server.clone())
    }

    pub(super) fn vm_path(&self, res: &str) -> String {
        format!(
            "/apis/{}/{}/namespaces/{}/{res}/{}",
            self.cfg.group(),
            self.cfg.version(),
            self.namespace,
            self.cfg.vm
        )
    }

    pub(super) fn setup(&mut self) -> Result<(), DriverError> {
        if self.http.is_some() {
            return Ok(());
        }
        let sel = Selection {
            kubeconfig: self.cfg.kubeconfig.clone(),
            context: self.cfg.context.clone(),
        };
        let access = kubeconfig::resolve(&sel, &self.env)
            .map_err(|e| DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string()))?;
        let insecure = self.cfg.insecure || access.insecure;
        if insecure {
            self.warnings.push(format!(
                "the API server's certificate is not verified ({}): anyone on the path can \
                 impersonate {}",
                if self.cfg.insecure {
                    "--ssl-insecure"
                } else {
                    "insecure-skip-tls-verify in the kubeconfig"
                },
                access.server
            ));
        }
        let tls = TlsSetup {
            ca_pem: access.ca_pem.as_deref(),
            insecure,
            client: access
                .client
                .as_ref()
                .map(|(c, k)| (c.as_slice(), k.expose())),
        };
        self.http = Some(Http::new(&tls)?);
        if !access.server.starts_with("https://") {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                format!(
                    "the API server {} is not an https URL: fencekit sends credentials only over TLS",
                    model::printable(&access.server, 200)
                ),
            ));
        }
        self.token = match &access.auth {
            Auth::TokenFile(p) => Some(kubeconfig::read_token(p).map_err(|e| {
                DriverError::new(ErrorKind::Config, Stage::Authenticate, e.to_string())
            })?),
            _ => None,
        };
        if self.namespace.is_empty() {
            self.namespace = access
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_string());
        }
        self.access = Some(access);
        Ok(())
    }

    pub(super) fn auth_header(&self) -> Result<Option<HeaderValue>, DriverError> {
        let bad = || {
            DriverError::new(
                ErrorKind::Config,
                Stage::Authenticate,
                "the credentials cannot be carried in an HTTP header",
            )
        };
        let value = |scheme: &str, s: &Secret| {
            let mut raw = zeroize::Zeroizing::new(scheme.as_bytes().to_vec());
            raw.extend_from_slice(s.expose());
            sensitive(&raw)
        };
        Ok(match self.access.as_ref().map(|a| &a.auth) {
            Some(Auth::Token(t)) => Some(value("Bearer ", t).ok_or_else(bad)?),
            Some(Auth::TokenFile(_)) => match &self.token {
                Some(t) => Some(value("Bearer ", t).ok_or_else(bad)?),
                None => None,
            },
            Some(Auth::Basic(b)) => Some(value("Basic ", b).ok_or_else(bad)?),
            _ => None,
        })
    }

    /// One request; 429 is sent again after a pause within the deadline;
    /// a 401 with a token file re-reads the token once.
    pub(super) async fn call(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        what: &str,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Call, DriverError> {
        self.setup()?;
        let url = format!("{}{path}", self.base());
        let body = body.map(|b| b.to_string().into_bytes());
        let started = Instant::now();
        let until = deadline.unwrap_or(started + THROTTLE_BUDGET);
        let mut pause = Duration::from_millis(250);
        let mut reread = false;
        let mut tries = 0u32;
        loop {
            tries += 1;
            let auth = self.auth_header()?;
            let timeout = self.cfg.request_timeout;
            let http = self.http.as_mut().expect("set up above");
            let reply = match http
                .send(
                    method.clone(),
                    &url,
                    auth,
                    body.clone(),
                    what,
                    stage,
                    timeout,
                    deadline,
                )
                .await
            {
                Ok(r) => r,
                Err(Failed::Silent(e)) => return Ok(Call::Silent(e)),
                Err(f) => return Err(f.into_error()),
            };
            match reply.status {
                401 => {
                    if let (false, Some(Auth::TokenFile(p))) =
                        (reread, self.access.as_ref().map(|a| a.auth.clone()))
                    {
                        reread = true;
                        if let Ok(t) = kubeconfig::read_token(&p) {
                            if Some(&t) != self.token.as_ref() {
                                tracing::debug!(
                                    "401: the token file holds a new token; sending again"
                                );
                                self.token = Some(t);
                                continue;
                            }
                        }
                    }
                    return Err(DriverError::new(
                        ErrorKind::PasswordInvalid,
                        Stage::Authenticate,
                        format!(
                            "the API server refused the credentials for {what} (401 Unauthorized): \
                             the token is expired, revoked or rotated{} ({})",
                            if reread { " (the token file was read again)" } else { "" },
                            self.access.as_ref().map_or("", |a| a.source.as_str())
                        ),
                    ));
                }
                429 => {
                    self.throttled += 1;
                    let asked = reply.retry_after.map(Duration::from_secs);
                    let wait = asked.unwrap_or(pause).max(pause).min(THROTTLE_PAUSE_MAX);
                    if Instant::now() + wait >= until {
                        return Err(DriverError::new(
                            ErrorKind::Busy,
                            stage,
                            format!(
                                "the API server throttled {what} {tries} time(s) (429{}); no time \
                                 is left to try again ({:.1}s spent)",
                                reply
                                    .retry_after
                                    .map(|s| format!(", Retry-After {s}s"))
                                    .unwrap_or_default(),
                                started.elapsed().as_secs_f64()
                            ),
                        ));
                    }
                    tracing::debug!(
                        tries,
                        wait_ms = wait.as_millis() as u64,
                        "429; trying again"
                    );
                    tokio::time::sleep(wait).await;
                    pause = (pause * 2).min(THROTTLE_PAUSE_MAX);
                }
                _ => return Ok(Call::Reply(reply)),
            }
        }
    }

    /// A GET whose answer must come: `Ok(None)` for 404.
    pub(super) async fn get(
        &mut self,
        path: &str,
        what: &str,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Result<Value, model::ApiStatus>, DriverError> {
        let reply = match self
            .call(Method::GET, path, None, what, stage, deadline)
            .await?
        {
            Call::Reply(r) => r,
            Call::Silent(e) => return Err(e),
        };
        if (200..300).contains(&reply.status) {
            return serde_json::from_slice(&reply.body).map(Ok).map_err(|e| {
                DriverError::new(
                    ErrorKind::Protocol,
                    stage,
                    format!("the answer to {what} is not JSON: {e}"),
                )
            });
        }
        Ok(Err(model::api_status(reply.status, &reply.body)))
    }

    pub(super) fn status_error(
        &self,
        st: &model::ApiStatus,
        what: &str,
        stage: Stage,
    ) -> DriverError {
        let kind = match st.code {
            403 => ErrorKind::PrivilegeNotObtained,
            404 => ErrorKind::Config,
            409 => ErrorKind::NotInPresentState,
            500..=599 if st.code == 503 || st.code == 504 => ErrorKind::Busy,
            _ => ErrorKind::DeviceError,
        };
        let msg = match st.code {
            403 => format!(
                "the API server forbids {what} (403 Forbidden: {}); the RBAC of the credentials \
                 must allow it (docs/far.md)",
                st.message
            ),
            404 => format!(
                "no VirtualMachine '{}' in namespace '{}' ({what}: 404 {}): check the VM name \
                 and the namespace",
                self.cfg.vm, self.namespace, st.message
            ),
            c => format!(
                "the API server answered {what} with {c} {}: {}",
                st.reason, st.message
            ),
        };
        DriverError::new(kind, stage, msg)
    }
}
