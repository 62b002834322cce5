//! `fencekit …`: from parsed options to engine runs, output and exit code.

use super::args::{ActionArgs, Cli, Command, Driver, IpmiVersion, Method, Output};
use super::render::{JsonLines, Progress, Report, TargetResult};
use super::target;
use crate::engine::policy::{Policy, PowerTimeout};
use crate::engine::power::{Action, PowerState, RebootMethod};
use crate::engine::run::{Cancel, CancelHandle};
use crate::exit;
use crate::fleet::audit::Audit;
use crate::fleet::fanout::{run_fleet, FleetOptions, Observer, Quiet};
use crate::fleet::inventory::Inventory;
use crate::fleet::method::{CredentialRef, MethodSpec};
use crate::fleet::plan::{select, NodePlan};
use crate::ipmi::config::{self, AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use crate::redfish::config::{is_redfish_url, parse_target as parse_redfish_target, TlsTrust};
use crate::redfish::tls::parse_fingerprint;
use crate::secret::Secret;
use crate::ssh::config::{HostKeyPolicy, SshAuth, SshConfig};
use clap::Parser;
use std::ffi::OsString;
use std::rc::Rc;
use std::time::Duration;

/// `fencekit --version` text.
pub const VERSION_LINE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (IPMI 2.0 RMCP+ suites 3/17, IPMI 1.5; fence-agents 4.12 compatible)"
);

/// Entry point of the native command line.
pub fn main(args: Vec<OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
        }
    };
    match cli.command {
        Command::Status(a) => action(Action::Status, a),
        Command::On(a) => action(Action::On, a),
        Command::Off(a) => action(Action::Off, a),
        Command::Reboot(a) => action(Action::Reboot, a),
        Command::Monitor(a) => action(Action::Monitor, a),
        Command::Verify(v) => super::verify::verify(v),
        Command::Check(a) => super::verify::check(a),
        Command::List(a) => super::verify::list(a),
        Command::Ack { nodes, by } => {
            let mut code = exit::OK;
            for n in nodes {
                match crate::fleet::manual::acknowledge(&n, by.as_deref()) {
                    Ok(_) => crate::outln!("{n}: acknowledged as fenced by hand"),
                    Err(m) => {
                        eprintln!("fencekit: cannot acknowledge {n}: {m}");
                        code = exit::FAILURE;
                    }
                }
            }
            code
        }
        Command::Lab(l) => crate::lab::serve::main(l),
        Command::Completions { shell } => super::generate::completions_main(&shell),
        Command::Man { page } => super::generate::man_main(page.as_deref()),
        Command::Demo(d) => crate::lab::demo::main(d),
        Command::Agent { name, args } => crate::agent_entry(&name, args),
    }
}

/// A single-threaded tokio runtime, built only by commands that talk to
/// devices (so `--version`, help and metadata never start one). `None`
/// after printing why, prefixed with `who`.
pub fn runtime(who: &str) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("{who}: cannot start the async runtime: {e}");
            None
        }
    }
}

