//! The metadata of data safety on PostgreSQL ([`IntegrityRepo`]). The
//! scrub's turn is a lease in `scrub_turn`: one node scrubs at a time (the
//! blob store is shared; several scrubbing would read it several times
//! over); it renews its lease as it goes, and another node takes the turn
//! once the lease ran out or the holder's session lock is gone (it died),
//! as the collector's claims and upload guards are judged
//! (`blobs`, `node`). The place is the turn's: the next holder goes on
//! from where the last one stopped.

use super::node::NODE_LOCK;
use super::{execute, has_nul, query, query_one, rows, DbError, PgStore};
use crate::db::integrity::IntegrityRepo;
use crate::db::model::FileRow;
use async_trait::async_trait;

#[async_trait]
impl IntegrityRepo for PgStore {
    async fn mark_damaged(&self, id: &str, now: i64) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| {
            let n = execute(
                c,
                "UPDATE files SET damaged_at = $2 WHERE id = $1 AND damaged_at IS NULL",
                &[&id, &now],
            )
            .await?;
            Ok(n == 1)
        })
    }

    async fn clear_damaged(&self, id: &str) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| {
            let n = execute(
                c,
                "UPDATE files SET damaged_at = NULL WHERE id = $1 AND damaged_at IS NOT NULL",
                &[&id],
            )
            .await?;
            Ok(n == 1)
        })
    }

    async fn record_crc32(&self, id: &str, crc32: u32) -> Result<(), DbError> {
        if has_nul(&[id]) {
            return Ok(());
        }
        let crc32 = i64::from(crc32);
        on_conn!(self, |c| {
            execute(
                c,
                "UPDATE files SET crc32 = $2 WHERE id = $1 AND crc32 IS NULL",
                &[&id, &crc32],
            )
            .await?;
            Ok(())
        })
    }

    async fn count_damaged(&self) -> Result<u64, DbError> {
        on_conn!(self, |c| {
            let row = query_one(
                c,
                "SELECT COUNT(*) FROM files WHERE damaged_at IS NOT NULL",
                &[],
            )
            .await?;
            Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        })
    }

    async fn files_after(&self, after: &str, max: u32) -> Result<Vec<FileRow>, DbError> {
        if has_nul(&[after]) {
            return Ok(Vec::new());
        }
        let max = i64::from(max);
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM files WHERE id > $1 ORDER BY id LIMIT $2",
                rows::FILE
            );
            Ok(query(c, &sql, &[&after, &max])
                .await?
                .iter()
                .map(rows::file)
                .collect())
        })
    }

    async fn known_blobs(&self) -> Result<Vec<String>, DbError> {
        on_conn!(self, |c| {
            let rows = query(
                c,
                "SELECT blob_key FROM files WHERE NOT inline
                 UNION ALL SELECT blob_key FROM image_variants
                 UNION ALL SELECT blob_key FROM tus_uploads
                 UNION ALL SELECT blob_key FROM s3_parts
                 UNION ALL SELECT blob_key FROM blob_deletions",
                &[],
            )
            .await?;
            Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
        })
    }

    async fn scrub_turn(&self, now: i64, lease_ms: i64) -> Result<Option<String>, DbError> {
        let until = now.saturating_add(lease_ms);
        let lock = i64::from(NODE_LOCK);
        on_conn!(self, |c| {
            let rows = query(
                c,
                "INSERT INTO scrub_turn (id, node, until_ms, after) VALUES (1, $1, $2, '')
                 ON CONFLICT (id) DO UPDATE SET node = EXCLUDED.node, until_ms = EXCLUDED.until_ms
                 WHERE scrub_turn.node = EXCLUDED.node OR scrub_turn.until_ms < $3
                    OR scrub_turn.node::BIGINT NOT IN (
                        SELECT objid::BIGINT FROM pg_locks
                        WHERE locktype = 'advisory' AND classid::BIGINT = $4 AND objsubid = 2
                          AND granted AND database = (
                              SELECT oid FROM pg_database WHERE datname = current_database()))
                 RETURNING after",
                &[&self.node, &until, &now, &lock],
            )
            .await?;
            Ok(rows.first().map(|r| r.get::<_, String>(0)))
        })
    }

    async fn scrub_moved(&self, after: &str, now: i64, lease_ms: i64) -> Result<bool, DbError> {
        if has_nul(&[after]) {
            return Ok(false);
        }
        let until = now.saturating_add(lease_ms);
        on_conn!(self, |c| {
            let n = execute(
                c,
                "UPDATE scrub_turn SET after = $1, until_ms = $2 WHERE id = 1 AND node = $3",
                &[&after, &until, &self.node],
            )
            .await?;
            Ok(n == 1)
        })
    }
}
