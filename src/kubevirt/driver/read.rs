//! Reading the device: the VirtualMachine, its instance, and the off proof
//! from the virt-launcher pods and their nodes ([`model::decide`]); the
//! VirtualMachines of the namespace for `list`.

use super::*;

/// Pages of one pod list fencekit follows (it never asks for pages: a
/// server that splits a VM's few launchers into more is not believed).
const MAX_POD_PAGES: usize = 8;

/// An answer about another object than the one asked for: a
/// contradiction, never evidence (the state is unreadable).
fn contradiction(stage: Stage, what: &str, why: String) -> DriverError {
    DriverError::new(
        ErrorKind::StatusUnreadable,
        stage,
        format!("{what}: {why}; an answer about another object is not believed"),
    )
}

impl KubevirtDriver {
    pub(super) async fn read_vm(
        &mut self,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Vm, DriverError> {
        let path = self.vm_path("virtualmachines");
        let what = format!("GET VirtualMachine {}/{}", self.namespace, self.cfg.vm);
        match self.get(&path, &what, stage, deadline).await? {
            Ok(v) => {
                let vm = model::vm(&v).map_err(|e| {
                    DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}"))
                })?;
                // On every read: the answer is about this VM, and about the
                // object first read (its uid), never another one.
                let first = self.vm.as_ref().map(|v| v.uid.as_str());
                model::check_vm(&vm, &self.namespace, &self.cfg.vm, first)
                    .map_err(|e| contradiction(stage, &what, e))?;
                self.vm = Some(vm.clone());
                Ok(vm)
            }
            Err(st) => Err(self.status_error(&st, &what, stage)),
        }
    }

