//! The S3 door's multipart uploads on PostgreSQL ([`MultipartRepo`]): uploads,
//! their parts and what an account's removal takes of the door. Every write that moves an account's
//! bytes takes the account row's lock first (`account_lock`), as every
//! quota check does, so a part's check is exact across nodes; its bytes
//! are in `storage_bytes` while its row is (migration 0023), which
//! `filestore_commit` reads. Paths compare in byte order (COLLATE "C").

use super::account_lock::lock_account;
use super::accounts::commitments;
use super::blobs::schedule;
use super::{execute, query, query_opt, signed, unsigned, DbError, PgStore};
use crate::db::s3::{MultipartRepo, PartOutcome, PartRow, S3UploadRow};
use crate::domain::metadata;
use crate::domain::object::ObjectAttrs;
use crate::domain::quota::{Ask, Quota, Refusal};
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Transaction};
use tokio_postgres::Row;

const UPLOAD: &str = "id, account_id, path, folder, name, content_type, metadata, attrs, private,
     created_by, created_at, last_part_at, completed_at, file_id, completion";

fn upload_of(r: &Row) -> S3UploadRow {
    S3UploadRow {
        id: r.get(0),
        account_id: r.get(1),
        path: r.get(2),
        folder: r.get(3),
        name: r.get(4),
        content_type: r.get(5),
        metadata: metadata::from_stored(r.get::<_, &str>(6)),
        attrs: ObjectAttrs::from_stored(r.get::<_, Option<&str>>(7)),
        private: r.get(8),
        created_by: r.get(9),
        created_at: r.get(10),
        last_part_at: r.get(11),
        completed_at: r.get(12),
        file_id: r.get(13),
        completion: r.get(14),
    }
}

const PART: &str = "upload_id, number, size, md5, sha256, blob_key, created_at";

fn part_of(r: &Row) -> PartRow {
    PartRow {
        upload_id: r.get(0),
        number: u32::try_from(r.get::<_, i32>(1)).unwrap_or(0),
        size: unsigned(r.get(2)),
        md5: r.get(3),
        sha256: r.get(4),
        blob_key: r.get(5),
        created_at: r.get(6),
    }
}

fn number(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Adds `delta` bytes to the account's storage_bytes.
async fn add_storage<C: GenericClient>(c: &C, account_id: &str, delta: i64) -> Result<(), DbError> {
    if delta != 0 {
        execute(
            c,
            "UPDATE accounts SET storage_bytes = GREATEST(0, storage_bytes + $2) WHERE id = $1",
            &[&account_id, &delta],
        )
        .await?;
    }
    Ok(())
}

/// Removes the parts of upload `id`: their blobs queued for deletion (due
/// `now`), their bytes out of the account's storage_bytes.
async fn drop_parts<C: GenericClient>(
    c: &C,
    account_id: &str,
    id: &str,
    now: i64,
) -> Result<(), DbError> {
    let rows = query(
        c,
        "WITH gone AS (DELETE FROM s3_parts WHERE upload_id = $1 RETURNING blob_key, size),
             queued AS (
                 INSERT INTO blob_deletions (blob_key, due_at, owner)
                 SELECT blob_key, $2::BIGINT, NULL::INTEGER FROM gone
                 ON CONFLICT (blob_key)
                 DO UPDATE SET due_at = LEAST(blob_deletions.due_at, EXCLUDED.due_at), owner = NULL)
         SELECT COALESCE(SUM(size), 0)::BIGINT FROM gone",
        &[&id, &now],
    )
    .await?;
    let bytes: i64 = rows.first().map_or(0, |r| r.get(0));
    add_storage(c, account_id, -bytes).await
}

/// Aborts the open upload `id` (the account row locked by the caller);
/// false when it was not open.
pub(super) async fn abort_in<C: GenericClient>(
    c: &C,
    account_id: &str,
    id: &str,
    now: i64,
) -> Result<bool, DbError> {
    let gone = execute(
        c,
        "DELETE FROM s3_uploads WHERE id = $1 AND account_id = $2 AND completed_at IS NULL",
        &[&id, &account_id],
    )
    .await?;
    if gone != 1 {
        return Ok(false);
    }
    drop_parts(c, account_id, id, now).await?;
    Ok(true)
}

/// Marks open upload `id` completed by file `file_id` inside the commit's
/// transaction (`files`, the account row locked): its parts go (blobs
/// queued, bytes out of storage_bytes; the file's come in with its row).
/// False when it is no longer open.
pub(super) async fn complete_in(
    tx: &Transaction<'_>,
    account_id: &str,
    id: &str,
    (file_id, record): (&str, &str),
    now: i64,
) -> Result<bool, DbError> {
    let marked = execute(
        tx,
        "UPDATE s3_uploads SET completed_at = $3, file_id = $4, completion = $5
         WHERE id = $1 AND account_id = $2 AND completed_at IS NULL",
        &[&id, &account_id, &now, &file_id, &record],
    )
    .await?;
    if marked != 1 {
        return Ok(false);
    }
    drop_parts(tx, account_id, id, now).await?;
    Ok(true)
}

/// Everything of the S3 door of account `id`, inside its removal's
/// transaction (`ops`): parts' blobs queued (due `now`), rows gone.
pub(super) async fn remove_account(
    tx: &Transaction<'_>,
    id: &str,
    now: i64,
) -> Result<(), DbError> {
    execute(
        tx,
        "WITH gone AS (
             DELETE FROM s3_parts WHERE upload_id IN
                 (SELECT id FROM s3_uploads WHERE account_id = $1)
             RETURNING blob_key)
         INSERT INTO blob_deletions (blob_key, due_at, owner)
         SELECT blob_key, $2::BIGINT, NULL::INTEGER FROM gone
         ON CONFLICT (blob_key)
         DO UPDATE SET due_at = LEAST(blob_deletions.due_at, EXCLUDED.due_at), owner = NULL",
        &[&id, &now],
    )
    .await?;
    for table in ["s3_uploads", "s3_markers", "s3_buckets"] {
        let sql = format!("DELETE FROM {table} WHERE account_id = $1");
        execute(tx, &sql, &[&id]).await?;
    }
    Ok(())
}

