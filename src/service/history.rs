//! Usage history (`GET /v1/usage/history`, the console's Usage chart;
//! CONTRACT §19): one entry per UTC day, from the collector's readings
//! (`db::console::HistoryRepo`). Every [`READING_EVERY`]th collector pass
//! (a minute at the default `reap_interval` of 5 s) records every changed
//! account's stored bytes and its period's totals as the reading of the
//! day, so a day's last reading is its state at the end of the day (to
//! that minute); a day's bandwidth and uploads are its
//! totals less those of the reading before (all of them when that one is
//! of another period: the month's counters start again). Today is
//! measured live, from the counters as they are now. Nothing is added to
//! the upload's or the CDN's path: the counters are those they keep
//! already. What happens between a day's last reading and midnight counts
//! on the next day, and at the turn of a month that last moment of the old
//! month is not seen.

use super::{bandwidth, App, ServiceError};
use crate::clock::period_of;
use crate::db::UsageDay;
use chrono::{Days, NaiveDate};

/// Days a history covers by default.
pub(crate) const DEFAULT_DAYS: u32 = 30;
/// The most days a history covers.
pub(crate) const MAX_DAYS: u32 = 366;

/// One day of an account's usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Day {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// At the day's end (today: now).
    pub storage_bytes: u64,
    pub bandwidth_bytes: u64,
    pub upload_count: u64,
}

