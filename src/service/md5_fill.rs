//! MD5s filled in after the fact (docs/decisions.md, "MD5 after the fact").
//!
//! A file spooled to disk, or written by a resumable upload, commits with its
//! SHA-256 and without its MD5: streaming both would double what an upload
//! costs in CPU (MD5 runs at about a third of SHA-NI's speed), for a value
//! only the S3 door's ETag shows. This task reads such a file's bytes again
//! on a thread of the lowest CPU priority (nice 19: it runs on what uploads
//! and downloads leave), checks them against the stored SHA-256 and records
//! the MD5. Bytes that no longer match are left without one and reported
//! (the scrub of CONTRACT §20 will say more); the file is tried again after a
//! restart.
//!
//! It is woken by each such commit on this node and otherwise looks every
//! [`POLL`] (another node's uploads, files from before MD5s were kept).

use super::spool::Hashes;
use super::App;
use crate::db::model::FileRow;
use bytes::Bytes;
use futures_util::StreamExt;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, Notify};

/// Files read per database query.
const BATCH: u32 = 100;
/// How long the task waits when nothing wakes it.
pub(crate) const POLL: Duration = Duration::from_secs(30);
/// Chunks queued for the hashing thread (a few MiB at most).
const QUEUE: usize = 4;

/// Wakes the task (held by the [`App`]).
#[derive(Debug, Default)]
pub(crate) struct Fill {
    wake: Notify,
}

impl Fill {
    /// A file without an MD5 committed: look soon.
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }
}

/// Starts the task; it runs until aborted.
pub(crate) fn spawn(app: Arc<App>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let hasher = match IdleHasher::start() {
            Ok(h) => h,
            Err(e) => {
                tracing::error!(error = %e, "the MD5 fill cannot start its thread; MD5s stay unknown");
                return;
            }
        };
        let mut skip = HashSet::new();
        loop {
            pass(&app, &hasher, &mut skip).await;
            tokio::select! {
                () = app.md5_fill.wake.notified() => {}
                () = tokio::time::sleep(POLL) => {}
            }
        }
    })
}

/// One pass of its own, beside the task's (for tests): (files filled, files
/// whose bytes could not be read or no longer match).
pub async fn pass_once(app: &App) -> std::io::Result<(usize, usize)> {
    let hasher = IdleHasher::start()?;
    let mut refused = HashSet::new();
    let filled = pass(app, &hasher, &mut refused).await;
    Ok((filled, refused.len()))
}

/// One pass over the files without an MD5, skipping those in `skip` (their
/// bytes could not be read or no longer match) and adding to it. Returns the
/// number filled.
async fn pass(app: &App, hasher: &IdleHasher, skip: &mut HashSet<String>) -> usize {
    let mut after = String::new();
    let mut filled = 0;
    loop {
        let rows = match app.meta.md5_pending(&after, BATCH).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "MD5 fill: files not listed; will retry");
                return filled;
            }
        };
        let Some(last) = rows.last() else {
            return filled;
        };
        after.clone_from(&last.id);
        for row in rows {
            if skip.contains(&row.id) {
                continue;
            }
            match fill_one(app, hasher, &row).await {
                Ok(true) => filled += 1,
                Ok(false) => {}
                Err(why) => {
                    // A file deleted while it was read is no news.
                    let now = app.clock.now_ms();
                    if let Ok(Some(_)) = app.meta.file(&row.account_id, &row.id, now).await {
                        tracing::warn!(file = %row.id, why, "MD5 not filled");
                    }
                    skip.insert(row.id);
                }
            }
        }
    }
}

