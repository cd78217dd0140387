//! The console's readings and delivery log on SQLite ([`HistoryRepo`],
//! [`DeliveryRepo`]).

use super::{owned, DbError, SqliteStore};
use crate::db::console::{
    DeliveryRepo, DeliveryRow, DeliveryStatus, HistoryRepo, UsageDay, DELIVERIES_KEPT,
};
use async_trait::async_trait;
use rusqlite::params;

/// Every account's counters as a reading of `?1` (day) in `?2` (period),
/// unless they are those of its latest reading.
const SNAPSHOT: &str = "
    INSERT INTO usage_days
        (account_id, day, period, storage_bytes, bandwidth_total, upload_total)
    SELECT a.id, ?1, ?2, a.storage_bytes,
           COALESCE(u.bandwidth_bytes, 0), COALESCE(u.upload_count, 0)
    FROM accounts a
    LEFT JOIN usage_periods u ON u.account_id = a.id AND u.period = ?2
    WHERE NOT EXISTS (
        SELECT 1 FROM usage_days d
        WHERE d.account_id = a.id
          AND d.day = (SELECT MAX(m.day) FROM usage_days m WHERE m.account_id = a.id)
          AND d.period = ?2
          AND d.storage_bytes = a.storage_bytes
          AND d.bandwidth_total = COALESCE(u.bandwidth_bytes, 0)
          AND d.upload_total = COALESCE(u.upload_count, 0))
    ON CONFLICT (account_id, day) DO UPDATE SET
        period = excluded.period,
        storage_bytes = excluded.storage_bytes,
        bandwidth_total = excluded.bandwidth_total,
        upload_total = excluded.upload_total";

fn day_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<UsageDay> {
    Ok(UsageDay {
        day: r.get(0)?,
        period: r.get(1)?,
        storage_bytes: r.get(2)?,
        bandwidth_total: r.get(3)?,
        upload_total: r.get(4)?,
    })
}

#[async_trait]
impl HistoryRepo for SqliteStore {
    async fn snapshot_usage(&self, day: &str, period: &str) -> Result<u64, DbError> {
        let (day, period) = (owned(day), owned(period));
        self.db
            .write(move |c| {
                let n = c.prepare_cached(SNAPSHOT)?.execute(params![day, period])?;
                Ok(n as u64)
            })
            .await
    }

