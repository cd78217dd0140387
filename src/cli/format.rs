//! Human formatting (sizes, ages) and the parsing of duration arguments.

use chrono::{DateTime, Utc};

/// Longest signed URL validity (docs/api.md): 7 days.
pub(crate) const MAX_SIGN_SECS: u64 = 604_800;

/// Sizes in decimal units, as the plans are written: `512 B`, `1.50 MB`.
pub(crate) fn bytes(n: u64) -> String {
    indicatif::DecimalBytes(n).to_string()
}

use crate::domain::validate::{self, unit_duration_secs as simple_duration};

/// An upload's `--expires`, checked before any request with the server's own
/// rule, as the text to send: `30s`, `15m`, `1h`, `7d`, `2w`, or bare seconds
/// (`3600`, as `sign --expires` takes them), positive and at most 365 days.
pub(crate) fn upload_expires(s: &str) -> Result<String, String> {
    let s = s.trim();
    let form = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        format!("{s}s")
    } else {
        s.to_string()
    };
    validate::expires(&form)
        .map(|_| form)
        .map_err(|e| format!("invalid --expires: {e}"))
}

/// Parses a signed-URL validity: `3600` (seconds), `90s`, `1h`, `7d`, or a
/// humantime span like `1h30m`. Between 1 second and 7 days.
pub(crate) fn sign_seconds(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let secs = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse::<u64>().ok()
    } else {
        simple_duration(s).or_else(|| {
            humantime::parse_duration(s)
                .ok()
                .filter(|d| d.subsec_nanos() == 0)
                .map(|d| d.as_secs())
        })
    };
    match secs {
        None => Err(format!(
            "invalid duration {s:?}: expected seconds or a number and a unit, e.g. 3600, 90s, 1h, 7d"
        )),
        Some(0) => Err(format!("invalid duration {s:?}: must be at least 1 second")),
        Some(n) if n > MAX_SIGN_SECS => Err(format!(
            "invalid duration {s:?}: a signed URL is valid for at most 7 days (604800 seconds)"
        )),
        Some(n) => Ok(n),
    }
}

/// Longest wait of `health --wait --timeout`: 365 days.
pub(crate) const MAX_WAIT_SECS: u64 = 365 * 86_400;

/// Parses a wait such as `60s`, `2m` or `90` (seconds), at most 365 days.
pub(crate) fn wait_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let d = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse::<u64>()
            .map(std::time::Duration::from_secs)
            .map_err(|e| format!("invalid duration {s:?}: {e}"))?
    } else {
        humantime::parse_duration(s).map_err(|e| format!("invalid duration {s:?}: {e}"))?
    };
    if d > std::time::Duration::from_secs(MAX_WAIT_SECS) {
        return Err(format!("invalid duration {s:?}: at most 365 days"));
    }
    Ok(d)
}

/// Parses an RFC 3339 timestamp of the API.
pub(crate) fn timestamp(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A compact span: `45s`, `3m`, `2h`, `5d`, `14w`.
pub(crate) fn span(secs: i64) -> String {
    let s = secs.max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3_599 => format!("{}m", s / 60),
        3_600..=86_399 => format!("{}h", s / 3_600),
        86_400..=1_209_599 => format!("{}d", s / 86_400),
        _ => format!("{}w", s / 604_800),
    }
}

/// How long ago `ts` was, compactly (`3m`); the text itself when unparsable.
pub(crate) fn age(ts: &str, now: DateTime<Utc>) -> String {
    match timestamp(ts) {
        Some(t) => span((now - t).num_seconds()),
        None => ts.to_string(),
    }
}

/// When `ts` comes: `in 3d`, or `expired`; `-` when there is none.
pub(crate) fn until(ts: Option<&str>, now: DateTime<Utc>) -> String {
    match ts {
        None => "-".to_string(),
        Some(ts) => match timestamp(ts) {
            Some(t) if t > now => format!("in {}", span((t - now).num_seconds())),
            Some(_) => "expired".to_string(),
            None => ts.to_string(),
        },
    }
}

/// `folder/name`, or `name` in the root.
pub(crate) fn path(folder: Option<&str>, name: &str) -> String {
    match folder {
        Some(f) if !f.is_empty() => format!("{f}/{name}"),
        _ => name.to_string(),
    }
}

/// A percentage with one decimal: `12.5%`.
pub(crate) fn percent(used: u64, of: u64) -> String {
    if of == 0 {
        return "-".into();
    }
    // A display figure to one decimal: precision beyond 2^53 bytes is not shown.
    #[allow(clippy::cast_precision_loss)]
    let ratio = used as f64 * 100.0 / of as f64;
    format!("{ratio:.1}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_durations() {
        assert_eq!(sign_seconds("3600"), Ok(3600));
        assert_eq!(sign_seconds("90s"), Ok(90));
        assert_eq!(sign_seconds("1h"), Ok(3600));
        assert_eq!(sign_seconds("7d"), Ok(604_800));
        assert_eq!(sign_seconds("1w"), Ok(604_800));
        assert_eq!(sign_seconds("1h30m"), Ok(5400));
        assert!(sign_seconds("8d").is_err());
        assert!(sign_seconds("604801").is_err());
        assert!(sign_seconds("0").is_err());
        assert!(sign_seconds("soon").is_err());
    }

    #[test]
    fn upload_expires_forms() {
        for (given, sent) in [
            ("30s", "30s"),
            ("15m", "15m"),
            ("1h", "1h"),
            ("7d", "7d"),
            ("2w", "2w"),
            ("365d", "365d"),
            ("3600", "3600s"),
            (" 1h ", "1h"),
        ] {
            assert_eq!(upload_expires(given).as_deref(), Ok(sent), "{given}");
        }
        for bad in [
            "0h", "0", "366d", "31536001", "1y", "h", "1.5h", "-1h", "1 h", "1h30m", "",
        ] {
            assert!(upload_expires(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn waits_are_capped_at_a_year() {
        use std::time::Duration;
        assert_eq!(wait_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(wait_duration("2m"), Ok(Duration::from_mins(2)));
        assert_eq!(
            wait_duration("365d"),
            Ok(Duration::from_secs(MAX_WAIT_SECS))
        );
        for bad in [
            "366d",
            "31536001",
            "18446744073709551615",
            "99999999999999999999",
            "5000000y",
        ] {
            let err = wait_duration(bad).unwrap_err();
            assert!(err.contains("invalid duration"), "{bad}: {err}");
        }
        assert!(wait_duration("soon").is_err());
    }

    #[test]
    fn spans_and_ages() {
        assert_eq!(span(5), "5s");
        assert_eq!(span(180), "3m");
        assert_eq!(span(7_200), "2h");
        assert_eq!(span(5 * 86_400), "5d");
        assert_eq!(span(30 * 86_400), "4w");
        let now = timestamp("2025-01-10T00:00:00Z").unwrap();
        assert_eq!(age("2025-01-09T23:59:00Z", now), "1m");
        assert_eq!(until(Some("2025-01-12T00:00:00Z"), now), "in 2d");
        assert_eq!(until(Some("2025-01-01T00:00:00Z"), now), "expired");
        assert_eq!(until(None, now), "-");
    }

    #[test]
    fn sizes_and_paths() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(path(Some("a/b"), "c.txt"), "a/b/c.txt");
        assert_eq!(path(None, "c.txt"), "c.txt");
        assert_eq!(percent(1, 8), "12.5%");
        assert_eq!(percent(1, 0), "-");
    }
}
