//! Resumable uploads (tus 1.0.0), independent of HTTP.
//!
//! Creation checks the plan and reserves the declared length against the
//! storage quota (and one of the month's uploads) in the metadata store, so
//! the reservation holds on every node. Each PATCH streams its bytes into
//! the blob store's partial blob while they are hashed (a SHA-256 whose state
//! is saved with the upload, so the next PATCH may run anywhere) and checked
//! against the chunk's `Upload-Checksum`; the new offset is recorded only
//! once the store has made the bytes durable, and only if the upload is
//! still where the PATCH found it. The PATCH that brings the last byte
//! completes the blob and commits the file, with the upload marked complete,
//! in one transaction. One PATCH of an upload runs at a time on one node (a
//! second is told to come back, 423); across nodes, the upload's lease
//! (`lease`) gives it to one request at a time. A termination takes the
//! lease from a running PATCH, which stops.
//!
//! An upload is its creating key's (and its account's secret keys'), lives
//! without bytes for as long as its creator's kind allows, and counts
//! against the account's incomplete uploads at once (`owners`).

mod feed;
mod lease;
mod owners;

use super::blobs::delete_blob_now;
use super::commit::{commit, commit_context, PendingBlob};
use super::refusals::{refused, too_large};
use super::{records, App};
use crate::api::FileRecord;
use crate::clock::{millis, period_of};
use crate::db::{CreateOutcome, FileRow, Progress, UploadRow};
use crate::domain::sha256_state::ResumableSha256;
use crate::domain::tus::{self as rules, Algorithm, Metadata};
use crate::domain::{ids, validate};
use crate::service::error::ServiceError;
use crate::storage::{Partial, StorageError};
use bytes::Bytes;
use feed::{fed, hasher, length_exceeded, Checker, Feed};
use futures_util::{Stream, StreamExt};
use lease::Lease;
use owners::unexpired;
pub(crate) use owners::{list, owned, Caller};
use std::sync::{Arc, Mutex};

/// The space the server keeps free (`storage.min_free_space`) is checked
/// when the bytes go to its own disk: on the local store, not on S3 (whose
/// parts pass through memory, their remainder through the database).
fn room_on_disk(app: &App, more: u64) -> Result<(), ServiceError> {
    match app.store.kind() {
        "local" => app.disk.check_room(more),
        _ => app.disk.check_room(0),
    }
}

/// Creates an upload of `length` bytes: 201's row (and, for an empty file,
/// the file at once: tus clients send no PATCH for it), or the plan's refusal.
pub(crate) async fn create(
    app: &Arc<App>,
    caller: &Caller,
    length: u64,
    meta: Metadata,
    idempotency_key: Option<String>,
) -> Result<(UploadRow, Option<FileRecord>), ServiceError> {
    // A retried creation (its answer lost) gets the upload it made.
    if let Some(key) = &idempotency_key {
        validate::idempotency_key(key).map_err(ServiceError::BadRequest)?;
        let earlier = app.meta.replayed_upload(&caller.account.id, key).await?;
        if let Some(earlier) = earlier {
            return replay(app, caller, earlier).await;
        }
    }
    if meta.private && caller.public_key {
        return Err(ServiceError::Forbidden(
            "public keys cannot upload private files".into(),
        ));
    }
    let plan = app.plan_of(&caller.account).clone();
    if length > plan.max_file_size {
        return Err(too_large(plan.max_file_size));
    }
    room_on_disk(app, length)?;
    if length > app.store.max_partial() {
        return Err(ServiceError::FileTooLarge(format!(
            "the blob store takes resumable uploads of at most {} bytes",
            app.store.max_partial()
        )));
    }
    let period = period_of(app.clock.now()).key;
    // Refused before any work in the store when the account is already at a
    // limit; the transaction that creates the upload has the final word.
    owners::precheck(app, caller, length, &plan, &period).await?;
    let now = app.clock.now_ms();
    let idle_ms = millis(rules::idle_expiry(!caller.public_key));
    let file_id = ids::file_id();
    let blob_key = format!("{}/{}", caller.account.id, file_id);
    // Guarded until the row exists: a crash in between leaves nothing behind.
    app.meta.guard_upload(&blob_key, now).await?;
    let partial = match app.store.begin_partial(&blob_key).await {
        Ok(p) => p,
        Err(e) => {
            delete_blob_now(app, &blob_key).await;
            return Err(e.into());
        }
    };
    let row = UploadRow {
        id: ids::upload_id(),
        account_id: caller.account.id.clone(),
        file_id,
        blob_key: blob_key.clone(),
        length,
        received: 0,
        name: meta.name.unwrap_or_else(|| "upload".to_string()),
        content_type: meta.content_type,
        folder: meta.folder,
        private: meta.private,
        expires_ms: meta.expires.map(millis),
        hash_state: ResumableSha256::new().save(),
        store_state: partial.state.clone(),
        created_at: now,
        expires_at: now + idle_ms,
        completed_at: None,
        idempotency_key,
        created_by: Some(caller.key_id.clone()),
        idle_ms,
    };
    let outcome = app
        .meta
        .create_upload(row.clone(), plan.quota(), &period)
        .await;
    let refusal = match outcome {
        Ok(CreateOutcome::Created) if length == 0 => {
            let _turn = app.tus_locks.lock(&row.id).await;
            let file = complete(app, &row, partial, &ResumableSha256::new()).await?;
            return Ok((row, Some(file)));
        }
        Ok(CreateOutcome::Created) => return Ok((row, None)),
        Ok(CreateOutcome::Replayed(earlier)) => {
            let _ = app.store.abort_partial(&blob_key, &partial.state).await;
            delete_blob_now(app, &blob_key).await;
            return replay(app, caller, *earlier).await;
        }
        Ok(CreateOutcome::Refused(refusal)) => refused(app, refusal, &plan, &row.account_id).await,
        Err(e) => e.into(),
    };
    let _ = app.store.abort_partial(&blob_key, &partial.state).await;
    delete_blob_now(app, &blob_key).await;
    Err(refusal)
}

