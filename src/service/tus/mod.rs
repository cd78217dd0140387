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
mod complete;
mod feed;
mod lease;
mod owners;
mod patch;
mod read;

use crate::clock::{millis, period_of};
use crate::db::{CreateOutcome, UploadRow};
use crate::domain::filepath::AtPath;
use crate::domain::files::StoredFile;
use crate::domain::policy::{Asked, UploadPolicy};
use crate::domain::resumable::ResumableHashes;
use crate::domain::tus::{self as rules, Metadata};
use crate::domain::{ids, validate};
use crate::service::blobs::delete_blob_now;
use crate::service::error::ServiceError;
use crate::service::refusals::{refused, size_limit, sniffed_type, token_spent};
use crate::service::App;
use complete::complete;
use lease::Lease;
pub(crate) use owners::{list, owned, Caller};
use patch::room_on_disk;
pub(crate) use patch::{patch, Patch};
pub(crate) use read::status;
use read::{find, with_file};
use std::sync::Arc;

/// Creates an upload of `length` bytes: 201's row (and, for an empty file,
/// the file at once: tus clients send no PATCH for it), or the plan's refusal.
pub(crate) async fn create(
    app: &Arc<App>,
    caller: &Caller,
    length: u64,
    meta: Metadata,
    idempotency_key: Option<String>,
) -> Result<(UploadRow, Option<StoredFile>), ServiceError> {
    // A retried creation (its answer lost) gets the upload it made.
    if let Some(key) = &idempotency_key {
        validate::idempotency_key(key).map_err(ServiceError::BadRequest)?;
        let earlier = app.meta.replayed_upload(&caller.account.id, key).await?;
        if let Some(earlier) = earlier {
            return replay(app, caller, earlier).await;
        }
    }
    crate::service::caller::may_ask(&caller.key, meta.private, meta.replace, meta.if_absent)?;
    let (meta, at_path) = settle(&caller.key.policy, meta)?;
    if at_path == AtPath::IfAbsent {
        // Told before any byte is sent; the commit decides again.
        let name = meta.name.as_deref().unwrap_or(DEFAULT_NAME);
        super::paths::refuse_taken(app, &caller.account.id, meta.folder.as_deref(), name).await?;
    }
    let plan = app.plan_of(&caller.account).clone();
    let limit = size_limit(plan.max_file_size, &caller.key.policy);
    if length > limit.max {
        return Err(limit.refusal());
    }
    // An empty file has all its bytes already: its type is known now.
    if length == 0 {
        sniffed_type(&caller.key.policy, &[], meta.content_type.as_deref())?;
    }
    room_on_disk(app, length)?;
    if length > app.store.max_partial() {
        return Err(ServiceError::FileTooLarge(format!(
            "the blob store takes resumable uploads of at most {}",
            crate::domain::units::human_bytes(app.store.max_partial())
        )));
    }
    let period = period_of(app.clock.now()).key;
    // Refused before any work in the store when the account is already at a
    // limit; the transaction that creates the upload has the final word.
    owners::precheck(app, caller, length, &plan, &period).await?;
    let now = app.clock.now_ms();
    let idle_ms = millis(rules::idle_expiry(caller.is_secret()));
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
    let (hash_state, md5_state) = ResumableHashes::new().save();
    let row = UploadRow {
        id: ids::upload_id(),
        account_id: caller.account.id.clone(),
        file_id,
        blob_key: blob_key.clone(),
        length,
        received: 0,
        name: meta.name.unwrap_or_else(|| DEFAULT_NAME.to_string()),
        content_type: meta.content_type,
        folder: meta.folder,
        private: meta.private.unwrap_or(false),
        expires_ms: meta.expires.map(millis),
        hash_state,
        md5_state,
        store_state: partial.state.clone(),
        created_at: now,
        expires_at: now + idle_ms,
        completed_at: None,
        idempotency_key,
        created_by: Some(caller.key.id.clone()),
        idle_ms,
        metadata: meta.metadata,
        at_path,
    };
    let share = caller.key.kind.is_stranger().then_some(plan.public_share);
    let outcome = app
        .meta
        .create_upload(row.clone(), plan.quota(), share, &period)
        .await;
    let refusal = match outcome {
        Ok(CreateOutcome::Created) if length == 0 => {
            let _turn = app.tus_locks.lock(&row.id).await;
            let file = complete(
                app,
                &caller.key.policy,
                &row,
                partial,
                &ResumableHashes::new(),
            )
            .await?;
            return Ok((row, Some(file)));
        }
        Ok(CreateOutcome::Created) => return Ok((row, None)),
        Ok(CreateOutcome::Replayed(earlier)) => {
            let _ = app.store.abort_partial(&blob_key, &partial.state).await;
            delete_blob_now(app, &blob_key).await;
            return replay(app, caller, *earlier).await;
        }
        Ok(CreateOutcome::Refused(refusal)) => refused(app, refusal, &plan, &row.account_id).await,
        Ok(CreateOutcome::TokenSpent) => token_spent(),
        Err(e) => e.into(),
    };
    let _ = app.store.abort_partial(&blob_key, &partial.state).await;
    delete_blob_now(app, &blob_key).await;
    Err(refusal)
}

/// The name of an upload whose metadata gives none.
const DEFAULT_NAME: &str = "upload";

/// The creation's metadata as the caller's policy settles it: folder,
/// privacy and lifetime may be repeated, not changed (400); the policy's
/// metadata keys win.
fn settle(policy: &UploadPolicy, meta: Metadata) -> Result<(Metadata, AtPath), ServiceError> {
    let asked = Asked {
        folder: meta.folder,
        private: meta.private,
        expires: meta.expires,
        metadata: meta.metadata,
        replace: meta.replace,
        if_absent: meta.if_absent,
    };
    let s = policy.settle(asked).map_err(ServiceError::BadRequest)?;
    let settled = Metadata {
        folder: s.folder,
        private: Some(s.private),
        expires: s.expires,
        metadata: s.metadata,
        ..meta
    };
    Ok((settled, s.at_path))
}

/// The answer to a replayed creation: the upload (and its file, if
/// complete), to a key that may use it. An idempotency key is its upload's
/// creator's: another public key of the account gets 400, and no upload.
async fn replay(
    app: &App,
    caller: &Caller,
    earlier: UploadRow,
) -> Result<(UploadRow, Option<StoredFile>), ServiceError> {
    if owners::check(&earlier, caller).is_err() {
        return Err(ServiceError::BadRequest(
            "this Idempotency-Key was used by another key's upload: send another".into(),
        ));
    }
    let row = find(app, &earlier.account_id, &earlier.id).await?;
    with_file(app, row).await
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
