//! Agent-mode logging in fence-agents' shape:
//! `YYYY-MM-DD HH:MM:SS,mmm LEVEL: message` on stderr (and in the
//! `--debug-file`), warnings and errors always, debug and info lines only
//! with `-v`; `-q` silences stderr.
//!
//! Timestamps are UTC (upstream uses local time; fencekit avoids reading the
//! time zone database, and FAR's containers run in UTC anyway). Also bridges
//! `tracing` events from the protocol drivers into the same lines while an
//! action runs ([`Logger::tracing_guard`]). Callers must never pass a secret.

use crate::time::timestamp;
use std::fmt::Write as _;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

/// Severity, as Python's logging names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Details for `-v`.
    Debug,
    /// Progress for `-v` (upstream logs commands at this level).
    Info,
    /// Something was ignored or looks wrong.
    Warning,
    /// The action failed.
    Error,
}

impl Level {
    /// The upper-case name printed in each line.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warning => "WARNING",
            Level::Error => "ERROR",
        }
    }
}

struct Inner {
    stderr: Box<dyn Write + Send>,
    file: Option<std::fs::File>,
    threshold: Level,
    quiet: bool,
}

/// Writes log lines to stderr and the debug file. Cheap to clone.
#[derive(Clone)]
pub struct Logger(Arc<Mutex<Inner>>);

impl Logger {
    /// A logger writing to `stderr`, showing warnings and errors.
    pub fn new(stderr: Box<dyn Write + Send>) -> Self {
        Logger(Arc::new(Mutex::new(Inner {
            stderr,
            file: None,
            threshold: Level::Warning,
            quiet: false,
        })))
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        let mut g = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut g)
    }

    /// Shows debug and info lines too (`-v`).
    pub fn set_verbose(&self, on: bool) {
        self.with(|i| i.threshold = if on { Level::Debug } else { Level::Warning });
    }

    /// True when debug lines are shown.
    pub fn verbose(&self) -> bool {
        self.with(|i| i.threshold == Level::Debug)
    }

    /// Stops writing to stderr (`-q`); the debug file still gets every line.
    pub fn set_quiet(&self, on: bool) {
        self.with(|i| i.quiet = on);
    }

    /// Also appends every shown line to this file.
    pub fn set_file(&self, file: std::fs::File) {
        self.with(|i| i.file = Some(file));
    }

    /// Logs one message (which must hold no secret).
    pub fn log(&self, level: Level, msg: &str) {
        self.with(|i| {
            if level < i.threshold {
                return;
            }
            let line = format!(
                "{} {}: {msg}\n",
                timestamp(SystemTime::now()),
                level.as_str()
            );
            if !i.quiet {
                let _ = i.stderr.write_all(line.as_bytes());
                let _ = i.stderr.flush();
            }
            if let Some(f) = &mut i.file {
                let _ = f.write_all(line.as_bytes());
            }
        })
    }

    /// Logs at debug level.
    pub fn debug(&self, msg: &str) {
        self.log(Level::Debug, msg)
    }

    /// Logs at info level.
    pub fn info(&self, msg: &str) {
        self.log(Level::Info, msg)
    }

    /// Logs at warning level.
    pub fn warn(&self, msg: &str) {
        self.log(Level::Warning, msg)
    }

    /// Logs at error level.
    pub fn error(&self, msg: &str) {
        self.log(Level::Error, msg)
    }

    /// Routes `tracing` events of this thread into this logger until the
    /// guard is dropped (only when verbose; otherwise `None`).
    pub fn tracing_guard(&self) -> Option<tracing::subscriber::DefaultGuard> {
        use tracing_subscriber::layer::SubscriberExt;
        if !self.verbose() {
            return None;
        }
        let sub = tracing_subscriber::registry().with(Bridge(self.clone()));
        Some(tracing::subscriber::set_default(sub))
    }
}

/// A `tracing` layer that turns events into log lines.
struct Bridge(Logger);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Bridge {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let meta = event.metadata();
        let level = match *meta.level() {
            tracing::Level::ERROR => Level::Error,
            tracing::Level::WARN => Level::Warning,
            tracing::Level::INFO => Level::Info,
            _ => Level::Debug,
        };
        let mut v = Fields::default();
        event.record(&mut v);
        self.0.log(level, &(v.message + &v.rest));
    }
}

/// An event's message, then its other fields as ` key=value`.
#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
}

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.rest, " {}={value:?}", field.name());
        }
    }
}

/// A `Write` into a shared buffer (for capturing stderr in-process).
#[derive(Clone, Default)]
pub struct SharedBuf(pub Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    /// The bytes written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_and_quiet_apply() {
        let buf = SharedBuf::default();
        let log = Logger::new(Box::new(buf.clone()));
        log.debug("hidden");
        log.warn("shown");
        log.set_verbose(true);
        log.debug("now shown");
        log.set_quiet(true);
        log.error("silenced");
        let text = buf.text();
        assert!(
            !text.contains("hidden") && !text.contains("silenced"),
            "{text}"
        );
        assert!(
            text.contains(" WARNING: shown\n") && text.contains(" DEBUG: now shown\n"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 2);
    }

    #[test]
    fn tracing_events_become_lines_only_when_verbose() {
        let buf = SharedBuf::default();
        let log = Logger::new(Box::new(buf.clone()));
        assert!(log.tracing_guard().is_none());
        log.set_verbose(true);
        {
            let _g = log.tracing_guard();
            tracing::debug!(suite = 17, "session up");
        }
        tracing::debug!("after the guard");
        let text = buf.text();
        assert!(text.contains(" DEBUG: session up suite=17\n"), "{text}");
        assert!(!text.contains("after the guard"));
    }
}
