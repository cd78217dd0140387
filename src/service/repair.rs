//! `filestore admin verify --repair-from SRC` (CONTRACT §20): the files
//! `verify` found missing or damaged get their bytes back from a backup
//! (any source of checked blobs by SHA-256: the CLI passes `backup::Source`),
//! are checked again in the store, and lose their mark.

use super::integrity::{self, Finding, Pace};
use super::verify::{still_there, FileRef, Report, VerifyError};
use crate::db::{FileRow, MetaStore};
use crate::storage::BlobStore;
use std::future::Future;

/// Puts back every file of `report` found missing or damaged whose bytes
/// `fetch(sha256, size)` gives (an fsynced file whose bytes it checked;
/// None when the backup has no such blob, an error when it cannot be
/// read): the blob is written under the file's key, read back and checked,
/// and the file's mark cleared. The files put back move from `missing` and
/// `damaged` to `repaired`; the others stay.
pub(crate) async fn repair<F, Fut>(
    meta: &dyn MetaStore,
    store: &dyn BlobStore,
    report: &mut Report,
    fetch: F,
) -> Result<(), VerifyError>
where
    F: Fn(String, u64) -> Fut,
    Fut: Future<Output = Result<Option<tempfile::TempPath>, String>>,
{
    let mut repaired = Vec::new();
    for row in std::mem::take(&mut report.bad) {
        let Some(spool) = fetch(row.sha256.clone(), row.size)
            .await
            .map_err(VerifyError::Source)?
        else {
            tracing::warn!(file = %row.id, sha256 = %row.sha256, "not in the backup: not repaired");
            report.bad.push(row);
            continue;
        };
        let put = put_back(meta, store, &row, spool).await?;
        if put == Put::Wrong {
            report.bad.push(row);
            continue;
        }
        report.missing.retain(|f| f.id != row.id);
        report.damaged.retain(|f| f.id != row.id);
        if put == Put::Back {
            repaired.push(FileRef {
                id: row.id.clone(),
                path: crate::domain::filepath::join(row.folder.as_deref(), &row.name),
            });
        }
    }
    report.repaired = Some(repaired);
    Ok(())
}

/// What [`put_back`] did.
#[derive(Debug, PartialEq, Eq)]
enum Put {
    /// The blob holds the file's bytes again; its mark is cleared.
    Back,
    /// The file was deleted meanwhile: nothing to repair (and no blob left
    /// behind).
    Gone,
    /// Read back, the blob still is not the file's.
    Wrong,
}

/// Writes `spool` as `row`'s blob and checks it there.
async fn put_back(
    meta: &dyn MetaStore,
    store: &dyn BlobStore,
    row: &FileRow,
    spool: tempfile::TempPath,
) -> Result<Put, VerifyError> {
    if !still_there(meta, row).await? {
        return Ok(Put::Gone);
    }
    store.put_file(&row.blob_key, spool, row.size).await?;
    if !still_there(meta, row).await? {
        // Deleted while it was written: its deletion may have come first.
        store.delete(&row.blob_key).await?;
        return Ok(Put::Gone);
    }
    match integrity::check(store, row, &mut Pace::new(0)).await? {
        Finding::Sound => {
            meta.clear_damaged(&row.id).await?;
            tracing::info!(file = %row.id, "repaired from the backup: damaged mark cleared");
            Ok(Put::Back)
        }
        other => {
            tracing::error!(file = %row.id, finding = ?other, "put back, yet still not its bytes");
            Ok(Put::Wrong)
        }
    }
}
