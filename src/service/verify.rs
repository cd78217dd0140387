//! `filestore admin verify` (CONTRACT §20): every file's blob is there and
//! holds its bytes (`integrity::check`, the scrub's check), at most `rate`
//! bytes a second; what is missing or damaged is marked so (the CDN and the
//! S3 door then answer 500 `damaged`), a mark on bytes that match again is
//! cleared. Orphans are blobs the store holds that nothing in the metadata
//! names (a file, a variant, an upload, a part, a pending deletion): listed,
//! never removed.

use super::integrity::{self, Finding, Pace};
use crate::db::{FileRow, MetaStore};
use crate::domain::filepath;
use crate::storage::{BlobStore, StorageError};
use std::collections::HashSet;

/// Files read per database query.
const BATCH: u32 = 500;

/// A file `verify` names.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct FileRef {
    pub id: String,
    /// `folder/name`.
    pub path: String,
}

/// A blob nothing names.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct Orphan {
    pub blob: String,
}

/// What `verify` found: `files` and `bytes` checked.
#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    pub files: u64,
    pub bytes: u64,
    pub missing: Vec<FileRef>,
    pub damaged: Vec<FileRef>,
    pub orphaned: Vec<Orphan>,
    /// With `--repair-from`: the files put back (no longer in `missing`
    /// or `damaged`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repaired: Option<Vec<FileRef>>,
    /// The rows of the files in `missing` and `damaged` (what a repair
    /// puts back).
    #[serde(skip)]
    pub(crate) bad: Vec<FileRow>,
}

impl Report {
    /// Every file there and whole (orphans are no damage).
    pub fn clean(&self) -> bool {
        self.missing.is_empty() && self.damaged.is_empty()
    }
}

/// Why `verify` could not finish.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
    #[error("blob store: {0}")]
    Store(#[from] StorageError),
    /// The backup a repair reads from failed.
    #[error("reading the backup: {0}")]
    Source(String),
}

/// Checks every file of `meta` against `store` at `rate` bytes a second (0:
/// as fast as it reads), marking what it finds at `now()`, then lists the
/// orphans.
pub async fn verify(
    meta: &dyn MetaStore,
    store: &dyn BlobStore,
    rate: u64,
    now: impl Fn() -> i64,
) -> Result<Report, VerifyError> {
    // Listed first: a blob written meanwhile is named by the metadata read
    // after the files, and one deleted meanwhile is looked at again.
    let listed = store.keys().await?;
    let mut report = Report::default();
    let mut pace = Pace::new(rate);
    let mut after = String::new();
    loop {
        let rows = meta.files_after(&after, BATCH).await?;
        let Some(last) = rows.last() else { break };
        after.clone_from(&last.id);
        for row in &rows {
            let (finding, crc32) = integrity::check_crc(store, row, &mut pace).await?;
            integrity::learned(meta, row, crc32).await;
            report.files += 1;
            report.bytes += row.size;
            if finding != Finding::Sound && !still_there(meta, row).await? {
                // Deleted while it was checked: its blob went with it.
                continue;
            }
            integrity::settle(meta, row, &finding, now()).await?;
            let named = || FileRef {
                id: row.id.clone(),
                path: filepath::join(row.folder.as_deref(), &row.name),
            };
            match finding {
                Finding::Sound => continue,
                Finding::Missing => report.missing.push(named()),
                Finding::Damaged(_) => report.damaged.push(named()),
            }
            report.bad.push(row.clone());
        }
    }
    let known: HashSet<String> = meta.known_blobs().await?.into_iter().collect();
    for blob in listed {
        if !known.contains(&blob) && store.size(&blob).await?.is_some() {
            report.orphaned.push(Orphan { blob });
        }
    }
    report.orphaned.sort_by(|a, b| a.blob.cmp(&b.blob));
    Ok(report)
}

/// Whether `row`'s file is still in the metadata (expired or not).
pub(crate) async fn still_there(meta: &dyn MetaStore, row: &FileRow) -> Result<bool, VerifyError> {
    Ok(meta
        .file(&row.account_id, &row.id, i64::MIN)
        .await?
        .is_some())
}