    pub(super) async fn read_vmi(
        &mut self,
        stage: Stage,
        deadline: Option<Instant>,
    ) -> Result<Option<Vmi>, DriverError> {
        let path = self.vm_path("virtualmachineinstances");
        let what = format!(
            "GET VirtualMachineInstance {}/{}",
            self.namespace, self.cfg.vm
        );
        let vmi = match self.get(&path, &what, stage, deadline).await? {
            Ok(v) => {
                let vmi = model::vmi(&v).map_err(|e| {
                    DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}"))
                })?;
                // The VM is read first (connect), so its uid is known.
                let vm_uid = self.vm.as_ref().map_or("", |v| v.uid.as_str());
                model::check_vmi(&vmi, &self.namespace, &self.cfg.vm, vm_uid)
                    .map_err(|e| contradiction(stage, &what, e))?;
                Some(vmi)
            }
            Err(st) if st.code == 404 => None,
            Err(st) => return Err(self.status_error(&st, &what, stage)),
        };
        self.vmi = vmi.clone();
        self.vmi_read = true;
        Ok(vmi)
    }

    pub(super) async fn read_launchers(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Launchers, DriverError> {
        if let Some(why) = &self.pods_denied {
            return Ok(Launchers::Unread(why.clone()));
        }
        let base = format!(
            "/api/v1/namespaces/{}/pods?labelSelector=vm.kubevirt.io%2Fname%3D{}",
            self.namespace, self.cfg.vm
        );
        let what = format!("list pods of VM {} in {}", self.cfg.vm, self.namespace);
        let mut all = Vec::new();
        let mut next: Option<String> = None;
        // A list split into pages nobody asked for is followed to its end
        // (a page left out could hold the live launcher), within a bound.
        for _ in 0..MAX_POD_PAGES {
            let path = match &next {
                None => base.clone(),
                Some(c) => format!("{base}&continue={}", crate::http::client::form_encode(c)),
            };
            match self.get(&path, &what, Stage::Status, deadline).await? {
                Ok(v) => {
                    let (pods, more) = model::pods(&v).map_err(|e| {
                        DriverError::new(ErrorKind::Protocol, Stage::Status, format!("{what}: {e}"))
                    })?;
                    model::check_pods(&pods, &self.namespace, &self.cfg.vm)
                        .map_err(|e| contradiction(Stage::Status, &what, e))?;
                    all.extend(pods);
                    match more {
                        None => return Ok(Launchers::Listed(all)),
                        Some(c) => next = Some(c),
                    }
                }
                Err(st) if st.code == 403 => {
                    let why = format!(
                        "RBAC forbids list pods in namespace {}: {}",
                        self.namespace, st.message
                    );
                    self.pods_denied = Some(why.clone());
                    return Ok(Launchers::Unread(why));
                }
                Err(st) => return Err(self.status_error(&st, &what, Stage::Status)),
            }
        }
        Err(DriverError::new(
            ErrorKind::StatusUnreadable,
            Stage::Status,
            format!(
                "{what}: the API server split the list into more than {MAX_POD_PAGES} pages \
                 (never asked for): the launchers cannot be shown to be gone"
            ),
        ))
    }

    pub(super) async fn read_node(
        &mut self,
        name: &str,
        deadline: Option<Instant>,
    ) -> Result<NodeReady, DriverError> {
        if let Some(why) = &self.nodes_denied {
            return Ok(NodeReady::Unread(why.clone()));
        }
        let what = format!("GET node {name}");
        match self
            .get(
                &format!("/api/v1/nodes/{name}"),
                &what,
                Stage::Status,
                deadline,
            )
            .await?
        {
            Ok(v) => Ok(model::node_ready(&v)),
            Err(st) if st.code == 404 => Ok(NodeReady::Gone),
            Err(st) if st.code == 403 => {
                let why = format!("RBAC forbids get nodes: {}", st.message);
                self.nodes_denied = Some(why.clone());
                Ok(NodeReady::Unread(why))
            }
            Err(st) => Err(self.status_error(&st, &what, Stage::Status)),
        }
    }

    /// Reads the VMI, and the launchers and nodes when they decide; the verdict.
    pub(super) async fn judge(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Verdict, DriverError> {
        let vmi = self.read_vmi(Stage::Status, deadline).await?;
        let final_or_gone = vmi
            .as_ref()
            .is_none_or(|i| i.phase == "Succeeded" || i.phase == "Failed");
        let launchers = if final_or_gone {
            self.read_launchers(deadline).await?
        } else {
            Launchers::NotAsked
        };
        let mut nodes: BTreeMap<String, NodeReady> = BTreeMap::new();
        if final_or_gone {
            let mut names: Vec<String> = vmi.iter().filter_map(|i| i.node.clone()).collect();
            if let Launchers::Listed(pods) = &launchers {
                names.extend(
                    pods.iter()
                        .filter(|p| !p.finished())
                        .filter_map(|p| p.node.clone()),
                );
            }
            names.sort();
            names.dedup();
            for n in names {
                let r = self.read_node(&n, deadline).await?;
                nodes.insert(n, r);
            }
        }
        let ready = |n: &str| {
            nodes
                .get(n)
                .cloned()
                .unwrap_or_else(|| NodeReady::Unread("not read".into()))
        };
        Ok(model::decide(vmi.as_ref(), &launchers, &ready))
    }

    /// The VirtualMachines of the namespace (`list`).
    pub async fn list(&mut self, deadline: Option<Instant>) -> Result<Vec<Listed>, DriverError> {
        self.setup()?;
        let path = format!(
            "/apis/{}/{}/namespaces/{}/virtualmachines",
            self.cfg.group(),
            self.cfg.version(),
            self.namespace
        );
        let what = format!("list VirtualMachines in {}", self.namespace);
        let v = match self.get(&path, &what, Stage::Status, deadline).await? {
            Ok(v) => v,
            Err(st) => return Err(self.status_error(&st, &what, Stage::Status)),
        };
        let items = v.get("items").and_then(Value::as_array).ok_or_else(|| {
            DriverError::new(
                ErrorKind::Protocol,
                Stage::Status,
                format!("{what}: no items"),
            )
        })?;
        Ok(items
            .iter()
            .filter_map(|i| {
                Some(Listed {
                    name: model::printable(i.pointer("/metadata/name")?.as_str()?, 253),
                    printable: model::printable(
                        i.pointer("/status/printableStatus")
                            .and_then(Value::as_str)
                            .unwrap_or(""),
                        40,
                    ),
                })
            })
            .collect())
    }
}