    async fn usage_days(
        &self,
        account_id: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<UsageDay>, DbError> {
        let (account_id, from, to) = (owned(account_id), owned(from), owned(to));
        self.db
            .run(move |c| {
                let mut stmt = c.prepare_cached(
                    "SELECT day, period, storage_bytes, bandwidth_total, upload_total
                     FROM usage_days
                     WHERE account_id = ?1 AND day <= ?3
                       AND day >= COALESCE((SELECT MAX(day) FROM usage_days
                                            WHERE account_id = ?1 AND day < ?2), ?2)
                     ORDER BY day",
                )?;
                let rows = stmt
                    .query_map(params![account_id, from, to], day_row)?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    async fn prune_usage_days(&self, before: &str) -> Result<u64, DbError> {
        let before = owned(before);
        self.db
            .write(move |c| {
                let n = c
                    .prepare_cached(
                        "DELETE FROM usage_days
                         WHERE day < ?1 AND EXISTS (
                             SELECT 1 FROM usage_days n
                             WHERE n.account_id = usage_days.account_id
                               AND n.day > usage_days.day AND n.day <= ?1)",
                    )?
                    .execute([before])?;
                Ok(n as u64)
            })
            .await
    }
}

fn delivery_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DeliveryRow> {
    let status: String = r.get(3)?;
    Ok(DeliveryRow {
        webhook_id: r.get(0)?,
        event_id: r.get(1)?,
        kind: r.get(2)?,
        // The CHECK keeps it one of the three.
        status: DeliveryStatus::parse(&status).unwrap_or(DeliveryStatus::Failed),
        http_status: r.get(4)?,
        attempts: r.get(5)?,
        at: r.get(6)?,
    })
}

#[async_trait]
impl DeliveryRepo for SqliteStore {
    async fn record_delivery(&self, d: DeliveryRow) -> Result<(), DbError> {
        self.db
            .write(move |c| {
                c.prepare_cached(
                    "INSERT INTO webhook_deliveries
                         (webhook_id, event_id, type, status, http_status, attempts, at)
                     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?1)
                     ON CONFLICT (webhook_id, event_id) DO UPDATE SET
                         status = excluded.status, http_status = excluded.http_status,
                         attempts = excluded.attempts, at = excluded.at",
                )?
                .execute(params![
                    d.webhook_id,
                    d.event_id,
                    d.kind,
                    d.status.as_str(),
                    d.http_status,
                    d.attempts,
                    d.at
                ])?;
                c.prepare_cached(
                    "DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND at < (
                         SELECT at FROM webhook_deliveries WHERE webhook_id = ?1
                         ORDER BY at DESC LIMIT 1 OFFSET ?2)",
                )?
                .execute(params![d.webhook_id, DELIVERIES_KEPT - 1])?;
                Ok(())
            })
            .await
    }

    async fn deliveries(&self, webhook_id: &str, limit: u32) -> Result<Vec<DeliveryRow>, DbError> {
        let webhook_id = owned(webhook_id);
        self.db
            .run(move |c| {
                let mut stmt = c.prepare_cached(
                    "SELECT webhook_id, event_id, type, status, http_status, attempts, at
                     FROM webhook_deliveries WHERE webhook_id = ?1
                     ORDER BY at DESC, event_id DESC LIMIT ?2",
                )?;
                let rows = stmt
                    .query_map(params![webhook_id, limit], delivery_row)?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::db::{AccountRepo, BandwidthCount, OutboxRepo};
    use crate::service::admin;

    #[tokio::test]
    async fn readings_are_taken_when_something_changed_and_pruned_to_a_base() {
        let (dir, db) = crate::db::sqlite::test_db();
        let config = Config::for_data_dir(dir.path());
        let s = SqliteStore::new(db);
        let a = admin::create_account(&s, &config, Some("a"), None, 1)
            .await
            .unwrap();
        admin::create_account(&s, &config, Some("b"), None, 1)
            .await
            .unwrap();
        assert_eq!(s.snapshot_usage("2026-11-01", "2026-11").await.unwrap(), 2);
        assert_eq!(
            s.snapshot_usage("2026-11-01", "2026-11").await.unwrap(),
            0,
            "nothing changed: nothing written"
        );
        assert_eq!(s.snapshot_usage("2026-11-02", "2026-11").await.unwrap(), 0);
        let sent = BandwidthCount {
            account_id: a.id.clone(),
            period: "2026-11".into(),
            bytes: 40,
        };
        s.add_bandwidth(vec![sent]).await.unwrap();
        assert_eq!(s.snapshot_usage("2026-11-03", "2026-11").await.unwrap(), 1);
        // A new period: a reading for everyone (the totals start again).
        assert_eq!(s.snapshot_usage("2026-12-01", "2026-12").await.unwrap(), 2);
        let days = s
            .usage_days(&a.id, "2026-11-02", "2026-12-31")
            .await
            .unwrap();
        let seen: Vec<(&str, u64)> = days
            .iter()
            .map(|d| (d.day.as_str(), d.bandwidth_total))
            .collect();
        assert_eq!(
            seen,
            [("2026-11-01", 0), ("2026-11-03", 40), ("2026-12-01", 0)],
            "the base before the first day, then the days"
        );
        // Pruned before 2026-12-01: that day's reading is the base and stays.
        assert_eq!(s.prune_usage_days("2026-12-02").await.unwrap(), 3);
        let left = s.usage_days(&a.id, "2026-12-05", "2026-12-31").await;
        assert_eq!(left.unwrap()[0].day, "2026-12-01");
    }

    #[tokio::test]
    async fn a_log_keeps_each_events_latest_attempt_and_the_latest_hundred() {
        let (dir, db) = crate::db::sqlite::test_db();
        let config = Config::for_data_dir(dir.path());
        let s = SqliteStore::new(db);
        admin::create_account(&s, &config, Some("a"), None, 1)
            .await
            .unwrap();
        let w = admin::create_webhook(&s, "a", "https://example.com/h", &[], 1)
            .await
            .unwrap();
        let row = |event: u32, status, at| DeliveryRow {
            webhook_id: w.id.clone(),
            event_id: format!("msg_{event}"),
            kind: "file.created".into(),
            status,
            http_status: Some(500),
            attempts: 1,
            at,
        };
        s.record_delivery(row(0, DeliveryStatus::Retrying, 1))
            .await
            .unwrap();
        let mut again = row(0, DeliveryStatus::Delivered, 2);
        again.http_status = Some(200);
        again.attempts = 2;
        s.record_delivery(again.clone()).await.unwrap();
        assert_eq!(s.deliveries(&w.id, 100).await.unwrap(), [again]);
        for i in 1..=120 {
            let at = 10 + i64::from(i);
            s.record_delivery(row(i, DeliveryStatus::Failed, at))
                .await
                .unwrap();
        }
        let log = s.deliveries(&w.id, 1000).await.unwrap();
        assert_eq!(log.len(), 100);
        assert_eq!(log[0].event_id, "msg_120", "newest first");
        assert_eq!(log[99].event_id, "msg_21");
        // A webhook gone: its log goes, and nothing more is recorded.
        s.delete_webhook(&w.id).await.unwrap();
        s.record_delivery(row(500, DeliveryStatus::Failed, 9_999))
            .await
            .unwrap();
        assert!(s.deliveries(&w.id, 1000).await.unwrap().is_empty());
    }
}
