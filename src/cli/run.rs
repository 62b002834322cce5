//! `fencekit …`: from parsed options to engine runs, output and exit code.

use super::args::{ActionArgs, Cli, Command, IpmiVersion, Method, Output};
use super::credentials::{self, Sources};
use super::render::{Recorder, Report, TargetResult, Traffic};
use super::target;
use crate::engine::policy::{Policy, PowerTimeout};
use crate::engine::power::{Action, PowerState, RebootMethod};
use crate::engine::run::{run, Cancel, CancelHandle};
use crate::exit;
use crate::ipmi::config::{self, AuthType, CipherChoice, IpmiConfig, Privilege, Version};
use crate::ipmi::driver::IpmiDriver;
use crate::secret::Secret;
use clap::Parser;
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// `fencekit --version` text.
pub const VERSION_LINE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (IPMI 2.0 RMCP+ suites 3/17, IPMI 1.5; fence-agents 4.12 compatible)"
);

/// A usage problem: printed with the program name, exit 64.
struct Usage(String);

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
        Command::Lab(l) => crate::lab::serve::main(l),
        Command::Demo(d) => crate::lab::demo::main(d),
        Command::Agent { name, args } => crate::agent_entry(&name, args),
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

/// One resolved target.
struct Resolved {
    label: String,
    config: IpmiConfig,
}

fn resolve(a: &ActionArgs) -> Result<Vec<Resolved>, Usage> {
    let password = credentials::resolve(&Sources {
        argv: a.password.as_deref().map(Secret::from_str_value),
        file: a.password_file.clone(),
        env: a.password_env.clone(),
        script: a.password_script.clone(),
    })
    .map_err(Usage)?
    .unwrap_or_default();
    let privilege: Privilege = a.privlvl.parse().map_err(Usage)?;
    let cipher: CipherChoice = a.cipher.parse().map_err(Usage)?;
    let auth: Option<AuthType> = a
        .auth
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(Usage)?;
    let version = match (a.ipmi_version, auth) {
        (IpmiVersion::V15, auth) => Version::Lan15(auth),
        (IpmiVersion::V20, Some(auth)) => Version::Lan15(Some(auth)),
        (IpmiVersion::V20, None) => Version::Lanplus,
    };
    let kg = a
        .hexadecimal_kg
        .as_deref()
        .map(config::parse_hex_kg)
        .transpose()
        .map_err(Usage)?;
    let mut specs: Vec<(String, Option<String>, Option<u16>)> = Vec::new();
    for t in &a.targets {
        let p = target::parse(t).map_err(Usage)?;
        specs.push((p.host.clone(), p.username.clone(), p.port));
    }
    if let Some(ip) = &a.ip {
        specs.push((ip.clone(), None, None));
    }
    if specs.is_empty() {
        return Err(Usage(
            "no target given: name one as ipmi://HOST[:PORT], or use --ip HOST".into(),
        ));
    }
    let mut out = Vec::new();
    for (host, user, port) in specs {
        let port = port.or(a.ipport).unwrap_or(623);
        let username = user.or_else(|| a.username.clone()).unwrap_or_default();
        let mut c = IpmiConfig::new(host.clone(), port, username, password.clone());
        c.privilege = privilege;
        c.cipher = cipher;
        c.version = version;
        c.kg = kg.clone();
        c.validate().map_err(Usage)?;
        let label = target::IpmiTarget {
            username: None,
            host,
            port: Some(port),
        }
        .to_string();
        out.push(Resolved { label, config: c });
    }
    Ok(out)
}

fn policy(a: &ActionArgs, start: Instant) -> Policy {
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
        deadline: Some(start + a.timeout),
        ..Policy::native()
    }
}

fn action(action: Action, a: ActionArgs) -> i32 {
    init_logging(a.verbose);
    let start = Instant::now();
    if a.password.is_some() {
        eprintln!(
            "fencekit: warning: --password is visible to other local users; prefer \
             --password-file, --password-env or FENCEKIT_PASSWORD"
        );
    }
    let targets = match resolve(&a) {
        Ok(t) => t,
        Err(Usage(m)) => {
            eprintln!("fencekit: {m}");
            return exit::USAGE;
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fencekit: cannot start the async runtime: {e}");
            return exit::FAILURE;
        }
    };
    let progress = a.output == Output::Human && action != Action::Status;
    let pol = policy(&a, start);
    let results = rt.block_on(async {
        let (handle, cancel) = Cancel::new();
        let signals = tokio::spawn(watch_signals(handle));
        let mut results = Vec::new();
        for t in targets {
            results.push(one(action, t, &pol, cancel.clone(), progress).await);
        }
        signals.abort();
        results
    });
    match a.output {
        Output::Json => {
            let doc = Report { results: &results };
            match serde_json::to_string_pretty(&doc) {
                Ok(s) => println!("{s}"),
                Err(e) => eprintln!("fencekit: cannot encode JSON: {e}"),
            }
        }
        Output::Human => {
            for r in &results {
                if r.ok {
                    println!("{}", r.human_line());
                } else {
                    eprintln!("fencekit: {}", r.human_line());
                }
            }
        }
    }
    exit_code(action, &results)
}

async fn one(
    action: Action,
    t: Resolved,
    pol: &Policy,
    cancel: Cancel,
    progress: bool,
) -> TargetResult {
    let began = Instant::now();
    let mut rec = Recorder::new(&t.label, progress);
    let mut driver = match IpmiDriver::new(t.config) {
        Ok(d) => d,
        Err(m) => {
            return TargetResult::new(
                t.label,
                action,
                &Err(crate::engine::run::Failure {
                    error: crate::engine::error::DriverError::new(
                        crate::engine::error::ErrorKind::Config,
                        crate::engine::error::Stage::Authenticate,
                        m,
                    ),
                    last_state: None,
                }),
                began.elapsed(),
                vec![],
                Traffic::default(),
            )
        }
    };
    let r = run(&mut driver, action, pol, &mut rec, cancel).await;
    rec.finish();
    let s = driver.stats();
    TargetResult::new(
        t.label,
        action,
        &r,
        began.elapsed(),
        std::mem::take(&mut rec.timeline),
        Traffic {
            sent: s.sent,
            received: s.received,
            retransmits: s.retransmits,
        },
    )
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
    if action == Action::Status && results.iter().any(|r| r.state == Some(PowerState::Off)) {
        return exit::STATUS_OFF;
    }
    exit::OK
}
