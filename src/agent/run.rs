//! Running as a fence agent: the entry point, the order of upstream's
//! steps, timing, signals, and the mapping of engine outcomes to result
//! lines and exit codes.
//!
//! Order (fence-agents 4.12.1): read options (argv, or stdin when argv is
//! empty) → defaults → `--help` / `metadata` / `--version` → verbosity →
//! action check → validation (`validate-all` stops here) → debug file →
//! password script → Pacemaker's `disable_timeout` → delay (off and reboot
//! only) → one engine run (or, for `list`, one listing of the device's
//! plugs). A tokio runtime is started only for actions that talk to the
//! device. The family's driver is chosen by [`device::real`].
//!
//! Exit codes are upstream's: [`EXIT_OK`], [`EXIT_FAILED`], [`EXIT_STATUS_OFF`].

use super::defs::{self, Agent};
use super::device::{self, AgentDriver, DeviceConfig, PlugEntry};
use super::key::Key;
use super::log::{Logger, SharedBuf};
use super::values::{self, Values};
use super::{families, metadata, usage};
use crate::engine::error::{ErrorKind, Stage};
use crate::engine::event::Stamped;
use crate::engine::identity::ExpectedIdentity;
use crate::engine::policy::{Case, Policy, Waits};
use crate::engine::power::{Action, PowerState};
use crate::engine::run::{run, Cancel, Failure};
use input::{fail, read_argv, read_stdin, run_password_script, set_verbosity, usage_error};
use report::name_pin_line;
pub use report::{report, Refusals, Report, EXIT_FAILED, EXIT_OK, EXIT_STATUS_OFF};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::time::{Duration, Instant};
pub use timing::{delay_for, policy};
use timing::{step_timeout, timeouts_disabled};

/// The notice upstream prints for `list` on agents without outlets.
const LIST_NOTICE: &str = "NOTICE: List option is not working on this device yet";

/// What an agent takes from its surroundings besides argv and stdin.
#[derive(Clone, Debug)]
pub struct AgentEnv {
    /// The value of `PCMK_service` (`pacemaker-fenced` turns on `disable_timeout`).
    pub pcmk_service: Option<String>,
    /// When the process started (`delay` counts from here).
    pub started: Instant,
    /// Testing aid: behave as if SIGTERM arrived this long after the action began.
    pub stop_after: Option<Duration>,
}

impl AgentEnv {
    /// The real environment, with `started` = now.
    pub fn from_process() -> Self {
        AgentEnv {
            pcmk_service: std::env::var("PCMK_service").ok(),
            started: Instant::now(),
            stop_after: None,
        }
    }

    /// An environment with no Pacemaker variable, started now.
    pub fn plain() -> Self {
        AgentEnv {
            pcmk_service: None,
            started: Instant::now(),
            stop_after: None,
        }
    }
}

/// True when `name` (a bare name such as `fence_ilo4`, or a path to one) is an
/// agent this binary can be; for argv[0] dispatch.
pub fn known_agent(name: &str) -> bool {
    defs::is_agent(basename(name))
}

/// Every agent name, main names and aliases (for installers and completions).
pub fn agent_names() -> Vec<&'static str> {
    defs::all_names()
}

/// Runs as the agent `name` (argv[0]'s file name, or NAME of `fencekit agent
/// NAME`) with `args` (argv without argv[0]), on the process's stdin, stdout
/// and stderr. Returns the exit code.
pub fn main(name: &str, args: Vec<OsString>) -> i32 {
    let env = AgentEnv::from_process();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    run_with(
        name,
        args,
        stdin.lock(),
        &mut stdout,
        Box::new(std::io::stderr()),
        &env,
    )
}

/// [`main`] with every input and output given: the in-process form used by tests.
pub fn run_with(
    name: &str,
    args: Vec<OsString>,
    stdin: impl Read,
    stdout: &mut dyn Write,
    stderr: Box<dyn Write + Send>,
    env: &AgentEnv,
) -> i32 {
    run_with_device(name, args, stdin, stdout, stderr, env, device::real)
}