/// The answer to a replayed creation: the upload (and its file, if
/// complete), to a key that may use it. An idempotency key is its upload's
/// creator's: another public key of the account gets 400, and no upload.
async fn replay(
    app: &App,
    caller: &Caller,
    earlier: UploadRow,
) -> Result<(UploadRow, Option<FileRecord>), ServiceError> {
    if owners::check(&earlier, caller).is_err() {
        return Err(ServiceError::BadRequest(
            "this Idempotency-Key was used by another key's upload: send another".into(),
        ));
    }
    let row = find(app, &earlier.account_id, &earlier.id).await?;
    with_file(app, row).await
}

/// An upload the caller may read and, once complete, its file (null if
/// deleted since).
pub(crate) async fn status(
    app: &App,
    caller: &Caller,
    id: &str,
) -> Result<(UploadRow, Option<FileRecord>), ServiceError> {
    with_file(app, owned(app, caller, id).await?).await
}

async fn with_file(
    app: &App,
    row: UploadRow,
) -> Result<(UploadRow, Option<FileRecord>), ServiceError> {
    let account_id = row.account_id.as_str();
    let file = match row.completed_at {
        Some(_) => app
            .meta
            .file(account_id, &row.file_id, app.clock.now_ms())
            .await?
            .map(|f| records::record(app, &f)),
        None => None,
    };
    Ok((row, file))
}

/// The upload, if it is this account's and not expired.
async fn find(app: &App, account_id: &str, id: &str) -> Result<UploadRow, ServiceError> {
    let row = app
        .meta
        .upload(account_id, id)
        .await?
        .ok_or_else(|| ServiceError::NotFound("no such upload".into()))?;
    unexpired(app, row)
}

/// What a PATCH's headers say.
#[derive(Debug, Clone)]
pub(crate) struct Patch {
    pub offset: u64,
    pub content_length: Option<u64>,
    pub checksum: Option<(Algorithm, Vec<u8>)>,
}

/// Where an upload stands after a PATCH.
#[derive(Debug)]
pub(crate) struct Patched {
    pub offset: u64,
    pub expires_at: Option<i64>,
    /// The file, when this PATCH completed the upload (or it was complete).
    pub file: Option<FileRecord>,
}

