//! Copying a file (`POST /v1/files/{id}/copy`, docs/api.md, "Records"):
//! a new file with the source's bytes, committed as an upload is (the
//! plan's quota and monthly count, `file.created`), whose bytes the blob
//! store copies itself (`BlobStore::copy`) instead of receiving them again;
//! inline bytes are copied with the row.

use super::caller::Caller;
use super::commit::{commit, commit_context, PendingBlob};
use super::files::{new_folder, new_name};
use super::refusals::{refused, size_limit};
use super::App;
use crate::clock::period_of;
use crate::db::{CommitContext, FileRow};
use crate::domain::files::StoredFile;
use crate::domain::policy::UploadPolicy;
use crate::domain::quota::Ask;
use crate::domain::{ids, validate, IDEMPOTENCY_WINDOW_MS};
use crate::service::error::ServiceError;
use crate::storage::StorageError;
use bytes::Bytes;
use std::sync::Arc;

/// A copy asked for: by whom, and what changes from the source.
#[derive(Debug, Clone)]
pub(crate) struct CopyRequest {
    /// Who asks (a secret key: idempotency keys are per key).
    pub caller: Caller,
    /// The request's `Idempotency-Key`, unchecked.
    pub idempotency_key: Option<String>,
    /// The copy's name; None keeps the source's.
    pub name: Option<String>,
    /// The copy's folder, unchecked (`""`: the root); None keeps the
    /// source's.
    pub folder: Option<String>,
    /// None keeps the source's.
    pub private: Option<bool>,
    /// What the copy does to the files at its path (the S3 door's copies
    /// replace them).
    pub at_path: crate::domain::filepath::AtPath,
    /// The type, metadata and S3 attributes the copy takes instead of the
    /// source's (S3's `x-amz-metadata-directive: REPLACE`); None keeps them.
    pub replaced: Option<Replaced>,
}

/// What a copy takes instead of its source's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Replaced {
    pub content_type: Option<String>,
    pub metadata: crate::domain::metadata::Metadata,
    pub attrs: crate::domain::object::ObjectAttrs,
}

/// Copies the live file `id` of the account: a new id, blob and url; the
/// same bytes, sha256, size, type, metadata and expiry; the name, folder
/// and privacy asked for, else the source's. Refused as an upload would be
/// (grace period, the plan's file size, storage quota and monthly count);
/// a refusal or failure leaves no blob.
pub(crate) async fn copy(
    app: &Arc<App>,
    id: &str,
    req: CopyRequest,
) -> Result<StoredFile, ServiceError> {
    if req.caller.account.grace_period {
        return Err(ServiceError::GracePeriod(
            "the account is in its grace period: uploads and copies are paused".into(),
        ));
    }
    let name = req.name.as_deref().map(new_name).transpose()?;
    let folder = req
        .folder
        .as_deref()
        .map(|f| new_folder(Some(f)))
        .transpose()?;
    let idempotency_key = match &req.idempotency_key {
        Some(key) => {
            validate::idempotency_key(key).map_err(ServiceError::BadRequest)?;
            // A copy's key is its source's: the same key sent with an
            // upload, or with a copy of another file, is another request
            // and never replays this one.
            Some(validate::idempotency_scope(
                &req.caller.key.id,
                &format!("copy/{id}/{key}"),
            ))
        }
        None => None,
    };
    let account = &req.caller.account;
    let now = app.clock.now_ms();
    if let Some(key) = &idempotency_key {
        let since = now - IDEMPOTENCY_WINDOW_MS;
        if let Some(done) = app.meta.replayed_file(&account.id, key, since, now).await? {
            return Ok(done);
        }
    }
    let (source, data) = app
        .meta
        .file_with_data(&account.id, id, now)
        .await?
        .ok_or_else(ServiceError::not_found)?;
    let plan = app.plan_of(account).clone();
    let limit = size_limit(plan.max_file_size, &UploadPolicy::default());
    if source.size > limit.max {
        return Err(limit.refusal());
    }
    // Refused before the store copies anything when certain to be (the
    // commit checks again, exactly).
    let held = app
        .meta
        .commitments(&account.id, &period_of(app.clock.now()).key, now)
        .await?;
    if let Err(refusal) = plan
        .quota()
        .admit(held.holdings(account.storage_bytes), Ask::file(source.size))
    {
        return Err(refused(app, refusal, &plan, &account.id).await);
    }
    // A local store links the blob, but copies its bytes where it cannot
    // (another volume, too many links): room for that is asked first.
    let on_disk = !source.inline && app.store.kind() == "local";
    app.disk.check_room(if on_disk { source.size } else { 0 })?;
    let file_id = ids::file_id();
    let mut row = FileRow {
        blob_key: format!("{}/{}", account.id, file_id),
        id: file_id,
        name: name.unwrap_or_else(|| source.name.clone()),
        folder: folder.unwrap_or_else(|| source.folder.clone()),
        private: req.private.unwrap_or(source.private),
        created_at: now,
        ..source.clone()
    };
    if let Some(r) = req.replaced {
        row.content_type = r.content_type.unwrap_or(row.content_type);
        row.metadata = r.metadata;
        // The bytes' own (a multipart ETag and parts, a checksum) stay.
        row.attrs = crate::domain::object::ObjectAttrs {
            etag: row.attrs.etag.take(),
            parts: std::mem::take(&mut row.attrs.parts),
            checksum: row.attrs.checksum.take(),
            ..r.attrs
        };
    }
    let ctx = CommitContext {
        idempotency_key,
        at_path: req.at_path,
        ..commit_context(app, None)
    };
    let mut pending = PendingBlob::new(app, &row.blob_key);
    let inline = if source.inline {
        let data = data.ok_or_else(|| {
            ServiceError::internal(format!("inline file {} has no bytes", source.id))
        })?;
        Some(Bytes::from(data))
    } else {
        // Registered for collection before the store writes anything; the
        // commit releases it.
        pending.guard(now).await?;
        if let Err(e) = app
            .store
            .copy(&source.blob_key, &row.blob_key, source.size)
            .await
        {
            return Err(match e {
                // Deleted since it was read: nothing was written.
                StorageError::NotFound(_) => {
                    pending.discard().await;
                    ServiceError::not_found()
                }
                // The store may yet finish a copy it was asked for (a
                // timed-out CopyObject): the queue deletes the key later,
                // and only if no file took it.
                e => {
                    pending.defer().await;
                    e.into()
                }
            });
        }
        None
    };
    // A source that expired while its bytes were copied is gone: its copy
    // would be born expired.
    if source.expires_at.is_some_and(|at| at <= app.clock.now_ms()) {
        pending.discard().await;
        return Err(ServiceError::not_found());
    }
    commit(app, row, inline, &plan, ctx, pending).await
}