/// Installs the stderr logger at the requested verbosity.
pub fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::new(format!("fencekit={level}"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(
            std::env::var_os("NO_COLOR").is_none()
                && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        )
        .with_target(false)
        .try_init();
}

/// The credential reference the command-line options name.
fn cli_credential(a: &ActionArgs) -> CredentialRef {
    if let Some(p) = &a.password {
        CredentialRef::Inline(Secret::from_str_value(p))
    } else if let Some(f) = &a.password_file {
        CredentialRef::File(f.clone())
    } else if let Some(v) = &a.password_env {
        CredentialRef::Env(v.clone())
    } else if let Some(s) = &a.password_script {
        CredentialRef::Script(s.clone())
    } else if let Some(v) = std::env::var_os("FENCEKIT_PASSWORD") {
        CredentialRef::Inline(Secret::new(v.into_encoded_bytes()))
    } else {
        CredentialRef::None
    }
}

/// Certificate trust from the command-line options.
pub fn tls_trust(
    insecure: bool,
    ca_cert: Option<&std::path::Path>,
    fingerprint: Option<&str>,
) -> Result<TlsTrust, String> {
    match (insecure, ca_cert, fingerprint) {
        (true, None, None) => Ok(TlsTrust::Insecure),
        (false, ca, None) => Ok(TlsTrust::Verify {
            ca_cert: ca.map(|p| p.to_path_buf()),
        }),
        (false, None, Some(fp)) => Ok(TlsTrust::Fingerprint(parse_fingerprint(fp)?)),
        _ => Err("give only one of --ssl-insecure, --ca-cert and --ssl-fingerprint".into()),
    }
}

fn redfish_method(a: &ActionArgs, url: &str) -> Result<MethodSpec, String> {
    let t = parse_redfish_target(url)?;
    let mut c = t.config(a.username.as_deref().unwrap_or(""), Secret::default());
    if let Some(u) = &a.systems_uri {
        c.systems_uri = Some(u.clone());
    }
    if let Some(u) = &a.redfish_uri {
        c.redfish_uri = u.clone();
    }
    c.plug = a.plug.clone();
    c.tls = tls_trust(
        a.ssl_insecure,
        a.ca_cert.as_deref(),
        a.ssl_fingerprint.as_deref(),
    )?;
    c.session_auth = a.redfish_session;
    c.validate()?;
    Ok(MethodSpec::Redfish {
        config: c,
        credential: cli_credential(a),
    })
}

/// Host-key policy from the command-line options (or inventory fields).
pub fn host_key_policy(
    known_hosts: Option<&std::path::Path>,
    pinned: Option<&str>,
    accept_new: bool,
) -> Result<HostKeyPolicy, String> {
    match (pinned, accept_new) {
        (Some(_), true) => Err("give only one of --ssh-host-key and --ssh-accept-new".into()),
        (Some(fp), false) => Ok(HostKeyPolicy::Pinned(
            crate::ssh::hostkey::parse_fingerprint(fp)?,
        )),
        (None, true) => Ok(HostKeyPolicy::AcceptNew(
            known_hosts.map(|p| p.to_path_buf()),
        )),
        (None, false) => Ok(HostKeyPolicy::KnownHosts(
            known_hosts.map(|p| p.to_path_buf()),
        )),
    }
}

fn ssh_method(a: &ActionArgs, url: &str) -> Result<MethodSpec, String> {
    let t = crate::ssh::config::parse_target(url)?;
    let username = t
        .username
        .or_else(|| a.username.clone())
        .ok_or("an SSH target needs a user name: ssh://USER@HOST/… or --username")?;
    let mut profile = t.profile;
    if let (crate::ssh::config::Profile::Virsh { plug }, Some(p)) = (&mut profile, &a.plug) {
        if plug.is_none() {
            *plug = Some(p.clone());
        }
    }
    let mut c = SshConfig::new(&t.host, &username, SshAuth::Agent, profile);
    c.port = t.port;
    c.host_keys = host_key_policy(
        a.ssh_known_hosts.as_deref(),
        a.ssh_host_key.as_deref(),
        a.ssh_accept_new,
    )?;
    c.use_sudo = a.use_sudo;
    c.missing_as_off = a.missing_as_off;
    c.connect_timeout = a.login_timeout;
    Ok(MethodSpec::Ssh {
        config: c,
        identity: a.identity_file.clone(),
        agent: a.ssh_agent,
        credential: cli_credential(a),
    })
}

/// The method a target URL (or `--ip`) gets from the command-line options.
fn url_method(a: &ActionArgs, url: &str) -> Result<MethodSpec, String> {
    if is_redfish_url(url) {
        return redfish_method(a, url);
    }
    if url.to_ascii_lowercase().starts_with("ssh://") {
        return ssh_method(a, url);
    }
    let t = target::parse(url)?;
    let credential = cli_credential(a);
    let auth: Option<AuthType> = a.auth.as_deref().map(str::parse).transpose()?;
    let username = t
        .username
        .or_else(|| a.username.clone())
        .unwrap_or_default();
    let mut c = IpmiConfig::new(
        t.host,
        t.port.or(a.ipport).unwrap_or(623),
        username,
        Secret::default(),
    );
    c.privilege = a.privlvl.parse::<Privilege>()?;
    c.cipher = a.cipher.parse::<CipherChoice>()?;
    c.version = match (a.ipmi_version, auth) {
        (IpmiVersion::V15, auth) => Version::Lan15(auth),
        (IpmiVersion::V20, Some(auth)) => Version::Lan15(Some(auth)),
        (IpmiVersion::V20, None) => Version::Lanplus,
    };
    c.kg = a
        .hexadecimal_kg
        .as_deref()
        .map(config::parse_hex_kg)
        .transpose()?;
    c.accept_unauthenticated_replies = a.accept_unauthenticated_replies;
    Ok(MethodSpec::Ipmi {
        config: c,
        credential,
    })
}

/// Native timing from the command-line options.
pub fn policy(a: &ActionArgs) -> Policy {
    Policy {
        power_wait: a.power_wait,
        power_timeout: PowerTimeout::Wall(a.power_timeout),
        poll_interval: a.poll_interval,
        poll_interval_max: a.poll_interval.max(Duration::from_secs(1)),
        confirm: a.confirm,
        retry_on: a.retry_on,
        method: match a.method {
            Method::Onoff => RebootMethod::OnOff,
            Method::Cycle => RebootMethod::Cycle,
        },
        step_timeout: Some(a.login_timeout),
        deadline: None,
        ..Policy::native()
    }
}

/// Resolves the targets of a command into node plans.
pub fn plans(a: &ActionArgs) -> Result<Vec<NodePlan>, String> {
    let inventory = a.inventory.as_deref().map(Inventory::load).transpose()?;
    let mut words = a.targets.clone();
    if let Some(ip) = &a.ip {
        let host = if ip.contains(':') {
            format!("[{ip}]")
        } else {
            ip.clone()
        };
        words.push(match a.driver {
            Driver::Ipmi => format!("ipmi://{host}"),
            Driver::Redfish => match a.ipport {
                Some(p) => format!("redfish://{host}:{p}"),
                None => format!("redfish://{host}"),
            },
            Driver::Ssh => format!(
                "ssh://{}{host}:{}/virsh/{}",
                a.username
                    .as_deref()
                    .map(|u| format!("{u}@"))
                    .unwrap_or_default(),
                a.ipport.unwrap_or(22),
                a.plug.as_deref().unwrap_or("")
            ),
        });
    }
    if words.is_empty() && !a.all {
        return Err(
            "no target given: name one as ipmi://HOST[:PORT], use --ip HOST, or name \
                    inventory nodes (--inventory PATH) or --all"
                .into(),
        );
    }
    let mut p = select(&words, a.all, inventory.as_ref(), &|u| url_method(a, u))?;
    if p.is_empty() {
        return Err("the selection matches no node".into());
    }
    let mut warned: Vec<String> = Vec::new();
    for m in p.iter().flat_map(|n| &n.levels).filter(|m| m.cleartext()) {
        if !warned.contains(&m.endpoint()) {
            eprintln!(
                "fencekit: warning: {}: plain HTTP: the password and the power commands cross \
                 the network unprotected",
                m.endpoint()
            );
            warned.push(m.endpoint());
        }
    }
    for n in &mut p {
        if n.address.is_none() {
            n.address = a.address.clone();
        }
        if n.probe_ports.is_empty() {
            n.probe_ports = a.probe_ports.clone();
        }
    }
    Ok(p)
}

/// Prints the plan of `--dry-run`; false when a credential reference is broken.
fn print_plan(action: Action, plans: &[NodePlan], a: &ActionArgs) -> bool {
    let mut ok = true;
    let mut rows = Vec::new();
    for p in plans {
        for (i, m) in p.levels.iter().enumerate() {
            if a.level.is_some_and(|l| l as usize != i + 1) {
                continue;
            }
            let cred = m.credential();
            let check = match cred.check() {
                Ok(()) => "ok".to_string(),
                Err(e) => {
                    ok = false;
                    format!("MISSING: {e}")
                }
            };
            let detail = match m {
                MethodSpec::Ipmi { config, .. } => match config.version {
                    Version::Lanplus => format!(
                        "RMCP+ cipher {}, privilege {}",
                        match config.cipher {
                            CipherChoice::Auto => "auto".to_string(),
                            CipherChoice::Suite(n) => n.to_string(),
                        },
                        config.privilege
                    ),
                    Version::Lan15(auth) => format!(
                        "IPMI 1.5 auth {}, privilege {}",
                        auth.map_or("best offered", |x| x.as_str()),
                        config.privilege
                    ),
                },
                MethodSpec::Manual { instructions, .. } => format!("by hand: {instructions}"),
                MethodSpec::Ssh {
                    config,
                    identity,
                    agent,
                    ..
                } => format!(
                    "{} profile, {}, host key {}",
                    config.profile.name(),
                    match (identity, agent) {
                        (Some(p), _) => format!("key {}", p.display()),
                        (None, true) => "ssh-agent".into(),
                        (None, false) => "password".into(),
                    },
                    match &config.host_keys {
                        crate::ssh::config::HostKeyPolicy::KnownHosts(None) =>
                            "checked against ~/.ssh/known_hosts".to_string(),
                        crate::ssh::config::HostKeyPolicy::KnownHosts(Some(p)) =>
                            format!("checked against {}", p.display()),
                        crate::ssh::config::HostKeyPolicy::Pinned(fp) => format!("pinned {fp}"),
                        crate::ssh::config::HostKeyPolicy::AcceptNew(_) =>
                            "accepted if new".to_string(),
                        crate::ssh::config::HostKeyPolicy::AcceptAny => "NOT checked".to_string(),
                    }
                ),
                MethodSpec::Redfish { config, .. } => format!(
                    "{}, {}",
                    match &config.tls {
                        TlsTrust::Verify { ca_cert: None } =>
                            "TLS verified (system trust store)".to_string(),
                        TlsTrust::Verify { ca_cert: Some(p) } =>
                            format!("TLS verified against {}", p.display()),
                        TlsTrust::Insecure => "TLS NOT verified".to_string(),
                        TlsTrust::Fingerprint(_) => "TLS pinned by fingerprint".to_string(),
                    },
                    if config.session_auth {
                        "session auth"
                    } else {
                        "basic auth"
                    }
                ),
            };
            rows.push(serde_json::json!({
                "node": p.name, "level": i + 1, "method": m.driver_name(), "endpoint": m.endpoint(),
                "username": m.username(), "credential": cred.describe(), "credential_check": check,
                "detail": detail,
            }));
        }
    }
    if a.output == Output::Human {
        crate::outln!(
            "plan: {action} on {} node(s), at most {} at once; nothing is contacted",
            plans.len(),
            a.parallel
        );
        for r in &rows {
            crate::outln!(
                "  {}  level {}  {} {}  user '{}'  password: {} ({})  {}",
                r["node"].as_str().unwrap_or(""),
                r["level"],
                r["method"].as_str().unwrap_or(""),
                r["endpoint"].as_str().unwrap_or(""),
                r["username"].as_str().unwrap_or(""),
                r["credential"].as_str().unwrap_or(""),
                r["credential_check"].as_str().unwrap_or(""),
                r["detail"].as_str().unwrap_or(""),
            );
        }
    } else {
        let doc = serde_json::json!({ "action": action, "plan": rows });
        crate::outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    }
    ok
}

/// Warns once that `--password` is visible to other local users.
pub fn warn_visible_password(a: &ActionArgs) {
    if a.password.is_some() {
        eprintln!(
            "fencekit: warning: --password is visible to other local users; prefer \
             --password-file, --password-env or FENCEKIT_PASSWORD"
        );
    }
}

/// What every command acting on targets does first: logging, the
/// `--password` warning, and the plan. `Err` is the exit code (usage).
pub fn begin(a: &ActionArgs) -> Result<Vec<NodePlan>, i32> {
    init_logging(a.verbose);
    warn_visible_password(a);
    plans(a).map_err(|m| {
        eprintln!("fencekit: {m}");
        exit::USAGE
    })
}

fn action(action: Action, a: ActionArgs) -> i32 {
    let plans = match begin(&a) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if a.dry_run {
        return if print_plan(action, &plans, &a) {
            exit::OK
        } else {
            exit::USAGE
        };
    }
    let audit = match a.audit.as_deref().map(Audit::open).transpose() {
        Ok(x) => x,
        Err(m) => {
            eprintln!("fencekit: {m}");
            return exit::USAGE;
        }
    };
    let Some(rt) = crate::cli::run::runtime("fencekit") else {
        return exit::FAILURE;
    };
    let (parallel, cut) = crate::fleet::fanout::bounded_parallel(a.parallel as usize);
    if let Some(why) = cut {
        eprintln!("fencekit: warning: {why}");
    }
    let opts = FleetOptions {
        parallel,
        stagger: a.stagger,
        bmc_interval: a.bmc_interval,
        level: a.level.map(|l| l as usize),
        lock: !a.no_lock,
        policy: policy(&a),
        node_timeout: a.timeout,
    };
    let observer: Rc<dyn Observer> = match a.output {
        Output::Jsonl => Rc::new(JsonLines),
        Output::Human => Rc::new(Progress::new(&plans, action)),
        Output::Json => Rc::new(Quiet),
    };
    let verify_plans =
        (a.verify && matches!(action, Action::Off | Action::Reboot)).then(|| plans.clone());
    let mut results = rt.block_on(async {
        let (handle, cancel) = Cancel::new();
        let signals = tokio::spawn(watch_signals(handle));
        let r = run_fleet(plans, action, &opts, cancel, observer.clone()).await;
        signals.abort();
        r
    });
    if let Some(vp) = verify_plans {
        let done: Vec<NodePlan> = vp
            .into_iter()
            .filter(|p| results.iter().any(|r| r.node == p.name && r.ok))
            .collect();
        let vopts = super::verify::default_options(
            &a,
            if action == Action::Off {
                PowerState::Off
            } else {
                PowerState::On
            },
        );
        let reports = rt.block_on(crate::fleet::verify::verify_all(&done, &vopts));
        for rep in reports {
            if let Some(r) = results.iter_mut().find(|r| r.node == rep.node) {
                r.verify = Some(rep);
            }
        }
    }
    drop(observer);
    if let Some(audit) = &audit {
        for r in &results {
            if let Err(m) = audit.record(r) {
                eprintln!("fencekit: warning: {m}");
            }
        }
    }
    match a.output {
        Output::Json => match serde_json::to_string_pretty(&Report { results: &results }) {
            Ok(s) => crate::outln!("{s}"),
            Err(e) => eprintln!("fencekit: cannot encode JSON: {e}"),
        },
        Output::Jsonl => {}
        Output::Human if results.len() == 1 => {
            let r = &results[0];
            if r.ok {
                crate::outln!("{}", r.human_line());
            } else {
                eprintln!("fencekit: {}", r.human_line());
            }
            if let Some(v) = &r.verify {
                super::verify::print_report(v);
            }
        }
        Output::Human => {
            crate::outln!("{}", super::render::table(&results));
            for r in &results {
                if let Some(v) = r.verify.as_ref().filter(|v| v.exit_code() != 0) {
                    super::verify::print_report(v);
                }
            }
            let failed = results.iter().filter(|r| !r.ok).count();
            if failed > 0 {
                eprintln!("fencekit: {failed} of {} target(s) failed", results.len());
            }
        }
    }
    exit_code(action, &results)
}

/// Cancels the running actions on SIGINT or SIGTERM.
pub async fn watch_signals(handle: CancelHandle) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
    handle.cancel();
}

/// The overall exit code (SPEC §3).
pub fn exit_code(action: Action, results: &[TargetResult]) -> i32 {
    if results.iter().any(|r| !r.ok) {
        return exit::FAILURE;
    }
    let verify = super::verify::worst(results.iter().filter_map(|r| r.verify.as_ref()));
    if verify != exit::OK {
        return verify;
    }
    if action == Action::Status && results.iter().any(|r| r.state == Some(PowerState::Off)) {
        return exit::STATUS_OFF;
    }
    exit::OK
}
