//! Whether a file's stored bytes are still its own (CONTRACT §20): the one
//! check of a blob against its file's size and SHA-256 ([`check`]) that
//! the scrub, `admin verify` and its `--repair-from` share; the `damaged`
//! mark ([`mark`]) and the error a read of a damaged file gets
//! ([`damaged`]); and the stream a whole-file read goes through
//! ([`Verified`]), which hashes as it goes and holds its last chunk back
//! until the digest is checked: a mismatch ends the body with an error
//! before its last byte (the connection is cut, no client takes it whole)
//! and marks the file.

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
    if row.inline {
        return Ok(Finding::Sound);
    }
    let size = match store.size(&row.blob_key).await? {
        None => return Ok(Finding::Missing),
        Some(n) if n != row.size => {
            return Ok(Finding::Damaged(format!(
                "its blob holds {n} bytes, not {}",
                row.size
            )))
        }
        Some(n) => n,
    };
    let mut stream = match store.get(&row.blob_key, 0, size).await {
        Err(StorageError::NotFound(_)) => return Ok(Finding::Missing),
        other => other?,
    };
    let mut hash = Sha256::new();
    let mut read = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Ok(Finding::Damaged(format!("its blob ends early: {e}")))
            }
            Err(e) => return Err(e.into()),
        };
        read += chunk.len() as u64;
        hash.update(&chunk);
        pace.took(chunk.len()).await;
    }
    let sha256 = hex::encode(hash.finalize());
    Ok(if read != row.size {
        Finding::Damaged(format!("its blob gave {read} bytes, not {}", row.size))
    } else if sha256 != row.sha256 {
        Finding::Damaged(format!(
            "its blob's SHA-256 is {sha256}, not {}",
            row.sha256
        ))
    } else {
        Finding::Sound
    })
}

/// A whole file's bytes as the store streams them, hashed as they pass: the
/// chunk that completes the file's size is handed on only once the SHA-256
/// of all of them is the file's. A mismatch, a blob that ends early or
/// gives more ends the body with an error in its place (hyper then cuts
/// the connection: the client never has the whole, and a `Content-Length`
/// says it is short) and marks the file damaged.
pub(crate) struct Verified {
    inner: BlobStream,
    hash: Option<Sha256>,
    left: u64,
    /// What marks the file when its bytes are found wrong.
    on_damage: Option<(Arc<App>, FileRow)>,
}

impl Verified {
    /// `inner`, the whole of `row`'s blob.
    pub(crate) fn new(inner: BlobStream, app: Arc<App>, row: FileRow) -> Verified {
        Verified {
            inner,
            hash: Some(Sha256::new()),
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
        self.hash = None;
        std::io::Error::other(format!("stored bytes damaged: {why}"))
    }
}

impl Stream for Verified {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(hash) = this.hash.as_mut() else {
            return Poll::Ready(None);
        };
        match this.inner.poll_next_unpin(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                let n = chunk.len() as u64;
                if n > this.left {
                    return Poll::Ready(Some(Err(this.damaged("its blob gives more bytes"))));
                }
                hash.update(&chunk);
                this.left -= n;
                if this.left > 0 {
                    return Poll::Ready(Some(Ok(chunk)));
                }
                let Some((_, row)) = this.on_damage.as_ref() else {
                    return Poll::Ready(None);
                };
                let sha256 = hex::encode(this.hash.take().expect("hashing").finalize());
                if sha256 == row.sha256 {
                    this.on_damage = None;
                    Poll::Ready(Some(Ok(chunk)))
                } else {
                    let why = format!("its SHA-256 is {sha256}, not {}", row.sha256);
                    Poll::Ready(Some(Err(this.damaged(&why))))
                }
            }
            Poll::Ready(Some(Err(e))) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Poll::Ready(Some(
                    Err(this.damaged(&format!("its blob ends early: {e}"))),
                ))
            }
            Poll::Ready(Some(Err(e))) => {
                this.hash = None;
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
