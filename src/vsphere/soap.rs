//! vim25 SOAP messages: request envelopes built as text (every value
//! escaped), answers read with `roxmltree`. Nothing here panics on bytes
//! from the network; an answer that does not fit is a [`SoapError`].

use std::fmt;

/// The vim25 namespace of every request and answer body.
pub const VIM25: &str = "urn:vim25";
const SOAPENV: &str = "http://schemas.xmlsoap.org/soap/envelope/";
const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// A managed object reference (`type="VirtualMachine"`, `vm-123`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MoRef {
    /// The managed object type (`VirtualMachine`, `HostSystem`, `Task`, …).
    pub kind: String,
    /// Its id (`vm-123`).
    pub value: String,
}

impl MoRef {
    /// A reference of the given type and id.
    pub fn new(kind: &str, value: &str) -> Self {
        MoRef {
            kind: kind.to_string(),
            value: value.to_string(),
        }
    }

    fn xml(&self, element: &str) -> String {
        format!(
            "<{element} type=\"{}\">{}</{element}>",
            escape(&self.kind),
            escape(&self.value)
        )
    }
}

impl fmt::Display for MoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.value)
    }
}

/// Escapes text for an element's content or an attribute value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole request: the body element wrapped in a SOAP 1.1 envelope.
pub fn envelope(body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <soapenv:Envelope xmlns:soapenv=\"{SOAPENV}\" xmlns:xsi=\"{XSI}\">\
         <soapenv:Body>{body}</soapenv:Body></soapenv:Envelope>"
    )
}

fn call(method: &str, this: &MoRef, args: &str) -> String {
    envelope(&format!(
        "<{method} xmlns=\"{VIM25}\">{}{args}</{method}>",
        this.xml("_this")
    ))
}

/// `RetrieveServiceContent` on the `ServiceInstance`.
pub fn retrieve_service_content() -> String {
    call(
        "RetrieveServiceContent",
        &MoRef::new("ServiceInstance", "ServiceInstance"),
        "",
    )
}

/// `SessionManager.Login`. The password is in the body only: callers never
/// log request bodies.
pub fn login(session_manager: &MoRef, user: &str, password: &str) -> String {
    call(
        "Login",
        session_manager,
        &format!(
            "<userName>{}</userName><password>{}</password>",
            escape(user),
            escape(password)
        ),
    )
}

/// `SessionManager.Logout`.
pub fn logout(session_manager: &MoRef) -> String {
    call("Logout", session_manager, "")
}

/// `SearchIndex.FindAllByUuid` for VMs: BIOS UUID (`config.uuid`) or, with
/// `instance`, the instance UUID (`config.instanceUuid`). All matches, so
/// that two VMs answering to one UUID are seen, not one picked.
pub fn find_all_by_uuid(search_index: &MoRef, uuid: &str, instance: bool) -> String {
    find_all_by_uuid_in(search_index, None, uuid, instance)
}

/// [`find_all_by_uuid`] within one datacenter (`None`: every datacenter).
pub fn find_all_by_uuid_in(
    search_index: &MoRef,
    datacenter: Option<&MoRef>,
    uuid: &str,
    instance: bool,
) -> String {
    call(
        "FindAllByUuid",
        search_index,
        &format!(
            "{}<uuid>{}</uuid><vmSearch>true</vmSearch><instanceUuid>{instance}</instanceUuid>",
            datacenter.map(|d| d.xml("datacenter")).unwrap_or_default(),
            escape(uuid)
        ),
    )
}

/// `SearchIndex.FindByInventoryPath`: the entity at an inventory path
/// (`DC1`, `Folder/DC1`).
pub fn find_by_inventory_path(search_index: &MoRef, path: &str) -> String {
    call(
        "FindByInventoryPath",
        search_index,
        &format!("<inventoryPath>{}</inventoryPath>", escape(path)),
    )
}

/// Reads `FindByInventoryPathResponse`: the entity, `None` when nothing is there.
pub fn find_by_path_answer(xml: &str) -> Result<Option<MoRef>, SoapError> {
    answer(xml, "FindByInventoryPathResponse", |r| {
        Ok(child(r, "returnval").and_then(moref))
    })
}

