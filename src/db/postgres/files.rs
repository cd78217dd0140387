//! File rows on PostgreSQL ([`FileRepo`]): the commit of an upload (which
//! way it goes; every way ends in `filestore_commit`, see `commit`), the
//! judging of a resumable upload's and a stranger's under the account row's
//! lock, lookups that hide expired files, keyset pages, deletion and
//! expiry, idempotency keys.

use super::account_lock::lock_account;
use super::accounts::commitments;
use super::blobs::{schedule_by, unqueue};
use super::commit::{call, commit_alone, outcome_of, Columns, How, Pending};
use super::outbox::enqueue;
use super::s3::complete_in as s3_complete;
use super::strangers::{is_stranger, strangers};
use super::tokens;
use super::uploads::mark_complete;
use super::{execute, has_nul, query, query_opt, rows, signed, DbError, PgStore};
use crate::db::model::{
    CommitContext, CommitOutcome, FileChange, FileRow, FolderFilter, FolderRange, ListFilter,
    PageAfter, RowWithData, SeekStep, SubfolderSeek, DELETION_LEASE_MS,
};
use crate::db::store::FileRepo;
use crate::domain::filepath::AtPath;
use crate::domain::ids::upload_token_of;
use crate::domain::quota::{Ask, Quota};
use crate::domain::webhooks;
use async_trait::async_trait;
use bytes::Bytes;
use deadpool_postgres::{GenericClient, Transaction};
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use tokio_postgres::types::ToSql;

