//! Files on SQLite: the commit of an upload (with its quota checks, in one
//! write transaction), lookups that hide expired files, keyset pages,
//! deletion and expiry, idempotency keys.

use super::file_rows::{from_row, COLUMNS, DATA};
use super::{accounts, blobs, outbox, owned, paths, s3, shared, signed, tokens, write_tx};
use super::{DbError, OptionalExtension, SqliteStore};
use crate::db::model::{
    subfolder_names, CommitContext, CommitOutcome, FileChange, FileRow, FolderFilter, FolderRange,
    ListFilter, PageAfter, RowWithData, DELETION_LEASE_MS, REPLACED_KEPT_MS,
};
use crate::db::store::FileRepo;
use crate::domain::filepath::AtPath;
use crate::domain::ids::upload_token_of;
use crate::domain::metadata;
use crate::domain::quota::{Ask, Quota};
use crate::domain::webhooks;
use async_trait::async_trait;
use bytes::Bytes;
use rusqlite::types::Value;
use rusqlite::{params, Connection};
use std::sync::atomic::Ordering;

/// Commits an uploaded blob as a file, or refuses it, in one write
/// transaction: the storage quota and the monthly upload count are checked
/// under the write lock (counting what incomplete resumable uploads hold), so
/// concurrent uploads can never pass a quota together. On success the blob's
/// pending-deletion guard row is removed; a small file's bytes (`inline`,
/// when `f.inline`) are stored with its row. A resumable upload completing
/// (`ctx.tus_upload`) gives back its reservation and is marked complete.
/// With the outcome, whether it queued a webhook event (the sender then looks).
fn commit_upload(
    conn: &mut Connection,
    f: &FileRow,
    inline: Option<&[u8]>,
    limits: Quota,
    ctx: &CommitContext,
) -> Result<(CommitOutcome, bool), DbError> {
    let tx = write_tx(conn)?;
    if let Some(key) = &ctx.idempotency_key {
        if let Some(existing) =
            replayed(&tx, &f.account_id, key, ctx.idempotency_since, f.created_at)?
        {
            return Ok((CommitOutcome::Replayed(existing), false));
        }
    }
    // Reads only, before any write: an early return rolls back anyway.
    if ctx.at_path == AtPath::IfAbsent
        && !paths::files_at(
            &tx,
            &f.account_id,
            f.folder.as_deref(),
            &f.name,
            f.created_at,
        )?
        .is_empty()
    {
        return Ok((CommitOutcome::PathTaken, false));
    }
    // A resumable upload was admitted at its creation and holds its room:
    // only a plan lowered since can refuse it, and then it is not refused.
    // So was an S3 multipart upload (its creation, then each part's bytes).
    let admitted = ctx.tus_upload.is_some() || ctx.s3_upload.is_some();
    if !admitted {
        let held = shared::commitments(&tx, &f.account_id, &ctx.period, f.created_at, None)?
            .ok_or_else(|| DbError::Invalid(format!("account {} vanished", f.account_id)))?
            .holdings(0);
        let ask = Ask::file(f.size);
        let admitted = match ctx.share {
            Some(share) => {
                let theirs = shared::strangers(&tx, &f.account_id, &ctx.period, f.created_at)?;
                limits.admit_stranger(share, held, theirs, ask)
            }
            None => limits.admit(held, ask),
        };
        if let Err(refusal) = admitted {
            return Ok((CommitOutcome::Refused(refusal), false));
        }
    }
    // Whose upload it is: a stranger's counts in their share of the period's
    // uploads (a resumable upload's is its creator's).
    let mut by_stranger = ctx.share.is_some() && !admitted;
    // The token's use is counted after the replay (a replay takes none) and
    // the quota's refusal (a refused upload takes none either), as the first
    // write, in the same order as on PostgreSQL (where an Ok outcome commits
    // what was written; here an early return rolls back).
    // A resumable upload's use (its creator's) moves from `uploads_open`
    // once it is marked complete, below.
    if let (Some(token), None) = (&ctx.token, &ctx.tus_upload) {
        if !tokens::take(&tx, token)? {
            return Ok((CommitOutcome::TokenSpent, false));
        }
    }
    match (f.inline, inline) {
        (true, Some(data)) => {
            tx.prepare_cached("INSERT INTO inline_blobs (blob_key, data) VALUES (?1, ?2)")?
                .execute(params![f.blob_key, data])?;
        }
        (false, None) => {
            // A resumable upload's row guards its blob instead.
            if !blobs::done(&tx, &f.blob_key)? && ctx.tus_upload.is_none() {
                return Err(DbError::Invalid(format!(
                    "upload guard of {} is gone; the blob may have been collected",
                    f.blob_key
                )));
            }
        }
        _ => {
            return Err(DbError::Invalid(format!(
                "file {} is inline only if its bytes come with it",
                f.id
            )))
        }
    }
    if let Some(done) = &ctx.s3_upload {
        let chosen = (f.id.as_str(), done.record.as_str());
        if !s3::complete_in(&tx, &f.account_id, &done.upload_id, chosen, f.created_at)? {
            return Err(DbError::Invalid(format!(
                "upload {} is no longer open",
                done.upload_id
            )));
        }
    }
    if let Some(id) = &ctx.tus_upload {
        let Some(creator) = shared::mark_complete(&tx, id, f.created_at)? else {
            return Err(DbError::Invalid(format!("upload {id} is no longer open")));
        };
        // The use its creator (a token) held since its creation: a token
        // revoked or expired since does not stop an upload it admitted.
        if upload_token_of(Some(&creator)).is_some() && !tokens::convert(&tx, &creator)? {
            return Err(DbError::Invalid(format!(
                "upload {id} holds no use of token {creator}"
            )));
        }
        by_stranger = shared::is_stranger(&tx, &creator)?;
    }
    tx.prepare_cached(&format!(
        "INSERT INTO files ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, NULL, NULL)"
    ))?
    .execute(params![
        f.id,
        f.account_id,
        f.name,
        f.folder,
        f.size,
        f.content_type,
        f.private,
        f.sha256,
        f.blob_key,
        f.created_at,
        f.expires_at,
        f.inline,
        metadata::to_json(&f.metadata),
        f.md5,
        f.attrs.stored()
    ])?;
    accounts::add_storage(&tx, &f.account_id, signed(f.size)?)?;
    accounts::add_upload(&tx, &f.account_id, &ctx.period)?;
    if by_stranger {
        shared::add_stranger_upload(&tx, &f.account_id, &ctx.period)?;
    }
    if let Some(key) = &ctx.idempotency_key {
        tx.prepare_cached(
            "INSERT OR REPLACE INTO idempotency_keys (account_id, key, file_id, created_at)
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![f.account_id, key, f.id, f.created_at])?;
    }
    let mut queued = outbox::enqueue(&tx, webhooks::FILE_CREATED, f, f.created_at)?;
    let mut replaced = Vec::new();
    if ctx.at_path == AtPath::Replace {
        let now = f.created_at;
        for old in paths::files_at(&tx, &f.account_id, f.folder.as_deref(), &f.name, now)? {
            if old.id != f.id {
                let due = now + REPLACED_KEPT_MS;
                queued |= remove_in(&tx, &old, (now, due), webhooks::FILE_DELETED)?;
                replaced.push(old.id);
            }
        }
    }
    tx.commit()?;
    let outcome = if replaced.is_empty() {
        CommitOutcome::Committed(f.clone())
    } else {
        CommitOutcome::Replaced(f.clone(), replaced)
    };
    Ok((outcome, queued))
}

