//! Bandwidth accounting without a database write per download: bytes sent by
//! the CDN are added up in memory per (account, billing period) and flushed
//! in one write every second, and once more when the server stops. The usage
//! record adds what is not flushed yet, so it stays exact on this node.

use super::App;
use crate::db::BandwidthCount;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often counted bytes are written to the database.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_secs(1);

type Key = (String, String);

#[derive(Debug, Default)]
pub struct Meter {
    pending: Mutex<HashMap<Key, u64>>,
    /// Held while a flush moves bytes from `pending` to the database, and
    /// while a reader adds both up, so that no byte is counted twice or missed.
    flushing: tokio::sync::Mutex<()>,
}

impl Meter {
    /// Counts `bytes` sent from `account`'s files in `period`.
    pub fn add(&self, account: &str, period: &str, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        *p.entry((account.to_string(), period.to_string()))
            .or_default() += bytes;
    }

    fn unflushed(&self, account: &str, period: &str) -> u64 {
        let p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.get(&(account.to_string(), period.to_string()))
            .copied()
            .unwrap_or(0)
    }

    fn take(&self) -> HashMap<Key, u64> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn put_back(&self, counts: HashMap<Key, u64>) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        for (k, v) in counts {
            *p.entry(k).or_default() += v;
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_account_and_period() {
        let m = Meter::default();
        m.add("a", "2026-11", 10);
        m.add("a", "2026-11", 5);
        m.add("a", "2026-12", 1);
        m.add("b", "2026-11", 0);
        assert_eq!(m.unflushed("a", "2026-11"), 15);
        assert_eq!(m.unflushed("b", "2026-11"), 0);
        let taken = m.take();
        assert_eq!(taken.len(), 2);
        assert_eq!(m.unflushed("a", "2026-11"), 0);
        m.put_back(taken);
        m.add("a", "2026-11", 1);
        assert_eq!(m.unflushed("a", "2026-11"), 16);
        assert_eq!(m.unflushed("a", "2026-12"), 1);
    }
}