/// `ViewManager.CreateContainerView` of every VM under `root` (the root
/// folder, or a datacenter), recursively.
pub fn create_vm_view(view_manager: &MoRef, root: &MoRef) -> String {
    call(
        "CreateContainerView",
        view_manager,
        &format!(
            "{}<type>VirtualMachine</type><recursive>true</recursive>",
            root.xml("container")
        ),
    )
}

/// `View.DestroyView`.
pub fn destroy_view(view: &MoRef) -> String {
    call("DestroyView", view, "")
}

fn prop_spec(kind: &str, paths: &[&str]) -> String {
    let mut s = format!("<propSet><type>{}</type>", escape(kind));
    for p in paths {
        s.push_str(&format!("<pathSet>{}</pathSet>", escape(p)));
    }
    s.push_str("</propSet>");
    s
}

/// The VM properties fencing reads.
pub const VM_PATHS: &[&str] = &[
    "name",
    "runtime.powerState",
    "runtime.connectionState",
    "runtime.host",
    "config.uuid",
    "config.instanceUuid",
];

/// `PropertyCollector.RetrievePropertiesEx` of `paths` on the given objects.
pub fn retrieve_properties(
    collector: &MoRef,
    kind: &str,
    objs: &[MoRef],
    paths: &[&str],
) -> String {
    let mut objects = String::new();
    for o in objs {
        objects.push_str(&format!("<objectSet>{}</objectSet>", o.xml("obj")));
    }
    call(
        "RetrievePropertiesEx",
        collector,
        &format!(
            "<specSet>{}{objects}</specSet><options></options>",
            prop_spec(kind, paths)
        ),
    )
}

/// `RetrievePropertiesEx` of `paths` on every VM of a container view (the
/// name search: every VM's name, compared here, never a server-side guess).
pub fn retrieve_view_properties(collector: &MoRef, view: &MoRef, paths: &[&str]) -> String {
    call(
        "RetrievePropertiesEx",
        collector,
        &format!(
            "<specSet>{}<objectSet>{}<skip>true</skip>\
             <selectSet xsi:type=\"TraversalSpec\"><name>traverseEntities</name>\
             <type>ContainerView</type><path>view</path><skip>false</skip></selectSet>\
             </objectSet></specSet><options></options>",
            prop_spec("VirtualMachine", paths),
            view.xml("obj")
        ),
    )
}

/// `PropertyCollector.ContinueRetrievePropertiesEx` with the last page's token.
pub fn continue_retrieve(collector: &MoRef, token: &str) -> String {
    call(
        "ContinueRetrievePropertiesEx",
        collector,
        &format!("<token>{}</token>", escape(token)),
    )
}

/// A VM power method, each a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerMethod {
    /// `PowerOffVM_Task` (hard power off; a suspended VM too).
    Off,
    /// `PowerOnVM_Task`.
    On,
    /// `ResetVM_Task` (hard reset).
    Reset,
}

impl PowerMethod {
    /// The SOAP method name.
    pub fn method(self) -> &'static str {
        match self {
            PowerMethod::Off => "PowerOffVM_Task",
            PowerMethod::On => "PowerOnVM_Task",
            PowerMethod::Reset => "ResetVM_Task",
        }
    }

    /// The task's `info.descriptionId`, by which a task whose answer was
    /// lost is recognised in the VM's `recentTask`.
    pub fn description_id(self) -> &'static str {
        match self {
            PowerMethod::Off => "VirtualMachine.powerOff",
            PowerMethod::On => "VirtualMachine.powerOn",
            PowerMethod::Reset => "VirtualMachine.reset",
        }
    }
}

/// The power task request on `vm`.
pub fn power_task(method: PowerMethod, vm: &MoRef) -> String {
    call(method.method(), vm, "")
}

// ---- answers ---------------------------------------------------------