/// The live file an idempotency key (used since `since`) points to.
fn replayed(
    conn: &Connection,
    account_id: &str,
    key: &str,
    since: i64,
    now: i64,
) -> Result<Option<FileRow>, DbError> {
    let file_id: Option<String> = conn
        .prepare_cached("SELECT file_id FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND created_at >= ?3")?
        .query_row(params![account_id, key, since],
            |r| r.get(0),
        )
        .optional()?;
    match file_id {
        Some(id) => get_live(conn, account_id, &id, now),
        None => Ok(None),
    }
}

/// A file of `account_id` that exists and has not expired at `now`.
fn get_live(
    conn: &Connection,
    account_id: &str,
    id: &str,
    now: i64,
) -> Result<Option<FileRow>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM files WHERE id = ?1 AND account_id = ?2
         AND (expires_at IS NULL OR expires_at > ?3)"
    ))?;
    Ok(stmt
        .query_row(params![id, account_id, now], from_row)
        .optional()?)
}

/// Up to `limit + 1` live files, newest first, strictly after `after`.
/// The SQL is chosen so that SQLite seeks straight to the cursor in the
/// matching index (`files_by_folder` or `files_by_account`), whatever the
/// page; a folder with its subfolders walks `files_by_account` and filters.
fn page(
    conn: &Connection,
    account_id: &str,
    filter: &ListFilter,
    after: Option<&PageAfter>,
    limit: u32,
    now: i64,
) -> Result<Vec<FileRow>, DbError> {
    let mut sql = format!("SELECT {COLUMNS} FROM files WHERE account_id = ?");
    let mut args = vec![Value::Text(account_id.to_string())];
    match &filter.folder {
        FolderFilter::All => {}
        FolderFilter::Root => sql.push_str(" AND folder IS NULL"),
        FolderFilter::Exactly(f) => {
            sql.push_str(" AND folder = ?");
            args.push(Value::Text(f.clone()));
        }
        FolderFilter::Under(f) => {
            // `f/...` sorts from "f/" up to (not including) "f0" ('/' + 1).
            sql.push_str(" AND (folder = ? OR (folder >= ? AND folder < ?))");
            args.push(Value::Text(f.clone()));
            args.push(Value::Text(format!("{f}/")));
            args.push(Value::Text(format!("{f}0")));
        }
    }
    // Keys are `[a-z0-9_-]` (checked before): quoted in the path, they
    // name one member; both are bound, never spliced.
    for (key, value) in &filter.metadata {
        sql.push_str(" AND json_extract(metadata, '$.\"' || ? || '\"') = ?");
        args.push(Value::Text(key.clone()));
        args.push(Value::Text(value.clone()));
    }
    if let Some(a) = after {
        sql.push_str(" AND (created_at, id) < (?, ?)");
        args.push(Value::Integer(a.created_at));
        args.push(Value::Text(a.id.clone()));
    }
    sql.push_str(
        " AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, id DESC LIMIT ?",
    );
    args.push(Value::Integer(now));
    args.push(Value::Integer(i64::from(limit) + 1));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args), from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Renames or moves a live file in one statement and queues `file.updated`
