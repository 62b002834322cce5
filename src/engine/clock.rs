//! The engine's clock: tokio's [`Instant`], so that deadlines, back-off and
//! polling follow `tokio::time::pause`/`advance` and the engine's timing can
//! be tested in virtual time (`#[tokio::test(start_paused = true)]`).
//!
//! Outside a paused test tokio's clock *is* the monotonic std clock. Drivers,
//! the per-BMC lock and sockets take [`std::time::Instant`] deadlines; the
//! engine converts at that edge with [`to_std`] (and a caller holding a std
//! deadline uses [`from_std`]). Both convert the *time left*, not the raw
//! value, so they stay right under a paused clock too: a driver given a
//! deadline 2 s ahead in virtual time gets 2 s of real time.

pub use tokio::time::Instant;

/// The std instant as far ahead of `std::time::Instant::now()` as `t` is of
/// the engine's now (a past `t` is now).
pub fn to_std(t: Instant) -> std::time::Instant {
    std::time::Instant::now() + t.saturating_duration_since(Instant::now())
}

/// The engine instant as far ahead of its now as `t` is of
/// `std::time::Instant::now()` (a past `t` is now).
pub fn from_std(t: std::time::Instant) -> Instant {
    Instant::now() + t.saturating_duration_since(std::time::Instant::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn conversions_keep_the_time_left_under_a_paused_clock() {
        tokio::time::advance(Duration::from_secs(3600)).await;
        let t = Instant::now() + Duration::from_secs(2);
        let s = to_std(t);
        let left = s.saturating_duration_since(std::time::Instant::now());
        assert!(left <= Duration::from_secs(2), "{left:?}");
        assert!(left > Duration::from_millis(1900), "{left:?}");
        // And back: the virtual clock does not move while real time passes.
        let back = from_std(s);
        let left = back - Instant::now();
        assert!(left <= Duration::from_secs(2) && left > Duration::from_millis(1900));
        // A past instant is now.
        let past = Instant::now() - Duration::from_secs(1);
        assert!(to_std(past) <= std::time::Instant::now());
    }
}