/// What one in-process run printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// Exit code.
    pub code: i32,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

/// Runs in-process with string arguments and stdin, capturing the output.
pub fn run_captured(name: &str, args: &[&str], stdin: &str, env: &AgentEnv) -> Captured {
    capture(|out, err| {
        let args = args.iter().map(OsString::from).collect();
        run_with(name, args, stdin.as_bytes(), out, err, env)
    })
}

fn capture(f: impl FnOnce(&mut dyn Write, Box<dyn Write + Send>) -> i32) -> Captured {
    let err = SharedBuf::default();
    let mut out = Vec::new();
    let code = f(&mut out, Box::new(err.clone()));
    Captured {
        code,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: err.text(),
    }
}

/// [`run_with`] with the driver made by `make` from the family's
/// configuration (the real drivers: [`device::real`]).
pub fn run_with_device<D, F>(
    name: &str,
    args: Vec<OsString>,
    stdin: impl Read,
    stdout: &mut dyn Write,
    stderr: Box<dyn Write + Send>,
    env: &AgentEnv,
    make: F,
) -> i32
where
    D: AgentDriver,
    F: FnOnce(DeviceConfig) -> Result<D, String>,
{
    let log = Logger::new(stderr);
    let prepared = match prepare(name, args, stdin, stdout, &log, env) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let cfg = match device_config(&prepared.agent, &prepared.values) {
        Ok(c) => c,
        Err(e) => return fail(&log, &e),
    };
    log.debug(&cfg.describe());
    for w in cfg.warnings() {
        log.warn(&w);
    }
    let lock_key = cfg.lock_key();
    let driver = match make(cfg) {
        Ok(d) => d,
        Err(e) => return fail(&log, &e),
    };
    execute(prepared, driver, lock_key, stdout, &log, env)
}

/// The family's device configuration from validated option values.
fn device_config(agent: &Agent, values: &Values) -> Result<DeviceConfig, String> {
    match families::of(agent) {
        Some(f) => (f.config)(values, agent),
        None => Err(format!(
            "no platform serves driver '{}' in this build",
            agent.family.driver
        )),
    }
}

fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// What an invocation asks of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    /// One engine action.
    Power(Action),
    /// List the plugs: `list` (`print`, no state), `list-status` (`print`
    /// and `state`), or a plug-based agent's `monitor` (neither: the listing
    /// only proves the device answers, as upstream does it).
    List { print: bool, state: bool },
}

/// An invocation ready to act on the device.
struct Prepared {
    agent: Agent,
    values: Values,
    job: Job,
    /// `--expect-uuid` (fencekit only): who the machine must be.
    expect: ExpectedIdentity,
}

