//! Committing a stored upload's row, with the plan's checks under the write
//! lock, for both ways in (`service::upload` and `service::tus`), and the
//! guard that removes a blob whose commit never happens.

use super::blobs::delete_blob_now;
use super::refusals::{refused, token_spent};
use super::App;
use crate::clock::period_of;
use crate::config::Plan;
use crate::db::{CommitContext, CommitOutcome, FileRow};
use crate::domain::filepath::AtPath;
use crate::domain::files::StoredFile;
use crate::domain::IDEMPOTENCY_WINDOW_MS;
use crate::service::error::ServiceError;
use bytes::Bytes;
use std::sync::Arc;

/// The context of a commit now: this billing period, keys remembered since.
pub(crate) fn commit_context(app: &App, tus_upload: Option<String>) -> CommitContext {
    CommitContext {
        period: period_of(app.clock.now()).key,
        idempotency_key: None,
        idempotency_since: app.clock.now_ms() - IDEMPOTENCY_WINDOW_MS,
        tus_upload,
        token: None,
        share: None,
        at_path: AtPath::Add,
        s3_upload: None,
    }
}

/// Commits the row of a blob `pending` stored (or of `inline` bytes), with
/// the plan's checks; any refusal or failure discards the blob.
pub(crate) async fn commit(
    app: &Arc<App>,
    row: FileRow,
    inline: Option<Bytes>,
    plan: &Plan,
    ctx: CommitContext,
    mut pending: PendingBlob,
) -> Result<StoredFile, ServiceError> {
    let account_id = row.account_id.clone();
    let (folder, name) = (row.folder.clone(), row.name.clone());
    let outcome = app.meta.commit_upload(row, inline, plan.quota(), ctx).await;
    match outcome {
        Ok(CommitOutcome::Committed(row)) => Ok(committed(app, row, &mut pending)),
        Ok(CommitOutcome::Replaced(row, gone)) => {
            // Not answered from this node's memory again; their blobs are
            // the collector's, a while later (`REPLACED_KEPT_MS`).
            for id in &gone {
                app.recent.forget(&account_id, id);
            }
            Ok(committed(app, row, &mut pending))
        }
        Ok(CommitOutcome::PathTaken) => {
            pending.discard().await;
            Err(super::paths::path_taken(folder.as_deref(), &name))
        }
        Ok(CommitOutcome::Replayed(existing)) => {
            pending.discard().await;
            Ok(existing)
        }
        Ok(CommitOutcome::Refused(refusal)) => {
            pending.discard().await;
            Err(refused(app, refusal, plan, &account_id).await)
        }
        Ok(CommitOutcome::TokenSpent) => {
            pending.discard().await;
            Err(token_spent())
        }
        Err(e) => {
            // Whether it committed may be unknown (the database went away,
            // or the deadline passed while COMMIT was on its way): the blob
            // is left to the queue, which never deletes a blob a committed
            // file references.
            pending.defer().await;
            Err(e.into())
        }
    }
}

/// A file committed: its blob is its row's, its events are told.
fn committed(app: &App, row: FileRow, pending: &mut PendingBlob) -> StoredFile {
    pending.armed = false;
    if app.meta.take_queued_events() {
        app.outbox.wake();
    }
    if row.md5.is_none() {
        app.md5_fill.wake();
    }
    metrics::counter!("filestore_uploads_total").increment(1);
    metrics::counter!("filestore_upload_bytes_total").increment(row.size);
    row
}

/// A blob written (or being written) for an upload that has not committed.
/// Dropped while armed (the request went away), it queues the blob for the
/// collector a little later, after any write still in flight has finished;
/// the collector never deletes a blob that a committed file references.
pub(crate) struct PendingBlob {
    app: Arc<App>,
    key: String,
    armed: bool,
}

impl PendingBlob {
    pub(crate) fn new(app: &Arc<App>, key: &str) -> PendingBlob {
        PendingBlob {
            app: app.clone(),
            key: key.to_string(),
            armed: false,
        }
    }

    /// Registers the blob for collection (released by the commit) before a
    /// byte of it is written.
    pub(crate) async fn guard(&mut self, now: i64) -> Result<(), ServiceError> {
        self.app.meta.guard_upload(&self.key, now).await?;
        self.armed = true;
        Ok(())
    }

    /// The blob is now a row's (a multipart upload's part): it stays.
    pub(crate) fn keep(&mut self) {
        self.armed = false;
    }

    /// The upload was refused: delete the blob now (if one was written).
    pub(crate) async fn discard(&mut self) {
        if self.armed {
            delete_blob_now(&self.app, &self.key).await;
            self.armed = false;
        }
    }

    /// The commit failed, maybe after all: the blob's deletion is queued
    /// (a little later), and the queue deletes it only if no file took it.
    /// Should the queue be out of reach too, the guard stays for the
    /// collector (and `Drop` tries once more).
    pub(crate) async fn defer(&mut self) {
        if self.armed {
            let due = deferred(&self.app);
            if self
                .app
                .meta
                .schedule_blob_deletion(&self.key, due)
                .await
                .is_ok()
            {
                self.armed = false;
            }
        }
    }
}

/// When a blob left by an upload that did not commit is deleted: after any
/// write still in flight has finished.
fn deferred(app: &App) -> i64 {
    app.clock.now_ms() + 30_000
}

impl Drop for PendingBlob {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (app, key) = (self.app.clone(), std::mem::take(&mut self.key));
        let due = deferred(&app);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = app.meta.schedule_blob_deletion(&key, due).await;
            });
        }
    }
}
