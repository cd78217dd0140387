//! The service's notion of "now", with an offset that tests can move forward
//! (month rollover, expiry) without sleeping.

use chrono::{DateTime, Datelike, TimeZone, Utc};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_ms: Arc<AtomicI64>,
}

impl Clock {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + chrono::Duration::milliseconds(self.offset_ms.load(Ordering::Relaxed))
    }

    /// `now()` in milliseconds since the epoch (read without `chrono`: the
    /// CDN's hot path reads it on every request).
    pub fn now_ms(&self) -> i64 {
        self.ms_at(std::time::SystemTime::now())
    }

    /// This clock's milliseconds since the epoch when the system's clock
    /// read `t` (for a caller that read the time already).
    pub fn ms_at(&self, t: std::time::SystemTime) -> i64 {
        let since = t.duration_since(std::time::UNIX_EPOCH).map_or(0, millis);
        since.saturating_add(self.offset_ms.load(Ordering::Relaxed))
    }

    /// Moves this clock (and every clone of it) forward by `by`. Only tests
    /// call it; nothing reachable over HTTP does.
    pub fn advance(&self, by: std::time::Duration) {
        self.offset_ms.fetch_add(millis(by), Ordering::Relaxed);
    }
}

/// A duration in milliseconds, as the store keeps times (saturating: a
/// duration too long for an i64 of ms is as good as forever).
pub(crate) fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// RFC 3339, UTC, millisecond precision, `Z` suffix.
pub(crate) fn rfc3339_ms(ms: i64) -> String {
    let t = Utc
        .timestamp_millis_opt(ms)
        .single()
        .unwrap_or_else(|| Utc.timestamp_millis_opt(0).unwrap());
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// The billing period (calendar month, UTC) that contains `t`: its key
/// (`YYYY-MM`), its first day (`YYYY-MM-DD`) and the start of the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub key: String,
    pub start_date: String,
    pub next_start: DateTime<Utc>,
}

pub fn period_of(t: DateTime<Utc>) -> Period {
    let (y, m) = (t.year(), t.month());
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    Period {
        key: format!("{y:04}-{m:02}"),
        start_date: format!("{y:04}-{m:02}-01"),
        next_start: Utc.with_ymd_and_hms(ny, nm, 1, 0, 0, 0).unwrap(),
    }
}

/// Calls `f` with the key of the period holding `ms` (milliseconds since
/// the epoch), `period_of`'s, made once per thread and month (the CDN counts
/// every download's bytes under it).
pub(crate) fn with_period_key<R>(ms: i64, f: impl FnOnce(&str) -> R) -> R {
    /// The period last asked for: its first and next first millisecond.
    struct Kept {
        from: i64,
        until: i64,
        key: String,
    }
    thread_local! {
        static KEPT: std::cell::RefCell<Kept> = const {
            std::cell::RefCell::new(Kept { from: 0, until: 0, key: String::new() })
        };
    }
    KEPT.with_borrow_mut(|k| {
        if !(k.from..k.until).contains(&ms) {
            let t = Utc
                .timestamp_millis_opt(ms)
                .single()
                .unwrap_or_else(|| Utc.timestamp_millis_opt(0).unwrap());
            let p = period_of(t);
            let first = Utc
                .with_ymd_and_hms(t.year(), t.month(), 1, 0, 0, 0)
                .single()
                .map_or(ms, |f| f.timestamp_millis());
            *k = Kept {
                from: first,
                until: p.next_start.timestamp_millis(),
                key: p.key,
            };
        }
        f(&k.key)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_period_key_follows_the_month() {
        let at = |y, m, d, h, mi, s| Utc.with_ymd_and_hms(y, m, d, h, mi, s).unwrap();
        for t in [
            at(2026, 11, 30, 12, 0, 0),
            at(2026, 11, 30, 23, 59, 59),
            at(2026, 12, 1, 0, 0, 0),
            at(2027, 1, 1, 0, 0, 0),
            at(2026, 12, 31, 23, 59, 59),
            at(2026, 11, 1, 0, 0, 0),
            at(2026, 10, 31, 23, 59, 59),
        ] {
            let ms = t.timestamp_millis();
            assert_eq!(with_period_key(ms, str::to_string), period_of(t).key);
            // The last millisecond of a second is in the same month.
            assert_eq!(
                with_period_key(ms + 999, str::to_string),
                period_of(t).key,
                "{t}"
            );
        }
    }

    #[test]
    fn now_ms_is_now_with_its_offset() {
        let c = Clock::new();
        let before = Utc::now().timestamp_millis();
        let read = c.now_ms();
        assert!((before..=Utc::now().timestamp_millis()).contains(&read));
        c.advance(std::time::Duration::from_hours(1));
        let later = c.now_ms();
        assert!(
            (3_600_000..3_700_000).contains(&(later - read)),
            "{later} {read}"
        );
        assert!((c.now().timestamp_millis() - later).abs() < 1000);
    }

    #[test]
    fn period_rolls_over_at_year_end() {
        let t = Utc.with_ymd_and_hms(2026, 12, 31, 23, 59, 59).unwrap();
        let p = period_of(t);
        assert_eq!(p.key, "2026-12");
        assert_eq!(p.start_date, "2026-12-01");
        assert_eq!(
            p.next_start,
            Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap()
        );
    }

    #[test]
    fn rfc3339_has_z_and_millis() {
        assert_eq!(rfc3339_ms(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    }

    #[test]
    fn advance_moves_every_clone() {
        let c = Clock::new();
        let d = c.clone();
        let before = d.now_ms();
        c.advance(std::time::Duration::from_hours(40 * 24));
        assert!(d.now_ms() - before >= 86_400_000 * 40);
    }
}