/// Everything before the device is contacted. `Err` carries the exit code
/// of an invocation that is complete (help, metadata, validate-all, list,
/// usage errors).
fn prepare(
    name: &str,
    args: Vec<OsString>,
    input: impl Read,
    stdout: &mut dyn Write,
    log: &Logger,
    env: &AgentEnv,
) -> Result<Prepared, i32> {
    let Some(agent) = defs::agent(basename(name)) else {
        log.error(&format!(
            "unknown fence agent '{name}' (known: {})",
            defs::all_names().join(", ")
        ));
        return Err(EXIT_FAILED);
    };
    let mut values = if args.is_empty() {
        read_stdin(input, &agent, log)?
    } else {
        read_argv(args, &agent, log)?
    };
    if values.has(Key::PortAsIp) {
        if let Some(plug) = values.get(Key::Plug).map(str::to_string) {
            values.set(Key::Ip, plug);
        }
    }
    let given: Vec<String> = values.iter().map(|(k, _)| k.to_string()).collect();
    values.apply_defaults(&agent);
    let mut action = values.get(Key::Action).unwrap_or_default().to_lowercase();
    if action == "meta-data" {
        action = "metadata".to_string();
    }
    values.set(Key::Action, action.clone());

    if values.has(Key::Help) {
        return Err(print(stdout, &usage::render(&agent)));
    }
    if action == "metadata" || action == "manpage" {
        return Err(print(stdout, &metadata::render(&agent)));
    }
    if values.has(Key::Version) {
        return Err(print(stdout, &format!("{}\n", agent.family.compat_version)));
    }

    set_verbosity(&mut values, log);
    if !agent.accepts_action(&action) {
        return Err(usage_error(
            log,
            &format!("Failed: Unrecognised action '{action}'"),
        ));
    }
    let mut errors = values::validate(&mut values, &agent);
    errors.extend(families::check(&values, &agent));
    let expect = match expected_identity(&values, &agent) {
        Ok(e) => e,
        Err(m) => {
            errors.push(format!("Failed: {m}"));
            ExpectedIdentity::default()
        }
    };
    if action == "validate-all" {
        let mut errors = errors;
        if errors.is_empty() {
            if let Err(e) = check_device_config(&agent, &values) {
                errors.push(format!("Failed: {e}"));
            }
        }
        if errors.is_empty() {
            return Err(EXIT_OK);
        }
        for e in &errors {
            log.error(e);
        }
        return Err(usage_error(log, "validate-all failed"));
    }
    if let Some(first) = errors.first() {
        return Err(usage_error(log, first));
    }
    if let Some(path) = values.get(Key::DebugFile) {
        let file = crate::private::open_append(std::path::Path::new(path));
        match file {
            Ok(f) => log.set_file(f),
            Err(e) => {
                log.error(&format!("Unable to create file {path}: {e}"));
                return Err(usage_error(
                    log,
                    &format!("Failed: Unable to create file {path}"),
                ));
            }
        }
    }
    if let Some(script) = values.get(Key::PasswordScript).map(str::to_string) {
        match run_password_script(&script, log) {
            Ok(pw) => values.set(Key::Password, pw),
            Err(e) => return Err(fail(log, &e)),
        }
    }
    if let Some(script) = values.get(Key::SnmpPrivPasswdScript).map(str::to_string) {
        match run_password_script(&script, log) {
            Ok(pw) => values.set(Key::SnmpPrivPasswd, pw),
            Err(e) => return Err(fail(log, &e)),
        }
    }
    if env.pcmk_service.as_deref() == Some("pacemaker-fenced") && !values.has(Key::DisableTimeout) {
        values.set(Key::DisableTimeout, "1");
    }
    if timeouts_disabled(&values) {
        // Unlike upstream, which sets power_timeout, shell_timeout and
        // login_timeout to 0, only the wait for the new power state is
        // lifted (see `policy`); the options keep bounding every step.
        log.debug(&format!(
            "disable_timeout: the wait for the new power state has no limit; connecting and \
             each request stay bounded ({} s each)",
            step_timeout(&values).as_secs()
        ));
    }
    for o in agent.options.iter() {
        if let Some(why) = o.ignored {
            if given.iter().any(|k| k == o.key_str()) {
                log.debug(&format!("ignoring --{}: {why}", o.long));
            }
        }
    }
    // Upstream lists plugs only on agents with outlets; the IPMI family
    // prints a notice instead. A plug-based agent's monitor is a listing.
    let plug_based = !agent.family.port_as_ip;
    let job = match action.as_str() {
        // fence-agents' fabric fencing takes enable and disable for on and off.
        "on" | "enable" => Job::Power(Action::On),
        "off" | "disable" => Job::Power(Action::Off),
        "reboot" => Job::Power(Action::Reboot),
        "status" => Job::Power(Action::Status),
        "monitor" if plug_based => Job::List {
            print: false,
            state: false,
        },
        "monitor" => Job::Power(Action::Monitor),
        "diag" => Job::Power(Action::Diag),
        "list" | "list-status" if !families::of(&agent).is_some_and(|f| f.lists) => {
            return Err(print(stdout, &format!("{LIST_NOTICE}\n")))
        }
        "list" => Job::List {
            print: true,
            state: false,
        },
        "list-status" => Job::List {
            print: true,
            state: true,
        },
        other => {
            return Err(usage_error(
                log,
                &format!("Failed: Unrecognised action '{other}'"),
            ))
        }
    };
    Ok(Prepared {
        agent,
        values,
        job,
        expect,
    })
}