/// What went wrong with an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SoapError {
    /// A SOAP fault: the vSphere fault's name (`InvalidLogin`,
    /// `NoPermission`, …; empty when the fault names none) and its text.
    Fault {
        /// The vim25 fault type, e.g. `InvalidPowerState`.
        name: String,
        /// The fault string, as the server wrote it.
        message: String,
    },
    /// Not XML, no SOAP body, or not the answer asked for.
    Malformed(String),
}

impl fmt::Display for SoapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SoapError::Fault { name, message } if name.is_empty() => {
                write!(f, "soap fault: {message}")
            }
            SoapError::Fault { name, message } => write!(f, "vSphere fault {name}: {message}"),
            SoapError::Malformed(m) => write!(f, "malformed answer: {m}"),
        }
    }
}

fn malformed(m: impl Into<String>) -> SoapError {
    SoapError::Malformed(m.into())
}

fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
    n.children()
        .find(|c| c.is_element() && c.tag_name().name() == name)
}

fn children<'a, 'i: 'a>(
    n: roxmltree::Node<'a, 'i>,
    name: &'a str,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> + 'a {
    n.children()
        .filter(move |c| c.is_element() && c.tag_name().name() == name)
}

fn text(n: roxmltree::Node) -> String {
    n.text().unwrap_or("").trim().to_string()
}

fn xsi_type(n: roxmltree::Node) -> Option<String> {
    n.attributes()
        .find(|a| a.name() == "type" && a.namespace() == Some(XSI))
        .map(|a| local(a.value()).to_string())
}

fn local(q: &str) -> &str {
    q.rsplit(':').next().unwrap_or(q)
}

fn moref(n: roxmltree::Node) -> Option<MoRef> {
    let kind = n.attribute("type")?;
    let value = text(n);
    if value.is_empty() {
        return None;
    }
    Some(MoRef::new(kind, &value))
}

/// The vSphere fault in a `detail` or task `error.fault` element: its
/// xsi:type, else the element's name without the `Fault` suffix.
fn fault_name(n: roxmltree::Node) -> String {
    if let Some(t) = xsi_type(n) {
        return t;
    }
    let name = n.tag_name().name();
    name.strip_suffix("Fault").unwrap_or(name).to_string()
}

/// Parses an answer and hands its body's first element to `read`, or
/// returns the fault it carries.
pub fn answer<T>(
    xml: &str,
    expect: &str,
    read: impl FnOnce(roxmltree::Node) -> Result<T, SoapError>,
) -> Result<T, SoapError> {
    // Bounded in size and depth before roxmltree, which recurses.
    let doc = crate::parse::xml(xml, &crate::parse::Limits::ANSWER)
        .map_err(|e| malformed(e.to_string()))?;
    let env = doc.root_element();
    if env.tag_name().name() != "Envelope" {
        return Err(malformed("no SOAP envelope"));
    }
    let body = child(env, "Body").ok_or_else(|| malformed("no SOAP body"))?;
    let first = body
        .children()
        .find(|c| c.is_element())
        .ok_or_else(|| malformed("empty SOAP body"))?;
    if first.tag_name().name() == "Fault" {
        let message = child(first, "faultstring").map(text).unwrap_or_default();
        let name = child(first, "detail")
            .and_then(|d| d.children().find(|c| c.is_element()))
            .map(fault_name)
            .unwrap_or_default();
        return Err(SoapError::Fault { name, message });
    }
    if first.tag_name().name() != expect {
        return Err(malformed(format!(
            "expected {expect}, got {}",
            first.tag_name().name()
        )));
    }
    read(first)
}

/// The service content's managers fencing uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceContent {
    /// The inventory's root folder.
    pub root_folder: MoRef,
    /// The property collector.
    pub property_collector: MoRef,
    /// The view manager (name search).
    pub view_manager: MoRef,
    /// The search index (UUID search).
    pub search_index: MoRef,
    /// The session manager.
    pub session_manager: MoRef,
    /// `about.apiType`: `VirtualCenter` or `HostAgent` (a single ESXi).
    pub api_type: String,
    /// `about.apiVersion`.
    pub api_version: String,
}

