//! Time as people read it, shared by every layer: durations as written on
//! the command line and in inventories (`500ms`, `2s`, `1m`), and UTC
//! calendar dates for log lines and audit records. Pure functions of their
//! input (plus the system clock for [`utc_now`]); no front owns them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A duration as written that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadDuration {
    /// No number where the number goes.
    #[error("'{0}' is not a duration (examples: 500ms, 2s, 1m)")]
    NotANumber(String),
    /// A unit other than ms, s, m, h.
    #[error("'{0}' has an unknown unit (use ms, s, m or h)")]
    UnknownUnit(String),
    /// Negative, or longer than a week.
    #[error("'{0}' is out of range")]
    OutOfRange(String),
}

/// Parses a duration as written on the command line.
pub fn parse_duration(s: &str) -> Result<Duration, BadDuration> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&t[..i], t[i..].trim()),
        None => (t, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| BadDuration::NotANumber(s.to_string()))?;
    let scale = match unit {
        "ms" => 0.001,
        "s" | "sec" | "secs" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(BadDuration::UnknownUnit(s.to_string())),
    };
    let secs = n * scale;
    if !secs.is_finite() || !(0.0..=86_400.0 * 7.0).contains(&secs) {
        return Err(BadDuration::OutOfRange(s.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `YYYY-MM-DD HH:MM:SS,mmm` in UTC.
pub fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (y, m, day) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{day:02} {:02}:{:02}:{:02},{:03}",
        s / 3600,
        (s / 60) % 60,
        s % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (H. Hinnant's `civil_from_days`).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// RFC 3339 UTC time with milliseconds, from the system clock.
pub fn utc_now() -> String {
    utc(SystemTime::now())
}

/// RFC 3339 UTC time with milliseconds of `t` (e.g. when a hold expires).
pub fn utc(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(
            parse_duration("abc"),
            Err(BadDuration::NotANumber("abc".into()))
        );
        assert_eq!(
            parse_duration("3 fortnights"),
            Err(BadDuration::UnknownUnit("3 fortnights".into()))
        );
        assert_eq!(
            parse_duration("-1"),
            Err(BadDuration::NotANumber("-1".into()))
        );
        assert_eq!(
            parse_duration("8d"),
            Err(BadDuration::UnknownUnit("8d".into()))
        );
        assert_eq!(
            parse_duration("169h"),
            Err(BadDuration::OutOfRange("169h".into()))
        );
    }

    #[test]
    fn timestamps_have_upstream_shape() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_404_600_007);
        assert_eq!(timestamp(t), "2026-11-23 03:30:00,007");
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01 00:00:00,000");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(&timestamp(leap)[..10], "2000-02-29");
    }
}
