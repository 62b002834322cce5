//! The native command line's options (clap derive).

use crate::method::platforms::{self, PlatformArgs};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// `fencekit --version` text.
pub use crate::method::platforms::VERSION_LINE;

/// Fencing (STONITH) toolkit: power-control BMCs and prove the result.
#[derive(Parser, Debug)]
#[command(name = "fencekit", version = VERSION_LINE, about, after_help = crate::exit::help_text())]
#[command(propagate_version = true)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The native commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Read the power state (exit 0 on, 2 off, 1 unreadable).
    #[command(after_help = url_forms_help())]
    Status(ActionArgs),
    /// Power on and confirm.
    #[command(after_help = url_forms_help())]
    On(ActionArgs),
    /// Hard power off and confirm: the fencing action.
    #[command(after_help = url_forms_help())]
    Off(FenceArgs),
    /// Power off (confirmed), then on (confirmed); or one cycle with --method cycle.
    #[command(after_help = url_forms_help())]
    Reboot(FenceArgs),
    /// Check that the BMC answers and authenticates, without touching power.
    #[command(after_help = url_forms_help())]
    Monitor(ActionArgs),
    /// Prove a node is off (or back on) with independent evidence (exit 0 proven, 3 not, 1 no evidence).
    #[command(after_help = format!("{}\n{}", url_forms_help(), verify_help()))]
    Verify(VerifyArgs),
    /// Check that every fencing level would work, without touching power (exit 0 all fine);
    /// compare with a recorded baseline, export metrics, or keep watching.
    #[command(after_help = format!("{}\n{}", url_forms_help(), crate::fleet::drift::drift_table_text()))]
    Check(CheckArgs),
    /// List what is behind a device: systems of a Redfish service, domains of a hypervisor.
    #[command(after_help = url_forms_help())]
    List(ActionArgs),
    /// Hold nodes: refuse on/off/reboot on them until released or expired (exit 1 when refused).
    Hold(HoldArgs),
    /// Release held nodes.
    Release(ReleaseArgs),
    /// Acknowledge that a node was fenced by hand (manual method).
    Ack {
        /// The nodes.
        #[arg(required = true)]
        nodes: Vec<String>,
        /// Who acknowledges (default: the local user).
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Serve simulated BMCs on loopback until interrupted.
    #[cfg(feature = "lab")]
    Lab(super::lab::LabArgs),
    /// Start an in-process lab and fence a simulated node, step by step.
    #[cfg(feature = "lab")]
    Demo(DemoArgs),
    /// Print shell completions (bash, zsh, fish, powershell, elvish).
    Completions {
        /// The shell.
        shell: String,
    },
    /// Print a man page (fencekit, fencekit-SUBCOMMAND, or a fence agent name).
    Man {
        /// The page; `fencekit` by default.
        page: Option<String>,
    },
    /// List the fence agent names, each with the fence-agents package it stands in for.
    Agents,
    /// Run as a ClusterLabs fence agent (same as invoking fencekit as NAME).
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Agent {
        /// Agent name, e.g. fence_ipmilan.
        name: String,
        /// The agent's own arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
}

/// The help of the targets argument: the schemes the native commands take
/// (from the platforms' URL forms), then names and ranges.
pub fn targets_help() -> String {
    let mut schemes: Vec<&str> = Vec::new();
    for f in crate::method::url_forms().filter(|f| f.target && !f.scheme.is_empty()) {
        if !schemes.contains(&f.scheme) {
            schemes.push(f.scheme);
        }
    }
    format!(
        "Targets: URLs ({}; forms below), or node names and host ranges (node[01-04]) from the \
         inventory",
        schemes
            .iter()
            .map(|s| format!("{s}://"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// After the options of every command that takes targets: each URL form
/// and what it names (the platforms' `URL_FORMS`, one definition).
pub fn url_forms_help() -> String {
    let mut s = String::from(
        "Target URLs (a password never goes in a URL; names and ranges resolve in the inventory):\n",
    );
    for f in crate::method::url_forms() {
        s.push_str(&format!(
            "  {}\n      {}{}\n",
            f.form,
            f.meaning,
            if f.target {
                ""
            } else {
                " [inventory endpoint only]"
            }
        ));
    }
    s
}

/// `fencekit verify --help` after the options: the verdict table and what
/// a probe's answer means.
fn verify_help() -> String {
    format!(
        "{}\nProbes (TCP to the node's address on its probe ports):\n  \
         accepted: the host is up\n  \
         reset (RST): a network stack answers there, the kernel is alive; never evidence of off\n  \
         unreachable (EHOSTUNREACH/ENETUNREACH): evidence of off\n  \
         silent (no answer within --probe-timeout): weak evidence of off (a firewall also drops)\n\
         A meter above --max-off-watts while a device reads off, or at or under it while a device \
         reads on, is a contradiction; the BMC's own meter never proves.",
        crate::fleet::verify::verdict_table_text()
    )
}

/// The `--driver` values: the platforms it selects, with their help.
fn driver_values() -> PossibleValuesParser {
    PossibleValuesParser::new(
        platforms::DRIVERS
            .iter()
            .map(|d| PossibleValue::new(d.name).help(d.help)),
    )
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum Output {
    /// Short lines for people.
    #[default]
    Human,
    /// One JSON document.
    Json,
    /// One JSON object per event, as it happens, then one per result.
    Jsonl,
    /// `check` only: OpenMetrics / Prometheus text (node_exporter's textfile collector).
    Openmetrics,
}

impl Command {
    /// True when `--output openmetrics` is given to another command than
    /// `check` (which alone writes metrics).
    pub fn misplaced_metrics(&self) -> bool {
        let output = match self {
            Command::Status(a) | Command::On(a) | Command::Monitor(a) | Command::List(a) => {
                a.output
            }
            Command::Off(f) | Command::Reboot(f) => f.action.output,
            Command::Verify(v) => v.action.output,
            Command::Hold(h) => h.output,
            #[cfg(feature = "lab")]
            Command::Demo(d) => d.output,
            _ => return false,
        };
        output == Output::Openmetrics
    }
}

/// Reboot methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum Method {
    /// Off (confirmed) then on (confirmed).
    #[default]
    Onoff,
    /// One power-cycle command; unverified (with --verify: seen off, then on).
    Cycle,
}

/// Options shared by status/on/off/reboot/monitor.
#[derive(Args, Debug, Clone)]
pub struct ActionArgs {
    // Help: from the platforms' URL forms (`targets_help`).
    #[arg(help = targets_help())]
    pub targets: Vec<String>,

    /// Inventory file (TOML) naming nodes and their fencing methods.
    #[arg(long, short = 'i', value_name = "PATH", env = "FENCEKIT_INVENTORY")]
    pub inventory: Option<PathBuf>,
    /// Act on every node of the inventory.
    #[arg(long)]
    pub all: bool,
    /// Most targets in flight at once.
    #[arg(long, value_name = "N", default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub parallel: u32,
    /// For on and reboot: start node i after i × DUR (spreads inrush current).
    #[arg(long, value_name = "DUR", default_value = "0s", value_parser = crate::time::parse_duration)]
    pub stagger: std::time::Duration,
    /// Least time between two sessions on one device (nodes sharing a BMC,
    /// or systems of one Redfish service; not PDUs, which serve their rack
    /// one request at a time).
    #[arg(long, value_name = "DUR", default_value = "200ms", value_parser = crate::time::parse_duration)]
    pub bmc_interval: std::time::Duration,
    /// Most sessions at once to one address, within this run (several
    /// devices behind one address: VirtualBMC ports, sushy-tools systems).
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_per_address: u32,
    /// Use only this fencing level of each inventory node (1 = first method).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub level: Option<u32>,
    /// Append one JSON line per finished target to this file.
    #[arg(long, value_name = "PATH", env = "FENCEKIT_AUDIT")]
    pub audit: Option<PathBuf>,
    /// Resolve targets, methods and credential references; print the plan; contact nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not take the per-BMC lock that serialises fencekit processes on this host.
    #[arg(long)]
    pub no_lock: bool,
    /// The node's own (data-plane) address, probed by verify (URL targets; inventories set `address`).
    #[arg(long, value_name = "HOST")]
    pub address: Option<String>,
    /// A TCP port the node's host answers on when up (repeatable).
    #[arg(long = "probe-port", value_name = "PORT")]
    pub probe_ports: Vec<u16>,
    /// After off / reboot: verify the result (off, or back on) and fold it into the result.
    #[arg(long)]
    pub verify: bool,
    /// Verify: accept the BMC's reads alone (verdict bmc-only) as proof for these nodes;
    /// recorded in the evidence and the audit (inventory: accept_bmc_only = true).
    #[arg(long)]
    pub accept_bmc_only: bool,
    /// Verify: the most watts a node reported off may draw; more is a contradiction
    /// (inventory: max_off_watts).
    #[arg(long, value_name = "W", default_value_t = crate::fleet::verify::DEFAULT_MAX_OFF_WATTS,
          value_parser = parse_watts)]
    pub max_off_watts: f64,
    /// Allow a host profile (ssh://NODE/host) as a node's only fencing level: the node is asked to
    /// power itself off, which nothing can observe, so off is "sent, unverified" (exit 3)
    /// unless --verify proves it (inventory: allow_host_only = true).
    #[arg(long)]
    pub allow_host_only: bool,

    /// Refuse to act unless the machine reports this system UUID (read in the
    /// same session, before any power command; IPMI GUIDs match in either
    /// byte order). For one URL or --ip target; inventories use `uuid = "…"`.
    #[arg(long, value_name = "UUID")]
    pub expect_uuid: Option<String>,
    /// Refuse to act unless the machine reports this serial number (same rules as --expect-uuid).
    #[arg(long, value_name = "SERIAL")]
    pub expect_serial: Option<String>,

    /// Driver for --ip targets.
    #[arg(long, default_value = platforms::DEFAULT.name(), value_parser = driver_values())]
    pub driver: String,
    /// BMC address (instead of a target URL).
    #[arg(long, short = 'a', value_name = "HOST")]
    pub ip: Option<String>,
    /// BMC UDP port.
    #[arg(long, short = 'u', value_name = "PORT")]
    pub ipport: Option<u16>,
    /// BMC user name.
    #[arg(long, short = 'l', value_name = "USER")]
    pub username: Option<String>,
    /// Password on the command line: visible to other local users (prefer the
    /// options below).
    #[arg(long, short = 'p', value_name = "PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// Read the password from a file (first line).
    #[arg(long, value_name = "PATH")]
    pub password_file: Option<PathBuf>,
    /// Read the password from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub password_env: Option<String>,
    /// Run this command (sh -c) and use its output as the password.
    #[arg(long, short = 'S', value_name = "CMD")]
    pub password_script: Option<String>,

    /// Which machine behind the device: a Redfish system (Id, Name, UUID or
    /// @odata.id), a hypervisor's domain, an EC2 instance (--driver aws).
    #[arg(long, short = 'n', value_name = "SYSTEM")]
    pub plug: Option<String>,
    /// HTTPS: trust this PEM file (a private CA, or the device's own self-signed certificate).
    #[arg(long, value_name = "PATH")]
    pub ca_cert: Option<PathBuf>,
    /// HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…).
    #[arg(long, value_name = "FP")]
    pub ssl_fingerprint: Option<String>,
    /// HTTPS: do not verify the certificate (anyone on the path can impersonate the
    /// BMC or the API server).
    #[arg(long)]
    pub ssl_insecure: bool,

    /// Each platform's own options (`src/NAME/args.rs`).
    #[command(flatten)]
    pub platforms: PlatformArgs,

    /// Blind wait after each power command before polling.
    #[arg(long, value_name = "DUR", default_value = "0s", value_parser = crate::time::parse_duration)]
    pub power_wait: std::time::Duration,
    /// How long a power transition may take to be observed.
    #[arg(long, value_name = "DUR", default_value = "20s", value_parser = crate::time::parse_duration)]
    pub power_timeout: std::time::Duration,
    /// First interval between status polls (grows up to 1s while nothing changes).
    #[arg(long, value_name = "DUR", default_value = "25ms", value_parser = crate::time::parse_duration)]
    pub poll_interval: std::time::Duration,
    /// Consecutive identical reads needed to confirm a state.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub confirm: u32,
    /// Extra attempts of the power-on command.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub retry_on: u32,
    /// Reboot method.
    #[arg(long, short = 'm', value_enum, default_value_t = Method::Onoff)]
    pub method: Method,
    /// Deadline for the whole action.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = crate::time::parse_duration)]
    pub timeout: std::time::Duration,
    /// Bound on session set-up and on each request (within an action's
    /// --timeout, an IPMI set-up the BMC answered in part starts once more).
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = crate::time::parse_duration)]
    pub login_timeout: std::time::Duration,

    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Human)]
    pub output: Output,
    /// More detail on stderr (-v, -vv, -vvv); never shows secrets.
    #[arg(long, short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// Options of `off` and `reboot`: the common ones and operator safety.
