//! The blob deletion queue (`blob_deletions`): what the collector must remove.

use super::DbError;
use crate::db::model::UPLOAD_GUARD_MS;
use rusqlite::{params, Connection};

/// Registers a blob an upload is about to write: collected after the guard
/// time unless the upload's commit releases it first.
pub(crate) fn guard_upload(conn: &Connection, blob_key: &str, now: i64) -> Result<(), DbError> {
    conn.prepare_cached("INSERT INTO blob_deletions (blob_key, due_at) VALUES (?1, ?2)")?
        .execute(params![blob_key, now + UPLOAD_GUARD_MS])?;
    Ok(())
}

/// Queues a blob for deletion, due at `due`.
pub(crate) fn schedule(conn: &Connection, blob_key: &str, due: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO blob_deletions (blob_key, due_at) VALUES (?1, ?2)
         ON CONFLICT (blob_key) DO UPDATE SET due_at = MIN(due_at, ?2)",
    )?
    .execute(params![blob_key, due])?;
    Ok(())
}

/// Blobs due for deletion at `now`. A queued blob that a file row still
/// references (an upload whose commit won the race with its own cancellation)
/// is never deleted: its queue entry is dropped instead.
pub(crate) fn due(conn: &Connection, now: i64, max: u32) -> Result<Vec<(String, u32)>, DbError> {
    conn.prepare_cached(
        "DELETE FROM blob_deletions WHERE due_at <= ?1
         AND EXISTS (SELECT 1 FROM files f WHERE f.blob_key = blob_deletions.blob_key)",
    )?
    .execute([now])?;
    let mut stmt = conn.prepare_cached(
        "SELECT blob_key, attempts FROM blob_deletions WHERE due_at <= ?1 ORDER BY due_at LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(params![now, max], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Forgets a queued blob: it is gone, or (an upload's guard, released by the
/// committing transaction) it is now a file's. False when it was not queued.
pub(crate) fn done(conn: &Connection, blob_key: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("DELETE FROM blob_deletions WHERE blob_key = ?1")?
        .execute([blob_key])?
        == 1)
}

/// A deletion failed: try again at `retry_at`.
pub(crate) fn failed(
    conn: &Connection,
    blob_key: &str,
    retry_at: i64,
    error: &str,
) -> Result<(), DbError> {
    conn.prepare_cached("UPDATE blob_deletions SET attempts = attempts + 1, due_at = ?2, last_error = ?3 WHERE blob_key = ?1")?
        .execute(params![blob_key, retry_at, error],
    )?;
    Ok(())
}

/// At start no upload is in flight: every upload guard left is from a crash.
pub(crate) fn expire_upload_guards(conn: &Connection, now: i64) -> Result<usize, DbError> {
    Ok(conn
        .prepare_cached("UPDATE blob_deletions SET due_at = ?1 WHERE due_at > ?1")?
        .execute([now])?)
}
