//! The server's own needs on PostgreSQL ([`OpsRepo`]): its settings
//! (`meta`), a liveness ping, the pool's state, the store's totals and the
//! removal of an account.

use super::accounts::TELL_NODES;
use super::{execute, query, query_one, query_opt, unsigned, DbError, PgStore};
use crate::db::model::{PoolStats, Removed, Totals, HOLD_END, HOLD_PREFIX};
use crate::db::store::OpsRepo;
use async_trait::async_trait;
use deadpool_postgres::Transaction;
use std::time::Duration;

#[async_trait]
impl OpsRepo for PgStore {
    /// The value of `key`, or `value` stored now. The insert waits for a
    /// concurrent one of the same key, then the read sees the winner's value.
    async fn meta_get_or_insert(&self, key: &str, value: String) -> Result<String, DbError> {
        in_tx!(self, |tx| {
            execute(
                &tx,
                "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                &[&key, &value],
            )
            .await?;
            let row = query_one(&tx, "SELECT value FROM meta WHERE key = $1", &[&key]).await?;
            Ok(row.get(0))
        })
    }

    async fn hold_blobs(&self, id: &str, until: i64) -> Result<(), DbError> {
        let key = format!("{HOLD_PREFIX}{id}");
        on_conn!(self, |c| {
            execute(
                c,
                "INSERT INTO meta (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&key, &until.to_string()],
            )
            .await
            .map(|_| ())
        })
    }

    async fn release_blobs(&self, id: &str, now: i64) -> Result<(), DbError> {
        let key = format!("{HOLD_PREFIX}{id}");
        on_conn!(self, |c| {
            execute(
                c,
                "DELETE FROM meta WHERE key = $1
                    OR (key >= $2 AND key < $3 AND value::BIGINT < $4)",
                &[&key, &HOLD_PREFIX, &HOLD_END, &now],
            )
            .await
            .map(|_| ())
        })
    }

    async fn blobs_held(&self, now: i64) -> Result<bool, DbError> {
        on_conn!(self, |c| {
            let r = query_one(
                c,
                "SELECT EXISTS (SELECT 1 FROM meta WHERE key >= $1 AND key < $2
                     AND value::BIGINT > $3)",
                &[&HOLD_PREFIX, &HOLD_END, &now],
            )
            .await?;
            Ok(r.get(0))
        })
    }

    async fn ping(&self) -> Result<(), DbError> {
        on_conn!(self, |c| query(c, "SELECT 1", &[]).await.map(|_| ()))
    }

    fn pool_stats(&self) -> PoolStats {
        let s = self.pool.status();
        PoolStats {
            connections: u32::try_from(s.size).unwrap_or(u32::MAX),
            idle_connections: u32::try_from(s.available).unwrap_or(0),
        }
    }

    async fn totals(&self) -> Result<Totals, DbError> {
        on_conn!(self, |c| {
            let r = query_one(
                c,
                "SELECT COALESCE(SUM(storage_bytes), 0)::BIGINT,
                     COALESCE(SUM(file_count), 0)::BIGINT, COUNT(*) FROM accounts",
                &[],
            )
            .await?;
            Ok(Totals {
                stored_bytes: unsigned(r.get(0)),
                files: unsigned(r.get(1)),
                accounts: unsigned(r.get(2)),
            })
        })
    }

    /// An operator's command, not a request: no statement timeout, and
    /// ten minutes (`REMOVAL_DEADLINE`) for the whole.
    async fn delete_account(&self, id: &str, now: i64) -> Result<Option<Removed>, DbError> {
        let deadline = tokio::time::Instant::now() + REMOVAL_DEADLINE;
        let removed = in_tx!(self, deadline, |tx| remove_account(&tx, id, now).await);
        self.keys.forget();
        removed
    }
}

/// How long the removal of an account may take.
const REMOVAL_DEADLINE: Duration = Duration::from_mins(10);

/// [`OpsRepo::delete_account`] in the transaction `tx`.
async fn remove_account(
    tx: &Transaction<'_>,
    id: &str,
    now: i64,
) -> Result<Option<Removed>, DbError> {
    tx.batch_execute("SET LOCAL statement_timeout = 0; SET LOCAL jit = off")
        .await?;
    // The account row first, as a commit takes it: a commit of the
    // account waits, then finds none (FS003, "account vanished").
    if query_opt(
        tx,
        "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE",
        &[&id],
    )
    .await?
    .is_none()
    {
        return Ok(None);
    }
    // The files' blobs queued (inline bytes dropped), the variants' by the
    // files' trigger; then incomplete uploads' partial blobs.
    let files = query_one(
        tx,
        "WITH gone AS (DELETE FROM files WHERE account_id = $1 RETURNING blob_key, inline, size),
             queued AS (
                 INSERT INTO blob_deletions (blob_key, due_at, owner)
                 SELECT blob_key, $2::BIGINT, NULL::INTEGER FROM gone WHERE NOT inline
                 ON CONFLICT (blob_key)
                 DO UPDATE SET due_at = LEAST(blob_deletions.due_at, EXCLUDED.due_at), owner = NULL),
             inline AS (
                 DELETE FROM inline_blobs WHERE blob_key IN (SELECT blob_key FROM gone WHERE inline))
         SELECT COUNT(*), COALESCE(SUM(size), 0)::BIGINT FROM gone",
        &[&id, &now],
    )
    .await?;
    let uploads = query_one(
        tx,
        "WITH gone AS (DELETE FROM tus_uploads WHERE account_id = $1
                       RETURNING blob_key, completed_at),
             queued AS (
                 INSERT INTO blob_deletions (blob_key, due_at, owner)
                 SELECT blob_key, $2::BIGINT, NULL::INTEGER FROM gone WHERE completed_at IS NULL
                 ON CONFLICT (blob_key)
                 DO UPDATE SET due_at = LEAST(blob_deletions.due_at, EXCLUDED.due_at), owner = NULL)
         SELECT COUNT(*) FILTER (WHERE completed_at IS NULL) FROM gone",
        &[&id, &now],
    )
    .await?;
    let delete = |table: &'static str| async move {
        let sql = format!("DELETE FROM {table} WHERE account_id = $1");
        execute(tx, &sql, &[&id]).await
    };
    let keys = execute(
        tx,
        &format!("DELETE FROM api_keys WHERE account_id = $1 RETURNING {TELL_NODES}"),
        &[&id],
    )
    .await?;
    let removed = Removed {
        files: unsigned(files.get(0)),
        bytes: unsigned(files.get(1)),
        uploads: unsigned(uploads.get(0)),
        keys,
        tokens: delete("upload_tokens").await?,
        // Their events and batches go with them (ON DELETE CASCADE).
        webhooks: delete("webhooks").await?,
    };
    super::s3::remove_account(tx, id, now).await?;
    for table in [
        "idempotency_keys",
        "usage_periods",
        "usage_days",
        "stranger_slots",
    ] {
        delete(table).await?;
    }
    execute(tx, "DELETE FROM accounts WHERE id = $1", &[&id]).await?;
    Ok(Some(removed))
}
