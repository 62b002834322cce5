//! A one-node corosync + Pacemaker cluster whose fencer runs fencekit
//! (`tests/peers/pacemaker_start.sh`): how the tests start it, run its
//! tools, add fence devices and read the fencer's log.
//!
//! The cluster's daemons and tools live in a private mount namespace in
//! which `/usr/sbin/fence_*` are the binary under test; the tools
//! (`cibadmin`, `stonith_admin`, `crm_resource`) therefore run through
//! `nsenter` ([`Cluster::tool`]): `stonith_admin --metadata` and
//! `--validate` run the agent in the calling process. It shares the host's
//! network, so the BMCs the tests start on loopback are reachable as they
//! are. One cluster per host: a test binary starts one and stops it on
//! drop; the start script also stops it when the test process is gone.

use super::*;

/// The running cluster; stopped (by the PIDs its start script recorded,
/// through `pacemaker_stop.sh`) on drop.
pub struct Cluster {
    ns: u32,
    dir: PathBuf,
    _state: tempfile::TempDir,
}

/// The packages and tools the cluster needs, checked as peers are: a skip
/// (with the reason), or a failure under `FENCEKIT_REQUIRE_PEERS=1`.
pub fn available() -> bool {
    peer_available("corosync")
        && peer_available("pacemaker")
        && peer_available("pacemaker-cli-utils")
        && root_with(&["unshare", "nsenter", "setsid"])
}

impl Cluster {
    /// Starts the cluster, or returns `None` after [`available`] said why
    /// it cannot run here.
    pub fn start() -> Option<Cluster> {
        if !available() {
            return None;
        }
        let state = tempdir("fencekit-pacemaker-");
        let dir = state.path().join("cluster");
        let mut c = Command::new("sh");
        c.arg(peer_scripts().join("pacemaker_start.sh"))
            .arg(bin())
            .arg(&dir)
            .env("PACEMAKER_PEER_OWNER", std::process::id().to_string());
        let r = run(c, Duration::from_secs(120));
        let pids: Vec<u32> = r
            .stdout
            .lines()
            .last()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        if r.code != Some(0) || pids.len() != 3 {
            panic!("pacemaker_start.sh failed\n{r}");
        }
        Some(Cluster {
            ns: pids[0],
            dir,
            _state: state,
        })
    }

    /// The process holding the cluster's mount namespace.
    pub fn ns_pid(&self) -> u32 {
        self.ns
    }

    /// The cluster's state directory (logs, configuration).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `prog` run inside the cluster's mount namespace.
    pub fn command(&self, prog: &str) -> Command {
        let mut c = super::tool("nsenter");
        c.args(["-t", &self.ns.to_string(), "-m", "--", prog]);
        c
    }

    /// Runs one of the cluster's tools (`cibadmin`, `stonith_admin`, …)
    /// with `args`, killed after `limit`.
    pub fn tool(&self, prog: &str, args: &[&str], limit: Duration) -> Run {
        let mut c = self.command(prog);
        c.args(args);
        run(c, limit)
    }

    /// The fencer's (and the other daemons') log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("pacemaker.log")).unwrap_or_default()
    }

    /// What the fencer logged of the agents' standard error, in order:
    /// `(agent, pid, line)` from `fence_ipmilan[PID] stderr: [ LINE ]`.
    pub fn agent_stderr(&self) -> Vec<(String, u32, String)> {
        self.log()
            .lines()
            .filter_map(|l| {
                let (_, rest) = l.split_once("(log_action) \twarning: ")?;
                let (agent, rest) = rest.split_once('[')?;
                let (pid, rest) = rest.split_once("] stderr: [ ")?;
                let line = rest.strip_suffix(" ]")?;
                Some((agent.to_string(), pid.parse().ok()?, line.to_string()))
            })
            .collect()
    }

    /// Adds a resource (a `<primitive>`) to the CIB.
    pub fn create(&self, xml: &str) {
        let r = self.tool(
            "cibadmin",
            &["--create", "--scope", "resources", "--xml-text", xml],
            Duration::from_secs(30),
        );
        assert_eq!(r.code, Some(0), "cibadmin --create failed\n{r}");
    }

    /// Waits until resource `id` has started on the node (for a fence
    /// device: it is registered with the fencer and the monitor its start
    /// runs succeeded). Its start's result must be in the status section:
    /// `crm_resource --locate` already says "running" while the start is
    /// pending (Pacemaker records pending operations and counts a pending
    /// start as started), and a scenario that then takes the BMC away
    /// would have its fence queued behind that monitor.
    pub fn wait_started(&self, id: &str, limit: Duration) -> bool {
        let done = format!(
            "//lrm_resource[@id='{id}']/lrm_rsc_op[@operation='start']\
             [@op-status='0'][@rc-code='0']"
        );
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            let r = self.tool(
                "cibadmin",
                &["--query", "--scope", "status", "--xpath", &done],
                Duration::from_secs(10),
            );
            if r.code == Some(0) && r.stdout.contains("operation=\"start\"") {
                return true;
            }
            thread::sleep(Duration::from_millis(200));
        }
        false
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let mut c = Command::new("sh");
        c.arg(peer_scripts().join("pacemaker_stop.sh"))
            .arg(&self.dir);
        let r = run(c, Duration::from_secs(90));
        if r.code != Some(0) {
            eprintln!("pacemaker_stop.sh: {r}");
        }
    }
}

/// A `<primitive class="stonith">` of `agent` with `params` (escaped),
/// and a recurring monitor every `monitor` (with a 30 s timeout) if given.
pub fn device(id: &str, agent: &str, params: &[(&str, &str)], monitor: Option<&str>) -> String {
    let esc = |v: &str| {
        v.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let mut x = format!(
        "<primitive id=\"{id}\" class=\"stonith\" type=\"{agent}\">\
         <instance_attributes id=\"{id}-params\">"
    );
    for (k, v) in params {
        x.push_str(&format!(
            "<nvpair id=\"{id}-{k}\" name=\"{k}\" value=\"{}\"/>",
            esc(v)
        ));
    }
    x.push_str("</instance_attributes>");
    if let Some(every) = monitor {
        x.push_str(&format!(
            "<operations><op id=\"{id}-monitor\" name=\"monitor\" interval=\"{every}\" \
             timeout=\"30s\"/></operations>"
        ));
    }
    x.push_str("</primitive>");
    x
}
