//! The one script runner: `/bin/sh -c COMMAND` with stdin closed, in a
//! process group of its own that is killed whole (SIGKILL, grandchildren
//! included) at its time limit or when the caller stops waiting, with an
//! environment cleaned of every inherited `FENCEKIT_*` variable (such as
//! `FENCEKIT_PASSWORD`) and of the variables the caller names, and stdout
//! and stderr captured up to a bound. Password scripts
//! ([`crate::method::credential`]) and the confirmed-off hook
//! ([`crate::fleet::hook`]) both run through it.

use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

/// How long output is still read after the shell exits (a background
/// grandchild may hold the pipes open; its output is not waited for).
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// A command to run.
pub struct Script<'a> {
    /// Shell text for `/bin/sh -c`.
    pub command: &'a str,
    /// Variables to set.
    pub env: &'a [(String, String)],
    /// Variables to remove besides every inherited `FENCEKIT_*`.
    pub remove: &'a [String],
    /// Its time limit; the whole process group is killed then.
    pub limit: Duration,
    /// Bytes kept of stdout, and of stderr.
    pub capture: usize,
}

/// Captured output of one stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The text kept (lossy UTF-8).
    pub text: String,
    /// True when more was written than kept.
    pub truncated: bool,
}

/// How a script ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it.
    Signalled,
    /// It was killed at its time limit.
    TimedOut,
    /// It could not be started.
    NotStarted(String),
}

/// What a script did.
#[derive(Clone, Debug)]
pub struct ScriptRun {
    /// How it ended.
    pub end: End,
    /// Its stdout (bounded).
    pub stdout: Captured,
    /// Its stderr (bounded).
    pub stderr: Captured,
    /// How long it ran.
    pub elapsed: Duration,
}

async fn capture<R: tokio::io::AsyncRead + Unpin>(
    pipe: Option<R>,
    limit: usize,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Captured {
    let Some(mut pipe) = pipe else {
        return Captured::default();
    };
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut chunk = [0u8; 1024];
    loop {
        tokio::select! {
            r = pipe.read(&mut chunk) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = limit.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                    truncated |= n > room;
                }
            },
            _ = stop.changed() => break,
        }
    }
    Captured {
        text: String::from_utf8_lossy(&kept).into_owned(),
        truncated,
    }
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Kills the script's process group when dropped before it was reaped: a
/// run stopped half-way (SIGINT, the caller's deadline) leaves no process
/// behind, grandchildren included.
struct Group(Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        kill_group(self.0.take());
    }
}

