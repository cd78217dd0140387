//! The background scrub (CONTRACT §20, `[storage] scrub_rate`): re-reads
//! every file's blob at that many bytes a second, checks it against its
//! size and SHA-256 (`integrity::check`, the one check `admin verify`
//! makes too) and marks a file whose bytes are missing or no longer match
//! `damaged`; one whose bytes match again loses its mark.
//!
//! Files go in id order, a batch at a time; the place is kept in the
//! database with the turn (`IntegrityRepo::scrub_turn`): on several nodes
//! one scrubs at a time (the store is shared: each reading it all would
//! multiply the load by the nodes), renewing its lease as it goes, and
//! another takes over from the same place once the lease ran out or its
//! node is gone. A node without the turn asks again every [`TURN_RETRY`].
//! A pass over every file is followed by a pause of [`PASS_PAUSE`].

use super::integrity::{self, Pace};
use super::App;
use std::sync::Arc;
use std::time::Duration;

/// Files read per database query.
const BATCH: u32 = 100;
/// How long a node's turn lasts unless renewed.
const LEASE: Duration = Duration::from_mins(1);
/// How often a node's turn is renewed at least while it scrubs.
const RENEW: Duration = Duration::from_secs(20);
/// How often a node without the turn asks for it.
const TURN_RETRY: Duration = Duration::from_secs(30);
/// The pause after a pass over every file, or after an error.
const PASS_PAUSE: Duration = Duration::from_secs(5);

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Starts the scrub at `storage.scrub_rate` (none when it is 0); it runs
/// until aborted.
pub(crate) fn spawn(app: Arc<App>) -> Option<tokio::task::JoinHandle<()>> {
    let rate = app.config.storage.scrub_rate();
    if rate == 0 {
        return None;
    }
    tracing::info!(rate, "scrub: re-reading blobs in the background");
    Some(tokio::spawn(async move {
        loop {
            let pause = match turn(&app, rate).await {
                Ok(true) => PASS_PAUSE,
                Ok(false) => TURN_RETRY,
                Err(e) => {
                    tracing::warn!(error = %e, "scrub: paused; will retry");
                    PASS_PAUSE
                }
            };
            tokio::time::sleep(pause).await;
        }
    }))
}

/// One turn: takes it, then checks files from the turn's place until
/// every file was checked (true) or the turn went to another node
/// (false: so did it when another has it).
async fn turn(app: &App, rate: u64) -> Result<bool, String> {
    let lease = ms(LEASE);
    let Some(mut after) = app
        .meta
        .scrub_turn(app.clock.now_ms(), lease)
        .await
        .map_err(|e| e.to_string())?
    else {
        return Ok(false);
    };
    let mut pace = Pace::new(rate);
    let mut renewed = tokio::time::Instant::now();
    loop {
        let rows = app
            .meta
            .files_after(&after, BATCH)
            .await
            .map_err(|e| e.to_string())?;
        let Some(last) = rows.last() else {
            // A pass is done: the next starts from the beginning.
            let kept = app.meta.scrub_moved("", app.clock.now_ms(), lease).await;
            kept.map_err(|e| e.to_string())?;
            return Ok(true);
        };
        let last = last.id.clone();
        for row in rows.iter().filter(|r| !r.inline) {
            let (found, crc32) = integrity::check_crc(&*app.store, row, &mut pace)
                .await
                .map_err(|e| format!("file {}: {e}", row.id))?;
            integrity::record(app, row, &found).await;
            integrity::learned(&*app.meta, row, crc32).await;
            metrics::counter!("filestore_scrub_bytes_total").increment(row.size);
            if renewed.elapsed() >= RENEW {
                renewed = tokio::time::Instant::now();
                let now = app.clock.now_ms();
                if !app
                    .meta
                    .scrub_moved(&row.id, now, lease)
                    .await
                    .map_err(|e| e.to_string())?
                {
                    return Ok(false);
                }
            }
        }
        after = last;
        let now = app.clock.now_ms();
        let kept = app.meta.scrub_moved(&after, now, lease).await;
        if !kept.map_err(|e| e.to_string())? {
            return Ok(false);
        }
        renewed = tokio::time::Instant::now();
    }
}
