//! Image variants on SQLite ([`VariantRepo`]): read by file and key, and
//! recorded under the cap in the single writer's transaction, which makes
//! the cap exact. The schema's trigger removes them with their file.

use super::{blobs, owned, signed, DbError, OptionalExtension, SqliteStore};
use crate::db::model::{VariantOutcome, VariantRow};
use crate::db::store::VariantRepo;
use async_trait::async_trait;
use rusqlite::{params, Connection, Row};

const COLUMNS: &str = "file_id, key, blob_key, size, content_type, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<VariantRow> {
    Ok(VariantRow {
        file_id: r.get(0)?,
        key: r.get(1)?,
        blob_key: r.get(2)?,
        size: r.get(3)?,
        content_type: r.get(4)?,
        created_at: r.get(5)?,
    })
}

fn get(c: &Connection, file_id: &str, key: &str) -> Result<Option<VariantRow>, DbError> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM image_variants WHERE file_id = ?1 AND key = ?2"
    ))?
    .query_row(params![file_id, key], from_row)
    .optional()?)
}

fn count(c: &Connection, file_id: &str) -> Result<u32, DbError> {
    Ok(
        c.prepare_cached("SELECT COUNT(*) FROM image_variants WHERE file_id = ?1")?
            .query_row([file_id], |r| r.get(0))?,
    )
}

#[async_trait]
impl VariantRepo for SqliteStore {
    async fn variant(
        &self,
        file_id: &str,
        key: &str,
    ) -> Result<(Option<VariantRow>, u32), DbError> {
        let (file_id, key) = (owned(file_id), owned(key));
        self.db
            .lookup(move |c| {
                let found = get(c, &file_id, &key)?;
                let n = if found.is_some() {
                    0
                } else {
                    count(c, &file_id)?
                };
                Ok((found, n))
            })
            .await
    }

    async fn put_variant(&self, v: VariantRow, cap: u32) -> Result<VariantOutcome, DbError> {
        self.db
            .write(move |c| {
                let live: bool = c
                    .prepare_cached("SELECT EXISTS (SELECT 1 FROM files WHERE id = ?1)")?
                    .query_row([&v.file_id], |r| r.get(0))?;
                if !live {
                    return Ok(VariantOutcome::FileGone);
                }
                if let Some(first) = get(c, &v.file_id, &v.key)? {
                    return Ok(VariantOutcome::Exists(first));
                }
                if count(c, &v.file_id)? >= cap {
                    return Ok(VariantOutcome::Full);
                }
                c.prepare_cached(&format!(
                    "INSERT INTO image_variants ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                ))?
                .execute(params![
                    v.file_id,
                    v.key,
                    v.blob_key,
                    signed(v.size)?,
                    v.content_type,
                    v.created_at
                ])?;
                // The trigger that takes variants with their file runs
                // for the files marked so.
                c.prepare_cached("UPDATE files SET variants = 1 WHERE id = ?1 AND variants = 0")?
                    .execute([&v.file_id])?;
                blobs::done(c, &v.blob_key)?;
                Ok(VariantOutcome::Stored)
            })
            .await
    }
}