#[derive(Args, Debug, Clone)]
pub struct FenceArgs {
    /// Targets and connection options, as for the other commands.
    #[command(flatten)]
    pub action: ActionArgs,
    /// The mass-fencing guard, the confirmed-off hook, crash dump first.
    #[command(flatten)]
    pub safety: SafetyArgs,
}

/// Options of `off` and `reboot` that guard against mistakes and integrate
/// with what runs around fencing.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Operator safety")]
pub struct SafetyArgs {
    /// Refuse (exit 64, nothing contacted) to act on more nodes than N, or
    /// than P% of the inventory (of the targets named, without one);
    /// default: the inventory's `max_fence`.
    #[arg(long, value_name = "N|P%", value_parser = parse_limit)]
    pub max_fence: Option<crate::fleet::guard::Limit>,
    /// Act beyond --max-fence anyway; needs --reason and an audit trail.
    #[arg(long, requires = "reason")]
    pub force: bool,
    /// Why --force is used (recorded in the audit trail with who used it).
    #[arg(long, value_name = "TEXT", requires = "force")]
    pub reason: Option<String>,
    /// Run CMD (sh -c) once while the node is observed off: after off is
    /// confirmed; during reboot, between the confirmed off and the power-on.
    /// It gets FENCEKIT_NODE, FENCEKIT_ACTION, FENCEKIT_METHOD, FENCEKIT_LEVEL,
    /// FENCEKIT_EVIDENCE and more, never a secret. Default: the inventory's
    /// `on_confirmed_off`.
    #[arg(long, value_name = "CMD")]
    pub on_confirmed_off: Option<String>,
    /// Time limit of the confirmed-off hook (cut to the action's deadline).
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = crate::time::parse_duration)]
    pub hook_timeout: std::time::Duration,
    /// reboot: power the node on even if the confirmed-off hook failed (the
    /// result still fails); without it the node is left off.
    #[arg(long)]
    pub on_despite_hook_failure: bool,
    /// Send an NMI first and let the node's kdump save a crash dump (it
    /// reports with fence_kdump_send) before the hard power-off.
    #[arg(long)]
    pub crashdump: bool,
    /// --crashdump: the longest wait for the dump, from the NMI; it must
    /// fit in --timeout with the power-off (--power-timeout, --login-timeout).
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = crate::time::parse_duration)]
    pub crashdump_wait: std::time::Duration,
    /// --crashdump: UDP port the node's fence_kdump_send messages arrive on.
    #[arg(long, value_name = "PORT", default_value_t = crate::kdump::codec::DEFAULT_PORT)]
    pub kdump_port: u16,
    /// --crashdump: once the node reports, the dump counts as done when no
    /// message came for this long (fence_kdump_send repeats every 10s by default).
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = crate::time::parse_duration)]
    pub kdump_quiet: std::time::Duration,
}