/// Reads `RetrieveServiceContentResponse`.
pub fn service_content(xml: &str) -> Result<ServiceContent, SoapError> {
    answer(xml, "RetrieveServiceContentResponse", |r| {
        let rv = child(r, "returnval").ok_or_else(|| malformed("no returnval"))?;
        let get = |name: &str| {
            child(rv, name)
                .and_then(moref)
                .ok_or_else(|| malformed(format!("service content without {name}")))
        };
        let about = child(rv, "about");
        let about_field = |name: &str| {
            about
                .and_then(|a| child(a, name))
                .map(text)
                .unwrap_or_default()
        };
        Ok(ServiceContent {
            root_folder: get("rootFolder")?,
            property_collector: get("propertyCollector")?,
            view_manager: get("viewManager")?,
            search_index: get("searchIndex")?,
            session_manager: get("sessionManager")?,
            api_type: about_field("apiType"),
            api_version: about_field("apiVersion"),
        })
    })
}

/// Reads `LoginResponse`: the session key (not a secret: the cookie is).
pub fn login_answer(xml: &str) -> Result<String, SoapError> {
    answer(xml, "LoginResponse", |r| {
        child(r, "returnval")
            .and_then(|v| child(v, "key"))
            .map(text)
            .ok_or_else(|| malformed("login answer without a session key"))
    })
}

/// Reads an answer whose `returnval` is one reference (a task, a view).
pub fn moref_answer(xml: &str, expect: &str) -> Result<MoRef, SoapError> {
    answer(xml, expect, |r| {
        child(r, "returnval")
            .and_then(moref)
            .ok_or_else(|| malformed(format!("{expect} without a reference")))
    })
}

/// Reads `FindAllByUuidResponse`: every match (none is an empty list).
pub fn find_all_answer(xml: &str) -> Result<Vec<MoRef>, SoapError> {
    answer(xml, "FindAllByUuidResponse", |r| {
        Ok(children(r, "returnval").filter_map(moref).collect())
    })
}

/// Reads an answer with no value (`LogoutResponse`, `DestroyViewResponse`).
pub fn empty_answer(xml: &str, expect: &str) -> Result<(), SoapError> {
    answer(xml, expect, |_| Ok(()))
}

/// One property value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// Text (strings, enums, numbers, dates).
    Text(String),
    /// One reference.
    Ref(MoRef),
    /// A list of references (`ArrayOfManagedObjectReference`).
    Refs(Vec<MoRef>),
    /// Anything else, by its xsi:type (a `TaskInfo` is read on its own).
    Other(String),
}

/// One object's properties as the collector returned them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// The object.
    pub obj: MoRef,
    /// Property path → value.
    pub props: Vec<(String, Value)>,
    /// Paths the server could not read (`missingSet`), with the fault's name.
    pub missing: Vec<(String, String)>,
}

impl Object {
    /// A property's text, if it is text.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.props
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, v)| match v {
                Value::Text(t) => Some(t.as_str()),
                _ => None,
            })
    }

    /// A property's reference, if it is one.
    pub fn reference(&self, path: &str) -> Option<&MoRef> {
        self.props
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, v)| match v {
                Value::Ref(r) => Some(r),
                _ => None,
            })
    }

    /// A property's list of references (absent: empty).
    pub fn references(&self, path: &str) -> &[MoRef] {
        self.props
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, v)| match v {
                Value::Refs(r) => Some(r.as_slice()),
                _ => None,
            })
            .unwrap_or(&[])
    }
}

/// One page of `RetrievePropertiesEx`: objects and, when more follow, the
/// token for `ContinueRetrievePropertiesEx`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Page {
    /// The objects of this page.
    pub objects: Vec<Object>,
    /// The continuation token, when the result has more pages.
    pub token: Option<String>,
}

fn value(v: roxmltree::Node) -> Value {
    let t = xsi_type(v).unwrap_or_default();
    if t == "ManagedObjectReference" || (t.is_empty() && v.attribute("type").is_some()) {
        return moref(v).map(Value::Ref).unwrap_or(Value::Other(t));
    }
    if t == "ArrayOfManagedObjectReference" {
        return Value::Refs(
            children(v, "ManagedObjectReference")
                .filter_map(moref)
                .collect(),
        );
    }
    if v.children().any(|c| c.is_element()) {
        return Value::Other(t);
    }
    Value::Text(text(v))
}

