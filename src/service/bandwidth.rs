//! Bandwidth accounting without a database write per download: bytes sent by
//! the CDN are added up in memory per (account, billing period) and flushed
//! in one write every second, and once more when the server stops. The usage
//! record adds what is not flushed yet, so it stays exact on this node.

use super::App;
use crate::db::BandwidthCount;
use std::sync::Arc;
use std::time::Duration;

/// How often counted bytes are written to the database.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// Writes what was counted; on failure keeps it for the next flush.
pub(crate) async fn flush(app: &App) {
    let _guard = app.bandwidth.flushing.lock().await;
    let counts = app.bandwidth.take();
    if counts.is_empty() {
        return;
    }
    let rows = counts
        .iter()
        .map(|((account, period), bytes)| BandwidthCount {
            account_id: account.clone(),
            period: period.clone(),
            bytes: *bytes,
        })
        .collect();
    let written = app.meta.add_bandwidth(rows).await;
    if let Err(e) = written {
        tracing::error!(error = %e, "bandwidth not recorded yet; will retry");
        app.bandwidth.put_back(counts);
    }
}

/// Runs `read` (a database read of the period's counters) and returns it with
/// the bytes this node counted for `account` in `period` and has not flushed:
/// their sum is exact, since no flush runs in between.
pub(crate) async fn read_with_unflushed<T>(
    app: &App,
    account: &str,
    period: &str,
    read: impl std::future::Future<Output = Result<T, crate::db::DbError>>,
) -> Result<(T, u64), crate::db::DbError> {
    let _guard = app.bandwidth.flushing.lock().await;
    let stored = read.await?;
    Ok((stored, app.bandwidth.unflushed(account, period)))
}

/// Flushes every [`FLUSH_EVERY`] until the app is dropped by everyone else.
pub(crate) fn spawn(app: Arc<App>) -> tokio::task::JoinHandle<()> {
    let weak = Arc::downgrade(&app);
    drop(app);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(FLUSH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(app) = weak.upgrade() else { return };
            flush(&app).await;
        }
    })
}

/// Books `bytes` sent as `account_id`'s bandwidth.
pub(crate) fn count_bandwidth(app: &App, account_id: &str, bytes: u64) {
    count_bandwidth_at(app, account_id, bytes, app.clock.now_ms());
}

/// Books `bytes` sent at `now` (ms) as `account_id`'s bandwidth.
pub(crate) fn count_bandwidth_at(app: &App, account_id: &str, bytes: u64, now: i64) {
    crate::clock::with_period_key(now, |period| {
        app.bandwidth.add(account_id, period, bytes);
    });
}