/// Appends a PATCH's body to the upload; see the module's doc. Runs as a
/// task of its own: when the client goes away mid-body, the request's future
/// is dropped, but what arrived is still recorded. The body is one of the
/// account's concurrent uploads (`concurrent_uploads`) until the task ends.
pub(crate) async fn patch<S>(
    app: &Arc<App>,
    account_id: &str,
    id: &str,
    p: Patch,
    body: S,
) -> Result<Patched, ServiceError>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    let max = match app.meta.account(account_id).await? {
        Some(account) => app.plan_of(&account).concurrent_uploads,
        // Gone since its key was checked: the upload's lookup answers that.
        None => u64::MAX,
    };
    let slot = app
        .in_flight
        .slot(account_id, max, app.clock.now().timestamp())?;
    let (app, account_id, id) = (app.clone(), account_id.to_string(), id.to_string());
    tokio::spawn(async move {
        let _slot = slot;
        append(&app, &account_id, &id, p, body).await
    })
    .await
    .map_err(|e| ServiceError::internal(format!("PATCH task: {e}")))?
}

async fn append<S>(
    app: &Arc<App>,
    account_id: &str,
    id: &str,
    p: Patch,
    body: S,
) -> Result<Patched, ServiceError>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    // One PATCH of an upload at a time on this node: a second one is told
    // to come back rather than queued (holding one of the account's
    // concurrent uploads) behind a body that may trickle for hours.
    let Some(_turn) = app.tus_locks.try_lock(id) else {
        return Err(lease::busy());
    };
    find(app, account_id, id).await?;
    let lease = Lease::take(app, id).await?;
    let body = lease.guard(body);
    let appended = append_leased(app, account_id, id, p, body, &lease).await;
    lease.end().await;
    appended
}

/// `append` with the upload's turn and lease held.
async fn append_leased<S>(
    app: &Arc<App>,
    account_id: &str,
    id: &str,
    p: Patch,
    body: S,
    lease: &Lease,
) -> Result<Patched, ServiceError>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    let row = find(app, account_id, id).await?;
    let at = match row.completed_at {
        Some(_) => row.length,
        None => row.received,
    };
    if p.offset != at {
        return Err(ServiceError::OffsetMismatch(format!(
            "Upload-Offset is {}, the upload is at {at}",
            p.offset
        )));
    }
    let room = row.length - p.offset;
    if p.content_length.is_some_and(|n| n > room) {
        return Err(length_exceeded(room));
    }
    if row.completed_at.is_some() {
        // Nothing is left to send: a retried last PATCH gets the file.
        let (_, file) = with_file(app, row.clone()).await?;
        return Ok(Patched {
            offset: row.length,
            expires_at: None,
            file,
        });
    }
    room_on_disk(app, p.content_length.unwrap_or(0))?;
    write(app, &row, p, room, body, lease).await
}

/// Streams a PATCH's body into the store, then records, completes or
/// refuses it (nothing is recorded once another request took the upload's
/// `lease`).
async fn write<S>(
    app: &Arc<App>,
    row: &UploadRow,
    p: Patch,
    room: u64,
    body: S,
    lease: &Lease,
) -> Result<Patched, ServiceError>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    let id = row.id.as_str();
    let hash = ResumableSha256::restore(&row.hash_state)
        .ok_or_else(|| ServiceError::internal(format!("upload {id}: bad hash state")))?;
    let feed = Arc::new(Mutex::new(Feed { room, error: None }));
    let check = p.checksum.as_ref().map(|(a, _)| Checker::new(*a));
    let (to_hasher, hasher) = hasher(hash, check);
    let tail = app.meta.upload_tail(id).await?;
    let before = Partial {
        offset: row.received,
        state: row.store_state.clone(),
        tail: tail.map(Bytes::from),
    };
    let appended = app
        .store
        .append_partial(&row.blob_key, before, fed(body, feed.clone(), to_hasher))
        .await;
    let after = match appended {
        Ok(after) => after,
        Err(StorageError::NotFound(_)) => {
            let file = recover(app, row).await?;
            return Ok(Patched {
                offset: row.length,
                expires_at: None,
                file: Some(file),
            });
        }
        Err(e) => return Err(e.into()),
    };
    if lease.is_lost() {
        return Err(lease::taken());
    }
    let (hash, check) = hasher
        .await
        .map_err(|e| ServiceError::internal(format!("hasher: {e}")))?;
    let error = feed.lock().expect("feed lock").error.take();
    if let Some(e) = error {
        // A chunk that broke its limit, one with a checksum that cannot be
        // checked, or one whose lease another request took, is dropped; one
        // cut short is kept as far as it came.
        let dropped = matches!(
            e,
            ServiceError::LengthExceeded(_) | ServiceError::Locked { .. }
        );
        if p.checksum.is_some() || dropped {
            return Err(e);
        }
        // Every byte came before the break: the upload is complete (a
        // client that finds the offset at the length takes it as done).
        if after.offset == row.length {
            complete(app, row, after, &hash).await?;
        } else {
            record(app, row, &after, &hash).await?;
        }
        return Err(e);
    }
    if let (Some((_, expected)), Some(check)) = (&p.checksum, check) {
        if &check.finish() != expected {
            return Err(ServiceError::ChunkChecksumMismatch(
                "Upload-Checksum does not match the PATCH's body; it was discarded".into(),
            ));
        }
    }
    if after.offset == row.length {
        let file = complete(app, row, after, &hash).await?;
        return Ok(Patched {
            offset: row.length,
            expires_at: None,
            file: Some(file),
        });
    }
    let expires_at = record(app, row, &after, &hash).await?;
    Ok(Patched {
        offset: after.offset,
        expires_at: Some(expires_at),
        file: None,
    })
}