fn page(r: roxmltree::Node) -> Page {
    // An empty result is an answer without returnval.
    let Some(rv) = child(r, "returnval") else {
        return Page::default();
    };
    let token = child(rv, "token").map(text).filter(|t| !t.is_empty());
    let objects = children(rv, "objects")
        .filter_map(|o| {
            let obj = child(o, "obj").and_then(moref)?;
            let props = children(o, "propSet")
                .filter_map(|p| {
                    let name = child(p, "name").map(text)?;
                    let val = child(p, "val").map(value)?;
                    Some((name, val))
                })
                .collect();
            let missing = children(o, "missingSet")
                .filter_map(|m| {
                    let path = child(m, "path").map(text)?;
                    let fault = child(m, "fault")
                        .and_then(|f| child(f, "fault"))
                        .map(fault_name)
                        .unwrap_or_default();
                    Some((path, fault))
                })
                .collect();
            Some(Object {
                obj,
                props,
                missing,
            })
        })
        .collect();
    Page { objects, token }
}

/// Reads `RetrievePropertiesExResponse`.
pub fn properties_answer(xml: &str) -> Result<Page, SoapError> {
    answer(xml, "RetrievePropertiesExResponse", |r| Ok(page(r)))
}

/// Reads `ContinueRetrievePropertiesExResponse`.
pub fn continue_answer(xml: &str) -> Result<Page, SoapError> {
    answer(xml, "ContinueRetrievePropertiesExResponse", |r| {
        // Its returnval is the RetrieveResult itself.
        Ok(page(r))
    })
}

/// A task's `info` as fencing reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskInfo {
    /// The task.
    pub task: MoRef,
    /// `queued`, `running`, `success` or `error`.
    pub state: String,
    /// `VirtualMachine.powerOff`, …
    pub description_id: String,
    /// The object it works on.
    pub entity: Option<MoRef>,
    /// The fault's name when `state` is `error`.
    pub fault: Option<String>,
    /// The fault's message.
    pub message: String,
}

