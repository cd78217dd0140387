//! A folder as a ZIP archive (docs/api.md, "Folder zip"): its live
//! files and its subfolders', paged through the metadata store, each one's
//! bytes from the row (inline) or streamed from the blob store, written as
//! STORED zip64 entries (`domain::zip`) to a small queue the response body
//! reads. Memory is bounded: a page of rows, a few chunks in the queue, and
//! one record per entry for the central directory (its name held once,
//! shared with the de-duplication set), for at most [`MAX_ENTRIES`]
//! entries, which is checked before the answer starts. The bytes sent count
//! as the account's bandwidth, as the CDN's do. The client going away ends
//! the work at the next chunk.

use super::cdn::Counted;
use super::error::ServiceError;
use super::App;
use crate::db::{FileRow, FolderFilter, ListFilter, PageAfter};
use crate::domain::paths::{self, Unique};
use crate::domain::validate;
use crate::domain::zip::ZipWriter;
use crate::storage::{BlobStream, StorageError};
use bytes::{Bytes, BytesMut};
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use std::future::Future;
use std::io;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Rows read from the metadata store at a time.
const PAGE: u32 = 500;
/// Rows read at a time while counting a large folder up front (counted,
/// then dropped: a few MB at most).
const COUNT_PAGE: u32 = 2_000;
/// Chunks written ahead of the connection.
const QUEUE: usize = 4;
/// Entries written between two yields to the runtime.
const YIELD_EVERY: usize = 256;
/// The most files one archive holds. What an archive keeps until its end
/// is about 100 bytes plus the entry's path per entry (docs/api.md): at
/// this cap that is about 15 MB with paths of ~40 bytes, about 110 MB at
/// most with the longest mixed-case paths (511 bytes, each also kept in
/// lower case for comparing), per request. 100,000 is also the scale the
/// folder delete is measured at; a larger tree is zipped a
/// subfolder at a time, or downloaded with `filestore download --folder`,
/// which needs no central directory.
pub(crate) const MAX_ENTRIES: usize = 100_000;

/// Folder archives one account may have being sent at once on a node: each
/// holds a few MiB of buffers for as long as its client reads, however
/// slowly, so the count is what bounds an account's share of memory.
pub(crate) const MAX_AT_ONCE: u64 = 4;

/// The archive of a folder: its file name and its bytes, as they are made.
pub(crate) struct FolderZip {
    /// `<last segment of the folder>.zip`.
    pub(crate) file_name: String,
    pub(crate) body: Counted<BoxStream<'static, io::Result<Bytes>>>,
}

/// Starts the archive of `folder` (required, not the root) and below: a
/// 400 for no folder or an invalid one, or one holding more than
/// [`MAX_ENTRIES`] live files; a 404 when no live file is in it or below.
/// Both are decided before answering: the first page of files is read,
/// and a folder with more than one page is counted to the cap.
pub(crate) async fn folder(
    app: &Arc<App>,
    account_id: &str,
    folder: Option<&str>,
) -> Result<FolderZip, ServiceError> {
    let folder = validate::folder(folder.unwrap_or(""))
        .map_err(ServiceError::BadRequest)?
        .ok_or_else(|| {
            ServiceError::bad_request("folder is required (the root cannot be zipped)")
        })?;
    // Held by the task that makes the archive: given back when it ends
    // (the archive sent, or its client gone).
    let slot = app
        .in_flight
        .archive_slot(account_id, MAX_AT_ONCE, app.clock.now().timestamp())?;
    let filter = ListFilter {
        folder: FolderFilter::Under(folder.clone()),
        metadata: Vec::new(),
    };
    let first = app
        .meta
        .page(account_id, &filter, None, PAGE, app.clock.now_ms())
        .await?;
    if first.is_empty() {
        return Err(ServiceError::NotFound(format!(
            "no file in folder {folder:?} or below"
        )));
    }
    let count = count_within(&first, PAGE, COUNT_PAGE, MAX_ENTRIES, |after, limit| {
        app.meta
            .page(account_id, &filter, Some(after), limit, app.clock.now_ms())
    })
    .await?;
    let Some(count) = count else {
        return Err(ServiceError::bad_request(too_many(&folder, MAX_ENTRIES)));
    };
    let file_name = format!("{}.zip", folder.rsplit('/').next().unwrap_or(&folder));
    let job = Job {
        app: app.clone(),
        account_id: account_id.to_string(),
        folder,
        filter: Some(filter),
        max_entries: MAX_ENTRIES,
    };
    Ok(job.start(first, count, slot, file_name))
}

fn too_many(folder: &str, max: usize) -> String {
    format!(
        "folder {folder:?} holds more than {max} files, the most one archive holds: \
         zip a subfolder, or use `filestore download --folder`"
    )
}

