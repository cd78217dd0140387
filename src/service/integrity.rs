//! Whether a file's stored bytes are still its own (CONTRACT §20): the one
//! check of a blob against its file's size and SHA-256 ([`check`]) that
//! the scrub, `admin verify` and its `--repair-from` share; the `damaged`
//! mark ([`mark`]) and the error a read of a damaged file gets
//! ([`damaged`]); and the stream a whole-file read goes through
//! ([`Verified`]), which checks the bytes as they go and holds its last
//! chunk back until they are found whole: a mismatch ends the body with an
//! error before its last byte (the connection is cut, no client takes it
//! whole) and marks the file.
//!
//! A whole read checks a file's CRC-32 once one is known, its SHA-256
//! until then: the CRC is recorded by the first read whose bytes matched
//! the SHA-256 (a download, the scrub, `admin verify`). SHA-256 runs at
//! about 1.7 GB/s a core here, CRC-32 at about 43: checking every download
//! by SHA-256 held large downloads to a third of their speed (run.sh A/B,
//! docs/decisions.md "Checking every download"). Bit rot is random, which
//! a CRC-32 catches (all bursts up to 32 bits, any other change but one
//! in 2^32); a write with intent to deceive it needs access to the blob
//! store, which the SHA-256 of the scrub and `admin verify` still sees.

use super::error::ServiceError;
use super::App;
use crate::db::model::FileRow;
use crate::db::{DbError, MetaStore};
use crate::storage::{BlobStore, BlobStream, StorageError};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sha2::{Digest, Sha256};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// The 500 a read of a damaged file gets, naming the way to repair it.
pub(crate) fn damaged(row: &FileRow) -> ServiceError {
    ServiceError::Damaged(format!(
        "the stored bytes of file {} are damaged (missing, or not matching its SHA-256); \
         an operator puts them back with `filestore admin verify --repair-from BACKUP`",
        row.id
    ))
}

/// Marks `row`'s file damaged (`why` goes to the log) and forgets what this
/// node's CDN kept of it; the mark's first time stays.
pub(crate) async fn mark(app: &App, row: &FileRow, why: &str) {
    app.recent.forget(&row.account_id, &row.id);
    let finding = Finding::Damaged(why.to_string());
    if let Err(e) = settle(&*app.meta, row, &finding, app.clock.now_ms()).await {
        tracing::error!(file = %row.id, error = %e, why, "a damaged file not marked");
    }
}

/// Records `finding` of `row`'s file in the metadata at `now`: a missing
/// or damaged blob marks it (a mark's first time stays), sound bytes clear
/// a mark it had (put back by hand, or marked on a read the store got
/// wrong). Shared by reads, the scrub and `admin verify`.
pub(crate) async fn settle(
    meta: &dyn MetaStore,
    row: &FileRow,
    finding: &Finding,
    now: i64,
) -> Result<(), DbError> {
    match finding {
        Finding::Sound if row.damaged_at.is_some() => {
            if meta.clear_damaged(&row.id).await? {
                tracing::info!(file = %row.id, "its bytes match again: damaged mark cleared");
            }
        }
        Finding::Sound => {}
        Finding::Missing | Finding::Damaged(_) => {
            if meta.mark_damaged(&row.id, now).await? {
                metrics::counter!("filestore_damaged_found_total").increment(1);
                let why = match finding {
                    Finding::Damaged(why) => why.as_str(),
                    _ => "its blob is missing",
                };
                tracing::error!(file = %row.id, blob = %row.blob_key, why, "file marked damaged");
            }
        }
    }
    Ok(())
}

/// [`settle`] on this node: what its CDN kept of the file is forgotten.
/// True when the file is damaged now.
pub(crate) async fn record(app: &App, row: &FileRow, finding: &Finding) -> bool {
    if *finding != Finding::Sound || row.damaged_at.is_some() {
        app.recent.forget(&row.account_id, &row.id);
    }
    if let Err(e) = settle(&*app.meta, row, finding, app.clock.now_ms()).await {
        tracing::warn!(file = %row.id, error = %e, "a finding of the scrub not recorded");
    }
    *finding != Finding::Sound
}