/// in the same transaction. None when absent.
fn update_live(
    conn: &mut Connection,
    account_id: &str,
    id: &str,
    change: &FileChange,
    now: i64,
) -> Result<Option<FileRow>, DbError> {
    let tx = write_tx(conn)?;
    let row = tx
        .prepare_cached(&format!(
            "UPDATE files SET name = coalesce(?1, name),
                 folder = CASE WHEN ?2 THEN ?3 ELSE folder END,
                 private = coalesce(?7, private)
             WHERE id = ?4 AND account_id = ?5 AND (expires_at IS NULL OR expires_at > ?6)
             RETURNING {COLUMNS}"
        ))?
        .query_row(
            params![
                change.name,
                change.moves,
                change.folder,
                id,
                account_id,
                now,
                change.private
            ],
            from_row,
        )
        .optional()?;
    let Some(row) = row else {
        return Ok(None);
    };
    outbox::enqueue(&tx, webhooks::FILE_UPDATED, &row, now)?;
    tx.commit()?;
    Ok(Some(row))
}

/// The smallest folder of `account_id` in `range` holding a live file: one
/// seek in `files_by_folder` (then, past expired rows, the next entries).
fn first_live_folder(
    conn: &Connection,
    account_id: &str,
    range: &FolderRange,
    now: i64,
) -> Result<Option<String>, DbError> {
    let sql = if range.inclusive {
        "SELECT folder FROM files WHERE account_id = ?1 AND folder >= ?2 AND folder < ?3
         AND (expires_at IS NULL OR expires_at > ?4) ORDER BY folder LIMIT 1"
    } else {
        "SELECT folder FROM files WHERE account_id = ?1 AND folder > ?2 AND folder < ?3
         AND (expires_at IS NULL OR expires_at > ?4) ORDER BY folder LIMIT 1"
    };
    Ok(conn
        .prepare_cached(sql)?
        .query_row(params![account_id, range.lo, range.hi, now], |r| r.get(0))
        .optional()?)
}