/// Runs `/bin/sh -c COMMAND` with stdin closed, a cleaned environment and
/// a time limit; waits for it (no child outlives a timeout: its process
/// group is killed).
pub async fn run_script(s: &Script<'_>) -> ScriptRun {
    let began = Instant::now();
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(s.command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (k, _) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if name.starts_with("FENCEKIT_") || s.remove.iter().any(|r| *r == name) {
            cmd.env_remove(&k);
        }
    }
    for (k, v) in s.env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ScriptRun {
                end: End::NotStarted(e.to_string()),
                stdout: Captured::default(),
                stderr: Captured::default(),
                elapsed: began.elapsed(),
            }
        }
    };
    let pid = child.id();
    let mut group = Group(pid);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let out = capture(child.stdout.take(), s.capture, stop_rx.clone());
    let err = capture(child.stderr.take(), s.capture, stop_rx);
    tokio::pin!(out, err);
    let (mut stdout, mut stderr) = (None, None);
    let deadline = began + s.limit;
    // The readers run while the script does (a full pipe would stall it).
    let end = {
        let wait = tokio::time::timeout_at(deadline.into(), child.wait());
        tokio::pin!(wait);
        loop {
            tokio::select! {
                r = &mut out, if stdout.is_none() => stdout = Some(r),
                r = &mut err, if stderr.is_none() => stderr = Some(r),
                w = &mut wait => break match w {
                    Ok(Ok(st)) => match st.code() {
                        Some(c) => End::Exited(c),
                        None => End::Signalled,
                    },
                    Ok(Err(e)) => End::NotStarted(e.to_string()),
                    Err(_) => End::TimedOut,
                },
            }
        }
    };
    if end == End::TimedOut {
        kill_group(pid);
        let _ = child.wait().await;
    }
    // Reaped: the group id may be reused from now on, so never signal it again.
    group.0 = None;
    let elapsed = began.elapsed();
    // What is still in the pipes is read; a grandchild that keeps them open
    // is not waited for beyond a short grace.
    let grace = tokio::time::sleep(DRAIN_GRACE);
    tokio::pin!(grace);
    let mut stopped = false;
    while stdout.is_none() || stderr.is_none() {
        tokio::select! {
            r = &mut out, if stdout.is_none() => stdout = Some(r),
            r = &mut err, if stderr.is_none() => stderr = Some(r),
            _ = &mut grace, if !stopped => {
                stopped = true;
                let _ = stop_tx.send(true);
            }
        }
    }
    let (stdout, stderr) = (stdout.unwrap_or_default(), stderr.unwrap_or_default());
    ScriptRun {
        end,
        stdout,
        stderr,
        elapsed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script<'a>(command: &'a str, env: &'a [(String, String)], limit: Duration) -> Script<'a> {
        Script {
            command,
            env,
            remove: &[],
            limit,
            capture: 16,
        }
    }

    #[tokio::test]
    async fn output_is_captured_and_bounded() {
        let r = run_script(&script(
            "echo hello; echo oops >&2; exit 3",
            &[],
            Duration::from_secs(10),
        ))
        .await;
        assert_eq!(r.end, End::Exited(3));
        assert_eq!(r.stdout.text, "hello\n");
        assert_eq!(r.stderr.text, "oops\n");
        let r = run_script(&script("seq 1 1000", &[], Duration::from_secs(10))).await;
        assert_eq!(r.end, End::Exited(0));
        assert_eq!(r.stdout.text.len(), 16);
        assert!(r.stdout.truncated);
    }

    #[tokio::test]
    async fn a_slow_script_is_killed_with_its_children() {
        let began = Instant::now();
        let r = run_script(&script(
            "sleep 30 & sleep 30; echo never",
            &[],
            Duration::from_millis(300),
        ))
        .await;
        assert_eq!(r.end, End::TimedOut);
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "{:?}",
            began.elapsed()
        );
        assert_eq!(r.stdout.text, "");
    }

    #[tokio::test]
    async fn a_run_dropped_half_way_leaves_no_process_behind() {
        let d = tempfile::tempdir().unwrap();
        let pidfile = d.path().join("pid");
        let cmd = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let spec = script(&cmd, &[], Duration::from_secs(30));
        let run = run_script(&spec);
        // Dropped when the timeout fires, as a cancelled fencing run drops it.
        assert!(tokio::time::timeout(Duration::from_millis(500), run)
            .await
            .is_err());
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let gone = |p: &str| {
            std::fs::read_to_string(format!("/proc/{}/stat", p.trim()))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true)
        };
        let t = Instant::now();
        while !gone(&pid) && t.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(gone(&pid), "the grandchild {pid} outlived the run");
    }

    #[tokio::test]
    async fn a_background_child_holding_the_pipes_is_not_waited_for() {
        let began = Instant::now();
        let r = run_script(&script("sleep 5 & echo done", &[], Duration::from_secs(10))).await;
        assert_eq!(r.end, End::Exited(0));
        assert_eq!(r.stdout.text, "done\n");
        assert!(
            began.elapsed() < Duration::from_secs(3),
            "{:?}",
            began.elapsed()
        );
    }

    #[tokio::test]
    async fn the_environment_is_set_and_secrets_are_gone() {
        let env = vec![("FENCEKIT_NODE".to_string(), "node07".to_string())];
        // The test process may or may not have these; the script must never see them.
        let r = run_script(&Script {
            command: "echo \"$FENCEKIT_NODE:${FENCEKIT_PASSWORD-unset}:${HOME+home}\"",
            env: &env,
            remove: &["HOME".to_string()],
            limit: Duration::from_secs(10),
            capture: 256,
        })
        .await;
        assert_eq!(r.stdout.text, "node07:unset:\n");
    }
}