/// Reads the `info` property of tasks from a `RetrievePropertiesEx`
/// answer (objects without a readable info are left out).
pub fn task_infos(xml: &str) -> Result<Vec<TaskInfo>, SoapError> {
    answer(xml, "RetrievePropertiesExResponse", |r| {
        let mut out = Vec::new();
        let Some(rv) = child(r, "returnval") else {
            return Ok(out);
        };
        for o in children(rv, "objects") {
            let Some(task) = child(o, "obj").and_then(moref) else {
                continue;
            };
            for p in children(o, "propSet") {
                if child(p, "name").map(text).as_deref() != Some("info") {
                    continue;
                }
                let Some(v) = child(p, "val") else { continue };
                let error = child(v, "error");
                out.push(TaskInfo {
                    task: task.clone(),
                    state: child(v, "state").map(text).unwrap_or_default(),
                    description_id: child(v, "descriptionId").map(text).unwrap_or_default(),
                    entity: child(v, "entity").and_then(moref),
                    fault: error.and_then(|e| child(e, "fault")).map(fault_name),
                    message: error
                        .and_then(|e| child(e, "localizedMessage"))
                        .map(text)
                        .unwrap_or_default(),
                });
            }
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap(body: &str) -> String {
        format!(
            "<?xml version=\"1.0\"?><soapenv:Envelope xmlns:soapenv=\"{SOAPENV}\" \
             xmlns:xsi=\"{XSI}\"><soapenv:Body>{body}</soapenv:Body></soapenv:Envelope>"
        )
    }

    #[test]
    fn login_escapes_and_parses_as_xml() {
        let sm = MoRef::new("SessionManager", "SessionManager");
        let req = login(&sm, "dom\\fence", "p<&>\"'w");
        let doc = roxmltree::Document::parse(&req).expect("request is XML");
        let pw = doc
            .descendants()
            .find(|n| n.tag_name().name() == "password")
            .and_then(|n| n.text());
        assert_eq!(pw, Some("p<&>\"'w"));
        let this = doc
            .descendants()
            .find(|n| n.tag_name().name() == "_this")
            .unwrap();
        assert_eq!(this.attribute("type"), Some("SessionManager"));
        assert_eq!(this.tag_name().namespace(), Some(VIM25));
    }

    #[test]
    fn fault_names_the_vsphere_fault() {
        // As vcsim and vCenter write it: detail's child with xsi:type.
        let xml = wrap(
            "<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>Login failure\
             </faultstring><detail><InvalidLoginFault xmlns=\"urn:vim25\" xsi:type=\"InvalidLogin\">\
             </InvalidLoginFault></detail></soapenv:Fault>",
        );
        assert_eq!(
            login_answer(&xml),
            Err(SoapError::Fault {
                name: "InvalidLogin".into(),
                message: "Login failure".into()
            })
        );
        // Without xsi:type the element name says it.
        let xml = wrap(
            "<soapenv:Fault><faultstring>denied</faultstring><detail>\
             <NoPermissionFault xmlns=\"urn:vim25\"/></detail></soapenv:Fault>",
        );
        match login_answer(&xml) {
            Err(SoapError::Fault { name, .. }) => assert_eq!(name, "NoPermission"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        for bad in ["", "<", "not xml", "<a/>", &wrap(""), &wrap("<Other/>")] {
            assert!(
                matches!(service_content(bad), Err(SoapError::Malformed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn properties_page_with_refs_and_missing() {
        let xml = wrap(
            "<RetrievePropertiesExResponse xmlns=\"urn:vim25\"><returnval><token>t1</token>\
             <objects><obj type=\"VirtualMachine\">vm-105</obj>\
             <propSet><name>runtime.powerState</name><val xsi:type=\"VirtualMachinePowerState\">poweredOn</val></propSet>\
             <propSet><name>runtime.host</name><val xsi:type=\"ManagedObjectReference\" type=\"HostSystem\">host-63</val></propSet>\
             <propSet><name>recentTask</name><val xsi:type=\"ArrayOfManagedObjectReference\">\
             <ManagedObjectReference type=\"Task\">task-1</ManagedObjectReference>\
             <ManagedObjectReference type=\"Task\">task-2</ManagedObjectReference></val></propSet>\
             <missingSet><path>config.uuid</path><fault><fault xsi:type=\"NoPermission\"/></fault></missingSet>\
             </objects></returnval></RetrievePropertiesExResponse>",
        );
        let p = properties_answer(&xml).unwrap();
        assert_eq!(p.token.as_deref(), Some("t1"));
        let o = &p.objects[0];
        assert_eq!(o.obj, MoRef::new("VirtualMachine", "vm-105"));
        assert_eq!(o.text("runtime.powerState"), Some("poweredOn"));
        assert_eq!(
            o.reference("runtime.host"),
            Some(&MoRef::new("HostSystem", "host-63"))
        );
        assert_eq!(o.references("recentTask").len(), 2);
        assert_eq!(
            o.missing,
            vec![("config.uuid".into(), "NoPermission".into())]
        );
        // No returnval: nothing matched.
        let empty = wrap("<RetrievePropertiesExResponse xmlns=\"urn:vim25\"/>");
        assert_eq!(properties_answer(&empty).unwrap(), Page::default());
    }

    #[test]
    fn task_info_with_error() {
        // The shape vcsim answers (tests/peers/vcsim).
        let xml = wrap(
            "<RetrievePropertiesExResponse xmlns=\"urn:vim25\"><returnval><objects>\
             <obj type=\"Task\">task-118</obj><propSet><name>info</name><val xsi:type=\"TaskInfo\">\
             <key>task-118</key><task type=\"Task\">task-118</task><name>PowerOff</name>\
             <descriptionId>VirtualMachine.powerOff</descriptionId>\
             <entity type=\"VirtualMachine\">vm-105</entity><state>error</state>\
             <error><fault xsi:type=\"InvalidPowerState\"><requestedState>poweredOff</requestedState>\
             <existingState>poweredOff</existingState></fault>\
             <localizedMessage>already off</localizedMessage></error></val></propSet>\
             </objects></returnval></RetrievePropertiesExResponse>",
        );
        let infos = task_infos(&xml).unwrap();
        assert_eq!(infos.len(), 1);
        let t = &infos[0];
        assert_eq!(t.state, "error");
        assert_eq!(t.fault.as_deref(), Some("InvalidPowerState"));
        assert_eq!(t.description_id, PowerMethod::Off.description_id());
        assert_eq!(t.entity, Some(MoRef::new("VirtualMachine", "vm-105")));
        assert_eq!(t.message, "already off");
    }

    #[test]
    fn service_content_needs_its_managers() {
        let full = "<rootFolder type=\"Folder\">group-d1</rootFolder>\
            <propertyCollector type=\"PropertyCollector\">propertyCollector</propertyCollector>\
            <viewManager type=\"ViewManager\">ViewManager</viewManager>\
            <about><apiType>VirtualCenter</apiType><apiVersion>6.5</apiVersion></about>\
            <sessionManager type=\"SessionManager\">SessionManager</sessionManager>\
            <searchIndex type=\"SearchIndex\">SearchIndex</searchIndex>";
        let ok = wrap(&format!(
            "<RetrieveServiceContentResponse xmlns=\"urn:vim25\"><returnval>{full}</returnval>\
             </RetrieveServiceContentResponse>"
        ));
        let sc = service_content(&ok).unwrap();
        assert_eq!(sc.api_type, "VirtualCenter");
        assert_eq!(sc.search_index, MoRef::new("SearchIndex", "SearchIndex"));
        let without = wrap(&format!(
            "<RetrieveServiceContentResponse xmlns=\"urn:vim25\"><returnval>{}</returnval>\
             </RetrieveServiceContentResponse>",
            full.replace(
                "<searchIndex type=\"SearchIndex\">SearchIndex</searchIndex>",
                ""
            )
        ));
        assert!(matches!(
            service_content(&without),
            Err(SoapError::Malformed(_))
        ));
    }

    #[test]
    fn view_request_traverses_the_view() {
        let req = retrieve_view_properties(
            &MoRef::new("PropertyCollector", "propertyCollector"),
            &MoRef::new("ContainerView", "session[x]view"),
            VM_PATHS,
        );
        let doc = roxmltree::Document::parse(&req).unwrap();
        let paths: Vec<_> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "pathSet")
            .filter_map(|n| n.text())
            .collect();
        assert_eq!(paths, VM_PATHS);
        assert!(doc
            .descendants()
            .any(|n| n.tag_name().name() == "path" && n.text() == Some("view")));
    }

    #[test]
    fn datacenters_scope_uuid_searches_and_are_found_by_path() {
        let si = MoRef::new("SearchIndex", "SearchIndex");
        let dc = MoRef::new("Datacenter", "datacenter-2");
        let body = find_all_by_uuid_in(&si, Some(&dc), "abc", false);
        assert!(
            body.contains(
                "<datacenter type=\"Datacenter\">datacenter-2</datacenter><uuid>abc</uuid>"
            ),
            "{body}"
        );
        assert!(!find_all_by_uuid(&si, "abc", true).contains("datacenter"));
        assert!(find_by_inventory_path(&si, "A&B/DC1")
            .contains("<inventoryPath>A&amp;B/DC1</inventoryPath>"));
        let env = |inner: &str| {
            envelope(&format!(
                "<FindByInventoryPathResponse xmlns=\"{VIM25}\">{inner}</FindByInventoryPathResponse>"
            ))
        };
        assert_eq!(
            find_by_path_answer(&env(
                "<returnval type=\"Datacenter\">datacenter-2</returnval>"
            )),
            Ok(Some(dc))
        );
        assert_eq!(find_by_path_answer(&env("")), Ok(None));
    }
}