/// Removes a live file: its row goes, its bytes are given back and its blob is
/// queued for deletion (due now), all in one transaction. None when absent.
fn delete_live(
    conn: &mut Connection,
    account_id: &str,
    id: &str,
    now: i64,
) -> Result<Option<FileRow>, DbError> {
    let tx = write_tx(conn)?;
    let Some(row) = get_live(&tx, account_id, id, now)? else {
        return Ok(None);
    };
    // Deleted at once by the request: queued a lease ahead for the rest.
    remove_in(
        &tx,
        &row,
        (now, now + DELETION_LEASE_MS),
        webhooks::FILE_DELETED,
    )?;
    tx.commit()?;
    Ok(Some(row))
}

/// Removes the live files of `account_id` among `ids` in one write
/// transaction, each as `delete_live` does.
fn delete_many(
    conn: &mut Connection,
    account_id: &str,
    ids: &[String],
    now: i64,
) -> Result<Vec<FileRow>, DbError> {
    let tx = write_tx(conn)?;
    let mut gone = Vec::new();
    for id in ids {
        if let Some(row) = get_live(&tx, account_id, id, now)? {
            remove_in(
                &tx,
                &row,
                (now, now + DELETION_LEASE_MS),
                webhooks::FILE_DELETED,
            )?;
            gone.push(row);
        }
    }
    tx.commit()?;
    Ok(gone)
}

/// The live files of account `?1` in folder `?2` and below (`?3` = `?2/`,
/// `?4` = `?2` + '0', the byte after '/'), at `?5`.
///
/// One range of `files_by_folder`, [`F`, `F0`), then `F` itself or `F/…`
/// (an OR of the two ranges made SQLite scan the whole account's entries).
const IN_FOLDER: &str = "account_id = ?1 AND folder >= ?2 AND folder < ?4
     AND (folder = ?2 OR folder >= ?3) AND (expires_at IS NULL OR expires_at > ?5)";