fn parse_limit(s: &str) -> Result<crate::fleet::guard::Limit, String> {
    s.parse()
        .map_err(|e: crate::fleet::guard::BadLimit| e.to_string())
}

/// `fencekit hold` options.
#[derive(Args, Debug, Clone)]
pub struct HoldArgs {
    /// Nodes: inventory names, host ranges (node[01-04]) or target URLs.
    #[arg(required_unless_present_any = ["list", "all"])]
    pub targets: Vec<String>,
    /// Hold every node of the inventory (a planned shutdown of the cluster).
    #[arg(long, conflicts_with = "list")]
    pub all: bool,
    /// How long the hold lasts (it then expires by itself), e.g. 2h.
    #[arg(long = "for", value_name = "DUR", value_parser = crate::time::parse_duration,
          required_unless_present = "list")]
    pub duration: Option<std::time::Duration>,
    /// Why (shown to whoever is refused, and recorded).
    #[arg(long, value_name = "TEXT", required_unless_present = "list")]
    pub reason: Option<String>,
    /// Who holds (default: the local user).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Show the holds in force (who, why, until when) instead.
    #[arg(long, conflicts_with_all = ["targets", "duration", "reason", "by"])]
    pub list: bool,
    /// Inventory: names and ranges resolve there, and the nodes' BMC
    /// endpoints are held too.
    #[arg(long, short = 'i', value_name = "PATH", env = "FENCEKIT_INVENTORY")]
    pub inventory: Option<PathBuf>,
    /// Append one JSON line per hold to this file.
    #[arg(long, value_name = "PATH", env = "FENCEKIT_AUDIT")]
    pub audit: Option<PathBuf>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Human)]
    pub output: Output,
}