/// How long `action` can take with these option values (defaults applied):
/// the agent's own `delay`, then [`Policy::worst_case`] of [`policy`] with
/// the identity pin the values ask for. `None` when the wait for the power
/// state has no bound (`disable_timeout`, `power_timeout=0`).
pub fn worst_case(values: &Values, agent: &Agent, action: Action) -> Option<Duration> {
    let mut p = policy(values);
    p.expect = expected_identity(values, agent).unwrap_or_default();
    let delay = delay_for(values, action, Duration::ZERO).unwrap_or_default();
    p.worst_case(action).map(|w| w.saturating_add(delay))
}

/// The waits behind [`worst_case`] (`Case::Worst`) or of a working
/// device's run (`Case::Typical`), the agent's `delay` first: the
/// arithmetic the configuration doctor shows. `None` in the worst case
/// when the wait for the power state has no bound.
pub fn waits(values: &Values, agent: &Agent, action: Action, case: Case) -> Option<Waits> {
    let mut p = policy(values);
    p.expect = expected_identity(values, agent).unwrap_or_default();
    let delay = delay_for(values, action, Duration::ZERO).unwrap_or_default();
    let mut w = p.waits(action, case)?;
    if !delay.is_zero() {
        w.0.insert(
            0,
            crate::engine::policy::Wait {
                what: "delay".into(),
                each: delay,
                count: 1,
            },
        );
    }
    Some(w)
}

/// The identity `--expect-uuid` (stdin `expect_uuid=`) names, and for
/// fence_aws `--expect-node-name` / `--expect-tag`; empty when none is
/// given, so that an agent without them behaves exactly as upstream.
pub fn expected_identity(values: &Values, agent: &Agent) -> Result<ExpectedIdentity, String> {
    let mut e = ExpectedIdentity::new(values.get(Key::ExpectUuid), None)
        .map_err(|e| format!("--expect-uuid: {e}"))?;
    if let Some(uid) = values.get(Key::ExpectVmUid) {
        e = e
            .with_name("metadata.uid", uid)
            .map_err(|e| format!("--expect-vm-uid: {e}"))?;
    }
    if let Some(id) = values.get(Key::ExpectVmId) {
        let id = crate::engine::identity::normalise_uuid(id).unwrap_or_else(|| id.to_string());
        e = e
            .with_name("vmId", &id)
            .map_err(|e| format!("--expect-vm-id: {e}"))?;
    }
    if let Some(id) = values.get(Key::ExpectInstanceId) {
        e = e
            .with_name("instanceId", id)
            .map_err(|e| format!("--expect-instance-id: {e}"))?;
    }
    let (name, tag) = (values.get(Key::ExpectNodeName), values.get(Key::ExpectTag));
    if name.is_none() && tag.is_none() {
        return Ok(e);
    }
    let o = crate::method::build::MethodOptions {
        node_name: name.map(str::to_string),
        expect_tag: tag.map(str::to_string),
        ..Default::default()
    };
    match crate::method::platforms::by_name(agent.family.driver) {
        Some(p) => p.expected_names(e, &o),
        None => Ok(e),
    }
    .map_err(|e| format!("--expect-node-name/--expect-tag: {e}"))
}