/// What [`check`] found of a file's blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    /// Its bytes are the file's (or it has no blob: inline).
    Sound,
    /// The store has no such blob.
    Missing,
    /// The blob's size or SHA-256 is not the file's.
    Damaged(String),
}

/// Reads at most `rate` bytes a second (0: as fast as the store gives).
#[derive(Debug)]
pub(crate) struct Pace {
    rate: u64,
    started: tokio::time::Instant,
    read: u64,
}

impl Pace {
    pub(crate) fn new(rate: u64) -> Pace {
        Pace {
            rate,
            started: tokio::time::Instant::now(),
            read: 0,
        }
    }

    /// `n` more bytes were read: waits until they are within the rate.
    pub(crate) async fn took(&mut self, n: usize) {
        self.read += n as u64;
        if self.rate == 0 {
            return;
        }
        // Whole nanoseconds: exact for any rate (no float rounding).
        let nanos = u128::from(self.read) * 1_000_000_000 / u128::from(self.rate);
        let due = Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX));
        tokio::time::sleep_until(self.started + due).await;
    }
}

/// Whether `row`'s blob holds its bytes: its size, then every byte read
/// (at `pace`) and hashed against its SHA-256. An error reading it (the
/// store away) is no finding: the caller tries again later.
pub(crate) async fn check(
    store: &dyn BlobStore,
    row: &FileRow,
    pace: &mut Pace,
) -> Result<Finding, StorageError> {
    Ok(check_crc(store, row, pace).await?.0)
}

/// [`check`], and the CRC-32 of bytes found sound (for [`learned`]).
pub(crate) async fn check_crc(
    store: &dyn BlobStore,
    row: &FileRow,
    pace: &mut Pace,
) -> Result<(Finding, Option<u32>), StorageError> {
    if row.inline {
        return Ok((Finding::Sound, None));
    }
    let size = match store.size(&row.blob_key).await? {
        None => return Ok((Finding::Missing, None)),
        Some(n) if n != row.size => {
            let why = format!("its blob holds {n} bytes, not {}", row.size);
            return Ok((Finding::Damaged(why), None));
        }
        Some(n) => n,
    };
    let mut stream = match store.get(&row.blob_key, 0, size).await {
        Err(StorageError::NotFound(_)) => return Ok((Finding::Missing, None)),
        other => other?,
    };
    let mut hash = Sha256::new();
    let mut crc = crc32fast::Hasher::new();
    let mut read = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                let why = format!("its blob ends early: {e}");
                return Ok((Finding::Damaged(why), None));
            }
            Err(e) => return Err(e.into()),
        };
        read += chunk.len() as u64;
        hash.update(&chunk);
        crc.update(&chunk);
        pace.took(chunk.len()).await;
    }
    let sha256 = hex::encode(hash.finalize());
    Ok(if read != row.size {
        let why = format!("its blob gave {read} bytes, not {}", row.size);
        (Finding::Damaged(why), None)
    } else if sha256 != row.sha256 {
        let why = format!("its blob's SHA-256 is {sha256}, not {}", row.sha256);
        (Finding::Damaged(why), None)
    } else {
        (Finding::Sound, Some(crc.finalize()))
    })
}

/// Records `crc32`, of `row`'s bytes just found sound, when its file had
/// none (what its whole downloads check from then on).
pub(crate) async fn learned(meta: &dyn MetaStore, row: &FileRow, crc32: Option<u32>) {
    let Some(crc32) = crc32.filter(|_| row.crc32.is_none()) else {
        return;
    };
    if let Err(e) = meta.record_crc32(&row.id, crc32).await {
        tracing::warn!(file = %row.id, error = %e, "a file's CRC-32 not recorded");
    }
}

/// How a whole read checks its bytes: against the file's CRC-32 when one
/// is known, else its SHA-256 (the CRC taken beside it, to record).
enum Check {
    Crc(crc32fast::Hasher),
    Sha(Box<Sha256>, crc32fast::Hasher),
}