async fn create_upload(
    tx: &Transaction<'_>,
    u: &S3UploadRow,
    limits: Quota,
    period: &str,
) -> Result<Option<Refusal>, DbError> {
    let stored = lock_account(tx, &u.account_id).await?;
    let held = commitments(tx, &u.account_id, period, u.created_at, None)
        .await?
        .holdings(stored);
    if let Err(refusal) = limits.admit(held, Ask::resumable(0)) {
        return Ok(Some(refusal));
    }
    execute(
        tx,
        &format!(
            "INSERT INTO s3_uploads ({UPLOAD})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, NULL, NULL)"
        ),
        &[
            &u.id,
            &u.account_id,
            &u.path,
            &u.folder,
            &u.name,
            &u.content_type,
            &metadata::to_json(&u.metadata),
            &u.attrs.stored(),
            &u.private,
            &u.created_by,
            &u.created_at,
            &u.last_part_at,
        ],
    )
    .await?;
    Ok(None)
}

async fn put_part(
    tx: &Transaction<'_>,
    account_id: &str,
    p: &PartRow,
    (limits, period): (Quota, &str),
) -> Result<PartOutcome, DbError> {
    let stored = lock_account(tx, account_id).await?;
    let open = query_opt(
        tx,
        "SELECT 1 FROM s3_uploads WHERE id = $1 AND account_id = $2 AND completed_at IS NULL
         FOR UPDATE",
        &[&p.upload_id, &account_id],
    )
    .await?;
    if open.is_none() {
        return Ok(PartOutcome::NoUpload);
    }
    let old = query_opt(
        tx,
        &format!("SELECT {PART} FROM s3_parts WHERE upload_id = $1 AND number = $2"),
        &[&p.upload_id, &number(p.number)],
    )
    .await?
    .map(|r| part_of(&r));
    let old_size = old.as_ref().map_or(0, |o| o.size);
    let mut held = commitments(tx, account_id, period, p.created_at, None)
        .await?
        .holdings(stored);
    held.used = held.used.saturating_sub(old_size);
    if let Err(refusal) = limits.admit(held, Ask::bytes(p.size)) {
        return Ok(PartOutcome::Refused(refusal));
    }
    let released = execute(
        tx,
        "DELETE FROM blob_deletions WHERE blob_key = $1 AND owner IS NOT NULL",
        &[&p.blob_key],
    )
    .await?;
    if released != 1 {
        return Err(DbError::Invalid(format!(
            "upload guard of {} is gone; the blob may have been collected",
            p.blob_key
        )));
    }
    if let Some(o) = &old {
        schedule(tx, &o.blob_key, p.created_at).await?;
    }
    execute(
        tx,
        &format!(
            "INSERT INTO s3_parts ({PART}) VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (upload_id, number) DO UPDATE SET size = EXCLUDED.size,
                 md5 = EXCLUDED.md5, sha256 = EXCLUDED.sha256, blob_key = EXCLUDED.blob_key,
                 created_at = EXCLUDED.created_at"
        ),
        &[
            &p.upload_id,
            &number(p.number),
            &signed(p.size)?,
            &p.md5,
            &p.sha256,
            &p.blob_key,
            &p.created_at,
        ],
    )
    .await?;
    add_storage(tx, account_id, signed(p.size)? - signed(old_size)?).await?;
    execute(
        tx,
        "UPDATE s3_uploads SET last_part_at = GREATEST(last_part_at, $2) WHERE id = $1",
        &[&p.upload_id, &p.created_at],
    )
    .await?;
    Ok(PartOutcome::Stored { replaced: old })
}

