//! The console's readings and delivery log on PostgreSQL ([`HistoryRepo`],
//! [`DeliveryRepo`]). Several nodes' collectors may take the same reading
//! at once: the upsert makes that one row.

use super::{execute, has_nul, query, signed, unsigned, DbError, PgStore};
use crate::db::console::{
    DeliveryRepo, DeliveryRow, DeliveryStatus, HistoryRepo, UsageDay, DELIVERIES_KEPT,
};
use async_trait::async_trait;
use tokio_postgres::Row;

/// Every account's counters as a reading of `$1` (day) in `$2` (period),
/// unless they are those of its latest reading (SQLite's `SNAPSHOT`).
const SNAPSHOT: &str = "
    INSERT INTO usage_days
        (account_id, day, period, storage_bytes, bandwidth_total, upload_total)
    SELECT a.id, $1::TEXT, $2::TEXT, a.storage_bytes,
           COALESCE(u.bandwidth_bytes, 0), COALESCE(u.upload_count, 0)
    FROM accounts a
    LEFT JOIN usage_periods u ON u.account_id = a.id AND u.period = $2
    WHERE NOT EXISTS (
        SELECT 1 FROM usage_days d
        WHERE d.account_id = a.id
          AND d.day = (SELECT MAX(m.day) FROM usage_days m WHERE m.account_id = a.id)
          AND d.period = $2
          AND d.storage_bytes = a.storage_bytes
          AND d.bandwidth_total = COALESCE(u.bandwidth_bytes, 0)
          AND d.upload_total = COALESCE(u.upload_count, 0))
    ON CONFLICT (account_id, day) DO UPDATE SET
        period = EXCLUDED.period,
        storage_bytes = EXCLUDED.storage_bytes,
        bandwidth_total = EXCLUDED.bandwidth_total,
        upload_total = EXCLUDED.upload_total";

fn day_row(r: &Row) -> UsageDay {
    UsageDay {
        day: r.get(0),
        period: r.get(1),
        storage_bytes: unsigned(r.get(2)),
        bandwidth_total: unsigned(r.get(3)),
        upload_total: unsigned(r.get(4)),
    }
}

#[async_trait]
impl HistoryRepo for PgStore {
    async fn snapshot_usage(&self, day: &str, period: &str) -> Result<u64, DbError> {
        if has_nul(&[day, period]) {
            return Ok(0);
        }
        on_conn!(self, |c| execute(c, SNAPSHOT, &[&day, &period]).await)
    }

    async fn usage_days(
        &self,
        account_id: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<UsageDay>, DbError> {
        if has_nul(&[account_id, from, to]) {
            return Ok(Vec::new());
        }
        on_conn!(self, |c| {
            let rows = query(
                c,
                "SELECT day, period, storage_bytes, bandwidth_total, upload_total
                 FROM usage_days
                 WHERE account_id = $1 AND day <= $3
                   AND day >= COALESCE((SELECT MAX(day) FROM usage_days
                                        WHERE account_id = $1 AND day < $2), $2)
                 ORDER BY day",
                &[&account_id, &from, &to],
            )
            .await?;
            Ok(rows.iter().map(day_row).collect())
        })
    }

    async fn prune_usage_days(&self, before: &str) -> Result<u64, DbError> {
        if has_nul(&[before]) {
            return Ok(0);
        }
        on_conn!(self, |c| execute(
            c,
            "DELETE FROM usage_days o
             WHERE o.day < $1 AND EXISTS (
                 SELECT 1 FROM usage_days n
                 WHERE n.account_id = o.account_id AND n.day > o.day AND n.day <= $1)",
            &[&before],
        )
        .await)
    }
}

fn delivery_row(r: &Row) -> DeliveryRow {
    let status: String = r.get(3);
    let http_status: Option<i32> = r.get(4);
    let attempts: i32 = r.get(5);
    DeliveryRow {
        webhook_id: r.get(0),
        event_id: r.get(1),
        kind: r.get(2),
        // The CHECK keeps it one of the three.
        status: DeliveryStatus::parse(&status).unwrap_or(DeliveryStatus::Failed),
        http_status: http_status.and_then(|s| u16::try_from(s).ok()),
        attempts: u32::try_from(attempts).unwrap_or(0),
        at: r.get(6),
    }
}

#[async_trait]
impl DeliveryRepo for PgStore {
    async fn record_delivery(&self, d: DeliveryRow) -> Result<(), DbError> {
        if has_nul(&[&d.webhook_id, &d.event_id, &d.kind]) {
            return Ok(());
        }
        let http_status = d.http_status.map(i32::from);
        let attempts = i32::try_from(d.attempts).unwrap_or(i32::MAX);
        let kept = signed(u64::from(DELIVERIES_KEPT - 1))?;
        in_tx!(self, |tx| {
            // A subscription deleted meanwhile: no row (its lock is taken
            // by the insert's foreign key check, so a delete waits).
            execute(
                &tx,
                "INSERT INTO webhook_deliveries
                     (webhook_id, event_id, type, status, http_status, attempts, at)
                 SELECT $1::TEXT, $2::TEXT, $3::TEXT, $4::TEXT, $5::INTEGER, $6::INTEGER, $7::BIGINT
                 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $1::TEXT)
                 ON CONFLICT (webhook_id, event_id) DO UPDATE SET
                     status = EXCLUDED.status, http_status = EXCLUDED.http_status,
                     attempts = EXCLUDED.attempts, at = EXCLUDED.at",
                &[
                    &d.webhook_id,
                    &d.event_id,
                    &d.kind,
                    &d.status.as_str(),
                    &http_status,
                    &attempts,
                    &d.at,
                ],
            )
            .await?;
            execute(
                &tx,
                "DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND at < (
                     SELECT at FROM webhook_deliveries WHERE webhook_id = $1
                     ORDER BY at DESC LIMIT 1 OFFSET $2)",
                &[&d.webhook_id, &kept],
            )
            .await?;
            Ok(())
        })
    }

    async fn deliveries(&self, webhook_id: &str, limit: u32) -> Result<Vec<DeliveryRow>, DbError> {
        if has_nul(&[webhook_id]) {
            return Ok(Vec::new());
        }
        let limit = i64::from(limit);
        on_conn!(self, |c| {
            let rows = query(
                c,
                "SELECT webhook_id, event_id, type, status, http_status, attempts, at
                 FROM webhook_deliveries WHERE webhook_id = $1
                 ORDER BY at DESC, event_id DESC LIMIT $2",
                &[&webhook_id, &limit],
            )
            .await?;
            Ok(rows.iter().map(delivery_row).collect())
        })
    }
}