/// A whole file's bytes as the store streams them, checked as they pass
/// ([`Check`]): the chunk that completes the file's size is handed on only
/// once all of them are found to be the file's. A mismatch, a blob that
/// ends early or gives more ends the body with an error in its place (hyper
/// then cuts the connection: the client never has the whole, and a
/// `Content-Length` says it is short) and marks the file damaged.
pub(crate) struct Verified {
    inner: BlobStream,
    digest: Option<Check>,
    left: u64,
    /// What marks the file when its bytes are found wrong.
    on_damage: Option<(Arc<App>, FileRow)>,
}

impl Verified {
    /// `inner`, the whole of `row`'s blob.
    pub(crate) fn new(inner: BlobStream, app: Arc<App>, row: FileRow) -> Verified {
        let digest = match row.crc32 {
            Some(_) => Check::Crc(crc32fast::Hasher::new()),
            None => Check::Sha(Box::new(Sha256::new()), crc32fast::Hasher::new()),
        };
        Verified {
            inner,
            digest: Some(digest),
            left: row.size,
            on_damage: Some((app, row)),
        }
    }

    /// The error ending the body, the file marked (once).
    fn damaged(&mut self, why: &str) -> std::io::Error {
        if let Some((app, row)) = self.on_damage.take() {
            let marked = why.to_string();
            tokio::spawn(async move { mark(&app, &row, &marked).await });
        }
        self.digest = None;
        std::io::Error::other(format!("stored bytes damaged: {why}"))
    }

    /// Why the bytes read are not the file's (None: they are), once all
    /// are read; a CRC-32 learned on the way is recorded.
    fn mismatch(&mut self) -> Option<String> {
        let (app, row) = self.on_damage.take()?;
        match self.digest.take()? {
            Check::Crc(crc) => {
                let (got, want) = (crc.finalize(), row.crc32.unwrap_or_default());
                if got == want {
                    return None;
                }
                self.on_damage = Some((app, row));
                Some(format!(
                    "its CRC-32 is {got:08x}, not {want:08x} (recorded when its SHA-256 matched)"
                ))
            }
            Check::Sha(sha, crc) => {
                let sha256 = hex::encode(sha.finalize());
                if sha256 != row.sha256 {
                    let why = format!("its SHA-256 is {sha256}, not {}", row.sha256);
                    self.on_damage = Some((app, row));
                    return Some(why);
                }
                let crc32 = crc.finalize();
                tokio::spawn(async move {
                    learned(&*app.meta, &row, Some(crc32)).await;
                    // What this node's CDN kept of the file has no CRC yet.
                    app.recent.forget(&row.account_id, &row.id);
                });
                None
            }
        }
    }
}

impl Stream for Verified {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(digest) = this.digest.as_mut() else {
            return Poll::Ready(None);
        };
        match this.inner.poll_next_unpin(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                let n = chunk.len() as u64;
                if n > this.left {
                    return Poll::Ready(Some(Err(this.damaged("its blob gives more bytes"))));
                }
                match digest {
                    Check::Crc(crc) => crc.update(&chunk),
                    Check::Sha(sha, crc) => {
                        sha.update(&chunk);
                        crc.update(&chunk);
                    }
                }
                this.left -= n;
                if this.left > 0 {
                    return Poll::Ready(Some(Ok(chunk)));
                }
                match this.mismatch() {
                    None => Poll::Ready(Some(Ok(chunk))),
                    Some(why) => Poll::Ready(Some(Err(this.damaged(&why)))),
                }
            }
            Poll::Ready(Some(Err(e))) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Poll::Ready(Some(
                    Err(this.damaged(&format!("its blob ends early: {e}"))),
                ))
            }
            Poll::Ready(Some(Err(e))) => {
                this.digest = None;
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) if this.left > 0 => {
                let why = format!("its blob ends {} bytes early", this.left);
                Poll::Ready(Some(Err(this.damaged(&why))))
            }
            Poll::Ready(None) => Poll::Ready(None),
        }
    }
}
