//! The S3 door's multipart uploads on SQLite ([`MultipartRepo`]): uploads,
//! their parts and what an account's removal takes of the door. Quota checks run in the single
//! writer's transaction, which makes them exact; a part's bytes are in
//! `storage_bytes` while its row is (migration 0020).

use super::SqliteStore;
use super::{accounts, blobs, owned, shared, signed, write_tx, DbError, OptionalExtension};
use crate::db::s3::{MultipartRepo, PartOutcome, PartRow, S3UploadRow};
use crate::domain::metadata;
use crate::domain::object::ObjectAttrs;
use crate::domain::quota::{Ask, Holdings, Quota, Refusal};
use async_trait::async_trait;
use rusqlite::{params, Connection, Row};

const UPLOAD: &str = "id, account_id, path, folder, name, content_type, metadata, attrs, private,
     created_by, created_at, last_part_at, completed_at, file_id, completion";

fn upload_of(r: &Row<'_>) -> rusqlite::Result<S3UploadRow> {
    Ok(S3UploadRow {
        id: r.get(0)?,
        account_id: r.get(1)?,
        path: r.get(2)?,
        folder: r.get(3)?,
        name: r.get(4)?,
        content_type: r.get(5)?,
        metadata: metadata::from_stored(&r.get::<_, String>(6)?),
        attrs: ObjectAttrs::from_stored(r.get::<_, Option<String>>(7)?.as_deref()),
        private: r.get(8)?,
        created_by: r.get(9)?,
        created_at: r.get(10)?,
        last_part_at: r.get(11)?,
        completed_at: r.get(12)?,
        file_id: r.get(13)?,
        completion: r.get(14)?,
    })
}

const PART: &str = "upload_id, number, size, md5, sha256, blob_key, created_at";

fn part_of(r: &Row<'_>) -> rusqlite::Result<PartRow> {
    Ok(PartRow {
        upload_id: r.get(0)?,
        number: r.get(1)?,
        size: r.get(2)?,
        md5: r.get(3)?,
        sha256: r.get(4)?,
        blob_key: r.get(5)?,
        created_at: r.get(6)?,
    })
}

/// The open upload `id` of `account_id`.
fn open_upload(c: &Connection, account_id: &str, id: &str) -> Result<Option<S3UploadRow>, DbError> {
    Ok(c.prepare_cached(&format!(
        "SELECT {UPLOAD} FROM s3_uploads
             WHERE id = ?1 AND account_id = ?2 AND completed_at IS NULL"
    ))?
    .query_row(params![id, account_id], upload_of)
    .optional()?)
}

/// Removes the parts of upload `id`: their blobs queued for deletion (due
/// `now`), their bytes out of the account's storage_bytes. Returns how many bytes.
fn drop_parts(c: &Connection, account_id: &str, id: &str, now: i64) -> Result<u64, DbError> {
    c.prepare_cached(
        "INSERT INTO blob_deletions (blob_key, due_at)
         SELECT blob_key, ?2 FROM s3_parts WHERE upload_id = ?1
         ON CONFLICT (blob_key) DO UPDATE SET due_at = MIN(due_at, excluded.due_at)",
    )?
    .execute(params![id, now])?;
    let bytes: u64 = c
        .prepare_cached("SELECT COALESCE(SUM(size), 0) FROM s3_parts WHERE upload_id = ?1")?
        .query_row([id], |r| r.get(0))?;
    c.prepare_cached("DELETE FROM s3_parts WHERE upload_id = ?1")?
        .execute([id])?;
    accounts::add_storage(c, account_id, -signed(bytes)?)?;
    Ok(bytes)
}

/// Aborts open upload `id` inside the caller's transaction; false when it
/// was not open.
pub(super) fn abort_in(
    c: &Connection,
    account_id: &str,
    id: &str,
    now: i64,
) -> Result<bool, DbError> {
    if open_upload(c, account_id, id)?.is_none() {
        return Ok(false);
    }
    drop_parts(c, account_id, id, now)?;
    c.prepare_cached("DELETE FROM s3_uploads WHERE id = ?1")?
        .execute([id])?;
    Ok(true)
}

/// Marks open upload `id` completed by file `file_id` inside the commit's
/// transaction (`files::commit_upload`): its parts go (their blobs queued,
/// due `now`; their bytes out of storage_bytes, the file's come in with
/// its row). False when it is no longer open (aborted, reaped, or another
/// Complete committed first).
pub(super) fn complete_in(
    c: &Connection,
    account_id: &str,
    id: &str,
    (file_id, record): (&str, &str),
    now: i64,
) -> Result<bool, DbError> {
    let marked = c
        .prepare_cached(
            "UPDATE s3_uploads SET completed_at = ?3, file_id = ?4, completion = ?5
             WHERE id = ?1 AND account_id = ?2 AND completed_at IS NULL",
        )?
        .execute(params![id, account_id, now, file_id, record])?;
    if marked != 1 {
        return Ok(false);
    }
    drop_parts(c, account_id, id, now)?;
    Ok(true)
}