fn date_key(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// `days` as the query gives it: absent is [`DEFAULT_DAYS`], else an
/// integer from 1 to [`MAX_DAYS`].
pub(crate) fn days_param(raw: Option<&str>) -> Result<u32, ServiceError> {
    let Some(raw) = raw else {
        return Ok(DEFAULT_DAYS);
    };
    match raw.parse::<u32>() {
        Ok(n) if (1..=MAX_DAYS).contains(&n) && !raw.starts_with('+') => Ok(n),
        _ => Err(ServiceError::BadRequest(format!(
            "days must be an integer from 1 to {MAX_DAYS}"
        ))),
    }
}

/// The account's last `days` days, the oldest first, today last.
pub(crate) async fn history(
    app: &App,
    account_id: &str,
    days: u32,
) -> Result<Vec<Day>, ServiceError> {
    let now = app.clock.now();
    let today = now.date_naive();
    let oldest = today - Days::new(u64::from(days.saturating_sub(1)));
    let yesterday = today - Days::new(1);
    let rows = app
        .meta
        .usage_days(account_id, &date_key(oldest), &date_key(yesterday))
        .await?;
    let period = period_of(now).key;
    let read = app.meta.usage(account_id, &period);
    let (counters, unflushed) =
        bandwidth::read_with_unflushed(app, account_id, &period, read).await?;
    let live = UsageDay {
        day: date_key(today),
        period,
        storage_bytes: counters.storage_bytes,
        bandwidth_total: counters.bandwidth_bytes + unflushed,
        upload_total: counters.upload_count,
    };
    Ok(fill(oldest, today, &rows, &live))
}

/// The days `oldest..=today` from the readings `rows` (by day, the base
/// before `oldest` first if any, none of today) and today's `live` one:
/// a day without a reading saw no upload and no download, and kept the
/// stored bytes of the reading before it (none: 0).
pub(crate) fn fill(
    oldest: NaiveDate,
    today: NaiveDate,
    rows: &[UsageDay],
    live: &UsageDay,
) -> Vec<Day> {
    let first = date_key(oldest);
    let mut rows = rows.iter().peekable();
    let mut base: Option<&UsageDay> = None;
    while let Some(r) = rows.next_if(|r| r.day < first) {
        base = Some(r);
    }
    let mut out = Vec::new();
    for d in oldest.iter_days().take_while(|d| *d <= today) {
        let date = date_key(d);
        let reading = if d == today {
            Some(live)
        } else {
            rows.next_if(|r| r.day == date)
        };
        let day = match reading {
            Some(r) => {
                let (bandwidth_bytes, upload_count) = match base {
                    Some(b) if b.period == r.period => (
                        r.bandwidth_total.saturating_sub(b.bandwidth_total),
                        r.upload_total.saturating_sub(b.upload_total),
                    ),
                    _ => (r.bandwidth_total, r.upload_total),
                };
                base = Some(r);
                Day {
                    date,
                    storage_bytes: r.storage_bytes,
                    bandwidth_bytes,
                    upload_count,
                }
            }
            None => Day {
                date,
                storage_bytes: base.map_or(0, |b| b.storage_bytes),
                bandwidth_bytes: 0,
                upload_count: 0,
            },
        };
        out.push(day);
    }
    out
}

/// A reading is taken every this many collector passes (and at the first):
/// it reads every account's counters, a statement over the whole
/// accounts table, so not at every pass.
pub(crate) const READING_EVERY: u32 = 12;

/// How long readings are kept: a history's longest, and its base.
const KEPT_DAYS: u64 = MAX_DAYS as u64 + 1;

/// The collector's reading of every account (logged, not fatal, when the
/// database fails: the next pass takes it).
pub(crate) async fn snapshot(app: &App) {
    let now = app.clock.now();
    let day = date_key(now.date_naive());
    if let Err(e) = app.meta.snapshot_usage(&day, &period_of(now).key).await {
        tracing::warn!(error = %e, "usage reading not taken; the next pass takes it");
    }
}

/// Forgets the readings no history reaches any more.
pub(crate) async fn prune(app: &App) {
    let before = app.clock.now().date_naive() - Days::new(KEPT_DAYS);
    if let Err(e) = app.meta.prune_usage_days(&date_key(before)).await {
        tracing::warn!(error = %e, "old usage readings not pruned; will retry");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn reading(day: &str, period: &str, storage: u64, bw: u64, up: u64) -> UsageDay {
        UsageDay {
            day: day.into(),
            period: period.into(),
            storage_bytes: storage,
            bandwidth_total: bw,
            upload_total: up,
        }
    }

    fn figures(days: &[Day]) -> Vec<(&str, u64, u64, u64)> {
        days.iter()
            .map(|x| {
                let f = (x.storage_bytes, x.bandwidth_bytes, x.upload_count);
                (x.date.as_str(), f.0, f.1, f.2)
            })
            .collect()
    }

    #[test]
    fn days_are_differences_zero_filled_and_carry_storage() {
        let rows = [
            reading("2026-11-27", "2026-11", 100, 10, 1),
            reading("2026-11-29", "2026-11", 150, 30, 3),
            reading("2026-12-01", "2026-12", 150, 5, 0),
        ];
        let live = reading("2026-12-03", "2026-12", 90, 25, 2);
        let days = fill(d("2026-11-28"), d("2026-12-03"), &rows, &live);
        assert_eq!(
            figures(&days),
            [
                ("2026-11-28", 100, 0, 0),
                ("2026-11-29", 150, 20, 2),
                ("2026-11-30", 150, 0, 0),
                // A new period: its totals are the day's.
                ("2026-12-01", 150, 5, 0),
                ("2026-12-02", 150, 0, 0),
                ("2026-12-03", 90, 20, 2),
            ]
        );
    }

    #[test]
    fn no_reading_at_all_is_zeros_until_today() {
        let live = reading("2026-12-03", "2026-12", 7, 3, 1);
        let days = fill(d("2026-12-01"), d("2026-12-03"), &[], &live);
        assert_eq!(
            figures(&days),
            [
                ("2026-12-01", 0, 0, 0),
                ("2026-12-02", 0, 0, 0),
                ("2026-12-03", 7, 3, 1)
            ]
        );
        let one = fill(d("2026-12-03"), d("2026-12-03"), &[], &live);
        assert_eq!(figures(&one), [("2026-12-03", 7, 3, 1)]);
    }

    #[test]
    fn the_days_parameter() {
        assert_eq!(days_param(None).unwrap(), 30);
        assert_eq!(days_param(Some("1")).unwrap(), 1);
        assert_eq!(days_param(Some("366")).unwrap(), 366);
        for bad in ["0", "367", "-1", "+5", "x", "", "1.5", "99999999999"] {
            assert!(days_param(Some(bad)).is_err(), "{bad}");
        }
    }
}
