//! A vim25 SOAP session over HTTPS on the shared HTTP layer
//! ([`crate::http`]; the TLS policy handed in by the caller): the session
//! cookie kept as a credential, a deadline on every call, bounded answers,
//! the password and the cookie scrubbed from every text the server sends
//! back. What each answer means is [`super::model`]'s.
//!
//! Power requests are never retried here: a request whose answer is lost
//! comes back as [`Submitted::Lost`], and the caller finds its task again
//! ([`Client::find_lost`]) instead of sending a second one.

use super::model::{self, TaskEnd, VmSelector, VmView};
use super::soap::{self, MoRef, PowerMethod, ServiceContent, SoapError, TaskInfo};
use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::http::{Request, Setup};
use crate::platform::lost::Lost;
use reqwest::header::{HeaderName, COOKIE};
use reqwest::Method;
use std::time::{Duration, Instant};

/// Largest answer read (a name search over a large inventory pages at the
/// collector's default of a few hundred objects).
pub const MAX_BODY: usize = 16 << 20;
/// The API version asked for (every call fencing makes exists in 6.5).
const SOAP_ACTION: &str = "\"urn:vim25/6.5\"";

/// A session with one vCenter or ESXi.
pub struct Client {
    http: crate::http::Client,
    url: String,
    cookie: Option<crate::secret::Secret>,
    content: Option<ServiceContent>,
    /// SOAP calls sent.
    pub calls: u32,
}

/// What became of a power request.
#[derive(Debug)]
pub enum Submitted {
    /// The server answered with its task.
    Task(MoRef),
    /// The request may have reached the server, but no answer came: find
    /// the task with [`Client::find_lost`]; never send it again blindly.
    Lost(DriverError),
}

fn soap_error(e: SoapError, stage: Stage) -> DriverError {
    match e {
        SoapError::Fault { name, message } => DriverError::new(
            model::fault_kind(&name),
            stage,
            if name.is_empty() {
                format!("soap fault: {message}")
            } else {
                format!("vSphere fault {name}: {message}")
            },
        ),
        SoapError::Malformed(m) => DriverError::new(ErrorKind::Protocol, stage, m),
    }
}

impl Client {
    /// A client for `https://HOST[:PORT]/sdk` with the given TLS
    /// configuration (certificate checks are the caller's policy).
    pub fn new(url: &str, tls: rustls::ClientConfig) -> Result<Client, DriverError> {
        let http = crate::http::Client::with_tls(Setup::new("vCenter"), tls)?;
        Ok(Client {
            http,
            url: url.to_string(),
            cookie: None,
            content: None,
            calls: 0,
        })
    }

    /// A fault or a malformed answer as an error, scrubbed of what was sent.
    fn soap_err(&self, e: SoapError, stage: Stage) -> DriverError {
        let mut d = soap_error(e, stage);
        d.message = self.http.scrub().apply(&d.message);
        d
    }

