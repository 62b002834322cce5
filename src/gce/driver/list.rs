//! Listing for `list` and `list-status`: every zone asked for, every page
//! (500 instances a page, `nextPageToken` followed), and `monitor`, which
//! reads one instance: the plug, else the one this process runs on, else
//! one entry of the first zone's list (`maxResults=1`).

use super::*;
use crate::platform::PlugEntry;

/// Most pages a listing reads in one zone (500 instances each).
pub(super) const MAX_PAGES: usize = 200;

impl GceDriver {
    /// Every instance of the zones asked for, page by page within the deadline.
    pub async fn list_instances(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<Instance>, DriverError> {
        self.prepare(deadline).await?;
        let zones = self.cfg.list_zones();
        if zones.is_empty() {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Status,
                "list needs the zones to list (--zone ZONE[,ZONE…])".to_string(),
            ));
        }
        let mut out = Vec::new();
        for zone in zones {
            self.list_zone(&zone, 500, MAX_PAGES, &mut out, deadline)
                .await?;
        }
        Ok(out)
    }

    async fn list_zone(
        &mut self,
        zone: &str,
        per_page: usize,
        pages: usize,
        out: &mut Vec<Instance>,
        deadline: Option<Instant>,
    ) -> Result<(), DriverError> {
        let base = format!("{}/instances?maxResults={per_page}", self.zone_url(zone));
        let what = format!("GET the instances of zone {zone}");
        let mut url = base.clone();
        for _ in 0..pages {
            let reply = self.get(&url, &what, Stage::Status, deadline).await?;
            if !reply.ok() {
                return Err(self.refusal(&reply, &what, Stage::Status));
            }
            let (page, next) = model::instance_page(&reply.body)
                .map_err(|e| DriverError::new(ErrorKind::Protocol, Stage::Status, e.0))?;
            out.extend(page);
            match next {
                Some(t) if pages > 1 => {
                    url = format!("{base}&pageToken={}", crate::http::client::form_encode(&t))
                }
                _ => return Ok(()),
            }
        }
        Err(DriverError::new(
            ErrorKind::Protocol,
            Stage::Status,
            format!("the instance list of zone {zone} has more than {pages} pages"),
        ))
    }

    /// The agents' `list` / `list-status` (id and name, as upstream prints
    /// them, with the states a list carries) and `monitor` (one resource;
    /// nothing to print).
    pub async fn plug_entries(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Vec<PlugEntry>, DriverError> {
        if self.cfg.monitor_only {
            return self.monitor(deadline).await.map(|_| Vec::new());
        }
        let list = self.list_instances(deadline).await?;
        Ok(list
            .into_iter()
            .map(|i| PlugEntry {
                state: match self.cfg.list_states {
                    true => model::observed(&i.status).and_then(|o| o.settled()),
                    false => None,
                },
                id: i.id,
                alias: i.name,
            })
            .collect())
    }

    /// `monitor`: a token and one read.
    async fn monitor(&mut self, deadline: Option<Instant>) -> Result<(), DriverError> {
        if self.cfg.instance.is_empty() {
            if let Ok(name) = self.metadata_text("instance/name", deadline).await {
                if crate::gce::config::check_instance(&name).is_ok() {
                    self.cfg.instance = name;
                }
            }
        }
        self.prepare(deadline).await?;
        if !self.cfg.instance.is_empty() && !self.cfg.zone.is_empty() {
            return self
                .read_instance(Stage::Status, deadline)
                .await
                .map(|_| ());
        }
        let Some(zone) = self.cfg.list_zones().into_iter().next() else {
            return Err(DriverError::new(
                ErrorKind::Config,
                Stage::Status,
                "monitor needs --plug or --zone".to_string(),
            ));
        };
        let mut out = Vec::new();
        self.list_zone(&zone, 1, 1, &mut out, deadline).await
    }
}
