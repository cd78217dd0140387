//! The upload pipeline. The multipart file part streams into a spool file
//! (hashed and counted as it arrives, refused the moment it passes the plan's
//! size or the account's storage room), is fsynced, handed to the blob store,
//! and only then does the file row commit, in a transaction that checks the
//! storage quota and the monthly upload count once more under the write lock.
//! Any failure, or a dropped request, leaves no blob and no row.

use super::inflight::Held;
use super::spool::{Body, Spool, Spooled};
use super::{collector, files, App};
use crate::api::FileRecord;
use crate::clock::period_of;
use crate::db::files::{commit_upload, CommitLimits, CommitOutcome};
use crate::db::{blobs, files as file_rows, usage, Account, FileRow};
use crate::domain::{ids, validate, IDEMPOTENCY_WINDOW_MS};
use crate::error::ApiError;
use axum::extract::multipart::{Field, Multipart, MultipartError};
use std::sync::Arc;

/// Room for the multipart envelope and the small fields around the file part
/// when judging a request by its `Content-Length`.
pub(crate) const FORM_OVERHEAD: u64 = 64 * 1024;
const MAX_TEXT_FIELD: usize = 4096;

/// Who uploads, and what the request's headers said.
#[derive(Debug, Clone)]
pub(crate) struct UploadRequest {
    pub account: Account,
    pub public_key: bool,
    pub content_length: Option<u64>,
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Default)]
struct Form {
    folder: Option<String>,
    private: bool,
    expires: Option<std::time::Duration>,
}

/// The file part, spooled, with what its part header said.
struct FilePart {
    name: String,
    part_type: Option<String>,
    spooled: Spooled,
    /// Its bytes in the account's bytes in flight, until the commit.
    held: Held,
}

pub(crate) async fn upload(
    app: &Arc<App>,
    req: UploadRequest,
    mut form: Multipart,
) -> Result<FileRecord, ApiError> {
    let plan = app.plan_of(&req.account).clone();
    if let Some(key) = &req.idempotency_key {
        if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ApiError::bad_request(
                "Idempotency-Key: 1-255 visible ASCII characters",
            ));
        }
    }
    if let Some(len) = req.content_length {
        if len > plan.max_file_size.saturating_add(FORM_OVERHEAD) {
            return Err(too_large(plan.max_file_size));
        }
    }
    let replay = lookup_replay(app, &req).await?;
    if replay.is_none() {
        app.disk.check_room(req.content_length.unwrap_or(0))?;
    }
    // A replay is answered with the stored file: its bytes are counted already,
    // so the quota must not refuse it (the first reply may have been lost).
    let quota = match replay {
        Some(_) => u64::MAX,
        None => {
            precheck_limits(app, &req, &plan).await?;
            plan.storage
        }
    };
    let limits = SpoolLimits {
        account: req.account.id.clone(),
        max_file_size: plan.max_file_size,
        used: req.account.storage_bytes,
        quota,
    };

    let mut fields = Form::default();
    let mut spooled: Option<FilePart> = None;
    while let Some(field) = form.next_field().await.map_err(bad_multipart)? {
        match field.name().unwrap_or("") {
            "file" if spooled.is_some() => {
                return Err(ApiError::bad_request("more than one file part"))
            }
            "file" => spooled = Some(spool(app, field, &limits).await?),
            "folder" => {
                fields.folder =
                    validate::folder(&text(field).await?).map_err(ApiError::BadRequest)?
            }
            "private" => {
                fields.private =
                    validate::boolean(&text(field).await?).map_err(ApiError::BadRequest)?
            }
            "expires" => {
                let raw = text(field).await?;
                fields.expires = if raw.trim().is_empty() {
                    None
                } else {
                    Some(validate::expires(&raw).map_err(ApiError::BadRequest)?)
                };
            }
            _ => drain(field).await?,
        }
        if fields.private && req.public_key {
            return Err(ApiError::Forbidden(
                "public keys cannot upload private files".into(),
            ));
        }
    }
    let spooled = spooled
        .ok_or_else(|| ApiError::bad_request("missing file part (a form field named \"file\")"))?;
    if let Some(existing) = replay {
        return Ok(files::record(app, &existing));
    }
    let name = validate::file_name(&spooled.name).map_err(ApiError::BadRequest)?;
    let now = app.clock.now_ms();
    let file_id = ids::file_id();
    let FilePart {
        part_type,
        spooled,
        held,
        ..
    } = spooled;
    let row = FileRow {
        blob_key: format!("{}/{}", req.account.id, file_id),
        id: file_id,
        account_id: req.account.id.clone(),
        content_type: validate::content_type(part_type.as_deref(), &name),
        name,
        folder: fields.folder,
        size: spooled.size,
        private: fields.private,
        sha256: spooled.sha256,
        created_at: now,
        expires_at: fields
            .expires
            .map(|d| now.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))),
        inline: matches!(spooled.body, Body::Inline(_)),
    };
    let stored = store_and_commit(app, row, spooled.body, &plan, req.idempotency_key).await;
    // Counted in storage_bytes now (or refused): no longer in flight.
    drop(held);
    stored
}

