//! The metadata of data safety on SQLite ([`IntegrityRepo`]): one node, so
//! the scrub's turn is always this node's; its place is kept across restarts.

use super::file_rows::{from_row, COLUMNS};
use super::{owned, DbError, SqliteStore};
use crate::db::integrity::IntegrityRepo;
use crate::db::model::FileRow;
use async_trait::async_trait;
use rusqlite::params;

#[async_trait]
impl IntegrityRepo for SqliteStore {
    async fn mark_damaged(&self, id: &str, now: i64) -> Result<bool, DbError> {
        let id = owned(id);
        self.db
            .write_small(move |c| {
                Ok(c.prepare_cached(
                    "UPDATE files SET damaged_at = ?2 WHERE id = ?1 AND damaged_at IS NULL",
                )?
                .execute(params![id, now])?
                    == 1)
            })
            .await
    }

    async fn clear_damaged(&self, id: &str) -> Result<bool, DbError> {
        let id = owned(id);
        self.db
            .write_small(move |c| {
                Ok(c.prepare_cached(
                    "UPDATE files SET damaged_at = NULL WHERE id = ?1 AND damaged_at IS NOT NULL",
                )?
                .execute(params![id])?
                    == 1)
            })
            .await
    }

    async fn record_crc32(&self, id: &str, crc32: u32) -> Result<(), DbError> {
        let id = owned(id);
        self.db
            .write_small(move |c| {
                c.prepare_cached("UPDATE files SET crc32 = ?2 WHERE id = ?1 AND crc32 IS NULL")?
                    .execute(params![id, crc32])?;
                Ok(())
            })
            .await
    }

    async fn count_damaged(&self) -> Result<u64, DbError> {
        self.db
            .lookup(|c| {
                Ok(
                    c.prepare_cached("SELECT COUNT(*) FROM files WHERE damaged_at IS NOT NULL")?
                        .query_row([], |r| r.get::<_, u64>(0))?,
                )
            })
            .await
    }

    async fn files_after(&self, after: &str, max: u32) -> Result<Vec<FileRow>, DbError> {
        let after = owned(after);
        self.db
            .run(move |c| {
                let mut stmt = c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM files WHERE id > ?1 ORDER BY id LIMIT ?2"
                ))?;
                let rows = stmt
                    .query_map(params![after, max], from_row)?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    async fn known_blobs(&self) -> Result<Vec<String>, DbError> {
        self.db
            .run(|c| {
                let mut stmt = c.prepare(
                    "SELECT blob_key FROM files WHERE NOT inline
                     UNION ALL SELECT blob_key FROM image_variants
                     UNION ALL SELECT blob_key FROM tus_uploads
                     UNION ALL SELECT blob_key FROM s3_parts
                     UNION ALL SELECT blob_key FROM blob_deletions",
                )?;
                let keys = stmt
                    .query_map([], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(keys)
            })
            .await
    }

    async fn scrub_turn(&self, now: i64, lease_ms: i64) -> Result<Option<String>, DbError> {
        let until = now.saturating_add(lease_ms);
        self.db
            .write_small(move |c| {
                Ok(Some(
                    c.prepare_cached(
                        "INSERT INTO scrub_turn (id, node, until_ms, after) VALUES (1, 0, ?1, '')
                         ON CONFLICT (id) DO UPDATE SET until_ms = excluded.until_ms
                         RETURNING after",
                    )?
                    .query_row(params![until], |r| r.get::<_, String>(0))?,
                ))
            })
            .await
    }

    async fn scrub_moved(&self, after: &str, now: i64, lease_ms: i64) -> Result<bool, DbError> {
        let (after, until) = (owned(after), now.saturating_add(lease_ms));
        self.db
            .write_small(move |c| {
                Ok(c.prepare_cached(
                    "UPDATE scrub_turn SET after = ?1, until_ms = ?2 WHERE id = 1",
                )?
                .execute(params![after, until])?
                    == 1)
            })
            .await
    }
}