/// Reads one file's bytes through the hashing thread and records its MD5
/// when they match its SHA-256.
async fn fill_one(app: &App, hasher: &IdleHasher, row: &FileRow) -> Result<bool, String> {
    let job = hasher.begin().await?;
    if row.inline {
        // Live or not: an expired file keeps its row until it is reaped.
        let bytes = match app
            .meta
            .file_with_data(&row.account_id, &row.id, i64::MIN)
            .await
        {
            Ok(Some((_, Some(data)))) => data,
            Ok(_) => return Err("its inline bytes are gone".into()),
            Err(e) => return Err(e.to_string()),
        };
        job.feed(Bytes::from(bytes)).await?;
    } else if row.size > 0 {
        let mut stream = app
            .store
            .get(&row.blob_key, 0, row.size)
            .await
            .map_err(|e| e.to_string())?;
        while let Some(chunk) = stream.next().await {
            job.feed(chunk.map_err(|e| e.to_string())?).await?;
        }
    }
    let (size, sha256, md5) = job.finish().await?;
    let md5 = md5.ok_or("the hashing thread took no MD5")?;
    if size != row.size || sha256 != row.sha256 {
        return Err(format!(
            "its stored bytes ({size} bytes, SHA-256 {sha256}) no longer match the file's"
        ));
    }
    let filled = app
        .meta
        .md5_found(&row.id, &row.sha256, &md5)
        .await
        .map_err(|e| e.to_string())?;
    if filled {
        metrics::counter!("filestore_md5_filled_total").increment(1);
    }
    Ok(filled)
}

enum Msg {
    Begin,
    Chunk(Bytes),
    Finish(oneshot::Sender<(u64, String, Option<String>)>),
}

/// The thread that hashes, at nice 19.
struct IdleHasher {
    tx: mpsc::Sender<Msg>,
}

/// One file's bytes on their way to the thread.
struct Job<'a> {
    tx: &'a mpsc::Sender<Msg>,
}

const GONE: &str = "the hashing thread stopped";

impl IdleHasher {
    fn start() -> std::io::Result<IdleHasher> {
        let (tx, mut rx) = mpsc::channel(QUEUE);
        std::thread::Builder::new()
            .name("md5-fill".into())
            .spawn(move || {
                lowest_priority();
                let (mut size, mut hashes) = (0u64, Hashes::new());
                while let Some(msg) = rx.blocking_recv() {
                    match msg {
                        Msg::Begin => (size, hashes) = (0, Hashes::new()),
                        Msg::Chunk(b) => {
                            size += b.len() as u64;
                            hashes.update(&b);
                        }
                        Msg::Finish(reply) => {
                            let (sha256, md5) =
                                std::mem::replace(&mut hashes, Hashes::new()).finish();
                            let _ = reply.send((size, sha256, md5));
                        }
                    }
                }
            })?;
        Ok(IdleHasher { tx })
    }

    async fn begin(&self) -> Result<Job<'_>, String> {
        self.tx.send(Msg::Begin).await.map_err(|_| GONE)?;
        Ok(Job { tx: &self.tx })
    }
}

impl Job<'_> {
    async fn feed(&self, chunk: Bytes) -> Result<(), String> {
        Ok(self.tx.send(Msg::Chunk(chunk)).await.map_err(|_| GONE)?)
    }

    /// (size, hex SHA-256, hex MD5) of what was fed.
    async fn finish(self) -> Result<(u64, String, Option<String>), String> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(Msg::Finish(reply)).await.map_err(|_| GONE)?;
        Ok(answer.await.map_err(|_| GONE)?)
    }
}

/// This thread at nice 19 (on Linux the nice value is a thread's own).
fn lowest_priority() {
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(None, 19) {
        tracing::debug!(error = %e, "MD5 fill runs at normal priority");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_thread_hashes_each_job_from_its_beginning() {
        let h = IdleHasher::start().unwrap();
        // A job abandoned half-way leaves nothing in the next one.
        let job = h.begin().await.unwrap();
        job.feed(Bytes::from_static(b"abandoned")).await.unwrap();
        let job = h.begin().await.unwrap();
        job.feed(Bytes::from_static(b"hello ")).await.unwrap();
        job.feed(Bytes::from_static(b"world")).await.unwrap();
        let (size, sha, md5) = job.finish().await.unwrap();
        assert_eq!(size, 11);
        assert_eq!(
            sha,
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
        assert_eq!(md5.as_deref(), Some("5eb63bbbe01eeed093cb22bb8f5acdc3"));
        let (size, _, md5) = h.begin().await.unwrap().finish().await.unwrap();
        assert_eq!(
            (size, md5.as_deref()),
            (0, Some("d41d8cd98f00b204e9800998ecf8427e"))
        );
    }
}
