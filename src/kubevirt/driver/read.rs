//! Reading the device: the VirtualMachine, its instance, and the off proof
//! from the virt-launcher pods and their nodes ([`model::decide`]); the
//! VirtualMachines of the namespace for `list`.

use super::*;

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
            Ok(v) => Some(model::vmi(&v).map_err(|e| {
                DriverError::new(ErrorKind::Protocol, stage, format!("{what}: {e}"))
            })?),
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
        let path = format!(
            "/api/v1/namespaces/{}/pods?labelSelector=vm.kubevirt.io%2Fname%3D{}",
            self.namespace, self.cfg.vm
        );
        let what = format!("list pods of VM {} in {}", self.cfg.vm, self.namespace);
        match self.get(&path, &what, Stage::Status, deadline).await? {
            Ok(v) => model::pods(&v).map(Launchers::Listed).map_err(|e| {
                DriverError::new(ErrorKind::Protocol, Stage::Status, format!("{what}: {e}"))
            }),
            Err(st) if st.code == 403 => {
                let why = format!(
                    "RBAC forbids list pods in namespace {}: {}",
                    self.namespace, st.message
                );
                self.pods_denied = Some(why.clone());
                Ok(Launchers::Unread(why))
            }
            Err(st) => Err(self.status_error(&st, &what, Stage::Status)),
        }
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
