//! A one-line progress display on stderr (a terminal): a spinner naming the
//! current step for one target, a bar with a count for several.
//!
//! Written here rather than taken from a crate: the display needs a dozen
//! lines of drawing, and the crate it replaced linked the maths library into
//! every process (one `pow`) — start-up that every agent call paid for, for a
//! bar only people at a terminal ever see (bench/README.md, "Start-up").
//!
//! A ticker thread redraws ten times a second; everything else happens under
//! one lock, so a line printed with [`Line::suspend`] never interleaves with a
//! redraw. [`Line::hold`] stops redrawing while a person is asked something
//! (the question must stay readable) until [`Line::resume`].

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Frames of the spinner, one per tick.
const SPINNER: [char; 4] = ['|', '/', '-', '\\'];
/// Width of the bar, in cells.
const BAR: usize = 30;
/// Redraw period.
const TICK: Duration = Duration::from_millis(100);
/// Columns assumed when the terminal does not say.
const COLUMNS: usize = 80;

/// What is drawn: a spinner (`total: None`) or a bar of `done`/`total`.
struct State {
    message: String,
    done: u64,
    total: Option<u64>,
    started: Instant,
    frame: usize,
    /// A person is being asked something: no redraw until [`Line::resume`].
    held: bool,
    /// Something is on screen that the next draw must overwrite.
    drawn: bool,
    stopped: bool,
}

impl State {
    fn new(message: String, total: Option<u64>) -> State {
        State {
            message,
            done: 0,
            total,
            started: Instant::now(),
            frame: 0,
            held: false,
            drawn: false,
            stopped: false,
        }
    }
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while drawing leaves nothing half-updated that matters.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The progress line; cleared from the screen when dropped.
pub struct Line {
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
}

impl Line {
    /// A spinner with `message`.
    pub fn spinner(message: String) -> Self {
        Self::start(message, None)
    }

    /// A bar for `total` steps with `message`.
    pub fn bar(total: u64, message: String) -> Self {
        Self::start(message, Some(total))
    }

    fn start(message: String, total: Option<u64>) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(message, total)),
            wake: Condvar::new(),
        });
        let ticking = shared.clone();
        let ticker = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || tick(&ticking))
            .ok();
        Line { shared, ticker }
    }

    /// Replaces the message.
    pub fn set_message(&self, message: String) {
        let mut s = self.shared.lock();
        s.message = message;
        draw(&mut s);
    }

    /// Counts one more step done.
    pub fn inc(&self) {
        let mut s = self.shared.lock();
        s.done += 1;
        draw(&mut s);
    }

    /// Clears the line, runs `f` (which prints), and draws again unless held.
    pub fn suspend(&self, f: impl FnOnce()) {
        let mut s = self.shared.lock();
        clear(&mut s);
        f();
        draw(&mut s);
    }

    /// Clears the line and prints `text` on stderr, then stops redrawing
    /// until [`Line::resume`]: a question stays on screen, unbroken.
    pub fn hold(&self, text: &str) {
        let mut s = self.shared.lock();
        clear(&mut s);
        eprintln!("{text}");
        s.held = true;
    }

    /// Draws again after [`Line::hold`].
    pub fn resume(&self) {
        let mut s = self.shared.lock();
        s.held = false;
        draw(&mut s);
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        {
            let mut s = self.shared.lock();
            s.stopped = true;
            clear(&mut s);
        }
        self.shared.wake.notify_all();
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}

fn tick(shared: &Shared) {
    let mut s = shared.lock();
    while !s.stopped {
        s.frame = s.frame.wrapping_add(1);
        draw(&mut s);
        s = shared
            .wake
            .wait_timeout(s, TICK)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

fn clear(s: &mut State) {
    if s.drawn {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(b"\r\x1b[2K");
        let _ = err.flush();
        s.drawn = false;
    }
}

fn draw(s: &mut State) {
    if s.held || s.stopped {
        return;
    }
    let text = render(s, Instant::now(), columns());
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{text}");
    let _ = err.flush();
    s.drawn = true;
}

/// The line for `s` at `now`, at most `width` characters.
fn render(s: &State, now: Instant, width: usize) -> String {
    let elapsed = elapsed(now.saturating_duration_since(s.started));
    let head = match s.total {
        None => SPINNER[s.frame % SPINNER.len()].to_string(),
        Some(total) => {
            let filled = (s.done.min(total) as usize * BAR)
                .checked_div(total as usize)
                .unwrap_or(BAR);
            format!(
                "{}{} {}/{total}",
                "#".repeat(filled),
                "-".repeat(BAR - filled),
                s.done
            )
        }
    };
    let tail = format!(" [{elapsed}]");
    // The message gives way first: a wrapped line could not be redrawn.
    // The last column stays free: writing there wraps on some terminals.
    let room = width
        .saturating_sub(head.chars().count() + 1 + tail.chars().count() + 1)
        .max(1);
    let message: String = if s.message.chars().count() > room {
        let mut m: String = s.message.chars().take(room.saturating_sub(1)).collect();
        m.push('…');
        m
    } else {
        s.message.clone()
    };
    let mut line = format!("{head} {message}{tail}");
    if line.chars().count() >= width {
        line = line.chars().take(width.saturating_sub(1)).collect();
    }
    line
}

/// `12s`, `3m05s`, `1h02m`.
fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

/// The terminal's width (stderr), or [`COLUMNS`].
fn columns() -> usize {
    rustix::termios::tcgetwinsize(std::io::stderr())
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|&c| c > 0)
        .unwrap_or(COLUMNS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(message: &str, done: u64, total: Option<u64>) -> State {
        State {
            done,
            ..State::new(message.into(), total)
        }
    }

    #[test]
    fn a_bar_counts_and_fills_in_proportion() {
        let s = state("off", 0, Some(4));
        let at = s.started + Duration::from_secs(75);
        assert_eq!(
            render(&s, at, 80),
            format!("{} 0/4 off [1m15s]", "-".repeat(30))
        );
        let s = state("off", 3, Some(4));
        let line = render(&s, s.started, 80);
        assert!(
            line.starts_with(&format!("{}{} 3/4", "#".repeat(22), "-".repeat(8))),
            "{line}"
        );
        // More steps than announced never overflows the bar.
        let s = state("off", 9, Some(4));
        assert!(render(&s, s.started, 80).starts_with(&format!("{} 9/4", "#".repeat(30))));
        let s = state("off", 0, Some(0));
        assert!(render(&s, s.started, 80).starts_with(&"#".repeat(30)));
    }

    #[test]
    fn a_spinner_turns_and_names_the_step() {
        let mut s = state("node01: reading power state", 0, None);
        assert_eq!(
            render(&s, s.started, 80),
            "| node01: reading power state [0s]"
        );
        s.frame = 1;
        assert!(render(&s, s.started, 80).starts_with("/ "));
    }

    #[test]
    fn a_long_message_is_cut_to_the_terminal_width() {
        let s = state(&"x".repeat(200), 0, None);
        let line = render(&s, s.started, 40);
        assert_eq!(line.chars().count(), 39, "{line}");
        assert!(line.ends_with("… [0s]"), "{line}");
        // A terminal too narrow for anything still gets a bounded line.
        let s = state("message", 1, Some(2));
        assert!(render(&s, s.started, 10).chars().count() < 10);
    }

    #[test]
    fn elapsed_reads_as_people_write_it() {
        assert_eq!(elapsed(Duration::from_millis(59_999)), "59s");
        assert_eq!(elapsed(Duration::from_secs(185)), "3m05s");
        assert_eq!(elapsed(Duration::from_secs(3_720)), "1h02m");
    }
}
