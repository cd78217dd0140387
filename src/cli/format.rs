//! Human formatting (sizes, ages) and the parsing of duration arguments.

use chrono::{DateTime, Utc};

/// Longest signed URL validity (docs/api.md): 7 days.
pub(crate) const MAX_SIGN_SECS: u64 = 604_800;

/// Sizes in decimal units, as the plans are written: `512 B`, `1.50 MB`; the
/// server words its limits with the same formatter.
pub(crate) fn bytes(n: u64) -> String {
    crate::domain::units::human_bytes(n)
}

use crate::domain::validate;

/// Nanoseconds in a second: [`duration_secs`] adds fractions up exactly in them.
const NANOS: u128 = 1_000_000_000;

/// What [`duration_secs`] takes, for its error messages and the help texts.
pub(crate) const DURATION_FORMS: &str =
    "seconds (90) or numbers with units s, m, h, d, w (90s, 1m30s, 1.5h, 7d)";

/// The one duration syntax of every flag that takes a duration (docs/cli.md, where it names the flags):
/// whole seconds (`90`), or one or more numbers each followed by a unit, with
/// no spaces: `90s`, `1m30s`, `1h`, `1.5h`, `7d`, `2w`. A number may have a
/// decimal fraction (`1.5h`, `0.5d`) as long as the whole is a number of
/// seconds (`1.5s` is refused). Units: `s` (`sec`, `secs`, `second`,
/// `seconds`), `m` (`min`, `mins`, `minute`, `minutes`), `h` (`hr`, `hrs`,
/// `hour`, `hours`), `d` (`day`, `days`), `w` (`week`, `weeks`). Each flag
/// checks its own bounds on the seconds this gives.
pub(crate) fn duration_secs(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let bad = || format!("invalid duration {s:?}: expected {DURATION_FORMS}");
    if s.is_empty() {
        return Err(bad());
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u64>()
            .map_err(|_| format!("invalid duration {s:?}: too long"));
    }
    let mut total: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let (number, tail) = rest.split_at(digits);
        let letters = tail
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(letters);
        let per: u128 = match unit {
            "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600,
            "d" | "day" | "days" => 86_400,
            "w" | "week" | "weeks" => 604_800,
            _ => return Err(bad()),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') || fraction.len() > 9 {
            return Err(bad());
        }
        let too_long = || format!("invalid duration {s:?}: too long");
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| too_long())?
        };
        // The fraction in nanoseconds of the unit: `.5` is 500_000_000.
        let fraction_nanos: u128 = if fraction.is_empty() {
            0
        } else {
            let scale = 10u128.pow(9 - u32::try_from(fraction.len()).unwrap_or(9));
            fraction.parse::<u128>().map_err(|_| bad())? * scale
        };
        let term = whole
            .checked_mul(NANOS)
            .and_then(|n| n.checked_add(fraction_nanos))
            .and_then(|n| n.checked_mul(per))
            .ok_or_else(too_long)?;
        total = total.checked_add(term).ok_or_else(too_long)?;
        rest = next;
    }
    if !total.is_multiple_of(NANOS) {
        return Err(format!(
            "invalid duration {s:?}: must be a whole number of seconds"
        ));
    }
    u64::try_from(total / NANOS).map_err(|_| format!("invalid duration {s:?}: too long"))
}

/// [`duration_secs`], from `min` to `max` seconds; `too_long` says why more
/// is refused.
fn seconds_within(s: &str, min: u64, max: u64, too_long: &str) -> Result<u64, String> {
    match duration_secs(s)? {
        n if n < min => Err(format!(
            "invalid duration {:?}: must be at least {min} second{}",
            s.trim(),
            if min == 1 { "" } else { "s" }
        )),
        n if n > max => Err(format!("invalid duration {:?}: {too_long}", s.trim())),
        n => Ok(n),
    }
}

/// Longest file lifetime (`upload --expires`, `token create --file-expires`):
/// 365 days, the API's `expires` bound.
pub(crate) const MAX_FILE_EXPIRES_SECS: u64 = 365 * 86_400;