/// How many rows a listing holds, or None when more than `max`: `first` is
/// its first page (read with `first_limit`), `page(after, limit)` reads the
/// next up to `limit + 1` rows after `after` (the last one only saying there
/// are more). Pages are counted and dropped, and counting stops at the
/// first row past `max`: memory stays one page, and a huge folder costs at
/// most `max / limit` reads.
async fn count_within<F, Fut, E>(
    first: &[FileRow],
    first_limit: u32,
    limit: u32,
    max: usize,
    mut page: F,
) -> Result<Option<usize>, E>
where
    F: FnMut(PageAfter, u32) -> Fut,
    Fut: Future<Output = Result<Vec<FileRow>, E>>,
{
    let mut more = first.len() > first_limit as usize;
    let mut counted = first.len().min(first_limit as usize);
    let mut last = first[..counted].last().map(page_after);
    while more && counted <= max {
        let Some(from) = last else { break };
        let rows = page(from, limit).await?;
        more = rows.len() > limit as usize;
        let kept = rows.len().min(limit as usize);
        counted += kept;
        last = rows[..kept].last().map(page_after);
    }
    Ok((counted <= max).then_some(counted))
}

/// Where the page after `row` starts.
fn page_after(row: &FileRow) -> PageAfter {
    PageAfter {
        created_at: row.created_at,
        id: row.id.clone(),
    }
}

/// Why the archive stopped before its end.
enum Stop {
    /// The client went away.
    Gone,
    /// A store failed, or a blob is not the length of its file.
    Failed(io::Error),
}

fn failed(e: impl std::fmt::Display) -> Stop {
    Stop::Failed(io::Error::other(e.to_string()))
}

type Sender = mpsc::Sender<io::Result<Bytes>>;

async fn send(tx: &Sender, chunk: Bytes) -> Result<(), Stop> {
    if chunk.is_empty() {
        return Ok(());
    }
    tx.send(Ok(chunk)).await.map_err(|_| Stop::Gone)
}

/// Where an entry's bytes come from.
enum Source {
    Inline(Bytes),
    Blob(BlobStream),
}

/// The making of one archive.
pub(super) struct Job {
    pub(super) app: Arc<App>,
    pub(super) account_id: String,
    /// The entries' paths are relative to this folder ("": the root).
    pub(super) folder: String,
    /// Where the next pages come from; None: the rows given are all.
    pub(super) filter: Option<ListFilter>,
    /// Past this many entries the archive is cut off (the folder grew past
    /// the cap after it was counted): memory stays bounded.
    pub(super) max_entries: usize,
}

