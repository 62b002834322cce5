//! Durations on the command line: `500ms`, `2s`, `1m`, `1.5s`, or a bare number of seconds.

use std::time::Duration;

/// Parses a duration as written on the command line.
pub fn parse(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&t[..i], t[i..].trim()),
        None => (t, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (examples: 500ms, 2s, 1m)"))?;
    let scale = match unit {
        "ms" => 0.001,
        "s" | "sec" | "secs" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("'{s}' has an unknown unit (use ms, s, m or h)")),
    };
    let secs = n * scale;
    if !secs.is_finite() || !(0.0..=86_400.0 * 7.0).contains(&secs) {
        return Err(format!("'{s}' is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("1m"), Ok(Duration::from_secs(60)));
        assert!(parse("abc").is_err());
        assert!(parse("3 fortnights").is_err());
        assert!(parse("-1").is_err());
    }
}
