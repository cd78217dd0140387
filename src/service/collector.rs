//! The background collector: removes expired files (row, bytes, then blob) and
//! works off the blob deletion queue, retrying failed deletions with backoff.
//! The blobs of uploads whose node died (on PostgreSQL, its session gone for
//! 30 s) join the queue and are deleted; deleting one also aborts what the blob
//! store holds of its write (an S3 multipart upload). A resumable upload's
//! partial blob is not the node's but its upload row's: another node may
//! resume it, and it goes when the upload ends or expires. An S3 multipart
//! upload with no new part for a day is aborted (its parts' blobs queued).
//! It runs once at start (files that expired while the server was down) and
//! then every `reap_interval`.

use super::blobs::delete_queued;
use super::tus;
use super::App;
use crate::domain::IDEMPOTENCY_WINDOW_MS;
use std::sync::Arc;
use std::time::Duration;

const BATCH: u32 = 500;
/// Writes interrupted inside the blob store (S3 multipart uploads) older than
/// this are swept; no upload takes that long between its parts.
pub(crate) const SWEEP_AGE: Duration = Duration::from_hours(24);
/// How often the sweep runs (and once at start).
pub(crate) const SWEEP_EVERY: Duration = Duration::from_hours(1);

/// Sweeps what interrupted writes left in the blob store.
pub(crate) async fn sweep(app: &App) {
    // Resumable uploads still open keep their writes, however old.
    let keep = match app.meta.live_upload_keys().await {
        Ok(keys) => keys.into_iter().collect(),
        Err(e) => {
            tracing::warn!(error = %e, "sweep of incomplete uploads skipped; will retry");
            return;
        }
    };
    match app.store.sweep_incomplete(SWEEP_AGE, &keep).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(n, "incomplete uploads removed from the blob store"),
        Err(e) => tracing::warn!(error = %e, "sweep of incomplete uploads failed; will retry"),
    }
}

/// How long an expired upload token is kept.
const TOKENS_KEPT_MS: i64 = 24 * 3600 * 1000;

/// One pass: expire what is due, then delete the blobs that are due.
/// Returns (files expired, blobs deleted).
pub(crate) async fn run_once(app: &App) -> (usize, usize) {
    let mut expired = 0;
    loop {
        let now = app.clock.now_ms();
        match app.meta.reap_expired_files(now, BATCH).await {
            Ok(rows) => {
                expired += rows.len();
                if !rows.is_empty() {
                    app.outbox.wake();
                }
                if rows.len() < BATCH as usize {
                    break;
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "expiry pass failed");
                break;
            }
        }
    }
    tus::reap(app).await;
    super::multipart::reap(app).await;
    let now = app.clock.now_ms();
    let _ = app
        .meta
        .prune_idempotency(now - IDEMPOTENCY_WINDOW_MS)
        .await;
    let _ = app.meta.prune_rate_windows(now).await;
    // A token is shown (`GET /v1/upload-tokens/{id}`) for a day after it
    // expires, then forgotten.
    let _ = app.meta.prune_tokens(now - TOKENS_KEPT_MS).await;
    match app.meta.expire_dead_node_guards(now).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(n, "blobs of uploads whose node died queued for deletion"),
        Err(e) => tracing::warn!(error = %e, "upload guards of dead nodes not checked; will retry"),
    }
    let due = match app.meta.due_blobs(now, BATCH).await {
        Ok(d) => d,
        Err(e) => {
            tracing::error!(error = %e, "blob queue read failed");
            return (expired, 0);
        }
    };
    // Read after the queue: a hold taken before any of its rows was queued is seen.
    if !due.is_empty() && super::blobs::held(app).await {
        for (key, _) in &due {
            super::blobs::wait_for_hold(app, key).await;
        }
        return (expired, 0);
    }
    let mut deleted = 0;
    for (key, attempts) in due {
        deleted += usize::from(delete_queued(app, key, attempts).await);
    }
    (expired, deleted)
}

/// Makes every upload guard left by a previous process due now (no upload
/// is in flight before the server starts).
pub(crate) async fn recover(app: &App) {
    let now = app.clock.now_ms();
    match app.meta.expire_upload_guards(now).await {
        Ok(n) if n > 0 => tracing::info!(n, "blobs of interrupted uploads queued for deletion"),
        Ok(_) => {}
        Err(e) => tracing::error!(error = %e, "recovery of upload guards failed"),
    }
}

/// How long a node enforces the plans it read (or the collector's
/// interval, if shorter): a plan applied anywhere holds on every node
/// within it. One read of a small table a second.
const PLANS_FRESH: Duration = Duration::from_secs(1);

/// Reads the plans back every [`PLANS_FRESH`] (or `every`, if shorter)
/// until the app is dropped by everyone else.
fn spawn_plans(app: &Arc<App>, every: Duration) {
    let weak = Arc::downgrade(app);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every.min(PLANS_FRESH));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(app) = weak.upgrade() else { return };
            app.reload_plans().await;
        }
    });
}

/// Runs the collector until the app is dropped by everyone else (and,
/// beside it, the reading of the plans).
pub(crate) fn spawn(app: Arc<App>, every: Duration) -> tokio::task::JoinHandle<()> {
    spawn_plans(&app, every);
    let weak = Arc::downgrade(&app);
    drop(app);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_sweep: Option<tokio::time::Instant> = None;
        let mut passes: u32 = 0;
        loop {
            tick.tick().await;
            let Some(app) = weak.upgrade() else { return };
            // The day's usage reading (`history`), every few passes: it
            // reads every account's counters.
            if passes.is_multiple_of(super::history::READING_EVERY) {
                super::history::snapshot(&app).await;
            }
            passes = passes.wrapping_add(1);
            if last_sweep.is_none_or(|t| t.elapsed() >= SWEEP_EVERY) {
                last_sweep = Some(tokio::time::Instant::now());
                sweep(&app).await;
                super::history::prune(&app).await;
            }
            let (expired, deleted) = run_once(&app).await;
            if expired + deleted > 0 {
                tracing::info!(expired, deleted, "collector pass");
            }
            let app = app.clone();
            let _ = tokio::task::spawn_blocking(move || app.disk.keep_room()).await;
        }
    })
}