impl Job {
    /// Makes the archive in a task of its own, `first` its first rows and
    /// `count` the rows counted up front; `slot` (the account's place among
    /// archives at once) is held until it ends. The archive named
    /// `file_name`, its bytes as they are made.
    pub(super) fn start(
        self,
        first: Vec<FileRow>,
        count: usize,
        slot: impl Send + 'static,
        file_name: String,
    ) -> FolderZip {
        let (tx, rx) = mpsc::channel(QUEUE);
        let (app, account_id) = (self.app.clone(), self.account_id.clone());
        tokio::spawn(async move {
            let _slot = slot;
            if let Err(Stop::Failed(e)) = self.run(first, count, &tx).await {
                tracing::warn!(folder = %self.folder, error = %e, "zip archive cut off");
                // The connection is then cut: the client sees an incomplete body.
                let _ = tx.send(Err(e)).await;
            }
        });
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        })
        .boxed();
        FolderZip {
            file_name,
            body: Counted::new(stream, account_id, app),
        }
    }

    /// Writes every file, page after page (newest first, as `GET /v1/files`
    /// lists them), then the central directory. `count`: the files counted
    /// up front, room made for them.
    async fn run(&self, mut rows: Vec<FileRow>, count: usize, tx: &Sender) -> Result<(), Stop> {
        let count = count.min(self.max_entries);
        let mut zip = ZipWriter::with_capacity(count);
        let mut names = Unique::with_capacity(count);
        let mut seen = 0usize;
        loop {
            let more = self.filter.is_some() && rows.len() > PAGE as usize;
            if self.filter.is_some() {
                rows.truncate(PAGE as usize);
            }
            let after = rows.last().map(page_after);
            for row in rows {
                self.entry(&mut zip, &mut names, &row, tx).await?;
                seen += 1;
                if seen.is_multiple_of(YIELD_EVERY) {
                    // Entries skipped or small can all be ready at once:
                    // let the worker's other tasks run.
                    tokio::task::yield_now().await;
                }
            }
            let Some(filter) = self.filter.as_ref().filter(|_| more) else {
                break;
            };
            rows = self
                .app
                .meta
                .page(
                    &self.account_id,
                    filter,
                    after,
                    PAGE,
                    self.app.clock.now_ms(),
                )
                .await
                .map_err(failed)?;
        }
        // The names live on in the central directory's records only.
        drop(names);
        for (i, chunk) in zip.finish().enumerate() {
            send(tx, chunk).await?;
            if i % 16 == 15 {
                tokio::task::yield_now().await;
            }
        }
        Ok(())
    }

    /// Writes one file's entry; a file deleted since it was listed is skipped.
    async fn entry(
        &self,
        zip: &mut ZipWriter,
        names: &mut Unique,
        row: &FileRow,
        tx: &Sender,
    ) -> Result<(), Stop> {
        let Some(path) = paths::relative(&self.folder, row.folder.as_deref(), &row.name) else {
            return Ok(());
        };
        if names.len() >= self.max_entries {
            return Err(failed(too_many(&self.folder, self.max_entries)));
        }
        let Some(source) = self.open(row).await? else {
            return Ok(());
        };
        let name = names.claim_shared(&path);
        let header = zip.start(name, row.created_at);
        match source {
            Source::Inline(data) => {
                // Header, bytes and data descriptor in one chunk.
                zip.data(&data);
                let end = zip.end();
                let mut all = BytesMut::with_capacity(header.len() + data.len() + end.len());
                for part in [header, data, end] {
                    all.extend_from_slice(&part);
                }
                send(tx, all.freeze()).await
            }
            Source::Blob(mut stream) => {
                send(tx, header).await?;
                let mut sent = 0u64;
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk.map_err(Stop::Failed)?;
                    sent += chunk.len() as u64;
                    zip.data(&chunk);
                    send(tx, chunk).await?;
                }
                if sent != row.size {
                    return Err(failed(format!(
                        "blob of {} gave {sent} bytes, not {}",
                        row.id, row.size
                    )));
                }
                send(tx, zip.end()).await
            }
        }
    }

    /// The bytes of `row`, or None when the file (or its blob) is gone.
    async fn open(&self, row: &FileRow) -> Result<Option<Source>, Stop> {
        let now = self.app.clock.now_ms();
        if row.inline {
            let found = self
                .app
                .meta
                .file_with_data(&self.account_id, &row.id, now)
                .await
                .map_err(failed)?;
            return Ok(match found {
                Some((_, Some(data))) => Some(Source::Inline(Bytes::from(data))),
                _ => None,
            });
        }
        if row.size == 0 {
            return Ok(Some(Source::Inline(Bytes::new())));
        }
        match self.app.store.get(&row.blob_key, 0, row.size).await {
            Ok(stream) => Ok(Some(Source::Blob(stream))),
            Err(StorageError::NotFound(_)) => Ok(None),
            Err(e) => Err(failed(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Up to `limit + 1` rows of a listing of `n` files (the i-th made at
    /// `n - i`, newest first) after `after`, as the store pages it.
    fn page_of(n: usize, after: Option<&PageAfter>, limit: u32) -> Vec<FileRow> {
        let start = after.map_or(0, |a| n - usize::try_from(a.created_at).unwrap() + 1);
        (start..n.min(start + limit as usize + 1))
            .map(|i| FileRow {
                id: format!("f_{i:08}"),
                created_at: i64::try_from(n - i).unwrap(),
                ..FileRow::default()
            })
            .collect()
    }

    /// Counts a listing of `n` files to `max`, the first page of 3 rows and
    /// the next ones of 4: the count (None: over) and the pages read after
    /// the first.
    fn count(n: usize, max: usize) -> (Option<usize>, usize) {
        let first = page_of(n, None, 3);
        let reads = Cell::new(0);
        let got = count_within(&first, 3, 4, max, |after, limit| {
            reads.set(reads.get() + 1);
            let rows = page_of(n, Some(&after), limit);
            async move { Ok::<_, std::convert::Infallible>(rows) }
        });
        let got = futures_util::FutureExt::now_or_never(got).unwrap().unwrap();
        (got, reads.get())
    }

    #[test]
    fn a_folder_is_counted_to_the_cap() {
        // One page: no further read.
        assert_eq!(count(1, 10), (Some(1), 0));
        assert_eq!(count(3, 10), (Some(3), 0));
        // 3 + 4 + 3.
        assert_eq!(count(10, 10), (Some(10), 2));
        assert_eq!(count(11, 10), (None, 2));
        // Over the cap in the first page.
        assert_eq!(count(3, 2), (None, 0));
        assert_eq!(count(4, 3), (None, 1));
    }

    #[test]
    fn counting_stops_at_the_first_row_past_the_cap() {
        // A million files, a cap of 10: 3 + 4 + 4 rows read, then stop.
        assert_eq!(count(1_000_000, 10), (None, 2));
        assert_eq!(count(1_000_000, 11), (None, 3));
        assert_eq!(count(1_000_000, 14), (None, 3));
        assert_eq!(count(1_000_000, 15), (None, 4));
    }

    #[test]
    fn the_refusal_names_the_way_out() {
        let msg = too_many("big/logs", MAX_ENTRIES);
        assert!(msg.contains("100000 files"), "{msg}");
        assert!(msg.contains("subfolder"), "{msg}");
        assert!(msg.contains("filestore download --folder"), "{msg}");
    }
}