/// An upload's `--expires`, checked before any request, as the text to send
/// in the API's `expires` form: given as the API takes it (`30s`, `15m`,
/// `1h`, `7d`, `2w`) it is sent as it is, any other [`duration_secs`] form
/// (`3600`, `1m30s`, `1.5h`) as its seconds (`5400s`); 1 second to 365 days.
pub(crate) fn upload_expires(s: &str) -> Result<String, String> {
    file_expires(s, "--expires")
}

/// A files' lifetime given as `flag` (`upload --expires`, `token create
/// --file-expires`): [`upload_expires`]'s rule.
pub(crate) fn file_expires(s: &str, flag: &str) -> Result<String, String> {
    let s = s.trim();
    if validate::expires(s).is_ok() {
        return Ok(s.to_string());
    }
    seconds_within(
        s,
        1,
        MAX_FILE_EXPIRES_SECS,
        "a file lasts at most 365 days (31536000 seconds)",
    )
    .map(|secs| format!("{secs}s"))
    .map_err(|e| format!("invalid {flag}: {e}"))
}

/// A signed URL's validity (`sign --expires`): [`duration_secs`], from 1
/// second to 7 days.
pub(crate) fn sign_seconds(s: &str) -> Result<u64, String> {
    seconds_within(
        s,
        1,
        MAX_SIGN_SECS,
        "a signed URL is valid for at most 7 days (604800 seconds)",
    )
}

/// Longest upload token lifetime (docs/api.md, "Upload tokens"): 1 day.
pub(crate) const MAX_TOKEN_SECS: u64 = 86_400;

/// An upload token's lifetime (`token create --expires`): [`duration_secs`],
/// from 1 second to 1 day.
pub(crate) fn token_seconds(s: &str) -> Result<u64, String> {
    seconds_within(
        s,
        1,
        MAX_TOKEN_SECS,
        "an upload token lasts at most 1 day (86400 seconds)",
    )
}

/// A size flag (`--max-size`): bytes, or `10MB`, `5MiB`…; at least 1 byte.
pub(crate) fn positive_size(s: &str) -> Result<u64, String> {
    match crate::config::parse_bytes(s)? {
        0 => Err(format!("bad size {s:?}: must be at least 1 byte")),
        n => Ok(n),
    }
}

/// A policy's type flag (`--type`): `type/subtype` or `type/*`, lowercased.
pub(crate) fn policy_type(s: &str) -> Result<String, String> {
    crate::domain::sniff::parse_type(s)
}

/// One `--metadata K=V`: the key checked with the server's rule, the value
/// any text (split at the first `=`).
pub(crate) fn metadata_pair(s: &str) -> Result<(String, String), String> {
    use crate::domain::metadata::{valid_key, MAX_KEY_LEN};
    let Some((key, value)) = s.split_once('=') else {
        return Err(format!("{s:?}: expected KEY=VALUE"));
    };
    if !valid_key(key) {
        return Err(format!(
            "metadata key {key:?}: use 1-{MAX_KEY_LEN} characters of a-z 0-9 _ -"
        ));
    }
    Ok((key.to_string(), value.to_string()))
}

/// The `--metadata` pairs as one object (a key given twice keeps its last
/// value), checked against the server's limits before anything is sent.
pub(crate) fn metadata(
    pairs: &[(String, String)],
) -> Result<crate::domain::metadata::Metadata, String> {
    let m: crate::domain::metadata::Metadata = pairs.iter().cloned().collect();
    crate::domain::metadata::check(&m).map_err(|e| format!("invalid --metadata: {e}"))?;
    Ok(m)
}

/// Longest wait of `health --wait --timeout`: 365 days.
pub(crate) const MAX_WAIT_SECS: u64 = 365 * 86_400;