    /// `HOST:PORT` of the endpoint (as the URL writes it).
    pub fn authority(&self) -> &str {
        let rest = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |p| p.1);
        rest.split('/').next().unwrap_or(rest)
    }

    /// The service content, once [`connect`](Self::connect)ed.
    pub fn content(&self) -> Option<&ServiceContent> {
        self.content.as_ref()
    }

    fn managers(&self, stage: Stage) -> Result<ServiceContent, DriverError> {
        self.content
            .clone()
            .ok_or_else(|| DriverError::new(ErrorKind::Protocol, stage, "not connected"))
    }

    /// One SOAP call: the answer's text (a SOAP fault is an answer too).
    /// `Err` with kind Timeout or Unreachable when no answer came.
    async fn call(
        &mut self,
        body: String,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<String, DriverError> {
        self.exchange(body, what, stage, deadline)
            .await
            .map_err(Lost::into_error)
    }

    /// [`Client::call`], keeping whether the request may have been
    /// delivered and carried out when no SOAP answer came.
    async fn exchange(
        &mut self,
        body: String,
        what: &str,
        stage: Stage,
        deadline: Instant,
    ) -> Result<String, Lost> {
        let mut req = Request::new(Method::POST, &self.url, what, stage)
            .body("text/xml; charset=utf-8", body.into_bytes())
            .header(HeaderName::from_static("soapaction"), SOAP_ACTION)
            .within(
                deadline.saturating_duration_since(Instant::now()),
                Some(deadline),
            );
        req.max_body = MAX_BODY;
        if let Some(c) = &self.cookie {
            // It came in a header, so it can go in one.
            req.add_secret(COOKIE, c.expose());
        }
        self.calls += 1;
        // Nothing reached the server: `Lost::Error`; sent, no (whole)
        // answer, or one that is no SOAP: `Lost::Silent`.
        let reply = self.http.send(&req).await?;
        let cookie = reply
            .headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.starts_with("vmware_soap_session="))
            .and_then(|v| v.split(';').next())
            .map(crate::secret::Secret::from_str_value);
        if let Some(c) = cookie {
            self.http.scrub().remember_header(c.expose());
            self.cookie = Some(c);
        }
        // vim25 answers faults with 500; anything else not 200 is no SOAP.
        if reply.status != 200 && reply.status != 500 {
            return Err(Lost::Silent(self.http.error(
                ErrorKind::DeviceError,
                stage,
                format!("{what}: HTTP {} from {}", reply.status, self.url),
            )));
        }
        // The answer as sent: a session's key is part of some morefs, so
        // only what is printed of it is scrubbed (`soap_err`).
        String::from_utf8(reply.body).map_err(|_| {
            Lost::Silent(DriverError::new(
                ErrorKind::Protocol,
                stage,
                format!("{what}: not UTF-8"),
            ))
        })
    }

    /// RetrieveServiceContent and Login. Returns what was negotiated.
    pub async fn connect(
        &mut self,
        user: &str,
        password: &str,
        deadline: Instant,
    ) -> Result<String, DriverError> {
        let st = Stage::Authenticate;
        // A new session: a Login on a session that is logged in already is
        // refused (InvalidLogin).
        self.cookie = None;
        let xml = self
            .call(
                soap::retrieve_service_content(),
                "RetrieveServiceContent",
                st,
                deadline,
            )
            .await?;
        let sc = soap::service_content(&xml).map_err(|e| self.soap_err(e, st))?;
        self.http.scrub().remember(password.as_bytes());
        let xml = self
            .call(
                soap::login(&sc.session_manager, user, password),
                "Login",
                st,
                deadline,
            )
            .await?;
        soap::login_answer(&xml).map_err(|e| self.soap_err(e, st))?;
        let said = format!("vim25 {} {}", sc.api_type, sc.api_version);
        self.content = Some(sc);
        Ok(said)
    }

    /// Logout (best effort: the session expires on the server anyway).
    pub async fn logout(&mut self, deadline: Instant) -> Result<(), DriverError> {
        let sc = self.managers(Stage::Close)?;
        let xml = self
            .call(
                soap::logout(&sc.session_manager),
                "Logout",
                Stage::Close,
                deadline,
            )
            .await?;
        self.cookie = None;
        soap::empty_answer(&xml, "LogoutResponse").map_err(|e| self.soap_err(e, Stage::Close))
    }

    async fn properties(
        &mut self,
        kind: &str,
        objs: &[MoRef],
        paths: &[&str],
        stage: Stage,
        deadline: Instant,
    ) -> Result<Vec<soap::Object>, DriverError> {
        let sc = self.managers(stage)?;
        let xml = self
            .call(
                soap::retrieve_properties(&sc.property_collector, kind, objs, paths),
                "RetrievePropertiesEx",
                stage,
                deadline,
            )
            .await?;
        let page = soap::properties_answer(&xml).map_err(|e| self.soap_err(e, stage))?;
        model::check_objects(objs, &page.objects).map_err(|e| {
            DriverError::new(
                ErrorKind::StatusUnreadable,
                stage,
                format!("RetrievePropertiesEx of {kind}: {e}"),
            )
        })?;
        Ok(page.objects)
    }

    /// The VMs' views, their hosts' states added.
    async fn views(
        &mut self,
        objects: Vec<soap::Object>,
        deadline: Instant,
    ) -> Result<Vec<VmView>, DriverError> {
        let mut views: Vec<VmView> = objects.iter().map(VmView::from_object).collect();
        let mut hosts: Vec<MoRef> = views.iter().filter_map(|v| v.host.clone()).collect();
        hosts.sort_by(|a, b| a.value.cmp(&b.value));
        hosts.dedup();
        if !hosts.is_empty() {
            let hs = self
                .properties(
                    "HostSystem",
                    &hosts,
                    &["name", "runtime.connectionState"],
                    Stage::Status,
                    deadline,
                )
                .await?;
            for v in &mut views {
                if let Some(h) = hs.iter().find(|h| Some(&h.obj) == v.host.as_ref()) {
                    v.host_name = h.text("name").map(str::to_string);
                    v.host_connection = h.text("runtime.connectionState").map(str::to_string);
                }
            }
        }
        Ok(views)
    }

    /// Finds the one VM the selector names (ambiguous names refused).
    pub async fn find(
        &mut self,
        sel: &VmSelector,
        deadline: Instant,
    ) -> Result<VmView, DriverError> {
        self.find_in(sel, None, deadline).await
    }

    /// The datacenter at an inventory path (`DC1`, `Folder/DC1`).
    pub async fn datacenter(
        &mut self,
        path: &str,
        deadline: Instant,
    ) -> Result<MoRef, DriverError> {
        let st = Stage::Status;
        let sc = self.managers(st)?;
        let xml = self
            .call(
                soap::find_by_inventory_path(&sc.search_index, path),
                "FindByInventoryPath",
                st,
                deadline,
            )
            .await?;
        match soap::find_by_path_answer(&xml).map_err(|e| self.soap_err(e, st))? {
            Some(m) if m.kind == "Datacenter" => Ok(m),
            Some(m) => Err(DriverError::new(
                ErrorKind::Config,
                st,
                format!(
                    "the inventory path '{path}' is a {}, not a datacenter",
                    m.kind
                ),
            )),
            None => Err(DriverError::new(
                ErrorKind::Config,
                st,
                format!("no datacenter at the inventory path '{path}'"),
            )),
        }
    }

    /// `paths` of every VM under `container` (the root folder or a
    /// datacenter), every page read; the view is destroyed after.
    async fn in_view(
        &mut self,
        container: &MoRef,
        paths: &[&str],
        deadline: Instant,
    ) -> Result<Vec<soap::Object>, DriverError> {
        let st = Stage::Status;
        let sc = self.managers(st)?;
        let xml = self
            .call(
                soap::create_vm_view(&sc.view_manager, container),
                "CreateContainerView",
                st,
                deadline,
            )
            .await?;
        let view = soap::moref_answer(&xml, "CreateContainerViewResponse")
            .map_err(|e| self.soap_err(e, st))?;
        let read = async {
            let xml = self
                .call(
                    soap::retrieve_view_properties(&sc.property_collector, &view, paths),
                    "RetrievePropertiesEx",
                    st,
                    deadline,
                )
                .await?;
            let mut page = soap::properties_answer(&xml).map_err(|e| self.soap_err(e, st))?;
            let mut all = std::mem::take(&mut page.objects);
            while let Some(token) = page.token.take() {
                let xml = self
                    .call(
                        soap::continue_retrieve(&sc.property_collector, &token),
                        "ContinueRetrievePropertiesEx",
                        st,
                        deadline,
                    )
                    .await?;
                page = soap::continue_answer(&xml).map_err(|e| self.soap_err(e, st))?;
                all.append(&mut page.objects);
            }
            Ok::<_, DriverError>(all)
        }
        .await;
        let _ = self
            .call(soap::destroy_view(&view), "DestroyView", st, deadline)
            .await;
        read
    }

    /// Every VM (of one datacenter, or of the whole inventory), with its
    /// host's state, sorted by name then managed object id.
    pub async fn list_vms(
        &mut self,
        datacenter: Option<&MoRef>,
        deadline: Instant,
    ) -> Result<Vec<VmView>, DriverError> {
        let sc = self.managers(Stage::Status)?;
        let objects = self
            .in_view(
                datacenter.unwrap_or(&sc.root_folder),
                soap::VM_PATHS,
                deadline,
            )
            .await?;
        let mut views = self.views(objects, deadline).await?;
        views.sort_by(|a, b| (&a.name, &a.moref.value).cmp(&(&b.name, &b.moref.value)));
        Ok(views)
    }

    /// [`find`](Self::find) within one datacenter (`None`: the whole
    /// inventory). A managed object id is unique in its vCenter: the
    /// datacenter does not narrow it.
    pub async fn find_in(
        &mut self,
        sel: &VmSelector,
        datacenter: Option<&MoRef>,
        deadline: Instant,
    ) -> Result<VmView, DriverError> {
        let st = Stage::Status;
        let sc = self.managers(st)?;
        let objects = match sel {
            VmSelector::Moref(m) => {
                self.properties(
                    "VirtualMachine",
                    &[MoRef::new("VirtualMachine", m)],
                    soap::VM_PATHS,
                    st,
                    deadline,
                )
                .await
                // An unknown id is a fault (ManagedObjectNotFound): not found.
                .or_else(|e| {
                    if e.kind == ErrorKind::DeviceError {
                        Ok(Vec::new())
                    } else {
                        Err(e)
                    }
                })?
            }
            VmSelector::BiosUuid(u) | VmSelector::InstanceUuid(u) => {
                let instance = matches!(sel, VmSelector::InstanceUuid(_));
                let xml = self
                    .call(
                        soap::find_all_by_uuid_in(&sc.search_index, datacenter, u, instance),
                        "FindAllByUuid",
                        st,
                        deadline,
                    )
                    .await?;
                let refs = soap::find_all_answer(&xml).map_err(|e| self.soap_err(e, st))?;
                if refs.is_empty() {
                    Vec::new()
                } else {
                    self.properties("VirtualMachine", &refs, soap::VM_PATHS, st, deadline)
                        .await?
                }
            }
            VmSelector::Name(_) => {
                let all = self
                    .in_view(datacenter.unwrap_or(&sc.root_folder), &["name"], deadline)
                    .await?;
                let VmSelector::Name(n) = sel else {
                    unreachable!()
                };
                let named: Vec<MoRef> = all
                    .into_iter()
                    .filter(|o| o.text("name") == Some(n.as_str()))
                    .map(|o| o.obj)
                    .collect();
                if named.is_empty() {
                    Vec::new()
                } else {
                    self.properties("VirtualMachine", &named, soap::VM_PATHS, st, deadline)
                        .await?
                }
            }
        };
        let views = self.views(objects, deadline).await?;
        model::pick(sel, views)
    }

    /// Reads one VM again (its host's state included): the answer must be
    /// about the VM `first` found (moref and UUIDs).
    pub async fn read(&mut self, first: &VmView, deadline: Instant) -> Result<VmView, DriverError> {
        let vm = &first.moref;
        let objects = self
            .properties(
                "VirtualMachine",
                std::slice::from_ref(vm),
                soap::VM_PATHS,
                Stage::Status,
                deadline,
            )
            .await?;
        let mut views = self.views(objects, deadline).await?;
        if views.len() != 1 {
            return Err(DriverError::new(
                ErrorKind::DeviceError,
                Stage::Status,
                format!("virtual machine {} is gone", vm.value),
            ));
        }
        let now = views.remove(0);
        model::check_same_vm(first, &now).map_err(|e| {
            DriverError::new(
                ErrorKind::StatusUnreadable,
                Stage::Status,
                format!("RetrievePropertiesEx of VirtualMachine: {e}; not believed"),
            )
        })?;
        Ok(now)
    }

    /// The VM's `recentTask` list.
    pub async fn recent_tasks(
        &mut self,
        vm: &MoRef,
        deadline: Instant,
    ) -> Result<Vec<MoRef>, DriverError> {
        let objects = self
            .properties(
                "VirtualMachine",
                std::slice::from_ref(vm),
                &["recentTask"],
                Stage::Command,
                deadline,
            )
            .await?;
        Ok(objects
            .first()
            .map(|o| o.references("recentTask").to_vec())
            .unwrap_or_default())
    }

    /// The tasks' infos.
    pub async fn task_infos(
        &mut self,
        tasks: &[MoRef],
        deadline: Instant,
    ) -> Result<Vec<TaskInfo>, DriverError> {
        if tasks.is_empty() {
            return Ok(Vec::new());
        }
        let sc = self.managers(Stage::Wait)?;
        let xml = self
            .call(
                soap::retrieve_properties(&sc.property_collector, "Task", tasks, &["info"]),
                "RetrievePropertiesEx",
                Stage::Wait,
                deadline,
            )
            .await?;
        soap::task_infos(&xml).map_err(|e| self.soap_err(e, Stage::Wait))
    }

    /// Sends one power request, once.
    pub async fn submit(
        &mut self,
        method: PowerMethod,
        vm: &MoRef,
        deadline: Instant,
    ) -> Result<Submitted, DriverError> {
        let st = Stage::Command;
        match self
            .exchange(soap::power_task(method, vm), method.method(), st, deadline)
            .await
        {
            Ok(xml) => {
                let task = soap::moref_answer(&xml, &format!("{}Response", method.method()))
                    .map_err(|e| self.soap_err(e, st))?;
                Ok(Submitted::Task(task))
            }
            // Sent and maybe carried out (no answer, or one that is no
            // SOAP): the task is looked for, never sent again.
            Err(Lost::Silent(e)) => Ok(Submitted::Lost(e)),
            // Nothing reached the server (no connection, TLS refused).
            Err(Lost::Error(e)) => Err(e),
        }
    }

    /// After [`Submitted::Lost`]: the task the request created, if any
    /// (`before`: the VM's recentTask read before the request).
    pub async fn find_lost(
        &mut self,
        method: PowerMethod,
        vm: &MoRef,
        before: &[MoRef],
        deadline: Instant,
    ) -> Result<Option<MoRef>, DriverError> {
        let recent = self.recent_tasks(vm, deadline).await?;
        let infos = self.task_infos(&recent, deadline).await?;
        Ok(model::lost_task(method, vm, before, &infos)?.map(|t| t.task.clone()))
    }

    /// Follows a task to its end, reading it every `every`, until `deadline`.
    pub async fn follow(
        &mut self,
        task: &MoRef,
        every: Duration,
        deadline: Instant,
    ) -> Result<(), DriverError> {
        loop {
            let infos = self
                .task_infos(std::slice::from_ref(task), deadline)
                .await?;
            let Some(info) = infos.first() else {
                return Err(DriverError::new(
                    ErrorKind::Protocol,
                    Stage::Wait,
                    format!("task {} has no info", task.value),
                ));
            };
            match model::task_end(info) {
                TaskEnd::Done => return Ok(()),
                TaskEnd::Failed(e) => return Err(e),
                TaskEnd::Pending => {}
            }
            if Instant::now() + every >= deadline {
                return Err(DriverError::new(
                    ErrorKind::TransitionTimeout,
                    Stage::Wait,
                    format!(
                        "task {} ({}) still {} at the deadline",
                        task.value, info.description_id, info.state
                    ),
                ));
            }
            tokio::time::sleep(every).await;
        }
    }
}
