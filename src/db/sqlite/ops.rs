//! Operations on SQLite: settings kept in `meta` (the signing secret), the
//! health ping, the read pool's numbers, the store's totals and the
//! removal of an account.

use super::{owned, write_tx, DbError, OptionalExtension, SqliteStore};
use crate::db::model::{PoolStats, Removed, Totals};
use crate::db::model::{HOLD_END, HOLD_PREFIX};
use crate::db::store::OpsRepo;
use async_trait::async_trait;
use rusqlite::{params, Connection};

#[async_trait]
impl OpsRepo for SqliteStore {
    /// Reads one value of `meta`, or stores `value` when absent (in one
    /// transaction).
    async fn meta_get_or_insert(&self, key: &str, value: String) -> Result<String, DbError> {
        let key = owned(key);
        self.db
            .write(move |c| {
                let tx = write_tx(c)?;
                let existing: Option<String> = tx
                    .query_row("SELECT value FROM meta WHERE key = ?1", [&key], |r| {
                        r.get(0)
                    })
                    .optional()?;
                let value = if let Some(v) = existing {
                    v
                } else {
                    tx.execute(
                        "INSERT INTO meta (key, value) VALUES (?1, ?2)",
                        [&key, &value],
                    )?;
                    value
                };
                tx.commit()?;
                Ok(value)
            })
            .await
    }

    async fn hold_blobs(&self, id: &str, until: i64) -> Result<(), DbError> {
        let key = format!("{HOLD_PREFIX}{id}");
        self.db
            .write(move |c| {
                c.prepare_cached(
                    "INSERT INTO meta (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                )?
                .execute(params![key, until.to_string()])?;
                Ok(())
            })
            .await
    }

    async fn release_blobs(&self, id: &str, now: i64) -> Result<(), DbError> {
        let key = format!("{HOLD_PREFIX}{id}");
        self.db
            .write(move |c| {
                c.prepare_cached(
                    "DELETE FROM meta WHERE key = ?1
                        OR (key >= ?2 AND key < ?3 AND CAST(value AS INTEGER) < ?4)",
                )?
                .execute(params![key, HOLD_PREFIX, HOLD_END, now])?;
                Ok(())
            })
            .await
    }

    async fn blobs_held(&self, now: i64) -> Result<bool, DbError> {
        self.db
            .lookup(move |c| {
                let held = c
                    .prepare_cached(
                        "SELECT EXISTS (SELECT 1 FROM meta WHERE key >= ?1 AND key < ?2
                             AND CAST(value AS INTEGER) > ?3)",
                    )?
                    .query_row(params![HOLD_PREFIX, HOLD_END, now], |r| r.get(0))?;
                Ok(held)
            })
            .await
    }

    async fn ping(&self) -> Result<(), DbError> {
        self.db.ping().await
    }

    fn pool_stats(&self) -> PoolStats {
        let s = self.db.pool_state();
        PoolStats {
            connections: s.connections,
            idle_connections: s.idle_connections,
        }
    }

    async fn totals(&self) -> Result<Totals, DbError> {
        self.db
            .run(|c| {
                let (bytes, files, accounts) = c
                    .prepare_cached(
                        "SELECT COALESCE(SUM(storage_bytes), 0), COALESCE(SUM(file_count), 0),
                             COUNT(*) FROM accounts",
                    )?
                    .query_row([], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, i64>(2)?,
                        ))
                    })?;
                let count = |n: i64| u64::try_from(n).unwrap_or(0);
                Ok(Totals {
                    stored_bytes: count(bytes),
                    files: count(files),
                    accounts: count(accounts),
                })
            })
            .await
    }

    async fn delete_account(&self, id: &str, now: i64) -> Result<Option<Removed>, DbError> {
        let id = owned(id);
        let removed = self.db.write(move |c| remove_account(c, &id, now)).await;
        // Its keys are gone: every process forgets the keys it remembers.
        self.keys_changed();
        removed
    }
}

/// [`OpsRepo::delete_account`] in one write transaction.
fn remove_account(c: &mut Connection, id: &str, now: i64) -> Result<Option<Removed>, DbError> {
    let tx = write_tx(c)?;
    if super::accounts::get(&tx, id)?.is_none() {
        return Ok(None);
    }
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    // Blobs first, while the rows name them: the files' (inline bytes go
    // with their rows), then incomplete uploads' partial ones.
    tx.prepare_cached(
        "INSERT INTO blob_deletions (blob_key, due_at)
         SELECT blob_key, ?2 FROM files WHERE account_id = ?1 AND inline = 0
         UNION ALL
         SELECT blob_key, ?2 FROM tus_uploads WHERE account_id = ?1 AND completed_at IS NULL
         ON CONFLICT (blob_key) DO UPDATE SET due_at = MIN(due_at, excluded.due_at)",
    )?
    .execute(params![id, now])?;
    tx.prepare_cached(
        "DELETE FROM inline_blobs WHERE blob_key IN
             (SELECT blob_key FROM files WHERE account_id = ?1 AND inline = 1)",
    )?
    .execute([id])?;
    let bytes: i64 = tx
        .prepare_cached("SELECT COALESCE(SUM(size), 0) FROM files WHERE account_id = ?1")?
        .query_row([id], |r| r.get(0))?;
    let delete = |table: &str| -> Result<u64, DbError> {
        let sql = format!("DELETE FROM {table} WHERE account_id = ?1");
        Ok(count(tx.prepare_cached(&sql)?.execute([id])?))
    };
    // The variants' blobs are queued by the files' trigger; a webhook's
    // events and batches go with it (ON DELETE CASCADE).
    let removed = Removed {
        files: delete("files")?,
        bytes: u64::try_from(bytes).unwrap_or(0),
        uploads: count(
            tx.prepare_cached(
                "DELETE FROM tus_uploads WHERE account_id = ?1 AND completed_at IS NULL",
            )?
            .execute([id])?,
        ),
        keys: delete("api_keys")?,
        tokens: delete("upload_tokens")?,
        webhooks: delete("webhooks")?,
    };
    super::s3::remove_account(&tx, id, now)?;
    for table in [
        "tus_uploads",
        "idempotency_keys",
        "usage_periods",
        "usage_days",
    ] {
        delete(table)?;
    }
    tx.prepare_cached("DELETE FROM accounts WHERE id = ?1")?
        .execute([id])?;
    tx.commit()?;
    Ok(Some(removed))
}
