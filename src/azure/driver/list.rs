//! Listing the resource group's VMs for `list` and `list-status` (paged,
//! only ever from Resource Manager's own host: a `nextLink` elsewhere would
//! carry the token away), and `monitor`, which reads one VM: the plug, or
//! the VM this process runs on; only without either the list's first page.

use super::api::Call;
use super::*;
use crate::http::Patience;
use crate::platform::PlugEntry;
use reqwest::Method;

/// Most pages a listing reads.
const MAX_PAGES: usize = 100;

impl AzureDriver {
    /// Every VM of the resource group (names only: a list carries no
    /// instance views), page by page within the deadline.
    pub async fn list_vms(&mut self, deadline: Option<Instant>) -> Result<Vec<Vm>, DriverError> {
        self.prepare(deadline).await?;
        let first = self.url(&format!(
            "{}/providers/Microsoft.Compute/virtualMachines?api-version={COMPUTE_API}",
            self.group_path()
        ));
        let arm = self.url("");
        let mut url = first;
        let mut out = Vec::new();
        for _ in 0..self.pages() {
            let what = format!("GET the VMs of resource group {}", self.cfg.resource_group);
            let reply = match self
                .call(
                    Method::GET,
                    &url,
                    &what,
                    Stage::Status,
                    &Patience::THROTTLE_OR_BUSY,
                    deadline,
                )
                .await?
            {
                Call::Reply(r) => r,
                Call::Silent(e) => return Err(e),
            };
            if !reply.ok() {
                return Err(self.refusal(&reply, &what, Stage::Status));
            }
            let (page, next) = model::vm_page(&reply.body)
                .map_err(|e| DriverError::new(ErrorKind::Protocol, Stage::Status, e.0))?;
            out.extend(page);
            match next {
                None => return Ok(out),
                Some(_) if self.cfg.monitor_only => return Ok(out),
                Some(n) if n.starts_with(&format!("{arm}/")) => url = n,
                Some(n) => {
                    return Err(DriverError::new(
                        ErrorKind::Protocol,
                        Stage::Status,
                        format!(
                            "the list's nextLink leaves Resource Manager ({}): not followed, \
                             the token goes to {arm} only",
                            model::printable(&n, 200)
                        ),
                    ))
                }
            }
        }
        Err(DriverError::new(
            ErrorKind::Protocol,
            Stage::Status,
            format!("the VM list has more than {MAX_PAGES} pages"),
        ))
    }

    /// Reads one VM of the group by name (`list-status`): its power
    /// state, `None` when it cannot be read.
    pub async fn state_of(&mut self, name: &str, deadline: Option<Instant>) -> Option<PowerState> {
        let saved = (
            std::mem::replace(&mut self.cfg.vm, name.to_string()),
            self.vm_id.take(),
        );
        let r = self.read_vm(Stage::Status, deadline).await;
        self.cfg.vm = saved.0;
        self.vm_id = saved.1;
        self.last = None;
        r.ok()
            .and_then(|v| v.power)
            .and_then(|p| model::observed(&p))
            .and_then(|o| o.settled())
    }

    fn pages(&self) -> usize {
        match self.cfg.monitor_only {
            true => 1,
            false => MAX_PAGES,
        }
    }

    /// The agents' `list` / `list-status` (with states when the action
    /// asked for them) and `monitor` (one resource; nothing to print).
    pub async fn plug_entries(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<PlugEntry>, DriverError> {
        if self.cfg.monitor_only {
            return self.monitor(deadline).await.map(|_| Vec::new());
        }
        let vms = self.list_vms(deadline).await?;
        let mut out = Vec::with_capacity(vms.len());
        for v in vms {
            let state = match self.cfg.list_states {
                true => self.state_of(&v.name, deadline).await,
                false => None,
            };
            out.push(PlugEntry {
                id: v.name,
                alias: String::new(),
                state,
            });
        }
        Ok(out)
    }

    /// `monitor`: a token and one read: the plug's VM, else the VM this
    /// process runs on when the metadata service names one in the same
    /// group, else the first page of the group's list.
    async fn monitor(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        self.prepare(deadline).await?;
        if !self.cfg.vm.is_empty() {
            return self.read_vm(Stage::Status, deadline).await.map(|_| ());
        }
        let me = match &self.guard {
            Guard::Runs(me) => Some(me.clone()),
            _ => self.this_vm(deadline).await.ok(),
        };
        if let Some(me) = me.filter(|m| {
            m.resource_group
                .eq_ignore_ascii_case(&self.cfg.resource_group)
                && m.subscription.eq_ignore_ascii_case(&self.cfg.subscription)
                && !m.name.is_empty()
        }) {
            self.cfg.vm = me.name.clone();
            let r = self.read_vm(Stage::Status, deadline).await.map(|_| ());
            self.cfg.vm.clear();
            self.vm_id = None;
            return r;
        }
        self.list_vms(deadline).await.map(|_| ())
    }
}