/// Records a PATCH's progress; returns the upload's new expiry.
async fn record(
    app: &App,
    row: &UploadRow,
    after: &Partial,
    hash: &ResumableSha256,
) -> Result<i64, ServiceError> {
    let now = app.clock.now_ms();
    let brought = after.offset.saturating_sub(row.received);
    let expires_at = rules::expiry_after_patch(now, row.expires_at, row.idle_ms, brought);
    let progress = Progress {
        now,
        from: row.received,
        received: after.offset,
        hash_state: hash.save(),
        store_state: after.state.clone(),
        tail: after.tail.as_ref().map(|t| t.to_vec()),
        expires_at,
    };
    if !app.meta.advance_upload(&row.id, progress).await? {
        return Err(ServiceError::OffsetMismatch(
            "another request moved the upload first".into(),
        ));
    }
    Ok(expires_at)
}

/// The last byte is in: the blob is completed in the store and the file
/// committed (the upload marked complete in the same transaction).
async fn complete(
    app: &Arc<App>,
    row: &UploadRow,
    after: Partial,
    hash: &ResumableSha256,
) -> Result<FileRecord, ServiceError> {
    match app.store.complete_partial(&row.blob_key, after).await {
        Ok(()) => commit_file(app, row, hash.hex()).await,
        Err(StorageError::NotFound(_)) => recover(app, row).await,
        Err(e) => Err(e.into()),
    }
}

/// The store no longer has the upload's partial blob. When it holds the whole
/// blob instead (completed in the store, but the file's commit never
/// happened: a crash or a database failure in between, then a retried last
/// PATCH), the file is committed now, its SHA-256 read back from the store.
/// Otherwise the bytes are lost (the store's upload was aborted): the upload
/// is removed and 410 says to start again.
async fn recover(app: &Arc<App>, row: &UploadRow) -> Result<FileRecord, ServiceError> {
    if app.store.size(&row.blob_key).await? == Some(row.length) {
        let mut hash = ResumableSha256::new();
        let mut bytes = app.store.get(&row.blob_key, 0, row.length).await?;
        while let Some(chunk) = bytes.next().await {
            hash.update(&chunk.map_err(ServiceError::from_io)?);
        }
        tracing::warn!(upload = %row.id, "completed in the store but not committed: committed now");
        return commit_file(app, row, hash.hex()).await;
    }
    tracing::warn!(upload = %row.id, "the store lost the upload's bytes; the upload is removed");
    // Only if it was still incomplete when removed: otherwise another
    // request just committed its file, whose blob stays.
    if app.meta.remove_upload(&row.id, app.clock.now_ms()).await? == Some(true) {
        delete_blob_now(app, &row.blob_key).await;
    }
    Err(ServiceError::Gone(
        "the upload's bytes were lost in the store; start a new upload".into(),
    ))
}