/// Everything of the S3 door of account `id`, inside its removal's
/// transaction (`ops`): parts' blobs queued (due `now`), rows gone.
pub(super) fn remove_account(c: &Connection, id: &str, now: i64) -> Result<(), DbError> {
    c.prepare_cached(
        "INSERT INTO blob_deletions (blob_key, due_at)
         SELECT p.blob_key, ?2 FROM s3_parts p JOIN s3_uploads u ON u.id = p.upload_id
         WHERE u.account_id = ?1
         ON CONFLICT (blob_key) DO UPDATE SET due_at = MIN(due_at, excluded.due_at)",
    )?
    .execute(params![id, now])?;
    c.prepare_cached(
        "DELETE FROM s3_parts WHERE upload_id IN (SELECT id FROM s3_uploads WHERE account_id = ?1)",
    )?
    .execute([id])?;
    for table in ["s3_uploads", "s3_markers", "s3_buckets"] {
        c.prepare_cached(&format!("DELETE FROM {table} WHERE account_id = ?1"))?
            .execute([id])?;
    }
    Ok(())
}

/// What the account holds as a quota check reads it (the bytes of parts
/// are in its stored bytes).
fn holdings(c: &Connection, account_id: &str, period: &str, now: i64) -> Result<Holdings, DbError> {
    Ok(shared::commitments(c, account_id, period, now, None)?
        .ok_or_else(|| DbError::Invalid(format!("account {account_id} vanished")))?
        .holdings(0))
}

fn create_upload(
    c: &mut Connection,
    u: &S3UploadRow,
    limits: Quota,
    period: &str,
) -> Result<Option<Refusal>, DbError> {
    let tx = write_tx(c)?;
    if let Err(refusal) = limits.admit(
        holdings(&tx, &u.account_id, period, u.created_at)?,
        Ask::resumable(0),
    ) {
        return Ok(Some(refusal));
    }
    tx.prepare_cached(&format!(
        "INSERT INTO s3_uploads ({UPLOAD})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, NULL, NULL, NULL)"
    ))?
    .execute(params![
        u.id,
        u.account_id,
        u.path,
        u.folder,
        u.name,
        u.content_type,
        metadata::to_json(&u.metadata),
        u.attrs.stored(),
        u.private,
        u.created_by,
        u.created_at,
        u.last_part_at,
    ])?;
    tx.commit()?;
    Ok(None)
}

fn put_part(
    c: &mut Connection,
    account_id: &str,
    p: &PartRow,
    limits: Quota,
    period: &str,
) -> Result<PartOutcome, DbError> {
    let tx = write_tx(c)?;
    if open_upload(&tx, account_id, &p.upload_id)?.is_none() {
        return Ok(PartOutcome::NoUpload);
    }
    let old = tx
        .prepare_cached(&format!(
            "SELECT {PART} FROM s3_parts WHERE upload_id = ?1 AND number = ?2"
        ))?
        .query_row(params![p.upload_id, p.number], part_of)
        .optional()?;
    let old_size = old.as_ref().map_or(0, |o| o.size);
    let mut held = holdings(&tx, account_id, period, p.created_at)?;
    held.used = held.used.saturating_sub(old_size);
    if let Err(refusal) = limits.admit(held, Ask::bytes(p.size)) {
        return Ok(PartOutcome::Refused(refusal));
    }
    if !blobs::done(&tx, &p.blob_key)? {
        return Err(DbError::Invalid(format!(
            "upload guard of {} is gone; the blob may have been collected",
            p.blob_key
        )));
    }
    if let Some(o) = &old {
        blobs::schedule(&tx, &o.blob_key, p.created_at)?;
    }
    tx.prepare_cached(&format!(
        "INSERT OR REPLACE INTO s3_parts ({PART}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
    ))?
    .execute(params![
        p.upload_id,
        p.number,
        signed(p.size)?,
        p.md5,
        p.sha256,
        p.blob_key,
        p.created_at
    ])?;
    accounts::add_storage(&tx, account_id, signed(p.size)? - signed(old_size)?)?;
    tx.prepare_cached("UPDATE s3_uploads SET last_part_at = MAX(last_part_at, ?2) WHERE id = ?1")?
        .execute(params![p.upload_id, p.created_at])?;
    tx.commit()?;
    Ok(PartOutcome::Stored { replaced: old })
}

