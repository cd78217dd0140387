//! File rows on PostgreSQL: the commit of an upload with its quota checks
//! (under the account row's lock), lookups that hide expired files, keyset
//! pages, deletion and expiry; and the pieces the uploads share.

use super::{events, execute, query, query_one, query_opt, rows, signed, unsigned, DbError};
use crate::db::model::{
    CommitContext, CommitOutcome, FileRow, FolderFilter, PageAfter, RowWithData, DELETION_LEASE_MS,
};
use crate::domain::quota::{Ask, Holdings, Quota};
use crate::domain::webhooks;
use deadpool_postgres::{GenericClient, Transaction};
use tokio_postgres::types::ToSql;

/// Locks the account row for the rest of the transaction (every check of a
/// quota of this account, on any node, waits here); its stored bytes.
pub(crate) async fn lock_account(tx: &Transaction<'_>, account_id: &str) -> Result<u64, DbError> {
    let row = query_opt(
        tx,
        "SELECT storage_bytes FROM accounts WHERE id = $1 FOR UPDATE",
        &[&account_id],
    )
    .await?
    .ok_or_else(|| DbError::Invalid(format!("account {account_id} vanished")))?;
    Ok(unsigned(row.get(0)))
}

/// What incomplete, unexpired uploads of an account hold: (bytes, uploads).
pub(crate) async fn reserved<C: GenericClient>(
    c: &C,
    account_id: &str,
    now: i64,
    except: Option<&str>,
) -> Result<(u64, u64), DbError> {
    let row = query_one(
        c,
        "SELECT COALESCE(SUM(length), 0)::BIGINT, COUNT(*) FROM tus_uploads
         WHERE account_id = $1 AND completed_at IS NULL AND expires_at > $2
           AND id IS DISTINCT FROM $3",
        &[&account_id, &now, &except],
    )
    .await?;
    Ok((unsigned(row.get(0)), unsigned(row.get(1))))
}

/// Uploads committed in the period.
pub(crate) async fn upload_count<C: GenericClient>(
    c: &C,
    account_id: &str,
    period: &str,
) -> Result<u64, DbError> {
    Ok(query_opt(
        c,
        "SELECT upload_count FROM usage_periods WHERE account_id = $1 AND period = $2",
        &[&account_id, &period],
    )
    .await?
    .map(|r| unsigned(r.get(0)))
    .unwrap_or(0))
}

/// Queues a blob for deletion, due at `due` (or earlier if queued so).
pub(crate) async fn schedule<C: GenericClient>(c: &C, key: &str, due: i64) -> Result<(), DbError> {
    schedule_by(c, key, due, None).await
}

/// Queues a blob for deletion as [`schedule`] does; with an `owner`, the
/// node whose request is deleting it now: should that node die first, its
/// death makes the blob due at once, as it does its upload guards.
async fn schedule_by<C: GenericClient>(
    c: &C,
    key: &str,
    due: i64,
    owner: Option<i32>,
) -> Result<(), DbError> {
    execute(
        c,
        "INSERT INTO blob_deletions (blob_key, due_at, owner) VALUES ($1, $2, $3)
         ON CONFLICT (blob_key)
         DO UPDATE SET due_at = LEAST(blob_deletions.due_at, $2), owner = $3",
        &[&key, &due, &owner],
    )
    .await?;
    Ok(())
}

/// Forgets a queued blob; false when it was not queued.
pub(crate) async fn unqueue<C: GenericClient>(c: &C, key: &str) -> Result<bool, DbError> {
    Ok(execute(c, "DELETE FROM blob_deletions WHERE blob_key = $1", &[&key]).await? == 1)
}