async fn reap(
    tx: &Transaction<'_>,
    idle_before: i64,
    done_before: i64,
    now: i64,
    max: u32,
) -> Result<usize, DbError> {
    let idle = query(
        tx,
        "SELECT id, account_id FROM s3_uploads
         WHERE completed_at IS NULL AND last_part_at < $1 ORDER BY account_id COLLATE \"C\", id LIMIT $2",
        &[&idle_before, &i64::from(max)],
    )
    .await?;
    let mut n = 0;
    for r in &idle {
        let (id, account_id): (&str, &str) = (r.get(0), r.get(1));
        lock_account(tx, account_id).await?;
        n += usize::from(abort_in(tx, account_id, id, now).await?);
    }
    execute(
        tx,
        "DELETE FROM s3_uploads WHERE completed_at < $1",
        &[&done_before],
    )
    .await?;
    Ok(n)
}

/// The exclusive upper bound of the paths starting with `prefix`.
pub(super) fn prefix_end(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

#[async_trait]
impl MultipartRepo for PgStore {
    async fn create_s3_upload(
        &self,
        row: S3UploadRow,
        limits: Quota,
        period: &str,
    ) -> Result<Option<Refusal>, DbError> {
        let (_turn, deadline) = self.turn(&row.account_id).await?;
        in_tx!(self, deadline, |tx| create_upload(
            &tx, &row, limits, period
        )
        .await)
    }

    async fn s3_upload(&self, account_id: &str, id: &str) -> Result<Option<S3UploadRow>, DbError> {
        on_conn!(self, |c| Ok(query_opt(
            c,
            &format!("SELECT {UPLOAD} FROM s3_uploads WHERE id = $1 AND account_id = $2"),
            &[&id, &account_id],
        )
        .await?
        .map(|r| upload_of(&r))))
    }

    async fn put_part(
        &self,
        account_id: &str,
        part: PartRow,
        limits: Quota,
        period: &str,
    ) -> Result<PartOutcome, DbError> {
        let (_turn, deadline) = self.turn(account_id).await?;
        in_tx!(self, deadline, |tx| put_part(
            &tx,
            account_id,
            &part,
            (limits, period)
        )
        .await)
    }

    async fn s3_parts(
        &self,
        upload_id: &str,
        after: u32,
        limit: u32,
    ) -> Result<Vec<PartRow>, DbError> {
        on_conn!(self, |c| Ok(query(
            c,
            &format!(
                "SELECT {PART} FROM s3_parts WHERE upload_id = $1 AND number > $2
                 ORDER BY number LIMIT $3"
            ),
            &[&upload_id, &number(after), &i64::from(limit)],
        )
        .await?
        .iter()
        .map(part_of)
        .collect()))
    }

    async fn s3_uploads(
        &self,
        account_id: &str,
        prefix: &str,
        key_marker: Option<&str>,
        id_marker: Option<&str>,
        limit: u32,
    ) -> Result<Vec<S3UploadRow>, DbError> {
        let end = prefix_end(prefix);
        on_conn!(self, |c| Ok(query(
            c,
            &format!(
                "SELECT {UPLOAD} FROM s3_uploads
                 WHERE account_id = $1 AND completed_at IS NULL AND path >= $2 AND path < $3
                   AND ($4::TEXT IS NULL OR path > $4
                        OR (path = $4 AND $5::TEXT IS NOT NULL AND id COLLATE \"C\" > $5))
                 ORDER BY path, id COLLATE \"C\" LIMIT $6"
            ),
            &[
                &account_id,
                &prefix,
                &end,
                &key_marker,
                &id_marker,
                &i64::from(limit)
            ],
        )
        .await?
        .iter()
        .map(upload_of)
        .collect()))
    }

    async fn abort_s3_upload(&self, account_id: &str, id: &str, now: i64) -> Result<bool, DbError> {
        let (_turn, deadline) = self.turn(account_id).await?;
        in_tx!(self, deadline, |tx| {
            lock_account(&tx, account_id).await?;
            abort_in(&tx, account_id, id, now).await
        })
    }

    async fn reap_s3_uploads(
        &self,
        idle_before: i64,
        done_before: i64,
        now: i64,
        max: u32,
    ) -> Result<usize, DbError> {
        in_tx!(self, |tx| reap(&tx, idle_before, done_before, now, max)
            .await)
    }
}
