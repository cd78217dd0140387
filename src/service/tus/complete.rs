//! Completion: the store's blob completed and the file committed, or
//! recovered when the store has the whole blob but no partial one.

use super::read::with_file;
use crate::db::{CommitContext, FileRow, UploadRow};
use crate::domain::files::StoredFile;
use crate::domain::policy::UploadPolicy;
use crate::domain::resumable::ResumableHashes;
use crate::domain::sniff::SNIFF_LEN;
use crate::domain::validate;
use crate::service::blobs::delete_blob_now;
use crate::service::commit::{commit, commit_context, PendingBlob};
use crate::service::error::ServiceError;
use crate::service::refusals::sniffed_type;
use crate::service::App;
use crate::storage::{Partial, StorageError};
use futures_util::StreamExt;
use std::sync::Arc;

/// The last byte is in: the blob is completed in the store and the file
/// committed (the upload marked complete in the same transaction).
pub(super) async fn complete(
    app: &Arc<App>,
    policy: &UploadPolicy,
    row: &UploadRow,
    after: Partial,
    hash: &ResumableHashes,
) -> Result<StoredFile, ServiceError> {
    match app.store.complete_partial(&row.blob_key, after).await {
        Ok(()) => commit_file(app, policy, row, hash.hex()).await,
        Err(StorageError::NotFound(_)) => recover(app, policy, row).await,
        Err(e) => Err(e.into()),
    }
}

/// The store no longer has the upload's partial blob. When it holds the whole
/// blob instead (completed in the store, but the file's commit never
/// happened: a crash or a database failure in between, then a retried last
/// PATCH), the file is committed now, its SHA-256 and MD5 read back from the store.
/// Otherwise the bytes are lost (the store's upload was aborted): the upload
/// is removed and 410 says to start again.
pub(super) async fn recover(
    app: &Arc<App>,
    policy: &UploadPolicy,
    row: &UploadRow,
) -> Result<StoredFile, ServiceError> {
    if app.store.size(&row.blob_key).await? == Some(row.length) {
        let mut hash = ResumableHashes::new();
        let mut bytes = app.store.get(&row.blob_key, 0, row.length).await?;
        while let Some(chunk) = bytes.next().await {
            hash.update(&chunk.map_err(ServiceError::from_io)?);
        }
        tracing::warn!(upload = %row.id, "completed in the store but not committed: committed now");
        return commit_file(app, policy, row, hash.hex()).await;
    }
    tracing::warn!(upload = %row.id, "the store lost the upload's bytes; the upload is removed");
    discard(app, row).await?;
    Err(ServiceError::Gone(
        "the upload's bytes were lost in the store; start a new upload".into(),
    ))
}

/// Removes an upload that will not become a file, and its bytes (an
/// upload token's use is given back with it). Only if it was still
/// incomplete when removed: otherwise another request just committed its
/// file, whose blob stays.
pub(super) async fn discard(app: &App, row: &UploadRow) -> Result<(), ServiceError> {
    if app.meta.remove_upload(&row.id, app.clock.now_ms()).await? == Some(true) {
        let _ = app
            .store
            .abort_partial(&row.blob_key, &row.store_state)
            .await;
        delete_blob_now(app, &row.blob_key).await;
    }
    Ok(())
}

/// The plan the account has now: an upload over its maximum file size
/// (the account moved to a smaller plan since the upload was created)
/// never stores a file, and is ended (its reservation freed); the 413.
pub(super) async fn over_the_plan(app: &App, row: &UploadRow, largest: u64) -> ServiceError {
    if let Err(e) = discard(app, row).await {
        return e;
    }
    ServiceError::OverPlanFileSize(format!(
        "the upload is {} bytes, over the {largest} bytes a file may have on the account's plan now: it is ended",
        row.length
    ))
}

/// The type the file is stored as, when the caller's policy checks types:
/// sniffed from its first bytes, read back from the store (the upload is
/// discarded when the policy refuses it).
async fn stored_type(
    app: &App,
    policy: &UploadPolicy,
    row: &UploadRow,
) -> Result<Option<String>, ServiceError> {
    if !policy.checks_types() {
        return Ok(None);
    }
    let n = row.length.min(SNIFF_LEN as u64);
    let mut head = Vec::new();
    let mut bytes = app.store.get(&row.blob_key, 0, n).await?;
    while let Some(chunk) = bytes.next().await {
        head.extend_from_slice(&chunk.map_err(ServiceError::from_io)?);
    }
    match sniffed_type(policy, &head, row.content_type.as_deref()) {
        Ok(t) => Ok(t),
        Err(refused) => {
            discard(app, row).await?;
            Err(refused)
        }
    }
}

/// Commits the file of a complete upload whose blob is in the store.
async fn commit_file(
    app: &Arc<App>,
    policy: &UploadPolicy,
    row: &UploadRow,
    (sha256, md5): (String, Option<String>),
) -> Result<StoredFile, ServiceError> {
    let sniffed = stored_type(app, policy, row).await?;
    let now = app.clock.now_ms();
    let file = FileRow {
        id: row.file_id.clone(),
        account_id: row.account_id.clone(),
        content_type: sniffed
            .unwrap_or_else(|| validate::content_type(row.content_type.as_deref(), &row.name)),
        name: row.name.clone(),
        folder: row.folder.clone(),
        size: row.length,
        private: row.private,
        sha256,
        md5,
        blob_key: row.blob_key.clone(),
        created_at: now,
        expires_at: row.expires_ms.map(|ms| now.saturating_add(ms)),
        inline: false,
        metadata: row.metadata.clone(),
        attrs: crate::domain::object::ObjectAttrs::default(),
        damaged_at: None,
        crc32: None,
    };
    let account = app
        .meta
        .account(&row.account_id)
        .await?
        .ok_or_else(|| ServiceError::internal("account vanished"))?;
    let plan = app.plan_of(&account).clone();
    // Read once the last byte is in: a body that streamed while the plan
    // shrank stores no file over the new maximum.
    if row.length > plan.max_file_size {
        return Err(over_the_plan(app, row, plan.max_file_size).await);
    }
    // The upload's row guards the blob (no deletion is queued for it), so a
    // failed commit leaves it for the retried PATCH.
    // (An upload token's use, held since the creation, is counted in the
    // commit: the store knows the upload's creator.)
    let ctx = CommitContext {
        at_path: row.at_path,
        ..commit_context(app, Some(row.id.clone()))
    };
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