fn reap(
    c: &mut Connection,
    idle_before: i64,
    done_before: i64,
    now: i64,
    max: u32,
) -> Result<usize, DbError> {
    let tx = write_tx(c)?;
    let idle: Vec<(String, String)> = tx
        .prepare_cached(
            "SELECT id, account_id FROM s3_uploads
             WHERE completed_at IS NULL AND last_part_at < ?1 LIMIT ?2",
        )?
        .query_map(params![idle_before, max], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut n = 0;
    for (id, account_id) in &idle {
        n += usize::from(abort_in(&tx, account_id, id, now)?);
    }
    tx.prepare_cached("DELETE FROM s3_uploads WHERE completed_at < ?1")?
        .execute([done_before])?;
    tx.commit()?;
    Ok(n)
}

/// The exclusive upper bound of the paths starting with `prefix` ('\u{10FFFF}'
/// sorts after every character a path holds).
pub(super) fn prefix_end(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

#[async_trait]
impl MultipartRepo for SqliteStore {
    async fn create_s3_upload(
        &self,
        row: S3UploadRow,
        limits: Quota,
        period: &str,
    ) -> Result<Option<Refusal>, DbError> {
        let period = owned(period);
        self.db
            .write(move |c| create_upload(c, &row, limits, &period))
            .await
    }

    async fn s3_upload(&self, account_id: &str, id: &str) -> Result<Option<S3UploadRow>, DbError> {
        let (a, id) = (owned(account_id), owned(id));
        self.db
            .lookup(move |c| {
                Ok(c.prepare_cached(&format!(
                    "SELECT {UPLOAD} FROM s3_uploads WHERE id = ?1 AND account_id = ?2"
                ))?
                .query_row(params![id, a], upload_of)
                .optional()?)
            })
            .await
    }

    async fn put_part(
        &self,
        account_id: &str,
        part: PartRow,
        limits: Quota,
        period: &str,
    ) -> Result<PartOutcome, DbError> {
        let (a, period) = (owned(account_id), owned(period));
        self.db
            .write(move |c| put_part(c, &a, &part, limits, &period))
            .await
    }

    async fn s3_parts(
        &self,
        upload_id: &str,
        after: u32,
        limit: u32,
    ) -> Result<Vec<PartRow>, DbError> {
        let id = owned(upload_id);
        self.db
            .run(move |c| {
                Ok(c.prepare_cached(&format!(
                    "SELECT {PART} FROM s3_parts WHERE upload_id = ?1 AND number > ?2
                     ORDER BY number LIMIT ?3"
                ))?
                .query_map(params![id, after, limit], part_of)?
                .collect::<Result<_, _>>()?)
            })
            .await
    }

    async fn s3_uploads(
        &self,
        account_id: &str,
        prefix: &str,
        key_marker: Option<&str>,
        id_marker: Option<&str>,
        limit: u32,
    ) -> Result<Vec<S3UploadRow>, DbError> {
        let (a, prefix) = (owned(account_id), owned(prefix));
        let (key, id) = (
            key_marker.map(str::to_string),
            id_marker.map(str::to_string),
        );
        self.db
            .run(move |c| {
                Ok(c.prepare_cached(&format!(
                    "SELECT {UPLOAD} FROM s3_uploads
                     WHERE account_id = ?1 AND completed_at IS NULL
                       AND path >= ?2 AND path < ?3
                       AND (?4 IS NULL OR path > ?4 OR (path = ?4 AND ?5 IS NOT NULL AND id > ?5))
                     ORDER BY path, id LIMIT ?6"
                ))?
                .query_map(
                    params![a, prefix, prefix_end(&prefix), key, id, limit],
                    upload_of,
                )?
                .collect::<Result<_, _>>()?)
            })
            .await
    }

    async fn abort_s3_upload(&self, account_id: &str, id: &str, now: i64) -> Result<bool, DbError> {
        let (a, id) = (owned(account_id), owned(id));
        self.db
            .write(move |c| {
                let tx = write_tx(c)?;
                let aborted = abort_in(&tx, &a, &id, now)?;
                tx.commit()?;
                Ok(aborted)
            })
            .await
    }

    async fn reap_s3_uploads(
        &self,
        idle_before: i64,
        done_before: i64,
        now: i64,
        max: u32,
    ) -> Result<usize, DbError> {
        self.db
            .write(move |c| reap(c, idle_before, done_before, now, max))
            .await
    }
}