/// Stores the bytes (a blob in the store, or inline with the row) and commits
/// the row. A blob is registered for collection before it is written, and the
/// commit releases it: a crash in between leaves nothing the collector misses.
async fn store_and_commit(
    app: &Arc<App>,
    row: FileRow,
    body: Body,
    plan: &crate::config::Plan,
    idempotency_key: Option<String>,
) -> Result<FileRecord, ApiError> {
    let mut pending = PendingBlob {
        app: app.clone(),
        key: row.blob_key.clone(),
        armed: false,
    };
    let inline = match body {
        Body::Inline(bytes) => Some(bytes),
        Body::File(spool) => {
            let (key, now) = (row.blob_key.clone(), row.created_at);
            app.db
                .write(move |c| blobs::guard_upload(c, &key, now))
                .await?;
            pending.armed = true;
            if let Err(e) = app.store.put_file(&row.blob_key, spool, row.size).await {
                pending.discard().await;
                return Err(e.into());
            }
            None
        }
    };
    let limits = CommitLimits {
        storage: plan.storage,
        uploads_per_period: plan.uploads,
    };
    let period = period_of(app.clock.now());
    let since = app.clock.now_ms() - IDEMPOTENCY_WINDOW_MS;
    let period_key = period.key.clone();
    let outcome = app
        .db
        .write(move |c| {
            commit_upload(
                c,
                &row,
                inline.as_deref(),
                limits,
                &period_key,
                idempotency_key.as_deref(),
                since,
            )
        })
        .await;
    match outcome {
        Ok(CommitOutcome::Committed(row)) => {
            pending.armed = false;
            Ok(files::record(app, &row))
        }
        Ok(CommitOutcome::Replayed(existing)) => {
            pending.discard().await;
            Ok(files::record(app, &existing))
        }
        Ok(CommitOutcome::StorageExceeded { used }) => {
            pending.discard().await;
            Err(storage_exceeded(used, plan.storage))
        }
        Ok(CommitOutcome::UploadsExceeded { count }) => {
            pending.discard().await;
            Err(uploads_exceeded(app, count, plan))
        }
        Err(e) => {
            pending.discard().await;
            Err(e.into())
        }
    }
}

async fn lookup_replay(app: &App, req: &UploadRequest) -> Result<Option<FileRow>, ApiError> {
    let Some(key) = req.idempotency_key.clone() else {
        return Ok(None);
    };
    let acc = req.account.id.clone();
    let now = app.clock.now_ms();
    Ok(app
        .db
        .lookup(move |c| file_rows::replayed(c, &acc, &key, now - IDEMPOTENCY_WINDOW_MS, now))
        .await?)
}

/// Refuses before reading the body what is certain to be refused.
async fn precheck_limits(
    app: &App,
    req: &UploadRequest,
    plan: &crate::config::Plan,
) -> Result<(), ApiError> {
    let acc = req.account.id.clone();
    let key = period_of(app.clock.now()).key;
    let count = app
        .db
        .lookup(move |c| usage::upload_count(c, &acc, &key))
        .await?;
    if count >= plan.uploads {
        return Err(uploads_exceeded(app, count, plan));
    }
    let least = req
        .content_length
        .map(|l| l.saturating_sub(FORM_OVERHEAD))
        .unwrap_or(0);
    if req.account.storage_bytes.saturating_add(least) > plan.storage {
        return Err(storage_exceeded(req.account.storage_bytes, plan.storage));
    }
    Ok(())
}