/// fencekit's own checks of what the family's driver will be given (beyond
/// upstream's validation), for `validate-all`.
fn check_device_config(agent: &Agent, values: &Values) -> Result<(), String> {
    device::check(device_config(agent, values)?)
}

/// Writes `text` to stdout; returns [`EXIT_OK`] (or [`EXIT_FAILED`] when stdout is gone).
fn print(stdout: &mut dyn Write, text: &str) -> i32 {
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => EXIT_OK,
        Err(_) => EXIT_FAILED,
    }
}

/// The device part: runtime, signals, delay, the engine run, the result.
fn execute<D: AgentDriver>(
    prepared: Prepared,
    mut driver: D,
    lock_key: Option<crate::lock::DeviceKey>,
    stdout: &mut dyn Write,
    log: &Logger,
    env: &AgentEnv,
) -> i32 {
    let Prepared {
        agent,
        values,
        job,
        expect,
    } = prepared;
    let mut policy = policy(&values);
    policy.expect = expect;
    let rt = match crate::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return fail(log, &format!("unable to start the I/O runtime: {e}")),
    };
    let _tracing = log.tracing_guard();
    let action = match job {
        Job::Power(a) => a,
        Job::List { print: show, state } => {
            let sep = values.get(Key::Separator).unwrap_or(",").to_string();
            let listed = rt.block_on(list(&mut driver, &policy, env));
            return match listed {
                Ok(plugs) if show => print(stdout, &list_lines(&plugs, &sep, state)),
                Ok(_) => EXIT_OK,
                Err(e) => {
                    // A refusal: the family's own line (as for an action).
                    log.error(Refusals::of(agent.family).line(
                        e.kind,
                        "Failed: Unable to obtain correct plug status or plug is not available",
                    ));
                    log.error(&format!("cause: {e}"));
                    EXIT_FAILED
                }
            };
        }
    };
    let delay = delay_for(&values, action, env.started.elapsed());
    match worst_case(&values, &agent, action) {
        Some(w) => log.debug(&format!("{action} may take up to {} s", w.as_secs())),
        None => log.debug(&format!(
            "{action}: the wait for the power state has no limit"
        )),
    }
    let result = rt.block_on(async {
        let mut stop = Stop::new(env.stop_after);
        if let Some(d) = delay {
            log.info(&format!(
                "Delay {} second(s) before logging in to the fence device",
                d.as_secs()
            ));
            tokio::select! {
                _ = tokio::time::sleep(d) => {}
                s = stop.next() => {
                    return Err(Failure {
                        error: crate::engine::error::DriverError::new(
                            ErrorKind::Interrupted,
                            Stage::Authenticate,
                            format!("stopped by {s} during the delay, before the device was contacted"),
                        ),
                        last_state: None,
                    });
                }
            }
        }
        // Serialise with other fencekit processes acting on this device
        // (unlocked, said once, where no lock can be had).
        let what = format!("{} {}", agent.invoked_as, action.as_str());
        let say = |level: crate::lock::Say, msg: &str| match level {
            crate::lock::Say::Debug => log.debug(msg),
            crate::lock::Say::Info => log.info(msg),
            crate::lock::Say::Warn => log.warn(msg),
        };
        let _lock = match &lock_key {
            Some(key) => tokio::select! {
                l = crate::lock::acquire(key, Some(policy.step_deadline()), &what, &say) => match l {
                    Ok(l) => Some(l),
                    Err(error) => return Err(Failure { error, last_state: None }),
                },
                s = stop.next() => {
                    return Err(Failure {
                        error: crate::engine::error::DriverError::new(
                            ErrorKind::Interrupted,
                            Stage::Authenticate,
                            format!("stopped by {s} while waiting for another fencekit process"),
                        ),
                        last_state: None,
                    });
                }
            },
            None => None,
        };
        let (handle, cancel) = Cancel::new();
        let mut sink = |e: &Stamped| log_event(log, e);
        let work = run(&mut driver, action, &policy, &mut sink, cancel);
        tokio::pin!(work);
        let mut stopped = false;
        loop {
            tokio::select! {
                r = &mut work => break r,
                s = stop.next(), if !stopped => {
                    log.warn(&format!("{s} received: stopping and closing the session"));
                    stopped = true;
                    handle.cancel();
                }
            }
        }
    });
    let mut rep = report(action, policy.method, Refusals::of(agent.family), &result);
    let names_only = policy.expect.uuid.is_none()
        && policy.expect.serial.is_none()
        && !policy.expect.names.is_empty();
    if let (Err(f), true) = (&result, names_only) {
        if let (Some(line), Some(first)) = (name_pin_line(f.error.kind), rep.log.first_mut()) {
            first.1 = line.to_string();
        }
    }
    for (is_error, line) in &rep.log {
        if *is_error {
            log.error(line);
        } else {
            log.warn(line);
        }
    }
    match &rep.stdout {
        Some(line) if print(stdout, &format!("{line}\n")) != EXIT_OK => EXIT_FAILED,
        _ => rep.code,
    }
}