/// `fencekit release` options.
#[derive(Args, Debug, Clone)]
pub struct ReleaseArgs {
    /// Held nodes: names, host ranges or target URLs, as given to `hold`.
    #[arg(required_unless_present = "all")]
    pub targets: Vec<String>,
    /// Release every hold in force on this host.
    #[arg(long, conflicts_with = "targets")]
    pub all: bool,
    /// Who releases (default: the local user).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Inventory (names and ranges resolve there).
    #[arg(long, short = 'i', value_name = "PATH", env = "FENCEKIT_INVENTORY")]
    pub inventory: Option<PathBuf>,
    /// Append one JSON line per release to this file.
    #[arg(long, value_name = "PATH", env = "FENCEKIT_AUDIT")]
    pub audit: Option<PathBuf>,
}

/// `fencekit verify` options.
#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Targets and connection options, as for the other commands.
    #[command(flatten)]
    pub action: ActionArgs,
    /// The state to prove.
    #[arg(long, default_value = "off", value_parser = ["off", "on"])]
    pub expect: String,
    /// Consecutive BMC reads per channel.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub samples: u32,
    /// Time between two BMC reads.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = crate::time::parse_duration)]
    pub interval: std::time::Duration,
    /// Bound on one TCP probe of the host.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = crate::time::parse_duration)]
    pub probe_timeout: std::time::Duration,
    /// --expect on: how long the host may take to answer after power-on.
    #[arg(long, value_name = "DUR", default_value = "120s", value_parser = crate::time::parse_duration)]
    pub boot_timeout: std::time::Duration,
    /// --expect on: compare the nodes' [[node.check]] digests with this baseline file.
    #[arg(long, value_name = "PATH")]
    pub baseline: Option<std::path::PathBuf>,
    /// --expect on: run the checks and record their digests in this file (merged per node).
    #[arg(long, value_name = "PATH")]
    pub record_baseline: Option<std::path::PathBuf>,
}