/// Commits the file of a complete upload whose blob is in the store.
async fn commit_file(
    app: &Arc<App>,
    row: &UploadRow,
    sha256: String,
) -> Result<FileRecord, ServiceError> {
    let now = app.clock.now_ms();
    let file = FileRow {
        id: row.file_id.clone(),
        account_id: row.account_id.clone(),
        content_type: validate::content_type(row.content_type.as_deref(), &row.name),
        name: row.name.clone(),
        folder: row.folder.clone(),
        size: row.length,
        private: row.private,
        sha256,
        blob_key: row.blob_key.clone(),
        created_at: now,
        expires_at: row.expires_ms.map(|ms| now.saturating_add(ms)),
        inline: false,
    };
    let account = app
        .meta
        .account(&row.account_id)
        .await?
        .ok_or_else(|| ServiceError::internal("account vanished"))?;
    let plan = app.plan_of(&account).clone();
    // The upload's row guards the blob (no deletion is queued for it), so a
    // failed commit leaves it for the retried PATCH.
    let ctx = commit_context(app, Some(row.id.clone()));
    let committed = commit(
        app,
        file,
        None,
        &plan,
        ctx,
        PendingBlob::new(app, &row.blob_key),
    )
    .await;
    match committed {
        // Refused because the upload is no longer open: it was ended (or
        // its time ran out) while its last bytes came, which is no server
        // fault; its blob went with it.
        Err(ServiceError::Internal(e)) => {
            let now = app.meta.upload(&row.account_id, &row.id).await?;
            match now {
                Some(u) if u.completed_at.is_some() => with_file(app, u)
                    .await?
                    .1
                    .ok_or_else(|| ServiceError::Gone("the upload's file is gone".into())),
                Some(u) if u.expires_at > app.clock.now_ms() => Err(ServiceError::Internal(e)),
                _ => Err(ServiceError::Gone(
                    "the upload ended before its last bytes were committed; start a new upload"
                        .into(),
                )),
            }
        }
        other => other,
    }
}

/// Ends an upload the caller may end (tus termination): an incomplete
/// one's bytes go at once. Expired or not.
/// Termination wins over a request writing to the upload, on any node: it
/// takes the upload's lease from it, and that request stops at its next
/// renewal, recording nothing; on this node its end is awaited (a bounded
/// wait), so that its bytes are not written after the removal.
pub(crate) async fn terminate(
    app: &Arc<App>,
    caller: &Caller,
    id: &str,
) -> Result<(), ServiceError> {
    let no_such = || ServiceError::NotFound("no such upload".into());
    let account_id = caller.account.id.as_str();
    let row = app.meta.upload(account_id, id).await?.ok_or_else(no_such)?;
    owners::check(&row, caller)?;
    let lease = Lease::seize(app, id).await?.ok_or_else(no_such)?;
    let _turn = tokio::time::timeout(lease::STOPS_WITHIN, app.tus_locks.lock(id))
        .await
        .ok();
    // Read afresh under the lease; and whether it was incomplete is what the
    // removal itself saw (a completion on another node just before makes
    // its blob a file's, which stays).
    let removed = async {
        let row = app.meta.upload(account_id, id).await?.ok_or_else(no_such)?;
        let removed = app.meta.remove_upload(id, app.clock.now_ms()).await?;
        Ok::<_, ServiceError>((row, removed))
    }
    .await;
    lease.end().await;
    let (row, removed) = removed?;
    let incomplete = removed.ok_or_else(no_such)?;
    if incomplete {
        let _ = app
            .store
            .abort_partial(&row.blob_key, &row.store_state)
            .await;
        delete_blob_now(app, &row.blob_key).await;
    }
    Ok(())
}

/// Removes the uploads whose time is up; returns how many.
pub(crate) async fn reap(app: &App) -> usize {
    let now = app.clock.now_ms();
    match app.meta.reap_expired_uploads(now, 500).await {
        Ok(aborted) => {
            for (key, state) in &aborted {
                // Early release; the queued deletion of the key does the rest.
                let _ = app.store.abort_partial(key, state).await;
            }
            aborted.len()
        }
        Err(e) => {
            tracing::error!(error = %e, "expiry of resumable uploads failed");
            0
        }
    }
}