/// Lists the plugs within one step deadline, stopping on a signal; the
/// session is closed either way.
async fn list<D: AgentDriver>(
    driver: &mut D,
    policy: &Policy,
    env: &AgentEnv,
) -> Result<Vec<PlugEntry>, crate::engine::error::DriverError> {
    let mut stop = Stop::new(env.stop_after);
    let result = tokio::select! {
        r = driver.plugs(Some(policy.step_deadline())) => r,
        s = stop.next() => Err(crate::engine::error::DriverError::new(
            ErrorKind::Interrupted,
            Stage::Status,
            format!("stopped by {s} while listing"),
        )),
    };
    driver.close().await;
    result
}

/// Upstream's list lines: `id<sep>alias`, and with `state` a third column
/// `on`, `off` or `UNKNOWN`.
pub fn list_lines(plugs: &[PlugEntry], sep: &str, state: bool) -> String {
    let mut out = String::new();
    for p in plugs {
        out.push_str(&p.id);
        out.push_str(sep);
        out.push_str(&p.alias);
        if state {
            out.push_str(sep);
            out.push_str(match p.state {
                Some(PowerState::On) => "on",
                Some(PowerState::Off) => "off",
                None => "UNKNOWN",
            });
        }
        out.push('\n');
    }
    out
}

fn log_event(log: &Logger, e: &Stamped) {
    // A workaround that drops a check is said on every use, verbose or not.
    if let crate::engine::event::Event::Workaround {
        weakens_security: true,
        ..
    } = &e.event
    {
        if let Some(w) = crate::engine::event::Tolerance::warns(&e.event) {
            log.warn(&w);
        }
        return;
    }
    let msg = e.event.describe();
    log.debug(&format!("[{:>6} ms] {msg}", e.at_ms));
}

/// SIGTERM / SIGINT (and the `stop_after` testing aid) as one stream.
struct Stop {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
    at: Option<tokio::time::Instant>,
}

impl Stop {
    fn new(after: Option<Duration>) -> Self {
        use tokio::signal::unix::{signal, SignalKind};
        Stop {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
            at: after.map(|d| tokio::time::Instant::now() + d),
        }
    }

    /// Resolves with the signal's name when one arrives.
    async fn next(&mut self) -> &'static str {
        async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
            match s {
                Some(s) => {
                    if s.recv().await.is_none() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending::<()>().await,
            }
        }
        let at = self.at;
        tokio::select! {
            _ = recv(&mut self.term) => "SIGTERM",
            _ = recv(&mut self.int) => "SIGINT",
            _ = async {
                match at {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending::<()>().await,
                }
            } => {
                self.at = None;
                "SIGTERM"
            }
        }
    }
}

mod input;
mod report;
mod timing;

#[cfg(test)]
mod tests;