/// `fencekit check` options.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// Targets and connection options, as for the other commands.
    #[command(flatten)]
    pub action: ActionArgs,
    /// Print, on stdout, an `[identity.NODE]` table for each inventory node
    /// that is not pinned yet and whose levels agree about who it is, ready
    /// to append to the inventory (`>> inventory.toml`); the check table
    /// goes to stderr. Exit 1 when a node could not be recorded.
    #[arg(long)]
    pub record_identity: bool,
    /// The baseline (TOML) that --record writes and a check compares with:
    /// every difference is a named drift (see below), exit 4 weakened, 5
    /// changed, 1 broken.
    #[arg(long, value_name = "PATH", env = "FENCEKIT_BASELINE")]
    pub baseline: Option<PathBuf>,
    /// Record what each working level looks like now (identity, cipher suite and
    /// privilege, certificate, host key, reset types, outlet names, whether the
    /// node's address answers) in --baseline, replacing those levels' records.
    /// Exit 1 when a level would fail (it keeps its earlier record).
    #[arg(long, requires = "baseline", conflicts_with = "watch")]
    pub record: bool,
    /// Bound on one TCP probe of a node's own address (with --baseline).
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = crate::time::parse_duration)]
    pub probe_timeout: std::time::Duration,
    /// Check again and again, each node about every INTERVAL (±10 %, never
    /// two sessions at once on one BMC, --bmc-interval between them), log
    /// one line per change, until SIGTERM or SIGINT. Never sends a power command.
    #[arg(long, value_name = "INTERVAL", value_parser = crate::time::parse_duration)]
    pub watch: Option<std::time::Duration>,
    /// With --watch: serve /metrics (OpenMetrics) and /healthz over HTTP on
    /// this address only, e.g. 127.0.0.1:9487 (HTTPS and passwords: --web-config).
    #[arg(long, value_name = "ADDR:PORT", requires = "watch")]
    pub listen: Option<std::net::SocketAddr>,
    /// With --listen: TLS, client certificates, basic-auth users (bcrypt) and
    /// headers for /metrics, from a Prometheus exporter-toolkit web
    /// configuration (YAML). An unknown key or an option not carried out is
    /// refused (exit 64); see docs/monitoring.md.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub web_config: Option<PathBuf>,
    /// Check Pacemaker's fencing configuration (the live CIB through
    /// `cibadmin -Q`, or --cib): coverage, timing, two-node delays, SBD,
    /// then every device fencekit implements, with the parameters the
    /// fencer passes. Named findings; exit 0 fine, 1 broken, 4 weakened.
    #[arg(long, conflicts_with_all = ["far", "record", "baseline", "record_identity"])]
    pub pacemaker: bool,
    /// With --pacemaker: read the CIB from this file instead of `cibadmin -Q`.
    #[arg(long, value_name = "PATH")]
    pub cib: Option<PathBuf>,
    /// With --pacemaker: SBD's configuration on this node (default
    /// /etc/sysconfig/sbd or /etc/default/sbd, when sbd runs); given, sbd
    /// is taken to run with it.
    #[arg(long, value_name = "PATH")]
    pub sbd_config: Option<PathBuf>,
    /// Check a FenceAgentsRemediationTemplate or FenceAgentsRemediation
    /// (YAML or JSON): the agent, its parameters, every node's parameters,
    /// timeout and retries, then each node's device with the argv FAR builds.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["record", "baseline", "record_identity"])]
    pub far: Option<PathBuf>,
    /// With --far: a Secret the CR references (YAML or JSON; repeatable).
    #[arg(long = "secret", value_name = "PATH")]
    pub secrets: Vec<PathBuf>,
    /// With --far: the cluster's nodes, one name a line (or a Node list,
    /// `kubectl get nodes -o yaml`).
    #[arg(long, value_name = "PATH")]
    pub nodes: Option<PathBuf>,
    /// With --far: the time the remediation as a whole may take (NHC's
    /// escalating-remediation timeout), to compare FAR's retries with.
    #[arg(long, value_name = "DUR", value_parser = crate::time::parse_duration)]
    pub remediation_timeout: Option<std::time::Duration>,
    /// With --pacemaker or --far: read the configuration only; do not
    /// contact the devices.
    #[arg(long)]
    pub no_device_check: bool,
}

/// `fencekit demo` options.
#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Human)]
    pub output: Output,
}

/// A number of watts: finite, not negative.
fn parse_watts(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err(format!("'{s}' is not a number of watts (0 or more)")),
    }
}