/// Removes every live file of `account_id` in `folder` and below, in one
/// write transaction: one pass over the rows queues their blobs (or drops
/// their inline bytes), sums their bytes and writes their events (as
/// `outbox::enqueue` writes one, [`webhooks::EVENT_BATCH`] to an outbox
/// batch); then the account's bytes and one statement for the rows. Their
/// idempotency keys are left to expire: a key whose file is gone answers
/// nothing.
fn delete_folder(
    conn: &mut Connection,
    account_id: &str,
    folder: &str,
    now: i64,
) -> Result<u64, DbError> {
    let tx = write_tx(conn)?;
    let args = params![
        account_id,
        folder,
        format!("{folder}/"),
        format!("{folder}0"),
        now
    ];
    let subscriptions = outbox::subscriptions(&tx, account_id, webhooks::FILE_DELETED)?;
    let mut batch = outbox::Batch::new(&subscriptions, webhooks::FILE_DELETED, now);
    // Without a subscription, only what the blobs and the bytes need.
    let columns = if subscriptions.is_empty() {
        "size, blob_key, inline"
    } else {
        COLUMNS
    };
    let mut stmt = tx.prepare_cached(&format!("SELECT {columns} FROM files WHERE {IN_FOLDER}"))?;
    let mut rows = stmt.query(args)?;
    let mut bytes = 0i64;
    while let Some(r) = rows.next()? {
        let (size, blob_key, inline) = if subscriptions.is_empty() {
            (
                r.get::<_, u64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
            )
        } else {
            let row = from_row(r)?;
            batch.push(&tx, &row)?;
            (row.size, row.blob_key, row.inline)
        };
        bytes = bytes.saturating_add(signed(size)?);
        if inline {
            tx.prepare_cached("DELETE FROM inline_blobs WHERE blob_key = ?1")?
                .execute([&blob_key])?;
        } else {
            blobs::schedule(&tx, &blob_key, now)?;
        }
    }
    drop(rows);
    drop(stmt);
    batch.flush(&tx)?;
    accounts::add_storage(&tx, account_id, -bytes)?;
    let n = tx
        .prepare_cached(&format!("DELETE FROM files WHERE {IN_FOLDER}"))?
        .execute(args)?;
    tx.commit()?;
    Ok(u64::try_from(n).unwrap_or(u64::MAX))
}

/// Removes a file's row at `now`, gives back its bytes, frees its blob
/// (queued for deletion at `due`) and tells its subscribers (`event`:
/// deleted or expired); true when that queued an event.
fn remove_in(
    tx: &Connection,
    row: &FileRow,
    (now, due): (i64, i64),
    event: &str,
) -> Result<bool, DbError> {
    let queued = outbox::enqueue(tx, event, row, now)?;
    tx.prepare_cached("DELETE FROM files WHERE id = ?1")?
        .execute([&row.id])?;
    tx.prepare_cached("DELETE FROM idempotency_keys WHERE file_id = ?1")?
        .execute([&row.id])?;
    accounts::add_storage(tx, &row.account_id, -signed(row.size)?)?;
    if row.inline {
        tx.prepare_cached("DELETE FROM inline_blobs WHERE blob_key = ?1")?
            .execute([&row.blob_key])?;
    } else {
        blobs::schedule(tx, &row.blob_key, due)?;
    }
    Ok(queued)
}

/// Removes up to `max` files whose time has come, as `delete_live` does;
/// returns them.
fn reap_expired(conn: &mut Connection, now: i64, max: u32) -> Result<Vec<FileRow>, DbError> {
    let tx = write_tx(conn)?;
    let rows = {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM files WHERE expires_at IS NOT NULL AND expires_at <= ?1
             ORDER BY expires_at LIMIT ?2"
        ))?;
        let rows = stmt
            .query_map(params![now, max], from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows
    };
    for row in &rows {
        remove_in(&tx, row, (now, now), webhooks::FILE_EXPIRED)?;
    }
    tx.commit()?;
    Ok(rows)
}

#[async_trait]
impl FileRepo for SqliteStore {
    async fn commit_upload(
        &self,
        f: FileRow,
        inline: Option<Bytes>,
        limits: Quota,
        ctx: CommitContext,
    ) -> Result<CommitOutcome, DbError> {
        let (outcome, queued) = self
            .db
            .write_small(move |c| commit_upload(c, &f, inline.as_deref(), limits, &ctx))
            .await?;
        // Told once the batch is durable, not when the job ran (its events
        // are not there for the sender to find before the batch commits).
        if queued {
            self.queued_events.store(true, Ordering::Release);
        }
        Ok(outcome)
    }