fn too_large(max: u64) -> ApiError {
    ApiError::FileTooLarge(format!(
        "file exceeds the plan's maximum file size of {max} bytes"
    ))
}

fn storage_exceeded(used: u64, quota: u64) -> ApiError {
    ApiError::StorageLimitExceeded(format!(
        "upload would exceed the storage quota ({used} of {quota} bytes used)"
    ))
}

fn uploads_exceeded(app: &App, count: u64, plan: &crate::config::Plan) -> ApiError {
    let now = app.clock.now();
    ApiError::RateLimited {
        message: format!(
            "monthly upload limit reached ({count} of {} this period)",
            plan.uploads
        ),
        limit: plan.uploads,
        reset: period_of(now).next_start.timestamp(),
        now: now.timestamp(),
    }
}

fn bad_multipart(e: MultipartError) -> ApiError {
    // A body that stopped arriving is the client's timeout, not a bad form.
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(err) = source {
        if let Some(t) = err.downcast_ref::<crate::server::conn::BodyTimeout>() {
            return ApiError::Timeout(t.to_string());
        }
        source = err.source();
    }
    ApiError::BadRequest(format!("malformed multipart body: {}", e.body_text()))
}

async fn text(mut field: Field<'_>) -> Result<String, ApiError> {
    let name = field.name().unwrap_or("").to_string();
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(bad_multipart)? {
        if buf.len() + chunk.len() > MAX_TEXT_FIELD {
            return Err(ApiError::BadRequest(format!(
                "field {name:?} is longer than {MAX_TEXT_FIELD} bytes"
            )));
        }
        buf.extend_from_slice(&chunk);
    }
    String::from_utf8(buf).map_err(|_| ApiError::BadRequest(format!("field {name:?} is not UTF-8")))
}

async fn drain(mut field: Field<'_>) -> Result<(), ApiError> {
    while field.chunk().await.map_err(bad_multipart)?.is_some() {}
    Ok(())
}

/// What a file part may not pass while it streams in.
struct SpoolLimits {
    account: String,
    max_file_size: u64,
    /// The account's stored bytes when the upload began, and its quota.
    used: u64,
    quota: u64,
}

/// Streams the file part into a [`Spool`], enforcing the limits as bytes
/// arrive.
async fn spool(
    app: &App,
    mut field: Field<'_>,
    limits: &SpoolLimits,
) -> Result<FilePart, ApiError> {
    let mut held = app.in_flight.hold(&limits.account);
    let name = field.file_name().unwrap_or("").to_string();
    let part_type = field.content_type().map(str::to_string);
    let mut spool = Spool::new(&app.spool_dir, app.config.inline_max);
    while let Some(chunk) = field.chunk().await.map_err(bad_multipart)? {
        let size = spool.size() + chunk.len() as u64;
        if size > limits.max_file_size {
            return Err(too_large(limits.max_file_size));
        }
        if !held.grow(chunk.len() as u64, limits.used, limits.quota) {
            return Err(storage_exceeded(limits.used, limits.quota));
        }
        // Every 8 MiB, the space the server keeps free is checked again
        // (other uploads share the volume).
        if size >> 23 != spool.size() >> 23 {
            app.disk.check_room(0)?;
        }
        spool.push(chunk).await.map_err(ApiError::from_io)?;
    }
    Ok(FilePart {
        name,
        part_type,
        spooled: spool.finish().await.map_err(ApiError::from_io)?,
        held,
    })
}

/// A blob written (or being written) for an upload that has not committed.
/// Dropped while armed (the request went away), it queues the blob for the
/// collector a little later, after any write still in flight has finished;
/// the collector never deletes a blob that a committed file references.
struct PendingBlob {
    app: Arc<App>,
    key: String,
    armed: bool,
}

impl PendingBlob {
    /// The upload failed: delete the blob now (if one was written).
    async fn discard(&mut self) {
        if self.armed {
            collector::delete_blob_now(&self.app, &self.key).await;
            self.armed = false;
        }
    }
}

impl Drop for PendingBlob {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (app, key) = (self.app.clone(), std::mem::take(&mut self.key));
        let due = app.clock.now_ms() + 30_000;
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = app.db.write(move |c| blobs::schedule(c, &key, due)).await;
            });
        }
    }
}
