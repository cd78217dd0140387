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

    pub fn now_ms(&self) -> i64 {
        self.now().timestamp_millis()
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

/// Calls `f` with `period_of(t).key`, made once per thread and month (the
/// CDN counts every download's bytes under it).
pub(crate) fn with_period_key<R>(t: DateTime<Utc>, f: impl FnOnce(&str) -> R) -> R {
    thread_local! {
        static KEY: std::cell::RefCell<(i32, u32, String)> =
            const { std::cell::RefCell::new((0, 0, String::new())) };
    }
    KEY.with_borrow_mut(|k| {
        if k.2.is_empty() || (k.0, k.1) != (t.year(), t.month()) {
            *k = (t.year(), t.month(), period_of(t).key);
        }
        f(&k.2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_period_key_follows_the_month() {
        let at = |y, m, d| Utc.with_ymd_and_hms(y, m, d, 12, 0, 0).unwrap();
        for t in [
            at(2026, 11, 30),
            at(2026, 12, 1),
            at(2027, 1, 1),
            at(2026, 12, 31),
        ] {
            assert_eq!(with_period_key(t, str::to_string), period_of(t).key);
        }
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