    async fn file(&self, account_id: &str, id: &str, now: i64) -> Result<Option<FileRow>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db.lookup(move |c| get_live(c, &acc, &id, now)).await
    }

    /// A live file with its bytes when they are inline: what the CDN serves.
    async fn file_with_data(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db
            .lookup(move |c| {
                let mut stmt = c.prepare_cached(&format!(
                    "SELECT {COLUMNS}, (SELECT data FROM inline_blobs d WHERE d.blob_key = files.blob_key)
                     FROM files WHERE id = ?1 AND account_id = ?2 AND (expires_at IS NULL OR expires_at > ?3)"
                ))?;
                Ok(stmt
                    .query_row(params![id, acc, now], |r| {
                        Ok((from_row(r)?, r.get::<_, Option<Vec<u8>>>(DATA)?))
                    })
                    .optional()?)
            })
            .await
    }

    async fn replayed_file(
        &self,
        account_id: &str,
        key: &str,
        since: i64,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        let (acc, key) = (owned(account_id), owned(key));
        self.db
            .lookup(move |c| replayed(c, &acc, &key, since, now))
            .await
    }

    async fn page(
        &self,
        account_id: &str,
        filter: &ListFilter,
        after: Option<PageAfter>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let (acc, filter) = (owned(account_id), filter.clone());
        self.db
            .run(move |c| page(c, &acc, &filter, after.as_ref(), limit, now))
            .await
    }

    async fn files_at(
        &self,
        account_id: &str,
        folder: Option<&str>,
        name: &str,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        self.files_at_path(account_id, folder, name, now).await
    }

    async fn file_at_with_data(
        &self,
        account_id: &str,
        folder: Option<&str>,
        name: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError> {
        self.file_at_path_with_data(account_id, folder, name, now)
            .await
    }

    async fn list_paths(
        &self,
        account_id: &str,
        prefix: Option<&str>,
        start_after: Option<&str>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        self.paths_page(account_id, prefix, start_after, limit, now)
            .await
    }

    async fn update_file(
        &self,
        account_id: &str,
        id: &str,
        change: FileChange,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db
            .write(move |c| update_live(c, &acc, &id, &change, now))
            .await
    }

    async fn subfolders(
        &self,
        account_id: &str,
        parent: Option<&str>,
        after: Option<String>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<String>, DbError> {
        let (acc, parent) = (owned(account_id), parent.map(str::to_string));
        self.db
            .run(move |c| {
                // One transaction: every probe sees the same files.
                let tx = c.transaction()?;
                let names = subfolder_names(parent.as_deref(), after, limit, |r| {
                    first_live_folder(&tx, &acc, r, now)
                })?;
                tx.commit()?;
                Ok(names)
            })
            .await
    }

    async fn delete_file(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db.write(move |c| delete_live(c, &acc, &id, now)).await
    }

    async fn delete_files(
        &self,
        account_id: &str,
        ids: Vec<String>,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let acc = owned(account_id);
        self.db
            .write(move |c| delete_many(c, &acc, &ids, now))
            .await
    }

    async fn delete_folder(
        &self,
        account_id: &str,
        folder: &str,
        now: i64,
    ) -> Result<u64, DbError> {
        let (acc, folder) = (owned(account_id), owned(folder));
        self.db
            .write(move |c| delete_folder(c, &acc, &folder, now))
            .await
    }

    async fn reap_expired_files(&self, now: i64, max: u32) -> Result<Vec<FileRow>, DbError> {
        self.db.write(move |c| reap_expired(c, now, max)).await
    }

    /// Forgets idempotency keys older than `before`.
    async fn prune_idempotency(&self, before: i64) -> Result<usize, DbError> {
        self.db
            .write(move |c| {
                Ok(
                    c.prepare_cached("DELETE FROM idempotency_keys WHERE created_at < ?1")?
                        .execute([before])?,
                )
            })
            .await
    }

    async fn md5_pending(&self, after: &str, max: u32) -> Result<Vec<FileRow>, DbError> {
        SqliteStore::md5_pending(self, after, max).await
    }

    async fn md5_found(&self, id: &str, sha256: &str, md5: &str) -> Result<bool, DbError> {
        SqliteStore::md5_found(self, id, sha256, md5).await
    }
}
