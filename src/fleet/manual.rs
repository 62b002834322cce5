//! Manual ("meatware") fencing: fencekit tells a person what to do, then
//! waits — within the deadline — for `fencekit ack NODE` from another
//! terminal or process, or for a confirmation typed at a [`Prompt`] the
//! front offers (the CLI does when stdin is a terminal; this module never
//! touches stdin or the terminal itself).
//! Who acknowledged, when and from where goes into the result and the audit
//! trail. An acknowledgment is its own outcome ([`Outcome::Acknowledged`]):
//! a person's word, never an observed power state (nobody read one).
//! Acknowledgments are small JSON files under the lock directory.

use crate::engine::error::{DriverError, ErrorKind, Stage};
use crate::engine::event::{Event, EventSink, Stamped};
use crate::engine::power::Action;
use crate::engine::run::{Cancel, Failure, Outcome};
use crate::lock::lock_dir;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// One acknowledgment.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Ack {
    /// The node.
    pub node: String,
    /// Who (local user, or `--by`).
    pub by: String,
    /// Host the acknowledgment was given on.
    pub host: String,
    /// Terminal, if any.
    pub tty: Option<String>,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// Seconds since the epoch, for freshness checks.
    pub epoch: u64,
}

/// Where acknowledgments for `node` are written.
pub fn ack_path(node: &str) -> PathBuf {
    lock_dir()
        .join("ack")
        .join(crate::lock::file_name(node).replace(".lock", ".json"))
}

fn epoch_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A front's way of letting a person confirm a manual fencing where they
/// sit (a terminal prompt), besides `fencekit ack` from elsewhere.
pub trait Prompt {
    /// Starts asking the person to confirm that `node` is done; the
    /// receiver yields true once they did (false or dropped: they did not).
    fn ask(&self, node: &str) -> tokio::sync::oneshot::Receiver<bool>;
}

/// Why an acknowledgment could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum AckError {
    /// The directory for acknowledgments cannot be created.
    #[error(transparent)]
    CreateDir(#[from] crate::lock::CreateDirError),
    /// The acknowledgment cannot be written (or moved into place).
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// It cannot be encoded (never expected: plain strings).
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
}

/// `fencekit ack NODE`: records that a person has done what was asked
/// (`tty`: the terminal they typed it on, if any, for the record).
pub fn acknowledge(node: &str, by: Option<&str>, tty: Option<String>) -> Result<PathBuf, AckError> {
    let path = ack_path(node);
    let dir = path.parent().map(PathBuf::from).unwrap_or_else(lock_dir);
    crate::lock::create_dir(&dir)?;
    let ack = Ack {
        node: node.to_string(),
        by: by
            .map(str::to_string)
            .unwrap_or_else(super::audit::local_user),
        host: super::audit::host_name(),
        tty,
        at: crate::time::utc_now(),
        epoch: epoch_now(),
    };
    let tmp = dir.join(format!(".{}.{}", std::process::id(), epoch_now()));
    let text = serde_json::to_vec(&ack)?;
    if let Err(source) = crate::private::write_new(&tmp, &text) {
        return Err(AckError::Write { path: tmp, source });
    }
    if let Err(source) = std::fs::rename(&tmp, &path) {
        return Err(AckError::Write { path, source });
    }
    Ok(path)
}

fn read_fresh(node: &str, since: u64) -> Option<Ack> {
    let path = ack_path(node);
    let text = std::fs::read(&path).ok()?;
    let ack: Ack = serde_json::from_slice(&text).ok()?;
    if ack.node == node && ack.epoch + 1 >= since {
        let _ = std::fs::remove_file(&path);
        Some(ack)
    } else {
        None
    }
}

/// Waits for a person to fence `node` by hand. Returns
/// [`Outcome::Acknowledged`] (who and when, no power state), with the
/// acknowledgment in the timeline.
pub async fn fence_by_hand(
    node: &str,
    action: Action,
    instructions: &str,
    deadline: Instant,
    sink: &mut dyn EventSink,
    prompt: Option<&dyn Prompt>,
    mut cancel: Cancel,
) -> Result<Outcome, Failure> {
    let start = Instant::now();
    let emit = |sink: &mut dyn EventSink, e: Event| sink.emit(&Stamped::new(start.elapsed(), e));
    emit(sink, Event::Started { action });
    match action {
        Action::Off | Action::On | Action::Reboot => {}
        other => {
            return Err(Failure {
                error: DriverError::new(
                    ErrorKind::Unsupported,
                    Stage::Status,
                    format!("a manual method cannot {other}: nothing reads the power state; use off, on or reboot"),
                ),
                last_state: None,
            })
        }
    }
    let verb = match action {
        Action::Off => "power it off",
        Action::On => "power it on",
        _ => "power-cycle it",
    };
    let text = format!(
        "MANUAL FENCING of {node}: {verb} by hand. {instructions}\n\
         Then confirm with: fencekit ack {node}{}",
        if prompt.is_some() {
            " (or answer the prompt here)"
        } else {
            ""
        }
    );
    emit(sink, Event::AwaitingAcknowledgment { instructions: text });
    let since = epoch_now();
    // A stale acknowledgment from an earlier run never counts.
    let _ = std::fs::remove_file(ack_path(node));
    let mut typed = prompt.map(|p| p.ask(node));
    loop {
        if let Some(ack) = read_fresh(node, since) {
            let by = format!(
                "{} on {}{}",
                ack.by,
                ack.host,
                ack.tty.map(|t| format!(" ({t})")).unwrap_or_default()
            );
            emit(
                sink,
                Event::Acknowledged {
                    by: by.clone(),
                    at: ack.at.clone(),
                },
            );
            return Ok(Outcome::Acknowledged { by, at: ack.at });
        }
        if let Some(rx) = typed.as_mut() {
            if let Ok(ok) = rx.try_recv() {
                typed = None;
                if ok {
                    let by = format!(
                        "{} on {} (typed at the prompt)",
                        super::audit::local_user(),
                        super::audit::host_name()
                    );
                    let at = crate::time::utc_now();
                    emit(
                        sink,
                        Event::Acknowledged {
                            by: by.clone(),
                            at: at.clone(),
                        },
                    );
                    return Ok(Outcome::Acknowledged { by, at });
                }
            }
        }
        if Instant::now() >= deadline {
            return Err(Failure {
                error: DriverError::new(
                    ErrorKind::Timeout,
                    Stage::Wait,
                    format!(
                        "nobody acknowledged the manual fencing of {node} within {:.0}s (fencekit ack {node})",
                        start.elapsed().as_secs_f64()
                    ),
                ),
                last_state: None,
            });
        }
        let nap = tokio::time::sleep(Duration::from_millis(200).min(deadline - Instant::now()));
        tokio::select! {
            _ = nap => {}
            _ = cancel.cancelled() => {
                return Err(Failure {
                    error: DriverError::new(
                        ErrorKind::Interrupted,
                        Stage::Wait,
                        format!("stopped by a signal while waiting for the manual fencing of {node}"),
                    ),
                    last_state: None,
                });
            }
        }
    }
}