/// A wait (`health --wait --timeout`): [`duration_secs`], from 0 to 365 days.
pub(crate) fn wait_duration(s: &str) -> Result<std::time::Duration, String> {
    seconds_within(s, 0, MAX_WAIT_SECS, "at most 365 days").map(std::time::Duration::from_secs)
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
    fn one_duration_syntax() {
        for (given, secs) in [
            ("90", 90),
            ("90s", 90),
            ("1m30s", 90),
            ("1h", 3_600),
            ("7d", 604_800),
            ("2w", 1_209_600),
            ("1.5h", 5_400),
            ("0.5d", 43_200),
            (".5m", 30),
            ("1h30m15s", 5_415),
            ("2hours", 7_200),
            ("10min", 600),
            (" 45s ", 45),
            ("0", 0),
        ] {
            assert_eq!(duration_secs(given), Ok(secs), "{given}");
        }
        for bad in [
            "", "h", "1.5", "1.5s", "1 h", "1h 30m", "-1h", "1y", "1ms", "1..5h", "1.2.3h", "soon",
            "1h-",
        ] {
            let err = duration_secs(bad).unwrap_err();
            assert!(err.starts_with("invalid duration"), "{bad}: {err}");
        }
        assert!(duration_secs("1.5s")
            .unwrap_err()
            .contains("whole number of seconds"));
        assert!(duration_secs("99999999999999999999999w").is_err());
        // Every flag reads the same forms, within its own bounds.
        assert_eq!(sign_seconds("1m30s"), Ok(90));
        assert_eq!(token_seconds("1m30s"), Ok(90));
        assert_eq!(upload_expires("1m30s").as_deref(), Ok("90s"));
        assert_eq!(
            file_expires("1.5h", "--file-expires").as_deref(),
            Ok("5400s")
        );
        assert_eq!(
            wait_duration("1m30s"),
            Ok(std::time::Duration::from_secs(90))
        );
    }

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
    fn token_lifetimes() {
        assert_eq!(token_seconds("15m"), Ok(900));
        assert_eq!(token_seconds("1h30m"), Ok(5400));
        assert_eq!(token_seconds("86400"), Ok(86_400));
        assert_eq!(token_seconds("1d"), Ok(86_400));
        assert!(token_seconds("2d").unwrap_err().contains("at most 1 day"));
        assert!(token_seconds("0").is_err());
        assert!(token_seconds("later").is_err());
        assert!(file_expires("7x", "--file-expires")
            .unwrap_err()
            .starts_with("invalid --file-expires"));
    }

    #[test]
    fn sizes_and_types_of_a_policy() {
        assert_eq!(positive_size("10MB"), Ok(10_000_000));
        assert_eq!(positive_size("5MiB"), Ok(5 * 1024 * 1024));
        assert_eq!(positive_size("1"), Ok(1));
        assert!(positive_size("0").is_err());
        assert!(positive_size("lots").is_err());
        assert_eq!(policy_type("Image/*").as_deref(), Ok("image/*"));
        assert!(policy_type("image").is_err());
    }

    #[test]
    fn metadata_pairs() {
        assert_eq!(
            metadata_pair("user=u=1"),
            Ok(("user".to_string(), "u=1".to_string()))
        );
        assert_eq!(metadata_pair("k="), Ok(("k".to_string(), String::new())));
        for bad in ["user", "User=x", "=x", "a.b=c", "é=x"] {
            assert!(metadata_pair(bad).is_err(), "{bad}");
        }
        let pairs = [
            ("a".to_string(), "1".to_string()),
            ("a".to_string(), "2".to_string()),
        ];
        assert_eq!(metadata(&pairs).unwrap()["a"], "2", "the last value wins");
        let many: Vec<(String, String)> = (0..17)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect();
        assert!(metadata(&many).unwrap_err().contains("17 keys"));
        let big = [("a".to_string(), "x".repeat(5000))];
        assert!(metadata(&big).is_err());
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
            ("1m30s", "90s"),
            ("1.5h", "5400s"),
            ("1h30m", "5400s"),
            ("31536000", "31536000s"),
        ] {
            assert_eq!(upload_expires(given).as_deref(), Ok(sent), "{given}");
        }
        for bad in [
            "0h", "0", "366d", "31536001", "1y", "h", "-1h", "1 h", "1.5s", "",
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
    fn sizes_read_as_the_progress_bars_show_them() {
        for n in [
            0,
            1,
            999,
            1000,
            1001,
            999_994,
            999_995,
            1_000_000,
            123_456_789,
            10u64.pow(12),
            u64::MAX,
        ] {
            assert_eq!(bytes(n), indicatif::DecimalBytes(n).to_string(), "{n}");
        }
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
