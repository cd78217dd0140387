//! The blob deletion queue (`blob_deletions`): what the collector must
//! remove, upload guards included. `schedule` and `done` also run inside the
//! transactions of files and uploads.

use super::{outbox, owned, shared, DbError, SqliteStore};
use crate::db::model::UPLOAD_GUARD_MS;
use crate::db::store::BlobRepo;
use async_trait::async_trait;
use rusqlite::{params, Connection};

/// Queues a blob for deletion, due at `due`.
pub(super) fn schedule(conn: &Connection, blob_key: &str, due: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO blob_deletions (blob_key, due_at) VALUES (?1, ?2)
         ON CONFLICT (blob_key) DO UPDATE SET due_at = MIN(due_at, ?2)",
    )?
    .execute(params![blob_key, due])?;
    Ok(())
}

/// Forgets a queued blob: it is gone, or (an upload's guard, released by the
/// committing transaction) it is now a file's. False when it was not queued.
pub(super) fn done(conn: &Connection, blob_key: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("DELETE FROM blob_deletions WHERE blob_key = ?1")?
        .execute([blob_key])?
        == 1)
}

#[async_trait]
impl BlobRepo for SqliteStore {
    /// Registers a blob an upload is about to write: collected after the guard
    /// time unless the upload's commit releases it first.
    async fn guard_upload(&self, blob_key: &str, now: i64) -> Result<(), DbError> {
        let key = owned(blob_key);
        self.db
            .write(move |c| {
                c.prepare_cached("INSERT INTO blob_deletions (blob_key, due_at) VALUES (?1, ?2)")?
                    .execute(params![key, now + UPLOAD_GUARD_MS])?;
                Ok(())
            })
            .await
    }

    async fn schedule_blob_deletion(&self, blob_key: &str, due: i64) -> Result<(), DbError> {
        let key = owned(blob_key);
        self.db.write(move |c| schedule(c, &key, due)).await
    }

    /// Blobs due for deletion at `now`. A queued blob that a file row still
    /// references (an upload whose commit won the race with its own
    /// cancellation) is never deleted: its queue entry is dropped instead.
    async fn due_blobs(&self, now: i64, max: u32) -> Result<Vec<(String, u32)>, DbError> {
        self.db
            .write(move |c| {
                c.prepare_cached(
                    "DELETE FROM blob_deletions WHERE due_at <= ?1
                     AND EXISTS (SELECT 1 FROM files f WHERE f.blob_key = blob_deletions.blob_key)",
                )?
                .execute([now])?;
                let mut stmt = c.prepare_cached(
                    "SELECT blob_key, attempts FROM blob_deletions WHERE due_at <= ?1
                     ORDER BY due_at LIMIT ?2",
                )?;
                let rows = stmt
                    .query_map(params![now, max], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    async fn blob_deleted(&self, blob_key: &str) -> Result<bool, DbError> {
        let key = owned(blob_key);
        self.db.write(move |c| done(c, &key)).await
    }

    /// A deletion failed: try again at `retry_at`.
    async fn blob_deletion_failed(
        &self,
        blob_key: &str,
        retry_at: i64,
        error: &str,
    ) -> Result<(), DbError> {
        let (key, msg) = (owned(blob_key), owned(error));
        self.db
            .write(move |c| {
                c.prepare_cached(
                    "UPDATE blob_deletions SET attempts = attempts + 1, due_at = ?2,
                         last_error = ?3 WHERE blob_key = ?1",
                )?
                .execute(params![key, retry_at, msg])?;
                Ok(())
            })
            .await
    }

    /// At start no upload is in flight: every upload guard left is from a
    /// crash (and so is every lease of an upload and every claim of an event).
    async fn expire_upload_guards(&self, now: i64) -> Result<usize, DbError> {
        self.db
            .write(move |c| {
                let expired = c
                    .prepare_cached("UPDATE blob_deletions SET due_at = ?1 WHERE due_at > ?1")?
                    .execute([now])?;
                shared::end_leases(c)?;
                outbox::release_claims(c, now)?;
                Ok(expired)
            })
            .await
    }
}