pub(crate) async fn commit_upload(
    tx: &Transaction<'_>,
    f: &FileRow,
    inline: Option<&[u8]>,
    limits: Quota,
    ctx: &CommitContext,
) -> Result<CommitOutcome, DbError> {
    // The lock first: a commit with the same idempotency key on another node
    // has then committed (and is seen) or not started.
    let stored = lock_account(tx, &f.account_id).await?;
    if let Some(key) = &ctx.idempotency_key {
        if let Some(existing) =
            replayed(tx, &f.account_id, key, ctx.idempotency_since, f.created_at).await?
        {
            return Ok(CommitOutcome::Replayed(existing));
        }
    }
    let (reserved, pending) =
        reserved(tx, &f.account_id, f.created_at, ctx.tus_upload.as_deref()).await?;
    // A resumable upload was admitted at its creation and holds its room.
    let admitted = ctx.tus_upload.is_some();
    if !admitted {
        let held = Holdings {
            used: stored.saturating_add(reserved),
            uploads: upload_count(tx, &f.account_id, &ctx.period)
                .await?
                .saturating_add(pending),
            open: pending,
        };
        if let Err(refusal) = limits.admit(held, Ask::file(f.size)) {
            return Ok(CommitOutcome::Refused(refusal));
        }
    }
    match (f.inline, inline) {
        (true, Some(data)) => {
            execute(
                tx,
                "INSERT INTO inline_blobs (blob_key, data) VALUES ($1, $2)",
                &[&f.blob_key, &data],
            )
            .await?;
        }
        (false, None) => {
            // A resumable upload's row guards its blob instead. An upload
            // guard made due (its node looked dead) is no guard any more.
            let released = match ctx.tus_upload {
                Some(_) => unqueue(tx, &f.blob_key).await?,
                None => {
                    execute(
                        tx,
                        "DELETE FROM blob_deletions WHERE blob_key = $1 AND owner IS NOT NULL",
                        &[&f.blob_key],
                    )
                    .await?
                        == 1
                }
            };
            if !released && ctx.tus_upload.is_none() {
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
    if let Some(id) = &ctx.tus_upload {
        if !super::uploads::mark_complete(tx, id, f.created_at).await? {
            return Err(DbError::Invalid(format!("upload {id} is no longer open")));
        }
    }
    let size = signed(f.size)?;
    execute(
        tx,
        &format!(
            "INSERT INTO files ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            rows::FILE
        ),
        &[
            &f.id,
            &f.account_id,
            &f.name,
            &f.folder,
            &size,
            &f.content_type,
            &f.private,
            &f.sha256,
            &f.blob_key,
            &f.created_at,
            &f.expires_at,
            &f.inline,
        ],
    )
    .await?;
    execute(
        tx,
        "UPDATE accounts SET storage_bytes = storage_bytes + $2 WHERE id = $1",
        &[&f.account_id, &size],
    )
    .await?;
    execute(
        tx,
        "INSERT INTO usage_periods (account_id, period, upload_count) VALUES ($1, $2, 1)
         ON CONFLICT (account_id, period)
         DO UPDATE SET upload_count = usage_periods.upload_count + 1",
        &[&f.account_id, &ctx.period],
    )
    .await?;
    if let Some(key) = &ctx.idempotency_key {
        execute(
            tx,
            "INSERT INTO idempotency_keys (account_id, key, file_id, created_at)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (account_id, key)
             DO UPDATE SET file_id = EXCLUDED.file_id, created_at = EXCLUDED.created_at",
            &[&f.account_id, key, &f.id, &f.created_at],
        )
        .await?;
    }
    events::enqueue(tx, webhooks::FILE_CREATED, f, f.created_at).await?;
    Ok(CommitOutcome::Committed(f.clone()))
}

/// The live file an idempotency key (used since `since`) points to.
pub(crate) async fn replayed<C: GenericClient>(
    c: &C,
    account_id: &str,
    key: &str,
    since: i64,
    now: i64,
) -> Result<Option<FileRow>, DbError> {
    let sql = format!(
        "SELECT {} FROM files WHERE account_id = $1 AND id = (
             SELECT file_id FROM idempotency_keys
             WHERE account_id = $1 AND key = $2 AND created_at >= $3)
         AND (expires_at IS NULL OR expires_at > $4)",
        rows::FILE
    );
    Ok(query_opt(c, &sql, &[&account_id, &key, &since, &now])
        .await?
        .map(|r| rows::file(&r)))
}

pub(crate) async fn get_live<C: GenericClient>(
    c: &C,
    account_id: &str,
    id: &str,
    now: i64,
) -> Result<Option<FileRow>, DbError> {
    let sql = format!(
        "SELECT {} FROM files WHERE id = $1 AND account_id = $2
         AND (expires_at IS NULL OR expires_at > $3)",
        rows::FILE
    );
    Ok(query_opt(c, &sql, &[&id, &account_id, &now])
        .await?
        .map(|r| rows::file(&r)))
}

pub(crate) async fn get_live_with_data<C: GenericClient>(
    c: &C,
    account_id: &str,
    id: &str,
    now: i64,
) -> Result<Option<RowWithData>, DbError> {
    let sql = format!(
        "SELECT {}, (SELECT data FROM inline_blobs d WHERE d.blob_key = files.blob_key)
         FROM files WHERE id = $1 AND account_id = $2
         AND (expires_at IS NULL OR expires_at > $3)",
        rows::FILE
    );
    Ok(query_opt(c, &sql, &[&id, &account_id, &now])
        .await?
        .map(|r| (rows::file(&r), r.get::<_, Option<Vec<u8>>>(12))))
}

/// Up to `limit + 1` live files, newest first, strictly after `after`.
pub(crate) async fn page<C: GenericClient>(
    c: &C,
    account_id: &str,
    folder: &FolderFilter,
    after: Option<&PageAfter>,
    limit: u32,
    now: i64,
) -> Result<Vec<FileRow>, DbError> {
    let mut sql = format!("SELECT {} FROM files WHERE account_id = $1", rows::FILE);
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(account_id.to_string())];
    let arg = |args: &mut Vec<Box<dyn ToSql + Sync + Send>>, v: Box<dyn ToSql + Sync + Send>| {
        args.push(v);
        format!("${}", args.len())
    };
    match folder {
        FolderFilter::All => {}
        FolderFilter::Exactly(f) => {
            let p = arg(&mut args, Box::new(f.clone()));
            sql.push_str(&format!(" AND folder = {p}"));
        }
        FolderFilter::Under(f) => {
            // `f/...` sorts from "f/" up to (not including) "f0" ('/' + 1),
            // bytewise: the column is COLLATE "C".
            let p = arg(&mut args, Box::new(f.clone()));
            let lo = arg(&mut args, Box::new(format!("{f}/")));
            let hi = arg(&mut args, Box::new(format!("{f}0")));
            sql.push_str(&format!(
                " AND (folder = {p} OR (folder >= {lo} AND folder < {hi}))"
            ));
        }
    }
    if let Some(a) = after {
        let t = arg(&mut args, Box::new(a.created_at));
        let i = arg(&mut args, Box::new(a.id.clone()));
        sql.push_str(&format!(" AND (created_at, id) < ({t}, {i})"));
    }
    let n = arg(&mut args, Box::new(now));
    let l = arg(&mut args, Box::new(i64::from(limit) + 1));
    sql.push_str(&format!(
        " AND (expires_at IS NULL OR expires_at > {n}) ORDER BY created_at DESC, id DESC LIMIT {l}"
    ));
    let params: Vec<&(dyn ToSql + Sync)> =
        args.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect();
    Ok(query(c, &sql, &params)
        .await?
        .iter()
        .map(rows::file)
        .collect())
}

/// Removes a live file in one statement (a second node deleting it at
/// once waits on the row, then finds it gone), then gives back its bytes.
pub(crate) async fn delete_live(
    tx: &Transaction<'_>,
    account_id: &str,
    id: &str,
    now: i64,
    node: i32,
) -> Result<Option<FileRow>, DbError> {
    let sql = format!(
        "DELETE FROM files WHERE id = $1 AND account_id = $2
         AND (expires_at IS NULL OR expires_at > $3) RETURNING {}",
        rows::FILE
    );
    let Some(row) = query_opt(tx, &sql, &[&id, &account_id, &now]).await? else {
        return Ok(None);
    };
    let row = rows::file(&row);
    // Deleted at once by the request: queued a lease ahead for the rest,
    // or at once should this node die before.
    let due = now + DELETION_LEASE_MS;
    after_removal(tx, &row, (now, due, Some(node)), webhooks::FILE_DELETED).await?;
    Ok(Some(row))
}

/// What follows a file row's deletion at `now`: its keys, bytes and blob
/// (queued for deletion at `due`, by node `owner` if one deletes it now),
/// and its subscribers told (`event`: deleted or expired).
async fn after_removal(
    tx: &Transaction<'_>,
    row: &FileRow,
    (now, due, owner): (i64, i64, Option<i32>),
    event: &str,
) -> Result<(), DbError> {
    events::enqueue(tx, event, row, now).await?;
    execute(
        tx,
        "DELETE FROM idempotency_keys WHERE file_id = $1",
        &[&row.id],
    )
    .await?;
    execute(
        tx,
        "UPDATE accounts SET storage_bytes = GREATEST(0, storage_bytes - $2) WHERE id = $1",
        &[&row.account_id, &signed(row.size)?],
    )
    .await?;
    if row.inline {
        execute(
            tx,
            "DELETE FROM inline_blobs WHERE blob_key = $1",
            &[&row.blob_key],
        )
        .await?;
    } else {
        schedule_by(tx, &row.blob_key, due, owner).await?;
    }
    Ok(())
}

/// Removes up to `max` expired files. Rows another node is reaping are
/// skipped (`SKIP LOCKED`), so nodes reap at once without waiting or
/// double-counting; accounts are updated in id order (no deadlock).
pub(crate) async fn reap_expired(
    tx: &Transaction<'_>,
    now: i64,
    max: u32,
) -> Result<Vec<FileRow>, DbError> {
    let sql = format!(
        "DELETE FROM files WHERE id IN (
             SELECT id FROM files WHERE expires_at IS NOT NULL AND expires_at <= $1
             ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING {}",
        rows::FILE
    );
    let mut rows: Vec<FileRow> = query(tx, &sql, &[&now, &i64::from(max)])
        .await?
        .iter()
        .map(rows::file)
        .collect();
    rows.sort_by(|a, b| (&a.account_id, a.expires_at).cmp(&(&b.account_id, b.expires_at)));
    for row in &rows {
        after_removal(tx, row, (now, now, None), webhooks::FILE_EXPIRED).await?;
    }
    rows.sort_by_key(|r| r.expires_at);
    Ok(rows)
}
