//! Image variants on PostgreSQL ([`VariantRepo`]): read by file and key, and
//! recorded under the cap. The recording transaction first locks its file's
//! row (`FOR NO KEY UPDATE`): a delete of the file waits for it (and its
//! trigger then sees the new variant) or went first (the file is gone), and
//! two nodes recording variants of one file take turns, so the cap is exact.

use super::{blobs, execute, query_one, query_opt, signed, unsigned, DbError, PgStore};
use crate::db::model::{VariantOutcome, VariantRow};
use crate::db::store::VariantRepo;
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

const COLUMNS: &str = "file_id, key, blob_key, size, content_type, created_at";

fn from_row(r: &Row) -> VariantRow {
    VariantRow {
        file_id: r.get(0),
        key: r.get(1),
        blob_key: r.get(2),
        size: unsigned(r.get(3)),
        content_type: r.get(4),
        created_at: r.get(5),
    }
}

async fn get<C: GenericClient>(
    c: &C,
    file_id: &str,
    key: &str,
) -> Result<Option<VariantRow>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM image_variants WHERE file_id = $1 AND key = $2");
    Ok(query_opt(c, &sql, &[&file_id, &key])
        .await?
        .as_ref()
        .map(from_row))
}

async fn count<C: GenericClient>(c: &C, file_id: &str) -> Result<u32, DbError> {
    let n: i64 = query_one(
        c,
        "SELECT COUNT(*) FROM image_variants WHERE file_id = $1",
        &[&file_id],
    )
    .await?
    .get(0);
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

async fn put<C: GenericClient>(c: &C, v: &VariantRow, cap: u32) -> Result<VariantOutcome, DbError> {
    let live = query_opt(
        c,
        "SELECT 1 FROM files WHERE id = $1 FOR NO KEY UPDATE",
        &[&v.file_id],
    )
    .await?;
    if live.is_none() {
        return Ok(VariantOutcome::FileGone);
    }
    if let Some(first) = get(c, &v.file_id, &v.key).await? {
        return Ok(VariantOutcome::Exists(first));
    }
    if count(c, &v.file_id).await? >= cap {
        return Ok(VariantOutcome::Full);
    }
    let sql = format!("INSERT INTO image_variants ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)");
    execute(
        c,
        &sql,
        &[
            &v.file_id,
            &v.key,
            &v.blob_key,
            &signed(v.size)?,
            &v.content_type,
            &v.created_at,
        ],
    )
    .await?;
    blobs::unqueue(c, &v.blob_key).await?;
    Ok(VariantOutcome::Stored)
}

#[async_trait]
impl VariantRepo for PgStore {
    async fn variant(
        &self,
        file_id: &str,
        key: &str,
    ) -> Result<(Option<VariantRow>, u32), DbError> {
        on_conn!(self, |c| {
            let found = get(c, file_id, key).await?;
            let n = if found.is_some() {
                0
            } else {
                count(c, file_id).await?
            };
            Ok((found, n))
        })
    }

    async fn put_variant(&self, v: VariantRow, cap: u32) -> Result<VariantOutcome, DbError> {
        in_tx!(self, |tx| put(&tx, &v, cap).await)
    }
}