/// Commits an upload's file judged here, under the account row's lock (a
/// resumable upload's, a stranger's): the lock first (see
/// [`lock_account`]), then an idempotent replay, the quota, the upload
/// token's use, the upload's guard, the upload marked complete; then the
/// rows every commit writes (the file, its inline bytes, the counters, the
/// event) by `filestore_commit`, as the function judging nothing
/// (`How::admitted`); then the idempotency key.
async fn commit(
    tx: &Transaction<'_>,
    f: &FileRow,
    inline: Option<&[u8]>,
    limits: Quota,
    ctx: &CommitContext,
) -> Result<CommitOutcome, DbError> {
    // A refusal for the path (`filestore_commit`'s, after the writes
    // below) takes back what they wrote.
    let at_path = ctx.at_path != AtPath::Add;
    if at_path {
        tx.batch_execute("SAVEPOINT judged_here").await?;
    }
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
    // A resumable upload was admitted at its creation and holds its room;
    // so was an S3 multipart upload (its creation, then each part's bytes).
    let admitted = ctx.tus_upload.is_some() || ctx.s3_upload.is_some();
    if !admitted {
        let held = commitments(tx, &f.account_id, &ctx.period, f.created_at, None)
            .await?
            .holdings(stored);
        let ask = Ask::file(f.size);
        let admitted = match ctx.share {
            Some(share) => {
                let theirs = strangers(tx, &f.account_id, &ctx.period, f.created_at).await?;
                limits.admit_stranger(share, held, theirs, ask)
            }
            None => limits.admit(held, ask),
        };
        if let Err(refusal) = admitted {
            return Ok(CommitOutcome::Refused(refusal));
        }
    }
    // Whose upload it is: a stranger's counts in their share of the period's
    // uploads (a resumable upload's is its creator's).
    let mut by_stranger = ctx.share.is_some() && !admitted;
    // `in_tx!` commits whatever an Ok outcome leaves written, a refusal's
    // too: so the replay and the quota (reads only) come first, and the
    // token's use is the first write; when it finds none left, nothing is
    // written at all. A resumable upload's use (its creator's) moves from `uploads_open`
    // after its row is marked complete, below (the lock order: upload row,
    // then token).
    if let (Some(token), None) = (&ctx.token, &ctx.tus_upload) {
        if !tokens::take(tx, token).await? {
            return Ok(CommitOutcome::TokenSpent);
        }
    }
    // An inline file's bytes go in with its row (`filestore_commit`).
    if !f.inline {
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
    if let Some(done) = &ctx.s3_upload {
        let chosen = (f.id.as_str(), done.record.as_str());
        if !s3_complete(tx, &f.account_id, &done.upload_id, chosen, f.created_at).await? {
            return Err(DbError::Invalid(format!(
                "upload {} is no longer open",
                done.upload_id
            )));
        }
    }
    if let Some(id) = &ctx.tus_upload {
        let Some(creator) = mark_complete(tx, id, f.created_at).await? else {
            return Err(DbError::Invalid(format!("upload {id} is no longer open")));
        };
        // The use its creator (a token) held since its creation: a token
        // revoked or expired since does not stop an upload it admitted. An
        // Err rolls back.
        if let Some(token) = upload_token_of(Some(&creator)) {
            if !tokens::convert(tx, token).await? {
                return Err(DbError::Invalid(format!(
                    "upload {id} holds no use of token {token}"
                )));
            }
        }
        by_stranger = is_stranger(tx, &creator).await?;
    }
    // The rest as every commit writes it: judged here, so admitted.
    let mut cols = Columns::default();
    cols.push(f, inline, limits, None)?;
    cols.at_path(ctx.at_path);
    cols.end_account(&f.account_id);
    let how = How {
        admitted: true,
        strangers: by_stranger,
        ..How::default()
    };
    let out = call(tx, &ctx.period, &cols, how).await?;
    let Some(row) = out.first() else {
        return Err(DbError::Invalid(format!(
            "the commit of {} gave no outcome",
            f.id
        )));
    };
    // Admitted: only an error of its own, which rolls back, or the path's
    // refusal can stop it.
    let (outcome, _) = outcome_of(row, f, limits)?;
    if outcome == CommitOutcome::PathTaken {
        tx.batch_execute("ROLLBACK TO SAVEPOINT judged_here")
            .await?;
        return Ok(outcome);
    }
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
    Ok(outcome)
}

/// The live file an idempotency key (used since `since`) points to.
async fn replayed<C: GenericClient>(
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

/// Renames or moves a live file in one statement and queues `file.updated`
/// in the same transaction. None when absent.
async fn update_live(
    tx: &Transaction<'_>,
    account_id: &str,
    id: &str,
    change: &FileChange,
    now: i64,
) -> Result<Option<FileRow>, DbError> {
    let sql = format!(
        "UPDATE files SET name = coalesce($1, name),
             folder = CASE WHEN $2::BOOLEAN THEN $3 ELSE folder END,
             private = coalesce($7, private)
         WHERE id = $4 AND account_id = $5 AND (expires_at IS NULL OR expires_at > $6)
         RETURNING {}",
        rows::FILE
    );
    let Some(row) = query_opt(
        tx,
        &sql,
        &[
            &change.name,
            &change.moves,
            &change.folder,
            &id,
            &account_id,
            &now,
            &change.private,
        ],
    )
    .await?
    else {
        return Ok(None);
    };
    let row = rows::file(&row);
    enqueue(tx, webhooks::FILE_UPDATED, &row, now).await?;
    Ok(Some(row))
}

/// Removes a live file in one statement (a second node deleting it at
/// once waits on the row, then finds it gone), then gives back its bytes.
async fn delete_live(
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
    enqueue(tx, event, row, now).await?;
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

/// The smallest folder of `account_id` in `range` holding a live file: one
/// seek in `files_by_folder` (bytewise: the column is COLLATE "C"), then,
/// past expired rows, the next entries.
async fn first_live_folder<C: GenericClient>(
    c: &C,
    account_id: &str,
    range: &FolderRange,
    now: i64,
) -> Result<Option<String>, DbError> {
    let sql = if range.inclusive {
        "SELECT folder FROM files WHERE account_id = $1 AND folder >= $2 AND folder < $3
         AND (expires_at IS NULL OR expires_at > $4) ORDER BY folder LIMIT 1"
    } else {
        "SELECT folder FROM files WHERE account_id = $1 AND folder > $2 AND folder < $3
         AND (expires_at IS NULL OR expires_at > $4) ORDER BY folder LIMIT 1"
    };
    let row = query_opt(c, sql, &[&account_id, &range.lo, &range.hi, &now]).await?;
    Ok(row.map(|r| r.get(0)))
}

/// Probe answers fetched ahead, by range: exact answers within the page's
/// one snapshot, so the seek takes them as it would its own probes.
type Ahead = std::collections::HashMap<FolderRange, Option<String>>;

/// One statement for the common path of up to `steps` names after `name`:
/// for each name `s`, the two probes a seek after `s` makes first (in
/// (`P/s`, `P/s/`), then from `P/s0`), the next name being the segment
/// found. A page's seeks then cost a round trip or two, not one per probe
/// (docs/decisions.md, "Folder listing"); a probe off that path (a name
/// extending another with `-` or `.`) is asked on its own.
async fn fetch_ahead(
    tx: &Transaction<'_>,
    account_id: &str,
    parent: Option<&str>,
    name: &str,
    steps: i32,
    now: i64,
    ahead: &mut Ahead,
) -> Result<(), DbError> {
    const LIVE: &str = "(expires_at IS NULL OR expires_at > $5)";
    let probe_a = |s: &str| {
        format!(
            "(SELECT folder FROM files WHERE account_id = $1 AND folder > ($3 || {s}) COLLATE \"C\"
              AND folder < ($3 || {s} || '/') COLLATE \"C\" AND {LIVE} ORDER BY folder LIMIT 1)"
        )
    };
    let probe_b = |s: &str| {
        format!(
            "(SELECT folder FROM files WHERE account_id = $1 AND folder >= ($3 || {s} || '0') COLLATE \"C\"
              AND folder < $4::TEXT COLLATE \"C\" AND {LIVE} ORDER BY folder LIMIT 1)"
        )
    };
    let sql = format!(
        "WITH RECURSIVE ahead(n, name, a, b) AS (
             SELECT 0, $2::TEXT COLLATE \"C\", {a0}, {b0}
             UNION ALL
             SELECT ahead.n + 1, x.next, {a1}, {b1}
             FROM ahead CROSS JOIN LATERAL (SELECT split_part(
                 substr(coalesce(ahead.a, ahead.b), length($3::TEXT) + 1), '/', 1) AS next) x
             WHERE coalesce(ahead.a, ahead.b) IS NOT NULL AND ahead.n < $6)
         SELECT name, a, b FROM ahead",
        a0 = probe_a("$2::TEXT"),
        b0 = probe_b("$2::TEXT"),
        a1 = probe_a("x.next"),
        b1 = probe_b("x.next"),
    );
    let seek = SubfolderSeek::new(parent, None);
    let (prefix, hi) = seek.bounds();
    for row in query(tx, &sql, &[&account_id, &name, &prefix, &hi, &now, &steps]).await? {
        let (name, a, b): (String, Option<String>, Option<String>) =
            (row.get(0), row.get(1), row.get(2));
        let mut seek = SubfolderSeek::new(parent, Some(name));
        let first = seek.start();
        if let SeekStep::Probe(second) = seek.answer(None) {
            ahead.insert(second, b);
        }
        ahead.insert(first, a);
    }
    Ok(())
}

/// [`crate::db::model::subfolder_names`] on one transaction (REPEATABLE
/// READ: every probe sees the same files), the probes of the common path
/// fetched ahead ([`fetch_ahead`]).
async fn subfolders_in(
    tx: &Transaction<'_>,
    account_id: &str,
    parent: Option<&str>,
    mut after: Option<String>,
    limit: u32,
    now: i64,
) -> Result<Vec<String>, DbError> {
    execute(
        tx,
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY",
        &[],
    )
    .await?;
    let mut ahead = Ahead::new();
    let mut names = Vec::new();
    while names.len() <= limit as usize {
        let mut seek = SubfolderSeek::new(parent, after.clone());
        let mut range = seek.start();
        let name = loop {
            if !ahead.contains_key(&range) {
                if let (Some(s), false) = (&after, range.inclusive) {
                    // A seek's first probe: the rest of the page ahead.
                    let steps = i32::try_from(limit as usize + 1 - names.len()).unwrap_or(i32::MAX);
                    fetch_ahead(tx, account_id, parent, s, steps, now, &mut ahead).await?;
                }
            }
            let first = match ahead.get(&range) {
                Some(found) => found.clone(),
                None => first_live_folder(tx, account_id, &range, now).await?,
            };
            match seek.answer(first) {
                SeekStep::Probe(r) => range = r,
                SeekStep::Found(n) => break Some(n),
                SeekStep::End => break None,
            }
        };
        let Some(name) = name else { break };
        after = Some(name.clone());
        names.push(name);
    }
    Ok(names)
}

#[async_trait]
impl FileRepo for PgStore {
    async fn commit_upload(
        &self,
        f: FileRow,
        inline: Option<Bytes>,
        limits: Quota,
        ctx: CommitContext,
    ) -> Result<CommitOutcome, DbError> {
        if ctx.tus_upload.is_some() || ctx.share.is_some() || ctx.s3_upload.is_some() {
            // A resumable upload's (its row and its token's use) and a
            // stranger's (its share) are judged here under the account
            // row's lock, then written by `filestore_commit` as admitted
            // (the function judges no share and no reservation).
            let (_turn, deadline) = self.turn(&f.account_id).await?;
            let out = in_tx!(self, deadline, |tx| commit(
                &tx,
                &f,
                inline.as_deref(),
                limits,
                &ctx
            )
            .await);
            self.queued_events.store(true, Ordering::Release);
            return out;
        }
        // An upload with a path rule goes alone: what it finds at its path
        // is what is committed, never an upload of the same statement.
        let committed = if ctx.idempotency_key.is_none() && ctx.at_path == AtPath::Add {
            self.commit_grouped(Pending {
                f,
                inline,
                limits,
                ctx,
            })
            .await?
        } else {
            commit_alone(self, &f, inline.as_deref(), limits, &ctx).await?
        };
        if let (CommitOutcome::Committed(_) | CommitOutcome::Replaced(..), true) = &committed {
            self.queued_events.store(true, Ordering::Release);
        }
        Ok(committed.0)
    }

    async fn file(&self, account_id: &str, id: &str, now: i64) -> Result<Option<FileRow>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM files WHERE id = $1 AND account_id = $2
                 AND (expires_at IS NULL OR expires_at > $3)",
                rows::FILE
            );
            Ok(query_opt(c, &sql, &[&id, &account_id, &now])
                .await?
                .map(|r| rows::file(&r)))
        })
    }

    async fn file_with_data(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {}, (SELECT data FROM inline_blobs d WHERE d.blob_key = files.blob_key)
                 FROM files WHERE id = $1 AND account_id = $2
                 AND (expires_at IS NULL OR expires_at > $3)",
                rows::FILE
            );
            Ok(query_opt(c, &sql, &[&id, &account_id, &now])
                .await?
                .map(|r| (rows::file(&r), r.get::<_, Option<Vec<u8>>>(rows::FILE_DATA))))
        })
    }

    async fn replayed_file(
        &self,
        account_id: &str,
        key: &str,
        since: i64,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        if has_nul(&[account_id, key]) {
            return Ok(None);
        }
        on_conn!(self, |c| replayed(c, account_id, key, since, now).await)
    }

    /// Up to `limit + 1` live files, newest first, strictly after `after`.
    async fn page(
        &self,
        account_id: &str,
        filter: &ListFilter,
        after: Option<PageAfter>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        // A NUL matches nothing stored (and the server refuses it).
        if filter
            .metadata
            .iter()
            .any(|(k, v)| has_nul(&[k.as_str(), v.as_str()]))
        {
            return Ok(Vec::new());
        }
        on_conn!(self, |c| {
            let mut sql = format!("SELECT {} FROM files WHERE account_id = $1", rows::FILE);
            let mut args: Vec<Box<dyn ToSql + Sync + Send>> =
                vec![Box::new(account_id.to_string())];
            let arg = |args: &mut Vec<Box<dyn ToSql + Sync + Send>>,
                       v: Box<dyn ToSql + Sync + Send>| {
                args.push(v);
                format!("${}", args.len())
            };
            match &filter.folder {
                FolderFilter::All => {}
                FolderFilter::Root => sql.push_str(" AND folder IS NULL"),
                FolderFilter::Exactly(f) => {
                    let p = arg(&mut args, Box::new(f.clone()));
                    let _ = write!(sql, " AND folder = {p}");
                }
                FolderFilter::Under(f) => {
                    // `f/...` sorts from "f/" up to (not including) "f0" ('/' + 1),
                    // bytewise: the column is COLLATE "C".
                    let p = arg(&mut args, Box::new(f.clone()));
                    let lo = arg(&mut args, Box::new(format!("{f}/")));
                    let hi = arg(&mut args, Box::new(format!("{f}0")));
                    let _ = write!(
                        sql,
                        " AND (folder = {p} OR (folder >= {lo} AND folder < {hi}))"
                    );
                }
            }
            // The column is TEXT, read as `json` (no NUL can be stored in a
            // value: `domain::metadata::check`).
            for (key, value) in &filter.metadata {
                let k = arg(&mut args, Box::new(key.clone()));
                let v = arg(&mut args, Box::new(value.clone()));
                let _ = write!(sql, " AND (metadata::json ->> {k}) = {v}");
            }
            if let Some(a) = &after {
                let t = arg(&mut args, Box::new(a.created_at));
                let i = arg(&mut args, Box::new(a.id.clone()));
                let _ = write!(sql, " AND (created_at, id) < ({t}, {i})");
            }
            let n = arg(&mut args, Box::new(now));
            let l = arg(&mut args, Box::new(i64::from(limit) + 1));
            let _ = write!(
                sql,
                " AND (expires_at IS NULL OR expires_at > {n}) \
                 ORDER BY created_at DESC, id DESC LIMIT {l}"
            );
            let params: Vec<&(dyn ToSql + Sync)> =
                args.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect();
            Ok(query(c, &sql, &params)
                .await?
                .iter()
                .map(rows::file)
                .collect())
        })
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
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        in_tx!(self, |tx| update_live(&tx, account_id, id, &change, now)
            .await)
    }

    async fn subfolders(
        &self,
        account_id: &str,
        parent: Option<&str>,
        after: Option<String>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<String>, DbError> {
        in_tx!(self, |tx| subfolders_in(
            &tx, account_id, parent, after, limit, now
        )
        .await)
    }

    async fn delete_file(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        let (_turn, deadline) = self.turn(account_id).await?;
        in_tx!(self, deadline, |tx| delete_live(
            &tx, account_id, id, now, self.node
        )
        .await)
    }

    /// One statement removes them all, locked in id order (so two bulk
    /// deletes never deadlock; rows another request is deleting are waited
    /// on, then found gone); then what follows each, in id order.
    async fn delete_files(
        &self,
        account_id: &str,
        ids: Vec<String>,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let ids: Vec<String> = ids.into_iter().filter(|id| !has_nul(&[id])).collect();
        if has_nul(&[account_id]) || ids.is_empty() {
            return Ok(Vec::new());
        }
        let node = self.node;
        let (_turn, deadline) = self.turn(account_id).await?;
        in_tx!(self, deadline, |tx| {
            let sql = format!(
                "DELETE FROM files WHERE id IN (
                     SELECT id FROM files WHERE account_id = $1 AND id = ANY($2)
                     AND (expires_at IS NULL OR expires_at > $3) ORDER BY id FOR UPDATE)
                 RETURNING {}",
                rows::FILE
            );
            let mut gone: Vec<FileRow> = query(&tx, &sql, &[&account_id, &ids, &now])
                .await?
                .iter()
                .map(rows::file)
                .collect();
            gone.sort_by(|a, b| a.id.cmp(&b.id));
            let due = now + DELETION_LEASE_MS;
            for row in &gone {
                after_removal(&tx, row, (now, due, Some(node)), webhooks::FILE_DELETED).await?;
            }
            Ok(gone)
        })
    }

    /// One statement: the rows deleted (locked in id order, then found by
    /// their key: a hash join would read the whole table), and from what
    /// they were, the events (the file rows as JSON, as `enqueue` writes
    /// one, `EVENT_BATCH` to an outbox batch), the blob queue (due now, no
    /// owner: the collector's), inline bytes and the account's bytes. Their
    /// idempotency keys are left to expire: a key whose file is gone
    /// answers nothing.
    async fn delete_folder(
        &self,
        account_id: &str,
        folder: &str,
        now: i64,
    ) -> Result<u64, DbError> {
        if has_nul(&[account_id, folder]) {
            return Ok(0);
        }
        let (under, after) = (format!("{folder}/"), format!("{folder}0"));
        let sql = format!(
            "WITH gone AS (
                 DELETE FROM files WHERE id = ANY(ARRAY(
                     SELECT id FROM files WHERE account_id = $1
                     AND folder >= $2 AND folder < $4 AND (folder = $2 OR folder >= $3)
                     AND (expires_at IS NULL OR expires_at > $5) ORDER BY id FOR UPDATE))
                 RETURNING *),
             events AS (
                 INSERT INTO webhook_event_batches (webhook_id, type, data, events, created_at)
                 SELECT w.id, '{event}',
                     json_agg(json_build_object('id', g.id, 'account_id', g.account_id, 'name', g.name,
                         'folder', g.folder, 'size', g.size, 'content_type', g.content_type,
                         'private', g.private, 'sha256', g.sha256, 'blob_key', g.blob_key,
                         'created_at', g.created_at, 'expires_at', g.expires_at,
                         'inline', g.inline,
                         'metadata', (CASE WHEN g.metadata = '' THEN '{{}}' ELSE g.metadata END)::json,
                         'attrs', coalesce(g.attrs, '{{}}')::json
                     ))::TEXT, count(*), $5
                 FROM (SELECT *, (row_number() OVER () - 1) / {batch} AS batch FROM gone) g
                 JOIN webhooks w ON w.account_id = g.account_id
                     AND '{event}' = ANY(string_to_array(w.events, ','))
                 GROUP BY w.id, g.batch),
             queued AS (
                 INSERT INTO blob_deletions (blob_key, due_at, owner)
                 SELECT blob_key, $5::BIGINT, NULL::INTEGER FROM gone WHERE NOT inline
                 ON CONFLICT (blob_key)
                 DO UPDATE SET due_at = LEAST(blob_deletions.due_at, EXCLUDED.due_at), owner = NULL),
             inline AS (
                 DELETE FROM inline_blobs WHERE blob_key IN (SELECT blob_key FROM gone WHERE inline)),
             bytes AS (
                 UPDATE accounts SET storage_bytes =
                     GREATEST(0, storage_bytes - (SELECT coalesce(sum(size), 0) FROM gone))
                 WHERE id = $1)
             SELECT count(*) FROM gone",
            event = webhooks::FILE_DELETED,
            batch = webhooks::EVENT_BATCH
        );
        let (_turn, deadline) = self.turn(account_id).await?;
        in_tx!(self, deadline, |tx| {
            // Sorts and hashes of a large folder in memory, and no JIT
            // compile (tens of ms) for a statement run once.
            tx.batch_execute("SET LOCAL work_mem = '64MB'; SET LOCAL jit = off")
                .await?;
            let row = query_opt(&tx, &sql, &[&account_id, &folder, &under, &after, &now]).await?;
            let n: i64 = row.map_or(0, |r| r.get(0));
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    /// Removes up to `max` expired files. Rows another node is reaping are
    /// skipped (`SKIP LOCKED`), so nodes reap at once without waiting or
    /// double-counting; accounts are updated in id order (no deadlock).
    async fn reap_expired_files(&self, now: i64, max: u32) -> Result<Vec<FileRow>, DbError> {
        in_tx!(self, |tx| {
            let sql = format!(
                "DELETE FROM files WHERE id IN (
                     SELECT id FROM files WHERE expires_at IS NOT NULL AND expires_at <= $1
                     ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
                 RETURNING {}",
                rows::FILE
            );
            let mut rows: Vec<FileRow> = query(&tx, &sql, &[&now, &i64::from(max)])
                .await?
                .iter()
                .map(rows::file)
                .collect();
            rows.sort_by(|a, b| (&a.account_id, a.expires_at).cmp(&(&b.account_id, b.expires_at)));
            for row in &rows {
                after_removal(&tx, row, (now, now, None), webhooks::FILE_EXPIRED).await?;
            }
            rows.sort_by_key(|r| r.expires_at);
            Ok(rows)
        })
    }

    async fn prune_idempotency(&self, before: i64) -> Result<usize, DbError> {
        on_conn!(self, |c| {
            let n = execute(
                c,
                "DELETE FROM idempotency_keys WHERE created_at < $1",
                &[&before],
            )
            .await?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }

    async fn md5_pending(&self, after: &str, max: u32) -> Result<Vec<FileRow>, DbError> {
        PgStore::md5_pending(self, after, max).await
    }

    async fn md5_found(&self, id: &str, sha256: &str, md5: &str) -> Result<bool, DbError> {
        PgStore::md5_found(self, id, sha256, md5).await
    }
}
