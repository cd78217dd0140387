//! Deleting a queued blob: at once when a file or an upload lets go of it,
//! and, should the store fail, again later with backoff (by the collector).

use super::App;
use crate::domain::backoff::Backoff;
use std::time::Duration;

/// Failed blob deletions are retried after 1 s, doubling up to 1 h.
const RETRY: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_hours(1));

/// Deletes a queued blob now (a file just deleted, an upload that failed);
/// on failure it stays queued and the collector retries it with backoff.
pub(crate) async fn delete_blob_now(app: &App, key: &str) {
    if held(app).await {
        wait_for_hold(app, key).await;
        return;
    }
    delete_queued(app, key.to_string(), 0).await;
}

/// Leaves a held blob queued, due now: the collector's first pass after
/// the hold ends deletes it (not the deletion lease's minutes later).
pub(crate) async fn wait_for_hold(app: &App, key: &str) {
    let now = app.clock.now_ms();
    if let Err(e) = app.meta.schedule_blob_deletion(key, now).await {
        tracing::warn!(key, error = %e, "a held blob not requeued; deleted when its lease ends");
    }
}

/// Whether a backup holds blob deletions now (`admin backup`): its snapshot
/// may hold files deleted since, whose blobs it has yet to copy. Read after
/// the deletion's row was committed, so a hold taken before a snapshot that
/// still saw the file is seen; queued blobs wait for the collector's first
/// pass after the hold ends. A failed read holds too.
pub(crate) async fn held(app: &App) -> bool {
    match app.meta.blobs_held(app.clock.now_ms()).await {
        Ok(held) => held,
        Err(e) => {
            tracing::warn!(error = %e, "backup holds not read; blob deletions wait");
            true
        }
    }
}

/// Deletes a queued blob and forgets it; on failure records the error and
/// when to try again (backoff doubling from 1 s to 1 h with `attempts`).
/// True when the blob is gone and forgotten.
pub(crate) async fn delete_queued(app: &App, key: String, attempts: u32) -> bool {
    match app.store.delete(&key).await {
        Ok(()) => app.meta.blob_deleted(&key).await.is_ok(),
        Err(e) => {
            let wait = RETRY.step(attempts).as_millis();
            let retry_at = app.clock.now_ms() + i64::try_from(wait).unwrap_or(i64::MAX);
            let msg = e.to_string();
            tracing::warn!(key, attempts, error = %msg, "blob deletion failed; retrying later");
            let _ = app.meta.blob_deletion_failed(&key, retry_at, &msg).await;
            false
        }
    }
}
