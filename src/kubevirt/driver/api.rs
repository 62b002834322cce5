//! The API client under the driver: credentials set up once (the
//! kubeconfig or the service account, TLS, the namespace), the bearer or
//! basic header, one request on the shared HTTP layer with its 429
//! back-off within the deadline ([`Patience::THROTTLE`]) and the token
//! file read again after a 401, GETs, and API `Status` answers turned into
//! named errors.

use super::*;

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
        self.http = Some(super::super::http::client(&tls)?);
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

    /// The `Authorization` value of the credentials (`None`: a client
    /// certificate or no credentials).
    pub(super) fn auth_header(&self) -> Option<zeroize::Zeroizing<Vec<u8>>> {
        let value = |scheme: &str, s: &Secret| {
            let mut raw = zeroize::Zeroizing::new(scheme.as_bytes().to_vec());
            raw.extend_from_slice(s.expose());
            raw
        };
        match self.access.as_ref().map(|a| &a.auth) {
            Some(Auth::Token(t)) => Some(value("Bearer ", t)),
            Some(Auth::TokenFile(_)) => self.token.as_ref().map(|t| value("Bearer ", t)),
            Some(Auth::Basic(b)) => Some(value("Basic ", b)),
            _ => None,
        }
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
        let mut reread = false;
        loop {
            let mut req = Request::new(method.clone(), &url, what, stage)
                .header(reqwest::header::ACCEPT, "application/json")
                .within(self.cfg.request_timeout, deadline);
            req.max_body = super::super::http::MAX_BODY;
            if let Some(b) = body {
                req = req.json(b);
            }
            if let Some(a) = self.auth_header() {
                req = req
                    .secret_header(reqwest::header::AUTHORIZATION, &a)
                    .ok_or_else(|| {
                        DriverError::new(
                            ErrorKind::Config,
                            Stage::Authenticate,
                            "the credentials cannot be carried in an HTTP header",
                        )
                    })?;
            }
            let http = self.http.as_mut().expect("set up above");
            let reply = match http.send_patiently(&req, &Patience::THROTTLE).await {
                Ok(r) => r,
                // Sent and maybe carried out: the caller reads back.
                Err(f) if f.maybe_delivered() => return Ok(Call::Silent(f.into_error())),
                Err(f) => return Err(f.into_error()),
            };
            if reply.status != 401 {
                return Ok(Call::Reply(reply));
            }
            if let (false, Some(Auth::TokenFile(p))) =
                (reread, self.access.as_ref().map(|a| a.auth.clone()))
            {
                reread = true;
                if let Ok(t) = kubeconfig::read_token(&p) {
                    if Some(&t) != self.token.as_ref() {
                        tracing::debug!("401: the token file holds a new token; sending again");
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
                    if reread {
                        " (the token file was read again)"
                    } else {
                        ""
                    },
                    self.access.as_ref().map_or("", |a| a.source.as_str())
                ),
            ));
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
            return crate::parse::json(&reply.body, &crate::parse::Limits::ANSWER)
                .map(Ok)
                .map_err(|e| DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}")));
        }
        Ok(Err(model::api_status(
            reply.status,
            reply.scrubbed().as_bytes(),
        )))
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
